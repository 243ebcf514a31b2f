/*
 * ops_elem.c: ONNX's elementwise ops, as aicm ops or formulas over them.
 *
 * Every translator here is written once over Ev, a value that is either an
 * aicm node or elements known at import time (ops_elem_fold.c).  A node
 * whose inputs are all known (initializers, Constants, folded shape
 * computations: what a PyTorch export's shape arithmetic is made of), and
 * whose result has at most ELEM_FOLD_MAX elements, is computed here with
 * scalar.h's formulas, the runtime's own, into known data; otherwise every
 * input becomes a node and the same formula emits aicm ops.  The choice is
 * made once per ONNX node, over all its inputs, so the only known operands
 * an emitted op meets are the formula's own constants (one element: a
 * splat).
 *
 * ONNX ops with an aicm op of their own map onto it (the op table's type
 * sets check the element types: Relu on int32 from opset 14 is aicm's relu
 * on i32, Exp on an integer is not ONNX).  The others are formulas whose
 * results stay within ONNX's backend-test tolerance (rtol 1e-3, atol
 * 1e-5): LeakyRelu as where(x < 0, alpha*x, x), Softplus as
 * relu(x) + log(1 + exp(-|x|)), the hyperbolic functions in f64
 * for f32 inputs (x*x is exact there, so acosh near 1 keeps its digits),
 * and so on; docs/import.md shows each.  Asin, Acos and Atan are
 * unsupported: aicm has no atan to build them from.
 *
 * Versions: binary ops broadcast numpy's way from opset 7; before it,
 * 'broadcast=1' with an 'axis' aligned B's dims at that axis of A (the
 * legacy rule), which a reshape of B with 1s after its dims turns into
 * numpy's; variadic Max/Min/Sum/Mean broadcast from opset 8 (before, their
 * inputs share one shape).  Opsets before 6 carry 'consumed_inputs', a
 * hint for in-place buffers that changes no value: read and dropped.
 * Clip's bounds are attributes before opset 11 and optional inputs after;
 * Pow's exponent may have another type than its base from opset 12; Cast's
 * 'to' is a type name before opset 6 and a code after.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "import.h"
#include "ops_elem.h"

/* The name of the node computing output 0 (the formula's last op). */
#define OUT imp_out_name(im, 0)

/* ---- inputs ------------------------------------------------------------ */

/* Whether to fold a node over vals[0..n) (NULL entries are absent
 * optional inputs): every one known and their broadcast small enough.
 * Shapes that do not broadcast are left to the emitted op's error. */
static bool
can_fold(ImpVal *const *vals, int nv)
{
	Type t = {0};
	bool first = true;
	int64_t n;

	for (int k = 0; k < nv; k++) {
		if (!vals[k])
			continue;
		if (!vals[k]->k)
			return false;
		if (first)
			t = vals[k]->k->type;
		else if (!elem_bshape(&t, &vals[k]->k->type, &t))
			return false;
		first = false;
	}
	if (first)
		return false;
	n = ir_type_numel(&t);          /* -1: it overflows */
	return n >= 0 && n <= ELEM_FOLD_MAX;
}

/* The inputs 0..n-1 of the node (absent optional ones NULL), read as
 * values all known or all nodes; -1 after an error. */
static int
inputs(Imp *im, int n, int nreq, Ev *e)
{
	ImpVal *v[8];
	bool fold;

	for (int k = 0; k < n; k++) {
		v[k] = k < nreq ? imp_in_req(im, k) : imp_in(im, k);
		if (!v[k] && (k < nreq || im->rc))
			return -1;
	}
	fold = can_fold(v, n);
	for (int k = 0; k < n; k++) {
		e[k] = v[k] ? elem_in(im, v[k], fold) : ELEM_NONE;
		if (v[k] && !elem_ok(e[k]))
			return -1;
	}
	return 0;
}

/* The one data input of a unary op (opset 1's consumed_inputs dropped). */
static int
input1(Imp *im, Ev *x)
{
	imp_attr_ignore(im, "consumed_inputs", NULL);
	return inputs(im, 1, 1, x);
}

/* x's element type must be a float (the ONNX op takes only floats). */
static int
need_float(Imp *im, Ev x)
{
	DType dt = elem_type(im, x)->dt;

	if (!ir_dtype_is_float(dt))
		return imp_fail(im, "its input is %s, expected a floating-point type",
		    ir_dtype_name(dt));
	return 0;
}

/* A float attribute, or -1. */
static int
fattr(Imp *im, const char *name, double def, double *v)
{
	return imp_attr_float(im, name, def, v);
}

/* ---- one aicm op ------------------------------------------------------- */

static int
unary(Imp *im, OpId op)
{
	Ev x;

	if (input1(im, &x) != 0)
		return -1;
	return elem_out(im, elem_un(im, op, x, OUT));
}

#define UNARY(fn, op) int fn(Imp *im) { return unary(im, op); }
UNARY(onnx_relu, OP_RELU)
UNARY(onnx_neg, OP_NEG)
UNARY(onnx_exp, OP_EXP)
UNARY(onnx_log, OP_LOG)
UNARY(onnx_sqrt, OP_SQRT)
UNARY(onnx_tanh, OP_TANH)
UNARY(onnx_sigmoid, OP_SIGMOID)
UNARY(onnx_abs, OP_ABS)
UNARY(onnx_erf, OP_ERF)
UNARY(onnx_reciprocal, OP_RECIPROCAL)
UNARY(onnx_sin, OP_SIN)
UNARY(onnx_cos, OP_COS)
UNARY(onnx_floor, OP_FLOOR)
UNARY(onnx_ceil, OP_CEIL)
UNARY(onnx_round, OP_ROUND)
UNARY(onnx_sign, OP_SIGN)
UNARY(onnx_isnan, OP_ISNAN)
UNARY(onnx_not, OP_NOT)
#undef UNARY

/* B as numpy broadcasting sees it under the legacy rule (opset < 7):
 * with broadcast=1 and an axis, B's dims sit at A's axis..axis+rank(B)-1,
 * so B gets trailing 1s up to A's rank. */
static int
legacy_b(Imp *im, Ev a, Ev *b)
{
	int64_t bc, axis, dims[IR_MAX_RANK];
	bool has_axis = imp_has_attr(im, "axis");
	const Type *ta = elem_type(im, a), *tb = elem_type(im, *b);
	int ra = ta->rank, rb = tb->rank, k;

	if (imp_attr_int(im, "broadcast", 0, &bc) != 0 || imp_attr_int(im, "axis", -1, &axis) != 0)
		return -1;
	if (!bc) {
		if (!ir_same_dims(ta, tb))
			return imp_fail(im, "without 'broadcast' its operands must have one shape");
		return 0;
	}
	if (!has_axis)
		return 0;                /* suffix alignment: numpy's */
	if (axis < 0)
		axis += ra;
	if (axis < 0 || axis + rb > ra)
		return imp_fail(im, "'axis' %lld does not place B's rank %d inside A's rank %d",
		    (long long)axis, rb, ra);
	if (axis + rb == ra)
		return 0;
	for (k = 0; k < rb; k++)
		dims[k] = tb->dim[k];
	for (; k < ra - axis; k++)
		dims[k] = 1;
	*b = elem_reshape(im, *b, (int)(ra - axis), dims);
	return elem_ok(*b) ? 0 : -1;
}

/* The two operands of a binary op, the legacy rule applied; nofold_zero:
 * an integer divisor holding a 0 is not folded (the run time reports the
 * division by zero, naming the op). */
static int
operands2(Imp *im, Ev *e, bool nofold_zero)
{
	imp_attr_ignore(im, "consumed_inputs", NULL);
	if (inputs(im, 2, 2, e) != 0)
		return -1;
	if (nofold_zero && e[1].k && elem_has_int_zero(e[1].k)) {
		e[0] = elem_in(im, e[0].v, false);
		e[1] = elem_in(im, e[1].v, false);
		if (!elem_ok(e[0]) || !elem_ok(e[1]))
			return -1;
	}
	if (im->opset < 7 && legacy_b(im, e[0], &e[1]) != 0)
		return -1;
	return 0;
}

/*
 * numpy's broadcasting of a vector along the last dim (every other dim 1)
 * commutes with a reshape that keeps the last dim: op(reshape(x), c) is
 * reshape(op(x, c)).  Sinking the reshape below the op puts the op beside
 * x's producer, where fuse can take it: the importer's own batched MatMul
 * -> GEMM fold (ops_nn.c) leaves reshape(matmul) + bias, and the bias add
 * becomes the GEMM's epilogue instead of a kernel of its own (rule F3
 * compares shapes).  The reshape stays, a view for its consumers.  1 and
 * *y when it applies, 0 when it does not, -1 after an error.
 */
static int
sink_reshape(Imp *im, OpId op, Ev a, Ev b, Ev *y)
{
	for (int s = 0; s < 2; s++) {
		Ev r = s ? b : a, c = s ? a : b, xe, t;
		const Node *R;
		const Type *tx, *tc;
		int64_t n;

		if (r.k || r.node < 0 || im->g->nodes[r.node].op != OP_RESHAPE)
			continue;
		R = &im->g->nodes[r.node];
		tx = imp_type(im, R->in[0]);
		tc = elem_type(im, c);
		n = R->type.dim[R->type.rank - 1];
		if (n <= 1 || tx->rank < 1 || tx->dim[tx->rank - 1] != n || tc->rank < 1 ||
		    tc->rank > R->type.rank || tc->dim[tc->rank - 1] != n || ir_type_numel(tc) != n)
			continue;
		xe = (Ev){R->in[0], NULL, NULL};
		/* (c's other dims are 1: it broadcasts over x as it is, unless
		 * its rank is more than x's, which would raise the result's) */
		if (tc->rank > tx->rank && !elem_ok(c = elem_reshape(im, c, 1, &n)))
			return -1;
		t = s ? elem_bin(im, op, c, xe, NULL) : elem_bin(im, op, xe, c, NULL);
		if (!elem_ok(t))
			return -1;
		*y = (Ev){imp_reshape(im, OUT, elem_node(im, t), R->type.rank, R->type.dim), NULL,
		    NULL};
		return y->node < 0 ? -1 : 1;
	}
	return 0;
}

static int
binary(Imp *im, OpId op)
{
	Ev e[2], y;
	int sunk;

	if (operands2(im, e, op == OP_DIV) != 0)
		return -1;
	if ((sunk = sink_reshape(im, op, e[0], e[1], &y)) != 0)
		return sunk < 0 ? -1 : elem_out(im, y);
	return elem_out(im, elem_bin(im, op, e[0], e[1], OUT));
}

#define BINARY(fn, op) int fn(Imp *im) { return binary(im, op); }
BINARY(onnx_add, OP_ADD)
BINARY(onnx_sub, OP_SUB)
BINARY(onnx_mul, OP_MUL)
BINARY(onnx_div, OP_DIV)
BINARY(onnx_equal, OP_EQUAL)
BINARY(onnx_less, OP_LESS)
BINARY(onnx_less_equal, OP_LESS_EQUAL)
BINARY(onnx_greater, OP_GREATER)
BINARY(onnx_greater_equal, OP_GREATER_EQUAL)
BINARY(onnx_and, OP_AND)
BINARY(onnx_or, OP_OR)
BINARY(onnx_xor, OP_XOR)
#undef BINARY

/* Pow: from opset 12 the exponent may have its own type.  A float base
 * takes the exponent cast to its type (exact below 2^24 for f32, where
 * the power is computed in double anyway); an integer base with a float
 * exponent is numpy's: the power in f64, truncated back to the base's
 * type; two integer types meet in i64, an i32 result keeping the low 32
 * bits as numpy's astype does. */
int
onnx_pow(Imp *im)
{
	Ev e[2], r;
	DType ta, tb;

	if (operands2(im, e, false) != 0)
		return -1;
	ta = elem_type(im, e[0])->dt;
	tb = elem_type(im, e[1])->dt;
	/* x to a known single 2 (LayerNorm's variance as PyTorch exports it)
	 * is x*x: the correctly rounded square, without a pow call per
	 * element (f32's pow through f64 is exactly that square rounded) */
	if (e[0].node >= 0 && ir_dtype_is_float(ta) && e[1].v && e[1].v->k &&
	    ir_type_numel(&e[1].v->k->type) == 1 && imp_data_f64(e[1].v->k, 0) == 2.0 &&
	    e[1].v->k->type.rank <= elem_type(im, e[0])->rank)
		return elem_out(im, elem_bin(im, OP_MUL, e[0], e[0], OUT));
	if (ta == tb || im->opset < 12 || ta == DT_BOOL || tb == DT_BOOL)
		return elem_out(im, elem_bin(im, OP_POW, e[0], e[1], OUT));
	if (ir_dtype_is_float(ta))
		return elem_out(im, elem_bin(im, OP_POW, e[0], elem_cast(im, ta, e[1], NULL), OUT));
	if (ir_dtype_is_float(tb)) {
		e[0] = elem_cast(im, DT_F64, e[0], NULL);
		e[1] = elem_cast(im, DT_F64, e[1], NULL);
		r = elem_bin(im, OP_POW, e[0], e[1], NULL);
		return elem_out(im, elem_cast(im, ta, r, OUT));
	}
	if (ta == DT_I64)
		return elem_out(im, elem_bin(im, OP_POW, e[0], elem_cast(im, DT_I64, e[1], NULL), OUT));
	r = elem_bin(im, OP_POW, elem_cast(im, DT_I64, e[0], NULL), e[1], NULL);
	return elem_out(im, elem_cast(im, ta, r, OUT));
}

/* Mod: fmod=0 is numpy.mod (the divisor's sign: aicm mod), fmod=1 C's
 * fmod (the dividend's: aicm fmod); ONNX requires fmod=1 for floats. */
int
onnx_mod(Imp *im)
{
	Ev e[2];
	int64_t fm;

	if (imp_attr_int(im, "fmod", 0, &fm) != 0 || operands2(im, e, true) != 0)
		return -1;
	if (fm != 0 && fm != 1)
		return imp_fail(im, "'fmod' is %lld, expected 0 or 1", (long long)fm);
	if (!fm && ir_dtype_is_float(elem_type(im, e[0])->dt))
		return imp_fail(im, "'fmod' is 0 on %s inputs; ONNX requires fmod=1 for floating-point "
		    "types", ir_dtype_name(elem_type(im, e[0])->dt));
	return elem_out(im, elem_bin(im, fm ? OP_FMOD : OP_MOD, e[0], e[1], OUT));
}

/* BitShift takes only unsigned integers, which aicm does not have. */
int
onnx_bitshift(Imp *im)
{
	imp_attr_ignore(im, "direction", NULL);
	return imp_unsupported(im, "BitShift takes unsigned integers; aicm has none (i32, i64 "
	    "are signed)");
}

/* ---- several inputs ---------------------------------------------------- */

/* Max, Min, Sum, Mean of one or more inputs: a chain of maximum,
 * minimum or add (left to right, as ONNX's reference sums), the mean a
 * sum divided by the count.  One input is that input. */
static int
variadic(Imp *im, OpId op, bool mean)
{
	int n = imp_nin(im);
	Ev e, acc;
	ImpVal *v[64];
	bool fold;

	imp_attr_ignore(im, "consumed_inputs", NULL);
	if (n < 1)
		return imp_fail(im, "it has no inputs, expected one or more");
	if (n > 64)
		return imp_unsupported(im, "%d inputs (aicm-import takes at most 64)", n);
	for (int k = 0; k < n; k++)
		if (!(v[k] = imp_in_req(im, k)))
			return -1;
	for (int k = 1; k < n && im->opset < 8; k++)
		if (!ir_same_dims(&v[0]->type, &v[k]->type))
			return imp_fail(im, "before opset 8 its inputs share one shape; input %d differs "
			    "from input 0", k);
	if (mean && !ir_dtype_is_float(v[0]->type.dt))
		return imp_fail(im, "its inputs are %s, expected a floating-point type",
		    ir_dtype_name(v[0]->type.dt));
	fold = can_fold(v, n);
	acc = elem_in(im, v[0], fold);
	for (int k = 1; k < n && elem_ok(acc); k++) {
		e = elem_in(im, v[k], fold);
		if (!elem_ok(e))
			return -1;
		acc = elem_bin(im, op, acc, e, k == n - 1 && !mean ? OUT : NULL);
	}
	if (mean && n > 1)
		acc = elem_bin(im, OP_DIV, acc, elem_const(im, v[0]->type.dt, n, n), OUT);
	return elem_out(im, acc);
}

int onnx_max(Imp *im) { return variadic(im, OP_MAXIMUM, false); }
int onnx_min(Imp *im) { return variadic(im, OP_MINIMUM, false); }
int onnx_sum(Imp *im) { return variadic(im, OP_ADD, false); }
int onnx_mean(Imp *im) { return variadic(im, OP_ADD, true); }

/* Where(condition, X, Y): aicm where. */
int
onnx_where(Imp *im)
{
	Ev e[3];

	if (inputs(im, 3, 3, e) != 0)
		return -1;
	return elem_out(im, elem_where(im, e[0], e[1], e[2], OUT));
}

/* ---- types ------------------------------------------------------------- */

/* ONNX's element type code as aicm's; false for the ones aicm has not. */
static bool
onnx_code_dtype(int64_t code, DType *dt)
{
	switch (code) {
	case 1: *dt = DT_F32; return true;
	case 11: *dt = DT_F64; return true;
	case 6: *dt = DT_I32; return true;
	case 7: *dt = DT_I64; return true;
	case 9: *dt = DT_BOOL; return true;
	default: return false;
	}
}

static const char *
onnx_code_name(int64_t code)
{
	static const char *const names[] = {
		"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64",
		"string", "bool", "float16", "double", "uint32", "uint64", "complex64",
		"complex128", "bfloat16",
	};

	return code >= 0 && code < (int64_t)(sizeof names / sizeof names[0]) ? names[code] :
	    "an unknown type";
}

/* The cast of x to dt, the node's output.  Folded, a float that does not
 * fit an integer type (NaN, an infinity, out of range) is unsupported:
 * ONNX leaves it undefined (numpy gives the type's minimum), aicm
 * saturates and makes NaN 0, and a folded value must be ONNX's. */
static int
cast_out(Imp *im, Ev x, DType to)
{
	const ImpData *d = x.k;

	if (d && ir_dtype_is_float(d->type.dt) && ir_dtype_is_int(to)) {
		double lo = to == DT_I32 ? -0x1p31 : -0x1p63, hi = -lo;

		for (int64_t i = 0; i < ir_type_numel(&d->type); i++) {
			double v = imp_data_f64(d, i);

			if (!(v > lo - 1 && v < hi))
				return imp_unsupported(im, "a cast of %g to %s (ONNX leaves a value outside "
				    "the integer type undefined; aicm saturates it)", v, ir_dtype_name(to));
		}
	}
	return elem_out(im, elem_cast(im, to, x, OUT));
}

/* Cast: 'to' a TensorProto type code (opset 6 on), a type name before. */
int
onnx_cast(Imp *im)
{
	Ev x;
	DType to;

	if (im->opset < 6) {
		static const struct { const char *name; DType dt; } names[] = {
			{"FLOAT", DT_F32}, {"DOUBLE", DT_F64}, {"INT32", DT_I32}, {"INT64", DT_I64},
			{"BOOL", DT_BOOL},
		};
		const char *s;
		int k;

		if (imp_attr_str(im, "to", NULL, &s) != 0)
			return -1;
		if (!s)
			return imp_fail(im, "it has no 'to' attribute");
		for (k = 0; k < 5 && strcmp(names[k].name, s) != 0; k++)
			;
		if (k == 5)
			return imp_unsupported(im, "a cast to '%s' (aicm has float, double, int32, int64 "
			    "and bool)", s);
		to = names[k].dt;
	} else {
		int64_t code;

		if (imp_attr_int(im, "to", -1, &code) != 0)
			return -1;
		if (code < 0)
			return imp_fail(im, "it has no 'to' attribute");
		if (!onnx_code_dtype(code, &to))
			return imp_unsupported(im, "a cast to %s (aicm has float, double, int32, int64 "
			    "and bool)", onnx_code_name(code));
	}
	if (inputs(im, 1, 1, &x) != 0)
		return -1;
	return cast_out(im, x, to);
}

/* CastLike(input, target_type): a cast to target_type's element type. */
int
onnx_cast_like(Imp *im)
{
	Ev e[2];
	ImpVal *like = imp_in_req(im, 1);
	ImpVal *x = imp_in_req(im, 0);
	bool fold;

	if (!x || !like)
		return -1;
	fold = can_fold(&x, 1);
	e[0] = elem_in(im, x, fold);
	if (!elem_ok(e[0]))
		return -1;
	return cast_out(im, e[0], like->type.dt);
}

/* IsInf: |x| == inf, x == inf or x == -inf as detect_positive and
 * detect_negative ask; neither: all false. */
int
onnx_isinf(Imp *im)
{
	Ev x;
	int64_t pos, neg;
	DType dt;

	if (imp_attr_int(im, "detect_positive", 1, &pos) != 0 ||
	    imp_attr_int(im, "detect_negative", 1, &neg) != 0 || input1(im, &x) != 0 ||
	    need_float(im, x) != 0)
		return -1;
	dt = elem_type(im, x)->dt;
	if (pos && neg)
		return elem_out(im, elem_bin(im, OP_EQUAL, elem_un(im, OP_ABS, x, NULL),
		    elem_const(im, dt, INFINITY, 0), OUT));
	if (pos || neg)
		return elem_out(im, elem_bin(im, OP_EQUAL, x,
		    elem_const(im, dt, pos ? INFINITY : -INFINITY, 0), OUT));
	return elem_out(im, elem_full(im, DT_BOOL, 0, elem_type(im, x)));
}

/* ---- Clip -------------------------------------------------------------- */

/* Clip's bound v (input 1 min, 2 max, opset 11 on) as a value of x's
 * type with one element: known, the formula's constant; computed, its
 * node made rank 0.  ELEM_NONE when the input is absent. */
static int
clip_bound(Imp *im, Ev x, ImpVal *v, Ev *e, const char *what)
{
	DType dt = elem_type(im, x)->dt;

	*e = ELEM_NONE;
	if (!v)
		return 0;
	if (v->type.dt != dt)
		return imp_fail(im, "its %s is %s, its input %s", what, ir_dtype_name(v->type.dt),
		    ir_dtype_name(dt));
	if (ir_type_numel(&v->type) != 1)
		return imp_fail(im, "its %s has %lld elements, expected one", what,
		    (long long)ir_type_numel(&v->type));
	if (v->k) {
		*e = elem_const(im, dt, imp_data_f64(v->k, 0), imp_data_i64(v->k, 0));
	} else {
		*e = elem_in(im, v, false);
		if (elem_ok(*e) && v->type.rank > 0)
			*e = elem_reshape(im, *e, 0, NULL);
	}
	return elem_ok(*e) ? 0 : -1;
}

/* Clip: minimum(maximum(x, min), max), numpy's clip (a max below the
 * min wins); an absent bound clips nothing (opset 11 on), while before
 * opset 11 the attributes default to float's lowest and highest as the
 * spec says. */
int
onnx_clip(Imp *im)
{
	Ev x, lo, hi;
	ImpVal *v[3];
	DType dt;

	if (im->opset < 11) {
		double flo, fhi;

		imp_attr_ignore(im, "consumed_inputs", NULL);
		if (fattr(im, "min", -FLT_MAX, &flo) != 0 || fattr(im, "max", FLT_MAX, &fhi) != 0 ||
		    inputs(im, 1, 1, &x) != 0 || need_float(im, x) != 0)
			return -1;
		dt = elem_type(im, x)->dt;
		return elem_out(im, elem_bin(im, OP_MINIMUM, elem_bin(im, OP_MAXIMUM, x,
		    elem_const(im, dt, flo, 0), NULL), elem_const(im, dt, fhi, 0), OUT));
	}
	v[0] = imp_in_req(im, 0);
	v[1] = imp_in(im, 1);
	v[2] = imp_in(im, 2);
	if (!v[0] || im->rc)
		return -1;
	x = elem_in(im, v[0], can_fold(v, 3));
	if (!elem_ok(x) || clip_bound(im, x, v[1], &lo, "min") != 0 ||
	    clip_bound(im, x, v[2], &hi, "max") != 0)
		return -1;
	if (v[1])
		x = elem_bin(im, OP_MAXIMUM, x, lo, v[2] ? NULL : OUT);
	if (v[2])
		x = elem_bin(im, OP_MINIMUM, x, hi, OUT);
	return elem_out(im, x);
}

/* ---- activations ------------------------------------------------------- */

/* A constant of x's element type. */
static Ev
cx(Imp *im, Ev x, double v)
{
	DType dt = elem_type(im, x)->dt;
	/* the integer form only matters for an integer x (whole attributes,
	 * checked by the caller); saturated, as a cast, so that an alpha of
	 * 4e25 on a float x is no overflow */
	int64_t iv = isnan(v) ? 0 : v >= 9223372036854775807.0 ? INT64_MAX :
	    v <= -9223372036854775808.0 ? INT64_MIN : (int64_t)v;

	return elem_const(im, dt, v, iv);
}

/* LeakyRelu: where(x < 0, alpha * x, x). */
int
onnx_leaky_relu(Imp *im)
{
	Ev x, neg, m;
	double alpha;

	if (fattr(im, "alpha", 0.01, &alpha) != 0 || input1(im, &x) != 0 || need_float(im, x) != 0)
		return -1;
	neg = elem_bin(im, OP_LESS, x, cx(im, x, 0), NULL);
	m = elem_bin(im, OP_MUL, x, cx(im, x, alpha), NULL);
	return elem_out(im, elem_where(im, neg, m, x, OUT));
}

/* PRelu: where(x < 0, x * slope, x), slope broadcast to x's shape (from
 * opset 7 ONNX's unidirectional rule: numpy's, the result x's shape).
 * Before opset 7 a slope of one element is shared and a slope of X's
 * channel count (X's dim 1) is per channel, as PyTorch exported it. */
int
onnx_prelu(Imp *im)
{
	Ev e[2], neg, m;
	const Type *tx, *ts;
	Type b;

	imp_attr_ignore(im, "consumed_inputs", NULL);
	if (inputs(im, 2, 2, e) != 0)
		return -1;
	tx = elem_type(im, e[0]);
	ts = elem_type(im, e[1]);
	if (im->opset < 7 && ts->rank == 1 && tx->rank >= 2 && ts->dim[0] == tx->dim[1] &&
	    ts->dim[0] > 1) {
		int64_t dims[IR_MAX_RANK];

		dims[0] = ts->dim[0];
		for (int k = 1; k < tx->rank - 1; k++)
			dims[k] = 1;
		e[1] = elem_reshape(im, e[1], tx->rank - 1, dims);
		if (!elem_ok(e[1]))
			return -1;
		ts = elem_type(im, e[1]);
	}
	if (!elem_bshape(tx, ts, &b) || !ir_same_dims(&b, tx)) {
		char sx[IR_TYPE_STR], ss[IR_TYPE_STR];

		return imp_fail(im, "its slope %s does not broadcast to its input's shape %s",
		    ir_shape_str(ts, ss), ir_shape_str(tx, sx));
	}
	neg = elem_bin(im, OP_LESS, e[0], cx(im, e[0], 0), NULL);
	m = elem_bin(im, OP_MUL, e[0], e[1], NULL);
	return elem_out(im, elem_where(im, neg, m, e[0], OUT));
}

/* Elu: where(x < 0, alpha * (exp(x) - 1), x) (no multiply when alpha
 * is 1, PyTorch's default). */
int
onnx_elu(Imp *im)
{
	Ev x, m;
	double alpha;

	if (fattr(im, "alpha", 1.0, &alpha) != 0 || input1(im, &x) != 0 || need_float(im, x) != 0)
		return -1;
	m = elem_bin(im, OP_SUB, elem_un(im, OP_EXP, x, NULL), cx(im, x, 1), NULL);
	if (alpha != 1)
		m = elem_bin(im, OP_MUL, cx(im, x, alpha), m, NULL);
	return elem_out(im, elem_where(im, elem_bin(im, OP_LESS, x, cx(im, x, 0), NULL), m, x, OUT));
}

/* Selu: gamma * where(x > 0, x, alpha * exp(x) - alpha). */
int
onnx_selu(Imp *im)
{
	Ev x, m;
	double alpha, gamma;

	imp_attr_ignore(im, "consumed_inputs", NULL);
	if (fattr(im, "alpha", 1.67326319217681884765625, &alpha) != 0 ||
	    fattr(im, "gamma", 1.05070102214813232421875, &gamma) != 0 || input1(im, &x) != 0 ||
	    need_float(im, x) != 0)
		return -1;
	m = elem_bin(im, OP_MUL, cx(im, x, alpha), elem_un(im, OP_EXP, x, NULL), NULL);
	m = elem_bin(im, OP_SUB, m, cx(im, x, alpha), NULL);
	m = elem_where(im, elem_bin(im, OP_GREATER, x, cx(im, x, 0), NULL), x, m, NULL);
	return elem_out(im, elem_bin(im, OP_MUL, m, cx(im, x, gamma), OUT));
}

/* Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), the spec's
 * formula. */
int
onnx_celu(Imp *im)
{
	Ev x, m;
	double alpha;

	if (fattr(im, "alpha", 1.0, &alpha) != 0 || input1(im, &x) != 0 || need_float(im, x) != 0)
		return -1;
	m = elem_un(im, OP_EXP, elem_bin(im, OP_DIV, x, cx(im, x, alpha), NULL), NULL);
	m = elem_bin(im, OP_MUL, cx(im, x, alpha), elem_bin(im, OP_SUB, m, cx(im, x, 1), NULL),
	    NULL);
	m = elem_bin(im, OP_MINIMUM, cx(im, x, 0), m, NULL);
	return elem_out(im, elem_bin(im, OP_ADD, elem_bin(im, OP_MAXIMUM, cx(im, x, 0), x, NULL),
	    m, OUT));
}

/* min(max(alpha * x + beta, 0), 1): HardSigmoid's body, name for its
 * last op. */
static Ev
hard_sigmoid(Imp *im, Ev x, double alpha, double beta, const char *name)
{
	Ev m = elem_bin(im, OP_ADD, elem_bin(im, OP_MUL, x, cx(im, x, alpha), NULL),
	    cx(im, x, beta), NULL);

	m = elem_bin(im, OP_MAXIMUM, m, cx(im, x, 0), NULL);
	return elem_bin(im, OP_MINIMUM, m, cx(im, x, 1), name);
}

int
onnx_hard_sigmoid(Imp *im)
{
	Ev x;
	double alpha, beta;

	imp_attr_ignore(im, "consumed_inputs", NULL);
	if (fattr(im, "alpha", 0.2, &alpha) != 0 || fattr(im, "beta", 0.5, &beta) != 0 ||
	    input1(im, &x) != 0 || need_float(im, x) != 0)
		return -1;
	return elem_out(im, hard_sigmoid(im, x, alpha, beta, OUT));
}

/* HardSwish: x * HardSigmoid(x) with alpha 1/6, beta 0.5. */
int
onnx_hard_swish(Imp *im)
{
	Ev x;

	if (input1(im, &x) != 0 || need_float(im, x) != 0)
		return -1;
	return elem_out(im, elem_bin(im, OP_MUL, x, hard_sigmoid(im, x, 1.0 / 6, 0.5, NULL), OUT));
}

/* Softplus: log(exp(x) + 1) as relu(x) + log(1 + exp(-|x|)), the same
 * value without exp's overflow: for x past 88 (f32) ONNX's reference
 * formula gives inf where softplus is x. */
int
onnx_softplus(Imp *im)
{
	Ev x, pos, m;

	if (input1(im, &x) != 0 || need_float(im, x) != 0)
		return -1;
	pos = elem_un(im, OP_RELU, x, NULL);
	m = elem_un(im, OP_EXP, elem_un(im, OP_NEG, elem_un(im, OP_ABS, x, NULL), NULL), NULL);
	m = elem_un(im, OP_LOG, elem_bin(im, OP_ADD, cx(im, x, 1), m, NULL), NULL);
	return elem_out(im, elem_bin(im, OP_ADD, pos, m, OUT));
}

/* Softsign: x / (1 + |x|). */
int
onnx_softsign(Imp *im)
{
	Ev x;

	if (input1(im, &x) != 0 || need_float(im, x) != 0)
		return -1;
	return elem_out(im, elem_bin(im, OP_DIV, x, elem_bin(im, OP_ADD, cx(im, x, 1),
	    elem_un(im, OP_ABS, x, NULL), NULL), OUT));
}

/* ThresholdedRelu: where(x > alpha, x, 0). */
int
onnx_thresholded_relu(Imp *im)
{
	Ev x;
	double alpha;

	if (fattr(im, "alpha", 1.0, &alpha) != 0 || input1(im, &x) != 0 || need_float(im, x) != 0)
		return -1;
	return elem_out(im, elem_where(im, elem_bin(im, OP_GREATER, x, cx(im, x, alpha), NULL), x,
	    cx(im, x, 0), OUT));
}

/* Shrink: where(x < -lambd, x + bias, where(x > lambd, x - bias, 0)).
 * On integers only with whole lambd and bias, where every reading of
 * the float attributes agrees. */
int
onnx_shrink(Imp *im)
{
	Ev x, m, c, v;
	double lambd, bias;

	if (fattr(im, "lambd", 0.5, &lambd) != 0 || fattr(im, "bias", 0, &bias) != 0 ||
	    input1(im, &x) != 0)
		return -1;
	if (!ir_dtype_is_float(elem_type(im, x)->dt)) {
		if (elem_type(im, x)->dt == DT_BOOL)
			return imp_fail(im, "its input is bool, expected a number");
		if (lambd != trunc(lambd) || bias != trunc(bias) || fabs(lambd) > 0x1p31 ||
		    fabs(bias) > 0x1p31)
			return imp_unsupported(im, "Shrink on %s with a fractional lambd %g or bias %g",
			    ir_dtype_name(elem_type(im, x)->dt), lambd, bias);
	}
	c = elem_bin(im, OP_GREATER, x, cx(im, x, lambd), NULL);
	v = elem_bin(im, OP_SUB, x, cx(im, x, bias), NULL);
	m = elem_where(im, c, v, cx(im, x, 0), NULL);
	c = elem_bin(im, OP_LESS, x, cx(im, x, -lambd), NULL);
	v = elem_bin(im, OP_ADD, x, cx(im, x, bias), NULL);
	return elem_out(im, elem_where(im, c, v, m, OUT));
}

/* ---- trigonometry ------------------------------------------------------ */

/* Tan: sin(x) / cos(x) (each correctly rounded, so the quotient is within
 * a few ulps). */
int
onnx_tan(Imp *im)
{
	Ev x, s, c;

	if (input1(im, &x) != 0 || need_float(im, x) != 0)
		return -1;
	s = elem_un(im, OP_SIN, x, NULL);
	c = elem_un(im, OP_COS, x, NULL);
	return elem_out(im, elem_bin(im, OP_DIV, s, c, OUT));
}

/* The hyperbolic formulas compute in f64 (an f32 input cast up and the
 * result cast back): exp(x) of an f32 overflows before sinh(x) does, and
 * x*x of an f32 is exact in f64, which keeps acosh's digits near 1. */
typedef enum Hyp { SINH, COSH, ASINH, ACOSH, ATANH } Hyp;

static int
hyperbolic(Imp *im, Hyp h)
{
	Ev x, a, r, one;
	DType dt;
	const char *last;

	if (input1(im, &x) != 0 || need_float(im, x) != 0)
		return -1;
	dt = elem_type(im, x)->dt;
	last = dt == DT_F64 ? OUT : NULL;
	x = elem_cast(im, DT_F64, x, NULL);
	one = elem_const(im, DT_F64, 1, 1);
	switch (h) {
	case SINH:
	case COSH:
		/* (exp(x) -+ exp(-x)) / 2 */
		a = elem_un(im, OP_EXP, x, NULL);
		r = elem_un(im, OP_EXP, elem_un(im, OP_NEG, x, NULL), NULL);
		r = elem_bin(im, h == SINH ? OP_SUB : OP_ADD, a, r, NULL);
		r = elem_bin(im, OP_MUL, r, elem_const(im, DT_F64, 0.5, 0), last);
		break;
	case ASINH:
		/* sign(x) * log(|x| + sqrt(x*x + 1)): odd, so no cancellation
		 * for x < 0 */
		a = elem_un(im, OP_ABS, x, NULL);
		r = elem_un(im, OP_SQRT, elem_bin(im, OP_ADD, elem_bin(im, OP_MUL, a, a, NULL), one,
		    NULL), NULL);
		r = elem_un(im, OP_LOG, elem_bin(im, OP_ADD, a, r, NULL), NULL);
		a = elem_un(im, OP_SIGN, x, NULL);
		r = elem_bin(im, OP_MUL, a, r, last);
		break;
	case ACOSH:
		/* log(x + sqrt((x - 1) * (x + 1))): NaN below 1, as acosh */
		a = elem_bin(im, OP_SUB, x, one, NULL);
		r = elem_bin(im, OP_MUL, a, elem_bin(im, OP_ADD, x, one, NULL), NULL);
		r = elem_un(im, OP_LOG, elem_bin(im, OP_ADD, x, elem_un(im, OP_SQRT, r, NULL), NULL),
		    last);
		break;
	case ATANH:
		/* log((1 + x) / (1 - x)) / 2 */
		a = elem_bin(im, OP_ADD, one, x, NULL);
		r = elem_bin(im, OP_DIV, a, elem_bin(im, OP_SUB, one, x, NULL), NULL);
		r = elem_bin(im, OP_MUL, elem_un(im, OP_LOG, r, NULL),
		    elem_const(im, DT_F64, 0.5, 0), last);
		break;
	}
	return elem_out(im, elem_cast(im, dt, r, OUT));
}

int onnx_sinh(Imp *im) { return hyperbolic(im, SINH); }
int onnx_cosh(Imp *im) { return hyperbolic(im, COSH); }
int onnx_asinh(Imp *im) { return hyperbolic(im, ASINH); }
int onnx_acosh(Imp *im) { return hyperbolic(im, ACOSH); }
int onnx_atanh(Imp *im) { return hyperbolic(im, ATANH); }

/* Asin, Acos, Atan: aicm has no atan (nor asin, acos) to build them from,
 * and a polynomial over its ops would not be exact enough everywhere. */
int
onnx_arc_trig(Imp *im)
{
	return imp_unsupported(im, "aicm has no inverse trigonometric op (asin, acos, atan), "
	    "and none of its ops builds one exactly");
}
