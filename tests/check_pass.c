/*
 * check_pass.c: pass options as the pipeline parser sees them (pass.c).
 *
 * Properties over every option of every registered pass, so that a new
 * option is tested without a new test: its default reads back and lies in
 * its range; the ends of its range are admitted and the values just
 * outside refused (exit 2's message, with the interval); an option with no
 * default (autotune's target constants) has no value until written and is
 * left out of the printed pipeline; and the printed pipeline parses back
 * to the same text.
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "pass.h"
#include "../passes/passes.h"

/* Parses text; returns 0 or -1 and what the parser printed in *msg. */
static int
parse(const char *text, Pipeline *pl, char **msg)
{
	size_t n;
	FILE *err = open_memstream(msg, &n);
	int rc;

	ck_assert_ptr_nonnull(err);
	rc = pass_parse_pipeline(aicm_passes, text, pl, err, "t");
	fclose(err);
	return rc;
}

static char *
print_str(const Pipeline *pl)
{
	char *s;
	size_t n;
	FILE *f = open_memstream(&s, &n);

	ck_assert_ptr_nonnull(f);
	pass_print_pipeline(f, pl);
	fclose(f);
	return s;
}

static bool
no_default(const PassOpt *o)
{
	return o->def[0] == '(';
}

/* "pass{key=v}" with v as %.17g or an integer. */
static void
one(char *buf, size_t n, const Pass *p, const PassOpt *o, double v)
{
	if (o->kind == PO_INT)
		snprintf(buf, n, "%s{%s=%.0f}", p->name, o->key, v);
	else
		snprintf(buf, n, "%s{%s=%.17g}", p->name, o->key, v);
}

static void
expect_ok(const char *text)
{
	Pipeline pl;
	char *msg;

	ck_assert_msg(parse(text, &pl, &msg) == 0, "'%s' refused: %s", text, msg);
	free(msg);
	pass_free_pipeline(&pl);
}

/* Refused with the range message, which quotes want. */
static void
expect_range_error(const char *text, const char *want)
{
	Pipeline pl;
	char *msg;

	ck_assert_msg(parse(text, &pl, &msg) != 0, "'%s' admitted", text);
	ck_assert_msg(strstr(msg, "must be in ") && strstr(msg, want),
	    "'%s': expected a range error with '%s', got: %s", text, want, msg);
	free(msg);
}

START_TEST(test_pass_defaults_in_range)
{
	for (int i = 0; aicm_passes[i]; i++) {
		const Pass *p = aicm_passes[i];
		Pipeline pl;
		char *msg;
		int k = 0;

		/* parsing the bare name reads every default (AICM_BUG if one is bad) */
		ck_assert_int_eq(parse(p->name, &pl, &msg), 0);
		free(msg);
		for (const PassOpt *o = p->opts; o && o->key; o++, k++) {
			const PassVal *v = &pl.p[0].vals[k];
			double x = o->kind == PO_INT ? (double)v->i : v->f;

			ck_assert(!v->set);
			if (no_default(o) || (o->lo == 0 && o->hi == 0) ||
			    (o->kind != PO_INT && o->kind != PO_FLOAT))
				continue;
			ck_assert_msg(x >= o->lo && x <= o->hi, "%s{%s}: default %s out of range",
			    p->name, o->key, o->def);
		}
		pass_free_pipeline(&pl);
	}
}
END_TEST

START_TEST(test_pass_range_edges)
{
	int checked = 0;

	for (int i = 0; aicm_passes[i]; i++) {
		const Pass *p = aicm_passes[i];

		for (const PassOpt *o = p->opts; o && o->key; o++) {
			char t[256];

			if ((o->kind != PO_INT && o->kind != PO_FLOAT) || (o->lo == 0 && o->hi == 0))
				continue;
			one(t, sizeof t, p, o, o->hi);
			expect_ok(t);
			one(t, sizeof t, p, o, o->kind == PO_INT ? o->hi + 1 : nextafter(o->hi, INFINITY));
			expect_range_error(t, "]");
			if (o->lo == PASS_ABOVE_0) {
				/* open at 0: 0 and -0 are out, the least positive double in */
				snprintf(t, sizeof t, "%s{%s=0}", p->name, o->key);
				expect_range_error(t, "(0, ");
				snprintf(t, sizeof t, "%s{%s=-0}", p->name, o->key);
				expect_range_error(t, "(0, ");
				one(t, sizeof t, p, o, 1e-300);
				expect_ok(t);
			} else {
				one(t, sizeof t, p, o, o->lo);
				expect_ok(t);
				one(t, sizeof t, p, o, o->kind == PO_INT ? o->lo - 1 :
				    nextafter(o->lo, -INFINITY));
				expect_range_error(t, "[");
			}
			checked++;
		}
	}
	ck_assert_int_ge(checked, 5);
}
END_TEST

/* The messages, exactly, for one closed and one half-open range. */
START_TEST(test_pass_range_messages)
{
	Pipeline pl;
	char *msg;

	ck_assert_int_ne(parse("autotune{hbm-gbs=0}", &pl, &msg), 0);
	ck_assert_str_eq(msg, "t: error: option 'hbm-gbs' of 'autotune' must be in (0, 1e+12], "
	    "found '0'\n  autotune{hbm-gbs=0}\n                   ^\n");
	free(msg);
	ck_assert_int_ne(parse("lower-tiled{bm=4097}", &pl, &msg), 0);
	ck_assert_str_eq(msg, "t: error: option 'bm' of 'lower-tiled' must be in [1, 4096], "
	    "found '4097'\n  lower-tiled{bm=4097}\n                 ^~~~\n");
	free(msg);
}
END_TEST

/* Unwritten no-default options are unset and left out of the text; the
 * text parses back to itself, written options included. */
START_TEST(test_pass_print_reads_back)
{
	static const char *const pipes[] = {
		"shape-infer,fuse,autotune,lower-tiled",
		"autotune{hbm-gbs=8000,target=cpu,cache=x.cache}",
		"fuse{max-ops=3 explain},autotune{step-us=0.5,measure-top=2},lower-tiled{bk=16}",
	};

	for (size_t i = 0; i < sizeof pipes / sizeof pipes[0]; i++) {
		Pipeline pl, pl2;
		char *msg, *a, *b;

		ck_assert_int_eq(parse(pipes[i], &pl, &msg), 0);
		free(msg);
		a = print_str(&pl);
		for (int j = 0; j < pl.n; j++) {
			int k = 0;

			for (const PassOpt *o = pl.p[j].pass->opts; o && o->key; o++, k++) {
				char key[64];

				snprintf(key, sizeof key, "%s=", o->key);
				if (no_default(o) && !pl.p[j].vals[k].set)
					ck_assert_msg(!strstr(a, key), "'%s' printed unset: %s", o->key, a);
				else
					ck_assert_msg(strstr(a, key), "'%s' missing: %s", o->key, a);
			}
		}
		a[strlen(a) - 1] = '\0';         /* the newline */
		ck_assert_int_eq(parse(a, &pl2, &msg), 0);
		free(msg);
		b = print_str(&pl2);
		ck_assert_str_eq(b, strcat(a, "\n"));
		ck_assert_ptr_nonnull(strstr(a, i == 0 ? "autotune{target=h100,top-k=3" :
		    "autotune{target="));
		free(a);
		free(b);
		pass_free_pipeline(&pl);
		pass_free_pipeline(&pl2);
	}
}
END_TEST

/* The parser, the lookup and the listing see only the registry handed to
 * them, in its order: the pass manager knows no pass of its own. */
START_TEST(test_pass_registry_given)
{
	const Pass *fuse = pass_lookup(aicm_passes, "fuse");
	const Pass *infer = pass_lookup(aicm_passes, "shape-infer");
	const Pass *const reg[] = {fuse, infer, NULL};
	Pipeline pl;
	char *msg;
	size_t n;
	FILE *f;

	ck_assert_ptr_nonnull(fuse);
	ck_assert_ptr_nonnull(infer);
	ck_assert_ptr_eq(pass_lookup(reg, "shape-infer"), infer);
	ck_assert_ptr_null(pass_lookup(reg, "autotune"));
	f = open_memstream(&msg, &n);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ne(pass_parse_pipeline(reg, "shape-infer,autotune", &pl, f, "t"), 0);
	fclose(f);
	ck_assert_str_eq(msg, "t: error: unknown pass 'autotune' in the pipeline\n"
	    "  shape-infer,autotune\n              ^~~~~~~~\n"
	    "note: the passes are: fuse, shape-infer\n");
	free(msg);
	f = open_memstream(&msg, &n);
	ck_assert_ptr_nonnull(f);
	pass_list(f, reg);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(msg, "Passes:\n  fuse "));
	ck_assert_ptr_nonnull(strstr(msg, "\n  shape-infer "));
	ck_assert_ptr_null(strstr(msg, "autotune"));
	ck_assert(strstr(msg, "fuse") < strstr(msg, "shape-infer"));
	free(msg);
}
END_TEST

Suite *
make_pass_suite(void)
{
	Suite *s = suite_create("pass");
	TCase *tc = tcase_create("options");

	tcase_add_test(tc, test_pass_defaults_in_range);
	tcase_add_test(tc, test_pass_range_edges);
	tcase_add_test(tc, test_pass_range_messages);
	tcase_add_test(tc, test_pass_print_reads_back);
	tcase_add_test(tc, test_pass_registry_given);
	suite_add_tcase(s, tc);
	return s;
}
