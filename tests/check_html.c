/*
 * check_html.c: the HTML report's own pieces (src/report/html.h).
 *
 * The line diff that marks what each pass changed is checked against its
 * definition rather than against examples alone: over many random pairs
 * of texts, keeping the kept and added lines must give back the new text,
 * keeping the kept and deleted lines the old one, and the number of edits
 * must be the least there is, n + m - 2 LCS, with the LCS computed by the
 * textbook dynamic programme.  Past HTML_DIFF_MAX_EDITS the diff gives up
 * minimality but never correctness.  Then the two text transforms that
 * keep the page self-contained: SVG inlining (no prolog, no namespace
 * URL) and HTML escaping.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "html.h"

/* The lines of d with op in {keep, op}, joined with newlines. */
static char *
rebuild(const HtmlDiffLine *d, int n, HtmlDiffOp op)
{
	StrBuf b = {0};

	strbuf_puts(&b, "");
	for (int i = 0; i < n; i++)
		if (d[i].op == HD_SAME || d[i].op == op) {
			strbuf_grow(&b, d[i].len + 1);
			memcpy(b.s + b.n, d[i].s, d[i].len);
			b.n += d[i].len;
			b.s[b.n++] = '\n';
			b.s[b.n] = '\0';
		}
	return b.s;
}

static int
count_lines(const char *t)
{
	int n = 0;

	for (; *t; t++)
		n += *t == '\n';
	return n;
}

/* The length of the longest common subsequence of the lines of a and b. */
static int
lcs(const char *a, const char *b)
{
	int n = count_lines(a), m = count_lines(b), r;
	const char **la = malloc(sizeof *la * (size_t)(n + 1)), **lb = malloc(sizeof *lb * (size_t)(m + 1));
	int *t = calloc((size_t)(n + 1) * (size_t)(m + 1), sizeof *t);

	for (int i = 0; i < n; i++, a = strchr(a, '\n') + 1)
		la[i] = a;
	for (int j = 0; j < m; j++, b = strchr(b, '\n') + 1)
		lb[j] = b;
	for (int i = n - 1; i >= 0; i--)
		for (int j = m - 1; j >= 0; j--) {
			size_t ln = (size_t)(strchr(la[i], '\n') - la[i]);
			bool eq = ln == (size_t)(strchr(lb[j], '\n') - lb[j]) && !memcmp(la[i], lb[j], ln);
			int *c = &t[i * (m + 1) + j];

			if (eq)
				*c = 1 + t[(i + 1) * (m + 1) + j + 1];
			else
				*c = t[(i + 1) * (m + 1) + j] > t[i * (m + 1) + j + 1] ?
				    t[(i + 1) * (m + 1) + j] : t[i * (m + 1) + j + 1];
		}
	r = t[0];
	free(la);
	free(lb);
	free(t);
	return r;
}

START_TEST(test_html_diff_example)
{
	HtmlDiffLine *d;
	int n = html_diff("a\nb\nc\n", "a\nx\nc\nd\n", &d);
	static const HtmlDiffOp want[] = {HD_SAME, HD_DEL, HD_ADD, HD_SAME, HD_ADD};
	static const char *const text[] = {"a", "b", "x", "c", "d"};

	ck_assert_int_eq(n, 5);
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(d[i].op, want[i]);
		ck_assert_int_eq((int)d[i].len, 1);
		ck_assert_int_eq(d[i].s[0], text[i][0]);
	}
	free(d);
	/* no trailing newline, and the empty texts */
	n = html_diff("", "p\nq", &d);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(d[0].op, HD_ADD);
	ck_assert_int_eq(d[1].op, HD_ADD);
	ck_assert_int_eq(d[1].s[0], 'q');
	free(d);
	n = html_diff("p\nq\n", "", &d);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(d[0].op, HD_DEL);
	free(d);
	n = html_diff("", "", &d);
	ck_assert_int_eq(n, 0);
	free(d);
}
END_TEST

/* A random text of n lines over a small alphabet, so lines repeat. */
static char *
random_text(unsigned *seed, int n, int alpha)
{
	char *t = malloc((size_t)n * 3 + 1), *p = t;

	for (int i = 0; i < n; i++) {
		*seed = *seed * 1103515245u + 12345u;
		*p++ = (char)('a' + (*seed >> 16) % (unsigned)alpha);
		*p++ = '\n';
	}
	*p = '\0';
	return t;
}

START_TEST(test_html_diff_minimal_random)
{
	unsigned seed = 12345u + (unsigned)_i;

	for (int r = 0; r < 50; r++) {
		int na = (int)((seed >> 8) % 40), nb;
		char *a = random_text(&seed, na, 2 + r % 5), *b, *ra, *rb;
		HtmlDiffLine *d;
		int n, edits = 0;

		nb = (int)((seed >> 8) % 40);
		b = random_text(&seed, nb, 2 + r % 5);
		n = html_diff(a, b, &d);
		for (int i = 0; i < n; i++)
			edits += d[i].op != HD_SAME;
		ra = rebuild(d, n, HD_DEL);
		rb = rebuild(d, n, HD_ADD);
		ck_assert_str_eq(ra, a);
		ck_assert_str_eq(rb, b);
		ck_assert_int_eq(edits, na + nb - 2 * lcs(a, b));
		/* a change reads its deletions before its additions */
		for (int i = 1; i < n; i++)
			ck_assert(!(d[i - 1].op == HD_ADD && d[i].op == HD_DEL));
		free(a);
		free(b);
		free(ra);
		free(rb);
		free(d);
	}
}
END_TEST

/* More edits than the search keeps: the middle replaced whole, and still
 * both texts come back. */
START_TEST(test_html_diff_past_the_limit)
{
	int n = HTML_DIFF_MAX_EDITS + 100, nd;
	char *a = malloc((size_t)n * 8 + 16), *b = malloc((size_t)n * 8 + 16), *ra, *rb;
	char *pa = a, *pb = b;
	HtmlDiffLine *d;

	pa += sprintf(pa, "head\n");
	pb += sprintf(pb, "head\n");
	for (int i = 0; i < n; i++) {
		pa += sprintf(pa, "a%d\n", i);
		pb += sprintf(pb, "b%d\n", i);
	}
	sprintf(pa, "tail\n");
	sprintf(pb, "tail\n");
	nd = html_diff(a, b, &d);
	ck_assert_int_eq(nd, 2 * n + 2);
	ck_assert_int_eq(d[0].op, HD_SAME);
	ck_assert_int_eq(d[1].op, HD_DEL);
	ck_assert_int_eq(d[n + 1].op, HD_ADD);
	ck_assert_int_eq(d[nd - 1].op, HD_SAME);
	ra = rebuild(d, nd, HD_DEL);
	rb = rebuild(d, nd, HD_ADD);
	ck_assert_str_eq(ra, a);
	ck_assert_str_eq(rb, b);
	free(ra);
	free(rb);
	free(d);
	free(a);
	free(b);
}
END_TEST

static char *
inline_str(const char *svg)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	html_inline_svg(f, svg);
	fclose(f);
	return buf;
}

START_TEST(test_html_inline_svg)
{
	char *s = inline_str("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
	    "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\"\n"
	    " \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
	    "<!-- Generated by graphviz -->\n"
	    "<svg width=\"62pt\" height=\"44pt\"\n viewBox=\"0 0 62 44\" "
	    "xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
	    "<g id=\"graph0\"><text>a &lt; b</text></g>\n</svg>\n");

	ck_assert_str_eq(s, "<svg width=\"62pt\" height=\"44pt\"\n viewBox=\"0 0 62 44\">\n"
	    "<g id=\"graph0\"><text>a &lt; b</text></g>\n</svg>\n");
	free(s);
	/* no newline at the end: one is added; single quotes */
	s = inline_str("<svg xmlns='http://www.w3.org/2000/svg' width='1'><rect/></svg>");
	ck_assert_str_eq(s, "<svg width='1'><rect/></svg>\n");
	free(s);
	/* no <svg> at all: nothing */
	s = inline_str("<html></html>");
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(test_html_escape)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	html_escape(f, "<a href=\"x\">&'</a>", 18);
	fclose(f);
	ck_assert_str_eq(buf, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
	free(buf);
}
END_TEST

Suite *
make_html_suite(void)
{
	Suite *s = suite_create("html");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_html_diff_example);
	tcase_add_loop_test(tc, test_html_diff_minimal_random, 0, 20);
	tcase_add_test(tc, test_html_diff_past_the_limit);
	tcase_add_test(tc, test_html_inline_svg);
	tcase_add_test(tc, test_html_escape);
	suite_add_tcase(s, tc);
	return s;
}
