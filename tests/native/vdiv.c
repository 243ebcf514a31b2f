/* vdiv.c: the native engine's f64 division by a value a row shares
 * (aicm_rdiv_f64, emit_c.c's rdiv_text) against the division a / b
 * that the other engines do (tests/native.sh builds it with the functions
 * as aicm-opt --emit=c writes them, in VDIV_H).
 *
 * Pairs: pseudo-random bit patterns (every exponent, subnormals too),
 * operands whose mantissas alone are random (the reciprocal's hardest
 * part), quotients near the subnormals and near the overflow, dividends
 * on both sides of the 2^-960 where aicm_rdiv scales them, and every pair
 * of the special values (+-0, +-inf, NaN, +-1, the extremes, the
 * divisors at the method's edges: 2^1022 and the smallest normal).  A result must be the bits of a / b
 * (NaN: any NaN), except a subnormal quotient, which may be one ulp of
 * the subnormals off (aicm_rdiv scales an already rounded quotient).
 * Exit 1 with the first pairs that are not. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include VDIV_H
#include "../ck_rand.h"

static long long n, bad;
static uint64_t st = 0x9e3779b97f4a7c15u;

static uint64_t
next(void)
{
	return ck_xorshift64(&st);
}

static void
one64(double a, double b)
{
	volatile double vb = b;
	double want = a / vb, got = aicm_rdiv_f64(a, b);
	uint64_t x, y;

	n++;
	if (isnan(want) && isnan(got))
		return;
	memcpy(&x, &want, sizeof x);
	memcpy(&y, &got, sizeof y);
	if (x == y || (fabs(want) < DBL_MIN && (x - y + 1 <= 2) && (x ^ y) >> 63 == 0))
		return;
	if (bad++ < 10)
		fprintf(stderr, "vdiv: %a / %a gave %a, expected %a\n", a, b, got, want);
}

static double
bits64(uint64_t u)
{
	double d;

	memcpy(&d, &u, sizeof d);
	return d;
}

int
main(void)
{
	static const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, DBL_MAX,
	    -DBL_MAX, DBL_MIN, 0x1p-1074, -0x1p-1074, 0x1p1022, 0x1.fffffffffffffp1021, 3.0,
	    0x1p-1022 * 0.75, 0x1p-960, -0x1.fffffffffffffp-961, 0x1.8p-1000};
	int ns = (int)(sizeof sp / sizeof sp[0]);

	for (int i = 0; i < ns; i++)
		for (int j = 0; j < ns; j++) {
			one64(sp[i], sp[j]);
		}
	for (long i = 0; i < 3000000; i++) {
		uint64_t u = next(), v = next();

		/* any bits (NaNs rare), then mantissas alone in [1, 2) */
		one64(bits64(u), bits64(v));
		one64(bits64((u & 0x000fffffffffffffu) | 0x3ff0000000000000u),
		    bits64((v & 0x000fffffffffffffu) | 0x3ff0000000000000u));
		/* dividends about 2^-960, divisors about 1 */
		one64(bits64((u & 0x800fffffffffffffu) | (uint64_t)(53 + next() % 24) << 52),
		    bits64((v & 0x800fffffffffffffu) | (uint64_t)(1013 + next() % 20) << 52));
		/* a quotient near the subnormals and the overflow: exponents
		 * of a and b apart by about the range */
		one64(bits64((u & 0x800fffffffffffffu) | (uint64_t)(next() % 64) << 52),
		    bits64((v & 0x800fffffffffffffu) | (uint64_t)(1023 + next() % 1000) << 52));
		one64(bits64((u & 0x800fffffffffffffu) | (uint64_t)(2046 - next() % 64) << 52),
		    bits64((v & 0x800fffffffffffffu) | (uint64_t)(1 + next() % 1022) << 52));
	}
	printf("vdiv: %lld pairs, %lld off\n", n, bad);
	return bad != 0;
}
