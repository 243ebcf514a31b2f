/*
 * print.c: the canonical text form of a graph.
 *
 * Two-space indent, ", " between operands and dimensions, attributes in the
 * op's declared order with defaults left out, floats as the shortest text
 * that reads back to the same double.  Whatever the parser accepts, the
 * printer writes one way, and print(parse(print(x))) == print(x).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ir.h"

void
ir_fmt_double(char *buf, size_t n, double v)
{
	if (isnan(v)) {
		snprintf(buf, n, "nan");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, n, v < 0 ? "-inf" : "inf");
		return;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, n, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".e"))
		strncat(buf, ".0", n - strlen(buf) - 1);
}

static void
print_ints(FILE *f, const int64_t *v, int n)
{
	fputc('(', f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%lld", i ? ", " : "", (long long)v[i]);
	if (n == 1)
		fputc(',', f);
	fputc(')', f);
}

/* Whether perm is transpose's default: the last two axes swapped. */
static bool
default_perm(const Attrs *at)
{
	int n = at->nperm;

	for (int i = 0; i < n; i++) {
		int64_t want = i;

		if (n >= 2 && i == n - 2)
			want = n - 1;
		else if (n >= 2 && i == n - 1)
			want = n - 2;
		if (at->perm[i] != want)
			return false;
	}
	return true;
}

static void
print_attrs(FILE *f, const Node *n)
{
	char num[64];

	for (int a = 0; a < ATTR_COUNT; a++) {
		if (!(n->at.set & (1u << a)))
			continue;
		switch (a) {
		case ATTR_VALUE:
			ir_fmt_double(num, sizeof num, n->at.value);
			fprintf(f, " value=%s", num);
			break;
		case ATTR_AXIS:
			fprintf(f, " axis=%lld", (long long)n->at.axis);
			break;
		case ATTR_KEEPDIMS:
			if (n->at.keepdims)
				fprintf(f, " keepdims=True");
			break;
		case ATTR_PERM:
			if (!default_perm(&n->at)) {
				fprintf(f, " perm=");
				print_ints(f, n->at.perm, n->at.nperm);
			}
			break;
		case ATTR_SHAPE:
			fprintf(f, " shape=");
			print_ints(f, n->at.shape, n->at.nshape);
			break;
		}
	}
}

static void
print_node(FILE *f, const Graph *g, const Node *n, const char *indent)
{
	fprintf(f, "%s%%%s = %s(", indent, n->name, ir_ops[n->op].name);
	for (int j = 0; j < n->nin; j++)
		fprintf(f, "%s%%%s", j ? ", " : "", g->nodes[n->in[j]].name);
	fputc(')', f);
	if (n->type.rank >= 0) {
		fprintf(f, " : ");
		print_ints(f, n->type.dim, n->type.rank);
		if (n->type.dt != DT_F64)
			fprintf(f, " %s", ir_dtype_name(n->type.dt));
	}
	print_attrs(f, n);
	fputc('\n', f);
}

static void
print_kernel_head(FILE *f, const Kernel *k)
{
	fprintf(f, "  kernel @%s [%s]", k->name, ir_kernel_kinds[k->kind]);
	for (int a = 0; a < KA_COUNT; a++)
		if (k->kset & (1u << a))
			fprintf(f, " %s=%lld", ir_kattr_names[a], (long long)k->kattr[a]);
	fprintf(f, " {\n");
}

void
ir_print(FILE *f, const Graph *g)
{
	fprintf(f, "graph ");
	if (g->name)
		fprintf(f, "@%s ", g->name);
	fprintf(f, "{\n");
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (n->kernel >= 0) {
			const Kernel *k = &g->kernels[n->kernel];

			if (i == k->first)
				print_kernel_head(f, k);
			print_node(f, g, n, "    ");
			if (i == k->last)
				fprintf(f, "  }\n");
			continue;
		}
		print_node(f, g, n, "  ");
	}
	if (!ir_return_is_default(g)) {
		fprintf(f, "  return");
		for (int i = 0; i < g->nret; i++)
			fprintf(f, "%s%%%s", i ? ", " : " ", g->nodes[g->ret[i]].name);
		fputc('\n', f);
	}
	fprintf(f, "}\n");
}

char *
ir_print_str(const Graph *g, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		AICM_BUG("open_memstream failed");
	ir_print(f, g);
	fclose(f);
	if (len)
		*len = n;
	return buf;
}
