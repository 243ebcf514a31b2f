/*
 * cost.c: closed-form traffic, configuration spaces, pruning and scores.
 *
 * A kernel is first reduced to an iteration space (the matmul's output, the
 * elementwise output, the reduction's operand, the widest row) whose every
 * dimension has a role: walked by rows (grid axis 0, BM at a time), by
 * columns (axis 1, BN), by batch (axis 2, one per program) or held whole by
 * each program (a reduced axis).  An external operand's tile is then the
 * product of its own dimensions under broadcasting: a dimension of 1 gives 1,
 * a row dimension the program's valid rows, a column one its valid columns,
 * a whole one its full extent.  Summed over the grid that is a product of
 * per-axis sums, so the bytes of any configuration cost O(operands), not
 * O(programs): 576 candidates score in microseconds.  A view (a layout op
 * folded into the loads) is an operand of its own shape, its stretched dims
 * read once per tile.  Every formula here is
 * written out in docs/passes.md; the traffic rules are the shared contract
 * (lower-tiled and the tile executor count the same).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cost.h"
#include "diag.h"
#include "row_passes.h"
#include "window.h"

/* ---- checked arithmetic ---------------------------------------------- */

static int64_t
mul(bool *ok, int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r)) {
		*ok = false;
		return 0;
	}
	return r;
}

static int64_t
add(bool *ok, int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r)) {
		*ok = false;
		return 0;
	}
	return r;
}

static int64_t
cdiv(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

static int64_t
pow2_ceil(int64_t v)
{
	int64_t p = 1;

	while (p < v && p < ((int64_t)1 << 62))
		p <<= 1;
	return p;
}

static int64_t
numel(bool *ok, const Type *t)
{
	int64_t n = 1;

	for (int i = 0; i < t->rank; i++)
		n = mul(ok, n, t->dim[i]);
	return n;
}

/* ---- the kernel model ------------------------------------------------ */

typedef enum Role { RO_BATCH, RO_ROW, RO_COL, RO_WHOLE } Role;

/* An operand produced outside the kernel, reduced to what its tiles need. */
typedef struct Ext {
	bool row, col;               /* it has a row / column dimension > 1 */
	bool bad;                    /* does not broadcast: whole value per program */
	unsigned dims;               /* bit per iteration dimension it has (> 1) */
	unsigned str;                /* of those, a view's stretched ones (stride
	                              * 0) that a program walks whole: loaded
	                              * once per tile along them, not per element */
	int64_t whole;               /* product of its whole-role dimensions */
	int64_t numel;
	int64_t es;                  /* its element's bytes (a kernel may mix types:
	                              * a compare's bool, a cast's operand) */
	int node;                    /* the operand's node */
	int inner, outer;            /* the iteration dims of its last and second-to-last
	                              * dims of more than 1 element (-1: none) */
	bool strided;                /* a view whose last such dim is not of stride 1 */
	int unit;                    /* then its iteration dim of stride 1, or -1 */
	int64_t npass;               /* row_reduction in passes: the passes reading it */
	int pass;                    /* the last pass counted in npass */
} Ext;

struct CostModel {
	Problem p;
	Type it;                     /* the iteration space */
	Role role[IR_MAX_RANK];
	int mm;                      /* the matmul node, or -1 */
	int red;                     /* the root when it reduces, or -1 */
	int nred;                    /* matmul kinds: reduced grid axes as bits */
	int64_t out_numel;           /* the root's elements */
	int64_t in_bytes;            /* opaque: every input once */
	const Graph *g;              /* copy_loads reads the copy op's node */
	int copy;                    /* opaque: the copy op (pad, ..), or -1 */
	int split;                   /* the kernel's own split attribute */
	int rax;                     /* a reduction's reduced dim (not full), or -1 */
	bool g_mean;                 /* the reducing root is a mean */
	Ext *ext;
	int next;
	int64_t flops, mm_flops;
	int64_t mm_es;               /* the matmul operands' element bytes */
	int64_t vec_flops;           /* flops of the non-matmul nodes */
	int64_t pass_flops;          /* row_reduction in passes: the row values
	                              * computed again by later passes */
	/* conv2d (an implicit GEMM) and the pools (windowed reductions): their
	 * own rows of the model (window_traffic) */
	bool win;
	OpId wop;
	Window w;
	int64_t taps_in;             /* sum over taps of the output pixels whose
	                              * tap lies inside the input */
	/* an attention kernel: its match (attention.c), its own rows of the
	 * model (attn_traffic) */
	bool attn;
	AttnMatch am;
};
typedef struct CostModel Model;

/* The kind lower-tiled gives a single op outside any kernel. */
static KernelKind
cost_single_kind(OpId op)
{
	switch (ir_ops[op].cls) {
	case OC_CONTRACTION:
	case OC_CONV:
		return KK_MATMUL;
	case OC_POOL:
		return KK_OPAQUE;
	case OC_REDUCTION:
	case OC_ARGREDUCE:
		return KK_REDUCTION;
	case OC_LAYOUT:
	case OC_COPY:
		return KK_OPAQUE;
	default:
		return KK_ELEMENTWISE;
	}
}

static void
roles_rows_cols(Model *m)
{
	for (int i = 0; i < m->it.rank; i++)
		m->role[i] = i == m->it.rank - 1 ? RO_COL : RO_ROW;
}

/* Elementwise and opaque: [BM, BN] tiles over the last two dimensions;
 * the leading ones (rank 3, 4) are flattened into grid axis 2, one
 * position per program, as lower-tiled does. */
static void
rows_cols_batch(Model *m, bool *ok)
{
	int r = m->it.rank;

	roles_rows_cols(m);
	m->p.n = r ? m->it.dim[r - 1] : 1;
	m->p.m = r >= 2 ? m->it.dim[r - 2] : 1;
	for (int i = 0; i + 2 < r; i++) {
		m->role[i] = RO_BATCH;
		m->p.batch = mul(ok, m->p.batch, m->it.dim[i]);
	}
}

/* The operands a kernel has met so far, a set of node indices (an index
 * + 1 a slot, 0 empty, at most half full): compared with a list of them,
 * each operand of a fused chain of 40k ops cost a scan of the others. */
typedef struct Seen {
	int *slot;
	size_t cap;                  /* a power of two */
} Seen;

/* Enters node v; false when it was there. */
static bool
seen_add(Seen *s, int v)
{
	uint64_t h = (uint64_t)(uint32_t)v * 0x9e3779b97f4a7c15u;
	size_t m = s->cap - 1, k;

	for (k = (size_t)(h ^ h >> 32) & m; s->slot[k]; k = (k + 1) & m)
		if (s->slot[k] == v + 1)
			return false;
	s->slot[k] = v + 1;
	return true;
}

static bool
inside(int v, int first, int last)
{
	return v >= first && v <= last;
}

/* Whether node i of kernel first..last is a view (lower-tiled's rule: a
 * layout op that is not the root of a kernel of a computing kind). */
static bool
is_view(const Graph *g, KernelKind kind, int first, int last, int i)
{
	return ir_kind_has_views(kind) && inside(i, first, last) && i != last && ir_is_view_op(g, i);
}

/* The view that view v of kernel first..last reads its base through (the
 * chain above it composed; the base's element bytes in *es); false when
 * it is none (lower-tiled then refuses the kernel). */
static bool
view_chain(const Graph *g, KernelKind kind, int first, int last, int v, IrView *out,
    int64_t *es)
{
	int p = g->nodes[v].in[0];
	const char *why;

	if (is_view(g, kind, first, last, p)) {
		if (!view_chain(g, kind, first, last, p, out, es))
			return false;
	} else {
		ir_view_dense(&g->nodes[p].type, out);
		*es = (int64_t)ir_dtype_size(g->nodes[p].type.dt);
	}
	return ir_view_apply(g, v, out, &why);
}

/* Enters operand v (not met before) into m->ext.  A view is an operand of
 * its own shape (lower-tiled loads it so) whose stretched dims (stride 0)
 * read one element per tile: along a row or column dim that is what a
 * broadcast dim costs (the tile once per program), along a dim walked
 * whole it is once per block of the walk (str). */
static void
add_ext(Model *m, const Graph *g, int v, bool *ok)
{
	const Type *t = &g->nodes[v].type;
	int64_t ves = -1;
	bool zero[IR_MAX_RANK] = {0}, strided = false;
	int unit = -1;
	Ext *e;

	if (is_view(g, m->p.kind, m->p.first, m->p.last, v)) {
		IrView iv;

		if (!view_chain(g, m->p.kind, m->p.first, m->p.last, v, &iv, &ves)) {
			*ok = false;
			return;
		}
		for (int k = 0; k < t->rank; k++)
			zero[k] = iv.stride[k] == 0 && t->dim[k] != 1;
		for (int k = t->rank - 1; k >= 0; k--)
			if (t->dim[k] != 1 && !zero[k]) {
				strided = iv.stride[k] != 1;
				break;
			}
		/* a transposed view still reads runs along its dim of stride 1 */
		for (int k = 0; k < t->rank && strided; k++)
			if (t->dim[k] != 1 && iv.stride[k] == 1)
				unit = k;
	}
	int off = m->it.rank - t->rank;

	e = &m->ext[m->next++];
	memset(e, 0, sizeof *e);
	e->node = v;
	e->strided = strided;
	e->unit = unit >= 0 && off >= 0 ? unit + off : -1;
	e->inner = e->outer = -1;
	for (int i = t->rank - 1; i >= 0 && off >= 0; i--)
		if (t->dim[i] != 1 && !zero[i]) {
			if (e->inner < 0)
				e->inner = i + off;
			else if (e->outer < 0)
				e->outer = i + off;
		}
	e->npass = 1;
	e->whole = 1;
	e->numel = 1;
	for (int i = 0; i < t->rank; i++)
		e->numel = mul(ok, e->numel, zero[i] ? 1 : t->dim[i]);
	e->es = ves > 0 ? ves : (int64_t)ir_dtype_size(t->dt);
	if (off < 0 || m->p.kind == KK_OPAQUE) {
		e->bad = true;
		return;
	}
	for (int i = 0; i < t->rank; i++) {
		int64_t d = t->dim[i];

		if (d == 1) {
			/* a real dimension of 1 is masked like any other (it
			 * matters where a split chunk runs past it) */
			if (m->it.dim[i + off] == 1)
				e->dims |= 1u << (i + off);
			continue;
		}
		if (d != m->it.dim[i + off]) {
			e->bad = true;
			return;
		}
		e->dims |= 1u << (i + off);
		if (zero[i]) {
			if (m->role[i + off] == RO_WHOLE)
				e->str |= 1u << (i + off);
			continue;
		}
		switch (m->role[i + off]) {
		case RO_ROW:
			e->row = true;
			break;
		case RO_COL:
			e->col = true;
			break;
		case RO_WHOLE:
			e->whole = mul(ok, e->whole, d);
			break;
		case RO_BATCH:
			break;
		}
	}
}

static int64_t node_flops(const Graph *g, int i, bool *ok);
static void window_build(const Graph *g, KernelKind kind, int first, int last, Model *m);

/* A row_reduction's program in passes (row_passes.h), for when its row
 * does not fit: how many passes read each row operand (the others load
 * once, before the passes), and the flops of the row values that more than
 * one pass computes, counted again for each pass after the first. */
static void
row_passes_model(Model *m, const Graph *g, int first, int last, bool *ok)
{
	size_t span = (size_t)(last - first) + 2, cap = 16;
	int *val = xmalloc(sizeof(int) * 3 * span), *red = val + span, *mark = red + span;
	int *slot, np;

	/* operand node -> its Ext, an open-addressed map (index + 1; 0 empty) */
	while (cap < 2 * (size_t)m->next + 2)
		cap *= 2;
	slot = xcalloc(cap, sizeof *slot);
	for (int x = 0; x < m->next; x++) {
		size_t k = (size_t)m->ext[x].node * 0x9e3779b9u & (cap - 1);

		while (slot[k])
			k = (k + 1) & (cap - 1);
		slot[k] = x + 1;
		if (row_passes_is_row(g, first, last, m->ext[x].node))
			m->ext[x].npass = 0;
	}
	memset(mark, 0, sizeof(int) * span);
	np = row_passes_plan(g, first, last, val, red);
	for (int p = 0; p < np; p++) {
		int stamp = p + 1;

		row_passes_cone(g, first, last, val[p], mark, stamp);
		for (int i = first; i <= last + 1; i++) {
			const Node *n = i <= last ? &g->nodes[i] : NULL;
			int nin = n ? n->nin : 1;

			if (n && mark[i - first] != stamp)
				continue;
			if (n && ir_is_elementwise(n->op))
				m->pass_flops = add(ok, m->pass_flops, node_flops(g, i, ok));
			/* the operands that this pass loads: those of its marked
			 * nodes, and (i == last + 1) the pass's value itself */
			for (int j = 0; j < nin; j++) {
				int x = n ? n->in[j] : val[p];
				size_t k = (size_t)x * 0x9e3779b9u & (cap - 1);
				Ext *e;

				if (row_passes_computed(g, first, last, x) ||
				    !row_passes_is_row(g, first, last, x))
					continue;
				while (slot[k] && m->ext[slot[k] - 1].node != x)
					k = (k + 1) & (cap - 1);
				if (!slot[k])
					AICM_BUG("row pass reads '%%%s', not an operand of the kernel",
					    g->nodes[x].name);
				e = &m->ext[slot[k] - 1];
				if (e->pass != stamp) {
					e->pass = stamp;
					e->npass++;
				}
			}
		}
	}
	/* each row value once is the fitting program's count already */
	for (int i = first; i <= last; i++)
		if (ir_is_elementwise(g->nodes[i].op) && row_passes_is_row(g, first, last, i))
			m->pass_flops = add(ok, m->pass_flops, -node_flops(g, i, ok));
	free(slot);
	free(val);
}

/* ---- attention ------------------------------------------------------ */

/* An attention kernel (lower_attention.c): batch B, M queries, N keys, Q·K
 * width d (Problem.k), V's width dv. */
static void
attn_build(const Graph *g, int first, int last, Model *m)
{
	const char *why;
	AttnMatch *a = &m->am;
	bool ok = true;

	m->attn = true;
	if (!attn_match_range(g, first, last, a, &why)) {
		m->p.ok = false;
		return;
	}
	m->p.batch = a->batch;
	m->p.m = a->m;
	m->p.n = a->n;
	m->p.k = a->d;
	m->out_numel = mul(&ok, a->batch, mul(&ok, a->m, a->dv));
	/* the two dots, and per score the scale, the mask, the max, the
	 * subtraction, the clamp, the exp and the sum (docs/passes.md) */
	m->mm_flops = mul(&ok, mul(&ok, 2, a->batch), mul(&ok, mul(&ok, a->m, a->n),
	    a->d + a->dv));
	m->vec_flops = mul(&ok, mul(&ok, a->batch, mul(&ok, a->m, a->n)),
	    5 + (a->ss.node >= 0) + (a->mask != AM_NONE));
	m->flops = add(&ok, m->mm_flops, m->vec_flops);
	m->p.ok = ok;
}

/* The bytes of one batch's loads of x as tiles of its last two dims: rows
 * and cols elements of it, in rb and cb tiles.  A dim that is 1 (a mask
 * broadcast) or a view's dim of stride 0 (an expand folded in) reads one
 * element per tile, as the executor counts (tile_access.c). */
static int64_t
attn_load(const Model *m, int x, int64_t rows, int64_t rb, int64_t cols, int64_t cb, bool *ok)
{
	const Graph *g = m->g;
	const Type *t = &g->nodes[x].type;
	IrView v;
	int r = t->rank;

	attn_view_base(g, &m->am, x, &v);
	if (r >= 2 && (t->dim[r - 2] == 1 || v.stride[r - 2] == 0))
		rows = rb;
	if (r < 2)
		rows = rb;
	if (r >= 1 && (t->dim[r - 1] == 1 || v.stride[r - 1] == 0))
		cols = cb;
	if (r < 1)
		cols = cb;
	return mul(ok, mul(ok, rows, cols), (int64_t)ir_dtype_size(t->dt));
}

/* A program owns BM rows of Q and walks all of K and V in blocks of BN:
 * Q and O once, K and V once per row block, and the mask's tile per block
 * (its rows the program's, or 1 where the mask broadcasts them; its
 * columns the block's, or 1), by every program of the batch axis. */
static void
attn_traffic(const Model *m, const TileConfig *c, Traffic *t)
{
	const AttnMatch *a = &m->am;
	bool ok = m->p.ok;
	int64_t es = (int64_t)ir_dtype_size(a->dt), gm, nb, ld, st;

	if (!ok || c->bm <= 0 || c->bn <= 0)
		return;
	gm = cdiv(a->m, c->bm);
	nb = cdiv(a->n, c->bn);
	t->grid[0] = gm;
	t->grid[1] = 1;
	t->grid[2] = a->batch;
	t->programs = mul(&ok, gm, a->batch);
	/* Q [BM, d] once; K [d, BN] (Kᵀ given) or [BN, d] and V [BN, dv]
	 * once per row block */
	ld = attn_load(m, a->q, a->m, gm, a->d, 1, &ok);
	ld = add(&ok, ld, mul(&ok, gm, a->k_given_t ? attn_load(m, a->k, a->d, 1, a->n, nb, &ok) :
	    attn_load(m, a->k, a->n, nb, a->d, 1, &ok)));
	ld = add(&ok, ld, mul(&ok, gm, attn_load(m, a->v, a->n, nb, a->dv, 1, &ok)));
	if (a->mask != AM_NONE)
		ld = add(&ok, ld, attn_load(m, a->mask_val, a->m, gm, a->n, nb, &ok));
	ld = mul(&ok, ld, a->batch);
	st = mul(&ok, m->out_numel, es);
	t->loaded = ld;
	t->stored = st;
	t->flops = m->flops;
	t->mm_flops = m->mm_flops;
	t->pad_mm_flops = 2.0 * (double)a->batch * (double)(a->d + a->dv) *
	    ((double)(gm * c->bm) * (double)(nb * c->bn) - (double)a->m * (double)a->n);
	t->pad_vec_flops = (double)m->vec_flops * ((double)(gm * c->bm) * (double)(nb * c->bn) /
	    ((double)a->m * (double)a->n) - 1.0);
	/* one dot pair a block; the carried tile [BM, dv + 2] in and out */
	t->steps = mul(&ok, t->programs, nb);
	t->attn_steps = t->steps;
	t->acc_bytes = 2.0 * (double)t->steps * (double)c->bm * (double)(a->dv + 2) * (double)es;
	t->mm_foot = (double)c->bm * (double)(a->dv + 2) * (double)es;
	/* the tiles a program holds in a block (lower_attention.c): the
	 * scores and what the softmax makes of them ([BM, BN]: the dot's
	 * zero, s, s - max, exp), K's block and its transpose, V's block, Q
	 * and Q scaled, and the carried state in, scaled and out; the
	 * softmax's ops read and write their tiles, as an elementwise
	 * kernel's (cost_model_traffic) */
	{
		double bm = (double)(c->bm < a->m ? c->bm : a->m), bn = (double)(c->bn < a->n ? c->bn : a->n);

		t->tile_foot = (double)es * (4.0 * bm * bn + 2.0 * bn * (double)a->d + bn * (double)a->dv +
		    2.0 * bm * (double)a->d + 4.0 * bm * (double)(a->dv + 2));
		t->tile_bytes = 2.0 * ((double)m->vec_flops + t->pad_vec_flops) * (double)es;
	}
	t->ok = ok;
}

/* Fills m from nodes first..last taken as a kernel of the given kind.
 * m->ext is malloc'd (free it). */
static void
model_build(const Graph *g, KernelKind kind, int first, int last, Model *m)
{
	bool ok = true;
	const Node *root = &g->nodes[last];
	Seen seen = {NULL, 16};

	memset(m, 0, sizeof *m);
	m->mm = m->red = m->rax = m->copy = -1;
	m->g = g;
	if (kind == KK_OPAQUE && first == last && ir_ops[root->op].cls == OC_COPY)
		m->copy = last;
	m->p.kind = kind;
	m->p.first = first;
	m->p.last = last;
	m->p.dt = root->type.dt;
	m->p.batch = 1;
	m->p.ok = true;
	for (int i = first; i <= last; i++)
		if (g->nodes[i].type.rank < 0) {
			m->p.ok = false;
			return;
		}
	/* argmax and argmin reduce along their one axis as a sum over it
	 * would: the same grid and each element of x read once (in x's own
	 * type, as every operand), the i64 result written once */
	if (ir_ops[root->op].cls == OC_REDUCTION || ir_ops[root->op].cls == OC_ARGREDUCE)
		m->red = last;
	if (ir_ops[root->op].cls == OC_CONV || ir_ops[root->op].cls == OC_POOL ||
	    kind == KK_CONV_EPILOGUE) {
		window_build(g, kind, first, last, m);
		return;
	}
	if (kind == KK_ATTENTION) {
		attn_build(g, first, last, m);
		return;
	}
	switch (kind) {
	case KK_MATMUL:
	case KK_MATMUL_EPILOGUE: {
		const Node *mn;

		for (int i = first; i <= last && m->mm < 0; i++)
			if (g->nodes[i].op == OP_MATMUL)
				m->mm = i;
		if (m->mm < 0) {
			m->p.ok = false;
			return;
		}
		m->mm_es = (int64_t)ir_dtype_size(g->nodes[m->mm].type.dt);
		mn = &g->nodes[m->mm];
		{
			/* numpy's matmul as lower-tiled tiles it: the result
			 * with a 1-D operand's dim of 1 put back, its batch
			 * dims flattened on grid axis 2 */
			const Type *ta = &g->nodes[mn->in[0]].type, *tb = &g->nodes[mn->in[1]].type;
			int nb = mn->type.rank - (ta->rank > 1) - (tb->rank > 1);

			m->it = mn->type;
			m->it.rank = nb + 2;
			m->it.dim[nb] = ta->rank == 1 ? 1 : ta->dim[ta->rank - 2];
			m->it.dim[nb + 1] = tb->rank == 1 ? 1 : tb->dim[tb->rank - 1];
			rows_cols_batch(m, &ok);
			m->p.k = ta->dim[ta->rank - 1];
		}
		if (m->red == m->mm)
			m->red = -1;
		if (m->red >= 0) {
			const Node *rn = &g->nodes[m->red];
			bool mask[IR_MAX_RANK];

			ir_reduce_mask(rn, g->nodes[rn->in[0]].type.rank, mask);
			if (!ir_type_eq(&g->nodes[rn->in[0]].type, &m->it))
				m->red = -1;     /* not over the matmul's space: stored as is */
			for (int i = 0; m->red >= 0 && i < m->it.rank; i++)
				if (mask[i])
					m->nred |= 1 << m->role[i];
		}
		break;
	}
	case KK_REDUCTION:
		if (m->red < 0) {
			/* no reduction at the root: tiled like an elementwise kernel */
			m->it = root->type;
			rows_cols_batch(m, &ok);
			break;
		} else {
			const Node *rn = &g->nodes[m->red];
			int ax;

			bool mask[IR_MAX_RANK];

			m->it = g->nodes[rn->in[0]].type;
			if (ir_ops[rn->op].cls == OC_ARGREDUCE) {
				/* one axis, 0 when not given (shape.c) */
				ax = (rn->at.set & AB(AXIS)) ? (int)rn->at.axis : 0;
				if (ax < 0)
					ax += m->it.rank;
				for (int i = 0; i < m->it.rank; i++)
					mask[i] = i == ax;
			} else {
				ax = ir_reduce_axis(rn, m->it.rank);
				ir_reduce_mask(rn, m->it.rank, mask);
			}
			if (ax == -1) {
				m->p.full_reduce = true;
				for (int i = 0; i < m->it.rank; i++)
					m->role[i] = RO_WHOLE;
				m->p.m = 1;
				m->p.n = numel(&ok, &m->it);
			} else {
				/* the last kept dimension is tiled by BM; the other
				 * kept ones go to grid axis 2, as lower-tiled does;
				 * the reduced ones (one axis or several) are walked
				 * inside each program */
				int lastkept = -1;

				m->p.m = 1;
				m->p.n = 1;
				for (int i = 0; i < m->it.rank; i++)
					if (!mask[i])
						lastkept = i;
					else if (m->rax < 0)
						m->rax = i;     /* the outermost: split= cuts it */
				for (int i = 0; i < m->it.rank; i++) {
					m->role[i] = mask[i] ? RO_WHOLE : i == lastkept ? RO_ROW : RO_BATCH;
					if (mask[i])
						m->p.n = mul(&ok, m->p.n, m->it.dim[i]);
					else if (i == lastkept)
						m->p.m = m->it.dim[i];
					else
						m->p.batch = mul(&ok, m->p.batch, m->it.dim[i]);
				}
			}
		}
		break;
	case KK_ROW_REDUCTION: {
		int64_t best = -1;

		for (int i = first; i <= last; i++) {
			int64_t e = numel(&ok, &g->nodes[i].type);

			if (e > best && !is_view(g, kind, first, last, i)) {
				best = e;
				m->it = g->nodes[i].type;
			}
		}
		/* rows are the second-to-last dimension, the leading ones go to
		 * grid axis 2, the row itself is one whole block */
		rows_cols_batch(m, &ok);
		if (m->it.rank >= 1)
			m->role[m->it.rank - 1] = RO_WHOLE;
		m->red = -1;             /* its reductions are per row, inside */
		break;
	}
	case KK_ELEMENTWISE:
	case KK_OPAQUE:
	default:
		m->it = root->type;
		rows_cols_batch(m, &ok);
		if (kind != KK_REDUCTION)
			m->red = -1;
		break;
	}
	m->out_numel = numel(&ok, &root->type);
	m->g_mean = m->red >= 0 && g->nodes[m->red].op == OP_MEAN;
	{
		size_t nops = 0;         /* operands: where has three, concat any */

		for (int i = first; i <= last; i++)
			nops += (size_t)g->nodes[i].nin;
		m->ext = xcalloc(nops + 1, sizeof *m->ext);
		while (seen.cap < 2 * nops + 2)
			seen.cap *= 2;
	}
	seen.slot = xcalloc(seen.cap, sizeof *seen.slot);
	for (int i = first; i <= last; i++) {
		const Node *n = &g->nodes[i];
		int64_t f;

		if (is_view(g, kind, first, last, i))
			continue;    /* no op: its consumers' loads read through it */
		f = node_flops(g, i, &ok);

		if (n->op == OP_MEAN)
			f = add(&ok, f, numel(&ok, &n->type));
		m->flops = add(&ok, m->flops, f);
		if (i == m->mm) {
			m->mm_flops = f;
			continue;
		}
		m->vec_flops = add(&ok, m->vec_flops, f);
		for (int j = 0; j < n->nin; j++)
			if ((!inside(n->in[j], first, last) ||
			    is_view(g, kind, first, last, n->in[j])) && seen_add(&seen, n->in[j])) {
				if (kind == KK_OPAQUE)
					m->in_bytes = add(&ok, m->in_bytes,
					    numel(&ok, &g->nodes[n->in[j]].type));
				add_ext(m, g, n->in[j], &ok);
			}
	}
	free(seen.slot);
	if (kind == KK_ROW_REDUCTION)
		row_passes_model(m, g, first, last, &ok);
	m->p.ok = ok;
}

/* ---- conv2d and the pools ------------------------------------------- */

static int64_t
floordiv(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* The output positions o in [0, n_out) whose tap at o*s + off lies in
 * [0, n_in), summed over the taps off = k*d - p, k < kn. */
static int64_t
taps_inside(int64_t n_out, int64_t n_in, int64_t s, int64_t kn, int64_t d, int64_t p, bool *ok)
{
	int64_t sum = 0;

	for (int64_t k = 0; k < kn; k++) {
		int64_t off = k * d - p;
		/* 0 <= o*s + off < n_in  <=>  ceil(-off/s) <= o <= floor((n_in-1-off)/s) */
		int64_t lo = -floordiv(off, s), hi = floordiv(n_in - 1 - off, s);

		lo = lo < 0 ? 0 : lo;
		hi = hi > n_out - 1 ? n_out - 1 : hi;
		if (hi >= lo)
			sum = add(ok, sum, hi - lo + 1);
	}
	return sum;
}

/* A conv_epilogue's operands from outside it, each once (as lower-tiled
 * loads them, conv_operand): row = it has the output's pixels (OH*OW), col
 * = its filters (F); a dim of 1 or a missing one is one element per
 * program.  m->ext is malloc'd. */
static void
conv_epilogue_exts(const Graph *g, int first, int last, Model *m, bool *ok)
{
	size_t nops = 0;
	Seen seen = {NULL, 16};

	for (int i = first + 1; i <= last; i++)
		nops += (size_t)g->nodes[i].nin;
	m->ext = xcalloc(nops + 1, sizeof *m->ext);
	while (seen.cap < 2 * nops + 2)
		seen.cap *= 2;
	seen.slot = xcalloc(seen.cap, sizeof *seen.slot);
	for (int i = first + 1; i <= last; i++) {
		const Node *n = &g->nodes[i];

		if (!ir_is_elementwise(n->op) || n->type.dt != g->nodes[first].type.dt)
			*ok = false;
		m->flops = add(ok, m->flops, node_flops(g, i, ok));
		for (int j = 0; j < n->nin; j++) {
			const Type *t = &g->nodes[n->in[j]].type;
			Ext *e;
			int64_t d[4];

			if (inside(n->in[j], first, last) || !seen_add(&seen, n->in[j]))
				continue;
			e = &m->ext[m->next++];
			e->es = (int64_t)ir_dtype_size(t->dt);
			if (t->rank > 4) {
				*ok = false;
				continue;
			}
			for (int k = 0; k < 4; k++)
				d[k] = k - (4 - t->rank) >= 0 ? t->dim[k - (4 - t->rank)] : 1;
			e->col = d[1] != 1;
			e->row = d[2] * d[3] != 1;
		}
	}
	free(seen.slot);
}

/* conv2d's and the pools' model: the geometry of the shape rule and the
 * counts of the in-bounds taps (the reads im2col makes); a conv_epilogue
 * adds its elementwise ops' flops and operands. */
static void
window_build(const Graph *g, KernelKind kind, int first, int last, Model *m)
{
	const Node *n = &g->nodes[kind == KK_CONV_EPILOGUE ? first : last];
	char err[IR_ERR_MAX];
	Loc at;
	bool ok = true;
	Window *w = &m->w;

	m->win = true;
	m->wop = n->op;
	if (kind == KK_CONV_EPILOGUE ? n->op != OP_CONV2D :
	    first != last || (n->op == OP_CONV2D ? kind != KK_MATMUL : kind != KK_OPAQUE)) {
		m->p.ok = false;
		return;
	}
	if (ir_window_of(g, n, w, err, &at) != 0) {
		m->p.ok = false;
		return;
	}
	m->taps_in = mul(&ok, taps_inside(w->oh, w->h, w->sh, w->kh, w->dh, w->pt, &ok),
	    taps_inside(w->ow, w->w, w->sw, w->kw, w->dw, w->pl, &ok));
	m->out_numel = numel(&ok, &n->type);
	m->flops = node_flops(g, (int)(n - g->nodes), &ok);
	if (n->op == OP_CONV2D) {
		m->p.m = mul(&ok, w->n, mul(&ok, w->oh, w->ow));
		m->p.n = w->f;
		m->p.k = mul(&ok, w->c / w->groups, mul(&ok, w->kh, w->kw));
		m->mm_flops = m->flops;
		if (w->bias)
			m->flops = add(&ok, m->flops, m->out_numel);
		if (kind == KK_CONV_EPILOGUE)
			conv_epilogue_exts(g, first, last, m, &ok);
	} else {
		m->p.m = mul(&ok, w->n, w->c);
		m->p.n = mul(&ok, w->oh, w->ow);
		if (n->op == OP_AVG_POOL2D)
			m->flops = add(&ok, m->flops, m->out_numel);
	}
	m->vec_flops = m->flops - m->mm_flops;
	m->p.ok = ok;
}

/* The traffic of lower-tiled's programs (lower_conv, lower_pool), counted
 * as the executor counts it.  conv2d: grid (N * ceil(P/BM), ceil(F/BN')),
 * BN' the block of filters inside a group (ir_conv_block_n); each program
 * loads every K step's w tile (all of w's rows and K once per pixel
 * block), the bias tile, and packs im2col tiles whose reads are the taps
 * inside the input: Cg channels x taps_in per image and filter block.
 * Pools: grid (ceil(P/BN), ceil(N*C/BM)); every plane reads its in-bounds
 * taps once; each output is stored once. */
static void
window_traffic(const Model *m, const TileConfig *c, Traffic *t)
{
	bool ok = m->p.ok;
	const Window *w = &m->w;
	int64_t es = (int64_t)ir_dtype_size(m->p.dt), P, ld, epi = 0;

	if (!ok || c->bm <= 0 || c->bn <= 0)
		return;
	P = mul(&ok, w->oh, w->ow);
	if (m->wop == OP_CONV2D) {
		int64_t bn = ir_conv_block_n(w, c->bn), pb = cdiv(P, c->bm), fb = cdiv(w->f, bn);
		int64_t cg = w->c / w->groups, steps;

		if (c->bk <= 0)
			return;
		t->grid[0] = mul(&ok, w->n, pb);
		t->grid[1] = fb;
		t->grid[2] = 1;
		t->programs = mul(&ok, t->grid[0], fb);
		ld = mul(&ok, mul(&ok, t->grid[0], w->f), m->p.k);                /* w */
		ld = add(&ok, ld, mul(&ok, mul(&ok, w->n, fb), mul(&ok, cg, m->taps_in))); /* im2col */
		if (w->bias)
			ld = add(&ok, ld, mul(&ok, t->grid[0], w->f));
		/* a conv_epilogue's operands: per image, each pixel block
		 * loads its pixels (or one), each filter block its filters
		 * (or one) */
		for (int i = 0; i < m->next; i++) {
			const Ext *e = &m->ext[i];
			int64_t v = mul(&ok, w->n, mul(&ok, e->row ? P : pb, e->col ? w->f : fb));

			epi = add(&ok, epi, mul(&ok, v, e->es));
		}
		steps = mul(&ok, t->programs, cdiv(m->p.k, c->bk));
		t->steps = steps;
		t->acc_bytes = 2.0 * (double)steps * (double)bn * (double)c->bm * (double)es;
		t->pad_mm_flops = 2.0 * ((double)t->grid[0] * (double)c->bm * (double)fb *
		    (double)bn * (double)cdiv(m->p.k, c->bk) * (double)c->bk -
		    (double)m->p.m * (double)m->p.n * (double)m->p.k);
		/* a conv_epilogue's ops run on whole tiles, masked lanes too (a
		 * lone conv's bias add is left out, as it always was) */
		if (m->p.kind == KK_CONV_EPILOGUE)
			t->pad_vec_flops = (double)m->vec_flops * ((double)t->grid[0] *
			    (double)c->bm * (double)fb * (double)bn / ((double)m->p.m *
			    (double)m->p.n) - 1.0);
	} else {
		t->grid[0] = cdiv(P, c->bn);
		t->grid[1] = cdiv(m->p.m, c->bm);
		t->grid[2] = 1;
		t->programs = mul(&ok, t->grid[0], t->grid[1]);
		ld = mul(&ok, m->p.m, m->taps_in);
	}
	t->loaded = add(&ok, mul(&ok, ld, es), epi);
	t->stored = mul(&ok, m->out_numel, es);
	t->flops = m->flops;
	t->mm_flops = m->mm_flops;
	t->ok = ok;
}

/* A node's flops by the op table's rule, every product checked: an
 * overflow clears *ok, so that the model says it does not know the kernel
 * (ir_node_flops, used by the work limit, saturates at INT64_MAX instead). */
static int64_t
node_flops(const Graph *g, int i, bool *ok)
{
	const Node *n = &g->nodes[i];

	switch (ir_ops[n->op].flops) {
	case FL_PER_OUT:
		return numel(ok, &n->type);
	case FL_PER_IN:
		return numel(ok, &g->nodes[n->in[0]].type);
	case FL_MATMUL: {
		const Type *a = &g->nodes[n->in[0]].type;

		return mul(ok, mul(ok, 2, numel(ok, &n->type)), a->dim[a->rank - 1]);
	}
	case FL_CONV:
	case FL_POOL: {
		int64_t f = ir_node_flops(g, i);

		if (f == INT64_MAX)
			*ok = false;
		return f;
	}
	case FL_NONE:
	default:
		return 0;
	}
}

static void
model_of_kernel(const Graph *g, int k, Model *m)
{
	const Kernel *kn = &g->kernels[k];

	model_build(g, kn->kind, kn->first, kn->last, m);
	if (kn->kset & (1u << KA_SPLIT))
		m->split = (int)kn->kattr[KA_SPLIT];
}

void
cost_problem(const Graph *g, KernelKind kind, int first, int last, Problem *p)
{
	Model m;

	model_build(g, kind, first, last, &m);
	*p = m.p;
	free(m.ext);
}

/* A full reduction loops over every dimension of its operand's space, outer
 * to inner, the last two in blocks of BN and BM, the others one at a time;
 * with split=S the outermost loop is cut into S chunks (a whole number of
 * blocks each, the last ones masked).  An operand is loaded right after the
 * innermost loop over a dimension it has, so a stretched dimension outside
 * that loop reloads it once per iteration: its elements are its full extent
 * along its own dimensions times the iteration counts of the others up to
 * there (lower-tiled places loads exactly so). */
static int64_t
full_reduce_loads(const Model *m, const Ext *e, const TileConfig *c, int split, bool *ok)
{
	int r = m->it.rank, inner = -1;
	int64_t v = 1;

	for (int j = 0; j < r; j++)
		if (e->dims & (1u << j))
			inner = j;
	if (inner < 0)
		return split > 1 ? split : 1;
	for (int j = 0; j <= inner; j++) {
		int64_t ext = j == r - 1 ? c->bn : j == r - 2 ? c->bm : 1, it;

		if (e->str & (1u << j)) {
			/* a stretched dim of a view: one element per block */
			v = mul(ok, v, cdiv(m->it.dim[j], ext));
			continue;
		}
		if (e->dims & (1u << j)) {
			v = mul(ok, v, m->it.dim[j]);
			continue;
		}
		if (j == 0 && split > 1) {
			int64_t per = cdiv(m->it.dim[0], split);

			it = mul(ok, split, cdiv(per, ext));
		} else {
			it = cdiv(m->it.dim[j], ext);
		}
		v = mul(ok, v, it);
	}
	return v;
}

/* |[lo, hi) n [0, span)|: lanes of tiles covering [0, span) that fall on
 * an operand occupying [lo, hi) of the result's coordinates. */
static int64_t
overlap(int64_t lo, int64_t hi, int64_t span)
{
	lo = lo < 0 ? 0 : lo;
	hi = hi > span ? span : hi;
	return hi > lo ? hi - lo : 0;
}

/* The elements a copy program loads over its grid, as the executor counts
 * them (tile_copy.c; docs/passes.md "Copy programs"): the tiles of the
 * result's dim j cover [0, G_j * ext_j), G_j = ceil(S_j / ext_j), ext the
 * block of lower-tiled's rule (BN last, BM second to last, else 1), and
 * the lanes of a load are a product over dims.  pad and concat (load_pad)
 * read the lanes inside each operand's place; slice (load_step) the lanes
 * from each tile's first element to the operand's edge, so along a sliced
 * dim min(L, G_j * ext_j) with L the steps from the slice's first element
 * to that edge (past the slice's end when it stops inside: the store
 * masks them); gather's data (load_gather) the result's elements; gather's index tile
 * is loaded whole by each program along the other dims; expand loads its
 * operand once per program along the dims it is stretched on. */
static int64_t
copy_loads(const Model *m, const TileConfig *c, int64_t *idx_bytes, bool *ok)
{
	const Graph *g = m->g;
	const Node *n = &g->nodes[m->copy];
	const Type *t = &n->type, *x = &g->nodes[n->in[0]].type;
	int R = t->rank;
	int64_t ext[IR_MAX_RANK], G[IR_MAX_RANK], v = 1;

	for (int j = 0; j < R; j++) {
		ext[j] = j == R - 1 ? c->bn : j == R - 2 ? c->bm : 1;
		G[j] = cdiv(t->dim[j], ext[j]);
	}
	switch (n->op) {
	case OP_PAD: {
		IntTuple p = ir_attr_ints(&n->at, ATTR_PADS);

		for (int j = 0; j < R; j++)
			v = mul(ok, v, overlap(p.v[j], p.v[j] + x->dim[j], mul(ok, G[j], ext[j])));
		return v;
	}
	case OP_CONCAT: {
		int ax = (int)(n->at.axis < 0 ? n->at.axis + R : n->at.axis);
		int64_t c0 = 0, sum = 0;

		for (int q = 0; q < n->nin; q++) {
			const Type *o = &g->nodes[n->in[q]].type;

			v = 1;
			for (int j = 0; j < R; j++)
				v = mul(ok, v, j == ax ? overlap(c0, c0 + o->dim[j], mul(ok, G[j], ext[j])) :
				    o->dim[j]);
			sum = add(ok, sum, v);
			c0 += o->dim[ax];
		}
		return sum;
	}
	case OP_GATHER: {
		const Type *it = &g->nodes[n->in[1]].type;
		int ax = (int)(n->at.axis < 0 ? n->at.axis + x->rank : n->at.axis);

		/* the indices in their own type (i32 or i64), as bytes; the
		 * gathered elements in the kernel's */
		v = numel(ok, it);
		for (int j = 0; j < R; j++)
			if (j < ax || j >= ax + it->rank)
				v = mul(ok, v, G[j]);
		*idx_bytes = mul(ok, v, (int64_t)ir_dtype_size(it->dt));
		return numel(ok, t);
	}
	case OP_EXPAND:
		for (int j = 0; j < R; j++) {
			int k = j - (R - x->rank);
			bool has = k >= 0 && !(x->dim[k] == 1 && t->dim[j] != 1);

			v = mul(ok, v, has ? t->dim[j] : G[j]);
		}
		return v;
	case OP_SLICE: {
		IntTuple st = ir_attr_ints(&n->at, ATTR_STARTS), en = ir_attr_ints(&n->at, ATTR_ENDS);
		IntTuple ax = ir_attr_ints(&n->at, ATTR_AXES), sp = ir_attr_ints(&n->at, ATTR_STEPS);
		int64_t lanes[IR_MAX_RANK];

		for (int j = 0; j < R; j++)
			lanes[j] = t->dim[j];
		for (int i = 0; i < st.n; i++) {
			int64_t k = ax.n > 0 ? ax.v[i] : i, first, len, step = sp.n > 0 ? sp.v[i] : 1;
			int64_t L;

			if (k < 0)
				k += R;
			ir_slice_range(x->dim[k], st.v[i], en.v[i], step, &first, &len);
			/* each tile's valid lanes run from its first element to
			 * the edge: the tiles together min(L, G * ext) of them */
			L = step > 0 ? cdiv(x->dim[k] - first, step) : first / -step + 1;
			lanes[k] = L < mul(ok, G[k], ext[k]) ? L : mul(ok, G[k], ext[k]);
		}
		for (int j = 0; j < R; j++)
			v = mul(ok, v, lanes[j]);
		return v;
	}
	default:
		return numel(ok, t);
	}
}

/* The blocks along a view's stretched whole dims (Ext.str) that its loads
 * are repeated for, one element each: a reduction walks its last reduced
 * dim in blocks of BN (a dim before the last four one index at a time)
 * and the others one index at a time; a row_reduction holds its row in
 * one block. */
static int64_t
str_blocks(const Model *m, const Ext *e, const TileConfig *c, bool *ok)
{
	int r = m->it.rank, last = -1;
	int64_t v = 1;

	if (!e->str || m->p.kind == KK_ROW_REDUCTION)
		return 1;
	for (int j = 0; j < r; j++)
		if (m->role[j] == RO_WHOLE)
			last = j;
	for (int j = 0; j < r; j++)
		if (e->str & (1u << j))
			v = mul(ok, v, j == last && j + 4 >= r ? cdiv(m->it.dim[j], c->bn) :
			    m->it.dim[j]);
	return v;
}


/* The contiguity term (docs/passes.md "autotune"): the extent of a tile
 * along iteration dim j for configuration c, as lower-tiled walks it. */
static int64_t
tile_extent(const Model *m, const TileConfig *c, int j)
{
	int r = m->it.rank, lastwhole = -1;

	switch (m->role[j]) {
	case RO_ROW:
		return c->bm;
	case RO_COL:
		return c->bn;
	case RO_BATCH:
		return 1;
	case RO_WHOLE:
	default:
		break;
	}
	if (m->p.kind == KK_ROW_REDUCTION)
		return row_passes_fit(m->p.n, c->bn, ROW_TILE_MAX) ? pow2_ceil(m->it.dim[j]) :
		    c->bn > ROW_TILE_MAX ? ROW_TILE_MAX : c->bn;
	if (m->p.full_reduce)
		return j == r - 1 ? c->bn : j == r - 2 ? c->bm : 1;
	for (int i = 0; i < r; i++)
		if (m->role[i] == RO_WHOLE)
			lastwhole = i;
	return j == lastwhole ? c->bn : 1;
}

/* The elements of one contiguous run of a tile of a dense operand whose
 * last two dims of more than 1 element are iteration dims inner and outer
 * (-1: none): the tile's extent along inner, times its extent along outer
 * when the tile holds whole rows of inner and outer lies just above it. */
static int64_t
run_elems(const Model *m, const TileConfig *c, int inner, int outer)
{
	int64_t run, x;

	if (inner < 0)
		return 1;
	x = tile_extent(m, c, inner);
	run = x < m->it.dim[inner] ? x : m->it.dim[inner];
	if (x >= m->it.dim[inner] && outer == inner - 1 && outer >= 0) {
		int64_t y = tile_extent(m, c, outer);

		run *= y < m->it.dim[outer] ? y : m->it.dim[outer];
	}
	return run > 0 ? run : 1;
}

/* Adds to t the runs that `elems` elements of `es` bytes make in runs of
 * `run` elements, and the unused bytes of the cache lines they touch. */
static void
add_runs(Traffic *t, double elems, int64_t run, int64_t es, bool strided)
{
	double segs, rb;

	if (elems <= 0)
		return;
	if (strided) {
		/* each element its own access; its line is shared by the
		 * tile's neighbouring rows, so no waste is charged */
		t->segs += elems;
		return;
	}
	segs = elems / (double)run;
	rb = (double)(run * es);
	t->segs += segs;
	t->line_waste += segs * ((double)cdiv(run * es, COST_LINE) * COST_LINE - rb);
}

/* The model's traffic for one configuration. */
static void
model_traffic(const Model *m, const TileConfig *c, Traffic *t)
{
	bool ok = m->p.ok;
	const Problem *p = &m->p;
	int64_t es = (int64_t)ir_dtype_size(p->dt);
	int64_t gm = 1, gn = 1, rows_pad, cols_pad, ld = 0, st = 0, ldb = 0, blk;
	int split = c->split > 0 ? c->split : m->split;
	int64_t parts;
	/* a row_reduction whose row does not fit loops once per reduction */
	bool passes = p->kind == KK_ROW_REDUCTION && !row_passes_fit(p->n, c->bn, ROW_TILE_MAX);
	double pad_it;

	memset(t, 0, sizeof *t);
	if (m->win) {
		window_traffic(m, c, t);
		return;
	}
	if (m->attn) {
		attn_traffic(m, c, t);
		return;
	}
	if (!ok || c->bm <= 0 || c->bn <= 0)
		return;
	switch (p->kind) {
	case KK_MATMUL:
	case KK_MATMUL_EPILOGUE:
		if (c->bk <= 0)
			return;
		gm = cdiv(p->m, c->bm);
		gn = cdiv(p->n, c->bn);
		t->grid[0] = gm;
		t->grid[1] = gn;
		t->grid[2] = p->batch;
		break;
	case KK_REDUCTION:
		if (m->red >= 0) {
			/* split=S: S programs along axis 1 per row block (along
			 * axis 0 when no dim is kept), as lower-tiled has it */
			gm = p->full_reduce ? (split > 1 ? split : 1) : cdiv(p->m, c->bm);
			t->grid[0] = gm;
			t->grid[1] = 1;
			t->grid[2] = p->batch;
			if (!p->full_reduce && split > 1) {
				if (m->it.rank > 1)
					t->grid[1] = split;
				else
					t->grid[0] = split;
			}
			break;
		}
		/* no reduction at the root: tiled as elementwise */
		/* FALLTHROUGH */
	case KK_ELEMENTWISE:
	case KK_OPAQUE:
		gm = cdiv(p->m, c->bm);
		gn = cdiv(p->n, c->bn);
		t->grid[0] = m->it.rank <= 1 ? gn : gm;
		t->grid[1] = m->it.rank <= 1 ? 1 : gn;
		t->grid[2] = p->batch;
		break;
	case KK_ROW_REDUCTION:
		gm = cdiv(p->m, c->bm);
		t->grid[0] = gm;
		t->grid[1] = 1;
		t->grid[2] = p->batch;
		break;
	default:
		return;
	}
	t->programs = mul(&ok, mul(&ok, t->grid[0], t->grid[1]), t->grid[2]);

	/* the matmul's operands: A once per column tile, B once per row tile */
	if (m->mm >= 0) {
		ldb = add(&ok, ldb, mul(&ok, mul(&ok, mul(&ok, mul(&ok, gn, p->m), p->k), p->batch),
		    m->mm_es));
		ldb = add(&ok, ldb, mul(&ok, mul(&ok, mul(&ok, mul(&ok, gm, p->k), p->n), p->batch),
		    m->mm_es));
	}
	/* external operands, each once per program as the tile it needs */
	if (p->kind == KK_OPAQUE) {
		int64_t idx = 0;

		ld = add(&ok, ld, m->copy >= 0 ? copy_loads(m, c, &idx, &ok) : m->in_bytes);
		ldb = add(&ok, ldb, idx);
	} else {
		for (int i = 0; i < m->next; i++) {
			const Ext *e = &m->ext[i];
			int64_t v;

			if (e->bad) {
				v = mul(&ok, e->numel, t->programs);
			} else if (p->full_reduce && m->red >= 0) {
				v = full_reduce_loads(m, e, c, split, &ok);
			} else {
				v = mul(&ok, e->row ? p->m : gm, e->col ? p->n : gn);
				v = mul(&ok, v, e->whole);
				v = mul(&ok, v, p->batch);
				v = mul(&ok, v, str_blocks(m, e, c, &ok));
				if (passes)
					v = mul(&ok, v, e->npass);
				/* split: one lacking the reduced dim is loaded
				 * before the loop, by each of the S programs */
				if (m->red >= 0 && m->rax >= 0 && split > 1 &&
				    !(e->dims & (1u << m->rax)))
					v = mul(&ok, v, split);
			}
			ldb = add(&ok, ldb, mul(&ok, v, e->es));
			if (e->bad)
				continue;
			add_runs(t, (double)v, e->strided ? run_elems(m, c, e->unit, -1) :
			    run_elems(m, c, e->inner, e->outer), e->es, e->strided && e->unit < 0);
			/* a transposed view's tile row touches one line per
			 * element: when those lines fill COST_L1, each is gone
			 * before the next row reads its next element */
			if (e->strided && e->inner >= 0 &&
			    (double)tile_extent(m, c, e->inner) * COST_LINE >= COST_L1)
				t->line_waste += (double)v * (double)(COST_LINE - e->es);
		}
	}
	/* the output: stored once, or combined by atomics when the reduced
	 * axes span several programs (initialised to the identity first) */
	parts = 1;
	{
		if (m->red >= 0 && m->mm >= 0) {
			if (m->nred & (1 << RO_ROW))
				parts = mul(&ok, parts, gm);
			if (m->nred & (1 << RO_COL))
				parts = mul(&ok, parts, gn);
			if (m->nred & (1 << RO_BATCH))
				parts = mul(&ok, parts, p->batch);
		} else if (m->red >= 0 && p->kind == KK_REDUCTION && split > 1) {
			parts = split;
		}
		st = m->out_numel;
		if (parts > 1) {
			int64_t atom = mul(&ok, parts, m->out_numel);

			st = add(&ok, st, atom);
			ld = add(&ok, ld, atom);
		}
	}
	t->loaded = add(&ok, mul(&ok, ld, es), ldb);
	t->stored = mul(&ok, st, es);
	/* runs of the matmul's A ([BM, BK] tiles of M x K) and B ([BK, BN] of
	 * K x N), and of the stores: whole output rows of a row_reduction, BM
	 * elements of a reduction's kept dim, else BN of the root's row */
	if (m->mm >= 0) {
		int64_t ra = c->bk < p->k ? c->bk : p->k, rb = c->bn < p->n ? c->bn : p->n;

		if (c->bk >= p->k)
			ra *= c->bm < p->m ? c->bm : p->m;
		if (c->bn >= p->n)
			rb *= c->bk < p->k ? c->bk : p->k;
		add_runs(t, (double)gn * (double)p->m * (double)p->k * (double)p->batch, ra,
		    m->mm_es, false);
		add_runs(t, (double)gm * (double)p->k * (double)p->n * (double)p->batch, rb,
		    m->mm_es, false);
	}
	if (p->kind != KK_OPAQUE) {
		int64_t run;

		if (m->red >= 0 && m->mm < 0)
			run = p->full_reduce ? 1 : c->bm < p->m ? c->bm : p->m;
		else if (p->kind == KK_ROW_REDUCTION)
			run = (c->bm < p->m ? c->bm : p->m) * p->n;
		else
			run = c->bn < p->n ? c->bn : c->bm < p->m ? (int64_t)c->bm * p->n : p->m * p->n;
		add_runs(t, (double)st, run > 0 ? run : 1, es, false);
	}
	t->flops = passes ? add(&ok, m->flops, m->pass_flops) : m->flops;
	t->mm_flops = m->mm_flops;
	if (parts > 1 && m->red >= 0 && m->g_mean)
		/* mean scales each partial (x/N) before its atomic add */
		t->flops = add(&ok, t->flops, mul(&ok, parts - 1, m->out_numel));

	/* padding: what the masked lanes of boundary tiles would compute */
	rows_pad = cdiv(p->m, c->bm) * c->bm;
	blk = passes && c->bn > ROW_TILE_MAX ? ROW_TILE_MAX : c->bn;
	cols_pad = p->kind == KK_ROW_REDUCTION && !passes ? pow2_ceil(p->n) : cdiv(p->n, blk) * blk;
	if (p->kind == KK_REDUCTION && p->full_reduce)
		rows_pad = 1;
	if (m->mm >= 0) {
		double mp = (double)rows_pad, np = (double)cols_pad;
		double kp = (double)(cdiv(p->k, c->bk) * c->bk);

		t->pad_mm_flops = 2.0 * (double)p->batch *
		    (mp * np * kp - (double)p->m * (double)p->n * (double)p->k);
		t->steps = mul(&ok, t->programs, cdiv(p->k, c->bk));
		t->acc_bytes = 2.0 * (double)t->steps * (double)c->bm * (double)c->bn * (double)es;
		t->mm_foot = (double)c->bm * c->bn * (double)es;
		/* the native dot (docs/codegen.md) packs b in strips 256 bytes
		 * wide and walks the rows of a, read in place, past each strip
		 * of a step in turn: a's [BM, BK] block is read once a strip */
		{
			double bm = (double)(c->bm < p->m ? c->bm : p->m), bk = (double)(c->bk < p->k ? c->bk : p->k);
			double strips = (double)cdiv((int64_t)(c->bn < p->n ? c->bn : p->n) * m->mm_es, 256);

			t->a_foot = bm * bk * (double)m->mm_es;
			t->a_reread = (double)t->steps * t->a_foot * (strips - 1.0);
		}
	} else if (m->red >= 0 && p->kind == KK_REDUCTION) {
		/* a reduction's programs walk the reduced extent in tiles: one
		 * loop step per tile, as the matmul's per K block */
		int64_t tile = p->full_reduce ? (int64_t)c->bm * c->bn : c->bn;
		int64_t per = p->full_reduce && split > 1 ? cdiv(p->n, split) : p->n;

		t->steps = mul(&ok, t->programs, cdiv(per, tile));
		/* reduced along the row: a loop step reads BN elements of each
		 * of the program's BM rows, BM streams side by side.  A core's
		 * prefetchers stop at a page: segments of a page or more are
		 * read one after the other, one stream at a time, as a tile of
		 * whole rows (one contiguous block) is.  Rows shorter than a
		 * page are no streams to speak of (their prefetch never gets
		 * going): no such term.  The BM rows are in flight together
		 * only while a step's segment of each is short (COST_FLY_SEG) */
		if (!p->full_reduce && m->rax == m->it.rank - 1 && m->it.rank >= 2 &&
		    m->role[m->it.rank - 2] == RO_ROW && p->n * es >= COST_PAGE) {
			t->fly_rows = c->bn < p->n && (int64_t)c->bn * es <= COST_FLY_SEG ?
			    (double)(c->bm < p->m ? c->bm : p->m) : 1.0;
			t->fly_bytes = (double)ldb;
			/* each row's next segment continues its stream */
			if (c->bn < p->n)
				t->fly_segs = (double)ldb / (double)es / (double)c->bn;
		}
	} else if (p->kind == KK_ROW_REDUCTION && passes) {
		int64_t np = 1;

		for (int i = 0; i < m->next; i++)
			if (m->ext[i].npass > np)
				np = m->ext[i].npass;
		t->steps = mul(&ok, mul(&ok, t->programs, np), cdiv(p->n, c->bn));
	}
	pad_it = (double)rows_pad * (double)cols_pad / ((double)p->m * (double)p->n) - 1.0;
	if (p->kind != KK_OPAQUE && pad_it > 0)
		t->pad_vec_flops = (double)m->vec_flops * pad_it;
	/* the tiles one program holds at once (every op's result and every
	 * operand's tile, of BM x BN, or BM rows of a row_reduction), and the
	 * bytes its elementwise ops read and write through them */
	if (p->kind != KK_OPAQUE) {
		double rows = (double)(c->bm < p->m ? c->bm : p->m), cols;

		if (p->kind == KK_ROW_REDUCTION)
			cols = (double)(passes ? blk : pow2_ceil(p->n));
		else
			cols = (double)(c->bn < p->n ? c->bn : p->n);
		if (p->kind == KK_REDUCTION && p->full_reduce)
			rows = (double)c->bm;
		t->tile_foot = rows * cols * (double)es * (double)(p->last - p->first + 1 + m->next);
		t->tile_bytes = 2.0 * ((double)m->vec_flops + t->pad_vec_flops) * (double)es;
	}
	t->ok = ok;
}

CostModel *
cost_model_new(const Graph *g, int kernel)
{
	Model *m = xmalloc(sizeof *m);

	model_of_kernel(g, kernel, m);
	return m;
}

void
cost_model_free(CostModel *m)
{
	if (m)
		free(m->ext);
	free(m);
}

const Problem *
cost_model_problem(const CostModel *m)
{
	return &m->p;
}

void
cost_model_traffic(const CostModel *m, const TileConfig *c, Traffic *out)
{
	model_traffic(m, c, out);
}

void
cost_traffic_range(const Graph *g, KernelKind kind, int first, int last, const TileConfig *c,
    Traffic *out)
{
	Model m;

	model_build(g, kind, first, last, &m);
	model_traffic(&m, c, out);
	free(m.ext);
}

void
cost_traffic(const Graph *g, int kernel, const TileConfig *c, Traffic *out)
{
	Model m;

	model_of_kernel(g, kernel, &m);
	model_traffic(&m, c, out);
	free(m.ext);
}

void
cost_traffic_node(const Graph *g, int node, const TileConfig *c, Traffic *out)
{
	cost_traffic_range(g, cost_single_kind(g->nodes[node].op), node, node, c, out);
}

/* ---- targets --------------------------------------------------------- */

/* Sources: NVIDIA's H100 SXM5, H200 SXM and A100 SXM4 80 GB data sheets and
 * CUDA occupancy tables (dense, no sparsity); rubin is a projection (8 TB/s
 * class HBM4, H100's per-SM limits).  The two cpu rows model one core of this
 * machine (AMD EPYC family 25, Zen 3: L1d 32 KiB, L2 512 KiB), each fitted
 * on its own engine by bench/calibrate.py: cpu the native engine (aicm-run
 * --engine=native), cpu-tile the tile engine.  `make calibrate` times both
 * again and writes both rows (and the comment line above each, which says
 * when and under what load); docs/perf.md, "Calibrating the cpu targets",
 * has the data and the fit's error.  Their l2-kb (the cache a program's
 * tiles must fit) is fitted too: the tile engine's materialised op tiles
 * the L2, the native engine's local-array tiles a quarter of it.  The last
 * three (streams, rows-gbs, reread-gbs) are the native engine's alone
 * (its reductions' row streams, its dot's strips): 0 for the tile engine,
 * whose row is session 14's (docs/perf.md, session 15). */
const Target cost_targets[] = {
	{"h100", 3350, 132, 227, 65536, 255, 67, 495, 34, 67, 2.5, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"h200", 4800, 132, 227, 65536, 255, 67, 495, 34, 67, 2.5, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"a100", 2039, 108, 163, 65536, 255, 19.5, 156, 9.7, 19.5, 3.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"rubin", 8000, 224, 227, 65536, 255, 100, 1200, 50, 100, 2.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	/* cpu: bench/calibrate.py fit on the native engine, 784 timings, AMD EPYC (family 26 model 2), 2026-12-03 23:35 to 23:41 UTC, load 0.91 to 0.76; timings bench/cal/cpu-2026-12-03-2335.times.log, bench/cal/cpu-2026-12-03-2338.times.log, bench/cal/cpu-2026-12-03-2340.times.log */
	{"cpu", 398.5, 1, 512, 16777216, 65536, 0.117, 0.2379, 0.007853, 0.01933, 0, 0, 0, 0, 1.988, 128, 1024, 0.9498, 0, 0, 95.33},
	/* cpu-tile: bench/calibrate.py fit on the tile engine, 784 timings, AMD EPYC (family 26 model 2), 2026-12-03 23:33 to 23:52 UTC, load 0.65 to 0.80; timings bench/cal/cpu-tile-2026-12-03-2333.times.log, bench/cal/cpu-tile-2026-12-03-2341.times.log, bench/cal/cpu-tile-2026-12-03-2351.times.log */
	{"cpu-tile", 305.3, 1, 512, 16777216, 65536, 0.1528, 0.3989, 0.00358, 0.007579, 0, 0.05867, 0.0172, 123.8, 4.806, 512, 48, 2.261, 0, 0, 0},
	{0},
};

const char *const cost_param_keys[COST_NPARAMS] = {
#define X(f, key, help) key,
	COST_TARGET_PARAMS(X)
#undef X
};

const Target *
cost_target_lookup(const char *name)
{
	for (int i = 0; cost_targets[i].name; i++)
		if (!strcmp(cost_targets[i].name, name))
			return &cost_targets[i];
	return NULL;
}

void
cost_target_names(StrBuf *b)
{
	for (int i = 0; cost_targets[i].name; i++)
		strbuf_printf(b, "%s%s", i ? ", " : "", cost_targets[i].name);
}

double *
cost_target_param(Target *t, int i)
{
	double *p[COST_NPARAMS] = {
#define X(f, key, help) &t->f,
		COST_TARGET_PARAMS(X)
#undef X
	};

	if (i < 0 || i >= COST_NPARAMS)
		AICM_BUG("target parameter %d out of range", i);
	return p[i];
}

double
cost_target_param_get(const Target *t, int i)
{
	Target c = *t;

	return *cost_target_param(&c, i);
}

/* ---- spaces ---------------------------------------------------------- */

const char *const cost_prune_names[PR_COUNT] = {
	"kept", "block larger than the problem", "shared memory", "registers",
};

static const int mm_blocks[] = {16, 32, 64, 128};
static const int warps_set[] = {2, 4, 8};
static const int stages_set[] = {2, 3, 4};
static const int ew_bm[] = {1, 4, 16, 64};
static const int ew_bn[] = {32, 64, 128, 256, 512, 1024};
static const int red_bm[] = {1, 2, 4, 8, 16, 32, 64};
static const int red_bn[] = {32, 64, 128, 256, 512, 1024};

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The per-kind axes of the space: BM values, BN values (NULL: the row's
 * power of two), BK values (NULL: no K loop), warps, stages (NULL: none). */
typedef struct Space {
	const int *bm, *bn, *bk, *stages;
	int nbm, nbn, nbk, nstages;
} Space;

static Space
space_of(KernelKind kind)
{
	switch (kind) {
	case KK_MATMUL:
	case KK_MATMUL_EPILOGUE:
	case KK_CONV_EPILOGUE:      /* the conv's implicit GEMM: the matmul's space */
		return (Space){mm_blocks, mm_blocks, mm_blocks, stages_set, 4, 4, 4, 3};
	case KK_REDUCTION:
		return (Space){red_bm, red_bn, NULL, NULL, LEN(red_bm), LEN(red_bn), 0, 0};
	case KK_ROW_REDUCTION:
		return (Space){red_bm, NULL, NULL, NULL, LEN(red_bm), 0, 0, 0};
	case KK_OPAQUE:
		return (Space){mm_blocks, mm_blocks, NULL, NULL, 4, 4, 0, 0};
	case KK_ATTENTION:           /* BM queries, BN keys a block */
		return (Space){mm_blocks, mm_blocks, NULL, NULL, 4, 4, 0, 0};
	case KK_ELEMENTWISE:
	default:
		return (Space){ew_bm, ew_bn, NULL, NULL, LEN(ew_bm), LEN(ew_bn), 0, 0};
	}
}

static int space_gen(const Space *sp, const int *bnv, int nbn, int64_t rowbn,
    TileConfig *out);

int
cost_space(const Problem *p, TileConfig *out)
{
	Space s = space_of(p->kind);
	int nbn = s.bn ? s.nbn : 1;
	int64_t rowbn = pow2_ceil(p->n);

	if (rowbn > (1 << 30))
		rowbn = 1 << 30;
	/* a row too wide for one tile: its passes' blocks are the reduction's */
	if (p->kind == KK_ROW_REDUCTION && rowbn > ROW_TILE_MAX) {
		s.bn = red_bn;
		s.nbn = LEN(red_bn);
		nbn = s.nbn;
	}
	/* elementwise and reduction: the row's width (its power of two, up to
	 * ROW_TILE_MAX) joins the BN values above the largest, so that a tile
	 * can hold whole rows of a wide tensor, one contiguous run */
	if (s.bn && rowbn > s.bn[s.nbn - 1] && (p->kind == KK_ELEMENTWISE ||
	    p->kind == KK_REDUCTION)) {
		int bn[LEN(red_bn) + 1];

		_Static_assert(LEN(ew_bn) <= LEN(red_bn), "bn[] holds either space's BN");
		memcpy(bn, s.bn, sizeof(int) * (size_t)s.nbn);
		bn[s.nbn] = (int)(rowbn < ROW_TILE_MAX ? rowbn : ROW_TILE_MAX);
		return space_gen(&s, bn, s.nbn + 1, rowbn, out);
	}
	return space_gen(&s, s.bn, nbn, rowbn, out);
}

/* The space's candidates, BN values bn[0..nbn) (NULL: the row's power of
 * two, rowbn), in generation order. */
static int
space_gen(const Space *sp, const int *bnv, int nbn, int64_t rowbn, TileConfig *out)
{
	Space s = *sp;
	int n = 0, nbk = s.bk ? s.nbk : 1;
	int nst = s.stages ? s.nstages : 1;

	if (!bnv)
		nbn = 1;
	/* generation order: BM, BN, BK, warps, stages, nested, ascending */
	for (int a = 0; a < s.nbm; a++)
		for (int b = 0; b < nbn; b++)
			for (int k = 0; k < nbk; k++)
				for (int w = 0; w < LEN(warps_set); w++)
					for (int st = 0; st < nst; st++) {
						if (n >= COST_MAX_SPACE)
							AICM_BUG("config space larger than %d", COST_MAX_SPACE);
						out[n++] = (TileConfig){
							.bm = s.bm[a],
							.bn = bnv ? bnv[b] : (int)rowbn,
							.bk = s.bk ? s.bk[k] : 0,
							.warps = warps_set[w],
							.stages = s.stages ? s.stages[st] : 0,
						};
					}
	return n;
}

/* Each int as 4 little-endian bytes, then an axis separator 0xff: the
 * bytes the space= of every cache record on disk was hashed from, so they
 * must stay these whatever the host's byte order. */
static uint64_t
hash_ints(uint64_t h, const int *v, int n)
{
	static const unsigned char sep = 0xff;

	for (int i = 0; i < n; i++) {
		uint32_t x = (uint32_t)v[i];
		unsigned char b[4] = {x & 0xff, x >> 8 & 0xff, x >> 16 & 0xff, x >> 24};

		h = ir_hash_bytes(h, b, sizeof b);
	}
	return ir_hash_bytes(h, &sep, 1);
}

/* The raw FNV-1a state, unmixed: the value written to disk. */
uint64_t
cost_space_hash(KernelKind kind)
{
	Space s = space_of(kind);
	uint64_t h = IR_HASH_SEED;
	int k = (int)kind;

	h = hash_ints(h, &k, 1);
	h = hash_ints(h, s.bm, s.nbm);
	h = hash_ints(h, s.bn, s.bn ? s.nbn : 0);
	h = hash_ints(h, s.bk, s.bk ? s.nbk : 0);
	h = hash_ints(h, warps_set, LEN(warps_set));
	h = hash_ints(h, s.stages, s.stages ? s.nstages : 0);
	/* since issue 18: the row's width joins these two spaces (records
	 * tuned over the spaces without it are tuned again) */
	if (kind == KK_ELEMENTWISE || kind == KK_REDUCTION) {
		int rowmax = ROW_TILE_MAX;

		h = hash_ints(h, &rowmax, 1);
	}
	return h;
}

/* ---- pruning --------------------------------------------------------- */

static bool
too_big(int block, int64_t dim, int smallest)
{
	int64_t lim = pow2_ceil(dim);

	return block > lim && block > smallest;
}

int64_t
cost_smem_bytes(const Problem *p, const TileConfig *c)
{
	if (p->kind != KK_MATMUL && p->kind != KK_MATMUL_EPILOGUE && p->kind != KK_CONV_EPILOGUE)
		return 0;
	return ((int64_t)c->bm * c->bk + (int64_t)c->bk * c->bn) * c->stages *
	    (int64_t)ir_dtype_size(p->dt);
}

/* The registers per thread a configuration needs (docs/passes.md). */
static int64_t
cost_regs(const Problem *p, const TileConfig *c)
{
	int64_t words = (int64_t)ir_dtype_size(p->dt) / 4;   /* 32-bit words per element */
	int64_t threads = 32 * (int64_t)c->warps;
	int64_t tile = (int64_t)c->bm * c->bn * words;

	if (p->kind == KK_MATMUL || p->kind == KK_MATMUL_EPILOGUE || p->kind == KK_CONV_EPILOGUE)
		return cdiv(tile, threads) +
		    cdiv(((int64_t)c->bm * c->bk + (int64_t)c->bk * c->bn) * words, threads) + 32;
	return 2 * cdiv(tile, threads) + 32;
}

PruneReason
cost_prune(const Target *t, const Problem *p, const TileConfig *c)
{
	Space s = space_of(p->kind);
	int64_t threads = 32 * (int64_t)c->warps;
	double reglim = t->regs_per_thread;

	if (too_big(c->bm, p->m, s.bm[0]))
		return PR_BLOCK;
	if (s.bn && too_big(c->bn, p->n, s.bn[0]))
		return PR_BLOCK;
	if (s.bk && too_big(c->bk, p->k, s.bk[0]))
		return PR_BLOCK;
	if ((double)cost_smem_bytes(p, c) > t->smem_kb * 1024.0)
		return PR_SMEM;
	if (t->regs_per_sm / (double)threads < reglim)
		reglim = t->regs_per_sm / (double)threads;
	if ((double)cost_regs(p, c) > reglim)
		return PR_REGS;
	return PR_NONE;
}

/* ---- scores ---------------------------------------------------------- */

void
cost_score(const Target *t, DType dt, const Traffic *tr, Score *s)
{
	double tc = dt == DT_F64 ? t->tc_tflops_f64 : t->tc_tflops_f32;
	double vec = dt == DT_F64 ? t->vec_tflops_f64 : t->vec_tflops_f32;
	double pad = tr->pad_mm_flops + tr->pad_vec_flops;
	double sms = t->sms >= 1 ? t->sms : 1;
	/* a target that models rows in flight charges a reduction's row
	 * streams by their number, not their segments (each step's segment of
	 * a row continues that row's stream) */
	bool rows = t->streams > 0 && t->rows_gbs > 0 && tr->fly_rows > 0;

	memset(s, 0, sizeof *s);
	/* GB/s = 1e6 bytes per ms; TFLOP/s = 1e9 flops per ms */
	s->mem = ((double)tr->loaded + (double)tr->stored) / (t->hbm_gbs * 1e6);
	s->comp = (double)tr->mm_flops / (tc * 1e9) +
	    (double)(tr->flops - tr->mm_flops) / (vec * 1e9);
	s->waste = tr->pad_mm_flops / (tc * 1e9) + tr->pad_vec_flops / (vec * 1e9);
	s->waves = (int64_t)((double)tr->programs / sms);
	if ((double)s->waves * sms < (double)tr->programs)
		s->waves++;
	s->launch = (t->launch_us + (double)s->waves * t->wave_us) / 1e3;
	/* a GPU keeps the accumulator in registers and overlaps its loop
	 * steps (step-us and acc-gbs 0: no such cost); the tile executor calls
	 * the dot once per step, reloading and storing the accumulator tile */
	s->steps = (double)(tr->steps - tr->attn_steps) / sms * t->step_us / 1e3 +
	    (double)tr->attn_steps / sms * (t->attn_step_us > 0 ? t->attn_step_us : t->step_us) / 1e3;
	/* the accumulator reloads cost only once the accumulator tile
	 * outgrows the L1 (l1-kb 0: always); A's and B's panels stream */
	if (t->acc_gbs > 0 && (t->l1_kb <= 0 || tr->mm_foot > t->l1_kb * 1024.0))
		s->steps += tr->acc_bytes / (t->acc_gbs * 1e6);
	/* a cpu's cores pay per contiguous run (a prefetch stream started, a
	 * gather's element) and move whole cache lines */
	if (t->seg_ns > 0)
		s->contig = ((tr->segs - (rows ? tr->fly_segs : 0)) / sms * t->seg_ns / 1e6 +
		    tr->line_waste / (t->hbm_gbs * 1e6));
	/* tiles that outgrow the core's L2 spill: the ops' tile traffic then
	 * goes to memory (an engine that keeps tiles in registers: l2-kb 0) */
	if (t->l2_kb > 0 && tr->tile_foot > t->l2_kb * 1024.0)
		s->contig += tr->tile_bytes / (t->hbm_gbs * 1e6);
	/* a core reads memory fastest with a few streams in flight (its
	 * prefetchers' and miss buffers' share): a reduction's program that
	 * walks one row at a time leaves bandwidth unused, one that walks
	 * many at once loses its streams (docs/perf.md, session 15) */
	if (rows)
		s->contig += tr->fly_bytes * fabs(log2(tr->fly_rows / t->streams)) / (t->rows_gbs * 1e6);
	/* a dot's block of a past the L1 is read again from the L2 for each
	 * further strip of b */
	if (t->reread_gbs > 0 && tr->a_foot > COST_L1)
		s->steps += tr->a_reread / (t->reread_gbs * 1e6);
	s->total = s->mem + s->comp + s->waste + s->launch + s->steps + s->contig;
	if ((double)tr->flops + pad > 0)
		s->padding_pct = 100.0 * pad / ((double)tr->flops + pad);
}
