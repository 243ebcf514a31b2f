#!/usr/bin/python3
"""python_trace.py: the tests of aicm.trace (python/aicm/trace.py, ops.py).

    /usr/bin/python3 tests/python_trace.py BUILD_DIR

Every op of the table is traced from Python on random inputs of ragged
shapes, for each element type it takes, compiled with aicm.compile and
compared with numpy (DESIGN 7's error measure: 1e-9 for f64, 1e-4 for f32,
exact for integers and bools).  Every traced text also goes once through
aicm-opt --pass=shape-infer, which must print it back unchanged: the tracer's
shapes, types and attribute spellings are the C rules' (one aicm-opt run for
all of them, to stay quick).  Beside those: the Python op table against
src/ir/ops.def (so the two cannot drift), DESIGN 10.1's text for the seed's
function exactly, the naming rules, and errors raised as aicm.Error with the
file:line of the statement that caused them.  Without numpy the test says
so and passes, as check-numpy does.
"""

import os
import re
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "python"))

try:
    import numpy as np
except ImportError:
    print("python_trace: SKIPPED: python3-numpy is not installed")
    sys.exit(0)

import aicm  # noqa: E402
from aicm import optable  # noqa: E402

FAILS = []
THIS = os.path.abspath(__file__)


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg)


def err_measure(a, b):
    """DESIGN 7: max|a - b| / max(max|b|, 1); NaN matches NaN, inf the same inf."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    d = np.where(same, 0.0, np.abs(a - b))
    if np.isnan(d).any():
        return float("inf")
    fin = np.abs(b[np.isfinite(b)])
    scale = max(float(fin.max()) if fin.size else 0.0, 1.0)
    return float(d.max()) / scale if d.size else 0.0


def compare(label, got, want):
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        fail("%s: got %s %s, numpy has %s %s" % (label, got.shape, got.dtype,
                                                  want.shape, want.dtype))
        return
    if want.dtype.kind in "biu":
        if not np.array_equal(got, want):
            fail("%s: integer results differ from numpy at %d places"
                 % (label, int((got != want).sum())))
        return
    tol = 1e-4 if want.dtype == np.float32 else 1e-9
    e = err_measure(got, want)
    if not e <= tol:
        fail("%s: error %.3g against numpy (tolerance %g)" % (label, e, tol))


# ---- the op table against src/ir/ops.def -----------------------------------

def check_table():
    rows = {}
    with open(os.path.join(TOP, "src", "ir", "ops.def")) as f:
        for line in f:
            m = re.match(r'OP\(\s*\w+\s*,\s*"(\w+)"\s*,\s*(\w+)\s*,\s*(\d+)\s*,\s*(\w+)\s*,'
                         r'\s*(\w+)\s*,\s*(\w+)\s*,', line)
            if m:
                nmax = None if m.group(4) == "IR_VARIADIC" else int(m.group(4))
                rows[m.group(1)] = (m.group(2), int(m.group(3)), nmax, m.group(5), m.group(6))
    if len(rows) < 50:
        fail("ops.def: read only %d rows; has its format changed?" % len(rows))
    for name, row in rows.items():
        if name not in optable.OPS:
            fail("op '%s' of ops.def has no row in python/aicm/optable.py" % name)
        elif optable.OPS[name] != row:
            fail("op '%s': ops.def says %s, optable.py %s" % (name, row, optable.OPS[name]))
        if name not in optable.NOT_CALLABLE:
            fn = optable.PYFUNC.get(name, name)
            if not callable(getattr(aicm, fn, None)):
                fail("op '%s' has no function aicm.%s" % (name, fn))
    for name in optable.OPS:
        if name not in rows:
            fail("optable.py has op '%s' that ops.def does not" % name)


# ---- the seed's scenario 1 ---------------------------------------------------

# DESIGN section 10.1, as aicm-opt --pass=shape-infer prints it
SEED_TEXT = """\
graph {
  %x = input() : (64, 48)
  %W = const() : (48, 32)
  %bias = const() : (32,)
  %mm = matmul(%x, %W) : (64, 32)
  %bias_add = add(%mm, %bias) : (64, 32)
  %relu = relu(%bias_add) : (64, 32)
  %rowsum = sum(%relu) : (64, 1) axis=1 keepdims=True
}
"""

_rng = np.random.default_rng(20)
W = _rng.uniform(-1, 1, (48, 32))
bias = _rng.uniform(-1, 1, 32)


def mlp(x):
    mm = x @ W
    bias_add = mm + bias
    relu = aicm.relu(bias_add)
    rowsum = relu.sum(axis=1, keepdims=True)
    return rowsum


def check_seed(build):
    x = _rng.uniform(-1, 1, (64, 48))
    g = aicm.trace(mlp, x)
    if len(g) != 7 or g.inputs != ["x"] or sorted(g.consts) != ["W", "bias"]:
        fail("seed: %r: expected 7 nodes, input x, consts W and bias" % (g,))
    untyped = g.text(types=False)
    out = opt(build, ["--pass=shape-infer"], untyped)
    if out != SEED_TEXT:
        fail("seed: shape-infer of the traced text differs from DESIGN 10.1:\n" + out)
    if str(g) != SEED_TEXT:
        fail("seed: str(trace(mlp)) differs from DESIGN 10.1:\n" + str(g))
    f = aicm.compile(mlp)
    compare("seed compile(mlp)", f(x), np.maximum(x @ W + bias, 0).sum(axis=1, keepdims=True))


def opt(build, args, text):
    p = subprocess.run([os.path.join(build, "aicm-opt")] + args + ["-"], input=text,
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail("aicm-opt %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


# ---- every op against numpy ---------------------------------------------------

def rand(shape, dt, lo=-2.0, hi=2.0):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return _rng.random(shape) < 0.5
    if dt.kind == "i":
        return _rng.integers(int(lo), int(hi), shape).astype(dt)
    return _rng.uniform(lo, hi, shape).astype(dt)


FL = ("float64", "float32")
NUM = ("float64", "float32", "int32", "int64")
ANY = NUM + ("bool",)


def tdiv(a, b):
    if a.dtype.kind == "f":
        return a / b
    q = np.abs(a) // np.abs(b)
    return (q * np.sign(a) * np.sign(b)).astype(a.dtype)


def tpow(a, b):
    if a.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            return np.power(a, b)
    return np.power(a, b).astype(a.dtype)


def erf(x):
    import math
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def cases():
    """(label, fn, inputs, numpy reference) for each op and element type."""
    out = []
    unary = {
        "relu": (aicm.relu, lambda x: np.maximum(x, 0), NUM),
        "neg": (aicm.neg, np.negative, NUM),
        "exp": (aicm.exp, np.exp, FL),
        "log": (aicm.log, lambda x: np.log(np.abs(x) + 0.5), FL),
        "sqrt": (aicm.sqrt, lambda x: np.sqrt(np.abs(x)), FL),
        "tanh": (aicm.tanh, np.tanh, FL),
        "sigmoid": (aicm.sigmoid, lambda x: 1 / (1 + np.exp(-x)), FL),
        "abs": (aicm.abs, np.abs, NUM),
        "erf": (aicm.erf, erf, FL),
        "reciprocal": (aicm.reciprocal, lambda x: 1 / (np.abs(x) + 0.5), FL),
        "sin": (aicm.sin, np.sin, FL),
        "cos": (aicm.cos, np.cos, FL),
        "floor": (aicm.floor, np.floor, FL),
        "ceil": (aicm.ceil, np.ceil, FL),
        "round": (aicm.round, np.round, FL),
        "sign": (aicm.sign, np.sign, NUM),
        "isnan": (aicm.isnan, np.isnan, FL),
        "not": (aicm.logical_not, np.logical_not, ("bool",)),
    }
    for op, (f, ref, dts) in unary.items():
        for dt in dts:
            x = rand((5, 7), dt, -4, 4) if dt != "bool" else rand((5, 7), dt)
            if op in ("log", "reciprocal"):
                out.append((op + ":" + dt, lambda x, f=f: f(aicm.abs(x) + 0.5), [x], ref(x)))
            elif op == "sqrt":
                out.append((op + ":" + dt, lambda x, f=f: f(abs(x)), [x], ref(x)))
            elif op == "isnan":
                x = x.copy()
                x[1, 2] = np.nan
                out.append((op + ":" + dt, lambda x, f=f: f(x), [x], ref(x)))
            elif op == "round":
                x = (np.round(x * 2) / 2).astype(dt)   # halves: half to even
                out.append((op + ":" + dt, lambda x, f=f: f(x), [x], ref(x)))
            else:
                out.append((op + ":" + dt, lambda x, f=f: f(x), [x], ref(x)))
    binary = {
        "add": (lambda a, b: a + b, np.add, NUM),
        "sub": (lambda a, b: a - b, np.subtract, NUM),
        "mul": (lambda a, b: a * b, np.multiply, NUM),
        "div": (aicm.div, tdiv, NUM),
        "maximum": (aicm.maximum, np.maximum, NUM),
        "minimum": (aicm.minimum, np.minimum, NUM),
        "pow": (lambda a, b: a ** b, tpow, NUM),
        "mod": (lambda a, b: a % b, np.mod, NUM),
        "fmod": (aicm.fmod, np.fmod, NUM),
        "equal": (lambda a, b: a == b, np.equal, ANY),
        "not_equal": (lambda a, b: a != b, np.not_equal, ANY),
        "less": (lambda a, b: a < b, np.less, NUM),
        "less_equal": (lambda a, b: a <= b, np.less_equal, NUM),
        "greater": (lambda a, b: a > b, np.greater, NUM),
        "greater_equal": (lambda a, b: a >= b, np.greater_equal, NUM),
        "and": (lambda a, b: a & b, np.logical_and, ("bool",)),
        "or": (lambda a, b: a | b, np.logical_or, ("bool",)),
        "xor": (lambda a, b: a ^ b, np.logical_xor, ("bool",)),
    }
    for op, (f, ref, dts) in binary.items():
        for dt in dts:
            # (3, 1, 7) against (4, 1): numpy broadcasting to (3, 4, 7)
            if op in ("div", "mod", "fmod", "pow"):
                a = rand((3, 1, 7), dt, -6, 7)
                b = rand((4, 1), dt, 1, 4)
                if op != "pow" and dt in FL:
                    b = b * np.where(rand((4, 1), "bool"), -1, 1).astype(dt)
            elif op in ("equal", "not_equal") and dt != "bool":
                a, b = rand((3, 1, 7), dt, 0, 3), rand((4, 1), dt, 0, 3)
            else:
                a, b = rand((3, 1, 7), dt), rand((4, 1), dt)
            out.append((op + ":" + dt, f, [a, b], ref(a, b)))
    # reflected forms with Python numbers and numpy arrays
    x = rand((6, 5), "float32")
    c = rand((5,), "float32")
    out.append(("scalars:float32", lambda x: 2 - x * 3 + 1.5 / (x * x + 1) - (-x),
                [x], (2 - x * 3 + np.float32(1.5) / (x * x + 1) - (-x)).astype("float32")))
    out.append(("ndarray-left:float32", lambda x: c - x + c * x, [x], c - x + c * x))
    xi = rand((6, 5), "int32", -5, 5)
    out.append(("scalars:int32", lambda x: 7 - x * 3 + 2, [xi], (7 - xi * 3 + 2).astype("int32")))
    # where
    for dt in ANY:
        cnd, a, b = rand((4, 1, 6), "bool"), rand((5, 6), dt), rand((1, 6), dt)
        out.append(("where:" + dt, lambda c, a, b: aicm.where(c, a, b), [cnd, a, b],
                    np.where(cnd, a, b)))
    # reductions
    x3 = {dt: rand((3, 5, 7), dt, -3, 4) for dt in NUM}
    for op in ("sum", "max", "min", "mean", "prod"):
        for dt in (FL if op == "mean" else NUM):
            x = x3[dt] if op != "prod" else rand((3, 5, 7), dt, 1, 3)
            for axis, kd in ((None, False), (1, True), (-1, False), ((0, 2), True), ((2, 0), False)):
                ref = getattr(np, op)(x, axis=axis, keepdims=kd)
                ref = np.asarray(ref).astype(dt) if op != "mean" else np.asarray(ref, dtype=dt)
                out.append(("%s axis=%s keepdims=%s:%s" % (op, axis, kd, dt),
                            lambda x, op=op, axis=axis, kd=kd: getattr(x, op)(axis=axis, keepdims=kd),
                            [x], ref))
    for op in ("argmax", "argmin"):
        for dt in NUM:
            x = x3[dt]
            for axis, kd in ((None, False), (1, False), (-1, True), (0, False)):
                out.append(("%s axis=%s keepdims=%s:%s" % (op, axis, kd, dt),
                            lambda x, op=op, axis=axis, kd=kd: getattr(x, op)(axis=axis, keepdims=kd),
                            [x], getattr(np, op)(x, axis=axis, keepdims=kd).astype("int64")))
    # matmul: 2-D, batched with broadcast batch dims, 1-D on either side
    for dt in NUM:
        lo, hi = (-3, 4) if dt in ("int32", "int64") else (-1, 1)
        a, b = rand((7, 5), dt, lo, hi), rand((5, 9), dt, lo, hi)
        out.append(("matmul 2d:" + dt, lambda a, b: a @ b, [a, b], a @ b))
    a, b = rand((2, 1, 3, 5), "float64"), rand((4, 5, 6), "float64")
    out.append(("matmul batch:float64", lambda a, b: a @ b, [a, b], a @ b))
    v = rand((5,), "float32")
    m = rand((3, 5, 4), "float32")
    out.append(("matmul 1d@3d:float32", lambda v, m: aicm.matmul(v, m), [v, m], v @ m))
    out.append(("matmul 3d@1d:float32", lambda m, v: m.transpose(0, 2, 1) @ v, [m, v],
                m.transpose(0, 2, 1) @ v))
    # layout
    for dt in ANY:
        x = rand((2, 3, 4), dt)
        out.append(("T:" + dt, lambda x: x.T, [x], x.T))
        out.append(("transpose:" + dt, lambda x: x.transpose(1, 2, 0), [x], x.transpose(1, 2, 0)))
        out.append(("reshape:" + dt, lambda x: x.reshape(4, -1), [x], x.reshape(4, -1)))
        out.append(("astype:" + dt, lambda x: x.astype("float32") * 2, [x],
                    x.astype("float32") * 2))
        out.append(("concatenate:" + dt, lambda x: aicm.concatenate([x, x[:, :1], x], axis=1),
                    [x], np.concatenate([x, x[:, :1], x], axis=1)))
    x = rand((3, 4), "float64", -300, 300)
    for to in ("int32", "int64", "bool"):
        out.append(("cast f64 to " + to, lambda x, to=to: x.astype(to), [x], x.astype(to)))
    # indexing: slices with steps, negative indices, None, integers, Ellipsis
    x = rand((6, 7, 5), "float64")
    idx = [
        (slice(1, 5),), (slice(None, None, 2),), (slice(None, None, -1),),
        (slice(-3, None), slice(None, -2)), (slice(None), None, slice(5, 0, -2)),
        (2,), (-1, slice(None), 3), (Ellipsis, 1), (None, Ellipsis, None),
        (slice(4, None, -3), 0), (slice(-100, 100), slice(6, -100, -1)),
    ]
    for key in idx:
        out.append(("index %s" % (key,), lambda x, key=key: x[key] * 1.0, [x], x[key] * 1.0))
    # copy ops
    for dt in ANY:
        x = rand((3, 4), dt)
        val = {"bool": True, "int32": 5, "int64": -2}.get(dt, 1.5)
        out.append(("pad:" + dt, lambda x, val=val: aicm.pad(x, (1, 0, 2, 3), val), [x],
                    np.pad(x, ((1, 2), (0, 3)), constant_values=val)))
        out.append(("expand:" + dt, lambda x: aicm.expand(x[:, :1], (2, 3, 5)), [x],
                    np.broadcast_to(x[:, :1], (2, 3, 5)).copy()))
        ind = np.array([[2, -1], [0, 1], [3, 3]], dtype="int64")
        out.append(("gather:" + dt, lambda x, i: aicm.gather(x, i, axis=1), [x, ind],
                    np.take(x, ind, axis=1)))
    ind32 = np.array([2, 0, 1, 2], dtype="int32")
    x = rand((3, 4), "float32")
    out.append(("gather i32 indices", lambda x: aicm.gather(x, ind32), [x], np.take(x, ind32, axis=0)))
    # numpy's own functions on traced values (__array_ufunc__, __array_function__):
    # the function itself, run on the arrays, is the reference
    for dt in FL:
        x = rand((4, 5), dt, -1, 1)
        wn = rand((5, 3), dt, -1, 1)

        def npf(x, wn=wn):
            h = np.tanh(wn.T @ x.T).T
            e = np.exp(h) + 1.0
            m = np.where(e > 1.5, e, 0.0)
            s = np.sum(m, axis=1, keepdims=True) / np.max(e) - np.mean(np.abs(x))
            c = np.concatenate([s, np.sqrt(np.abs(s)), np.minimum(m, 1.75)], axis=1)
            return np.transpose(c), np.argmax(m, axis=0), np.logical_not(m != e)
        out.append(("numpy functions:" + dt, npf, [x], npf(x)))
    # conv2d and the pools (references written out in numpy)
    for dt in FL:
        x = rand((2, 4, 9, 8), dt, -1, 1)
        w = rand((6, 2, 3, 2), dt, -1, 1)
        b = rand((6,), dt, -1, 1)
        out.append(("conv2d:" + dt, lambda x, w=w, b=b: aicm.conv2d(x, w, b, strides=(2, 1), pads=(1, 0, 1, 1),
                                                      dilations=(1, 2), groups=2),
                    [x], conv_ref(x, w, b, (2, 1), (1, 0, 1, 1), (1, 2), 2)))
        out.append(("max_pool2d:" + dt, lambda x: aicm.max_pool2d(x, (3, 2), strides=2, pads=(1, 1, 0, 0),
                                                                  ceil_mode=True),
                    [x], pool_ref(x, (3, 2), (2, 2), (1, 1, 0, 0), True, "max")))
        out.append(("avg_pool2d:" + dt, lambda x: aicm.avg_pool2d(x, 2, strides=(1, 2), pads=1),
                    [x], pool_ref(x, (2, 2), (1, 2), (1, 1, 1, 1), False, "avg")))
    return out


def conv_ref(x, w, b, s, p, d, groups):
    N, C, H, Wd = x.shape
    F, Cg, KH, KW = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])))
    oh = (H + p[0] + p[2] - d[0] * (KH - 1) - 1) // s[0] + 1
    ow = (Wd + p[1] + p[3] - d[1] * (KW - 1) - 1) // s[1] + 1
    y = np.zeros((N, F, oh, ow))
    fg = F // groups
    for f in range(F):
        g = f // fg
        for i in range(KH):
            for j in range(KW):
                win = xp[:, g * Cg:(g + 1) * Cg,
                         i * d[0]: i * d[0] + s[0] * (oh - 1) + 1: s[0],
                         j * d[1]: j * d[1] + s[1] * (ow - 1) + 1: s[1]]
                y[:, f] += np.einsum("nchw,c->nhw", win, w[f, :, i, j].astype(np.float64))
        y[:, f] += b[f]
    return y.astype(x.dtype)


def pool_ref(x, k, s, p, ceil_mode, kind):
    N, C, H, Wd = x.shape

    def size(i, kk, ss, p0, p1):
        span = i + p0 + p1 - kk
        o = span // ss + 1
        if ceil_mode:
            o += span % ss != 0
            if (o - 1) * ss >= i + p0:
                o -= 1
        return o
    oh, ow = size(H, k[0], s[0], p[0], p[2]), size(Wd, k[1], s[1], p[1], p[3])
    y = np.zeros((N, C, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s[0] - p[0], j * s[1] - p[1]
            hs, ws = max(h0, 0), max(w0, 0)
            he, we = min(h0 + k[0], H), min(w0 + k[1], Wd)
            win = x[:, :, hs:he, ws:we].astype(np.float64)
            y[:, :, i, j] = win.max(axis=(2, 3)) if kind == "max" else win.mean(axis=(2, 3))
    return y.astype(x.dtype)


def check_ops(build):
    texts = []
    n = 0
    for label, fn, inputs, want in cases():
        try:
            g = aicm.trace(fn, *inputs)
            texts.append((label, str(g)))
            got = aicm.compile(fn)(*inputs)
        except aicm.Error as e:
            fail("%s: %s" % (label, e))
            continue
        if isinstance(want, tuple):
            if not isinstance(got, tuple) or len(got) != len(want):
                fail("%s: %d outputs, expected %d" % (label, len(got), len(want)))
                continue
            for k, (a, b) in enumerate(zip(got, want)):
                compare("%s output %d" % (label, k), a, b)
        else:
            compare(label, got, want)
        n += 1
    # every traced text through shape-infer once: it must print it unchanged
    joined = "// -----\n".join(t for _, t in texts)
    out = opt(build, ["--split-input-file", "--pass=shape-infer"], joined)
    back = out.split("// -----\n")
    if len(back) != len(texts):
        fail("shape-infer printed %d graphs for %d" % (len(back), len(texts)))
    else:
        for (label, t), b in zip(texts, back):
            if t != b:
                fail("%s: shape-infer changes the traced text:\n%s---\n%s" % (label, t, b))
    return n


# ---- names --------------------------------------------------------------------

SCALE = np.full((3,), 0.5)


def check_names():
    w2 = np.ones((4, 3))

    def f(x, y):
        h = x @ w2              # a closure: const %w2
        h = h + SCALE           # a global: const %SCALE; h again: %h_1
        t = aicm.exp(h) * 2.0   # the exp and the splat have no local
        return t - y.sum(), h

    g = aicm.trace(f, np.zeros((2, 4)), np.zeros((3,)))
    names = [line.split(" =")[0].strip() for line in str(g).splitlines()[1:-2]]
    want = ["%x", "%y", "%w2", "%SCALE", "%const", "%h", "%h_1", "%exp", "%t", "%sum", "%sub"]
    if names != want:
        fail("names: %s, expected %s\n%s" % (names, want, g))
    if not g.lines.get("t", "").startswith(THIS + ":") or "x" in g.lines:
        fail("names: Graph.lines %s" % g.lines)
    if g.outputs != ["sub", "h_1"] or "  return %sub, %h_1" not in str(g):
        fail("names: outputs %s, expected sub and h_1 in a return\n%s" % (g.outputs, g))

    def clash(x, relu):            # a parameter named like an op
        exp = aicm.relu(x + relu)
        return aicm.relu(exp)
    g = aicm.trace(clash, np.zeros(3), np.zeros(3))
    if "%relu_1 = relu(%exp)" not in str(g) or "%exp = relu(%add)" not in str(g):
        fail("names: collisions not made unique:\n%s" % g)

    def kw(a, b, c=None):
        return a - b
    g = aicm.trace(kw, np.zeros(2), b=np.ones(2))
    if g.inputs != ["a", "b"]:
        fail("names: an example by name: inputs %s, expected a and b" % g.inputs)

    def dead(x):
        unused = aicm.exp(x)       # noqa: F841 (not returned: not in the graph)
        return x * 2.0
    if "exp" in str(aicm.trace(dead, np.zeros(2))):
        fail("names: a value nothing returns is in the graph")


# ---- errors --------------------------------------------------------------------

def expect_error(label, fn, *inputs, where=None, text=None):
    try:
        aicm.trace(fn, *inputs)
    except aicm.Error as e:
        msg = str(e)
        if where is not None and ("%s:%d:" % (THIS, where)) not in msg:
            fail("%s: the message does not locate line %d: %s" % (label, where, msg))
        if text is not None and text not in msg:
            fail("%s: '%s' not in the message: %s" % (label, text, msg))
        return
    except Exception as e:  # noqa: BLE001 (any other exception is the failure)
        fail("%s: raised %s, not aicm.Error: %s" % (label, type(e).__name__, e))
        return
    fail("%s: no error" % label)


def line_of(marker):
    with open(THIS) as f:
        for i, line in enumerate(f, 1):
            if line.rstrip().endswith("# " + marker):
                return i
    raise AssertionError(marker)


def bad_shapes(x):
    y = x @ x  # ERR-matmul
    return y


def bad_broadcast(x):
    return x + np.ones((4,))  # ERR-broadcast


def bad_type(x):
    return x + x.astype("float32")  # ERR-type


def bad_branch(x):
    if x.sum() > 0:  # ERR-branch
        return x * 2.0
    return x


def check_errors():
    expect_error("matmul shapes", bad_shapes, np.zeros((3, 5)), where=line_of("ERR-matmul"),
                 text="'matmul' contracts 5 with 3")
    expect_error("broadcast", bad_broadcast, np.zeros((3, 5)), where=line_of("ERR-broadcast"),
                 text="'add' cannot broadcast (3, 5) with (4,)")
    expect_error("types", bad_type, np.zeros(3), where=line_of("ERR-type"),
                 text="found f64 and f32")
    expect_error("branch", bad_branch, np.zeros(3), where=line_of("ERR-branch"),
                 text="not known while tracing")
    expect_error("dtype", lambda x: x, np.zeros(3, dtype=np.float16), text="float16")
    expect_error("index", lambda x: x[5], np.zeros(3), text="out of range")
    expect_error("int /", lambda x: x / 2, np.zeros(3, dtype=np.int32), text="'/' on i32")
    expect_error("numpy function", lambda x: np.cumsum(x), np.zeros(3),
                 text="numpy's 'cumsum' on a traced value has no aicm op")
    try:
        aicm.relu(np.zeros(3))
        fail("aicm.relu outside a trace: no error")
    except aicm.Error as e:
        if "record into a trace" not in str(e):
            fail("aicm.relu outside a trace: %s" % e)
    # the library's own diagnostics: a text that does not parse
    try:
        aicm.compile("graph {\n  %x = input() : (3,)\n  %y = relu(%z)\n}\n")(np.zeros(3))
        fail("library error: a graph using an undefined value compiled")
    except aicm.Error as e:
        if ":3:" not in str(e) or "z" not in str(e):
            fail("library error: not located at line 3: %s" % e)


# ---- constants with their data: Graph.save through aicm-run ---------------------

def check_save(build):
    """save() writes small consts inline (values=, every element type) and
    large ones as .npy files (file=): aicm-run on the saved text, with no
    other data, must give numpy's result."""
    big = rand((9, 8), "float32")               # 72 elements: a file
    small = {dt: rand((2, 3), dt) for dt in ANY}

    def f(x, i):
        w = big.T                               # a local array: const %w
        y = (x @ w).sum(axis=0)[:6].reshape(2, 3) + small["float32"]
        z = aicm.where(small["bool"], small["int64"] + i, small["int32"].astype("int64"))
        return y * small["float64"].astype("float32"), z
    x = rand((4, 8), "float32")
    i = rand((3,), "int64")
    g = aicm.trace(f, x, i)
    with tempfile.TemporaryDirectory() as d:
        path = g.save(os.path.join(d, "f.aicm"))
        text = open(path).read()
        if 'file="f.weights/w.npy"' not in text or text.count("values=(") != 5:
            fail("save: expected big as a file and five inline consts:\n" + text)
        np.save(os.path.join(d, "x.npy"), x)
        np.save(os.path.join(d, "i.npy"), i)
        p = subprocess.run([os.path.join(build, "aicm-run"), "-q", "--output-dir=" + d,
                            "--input", "x=" + os.path.join(d, "x.npy"),
                            "--input", "i=" + os.path.join(d, "i.npy"), path],
                           capture_output=True, text=True)
        if p.returncode != 0:
            fail("save: aicm-run exit %d: %s" % (p.returncode, p.stderr))
            return
        y = ((x @ big.T).sum(axis=0)[:6].reshape(2, 3) + small["float32"]) * \
            small["float64"].astype("float32")
        z = np.where(small["bool"], small["int64"] + i, small["int32"].astype("int64"))
        for name, ref in zip(g.outputs, (y, z)):
            compare("save: " + name, np.load(os.path.join(d, name + ".npy")), ref)


def main():
    if len(sys.argv) != 2:
        print("usage: python_trace.py BUILD_DIR", file=sys.stderr)
        return 2
    build = sys.argv[1]
    t0 = time.time()
    check_table()
    check_names()
    check_errors()
    check_seed(build)
    check_save(build)
    n = check_ops(build)
    dt = time.time() - t0
    if FAILS:
        print("python_trace: %d failures" % len(FAILS))
        return 1
    print("python_trace: ok (op table, names, errors, the seed's text, %d op cases "
          "against numpy; %.1f s)" % (n, dt))
    return 0


if __name__ == "__main__":
    sys.exit(main())
