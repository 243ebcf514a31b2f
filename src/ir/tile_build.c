/*
 * tile_build.c: the one builder of tiled bodies (tile.h), used by the
 * parser's tile-body actions (grammar/parser.y) and by lower-tiled
 * (passes/lower_tiled.c) alike.
 *
 * The callers check what they were given (the parser its text, the lowering
 * its graph) and report in their own words; the builder only builds, and
 * takes of each instruction what its row of tile_ops.def says the op has:
 * its operands, the attributes it accepts (anything else is a bug of the
 * caller), and its result, whose element type follows from the op (a
 * loaded tile has its tensor's type, a computed one its first operand's,
 * a filled one the kernel's).  The instructions come in the order the
 * text has them; a result may be defined after the instruction's own
 * attributes have been read, so that the parser's messages keep their
 * order.
 *
 * A body finds its values by name through a hash index that grows with
 * it: a fused chain makes one body of as many values as it has ops.  The
 * bodies that lowering makes grow in scratch arrays reused from body to
 * body (TileScratch) and move into the graph's arena at their exact size.
 */
#include <stdlib.h>
#include <string.h>

#include "tile.h"

/* ---- bodies ----------------------------------------------------------- */

TileFn *
tile_fn_new(Graph *g, const char *name, KernelKind kind)
{
	TileFn *f = arena_alloc(&g->arena, sizeof *f);

	f->name = name;
	f->kind = kind;
	f->grid[0] = f->grid[1] = f->grid[2] = 1;
	return f;
}

/* Grows a body's array by doubling: in the builder's scratch arrays (on
 * the heap, reused) or, for a body built in place, in the arena, where the
 * outgrown copy stays. */
static void *
grow(Graph *g, TileFn *f, void *p, int n, int *cap, size_t sz, void **sp, int *scap)
{
	void *q;

	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 16;
	if (f->scratch) {
		q = xrealloc(p, sz * (size_t)*cap);
		*sp = q;
		*scap = *cap;
		return q;
	}
	q = arena_alloc(&g->arena, sz * (size_t)*cap);
	if (n)
		memcpy(q, p, sz * (size_t)n);
	return q;
}

/* ---- the name index (hash.h's slots, in the arena or the scratch) ---- */

static bool
name_eq(const void *vals, uint32_t v, const void *name)
{
	return !strcmp(((const TileVal *)vals)[v].name, name);
}

/* Enters value v; a name already there keeps its first value, as a scan
 * from the front would find it (the parser reports the redefinition and
 * goes on with both). */
static void
index_put(const TileVal *vals, HashSlot *idx, size_t cap, int v)
{
	uint32_t h;
	size_t k;

	if (!vals[v].name)
		return;
	h = (uint32_t)ir_hash_str(vals[v].name);
	k = hash_find(idx, cap, h, name_eq, vals, vals[v].name);
	if (!idx[k].item)
		idx[k] = (HashSlot){(uint32_t)v + 1, h};
}

/* A larger index for f, in the scratch (reused, on the heap) or in the
 * arena (the outgrown one stays there, as the value arrays' do; all of
 * them together are twice the last).  The old slots move with their
 * hashes: no name is read again. */
static void
index_grow(Graph *g, TileFn *f)
{
	TileScratch *s = f->scratch;
	HashSlot *idx;
	size_t cap = hash_cap((size_t)f->nvals);

	if (s)
		idx = xcalloc(cap, sizeof *idx);
	else
		idx = arena_alloc(&g->arena, sizeof *idx * cap);
	hash_move(f->index, (size_t)f->capindex, idx, cap);
	if (s) {
		free(s->index);
		s->index = idx;
		s->capindex = (int)cap;
	}
	f->index = idx;
	f->capindex = (int)cap;
}

int
tile_add_val(Graph *g, TileFn *f, const char *name, int rank, const int64_t *shape)
{
	TileScratch *s = f->scratch;
	TileVal *v;
	void *sp;
	int scap;

	f->vals = grow(g, f, f->vals, f->nvals, &f->capvals, sizeof *f->vals,
	    s ? (void **)&s->vals : &sp, s ? &s->capvals : &scap);
	v = &f->vals[f->nvals];
	memset(v, 0, sizeof *v);
	v->name = name;
	v->rank = rank;
	v->dt = f->dt;
	for (int i = 0; i < rank; i++)
		v->shape[i] = shape[i];
	v->def = f->ninsts;
	f->nvals++;
	if (2 * f->nvals > f->capindex)
		index_grow(g, f);
	index_put(f->vals, f->index, (size_t)f->capindex, f->nvals - 1);
	return f->nvals - 1;
}

int
tile_add_inst(Graph *g, TileFn *f, TileOpKind op)
{
	TileScratch *s = f->scratch;
	TileInst *in;
	void *sp;
	int scap;

	f->insts = grow(g, f, f->insts, f->ninsts, &f->capinsts, sizeof *f->insts,
	    s ? (void **)&s->insts : &sp, s ? &s->capinsts : &scap);
	in = &f->insts[f->ninsts];
	memset(in, 0, sizeof *in);
	in->op = op;
	in->res = in->var = in->iter = -1;
	if (op == TO_PROGRAM_ID || op == TO_REDUCE)
		in->axis = -1;               /* shares its place with the other kinds' fields */
	return f->ninsts++;
}

TileIdx *
tile_set_nidx(Graph *g, TileFn *f, int i, int n)
{
	TileInst *in = &f->insts[i];

	in->nidx = n;
	in->idx = n ? arena_alloc(&g->arena, sizeof *in->idx * (size_t)n) : NULL;
	return in->idx;
}

void
tile_fn_begin(TileFn *f, TileScratch *s)
{
	if (f->nvals || f->ninsts)
		AICM_BUG("a tiled body begun twice");
	f->scratch = s;
	f->vals = s->vals;
	f->capvals = s->capvals;
	f->insts = s->insts;
	f->capinsts = s->capinsts;
	f->index = s->index;
	f->capindex = s->capindex;
}

void
tile_fn_end(Graph *g, TileFn *f)
{
	TileVal *v = arena_alloc(&g->arena, sizeof *v * (size_t)(f->nvals ? f->nvals : 1));
	TileInst *in = arena_alloc(&g->arena, sizeof *in * (size_t)(f->ninsts ? f->ninsts : 1));
	TileScratch *s = f->scratch;
	int cap = f->nvals ? (int)hash_cap((size_t)f->nvals) : 0;
	HashSlot *idx = cap ? arena_alloc(&g->arena, sizeof *idx * (size_t)cap) : NULL;

	if (f->nvals)                /* an empty array may be NULL, which memcpy refuses */
		memcpy(v, f->vals, sizeof *v * (size_t)f->nvals);
	if (f->ninsts)
		memcpy(in, f->insts, sizeof *in * (size_t)f->ninsts);
	for (int i = 0; i < f->nvals; i++)
		index_put(v, idx, (size_t)cap, i);
	/* The scratch index is left zero for the next body at a cost in
	 * proportion to this one: when it is much larger (a large body came
	 * before), it is freed instead, or a thousand small bodies after one
	 * large one would clear it a thousand times. */
	if (s && s->capindex > 4 * cap) {
		free(s->index);
		s->index = NULL;
		s->capindex = 0;
	} else if (s && s->index) {
		memset(s->index, 0, sizeof *s->index * (size_t)s->capindex);
	}
	f->vals = v;
	f->capvals = f->nvals;
	f->index = idx;
	f->capindex = cap;
	f->insts = in;
	f->capinsts = f->ninsts;
	f->scratch = NULL;
}

void
tile_scratch_free(TileScratch *s)
{
	free(s->vals);
	free(s->insts);
	free(s->index);
	memset(s, 0, sizeof *s);
}

int
tile_lookup(const TileFn *f, const char *name)
{
	if (!f->capindex)
		return -1;
	return (int)f->index[hash_find(f->index, (size_t)f->capindex,
	    (uint32_t)ir_hash_str(name), name_eq, f->vals, name)].item - 1;
}

/* ---- instructions ------------------------------------------------------ */

/* Copies the attributes of at that the op's row accepts into in. */
static void
set_attrs(Graph *g, TileInst *in, const TileAttrs *at)
{
	if (!at || !at->set)
		return;
	if (at->set & ~tile_ops[in->op].attrs)
		AICM_BUG("'%s' given attributes it does not take (0x%x)", tile_op_name(in), at->set);
	if (at->set & TAB(AXIS))
		in->axis = at->axis;
	if (at->set & TAB(KEEPDIMS))
		in->keepdims = at->keepdims;
	if (at->set & TAB(LAST))
		in->last = at->last;
	if (at->set & TAB(BY))
		in->by = at->by;
	if (at->set & TAB(VALUE))
		in->value = at->value;       /* TileNum: the integer too */
	if (at->set & TAB(PERM)) {
		in->nperm = at->nperm;
		memcpy(in->perm, at->perm, sizeof in->perm);
	}
	if (at->set & TAB(OTHER)) {
		in->masked = true;
		in->other = at->other;
	}
	if (at->set & TAB(MASKED))
		in->masked = true;
	if (at->set & TAB(TO))
		in->to = at->to;
	if (at->set & TAB(VIEW)) {
		in->has_view = true;
		in->nview = at->nview;
		memcpy(in->view, at->view, sizeof in->view);
	}
	if (at->set & TAB(AT))
		in->start = at->start;
	if (at->set & TAB(STRIDES)) {
		/* the view's strides, then its offset (0 unless offset=); the
		 * builder's caller (lower-tiled, the parser) gives one stride per
		 * view dim */
		int64_t *s = arena_alloc(&g->arena, sizeof(int64_t) * (size_t)(IR_MAX_RANK + 1));

		memset(s, 0, sizeof(int64_t) * (size_t)(IR_MAX_RANK + 1));
		memcpy(s, at->strides, sizeof(int64_t) * (size_t)at->nstrides);
		s[IR_MAX_RANK] = (at->set & TAB(OFFSET)) ? at->offset : 0;
		in->vstr = s;
	}
	if (at->set & TAB(STEPS)) {
		in->nperm = at->nsteps;
		memcpy(in->steps, at->steps, sizeof in->steps);
	}
}

int
tile_build_op(Graph *g, TileFn *f, TileOpKind op, OpId gop, int nin, const int *in,
    const TileAttrs *at, Loc loc)
{
	int i = tile_add_inst(g, f, op);
	TileInst *t = &f->insts[i];

	if (nin < tile_ops[op].nin || nin > tile_ops[op].nmax)
		AICM_BUG("'%s' built with %d operands", tile_op_name(t), nin);
	t->gop = gop;
	t->loc = loc;
	t->nin = nin;
	for (int j = 0; j < nin; j++)
		t->in[j] = in[j];
	set_attrs(g, t, at);
	return i;
}

int
tile_build_access(Graph *g, TileFn *f, TileOpKind op, int arg, int nidx, const TileIdx *idx,
    int v, const TileAttrs *at, Loc loc)
{
	int i = tile_add_inst(g, f, op);
	TileInst *t = &f->insts[i];
	TileIdx *x;

	if (tile_ops[op].form != TF_LOAD && tile_ops[op].form != TF_STORE)
		AICM_BUG("'%s' built as an access", tile_op_name(t));
	if (at && (at->set & TAB(WINDOW)) && (tile_ops[op].attrs & TAB(WINDOW))) {
		int64_t *w = arena_alloc(&g->arena, sizeof(int64_t) * (size_t)(at->nwin + 1));

		memcpy(w, at->win, sizeof(int64_t) * (size_t)at->nwin);
		t = &f->insts[i];
		t->nwin = at->nwin;
		t->win = w;
	}
	t->loc = loc;
	t->arg = arg;
	if (tile_ops[op].form == TF_STORE || v >= 0) {
		/* a load's operand tile: load_pad's fill, load_gather's indices */
		if (tile_ops[op].form == TF_LOAD && tile_ops[op].nmax < 1)
			AICM_BUG("'%s' built with an operand tile", tile_op_name(t));
		t->nin = 1;
		t->in[0] = v;
	}
	set_attrs(g, t, at);
	x = tile_set_nidx(g, f, i, nidx);
	if (idx && nidx)
		memcpy(x, idx, sizeof *x * (size_t)nidx);
	return i;
}

int
tile_build_for(Graph *g, TileFn *f, int64_t lo, int64_t hi, int64_t step, int init, Loc loc)
{
	int i = tile_add_inst(g, f, TO_FOR);
	TileInst *t = &f->insts[i];

	t->loc = loc;
	t->lo = lo;
	t->hi = hi;
	t->step = step;
	t->nin = 1;
	t->in[0] = init;
	return i;
}

/* The element type of a value that inst i defines (tile_build.c's rule):
 * a load's is its tensor's (argmax's and argmin's i64: indices); an
 * elementwise op's its graph op's result type (a compare's bool, cast's
 * to=, where's that of its second operand); anything else takes its first
 * operand's, or the kernel's. */
static DType
val_dt(const Graph *g, const TileFn *f, int i)
{
	const TileInst *in = &f->insts[i];

	if (in->op == TO_ARGMAX || in->op == TO_ARGMIN)
		return DT_I64;           /* indices, whatever the tensor holds */
	if (tile_ops[in->op].form == TF_LOAD && in->arg >= 0 && in->arg < f->nargs &&
	    f->args[in->arg] >= 0)
		return g->nodes[f->args[in->arg]].type.dt;
	if (in->op == TO_UNARY && in->gop == OP_CAST)
		return in->to;
	if ((in->op == TO_UNARY || in->op == TO_BINARY) && ir_ops[in->gop].result == RT_BOOL)
		return DT_BOOL;
	if (in->op == TO_WHERE && in->nin == 3 && in->in[1] >= 0 && in->in[1] < f->nvals)
		return f->vals[in->in[1]].dt;
	if (in->nin > 0 && in->in[0] >= 0 && in->in[0] < f->nvals)
		return f->vals[in->in[0]].dt;
	return f->dt;
}

/* A value that inst i defines. */
static int
def_val(Graph *g, TileFn *f, int i, const char *name, int rank, const int64_t *shape)
{
	DType dt = val_dt(g, f, i);
	int v = tile_add_val(g, f, name, rank, shape);

	f->vals[v].def = i;
	f->vals[v].dt = dt;
	return v;
}

int
tile_build_loop_var(Graph *g, TileFn *f, int fo, const char *name)
{
	int v = def_val(g, f, fo, name, -1, NULL);

	f->insts[fo].var = v;
	return v;
}

int
tile_build_loop_iter(Graph *g, TileFn *f, int fo, const char *name)
{
	int init = f->insts[fo].in[0], v;
	int64_t s[IR_MAX_RANK] = {0};
	int r = -1;

	/* An undefined init (reported by the parser) may leave no value to
	 * copy from. */
	if (init >= 0 && init < f->nvals) {
		r = f->vals[init].rank;
		memcpy(s, f->vals[init].shape, sizeof s);
	}
	v = def_val(g, f, fo, name, r, s);
	f->insts[fo].iter = v;
	return v;
}

int
tile_build_yield(Graph *g, TileFn *f, int fo, int v, Loc loc)
{
	int y = tile_add_inst(g, f, TO_YIELD);

	f->insts[y].loc = loc;
	f->insts[y].nin = 1;
	f->insts[y].in[0] = v;
	f->insts[fo].end = y;
	return y;
}

int
tile_build_def(Graph *g, TileFn *f, int i, const char *name, int rank, const int64_t *shape)
{
	int v = def_val(g, f, i, name, rank, shape);

	f->insts[i].res = v;
	return v;
}
