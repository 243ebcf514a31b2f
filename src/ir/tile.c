/*
 * tile.c: building tiled kernels (tile.h); print.c prints them, in the
 * form the parser reads (docs/tiled.md), and tile_verify.c checks them.
 *
 * A body finds its values by name through a hash index that grows with
 * it: a fused chain makes one body of as many values as it has ops.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tile.h"

/* ---- building -------------------------------------------------------- */

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

/* ---- the name index -------------------------------------------------- */


/* The slot of idx (cap a power of two, never full) that holds the value
 * named name (hash h), or the empty slot where it would go.  The hashes
 * are compared first, so a probe past other names touches neither their
 * values nor their text (in a large body, a cache miss each). */
static size_t
index_slot(const TileVal *vals, const TileSlot *idx, int cap, const char *name, uint32_t h)
{
	size_t m = (size_t)cap - 1, k;

	for (k = h & m; idx[k].val; k = (k + 1) & m)
		if (idx[k].hash == h && !strcmp(vals[idx[k].val - 1].name, name))
			break;
	return k;
}

/* Enters value v; a name already there keeps its first value, as a scan
 * from the front would find it (the parser reports the redefinition and
 * goes on with both). */
static void
index_put(const TileVal *vals, TileSlot *idx, int cap, int v)
{
	uint32_t h;
	size_t k;

	if (!vals[v].name)
		return;
	h = (uint32_t)ir_hash_str(vals[v].name);
	k = index_slot(vals, idx, cap, vals[v].name, h);
	if (!idx[k].val)
		idx[k] = (TileSlot){v + 1, h};
}

/* The smallest index capacity, from 8, that keeps n values at most half
 * full. */
static int
index_cap(int n, int from)
{
	int cap = from ? from : 8;

	while (cap < 2 * n)
		cap *= 2;
	return cap;
}

/* A larger index for f, in the scratch (reused, on the heap) or in the
 * arena (the outgrown one stays there, as the value arrays' do; all of
 * them together are twice the last).  The old slots move with their
 * hashes: no name is read again, and no two of them hold equal names. */
static void
index_grow(Graph *g, TileFn *f)
{
	TileScratch *s = f->scratch;
	TileSlot *old = f->index, *idx;
	int oldcap = f->capindex, cap = index_cap(f->nvals, 2 * f->capindex);
	size_t m = (size_t)cap - 1;

	if (s)
		idx = xcalloc((size_t)cap, sizeof *idx);
	else
		idx = arena_alloc(&g->arena, sizeof *idx * (size_t)cap);
	for (int i = 0; i < oldcap; i++)
		if (old[i].val) {
			size_t k;

			for (k = old[i].hash & m; idx[k].val; k = (k + 1) & m)
				;
			idx[k] = old[i];
		}
	if (s) {
		free(s->index);
		s->index = idx;
		s->capindex = cap;
	}
	f->index = idx;
	f->capindex = cap;
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
	for (int i = 0; i < rank; i++)
		v->shape[i] = shape[i];
	v->def = f->ninsts;
	f->nvals++;
	if (2 * f->nvals > f->capindex)
		index_grow(g, f);
	index_put(f->vals, f->index, f->capindex, f->nvals - 1);
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
	int cap = f->nvals ? index_cap(f->nvals, 0) : 0;
	TileSlot *idx = cap ? arena_alloc(&g->arena, sizeof *idx * (size_t)cap) : NULL;

	if (f->nvals)                /* an empty array may be NULL, which memcpy refuses */
		memcpy(v, f->vals, sizeof *v * (size_t)f->nvals);
	if (f->ninsts)
		memcpy(in, f->insts, sizeof *in * (size_t)f->ninsts);
	for (int i = 0; i < f->nvals; i++)
		index_put(v, idx, cap, i);
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
	return f->index[index_slot(f->vals, f->index, f->capindex, name,
	    (uint32_t)ir_hash_str(name))].val - 1;
}

const char *
tile_op_name(const TileInst *in)
{
	switch (in->op) {
	case TO_PROGRAM_ID: return "program_id";
	case TO_IDIV: return "idiv";
	case TO_IREM: return "irem";
	case TO_ZEROS: return "zeros";
	case TO_FULL: return "full";
	case TO_LOAD: return "load";
	case TO_STORE: return "store";
	case TO_ATOMIC_ADD: return "atomic_add";
	case TO_ATOMIC_MAX: return "atomic_max";
	case TO_FOR: return "for";
	case TO_YIELD: return "yield";
	case TO_DOT: return "dot";
	case TO_TRANSPOSE: return "transpose";
	case TO_UNARY: case TO_BINARY: case TO_REDUCE: return ir_ops[in->gop].name;
	case TO_COUNT: break;
	}
	return "?";
}
