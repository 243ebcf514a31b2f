/*
 * fuse.c: partition the compute ops into kernels (DESIGN §6).
 *
 * The algorithm is the one DESIGN spells out so that every implementation
 * gives the same answer: compute ops are visited in reverse definition
 * order; one not yet in a kernel becomes the root of a new one, and the
 * kernel then grows breadth-first from its root: each op, in the order it
 * joined, offers its producers in operand order, and a producer joins when
 * every rule of the table in docs/passes.md allows it.  A producer refused
 * because one of its consumers is not in yet is offered again by that
 * consumer when it joins, so the order of joins (which max-ops and the
 * matmul-first rule see) is fixed by the graph alone.
 *
 * Every rule but "all consumers inside" only gets stricter as a kernel
 * grows, and that one is settled by the last consumer to join; so an edge
 * left unfused fails some rule on the final partition too.  That lets
 * explain (and the report's tally) re-ask the same check() afterwards, with
 * the words, instead of logging the search; the AICM_BUG there guards the
 * argument.
 *
 * A layout op joins as a view (DESIGN §13): never computed, read through
 * by its consumers' loads; view_fits asks src/ir/view.c whether the chain
 * it would extend is still a strided view of memory, and whether every
 * consumer's loads can take one.
 *
 * Kernels written in the input are kept as they are and never grow.  New
 * kernels are numbered in printed order with names no input kernel has,
 * and the node array is reordered so each kernel's ops sit together, in
 * definition order, where its root was.
 */
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "pass.h"

typedef enum Rule {
	R_OK,
	R_F1,        /* a consumer outside the kernel */
	R_F2,        /* a source */
	R_F3,        /* not the iteration shape */
	R_F4A,       /* a matmul takes no producers */
	R_F4B,       /* nothing follows a reduction (unless row-fusion) */
	R_F4C,       /* one matmul per kernel */
	R_F4D,       /* layout ops run alone */
	R_F4E,       /* the matmul is the kernel's first op */
	R_F4F,       /* no matmul in a row_reduction */
	R_F5,        /* max-ops */
	R_F6,        /* matmul-reduce is off */
	R_F7,        /* a graph output */
	R_F8,        /* a kernel written in the input */
	R_F4G,       /* conv2d and the pools run alone */
	R_F4H,       /* copy ops run alone */
	R_F4I,       /* an attention kernel is its pattern only */
	R_COUNT
} Rule;

static const char *const rule_id[R_COUNT] = {
	"", "F1", "F2", "F3", "F4a", "F4b", "F4c", "F4d", "F4e", "F4f", "F5", "F6", "F7", "F8",
	"F4g", "F4h", "F4i",
};

/* How a producer joins: as the iteration shape, as a row reduction
 * (exempt from F3: its result is the reduced rows), or as an elementwise
 * op over the reduced rows (a statistic, exempt from F3 too). */
typedef enum Rel { REL_NONE, REL_ROW, REL_STAT } Rel;

typedef struct Part {
	int root;
	int nops;                    /* ops that compute: views not counted */
	int mm;                      /* its matmul, or -1 */
	int conv;                    /* its conv2d (conv_epilogue), or -1 */
	int badop, badin;            /* the first op with an operand (in[badin]) that a
	                              * conv_epilogue cannot load (conv_loadable), or -1 */
	int dtmix;                   /* the first op not of the root's element type, or
	                              * with an operand not of it (conv_rule), or -1 */
	int minidx;                  /* its lowest node index */
	int nrow;                    /* reductions that joined under row-fusion */
	int nstat;                   /* ops over the reduced rows that joined (statistic) */
	int nview;                   /* layout ops that joined as views */
	const Type *iter;            /* the iteration shape (a node's type) */
	int given;                   /* the input's kernel index, or -1 */
	bool attn;                   /* an attention kernel (attention.c's match) */
	KernelKind kind;
	const char *name;
} Part;

typedef struct Fuse {
	Graph *g;
	Users u;
	int *nuse;                   /* distinct consumers of each node */
	int *part;                   /* each node's partition; -1: none (yet) */
	int *mark, *cnt;             /* cnt[i] consumers of i joined partition mark[i] */
	int *allin;                  /* the partition of all of i's consumers, or -1 */
	int *isret;                  /* named by 'return' */
	int *view;                   /* joined its kernel as a view (DESIGN §13) */
	Part *parts;
	int nparts, capparts;
	bool final;                  /* partition done: check() reads allin */
	bool row, mmred, attn;
	int64_t maxops;
} Fuse;

static bool
is(const Graph *g, int i, OpClass c)
{
	return ir_ops[g->nodes[i].op].cls == c;
}

static int
new_part(Fuse *f, int root, int given)
{
	Part *k;

	if (f->nparts == f->capparts) {
		f->capparts = f->capparts ? 2 * f->capparts : 16;
		f->parts = xrealloc(f->parts, sizeof *f->parts * (size_t)f->capparts);
	}
	k = &f->parts[f->nparts];
	memset(k, 0, sizeof *k);
	k->root = root;
	k->mm = -1;
	k->conv = k->badop = k->dtmix = -1;
	k->minidx = root;
	k->given = given;
	return f->nparts++;
}

/* Whether operand j of n repeats an earlier one (add(%x, %x), where(%c,
 * %a, %a)): a consumer counts once per producer. */
static bool
repeated(const Node *n, int j)
{
	for (int q = 0; q < j; q++)
		if (n->in[q] == n->in[j])
			return true;
	return false;
}

/*
 * Whether a value of type t can be an operand of a conv_epilogue over
 * conv2d output y (N, F, OH, OW): the program loads it through the view
 * (N or 1, F or 1, OH*OW or 1) (lower-tiled's conv_operand), so under
 * numpy broadcasting its image and filter dims are each whole or 1, and
 * its two spatial dims are both whole or both 1.
 */
static bool
conv_loadable(const Type *t, const Type *y)
{
	int64_t d[4];

	if (t->rank > 4)
		return false;
	for (int k = 0; k < 4; k++) {
		int j = k - (4 - t->rank);

		d[k] = j >= 0 ? t->dim[j] : 1;
		if (d[k] != 1 && d[k] != y->dim[k])
			return false;
	}
	return (d[2] == 1) == (d[3] == 1) || y->dim[2] == 1 || y->dim[3] == 1;
}

/* Whether node i and its operands are all of element type dt. */
static bool
same_dt(const Graph *g, int i, DType dt)
{
	const Node *n = &g->nodes[i];

	for (int j = 0; j < n->nin; j++)
		if (g->nodes[n->in[j]].type.dt != dt)
			return false;
	return n->type.dt == dt;
}

/* Puts node p into partition k and counts it as a consumer of its operands;
 * notes what the conv_epilogue rules ask of it (conv_rule).  A view is no
 * op of the kernel's: it counts toward neither max-ops nor the
 * matmul-first rule. */
static void
join(Fuse *f, int k, int p, Rel relaxed, bool view)
{
	const Node *n = &f->g->nodes[p];
	Part *K = &f->parts[k];

	f->part[p] = k;
	f->view[p] = view;
	if (!view)
		K->nops++;
	else
		K->nview++;
	if (!view && p < K->minidx)
		K->minidx = p;
	if (n->op == OP_MATMUL)
		K->mm = p;
	if (n->op == OP_CONV2D)
		K->conv = p;
	else if (K->dtmix < 0 && !same_dt(f->g, p, f->g->nodes[K->root].type.dt))
		K->dtmix = p;
	for (int j = 0; n->op != OP_CONV2D && K->iter && K->iter->rank == 4 && K->badop < 0 &&
	    j < n->nin; j++)
		if (!conv_loadable(&f->g->nodes[n->in[j]].type, K->iter)) {
			K->badop = p;
			K->badin = j;
		}
	if (relaxed == REL_ROW)
		K->nrow++;
	else if (relaxed == REL_STAT)
		K->nstat++;
	for (int j = 0; j < n->nin; j++) {
		int q = n->in[j];

		if (repeated(n, j))
			continue;
		if (f->mark[q] != k) {
			f->mark[q] = k;
			f->cnt[q] = 0;
		}
		f->cnt[q]++;
	}
}

#define WHY(...) (why ? snprintf(why, nwhy, __VA_ARGS__) : 0)

/*
 * The conv_epilogue rules (F4g), asked when conv2d p would join kernel k
 * or an elementwise p would join a kernel that holds a conv2d: the
 * kernel's root is elementwise (no reduction), its ops compute in the
 * conv's element type, and every operand of its ops (with p's) loads as
 * conv_loadable says.  R_OK, or the rule with the reason.
 */
static Rule
conv_rule(const Fuse *f, int k, int p, char *why, size_t nwhy)
{
	const Graph *g = f->g;
	const Part *K = &f->parts[k];
	int conv = K->conv >= 0 ? K->conv : p, bad = K->badop, badin = K->badin;
	const Node *V = &g->nodes[conv], *R = &g->nodes[K->root], *P = &g->nodes[p];
	char s1[IR_TYPE_STR], s2[IR_TYPE_STR];

	if (P->op == OP_CONV2D && (K->conv >= 0 || K->mm >= 0)) {
		WHY("the kernel already holds %s %%%s; a kernel holds at most one matmul or "
		    "conv2d", K->mm >= 0 ? "matmul" : "conv2d",
		    g->nodes[K->mm >= 0 ? K->mm : K->conv].name);
		return R_F4C;
	}
	if (K->nview > 0) {
		WHY("the kernel reads an operand through a view (a layout op folded into its "
		    "loads); a conv_epilogue loads its operands whole, through no view");
		return R_F4G;
	}
	if (K->nrow > 0 || K->nstat > 0) {
		WHY("the kernel is a row_reduction (row-fusion joined its reductions); a conv2d "
		    "heads a conv_epilogue, which holds elementwise ops only");
		return R_F4G;
	}
	if (!ir_is_elementwise(R->op)) {
		WHY("the kernel's root %%%s is a '%s'; a conv2d heads a conv_epilogue, which "
		    "holds elementwise ops only", R->name, ir_ops[R->op].name);
		return R_F4G;
	}
	if (V->type.dt != R->type.dt || K->dtmix >= 0 ||
	    (p != conv && !same_dt(g, p, R->type.dt))) {
		const Node *n = K->dtmix >= 0 ? &g->nodes[K->dtmix] : p != conv ? P : R;

		WHY("%%%s or an operand of it is not %s, conv2d %%%s's element type; a "
		    "conv_epilogue computes in its conv2d's element type", n->name,
		    ir_dtype_name(V->type.dt), V->name);
		return R_F4G;
	}
	for (int j = 0; bad < 0 && p != conv && j < P->nin; j++)
		if (!conv_loadable(&g->nodes[P->in[j]].type, K->iter)) {
			bad = p;
			badin = j;
		}
	if (bad >= 0) {
		const Node *x = &g->nodes[g->nodes[bad].in[badin]];

		WHY("%%%s is %s, which a conv_epilogue over conv2d %%%s %s cannot load: its "
		    "dims must broadcast as (N or 1, F or 1, OH and OW or 1 and 1)", x->name,
		    ir_shape_str(&x->type, s1), V->name, ir_shape_str(&V->type, s2));
		return R_F4G;
	}
	return R_OK;
}

/*
 * Views (DESIGN §13, docs/passes.md "Views"): whether layout op x, whose
 * result is seen through *v, can be read through by every consumer of x in
 * partition k: a view consumer composes (its own op applied to v, then its
 * consumers asked), a computing consumer must load its operands (an
 * elementwise op, a reduction, a matmul with operands of rank 2 or more
 * and no matrix dim stretched).  The chain is checked whole every time a
 * view joins, as the view below a chain changes what the chain reads.
 */
static bool
view_reads(const Fuse *f, int k, int x, const IrView *v, char *why, size_t nwhy)
{
	const Graph *g = f->g;
	const Node *X = &g->nodes[x];
	const char *w;

	for (int e = f->u.start[x]; e < f->u.start[x + 1]; e++) {
		int u = f->u.user[e];
		const Node *U = &g->nodes[u];

		if (f->part[u] != k)
			continue;    /* (F1 said all are in; explain re-asks on the end state) */
		if (f->view[u]) {
			IrView c = *v;

			if (!ir_view_apply(g, u, &c, &w)) {
				WHY("%%%s ('%s') cannot read through the view of %%%s ('%s'): %s",
				    U->name, ir_ops[U->op].name, X->name, ir_ops[X->op].name, w);
				return false;
			}
			if (!view_reads(f, k, u, &c, why, nwhy))
				return false;
			continue;
		}
		if (f->parts[k].attn && U->op == OP_TRANSPOSE)
			continue;    /* attention's absorbed transpose of K loads K's rows */
		if (U->op == OP_MATMUL) {
			const Type *ta = &g->nodes[U->in[0]].type, *tb = &g->nodes[U->in[1]].type;

			if (ta->rank < 2 || tb->rank < 2) {
				WHY("%%%s is a layout op ('%s'); matmul %%%s has a 1-D operand, loaded "
				    "whole, so no view folds into it", X->name, ir_ops[X->op].name, U->name);
				return false;
			}
			for (int d = v->rank - 2; d < v->rank; d++)
				if (d >= 0 && v->stride[d] == 0 && v->dim[d] != 1) {
					WHY("%%%s is a layout op ('%s') that stretches a matrix dim of "
					    "matmul %%%s's operand; its tiles would load one element "
					    "as a whole tile, so it runs alone", X->name, ir_ops[X->op].name,
					    U->name);
					return false;
				}
			continue;
		}
		if (ir_is_elementwise(U->op) || ir_ops[U->op].cls == OC_REDUCTION)
			continue;
		WHY("%%%s is a layout op ('%s'); it folds as a view only into the loads of "
		    "elementwise ops, reductions and matmuls, and %%%s is '%s'", X->name,
		    ir_ops[X->op].name, U->name, ir_ops[U->op].name);
		return false;
	}
	return true;
}

/* Whether layout op p may join partition k as a view: the chain from its
 * operand's memory through it down to the kernel's loads is a strided
 * view (view.c), and its consumers can read through it. */
static bool
view_fits(const Fuse *f, int k, int p, char *why, size_t nwhy)
{
	const Graph *g = f->g;
	IrView v;
	const char *w;

	ir_view_dense(&g->nodes[g->nodes[p].in[0]].type, &v);
	if (!ir_view_apply(g, p, &v, &w)) {
		WHY("%%%s ('%s') cannot fold as a view of %%%s: %s", g->nodes[p].name,
		    ir_ops[g->nodes[p].op].name, g->nodes[g->nodes[p].in[0]].name, w);
		return false;
	}
	return view_reads(f, k, p, &v, why, nwhy);
}

/*
 * Whether producer p may join partition k, which holds its consumer c;
 * R_OK or the first rule that forbids it, in the order of the table in
 * docs/passes.md.  With why, also the reason in words.  *relaxed: p joins
 * as a row reduction or a row statistic, exempt from the shape rule.
 */
static Rule
check(const Fuse *f, int k, int c, int p, Rel *relaxed, bool *view, char *why, size_t nwhy)
{
	const Graph *g = f->g;
	const Node *P = &g->nodes[p], *C = &g->nodes[c];
	const Part *K = &f->parts[k];
	const Node *R = &g->nodes[K->root];
	char s1[IR_TYPE_STR], s2[IR_TYPE_STR];
	bool consumers_in;

	*relaxed = REL_NONE;
	*view = false;
	if (K->given >= 0 || (f->part[p] >= 0 && f->parts[f->part[p]].given >= 0)) {
		const Part *G = K->given >= 0 ? K : &f->parts[f->part[p]];

		WHY("%%%s is in kernel @%s, written in the input; fuse keeps such kernels "
		    "as they are", K->given >= 0 ? C->name : P->name, G->name);
		return R_F8;
	}
	if (is(g, p, OC_SOURCE)) {
		WHY("%%%s is a source ('%s'); its value lives in memory anyway", P->name,
		    ir_ops[P->op].name);
		return R_F2;
	}
	if (f->isret[p]) {
		WHY("%%%s is a graph output ('return' names it); a kernel writes only its root%s",
		    P->name, ir_is_view_op(g, p) ? " (a layout op that is an output is stored, not "
		    "folded as a view)" : "");
		return R_F7;
	}
	consumers_in = f->final ? f->allin[p] == k : f->mark[p] == k && f->cnt[p] == f->nuse[p];
	if (!consumers_in) {
		if (why) {
			int m = snprintf(why, nwhy, "%%%s has %d consumers (", P->name, f->nuse[p]);
			int shown = 0;

			for (int u = f->u.start[p]; u < f->u.start[p + 1]; u++) {
				if (u > f->u.start[p] && f->u.user[u] == f->u.user[u - 1])
					continue;
				if (shown == 4) {
					m += snprintf(why + m, nwhy - (size_t)m, ", ...");
					break;
				}
				m += snprintf(why + m, nwhy - (size_t)m, "%s%%%s", shown ? ", " : "",
				    g->nodes[f->u.user[u]].name);
				shown++;
			}
			snprintf(why + m, nwhy - (size_t)m, "); fusing would duplicate computation");
		}
		return R_F1;
	}
	if (K->attn && ir_is_view_op(g, p)) {
		/* a layout op above Q, K, V or the mask joins as a view
		 * (attn_views) when its chain is a strided view */
		if (!view_fits(f, k, p, why, nwhy))
			return R_F4D;
		*view = true;
		return R_OK;
	}
	if (f->view[c]) {
		if (!ir_is_view_op(g, p)) {
			WHY("%%%s is a view (a layout op folded into its consumers' loads); its "
			    "operand %%%s is read from memory, not computed in the kernel", C->name,
			    P->name);
			return R_F4D;
		}
		if (!view_fits(f, k, p, why, nwhy))
			return R_F4D;
		*view = true;
		return R_OK;
	}
	if (K->attn || (f->part[p] >= 0 && f->parts[f->part[p]].attn)) {
		const Part *A = K->attn ? K : &f->parts[f->part[p]];

		WHY("%%%s is %s attention kernel of %%%s; an attention kernel holds its pattern "
		    "only (DESIGN section 13): its Q, K, V and mask come from memory (or through "
		    "views of it) and its output goes there", K->attn ? C->name : P->name,
		    K->attn ? "in the" : "the root of the", g->nodes[A->root].name);
		return R_F4I;
	}
	if (ir_is_view_op(g, p) && !is(g, c, OC_LAYOUT) && !is(g, c, OC_COPY)) {
		if (!view_fits(f, k, p, why, nwhy))
			return R_F4D;
		if (K->conv >= 0) {
			/* conv_operand loads whole blocks of an operand's own
			 * elements: no strides of a view */
			WHY("%%%s is a layout op ('%s') and the kernel holds conv2d %%%s; a "
			    "conv_epilogue loads its operands whole, through no view", P->name,
			    ir_ops[P->op].name, g->nodes[K->conv].name);
			return R_F4G;
		}
		*view = true;
		return R_OK;
	}
	if (C->op == OP_MATMUL) {
		WHY("%%%s is a matmul; a matmul takes no producers (it only heads a kernel)",
		    C->name);
		return R_F4A;
	}
	if (is(g, p, OC_LAYOUT) || is(g, c, OC_LAYOUT)) {
		const Node *L = is(g, p, OC_LAYOUT) ? P : C;

		if (L == C && f->isret[c])
			WHY("%%%s is a layout op ('%s') and a graph output: it is stored, a copy in "
			    "an opaque kernel of its own that takes no producers", C->name,
			    ir_ops[C->op].name);
		else
			WHY("%%%s is a layout op ('%s') that is no view here; it runs alone, a copy in "
			    "an opaque kernel", L->name, ir_ops[L->op].name);
		return R_F4D;
	}
	if (is(g, c, OC_CONV) || is(g, p, OC_POOL) || is(g, c, OC_POOL)) {
		const Node *W = is(g, p, OC_POOL) ? P : C;

		if (is(g, W - g->nodes, OC_POOL))
			WHY("%%%s is a pool ('%s'); a pool runs alone in an opaque kernel (a "
			    "windowed reduction)", W->name, ir_ops[W->op].name);
		else
			WHY("%%%s is a conv2d; a conv2d takes no producers (it heads its kernel, an "
			    "implicit GEMM, alone or with an elementwise epilogue)", W->name);
		return R_F4G;
	}
	if (is(g, p, OC_ARGREDUCE) || is(g, c, OC_ARGREDUCE)) {
		const Node *A = is(g, p, OC_ARGREDUCE) ? P : C;

		WHY("%%%s is '%s'; argmax and argmin run alone, in a kernel of their own (their "
		    "result is i64 indices, which no other op of a kernel computes with)",
		    A->name, ir_ops[A->op].name);
		return R_F4D;
	}
	if (is(g, p, OC_COPY) || is(g, c, OC_COPY)) {
		/* a copy program walks its result's tiles with offsets of its own
		 * (lower-tiled): nothing elementwise rides along with it */
		const Node *L = is(g, c, OC_COPY) ? C : P;

		WHY("%%%s is a copy op ('%s'): it starts a kernel of its own, a copy program with "
		    "computed offsets and masks", L->name, ir_ops[L->op].name);
		return R_F4H;
	}
	if (is(g, p, OC_REDUCTION)) {
		const Type *in = &g->nodes[P->in[0]].type;

		if (!f->row) {
			WHY("%%%s is a reduction; nothing may follow a reduction in its kernel "
			    "(row-fusion is off)", P->name);
			return R_F4B;
		}
		for (int u = f->u.start[p]; u < f->u.start[p + 1]; u++) {
			const Node *U = &g->nodes[f->u.user[u]];

			if (!ir_is_elementwise(U->op)) {
				WHY("%%%s is a reduction and its consumer %%%s is not elementwise; "
				    "row-fusion joins a reduction only to the ops that broadcast it back "
				    "over its rows", P->name, U->name);
				return R_F4B;
			}
		}
		if (!ir_reduces_last_axis(g, p)) {
			WHY("%%%s does not reduce exactly the last axis; row-fusion fuses only "
			    "reductions along the last axis", P->name);
			return R_F4B;
		}
		if (!P->at.keepdims) {
			WHY("%%%s has no keepdims=True; row-fusion fuses only reductions that "
			    "keep the reduced axis", P->name);
			return R_F4B;
		}
		if (!ir_same_dims(in, K->iter)) {
			WHY("%%%s reduces a %s operand, but the kernel of %%%s iterates over %s; "
			    "row-fusion joins a reduction only to a kernel over its operand's rows",
			    P->name, ir_shape_str(in, s1), R->name, ir_shape_str(K->iter, s2));
			return R_F4B;
		}
		if (ir_ops[R->op].cls == OC_REDUCTION && !ir_reduces_last_axis(g, K->root)) {
			WHY("the kernel's root %%%s does not reduce exactly the last axis; a "
			    "row_reduction kernel works along rows", R->name);
			return R_F4B;
		}
		if (K->mm >= 0) {
			WHY("the kernel holds matmul %%%s; a row_reduction kernel holds no matmul",
			    g->nodes[K->mm].name);
			return R_F4F;
		}
		if (K->conv >= 0) {
			WHY("the kernel holds conv2d %%%s; a conv_epilogue holds elementwise ops "
			    "only, no reduction", g->nodes[K->conv].name);
			return R_F4G;
		}
		*relaxed = REL_ROW;
	} else if (ir_is_elementwise(P->op) && ir_is_row_stat(&P->type, K->iter)) {
		/* an op on a row's statistics (var + eps, sqrt, 1/x): computed
		 * once per row inside the row_reduction, broadcast from there */
		bool along = ir_ops[R->op].cls != OC_REDUCTION || ir_reduces_last_axis(g, K->root);

		if (!f->row) {
			/* the hint only where row-fusion would let it join */
			WHY("%%%s is %s, but the kernel of %%%s iterates over %s%s", P->name,
			    ir_shape_str(&P->type, s1), R->name, ir_shape_str(K->iter, s2),
			    along && K->mm < 0 ? " (row-fusion=true lets ops over the reduced rows "
			    "join a row_reduction)" : "");
			return R_F3;
		}
		if (!along) {
			WHY("%%%s is %s, the kernel's rows reduced, but the kernel's root %%%s does "
			    "not reduce exactly the last axis; ops over the reduced rows join only a "
			    "row_reduction, which works along rows", P->name, ir_shape_str(&P->type, s1),
			    R->name);
			return R_F3;
		}
		if (K->mm >= 0) {
			WHY("%%%s works on the reduced rows %s, and the kernel holds matmul %%%s; a "
			    "row_reduction kernel holds no matmul", P->name, ir_shape_str(&P->type, s1),
			    g->nodes[K->mm].name);
			return R_F4F;
		}
		if (K->conv >= 0) {
			WHY("%%%s works on the reduced rows %s, and the kernel holds conv2d %%%s; a "
			    "conv_epilogue holds elementwise ops over the conv's output only", P->name,
			    ir_shape_str(&P->type, s1), g->nodes[K->conv].name);
			return R_F4G;
		}
		*relaxed = REL_STAT;
	}
	if (*relaxed == REL_NONE && !ir_same_dims(&P->type, K->iter)) {
		WHY("%%%s is %s, but the kernel of %%%s iterates over %s", P->name,
		    ir_shape_str(&P->type, s1), R->name, ir_shape_str(K->iter, s2));
		return R_F3;
	}
	if (P->op == OP_CONV2D || (K->conv >= 0 && ir_is_elementwise(P->op))) {
		Rule r = conv_rule(f, k, p, why, nwhy);

		if (r != R_OK)
			return r;
	}
	if (P->op == OP_MATMUL) {
		if (is(g, c, OC_REDUCTION) && !f->mmred) {
			WHY("reduction %%%s consumes matmul %%%s directly; matmul-reduce is off "
			    "(fuse{matmul-reduce=true} allows it)", C->name, P->name);
			return R_F6;
		}
		if (g->nodes[P->in[0]].type.rank == 1 || g->nodes[P->in[1]].type.rank == 1) {
			WHY("matmul %%%s has a 1-D operand; its tiles span the promoted result (a "
			    "dim of 1 added), not %%%s's shape, so it runs alone", P->name, C->name);
			return R_F3;
		}
		if (R->op == OP_MIN || R->op == OP_PROD) {
			WHY("the kernel's root %%%s is a %s; a matmul kernel combines its partial "
			    "reductions across programs by atomic add or max only", R->name,
			    ir_ops[R->op].name);
			return R_F6;
		}
		if (K->mm >= 0 || K->conv >= 0) {
			WHY("the kernel already holds %s %%%s; a kernel holds at most one matmul or "
			    "conv2d", K->mm >= 0 ? "matmul" : "conv2d",
			    g->nodes[K->mm >= 0 ? K->mm : K->conv].name);
			return R_F4C;
		}
		if (K->nrow > 0 || K->nstat > 0) {
			WHY("the kernel is a row_reduction (row-fusion joined its %s); a "
			    "row_reduction kernel holds no matmul", K->nstat == 0 ? "reductions" :
			    K->nrow == 0 ? "ops over its reduced rows" : "reductions and the ops over "
			    "its reduced rows");
			return R_F4F;
		}
		if (K->minidx < p) {
			WHY("%%%s is defined before %%%s; a matmul must be its kernel's first op",
			    g->nodes[K->minidx].name, P->name);
			return R_F4E;
		}
	} else if (K->mm >= 0 && p < K->mm) {
		WHY("%%%s is defined before matmul %%%s; a matmul must be its kernel's first op",
		    P->name, g->nodes[K->mm].name);
		return R_F4E;
	} else if (K->conv >= 0 && p < K->conv) {
		WHY("%%%s is defined before conv2d %%%s; a conv2d must be its kernel's first op",
		    P->name, g->nodes[K->conv].name);
		return R_F4E;
	}
	if (f->maxops > 0 && K->nops >= f->maxops) {
		WHY("the kernel of %%%s already has %d ops (max-ops=%lld)", R->name, K->nops,
		    (long long)f->maxops);
		return R_F5;
	}
	return R_OK;
}

/* The views of attention kernel k (DESIGN section 13): the layout ops
 * above its Q, K, V and mask whose consumers are all in k, not graph
 * outputs, the chain from memory a strided view (view_fits) join k as
 * views, latest first, so that a node is asked once all its consumers are
 * decided.  The candidates are few (the chains' links): a list searched
 * for its latest. */
static void
attn_views(Fuse *f, int k, const AttnMatch *a)
{
	const Graph *g = f->g;
	int cand[64], nc = 0;

	cand[nc++] = a->q;
	cand[nc++] = a->k;
	cand[nc++] = a->v;
	if (a->mask_val >= 0)
		cand[nc++] = a->mask_val;
	while (nc > 0) {
		int best = 0, p;
		Rel relaxed;
		bool view;

		for (int j = 1; j < nc; j++)
			if (cand[j] > cand[best])
				best = j;
		p = cand[best];
		cand[best] = cand[--nc];
		for (int j = 0; j < nc; j++)     /* Q and K may be one value */
			if (cand[j] == p)
				cand[j--] = cand[--nc];
		if (f->part[p] >= 0 || !ir_is_view_op(g, p) ||
		    check(f, k, f->parts[k].root, p, &relaxed, &view, NULL, 0) != R_OK)
			continue;
		join(f, k, p, REL_NONE, true);
		if (nc < (int)(sizeof cand / sizeof cand[0]))
			cand[nc++] = g->nodes[p].in[0];
	}
}

/*
 * The attention kernels, before any other kind (DESIGN section 13): each
 * matmul, latest first, that ends the pattern (attention.c) whose members
 * are in no kernel yet, read by nothing outside the pattern and not graph
 * outputs (but the root), becomes one kernel of exactly those members.
 * max-ops bounds it as any kernel.
 */
static void
find_attention(Fuse *f)
{
	const Graph *g = f->g;

	for (int i = g->nnodes - 1; i >= 0; i--) {
		AttnMatch a;
		bool ok = true;
		int k;

		if (f->part[i] >= 0 || g->nodes[i].op != OP_MATMUL || !attn_match(g, i, &a))
			continue;
		if (f->maxops > 0 && a.nnodes > f->maxops)
			continue;
		for (int j = 0; j < a.nnodes && ok; j++) {
			int p = a.nodes[j];

			ok = f->part[p] < 0 && (p == i || !f->isret[p]);
			for (int u = f->u.start[p]; ok && p != i && u < f->u.start[p + 1]; u++) {
				bool in = false;

				for (int q = 0; q < a.nnodes; q++)
					in |= a.nodes[q] == f->u.user[u];
				ok = in;
			}
		}
		if (!ok)
			continue;
		k = new_part(f, i, -1);
		f->parts[k].attn = true;
		for (int j = 0; j < a.nnodes; j++)
			join(f, k, a.nodes[j], REL_NONE, false);
		f->parts[k].mm = a.mm;
		f->parts[k].iter = &g->nodes[i].type;
		attn_views(f, k, &a);
	}
}

/* Grows partition k from its root, breadth-first; queue has room for all
 * nodes. */
static void
grow(Fuse *f, int k, int *queue)
{
	const Graph *g = f->g;
	Part *K = &f->parts[k];
	const Node *r = &g->nodes[K->root];
	int head = 0, tail = 0;

	K->iter = is(g, K->root, OC_REDUCTION) ? &g->nodes[r->in[0]].type : &r->type;
	join(f, k, K->root, REL_NONE, false);
	queue[tail++] = K->root;
	while (head < tail) {
		int c = queue[head++];
		const Node *n = &g->nodes[c];

		for (int j = 0; j < n->nin; j++) {
			int p = n->in[j];
			Rel relaxed;
			bool view;

			if (f->part[p] >= 0 || repeated(n, j))
				continue;
			if (check(f, k, c, p, &relaxed, &view, NULL, 0) == R_OK) {
				join(f, k, p, relaxed, view);
				queue[tail++] = p;
			}
		}
	}
}

static KernelKind
kind_of(const Fuse *f, const Part *K)
{
	if (K->attn)
		return KK_ATTENTION;
	if (K->mm >= 0)
		return K->nops == 1 ? KK_MATMUL : KK_MATMUL_EPILOGUE;
	if (K->conv >= 0)
		return K->nops == 1 ? KK_MATMUL : KK_CONV_EPILOGUE;
	if (is(f->g, K->root, OC_LAYOUT) || is(f->g, K->root, OC_POOL) ||
	    is(f->g, K->root, OC_COPY))
		return KK_OPAQUE;
	if (K->nrow > 0 || K->nstat > 0)
		return KK_ROW_REDUCTION;
	/* argmax and argmin run alone and reduce along their axis, as a sum
	 * over it would (lower-tiled's lower_argreduce) */
	if (is(f->g, K->root, OC_REDUCTION) || is(f->g, K->root, OC_ARGREDUCE))
		return KK_REDUCTION;
	return KK_ELEMENTWISE;
}

/*
 * The bytes an unfused value costs, by DESIGN §7's ideal traffic (each
 * kernel reads each of its inputs once, each kernel output is written
 * once): %p's tensor, S bytes, is written once because some kernel outside
 * its own reads it (or 'return' names it), and read once by each of the
 * nout distinct kernels outside that consume it.  Fusing one edge p -> c
 * alone moves %p into c's kernel: that kernel's read goes (S), and the
 * write too (2S) when that kernel was the last one outside and %p is no
 * graph output.  Fusing every edge of %p saves every read and, unless %p
 * is returned, the write: nout·S (+ S), which the total counts once per
 * value however many edges it has.  docs/passes.md says the same.
 */
typedef struct EdgeBytes {
	int64_t size;                /* S; -1 if numel · element size overflows */
	int nout;                    /* distinct kernels outside %p's that read it */
	bool ret;                    /* named by 'return': the write stays */
} EdgeBytes;

/* stamp[] is a scratch array, one slot per partition, holding the last
 * producer that counted it (initially -1). */
static EdgeBytes
edge_bytes(const Fuse *f, int p, int *stamp)
{
	const Graph *g = f->g;
	int64_t n = ir_type_numel(&g->nodes[p].type);
	EdgeBytes e = {.size = -1, .nout = 0, .ret = f->isret[p] != 0};

	if (n >= 0 && __builtin_mul_overflow(n, (int64_t)ir_dtype_size(g->nodes[p].type.dt),
	    &e.size))
		e.size = -1;
	for (int u = f->u.start[p]; u < f->u.start[p + 1]; u++) {
		int k = f->part[f->u.user[u]];

		if (k != f->part[p] && stamp[k] != p) {
			stamp[k] = p;
			e.nout++;
		}
	}
	return e;
}

/* Fusing this edge alone: S, or 2S when the consumer's kernel is the last
 * reader outside and the value is no graph output; -1 on overflow. */
static int64_t
edge_saving(EdgeBytes e)
{
	if (e.size < 0)
		return -1;
	if (e.nout > 1 || e.ret)
		return e.size;
	return e.size > INT64_MAX / 2 ? -1 : 2 * e.size;
}

/* Fusing every edge of the value: nout reads, and the write unless it is
 * returned; -1 on overflow. */
static int64_t
value_saving(EdgeBytes e)
{
	int64_t b;

	if (e.size < 0 || __builtin_mul_overflow(e.size, (int64_t)e.nout + !e.ret, &b))
		return -1;
	return b;
}

/*
 * Walks every producer->consumer edge between compute ops in different
 * kernels, in the consumer's definition order, and asks check() why.  With
 * d, one remark each (and a note at the producer), with what fusing that
 * edge alone would save; always tallies the rules into tally[] and, into
 * *bytes, what fusing every such edge would save, each value counted once.
 */
static void
unfused_edges(Fuse *f, Diag *d, int *tally, int64_t *bytes, int *nedges)
{
	const Graph *g = f->g;
	char why[1024];
	int *stamp = xmalloc(sizeof(int) * ((size_t)f->nparts + 1));
	EdgeBytes *eb = xmalloc_huge(sizeof *eb * ((size_t)g->nnodes + 1));

	for (int k = 0; k < f->nparts; k++)
		stamp[k] = -1;
	/* each value's readers outside, and the total, one term per value */
	for (int p = 0; p < g->nnodes; p++) {
		int64_t b;

		if (is(g, p, OC_SOURCE))
			continue;
		eb[p] = edge_bytes(f, p, stamp);
		if (eb[p].nout == 0)
			continue;
		b = value_saving(eb[p]);
		if (b < 0 || __builtin_add_overflow(*bytes, b, bytes))
			*bytes = INT64_MAX;
	}
	for (int c = 0; c < g->nnodes; c++) {
		const Node *C = &g->nodes[c];

		for (int j = 0; j < C->nin; j++) {
			int p = C->in[j];
			int64_t b;
			Rel relaxed;
			bool view;
			Rule r;

			if (is(g, p, OC_SOURCE) || f->part[p] == f->part[c] ||
			    repeated(C, j))
				continue;
			r = check(f, f->part[c], c, p, &relaxed, &view, why, sizeof why);
			if (r == R_OK)
				AICM_BUG("fuse left %%%s -> %%%s unfused though every rule allows it",
				    g->nodes[p].name, C->name);
			tally[r]++;
			(*nedges)++;
			if (!d)
				continue;
			b = edge_saving(eb[p]);
			if (b >= 0)
				diag_remark(d, C->inloc[j], "%%%s -> %%%s not fused [%s, would save %lld "
				    "bytes]: %s", g->nodes[p].name, C->name, rule_id[r], (long long)b, why);
			else
				diag_remark(d, C->inloc[j], "%%%s -> %%%s not fused [%s]: %s",
				    g->nodes[p].name, C->name, rule_id[r], why);
			diag_note(d, g->nodes[p].loc, "%%%s is defined here, in kernel @%s [%s]",
			    g->nodes[p].name, f->parts[f->part[p]].name,
			    ir_kernel_kinds[f->parts[f->part[p]].kind]);
		}
	}
	free(eb);
	free(stamp);
}

/* Kernel names: kernel0, kernel1, ... in printed order, skipping the names
 * of the input's kernels; used[i] marks "kernel<i>" as taken (i < nused). */
static const char *
fresh_kernel_name(Graph *g, const char *used, int nused, int *next)
{
	char buf[32];

	while (*next < nused && used[*next])
		(*next)++;
	snprintf(buf, sizeof buf, "kernel%d", (*next)++);
	return arena_strndup(&g->arena, buf, strlen(buf));
}

/* Marks the input's kernels named "kernel<i>", i < n, written canonically. */
static char *
used_names(const Graph *g, int n)
{
	char *used = xcalloc((size_t)n + 1, 1);

	for (int k = 0; k < g->nkernels; k++) {
		const char *s = g->kernels[k].name, *q;
		long v = 0;

		if (strncmp(s, "kernel", 6) != 0 || !s[6] || (s[6] == '0' && s[7]))
			continue;
		for (q = s + 6; *q >= '0' && *q <= '9' && v <= n; q++)
			v = v * 10 + (*q - '0');
		if (!*q && v < n)
			used[v] = 1;
	}
	return used;
}

/*
 * Plans the new order: every new kernel's ops together, in definition
 * order, where its root was (perm[new] = old, malloc'd).  Rebuilds the
 * kernel array in that printed order and names the new kernels; the nodes
 * keep their places until ir_reorder(perm), so explain can still walk the
 * partition by the old indices.  given[k]: kernel k was in the input.
 */
static int *
plan(Fuse *f, bool **given)
{
	Graph *g = f->g;
	int n = g->nnodes, np = f->nparts, *block, *start, *fill, *members, *perm, *kidx;
	int m = 0, next = 0, nk = 0;
	char *used = used_names(g, f->nparts + 1);
	Kernel *ks;

	/* each partition's members in definition order: a counting sort */
	block = xmalloc_huge(sizeof(int) * (3 * ((size_t)np + 1) + (size_t)n + 1));
	start = block;
	fill = start + np + 1;
	kidx = fill + np + 1;
	members = kidx + np + 1;
	memset(start, 0, sizeof(int) * ((size_t)np + 1));
	for (int i = 0; i < n; i++)
		if (f->part[i] >= 0)
			start[f->part[i] + 1]++;
	for (int k = 0; k < f->nparts; k++)
		start[k + 1] += start[k];
	memcpy(fill, start, sizeof(int) * (size_t)f->nparts);
	for (int i = 0; i < n; i++)
		if (f->part[i] >= 0)
			members[fill[f->part[i]]++] = i;
	perm = xmalloc_huge(sizeof(int) * ((size_t)n + 1));
	for (int i = 0; i < n; i++) {
		int k = f->part[i];

		if (k < 0 || f->parts[k].given >= 0)
			perm[m++] = i;
		else if (i == f->parts[k].root)
			for (int e = start[k]; e < start[k + 1]; e++)
				perm[m++] = members[e];
	}
	if (m != n)
		AICM_BUG("fuse placed %d of %d nodes", m, n);
	/* kernels in printed order: new ones named, the input's copied */
	ks = xcalloc((size_t)f->nparts + 1, sizeof *ks);
	*given = xcalloc((size_t)f->nparts + 1, sizeof(bool));
	for (int i = 0; i < n; i++) {
		int k = f->part[perm[i]];

		if (k < 0 || (i > 0 && f->part[perm[i - 1]] == k))
			continue;
		kidx[k] = nk;
		if (f->parts[k].given >= 0) {
			ks[nk] = g->kernels[f->parts[k].given];
			(*given)[nk] = true;
		} else {
			ks[nk].name = fresh_kernel_name(g, used, f->nparts + 1, &next);
			ks[nk].kind = f->parts[k].kind;
			f->parts[k].name = ks[nk].name;
		}
		nk++;
	}
	for (int i = 0; i < n; i++)
		g->nodes[i].kernel = f->part[i] >= 0 ? kidx[f->part[i]] : -1;
	free(g->kernels);
	g->kernels = ks;
	g->nkernels = nk;
	g->capkernels = f->nparts + 1;
	free(used);
	free(block);
	return perm;
}

/* --report: the seed's line per kernel, in printed order, and the count. */
static void
report(const Graph *g, FILE *o, bool json, const int *tally, int64_t bytes, int nedges,
    const bool *given)
{
	int ncomp = 0;

	for (int i = 0; i < g->nnodes; i++)
		ncomp += !is(g, i, OC_SOURCE);
	if (json) {
		/* one JSON style for every report (ir_json_str) */
		fprintf(o, "{\"pass\":\"fuse\",\"compute_nodes\":%d,\"kernels\":[", ncomp);
		for (int k = 0; k < g->nkernels; k++) {
			const Kernel *K = &g->kernels[k];

			fprintf(o, "%s{\"kernel\":", k ? "," : "");
			ir_json_str(o, K->name);
			fprintf(o, ",\"kind\":\"%s\",\"from_input\":%s,\"ops\":[",
			    ir_kernel_kinds[K->kind], given[k] ? "true" : "false");
			for (int i = K->first; i <= K->last; i++) {
				fprintf(o, "%s", i > K->first ? "," : "");
				ir_json_str(o, g->nodes[i].name);
			}
			fprintf(o, "]}");
		}
		fprintf(o, "],\"unfused_edges\":%d,\"unfused_bytes\":%lld,\"rules\":{",
		    nedges, (long long)bytes);
		for (int r = 1, first = 1; r < R_COUNT; r++)
			if (tally[r]) {
				fprintf(o, "%s\"%s\":%d", first ? "" : ",", rule_id[r], tally[r]);
				first = 0;
			}
		fprintf(o, "}}\n");
		return;
	}
	fprintf(o, "fuse: fusion groups (one kernel each):\n");
	for (int k = 0; k < g->nkernels; k++) {
		const Kernel *K = &g->kernels[k];

		fprintf(o, "  %s [%s]", K->name, ir_kernel_kinds[K->kind]);
		for (int i = K->first; i <= K->last; i++)
			fprintf(o, "%s%%%s", i > K->first ? " -> " : " ", g->nodes[i].name);
		fprintf(o, "%s\n", given[k] ? "  (written in the input)" : "");
	}
	fprintf(o, "  %d compute node%s -> %d kernel%s\n", ncomp, ncomp == 1 ? "" : "s",
	    g->nkernels, g->nkernels == 1 ? "" : "s");
	if (nedges) {
		fprintf(o, "  %d edge%s not fused (", nedges, nedges == 1 ? "" : "s");
		for (int r = 1, first = 1; r < R_COUNT; r++)
			if (tally[r]) {
				fprintf(o, "%s%s: %d", first ? "" : ", ", rule_id[r], tally[r]);
				first = 0;
			}
		fprintf(o, "); fusing them would save %lld bytes\n", (long long)bytes);
	}
}

/* requires: shapes; preserves: values, names, types, the input's kernels;
 * changes: node order (each kernel contiguous), adds kernels */
static int
run(Graph *g, const PassArgs *args, Diag *d)
{
	Fuse f = {.g = g};
	int n = g->nnodes, *tables, *queue, *perm, tally[R_COUNT] = {0}, nedges = 0;
	int64_t bytes = 0;
	bool explain = pass_bool(args, "explain"), *given;

	if (pass_require_shapes(g, d, "fuse") != 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (g->nodes[i].op == OP_TILED) {
			diag_error(d, g->nodes[i].loc, "%%%s is already a tiled kernel; fuse runs "
			    "before lower-tiled (--pass=shape-infer,fuse,lower-tiled)", g->nodes[i].name);
			return -1;
		}
	f.row = pass_bool(args, "row-fusion");
	f.mmred = pass_bool(args, "matmul-reduce");
	f.attn = pass_bool(args, "attention");
	f.maxops = pass_int(args, "max-ops");   /* the pipeline admitted 0..1e9 */
	ir_users(g, &f.u);
	/* The per-node tables in one block: one large allocation is made of
	 * huge pages, seven middling ones of small pages, each a fault. */
	tables = xmalloc_huge(sizeof(int) * 8 * ((size_t)n + 1));
	f.nuse = tables;
	f.part = f.nuse + n + 1;
	f.mark = f.part + n + 1;
	f.cnt = f.mark + n + 1;
	f.allin = f.cnt + n + 1;
	f.isret = f.allin + n + 1;
	f.view = f.isret + n + 1;
	queue = f.view + n + 1;
	for (int i = 0; i < n; i++) {
		f.part[i] = f.mark[i] = -1;
		f.nuse[i] = f.cnt[i] = f.isret[i] = f.view[i] = 0;
		for (int u = f.u.start[i]; u < f.u.start[i + 1]; u++)
			f.nuse[i] += u == f.u.start[i] || f.u.user[u] != f.u.user[u - 1];
	}
	for (int i = 0; i < g->nret; i++)
		f.isret[g->ret[i]] = 1;
	/* At most a partition per input kernel and per node: sized once, the
	 * array is never copied (pages are touched as partitions are made). */
	f.capparts = g->nkernels + n + 1;
	f.parts = xmalloc_huge(sizeof *f.parts * (size_t)f.capparts);
	for (int k = 0; k < g->nkernels; k++) {
		int p = new_part(&f, g->kernels[k].last, k);

		f.parts[p].kind = g->kernels[k].kind;
		f.parts[p].name = g->kernels[k].name;
		for (int i = g->kernels[k].first; i <= g->kernels[k].last; i++)
			f.part[i] = p;
	}
	if (f.attn)
		find_attention(&f);
	for (int i = n - 1; i >= 0; i--)
		if (f.part[i] < 0 && !is(g, i, OC_SOURCE))
			grow(&f, new_part(&f, i, -1), queue);
	for (int k = 0; k < f.nparts; k++)
		if (f.parts[k].given < 0)
			f.parts[k].kind = kind_of(&f, &f.parts[k]);
	perm = plan(&f, &given);
	/* the kernel every consumer of i is in, for check() on the result */
	for (int i = 0; i < n; i++) {
		int k0 = -1;

		for (int u = f.u.start[i]; u < f.u.start[i + 1]; u++) {
			int k = f.part[f.u.user[u]];

			if (u == f.u.start[i])
				k0 = k;
			else if (k != k0)
				k0 = -1;
		}
		f.allin[i] = k0;
	}
	f.final = true;
	if (explain || args->report)
		unfused_edges(&f, explain ? d : NULL, tally, &bytes, &nedges);
	ir_reorder(g, perm);
	if (args->report)
		report(g, args->report, args->report_json, tally, bytes, nedges, given);
	free(perm);
	ir_users_free(&f.u);
	free(given);
	free(tables);
	free(f.parts);
	return 0;
}

static const PassOpt opts[] = {
	{"explain", PO_BOOL, "false", "a remark for every producer->consumer edge not fused, "
	    "with its rule id (docs/passes.md), the reason and the bytes fusing that edge alone "
	    "would save", 0, 0},
	{"attention", PO_BOOL, "true", "fuse softmax(matmul(Q, K') [scaled] [masked]) @ V into "
	    "one attention kernel (online softmax; DESIGN section 13)", 0, 0},
	{"matmul-reduce", PO_BOOL, "false", "let a reduction consume a matmul directly", 0, 0},
	{"row-fusion", PO_BOOL, "false", "fuse softmax-like rows (last-axis reductions with "
	    "keepdims=True, the ops on their reduced rows, and their broadcast consumers: softmax, "
	    "LayerNorm, RMSNorm) into one row_reduction kernel", 0, 0},
	{"max-ops", PO_INT, "0", "at most this many ops per kernel (0: unlimited)", 0, 1e9},
	{0},
};

const Pass pass_fuse = {
	.name = "fuse",
	.summary = "partition compute ops into kernels (matmul epilogues, elementwise chains, "
	    "reductions)",
	.opts = opts,
	.run = run,
};
