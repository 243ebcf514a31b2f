/*
 * ops_elem.c: ONNX's elementwise ops, each one aicm op.
 *
 * Unary and binary ops map one to one onto the op table's rows; the aicm
 * op's type set checks the element type (ONNX's Relu on int32 from opset 14
 * is aicm's relu on i32, Exp on an integer is not ONNX).  Binary ops
 * broadcast numpy's way from opset 7; before it, 'broadcast=1' with an
 * 'axis' aligned B's dims at that axis of A (the legacy rule), which a
 * reshape of B with 1s around its dims turns into numpy's.  Opsets before 6
 * carry 'consumed_inputs', a hint for in-place buffers that changes no
 * value: read and dropped.
 */
#include "import.h"

static int
unary(Imp *im, OpId op)
{
	ImpVal *x = imp_in_req(im, 0);

	imp_attr_ignore(im, "consumed_inputs", NULL);
	if (!x)
		return -1;
	return imp_out(im, 0, imp_unary(im, op, imp_out_name(im, 0), imp_node_of(im, x)));
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
legacy_b(Imp *im, int a, int b)
{
	int64_t bc, axis, dims[IR_MAX_RANK];
	bool has_axis = imp_has_attr(im, "axis");
	const Type *ta = imp_type(im, a), *tb = imp_type(im, b);
	int ra = ta->rank, rb = tb->rank, k;

	if (imp_attr_int(im, "broadcast", 0, &bc) != 0 || imp_attr_int(im, "axis", -1, &axis) != 0)
		return -1;
	if (!bc) {
		if (!ir_same_dims(ta, tb))
			return imp_fail(im, "without 'broadcast' its operands must have one shape");
		return b;
	}
	if (!has_axis)
		return b;                /* suffix alignment: numpy's */
	if (axis < 0)
		axis += ra;
	if (axis < 0 || axis + rb > ra)
		return imp_fail(im, "'axis' %lld does not place B's rank %d inside A's rank %d",
		    (long long)axis, rb, ra);
	if (axis + rb == ra)
		return b;
	for (k = 0; k < rb; k++)
		dims[k] = tb->dim[k];
	for (; k < ra - axis; k++)
		dims[k] = 1;
	return imp_reshape(im, NULL, b, (int)(ra - axis), dims);
}

static int
binary(Imp *im, OpId op)
{
	ImpVal *x = imp_in_req(im, 0), *y = imp_in_req(im, 1);
	int a, b;

	imp_attr_ignore(im, "consumed_inputs", NULL);
	if (!x || !y)
		return -1;
	a = imp_node_of(im, x);
	b = imp_node_of(im, y);
	if (a < 0 || b < 0)
		return -1;
	if (im->opset < 7 && (b = legacy_b(im, a, b)) < 0)
		return -1;
	return imp_out(im, 0, imp_binary(im, op, imp_out_name(im, 0), a, b));
}

#define BINARY(fn, op) int fn(Imp *im) { return binary(im, op); }
BINARY(onnx_add, OP_ADD)
BINARY(onnx_sub, OP_SUB)
BINARY(onnx_mul, OP_MUL)
BINARY(onnx_div, OP_DIV)
BINARY(onnx_pow, OP_POW)
BINARY(onnx_equal, OP_EQUAL)
BINARY(onnx_less, OP_LESS)
BINARY(onnx_less_equal, OP_LESS_EQUAL)
BINARY(onnx_greater, OP_GREATER)
BINARY(onnx_greater_equal, OP_GREATER_EQUAL)
BINARY(onnx_and, OP_AND)
BINARY(onnx_or, OP_OR)
BINARY(onnx_xor, OP_XOR)
#undef BINARY
