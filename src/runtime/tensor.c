/*
 * tensor.c: tensors, size limits, the error measure and numpy-style
 * printing.
 *
 * Sizes are computed with overflow checks and compared with the limits
 * before any allocation (DESIGN §4, §7).  The error measure is DESIGN §7's,
 * the single definition that --check, --expected-output and the tests use.
 * The preview follows numpy's _formatArray (str() of an array: ' ' between
 * items, rows on their own lines, blank lines between blocks, summarised
 * with '...' past 1000 elements, 3 items per edge, wrapped at 75 columns),
 * with every element in one fixed format (%.6g) so that goldens are stable.
 */
#define _DEFAULT_SOURCE              /* MADV_HUGEPAGE */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "exec.h"

enum { HUGE_MIN = 2 << 20 };            /* a huge page */

int64_t
exec_type_bytes(const Type *t)
{
	int64_t n = ir_type_numel(t), b;

	if (t->rank < 0 || n < 0 || __builtin_mul_overflow(n, (int64_t)ir_dtype_size(t->dt), &b))
		return -1;
	return b;
}

int
exec_tensor_alloc(Tensor *t, const Type *ty, int64_t max_bytes)
{
	int64_t b = exec_type_bytes(ty);
	size_t rounded;
	void *p;

	memset(t, 0, sizeof *t);
	/* past 2^47 bytes (user address space on x86-64 and arm64) no allocator
	 * can succeed; refusing here keeps sanitizer allocators from aborting */
	if (b < 0 || (max_bytes > 0 && b > max_bytes) || b > ((int64_t)1 << 47) ||
	    (uint64_t)b > SIZE_MAX - EXEC_ALIGN)
		return -1;
	if ((size_t)b >= HUGE_MIN) {
		/* A large tensor on 2 MiB pages: one fault and one TLB entry per
		 * 2 MiB instead of 512, which streaming kernels feel (issue 8). */
		rounded = ((size_t)b + HUGE_MIN - 1) & ~(size_t)(HUGE_MIN - 1);
		if (posix_memalign(&p, HUGE_MIN, rounded) != 0)
			return -1;
#ifdef MADV_HUGEPAGE
		madvise(p, rounded, MADV_HUGEPAGE);
#endif
	} else {
		/* aligned_alloc wants a multiple of the alignment */
		rounded = ((size_t)b + EXEC_ALIGN - 1) / EXEC_ALIGN * EXEC_ALIGN;
		p = aligned_alloc(EXEC_ALIGN, rounded ? rounded : EXEC_ALIGN);
		if (!p)
			return -1;
	}
	t->dt = ty->dt;
	t->rank = ty->rank;
	memcpy(t->dim, ty->dim, sizeof t->dim);
	t->numel = ir_type_numel(ty);
	t->data = p;
	return 0;
}

void
exec_tensor_free(Tensor *t)
{
	free(t->data);
	memset(t, 0, sizeof *t);
}

void
exec_tensors_free(Tensor *vals, int n)
{
	for (int i = 0; i < n; i++)
		exec_tensor_free(&vals[i]);
}

size_t
exec_tensor_bytes(const Tensor *t)
{
	return (size_t)t->numel * ir_dtype_size(t->dt);
}

Type
exec_tensor_type(const Tensor *t)
{
	Type ty = {.rank = t->rank, .dt = t->dt};

	memcpy(ty.dim, t->dim, sizeof ty.dim);
	return ty;
}

bool
exec_tensor_has_type(const Tensor *t, const Type *ty)
{
	if (!t->data || t->dt != ty->dt || t->rank != ty->rank)
		return false;
	for (int i = 0; i < t->rank; i++)
		if (t->dim[i] != ty->dim[i])
			return false;
	return true;
}

/* ---- limits ---------------------------------------------------------- */

int64_t
exec_default_max_total(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || psz <= 0)
		return (int64_t)4 << 30;
	return (int64_t)pages / 2 * psz;
}

int
exec_check_limits(const Graph *const *gs, int ngraphs, const ExecLimits *lim, Diag *d)
{
	int64_t total = 0, big = -1;
	const Graph *bigg = NULL;
	int bigi = -1, bad = 0;
	bool over = false;
	char s[IR_TYPE_STR];

	for (int k = 0; k < ngraphs; k++) {
		const Graph *g = gs[k];

		for (int i = 0; i < g->nnodes; i++) {
			const Node *n = &g->nodes[i];
			int64_t b = exec_type_bytes(&n->type);

			if (n->type.rank < 0) {
				diag_error(d, n->loc, "'%%%s' has no type; run shape-infer first", n->name);
				bad++;
				continue;
			}
			if (b < 0 || (lim->max_bytes > 0 && b > lim->max_bytes)) {
				if (b < 0)
					diag_error(d, n->loc, "'%%%s' %s %s has more bytes than 2^63",
					    n->name, ir_shape_str(&n->type, s), ir_dtype_name(n->type.dt));
				else
					diag_error(d, n->loc, "'%%%s' %s %s needs %lld bytes, more than "
					    "--max-bytes=%lld", n->name, ir_shape_str(&n->type, s),
					    ir_dtype_name(n->type.dt), (long long)b,
					    (long long)lim->max_bytes);
				bad++;
				continue;
			}
			if (b > big) {
				big = b;
				bigg = g;
				bigi = i;
			}
			if (__builtin_add_overflow(total, b, &total))
				over = true;
		}
	}
	if (bad)
		return -1;
	if (lim->max_total_bytes > 0 && (over || total > lim->max_total_bytes)) {
		const Node *n = &bigg->nodes[bigi];

		if (over)
			diag_error(d, n->loc, "the tensors need more than 2^63 bytes together; the "
			    "largest is '%%%s' %s %s", n->name, ir_shape_str(&n->type, s),
			    ir_dtype_name(n->type.dt));
		else
			diag_error(d, n->loc, "the tensors need %lld bytes together, more than "
			    "--max-total-bytes=%lld; the largest is '%%%s' %s %s at %lld bytes",
			    (long long)total, (long long)lim->max_total_bytes, n->name,
			    ir_shape_str(&n->type, s), ir_dtype_name(n->type.dt), (long long)big);
		return -1;
	}
	return 0;
}

int64_t
exec_limits_room(const Graph *const *gs, int ngraphs, const ExecLimits *lim)
{
	int64_t room = lim->max_total_bytes;

	if (room <= 0)
		return -1;
	for (int k = 0; k < ngraphs; k++)
		for (int i = 0; i < gs[k]->nnodes; i++)
			room -= exec_type_bytes(&gs[k]->nodes[i].type);
	return room > 0 ? room : 0;
}

/* ---- comparison ------------------------------------------------------ */

ExecErr
exec_compare(const Tensor *a, const Tensor *b)
{
	ExecErr e = {0, 0, -1};
	double maxb = 1, worst = -1;

	if (!ir_dtype_is_float(a->dt)) {
		/* integers and bools are exact: any difference is an error of
		 * +inf, whatever the tolerance; maxabs still says how far */
		for (int64_t i = 0; i < a->numel; i++) {
			int64_t x = exec_geti(a, i), y = exec_geti(b, i);
			double diff = x > y ? (double)((uint64_t)x - (uint64_t)y) :
			    (double)((uint64_t)y - (uint64_t)x);

			if (diff > worst && diff > 0) {
				worst = diff;
				e.worst = i;
			}
		}
		e.maxabs = worst > 0 ? worst : 0;
		e.rel = worst > 0 ? INFINITY : 0;
		return e;
	}
	for (int64_t i = 0; i < b->numel; i++) {
		double y = exec_get(b, i);

		if (isfinite(y) && fabs(y) > maxb)
			maxb = fabs(y);
	}
	for (int64_t i = 0; i < a->numel; i++) {
		double x = exec_get(a, i), y = exec_get(b, i), diff;

		if (isnan(x) || isnan(y) || isinf(x) || isinf(y)) {
			bool same = (isnan(x) && isnan(y)) || (isinf(x) && x == y);

			diff = same ? 0 : INFINITY;
		} else {
			diff = fabs(x - y);
		}
		if (diff > worst && diff > 0) {
			worst = diff;
			e.worst = i;
		}
	}
	e.maxabs = worst > 0 ? worst : 0;
	e.rel = e.maxabs / maxb;
	return e;
}

char *
exec_index_str(const Tensor *t, int64_t i, char *buf)
{
	int64_t idx[IR_MAX_RANK];
	size_t m = 0;

	for (int k = t->rank - 1; k >= 0; k--) {
		idx[k] = i % t->dim[k];
		i /= t->dim[k];
	}
	m += (size_t)snprintf(buf + m, IR_TYPE_STR - m, "[");
	for (int k = 0; k < t->rank; k++)
		m += (size_t)snprintf(buf + m, IR_TYPE_STR - m, "%s%lld", k ? ", " : "",
		    (long long)idx[k]);
	snprintf(buf + m, IR_TYPE_STR - m, "]");
	return buf;
}

/* ---- printing -------------------------------------------------------- */

void
exec_fmt_g(char *buf, size_t n, double v)
{
	if (isnan(v))
		snprintf(buf, n, "nan");
	else if (isinf(v))
		snprintf(buf, n, v > 0 ? "inf" : "-inf");
	else
		snprintf(buf, n, "%.6g", v == 0 ? 0.0 : v);   /* no "-0" */
}

void
exec_fmt_elem(char *buf, size_t n, const Tensor *t, int64_t i)
{
	if (t->dt == DT_BOOL)
		snprintf(buf, n, "%s", exec_geti(t, i) ? "True" : "False");
	else if (ir_dtype_is_int(t->dt))
		snprintf(buf, n, "%lld", (long long)exec_geti(t, i));
	else
		exec_fmt_g(buf, n, exec_get(t, i));
}

void
exec_stats_fmt(const Tensor *t, char *sum, char *min, char *max, size_t n)
{
	double s, lo, hi;

	if (!ir_dtype_is_float(t->dt)) {
		/* numpy: an integer sum is an int64 (wrapping), a bool's counts
		 * the Trues; min and max are elements, printed as elements */
		uint64_t is = 0;
		int64_t ilo = 0, ihi = 0;

		for (int64_t i = 0; i < t->numel; i++) {
			int64_t v = exec_geti(t, i);

			is += (uint64_t)v;
			if (i == 0 || v < exec_geti(t, ilo))
				ilo = i;
			if (i == 0 || v > exec_geti(t, ihi))
				ihi = i;
		}
		snprintf(sum, n, "%lld", (long long)(int64_t)is);
		exec_fmt_elem(min, n, t, ilo);
		exec_fmt_elem(max, n, t, ihi);
		return;
	}
	exec_stats(t, &s, &lo, &hi);
	exec_fmt_g(sum, n, s);
	exec_fmt_g(min, n, lo);
	exec_fmt_g(max, n, hi);
}

void
exec_stats(const Tensor *t, double *sum, double *min, double *max)
{
	double s = 0, lo = INFINITY, hi = -INFINITY;
	bool nan = false;

	for (int64_t i = 0; i < t->numel; i++) {
		double v = exec_get(t, i);

		s += v;
		if (isnan(v))
			nan = true;
		if (v < lo)
			lo = v;
		if (v > hi)
			hi = v;
	}
	*sum = s;
	*min = nan ? NAN : lo;
	*max = nan ? NAN : hi;
}

enum { EDGE = 3, THRESHOLD = 1000, LINE_WIDTH = 75 };

/* A growable string, for the preview built the way numpy builds it. */
typedef struct Str {
	char *p;
	size_t n, cap;
} Str;

static void
str_add(Str *s, const char *t, size_t n)
{
	if (s->n + n + 1 > s->cap) {
		s->cap = (s->n + n + 1) * 2;
		s->p = xrealloc(s->p, s->cap);
	}
	memcpy(s->p + s->n, t, n);
	s->n += n;
	s->p[s->n] = '\0';
}

static void
str_cat(Str *s, const char *t)
{
	str_add(s, t, strlen(t));
}

typedef struct Fmt {
	const Tensor *t;
	bool summary;
	int width;                   /* every item is padded to this */
	int64_t stride[IR_MAX_RANK];
} Fmt;

static void
item(const Fmt *f, int64_t off, char *buf)
{
	char v[64];

	exec_fmt_elem(v, sizeof v, f->t, off);
	snprintf(buf, 80, "%*s", f->width, v);
}

/* numpy's _extendLine: wrap before word when the line would pass width,
 * unless wrapping would not help. */
static void
extend_line(Str *s, Str *line, const char *word, int width, const char *indent)
{
	if ((int)(line->n + strlen(word)) > width && line->n > strlen(indent)) {
		while (line->n > 0 && line->p[line->n - 1] == ' ')
			line->n--;
		str_add(s, line->p, line->n);
		str_cat(s, "\n");
		line->n = 0;
		str_cat(line, indent);
	}
	str_cat(line, word);
}

/* numpy's recurser: the block at axis, element offset off, as it would be
 * printed after hanging indent 'indent' (the indent itself is dropped). */
static void
recurse(const Fmt *f, int axis, int64_t off, const char *indent, int width, Str *out)
{
	const Tensor *t = f->t;
	int left = t->rank - axis;
	int64_t len = t->dim[axis];
	bool sum = f->summary && 2 * EDGE < len;
	int64_t lead = sum ? EDGE : 0, trail = sum ? EDGE : len;
	size_t ilen = strlen(indent);
	char *next = xmalloc(ilen + 2);
	Str s = {0};

	memcpy(next, indent, ilen);
	next[ilen] = ' ';
	next[ilen + 1] = '\0';
	str_cat(&s, "");
	if (left == 1) {
		Str line = {0};
		char w[80];
		int ew = width - 1;      /* room for ']' or the separator */

		str_cat(&line, indent);
		for (int64_t i = 0; i < lead; i++) {
			item(f, off + i * f->stride[axis], w);
			extend_line(&s, &line, w, ew, indent);
			str_cat(&line, " ");
		}
		if (sum) {
			extend_line(&s, &line, "...", ew, indent);
			str_cat(&line, " ");
		}
		for (int64_t i = trail; i > 1; i--) {
			item(f, off + (len - i) * f->stride[axis], w);
			extend_line(&s, &line, w, ew, indent);
			str_cat(&line, " ");
		}
		item(f, off + (len - 1) * f->stride[axis], w);
		extend_line(&s, &line, w, ew, indent);
		str_add(&s, line.p, line.n);
		free(line.p);
	} else {
		char sep[IR_MAX_RANK + 1];

		for (int k = 0; k < left - 1; k++)
			sep[k] = '\n';
		sep[left - 1] = '\0';
		for (int64_t i = 0; i < lead; i++) {
			str_cat(&s, indent);
			recurse(f, axis + 1, off + i * f->stride[axis], next, width - 1, &s);
			str_cat(&s, sep);
		}
		if (sum) {
			str_cat(&s, indent);
			str_cat(&s, "...");
			str_cat(&s, sep);
		}
		for (int64_t i = trail; i > 1; i--) {
			str_cat(&s, indent);
			recurse(f, axis + 1, off + (len - i) * f->stride[axis], next, width - 1, &s);
			str_cat(&s, sep);
		}
		str_cat(&s, indent);
		recurse(f, axis + 1, off + (len - 1) * f->stride[axis], next, width - 1, &s);
	}
	str_cat(out, "[");
	str_cat(out, s.p + ilen);
	str_cat(out, "]");
	free(s.p);
	free(next);
}

/* The widest item among those shown. */
static int
widest(const Fmt *f, int axis, int64_t off)
{
	const Tensor *t = f->t;
	int64_t len = t->dim[axis];
	bool sum = f->summary && 2 * EDGE < len;
	int w = 0;

	for (int64_t i = 0; i < len; i++) {
		int k;

		if (sum && i == EDGE)
			i = len - EDGE;
		if (axis == t->rank - 1) {
			char v[64];

			exec_fmt_elem(v, sizeof v, t, off + i);
			k = (int)strlen(v);
		} else {
			k = widest(f, axis + 1, off + i * f->stride[axis]);
		}
		if (k > w)
			w = k;
	}
	return w;
}

void
exec_print_preview(FILE *out, const Tensor *t)
{
	Fmt f = {.t = t, .summary = t->numel > THRESHOLD};
	Str s = {0};
	char v[64];

	if (t->rank == 0) {
		exec_fmt_elem(v, sizeof v, t, 0);
		fprintf(out, "%s\n", v);
		return;
	}
	f.stride[t->rank - 1] = 1;
	for (int k = t->rank - 2; k >= 0; k--)
		f.stride[k] = f.stride[k + 1] * t->dim[k + 1];
	f.width = widest(&f, 0, 0);
	recurse(&f, 0, 0, " ", LINE_WIDTH, &s);
	fprintf(out, "%s\n", s.p);
	free(s.p);
}
