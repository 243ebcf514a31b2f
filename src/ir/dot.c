/*
 * dot.c: the graph as a Graphviz picture (aicm-opt --emit=dot).
 *
 * What the picture is for is the question fuse{explain=true} answers in
 * words: which values make a round trip through memory.  So kernels become
 * filled clusters labelled "@name [kind]" (and any tile configuration),
 * coloured by kind; an edge inside a kernel is solid; an edge between two
 * compute ops that are not in the same kernel is dashed and labelled with
 * the traffic that fusing it alone would save, as fuse{explain=true} counts
 * it (docs/passes.md, "explain's bytes"): the consumer's kernel's read of
 * the producer's tensor, and its write too when that kernel is the last
 * reader outside the producer's and 'return' does not name it;
 * edges from sources, which live in memory anyway, are grey.  A kernel's
 * root, the only value that leaves it, has a heavy border.  Output is
 * deterministic (node order), so goldens can hold it.
 */
#include <stdlib.h>

#include "ir.h"
#include "tile.h"

static const char *const kind_color[KK_COUNT] = {
	[KK_MATMUL_EPILOGUE] = "#cfe2f3",
	[KK_MATMUL] = "#d9d2e9",
	[KK_ELEMENTWISE] = "#d9ead3",
	[KK_REDUCTION] = "#fff2cc",
	[KK_ROW_REDUCTION] = "#fce5cd",
	[KK_ATTENTION] = "#f4cccc",
	[KK_OPAQUE] = "#eeeeee",
	[KK_CONV_EPILOGUE] = "#d0e0e3",
};

/* "8.2 KB": the seed's units, 1 KB = 1000 bytes; times copies of t. */
static void
fmt_bytes(char *buf, size_t n, const Type *t, int copies)
{
	int64_t e = ir_type_numel(t);
	double b;

	if (t->rank < 0 || e < 0) {
		snprintf(buf, n, "?");
		return;
	}
	b = (double)copies * (double)e * (double)ir_dtype_size(t->dt);
	if (b < 1000)
		snprintf(buf, n, "%.0f B", b);
	else if (b < 1e6)
		snprintf(buf, n, "%.1f KB", b / 1e3);
	else if (b < 1e9)
		snprintf(buf, n, "%.1f MB", b / 1e6);
	else
		snprintf(buf, n, "%.1f GB", b / 1e9);
}

/* The attributes that shape the op (not a const's data), compactly:
 * "axis=1 keepdims perm=(1,0)". */
static void
attrs(FILE *f, const Node *n)
{
	for (int a = 0; a < ATTR_COUNT; a++) {
		IntTuple t;

		if (!(n->at.set & (1u << a)) || a == ATTR_VALUES || a == ATTR_FILE ||
		    (a == ATTR_VALUE && n->op == OP_CONST))
			continue;
		switch (ir_attrs[a].kind) {
		case AK_AXIS:
			if (!ir_axis_is_tuple(&n->at)) {
				fprintf(f, " axis=%lld", (long long)n->at.axis);
				break;
			}
			/* fall through */
		case AK_INTS:
			t = ir_attr_ints(&n->at, (AttrId)a);
			fprintf(f, " %s=(", ir_attrs[a].name);
			for (int i = 0; i < t.n; i++)
				fprintf(f, "%s%lld", i ? "," : "", (long long)t.v[i]);
			fprintf(f, ")");
			break;
		case AK_BOOL: {
			bool v = a == ATTR_KEEPDIMS ? n->at.keepdims : a == ATTR_LAST ? n->at.last :
			    a == ATTR_CEIL_MODE ? n->at.ceil_mode : n->at.count_include_pad;

			if (v)
				fprintf(f, " %s", ir_attrs[a].name);
			break;
		}
		case AK_INT:
			fprintf(f, " %s=%lld", ir_attrs[a].name, (long long)n->at.groups);
			break;
		case AK_TYPE:
			fprintf(f, " to=%s", ir_dtype_name(n->at.to));
			break;
		case AK_FLOAT:
			fprintf(f, " value=%g", n->at.value);
			break;
		default:
			break;
		}
	}
}

static void
node(FILE *f, const Graph *g, int i, const char *indent)
{
	const Node *n = &g->nodes[i];
	char s[IR_TYPE_STR];
	bool root = n->kernel >= 0 && g->kernels[n->kernel].last == i;

	fprintf(f, "%sn%d [label=\"%%%s = ", indent, i, n->name);
	if (n->op == OP_TILED)
		fprintf(f, "tiled @%s [%s]", n->tile->name, ir_kernel_kinds[n->tile->kind]);
	else
		fprintf(f, "%s", ir_ops[n->op].name);
	attrs(f, n);
	fprintf(f, "\\n%s%s%s\"", n->type.rank >= 0 ? ir_shape_str(&n->type, s) : "?",
	    n->type.rank >= 0 && n->type.dt != DT_F64 ? " " : "",
	    n->type.rank >= 0 && n->type.dt != DT_F64 ? ir_dtype_name(n->type.dt) : "");
	if (ir_ops[n->op].cls == OC_SOURCE)
		fprintf(f, ", style=\"rounded,filled\", fillcolor=\"#ffffff\", color=\"#888888\"");
	else
		fprintf(f, ", style=filled, fillcolor=\"#ffffff\"%s", root ? ", penwidth=2" : "");
	fprintf(f, "];\n");
}

/* The unit that reads a value once: node i's kernel, or i alone when it is
 * in none (an op before fuse, a tiled kernel). */
static int
unit(const Graph *g, int i)
{
	int k = g->nodes[i].kernel;

	return k >= 0 && k < g->nkernels ? k : -2 - i;
}

/* The operands of node i: in[], or a tiled kernel's arguments. */
static int
nargs(const Node *n)
{
	return n->op == OP_TILED ? n->tile->nargs : n->nin;
}

static int
arg(const Node *n, int j)
{
	return n->op == OP_TILED ? n->tile->args[j] : n->in[j];
}

/* nout[p]: the distinct units other than p's own that read p; keep[p]: p
 * is returned, so its write stays.  A kernel's ops are contiguous, so one
 * unit's reads of p come one after another in node order. */
static void
readers(const Graph *g, int *nout, int *last, bool *keep)
{
	int *o, no = ir_outputs(g, &o);

	for (int i = 0; i < g->nnodes; i++) {
		nout[i] = 0;
		last[i] = unit(g, i);
		keep[i] = false;
	}
	for (int i = 0; i < no; i++)
		keep[o[i]] = true;
	free(o);
	for (int c = 0; c < g->nnodes; c++)
		for (int j = 0; j < nargs(&g->nodes[c]); j++) {
			int p = arg(&g->nodes[c], j), u = unit(g, c);

			if (last[p] != u && u != unit(g, p)) {
				last[p] = u;
				nout[p]++;
			}
		}
}

static void
edge(FILE *f, const Graph *g, int p, int c, const int *nout, const bool *keep)
{
	const Node *P = &g->nodes[p], *C = &g->nodes[c];
	char b[32];

	if (ir_ops[P->op].cls == OC_SOURCE) {
		fprintf(f, "  n%d -> n%d [color=\"#888888\"];\n", p, c);
	} else if (P->kernel >= 0 && P->kernel == C->kernel) {
		fprintf(f, "  n%d -> n%d;\n", p, c);
	} else {
		fmt_bytes(b, sizeof b, &P->type, nout[p] > 1 || keep[p] ? 1 : 2);
		fprintf(f, "  n%d -> n%d [style=dashed, label=\"%s\", fontsize=10];\n", p, c, b);
	}
}

void
ir_print_dot(FILE *f, const Graph *g)
{
	int ncomp = 0, *nout = xmalloc_huge(sizeof(int) * (2 * (size_t)g->nnodes + 1));
	int *last = nout + g->nnodes;
	bool *keep = xmalloc((size_t)g->nnodes + 1);

	for (int i = 0; i < g->nnodes; i++)
		ncomp += ir_ops[g->nodes[i].op].cls != OC_SOURCE;
	fprintf(f, "digraph \"%s\" {\n", g->name ? g->name : "graph");
	fprintf(f, "  label=\"%s%s%s%d compute node%s, %d kernel%s; dashed edges go through "
	    "memory\";\n", g->name ? "@" : "", g->name ? g->name : "", g->name ? ": " : "",
	    ncomp, ncomp == 1 ? "" : "s", g->nkernels, g->nkernels == 1 ? "" : "s");
	fprintf(f, "  labelloc=t;\n  rankdir=TB;\n  fontname=\"monospace\";\n");
	fprintf(f, "  node [shape=box, fontname=\"monospace\", fontsize=11];\n");
	fprintf(f, "  edge [fontname=\"monospace\"];\n");
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (n->kernel < 0 || n->kernel >= g->nkernels) {
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
			fprintf(f, "\";\n    labeljust=l; style=filled; color=\"#999999\"; "
			    "fillcolor=\"%s\";\n", kind_color[k->kind]);
		}
		node(f, g, i, "    ");
		if (i == g->kernels[n->kernel].last)
			fprintf(f, "  }\n");
	}
	readers(g, nout, last, keep);
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < nargs(&g->nodes[i]); j++)
			edge(f, g, arg(&g->nodes[i], j), i, nout, keep);
	free(nout);
	free(keep);
	fprintf(f, "}\n");
}
