"""_lib.py: libaicm (src/api/aicm.h) through ctypes, and numpy arrays in and out.

The C library does the work; this module only finds it, declares aicm.h's
functions and structs to ctypes, and owns the handles: each Python object
frees its handle when collected (and on close()), so that compiling in a
loop does not grow the process.  Arrays cross as aicm_tensor records that
point at the numpy buffers (made C-contiguous first); outputs are numpy
arrays allocated here and filled by the library, so no buffer of the
library's outlives a call.

Where the library is: $AICM_LIB when set, else the installed copy beside
the package ($(PREFIX)/lib, the package being in
$(PREFIX)/lib/python3/dist-packages/aicm), else the build tree's
(build/libaicm.so next to python/).
"""
import ctypes
import os

import numpy as np

from .optable import DTYPES as _TYPE_OF_NUMPY

MAX_RANK = 8

F64, F32, I32, I64, BOOL = range(5)
ENGINE_TILE, ENGINE_REFERENCE, ENGINE_NATIVE = 0, 1, 2

# aicm_dtype <-> numpy, as aicm's element types (DESIGN section 12)
DTYPES = {F64: np.dtype(np.float64), F32: np.dtype(np.float32), I32: np.dtype(np.int32),
          I64: np.dtype(np.int64), BOOL: np.dtype(np.bool_)}
CODES = {v: k for k, v in DTYPES.items()}
# aicm_dtype -> the text's name, through optable's one table of the names
NAMES = {code: _TYPE_OF_NUMPY[dt.name] for code, dt in DTYPES.items()}


class Error(Exception):
    """A diagnostic from libaicm: str() is its located message, as aicm-opt prints it
    (file:line:col: error: ..., the line, a caret).  status is aicm.h's aicm_status:
    1 the input is wrong, 2 a bad argument or a file that cannot be read, 3 internal."""

    def __init__(self, message, status=1):
        super().__init__(message.rstrip("\n"))
        self.message = message
        self.status = status


Error.__module__ = "aicm"


class Tensor(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.c_int64 * MAX_RANK), ("data", ctypes.c_void_p)]


class KernelStats(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_char_p),
                ("result", ctypes.c_char_p), ("grid", ctypes.c_int64 * 3),
                ("programs", ctypes.c_int64), ("bytes_read", ctypes.c_int64),
                ("bytes_written", ctypes.c_int64), ("flops", ctypes.c_int64),
                ("ideal_read", ctypes.c_int64), ("ideal_written", ctypes.c_int64)]


def _candidates():
    env = os.environ.get("AICM_LIB")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.normpath(os.path.join(here, "..", "..", "..", "libaicm.so.0")),
            os.path.normpath(os.path.join(here, "..", "..", "build", "libaicm.so"))]


def _declare(lib):
    P = ctypes.c_void_p
    sig = {
        "aicm_version": (ctypes.c_int, []),
        "aicm_version_string": (ctypes.c_char_p, []),
        "aicm_context_new": (P, []),
        "aicm_context_free": (None, [P]),
        "aicm_error": (ctypes.c_char_p, [P]),
        "aicm_context_set_threads": (ctypes.c_int, [P, ctypes.c_int]),
        "aicm_context_set_seed": (ctypes.c_int, [P, ctypes.c_uint64]),
        "aicm_parse": (ctypes.c_int, [P, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                      ctypes.POINTER(P)]),
        "aicm_module_free": (None, [P]),
        "aicm_module_run_passes": (ctypes.c_int, [P, ctypes.c_char_p]),
        "aicm_module_print": (P, [P, ctypes.POINTER(ctypes.c_size_t)]),
        "aicm_compile": (ctypes.c_int, [P, ctypes.c_int, ctypes.POINTER(P)]),
        "aicm_program_free": (None, [P]),
        "aicm_program_num_inputs": (ctypes.c_int, [P]),
        "aicm_program_num_outputs": (ctypes.c_int, [P]),
        "aicm_program_input": (ctypes.c_int, [P, ctypes.c_int, ctypes.POINTER(Tensor)]),
        "aicm_program_output": (ctypes.c_int, [P, ctypes.c_int, ctypes.POINTER(Tensor)]),
        "aicm_program_run": (ctypes.c_int, [P, ctypes.POINTER(Tensor), ctypes.c_int,
                                            ctypes.POINTER(Tensor), ctypes.c_int]),
        "aicm_program_num_kernels": (ctypes.c_int, [P]),
        "aicm_program_kernel_stats": (ctypes.c_int, [P, ctypes.c_int,
                                                     ctypes.POINTER(KernelStats)]),
        "aicm_free": (None, [P]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib


_lib = None


def lib():
    """The loaded libaicm, loaded at the first use; Error when none is found."""
    global _lib
    if _lib is None:
        tried = []
        for path in _candidates():
            if not os.path.exists(path):
                tried.append(path)
                continue
            try:
                _lib = _declare(ctypes.CDLL(path))
            except OSError as e:
                raise Error("aicm: error: cannot load '%s': %s\n" % (path, e), 2) from None
            break
        else:
            raise Error("aicm: error: cannot find libaicm.so; looked at %s (set AICM_LIB to "
                        "its path)\n" % ", ".join("'%s'" % t for t in tried), 2)
    return _lib


class Context:
    """An aicm_context: the options of what is compiled in it and the last error."""

    def __init__(self, threads=None, seed=0):
        L = lib()
        self._L = L
        self.h = L.aicm_context_new()
        if not self.h:
            raise MemoryError("aicm_context_new")
        if threads is not None:
            self.check(L.aicm_context_set_threads(self.h, int(threads)))
        self.check(L.aicm_context_set_seed(self.h, int(seed)))

    def check(self, status):
        if status != 0:
            msg = self._L.aicm_error(self.h)
            raise Error(msg.decode("utf-8", "replace") if msg else "aicm: error\n", status)

    def close(self):
        if self.h:
            self._L.aicm_context_free(self.h)
            self.h = None

    def __del__(self):
        self.close()


class Module:
    """An aicm_module: a parsed graph in a context."""

    def __init__(self, ctx, text, file=None):
        self.ctx = ctx
        self.h = None
        raw = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        h = ctypes.c_void_p()
        ctx.check(ctx._L.aicm_parse(ctx.h, raw, len(raw),
                                    file.encode() if file else None, ctypes.byref(h)))
        self.h = h.value

    def run_passes(self, pipeline):
        self.ctx.check(self.ctx._L.aicm_module_run_passes(self.h, pipeline.encode()))

    def __str__(self):
        n = ctypes.c_size_t()
        p = self.ctx._L.aicm_module_print(self.h, ctypes.byref(n))
        if not p:
            raise MemoryError("aicm_module_print")
        try:
            return ctypes.string_at(p, n.value).decode("utf-8")
        finally:
            self.ctx._L.aicm_free(p)

    def close(self):
        if self.h:
            self.ctx._L.aicm_module_free(self.h)
            self.h = None

    def __del__(self):
        self.close()


def _desc(t):
    return (t.name.decode(), t.dtype, tuple(t.shape[k] for k in range(t.rank)))


class Program:
    """An aicm_program: a module compiled for an engine, run on numpy arrays."""

    def __init__(self, module, engine):
        self.module = module
        ctx = self.ctx = module.ctx
        L = ctx._L
        self.h = None
        h = ctypes.c_void_p()
        ctx.check(L.aicm_compile(module.h, engine, ctypes.byref(h)))
        self.h = h.value
        t = Tensor()
        self.inputs, self.outputs = [], []
        for i in range(L.aicm_program_num_inputs(self.h)):
            ctx.check(L.aicm_program_input(self.h, i, ctypes.byref(t)))
            self.inputs.append(_desc(t))
        for i in range(L.aicm_program_num_outputs(self.h)):
            ctx.check(L.aicm_program_output(self.h, i, ctypes.byref(t)))
            self.outputs.append(_desc(t))

    def run(self, named, extra=()):
        """Runs on named = [(name, array)] (inputs; consts may be named too), returns
        the outputs' arrays in order; extra names more values to return."""
        n = len(named)
        keep = []
        tin = (Tensor * max(n, 1))()
        for k, (name, a) in enumerate(named):
            a = np.asarray(a)
            code = CODES.get(a.dtype)
            if code is None:
                raise Error("aicm: error: input '%s' is a numpy array of dtype %s; expected "
                            "float64, float32, int32, int64 or bool\n" % (name, a.dtype))
            if a.ndim > MAX_RANK:
                raise Error("aicm: error: input '%s' has rank %d; aicm holds rank %d at "
                            "most\n" % (name, a.ndim, MAX_RANK))
            a = np.ascontiguousarray(a)
            keep.append(a)
            nm = name.encode()
            keep.append(nm)
            tin[k].name = nm
            tin[k].dtype = code
            tin[k].rank = a.ndim
            for d in range(a.ndim):
                tin[k].shape[d] = a.shape[d]
            tin[k].data = a.ctypes.data
        descs = list(self.outputs) + [(name, None, None) for name in extra]
        m = len(descs)
        tout = (Tensor * max(m, 1))()
        outs = []
        for k, (name, code, shape) in enumerate(descs):
            nm = name.encode()
            keep.append(nm)
            tout[k].name = nm
            if code is None:                # a value by name: the library describes it
                outs.append(None)
                continue
            a = np.empty(shape, DTYPES[code])
            outs.append(a)
            tout[k].dtype = code
            tout[k].rank = len(shape)
            for d, s in enumerate(shape):
                tout[k].shape[d] = s
            # an empty one is left to the library (data NULL), which describes it
            tout[k].data = a.ctypes.data if a.size else None
        L = self.ctx._L
        self.ctx.check(L.aicm_program_run(self.h, tin, n, tout, m))
        for k in range(m):
            if outs[k] is None or not outs[k].size:
                t = tout[k]
                shape = tuple(t.shape[d] for d in range(t.rank))
                a = np.empty(shape, DTYPES[t.dtype])
                if a.size:
                    ctypes.memmove(a.ctypes.data, t.data, a.nbytes)
                L.aicm_free(t.data)
                outs[k] = a
        return outs

    def stats(self):
        """The last run's KernelStats: a list of dicts, one per kernel, and the totals."""
        L = self.ctx._L
        s = KernelStats()
        kernels = []
        for k in list(range(L.aicm_program_num_kernels(self.h))) + [-1]:
            self.ctx.check(L.aicm_program_kernel_stats(self.h, k, ctypes.byref(s)))
            kernels.append({
                "name": s.name.decode(), "kind": s.kind.decode(), "result": s.result.decode(),
                "grid": [s.grid[0], s.grid[1], s.grid[2]], "programs": s.programs,
                "bytes_read": s.bytes_read, "bytes_written": s.bytes_written,
                "flops": s.flops, "ideal_read": s.ideal_read,
                "ideal_written": s.ideal_written})
        return kernels[:-1], kernels[-1]

    def close(self):
        if self.h:
            self.ctx._L.aicm_program_free(self.h)
            self.h = None

    def __del__(self):
        self.close()
