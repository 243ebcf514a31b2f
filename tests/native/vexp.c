/* vexp.c: the native engine's exp (aicm_vexp_f32/_f64, emit_c.c's
 * vexp_text) against libm over a sweep of inputs (tests/native.sh builds
 * it with the functions as aicm-opt --emit=c writes them, in VEXP_H).
 *
 * The reference is the other engines' exp: exp(x) in f64 and
 * (float)exp((double)x) in f32.  The sweep: every float of the bands
 * where the method changes (results subnormal, the overflow edge,
 * [2^-7, 2^-6] of both signs), every 257th float bit pattern elsewhere, a pseudo-random million
 * doubles over [-750, 715] and the doubles of the subnormal and overflow
 * edges; NaN, +-inf, +-0 and the largest finite inputs.  The error is
 * counted in ulps as the distance between the bit patterns (results are
 * never negative, so the patterns order as the values), which measures
 * subnormal results in the subnormals' own ulp.  Exit 1 with the worst
 * input when a result is off by more than MAX_ULP, or a special value is
 * not what libm gives.
 *
 * The inputs go through aicm_vexp_* in batches of BATCH, by the loops
 * marked "the vectorised loop", which gcc vectorises at -O3 (tests/native.sh
 * checks that it does, for AVX2 and AVX-512, with -fopt-info-vec): the
 * lanes the kernels run are the ones measured, the specials among finite
 * inputs in the same vectors. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include VEXP_H
#include "../ck_rand.h"

#define MAX_ULP 1   /* both types: what the polynomials give */

static long long worst32, worst64, n32, n64, off32, off64;
static float worst32_x;
static double worst64_x;
static int bad;

#define BATCH 4096

static float in32[BATCH], out32[BATCH];
static double in64[BATCH], out64[BATCH];
static int m32, m64;

__attribute__((noinline)) static void
all32(const float *restrict x, float *restrict y, int n)
{
	for (int i = 0; i < n; i++)   /* the vectorised loop (f32) */
		y[i] = aicm_vexp_f32(x[i]);
}

__attribute__((noinline)) static void
all64(const double *restrict x, double *restrict y, int n)
{
	for (int i = 0; i < n; i++)   /* the vectorised loop (f64) */
		y[i] = aicm_vexp_f64(x[i]);
}

static void
check32(float x, float got)
{
	float want = (float)exp((double)x);
	uint32_t a, b;

	n32++;
	if (isnan(want) || isnan(got)) {
		if (isnan(want) != isnan(got) && bad++ < 10)
			fprintf(stderr, "vexp: f32 exp(%a) gave %a, expected %a\n", x, got, want);
		return;
	}
	memcpy(&a, &want, sizeof a);
	memcpy(&b, &got, sizeof b);
	long long d = a > b ? (long long)a - b : (long long)b - a;
	if (signbit(got) || (isinf(want) != isinf(got)))
		d = 1LL << 40;
	off32 += d != 0;
	if (d > worst32) {
		worst32 = d;
		worst32_x = x;
	}
}

static void
check64(double x, double got)
{
	double want = exp(x);
	uint64_t a, b;

	n64++;
	if (isnan(want) || isnan(got)) {
		if (isnan(want) != isnan(got) && bad++ < 10)
			fprintf(stderr, "vexp: f64 exp(%a) gave %a, expected %a\n", x, got, want);
		return;
	}
	memcpy(&a, &want, sizeof a);
	memcpy(&b, &got, sizeof b);
	long long d = a > b ? (long long)(a - b) : (long long)(b - a);
	if (signbit(got) || (isinf(want) != isinf(got)) || d > (1LL << 40))
		d = 1LL << 40;
	off64 += d != 0;
	if (d > worst64) {
		worst64 = d;
		worst64_x = x;
	}
}

static void
flush(void)
{
	all32(in32, out32, m32);
	for (int i = 0; i < m32; i++)
		check32(in32[i], out32[i]);
	all64(in64, out64, m64);
	for (int i = 0; i < m64; i++)
		check64(in64[i], out64[i]);
	m32 = m64 = 0;
}

static void
one32(float x)
{
	if (m32 == BATCH)
		flush();
	in32[m32++] = x;
}

static void
one64(double x)
{
	if (m64 == BATCH)
		flush();
	in64[m64++] = x;
}

/* every float in [lo, hi] (both the same sign) */
static void
band32(float lo, float hi)
{
	for (float x = lo; x <= hi; x = nextafterf(x, INFINITY))
		one32(x);
}

static void
band64(double lo, double hi, double step)
{
	for (double x = lo; x <= hi; x += step)
		one64(x);
}

int
main(void)
{
	static const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1e308, -1e308,
	    709.78, 709.79, 709.782712893384, -745.13, -745.14, -745.2, -745.3, -708.4, -708.39};
	uint64_t s = 88172645463325252u;

	/* f32: all floats where the method changes, a stride elsewhere */
	band32(-104.5f, -85.0f);
	band32(86.0f, 89.0f);
	band32(0x1p-7f, 0x1p-6f);
	band32(-0x1p-6f, -0x1p-7f);
	for (uint64_t u = 0; u <= 0xffffffffu; u += 257) {
		uint32_t b = (uint32_t)u;
		float x;

		memcpy(&x, &b, sizeof x);
		one32(x);
	}
	for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
		one32((float)sp[i]);
	one32(FLT_MAX);
	one32(-FLT_MAX);

	/* f64: pseudo-random (xorshift64) over [-750, 715], the edges dense */
	for (int i = 0; i < 1000000; i++) {
		one64(-750.0 + 1465.0 * (double)(ck_xorshift64(&s) >> 11) / 9007199254740992.0);
	}
	band64(-746.0, -706.0, 1.0 / 4096);
	band64(708.0, 710.0, 1.0 / 65536);
	band64(-0.001, 0.001, 1.0 / 1048576);
	for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
		one64(sp[i]);
	one64(DBL_MAX);
	one64(-DBL_MAX);
	/* the specials again, one in each lane of a vector of finite inputs */
	for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
		for (int l = 0; l < 16; l++) {
			flush();
			for (int k = 0; k < 16; k++) {
				one32(k == l ? (float)sp[i] : 0.25f * (float)k - 2.0f);
				one64(k == l ? sp[i] : 0.25 * k - 2.0);
			}
		}
	flush();

	printf("vexp: f32 %lld inputs, %lld off, worst %lld ulp at %a; f64 %lld inputs, "
	    "%lld off, worst %lld ulp at %a\n", n32, off32, worst32, (double)worst32_x, n64,
	    off64, worst64, worst64_x);
	if (worst32 > MAX_ULP || worst64 > MAX_ULP || bad) {
		fprintf(stderr, "vexp: error above %d ulp (or a NaN where libm has none)\n", MAX_ULP);
		return 1;
	}
	return 0;
}
