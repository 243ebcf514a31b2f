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
 * cast is the one elementwise op without a row: its formula depends on
 * its to= type (ir_scalar_cast, and ir_scalar_int_cast between integer
 * types and bool).
 *
 * Adding an elementwise op is its row in ops.def and its row here; the
 * interpreter and the tile executor then run it with no other change (an
 * OC_UNARY or OC_BINARY op without a row here does not compile: the
 * interpreter's kernel table asks for it).
 *
 * Integers (i32, i64) have formulas of their own, in the _INT tables
 * below: an op whose ops.def `types` takes integers (TY_NUM, TY_ANY) has
 * one row there too, in the same operand names, where x, a, b, acc and v
 * are int64_t.  They compute on the exact 64-bit values and wrap: every
 * add, subtract, multiply and negate goes through uint64_t (the IR_U64
 * and IR_I64 helpers), so no overflow is undefined and UBSan stays quiet;
 * an i32 result is the low 32 bits of the i64 one (the caller stores it
 * with a wrapping store), which is what wrapping i32 arithmetic gives for
 * add, sub, mul, neg, abs and for div (INT32_MIN / -1 is 2^31 in i64,
 * INT32_MIN in its low bits).  A binary row's third column says the op
 * divides: its callers check ir_scalar_int_div_by_zero before computing
 * and report "integer division by zero" naming the op (the formula
 * itself still gives 0 for a zero divisor, so a masked lane computing it
 * is harmless).  ir_scalar_unary_i64, ir_scalar_binary_i64,
 * ir_scalar_combine_i64 and ir_scalar_neutral_i64 switch on the op.
 */
#ifndef AICM_SCALAR_H
#define AICM_SCALAR_H

#include <math.h>

#include "diag.h"
#include "ir.h"

/* X(ID, formula in x): every OC_UNARY op. */
#define IR_SCALAR_UNARY(X)                                                     \
	X(RELU, !(x <= 0) ? x : 0)   /* NaN stays NaN, -0 becomes 0 */        \
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
/* v rounded once to the nearest f32, ties to even, by integer arithmetic:
 * the same bits everywhere, also under an emulator that converts through
 * a double (valgrind's), where (float)v rounds twice (2^60 + 2^36 + 1
 * became 2^60, not 2^60 + 2^37). */
static inline float
ir_i64_to_f32(int64_t v)
{
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v, q = m;
	int sh = 0;
	float f;

	while (q >> 24) {
		q >>= 1;
		sh++;
	}
	if (sh) {
		uint64_t rem = m & ((UINT64_C(1) << sh) - 1), half = UINT64_C(1) << (sh - 1);

		if (rem > half || (rem == half && (q & 1)))
			q++;            /* 2^24 at most: still exact in an f32 */
	}
	f = ldexpf((float)q, sh);
	return v < 0 ? -f : f;
}

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
 * OC_REDUCTION op.  max and min keep a NaN once met, as np.max and
 * np.min: NaN > x and NaN < x are false.  prod's NaN propagates by
 * arithmetic. */
#define IR_SCALAR_REDUCE(X)                                                    \
	X(SUM, acc + v, 0.0)                                                   \
	X(MAX, isnan(v) || v > acc ? v : acc, ir_scalar_lowest(dt))            \
	X(MEAN, acc + v, 0.0)                                                  \
	X(MIN, isnan(v) || v < acc ? v : acc, ir_scalar_highest(dt))           \
	X(PROD, acc * v, 1.0)

/* ---- integer formulas ------------------------------------------------- */

/* Wrapping arithmetic on int64_t through uint64_t: IR_U64 converts, IR_I64
 * converts back (implementation-defined, two's complement on every target
 * aicm builds for; never undefined). */
#define IR_U64(x) ((uint64_t)(x))
#define IR_I64(u) ((int64_t)(uint64_t)(u))

/* Helpers of the integer rows of issue 16's elementwise ops (DESIGN §12),
 * exact on int64, wrapping through uint64_t. */

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

/* fmod (C's %: the dividend's sign); b == 0 is the caller's error (0
 * here, for a masked lane).  b == -1 is 0 for every a, INT64_MIN too
 * (where % would overflow). */
static inline int64_t
ir_scalar_int_fmod(int64_t a, int64_t b)
{
	return b == 0 || b == -1 ? 0 : a % b;
}

/* numpy.mod: the divisor's sign; b == 0 as fmod. */
static inline int64_t
ir_scalar_int_mod(int64_t a, int64_t b)
{
	int64_t m = ir_scalar_int_fmod(a, b);

	return m != 0 && (m < 0) != (b < 0) ? (int64_t)((uint64_t)m + (uint64_t)b) : m;
}

/* X(ID, formula in int64_t x): every OC_UNARY op that takes integers.
 * abs wraps: abs(INT_MIN) is INT_MIN, as numpy's. */
#define IR_SCALAR_UNARY_INT(X)                                                 \
	X(RELU, x > 0 ? x : 0)                                                 \
	X(NEG, IR_I64(0 - IR_U64(x)))                                          \
	X(ABS, x < 0 ? IR_I64(0 - IR_U64(x)) : x)                             \
	X(SIGN, (x > 0) - (x < 0))                                             \
	X(NOT, x == 0)

/* X(ID, formula in int64_t a and b, divides): every OC_BINARY op that
 * takes integers.  divides is 1 for the ops whose divisor b must not be
 * 0 (the caller checks).  div truncates toward zero as C's; -1 is a case
 * of its own because INT64_MIN / -1 overflows. */
#define IR_SCALAR_BINARY_INT(X)                                                \
	X(ADD, IR_I64(IR_U64(a) + IR_U64(b)), 0)                               \
	X(SUB, IR_I64(IR_U64(a) - IR_U64(b)), 0)                               \
	X(MUL, IR_I64(IR_U64(a) * IR_U64(b)), 0)                               \
	X(DIV, b == 0 ? 0 : b == -1 ? IR_I64(0 - IR_U64(a)) : a / b, 1)        \
	X(MAXIMUM, a >= b ? a : b, 0)                                          \
	X(MINIMUM, a <= b ? a : b, 0)                                          \
	X(POW, ir_scalar_int_pow(a, b), 0)                                     \
	X(MOD, ir_scalar_int_mod(a, b), 1)                                     \
	X(FMOD, ir_scalar_int_fmod(a, b), 1)                                   \
	X(EQUAL, a == b, 0)                                                    \
	X(LESS, a < b, 0)                                                      \
	X(LESS_EQUAL, a <= b, 0)                                               \
	X(GREATER, a > b, 0)                                                   \
	X(GREATER_EQUAL, a >= b, 0)                                            \
	X(AND, a != 0 && b != 0, 0)                                            \
	X(OR, a != 0 || b != 0, 0)                                             \
	X(XOR, (a != 0) != (b != 0), 0)

/* X(ID, combining step in int64_t acc and v, neutral element in dt):
 * every OC_REDUCTION op that takes integers (not mean: floats only). */
#define IR_SCALAR_REDUCE_INT(X)                                                \
	X(SUM, IR_I64(IR_U64(acc) + IR_U64(v)), 0)                             \
	X(MAX, v > acc ? v : acc, ir_scalar_lowest_i64(dt))                    \
	X(MIN, v < acc ? v : acc, ir_scalar_highest_i64(dt))                   \
	X(PROD, IR_I64(IR_U64(acc) * IR_U64(v)), 1)

/* The highest value of integer (or bool) element type dt: an integer
 * min's neutral element. */
static inline int64_t
ir_scalar_highest_i64(DType dt)
{
	return dt == DT_I32 ? INT32_MAX : dt == DT_I64 ? INT64_MAX : 1;
}

/* The lowest value of integer (or bool) element type dt. */
static inline int64_t
ir_scalar_lowest_i64(DType dt)
{
	return dt == DT_I32 ? INT32_MIN : dt == DT_I64 ? INT64_MIN : 0;
}

#define IR_SCALAR_ICASE_(ID, f) case OP_##ID: return f;
#define IR_SCALAR_ICASE3_(ID, f, third) case OP_##ID: return f;
static inline int64_t
ir_scalar_unary_i64(OpId op, int64_t x)
{
	switch (op) {
	IR_SCALAR_UNARY_INT(IR_SCALAR_ICASE_)
	default:
		AICM_BUG("'%s' has no integer formula", ir_ops[op].name);
	}
}

static inline int64_t
ir_scalar_binary_i64(OpId op, int64_t a, int64_t b)
{
	switch (op) {
	IR_SCALAR_BINARY_INT(IR_SCALAR_ICASE3_)
	default:
		AICM_BUG("'%s' has no integer formula", ir_ops[op].name);
	}
}

static inline int64_t
ir_scalar_combine_i64(OpId op, int64_t acc, int64_t v)
{
	switch (op) {
	IR_SCALAR_REDUCE_INT(IR_SCALAR_ICASE3_)
	default:
		AICM_BUG("'%s' has no integer formula", ir_ops[op].name);
	}
}

static inline int64_t
ir_scalar_neutral_i64(OpId op, DType dt)
{
	switch (op) {
#define IR_SCALAR_INEUTRAL_(ID, step, neutral) case OP_##ID: return neutral;
	IR_SCALAR_REDUCE_INT(IR_SCALAR_INEUTRAL_)
#undef IR_SCALAR_INEUTRAL_
	default:
		AICM_BUG("'%s' has no integer formula", ir_ops[op].name);
	}
}

/* Whether binary op, on integers, divides by its operand b (its row's
 * third column). */
static inline bool
ir_scalar_int_divides(OpId op)
{
	switch (op) {
#define IR_SCALAR_IDIV_(ID, f, divides) case OP_##ID: return (divides);
	IR_SCALAR_BINARY_INT(IR_SCALAR_IDIV_)
#undef IR_SCALAR_IDIV_
	default:
		return false;
	}
}

/* Whether op, computed on integers, divides by b == 0: an error the
 * caller reports ("integer division by zero"). */
static inline bool
ir_scalar_int_div_by_zero(OpId op, int64_t b)
{
	return b == 0 && ir_scalar_int_divides(op);
}

/* An i64 formula's result as element type dt stores it: an i32 keeps the
 * low 32 bits, a bool is v != 0. */
static inline int64_t
ir_scalar_wrap(DType dt, int64_t v)
{
	return dt == DT_I32 ? (int64_t)(int32_t)(uint32_t)IR_U64(v) :
	    dt == DT_BOOL ? v != 0 : v;
}
#undef IR_SCALAR_ICASE_
#undef IR_SCALAR_ICASE3_

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

#endif
