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
 * ir_scalar_lowest is where a new element type says it).  mean combines as
 * a sum; the one division by the count is the caller's.
 *
 * cast is the one elementwise op without a row: its formula depends on
 * its to= type (ir_scalar_cast).  Integers get their own formulas where a
 * double would not be exact or would not wrap (ir_scalar_int_*: pow, mod,
 * fmod, the compares, and cast between integer types).
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
	X(SIN, sin(x))                                                         \
	X(COS, cos(x))                                                         \
	X(FLOOR, floor(x))                                                     \
	X(CEIL, ceil(x))                                                       \
	X(ROUND, nearbyint(x))   /* half to even: the default rounding mode */ \
	X(SIGN, isnan(x) ? x : (x > 0) - (x < 0))   /* -0 gives +0, as numpy */ \
	X(ISNAN, isnan(x) ? 1 : 0)                   /* a bool, as 0 or 1 */    \
	X(NOT, x == 0 ? 1 : 0)

/* numpy.mod on floats (np.remainder): C's fmod, moved by one divisor
 * when the signs of the remainder and the divisor differ; a zero result
 * takes the divisor's sign.  Exact in double, and rounding its double
 * result to float gives what a float computation gives (fmod is exact and
 * the one add rounds once either way). */
static inline double
ir_scalar_mod_(double a, double b)
{
	double m = fmod(a, b);

	if (m == 0)
		return copysign(0.0, b);
	if ((b < 0) != (m < 0))
		m += b;
	return m;
}

/* X(ID, formula in a and b): every OC_BINARY op. */
#define IR_SCALAR_BINARY(X)                                                    \
	X(ADD, a + b)                                                          \
	X(SUB, a - b)                                                          \
	X(MUL, a * b)                                                          \
	X(DIV, a / b)                                                          \
	X(MAXIMUM, isnan(a) || a >= b ? a : b)   /* np.maximum: a NaN on    */ \
	X(MINIMUM, isnan(a) || a <= b ? a : b)   /* either side wins        */ \
	X(POW, pow(a, b))                                                      \
	X(MOD, ir_scalar_mod_(a, b))                                           \
	X(FMOD, fmod(a, b))                                                    \
	X(EQUAL, a == b ? 1 : 0)                 /* compares give a bool,   */ \
	X(LESS, a < b ? 1 : 0)                   /* as 0 or 1; against a    */ \
	X(LESS_EQUAL, a <= b ? 1 : 0)            /* NaN only a != b holds,  */ \
	X(GREATER, a > b ? 1 : 0)                /* so equal is 0           */ \
	X(GREATER_EQUAL, a >= b ? 1 : 0)                                       \
	X(AND, a != 0 && b != 0 ? 1 : 0)                                       \
	X(OR, a != 0 || b != 0 ? 1 : 0)                                        \
	X(XOR, (a != 0) != (b != 0) ? 1 : 0)

/* X(ID, combining step in acc and v, neutral element in dt): every
 * OC_REDUCTION op.  max keeps a NaN once met, as np.max: NaN > x is
 * false. */
#define IR_SCALAR_REDUCE(X)                                                    \
	X(SUM, acc + v, 0.0)                                                   \
	X(MAX, isnan(v) || v > acc ? v : acc, ir_scalar_lowest(dt))            \
	X(MEAN, acc + v, 0.0)

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

/* cast's formula: the value that element type `to` holds for x, as a
 * double (DESIGN §12): a float rounds to the type, an integer truncates
 * toward zero and saturates with NaN to 0, a bool is x != 0 (NaN is
 * true).  An i64 beyond 2^53 is not a double: exact casts from integers
 * go through ir_scalar_int_cast. */
static inline double
ir_scalar_cast(DType to, double x)
{
	switch (to) {
	case DT_F64:
		return x;
	case DT_F32:
		return (double)(float)x;
	case DT_I32:
		return x != x ? 0 : x >= 0x1p31 ? (double)INT32_MAX : x < -0x1p31 ?
		    (double)INT32_MIN : trunc(x);
	case DT_I64:
		return x != x ? 0 : x >= 0x1p63 ? 0x1p63 : x < -0x1p63 ? -0x1p63 : trunc(x);
	case DT_BOOL:
		return x != 0 ? 1 : 0;
	case DT_COUNT:
		break;
	}
	AICM_BUG("cast to element type %d", (int)to);
}

/* The integer formulas of the new elementwise ops (DESIGN §12), exact on
 * int64: an i32 op computes here and keeps the low 32 bits, which is
 * i32's wrapping.  Arithmetic goes through uint64_t so that overflow
 * wraps and UBSan stays clean. */

/* cast between integer types and bool: i32 keeps the low 32 bits, bool
 * is x != 0. */
static inline int64_t
ir_scalar_int_cast(DType to, int64_t x)
{
	switch (to) {
	case DT_I32:
		return (int32_t)(uint32_t)(uint64_t)x;
	case DT_BOOL:
		return x != 0;
	default:
		return x;
	}
}

static inline int64_t
ir_scalar_int_sign(int64_t x)
{
	return (x > 0) - (x < 0);
}

/* Square and multiply, wrapping; a negative exponent gives 0 unless the
 * base is 1 (1) or -1 (+-1 by the exponent's parity), as numpy's integer
 * power would if it allowed them. */
static inline int64_t
ir_scalar_int_pow(int64_t a, int64_t b)
{
	uint64_t r = 1, x = (uint64_t)a;

	if (b < 0)
		return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
	for (uint64_t e = (uint64_t)b; e; e >>= 1) {
		if (e & 1)
			r *= x;
		x *= x;
	}
	return (int64_t)r;
}

/* fmod (C's %: the dividend's sign); the caller refuses b == 0.  b == -1
 * is 0 for every a, INT64_MIN too (where % would overflow). */
static inline int64_t
ir_scalar_int_fmod(int64_t a, int64_t b)
{
	return b == -1 ? 0 : a % b;
}

/* numpy.mod: the divisor's sign; the caller refuses b == 0. */
static inline int64_t
ir_scalar_int_mod(int64_t a, int64_t b)
{
	int64_t m = ir_scalar_int_fmod(a, b);

	return m != 0 && (m < 0) != (b < 0) ? (int64_t)((uint64_t)m + (uint64_t)b) : m;
}

/* The integer formula of binary op on a and b, for the ops whose
 * integer form differs from the double one (pow, mod, fmod) and for the
 * compares (exact beyond 2^53); any other op is a bug. */
static inline int64_t
ir_scalar_int_binary(OpId op, int64_t a, int64_t b)
{
	switch (op) {
	case OP_POW: return ir_scalar_int_pow(a, b);
	case OP_MOD: return ir_scalar_int_mod(a, b);
	case OP_FMOD: return ir_scalar_int_fmod(a, b);
	case OP_EQUAL: return a == b;
	case OP_LESS: return a < b;
	case OP_LESS_EQUAL: return a <= b;
	case OP_GREATER: return a > b;
	case OP_GREATER_EQUAL: return a >= b;
	case OP_AND: return a != 0 && b != 0;
	case OP_OR: return a != 0 || b != 0;
	case OP_XOR: return (a != 0) != (b != 0);
	default:
		AICM_BUG("'%s' has no integer formula here", ir_ops[op].name);
	}
}

#endif
