/*
 * check_ir.c: the graph's bookkeeping (names, users, outputs, reorder).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"

static const char *mlp =
    "graph {\n"
    "  %x = input() : (64, 48)\n"
    "  %W = const() : (48, 32)\n"
    "  %mm = matmul(%x, %W)\n"
    "  %a = relu(%mm)\n"
    "  %b = neg(%mm)\n"
    "}\n";

START_TEST(test_ir_lookup)
{
	Graph *g = ck_parse(mlp, NULL);

	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(ir_lookup(g, "x"), 0);
	ck_assert_int_eq(ir_lookup(g, "b"), 4);
	ck_assert_int_eq(ir_lookup(g, "nope"), -1);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_ir_fresh_name)
{
	Graph *g = ck_parse(mlp, NULL);
	const char *n1 = ir_fresh_name(g, "mm");

	ck_assert_str_eq(n1, "mm.0");
	ir_add_node(g, OP_RELU, n1);
	ck_assert_str_eq(ir_fresh_name(g, "mm"), "mm.1");
	ir_graph_free(g);
}
END_TEST

START_TEST(test_ir_users_and_outputs)
{
	Graph *g = ck_parse(mlp, NULL);
	Users u;
	int *out, n;

	ir_users(g, &u);
	ck_assert_int_eq(u.start[3] - u.start[2], 2);       /* %mm: %a, %b */
	ck_assert_int_eq(u.user[u.start[2]], 3);
	ck_assert_int_eq(u.user[u.start[2] + 1], 4);
	ck_assert_int_eq(u.start[5] - u.start[4], 0);
	ir_users_free(&u);
	n = ir_outputs(g, &out);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(out[0], 3);
	ck_assert_int_eq(out[1], 4);
	free(out);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_ir_reorder)
{
	Graph *g = ck_parse(mlp, NULL);
	int perm[] = {1, 0, 2, 4, 3};

	ir_reorder(g, perm);
	ck_assert_str_eq(g->nodes[0].name, "W");
	ck_assert_int_eq(g->nodes[2].in[0], 1);
	ck_assert_int_eq(g->nodes[2].in[1], 0);
	ck_assert_int_eq(ir_lookup(g, "a"), 4);
	ir_graph_free(g);
}
END_TEST

/* Users in one block: a value used twice by one node is listed twice, a
 * node without users has an empty range, every range is in definition
 * order. */
START_TEST(test_ir_users_repeats_and_gaps)
{
	Graph *g = ck_parse(
	    "graph {\n  %x = input() : (4,)\n  %y = input() : (4,)\n  %a = add(%x, %x)\n"
	    "  %b = mul(%a, %y)\n  %c = add(%x, %b)\n}\n", NULL);
	Users u;

	ck_assert_ptr_nonnull(g);
	ir_users(g, &u);
	ck_assert_int_eq(u.start[0], 0);
	ck_assert_int_eq(u.start[1] - u.start[0], 3);        /* %x: %a, %a, %c */
	ck_assert_int_eq(u.user[0], 2);
	ck_assert_int_eq(u.user[1], 2);
	ck_assert_int_eq(u.user[2], 4);
	ck_assert_int_eq(u.start[2] - u.start[1], 1);        /* %y: %b */
	ck_assert_int_eq(u.user[u.start[1]], 3);
	ck_assert_int_eq(u.start[4] - u.start[3], 1);        /* %b: %c */
	ck_assert_int_eq(u.start[5] - u.start[4], 0);        /* %c: none */
	ck_assert_int_eq(u.start[5], 6);                     /* every operand once */
	ir_users_free(&u);
	ck_assert_ptr_null(u.start);
	ir_graph_free(g);
}
END_TEST

/* A permutation of several cycles (one of length 3, one swap, fixed
 * points), applied in place: nodes, operands, kernels, the return list and
 * every name's lookup follow. */
START_TEST(test_ir_reorder_cycles)
{
	Graph *g = ck_parse(
	    "graph {\n  %x = input() : (4,)\n  %y = input() : (4,)\n  %z = input() : (4,)\n"
	    "  %a = relu(%x)\n  %b = neg(%y)\n  %c = add(%a, %b)\n  %d = exp(%z)\n"
	    "  return %c, %d\n}\n", NULL);
	/* new order: z x y b a c d (0 -> 1 -> 2 -> 0 is one cycle, 3 <-> 4 one) */
	int perm[] = {2, 0, 1, 4, 3, 5, 6};
	const char *want[] = {"z", "x", "y", "b", "a", "c", "d"};
	int k;

	ck_assert_ptr_nonnull(g);
	k = ir_add_kernel(g, "k", KK_ELEMENTWISE);
	g->kernels[k].first = 3;
	g->kernels[k].last = 5;
	for (int i = 3; i <= 5; i++)
		g->nodes[i].kernel = k;
	ir_reorder(g, perm);
	for (int i = 0; i < 7; i++) {
		ck_assert_str_eq(g->nodes[i].name, want[i]);
		ck_assert_int_eq(ir_lookup(g, want[i]), i);
	}
	ck_assert_int_eq(g->nodes[3].in[0], 2);              /* %b = neg(%y) */
	ck_assert_int_eq(g->nodes[4].in[0], 1);              /* %a = relu(%x) */
	ck_assert_int_eq(g->nodes[5].in[0], 4);              /* %c = add(%a, %b) */
	ck_assert_int_eq(g->nodes[5].in[1], 3);
	ck_assert_int_eq(g->nodes[6].in[0], 0);              /* %d = exp(%z) */
	ck_assert_int_eq(g->kernels[k].first, 3);
	ck_assert_int_eq(g->kernels[k].last, 5);
	ck_assert_int_eq(g->ret[0], 5);
	ck_assert_int_eq(g->ret[1], 6);
	ck_assert_int_eq(ir_lookup(g, "w"), -1);
	ir_graph_free(g);
}
END_TEST

/* A graph that holds a duplicate name (the verifier's to report) keeps it
 * noted, on whichever of the two comes later after a reorder. */
START_TEST(test_ir_reorder_duplicate_name)
{
	Graph *g = ir_graph_new();
	int perm[] = {1, 0, 2};

	ir_add_node(g, OP_INPUT, "x");
	ir_add_node(g, OP_INPUT, "y");
	ir_add_node(g, OP_INPUT, "x");
	ck_assert_int_eq(g->names.dup, 3);
	ir_reorder(g, perm);
	ck_assert_int_eq(g->names.dup, 3);
	ck_assert_int_eq(ir_lookup(g, "y"), 0);
	ck_assert_int_eq(ir_lookup(g, "x") == 1 || ir_lookup(g, "x") == 2, 1);
	perm[0] = 2;
	perm[1] = 1;
	perm[2] = 0;
	ir_reorder(g, perm);                                 /* x x y */
	ck_assert_int_eq(g->names.dup, 2);
	ir_graph_free(g);
}
END_TEST

/* Compaction keeps the chosen nodes in order, in place; operands and the
 * return list follow, and the names find the moved nodes. */
START_TEST(test_ir_compact)
{
	Graph *g = ck_parse(
	    "graph {\n  %x = input() : (4,)\n  %a = relu(%x)\n  %b = neg(%a)\n"
	    "  %y = input() : (4,)\n  %c = add(%x, %y)\n  return %c\n}\n", NULL);
	int map[] = {0, -1, -1, 1, 2};

	ck_assert_ptr_nonnull(g);
	ir_compact(g, map);
	ck_assert_int_eq(g->nnodes, 3);
	ck_assert_str_eq(g->nodes[1].name, "y");
	ck_assert_str_eq(g->nodes[2].name, "c");
	ck_assert_int_eq(g->nodes[2].in[0], 0);
	ck_assert_int_eq(g->nodes[2].in[1], 1);
	ck_assert_int_eq(g->ret[0], 2);
	ck_assert_int_eq(ir_lookup(g, "c"), 2);
	ck_assert_int_eq(ir_lookup(g, "y"), 1);
	ck_assert_int_eq(ir_lookup(g, "a"), -1);
	ck_assert_int_eq(ir_lookup(g, "b"), -1);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_ir_fmt_double)
{
	char b[64];

	ir_fmt_double(b, sizeof b, 0.5);
	ck_assert_str_eq(b, "0.5");
	ir_fmt_double(b, sizeof b, 0.1);
	ck_assert_str_eq(b, "0.1");
	ir_fmt_double(b, sizeof b, 1.0);
	ck_assert_str_eq(b, "1.0");
	ir_fmt_double(b, sizeof b, -1e-300);
	ck_assert_str_eq(b, "-1e-300");
	ir_fmt_double(b, sizeof b, 1.0 / 3);
	ck_assert_double_eq(strtod(b, NULL), 1.0 / 3);
}
END_TEST

/* The "did you mean" of flags, passes and pass options (issue 21): one
 * edit in a short name, two in 'explian' (a swap), none when far. */
START_TEST(test_ir_suggest)
{
	static const char *const keys[] = {"explain", "matmul-reduce", "row-fusion", "max-ops"};
	static const char *const flags[] = {"--timing", "--dump-pipeline", "--dump-dir"};

	ck_assert_int_eq(ir_edit_distance("fuse", "fusee"), 1);
	ck_assert_int_eq(ir_edit_distance("explian", "explain"), 2);
	ck_assert_str_eq(ir_suggest("explian", keys, 4), "explain");
	ck_assert_str_eq(ir_suggest("--timming", flags, 3), "--timing");
	ck_assert_str_eq(ir_suggest("--dump-pipline", flags, 3), "--dump-pipeline");
	ck_assert_ptr_null(ir_suggest("fusion", keys, 4));
	ck_assert_ptr_null(ir_suggest("x", keys, 4));
	ck_assert_ptr_null(ir_suggest("-x", (const char *const[]){"-o", "-q"}, 2));
	ck_assert_ptr_null(ir_suggest("explain", keys, 4));   /* no advice when right */
}
END_TEST

/* The one JSON style of every report: 17 digits that read back, null for
 * what JSON cannot hold, escapes for quotes, backslashes and control bytes. */
START_TEST(test_ir_json)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	ir_json_num(f, 0.1);
	fputc(' ', f);
	ir_json_num(f, INFINITY);
	fputc(' ', f);
	ir_json_num(f, NAN);
	fputc(' ', f);
	ir_json_str(f, "a\"b\\c\n");
	fclose(f);
	ck_assert_str_eq(buf, "0.10000000000000001 null null \"a\\\"b\\\\c\\u000a\"");
	free(buf);
}
END_TEST

/* One sh quoting for the tools (native.c's compile command, aicm-opt's
 * reproducer, the HTML report): each result is fed back through sh, which
 * must read it as exactly the one word it came from. */
static char *
shell_word(const char *s, bool bare_ok)
{
	StrBuf b = {0};

	strbuf_shell_word(&b, s, bare_ok);
	return b.s;
}

static void
check_sh_roundtrip(const char *s)
{
	StrBuf cmd = {0};
	char *w = shell_word(s, true), *q = shell_word(s, false), got[256] = "";
	FILE *p;
	size_t n;

	/* printf's %s joins words with '|': one word in, one word out */
	strbuf_printf(&cmd, "printf '%%s|' %s %s", w, q);
	p = popen(cmd.s, "r");
	ck_assert_ptr_nonnull(p);
	n = fread(got, 1, sizeof got - 1, p);
	got[n] = '\0';
	ck_assert_int_eq(pclose(p), 0);
	{
		StrBuf want = {0};

		strbuf_printf(&want, "%s|%s|", s, s);
		ck_assert_str_eq(got, want.s);
		free(want.s);
	}
	free(cmd.s);
	free(w);
	free(q);
}

START_TEST(test_ir_shell_word)
{
	static const struct {
		const char *in;
		bool bare_ok;
		const char *want;
	} forms[] = {
		/* bare only when asked and every byte is literal to sh */
		{"build/x-1.aicm", true, "build/x-1.aicm"},
		{"build/x-1.aicm", false, "'build/x-1.aicm'"},
		/* the empty word keeps its quotes, else it vanishes */
		{"", true, "''"},
		{"a b", true, "'a b'"},
		{"it's", true, "'it'\\''s'"},
		/* non-ASCII bytes are quoted and pass unchanged */
		{"caf\xc3\xa9", true, "'caf\xc3\xa9'"},
	};

	for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
		char *w = shell_word(forms[i].in, forms[i].bare_ok);

		ck_assert_str_eq(w, forms[i].want);
		free(w);
	}
	/* sh reads each back as the one word it came from */
	static const char *const tricky[] = {"", "a b", "'", "''", "it's", "a\"b", "$HOME", "`id`", "a\\b",
	    "x;y", "*", "~", "a\nb", "caf\xc3\xa9 \xe2\x86\x92 'q'", "-n", "%s"};

	for (size_t i = 0; i < sizeof tricky / sizeof *tricky; i++)
		check_sh_roundtrip(tricky[i]);
}
END_TEST

Suite *
make_ir_suite(void)
{
	Suite *s = suite_create("ir");
	TCase *tc = tcase_create("graph");

	tcase_add_test(tc, test_ir_lookup);
	tcase_add_test(tc, test_ir_fresh_name);
	tcase_add_test(tc, test_ir_users_and_outputs);
	tcase_add_test(tc, test_ir_reorder);
	tcase_add_test(tc, test_ir_users_repeats_and_gaps);
	tcase_add_test(tc, test_ir_reorder_cycles);
	tcase_add_test(tc, test_ir_reorder_duplicate_name);
	tcase_add_test(tc, test_ir_compact);
	suite_add_tcase(s, tc);
	tc = tcase_create("format");
	tcase_add_test(tc, test_ir_fmt_double);
	tcase_add_test(tc, test_ir_suggest);
	tcase_add_test(tc, test_ir_json);
	tcase_add_test(tc, test_ir_shell_word);
	suite_add_tcase(s, tc);
	return s;
}
