/*
 * w5ideal.c: W5 (maximum(x*y+z, 0) on 4096x4096 f64, one core) written
 * by hand three ways, to see what the executor's schedule costs on this
 * machine: op by op over whole rows (what the tile executor did before its
 * strip runs), op by op over strips of S elements (what it does now), and
 * fused per vector (one FMA and one max per 8 lanes, what a compiler that
 * generates code would emit).  Inputs on huge pages, streaming stores,
 * 2 KiB software prefetch as in simd.c; best of 10 runs each.  AVX-512.
 *
 *   cc -O2 -o w5ideal bench/w5ideal.c && ./w5ideal       (docs/perf.md)
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define A512 __attribute__((target("avx512f"), noinline))
#define PF(p) _mm_prefetch((const char *)(p) + 2048, _MM_HINT_T0)

enum { ROW = 4096 };

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double *
alloc(size_t n)
{
	void *p;

	if (posix_memalign(&p, 2 << 20, n * sizeof(double)) != 0)
		exit(1);
	madvise(p, n * sizeof(double), MADV_HUGEPAGE);
	for (size_t i = 0; i < n; i++)
		((double *)p)[i] = (double)(i % 1000) / 500.0 - 1.0;
	return p;
}

A512 static void
fused(size_t n, const double *x, const double *y, const double *z, double *o)
{
	for (size_t i = 0; i < n; i += 8) {
		__m512d v;

		PF(x + i);
		PF(y + i);
		PF(z + i);
		v = _mm512_fmadd_pd(_mm512_loadu_pd(x + i), _mm512_loadu_pd(y + i), _mm512_loadu_pd(z + i));
		_mm512_stream_pd(o + i, _mm512_max_pd(v, _mm512_setzero_pd()));
	}
	_mm_sfence();
}

A512 static void
op_mul(size_t n, const double *a, const double *b, double *o)
{
	for (size_t i = 0; i < n; i += 8) {
		PF(a + i);
		PF(b + i);
		_mm512_storeu_pd(o + i, _mm512_mul_pd(_mm512_loadu_pd(a + i), _mm512_loadu_pd(b + i)));
	}
}

A512 static void
op_add(size_t n, const double *a, const double *b, double *o)
{
	for (size_t i = 0; i < n; i += 8) {
		PF(a + i);
		PF(b + i);
		_mm512_storeu_pd(o + i, _mm512_add_pd(_mm512_loadu_pd(a + i), _mm512_loadu_pd(b + i)));
	}
}

A512 static void
op_max0(size_t n, const double *a, double *o)
{
	for (size_t i = 0; i < n; i += 8)
		_mm512_storeu_pd(o + i, _mm512_max_pd(_mm512_loadu_pd(a + i), _mm512_setzero_pd()));
}

A512 static void
op_stream(size_t n, const double *a, double *o)
{
	for (size_t i = 0; i < n; i += 8)
		_mm512_stream_pd(o + i, _mm512_loadu_pd(a + i));
}

/* Every op on s elements before the next s (s = ROW: op by op over rows). */
static void
strips(size_t n, size_t s, const double *x, const double *y, const double *z, double *o,
    double *t)
{
	for (size_t r = 0; r < n; r += s) {
		op_mul(s, x + r, y + r, t);
		op_add(s, t, z + r, t + s);
		op_max0(s, t + s, t + 2 * s);
		op_stream(s, t + 2 * s, o + r);
	}
	_mm_sfence();
}

int
main(void)
{
	size_t n = (size_t)ROW * ROW;
	double *x = alloc(n), *y = alloc(n), *z = alloc(n), *o = alloc(n), *t = alloc(3 * ROW);
	double best;

	best = 1e9;
	for (int r = 0; r < 10; r++) {
		double t0 = now_ms();

		fused(n, x, y, z, o);
		if (now_ms() - t0 < best)
			best = now_ms() - t0;
	}
	printf("fused per vector:          %6.2f ms\n", best);
	for (size_t s = 64; s <= ROW; s *= 2) {
		best = 1e9;
		for (int r = 0; r < 10; r++) {
			double t0 = now_ms();

			strips(n, s, x, y, z, o, t);
			if (now_ms() - t0 < best)
				best = now_ms() - t0;
		}
		printf("op by op, strips of %4zu:  %6.2f ms%s\n", s, best,
		    s == ROW ? "  (whole rows)" : "");
	}
	return 0;
}
