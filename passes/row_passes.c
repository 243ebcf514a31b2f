/*
 * row_passes.c: what each pass of a row_reduction reads when its row does
 * not fit in one tile (row_passes.h).  lower-tiled emits, in each pass, the
 * row values this file marks, and the cost model counts a load per marked
 * operand per pass: one rule, so that the model's bytes stay the
 * executor's (docs/tiled.md "Traffic rules").
 */
#include "row_passes.h"

bool
row_passes_fit(int64_t w, int64_t bn, int64_t rmax)
{
	int64_t p = 1;

	while (p < w && p <= rmax)
		p <<= 1;
	return p <= rmax && bn >= w;
}

bool
row_passes_is_row(const Graph *g, int first, int last, int x)
{
	const Type *t = &g->nodes[x].type;

	if (x >= first && x <= last && ir_ops[g->nodes[x].op].cls == OC_REDUCTION)
		return false;
	return t->rank >= 1 && t->dim[t->rank - 1] != 1;
}

int
row_passes_plan(const Graph *g, int first, int last, int *val, int *red)
{
	int n = 0;

	for (int i = first; i <= last; i++)
		if (ir_ops[g->nodes[i].op].cls == OC_REDUCTION) {
			val[n] = g->nodes[i].in[0];
			red[n++] = i;
		}
	if (ir_ops[g->nodes[last].op].cls != OC_REDUCTION) {
		val[n] = last;
		red[n++] = -1;
	}
	return n;
}

/* A backward sweep, not a recursion: a fused chain can be 40k ops long,
 * and the kernel's nodes are contiguous and in definition order. */
bool
row_passes_computed(const Graph *g, int first, int last, int x)
{
	return x >= first && x <= last && !ir_is_view_op(g, x);
}

void
row_passes_cone(const Graph *g, int first, int last, int v, int *mark, int stamp)
{
	if (!row_passes_computed(g, first, last, v) || !row_passes_is_row(g, first, last, v))
		return;
	mark[v - first] = stamp;
	for (int i = v; i >= first; i--) {
		const Node *n = &g->nodes[i];

		if (mark[i - first] != stamp)
			continue;
		for (int j = 0; j < n->nin; j++) {
			int x = n->in[j];

			if (row_passes_computed(g, first, last, x) &&
			    row_passes_is_row(g, first, last, x))
				mark[x - first] = stamp;
		}
	}
}
