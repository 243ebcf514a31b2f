"""aicm: the Python front door (DESIGN section 14), pure Python over libaicm.

    import aicm, numpy as np
    f = aicm.compile(open("mlp.aicm").read())        # or a Python function
    y = f(x)                                         # numpy in, numpy out
    f.stats                                          # what each kernel did
    aicm.run(text, x=x)                              # {"rowsum": array}

compile() and run() are thin: parse, run the pipeline, compile for an engine
and run, each one call of libaicm (_lib.py), whose diagnostics come back as
aicm.Error carrying the located message.  A Python function is traced
(aicm.trace, trace.py) at its first call, on the arrays of that call, and
the graph's text compiled as any other; later calls reuse that program, so
they must have the same shapes and dtypes (there are no guards: a different
shape is an aicm.Error, not a retrace).
"""
from ._lib import Error, ENGINE_TILE as _TILE, ENGINE_REFERENCE as _REFERENCE, \
    ENGINE_NATIVE as _NATIVE
from .trace import trace, Graph, Value  # noqa: E402,F401 (trace.py, ops.py: aicm.trace and one function per op)
from .ops import *  # noqa: E402,F401,F403

__all__ = ["Error", "compile", "run", "Compiled", "version"]

DEFAULT_PASSES = "shape-infer,fuse,autotune,lower-tiled"
# the reference interpreter runs graphs, not tiled kernels
REFERENCE_PASSES = "shape-infer"
_ENGINES = {"tile": _TILE, "reference": _REFERENCE, "native": _NATIVE}  # aicm.h's aicm_engine


def version():
    """libaicm's version, "MAJOR.MINOR.PATCH"."""
    from . import _lib
    return _lib.lib().aicm_version_string().decode()


def _engine(engine):
    if engine not in _ENGINES:
        raise Error("aicm: error: engine '%s' is not 'tile', 'reference' or 'native'\n"
                    % (engine,), 2)
    return _ENGINES[engine]


class Compiled:
    """What compile() returns: call it on numpy arrays, positional in the graph's input
    order or by name; it returns one array, or a tuple when the graph has several
    outputs.  .stats is the last run's KernelStats ({"kernels": [...], "total": {...}},
    each a dict), .text the program as .aicm text (after the passes and lowering),
    .inputs and .outputs the graph's [(name, dtype, shape)]."""

    def __init__(self, source, passes, engine, threads, seed, name):
        self._source = source
        self._passes = _passes(passes, engine)
        self._engine = _engine(engine)
        self._threads = threads
        self._seed = seed
        self._name = name
        self._prog = None
        # a traced function's captured arrays, bound by name at every call
        # (str(graph) holds their shapes, not their data)
        self._consts = []
        if isinstance(source, (str, bytes)):
            self._build(source)

    def _build(self, text):
        from . import _lib
        ctx = _lib.Context(self._threads, self._seed)
        mod = _lib.Module(ctx, text, self._name)
        if self._passes:
            mod.run_passes(self._passes)
        self._prog = _lib.Program(mod, self._engine)

    def _ensure(self, args, kwargs):
        if self._prog is None:
            import inspect
            from .trace import trace
            # the example inputs in parameter order, however they were passed
            try:
                example = inspect.signature(self._source).bind(*args, **kwargs).args
            except (TypeError, ValueError):
                example = args
            g = trace(self._source, *example)
            self._build(str(g))
            self._consts = list(g.consts.items())
        return self._prog

    @property
    def inputs(self):
        return [(n, _dtype_name(c), s) for n, c, s in self._need().inputs]

    @property
    def outputs(self):
        return [(n, _dtype_name(c), s) for n, c, s in self._need().outputs]

    @property
    def text(self):
        return str(self._need().module)

    @property
    def stats(self):
        kernels, total = self._need().stats()
        return {"kernels": kernels, "total": total}

    def _need(self):
        if self._prog is None:
            raise Error("aicm: error: '%s' is traced at its first call; call it first\n"
                        % self._name, 2)
        return self._prog

    def __call__(self, *args, **kwargs):
        p = self._ensure(args, kwargs)
        names = [n for n, _, _ in p.inputs]
        if len(args) > len(names):
            raise Error("aicm: error: %d inputs given by position, but the graph has %d\n"
                        % (len(args), len(names)))
        named = list(zip(names, args))
        for k, v in kwargs.items():
            if k in names[:len(args)]:
                raise Error("aicm: error: input '%s' is given by position and by name\n" % k)
            named.append((k, v))
        outs = p.run(self._consts + named)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def close(self):
        """Frees the library's handles now rather than when collected."""
        if self._prog is not None:
            self._prog.close()
            self._prog.module.close()
            self._prog.ctx.close()


def _passes(passes, engine):
    if passes is None:
        return REFERENCE_PASSES if engine == "reference" else DEFAULT_PASSES
    return passes


def _dtype_name(code):
    from . import _lib
    return _lib.NAMES[code]


def compile(fn_or_text, passes=None, engine="tile", threads=None, seed=0,
            name=None):
    """A callable on numpy arrays.  fn_or_text is .aicm text or a Python function (traced
    by aicm.trace at the first call); passes is the pipeline run before the engine
    (None: "shape-infer,fuse,autotune,lower-tiled" for the tile and native engines,
    "shape-infer" for the reference one; "" for none; the tile and native engines lower
    what is left); engine is "tile", "reference" or "native" (the kernels as C, compiled
    by $CC, else cc, and cached as aicm-run --engine=native does; no C compiler is an
    aicm.Error of status 2; .stats is the tile engine's count of the same kernels); seed fills the consts that
    have no data, as aicm-run --seed does; name is the file name that diagnostics give
    ("<string>", or "<FUNCTION>")."""
    if not isinstance(fn_or_text, (str, bytes)) and not callable(fn_or_text):
        raise Error("aicm: error: compile takes .aicm text or a function, not %s\n"
                    % type(fn_or_text).__name__, 2)
    if name is None:
        name = ("<string>" if isinstance(fn_or_text, (str, bytes))
                else "<%s>" % getattr(fn_or_text, "__name__", "function"))
    return Compiled(fn_or_text, passes, engine, threads, seed, name)


def run(text, inputs=None, *, passes=None, engine="tile", stats=False,
        threads=None, seed=0, name="<string>", **named):
    """Runs .aicm text once: returns {output name: array}, or with stats=True the pair
    (that dict, {"kernels": [...], "total": {...}}).  Inputs are given by name, as
    keywords or in the dict inputs (for names that clash with the options); a const
    named so is replaced.  Consts without data are filled from seed as aicm-run does."""
    from . import _lib
    vals = dict(inputs or {})
    vals.update(named)
    ctx = _lib.Context(threads, seed)
    mod = _lib.Module(ctx, text, name)
    passes = _passes(passes, engine)
    if passes:
        mod.run_passes(passes)
    prog = _lib.Program(mod, _engine(engine))
    try:
        outs = prog.run(list(vals.items()))
        result = {n: a for (n, _, _), a in zip(prog.outputs, outs)}
        if stats:
            kernels, total = prog.stats()
            return result, {"kernels": kernels, "total": total}
        return result
    finally:
        prog.close()
        mod.close()
        ctx.close()
