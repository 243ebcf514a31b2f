/*
 * check_simd.c: every vector kernel on every path this CPU has (portable,
 * AVX2, AVX-512) against plain scalar code: ragged sizes that hit every
 * micro-kernel block shape and every tail, leading dimensions wider than
 * the block, NaN, ±inf and signed zeros, in place where the contract
 * allows it.  f64 dots must agree within 1e-12 relative (reassociation and
 * FMA only); f32 dots within the FMA rounding bound (K+2)·2^-24 of the
 * products' magnitudes; elementwise kernels bitwise (NaN matching NaN;
 * f32 ones with the correctly rounded float of the f64 operation); sums
 * within the reassociation bound; exp within 2 ulp; the streaming copy
 * byte for byte at every alignment, writing nothing around its target;
 * the integer kernels bitwise against scalar.h's integer formulas.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "ck_rand.h"
#include "scalar.h"
#include "simd.h"

static uint64_t rs = 88172645463325252ull;

static double
rnd(void)
{
	return (double)(ck_xorshift64(&rs) >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

static bool
same(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

START_TEST(test_simd_dot_every_shape)
{
	static const int64_t ms[] = {1, 5, 6, 7, 32}, ns[] = {1, 3, 4, 7, 8, 9, 17, 32, 33},
	    ks[] = {0, 1, 3, 32};
	SimdIsa best = simd_isa_best();

	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		ck_assert_int_eq(simd_isa(), isa);
		for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++)
			for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++)
				for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
					int64_t M = ms[mi], N = ns[ni], K = ks[ki];
					int64_t lda = K + 3, ldb = N + 5, ldc = N + 2;
					double *a = malloc(sizeof(double) * (size_t)(M * lda + 1));
					double *b = malloc(sizeof(double) * (size_t)(K * ldb + 1));
					double *c = malloc(sizeof(double) * (size_t)(M * ldc));
					double *o = malloc(sizeof(double) * (size_t)(M * ldc));

					for (int64_t q = 0; q < M * lda; q++)
						a[q] = rnd();
					for (int64_t q = 0; q < K * ldb; q++)
						b[q] = rnd();
					for (int64_t q = 0; q < M * ldc; q++) {
						c[q] = rnd();
						o[q] = 777.0;   /* the gaps between rows must survive */
					}
					simd_dot(M, N, K, a, lda, b, ldb, c, o, ldc);
					for (int64_t i = 0; i < M; i++)
						for (int64_t j = 0; j < ldc; j++) {
							double r = c[i * ldc + j];

							if (j >= N) {
								ck_assert_msg(o[i * ldc + j] == 777.0,
								    "%s: wrote outside the block", simd_isa_name((SimdIsa)isa));
								continue;
							}
							for (int64_t k = 0; k < K; k++)
								r += a[i * lda + k] * b[k * ldb + j];
							ck_assert_msg(fabs(o[i * ldc + j] - r) <= 1e-12 * (1 + fabs(r)),
							    "%s: dot %lldx%lldx%lld at (%lld,%lld): %.17g, expected %.17g",
							    simd_isa_name((SimdIsa)isa), (long long)M, (long long)N,
							    (long long)K, (long long)i, (long long)j, o[i * ldc + j], r);
						}
					/* in place: o is c */
					memcpy(o, c, sizeof(double) * (size_t)(M * ldc));
					simd_dot(M, N, K, a, lda, b, ldb, o, o, ldc);
					for (int64_t i = 0; i < M; i++)
						for (int64_t j = 0; j < N; j++) {
							double r = c[i * ldc + j];

							for (int64_t k = 0; k < K; k++)
								r += a[i * lda + k] * b[k * ldb + j];
							ck_assert(fabs(o[i * ldc + j] - r) <= 1e-12 * (1 + fabs(r)));
						}
					free(a);
					free(b);
					free(c);
					free(o);
				}
	}
	simd_set_isa(best);
}
END_TEST

/* Values with every special case, scattered through ordinary ones. */
static void
fill_special(double *x, int64_t n)
{
	static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0, 1e300};

	for (int64_t i = 0; i < n; i++)
		x[i] = i % 3 == 0 ? sp[(i / 3 + (int64_t)(rs & 7)) % 8] : rnd();
}

static double
ref_bin(SimdOp op, double x, double y)
{
	switch (op) {
	case SIMD_ADD: return x + y;
	case SIMD_SUB: return x - y;
	case SIMD_MUL: return x * y;
	case SIMD_DIV: return x / y;
	case SIMD_MAXIMUM: return isnan(x) || x >= y ? x : y;
	case SIMD_MINIMUM: return isnan(x) || x <= y ? x : y;
	default: return 0;
	}
}

START_TEST(test_simd_elementwise_every_path)
{
	SimdIsa best = simd_isa_best();
	enum { N = 67 };
	double a[N], b[N], o[N];

	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		for (int rep = 0; rep < 20; rep++) {
			fill_special(a, N);
			fill_special(b, N);
			for (int op = 0; op < SIMD_OP_COUNT; op++)
				for (int as = 0; as < 2; as++)
					for (int bs = 0; bs < 2; bs++) {
						simd_binary((SimdOp)op, N, a, as, b, bs, o);
						for (int i = 0; i < N; i++) {
							double r = ref_bin((SimdOp)op, a[i * as], b[i * bs]);

							ck_assert_msg(same(o[i], r) && signbit(o[i]) == signbit(r),
							    "%s: op %d (%d,%d) at %d: %g op %g = %g, expected %g",
							    simd_isa_name((SimdIsa)isa), op, as, bs, i, a[i * as],
							    b[i * bs], o[i], r);
						}
					}
			simd_relu(N, a, o);
			for (int i = 0; i < N; i++) {
				double r = isnan(a[i]) || a[i] > 0 ? a[i] : 0.0;

				ck_assert(same(o[i], r) && signbit(o[i]) == signbit(r));
			}
			memcpy(o, b, sizeof o);
			simd_acc_max(N, a, o);
			for (int i = 0; i < N; i++) {
				double r = isnan(a[i]) || a[i] > b[i] ? a[i] : b[i];

				ck_assert_msg(same(o[i], r), "%s: acc_max at %d", simd_isa_name((SimdIsa)isa), i);
			}
			memcpy(o, b, sizeof o);
			simd_acc_sum(N, a, o);
			for (int i = 0; i < N; i++)
				ck_assert(same(o[i], b[i] + a[i]));
		}
	}
	simd_set_isa(best);
}
END_TEST

/* simd_pool_row_f32 on every path against the taps folded one by one in
 * (ky, kx) order: windows inside and across the plane's edges, strides 1
 * to 3 (2: the permute and the register fast path), rows from any pixel
 * on, a NaN in some planes (it wins the max), and the reads it reports
 * (the taps inside). */
START_TEST(test_simd_pool_row_every_path)
{
	SimdIsa best = simd_isa_best();
	float plane[9 * 45], got[300], want[300];

	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		for (int t = 0; t < 400; t++) {
			int64_t H = 1 + t % 9, W = 1 + (t * 7) % 45, kh = 1 + t % 3, kw = 2 + (t / 3) % 2;
			int64_t sh = 1 + (t / 2) % 2, sw = 1 + (t / 5) % 3, dh = 1 + (t / 7) % 2;
			int64_t dw = t % 4 == 0 ? 2 : 1, pt = (t / 11) % 2, pl = (t / 13) % 3;
			int64_t oh = (H + 2 * pt - dh * (kh - 1) - 1) / sh + 1;
			int64_t ow = (W + 2 * pl - dw * (kw - 1) - 1) / sw + 1, p0, vc, reads;
			int mx = t % 2 == 0 || t % 5 == 0;
			int64_t win[11] = {1, kh, kw, oh, ow, sh, sw, pt, pl, dh, dw};

			if (oh < 1 || ow < 1)
				continue;
			for (int64_t i = 0; i < H * W; i++)
				plane[i] = (float)rnd();
			if (t % 7 == 3)
				plane[(t * 13) % (H * W)] = NAN;
			p0 = (t * 3) % (oh * ow);
			vc = oh * ow - p0;
			reads = 0;
			for (int64_t j = 0; j < vc; j++) {
				int64_t oy = (p0 + j) / ow, ox = (p0 + j) % ow;
				float a = mx ? -INFINITY : 0.0f;

				for (int64_t ky = 0; ky < kh; ky++)
					for (int64_t kx = 0; kx < kw; kx++) {
						int64_t y = oy * sh + ky * dh - pt, x = ox * sw + kx * dw - pl;
						float v;

						if (y < 0 || y >= H || x < 0 || x >= W)
							continue;
						v = plane[y * W + x];
						reads++;
						a = !mx ? a + v : v > a || v != v ? v : a;
					}
				want[j] = a;
			}
			ck_assert_int_eq(simd_pool_row_f32(got, vc, p0, win, plane, H, W, mx), reads);
			for (int64_t j = 0; j < vc; j++)
				ck_assert_msg(isnan(want[j]) ? isnan(got[j]) : got[j] == want[j],
				    "%s case %d: pixel %lld is %g, not %g", simd_isa_name((SimdIsa)isa), t,
				    (long long)(p0 + j), (double)got[j], (double)want[j]);
		}
	}
	simd_set_isa(best);
}
END_TEST

START_TEST(test_simd_reductions_every_path)
{
	SimdIsa best = simd_isa_best();
	double x[131];

	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		for (int n = 0; n <= 131; n++) {
			double s = 0, m = -INFINITY;

			for (int i = 0; i < n; i++)
				x[i] = rnd();
			for (int i = 0; i < n; i++) {
				s += x[i];
				m = isnan(x[i]) || x[i] > m ? x[i] : m;
			}
			ck_assert(fabs(simd_sum(n, x) - s) <= 1e-13 * (1 + fabs(s)));
			ck_assert(simd_max(n, x) == m);
			if (n > 0) {
				x[n / 2] = NAN;
				ck_assert(isnan(simd_max(n, x)));
				ck_assert(isnan(simd_sum(n, x)));
				x[n / 2] = INFINITY;
				ck_assert(simd_max(n, x) == INFINITY);
			}
		}
		/* -0 in one vector, +0 in the same lane of the next: a tie
		 * keeps the running max, as the reference does (AVX f64 gave +0) */
		for (int i = 0; i < 16; i++)
			x[i] = -1;
		x[0] = -0.0;
		x[8] = 0.0;
		ck_assert_msg(signbit(simd_max(16, x)), "%s: max of -0 then +0 is not -0",
		    simd_isa_name((SimdIsa)isa));
	}
	simd_set_isa(best);
}
END_TEST

/* Sums in the same order on every path: the same bits. */
START_TEST(test_simd_sum_same_bits_every_path)
{
	SimdIsa best = simd_isa_best();
	double x[200];

	for (int i = 0; i < 200; i++)
		x[i] = rnd() * (i % 7 == 0 ? 1e10 : 1.0);
	for (int n = 0; n <= 200; n++) {
		double ref;

		simd_set_isa(SIMD_PORTABLE);
		ref = simd_sum(n, x);
		for (int isa = 1; isa <= (int)best; isa++) {
			simd_set_isa((SimdIsa)isa);
			ck_assert_msg(simd_sum(n, x) == ref, "%s: sum of %d differs from portable",
			    simd_isa_name((SimdIsa)isa), n);
		}
	}
	simd_set_isa(best);
}
END_TEST

/* exp: within 2 ulp of libm on every path, libm's answer at the edges,
 * the same bits on both AVX paths. */
START_TEST(test_simd_exp_every_path)
{
	SimdIsa best = simd_isa_best();
	enum { N = 1003 };
	static double x[N], o[N], o2[N];
	static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 709.0, 709.5, 710.0, -708.0,
	    -708.5, -745.0, -746.0, 1e-300, -1e-300, 0.5 * 0.6931471805599453, 700.0, -700.0};
	int ns = (int)(sizeof sp / sizeof *sp);

	for (int i = 0; i < N; i++)
		x[i] = i < ns ? sp[i] : rnd() * (i % 2 ? 750.0 : 3.0);
	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		simd_exp(N, x, o);
		for (int i = 0; i < N; i++) {
			double r = exp(x[i]);

			ck_assert_msg(same(o[i], r) || fabs(o[i] - r) <= 4.5e-16 * fabs(r),
			    "%s: exp(%.17g) = %.17g, libm %.17g", simd_isa_name((SimdIsa)isa), x[i], o[i], r);
		}
		if (isa == SIMD_AVX2)
			memcpy(o2, o, sizeof o);
		if (isa == SIMD_AVX512)
			for (int i = 0; i < N; i++)
				ck_assert_msg(same(o[i], o2[i]), "avx512 and avx2 differ at exp(%.17g)", x[i]);
	}
	simd_set_isa(best);
}
END_TEST

/* ---- f32 tiles ------------------------------------------------------- */

static float
rndf(void)
{
	return (float)rnd();
}

/* The f32 dot against an f64 sum of the same products: FMA rounding in K
 * steps stays within (K+2)·2^-24 of the sum of magnitudes (Higham's γ_K);
 * a wrong element or a lost term is off by the magnitude itself. */
static void
check_dot_f32(SimdIsa isa, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb,
    int64_t ldc, bool inplace)
{
	float *a = malloc(sizeof(float) * (size_t)(M * lda + 1));
	float *b = malloc(sizeof(float) * (size_t)(K * ldb + 1));
	float *c = malloc(sizeof(float) * (size_t)(M * ldc + 1));
	float *o = malloc(sizeof(float) * (size_t)(M * ldc + 1));

	for (int64_t q = 0; q < M * lda; q++)
		a[q] = rndf();
	for (int64_t q = 0; q < K * ldb; q++)
		b[q] = rndf();
	for (int64_t q = 0; q < M * ldc; q++) {
		c[q] = rndf();
		o[q] = inplace ? c[q] : 777.0f;   /* the gaps between rows must survive */
	}
	simd_dot_f32(M, N, K, a, lda, b, ldb, inplace ? o : c, o, ldc);
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < ldc; j++) {
			double r = c[i * ldc + j], mag = fabs(r);

			if (j >= N) {
				ck_assert_msg(o[i * ldc + j] == (inplace ? c[i * ldc + j] : 777.0f),
				    "%s: dot_f32 wrote outside the block", simd_isa_name(isa));
				continue;
			}
			for (int64_t k = 0; k < K; k++) {
				double p = (double)a[i * lda + k] * b[k * ldb + j];

				r += p;
				mag += fabs(p);
			}
			ck_assert_msg(fabs(o[i * ldc + j] - r) <= (double)(K + 2) * 0x1p-24 * mag,
			    "%s: dot_f32 %lldx%lldx%lld%s at (%lld,%lld): %.9g, expected %.9g",
			    simd_isa_name(isa), (long long)M, (long long)N, (long long)K,
			    inplace ? " in place" : "", (long long)i, (long long)j,
			    (double)o[i * ldc + j], r);
		}
	free(a);
	free(b);
	free(c);
	free(o);
}

START_TEST(test_simd_dot_f32_every_shape)
{
	static const int64_t ms[] = {1, 5, 6, 7, 13, 64, 65},
	    ns[] = {1, 3, 15, 16, 17, 33, 48, 63, 64, 65, 70, 129}, ks[] = {0, 1, 3, 17, 64};
	SimdIsa best = simd_isa_best();

	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		ck_assert_int_eq(simd_isa(), isa);
		for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++)
			for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++)
				for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
					int64_t M = ms[mi], N = ns[ni], K = ks[ki];

					check_dot_f32((SimdIsa)isa, M, N, K, K + 3, N + 5, N + 2, false);
					check_dot_f32((SimdIsa)isa, M, N, K, K, N, N, true);
				}
	}
	simd_set_isa(best);
}
END_TEST

/* c NULL is an accumulator of zeros: the same bits as a zero c, on every
 * path, in both types, at every row remainder (M 1 to 14: blocks of 6 and
 * the split last 7 or 8 rows) and ragged columns. */
START_TEST(test_simd_dot_zero_accumulator)
{
	SimdIsa best = simd_isa_best();
	enum { MM = 14, NN = 70, KK = 19 };
	static double a[MM * KK], b[KK * NN], z[MM * NN], o1[MM * NN], o2[MM * NN];
	static float af[MM * KK], bf[KK * NN], zf[MM * NN], p1[MM * NN], p2[MM * NN];

	for (int i = 0; i < MM * KK; i++)
		af[i] = (float)(a[i] = (double)rndf() - 0.5);
	for (int i = 0; i < KK * NN; i++)
		bf[i] = (float)(b[i] = (double)rndf() - 0.5);
	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		for (int64_t M = 1; M <= MM; M++)
			for (int64_t N = 1; N <= NN; N += 23) {
				memset(o2, 0x55, sizeof o2);
				memset(p2, 0x55, sizeof p2);
				simd_dot(M, N, KK, a, KK, b, NN, z, o1, NN);
				simd_dot(M, N, KK, a, KK, b, NN, NULL, o2, NN);
				simd_dot_f32(M, N, KK, af, KK, bf, NN, zf, p1, NN);
				simd_dot_f32(M, N, KK, af, KK, bf, NN, NULL, p2, NN);
				for (int64_t i = 0; i < M; i++) {
					ck_assert(memcmp(o1 + i * NN, o2 + i * NN, sizeof(double) * (size_t)N) == 0);
					ck_assert(memcmp(p1 + i * NN, p2 + i * NN, sizeof(float) * (size_t)N) == 0);
				}
			}
	}
	simd_set_isa(best);
}
END_TEST

/* a read in place in a wide tensor, as the executor does with views: lda
 * far beyond K (the blocks prefetch rows past the last one). */
START_TEST(test_simd_dot_wide_lda)
{
	SimdIsa best = simd_isa_best();
	enum { M = 65, N = 70, K = 64, LDA = 1000 };
	double *a = malloc(sizeof(double) * M * LDA), *b = malloc(sizeof(double) * K * N);
	double *c = malloc(sizeof(double) * M * N), *o = malloc(sizeof(double) * M * N);

	for (int q = 0; q < M * LDA; q++)
		a[q] = rnd();
	for (int q = 0; q < K * N; q++)
		b[q] = rnd();
	for (int q = 0; q < M * N; q++)
		c[q] = rnd();
	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		memcpy(o, c, sizeof(double) * M * N);
		simd_dot(M, N, K, a + 7, LDA, b, N, o, o, N);
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				double r = c[i * N + j];

				for (int k = 0; k < K; k++)
					r += a[7 + i * LDA + k] * b[k * N + j];
				ck_assert_msg(fabs(o[i * N + j] - r) <= 1e-12 * (1 + fabs(r)),
				    "%s: dot with lda %d at (%d,%d)", simd_isa_name((SimdIsa)isa), LDA, i, j);
			}
		check_dot_f32((SimdIsa)isa, M, N, K, LDA, N, N, true);
		check_dot_f32((SimdIsa)isa, 13, 64, 64, 1024, 64, 64, false);
	}
	free(a);
	free(b);
	free(c);
	free(o);
	simd_set_isa(best);
}
END_TEST

/* M or N of 0 writes nothing; K of 0 copies c. */
START_TEST(test_simd_dot_f32_empty)
{
	SimdIsa best = simd_isa_best();
	float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4] = {9, 10, 11, 12}, o[4];

	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		for (int i = 0; i < 4; i++)
			o[i] = -1.0f;
		simd_dot_f32(0, 2, 2, a, 2, b, 2, c, o, 2);
		simd_dot_f32(2, 0, 2, a, 2, b, 2, c, o, 2);
		for (int i = 0; i < 4; i++)
			ck_assert(o[i] == -1.0f);
		simd_dot_f32(2, 2, 0, a, 2, b, 2, c, o, 2);
		for (int i = 0; i < 4; i++)
			ck_assert(o[i] == c[i]);
		simd_dot_f32(2, 2, 2, a, 2, b, 2, c, o, 2);
		ck_assert(o[0] == 9 + 1 * 5 + 2 * 7 && o[3] == 12 + 3 * 6 + 4 * 8);
	}
	simd_set_isa(best);
}
END_TEST

/* Both AVX paths do the same FMAs in k order: the same bits. */
START_TEST(test_simd_dot_f32_same_bits_avx)
{
	enum { M = 29, N = 83, K = 64 };
	static float a[M * K], b[K * N], c[M * N], o1[M * N], o2[M * N];
	SimdIsa best = simd_isa_best();

	if (best < SIMD_AVX512)
		return;
	for (int q = 0; q < M * K; q++)
		a[q] = rndf();
	for (int q = 0; q < K * N; q++)
		b[q] = rndf();
	for (int q = 0; q < M * N; q++)
		c[q] = rndf();
	simd_set_isa(SIMD_AVX2);
	simd_dot_f32(M, N, K, a, K, b, N, c, o1, N);
	simd_set_isa(SIMD_AVX512);
	simd_dot_f32(M, N, K, a, K, b, N, c, o2, N);
	ck_assert(memcmp(o1, o2, sizeof o1) == 0);
	simd_set_isa(best);
}
END_TEST

static void
fill_special_f32(float *x, int64_t n)
{
	static const float sp[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, -1.0f, 3e38f,
	    1e-40f};

	for (int64_t i = 0; i < n; i++)
		x[i] = i % 3 == 0 ? sp[(i / 3 + (int64_t)(rs % 9)) % 9] : rndf();
}

static bool
same_f32(float a, float b)
{
	return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b));
}

/* The contract: the correctly rounded float of the f64 operation. */
static float
ref_bin_f32(SimdOp op, float x, float y)
{
	return (float)ref_bin(op, x, y);
}

START_TEST(test_simd_elementwise_f32_every_path)
{
	static const int ns[] = {0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 67};
	SimdIsa best = simd_isa_best();
	enum { NMAX = 67, G = 4 };
	float a[NMAX + G], b[NMAX + G], o[NMAX + G], t[NMAX + G];

	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		for (int rep = 0; rep < 10; rep++)
			for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++) {
				int n = ns[ni];

				fill_special_f32(a, NMAX + G);
				fill_special_f32(b, NMAX + G);
				for (int op = 0; op < SIMD_OP_COUNT; op++)
					for (int as = 0; as < 2; as++)
						for (int bs = 0; bs < 2; bs++) {
							for (int i = 0; i < NMAX + G; i++)
								o[i] = 555.0f;
							simd_binary_f32((SimdOp)op, n, a, as, b, bs, o);
							for (int i = 0; i < n; i++) {
								float r = ref_bin_f32((SimdOp)op, a[i * as], b[i * bs]);

								ck_assert_msg(same_f32(o[i], r),
								    "%s: f32 op %d (%d,%d) n %d at %d: %g op %g = %g, "
								    "expected %g", simd_isa_name((SimdIsa)isa), op, as,
								    bs, n, i, (double)a[i * as], (double)b[i * bs],
								    (double)o[i], (double)r);
							}
							for (int i = n; i < NMAX + G; i++)
								ck_assert_msg(o[i] == 555.0f, "%s: f32 op %d wrote past %d",
								    simd_isa_name((SimdIsa)isa), op, n);
							/* in place, on an operand that is a row */
							if (!as && !bs)
								continue;
							memcpy(t, as ? a : b, sizeof t);
							simd_binary_f32((SimdOp)op, n, as ? t : a, as, as ? b : t, bs,
							    t);
							for (int i = 0; i < n; i++)
								ck_assert(same_f32(t[i], o[i]));
						}
				for (int i = 0; i < NMAX + G; i++)
					o[i] = 555.0f;
				simd_relu_f32(n, a, o);
				for (int i = 0; i < NMAX + G; i++) {
					float r = i >= n ? 555.0f : isnan(a[i]) || a[i] > 0 ? a[i] : 0.0f;

					ck_assert_msg(same_f32(o[i], r), "%s: relu_f32(%g) n %d at %d = %g",
					    simd_isa_name((SimdIsa)isa), (double)a[i], n, i, (double)o[i]);
				}
				memcpy(t, a, sizeof t);
				simd_relu_f32(n, t, t);
				for (int i = 0; i < n; i++)
					ck_assert(same_f32(t[i], o[i]));

				memcpy(o, b, sizeof o);
				simd_acc_max_f32(n, a, o);
				for (int i = 0; i < NMAX + G; i++) {
					float r = i >= n ? b[i] : isnan(a[i]) || a[i] > b[i] ? a[i] : b[i];

					ck_assert_msg(same_f32(o[i], r), "%s: acc_max_f32 n %d at %d",
					    simd_isa_name((SimdIsa)isa), n, i);
				}
				memcpy(o, b, sizeof o);
				simd_acc_sum_f32(n, a, o);
				for (int i = 0; i < NMAX + G; i++)
					ck_assert_msg(same_f32(o[i], i >= n ? b[i] : b[i] + a[i]),
					    "%s: acc_sum_f32 n %d at %d", simd_isa_name((SimdIsa)isa), n, i);
			}
	}
	simd_set_isa(best);
}
END_TEST

START_TEST(test_simd_reductions_f32_every_path)
{
	SimdIsa best = simd_isa_best();
	float x[131];

	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		for (int n = 0; n <= 131; n++) {
			double s = 0, mag = 0;
			float m = -INFINITY;

			for (int i = 0; i < n; i++)
				x[i] = rndf() * (i % 5 == 0 ? 1e6f : 1.0f);
			for (int i = 0; i < n; i++) {
				s += x[i];
				mag += fabs(x[i]);
				m = isnan(x[i]) || x[i] > m ? x[i] : m;
			}
			/* f64 lanes: reassociation costs n·2^-53 of the magnitudes */
			ck_assert_msg(fabs(simd_sum_f32(n, x) - s) <= (n + 1) * 0x1p-53 * mag,
			    "%s: sum_f32 of %d: %.17g, expected %.17g", simd_isa_name((SimdIsa)isa), n,
			    simd_sum_f32(n, x), s);
			ck_assert_msg(simd_max_f32(n, x) == m, "%s: max_f32 of %d",
			    simd_isa_name((SimdIsa)isa), n);
			if (n > 0) {
				x[n - 1] = 1e30f;
				ck_assert(simd_max_f32(n, x) == 1e30f);
				x[n / 2] = NAN;
				ck_assert(isnan(simd_max_f32(n, x)));
				ck_assert(isnan(simd_sum_f32(n, x)));
				x[n / 2] = INFINITY;
				ck_assert(simd_max_f32(n, x) == INFINITY);
				ck_assert(simd_sum_f32(n, x) == INFINITY);
				for (int i = 0; i < n; i++)
					x[i] = -INFINITY;
				ck_assert(simd_max_f32(n, x) == -INFINITY);
			}
		}
	}
	simd_set_isa(best);
}
END_TEST

/* The sum in f64 lanes in one order on every path: the same bits. */
START_TEST(test_simd_sum_f32_same_bits_every_path)
{
	SimdIsa best = simd_isa_best();
	float x[200];

	for (int i = 0; i < 200; i++)
		x[i] = rndf() * (i % 7 == 0 ? 1e10f : 1.0f);
	for (int n = 0; n <= 200; n++) {
		double ref;

		simd_set_isa(SIMD_PORTABLE);
		ref = simd_sum_f32(n, x);
		for (int isa = 1; isa <= (int)best; isa++) {
			simd_set_isa((SimdIsa)isa);
			ck_assert_msg(simd_sum_f32(n, x) == ref, "%s: sum_f32 of %d differs from portable",
			    simd_isa_name((SimdIsa)isa), n);
		}
	}
	simd_set_isa(best);
}
END_TEST

/* Distance in ulps of two finite floats of one sign. */
static int64_t
ulps_f32(float a, float b)
{
	int32_t ia, ib;

	memcpy(&ia, &a, 4);
	memcpy(&ib, &b, 4);
	return ia > ib ? (int64_t)ia - ib : (int64_t)ib - ia;
}

/* exp_f32: within 2 ulp of (float)exp((double)x) everywhere, exactly 0, inf
 * and NaN where the reference is; the same bits on both AVX paths; in
 * place. */
START_TEST(test_simd_exp_f32_every_path)
{
	SimdIsa best = simd_isa_best();
	enum { N = 4003 };
	static float x[N], o[N], o2[N];
	static const float sp[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, -1e-30f,
	    1e-45f, 88.0f, 88.5f, 88.72f, 88.7228f, 88.73f, 89.0f, 89.5f, 100.0f, -87.0f, -87.3f,
	    -87.5f, -100.0f, -103.27f, -103.9f, -103.97f, -104.0f, -104.5f, -150.0f, -1e30f,
	    0.34657359f, -0.34657359f, 1.0f, -1.0f, 3e38f, -3e38f};
	int ns = (int)(sizeof sp / sizeof *sp);

	for (int i = 0; i < N; i++)
		x[i] = i < ns ? sp[i] : i % 3 == 0 ? rndf() * 3.0f :
		    i % 3 == 1 ? rndf() * 110.0f : -87.0f + (float)(i % 97) * 0.17f * rndf();
	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		for (int n = 0; n <= 40; n++) {   /* every tail; the guard after n survives */
			for (int i = 0; i <= n; i++)
				o[i] = 555.0f;
			simd_exp_f32(n, x + ns - 20 + n % 7, o);
			ck_assert_msg(o[n] == 555.0f, "%s: exp_f32 wrote past %d",
			    simd_isa_name((SimdIsa)isa), n);
		}
		simd_exp_f32(N, x, o);
		for (int i = 0; i < N; i++) {
			float r = (float)exp((double)x[i]);
			bool ok = isnan(r) || isinf(r) || r == 0 ? same_f32(o[i], r) :
			    o[i] > 0 && ulps_f32(o[i], r) <= 2;

			ck_assert_msg(ok, "%s: exp_f32(%.9g) = %.9g, reference %.9g",
			    simd_isa_name((SimdIsa)isa), (double)x[i], (double)o[i], (double)r);
		}
		memcpy(o2, x, sizeof x);
		simd_exp_f32(N, o2, o2);
		ck_assert(memcmp(o2, o, sizeof o) == 0);
		if (isa == SIMD_AVX2)
			memcpy(o2, o, sizeof o);
		if (isa == SIMD_AVX512)
			for (int i = 0; i < N; i++)
				ck_assert_msg(same_f32(o[i], o2[i]), "avx512 and avx2 differ at "
				    "exp_f32(%.9g)", (double)x[i]);
	}
	simd_set_isa(best);
}
END_TEST

/* sqrt: bitwise the scalar formula's root (IEEE's, correctly rounded) on
 * every path, f64 and f32, with NaN, infinities, zeros of both signs,
 * negatives, subnormals and every tail length. */
START_TEST(test_simd_sqrt_every_path)
{
	SimdIsa best = simd_isa_best();
	enum { N = 1001 };
	static double x[N], o[N];
	static float xf[N], of[N];
	static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, -1.0, 4.9e-324, 1e-310,
	    1e-45, 2.0, 0.25, 1e300, 3.4e38};

	for (int i = 0; i < N; i++) {
		x[i] = i < (int)(sizeof sp / sizeof *sp) ? sp[i] : (double)rndf() * (i % 5 ? 10 : 1e-30);
		xf[i] = (float)x[i];
	}
	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		for (int n = 0; n <= 40; n++) {
			o[n] = 555.0;
			of[n] = 555.0f;
			simd_sqrt(n, x, o);
			simd_sqrt_f32(n, xf, of);
			ck_assert(o[n] == 555.0 && of[n] == 555.0f);
		}
		simd_sqrt(N, x, o);
		simd_sqrt_f32(N, xf, of);
		for (int i = 0; i < N; i++) {
			double r = ir_scalar_unary(OP_SQRT, x[i]);
			float rf = ir_scalar_unary_f32(OP_SQRT, xf[i]);

			ck_assert_msg(memcmp(&o[i], &r, sizeof r) == 0 || (isnan(o[i]) && isnan(r)),
			    "%s: sqrt(%g) = %g, reference %g", simd_isa_name((SimdIsa)isa), x[i], o[i], r);
			ck_assert_msg(same_f32(of[i], rf), "%s: sqrt_f32(%g) = %g, reference %g",
			    simd_isa_name((SimdIsa)isa), (double)xf[i], (double)of[i], (double)rf);
		}
	}
	simd_set_isa(best);
}
END_TEST

/* The streaming copy at every alignment of dst and src and ragged lengths:
 * the bytes copied, the bytes around them untouched. */
START_TEST(test_simd_copy_stream_every_path)
{
	static const size_t lens[] = {0, 1, 63, 64, 65, 127, 128, 129, 200, 1000, 4097};
	static const size_t offs[] = {0, 1, 3, 8, 32, 61};
	enum { CAP = 68 * 64 };           /* 4097 + 64 + 128, rounded up for aligned_alloc */
	SimdIsa best = simd_isa_best();
	unsigned char *src = aligned_alloc(64, CAP), *dst = aligned_alloc(64, CAP);

	for (size_t i = 0; i < CAP; i++)
		src[i] = (unsigned char)(i * 131 + 7);
	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
			for (size_t di = 0; di < sizeof offs / sizeof *offs; di++)
				for (size_t si = 0; si < sizeof offs / sizeof *offs; si++) {
					size_t n = lens[li], d = offs[di], s = offs[si];

					memset(dst, 0xab, CAP);
					simd_copy_stream(dst + d, src + s, n);
					simd_fence();
					for (size_t i = 0; i < CAP; i++) {
						unsigned char want = i >= d && i < d + n ? src[s + i - d] : 0xab;

						ck_assert_msg(dst[i] == want,
						    "%s: copy_stream of %zu from +%zu to +%zu: byte %zu",
						    simd_isa_name((SimdIsa)isa), n, s, d, i);
					}
				}
	}
	free(src);
	free(dst);
	simd_set_isa(best);
}
END_TEST

/* Integers of every size, a fifth at the types' ends (where add, mul,
 * neg and abs wrap), as int64; an i32's stay in range. */
static int64_t
rnd_int(bool i32)
{
	int64_t lo = i32 ? INT32_MIN : INT64_MIN, hi = i32 ? INT32_MAX : INT64_MAX;
	uint64_t r;

	r = ck_xorshift64(&rs);
	switch (r % 10) {
	case 0: return lo;
	case 1: return hi;
	case 2: return -1;
	case 3: return i32 ? (int64_t)(int32_t)(uint32_t)(r >> 32) : (int64_t)(r >> 1) *
	    (r & 1 ? 1 : -1);
	default: return (int64_t)(r >> 40) % 41 - 20;
	}
}

/* The integer kernels (simd_int.c) on every path against scalar.h's
 * integer formulas, bitwise: every length up to a few vectors and its
 * tail, stretched operands (stride 0) on either side; the compares, the
 * logical ops, sign, not and where too (operands often equal and often
 * 0: rnd_int's small values). */
START_TEST(test_simd_int_every_path)
{
	static const OpId bins[] = {OP_ADD, OP_SUB, OP_MUL, OP_MAXIMUM, OP_MINIMUM, OP_EQUAL,
	    OP_LESS, OP_LESS_EQUAL, OP_GREATER, OP_GREATER_EQUAL, OP_AND, OP_OR, OP_XOR};
	static const OpId uns[] = {OP_RELU, OP_NEG, OP_ABS, OP_SIGN, OP_NOT};
	/* the ops every AVX2 path has a kernel for, in both types (i64 mul
	 * too: three 32-bit products) */
	static const bool vec64[] = {true, true, true, true, true, true, true, true, true, true,
	    true, true, true};
	enum { NB = sizeof bins / sizeof bins[0], NU = sizeof uns / sizeof uns[0] };
	SimdIsa best = simd_isa_best();
	enum { N = 37 };
	int64_t a64[N], b64[N], o64[N];
	int32_t a32[N], b32[N], o32[N];

	for (int isa = 0; isa <= (int)best; isa++) {
		simd_set_isa((SimdIsa)isa);
		for (int rep = 0; rep < 40; rep++) {
			int64_t n = rep % N + 1;

			for (int i = 0; i < N; i++) {
				a64[i] = rnd_int(false);
				b64[i] = rnd_int(false);
				a32[i] = (int32_t)rnd_int(true);
				b32[i] = (int32_t)rnd_int(true);
			}
			for (int k = 0; k < NB; k++)
				for (int st = 0; st < 3; st++) {
					int sa = st != 1, sb = st != 2;
					int64_t d32 = simd_int_binary(bins[k], DT_I32, n, a32, sa, b32, sb,
					    o32);
					int64_t d64 = simd_int_binary(bins[k], DT_I64, n, a64, sa, b64, sb,
					    o64);

					ck_assert(d32 >= 0 && d32 <= n && d64 >= 0 && d64 <= n);
					/* a vector kernel that exists is taken, so that the
					 * bitwise checks below check it */
					if (isa >= SIMD_AVX2 && n >= 8)
						ck_assert_int_gt(d32, 0);
					if (isa >= SIMD_AVX2 && n >= 4 && vec64[k])
						ck_assert_int_gt(d64, 0);
					for (int64_t i = 0; i < d32; i++)
						ck_assert_msg(o32[i] == (int32_t)ir_scalar_wrap(DT_I32,
						    ir_scalar_binary_i64(bins[k], a32[i * sa], b32[i * sb])),
						    "%s i32 on %s at %lld", ir_ops[bins[k]].name,
						    simd_isa_name((SimdIsa)isa), (long long)i);
					for (int64_t i = 0; i < d64; i++)
						ck_assert_msg(o64[i] == ir_scalar_binary_i64(bins[k], a64[i * sa],
						    b64[i * sb]), "%s i64 on %s at %lld", ir_ops[bins[k]].name,
						    simd_isa_name((SimdIsa)isa), (long long)i);
				}
			for (int k = 0; k < NU; k++) {
				int64_t d32 = simd_int_unary(uns[k], DT_I32, n, a32, o32);
				int64_t d64 = simd_int_unary(uns[k], DT_I64, n, a64, o64);

				if (isa >= SIMD_AVX2 && n >= 8)
					ck_assert(d32 > 0 && d64 > 0);

				for (int64_t i = 0; i < d32; i++)
					ck_assert_msg(o32[i] == (int32_t)ir_scalar_wrap(DT_I32,
					    ir_scalar_unary_i64(uns[k], a32[i])), "%s i32 on %s",
					    ir_ops[uns[k]].name, simd_isa_name((SimdIsa)isa));
				for (int64_t i = 0; i < d64; i++)
					ck_assert_msg(o64[i] == ir_scalar_unary_i64(uns[k], a64[i]),
					    "%s i64 on %s", ir_ops[uns[k]].name, simd_isa_name((SimdIsa)isa));
			}
			/* where, by a condition of 0s and 1s (an integer kernel's bools)
			 * or of any integers (nonzero is true), each operand whole or
			 * stretched */
			for (int st = 0; st < 8; st++) {
				int sc = !(st & 1), sa = !(st & 2), sb = !(st & 4);
				int32_t c32[N];
				int64_t c64[N];

				for (int i = 0; i < N; i++) {
					c32[i] = rep % 2 ? (int32_t)(a32[i] & 1) : b32[i];
					c64[i] = rep % 2 ? (a64[i] & 1) : b64[(i + 1) % N];
				}
				{
					int64_t d32 = simd_int_where(DT_I32, n, c32, sc, a32, sa, b32, sb, o32);
					int64_t d64 = simd_int_where(DT_I64, n, c64, sc, a64, sa, b64, sb, o64);

					ck_assert(d32 >= 0 && d32 <= n && d64 >= 0 && d64 <= n);
					if (isa >= SIMD_AVX2 && n >= 8)
						ck_assert(d32 > 0 && d64 > 0);
					if (isa < SIMD_AVX2)
						ck_assert(d32 == 0 && d64 == 0);
					for (int64_t i = 0; i < d32; i++)
						ck_assert_msg(o32[i] == (c32[i * sc] ? a32[i * sa] : b32[i * sb]),
						    "where i32 on %s at %lld", simd_isa_name((SimdIsa)isa),
						    (long long)i);
					for (int64_t i = 0; i < d64; i++)
						ck_assert_msg(o64[i] == (c64[i * sc] ? a64[i * sa] : b64[i * sb]),
						    "where i64 on %s at %lld", simd_isa_name((SimdIsa)isa),
						    (long long)i);
				}
			}
			/* division has no vector kernel: its zeros are the caller's */
			ck_assert_int_eq(simd_int_binary(OP_DIV, DT_I32, n, a32, 1, b32, 1, o32), 0);
		}
	}
	simd_set_isa(best);
}
END_TEST

Suite *
make_simd_suite(void)
{
	Suite *s = suite_create("simd");
	TCase *t = tcase_create("paths");

	/* every shape on every path: seconds under ASan on a loaded machine */
	tcase_set_timeout(t, 120);

	tcase_add_test(t, test_simd_dot_every_shape);
	tcase_add_test(t, test_simd_elementwise_every_path);
	tcase_add_test(t, test_simd_reductions_every_path);
	tcase_add_test(t, test_simd_sum_same_bits_every_path);
	tcase_add_test(t, test_simd_exp_every_path);
	tcase_add_test(t, test_simd_dot_f32_every_shape);
	tcase_add_test(t, test_simd_dot_f32_empty);
	tcase_add_test(t, test_simd_dot_wide_lda);
	tcase_add_test(t, test_simd_dot_f32_same_bits_avx);
	tcase_add_test(t, test_simd_elementwise_f32_every_path);
	tcase_add_test(t, test_simd_reductions_f32_every_path);
	tcase_add_test(t, test_simd_sum_f32_same_bits_every_path);
	tcase_add_test(t, test_simd_exp_f32_every_path);
	tcase_add_test(t, test_simd_sqrt_every_path);
	tcase_add_test(t, test_simd_dot_zero_accumulator);
	tcase_add_test(t, test_simd_pool_row_every_path);
	tcase_add_test(t, test_simd_copy_stream_every_path);
	tcase_add_test(t, test_simd_int_every_path);
	suite_add_tcase(s, t);
	return s;
}
