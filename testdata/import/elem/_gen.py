#!/usr/bin/python3
"""_gen.py: the tiny ONNX models of testdata/import/elem/, and a check of
their folded values against numpy.

    /usr/bin/python3 testdata/import/elem/_gen.py          # write the .onnx
    /usr/bin/python3 testdata/import/elem/_gen.py --check [BUILD_DIR]

The models exercise what libonnx-testdata's node tests do not: elementwise
nodes whose inputs are all known at import time (initializers, Constants,
Shape results), which aicm-import folds into constants (ops_elem_fold.c),
and the opset-dependent forms (legacy broadcast before opset 7, Clip's
attributes before opset 11, Cast's type names before opset 6).  --check
imports the folding model, runs it with aicm-run --output-dir, and
compares every output with numpy's result for the same ONNX semantics,
exactly (integer division truncates toward zero as ONNX's Div on
integers, Mod with fmod=0 is numpy.mod), so the goldens' constants are
known right, not just unchanged; then it does the same with the known
values made graph inputs, the same formulas emitted as aicm ops and run
through the whole pipeline, so that the folds and the runtime agree.  Written with Debian's python3-onnx
(onnx.helper); each model is a few hundred bytes.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))


def init(name, a):
    return nh.from_array(np.asarray(a), name)


def model(name, nodes, inits, outs, opset, ins=()):
    g = h.make_graph(nodes, name, list(ins), outs, initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], producer_name="aicm-gen")
    m.ir_version = 7 if opset >= 7 else 3
    onnx.checker.check_model(m)
    return m


def out(name, et, shape):
    return h.make_tensor_value_info(name, et, shape)


# ---- fold_ops: every folding op over initializers, results as outputs ----
def trunc_div(a, b):
    """ONNX's Div on integers: the quotient truncated toward zero."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


def fmod_int(a, b):
    return (a - trunc_div(a, b) * b).astype(a.dtype)


K = {
    "A": np.array([[-7, 7, -8], [9, -9, 5]], dtype=np.int64),
    "B": np.array([2, -2, 3], dtype=np.int64),
    "F": np.array([[2.7, -2.7, 0.5], [-0.5, 1e9, -3.25]], dtype=np.float32),
    "G": np.array([1.5, -1.0, 0.25], dtype=np.float32),
    "C": np.array([True, False, True]),
    "I32": np.array([[2147483647, -2147483648, 5]], dtype=np.int32),
    "J32": np.array([1, 1, -2], dtype=np.int32),
    "Big": np.array([2**40 + 3, -1], dtype=np.int64),
    "Two": np.array(2, dtype=np.int64),
    "Lo": np.array(-3, dtype=np.int64),
    "Hi": np.array(4, dtype=np.int64),
}
K["Bm"] = -K["B"]
K["Cr"] = K["C"][::-1].copy()

# (output, op, inputs, attributes, numpy's result over K)
FOLD_OPS = [
    ("add", "Add", "A B", {}, lambda k: k["A"] + k["B"]),
    ("sub", "Sub", "A B", {}, lambda k: k["A"] - k["B"]),
    ("mul", "Mul", "A B", {}, lambda k: k["A"] * k["B"]),
    ("div", "Div", "A B", {}, lambda k: trunc_div(k["A"], k["B"])),
    ("mod", "Mod", "A B", {}, lambda k: np.mod(k["A"], k["B"])),
    ("fmod", "Mod", "A B", {"fmod": 1}, lambda k: fmod_int(k["A"], k["B"])),
    ("fdiv", "Div", "F G", {}, lambda k: k["F"] / k["G"]),
    ("ffmod", "Mod", "F G", {"fmod": 1}, lambda k: np.fmod(k["F"], k["G"])),
    ("i32add", "Add", "I32 J32", {},
     lambda k: (k["I32"].astype(np.int64) + k["J32"]).astype(np.int32)),
    ("i32mul", "Mul", "I32 J32", {},
     lambda k: (k["I32"].astype(np.int64) * k["J32"]).astype(np.int32)),
    ("eq", "Equal", "A B", {}, lambda k: k["A"] == k["B"]),
    ("lt", "Less", "F G", {}, lambda k: k["F"] < k["G"]),
    ("gt", "Greater", "A B", {}, lambda k: k["A"] > k["B"]),
    ("le", "LessOrEqual", "A B", {}, lambda k: k["A"] <= k["B"]),
    ("not", "Not", "C", {}, lambda k: ~k["C"]),
    ("and", "And", "C Cr", {}, lambda k: k["C"] & k["Cr"]),
    ("or", "Or", "C Cr", {}, lambda k: k["C"] | k["Cr"]),
    ("where", "Where", "C A B", {}, lambda k: np.where(k["C"], k["A"], k["B"])),
    ("neg", "Neg", "A", {}, lambda k: -k["A"]),
    ("abs", "Abs", "F", {}, lambda k: np.abs(k["F"])),
    ("max", "Max", "A B Bm", {}, lambda k: np.maximum(np.maximum(k["A"], k["B"]), k["Bm"])),
    ("min", "Min", "F G", {}, lambda k: np.minimum(k["F"], k["G"])),
    ("sum", "Sum", "F G G", {}, lambda k: k["F"] + k["G"] + k["G"]),
    ("mean", "Mean", "F G", {}, lambda k: (k["F"] + k["G"]) / np.float32(2)),
    ("cast_f2i", "Cast", "F", {"to": TP.INT32}, lambda k: np.trunc(k["F"]).astype(np.int32)),
    ("cast_i2f", "Cast", "A", {"to": TP.FLOAT}, lambda k: k["A"].astype(np.float32)),
    ("cast_f2b", "Cast", "F", {"to": TP.BOOL}, lambda k: k["F"] != 0),
    ("cast_i64_i32", "Cast", "Big", {"to": TP.INT32}, lambda k: k["Big"].astype(np.int32)),
    ("pow", "Pow", "F Two", {}, lambda k: np.power(k["F"], np.float32(2))),
    ("clip", "Clip", "A Lo Hi", {}, lambda k: np.clip(k["A"], -3, 4)),
    ("sign", "Sign", "F", {}, lambda k: np.sign(k["F"])),
]
NP2ONNX = {np.dtype("int64"): TP.INT64, np.dtype("int32"): TP.INT32,
           np.dtype("float32"): TP.FLOAT, np.dtype("float64"): TP.DOUBLE,
           np.dtype("bool"): TP.BOOL}


def fold_ops():
    nodes, outs, want = [], [], {}
    for name, op, ins, attrs, f in FOLD_OPS:
        nodes.append(h.make_node(op, ins.split(), [name], name=name + "_node", **attrs))
        r = np.asarray(f(K))
        outs.append(out(name, NP2ONNX[r.dtype], list(r.shape)))
        want[name] = r
    m = model("fold_ops", nodes, [init(k, v) for k, v in K.items()], outs, 15)
    return m, want


# ---- fold_shape: a PyTorch-style shape computation, folded away ----------
def fold_shape():
    x = h.make_tensor_value_info("x", TP.FLOAT, [2, 6])
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Div", ["s", "d"], ["q"]),           # (2, 3)
        h.make_node("Mul", ["q", "m"], ["p"]),           # (4, 3)
        h.make_node("Cast", ["p"], ["pf"], to=TP.FLOAT),
        h.make_node("Cast", ["pf"], ["pi"], to=TP.INT64),
        h.make_node("Max", ["pi", "one"], ["shape"]),
        h.make_node("Reshape", ["x", "shape"], ["y"]),
    ]
    inits = [init("d", np.array([1, 2], dtype=np.int64)), init("m", np.array([2, 1], dtype=np.int64)),
             init("one", np.array(1, dtype=np.int64))]
    return model("fold_shape", nodes, inits, [out("y", TP.FLOAT, [4, 3])], 14, [x])


# ---- opset forms ----------------------------------------------------------
def legacy_bcast():
    a = h.make_tensor_value_info("a", TP.FLOAT, [2, 3, 4])
    b = h.make_tensor_value_info("b", TP.FLOAT, [3])
    n = h.make_node("Add", ["a", "b"], ["y"], broadcast=1, axis=1)
    return model("legacy_bcast", [n], [], [out("y", TP.FLOAT, [2, 3, 4])], 6, [a, b])


def clip6():
    x = h.make_tensor_value_info("x", TP.FLOAT, [5])
    n = h.make_node("Clip", ["x"], ["y"], min=-1.0)
    return model("clip6", [n], [], [out("y", TP.FLOAT, [5])], 6, [x])


def cast1():
    x = h.make_tensor_value_info("x", TP.FLOAT, [3])
    n = h.make_node("Cast", ["x"], ["y"], to="INT32")
    return model("cast1", [n], [], [out("y", TP.INT32, [3])], 1, [x])


def mod_float_fmod0():
    x = h.make_tensor_value_info("x", TP.FLOAT, [3])
    n = h.make_node("Mod", ["x", "x"], ["y"])
    return model("mod_float_fmod0", [n], [], [out("y", TP.FLOAT, [3])], 13, [x])


def cast_nan_fold():
    n = h.make_node("Cast", ["k"], ["y"], to=TP.INT64)
    k = init("k", np.array([1.0, np.nan], dtype=np.float32))
    return model("cast_nan_fold", [n], [k], [out("y", TP.INT64, [2])], 13)


def div_zero_fold():
    n = h.make_node("Div", ["a", "b"], ["y"])
    return model("div_zero_fold", [n], [init("a", np.array([4, 5], dtype=np.int64)),
                                        init("b", np.array([2, 0], dtype=np.int64))],
                 [out("y", TP.INT64, [2])], 13)


MODELS = {
    "fold_shape": fold_shape, "legacy_bcast": legacy_bcast, "clip6": clip6, "cast1": cast1,
    "mod_float_fmod0": mod_float_fmod0, "cast_nan_fold": cast_nan_fold,
    "div_zero_fold": div_zero_fold,
}


def write():
    m, _ = fold_ops()
    onnx.save(m, os.path.join(HERE, "fold_ops.onnx"))
    for name, f in MODELS.items():
        onnx.save(f(), os.path.join(HERE, name + ".onnx"))


def fold_ops_emitted():
    """fold_ops with every known value a graph input instead: the same
    formulas emitted as aicm ops and run."""
    nodes = [h.make_node(op, ins.split(), [name], name=name + "_node", **attrs)
             for name, op, ins, attrs, _ in FOLD_OPS]
    ins = [out(k, NP2ONNX[v.dtype], list(v.shape)) for k, v in K.items()]
    outs = [out(name, NP2ONNX[np.asarray(f(K)).dtype], list(np.asarray(f(K)).shape))
            for name, _, _, _, f in FOLD_OPS]
    return model("fold_ops_emitted", nodes, [], outs, 15, ins)


def compare(tag, t, want, exact):
    """How many outputs in folder t differ from want: integers and bools
    exactly, floats exactly when exact, else within 2 ulps (f32)."""
    bad = 0
    for name, r in want.items():
        got = np.load(os.path.join(t, name + ".npy"))
        same = got.dtype == r.dtype and got.shape == r.shape
        if same and (exact or r.dtype.kind != "f"):
            same = np.array_equal(got, r)
        elif same:
            same = np.allclose(got, r, rtol=2.5e-7, atol=0)
        if not same:
            print("%s %s: aicm %r, numpy %r" % (tag, name, got, r))
            bad += 1
    print("%s: %d of %d outputs as numpy's" % (tag, len(want) - bad, len(want)))
    return bad


def check(build):
    """0 when fold_ops' outputs, imported and run, are numpy's results,
    folded (exactly) and emitted as aicm ops (to 2 ulps: the runtime's
    vector kernels); the tools from build, or from PATH when build is None
    (golden.sh puts the build folder first on it)."""
    imp = os.path.join(build, "aicm-import") if build else "aicm-import"
    run = os.path.join(build, "aicm-run") if build else "aicm-run"
    _, want = fold_ops()
    bad = 0
    with tempfile.TemporaryDirectory() as t:
        aicm = os.path.join(t, "m.aicm")
        subprocess.run([imp, os.path.join(HERE, "fold_ops.onnx"), "-o", aicm], check=True)
        subprocess.run([run, aicm, "--output-dir", t], check=True, stdout=subprocess.DEVNULL)
        bad += compare("fold_ops", t, want, True)
    with tempfile.TemporaryDirectory() as t:
        aicm = os.path.join(t, "m.aicm")
        onnx.save(fold_ops_emitted(), os.path.join(t, "m.onnx"))
        subprocess.run([imp, os.path.join(t, "m.onnx"), "-o", aicm], check=True)
        cmd = [run, aicm, "--pass=shape-infer,fuse,autotune,lower-tiled", "--output-dir", t]
        for k, v in K.items():
            np.save(os.path.join(t, "in_%s.npy" % k), v)
            cmd += ["--input", "%s=%s" % (k, os.path.join(t, "in_%s.npy" % k))]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        bad += compare("fold_ops emitted", t, want, False)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2] if len(sys.argv) > 2 else None))
    write()
