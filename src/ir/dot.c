/*
 * dot.c: the graph as a Graphviz picture (aicm-opt --emit=dot).
 *
 * Kernels become clusters labelled "@name [kind]" and any tile
 * configuration; sources are drawn as plain boxes; an edge between two
 * compute ops that are not in the same kernel is dashed, since that value
 * makes a round trip through memory: the edges fusion did not take.
 */
#include "ir.h"

static void
node(FILE *f, const Graph *g, int i, const char *indent)
{
	const Node *n = &g->nodes[i];
	char s[IR_TYPE_STR];

	fprintf(f, "%sn%d [label=\"%%%s = %s\\n%s%s\"%s];\n", indent, i, n->name,
	    ir_ops[n->op].name, n->type.rank >= 0 ? ir_shape_str(&n->type, s) : "?",
	    n->type.rank >= 0 && n->type.dt == DT_F32 ? " f32" : "",
	    ir_ops[n->op].cls == OC_SOURCE ? ", shape=box, style=rounded" : "");
}

void
ir_print_dot(FILE *f, const Graph *g)
{
	fprintf(f, "digraph \"%s\" {\n", g->name ? g->name : "graph");
	fprintf(f, "  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n");
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (n->kernel < 0) {
			node(f, g, i, "  ");
			continue;
		}
		if (i == g->kernels[n->kernel].first) {
			const Kernel *k = &g->kernels[n->kernel];

			fprintf(f, "  subgraph cluster_%d {\n    label=\"@%s [%s]", n->kernel, k->name,
			    ir_kernel_kinds[k->kind]);
			for (int a = 0; a < KA_COUNT; a++)
				if (k->kset & (1u << a))
					fprintf(f, " %s=%lld", ir_kattr_names[a], (long long)k->kattr[a]);
			fprintf(f, "\";\n    style=filled; color=lightgrey;\n");
		}
		node(f, g, i, "    ");
		if (i == g->kernels[n->kernel].last)
			fprintf(f, "  }\n");
	}
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		for (int j = 0; j < n->nin; j++) {
			const Node *p = &g->nodes[n->in[j]];
			bool unfused = ir_ops[p->op].cls != OC_SOURCE &&
			    (p->kernel < 0 || p->kernel != n->kernel);

			fprintf(f, "  n%d -> n%d%s;\n", n->in[j], i, unfused ? " [style=dashed]" : "");
		}
	}
	fprintf(f, "}\n");
}
