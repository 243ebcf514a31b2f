/*
 * html_diff.c: which lines of one stage's IR a pass changed (html.h).
 *
 * The report shows the IR after each pass side by side; a reader wants
 * the lines a pass touched marked, as a code review shows them.  That is a
 * line diff, here Myers' shortest edit script ("An O(ND) difference
 * algorithm", 1986): lines are compared by a 64-bit hash first (hash.h's
 * FNV-1a) and by their bytes when the hashes agree, the common first and
 * last lines are cut off before the search, and the search keeps each
 * round's furthest points so that the script can be walked back.  That costs memory
 * quadratic in the number of edits, so past HTML_DIFF_MAX_EDITS the
 * middle is reported as replaced whole: a pass that rewrites a thousand
 * lines has changed everything a reader would look at anyway.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "html.h"

typedef struct Lines {
	const char **s;
	size_t *len;
	uint64_t *h;
	int n;
} Lines;

/* Splits t at newlines; a last line without one counts too. */
static void
split_lines(const char *t, Lines *l)
{
	int cap = 0;

	memset(l, 0, sizeof *l);
	while (t && *t) {
		const char *nl = strchr(t, '\n');
		size_t n = nl ? (size_t)(nl - t) : strlen(t);

		if (l->n == cap) {
			cap = cap ? 2 * cap : 64;
			l->s = xrealloc(l->s, sizeof *l->s * (size_t)cap);
			l->len = xrealloc(l->len, sizeof *l->len * (size_t)cap);
			l->h = xrealloc(l->h, sizeof *l->h * (size_t)cap);
		}
		l->s[l->n] = t;
		l->len[l->n] = n;
		l->h[l->n] = ir_hash_bytes(IR_HASH_SEED, t, n);
		l->n++;
		t = nl ? nl + 1 : t + n;
	}
}

static void
free_lines(Lines *l)
{
	free(l->s);
	free(l->len);
	free(l->h);
}

static bool
same(const Lines *a, int i, const Lines *b, int j)
{
	return a->h[i] == b->h[j] && a->len[i] == b->len[j] &&
	    memcmp(a->s[i], b->s[j], a->len[i]) == 0;
}

typedef struct Out {
	HtmlDiffLine *l;
	int n, cap;
} Out;

static void
emit(Out *o, HtmlDiffOp op, const Lines *from, int i)
{
	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 64;
		o->l = xrealloc(o->l, sizeof *o->l * (size_t)o->cap);
	}
	o->l[o->n++] = (HtmlDiffLine){op, from->s[i], from->len[i]};
}

/* The edit script of a[a0..a0+n) into b[b0..b0+m), appended to o in
 * order; false when it needs more than HTML_DIFF_MAX_EDITS edits. */
static bool
myers(const Lines *a, int a0, int n, const Lines *b, int b0, int m, Out *o)
{
	int max = n + m, dmax = max < HTML_DIFF_MAX_EDITS ? max : HTML_DIFF_MAX_EDITS;
	int *v = xmalloc(sizeof *v * (size_t)(2 * dmax + 3)), *vv = v + dmax + 1;
	int **trace = xcalloc((size_t)dmax + 1, sizeof *trace);
	int d, found = -1, start = o->n;

	vv[1] = 0;
	for (d = 0; d <= dmax && found < 0; d++) {
		for (int k = -d; k <= d; k += 2) {
			int x, y;

			if (k == -d || (k != d && vv[k - 1] < vv[k + 1]))
				x = vv[k + 1];          /* down: a line of b added */
			else
				x = vv[k - 1] + 1;      /* right: a line of a deleted */
			y = x - k;
			while (x < n && y < m && same(a, a0 + x, b, b0 + y))
				x++, y++;
			vv[k] = x;
			if (x >= n && y >= m)
				found = d;
		}
		/* this round's points, k = -d..d, for the walk back */
		trace[d] = xmalloc(sizeof **trace * (size_t)(2 * d + 1));
		memcpy(trace[d], vv - d, sizeof **trace * (size_t)(2 * d + 1));
	}
	if (found >= 0) {
		int x = n, y = m;

		for (d = found; d > 0; d--) {
			const int *vp = trace[d - 1] + (d - 1);   /* indexed by k */
			int k = x - y, pk, px, py;

			pk = (k == -d || (k != d && vp[k - 1] < vp[k + 1])) ? k + 1 : k - 1;
			px = vp[pk];
			py = px - pk;
			for (; x > px && y > py; x--, y--)
				emit(o, HD_SAME, b, b0 + y - 1);
			if (pk == k + 1)
				emit(o, HD_ADD, b, b0 + y - 1);
			else
				emit(o, HD_DEL, a, a0 + x - 1);
			x = px;
			y = py;
		}
		for (; x > 0 && y > 0; x--, y--)
			emit(o, HD_SAME, b, b0 + y - 1);
		/* walked back to front: turn this stretch around */
		for (int i = start, j = o->n - 1; i < j; i++, j--) {
			HtmlDiffLine t = o->l[i];

			o->l[i] = o->l[j];
			o->l[j] = t;
		}
		/* a change reads deletions first, as diff -u shows it */
		for (int i = start; i < o->n;) {
			int j = i, nd = 0;

			while (j < o->n && o->l[j].op != HD_SAME)
				nd += o->l[j++].op == HD_DEL;
			if (j > i) {
				HtmlDiffLine *t = xmalloc(sizeof *t * (size_t)(j - i));
				int p = 0, q = nd;

				for (int r = i; r < j; r++)
					t[o->l[r].op == HD_DEL ? p++ : q++] = o->l[r];
				memcpy(o->l + i, t, sizeof *t * (size_t)(j - i));
				free(t);
				i = j;
			} else {
				i++;
			}
		}
	}
	for (int i = 0; i <= dmax; i++)
		free(trace[i]);
	free(trace);
	free(v);
	return found >= 0;
}

int
html_diff(const char *at, const char *bt, HtmlDiffLine **out)
{
	Lines a, b;
	Out o = {0};
	int pre = 0, suf = 0;

	split_lines(at, &a);
	split_lines(bt, &b);
	while (pre < a.n && pre < b.n && same(&a, pre, &b, pre))
		pre++;
	while (suf < a.n - pre && suf < b.n - pre && same(&a, a.n - 1 - suf, &b, b.n - 1 - suf))
		suf++;
	for (int i = 0; i < pre; i++)
		emit(&o, HD_SAME, &b, i);
	if (!myers(&a, pre, a.n - pre - suf, &b, pre, b.n - pre - suf, &o)) {
		for (int i = pre; i < a.n - suf; i++)
			emit(&o, HD_DEL, &a, i);
		for (int i = pre; i < b.n - suf; i++)
			emit(&o, HD_ADD, &b, i);
	}
	for (int i = b.n - suf; i < b.n; i++)
		emit(&o, HD_SAME, &b, i);
	free_lines(&a);
	free_lines(&b);
	*out = o.l;
	return o.n;
}
