/*
 * simd_kern.h: simd.c's kernels written once, for one element type.
 *
 * simd.c includes this file twice, after defining the element type and
 * the names that differ between doubles and floats; each inclusion
 * instantiates every kernel below for that type, and the file #undefs
 * those names at its end so that the next inclusion can define them
 * again.  Everything a kernel needs to know about its type is a
 * compile-time constant (lanes a vector, the full mask, K_F32), so each
 * instance compiles to the code a hand-written copy would.  The names:
 *
 *   T                 the element type (double, float)
 *   K_F32             1 for float, 0 for double: picks the few rules
 *                     that differ by type (see simd.c's design paragraph)
 *   KN(name, sfx)     a kernel's name: name_sfx, or name_f32_sfx for floats
 *   V512, M512        the zmm vector and its mask type (__m512d/__mmask8...)
 *   ALL512            the M512 mask of every lane (0xff, 0xffff)
 *   P512(op)          the AVX-512 intrinsic of op for T (_mm512_op_pd/_ps)
 *   V256, P256(op)    the same for AVX2 (__m256d, _mm256_op_pd/_ps)
 *   B256(p)           broadcast *p to every lane of a V256
 *   ALL256            the V256 maskload mask of every lane
 *   TAIL256(w, nv)    the maskload mask of the last of nv vectors holding
 *                     the w columns of a dot block
 *
 * Lanes per vector (L512, L256) and elements per cache line follow from
 * sizeof(T).
 */

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
			acc[r][v] = P512(maskz_loadu)(tail && v == nv - 1 ? lm : ALL512,
			    c + r * ldc + L512 * v);
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

/* The float kernel walks column panels outer, the double kernel row
 * blocks outer (simd.c's design paragraph says why rows); both orders
 * are kept as they were measured. */
static void
KN(dot, avx512)(int64_t M, int64_t N, int64_t K, const T *a, int64_t lda, const T *b,
    int64_t ldb, const T *c, T *o, int64_t ldc)
{
#define DOT512_COLS \
	int64_t w = N - j < 4 * L512 ? N - j : 4 * L512; \
	int nv = (int)((w + L512 - 1) / L512); \
	M512 lm = (M512)(w % L512 ? (1u << (w % L512)) - 1 : ALL512);
#define DOT512_ROWS int mr = M - i < 6 ? (int)(M - i) : 6;
#define DOT512_CALL \
	KN(blk512, tab)[w % L512 == 0][mr - 1][nv - 1](lm, K, a + i * lda, lda, b + j, ldb, \
	    c + i * ldc + j, o + i * ldc + j, ldc);
#if K_F32
	for (int64_t j = 0; j < N; j += 4 * L512) {
		DOT512_COLS
		for (int64_t i = 0; i < M; i += 6) {
			DOT512_ROWS
			DOT512_CALL
		}
	}
#else
	for (int64_t i = 0; i < M; i += 6) {
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
			acc[r][v] = P256(maskload)(c + r * ldc + L256 * v, v == nv - 1 ? lm : ALL256);
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
			    c + i * ldc + j, o + i * ldc + j, ldc);
		}
	}
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
#endif /* SIMD_X86 */

#undef T
#undef K_F32
#undef KN
