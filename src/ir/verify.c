/*
 * verify.c: the IR's invariants, checked after parsing and after every pass.
 *
 * The parser already refuses most malformed input with better words; the
 * verifier is the net under the passes (QBE's ssacheck between phases):
 * SSA order, arity and attributes against the op table, every type that can
 * be checked against the shape rules, kernels as contiguous non-empty runs
 * with unique names and no sources, each true to its kind (DESIGN §6) with
 * its root as its only output, and a valid return list.
 */
#include <stdlib.h>
#include <string.h>

#include "pass.h"
#include "tile.h"

static Loc
where(const Node *n)
{
	return n->loc;
}

static int
verify_node(const Graph *g, int i, Diag *d, bool input)
{
	const Node *n = &g->nodes[i];
	const OpInfo *op;
	int bad = 0;

	if ((n->op == OP_TILED) != (n->tile != NULL)) {
		diag_error(d, where(n), n->tile ? "'%%%s' has a tiled body but is not a tiled node" :
		    "tiled '%%%s' has no body", n->name);
		return 1;
	}
	if (n->op == OP_TILED)
		return tile_verify(g, i, d);
	if ((unsigned)n->op >= OP_COUNT) {
		diag_error(d, where(n), "'%%%s' has an invalid op id %d", n->name, (int)n->op);
		return 1;
	}
	op = &ir_ops[n->op];
	if (n->nin < op->nmin || (op->nmax != IR_VARIADIC && n->nin > op->nmax)) {
		diag_error(d, where(n), "'%s' takes %d operands, '%%%s' has %d", op->name, op->nmin,
		    n->name, n->nin);
		return 1;
	}
	if (g->names.dup == i + 1) {
		diag_error(d, where(n), "the name '%%%s' is defined twice", n->name);
		bad++;
	}
	for (int j = 0; j < n->nin; j++)
		if (n->in[j] < 0 || n->in[j] >= i) {
			diag_error(d, where(n), "operand %d of '%%%s' is not defined before it", j,
			    n->name);
			return bad + 1;
		}
	if (n->at.set & ~op->attrs) {
		diag_error(d, where(n), "'%%%s' has attributes that '%s' does not take", n->name,
		    op->name);
		bad++;
	}
	if ((op->required & n->at.set) != op->required) {
		diag_error(d, where(n), "'%%%s' lacks a required attribute of '%s'", n->name, op->name);
		bad++;
	}
	if (op->cls == OC_SOURCE && n->type.rank < 0) {
		diag_error(d, where(n), "'%s' needs a type", op->name);
		bad++;
	}
	/* the parser checks these as it reads; a graph built in memory (a pass,
	 * an importer) gets the same checks here */
	if ((n->at.set & AB(VALUES)) && n->type.rank >= 0 &&
	    (n->at.nvalues < 1 || n->at.nvalues > IR_MAX_VALUES ||
	    ir_type_numel(&n->type) != n->at.nvalues || !n->at.values || !n->at.ivalues)) {
		diag_error(d, where(n), "'%%%s' has %d values= elements for a type of %lld",
		    n->name, n->at.nvalues, (long long)ir_type_numel(&n->type));
		bad++;
	}
	if ((n->at.set & AB(FILE)) && (!n->at.file || ir_data_path_error(n->at.file))) {
		diag_error(d, where(n), "'%%%s' file= %s", n->name,
		    n->at.file ? ir_data_path_error(n->at.file) : "is missing");
		bad++;
	}
	for (int a = 0; a < ATTR_COUNT; a++)
		if ((n->at.set & op->attrs & (1u << a)) && (ir_attrs[a].kind == AK_INTS ||
		    (a == ATTR_AXIS && n->at.tup && n->at.tup[a].n)) &&
		    (!n->at.tup || n->at.tup[a].n < 0 || n->at.tup[a].n > IR_MAX_TUPLE ||
		    (n->at.tup[a].n > 0 && !n->at.tup[a].v))) {
			diag_error(d, where(n), "'%%%s' attribute '%s' has no valid tuple", n->name,
			    ir_attrs[a].name);
			bad++;
		}
	if ((n->at.set & AB(TO)) && (unsigned)n->at.to >= DT_COUNT) {
		diag_error(d, where(n), "'%%%s' to= is not an element type", n->name);
		bad++;
	}
	if (n->type.rank > IR_MAX_RANK || (unsigned)n->type.dt >= DT_COUNT) {
		diag_error(d, where(n), "'%%%s' has an invalid type (rank %d, element type %d)",
		    n->name, n->type.rank, (int)n->type.dt);
		return bad + 1;
	}
	if (n->type.rank >= 0 && op->cls != OC_SOURCE) {
		char err[IR_ERR_MAX];
		Loc at;
		bool known = true;

		for (int j = 0; j < n->nin; j++)
			known = known && g->nodes[n->in[j]].type.rank >= 0;
		if (known && ir_check_type(g, i, err, &at) != 0) {
			diag_error(d, at, "%s", err);
			bad++;
		}
	} else if (input && n->type.rank < 0 && op->cls != OC_SOURCE) {
		/* An input's unwritten type whose operands' are known must be
		 * inferable: else one wrong written type stopped the input here
		 * and hid every independent shape error that shape-infer would
		 * have reported after it (clang reports them all, up to its
		 * limit).  Its users have an unknown operand and stay quiet. */
		char err[IR_ERR_MAX];
		Loc at;
		Type t;
		bool known = true;

		for (int j = 0; j < n->nin; j++)
			known = known && g->nodes[n->in[j]].type.rank >= 0;
		if (known && ir_infer_type(g, i, &t, err, &at) != 0) {
			diag_error(d, at, "%s", err);
			bad++;
		}
	}
	return bad;
}

/* dup[k]: an earlier kernel has k's name.  A hash set of the names seen,
 * not pairwise: after fuse a graph of n ops may have n kernels. */
static bool
kernel_name_eq(const void *g, uint32_t item, const void *name)
{
	return strcmp(((const Graph *)g)->kernels[item].name, name) == 0;
}

static char *
duplicate_names(const Graph *g)
{
	HashMap seen = {0};
	int nk = g->nkernels;
	char *dup = xcalloc((size_t)nk + 1, 1);

	hashmap_reserve(&seen, (size_t)nk);
	for (int k = 0; k < nk; k++) {
		const char *name = g->kernels[k].name;

		dup[k] = hashmap_put(&seen, (uint32_t)ir_hash_str(name), (uint32_t)k, kernel_name_eq,
		    g, name) >= 0;
	}
	hashmap_free(&seen);
	return dup;
}

static int
verify_kernels(const Graph *g, Diag *d)
{
	int bad = 0;
	char *dup = duplicate_names(g);

	for (int k = 0; k < g->nkernels; k++) {
		const Kernel *kn = &g->kernels[k];

		if (dup[k]) {
			diag_error(d, kn->nameloc, "redefinition of kernel '@%s'", kn->name);
			bad++;
		}
		if (kn->first < 0 || kn->last < kn->first || kn->last >= g->nnodes) {
			diag_error(d, kn->loc, "kernel '@%s' is empty", kn->name);
			bad++;
			continue;
		}
		for (int i = kn->first; i <= kn->last; i++) {
			const Node *n = &g->nodes[i];

			if (n->kernel != k) {
				diag_error(d, n->loc, "kernel '@%s' is not contiguous: '%%%s' lies "
				    "inside it but is not its op", kn->name, n->name);
				bad++;
			} else if (ir_ops[n->op].cls == OC_SOURCE) {
				diag_error(d, n->loc, "'%s' cannot be inside kernel '@%s'; sources "
				    "stay outside kernels", ir_ops[n->op].name, kn->name);
				bad++;
			}
		}
	}
	for (int i = 0; i < g->nnodes; i++) {
		int k = g->nodes[i].kernel;

		if (k >= g->nkernels || (k >= 0 && (i < g->kernels[k].first || i > g->kernels[k].last))) {
			diag_error(d, g->nodes[i].loc, "'%%%s' claims a kernel it is not inside",
			    g->nodes[i].name);
			bad++;
		}
	}
	free(dup);
	return bad;
}

/* ---- kernel kinds (DESIGN §6; the fuse pass's output is held to them) -- */

static const char *const kind_rule[KK_COUNT] = {
	[KK_MATMUL_EPILOGUE] = "a matmul, then elementwise ops, then at most one reduction",
	[KK_MATMUL] = "one matmul alone",
	[KK_ELEMENTWISE] = "elementwise ops only",
	[KK_REDUCTION] = "elementwise ops ending in one reduction, or one argmax or argmin "
	    "alone",
	[KK_ROW_REDUCTION] = "elementwise ops and reductions along the last axis (the "
	    "elementwise ops over its rows or its reduced rows)",
	[KK_OPAQUE] = "one layout op alone",
	[KK_CONV_EPILOGUE] = "a conv2d, then elementwise ops over its output",
	[KK_ATTENTION] = "softmax(matmul(Q, K') [scaled] [masked]) along the last axis, then a "
	    "matmul with V: two matmuls, the second the root; elementwise ops, last-axis "
	    "reductions with keepdims=True, and views (layout ops) of Q, K, V and the mask",
};

/*
 * An attention kernel (DESIGN section 13): the structure every attention
 * kernel has, whatever fuse's matcher (passes/attention.c) accepted; that
 * matcher, run again by lower-tiled, decides the rest and says why when a
 * kernel written by hand is not the pattern.  Two matmuls, the root the
 * second; reductions along the last axis with keepdims=True; views
 * (layout ops, each a strided view of memory: the absorbed transpose of
 * the keys is one too); nothing else but elementwise ops.
 */
static bool kernel_view(const Graph *g, const Kernel *kn, int i);
static int verify_view(const Graph *g, const Kernel *kn, int i, Diag *d);

static int
verify_attention_kind(const Graph *g, int k, Diag *d)
{
	const Kernel *kn = &g->kernels[k];
	const Node *root = &g->nodes[kn->last];
	int nmm = 0;

	for (int i = kn->first; i <= kn->last; i++) {
		const Node *n = &g->nodes[i];
		OpClass c = ir_ops[n->op].cls;
		const char *why = NULL;

		if (kernel_view(g, kn, i)) {
			if (verify_view(g, kn, i, d))
				return 1;
			continue;
		}
		if (n->op == OP_MATMUL) {
			if (++nmm > 2)
				why = "a third matmul";
		} else if (c == OC_REDUCTION) {
			if ((n->op != OP_MAX && n->op != OP_SUM) || !n->at.keepdims ||
			    (g->nodes[n->in[0]].type.rank >= 0 && !ir_reduces_last_axis(g, i)))
				why = "a reduction other than max or sum along the last axis with "
				    "keepdims=True";
		} else if (!ir_is_elementwise(n->op)) {
			why = "an op that is neither elementwise, a reduction, a matmul nor a view";
		}
		if (why) {
			diag_error(d, n->oploc, "kernel '@%s' is [attention] but holds '%%%s', %s; "
			    "[attention] means %s", kn->name, n->name, why, kind_rule[KK_ATTENTION]);
			return 1;
		}
	}
	if (nmm != 2 || root->op != OP_MATMUL) {
		diag_error(d, kn->nameloc, "kernel '@%s' is [attention] but holds %d matmul%s and "
		    "its root '%%%s' is an op '%s'; [attention] means %s", kn->name, nmm,
		    nmm == 1 ? "" : "s", root->name, ir_ops[root->op].name, kind_rule[KK_ATTENTION]);
		return 1;
	}
	return 0;
}

/* Whether node i of kernel kn is a view (DESIGN §13, docs/passes.md
 * "Views"): a layout op other than the root of a kernel of a computing
 * kind.  It is no op of the kernel's: the loads of its consumers read its
 * operand through it, so the kind's rules skip it. */
static bool
kernel_view(const Graph *g, const Kernel *kn, int i)
{
	return ir_kind_has_views(kn->kind) && i >= kn->first && i < kn->last && ir_is_view_op(g, i);
}

/* A view's operand is memory (outside the kernel, or another view), and
 * the chain down to it is a strided view (view.c). */
static int
verify_view(const Graph *g, const Kernel *kn, int i, Diag *d)
{
	const Node *n = &g->nodes[i];
	int p = n->in[0], chain[64], nc = 0;
	IrView v;
	const char *why;

	if (p >= kn->first && p <= kn->last && !kernel_view(g, kn, p)) {
		/* (a kernel's nodes are contiguous: inside the range is inside) */
		diag_error(d, n->inloc[0], "view '%%%s' of kernel '@%s' reads '%%%s', computed in "
		    "the kernel; a view reads its operand from memory", n->name, kn->name,
		    g->nodes[p].name);
		return 1;
	}
	if (n->type.rank < 0)
		return 0;
	/* the chain up to memory, then applied down (a chain longer than 64
	 * is checked from its 64th link: each link was checked by its own) */
	for (int q = i; nc < 64; q = g->nodes[q].in[0]) {
		chain[nc++] = q;
		if (!kernel_view(g, kn, g->nodes[q].in[0]))
			break;
	}
	if (g->nodes[g->nodes[chain[nc - 1]].in[0]].type.rank < 0)
		return 0;
	ir_view_dense(&g->nodes[g->nodes[chain[nc - 1]].in[0]].type, &v);
	for (int c = nc - 1; c >= 0; c--)
		if (!ir_view_apply(g, chain[c], &v, &why)) {
			diag_error(d, n->oploc, "view '%%%s' of kernel '@%s' is no strided view of "
			    "its operand's memory ('%%%s': %s)", n->name, kn->name,
			    g->nodes[chain[c]].name, why);
			return 1;
		}
	return 0;
}

/* The ops of kernel k against its kind's rules; shapes against its
 * iteration shape (the root's, or a reduction root's operand's) when the
 * structure is right and the types are known. */
static int
verify_kernel_kind(const Graph *g, int k, Diag *d)
{
	const Kernel *kn = &g->kernels[k];
	const Node *root = &g->nodes[kn->last], *mm = NULL;
	KernelKind kk = kn->kind;
	const char *kind = ir_kernel_kinds[kk];
	char s1[IR_TYPE_STR], s2[IR_TYPE_STR];
	int bad = 0, head = kn->first, nops = 0;
	Type iter;

	if (kk == KK_ATTENTION)
		return verify_attention_kind(g, k, d);
	while (head < kn->last && kernel_view(g, kn, head))
		head++;
	for (int i = kn->first; i <= kn->last; i++) {
		const Node *n = &g->nodes[i];
		OpClass c = ir_ops[n->op].cls;
		bool ok;

		if (kernel_view(g, kn, i)) {
			bad += verify_view(g, kn, i, d);
			continue;
		}
		nops++;
		switch (c) {
		case OC_CONTRACTION:
			ok = kk == KK_MATMUL || kk == KK_MATMUL_EPILOGUE;
			break;
		case OC_LAYOUT:
		case OC_COPY:           /* copy programs are opaque too (lower-tiled) */
			ok = kk == KK_OPAQUE;
			break;
		case OC_CONV:            /* an implicit GEMM, alone or heading its epilogue */
			ok = kk == KK_MATMUL || kk == KK_CONV_EPILOGUE;
			break;
		case OC_POOL:            /* a windowed reduction, alone */
			ok = kk == KK_OPAQUE;
			break;
		case OC_REDUCTION:
			ok = kk == KK_REDUCTION || kk == KK_ROW_REDUCTION || kk == KK_MATMUL_EPILOGUE;
			break;
		case OC_ARGREDUCE:       /* i64 indices: a reduction kernel of its own */
			ok = kk == KK_REDUCTION;
			break;
		default:
			ok = kk != KK_MATMUL && kk != KK_OPAQUE;
			break;
		}
		/* a conv_epilogue's program is the implicit GEMM's: nothing but
		 * elementwise ops can ride on its accumulator tile */
		if (ok && kk == KK_CONV_EPILOGUE && c != OC_CONV && !ir_is_elementwise(n->op))
			ok = false;
		if (!ok) {
			diag_error(d, n->oploc, "kernel '@%s' is [%s] but holds '%%%s', an op '%s'; "
			    "[%s] means %s", kn->name, kind, n->name, ir_ops[n->op].name, kind,
			    kind_rule[kk]);
			bad++;
		} else if (c == OC_CONTRACTION && mm) {
			diag_error(d, n->oploc, "kernel '@%s' holds a second matmul '%%%s' (the first "
			    "is '%%%s'); a kernel holds at most one", kn->name, n->name, mm->name);
			bad++;
		} else if (c == OC_CONV && kk == KK_CONV_EPILOGUE && i != head) {
			diag_error(d, n->oploc, "conv2d '%%%s' is not the first op of kernel '@%s'; "
			    "a conv2d must head its conv_epilogue", n->name, kn->name);
			bad++;
		} else if (c == OC_CONTRACTION && i != head) {
			diag_error(d, n->oploc, "matmul '%%%s' is not the first op of kernel '@%s'; "
			    "a matmul must head its kernel", n->name, kn->name);
			bad++;
		} else if (c == OC_REDUCTION && kk != KK_ROW_REDUCTION && i != kn->last) {
			diag_error(d, n->oploc, "reduction '%%%s' is not the last op of [%s] kernel "
			    "'@%s'; nothing may follow a reduction outside row_reduction", n->name,
			    kind, kn->name);
			bad++;
		} else if (c == OC_REDUCTION && kk == KK_ROW_REDUCTION &&
		    g->nodes[n->in[0]].type.rank >= 0 && !ir_reduces_last_axis(g, (int)(n - g->nodes))) {
			diag_error(d, n->oploc, "reduction '%%%s' in row_reduction kernel '@%s' does "
			    "not reduce exactly the last axis", n->name, kn->name);
			bad++;
		} else if (c == OC_REDUCTION && kk == KK_ROW_REDUCTION &&
		    g->nodes[n->in[0]].kernel == k && ir_ops[g->nodes[n->in[0]].op].cls == OC_REDUCTION) {
			diag_error(d, n->inloc[0], "reduction '%%%s' in row_reduction kernel '@%s' "
			    "reduces reduction '%%%s'; a row's reductions feed only elementwise ops",
			    n->name, kn->name, g->nodes[n->in[0]].name);
			bad++;
		} else if (c == OC_REDUCTION && kk == KK_ROW_REDUCTION && i != kn->last &&
		    !n->at.keepdims) {
			diag_error(d, n->oploc, "reduction '%%%s' in row_reduction kernel '@%s' needs "
			    "keepdims=True: its rows are broadcast back over the kernel", n->name,
			    kn->name);
			bad++;
		}
		if (c == OC_CONTRACTION && !mm)
			mm = n;
	}
	if (bad)
		return bad;
	if (((kk == KK_MATMUL || kk == KK_OPAQUE) ||
	    (kk == KK_REDUCTION && ir_ops[root->op].cls == OC_ARGREDUCE)) &&
	    nops > 1) {
		diag_error(d, kn->nameloc, "kernel '@%s' is [%s] but holds %d ops; [%s] means "
		    "%s", kn->name, kind, nops, kind, kind_rule[kk]);
		return 1;
	}
	if (kk == KK_MATMUL_EPILOGUE && g->nodes[head].op != OP_MATMUL) {
		diag_error(d, kn->nameloc, "kernel '@%s' is [matmul_epilogue] but its first op "
		    "'%%%s' is not a matmul", kn->name, g->nodes[head].name);
		return 1;
	}
	if (kk == KK_CONV_EPILOGUE && g->nodes[kn->first].op != OP_CONV2D) {
		diag_error(d, kn->nameloc, "kernel '@%s' is [conv_epilogue] but its first op "
		    "'%%%s' is not a conv2d", kn->name, g->nodes[kn->first].name);
		return 1;
	}
	if (kk == KK_REDUCTION && ir_ops[root->op].cls != OC_REDUCTION &&
	    ir_ops[root->op].cls != OC_ARGREDUCE) {
		diag_error(d, kn->nameloc, "kernel '@%s' is [reduction] but its last op '%%%s' "
		    "is not a reduction; [reduction] means %s", kn->name, root->name,
		    kind_rule[kk]);
		return 1;
	}
	iter = ir_ops[root->op].cls == OC_REDUCTION || ir_ops[root->op].cls == OC_ARGREDUCE ?
	    g->nodes[root->in[0]].type : root->type;
	if (iter.rank < 0)
		return 0;
	for (int i = kn->first; i <= kn->last; i++) {
		const Node *n = &g->nodes[i];
		bool red = ir_ops[n->op].cls == OC_REDUCTION || ir_ops[n->op].cls == OC_ARGREDUCE;
		const Type *t = red && i != kn->last ? &g->nodes[n->in[0]].type : &n->type;

		if (kernel_view(g, kn, i) || t->rank < 0 || (red && i == kn->last) ||
		    ir_same_dims(t, &iter))
			continue;
		if (kk == KK_ROW_REDUCTION && !red && ir_is_row_stat(t, &iter))
			continue;        /* an op on the rows' statistics (var + eps) */
		diag_error(d, n->loc, red ? "'%%%s' reduces a %s operand, but kernel '@%s' "
		    "iterates over %s" : "'%%%s' is %s, but kernel '@%s' iterates over %s",
		    n->name, ir_shape_str(t, s1), kn->name, ir_shape_str(&iter, s2));
		bad++;
	}
	return bad;
}

/* Every kernel against its kind, and its single output: a value made
 * inside a kernel is seen outside only if it is the kernel's root. */
static int
verify_kernel_kinds(const Graph *g, Diag *d)
{
	int bad = 0;

	for (int k = 0; k < g->nkernels; k++)
		bad += verify_kernel_kind(g, k, d);
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		for (int j = 0; j < n->nin; j++) {
			const Node *p = &g->nodes[n->in[j]];
			const Kernel *kp = p->kernel >= 0 ? &g->kernels[p->kernel] : NULL;

			if (kp && n->kernel != p->kernel && n->in[j] != kp->last) {
				diag_error(d, n->inloc[j], "'%%%s' is used outside kernel '@%s', but "
				    "only its root '%%%s' leaves it", p->name, kp->name,
				    g->nodes[kp->last].name);
				bad++;
			}
		}
	}
	for (int i = 0; i < g->nret; i++) {
		const Node *p = &g->nodes[g->ret[i]];
		const Kernel *kp = p->kernel >= 0 ? &g->kernels[p->kernel] : NULL;

		if (kp && g->ret[i] != kp->last) {
			diag_error(d, g->retloc, "'return' names '%%%s', but only kernel '@%s''s root "
			    "'%%%s' leaves it", p->name, kp->name, g->nodes[kp->last].name);
			bad++;
		}
	}
	return bad;
}

static int
verify(const Graph *g, Diag *d, bool input)
{
	int bad = 0;

	for (int i = 0; i < g->nnodes; i++)
		bad += verify_node(g, i, d, input);
	bad += verify_kernels(g, d);
	if (g->ret && g->nret == 0) {
		diag_error(d, g->retloc, "'return' names no value");
		bad++;
	}
	for (int i = 0; i < g->nret; i++)
		if (g->ret[i] < 0 || g->ret[i] >= g->nnodes) {
			diag_error(d, g->retloc, "'return' names a value that does not exist");
			bad++;
		}
	if (bad == 0)                /* the kind rules assume sound nodes, kernels, return */
		bad += verify_kernel_kinds(g, d);
	return bad;
}

int
ir_verify(const Graph *g, Diag *d)
{
	return verify(g, d, false);
}

int
ir_verify_input(const Graph *g, Diag *d)
{
	return verify(g, d, true);
}
