/*
 * shape_infer.c: fill in every missing type and check every written one.
 *
 * One sweep in definition order suffices: SSA guarantees an operand's type
 * is settled before its users are visited.  A value whose type cannot be
 * inferred stays untyped, and so do its users, silently: the one error at
 * the root cause is worth more than a cascade after it.  Every independent
 * error is reported, up to the Diag's error limit; the tools' input
 * verifier (ir_verify_input), run before this pass, reports the same ones
 * (an unwritten type whose operands are known must be inferable), so that
 * a wrong written type does not hide them.
 */
#include "pass.h"

/* requires: nothing; preserves: kernels, names, order; fills: Node.type */
static int
run(Graph *g, const PassArgs *args, Diag *d)
{
	int bad = 0;

	(void)args;
	for (int i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		char err[IR_ERR_MAX];
		Loc at;
		Type t;
		bool known = true;

		if (ir_ops[n->op].cls == OC_SOURCE || n->op == OP_TILED)
			continue;               /* a tiled kernel carries its own types */
		for (int j = 0; j < n->nin; j++)
			known = known && g->nodes[n->in[j]].type.rank >= 0;
		if (!known)
			continue;
		if (n->type.rank >= 0) {
			if (ir_check_type(g, i, err, &at) != 0) {
				diag_error(d, at, "%s", err);
				n->type.rank = -1;      /* its users stay quiet */
				bad++;
			}
			continue;
		}
		if (ir_infer_type(g, i, &t, err, &at) != 0) {
			diag_error(d, at, "%s", err);
			bad++;
			continue;
		}
		n->type = t;
	}
	/* Some kernel rules need shapes (a row_reduction reduces the last axis,
	 * a kernel's ops share its iteration shape): an input that breaks them
	 * is found only now, and is the input's error, not this pass's. */
	if (!bad && g->nkernels > 0 && ir_verify(g, d) != 0)
		bad++;
	return bad ? -1 : 0;
}

const Pass pass_shape_infer = {
	.name = "shape-infer",
	.summary = "fill in missing types and check written ones (numpy broadcasting)",
	.opts = (const PassOpt[]){{0}},
	.run = run,
};
