/*
 * peak.c: this machine's peak FLOP/s and memory bandwidth, the roofs that
 * bench/run.sh and docs/perf.md measure the workloads against.
 *
 *   peak [THREADS]      (default: 1 and all cores)
 *
 * FLOP/s: a loop of independent FMAs (12 accumulators, enough to cover the
 * FMA latency on two pipes) in AVX-512, AVX2+FMA and scalar code, f64 and
 * f32, run on every thread at once; an FMA counts 2 flops per lane.
 * Bandwidth: STREAM's copy (c = a, 16 B per element) and triad
 * (a = b + s·c, 24 B per element) on arrays of 64 MiB each, far beyond the
 * caches, best of 5, the arrays split over the threads; STREAM's counting
 * (no write-allocate traffic).  Each is run two ways and the better counts
 * (stream_triad_gbs_*; the two apart as stream_triad_plain_* and
 * stream_triad_nt_*): the plain C loop, whose stores first read each line
 * of the result (write-allocate: 32 B of traffic an element for the 24
 * counted), and one whose stores are non-temporal (SSE2 movntpd: no read
 * for ownership, as the engines' streaming stores).  On a Zen 3 core the
 * plain triad moved 7.6 GB/s (10 with its write-allocate) while the
 * native engine's W2 read 9.6 and W5 (3 streams in, 1 out) 14.7 GB/s of
 * their ideal bytes: a plain-store triad is not the bound of what one core
 * streams, and the non-temporal one came to 8-11 GB/s (under load).  A core's
 * bandwidth also grows with the streams it has in flight (software
 * prefetches, more arrays), which neither loop has: on such a machine a
 * workload may still pass 100% of the triad.  Output: one "key value"
 * line per figure, for the script to read.
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
clk(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double
now(void)
{
	return clk(CLOCK_MONOTONIC);
}

enum { ACC = 12, ITERS = 20000000 };

/* Each returns the flops it did; the sum keeps the work observable. */
__attribute__((target("avx512f"))) static double
fma512(double *sink, int f32)
{
	__m512d a[ACC];
	__m512 s[ACC];
	__m512d x = _mm512_set1_pd(1.0000001), y = _mm512_set1_pd(0.9999999);
	__m512 xs = _mm512_set1_ps(1.0001f), ys = _mm512_set1_ps(0.9999f);

	for (int i = 0; i < ACC; i++) {
		a[i] = _mm512_set1_pd(i);
		s[i] = _mm512_set1_ps((float)i);
	}
	if (f32) {
		for (long it = 0; it < ITERS; it++)
#pragma GCC unroll 12
			for (int i = 0; i < ACC; i++)
				s[i] = _mm512_fmadd_ps(s[i], xs, ys);
		for (int i = 1; i < ACC; i++)
			s[0] = _mm512_add_ps(s[0], s[i]);
		*sink += _mm512_reduce_add_ps(s[0]);
		return 2.0 * 16 * ACC * (double)ITERS;
	}
	for (long it = 0; it < ITERS; it++)
#pragma GCC unroll 12
		for (int i = 0; i < ACC; i++)
			a[i] = _mm512_fmadd_pd(a[i], x, y);
	for (int i = 1; i < ACC; i++)
		a[0] = _mm512_add_pd(a[0], a[i]);
	*sink += _mm512_reduce_add_pd(a[0]);
	return 2.0 * 8 * ACC * (double)ITERS;
}

__attribute__((target("avx2,fma"))) static double
fma256(double *sink, int f32)
{
	__m256d a[ACC];
	__m256 s[ACC];
	__m256d x = _mm256_set1_pd(1.0000001), y = _mm256_set1_pd(0.9999999);
	__m256 xs = _mm256_set1_ps(1.0001f), ys = _mm256_set1_ps(0.9999f);
	double l[4];
	float ls[8];

	for (int i = 0; i < ACC; i++) {
		a[i] = _mm256_set1_pd(i);
		s[i] = _mm256_set1_ps((float)i);
	}
	if (f32) {
		for (long it = 0; it < ITERS; it++)
#pragma GCC unroll 12
			for (int i = 0; i < ACC; i++)
				s[i] = _mm256_fmadd_ps(s[i], xs, ys);
		for (int i = 1; i < ACC; i++)
			s[0] = _mm256_add_ps(s[0], s[i]);
		_mm256_storeu_ps(ls, s[0]);
		*sink += ls[0];
		return 2.0 * 8 * ACC * (double)ITERS;
	}
	for (long it = 0; it < ITERS; it++)
#pragma GCC unroll 12
		for (int i = 0; i < ACC; i++)
			a[i] = _mm256_fmadd_pd(a[i], x, y);
	for (int i = 1; i < ACC; i++)
		a[0] = _mm256_add_pd(a[0], a[i]);
	_mm256_storeu_pd(l, a[0]);
	*sink += l[0];
	return 2.0 * 4 * ACC * (double)ITERS;
}

typedef struct Job {
	int kind;                    /* 0 avx512, 1 avx2 */
	int f32;
	double flops, sink;
	double t0, t1, cpu;          /* wall start and end, thread CPU seconds */
	double *a, *b, *c;
	size_t lo, hi;
	int op;                      /* 0 copy, 1 triad */
	int nts;                     /* 1: non-temporal stores */
	pthread_barrier_t *bar;
} Job;

static void *
fma_main(void *p)
{
	Job *j = p;

	double c0;

	pthread_barrier_wait(j->bar);
	j->t0 = now();
	c0 = clk(CLOCK_THREAD_CPUTIME_ID);
	j->flops = j->kind == 0 ? fma512(&j->sink, j->f32) : fma256(&j->sink, j->f32);
	j->cpu = clk(CLOCK_THREAD_CPUTIME_ID) - c0;
	j->t1 = now();
	return NULL;
}

/* The copy or triad of j with non-temporal stores (SSE2, every x86-64):
 * elements one at a time up to the destination's 16-byte boundary, then
 * pairs. */
static void
stream_nt(Job *j)
{
	double *dst = j->op == 0 ? j->c : j->a;
	size_t i = j->lo;

	for (; i < j->hi && ((uintptr_t)(dst + i) & 15); i++)
		dst[i] = j->op == 0 ? j->a[i] : j->b[i] + 3.0 * j->c[i];
	if (j->op == 0)
		for (; i + 2 <= j->hi; i += 2)
			_mm_stream_pd(dst + i, _mm_loadu_pd(j->a + i));
	else
		for (; i + 2 <= j->hi; i += 2)
			_mm_stream_pd(dst + i, _mm_add_pd(_mm_loadu_pd(j->b + i),
			    _mm_mul_pd(_mm_set1_pd(3.0), _mm_loadu_pd(j->c + i))));
	for (; i < j->hi; i++)
		dst[i] = j->op == 0 ? j->a[i] : j->b[i] + 3.0 * j->c[i];
	_mm_sfence();
}

static void *
stream_main(void *p)
{
	Job *j = p;

	double c0;

	pthread_barrier_wait(j->bar);
	j->t0 = now();
	c0 = clk(CLOCK_THREAD_CPUTIME_ID);
	if (j->nts)
		stream_nt(j);
	else if (j->op == 0)
		for (size_t i = j->lo; i < j->hi; i++)
			j->c[i] = j->a[i];
	else
		for (size_t i = j->lo; i < j->hi; i++)
			j->a[i] = j->b[i] + 3.0 * j->c[i];
	j->cpu = clk(CLOCK_THREAD_CPUTIME_ID) - c0;
	j->t1 = now();
	return NULL;
}

/* Runs fn on nt threads at once.  Returns the wall time from the first
 * start to the last end; *cpu gets the longest thread's CPU time, the time
 * the hardware needed when other processes share the cores (a loaded
 * machine steals wall time, not CPU time). */
static double
run(int nt, Job *jobs, void *(*fn)(void *), double *cpu)
{
	pthread_t tid[256];
	pthread_barrier_t bar;
	double t0 = 1e300, t1 = 0;

	pthread_barrier_init(&bar, NULL, (unsigned)nt);
	for (int t = 0; t < nt; t++) {
		jobs[t].bar = &bar;
		pthread_create(&tid[t], NULL, fn, &jobs[t]);
	}
	*cpu = 0;
	for (int t = 0; t < nt; t++) {
		pthread_join(tid[t], NULL);
		if (jobs[t].t0 < t0)
			t0 = jobs[t].t0;
		if (jobs[t].t1 > t1)
			t1 = jobs[t].t1;
		if (jobs[t].cpu > *cpu)
			*cpu = jobs[t].cpu;
	}
	pthread_barrier_destroy(&bar);
	return t1 - t0;
}

static void
measure(int nt)
{
	static const char *const kn[] = {"avx512", "avx2"};
	Job jobs[256];
	size_t n = (size_t)64 << 20 >> 3;
	double *a = malloc(n * 8), *b = malloc(n * 8), *c = malloc(n * 8);

	__builtin_cpu_init();
	for (int kind = 0; kind < 2; kind++) {
		if (kind == 0 && !__builtin_cpu_supports("avx512f"))
			continue;
		if (kind == 1 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
			continue;
		for (int f32 = 0; f32 < 2; f32++) {
			double best = 0, bestc = 0;

			for (int rep = 0; rep < 3; rep++) {
				double fl = 0, t, c;

				memset(jobs, 0, sizeof jobs);
				for (int i = 0; i < nt; i++) {
					jobs[i].kind = kind;
					jobs[i].f32 = f32;
				}
				t = run(nt, jobs, fma_main, &c);
				for (int i = 0; i < nt; i++)
					fl += jobs[i].flops;
				if (fl / t > best)
					best = fl / t;
				if (fl / c > bestc)
					bestc = fl / c;
			}
			printf("peak_gflops_%s_%s_t%d %.1f\n", kn[kind], f32 ? "f32" : "f64", nt, best / 1e9);
			printf("peak_gflops_%s_%s_t%d_cpu %.1f\n", kn[kind], f32 ? "f32" : "f64", nt,
			    bestc / 1e9);
		}
	}
	for (size_t i = 0; i < n; i++) {
		a[i] = 1.0;
		b[i] = 2.0;
		c[i] = 0.5;
	}
	for (int op = 0; op < 2; op++) {
		double bestw = 0, bestcw = 0, bytes = (double)n * (op ? 24 : 16), tc;
		const char *on = op ? "triad" : "copy";

		/* the plain loop, then non-temporal stores: the better counts */
		for (int nts = 0; nts < 2; nts++) {
			double best = 0, bestc = 0;

			for (int rep = 0; rep < 5; rep++) {
				double t;

				memset(jobs, 0, sizeof jobs);
				for (int i = 0; i < nt; i++) {
					jobs[i] = (Job){.a = a, .b = b, .c = c, .op = op, .nts = nts,
					    .lo = n * (size_t)i / (size_t)nt,
					    .hi = n * (size_t)(i + 1) / (size_t)nt};
				}
				t = run(nt, jobs, stream_main, &tc);
				if (bytes / t > best)
					best = bytes / t;
				if (bytes / tc > bestc)
					bestc = bytes / tc;
			}
			printf("stream_%s_%s_gbs_t%d %.1f\n", on, nts ? "nt" : "plain", nt, best / 1e9);
			printf("stream_%s_%s_gbs_t%d_cpu %.1f\n", on, nts ? "nt" : "plain", nt,
			    bestc / 1e9);
			bestw = best > bestw ? best : bestw;
			bestcw = bestc > bestcw ? bestc : bestcw;
		}
		printf("stream_%s_gbs_t%d %.1f\n", on, nt, bestw / 1e9);
		printf("stream_%s_gbs_t%d_cpu %.1f\n", on, nt, bestcw / 1e9);
	}
	printf("check %g\n", a[n / 2] + c[n / 3]);
	free(a);
	free(b);
	free(c);
}

int
main(int argc, char **argv)
{
	long all = sysconf(_SC_NPROCESSORS_ONLN);

	if (all < 1)
		all = 1;
	if (all > 256)
		all = 256;
	if (argc > 1) {
		measure(atoi(argv[1]) < 1 ? 1 : atoi(argv[1]) > 256 ? 256 : atoi(argv[1]));
		return 0;
	}
	measure(1);
	if (all > 1)
		measure((int)all);
	return 0;
}
