/*
 * diag.c: printing and collecting diagnostics.
 *
 * The line table is built once, at the first quote (or the first line
 * count, diag_nlines), so that every quote is a lookup: where the line
 * starts and where the next one starts.  (Scanning for the line's end at
 * each quote made 40,000 errors on one 280 KB line take 9 seconds.)  A message is "file:line:col: severity: text", then the
 * line and a caret with a tilde under each further byte of the token; a
 * message without a place (line 0) is just "file: severity: text".
 *
 * The error limit works as clang's -ferror-limit: the first errlimit errors
 * are printed; the next one prints "too many errors; stopping" instead, and
 * from then on nothing is printed (a note or a remark would follow an error
 * the user does not see) while the counts still grow, so that every caller
 * that decides by d->nerr still sees its errors.
 */
#define _DEFAULT_SOURCE
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "diag.h"

static const char *const sev_names[] = {"error", "warning", "note", "remark"};

void
diag_init(Diag *d, const char *file, const char *buf, size_t len, FILE *out)
{
	memset(d, 0, sizeof *d);
	d->file = file;
	d->buf = buf;
	d->len = len;
	d->out = out;
}

/* Called once, by the first quote or line count, never at diag_init: most
 * runs quote none, and a million-line input would pay for it on every run. */
static void
index_lines(Diag *d)
{
	int cap = 64;
	const char *p = d->buf, *end = d->buf + d->len;

	d->linestart = xmalloc(sizeof(int) * (size_t)cap);
	d->linestart[0] = 0;
	d->linestart[1] = 0;
	d->nlines = 1;
	while (p && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		if (d->nlines + 2 >= cap) {
			cap *= 2;
			d->linestart = xrealloc(d->linestart, sizeof(int) * (size_t)cap);
		}
		d->linestart[++d->nlines] = (int)(++p - d->buf);
	}
}

void
diag_free(Diag *d)
{
	for (int i = 0; i < d->nrecs; i++)
		free(d->recs[i].msg);
	free(d->recs);
	free(d->linestart);
	memset(d, 0, sizeof *d);
}

int
diag_nlines(const Diag *d)
{
	if (!d->linestart && d->buf)
		index_lines((Diag *)d);
	return d->nlines;
}

const char *
diag_line(const Diag *d, int n, int *len)
{
	size_t s, e;

	if (!d->linestart && d->buf)
		index_lines((Diag *)d);     /* a cache: the lines do not change */
	if (n < 1 || n > d->nlines || !d->buf) {
		*len = 0;
		return "";
	}
	s = (size_t)d->linestart[n];
	/* every line but the last ends in the newline before the next */
	e = n < d->nlines ? (size_t)d->linestart[n + 1] - 1 : d->len;
	if (e > s && d->buf[e - 1] == '\r')
		e--;
	*len = (int)(e - s);
	return d->buf + s;
}

/* Quoting very long lines would bury the message: show at most this much
 * of the line around the caret. */
enum { QUOTE_MAX = 200 };

static void
quote(const Diag *d, Loc loc)
{
	int len, from, to, ulen;
	const char *line = diag_line(d, loc.line, &len);

	if (loc.col < 1 || loc.col > len + 1)
		return;
	from = 0;
	if (loc.col - 1 > QUOTE_MAX / 2)
		from = loc.col - 1 - QUOTE_MAX / 2;
	to = len;
	if (to - from > QUOTE_MAX)
		to = from + QUOTE_MAX;
	fprintf(d->out, "  %s%.*s%s\n", from ? "..." : "", to - from, line + from,
	    to < len ? "..." : "");
	/* A tab in the line stays a tab under it, so that the caret lines up
	 * whatever the terminal's tab width. */
	fprintf(d->out, "  %s", from ? "   " : "");
	for (int i = from; i < loc.col - 1; i++)
		fputc(i < len && line[i] == '\t' ? '\t' : ' ', d->out);
	fputc('^', d->out);
	ulen = loc.len;
	if (loc.col - 1 + ulen > to)
		ulen = to - (loc.col - 1);
	for (int i = 1; i < ulen; i++)
		fputc('~', d->out);
	fputc('\n', d->out);
}

/* Whether error number nshown + 1 may be printed; when it may not, the
 * first time, prints the stop line and stops d. */
static bool
error_shown(Diag *d)
{
	if (d->stopped)
		return false;
	if (d->errlimit > 0 && d->nshown >= d->errlimit) {
		d->stopped = true;
		fprintf(d->out, "%s: error: too many errors; stopping (--error-limit=%d; 0 for no "
		    "limit)\n", d->file, d->errlimit);
		return false;
	}
	d->nshown++;
	return true;
}

static void
diag_vreport(Diag *d, Severity s, Loc loc, const char *fmt, va_list ap)
{
	if (s == SEV_ERROR)
		d->nerr++;
	else if (s == SEV_WARNING)
		d->nwarn++;
	if (d->stopped)
		return;
	if (d->collect) {
		va_list aq;
		int n;
		char *msg;

		va_copy(aq, ap);
		n = vsnprintf(NULL, 0, fmt, aq);
		va_end(aq);
		msg = xmalloc((size_t)n + 1);
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
		if (d->nrecs == d->caprecs) {
			d->caprecs = d->caprecs ? 2 * d->caprecs : 16;
			d->recs = xrealloc(d->recs, sizeof *d->recs * (size_t)d->caprecs);
		}
		d->recs[d->nrecs++] = (DiagRec){s, loc, msg};
		return;
	}
	if (s == SEV_ERROR && !error_shown(d))
		return;
	if (loc.line > 0)
		fprintf(d->out, "%s:%d:%d: %s: ", d->file, loc.line, loc.col, sev_names[s]);
	else
		fprintf(d->out, "%s: %s: ", d->file, sev_names[s]);
	vfprintf(d->out, fmt, ap);
	fputc('\n', d->out);
	if (loc.line > 0)
		quote(d, loc);
}

void
diag_report(Diag *d, Severity s, Loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vreport(d, s, loc, fmt, ap);
	va_end(ap);
}

/* ---- --verify-diagnostics ------------------------------------------- */

/* One expected-* comment: a diagnostic of severity sev on line whose text
 * holds text. */
typedef struct Expect {
	Severity sev;
	int line;                    /* the line the diagnostic must be on */
	int at;                      /* the comment's own line, for messages */
	int order;                   /* in the input, for ties of line */
	char *text;
	bool seen;
} Expect;

typedef struct Expects {
	Expect *v;
	int n, cap;
} Expects;

/* An error about a comment itself, at its line and column. */
static void
comment_error(Diag *d, int ln, int col, int len, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void
comment_error(Diag *d, int ln, int col, int len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vreport(d, SEV_ERROR, (Loc){ln, col, len > 0 ? len : 1}, fmt, ap);
	va_end(ap);
}

/* The line that the place after "expected-SEV" names, written '@+N',
 * '@-N', '@N', '@above', '@below' or nothing (the comment's own line).
 * *p moves past it.  Returns the line, or 0 after an error: a line outside
 * 1..nlines can match no diagnostic, and an offset is read with a bound
 * rather than with strtol's long, whose sum with the line overflowed on
 * '@+2147483647'. */
static int
expect_target(Diag *d, int ln, const char *line, const char **p)
{
	const char *s = *p, *at = s;
	/* with the empty one after a final newline: an error at the end of
	 * the input is there */
	int nlines = diag_nlines(d), sign = 0;
	long long v = 0, target;
	bool big = false;

	if (*s != '@')
		return ln;
	s++;
	if (!strncmp(s, "above", 5)) {
		target = ln - 1LL;
		s += 5;
	} else if (!strncmp(s, "below", 5)) {
		target = ln + 1LL;
		s += 5;
	} else {
		if (*s == '+' || *s == '-')
			sign = *s++ == '+' ? 1 : -1;
		if (*s < '0' || *s > '9') {
			while (*s && *s != ' ' && *s != '{')
				s++;
			comment_error(d, ln, (int)(at - line) + 1, (int)(s - at),
			    "expected a line after '@' (+N, -N, N, above or below), found '%.*s'",
			    (int)(s - at) > 40 ? 40 : (int)(s - at), at);
			*p = s;
			return 0;
		}
		for (; *s >= '0' && *s <= '9'; s++) {
			if (v > INT_MAX)
				big = true;      /* past any line: keep reading the digits */
			else
				v = v * 10 + (*s - '0');
		}
		target = sign ? ln + sign * v : v;
	}
	*p = s;
	if (big || target < 1 || target > nlines) {
		int n = (int)(s - at);

		if (big)
			comment_error(d, ln, (int)(at - line) + 1, n, "'%.*s' is out of range; the "
			    "input has lines 1 to %d", n > 40 ? 40 : n, at, nlines);
		else
			comment_error(d, ln, (int)(at - line) + 1, n, "'%.*s' names line %lld, "
			    "outside the input (lines 1 to %d)", n > 40 ? 40 : n, at, target,
			    nlines);
		return 0;
	}
	return (int)target;
}

/* Reads the expected-* comments of lines first..last (clipped to the
 * buffer) into e; returns the number of malformed ones (reported). */
static int
read_expects(Diag *d, int first, int last, Expects *e)
{
	int bad = 0;

	if (last > diag_nlines(d))
		last = diag_nlines(d);   /* an unsplit input's chunk ends at INT_MAX */
	for (int ln = first < 1 ? 1 : first; ln <= last; ln++) {
		int len;
		const char *line = diag_line(d, ln, &len);
		char *copy = xmalloc((size_t)len + 1);
		const char *p = copy, *end;

		/* a copy: strstr needs the NUL that the buffer's line lacks */
		memcpy(copy, line, (size_t)len);
		copy[len] = '\0';
		while ((p = strstr(p, "expected-")) != NULL) {
			const char *start = p;
			int sev = -1, target;

			p += 9;
			for (int k = 0; k < 4 && sev < 0; k++)
				if (!strncmp(p, sev_names[k], strlen(sev_names[k]))) {
					sev = k;
					p += strlen(sev_names[k]);
				}
			if (sev < 0)
				continue;
			if ((target = expect_target(d, ln, copy, &p)) == 0) {
				bad++;
				continue;
			}
			while (*p == ' ')
				p++;
			if (strncmp(p, "{{", 2) != 0 || !(end = strstr(p + 2, "}}"))) {
				comment_error(d, ln, (int)(start - copy) + 1, (int)(p - start),
				    "expected '{{message}}' after expected-%s", sev_names[sev]);
				bad++;
				continue;
			}
			if (e->n == e->cap) {
				e->cap = e->cap ? 2 * e->cap : 8;
				e->v = xrealloc(e->v, sizeof *e->v * (size_t)e->cap);
			}
			e->v[e->n] = (Expect){(Severity)sev, target, ln, e->n,
			    xmalloc((size_t)(end - p - 2) + 1), false};
			memcpy(e->v[e->n].text, p + 2, (size_t)(end - p - 2));
			e->v[e->n].text[end - p - 2] = '\0';
			e->n++;
			p = end + 2;
		}
		free(copy);
	}
	return bad;
}

static int
by_line(const void *a, const void *b)
{
	const Expect *x = a, *y = b;

	if (x->line != y->line)
		return (x->line > y->line) - (x->line < y->line);
	return (x->order > y->order) - (x->order < y->order);
}

static int
by_order(const void *a, const void *b)
{
	const Expect *x = a, *y = b;

	return (x->order > y->order) - (x->order < y->order);
}

int
diag_verify(Diag *d, int first, int last)
{
	Expects e = {0};
	int bad;

	d->collect = false;          /* what follows is printed */
	bad = read_expects(d, first, last, &e);
	/* By line, so that each record looks at its own line's comments only:
	 * a scan of all of them per record was quadratic. */
	if (e.n > 1)
		qsort(e.v, (size_t)e.n, sizeof *e.v, by_line);
	for (int i = 0; i < d->nrecs; i++) {
		DiagRec *r = &d->recs[i];
		int lo = 0, hi = e.n;
		bool found = false;

		while (lo < hi) {            /* the first comment on r's line */
			int mid = lo + (hi - lo) / 2;

			if (e.v[mid].line < r->loc.line)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (int k = lo; k < e.n && e.v[k].line == r->loc.line && !found; k++)
			if (!e.v[k].seen && e.v[k].sev == r->sev && strstr(r->msg, e.v[k].text)) {
				e.v[k].seen = true;
				found = true;
			}
		if (!found) {
			diag_error(d, r->loc, "unexpected %s: %s", sev_names[r->sev], r->msg);
			bad++;
		}
	}
	if (e.n > 1)
		qsort(e.v, (size_t)e.n, sizeof *e.v, by_order);  /* back in the input's order */
	for (int k = 0; k < e.n; k++) {
		const Expect *x = &e.v[k];

		if (!x->seen) {
			if (error_shown(d))
				fprintf(d->out, "%s:%d: error: expected %s \"%s\" on line %d was not "
				    "produced\n", d->file, x->at, sev_names[x->sev], x->text, x->line);
			d->nerr++;
			bad++;
		}
	}
	for (int k = 0; k < e.n; k++)
		free(e.v[k].text);
	free(e.v);
	for (int i = 0; i < d->nrecs; i++)
		free(d->recs[i].msg);
	d->nrecs = 0;
	d->collect = true;
	return bad;
}

/* The one piece of process-wide state here: a crash handler has no other
 * way to reach the tool's context. */
static void (*bug_hook)(void *);
static void *bug_ctx;

void
aicm_set_bug_hook(void (*hook)(void *ctx), void *ctx)
{
	bug_hook = hook;
	bug_ctx = ctx;
}

void
aicm_bug(const char *file, int line, const char *fmt, ...)
{
	void (*hook)(void *) = bug_hook;
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s:%d: internal error: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (hook) {
		bug_hook = NULL;     /* a bug inside the hook must not loop */
		hook(bug_ctx);
	}
	fflush(stderr);
#ifdef AICM_FUZZ
	abort();
#else
	exit(3);
#endif
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		AICM_BUG("out of memory (%zu bytes)", n);
	return p;
}

void *
xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);

	if (!p)
		AICM_BUG("out of memory (%zu x %zu bytes)", n, m);
	return p;
}

/* Large arrays (a million nodes) are touched once each; in 4 KB pages that
 * is thousands of page faults, which cost more than the parse itself.
 * Ask for transparent huge pages when the kernel offers them. */
void *
xmalloc_huge(size_t n)
{
	enum { HUGE = 2 << 20 };
	void *p;

	if (n < HUGE)
		return xmalloc(n);
	n = (n + HUGE - 1) & ~(size_t)(HUGE - 1);
	if (posix_memalign(&p, HUGE, n) != 0)
		AICM_BUG("out of memory (%zu bytes)", n);
#ifdef MADV_HUGEPAGE
	madvise(p, n, MADV_HUGEPAGE);
#endif
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		AICM_BUG("out of memory (%zu bytes)", n);
	return p;
}

char *
xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}
