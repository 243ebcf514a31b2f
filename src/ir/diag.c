/*
 * diag.c: printing and collecting diagnostics.
 *
 * The line table is built once, at the first quote, so that quoting a line
 * is a lookup: where it starts and where the next one starts.  (Scanning
 * for the line's end at each quote made 40,000 errors on one 280 KB line
 * take 9 seconds.)  A message is "file:line:col: severity: text", then the
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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "diag.h"

static const char *const sev_names[] = {"error", "warning", "note", "remark"};

const char *
diag_sev_name(Severity s)
{
	return sev_names[s];
}

void
diag_init(Diag *d, const char *file, const char *buf, size_t len, FILE *out)
{
	memset(d, 0, sizeof *d);
	d->file = file;
	d->buf = buf;
	d->len = len;
	d->out = out;
}

/* The line table is built when a line is first quoted: most runs quote
 * none, and a million-line input would pay for it on every run. */
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

void
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
	if (s == SEV_ERROR && d->errlimit > 0 && d->nshown >= d->errlimit) {
		d->stopped = true;
		fprintf(d->out, "%s: error: too many errors; stopping (--error-limit=%d; 0 for no "
		    "limit)\n", d->file, d->errlimit);
		return;
	}
	if (s == SEV_ERROR)
		d->nshown++;
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
