/*
 * simd.c: vector kernels for the tile executor (simd.h).
 *
 * The dot is a register-blocked micro-kernel in the BLIS style: a block of
 * MR rows × NR columns of the result stays in registers for the whole K
 * loop, each step loading one row of b (NR wide, masked at a ragged right
 * edge) and broadcasting MR elements of a.  The operands are tiles: b
 * packed by the executor, a packed or read in place in its tensor (lda
 * the tensor's row length), both small enough for L1 or L2, so no further
 * packing pays here.  Row blocks are the outer loop, so that a block of a
 * is read from its rows once a call, and each block prefetches the next
 * one's rows (rows 4-8 KiB apart share L1 sets and lose the hardware
 * prefetcher); the f32 AVX-512 kernel alone walks its 64-wide column
 * panels outer (a tile of up to 64 columns has one).  Full-width panels
 * run block instances without masks.
 * MR=6 and 24 accumulators on AVX-512 for both types (NR=32
 * doubles or 64 floats; 4×4, 5×4, 7×4, 8×2, 10×2, 12×2 and 14×2 blocks
 * of floats measured no faster at 64×64×64, all within noise of peak when
 * the tiles are hot); AVX2: MR=6, NR=8 doubles or 16 floats (12 ymm).
 * Block shapes are compile-time constants (one instance per MR and vector
 * count), so that accumulators live in registers.
 *
 * Elementwise kernels and reductions are one vector loop each, with a
 * scalar tail (f64, and the AVX2 f32 kernels) or a masked last vector
 * (AVX-512 f32, and exp_f32 on both paths so that they agree bitwise);
 * never a masked main loop, which is slow on Zen 5.
 * NaN rules follow the reference interpreter exactly (see simd.h).  Sums
 * are reassociated (16 lanes, then a fixed tree; f32 sums in f64 lanes),
 * so they equal the reference within tolerance, not bitwise; but the
 * order is the same on every path, and the dot's FMAs run in the same k
 * order on both AVX paths, so AVX-512 and AVX2 give the same bits
 * (portable, without FMA, may differ in the last bits of a dot).
 * simd_copy_stream writes whole cache lines with non-temporal stores and
 * the ragged ends with memcpy.
 *
 * The kernels the two types share are written once, in simd_kern.h, which
 * this file includes twice: with T double, then T float, after defining
 * the vector types, the intrinsics' names (P512(add) is _mm512_add_pd or
 * _mm512_add_ps), the names of the instances (KN(dot, avx2) is dot_avx2
 * or dot_f32_avx2; KP(dot) is simd_dot or simd_dot_f32) and the few loads
 * that differ.  Lane counts, full masks and K_F32, which selects the rules
 * above that differ by type, are compile-time constants, so each instance
 * compiles to the code of a hand-written copy (they replaced such copies
 * instruction for instruction).  The kernels of one type only, exp on
 * doubles and copy_stream, are written once in
 * simd_isa.h, included for AVX-512 and for AVX2 (vector width and the
 * intrinsics that differ defined before each).  Written here: exp on
 * floats (its masks and tails differ between the ISAs), the helpers the
 * templates use, and the entry points of the simd_isa.h kernels.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalar.h"
#include "simd.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define SIMD_X86 1
#include <immintrin.h>
/* Streaming kernels (elementwise, relu, sum, max) ask for the line 2 KiB
 * ahead of each vector they read: the executor hands them rows read in
 * place from tensors far larger than the caches, and the hardware
 * prefetchers, which stop at every 4 KiB page, leave one core well short
 * of its bandwidth otherwise (W5 single-threaded: 30 -> 24 ms).  Tiles
 * already in L1 pay one spare load slot; a prefetch never faults. */
#ifndef AHEAD_BYTES
#define AHEAD_BYTES 2048
#define AHEAD_HINT _MM_HINT_T0
#endif
#define AHEAD(p) _mm_prefetch((const char *)(p) + AHEAD_BYTES, AHEAD_HINT)
#else
#define SIMD_X86 0
#endif

static int isa_cur = -1;         /* SimdIsa, or -1 before the first call */

static const char *const isa_names[SIMD_ISA_COUNT] = {"portable", "avx2", "avx512"};

const char *
simd_isa_name(SimdIsa isa)
{
	return (unsigned)isa < SIMD_ISA_COUNT ? isa_names[isa] : "?";
}

SimdIsa
simd_isa_best(void)
{
#if SIMD_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		return SIMD_AVX512;
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return SIMD_AVX2;
#endif
	return SIMD_PORTABLE;
}

void
simd_set_isa(SimdIsa isa)
{
	SimdIsa best = simd_isa_best();

	if ((unsigned)isa >= SIMD_ISA_COUNT || isa > best)
		isa = best;
	__atomic_store_n(&isa_cur, (int)isa, __ATOMIC_RELAXED);
}

/* Threads may race to the first call; they all compute the same value. */
SimdIsa
simd_isa(void)
{
	int v = __atomic_load_n(&isa_cur, __ATOMIC_RELAXED);
	const char *e;
	SimdIsa want, best;

	if (v >= 0)
		return (SimdIsa)v;
	best = simd_isa_best();
	want = best;
	e = getenv("AICM_ISA");
	if (e && *e) {
		int i;

		for (i = 0; i < SIMD_ISA_COUNT; i++)
			if (strcmp(e, isa_names[i]) == 0)
				break;
		if (i == SIMD_ISA_COUNT)
			fprintf(stderr, "aicm: note: AICM_ISA='%s' is not avx512, avx2 or portable; "
			    "using %s\n", e, isa_names[best]);
		else if ((SimdIsa)i > best)
			fprintf(stderr, "aicm: note: AICM_ISA='%s' is not supported by this CPU; "
			    "using %s\n", e, isa_names[best]);
		else
			want = (SimdIsa)i;
	}
	__atomic_store_n(&isa_cur, (int)want, __ATOMIC_RELAXED);
	return want;
}

/* Every path sums in the same order, so that AVX-512 and AVX2 agree
 * bitwise (and with portable): lane l of 16 sums x[l], x[l+16], ... in
 * turn, then the lanes meet in a fixed tree (l + l+8, + l+4, + l+2, + l+1). */
static double
sum_tree(double *l)
{
	for (int w = 8; w >= 1; w /= 2)
		for (int q = 0; q < w; q++)
			l[q] += l[q + w];
	return l[0];
}

static float
exp_f32_scalar(float x)
{
	return ir_scalar_unary_f32(OP_EXP, x);   /* (float)exp((double)x) */
}

#if SIMD_X86
/* Prefetches the line at p in each of the 6 rows after a row block (rows
 * `stride` bytes apart): the next block of a, when a is read in place
 * with a wide lda (rows 4-8 KiB apart share L1 sets and defeat the
 * hardware prefetcher), arrives while this block computes; 5-10% on W1.
 * Addresses are formed as integers (past the last block they point
 * beyond a, which a prefetch may do but C pointer arithmetic may not). */
static inline __attribute__((always_inline)) void
prefetch_next_rows(const void *p, int64_t stride)
{
	_Pragma("GCC unroll 8")
	for (int r = 6; r < 12; r++)
		__builtin_prefetch((const void *)((uintptr_t)p + (uintptr_t)(r * stride)), 0, 3);
}

/* T: inlined into the kernels (the dot's blocks); A: kernels. */
#define T512 __attribute__((target("avx512f"), always_inline)) static inline
#define A512 __attribute__((target("avx512f")))
#define T256 __attribute__((target("avx2,fma"), always_inline)) static inline
#define A256 __attribute__((target("avx2,fma")))

/* Eight lanes of -1 then eight of 0: loaded from 8 - t, the mask of the
 * first t lanes (t in 1..8). */
static const int32_t lanes8[16] = {-1, -1, -1, -1, -1, -1, -1, -1};

A256 static inline __m256i
tail8(int64_t t)
{
	return _mm256_loadu_si256((const __m256i *)(lanes8 + 8 - (t > 8 ? 8 : t)));
}

/* The first t of 4 double lanes (t in 1..3; all 4 for t == 0). */
A256 static inline __m256i
tail4(int t)
{
	return _mm256_set_epi64x(t == 0 || t > 3 ? -1 : 0, t == 0 || t > 2 ? -1 : 0,
	    t == 0 || t > 1 ? -1 : 0, -1);
}
#endif

/* ---- dispatch -------------------------------------------------------- */

#if SIMD_X86
/* PICK_IN for kernels returning void, PICKR_IN for those returning a
 * value; PICK and PICKR name them name_avx512 and name_avx2. */
#define PICK_IN(f512, f256, ...)                                            \
	switch (simd_isa()) {                                                \
	case SIMD_AVX512: f512(__VA_ARGS__); return;                         \
	case SIMD_AVX2: f256(__VA_ARGS__); return;                           \
	default: break;                                                      \
	}
#define PICKR_IN(f512, f256, ...)                                           \
	switch (simd_isa()) {                                                \
	case SIMD_AVX512: return f512(__VA_ARGS__);                          \
	case SIMD_AVX2: return f256(__VA_ARGS__);                            \
	default: break;                                                      \
	}
#else
#define PICK_IN(f512, f256, ...)
#define PICKR_IN(f512, f256, ...)
#endif
#define PICK(name, ...) PICK_IN(name##_avx512, name##_avx2, __VA_ARGS__)
#define PICKR(name, ...) PICKR_IN(name##_avx512, name##_avx2, __VA_ARGS__)

/* ---- the kernels of both types (simd_kern.h) ------------------------- */

#define T double
#define K_F32 0
#define KN(name, sfx) name##_##sfx
#define KP(name) simd_##name
#define KS(name) ir_scalar_##name
#if SIMD_X86
#define V512 __m512d
#define M512 __mmask8
#define ALL512 0xff
#define P512(op) _mm512_##op##_pd
#define CMP512 _mm512_cmp_pd_mask
#define WIDEN512(p) _mm512_loadu_pd(p)
#define V256 __m256d
#define P256(op) _mm256_##op##_pd
#define B256(p) _mm256_broadcast_sd(p)
#define WIDEN256(p) _mm256_loadu_pd(p)
#define ALL256 _mm256_set1_epi64x(-1)
#define TAIL256(w, nv) tail4((int)((w) % 4))
#endif
#include "simd_kern.h"

#define T float
#define K_F32 1
#define KN(name, sfx) name##_f32_##sfx
#define KP(name) simd_##name##_f32
#define KS(name) ir_scalar_##name##_f32
#if SIMD_X86
#define V512 __m512
#define M512 __mmask16
#define ALL512 0xffff
#define P512(op) _mm512_##op##_ps
#define CMP512 _mm512_cmp_ps_mask
#define WIDEN512(p) _mm512_cvtps_pd(_mm256_loadu_ps(p))
#define V256 __m256
#define P256(op) _mm256_##op##_ps
#define B256(p) _mm256_broadcast_ss(p)
#define WIDEN256(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
#define ALL256 _mm256_set1_epi32(-1)
#define TAIL256(w, nv) tail8((w) - 8 * ((nv) - 1))
#endif
#include "simd_kern.h"

#if SIMD_X86
/* exp on the AVX paths: x = n·ln2 + r (ln2 split in two, Cody and
 * Waite), e^r by its Taylor polynomial of degree 13 (|r| <= ln2/2, so the
 * truncation is below 1e-17), times 2^n built in the exponent bits.  About
 * 1 ulp from libm's exp; lanes outside [-708, 709] (overflow, subnormal
 * results, NaN) take libm's exp.  Both AVX paths do the same operations in
 * the same order, so they agree bitwise. */
#define EXP_LO (-708.0)
#define EXP_HI 709.0
static const double exp_c[14] = {
	1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320,
	1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0,
};
#define LOG2E 1.4426950408889634
#define LN2_HI 6.93147180369123816490e-01
#define LN2_LO 1.90821492927058770002e-10
#define EXP_MAGIC 6755399441055744.0     /* 0x1.8p52: n + it holds n in the low bits */

/* ---- the double-only kernels of both ISAs (simd_isa.h) --------------- */

#define KI(name) name##_avx512
#define AI A512
#define W 8
#define VD __m512d
#define VI __m512i
#define X(op) _mm512_##op
#define ROUND_PD _mm512_roundscale_pd
#define SET1_EPI64 _mm512_set1_epi64
#define CASTPD_SI _mm512_castpd_si512
#define CASTSI_PD _mm512_castsi512_pd
#define OUT_BITS __mmask8
#define OUT_OF(v, lo, hi) (_mm512_cmp_pd_mask(v, _mm512_set1_pd(lo), _CMP_NGE_UQ) | \
	    _mm512_cmp_pd_mask(v, _mm512_set1_pd(hi), _CMP_NLE_UQ))
#define STREAM_LINE(d, s) _mm512_stream_si512((void *)(d), _mm512_loadu_si512((const void *)(s)))
#include "simd_isa.h"

#define KI(name) name##_avx2
#define AI A256
#define W 4
#define VD __m256d
#define VI __m256i
#define X(op) _mm256_##op
#define ROUND_PD _mm256_round_pd
#define SET1_EPI64 _mm256_set1_epi64x
#define CASTPD_SI _mm256_castpd_si256
#define CASTSI_PD _mm256_castsi256_pd
#define OUT_BITS int
#define OUT_OF(v, lo, hi) _mm256_movemask_pd(_mm256_or_pd( \
	    _mm256_cmp_pd(v, _mm256_set1_pd(lo), _CMP_NGE_UQ), \
	    _mm256_cmp_pd(v, _mm256_set1_pd(hi), _CMP_NLE_UQ)))
#define STREAM_LINE(d, s) do { \
	_mm256_stream_si256((__m256i *)(void *)(d), _mm256_loadu_si256((const __m256i *)(const void *)(s))); \
	_mm256_stream_si256((__m256i *)(void *)((d) + 32), \
	    _mm256_loadu_si256((const __m256i *)(const void *)((s) + 32))); \
	} while (0)
#include "simd_isa.h"

/* ---- exp on floats --------------------------------------------------- */

/* exp in f32 lanes on the AVX paths: x = n·ln2 + r (ln2 split in two,
 * the high part with 9 bits so n·hi is exact), e^r by its Taylor
 * polynomial of degree 7 (|r| <= ln2/2: truncation below 0.1 ulp), times
 * 2^n built in the exponent bits.  Within 2 ulp of (float)exp((double)x)
 * over [EXPF_LO, EXPF_HI], where e^x and 2^n are normal floats; below
 * EXPF_ZERO the result is 0, above EXPF_INF inf, NaN stays NaN, and the
 * narrow bands between (subnormal results, the edge of overflow) take the
 * scalar reference.  Every lane, tails included, goes through the same
 * vector code, so AVX-512 and AVX2 agree bitwise.  Measured over every
 * float in [-106, 90]: 0.5% of results 1 ulp off, none more. */
#define EXPF_LO (-87.0f)
#define EXPF_HI 88.0f
#define EXPF_ZERO (-104.0f)     /* e^-104 is below half the least subnormal */
#define EXPF_INF 89.0f          /* e^89 is beyond FLT_MAX */
static const float expf_c[8] = {
	1.0f, 1.0f, 1.0f / 2, 1.0f / 6, 1.0f / 24, 1.0f / 120, 1.0f / 720, 1.0f / 5040,
};
#define LOG2EF 1.44269504f
#define LN2F_HI 0.693359375f
#define LN2F_LO (-2.12194440e-4f)

/* e^v for the lanes in m; x holds v, for the scalar bands. */
A512 static inline __m512
exp16(__m512 v, __mmask16 m, const float *x)
{
	__m512 k = _mm512_roundscale_ps(_mm512_mul_ps(v, _mm512_set1_ps(LOG2EF)),
	    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(LN2F_HI), v);
	__m512 p = _mm512_set1_ps(expf_c[7]);
	__m512i e;
	__mmask16 ok, bad;

	r = _mm512_fnmadd_ps(k, _mm512_set1_ps(LN2F_LO), r);
	for (int c = 6; c >= 0; c--)
		p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(expf_c[c]));
	e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(127)), 23);
	p = _mm512_mul_ps(p, _mm512_castsi512_ps(e));
	ok = _mm512_cmp_ps_mask(v, _mm512_set1_ps(EXPF_LO), _CMP_GE_OQ) &
	    _mm512_cmp_ps_mask(v, _mm512_set1_ps(EXPF_HI), _CMP_LE_OQ);
	if ((ok & m) != m) {
		__mmask16 zero = _mm512_cmp_ps_mask(v, _mm512_set1_ps(EXPF_ZERO), _CMP_LT_OQ);
		__mmask16 inf = _mm512_cmp_ps_mask(v, _mm512_set1_ps(EXPF_INF), _CMP_GT_OQ);
		__mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);

		p = _mm512_mask_mov_ps(p, zero, _mm512_setzero_ps());
		p = _mm512_mask_mov_ps(p, inf, _mm512_set1_ps(INFINITY));
		p = _mm512_mask_add_ps(p, nan, v, v);       /* quiets a signalling NaN */
		bad = (__mmask16)(m & ~(ok | zero | inf | nan));
		if (bad) {
			float t[16];

			_mm512_storeu_ps(t, p);
			for (int q = 0; q < 16; q++)
				if (bad & (1u << q))
					t[q] = exp_f32_scalar(x[q]);
			p = _mm512_loadu_ps(t);
		}
	}
	return p;
}

A512 static void
exp_f32_avx512(int64_t n, const float *x, float *o)
{
	int64_t i = 0;

	for (; i + 16 <= n; i += 16)
		_mm512_storeu_ps(o + i, exp16(_mm512_loadu_ps(x + i), 0xffff, x + i));
	if (i < n) {
		__mmask16 m = tail_f32_avx512(n, i);

		_mm512_mask_storeu_ps(o + i, m, exp16(_mm512_maskz_loadu_ps(m, x + i), m, x + i));
	}
}

/* exp_f32_avx512's operations in its order, on 8 lanes. */
A256 static void
exp_f32_avx2(int64_t n, const float *x, float *o)
{
	for (int64_t i = 0; i < n; i += 8) {
		__m256i m = tail8(n - i);
		__m256 v = _mm256_maskload_ps(x + i, m);
		__m256 k = _mm256_round_ps(_mm256_mul_ps(v, _mm256_set1_ps(LOG2EF)),
		    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		__m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(LN2F_HI), v);
		__m256 p = _mm256_set1_ps(expf_c[7]);
		__m256i e;
		int ok, bad;

		r = _mm256_fnmadd_ps(k, _mm256_set1_ps(LN2F_LO), r);
		for (int c = 6; c >= 0; c--)
			p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(expf_c[c]));
		e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k),
		    _mm256_set1_epi32(127)), 23);
		p = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
		ok = _mm256_movemask_ps(_mm256_and_ps(
		    _mm256_cmp_ps(v, _mm256_set1_ps(EXPF_LO), _CMP_GE_OQ),
		    _mm256_cmp_ps(v, _mm256_set1_ps(EXPF_HI), _CMP_LE_OQ)));
		if (ok != 0xff) {
			__m256 zero = _mm256_cmp_ps(v, _mm256_set1_ps(EXPF_ZERO), _CMP_LT_OQ);
			__m256 inf = _mm256_cmp_ps(v, _mm256_set1_ps(EXPF_INF), _CMP_GT_OQ);
			__m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);

			p = _mm256_andnot_ps(zero, p);
			p = _mm256_blendv_ps(p, _mm256_set1_ps(INFINITY), inf);
			p = _mm256_blendv_ps(p, _mm256_add_ps(v, v), nan);
			bad = _mm256_movemask_ps(_mm256_castsi256_ps(m)) & ~(ok |
			    _mm256_movemask_ps(_mm256_or_ps(zero, _mm256_or_ps(inf, nan))));
			if (bad) {
				float t[8];

				_mm256_storeu_ps(t, p);
				for (int q = 0; q < 8; q++)
					if (bad & (1 << q))
						t[q] = exp_f32_scalar(x[i + q]);
				p = _mm256_loadu_ps(t);
			}
		}
		_mm256_maskstore_ps(o + i, m, p);
	}
}

/* Orders the streaming stores before later stores (SSE, in every x86-64). */
__attribute__((target("sse"))) static void
fence_x86(void)
{
	_mm_sfence();
}
#endif /* SIMD_X86 */

/* ---- entry points of the kernels above ------------------------------ */

void
simd_exp(int64_t n, const double *x, double *o)
{
	PICK(exp, n, x, o)
	for (int64_t i = 0; i < n; i++)
		o[i] = ir_scalar_unary(OP_EXP, x[i]);
}

void
simd_exp_f32(int64_t n, const float *x, float *o)
{
	PICK(exp_f32, n, x, o)
	for (int64_t i = 0; i < n; i++)
		o[i] = exp_f32_scalar(x[i]);
}

void
simd_copy_stream(void *dst, const void *src, size_t n)
{
	if (n == 0)
		return;
	PICK(copy_stream, dst, src, n)
	memcpy(dst, src, n);
}

/* On the portable path nothing was streamed; a fence there is harmless and
 * keeps the contract simple (a fence after whichever path ran). */
void
simd_fence(void)
{
#if SIMD_X86
	fence_x86();
#endif
}
