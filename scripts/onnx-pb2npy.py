#!/usr/bin/python3
"""onnx-pb2npy.py: ONNX backend tests' TensorProto .pb files as .npy files.

    scripts/onnx-pb2npy.py -o OUTDIR TESTDIR...

ONNX's backend tests (Debian's libonnx-testdata) keep each test's inputs
and expected outputs as serialized TensorProto messages,
TESTDIR/test_data_set_K/{input,output}_N.pb; aicm-run reads .npy.  This
writes OUTDIR/NAME/test_data_set_K/{input,output}_N.npy for every test
folder given (NAME its last component), with Debian's python3-onnx
(onnx.numpy_helper.to_array keeps the element type and shape exactly).

All folders go through one process, because starting Python and
importing onnx (about 0.3 s) costs more than converting a whole test:
tests/conformance.py imports this file and calls convert_test for its
~1000 tests, which takes seconds.

A .pb is parsed as the kind of value the model's graph declares for it
(model.onnx beside test_data_set_K, inputs and outputs by position): a
tensor is converted; a sequence, map or optional is not (aicm has none),
and neither is a tensor of strings (numpy would need a pickled object
array).  Those are reported, per file, as the reason it was skipped; the
importer refuses such models anyway.  Exit 0 when every file converted,
1 when some were skipped, 2 on a file that cannot be read or written.
"""
import glob
import os
import re
import sys

import numpy as np
import onnx
from onnx import numpy_helper

_PB = re.compile(r"^(input|output)_(\d+)\.pb$")


def _value_kinds(model_path):
    """{('input'|'output', N): kind} from the model's graph: kind is
    'tensor', 'sequence', 'map', 'optional' or 'sparse'.  Inputs count
    without the initializers (the test data feeds only those)."""
    kinds = {}
    if not os.path.exists(model_path):
        return kinds
    g = onnx.load(model_path, load_external_data=False).graph
    inits = {t.name for t in g.initializer}
    feeds = [v for v in g.input if v.name not in inits]
    for role, vals in (("input", feeds), ("output", list(g.output))):
        for k, v in enumerate(vals):
            which = v.type.WhichOneof("value")
            kinds[(role, k)] = {"tensor_type": "tensor", "sequence_type": "sequence",
                                "map_type": "map", "optional_type": "optional",
                                "sparse_tensor_type": "sparse"}.get(which, "tensor")
    return kinds


def convert_file(pb, npy, kind="tensor"):
    """Converts one .pb to npy; returns None, or why it was not converted
    (a value that is not a tensor aicm can hold in a .npy).  OSError
    propagates (the caller decides: exit 2)."""
    if kind != "tensor":
        return "holds %s %s, not a tensor" % ("an" if kind[0] in "aeiou" else "a", kind)
    with open(pb, "rb") as f:
        data = f.read()
    t = onnx.TensorProto()
    try:
        t.ParseFromString(data)
    except Exception as e:  # protobuf's DecodeError and its kin
        return "is not a TensorProto (%s)" % e
    if t.data_type == onnx.TensorProto.STRING:
        return "holds strings"
    try:
        a = numpy_helper.to_array(t)
    except Exception as e:
        return "cannot be converted (%s)" % e
    # np.save writes any layout in C order; np.ascontiguousarray would
    # turn a scalar (shape ()) into shape (1,)
    np.save(npy, a, allow_pickle=False)
    return None


def convert_test(testdir, outdir):
    """Converts every test_data_set_*/{input,output}_N.pb of testdir into
    outdir/test_data_set_K/.  Returns a list of data sets in order, each
    a dict: 'name' (test_data_set_K), 'inputs' and 'outputs' (lists in N
    order of (npy path or None, reason or None)).  N has no gaps: a
    missing input_N.pb ends the list, as ONNX's runner counts them."""
    kinds = _value_kinds(os.path.join(testdir, "model.onnx"))
    sets = []
    dirs = glob.glob(os.path.join(testdir, "test_data_set_*"))
    dirs.sort(key=lambda d: int(d.rsplit("_", 1)[1]) if d.rsplit("_", 1)[1].isdigit() else -1)
    for d in dirs:
        name = os.path.basename(d)
        out = os.path.join(outdir, name)
        os.makedirs(out, exist_ok=True)
        found = {"input": {}, "output": {}}
        for f in os.listdir(d):
            m = _PB.match(f)
            if m:
                found[m.group(1)][int(m.group(2))] = f
        entry = {"name": name, "inputs": [], "outputs": []}
        for role in ("input", "output"):
            k = 0
            while k in found[role]:
                pb = os.path.join(d, found[role][k])
                npy = os.path.join(out, "%s_%d.npy" % (role, k))
                why = convert_file(pb, npy, kinds.get((role, k), "tensor"))
                entry[role + "s"].append((None if why else npy, why))
                k += 1
        sets.append(entry)
    return sets


def main(argv):
    args = argv[1:]
    if len(args) < 3 or args[0] != "-o" or any(a.startswith("-") for a in args[2:]):
        sys.stderr.write("usage: onnx-pb2npy.py -o OUTDIR TESTDIR...\n")
        return 2
    outdir, tests = args[1], args[2:]
    status = 0
    for t in tests:
        t = t.rstrip("/")
        if not os.path.isdir(t):
            sys.stderr.write("onnx-pb2npy: '%s' is not a folder\n" % t)
            return 2
        try:
            sets = convert_test(t, os.path.join(outdir, os.path.basename(t)))
        except OSError as e:
            sys.stderr.write("onnx-pb2npy: %s\n" % e)
            return 2
        for s in sets:
            for role in ("inputs", "outputs"):
                for k, (path, why) in enumerate(s[role]):
                    if why:
                        sys.stderr.write("onnx-pb2npy: %s/%s/%s_%d.pb %s; skipped\n"
                                         % (t, s["name"], role[:-1], k, why))
                        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
