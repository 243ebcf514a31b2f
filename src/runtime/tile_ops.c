/*
 * tile_ops.c: the compute ops of one program, and tx_ops, the table that
 * runs an instruction by its op kind (tile_priv.h has the executor's map).
 *
 * Every op works on whole tiles, and dispatch is one table entry per
 * instruction, never per element.  The hot loops (dot, elementwise rows,
 * reductions) are simd.c's vector kernels, chosen at run time (AICM_ISA
 * forces a path); an elementwise op without a vector kernel computes its
 * formula from src/ir/scalar.h, the interpreter's, element by element in
 * double.  Elementwise f32 results therefore equal the reference's (an
 * IEEE float op is the rounded double op); f32 dots accumulate in float as
 * sgemm does, and sums in double per row, so they differ from the
 * reference by rounding only, far inside the f32 tolerance.  A strip run
 * (planned in tile_plan.c) does a chain of elementwise ops a strip of
 * STRIP elements at a time, with the same kernels, so the bits do not
 * change.
 */
#include <string.h>

#include "simd.h"
#include "tile_priv.h"

/* ---- scalars and fills ----------------------------------------------- */

static int
op_program_id(Worker *w, const TileInst *in, int i)
{
	w->sc[in->res] = w->pid[in->axis];
	return i + 1;
}

static int
op_idiv(Worker *w, const TileInst *in, int i)
{
	w->sc[in->res] = w->sc[in->in[0]] / in->by;
	return i + 1;
}

static int
op_irem(Worker *w, const TileInst *in, int i)
{
	w->sc[in->res] = w->sc[in->in[0]] % in->by;
	return i + 1;
}

/* zeros and full */
static int
op_fill(Worker *w, const TileInst *in, int i)
{
	const PTile *t = &w->k->tile[in->res];
	void *p = w->p[in->res];

	if (in->op == TO_ZEROS)
		memset(p, 0, w->k->es * (size_t)t->n);
	else if (w->k->f32)
		for (int64_t q = 0; q < t->n; q++)
			((float *)p)[q] = (float)in->value;
	else
		for (int64_t q = 0; q < t->n; q++)
			((double *)p)[q] = in->value;
	memcpy(w->valid[in->res], t->sh, sizeof t->sh);
	return i + 1;
}

/* The loop that the yield ends reads its operand (tx_run_for). */
static int
op_yield(Worker *w, const TileInst *in, int i)
{
	(void)w, (void)in;
	return i + 1;
}

/* ---- elementwise ----------------------------------------------------- */

/* Runs unary op on n elements with its vector kernel (simd.h), or
 * returns false when it has none. */
static inline bool
unary_vector(OpId op, bool f32, int64_t n, const void *x, void *o)
{
	switch (op) {
	case OP_RELU:
		if (f32)
			simd_relu_f32(n, x, o);
		else
			simd_relu(n, x, o);
		return true;
	case OP_EXP:
		if (f32)
			simd_exp_f32(n, x, o);
		else
			simd_exp(n, x, o);
		return true;
	default:
		return false;
	}
}

/* Elements lo..lo+n of a unary op's result (the whole tile: 0, t->n):
 * its vector kernel, else its formula (scalar.h) element by element, in
 * double.  One case per op, so that each loop has its formula inline. */
static void
unary_range(Worker *w, const TileInst *in, int64_t lo, int64_t n)
{
	size_t es = w->k->es;
	const void *x = at(w->p[in->in[0]], lo, es);
	void *o = at(w->p[in->res], lo, es);
	bool f32 = w->k->f32;

	switch (in->gop) {
#define U(ID, formula)                                                         \
	case OP_##ID:                                                          \
		if (!unary_vector(OP_##ID, f32, n, x, o))                      \
			for (int64_t i = 0; i < n; i++) {                      \
				double v = tget(x, i, f32);                    \
				tset(o, i, ir_scalar_unary(OP_##ID, v), f32);  \
			}                                                      \
		break;
	IR_SCALAR_UNARY(U)
#undef U
	default:
		AICM_BUG("'%s' is not a unary op", ir_ops[in->gop].name);
	}
}

/* A unary op's valid box and flops (its data: unary_range). */
static void
unary_meta(Worker *w, const TileInst *in)
{
	memcpy(w->valid[in->res], w->valid[in->in[0]], sizeof w->valid[0]);
	w->fl += box(w->valid[in->res]);
}

static int
op_unary(Worker *w, const TileInst *in, int i)
{
	unary_range(w, in, 0, w->k->tile[in->res].n);
	unary_meta(w, in);
	return i + 1;
}

static int64_t
stretch_valid(int64_t sh, int64_t v, int64_t osh)
{
	return sh == osh ? v : v > 0 ? osh : 0;
}

static SimdOp
simd_op_of(OpId gop)
{
	switch (gop) {
	case OP_ADD: return SIMD_ADD;
	case OP_SUB: return SIMD_SUB;
	case OP_MUL: return SIMD_MUL;
	case OP_DIV: return SIMD_DIV;
	case OP_MAXIMUM: return SIMD_MAXIMUM;
	case OP_MINIMUM: return SIMD_MINIMUM;
	default:
		AICM_BUG("'%s' is not a binary op", ir_ops[gop].name);
	}
}

/* A binary op's operand strides over the result's shape (0 where an
 * operand is stretched), its vector op, and the result's valid box and
 * flops; do_binary and strip runs share it. */
static SimdOp
binary_prep(Worker *w, const TileInst *in, int64_t *sa, int64_t *sb)
{
	const PTile *t = &w->k->tile[in->res], *ta = &w->k->tile[in->in[0]],
	    *tb = &w->k->tile[in->in[1]];
	const int64_t *sh = t->sh;
	int64_t ma = 1, mb = 1, *ov = w->valid[in->res];

	for (int d = 3; d >= 0; d--) {
		int64_t va = stretch_valid(ta->sh[d], w->valid[in->in[0]][d], sh[d]);
		int64_t vb = stretch_valid(tb->sh[d], w->valid[in->in[1]][d], sh[d]);

		sa[d] = ta->sh[d] == 1 ? 0 : ma;
		sb[d] = tb->sh[d] == 1 ? 0 : mb;
		ma *= ta->sh[d];
		mb *= tb->sh[d];
		ov[d] = va < vb ? va : vb;
	}
	w->fl += box(ov);
	return simd_op_of(in->gop);
}

static int
op_binary(Worker *w, const TileInst *in, int i)
{
	const PTile *t = &w->k->tile[in->res];
	const void *a = w->p[in->in[0]], *b = w->p[in->in[1]];
	void *o = w->p[in->res];
	const int64_t *sh = t->sh;
	int64_t sa[4], sb[4];
	size_t es = w->k->es;
	SimdOp op = binary_prep(w, in, sa, sb);

	/* One vector kernel per row; sa[3] and sb[3] are 0 (stretched) or 1.
	 * A tile that is whole rows of both operands is one row. */
	if (whole(sa, sh) && whole(sb, sh)) {
		if (w->k->f32)
			simd_binary_f32(op, t->n, a, 1, b, 1, o);
		else
			simd_binary(op, t->n, a, 1, b, 1, o);
	} else {
		for (int64_t i0 = 0, q = 0; i0 < sh[0]; i0++)
			for (int64_t i1 = 0; i1 < sh[1]; i1++)
				for (int64_t i2 = 0; i2 < sh[2]; i2++, q += sh[3]) {
					const void *ra = at(a, i0 * sa[0] + i1 * sa[1] + i2 * sa[2], es);
					const void *rb = at(b, i0 * sb[0] + i1 * sb[1] + i2 * sb[2], es);

					if (w->k->f32)
						simd_binary_f32(op, sh[3], ra, (int)sa[3], rb, (int)sb[3],
						    at(o, q, es));
					else
						simd_binary(op, sh[3], ra, (int)sa[3], rb, (int)sb[3],
						    at(o, q, es));
				}
	}
	return i + 1;
}

/* ---- reductions, dots, transposes ------------------------------------ */

/* One row of a reduction (sum or max) into *po, or accumulated
 * elementwise into po[] when the row's dim is kept (ost3 != 0). */
static void
reduce_row(bool f32, OpId op, int64_t n, const void *row, void *po, bool lanes)
{
	bool mx = op == OP_MAX;

	if (lanes) {
		if (f32)
			(mx ? simd_acc_max_f32 : simd_acc_sum_f32)(n, row, po);
		else
			(mx ? simd_acc_max : simd_acc_sum)(n, row, po);
	} else if (f32) {
		float *p = po;

		*p = (float)ir_scalar_combine(op, *p, mx ? simd_max_f32(n, row) :
		    simd_sum_f32(n, row));
	} else {
		double *p = po;

		*p = ir_scalar_combine(op, *p, mx ? simd_max(n, row) : simd_sum(n, row));
	}
}

static int
op_reduce(Worker *w, const TileInst *in, int i)
{
	const TileFn *f = w->k->f;
	const PTile *ti = &w->k->tile[in->in[0]];
	int rin = f->vals[in->in[0]].rank;
	const void *x = w->p[in->in[0]];
	void *o = w->p[in->res];
	const int64_t *sh = ti->sh, *vi = w->valid[in->in[0]];
	int64_t *ov = w->valid[in->res], osh[4], ost[4], m = 1;
	int ax = in->axis < 0 ? -1 : (int)in->axis + 4 - rin;
	bool f32 = w->k->f32;
	const void *acc = in->nin == 2 ? w->p[in->in[1]] : NULL;
	int64_t on = w->k->tile[in->res].n;
	size_t es = w->k->es;

	/* The output indexed with the input's padded coords: reduced dims
	 * have stride 0 (the result tile's own layout is the same elements in
	 * the same order, whether or not the reduced dims are kept). */
	for (int d = 3; d >= 0; d--) {
		bool red = ax < 0 ? d >= 4 - rin : d == ax;

		osh[d] = red ? 1 : sh[d];
		ost[d] = red ? 0 : m;
		m *= osh[d];
	}
	{
		double z = ir_scalar_neutral(in->gop, w->k->dt);

		for (int64_t q = 0; q < on; q++)
			tset(o, q, z, f32);
	}
	for (int64_t i0 = 0; i0 < vi[0]; i0++)
		for (int64_t i1 = 0; i1 < vi[1]; i1++)
			for (int64_t i2 = 0; i2 < vi[2]; i2++)
				reduce_row(f32, in->gop, vi[3],
				    at(x, ((i0 * sh[1] + i1) * sh[2] + i2) * sh[3], es),
				    at(o, i0 * ost[0] + i1 * ost[1] + i2 * ost[2], es), ost[3] != 0);
	w->fl += box(vi);
	/* The result's valid box, in its own padded layout: the kept dims'
	 * extents, reduced ones 1. */
	{
		int64_t kv[4], r = 0, tmp[IR_MAX_RANK];
		int rout = f->vals[in->res].rank;

		for (int d = 4 - rin; d < 4; d++) {
			bool red = ax < 0 || d == ax;

			if (!red)
				tmp[r++] = vi[d];
			else if (in->keepdims)
				tmp[r++] = 1;
		}
		pad4(rout, tmp, kv);
		memcpy(ov, kv, sizeof kv);
	}
	if (acc) {
		const int64_t *av = w->valid[in->in[1]];

		for (int64_t q = 0; q < on; q++) {
			double c = tget(acc, q, f32), v = tget(o, q, f32);

			tset(o, q, ir_scalar_combine(in->gop, c, v), f32);
		}
		for (int d = 0; d < 4; d++)
			if (av[d] < ov[d])
				ov[d] = av[d];
	}
	return i + 1;
}

static int
op_dot(Worker *w, const TileInst *in, int i)
{
	const PTile *ta = &w->k->tile[in->in[0]], *tb = &w->k->tile[in->in[1]];
	const void *a = w->p[in->in[0]], *b = w->p[in->in[1]], *c = w->p[in->in[2]];
	void *o = w->p[in->res];
	int64_t M = ta->sh[2], K = ta->sh[3], N = tb->sh[3];
	const int64_t *va = w->valid[in->in[0]], *vb = w->valid[in->in[1]],
	    *vc = w->valid[in->in[2]];
	int64_t *ov = w->valid[in->res], vk = va[3] < vb[2] ? va[3] : vb[2];

	/* Masked lanes hold the loads' other (0), so the whole tile is summed
	 * by the register-blocked micro-kernel; the loads packed a and b. */
	if (w->k->f32)
		simd_dot_f32(M, N, K, a, w->ld[in->in[0]], b, N, c, o, N);
	else
		simd_dot(M, N, K, a, w->ld[in->in[0]], b, N, c, o, N);
	ov[0] = ov[1] = 1;
	ov[2] = va[2] < vc[2] ? va[2] : vc[2];
	ov[3] = vb[3] < vc[3] ? vb[3] : vc[3];
	w->fl += 2 * va[2] * vb[3] * vk;
	return i + 1;
}

static int
op_transpose(Worker *w, const TileInst *in, int i)
{
	int r = w->k->f->vals[in->in[0]].rank, p = 4 - r;
	const PTile *ti = &w->k->tile[in->in[0]], *to = &w->k->tile[in->res];
	const void *x = w->p[in->in[0]];
	void *o = w->p[in->res];
	int64_t xs[4], st = 1, s[4];
	bool f32 = w->k->f32;

	for (int d = 3; d >= 0; d--) {
		xs[d] = st;
		st *= ti->sh[d];
	}
	for (int d = 0; d < 4; d++) {
		int src = d < p ? d : p + (int)in->perm[d - p];

		s[d] = xs[src];
		w->valid[in->res][d] = w->valid[in->in[0]][src];
	}
	for (int64_t i0 = 0, q = 0; i0 < to->sh[0]; i0++)
		for (int64_t i1 = 0; i1 < to->sh[1]; i1++)
			for (int64_t i2 = 0; i2 < to->sh[2]; i2++)
				for (int64_t i3 = 0; i3 < to->sh[3]; i3++)
					tset(o, q++, tget(x, i0 * s[0] + i1 * s[1] + i2 * s[2] +
					    i3 * s[3], f32), f32);
	return i + 1;
}

/* ---- strip runs ------------------------------------------------------ */

/* Elements lo..lo+n of an op of a strip run. */
static void
strip_op(Worker *w, const TileInst *in, int64_t lo, int64_t n)
{
	const PKernel *k = w->k;
	size_t es = k->es;
	bool fa, fb;
	const void *a, *b;

	if (in->op == TO_UNARY) {
		unary_range(w, in, lo, n);
		return;
	}
	fa = k->tile[in->in[0]].n > 1;           /* else one element, stride 0 */
	fb = k->tile[in->in[1]].n > 1;
	a = fa ? at(w->p[in->in[0]], lo, es) : w->p[in->in[0]];
	b = fb ? at(w->p[in->in[1]], lo, es) : w->p[in->in[1]];
	if (k->f32)
		simd_binary_f32(simd_op_of(in->gop), n, a, fa, b, fb, at(w->p[in->res], lo, es));
	else
		simd_binary(simd_op_of(in->gop), n, a, fa, b, fb, at(w->p[in->res], lo, es));
}

/* Runs the strip run that starts at instruction i (and the store that
 * follows it, when it can go strip by strip); returns the next one. */
int
tx_run_strips(Worker *w, int i)
{
	const PKernel *k = w->k;
	const TileFn *f = k->f;
	int end = k->run_end[i], last = f->insts[end - 1].res;
	int64_t n = k->tile[last].n, sa[4], sb[4];
	size_t es = k->es;
	char *dst = NULL;

	for (int q = i; q < end; q++) {
		if (f->insts[q].op == TO_UNARY)
			unary_meta(w, &f->insts[q]);
		else
			(void)binary_prep(w, &f->insts[q], sa, sb);
	}
	if (end < f->ninsts && f->insts[end].op == TO_STORE && f->insts[end].in[0] == last)
		dst = tx_store_target(w, end);
	for (int64_t lo = 0; lo < n; lo += STRIP) {
		int64_t len = n - lo < STRIP ? n - lo : STRIP;

		for (int q = i; q < end; q++)
			strip_op(w, &f->insts[q], lo, len);
		if (dst && k->acc[end].stream)
			simd_copy_stream(dst + lo * (int64_t)es, at(w->p[last], lo, es), es * (size_t)len);
		else if (dst)
			memcpy(dst + lo * (int64_t)es, at(w->p[last], lo, es), es * (size_t)len);
	}
	if (!dst)
		return end;
	w->wr += n * (int64_t)es;
	return end + 1;
}

/* Designated rows, so that the table reads as the op list; exec_tile_compile
 * refuses to plan an op whose row is missing. */
TxOp *const tx_ops[TO_COUNT] = {
	[TO_PROGRAM_ID] = op_program_id,
	[TO_IDIV] = op_idiv,
	[TO_IREM] = op_irem,
	[TO_ZEROS] = op_fill,
	[TO_FULL] = op_fill,
	[TO_LOAD] = tx_load,
	[TO_STORE] = tx_store,
	[TO_ATOMIC_ADD] = tx_store,
	[TO_ATOMIC_MAX] = tx_store,
	[TO_FOR] = tx_run_for,
	[TO_YIELD] = op_yield,
	[TO_DOT] = op_dot,
	[TO_UNARY] = op_unary,
	[TO_BINARY] = op_binary,
	[TO_REDUCE] = op_reduce,
	[TO_TRANSPOSE] = op_transpose,
	[TO_LOAD_PAD] = tx_load_pad,
	[TO_LOAD_STEP] = tx_load_step,
	[TO_LOAD_GATHER] = tx_load_gather,
	[TO_BROADCAST] = tx_broadcast,
};
