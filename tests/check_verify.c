/*
 * check_verify.c: every check of src/ir/verify.c, one bad graph each.
 *
 * The parser refuses most of these graphs before the verifier could see
 * them, so each test starts from a valid parsed graph and breaks one
 * invariant by hand, as a buggy pass would, then checks the verifier's
 * count and its exact first message (place included).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "pass.h"
#include "../passes/passes.h"

static const char *base =
    "graph {\n"
    "  %x = input() : (2, 3)\n"
    "  %w = const() : (3, 4)\n"
    "  %m = matmul(%x, %w) : (2, 4)\n"
    "  %y = relu(%m)\n"
    "  %s = sum(%y) axis=1\n"
    "}\n";

static Graph *g;

static void
setup(void)
{
	char *msgs;

	g = ck_parse(base, &msgs);
	ck_assert_msg(g != NULL, "%s", msgs);
	free(msgs);
}

static void
teardown(void)
{
	ir_graph_free(g);
	g = NULL;
}

/* Runs the verifier on g; returns its count, *msgs gets its messages. */
static int
verify(char **msgs)
{
	size_t n = 0;
	FILE *f = open_memstream(msgs, &n);
	Diag d;
	int bad;

	diag_init(&d, "t.aicm", base, strlen(base), f);
	bad = ir_verify(g, &d);
	ck_assert_int_eq(bad > 0, d.nerr > 0);
	diag_free(&d);
	fclose(f);
	return bad;
}

/* Verifies g and expects want as the first line of the first message. */
static void
expect(int count, const char *want)
{
	char *msgs, *nl;
	int bad = verify(&msgs);

	ck_assert_msg(bad == count, "expected %d problems, found %d:\n%s", count, bad, msgs);
	nl = strchr(msgs, '\n');
	if (nl)
		*nl = '\0';
	ck_assert_str_eq(msgs, want);
	free(msgs);
}

static Node *
node(const char *name)
{
	int i = ir_lookup(g, name);

	ck_assert_int_ge(i, 0);
	return &g->nodes[i];
}

START_TEST(test_verify_valid)
{
	char *msgs;

	ck_assert_int_eq(verify(&msgs), 0);
	ck_assert_str_eq(msgs, "");
	free(msgs);
}
END_TEST

/* ---- nodes ------------------------------------------------------------ */

START_TEST(test_verify_invalid_op)
{
	char want[64];

	node("y")->op = OP_COUNT;
	snprintf(want, sizeof want, "t.aicm:5:3: error: '%%y' has an invalid op id %d", (int)OP_COUNT);
	expect(1, want);
}
END_TEST

START_TEST(test_verify_arity)
{
	node("m")->nin = 1;
	expect(1, "t.aicm:4:3: error: 'matmul' takes 2 operands, '%m' has 1");
}
END_TEST

START_TEST(test_verify_arity_source)
{
	node("w")->nin = 1;
	expect(1, "t.aicm:3:3: error: 'const' takes 0 operands, '%w' has 1");
}
END_TEST

/* The checks on data and tuples a pass or an importer could get wrong
 * (the parser refuses them as text). */
START_TEST(test_verify_values_count)
{
	static const double v[2] = {1, 2};
	static const int64_t iv[2] = {1, 2};
	Node *w = node("w");

	w->at.set = AB(VALUES);
	w->at.nvalues = 2;
	w->at.values = v;
	w->at.ivalues = iv;
	expect(1, "t.aicm:3:3: error: '%w' has 2 values= elements for a type of 12");
}
END_TEST

START_TEST(test_verify_file_escapes)
{
	Node *w = node("w");

	w->at.set = AB(FILE);
	w->at.file = "../W.npy";
	expect(1, "t.aicm:3:3: error: '%w' file= has a '..' component; expected a path inside "
	    "the data directory");
}
END_TEST

START_TEST(test_verify_tuple_missing)
{
	Node *s = node("s");

	s->at.tup = arena_alloc(&g->arena, sizeof(IntTuple) * ATTR_COUNT);
	s->at.tup[ATTR_AXIS] = (IntTuple){2, NULL};
	expect(1, "t.aicm:6:3: error: '%s' attribute 'axis' has no valid tuple");
}
END_TEST

START_TEST(test_verify_bad_type)
{
	node("y")->type.dt = DT_COUNT;
	expect(1, "t.aicm:5:3: error: '%y' has an invalid type (rank -1, element type 5)");
}
END_TEST

START_TEST(test_verify_defined_twice)
{
	int i = ir_add_node(g, OP_NEG, "y");

	ir_set_nin(g, i, 1);
	g->nodes[i].in[0] = 0;
	expect(1, "t.aicm: error: the name '%y' is defined twice");
}
END_TEST

START_TEST(test_verify_operand_self)
{
	Node *n = node("y");

	n->in[0] = 3;
	expect(1, "t.aicm:5:3: error: operand 0 of '%y' is not defined before it");
}
END_TEST

START_TEST(test_verify_operand_later)
{
	node("m")->in[1] = 4;
	expect(1, "t.aicm:4:3: error: operand 1 of '%m' is not defined before it");
}
END_TEST

START_TEST(test_verify_operand_negative)
{
	node("s")->in[0] = -1;
	expect(1, "t.aicm:6:3: error: operand 0 of '%s' is not defined before it");
}
END_TEST

START_TEST(test_verify_attr_not_taken)
{
	node("y")->at.set |= AB(AXIS);
	expect(1, "t.aicm:5:3: error: '%y' has attributes that 'relu' does not take");
}
END_TEST

START_TEST(test_verify_attr_not_taken_source)
{
	node("x")->at.set |= AB(VALUE);
	expect(1, "t.aicm:2:3: error: '%x' has attributes that 'input' does not take");
}
END_TEST

START_TEST(test_verify_required_attr)
{
	Node *n = node("y");

	n->op = OP_RESHAPE;
	expect(1, "t.aicm:5:3: error: '%y' lacks a required attribute of 'reshape'");
}
END_TEST

START_TEST(test_verify_source_needs_type)
{
	node("w")->type.rank = -1;
	expect(1, "t.aicm:3:3: error: 'const' needs a type");
}
END_TEST

START_TEST(test_verify_type_mismatch)
{
	Node *n = node("m");

	n->type.dim[1] = 5;
	expect(1, "t.aicm:4:25: error: 'matmul' result type (2, 5) does not match (2, 4), "
	    "inferred from operands (2, 3) and (3, 4)");
}
END_TEST

START_TEST(test_verify_dtype_mismatch)
{
	node("m")->type.dt = DT_F32;
	expect(1, "t.aicm:4:25: error: 'matmul' result is written f32 but its operands are f64");
}
END_TEST

START_TEST(test_verify_shape_rule_error)
{
	/* A written type whose operands break the rule: the rule's message. */
	node("w")->type.dim[0] = 7;
	expect(1, "t.aicm:4:19: error: 'matmul' cannot multiply (2, 3) by (7, 4): "
	    "inner dimensions 3 and 7 differ");
}
END_TEST

START_TEST(test_verify_untyped_operand_skips_check)
{
	/* %y is untyped: %s cannot be checked, and that is not an error. */
	Node *s = node("s");

	s->type.rank = 1;
	s->type.dim[0] = 99;
	expect(0, "");
}
END_TEST

START_TEST(test_verify_no_place)
{
	/* A node made by a pass has no place: the message still names it. */
	int i = ir_add_node(g, OP_EXP, ir_fresh_name(g, "y"));

	ir_set_nin(g, i, 1);
	g->nodes[i].in[0] = i;
	expect(1, "t.aicm: error: operand 0 of '%y.0' is not defined before it");
}
END_TEST

START_TEST(test_verify_counts_all)
{
	node("y")->at.set |= AB(PERM);
	node("w")->type.rank = -1;
	node("s")->in[0] = 5;
	expect(3, "t.aicm:3:3: error: 'const' needs a type");
}
END_TEST

/* ---- kernels ---------------------------------------------------------- */

static int
kernel(const char *name, KernelKind kind, int first, int last)
{
	int k = ir_add_kernel(g, name, kind);

	g->kernels[k].first = first;
	g->kernels[k].last = last;
	for (int i = first; i >= 0 && i <= last; i++)
		g->nodes[i].kernel = k;
	return k;
}

START_TEST(test_verify_kernel_valid)
{
	kernel("k0", KK_MATMUL_EPILOGUE, 2, 4);
	expect(0, "");
}
END_TEST

START_TEST(test_verify_kernel_duplicate_name)
{
	kernel("k0", KK_MATMUL, 2, 2);
	kernel("k0", KK_ELEMENTWISE, 3, 4);
	expect(1, "t.aicm: error: redefinition of kernel '@k0'");
}
END_TEST

/* Among many kernels (after fuse a graph of n ops may have n), each one
 * whose name an earlier kernel has is reported, at its own name, once. */
START_TEST(test_verify_kernel_duplicate_names_many)
{
	char *msgs, name[32];
	const char *first, *second;

	for (int k = 0; k < 500; k++) {
		snprintf(name, sizeof name, "k%d", k == 300 ? 7 : k == 499 ? 7 : k == 400 ? 250 : k);
		ir_add_kernel(g, arena_strndup(&g->arena, name, strlen(name)), KK_ELEMENTWISE);
		g->kernels[k].first = g->kernels[k].last = 3;
	}
	g->kernels[0].last = 4;
	for (int k = 1; k < 500; k++)
		g->kernels[k].first = -1;             /* empty: one message each, after the name's */
	g->nodes[3].kernel = g->nodes[4].kernel = 0;
	ck_assert_int_eq(verify(&msgs), 3 + 499);
	first = strstr(msgs, "redefinition of kernel '@k7'");
	ck_assert_ptr_nonnull(first);
	second = strstr(first + 1, "redefinition of kernel '@k7'");
	ck_assert_ptr_nonnull(second);
	ck_assert_ptr_null(strstr(second + 1, "redefinition of kernel '@k7'"));
	ck_assert_ptr_nonnull(strstr(msgs, "redefinition of kernel '@k250'"));
	ck_assert_ptr_null(strstr(msgs, "redefinition of kernel '@k0'"));
	free(msgs);
}
END_TEST

START_TEST(test_verify_kernel_empty)
{
	kernel("k0", KK_OPAQUE, -1, -1);
	expect(1, "t.aicm: error: kernel '@k0' is empty");
}
END_TEST

START_TEST(test_verify_kernel_past_end)
{
	int k = kernel("k0", KK_OPAQUE, 4, 4);

	g->kernels[k].last = 9;
	expect(1, "t.aicm: error: kernel '@k0' is empty");
}
END_TEST

START_TEST(test_verify_kernel_not_contiguous)
{
	kernel("k0", KK_MATMUL_EPILOGUE, 2, 4);
	node("y")->kernel = -1;
	expect(1, "t.aicm:5:3: error: kernel '@k0' is not contiguous: '%y' lies inside it "
	    "but is not its op");
}
END_TEST

START_TEST(test_verify_kernel_source_inside)
{
	kernel("k0", KK_OPAQUE, 1, 2);
	expect(1, "t.aicm:3:3: error: 'const' cannot be inside kernel '@k0'; sources stay "
	    "outside kernels");
}
END_TEST

START_TEST(test_verify_kernel_claimed_outside)
{
	kernel("k0", KK_MATMUL, 2, 2);
	node("s")->kernel = 0;
	expect(1, "t.aicm:6:3: error: '%s' claims a kernel it is not inside");
}
END_TEST

START_TEST(test_verify_kernel_claimed_missing)
{
	node("s")->kernel = 3;
	expect(1, "t.aicm:6:3: error: '%s' claims a kernel it is not inside");
}
END_TEST

/* ---- return ----------------------------------------------------------- */

START_TEST(test_verify_return_valid)
{
	g->ret = arena_alloc(&g->arena, 2 * sizeof(int));
	g->ret[0] = 4;
	g->ret[1] = 0;
	g->nret = 2;
	expect(0, "");
}
END_TEST

START_TEST(test_verify_return_empty)
{
	g->ret = arena_alloc(&g->arena, sizeof(int));
	g->nret = 0;
	g->retloc = (Loc){7, 3, 6};
	expect(1, "t.aicm:7:3: error: 'return' names no value");
}
END_TEST

START_TEST(test_verify_return_out_of_range)
{
	g->ret = arena_alloc(&g->arena, 2 * sizeof(int));
	g->ret[0] = 4;
	g->ret[1] = 5;
	g->nret = 2;
	g->retloc = (Loc){7, 3, 6};
	expect(1, "t.aicm:7:3: error: 'return' names a value that does not exist");
}
END_TEST

START_TEST(test_verify_return_negative)
{
	g->ret = arena_alloc(&g->arena, sizeof(int));
	g->ret[0] = -1;
	g->nret = 1;
	expect(1, "t.aicm: error: 'return' names a value that does not exist");
}
END_TEST

/* ---- after a pass ----------------------------------------------------- */

START_TEST(test_verify_after_shape_infer)
{
	const Pass *p = pass_lookup(aicm_passes, "shape-infer");
	PassVal vals[1] = {{0}};
	PassArgs a = {p->opts, vals, NULL, false, NULL};
	Diag d;
	FILE *f = fopen("/dev/null", "w");

	diag_init(&d, "t.aicm", base, strlen(base), f);
	ck_assert_int_eq(p->run(g, &a, &d), 0);
	diag_free(&d);
	fclose(f);
	ck_assert_int_eq(node("s")->type.rank, 1);
	expect(0, "");
	/* Now every type is written: breaking one is caught. */
	node("s")->type.dim[0] = 4;
	expect(1, "t.aicm:6:8: error: 'sum' result type (4,) does not match (2,), inferred "
	    "from operand (2, 4)");
}
END_TEST

Suite *
make_verify_suite(void)
{
	Suite *s = suite_create("verify");
	TCase *tc;

	tc = tcase_create("nodes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_verify_valid);
	tcase_add_test(tc, test_verify_invalid_op);
	tcase_add_test(tc, test_verify_arity);
	tcase_add_test(tc, test_verify_arity_source);
	tcase_add_test(tc, test_verify_defined_twice);
	tcase_add_test(tc, test_verify_values_count);
	tcase_add_test(tc, test_verify_file_escapes);
	tcase_add_test(tc, test_verify_tuple_missing);
	tcase_add_test(tc, test_verify_bad_type);
	tcase_add_test(tc, test_verify_operand_self);
	tcase_add_test(tc, test_verify_operand_later);
	tcase_add_test(tc, test_verify_operand_negative);
	tcase_add_test(tc, test_verify_attr_not_taken);
	tcase_add_test(tc, test_verify_attr_not_taken_source);
	tcase_add_test(tc, test_verify_required_attr);
	tcase_add_test(tc, test_verify_source_needs_type);
	tcase_add_test(tc, test_verify_no_place);
	tcase_add_test(tc, test_verify_counts_all);
	suite_add_tcase(s, tc);

	tc = tcase_create("types");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_verify_type_mismatch);
	tcase_add_test(tc, test_verify_dtype_mismatch);
	tcase_add_test(tc, test_verify_shape_rule_error);
	tcase_add_test(tc, test_verify_untyped_operand_skips_check);
	tcase_add_test(tc, test_verify_after_shape_infer);
	suite_add_tcase(s, tc);

	tc = tcase_create("kernels");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_verify_kernel_valid);
	tcase_add_test(tc, test_verify_kernel_duplicate_name);
	tcase_add_test(tc, test_verify_kernel_duplicate_names_many);
	tcase_add_test(tc, test_verify_kernel_empty);
	tcase_add_test(tc, test_verify_kernel_past_end);
	tcase_add_test(tc, test_verify_kernel_not_contiguous);
	tcase_add_test(tc, test_verify_kernel_source_inside);
	tcase_add_test(tc, test_verify_kernel_claimed_outside);
	tcase_add_test(tc, test_verify_kernel_claimed_missing);
	suite_add_tcase(s, tc);

	tc = tcase_create("return");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_verify_return_valid);
	tcase_add_test(tc, test_verify_return_empty);
	tcase_add_test(tc, test_verify_return_out_of_range);
	tcase_add_test(tc, test_verify_return_negative);
	suite_add_tcase(s, tc);
	return s;
}
