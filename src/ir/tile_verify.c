/*
 * tile_verify.c: the verifier of tiled kernels (tile.h), one check per
 * tile op.
 *
 * The verifier is what makes a hand-written or lowered body safe to run:
 * the executor trusts it for SSA, scoping, shapes and bounds, so that the
 * plan can be built without checks of its own beyond AICM_BUG nets.  Bounds
 * are proved with interval arithmetic over the index expressions: a program
 * id ranges over its grid axis, a loop counter over its iterations; loop
 * bounds and indices stay within +-2^50, so that neither this arithmetic
 * nor the executor's can overflow.
 *
 * As MLIR gives each op its own verify(), each op kind has its own check,
 * tv_<op>, found in a table indexed by TileOpKind (tile_check).  What holds
 * for every op is checked once, before it, by check_inst: operands and
 * index terms defined before their use and in scope, scalars or tiles as
 * the op takes them (an op whose uses are wrong gets no check of its own:
 * its shapes would only echo that error), and a result tile built from the
 * block sizes.  tile_verify checks the kernel around the body (operands,
 * result type, grid), runs the instructions in order and, after each, takes
 * the range of the scalar it defines (scalar_range), which later bounds
 * proofs read.  Each check returns the number of errors it reported, in
 * the order it found them: instruction by instruction, and within one in
 * the order of its checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tile.h"

typedef struct Range {
	int64_t lo, hi;
	bool ovf;                    /* the expression can overflow int64 */
} Range;

/* Indices, loop bounds and grids stay far from int64's edges, so that the
 * executor's index arithmetic cannot overflow. */
#define TILE_IDX_MAX ((int64_t)1 << 50)
/* im2col's and window_count's kernel sizes, strides and dilations */
#define TILE_WIN_MAX ((int64_t)1 << 20)

typedef struct VCtx {
	const Graph *g;
	const Node *n;
	const TileFn *f;
	Diag *d;
	int *parent;                 /* innermost enclosing for of each inst, or -1 */
	Range *range;                /* of scalar values */
	unsigned *dep;               /* of scalar values: the grid axes they vary with */
	int stores[3];               /* so far: store, atomic_add, atomic_max */
	int bad;
} VCtx;

/* Reports an error at instruction in; its value is 1, the count. */
#define VERR(c, in, ...) (diag_error((c)->d, iloc((c), (in)), __VA_ARGS__), 1)

const Type *
tile_target_type(const Graph *g, const Node *n, const TileInst *in, Type *buf)
{
	const Type *t = in->arg == TILE_RESULT ? &n->type : &g->nodes[n->tile->args[in->arg]].type;

	if (!in->has_view)
		return t;
	*buf = *t;
	buf->rank = in->nview;
	for (int i = 0; i < in->nview; i++)
		buf->dim[i] = in->view[i];
	return buf;
}

static const char *
target_name(const Graph *g, const Node *n, const TileInst *in)
{
	return in->arg == TILE_RESULT ? n->name : g->nodes[n->tile->args[in->arg]].name;
}

/* ---- helpers --------------------------------------------------------- */

static Loc
iloc(const VCtx *c, const TileInst *in)
{
	return in->loc.line ? in->loc : c->n->loc;
}

/* Whether inst u lies inside the body of loop f (or f is -1). */
static bool
inside(const VCtx *c, int u, int f)
{
	return f < 0 || (u > f && u <= c->f->insts[f].end);
}

/* Whether value v may be used at inst u: defined before, in scope. */
static bool
visible(const VCtx *c, int v, int u)
{
	const TileVal *tv = &c->f->vals[v];
	const TileInst *def = &c->f->insts[tv->def];

	if (tv->def >= u)
		return false;
	if (def->op == TO_FOR && (def->var == v || def->iter == v))
		return inside(c, u, tv->def);
	if (def->op == TO_FOR && u <= def->end)
		return false;           /* a loop's result exists after its yield */
	return inside(c, u, c->parent[tv->def]);
}

static bool
is_tile(const VCtx *c, int v)
{
	return c->f->vals[v].rank >= 0;
}

/* Whether a and b have one rank and one shape (all IR_MAX_RANK entries). */
static bool
same_type(const TileVal *a, const TileVal *b)
{
	return a->rank == b->rank && !memcmp(a->shape, b->shape, sizeof a->shape);
}

static bool
is_block(const TileFn *f, int64_t d)
{
	if (d == 1)
		return true;
	for (int a = KA_BM; a <= KA_BK; a++)
		if ((f->kset & (1u << a)) && f->kattr[a] == d)
			return true;
	return false;
}

static int
broadcast(const TileVal *a, const TileVal *b, int64_t *out)
{
	int r = a->rank > b->rank ? a->rank : b->rank;

	for (int i = 0; i < r; i++) {
		int ia = i - (r - a->rank), ib = i - (r - b->rank);
		int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;

		if (da != db && da != 1 && db != 1)
			return -1;
		out[i] = da == 1 ? db : da;
	}
	return r;
}

static void
shape_str(const int64_t *s, int r, char *buf, size_t n)
{
	size_t m = 0;

	m += (size_t)snprintf(buf, n, "[");
	for (int i = 0; i < r && m < n; i++)
		m += (size_t)snprintf(buf + m, n - m, "%s%lld", i ? ", " : "", (long long)s[i]);
	if (m < n)
		snprintf(buf + m, n - m, "]");
}

/* Whether in's result has shape s of rank r; reports it if not. */
static int
want_shape(VCtx *c, const TileInst *in, const int64_t *s, int r)
{
	const TileVal *v = &c->f->vals[in->res];
	char a[96], b[96];

	if (v->rank == r && !memcmp(v->shape, s, sizeof(int64_t) * (size_t)r))
		return 0;
	shape_str(v->shape, v->rank, a, sizeof a);
	shape_str(s, r, b, sizeof b);
	return VERR(c, in, "'%s' result '%%%s' is written %s but its operands make %s",
	    tile_op_name(in), v->name, a, b);
}

/* Whether loop in's bounds lie within +-TILE_IDX_MAX and its step below
 * it, so that the arithmetic on them (here and in the executor) stays far
 * from int64's edges (a step below 1 is refused on its own). */
static bool
for_bounds_ok(const TileInst *in)
{
	return in->lo >= -TILE_IDX_MAX && in->lo <= TILE_IDX_MAX && in->hi >= -TILE_IDX_MAX &&
	    in->hi <= TILE_IDX_MAX && in->step <= TILE_IDX_MAX;
}

/* ---- accesses: loads, stores, atomics -------------------------------- */

static Range
idx_range(const VCtx *c, const TileIdx *x)
{
	Range r = {x->k, x->k, false};

	for (int t = 0; t < x->nterm; t++) {
		Range v = c->range[x->val[t]];
		int64_t a, b;

		if (__builtin_mul_overflow(v.lo, x->coef[t], &a) ||
		    __builtin_mul_overflow(v.hi, x->coef[t], &b) ||
		    __builtin_add_overflow(r.lo, a < b ? a : b, &r.lo) ||
		    __builtin_add_overflow(r.hi, a < b ? b : a, &r.hi))
			r.ovf = true;
	}
	if (r.lo < -TILE_IDX_MAX || r.hi > TILE_IDX_MAX)
		r.ovf = true;
	return r;
}

/* An access's view t must be positive in every dimension and hold as many
 * elements as the tensor it reshapes. */
static int
check_view(VCtx *c, const TileInst *in, const Type *t)
{
	Type base = in->arg == TILE_RESULT ? c->n->type : c->g->nodes[c->f->args[in->arg]].type;
	char n[32];

	/* Two negative dimensions would make a positive count, and the
	 * bounds below would then prove nothing. */
	for (int k = 0; k < t->rank; k++)
		if (t->dim[k] < 1)
			return VERR(c, in, "'%s' view dimension %d is %lld; expected 1 or more",
			    tile_op_name(in), k, (long long)t->dim[k]);
	if (in->vstr) {
		/* a strided view: its last element (every stride and the offset
		 * non-negative, so the largest address) inside the tensor */
		int64_t hi = in->vstr[IR_MAX_RANK];
		bool ovf = hi < 0;

		for (int k = 0; k < t->rank && !ovf; k++) {
			int64_t s = in->vstr[k], e;

			if (s < 0)
				return VERR(c, in, "'%s' stride %d is %lld; expected 0 or more",
				    tile_op_name(in), k, (long long)s);
			ovf = __builtin_mul_overflow(t->dim[k] - 1, s, &e) ||
			    __builtin_add_overflow(hi, e, &hi);
		}
		if (ovf || hi >= ir_type_numel(&base))
			return VERR(c, in, "'%s' strided view reaches element %s of '%%%s', which has "
			    "%lld", tile_op_name(in), ovf ? "past 2^63 or below 0" : (snprintf(n, sizeof n,
			    "%lld", (long long)hi), n), target_name(c->g, c->n, in),
			    (long long)ir_type_numel(&base));
		return 0;
	}
	if (ir_type_numel(&base) == ir_type_numel(t))
		return 0;
	if (ir_type_numel(t) < 0)
		snprintf(n, sizeof n, "more than 2^63");
	else
		snprintf(n, sizeof n, "%lld", (long long)ir_type_numel(t));
	return VERR(c, in, "'%s' view has %s elements but '%%%s' has %lld", tile_op_name(in), n,
	    target_name(c->g, c->n, in), (long long)ir_type_numel(&base));
}

/* Index k of access in, of a tile of extent ext along it, must stay within
 * +-2^50, at or above 0 and, unless masked, inside dimension k of t. */
static int
check_index(VCtx *c, const TileInst *in, const Type *t, int k, int64_t ext)
{
	Range r = idx_range(c, &in->idx[k]);
	const char *name = target_name(c->g, c->n, in);

	if (r.ovf)
		return VERR(c, in, "'%s' of '%%%s' index %d can exceed %lld in magnitude",
		    tile_op_name(in), name, k, (long long)TILE_IDX_MAX);
	if (r.lo < 0)
		return VERR(c, in, "'%s' of '%%%s' index %d can be %lld, below 0", tile_op_name(in),
		    name, k, (long long)r.lo);
	if (!in->masked && r.hi + ext > t->dim[k])
		return VERR(c, in, "'%s' of '%%%s' reaches element %lld of dimension %d (size %lld) "
		    "without a mask; write %s", tile_op_name(in), name, (long long)(r.hi + ext - 1),
		    k, (long long)t->dim[k], (tile_ops[in->op].attrs & TAB(OTHER)) ? "other=..." :
		    "'masked'");
	return 0;
}

/* A load's or store's target, indices and tile agree in rank, and every
 * index stays inside the tensor (or the access is masked). */
static int
check_access(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	const TileVal *tile = &c->f->vals[in->op == TO_LOAD ? in->res : in->in[0]];
	Type buf;
	const Type *t = tile_target_type(c->g, c->n, in, &buf);
	int bad = 0;

	if (in->has_view && check_view(c, in, t))
		return 1;
	if (in->nidx != t->rank || tile->rank != t->rank)
		return VERR(c, in, "'%s' of '%%%s' (rank %d) has %d indices and a tile of rank %d; "
		    "all three must agree", tile_op_name(in), target_name(c->g, c->n, in), t->rank,
		    in->nidx, tile->rank);
	for (int k = 0; k < in->nidx; k++)
		bad += check_index(c, in, t, k, tile->shape[k]);
	return bad;
}

/* Programs along a grid axis that a store's indices ignore would all store
 * the same elements. */
static int
store_grid(VCtx *c, const TileInst *in)
{
	unsigned dep = 0;
	int bad = 0;

	for (int k = 0; k < in->nidx; k++)
		for (int t = 0; t < in->idx[k].nterm; t++)
			if (in->idx[k].coef[t])
				dep |= c->dep[in->idx[k].val[t]];
	for (int a = 0; a < 3; a++)
		if (c->f->grid[a] > 1 && !(dep & (1u << a)))
			bad += VERR(c, in, "'store' to '%%%s' does not depend on program_id axis %d: its "
			    "%lld programs would store the same elements (use atomics to combine)",
			    c->n->name, a, (long long)c->f->grid[a]);
	return bad;
}

/* A store inside a loop whose place does not move with the loop writes the
 * same elements again on every trip (a loop of one trip is harmless). */
static int
store_loops(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	int bad = 0;

	for (int p = c->parent[i]; p >= 0; p = c->parent[p]) {
		const TileInst *lp = &c->f->insts[p];
		bool moves = false;

		for (int k = 0; k < in->nidx; k++)
			for (int t = 0; t < in->idx[k].nterm; t++)
				moves = moves || in->idx[k].val[t] == lp->var;
		if (!moves && for_bounds_ok(lp) && lp->hi - lp->lo > lp->step)
			bad += VERR(c, in, "'store' to '%%%s' inside the loop over '%%%s' stores the "
			    "same elements on every trip", c->n->name, c->f->vals[lp->var].name);
	}
	return bad;
}

/* Counts the writes of the result: one store, or atomics of one kind. */
static int
count_store(VCtx *c, const TileInst *in)
{
	int *s = c->stores, bad = 0;

	s[in->op == TO_STORE ? 0 : in->op == TO_ATOMIC_ADD ? 1 : 2]++;
	if (s[1] && s[2])
		bad += VERR(c, in, "'%%%s' is combined with both atomic_add and atomic_max; a kernel "
		    "uses one", c->n->name);
	if (s[0] > 1 || (s[0] && (s[1] || s[2])))
		bad += VERR(c, in, "'%%%s' is stored twice; a program stores its result once (or "
		    "combines it with atomics only)", c->n->name);
	return bad;
}

/* ---- one check per op ------------------------------------------------ */

static int
tv_program_id(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];

	if (in->axis >= 0 && in->axis <= 2)
		return 0;
	return VERR(c, in, "'program_id' axis %lld is not 0, 1 or 2", (long long)in->axis);
}

/* idiv and irem */
static int
tv_idiv(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];

	if (in->by > 0 && in->by <= TILE_IDX_MAX)
		return 0;
	return VERR(c, in, "'%s' needs a positive by=, found %lld", tile_op_name(in),
	    (long long)in->by);
}

/* zeros and full: a tile of the shape it is written with, which
 * check_inst has held against the block sizes; any value is allowed. */
static int
tv_full(VCtx *c, int i)
{
	(void)c;
	(void)i;
	return 0;
}

static int
tv_load(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];

	if (in->arg < 0 || in->arg >= c->f->nargs)
		return VERR(c, in, "'load' reads the kernel's result; it may only load its operands");
	return check_access(c, i);
}

/* store, atomic_add and atomic_max: they write the result, inside it
 * unless masked; atomics combine into an initialised result; a store
 * gives each program and each trip of its loops elements of their own. */
static int
tv_store(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	int bad;

	if (in->arg != TILE_RESULT)
		return VERR(c, in, "'%s' writes an operand; it may only write the kernel's result "
		    "'%%%s'", tile_op_name(in), c->n->name);
	bad = check_access(c, i);
	if (in->op != TO_STORE && !c->f->has_init)
		bad += VERR(c, in, "'%s' needs the kernel to initialise its result: write init=0.0 "
		    "(or -inf) on 'tiled'", tile_op_name(in));
	if (in->op == TO_STORE) {
		bad += store_grid(c, in);
		bad += store_loops(c, i);
	}
	return bad + count_store(c, in);
}

static int
tv_for(VCtx *c, int i)
{
	const TileFn *f = c->f;
	const TileInst *in = &f->insts[i];
	const TileVal *init = &f->vals[in->in[0]];
	int bad = 0;

	if (!for_bounds_ok(in))
		bad = VERR(c, in, "'for' bounds and step must lie within +-%lld (2^50), found %lld to "
		    "%lld step %lld", (long long)TILE_IDX_MAX, (long long)in->lo, (long long)in->hi,
		    (long long)in->step);
	else if (in->step <= 0 || in->hi < in->lo)
		bad = VERR(c, in, "'for' needs lo <= hi and a positive step, found %lld to %lld step "
		    "%lld", (long long)in->lo, (long long)in->hi, (long long)in->step);
	if (in->end <= i || in->end >= f->ninsts || f->insts[in->end].op != TO_YIELD)
		AICM_BUG("a for without its yield");
	if (in->res < 0 || !same_type(&f->vals[in->iter], init) ||
	    !same_type(&f->vals[in->res], init))
		bad += VERR(c, in, "'for' result, iter value and initial value must have one tile "
		    "type");
	return bad;
}

static int
tv_yield(VCtx *c, int i)
{
	const TileFn *f = c->f;
	const TileInst *in = &f->insts[i];
	int fo = c->parent[i];

	if (fo < 0 || f->insts[fo].end != i)
		AICM_BUG("a yield that ends no loop");
	if (same_type(&f->vals[in->in[0]], &f->vals[f->insts[fo].iter]))
		return 0;
	return VERR(c, in, "'yield' of '%%%s' does not match the type of the loop's iter value "
	    "'%%%s'", f->vals[in->in[0]].name, f->vals[f->insts[fo].iter].name);
}

/* dot(a, b, acc): [.., M, K] @ [.., K, N] + [.., M, N], leading dims 1. */
static int
tv_dot(VCtx *c, int i)
{
	const TileFn *f = c->f;
	const TileInst *in = &f->insts[i];
	const TileVal *a = &f->vals[in->in[0]], *b = &f->vals[in->in[1]],
	    *acc = &f->vals[in->in[2]];
	int ra = a->rank;
	int64_t s[IR_MAX_RANK];

	if (ra < 2 || b->rank != ra || acc->rank != ra || a->shape[ra - 1] != b->shape[ra - 2])
		return VERR(c, in, "'dot' takes [.., M, K], [.., K, N] and an accumulator [.., M, N] "
		    "of one rank");
	for (int k = 0; k < ra - 2; k++)
		if (a->shape[k] != 1 || b->shape[k] != 1 || acc->shape[k] != 1)
			return VERR(c, in, "'dot' leading tile dimensions must be 1");
	memcpy(s, acc->shape, sizeof s);
	s[ra - 2] = a->shape[ra - 2];
	s[ra - 1] = b->shape[ra - 1];
	if (memcmp(s, acc->shape, sizeof(int64_t) * (size_t)ra))
		return VERR(c, in, "'dot' accumulator does not have the shape [.., M, N] of its "
		    "operands");
	return want_shape(c, in, s, ra);
}

static int
tv_unary(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	const TileVal *a = &c->f->vals[in->in[0]];

	if (in->gop != OP_CAST && !ir_types_take(ir_ops[in->gop].types, a->dt))
		return VERR(c, in, "'%s' does not take %s tile %%%s", tile_op_name(in),
		    ir_dtype_name(a->dt), a->name);
	return want_shape(c, in, a->shape, a->rank);
}

static bool
is_fill(const TileFn *f, const TileVal *v)
{
	return v->def >= 0 && v->def < f->ninsts && (f->insts[v->def].op == TO_FULL ||
	    f->insts[v->def].op == TO_ZEROS);
}

static int
tv_binary(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	const TileVal *a = &c->f->vals[in->in[0]], *b = &c->f->vals[in->in[1]];
	int64_t s[IR_MAX_RANK];
	int rk = broadcast(a, b, s);

	if (rk < 0)
		return VERR(c, in, "'%s' cannot broadcast its tiles", tile_op_name(in));
	/* a fill (zeros, full: mean's count) has the kernel's type, and
	 * stands for a number of any type */
	if (a->dt != b->dt && !is_fill(c->f, a) && !is_fill(c->f, b))
		return VERR(c, in, "'%s' operands %%%s and %%%s have different element types, "
		    "%s and %s", tile_op_name(in), a->name, b->name, ir_dtype_name(a->dt),
		    ir_dtype_name(b->dt));
	if (!ir_types_take(ir_ops[in->gop].types, is_fill(c->f, a) ? b->dt : a->dt))
		return VERR(c, in, "'%s' does not take %s tiles", tile_op_name(in),
		    ir_dtype_name(is_fill(c->f, a) ? b->dt : a->dt));
	return want_shape(c, in, s, rk);
}

/* where(cond, a, b): the three tiles broadcast; cond is bool, a and b of
 * one element type (the graph's rule, kept in the body). */
static int
tv_where(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	const TileVal *cv = &c->f->vals[in->in[0]], *a = &c->f->vals[in->in[1]],
	    *b = &c->f->vals[in->in[2]];
	TileVal ab = *a;
	int64_t s[IR_MAX_RANK];
	int rk = broadcast(a, b, ab.shape);

	if (rk >= 0) {
		ab.rank = rk;
		rk = broadcast(cv, &ab, s);
	}
	if (rk < 0)
		return VERR(c, in, "'where' cannot broadcast its tiles");
	if (cv->dt != DT_BOOL)
		return VERR(c, in, "'where' condition %%%s is %s; it must be bool", cv->name,
		    ir_dtype_name(cv->dt));
	if (a->dt != b->dt)
		return VERR(c, in, "'where' operands %%%s and %%%s have different element types, "
		    "%s and %s", a->name, b->name, ir_dtype_name(a->dt), ir_dtype_name(b->dt));
	return want_shape(c, in, s, rk);
}

/* sum or max of in[0] along axis (-1: all), into accumulator in[1] if
 * given, which has the reduced shape. */
static int
tv_reduce(VCtx *c, int i)
{
	const TileFn *f = c->f;
	const TileInst *in = &f->insts[i];
	const TileVal *a = &f->vals[in->in[0]];
	int64_t s[IR_MAX_RANK];
	int rk = 0, bad;

	if (in->axis >= a->rank)
		return VERR(c, in, "'%s' axis %lld is out of range for a tile of rank %d",
		    tile_op_name(in), (long long)in->axis, a->rank);
	for (int k = 0; k < a->rank; k++)
		if (in->axis >= 0 && in->axis != k)
			s[rk++] = a->shape[k];
		else if (in->keepdims)
			s[rk++] = 1;
	bad = want_shape(c, in, s, rk);
	if (in->nin == 2 && (f->vals[in->in[1]].rank != rk ||
	    memcmp(f->vals[in->in[1]].shape, s, sizeof(int64_t) * (size_t)rk)))
		bad += VERR(c, in, "'%s' accumulator '%%%s' does not have the reduced shape",
		    tile_op_name(in), f->vals[in->in[1]].name);
	return bad;
}

static int
tv_transpose(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	const TileVal *a = &c->f->vals[in->in[0]];
	int64_t s[IR_MAX_RANK];
	unsigned seen = 0;

	if (in->nperm != a->rank)
		return VERR(c, in, "'transpose' perm has %d entries for a tile of rank %d", in->nperm,
		    a->rank);
	for (int k = 0; k < a->rank; k++) {
		if (in->perm[k] < 0 || in->perm[k] >= a->rank || (seen & (1u << in->perm[k])))
			return VERR(c, in, "'transpose' perm is not a permutation");
		seen |= 1u << in->perm[k];
		s[k] = a->shape[in->perm[k]];
	}
	return want_shape(c, in, s, a->rank);
}

/* extract(t) at=a: [.., n] of t [.., m] from column a on, a + n <= m, the
 * leading dims t's. */
static int
tv_extract(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	const TileVal *a = &c->f->vals[in->in[0]], *r = &c->f->vals[in->res];
	int64_t s[IR_MAX_RANK];

	if (a->rank < 1 || r->rank != a->rank)
		return VERR(c, in, "'extract' takes a tile of rank 1 or more and makes one of the "
		    "same rank, found ranks %d and %d", a->rank, r->rank);
	if (in->start < 0 || in->start > a->shape[a->rank - 1] - r->shape[r->rank - 1])
		return VERR(c, in, "'extract' at=%lld takes %lld columns of '%%%s', which has %lld",
		    (long long)in->start, (long long)r->shape[r->rank - 1], a->name,
		    (long long)a->shape[a->rank - 1]);
	memcpy(s, a->shape, sizeof s);
	s[a->rank - 1] = r->shape[r->rank - 1];
	return want_shape(c, in, s, a->rank);
}

/* join(a, b[, c]): side by side along the last dim; the other dims and
 * the element types equal. */
static int
tv_join(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	const TileVal *a = &c->f->vals[in->in[0]];
	int64_t s[IR_MAX_RANK];

	if (a->rank < 1)
		return VERR(c, in, "'join' takes tiles of rank 1 or more");
	memcpy(s, a->shape, sizeof s);
	for (int j = 1; j < in->nin; j++) {
		const TileVal *b = &c->f->vals[in->in[j]];

		if (b->rank != a->rank || memcmp(b->shape, a->shape,
		    sizeof(int64_t) * (size_t)(a->rank - 1)) || b->dt != a->dt)
			return VERR(c, in, "'join' operand '%%%s' differs from '%%%s' in rank, element "
			    "type or a dimension before the last", b->name, a->name);
		s[a->rank - 1] += b->shape[a->rank - 1];
	}
	return want_shape(c, in, s, a->rank);
}

/* The check every copy load (load_pad, load_step, load_gather) starts
 * with: an operand, never the kernel's result, to read.  A tile of any
 * rank passes, as every load's does: the executor holds a tile's last
 * four dims and refuses one longer than 1 before them (tile_plan.c). */
static int
copy_load_ok(VCtx *c, const TileInst *in)
{
	if (tile_ops[in->op].form == TF_LOAD && (in->arg < 0 || in->arg >= c->f->nargs))
		return VERR(c, in, "'%s' reads the kernel's result; it may only load its operands",
		    tile_ops[in->op].name);
	return 0;
}

/* load_pad: any offset within +-2^50 (lanes outside the tensor read the
 * fill), one index per tensor dimension, a tile of the tensor's rank, and
 * a fill: other= or an operand tile of the result's shape. */
static int
tv_load_pad(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	const TileVal *tile = &c->f->vals[in->res];
	Type buf;
	const Type *t;

	if (copy_load_ok(c, in))
		return 1;
	t = tile_target_type(c->g, c->n, in, &buf);
	if (in->nidx != t->rank || tile->rank != t->rank)
		return VERR(c, in, "'load_pad' of '%%%s' (rank %d) has %d indices and a tile of rank "
		    "%d; all three must agree", target_name(c->g, c->n, in), t->rank, in->nidx,
		    tile->rank);
	for (int k = 0; k < in->nidx; k++)
		if (idx_range(c, &in->idx[k]).ovf)
			return VERR(c, in, "'load_pad' of '%%%s' index %d can exceed %lld in magnitude",
			    target_name(c->g, c->n, in), k, (long long)TILE_IDX_MAX);
	if (in->nin == 1)
		return same_type(&c->f->vals[in->in[0]], tile) ? 0 : VERR(c, in, "'load_pad' fill "
		    "'%%%s' does not have the shape of its result", c->f->vals[in->in[0]].name);
	if (!in->masked)
		return VERR(c, in, "'load_pad' needs a fill: other=V or an operand tile");
	return 0;
}

/* load_step: steps= has one nonzero step per dimension within +-2^30, the
 * first lane inside the tensor, and the last too unless masked (the valid
 * lanes then lead the tile, as a plain load's do). */
static int
tv_load_step(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	const TileVal *tile = &c->f->vals[in->res];
	const char *name = target_name(c->g, c->n, in);
	Type buf;
	const Type *t;

	if (copy_load_ok(c, in))
		return 1;
	t = tile_target_type(c->g, c->n, in, &buf);
	if (in->nidx != t->rank || tile->rank != t->rank || in->nperm != t->rank)
		return VERR(c, in, "'load_step' of '%%%s' (rank %d) has %d indices, %d steps and a "
		    "tile of rank %d; all four must agree", name, t->rank, in->nidx, in->nperm,
		    tile->rank);
	for (int k = 0; k < in->nidx; k++) {
		Range r = idx_range(c, &in->idx[k]);
		int64_t st = in->steps[k], last = st * (tile->shape[k] - 1);

		if (st == 0 || st > IR_MAX_DIM || st < -IR_MAX_DIM)
			return VERR(c, in, "'load_step' step %d is %lld; a step is nonzero and within "
			    "+-2^30", k, (long long)st);
		if (r.ovf || r.lo < 0 || r.hi >= t->dim[k])
			return VERR(c, in, "'load_step' of '%%%s' index %d can leave dimension %d (size "
			    "%lld); its first lane must be inside", name, k, k, (long long)t->dim[k]);
		if (!in->masked && (r.hi + last >= t->dim[k] || r.lo + last < 0))
			return VERR(c, in, "'load_step' of '%%%s' can step out of dimension %d (size "
			    "%lld) without a mask; write other=...", name, k, (long long)t->dim[k]);
	}
	return 0;
}

/* load_gather: the tensor's indices with axis's ignored, an index tile of
 * rank q, and a result of rank r - 1 + q: the tile's dims before axis, the
 * index tile's, the tile's after. */
static int
tv_load_gather(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	const TileVal *tile = &c->f->vals[in->res], *ix = &c->f->vals[in->in[0]];
	const char *name = target_name(c->g, c->n, in);
	Type buf;
	const Type *t;

	if (copy_load_ok(c, in))
		return 1;
	t = tile_target_type(c->g, c->n, in, &buf);
	if (in->axis < 0 || in->axis >= t->rank || in->nidx != t->rank ||
	    tile->rank != t->rank - 1 + ix->rank)
		return VERR(c, in, "'load_gather' of '%%%s' (rank %d) needs axis= below its rank, "
		    "%d indices, and a tile of rank %d - 1 + the index tile's %d", name, t->rank,
		    t->rank, t->rank, ix->rank);
	for (int k = 0; k < in->nidx; k++) {
		int d = k < in->axis ? k : k > in->axis ? k - 1 + ix->rank : -1;

		if (d < 0)
			continue;
		if (check_index(c, in, t, k, tile->shape[d]))
			return 1;
	}
	for (int k = 0; k < ix->rank; k++)
		if (ix->shape[k] != tile->shape[in->axis + k])
			return VERR(c, in, "'load_gather' index tile '%%%s' does not match its result's "
			    "dimensions from axis %lld", ix->name, (long long)in->axis);
	return 0;
}

/* broadcast: numpy's broadcasting of in[0] to the written shape. */
static int
tv_broadcast(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	int64_t s[IR_MAX_RANK];
	int rk = broadcast(&c->f->vals[in->in[0]], &c->f->vals[in->res], s);

	if (copy_load_ok(c, in))
		return 1;
	if (rk < 0 || c->f->vals[in->in[0]].rank > c->f->vals[in->res].rank)
		return VERR(c, in, "'broadcast' cannot broadcast '%%%s' to its result",
		    c->f->vals[in->in[0]].name);
	return want_shape(c, in, s, rk);
}

/* Each op's own check (tile_ops.def's verify column), run after
 * check_inst's common ones. */
/* im2col: the implicit im2col matrix of a conv2d (or a pool's tap) over
 * operand arg, x (N, C, H, W): window=(Cg, KH, KW, OH, OW, sh, sw, pt, pl,
 * dh, dw), indices [plane, k, p], a tile [rows, columns] read with other=
 * where the window leaves the input.  Row k of the tile is channel
 * k / (KH*KW) of the Cg planes from plane on, at tap (ky, kx); rows from
 * Cg*KH*KW on and columns from OH*OW on lie outside (masked).  The planes
 * read must lie inside x's N*C; the pads may be negative (a pool's tap
 * shifts them) but stay within +-2^50. */
static int
tv_im2col(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	const TileVal *r = &c->f->vals[in->res];
	const Type *x;
	const int64_t *w = in->win;
	Range pl;
	int64_t planes;

	if (in->arg < 0 || in->arg >= c->f->nargs)
		return VERR(c, in, "'im2col' reads the kernel's result; it may only read its operands");
	x = &c->g->nodes[c->f->args[in->arg]].type;
	if (x->rank != 4)
		return VERR(c, in, "'im2col' of '%%%s' needs a tensor (N, C, H, W); it has rank %d",
		    target_name(c->g, c->n, in), x->rank);
	if (in->nidx != 3 || r->rank != 2)
		return VERR(c, in, "'im2col' takes 3 indices [plane, k, p] and a tile of rank 2; "
		    "found %d and rank %d", in->nidx, r->rank);
	if (!in->masked)
		return VERR(c, in, "'im2col' needs other=, the value of positions outside the input");
	if (in->nwin != 11)
		return VERR(c, in, "'im2col' needs window=(Cg, KH, KW, OH, OW, sh, sw, pt, pl, dh, "
		    "dw), 11 numbers; found %d", in->nwin);
	/* bounds that keep oy*sh + ky*dh - pt (and the like) within 2^52 */
	for (int k = 0; k < 11; k++)
		if (k == 7 || k == 8 ? w[k] < -TILE_IDX_MAX || w[k] > TILE_IDX_MAX :
		    w[k] < 1 || w[k] > (k == 0 || k == 3 || k == 4 ? IR_MAX_DIM : TILE_WIN_MAX))
			return VERR(c, in, "'im2col' window entry %d is %lld; Cg, OH, OW are positive "
			    "up to 2^30, KH, KW, the strides and dilations up to 2^20, the pads within "
			    "2^50", k, (long long)w[k]);
	for (int k = 0; k < 3; k++) {
		Range q = idx_range(c, &in->idx[k]);

		if (q.ovf || q.lo < 0)
			return VERR(c, in, "'im2col' index %d can be %lld, below 0 (or beyond 2^50)", k,
			    (long long)q.lo);
	}
	pl = idx_range(c, &in->idx[0]);
	planes = x->dim[0] * x->dim[1];
	if (pl.hi + w[0] > planes)
		return VERR(c, in, "'im2col' of '%%%s' reads planes up to %lld + %lld but it has "
		    "%lld (N*C)", target_name(c->g, c->n, in), (long long)pl.hi, (long long)w[0],
		    (long long)planes);
	return 0;
}

/* window_count: per output pixel from index [p] on, the window positions
 * whose coordinates in the padded input (oy*sh + ky*dh, ox*sw + kx*dw) lie
 * in [ylo, yhi) x [xlo, xhi): window=(OH, OW, sh, sw, KH, KW, dh, dw, ylo,
 * yhi, xlo, xhi); a tile [1, columns]; it reads no tensor (arg names the
 * pool's input for the reader's sake). */
static int
tv_window_count(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	const TileVal *r = &c->f->vals[in->res];
	const int64_t *w = in->win;
	Range q;

	if (in->arg < 0 || in->arg >= c->f->nargs)
		return VERR(c, in, "'window_count' names the kernel's result; it names an operand");
	if (in->nidx != 1 || r->rank != 2 || r->shape[0] != 1)
		return VERR(c, in, "'window_count' takes 1 index [p] and a tile [1, n]");
	if (in->nwin != 12)
		return VERR(c, in, "'window_count' needs window=(OH, OW, sh, sw, KH, KW, dh, dw, ylo, "
		    "yhi, xlo, xhi), 12 numbers; found %d", in->nwin);
	for (int k = 0; k < 12; k++)
		if (k < 8 ? w[k] < 1 || w[k] > (k < 2 ? IR_MAX_DIM : TILE_WIN_MAX) :
		    w[k] < -TILE_IDX_MAX || w[k] > TILE_IDX_MAX)
			return VERR(c, in, "'window_count' window entry %d is %lld; OH, OW are positive "
			    "up to 2^30, the next 6 up to 2^20, the bounds within 2^50", k,
			    (long long)w[k]);
	q = idx_range(c, &in->idx[0]);
	if (q.ovf || q.lo < 0)
		return VERR(c, in, "'window_count' index can be %lld, below 0 (or beyond 2^50)",
		    (long long)q.lo);
	return 0;
}

/* window_max, window_sum: a pool's result over operand arg, x (N, C, H,
 * W), from indices [plane, p]: window= as im2col's, (Cg, KH, KW, OH, OW,
 * sh, sw, pt, pl, dh, dw), where Cg counts the planes (N*C) the rows walk;
 * a tile [rows, columns], rows from Cg on and columns from OH*OW on
 * outside (masked).  The same bounds as im2col's. */
static int
tv_window_reduce(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	const TileVal *r = &c->f->vals[in->res];
	const char *op = tile_op_name(in);
	const Type *x;
	const int64_t *w = in->win;

	if (in->arg < 0 || in->arg >= c->f->nargs)
		return VERR(c, in, "'%s' reads the kernel's result; it may only read its operands", op);
	x = &c->g->nodes[c->f->args[in->arg]].type;
	if (x->rank != 4)
		return VERR(c, in, "'%s' of '%%%s' needs a tensor (N, C, H, W); it has rank %d", op,
		    target_name(c->g, c->n, in), x->rank);
	if (in->nidx != 2 || r->rank != 2)
		return VERR(c, in, "'%s' takes 2 indices [plane, p] and a tile of rank 2; found %d "
		    "and rank %d", op, in->nidx, r->rank);
	if (in->nwin != 11)
		return VERR(c, in, "'%s' needs window=(Cg, KH, KW, OH, OW, sh, sw, pt, pl, dh, dw), "
		    "11 numbers; found %d", op, in->nwin);
	for (int k = 0; k < 11; k++)
		if (k == 7 || k == 8 ? w[k] < -TILE_IDX_MAX || w[k] > TILE_IDX_MAX :
		    w[k] < 1 || w[k] > (k == 0 || k == 3 || k == 4 ? IR_MAX_DIM : TILE_WIN_MAX))
			return VERR(c, in, "'%s' window entry %d is %lld; Cg, OH, OW are positive up "
			    "to 2^30, KH, KW, the strides and dilations up to 2^20, the pads within "
			    "2^50", op, k, (long long)w[k]);
	for (int k = 0; k < 2; k++) {
		Range q = idx_range(c, &in->idx[k]);

		if (q.ovf || q.lo < 0)
			return VERR(c, in, "'%s' index %d can be %lld, below 0 (or beyond 2^50)", op, k,
			    (long long)q.lo);
	}
	if (w[0] > x->dim[0] * x->dim[1])
		return VERR(c, in, "'%s' of '%%%s' reads %lld planes but it has %lld (N*C)", op,
		    target_name(c->g, c->n, in), (long long)w[0],
		    (long long)(x->dim[0] * x->dim[1]));
	return 0;
}

/* argmax, argmin: a tile over operand arg (x) of x's rank, 1 along axis,
 * whose lanes each scan their whole line of x along axis: idx[axis] is 0
 * and the other indices stay inside x unless 'masked' (the lanes off x are
 * outside the valid box).  The tile is i64 (tile_build.c), whatever x is. */
static int
tv_argreduce(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	const TileVal *r = &c->f->vals[in->res];
	const char *op = tile_op_name(in);
	const Type *x;
	const TileIdx *a;
	int bad = 0;

	if (in->arg < 0 || in->arg >= c->f->nargs)
		return VERR(c, in, "'%s' reads the kernel's result; it may only read its operands", op);
	x = &c->g->nodes[c->f->args[in->arg]].type;
	if (in->nidx != x->rank || r->rank != x->rank)
		return VERR(c, in, "'%s' of '%%%s' (rank %d) has %d indices and a tile of rank %d; "
		    "all three must agree", op, target_name(c->g, c->n, in), x->rank, in->nidx,
		    r->rank);
	if (in->axis < 0 || in->axis >= x->rank)
		return VERR(c, in, "'%s' needs axis= from 0 to %d (the rank of '%%%s' less 1), found "
		    "%lld", op, x->rank - 1, target_name(c->g, c->n, in), (long long)in->axis);
	a = &in->idx[in->axis];
	if (a->nterm || a->k || r->shape[in->axis] != 1)
		return VERR(c, in, "'%s' scans all of axis %lld: its index there must be 0 and its "
		    "tile 1 along it", op, (long long)in->axis);
	for (int k = 0; k < in->nidx; k++)
		if (k != in->axis)
			bad += check_index(c, in, x, k, r->shape[k]);
	return bad;
}

static int (*const tile_check[TO_COUNT])(VCtx *c, int i) = {
#define TOP(id, name, form, graph, nin, nmax, attrs, result, verify) [TO_##id] = verify,
#include "tile_ops.def"
#undef TOP
};

/* ---- the checks common to all ops ------------------------------------ */

/* Inst i's operands and index terms: defined before it, in scope, scalars
 * or tiles as the op takes them.  Reports the first that is not. */
static int
check_uses(VCtx *c, int i)
{
	const TileFn *f = c->f;
	const TileInst *in = &f->insts[i];
	bool scalar_in = in->op == TO_IDIV || in->op == TO_IREM;

	for (int j = 0; j < in->nin; j++) {
		int v = in->in[j];

		if (v < 0 || v >= f->nvals || !visible(c, v, i))
			return VERR(c, in, "operand %d of '%s' is not defined before it in its scope", j,
			    tile_op_name(in));
		if (is_tile(c, v) == scalar_in)
			return VERR(c, in, "'%s' takes %s, but '%%%s' is %s", tile_op_name(in),
			    scalar_in ? "a scalar" : "tiles", f->vals[v].name,
			    scalar_in ? "a tile" : "a scalar");
	}
	for (int k = 0; k < in->nidx; k++)
		for (int t = 0; t < in->idx[k].nterm; t++) {
			int v = in->idx[k].val[t];

			if (v < 0 || v >= f->nvals || !visible(c, v, i) || is_tile(c, v))
				return VERR(c, in, "index %d of '%s' uses '%%%s', which is not a scalar "
				    "defined before it", k, tile_op_name(in),
				    v >= 0 && v < f->nvals ? f->vals[v].name : "?");
		}
	return 0;
}

/* An attention program (passes/lower_attention.c) holds its head widths
 * whole: a tile dimension may also be the last dimension of one of its
 * operands (d of Q and K, dv of V; of the view an operand is read through,
 * view=, when it is one), or that plus 2 (its loop carries the
 * accumulator [BM, dv] joined with the running max and sum). */
static bool
is_head_width(const VCtx *c, int64_t d)
{
	if (c->f->kind != KK_ATTENTION)
		return false;
	for (int j = 0; j < c->f->nargs; j++) {
		const Type *t = c->f->args[j] >= 0 && c->f->args[j] < c->g->nnodes ?
		    &c->g->nodes[c->f->args[j]].type : NULL;

		if (t && t->rank >= 1 && (t->dim[t->rank - 1] == d || t->dim[t->rank - 1] + 2 == d))
			return true;
	}
	/* an operand read through a view (view=): the view's last dim */
	for (int i = 0; i < c->f->ninsts; i++) {
		const TileInst *in = &c->f->insts[i];

		if (in->op == TO_LOAD && in->has_view && in->nview >= 1 &&
		    (in->view[in->nview - 1] == d || in->view[in->nview - 1] + 2 == d))
			return true;
	}
	return false;
}

/* Every dimension of in's result tile is 1 or a block size (or an
 * attention program's head width).  Reports the first that is not, at the
 * value's own place if it has one. */
static int
check_blocks(VCtx *c, const TileInst *in)
{
	const TileVal *r = &c->f->vals[in->res];
	char a[96];

	for (int k = 0; k < r->rank; k++)
		if (!is_block(c->f, r->shape[k]) && !is_head_width(c, r->shape[k])) {
			shape_str(r->shape, r->rank, a, sizeof a);
			diag_error(c->d, r->loc.line ? r->loc : iloc(c, in), "tile '%%%s' %s has "
			    "dimension %lld, which is neither 1 nor a block size (BM, BN, BK)",
			    r->name, a, (long long)r->shape[k]);
			return 1;
		}
	return 0;
}

static void
check_inst(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	int bad = check_uses(c, i);

	if (!bad) {
		if (in->res >= 0)
			bad = check_blocks(c, in);
		if ((unsigned)in->op >= TO_COUNT || !tile_check[in->op])
			AICM_BUG("bad tile op");
		bad += tile_check[in->op](c, i);
	}
	c->bad += bad;
}

/* ---- the kernel ------------------------------------------------------ */

/* The scalar range of inst i's result, for the bounds proofs. */
static void
scalar_range(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	Range a;

	/* Bad operands were reported by check_inst; give them a harmless range
	 * so that no division by zero or stray read follows. */
	switch (in->op) {
	case TO_PROGRAM_ID:
		c->range[in->res] = (Range){0, in->axis >= 0 && in->axis <= 2 ?
		    c->f->grid[in->axis] - 1 : 0, false};
		c->dep[in->res] = in->axis >= 0 && in->axis <= 2 ? 1u << in->axis : 0;
		break;
	case TO_IDIV:
		c->dep[in->res] = c->dep[in->in[0]];
		a = c->range[in->in[0]];
		c->range[in->res] = in->by > 0 ? (Range){a.lo / in->by, a.hi / in->by, a.ovf} : a;
		break;
	case TO_IREM:
		c->dep[in->res] = c->dep[in->in[0]];
		a = c->range[in->in[0]];
		if (in->by <= 0)
			c->range[in->res] = a;
		else if (a.lo >= 0 && a.hi < in->by)
			c->range[in->res] = a;
		else
			c->range[in->res] = (Range){a.lo < 0 ? -(in->by - 1) : 0, in->by - 1, a.ovf};
		break;
	case TO_FOR:
		/* Bounds beyond +-TILE_IDX_MAX were reported, and hi - lo could
		 * overflow on them: such a counter is taken as 0, which makes no
		 * error of its own downstream. */
		if (!for_bounds_ok(in))
			c->range[in->var] = (Range){0, 0, false};
		else
			c->range[in->var] = (Range){in->lo, in->hi > in->lo && in->step > 0 ?
			    in->lo + (in->hi - in->lo - 1) / in->step * in->step : in->lo, false};
		break;
	default:
		break;
	}
}

/* Whether f's body changes element types (a compare, isnan, not, cast or
 * where): then its operands may be of any types, each op checking its
 * own (tv_unary, tv_binary, tv_where, tv_store); otherwise the body
 * computes in one type, the kernel's, and so must every operand be. */
static bool
mixes_types(const TileFn *f)
{
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];

		if (in->op == TO_WHERE || ((in->op == TO_UNARY || in->op == TO_BINARY) &&
		    ir_ops[in->gop].result != RT_SAME))
			return true;
	}
	return false;
}

/* Whether operand j of f is a gather's indices: an i32 or i64 tensor that
 * is only loaded whole-tile into load_gather's index tiles (the executor
 * reads the index itself exactly from the tensor). */
static bool
gather_indices(const Graph *g, const TileFn *f, int j)
{
	bool used = false;

	if (!ir_dtype_is_int(g->nodes[f->args[j]].type.dt))
		return false;
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		bool feeds = false;

		if (tile_ops[in->op].form != TF_LOAD || in->arg != j)
			continue;
		if (in->op != TO_LOAD || in->has_view)
			return false;
		for (int u = i + 1; u < f->ninsts; u++)
			if (f->insts[u].op == TO_LOAD_GATHER && f->insts[u].in[0] == in->res)
				feeds = true;
			else
				for (int q = 0; q < f->insts[u].nin; q++)
					if (f->insts[u].in[q] == in->res)
						return false;
		if (!feeds)
			return false;
		used = true;
	}
	return used;
}

/* Whether operand j of f is read only by argmax and argmin, which compare
 * its elements in its own type and make i64 indices (tv_argreduce). */
static bool
arg_scanned(const TileFn *f, int j)
{
	bool used = false;

	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];

		if ((tile_ops[in->op].form != TF_LOAD && tile_ops[in->op].form != TF_STORE) ||
		    in->arg != j)
			continue;
		if (in->op != TO_ARGMAX && in->op != TO_ARGMIN)
			return false;
		used = true;
	}
	return used;
}

/* The tiled node around the body: operands defined before it, typed, of
 * its element type unless the body changes types (mixes_types; a gather's
 * indices are integers; argmax's and argmin's tensor any type); a result
 * type; a grid of at most 2^40 programs. */
static int
check_kernel(const Graph *g, int node, Diag *d)
{
	const Node *n = &g->nodes[node];
	const TileFn *f = n->tile;
	bool mixed = mixes_types(f);

	for (int j = 0; j < f->nargs; j++)
		if (f->args[j] < 0 || f->args[j] >= node) {
			diag_error(d, n->loc, "operand %d of tiled '%%%s' is not defined before it", j,
			    n->name);
			return 1;
		} else if (g->nodes[f->args[j]].type.rank < 0) {
			diag_error(d, n->loc, "operand '%%%s' of tiled '%%%s' has no type",
			    g->nodes[f->args[j]].name, n->name);
			return 1;
		} else if (!mixed && g->nodes[f->args[j]].type.dt != n->type.dt &&
		    !gather_indices(g, f, j) && !arg_scanned(f, j)) {
			diag_error(d, n->loc, "operand '%%%s' of tiled '%%%s' is %s but the kernel "
			    "is %s", g->nodes[f->args[j]].name, n->name,
			    ir_dtype_name(g->nodes[f->args[j]].type.dt), ir_dtype_name(n->type.dt));
			return 1;
		}
	if (n->type.rank < 0) {
		diag_error(d, n->loc, "tiled '%%%s' needs a result type", n->name);
		return 1;
	}
	for (int a = 0; a < 3; a++)
		if (f->grid[a] < 1 || f->grid[a] > IR_MAX_DIM) {
			diag_error(d, n->loc, "tiled '%%%s' grid axis %d is %lld; expected 1..%d",
			    n->name, a, (long long)f->grid[a], IR_MAX_DIM);
			return 1;
		}
	if (f->grid[0] * f->grid[1] > ((int64_t)1 << 40) / f->grid[2]) {
		diag_error(d, n->loc, "tiled '%%%s' grid has more than 2^40 programs", n->name);
		return 1;
	}
	return 0;
}

/* Fills c->parent: the innermost for around each instruction, or -1. */
static void
find_parents(VCtx *c)
{
	const TileFn *f = c->f;
	int *stack = xmalloc(sizeof(int) * (size_t)(f->ninsts + 1)), sp = 0;

	for (int i = 0; i < f->ninsts; i++) {
		c->parent[i] = sp ? stack[sp - 1] : -1;
		if (f->insts[i].op == TO_FOR)
			stack[sp++] = i;
		else if (f->insts[i].op == TO_YIELD && sp)
			sp--;
	}
	free(stack);
}

int
tile_verify(const Graph *g, int node, Diag *d)
{
	const Node *n = &g->nodes[node];
	const TileFn *f = n->tile;
	VCtx c = {g, n, f, d, NULL, NULL, NULL, {0, 0, 0}, 0};

	if (check_kernel(g, node, d))
		return 1;
	c.parent = xmalloc(sizeof(int) * (size_t)(f->ninsts + 1));
	c.range = xcalloc((size_t)f->nvals + 1, sizeof *c.range);
	c.dep = xcalloc((size_t)f->nvals + 1, sizeof *c.dep);
	find_parents(&c);
	for (int i = 0; i < f->ninsts; i++) {
		check_inst(&c, i);
		scalar_range(&c, i);
	}
	if (!c.stores[0] && !c.stores[1] && !c.stores[2]) {
		diag_error(d, n->loc, "tiled '%%%s' never stores its result", n->name);
		c.bad++;
	}
	free(c.parent);
	free(c.range);
	free(c.dep);
	return c.bad;
}
