#!/usr/bin/python3
"""numpy_check.py: aicm-run's reference interpreter against numpy itself.

    /usr/bin/python3 tests/numpy_check.py BUILD_DIR [-v] [-k]

Builds graphs -- every op in f32 and f64, the broadcasting corners, the
reduction axes and keepdims, batched matmul, transposes and reshapes, and
random DAGs with ragged sizes from a seeded generator -- writes each graph's
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

TOL = {"f64": 1e-12, "f32": 1e-5}
NP = {"f64": np.float64, "f32": np.float32}
UNARY = ["relu", "neg", "exp", "log", "sqrt", "tanh", "sigmoid", "abs", "erf", "reciprocal",
         "sin"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum"]
REDUCE = ["sum", "max", "mean"]


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
    }[op]()


def np_binary(op, a, b):
    return {
        "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
        "maximum": np.maximum, "minimum": np.minimum,
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

    def fresh(self, base):
        self.n += 1
        return "%s%d" % (base, self.n)

    def _type(self, shape):
        t = ": " + ("()" if len(shape) == 0 else shape_str(shape))
        return t + (" f32" if self.dt == "f32" else "")

    def input(self, shape, lo=-1.0, hi=1.0, rng=None, const=False):
        name = self.fresh("c" if const else "x")
        rng = rng or np.random.default_rng(self.n * 7919 + len(self.name))
        v = rng.uniform(lo, hi, size=shape).astype(NP[self.dt])
        self.env[name] = v
        self.inputs[name] = v
        self.lines.append("  %%%s = %s() %s" % (name, "const" if const else "input",
                                               self._type(shape)))
        return name

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

    def op(self, op, args, attrs="", fn=None):
        name = self.fresh(op[:2])
        vals = [self.env[a] for a in args]
        v = np.asarray(fn(*vals))
        assert v.dtype == NP[self.dt], (op, v.dtype)
        self.env[name] = v
        self.computed.append(name)
        t = " " + self._type(v.shape) if self.typed else ""
        self.lines.append("  %%%s = %s(%s)%s%s" % (
            name, op, ", ".join("%" + a for a in args), t, " " + attrs if attrs else ""))
        return name

    def unary(self, op, a):
        return self.op(op, [a], fn=lambda x: np_unary(op, x))

    def binary(self, op, a, b):
        return self.op(op, [a, b], fn=lambda x, y: np_binary(op, x, y))

    def reduce(self, op, a, axis=None, keepdims=False):
        attrs = []
        if axis is not None:
            attrs.append("axis=%d" % axis)
        if keepdims:
            attrs.append("keepdims=True")
        f = {"sum": np.sum, "max": np.max, "mean": np.mean}[op]
        return self.op(op, [a], " ".join(attrs),
                       fn=lambda x: f(x, axis=axis, keepdims=keepdims))

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
    if a.shape != b.shape or a.dtype != b.dtype:
        return float("inf"), "shape/type %s %s vs %s %s" % (a.shape, a.dtype, b.shape, b.dtype)
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


DIMS = [1, 2, 3, 5, 7, 13, 17, 31, 33, 63, 65]


def g_random(dt, seed):
    """A random DAG with ragged sizes: each step applies an op to values
    already there, making operands it needs (broadcastable or matching)."""
    rng = random.Random(seed)
    g = Graph("dag%d_%s" % (seed, dt), dt, typed=rng.random() < 0.5)
    rank = rng.randint(1, 3)
    vals = [g.input(tuple(rng.choice(DIMS) for _ in range(rank)))]
    for _ in range(rng.randint(6, 14)):
        a = rng.choice(vals)
        sh = g.env[a].shape
        kind = rng.random()
        if kind < 0.25:
            op = rng.choice(UNARY)
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
                b = g.input(tuple(bs), 0.5, 2)
            else:
                same = [v for v in vals if g.env[v].shape == sh and v != a]
                b = rng.choice(same) if same and rng.random() < 0.5 else g.input(tuple(bs))
            v = g.binary(op, a, b) if rng.random() < 0.5 or op == "div" else g.binary(op, b, a)
        elif kind < 0.7 and len(sh) >= 1:
            ax = rng.randint(-len(sh), len(sh) - 1) if rng.random() < 0.8 else None
            v = g.reduce(rng.choice(REDUCE), a, ax, rng.random() < 0.5)
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
        if dt == "f64":
            out.append((z >> 11) * 2.0 ** -52 - 1.0)
        else:
            out.append((z >> 40) * 2.0 ** -23 - 1.0)
    return np.array(out, dtype=NP[dt]).reshape(shape)


def check_generator(tool, tmp):
    """aicm's random inputs and consts must be the documented formula's."""
    fails = []
    src = ("graph {\n  %x = input() : (5, 7)\n  %w = const() : (3, 2, 2) f32\n"
           "  %my.name_2 = input() : ()\n  %s = const() : (4,) value=-0.25\n"
           "  return %x, %w, %my.name_2, %s\n}\n")
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
                "s": np.full((4,), -0.25)}
        for name, v in want.items():
            got = np.load(os.path.join(out, name + ".npy"))
            if got.dtype != v.dtype or got.shape != v.shape or not np.array_equal(got, v):
                fails.append("generator: seed %d %%%s differs from docs/run.md's formula"
                             % (seed, name))
            if np.any(got < -1) or np.any(got >= 1):
                fails.append("generator: %%%s leaves [-1, 1)" % name)
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
        graphs += [g_unary(dt), g_specials(dt), g_binary_corners(dt), g_reduce(dt),
                   g_matmul(dt), g_layout(dt), g_mlp(dt), g_copy(dt)]
        graphs += [g_random(dt, s) for s in range(12)]
    tmp = tempfile.mkdtemp(prefix="aicm-numpy.")
    fails = check_generator(tool, tmp)
    ops = set()
    for g in graphs:
        base = g.name
        for eng in engines:
            g.name = "%s.%s" % (base, eng)
            f = run_graph(tool, tmp, g, extra=["--engine=" + eng], verbose=verbose)
            print("%s %s (%d values)" % ("FAIL" if f else "ok  ", g.name, len(g.computed)))
            fails += f
        ops |= {l.split("= ")[1].split("(")[0] for l in g.lines}
    # the mlp again through a pipeline and --check: the same numbers
    g = g_mlp("f64")
    g.name = "mlp_check"
    fails += run_graph(tool, tmp, g, extra=["--pass=shape-infer,fuse", "--check"])
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
