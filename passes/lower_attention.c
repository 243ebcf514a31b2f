/*
 * lower_attention.c: the tile program of an attention kernel (DESIGN
 * section 13; docs/tiled.md "attention"), the flash-attention schedule.
 *
 * A program owns BM rows of Q (grid axis 0; the batch, flattened, on axis
 * 2), loads them once, and walks K and V in blocks of BN keys.  For each
 * block it computes the scores s = q·kᵀ [BM, BN] with the executor's dot,
 * scales and masks them as the graph does, and updates the online softmax:
 * the running row max m (a max reduce carrying m), the running sum l and
 * the output accumulator acc [BM, dv] both rescaled by exp(m_old - m_new)
 * before the block's exp(s - m_new) is added (to l by a sum, to acc by a
 * dot with the V block).  After the last block out = acc / l.  The N×N
 * scores never leave the program: each program reads Q's rows and the
 * whole of K and V once, so the traffic is Q + O + ⌈M/BM⌉·(K + V) (plus
 * the mask's tiles), what cost.c counts.
 *
 * A loop carries one value (tile.h), so m, l and acc travel as one tile
 * [BM, dv + 2], joined at each yield and taken apart by extract at the top
 * of the body: two copies of [BM, dv] per block against the block's
 * 4·BM·BN·d flops of dots.
 *
 * Ragged blocks: the loads are masked (other=0), so the lanes past N or M
 * are outside the tiles' valid boxes; the reductions read only valid lanes
 * (a masked score lane counts as -inf would for the max and as 0 for the
 * sum), and the lanes past N of V's block are 0, so whatever p holds
 * there adds nothing to the dot, provided it is finite.  Without a mask
 * it is: those lanes' scores are q·0 = 0 and the running max is finite.
 * A mask may make a row's scores so far all -inf: then the max used is
 * raised to the lowest finite number m' (so that exp(-inf - m') is 0, not
 * NaN), and when the last block is ragged p is exp(min(s - m', 0)), at
 * most 1 on the lanes past N (for valid lanes s <= m' and the min changes
 * nothing).  A scale of the scores is applied to Q's rows once per
 * program, not to each block of scores: (q·c)·kᵀ equals (q·kᵀ)·c up to
 * rounding.
 *
 * Q, K (or Kᵀ), V and the mask may be views (layout ops fuse joined,
 * DESIGN section 13): their loads read the view's base through its
 * strides and offset (view=, strides=, offset=, as lower-tiled writes
 * them), so the heads' split of a transformer layer is never copied.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "tile.h"

typedef struct AB {
	Graph *g;
	TileFn *f;
	const AttnMatch *a;
	int R;
	int root;
} AB;

/* Whether name is free in the body: no value, operand or result has it. */
static bool
free_name(const AB *b, const char *s)
{
	if (tile_lookup(b->f, s) >= 0 || !strcmp(b->g->nodes[b->root].name, s))
		return false;
	for (int j = 0; j < b->f->nargs; j++)
		if (!strcmp(b->g->nodes[b->f->args[j]].name, s))
			return false;
	return true;
}

/* base, or base.1, base.2, ..., whichever is free, in the graph's arena. */
static const char *
name(AB *b, const char *base)
{
	char buf[64];

	snprintf(buf, sizeof buf, "%s", base);
	for (int i = 1; !free_name(b, buf); i++)
		snprintf(buf, sizeof buf, "%s.%d", base, i);
	return arena_strndup(&b->g->arena, buf, strlen(buf));
}

static int
def(AB *b, int i, const char *base, const int64_t *shape)
{
	return tile_build_def(b->g, b->f, i, name(b, base), shape ? b->R : -1, shape);
}

/* A tile shape of rank R: leading 1s, then rows and cols. */
static const int64_t *
shp(AB *b, int64_t *s, int64_t rows, int64_t cols)
{
	for (int j = 0; j < b->R; j++)
		s[j] = 1;
	s[b->R - 2] = rows;
	s[b->R - 1] = cols;
	return s;
}

static int
op(AB *b, TileOpKind k, OpId gop, int nin, const int *in, const TileAttrs *at,
    const char *base, int64_t rows, int64_t cols)
{
	int64_t s[IR_MAX_RANK];

	return def(b, tile_build_op(b->g, b->f, k, gop, nin, in, at, LOC_NONE), base,
	    shp(b, s, rows, cols));
}

static int
bin(AB *b, OpId gop, int x, int y, const char *base, int64_t rows, int64_t cols)
{
	int in[2] = {x, y};

	return op(b, TO_BINARY, gop, 2, in, NULL, base, rows, cols);
}

static int
un(AB *b, OpId gop, int x, const char *base, int64_t rows, int64_t cols)
{
	return op(b, TO_UNARY, gop, 1, &x, NULL, base, rows, cols);
}

static int
fill(AB *b, double v, const char *base, int64_t rows, int64_t cols)
{
	TileAttrs at = {.set = TAB(VALUE), .value = tile_num(v)};

	if (v == 0 && !signbit(v))
		return op(b, TO_ZEROS, OP_INPUT, 0, NULL, NULL, base, rows, cols);
	return op(b, TO_FULL, OP_INPUT, 0, NULL, &at, base, rows, cols);
}

static int
reduce(AB *b, OpId gop, int x, int acc, const char *base, int64_t rows)
{
	TileAttrs at = {.set = TAB(AXIS) | TAB(KEEPDIMS), .axis = b->R - 1, .keepdims = true};
	int in[2] = {x, acc};

	return op(b, TO_REDUCE, gop, acc >= 0 ? 2 : 1, in, &at, base, rows, 1);
}

static int
extract(AB *b, int x, int64_t at0, const char *base, int64_t rows, int64_t cols)
{
	TileAttrs at = {.set = TAB(AT), .start = at0};

	return op(b, TO_EXTRACT, OP_INPUT, 1, &x, &at, base, rows, cols);
}

static int
argof(const AB *b, int node)
{
	for (int j = 0; j < b->f->nargs; j++)
		if (b->f->args[j] == node)
			return j;
	AICM_BUG("attention operand '%%%s' is not an operand of its kernel",
	    b->g->nodes[node].name);
}

/* A load of node x at the given batch offsets and (row, col) index, as a
 * tile [rows, cols] (dims of x that are 1 against the scores stay 1, read
 * at 0: a mask's broadcasting); masked (other=0) when it may leave x.  A
 * view of the kernel (attention.c) is loaded from its base through the
 * view's strides, as lower-tiled loads every view. */
static int
load(AB *b, int x, const TileIdx *bidx, TileIdx ri, TileIdx ci, int64_t rows, int64_t cols,
    bool masked, const char *base)
{
	const Type *t = &b->g->nodes[x].type;
	TileAttrs at = {.set = masked ? TAB(OTHER) : 0, .other = tile_num(0)};
	TileIdx idx[IR_MAX_RANK];
	int64_t s[IR_MAX_RANK];
	int r = t->rank, i;
	IrView v;
	int mem = attn_view_base(b->g, b->a, x, &v);

	memset(idx, 0, sizeof idx);
	for (int k = 0; k < r; k++) {
		int j = k + b->R - r;   /* right-aligned, as numpy broadcasts */
		bool one = t->dim[k] == 1;

		s[k] = j == b->R - 2 ? (one ? 1 : rows) : j == b->R - 1 ? (one ? 1 : cols) : 1;
		if (!one)
			idx[k] = j == b->R - 2 ? ri : j == b->R - 1 ? ci : bidx[j];
	}
	if (mem != x)
		lower_view_attrs(&at, t, &v, r);
	i = tile_build_access(b->g, b->f, TO_LOAD, argof(b, mem), r, idx, -1, &at, LOC_NONE);
	return tile_build_def(b->g, b->f, i, name(b, base), r, s);
}

static TileIdx
ix(int v, int64_t coef)
{
	TileIdx x = {0};

	if (v >= 0) {
		x.nterm = 1;
		x.val[0] = v;
		x.coef[0] = coef;
	}
	return x;
}

/* x scaled as sc says, by a [1, 1] fill of its constant. */
static int
scale(AB *b, const AttnScale *sc, int x, const char *base, int64_t rows, int64_t cols)
{
	int c = fill(b, sc->c, "scale", 1, 1);

	return bin(b, sc->op, x, c, base, rows, cols);
}

int
lower_attention_build(Graph *g, TileFn *f, const AttnMatch *a, int64_t bm, int64_t bn)
{
	AB b = {g, f, a, a->rank, a->root};
	int R = a->rank, pm, q, z, st0, fo, var, c, res, o;
	int64_t BM = bm, BN = bn, dv = a->dv, d = a->d;
	TileIdx bidx[IR_MAX_RANK];
	bool rag_m = a->m % BM != 0, rag_n = a->n % BN != 0;
	double lowest = a->dt == DT_F32 ? -FLT_MAX : -DBL_MAX;

	/* the grid: row blocks on axis 0, the batch flattened on axis 2 */
	memset(bidx, 0, sizeof bidx);
	f->grid[0] = (a->m + BM - 1) / BM;
	f->grid[1] = 1;
	f->grid[2] = a->batch;
	pm = tile_build_def(g, f, tile_build_op(g, f, TO_PROGRAM_ID, OP_INPUT, 0, NULL,
	    &(TileAttrs){.set = TAB(AXIS), .axis = 0}, LOC_NONE), name(&b, "m"), -1, NULL);
	if (R > 2 && a->batch > 1) {
		const Type *tq = &g->nodes[a->q].type;
		int p = tile_build_def(g, f, tile_build_op(g, f, TO_PROGRAM_ID, OP_INPUT, 0, NULL,
		    &(TileAttrs){.set = TAB(AXIS), .axis = 2}, LOC_NONE), name(&b, "b"), -1, NULL);

		for (int j = R - 3; j >= 0; j--) {
			if (j == 0) {
				bidx[j] = ix(p, 1);
				break;
			}
			bidx[j] = ix(tile_build_def(g, f, tile_build_op(g, f, TO_IREM, OP_INPUT, 1, &p,
			    &(TileAttrs){.set = TAB(BY), .by = tq->dim[j]}, LOC_NONE), name(&b, "bi"), -1,
			    NULL), 1);
			p = tile_build_def(g, f, tile_build_op(g, f, TO_IDIV, OP_INPUT, 1, &p,
			    &(TileAttrs){.set = TAB(BY), .by = tq->dim[j]}, LOC_NONE), name(&b, "bq"), -1,
			    NULL);
		}
	}
	/* this program's rows of Q, scaled once if the graph scales Q */
	q = load(&b, a->q, bidx, ix(pm, BM), ix(-1, 0), BM, d, rag_m, "q");
	if (a->qs.node >= 0)
		q = scale(&b, &a->qs, q, "qs", BM, d);
	/* the scores' scale too, on Q's rows once rather than on every block
	 * of scores: (q·c)·kᵀ is s·c up to rounding */
	if (a->ss.node >= 0)
		q = scale(&b, &a->ss, q, "qss", BM, d);
	z = fill(&b, 0, "z", BM, BN);
	{
		int in[3];

		in[0] = fill(&b, 0, "acc0", BM, dv);
		in[1] = fill(&b, -INFINITY, "m0", BM, 1);
		in[2] = fill(&b, 0, "l0", BM, 1);
		st0 = op(&b, TO_JOIN, OP_INPUT, 3, in, NULL, "st0", BM, dv + 2);
	}
	fo = tile_build_for(g, f, 0, a->n, BN, st0, LOC_NONE);
	{
		int64_t s[IR_MAX_RANK];

		res = def(&b, fo, "st", shp(&b, s, BM, dv + 2));
	}
	var = tile_build_loop_var(g, f, fo, name(&b, "j"));
	c = tile_build_loop_iter(g, f, fo, name(&b, "c"));
	{
		int acc = extract(&b, c, 0, "acc", BM, dv);
		int m = extract(&b, c, dv, "mrun", BM, 1);
		int l = extract(&b, c, dv + 1, "lrun", BM, 1);
		int kt, s, mn, ms, p, al, ps, l2, a2, vb, in[3], y;

		if (a->k_given_t) {
			kt = load(&b, a->k, bidx, ix(-1, 0), ix(var, 1), d, BN, rag_n, "kt");
		} else {
			int kb = load(&b, a->k, bidx, ix(var, 1), ix(-1, 0), BN, d, rag_n, "kb");
			TileAttrs at = {.set = TAB(PERM), .nperm = R};

			for (int j = 0; j < R; j++)
				at.perm[j] = j;
			at.perm[R - 2] = R - 1;
			at.perm[R - 1] = R - 2;
			kt = op(&b, TO_TRANSPOSE, OP_INPUT, 1, &kb, &at, "kt", d, BN);
		}
		in[0] = q;
		in[1] = kt;
		in[2] = z;
		s = op(&b, TO_DOT, OP_INPUT, 3, in, NULL, "s", BM, BN);
		if (a->mask == AM_ADD) {
			int mk = load(&b, a->mask_val, bidx, ix(pm, BM), ix(var, 1), BM, BN,
			    rag_m || rag_n, "mask");

			s = bin(&b, OP_ADD, s, mk, "sm", BM, BN);
		} else if (a->mask == AM_WHERE) {
			int cd = load(&b, a->mask_val, bidx, ix(pm, BM), ix(var, 1), BM, BN,
			    rag_m || rag_n, "cond");
			int fl = fill(&b, a->fill, "fill", 1, 1);

			in[0] = cd;
			in[1] = a->fill_first ? fl : s;
			in[2] = a->fill_first ? s : fl;
			s = op(&b, TO_WHERE, OP_WHERE, 3, in, NULL, "sm", BM, BN);
		}
		/* the online softmax step */
		mn = reduce(&b, OP_MAX, s, m, "mnew", BM);
		ms = mn;
		if (a->mask != AM_NONE) {
			ms = fill(&b, lowest, "lowest", 1, 1);
			ms = bin(&b, OP_MAXIMUM, mn, ms, "msafe", BM, 1);
		}
		p = bin(&b, OP_SUB, s, ms, "sd", BM, BN);
		if (a->mask != AM_NONE && rag_n) {
			int zero = fill(&b, 0, "zero", 1, 1);

			p = bin(&b, OP_MINIMUM, p, zero, "sc", BM, BN);
		}
		p = un(&b, OP_EXP, p, "p", BM, BN);
		al = bin(&b, OP_SUB, m, ms, "dm", BM, 1);
		al = un(&b, OP_EXP, al, "alpha", BM, 1);
		ps = reduce(&b, OP_SUM, p, -1, "psum", BM);
		l2 = bin(&b, OP_MUL, l, al, "ls", BM, 1);
		l2 = bin(&b, OP_ADD, l2, ps, "lnew", BM, 1);
		a2 = bin(&b, OP_MUL, acc, al, "accs", BM, dv);
		vb = load(&b, a->v, bidx, ix(var, 1), ix(-1, 0), BN, dv, rag_n, "vb");
		in[0] = p;
		in[1] = vb;
		in[2] = a2;
		a2 = op(&b, TO_DOT, OP_INPUT, 3, in, NULL, "accn", BM, dv);
		in[0] = a2;
		in[1] = mn;
		in[2] = l2;
		y = op(&b, TO_JOIN, OP_INPUT, 3, in, NULL, "stn", BM, dv + 2);
		tile_build_yield(g, f, fo, y, LOC_NONE);
	}
	{
		int accf = extract(&b, res, 0, "accf", BM, dv);
		int lf = extract(&b, res, dv + 1, "lf", BM, 1);

		o = bin(&b, OP_DIV, accf, lf, "o", BM, dv);
	}
	{
		TileIdx idx[IR_MAX_RANK];
		TileAttrs at = {.set = rag_m ? TAB(MASKED) : 0};

		memcpy(idx, bidx, sizeof idx);
		idx[R - 2] = ix(pm, BM);
		idx[R - 1] = ix(-1, 0);
		tile_build_access(g, f, TO_STORE, TILE_RESULT, R, idx, o, &at, LOC_NONE);
	}
	return 0;
}
