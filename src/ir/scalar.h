/*
 * scalar.h: each graph op's scalar formula, written once (DESIGN §12).
 *
 * The reference interpreter, the tile executor's scalar paths and the
 * vector kernels' scalar tails (src/runtime/) compute an op's elements
 * with these, and so will the C emitter (src/codegen/, which must not
 * include the runtime): one formula, so that the engines agree to the bit
 * where they compute in the same type (relu of -0 is +0, a NaN wins in
 * maximum and max, sigmoid is 1 / (1 + e^-x) and nothing else).
 *
 * The formulas are X-macro rows, X(ID, expression), in the operand names
 * x (unary), a and b (binary), acc and v (a reduction's combining step,
 * acc the value so far).  An expression is C for any floating type and
 * keeps that type where the op is exact in it (relu's 0 is an int, so a
 * float's relu stays a float): a kernel on floats instantiates the same
 * text on floats and gets the bits it would get by hand, and an emitter
 * can print a formula (#expression).  ir_scalar_unary, ir_scalar_binary
 * and ir_scalar_combine are the formulas on doubles (the _f32 ones on
 * floats), switched on the op; with a constant op they fold to the one
 * expression.
 *
 * A reduction's row also names its neutral element, the value that an
 * empty reduction and a masked lane take: 0 for a sum, the element type's
 * lowest value for a max (-inf for floats, an integer type's minimum:
 * ir_scalar_lowest is where a new element type says it), the highest for
 * a min (ir_scalar_highest), 1 for a prod.  mean combines as
 * a sum; the one division by the count is the caller's.
 *
 * Adding an elementwise op is its row in ops.def and its row here; the
 * interpreter and the tile executor then run it with no other change (an
 * OC_UNARY or OC_BINARY op without a row here does not compile: the
 * interpreter's kernel table asks for it).
 */
#ifndef AICM_SCALAR_H
#define AICM_SCALAR_H

#include <math.h>

#include "diag.h"
#include "ir.h"

/* X(ID, formula in x): every OC_UNARY op. */
#define IR_SCALAR_UNARY(X)                                                     \
	X(RELU, isnan(x) || x > 0 ? x : 0)    /* NaN stays NaN, -0 becomes 0 */ \
	X(NEG, -x)                                                             \
	X(EXP, exp(x))                                                         \
	X(LOG, log(x))                                                         \
	X(SQRT, sqrt(x))                                                       \
	X(TANH, tanh(x))                                                       \
	X(SIGMOID, 1.0 / (1.0 + exp(-x)))                                      \
	X(ABS, fabs(x))                                                        \
	X(ERF, erf(x))                                                         \
	X(RECIPROCAL, 1.0 / x)                                                 \
	X(SIN, sin(x))

/* X(ID, formula in a and b): every OC_BINARY op. */
#define IR_SCALAR_BINARY(X)                                                    \
	X(ADD, a + b)                                                          \
	X(SUB, a - b)                                                          \
	X(MUL, a * b)                                                          \
	X(DIV, a / b)                                                          \
	X(MAXIMUM, isnan(a) || a >= b ? a : b)   /* np.maximum: a NaN on    */ \
	X(MINIMUM, isnan(a) || a <= b ? a : b)   /* either side wins        */

/* X(ID, combining step in acc and v, neutral element in dt): every
 * OC_REDUCTION op.  max and min keep a NaN once met, as np.max and
 * np.min: NaN > x and NaN < x are false.  prod's NaN propagates by
 * arithmetic. */
#define IR_SCALAR_REDUCE(X)                                                    \
	X(SUM, acc + v, 0.0)                                                   \
	X(MAX, isnan(v) || v > acc ? v : acc, ir_scalar_lowest(dt))            \
	X(MEAN, acc + v, 0.0)                                                  \
	X(MIN, isnan(v) || v < acc ? v : acc, ir_scalar_highest(dt))           \
	X(PROD, acc * v, 1.0)

/* The lowest value of element type dt: a max's neutral element. */
static inline double
ir_scalar_lowest(DType dt)
{
	switch (dt) {
	case DT_F64:
	case DT_F32:
		return -INFINITY;
	case DT_I32:
		return (double)INT32_MIN;
	case DT_I64:
		return (double)INT64_MIN;
	case DT_BOOL:
		return 0;
	case DT_COUNT:
		break;
	}
	AICM_BUG("no lowest value for element type %d", (int)dt);
}

/* The highest value of element type dt: a min's neutral element. */
static inline double
ir_scalar_highest(DType dt)
{
	switch (dt) {
	case DT_F64:
	case DT_F32:
		return INFINITY;
	case DT_I32:
		return (double)INT32_MAX;
	case DT_I64:
		return (double)INT64_MAX;
	case DT_BOOL:
		return 1;
	case DT_COUNT:
		break;
	}
	AICM_BUG("no highest value for element type %d", (int)dt);
}

/* A reduction's neutral element in element type dt. */
static inline double
ir_scalar_neutral(OpId op, DType dt)
{
	switch (op) {
#define IR_SCALAR_NEUTRAL_(ID, step, neutral) case OP_##ID: return neutral;
	IR_SCALAR_REDUCE(IR_SCALAR_NEUTRAL_)
#undef IR_SCALAR_NEUTRAL_
	default:
		AICM_BUG("'%s' is not a reduction", ir_ops[op].name);
	}
}

/* argmax and argmin (ONNX ArgMax/ArgMin): whether element v, met after
 * best in the scan along the axis, takes the place of best.  A NaN wins
 * over any number, as in np.argmax (the first NaN's index); last=True
 * (ONNX's select_last_index) lets a later equal value win, NaNs included,
 * as ONNX's reference flips the axis, takes the first, and flips back. */
static inline bool
ir_scalar_arg_wins(OpId op, double v, double best, bool last)
{
	if (isnan(best))
		return last && isnan(v);
	if (isnan(v))
		return true;
	if (v == best)
		return last;
	return op == OP_ARGMAX ? v > best : v < best;
}

/* The three formula functions on element type T, named with suffix SFX. */
#define IR_SCALAR_CASE_(ID, f) case OP_##ID: return f;
#define IR_SCALAR_CASE3_(ID, f, neutral) case OP_##ID: return f;
#define IR_SCALAR_FUNCTIONS_(T, SFX)                                           \
	static inline T                                                        \
	ir_scalar_unary##SFX(OpId op, T x)                                     \
	{                                                                      \
		switch (op) {                                                  \
		IR_SCALAR_UNARY(IR_SCALAR_CASE_)                               \
		default:                                                       \
			AICM_BUG("'%s' is not a unary op", ir_ops[op].name);   \
		}                                                              \
	}                                                                      \
	static inline T                                                        \
	ir_scalar_binary##SFX(OpId op, T a, T b)                               \
	{                                                                      \
		switch (op) {                                                  \
		IR_SCALAR_BINARY(IR_SCALAR_CASE_)                              \
		default:                                                       \
			AICM_BUG("'%s' is not a binary op", ir_ops[op].name);  \
		}                                                              \
	}                                                                      \
	static inline T                                                        \
	ir_scalar_combine##SFX(OpId op, T acc, T v)                            \
	{                                                                      \
		switch (op) {                                                  \
		IR_SCALAR_REDUCE(IR_SCALAR_CASE3_)                             \
		default:                                                       \
			AICM_BUG("'%s' is not a reduction", ir_ops[op].name);  \
		}                                                              \
	}

IR_SCALAR_FUNCTIONS_(double, )
IR_SCALAR_FUNCTIONS_(float, _f32)
#undef IR_SCALAR_FUNCTIONS_
#undef IR_SCALAR_CASE_
#undef IR_SCALAR_CASE3_

#endif
