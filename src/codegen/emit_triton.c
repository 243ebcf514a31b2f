/*
 * emit_triton.c: a lowered graph as Triton source (aicm-opt --emit=triton).
 *
 * Each tiled program (docs/tiled.md) becomes one @triton.jit kernel and the
 * graph one launcher `run` that allocates the outputs and calls the kernels
 * in node order, as Inductor's output_code.py reads.  Every tile-IR line is
 * written as a comment above the statements made from it, taken from the
 * printer's own text so that the two can never disagree.
 *
 * The one thing that Triton does not have is the tile IR's valid box: the
 * executor knows at run time how many leading lanes of each tile dim are
 * real, and reductions and stores use only those.  In Triton a mask must be
 * written out, so the emitter carries, per tile value and per dim, the
 * conditions that bound its valid lanes (a lane's tensor index below the
 * dim's size, at or above 0, or the lane below the written extent when the
 * dim is padded to a power of two for tl.arange), and writes them as
 * tl.where before a reduction and as the mask of a store.  Conditions that
 * the index ranges prove always true (program ids over their grid, loop
 * counters over their trips) are left out, so an unragged kernel has no
 * masks at all.  A loop's result keeps its last trip's conditions with the
 * counter replaced by its last value.
 *
 * The packed loop-carried tiles of attention (join and extract) are not
 * packed here: a Triton loop carries any number of values, so a join is a
 * tuple of its parts and an extract names one of them.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "emit_triton.h"
#include "ir.h"
#include "tile.h"

enum { MAXC = 6, MAXPARTS = 3 };

/* One bound on the lanes of a tile dim: CK_LT idx + step*lane < lim,
 * CK_GE idx + step*lane >= 0, CK_LANE lane < lim. */
typedef enum CondKind { CK_LT, CK_GE, CK_LANE } CondKind;

typedef struct Cond {
	CondKind kind;
	int64_t step, lim;
	TileIdx idx;
} Cond;

typedef struct DimBox {
	int n;
	Cond c[MAXC];
} DimBox;

/* A part of a joined value: its Python name, shape, type and box. */
typedef struct Part {
	const char *name;
	int rank;
	int64_t shape[IR_MAX_RANK];
	DType dt;
	DimBox box[IR_MAX_RANK];
} Part;

typedef struct Em {
	FILE *o;
	const Graph *g;
	const Node *n;
	const TileFn *f;
	char **py;                   /* per value: its Python name */
	DimBox **box;                /* per value: rank entries (NULL: a scalar) */
	int64_t *lo, *hi;            /* per scalar value: its range */
	int *nparts;                 /* per value: 0, or its parts (a join) */
	Part **parts;
	char **lines;                /* the printed graph, line by line */
	int nlines, line;
	int depth;
	int *loop_of;                /* per value: the innermost for defining it, or -1 */
	bool *libdevice, *prod;      /* module-wide: helpers used */
	char **names;                /* names taken in the kernel */
	int nnames, capnames;
	char *const *argptr;         /* per kernel argument: its pointer's name */
	const char *resptr;          /* the result's pointer's name */
	Diag *d;                     /* where a body with no Triton form is said */
	bool failed;
	/* the named lane vectors (base_iJ = idx + step * tl.arange(0, P)) and
	 * the loop each is defined in; the loops open where code is written */
	struct Lane {
		const char *name;
		TileIdx idx;
		int64_t step, ext;
		int loop;
	} *lanes;
	int nlanes, caplanes;
	int open[IR_MAX_NEST + 1];
	int nopen;
	bool nolookup;               /* put_lanes writes the expression */
} Em;

/* ---- names ----------------------------------------------------------- */

static const char *const reserved[] = {
	"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
	"continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
	"if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return",
	"try", "while", "with", "yield", "tl", "triton", "torch", "numpy", "libdevice", "range",
	"float", "int", "len", "tuple", "print", "dev", "run", "BM", "BN", "BK", "sum", "max",
	"min", "abs", "pow", "round", "all", "any", "list", "type", "id", "object", NULL,
};

static bool
taken(char *const *names, int n, const char *s)
{
	for (const char *const *r = reserved; *r; r++)
		if (!strcmp(*r, s))
			return true;
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return true;
	return false;
}

/* A fresh Python identifier made from s ('.' and other punctuation become
 * '_'; a leading digit gets 'v'), unique among the names given so far. */
static char *
pyname(char ***names, int *n, int *cap, const char *s, const char *suffix)
{
	size_t len = strlen(s) + strlen(suffix);
	char *b = xmalloc(len + 24), *t;
	int k = 1;

	t = b;
	if (*s >= '0' && *s <= '9')
		*t++ = 'v';
	for (; *s; s++)
		*t++ = (char)((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '_' ? *s : '_');
	strcpy(t, suffix);
	t += strlen(t);
	while (taken(*names, *n, b))
		snprintf(t, 24, "_%d", k++);
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 32;
		*names = xrealloc(*names, sizeof **names * (size_t)*cap);
	}
	(*names)[(*n)++] = b;
	return b;
}

static char *
em_name(Em *e, const char *s, const char *suffix)
{
	return pyname(&e->names, &e->nnames, &e->capnames, s, suffix);
}

/* ---- small text helpers ---------------------------------------------- */

static int64_t
pow2(int64_t v)
{
	int64_t p = 1;

	while (p < v)
		p *= 2;
	return p;
}

static const char *
tl_dtype(DType dt)
{
	switch (dt) {
	case DT_F64: return "tl.float64";
	case DT_F32: return "tl.float32";
	case DT_I32: return "tl.int32";
	case DT_I64: return "tl.int64";
	case DT_BOOL: return "tl.int1";
	case DT_COUNT: break;
	}
	AICM_BUG("no Triton type for element type %d", (int)dt);
}

static const char *
torch_dtype(DType dt)
{
	switch (dt) {
	case DT_F64: return "torch.float64";
	case DT_F32: return "torch.float32";
	case DT_I32: return "torch.int32";
	case DT_I64: return "torch.int64";
	case DT_BOOL: return "torch.bool";
	case DT_COUNT: break;
	}
	AICM_BUG("no torch type for element type %d", (int)dt);
}

/* A Python literal of double v: float("inf") for the non-finite. */
static void
put_float(StrBuf *b, double v)
{
	char num[64];

	ir_fmt_double(num, sizeof num, v);
	if (isnan(v) || isinf(v))
		strbuf_printf(b, "float(\"%s\")", num);
	else
		strbuf_puts(b, num);
}

static void
put_num(StrBuf *b, DType dt, const TileNum *v)
{
	if (ir_dtype_is_float(dt))
		put_float(b, v->d);
	else
		strbuf_printf(b, "%" PRId64, v->i);
}

static void
indent(Em *e)
{
	for (int i = 0; i < e->depth; i++)
		fputs("    ", e->o);
}

/* The next tile-IR line, as a comment at the current depth. */
static void
comment(Em *e)
{
	const char *s;

	if (e->line >= e->nlines)
		AICM_BUG("the printed body of '@%s' has fewer lines than its instructions", e->f->name);
	s = e->lines[e->line++];
	while (*s == ' ')
		s++;
	indent(e);
	fprintf(e->o, "# %s\n", s);
}

/* A statement: one line at the current depth. */
static void
stmt(Em *e, const char *s)
{
	indent(e);
	fputs(s, e->o);
	fputc('\n', e->o);
}

/* A statement written as printf would. */
static void stmtf(Em *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
stmtf(Em *e, const char *fmt, ...)
{
	va_list ap;

	indent(e);
	va_start(ap, fmt);
	vfprintf(e->o, fmt, ap);
	va_end(ap);
	fputc('\n', e->o);
}

/* The name of a tile extent: a block size's when the dim is one (its
 * position chooses between equal ones: rows BM, columns BN), else the
 * literal, rounded up to a power of two for tl.arange. */
static void
put_ext(Em *e, StrBuf *b, int64_t ext, int dim, int rank)
{
	static const int pref_last[3] = {KA_BN, KA_BK, KA_BM}, pref_row[3] = {KA_BM, KA_BK, KA_BN};
	const int *pref = dim == rank - 1 ? pref_last : pref_row;

	if (pow2(ext) == ext && ext > 1)
		for (int i = 0; i < 3; i++)
			if ((e->f->kset & (1u << pref[i])) && e->f->kattr[pref[i]] == ext) {
				strbuf_puts(b, ir_kattr_names[pref[i]]);
				return;
			}
	strbuf_printf(b, "%" PRId64, pow2(ext));
}

static void
put_shape(Em *e, StrBuf *b, int rank, const int64_t *shape)
{
	strbuf_putc(b, '(');
	for (int j = 0; j < rank; j++) {
		if (j)
			strbuf_puts(b, ", ");
		put_ext(e, b, shape[j], j, rank);
	}
	if (rank == 1)
		strbuf_putc(b, ',');
	strbuf_putc(b, ')');
}

/* [:, None, ..]: a 1-D vector put in dim j of a rank-r tile. */
static void
put_bcast(StrBuf *b, int j, int r)
{
	if (r <= 1)
		return;
	strbuf_putc(b, '[');
	for (int d = 0; d < r; d++)
		strbuf_puts(b, d == 0 ? "" : ", "), strbuf_puts(b, d == j ? ":" : "None");
	strbuf_putc(b, ']');
}

static void
put_idx(Em *e, StrBuf *b, const TileIdx *x)
{
	bool any = false;

	for (int t = 0; t < x->nterm; t++) {
		if (any)
			strbuf_puts(b, " + ");
		strbuf_puts(b, e->py[x->val[t]]);
		if (x->coef[t] != 1)
			strbuf_printf(b, " * %" PRId64, x->coef[t]);
		any = true;
	}
	if (x->k || !any) {
		if (any)
			strbuf_printf(b, x->k < 0 ? " - %" PRId64 : " + %" PRId64,
			    x->k < 0 ? -x->k : x->k);
		else
			strbuf_printf(b, "%" PRId64, x->k);
	}
}

static bool
idx_eq(const TileIdx *a, const TileIdx *b)
{
	if (a->nterm != b->nterm || a->k != b->k)
		return false;
	for (int t = 0; t < a->nterm; t++)
		if (a->val[t] != b->val[t] || a->coef[t] != b->coef[t])
			return false;
	return true;
}

/* The lanes of a dim as a 1-D vector: idx + step * tl.arange(0, P), or
 * the name the access being written gave them. */
static void
put_lanes(Em *e, StrBuf *b, const TileIdx *x, int64_t step, int64_t ext, int dim, int rank)
{
	bool zero = x->nterm == 0 && x->k == 0;

	for (int i = e->nolookup ? -1 : e->nlanes - 1; i >= 0; i--) {
		const struct Lane *l = &e->lanes[i];
		bool inscope = l->loop < 0;

		for (int k = 0; k < e->nopen && !inscope; k++)
			inscope = e->open[k] == l->loop;
		if (inscope && l->step == step && pow2(l->ext) == pow2(ext) && idx_eq(&l->idx, x)) {
			strbuf_puts(b, l->name);
			return;
		}
	}
	strbuf_putc(b, '(');
	if (!zero) {
		put_idx(e, b, x);
		strbuf_puts(b, " + ");
	}
	if (step != 1)
		strbuf_printf(b, "%" PRId64 " * ", step);
	strbuf_puts(b, "tl.arange(0, ");
	put_ext(e, b, ext, dim, rank);
	strbuf_puts(b, "))");
}

/* ---- ranges of scalars and conditions ---------------------------------- */

static void
idx_range(const Em *e, const TileIdx *x, int64_t *lo, int64_t *hi)
{
	*lo = *hi = x->k;
	for (int t = 0; t < x->nterm; t++) {
		int64_t a = x->coef[t] * e->lo[x->val[t]], b = x->coef[t] * e->hi[x->val[t]];

		*lo += a < b ? a : b;
		*hi += a < b ? b : a;
	}
}

static bool
cond_eq(const Cond *a, const Cond *b)
{
	if (a->kind != b->kind || a->lim != b->lim || a->step != b->step)
		return false;
	if (a->kind == CK_LANE)
		return true;
	if (a->idx.nterm != b->idx.nterm || a->idx.k != b->idx.k)
		return false;
	for (int t = 0; t < a->idx.nterm; t++)
		if (a->idx.val[t] != b->idx.val[t] || a->idx.coef[t] != b->idx.coef[t])
			return false;
	return true;
}

static void
box_add(Em *e, DimBox *d, const Cond *c)
{
	for (int i = 0; i < d->n; i++)
		if (cond_eq(&d->c[i], c))
			return;
	if (d->n == MAXC) {
		diag_error(e->d, e->n->loc, "kernel '@%s': more than %d bounds on one tile dim",
		    e->f->name, MAXC);
		e->failed = true;
		return;
	}
	d->c[d->n++] = *c;
}

/* The bounds that an access of ext lanes at x (lane i at x + step*i) on a
 * dim of size lim needs, those that the ranges cannot prove, into d. */
static void
access_conds(Em *e, DimBox *d, const TileIdx *x, int64_t step, int64_t ext, int64_t lim)
{
	int64_t lo, hi, a, b;
	Cond c = {CK_LT, step, lim, *x};

	idx_range(e, x, &lo, &hi);
	a = step >= 0 ? lo : lo + step * (ext - 1);
	b = step >= 0 ? hi + step * (ext - 1) : hi;
	if (b >= lim)
		box_add(e, d, &c);
	if (a < 0) {
		c.kind = CK_GE;
		c.lim = 0;
		box_add(e, d, &c);
	}
}

/* The bound x + lane < lim, added whatever the ranges say (a window's
 * rows and columns past its own extents). */
static void
box_below(Em *e, DimBox *d, const TileIdx *x, int64_t lim)
{
	Cond c = {CK_LT, 1, lim, *x};

	box_add(e, d, &c);
}

static void
lane_cond(Em *e, DimBox *d, int64_t ext)
{
	Cond c = {CK_LANE, 1, ext, {0}};

	if (pow2(ext) != ext)
		box_add(e, d, &c);
}

static void
put_cond(Em *e, StrBuf *b, const Cond *c, int64_t ext, int j, int r)
{
	TileIdx zero = {0};

	strbuf_putc(b, '(');
	put_lanes(e, b, c->kind == CK_LANE ? &zero : &c->idx, c->kind == CK_LANE ? 1 : c->step,
	    ext, j, r);
	if (c->kind == CK_GE)
		strbuf_puts(b, " >= 0)");
	else
		strbuf_printf(b, " < %" PRId64 ")", c->lim);
	put_bcast(b, j, r);
}

/* The conjunction of the conditions of a box's dims (those with want[j]
 * set, when want is given); returns whether it wrote any. */
static bool
put_mask(Em *e, StrBuf *b, const DimBox *box, const int64_t *shape, int r, const bool *want)
{
	bool any = false;

	for (int j = 0; j < r; j++) {
		if (want && !want[j])
			continue;
		for (int i = 0; i < box[j].n; i++) {
			if (any)
				strbuf_puts(b, " & ");
			put_cond(e, b, &box[j].c[i], shape[j], j, r);
			any = true;
		}
	}
	return any;
}

/* ---- values ------------------------------------------------------------ */

static const TileVal *
val(const Em *e, int v)
{
	return &e->f->vals[v];
}

static DimBox *
box_of(Em *e, int v)
{
	const TileVal *tv = val(e, v);

	if (tv->rank < 0)
		return NULL;
	if (!e->box[v])
		e->box[v] = xcalloc((size_t)(tv->rank ? tv->rank : 1), sizeof(DimBox));
	return e->box[v];
}

/* Gives the result of in its name and an empty box (padded dims bounded). */
static DimBox *
def(Em *e, const TileInst *in)
{
	const TileVal *tv = val(e, in->res);
	DimBox *b;

	e->py[in->res] = em_name(e, tv->name, "");
	b = box_of(e, in->res);
	if (b)
		for (int j = 0; j < tv->rank; j++)
			lane_cond(e, &b[j], tv->shape[j]);
	return b;
}

/* Copies dim sj of value src's box into dim dj of dst, unless src's dim
 * is a stretched 1 (broadcasting imposes nothing). */
static void
box_take(Em *e, DimBox *dst, int64_t ext, const DimBox *src, int64_t sext)
{
	if (sext != ext)
		return;
	for (int i = 0; i < src->n; i++)
		box_add(e, dst, &src->c[i]);
}

/* The box of an elementwise result: each dim's bounds from the operands
 * that have the dim (right-aligned, not stretched). */
static void
box_broadcast(Em *e, int res, int nin, const int *in)
{
	const TileVal *r = val(e, res);
	DimBox *b = box_of(e, res);

	if (!b)
		return;
	for (int k = 0; k < nin; k++) {
		const TileVal *o = val(e, in[k]);
		const DimBox *ob = e->box[in[k]];

		if (o->rank <= 0 || !ob)
			continue;
		for (int j = 0; j < o->rank; j++) {
			int rj = r->rank - o->rank + j;

			box_take(e, &b[rj], r->shape[rj], &ob[j], o->shape[j]);
		}
	}
}

/* ---- accesses ---------------------------------------------------------- */

/* The tensor an access touches: its node, its shape (view), strides and
 * offset (row-major but for a strided view). */
typedef struct Target {
	const Node *node;
	const char *ptr;
	int rank;
	int64_t dim[IR_MAX_RANK];
	int64_t str[IR_MAX_RANK];
	int64_t off;
} Target;

static void
target(Em *e, const TileInst *in, Target *t)
{
	Type buf;
	const Type *ty = tile_target_type(e->g, e->n, in, &buf);

	t->node = in->arg == TILE_RESULT ? e->n : &e->g->nodes[e->f->args[in->arg]];
	t->ptr = in->arg == TILE_RESULT ? e->resptr : e->argptr[in->arg];
	t->rank = ty->rank;
	memcpy(t->dim, ty->dim, sizeof(int64_t) * (size_t)ty->rank);
	t->off = 0;
	if (in->op == TO_LOAD && in->vstr) {
		memcpy(t->str, in->vstr, sizeof(int64_t) * (size_t)in->nview);
		t->off = in->vstr[IR_MAX_RANK];
	} else {
		int64_t s = 1;

		for (int j = t->rank - 1; j >= 0; j--) {
			t->str[j] = s;
			s *= t->dim[j];
		}
	}
}

/* Names the lanes of each dim of an access (base_iJ = idx + tl.arange),
 * as Inductor names its index vectors, so that the pointer and the mask,
 * and later masks in their scope, read them; dims of one lane at 0 stay
 * inline, and lanes already named in scope are reused. */
static void
lanes_begin(Em *e, const char *base, const TileInst *in, int rank, const int64_t *shape,
    const int64_t *steps)
{
	for (int j = 0; j < rank; j++) {
		StrBuf b = {0};
		char sfx[16];
		const char *nm;

		if (shape[j] == 1 && in->idx[j].nterm == 0 && in->idx[j].k == 0)
			continue;
		/* a constant index names lanes of its own: another tensor's
		 * tl.arange(0, P) reused would only puzzle the reader */
		e->nolookup = in->idx[j].nterm == 0;
		put_lanes(e, &b, &in->idx[j], steps ? steps[j] : 1, shape[j], j, rank);
		if (b.s[0] != '(') {
			free(b.s);      /* named already, in scope: reused */
			continue;
		}
		b.n = 0;
		snprintf(sfx, sizeof sfx, "_i%d", j);
		nm = em_name(e, base, sfx);
		strbuf_printf(&b, "%s = ", nm);
		put_lanes(e, &b, &in->idx[j], steps ? steps[j] : 1, shape[j], j, rank);
		/* drop the outer parentheses put_lanes writes */
		e->nolookup = false;
		memmove(b.s + strlen(nm) + 3, b.s + strlen(nm) + 4, b.n - strlen(nm) - 4);
		b.s[b.n - 2] = 0;
		stmt(e, b.s);
		free(b.s);
		if (e->nlanes == e->caplanes) {
			e->caplanes = e->caplanes ? 2 * e->caplanes : 16;
			e->lanes = xrealloc(e->lanes, sizeof *e->lanes * (size_t)e->caplanes);
		}
		e->lanes[e->nlanes++] = (struct Lane){nm, in->idx[j], steps ? steps[j] : 1, shape[j],
		    e->nopen ? e->open[e->nopen - 1] : -1};
	}
}


/* ptr + Σ lanes_j * stride_j, the lanes of dim j at tile dim j. */
static void
put_ptr(Em *e, StrBuf *b, const Target *t, const TileInst *in, const int64_t *shape,
    const int64_t *steps)
{
	bool any = false;

	strbuf_printf(b, "%s + ", t->ptr);
	if (t->off) {
		strbuf_printf(b, "%" PRId64, t->off);
		any = true;
	}
	for (int j = 0; j < t->rank; j++) {
		if (any)
			strbuf_puts(b, " + ");
		put_lanes(e, b, &in->idx[j], steps ? steps[j] : 1, shape[j], j, t->rank);
		put_bcast(b, j, t->rank);
		/* stride 0, an expanded dim: its lanes read one element, and
		 * the term still gives the pointer block its extent */
		if (t->str[j] != 1)
			strbuf_printf(b, " * %" PRId64, t->str[j]);
		any = true;
	}
	if (!any)
		strbuf_puts(b, "0");
}

/* load, load_pad, load_step. */
static void
emit_load(Em *e, const TileInst *in)
{
	const TileVal *r = val(e, in->res);
	DimBox *box = def(e, in), mb[IR_MAX_RANK];
	Target t;
	StrBuf b = {0}, m = {0};
	const int64_t *steps = in->op == TO_LOAD_STEP ? in->steps : NULL;
	bool pad = in->op == TO_LOAD_PAD;

	target(e, in, &t);
	memset(mb, 0, sizeof mb);
	for (int j = 0; j < t.rank; j++) {
		lane_cond(e, &mb[j], r->shape[j]);
		if (in->masked || pad || in->op == TO_LOAD_STEP)
			access_conds(e, &mb[j], &in->idx[j], steps ? steps[j] : 1, r->shape[j], t.dim[j]);
	}
	lanes_begin(e, e->py[in->res], in, t.rank, r->shape, steps);
	strbuf_printf(&b, "%s = tl.load(", e->py[in->res]);
	put_ptr(e, &b, &t, in, r->shape, steps);
	if (put_mask(e, &m, mb, r->shape, t.rank, NULL)) {
		strbuf_printf(&b, ", mask=%s, other=", m.s);
		if (pad && in->nin > 0)
			strbuf_puts(&b, e->py[in->in[0]]);
		else if (in->masked)
			put_num(&b, r->dt, &in->other);
		else
			strbuf_puts(&b, "0");    /* only the padded lanes: outside the box */
	}
	strbuf_putc(&b, ')');
	stmt(e, b.s);
	free(b.s);
	free(m.s);
	/* the valid box: the lanes inside the tensor; a load_pad's every lane */
	for (int j = 0; j < t.rank && !pad; j++)
		for (int i = 0; i < mb[j].n; i++)
			box_add(e, &box[j], &mb[j].c[i]);
}

/* store, atomic_add, atomic_max: the value's box inside the tensor. */
static void
emit_store(Em *e, const TileInst *in)
{
	int v = in->in[0];
	const TileVal *tv = val(e, v);
	DimBox mb[IR_MAX_RANK];
	Target t;
	StrBuf b = {0}, m = {0};
	const char *fn = in->op == TO_STORE ? "tl.store" : in->op == TO_ATOMIC_ADD ?
	    "tl.atomic_add" : "tl.atomic_max";

	target(e, in, &t);
	memset(mb, 0, sizeof mb);
	if (tv->rank != t.rank)
		AICM_BUG("a store of rank %d into a tensor of rank %d", tv->rank, t.rank);
	for (int j = 0; j < t.rank; j++) {
		if (e->box[v])
			for (int i = 0; i < e->box[v][j].n; i++)
				box_add(e, &mb[j], &e->box[v][j].c[i]);
		if (in->masked)
			access_conds(e, &mb[j], &in->idx[j], 1, tv->shape[j], t.dim[j]);
	}
	if (in->op == TO_ATOMIC_MAX && ir_dtype_is_float(tv->dt))
		stmt(e, "# tl.atomic_max on floats: a NaN need not win, as it does in aicm's max");
	lanes_begin(e, t.node->name, in, t.rank, tv->shape, NULL);
	strbuf_printf(&b, "%s(", fn);
	put_ptr(e, &b, &t, in, tv->shape, NULL);
	strbuf_printf(&b, ", %s", e->py[v]);
	if (put_mask(e, &m, mb, tv->shape, t.rank, NULL))
		strbuf_printf(&b, ", mask=%s", m.s);
	strbuf_putc(&b, ')');
	stmt(e, b.s);
	free(b.s);
	free(m.s);
}

/* ---- compute ops ------------------------------------------------------- */

static void
emit_fill(Em *e, const TileInst *in)
{
	const TileVal *r = val(e, in->res);
	StrBuf b = {0};

	def(e, in);
	strbuf_printf(&b, "%s = tl.full(", e->py[in->res]);
	if (r->rank == 0)
		strbuf_puts(&b, "[]");
	else
		put_shape(e, &b, r->rank, r->shape);
	strbuf_puts(&b, ", ");
	if (in->op == TO_ZEROS)
		strbuf_puts(&b, "0");
	else
		put_num(&b, r->dt, &in->value);
	strbuf_printf(&b, ", %s)", tl_dtype(r->dt));
	stmt(e, b.s);
	free(b.s);
}

/* The Python expression of unary op gop on x (of type dt, result rt). */
static void
unary_expr(Em *e, StrBuf *b, OpId gop, const char *x, DType dt, DType rt)
{
	bool fl = ir_dtype_is_float(dt);

	switch (gop) {
	case OP_RELU:
		if (fl)
			strbuf_printf(b, "tl.where((%s > 0) | (%s != %s), %s, 0.0)", x, x, x, x);
		else
			strbuf_printf(b, "tl.maximum(%s, 0)", x);
		return;
	case OP_NEG: strbuf_printf(b, "-%s", x); return;
	case OP_EXP: strbuf_printf(b, "tl.exp(%s)", x); return;
	case OP_LOG: strbuf_printf(b, "tl.log(%s)", x); return;
	case OP_SQRT: strbuf_printf(b, "tl.sqrt(%s)", x); return;
	case OP_SIN: strbuf_printf(b, "tl.sin(%s)", x); return;
	case OP_COS: strbuf_printf(b, "tl.cos(%s)", x); return;
	case OP_ABS: strbuf_printf(b, "tl.abs(%s)", x); return;
	case OP_ERF: strbuf_printf(b, "tl.erf(%s)", x); return;
	case OP_FLOOR: strbuf_printf(b, "tl.floor(%s)", x); return;
	case OP_CEIL: strbuf_printf(b, "tl.ceil(%s)", x); return;
	case OP_SIGMOID: strbuf_printf(b, "tl.sigmoid(%s)", x); return;
	case OP_RECIPROCAL: strbuf_printf(b, "1.0 / %s", x); return;
	case OP_TANH:
		*e->libdevice = true;
		strbuf_printf(b, "libdevice.tanh(%s)", x);
		return;
	case OP_ROUND:
		/* half to even, as nearbyint; tl.math has no round */
		*e->libdevice = true;
		strbuf_printf(b, "libdevice.rint(%s)", x);
		return;
	case OP_SIGN:
		if (fl)
			strbuf_printf(b, "tl.where(%s != %s, %s, (%s > 0).to(%s) - (%s < 0).to(%s))", x, x,
			    x, x, tl_dtype(dt), x, tl_dtype(dt));
		else
			strbuf_printf(b, "(%s > 0).to(%s) - (%s < 0).to(%s)", x, tl_dtype(dt), x,
			    tl_dtype(dt));
		return;
	case OP_ISNAN: strbuf_printf(b, "%s != %s", x, x); return;
	case OP_NOT: strbuf_printf(b, "%s == 0", x); return;
	case OP_CAST:
		if (rt == DT_BOOL)
			strbuf_printf(b, "%s != 0", x);
		else
			strbuf_printf(b, "%s.to(%s)", x, tl_dtype(rt));
		return;
	default:
		break;
	}
	AICM_BUG("no Triton form for unary op '%s'", ir_ops[gop].name);
}

static void
binary_expr(Em *e, StrBuf *b, OpId gop, const char *x, const char *y, DType dt)
{
	bool fl = ir_dtype_is_float(dt);
	const char *op = NULL;

	switch (gop) {
	case OP_ADD: op = "+"; break;
	case OP_SUB: op = "-"; break;
	case OP_MUL: op = "*"; break;
	case OP_DIV: op = fl ? "/" : "//"; break;   /* Triton's // on integers truncates, as C */
	case OP_EQUAL: op = "=="; break;
	case OP_LESS: op = "<"; break;
	case OP_LESS_EQUAL: op = "<="; break;
	case OP_GREATER: op = ">"; break;
	case OP_GREATER_EQUAL: op = ">="; break;
	case OP_AND: op = "&"; break;
	case OP_OR: op = "|"; break;
	case OP_XOR: op = "^"; break;
	case OP_MAXIMUM:
	case OP_MINIMUM:
		strbuf_printf(b, "tl.%s(%s, %s%s)", gop == OP_MAXIMUM ? "maximum" : "minimum", x, y,
		    fl ? ", propagate_nan=tl.PropagateNan.ALL" : "");
		return;
	case OP_POW:
		*e->libdevice = true;
		if (fl)
			strbuf_printf(b, "libdevice.pow(%s, %s)", x, y);
		else
			strbuf_printf(b, "libdevice.pow(%s.to(tl.float64), %s.to(tl.float64)).to(%s)", x,
			    y, tl_dtype(dt));
		return;
	case OP_FMOD:
		if (fl) {
			*e->libdevice = true;
			strbuf_printf(b, "libdevice.fmod(%s, %s)", x, y);
		} else {
			strbuf_printf(b, "%s %% %s", x, y);     /* C's remainder */
		}
		return;
	case OP_MOD:
		/* numpy's mod: the remainder moved by one divisor when its sign
		 * differs from the divisor's */
		if (fl) {
			*e->libdevice = true;
			strbuf_printf(b, "tl.where((libdevice.fmod(%s, %s) != 0) & ((libdevice.fmod(%s, %s) "
			    "< 0) != (%s < 0)), libdevice.fmod(%s, %s) + %s, libdevice.fmod(%s, %s))", x, y, x,
			    y, y, x, y, y, x, y);
		} else {
			strbuf_printf(b, "tl.where(((%s %% %s) != 0) & (((%s %% %s) < 0) != (%s < 0)), "
			    "(%s %% %s) + %s, %s %% %s)", x, y, x, y, y, x, y, y, x, y);
		}
		return;
	default:
		break;
	}
	if (!op)
		AICM_BUG("no Triton form for binary op '%s'", ir_ops[gop].name);
	strbuf_printf(b, "%s %s %s", x, op, y);
}

static void
emit_unary(Em *e, const TileInst *in)
{
	const TileVal *x = val(e, in->in[0]), *r;
	StrBuf b = {0};

	def(e, in);
	r = val(e, in->res);
	box_broadcast(e, in->res, 1, in->in);
	if (in->gop == OP_CAST && ir_dtype_is_float(x->dt) && !ir_dtype_is_float(r->dt) &&
	    r->dt != DT_BOOL)
		stmt(e, "# .to() truncates toward zero; out of range and NaN are undefined in "
		    "Triton (aicm saturates, NaN to 0)");
	strbuf_printf(&b, "%s = ", e->py[in->res]);
	unary_expr(e, &b, in->gop, e->py[in->in[0]], x->dt, r->dt);
	stmt(e, b.s);
	free(b.s);
}

static void
emit_binary(Em *e, const TileInst *in)
{
	StrBuf b = {0};

	def(e, in);
	box_broadcast(e, in->res, 2, in->in);
	if (in->gop == OP_DIV && !ir_dtype_is_float(val(e, in->in[0])->dt))
		stmt(e, "# an integer division by 0 is an error in aicm, undefined in Triton");
	strbuf_printf(&b, "%s = ", e->py[in->res]);
	binary_expr(e, &b, in->gop, e->py[in->in[0]], e->py[in->in[1]], val(e, in->in[0])->dt);
	stmt(e, b.s);
	free(b.s);
}

static void
emit_where(Em *e, const TileInst *in)
{
	def(e, in);
	box_broadcast(e, in->res, 3, in->in);
	stmtf(e, "%s = tl.where(%s, %s, %s)", e->py[in->res], e->py[in->in[0]],
	    e->py[in->in[1]], e->py[in->in[2]]);
}

/* The neutral value of reduction gop in type dt, as Python. */
static void
put_neutral(StrBuf *b, OpId gop, DType dt)
{
	bool fl = ir_dtype_is_float(dt);

	switch (gop) {
	case OP_MAX:
		if (fl)
			strbuf_puts(b, "float(\"-inf\")");
		else
			strbuf_printf(b, "%s", dt == DT_I32 ? "-2147483648" : dt == DT_I64 ?
			    "-9223372036854775808" : "0");
		return;
	case OP_MIN:
		if (fl)
			strbuf_puts(b, "float(\"inf\")");
		else
			strbuf_printf(b, "%s", dt == DT_I32 ? "2147483647" : dt == DT_I64 ?
			    "9223372036854775807" : "1");
		return;
	case OP_PROD:
		strbuf_puts(b, fl ? "1.0" : "1");
		return;
	default:
		strbuf_puts(b, fl ? "0.0" : "0");
		return;
	}
}

static void
emit_reduce(Em *e, const TileInst *in)
{
	int x = in->in[0];
	const TileVal *tx = val(e, x), *r;
	DimBox *rb;
	bool want[IR_MAX_RANK] = {0}, masked;
	StrBuf b = {0}, m = {0}, v = {0};
	const char *fn;

	rb = def(e, in);
	r = val(e, in->res);
	for (int j = 0; j < tx->rank; j++)
		want[j] = in->axis < 0 || in->axis == j;
	masked = e->box[x] && put_mask(e, &m, e->box[x], tx->shape, tx->rank, want);
	if (masked) {
		strbuf_printf(&v, "tl.where(%s, %s, ", m.s, e->py[x]);
		put_neutral(&v, in->gop, tx->dt);
		strbuf_putc(&v, ')');
	} else {
		strbuf_puts(&v, e->py[x]);
	}
	switch (in->gop) {
	case OP_SUM: case OP_MEAN: fn = "tl.sum"; break;
	case OP_MAX: fn = "tl.max"; break;
	case OP_MIN: fn = "tl.min"; break;
	case OP_PROD: fn = "tl.reduce"; *e->prod = true; break;
	default: AICM_BUG("no Triton reduction for '%s'", ir_ops[in->gop].name);
	}
	if ((in->gop == OP_MAX || in->gop == OP_MIN) && ir_dtype_is_float(tx->dt))
		stmt(e, "# tl.max/tl.min need not return a NaN of the block; aicm's max and min do");
	{
		char ax[24];
		const char *kd = in->keepdims && in->axis >= 0 ? ", keep_dims=True" : "";

		if (in->axis < 0)
			snprintf(ax, sizeof ax, "None");
		else
			snprintf(ax, sizeof ax, "%" PRId64, in->axis);
		strbuf_printf(&b, "%s = %s(%s, %s%s%s)", e->py[in->res], fn, v.s, ax,
		    in->gop == OP_PROD ? ", _prod" : "", kd);
		if (in->gop == OP_MEAN && masked) {
			/* the mean of the valid lanes */
			strbuf_printf(&b, " / tl.sum(tl.where(%s, 1.0, 0.0) + tl.zeros(", m.s);
			put_shape(e, &b, tx->rank, tx->shape);
			strbuf_printf(&b, ", %s), %s%s)", tl_dtype(tx->dt), ax, kd);
		} else if (in->gop == OP_MEAN) {
			int64_t cnt = 1;

			for (int j = 0; j < tx->rank; j++)
				if (want[j])
					cnt *= tx->shape[j];
			strbuf_printf(&b, " / %" PRId64 ".0", cnt);
		}
	}
	if (in->nin > 1) {
		const char *acc = e->py[in->in[1]];
		StrBuf c = {0};

		stmt(e, b.s);
		strbuf_printf(&c, "%s = ", e->py[in->res]);
		switch (in->gop) {
		case OP_MAX: case OP_MIN:
			strbuf_printf(&c, "tl.%s(%s, %s%s)", in->gop == OP_MAX ? "maximum" : "minimum",
			    acc, e->py[in->res], ir_dtype_is_float(tx->dt) ?
			    ", propagate_nan=tl.PropagateNan.ALL" : "");
			break;
		case OP_PROD:
			strbuf_printf(&c, "%s * %s", acc, e->py[in->res]);
			break;
		default:
			strbuf_printf(&c, "%s + %s", acc, e->py[in->res]);
			break;
		}
		stmt(e, c.s);
		free(c.s);
	} else {
		stmt(e, b.s);
	}
	/* the kept dims keep their bounds; the accumulator's add theirs */
	if (rb) {
		int rj = 0;

		for (int j = 0; j < tx->rank; j++) {
			if (want[j] && !in->keepdims)
				continue;
			if (!want[j] && e->box[x])
				for (int i = 0; i < e->box[x][j].n; i++)
					box_add(e, &rb[rj], &e->box[x][j].c[i]);
			rj++;
		}
		if (in->nin > 1 && e->box[in->in[1]])
			for (int j = 0; j < r->rank; j++)
				for (int i = 0; i < e->box[in->in[1]][j].n; i++)
					box_add(e, &rb[j], &e->box[in->in[1]][j].c[i]);
	}
	free(b.s);
	free(m.s);
	free(v.s);
}

/* dot(a, b, c): tl.dot where Triton takes it (rank 2, floats, every dim
 * at least 16), else the product as a broadcast multiply and a sum. */
static void
emit_dot(Em *e, const TileInst *in)
{
	const TileVal *a = val(e, in->in[0]), *bv = val(e, in->in[1]), *r;
	DimBox *rb;
	StrBuf s = {0};
	int rk = a->rank;
	int64_t M = pow2(a->shape[rk - 2]), K = pow2(a->shape[rk - 1]), N = pow2(bv->shape[rk - 1]);

	rb = def(e, in);
	r = val(e, in->res);
	if (rk == 2 && ir_dtype_is_float(a->dt) && M >= 16 && N >= 16 && K >= 16) {
		/* f32: IEEE products, not TF32, as the reference computes */
		strbuf_printf(&s, "%s = %s + tl.dot(%s, %s, %sout_dtype=%s)", e->py[in->res],
		    e->py[in->in[2]], e->py[in->in[0]], e->py[in->in[1]], r->dt == DT_F32 ?
		    "input_precision=\"ieee\", " : "", tl_dtype(r->dt));
	} else if (ir_dtype_is_float(a->dt) && M >= 16 && N >= 16 && K >= 16) {
		/* leading dims of 1 (the verifier's rule): a rank-2 dot */
		StrBuf sh = {0};

		put_shape(e, &sh, rk, r->shape);
		stmt(e, "# the leading dims are 1: the rank-2 tl.dot, reshaped");
		strbuf_printf(&s, "%s = %s + tl.reshape(tl.dot(tl.reshape(%s, (%" PRId64 ", %" PRId64
		    ")), tl.reshape(%s, (%" PRId64 ", %" PRId64 ")), %sout_dtype=%s), %s)",
		    e->py[in->res], e->py[in->in[2]], e->py[in->in[0]], M, K, e->py[in->in[1]], K, N,
		    r->dt == DT_F32 ? "input_precision=\"ieee\", " : "", tl_dtype(r->dt), sh.s);
		free(sh.s);
	} else {
		StrBuf ia = {0}, ib = {0};

		stmt(e, ir_dtype_is_float(a->dt) ? "# tl.dot takes rank-2 tiles of at least 16 a side: "
		    "the product as a broadcast multiply and a sum" : "# tl.dot has no integer product "
		    "of this width: a broadcast multiply and a sum (wrapping, as aicm's)");
		/* a[.., M, K, None] * b[.., None, K, N], summed over K */
		strbuf_putc(&ia, '[');
		strbuf_putc(&ib, '[');
		for (int j = 0; j <= rk; j++) {
			strbuf_puts(&ia, j ? ", " : "");
			strbuf_puts(&ib, j ? ", " : "");
			strbuf_puts(&ia, j == rk ? "None" : ":");
			strbuf_puts(&ib, j == rk - 2 ? "None" : ":");
		}
		strbuf_putc(&ia, ']');
		strbuf_putc(&ib, ']');
		strbuf_printf(&s, "%s = %s + tl.sum(%s%s * %s%s, %d)", e->py[in->res], e->py[in->in[2]],
		    e->py[in->in[0]], ia.s, e->py[in->in[1]], ib.s, rk - 1);
		free(ia.s);
		free(ib.s);
	}
	stmt(e, s.s);
	free(s.s);
	/* rows of a, columns of b, leading dims of a */
	if (rb) {
		for (int j = 0; j < rk - 1; j++)
			if (e->box[in->in[0]])
				box_take(e, &rb[j], r->shape[j], &e->box[in->in[0]][j], a->shape[j]);
		if (e->box[in->in[1]])
			box_take(e, &rb[rk - 1], r->shape[rk - 1], &e->box[in->in[1]][rk - 1],
			    bv->shape[rk - 1]);
	}
}

static void
emit_transpose(Em *e, const TileInst *in)
{
	const TileVal *x = val(e, in->in[0]);
	DimBox *rb = def(e, in);
	StrBuf b = {0};

	if (x->rank == 2 && in->perm[0] == 1)
		strbuf_printf(&b, "%s = tl.trans(%s)", e->py[in->res], e->py[in->in[0]]);
	else {
		strbuf_printf(&b, "%s = tl.permute(%s, (", e->py[in->res], e->py[in->in[0]]);
		for (int j = 0; j < in->nperm; j++)
			strbuf_printf(&b, j ? ", %" PRId64 : "%" PRId64, in->perm[j]);
		strbuf_puts(&b, in->nperm == 1 ? ",))" : "))");
	}
	stmt(e, b.s);
	free(b.s);
	if (rb && e->box[in->in[0]])
		for (int j = 0; j < in->nperm; j++)
			for (int i = 0; i < e->box[in->in[0]][in->perm[j]].n; i++)
				box_add(e, &rb[j], &e->box[in->in[0]][in->perm[j]].c[i]);
}

static void
emit_broadcast(Em *e, const TileInst *in)
{
	const TileVal *r;
	StrBuf b = {0};

	def(e, in);
	r = val(e, in->res);
	box_broadcast(e, in->res, 1, in->in);
	strbuf_printf(&b, "%s = tl.broadcast_to(%s, ", e->py[in->res], e->py[in->in[0]]);
	put_shape(e, &b, r->rank, r->shape);
	strbuf_putc(&b, ')');
	stmt(e, b.s);
	free(b.s);
}

/* ---- joined values ----------------------------------------------------- */

static void
part_of_val(Em *e, Part *p, int v)
{
	const TileVal *tv = val(e, v);

	p->name = e->py[v];
	p->rank = tv->rank;
	memcpy(p->shape, tv->shape, sizeof p->shape);
	p->dt = tv->dt;
	memset(p->box, 0, sizeof p->box);
	if (e->box[v])
		memcpy(p->box, e->box[v], sizeof(DimBox) * (size_t)tv->rank);
}

static void
emit_join(Em *e, const TileInst *in)
{
	StrBuf b = {0};

	e->py[in->res] = em_name(e, val(e, in->res)->name, "");
	e->nparts[in->res] = in->nin;
	e->parts[in->res] = xcalloc(MAXPARTS, sizeof(Part));
	strbuf_puts(&b, "# joined as the tuple (");
	for (int k = 0; k < in->nin; k++) {
		if (e->nparts[in->in[k]])
			AICM_BUG("a join of a joined value");
		part_of_val(e, &e->parts[in->res][k], in->in[k]);
		strbuf_printf(&b, k ? ", %s" : "%s", e->py[in->in[k]]);
	}
	strbuf_puts(&b, "): a Triton loop carries each part itself");
	stmt(e, b.s);
	free(b.s);
}

static void
emit_extract(Em *e, const TileInst *in)
{
	int x = in->in[0];
	int64_t at = 0, w = val(e, in->res)->shape[val(e, in->res)->rank - 1];
	StrBuf b = {0};
	DimBox *rb;

	rb = def(e, in);
	for (int k = 0; k < e->nparts[x]; k++) {
		const Part *p = &e->parts[x][k];

		if (at == in->start && p->shape[p->rank - 1] == w) {
			strbuf_printf(&b, "%s = %s", e->py[in->res], p->name);
			stmt(e, b.s);
			free(b.s);
			for (int j = 0; j < p->rank; j++)
				for (int i = 0; i < p->box[j].n; i++)
					box_add(e, &rb[j], &p->box[j].c[i]);
			return;
		}
		at += p->shape[p->rank - 1];
	}
	diag_error(e->d, in->loc, "kernel '@%s': '%%%s' extracts columns %" PRId64 " to %" PRId64
	    " that are not one part of a join (Triton has no column slice of a tile)", e->f->name,
	    val(e, in->res)->name, in->start, in->start + w);
	e->failed = true;
}

/* ---- windows ----------------------------------------------------------- */

/* im2col %x[plane, k, p] : [R, C] other=V window=(Cg, KH, KW, OH, OW, sh,
 * sw, pt, pl, dh, dw). */
static void
emit_im2col(Em *e, const TileInst *in)
{
	const TileVal *r;
	const Node *x = &e->g->nodes[e->f->args[in->arg]];
	const int64_t *g = in->win;
	int64_t H = x->type.dim[2], W = x->type.dim[3];
	DimBox *rb = def(e, in);
	const char *t = e->py[in->res];
	StrBuf b = {0}, rows = {0}, cols = {0};

	r = val(e, in->res);
	put_lanes(e, &rows, &in->idx[1], 1, r->shape[0], 0, 2);
	put_lanes(e, &cols, &in->idx[2], 1, r->shape[1], 1, 2);
	stmtf(e, "%s_q = %s  # rows: (channel, ky, kx)", t, rows.s);
	stmtf(e, "%s_p = %s  # columns: output pixels (oy, ox)", t, cols.s);
	stmtf(e, "%s_y = (%s_p // %" PRId64 ")[None, :] * %" PRId64 " - %" PRId64
	    " + ((%s_q // %" PRId64 ") %% %" PRId64 ")[:, None] * %" PRId64, t, t, g[4], g[5],
	    g[7], t, g[2], g[1], g[9]);
	stmtf(e, "%s_x = (%s_p %% %" PRId64 ")[None, :] * %" PRId64 " - %" PRId64
	    " + (%s_q %% %" PRId64 ")[:, None] * %" PRId64, t, t, g[4], g[6], g[8], t, g[2], g[10]);
	strbuf_printf(&b, "%s = tl.load(%s + (", t, e->argptr[in->arg]);
	put_idx(e, &b, &in->idx[0]);
	strbuf_printf(&b, " + %s_q[:, None] // %" PRId64 ") * %" PRId64 " + %s_y * %" PRId64
	    " + %s_x, mask=(%s_q < %" PRId64 ")[:, None] & (%s_p < %" PRId64 ")[None, :] & "
	    "(%s_y >= 0) & (%s_y < %" PRId64 ") & (%s_x >= 0) & (%s_x < %" PRId64 "), other=",
	    t, g[1] * g[2], H * W, t, W, t, t, g[0] * g[1] * g[2], t, g[3] * g[4], t, t, H, t, t, W);
	put_num(&b, r->dt, &in->other);
	strbuf_putc(&b, ')');
	stmt(e, b.s);
	/* rows past Cg*KH*KW and columns past OH*OW are outside the box */
	box_below(e, &rb[0], &in->idx[1], g[0] * g[1] * g[2]);
	box_below(e, &rb[1], &in->idx[2], g[3] * g[4]);
	free(b.s);
	free(rows.s);
	free(cols.s);
}

/* window_max, window_sum %x[plane, p] : [R, C] window=(Cg, KH, KW, OH, OW,
 * sh, sw, pt, pl, dh, dw): the taps folded in one by one, unrolled. */
static void
emit_window(Em *e, const TileInst *in)
{
	const TileVal *r;
	const Node *x = &e->g->nodes[e->f->args[in->arg]];
	const int64_t *g = in->win;
	int64_t H = x->type.dim[2], W = x->type.dim[3];
	DimBox *rb = def(e, in);
	const char *t = e->py[in->res];
	bool mx = in->op == TO_WINDOW_MAX;
	StrBuf b = {0}, rows = {0}, cols = {0};

	r = val(e, in->res);
	put_lanes(e, &rows, &in->idx[0], 1, r->shape[0], 0, 2);
	put_lanes(e, &cols, &in->idx[1], 1, r->shape[1], 1, 2);
	stmtf(e, "%s_r = %s  # planes", t, rows.s);
	stmtf(e, "%s_p = %s  # output pixels", t, cols.s);
	strbuf_printf(&b, "%s = tl.full(", t);
	put_shape(e, &b, 2, r->shape);
	strbuf_printf(&b, ", %s, %s)", mx ? "float(\"-inf\")" : "0", tl_dtype(r->dt));
	stmt(e, b.s);
	b.n = 0;
	stmtf(e, "for %s_ky in tl.static_range(%" PRId64 "):", t, g[1]);
	e->depth++;
	stmtf(e, "for %s_kx in tl.static_range(%" PRId64 "):", t, g[2]);
	e->depth++;
	stmtf(e, "%s_y = (%s_p // %" PRId64 ") * %" PRId64 " - %" PRId64 " + %s_ky * %"
	    PRId64, t, t, g[4], g[5], g[7], t, g[9]);
	stmtf(e, "%s_x = (%s_p %% %" PRId64 ") * %" PRId64 " - %" PRId64 " + %s_kx * %"
	    PRId64, t, t, g[4], g[6], g[8], t, g[10]);
	stmtf(e, "%s_m = (%s_r < %" PRId64 ")[:, None] & ((%s_p < %" PRId64 ") & (%s_y >= 0)"
	    " & (%s_y < %" PRId64 ") & (%s_x >= 0) & (%s_x < %" PRId64 "))[None, :]", t, t, g[0], t,
	    g[3] * g[4], t, t, H, t, t, W);
	stmtf(e, "%s_v = tl.load(%s + %s_r[:, None] * %" PRId64 " + (%s_y * %" PRId64
	    " + %s_x)[None, :], mask=%s_m, other=%s)", t, e->argptr[in->arg], t, H * W, t, W, t, t,
	    mx ? "float(\"-inf\")" : "0");
	if (mx)
		strbuf_printf(&b, "%s = tl.maximum(%s, %s_v, propagate_nan=tl.PropagateNan.ALL)", t, t,
		    t);
	else
		strbuf_printf(&b, "%s = %s + %s_v", t, t, t);
	stmt(e, b.s);
	e->depth -= 2;
	box_below(e, &rb[0], &in->idx[0], g[0]);
	box_below(e, &rb[1], &in->idx[1], g[3] * g[4]);
	free(b.s);
	free(rows.s);
	free(cols.s);
}

/* window_count %x[p] : [1, C] window=(OH, OW, sh, sw, KH, KW, dh, dw, ylo,
 * yhi, xlo, xhi): per pixel, the taps inside [ylo, yhi) x [xlo, xhi). */
static void
emit_window_count(Em *e, const TileInst *in)
{
	const TileVal *r;
	const int64_t *g = in->win;
	DimBox *rb = def(e, in);
	const char *t = e->py[in->res];
	StrBuf b = {0}, cols = {0};
	int rk;

	r = val(e, in->res);
	rk = r->rank;
	put_lanes(e, &cols, &in->idx[0], 1, r->shape[rk - 1], rk - 1, rk);
	stmtf(e, "%s_p = %s", t, cols.s);
	stmtf(e, "%s_ny = tl.zeros(%s_p.shape, tl.int32)", t, t);
	stmtf(e, "%s_nx = tl.zeros(%s_p.shape, tl.int32)", t, t);
	stmtf(e, "for %s_k in tl.static_range(%" PRId64 "):", t, g[4]);
	stmtf(e, "    %s_ny += (((%s_p // %" PRId64 ") * %" PRId64 " + %s_k * %" PRId64
	    " >= %" PRId64 ") & ((%s_p // %" PRId64 ") * %" PRId64 " + %s_k * %" PRId64 " < %" PRId64
	    ")).to(tl.int32)", t, t, g[1], g[2], t, g[6], g[8], t, g[1], g[2], t, g[6], g[9]);
	stmtf(e, "for %s_k in tl.static_range(%" PRId64 "):", t, g[5]);
	stmtf(e, "    %s_nx += (((%s_p %% %" PRId64 ") * %" PRId64 " + %s_k * %" PRId64
	    " >= %" PRId64 ") & ((%s_p %% %" PRId64 ") * %" PRId64 " + %s_k * %" PRId64 " < %" PRId64
	    ")).to(tl.int32)", t, t, g[1], g[3], t, g[7], g[10], t, g[1], g[3], t, g[7], g[11]);
	/* lanes past the pixels count 1: no 0/0 in them */
	strbuf_printf(&b, "%s = tl.where(%s_p < %" PRId64 ", %s_ny * %s_nx, 1).to(%s)", t, t,
	    g[0] * g[1], t, t, tl_dtype(r->dt));
	if (rk == 2)
		strbuf_puts(&b, "[None, :]");
	stmt(e, b.s);
	box_below(e, &rb[rk - 1], &in->idx[0], g[0] * g[1]);
	free(b.s);
	free(cols.s);
}

/* ---- gathers and arg reductions ----------------------------------------- */

/* load_gather %x[i0, .., 0, ..], %ix : [..] axis=A masked. */
static void
emit_gather(Em *e, const TileInst *in)
{
	const TileVal *r, *ix = val(e, in->in[0]);
	const Node *x = &e->g->nodes[e->f->args[in->arg]];
	int rx = x->type.rank, ri = ix->rank, A = (int)in->axis, rr;
	DimBox *rb = def(e, in), mb[IR_MAX_RANK];
	const char *t = e->py[in->res];
	StrBuf b = {0}, m = {0};
	int64_t str[IR_MAX_RANK], s = 1, size = x->type.dim[A];

	r = val(e, in->res);
	rr = r->rank;
	for (int j = rx - 1; j >= 0; j--) {
		str[j] = s;
		s *= x->type.dim[j];
	}
	memset(mb, 0, sizeof mb);
	/* a negative index counts from the end, as numpy's */
	strbuf_printf(&b, "%s_i = tl.where(%s < 0, %s + %" PRId64 ", %s)", t, e->py[in->in[0]],
	    e->py[in->in[0]], size, e->py[in->in[0]]);
	stmt(e, b.s);
	b.n = 0;
	stmtf(e, "tl.device_assert((%s_i >= 0) & (%s_i < %" PRId64 "), \"'gather' index out "
	    "of range for axis %d of size %" PRId64 "\")", t, t, size, A, size);
	strbuf_printf(&b, "%s = tl.load(%s + ", t, e->argptr[in->arg]);
	for (int j = 0; j < rx; j++) {
		if (j)
			strbuf_puts(&b, " + ");
		if (j == A) {
			/* the index tile in dims A..A+ri-1 of the result */
			strbuf_printf(&b, "%s_i", t);
			if (rr != ri && ri > 0) {
				strbuf_putc(&b, '[');
				for (int d = 0; d < rr; d++)
					strbuf_printf(&b, "%s%s", d ? ", " : "", d >= A && d < A + ri ?
					    ":" : "None");
				strbuf_putc(&b, ']');
			}
		} else {
			int rj = j < A ? j : j - 1 + ri;

			put_lanes(e, &b, &in->idx[j], 1, r->shape[rj], rj, rr);
			put_bcast(&b, rj, rr);
			if (in->masked)
				access_conds(e, &mb[rj], &in->idx[j], 1, r->shape[rj], x->type.dim[j]);
		}
		if (str[j] != 1)
			strbuf_printf(&b, " * %" PRId64, str[j]);
	}
	for (int j = 0; j < rr; j++)
		lane_cond(e, &mb[j], r->shape[j]);
	if (put_mask(e, &m, mb, r->shape, rr, NULL))
		strbuf_printf(&b, ", mask=%s, other=0", m.s);
	strbuf_putc(&b, ')');
	stmt(e, b.s);
	for (int j = 0; j < rr; j++) {
		for (int i = 0; i < mb[j].n; i++)
			box_add(e, &rb[j], &mb[j].c[i]);
		if (j >= A && j < A + ri && e->box[in->in[0]])
			for (int i = 0; i < e->box[in->in[0]][j - A].n; i++)
				box_add(e, &rb[j], &e->box[in->in[0]][j - A].c[i]);
	}
	free(b.s);
	free(m.s);
}

/* argmax/argmin %x[..] : [..] axis=A masked last=: each lane scans its
 * line along A, carrying the best value and its index. */
static void
emit_argreduce(Em *e, const TileInst *in)
{
	const TileVal *r;
	const Node *x = &e->g->nodes[e->f->args[in->arg]];
	int rx = x->type.rank, A = (int)in->axis;
	DimBox *rb = def(e, in), mb[IR_MAX_RANK];
	const char *t = e->py[in->res];
	bool fl = ir_dtype_is_float(x->type.dt), mx = in->op == TO_ARGMAX;
	const char *cmp = mx ? (in->last ? ">=" : ">") : (in->last ? "<=" : "<");
	StrBuf b = {0}, m = {0}, p = {0};
	int64_t str[IR_MAX_RANK], s = 1;

	r = val(e, in->res);
	for (int j = rx - 1; j >= 0; j--) {
		str[j] = s;
		s *= x->type.dim[j];
	}
	memset(mb, 0, sizeof mb);
	strbuf_printf(&p, "%s + ", e->argptr[in->arg]);
	for (int j = 0; j < rx; j++) {
		if (j)
			strbuf_puts(&p, " + ");
		put_lanes(e, &p, &in->idx[j], 1, r->shape[j], j, rx);
		put_bcast(&p, j, rx);
		if (str[j] != 1)
			strbuf_printf(&p, " * %" PRId64, str[j]);
		lane_cond(e, &mb[j], r->shape[j]);
		if (in->masked && j != A)
			access_conds(e, &mb[j], &in->idx[j], 1, r->shape[j], x->type.dim[j]);
	}
	put_mask(e, &m, mb, r->shape, rx, NULL);
	strbuf_printf(&b, "%s_ptr = %s", t, p.s);
	stmt(e, b.s);
	b.n = 0;
	stmtf(e, "%s_best = tl.load(%s_ptr%s%s)", t, t, m.n ? ", mask=" : "", m.n ? m.s : "");
	strbuf_printf(&b, "%s = tl.zeros(", t);
	put_shape(e, &b, r->rank, r->shape);
	strbuf_puts(&b, ", tl.int64)");
	stmt(e, b.s);
	b.n = 0;
	stmtf(e, "for %s_j in range(1, %" PRId64 "):", t, x->type.dim[A]);
	e->depth++;
	strbuf_printf(&b, "%s_v = tl.load(%s_ptr + %s_j", t, t, t);
	if (str[A] != 1)
		strbuf_printf(&b, " * %" PRId64, str[A]);
	strbuf_printf(&b, "%s%s)", m.n ? ", mask=" : "", m.n ? m.s : "");
	stmt(e, b.s);
	b.n = 0;
	/* the first NaN wins (the last with last=True), as numpy's */
	if (fl && in->last)
		strbuf_printf(&b, "%s_w = ((%s_v %s %s_best) & (%s_best == %s_best)) | (%s_v != %s_v)", t,
		    t, cmp, t, t, t, t, t);
	else if (fl)
		strbuf_printf(&b, "%s_w = (%s_v %s %s_best) | ((%s_v != %s_v) & (%s_best == %s_best))", t,
		    t, cmp, t, t, t, t, t);
	else
		strbuf_printf(&b, "%s_w = %s_v %s %s_best", t, t, cmp, t);
	stmt(e, b.s);
	b.n = 0;
	stmtf(e, "%s_best = tl.where(%s_w, %s_v, %s_best)", t, t, t, t);
	stmtf(e, "%s = tl.where(%s_w, %s_j, %s)", t, t, t, t);
	e->depth--;
	for (int j = 0; j < rx; j++)
		for (int i = 0; i < mb[j].n; i++)
			box_add(e, &rb[j], &mb[j].c[i]);
	free(b.s);
	free(m.s);
	free(p.s);
}

/* ---- the body ---------------------------------------------------------- */

/* Conditions of a loop result: the yield's, the counter at its last trip;
 * those that name other values of the loop are dropped (none in what
 * lower-tiled makes). */
static void
box_after_loop(Em *e, DimBox *dst, const DimBox *src, int rank, const TileInst *fo, int fi)
{
	int64_t trips = tile_trips(fo), last = fo->lo + (trips > 0 ? trips - 1 : 0) * fo->step;

	for (int j = 0; j < rank; j++)
		for (int i = 0; i < src[j].n; i++) {
			Cond c = src[j].c[i];
			bool inner = false;
			int n = 0;

			for (int t = 0; t < c.idx.nterm; t++) {
				if (c.idx.val[t] == fo->var) {
					c.idx.k += c.idx.coef[t] * last;
					continue;
				}
				if (e->loop_of[c.idx.val[t]] >= fi)
					inner = true;
				c.idx.val[n] = c.idx.val[t];
				c.idx.coef[n++] = c.idx.coef[t];
			}
			c.idx.nterm = n;
			if (!inner)
				box_add(e, &dst[j], &c);
		}
}

/* program_id: its range is the grid axis. */
static void
emit_program_id(Em *e, const TileInst *in)
{
	def(e, in);
	e->lo[in->res] = 0;
	e->hi[in->res] = e->f->grid[in->axis] - 1;
	stmtf(e, "%s = tl.program_id(%" PRId64 ")", e->py[in->res], in->axis);
}

/* idiv, irem: their ranges from the operand's. */
static void
emit_idiv(Em *e, const TileInst *in)
{
	StrBuf b = {0};

	def(e, in);
	if (in->op == TO_IDIV) {
		e->lo[in->res] = e->lo[in->in[0]] / in->by;
		e->hi[in->res] = e->hi[in->in[0]] / in->by;
	} else {
		e->lo[in->res] = 0;
		e->hi[in->res] = in->by - 1;
	}
	strbuf_printf(&b, "%s = %s %s %" PRId64, e->py[in->res], e->py[in->in[0]],
	    in->op == TO_IDIV ? "//" : "%", in->by);
	stmt(e, b.s);
	free(b.s);
}

/* Each tile op's emitter.  for is emit_insts's own (it walks the body)
 * and yield is emit_for's; triton_emit checks at each call that every
 * other row of tile_ops.def has one, so a new op cannot go unnoticed. */
static void (*const emit_op[TO_COUNT])(Em *, const TileInst *) = {
	[TO_PROGRAM_ID] = emit_program_id,
	[TO_IDIV] = emit_idiv, [TO_IREM] = emit_idiv,
	[TO_ZEROS] = emit_fill, [TO_FULL] = emit_fill,
	[TO_LOAD] = emit_load, [TO_LOAD_PAD] = emit_load, [TO_LOAD_STEP] = emit_load,
	[TO_STORE] = emit_store, [TO_ATOMIC_ADD] = emit_store, [TO_ATOMIC_MAX] = emit_store,
	[TO_DOT] = emit_dot,
	[TO_UNARY] = emit_unary,
	[TO_BINARY] = emit_binary,
	[TO_WHERE] = emit_where,
	[TO_REDUCE] = emit_reduce,
	[TO_TRANSPOSE] = emit_transpose,
	[TO_BROADCAST] = emit_broadcast,
	[TO_IM2COL] = emit_im2col,
	[TO_WINDOW_MAX] = emit_window, [TO_WINDOW_SUM] = emit_window,
	[TO_WINDOW_COUNT] = emit_window_count,
	[TO_LOAD_GATHER] = emit_gather,
	[TO_ARGMAX] = emit_argreduce, [TO_ARGMIN] = emit_argreduce,
	[TO_JOIN] = emit_join,
	[TO_EXTRACT] = emit_extract,
};

static int emit_insts(Em *e, int i, int end, int loop);

static void
emit_for(Em *e, int i)
{
	const TileInst *fo = &e->f->insts[i];
	int init = fo->in[0], it = fo->iter, y = e->f->insts[fo->end].in[0], res = fo->res;
	int64_t trips = tile_trips(fo);

	comment(e);
	e->py[fo->var] = em_name(e, val(e, fo->var)->name, "");
	e->lo[fo->var] = fo->lo;
	e->hi[fo->var] = trips > 0 ? fo->lo + (trips - 1) * fo->step : fo->lo;
	if (e->nparts[init]) {
		/* a joined carried value: each part its own loop-carried name */
		int np = e->nparts[init];

		e->py[it] = em_name(e, val(e, it)->name, "");
		e->nparts[it] = np;
		e->parts[it] = xcalloc(MAXPARTS, sizeof(Part));
		for (int k = 0; k < np; k++) {
			Part *p = &e->parts[it][k];
			char sfx[16];

			*p = e->parts[init][k];
			snprintf(sfx, sizeof sfx, "_%d", k);
			p->name = em_name(e, val(e, it)->name, sfx);
			stmtf(e, "%s = %s", p->name, e->parts[init][k].name);
		}
	} else {
		e->py[it] = em_name(e, val(e, it)->name, "");
		if (val(e, it)->rank >= 0) {
			DimBox *ib = box_of(e, it), *sb = e->box[init];

			if (sb)
				memcpy(ib, sb, sizeof(DimBox) * (size_t)val(e, it)->rank);
		}
		stmtf(e, "%s = %s", e->py[it], e->py[init]);
	}
	stmtf(e, "for %s in range(%" PRId64 ", %" PRId64 ", %" PRId64 "):", e->py[fo->var],
	    fo->lo, fo->hi, fo->step);
	e->depth++;
	e->open[e->nopen++] = i;
	emit_insts(e, i + 1, fo->end, i);
	e->nopen--;
	if (e->failed)
		return;
	/* yield */
	comment(e);
	if (e->nparts[it]) {
		if (e->nparts[y] != e->nparts[it])
			AICM_BUG("a yield of another join than the loop carries");
		for (int k = 0; k < e->nparts[it]; k++) {
			stmtf(e, "%s = %s", e->parts[it][k].name, e->parts[y][k].name);
		}
	} else {
		stmtf(e, "%s = %s", e->py[it], e->py[y]);
	}
	if (!strstr(e->lines[e->line - 1], "yield "))
		AICM_BUG("the printed body of '@%s' is out of step at its yield", e->f->name);
	e->depth--;
	comment(e);              /* the loop's closing brace */
	/* the result */
	e->py[res] = em_name(e, val(e, res)->name, "");
	if (e->nparts[it]) {
		e->nparts[res] = e->nparts[it];
		e->parts[res] = xcalloc(MAXPARTS, sizeof(Part));
		for (int k = 0; k < e->nparts[it]; k++) {
			Part *p = &e->parts[res][k];

			*p = e->parts[it][k];
			memset(p->box, 0, sizeof p->box);
			box_after_loop(e, p->box, e->parts[y][k].box, p->rank, fo, i);
		}
	} else {
		stmtf(e, "%s = %s", e->py[res], e->py[it]);
		if (val(e, res)->rank >= 0 && e->box[y])
			box_after_loop(e, box_of(e, res), e->box[y], val(e, res)->rank, fo, i);
	}
}

static int
emit_insts(Em *e, int i, int end, int loop)
{
	const TileFn *f = e->f;

	while (i < end && !e->failed) {
		const TileInst *in = &f->insts[i];

		if (in->res >= 0)
			e->loop_of[in->res] = loop;
		if (in->op == TO_FOR) {
			e->loop_of[in->var] = i;
			e->loop_of[in->iter] = i;
			emit_for(e, i);
			i = in->end + 1;
			continue;
		}
		comment(e);
		/* a joined tile lives as its parts: only loops and extracts
		 * take it (what lower-tiled makes); anything else has no form */
		for (int k = 0; k < in->nin && in->op != TO_EXTRACT; k++)
			if (e->nparts[in->in[k]]) {
				diag_error(e->d, in->loc, "kernel '@%s': '%%%s', a join of tiles, is used by '%s' "
				    "(Triton has no concatenation of tiles; only a loop may carry them)",
				    f->name, val(e, in->in[k])->name, tile_op_name(in));
				e->failed = true;
			}
		if (e->failed)
			break;
		if (!emit_op[in->op])
			AICM_BUG("tile op %d out of place", (int)in->op);
		emit_op[in->op](e, in);
		i++;
	}
	return i;
}

/* ---- kernels and the launcher ------------------------------------------ */

/* The printed graph's lines (the text is split in place). */
static int
split_lines(char *text, char ***lines)
{
	int n = 0, cap = 0;

	*lines = NULL;
	for (char *s = text; *s;) {
		char *nl = strchr(s, '\n');

		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			*lines = xrealloc(*lines, sizeof **lines * (size_t)cap);
		}
		(*lines)[n++] = s;
		if (!nl)
			break;
		*nl = 0;
		s = nl + 1;
	}
	return n;
}

/* The line of tiled node n's head, from line l on. */
static int
find_head(char **lines, int nlines, int l, const Node *n)
{
	size_t len = strlen(n->name);

	for (; l < nlines; l++)
		if (!strncmp(lines[l], "  %", 3) && !strncmp(lines[l] + 3, n->name, len) &&
		    !strncmp(lines[l] + 3 + len, " = tiled @", 10))
			return l;
	AICM_BUG("no printed head for tiled node '%%%s'", n->name);
}

static int
emit_kernel(FILE *o, const Graph *g, int node, char **lines, int nlines, int line,
    const char *kname, bool *libdevice, bool *prod, Diag *d)
{
	const Node *n = &g->nodes[node];
	const TileFn *f = n->tile;
	Em e = {0};
	char **argptr = xcalloc((size_t)f->nargs + 1, sizeof(char *));
	const char *resptr;
	StrBuf b = {0};

	e.o = o;
	e.g = g;
	e.n = n;
	e.f = f;
	e.py = xcalloc((size_t)f->nvals + 1, sizeof(char *));
	e.box = xcalloc((size_t)f->nvals + 1, sizeof(DimBox *));
	e.lo = xcalloc((size_t)f->nvals + 1, sizeof(int64_t));
	e.hi = xcalloc((size_t)f->nvals + 1, sizeof(int64_t));
	e.nparts = xcalloc((size_t)f->nvals + 1, sizeof(int));
	e.parts = xcalloc((size_t)f->nvals + 1, sizeof(Part *));
	e.loop_of = xcalloc((size_t)f->nvals + 1, sizeof(int));
	e.lines = lines;
	e.nlines = nlines;
	e.line = find_head(lines, nlines, line, n);
	e.libdevice = libdevice;
	e.prod = prod;
	e.d = d;
	for (int j = 0; j < f->nargs; j++)
		argptr[j] = em_name(&e, g->nodes[f->args[j]].name, "_ptr");
	resptr = em_name(&e, n->name, "_ptr");
	fputs("\n\n@triton.jit\n", o);
	strbuf_printf(&b, "def %s(", kname);
	for (int j = 0; j < f->nargs; j++)
		strbuf_printf(&b, "%s, ", argptr[j]);
	strbuf_puts(&b, resptr);
	for (int a = KA_BM; a <= KA_BK; a++)
		if (f->kset & (1u << a))
			strbuf_printf(&b, ", %s: tl.constexpr", ir_kattr_names[a]);
	strbuf_puts(&b, "):\n");
	fputs(b.s, o);
	e.depth = 1;
	comment(&e);                 /* the kernel's head */
	e.argptr = argptr;
	e.resptr = resptr;
	emit_insts(&e, 0, f->ninsts, -1);
	if (!e.failed)
		comment(&e);         /* its closing brace */
	for (int v = 0; v < f->nvals; v++) {
		free(e.box[v]);
		free(e.parts[v]);
	}
	for (int k = 0; k < e.nnames; k++)
		free(e.names[k]);
	free(e.names);
	free(e.py);
	free(e.box);
	free(e.lo);
	free(e.hi);
	free(e.nparts);
	free(e.parts);
	free(e.loop_of);
	free(e.lanes);
	free(argptr);
	free(b.s);
	return e.failed ? -1 : e.line;
}

/* A const node's tensor, as torch code. */
static void
put_const(StrBuf *b, const Node *n)
{
	const Attrs *at = &n->at;
	StrBuf shape = {0};

	strbuf_putc(&shape, '(');
	for (int j = 0; j < n->type.rank; j++)
		strbuf_printf(&shape, j ? ", %" PRId64 : "%" PRId64, n->type.dim[j]);
	strbuf_puts(&shape, n->type.rank == 1 ? ",)" : ")");
	if (at->set & (1u << ATTR_VALUES)) {
		strbuf_puts(b, "torch.tensor([");
		for (int i = 0; i < at->nvalues; i++) {
			if (i)
				strbuf_puts(b, ", ");
			if (ir_dtype_is_float(n->type.dt))
				put_float(b, at->values[i]);
			else
				strbuf_printf(b, "%" PRId64, at->ivalues[i]);
		}
		strbuf_printf(b, "], dtype=%s, device=dev).reshape(%s)", torch_dtype(n->type.dt),
		    shape.s);
	} else if (at->set & (1u << ATTR_FILE)) {
		/* the path as written (relative to the graph's folder), as a
		 * bytes literal: any byte of it survives */
		strbuf_puts(b, "torch.from_numpy(numpy.load(b\"");
		for (const unsigned char *c = (const unsigned char *)at->file; *c; c++) {
			if (*c == '"' || *c == '\\')
				strbuf_printf(b, "\\%c", *c);
			else if (*c < 0x20 || *c >= 0x7f)
				strbuf_printf(b, "\\x%02x", *c);
			else
				strbuf_putc(b, (char)*c);
		}
		strbuf_printf(b, "\")).to(device=dev, dtype=%s).reshape(%s)", torch_dtype(n->type.dt),
		    shape.s);
	} else {
		strbuf_printf(b, "torch.full(%s, ", shape.s);
		if (ir_dtype_is_float(n->type.dt) || !at->value_int)
			put_float(b, at->value);
		else
			strbuf_printf(b, "%" PRId64, at->ivalue);
		strbuf_printf(b, ", dtype=%s, device=dev)", torch_dtype(n->type.dt));
	}
	free(shape.s);
}

/* Inputs, and consts without a value (weights given at run time, as
 * aicm-run's --input gives them), are run()'s parameters. */
static bool
is_param(const Node *n)
{
	return n->op == OP_INPUT || (n->op == OP_CONST && !(n->at.set & ((1u << ATTR_VALUE) |
	    (1u << ATTR_VALUES) | (1u << ATTR_FILE))));
}

static void
put_tshape(StrBuf *b, const Type *t)
{
	strbuf_putc(b, '(');
	for (int j = 0; j < t->rank; j++)
		strbuf_printf(b, j ? ", %" PRId64 : "%" PRId64, t->dim[j]);
	strbuf_puts(b, t->rank == 1 ? ",)" : ")");
}

int
triton_emit(FILE *out, const Graph *g, const char *stem, Diag *d)
{
	char *text, **lines, **kname, **gname, **names = NULL;
	int nlines, line = 0, nnames = 0, capnames = 0, *outs, nout, ninputs = 0;
	bool libdevice = false, prod = false, file = false;
	char gn[128];
	FILE *body;
	char *bodytext = NULL;
	size_t bodylen = 0;
	StrBuf b = {0};
	int rc = 0;

	for (int op = 0; op < TO_COUNT; op++)
		if (!emit_op[op] && op != TO_FOR && op != TO_YIELD)
			AICM_BUG("tile op %d has no Triton emitter", op);
	/* the graph's name, or the file's stem, for comments and a docstring:
	 * a byte that could end them (a newline, a quote) becomes '?' */
	snprintf(gn, sizeof gn, "%s", g->name ? g->name : stem ? stem : "graph");
	for (char *c = gn; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == '\'' || *c == '"' || *c == '\\' || *c == 0x7f)
			*c = '?';
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (n->op != OP_INPUT && n->op != OP_CONST && n->op != OP_TILED) {
			diag_error(d, n->loc, "--emit=triton needs a lowered graph: '%%%s' ('%s') is "
			    "not a tiled kernel (add lower-tiled to --pass)", n->name,
			    ir_ops[n->op].name);
			return -1;
		}
		if (n->op == OP_CONST && (n->at.set & (1u << ATTR_FILE)))
			file = true;
	}
	text = ir_print_str(g, NULL);
	nlines = split_lines(text, &lines);
	kname = xcalloc((size_t)g->nnodes + 1, sizeof(char *));
	gname = xcalloc((size_t)g->nnodes + 1, sizeof(char *));
	/* module-level names: the kernels; run's locals: the graph's values */
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OP_TILED) {
			b.n = 0;
			strbuf_printf(&b, "triton_%s", g->nodes[i].tile->name);
			kname[i] = pyname(&names, &nnames, &capnames, b.s, "");
		}
	for (int i = 0; i < g->nnodes; i++)
		gname[i] = pyname(&names, &nnames, &capnames, g->nodes[i].name, "");
	body = open_memstream(&bodytext, &bodylen);
	if (!body)
		AICM_BUG("open_memstream failed");
	for (int i = 0; i < g->nnodes && rc == 0; i++) {
		if (g->nodes[i].op != OP_TILED)
			continue;
		line = emit_kernel(body, g, i, lines, nlines, line, kname[i], &libdevice, &prod, d);
		if (line < 0)
			rc = -2;
	}
	fclose(body);
	if (rc == 0) {
		fprintf(out, "# Triton source of graph '%s', written by aicm-opt --emit=triton.\n", gn);
		fputs("#\n# One @triton.jit kernel per tiled program of the lowered graph, then run(),\n"
		    "# which allocates the outputs and launches the kernels in order.  The\n"
		    "# comment above each statement is the tile-IR line it comes from\n"
		    "# (docs/tiled.md); the masks are the tile IR's valid boxes written out.\n", out);
		fputs("import triton\nimport triton.language as tl\n", out);
		if (libdevice)
			fputs("from triton.language.extra import libdevice\n", out);
		fputs("import torch\n", out);
		if (file)
			fputs("import numpy\n", out);
		if (prod)
			fputs("\n\n@triton.jit\ndef _prod(a, b):\n    # prod's combining step "
			    "(Triton has no tl.prod)\n    return a * b\n", out);
		fwrite(bodytext, 1, bodylen, out);
		/* the launcher */
		fputs("\n\ndef run(", out);
		for (int i = 0; i < g->nnodes; i++)
			if (is_param(&g->nodes[i]))
				fprintf(out, "%s%s", ninputs++ ? ", " : "", gname[i]);
		fputs("):\n", out);
		fprintf(out, "    \"\"\"Runs graph '%s' on CUDA tensors; returns its outputs.\"\"\"\n",
		    gn);
		for (int i = 0, first = 1; i < g->nnodes; i++) {
			const Node *n = &g->nodes[i];

			if (!is_param(n))
				continue;
			if (first)
				fprintf(out, "    dev = %s.device\n", gname[i]);
			first = 0;
			b.n = 0;
			put_tshape(&b, &n->type);
			fprintf(out, "    assert tuple(%s.shape) == %s and %s.dtype == %s and "
			    "%s.is_contiguous()\n", gname[i], b.s, gname[i], torch_dtype(n->type.dt),
			    gname[i]);
		}
		if (!ninputs)
			fputs("    dev = torch.device(\"cuda\")\n", out);
		for (int i = 0; i < g->nnodes; i++) {
			const Node *n = &g->nodes[i];
			const TileFn *f = n->tile;

			if (n->op == OP_CONST && !is_param(n)) {
				b.n = 0;
				put_const(&b, n);
				fprintf(out, "    %s = %s\n", gname[i], b.s);
				continue;
			}
			if (n->op != OP_TILED)
				continue;
			b.n = 0;
			put_tshape(&b, &n->type);
			if (f->has_init && f->init == 0)
				fprintf(out, "    %s = torch.zeros(%s, device=dev, dtype=%s)  # atomics "
				    "add into it\n", gname[i], b.s, torch_dtype(n->type.dt));
			else if (f->has_init) {
				StrBuf v = {0};

				put_float(&v, f->init);
				fprintf(out, "    %s = torch.full(%s, %s, device=dev, dtype=%s)  # init=, "
				    "for its atomics\n", gname[i], b.s, v.s, torch_dtype(n->type.dt));
				free(v.s);
			} else
				fprintf(out, "    %s = torch.empty(%s, device=dev, dtype=%s)\n", gname[i],
				    b.s, torch_dtype(n->type.dt));
			fprintf(out, "    %s[(%" PRId64 ", %" PRId64 ", %" PRId64 ")](", kname[i],
			    f->grid[0], f->grid[1], f->grid[2]);
			for (int j = 0; j < f->nargs; j++)
				fprintf(out, "%s, ", gname[f->args[j]]);
			fputs(gname[i], out);
			for (int a = 0; a < KA_COUNT; a++) {
				if (!(f->kset & (1u << a)) || a == KA_SPLIT)
					continue;
				fprintf(out, ", %s=%" PRId64, a == KA_WARPS ? "num_warps" : a ==
				    KA_STAGES ? "num_stages" : ir_kattr_names[a], f->kattr[a]);
			}
			fputs(")\n", out);
		}
		nout = ir_outputs(g, &outs);
		fputs("    return ", out);
		for (int k = 0; k < nout; k++)
			fprintf(out, "%s%s", k ? ", " : "", gname[outs[k]]);
		fputs(nout == 1 ? "\n" : nout ? "\n" : "None\n", out);
		free(outs);
	}
	for (int k = 0; k < nnames; k++)
		free(names[k]);
	free(names);
	free(kname);
	free(gname);
	free(bodytext);
	free(lines);
	free(text);
	free(b.s);
	return rc;
}
