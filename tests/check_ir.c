/*
 * check_ir.c: the graph's bookkeeping (names, users, outputs, reorder).
 */
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

Suite *
make_ir_suite(void)
{
	Suite *s = suite_create("ir");
	TCase *tc = tcase_create("graph");

	tcase_add_test(tc, test_ir_lookup);
	tcase_add_test(tc, test_ir_fresh_name);
	tcase_add_test(tc, test_ir_users_and_outputs);
	tcase_add_test(tc, test_ir_reorder);
	suite_add_tcase(s, tc);
	tc = tcase_create("format");
	tcase_add_test(tc, test_ir_fmt_double);
	suite_add_tcase(s, tc);
	return s;
}
