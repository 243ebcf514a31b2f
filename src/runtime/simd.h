/*
 * simd.h: the tile executor's vector kernels (DESIGN §7).
 *
 * Tiles are contiguous row-major arrays of doubles (tile_exec.c), so every
 * kernel here works on doubles; f32 tensors meet them through the
 * conversion kernels at loads and stores, and f32 dots therefore accumulate
 * in f64 lanes, as the reference interpreter does (no tolerance is spent
 * on the fast path: an f32 dot differs from the reference only by the
 * order of its f64 sums and by FMA rounding, far below 1e-4).
 *
 * Three paths, chosen once at run time: AVX-512, AVX2+FMA and portable C.
 * The AVX paths are compiled with target attributes, so that the default
 * build runs on any x86-64 (and elsewhere only the portable path exists).
 * AICM_ISA=avx512|avx2|portable forces a path (a path the CPU lacks falls
 * back to the best one it has, with a note on stderr), so that tests can
 * run every path; results on every path equal the reference within the
 * --check tolerance.
 */
#ifndef AICM_SIMD_H
#define AICM_SIMD_H

#include <stdint.h>

typedef enum SimdIsa { SIMD_PORTABLE, SIMD_AVX2, SIMD_AVX512, SIMD_ISA_COUNT } SimdIsa;

typedef enum SimdOp {
	SIMD_ADD, SIMD_SUB, SIMD_MUL, SIMD_DIV,
	SIMD_MAXIMUM, SIMD_MINIMUM,       /* NaN wins, as np.maximum/np.minimum */
	SIMD_OP_COUNT
} SimdOp;

/* The path in use: AICM_ISA if set and supported, else the best the CPU has. */
SimdIsa simd_isa(void);
const char *simd_isa_name(SimdIsa isa);
/* The best path this CPU supports. */
SimdIsa simd_isa_best(void);
/* Forces a path (tests); one the CPU lacks is clamped to simd_isa_best(). */
void simd_set_isa(SimdIsa isa);

/* o[M×N] = c[M×N] + a[M×K] · b[K×N]; row-major with leading dimensions
 * lda, ldb, ldc (c and o share ldc); o may be c.  The micro-kernels keep
 * a register block of C while streaming a row panel of b and broadcasting
 * a. */
void simd_dot(int64_t M, int64_t N, int64_t K, const double *a, int64_t lda, const double *b,
    int64_t ldb, const double *c, double *o, int64_t ldc);

/* o[i] = a[i*as] op b[i*bs] for i < n, as and bs 0 (a scalar stretched)
 * or 1; o may be a or b. */
void simd_binary(SimdOp op, int64_t n, const double *a, int as, const double *b, int bs,
    double *o);
/* o[i] = relu(x[i]) (NaN stays NaN, -0 becomes 0, as the reference). */
void simd_relu(int64_t n, const double *x, double *o);
/* o[i] = e^x[i]: within 2 ulp of libm's exp (which the portable path
 * calls); AVX-512 and AVX2 agree bitwise.  o may be x. */
void simd_exp(int64_t n, const double *x, double *o);
/* o[i] = (double)(float)x[i]: an f32 kernel's rounding after each op. */
void simd_round_f32(int64_t n, const double *x, double *o);
/* Conversions at loads and stores. */
void simd_f32_to_f64(int64_t n, const float *x, double *o);
void simd_f64_to_f32(int64_t n, const double *x, float *o);
/* Sum and max (NaN wins; -inf for n == 0) of x[0..n). */
double simd_sum(int64_t n, const double *x);
double simd_max(int64_t n, const double *x);
/* o[i] += x[i]; o[i] = max(o[i], x[i]) with NaN winning. */
void simd_acc_sum(int64_t n, const double *x, double *o);
void simd_acc_max(int64_t n, const double *x, double *o);

#endif
