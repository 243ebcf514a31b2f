/*
 * exptime.c: ns per element of the native engine's exp (aicm_vexp_f64 and
 * aicm_vexp_f32, as aicm-opt --emit=c writes them), over 4096 inputs in
 * [-20, 0] held in L1: the loop the engine's softmax rows run, without the
 * bytes.  Thread CPU time, the best of 20 batches of 200 loops each, so
 * that a loaded machine's time slices do not count.  Two builds are
 * compared by running their timers in turn (docs/perf.md, session 16).
 * Built by hand, not by make, from the functions of the build to time:
 *
 *   printf 'graph @e {\n  %%x = input() : (4, 4) f32\n  %%y = exp(%%x)\n}\n' >/tmp/e.aicm
 *   build/aicm-opt --pass=shape-infer,lower-tiled --emit=c /tmp/e.aicm |
 *       sed -n '/^static inline double aicm_vexp_f64/,/^}/p;/^static inline float aicm_vexp_f32/,/^}/p' >/tmp/vexp.h
 *   cc -O3 -march=native -DVEXP_H='"/tmp/vexp.h"' -o /tmp/exptime bench/exptime.c
 *   /tmp/exptime
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include VEXP_H

enum { N = 4096, LOOPS = 200, BATCHES = 20 };

static double x64[N], y64[N];
static float x32[N], y32[N];

/* noinline: each is the loop gcc vectorises, timed whole */
__attribute__((noinline)) static void
run64(void)
{
	for (int i = 0; i < N; i++)
		y64[i] = aicm_vexp_f64(x64[i]);
}

__attribute__((noinline)) static void
run32(void)
{
	for (int i = 0; i < N; i++)
		y32[i] = aicm_vexp_f32(x32[i]);
}

static double
cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* the best batch of LOOPS calls of f, in ns an element */
static double
best(void (*f)(void))
{
	double b = 1e30;

	for (int r = 0; r < BATCHES; r++) {
		double t = cpu_now();

		for (int k = 0; k < LOOPS; k++)
			f();
		t = cpu_now() - t;
		if (t < b)
			b = t;
	}
	return b / LOOPS / N * 1e9;
}

int
main(void)
{
	double sum = 0;

	for (int i = 0; i < N; i++) {
		x64[i] = -20.0 * i / N;
		x32[i] = (float)x64[i];
	}
	printf("exp f64 %.3f ns an element, f32 %.3f\n", best(run64), best(run32));
	/* the results used, so that no loop is dropped */
	for (int i = 0; i < N; i++)
		sum += y64[i] + y32[i];
	return sum > 0 ? 0 : 1;
}
