#!/usr/bin/python3
"""triton_check.py: the Triton text of aicm-opt --emit=triton, compiled, checked
against Triton's API and run on a numpy model of triton.language.

    /usr/bin/python3 tests/triton_check.py BUILD_DIR [CASE.aicm...]

Triton cannot run here (no GPU, not installed), so three checks stand in for
it, on each golden of testdata/triton/ whose RUN line emits Triton (its .out
is the module):
1. it compiles as Python (py_compile);
2. every tl.* and libdevice.* name it uses is one of Triton's language API
   (the list below, from triton-lang.org's triton.language reference), the
   keyword arguments of loads, stores, atomics, reductions and dots are the
   ones Triton takes, and every launch passes only block sizes, num_warps
   and num_stages;
3. it runs: a small numpy model of the subset of triton.language the
   emitter writes (tl.load/tl.store with masks and other=, tl.dot, the
   reductions, tl.where, the math functions, atomics) executes every kernel
   program by program over its grid, with Triton's own rules checked where
   they are cheap to check (tl.arange and tile dims powers of two, tl.dot on
   rank-2 tiles of at least 16 a side, a mask no larger than its pointer
   block), every unmasked address checked against its tensor, and masked-off
   lanes without other= filled with NaN (or a poison integer) so that a
   value that leaks into a result shows.  The outputs are compared with
   aicm-run --engine=reference on the same random inputs (f64 within 1e-9,
   f32 1e-4 of the largest magnitude, integers and bools exactly).
The model runs programs one after another; Triton runs them in parallel,
which changes only the order of atomics.  With no CASE given, four mutants
of the goldens (a mask, a tl.where or an other= removed or changed) must be
rejected too: the check is known to be able to fail.
"""
import ast
import functools
import itertools
import math
import os
import py_compile
import re
import subprocess
import sys
import tempfile
import types

import numpy as np

# The names of triton.language (and libdevice) the emitted text may use:
# each is documented at triton-lang.org/main/python-api/triton.language.html.
TL_API = {
    "program_id", "arange", "load", "store", "full", "zeros", "dot", "sum", "max", "min",
    "reduce", "where", "maximum", "minimum", "exp", "log", "sqrt", "sin", "cos", "abs",
    "erf", "floor", "ceil", "sigmoid", "trans", "permute", "reshape", "broadcast_to", "atomic_add",
    "atomic_max", "static_range", "device_assert", "constexpr", "PropagateNan",
    "float64", "float32", "int32", "int64", "int1",
}
LIBDEVICE_API = {"tanh", "rint", "pow", "fmod"}
# keyword arguments each call may take (Triton's signatures)
KWARGS = {
    "load": {"mask", "other"}, "store": {"mask"}, "atomic_add": {"mask"},
    "atomic_max": {"mask"}, "sum": {"keep_dims"}, "max": {"keep_dims"},
    "min": {"keep_dims"}, "reduce": {"keep_dims"}, "dot": {"input_precision", "out_dtype"},
    "maximum": {"propagate_nan"}, "minimum": {"propagate_nan"},
}
LAUNCH_KWARGS = {"BM", "BN", "BK", "num_warps", "num_stages"}


def api_errors(tree):
    """Names and arguments that Triton does not have, as messages."""
    errs = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "tl" and node.attr not in TL_API:
                errs.append("line %d: 'tl.%s' is not in triton.language" % (node.lineno, node.attr))
            if node.value.id == "libdevice" and node.attr not in LIBDEVICE_API:
                errs.append("line %d: 'libdevice.%s' is not a libdevice function" %
                            (node.lineno, node.attr))
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "tl":
                allowed = KWARGS.get(f.attr, set())
                for kw in node.keywords:
                    if kw.arg not in allowed:
                        errs.append("line %d: tl.%s takes no keyword '%s'" %
                                    (node.lineno, f.attr, kw.arg))
                if f.attr == "load" and any(k.arg == "other" for k in node.keywords) and \
                        not any(k.arg == "mask" for k in node.keywords):
                    errs.append("line %d: tl.load with other= but no mask=" % node.lineno)
                if f.attr == "arange" and len(node.args) != 2:
                    errs.append("line %d: tl.arange takes (start, end)" % node.lineno)
            if isinstance(f, ast.Subscript):         # kernel[grid](...)
                for kw in node.keywords:
                    if kw.arg not in LAUNCH_KWARGS:
                        errs.append("line %d: a launch passes '%s'" % (node.lineno, kw.arg))
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and any(
                isinstance(d, ast.Attribute) and d.attr == "jit" for d in fn.decorator_list):
            for a in fn.args.args:
                if a.arg in ("BM", "BN", "BK") and not (
                        isinstance(a.annotation, ast.Attribute) and a.annotation.attr == "constexpr"):
                    errs.append("kernel '%s': block size '%s' is not a tl.constexpr" %
                                (fn.name, a.arg))
    return errs


# ---- a numpy model of triton.language --------------------------------------

class ModelError(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise ModelError(msg)


class T(np.ndarray):
    """A tile: a numpy array with Triton's .to() and C integer division."""

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        return np.asarray(arr).view(T)

    def to(self, dt):
        return tile(np.asarray(self).astype(dt.np))

    def __floordiv__(self, o):
        a, b = np.asarray(self), np.asarray(o)
        if a.dtype.kind in "iub" and b.dtype.kind in "iub":
            with np.errstate(all="ignore"):
                q = np.where(b == 0, 0, np.abs(a) // np.where(b == 0, 1, np.abs(b)))
                return tile(np.where((a < 0) != (b < 0), -q, q).astype(np.result_type(a, b)))
        return tile(a // b)

    def __rfloordiv__(self, o):
        return tile(np.asarray(o)).__floordiv__(self)

    def __mod__(self, o):
        a, b = np.asarray(self), np.asarray(o)
        if a.dtype.kind in "iu" and b.dtype.kind in "iu":
            return tile(a - (tile(a) // b) * b)
        return tile(np.fmod(a, b))


def tile(a):
    return np.asarray(a).view(T)


class Ptr:
    """A block of pointers: a tensor's flat buffer and element offsets."""

    def __init__(self, buf, off):
        self.buf, self.off = buf, np.asarray(off, dtype=np.int64)

    def __add__(self, o):
        return Ptr(self.buf, self.off + np.asarray(o, dtype=np.int64))

    __radd__ = __add__


class DType:
    def __init__(self, name, npt):
        self.name, self.np = name, npt


state = {"pid": (0, 0, 0)}


def _pow2(n):
    return n >= 1 and n & (n - 1) == 0


def _addresses(ptr, mask):
    need(isinstance(ptr, Ptr), "a load or store through something that is not a pointer")
    off = ptr.off
    if mask is None:
        m = np.ones(off.shape, dtype=bool)
    else:
        m = np.asarray(mask, dtype=bool)
        need(np.broadcast_shapes(m.shape, off.shape) == off.shape,
             "mask of shape %s is larger than its pointer block %s" % (m.shape, off.shape))
        m = np.broadcast_to(m, off.shape)
    live = off[m]
    if live.size and (live.min() < 0 or live.max() >= ptr.buf.size):
        raise ModelError("an unmasked lane reads or writes outside its tensor (offset %d, "
                         "size %d)" % (live.min() if live.min() < 0 else live.max(),
                                       ptr.buf.size))
    return off, m


def tl_load(ptr, mask=None, other=None):
    off, m = _addresses(ptr, mask)
    dt = ptr.buf.dtype
    if other is None:
        fill = np.nan if dt.kind == "f" else (True if dt.kind == "b" else 0x5A5A5A5)
        res = np.full(off.shape, fill).astype(dt)
    else:
        res = np.broadcast_to(np.asarray(other).astype(dt), off.shape).copy()
    res[m] = ptr.buf[off[m]]
    return tile(res)


def tl_store(ptr, val, mask=None):
    off, m = _addresses(ptr, mask)
    v = np.broadcast_to(np.asarray(val), off.shape)
    need(v.shape == off.shape, "a stored value of shape %s for pointers %s" % (v.shape, off.shape))
    ptr.buf[off[m]] = v[m].astype(ptr.buf.dtype)


def tl_atomic(op):
    def f(ptr, val, mask=None):
        off, m = _addresses(ptr, mask)
        v = np.broadcast_to(np.asarray(val), off.shape)
        op.at(ptr.buf, off[m], v[m].astype(ptr.buf.dtype))
    return f


def tl_arange(start, end):
    need(_pow2(end - start), "tl.arange(%d, %d): not a power of two" % (start, end))
    return tile(np.arange(start, end, dtype=np.int32))


def tl_full(shape, value, dt):
    shape = tuple(shape)
    need(all(_pow2(d) for d in shape), "a tile of shape %s: not powers of two" % (shape,))
    return tile(np.full(shape, value).astype(dt.np))


def tl_dot(a, b, input_precision=None, out_dtype=None):
    a, b = np.asarray(a), np.asarray(b)
    need(a.ndim == 2 and b.ndim == 2 and min(a.shape + b.shape) >= 16,
         "tl.dot of %s and %s: Triton takes rank-2 tiles of at least 16" % (a.shape, b.shape))
    need(a.shape[1] == b.shape[0], "tl.dot of %s and %s" % (a.shape, b.shape))
    t = out_dtype.np if out_dtype else np.float32
    return tile(np.matmul(a.astype(t), b.astype(t)))


def _reducer(fn):
    def r(x, axis=None, keep_dims=False):
        x = np.asarray(x)
        return tile(np.asarray(fn(x, axis=axis, keepdims=keep_dims)).astype(x.dtype))
    return r


def tl_reduce(x, axis, combine, keep_dims=False):
    x = np.asarray(x)
    axes = range(x.ndim) if axis is None else [axis]
    out = x
    for ax in sorted(axes, reverse=True):
        out = functools.reduce(lambda a, b: np.asarray(combine(a, b)),
                               [np.take(out, i, axis=ax) for i in range(out.shape[ax])])
        if keep_dims:
            out = np.expand_dims(out, ax)
    return tile(np.asarray(out).astype(x.dtype))


def tl_device_assert(cond, msg=""):
    need(bool(np.all(np.asarray(cond))), "device_assert: %s" % msg)


def make_tl():
    tl = types.ModuleType("triton.language")
    tl.float64 = DType("float64", np.float64)
    tl.float32 = DType("float32", np.float32)
    tl.int32 = DType("int32", np.int32)
    tl.int64 = DType("int64", np.int64)
    tl.int1 = DType("int1", np.bool_)
    tl.constexpr = type("constexpr", (), {})
    tl.PropagateNan = types.SimpleNamespace(ALL="all", NONE="none")
    tl.program_id = lambda axis: state["pid"][axis]
    tl.arange = tl_arange
    tl.load = tl_load
    tl.store = tl_store
    tl.atomic_add = tl_atomic(np.add)
    tl.atomic_max = tl_atomic(np.maximum)
    tl.full = tl_full
    tl.zeros = lambda shape, dt: tl_full(shape, 0, dt)
    tl.dot = tl_dot
    tl.sum = _reducer(np.sum)
    tl.max = _reducer(np.max)
    tl.min = _reducer(np.min)
    tl.reduce = tl_reduce
    tl.where = lambda c, a, b: tile(np.where(np.asarray(c, dtype=bool), a, b))
    tl.maximum = lambda a, b, propagate_nan=None: tile(np.maximum(a, b))
    tl.minimum = lambda a, b, propagate_nan=None: tile(np.minimum(a, b))
    for name in ("exp", "log", "sqrt", "sin", "cos", "abs", "floor", "ceil"):
        setattr(tl, name, (lambda f: lambda x: tile(f(np.asarray(x))))(getattr(np, name)))
    verf = np.vectorize(math.erf)
    tl.erf = lambda x: tile(verf(np.asarray(x)).astype(np.asarray(x).dtype))
    tl.sigmoid = lambda x: tile(1 / (1 + np.exp(-np.asarray(x))))
    tl.trans = lambda x: tile(np.asarray(x).T.copy())
    tl.permute = lambda x, dims: tile(np.transpose(np.asarray(x), dims).copy())
    tl.reshape = lambda x, shape: tile(np.reshape(np.asarray(x), tuple(shape)).copy())
    tl.broadcast_to = lambda x, shape: tile(np.broadcast_to(np.asarray(x), tuple(shape)).copy())
    tl.static_range = range
    tl.device_assert = tl_device_assert
    return tl


class Kernel:
    """@triton.jit: kernel[grid](*args, **constexprs) runs every program."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *a):
        return self.fn(*a)

    def __getitem__(self, grid):
        def launch(*args, num_warps=4, num_stages=2, **consts):
            need(isinstance(num_warps, int) and isinstance(num_stages, int), "num_warps/num_stages")
            ptrs = [Ptr(a.detach().numpy().reshape(-1), 0) for a in args]
            g = tuple(grid) + (1,) * (3 - len(grid))
            for pid in itertools.product(range(g[0]), range(g[1]), range(g[2])):
                state["pid"] = pid
                with np.errstate(all="ignore"):
                    self.fn(*ptrs, **consts)
        return launch


def install_model():
    tl = make_tl()
    triton = types.ModuleType("triton")
    triton.jit = Kernel
    triton.language = tl
    extra = types.ModuleType("triton.language.extra")
    libdevice = types.ModuleType("triton.language.extra.libdevice")
    libdevice.tanh = lambda x: tile(np.tanh(np.asarray(x)))
    libdevice.rint = lambda x: tile(np.rint(np.asarray(x)))
    libdevice.pow = lambda a, b: tile(np.power(np.asarray(a), np.asarray(b)))
    libdevice.fmod = lambda a, b: tile(np.fmod(np.asarray(a), np.asarray(b)))
    extra.libdevice = libdevice
    tl.extra = extra
    sys.modules.update({"triton": triton, "triton.language": tl,
                        "triton.language.extra": extra,
                        "triton.language.extra.libdevice": libdevice})


# ---- one case --------------------------------------------------------------

DT = {"torch.float64": np.float64, "torch.float32": np.float32, "torch.int32": np.int32,
      "torch.int64": np.int64, "torch.bool": np.bool_}


def run_case(build, case, text, tmp):
    """Runs the module text on random inputs, against the reference."""
    import torch
    params = re.findall(r"^    assert tuple\((\w+)\.shape\) == (\([0-9, ]*\)) and \w+\.dtype == "
                        r"(torch\.\w+)", text, re.M)
    ret = re.findall(r"^    return (.*)$", text, re.M)[-1]    # run()'s, the last
    outs = [o.strip() for o in ret.split(",")] if ret != "None" else []
    rng = np.random.default_rng(0)
    inputs, args = [], []
    for name, shape, dt in params:
        shape = ast.literal_eval(shape)
        npt = DT[dt]
        if npt == np.bool_:
            a = rng.random(shape) < 0.8
        elif np.issubdtype(npt, np.integer):
            a = rng.integers(1, 5, size=shape).astype(npt)
        else:
            a = rng.standard_normal(shape).astype(npt)
        path = os.path.join(tmp, name + ".npy")
        np.save(path, a)
        inputs.append(torch.from_numpy(a.copy()))
        args += ["--input", "%s=%s" % (name, path)]
    ref = os.path.join(tmp, "ref")
    os.makedirs(ref, exist_ok=True)
    p = subprocess.run([os.path.join(build, "aicm-run"), "--engine=reference", "-q",
                        "--output-dir=" + ref] + args + [case], capture_output=True, text=True)
    if p.returncode != 0:
        return ["aicm-run --engine=reference failed: " + p.stderr.strip()]
    mod = types.ModuleType("emitted")
    try:
        exec(compile(text, case + " (emitted)", "exec"), mod.__dict__)
        got = mod.run(*inputs)
    except ModelError as e:
        return ["the model of triton.language refused it: %s" % e]
    if not isinstance(got, tuple):
        got = (got,)
    errs = []
    for name, g in zip(outs, got):
        want = np.load(os.path.join(ref, name + ".npy"))
        g = g.numpy()
        if g.shape != want.shape or g.dtype != want.dtype:
            errs.append("'%s': %s %s, reference %s %s" % (name, g.shape, g.dtype, want.shape,
                                                         want.dtype))
            continue
        if want.dtype.kind in "iub":
            bad = int(np.sum(g != want))
            if bad:
                errs.append("'%s': %d elements differ from the reference" % (name, bad))
            continue
        tol = 1e-4 if want.dtype == np.float32 else 1e-9
        nan = np.isnan(want)
        if (np.isnan(g) != nan).any():
            errs.append("'%s': NaN where the reference has none, or the reverse" % name)
            continue
        fin = ~nan
        scale = max(float(np.max(np.abs(want[fin]), initial=0)), 1.0)
        err = float(np.max(np.abs(g[fin].astype(np.float64) - want[fin]), initial=0)) / scale
        if not err <= tol:
            errs.append("'%s': error %.3g against the reference (tolerance %g)" % (name, err, tol))
    return errs


# Mutants that the check must reject, so that it is known to be able to
# fail: each takes one golden's text and removes what its correctness
# rests on.
MUTANTS = [
    ("row-reduction.aicm", "the tl.where before LayerNorm's variance sum",
     lambda t: re.sub(r"tl\.sum\(tl\.where\(\(x_tile_1_i1 < 97\)\[None, :\], sq, 0\.0\)",
                      "tl.sum(sq", t)),
    ("matmul.aicm", "the mask of the first ragged store",
     lambda t: t.replace(", acc, mask=(C_i0 < 100)[:, None] & (C_i1 < 84)[None, :])", ", acc)", 1)),
    ("conv.aicm", "im2col's other=0.0 (1.0 instead)",
     lambda t: t.replace("cols_x < 9), other=0.0)", "cols_x < 9), other=1.0)")),
    # (without the max's mask the max only shifts, which softmax undoes)
    ("attention.aicm", "the key block's mask of the running sum",
     lambda t: t.replace("tl.sum(tl.where((kb_i0 < 45)[None, :], p, 0.0), 1,", "tl.sum(p, 1,")),
]


def mutant_errors(build, top):
    """Messages for the mutants that the check lets through."""
    errs = []
    for name, what, f in MUTANTS:
        case = os.path.join(top, "testdata", "triton", name)
        text = open(case[:-5] + ".out").read()
        bad = f(text)
        if bad == text:
            errs.append("mutant of %s: '%s' is no longer in the text" % (name, what))
            continue
        with tempfile.TemporaryDirectory() as tmp:
            if not run_case(build, case, bad, tmp):
                errs.append("mutant of %s without %s passes: the check cannot fail there" %
                            (name, what))
    return errs


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: triton_check.py BUILD_DIR [CASE.aicm...]\n")
        return 2
    build = sys.argv[1]
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cases = sys.argv[2:] or sorted(
        os.path.join(top, "testdata", "triton", f)
        for f in os.listdir(os.path.join(top, "testdata", "triton")) if f.endswith(".aicm"))
    install_model()
    failed = 0
    checked = 0
    for case in cases:
        src = open(case).read()
        if not re.search(r"^// RUN: aicm-opt .*--emit=triton %s$", src, re.M):
            continue
        text = open(case[:-5] + ".out").read()
        with tempfile.TemporaryDirectory() as tmp:
            py = os.path.join(tmp, "emitted.py")
            with open(py, "w") as f:
                f.write(text)
            errs = []
            try:
                py_compile.compile(py, doraise=True)
            except py_compile.PyCompileError as e:
                errs.append("does not compile: %s" % e.msg)
            if not errs:
                errs = api_errors(ast.parse(text))
            if not errs:
                errs = run_case(build, case, text, tmp)
        checked += 1
        name = os.path.relpath(case, top)
        if errs:
            failed += 1
            for e in errs:
                print("triton_check: %s: %s" % (name, e))
        else:
            print("triton_check: %s: ok (compiles, Triton's API, runs equal to the reference)"
                  % name)
    if checked == 0:
        print("triton_check: no case emits Triton")
        return 1
    if not sys.argv[2:]:
        errs = mutant_errors(build, top)
        for e in errs:
            print("triton_check: %s" % e)
        failed += len(errs)
        if not errs:
            print("triton_check: %d mutants (a mask, a where, an other=, removed) rejected" %
                  len(MUTANTS))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
