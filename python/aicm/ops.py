"""aicm.relu, aicm.exp, ...: one function per op of the op table.

Each builds a node of a trace when an operand is a traced Value (numpy arrays
and Python numbers beside it become consts); the names are numpy's where
numpy has the function (maximum, concatenate, logical_not, argmax, ...) and
the op's own otherwise (relu, sigmoid, conv2d).  The op table's rows are in
optable.py: the unary, binary and reduction ops' functions are made from its
rows, the others are written here; tests/python_trace.py checks that every op
there has its function, so adding an op to src/ir/ops.def without one fails
`make check`.
"""

import sys as _sys

from . import trace as _trace_module  # noqa: F401 (loads it)
from .optable import OPS as _OPS, PYFUNC as _PYFUNC

# the module, not the function aicm/__init__.py rebinds the name 'trace' to
_t = _sys.modules[__package__ + ".trace"]


def _unary(op):
    def f(x):
        return _t.elementwise(op, x)
    f.__name__ = op
    f.__doc__ = "aicm's '%s' op on a traced value (DESIGN sections 3 and 12)." % op
    return f


def _binary(op):
    def f(a, b):
        return _t.elementwise(op, a, b)
    f.__name__ = op
    f.__doc__ = ("aicm's '%s' op: numpy broadcasting, one element type "
                 "(no promotion)." % op)
    return f


def _reduction(op):
    def f(x, axis=None, keepdims=False):
        return _t.reduce(op, x, axis, keepdims)
    f.__name__ = op
    f.__doc__ = ("aicm's '%s' reduction: axis an int, a tuple or None (all), "
                 "keepdims as numpy's." % op)
    return f


# one function per elementwise and reduction op of the table, named as
# optable.PYFUNC says; cast takes its element type and is written below
_MAKE = {"OC_UNARY": _unary, "OC_BINARY": _binary, "OC_REDUCTION": _reduction}
for _op, _row in _OPS.items():
    if _row[0] in _MAKE and _op != "cast":
        _fn = _MAKE[_row[0]](_op)
        _fn.__name__ = _PYFUNC.get(_op, _op)
        globals()[_fn.__name__] = _fn
del _op, _row, _fn

# numpy's spellings of some of them
negative = neg  # noqa: F821 (made above)
subtract = sub  # noqa: F821
multiply = mul  # noqa: F821
power = pow


def argmax(x, axis=None, keepdims=False):
    """Index of the largest element along axis (i64); axis=None: of the
    flattened value, as numpy's."""
    return _t._arg("argmax", x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    """Index of the smallest element along axis (i64), as numpy's."""
    return _t._arg("argmin", x, axis, keepdims)


def where(cond, a, b):
    """a where cond holds, else b; the three broadcast, a and b one type."""
    return _t.elementwise("where", cond, a, b)


def cast(x, dtype):
    """x as another element type (DESIGN 12's rules: float to int truncates
    and saturates); the same as x.astype(dtype)."""
    return _t.cast(x, dtype)


def matmul(a, b):
    """numpy's matmul: 1-D operands promoted, batch dimensions broadcast."""
    return _t.matmul(a, b)


def transpose(x, axes=None):
    """numpy's transpose: axes=None reverses them all."""
    return _t.transpose(x, axes)


def reshape(x, shape):
    """numpy's reshape (one -1 allowed)."""
    return _t.reshape(x, shape)


def concatenate(xs, axis=0):
    """numpy's concatenate of a sequence of values of one type."""
    return _t.concat(xs, axis)


concat = concatenate


def slice(x, starts, ends, axes=None, steps=None):
    """ONNX Slice as aicm's 'slice' op writes it; x[a:b:c] is the usual way."""
    return _t.slice_op(x, starts, ends, axes, steps)


def pad(x, pads, value=0):
    """Pads (all begins, then all ends, ONNX's order; negative crops) with
    value."""
    return _t.pad(x, pads, value)


def gather(data, indices, axis=0):
    """numpy's take(data, indices, axis); indices i32 or i64."""
    return _t.gather(data, indices, axis)


take = gather


def expand(x, shape):
    """x broadcast to np.broadcast_shapes(x.shape, shape) (ONNX Expand)."""
    return _t.expand(x, shape)


def broadcast_to(x, shape):
    """numpy's broadcast_to, as expand."""
    return _t.expand(x, shape)


def conv2d(x, w, bias=None, strides=1, pads=0, dilations=1, groups=1):
    """x (N, C, H, W) with w (F, C/groups, KH, KW), optional bias (F,);
    pads (t, l, b, r), (h, w) or one number."""
    return _t.conv2d(x, w, bias, strides, pads, dilations, groups)


def max_pool2d(x, kernel, strides=1, pads=0, dilations=1, ceil_mode=False):
    """Max over windows of x (N, C, H, W); strides default 1 as ONNX's."""
    return _t.pool2d("max_pool2d", x, kernel, strides, pads, dilations, ceil_mode)


def avg_pool2d(x, kernel, strides=1, pads=0, dilations=1, ceil_mode=False,
               count_include_pad=False):
    """Mean over windows of x (N, C, H, W)."""
    return _t.pool2d("avg_pool2d", x, kernel, strides, pads, dilations, ceil_mode,
                     count_include_pad)
