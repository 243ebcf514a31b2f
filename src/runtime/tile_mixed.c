/*
 * tile_mixed.c: kernels whose tiles are of several element types (tile_priv.h
 * has the executor's map).
 *
 * Most kernels hold every tile in one compute type (tile_plan.c's
 * compute_dt), and their ops run with no per-value type at all.  A kernel
 * that mixes integers with floats (a cast between them, a where choosing
 * floats by an integer compare) or i32 with i64 cannot: an i32 add must
 * wrap at 32 bits while an f32 beside it rounds.  So in a mixed kernel
 * (PKernel.mx) each tile holds its own value's type: a float in the
 * kernel's float type (f32 when every float value is f32, else f64, as in
 * a float kernel), an integer in its own type, a bool as a byte.  Each
 * instruction computes in one type, the type of its widest operand (bool <
 * i32 < i64 < float; a cast in its result's), and runs through the very
 * same op code as a one-type kernel, on a view of the kernel as one of
 * that type (PKernel.views, per DType: the same tiles and accesses with
 * dt, f32, ik and es changed).  An operand of another type is converted
 * into a scratch tile first; that only happens for a bool (a compare's
 * 0/1 made in its operands' type, read by a where or a logical op), so
 * the conversion is exact.  The tile builder types a fill (zeros, full)
 * and a loop's carried value started by one by the kernel's result, which
 * in a mixed kernel need not be what they hold (an f32 dot's accumulator
 * in a kernel whose result is its cast to i64): here a fill counts for
 * nothing in choosing a type, and a carried value takes its yield's, over
 * passes until the types settle.  Casts convert with the reference's rules
 * (DESIGN §12; exec.h's exec_set and exec_seti): float to integer
 * truncates toward zero and saturates with NaN 0, integer to float rounds
 * once, between integers the low bits.  Every tile is laid out 8 bytes an
 * element (PKernel.les) whatever it holds, so that one offset serves
 * every type.  A one-type kernel never comes here: its fast paths are
 * untouched.
 */
#include <stdlib.h>
#include <string.h>

#include "tile_priv.h"

/* An operand's order in choosing an instruction's type: the widest wins. */
static int
rank_of(DType dt)
{
	return ir_dtype_is_float(dt) ? 3 : dt == DT_I64 ? 2 : dt == DT_I32 ? 1 : 0;
}

static DType
wider(DType a, DType b)
{
	return rank_of(b) > rank_of(a) ? b : a;
}

/* An operand that counts in choosing an instruction's type: not a fill
 * (zeros, full: the builder types them by the kernel's result, whatever
 * they start, a dot's accumulator or a loop's sum), nor a loop's carried
 * value started by one, until its yield is typed. */
static DType
pick(const PKernel *k, const bool *weak, DType t, int v, bool *any)
{
	if (weak[v])
		return t;
	if (!*any) {
		*any = true;
		return k->vdt[v];
	}
	return wider(t, k->vdt[v]);
}

/* One pass over the body in program order (operands are typed before
 * their users; a loop's body follows its for); returns whether a type
 * changed. */
static bool
type_pass(PKernel *k, DType fdt, bool *weak)
{
	const TileFn *f = k->f;
	bool changed = false;

	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		DType t = DT_BOOL;
		bool any = false;

		switch (in->op) {
		case TO_UNARY:
			t = in->gop == OP_CAST ? k->vdt[in->res] : k->vdt[in->in[0]];
			break;
		case TO_BINARY: case TO_DOT:
			for (int j = 0; j < in->nin; j++)
				t = pick(k, weak, t, in->in[j], &any);
			if (!any)
				t = k->vdt[in->in[0]];
			break;
		case TO_WHERE:
			t = pick(k, weak, pick(k, weak, t, in->in[1], &any), in->in[2], &any);
			if (!any)
				t = k->vdt[in->in[1]];
			break;
		case TO_REDUCE: case TO_TRANSPOSE: case TO_STORE: case TO_EXTRACT: case TO_JOIN:
			t = k->vdt[in->in[0]];
			break;
		case TO_ATOMIC_ADD: case TO_ATOMIC_MAX:
			t = k->vdt[in->in[0]];
			k->atom_ik = !ir_dtype_is_float(t);
			break;
		case TO_FOR: {
			int y = f->insts[in->end].in[0];

			/* the carried value holds what its yield gives */
			if (!weak[y] && (weak[in->iter] || k->vdt[in->iter] != k->vdt[y])) {
				k->vdt[in->iter] = k->vdt[in->res] = k->vdt[y];
				weak[in->iter] = weak[in->res] = false;
				if (weak[in->in[0]])
					k->vdt[in->in[0]] = k->vdt[y];
				changed = true;
			}
			t = k->vdt[in->iter];
			break;
		}
		default:
			t = in->res >= 0 && f->vals[in->res].rank >= 0 ? k->vdt[in->res] : fdt;
			break;
		}
		if (k->idt[i] != t)
			changed = true;
		k->idt[i] = t;
		/* what the instruction makes is held in the type it computes in
		 * (a compare's bool in its operands' type, as 0 and 1) */
		if (in->res >= 0 && f->vals[in->res].rank >= 0 && in->op != TO_FOR &&
		    k->vdt[in->res] != t) {
			k->vdt[in->res] = t;
			changed = true;
		}
		if (in->res >= 0 && f->vals[in->res].rank >= 0 && in->op != TO_FOR &&
		    in->op != TO_ZEROS && in->op != TO_FULL)
			weak[in->res] = false;
	}
	return changed;
}

void
tx_plan_mixed(PKernel *k, DType fdt)
{
	const TileFn *f = k->f;
	size_t maxn = 0;
	bool *weak = xcalloc((size_t)f->nvals + 1, sizeof *weak);

	k->vdt = xcalloc((size_t)f->nvals + 1, sizeof *k->vdt);
	k->idt = xcalloc((size_t)f->ninsts + 1, sizeof *k->idt);
	for (int v = 0; v < f->nvals; v++) {
		DType dt = f->vals[v].dt;

		k->vdt[v] = ir_dtype_is_float(dt) ? fdt : dt;
		if (f->vals[v].rank >= 0 && (size_t)k->tile[v].n > maxn)
			maxn = (size_t)k->tile[v].n;
	}
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];

		if (in->op == TO_ZEROS || in->op == TO_FULL)
			weak[in->res] = true;
		if (in->op == TO_FOR && weak[in->in[0]])
			weak[in->iter] = weak[in->res] = true;
	}
	/* until the loops' carried values settle (a pass per nesting level) */
	for (int pass = 0; pass < 16 && type_pass(k, fdt, weak); pass++)
		;
	free(weak);
	k->les = 8;
	k->cvt_bytes = (maxn * 8 + 63) & ~(size_t)63;
	k->cvt_off = k->bytes;
	k->bytes += 3 * k->cvt_bytes;
	k->views = xcalloc(DT_COUNT, sizeof *k->views);
	for (int d = 0; d < DT_COUNT; d++) {
		PKernel *v = &k->views[d];

		*v = *k;
		v->dt = (DType)d;
		v->ik = !ir_dtype_is_float((DType)d);
		v->f32 = d == DT_F32;
		v->es = ir_dtype_size((DType)d);
	}
	/* the views share the base's arrays, and their own views are the
	 * base's (a loop's body switches views instruction by instruction) */
	for (int d = 0; d < DT_COUNT; d++)
		k->views[d].views = k->views;
}

/* Element e of a tile of type s, as element q of a tile of type t (a
 * bool's 0 or 1 either way, or a loop's carried value of one type). */
static void
convert(void *dst, int64_t q, DType t, const void *src, int64_t e, DType s)
{
	if (ir_dtype_is_float(s)) {
		double v = tget(src, e, s == DT_F32);

		if (ir_dtype_is_float(t))
			tset(dst, q, v, t == DT_F32);
		else
			tseti(dst, q, tint_of(v), t);
	} else {
		int64_t x = tgeti(src, e, s);

		if (ir_dtype_is_float(t))
			tset(dst, q, (double)x, t == DT_F32);
		else
			tseti(dst, q, x, t);
	}
}

/* Tile v (its rows w->ld[v] apart) converted to type t into dst, packed. */
static void
convert_tile(Worker *w, int v, DType t, void *dst)
{
	const PKernel *k = w->k;
	const int64_t *sh = k->tile[v].sh;
	int64_t rows = k->tile[v].n / (sh[3] ? sh[3] : 1), ld = w->ld[v];

	for (int64_t r = 0; r < rows; r++)
		for (int64_t c = 0; c < sh[3]; c++)
			convert(dst, r * sh[3] + c, t, w->p[v], r * ld + c, k->vdt[v]);
}

void
tx_copy_mixed(Worker *w, int dst, int src)
{
	const PKernel *k = w->k;

	if (k->vdt[dst] == k->vdt[src])
		memcpy(w->p[dst], w->p[src], ir_dtype_size(k->vdt[dst]) * (size_t)k->tile[dst].n);
	else
		convert_tile(w, src, k->vdt[dst], w->p[dst]);
}

/* cast (DESIGN §12) from its operand's tile type to its result's, with
 * the reference's rules (kern_CAST: exec_set from a float, exec_seti from
 * an integer). */
static void
cast_tile(Worker *w, const TileInst *in)
{
	const PKernel *k = w->k;
	const void *x = w->p[in->in[0]];
	void *o = w->p[in->res];
	DType s = k->vdt[in->in[0]], t = k->vdt[in->res], to = in->to;
	int64_t n = k->tile[in->res].n;

	for (int64_t i = 0; i < n; i++) {
		if (ir_dtype_is_float(s)) {
			double v = ir_scalar_cast(to, tget(x, i, s == DT_F32));

			if (ir_dtype_is_float(t))
				tset(o, i, v, t == DT_F32);
			else
				tseti(o, i, tint_of(v), t);
		} else {
			int64_t v = tgeti(x, i, s);

			if (to == DT_F32)
				tset(o, i, (double)(float)v, t == DT_F32);
			else if (ir_dtype_is_float(to))
				tset(o, i, (double)v, t == DT_F32);
			else
				tseti(o, i, ir_scalar_int_cast(to, v), t);
		}
	}
	memcpy(w->valid[in->res], w->valid[in->in[0]], sizeof w->valid[0]);
	w->fl += box(w->valid[in->res]);
}

int
tx_run_mixed(Worker *w, int i)
{
	const PKernel *k = &w->k->views[w->k->idt[i]];
	const TileInst *in = &k->f->insts[i];
	void *saved[3];
	int64_t sld[3];
	bool sw[3] = {false, false, false};
	int next;

	w->k = k;
	if (in->op == TO_UNARY && in->gop == OP_CAST) {
		cast_tile(w, in);
		return i + 1;
	}
	/* (a gather reads its indices exactly from their tensor, tile_copy.c) */
	if (in->op != TO_FOR && in->op != TO_YIELD && in->op != TO_LOAD_GATHER)
		for (int j = 0; j < in->nin && j < 3; j++) {
			int v = in->in[j];
			void *dst;

			bool again = false;

			if (v < 0 || k->f->vals[v].rank < 0 || k->vdt[v] == k->dt)
				continue;
			for (int q = 0; q < j; q++)
				again |= sw[q] && in->in[q] == v;
			if (again)       /* the same value twice: converted once */
				continue;
			dst = w->buf + k->cvt_off + (size_t)j * k->cvt_bytes;
			convert_tile(w, v, k->dt, dst);
			saved[j] = w->p[v];
			sld[j] = w->ld[v];
			sw[j] = true;
			w->p[v] = dst;
			w->ld[v] = k->tile[v].sh[3];
		}
	next = tx_ops[in->op](w, in, i);
	for (int j = 2; j >= 0; j--)
		if (sw[j]) {
			w->p[in->in[j]] = saved[j];
			w->ld[in->in[j]] = sld[j];
		}
	return next;
}
