"""The op table, as the Python package sees it.

An installed package cannot read src/ir/ops.def at run time, so the rows the
tracer needs (operand counts, the element types the data operands take, the
result's element type) are written here once more, and tests/python_trace.py
parses ops.def and fails when the two disagree: a row added to the C table
without one here (or a changed type rule) breaks `make check` instead of
drifting.  PYFUNC names the function of the aicm namespace that builds each
op, for the ops whose text spelling is a Python keyword (not, and, or) or
that numpy spells differently (concat).
"""

# name: (class, nmin, nmax, types, result); nmax None is IR_VARIADIC
OPS = {
    "input": ("OC_SOURCE", 0, 0, "TY_ANY", "RT_SOURCE"),
    "const": ("OC_SOURCE", 0, 0, "TY_ANY", "RT_SOURCE"),
    "relu": ("OC_UNARY", 1, 1, "TY_NUM", "RT_SAME"),
    "neg": ("OC_UNARY", 1, 1, "TY_NUM", "RT_SAME"),
    "exp": ("OC_UNARY", 1, 1, "TY_FLOAT", "RT_SAME"),
    "log": ("OC_UNARY", 1, 1, "TY_FLOAT", "RT_SAME"),
    "sqrt": ("OC_UNARY", 1, 1, "TY_FLOAT", "RT_SAME"),
    "tanh": ("OC_UNARY", 1, 1, "TY_FLOAT", "RT_SAME"),
    "sigmoid": ("OC_UNARY", 1, 1, "TY_FLOAT", "RT_SAME"),
    "abs": ("OC_UNARY", 1, 1, "TY_NUM", "RT_SAME"),
    "erf": ("OC_UNARY", 1, 1, "TY_FLOAT", "RT_SAME"),
    "reciprocal": ("OC_UNARY", 1, 1, "TY_FLOAT", "RT_SAME"),
    "sin": ("OC_UNARY", 1, 1, "TY_FLOAT", "RT_SAME"),
    "cos": ("OC_UNARY", 1, 1, "TY_FLOAT", "RT_SAME"),
    "floor": ("OC_UNARY", 1, 1, "TY_FLOAT", "RT_SAME"),
    "ceil": ("OC_UNARY", 1, 1, "TY_FLOAT", "RT_SAME"),
    "round": ("OC_UNARY", 1, 1, "TY_FLOAT", "RT_SAME"),
    "sign": ("OC_UNARY", 1, 1, "TY_NUM", "RT_SAME"),
    "isnan": ("OC_UNARY", 1, 1, "TY_FLOAT", "RT_BOOL"),
    "not": ("OC_UNARY", 1, 1, "TY_BOOL", "RT_BOOL"),
    "cast": ("OC_UNARY", 1, 1, "TY_ANY", "RT_TO"),
    "add": ("OC_BINARY", 2, 2, "TY_NUM", "RT_SAME"),
    "sub": ("OC_BINARY", 2, 2, "TY_NUM", "RT_SAME"),
    "mul": ("OC_BINARY", 2, 2, "TY_NUM", "RT_SAME"),
    "div": ("OC_BINARY", 2, 2, "TY_NUM", "RT_SAME"),
    "maximum": ("OC_BINARY", 2, 2, "TY_NUM", "RT_SAME"),
    "minimum": ("OC_BINARY", 2, 2, "TY_NUM", "RT_SAME"),
    "pow": ("OC_BINARY", 2, 2, "TY_NUM", "RT_SAME"),
    "mod": ("OC_BINARY", 2, 2, "TY_NUM", "RT_SAME"),
    "fmod": ("OC_BINARY", 2, 2, "TY_NUM", "RT_SAME"),
    "equal": ("OC_BINARY", 2, 2, "TY_ANY", "RT_BOOL"),
    "less": ("OC_BINARY", 2, 2, "TY_NUM", "RT_BOOL"),
    "less_equal": ("OC_BINARY", 2, 2, "TY_NUM", "RT_BOOL"),
    "greater": ("OC_BINARY", 2, 2, "TY_NUM", "RT_BOOL"),
    "greater_equal": ("OC_BINARY", 2, 2, "TY_NUM", "RT_BOOL"),
    "and": ("OC_BINARY", 2, 2, "TY_BOOL", "RT_BOOL"),
    "or": ("OC_BINARY", 2, 2, "TY_BOOL", "RT_BOOL"),
    "xor": ("OC_BINARY", 2, 2, "TY_BOOL", "RT_BOOL"),
    "where": ("OC_WHERE", 3, 3, "TY_ANY", "RT_SAME"),
    "sum": ("OC_REDUCTION", 1, 1, "TY_NUM", "RT_SAME"),
    "max": ("OC_REDUCTION", 1, 1, "TY_NUM", "RT_SAME"),
    "mean": ("OC_REDUCTION", 1, 1, "TY_FLOAT", "RT_SAME"),
    "min": ("OC_REDUCTION", 1, 1, "TY_NUM", "RT_SAME"),
    "prod": ("OC_REDUCTION", 1, 1, "TY_NUM", "RT_SAME"),
    "argmax": ("OC_ARGREDUCE", 1, 1, "TY_NUM", "RT_I64"),
    "argmin": ("OC_ARGREDUCE", 1, 1, "TY_NUM", "RT_I64"),
    "matmul": ("OC_CONTRACTION", 2, 2, "TY_NUM", "RT_SAME"),
    "transpose": ("OC_LAYOUT", 1, 1, "TY_ANY", "RT_SAME"),
    "reshape": ("OC_LAYOUT", 1, 1, "TY_ANY", "RT_SAME"),
    "concat": ("OC_COPY", 1, None, "TY_ANY", "RT_SAME"),
    "slice": ("OC_COPY", 1, 1, "TY_ANY", "RT_SAME"),
    "pad": ("OC_COPY", 1, 1, "TY_ANY", "RT_SAME"),
    "gather": ("OC_COPY", 2, 2, "TY_ANY", "RT_SAME"),
    "expand": ("OC_COPY", 1, 1, "TY_ANY", "RT_SAME"),
    "conv2d": ("OC_CONV", 2, 3, "TY_FLOAT", "RT_SAME"),
    "max_pool2d": ("OC_POOL", 1, 1, "TY_FLOAT", "RT_SAME"),
    "avg_pool2d": ("OC_POOL", 1, 1, "TY_FLOAT", "RT_SAME"),
    "tiled": ("OC_TILED", 0, 0, "TY_ANY", "RT_SOURCE"),
}

# ops that no aicm.<name> function builds: the sources are the function's
# parameters and captured arrays, and 'tiled' only a pass writes
NOT_CALLABLE = ("input", "const", "tiled")

# the aicm function for each op whose name is not the op's own
PYFUNC = {
    "not": "logical_not",
    "and": "logical_and",
    "or": "logical_or",
    "xor": "logical_xor",
    "concat": "concatenate",
}

# element types: the text's keyword for each numpy dtype the op set has
DTYPES = {"float64": "f64", "float32": "f32", "int32": "i32", "int64": "i64", "bool": "bool"}
FLOATS = ("f32", "f64")
