/*
 * verify.c: the IR's invariants, checked after parsing and after every pass.
 *
 * The parser already refuses most malformed input with better words; the
 * verifier is the net under the passes (QBE's ssacheck between phases):
 * SSA order, arity and attributes against the op table, every type that can
 * be checked against the shape rules, kernels as contiguous non-empty runs
 * with unique names and no sources, and a valid return list.
 */
#include <string.h>

#include "pass.h"
#include "tile.h"

static Loc
where(const Node *n)
{
	return n->loc;
}

static int
verify_node(const Graph *g, int i, Diag *d)
{
	const Node *n = &g->nodes[i];
	const OpInfo *op;
	int bad = 0;

	if (n->tile)
		return tile_verify(g, i, d);
	if ((unsigned)n->op >= OP_COUNT) {
		diag_error(d, where(n), "'%%%s' has an invalid op id %d", n->name, (int)n->op);
		return 1;
	}
	op = &ir_ops[n->op];
	if (n->nin != op->arity) {
		diag_error(d, where(n), "'%s' takes %d operands, '%%%s' has %d", op->name, op->arity,
		    n->name, n->nin);
		return 1;
	}
	if (ir_lookup(g, n->name) != i) {
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
	}
	return bad;
}

static int
verify_kernels(const Graph *g, Diag *d)
{
	int bad = 0;

	for (int k = 0; k < g->nkernels; k++) {
		const Kernel *kn = &g->kernels[k];

		for (int j = 0; j < k; j++)
			if (!strcmp(g->kernels[j].name, kn->name)) {
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
	return bad;
}

int
ir_verify(const Graph *g, Diag *d)
{
	int bad = 0;

	for (int i = 0; i < g->nnodes; i++)
		bad += verify_node(g, i, d);
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
	return bad;
}
