#!/usr/bin/python3
"""conformance.py: ONNX's own backend tests through aicm-import and aicm-run.

    tests/conformance.py [BUILD_DIR] [-k PATTERN] [-j N] [--list-unsupported]
                         [--data DIR] [--timeout S] [--rtol R] [--atol A]
                         [--self-test]

Every test folder of Debian's libonnx-testdata under node/,
pytorch-converted/, pytorch-operator/ and simple/ (not real/: those
download their models) runs as ONNX's backend runner runs it
(onnx/backend/test/runner), with aicm as the backend:

  1. its test_data_set_*/{input,output}_N.pb become .npy files
     (scripts/onnx-pb2npy.py, imported here so that the ~3000 files
     convert in one process, in about a second);
  2. aicm-import model.onnx -o WORK/t.aicm, with --bind NAME=input_K.npy
     for every graph input that feeds an attribute-like operand
     (Reshape's shape, Slice's starts, ...: SHAPE_LIKE below, after
     ONNX 1.12's operator specs), since aicm's shapes are static;
  3. aicm-run WORK/t.aicm --pass=shape-infer,fuse,autotune,lower-tiled
     (the full pipeline) with --input NAME=input_K.npy for every other
     graph input, and --expected-output NAME=output_K.npy --rtol=1e-3
     --atol=1e-5 for every graph output (ONNX's rule and its default
     tolerances for these tests, DESIGN §16; integers and bools compare
     exactly).

The names: the importer keeps ONNX's input order for the 'input' nodes it
writes (a bound input becomes a const), so the `%NAME = input()` lines of
the .aicm pair, in order, with the unbound ONNX inputs; the outputs are
its outputs in ONNX's order (its return list, or the default one).  Each output's name is also computed
here (safe_name, the importer's rule) and a disagreement is a failure, so
that a renaming bug in either shows.

A test is UNSUPPORTED only when aicm-import exits 1 with a message
starting "unsupported:"; any other import failure, a crash, a timeout
(--timeout, 60 s a command) or a mismatch is a FAIL.  A test with
several data sets runs each (with the binds of that set: the import is
per set when anything is bound).  A graph input whose shape the model
leaves open ('N' for the batch) gets its data set's shape with --shape,
as ONNX's runner hands a backend the inputs themselves.  One line per test, in order, then
`conformance: N passed, N failed, N unsupported`; exit 1 if any failed.
--list-unsupported adds how many tests each ONNX op (or other feature)
named in the unsupported messages stops, most first.

The work files live in BUILD_DIR/conformance/, removed at the start of
each run.  Tests run -j at a time (default 2), each aicm-run on one
thread.
"""
import argparse
import collections
import concurrent.futures
import fnmatch
import importlib.util
import os
import re
import shutil
import subprocess
import sys

DATA = "/usr/share/libonnx-testdata/data"
SUITES = ("node", "pytorch-converted", "pytorch-operator", "simple")
PIPELINE = "shape-infer,fuse,autotune,lower-tiled"
RTOL, ATOL = "1e-3", "1e-5"
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The inputs, by position, that ONNX's operator specs (onnx.defs, 1.12,
# opsets 1 to 17, and 18's axes inputs) make attribute-like: their values
# decide shapes or the op's own parameters, which aicm fixes when it
# compiles.  A position an op does not have at the model's opset never
# occurs, so one set serves every opset (Resize's 1 is scales at opset 10
# and roi from 11: both are bound).
SHAPE_LIKE = {
    "Reshape": {1},                       # shape
    "Slice": {1, 2, 3, 4},                # starts, ends, axes, steps
    "Pad": {1, 2, 3},                     # pads, constant_value, axes (18)
    "Squeeze": {1}, "Unsqueeze": {1},     # axes (13)
    "Clip": {1, 2},                       # min, max (11)
    "Expand": {1},                        # shape
    "Tile": {1, 2},                       # repeats (tiles, axis before 6)
    "ConstantOfShape": {0},               # input: the shape
    "Range": {0, 1, 2},                   # start, limit, delta
    "Split": {1}, "SplitToSequence": {1},  # split
    "TopK": {1},                          # K (10)
    "OneHot": {1},                        # depth
    "Resize": {1, 2, 3},                  # roi, scales, sizes
    "Upsample": {1},                      # scales (9)
    "CumSum": {1},                        # axis
    "Trilu": {1},                         # k
    "Dropout": {1, 2},                    # ratio, training_mode (12)
    "NonMaxSuppression": {2, 3, 4},       # max_output_boxes_per_class, thresholds
    "MaxUnpool": {2},                     # output_shape
    "DFT": {1},                           # dft_length
    "STFT": {1, 3},                       # frame_step, frame_length
    "MelWeightMatrix": {0, 1, 2, 3, 4},
    "HannWindow": {0}, "HammingWindow": {0}, "BlackmanWindow": {0},  # size
    "CenterCropPad": {1}, "Col2Im": {1, 2},  # (18)
}
for _r in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
           "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"):
    SHAPE_LIKE[_r] = {1}                  # axes (ReduceSum 13, the others 18)

# Ops whose result depends on their input's shape, not its values: a
# walk back from an attribute-like operand stops at them.
SHAPE_ONLY = {"Shape", "Size"}


def safe_name(onnx_name):
    """The name aicm-import gives an ONNX value (imp_safe_name in
    src/import/import.c): leading '/'s dropped, a trailing '_output_0'
    made '_out', every byte outside [A-Za-z0-9_] made '_', a '_' in front
    of a name that starts with a digit and is not all digits, 'v' for an
    empty one.  A name taken already gets '.K' (ir_fresh_name), which the
    caller allows."""
    s = onnx_name.lstrip("/")
    if s.endswith("_output_0"):
        s = s[: -len("_output_0")] + "_out"
    # by bytes, as the C code: a UTF-8 'é' is two bytes, two '_'
    s = re.sub(rb"[^A-Za-z0-9_]", b"_", s.encode("utf-8")).decode("ascii")
    if s and s[0] in "0123456789" and not all(c in "0123456789" for c in s):
        s = "_" + s
    return s or "v"


def graph_feeds(graph):
    """The graph inputs that are not initializers, in order."""
    inits = {t.name for t in graph.initializer}
    return [v.name for v in graph.input if v.name not in inits]


def bound_inputs(graph):
    """The graph inputs (not initializers) whose values reach an
    attribute-like operand of a node of the main graph: directly, or
    through nodes that compute on values (Cast, Concat, Gather...), not
    through Shape or Size.  Returns a set of ONNX names."""
    feeds = set(graph_feeds(graph))
    producer = {}
    for n in graph.node:
        for o in n.output:
            if o:
                producer[o] = n
    todo = []
    for n in graph.node:
        for k in SHAPE_LIKE.get(n.op_type, ()):
            if k < len(n.input) and n.input[k]:
                todo.append(n.input[k])
    seen, bound = set(), set()
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in feeds:
            bound.add(v)
        p = producer.get(v)
        if p is not None and p.op_type not in SHAPE_ONLY:
            todo.extend(i for i in p.input if i)
    return bound


def dynamic_inputs(graph):
    """The graph inputs (not initializers) whose shape the model leaves
    open: a symbolic dimension ('N'), one without a value, or no shape at
    all.  Their data set's shape is given to the importer with --shape, as
    ONNX's runner hands a backend the inputs themselves."""
    feeds, dyn = set(graph_feeds(graph)), set()
    for v in graph.input:
        if v.name not in feeds or v.type.WhichOneof("value") != "tensor_type":
            continue
        t = v.type.tensor_type
        if not t.HasField("shape") or any(not d.HasField("dim_value") for d in t.shape.dim):
            dyn.add(v.name)
    return dyn


def npy_shape(path):
    """The shape a .npy file holds, from its header."""
    import numpy as np
    return np.load(path, mmap_mode="r", allow_pickle=False).shape


def load_pb2npy():
    """scripts/onnx-pb2npy.py as a module (its name has dashes)."""
    path = os.path.join(TOP, "scripts", "onnx-pb2npy.py")
    spec = importlib.util.spec_from_file_location("onnx_pb2npy", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def first_line(text):
    """The first line of a tool's stderr that says what went wrong: an
    'error:' line if there is one, else the first non-empty line."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if "error:" in l or "unsupported:" in l:
            return l
    return lines[0] if lines else "(no message)"


UNSUPPORTED = re.compile(r"^(?:[^ :]+: )*unsupported: ")


def run(cmd, timeout):
    """(returncode, stdout, stderr) of cmd; returncode None on a timeout
    (the child is killed)."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def describe_failure(tool, rc, err, timeout):
    """The first line of a FAIL's reason for a command that did not exit
    0 (or, for aicm-import, 1 unsupported)."""
    if rc is None:
        return "%s timed out after %g s" % (tool, timeout)
    line = first_line(err)
    if line.startswith(tool + ": "):
        line = line[len(tool) + 2:]             # said once is enough
    if rc < 0:
        return "%s killed by signal %d: %s" % (tool, -rc, line)
    if rc >= 3:
        return "%s exit %d (internal error or crash): %s" % (tool, rc, line)
    return "%s exit %d: %s" % (tool, rc, line)


STMT = re.compile(r"^\s*%([A-Za-z0-9_.]+)\s*=\s*([a-z_0-9]+)\((.*)$", re.M)
RETURN_LINE = re.compile(r"^\s*return\s+(.*?)\s*$", re.M)
REF = re.compile(r"%([A-Za-z0-9_.]+)")


def aicm_names(path):
    """The input names (in order) and the outputs of the .aicm file that
    aicm-import wrote (one statement a line, as the printer writes): the
    return list, or without one, as docs/ir.md says, every computed value
    that nothing consumes, in definition order."""
    with open(path) as f:
        text = f.read()
    stmts = STMT.findall(text)
    ins = [n for n, op, _ in stmts if op == "input"]
    m = RETURN_LINE.findall(text)
    if m:
        return ins, REF.findall(m[-1])
    used = set()
    for _, _, rest in stmts:
        used.update(REF.findall(rest))
    return ins, [n for n, op, _ in stmts if op not in ("input", "const") and n not in used]


class Test:
    """One test folder: its ONNX names, worked out in the main process
    (onnx is imported once), and its converted data sets."""

    def __init__(self, suite, name, path, work):
        self.id = "%s/%s" % (suite, name)
        self.path, self.work = path, work
        self.sets = []
        self.feeds, self.outputs, self.bound = [], [], set()
        self.dynamic = set()         # feeds with a dimension the model leaves open
        self.setup_error = None


def prepare(test, onnx, pb2npy):
    try:
        model = onnx.load(os.path.join(test.path, "model.onnx"), load_external_data=False)
    except Exception as e:  # a model python-onnx cannot read: the importer is still tried
        test.setup_error = "python-onnx cannot read model.onnx: %s" % str(e).splitlines()[0]
        return
    g = model.graph
    test.feeds = graph_feeds(g)
    test.outputs = [v.name for v in g.output]
    test.bound = bound_inputs(g)
    test.dynamic = dynamic_inputs(g)
    test.sets = pb2npy.convert_test(test.path, os.path.join(test.work, "data"))


def run_test(test, build, timeout, rtol=RTOL, atol=ATOL):
    """(verdict, message): verdict 'PASS', 'FAIL' or 'UNSUPPORTED'; the
    message's paths are short (model.onnx, WORK/...)."""
    try:
        verdict, msg = run_sets(test, build, timeout, rtol, atol)
    except Exception as e:  # one test's surprise is its FAIL, not the suite's end
        verdict, msg = "FAIL", "conformance.py: %s: %s" % (type(e).__name__, e)
    return verdict, msg.replace(test.path + "/", "").replace(test.work + "/", "WORK/")


def run_sets(test, build, timeout, rtol, atol):
    imp = os.path.join(build, "aicm-import")
    runner = os.path.join(build, "aicm-run")
    model = os.path.join(test.path, "model.onnx")
    aicm = os.path.join(test.work, "t.aicm")
    imported_plain = False
    if not test.sets and not test.setup_error:
        return "FAIL", "no test_data_set_* folder"
    for ds in test.sets or [None]:
        tag = "%s: " % ds["name"] if ds and len(test.sets) > 1 else ""
        cmd = [imp, model, "-o", aicm]
        binds, shapes = {}, []
        if ds:
            for k, name in enumerate(test.feeds):
                if name in test.bound and k < len(ds["inputs"]):
                    path, why = ds["inputs"][k]
                    if why:
                        return "FAIL", "%sinput_%d.pb %s" % (tag, k, why)
                    binds[name] = path
                    cmd += ["--bind", "%s=%s" % (name, path)]
                elif name in test.dynamic and k < len(ds["inputs"]) and ds["inputs"][k][0]:
                    shape = npy_shape(ds["inputs"][k][0])
                    if shape:
                        shapes.append("%s=%s" % (name, "x".join(map(str, shape))))
                        cmd += ["--shape", shapes[-1]]
        if not (imported_plain and not binds and not shapes):
            rc, _, err = run(cmd, timeout)
            if rc == 1 and UNSUPPORTED.match(first_line(err)):
                line = first_line(err)
                return "UNSUPPORTED", line[line.index("unsupported: "):]
            if rc != 0:
                return "FAIL", tag + describe_failure("aicm-import", rc, err, timeout)
            imported_plain = not binds and not shapes
        if test.setup_error:
            return "FAIL", test.setup_error
        ins, outs = aicm_names(aicm)
        free = [n for n in test.feeds if n not in binds]
        if len(ins) != len(free):
            return "FAIL", ("%sthe .aicm has %d inputs, the model %d unbound ones (%s)"
                            % (tag, len(ins), len(free), ", ".join(free) or "none"))
        if len(outs) != len(test.outputs):
            return "FAIL", ("%sthe .aicm has %d outputs (%s), the model %d"
                            % (tag, len(outs), ", ".join(outs), len(test.outputs)))
        for o, a in zip(test.outputs, outs):
            s = safe_name(o)
            if a != s and not re.fullmatch(re.escape(s) + r"\.\d+", a):
                return "FAIL", ("%soutput '%s' is '%%%s' in the .aicm; its safe name is '%s'"
                                % (tag, o, a, s))
        cmd = [runner, aicm, "--pass=" + PIPELINE, "--threads=1",
               "--rtol=" + rtol, "--atol=" + atol]
        k_free = 0
        for k, name in enumerate(test.feeds):
            if name in binds:
                continue
            if k >= len(ds["inputs"]):
                return "FAIL", "%sno input_%d.pb for input '%s'" % (tag, k, name)
            path, why = ds["inputs"][k]
            if why:
                return "FAIL", "%sinput_%d.pb %s" % (tag, k, why)
            cmd += ["--input", "%s=%s" % (ins[k_free], path)]
            k_free += 1
        if len(ds["outputs"]) != len(test.outputs):
            return "FAIL", ("%s%d output_N.pb files for %d outputs"
                            % (tag, len(ds["outputs"]), len(test.outputs)))
        for k, name in enumerate(outs):
            path, why = ds["outputs"][k]
            if why:
                return "FAIL", "%soutput_%d.pb %s" % (tag, k, why)
            cmd += ["--expected-output", "%s=%s" % (name, path)]
        rc, _, err = run(cmd, timeout)
        if rc != 0:
            return "FAIL", tag + describe_failure("aicm-run", rc, err, timeout)
    return "PASS", ""


def feature_of(msg):
    """What an unsupported message names: the ONNX op of "unsupported:
    node #K (Op) computing 'N': ...", else the message with quoted names and numbers
    blanked, so that like messages group."""
    m = re.search(r"unsupported: node [^(]*\(([A-Za-z0-9_.]+)\)", msg)
    if m:
        return m.group(1)
    rest = msg.split("unsupported:", 1)[-1].strip()
    rest = re.sub(r"'[^']*'", "'...'", rest)
    return re.sub(r"\b\d+\b", "N", rest)


def self_test(data, work):
    """The name rule and the bind detection, checked on their own and on
    real models of the test data: cheap, and run first by 'make
    conformance', so that a wrong rule shows as itself and not as a
    hundred mismatched tests."""
    import onnx
    for onnx_name, want in (("/l1/Gemm_output_0", "l1_Gemm_out"), ("x", "x"), ("0", "0"),
                            ("12", "12"), ("1a", "_1a"), ("", "v"), ("/", "v"),
                            ("a.b:c-d", "a_b_c_d"), ("y_output_0", "y_out"),
                            ("output_0", "output_0"), ("/0/Add_output_0", "_0_Add_out"),
                            ("/x/y", "x_y"), ("//x", "x"), ("0_output_0", "_0_out"), ("\u00e9t\u00e9", "__t__")):
        got = safe_name(onnx_name)
        assert got == want, "safe_name(%r) is %r, not %r" % (onnx_name, got, want)

    def binds(test):
        return bound_inputs(onnx.load(os.path.join(data, test, "model.onnx")).graph)

    for test, want in (("node/test_add", set()),
                       ("node/test_gather_0", set()),                 # indices are data
                       ("node/test_reshape_reordered_all_dims", {"shape"}),
                       ("node/test_slice", {"starts", "ends", "axes", "steps"}),
                       ("node/test_clip", {"min", "max"}),
                       ("node/test_constant_pad", {"pads", "value"}),
                       ("node/test_reduce_sum_keepdims_example", {"axes"}),
                       ("node/test_unsqueeze_axis_0", {"axes"}),
                       ("node/test_expand_dim_changed", {"new_shape"}),
                       ("node/test_tile", {"y"}),
                       ("node/test_constantofshape_float_ones", {"x"}),
                       ("node/test_range_float_type_positive_delta",
                        {"start", "limit", "delta"}),
                       ("node/test_top_k", {"k"}),
                       ("node/test_onehot_with_axis", {"depth"}),  # not indices, values
                       ("node/test_resize_upsample_scales_nearest", {"scales"}),
                       ("node/test_training_dropout", {"r", "t"}),
                       ("node/test_split_variable_parts_1d", {"split"}),
                       # through Cast, Sub, Range... to the window's size
                       ("node/test_hannwindow_expanded", {"x"}),
                       # Shape(X) feeds Slice and Reshape: X's values are not needed
                       ("node/test_layer_normalization_2d_axis0_expanded", set())):
        if not os.path.isfile(os.path.join(data, test, "model.onnx")):
            continue
        got = binds(test)
        assert got == want, "%s binds %s, not %s" % (test, sorted(got), sorted(want))
    # the converter: element type and shape exactly (a scalar stays ()),
    # a sequence reported, not converted
    import numpy as np
    pb2npy = load_pb2npy()
    shutil.rmtree(work, ignore_errors=True)
    for test, want in (("node/test_clip", [((3, 4, 5), "float32"), ((), "float32"),
                                           ((), "float32")]),
                       ("node/test_gather_0", [((5, 4, 3, 2), "float32"), ((3,), "int64")]),
                       ("node/test_equal_bcast", [((3, 4, 5), "int32"), ((5,), "int32")])):
        if not os.path.isdir(os.path.join(data, test)):
            continue
        sets = pb2npy.convert_test(os.path.join(data, test), os.path.join(work, test))
        got = [(np.load(p).shape, str(np.load(p).dtype)) for p, _ in sets[0]["inputs"]]
        assert got == want, "%s converts to %s, not %s" % (test, got, want)
        out = np.load(sets[0]["outputs"][0][0])
        assert out.dtype == np.bool_ or test != "node/test_equal_bcast", out.dtype
    if os.path.isdir(os.path.join(data, "node/test_sequence_insert_at_back")):
        sets = pb2npy.convert_test(os.path.join(data, "node/test_sequence_insert_at_back"),
                                   os.path.join(work, "seq"))
        why = [w for _, w in sets[0]["inputs"]]
        assert "holds a sequence, not a tensor" in why, why
    shutil.rmtree(work, ignore_errors=True)
    print("conformance: self-test passed")


def collect(data, pattern):
    tests = []
    for suite in SUITES:
        d = os.path.join(data, suite)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            tid = "%s/%s" % (suite, name)
            if not os.path.isfile(os.path.join(d, name, "model.onnx")):
                continue
            if pattern and not (pattern in tid or fnmatch.fnmatchcase(tid, pattern)):
                continue
            tests.append((suite, name, os.path.join(d, name)))
    return tests


def main():
    ap = argparse.ArgumentParser(description="ONNX backend tests through aicm")
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("-k", dest="pattern", help="only tests whose SUITE/NAME holds PATTERN "
                    "(or matches it as a glob)")
    ap.add_argument("-j", dest="jobs", type=int, default=2, help="tests at a time (2)")
    ap.add_argument("--list-unsupported", action="store_true",
                    help="end with the unsupported ops and features, most first")
    ap.add_argument("--data", default=DATA, help="libonnx-testdata's data folder")
    ap.add_argument("--timeout", type=float, default=60, help="seconds a command (60)")
    ap.add_argument("--rtol", default=RTOL, help="aicm-run's --rtol for floats (%s)" % RTOL)
    ap.add_argument("--atol", default=ATOL, help="aicm-run's --atol for floats (%s)" % ATOL)
    ap.add_argument("--self-test", action="store_true",
                    help="check the name rule and the bind detection, then stop")
    a = ap.parse_args()
    if a.jobs < 1:
        ap.error("-j wants a positive count, not %d" % a.jobs)
    try:
        import onnx
    except ImportError:
        sys.stderr.write("conformance: python3-onnx is missing (/usr/bin/python3 cannot "
                         "import onnx); run: sudo apt-get install python3-onnx\n")
        return 2
    if a.self_test:
        self_test(a.data, os.path.join(os.path.abspath(a.build), "conformance", "self-test"))
        return 0
    build = os.path.abspath(a.build)
    for t in ("aicm-import", "aicm-run"):
        if not os.access(os.path.join(build, t), os.X_OK):
            sys.stderr.write("conformance: no '%s' in '%s'; run make first\n" % (t, build))
            return 2
    if not os.path.isdir(a.data):
        sys.stderr.write("conformance: no test data in '%s'; run: sudo apt-get install "
                         "libonnx-testdata\n" % a.data)
        return 2
    root = os.path.join(build, "conformance")
    shutil.rmtree(root, ignore_errors=True)
    found = collect(a.data, a.pattern)
    if not found:
        sys.stderr.write("conformance: no test matches '%s'\n" % a.pattern)
        return 2
    pb2npy = load_pb2npy()
    tests = []
    for suite, name, path in found:
        t = Test(suite, name, path, os.path.join(root, suite, name))
        os.makedirs(t.work, exist_ok=True)
        prepare(t, onnx, pb2npy)
        tests.append(t)
    counts = collections.Counter()
    unsup = collections.Counter()
    example = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for t, (verdict, msg) in zip(tests, ex.map(lambda t: run_test(t, build, a.timeout, a.rtol, a.atol),
                                                   tests)):
            counts[verdict] += 1
            if verdict == "PASS":
                print("PASS %s" % t.id, flush=True)
            else:
                print("%s %s: %s" % (verdict, t.id, msg), flush=True)
            if verdict == "UNSUPPORTED":
                f = feature_of(msg)
                unsup[f] += 1
                example.setdefault(f, t.id)
    if a.list_unsupported and unsup:
        print("\nunsupported, by op or feature (tests stopped; an example):")
        for f, n in sorted(unsup.items(), key=lambda kv: (-kv[1], kv[0])):
            print("%5d  %s  (%s)" % (n, f, example[f]))
    print("conformance: %d passed, %d failed, %d unsupported"
          % (counts["PASS"], counts["FAIL"], counts["UNSUPPORTED"]))
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
