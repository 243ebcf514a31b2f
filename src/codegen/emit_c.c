/*
 * emit_c.c: the C module of a lowered graph (emit_c.h, DESIGN section 13,
 * docs/codegen.md): the prelude, NAME_args, one NAME_kernelK per tiled
 * kernel, NAME_run, and the descriptor that aicm-run --engine=native
 * drives.
 *
 * Layout of the text, in order: a comment naming the graph; the includes
 * (the header's text inline when no header file is named, so that the
 * module compiles alone); the scalar helpers that scalar.h's formulas call;
 * one small static function per formula used (aicm_add_f64 ...), printed
 * from scalar.h's rows; the kernels; their atomics' initialisers; the
 * grid runner (pthreads only when compiled with -pthread, _REENTRANT);
 * NAME_run; the descriptor.
 *
 * Buffers: inputs, constants and outputs are the caller's (NAME_args'
 * typed pointers); a kernel result that is no output is an intermediate,
 * a field of NAME_args too (so that kernels reach it through `a`), which
 * the caller leaves NULL and NAME_run allocates and frees around the run.
 * The native driver instead hands every field, intermediates included,
 * from the tensors it already holds (NAME_aicm_kernel takes them as an
 * array of pointers, in field order, NAME_aicm_field_node giving each
 * field's graph node), and runs each kernel's program ranges on its own
 * threads; a kernel with atomics is serial (NAME_aicm_serial): its
 * programs run in order on one thread, as the tile engine's results are
 * one thread's; unless its atomics' targets depend on the grid's row
 * (program_id axis 0) alone, when threads own whole rows
 * (NAME_aicm_rows, row_split): each element's adds still come in program
 * order, so the result is one thread's bit for bit.
 *
 * Tiles: each a local array of its value's type, except that tiles of
 * more than CG_STACK_BYTES live in one heap block per kernel call (a row
 * of 8192 f64 by 32 rows is 2 MB, more than a thread's stack should
 * hold).  Deterministic: nothing depends on addresses, time or hash order.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit_c.h"
#include "scalar.h"

enum { CG_STACK_BYTES = 16384 };

void
cg_use_formula(const CgKernel *k, int kind, OpId op, DType cdt)
{
	k->use->formula[kind][op][cdt == DT_F64 ? 0 : cdt == DT_F32 ? 1 : 2] = 1;
}

/* the dot's micro-kernel aicm_dot_f64 / _f32 is called */
void
cg_use_dot(const CgKernel *k, DType dt)
{
	k->use->dot[dt == DT_F32] = 1;
}

/* aicm_rdiv_f64 is called (a row's division by a value that the row
 * shares, emit_c_ops.c) */
void
cg_use_rdiv(const CgKernel *k)
{
	k->use->rdiv = true;
}

/* aicm_rdiv_f64(a, b): a / b where b is the same along a row's loop, so
 * that gcc computes everything of b's once, before the loop (an f64
 * division is 16 cycles a vector here, the rest a few FMAs; an f32 one is
 * cheap enough to keep).  b = m * 2^k with m in [1, 2): a's quotient by m
 * from m's reciprocal and one FMA correction (Markstein's: the correctly
 * rounded a / m where a * (1 / m) is an ulp off), then scaled by 2^-k,
 * exact unless the quotient is subnormal (then at most one ulp of the
 * subnormals off).  A dividend below 2^-960 is scaled up by 2^128 first,
 * so that the correction's residual stays exact; an infinite dividend
 * (residual NaN) and exact quotients (residual 0, -0 kept) take the first
 * product.  b zero, subnormal, at or above 2^1022, infinite or NaN: a / b
 * itself (gcc moves the test out of the loop and keeps both loops).
 * Without FMA in the target (FP_FAST_FMA unset: the AOT build without
 * -march) it is a / b.  The tests and selects are integer compares and
 * masks on the bits, as in aicm_vexp (on AVX2 float ones kept the loop
 * scalar).  tests/native/vdiv.c checks it against a / b; tests/native.sh
 * that gcc vectorises its loop for AVX2 and AVX-512. */
static const char rdiv_text[] =
    "static inline double aicm_rdiv_f64(double a, double b)\n"
    "{\n"
    "#ifndef FP_FAST_FMA\n"
    "\treturn a / b;   /* fma would be a library call: the division is cheaper */\n"
    "#else\n"
    "\tuint64_t bb, mb, sb;\n"
    "\tmemcpy(&bb, &b, sizeof bb);\n"
    "\tconst uint64_t e = bb >> 52 & 0x7ff;   /* b's biased exponent */\n"
    "\tmb = (bb & ~((uint64_t)0x7ff << 52)) | ((uint64_t)1023 << 52);   /* m: b's sign, mantissa */\n"
    "\tsb = (2046 - e) << 52;   /* 2^-k */\n"
    "\tdouble m, s;\n"
    "\tmemcpy(&m, &mb, sizeof m);\n"
    "\tmemcpy(&s, &sb, sizeof s);\n"
    "\tuint64_t ab, ub, db, cb, qb, vb;\n"
    "\tmemcpy(&ab, &a, sizeof ab);\n"
    "\t/* |a| < 2^-960: times 2^128, the result times 2^-128 (integer tests and masks\n"
    "\t * throughout, so that gcc if-converts it: see aicm_vexp_f64) */\n"
    "\tconst uint64_t tiny = 0u - (uint64_t)((ab & 0x7fffffffffffffffu) < 0x03f0000000000000u);\n"
    "\tub = 0x3ff0000000000000u + (tiny & ((uint64_t)128 << 52));\n"
    "\tdb = 0x3ff0000000000000u - (tiny & ((uint64_t)128 << 52));\n"
    "\tdouble up, dn;\n"
    "\tmemcpy(&up, &ub, sizeof up);\n"
    "\tmemcpy(&dn, &db, sizeof dn);\n"
    "\tconst double x = a * up, sx = s * dn;\n"
    "\tconst double r = 1 / m, q = x * r, c = fma(-q, m, x), w = fma(c, r, q);\n"
    "\t/* c zero, infinite or NaN: q */\n"
    "\tmemcpy(&cb, &c, sizeof cb);\n"
    "\tmemcpy(&qb, &q, sizeof qb);\n"
    "\tmemcpy(&vb, &w, sizeof vb);\n"
    "\tconst uint64_t ok = 0u - (uint64_t)((cb & 0x7fffffffffffffffu) - 1 < 0x7fefffffffffffffu);\n"
    "\tvb = (vb & ok) | (qb & ~ok);\n"
    "\tdouble v;\n"
    "\tmemcpy(&v, &vb, sizeof v);\n"
    "\treturn e - 1 < 2045 ? v * sx : a / b;\n"
    "#endif\n"
    "}\n";

/* AICM_PREFETCH is called (a row segment's prefetches, emit_c_ops.c) */
void
cg_use_prefetch(const CgKernel *k)
{
	k->use->prefetch = true;
}

/* aicm_stream_T is called (a store into a large tensor, emit_c_ops.c) */
void
cg_use_stream(const CgKernel *k)
{
	k->use->stream = true;
}

/* aicm_stream_T(d, s, n): d[0..n) = s[0..n), the aligned body with
 * non-temporal stores (the vector ISA the module is compiled for; plain
 * stores head and tail, and everywhere without SSE2), so that a large
 * output goes to memory without first reading each line it overwrites
 * (write-allocate: a third more traffic for W3, a row softmax, whose
 * output is as large as its input), as the tile engine's streamed stores
 * (src/runtime/simd.c, simd_copy_stream).  aicm_stream_fence orders them
 * before the kernel returns. */
static const char stream_text[] =
    "\n#if defined(__SSE2__)\n#include <immintrin.h>\n#endif\n"
    "static inline void aicm_stream_f32(float *d, const float *s, long n)\n{\n"
    "\tlong i = 0;\n"
    "#if defined(__AVX512F__)\n"
    "\tfor (; i < n && ((uintptr_t)(d + i) & 63); i++)\n\t\td[i] = s[i];\n"
    "\tfor (; i + 16 <= n; i += 16)\n\t\t_mm512_stream_ps(d + i, _mm512_loadu_ps(s + i));\n"
    "#elif defined(__AVX__)\n"
    "\tfor (; i < n && ((uintptr_t)(d + i) & 31); i++)\n\t\td[i] = s[i];\n"
    "\tfor (; i + 8 <= n; i += 8)\n\t\t_mm256_stream_ps(d + i, _mm256_loadu_ps(s + i));\n"
    "#elif defined(__SSE2__)\n"
    "\tfor (; i < n && ((uintptr_t)(d + i) & 15); i++)\n\t\td[i] = s[i];\n"
    "\tfor (; i + 4 <= n; i += 4)\n\t\t_mm_stream_ps(d + i, _mm_loadu_ps(s + i));\n"
    "#endif\n"
    "\tfor (; i < n; i++)\n\t\td[i] = s[i];\n}\n"
    "static inline void aicm_stream_f64(double *d, const double *s, long n)\n{\n"
    "\tlong i = 0;\n"
    "#if defined(__AVX512F__)\n"
    "\tfor (; i < n && ((uintptr_t)(d + i) & 63); i++)\n\t\td[i] = s[i];\n"
    "\tfor (; i + 8 <= n; i += 8)\n\t\t_mm512_stream_pd(d + i, _mm512_loadu_pd(s + i));\n"
    "#elif defined(__AVX__)\n"
    "\tfor (; i < n && ((uintptr_t)(d + i) & 31); i++)\n\t\td[i] = s[i];\n"
    "\tfor (; i + 4 <= n; i += 4)\n\t\t_mm256_stream_pd(d + i, _mm256_loadu_pd(s + i));\n"
    "#elif defined(__SSE2__)\n"
    "\tfor (; i < n && ((uintptr_t)(d + i) & 15); i++)\n\t\td[i] = s[i];\n"
    "\tfor (; i + 2 <= n; i += 2)\n\t\t_mm_stream_pd(d + i, _mm_loadu_pd(s + i));\n"
    "#endif\n"
    "\tfor (; i < n; i++)\n\t\td[i] = s[i];\n}\n"
    "static inline void aicm_stream_fence(void)\n{\n"
    "#if defined(__SSE2__)\n\t_mm_sfence();\n#endif\n}\n";

/* scalar.h's rows as text, [kind][class][op]: kind as in used; class 0
 * floats, 1 integers (int64); NULL where the table has no row. */
static const char *const formula_text[3][2][OP_COUNT] = {
#define T2(ID, f) [OP_##ID] = #f,
#define T3(ID, f, third) [OP_##ID] = #f,
	{{IR_SCALAR_UNARY(T2)}, {IR_SCALAR_UNARY_INT(T2)}},
	{{IR_SCALAR_BINARY(T2)}, {IR_SCALAR_BINARY_INT(T3)}},
	{{IR_SCALAR_REDUCE(T3)}, {IR_SCALAR_REDUCE_INT(T3)}},
#undef T2
#undef T3
};

/* The helpers scalar.h's formulas call (its own static functions, as
 * text: the generated module cannot include aicm's headers). */
static const char prelude[] =
    "#define IR_U64(x) ((uint64_t)(x))\n"
    "#define IR_I64(u) ((int64_t)(uint64_t)(u))\n"
    "#define AICM_U64 IR_U64\n"
    "#define AICM_I64 IR_I64\n"
    "\n"
    "static inline long aicm_min(long a, long b) { return a < b ? a : b; }\n"
    "\n"
    "/* cast of a float to an integer: truncated, saturated, NaN 0 */\n"
    "static inline int64_t aicm_f2i64(double v)\n"
    "{\n"
    "\treturn v != v ? 0 : v >= 0x1p63 ? INT64_MAX : v < -0x1p63 ? INT64_MIN : (int64_t)v;\n"
    "}\n"
    "\n"
    "static inline int64_t aicm_f2i32(double v)\n"
    "{\n"
    "\treturn v != v ? 0 : v >= 0x1p31 ? INT32_MAX : v < -0x1p31 ? INT32_MIN : (int64_t)v;\n"
    "}\n"
    "\n"
    "/* an int64 rounded once to the nearest float, ties to even */\n"
    "static inline float ir_i64_to_f32(int64_t v)\n"
    "{\n"
    "\tuint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v, q = m;\n"
    "\tint sh = 0;\n"
    "\tfloat f;\n"
    "\n"
    "\twhile (q >> 24) {\n"
    "\t\tq >>= 1;\n"
    "\t\tsh++;\n"
    "\t}\n"
    "\tif (sh) {\n"
    "\t\tuint64_t rem = m & ((UINT64_C(1) << sh) - 1), half = UINT64_C(1) << (sh - 1);\n"
    "\n"
    "\t\tif (rem > half || (rem == half && (q & 1)))\n"
    "\t\t\tq++;\n"
    "\t}\n"
    "\tf = ldexpf((float)q, sh);\n"
    "\treturn v < 0 ? -f : f;\n"
    "}\n"
    "\n"
    "/* numpy.mod on floats */\n"
    "static inline double ir_scalar_mod_(double a, double b)\n"
    "{\n"
    "\tdouble m = fmod(a, b);\n"
    "\n"
    "\tif (m == 0)\n"
    "\t\treturn copysign(0.0, b);\n"
    "\tif ((b < 0) != (m < 0))\n"
    "\t\tm += b;\n"
    "\treturn m;\n"
    "}\n"
    "\n"
    "static inline int64_t ir_scalar_int_pow(int64_t a, int64_t b)\n"
    "{\n"
    "\tuint64_t r = 1, x = (uint64_t)a;\n"
    "\n"
    "\tif (b < 0)\n"
    "\t\treturn a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;\n"
    "\tfor (uint64_t e = (uint64_t)b; e; e >>= 1) {\n"
    "\t\tif (e & 1)\n"
    "\t\t\tr *= x;\n"
    "\t\tx *= x;\n"
    "\t}\n"
    "\treturn (int64_t)r;\n"
    "}\n"
    "\n"
    "static inline int64_t ir_scalar_int_fmod(int64_t a, int64_t b)\n"
    "{\n"
    "\treturn b == 0 || b == -1 ? 0 : a % b;\n"
    "}\n"
    "\n"
    "/* the taps k < n of one window axis whose coordinate o*s + k*d lies in\n"
    " * [lo, hi) (avg_pool2d's divisors) */\n"
    "static inline int64_t aicm_floordiv(int64_t a, int64_t b)\n"
    "{\n"
    "\treturn a / b - (a % b != 0 && (a < 0) != (b < 0));\n"
    "}\n"
    "\n"
    "static inline int64_t aicm_taps(int64_t o, int64_t s, int64_t n, int64_t d, int64_t lo, "
    "int64_t hi)\n"
    "{\n"
    "\tint64_t a = -aicm_floordiv(o * s - lo, d), b = -aicm_floordiv(o * s - hi, d);\n"
    "\n"
    "\ta = a < 0 ? 0 : a;\n"
    "\tb = b > n ? n : b;\n"
    "\treturn b > a ? b - a : 0;\n"
    "}\n"
    "\n"
    "static inline int64_t ir_scalar_int_mod(int64_t a, int64_t b)\n"
    "{\n"
    "\tint64_t m = ir_scalar_int_fmod(a, b);\n"
    "\n"
    "\treturn m != 0 && (m < 0) != (b < 0) ? (int64_t)((uint64_t)m + (uint64_t)b) : m;\n"
    "}\n";

/* exp in straight-line C that gcc vectorises (libm's exp is a call it
 * cannot): x = n ln2 + r by Cody-Waite, with n rounded by adding the shift
 * 1.5 2^52 (2^23) to x log2(e), so that the sum's low bits hold n; |r| <=
 * ln2/2; e^r in f64 as 1 + r (1 + r q(r)), q of degree 9 fitted (Chebyshev,
 * mpmath, coefficients rounded to f64) to (e^r - 1 - r) / r^2: 1.6e-17
 * relative at worst, two FMAs fewer than the Taylor series to degree 13
 * it replaced, with as many results 1 ulp off in vexp.c's sweep (114528
 * against 113313 of 1.3 million, none worse).  q goes by Estrin's scheme
 * (five pairs, joined by r^2 and r^4): three more multiplies than Horner's
 * rule but a chain of 6 operations instead of 9, which is what bounds a
 * loop of exps (the exp alone 10% faster, docs/perf.md session 16; the
 * error is q's times r^2 <= 0.12, so the same results 1 ulp off within
 * 1%).  In f32, q of degree 4 fitted the same way (3.8e-9 relative; one
 * FMA fewer than the Taylor series to degree 7 (7e-9) it replaced, 7% faster,
 * as many results 1 ulp off).  2^n is put
 * in by one integer add of n << 52 (23) to the polynomial's bits; where the
 * result is subnormal (n below the least normal exponent) n + 128 (64) is
 * added and the product multiplied by 2^-128 (2^-64), one rounding as in a
 * multiply by 2^n.  No clamp before: lanes out of range compute garbage bits
 * (no undefined behaviour: memcpy and unsigned arithmetic only) that the
 * last masks replace (NaN stays NaN, overflow inf, underflow 0).  All of
 * it is branch-free: integer compares on x's bits and AND/OR masks on the
 * result's bits, the shape gcc if-converts and vectorises on AVX2 as on
 * AVX-512 (a float compare feeding integer bits, or a clamp's select
 * feeding the arithmetic, makes it keep branches; so do float selects on
 * y, x != x ? x : ..., on AVX2: gcc sinks the arithmetic into the branch
 * that uses it and then, under the default -ftrapping-math, cannot
 * if-convert it, and the whole loop stays scalar, 5 ns an element); about 40
 * AVX-512 instructions per 16 f32 lanes against 62 for the two-halves
 * scaling this replaced.  Checked against libm over a sweep of inputs by
 * tests/native.sh with tests/native/vexp.c (at most 1 ulp, specials,
 * subnormal results), and by the goldens'
 * --check runs and the random differential (make check-native).  The
 * subnormal test and the NaN test compare signed, where the sign bit
 * cannot change the result (kb is negative only for x below -8e6 in f32,
 * -4e15 in f64, whose result the underflow mask zeroes; the NaN test's
 * operand has no sign bit): AVX2 has no unsigned compare, so an unsigned
 * one is two instructions (w3s f64 4% faster, docs/perf.md session 14). */
static const char vexp_text[] =
    "static inline double aicm_vexp_f64(double x)\n"
    "{\n"
    "\tconst double sh = 6755399441055744.0;   /* 1.5 * 2^52: n in the low bits */\n"
    "\tconst double ks = x * 1.4426950408889634 + sh, kd = ks - sh;\n"
    "\tconst double r = (x - kd * 6.93147180369123816490e-01) - kd * 1.90821492927058770002e-10;\n"
    "\t/* 1 + r (1 + r q(r)), q of degree 9 Chebyshev-fitted to (e^r - 1 - r) / r^2\n"
    "\t * on |r| <= ln2/2, by Estrin's scheme (pairs, then r^2, then r^4) */\n"
    "\tconst double r2 = r * r, r4 = r2 * r2;\n"
    "\tconst double a01 = 0x1.0000000000001p-1 + 0x1.5555555555556p-3 * r;\n"
    "\tconst double a23 = 0x1.5555555553d68p-5 + 0x1.11111111109b5p-7 * r;\n"
    "\tconst double a45 = 0x1.6c16c17889ef1p-10 + 0x1.a01a01a7c2efep-13 * r;\n"
    "\tconst double a67 = 0x1.a019b9149a41cp-16 + 0x1.71de0db2f6b19p-19 * r;\n"
    "\tconst double a89 = 0x1.28917c89a43a7p-22 + 0x1.af389ecfc4b9cp-26 * r;\n"
    "\tconst double q = (a01 + a23 * r2) + r4 * ((a45 + a67 * r2) + a89 * r4);\n"
    "\tconst double p = 1.0 + r * (1.0 + r * q);\n"
    "\tuint64_t kb, pb, fb;\n"
    "\tmemcpy(&kb, &ks, sizeof kb);\n"
    "\tmemcpy(&pb, &p, sizeof pb);\n"
    "\t/* n < -1021: the result may be subnormal, so 128 << 52 more and times 2^-128 */\n"
    "\tconst uint64_t sub = (uint64_t)((int64_t)kb < 0x4338000000000000 - 1021) << 59;\n"
    "\tpb += (kb << 52) + sub;\n"
    "\tfb = 0x3ff0000000000000u - sub;\n"
    "\tdouble y, f;\n"
    "\tmemcpy(&y, &pb, sizeof y);\n"
    "\tmemcpy(&f, &fb, sizeof f);\n"
    "\ty *= f;\n"
    "\t/* x < -745.2: 0; x > 709.78...: inf; NaN: x (integer masks on the bits) */\n"
    "\tuint64_t xb, yb, m;\n"
    "\tmemcpy(&xb, &x, sizeof xb);\n"
    "\tmemcpy(&yb, &y, sizeof yb);\n"
    "\tyb &= 0u - (uint64_t)(xb <= 0xc08749999999999au);\n"
    "\tm = 0u - (uint64_t)((int64_t)xb > 0x40862e42fefa39ef);\n"
    "\tyb = (yb & ~m) | (0x7ff0000000000000u & m);\n"
    "\tm = 0u - (uint64_t)((int64_t)(xb & 0x7fffffffffffffffu) > 0x7ff0000000000000);\n"
    "\tyb = (yb & ~m) | (xb & m);\n"
    "\tmemcpy(&y, &yb, sizeof y);\n"
    "\treturn y;\n"
    "}\n"
    "static inline float aicm_vexp_f32(float x)\n"
    "{\n"
    "\tconst float sh = 12582912.0f;   /* 1.5 * 2^23: n in the low bits */\n"
    "\tconst float ks = x * 1.44269504f + sh, kd = ks - sh;\n"
    "\tconst float r = (x - kd * 0.693145752f) - kd * 1.42860677e-6f;\n"
    "\t/* 1 + r + r^2 q(r), q of degree 4 fitted to (e^r - 1 - r) / r^2 on |r| <= ln2/2 */\n"
    "\tfloat p = 0x1.687c22p-10f;\n"
    "\tconst float c[6] = {0x1.123b8ep-7f, 0x1.555b58p-5f, 0x1.55548ep-3f, 0x1.fffff8p-2f, 1.0f, 1.0f};\n"
    "\tfor (int i = 0; i < 6; i++)\n"
    "\t\tp = p * r + c[i];\n"
    "\tuint32_t kb, pb, fb;\n"
    "\tmemcpy(&kb, &ks, sizeof kb);\n"
    "\tmemcpy(&pb, &p, sizeof pb);\n"
    "\t/* n < -125: the result may be subnormal, so 64 << 23 more and times 2^-64 */\n"
    "\tconst uint32_t sub = (uint32_t)((int32_t)kb < 0x4b400000 - 125) << 29;\n"
    "\tpb += (kb << 23) + sub;\n"
    "\tfb = 0x3f800000u - sub;\n"
    "\tfloat y, f;\n"
    "\tmemcpy(&y, &pb, sizeof y);\n"
    "\tmemcpy(&f, &fb, sizeof f);\n"
    "\ty *= f;\n"
    "\t/* x < -104: 0; x >= 88.72...: inf; NaN: x (integer masks on the bits) */\n"
    "\tuint32_t xb, yb, m;\n"
    "\tmemcpy(&xb, &x, sizeof xb);\n"
    "\tmemcpy(&yb, &y, sizeof yb);\n"
    "\tyb &= 0u - (uint32_t)(xb <= 0xc2d00000u);\n"
    "\tm = 0u - (uint32_t)((int32_t)xb >= 0x42b17218);\n"
    "\tyb = (yb & ~m) | (0x7f800000u & m);\n"
    "\tm = 0u - (uint32_t)((int32_t)(xb & 0x7fffffffu) > 0x7f800000);\n"
    "\tyb = (yb & ~m) | (xb & m);\n"
    "\tmemcpy(&y, &yb, sizeof y);\n"
    "\treturn y;\n"
    "}\n";

/* The dot's micro-kernel (op_dot; docs/codegen.md), the shape of the tile
 * engine's blk512_6_4 (src/runtime/simd_kern.h).  Written with GCC vector
 * types of the target's width (AICM_DOT_VB), not plain loops: gcc kept a
 * plain 8 x 32 f32 block in registers but spilled wider ones (6 x 64 f32
 * with vectors: W1 f32 5% faster).  Without AVX-512 (16 registers) it
 * holds 6 x 2 vectors a pass over the columns, the tile engine's blk256;
 * without -march at all, SSE's 16-byte vectors. */
static const char dot_vec_text[] =
    "\n/* The dot's vectors: the target's widest (docs/codegen.md). */\n"
    "#if defined(__AVX512F__)\n#define AICM_DOT_VB 64\n#elif defined(__AVX__)\n#define AICM_DOT_VB 32\n"
    "#else\n#define AICM_DOT_VB 16\n#endif\n";
static const char dot_text[] =
    "\n/* The dot's micro-kernel: mr <= 6 rows by ncol (a multiple of 64 bytes,\n"
    " * at most 256) columns of o = c + a b, or of a b when zero; a's rows lda\n"
    " * apart, b's ldb.  mr and ncol are constants where it is called, so every\n"
    " * loop over the accumulator vectors unrolls and they stay in registers:\n"
    " * 6 x 4 with AVX-512 (24 of the 32 zmm), else 6 x 2 a pass over the\n"
    " * columns (12 of the 16 ymm or xmm).  Each step of p is one broadcast of\n"
    " * a's element times the vectors of b's row: FMA vectors.  When pf is\n"
    " * given, each step of p prefetches pf[p * pfs] (a line of the strip packed\n"
    " * next, which comes from L3: its rows 4 KiB apart defeat the hardware\n"
    " * prefetcher).  The pragmas unroll at -O2 too. */\n"
    "typedef @T aicm_dot_v@S __attribute__((vector_size(AICM_DOT_VB)));\n"
    "static inline __attribute__((always_inline)) void\n"
    "aicm_dot_@S(int mr, int ncol, int zero, long K, const @T *a, long lda, const @T *b, long ldb,\n"
    "    const @T *c, @T *o, long ldc, const @T *pf, long pfs)\n"
    "{\n"
    "\tenum { VL = AICM_DOT_VB / (int)sizeof(@T), NV = AICM_DOT_VB == 64 ? 4 : 2 };\n"
    "\tconst int nv = ncol / VL;\n"
    "\n"
    "\tfor (int v0 = 0; v0 < nv; v0 += NV) {\n"
    "\t\tconst int w = nv - v0 < NV ? nv - v0 : NV;\n"
    "\t\taicm_dot_v@S acc[6][NV];\n"
    "\n"
    "\t\t#pragma GCC unroll 8\n"
    "\t\tfor (int q = 0; q < mr; q++)\n"
    "\t\t\t#pragma GCC unroll 8\n"
    "\t\t\tfor (int v = 0; v < w; v++) {\n"
    "\t\t\t\tif (zero)\n"
    "\t\t\t\t\tacc[q][v] = (aicm_dot_v@S){0};\n"
    "\t\t\t\telse\n"
    "\t\t\t\t\tmemcpy(&acc[q][v], &c[q * ldc + (v0 + v) * VL], sizeof acc[q][v]);\n"
    "\t\t\t}\n"
    "\t\tfor (long p = 0; p < K; p++) {\n"
    "\t\t\taicm_dot_v@S bv[NV];\n"
    "\n"
    "\t\t\tif (pf && v0 == 0)\n"
    "\t\t\t\t__builtin_prefetch(&pf[p * pfs], 0, 1);\n"
    "\t\t\t#pragma GCC unroll 8\n"
    "\t\t\tfor (int v = 0; v < w; v++)\n"
    "\t\t\t\tmemcpy(&bv[v], &b[p * ldb + (v0 + v) * VL], sizeof bv[v]);\n"
    "\t\t\t#pragma GCC unroll 8\n"
    "\t\t\tfor (int q = 0; q < mr; q++) {\n"
    "\t\t\t\tconst @T aq = a[q * lda + p];\n"
    "\n"
    "\t\t\t\t#pragma GCC unroll 8\n"
    "\t\t\t\tfor (int v = 0; v < w; v++)\n"
    "\t\t\t\t\tacc[q][v] += aq * bv[v];\n"
    "\t\t\t}\n"
    "\t\t}\n"
    "\t\t#pragma GCC unroll 8\n"
    "\t\tfor (int q = 0; q < mr; q++)\n"
    "\t\t\t#pragma GCC unroll 8\n"
    "\t\t\tfor (int v = 0; v < w; v++)\n"
    "\t\t\t\tmemcpy(&o[q * ldc + (v0 + v) * VL], &acc[q][v], sizeof acc[q][v]);\n"
    "\t}\n"
    "}\n";

/* dot_text for type t (0 f64, 1 f32): @T its C type, @S its suffix */
static void
emit_dot(StrBuf *o, int t)
{
	for (const char *s = dot_text; *s; s++)
		if (*s == '@' && s[1] == 'T') {
			strbuf_puts(o, t ? "float" : "double");
			s++;
		} else if (*s == '@' && s[1] == 'S') {
			strbuf_puts(o, t ? "f32" : "f64");
			s++;
		} else {
			strbuf_putc(o, *s);
		}
}

/* aicm_vcOP_T(part, blk): part[j] = aicm_cOP_T(part[j], blk[j]) for the
 * 64 bytes of part (a row reduction's partials, emit_c_ops.c), with GCC
 * vector extensions: gcc does not vectorise max's and min's NaN-keeping
 * select from the scalar formula.  The vectors are as wide as the target
 * compiled for has (AVX-512's 64 bytes, AVX's 32, else 16: wider ones are
 * split through memory where the target has no such registers).  With
 * AVX-512, 64 bytes rather than two halves of 32: one compare-and-blend
 * chain a row instead of two, and the compares in mask registers (w3s
 * f32 9% faster on the Zen 5; docs/perf.md, session 12).  A float sum's
 * aicm_vcsum_T adds a vector at a time: the same adds, lane by lane, as
 * the scalar loop that gcc vectorises too, but on the Zen 3 gcc kept that
 * loop's partials in an array it then took apart into scalars for the
 * tree that combines them (w3s f32 0.064 to 0.058 ms; docs/perf.md,
 * session 14). */
static void
emit_vselect(StrBuf *o, OpId op, const char *tn, const char *ct, int size, bool *types)
{
	if (!*types) {
		strbuf_puts(o, "\n#if defined(__AVX512F__)\n#define AICM_VB 64\n#elif defined(__AVX__)\n#define AICM_VB 32\n"
		    "#else\n#define AICM_VB 16\n#endif\n"
		    "typedef double aicm_vf64 __attribute__((vector_size(AICM_VB)));\n"
		    "typedef int64_t aicm_vi64 __attribute__((vector_size(AICM_VB)));\n"
		    "typedef float aicm_vf32 __attribute__((vector_size(AICM_VB)));\n"
		    "typedef int32_t aicm_vi32 __attribute__((vector_size(AICM_VB)));\n");
		*types = true;
	}
	if (op == OP_SUM) {
		strbuf_printf(o, "static inline void aicm_vcsum_%s(%s *part, const %s *blk)\n{\n"
		    "\tfor (int q = 0; q < 64 / AICM_VB; q++) {\n"
		    "\t\taicm_v%s a, v;\n"
		    "\t\tmemcpy(&a, part + q * (AICM_VB / %d), sizeof a);\n"
		    "\t\tmemcpy(&v, blk + q * (AICM_VB / %d), sizeof v);\n"
		    "\t\ta += v;   /* as aicm_csum_%s, lane by lane */\n"
		    "\t\tmemcpy(part + q * (AICM_VB / %d), &a, sizeof a);\n\t}\n}\n",
		    tn, ct, ct, tn, size, size, tn, size);
		return;
	}
	strbuf_printf(o, "static inline void aicm_vc%s_%s(%s *part, const %s *blk)\n{\n"
	    "\tfor (int q = 0; q < 64 / AICM_VB; q++) {\n"
	    "\t\taicm_v%s a, v;\n\t\taicm_vi%d m;\n"
	    "\t\tmemcpy(&a, part + q * (AICM_VB / %d), sizeof a);\n"
	    "\t\tmemcpy(&v, blk + q * (AICM_VB / %d), sizeof v);\n"
	    "\t\tm = (v != v) | (v %s a);   /* NaN wins, as aicm_c%s_%s */\n"
	    "\t\ta = (aicm_v%s)((m & (aicm_vi%d)v) | (~m & (aicm_vi%d)a));\n"
	    "\t\tmemcpy(part + q * (AICM_VB / %d), &a, sizeof a);\n\t}\n}\n",
	    ir_ops[op].name, tn, ct, ct, tn, size * 8, size, size, op == OP_MAX ? ">" : "<",
	    ir_ops[op].name, tn, tn, size * 8, size * 8, size);
}

static void
emit_formulas(StrBuf *o, const CgUses *u)
{
	static const char *const tn[3] = {"f64", "f32", "i64"};
	static const char *const ct[3] = {"double", "float", "int64_t"};
	bool vexp = false, vtypes = false;

	if (u->dot[0] || u->dot[1])
		strbuf_puts(o, dot_vec_text);
	for (int t = 0; t < 2; t++)
		if (u->dot[t])
			emit_dot(o, t);
	if (u->rdiv)
		strbuf_puts(o, rdiv_text);
	if (u->stream)
		strbuf_puts(o, stream_text);
	if (u->prefetch)
		strbuf_puts(o, "\n/* A prefetch of the cache line of p[i] for a read (rw 0) or a write (1):\n"
		    " * only its address is formed, as an integer, for i may lie past the\n"
		    " * tensor's edge (the row after a tile's last), where a prefetch never faults. */\n"
		    "#define AICM_PREFETCH(p, i, rw) \\\n"
		    "\t__builtin_prefetch((const void *)((uintptr_t)(p) + (uintptr_t)(i) * sizeof *(p)), rw)\n");
	strbuf_puts(o, "\n/* The formulas of the ops used (scalar.h's rows). */\n");
	for (int kind = 0; kind < 3; kind++)
		for (int op = 0; op < OP_COUNT; op++)
			for (int t = 0; t < 3; t++) {
				const char *f;

				if (!u->formula[kind][op][t])
					continue;
				f = formula_text[kind][t == 2][op];
				if (!f)
					AICM_BUG("'%s' has no formula for %s", ir_ops[op].name, tn[t]);
				if (kind == 0 && (op == OP_EXP || op == OP_SIGMOID) && t < 2) {
					/* exp and sigmoid through aicm_vexp: their loops
					 * vectorise */
					if (!vexp) {
						strbuf_puts(o, vexp_text);
						vexp = true;
					}
					if (op == OP_EXP)
						strbuf_printf(o, "static inline %s aicm_exp_%s(%s x) { return "
						    "aicm_vexp_%s(x); }\n", ct[t], tn[t], ct[t], tn[t]);
					else
						strbuf_printf(o, "static inline %s aicm_sigmoid_%s(%s x) { return "
						    "1 / (1 + aicm_vexp_%s(-x)); }\n", ct[t], tn[t], ct[t], tn[t]);
				} else if (kind == 0)
					strbuf_printf(o, "static inline %s aicm_%s_%s(%s x) { return %s; }\n",
					    ct[t], ir_ops[op].name, tn[t], ct[t], f);
				else if (kind == 1)
					strbuf_printf(o, "static inline %s aicm_%s_%s(%s a, %s b) { return "
					    "%s; }\n", ct[t], ir_ops[op].name, tn[t], ct[t], ct[t], f);
				else
					strbuf_printf(o, "static inline %s aicm_c%s_%s(%s acc, %s v) { return "
					    "%s; }\n", ct[t], ir_ops[op].name, tn[t], ct[t], ct[t], f);
				if (kind == 2 && (op == OP_MAX || op == OP_MIN || op == OP_SUM) && t < 2)
					emit_vselect(o, (OpId)op, tn[t], ct[t], t == 0 ? 8 : 4, &vtypes);
			}
}

char *
codegen_c_name(const Graph *g, const char *stem)
{
	static const char *const kw[] = {"auto", "break", "case", "char", "const", "continue",
	    "default", "do", "double", "else", "enum", "extern", "float", "for", "goto", "if",
	    "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof",
	    "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile",
	    "while", "main", NULL};
	const char *s = g->name;
	char *r;
	size_t n;

	if (!s && stem) {
		const char *b = strrchr(stem, '/');

		s = b ? b + 1 : stem;
	}
	if (!s || !*s)
		s = "model";
	n = strlen(s);
	if (!g->name && strrchr(s, '.'))
		n = (size_t)(strrchr(s, '.') - s);
	r = xmalloc(n + 3);
	for (size_t i = 0; i < n; i++)
		r[i] = isalnum((unsigned char)s[i]) || s[i] == '_' ? s[i] : '_';
	r[n] = '\0';
	if (n == 0 || isdigit((unsigned char)r[0])) {
		memmove(r + 1, r, n + 1);
		r[0] = 'm';
	}
	for (int i = 0; kw[i]; i++)
		if (!strcmp(r, kw[i]))
			strcat(r, "_");
	return r;
}

/* Field names: the node's name made an identifier, unique in the args. */
static char *
field_name(char **names, int nnames, const char *s)
{
	size_t n = strlen(s);
	char *r = xmalloc(n + 24);
	int suffix = 0;

	for (size_t i = 0; i < n; i++)
		r[i] = isalnum((unsigned char)s[i]) || s[i] == '_' ? s[i] : '_';
	r[n] = '\0';
	if (isdigit((unsigned char)r[0]) || !r[0]) {
		memmove(r + 1, r, n + 1);
		r[0] = 'v';
		n++;
	}
	for (;;) {
		bool taken = !strcmp(r, "a") || !strcmp(r, "threads");

		for (int i = 0; i < nnames && !taken; i++)
			taken = names[i] && !strcmp(names[i], r);
		if (!taken)
			return r;
		snprintf(r + n, 24, "_%d", ++suffix);
	}
}

static void
type_comment(char *buf, size_t n, const Node *nd)
{
	size_t len = (size_t)snprintf(buf, n, "%%%s: (", nd->name);

	for (int d = 0; d < nd->type.rank; d++)
		len += (size_t)snprintf(buf + len, n - len, "%s%" PRId64, d ? ", " : "",
		    nd->type.dim[d]);
	snprintf(buf + len, n - len, "%s) %s", nd->type.rank == 1 ? "," : "",
	    ir_dtype_name(nd->type.dt));
}

/* The tile-IR lines of tiled node n, one per instruction (the printer's
 * order is the instructions' order; a loop's closing brace is skipped). */
static char **
tile_lines(const char *text, const Node *n)
{
	const TileFn *f = n->tile;
	char **line = xcalloc((size_t)f->ninsts + 1, sizeof *line);
	char head[512];
	const char *p;
	int i = 0;

	snprintf(head, sizeof head, "\n  %%%s = tiled @%s ", n->name, f->name);
	p = strstr(text, head);
	if (!p)
		AICM_BUG("the printed graph has no statement for '%%%s'", n->name);
	p = strchr(p + 1, '\n') + 1;
	while (i < f->ninsts) {
		const char *e = strchr(p, '\n'), *b = p;
		size_t len;
		char *s;

		while (*b == ' ')
			b++;
		len = (size_t)(e - b);
		p = e + 1;
		if (len == 1 && *b == '}')
			continue;
		s = xmalloc(len + 1);
		memcpy(s, b, len);
		s[len] = '\0';
		/* a comment must not close early */
		for (char *q = s; (q = strstr(q, "*/"));)
			q[1] = ' ';
		line[i++] = s;
	}
	return line;
}

typedef struct Mod {
	const Graph *g;
	const char *name;
	char **field;                /* per node */
	int *fnode;                  /* per field: its node */
	int nfields;
	int nin, nconst, nout;       /* fields: inputs, constants, outputs, then intermediates */
	int *outs;
	int nouts;
	int *copyout;                /* per node: an output that is a source: its output field */
} Mod;

static void
add_field(Mod *m, int node, char **names)
{
	names[m->nfields] = field_name(names, m->nfields, m->g->nodes[node].name);
	m->field[node] = names[m->nfields];
	m->fnode[m->nfields++] = node;
}

static void
plan_fields(Mod *m)
{
	const Graph *g = m->g;
	bool *need = xcalloc((size_t)g->nnodes + 1, sizeof *need);
	char **names = xcalloc((size_t)g->nnodes * 2 + 1, sizeof *names);

	m->field = xcalloc((size_t)g->nnodes + 1, sizeof *m->field);
	m->fnode = xcalloc((size_t)g->nnodes * 2 + 1, sizeof *m->fnode);
	m->copyout = xcalloc((size_t)g->nnodes + 1, sizeof *m->copyout);
	m->nouts = ir_outputs(g, &m->outs);
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].tile)
			for (int j = 0; j < g->nodes[i].tile->nargs; j++)
				need[g->nodes[i].tile->args[j]] = true;
	for (int i = 0; i < m->nouts; i++)
		need[m->outs[i]] = true;
	for (int pass = 0; pass < 2; pass++) {
		OpId op = pass ? OP_CONST : OP_INPUT;

		for (int i = 0; i < g->nnodes; i++)
			if (g->nodes[i].op == op && need[i])
				add_field(m, i, names);
		if (pass)
			m->nconst = m->nfields - m->nin;
		else
			m->nin = m->nfields;
	}
	for (int i = 0; i < m->nouts; i++) {
		int o = m->outs[i];

		if (g->nodes[o].op != OP_TILED) {
			/* a source returned as it is: an output field of its own,
			 * copied by NAME_run */
			char buf[300];

			snprintf(buf, sizeof buf, "%s_out", g->nodes[o].name);
			names[m->nfields] = field_name(names, m->nfields, buf);
			m->copyout[o] = m->nfields + 1;
			m->fnode[m->nfields++] = -1 - o;
			continue;
		}
		if (!m->field[o])
			add_field(m, o, names);
	}
	m->nout = m->nfields - m->nin - m->nconst;
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OP_TILED && !m->field[i])
			add_field(m, i, names);
	free(need);
	m->fnode = xrealloc(m->fnode, sizeof *m->fnode * ((size_t)m->nfields + 1));
	/* keep every field's name reachable by field index */
	m->field = xrealloc(m->field, sizeof *m->field * ((size_t)g->nnodes + (size_t)m->nfields + 1));
	for (int i = 0; i < m->nfields; i++)
		m->field[g->nnodes + i] = names[i];
	free(names);
}

/* Field i's name. */
static const char *
fname(const Mod *m, int i)
{
	return m->field[m->g->nnodes + i];
}

static const Node *
fnode(const Mod *m, int i)
{
	int nd = m->fnode[i];

	return &m->g->nodes[nd < 0 ? -1 - nd : nd];
}

static void
emit_header(const Mod *m, StrBuf *h)
{
	const char *N = m->name;
	static const char *const part[3] = {"inputs", "constants (the caller passes their data)",
	    "outputs"};
	int lim[4] = {m->nin, m->nin + m->nconst, m->nin + m->nconst + m->nout, m->nfields};

	strbuf_printf(h, "/*\n * %s.h: the interface of the C that aicm-opt --emit=c wrote for "
	    "graph '%s'\n * (docs/codegen.md).  Generated: do not edit.\n */\n", N, N);
	strbuf_printf(h, "#ifndef %s_H\n#define %s_H\n\n#include <stdint.h>\n\n", N, N);
	strbuf_puts(h, "/* Shapes: each tensor's dims and element count. */\n");
	for (int i = 0; i < m->nfields; i++) {
		const Node *nd = fnode(m, i);
		char c[400];
		int64_t numel = 1;

		type_comment(c, sizeof c, nd);
		for (int d = 0; d < nd->type.rank; d++) {
			strbuf_printf(h, "#define %s_%s_DIM%d %" PRId64 "\n", N, fname(m, i), d,
			    nd->type.dim[d]);
			numel *= nd->type.dim[d];
		}
		strbuf_printf(h, "#define %s_%s_NUMEL %" PRId64 "   /* %s */\n", N, fname(m, i), numel,
		    c);
	}
	strbuf_printf(h, "\n/* The tensors, row-major and contiguous. */\ntypedef struct %s_args {\n",
	    N);
	for (int p = 0, i = 0; p < 4; p++) {
		if (i < lim[p]) {
			if (p == 3)
				strbuf_printf(h, "\t/* intermediates: leave NULL, %s_run allocates them */\n",
				    N);
			else
				strbuf_printf(h, "\t/* %s */\n", part[p]);
		}
		for (; i < lim[p]; i++) {
			const Node *nd = fnode(m, i);
			char c[400];

			type_comment(c, sizeof c, nd);
			strbuf_printf(h, "\t%s%s *%s;   /* %s */\n", p < 2 ? "const " : "",
			    cg_ctype(nd->type.dt), fname(m, i), c);
		}
	}
	strbuf_printf(h, "} %s_args;\n\n", N);
	strbuf_printf(h, "/* Runs the graph: 0; -1 when an intermediate cannot be allocated; -2\n"
	    " * when a gather's index is out of range, -3 when an integer is divided by\n"
	    " * zero: the first kernel that fails ends the run with its error (the\n"
	    " * outputs are then not whole).\n"
	    " * threads > 1 spreads each kernel's programs over that many threads when\n"
	    " * the module is compiled with -pthread. */\n"
	    "int %s_run(const %s_args *a, int threads);\n\n#endif\n", N, N);
}

static bool row_split(const Graph *g, int node);

/* One kernel: its tiles, then its programs lo..hi-1. */
static int
emit_kernel(const Mod *m, CgUses *use, int node, int kidx, char **line, StrBuf *o, Diag *d)
{
	const Graph *g = m->g;
	const Node *nd = &g->nodes[node];
	const TileFn *f = nd->tile;
	CgKernel k = {0};
	int64_t g12 = f->grid[1] * f->grid[2];
	size_t heap = 0;
	char c[400];
	int rc;

	k.g = g;
	k.node = node;
	k.f = f;
	k.name = m->name;
	k.field = m->field;
	k.line = line;
	k.use = use;
	k.o = o;
	k.d = d;
	k.sh = xcalloc((size_t)f->nvals + 1, sizeof *k.sh);
	k.heap = xcalloc((size_t)f->nvals + 1, sizeof *k.heap);
	k.nuse = xcalloc((size_t)f->nvals + 1, sizeof *k.nuse);
	k.reg = xcalloc((size_t)f->nvals + 1, sizeof *k.reg);
	k.inplace = xcalloc((size_t)f->nvals + 1, sizeof *k.inplace);
	k.vstr = xcalloc((size_t)f->nvals + 1, sizeof *k.vstr);
	k.chain = xcalloc((size_t)f->nvals + 1, sizeof *k.chain);
	k.alias = xcalloc((size_t)f->nvals + 1, sizeof *k.alias);
	k.fold = xcalloc((size_t)f->nvals + 1, sizeof *k.fold);
	k.keep = xcalloc((size_t)f->nvals + 1, sizeof *k.keep);
	for (int i = 0; i < f->ninsts; i++)
		for (int j = 0; j < f->insts[i].nin; j++)
			k.nuse[f->insts[i].in[j]]++;
	for (int v = 0; v < f->nvals; v++) {
		const TileVal *tv = &f->vals[v];

		if (tv->rank < 0)
			continue;
		for (int q = 0; q + 4 < tv->rank; q++)
			if (tv->shape[q] != 1) {
				diag_error(d, tv->loc, "tile '%%%s' of kernel '@%s' is longer than 1 in a "
				    "dim before its last four", tv->name, f->name);
				free(k.sh);
				free(k.heap);
				free(k.nuse);
				free(k.reg);
				free(k.inplace);
				free(k.vstr);
				free(k.chain);
				free(k.alias);
				free(k.fold);
				free(k.keep);
				return -1;
			}
		for (int q = 0; q < 4; q++)
			k.sh[v][q] = q < 4 - tv->rank ? 1 : tv->shape[q - (4 - tv->rank)];
	}
	cg_plan_runs(&k);
	cg_plan_dots(&k);
	/* kept b strips (cg_plan_dots) are reused by the programs of one grid
	 * column, so the programs run column by column: allowed when they
	 * are independent (no atomics), or when each row adds into its own
	 * elements (row_split), each element still seeing its adds in
	 * program order; else nothing is kept */
	for (int v = 0; v < f->nvals; v++)
		if (k.keep[v] && f->has_init && !row_split(g, node))
			k.keep[v] = 0;
		else if (k.keep[v] && f->grid[0] > 1 && g12 > 1)
			k.bycol = true;   /* (one column: that is the programs' order) */
	type_comment(c, sizeof c, nd);
	strbuf_printf(o, "\n/* @%s [%s] -> %s, grid=(%" PRId64 ", %" PRId64 ", %" PRId64 ")",
	    f->name, ir_kernel_kinds[f->kind], c, f->grid[0], f->grid[1], f->grid[2]);
	for (int q = 0; q < KA_COUNT; q++)
		if (f->kset & (1u << q))
			strbuf_printf(o, " %s=%" PRId64, ir_kattr_names[q], f->kattr[q]);
	strbuf_printf(o, ": programs lo..hi-1 */\nstatic void\n%s_kernel%d(const %s_args *a, long lo, "
	    "long hi)\n{\n", m->name, kidx, m->name);
	k.depth = 1;
	for (int v = 0; v < f->nvals; v++) {
		const TileVal *tv = &f->vals[v];
		int64_t n = k.sh[v][0] * k.sh[v][1] * k.sh[v][2] * k.sh[v][3];
		size_t bytes;

		if (tv->rank < 0) {
			int def = tv->def;

			/* a loop's carried scalar and its result (its counter is
			 * declared by the C loop) */
			if (def >= 0 && f->insts[def].op == TO_FOR && v != f->insts[def].var)
				cg_line(&k, "long s%d = 0;   /* %%%s */", v, tv->name);
			continue;
		}
		if (k.inplace[v]) {
			cg_line(&k, "const %s *t%d;   /* %%%s: read in place */", cg_ctype(tv->dt), v,
			    tv->name);
			cg_line(&k, "long b%d[4];", v);
			continue;
		}
		if (k.alias[v]) {
			cg_line(&k, "%s *t%d;   /* %%%s: the loop's carried tile t%d */", cg_ctype(tv->dt),
			    v, tv->name, k.alias[v] - 1);
			cg_line(&k, "long b%d[4];", v);
			continue;
		}
		if (k.fold[v]) {
			cg_line(&k, "long b%d[4];   /* %%%s: read by its dot through its operand */",
			    v, tv->name);
			continue;
		}
		if (k.reg[v] || k.chain[v]) {
			/* a register of a fused run: its box only */
			cg_line(&k, "long b%d[4];   /* %%%s: in registers */", v, tv->name);
			continue;
		}
		bytes = (size_t)n * ir_dtype_size(tv->dt);
		if (bytes > CG_STACK_BYTES) {
			k.heap[v] = true;
			heap = (heap + 63) & ~(size_t)63;
			cg_line(&k, "%s *t%d;   /* %%%s: %" PRId64 " elements, in the heap block */",
			    cg_ctype(tv->dt), v, tv->name, n);
			heap += bytes;
		} else {
			cg_line(&k, "%s t%d[%" PRId64 "];   /* %%%s */", cg_ctype(tv->dt), v, n, tv->name);
		}
		cg_line(&k, "long b%d[4];", v);
	}
	/* kept b strips (cg_plan_dots) in the heap block too: one block,
	 * which glibc then reuses from call to call; a second block of its
	 * own was mapped afresh each call (W4: 128 page faults a call) */
	for (int v = 0; v < f->nvals; v++)
		if (k.keep[v]) {
			const char *T = cg_ctype(f->vals[v].dt);

			heap = (heap + 63) & ~(size_t)63;
			cg_line(&k, "%s *pc%d;   /* %%%s's b strips, packed once, kept */", T, v,
			    f->vals[v].name);
			cg_line(&k, "const %s *pt%d[%" PRId64 "] = {0};   /* where each was packed from */",
			    T, v, k.keep[v]);
			heap += (size_t)cg_kept_elems(&k, v) * ir_dtype_size(f->vals[v].dt);
		}
	if (heap) {
		size_t off = 0;

		cg_line(&k, "char *heap = malloc(%zu);", heap);
		cg_line(&k, "if (!heap)");
		cg_line(&k, "\tabort();");
		for (int v = 0; v < f->nvals; v++)
			if (k.heap[v]) {
				const TileVal *tv = &f->vals[v];
				int64_t n = k.sh[v][0] * k.sh[v][1] * k.sh[v][2] * k.sh[v][3];

				off = (off + 63) & ~(size_t)63;
				cg_line(&k, "t%d = (%s *)(void *)(heap + %zu);", v, cg_ctype(tv->dt), off);
				off += (size_t)n * ir_dtype_size(tv->dt);
			}
		for (int v = 0; v < f->nvals; v++)
			if (k.keep[v]) {
				off = (off + 63) & ~(size_t)63;
				cg_line(&k, "pc%d = (%s *)(void *)(heap + %zu);", v, cg_ctype(f->vals[v].dt),
				    off);
				off += (size_t)cg_kept_elems(&k, v) * ir_dtype_size(f->vals[v].dt);
			}
	}
	for (int v = 0; v < f->nvals; v++)
		if (k.alias[v])
			cg_line(&k, "t%d = t%d;   /* one buffer */\n\t(void)t%d;", v, k.alias[v] - 1, v);
	if (k.bycol) {
		cg_line(&k, "/* column by column: the programs of a column share their kept strips */");
		cg_line(&k, "for (long col = 0; col < %" PRId64 "; col++) {", g12);
		k.depth++;
		cg_line(&k, "for (long prog = lo / %" PRId64 " * %" PRId64 " + col; prog < hi; prog += %"
		    PRId64 ") {", g12, g12, g12);
		k.depth++;
		cg_line(&k, "if (prog < lo)");
		cg_line(&k, "\tcontinue;");
	} else {
		cg_line(&k, "for (long prog = lo; prog < hi; prog++) {");
		k.depth++;
	}
	cg_line(&k, "const long pid0 = prog / %" PRId64 ", pid1 = prog / %" PRId64 " %% %" PRId64
	    ", pid2 = prog %% %" PRId64 ";", g12, f->grid[2], f->grid[1], f->grid[2]);
	cg_line(&k, "(void)pid0, (void)pid1, (void)pid2;");
	rc = cg_emit_insts(&k, 0, f->ninsts);
	k.depth--;
	cg_line(&k, "}");
	if (k.bycol) {
		k.depth--;
		cg_line(&k, "}");
	}
	if (k.streamed)
		cg_line(&k, "aicm_stream_fence();   /* the streamed stores reach memory before the "
		    "caller reads */");
	if (heap)
		cg_line(&k, "free(heap);");
	strbuf_puts(o, "}\n");
	if (f->has_init) {
		char v[64];
		DType dt = nd->type.dt;

		if (dt == DT_F64 || dt == DT_F32)
			snprintf(v, sizeof v, "%.17g", f->init);
		else
			snprintf(v, sizeof v, "%" PRId64, tile_num(f->init).i);
		if (f->init != f->init)
			snprintf(v, sizeof v, "NAN");
		else if (f->init > 1e308 || f->init < -1e308)
			snprintf(v, sizeof v, "%sINFINITY", f->init < 0 ? "-" : "");
		strbuf_printf(o, "\n/* @%s's result starts at init=%s (its programs combine atomically) "
		    "*/\nstatic void\n%s_init%d(const %s_args *a)\n{\n"
		    "\tfor (long i = 0; i < %" PRId64 "; i++)\n\t\ta->%s[i] = (%s)%s;\n}\n", f->name, v,
		    m->name, kidx, m->name, ir_type_numel(&nd->type), m->field[node],
		    cg_ctype(dt), v);
	}
	free(k.sh);
	free(k.heap);
	free(k.nuse);
	free(k.reg);
	free(k.inplace);
	free(k.vstr);
	free(k.chain);
	free(k.alias);
	free(k.fold);
	free(k.keep);
	return rc;
}

static const char grid_runner[] =
    "\n/* Programs 0..n-1 of a kernel, over threads when built with -pthread. */\n"
    "typedef void N_kernel_fn(const N_args *a, long lo, long hi);\n"
    "\n"
    "#ifdef AICM_THREADS\n"
    "typedef struct N_part {\n"
    "\tN_kernel_fn *fn;\n"
    "\tconst N_args *a;\n"
    "\tlong lo, hi;\n"
    "} N_part;\n"
    "\n"
    "static void *\n"
    "N_part_run(void *p)\n"
    "{\n"
    "\tN_part *q = p;\n"
    "\n"
    "\tq->fn(q->a, q->lo, q->hi);\n"
    "\treturn NULL;\n"
    "}\n"
    "#endif\n"
    "\n"
    "static void\n"
    "N_grid(N_kernel_fn *fn, const N_args *a, long n, int threads)\n"
    "{\n"
    "#ifdef AICM_THREADS\n"
    "\tif (threads > 64)\n"
    "\t\tthreads = 64;\n"
    "\tif (threads > n)\n"
    "\t\tthreads = (int)n;\n"
    "\tif (threads > 1) {\n"
    "\t\tN_part part[64];\n"
    "\t\tpthread_t th[64];\n"
    "\t\tint started[64] = {0};\n"
    "\n"
    "\t\tfor (int t = 0; t < threads; t++) {\n"
    "\t\t\tpart[t].fn = fn;\n"
    "\t\t\tpart[t].a = a;\n"
    "\t\t\tpart[t].lo = n * t / threads;\n"
    "\t\t\tpart[t].hi = n * (t + 1) / threads;\n"
    "\t\t}\n"
    "\t\tfor (int t = 1; t < threads; t++)\n"
    "\t\t\tstarted[t] = pthread_create(&th[t], NULL, N_part_run, &part[t]) == 0;\n"
    "\t\tfn(a, part[0].lo, part[0].hi);\n"
    "\t\tfor (int t = 1; t < threads; t++) {\n"
    "\t\t\tif (started[t])\n"
    "\t\t\t\tpthread_join(th[t], NULL);\n"
    "\t\t\telse\n"
    "\t\t\t\tfn(a, part[t].lo, part[t].hi);   /* no thread: run its part here */\n"
    "\t\t}\n"
    "\t\treturn;\n"
    "\t}\n"
    "#endif\n"
    "\t(void)threads;\n"
    "\tfn(a, 0, n);\n"
    "}\n";

/* Whether f's programs may be split between threads by rows of its grid
 * (axis 0) although it has atomics: every atomic's index reads no scalar
 * but program_id axis 0, and along some dim it steps by at least the
 * tile's extent per program id, so programs of two rows never add into
 * one element, and one thread, taking whole rows, adds in program order
 * within each.  Views (strides of their own) are refused: a broadcast
 * view maps two indices to one element. */
static bool
row_split(const Graph *g, int node)
{
	const TileFn *f = g->nodes[node].tile;
	bool any = false;

	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		const TileVal *tv;
		Type buf;
		const Type *t;
		bool apart = false;

		if (in->op != TO_ATOMIC_ADD && in->op != TO_ATOMIC_MAX)
			continue;
		any = true;
		if (in->vstr)
			return false;
		t = tile_target_type(g, &g->nodes[node], in, &buf);
		tv = &f->vals[in->in[0]];
		for (int q = 0; q < in->nidx; q++) {
			const TileIdx *x = &in->idx[q];
			int d = q - (t->rank - tv->rank);
			int64_t ext = d >= 0 && tv->rank > 0 ? tv->shape[d] : 1;

			for (int j = 0; j < x->nterm; j++) {
				int def = f->vals[x->val[j]].def;

				if (def < 0 || f->insts[def].op != TO_PROGRAM_ID || f->insts[def].axis != 0)
					return false;
			}
			if (x->nterm == 1 && (x->coef[0] >= ext || x->coef[0] <= -ext))
				apart = true;
		}
		if (!apart)
			return false;
	}
	return any;
}

/* An integer division by zero (emit_c_ops.c's divz_check) */
void
cg_use_divz(const CgKernel *k)
{
	k->use->divz = true;
}

/* The run's error, the same on any number of threads and the tile
 * engine's (tile_run.c's run_kernel): a division by zero before a gather
 * out of range; of each, the lowest program's (its grid id, row-major);
 * of a program's divisions, the lowest instruction; of its gathers, the
 * first met.  Each failing lane merges under one lock, on this error path
 * only (C11's atomic_flag: no -pthread needed, as aicm-run's own threads
 * run the kernels). */
static const char err_lock[] =
    "\n/* The error path's lock: a failing lane merges its error under it. */\n"
    "static atomic_flag N_aicm_lock = ATOMIC_FLAG_INIT;\n";

static const char divz_fail[] =
    "\n/* The program of N_aicm_bad's division by zero (when it is 2 + one). */\n"
    "long N_aicm_bad_prog;\n"
    "\n"
    "static void\n"
    "N_aicm_divz_fail(long prog, int inst)\n"
    "{\n"
    "\twhile (atomic_flag_test_and_set(&N_aicm_lock))\n"
    "\t\t;\n"
    "\tif (N_aicm_bad < 2 || prog < N_aicm_bad_prog ||\n"
    "\t    (prog == N_aicm_bad_prog && 2 + inst < N_aicm_bad)) {\n"
    "\t\tN_aicm_bad = 2 + inst;\n"
    "\t\tN_aicm_bad_prog = prog;\n"
    "\t}\n"
    "\tatomic_flag_clear(&N_aicm_lock);\n"
    "}\n";

static const char gather_fail[] =
    "\n/* The first gather index out of range of the lowest program that met one:\n"
    " * [0] its program (-1: none), [1] its tile instruction, [2] the index,\n"
    " * [3] its flat place in its indices tensor (-1: not read from one). */\n"
    "int64_t N_aicm_gather[4] = {-1};\n"
    "\n"
    "static void\n"
    "N_aicm_gather_fail(long prog, int inst, int64_t v, int64_t at)\n"
    "{\n"
    "\twhile (atomic_flag_test_and_set(&N_aicm_lock))\n"
    "\t\t;\n"
    "\tif (N_aicm_gather[0] < 0 || prog < N_aicm_gather[0]) {\n"
    "\t\tN_aicm_gather[0] = prog;\n"
    "\t\tN_aicm_gather[1] = inst;\n"
    "\t\tN_aicm_gather[2] = v;\n"
    "\t\tN_aicm_gather[3] = at;\n"
    "\t}\n"
    "\tif (!N_aicm_bad)   /* a division by zero goes first */\n"
    "\t\tN_aicm_bad = 1;\n"
    "\tatomic_flag_clear(&N_aicm_lock);\n"
    "}\n";

/* text with every "N_" replaced by name_ */
static void
put_named(StrBuf *o, const char *text, const char *name)
{
	for (const char *p = text; *p;) {
		if (p[0] == 'N' && p[1] == '_' && (p == text || !isalnum((unsigned char)p[-1]))) {
			strbuf_puts(o, name);
			p++;
			continue;
		}
		strbuf_putc(o, *p++);
	}
}

int
codegen_c(const Graph *g, const char *name, const char *hname, StrBuf *c, StrBuf *h, Diag *d)
{
	Mod m = {0};
	CgUses use = {0};   /* what the kernels call: written once, before them */
	StrBuf body = {0}, hdr = {0};
	char *text = ir_print_str(g, NULL);
	int nk = 0, rc = 0;
	int *knode = xcalloc((size_t)g->nnodes + 1, sizeof *knode);

	m.g = g;
	m.name = name;
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (n->op == OP_TILED) {
			knode[nk++] = i;
			continue;
		}
		if (ir_ops[n->op].cls != OC_SOURCE) {
			diag_error(d, n->loc, "'%%%s' is not lowered; the C emitter writes tiled kernels "
			    "only (run lower-tiled)", n->name);
			rc = -1;
		}
	}
	if (rc) {
		free(text);
		free(knode);
		return -1;
	}
	plan_fields(&m);
	/* only a module with a gather carries the record of its bad index */
	bool gathers = false;

	for (int q = 0; q < nk; q++) {
		const TileFn *f = g->nodes[knode[q]].tile;

		for (int i = 0; i < f->ninsts; i++)
			gathers |= f->insts[i].op == TO_LOAD_GATHER;
	}
	for (int q = 0; q < nk && rc == 0; q++) {
		char **line = tile_lines(text, &g->nodes[knode[q]]);

		rc = emit_kernel(&m, &use, knode[q], q, line, &body, d);
		for (int i = 0; i < g->nodes[knode[q]].tile->ninsts; i++)
			free(line[i]);
		free(line);
	}
	if (rc == 0) {
		emit_header(&m, &hdr);
		strbuf_printf(c, "/*\n * The C that aicm-opt --emit=c wrote for graph '%s' "
		    "(docs/codegen.md):\n * one %s_kernelK per tiled kernel, running programs lo..hi-1 "
		    "of its grid,\n * and %s_run, which runs them in order.  Each statement carries the "
		    "tile-IR\n * line it comes from.  Generated: do not edit.\n */\n", name, name, name);
		strbuf_puts(c, "#if defined(_REENTRANT) && !defined(AICM_NO_THREADS)\n"
		    "#define AICM_THREADS 1\n#include <pthread.h>\n#endif\n");
		strbuf_puts(c, "#include <math.h>\n");
		if (gathers || use.divz)
			strbuf_puts(c, "#include <stdatomic.h>\n");
		strbuf_puts(c, "#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n\n");
		if (hname) {
			strbuf_printf(c, "#include \"%s\"\n\n", hname);
			strbuf_puts(h, hdr.s);
		} else {
			strbuf_puts(c, hdr.s);
			strbuf_putc(c, '\n');
		}
		strbuf_puts(c, prelude);
		strbuf_printf(c, "\n/* Set when a gather's index is out of range (1) or an integer is "
		    "divided\n * by zero (2 + the tile instruction): %s_run fails. */\n"
		    "int %s_aicm_bad;\n", name, name);
		if (gathers || use.divz)
			put_named(c, err_lock, name);
		if (use.divz)
			put_named(c, divz_fail, name);
		if (gathers)
			put_named(c, gather_fail, name);
		emit_formulas(c, &use);
		if (body.s)   /* NULL when the graph has no kernel */
			strbuf_puts(c, body.s);
		put_named(c, grid_runner, name);
		for (int q = 0; q < nk; q++) {
			const TileFn *f = g->nodes[knode[q]].tile;

			if (f->has_init && row_split(g, knode[q]))
				strbuf_printf(c, "\n/* @%s by rows of its grid: its atomics add into each row's "
				    "own elements,\n * so threads may own whole rows (rows lo..hi-1) */\n"
				    "static void\n%s_rows%d(const %s_args *a, long lo, long hi)\n{\n"
				    "\t%s_kernel%d(a, lo * %" PRId64 ", hi * %" PRId64 ");\n}\n", f->name,
				    name, q, name, name, q, f->grid[1] * f->grid[2], f->grid[1] * f->grid[2]);
		}
		/* NAME_run */
		strbuf_printf(c, "\nint\n%s_run(const %s_args *args, int threads)\n{\n\t%s_args a = "
		    "*args;\n\tvoid *own[%d] = {0};\n\tint rc = 0;\n\n\t%s_aicm_bad = 0;\n", name,
		    name, name, m.nfields + 1, name);
		if (gathers)
			strbuf_printf(c, "\t%s_aicm_gather[0] = -1;\n", name);
		bool owns = false;   /* out: only when a goto reaches it (-Wall) */
		bool stops = false;  /* done: likewise */

		for (int i = 0; i < m.nfields; i++) {
			const Node *nd = fnode(&m, i);

			if (i < m.nin + m.nconst + m.nout)
				continue;
			owns = true;
			strbuf_printf(c, "\tif (!a.%s) {   /* an intermediate */\n"
			    "\t\ta.%s = own[%d] = malloc(%" PRId64 " * sizeof *a.%s);\n"
			    "\t\tif (!a.%s) {\n\t\t\trc = -1;\n\t\t\tgoto out;\n\t\t}\n\t}\n",
			    fname(&m, i), fname(&m, i), i, ir_type_numel(&nd->type) ?
			    ir_type_numel(&nd->type) : 1, fname(&m, i), fname(&m, i));
		}
		for (int q = 0; q < nk; q++) {
			const TileFn *f = g->nodes[knode[q]].tile;
			int64_t np = f->grid[0] * f->grid[1] * f->grid[2];
			bool serial = f->has_init;

			strbuf_printf(c, "\t/* @%s */\n", f->name);
			if (f->has_init)
				strbuf_printf(c, "\t%s_init%d(&a);\n", name, q);
			if (serial && row_split(g, knode[q]))
				strbuf_printf(c, "\t%s_grid(%s_rows%d, &a, %" PRId64 ", threads);\n", name,
				    name, q, f->grid[0]);
			else
				strbuf_printf(c, "\t%s_grid(%s_kernel%d, &a, %" PRId64 ", %s);\n", name, name,
				    q, np, serial ? "1   /* atomics: programs in order */" : "threads");
			/* the first kernel that fails ends the run with its error, as
			 * the native engine's driver does: a later kernel would read
			 * what this one left unwritten, and its own error (a division
			 * by zero) would replace the first */
			if ((gathers || use.divz) && q + 1 < nk) {
				strbuf_printf(c, "\tif (%s_aicm_bad)\n\t\tgoto done;\n", name);
				stops = true;
			}
		}
		for (int i = 0; i < m.nfields; i++)
			if (m.fnode[i] < 0) {
				const Node *nd = fnode(&m, i);

				strbuf_printf(c, "\tmemcpy(a.%s, a.%s, %" PRId64 " * sizeof *a.%s);\n",
				    fname(&m, i), m.field[-1 - m.fnode[i]], ir_type_numel(&nd->type),
				    fname(&m, i));
			}
		strbuf_printf(c, "%s\tif (%s_aicm_bad)\n\t\trc = %s_aicm_bad == 1 ? -2 : -3;\n%s\tfor "
		    "(int i = 0; i < %d; i++)\n\t\tfree(own[i]);\n\treturn rc;\n}\n",
		    stops ? "done:\n" : "", name, name, owns ? "out:\n" : "", m.nfields + 1);
		/* the descriptor */
		strbuf_printf(c, "\n/* For aicm-run --engine=native: the fields in order (each field's "
		    "graph\n * node; -1 - node: a source copied to an output), the kernels' program\n"
		    " * counts, which have atomics (an init; programs in order on one thread,\n"
		    " * unless rows gives the programs per grid row that threads may own\n"
		    " * whole), and a kernel's programs lo..hi-1 on fields given as\n"
		    " * pointers. */\nconst int %s_aicm_nfields = %d;\n"
		    "const int %s_aicm_field_node[] = {", name, m.nfields, name);
		for (int i = 0; i < m.nfields; i++)
			strbuf_printf(c, "%s%d", i ? ", " : "", m.fnode[i]);
		strbuf_printf(c, "%s};\nconst int %s_aicm_nkernels = %d;\nconst long "
		    "%s_aicm_programs[] = {", m.nfields ? "" : "0", name, nk, name);
		for (int q = 0; q < nk; q++) {
			const TileFn *f = g->nodes[knode[q]].tile;

			strbuf_printf(c, "%s%" PRId64, q ? ", " : "", f->grid[0] * f->grid[1] *
			    f->grid[2]);
		}
		strbuf_printf(c, "%s};\nconst int %s_aicm_serial[] = {", nk ? "" : "0", name);
		for (int q = 0; q < nk; q++)
			strbuf_printf(c, "%s%d", q ? ", " : "", g->nodes[knode[q]].tile->has_init);
		strbuf_printf(c, "%s};\nconst long %s_aicm_rows[] = {", nk ? "" : "0", name);
		for (int q = 0; q < nk; q++) {
			const TileFn *f = g->nodes[knode[q]].tile;

			strbuf_printf(c, "%s%" PRId64, q ? ", " : "", f->has_init && row_split(g, knode[q])
			    ? f->grid[1] * f->grid[2] : 0);
		}
		strbuf_printf(c, "%s};\n\nvoid %s_aicm_kernel(int k, void *const *f, long lo, long hi);"
		    "\n\nvoid\n%s_aicm_kernel(int k, void *const *f, long lo, long hi)\n{\n"
		    "\t%s_args a;\n\n", nk ? "" : "0", name, name, name);
		for (int i = 0; i < m.nfields; i++) {
			const Node *nd = fnode(&m, i);

			strbuf_printf(c, "\ta.%s = (%s%s *)f[%d];\n", fname(&m, i),
			    i < m.nin + m.nconst ? "const " : "", cg_ctype(nd->type.dt), i);
		}
		strbuf_puts(c, "\tswitch (k) {\n");
		for (int q = 0; q < nk; q++) {
			strbuf_printf(c, "\tcase %d:\n", q);
			if (g->nodes[knode[q]].tile->has_init)
				strbuf_printf(c, "\t\tif (lo < 0) {   /* the init */\n\t\t\t%s_init%d(&a);\n"
				    "\t\t\tbreak;\n\t\t}\n", name, q);
			strbuf_printf(c, "\t\t%s_kernel%d(&a, lo, hi);\n\t\tbreak;\n", name, q);
		}
		strbuf_puts(c, "\t}\n}\n");
	}
	free(body.s);
	free(hdr.s);
	free(text);
	free(knode);
	for (int i = 0; i < m.nfields; i++)
		free(m.field[g->nnodes + i]);
	free(m.field);
	free(m.fnode);
	free(m.copyout);
	free(m.outs);
	return rc;
}
