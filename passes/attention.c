/*
 * attention.c: the matcher of the attention pattern (attention.h, DESIGN
 * section 13).
 *
 * The pattern is read backwards from its last op, out = matmul(p, v): p
 * must be the softmax along the last axis in the form every stable softmax
 * takes here (max with keepdims, sub, exp, sum with keepdims, div; the
 * form aicm-import writes for ONNX Softmax too), of scores t that may be
 * masked (an add of a tensor that broadcasts to the scores, or a where of
 * a condition choosing the scores or a scalar constant), scaled (a mul or
 * div by a scalar constant) and come from matmul(q', kt), where q' may be
 * Q scaled (PyTorch's exported layer divides Q before the matmul) and kt
 * is transpose(K) of the last two axes (absorbed) or a given tensor.  Q,
 * K and V have one batch shape (the leading dims, equal): broadcasting in
 * the batch dims is not the pattern.  Constants must carry their value
 * (value=), as the program folds them in; a const whose value comes at run
 * time (random, or a file) is a tensor, not a scale.
 *
 * Q, K (or Kᵀ), V and the mask may be views of the kernel (DESIGN section
 * 13): layout ops that fuse joined as views, chains from memory down to
 * the operand, which the program loads through their strides.  A K whose
 * view chain ends in Kᵀ (say transpose perm=(1,2,0) of (N, h, d)) is Kᵀ
 * given; only a transpose of the last two axes right at the matmul is
 * absorbed as the pattern's own (its operand's rows loaded as [BN, d] and
 * transposed in the tile), whatever views lie above it.
 */
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "diag.h"

/* c's value when it is a scalar const whose value is known now. */
static bool
known_scalar(const Graph *g, int c, double *v)
{
	const Node *n = &g->nodes[c];

	if (n->op != OP_CONST || n->type.rank < 0 || ir_type_numel(&n->type) != 1)
		return false;
	if (n->at.set & (1u << ATTR_VALUE)) {
		*v = n->at.value;
		return true;
	}
	if (n->at.nvalues == 1 && n->at.values) {
		*v = n->at.values[0];
		return true;
	}
	return false;
}

/* Whether node s scales x (x * c, c * x, x / c) by a known scalar: fills
 * sc and *x, and s keeps x's shape. */
static bool
scale_of(const Graph *g, int s, AttnScale *sc, int *x)
{
	const Node *n = &g->nodes[s];
	double c;

	if (n->op == OP_MUL && known_scalar(g, n->in[1], &c))
		*x = n->in[0];
	else if (n->op == OP_MUL && known_scalar(g, n->in[0], &c))
		*x = n->in[1];
	else if (n->op == OP_DIV && known_scalar(g, n->in[1], &c))
		*x = n->in[0];
	else
		return false;
	if (!ir_same_dims(&n->type, &g->nodes[*x].type) || n->type.dt != g->nodes[*x].type.dt)
		return false;
	sc->node = s;
	sc->op = n->op;
	sc->c = c;
	return true;
}

/* Whether r is a max or sum of x along the last axis with keepdims. */
static bool
row_reduce(const Graph *g, int r, OpId op, int x)
{
	const Node *n = &g->nodes[r];

	return n->op == op && n->in[0] == x && n->at.keepdims && ir_reduces_last_axis(g, r);
}

/* Whether t, a value of rank <= R, broadcasts to scores (R dims). */
static bool
broadcasts_to(const Type *t, const Type *s)
{
	if (t->rank < 0 || t->rank > s->rank)
		return false;
	for (int k = 0; k < t->rank; k++) {
		int64_t a = t->dim[k], b = s->dim[k + s->rank - t->rank];

		if (a != b && a != 1)
			return false;
	}
	return true;
}

/* Whether the last two of perm swap and the others stay (perm absent: the
 * reversal, the same for rank 2). */
static bool
swaps_last_two(const Node *n, int r)
{
	IntTuple p = ir_attr_ints(&n->at, ATTR_PERM);

	if (p.n == 0)
		return r == 2;
	if (p.n != r)
		return false;
	for (int k = 0; k < r - 2; k++)
		if (p.v[k] != k)
			return false;
	return p.v[r - 2] == r - 1 && p.v[r - 1] == r - 2;
}

/* The scores from t down: [scale] matmul(q', kt). */
static bool
match_scores(const Graph *g, int t, AttnMatch *a)
{
	int s0 = t, x;
	const Node *mm;

	a->ss.node = a->qs.node = a->tr = -1;
	if (g->nodes[t].op != OP_MATMUL) {
		if (!scale_of(g, t, &a->ss, &x) || g->nodes[x].op != OP_MATMUL)
			return false;
		s0 = x;
	}
	mm = &g->nodes[s0];
	a->mm = s0;
	a->q = mm->in[0];
	if (scale_of(g, mm->in[0], &a->qs, &x))
		a->q = x;
	a->k = mm->in[1];
	a->k_given_t = true;
	if (g->nodes[a->k].op == OP_TRANSPOSE && g->nodes[a->k].type.rank >= 2 &&
	    swaps_last_two(&g->nodes[a->k], g->nodes[a->k].type.rank)) {
		a->tr = a->k;
		a->k = g->nodes[a->tr].in[0];
		a->k_given_t = false;
	}
	return true;
}

static int
cmp_int(const void *x, const void *y)
{
	return *(const int *)x - *(const int *)y;
}

bool
attn_match(const Graph *g, int root, AttnMatch *a)
{
	const Node *r = &g->nodes[root], *p, *x;
	const Type *tq, *tk, *tv, *ts;
	int t, R;

	memset(a, 0, sizeof *a);
	a->root = root;
	a->mask_node = a->mask_val = -1;
	if (r->op != OP_MATMUL || r->type.rank < 2)
		return false;
	a->v = r->in[1];
	a->div = r->in[0];
	p = &g->nodes[a->div];
	if (p->op != OP_DIV)
		return false;
	a->ex = p->in[0];
	a->sum = p->in[1];
	if (g->nodes[a->ex].op != OP_EXP || !row_reduce(g, a->sum, OP_SUM, a->ex))
		return false;
	a->sub = g->nodes[a->ex].in[0];
	x = &g->nodes[a->sub];
	if (x->op != OP_SUB)
		return false;
	t = x->in[0];
	a->mx = x->in[1];
	if (!row_reduce(g, a->mx, OP_MAX, t))
		return false;
	/* the mask, if any, then the scores */
	{
		const Node *m = &g->nodes[t];
		double c;

		if (m->op == OP_ADD && match_scores(g, m->in[0], a)) {
			a->mask = AM_ADD;
			a->mask_val = m->in[1];
		} else if (m->op == OP_ADD && match_scores(g, m->in[1], a)) {
			a->mask = AM_ADD;
			a->mask_val = m->in[0];
		} else if (m->op == OP_WHERE && known_scalar(g, m->in[2], &c) &&
		    match_scores(g, m->in[1], a)) {
			a->mask = AM_WHERE;
			a->mask_val = m->in[0];
			a->fill = c;
		} else if (m->op == OP_WHERE && known_scalar(g, m->in[1], &c) &&
		    match_scores(g, m->in[2], a)) {
			a->mask = AM_WHERE;
			a->mask_val = m->in[0];
			a->fill = c;
			a->fill_first = true;
		} else if (!match_scores(g, t, a)) {
			return false;
		}
		if (a->mask != AM_NONE)
			a->mask_node = t;
	}
	/* shapes and types: Q (.., M, d), K (.., N, d) or Kᵀ (.., d, N),
	 * V (.., N, dv), one batch shape, one float type */
	tq = &g->nodes[a->q].type;
	tk = &g->nodes[a->k].type;
	tv = &g->nodes[a->v].type;
	ts = &g->nodes[a->mm].type;
	R = tq->rank;
	if (R < 2 || R > 4 || tk->rank != R || tv->rank != R || ts->rank != R ||
	    r->type.rank != R)
		return false;
	a->rank = R;
	a->dt = r->type.dt;
	if (a->dt != DT_F32 && a->dt != DT_F64)
		return false;
	if (tq->dt != a->dt || tk->dt != a->dt || tv->dt != a->dt || ts->dt != a->dt)
		return false;
	a->batch = 1;
	for (int k = 0; k < R - 2; k++) {
		if (tk->dim[k] != tq->dim[k] || tv->dim[k] != tq->dim[k])
			return false;
		a->batch *= tq->dim[k];
	}
	a->m = tq->dim[R - 2];
	a->d = tq->dim[R - 1];
	a->n = a->k_given_t ? tk->dim[R - 1] : tk->dim[R - 2];
	if ((a->k_given_t ? tk->dim[R - 2] : tk->dim[R - 1]) != a->d)
		return false;
	if (tv->dim[R - 2] != a->n)
		return false;
	a->dv = tv->dim[R - 1];
	if (a->m < 1 || a->n < 1 || a->d < 1 || a->dv < 1)
		return false;
	/* every score-shaped value keeps the scores' shape: a mask or scale
	 * that broadcast them up would be another computation */
	{
		int sv[] = {a->ss.node, a->mask_node, a->sub, a->ex, a->div};

		for (size_t j = 0; j < sizeof sv / sizeof sv[0]; j++)
			if (sv[j] >= 0 && (!ir_same_dims(&g->nodes[sv[j]].type, ts) ||
			    g->nodes[sv[j]].type.dt != a->dt))
				return false;
	}
	if (a->mask == AM_ADD && (!broadcasts_to(&g->nodes[a->mask_val].type, ts) ||
	    g->nodes[a->mask_val].type.dt != a->dt))
		return false;
	if (a->mask == AM_WHERE && (!broadcasts_to(&g->nodes[a->mask_val].type, ts) ||
	    g->nodes[a->mask_val].type.dt != DT_BOOL))
		return false;
	/* the members: the ops above, distinct from the operands */
	{
		int mem[] = {a->tr, a->qs.node, a->mm, a->ss.node, a->mask_node, a->mx, a->sub,
		    a->ex, a->sum, a->div, a->root};

		a->nnodes = 0;
		for (size_t j = 0; j < sizeof mem / sizeof mem[0]; j++)
			if (mem[j] >= 0)
				a->nodes[a->nnodes++] = mem[j];
		qsort(a->nodes, (size_t)a->nnodes, sizeof(int), cmp_int);
		for (int j = 1; j < a->nnodes; j++)
			if (a->nodes[j] == a->nodes[j - 1])
				return false;
		for (int j = 0; j < a->nnodes; j++)
			if (a->nodes[j] == a->q || a->nodes[j] == a->k || a->nodes[j] == a->v ||
			    a->nodes[j] == a->mask_val)
				return false;
	}
	return true;
}

/* Whether node x of range first..last is a member of a. */
static bool
member(const AttnMatch *a, int x)
{
	for (int j = 0; j < a->nnodes; j++)
		if (a->nodes[j] == x)
			return true;
	return false;
}

bool
attn_match_range(const Graph *g, int first, int last, AttnMatch *a, const char **why)
{
	bool *chain;
	int bad = 0;

	if (!attn_match(g, last, a)) {
		*why = "it is not softmax(matmul(Q, K') [scaled] [masked]) @ V along the last axis "
		    "with Q, K and V of one batch shape and one float type (docs/passes.md, "
		    "the attention kind)";
		return false;
	}
	a->first = first;
	a->last = last;
	if (a->nodes[0] < first) {
		*why = "it lacks ops of the attention pattern";
		return false;
	}
	/* the nodes that are no members: views, each on the chain of Q, K, V
	 * or the mask (walked up from the operands, latest first) */
	chain = xcalloc((size_t)(last - first + 1), sizeof *chain);
	{
		int ops[] = {a->q, a->k, a->v, a->mask_val};

		for (size_t j = 0; j < sizeof ops / sizeof ops[0]; j++)
			if (ops[j] >= first && ops[j] <= last)
				chain[ops[j] - first] = true;
	}
	for (int i = last; i >= first; i--) {
		if (member(a, i))
			continue;
		if (!chain[i - first] || !ir_is_view_op(g, i)) {
			bad = 1;
			break;
		}
		if (g->nodes[i].in[0] >= first)
			chain[g->nodes[i].in[0] - first] = true;
	}
	free(chain);
	if (bad) {
		*why = "it holds ops besides the attention pattern's and the views (layout ops) "
		    "that its Q, K, V and mask are read through";
		return false;
	}
	return true;
}

int
attn_view_base(const Graph *g, const AttnMatch *a, int x, IrView *v)
{
	const char *why;
	int base = x;

	if (x < a->first || x > a->last || member(a, x)) {
		ir_view_dense(&g->nodes[x].type, v);
		return x;
	}
	base = attn_view_base(g, a, g->nodes[x].in[0], v);
	if (!ir_view_apply(g, x, v, &why))
		AICM_BUG("attention operand '%%%s' is no strided view: %s", g->nodes[x].name, why);
	return base;
}
