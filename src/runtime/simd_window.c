/*
 * simd_window.c: the strided gather that im2col packs a strided window
 * with (tile_window.c), vectorised.
 *
 * A pool of stride 2 (ResNet's 3x3/2 max pool, the bench's workload) packs
 * every tap as a run of every second element of an input row.  Element by
 * element that was most of the pool's time; on AVX-512 two loads and one
 * two-source permute give 16 of them (any other stride: the gather
 * instruction), on AVX2 a shuffle and a lane permute give 8.  The ragged
 * end is done element by element, so no load reads past the run.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

__attribute__((target("avx512f"))) static int64_t
gather_avx512(int64_t n, const float *src, int64_t stride, float *dst)
{
	int64_t j = 0;

	if (stride == 1) {
		/* a conv's runs are short (an output row, 56 floats in ResNet's
		 * first stage): inline vectors and a masked end beat a call */
		for (; j + 16 <= n; j += 16)
			_mm512_storeu_ps(dst + j, _mm512_loadu_ps(src + j));
		if (j < n) {
			__mmask16 m = (__mmask16)((1u << (n - j)) - 1);

			_mm512_mask_storeu_ps(dst + j, m, _mm512_maskz_loadu_ps(m, src + j));
			j = n;
		}
	} else if (stride == 2) {
		const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22,
		    24, 26, 28, 30);

		/* the last vector reads src[2j .. 2j+31]; the run ends at 2(n-1) */
		for (; j + 16 < n; j += 16) {
			__m512 lo = _mm512_loadu_ps(src + 2 * j), hi = _mm512_loadu_ps(src + 2 * j + 16);

			_mm512_storeu_ps(dst + j, _mm512_permutex2var_ps(lo, even, hi));
		}
		/* the rest, 1 to 16 elements, with masks: a masked-off lane
		 * neither loads nor faults */
		if (j < n) {
			int64_t r = n - j, e = 2 * r - 1;     /* source elements 2j .. 2j+e-1 */
			__mmask16 m1 = (__mmask16)(e >= 16 ? 0xFFFF : (1u << e) - 1);
			__mmask16 m2 = (__mmask16)(e <= 16 ? 0 : (1u << (e - 16)) - 1);
			__m512 lo = _mm512_maskz_loadu_ps(m1, src + 2 * j);
			__m512 hi = _mm512_maskz_loadu_ps(m2, src + 2 * j + 16);

			_mm512_mask_storeu_ps(dst + j, (__mmask16)((1u << r) - 1),
			    _mm512_permutex2var_ps(lo, even, hi));
			j = n;
		}
	} else if (stride * 15 < INT32_MAX / 4) {
		const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8,
		    9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32((int)stride));

		for (; j + 16 <= n; j += 16)
			_mm512_storeu_ps(dst + j, _mm512_i32gather_ps(idx, src + j * stride, 4));
	}
	return j;
}

__attribute__((target("avx2"))) static int64_t
gather_avx2(int64_t n, const float *src, int64_t stride, float *dst)
{
	int64_t j = 0;

	if (stride == 2)
		for (; j + 8 < n; j += 8) {
			__m256 lo = _mm256_loadu_ps(src + 2 * j), hi = _mm256_loadu_ps(src + 2 * j + 8);
			/* [l0 l2 h0 h2 | l4 l6 h4 h6] -> [l0 l2 l4 l6 h0 h2 h4 h6] */
			__m256 s = _mm256_shuffle_ps(lo, hi, 0x88);

			_mm256_storeu_ps(dst + j, _mm256_castpd_ps(_mm256_permute4x64_pd(
			    _mm256_castps_pd(s), 0xD8)));
		}
	return j;
}
#endif

/* One row of an f32 im2col tile, the whole row in one call (segment by
 * segment, a call each, the calls cost as much as the copies at a pool's
 * 27-pixel rows).  T is the ISA's instance of the gather. */
#define IM2COL_ROW(NAME, ATTR, GATHER)                                              \
	ATTR static int64_t                                                            \
	NAME(float *dst, int64_t vc, int64_t p0, int64_t ow, int64_t sh, int64_t sw,   \
	    int64_t dy, int64_t dx, const float *plane, int64_t H, int64_t W, float other) \
	{                                                                              \
		int64_t reads = 0, oy = p0 / ow, ox = p0 % ow;                             \
                                                                                       \
		for (int64_t j = 0; j < vc; oy++, ox = 0) {                                \
			int64_t seg = ow - ox, y = oy * sh + dy;                               \
			float *d = dst + j;                                                    \
                                                                                       \
			if (seg > vc - j)                                                      \
				seg = vc - j;                                                  \
			j += seg;                                                              \
			if (y < 0 || y >= H) {                                                 \
				for (int64_t e = 0; e < seg; e++)                              \
					d[e] = other;                                          \
				continue;                                                      \
			}                                                                      \
			{                                                                      \
				int64_t x0 = ox * sw + dx;                                     \
				int64_t lo = x0 >= 0 ? 0 : (-x0 + sw - 1) / sw;                \
				int64_t hi = x0 >= W ? 0 : (W - x0 + sw - 1) / sw;             \
                                                                                       \
				hi = hi > seg ? seg : hi;                                      \
				lo = lo > hi ? hi : lo;                                        \
				for (int64_t e = 0; e < lo; e++)                               \
					d[e] = other;                                          \
				if (hi > lo)                                                   \
					GATHER(hi - lo, plane + y * W + x0 + lo * sw, sw, d + lo); \
				for (int64_t e = hi; e < seg; e++)                             \
					d[e] = other;                                          \
				reads += hi - lo;                                              \
			}                                                                      \
		}                                                                              \
		return reads;                                                                  \
	}

static void
gather_scalar(int64_t n, const float *src, int64_t stride, float *dst)
{
	if (stride == 1) {
		memcpy(dst, src, sizeof(float) * (size_t)n);
		return;
	}
	for (int64_t j = 0; j < n; j++)
		dst[j] = src[j * stride];
}

IM2COL_ROW(row_portable, , gather_scalar)

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx512f"), always_inline)) static inline void
gather512(int64_t n, const float *src, int64_t stride, float *dst)
{
	int64_t j = gather_avx512(n, src, stride, dst);

	for (; j < n; j++)
		dst[j] = src[j * stride];
}

__attribute__((target("avx2"), always_inline)) static inline void
gather256(int64_t n, const float *src, int64_t stride, float *dst)
{
	int64_t j = stride == 1 ? 0 : gather_avx2(n, src, stride, dst);

	if (stride == 1) {
		memcpy(dst, src, sizeof(float) * (size_t)n);
		return;
	}
	for (; j < n; j++)
		dst[j] = src[j * stride];
}

IM2COL_ROW(row_avx512, __attribute__((target("avx512f"))), gather512)
IM2COL_ROW(row_avx2, __attribute__((target("avx2"))), gather256)
#endif

int64_t
simd_im2col_row_f32(float *dst, int64_t vc, int64_t p0, int64_t ow, int64_t sh, int64_t sw,
    int64_t dy, int64_t dx, const float *plane, int64_t H, int64_t W, float other)
{
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
	switch (simd_isa()) {
	case SIMD_AVX512:
		return row_avx512(dst, vc, p0, ow, sh, sw, dy, dx, plane, H, W, other);
	case SIMD_AVX2:
		return row_avx2(dst, vc, p0, ow, sh, sw, dy, dx, plane, H, W, other);
	default:
		break;
	}
#endif
	return row_portable(dst, vc, p0, ow, sh, sw, dy, dx, plane, H, W, other);
}

void
simd_gather_f32(int64_t n, const float *src, int64_t stride, float *dst)
{
	int64_t j = 0;

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
	switch (simd_isa()) {
	case SIMD_AVX512:
		j = gather_avx512(n, src, stride, dst);
		break;
	case SIMD_AVX2:
		j = gather_avx2(n, src, stride, dst);
		break;
	default:
		break;
	}
#endif
	if (stride == 1 && j == 0) {
		memcpy(dst, src, sizeof(float) * (size_t)n);
		return;
	}
	for (; j < n; j++)
		dst[j] = src[j * stride];
}

/* ---- pools: the taps folded into the result as they are read ---------
 *
 * max_pool2d and avg_pool2d fold the window's taps into their result row
 * directly (window_max, window_sum): no tap is packed into a tile of its
 * own, so each tap costs its strided loads and one max or add on a row of
 * the result that stays in L1, not a tile written and read again.  The
 * max lets a NaN win, as the reference's does: maxps keeps its second
 * operand (the row) when either is NaN, and the tap's own NaN lanes are
 * put back with a mask. */
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx512f"), always_inline)) static inline __m512
fold512(__m512 d, __m512 v, int mx)
{
	if (!mx)
		return _mm512_add_ps(d, v);
	return _mm512_mask_mov_ps(_mm512_max_ps(v, d), _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
}

/* dst[j] = fold(dst[j], src[j * stride]) for j < n; reads no element past
 * src[(n-1) * stride] (masked-off lanes neither load nor fault) */
__attribute__((target("avx512f"), always_inline)) static inline void
comb512(int64_t n, const float *src, int64_t stride, float *dst, int mx)
{
	int64_t j = 0;

	if (stride == 1) {
		for (; j + 16 <= n; j += 16)
			_mm512_storeu_ps(dst + j, fold512(_mm512_loadu_ps(dst + j),
			    _mm512_loadu_ps(src + j), mx));
		if (j < n) {
			__mmask16 m = (__mmask16)((1u << (n - j)) - 1);

			_mm512_mask_storeu_ps(dst + j, m, fold512(_mm512_maskz_loadu_ps(m, dst + j),
			    _mm512_maskz_loadu_ps(m, src + j), mx));
			j = n;
		}
	} else if (stride == 2) {
		const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22,
		    24, 26, 28, 30);

		for (; j + 16 < n; j += 16) {
			__m512 lo = _mm512_loadu_ps(src + 2 * j), hi = _mm512_loadu_ps(src + 2 * j + 16);

			_mm512_storeu_ps(dst + j, fold512(_mm512_loadu_ps(dst + j),
			    _mm512_permutex2var_ps(lo, even, hi), mx));
		}
		if (j < n) {
			int64_t r = n - j, e = 2 * r - 1;     /* source elements 2j .. 2j+e-1 */
			__mmask16 m1 = (__mmask16)(e >= 16 ? 0xFFFF : (1u << e) - 1);
			__mmask16 m2 = (__mmask16)(e <= 16 ? 0 : (1u << (e - 16)) - 1);
			__mmask16 m = (__mmask16)((1u << r) - 1);
			__m512 lo = _mm512_maskz_loadu_ps(m1, src + 2 * j);
			__m512 hi = _mm512_maskz_loadu_ps(m2, src + 2 * j + 16);

			_mm512_mask_storeu_ps(dst + j, m, fold512(_mm512_maskz_loadu_ps(m, dst + j),
			    _mm512_permutex2var_ps(lo, even, hi), mx));
			j = n;
		}
	} else if (stride * 15 < INT32_MAX / 4) {
		const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8,
		    9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32((int)stride));

		for (; j < n; j += 16) {
			__mmask16 m = (__mmask16)(n - j >= 16 ? 0xFFFF : (1u << (n - j)) - 1);
			__m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx,
			    src + j * stride, 4);

			_mm512_mask_storeu_ps(dst + j, m, fold512(_mm512_maskz_loadu_ps(m, dst + j), v,
			    mx));
		}
	}
	for (; j < n; j++) {
		float v = src[j * stride];

		dst[j] = !mx ? dst[j] + v : v > dst[j] || v != v ? v : dst[j];
	}
}

__attribute__((target("avx2"), always_inline)) static inline __m256
fold256(__m256 d, __m256 v, int mx)
{
	if (!mx)
		return _mm256_add_ps(d, v);
	return _mm256_blendv_ps(_mm256_max_ps(v, d), v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

__attribute__((target("avx2"), always_inline)) static inline void
comb256(int64_t n, const float *src, int64_t stride, float *dst, int mx)
{
	int64_t j = 0;

	if (stride == 1)
		for (; j + 8 <= n; j += 8)
			_mm256_storeu_ps(dst + j, fold256(_mm256_loadu_ps(dst + j),
			    _mm256_loadu_ps(src + j), mx));
	else if (stride == 2)
		for (; j + 8 < n; j += 8) {
			__m256 lo = _mm256_loadu_ps(src + 2 * j), hi = _mm256_loadu_ps(src + 2 * j + 8);
			__m256 s = _mm256_shuffle_ps(lo, hi, 0x88);

			_mm256_storeu_ps(dst + j, fold256(_mm256_loadu_ps(dst + j),
			    _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xD8)), mx));
		}
	for (; j < n; j++) {
		float v = src[j * stride];

		dst[j] = !mx ? dst[j] + v : v > dst[j] || v != v ? v : dst[j];
	}
}
#endif

static void
comb_scalar(int64_t n, const float *src, int64_t stride, float *dst, int mx)
{
	for (int64_t j = 0; j < n; j++) {
		float v = src[j * stride];

		dst[j] = !mx ? dst[j] + v : v > dst[j] || v != v ? v : dst[j];
	}
}

/* n outputs of one output row, (oy, ox) on: the run starts at the fold's
 * identity and every tap whose input row is inside folds in its run of the
 * input row (the x positions inside, as im2col packs them). */
#define POOL_RUN(NAME, ATTR, COMB)                                                  \
	ATTR static int64_t                                                            \
	NAME(float *d, int64_t n, int64_t oy, int64_t ox, const int64_t *g,           \
	    const float *plane, int64_t H, int64_t W, int mx)                          \
	{                                                                              \
		int64_t kh = g[1], kw = g[2], sh = g[5], sw = g[6], pt = g[7];             \
		int64_t pl = g[8], dh = g[9], dw = g[10], reads = 0;                       \
		float init = mx ? -INFINITY : 0.0f;                                        \
                                                                                       \
		for (int64_t e = 0; e < n; e++)                                            \
			d[e] = init;                                                       \
		for (int64_t ky = 0; ky < kh; ky++) {                                      \
			int64_t y = oy * sh + ky * dh - pt;                                \
                                                                                       \
			if (y < 0 || y >= H)                                               \
				continue;                                                  \
			for (int64_t kx = 0; kx < kw; kx++) {                              \
				int64_t x0 = ox * sw + kx * dw - pl;                       \
				int64_t lo = x0 >= 0 ? 0 : (-x0 + sw - 1) / sw;            \
				int64_t hi = x0 >= W ? 0 : (W - x0 + sw - 1) / sw;         \
                                                                                       \
				hi = hi > n ? n : hi;                                      \
				if (hi > lo) {                                             \
					COMB(hi - lo, plane + y * W + x0 + lo * sw, sw,    \
					    d + lo, mx);                                   \
					reads += hi - lo;                                  \
				}                                                          \
			}                                                                  \
		}                                                                          \
		return reads;                                                              \
	}

/* A row of the pool's result, output row by output row: FAST takes an
 * output row's run (returning its length) or leaves it to RUN (0). */
#define POOL_ROW(NAME, ATTR, RUN, FAST)                                             \
	ATTR static int64_t                                                            \
	NAME(float *dst, int64_t vc, int64_t p0, const int64_t *g, const float *plane, \
	    int64_t H, int64_t W, int mx)                                              \
	{                                                                              \
		int64_t ow = g[4], reads = 0, oy = p0 / ow, ox = p0 % ow;                  \
                                                                                       \
		for (int64_t j = 0; j < vc; oy++, ox = 0) {                                \
			int64_t seg = ow - ox;                                             \
                                                                                       \
			if (seg > vc - j)                                                  \
				seg = vc - j;                                              \
			if (FAST(dst + j, seg, oy, ox, g, plane, H, W, mx, &reads) == 0)  \
				reads += RUN(dst + j, seg, oy, ox, g, plane, H, W, mx);    \
			j += seg;                                                          \
		}                                                                          \
		return reads;                                                              \
	}

/* The fast path's geometry: the max over a 2- or 3-wide window at
 * stride 2, dilation 1 (ResNet's 3x3/2, VGG's 2x2/2), any rows. */
static int
fast_ok(const int64_t *g, int mx)
{
	return mx && g[6] == 2 && g[10] == 1 && (g[2] == 2 || g[2] == 3);
}

static int64_t
fast_none(float *d, int64_t n, int64_t oy, int64_t ox, const int64_t *g, const float *plane,
    int64_t H, int64_t W, int mx, int64_t *reads)
{
	(void)d, (void)n, (void)oy, (void)ox, (void)g, (void)plane, (void)H, (void)W, (void)mx;
	(void)reads;
	return 0;
}

POOL_RUN(run_portable, , comb_scalar)
POOL_ROW(pool_portable, , run_portable, fast_none)
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
POOL_RUN(run_avx512, __attribute__((target("avx512f"))), comb512)
POOL_RUN(run_avx2, __attribute__((target("avx2"))), comb256)

/* The 2- or 3-wide max at stride 2 in registers, separable: the rows
 * inside first (a vertical max of the same input columns), then the
 * window along the row from the even, odd and next-even columns (two
 * permutes), in chunks of up to 16 outputs; columns outside the row load
 * as -inf (masked lanes neither load nor fault).  maxps drops NaNs, so a
 * chunk whose inputs hold one is done again by run_avx512, which lets it
 * win.  A tie keeps the earlier row's, then the earlier column's value:
 * between -0 and +0 the sign can differ from the reference's (row by row)
 * pick.  Returns the outputs done: all n, or 0 where it does not apply. */
__attribute__((target("avx512f"))) static int64_t
fast512(float *d, int64_t n, int64_t oy, int64_t ox, const int64_t *g, const float *plane,
    int64_t H, int64_t W, int mx, int64_t *reads)
{
	int64_t kh = g[1], kw = g[2], sh = g[5], pt = g[7], pl = g[8], dh = g[9];
	int64_t done = 0, nr = 0;
	const float *rows[64];
	const __m512 ninf = _mm512_set1_ps(-INFINITY);
	const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
	    26, 28, 30);
	const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25,
	    27, 29, 31);

	if (!fast_ok(g, mx) || kh > 64)
		return 0;
	for (int64_t ky = 0; ky < kh; ky++) {
		int64_t y = oy * sh + ky * dh - pt;

		if (y >= 0 && y < H)
			rows[nr++] = plane + y * W;
	}
	if (nr == 0)
		return 0;
	while (done < n) {
		int64_t r = n - done > 16 ? 16 : n - done, ne = 2 * r + kw - 2;   /* inputs */
		int64_t x0 = (ox + done) * 2 - pl, a = x0 < 0 ? -x0 : 0, b = W - x0, taps = 0;
		uint64_t live;
		__mmask16 m1, m2, m3, nan;
		__m512 lo, hi, nx, e, o, out;

		b = b > ne ? ne : b;
		live = b <= a ? 0 : (((uint64_t)1 << b) - 1) & ~(((uint64_t)1 << a) - 1);
		m1 = (__mmask16)(live & 0xFFFF);
		m2 = (__mmask16)(live >> 16 & 0xFFFF);
		m3 = (__mmask16)(live >> 32 & 0xFFFF);
		lo = hi = nx = ninf;
		nan = 0;
		for (int64_t k = 0; k < nr; k++) {
			/* the chunk's first column may lie left of the row: the
			 * address is formed without pointer arithmetic past it */
			const float *src = (const float *)(const void *)((uintptr_t)rows[k] +
			    (uintptr_t)x0 * sizeof(float));
			__m512 va = _mm512_mask_loadu_ps(ninf, m1, src);
			__m512 vb = _mm512_mask_loadu_ps(ninf, m2, src + 16);
			__m512 vc = _mm512_mask_loadu_ps(ninf, m3, src + 32);

			nan |= _mm512_cmp_ps_mask(va, vb, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(vc, vc,
			    _CMP_UNORD_Q);
			/* max(va, lo): a tie keeps the earlier row's */
			lo = _mm512_max_ps(va, lo);
			hi = _mm512_max_ps(vb, hi);
			nx = _mm512_max_ps(vc, nx);
		}
		if (nan) {
			*reads += run_avx512(d + done, r, oy, ox + done, g, plane, H, W, mx);
			done += r;
			continue;
		}
		e = _mm512_permutex2var_ps(lo, even, hi);
		o = _mm512_permutex2var_ps(lo, odd, hi);
		out = _mm512_max_ps(o, e);
		if (kw == 3) {
			/* the next even columns: 2, 4, .., 32 */
			__m512 a2 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(hi),
			    _mm512_castps_si512(lo), 2));
			__m512 b2 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(nx),
			    _mm512_castps_si512(hi), 2));

			out = _mm512_max_ps(_mm512_permutex2var_ps(a2, even, b2), out);
		}
		_mm512_mask_storeu_ps(d + done, (__mmask16)(r >= 16 ? 0xFFFF : (1u << r) - 1), out);
		/* the reads: per row, the taps inside, as run_avx512 counts them */
		for (int64_t kx = 0; kx < kw; kx++) {
			int64_t c = x0 + kx, tl = c >= 0 ? 0 : (-c + 1) / 2;
			int64_t th = c >= W ? 0 : (W - c + 1) / 2;

			th = th > r ? r : th;
			taps += th > tl ? th - tl : 0;
		}
		*reads += nr * taps;
		done += r;
	}
	return done;
}

POOL_ROW(pool_avx512, __attribute__((target("avx512f"))), run_avx512, fast512)
POOL_ROW(pool_avx2, __attribute__((target("avx2"))), run_avx2, fast_none)
#endif

int64_t
simd_pool_row_f32(float *dst, int64_t vc, int64_t p0, const int64_t *win, const float *plane,
    int64_t H, int64_t W, int mx)
{
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
	switch (simd_isa()) {
	case SIMD_AVX512:
		return pool_avx512(dst, vc, p0, win, plane, H, W, mx);
	case SIMD_AVX2:
		return pool_avx2(dst, vc, p0, win, plane, H, W, mx);
	default:
		break;
	}
#endif
	return pool_portable(dst, vc, p0, win, plane, H, W, mx);
}
