/*
 * check_diag.c: src/ir/diag.c: the line table and the error limit.
 *
 * The quoting itself is covered by the goldens under testdata/errors (every
 * caret there); these tests hold what a golden cannot see: line lookups at
 * the edges of the buffer, the counts behind the limit (errors past it are
 * counted but not printed), and that the parser stops reading once the
 * limit is passed rather than reporting into the void.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "parse.h"

/* Line n of buf as a fresh string. */
static char *
line_of(const char *buf, int n)
{
	Diag d;
	int len;
	const char *s;
	char *r;

	diag_init(&d, "t", buf, strlen(buf), stderr);
	s = diag_line(&d, n, &len);
	r = strndup(s, (size_t)len);
	diag_free(&d);
	return r;
}

START_TEST(test_diag_line_edges)
{
	const char *cases[][2] = {
		{"ab\r\n\ncd", "ab"},       /* CR LF: the CR is not the line's */
		{"ab\n", "ab"},
		{"ab", "ab"},               /* no newline at the end */
		{"", ""},
	};
	Diag d;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *s = line_of(cases[i][0], 1);

		ck_assert_str_eq(s, cases[i][1]);
		free(s);
	}
	{
		char *s2 = line_of("ab\r\n\ncd", 2), *s3 = line_of("ab\r\n\ncd", 3);

		ck_assert_str_eq(s2, "");
		ck_assert_str_eq(s3, "cd");
		free(s2);
		free(s3);
	}
	diag_init(&d, "t", "ab\r\n\ncd", 7, stderr);
	ck_assert_int_eq(diag_nlines(&d), 3);
	{
		int len = -1;

		diag_line(&d, 4, &len);     /* past the end: empty */
		ck_assert_int_eq(len, 0);
		diag_line(&d, 0, &len);
		ck_assert_int_eq(len, 0);
	}
	diag_free(&d);
	diag_init(&d, "t", "x\n", 2, stderr);
	ck_assert_int_eq(diag_nlines(&d), 2);   /* an empty last line */
	diag_free(&d);
}
END_TEST

/* Reports n errors, each followed by a note, into a Diag of the given
 * limit; returns what it printed. */
static char *
report(int limit, int n, bool collect, Diag *d)
{
	static const char src[] = "graph {\n}\n";
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	diag_init(d, "t.aicm", src, strlen(src), f);
	d->errlimit = limit;
	d->collect = collect;
	for (int i = 0; i < n; i++) {
		diag_error(d, ((Loc){1, 1, 5}), "error %d", i);
		diag_note(d, ((Loc){2, 1, 1}), "note %d", i);
	}
	fclose(f);
	return buf;
}

static int
count(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, what)) != NULL; p++)
		n++;
	return n;
}

START_TEST(test_diag_limit_stops)
{
	Diag d;
	char *out = report(3, 5, false, &d);

	ck_assert_int_eq(count(out, ": error: error "), 3);
	ck_assert_int_eq(count(out, ": note: note "), 3);    /* the 4th's note is not shown */
	ck_assert_int_eq(count(out, "t.aicm: error: too many errors; stopping "
	    "(--error-limit=3; 0 for no limit)\n"), 1);
	ck_assert_ptr_nonnull(strstr(out, "note 2"));
	ck_assert_ptr_null(strstr(out, "error 3"));
	ck_assert(d.stopped);
	ck_assert_int_eq(d.nshown, 3);
	ck_assert_int_eq(d.nerr, 5);             /* counted all the same */
	diag_free(&d);
	free(out);
}
END_TEST

START_TEST(test_diag_limit_exact)
{
	Diag d;
	char *out = report(3, 3, false, &d);

	ck_assert_int_eq(count(out, ": error: error "), 3);
	ck_assert_ptr_null(strstr(out, "too many errors"));
	ck_assert(!d.stopped);
	diag_free(&d);
	free(out);
}
END_TEST

START_TEST(test_diag_limit_none)
{
	Diag d;
	char *out = report(0, 50, false, &d);

	ck_assert_int_eq(count(out, ": error: error "), 50);
	ck_assert(!d.stopped);
	diag_free(&d);
	free(out);
}
END_TEST

/* --verify-diagnostics matches what it collects: nothing is cut short. */
START_TEST(test_diag_limit_collect)
{
	Diag d;
	char *out = report(2, 5, true, &d);

	ck_assert_int_eq(d.nrecs, 10);
	ck_assert(!d.stopped);
	ck_assert_ptr_null(strstr(out ? out : "", "too many"));
	diag_free(&d);
	free(out);
}
END_TEST

/* Past the limit the parser reads no further: the unknown ops on the last
 * lines are never reached, so they are not even counted, and the end of
 * input it is handed instead is no syntax error. */
START_TEST(test_diag_limit_stops_parse)
{
	static const char src[] =
	    "graph {\n"
	    "  %x = input() : (4, 4)\n"
	    "  %s = sum(%x) : (4,) axis=0 axis=0 axis=0 axis=0\n"
	    "  %u = reul(%x)\n"
	    "  %v = reul(%x)\n"
	    "}\n";
	for (int limit = 0; limit <= 2; limit += 2) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		Diag d;
		Graph *g;

		diag_init(&d, "t.aicm", src, strlen(src), f);
		d.errlimit = limit;
		g = parse_graph(src, strlen(src), 1, &d);
		ck_assert_ptr_null(g);
		fclose(f);
		if (limit == 0) {
			ck_assert_int_eq(d.nerr, 5);
			ck_assert_ptr_nonnull(strstr(buf, "unknown op 'reul'"));
		} else {
			ck_assert_int_eq(d.nerr, 3);     /* 2 shown, 1 stopping */
			ck_assert_ptr_null(strstr(buf, "reul"));
			ck_assert_ptr_nonnull(strstr(buf, "too many errors; stopping"));
		}
		diag_free(&d);
		free(buf);
	}
}
END_TEST

Suite *
make_diag_suite(void)
{
	Suite *s = suite_create("diag");
	TCase *tc = tcase_create("lines");

	tcase_add_test(tc, test_diag_line_edges);
	suite_add_tcase(s, tc);

	tc = tcase_create("limit");
	tcase_add_test(tc, test_diag_limit_stops);
	tcase_add_test(tc, test_diag_limit_exact);
	tcase_add_test(tc, test_diag_limit_none);
	tcase_add_test(tc, test_diag_limit_collect);
	tcase_add_test(tc, test_diag_limit_stops_parse);
	suite_add_tcase(s, tc);
	return s;
}
