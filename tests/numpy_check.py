#!/usr/bin/python3
"""numpy_check.py: aicm-run's reference interpreter against numpy itself.

    /usr/bin/python3 tests/numpy_check.py BUILD_DIR [-v] [-k]

Builds graphs -- every op in f32 and f64, the broadcasting corners, the
reduction axes and keepdims, batched matmul, transposes and reshapes,
conv2d (bias, strides, pads, dilations, groups, depthwise) and the pools
(ceil_mode, count_include_pad, pads, dilations) against a direct loop over
the window (np_conv2d, np_pool), and random DAGs with ragged sizes from a
seeded generator -- writes each graph's
inputs as .npy files with numpy, runs `aicm-run --input ... --output-dir` on
it with each engine (the reference interpreter and the tile executor), and
evaluates the same graph with numpy on the same arrays.  Every
computed value is returned (so every op is compared, not just the last),
with DESIGN section 7's error measure: max|a - b| / max(max|b|, 1), NaN
matching NaN and an infinity the same infinity.  The limits are 1e-12 for
f64 and 1e-5 for f32.  It also reproduces aicm's random inputs from the
formula of docs/run.md.  Exit 0 when every graph passes, 1 otherwise.
-k keeps the scratch folder.
"""
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np

np.seterr(all="ignore")     # NaN and inf are wanted here

TOL = {"f64": 1e-12, "f32": 1e-5, "i32": 0, "i64": 0, "bool": 0}
NP = {"f64": np.float64, "f32": np.float32, "i32": np.int32, "i64": np.int64, "bool": np.bool_}
INTS = ("i32", "i64")
# the v1 ops that take integers (ops.def's TY_NUM); bool takes the layout
# ops only among them
UNARY_INT = ["relu", "neg", "abs"]
REDUCE_INT = ["sum", "max"]
UNARY = ["relu", "neg", "exp", "log", "sqrt", "tanh", "sigmoid", "abs", "erf", "reciprocal",
         "sin", "cos", "floor", "ceil", "round", "sign"]
COMPARE = ["equal", "less", "less_equal", "greater", "greater_equal"]
LOGIC = ["and", "or", "xor"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum"]
REDUCE = ["sum", "max", "mean", "min", "prod"]
NP_REDUCE = {"sum": np.sum, "max": np.max, "mean": np.mean, "min": np.min, "prod": np.prod}


def np_unary(op, x):
    return {
        "relu": lambda: np.maximum(x, x.dtype.type(0)),
        "neg": lambda: -x,
        "exp": lambda: np.exp(x),
        "log": lambda: np.log(x),
        "sqrt": lambda: np.sqrt(x),
        "tanh": lambda: np.tanh(x),
        "sigmoid": lambda: x.dtype.type(1) / (x.dtype.type(1) + np.exp(-x)),
        "abs": lambda: np.abs(x),
        # numpy has no erf: math.erf is C's, element by element, in double
        # (an f32 result is the rounded double, as aicm computes it)
        "erf": lambda: np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype),
        "reciprocal": lambda: np.reciprocal(x),
        "sin": lambda: np.sin(x),
        "cos": lambda: np.cos(x),
        "floor": lambda: np.floor(x),
        "ceil": lambda: np.ceil(x),
        "round": lambda: np.round(x),        # half to even
        "sign": lambda: np.sign(x),
        "isnan": lambda: np.isnan(x),
        "not": lambda: np.logical_not(x),
    }[op]()


def wrap(q, dtype):
    """Python ints to dtype's width, two's complement (C's wrapping)."""
    bits = np.iinfo(dtype).bits
    q = (q + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))
    return dtype.type(q)


def c_div(a, b):
    """C's integer division: truncated toward zero, wrapping (INT_MIN / -1
    is INT_MIN); numpy's // floors, so the quotient is worked out on exact
    Python ints and wrapped back to the dtype."""
    a, b = np.broadcast_arrays(a, b)
    dt = a.dtype
    out = np.empty(a.shape, dtype=dt)
    for i in np.ndindex(a.shape):
        x, y = int(a[i]), int(b[i])
        assert y != 0, "a random integer divisor is never 0"
        q = abs(x) // abs(y)
        out[i] = wrap(-q if (x < 0) != (y < 0) else q, dt)
    return out


def np_binary(op, a, b):
    if a.dtype.kind == "i" and op == "div":
        return c_div(a, b)
    return {
        "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
        "maximum": np.maximum, "minimum": np.minimum,
        "pow": np.power, "mod": np.mod, "fmod": np.fmod,
        "equal": np.equal, "less": np.less, "less_equal": np.less_equal,
        "greater": np.greater, "greater_equal": np.greater_equal,
        "and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor,
    }[op](a, b)


def shape_str(s):
    if len(s) == 1:
        return "(%d,)" % s[0]
    return "(" + ", ".join(str(d) for d in s) + ")"


class Graph:
    """A graph built and evaluated with numpy at the same time."""

    def __init__(self, name, dt, typed=True):
        self.name, self.dt, self.typed = name, dt, typed
        self.lines, self.env, self.inputs, self.computed = [], {}, {}, []
        self.n = 0
        self.mixed = False       # values of every type are made and returned
        self.engines = None         # None: both; else the engines that run it

    def fresh(self, base):
        self.n += 1
        return "%s%d" % (base, self.n)

    def _type(self, shape, kind=None):
        t = ": " + ("()" if len(shape) == 0 else shape_str(shape))
        kind = kind or self.dt
        return t + (" " + kind if kind != "f64" else "")

    def input(self, shape, lo=-1.0, hi=1.0, rng=None, const=False, nonzero=False):
        name = self.fresh("c" if const else "x")
        rng = rng or np.random.default_rng(self.n * 7919 + len(self.name))
        if self.dt == "bool":
            v = rng.integers(0, 2, size=shape).astype(np.bool_)
        elif self.dt in INTS:
            v = self.int_values(rng, shape, nonzero)
        else:
            v = rng.uniform(lo, hi, size=shape).astype(NP[self.dt])
        self.env[name] = v
        self.inputs[name] = v
        self.lines.append("  %%%s = %s() %s" % (name, "const" if const else "input",
                                               self._type(shape)))
        return name

    def int_values(self, rng, shape, nonzero):
        """Integers of every size: small ones of either sign, and a quarter
        anywhere in the type's range (with its ends), so that add, mul,
        neg, abs and the sums wrap; divisors (nonzero) are never 0."""
        info = np.iinfo(NP[self.dt])
        v = rng.integers(-20, 21, size=shape, dtype=np.int64)
        wide = rng.integers(info.min, info.max, size=shape, dtype=np.int64, endpoint=True)
        v = np.where(rng.random(size=shape) < 0.25, wide, v)
        ends = rng.random(size=shape)
        v = np.where(ends < 0.03, info.min, np.where(ends > 0.97, info.max, v))
        if nonzero:
            v = np.where(v == 0, -1, v)
            # INT_MIN / -1 turns up often
            v = np.where(rng.random(size=shape) < 0.1, -1, v)
        return np.asarray(v).astype(NP[self.dt])

    def splat(self, shape, value):
        name = self.fresh("s")
        self.env[name] = np.full(shape, value, dtype=NP[self.dt])
        self.lines.append("  %%%s = const() %s value=%r" % (name, self._type(shape), value))
        return name

    def ivalues(self, shape, dt, values):
        """An integer const written inline (values=), for gather's indices."""
        name = self.fresh("i")
        self.env[name] = np.array(values, dtype=np.int64 if dt == "i64" else np.int32
                                  ).reshape(shape)
        self.lines.append("  %%%s = const() : %s %s values=(%s%s)" % (
            name, "()" if len(shape) == 0 else shape_str(shape), dt,
            ", ".join(map(str, values)), "," if len(values) == 1 else ""))
        return name

    def op(self, op, args, attrs="", fn=None, dt=None):
        name = self.fresh(op[:2])
        vals = [self.env[a] for a in args]
        v = np.asarray(fn(*vals))
        # a bool (a compare's) or the other float type (a cast's) is used
        # by later ops and reaches the output through a cast to the
        # graph's type, which is returned
        kind = {np.dtype(np.bool_): "bool", np.dtype(np.float32): "f32",
                np.dtype(np.float64): "f64", np.dtype(np.int32): "i32",
                np.dtype(np.int64): "i64"}[v.dtype]
        assert v.dtype == NP[self.dt] or op in COMPARE + LOGIC + ["isnan", "not", "cast", "argmax", "argmin"] or \
            self.mixed, (op, v.dtype)
        self.env[name] = v
        if v.dtype == NP[self.dt] or op in ("argmax", "argmin") or self.mixed:
            self.computed.append(name)
        t = " " + self._type(v.shape, kind) if self.typed else ""
        self.lines.append("  %%%s = %s(%s)%s%s" % (
            name, op, ", ".join("%" + a for a in args), t, " " + attrs if attrs else ""))
        return name

    def unary(self, op, a):
        return self.op(op, [a], fn=lambda x: np_unary(op, x))

    def binary(self, op, a, b):
        return self.op(op, [a, b], fn=lambda x, y: np_binary(op, x, y))

    def cast(self, a, to):
        want = NP[to]
        return self.op("cast", [a], "to=" + to, fn=lambda x: x.astype(want))

    def where(self, c, a, b):
        return self.op("where", [c, a, b], fn=np.where)

    def reduce(self, op, a, axis=None, keepdims=False):
        attrs = []
        if isinstance(axis, tuple):
            attrs.append("axis=%s" % shape_str(axis))
        elif axis is not None:
            attrs.append("axis=%d" % axis)
        if keepdims:
            attrs.append("keepdims=True")
        f = NP_REDUCE[op]
        if op in ("sum", "prod"):
            # an integer sum or product in its own type (numpy's default
            # widens i32)
            return self.op(op, [a], " ".join(attrs),
                           fn=lambda x: f(x, axis=axis, keepdims=keepdims, dtype=x.dtype))
        return self.op(op, [a], " ".join(attrs),
                       fn=lambda x: f(x, axis=axis, keepdims=keepdims))

    def argreduce(self, op, a, axis=None, keepdims=False, last=False):
        """ONNX ArgMax/ArgMin: axis 0 by default; last=True is
        select_last_index, computed as ONNX's reference does (flip, take
        the first, flip back)."""
        attrs = []
        if axis is not None:
            attrs.append("axis=%d" % axis)
        if keepdims:
            attrs.append("keepdims=True")
        if last:
            attrs.append("last=True")
        f = np.argmax if op == "argmax" else np.argmin
        ax = 0 if axis is None else axis

        def fn(x):
            if last:
                r = x.shape[ax] - 1 - f(np.flip(x, ax), axis=ax)
            else:
                r = f(x, axis=ax)
            r = np.asarray(r, dtype=np.int64)
            return np.expand_dims(r, ax) if keepdims else r
        return self.op(op, [a], " ".join(attrs), fn=fn, dt="i64")

    def matmul(self, a, b):
        return self.op("matmul", [a, b], fn=np.matmul)

    def transpose(self, a, perm=None):
        if perm is None:
            # DESIGN section 3: swap the last two axes; rank < 2 stays as it is
            return self.op("transpose", [a],
                           fn=lambda x: np.swapaxes(x, -1, -2) if x.ndim >= 2 else x.copy())
        return self.op("transpose", [a], "perm=(%s)" % ", ".join(map(str, perm)),
                       fn=lambda x: np.transpose(x, perm))

    def reshape(self, a, shape):
        return self.op("reshape", [a], "shape=%s" % shape_str(shape),
                       fn=lambda x: x.reshape(shape))

    def text(self):
        ret = "  return " + ", ".join("%" + c for c in self.computed)
        return "graph @%s {\n%s\n%s\n}\n" % (self.name, "\n".join(self.lines), ret)


def err_measure(a, b):
    """DESIGN section 7: max|a-b| / max(max|b|, 1); NaN~NaN, inf~same inf."""
    if b.dtype == np.int64 and a.dtype == np.float64 and a.shape == b.shape:
        # TODO(issue 16, i16-types): aicm-run's .npy writer writes every
        # tensor as '<f8' until integer storage lands; an i64 result's
        # bytes are int64s, read them as such (exactly compared below)
        a = a.view(np.int64)
    if b.dtype == np.int64:
        if a.dtype != b.dtype or a.shape != b.shape:
            return float("inf"), "shape/type %s %s vs %s %s" % (a.shape, a.dtype, b.shape,
                                                                b.dtype)
        bad = np.argwhere(a != b)
        if len(bad):
            i = tuple(bad[0])
            return float("inf"), "at %s: %r vs %r" % (i, a[i], b[i])
        return 0.0, ""
    if a.shape != b.shape or a.dtype != b.dtype:
        return float("inf"), "shape/type %s %s vs %s %s" % (a.shape, a.dtype, b.shape, b.dtype)
    if a.dtype.kind in "ib":
        # integers and bools: exact
        if np.array_equal(a, b):
            return 0.0, ""
        i = tuple(np.argwhere(a != b)[0])
        return float("inf"), "at %s: %r vs %r" % (i, a[i], b[i])
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    special = ~np.isfinite(a64) | ~np.isfinite(b64)
    same = (np.isnan(a64) & np.isnan(b64)) | (np.isinf(a64) & (a64 == b64))
    if np.any(special & ~same):
        i = np.argwhere(special & ~same)[0]
        return float("inf"), "at %s: %r vs %r" % (tuple(i), a64[tuple(i)], b64[tuple(i)])
    fin = np.isfinite(b64)
    maxb = max(float(np.max(np.abs(b64[fin]))) if fin.any() else 0.0, 1.0)
    d = np.where(special, 0.0, np.abs(a64 - b64))
    if d.size == 0:
        return 0.0, ""
    i = np.unravel_index(np.argmax(d), d.shape)
    return float(d[i]) / maxb, "worst at %s: %r vs %r" % (tuple(i), a64[i], b64[i])


def run_graph(tool, tmp, g, extra=(), verbose=False):
    """Runs g through aicm-run; returns a list of failure strings."""
    gdir = os.path.join(tmp, g.name)
    os.makedirs(gdir)
    path = os.path.join(gdir, "g.aicm")
    with open(path, "w") as f:
        f.write(g.text())
    cmd = [tool, path, "--output-dir", os.path.join(gdir, "out")] + list(extra)
    for i, (name, v) in enumerate(g.inputs.items()):
        p = os.path.join(gdir, name + ".npy")
        # every second input in Fortran order, every third big-endian: aicm
        # converts what np.load would (same values, other bytes on disk)
        if i % 2 == 1 and v.ndim >= 2:
            v = np.asfortranarray(v)
        if i % 3 == 2:
            v = v.astype(v.dtype.newbyteorder(">"))
        np.save(p, v)
        cmd += ["--input", "%s=%s" % (name, p)]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return ["%s: aicm-run exit %d: %s" % (g.name, r.returncode, r.stderr.strip())]
    fails = []
    for name in g.computed:
        got = np.load(os.path.join(gdir, "out", name + ".npy"))
        e, where = err_measure(got, g.env[name])
        if verbose:
            print("    %s %%%s %s: err %.3g" % (g.name, name, got.shape, e))
        if not e <= TOL[g.dt]:
            fails.append("%s: %%%s err %.3g > %g (%s)" % (g.name, name, e, TOL[g.dt], where))
    return fails


def table_ops():
    """Every op of src/ir/ops.def but the tiled-node row: each must be
    exercised here, so that a new row cannot go untested against numpy."""
    here = os.path.dirname(os.path.abspath(__file__))
    rows = []
    with open(os.path.join(here, "..", "src", "ir", "ops.def")) as f:
        for line in f:
            if line.startswith("OP("):
                fields = [x.strip() for x in line[3:].split(",")]
                if fields[2] != "OC_TILED":
                    rows.append(fields[1].strip('"'))
    assert len(rows) > 20, "read no ops from ops.def"
    return rows


# ---- the graphs ----------------------------------------------------------

def g_unary(dt):
    g = Graph("unary_" + dt, dt)
    x = g.input((7, 13), -3, 3)
    for op in UNARY:
        g.unary(op, x)
    p = g.input((33,), 0.01, 4)          # log and sqrt of positives too
    g.unary("log", p)
    g.unary("sqrt", p)
    return g


def g_specials(dt):
    g = Graph("specials_" + dt, dt)
    x = g.input((4, 5))
    v = g.env[x]
    v[0, 0], v[1, 1], v[2, 2], v[3, 3] = np.nan, np.inf, -np.inf, 0.0
    big = g.splat((5,), 100.0)
    for op in UNARY:
        g.unary(op, x)
    for op in BINARY:
        g.binary(op, x, big)
    g.binary("maximum", big, x)
    g.binary("minimum", big, x)
    for op in REDUCE:
        g.reduce(op, x)
        g.reduce(op, x, axis=1)
        g.reduce(op, x, axis=0, keepdims=True)
    return g


def g_elem(dt):
    """Issue 16's elementwise ops against numpy: half-way values for
    round, mod and fmod of every sign combination (zeros keep numpy's
    signs), pow of negatives by whole exponents, compares and bool logic
    read back through cast, where over three broadcast operands, casts to
    the other float type and to bool and back."""
    g = Graph("elem_" + dt, dt)
    x = g.input((7, 13), -3, 3)
    v = g.env[x]
    v[0, :8] = [0.5, 1.5, 2.5, -0.5, -2.5, -0.0, 3.0, -3.0]
    v[1, 0], v[1, 1], v[1, 2] = np.nan, np.inf, -np.inf
    y = g.input((13,), 0.5, 2)
    ny = g.input((7, 1), -2, -0.5)
    for op in ["cos", "floor", "ceil", "round", "sign"]:
        g.unary(op, x)
    for b in (y, ny):
        g.binary("mod", x, b)
        g.binary("fmod", x, b)
    zero = g.splat((), 0.0)
    g.binary("mod", zero, ny)                 # -0 by a negative divisor
    g.binary("mod", g.unary("neg", zero), y)  # +0 by a positive one
    p = g.input((7, 13), 0.01, 4)
    g.binary("pow", p, x)
    g.binary("pow", x, g.splat((), 3.0))
    g.binary("pow", x, g.splat((13,), 2.0))
    half = g.splat((), 0.5)
    conds = []
    for op in COMPARE:
        c = g.binary(op, x, half)
        g.cast(c, dt)
        conds.append(c)
    eq = g.binary("equal", g.unary("floor", x), g.unary("round", x))
    g.cast(eq, dt)
    nan = g.op("isnan", [x], fn=np.isnan)
    g.cast(nan, dt)
    for i, op in enumerate(LOGIC):
        g.cast(g.binary(op, conds[i], conds[i + 1]), dt)
    g.cast(g.op("not", [nan], fn=np.logical_not), dt)
    c7 = g.binary("less", ny, g.splat((7, 1), -1.0))
    g.where(conds[1], x, y)
    g.where(c7, y, g.splat((), 9.0))
    g.where(nan, half, x)
    other = "f64" if dt == "f32" else "f32"
    g.cast(g.cast(x, other), dt)
    g.cast(g.cast(x, "bool"), dt)
    return g


def g_binary_corners(dt):
    g = Graph("broadcast_" + dt, dt)
    pairs = [((5, 7), (5, 7)), ((5, 7), (7,)), ((5, 7), (5, 1)), ((5, 1), (1, 7)),
             ((5, 7), ()), ((), (5, 7)), ((1,), (5, 7)), ((3, 1, 7), (4, 1)),
             ((2, 3, 4, 5), (3, 1, 5)), ((1, 1), (1,)), ((2, 1, 4, 1), (1, 3, 1, 6))]
    for sa, sb in pairs:
        a = g.input(sa)
        for op in BINARY:
            if op == "div":
                b = g.input(sb, 0.5, 2)
            else:
                b = g.input(sb)
            g.binary(op, a, b)
    return g


def g_reduce(dt):
    g = Graph("reduce_" + dt, dt)
    for shape in [(17,), (5, 9), (3, 4, 5), (2, 3, 4, 5), ()]:
        x = g.input(shape)
        r = len(shape)
        for op in REDUCE:
            g.reduce(op, x)
            g.reduce(op, x, keepdims=True)
            for ax in range(-r, r):
                g.reduce(op, x, axis=ax, keepdims=(ax % 2 == 0))
    return g


def g_matmul(dt):
    g = Graph("matmul_" + dt, dt)
    for m, k, n in [(1, 1, 1), (3, 5, 7), (33, 65, 17), (64, 48, 32), (1, 100, 1)]:
        g.matmul(g.input((m, k)), g.input((k, n)))
    for b, m, k, n in [(1, 2, 3, 4), (3, 7, 5, 9), (4, 16, 31, 8)]:
        g.matmul(g.input((b, m, k)), g.input((b, k, n)))
    return g


def g_layout(dt):
    g = Graph("layout_" + dt, dt)
    x2 = g.input((5, 7))
    x3 = g.input((2, 3, 4))
    x4 = g.input((2, 3, 4, 5))
    x1 = g.input((6,))
    g.transpose(x2)
    g.transpose(x3)
    g.transpose(x4)
    g.transpose(x1)
    g.transpose(x2, (1, 0))
    g.transpose(x3, (2, 0, 1))
    g.transpose(x3, (-1, -3, -2))
    g.transpose(x4, (3, 1, 0, 2))
    g.reshape(x2, (35,))
    g.reshape(x2, (7, 5))
    g.reshape(x3, (4, -1))
    g.reshape(x4, (5, 4, 3, 2))
    g.reshape(x1, (1, 2, 3, 1))
    t = g.transpose(x3, (1, 2, 0))
    g.reshape(t, (12, 2))
    return g


def g_reduce_axes(dt):
    """Tuples of axes (contiguous or not, negative, all), min with NaN and
    prod of values near 1 (so that the product neither vanishes nor
    overflows and the check means something)."""
    g = Graph("reduce_axes_" + dt, dt)
    for shape in [(3, 4, 5), (2, 3, 4, 5), (7, 1, 33)]:
        x = g.input(shape)
        p = g.input(shape, 0.7, 1.4)
        r = len(shape)
        tuples = [(0, 1), (1, 2), (0, r - 1), (-1, -2), tuple(range(r)), (r - 1,)]
        if r == 4:
            tuples += [(0, 2), (1, 3), (0, 1, 3), (3, 0)]
        for ax in tuples:
            for op in ("sum", "max", "mean", "min"):
                g.reduce(op, x, ax, keepdims=len(ax) % 2 == 0)
            g.reduce("prod", p, ax, keepdims=len(ax) % 2 == 1)
        for ax in [None] + list(range(-r, r)):
            g.reduce("min", x, ax)
            g.reduce("prod", p, ax, keepdims=True)
    n = g.input((4, 6))
    v = g.env[n]
    v[1, 2], v[3, 0], v[3, 5] = np.nan, np.inf, -np.inf
    for op in ("min", "max", "prod", "sum"):
        g.reduce(op, n, 1)
        g.reduce(op, n, (0,))
        g.reduce(op, n)
    return g


def g_argreduce(dt):
    """argmax and argmin on every axis, with ties (values rounded to a
    coarse grid), NaNs (np.argmax: the first NaN) and last=True."""
    g = Graph("argreduce_" + dt, dt)
    for shape in [(17,), (5, 9), (3, 4, 5), (2, 3, 4, 5), (2, 1, 3, 2, 2, 1)]:
        x = g.input(shape)
        g.env[x][...] = np.round(g.env[x] * 2) / 2     # ties
        r = len(shape)
        for op in ("argmax", "argmin"):
            g.argreduce(op, x)
            for ax in range(-r, r):
                g.argreduce(op, x, ax, keepdims=ax % 2 == 0, last=ax % 3 == 0)
    n = g.input((4, 6))
    v = g.env[n]
    v[1, 2], v[1, 4], v[2, 0], v[3, 3] = np.nan, np.nan, np.inf, -np.inf
    for op in ("argmax", "argmin"):
        for last in (False, True):
            g.argreduce(op, n, 1, last=last)
            g.argreduce(op, n, 0, keepdims=True, last=last)
    return g


def g_matmul_numpy(dt):
    """numpy's matmul: 1-D operands on either side, batch dims that
    broadcast (1s stretched, missing ones added), ranks up to 8."""
    g = Graph("matmul_numpy_" + dt, dt)
    cases = [((5,), (5,)), ((7,), (7, 3)), ((4, 7), (7,)), ((6,), (2, 6, 3)),
             ((2, 3, 5, 6), (6,)), ((3, 4, 5), (5, 2)), ((4, 5), (3, 5, 2)),
             ((1, 4, 5), (3, 5, 2)), ((3, 1, 4, 5), (2, 5, 6)), ((2, 1, 3, 4), (1, 5, 4, 2)),
             ((2, 1, 1, 3, 1, 2, 3), (1, 2, 1, 1, 3, 4)),
             ((1, 2, 1, 2, 1, 2, 3, 4), (2, 1, 2, 1, 2, 1, 4, 3)), ((33, 17), (2, 17, 65))]
    for sa, sb in cases:
        g.matmul(g.input(sa), g.input(sb))
    return g


def g_layout_rank8(dt):
    """transpose and reshape (with -1) at ranks 5 to 8."""
    g = Graph("layout_rank8_" + dt, dt)
    rng = random.Random(8)
    for shape in [(2, 3, 1, 4, 5), (3, 1, 2, 2, 3, 2), (2, 2, 1, 3, 1, 2, 2),
                  (2, 1, 2, 3, 1, 2, 1, 3)]:
        x = g.input(shape)
        r = len(shape)
        g.transpose(x)
        g.transpose(x, tuple(reversed(range(r))))
        for _ in range(3):
            perm = list(range(r))
            rng.shuffle(perm)
            t = g.transpose(x, tuple(perm))
            n = int(np.prod(shape))
            g.reshape(t, (n,))
            g.reshape(t, (-1,) + shape[-2:])
        g.reshape(x, (1,) * (8 - r) + shape[::-1])
        g.reshape(x, shape[:2] + (-1, 1))
    y = g.input((2, 3, 4, 5))
    g.reshape(y, (1, 2, 1, 3, 1, 4, 1, 5))
    g.reshape(y, (5, 1, 4, 1, -1, 1, 2, 1))
    return g


def g_copy(dt):
    """The copy ops: concat (variadic, every axis), ONNX slices (negative
    indices, clamping, negative steps), pads (negative ones crop), gather
    with negative indices (i64 and i32 consts), expand; ragged sizes."""
    g = Graph("copy_" + dt, dt)
    a, b = g.input((5, 7)), g.input((5, 3))
    c = g.input((2, 7))
    x3 = g.input((3, 33, 4))
    g.op("concat", [a, b, a], "axis=1", fn=lambda *v: np.concatenate(v, axis=1))
    g.op("concat", [a, c], "axis=-2", fn=lambda *v: np.concatenate(v, axis=0))
    g.op("concat", [c], "axis=0", fn=lambda v: v.copy())
    g.op("concat", [x3, x3], "axis=2", fn=lambda *v: np.concatenate(v, axis=2))
    for attrs, fn in [
            ("starts=(1,) ends=(100,)", lambda x: x[1:100]),
            ("starts=(-1, 5) ends=(-100, -9223372036854775807) steps=(-2, -3)",
             lambda x: x[-1:-100:-2, 5::-3]),
            ("starts=(2,) ends=(-1,) axes=(-1,) steps=(2,)", lambda x: x[:, 2:-1:2]),
            ("starts=(9223372036854775807,) ends=(0,) axes=(1,) steps=(-1,)",
             lambda x: x[:, :0:-1])]:
        g.op("slice", [a], attrs, fn=fn)
    g.op("slice", [x3], "starts=(3, 1) ends=(30, 3) axes=(1, 2) steps=(4, 1)",
         fn=lambda x: x[:, 3:30:4, 1:3])
    g.op("pad", [a], "pads=(1, 2, 3, 0) value=-2.5",
         fn=lambda x: np.pad(x, ((1, 3), (2, 0)), constant_values=-2.5))
    g.op("pad", [a], "pads=(-1, 0, 2, -3)", fn=lambda x: np.pad(x[1:, :-3], ((0, 2), (0, 0))))
    g.op("pad", [x3], "pads=(0, 31, 1, 1, 2, 0)",
         fn=lambda x: np.pad(x, ((0, 1), (31, 2), (1, 0))))
    idx = g.ivalues((2, 3), "i64", [0, -1, 4, -5, 2, 2])
    g.op("gather", [a, idx], "axis=0", fn=lambda x, i: np.take(x, i, axis=0))
    i32 = g.ivalues((4,), "i32", [6, 0, -7, 3])
    g.op("gather", [a, i32], "axis=-1", fn=lambda x, i: np.take(x, i, axis=1))
    one = g.ivalues((), "i64", [-2])
    g.op("gather", [x3, one], "axis=1", fn=lambda x, i: np.take(x, i, axis=1))
    g.op("expand", [b], "shape=(2, 1, 3)", fn=lambda x: np.broadcast_to(x, (2, 5, 3)).copy())
    col = g.input((5, 1))
    g.op("expand", [col], "shape=(33,)", fn=lambda x: np.broadcast_to(x, (5, 33)).copy())
    return g


def g_mlp(dt):
    """The seed's scenario 1, untyped, with a splat and a softmax row."""
    g = Graph("mlp_" + dt, dt, typed=False)
    x = g.input((64, 48))
    w = g.input((48, 32), const=True)
    b = g.input((32,), const=True)
    h = g.unary("relu", g.binary("add", g.matmul(x, w), b))
    g.reduce("sum", h, axis=1, keepdims=True)
    m = g.reduce("max", h, axis=-1, keepdims=True)
    e = g.unary("exp", g.binary("sub", h, m))
    s = g.reduce("sum", e, axis=-1, keepdims=True)
    g.binary("div", e, s)
    g.binary("mul", h, g.splat((), 0.5))
    return g


# ---- conv2d and the pools: a direct loop over the window ------------------

def window_out(n, k, s, p0, p1, d, ceil_mode):
    """ONNX's (and PyTorch's) output size of one spatial dim."""
    span = n + p0 + p1 - (d * (k - 1) + 1)
    o = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (o - 1) * s >= n + p0:
        o -= 1               # the last window must start inside the input or left pad
    return o


def np_conv2d(x, w, b, strides, pads, dil, groups):
    """conv2d by its definition: for every output position and kernel tap,
    the channels of the group times the filters' taps, summed in f64."""
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    fg = f // groups
    oh = window_out(h, kh, strides[0], pads[0], pads[2], dil[0], False)
    ow = window_out(wd, kw, strides[1], pads[1], pads[3], dil[1], False)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    out = np.zeros((n, f, oh, ow))
    for oy in range(oh):
        for ox in range(ow):
            for i in range(kh):
                y = oy * strides[0] - pads[0] + i * dil[0]
                if not 0 <= y < h:
                    continue
                for j in range(kw):
                    xx = ox * strides[1] - pads[1] + j * dil[1]
                    if not 0 <= xx < wd:
                        continue
                    for gi in range(groups):
                        out[:, gi * fg:(gi + 1) * fg, oy, ox] += (
                            x64[:, gi * cg:(gi + 1) * cg, y, xx] @
                            w64[gi * fg:(gi + 1) * fg, :, i, j].T)
    if b is not None:
        out += b.astype(np.float64)[None, :, None, None]
    return out.astype(x.dtype)


def np_pool(x, op, kernel, strides, pads, dil, ceil_mode, count_include_pad):
    """max: the largest element of the window inside the input (padding is
    -inf); avg: their sum over the positions counted (inside the input, or
    with count_include_pad inside the padded input, never the overhang)."""
    n, c, h, wd = x.shape
    kh, kw = kernel
    oh = window_out(h, kh, strides[0], pads[0], pads[2], dil[0], ceil_mode)
    ow = window_out(wd, kw, strides[1], pads[1], pads[3], dil[1], ceil_mode)
    x64 = x.astype(np.float64)
    out = np.zeros((n, c, oh, ow))
    for oy in range(oh):
        for ox in range(ow):
            ys = [oy * strides[0] - pads[0] + i * dil[0] for i in range(kh)]
            xs = [ox * strides[1] - pads[1] + j * dil[1] for j in range(kw)]
            vals = [x64[:, :, y, xx] for y in ys for xx in xs if 0 <= y < h and 0 <= xx < wd]
            if op == "max":
                out[:, :, oy, ox] = np.max(np.stack(vals), axis=0) if vals else -np.inf
                continue
            if count_include_pad:
                cnt = (sum(-pads[0] <= y < h + pads[2] for y in ys) *
                       sum(-pads[1] <= xx < wd + pads[3] for xx in xs))
            else:
                cnt = len(vals)
            out[:, :, oy, ox] = (np.sum(np.stack(vals), axis=0) if vals else 0.0) / cnt
    return out.astype(x.dtype)


def tup(t):
    return "(" + ", ".join(str(v) for v in t) + ")"


def conv(g, x, w, b=None, strides=None, pads=None, dil=None, groups=1):
    attrs = []
    if strides:
        attrs.append("strides=" + tup(strides))
    if pads:
        attrs.append("pads=" + tup(pads))
    if dil:
        attrs.append("dilations=" + tup(dil))
    if groups != 1:
        attrs.append("groups=%d" % groups)
    args = [x, w] + ([b] if b else [])
    return g.op("conv2d", args, " ".join(attrs),
                fn=lambda xv, wv, bv=None: np_conv2d(
                    xv, wv, bv, strides or (1, 1), pads or (0, 0, 0, 0), dil or (1, 1), groups))


def pool(g, op, x, kernel, strides=None, pads=None, dil=None, ceil_mode=False, cip=False):
    attrs = ["kernel=" + tup(kernel)]
    if strides:
        attrs.append("strides=" + tup(strides))
    if pads:
        attrs.append("pads=" + tup(pads))
    if dil:
        attrs.append("dilations=" + tup(dil))
    if ceil_mode:
        attrs.append("ceil_mode=True")
    if cip:
        attrs.append("count_include_pad=True")
    return g.op(op + "_pool2d", [x], " ".join(attrs),
                fn=lambda xv: np_pool(xv, op, kernel, strides or (1, 1), pads or (0, 0, 0, 0),
                                      dil or (1, 1), ceil_mode, cip))


def g_window(dt):
    g = Graph("window_" + dt, dt)
    x = g.input((2, 3, 7, 9))
    conv(g, x, g.input((4, 3, 3, 3), const=True), g.input((4,), const=True))
    conv(g, x, g.input((2, 3, 1, 1)))
    x = g.input((1, 4, 8, 8))
    conv(g, x, g.input((6, 2, 3, 3)), strides=(2, 1), pads=(1, 0, 2, 1), groups=2)
    x = g.input((2, 5, 9, 7))
    conv(g, x, g.input((5, 1, 3, 3)), g.input((5,)), pads=(1, 1, 1, 1), dil=(2, 2), groups=5)
    conv(g, g.input((1, 2, 6, 6)), g.input((3, 2, 5, 5)), g.input((3,)), strides=(3, 3),
         pads=(2, 2, 2, 2))
    y = conv(g, g.input((1, 16, 13, 11)), g.input((33, 16, 3, 3)), g.input((33,)),
             pads=(1, 1, 1, 1), dil=(1, 2))
    conv(g, g.input((1, 1, 1, 1)), g.input((1, 1, 1, 1)))
    pool(g, "max", y, (3, 3), strides=(2, 2))
    pool(g, "max", y, (3, 3), strides=(2, 2), ceil_mode=True)
    pool(g, "avg", y, (3, 3), strides=(2, 2), ceil_mode=True)
    x = g.input((2, 3, 9, 9))
    for op in ("max", "avg"):
        pool(g, op, x, (3, 3), strides=(2, 2))
        pool(g, op, x, (2, 3), pads=(1, 1, 0, 1), dil=(2, 2))
        pool(g, op, x, (3, 2), strides=(2, 3), pads=(1, 0, 1, 1), ceil_mode=True)
        pool(g, op, x, (1, 1))
        pool(g, op, x, (9, 9))
    x6 = g.input((1, 2, 6, 6))
    x3 = g.input((1, 2, 3, 3))
    for cip in (False, True):
        # the ceil_mode overhang past the padded input is never counted
        pool(g, "avg", x6, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1), ceil_mode=True, cip=cip)
        pool(g, "avg", x, (3, 3), pads=(1, 1, 1, 1), cip=cip)
        # a last window past the input and its left padding is dropped
        pool(g, "avg", x3, (2, 2), strides=(2, 2), pads=(1, 1, 1, 1), ceil_mode=True,
             cip=cip)
    pool(g, "max", x3, (2, 2), strides=(2, 2), pads=(1, 1, 1, 1), ceil_mode=True)
    # long rows: the vector gathers of stride 2 and 3 and their ragged ends
    xl = g.input((1, 3, 21, 70))
    pool(g, "max", xl, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1))
    pool(g, "max", xl, (3, 3), strides=(2, 2), pads=(0, 0, 0, 1), ceil_mode=True)
    pool(g, "avg", xl, (2, 3), strides=(3, 3), pads=(1, 1, 0, 2))
    conv(g, xl, g.input((5, 3, 3, 3)), strides=(2, 2), pads=(1, 1, 1, 1))
    # -inf and NaN inside a window: max keeps the NaN, as numpy's max does
    s = g.input((1, 1, 4, 4))
    v = g.env[s]
    v[0, 0, 0, 0], v[0, 0, 2, 2] = -np.inf, np.nan
    pool(g, "max", s, (2, 2), strides=(2, 2))
    pool(g, "avg", s, (2, 2), strides=(2, 2))
    return g


DIMS = [1, 2, 3, 5, 7, 13, 17, 31, 33, 63, 65]


def g_random(dt, seed):
    """A random DAG with ragged sizes: each step applies an op to values
    already there, making operands it needs (broadcastable or matching)."""
    rng = random.Random(seed)
    g = Graph("dag%d_%s" % (seed, dt), dt, typed=rng.random() < 0.5)
    isint = dt in INTS
    unary, reduce_ = (UNARY_INT, REDUCE_INT) if isint else (UNARY, REDUCE)
    rank = rng.randint(1, 3)
    vals = [g.input(tuple(rng.choice(DIMS) for _ in range(rank)))]
    for _ in range(rng.randint(6, 14)):
        a = rng.choice(vals)
        sh = g.env[a].shape
        kind = rng.random()
        if kind < 0.25:
            op = rng.choice(unary)
            if op in ("log", "sqrt"):
                a = g.unary("abs", a)
            if op == "exp":
                a = g.unary("tanh", a)          # keep magnitudes sane
            v = g.unary(op, a)
        elif kind < 0.55:
            op = rng.choice(BINARY)
            # a broadcast partner: some dims set to 1, maybe leading ones dropped
            bs = [d if rng.random() < 0.6 else 1 for d in sh]
            bs = bs[rng.randint(0, len(bs)):] if rng.random() < 0.3 else bs
            if op == "div":
                b = g.input(tuple(bs), 0.5, 2, nonzero=True)
            else:
                same = [v for v in vals if g.env[v].shape == sh and v != a]
                b = rng.choice(same) if same and rng.random() < 0.5 else g.input(tuple(bs))
            v = g.binary(op, a, b) if rng.random() < 0.5 or op == "div" else g.binary(op, b, a)
        elif kind < 0.7 and len(sh) >= 1:
            ax = rng.randint(-len(sh), len(sh) - 1) if rng.random() < 0.8 else None
            v = g.reduce(rng.choice(reduce_), a, ax, rng.random() < 0.5)
        elif kind < 0.85 and len(sh) in (2, 3):
            k = sh[-1]
            n = rng.choice(DIMS)
            bsh = (sh[0], k, n) if len(sh) == 3 else (k, n)
            v = g.matmul(a, g.input(bsh))
        elif len(sh) >= 2 and rng.random() < 0.5:
            perm = list(range(len(sh)))
            rng.shuffle(perm)
            v = g.transpose(a, perm if rng.random() < 0.5 else None)
        elif len(sh) >= 1:
            n = int(np.prod(sh))
            shapes = [(n,), (1, n), (n, 1)]
            if len(sh) >= 2:
                shapes.append((sh[0], -1))
            v = g.reshape(a, rng.choice(shapes))
        else:
            v = g.unary("neg", a)
        vals.append(v)
    return g


def g_int(dt):
    """The v1 ops that take integers, in i32 or i64: wrapping at the type's
    ends, C's truncating division (INT_MIN / -1 included), sums in the
    type, max from the type's minimum, matmul, the layout ops, and argmax
    and argmin with ties."""
    g = Graph("int_" + dt, dt)
    x = g.input((7, 13))
    for op in UNARY_INT:
        g.unary(op, x)
    for sa, sb in [((5, 7), (5, 7)), ((5, 7), (7,)), ((5, 1), (1, 7)), ((5, 7), ()),
                   ((2, 1, 4, 1), (1, 3, 1, 6))]:
        a = g.input(sa)
        for op in BINARY:
            g.binary(op, a, g.input(sb, nonzero=op == "div"))
    for shape in [(17,), (5, 9), (3, 4, 5)]:
        x = g.input(shape)
        for op in REDUCE_INT:
            g.reduce(op, x)
            for ax in range(-len(shape), len(shape)):
                g.reduce(op, x, axis=ax, keepdims=(ax % 2 == 0))
    for m, k, n in [(1, 1, 1), (3, 5, 7), (33, 17, 9)]:
        g.matmul(g.input((m, k)), g.input((k, n)))
    g.matmul(g.input((3, 7, 5)), g.input((3, 5, 4)))
    # argmax and argmin of integers, compared exactly: few distinct
    # values, so that ties (which last= decides) are common
    for shape in [(17,), (5, 9), (3, 4, 5), (2, 1, 3, 2, 2)]:
        x = g.input(shape)
        g.env[x][...] = g.env[x] % 3
        r = len(shape)
        for op in ("argmax", "argmin"):
            g.argreduce(op, x)
            for ax in range(-r, r):
                g.argreduce(op, x, ax, keepdims=ax % 2 == 0, last=ax % 3 != 0)
    return g


def int_op(f, dt):
    """f on Python's integers element by element, the result wrapped into
    dt (the exact semantics of DESIGN section 12, where numpy has none:
    negative integer powers, C's fmod at INT_MIN by -1)."""
    bits = 32 if dt == "i32" else 64

    def wrap(v):
        v &= (1 << bits) - 1
        return v - (1 << bits) if v >> (bits - 1) else v

    def run(a, b):
        a, b = np.broadcast_arrays(a, b)
        out = [wrap(f(int(x), int(y))) for x, y in zip(a.ravel(), b.ravel())]
        return np.array(out, dtype=NP[dt]).reshape(a.shape)
    return run


def int_pow(a, b):
    if b < 0:
        return 1 if a == 1 else (1 if b % 2 == 0 else -1) if a == -1 else 0
    return pow(a, b, 1 << 64)


def int_fmod(a, b):
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def g_elem_int(dt):
    """Issue 16's elementwise ops on integers: sign, pow (wrapping, negative
    exponents), mod and fmod of every sign combination, the compares and
    bool logic read back through cast, where, and casts through bool."""
    g = Graph("elem_int_" + dt, dt)
    x = g.input((7, 13))
    y = g.input((13,), nonzero=True)
    z = g.input((7, 1), nonzero=True)
    g.unary("sign", x)
    for op, f in (("mod", lambda a, b: a % b), ("fmod", int_fmod)):
        g.op(op, [x, y], fn=int_op(f, dt))
        g.op(op, [y, z], fn=int_op(f, dt))
    base = g.input((5, 1))
    g.env[base][:, 0] = [-2, -1, 0, 1, 2]
    expo = g.input((7,))
    g.env[expo][:] = [-3, -2, -1, 0, 1, 2, 3]
    g.op("pow", [base, expo], fn=int_op(int_pow, dt))
    g.op("pow", [x, g.splat((), 3)], fn=int_op(int_pow, dt))
    conds = []
    for op in COMPARE:
        c = g.binary(op, x, y)
        g.cast(c, dt)
        conds.append(c)
    for i, op in enumerate(LOGIC):
        g.cast(g.binary(op, conds[i], conds[i + 1]), dt)
    g.cast(g.op("not", [conds[0]], fn=np.logical_not), dt)
    g.where(conds[1], x, y)
    g.cast(g.cast(x, "bool"), dt)
    # through the other integer type (the low bits) and through f32
    # (rounded once, saturated back): mixed kernels on the tile engine
    g.cast(g.cast(x, "i64" if dt == "i32" else "i32"), dt)
    xf = g.cast(x, "f32")
    g.op("cast", [xf], "to=" + dt, fn=lambda a: np_f2i(a, dt))
    return g


def np_f2i(x, to):
    """cast from a float to integer type `to` (DESIGN section 12, where
    numpy's astype is undefined): toward zero, saturated, NaN to 0."""
    bits = np.iinfo(NP[to]).bits
    t = np.trunc(x.astype(np.float64))
    t = np.where(np.isnan(t), 0.0, np.clip(t, -2.0 ** (bits - 1), 2.0 ** (bits - 1)))
    top = t >= 2.0 ** (bits - 1)         # the maximum is no double in i64
    r = np.where(top, 0.0, t).astype(np.int64)
    return np.where(top, np.iinfo(NP[to]).max, r).astype(NP[to])


def g_mixed(dt, fused=False):
    """Kernels of several element types in a float graph (the tile
    engine's mixed kernels, tile_mixed.c): casts to i32 and i64 of
    values past both ranges, NaN and infinities; i32 to i64 and back (the
    low bits); integer sums; an integer compare choosing floats and a
    float compare choosing integers; integers and bools back to floats.
    Every value is returned, or (fused) the two that end the chains, so
    that fuse makes one kernel of them."""
    g = Graph("mixed_%s%s" % ("fused_" if fused else "", dt), dt)
    g.mixed = True
    x = g.input((7, 13), lo=-3e9, hi=3e9)
    g.env[x][0, :5] = [np.nan, np.inf, -np.inf, 2.5, -2.5]
    y = g.input((13,), lo=-40.0, hi=40.0)
    cast = {}
    for to in INTS:
        for v in (x, y):
            cast[v, to] = g.op("cast", [v], "to=" + to, fn=lambda a, to=to: np_f2i(a, to))
    wl = g.cast(cast[x, "i32"], "i64")
    wi = g.cast(cast[x, "i64"], "i32")
    s = g.binary("add", wl, cast[y, "i64"])
    c = g.binary("greater", cast[x, "i64"], cast[y, "i64"])
    w = g.where(c, x, y)
    d = g.binary("less", x, y)
    v = g.where(d, wi, cast[y, "i32"])
    f = g.cast(s, dt)
    r = g.cast(v, dt)
    m = g.binary("mul", g.cast(c, dt), x)
    t = g.binary("add", g.binary("add", w, f), g.binary("add", r, m))
    n = g.reduce("sum", g.binary("mul", s, cast[y, "i64"]), axis=1)
    if fused:
        g.computed = [t, n]
    return g


# ---- the random generator of docs/run.md ---------------------------------

M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def fnv1a64(s):
    h = 0xcbf29ce484222325
    for c in s.encode():
        h = ((h ^ c) * 0x100000001b3) & M64
    return h


def aicm_random(name, seed, shape, dt):
    st = ((seed * GAMMA) & M64) ^ fnv1a64(name)
    out = []
    for _ in range(int(np.prod(shape, dtype=np.int64))):
        st = (st + GAMMA) & M64
        z = st
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        z ^= z >> 31
        if dt in INTS:
            out.append(z >> 61)                 # uniform in [0, 8)
        elif dt == "bool":
            out.append(z >> 63)                 # a fair coin
        elif dt == "f64":
            out.append((z >> 11) * 2.0 ** -52 - 1.0)
        else:
            out.append((z >> 40) * 2.0 ** -23 - 1.0)
    return np.array(out, dtype=NP[dt]).reshape(shape)


def check_generator(tool, tmp):
    """aicm's random inputs and consts must be the documented formula's."""
    fails = []
    src = ("graph {\n  %x = input() : (5, 7)\n  %w = const() : (3, 2, 2) f32\n"
           "  %my.name_2 = input() : ()\n  %s = const() : (4,) value=-0.25\n"
           "  %k = input() : (9, 4) i32\n  %l = const() : (30,) i64\n"
           "  %b = input() : (3, 5) bool\n"
           "  %iv = const() : (3,) i64 values=(-9223372036854775808, 9007199254740993, 5)\n"
           "  return %x, %w, %my.name_2, %s, %k, %l, %b, %iv\n}\n")
    path = os.path.join(tmp, "gen.aicm")
    with open(path, "w") as f:
        f.write(src)
    for seed in (0, 1, 12345678901234567890):
        out = os.path.join(tmp, "gen%d" % (seed % 1000))
        r = subprocess.run([tool, path, "--seed=%d" % seed, "--output-dir", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            return ["generator: aicm-run exit %d: %s" % (r.returncode, r.stderr)]
        want = {"x": aicm_random("x", seed, (5, 7), "f64"),
                "w": aicm_random("w", seed, (3, 2, 2), "f32"),
                "my.name_2": aicm_random("my.name_2", seed, (), "f64"),
                "s": np.full((4,), -0.25),
                "k": aicm_random("k", seed, (9, 4), "i32"),
                "l": aicm_random("l", seed, (30,), "i64"),
                "b": aicm_random("b", seed, (3, 5), "bool"),
                "iv": np.array([-2 ** 63, 2 ** 53 + 1, 5], dtype=np.int64)}
        for name, v in want.items():
            got = np.load(os.path.join(out, name + ".npy"))
            if got.dtype != v.dtype or got.shape != v.shape or not np.array_equal(got, v):
                fails.append("generator: seed %d %%%s differs from docs/run.md's formula"
                             % (seed, name))
            lo, hi = (0, 8) if got.dtype.kind in "ib" else (-1, 1)
            if name != "iv" and (np.any(got < lo) or np.any(got >= hi)):
                fails.append("generator: %%%s leaves [%d, %d)" % (name, lo, hi))
    return fails


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    verbose, keep = "-v" in sys.argv, "-k" in sys.argv
    build = args[0] if args else "build"
    tool = os.path.join(build, "aicm-run")
    if not os.access(tool, os.X_OK):
        print("numpy_check: no %s; build first" % tool)
        return 2
    # every graph through both engines: the reference interpreter (the
    # oracle) and the tile executor (the default, lowered eagerly)
    engines = ["reference", "tile"]
    graphs = []
    for dt in ("f64", "f32"):
        graphs += [g_unary(dt), g_specials(dt), g_elem(dt), g_binary_corners(dt), g_reduce(dt),
                   g_matmul(dt), g_layout(dt), g_mlp(dt), g_reduce_axes(dt),
                   g_argreduce(dt), g_matmul_numpy(dt), g_layout_rank8(dt), g_copy(dt)]
        graphs += [g_random(dt, s) for s in range(12)]
        graphs += [g_window(dt)]
    graphs += [g_mixed(dt, fused) for dt in ("f64", "f32") for fused in (False, True)]
    for dt in INTS:
        graphs += [g_int(dt), g_elem_int(dt), g_layout(dt)] + [g_random(dt, s) for s in range(8)]
    graphs.append(g_layout("bool"))
    tmp = tempfile.mkdtemp(prefix="aicm-numpy.")
    fails = check_generator(tool, tmp)
    ops = set()
    for g in graphs:
        base = g.name
        for eng in g.engines or engines:
            g.name = "%s.%s" % (base, eng)
            f = run_graph(tool, tmp, g, extra=["--engine=" + eng], verbose=verbose)
            print("%s %s (%d values)" % ("FAIL" if f else "ok  ", g.name, len(g.computed)))
            fails += f
        ops |= {l.split("= ")[1].split("(")[0] for l in g.lines}
    # the mlp again through a pipeline and --check: the same numbers
    g = g_mlp("f64")
    g.name = "mlp_check"
    fails += run_graph(tool, tmp, g, extra=["--pass=shape-infer,fuse", "--check"])
    # the mixed kernels fused: one kernel of several types
    for dt in ("f64", "f32"):
        g = g_mixed(dt, fused=True)
        g.name += ".fused"
        fails += run_graph(tool, tmp, g, extra=["--pass=shape-infer,fuse"])
    missing = set(table_ops()) - ops
    if missing:
        fails.append("ops never exercised: %s" % ", ".join(sorted(missing)))
    for f in fails:
        print("  " + f)
    print("numpy_check: %d graphs x %d engines (+ generator, --check), %d failure%s"
          % (len(graphs), len(engines), len(fails), "" if len(fails) == 1 else "s"))
    if keep:
        print("numpy_check: kept %s" % tmp)
    else:
        shutil.rmtree(tmp)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
