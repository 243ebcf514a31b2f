/*
 * simd_isa.h: simd.c's double-only kernels written once, for one ISA.
 *
 * Exp on doubles and copy_stream do the same operations in the same order on AVX-512
 * and on AVX2; only the vector width and a few intrinsics' names differ.
 * simd.c includes this file twice, after defining those names for
 * AVX-512, then for AVX2; the file #undefs them at its end.  The width is
 * a compile-time constant, so each instance compiles to the code of a
 * hand-written copy, and exp's lanes meet the same polynomial in the same
 * order on both paths, which therefore agree bitwise.
 *
 *   KI(name)            a kernel's name: name_avx512, name_avx2
 *   AI                  the kernels' target attribute (A512, A256)
 *   W                   doubles a vector (8, 4)
 *   VD, VI              the double and integer vector types
 *   X(op)               the intrinsic op of the width (_mm512_op, _mm256_op)
 *   ROUND_PD(v, mode)   v rounded to integers
 *   SET1_EPI64(v)       v in every 64-bit lane
 *   CASTPD_SI, CASTSI_PD  bit casts between VD and VI
 *   OUT_BITS, OUT_OF(v, lo, hi)  the bits of the lanes of v outside [lo, hi]
 *                       (or NaN), as an integer of type OUT_BITS
 *   STREAM_LINE(d, s)   the 64 bytes at s stored at d, non-temporally
 */

/* simd.c's exp on doubles (above exp_c there). */
AI static void
KI(exp)(int64_t n, const double *x, double *o)
{
	int64_t i = 0;

	for (; i + W <= n; i += W) {
		VD v = X(loadu_pd)(x + i);
		VD k = ROUND_PD(X(mul_pd)(v, X(set1_pd)(LOG2E)),
		    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		VD r = X(fnmadd_pd)(k, X(set1_pd)(LN2_HI), v);
		VD p = X(set1_pd)(exp_c[13]);
		VI e;
		OUT_BITS bad;

		r = X(fnmadd_pd)(k, X(set1_pd)(LN2_LO), r);
		for (int c = 12; c >= 0; c--)
			p = X(fmadd_pd)(p, r, X(set1_pd)(exp_c[c]));
		e = CASTPD_SI(X(add_pd)(k, X(set1_pd)(EXP_MAGIC)));
		e = X(slli_epi64)(X(add_epi64)(e, SET1_EPI64(1023)), 52);
		X(storeu_pd)(o + i, X(mul_pd)(p, CASTSI_PD(e)));
		bad = OUT_OF(v, EXP_LO, EXP_HI);
		for (int q = 0; bad && q < W; q++)
			if (bad & (1 << q))
				o[i + q] = ir_scalar_unary(OP_EXP, x[i + q]);
	}
	for (; i < n; i++)
		o[i] = ir_scalar_unary(OP_EXP, x[i]);
}

/* Whole 64-byte lines of dst by non-temporal stores (one or two vectors
 * a line), the ragged head and tail by memcpy (a partial line through the
 * write-combining buffers costs more than it saves). */
AI static void
KI(copy_stream)(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	size_t head = (64 - (uintptr_t)d % 64) % 64;

	if (n < head + 64) {
		memcpy(d, s, n);
		return;
	}
	memcpy(d, s, head);
	d += head;
	s += head;
	n -= head;
	for (; n >= 64; d += 64, s += 64, n -= 64)
		STREAM_LINE(d, s);
	memcpy(d, s, n);
}

#undef KI
#undef AI
#undef W
#undef VD
#undef VI
#undef X
#undef ROUND_PD
#undef SET1_EPI64
#undef CASTPD_SI
#undef CASTSI_PD
#undef OUT_BITS
#undef OUT_OF
#undef STREAM_LINE
