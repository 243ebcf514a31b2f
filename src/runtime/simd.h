/*
 * simd.h: the tile executor's vector kernels (DESIGN §7).
 *
 * Tiles are contiguous row-major arrays in their kernel's element type
 * (tile_priv.h): an f64 kernel's tiles are doubles, an f32 kernel's are
 * floats, so that f32 work runs at the f32 rate (16 lanes in a zmm) and
 * moves half the bytes.  Each kernel therefore comes in both types (the
 * f32 ones in their own section below, with their rounding contract), and
 * simd_copy_stream serves large stores into tensors.
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

#include <stddef.h>
#include <stdint.h>

#include "ir.h"

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
 * lda, ldb, ldc (c and o share ldc); o may be c, and c NULL is zeros
 * (nothing read: 0 + x is x, so the bits are those of a zero c).  The micro-kernels keep
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
/* o[i] = sqrt(x[i]), correctly rounded (the scalar formula's bits). */
void simd_sqrt(int64_t n, const double *x, double *o);
/* o[i] = e^x[i]: within 2 ulp of libm's exp (which the portable path
 * calls); AVX-512 and AVX2 agree bitwise.  o may be x. */
void simd_exp(int64_t n, const double *x, double *o);
/* Sum and max (NaN wins; -inf for n == 0) of x[0..n). */
double simd_sum(int64_t n, const double *x);
double simd_max(int64_t n, const double *x);
/* o[i] += x[i]; o[i] = max(o[i], x[i]) with NaN winning. */
void simd_acc_sum(int64_t n, const double *x, double *o);
void simd_acc_max(int64_t n, const double *x, double *o);

/* ---- f32 tiles: the same kernels on floats -------------------------- */
/* An f32 kernel holds its tiles as floats, so that its work runs at the
 * f32 rate (16 lanes in a zmm) and moves half the bytes.  Dots accumulate
 * in f32 FMA lanes, as sgemm does; sums accumulate in f64 lanes and are
 * rounded once; elementwise results are the correctly rounded float of
 * the f64 operation for add/sub/mul/div/max/min (IEEE), and within 2 ulp
 * of (float)exp((double)x) for exp.  Every f32 result stays within the
 * f32 --check tolerance (1e-4) of the reference. */
void simd_dot_f32(int64_t M, int64_t N, int64_t K, const float *a, int64_t lda, const float *b,
    int64_t ldb, const float *c, float *o, int64_t ldc);
void simd_binary_f32(SimdOp op, int64_t n, const float *a, int as, const float *b, int bs,
    float *o);
void simd_relu_f32(int64_t n, const float *x, float *o);
void simd_sqrt_f32(int64_t n, const float *x, float *o);
void simd_exp_f32(int64_t n, const float *x, float *o);
/* The sum in f64 lanes (the caller rounds it), and the max (NaN wins; -inf
 * for n == 0). */
double simd_sum_f32(int64_t n, const float *x);
float simd_max_f32(int64_t n, const float *x);
void simd_acc_sum_f32(int64_t n, const float *x, float *o);
void simd_acc_max_f32(int64_t n, const float *x, float *o);

/* Copies n bytes from src to dst with non-temporal stores where the path
 * has them (dst 64-byte aligned or not), so that a large store into a
 * tensor does not read the destination's lines first; a plain memcpy on
 * the portable path.  simd_fence() orders those stores before the caller
 * hands the tensor on (once per kernel, not per copy). */
void simd_copy_stream(void *dst, const void *src, size_t n);
void simd_fence(void);

/* Integer tiles (simd_int.c): o[i] = a[i*sa] op b[i*sb], or o[i] = op(a[i]),
 * on dt's integers (i32, i64), with scalar.h's integer formulas' bits, for
 * the leading elements the vector path covers; returns how many it did
 * (0 when there is no vector kernel for op, dt or the ISA: the caller does
 * the rest with its scalar loop).  sa and sb are 1, or 0 for a stretched
 * element. */
int64_t simd_int_binary(OpId op, DType dt, int64_t n, const void *a, int sa, const void *b,
    int sb, void *o);
int64_t simd_int_unary(OpId op, DType dt, int64_t n, const void *a, void *o);
/* o[i] = c[i*sc] != 0 ? a[i*sa] : b[i*sb] on dt's integers (i32, i64; the
 * condition is an integer kernel's bool, 0 or 1 in dt), for the leading
 * elements the vector path covers; returns how many (0: none). */
int64_t simd_int_where(DType dt, int64_t n, const void *c, int sc, const void *a, int sa,
    const void *b, int sb, void *o);
/* dst[j] = src[j * stride] for j < n, stride >= 1 (simd_window.c: the
 * runs of a strided window that im2col packs); reads no element past the
 * run's last, src[(n-1) * stride]. */
void simd_gather_f32(int64_t n, const float *src, int64_t stride, float *dst);
/* One row of an f32 im2col tile (tile_window.c): dst[j] for the output
 * pixels p0 + j, j < vc, of an OW-wide output, reads plane[y*W + x] at
 * y = oy*sh + dy, x = ox*sw + dx, or other outside the H x W plane;
 * returns the reads. */
int64_t simd_im2col_row_f32(float *dst, int64_t vc, int64_t p0, int64_t ow, int64_t sh, int64_t sw,
    int64_t dy, int64_t dx, const float *plane, int64_t H, int64_t W, float other);
/* One row of an f32 pool tile (tile_window.c, window_max and window_sum):
 * dst[j] for the output pixels p0 + j, j < vc, of a plane, the max (NaN
 * wins; mx) or the sum of the taps of window win (docs/tiled.md: Cg, KH,
 * KW, OH, OW, sh, sw, pt, pl, dh, dw) inside the H x W plane, folded in
 * tap by tap in (ky, kx) order from -inf or 0; returns the reads. */
int64_t simd_pool_row_f32(float *dst, int64_t vc, int64_t p0, const int64_t *win,
    const float *plane, int64_t H, int64_t W, int mx);

#endif
