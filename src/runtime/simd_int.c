/*
 * simd_int.c: vector kernels for integer tiles (i32, i64): the elementwise
 * ops that take integers, on AVX2 (simd.h's simd_int_unary,
 * simd_int_binary and simd_int_where).
 *
 * Integer arithmetic is exact, so a vector lane gives the bits of scalar.h's
 * integer formula (computed on int64, stored in the type's low bits): add,
 * sub and neg wrap in the lane's width as the low bits of the int64 result
 * do, i32 mul is mullo (the low 32 bits of the product), maximum, minimum
 * and relu compare exactly, abs wraps (abs(INT_MIN) is INT_MIN, as
 * _mm256_abs_epi32 gives and as 0 - x does for i64); the compares give 1
 * or 0 (a lane mask of all ones, masked to its low bit); and, or, xor and
 * not read any nonzero lane as true and give 1 or 0; sign is the
 * difference of the two compares with 0; where picks by a lane mask of its
 * condition's zeros (an integer kernel holds its bools as 0 and 1 in its
 * own type).  Every path therefore agrees bitwise with the scalar one, and
 * tests/check_simd.c and tests/check_exec.c compare them on each ISA.  An
 * i64 multiply, which AVX2 lacks (mullo_epi64 is AVX-512DQ's), is built
 * from three 32-bit products.  What stays scalar is division and what
 * divides (mod, fmod: no vector instruction at all, and the divisor must
 * be checked, tile_ops.c's binary_int) and pow (a loop of multiplies per
 * element, as numpy's integer power is).  The AVX-512 path runs the AVX2
 * kernels: a 256-bit loop is memory-bound on integer tiles already.
 *
 * An entry returns false when it has no kernel for the op, type or ISA, so
 * that the caller runs its scalar loop; operands have stride 1, or 0 for a
 * broadcast element.  The portable path (AICM_ISA=portable) is the
 * caller's typed scalar loops, which tests/check_simd.c holds every vector
 * kernel to, bit for bit.
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

/* The low 64 bits of a * b in each lane, the wrapping product scalar.h's
 * formula gives: AVX2 multiplies only 32 x 32 -> 64 bits (mul_epu32), so
 * lo*lo + ((lo*hi + hi*lo) << 32), the terms that reach the low 64 bits. */
A256 static inline __m256i
mul64(__m256i a, __m256i b)
{
	__m256i ahi = _mm256_srli_epi64(a, 32), bhi = _mm256_srli_epi64(b, 32);
	__m256i cross = _mm256_add_epi64(_mm256_mul_epu32(a, bhi), _mm256_mul_epu32(ahi, b));

	return _mm256_add_epi64(_mm256_mul_epu32(a, b), _mm256_slli_epi64(cross, 32));
}

/* The vector step of op on i32 lanes, or false without one. */
A256 static bool
bin32(OpId op, int64_t n, const int32_t *a, int sa, const int32_t *b, int sb, int32_t *o,
    int64_t *done)
{
	int64_t i = 0;
	__m256i z = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);

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
	case OP_EQUAL: LOOP_(_mm256_and_si256(_mm256_cmpeq_epi32(x, y), one))
	case OP_GREATER: LOOP_(_mm256_and_si256(_mm256_cmpgt_epi32(x, y), one))
	case OP_LESS: LOOP_(_mm256_and_si256(_mm256_cmpgt_epi32(y, x), one))
	case OP_LESS_EQUAL: LOOP_(_mm256_andnot_si256(_mm256_cmpgt_epi32(x, y), one))
	case OP_GREATER_EQUAL: LOOP_(_mm256_andnot_si256(_mm256_cmpgt_epi32(y, x), one))
	/* nx, ny: all ones where the lane is 0 (false) */
	case OP_AND: LOOP_(_mm256_andnot_si256(_mm256_or_si256(_mm256_cmpeq_epi32(x, z),
	    _mm256_cmpeq_epi32(y, z)), one))
	case OP_OR: LOOP_(_mm256_andnot_si256(_mm256_and_si256(_mm256_cmpeq_epi32(x, z),
	    _mm256_cmpeq_epi32(y, z)), one))
	case OP_XOR: LOOP_(_mm256_and_si256(_mm256_xor_si256(_mm256_cmpeq_epi32(x, z),
	    _mm256_cmpeq_epi32(y, z)), one))
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
	__m256i z = _mm256_setzero_si256(), one = _mm256_set1_epi64x(1);

#define LOOP_(expr)                                                            \
	for (; i + 4 <= n; i += 4) {                                           \
		__m256i x = ld64(a, i, sa), y = ld64(b, i, sb);                \
		_mm256_storeu_si256((__m256i *)(o + i), expr);                 \
	}                                                                      \
	break;
	switch (op) {
	case OP_ADD: LOOP_(_mm256_add_epi64(x, y))
	case OP_SUB: LOOP_(_mm256_sub_epi64(x, y))
	case OP_MUL: LOOP_(mul64(x, y))
	case OP_MAXIMUM: LOOP_(max64(x, y))
	case OP_MINIMUM: LOOP_(min64(x, y))
	case OP_EQUAL: LOOP_(_mm256_and_si256(_mm256_cmpeq_epi64(x, y), one))
	case OP_GREATER: LOOP_(_mm256_and_si256(_mm256_cmpgt_epi64(x, y), one))
	case OP_LESS: LOOP_(_mm256_and_si256(_mm256_cmpgt_epi64(y, x), one))
	case OP_LESS_EQUAL: LOOP_(_mm256_andnot_si256(_mm256_cmpgt_epi64(x, y), one))
	case OP_GREATER_EQUAL: LOOP_(_mm256_andnot_si256(_mm256_cmpgt_epi64(y, x), one))
	case OP_AND: LOOP_(_mm256_andnot_si256(_mm256_or_si256(_mm256_cmpeq_epi64(x, z),
	    _mm256_cmpeq_epi64(y, z)), one))
	case OP_OR: LOOP_(_mm256_andnot_si256(_mm256_and_si256(_mm256_cmpeq_epi64(x, z),
	    _mm256_cmpeq_epi64(y, z)), one))
	case OP_XOR: LOOP_(_mm256_and_si256(_mm256_xor_si256(_mm256_cmpeq_epi64(x, z),
	    _mm256_cmpeq_epi64(y, z)), one))
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
	__m256i z = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);

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
	case OP_NOT: LOOP_(_mm256_and_si256(_mm256_cmpeq_epi32(x, z), one))
	/* (x > 0) - (x < 0): the masks are -1, so (x < 0) - (x > 0) of them */
	case OP_SIGN: LOOP_(_mm256_sub_epi32(_mm256_cmpgt_epi32(z, x), _mm256_cmpgt_epi32(x, z)))
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
	__m256i z = _mm256_setzero_si256(), one = _mm256_set1_epi64x(1);

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
	case OP_NOT: LOOP_(_mm256_and_si256(_mm256_cmpeq_epi64(x, z), one))
	case OP_SIGN: LOOP_(_mm256_sub_epi64(_mm256_cmpgt_epi64(z, x), _mm256_cmpgt_epi64(x, z)))
	default:
		return false;
	}
#undef LOOP_
	*done = i;
	return true;
}
/* where: o[i] = c[i*sc] != 0 ? a[i*sa] : b[i*sb], by a lane mask of c's
 * zeros (blendv takes b where the mask is set). */
A256 static int64_t
where32(int64_t n, const int32_t *c, int sc, const int32_t *a, int sa, const int32_t *b, int sb,
    int32_t *o)
{
	int64_t i = 0;
	__m256i z = _mm256_setzero_si256();

	for (; i + 8 <= n; i += 8) {
		__m256i m = _mm256_cmpeq_epi32(ld32(c, i, sc), z);

		_mm256_storeu_si256((__m256i *)(o + i), _mm256_blendv_epi8(ld32(a, i, sa),
		    ld32(b, i, sb), m));
	}
	return i;
}

A256 static int64_t
where64(int64_t n, const int64_t *c, int sc, const int64_t *a, int sa, const int64_t *b, int sb,
    int64_t *o)
{
	int64_t i = 0;
	__m256i z = _mm256_setzero_si256();

	for (; i + 4 <= n; i += 4) {
		__m256i m = _mm256_cmpeq_epi64(ld64(c, i, sc), z);

		_mm256_storeu_si256((__m256i *)(o + i), _mm256_blendv_epi8(ld64(a, i, sa),
		    ld64(b, i, sb), m));
	}
	return i;
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

int64_t
simd_int_where(DType dt, int64_t n, const void *c, int sc, const void *a, int sa, const void *b,
    int sb, void *o)
{
#if SIMD_INT_X86
	if (simd_isa() >= SIMD_AVX2) {
		if (dt == DT_I32)
			return where32(n, c, sc, a, sa, b, sb, o);
		if (dt == DT_I64)
			return where64(n, c, sc, a, sa, b, sb, o);
	}
#else
	(void)dt, (void)n, (void)c, (void)sc, (void)a, (void)sa, (void)b, (void)sb, (void)o;
#endif
	return 0;
}
