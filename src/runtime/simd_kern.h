/*
 * simd_kern.h: simd.c's kernels written once, for one element type.
 *
 * simd.c includes this file twice, after defining the element type and
 * the names that differ between doubles and floats; each inclusion
 * instantiates every kernel below and its entry point in simd.h for that
 * type, and the file #undefs those names at its end so that the next
 * inclusion can define them again.  Everything a kernel knows about its
 * type is a compile-time constant (lanes a vector, the full mask, K_F32),
 * so each instance compiles to the code a hand-written copy would.
 *
 *   T                 the element type (double, float)
 *   K_F32             1 for float, 0 for double: the rules that differ by
 *                     type (simd.c's design paragraph): on AVX-512 floats
 *                     end in a masked last vector and doubles in a scalar
 *                     tail; binary's loops; the max lanes' order
 *   KN(name, sfx)     a kernel's name: name_sfx, or name_f32_sfx for floats
 *   KP(name)          an entry point's name: simd_name, simd_name_f32
 *   KS(name)          scalar.h's formula function of T: ir_scalar_name,
 *                     ir_scalar_name_f32 (the scalar tails compute with it)
 *   V512, M512        the zmm vector and its mask type (__m512d/__mmask8...)
 *   ALL512            the M512 mask of every lane (0xff, 0xffff)
 *   P512(op)          the AVX-512 intrinsic of op for T (_mm512_op_pd/_ps)
 *   CMP512            the AVX-512 compare into a mask
 *   WIDEN512(p)       8 elements at p as an __m512d (sums run in doubles)
 *   V256, P256(op)    the same for AVX2 (__m256d, _mm256_op_pd/_ps)
 *   WIDEN256(p)       4 elements at p as an __m256d
 *   B256(p)           broadcast *p to every lane of a V256
 *   ALL256            the V256 maskload mask of every lane
 *   TAIL256(w, nv)    the maskload mask of the last of nv vectors holding
 *                     the w columns of a dot block
 *
 * simd.c defines before the first inclusion what both share: sum_tree,
 * prefetch_next_rows, AHEAD, the target attributes (A512, T512, ...) and
 * PICK_IN/PICKR_IN, the run-time dispatch.  Lanes per vector (L512,
 * L256) and elements per cache line follow from sizeof(T).
 */

/* ---- portable -------------------------------------------------------- */

static void
KN(dot, portable)(int64_t M, int64_t N, int64_t K, const T *a, int64_t lda, const T *b,
    int64_t ldb, const T *c, T *o, int64_t ldc)
{
	for (int64_t i = 0; i < M; i++) {
		T *row = o + i * ldc;

		if (!c)
			memset(row, 0, sizeof(T) * (size_t)N);
		else if (row != c + i * ldc)
			memcpy(row, c + i * ldc, sizeof(T) * (size_t)N);
		for (int64_t k = 0; k < K; k++) {
			T av = a[i * lda + k];
			const T *br = b + k * ldb;

			for (int64_t j = 0; j < N; j++)
				row[j] += av * br[j];
		}
	}
}

static T
KN(max, combine)(T acc, T v)
{
	return KS(combine)(OP_MAX, acc, v);   /* NaN wins, as np.max */
}

/* A float op is the rounded double op (a double holds the exact sum,
 * difference or product of two floats, and double rounding of a quotient
 * through double is innocuous), so float arithmetic gives the contract's
 * results directly. */
static void
KN(binary, portable)(SimdOp op, int64_t n, const T *a, int as, const T *b, int bs, T *o)
{
#define L(expr) for (int64_t i = 0; i < n; i++) { T x = a[i * as], y = b[i * bs]; o[i] = (expr); } break;
	switch (op) {
	case SIMD_ADD: L(KS(binary)(OP_ADD, x, y))
	case SIMD_SUB: L(KS(binary)(OP_SUB, x, y))
	case SIMD_MUL: L(KS(binary)(OP_MUL, x, y))
	case SIMD_DIV: L(KS(binary)(OP_DIV, x, y))
	case SIMD_MAXIMUM: L(KS(binary)(OP_MAXIMUM, x, y))
	case SIMD_MINIMUM: L(KS(binary)(OP_MINIMUM, x, y))
	case SIMD_OP_COUNT: break;
	}
#undef L
}

/* sum_tree's order, floats widened to double first: every path agrees. */
static double
KN(sum, portable)(int64_t n, const T *x)
{
	double l[16] = {0};

	for (int64_t i = 0; i < n; i++)
		l[i % 16] += x[i];
	return sum_tree(l);
}

static T
KN(max, portable)(int64_t n, const T *x)
{
	T m = -INFINITY;

	for (int64_t i = 0; i < n; i++)
		m = KN(max, combine)(m, x[i]);
	return m;
}

#if SIMD_X86
#define L512 ((int)(64 / sizeof(T)))
#define L256 ((int)(32 / sizeof(T)))
#define LINE ((int64_t)(64 / sizeof(T)))

/* ---- AVX-512 dot ----------------------------------------------------- */

/* One MR×(L512·NV) block; the last vector is masked by lm if tail (a
 * compile-time constant: full blocks run no masked loads or stores).
 * Prefetches the next row block's a once a cache line of k. */
T512 void
KN(blk, avx512)(int mr, int nv, bool tail, M512 lm, int64_t K, const T *a, int64_t lda,
    const T *b, int64_t ldb, const T *c, T *o, int64_t ldc)
{
	V512 acc[6][4];

	_Pragma("GCC unroll 8")
	for (int r = 0; r < mr; r++)
		_Pragma("GCC unroll 8")
		for (int v = 0; v < nv; v++)
			acc[r][v] = c ? P512(maskz_loadu)(tail && v == nv - 1 ? lm : ALL512,
			    c + r * ldc + L512 * v) : P512(setzero)();
	for (int64_t k = 0; k < K; k++) {
		V512 bv[4];

		if ((k & (LINE - 1)) == 0)
			prefetch_next_rows(a + k, lda * (int64_t)sizeof *a);
		_Pragma("GCC unroll 8")
		for (int v = 0; v < nv; v++)
			bv[v] = P512(maskz_loadu)(tail && v == nv - 1 ? lm : ALL512, b + k * ldb + L512 * v);
		_Pragma("GCC unroll 8")
		for (int r = 0; r < mr; r++) {
			V512 av = P512(set1)(a[r * lda + k]);

			_Pragma("GCC unroll 8")
			for (int v = 0; v < nv; v++)
				acc[r][v] = P512(fmadd)(av, bv[v], acc[r][v]);
		}
	}
	_Pragma("GCC unroll 8")
	for (int r = 0; r < mr; r++)
		_Pragma("GCC unroll 8")
		for (int v = 0; v < nv; v++)
			P512(mask_storeu)(o + r * ldc + L512 * v, tail && v == nv - 1 ? lm : ALL512,
			    acc[r][v]);
}

/* The instances: blk512_MR_NV (last vector masked) and blk512_MR_NVf
 * (full), and blk512_tab[full][mr - 1][nv - 1] of them. */
#define BLK512(MR, NV) \
	__attribute__((target("avx512f"), noinline)) static void \
	KN(blk512, MR##_##NV)(M512 lm, int64_t K, const T *a, int64_t lda, \
	    const T *b, int64_t ldb, const T *c, T *o, int64_t ldc) \
	{ KN(blk, avx512)(MR, NV, true, lm, K, a, lda, b, ldb, c, o, ldc); } \
	__attribute__((target("avx512f"), noinline)) static void \
	KN(blk512, MR##_##NV##f)(M512 lm, int64_t K, const T *a, int64_t lda, \
	    const T *b, int64_t ldb, const T *c, T *o, int64_t ldc) \
	{ KN(blk, avx512)(MR, NV, false, lm, K, a, lda, b, ldb, c, o, ldc); }
#define BLK512_ROW(MR) BLK512(MR, 1) BLK512(MR, 2) BLK512(MR, 3) BLK512(MR, 4)
BLK512_ROW(1) BLK512_ROW(2) BLK512_ROW(3) BLK512_ROW(4) BLK512_ROW(5) BLK512_ROW(6)

typedef void KN(Blk, avx512)(M512, int64_t, const T *, int64_t, const T *, int64_t,
    const T *, T *, int64_t);

#define BLK512_PTRS(MR, F) \
	{KN(blk512, MR##_1##F), KN(blk512, MR##_2##F), KN(blk512, MR##_3##F), KN(blk512, MR##_4##F)}
#define BLK512_TAB(F) { \
	BLK512_PTRS(1, F), BLK512_PTRS(2, F), BLK512_PTRS(3, F), BLK512_PTRS(4, F), \
	BLK512_PTRS(5, F), BLK512_PTRS(6, F) }
static KN(Blk, avx512) *const KN(blk512, tab)[2][6][4] = {BLK512_TAB(), BLK512_TAB(f)};

/* Doubles walk row blocks outer (simd.c's design paragraph says why);
 * floats walk their 64-wide column panels outer, as they always have: a
 * tile of up to 64 columns has one panel, where the two orders agree. */
static void
KN(dot, avx512)(int64_t M, int64_t N, int64_t K, const T *a, int64_t lda, const T *b,
    int64_t ldb, const T *c, T *o, int64_t ldc)
{
#define DOT512_COLS \
	int64_t w = N - j < 4 * L512 ? N - j : 4 * L512; \
	int nv = (int)((w + L512 - 1) / L512); \
	M512 lm = (M512)(w % L512 ? (1u << (w % L512)) - 1 : ALL512);
/* Row blocks of 6; the last 7 or 8 rows as two blocks of 4 and 3 or 4,
 * not 6 and a block of 1 or 2, whose few accumulators leave the FMA
 * units waiting (M = 128: 21 blocks of 6 and one of 2 before).  Each
 * element's sum runs over k in the same order whatever its block. */
#define DOT512_ROWS mr = M - i < 6 ? (int)(M - i) : M - i == 7 || M - i == 8 ? 4 : 6;
#define DOT512_CALL \
	KN(blk512, tab)[w % L512 == 0][mr - 1][nv - 1](lm, K, a + i * lda, lda, b + j, ldb, \
	    c ? c + i * ldc + j : NULL, o + i * ldc + j, ldc);
	int mr;

#if K_F32
	for (int64_t j = 0; j < N; j += 4 * L512) {
		DOT512_COLS
		for (int64_t i = 0; i < M; i += mr) {
			DOT512_ROWS
			DOT512_CALL
		}
	}
#else
	for (int64_t i = 0; i < M; i += mr) {
		DOT512_ROWS
		for (int64_t j = 0; j < N; j += 4 * L512) {
			DOT512_COLS
			DOT512_CALL
		}
	}
#endif
#undef DOT512_COLS
#undef DOT512_ROWS
#undef DOT512_CALL
}

/* ---- AVX-512 elementwise and reductions ------------------------------ */

/* The lanes below n of the L512 from i: a masked last vector. */
A512 static inline M512
KN(tail, avx512)(int64_t n, int64_t i)
{
	return n - i >= L512 ? ALL512 : (M512)((1u << (n - i)) - 1);
}

/* One op on a vector, with simd.h's NaN rules. */
A512 static inline V512
KN(vbin, avx512)(SimdOp op, V512 x, V512 y)
{
	V512 r;

	switch (op) {
	case SIMD_ADD: return P512(add)(x, y);
	case SIMD_SUB: return P512(sub)(x, y);
	case SIMD_MUL: return P512(mul)(x, y);
	case SIMD_DIV: return P512(div)(x, y);
	case SIMD_MAXIMUM:
		/* max(y, x) is y > x ? y : x, x if either is NaN; the mask a NaN y */
		r = P512(max)(y, x);
		return P512(mask_mov)(r, CMP512(y, y, _CMP_UNORD_Q) & CMP512(x, x, _CMP_ORD_Q), y);
	case SIMD_MINIMUM:
		r = P512(min)(y, x);
		return P512(mask_mov)(r, CMP512(y, y, _CMP_UNORD_Q) & CMP512(x, x, _CMP_ORD_Q), y);
	default: return x;
	}
}

/* Floats: one loop per stride pattern, then a masked last vector;
 * doubles: one loop, then the scalar tail.  Inlined into binary_avx512
 * once per op, so that op is a constant in each copy of the loops (a
 * jump through vbin's switch per vector was most of a short row's
 * time); the prefetches ahead only on a run long enough to stream. */
T512 void
KN(binary_op, avx512)(SimdOp op, int64_t n, const T *a, int as, const T *b, int bs, T *o)
{
	V512 sa = P512(set1)(a[0]), sb = P512(set1)(b[0]);
	int64_t i = 0;
	bool pf = n * (int64_t)sizeof(T) > AHEAD_BYTES;

#if K_F32
	if (as && bs)
		for (; i + L512 <= n; i += L512) {
			if (pf) {
				AHEAD(a + i);
				AHEAD(b + i);
			}
			P512(storeu)(o + i, KN(vbin, avx512)(op, P512(loadu)(a + i), P512(loadu)(b + i)));
		}
	else if (as)
		for (; i + L512 <= n; i += L512) {
			if (pf)
				AHEAD(a + i);
			P512(storeu)(o + i, KN(vbin, avx512)(op, P512(loadu)(a + i), sb));
		}
	else if (bs)
		for (; i + L512 <= n; i += L512) {
			if (pf)
				AHEAD(b + i);
			P512(storeu)(o + i, KN(vbin, avx512)(op, sa, P512(loadu)(b + i)));
		}
	else
		for (; i + L512 <= n; i += L512)
			P512(storeu)(o + i, KN(vbin, avx512)(op, sa, sb));
	if (i < n) {
		M512 m = KN(tail, avx512)(n, i);

		P512(mask_storeu)(o + i, m, KN(vbin, avx512)(op, as ? P512(maskz_loadu)(m, a + i) : sa,
		    bs ? P512(maskz_loadu)(m, b + i) : sb));
	}
#else
	for (; i + L512 <= n; i += L512) {
		V512 x = as ? P512(loadu)(a + i) : sa, y = bs ? P512(loadu)(b + i) : sb;

		if (as && pf)
			AHEAD(a + i);
		if (bs && pf)
			AHEAD(b + i);
		P512(storeu)(o + i, KN(vbin, avx512)(op, x, y));
	}
	if (i < n)
		KN(binary, portable)(op, n - i, a + i * as, as, b + i * bs, bs, o + i);
#endif
}

A512 static void
KN(binary, avx512)(SimdOp op, int64_t n, const T *a, int as, const T *b, int bs, T *o)
{
	switch (op) {
	case SIMD_ADD: KN(binary_op, avx512)(SIMD_ADD, n, a, as, b, bs, o); break;
	case SIMD_SUB: KN(binary_op, avx512)(SIMD_SUB, n, a, as, b, bs, o); break;
	case SIMD_MUL: KN(binary_op, avx512)(SIMD_MUL, n, a, as, b, bs, o); break;
	case SIMD_DIV: KN(binary_op, avx512)(SIMD_DIV, n, a, as, b, bs, o); break;
	case SIMD_MAXIMUM: KN(binary_op, avx512)(SIMD_MAXIMUM, n, a, as, b, bs, o); break;
	case SIMD_MINIMUM: KN(binary_op, avx512)(SIMD_MINIMUM, n, a, as, b, bs, o); break;
	default: KN(binary_op, avx512)(op, n, a, as, b, bs, o); break;
	}
}

A512 static inline V512
KN(vrelu, avx512)(V512 v)
{
	/* not (v <= 0), unordered true: v > 0 or NaN keeps v */
	return P512(maskz_mov)(CMP512(v, P512(setzero)(), _CMP_NLE_UQ), v);
}

A512 static void
KN(relu, avx512)(int64_t n, const T *x, T *o)
{
	int64_t i = 0;

	for (; i + L512 <= n; i += L512) {
		V512 v = P512(loadu)(x + i);

		AHEAD(x + i);
		P512(storeu)(o + i, KN(vrelu, avx512)(v));
	}
	if (!K_F32)
		for (; i < n; i++)
			o[i] = KS(unary)(OP_RELU, x[i]);
	else if (i < n) {
		M512 m = KN(tail, avx512)(n, i);

		P512(mask_storeu)(o + i, m, KN(vrelu, avx512)(P512(maskz_loadu)(m, x + i)));
	}
}

/* IEEE's square root, correctly rounded in T: the scalar formula's
 * bits (a float's root through double rounds to the same float). */
A512 static void
KN(sqrt, avx512)(int64_t n, const T *x, T *o)
{
	int64_t i = 0;

	for (; i + L512 <= n; i += L512)
		P512(storeu)(o + i, P512(sqrt)(P512(loadu)(x + i)));
	if (!K_F32)
		for (; i < n; i++)
			o[i] = KS(unary)(OP_SQRT, x[i]);
	else if (i < n) {
		M512 m = KN(tail, avx512)(n, i);

		P512(mask_storeu)(o + i, m, P512(sqrt)(P512(maskz_loadu)(m, x + i)));
	}
}

/* sum_tree's order: lanes 0-7 and 8-15 of each 16, in f64 lanes. */
A512 static double
KN(sum, avx512)(int64_t n, const T *x)
{
	__m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
	double l[16];
	int64_t i = 0;

	for (; i + 16 <= n; i += 16) {
		AHEAD(x + i);
		if (16 * sizeof(T) > 64)         /* doubles: a second line */
			AHEAD(x + i + 8);
		s0 = _mm512_add_pd(s0, WIDEN512(x + i));
		s1 = _mm512_add_pd(s1, WIDEN512(x + i + 8));
	}
	_mm512_storeu_pd(l, s0);
	_mm512_storeu_pd(l + 8, s1);
	for (; i < n; i++)
		l[i % 16] += x[i];
	return sum_tree(l);
}

/* The lanes keep their running max against an equal value (-0 against
 * +0), as the reference does (max(v, m) returns m on a tie); then a NaN
 * anywhere sends the whole row to max_portable. */
A512 static T
KN(max, avx512)(int64_t n, const T *x)
{
	V512 m = P512(set1)(-INFINITY);
	M512 nan = 0;
	int64_t i = 0;
	T r;

	for (; i + L512 <= n; i += L512) {
		V512 v = P512(loadu)(x + i);

		AHEAD(x + i);
		nan |= CMP512(v, v, _CMP_UNORD_Q);
		m = P512(max)(v, m);
	}
	if (K_F32 && i < n) {
		V512 v = P512(mask_loadu)(m, KN(tail, avx512)(n, i), x + i);   /* masked lanes: m */

		nan |= CMP512(v, v, _CMP_UNORD_Q);
		m = P512(max)(v, m);
	}
	if (nan)
		return KN(max, portable)(n, x);   /* the first NaN, as the reference */
	r = P512(reduce_max)(m);
	if (!K_F32)
		for (; i < n; i++)
			r = KN(max, combine)(r, x[i]);
	return r;
}

A512 static void
KN(acc_sum, avx512)(int64_t n, const T *x, T *o)
{
	int64_t i = 0;

	for (; i + L512 <= n; i += L512)
		P512(storeu)(o + i, P512(add)(P512(loadu)(o + i), P512(loadu)(x + i)));
	if (!K_F32)
		for (; i < n; i++)
			o[i] = KS(combine)(OP_SUM, o[i], x[i]);
	else if (i < n) {
		M512 m = KN(tail, avx512)(n, i);

		P512(mask_storeu)(o + i, m, P512(add)(P512(maskz_loadu)(m, o + i),
		    P512(maskz_loadu)(m, x + i)));
	}
}

/* max(p, v) with a NaN v winning: max(v, p) keeps a NaN p, the mask a
 * NaN v. */
A512 static inline V512
KN(vaccmax, avx512)(V512 p, V512 v)
{
	return P512(mask_mov)(P512(max)(v, p), CMP512(v, v, _CMP_UNORD_Q), v);
}

A512 static void
KN(acc_max, avx512)(int64_t n, const T *x, T *o)
{
	int64_t i = 0;

	for (; i + L512 <= n; i += L512)
		P512(storeu)(o + i, KN(vaccmax, avx512)(P512(loadu)(o + i), P512(loadu)(x + i)));
	if (!K_F32)
		for (; i < n; i++)
			o[i] = KN(max, combine)(o[i], x[i]);
	else if (i < n) {
		M512 m = KN(tail, avx512)(n, i);

		P512(mask_storeu)(o + i, m, KN(vaccmax, avx512)(P512(maskz_loadu)(m, o + i),
		    P512(maskz_loadu)(m, x + i)));
	}
}

/* ---- AVX2 dot -------------------------------------------------------- */

/* One MR×(L256·NV) block, the last vector masked by lm (all lanes for a
 * full block). */
T256 void
KN(blk, avx2)(int mr, int nv, __m256i lm, int64_t K, const T *a, int64_t lda,
    const T *b, int64_t ldb, const T *c, T *o, int64_t ldc)
{
	V256 acc[6][2];

	_Pragma("GCC unroll 8")
	for (int r = 0; r < mr; r++)
		_Pragma("GCC unroll 8")
		for (int v = 0; v < nv; v++)
			acc[r][v] = c ? P256(maskload)(c + r * ldc + L256 * v, v == nv - 1 ? lm : ALL256) :
			    P256(setzero)();
	for (int64_t k = 0; k < K; k++) {
		V256 bv[2];

		if ((k & (LINE - 1)) == 0)
			prefetch_next_rows(a + k, lda * (int64_t)sizeof *a);
		_Pragma("GCC unroll 8")
		for (int v = 0; v < nv; v++)
			bv[v] = P256(maskload)(b + k * ldb + L256 * v, v == nv - 1 ? lm : ALL256);
		_Pragma("GCC unroll 8")
		for (int r = 0; r < mr; r++) {
			V256 av = B256(a + r * lda + k);

			_Pragma("GCC unroll 8")
			for (int v = 0; v < nv; v++)
				acc[r][v] = P256(fmadd)(av, bv[v], acc[r][v]);
		}
	}
	_Pragma("GCC unroll 8")
	for (int r = 0; r < mr; r++)
		_Pragma("GCC unroll 8")
		for (int v = 0; v < nv; v++)
			P256(maskstore)(o + r * ldc + L256 * v, v == nv - 1 ? lm : ALL256, acc[r][v]);
}

#define BLK256(MR, NV) \
	__attribute__((target("avx2,fma"), noinline)) static void \
	KN(blk256, MR##_##NV)(__m256i lm, int64_t K, const T *a, int64_t lda, \
	    const T *b, int64_t ldb, const T *c, T *o, int64_t ldc) \
	{ KN(blk, avx2)(MR, NV, lm, K, a, lda, b, ldb, c, o, ldc); }
#define BLK256_ROW(MR) BLK256(MR, 1) BLK256(MR, 2)
BLK256_ROW(1) BLK256_ROW(2) BLK256_ROW(3) BLK256_ROW(4) BLK256_ROW(5) BLK256_ROW(6)

typedef void KN(Blk, avx2)(__m256i, int64_t, const T *, int64_t, const T *, int64_t,
    const T *, T *, int64_t);

#define BLK256_PTRS(MR) {KN(blk256, MR##_1), KN(blk256, MR##_2)}
static KN(Blk, avx2) *const KN(blk256, tab)[6][2] = {
	BLK256_PTRS(1), BLK256_PTRS(2), BLK256_PTRS(3), BLK256_PTRS(4), BLK256_PTRS(5),
	BLK256_PTRS(6),
};

A256 static void
KN(dot, avx2)(int64_t M, int64_t N, int64_t K, const T *a, int64_t lda, const T *b,
    int64_t ldb, const T *c, T *o, int64_t ldc)
{
	for (int64_t i = 0; i < M; i += 6) {
		int mr = M - i < 6 ? (int)(M - i) : 6;

		for (int64_t j = 0; j < N; j += 2 * L256) {
			int64_t w = N - j < 2 * L256 ? N - j : 2 * L256;
			int nv = (int)((w + L256 - 1) / L256);
			__m256i lm = TAIL256(w, nv);

			KN(blk256, tab)[mr - 1][nv - 1](lm, K, a + i * lda, lda, b + j, ldb,
			    c ? c + i * ldc + j : NULL, o + i * ldc + j, ldc);
		}
	}
}

/* ---- AVX2 elementwise and reductions (scalar tails) ------------------ */

A256 static void
KN(binary, avx2)(SimdOp op, int64_t n, const T *a, int as, const T *b, int bs, T *o)
{
	int64_t i = 0;
	V256 sa = P256(set1)(a[0]), sb = P256(set1)(b[0]);

	for (; i + L256 <= n; i += L256) {
		V256 x = as ? P256(loadu)(a + i) : sa, y = bs ? P256(loadu)(b + i) : sb, r;

		switch (op) {
		case SIMD_ADD: r = P256(add)(x, y); break;
		case SIMD_SUB: r = P256(sub)(x, y); break;
		case SIMD_MUL: r = P256(mul)(x, y); break;
		case SIMD_DIV: r = P256(div)(x, y); break;
		case SIMD_MAXIMUM:
			r = P256(blendv)(P256(max)(y, x), y, P256(and)(
			    P256(cmp)(y, y, _CMP_UNORD_Q), P256(cmp)(x, x, _CMP_ORD_Q)));
			break;
		case SIMD_MINIMUM:
			r = P256(blendv)(P256(min)(y, x), y, P256(and)(
			    P256(cmp)(y, y, _CMP_UNORD_Q), P256(cmp)(x, x, _CMP_ORD_Q)));
			break;
		default: r = x; break;
		}
		P256(storeu)(o + i, r);
	}
	if (i < n)
		KN(binary, portable)(op, n - i, a + i * as, as, b + i * bs, bs, o + i);
}

A256 static void
KN(relu, avx2)(int64_t n, const T *x, T *o)
{
	int64_t i = 0;
	V256 z = P256(setzero)();

	for (; i + L256 <= n; i += L256) {
		V256 v = P256(loadu)(x + i);

		P256(storeu)(o + i, P256(and)(P256(cmp)(v, z, _CMP_NLE_UQ), v));
	}
	for (; i < n; i++)
		o[i] = KS(unary)(OP_RELU, x[i]);
}

A256 static void
KN(sqrt, avx2)(int64_t n, const T *x, T *o)
{
	int64_t i = 0;

	for (; i + L256 <= n; i += L256)
		P256(storeu)(o + i, P256(sqrt)(P256(loadu)(x + i)));
	for (; i < n; i++)
		o[i] = KS(unary)(OP_SQRT, x[i]);
}

/* sum_tree's order: four f64 vectors of 4 lanes. */
A256 static double
KN(sum, avx2)(int64_t n, const T *x)
{
	__m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd(), s2 = _mm256_setzero_pd(),
	    s3 = _mm256_setzero_pd();
	double l[16];
	int64_t i = 0;

	for (; i + 16 <= n; i += 16) {
		s0 = _mm256_add_pd(s0, WIDEN256(x + i));
		s1 = _mm256_add_pd(s1, WIDEN256(x + i + 4));
		s2 = _mm256_add_pd(s2, WIDEN256(x + i + 8));
		s3 = _mm256_add_pd(s3, WIDEN256(x + i + 12));
	}
	_mm256_storeu_pd(l, s0);
	_mm256_storeu_pd(l + 4, s1);
	_mm256_storeu_pd(l + 8, s2);
	_mm256_storeu_pd(l + 12, s3);
	for (; i < n; i++)
		l[i % 16] += x[i];
	return sum_tree(l);
}

/* Equal lanes as in max_avx512. */
A256 static T
KN(max, avx2)(int64_t n, const T *x)
{
	V256 m = P256(set1)(-INFINITY), nan = P256(setzero)();
	T l[L256], r;
	int64_t i = 0;

	for (; i + L256 <= n; i += L256) {
		V256 v = P256(loadu)(x + i);

		nan = P256(or)(nan, P256(cmp)(v, v, _CMP_UNORD_Q));
		m = P256(max)(v, m);
	}
	if (P256(movemask)(nan))
		return KN(max, portable)(n, x);
	P256(storeu)(l, m);
	r = l[0];
	for (int q = 1; q < L256; q++)
		r = KN(max, combine)(r, l[q]);
	for (; i < n; i++)
		r = KN(max, combine)(r, x[i]);
	return r;
}

A256 static void
KN(acc_sum, avx2)(int64_t n, const T *x, T *o)
{
	int64_t i = 0;

	for (; i + L256 <= n; i += L256)
		P256(storeu)(o + i, P256(add)(P256(loadu)(o + i), P256(loadu)(x + i)));
	for (; i < n; i++)
		o[i] = KS(combine)(OP_SUM, o[i], x[i]);
}

A256 static void
KN(acc_max, avx2)(int64_t n, const T *x, T *o)
{
	int64_t i = 0;

	for (; i + L256 <= n; i += L256) {
		V256 v = P256(loadu)(x + i), p = P256(loadu)(o + i);

		P256(storeu)(o + i, P256(blendv)(P256(max)(v, p), v, P256(cmp)(v, v, _CMP_UNORD_Q)));
	}
	for (; i < n; i++)
		o[i] = KN(max, combine)(o[i], x[i]);
}

#undef BLK512
#undef BLK512_ROW
#undef BLK512_PTRS
#undef BLK512_TAB
#undef BLK256
#undef BLK256_ROW
#undef BLK256_PTRS
#undef L512
#undef L256
#undef ALL512
#undef LINE
#undef V512
#undef M512
#undef P512
#undef V256
#undef P256
#undef B256
#undef ALL256
#undef TAIL256
#undef CMP512
#undef WIDEN512
#undef WIDEN256
#endif /* SIMD_X86 */

/* ---- entry points (simd.h) ------------------------------------------- */

#define KPICK(name, ...) PICK_IN(KN(name, avx512), KN(name, avx2), __VA_ARGS__)
#define KPICKR(name, ...) PICKR_IN(KN(name, avx512), KN(name, avx2), __VA_ARGS__)

void
KP(dot)(int64_t M, int64_t N, int64_t K, const T *a, int64_t lda, const T *b, int64_t ldb,
    const T *c, T *o, int64_t ldc)
{
	if (M <= 0 || N <= 0)
		return;
	KPICK(dot, M, N, K, a, lda, b, ldb, c, o, ldc)
	KN(dot, portable)(M, N, K, a, lda, b, ldb, c, o, ldc);
}

void
KP(binary)(SimdOp op, int64_t n, const T *a, int as, const T *b, int bs, T *o)
{
	if (n <= 0)
		return;
	KPICK(binary, op, n, a, as, b, bs, o)
	KN(binary, portable)(op, n, a, as, b, bs, o);
}

void
KP(relu)(int64_t n, const T *x, T *o)
{
	KPICK(relu, n, x, o)
	for (int64_t i = 0; i < n; i++)
		o[i] = KS(unary)(OP_RELU, x[i]);
}

void
KP(sqrt)(int64_t n, const T *x, T *o)
{
	KPICK(sqrt, n, x, o)
	for (int64_t i = 0; i < n; i++)
		o[i] = KS(unary)(OP_SQRT, x[i]);
}

double
KP(sum)(int64_t n, const T *x)
{
	KPICKR(sum, n, x)
	return KN(sum, portable)(n, x);
}

T
KP(max)(int64_t n, const T *x)
{
	KPICKR(max, n, x)
	return KN(max, portable)(n, x);
}

void
KP(acc_sum)(int64_t n, const T *x, T *o)
{
	KPICK(acc_sum, n, x, o)
	for (int64_t i = 0; i < n; i++)
		o[i] = KS(combine)(OP_SUM, o[i], x[i]);
}

void
KP(acc_max)(int64_t n, const T *x, T *o)
{
	KPICK(acc_max, n, x, o)
	for (int64_t i = 0; i < n; i++)
		o[i] = KN(max, combine)(o[i], x[i]);
}

#undef KPICK
#undef KPICKR

#undef T
#undef K_F32
#undef KN
#undef KP
#undef KS
