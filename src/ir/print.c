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
#include "tile.h"

void
ir_fmt_double(char *buf, size_t n, double v)
{
	int p, e;

	if (isnan(v)) {
		snprintf(buf, n, "nan");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, n, v < 0 ? "-inf" : "inf");
		return;
	}
	/* The fewest significant digits that read back, then written the way
	 * Python's repr and numpy write them: positional for exponents -4..15
	 * (100.0, not %g's 1e+02), scientific outside. */
	for (p = 1; p < 17; p++) {
		snprintf(buf, n, "%.*e", p - 1, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	snprintf(buf, n, "%.*e", p - 1, v);
	e = atoi(strchr(buf, 'e') + 1);
	if (e >= -4 && e < 16)
		snprintf(buf, n, "%.*f", p - 1 - e > 0 ? p - 1 - e : 0, v);
	if (!strpbrk(buf, ".e"))
		strncat(buf, ".0", n - strlen(buf) - 1);
}

/* A small buffered writer: printing a million ops through fprintf's format
 * interpreter costs more than parsing them. */
typedef struct Out {
	FILE *f;
	size_t n;
	char buf[1 << 16];
} Out;

static void
flush(Out *o)
{
	fwrite(o->buf, 1, o->n, o->f);
	o->n = 0;
}

static void
put(Out *o, const char *s, size_t n)
{
	if (n > sizeof o->buf - o->n) {
		flush(o);
		if (n > sizeof o->buf) {
			fwrite(s, 1, n, o->f);
			return;
		}
	}
	memcpy(o->buf + o->n, s, n);
	o->n += n;
}

static void
puts_(Out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void
put_int(Out *o, long long v)
{
	char tmp[24];
	int i = sizeof tmp;
	unsigned long long u = v < 0 ? -(unsigned long long)v : (unsigned long long)v;

	do
		tmp[--i] = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		tmp[--i] = '-';
	put(o, tmp + i, sizeof tmp - (size_t)i);
}

static void
print_ints(Out *o, const int64_t *v, int n)
{
	put(o, "(", 1);
	for (int i = 0; i < n; i++) {
		if (i)
			put(o, ", ", 2);
		put_int(o, v[i]);
	}
	if (n == 1)
		put(o, ",", 1);
	put(o, ")", 1);
}

/* Whether perm is transpose's default for an operand of the given rank:
 * the last two axes swapped.  With the rank unknown (untyped operand) a
 * written perm is kept: dropping one whose length is wrong would turn an
 * invalid transpose into a valid one. */
static bool
default_perm(const Attrs *at, int rank)
{
	int n = at->nperm;

	if (rank != n)
		return false;
	for (int i = 0; i < n; i++) {
		int64_t want = i;

		if (n >= 2 && i == n - 2)
			want = n - 1;
		else if (n >= 2 && i == n - 1)
			want = n - 2;
		/* (-3, -1, -2) is the default too, spelt from the end. */
		if (at->perm[i] != want && at->perm[i] != want - n)
			return false;
	}
	return true;
}

static void
print_attrs(Out *o, const Graph *g, const Node *n)
{
	char num[64];

	for (int a = 0; a < ATTR_COUNT; a++) {
		if (!(n->at.set & (1u << a)))
			continue;
		switch (a) {
		case ATTR_VALUE:
			ir_fmt_double(num, sizeof num, n->at.value);
			puts_(o, " value=");
			puts_(o, num);
			break;
		case ATTR_AXIS:
			puts_(o, " axis=");
			put_int(o, n->at.axis);
			break;
		case ATTR_KEEPDIMS:
			if (n->at.keepdims)
				puts_(o, " keepdims=True");
			break;
		case ATTR_PERM:
			if (!default_perm(&n->at, g->nodes[n->in[0]].type.rank)) {
				puts_(o, " perm=");
				print_ints(o, n->at.perm, n->at.nperm);
			}
			break;
		case ATTR_SHAPE:
			puts_(o, " shape=");
			print_ints(o, n->at.shape, n->at.nshape);
			break;
		}
	}
}

static void
print_node(Out *o, const Graph *g, const Node *n, const char *indent)
{
	puts_(o, indent);
	put(o, "%", 1);
	puts_(o, n->name);
	put(o, " = ", 3);
	puts_(o, ir_ops[n->op].name);
	put(o, "(", 1);
	for (int j = 0; j < n->nin; j++) {
		put(o, j ? ", %" : "%", j ? 3 : 1);
		puts_(o, g->nodes[n->in[j]].name);
	}
	put(o, ")", 1);
	if (n->type.rank >= 0) {
		put(o, " : ", 3);
		print_ints(o, n->type.dim, n->type.rank);
		if (n->type.dt != DT_F64) {
			put(o, " ", 1);
			puts_(o, ir_dtype_name(n->type.dt));
		}
	}
	print_attrs(o, g, n);
	put(o, "\n", 1);
}

static void
print_kernel_head(Out *o, const Kernel *k)
{
	puts_(o, "  kernel @");
	puts_(o, k->name);
	puts_(o, " [");
	puts_(o, ir_kernel_kinds[k->kind]);
	put(o, "]", 1);
	for (int a = 0; a < KA_COUNT; a++)
		if (k->kset & (1u << a)) {
			put(o, " ", 1);
			puts_(o, ir_kattr_names[a]);
			put(o, "=", 1);
			put_int(o, k->kattr[a]);
		}
	puts_(o, " {\n");
}

void
ir_print(FILE *f, const Graph *g)
{
	Out *o = xmalloc(sizeof *o);

	o->f = f;
	o->n = 0;
	puts_(o, "graph ");
	if (g->name) {
		put(o, "@", 1);
		puts_(o, g->name);
		put(o, " ", 1);
	}
	puts_(o, "{\n");
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (n->tile) {
			flush(o);               /* tile_print writes to f directly */
			tile_print(f, g, n);
			continue;
		}
		if (n->kernel >= 0) {
			const Kernel *k = &g->kernels[n->kernel];

			if (i == k->first)
				print_kernel_head(o, k);
			print_node(o, g, n, "    ");
			if (i == k->last)
				puts_(o, "  }\n");
			continue;
		}
		print_node(o, g, n, "  ");
	}
	if (!ir_return_is_default(g)) {
		puts_(o, "  return");
		for (int i = 0; i < g->nret; i++) {
			puts_(o, i ? ", %" : " %");
			puts_(o, g->nodes[g->ret[i]].name);
		}
		put(o, "\n", 1);
	}
	puts_(o, "}\n");
	flush(o);
	free(o);
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
