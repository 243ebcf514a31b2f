/*
 * check_simd.c: every vector kernel on every path this CPU has (portable,
 * AVX2, AVX-512) against plain scalar code: ragged sizes that hit every
 * micro-kernel block shape and every tail, leading dimensions wider than
 * the block, NaN, ±inf and signed zeros.  Dots must agree within 1e-12
 * relative (reassociation and FMA only); elementwise kernels bitwise
 * (NaN matching NaN); sums within 1e-13 relative.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "simd.h"

static uint64_t rs = 88172645463325252ull;

static double
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (double)(rs >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
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
	float f[N];

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
			simd_round_f32(N, a, o);
			for (int i = 0; i < N; i++)
				ck_assert(same(o[i], (double)(float)a[i]));
			simd_f64_to_f32(N, a, f);
			for (int i = 0; i < N; i++)
				ck_assert(same(f[i], (float)a[i]));
			simd_f32_to_f64(N, f, o);
			for (int i = 0; i < N; i++)
				ck_assert(same(o[i], (double)f[i]));
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
	suite_add_tcase(s, t);
	return s;
}
