/*
 * tile.c: the tile-op table (tile_ops.def) and verifying tiled kernels
 * (tile.h); tile_build.c builds them, print.c prints them, in the form the
 * parser reads (docs/tiled.md).
 *
 * The verifier is what makes a hand-written or lowered body safe to run:
 * the executor trusts it for SSA, scoping, shapes and bounds, so that the
 * plan can be built without checks of its own beyond AICM_BUG nets.  Bounds
 * are proved with interval arithmetic over the index expressions: a program
 * id ranges over its grid axis, a loop counter over its iterations; loop
 * bounds and indices stay within +-2^50, so that neither this arithmetic
 * nor the executor's can overflow.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tile.h"

/* ---- the tile-op table (tile_ops.def) --------------------------------- */

/* The verify column names each op's check (the verifier's own table). */
const TileOpInfo tile_ops[TO_COUNT] = {
#define TOP(id, name, form, graph, nin, nmax, attrs, result, verify) \
	{name, form, graph, nin, nmax, attrs, result},
#include "tile_ops.def"
#undef TOP
};

const char *const tile_attr_names[TA_COUNT] = {
#define X(id, name) name,
	TILE_ATTRS(X)
#undef X
};

/* The named rows by name (an op + 1 a slot, built once): the parser looks
 * up the op of every statement of a body. */
enum { TOPIDX = 64 };
static HashSlot top_index[TOPIDX];
static pthread_once_t top_index_once = PTHREAD_ONCE_INIT;

static bool
top_eq(const void *ctx, uint32_t item, const void *key)
{
	(void)ctx;
	return !strcmp(tile_ops[item].name, key);
}

static void
top_index_build(void)
{
	for (int i = 0; i < TO_COUNT; i++)
		if (tile_ops[i].name) {
			uint32_t h = (uint32_t)ir_hash_str(tile_ops[i].name);

			top_index[hash_find(top_index, TOPIDX, h, top_eq, NULL, tile_ops[i].name)] =
			    (HashSlot){(uint32_t)i + 1, h};
		}
}

int
tile_op_lookup(const char *name)
{
	pthread_once(&top_index_once, top_index_build);
	return (int)top_index[hash_find(top_index, TOPIDX, (uint32_t)ir_hash_str(name), top_eq,
	    NULL, name)].item - 1;
}

/* The row of each graph op class (TO_COUNT: none), built once: the parser
 * and the lowering ask for every elementwise op. */
static unsigned char top_of_class[OC_TILED + 1];
static pthread_once_t top_of_class_once = PTHREAD_ONCE_INIT;

static void
top_of_class_build(void)
{
	for (int c = 0; c <= OC_TILED; c++)
		top_of_class[c] = TO_COUNT;
	for (int i = TO_COUNT - 1; i >= 0; i--)
		if (tile_ops[i].graph >= 0)
			top_of_class[tile_ops[i].graph] = (unsigned char)i;
}

TileOpKind
tile_op_of_gop(OpId gop)
{
	pthread_once(&top_of_class_once, top_of_class_build);
	/* Of the reductions, those that an accumulator can carry: mean is
	 * lowered as a sum and a division. */
	if (ir_ops[gop].cls == OC_REDUCTION && gop != OP_SUM && gop != OP_MAX)
		return TO_COUNT;
	return (TileOpKind)top_of_class[ir_ops[gop].cls];
}

const char *
tile_op_name(const TileInst *in)
{
	if ((unsigned)in->op >= TO_COUNT)
		return "?";
	return tile_ops[in->op].name ? tile_ops[in->op].name : ir_ops[in->gop].name;
}

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

/* ---- verifying ------------------------------------------------------- */

typedef struct Range {
	int64_t lo, hi;
	bool ovf;                    /* the expression can overflow int64 */
} Range;

/* Indices, loop bounds and grids stay far from int64's edges, so that the
 * executor's index arithmetic cannot overflow. */
#define TILE_IDX_MAX ((int64_t)1 << 50)

typedef struct VCtx {
	const Graph *g;
	const Node *n;
	const TileFn *f;
	Diag *d;
	int *parent;                 /* innermost enclosing for of each inst, or -1 */
	Range *range;                /* of scalar values */
	unsigned *dep;               /* of scalar values: the grid axes they vary with */
	int bad;
} VCtx;

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

static void
want_shape(VCtx *c, const TileInst *in, const int64_t *s, int r)
{
	const TileVal *v = &c->f->vals[in->res];
	char a[96], b[96];

	if (v->rank == r && !memcmp(v->shape, s, sizeof(int64_t) * (size_t)r))
		return;
	shape_str(v->shape, v->rank, a, sizeof a);
	shape_str(s, r, b, sizeof b);
	diag_error(c->d, iloc(c, in), "'%s' result '%%%s' is written %s but its operands make %s",
	    tile_op_name(in), v->name, a, b);
	c->bad++;
}

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

static void
check_access(VCtx *c, int i)
{
	const TileInst *in = &c->f->insts[i];
	Type buf;
	const Type *t = tile_target_type(c->g, c->n, in, &buf);
	int rank = in->op == TO_LOAD ? c->f->vals[in->res].rank : c->f->vals[in->in[0]].rank;
	const int64_t *shape = in->op == TO_LOAD ? c->f->vals[in->res].shape :
	    c->f->vals[in->in[0]].shape;

	if (in->has_view) {
		Type base = in->arg == TILE_RESULT ? c->n->type :
		    c->g->nodes[c->f->args[in->arg]].type;

		/* Two negative dimensions would make a positive count, and the
		 * bounds below would then prove nothing. */
		for (int k = 0; k < t->rank; k++)
			if (t->dim[k] < 1) {
				diag_error(c->d, iloc(c, in), "'%s' view dimension %d is %lld; expected "
				    "1 or more", tile_op_name(in), k, (long long)t->dim[k]);
				c->bad++;
				return;
			}
		if (ir_type_numel(&base) != ir_type_numel(t)) {
			char n[32];

			if (ir_type_numel(t) < 0)
				snprintf(n, sizeof n, "more than 2^63");
			else
				snprintf(n, sizeof n, "%lld", (long long)ir_type_numel(t));
			diag_error(c->d, iloc(c, in), "'%s' view has %s elements but '%%%s' has %lld",
			    tile_op_name(in), n, target_name(c->g, c->n, in),
			    (long long)ir_type_numel(&base));
			c->bad++;
			return;
		}
	}
	if (in->nidx != t->rank || rank != t->rank) {
		diag_error(c->d, iloc(c, in), "'%s' of '%%%s' (rank %d) has %d indices and a tile "
		    "of rank %d; all three must agree", tile_op_name(in),
		    target_name(c->g, c->n, in), t->rank, in->nidx, rank);
		c->bad++;
		return;
	}
	for (int k = 0; k < in->nidx; k++) {
		Range r = idx_range(c, &in->idx[k]);

		if (r.ovf) {
			diag_error(c->d, iloc(c, in), "'%s' of '%%%s' index %d can exceed %lld in "
			    "magnitude", tile_op_name(in), target_name(c->g, c->n, in), k,
			    (long long)TILE_IDX_MAX);
			c->bad++;
		} else if (r.lo < 0) {
			diag_error(c->d, iloc(c, in), "'%s' of '%%%s' index %d can be %lld, below 0",
			    tile_op_name(in), target_name(c->g, c->n, in), k, (long long)r.lo);
			c->bad++;
		} else if (!in->masked && r.hi + shape[k] > t->dim[k]) {
			diag_error(c->d, iloc(c, in), "'%s' of '%%%s' reaches element %lld of "
			    "dimension %d (size %lld) without a mask; write %s", tile_op_name(in),
			    target_name(c->g, c->n, in), (long long)(r.hi + shape[k] - 1), k,
			    (long long)t->dim[k], in->op == TO_LOAD ? "other=..." : "'masked'");
			c->bad++;
		}
	}
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

static bool
is_tile(const VCtx *c, int v)
{
	return c->f->vals[v].rank >= 0;
}

static void
check_inst(VCtx *c, int i, int *stores)
{
	const TileFn *f = c->f;
	const TileInst *in = &f->insts[i];
	const TileVal *r = in->res >= 0 ? &f->vals[in->res] : NULL;
	int64_t s[IR_MAX_RANK];
	int rk;
	bool scalar_in = in->op == TO_IDIV || in->op == TO_IREM;

	for (int j = 0; j < in->nin; j++) {
		int v = in->in[j];

		if (v < 0 || v >= f->nvals || !visible(c, v, i)) {
			diag_error(c->d, iloc(c, in), "operand %d of '%s' is not defined before it "
			    "in its scope", j, tile_op_name(in));
			c->bad++;
			return;
		}
		if (is_tile(c, v) == scalar_in) {
			diag_error(c->d, iloc(c, in), "'%s' takes %s, but '%%%s' is %s",
			    tile_op_name(in), scalar_in ? "a scalar" : "tiles", f->vals[v].name,
			    scalar_in ? "a tile" : "a scalar");
			c->bad++;
			return;
		}
	}
	for (int k = 0; k < in->nidx; k++)
		for (int t = 0; t < in->idx[k].nterm; t++) {
			int v = in->idx[k].val[t];

			if (v < 0 || v >= f->nvals || !visible(c, v, i) || is_tile(c, v)) {
				diag_error(c->d, iloc(c, in), "index %d of '%s' uses '%%%s', which is "
				    "not a scalar defined before it", k, tile_op_name(in),
				    v >= 0 && v < f->nvals ? f->vals[v].name : "?");
				c->bad++;
				return;
			}
		}
	if (r && r->rank >= 0)
		for (int k = 0; k < r->rank; k++)
			if (!is_block(f, r->shape[k])) {
				char a[96];

				shape_str(r->shape, r->rank, a, sizeof a);
				diag_error(c->d, r->loc.line ? r->loc : iloc(c, in), "tile '%%%s' %s has "
				    "dimension %lld, which is neither 1 nor a block size (BM, BN, BK)",
				    r->name, a, (long long)r->shape[k]);
				c->bad++;
				break;
			}
	switch (in->op) {
	case TO_PROGRAM_ID:
		if (in->axis < 0 || in->axis > 2) {
			diag_error(c->d, iloc(c, in), "'program_id' axis %lld is not 0, 1 or 2",
			    (long long)in->axis);
			c->bad++;
		}
		break;
	case TO_IDIV:
	case TO_IREM:
		if (in->by <= 0 || in->by > TILE_IDX_MAX) {
			diag_error(c->d, iloc(c, in), "'%s' needs a positive by=, found %lld",
			    tile_op_name(in), (long long)in->by);
			c->bad++;
		}
		break;
	case TO_LOAD:
		if (in->arg < 0 || in->arg >= f->nargs) {
			diag_error(c->d, iloc(c, in), "'load' reads the kernel's result; it may only "
			    "load its operands");
			c->bad++;
			break;
		}
		check_access(c, i);
		break;
	case TO_STORE:
	case TO_ATOMIC_ADD:
	case TO_ATOMIC_MAX:
		if (in->arg != TILE_RESULT) {
			diag_error(c->d, iloc(c, in), "'%s' writes an operand; it may only write the "
			    "kernel's result '%%%s'", tile_op_name(in), c->n->name);
			c->bad++;
			break;
		}
		check_access(c, i);
		if (in->op != TO_STORE && !f->has_init) {
			diag_error(c->d, iloc(c, in), "'%s' needs the kernel to initialise its "
			    "result: write init=0.0 (or -inf) on 'tiled'", tile_op_name(in));
			c->bad++;
		}
		if (in->op == TO_STORE) {
			unsigned dep = 0;

			/* Programs along a grid axis that the indices ignore would all
			 * store the same elements. */
			for (int k = 0; k < in->nidx; k++)
				for (int t = 0; t < in->idx[k].nterm; t++)
					if (in->idx[k].coef[t])
						dep |= c->dep[in->idx[k].val[t]];
			for (int a = 0; a < 3; a++)
				if (f->grid[a] > 1 && !(dep & (1u << a))) {
					diag_error(c->d, iloc(c, in), "'store' to '%%%s' does not depend on "
					    "program_id axis %d: its %lld programs would store the same "
					    "elements (use atomics to combine)", c->n->name, a,
					    (long long)f->grid[a]);
					c->bad++;
				}
			/* A store inside a loop whose place does not move with the
			 * loop writes the same elements again on every trip. */
			for (int p = c->parent[i]; p >= 0; p = c->parent[p]) {
				bool moves = false;

				for (int k = 0; k < in->nidx; k++)
					for (int t = 0; t < in->idx[k].nterm; t++)
						moves = moves || in->idx[k].val[t] == f->insts[p].var;
				if (!moves && for_bounds_ok(&f->insts[p]) &&
				    f->insts[p].hi - f->insts[p].lo > f->insts[p].step) {
					diag_error(c->d, iloc(c, in), "'store' to '%%%s' inside the loop over "
					    "'%%%s' stores the same elements on every trip", c->n->name,
					    f->vals[f->insts[p].var].name);
					c->bad++;
				}
			}
		}
		stores[in->op == TO_STORE ? 0 : in->op == TO_ATOMIC_ADD ? 1 : 2]++;
		if (stores[1] && stores[2]) {
			diag_error(c->d, iloc(c, in), "'%%%s' is combined with both atomic_add and "
			    "atomic_max; a kernel uses one", c->n->name);
			c->bad++;
		}
		if (stores[0] > 1 || (stores[0] && (stores[1] || stores[2]))) {
			diag_error(c->d, iloc(c, in), "'%%%s' is stored twice; a program stores its "
			    "result once (or combines it with atomics only)", c->n->name);
			c->bad++;
		}
		break;
	case TO_FOR:
		if (!for_bounds_ok(in)) {
			diag_error(c->d, iloc(c, in), "'for' bounds and step must lie within +-%lld "
			    "(2^50), found %lld to %lld step %lld", (long long)TILE_IDX_MAX,
			    (long long)in->lo, (long long)in->hi, (long long)in->step);
			c->bad++;
		} else if (in->step <= 0 || in->hi < in->lo) {
			diag_error(c->d, iloc(c, in), "'for' needs lo <= hi and a positive step, found "
			    "%lld to %lld step %lld", (long long)in->lo, (long long)in->hi,
			    (long long)in->step);
			c->bad++;
		}
		if (in->end <= i || in->end >= f->ninsts || f->insts[in->end].op != TO_YIELD)
			AICM_BUG("a for without its yield");
		if (!r || f->vals[in->iter].rank != f->vals[in->in[0]].rank ||
		    memcmp(f->vals[in->iter].shape, f->vals[in->in[0]].shape,
		    sizeof(int64_t) * IR_MAX_RANK) || r->rank != f->vals[in->in[0]].rank ||
		    memcmp(r->shape, f->vals[in->in[0]].shape, sizeof(int64_t) * IR_MAX_RANK)) {
			diag_error(c->d, iloc(c, in), "'for' result, iter value and initial value "
			    "must have one tile type");
			c->bad++;
		}
		break;
	case TO_YIELD: {
		int fo = c->parent[i], v = in->in[0];

		if (fo < 0 || f->insts[fo].end != i)
			AICM_BUG("a yield that ends no loop");
		if (f->vals[v].rank != f->vals[f->insts[fo].iter].rank ||
		    memcmp(f->vals[v].shape, f->vals[f->insts[fo].iter].shape,
		    sizeof(int64_t) * IR_MAX_RANK)) {
			diag_error(c->d, iloc(c, in), "'yield' of '%%%s' does not match the type of "
			    "the loop's iter value '%%%s'", f->vals[v].name,
			    f->vals[f->insts[fo].iter].name);
			c->bad++;
		}
		break;
	}
	case TO_DOT: {
		const TileVal *a = &f->vals[in->in[0]], *b = &f->vals[in->in[1]],
		    *acc = &f->vals[in->in[2]];
		int ra = a->rank;

		if (ra < 2 || b->rank != ra || acc->rank != ra ||
		    a->shape[ra - 1] != b->shape[ra - 2]) {
			diag_error(c->d, iloc(c, in), "'dot' takes [.., M, K], [.., K, N] and an "
			    "accumulator [.., M, N] of one rank");
			c->bad++;
			break;
		}
		for (int k = 0; k < ra - 2; k++)
			if (a->shape[k] != 1 || b->shape[k] != 1 || acc->shape[k] != 1) {
				diag_error(c->d, iloc(c, in), "'dot' leading tile dimensions must be 1");
				c->bad++;
				return;
			}
		memcpy(s, acc->shape, sizeof s);
		s[ra - 2] = a->shape[ra - 2];
		s[ra - 1] = b->shape[ra - 1];
		if (memcmp(s, acc->shape, sizeof(int64_t) * (size_t)ra)) {
			diag_error(c->d, iloc(c, in), "'dot' accumulator does not have the shape "
			    "[.., M, N] of its operands");
			c->bad++;
			break;
		}
		want_shape(c, in, s, ra);
		break;
	}
	case TO_UNARY:
		want_shape(c, in, f->vals[in->in[0]].shape, f->vals[in->in[0]].rank);
		break;
	case TO_BINARY:
		rk = broadcast(&f->vals[in->in[0]], &f->vals[in->in[1]], s);
		if (rk < 0) {
			diag_error(c->d, iloc(c, in), "'%s' cannot broadcast its tiles",
			    tile_op_name(in));
			c->bad++;
			break;
		}
		want_shape(c, in, s, rk);
		break;
	case TO_REDUCE: {
		const TileVal *a = &f->vals[in->in[0]];

		if (in->axis >= a->rank) {
			diag_error(c->d, iloc(c, in), "'%s' axis %lld is out of range for a tile of "
			    "rank %d", tile_op_name(in), (long long)in->axis, a->rank);
			c->bad++;
			break;
		}
		rk = 0;
		for (int k = 0; k < a->rank; k++)
			if (in->axis >= 0 && in->axis != k)
				s[rk++] = a->shape[k];
			else if (in->keepdims)
				s[rk++] = 1;
		want_shape(c, in, s, rk);
		if (in->nin == 2 && (f->vals[in->in[1]].rank != rk ||
		    memcmp(f->vals[in->in[1]].shape, s, sizeof(int64_t) * (size_t)rk))) {
			diag_error(c->d, iloc(c, in), "'%s' accumulator '%%%s' does not have the "
			    "reduced shape", tile_op_name(in), f->vals[in->in[1]].name);
			c->bad++;
		}
		break;
	}
	case TO_TRANSPOSE: {
		const TileVal *a = &f->vals[in->in[0]];
		unsigned seen = 0;

		if (in->nperm != a->rank) {
			diag_error(c->d, iloc(c, in), "'transpose' perm has %d entries for a tile of "
			    "rank %d", in->nperm, a->rank);
			c->bad++;
			break;
		}
		for (int k = 0; k < a->rank; k++) {
			if (in->perm[k] < 0 || in->perm[k] >= a->rank || (seen & (1u << in->perm[k]))) {
				diag_error(c->d, iloc(c, in), "'transpose' perm is not a permutation");
				c->bad++;
				return;
			}
			seen |= 1u << in->perm[k];
			s[k] = a->shape[in->perm[k]];
		}
		want_shape(c, in, s, a->rank);
		break;
	}
	case TO_ZEROS:
	case TO_FULL:
		break;
	case TO_COUNT:
		AICM_BUG("bad tile op");
	}
}

int
tile_verify(const Graph *g, int node, Diag *d)
{
	const Node *n = &g->nodes[node];
	const TileFn *f = n->tile;
	VCtx c = {g, n, f, d, NULL, NULL, NULL, 0};
	int stores[3] = {0, 0, 0};   /* store, atomic_add, atomic_max */
	int *stack, sp = 0;

	for (int j = 0; j < f->nargs; j++)
		if (f->args[j] < 0 || f->args[j] >= node) {
			diag_error(d, n->loc, "operand %d of tiled '%%%s' is not defined before it", j,
			    n->name);
			return 1;
		} else if (g->nodes[f->args[j]].type.rank < 0) {
			diag_error(d, n->loc, "operand '%%%s' of tiled '%%%s' has no type",
			    g->nodes[f->args[j]].name, n->name);
			return 1;
		} else if (g->nodes[f->args[j]].type.dt != n->type.dt) {
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
	c.parent = xmalloc(sizeof(int) * (size_t)(f->ninsts + 1));
	c.range = xcalloc((size_t)f->nvals + 1, sizeof *c.range);
	c.dep = xcalloc((size_t)f->nvals + 1, sizeof *c.dep);
	stack = xmalloc(sizeof(int) * (size_t)(f->ninsts + 1));
	for (int i = 0; i < f->ninsts; i++) {
		c.parent[i] = sp ? stack[sp - 1] : -1;
		if (f->insts[i].op == TO_FOR)
			stack[sp++] = i;
		else if (f->insts[i].op == TO_YIELD && sp)
			sp--;
	}
	for (int i = 0; i < f->ninsts; i++) {
		check_inst(&c, i, stores);
		scalar_range(&c, i);
	}
	if (!stores[0] && !stores[1] && !stores[2]) {
		diag_error(d, n->loc, "tiled '%%%s' never stores its result", n->name);
		c.bad++;
	}
	free(stack);
	free(c.parent);
	free(c.range);
	free(c.dep);
	return c.bad;
}
