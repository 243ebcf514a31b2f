/*
 * ir.c: the tables behind ir.h and the graph's bookkeeping.
 *
 * Names live in an open-addressing table of node indices (hash.h's slots
 * and probe, grown at half load), so every lookup is O(1) and a graph of a
 * million ops parses in linear time.  Consumers are not stored on nodes:
 * a pass that needs them builds the compressed Users table in one sweep.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ir.h"
#include "tile.h"

const OpInfo ir_ops[OP_COUNT] = {
#define OP(id, name, cls, nmin, nmax, types, result, attrs, req, shape, flops) \
	{name, cls, nmin, nmax, types, result, attrs, req, shape, flops},
#include "ops.def"
#undef OP
};

const AttrInfo ir_attrs[ATTR_COUNT] = {
#define X(id, name, kind) {name, kind},
	IR_ATTRS(X)
#undef X
};

const char *const ir_kernel_kinds[KK_COUNT] = {
#define X(id, name) name,
	IR_KERNEL_KINDS(X)
#undef X
};

const char *const ir_kattr_names[KA_COUNT] = {
#define X(id, name) name,
	IR_KERNEL_ATTRS(X)
#undef X
};

/* Op names by hash (built once): the parser looks up every statement's
 * op, and a scan of the table was a twentieth of a large parse. */
enum { OPIDX = 128 };
static HashSlot op_index[OPIDX];
static pthread_once_t op_index_once = PTHREAD_ONCE_INIT;

/* An op's name, unless it is never written as an op statement: a tiled
 * node is written 'tiled @k ...'. */
static const char *
op_name(uint32_t op)
{
	return ir_ops[op].cls == OC_TILED ? NULL : ir_ops[op].name;
}

static void
op_index_build(void)
{
	hash_names_build(op_index, OPIDX, OP_COUNT, op_name);
}

int
ir_op_lookup(const char *name)
{
	pthread_once(&op_index_once, op_index_build);
	return hash_names_find(op_index, OPIDX, op_name, name);
}

int
ir_attr_lookup(const char *name)
{
	for (int i = 0; i < ATTR_COUNT; i++)
		if (strcmp(ir_attrs[i].name, name) == 0)
			return i;
	return -1;
}

int
ir_kernel_kind_lookup(const char *name)
{
	for (int i = 0; i < KK_COUNT; i++)
		if (strcmp(ir_kernel_kinds[i], name) == 0)
			return i;
	return -1;
}

int
ir_kattr_lookup(const char *name)
{
	for (int i = 0; i < KA_COUNT; i++)
		if (strcmp(ir_kattr_names[i], name) == 0)
			return i;
	return -1;
}

/* Edit distance, capped: names longer than 30 bytes are never close. */
int
ir_edit_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), row[32];

	if (la > 30 || lb > 30)
		return 99;
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int prev = row[0], cur;

		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			cur = row[j];
			row[j] = prev + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			if (cur + 1 < row[j])
				row[j] = cur + 1;
			prev = cur;
		}
	}
	return row[lb];
}

const char *
ir_op_suggest(const char *name)
{
	const char *best = NULL;
	int bd = 3;

	for (int i = 0; i < OP_COUNT; i++) {
		int d = ir_edit_distance(name, ir_ops[i].name);

		if (d < bd && ir_ops[i].cls != OC_TILED) {
			bd = d;
			best = ir_ops[i].name;
		}
	}
	return best;
}

const char *
ir_suggest(const char *name, const char *const *cands, int n)
{
	const char *best = NULL;
	/* a third of the name's edits, at least one: 'fusee' and 'explian'
	 * are close to 'fuse' and 'explain', 'fusion' is not */
	int len = (int)strlen(name), bd = (len / 3 > 1 ? len / 3 : 1) + 1;

	if (len < 3)
		return NULL;        /* '-x' is one edit from '-o' and from '-q' */

	for (int i = 0; i < n; i++) {
		int d = ir_edit_distance(name, cands[i]);

		if (d < bd && d > 0) {
			bd = d;
			best = cands[i];
		}
	}
	return best;
}

bool
ir_is_elementwise(OpId op)
{
	OpClass c = ir_ops[op].cls;

	return c == OC_UNARY || c == OC_BINARY || c == OC_WHERE;
}

bool
ir_types_take(TypeSet ts, DType dt)
{
	switch (ts) {
	case TY_ANY:
		return true;
	case TY_NUM:
		return dt != DT_BOOL;
	case TY_FLOAT:
		return ir_dtype_is_float(dt);
	case TY_BOOL:
		return dt == DT_BOOL;
	}
	return false;
}

static const struct {
	const char *name;
	size_t bytes;
} dtypes[DT_COUNT] = {
#define X(id, name, bytes) {name, bytes},
	IR_DTYPES(X)
#undef X
};

const char *
ir_dtype_name(DType dt)
{
	return (unsigned)dt < DT_COUNT ? dtypes[dt].name : "?";
}

size_t
ir_dtype_size(DType dt)
{
	return dtypes[dt].bytes;
}

int
ir_dtype_lookup(const char *name)
{
	for (int i = 0; i < DT_COUNT; i++)
		if (!strcmp(dtypes[i].name, name))
			return i;
	return -1;
}

void
ir_attr_set_ints(Graph *g, Attrs *at, AttrId a, const int64_t *v, int n)
{
	int64_t *c = arena_alloc(&g->arena, sizeof(int64_t) * (size_t)(n > 0 ? n : 1));

	if (!at->tup)
		at->tup = arena_alloc(&g->arena, sizeof(IntTuple) * ATTR_COUNT);
	if (n > 0)
		memcpy(c, v, sizeof(int64_t) * (size_t)n);
	at->tup[a] = (IntTuple){n, c};
	at->set |= 1u << a;
}

/* A copy of from's attributes whose arrays live in g's arena. */
static void
attrs_copy(Graph *g, Attrs *to, const Attrs *from)
{
	*to = *from;
	to->tup = NULL;
	if (from->tup)
		for (int a = 0; a < ATTR_COUNT; a++)
			if ((from->set & (1u << a)) && from->tup[a].v)
				ir_attr_set_ints(g, to, (AttrId)a, from->tup[a].v, from->tup[a].n);
	if (from->set & AB(FILE))
		to->file = arena_strndup(&g->arena, from->file, strlen(from->file));
	if (from->set & AB(VALUES)) {
		double *vs = arena_alloc(&g->arena, sizeof(double) * (size_t)from->nvalues);
		int64_t *is = arena_alloc(&g->arena, sizeof(int64_t) * (size_t)from->nvalues);

		memcpy(vs, from->values, sizeof(double) * (size_t)from->nvalues);
		memcpy(is, from->ivalues, sizeof(int64_t) * (size_t)from->nvalues);
		to->values = vs;
		to->ivalues = is;
	}
}

void
ir_set_nin(Graph *g, int i, int nin)
{
	Node *n = &g->nodes[i];

	n->nin = nin;
	n->in = nin ? arena_alloc(&g->arena, sizeof(int) * (size_t)nin) : NULL;
	n->inloc = nin ? arena_alloc(&g->arena, sizeof(Loc) * (size_t)nin) : NULL;
}

int64_t
ir_type_numel(const Type *t)
{
	int64_t n = 1;

	for (int i = 0; i < t->rank; i++)
		if (__builtin_mul_overflow(n, t->dim[i], &n))
			return -1;
	return n;
}

bool
ir_type_eq(const Type *a, const Type *b)
{
	if (a->rank != b->rank || a->dt != b->dt)
		return false;
	for (int i = 0; i < a->rank; i++)
		if (a->dim[i] != b->dim[i])
			return false;
	return true;
}

bool
ir_same_dims(const Type *a, const Type *b)
{
	if (a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++)
		if (a->dim[i] != b->dim[i])
			return false;
	return true;
}

char *
ir_shape_str(const Type *t, char *buf)
{
	int n = 0;

	buf[n++] = '(';
	for (int i = 0; i < t->rank; i++)
		n += snprintf(buf + n, (size_t)(IR_TYPE_STR - n), "%s%lld",
		    i ? ", " : "", (long long)t->dim[i]);
	if (t->rank == 1)
		buf[n++] = ',';
	buf[n++] = ')';
	buf[n] = '\0';
	return buf;
}

/* ---- the name table -------------------------------------------------- */

/* The table is hash.h's slot array, kept here rather than in a HashMap so
 * that its slots come from xmalloc_huge (a million names: huge pages) and
 * a rebuild reuses them. */

static bool
name_eq(const void *g, uint32_t item, const void *name)
{
	return strcmp(((const Graph *)g)->nodes[item].name, name) == 0;
}

/* Enters node i (whose name hashes to h) into the table, which has room. */
static void
names_put(Graph *g, uint32_t h, int i)
{
	NameTab *t = &g->names;
	size_t k = hash_find(t->slot, t->cap, h, name_eq, g, g->nodes[i].name);

	/* An equal name has the same hash and so lies on this probe run:
	 * noting duplicates here costs nothing, and spares the verifier a
	 * lookup per node.  The later one goes after it, so a lookup finds
	 * the first. */
	if (t->slot[k].item) {
		if (!t->dup)
			t->dup = i + 1;
		k = hash_empty(t->slot, t->cap, h);
	}
	t->slot[k] = (HashSlot){(uint32_t)i + 1, h};
	t->n++;
}

static void
names_resize(Graph *g, size_t cap)
{
	NameTab old = g->names;

	g->names.cap = cap;
	g->names.slot = xmalloc_huge(cap * sizeof *g->names.slot);
	memset(g->names.slot, 0, cap * sizeof *g->names.slot);
	hash_move(old.slot, old.cap, g->names.slot, cap);
	free(old.slot);
}

/* The node named name (hash h) in a table with room, or -1 with *slot the
 * empty slot where it would go: one walk serves lookups and definitions. */
static int
probe(const Graph *g, const char *name, uint32_t h, size_t *slot)
{
	size_t k = hash_find(g->names.slot, g->names.cap, h, name_eq, g, name);

	*slot = k;
	return (int)g->names.slot[k].item - 1;
}

Loc
ir_attr_loc(const Node *n, AttrId a)
{
	Loc none = {0, 0, 0};

	return n->attrloc ? n->attrloc[a] : none;
}

uint32_t
ir_name_prefetch(const Graph *g, const char *name)
{
	uint32_t h = (uint32_t)ir_hash_str(name);

	if (g->names.cap)
		__builtin_prefetch(&g->names.slot[h & (g->names.cap - 1)], 1);
	return h;
}

int
ir_lookup(const Graph *g, const char *name)
{
	return ir_lookup_hashed(g, name, (uint32_t)ir_hash_str(name));
}

int
ir_lookup_hashed(const Graph *g, const char *name, uint32_t h)
{
	size_t k;

	return g->names.cap ? probe(g, name, h, &k) : -1;
}

/* Enters every node anew; the table is reused when it is large enough
 * (its pages are warm; a fresh one would cost faults). */
static void
names_rebuild(Graph *g)
{
	size_t cap = 64;

	while (cap < 2 * (size_t)g->nnodes + 2)
		cap *= 2;
	if (cap > g->names.cap) {
		free(g->names.slot);
		g->names.slot = xmalloc_huge(cap * sizeof *g->names.slot);
		g->names.cap = cap;
	}
	memset(g->names.slot, 0, g->names.cap * sizeof *g->names.slot);
	g->names.n = 0;
	g->names.dup = 0;
	for (int i = 0; i < g->nnodes; i++)
		names_put(g, (uint32_t)ir_hash_str(g->nodes[i].name), i);
}

/* ---- graphs ---------------------------------------------------------- */

Graph *
ir_graph_new(void)
{
	Graph *g = xcalloc(1, sizeof *g);

	return g;
}

void
ir_graph_free(Graph *g)
{
	if (!g)
		return;
	free(g->nodes);
	free(g->kernels);
	free(g->names.slot);
	arena_free(&g->arena);
	free(g);
}

static void
grow_nodes(Graph *g, int cap)
{
	Node *p = xmalloc_huge(sizeof *p * (size_t)cap);

	if (g->nnodes)
		memcpy(p, g->nodes, sizeof *p * (size_t)g->nnodes);
	free(g->nodes);
	g->nodes = p;
	g->capnodes = cap;
}

void
ir_reserve(Graph *g, int n)
{
	size_t cap = 64;

	/* Room for twice the estimate costs only address space (a page is
	 * touched when a node lands on it), while outgrowing it would copy
	 * every node into fresh pages: an estimate a little short (the
	 * parser's, on terse input) doubled the memory a large parse touched.
	 * The name table, touched whole when made, is sized for n. */
	if (n > g->capnodes)
		grow_nodes(g, n < IR_MAX_NODES / 2 ? 2 * n : IR_MAX_NODES);
	while (cap < 2 * (size_t)n + 2)
		cap *= 2;
	if (cap > g->names.cap)
		names_resize(g, cap);
}

/* A new last node, zeroed but for op, name, kernel and rank (its name
 * not entered yet). */
static void
append_node(Graph *g, OpId op, const char *name)
{
	Node *n;

	if (g->nnodes == g->capnodes)
		grow_nodes(g, g->capnodes ? 2 * g->capnodes : 16);
	n = &g->nodes[g->nnodes];
	memset(n, 0, sizeof *n);
	n->op = op;
	n->name = name;
	n->kernel = -1;
	n->type.rank = -1;
}

int
ir_add_node(Graph *g, OpId op, const char *name)
{
	append_node(g, op, name);
	if (2 * (g->names.n + 1) > g->names.cap)
		names_resize(g, g->names.cap ? 2 * g->names.cap : 64);
	names_put(g, (uint32_t)ir_hash_str(name), g->nnodes);
	return g->nnodes++;
}

int
ir_define(Graph *g, OpId op, const char *name, uint32_t h, int *prev)
{
	size_t k;

	if (2 * (g->names.n + 1) > g->names.cap)
		names_resize(g, g->names.cap ? 2 * g->names.cap : 64);
	if ((*prev = probe(g, name, h, &k)) >= 0)
		return -1;
	append_node(g, op, name);
	g->names.slot[k] = (HashSlot){(uint32_t)g->nnodes + 1, h};
	g->names.n++;
	return g->nnodes++;
}

const char *
ir_fresh_name(Graph *g, const char *base)
{
	size_t bl = strlen(base);
	char *buf = xmalloc(bl + 24);
	const char *r;

	for (long k = 0;; k++) {
		snprintf(buf, bl + 24, "%s.%ld", base, k);
		if (ir_lookup(g, buf) < 0)
			break;
	}
	r = arena_strndup(&g->arena, buf, strlen(buf));
	free(buf);
	return r;
}

int
ir_add_kernel(Graph *g, const char *name, KernelKind kind)
{
	Kernel *k;

	if (g->nkernels == g->capkernels) {
		g->capkernels = g->capkernels ? 2 * g->capkernels : 8;
		g->kernels = xrealloc(g->kernels, sizeof *g->kernels * (size_t)g->capkernels);
	}
	k = &g->kernels[g->nkernels];
	memset(k, 0, sizeof *k);
	k->name = name;
	k->kind = kind;
	k->first = k->last = -1;
	return g->nkernels++;
}

/* The name table after a reorder: the names stay, only the node indices in
 * the slots move, so one sweep over the slots suffices, with no rehashing.
 * A noted duplicate is re-derived by a full rebuild, since which of the two
 * names comes first may have changed (a verified graph has none). */
static void
names_remap(Graph *g, const int *inv)
{
	if (g->names.dup) {
		names_rebuild(g);
		return;
	}
	for (size_t k = 0; k < g->names.cap; k++)
		if (g->names.slot[k].item)
			g->names.slot[k].item = (uint32_t)inv[g->names.slot[k].item - 1] + 1;
}

void
ir_reorder(Graph *g, const int *perm)
{
	int n = g->nnodes;
	int *inv = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
	char *done = xcalloc((size_t)n + 1, 1);

	for (int i = 0; i < n; i++)
		inv[perm[i]] = i;
	/* Operands first, while every node is still at its old index. */
	for (int i = 0; i < n; i++) {
		Node *nd = &g->nodes[i];

		for (int j = 0; j < nd->nin; j++)
			nd->in[j] = inv[nd->in[j]];
		for (int j = 0; nd->tile && j < nd->tile->nargs; j++)
			nd->tile->args[j] = inv[nd->tile->args[j]];
	}
	/* Then the nodes, in place, one cycle of the permutation at a time:
	 * a copy of the node array would be the largest allocation of the
	 * pass, and fresh pages cost more than the moves (fuse's permutation
	 * is mostly the identity, which moves nothing). */
	for (int s = 0; s < n; s++) {
		Node tmp;
		int i = s;

		if (done[s] || perm[s] == s)
			continue;
		tmp = g->nodes[s];
		while (perm[i] != s) {
			g->nodes[i] = g->nodes[perm[i]];
			done[i] = 1;
			i = perm[i];
		}
		g->nodes[i] = tmp;
		done[i] = 1;
	}
	free(done);
	/* one sweep, not one per kernel: fuse makes a kernel per op */
	for (int k = 0; k < g->nkernels; k++)
		g->kernels[k].first = g->kernels[k].last = -1;
	for (int i = 0; i < n; i++) {
		int k = g->nodes[i].kernel;

		if (k < 0 || k >= g->nkernels)
			continue;
		if (g->kernels[k].first < 0)
			g->kernels[k].first = i;
		g->kernels[k].last = i;
	}
	for (int i = 0; i < g->nret; i++)
		g->ret[i] = inv[g->ret[i]];
	names_remap(g, inv);
	free(inv);
}

void
ir_compact(Graph *g, const int *map)
{
	int m = 0;

	if (g->nkernels)
		AICM_BUG("ir_compact on a graph with kernels");
	for (int i = 0; i < g->nnodes; i++) {
		Node *nd;

		if (map[i] < 0)
			continue;
		if (map[i] != m)
			AICM_BUG("ir_compact: kept node %d goes to %d, not %d", i, map[i], m);
		if (m != i)
			g->nodes[m] = g->nodes[i];
		nd = &g->nodes[m++];
		for (int j = 0; j < nd->nin; j++)
			if ((nd->in[j] = map[nd->in[j]]) < 0)
				AICM_BUG("ir_compact drops an operand of '%%%s'", nd->name);
		for (int j = 0; nd->tile && j < nd->tile->nargs; j++)
			if ((nd->tile->args[j] = map[nd->tile->args[j]]) < 0)
				AICM_BUG("ir_compact drops an operand of tiled '%%%s'", nd->name);
	}
	g->nnodes = m;
	for (int i = 0; i < g->nret; i++)
		if ((g->ret[i] = map[g->ret[i]]) < 0)
			AICM_BUG("ir_compact drops a returned value");
	names_rebuild(g);
}

/* ---- a kernel on its own -------------------------------------------- */

static const char *
copy_name(Graph *sg, const char *s)
{
	return arena_strndup(&sg->arena, s, strlen(s));
}

/* Contract in ir.h.  Names, types, attributes and places are g's, so that
 * a message about the copy points into the user's file. */
Graph *
ir_extract_kernel(const Graph *g, const Kernel *k, const Kernel *cand)
{
	Graph *sg = ir_graph_new();
	int *map = xmalloc(sizeof(int) * (size_t)(k->last + 1)), kn;

	for (int i = 0; i <= k->last; i++)
		map[i] = -1;
	for (int i = k->first; i <= k->last; i++)
		for (int j = 0; j < g->nodes[i].nin; j++) {
			int v = g->nodes[i].in[j];
			const Node *src = &g->nodes[v];
			int s;

			if (v >= k->first || map[v] >= 0)
				continue;
			s = ir_add_node(sg, src->op == OP_CONST ? OP_CONST : OP_INPUT,
			    copy_name(sg, src->name));
			sg->nodes[s].type = src->type;
			sg->nodes[s].loc = src->loc;
			if (src->op == OP_CONST) {
				attrs_copy(sg, &sg->nodes[s].at, &src->at);
				sg->nodes[s].attrloc = src->attrloc;   /* in g's arena */
			}
			map[v] = s;
		}
	kn = ir_add_kernel(sg, copy_name(sg, cand->name), cand->kind);
	for (int i = k->first; i <= k->last; i++) {
		const Node *n = &g->nodes[i];
		int s = ir_add_node(sg, n->op, copy_name(sg, n->name));
		Node *o = &sg->nodes[s];

		o->type = n->type;
		attrs_copy(sg, &o->at, &n->at);
		ir_set_nin(sg, s, n->nin);
		for (int j = 0; j < n->nin; j++)
			o->in[j] = map[n->in[j]];
		o->loc = n->loc;
		o->oploc = n->oploc;
		o->kernel = kn;
		map[i] = s;
	}
	sg->kernels[kn].first = map[k->first];
	sg->kernels[kn].last = map[k->last];
	sg->kernels[kn].kset = cand->kset;
	memcpy(sg->kernels[kn].kattr, cand->kattr, sizeof cand->kattr);
	sg->kernels[kn].loc = cand->loc;
	sg->kernels[kn].nameloc = cand->nameloc;
	free(map);
	return sg;
}

/* ---- outputs and users ----------------------------------------------- */

static int
default_outputs(const Graph *g, int *out)
{
	char *used = xcalloc((size_t)g->nnodes + 1, 1);
	int n = 0;

	for (int i = 0; i < g->nnodes; i++) {
		for (int j = 0; j < g->nodes[i].nin; j++)
			used[g->nodes[i].in[j]] = 1;
		for (int j = 0; g->nodes[i].tile && j < g->nodes[i].tile->nargs; j++)
			used[g->nodes[i].tile->args[j]] = 1;   /* a tiled kernel's operands */
	}
	for (int i = 0; i < g->nnodes; i++)
		if (!used[i] && ir_ops[g->nodes[i].op].cls != OC_SOURCE)
			out[n++] = i;
	free(used);
	return n;
}

bool
ir_has_untyped(const Graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].type.rank < 0)
			return true;
	return false;
}

bool
ir_has_unlowered(const Graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		if (ir_ops[g->nodes[i].op].cls != OC_SOURCE && g->nodes[i].op != OP_TILED)
			return true;
	return false;
}

bool
ir_has_tiled(const Graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OP_TILED)
			return true;
	return false;
}

int
ir_outputs(const Graph *g, int **out)
{
	int *o = xmalloc(sizeof(int) * (size_t)(g->nnodes + g->nret + 1));

	*out = o;
	if (g->ret) {
		memcpy(o, g->ret, sizeof(int) * (size_t)g->nret);
		return g->nret;
	}
	return default_outputs(g, o);
}

bool
ir_return_is_default(const Graph *g)
{
	int *o, n;
	bool same;

	if (!g->ret)
		return true;
	o = xmalloc(sizeof(int) * (size_t)(g->nnodes + 1));
	n = default_outputs(g, o);
	same = n == g->nret && memcmp(o, g->ret, sizeof(int) * (size_t)n) == 0;
	free(o);
	return same;
}

void
ir_users(const Graph *g, Users *u)
{
	int n = g->nnodes, m = 0;
	int *s;

	/* One block for both arrays (huge pages when large): the operand
	 * count is known before anything is written. */
	for (int i = 0; i < n; i++)
		m += g->nodes[i].nin;
	s = u->start = xmalloc_huge(sizeof(int) * ((size_t)n + 2 + (size_t)m + 1));
	u->user = s + n + 2;
	memset(s, 0, sizeof(int) * ((size_t)n + 2));
	/* Counts two places up, summed: s[x + 1] is where x's users begin;
	 * placing them advances it to where they end, which is where x + 1's
	 * begin, so no second cursor array is needed. */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < g->nodes[i].nin; j++)
			s[g->nodes[i].in[j] + 2]++;
	for (int i = 0; i <= n; i++)
		s[i + 1] += s[i];
	for (int i = 0; i < n; i++)
		for (int j = 0; j < g->nodes[i].nin; j++)
			u->user[s[g->nodes[i].in[j] + 1]++] = i;
}

void
ir_users_free(Users *u)
{
	free(u->start);              /* user lives in the same block */
	u->start = u->user = NULL;
}

int64_t
ir_node_flops(const Graph *g, int i)
{
	const Node *n = &g->nodes[i];

	if (n->type.rank < 0)
		return 0;
	switch (ir_ops[n->op].flops) {
	case FL_NONE:
		return 0;
	case FL_PER_OUT:
		return ir_type_numel(&n->type);
	case FL_PER_IN:
		return ir_type_numel(&g->nodes[n->in[0]].type);
	case FL_MATMUL: {
		const Type *a = &g->nodes[n->in[0]].type;
		int64_t f;

		/* 2*M*N*K per batch = 2 * numel(out) * K; dimensions of up to
		 * 2^30 can overflow, and then the count saturates. */
		if (__builtin_mul_overflow(ir_type_numel(&n->type), a->dim[a->rank - 1], &f) ||
		    __builtin_mul_overflow(f, 2, &f) || ir_type_numel(&n->type) < 0)
			return INT64_MAX;
		return f;
	}
	case FL_CONV: {
		/* 2 * numel(out) * (C/groups * KH * KW): w is (F, C/groups, KH, KW) */
		const Type *w = &g->nodes[n->in[1]].type;
		int64_t f = ir_type_numel(&n->type);

		if (w->rank != 4 || f < 0 || __builtin_mul_overflow(f, 2 * w->dim[1], &f) ||
		    __builtin_mul_overflow(f, w->dim[2] * w->dim[3], &f))
			return w->rank != 4 ? 0 : INT64_MAX;
		return f;
	}
	case FL_POOL: {
		IntTuple k = ir_attr_ints(&n->at, ATTR_KERNEL);
		int64_t f = ir_type_numel(&n->type);

		for (int j = 0; j < k.n; j++)
			if (f < 0 || __builtin_mul_overflow(f, k.v[j], &f))
				return INT64_MAX;
		return f;
	}
	}
	return 0;
}

const char *
ir_data_path_error(const char *path)
{
	if (!path[0])
		return "is empty; expected a .npy path relative to the data directory";
	if (path[0] == '/')
		return "is an absolute path; expected a path relative to the data directory";
	for (const char *p = path; *p; ) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return "has a '..' component; expected a path inside the data directory";
		p += n;
		if (*p)
			p++;
	}
	return NULL;
}
