/*
 * tile_ops.c: the compute ops of one program, and tx_ops, the table that
 * runs an instruction by its op kind (tile_priv.h has the executor's map).
 *
 * Every op works on whole tiles, and dispatch is one table entry per
 * instruction, never per element.  The hot loops (dot, elementwise rows,
 * reductions) are simd.c's vector kernels, chosen at run time (AICM_ISA
 * forces a path); an elementwise op without a vector kernel computes its
 * formula from src/ir/scalar.h, the interpreter's, element by element in
 * double (the compares, pow, mod, ...; cast by ir_scalar_cast; where
 * selects).  A tile is held in the kernel's compute type (tile_priv.h); an
 * f32 value in an f64 kernel is rounded to float after its op
 * (round_f32).  Elementwise f32 results therefore equal the reference's (an
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

	if (in->op == TO_ZEROS && w->k->zskip[i])
		;   /* only dots read it, from zero (plan_zero_dots) */
	else if (in->op == TO_ZEROS)
		memset(p, 0, w->k->es * (size_t)t->n);
	else if (w->k->ik)
		for (int64_t q = 0; q < t->n; q++)
			tseti(p, q, in->value.i, w->k->dt);
	else if (w->k->f32)
		for (int64_t q = 0; q < t->n; q++)
			((float *)p)[q] = (float)in->value.d;
	else
		for (int64_t q = 0; q < t->n; q++)
			((double *)p)[q] = in->value.d;
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
	case OP_SQRT:
		if (f32)
			simd_sqrt_f32(n, x, o);
		else
			simd_sqrt(n, x, o);
		return true;
	default:
		return false;
	}
}

/* An f32 value computed in an f64 kernel (a cast's f32 result, or an op
 * on such values) is rounded to float, as the reference stores it: its
 * elements lo..lo+n. */
static void
round_f32(Worker *w, int res, int64_t lo, int64_t n)
{
	if (w->k->f32 || w->k->f->vals[res].dt != DT_F32)
		return;
	for (int64_t i = 0; i < n; i++) {
		double *p = (double *)w->p[res] + lo + i;

		*p = (double)(float)*p;
	}
}

/* ---- integer elementwise, typed loops --------------------------------- */

/* An integer kernel's elementwise loops with the op switched outside and
 * the element type fixed: one loop per scalar.h integer row and type, no
 * per-element dispatch.  simd_int.c's AVX2 kernels do the leading
 * vectors of the ops they have (add, sub, maximum, minimum, the compares,
 * and, or, xor, relu, neg, abs, sign, not; mul on i32), these loops the
 * tail and the rest (i64 mul, pow, the dividing ops; GCC's -O2 cost
 * model leaves them scalar).  Each computes the row's formula
 * on int64 and stores the low bits, the values the element-by-element
 * path (tgeti, ir_scalar_*_i64, tseti) gives.  Operands are whole (stride
 * 1) or one element (stride 0).  A dividing op is not done here: its zero
 * divisors must be looked for in the valid box (binary_int). */
#define INT_UNARY_LOOP_(ID, f)                                                 \
	case OP_##ID:                                                          \
		for (int64_t i = 0; i < n; i++) {                              \
			int64_t x = px[i];                                     \
			po[i] = (flat_t)(f);                                   \
		}                                                              \
		return true;
#define INT_BINARY_LOOP_(ID, f, divides)                                       \
	case OP_##ID:                                                          \
		if (divides)                                                   \
			return false;                                          \
		for (int64_t i = 0; i < n; i++) {                              \
			int64_t a = pa[i * sa], b = pb[i * sb];                \
			po[i] = (flat_t)(f);                                   \
		}                                                              \
		return true;
#define INT_FLAT_(T, SFX)                                                      \
	static bool                                                            \
	unary_int_##SFX(OpId op, int64_t n, const T *px, T *po)                \
	{                                                                      \
		typedef T flat_t;                                              \
                                                                               \
		switch (op) {                                                  \
		IR_SCALAR_UNARY_INT(INT_UNARY_LOOP_)                           \
		default:                                                       \
			return false;                                          \
		}                                                              \
	}                                                                      \
	static bool                                                            \
	binary_int_##SFX(OpId op, int64_t n, const T *pa, int64_t sa,          \
	    const T *pb, int64_t sb, T *po)                                    \
	{                                                                      \
		typedef T flat_t;                                              \
                                                                               \
		switch (op) {                                                  \
		IR_SCALAR_BINARY_INT(INT_BINARY_LOOP_)                         \
		default:                                                       \
			return false;                                          \
		}                                                              \
	}
INT_FLAT_(int32_t, i32)
INT_FLAT_(int64_t, i64)
#undef INT_FLAT_
#undef INT_UNARY_LOOP_
#undef INT_BINARY_LOOP_

/* Runs an integer unary op on n whole elements; false when there is no
 * typed loop for it (the caller goes element by element). */
static bool
unary_int_flat(OpId op, DType dt, int64_t n, const void *x, void *o)
{
	/* the vector kernel's share first (simd_int.c), the typed loop's
	 * after it */
	int64_t v = simd_int_unary(op, dt, n, x, o);
	size_t es = ir_dtype_size(dt);

	x = at(x, v, es);
	o = at(o, v, es);
	return dt == DT_I32 ? unary_int_i32(op, n - v, x, o) :
	    dt == DT_I64 ? unary_int_i64(op, n - v, x, o) : false;
}

static bool
binary_int_flat(OpId op, DType dt, int64_t n, const void *a, int64_t sa, const void *b,
    int64_t sb, void *o)
{
	int64_t v = simd_int_binary(op, dt, n, a, (int)sa, b, (int)sb, o);
	size_t es = ir_dtype_size(dt);

	a = at(a, v * sa, es);
	b = at(b, v * sb, es);
	o = at(o, v, es);
	return dt == DT_I32 ? binary_int_i32(op, n - v, a, sa, b, sb, o) :
	    dt == DT_I64 ? binary_int_i64(op, n - v, a, sa, b, sb, o) : false;
}

/* Elements lo..lo+n of a unary op's result (the whole tile: 0, t->n):
 * its vector kernel, else its formula (scalar.h) element by element, in
 * double.  One case per op, so that each loop has its formula inline. */
static void
unary_range_to(Worker *w, const TileInst *in, int64_t lo, int64_t n, void *o)
{
	size_t es = w->k->es;
	const void *x = at(w->p[in->in[0]], lo, es);
	bool f32 = w->k->f32;

	if (w->k->ik) {
		DType dt = w->k->dt;

		if (in->gop == OP_CAST) {
			/* between an integer type and bool (lower-tiled makes no
			 * integer kernel with floats) */
			for (int64_t i = 0; i < n; i++)
				tseti(o, i, ir_scalar_int_cast(in->to, tgeti(x, i, dt)), dt);
			return;
		}
		if (!unary_int_flat(in->gop, dt, n, x, o))
			for (int64_t i = 0; i < n; i++)
				tseti(o, i, ir_scalar_unary_i64(in->gop, tgeti(x, i, dt)), dt);
		return;
	}
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
	case OP_CAST:
		for (int64_t i = 0; i < n; i++)
			tset(o, i, ir_scalar_cast(in->to, tget(x, i, f32)), f32);
		break;
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

/* Elements lo..lo+n of unary op in, into its own tile. */
static void
unary_range(Worker *w, const TileInst *in, int64_t lo, int64_t n)
{
	unary_range_to(w, in, lo, n, at(w->p[in->res], lo, w->k->es));
	round_f32(w, in->res, lo, n);
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

/* Whether binary op gop has a vector kernel (simd_op_of); the others
 * compute their formula (scalar.h) element by element, in double. */
static bool
has_simd(OpId gop)
{
	switch (gop) {
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_MAXIMUM: case OP_MINIMUM:
		return true;
	default:
		return false;
	}
}

/* n elements of binary op gop by its formula: o[i] = a[i * fa] op b[i * fb]. */
static void
binary_formula(OpId gop, bool f32, int64_t n, const void *a, int64_t fa, const void *b,
    int64_t fb, void *o)
{
	switch (gop) {
#define B(ID, formula)                                                         \
	case OP_##ID:                                                          \
		for (int64_t i = 0; i < n; i++)                                \
			tset(o, i, ir_scalar_binary(OP_##ID, tget(a, i * fa, f32), \
			    tget(b, i * fb, f32)), f32);                       \
		break;
	IR_SCALAR_BINARY(B)
#undef B
	default:
		AICM_BUG("'%s' is not a binary op", ir_ops[gop].name);
	}
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
	return has_simd(in->gop) ? simd_op_of(in->gop) : SIMD_ADD;
}

/* Records in's division by zero in the current program: the worker keeps
 * the first in tx_divz_before's order. */
static void
divz_fail(Worker *w, const TileInst *in)
{
	if (tx_divz_before(w->gid, in, w->err_prog, w->err)) {
		w->err = in;
		w->err_prog = w->gid;
	}
}

/* An integer kernel's binary op, element by element with scalar.h's
 * integer formula.  A divisor of 0 in a lane of the result's valid box is
 * the program's error (divz_fail, reported by exec_tile_run); a masked lane
 * holds a load's other (0) and is only computed, by the formula that
 * gives 0 there. */
static void
binary_int(Worker *w, const TileInst *in, const int64_t *sa, const int64_t *sb)
{
	const int64_t *sh = w->k->tile[in->res].sh, *ov = w->valid[in->res];
	const void *a = w->p[in->in[0]], *b = w->p[in->in[1]];
	void *o = w->p[in->res];
	DType dt = w->k->dt;
	OpId op = in->gop;

	/* a row at a time through the typed loops, unless the op divides */
	if (!ir_scalar_int_divides(op)) {
		size_t es = w->k->es;
		bool done = true;

		for (int64_t i0 = 0, q = 0; done && i0 < sh[0]; i0++)
			for (int64_t i1 = 0; done && i1 < sh[1]; i1++)
				for (int64_t i2 = 0; done && i2 < sh[2]; i2++, q += sh[3])
					done = binary_int_flat(op, dt, sh[3], at(a, i0 * sa[0] +
					    i1 * sa[1] + i2 * sa[2], es), sa[3], at(b, i0 * sb[0] +
					    i1 * sb[1] + i2 * sb[2], es), sb[3], at(o, q, es));
		if (done)
			return;
	}
	for (int64_t i0 = 0, q = 0; i0 < sh[0]; i0++)
		for (int64_t i1 = 0; i1 < sh[1]; i1++)
			for (int64_t i2 = 0; i2 < sh[2]; i2++)
				for (int64_t i3 = 0; i3 < sh[3]; i3++, q++) {
					int64_t x = tgeti(a, i0 * sa[0] + i1 * sa[1] + i2 * sa[2] +
					    i3 * sa[3], dt);
					int64_t y = tgeti(b, i0 * sb[0] + i1 * sb[1] + i2 * sb[2] +
					    i3 * sb[3], dt);

					if (ir_scalar_int_div_by_zero(op, y) && i0 < ov[0] &&
					    i1 < ov[1] && i2 < ov[2] && i3 < ov[3])
						divz_fail(w, in);
					tseti(o, q, ir_scalar_binary_i64(op, x, y), dt);
				}
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

	if (w->k->ik) {
		binary_int(w, in, sa, sb);
		return i + 1;
	}
	if (!has_simd(in->gop)) {
		/* the formula, row by row, over the same strides */
		for (int64_t i0 = 0, q = 0; i0 < sh[0]; i0++)
			for (int64_t i1 = 0; i1 < sh[1]; i1++)
				for (int64_t i2 = 0; i2 < sh[2]; i2++, q += sh[3])
					binary_formula(in->gop, w->k->f32, sh[3],
					    at(a, i0 * sa[0] + i1 * sa[1] + i2 * sa[2], es), sa[3],
					    at(b, i0 * sb[0] + i1 * sb[1] + i2 * sb[2], es), sb[3],
					    at(o, q, es));
		round_f32(w, in->res, 0, t->n);
		return i + 1;
	}
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
	round_f32(w, in->res, 0, t->n);
	return i + 1;
}

/* where(c, a, b): the three tiles broadcast to the result's shape, each
 * with its strides (0 where stretched); the valid box is the
 * intersection, as a binary op's.  An i32 or i64 kernel's goes a row at a
 * time through simd_int_where. */
static int
op_where(Worker *w, const TileInst *in, int i)
{
	const PTile *t = &w->k->tile[in->res];
	const int64_t *sh = t->sh;
	int64_t st[3][4], *ov = w->valid[in->res];
	bool f32 = w->k->f32;
	void *o = w->p[in->res];

	for (int d = 0; d < 4; d++)
		ov[d] = sh[d];
	for (int j = 0; j < 3; j++) {
		const PTile *tj = &w->k->tile[in->in[j]];
		int64_t m = 1;

		for (int d = 3; d >= 0; d--) {
			int64_t v = stretch_valid(tj->sh[d], w->valid[in->in[j]][d], sh[d]);

			st[j][d] = tj->sh[d] == 1 ? 0 : m;
			m *= tj->sh[d];
			if (v < ov[d])
				ov[d] = v;
		}
	}
	if (w->k->ik && (w->k->dt == DT_I32 || w->k->dt == DT_I64)) {
		/* a row at a time: the vector kernel's share (simd_int.c),
		 * then the row's tail by the formula; strides along the row
		 * are 0 or 1 */
		DType dt = w->k->dt;
		size_t es = w->k->es;

		for (int64_t i0 = 0, q = 0; i0 < sh[0]; i0++)
			for (int64_t i1 = 0; i1 < sh[1]; i1++)
				for (int64_t i2 = 0; i2 < sh[2]; i2++, q += sh[3]) {
					const void *r[3];
					int64_t v;

					for (int j = 0; j < 3; j++)
						r[j] = at(w->p[in->in[j]], i0 * st[j][0] + i1 * st[j][1] +
						    i2 * st[j][2], es);
					v = simd_int_where(dt, sh[3], r[0], (int)st[0][3], r[1],
					    (int)st[1][3], r[2], (int)st[2][3], at(o, q, es));
					for (int64_t i3 = v; i3 < sh[3]; i3++)
						tseti(o, q + i3, tgeti(r[0], i3 * st[0][3], dt) != 0 ?
						    tgeti(r[1], i3 * st[1][3], dt) :
						    tgeti(r[2], i3 * st[2][3], dt), dt);
				}
		w->fl += box(ov);
		return i + 1;
	}
	for (int64_t i0 = 0, q = 0; i0 < sh[0]; i0++)
		for (int64_t i1 = 0; i1 < sh[1]; i1++)
			for (int64_t i2 = 0; i2 < sh[2]; i2++)
				for (int64_t i3 = 0; i3 < sh[3]; i3++, q++) {
					int64_t e[3];

					for (int j = 0; j < 3; j++)
						e[j] = i0 * st[j][0] + i1 * st[j][1] + i2 * st[j][2] +
						    i3 * st[j][3];
					if (w->k->ik) {
						DType dt = w->k->dt;

						tseti(o, q, tgeti(w->p[in->in[0]], e[0], dt) != 0 ?
						    tgeti(w->p[in->in[1]], e[1], dt) :
						    tgeti(w->p[in->in[2]], e[2], dt), dt);
						continue;
					}
					tset(o, q, tget(w->p[in->in[0]], e[0], f32) != 0 ?
					    tget(w->p[in->in[1]], e[1], f32) :
					    tget(w->p[in->in[2]], e[2], f32), f32);
				}
	w->fl += box(ov);
	return i + 1;
}

/* ---- reductions, dots, transposes ------------------------------------ */

/* One row of a reduction (sum or max) into *po, or accumulated
 * elementwise into po[] when the row's dim is kept (ost3 != 0). */
static void
reduce_row(bool f32, OpId op, int64_t n, const void *row, void *po, bool lanes)
{
	bool mx = op == OP_MAX;

	if (op != OP_SUM && op != OP_MAX) {
		/* min and prod: scalar.h's step element by element; a row is
		 * combined in double and rounded once, as the reference does */
		if (lanes) {
			for (int64_t q = 0; q < n; q++)
				tset(po, q, ir_scalar_combine(op, tget(po, q, f32), tget(row, q, f32)),
				    f32);
		} else if (n > 0) {
			double r = tget(row, 0, f32);

			for (int64_t q = 1; q < n; q++)
				r = ir_scalar_combine(op, r, tget(row, q, f32));
			tset(po, 0, ir_scalar_combine(op, tget(po, 0, f32), r), f32);
		}
		return;
	}
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

/* An integer kernel's reduction of the input's valid box into the result
 * tile (indexed with the input's padded coords through ost: 0 on reduced
 * dims), from the integer neutral, with scalar.h's integer step. */
static void
reduce_int(Worker *w, const TileInst *in, const int64_t *osh, const int64_t *ost)
{
	const int64_t *sh = w->k->tile[in->in[0]].sh, *vi = w->valid[in->in[0]];
	const void *x = w->p[in->in[0]];
	void *o = w->p[in->res];
	DType dt = w->k->dt;
	int64_t on = w->k->tile[in->res].n, z = ir_scalar_neutral_i64(in->gop, dt);

	(void)osh;
	for (int64_t q = 0; q < on; q++)
		tseti(o, q, z, dt);
	for (int64_t i0 = 0; i0 < vi[0]; i0++)
		for (int64_t i1 = 0; i1 < vi[1]; i1++)
			for (int64_t i2 = 0; i2 < vi[2]; i2++)
				for (int64_t i3 = 0; i3 < vi[3]; i3++) {
					int64_t e = ((i0 * sh[1] + i1) * sh[2] + i2) * sh[3] + i3;
					int64_t oq = i0 * ost[0] + i1 * ost[1] + i2 * ost[2] + i3 * ost[3];

					tseti(o, oq, ir_scalar_combine_i64(in->gop, tgeti(o, oq, dt),
					    tgeti(x, e, dt)), dt);
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
	/* ax: the padded dim reduced, -1 all; a leading dim of extent 1
	 * past the four a tile holds is no padded dim (ax = -2: none) */
	int ax = in->axis < 0 ? -1 : (int)in->axis + 4 - rin < 0 ? -2 : (int)in->axis + 4 - rin;
	bool f32 = w->k->f32;
	const void *acc = in->nin == 2 ? w->p[in->in[1]] : NULL;
	int64_t on = w->k->tile[in->res].n;
	size_t es = w->k->es;

	/* The output indexed with the input's padded coords: reduced dims
	 * have stride 0 (the result tile's own layout is the same elements in
	 * the same order, whether or not the reduced dims are kept). */
	for (int d = 3; d >= 0; d--) {
		bool red = ax == -1 ? d >= 4 - rin : d == ax;

		osh[d] = red ? 1 : sh[d];
		ost[d] = red ? 0 : m;
		m *= osh[d];
	}
	if (w->k->ik) {
		reduce_int(w, in, osh, ost);
	} else {
		double z = ir_scalar_neutral(in->gop, w->k->dt);

		for (int64_t q = 0; q < on; q++)
			tset(o, q, z, f32);
	}
	for (int64_t i0 = 0; !w->k->ik && i0 < vi[0]; i0++)
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

		for (int q = 0; q < rin; q++) {
			int d = q + 4 - rin;
			bool red = in->axis < 0 || q == in->axis;

			if (!red)
				tmp[r++] = d >= 0 ? vi[d] : 1;
			else if (in->keepdims)
				tmp[r++] = 1;
		}
		pad4(rout, tmp, kv);
		memcpy(ov, kv, sizeof kv);
	}
	if (acc) {
		const int64_t *av = w->valid[in->in[1]];
		DType dt = w->k->dt;

		for (int64_t q = 0; w->k->ik && q < on; q++)
			tseti(o, q, ir_scalar_combine_i64(in->gop, tgeti(acc, q, dt), tgeti(o, q, dt)),
			    dt);
		for (int64_t q = 0; !w->k->ik && q < on; q++) {
			double c = tget(acc, q, f32), v = tget(o, q, f32);

			tset(o, q, ir_scalar_combine(in->gop, c, v), f32);
		}
		for (int d = 0; d < 4; d++)
			if (av[d] < ov[d])
				ov[d] = av[d];
	}
	return i + 1;
}

/* An integer dot: o = c + a b on tiles, wrapping (scalar.h's add and mul
 * on int64, stored in dt's low bits); a's rows lda apart, b and c and o
 * packed N wide.  o may be c (the plan aliases the accumulator), so each
 * element reads its c before it writes. */
static void
dot_int(DType dt, int64_t M, int64_t N, int64_t K, const void *a, int64_t lda, const void *b,
    const void *c, void *o)
{
	for (int64_t m = 0; m < M; m++)
		for (int64_t n = 0; n < N; n++) {
			int64_t s = tgeti(c, m * N + n, dt);

			for (int64_t p = 0; p < K; p++)
				s = ir_scalar_binary_i64(OP_ADD, s, ir_scalar_binary_i64(OP_MUL,
				    tgeti(a, m * lda + p, dt), tgeti(b, p * N + n, dt)));
			tseti(o, m * N + n, s, dt);
		}
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
	int z = w->k->zdot[i];

	/* an accumulator of zeros that was never filled (plan_zero_dots) */
	if (z == -2 || (z >= 0 && w->sc[w->k->f->insts[z].var] == w->k->f->insts[z].lo))
		c = NULL;

	/* Masked lanes hold the loads' other (0), so the whole tile is summed
	 * by the register-blocked micro-kernel; the loads packed a and b. */
	if (w->k->ik)
		dot_int(w->k->dt, M, N, K, a, w->ld[in->in[0]], b, c, o);
	else if (w->k->f32)
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
	size_t es = w->k->es;

	for (int d = 3; d >= 0; d--) {
		xs[d] = st;
		st *= ti->sh[d];
	}
	for (int d = 0; d < 4; d++) {
		/* (rank > 4: a source among the leading dims of extent 1 is
		 * walked once, at stride 0) */
		int src = d < p ? d : p + (int)in->perm[d - p];

		s[d] = src >= 0 ? xs[src] : 0;
		w->valid[in->res][d] = src >= 0 ? w->valid[in->in[0]][src] : 1;
	}
	/* whole elements: every type moves exactly (4 and 8 bytes as words:
	 * a memcpy call per element was most of an attention program's time,
	 * which transposes each block of K) */
	for (int64_t i0 = 0, q = 0; i0 < to->sh[0]; i0++)
		for (int64_t i1 = 0; i1 < to->sh[1]; i1++)
			for (int64_t i2 = 0; i2 < to->sh[2]; i2++) {
				int64_t b = i0 * s[0] + i1 * s[1] + i2 * s[2], n = to->sh[3];

				if (es == 4)
					for (int64_t i3 = 0; i3 < n; i3++)
						((uint32_t *)o)[q + i3] = ((const uint32_t *)x)[b + i3 * s[3]];
				else if (es == 8)
					for (int64_t i3 = 0; i3 < n; i3++)
						((uint64_t *)o)[q + i3] = ((const uint64_t *)x)[b + i3 * s[3]];
				else
					for (int64_t i3 = 0; i3 < n; i3++)
						memcpy(at(o, q + i3, es), at(x, b + i3 * s[3], es), es);
				q += n;
			}
	return i + 1;
}

/* extract: columns start .. start + n of each row of in[0] (packed: a
 * computed tile), n the result's row; the valid box keeps in[0]'s rows and
 * the part of its valid columns that falls inside. */
/* rows rows of wd elements of es bytes, from x (a row every xs elements)
 * to o (every os); short rows element by element as words, since a memcpy
 * call per row of one or two elements was most of the time of attention's
 * joins and extracts (its running max and sum are one column each). */
static void
copy_rows(char *o, int64_t os, const char *x, int64_t xs, int64_t wd, int64_t rows, size_t es)
{
	if (wd <= 8 && es == 4) {
		for (int64_t r = 0; r < rows; r++)
			for (int64_t j = 0; j < wd; j++)
				((uint32_t *)o)[r * os + j] = ((const uint32_t *)x)[r * xs + j];
	} else if (wd <= 8 && es == 8) {
		for (int64_t r = 0; r < rows; r++)
			for (int64_t j = 0; j < wd; j++)
				((uint64_t *)o)[r * os + j] = ((const uint64_t *)x)[r * xs + j];
	} else {
		for (int64_t r = 0; r < rows; r++)
			memcpy(o + (size_t)(r * os) * es, x + (size_t)(r * xs) * es, (size_t)wd * es);
	}
}

static int
op_extract(Worker *w, const TileInst *in, int i)
{
	const PTile *ti = &w->k->tile[in->in[0]], *to = &w->k->tile[in->res];
	const char *x = w->p[in->in[0]];
	char *o = w->p[in->res];
	size_t es = w->k->es;
	int64_t rows = to->n / to->sh[3], n = to->sh[3], m = ti->sh[3];
	int64_t *ov = w->valid[in->res], vc;

	copy_rows(o, n, x + (size_t)in->start * es, m, n, rows, es);
	memcpy(ov, w->valid[in->in[0]], sizeof w->valid[0]);
	vc = ov[3] - in->start;
	ov[3] = vc < 0 ? 0 : vc > n ? n : vc;
	return i + 1;
}

/* join: the operands' rows side by side; the valid box is the rows valid
 * in all of them and the columns up to the first operand not valid to its
 * end. */
static int
op_join(Worker *w, const TileInst *in, int i)
{
	const PTile *to = &w->k->tile[in->res];
	char *o = w->p[in->res];
	size_t es = w->k->es;
	int64_t rows = to->n / to->sh[3], n = to->sh[3], col = 0, *ov = w->valid[in->res];
	bool open = true;

	memcpy(ov, w->valid[in->in[0]], sizeof w->valid[0]);
	ov[3] = 0;
	for (int j = 0; j < in->nin; j++) {
		const PTile *tj = &w->k->tile[in->in[j]];
		const int64_t *vj = w->valid[in->in[j]];
		const char *x = w->p[in->in[j]];
		int64_t m = tj->sh[3];

		copy_rows(o + (size_t)col * es, n, x, m, m, rows, es);
		for (int d = 0; d < 3; d++)
			if (vj[d] < ov[d])
				ov[d] = vj[d];
		if (open) {
			ov[3] += vj[3];
			open = vj[3] == m;
		}
		col += m;
	}
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
	if (!has_simd(in->gop)) {
		binary_formula(in->gop, k->f32, n, a, fa, b, fb, at(w->p[in->res], lo, es));
		round_f32(w, in->res, lo, n);
		return;
	}
	if (k->f32)
		simd_binary_f32(simd_op_of(in->gop), n, a, fa, b, fb, at(w->p[in->res], lo, es));
	else
		simd_binary(simd_op_of(in->gop), n, a, fa, b, fb, at(w->p[in->res], lo, es));
	round_f32(w, in->res, lo, n);
}

/* Tile v's strides (elements) along the padded dims of a tile of shape
 * sh it stretches to: 0 along its dims of 1. */
static void
stretch_strides(const PKernel *k, int v, const int64_t *sh, int64_t *s)
{
	int64_t m = 1;

	for (int d = 3; d >= 0; d--) {
		s[d] = k->tile[v].sh[d] == 1 && sh[d] != 1 ? 0 : m;
		m *= k->tile[v].sh[d];
	}
}

/* A row run (tile_plan.c row_run): row by row, each op on the row, then
 * the row stored when the store can take rows (else it runs after).
 * When only the store reads the run's result (run_direct) and no
 * rounding to float follows, the last op writes each row where the store
 * would have copied it: a matmul epilogue's rows go from the
 * accumulator to the tensor in one pass instead of two (the copy was
 * 2 to 3% of the transformer layer's samples). */
static int
run_rows(Worker *w, int i, int end)
{
	const PKernel *k = w->k;
	const TileFn *f = k->f;
	int last = f->insts[end - 1].res;
	const int64_t *sh = k->tile[last].sh;
	int64_t n = k->tile[last].n, rs[3], (*sa)[4], (*sb)[4];
	size_t es = k->es;
	char *dst = NULL;
	bool direct;

	/* the operands' strides, once: in the worker's row-run scratch */
	sa = w->rowstr;
	sb = w->rowstr + (end - i);
	for (int q = i; q < end; q++)
		if (f->insts[q].op == TO_BINARY) {
			stretch_strides(k, f->insts[q].in[0], sh, sa[q - i]);
			stretch_strides(k, f->insts[q].in[1], sh, sb[q - i]);
		}
	if (end < f->ninsts && f->insts[end].op == TO_STORE && f->insts[end].in[0] == last)
		dst = tx_store_rows(w, end, rs);
	direct = dst && k->run_direct[i] && !k->acc[end].stream &&
	    (k->f32 || f->vals[last].dt != DT_F32);
	for (int64_t i0 = 0, lo = 0; i0 < sh[0]; i0++)
		for (int64_t i1 = 0; i1 < sh[1]; i1++)
			for (int64_t i2 = 0; i2 < sh[2]; i2++, lo += sh[3]) {
				char *drow = dst ? dst + (i0 * rs[0] + i1 * rs[1] + i2 * rs[2]) *
				    (int64_t)es : NULL;

				for (int q = i; q < end; q++) {
					const TileInst *in = &f->insts[q];
					const void *a, *b;
					void *o = direct && q == end - 1 ? (void *)drow :
					    at(w->p[in->res], lo, es);

					if (in->op == TO_UNARY) {
						unary_range_to(w, in, lo, sh[3], o);
						if (o != drow)
							round_f32(w, in->res, lo, sh[3]);
						continue;
					}
					const int64_t *xa = sa[q - i], *xb = sb[q - i];

					a = at(w->p[in->in[0]], i0 * xa[0] + i1 * xa[1] + i2 * xa[2], es);
					b = at(w->p[in->in[1]], i0 * xb[0] + i1 * xb[1] + i2 * xb[2], es);
					if (!has_simd(in->gop))
						binary_formula(in->gop, k->f32, sh[3], a, xa[3], b, xb[3], o);
					else if (k->f32)
						simd_binary_f32(simd_op_of(in->gop), sh[3], a, (int)xa[3], b,
						    (int)xb[3], o);
					else
						simd_binary(simd_op_of(in->gop), sh[3], a, (int)xa[3], b,
						    (int)xb[3], o);
					if (o != drow)
						round_f32(w, in->res, lo, sh[3]);
				}
				if (!dst || direct)
					continue;
				if (k->acc[end].stream)
					simd_copy_stream(drow, at(w->p[last], lo, es), es * (size_t)sh[3]);
				else
					memcpy(drow, at(w->p[last], lo, es), es * (size_t)sh[3]);
			}
	if (!dst)
		return end;
	w->wr += n * (int64_t)es;
	return end + 1;
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
	if (k->run_rows[i])
		return run_rows(w, i, end);
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
	[TO_WHERE] = op_where,
	[TO_REDUCE] = op_reduce,
	[TO_TRANSPOSE] = op_transpose,
	[TO_IM2COL] = tx_im2col,
	[TO_WINDOW_COUNT] = tx_window_count,
	[TO_WINDOW_MAX] = tx_window_reduce,
	[TO_WINDOW_SUM] = tx_window_reduce,
	[TO_LOAD_PAD] = tx_load_pad,
	[TO_LOAD_STEP] = tx_load_step,
	[TO_LOAD_GATHER] = tx_load_gather,
	[TO_BROADCAST] = tx_broadcast,
	[TO_ARGMAX] = tx_argreduce,
	[TO_ARGMIN] = tx_argreduce,
	[TO_EXTRACT] = op_extract,
	[TO_JOIN] = op_join,
};
