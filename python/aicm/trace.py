"""aicm.trace: graph capture by running a Python function on symbolic values.

The seed's scenario 1 builds its graph from an ordinary Python function; this
module does the same the way torch.fx's symbolic tracer does: the function is
called once with Value objects in place of its array arguments, every operator
and aicm.<op> call on a Value records a node instead of computing, and what the
function returns names the graph's outputs.  Shapes and element types are
computed here, by the op set's own rules (DESIGN sections 3 and 12), so that a
mistake surfaces at trace time as an aicm.Error carrying the file:line of the
offending statement; str(Graph) writes every type, and a test checks that
aicm-opt's shape-infer reprints the text unchanged, so the two rule books
cannot disagree silently.

Names (DESIGN section 14): a positional parameter becomes an input of its name;
a numpy array met as an operand becomes a const named after the variable that
holds it (the function's closure, its globals, or a local of the frame that
used it), one const per array; a computed value is named after the first local
variable seen holding it.  Locals are read by a sys.settrace hook that looks at
the frame's variables at each line and at return (no bytecode is rewritten);
values no local holds are named after their op, fx-style (add, add_1, ...).
Names are made valid text names and unique in that order of priority.

Constants: str(Graph) is the program, and a captured array appears there
without its data (`const() : (48, 32)`), as the seed's capture prints it; the
data stays in Graph.consts and is bound by name when the graph runs.
Graph.text(data_dir=D) writes a self-contained text instead (values= inline
up to 64 elements, DESIGN 12's limit, else file="NAME.npy" written into D).
A Python number becomes a rank-0 splat const (`value=`) of its partner's type.

Control flow runs in Python, once: loops unroll, and a branch on a shape or a
Python value is taken for the example and frozen into the graph.  A branch on
the data of a Value cannot be decided while tracing and is an error.
"""

import inspect
import math
import os
import sys

import numpy as np

from .optable import OPS, DTYPES, FLOATS

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
# frames in these folders (numpy, the standard library) never name values
_SKIP_DIRS = (os.path.dirname(os.path.abspath(np.__file__)) + os.sep,
              os.path.dirname(os.path.abspath(os.__file__)) + os.sep)
_INLINE_MAX = 64      # DESIGN 12: values=(...) holds at most 64 elements
# element type -> numpy dtype, from optable's one table of the names
_NP = {t: np.dtype(name) for name, t in DTYPES.items()}


class _FallbackError(Exception):
    """Only when the package's core (aicm/__init__.py) defines no Error."""


def _error_class():
    # aicm.Error is the core's (aicm/__init__.py); imported late because the
    # core imports this module
    try:
        from . import Error
        return Error
    except ImportError:
        return _FallbackError


def _user_frame():
    """The innermost frame outside this package: the user's statement."""
    f = sys._getframe(1)
    while f is not None and _not_user(f.f_code.co_filename):
        f = f.f_back
    return f


def _not_user(filename):
    """This package's files, numpy's and its dispatcher's are never the
    statement to blame."""
    if filename.startswith("<__array_function__"):
        return True
    path = os.path.abspath(filename)
    return os.path.dirname(path) == _PKG_DIR or path.startswith(_SKIP_DIRS[0])


def _where():
    f = _user_frame()
    if f is None:
        return None
    return (f.f_code.co_filename, f.f_lineno)


def _fail(msg):
    """Raises aicm.Error located at the user's statement."""
    w = _where()
    if w is not None:
        msg = "%s:%d: %s" % (w[0], w[1], msg)
    raise _error_class()(msg)


def _dtype_name(dt):
    name = np.dtype(dt).name
    if name not in DTYPES:
        return None
    return DTYPES[name]


def _shape_str(shape):
    if len(shape) == 1:
        return "(%d,)" % shape[0]
    return "(" + ", ".join(str(d) for d in shape) + ")"


def _type_str(shape, dtype):
    s = _shape_str(shape)
    return s if dtype == "f64" else s + " " + dtype


def _num_str(v, dtype):
    """A number as the printer writes it: exact integers, the shortest
    float text that reads back to the same double."""
    if dtype == "bool":
        return "True" if v else "False"
    if dtype in ("i32", "i64"):
        return str(int(v))
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(v)


def _attr_str(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, tuple):
        if len(v) == 1:
            return "(%s,)" % _attr_str(v[0])
        return "(" + ", ".join(_attr_str(x) for x in v) + ")"
    if isinstance(v, _TypeKw):
        return v.kw
    if isinstance(v, float):
        return _num_str(v, "f64")
    return str(v)


class _TypeKw:
    """A bare element-type keyword as an attribute value (to=i64)."""
    def __init__(self, kw):
        self.kw = kw


class _Node:
    __slots__ = ("op", "args", "attrs", "shape", "dtype", "name", "hint",
                 "where", "data")

    def __init__(self, op, args, attrs, shape, dtype, where):
        self.op = op
        self.args = args          # operand _Nodes
        self.attrs = attrs        # [(name, value)] in the table's print order
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self.name = None          # the final text name
        self.hint = None          # the variable that names it, when one does
        self.where = where        # (file, line) of the statement, or None
        self.data = None          # a const's numpy array


class _Trace:
    """One tracing run: the nodes in definition order and the naming state."""

    def __init__(self, fn):
        self.fn = fn
        self.nodes = []
        self.consts = {}          # id(array) -> (array, node)

    def add(self, op, args, attrs, shape, dtype):
        n = _Node(op, args, attrs, shape, dtype, _where())
        self.nodes.append(n)
        return Value(self, n)

    def const_array(self, arr, hint=None):
        key = id(arr)
        if key in self.consts:
            return self.consts[key][1]
        a = np.asarray(arr)
        dt = _dtype_name(a.dtype)
        if dt is None:
            _fail("a captured array has dtype %s; aicm's element types are "
                  "float64, float32, int32, int64 and bool" % a.dtype)
        if a.ndim > 8:
            _fail("a captured array has rank %d; aicm's limit is 8" % a.ndim)
        if 0 in a.shape:
            _fail("a captured array has shape %s; every dimension must be positive"
                  % (a.shape,))
        node = _Node("const", [], [], a.shape, dt, _where())
        node.data = np.ascontiguousarray(a)
        node.hint = hint or self._captured_name(arr)
        self.nodes.append(node)
        self.consts[key] = (arr, node)   # the reference keeps id(arr) unique
        return node

    def const_scalar(self, v, dtype):
        node = _Node("const", [], [("value", _ScalarText(v, dtype))], (), dtype, _where())
        self.nodes.append(node)
        return node

    def _captured_name(self, arr):
        """The variable that holds arr: the traced function's closure and
        globals, then the locals of the user's frames."""
        fn = self.fn
        code = getattr(fn, "__code__", None)
        if code is not None and getattr(fn, "__closure__", None):
            for name, cell in zip(code.co_freevars, fn.__closure__):
                try:
                    if cell.cell_contents is arr:
                        return name
                except ValueError:
                    pass
        f = _user_frame()
        while f is not None:
            for name, v in f.f_locals.items():
                if v is arr:
                    return name
            if f.f_code is code:
                break
            f = f.f_back
        for name, v in getattr(fn, "__globals__", {}).items():
            if v is arr:
                return name
        return None

    # the settrace hooks: name values after the locals that hold them
    def global_hook(self, frame, event, arg):
        if event != "call":
            return None
        path = os.path.abspath(frame.f_code.co_filename)
        if os.path.dirname(path) == _PKG_DIR or path.startswith(_SKIP_DIRS):
            return None
        return self.local_hook

    def local_hook(self, frame, event, arg):
        if event in ("line", "return"):
            for name, v in frame.f_locals.items():
                if isinstance(v, Value) and v._t is self and v._n.hint is None:
                    v._n.hint = name
        return self.local_hook


class _ScalarText:
    """A splat's value, printed in its type's spelling."""
    def __init__(self, v, dtype):
        self.v = v
        self.dtype = dtype

    def __str__(self):
        return _num_str(self.v, self.dtype)


def _as_node(t, x, like):
    """An operand as a node: a Value's own, a numpy array as a const, a
    Python number as a rank-0 splat of like's element type."""
    if t is None:
        _fail("aicm's op functions record into a trace: call them on the values "
              "of a function given to aicm.trace or aicm.compile")
    if isinstance(x, Value):
        if x._t is not t:
            _fail("a value of another trace is used here")
        return x._n
    if isinstance(x, np.ndarray):
        return t.const_array(x)
    if isinstance(x, (bool, np.bool_)):
        dt = like if like is not None else "bool"
        return t.const_scalar(bool(x), dt)
    if isinstance(x, (int, np.integer)):
        dt = like if like is not None else "i64"
        if dt == "bool":
            _fail("a number %d next to a bool value; aicm does not promote "
                  "types: use .astype first" % x)
        return t.const_scalar(int(x), dt)
    if isinstance(x, (float, np.floating)):
        dt = like if like is not None else "f64"
        if dt not in FLOATS:
            _fail("a float %r next to a %s value; aicm does not promote types: "
                  "use .astype('float64') first" % (float(x), dt))
        return t.const_scalar(float(x), dt)
    _fail("an operand of type '%s' cannot be traced; expected an aicm value, "
          "a numpy array or a number" % type(x).__name__)


def _trace_of(*xs):
    for x in xs:
        if isinstance(x, Value):
            return x._t
        if isinstance(x, (list, tuple)):
            t = _trace_of(*x)
            if t is not None:
                return t
    return None


def _operand_type(xs):
    """The element type that Python numbers next to these operands take."""
    for x in xs:
        if isinstance(x, Value):
            return x._n.dtype
    for x in xs:
        if isinstance(x, np.ndarray):
            return _dtype_name(x.dtype)
    return None


# ---- shape rules (DESIGN sections 3 and 12, as src/ir/shape*.c) ----------

def _broadcast(op, shapes):
    out = []
    rank = max(len(s) for s in shapes)
    for i in range(rank):
        d = 1
        for s in shapes:
            k = len(s) - rank + i
            if k < 0:
                continue
            if s[k] == 1:
                continue
            if d != 1 and d != s[k]:
                _fail("'%s' cannot broadcast %s" % (op, " with ".join(_shape_str(x)
                                                                      for x in shapes)))
            d = s[k]
        out.append(d)
    return tuple(out)


def _check_types(op, nodes):
    types = OPS[op][3]
    dts = [n.dtype for n in nodes]
    for n in nodes[1:]:
        if n.dtype != nodes[0].dtype:
            _fail("'%s' takes one element type, found %s and %s; aicm does not "
                  "promote types: use .astype" % (op, nodes[0].dtype, n.dtype))
    dt = dts[0]
    if types == "TY_NUM" and dt == "bool":
        _fail("'%s' takes numbers, found bool" % op)
    if types == "TY_FLOAT" and dt not in FLOATS:
        _fail("'%s' takes f32 or f64, found %s" % (op, dt))
    if types == "TY_BOOL" and dt != "bool":
        _fail("'%s' takes bool, found %s" % (op, dt))
    return dt


def _result_type(op, dt):
    r = OPS[op][4]
    if r == "RT_BOOL":
        return "bool"
    if r == "RT_I64":
        return "i64"
    return dt


def _norm_axis(op, axis, rank):
    a = int(axis)
    if a < -rank or a >= rank:
        _fail("'%s' axis %d is out of range for rank %d" % (op, a, rank))
    return a + rank if a < 0 else a


def elementwise(op, *xs):
    """A unary or binary op (or where) on Values, arrays and numbers."""
    t = _trace_of(*xs)
    like = _operand_type(xs[1:] if op == "where" else xs)
    nodes = [_as_node(t, x, like if not (op == "where" and i == 0) else "bool")
             for i, x in enumerate(xs)]
    if op == "where":
        if nodes[0].dtype != "bool":
            _fail("'where' takes a bool condition, found %s" % nodes[0].dtype)
        dt = _check_types(op, nodes[1:])
    else:
        dt = _check_types(op, nodes)
    shape = _broadcast(op, [n.shape for n in nodes])
    return t.add(op, nodes, [], shape, _result_type(op, dt))


def reduce(op, x, axis=None, keepdims=False):
    t = _trace_of(x)
    n = _as_node(t, x, None)
    dt = _check_types(op, [n])
    rank = len(n.shape)
    attrs = []
    if op in ("argmax", "argmin"):
        a = _norm_axis(op, 0 if axis is None else axis, max(rank, 1))
        axes = (a,)
        if a != 0:
            attrs.append(("axis", a))
    else:
        if axis is None:
            axes = tuple(range(rank))
        elif isinstance(axis, (tuple, list)):
            if len(axis) == 0:
                _fail("'%s' axis=() reduces nothing; leave axis out to reduce "
                      "all axes" % op)
            axes = tuple(_norm_axis(op, a, rank) for a in axis)
            if len(set(axes)) != len(axes):
                _fail("'%s' axis %s names an axis twice" % (op, tuple(axis)))
            attrs.append(("axis", tuple(int(a) for a in axis)))
        else:
            axes = (_norm_axis(op, axis, rank),)
            attrs.append(("axis", int(axis)))
    if keepdims:
        attrs.append(("keepdims", True))
        shape = tuple(1 if i in axes else d for i, d in enumerate(n.shape))
    else:
        shape = tuple(d for i, d in enumerate(n.shape) if i not in axes)
    return t.add(op, [n], attrs, shape, _result_type(op, dt))


def matmul(a, b):
    t = _trace_of(a, b)
    like = _operand_type((a, b))
    na, nb = _as_node(t, a, like), _as_node(t, b, like)
    dt = _check_types("matmul", [na, nb])
    sa, sb = list(na.shape), list(nb.shape)
    if not sa or not sb:
        _fail("'matmul' takes operands of rank 1 or more, found %s and %s"
              % (_shape_str(na.shape), _shape_str(nb.shape)))
    a1, b1 = len(sa) == 1, len(sb) == 1
    if a1:
        sa = [1] + sa
    if b1:
        sb = sb + [1]
    if sa[-1] != sb[-2]:
        _fail("'matmul' contracts %d with %d: %s @ %s"
              % (sa[-1], sb[-2], _shape_str(na.shape), _shape_str(nb.shape)))
    batch = _broadcast("matmul", [tuple(sa[:-2]), tuple(sb[:-2])]) \
        if len(sa) > 2 or len(sb) > 2 else ()
    shape = list(batch) + [sa[-2], sb[-1]]
    if a1:
        del shape[-2]
    if b1:
        del shape[-1]
    return t.add("matmul", [na, nb], [], shape, dt)


def transpose(x, perm=None):
    t = _trace_of(x)
    n = _as_node(t, x, None)
    rank = len(n.shape)
    if perm is None:
        perm = tuple(range(rank))[::-1]          # numpy's default
    perm = tuple(_norm_axis("transpose", p, rank) for p in perm)
    if sorted(perm) != list(range(rank)):
        _fail("'transpose' perm %s is not a permutation of %d axes" % (perm, rank))
    default = tuple(range(rank - 2)) + (rank - 1, rank - 2) if rank >= 2 else tuple(range(rank))
    attrs = [] if perm == default else [("perm", perm)]
    return t.add("transpose", [n], attrs, [n.shape[p] for p in perm], n.dtype)


def reshape(x, shape):
    t = _trace_of(x)
    n = _as_node(t, x, None)
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = [int(d) for d in shape]
    total = int(np.prod(n.shape, dtype=np.int64))
    if shape.count(-1) > 1:
        _fail("'reshape' shape %s has more than one -1" % (tuple(shape),))
    if -1 in shape:
        rest = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        if rest <= 0 or total % rest:
            _fail("'reshape' cannot make %s from %s (%d elements)"
                  % (tuple(shape), _shape_str(n.shape), total))
        shape[shape.index(-1)] = total // rest
    if any(d <= 0 for d in shape) or int(np.prod(shape, dtype=np.int64)) != total:
        _fail("'reshape' cannot make %s from %s (%d elements)"
              % (tuple(shape), _shape_str(n.shape), total))
    if len(shape) > 8:
        _fail("'reshape' to rank %d; aicm's limit is 8" % len(shape))
    if tuple(shape) == n.shape:
        return x if isinstance(x, Value) else Value(t, n)
    return t.add("reshape", [n], [("shape", tuple(shape))], shape, n.dtype)


def cast(x, dtype):
    t = _trace_of(x)
    n = _as_node(t, x, None)
    dt = _dtype_name(dtype)
    if dt is None:
        _fail("'cast' to %s; aicm's element types are float64, float32, int32, "
              "int64 and bool" % np.dtype(dtype))
    if dt == n.dtype:
        return x
    return t.add("cast", [n], [("to", _TypeKw(dt))], n.shape, dt)


def concat(xs, axis=0):
    xs = list(xs)
    if not xs:
        _fail("'concat' takes one or more values")
    t = _trace_of(*xs)
    like = _operand_type(xs)
    nodes = [_as_node(t, x, like) for x in xs]
    dt = _check_types("concat", nodes)
    rank = len(nodes[0].shape)
    if rank == 0:
        _fail("'concat' of rank-0 values")
    a = _norm_axis("concat", axis, rank)
    shape = list(nodes[0].shape)
    for n in nodes[1:]:
        if len(n.shape) != rank or any(n.shape[i] != shape[i] for i in range(rank) if i != a):
            _fail("'concat' along axis %d of %s and %s: the other dimensions "
                  "must be equal" % (a, _shape_str(nodes[0].shape), _shape_str(n.shape)))
        shape[a] += n.shape[a]
    return t.add("concat", nodes, [("axis", a)], shape, dt)


def slice_op(x, starts, ends, axes=None, steps=None):
    """ONNX Slice, as the op writes it (the indexing of a Value goes here)."""
    t = _trace_of(x)
    n = _as_node(t, x, None)
    rank = len(n.shape)
    starts = tuple(int(s) for s in starts)
    ends = tuple(int(e) for e in ends)
    axes = tuple(range(len(starts))) if axes is None else tuple(int(a) for a in axes)
    steps = (1,) * len(starts) if steps is None else tuple(int(s) for s in steps)
    if not (len(starts) == len(ends) == len(axes) == len(steps)):
        _fail("'slice' starts, ends, axes and steps must be of one length")
    shape = list(n.shape)
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = _norm_axis("slice", a, rank)
        d = n.shape[a]
        if st == 0:
            _fail("'slice' step 0 along axis %d" % a)
        if s < 0:
            s += d
        if e < 0:
            e += d
        if st > 0:
            s, e = min(max(s, 0), d), min(max(e, 0), d)
            k = max(0, (e - s + st - 1) // st)
        else:
            s, e = min(max(s, -1), d - 1), min(max(e, -1), d - 1)
            k = max(0, (s - e - st - 1) // -st)
        if k == 0:
            _fail("'slice' selects nothing along axis %d of %s: a dimension must "
                  "be positive" % (a, _shape_str(n.shape)))
        shape[a] = k
    attrs = [("starts", starts), ("ends", ends)]
    if axes != tuple(range(len(starts))):
        attrs.append(("axes", axes))
    if any(s != 1 for s in steps):
        attrs.append(("steps", steps))
    return t.add("slice", [n], attrs, shape, n.dtype)


def pad(x, pads, value=0):
    t = _trace_of(x)
    n = _as_node(t, x, None)
    rank = len(n.shape)
    pads = tuple(int(p) for p in pads)
    if len(pads) != 2 * rank:
        _fail("'pad' pads has %d entries; a rank-%d value takes %d (all begins, "
              "then all ends)" % (len(pads), rank, 2 * rank))
    shape = [pads[i] + n.shape[i] + pads[rank + i] for i in range(rank)]
    if any(d <= 0 for d in shape):
        _fail("'pad' pads %s leave no element of %s" % (pads, _shape_str(n.shape)))
    attrs = [("pads", pads)]
    if value != 0:
        attrs.append(("value", _ScalarText(value, n.dtype)))
    return t.add("pad", [n], attrs, shape, n.dtype)


def gather(data, indices, axis=0):
    t = _trace_of(data, indices)
    nd = _as_node(t, data, None)
    ni = _as_node(t, indices, "i64")
    if ni.dtype not in ("i32", "i64"):
        _fail("'gather' indices are i32 or i64, found %s" % ni.dtype)
    rank = len(nd.shape)
    a = _norm_axis("gather", axis, rank)
    shape = nd.shape[:a] + ni.shape + nd.shape[a + 1:]
    if len(shape) > 8:
        _fail("'gather' result of rank %d; aicm's limit is 8" % len(shape))
    attrs = [("axis", a)] if a != 0 else []
    return t.add("gather", [nd, ni], attrs, shape, nd.dtype)


def expand(x, shape):
    t = _trace_of(x)
    n = _as_node(t, x, None)
    shape = tuple(int(d) for d in shape)
    out = _broadcast("expand", [n.shape, shape])
    return t.add("expand", [n], [("shape", shape)], out, n.dtype)


def _pair(v, name):
    if isinstance(v, (int, np.integer)):
        return (int(v), int(v))
    v = tuple(int(x) for x in v)
    if len(v) != 2:
        _fail("'%s' takes two numbers, found %s" % (name, v))
    return v


def _pads4(p):
    if isinstance(p, (int, np.integer)):
        return (int(p),) * 4
    p = tuple(int(x) for x in p)
    if len(p) == 2:
        return (p[0], p[1], p[0], p[1])
    if len(p) != 4:
        _fail("pads takes (t, l, b, r) or (h, w) or one number, found %s" % (p,))
    return p


def _out_size(op, i, k, s, p0, p1, d, ceil_mode):
    ext = d * (k - 1) + 1
    padded = i + p0 + p1
    if ext > padded:
        _fail("'%s' window of %d (dilated) does not fit %d (padded)" % (op, ext, padded))
    span = padded - ext
    o = span // s + 1
    if ceil_mode:
        o += span % s != 0
        if (o - 1) * s >= i + p0:
            o -= 1
    return o


def _window_attrs(strides, pads, dilations):
    attrs = []
    if strides != (1, 1):
        attrs.append(("strides", strides))
    if pads != (0, 0, 0, 0):
        attrs.append(("pads", pads))
    if dilations != (1, 1):
        attrs.append(("dilations", dilations))
    return attrs


def conv2d(x, w, bias=None, strides=1, pads=0, dilations=1, groups=1):
    xs = (x, w) if bias is None else (x, w, bias)
    t = _trace_of(*xs)
    like = _operand_type(xs)
    nodes = [_as_node(t, v, like) for v in xs]
    dt = _check_types("conv2d", nodes)
    nx, nw = nodes[0], nodes[1]
    if len(nx.shape) != 4 or len(nw.shape) != 4:
        _fail("'conv2d' takes x (N, C, H, W) and w (F, C/groups, KH, KW), found %s and %s"
              % (_shape_str(nx.shape), _shape_str(nw.shape)))
    N, C, H, W = nx.shape
    F, Cg, KH, KW = nw.shape
    groups = int(groups)
    if groups < 1 or C % groups or F % groups or Cg != C // groups:
        _fail("'conv2d' w %s does not fit x %s with groups=%d"
              % (_shape_str(nw.shape), _shape_str(nx.shape), groups))
    if bias is not None and nodes[2].shape != (F,):
        _fail("'conv2d' bias %s; expected (%d,)" % (_shape_str(nodes[2].shape), F))
    s, p, d = _pair(strides, "strides"), _pads4(pads), _pair(dilations, "dilations")
    oh = _out_size("conv2d", H, KH, s[0], p[0], p[2], d[0], False)
    ow = _out_size("conv2d", W, KW, s[1], p[1], p[3], d[1], False)
    attrs = _window_attrs(s, p, d)
    if groups != 1:
        attrs.append(("groups", groups))
    return t.add("conv2d", nodes, attrs, (N, F, oh, ow), dt)


def pool2d(op, x, kernel, strides=1, pads=0, dilations=1, ceil_mode=False,
           count_include_pad=False):
    t = _trace_of(x)
    n = _as_node(t, x, None)
    dt = _check_types(op, [n])
    if len(n.shape) != 4:
        _fail("'%s' takes x (N, C, H, W), found %s" % (op, _shape_str(n.shape)))
    N, C, H, W = n.shape
    k, s, p, d = (_pair(kernel, "kernel"), _pair(strides, "strides"), _pads4(pads),
                  _pair(dilations, "dilations"))
    oh = _out_size(op, H, k[0], s[0], p[0], p[2], d[0], ceil_mode)
    ow = _out_size(op, W, k[1], s[1], p[1], p[3], d[1], ceil_mode)
    attrs = [("kernel", k)] + _window_attrs(s, p, d)
    if ceil_mode:
        attrs.append(("ceil_mode", True))
    if count_include_pad and op == "avg_pool2d":
        attrs.append(("count_include_pad", True))
    return t.add(op, [n], attrs, (N, C, oh, ow), dt)


# ---- indexing --------------------------------------------------------------

def _index(v, key):
    """numpy basic indexing: slices (any step), integers, None and Ellipsis,
    as one slice op (when anything is cut) and one reshape (when an integer
    drops an axis or None adds one)."""
    if not isinstance(key, tuple):
        key = (key,)
    shape = v._n.shape
    rank = len(shape)
    nreal = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        _fail("an index holds more than one '...'")
    if nreal > rank:
        _fail("too many indices (%d) for %s" % (nreal, _shape_str(shape)))
    full = []
    for k in key:
        if k is Ellipsis:
            full.extend([slice(None)] * (rank - nreal))
        else:
            full.append(k)
    if Ellipsis not in key:
        full.extend([slice(None)] * (rank - nreal))
    starts, ends, axes, steps = [], [], [], []
    out_shape = []
    axis = 0
    for k in full:
        if k is None:
            out_shape.append(1)
            continue
        d = shape[axis]
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer, slice)):
            _fail("index %r: only slices, integers, None and '...' can index a traced "
                  "value (use aicm.gather for an index array)" % (k,))
        if isinstance(k, slice):
            s, e, st = k.indices(d)
            n = len(range(s, e, st))
            if n == 0:
                _fail("index %s selects nothing along axis %d of %s: a dimension "
                      "must be positive" % (_slice_text(k), axis, _shape_str(shape)))
            if n != d or st != 1:
                if st < 0 and e < 0:
                    e = -d - 1          # past the front: ONNX's end of -1
                starts.append(s)
                ends.append(e)
                axes.append(axis)
                steps.append(st)
            out_shape.append(n)
        else:
            i = int(k)
            if i < -d or i >= d:
                _fail("index %d is out of range for axis %d of %s"
                      % (i, axis, _shape_str(shape)))
            i = i + d if i < 0 else i
            if d != 1:
                starts.append(i)
                ends.append(i + 1)
                axes.append(axis)
                steps.append(1)
        axis += 1
    r = v
    if starts:
        r = slice_op(r, starts, ends, axes, steps)
    if tuple(out_shape) != r._n.shape:
        r = reshape(r, out_shape)
    return r


def _slice_text(k):
    def f(x):
        return "" if x is None else str(x)
    return "%s:%s%s" % (f(k.start), f(k.stop), "" if k.step is None else ":" + f(k.step))


# ---- the traced value ------------------------------------------------------

class Value:
    """A symbolic array: what a traced function's arguments and every op
    on them are while the function runs.  Shape and dtype are known."""

    __hash__ = object.__hash__

    # numpy's own functions on a Value (np.exp(x), arr + x, np.where(c, x, 0),
    # np.sum(x, axis=1)) record the same ops as aicm's; anything else is an
    # error rather than numpy turning the Value into an object array
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        op = _UFUNCS.get(ufunc.__name__)
        if method != "__call__" or op is None or kwargs:
            _fail("numpy's '%s'%s on a traced value has no aicm op; use aicm's functions"
                  % (ufunc.__name__, "" if method == "__call__" else "." + method))
        return op(*inputs)

    def __array_function__(self, func, types, args, kwargs):
        f = _FUNCTIONS.get(func.__name__)
        if f is None:
            _fail("numpy's '%s' on a traced value has no aicm op; use aicm's functions"
                  % func.__name__)
        return f(*args, **kwargs)

    def __init__(self, t, n):
        self._t = t
        self._n = n

    @property
    def shape(self):
        return self._n.shape

    @property
    def dtype(self):
        return np.dtype(_NP[self._n.dtype])

    @property
    def ndim(self):
        return len(self._n.shape)

    @property
    def size(self):
        return int(np.prod(self._n.shape, dtype=np.int64))

    def __len__(self):
        if not self._n.shape:
            _fail("len() of a rank-0 value")
        return self._n.shape[0]

    def __repr__(self):
        return "<aicm.Value %s : %s>" % ("%" + (self._n.name or self._n.hint or self._n.op),
                                         _type_str(self._n.shape, self._n.dtype))

    def __bool__(self):
        _fail("the truth of a traced value is not known while tracing: a branch or "
              "loop on array data cannot be captured (use aicm.where)")

    def __iter__(self):
        if not self._n.shape:
            _fail("iteration over a rank-0 value")
        return (self[i] for i in range(self._n.shape[0]))

    # arithmetic
    def __add__(self, o): return elementwise("add", self, o)
    def __radd__(self, o): return elementwise("add", o, self)
    def __sub__(self, o): return elementwise("sub", self, o)
    def __rsub__(self, o): return elementwise("sub", o, self)
    def __mul__(self, o): return elementwise("mul", self, o)
    def __rmul__(self, o): return elementwise("mul", o, self)
    def __pow__(self, o): return elementwise("pow", self, o)
    def __rpow__(self, o): return elementwise("pow", o, self)
    def __mod__(self, o): return elementwise("mod", self, o)
    def __rmod__(self, o): return elementwise("mod", o, self)
    def __matmul__(self, o): return matmul(self, o)
    def __rmatmul__(self, o): return matmul(o, self)

    def __truediv__(self, o):
        return _truediv(self, o)

    def __rtruediv__(self, o):
        return _truediv(o, self)

    def __neg__(self): return elementwise("neg", self)
    def __pos__(self): return self
    def __abs__(self): return elementwise("abs", self)

    def __invert__(self):
        if self._n.dtype != "bool":
            _fail("'~' on %s: aicm has it for bool only (logical not)" % self._n.dtype)
        return elementwise("not", self)

    def __and__(self, o): return elementwise("and", self, o)
    def __rand__(self, o): return elementwise("and", o, self)
    def __or__(self, o): return elementwise("or", self, o)
    def __ror__(self, o): return elementwise("or", o, self)
    def __xor__(self, o): return elementwise("xor", self, o)
    def __rxor__(self, o): return elementwise("xor", o, self)

    # comparisons give bool values
    def __eq__(self, o): return elementwise("equal", self, o)
    def __ne__(self, o): return elementwise("not", elementwise("equal", self, o))
    def __lt__(self, o): return elementwise("less", self, o)
    def __le__(self, o): return elementwise("less_equal", self, o)
    def __gt__(self, o): return elementwise("greater", self, o)
    def __ge__(self, o): return elementwise("greater_equal", self, o)

    def __getitem__(self, key):
        return _index(self, key)

    # methods, numpy's spelling
    @property
    def T(self):
        return transpose(self)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return transpose(self, axes or None)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return reshape(self, shape)

    def astype(self, dtype):
        return cast(self, dtype)

    def sum(self, axis=None, keepdims=False): return reduce("sum", self, axis, keepdims)
    def max(self, axis=None, keepdims=False): return reduce("max", self, axis, keepdims)
    def min(self, axis=None, keepdims=False): return reduce("min", self, axis, keepdims)
    def mean(self, axis=None, keepdims=False): return reduce("mean", self, axis, keepdims)
    def prod(self, axis=None, keepdims=False): return reduce("prod", self, axis, keepdims)

    def argmax(self, axis=None, keepdims=False):
        return _arg("argmax", self, axis, keepdims)

    def argmin(self, axis=None, keepdims=False):
        return _arg("argmin", self, axis, keepdims)


def _arg(op, x, axis, keepdims):
    if axis is None:          # numpy: the index into the flattened array
        if keepdims:
            _fail("'%s' with keepdims=True needs an axis" % op)
        x = reshape(x, (-1,)) if len(x.shape) != 1 else x
        axis = 0
    return reduce(op, x, axis, keepdims)


def _truediv(a, b):
    t = _operand_type((a, b))
    if t is not None and t not in FLOATS:
        _fail("'/' on %s: numpy divides integers to float64 and aicm's 'div' "
              "truncates; write .astype('float64') or aicm.div" % t)
    return elementwise("div", a, b)


def _unary_fn(op):
    return lambda x: elementwise(op, x)


def _binary_fn(op):
    return lambda a, b: elementwise(op, a, b)


# numpy's ufuncs by name, as aicm ops
_UFUNCS = {name: _unary_fn(op) for name, op in (
    ("negative", "neg"), ("exp", "exp"), ("log", "log"), ("sqrt", "sqrt"),
    ("tanh", "tanh"), ("absolute", "abs"), ("sin", "sin"), ("cos", "cos"),
    ("floor", "floor"), ("ceil", "ceil"), ("rint", "round"), ("sign", "sign"),
    ("isnan", "isnan"), ("logical_not", "not"), ("reciprocal", "reciprocal"))}
_UFUNCS.update({name: _binary_fn(op) for name, op in (
    ("add", "add"), ("subtract", "sub"), ("multiply", "mul"), ("maximum", "maximum"),
    ("minimum", "minimum"), ("power", "pow"), ("remainder", "mod"), ("fmod", "fmod"),
    ("equal", "equal"), ("less", "less"), ("less_equal", "less_equal"),
    ("greater", "greater"), ("greater_equal", "greater_equal"),
    ("logical_and", "and"), ("logical_or", "or"), ("logical_xor", "xor"),
    ("bitwise_and", "and"), ("bitwise_or", "or"), ("bitwise_xor", "xor"))})
_UFUNCS["true_divide"] = lambda a, b: _truediv(a, b)
_UFUNCS["matmul"] = lambda a, b: matmul(a, b)
_UFUNCS["not_equal"] = lambda a, b: elementwise("not", elementwise("equal", a, b))
_UFUNCS["invert"] = lambda x: ~x


def _np_reduce(op):
    def f(a, axis=None, keepdims=False):
        return reduce(op, a, axis, keepdims)
    return f


def _np_arg(op):
    def f(a, axis=None, keepdims=False):
        return _arg(op, a, axis, keepdims)
    return f


# numpy's functions (the __array_function__ protocol) by name
_FUNCTIONS = {
    "sum": _np_reduce("sum"), "max": _np_reduce("max"), "amax": _np_reduce("max"),
    "min": _np_reduce("min"), "amin": _np_reduce("min"), "mean": _np_reduce("mean"),
    "prod": _np_reduce("prod"), "argmax": _np_arg("argmax"), "argmin": _np_arg("argmin"),
    "where": lambda c, a, b: elementwise("where", c, a, b),
    "concatenate": lambda xs, axis=0: concat(xs, axis),
    "transpose": lambda a, axes=None: transpose(a, axes),
    "reshape": lambda a, newshape: reshape(a, newshape),
    "matmul": lambda a, b: matmul(a, b),
    "take": lambda a, indices, axis=None: gather(reshape(a, (-1,)) if axis is None else a,
                                                 indices, 0 if axis is None else axis),
    "broadcast_to": lambda a, shape: expand(a, shape),
    "round": lambda a, decimals=0: _round0(a, decimals),
    "around": lambda a, decimals=0: _round0(a, decimals),
}


def _round0(a, decimals):
    if decimals != 0:
        _fail("np.round with decimals=%r: aicm's 'round' has none" % (decimals,))
    return elementwise("round", a)


# ---- the graph ---------------------------------------------------------------

def _valid_name(s):
    out = "".join(c if (c.isascii() and (c.isalnum() or c == "_")) else "_" for c in s)
    if not out or out[0].isdigit():
        out = "_" + out
    return out


class Graph:
    """A traced graph: str() is the .aicm text (see the module's notes for
    the consts); inputs and outputs name its ends, consts holds the data of
    the captured arrays."""

    def __init__(self, name, nodes, outputs):
        self.name = name
        self._nodes = nodes
        self._outputs = outputs
        self.inputs = [n.name for n in nodes if n.op == "input"]
        self.outputs = [n.name for n in outputs]
        self.input_types = [(n.shape, np.dtype(_NP[n.dtype])) for n in nodes if n.op == "input"]
        self.output_types = [(n.shape, np.dtype(_NP[n.dtype])) for n in outputs]
        self.consts = {n.name: n.data for n in nodes if n.op == "const" and n.data is not None}
        # where each computed value and captured array came from: "file:line"
        self.lines = {n.name: "%s:%d" % n.where for n in nodes if n.where is not None}

    def __str__(self):
        return self.text()

    def __repr__(self):
        return "<aicm.Graph %s: %d nodes, inputs %s, outputs %s>" % (
            self.name, len(self._nodes), self.inputs, self.outputs)

    def __len__(self):
        return len(self._nodes)

    def text(self, data_dir=None, types=True):
        """The .aicm text.  data_dir: also write each captured array's data,
        inline (values=) up to 64 elements, else as data_dir/NAME.npy
        referenced with file=.  types=False leaves the computed values'
        types to shape-infer (inputs and consts keep theirs)."""
        lines = ["graph {"]
        for n in self._nodes:
            args = ", ".join("%" + a.name for a in n.args)
            s = "  %%%s = %s(%s)" % (n.name, n.op, args)
            if types or n.op in ("input", "const"):
                s += " : " + _type_str(n.shape, n.dtype)
            attrs = list(n.attrs)
            if n.op == "const" and n.data is not None and data_dir is not None:
                if n.data.size <= _INLINE_MAX:
                    attrs.append(("values", _Values(n.data, n.dtype)))
                else:
                    fn = n.name + ".npy"
                    np.save(os.path.join(data_dir, fn), n.data)
                    attrs.append(("file", _Quoted(fn)))
            for k, v in attrs:
                s += " %s=%s" % (k, v if isinstance(v, (_ScalarText, _Values, _Quoted))
                                 else _attr_str(v))
            lines.append(s)
        if self._default_outputs() != self._outputs:
            lines.append("  return " + ", ".join("%" + n.name for n in self._outputs))
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _default_outputs(self):
        used = set()
        for n in self._nodes:
            for a in n.args:
                used.add(id(a))
        return [n for n in self._nodes
                if n.op not in ("input", "const") and id(n) not in used]

    def save(self, path):
        """Writes the text with its data: small consts inline, larger ones
        as .npy files in PATH's stem + '.weights/' (as aicm-import does)."""
        stem = os.path.splitext(path)[0]
        wdir = stem + ".weights"
        big = [n for n in self._nodes if n.op == "const" and n.data is not None
               and n.data.size > _INLINE_MAX]
        if big:
            os.makedirs(wdir, exist_ok=True)
        text = self.text(data_dir=wdir)
        if big:
            rel = os.path.basename(wdir)
            text = text.replace(' file="', ' file="%s/' % rel)
        with open(path, "w") as f:
            f.write(text)
        return path


class _Values:
    def __init__(self, data, dtype):
        self.data = data
        self.dtype = dtype

    def __str__(self):
        vals = [_num_str(v, self.dtype) for v in self.data.reshape(-1).tolist()]
        if len(vals) == 1:
            return "(%s,)" % vals[0]
        return "(" + ", ".join(vals) + ")"


class _Quoted:
    def __init__(self, s):
        self.s = s

    def __str__(self):
        return '"' + self.s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _collect_outputs(r):
    if isinstance(r, Value):
        return [r]
    if isinstance(r, (tuple, list)):
        out = []
        for x in r:
            out.extend(_collect_outputs(x))
        return out
    if isinstance(r, dict):
        return _collect_outputs(list(r.values()))
    _fail("the traced function returned '%s'; expected a value computed from its "
          "inputs, or a tuple or list of them" % type(r).__name__)


def trace(fn, *example_inputs, **named_inputs):
    """Calls fn once on symbolic values shaped like the example inputs (numpy
    arrays, or anything np.asarray takes; positional, or by parameter name)
    and returns the Graph of what it computed.  Errors are aicm.Error with
    the file:line of the statement."""
    t = _Trace(fn)
    try:
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        star = [p for p in sig.parameters.values() if p.kind == p.VAR_POSITIONAL]
    except (TypeError, ValueError):
        params, star = [], []
    names = []
    for i in range(len(example_inputs)):
        if i < len(params):
            names.append(params[i].name)
        elif star:
            names.append("%s_%d" % (star[0].name, i - len(params)))
        else:
            raise _error_class()("trace: %d example inputs for a function of %d "
                                 "parameters" % (len(example_inputs), len(params)))
    examples = list(example_inputs)
    # named examples: each parameter after the positional ones, in the
    # function's order, so that the inputs keep the parameters' order
    rest = dict(named_inputs)
    for p in params[len(examples):]:
        if p.name in rest:
            names.append(p.name)
            examples.append(rest.pop(p.name))
        elif p.default is p.empty and rest:
            raise _error_class()("trace: no example for parameter '%s'" % p.name)
        else:
            break
    if rest:
        raise _error_class()("trace: '%s' is not a parameter given an example after the "
                             "positional ones" % sorted(rest)[0])
    args = []
    for name, a in zip(names, examples):
        arr = np.asarray(a)
        dt = _dtype_name(arr.dtype)
        if dt is None:
            raise _error_class()("trace: input '%s' has dtype %s; aicm's element types "
                                 "are float64, float32, int32, int64 and bool"
                                 % (name, arr.dtype))
        if arr.ndim > 8 or 0 in arr.shape:
            raise _error_class()("trace: input '%s' has shape %s; rank 0 to 8 and "
                                 "positive dimensions" % (name, arr.shape))
        n = _Node("input", [], [], arr.shape, dt, None)
        n.hint = name
        t.nodes.append(n)
        args.append(Value(t, n))
    old = sys.gettrace()
    sys.settrace(t.global_hook)
    try:
        r = fn(*args)
    finally:
        sys.settrace(old)
    outs = _collect_outputs(r)
    if not outs:
        raise _error_class()("trace: the function returned no value")
    for o in outs:
        if o._t is not t:
            raise _error_class()("trace: an output comes from another trace")
        if o._n.op in ("input", "const"):
            raise _error_class()("trace: output '%s' is an input or a constant; an output "
                                 "must be computed" % (o._n.hint or o._n.op))
    onodes = []
    for o in outs:
        if o._n not in onodes:
            onodes.append(o._n)
    nodes = _live(t.nodes, onodes)
    _name(nodes)
    name = getattr(fn, "__name__", "graph")
    return Graph(name, nodes, onodes)


def _live(nodes, outs):
    """The nodes the outputs depend on (and every input): the inputs, then
    the consts in the order of their first use, then the computed values in
    the order they ran (the seed's capture lists its sources first)."""
    keep = set(id(n) for n in nodes if n.op == "input")
    stack = list(outs)
    while stack:
        n = stack.pop()
        if id(n) in keep and n.op != "input":
            continue
        keep.add(id(n))
        stack.extend(n.args)
    live = [n for n in nodes if id(n) in keep]
    return ([n for n in live if n.op == "input"] + [n for n in live if n.op == "const"] +
            [n for n in live if n.op not in ("input", "const")])


def _name(nodes):
    """Names by priority: inputs, consts with a variable, computed values
    with a local, then the rest after their op, fx-style."""
    used = set()

    def take(base):
        base = _valid_name(base)
        cand, k = base, 0
        while cand in used:
            k += 1
            cand = "%s_%d" % (base, k)
        used.add(cand)
        return cand

    for n in nodes:
        if n.op == "input":
            n.name = take(n.hint)
    for n in nodes:
        if n.op == "const" and n.hint:
            n.name = take(n.hint)
    for n in nodes:
        if n.name is None and n.hint:
            n.name = take(n.hint)
    for n in nodes:
        if n.name is None:
            n.name = take(n.op)
