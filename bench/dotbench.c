/*
 * dotbench.c: GFLOP/s of simd_dot and simd_dot_f32 on one S×S×S tile
 * product in place (c == o), as the tile executor calls them in W1: b
 * packed (ldb = S), a either packed (lda = S) or read in place in a
 * 1024-wide matrix, cycling over 16×16 of its tiles (lda = 1024).  Thread
 * CPU time, best of 9 batches of about 4 GFLOP each, so that a loaded
 * machine's time slices do not count.  Built by hand, not by make:
 *
 *   cc -O2 -Isrc/runtime -o /tmp/dotbench bench/dotbench.c build/libaicm.a -lm
 *   /tmp/dotbench [S] [wide]          (default 64 0; AICM_ISA picks a path)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "simd.h"

enum { BIG = 1024 };

static double
cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *
alloc(size_t n)
{
	void *p = aligned_alloc(64, (n + 63) / 64 * 64);

	if (!p) {
		fprintf(stderr, "dotbench: out of memory\n");
		exit(2);
	}
	return p;
}

int
main(int argc, char **argv)
{
	int64_t S = argc > 1 ? atoi(argv[1]) : 64;
	int wide = argc > 2 && atoi(argv[2]) != 0;
	int64_t lda = wide ? BIG : S;
	float *af, *bf, *cf;
	double *ad, *bd, *cd, sink = 0;
	long it;

	if (S < 1 || S > BIG / 16) {
		fprintf(stderr, "usage: dotbench [S in 1..%d] [wide 0|1]\n", BIG / 16);
		return 2;
	}
	af = alloc(sizeof(float) * BIG * BIG);
	ad = alloc(sizeof(double) * BIG * BIG);
	bf = alloc(sizeof(float) * (size_t)(S * S));
	bd = alloc(sizeof(double) * (size_t)(S * S));
	cf = alloc(sizeof(float) * (size_t)(S * S));
	cd = alloc(sizeof(double) * (size_t)(S * S));
	srand(1);
	for (int64_t i = 0; i < BIG * BIG; i++)
		af[i] = (float)(ad[i] = (double)rand() / RAND_MAX - 0.5);
	for (int64_t i = 0; i < S * S; i++) {
		bf[i] = (float)(bd[i] = (double)rand() / RAND_MAX - 0.5);
		cf[i] = 0;
		cd[i] = 0;
	}
	it = (long)(4e9 / (2.0 * (double)(S * S * S))) + 1;
	for (int f32 = 0; f32 < 2; f32++) {
		double best = 1e300;

		for (int rep = 0; rep < 9; rep++) {
			double t0 = cpu_now(), t;

			for (long q = 0; q < it; q++) {
				size_t off = wide ? (size_t)((q % 16) * S * BIG + (q / 16 % 16) * S) : 0;

				if (f32)
					simd_dot_f32(S, S, S, af + off, lda, bf, S, cf, cf, S);
				else
					simd_dot(S, S, S, ad + off, lda, bd, S, cd, cd, S);
			}
			t = (cpu_now() - t0) / (double)it;
			if (t < best)
				best = t;
		}
		printf("%s %s %lldx%lldx%lld lda %lld: %.1f GFLOP/s\n", simd_isa_name(simd_isa()),
		    f32 ? "f32" : "f64", (long long)S, (long long)S, (long long)S, (long long)lda,
		    2.0 * (double)(S * S * S) / best * 1e-9);
	}
	sink = cf[0] + cd[0];   /* keeps the work observable */
	free(af);
	free(ad);
	free(bf);
	free(bd);
	free(cf);
	free(cd);
	return sink != sink;    /* NaN only if the kernels broke */
}
