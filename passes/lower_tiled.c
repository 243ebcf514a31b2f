/*
 * lower_tiled.c: every kernel becomes a Triton-like tile program (DESIGN §6,
 * docs/tiled.md, the traffic contract in docs/tiled.md "Traffic rules").
 *
 * The graph is rebuilt: sources stay, each kernel becomes one tiled node at
 * its root's place, named and typed like the root, and every compute op
 * outside a kernel becomes a kernel of its own (the eager baseline).  The
 * lowering works on an iteration space S (the matmul's output, the
 * reduction's operand, the root of an elementwise chain) whose last two
 * dimensions are tiled [BM, BN] and whose leading ones are walked one at a
 * time, flattened into grid axis 2.  Each dimension of S gets an extent and
 * an offset expression (a program id times the block, or a loop counter);
 * an external value is loaded with the slice of those that its own shape
 * needs under numpy broadcasting (a stretched dimension is one element at
 * offset 0), placed right after the innermost loop it depends on, so that
 * every program loads each element it needs exactly once.  A view (a layout
 * op inside a kernel of another kind) is such an external too: loaded from
 * the memory at the top of its chain through the composed strides.  The
 * traffic that
 * results is the contract that autotune's cost model computes analytically.
 * The bodies are built with tile_build.c, as the parser builds written ones.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "pass.h"
#include "row_passes.h"
#include "scalar.h"
#include "tile.h"
#include "window.h"

enum { DEF_BLOCK = 32 };

typedef struct Dim {
	int64_t ext;                 /* tile extent */
	TileIdx off;                 /* offset of the tile's first element */
	int level;                   /* loop depth that defines off (0: program) */
} Dim;

/* The names a body has taken: name[0..n) and a map of them (hash.h). */
typedef struct Taken {
	const char **name;
	size_t n, cap;
	HashMap map;
} Taken;

typedef struct LB {
	const Graph *g;              /* the graph, read as it was */
	Graph *ng;                   /* the same graph: its arena takes the bodies */
	Diag *d;
	int *map;                    /* old node -> new node, or -1 */
	int *tv;                     /* old node -> tile value in f, or -1 */
	int *argof;                  /* old node -> operand index in f, or -1 */
	TileFn *f;
	const Kernel *kn;            /* NULL for an eager op */
	int first, last;             /* the kernel's nodes */
	int root;
	int from;                    /* the first node whose operands are loaded */
	int R;                       /* rank of the iteration space */
	int64_t S[IR_MAX_RANK];
	Dim dim[IR_MAX_RANK];
	int64_t bm, bn, bk;
	bool bn_given;               /* the kernel has its own BN */
	int64_t rowmax;              /* row-max: the widest row kept in one tile */
	int *stamp;                  /* old node -> the row pass that marked it */
	int nstamp;                  /* row passes so far (each a fresh stamp) */
	int split_dim;               /* split= spreads this dim over programs, */
	int64_t split_span;          /* covering this much of it (0: no split) */
	TileScratch scratch;         /* where each body grows (tile.h) */
	Taken taken;                 /* the body's names so far */
	int *maxin;                  /* old node -> root of the kernel in which a max,
	                              * min or prod reduces it directly (neutral_for) */
	int *redop;                  /* old node -> that reduction's op */
} LB;

/* ---- the names a body has taken ---------------------------------------- */

/* A body's value names must differ from each other, from its operands' and
 * from its result's: a hash set of the names taken so far in this body. */
static bool
taken_eq(const void *t, uint32_t i, const void *s)
{
	return !strcmp(((const Taken *)t)->name[i], s);
}

/* Takes s unless it is taken; whether it was free.  One probe does both
 * (a body takes as many names as it has values). */
static bool
taken_put(Taken *t, const char *s)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->name = xrealloc(t->name, sizeof *t->name * t->cap);
	}
	if (hashmap_put(&t->map, (uint32_t)ir_hash_str(s), (uint32_t)t->n, taken_eq, t, s) >= 0)
		return false;
	t->name[t->n++] = s;
	return true;
}

/* Empties the set for the next body, at a cost in proportion to the body
 * just done: a map much larger than it (left by a large body before) is
 * freed, or a thousand small bodies after one large one would clear it a
 * thousand times. */
static void
taken_clear(Taken *t)
{
	if (t->map.cap > 4 * hash_cap(t->n))
		hashmap_free(&t->map);
	else
		hashmap_clear(&t->map);
	t->n = 0;
}

/* base, or base.1, base.2, ... whichever is free first; taken from then on. */
static const char *
uniq(LB *b, const char *base)
{
	char buf[256];
	const char *s;

	if (strlen(base) >= 200 || !taken_put(&b->taken, base))
		for (int i = 1;; i++) {
			snprintf(buf, sizeof buf, "%.200s.%d", base, i);
			if (taken_put(&b->taken, buf))
				break;
		}
	/* The set holds base or buf, which need not outlive the call: it keeps
	 * the arena copy that the body names its value with. */
	s = b->taken.name[b->taken.n - 1];
	s = arena_strndup(&b->ng->arena, s, strlen(s));
	b->taken.name[b->taken.n - 1] = s;
	return s;
}

/* ---- building the body (tile_build.c) ---------------------------------- */

/* Defines the result of inst i under a free name made from base. */
static int
def(LB *b, int i, const char *base, int rank, const int64_t *shape)
{
	return tile_build_def(b->ng, b->f, i, uniq(b, base), rank, shape);
}

/* An op of nin operands (at: its attributes, or NULL) and its result,
 * named from name; returns the result. */
static int
op_def(LB *b, TileOpKind k, OpId gop, int nin, const int *in, const TileAttrs *at,
    const char *name, int rank, const int64_t *shape)
{
	return def(b, tile_build_op(b->ng, b->f, k, gop, nin, in, at, LOC_NONE), name, rank,
	    shape);
}

static int
res(LB *b, int i)
{
	return b->f->insts[i].res;
}

/* A program id on axis n (in0 unused), or idiv/irem of in0 by n. */
static int
scalar(LB *b, TileOpKind k, const char *name, int in0, int64_t n)
{
	TileAttrs at;                /* the builder reads the fields set names */

	if (k == TO_PROGRAM_ID) {
		at.set = TAB(AXIS);
		at.axis = n;
		return op_def(b, k, OP_INPUT, 0, NULL, &at, name, -1, NULL);
	}
	at.set = TAB(BY);
	at.by = n;
	return op_def(b, k, OP_INPUT, 1, &in0, &at, name, -1, NULL);
}

static TileIdx
idx_of(int v, int64_t coef)
{
	TileIdx x = {0};

	x.nterm = 1;
	x.val[0] = v;
	x.coef[0] = coef;
	return x;
}

static int
full(LB *b, const char *name, double value, int rank, const int64_t *shape)
{
	TileAttrs at;

	at.set = TAB(VALUE);
	at.value = tile_num(value);
	return op_def(b, value == 0 ? TO_ZEROS : TO_FULL, OP_INPUT, 0, NULL, value == 0 ? NULL : &at,
	    name, rank, shape);
}

/* A load of operand arg at idx, masked (reading other off the tensor) if
 * masked; returns the inst. */
static int
load(LB *b, int arg, int nidx, const TileIdx *idx, bool masked, double other)
{
	TileAttrs at;

	at.set = masked ? TAB(OTHER) : 0;
	at.other = tile_num(other);
	return tile_build_access(b->ng, b->f, TO_LOAD, arg, nidx, idx, -1, &at, LOC_NONE);
}

static bool is_view(const LB *b, int x);
static int view_base(const LB *b, int x, IrView *v);

/* The iteration dimension that dimension k of a value of rank r aligns
 * with, right-aligned as numpy broadcasting does. */
static int
align(const LB *b, int r, int k)
{
	return k + b->R - r;
}

/* Whether an access of extents ext at the dims' offsets can leave t. */
static bool
ragged(const LB *b, const Type *t, const int *it)
{
	for (int k = 0; k < t->rank; k++)
		if (it[k] >= 0 && (b->S[it[k]] % b->dim[it[k]].ext != 0 ||
		    (it[k] == b->split_dim && b->split_span > b->S[it[k]])))
			return true;
	return false;
}

/* The load attributes of view v (dims those of t, the type loads see);
 * lower_attention.c's loads of views take them too (attention.h). */
void
lower_view_attrs(TileAttrs *at, const Type *t, const IrView *v, int R)
{
	int pad = R - t->rank;

	at->set |= TAB(VIEW) | TAB(STRIDES) | (v->offset ? TAB(OFFSET) : 0);
	at->nview = at->nstrides = R;
	for (int k = 0; k < R; k++) {
		at->view[k] = k < pad ? 1 : t->dim[k - pad];
		at->strides[k] = k < pad ? 0 : v->stride[k - pad];
	}
	at->offset = v->offset;
}

/* Loads external node x (rank <= R) with the tile of it that the program's
 * iteration tile needs: stretched dimensions are one element at 0.  A view
 * of the kernel is loaded as an external of its own shape would be, from
 * its base through the view's strides; an expanded dim (stride 0) is a
 * whole tile of one element, masked to the view's bounds like any dim, so
 * that a reduction over it counts each lane once (the executor reads that
 * element once per tile). */
static int
load_ext(LB *b, int x, double other)
{
	const Type *t = &b->g->nodes[x].type;
	IrView v;
	int it[IR_MAX_RANK], base = view_base(b, x, &v);
	int64_t shape[IR_MAX_RANK];
	TileIdx idx[IR_MAX_RANK];
	TileAttrs at = {0};
	char nm[256];

	for (int k = 0; k < t->rank; k++) {
		int j = align(b, t->rank, k);

		it[k] = (t->dim[k] == 1 && b->S[j] != 1) ? -1 : j;
		shape[k] = it[k] < 0 ? 1 : b->dim[j].ext;
		idx[k] = it[k] >= 0 ? b->dim[it[k]].off : (TileIdx){0};
	}
	snprintf(nm, sizeof nm, "%.200s.tile", b->g->nodes[x].name);
	if (base < 0)
		return def(b, load(b, b->argof[x], t->rank, idx, ragged(b, t, it), other), nm,
		    t->rank, shape);
	if (ragged(b, t, it)) {
		at.set = TAB(OTHER);
		at.other = tile_num(other);
	}
	lower_view_attrs(&at, t, &v, t->rank);
	return def(b, tile_build_access(b->ng, b->f, TO_LOAD, b->argof[base], t->rank, idx, -1,
	    &at, LOC_NONE), nm, t->rank, shape);
}

/* The loop depth that a load of x depends on: the deepest level among the
 * dimensions it is not stretched along. */
static int
ext_level(const LB *b, int x)
{
	const Type *t = &b->g->nodes[x].type;
	int lv = 0;

	for (int k = 0; k < t->rank; k++) {
		int j = align(b, t->rank, k);

		if (!(t->dim[k] == 1 && b->S[j] != 1) && b->dim[j].level > lv)
			lv = b->dim[j].level;
	}
	return lv;
}

static bool
in_kernel(const LB *b, int x)
{
	return x >= b->first && x <= b->last;
}

static int ext_level(const LB *b, int x);

/* Whether node x is a view of this kernel (DESIGN §13, docs/passes.md
 * "Views"): a layout op inside a kernel of a computing kind, not its root.
 * It is never computed: the loads of its consumers read its operand
 * through it. */
static bool
is_view(const LB *b, int x)
{
	return b->kn && ir_kind_has_views(b->kn->kind) && in_kernel(b, x) && x != b->root &&
	    ir_is_view_op(b->g, x);
}

/* The strided view that view x reads its base through (the chain of views
 * above it composed, view.c), and the base: the first operand up the chain
 * that is no view of the kernel.  -1 with *why when the chain is no
 * strided view. */
static int
view_chain(const LB *b, int x, IrView *v, const char **why)
{
	int p = b->g->nodes[x].in[0], base = p;

	if (is_view(b, p))
		base = view_chain(b, p, v, why);
	else
		ir_view_dense(&b->g->nodes[p].type, v);
	if (base < 0 || !ir_view_apply(b->g, x, v, why))
		return -1;
	return base;
}

/* The base that view x reads (its view in *v), or -1 when x is no view. */
static int
view_base(const LB *b, int x, IrView *v)
{
	const char *why;
	int base;

	if (!is_view(b, x))
		return -1;
	base = view_chain(b, x, v, &why);
	if (base < 0)
		AICM_BUG("lower-tiled loads view '%%%s', which lower_kernel refused", b->g->nodes[x].name);
	return base;
}

/* Registers x as an operand of the kernel (once). */
static void
use_ext(LB *b, int x)
{
	if (b->argof[x] >= 0)
		return;
	b->argof[x] = b->f->nargs;
	b->f->args[b->f->nargs++] = x;     /* ir_compact renumbers it */
	taken_put(&b->taken, b->g->nodes[x].name);
}

/* The neutral value a masked lane of a load of x should read: the
 * reduction's (-inf, +inf, 1) when a max, min or prod consumes it
 * directly, else 0 (sums and dots). */
static double
neutral_for(const LB *b, int x)
{
	return ir_scalar_neutral(b->maxin[x] == b->root ? (OpId)b->redop[x] : OP_SUM,
	    b->g->nodes[x].type.dt);
}

/* The op that a tile reduce carries for reduction op: mean is a sum (its
 * one division follows). */
static OpId
carried(OpId op)
{
	return op == OP_MEAN ? OP_SUM : op;
}

/* The iteration dims that reduction n (whose operand is right-aligned in
 * the R iteration dims) reduces: mask[j] for j < R. */
static int
red_mask(const LB *b, const Node *n, bool *mask)
{
	int xr = b->g->nodes[n->in[0]].type.rank, cnt;
	bool m[IR_MAX_RANK];

	cnt = ir_reduce_mask(n, xr, m);
	for (int j = 0; j < b->R; j++)
		mask[j] = j >= b->R - xr && m[j - (b->R - xr)];
	return cnt;
}

/* Loads the externals (and the views) that belong at loop depth lv. */
static void
load_level(LB *b, int lv)
{
	for (int i = b->from; i <= b->last; i++) {
		const Node *n = &b->g->nodes[i];

		if (is_view(b, i))
			continue;
		for (int j = 0; j < n->nin; j++) {
			int x = n->in[j];

			if ((in_kernel(b, x) && !is_view(b, x)) || b->tv[x] >= 0 ||
			    ext_level(b, x) != lv)
				continue;
			b->tv[x] = load_ext(b, x, neutral_for(b, x));
		}
	}
}

static int
fail(LB *b, const Node *n, const char *why)
{
	if (b->kn)
		diag_error(b->d, b->kn->loc, "lower-tiled: cannot lower kernel '@%s' [%s]: %s "
		    "('%%%s')", b->kn->name, ir_kernel_kinds[b->kn->kind], why, n->name);
	else
		diag_error(b->d, n->loc, "lower-tiled: cannot lower '%%%s': %s", n->name, why);
	return -1;
}

/* Emits node i (elementwise, or a reduction done inside the tile) on the
 * tiles of its operands. */
static int
emit_op(LB *b, int i)
{
	const Node *n = &b->g->nodes[i];
	const OpInfo *op = &ir_ops[n->op];
	const TileVal *a;
	int64_t s[IR_MAX_RANK] = {0};
	int r = 0;

	if (is_view(b, i))
		return 0;            /* its consumers' loads read through it */
	a = &b->f->vals[b->tv[n->in[0]]];
	if (ir_is_elementwise(n->op)) {
		/* the operands' tiles broadcast, numpy's rule over all of them
		 * (where has three) */
		int in[3];
		TileAttrs at = {0};

		for (int j = 0; j < n->nin; j++) {
			const TileVal *c = &b->f->vals[b->tv[n->in[j]]];

			in[j] = b->tv[n->in[j]];
			if (c->rank > r) {
				for (int d = r - 1; d >= 0; d--)
					s[d + c->rank - r] = s[d];
				for (int d = 0; d < c->rank - r; d++)
					s[d] = 1;
				r = c->rank;
			}
			for (int d = 0; d < r; d++) {
				int ic = d - (r - c->rank);
				int64_t dc = ic >= 0 ? c->shape[ic] : 1;

				if (j > 0 && s[d] != dc && s[d] != 1 && dc != 1)
					return fail(b, n, "its operands' tiles do not broadcast (a reduced "
					    "value stretched along another axis)");
				if (j == 0 || s[d] == 1)
					s[d] = dc;
			}
		}
		if (n->op == OP_CAST) {
			at.set = TAB(TO);
			at.to = n->at.to;
		}
		b->tv[i] = op_def(b, tile_op_of_gop(n->op), n->op, n->nin, in, &at, n->name, r, s);
		return 0;
	}
	if (op->cls == OC_REDUCTION && ir_reduce_axis(n, b->g->nodes[n->in[0]].type.rank) == -2) {
		/* several axes (not all): one tile reduce per axis, the highest
		 * first, so that the lower axes keep their places */
		const Type *t = &b->g->nodes[n->in[0]].type;
		bool m[IR_MAX_RANK];
		int x = b->tv[n->in[0]], in[2], rk = a->rank;
		int64_t cnt = 1;

		memcpy(s, a->shape, sizeof s);
		ir_reduce_mask(n, t->rank, m);
		for (int k = t->rank - 1; k >= 0; k--) {
			TileAttrs at = {.set = TAB(AXIS) | TAB(KEEPDIMS),
			    .axis = k - (t->rank - a->rank), .keepdims = n->at.keepdims};

			if (!m[k])
				continue;
			cnt *= t->dim[k];
			if (n->at.keepdims) {
				s[at.axis] = 1;
			} else {
				memmove(s + at.axis, s + at.axis + 1,
				    sizeof(int64_t) * (size_t)(rk - at.axis - 1));
				rk--;
			}
			x = op_def(b, TO_REDUCE, carried(n->op), 1, &x, &at, "part", rk, s);
		}
		b->tv[i] = x;
		if (n->op == OP_MEAN) {
			in[0] = x;
			in[1] = full(b, "count", (double)cnt, 0, NULL);
			b->tv[i] = op_def(b, TO_BINARY, OP_DIV, 2, in, NULL, n->name, rk, s);
		}
		return 0;
	}
	if (op->cls == OC_REDUCTION) {
		int ax = ir_reduce_axis(n, b->g->nodes[n->in[0]].type.rank);
		int tax = ax < 0 ? -1 : ax - (b->g->nodes[n->in[0]].type.rank - a->rank);
		TileAttrs at = {.set = TAB(AXIS) | TAB(KEEPDIMS), .axis = tax,
		    .keepdims = n->at.keepdims};
		int x = b->tv[n->in[0]], in[2];

		for (int d = 0; d < a->rank; d++)
			if (tax >= 0 && d != tax)
				s[r++] = a->shape[d];
			else if (n->at.keepdims)
				s[r++] = 1;
		b->tv[i] = op_def(b, TO_REDUCE, carried(n->op), 1, &x, &at,
		    n->op == OP_MEAN ? "part" : n->name, r, s);
		if (n->op == OP_MEAN) {
			const Type *t = &b->g->nodes[n->in[0]].type;
			int64_t cnt = ax < 0 ? ir_type_numel(t) : t->dim[ax];

			in[0] = b->tv[i];
			in[1] = full(b, "count", (double)cnt, 0, NULL);
			b->tv[i] = op_def(b, TO_BINARY, OP_DIV, 2, in, NULL, n->name, r, s);
		}
		return 0;
	}
	return fail(b, n, "only elementwise ops and reductions can follow inside a tile");
}

/* Stores (or combines with atomic op) tile v, the value of the root, at
 * the offsets of the iteration dims it keeps; reduced dims (red[j], NULL
 * when the root is not a reduction) are at 0. */
static void
store_root(LB *b, int v, TileOpKind op, const bool *red)
{
	bool reduced = red != NULL;
	const Node *rn = &b->g->nodes[b->root];
	const Type *t = &rn->type;
	int it[IR_MAX_RANK], k = 0;
	TileIdx idx[IR_MAX_RANK];
	TileAttrs at;

	/* Which iteration dim each result dim is: drop the reduced ones unless
	 * kept as 1; then right-align as loads do. */
	if (reduced) {
		for (int j = 0; j < b->R; j++) {
			if (!red[j])
				it[k++] = j;
			else if (rn->at.keepdims)
				it[k++] = -1;
		}
	} else {
		for (k = 0; k < t->rank; k++) {
			int j = align(b, t->rank, k);

			it[k] = (t->dim[k] == 1 && b->S[j] != 1) ? -1 : j;
		}
	}
	for (k = 0; k < t->rank; k++)
		idx[k] = it[k] >= 0 ? b->dim[it[k]].off : (TileIdx){0};
	at.set = ragged(b, t, it) ? TAB(MASKED) : 0;
	tile_build_access(b->ng, b->f, op, TILE_RESULT, t->rank, idx, v, &at, LOC_NONE);
}

/* The leading dims lead[0..nlead) share grid axis 2: the grid's extent is
 * their product, and each dim's offset is recovered from the one program
 * id by irem and idiv, the last dim varying fastest. */
static void
lead_on_axis2(LB *b, const int *lead, int nlead)
{
	int64_t g2 = 1;

	for (int t = 0; t < nlead; t++)
		g2 *= b->S[lead[t]];
	b->f->grid[2] = g2;
	if (nlead) {
		int q = scalar(b, TO_PROGRAM_ID, "b", -1, 2);

		for (int t = nlead - 1; t >= 0; t--) {
			int j = lead[t];

			if (t == 0) {
				b->dim[j].off = idx_of(q, 1);
			} else {
				b->dim[j].off = idx_of(scalar(b, TO_IREM, "bi", q, b->S[j]), 1);
				q = scalar(b, TO_IDIV, "bq", q, b->S[j]);
			}
		}
	}
}

/* Program ids for the dims that belong to the programs (prog[j]): the
 * last two (tiled by BM and BN) on grid axes 0 and 1 (a single tiled dim on
 * axis 0), the leading ones flattened on axis 2 and recovered with idiv and
 * irem. */
static void
program_dims(LB *b, const bool *prog)
{
	static const char *const nm[] = {"m", "n"};
	int tiled[2], nt = 0, lead[IR_MAX_RANK], nlead = 0;

	for (int j = 0; j < b->R; j++) {
		if (!prog[j])
			continue;
		if (j >= b->R - 2)
			tiled[nt++] = j;
		else if (b->S[j] > 1)
			lead[nlead++] = j;
	}
	for (int t = 0; t < nt; t++) {
		int j = tiled[t], p = scalar(b, TO_PROGRAM_ID, nm[t], -1, t);

		b->dim[j].off = idx_of(p, b->dim[j].ext);
		b->f->grid[t] = (b->S[j] + b->dim[j].ext - 1) / b->dim[j].ext;
	}
	lead_on_axis2(b, lead, nlead);
}

/* Extents: last dim bn, second-to-last bm, leading 1. */
static void
set_extents(LB *b, int64_t bm, int64_t bn)
{
	for (int j = 0; j < b->R; j++) {
		b->dim[j].ext = j == b->R - 1 ? bn : j == b->R - 2 ? bm : 1;
		memset(&b->dim[j].off, 0, sizeof b->dim[j].off);
		b->dim[j].level = 0;
	}
}

static void
set_space(LB *b, const Type *t)
{
	b->R = t->rank;
	for (int j = 0; j < t->rank; j++)
		b->S[j] = t->dim[j];
	b->split_span = 0;
}

/* Emits the kernel's ops from..last on tiles (externals loaded at level 0
 * first). */
static int
emit_dag(LB *b, int from)
{
	load_level(b, 0);
	for (int i = from; i <= b->last; i++)
		if (emit_op(b, i) != 0)
			return -1;
	return 0;
}

/* ---- the kinds ------------------------------------------------------- */

static int open_loop(LB *b, int j, int64_t span, int pidv, int64_t base, int init, int level,
    const char *name);
static void close_loop(LB *b, int fo, int v);

/* Emits, in the current scope, the kernel's statistics (elementwise ops
 * that do not vary along the row) whose operands are all computed. */
static int
emit_stats(LB *b)
{
	for (int i = b->first; i <= b->last; i++) {
		const Node *n = &b->g->nodes[i];
		bool ready = true;

		if (b->tv[i] >= 0 || !ir_is_elementwise(n->op) ||
		    row_passes_is_row(b->g, b->first, b->last, i))
			continue;
		for (int j = 0; j < n->nin; j++)
			ready &= b->tv[n->in[j]] >= 0;
		if (ready && emit_op(b, i) != 0)
			return -1;
	}
	return 0;
}

/*
 * A row_reduction whose row does not fit in one tile (row_passes.h): each
 * program owns BM rows and loops over them in blocks of blk once per
 * reduction, in definition order, carrying the reduction's accumulator;
 * between passes it computes the statistics the pass made possible (once
 * per row, outside the loops); a final pass computes the root block by
 * block and stores it (a reducing root: the last pass's result, stored
 * after its loop).  Each pass loads the row operands its cone reads, so an
 * operand read by k passes is read k times (KernelStats and the cost
 * model count it).
 */
static int
lower_row_passes(LB *b, int64_t blk)
{
	const Node *rn = &b->g->nodes[b->root];
	int np, *val, *red, last = b->R - 1;
	bool prog[IR_MAX_RANK];
	int rc = -1;

	val = xmalloc(sizeof(int) * 2 * ((size_t)(b->last - b->first) + 2));
	red = val + (b->last - b->first) + 2;
	np = row_passes_plan(b->g, b->first, b->last, val, red);
	b->bn = blk;
	set_extents(b, b->bm, blk);
	for (int j = 0; j < b->R; j++)
		prog[j] = j != last;
	program_dims(b, prog);
	/* the last dim is the passes' loop counter; what lacks it loads once */
	b->dim[last].level = 1;
	load_level(b, 0);
	if (emit_stats(b) != 0)
		goto out;
	for (int p = 0; p < np; p++) {
		const Node *r = red[p] >= 0 ? &b->g->nodes[red[p]] : NULL;
		int stamp = ++b->nstamp, fo, init, acc, v, in[2];
		int64_t s[IR_MAX_RANK];
		TileAttrs at = {.set = TAB(AXIS) | TAB(KEEPDIMS), .axis = last,
		    .keepdims = r ? r->at.keepdims : false};
		OpId op = r ? carried(r->op) : OP_SUM;

		/* the accumulator: a reduction's kept rows (a final pass that
		 * stores block by block carries a scalar it never changes) */
		for (int j = 0; j < b->R; j++)
			s[j] = j == last ? 1 : b->dim[j].ext;
		init = full(b, r ? "init" : "none", r ? ir_scalar_neutral(op, r->type.dt) : 0,
		    r ? b->R - (at.keepdims ? 0 : 1) : 0, s);
		fo = open_loop(b, last, b->S[last], -1, 0, init, 1, "k");
		acc = b->f->insts[fo].iter;
		row_passes_cone(b->g, b->first, b->last, val[p], b->stamp, stamp);
		/* this pass's row values: loaded or computed afresh, the operands
		 * in first-use order */
		for (int i = b->first; i <= b->last; i++)
			if (b->stamp[i - b->first] == stamp) {
				b->tv[i] = -1;
				for (int j = 0; j < b->g->nodes[i].nin; j++) {
					int x = b->g->nodes[i].in[j];

					if (!row_passes_computed(b->g, b->first, b->last, x) &&
					    row_passes_is_row(b->g, b->first, b->last, x))
						b->tv[x] = -1;
				}
			}
		if (!row_passes_computed(b->g, b->first, b->last, val[p]))
			b->tv[val[p]] = load_ext(b, val[p], neutral_for(b, val[p]));
		for (int i = b->first; i <= b->last; i++) {
			if (b->stamp[i - b->first] != stamp)
				continue;
			for (int j = 0; j < b->g->nodes[i].nin; j++) {
				int x = b->g->nodes[i].in[j];

				if (!row_passes_computed(b->g, b->first, b->last, x) && b->tv[x] < 0)
					b->tv[x] = load_ext(b, x, neutral_for(b, x));
			}
			if (emit_op(b, i) != 0)
				goto out;
		}
		if (r) {
			in[0] = b->tv[val[p]];
			in[1] = acc;
			v = op_def(b, TO_REDUCE, op, 2, in, &at, "part", b->R - (at.keepdims ? 0 : 1),
			    s);
		} else {
			store_root(b, b->tv[b->root], TO_STORE, NULL);
			v = acc;
		}
		close_loop(b, fo, v);
		if (!r)
			break;
		v = res(b, fo);
		if (r->op == OP_MEAN) {
			in[0] = v;
			in[1] = full(b, "count", (double)b->S[last], 0, NULL);
			v = op_def(b, TO_BINARY, OP_DIV, 2, in, NULL, r->name,
			    b->R - (at.keepdims ? 0 : 1), s);
		}
		b->tv[red[p]] = v;
		if (red[p] == b->root) {
			bool mask[IR_MAX_RANK];

			red_mask(b, rn, mask);
			store_root(b, v, TO_STORE, mask);
			break;
		}
		if (emit_stats(b) != 0)
			goto out;
	}
	rc = 0;
out:
	free(val);
	return rc;
}

static int
lower_pointwise(LB *b, bool row)
{
	bool prog[IR_MAX_RANK];
	int64_t bn = b->bn;

	set_space(b, &b->g->nodes[b->root].type);
	for (int i = b->first; i <= b->last; i++) {
		const Node *n = &b->g->nodes[i];

		if (is_view(b, i))
			continue;
		if (ir_ops[n->op].cls == OC_REDUCTION) {
			int ax = ir_reduce_axis(n, b->g->nodes[n->in[0]].type.rank);

			if (!row)
				return fail(b, n, "a reduction inside an elementwise kernel");
			/* a rank-1 operand reduced whole (no axis=) is its last axis
			 * too, as fuse's row-fusion rule says (ir_reduces_last_axis) */
			if (ax != b->g->nodes[n->in[0]].type.rank - 1 && !ir_reduces_last_axis(b->g, i))
				return fail(b, n, "a row_reduction reduces along the last axis only");
			if (b->g->nodes[n->in[0]].type.rank >= b->R)
				set_space(b, &b->g->nodes[n->in[0]].type);
		} else if (!ir_is_elementwise(n->op)) {
			return fail(b, n, row ? "a row_reduction holds elementwise ops and row "
			    "reductions only" : "an elementwise kernel holds elementwise ops only");
		}
	}
	if (row && b->R >= 1) {
		int64_t w = b->S[b->R - 1], p2 = 1, eff;

		while (p2 < w && p2 <= b->rowmax)
			p2 *= 2;
		/* without a BN of its own, the row's power of two up to row-max */
		eff = b->bn_given ? b->bn : p2 < b->rowmax ? p2 : b->rowmax;
		if (!row_passes_fit(w, eff, b->rowmax))
			return lower_row_passes(b, eff < b->rowmax ? eff : b->rowmax);
		b->bn = bn = p2;
	}
	set_extents(b, b->bm, bn);
	for (int j = 0; j < b->R; j++)
		prog[j] = true;
	program_dims(b, prog);
	if (emit_dag(b, b->first) != 0)
		return -1;
	if (ir_ops[b->g->nodes[b->root].op].cls == OC_REDUCTION) {
		/* A reduced root (a row sum or mean): its dims are S's without
		 * the reduced one, not S's right-aligned. */
		bool red[IR_MAX_RANK];

		red_mask(b, &b->g->nodes[b->root], red);
		store_root(b, b->tv[b->root], TO_STORE, red);
		return 0;
	}
	store_root(b, b->tv[b->root], TO_STORE, NULL);
	return 0;
}

/* A transpose of rank above 4 (the tile executor holds four dims per
 * tile): its dims of 1 dropped and the runs of input axes that stay
 * adjacent in the output merged, it is the transpose of a smaller rank
 * ng, loaded and stored through views of that rank.  Of the output's
 * last two dims, those whose source is not among the input's last four
 * are walked one index at a time, so that every tile fits. */
static int
lower_transpose_wide(LB *b, const Node *n, int x)
{
	const Type *xt = &b->g->nodes[x].type;
	int r = xt->rank, perm[IR_MAX_RANK], q[IR_MAX_RANK], nq = 0, ng = 0;
	int head[IR_MAX_RANK], pc[IR_MAX_RANK], inv[IR_MAX_RANK], v;
	int64_t yc[IR_MAX_RANK], xc[IR_MAX_RANK], shape[IR_MAX_RANK];
	bool prog[IR_MAX_RANK], masked = false;
	TileIdx idx[IR_MAX_RANK];
	TileAttrs lat = {.set = TAB(VIEW)}, pat = {.set = TAB(PERM)}, sat = {.set = TAB(VIEW)};
	Type sp = {.rank = 0, .dt = n->type.dt};

	for (int i = 0; i < r; i++) {
		int64_t p = ir_attr_ints(&n->at, ATTR_PERM).v[i];

		perm[i] = (int)(p < 0 ? p + r : p);
	}
	for (int i = 0; i < r; i++)          /* the input dims longer than 1, in output order */
		if (xt->dim[perm[i]] != 1)
			q[nq++] = perm[i];
	for (int i = 0; i < nq; i++) {       /* a group starts unless it continues the last */
		bool cont = false;

		if (i > 0) {
			int d = q[i - 1] + 1;

			while (d < r && xt->dim[d] == 1)
				d++;
			cont = d == q[i];
		}
		if (!cont) {
			head[ng] = q[i];
			yc[ng++] = 1;
		}
		yc[ng - 1] *= xt->dim[q[i]];
	}
	if (ng == 0) {
		head[ng] = 0;
		yc[ng++] = 1;
	}
	/* the groups in input order: pc[i] is output group i's place there */
	for (int i = 0; i < ng; i++) {
		pc[i] = 0;
		for (int j = 0; j < ng; j++)
			pc[i] += head[j] < head[i];
		xc[pc[i]] = yc[i];
		inv[pc[i]] = i;
	}
	sp.rank = ng;
	memcpy(sp.dim, yc, sizeof(int64_t) * (size_t)ng);
	set_space(b, &sp);
	set_extents(b, b->bm, b->bn);
	for (int j = 0; j < ng; j++) {
		if (pc[j] < ng - 4)
			b->dim[j].ext = 1;
		prog[j] = true;
	}
	program_dims(b, prog);
	use_ext(b, x);
	lat.nview = sat.nview = pat.nperm = ng;
	for (int k = 0; k < ng; k++) {
		lat.view[k] = xc[k];
		sat.view[k] = yc[k];
		pat.perm[k] = pc[k];
		shape[k] = b->dim[inv[k]].ext;
		idx[k] = b->dim[inv[k]].off;
		masked |= xc[k] % shape[k] != 0;
	}
	if (masked) {
		lat.set |= TAB(OTHER);
		lat.other = tile_num(0);
	}
	v = def(b, tile_build_access(b->ng, b->f, TO_LOAD, b->argof[x], ng, idx, -1, &lat,
	    LOC_NONE), "tile", ng, shape);
	for (int j = 0; j < ng; j++) {
		shape[j] = b->dim[j].ext;
		idx[j] = b->dim[j].off;
	}
	v = op_def(b, TO_TRANSPOSE, OP_INPUT, 1, &v, &pat, "t", ng, shape);
	if (masked)
		sat.set |= TAB(MASKED);
	tile_build_access(b->ng, b->f, TO_STORE, TILE_RESULT, ng, idx, v, &sat, LOC_NONE);
	return 0;
}

static int
lower_opaque(LB *b)
{
	const Node *n = &b->g->nodes[b->first];
	const Type *t = &n->type, *xt;
	bool prog[IR_MAX_RANK];
	int x = n->in[0], v;
	int64_t shape[IR_MAX_RANK];
	TileIdx idx[IR_MAX_RANK] = {{0}};
	bool masked = false;

	if (b->first != b->last || ir_ops[n->op].cls != OC_LAYOUT)
		return fail(b, n, "an opaque kernel holds one layout op");
	xt = &b->g->nodes[x].type;
	if (n->op == OP_TRANSPOSE && t->rank > 4 && (n->at.set & AB(PERM)))
		return lower_transpose_wide(b, n, x);
	set_space(b, t);
	set_extents(b, b->bm, b->bn);
	for (int j = 0; j < b->R; j++)
		prog[j] = true;
	program_dims(b, prog);
	use_ext(b, x);
	if (n->op == OP_RESHAPE) {
		TileAttrs at = {.set = TAB(VIEW), .nview = b->R};   /* also of rank 0: reshape to () */

		for (int j = 0; j < b->R; j++) {
			shape[j] = b->dim[j].ext;
			at.view[j] = b->S[j];
			idx[j] = b->dim[j].off;
			if (b->S[j] % b->dim[j].ext)
				masked = true;
		}
		if (masked) {
			at.set |= TAB(OTHER);
			at.other = tile_num(0);
		}
		v = def(b, tile_build_access(b->ng, b->f, TO_LOAD, b->argof[x], b->R, idx, -1, &at,
		    LOC_NONE), "tile", b->R, shape);
		if (ir_type_numel(xt) != ir_type_numel(t))
			return fail(b, n, "reshape changes the element count");
	} else {
		TileAttrs at = {.set = TAB(PERM), .nperm = b->R}, vat = {0};
		int64_t *perm = at.perm, xs[IR_MAX_RANK], st = 1;
		int inv[IR_MAX_RANK];

		for (int j = 0; j < b->R; j++)
			perm[j] = (n->at.set & AB(PERM)) ? ir_attr_ints(&n->at, ATTR_PERM).v[j] :
			    b->R >= 2 && j == b->R - 2 ? b->R - 1 : b->R >= 2 && j == b->R - 1 ?
			    b->R - 2 : j;
		for (int j = 0; j < b->R; j++)     /* a written perm may count from the end */
			if (perm[j] < 0)
				perm[j] += b->R;
		for (int j = 0; j < b->R; j++)
			if (perm[j] < 0)     /* perm=(-1, -3, -2) counts from the end */
				perm[j] += b->R;
		/* A permutation that keeps the last dim in place: the output
		 * tile read straight from the operand through a permuted view
		 * (the operand's strides in perm's order), rows contiguous on
		 * both sides, so one load in the output's layout and no
		 * transpose op.  Loaded in the operand's layout and
		 * transposed, the transformer layer's head merge (4, 128, 64)
		 * -> (128, 4, 64) took a tile op per program and 12 masked
		 * rows of every 16 (0.19 ms of the layer's 3.3, docs/perf.md).
		 * One that moves the last dim keeps the load and the
		 * transpose: a view would read it a lane at a time
		 * (uncoalesced on a GPU). */
		if (b->R >= 1 && perm[b->R - 1] == b->R - 1) {
			for (int k = b->R - 1; k >= 0; k--) {
				xs[k] = st;
				st *= xt->dim[k];
			}
			vat.set = TAB(VIEW) | TAB(STRIDES);
			vat.nview = vat.nstrides = b->R;
			for (int j = 0; j < b->R; j++) {
				shape[j] = b->dim[j].ext;
				idx[j] = b->dim[j].off;
				vat.view[j] = t->dim[j];
				vat.strides[j] = xs[perm[j]];
				if (t->dim[j] % shape[j] != 0)
					masked = true;
			}
			if (masked) {
				vat.set |= TAB(OTHER);
				vat.other = tile_num(0);
			}
			v = def(b, tile_build_access(b->ng, b->f, TO_LOAD, b->argof[x], b->R, idx, -1,
			    &vat, LOC_NONE), "tile", b->R, shape);
		} else {
			for (int j = 0; j < b->R; j++)
				inv[perm[j]] = j;
			for (int k = 0; k < b->R; k++)
				shape[k] = b->dim[inv[k]].ext;
			for (int k = 0; k < b->R; k++) {
				idx[k] = b->dim[inv[k]].off;
				if (xt->dim[k] % shape[k] != 0)
					masked = true;
			}
			v = def(b, load(b, b->argof[x], b->R, idx, masked, 0), "tile", b->R, shape);
			for (int j = 0; j < b->R; j++)
				shape[j] = b->dim[j].ext;
			v = op_def(b, TO_TRANSPOSE, OP_INPUT, 1, &v, &at, "t", b->R, shape);
		}
	}
	b->tv[b->root] = v;
	store_root(b, b->tv[b->root], TO_STORE, NULL);
	return 0;
}

/* pad's value= as its result's element type holds it, the reference's rule
 * (exec_kern_PAD): an integer written as one exactly (an i32 keeps its low
 * bits, a bool is v != 0; an i64 past 2^53 stays exact, the tile IR
 * carrying it as an integer), rounded once to an f32; a float truncated
 * and saturated for an integer type (cast's formula). */
static TileNum
pad_value(const Node *n)
{
	DType dt = n->type.dt;

	if (!(n->at.set & AB(VALUE)))
		return tile_num(0);
	if (!n->at.value_int)
		return tile_num(ir_scalar_cast(dt, n->at.value));
	if (dt == DT_F32)
		return tile_num((double)ir_i64_to_f32(n->at.ivalue));
	if (dt == DT_F64)
		return tile_num((double)n->at.ivalue);
	return tile_inum(ir_scalar_wrap(dt, n->at.ivalue));
}

/* A copy op (pad, slice, concat, gather, expand) alone in its kernel: a
 * copy program per output tile [.., BM, BN] (leading dims one at a time),
 * which loads what the tile needs at computed offsets and stores it once.
 * pad: load_pad at the tile's offsets less the begins, other= the value;
 * slice: load_step at first + step * offset with the steps; concat: one
 * load_pad per operand, shifted by the operand's start along the axis and
 * filling from the previous one, so that each lane comes from the operand
 * whose range holds it; gather: the index tile loaded like any tile, then
 * load_gather; expand: the operand loaded with its stretched dims one
 * element at 0, then broadcast.  Ranks 5 to 8 take the same program: as
 * in every kind, the dims before the last two are walked one index at a
 * time (grid axis 2), so a tile is 1 along all but its last two dims and
 * the executor holds its last four (tile_copy.c). */
static int
lower_copy(LB *b)
{
	const Node *n = &b->g->nodes[b->first];
	const Type *t = &n->type;
	const Type *xt = &b->g->nodes[n->in[0]].type;
	bool prog[IR_MAX_RANK], rag = false;
	int64_t sh[IR_MAX_RANK];
	TileIdx idx[IR_MAX_RANK];
	TileAttrs at = {0};
	int v = -1;

	if (b->first != b->last)
		return fail(b, n, "a copy op runs alone in its kernel");
	set_space(b, t);
	set_extents(b, b->bm, b->bn);
	for (int j = 0; j < b->R; j++) {
		prog[j] = true;
		sh[j] = b->dim[j].ext;
		rag |= b->S[j] % b->dim[j].ext != 0;
	}
	program_dims(b, prog);
	for (int j = 0; j < n->nin; j++)
		use_ext(b, n->in[j]);
	for (int j = 0; j < b->R; j++)
		idx[j] = b->dim[j].off;
	switch (n->op) {
	case OP_PAD: {
		IntTuple p = ir_attr_ints(&n->at, ATTR_PADS);

		for (int j = 0; j < b->R; j++)
			idx[j].k -= p.v[j];
		at.set = TAB(OTHER);
		at.other = pad_value(n);
		v = def(b, tile_build_access(b->ng, b->f, TO_LOAD_PAD, b->argof[n->in[0]], b->R, idx,
		    -1, &at, LOC_NONE), "tile", b->R, sh);
		break;
	}
	case OP_SLICE: {
		IntTuple st = ir_attr_ints(&n->at, ATTR_STARTS), en = ir_attr_ints(&n->at, ATTR_ENDS);
		IntTuple ax = ir_attr_ints(&n->at, ATTR_AXES), sp = ir_attr_ints(&n->at, ATTR_STEPS);

		at.set = TAB(STEPS) | (rag ? TAB(OTHER) : 0);
		at.nsteps = b->R;
		for (int j = 0; j < b->R; j++)
			at.steps[j] = 1;
		for (int i = 0; i < st.n; i++) {
			int64_t k = ax.n > 0 ? ax.v[i] : i, first, len, step = sp.n > 0 ? sp.v[i] : 1;

			if (k < 0)
				k += b->R;
			ir_slice_range(xt->dim[k], st.v[i], en.v[i], step, &first, &len);
			at.steps[k] = step;
			idx[k].k = first + step * idx[k].k;
			for (int q = 0; q < idx[k].nterm; q++)
				idx[k].coef[q] *= step;
		}
		v = def(b, tile_build_access(b->ng, b->f, TO_LOAD_STEP, b->argof[n->in[0]], b->R,
		    idx, -1, &at, LOC_NONE), "tile", b->R, sh);
		break;
	}
	case OP_CONCAT: {
		int ax = (int)(n->at.axis < 0 ? n->at.axis + b->R : n->at.axis);
		int64_t c0 = 0;

		for (int q = 0; q < n->nin; q++) {
			TileIdx x[IR_MAX_RANK];

			memcpy(x, idx, sizeof x);
			x[ax].k -= c0;
			at.set = v < 0 ? TAB(OTHER) : 0;
			at.other = tile_num(0);
			v = def(b, tile_build_access(b->ng, b->f, TO_LOAD_PAD, b->argof[n->in[q]], b->R,
			    x, v, &at, LOC_NONE), "tile", b->R, sh);
			c0 += b->g->nodes[n->in[q]].type.dim[ax];
		}
		break;
	}
	case OP_GATHER: {
		const Type *it = &b->g->nodes[n->in[1]].type;
		int r = xt->rank, q = it->rank;
		int ax = (int)(n->at.axis < 0 ? n->at.axis + r : n->at.axis);
		TileIdx xi[IR_MAX_RANK] = {{0}};
		bool irag = false, xrag = false;
		int vi;

		for (int k = 0; k < q; k++)
			irag |= b->S[ax + k] % b->dim[ax + k].ext != 0;
		for (int j = 0; j < b->R; j++)
			if (j < ax || j >= ax + q)
				xrag |= b->S[j] % b->dim[j].ext != 0;
		vi = def(b, load(b, b->argof[n->in[1]], q, idx + ax, irag, 0), "idx", q, sh + ax);
		for (int d = 0; d < r; d++)
			if (d != ax)
				xi[d] = idx[d < ax ? d : d - 1 + q];
		at.set = TAB(AXIS) | (xrag ? TAB(MASKED) : 0);
		at.axis = ax;
		v = def(b, tile_build_access(b->ng, b->f, TO_LOAD_GATHER, b->argof[n->in[0]], r, xi,
		    vi, &at, LOC_NONE), "tile", b->R, sh);
		break;
	}
	case OP_EXPAND: {
		int r = xt->rank;
		int64_t xs[IR_MAX_RANK];
		TileIdx xi[IR_MAX_RANK];
		bool xrag = false, same = r == b->R;

		for (int k = 0; k < r; k++) {
			int j = align(b, r, k);
			bool stretched = xt->dim[k] == 1 && b->S[j] != 1;

			xs[k] = stretched ? 1 : b->dim[j].ext;
			xi[k] = stretched ? (TileIdx){0} : b->dim[j].off;
			xrag |= !stretched && b->S[j] % b->dim[j].ext != 0;
			same &= xs[k] == sh[j];
		}
		v = def(b, load(b, b->argof[n->in[0]], r, xi, xrag, 0), "tile", r, xs);
		if (!same)
			v = op_def(b, TO_BROADCAST, OP_INPUT, 1, &v, NULL, "b", b->R, sh);
		break;
	}
	default:
		return fail(b, n, "not a copy op");
	}
	b->tv[b->root] = v;
	store_root(b, v, TO_STORE, NULL);
	return 0;
}

/* Opens a loop over dim j in steps of its extent, from 0 to span (with a
 * program part base*pid added to the offset when pidv >= 0). */
static int
open_loop(LB *b, int j, int64_t span, int pidv, int64_t base, int init, int level,
    const char *name)
{
	int r = b->f->vals[init].rank, i, var;
	int64_t s[IR_MAX_RANK];

	memcpy(s, b->f->vals[init].shape, sizeof s);
	i = tile_build_for(b->ng, b->f, 0, span, b->dim[j].ext, init, LOC_NONE);
	def(b, i, "acc", r, s);
	var = tile_build_loop_var(b->ng, b->f, i, uniq(b, name));
	tile_build_loop_iter(b->ng, b->f, i, uniq(b, "c"));
	b->dim[j].off = idx_of(var, 1);
	if (pidv >= 0) {
		b->dim[j].off.nterm = 2;
		b->dim[j].off.val[1] = pidv;
		b->dim[j].off.coef[1] = base;
	}
	b->dim[j].level = level;
	return i;
}

static void
close_loop(LB *b, int fo, int v)
{
	tile_build_yield(b->ng, b->f, fo, v, LOC_NONE);
}

/* A chain of elementwise ops ending in the root reduction: the reduced
 * dims are walked by loops inside each program, carrying the accumulator;
 * with split=S a full reduction is spread over S programs along dim 0 and
 * combined atomically.  Several axes (not all): each reduced dim is a
 * loop, the innermost in blocks of BN and the others one index at a
 * time, and the tile is reduced one axis at a time, the highest first. */
static int
lower_reduction(LB *b)
{
	const Node *rn = &b->g->nodes[b->root];
	const Type *xt = &b->g->nodes[rn->in[0]].type;
	int ax, loops[IR_MAX_RANK], nl = 0, fo[IR_MAX_RANK], acc, r;
	bool prog[IR_MAX_RANK];
	int64_t s[IR_MAX_RANK], split = 1, chunk = 0;
	int rr = 0, pid = -1, bmdim = -1, in[2];
	TileAttrs at = {.set = TAB(AXIS) | TAB(KEEPDIMS), .keepdims = rn->at.keepdims};
	OpId red = carried(rn->op);
	bool atomic, mask[IR_MAX_RANK];
	int64_t cnt;

	if (ir_ops[rn->op].cls != OC_REDUCTION)
		return fail(b, rn, "a reduction kernel ends in its reduction");
	for (int i = b->first; i < b->last; i++)
		if (!ir_is_elementwise(b->g->nodes[i].op) && !is_view(b, i))
			return fail(b, &b->g->nodes[i], "a reduction kernel holds elementwise ops "
			    "before its one reduction");
	set_space(b, xt);
	ax = ir_reduce_axis(rn, b->R);
	red_mask(b, rn, mask);
	if (b->kn && (b->kn->kset & (1u << KA_SPLIT)))
		split = b->kn->kattr[KA_SPLIT];
	if (b->R == 0)
		split = 1;
	/* Extents: the reduced axis in blocks of BN, the last kept dim in BM;
	 * a full reduction tiles its last two dims [BM, BN]. */
	for (int j = 0; j < b->R; j++) {
		memset(&b->dim[j].off, 0, sizeof b->dim[j].off);
		b->dim[j].level = 0;
		b->dim[j].ext = 1;
		prog[j] = !mask[j];
	}
	if (ax == -2) {
		int rho = -1, inner = -1;

		for (int j = 0; j < b->R; j++)
			if (mask[j])
				inner = j;
			else
				rho = j;
		b->dim[inner].ext = b->bn;
		b->dim[rho].ext = b->bm;
		bmdim = rho;
	} else if (ax < 0 || b->R == 1) {
		if (b->R >= 1)
			b->dim[b->R - 1].ext = b->bn;
		if (b->R >= 2)
			b->dim[b->R - 2].ext = b->bm;
	} else {
		int rho = -1;

		for (int j = 0; j < b->R; j++)
			if (j != ax)
				rho = j;
		b->dim[ax].ext = b->bn;
		b->dim[rho].ext = b->bm;
		bmdim = rho;
	}
	/* the executor holds four dims per tile: before the last four, one
	 * index at a time */
	for (int j = 0; j + 4 < b->R; j++)
		b->dim[j].ext = 1;
	for (int j = 0; j < b->R; j++)
		if (!prog[j])
			loops[nl++] = j;
	/* prog dims: the BM dim on axis 0 (rows, DESIGN §6, even at BM=1),
	 * the rest on axis 2; program_dims treats a dim before the last two
	 * as leading, so put the BM dim there by hand.  split=S cuts the
	 * outermost loop (the reduced axis, or a full reduction's first dim)
	 * into S chunks, one per program along axis 1 (axis 0 when no dim is
	 * kept), each a whole number of blocks. */
	{
		int lead[IR_MAX_RANK], nlead = 0;

		for (int j = 0; j < b->R; j++) {
			if (!prog[j])
				continue;
			if (j == bmdim) {
				int p = scalar(b, TO_PROGRAM_ID, "m", -1, 0);

				b->dim[j].off = idx_of(p, b->dim[j].ext);
				b->f->grid[0] = (b->S[j] + b->dim[j].ext - 1) / b->dim[j].ext;
			} else if (b->S[j] > 1) {
				lead[nlead++] = j;
			}
		}
		lead_on_axis2(b, lead, nlead);
	}
	if (split > 1 && b->R >= 1) {
		int64_t e0 = b->dim[loops[0]].ext, per = (b->S[loops[0]] + split - 1) / split;

		chunk = (per + e0 - 1) / e0 * e0;
		/* the last programs' chunks may run past the dim: mask them */
		b->split_dim = loops[0];
		b->split_span = split * chunk;
		pid = scalar(b, TO_PROGRAM_ID, "p", -1, bmdim >= 0 ? 1 : 0);
		b->f->grid[bmdim >= 0 ? 1 : 0] = split;
	}
	/* The accumulator: the reduced tile's shape. */
	for (int j = 0; j < b->R; j++)
		if (prog[j])
			s[rr++] = b->dim[j].ext;
		else if (rn->at.keepdims)
			s[rr++] = 1;
	acc = full(b, "init", ir_scalar_neutral(red, rn->type.dt), rr, s);
	for (int l = 0; l < nl; l++)
		b->dim[loops[l]].level = l + 1;
	load_level(b, 0);
	for (int l = 0; l < nl; l++) {
		int j = loops[l];

		fo[l] = open_loop(b, j, l == 0 && split > 1 ? chunk : b->S[j],
		    l == 0 && split > 1 ? pid : -1, chunk, acc, l + 1, l == 0 ? "k" : "k");
		acc = b->f->insts[fo[l]].iter;
		load_level(b, l + 1);
	}
	for (int i = b->first; i < b->last; i++)
		if (emit_op(b, i) != 0)
			return -1;
	/* The tile value of the reduction's operand: an op of the chain, or
	 * the loaded external itself. */
	in[0] = b->tv[rn->in[0]];
	in[1] = acc;
	at.axis = ax < 0 ? -1 : ax;
	if (ax == -2) {
		int lowest = 0, rk = b->R;
		int64_t ps[IR_MAX_RANK];

		while (!mask[lowest])
			lowest++;
		memcpy(ps, b->f->vals[in[0]].shape, sizeof ps);
		for (int k = b->R - 1; k > lowest; k--) {
			if (!mask[k])
				continue;
			at.axis = k;
			if (rn->at.keepdims) {
				ps[k] = 1;
			} else {
				memmove(ps + k, ps + k + 1, sizeof(int64_t) * (size_t)(rk - k - 1));
				rk--;
			}
			in[0] = op_def(b, TO_REDUCE, red, 1, in, &at, "part", rk, ps);
		}
		at.axis = lowest;
	}
	r = op_def(b, TO_REDUCE, red, 2, in, &at, "part", rr, s);
	for (int l = nl - 1; l >= 0; l--) {
		close_loop(b, fo[l], r);
		r = res(b, fo[l]);
	}
	cnt = 1;
	for (int j = 0; j < b->R; j++)
		if (mask[j])
			cnt *= b->S[j];
	if (rn->op == OP_MEAN) {
		in[0] = r;
		in[1] = full(b, "count", (double)cnt, 0, NULL);
		r = op_def(b, TO_BINARY, OP_DIV, 2, in, NULL, "mean", rr, s);
	}
	atomic = split > 1;
	if (atomic) {
		b->f->has_init = true;
		b->f->init = ir_scalar_neutral(red, rn->type.dt);
	}
	if (atomic && red != OP_SUM && red != OP_MAX)
		return fail(b, rn, "split= combines partial results by atomic add or max only");
	store_root(b, r, !atomic ? TO_STORE : red == OP_MAX ? TO_ATOMIC_MAX : TO_ATOMIC_ADD,
	    mask);
	return 0;
}

/* argmax and argmin, a kernel of their own ([reduction], as a sum over
 * the axis is): the programs split x's kept dims as lower_reduction does
 * (the last kept dim in blocks of BM on grid axis 0, the other kept dims
 * one index at a time on axis 2), and one argmax/argmin op per program
 * scans the whole axis for each lane of its [.., BM, ..] tile, carrying
 * the best value and its index (tile_arg.c: the tile IR's loops carry one
 * value, an arg reduction two).  The i64 tile is stored at the kept dims'
 * offsets, through a view that puts the axis back as 1 when keepdims is
 * False. */
static int
lower_argreduce(LB *b)
{
	const Node *rn = &b->g->nodes[b->root];
	const Type *xt = &b->g->nodes[rn->in[0]].type;
	int R = xt->rank, lastkept = -1, lead[IR_MAX_RANK] = {0}, nlead = 0, v;
	int64_t ax = (rn->at.set & AB(AXIS)) ? rn->at.axis : 0, sh[IR_MAX_RANK];
	TileIdx idx[IR_MAX_RANK];
	TileAttrs at = {0};
	bool masked;

	if (b->first != b->last)
		return fail(b, rn, "argmax and argmin are kernels of their own");
	if (b->kn && (b->kn->kset & (1u << KA_SPLIT)) && b->kn->kattr[KA_SPLIT] > 1)
		return fail(b, rn, "split= combines partial results by atomic add or max only");
	if (ax < 0)
		ax += R;
	set_space(b, xt);
	for (int j = 0; j < R; j++) {
		memset(&b->dim[j].off, 0, sizeof b->dim[j].off);
		b->dim[j].level = 0;
		b->dim[j].ext = 1;
		if (j != ax)
			lastkept = j;
	}
	if (lastkept >= 0) {
		int p = scalar(b, TO_PROGRAM_ID, "m", -1, 0);

		b->dim[lastkept].ext = b->bm;
		b->dim[lastkept].off = idx_of(p, b->bm);
		b->f->grid[0] = (b->S[lastkept] + b->bm - 1) / b->bm;
	}
	for (int j = 0; j < R; j++)
		if (j != ax && j != lastkept && b->S[j] > 1)
			lead[nlead++] = j;
	lead_on_axis2(b, lead, nlead);
	for (int j = 0; j < R; j++) {
		sh[j] = b->dim[j].ext;
		idx[j] = b->dim[j].off;
	}
	masked = lastkept >= 0 && b->S[lastkept] % b->bm != 0;
	at.set = TAB(AXIS) | (masked ? TAB(MASKED) : 0) | (rn->at.last ? TAB(LAST) : 0);
	at.axis = ax;
	at.last = rn->at.last;
	v = def(b, tile_build_access(b->ng, b->f, rn->op == OP_ARGMAX ? TO_ARGMAX : TO_ARGMIN,
	    b->argof[rn->in[0]], R, idx, -1, &at, LOC_NONE), rn->op == OP_ARGMAX ? "amax" : "amin",
	    R, sh);
	memset(&at, 0, sizeof at);
	at.set = masked ? TAB(MASKED) : 0;
	if (!rn->at.keepdims) {
		at.set |= TAB(VIEW);
		at.nview = R;
		for (int j = 0; j < R; j++)
			at.view[j] = j == ax ? 1 : xt->dim[j];
	}
	tile_build_access(b->ng, b->f, TO_STORE, TILE_RESULT, R, idx, v, &at, LOC_NONE);
	return 0;
}

/* Operand t of a matmul seen at rank R (leading 1s; a 1-D a as (1, K), a
 * 1-D b as (K, 1)): v[0..R). */
static void
view_of(const Type *t, int R, bool is_a, int64_t *v)
{
	int r = t->rank < 2 ? 2 : t->rank;

	for (int j = 0; j < R - r; j++)
		v[j] = 1;
	if (t->rank == 1) {
		v[R - 2] = is_a ? 1 : t->dim[0];
		v[R - 1] = is_a ? t->dim[0] : 1;
	} else {
		memcpy(v + R - r, t->dim, sizeof(int64_t) * (size_t)r);
	}
}

/* A load of matmul operand x at idx through view v when x's own rank is
 * not R (masked lanes read 0, a dot's neutral); a view of the kernel
 * loads its base through its strides (dims v, of 1 where it is stretched:
 * the batch dims only, fuse's rule). */
static int
mm_load(LB *b, int x, int R, const TileIdx *idx, bool masked, const int64_t *v)
{
	TileAttrs at = {0};

	at.set = masked ? TAB(OTHER) : 0;
	at.other = tile_num(0);
	if (is_view(b, x)) {
		IrView iv;
		int base = view_base(b, x, &iv);

		lower_view_attrs(&at, &b->g->nodes[x].type, &iv, R);
		memcpy(at.view, v, sizeof(int64_t) * (size_t)R);
		return tile_build_access(b->ng, b->f, TO_LOAD, b->argof[base], R, idx, -1, &at,
		    LOC_NONE);
	}
	if (b->g->nodes[x].type.rank != R) {
		at.set |= TAB(VIEW);
		at.nview = R;
		memcpy(at.view, v, sizeof(int64_t) * (size_t)R);
	}
	return tile_build_access(b->ng, b->f, TO_LOAD, b->argof[x], R, idx, -1, &at, LOC_NONE);
}

/* A matmul, then elementwise ops on its tile, then at most one reduction
 * (combined atomically when its axis spans several programs). */
static int
lower_matmul(LB *b)
{
	int mi = b->first;
	const Node *mm, *rn = &b->g->nodes[b->root];
	int A, B, z, fo, d, v;
	bool prog[IR_MAX_RANK] = {0}, reduce = ir_ops[rn->op].cls == OC_REDUCTION, promoted;
	int64_t s[IR_MAX_RANK], K, av[IR_MAX_RANK], bv[IR_MAX_RANK];
	int R;

	while (mi < b->last && is_view(b, mi))     /* views come before it (docs/passes.md) */
		mi++;
	mm = &b->g->nodes[mi];
	A = mm->in[0];
	B = mm->in[1];
	if (mm->op != OP_MATMUL)
		return fail(b, mm, "a matmul kernel starts with its matmul");
	for (int i = mi + 1; i <= b->last; i++) {
		const Node *n = &b->g->nodes[i];

		if (ir_is_elementwise(n->op) || is_view(b, i))
			continue;
		if (i == b->last && ir_ops[n->op].cls == OC_REDUCTION)
			continue;
		return fail(b, n, "a matmul_epilogue holds a matmul, elementwise ops and at most "
		    "one reduction last");
	}
	/* numpy's matmul: the space is the promoted result (a 1-D a adds M = 1,
	 * a 1-D b adds N = 1), and each operand is loaded through a view of
	 * that rank (leading 1s; (1, K) or (K, 1) for a 1-D one), its batch
	 * dims of 1 read at 0 where the result's are longer. */
	{
		const Type *ta = &b->g->nodes[A].type, *tb = &b->g->nodes[B].type;
		Type p = mm->type;
		int nb = mm->type.rank - (ta->rank > 1) - (tb->rank > 1);

		promoted = ta->rank == 1 || tb->rank == 1;
		p.rank = nb + 2;
		p.dim[nb] = ta->rank == 1 ? 1 : ta->dim[ta->rank - 2];
		p.dim[nb + 1] = tb->rank == 1 ? 1 : tb->dim[tb->rank - 1];
		if (promoted && mi != b->last)
			return fail(b, rn, "a matmul with a 1-D operand takes no epilogue");
		if (promoted && (is_view(b, A) || is_view(b, B)))
			return fail(b, rn, "a 1-D matmul operand is read whole, not through a view");
		set_space(b, &p);
		R = b->R;
		K = ta->dim[ta->rank - 1];
		view_of(ta, R, true, av);
		view_of(tb, R, false, bv);
		/* an operand view may stretch batch dims (stride 0: one
		 * element per tile, as the batch is walked one index at a
		 * time), not a matrix dim (fuse does not fold it: the dot
		 * would read one element per tile, and the cost model counts
		 * whole tiles) */
		for (int q = 0; q < 2; q++) {
			int x = q ? B : A;
			const Type *t = &b->g->nodes[x].type;
			IrView iv;

			if (view_base(b, x, &iv) < 0)
				continue;
			for (int k = t->rank - 2; k < t->rank; k++)
				if (k >= 0 && iv.stride[k] == 0 && t->dim[k] != 1)
					return fail(b, &b->g->nodes[x], "a matmul operand's matrix dim is "
					    "stretched (expand); fuse folds such an expand into no matmul");
		}
	}
	set_extents(b, b->bm, b->bn);
	/* a promoted dim of 1 is a tile dim of 1, not a block of masked lanes */
	if (b->g->nodes[A].type.rank == 1)
		b->dim[R - 2].ext = 1;
	if (b->g->nodes[B].type.rank == 1)
		b->dim[R - 1].ext = 1;
	for (int j = 0; j < R; j++)
		prog[j] = true;
	program_dims(b, prog);
	for (int j = 0; j < R; j++)
		s[j] = b->dim[j].ext;
	z = full(b, "zero", 0, R, s);
	if (!is_view(b, A))
		use_ext(b, A);
	if (!is_view(b, B))
		use_ext(b, B);
	fo = tile_build_for(b->ng, b->f, 0, K, b->bk, z, LOC_NONE);
	def(b, fo, "acc", R, s);
	{
		int var = tile_build_loop_var(b->ng, b->f, fo, uniq(b, "k"));
		int it = tile_build_loop_iter(b->ng, b->f, fo, uniq(b, "c"));
		int64_t as[IR_MAX_RANK], bs[IR_MAX_RANK];
		TileIdx ia[IR_MAX_RANK], ib[IR_MAX_RANK];
		int in[3];

		memcpy(as, s, sizeof as);
		memcpy(bs, s, sizeof bs);
		as[R - 1] = b->bk;
		bs[R - 2] = b->bk;
		for (int j = 0; j < R - 1; j++)
			ia[j] = j < R - 2 && av[j] == 1 ? (TileIdx){0} : b->dim[j].off;
		ia[R - 1] = idx_of(var, 1);
		in[0] = def(b, mm_load(b, A, R, ia, b->S[R - 2] % b->bm || K % b->bk, av), "a", R,
		    as);
		for (int j = 0; j < R - 2; j++)
			ib[j] = bv[j] == 1 ? (TileIdx){0} : b->dim[j].off;
		ib[R - 2] = idx_of(var, 1);
		ib[R - 1] = b->dim[R - 1].off;
		in[1] = def(b, mm_load(b, B, R, ib, b->S[R - 1] % b->bn || K % b->bk, bv), "b", R,
		    bs);
		in[2] = it;
		d = op_def(b, TO_DOT, OP_INPUT, 3, in, NULL, "d", R, s);
		close_loop(b, fo, d);
	}
	b->tv[mi] = res(b, fo);
	if (promoted) {
		/* the result seen as the promoted space: its added 1 at 0 */
		TileAttrs at = {.set = TAB(VIEW), .nview = R};
		TileIdx idx[IR_MAX_RANK];
		bool ragged = false;

		for (int j = 0; j < R; j++) {
			at.view[j] = b->S[j];
			idx[j] = b->dim[j].off;
			ragged |= b->S[j] % b->dim[j].ext != 0;
		}
		if (ragged)
			at.set |= TAB(MASKED);
		tile_build_access(b->ng, b->f, TO_STORE, TILE_RESULT, R, idx, res(b, fo), &at,
		    LOC_NONE);
		return 0;
	}
	/* The epilogue's externals are loaded once per program. */
	b->from = mi + 1;
	load_level(b, 0);
	for (int i = mi + 1; i <= b->last; i++)
		if (emit_op(b, i) != 0)
			return -1;
	v = b->tv[b->root];
	if (reduce) {
		int64_t progs = 1;
		bool red[IR_MAX_RANK];

		red_mask(b, rn, red);
		for (int j = 0; j < R; j++)
			if (red[j])
				progs *= (b->S[j] + b->dim[j].ext - 1) / b->dim[j].ext;
		if (progs > 1) {
			if (rn->op == OP_MIN || rn->op == OP_PROD)
				return fail(b, rn, "its reduction spans several programs, and partial "
				    "results combine by atomic add or max only");
			b->f->has_init = true;
			b->f->init = ir_scalar_neutral(rn->op, rn->type.dt);
			store_root(b, v, rn->op == OP_MAX ? TO_ATOMIC_MAX : TO_ATOMIC_ADD, red);
			return 0;
		}
		store_root(b, v, TO_STORE, red);
		return 0;
	}
	store_root(b, v, TO_STORE, NULL);
	return 0;
}

/* ---- conv2d and the pools ---------------------------------------------- */

/* An index expression of up to two scalar terms and a constant. */
static TileIdx
idx2(int v0, int64_t c0, int v1, int64_t c1, int64_t k)
{
	TileIdx x = {0};

	if (v0 >= 0 && c0) {
		x.val[x.nterm] = v0;
		x.coef[x.nterm++] = c0;
	}
	if (v1 >= 0 && c1) {
		x.val[x.nterm] = v1;
		x.coef[x.nterm++] = c1;
	}
	x.k = k;
	return x;
}

/* Why the geometry is beyond what window= holds (the tile
 * verifier's bounds, which keep its index arithmetic far from overflow),
 * or NULL. */
static const char *
window_too_big(const Window *v)
{
	const int64_t lim = (int64_t)1 << 20, pmax = (int64_t)1 << 40;

	if (v->kh > lim || v->kw > lim || v->sh > lim || v->sw > lim || v->dh > lim ||
	    v->dw > lim)
		return "a kernel size, stride or dilation above 2^20 is beyond the tile IR's window=";
	if (v->pt > pmax || v->pl > pmax || v->pb > pmax || v->pr > pmax)
		return "a pad above 2^40 is beyond the tile IR's window=";
	return NULL;
}

/* The result stored as the 2-d view (rows, cols) at [r, c]: masked when a
 * block can pass the end. */
static void
store_view(LB *b, int v, TileIdx r, TileIdx c, int64_t rows, int64_t cols, bool masked)
{
	TileAttrs at = {0};
	TileIdx idx[2] = {r, c};

	at.set = TAB(VIEW) | (masked ? TAB(MASKED) : 0);
	at.nview = 2;
	at.view[0] = rows;
	at.view[1] = cols;
	tile_build_access(b->ng, b->f, TO_STORE, TILE_RESULT, 2, idx, v, &at, LOC_NONE);
}

/*
 * An operand x of a conv_epilogue, loaded once per program as the part of
 * it that the program's [BN filters, BM pixels] tile of image ni needs:
 * through the view (N', F', P'), each the whole dim or 1 as x broadcasts
 * against y (N, F, OH, OW) (fuse's conv_loadable), the tile [1, BN or 1,
 * BM or 1] at [ni or 0, pf*BN or 0, pb*BM or 0]; masked where a block can
 * pass the end, so that a ragged tile reads only x's own elements.  A
 * rank-0 x is one element.  Returns the tile value, or -1.
 */
static int
conv_operand(LB *b, const Window *v, int x, int ni, int pf, int pb)
{
	const Type *t = &b->g->nodes[x].type;
	int64_t d[4], bn = b->bn, sh[3];
	TileAttrs at = {0};
	TileIdx idx[3];
	char nm[256];

	snprintf(nm, sizeof nm, "%.200s.tile", b->g->nodes[x].name);
	if (t->rank == 0)
		return def(b, load(b, b->argof[x], 0, NULL, false, 0), nm, 0, NULL);
	if (t->rank > 4)
		return -1;
	for (int k = 0; k < 4; k++) {
		int j = k - (4 - t->rank);

		d[k] = j >= 0 ? t->dim[j] : 1;
	}
	if ((d[0] != 1 && d[0] != v->n) || (d[1] != 1 && d[1] != v->f) ||
	    (d[2] != 1 && d[2] != v->oh) || (d[3] != 1 && d[3] != v->ow) ||
	    (d[2] * d[3] != 1 && d[2] * d[3] != v->oh * v->ow))
		return -1;
	at.set = TAB(VIEW);
	at.nview = 3;
	at.view[0] = d[0];
	at.view[1] = d[1];
	at.view[2] = d[2] * d[3];
	sh[0] = 1;
	sh[1] = d[1] == 1 ? 1 : bn;
	sh[2] = at.view[2] == 1 ? 1 : b->bm;
	idx[0] = d[0] == 1 ? (TileIdx){0} : idx_of(ni, 1);
	idx[1] = d[1] == 1 ? (TileIdx){0} : idx_of(pf, bn);
	idx[2] = at.view[2] == 1 ? (TileIdx){0} : idx_of(pb, b->bm);
	if ((sh[1] > 1 && v->f % bn) || (sh[2] > 1 && at.view[2] % b->bm)) {
		at.set |= TAB(OTHER);
		at.other = tile_num(0);
	}
	return def(b, tile_build_access(b->ng, b->f, TO_LOAD, b->argof[x], 3, idx, -1, &at,
	    LOC_NONE), nm, 3, sh);
}

/*
 * conv_epilogue: the elementwise ops after the conv2d, applied to its
 * accumulator tile r ([BN filters, BM pixels], the bias added) before the
 * one store, by emit_op as a matmul_epilogue's are; each operand from
 * outside the kernel is loaded once per program (conv_operand).  The
 * result, [1, BN, BM] once an operand of rank 3 met it, is stored through
 * the view (N, F, OH*OW) of y, which masks a ragged filter block at its
 * own image's end; a tile still [BN, BM] goes as the lone conv's does.
 */
static int
conv_epilogue(LB *b, const Window *v, int r, int ni, int pf, int pb)
{
	const Node *rn = &b->g->nodes[b->root];
	const TileVal *tv;
	int64_t P = v->oh * v->ow;

	b->tv[b->first] = r;
	for (int i = b->first + 1; i <= b->last; i++) {
		const Node *n = &b->g->nodes[i];

		for (int j = 0; j < n->nin; j++) {
			int x = n->in[j];

			if (in_kernel(b, x) || b->tv[x] >= 0)
				continue;
			if ((b->tv[x] = conv_operand(b, v, x, ni, pf, pb)) < 0)
				return fail(b, &b->g->nodes[x], "a conv_epilogue's operand must broadcast "
				    "as (N or 1, F or 1, OH and OW or 1 and 1) against its conv2d");
		}
		if (emit_op(b, i) != 0)
			return -1;
	}
	tv = &b->f->vals[b->tv[b->root]];
	if (tv->rank == 2 && tv->shape[0] == b->bn && tv->shape[1] == b->bm) {
		store_view(b, b->tv[b->root], idx2(ni, v->f, pf, b->bn, 0), idx_of(pb, b->bm),
		    v->n * v->f, P, v->f % b->bn || P % b->bm);
		return 0;
	}
	if (tv->rank != 3 || tv->shape[0] != 1 || tv->shape[1] != b->bn || tv->shape[2] != b->bm)
		return fail(b, rn, "a conv_epilogue's root must depend on its conv2d");
	{
		TileAttrs at = {0};
		TileIdx idx[3] = {idx_of(ni, 1), idx_of(pf, b->bn), idx_of(pb, b->bm)};

		at.set = TAB(VIEW) | (v->f % b->bn || P % b->bm ? TAB(MASKED) : 0);
		at.nview = 3;
		at.view[0] = v->n;
		at.view[1] = v->f;
		at.view[2] = P;
		tile_build_access(b->ng, b->f, TO_STORE, TILE_RESULT, 3, idx, b->tv[b->root], &at,
		    LOC_NONE);
	}
	return 0;
}

/* conv2d as an implicit GEMM, computed as y[n] (F x P) = w (F x Kg) times
 * the im2col matrix of x[n] (Kg x P), P = OH*OW, Kg = C/groups*KH*KW: the
 * GEMM autotune sees, M = N*OH*OW (pixels, BM a block), N = F (filters,
 * BN), K = Kg (BK a step), with the product taken transposed so that the
 * tile stored is a block of y's own NCHW rows.  Grid axis 0 walks the
 * pixel blocks of every image (fastest, so that the filter tiles of w are
 * reused from program to program), axis 1 the filter blocks; a block of
 * filters stays inside one group (BN is cut to a divisor of F/groups when
 * groups > 1).  Each K step loads w's tile in place and packs the im2col
 * tile for the dot with the im2col op, which never builds the matrix. */
static int
lower_conv(LB *b)
{
	const Node *n;
	Window v;
	char err[IR_ERR_MAX];
	Loc at_;
	int64_t P, Kg, PB, fg, bn, s[2], as[2], bs[2], bias[2] = {0, 1};
	int pm, pf, ni, pb, gi = -1, z, fo, d, r, in[3];
	TileAttrs at = {0};
	TileIdx ia[2], ib[3];

	n = &b->g->nodes[b->first];
	if (n->op != OP_CONV2D)
		return fail(b, n, "a conv_epilogue starts with its conv2d");
	for (int i = b->first + 1; i <= b->last; i++)
		if (!ir_is_elementwise(b->g->nodes[i].op) ||
		    b->g->nodes[i].type.dt != n->type.dt)
			return fail(b, &b->g->nodes[i], "a conv_epilogue holds a conv2d and then "
			    "elementwise ops in its element type");
	if (ir_window_of(b->g, n, &v, err, &at_) != 0)
		return fail(b, n, err);
	if (window_too_big(&v))
		return fail(b, n, window_too_big(&v));
	P = v.oh * v.ow;
	Kg = v.c / v.groups * v.kh * v.kw;
	fg = v.f / v.groups;
	b->bn = bn = ir_conv_block_n(&v, b->bn);
	PB = (P + b->bm - 1) / b->bm;
	b->f->grid[0] = v.n * PB;
	b->f->grid[1] = (v.f + bn - 1) / bn;
	b->f->grid[2] = 1;
	pm = scalar(b, TO_PROGRAM_ID, "pm", -1, 0);
	pf = scalar(b, TO_PROGRAM_ID, "pf", -1, 1);
	ni = scalar(b, TO_IDIV, "img", pm, PB);
	pb = scalar(b, TO_IREM, "pb", pm, PB);
	if (v.groups > 1)
		gi = scalar(b, TO_IDIV, "grp", pf, fg / bn);
	s[0] = bn, s[1] = b->bm;
	z = full(b, "zero", 0, 2, s);
	fo = tile_build_for(b->ng, b->f, 0, Kg, b->bk, z, LOC_NONE);
	def(b, fo, "acc", 2, s);
	{
		int var = tile_build_loop_var(b->ng, b->f, fo, uniq(b, "k"));
		int it = tile_build_loop_iter(b->ng, b->f, fo, uniq(b, "c"));

		as[0] = bn, as[1] = b->bk;
		ia[0] = idx_of(pf, bn);
		ia[1] = idx_of(var, 1);
		at.set = TAB(VIEW) | (v.f % bn || Kg % b->bk ? TAB(OTHER) : 0);
		at.nview = 2;
		at.view[0] = v.f;
		at.view[1] = Kg;
		at.other = tile_num(0);
		in[0] = def(b, tile_build_access(b->ng, b->f, TO_LOAD, b->argof[n->in[1]], 2, ia, -1,
		    &at, LOC_NONE), "wt", 2, as);
		bs[0] = b->bk, bs[1] = b->bm;
		ib[0] = idx2(ni, v.c, gi, v.c / v.groups, 0);
		ib[1] = idx_of(var, 1);
		ib[2] = idx_of(pb, b->bm);
		memset(&at, 0, sizeof at);
		at.set = TAB(OTHER) | TAB(WINDOW);
		at.other = tile_num(0);
		at.nwin = 11;
		{
			int64_t w[11] = {v.c / v.groups, v.kh, v.kw, v.oh, v.ow, v.sh, v.sw, v.pt, v.pl,
			    v.dh, v.dw};

			memcpy(at.win, w, sizeof w);
		}
		in[1] = def(b, tile_build_access(b->ng, b->f, TO_IM2COL, b->argof[n->in[0]], 3, ib,
		    -1, &at, LOC_NONE), "cols", 2, bs);
		in[2] = it;
		d = op_def(b, TO_DOT, OP_INPUT, 3, in, NULL, "d", 2, s);
		close_loop(b, fo, d);
	}
	r = res(b, fo);
	if (v.bias) {
		memset(&at, 0, sizeof at);
		at.set = TAB(VIEW) | (v.f % bn ? TAB(OTHER) : 0);
		at.nview = 2;
		at.view[0] = v.f;
		at.view[1] = 1;
		ia[0] = idx_of(pf, bn);
		ia[1] = (TileIdx){0};
		bias[0] = bn;
		in[0] = r;
		in[1] = def(b, tile_build_access(b->ng, b->f, TO_LOAD, b->argof[n->in[2]], 2, ia, -1,
		    &at, LOC_NONE), "bias", 2, bias);
		r = op_def(b, TO_BINARY, OP_ADD, 2, in, NULL, "biased", 2, s);
	}
	if (b->first == b->last) {
		store_view(b, r, idx2(ni, v.f, pf, bn, 0), idx_of(pb, b->bm), v.n * v.f, P,
		    v.f % bn || P % b->bm);
		return 0;
	}
	return conv_epilogue(b, &v, r, ni, pf, pb);
}

/* max_pool2d and avg_pool2d as windowed reductions: a program's
 * [BM planes (N*C), BN output pixels] tile is one window_max or
 * window_sum, which folds each tap of the window (-inf or 0 outside the
 * input) into the result as it reads it; avg_pool2d then divides by
 * window_count's divisors.  Grid axis 0 walks the pixel blocks, axis 1
 * the plane blocks. */
static int
lower_pool(LB *b)
{
	const Node *n = &b->g->nodes[b->root];
	bool mx = n->op == OP_MAX_POOL2D;
	Window v;
	char err[IR_ERR_MAX];
	Loc at_;
	int64_t P, NC, s[2], cs[2];
	int pp, pr, acc, in[2];
	TileAttrs at = {0};
	TileIdx ix[2];

	if (b->first != b->last)
		return fail(b, n, "a pool is a kernel of its own");
	if (ir_window_of(b->g, n, &v, err, &at_) != 0)
		return fail(b, n, err);
	if (window_too_big(&v))
		return fail(b, n, window_too_big(&v));
	P = v.oh * v.ow;
	NC = v.n * v.c;
	b->f->grid[0] = (P + b->bn - 1) / b->bn;
	b->f->grid[1] = (NC + b->bm - 1) / b->bm;
	b->f->grid[2] = 1;
	pp = scalar(b, TO_PROGRAM_ID, "pp", -1, 0);
	pr = scalar(b, TO_PROGRAM_ID, "pr", -1, 1);
	s[0] = b->bm, s[1] = b->bn;
	ix[0] = idx_of(pr, b->bm);
	ix[1] = idx_of(pp, b->bn);
	{
		int64_t w[11] = {NC, v.kh, v.kw, v.oh, v.ow, v.sh, v.sw, v.pt, v.pl, v.dh, v.dw};

		at.set = TAB(WINDOW);
		at.nwin = 11;
		memcpy(at.win, w, sizeof w);
		acc = def(b, tile_build_access(b->ng, b->f, mx ? TO_WINDOW_MAX : TO_WINDOW_SUM,
		    b->argof[n->in[0]], 2, ix, -1, &at, LOC_NONE), mx ? "mx" : "sum", 2, s);
	}
	if (!mx) {
		int64_t w[12] = {v.oh, v.ow, v.sh, v.sw, v.kh, v.kw, v.dh, v.dw,
		    v.count_include_pad ? 0 : v.pt, v.count_include_pad ? v.pt + v.h + v.pb : v.pt + v.h,
		    v.count_include_pad ? 0 : v.pl, v.count_include_pad ? v.pl + v.w + v.pr : v.pl + v.w};

		memset(&at, 0, sizeof at);
		at.set = TAB(WINDOW);
		at.nwin = 12;
		memcpy(at.win, w, sizeof w);
		cs[0] = 1, cs[1] = b->bn;
		in[0] = acc;
		in[1] = def(b, tile_build_access(b->ng, b->f, TO_WINDOW_COUNT, b->argof[n->in[0]], 1,
		    &ix[1], -1, &at, LOC_NONE), "count", 2, cs);
		acc = op_def(b, TO_BINARY, OP_DIV, 2, in, NULL, "avg", 2, s);
	}
	store_view(b, acc, idx_of(pr, b->bm), idx_of(pp, b->bn), NC, P, NC % b->bm || P % b->bn);
	return 0;
}

/* ---- the pass -------------------------------------------------------- */

static int
lower_kernel(LB *b, const char *name, KernelKind kind)
{
	const Node *rn = &b->g->nodes[b->root];
	int rc;
	bool has_mm = false, has_layout = false, has_red = false, has_copy = false;
	Graph *ng = b->ng;

	b->f = tile_fn_new(ng, arena_strndup(&ng->arena, name, strlen(name)), kind);
	b->f->dt = rn->type.dt;
	tile_fn_begin(b->f, &b->scratch);
	{
		size_t nops = 0;         /* where has three operands, concat any */

		for (int i = b->first; i <= b->last; i++)
			nops += (size_t)b->g->nodes[i].nin;
		b->f->args = arena_alloc(&ng->arena, sizeof(int) * (nops + 1));
	}
	b->from = b->first;
	taken_clear(&b->taken);
	taken_put(&b->taken, rn->name);
	for (int i = b->first; i <= b->last; i++) {
		OpId op = b->g->nodes[i].op;

		if (b->g->nodes[i].nin && (op == OP_MAX || op == OP_MIN || op == OP_PROD)) {
			b->maxin[b->g->nodes[i].in[0]] = b->root;
			b->redop[b->g->nodes[i].in[0]] = op;
		}
	}
	/* Operands in first-use order. */
	for (int i = b->first; i <= b->last; i++) {
		const Node *n = &b->g->nodes[i];

		if (is_view(b, i)) {
			IrView v;
			const char *why;

			if (view_chain(b, i, &v, &why) < 0)
				return fail(b, n, why);
		} else {
			has_mm |= n->op == OP_MATMUL;
			has_layout |= ir_ops[n->op].cls == OC_LAYOUT;
			has_copy |= ir_ops[n->op].cls == OC_COPY;
		}
		has_red |= ir_ops[n->op].cls == OC_REDUCTION;
		for (int j = 0; j < n->nin; j++)
			if (!in_kernel(b, n->in[j]))
				use_ext(b, n->in[j]);
	}
	for (int i = b->first; i < b->last; i++)
		if (ir_ops[b->g->nodes[i].op].cls == OC_ARGREDUCE && !is_view(b, i))
			return fail(b, &b->g->nodes[i], "argmax and argmin are kernels of their own");
	/* A kernel may mix integers with floats, or i32 with i64: the tile
	 * executor then holds each tile in its own type (tile_mixed.c). */
	if (kind == KK_ATTENTION) {
		AttnMatch am;
		const char *why;

		rc = attn_match_range(b->g, b->first, b->last, &am, &why) ?
		    lower_attention_build(b->ng, b->f, &am, b->bm, b->bn) : fail(b, rn, why);
	} else if (ir_ops[rn->op].cls == OC_ARGREDUCE)
		rc = lower_argreduce(b);
	else if (rn->op == OP_CONV2D || kind == KK_CONV_EPILOGUE)
		rc = lower_conv(b);
	else if (ir_ops[rn->op].cls == OC_POOL)
		rc = lower_pool(b);
	else if (has_mm)
		rc = lower_matmul(b);
	else if (has_layout)
		rc = lower_opaque(b);
	else if (has_copy)
		rc = lower_copy(b);
	else if (kind == KK_ROW_REDUCTION)
		rc = lower_pointwise(b, true);
	else if (has_red)
		rc = lower_reduction(b);
	else
		rc = lower_pointwise(b, false);
	if (rc != 0)
		return -1;
	/* The verifier's bound on programs (src/ir/tile_verify.c): say so here, as
	 * this pass's error, rather than hand on IR that does not verify. */
	for (int a = 0; a < 3; a++)
		if (b->f->grid[a] > IR_MAX_DIM)
			return fail(b, rn, "a grid axis would have more than 2^30 programs");
	if (b->f->grid[0] * b->f->grid[1] > ((int64_t)1 << 40) / b->f->grid[2])
		return fail(b, rn, "the grid would have more than 2^40 programs");
	b->f->kset |= 1u << KA_BM | 1u << KA_BN;
	b->f->kattr[KA_BM] = b->bm;
	b->f->kattr[KA_BN] = b->bn;
	if ((has_mm && kind != KK_ATTENTION) || rn->op == OP_CONV2D || kind == KK_CONV_EPILOGUE) {
		b->f->kset |= 1u << KA_BK;
		b->f->kattr[KA_BK] = b->bk;
	}
	for (int a = KA_WARPS; a < KA_COUNT; a++)
		if (b->kn && (b->kn->kset & (1u << a))) {
			b->f->kset |= 1u << a;
			b->f->kattr[a] = b->kn->kattr[a];
		}
	b->f->argloc = arena_alloc(&ng->arena, sizeof(Loc) * (size_t)(b->f->nargs + 1));
	tile_fn_end(ng, b->f);
	ng->nodes[b->root].tile = b->f;     /* the root becomes the tiled node */
	return 0;
}

/* bm, bn and bk are powers of two, as a kernel's BM, BN and BK are
 * (ir.h: IR_POW2_WHY); refused with the pipeline, exit 2. */
static int
check_opt(const PassOpt *o, const PassVal *v, StrBuf *why, StrBuf *note)
{
	(void)o;
	(void)note;
	if (ir_is_pow2(v->i))
		return 0;
	strbuf_printf(why, "must be " IR_POW2_WHY ", found '%lld'", (long long)v->i);
	return -1;
}

static int64_t
block(const Kernel *kn, KAttrId a, const PassArgs *args, const char *key)
{
	if (kn && (kn->kset & (1u << a)))
		return kn->kattr[a];
	return pass_int(args, key);
}

/* requires: shapes; preserves: sources, names and types of kernel roots;
 * replaces: every kernel and every compute op outside one by a tiled node */
static int
run(Graph *g, const PassArgs *args, Diag *d)
{
	LB b = {0};
	int n = g->nnodes, bad = 0, eager = 0, kept = 0, stop = n, *outs, no;
	Users u;

	/* bm, bn and bk need no check here: their PassOpt ranges [1, 4096]
	 * are enforced when the pipeline is parsed. */
	if (pass_require_shapes(g, d, "lower-tiled") != 0)
		return -1;
	/* The graph is rebuilt in place: each body goes to its root (whose name
	 * and type the tiled node keeps), sources stay, the other ops of the
	 * kernels go; then ir_compact closes the gaps.  Until then the nodes
	 * read as they were, so a failure leaves the graph as it was. */
	b.g = g;
	b.ng = g;
	b.d = d;
	/* the per-node tables in one block (huge pages when large) */
	b.map = xmalloc_huge(sizeof(int) * 5 * ((size_t)n + 1));
	b.tv = b.map + n + 1;
	b.argof = b.tv + n + 1;
	b.maxin = b.argof + n + 1;
	b.redop = b.maxin + n + 1;
	b.stamp = xcalloc((size_t)n + 1, sizeof(int));
	b.rowmax = pass_int(args, "row-max");
	for (int i = 0; i < n; i++)
		b.map[i] = b.maxin[i] = -1;
	ir_users(g, &u);
	no = ir_outputs(g, &outs);
	for (int k = 0; k < no; k++) {
		const Node *o = &g->nodes[outs[k]];

		if (o->kernel >= 0 && g->kernels[o->kernel].last != outs[k]) {
			diag_error(d, o->loc, "lower-tiled: '%%%s' is an output of the graph "
			    "but not the root of its kernel '@%s'", o->name,
			    g->kernels[o->kernel].name);
			bad++;
		}
	}
	for (int i = 0; i < n && !bad; i++) {
		const Node *nd = &g->nodes[i];
		char kname[64];

		if (nd->op == OP_TILED) {
			diag_error(d, nd->loc, "lower-tiled: '%%%s' is already tiled", nd->name);
			bad++;
			stop = i;
			break;
		}
		if (ir_ops[nd->op].cls == OC_SOURCE) {
			b.map[i] = kept++;
			continue;
		}
		if (nd->kernel >= 0) {
			const Kernel *kn = &g->kernels[nd->kernel];

			if (i != kn->last)
				continue;
			b.kn = kn;
			b.first = kn->first;
			b.last = kn->last;
			/* Only the root may be used outside the kernel. */
			for (int j = kn->first; j < kn->last; j++)
				for (int q = u.start[j]; q < u.start[j + 1]; q++)
					if (g->nodes[u.user[q]].kernel != nd->kernel) {
						diag_error(d, g->nodes[j].loc, "lower-tiled: '%%%s' is used "
						    "outside kernel '@%s', but only its root '%%%s' leaves it",
						    g->nodes[j].name, kn->name, nd->name);
						bad++;
					}
			if (bad)
				break;
		} else {
			b.kn = NULL;
			b.first = b.last = i;
			snprintf(kname, sizeof kname, "eager%d", eager++);
		}
		b.root = i;
		for (int j = b.first; j <= b.last; j++)
			for (int q = 0; q < g->nodes[j].nin; q++) {
				b.tv[g->nodes[j].in[q]] = -1;
				b.argof[g->nodes[j].in[q]] = -1;
			}
		for (int j = b.first; j <= b.last; j++)
			b.tv[j] = b.argof[j] = -1;
		b.bm = block(b.kn, KA_BM, args, "bm");
		b.bn = block(b.kn, KA_BN, args, "bn");
		b.bn_given = b.kn && (b.kn->kset & (1u << KA_BN));
		b.bk = block(b.kn, KA_BK, args, "bk");
		if (b.kn) {
			if (lower_kernel(&b, b.kn->name, b.kn->kind) != 0)
				bad++;
		} else {
			OpClass c = ir_ops[nd->op].cls;
			/* conv2d is an implicit GEMM: matmul's kind (autotune sees
			 * its M, N, K); a pool or a copy op is a kernel of its own,
			 * opaque; argmax and argmin reduce, as a sum would */
			KernelKind kk = c == OC_CONTRACTION || c == OC_CONV ? KK_MATMUL :
			    c == OC_REDUCTION || c == OC_ARGREDUCE ? KK_REDUCTION :
			    c == OC_LAYOUT || c == OC_POOL || c == OC_COPY ? KK_OPAQUE : KK_ELEMENTWISE;

			if (lower_kernel(&b, kname, kk) != 0)
				bad++;
		}
		if (bad)
			stop = i + 1;
		else
			b.map[i] = kept++;
	}
	ir_users_free(&u);
	if (bad) {
		/* Every body so far was made by this pass: before stop the input
		 * has no tiled node, or the loop would have stopped there. */
		for (int i = 0; i < stop; i++)
			g->nodes[i].tile = NULL;
	} else {
		bool had_ret = g->ret != NULL;

		/* The kept nodes as a fresh node of their kind would be: sources
		 * keep their attributes, a root only its name, type and place. */
		for (int i = 0; i < n; i++) {
			const Node *nd = &g->nodes[i];
			Node k = {0};

			if (b.map[i] < 0)
				continue;
			k.op = nd->tile ? OP_TILED : nd->op;     /* tile: lowered just now */
			k.name = nd->name;
			k.type = nd->type;
			k.loc = nd->loc;
			k.kernel = -1;
			k.tile = nd->tile;
			if (!nd->tile) {
				k.at = nd->at;
				k.attrloc = nd->attrloc;   /* a file= error points at it */
			}
			g->nodes[i] = k;
		}
		free(g->kernels);
		g->kernels = NULL;
		g->nkernels = g->capkernels = 0;
		/* The outputs stay the same values. */
		g->ret = arena_alloc(&g->arena, sizeof(int) * (size_t)(no + 1));
		g->nret = no;
		for (int k = 0; k < no; k++)
			if ((g->ret[k] = outs[k]) < 0 || b.map[outs[k]] < 0)
				AICM_BUG("an output lost in lowering");
		ir_compact(g, b.map);
		if (!had_ret && ir_return_is_default(g))
			g->ret = NULL, g->nret = 0;
	}
	free(outs);
	tile_scratch_free(&b.scratch);
	free(b.taken.name);
	hashmap_free(&b.taken.map);
	free(b.map);
	free(b.stamp);
	return bad ? -1 : 0;
}

const Pass pass_lower_tiled = {
	.name = "lower-tiled",
	.summary = "turn every kernel (and every op outside one) into a tile program",
	.opts = (const PassOpt[]){
		{"bm", PO_INT, "32", "rows per tile (BM) when the kernel has no BM", 1, 4096},
		{"bn", PO_INT, "32", "columns per tile (BN) when the kernel has no BN", 1, 4096},
		{"row-max", PO_INT, "8192", "the widest row (its power of two) a row_reduction "
		    "keeps in one tile; a wider one (or one wider than the kernel's BN) loops over "
		    "the row once per reduction, in blocks of BN (at most row-max)", 1, 1 << 24},
		{"bk", PO_INT, "32", "the matmul's K step (BK) when the kernel has no BK", 1, 4096},
		{0},
	},
	.run = run,
	.check_opt = check_opt,
};
