/*
 * simd_int.c: vector kernels for integer tiles (i32, i64): the v1
 * elementwise ops that take integers, on AVX2 (simd.h's simd_int_unary and
 * simd_int_binary).
 *
 * Integer arithmetic is exact, so a vector lane gives the bits of scalar.h's
 * integer formula (computed on int64, stored in the type's low bits): add,
 * sub and neg wrap in the lane's width as the low bits of the int64 result
 * do, i32 mul is mullo (the low 32 bits of the product), maximum, minimum
 * and relu compare exactly, abs wraps (abs(INT_MIN) is INT_MIN, as
 * _mm256_abs_epi32 gives and as 0 - x does for i64).  Every path therefore
 * agrees bitwise with the scalar one, and tests/check_exec.c compares them
 * on each ISA.  What AVX2 lacks stays scalar: an i64 multiply (no mullo_epi64
 * before AVX-512DQ) and division (none at all; div also needs its
 * divisor checked, tile_ops.c's binary_int).  The AVX-512 path runs the
 * AVX2 kernels: a 256-bit loop is memory-bound on integer tiles already.
 *
 * An entry returns false when it has no kernel for the op, type or ISA, so
 * that the caller runs its scalar loop; operands have stride 1, or 0 for a
 * broadcast element.
 */
#include <stdbool.h>
#include <stdint.h>

#include "scalar.h"
#include "simd.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define A256 __attribute__((target("avx2")))

/* One vector of 8 i32 or 4 i64 from p (stride 1) or p[0] in every lane
 * (stride 0). */
A256 static inline __m256i
ld32(const int32_t *p, int64_t i, int s)
{
	return s ? _mm256_loadu_si256((const __m256i *)(p + i)) : _mm256_set1_epi32(p[0]);
}

A256 static inline __m256i
ld64(const int64_t *p, int64_t i, int s)
{
	return s ? _mm256_loadu_si256((const __m256i *)(p + i)) :
	    _mm256_set1_epi64x((long long)p[0]);
}

/* i64 lanes: the greater and the lesser (AVX2 has the compare only). */
A256 static inline __m256i
max64(__m256i a, __m256i b)
{
	return _mm256_blendv_epi8(b, a, _mm256_cmpgt_epi64(a, b));
}

A256 static inline __m256i
min64(__m256i a, __m256i b)
{
	return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(a, b));
}

/* The vector step of op on i32 lanes, or false without one. */
A256 static bool
bin32(OpId op, int64_t n, const int32_t *a, int sa, const int32_t *b, int sb, int32_t *o,
    int64_t *done)
{
	int64_t i = 0;

#define LOOP_(expr)                                                            \
	for (; i + 8 <= n; i += 8) {                                           \
		__m256i x = ld32(a, i, sa), y = ld32(b, i, sb);                \
		_mm256_storeu_si256((__m256i *)(o + i), expr);                 \
	}                                                                      \
	break;
	switch (op) {
	case OP_ADD: LOOP_(_mm256_add_epi32(x, y))
	case OP_SUB: LOOP_(_mm256_sub_epi32(x, y))
	case OP_MUL: LOOP_(_mm256_mullo_epi32(x, y))
	case OP_MAXIMUM: LOOP_(_mm256_max_epi32(x, y))
	case OP_MINIMUM: LOOP_(_mm256_min_epi32(x, y))
	default:
		return false;
	}
#undef LOOP_
	*done = i;
	return true;
}

A256 static bool
bin64(OpId op, int64_t n, const int64_t *a, int sa, const int64_t *b, int sb, int64_t *o,
    int64_t *done)
{
	int64_t i = 0;

#define LOOP_(expr)                                                            \
	for (; i + 4 <= n; i += 4) {                                           \
		__m256i x = ld64(a, i, sa), y = ld64(b, i, sb);                \
		_mm256_storeu_si256((__m256i *)(o + i), expr);                 \
	}                                                                      \
	break;
	switch (op) {
	case OP_ADD: LOOP_(_mm256_add_epi64(x, y))
	case OP_SUB: LOOP_(_mm256_sub_epi64(x, y))
	case OP_MAXIMUM: LOOP_(max64(x, y))
	case OP_MINIMUM: LOOP_(min64(x, y))
	default:
		return false;
	}
#undef LOOP_
	*done = i;
	return true;
}

A256 static bool
un32(OpId op, int64_t n, const int32_t *a, int32_t *o, int64_t *done)
{
	int64_t i = 0;
	__m256i z = _mm256_setzero_si256();

#define LOOP_(expr)                                                            \
	for (; i + 8 <= n; i += 8) {                                           \
		__m256i x = _mm256_loadu_si256((const __m256i *)(a + i));      \
		_mm256_storeu_si256((__m256i *)(o + i), expr);                 \
	}                                                                      \
	break;
	switch (op) {
	case OP_RELU: LOOP_(_mm256_max_epi32(x, z))
	case OP_NEG: LOOP_(_mm256_sub_epi32(z, x))
	case OP_ABS: LOOP_(_mm256_abs_epi32(x))
	default:
		return false;
	}
#undef LOOP_
	*done = i;
	return true;
}

A256 static bool
un64(OpId op, int64_t n, const int64_t *a, int64_t *o, int64_t *done)
{
	int64_t i = 0;
	__m256i z = _mm256_setzero_si256();

#define LOOP_(expr)                                                            \
	for (; i + 4 <= n; i += 4) {                                           \
		__m256i x = _mm256_loadu_si256((const __m256i *)(a + i));      \
		_mm256_storeu_si256((__m256i *)(o + i), expr);                 \
	}                                                                      \
	break;
	switch (op) {
	case OP_RELU: LOOP_(max64(x, z))
	case OP_NEG: LOOP_(_mm256_sub_epi64(z, x))
	/* negative lanes: 0 - x (wrapping), as scalar.h's abs */
	case OP_ABS: LOOP_(_mm256_blendv_epi8(x, _mm256_sub_epi64(z, x),
	    _mm256_cmpgt_epi64(z, x)))
	default:
		return false;
	}
#undef LOOP_
	*done = i;
	return true;
}
#define SIMD_INT_X86 1
#else
#define SIMD_INT_X86 0
#endif

int64_t
simd_int_binary(OpId op, DType dt, int64_t n, const void *a, int sa, const void *b, int sb,
    void *o)
{
	int64_t done = 0;

#if SIMD_INT_X86
	if (simd_isa() >= SIMD_AVX2) {
		if (dt == DT_I32 && bin32(op, n, a, sa, b, sb, o, &done))
			return done;
		if (dt == DT_I64 && bin64(op, n, a, sa, b, sb, o, &done))
			return done;
	}
#else
	(void)op, (void)dt, (void)n, (void)a, (void)sa, (void)b, (void)sb, (void)o;
#endif
	return done;
}

int64_t
simd_int_unary(OpId op, DType dt, int64_t n, const void *a, void *o)
{
	int64_t done = 0;

#if SIMD_INT_X86
	if (simd_isa() >= SIMD_AVX2) {
		if (dt == DT_I32 && un32(op, n, a, o, &done))
			return done;
		if (dt == DT_I64 && un64(op, n, a, o, &done))
			return done;
	}
#else
	(void)op, (void)dt, (void)n, (void)a, (void)o;
#endif
	return done;
}
