/*
 * dot.c: the graph as a Graphviz picture (aicm-opt --emit=dot).
 *
 * What the picture is for is the question fuse{explain=true} answers in
 * words: which values make a round trip through memory.  So kernels become
 * filled clusters labelled "@name [kind]" (and any tile configuration),
 * coloured by kind; an edge inside a kernel is solid; an edge between two
 * compute ops that are not in the same kernel is dashed and labelled with
 * the traffic it costs (the producer's tensor written once and read once);
 * edges from sources, which live in memory anyway, are grey.  A kernel's
 * root, the only value that leaves it, has a heavy border.  Output is
 * deterministic (node order), so goldens can hold it.
 *
 * After lower-tiled a kernel is a tiled node: it is drawn as a cluster too,
 * labelled with its grid, block sizes and program count, holding one box
 * per load and store of its body with the bytes that access moves (one
 * tile, and over the whole grid), so the picture still says where the
 * traffic is; the operands' edges go into the loads that read them.
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

/* A kind's fill; a kind added to ir.h before it has a colour here is
 * grey, never a NULL in the picture. */
static const char *
color(KernelKind k)
{
	return (unsigned)k < KK_COUNT && kind_color[k] ? kind_color[k] : "#eeeeee";
}

static void fmt_b(char *buf, size_t n, double b);
static void tail(char *buf, size_t n, const Graph *g, int p);

/* "8.2 KB": the seed's units, 1 KB = 1000 bytes; times copies of t. */
static void
fmt_bytes(char *buf, size_t n, const Type *t, int copies)
{
	int64_t e = ir_type_numel(t);

	if (t->rank < 0 || e < 0) {
		snprintf(buf, n, "?");
		return;
	}
	fmt_b(buf, n, (double)copies * (double)e * (double)ir_dtype_size(t->dt));
}

static void
fmt_b(char *buf, size_t n, double b)
{
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
	char b[32], from[48];

	tail(from, sizeof from, g, p);
	if (ir_ops[P->op].cls == OC_SOURCE) {
		fprintf(f, "  %s -> n%d [color=\"#888888\"];\n", from, c);
	} else if (P->kernel >= 0 && P->kernel == C->kernel) {
		fprintf(f, "  %s -> n%d;\n", from, c);
	} else {
		fmt_bytes(b, sizeof b, &P->type, nout[p] > 1 || keep[p] ? 1 : 2);
		fprintf(f, "  %s -> n%d [style=dashed, label=\"%s\", fontsize=10];\n", from, c, b);
	}
}

/* ---- lowered kernels ----------------------------------------------- */

/* How many times instruction k of f runs in one program: the product of
 * the trip counts of the loops around it. */
static int64_t
trips(const TileFn *f, int k)
{
	int64_t t = 1;

	for (int j = 0; j < k; j++) {
		const TileInst *in = &f->insts[j];

		if (in->op == TO_FOR && in->end > k && in->step > 0)
			t *= (in->hi - in->lo + in->step - 1) / in->step;
	}
	return t;
}

/* The bytes of one tile of f's value v ("?" for a scalar). */
static double
tile_bytes(const TileFn *f, int v)
{
	const TileVal *tv;
	double e = 1;

	if (v < 0 || v >= f->nvals || f->vals[v].rank < 0)
		return -1;
	tv = &f->vals[v];
	for (int i = 0; i < tv->rank; i++)
		e *= (double)tv->shape[i];
	return e * (double)ir_dtype_size(tv->dt);
}

static int64_t
programs(const TileFn *f)
{
	return f->grid[0] * (f->grid[1] > 0 ? f->grid[1] : 1) * (f->grid[2] > 0 ? f->grid[2] : 1);
}

/* The memory access of instruction k ("load %x [32, 48] f32") and its
 * bytes over the whole grid: one tile's bytes, times the loops' trips,
 * times the programs.  Masked-off lanes are counted, so it is an upper
 * bound where tiles are ragged (aicm-run --stats counts the real bytes). */
static double
access(const Graph *g, int node, int k, char *buf, size_t n)
{
	const TileFn *f = g->nodes[node].tile;
	const TileInst *in = &f->insts[k];
	int v = tile_ops[in->op].form == TF_STORE ? in->in[0] : in->res;
	double one = tile_bytes(f, v), all = -1;
	int64_t ntiles = 0;
	char shape[IR_TYPE_STR] = "scalar", b1[32] = "?", b2[32] = "?";
	const char *tensor = in->arg == TILE_RESULT ? g->nodes[node].name :
	    g->nodes[f->args[in->arg]].name;

	if (one >= 0) {
		const TileVal *tv = &f->vals[v];
		size_t m = (size_t)snprintf(shape, sizeof shape, "[");

		for (int i = 0; i < tv->rank && m < sizeof shape; i++)
			m += (size_t)snprintf(shape + m, sizeof shape - m, "%s%lld", i ? ", " : "",
			    (long long)tv->shape[i]);
		if (m < sizeof shape)
			snprintf(shape + m, sizeof shape - m, "]%s%s", tv->dt != DT_F64 ? " " : "",
			    tv->dt != DT_F64 ? ir_dtype_name(tv->dt) : "");
		ntiles = trips(f, k) * programs(f);
		all = one * (double)ntiles;
		fmt_b(b1, sizeof b1, one);
		fmt_b(b2, sizeof b2, all);
	}
	snprintf(buf, n, "%s %%%s %s\\n%s a tile x %lld = %s at most", tile_op_name(in), tensor,
	    shape, b1, (long long)ntiles, b2);
	return all;
}

/* A tiled node as a cluster: its label has the grid, the block sizes and
 * the program count; inside, one box per memory access of its body (loads
 * above the node, stores below it), each with its bytes; the edges from
 * the operands go to the loads that read them. */
static void
tiled_cluster(FILE *f, const Graph *g, int i)
{
	const Node *n = &g->nodes[i];
	const TileFn *t = n->tile;
	char buf[256];

	fprintf(f, "  subgraph cluster_t%d {\n    label=\"@%s [%s] grid=(%lld", i, t->name,
	    ir_kernel_kinds[t->kind], (long long)t->grid[0]);
	for (int a = 1; a < 3; a++)
		if (t->grid[a] > 1 || (a == 1 && t->grid[2] > 1))
			fprintf(f, ", %lld", (long long)t->grid[a]);
	fprintf(f, ")");
	for (int a = 0; a < KA_COUNT; a++)
		if (t->kset & (1u << a))
			fprintf(f, " %s=%lld", ir_kattr_names[a], (long long)t->kattr[a]);
	fprintf(f, "\\l%lld program%s, %d tile instruction%s\\l\";\n", (long long)programs(t),
	    programs(t) == 1 ? "" : "s", t->ninsts, t->ninsts == 1 ? "" : "s");
	fprintf(f, "    labeljust=l; style=filled; color=\"#999999\"; fillcolor=\"%s\";\n",
	    color(t->kind));
	for (int k = 0; k < t->ninsts; k++) {
		TileForm form = tile_ops[t->insts[k].op].form;

		if (form != TF_LOAD && form != TF_STORE)
			continue;
		access(g, i, k, buf, sizeof buf);
		fprintf(f, "    n%d_%d [label=\"%s\", shape=%s, style=filled, fillcolor=\"%s\", "
		    "fontsize=10];\n", i, k, buf, form == TF_LOAD ? "invhouse" : "house",
		    form == TF_LOAD ? "#ffffff" : "#f3f3f3");
	}
	node(f, g, i, "    ");
	fprintf(f, "  }\n");
}

/* Where a value leaves: a tiled node's last store, else the node. */
static void
tail(char *buf, size_t n, const Graph *g, int p)
{
	const Node *P = &g->nodes[p];

	snprintf(buf, n, "n%d", p);
	if (P->op == OP_TILED)
		for (int k = P->tile->ninsts - 1; k >= 0; k--)
			if (tile_ops[P->tile->insts[k].op].form == TF_STORE) {
				snprintf(buf, n, "n%d_%d", p, k);
				break;
			}
}

/* The edges of tiled node c: operand -> each load that reads it (labelled
 * with the load's bytes over the grid), load -> node, node -> store. */
static void
tiled_edges(FILE *f, const Graph *g, int c)
{
	const TileFn *t = g->nodes[c].tile;
	bool *drawn = xcalloc((size_t)t->nargs + 1, sizeof *drawn);
	char from[48], buf[256], b[32];

	for (int k = 0; k < t->ninsts; k++) {
		const TileInst *in = &t->insts[k];
		TileForm form = tile_ops[in->op].form;

		if (form == TF_STORE) {
			fprintf(f, "  n%d -> n%d_%d;\n", c, c, k);
			continue;
		}
		if (form != TF_LOAD)
			continue;
		fprintf(f, "  n%d_%d -> n%d;\n", c, k, c);
		if (in->arg == TILE_RESULT)
			continue;
		drawn[in->arg] = true;
		tail(from, sizeof from, g, t->args[in->arg]);
		fmt_b(b, sizeof b, access(g, c, k, buf, sizeof buf));
		if (ir_ops[g->nodes[t->args[in->arg]].op].cls == OC_SOURCE)
			fprintf(f, "  %s -> n%d_%d [color=\"#888888\"];\n", from, c, k);
		else
			fprintf(f, "  %s -> n%d_%d [style=dashed, label=\"%s\", fontsize=10];\n", from,
			    c, k, b);
	}
	/* an operand no load names (a shape-only operand) keeps a plain edge */
	for (int j = 0; j < t->nargs; j++)
		if (!drawn[j]) {
			tail(from, sizeof from, g, t->args[j]);
			fprintf(f, "  %s -> n%d [color=\"#888888\"];\n", from, c);
		}
	free(drawn);
}

void
ir_print_dot(FILE *f, const Graph *g)
{
	int ncomp = 0, ntiled = 0, nk, *nout = xmalloc_huge(sizeof(int) * (2 * (size_t)g->nnodes + 1));
	int *last = nout + g->nnodes;
	bool *keep = xmalloc((size_t)g->nnodes + 1);

	for (int i = 0; i < g->nnodes; i++) {
		ncomp += ir_ops[g->nodes[i].op].cls != OC_SOURCE;
		ntiled += g->nodes[i].op == OP_TILED;
	}
	/* after lower-tiled a kernel is a tiled node, no longer a Kernel */
	nk = g->nkernels + ntiled;
	fprintf(f, "digraph \"%s\" {\n", g->name ? g->name : "graph");
	fprintf(f, "  label=\"%s%s%s%d compute node%s, %d kernel%s%s; dashed edges go through "
	    "memory\";\n", g->name ? "@" : "", g->name ? g->name : "", g->name ? ": " : "",
	    ncomp, ncomp == 1 ? "" : "s", nk, nk == 1 ? "" : "s",
	    ntiled == 0 ? "" : ntiled == nk ? ", all tiled" : ", some tiled");
	fprintf(f, "  labelloc=t;\n  rankdir=TB;\n  fontname=\"monospace\";\n");
	fprintf(f, "  node [shape=box, fontname=\"monospace\", fontsize=11];\n");
	fprintf(f, "  edge [fontname=\"monospace\"];\n");
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (n->op == OP_TILED) {
			tiled_cluster(f, g, i);
			continue;
		}
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
			    "fillcolor=\"%s\";\n", color(k->kind));
		}
		node(f, g, i, "    ");
		if (i == g->kernels[n->kernel].last)
			fprintf(f, "  }\n");
	}
	readers(g, nout, last, keep);
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (n->op == OP_TILED)
			tiled_edges(f, g, i);
		else
			for (int j = 0; j < n->nin; j++)
				edge(f, g, n->in[j], i, nout, keep);
	}
	free(nout);
	free(keep);
	fprintf(f, "}\n");
}
