/*
 * print.c: the canonical text form of a graph.
 *
 * Two-space indent, ", " between operands and dimensions, attributes in the
 * op's declared order with defaults left out, floats as the shortest text
 * that reads back to the same double.  Whatever the parser accepts, the
 * printer writes one way, and print(parse(print(x))) == print(x); tiled
 * bodies too (docs/tiled.md).
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
		/* The sign too: a constant's sign bit is the sign of the NaNs it
		 * makes, so "nan" for -nan would change what the program computes. */
		snprintf(buf, n, signbit(v) ? "-nan" : "nan");
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
	IntTuple p = ir_attr_ints(at, ATTR_PERM);
	int n = p.n;

	if (rank != n)
		return false;
	for (int i = 0; i < n; i++) {
		int64_t want = i;

		if (n >= 2 && i == n - 2)
			want = n - 1;
		else if (n >= 2 && i == n - 1)
			want = n - 2;
		/* (-3, -1, -2) is the default too, spelt from the end. */
		if (p.v[i] != want && p.v[i] != want - n)
			return false;
	}
	return true;
}

/* A string in the text format's syntax: '"', '\\' and the bytes outside
 * printable ASCII are escaped, so that it reads back the same. */
static void
put_string(Out *o, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	put(o, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char e[4] = {'\\', 0, 0, 0};
		size_t n = 2;

		if (*p == '"' || *p == '\\') {
			e[1] = (char)*p;
		} else if (*p == '\n') {
			e[1] = 'n';
		} else if (*p == '\t') {
			e[1] = 't';
		} else if (*p < 0x20 || *p >= 0x7f) {
			e[1] = 'x';
			e[2] = hex[*p >> 4];
			e[3] = hex[*p & 15];
			n = 4;
		} else {
			put(o, (const char *)p, 1);
			continue;
		}
		put(o, e, n);
	}
	put(o, "\"", 1);
}

/* One number of value= or values= in the type dt: integers exactly,
 * bools as True and False, floats shortest round-trip. */
static void
put_number(Out *o, DType dt, double v, int64_t iv)
{
	char num[64];

	if (dt == DT_BOOL) {
		puts_(o, iv ? "True" : "False");
	} else if (ir_dtype_is_int(dt)) {
		put_int(o, iv);
	} else {
		ir_fmt_double(num, sizeof num, v);
		puts_(o, num);
	}
}

/* The element type value= and values= are in: the node's (a const's, or a
 * pad's result), else its operand's; unknown, as written. */
static DType
data_type(const Graph *g, const Node *n)
{
	if (n->type.rank >= 0)
		return n->type.dt;
	if (n->nin > 0 && g->nodes[n->in[0]].type.rank >= 0)
		return g->nodes[n->in[0]].type.dt;
	return n->at.value_int ? DT_I64 : DT_F64;
}

static void
print_attrs(Out *o, const Graph *g, const Node *n)
{
	for (int a = 0; a < ATTR_COUNT; a++) {
		bool flag;

		if (!(n->at.set & (1u << a)))
			continue;
		switch (a) {
		case ATTR_VALUE:
			puts_(o, " value=");
			put_number(o, data_type(g, n), n->at.value, n->at.ivalue);
			break;
		case ATTR_VALUES:
			puts_(o, " values=(");
			for (int i = 0; i < n->at.nvalues; i++) {
				if (i)
					puts_(o, ", ");
				put_number(o, data_type(g, n), n->at.values[i], n->at.ivalues[i]);
			}
			puts_(o, n->at.nvalues == 1 ? ",)" : ")");
			break;
		case ATTR_FILE:
			puts_(o, " file=");
			put_string(o, n->at.file);
			break;
		case ATTR_TO:
			puts_(o, " to=");
			puts_(o, ir_dtype_name(n->at.to));
			break;
		case ATTR_AXIS:
			puts_(o, " axis=");
			if (ir_axis_is_tuple(&n->at))
				print_ints(o, n->at.tup[ATTR_AXIS].v, n->at.tup[ATTR_AXIS].n);
			else
				put_int(o, n->at.axis);
			break;
		case ATTR_GROUPS:
			puts_(o, " groups=");
			put_int(o, n->at.groups);
			break;
		case ATTR_KEEPDIMS:
		case ATTR_LAST:
		case ATTR_CEIL_MODE:
		case ATTR_COUNT_INCLUDE_PAD:
			/* all default to False, which is not printed */
			flag = a == ATTR_KEEPDIMS ? n->at.keepdims : a == ATTR_LAST ? n->at.last :
			    a == ATTR_CEIL_MODE ? n->at.ceil_mode : n->at.count_include_pad;
			if (flag) {
				put(o, " ", 1);
				puts_(o, ir_attrs[a].name);
				puts_(o, "=True");
			}
			break;
		case ATTR_PERM:
			if (default_perm(&n->at, g->nodes[n->in[0]].type.rank))
				break;
			/* fall through */
		default: {
			IntTuple t = ir_attr_ints(&n->at, (AttrId)a);

			put(o, " ", 1);
			puts_(o, ir_attrs[a].name);
			put(o, "=", 1);
			print_ints(o, t.v, t.n);
			break;
		}
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

/* ---- tiled bodies (tile.h, docs/tiled.md) ---------------------------- */

/* "[32, 32]" or "(2, 1)"; comma1: a one-element tuple gets its comma. */
static void
print_list(Out *o, char open, const int64_t *v, int n, char close, bool comma1)
{
	put(o, &open, 1);
	for (int i = 0; i < n; i++) {
		if (i)
			put(o, ", ", 2);
		put_int(o, v[i]);
	}
	if (n == 1 && comma1)
		put(o, ",", 1);
	put(o, &close, 1);
}

static void
put_val(Out *o, const TileFn *f, int v)
{
	put(o, "%", 1);
	puts_(o, f->vals[v].name);
}

static void
put_double(Out *o, double v)
{
	char num[64];

	ir_fmt_double(num, sizeof num, v);
	puts_(o, num);
}

static void
print_idx(Out *o, const TileFn *f, const TileIdx *x)
{
	for (int t = 0; t < x->nterm; t++) {
		if (t)
			put(o, " + ", 3);
		put_val(o, f, x->val[t]);
		if (x->coef[t] != 1) {
			put(o, " * ", 3);
			put_int(o, x->coef[t]);
		}
	}
	if (x->k || !x->nterm) {
		if (x->nterm)
			put(o, " + ", 3);
		put_int(o, x->k);
	}
}

static void
print_access(Out *o, const Graph *g, const Node *n, const TileInst *in)
{
	put(o, "%", 1);
	puts_(o, in->arg == TILE_RESULT ? n->name : g->nodes[n->tile->args[in->arg]].name);
	put(o, "[", 1);
	for (int i = 0; i < in->nidx; i++) {
		if (i)
			put(o, ", ", 2);
		print_idx(o, n->tile, &in->idx[i]);
	}
	put(o, "]", 1);
}

static void
print_tile_type(Out *o, const TileVal *v)
{
	if (v->rank < 0)
		return;
	put(o, " : ", 3);
	print_list(o, '[', v->shape, v->rank, ']', false);
}

static void
indent(Out *o, int depth)
{
	for (int i = 0; i < depth; i++)
		put(o, "  ", 2);
}

/* A fill's or a masked lane's number v for a tile of element type dt:
 * an integer or bool tile's as its integer, exactly (other=0,
 * value=-2147483648, an i64 past 2^53), a float tile's as a float
 * (other=0.0); either parses back to the same TileNum. */
static void
put_tile_number(Out *o, DType dt, const TileNum *v)
{
	if (!ir_dtype_is_float(dt))
		put_int(o, v->i);
	else
		put_double(o, v->d);
}

/* The attributes of inst in (of body f) that its row takes, in TA order,
 * defaults left out. */
static void
print_tile_attrs(Out *o, const TileFn *f, const TileInst *in)
{
	DType dt = in->res >= 0 ? f->vals[in->res].dt : f->dt;

	for (unsigned set = tile_ops[in->op].attrs; set; set &= set - 1) {
		switch ((TileAttrId)__builtin_ctz(set)) {
		case TA_AXIS:
			/* program_id's is required; a reduction's -1 is all axes */
			if (in->op == TO_PROGRAM_ID || in->axis >= 0) {
				puts_(o, " axis=");
				put_int(o, in->axis);
			}
			break;
		case TA_KEEPDIMS:
			if (in->keepdims)
				puts_(o, " keepdims=True");
			break;
		case TA_BY:
			puts_(o, " by=");
			put_int(o, in->by);
			break;
		case TA_AT:
			puts_(o, " at=");
			put_int(o, in->start);
			break;
		case TA_VALUE:
			puts_(o, " value=");
			put_tile_number(o, dt, &in->value);
			break;
		case TA_PERM:
			puts_(o, " perm=");
			print_list(o, '(', in->perm, in->nperm, ')', true);
			break;
		case TA_OTHER:
			if (in->masked) {
				puts_(o, " other=");
				put_tile_number(o, dt, &in->other);
			}
			break;
		case TA_MASKED:
			if (in->masked)
				puts_(o, " masked");
			break;
		case TA_TO:
			if (in->op == TO_UNARY && in->gop == OP_CAST) {
				puts_(o, " to=");
				puts_(o, ir_dtype_name(in->to));
			}
			break;
		case TA_VIEW:
			if (in->has_view) {
				puts_(o, " view=");
				print_list(o, '(', in->view, in->nview, ')', true);
			}
			break;
		case TA_WINDOW:
			puts_(o, " window=");
			print_list(o, '(', in->win, in->nwin, ')', true);
			break;
		case TA_STEPS:
			puts_(o, " steps=");
			print_list(o, '(', in->steps, in->nperm, ')', true);
			break;
		case TA_LAST:
			if (in->last)
				puts_(o, " last=True");
			break;
		case TA_STRIDES:
			if (in->vstr) {
				puts_(o, " strides=");
				print_list(o, '(', in->vstr, in->nview, ')', true);
			}
			break;
		case TA_OFFSET:
			if (in->vstr && in->vstr[IR_MAX_RANK]) {
				char buf[32];

				snprintf(buf, sizeof buf, " offset=%lld", (long long)in->vstr[IR_MAX_RANK]);
				puts_(o, buf);
			}
			break;
		case TA_COUNT:
			break;
		}
	}
}

/* Prints insts i..end-1 of n's body at the given depth; returns end. */
static int
print_insts(Out *o, const Graph *g, const Node *n, int i, int end, int depth)
{
	const TileFn *f = n->tile;

	while (i < end) {
		const TileInst *in = &f->insts[i];
		const TileVal *r = in->res >= 0 ? &f->vals[in->res] : NULL;

		indent(o, depth);
		if (r) {
			put_val(o, f, in->res);
			put(o, " = ", 3);
		}
		switch (tile_ops[in->op].form) {
		case TF_FOR:
			puts_(o, "for ");
			put_val(o, f, in->var);
			put(o, " = ", 3);
			put_int(o, in->lo);
			puts_(o, " to ");
			put_int(o, in->hi);
			puts_(o, " step ");
			put_int(o, in->step);
			puts_(o, " iter(");
			put_val(o, f, in->iter);
			put(o, " = ", 3);
			put_val(o, f, in->in[0]);
			puts_(o, ") {\n");
			print_insts(o, g, n, i + 1, in->end, depth + 1);
			indent(o, depth + 1);
			puts_(o, "yield ");
			put_val(o, f, f->insts[in->end].in[0]);
			put(o, "\n", 1);
			indent(o, depth);
			puts_(o, "}\n");
			i = in->end + 1;
			continue;
		case TF_YIELD:
			AICM_BUG("a yield outside its loop");
		case TF_LOAD:
			puts_(o, tile_op_name(in));
			put(o, " ", 1);
			print_access(o, g, n, in);
			if (in->nin > 0) {
				put(o, ", ", 2);
				put_val(o, f, in->in[0]);
			}
			print_tile_type(o, r);
			break;
		case TF_STORE:
			puts_(o, tile_op_name(in));
			put(o, " ", 1);
			print_access(o, g, n, in);
			put(o, ", ", 2);
			put_val(o, f, in->in[0]);
			break;
		case TF_CALL:
			puts_(o, tile_op_name(in));
			put(o, "(", 1);
			for (int j = 0; j < in->nin; j++) {
				if (j)
					put(o, ", ", 2);
				put_val(o, f, in->in[j]);
			}
			put(o, ")", 1);
			print_tile_type(o, r);
			break;
		}
		print_tile_attrs(o, f, in);
		put(o, "\n", 1);
		i++;
	}
	return i;
}

/* A tiled node's statement, at the graph's two-space indent. */
static void
print_tiled(Out *o, const Graph *g, const Node *n)
{
	const TileFn *f = n->tile;
	int ng = f->grid[2] != 1 ? 3 : 2;

	puts_(o, "  %");
	puts_(o, n->name);
	puts_(o, " = tiled @");
	puts_(o, f->name);
	puts_(o, " [");
	puts_(o, ir_kernel_kinds[f->kind]);
	puts_(o, "] (");
	for (int j = 0; j < f->nargs; j++) {
		put(o, j ? ", %" : "%", j ? 3 : 1);
		puts_(o, g->nodes[f->args[j]].name);
	}
	puts_(o, ") : ");
	print_list(o, '(', n->type.dim, n->type.rank, ')', true);
	if (n->type.dt != DT_F64) {
		put(o, " ", 1);
		puts_(o, ir_dtype_name(n->type.dt));
	}
	puts_(o, " grid=");
	print_list(o, '(', f->grid, ng, ')', true);
	for (int a = 0; a < KA_COUNT; a++)
		if (f->kset & (1u << a)) {
			put(o, " ", 1);
			puts_(o, ir_kattr_names[a]);
			put(o, "=", 1);
			put_int(o, f->kattr[a]);
		}
	if (f->has_init) {
		puts_(o, " init=");
		put_double(o, f->init);
	}
	puts_(o, " {\n");
	print_insts(o, g, n, 0, f->ninsts, 2);
	puts_(o, "  }\n");
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

		if (n->op == OP_TILED) {
			print_tiled(o, g, n);
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

/* The one JSON style of every --report=json and --stats=json (DESIGN §15):
 * JSON Lines, one object per line, no spaces, floats with 17 digits so
 * that they read back exactly, non-finite numbers as null (JSON has no inf
 * or NaN), strings with quotes, backslashes and control bytes escaped. */
void
ir_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void
ir_json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.17g", v);
	else
		fputs("null", f);
}
