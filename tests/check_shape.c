/*
 * check_shape.c: the shape rules of DESIGN §3 (src/ir/shape.c) and the
 * shape-infer pass around them.
 *
 * Rule tests are tables: a few statements whose last op is untyped, and
 * either the type ir_infer_type must give it or the exact message it must
 * refuse with.  Broadcasting's corners (rank 0, 1s, missing dimensions),
 * reductions (negative axes, keepdims, no axis), 2-D and batched matmul,
 * transpose (default and explicit perms) and reshape (with -1) each have a
 * TCase; then the pass: it fills, checks, reports at the right place and
 * stays quiet after the first error of a chain.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "pass.h"
#include "../passes/passes.h"

typedef struct Case {
	const char *src;             /* statements; the last op is inferred */
	const char *want;            /* "(2, 3)", "(2, 3) f32", or NULL: an error */
	const char *err;             /* the message when want is NULL */
} Case;

/* Parses "graph { src }", infers the last node, checks against c. */
static void
run_case(const Case *c)
{
	char src[1024], *msgs, err[IR_ERR_MAX], got[IR_TYPE_STR + 8];
	Graph *g;
	Type t;
	Loc at = {0};
	int rc;

	snprintf(src, sizeof src, "graph {\n%s\n}\n", c->src);
	g = ck_parse(src, &msgs);
	ck_assert_msg(g != NULL, "rejected:\n%s\n%s", src, msgs);
	free(msgs);
	err[0] = '\0';
	rc = ir_infer_type(g, g->nnodes - 1, &t, err, &at);
	if (c->want) {
		ck_assert_msg(rc == 0, "%s\nrefused: %s", c->src, err);
		ir_shape_str(&t, got);
		if (t.dt != DT_F64) {
			strcat(got, " ");
			strcat(got, ir_dtype_name(t.dt));
		}
		ck_assert_msg(strcmp(got, c->want) == 0, "%s\ngave %s, not %s", c->src, got, c->want);
	} else {
		ck_assert_msg(rc != 0, "%s\naccepted; expected: %s", c->src, c->err);
		ck_assert_str_eq(err, c->err);
		ck_assert_int_gt(at.line, 0);
	}
	ir_graph_free(g);
}

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- elementwise ------------------------------------------------------ */

static const Case unary[] = {
	{"%a = input() : (2, 3)\n%y = relu(%a)", "(2, 3)", NULL},
	{"%a = input() : ()\n%y = exp(%a)", "()", NULL},
	{"%a = input() : (7,) f32\n%y = sigmoid(%a)", "(7,) f32", NULL},
	{"%a = input() : (1, 2, 3, 4) f32\n%y = tanh(%a)", "(1, 2, 3, 4) f32", NULL},
	{"%a = input() : (5, 1)\n%y = abs(%a)", "(5, 1)", NULL},
};

START_TEST(test_shape_unary)
{
	run_case(&unary[_i]);
}
END_TEST

static const Case bcast[] = {
	{"%a = input() : (2, 3)\n%b = input() : (2, 3)\n%y = add(%a, %b)", "(2, 3)", NULL},
	{"%a = input() : (2, 3)\n%b = input() : (3,)\n%y = add(%a, %b)", "(2, 3)", NULL},
	{"%a = input() : (3,)\n%b = input() : (2, 3)\n%y = sub(%a, %b)", "(2, 3)", NULL},
	{"%a = input() : (2, 3)\n%b = input() : ()\n%y = mul(%a, %b)", "(2, 3)", NULL},
	{"%a = input() : ()\n%b = input() : (2, 3)\n%y = div(%a, %b)", "(2, 3)", NULL},
	{"%a = input() : ()\n%b = input() : ()\n%y = maximum(%a, %b)", "()", NULL},
	{"%a = input() : (1,)\n%b = input() : ()\n%y = minimum(%a, %b)", "(1,)", NULL},
	{"%a = input() : (2, 1)\n%b = input() : (1, 3)\n%y = add(%a, %b)", "(2, 3)", NULL},
	{"%a = input() : (1,)\n%b = input() : (5,)\n%y = add(%a, %b)", "(5,)", NULL},
	{"%a = input() : (5, 4)\n%b = input() : (1,)\n%y = add(%a, %b)", "(5, 4)", NULL},
	{"%a = input() : (4, 1, 3)\n%b = input() : (2, 1)\n%y = add(%a, %b)", "(4, 2, 3)", NULL},
	{"%a = input() : (1, 1, 1, 1)\n%b = input() : (7,)\n%y = add(%a, %b)", "(1, 1, 1, 7)",
	 NULL},
	{"%a = input() : (8, 1, 6, 1)\n%b = input() : (7, 1, 5)\n%y = mul(%a, %b)",
	 "(8, 7, 6, 5)", NULL},
	{"%a = input() : (1, 1)\n%b = input() : (1, 1)\n%y = add(%a, %b)", "(1, 1)", NULL},
	{"%a = input() : (2, 3) f32\n%b = input() : (3,) f32\n%y = add(%a, %b)", "(2, 3) f32",
	 NULL},
	{"%a = input() : (2, 3)\n%b = input() : (2,)\n%y = add(%a, %b)", NULL,
	 "'add' cannot broadcast (2, 3) with (2,)"},
	{"%a = input() : (3,)\n%b = input() : (4,)\n%y = sub(%a, %b)", NULL,
	 "'sub' cannot broadcast (3,) with (4,)"},
	{"%a = input() : (2, 3, 4)\n%b = input() : (3, 3, 4)\n%y = mul(%a, %b)", NULL,
	 "'mul' cannot broadcast (2, 3, 4) with (3, 3, 4)"},
	{"%a = input() : (2, 1)\n%b = input() : (3, 3, 2)\n%y = div(%a, %b)", NULL,
	 "'div' cannot broadcast (2, 1) with (3, 3, 2)"},
	{"%a = input() : (5, 2)\n%b = input() : (2, 5)\n%y = maximum(%a, %b)", NULL,
	 "'maximum' cannot broadcast (5, 2) with (2, 5)"},
	{"%a = input() : (1073741824, 1073741824, 1, 1)\n"
	 "%b = input() : (1, 1, 1073741824, 1073741824)\n%y = add(%a, %b)", NULL,
	 "'add' of (1073741824, 1073741824, 1, 1) and (1, 1, 1073741824, 1073741824) gives "
	 "(1073741824, 1073741824, 1073741824, 1073741824), which has more elements than a "
	 "64-bit count holds"},
	{"%a = input() : (1073741824, 1073741824, 1)\n"
	 "%b = input() : (1, 1, 4)\n%y = mul(%a, %b)", "(1073741824, 1073741824, 4)", NULL},
	{"%a = input() : (1073741824, 1073741824, 1)\n"
	 "%b = input() : (1, 1, 8)\n%y = mul(%a, %b)", NULL,
	 "'mul' of (1073741824, 1073741824, 1) and (1, 1, 8) gives (1073741824, 1073741824, 8), "
	 "which has more elements than a 64-bit count holds"},
	{"%a = input() : (2,)\n%b = input() : (2,) f32\n%y = add(%a, %b)", NULL,
	 "'add' operands have different element types, f64 and f32 (no implicit promotion)"},
	{"%a = input() : () f32\n%b = input() : ()\n%y = minimum(%a, %b)", NULL,
	 "'minimum' operands have different element types, f32 and f64 (no implicit promotion)"},
};

START_TEST(test_shape_broadcast)
{
	run_case(&bcast[_i]);
}
END_TEST

/* Issue 16's elementwise ops: the result's element type (bool for the
 * compares, isnan and the logic ops, to= for cast, a's and b's for
 * where), and the type errors, on the last statement's line.  want
 * carries the element type unless it is f64. */
static const Case elem[] = {
	{"%a = input() : (2, 3) f32\n%b = input() : (3,) f32\n%y = less(%a, %b)", "(2, 3) bool",
	 NULL},
	{"%a = input() : (2,) i64\n%b = input() : () i64\n%y = greater_equal(%a, %b)",
	 "(2,) bool", NULL},
	{"%a = input() : (2, 3) bool\n%y = equal(%a, %a)", "(2, 3) bool", NULL},
	{"%a = input() : (4,) f32\n%y = isnan(%a)", "(4,) bool", NULL},
	{"%a = input() : (2, 3) bool\n%b = input() : (1, 3) bool\n%y = xor(%a, %b)",
	 "(2, 3) bool", NULL},
	{"%a = input() : (4,) bool\n%y = not(%a)", "(4,) bool", NULL},
	{"%a = input() : (4,) f32\n%y = cast(%a) to=i64", "(4,) i64", NULL},
	{"%a = input() : (4,) bool\n%y = cast(%a) to=f64", "(4,)", NULL},
	{"%a = input() : (2,) i32\n%b = input() : (2,) i32\n%y = pow(%a, %b)", "(2,) i32", NULL},
	{"%a = input() : (2, 1) i64\n%b = input() : (3,) i64\n%y = mod(%a, %b)", "(2, 3) i64",
	 NULL},
	{"%a = input() : (3,) f32\n%y = round(%a)", "(3,) f32", NULL},
	{"%a = input() : (3,) i32\n%y = sign(%a)", "(3,) i32", NULL},
	{"%c = input() : (4, 1) bool\n%a = input() : (3,) i64\n%b = input() : (2, 1, 1) i64\n"
	 "%y = where(%c, %a, %b)", "(2, 4, 3) i64", NULL},
	{"%c = input() : () bool\n%a = input() : (3,) f32\n%b = input() : () f32\n"
	 "%y = where(%c, %a, %b)", "(3,) f32", NULL},
	{"%c = input() : (2, 3)\n%a = input() : (2, 3)\n%y = where(%c, %a, %a)", NULL,
	 "'where' condition is f64; it must be bool"},
	{"%c = input() : (2, 3) bool\n%a = input() : (2, 3)\n%b = input() : (3,) f32\n"
	 "%y = where(%c, %a, %b)", NULL,
	 "'where' operands have different element types, f64 and f32 (no implicit promotion)"},
	{"%c = input() : (4, 2) bool\n%a = input() : (3,)\n%b = input() : (3,)\n"
	 "%y = where(%c, %a, %b)", NULL, "'where' cannot broadcast (4, 2), (3,) and (3,)"},
	{"%a = input() : (2, 3)\n%y = not(%a)", NULL, "'not' takes bool, not f64"},
	{"%a = input() : (2, 3) f32\n%y = and(%a, %a)", NULL, "'and' takes bool, not f32"},
	{"%a = input() : (2, 3) i32\n%y = round(%a)", NULL,
	 "'round' takes floats (f32 or f64), not i32"},
	{"%a = input() : (2, 3) i64\n%y = isnan(%a)", NULL,
	 "'isnan' takes floats (f32 or f64), not i64"},
	{"%a = input() : (2, 3) bool\n%y = less(%a, %a)", NULL,
	 "'less' takes numbers (f32, f64, i32 or i64), not bool"},
	{"%a = input() : (2,) bool\n%b = input() : (2,) bool\n%y = pow(%a, %b)", NULL,
	 "'pow' takes numbers (f32, f64, i32 or i64), not bool"},
	{"%a = input() : (2,) i32\n%b = input() : (2,) i64\n%y = fmod(%a, %b)", NULL,
	 "'fmod' operands have different element types, i32 and i64 (no implicit promotion)"},
	{"%a = input() : (3,)\n%b = input() : (2,)\n%y = greater(%a, %b)", NULL,
	 "'greater' cannot broadcast (3,) with (2,)"},
};

START_TEST(test_shape_elementwise_types)
{
	const Case *c = &elem[_i];
	char src[1024], *msgs, err[IR_ERR_MAX], got[IR_TYPE_STR + 8];
	Graph *g;
	Type t;
	Loc at = {0};
	int rc, line = 2;

	for (const char *q = c->src; *q; q++)
		line += *q == '\n';
	snprintf(src, sizeof src, "graph {\n%s\n}\n", c->src);
	g = ck_parse(src, &msgs);
	ck_assert_msg(g != NULL, "rejected:\n%s\n%s", src, msgs);
	free(msgs);
	err[0] = '\0';
	rc = ir_infer_type(g, g->nnodes - 1, &t, err, &at);
	if (c->want) {
		ck_assert_msg(rc == 0, "%s\nrefused: %s", c->src, err);
		ir_shape_str(&t, got);
		if (t.dt != DT_F64)
			strcat(strcat(got, " "), ir_dtype_name(t.dt));
		ck_assert_msg(strcmp(got, c->want) == 0, "%s\ngave %s, not %s", c->src, got, c->want);
	} else {
		ck_assert_msg(rc != 0, "%s\naccepted; expected: %s", c->src, c->err);
		ck_assert_str_eq(err, c->err);
		ck_assert_int_eq(at.line, line);
		ck_assert_int_gt(at.col, 1);
	}
	ir_graph_free(g);
}
END_TEST

/* cast cannot go without to=: the parser says so at the op. */
START_TEST(test_shape_cast_needs_to)
{
	char *msgs;
	Graph *g = ck_parse("graph {\n  %a = input() : (2, 3)\n  %y = cast(%a)\n}\n", &msgs);

	ck_assert_ptr_null(g);
	ck_assert_msg(strstr(msgs, ":3:") && strstr(msgs, "'cast' needs attribute 'to'"), "%s",
	    msgs);
	free(msgs);
}
END_TEST

/* ---- reductions ------------------------------------------------------- */

#define X3 "%a = input() : (2, 3, 4)\n"

static const Case reduce[] = {
	{X3 "%y = sum(%a)", "()", NULL},
	{X3 "%y = sum(%a) keepdims=True", "(1, 1, 1)", NULL},
	{X3 "%y = sum(%a) axis=0", "(3, 4)", NULL},
	{X3 "%y = max(%a) axis=1", "(2, 4)", NULL},
	{X3 "%y = mean(%a) axis=2", "(2, 3)", NULL},
	{X3 "%y = sum(%a) axis=-1", "(2, 3)", NULL},
	{X3 "%y = sum(%a) axis=-2", "(2, 4)", NULL},
	{X3 "%y = sum(%a) axis=-3", "(3, 4)", NULL},
	{X3 "%y = sum(%a) axis=-1 keepdims=True", "(2, 3, 1)", NULL},
	{X3 "%y = max(%a) axis=0 keepdims=True", "(1, 3, 4)", NULL},
	{X3 "%y = mean(%a) axis=1 keepdims=False", "(2, 4)", NULL},
	{"%a = input() : (5,)\n%y = sum(%a) axis=0", "()", NULL},
	{"%a = input() : (5,)\n%y = sum(%a) axis=-1 keepdims=True", "(1,)", NULL},
	{"%a = input() : ()\n%y = sum(%a)", "()", NULL},
	{"%a = input() : ()\n%y = max(%a) keepdims=True", "()", NULL},
	{"%a = input() : (64, 32) f32\n%y = sum(%a) axis=1 keepdims=True", "(64, 1) f32", NULL},
	{"%a = input() : (1, 2, 3, 4)\n%y = mean(%a) axis=-4", "(2, 3, 4)", NULL},
	{X3 "%y = sum(%a) axis=3", NULL, "'sum' axis 3 is out of range for (2, 3, 4) (rank 3)"},
	{X3 "%y = max(%a) axis=-4", NULL, "'max' axis -4 is out of range for (2, 3, 4) (rank 3)"},
	{"%a = input() : ()\n%y = mean(%a) axis=0", NULL,
	 "'mean' axis 0 is out of range for () (rank 0)"},
	{"%a = input() : ()\n%y = sum(%a) axis=-1", NULL,
	 "'sum' axis -1 is out of range for () (rank 0)"},
	{X3 "%y = sum(%a) axis=9223372036854775807", NULL,
	 "'sum' axis 9223372036854775807 is out of range for (2, 3, 4) (rank 3)"},
	{X3 "%y = sum(%a) axis=-9223372036854775808", NULL,
	 "'sum' axis -9223372036854775808 is out of range for (2, 3, 4) (rank 3)"},
};

START_TEST(test_shape_reduce)
{
	run_case(&reduce[_i]);
}
END_TEST

/* Reductions over a tuple of axes, min and prod, argmax and argmin. */
static const Case reduce_axes[] = {
	{X3 "%y = sum(%a) axis=(0, 2)", "(3,)", NULL},
	{X3 "%y = max(%a) axis=(2, 0) keepdims=True", "(1, 3, 1)", NULL},
	{X3 "%y = mean(%a) axis=(-1, -2)", "(2,)", NULL},
	{X3 "%y = sum(%a) axis=(0, 1, 2)", "()", NULL},
	{X3 "%y = prod(%a) axis=(1,)", "(2, 4)", NULL},
	{X3 "%y = min(%a) axis=(0, -1) keepdims=True", "(1, 3, 1)", NULL},
	{X3 "%y = min(%a)", "()", NULL},
	{"%a = input() : (2, 3, 4) f32\n%y = prod(%a) keepdims=True", "(1, 1, 1) f32", NULL},
	{"%a = input() : (2, 1, 3, 1, 4, 1, 5, 6)\n%y = sum(%a) axis=(1, 3, 5, 7)",
	 "(2, 3, 4, 5)", NULL},
	{X3 "%y = sum(%a) axis=(0, 3)", NULL, "'sum' axis 3 is out of range for (2, 3, 4) (rank 3)"},
	{X3 "%y = min(%a) axis=(-4, 0)", NULL,
	 "'min' axis -4 is out of range for (2, 3, 4) (rank 3)"},
	{X3 "%y = prod(%a) axis=(1, 1)", NULL, "'prod' axis 1 is given twice"},
	{X3 "%y = sum(%a) axis=(0, 2, -3)", NULL, "'sum' axis -3 is given twice"},
	{"%a = input() : (2, 3) i32\n%y = mean(%a) axis=0", NULL,
	 "'mean' takes floats (f32 or f64), not i32"},
	{X3 "%y = argmax(%a)", "(3, 4) i64", NULL},
	{X3 "%y = argmax(%a) axis=1", "(2, 4) i64", NULL},
	{X3 "%y = argmin(%a) axis=-1 keepdims=True", "(2, 3, 1) i64", NULL},
	{X3 "%y = argmin(%a) axis=2 last=True", "(2, 3) i64", NULL},
	{"%a = input() : (5,) f32\n%y = argmax(%a)", "() i64", NULL},
	{"%a = input() : (5,) i32\n%y = argmax(%a) keepdims=True", "(1,) i64", NULL},
	{X3 "%y = argmax(%a) axis=3", NULL,
	 "'argmax' axis 3 is out of range for (2, 3, 4) (rank 3)"},
	{X3 "%y = argmin(%a) axis=-4", NULL,
	 "'argmin' axis -4 is out of range for (2, 3, 4) (rank 3)"},
	{"%a = input() : ()\n%y = argmax(%a)", NULL,
	 "'argmax' axis 0 is out of range for () (rank 0)"},
	{"%a = input() : (2,) bool\n%y = argmax(%a)", NULL,
	 "'argmax' takes numbers (f32, f64, i32 or i64), not bool"},
};

START_TEST(test_shape_reduce_axes)
{
	run_case(&reduce_axes[_i]);
}
END_TEST

/* A tuple axis= on argmax cannot be written (the parser refuses it), but a
 * pass could set one: the shape rule refuses it too, at the attribute. */
START_TEST(test_shape_argmax_tuple)
{
	char *msgs, err[IR_ERR_MAX];
	Graph *g = ck_parse("graph {\n%a = input() : (2, 3)\n%y = argmax(%a) axis=1\n}\n",
	    &msgs);
	const int64_t ax[2] = {0, 1};
	Type t;
	Loc at = {0};

	ck_assert_ptr_nonnull(g);
	free(msgs);
	ir_attr_set_ints(g, &g->nodes[1].at, ATTR_AXIS, ax, 2);
	ck_assert_int_ne(ir_infer_type(g, 1, &t, err, &at), 0);
	ck_assert_str_eq(err, "'argmax' takes one axis, axis=<int>, not a tuple");
	ck_assert_int_eq(at.line, 3);
	ir_graph_free(g);
}
END_TEST

/* ir_reduce_mask and ir_reduce_axis: the axes a reduction reduces. */
START_TEST(test_shape_reduce_mask)
{
	char *msgs;
	Graph *g = ck_parse("graph {\n%a = input() : (2, 3, 4, 5)\n"
	    "%s = sum(%a) axis=(-1, 1)\n%t = sum(%a) axis=2\n%u = sum(%a)\n"
	    "%v = max(%a) axis=(0, 1, 2, 3)\n}\n", &msgs);
	bool m[IR_MAX_RANK];

	ck_assert_ptr_nonnull(g);
	free(msgs);
	ck_assert_int_eq(ir_reduce_mask(&g->nodes[1], 4, m), 2);
	ck_assert(!m[0] && m[1] && !m[2] && m[3]);
	ck_assert_int_eq(ir_reduce_axis(&g->nodes[1], 4), -2);
	ck_assert_int_eq(ir_reduce_mask(&g->nodes[2], 4, m), 1);
	ck_assert(!m[0] && !m[1] && m[2] && !m[3]);
	ck_assert_int_eq(ir_reduce_axis(&g->nodes[2], 4), 2);
	ck_assert_int_eq(ir_reduce_mask(&g->nodes[3], 4, m), 4);
	ck_assert_int_eq(ir_reduce_axis(&g->nodes[3], 4), -1);
	ck_assert_int_eq(ir_reduce_mask(&g->nodes[4], 4, m), 4);
	ck_assert_int_eq(ir_reduce_axis(&g->nodes[4], 4), -1);
	ir_graph_free(g);
}
END_TEST

/* ---- matmul ----------------------------------------------------------- */

static const Case mm[] = {
	{"%a = input() : (2, 3)\n%b = input() : (3, 4)\n%y = matmul(%a, %b)", "(2, 4)", NULL},
	{"%a = input() : (1, 1)\n%b = input() : (1, 1)\n%y = matmul(%a, %b)", "(1, 1)", NULL},
	{"%a = input() : (64, 48) f32\n%b = input() : (48, 32) f32\n%y = matmul(%a, %b)",
	 "(64, 32) f32", NULL},
	{"%a = input() : (5, 2, 3)\n%b = input() : (5, 3, 4)\n%y = matmul(%a, %b)", "(5, 2, 4)",
	 NULL},
	{"%a = input() : (1, 7, 1)\n%b = input() : (1, 1, 9)\n%y = matmul(%a, %b)", "(1, 7, 9)",
	 NULL},
	{"%a = input() : (2, 3)\n%b = input() : (4, 5)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' cannot multiply (2, 3) by (4, 5): inner dimensions 3 and 4 differ"},
	{"%a = input() : (3, 2)\n%b = input() : (3, 2)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' cannot multiply (3, 2) by (3, 2): inner dimensions 2 and 3 differ"},
	{"%a = input() : (5, 2, 3)\n%b = input() : (5, 4, 4)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' cannot multiply (5, 2, 3) by (5, 4, 4): inner dimensions 3 and 4 differ"},
	{"%a = input() : (2, 2, 3)\n%b = input() : (3, 3, 4)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' batch dimensions differ: (2, 2, 3) x (3, 3, 4)"},
	/* numpy's rule: 1-D operands promoted and the added dim removed */
	{"%a = input() : (3,)\n%b = input() : (3,)\n%y = matmul(%a, %b)", "()", NULL},
	{"%a = input() : (3,)\n%b = input() : (3, 4)\n%y = matmul(%a, %b)", "(4,)", NULL},
	{"%a = input() : (2, 3)\n%b = input() : (3,)\n%y = matmul(%a, %b)", "(2,)", NULL},
	{"%a = input() : (3,)\n%b = input() : (5, 2, 3, 4)\n%y = matmul(%a, %b)", "(5, 2, 4)",
	 NULL},
	{"%a = input() : (5, 2, 4, 3)\n%b = input() : (3,)\n%y = matmul(%a, %b)", "(5, 2, 4)",
	 NULL},
	{"%a = input() : (4,)\n%b = input() : (3,)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' cannot multiply (4,) by (3,): inner dimensions 4 and 3 differ"},
	{"%a = input() : (2, 4)\n%b = input() : (3,)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' cannot multiply (2, 4) by (3,): inner dimensions 4 and 3 differ"},
	{"%a = input() : (4,)\n%b = input() : (2, 3, 5)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' cannot multiply (4,) by (2, 3, 5): inner dimensions 4 and 3 differ"},
	/* batch dims broadcast, ranks may differ */
	{"%a = input() : (2, 3)\n%b = input() : (2, 3, 4)\n%y = matmul(%a, %b)", "(2, 2, 4)",
	 NULL},
	{"%a = input() : (2, 2, 3)\n%b = input() : (3, 4)\n%y = matmul(%a, %b)", "(2, 2, 4)",
	 NULL},
	{"%a = input() : (1, 2, 2, 3)\n%b = input() : (1, 2, 3, 4)\n%y = matmul(%a, %b)",
	 "(1, 2, 2, 4)", NULL},
	{"%a = input() : (1, 2, 3) f32\n%b = input() : (5, 3, 4) f32\n%y = matmul(%a, %b)",
	 "(5, 2, 4) f32", NULL},
	{"%a = input() : (6, 1, 2, 3)\n%b = input() : (5, 3, 4)\n%y = matmul(%a, %b)",
	 "(6, 5, 2, 4)", NULL},
	{"%a = input() : (2, 1, 3, 1, 1, 1, 2, 3)\n%b = input() : (1, 1, 1, 7, 3, 4)\n"
	 "%y = matmul(%a, %b)", "(2, 1, 3, 1, 1, 7, 2, 4)", NULL},
	{"%a = input() : (3, 2, 2, 3)\n%b = input() : (2, 3, 4)\n%y = matmul(%a, %b)",
	 "(3, 2, 2, 4)", NULL},
	{"%a = input() : (3, 2, 2, 3)\n%b = input() : (3, 1, 3, 4)\n%y = matmul(%a, %b)",
	 "(3, 2, 2, 4)", NULL},
	{"%a = input() : (3, 2, 2, 3)\n%b = input() : (4, 3, 4)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' batch dimensions differ: (3, 2, 2, 3) x (4, 3, 4)"},
	{"%a = input() : (2, 5, 2, 3)\n%b = input() : (3, 5, 3, 4)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' batch dimensions differ: (2, 5, 2, 3) x (3, 5, 3, 4)"},
	{"%a = input() : ()\n%b = input() : ()\n%y = matmul(%a, %b)", NULL,
	 "'matmul' takes operands of rank 1 or more, not () x ()"},
	{"%a = input() : (2, 3)\n%b = input() : ()\n%y = matmul(%a, %b)", NULL,
	 "'matmul' takes operands of rank 1 or more, not (2, 3) x ()"},
	{"%a = input() : (1073741824, 1073741824, 4)\n%b = input() : (1073741824, 4, 1073741824)\n"
	 "%y = matmul(%a, %b)", NULL,
	 "'matmul' of (1073741824, 1073741824, 4) and (1073741824, 4, 1073741824) gives "
	 "(1073741824, 1073741824, 1073741824), which has more elements than a 64-bit count "
	 "holds"},
	{"%a = input() : (1073741824, 4)\n%b = input() : (4, 1073741824)\n%y = matmul(%a, %b)",
	 "(1073741824, 1073741824)", NULL},
	{"%a = input() : (2, 3) f32\n%b = input() : (3, 4)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' operands have different element types, f32 and f64 (no implicit promotion)"},
};

START_TEST(test_shape_matmul)
{
	run_case(&mm[_i]);
}
END_TEST

/* ---- layout ----------------------------------------------------------- */

static const Case transpose[] = {
	{"%a = input() : (2, 3)\n%y = transpose(%a)", "(3, 2)", NULL},
	{X3 "%y = transpose(%a)", "(2, 4, 3)", NULL},
	{"%a = input() : (1, 2, 3, 4)\n%y = transpose(%a)", "(1, 2, 4, 3)", NULL},
	{"%a = input() : (5,)\n%y = transpose(%a)", "(5,)", NULL},
	{"%a = input() : ()\n%y = transpose(%a)", "()", NULL},
	{"%a = input() : (2, 3) f32\n%y = transpose(%a) perm=(1, 0)", "(3, 2) f32", NULL},
	{"%a = input() : (2, 3)\n%y = transpose(%a) perm=(0, 1)", "(2, 3)", NULL},
	{X3 "%y = transpose(%a) perm=(2, 0, 1)", "(4, 2, 3)", NULL},
	{X3 "%y = transpose(%a) perm=(-1, 0, 1)", "(4, 2, 3)", NULL},
	{X3 "%y = transpose(%a) perm=(1, 0, 2)", "(3, 2, 4)", NULL},
	{"%a = input() : (1, 2, 3, 4)\n%y = transpose(%a) perm=(3, 2, 1, 0)", "(4, 3, 2, 1)",
	 NULL},
	{"%a = input() : (5,)\n%y = transpose(%a) perm=(0,)", "(5,)", NULL},
	{"%a = input() : ()\n%y = transpose(%a) perm=()", "()", NULL},
	{X3 "%y = transpose(%a) perm=(0, 0, 1)", NULL,
	 "'transpose' perm=(0, 0, 1) is not a permutation of the 3 axes of (2, 3, 4)"},
	{X3 "%y = transpose(%a) perm=(1, 0)", NULL,
	 "'transpose' perm=(1, 0) is not a permutation of the 3 axes of (2, 3, 4)"},
	{X3 "%y = transpose(%a) perm=(0, 1, 3)", NULL,
	 "'transpose' perm=(0, 1, 3) is not a permutation of the 3 axes of (2, 3, 4)"},
	{X3 "%y = transpose(%a) perm=(0, 1, -4)", NULL,
	 "'transpose' perm=(0, 1, -4) is not a permutation of the 3 axes of (2, 3, 4)"},
	{X3 "%y = transpose(%a) perm=(2, -1, 0)", NULL,
	 "'transpose' perm=(2, -1, 0) is not a permutation of the 3 axes of (2, 3, 4)"},
	{"%a = input() : (2, 3)\n%y = transpose(%a) perm=(0, 1, 2, 3)", NULL,
	 "'transpose' perm=(0, 1, 2, 3) is not a permutation of the 2 axes of (2, 3)"},
	{"%a = input() : ()\n%y = transpose(%a) perm=(0,)", NULL,
	 "'transpose' perm=(0,) is not a permutation of the 0 axes of ()"},
};

START_TEST(test_shape_transpose)
{
	run_case(&transpose[_i]);
}
END_TEST

static const Case reshape[] = {
	{X3 "%y = reshape(%a) shape=(24,)", "(24,)", NULL},
	{X3 "%y = reshape(%a) shape=(6, 4)", "(6, 4)", NULL},
	{X3 "%y = reshape(%a) shape=(-1,)", "(24,)", NULL},
	{X3 "%y = reshape(%a) shape=(2, -1)", "(2, 12)", NULL},
	{X3 "%y = reshape(%a) shape=(-1, 4, 3)", "(2, 4, 3)", NULL},
	{X3 "%y = reshape(%a) shape=(1, 2, -1, 1)", "(1, 2, 12, 1)", NULL},
	{"%a = input() : (1, 1)\n%y = reshape(%a) shape=()", "()", NULL},
	{"%a = input() : ()\n%y = reshape(%a) shape=(1, 1, 1, 1)", "(1, 1, 1, 1)", NULL},
	{"%a = input() : ()\n%y = reshape(%a) shape=(-1,)", "(1,)", NULL},
	{"%a = input() : (6,) f32\n%y = reshape(%a) shape=(3, 2)", "(3, 2) f32", NULL},
	{X3 "%y = reshape(%a) shape=(5, 5)", NULL,
	 "'reshape' cannot make (5, 5) of (2, 3, 4): 24 elements"},
	{X3 "%y = reshape(%a) shape=(25,)", NULL,
	 "'reshape' cannot make (25,) of (2, 3, 4): 24 elements"},
	{X3 "%y = reshape(%a) shape=(-1, 5)", NULL,
	 "'reshape' cannot make (-1, 5) of (2, 3, 4): 24 elements"},
	{X3 "%y = reshape(%a) shape=(-1, 48)", NULL,
	 "'reshape' cannot make (-1, 48) of (2, 3, 4): 24 elements"},
	{X3 "%y = reshape(%a) shape=()", NULL, "'reshape' cannot make () of (2, 3, 4): 24 elements"},
	{X3 "%y = reshape(%a) shape=(-1, -1)", NULL,
	 "'reshape' shape=(-1, -1): a dimension must be positive, or one -1 to infer"},
	{X3 "%y = reshape(%a) shape=(0, 24)", NULL,
	 "'reshape' shape=(0, 24): a dimension must be positive, or one -1 to infer"},
	{X3 "%y = reshape(%a) shape=(-2, -12)", NULL,
	 "'reshape' shape=(-2, -12): a dimension must be positive, or one -1 to infer"},
	{"%a = input() : (2,)\n%y = reshape(%a) shape=(4611686018427387904, "
	 "4611686018427387904)", NULL,
	 "'reshape' cannot make (4611686018427387904, 4611686018427387904) of (2,): 2 elements"},
	{"%a = input() : (2,)\n%y = reshape(%a) shape=(-1, 4611686018427387904, 4)", NULL,
	 "'reshape' cannot make (-1, 4611686018427387904, 4) of (2,): 2 elements"},
};

START_TEST(test_shape_reshape)
{
	run_case(&reshape[_i]);
}
END_TEST

/* ---- conv2d and the pools ---------------------------------------------- */

#define XW "%x = input() : (2, 4, 9, 7) f32\n%w = input() : (6, 4, 3, 3) f32\n"
#define XP "%x = input() : (2, 3, 9, 9)\n"

static const Case window[] = {
	{XW "%y = conv2d(%x, %w)", "(2, 6, 7, 5) f32", NULL},
	{XW "%b = input() : (6,) f32\n%y = conv2d(%x, %w, %b)", "(2, 6, 7, 5) f32", NULL},
	{XW "%y = conv2d(%x, %w) pads=(1, 1, 1, 1)", "(2, 6, 9, 7) f32", NULL},
	{XW "%y = conv2d(%x, %w) strides=(2, 3) pads=(1, 0, 1, 2)", "(2, 6, 5, 3) f32", NULL},
	{XW "%y = conv2d(%x, %w) dilations=(2, 3)", "(2, 6, 5, 1) f32", NULL},
	{XW "%y = conv2d(%x, %w) strides=(1, 1) pads=(0, 0, 0, 0) dilations=(1, 1) groups=1",
	 "(2, 6, 7, 5) f32", NULL},
	{"%x = input() : (1, 4, 5, 5)\n%w = input() : (6, 2, 1, 1)\n"
	 "%y = conv2d(%x, %w) groups=2", "(1, 6, 5, 5)", NULL},
	{"%x = input() : (1, 8, 5, 5)\n%w = input() : (8, 1, 3, 3)\n"
	 "%y = conv2d(%x, %w) groups=8 pads=(1, 1, 1, 1)", "(1, 8, 5, 5)", NULL},
	{"%x = input() : (1, 1, 3, 3)\n%w = input() : (1, 1, 3, 3)\n%y = conv2d(%x, %w)",
	 "(1, 1, 1, 1)", NULL},
	{"%x = input() : (1, 1, 1, 1)\n%w = input() : (1, 1, 3, 3)\n"
	 "%y = conv2d(%x, %w) pads=(1, 1, 1, 1)", "(1, 1, 1, 1)", NULL},
	{XP "%y = max_pool2d(%x) kernel=(3, 3)", "(2, 3, 7, 7)", NULL},
	{XP "%y = max_pool2d(%x) kernel=(3, 3) strides=(2, 2)", "(2, 3, 4, 4)", NULL},
	{XP "%y = avg_pool2d(%x) kernel=(2, 2) strides=(2, 2)", "(2, 3, 4, 4)", NULL},
	{XP "%y = avg_pool2d(%x) kernel=(2, 2) strides=(2, 2) ceil_mode=True", "(2, 3, 5, 5)",
	 NULL},
	{XP "%y = max_pool2d(%x) kernel=(3, 3) strides=(2, 2) pads=(1, 1, 1, 1)", "(2, 3, 5, 5)",
	 NULL},
	{XP "%y = max_pool2d(%x) kernel=(2, 3) dilations=(3, 2) pads=(0, 1, 2, 0)",
	 "(2, 3, 8, 6)", NULL},
	/* 1 + ceil((3 + 1 + 1 - 2) / 2) = 3, but the third window would start
	 * at 4 - 1 = 3, past the input and its left pad: dropped */
	{"%x = input() : (1, 1, 3, 3)\n"
	 "%y = avg_pool2d(%x) kernel=(2, 2) strides=(2, 2) pads=(1, 1, 1, 1) ceil_mode=True",
	 "(1, 1, 2, 2)", NULL},
	{"%x = input() : (1, 1, 3, 3)\n"
	 "%y = avg_pool2d(%x) kernel=(2, 2) strides=(2, 2) pads=(1, 1, 1, 1)", "(1, 1, 2, 2)", NULL},
	/* kept: the last window starts at 6 - 1 = 5, inside */
	{"%x = input() : (1, 1, 6, 6) f32\n"
	 "%y = max_pool2d(%x) kernel=(3, 3) strides=(2, 2) pads=(1, 1, 1, 1) ceil_mode=True",
	 "(1, 1, 4, 4) f32", NULL},
	{XP "%y = max_pool2d(%x) kernel=(9, 9)", "(2, 3, 1, 1)", NULL},
	/* no rounding up (span 7 % 1 == 0), yet the 8th window would start at
	 * 7, in the right pad: dropped as well */
	{"%x = input() : (1, 1, 7, 7)\n"
	 "%y = max_pool2d(%x) kernel=(1, 1) pads=(0, 0, 1, 1) ceil_mode=True", "(1, 1, 7, 7)", NULL},
	{"%x = input() : (1, 1, 7, 7)\n"
	 "%y = max_pool2d(%x) kernel=(1, 1) pads=(0, 0, 1, 1)", "(1, 1, 8, 8)", NULL},
	/* errors */
	{"%x = input() : (4, 9, 7)\n%w = input() : (6, 4, 3, 3)\n%y = conv2d(%x, %w)", NULL,
	 "'conv2d' x is (4, 9, 7); it must be (N, C, H, W), rank 4"},
	{"%x = input() : (3, 9)\n%y = max_pool2d(%x) kernel=(2, 2)", NULL,
	 "'max_pool2d' x is (3, 9); it must be (N, C, H, W), rank 4"},
	{"%x = input() : (1, 4, 9, 7)\n%w = input() : (4, 3, 3)\n%y = conv2d(%x, %w)", NULL,
	 "'conv2d' w is (4, 3, 3); it must be (F, C/groups, KH, KW), rank 4"},
	{XW "%y = conv2d(%x, %w) pads=(1, 1)", NULL,
	 "'conv2d' pads=(1, 1) has 2 entries; it takes 4, (top, left, bottom, right)"},
	{XP "%y = avg_pool2d(%x) kernel=(3, 3) pads=(1,)", NULL,
	 "'avg_pool2d' pads=(1,) has 1 entry; it takes 4, (top, left, bottom, right)"},
	{XW "%y = conv2d(%x, %w) pads=(1, -1, 1, 1)", NULL,
	 "'conv2d' pads=(1, -1, 1, 1): every entry must be 0 or more"},
	{XW "%y = conv2d(%x, %w) strides=(1, 0)", NULL,
	 "'conv2d' strides=(1, 0): every entry must be positive"},
	{XP "%y = max_pool2d(%x) kernel=(3, 3) strides=(-2, 2)", NULL,
	 "'max_pool2d' strides=(-2, 2): every entry must be positive"},
	{XP "%y = max_pool2d(%x) kernel=(3, 3) strides=(2, 2, 2)", NULL,
	 "'max_pool2d' strides=(2, 2, 2) has 3 entries; it takes 2, (sh, sw)"},
	{XW "%y = conv2d(%x, %w) dilations=(0, 1)", NULL,
	 "'conv2d' dilations=(0, 1): every entry must be positive"},
	{XP "%y = max_pool2d(%x) kernel=(3,)", NULL,
	 "'max_pool2d' kernel=(3,) has 1 entry; it takes 2, (kh, kw)"},
	{XP "%y = max_pool2d(%x) kernel=(0, 3)", NULL,
	 "'max_pool2d' kernel=(0, 3): every entry must be positive"},
	{XW "%y = conv2d(%x, %w) groups=3", NULL,
	 "'conv2d' groups=3 does not divide C=4, the channels of x (2, 4, 9, 7)"},
	{XW "%y = conv2d(%x, %w) groups=0", NULL, "'conv2d' groups=0 must be positive"},
	{XW "%y = conv2d(%x, %w) groups=2", NULL,
	 "'conv2d' w (6, 4, 3, 3) has 4 channels; x (2, 4, 9, 7) with groups=2 needs "
	 "C/groups = 2"},
	{"%x = input() : (1, 4, 5, 5)\n%w = input() : (6, 1, 1, 1)\n%y = conv2d(%x, %w) groups=4",
	 NULL, "'conv2d' groups=4 does not divide F=6, the filters of w (6, 1, 1, 1)"},
	{XW "%b = input() : (4,) f32\n%y = conv2d(%x, %w, %b)", NULL,
	 "'conv2d' bias is (4,); it must be (F,) = (6,), one per filter of w (6, 4, 3, 3)"},
	{XW "%b = input() : (1, 6) f32\n%y = conv2d(%x, %w, %b)", NULL,
	 "'conv2d' bias is (1, 6); it must be (F,) = (6,), one per filter of w (6, 4, 3, 3)"},
	{XW "%b = input() : (6,)\n%y = conv2d(%x, %w, %b)", NULL,
	 "'conv2d' operands have different element types, f32 and f64 (no implicit promotion)"},
	{"%x = input() : (1, 4, 2, 7)\n%w = input() : (6, 4, 3, 3)\n%y = conv2d(%x, %w)", NULL,
	 "'conv2d' kernel (3, 3), dilated by (1, 1), is larger than the padded input: H is "
	 "2 + 0 + 0"},
	{XW "%y = conv2d(%x, %w) dilations=(1, 4)", NULL,
	 "'conv2d' kernel (3, 3), dilated by (1, 4), is larger than the padded input: W is "
	 "7 + 0 + 0"},
	{XP "%y = max_pool2d(%x) kernel=(10, 3) pads=(0, 0, 0, 0)", NULL,
	 "'max_pool2d' kernel=(10, 3), dilated by (1, 1), is larger than the padded input: H is "
	 "9 + 0 + 0"},
	{XP "%y = avg_pool2d(%x) kernel=(3, 12) pads=(0, 1, 0, 1)", NULL,
	 "'avg_pool2d' kernel=(3, 12), dilated by (1, 1), is larger than the padded input: W is "
	 "9 + 1 + 1"},
	{XP "%y = max_pool2d(%x) kernel=(2, 2) pads=(9223372036854775807, 0, 1, 0)", NULL,
	 "'max_pool2d' kernel=(2, 2), dilated by (1, 1), is larger than the padded input: H is "
	 "9 + 9223372036854775807 + 1"},
	{"%x = input() : (1, 1, 4, 4) i32\n%y = max_pool2d(%x) kernel=(2, 2)", NULL,
	 "'max_pool2d' takes floats (f32 or f64), not i32"},
};

START_TEST(test_shape_window)
{
	run_case(&window[_i]);
}
END_TEST

/* ---- the copy ops (shape_copy.c) ------------------------------------- */

#define A23 "%a = input() : (2, 3)\n"
#define A45 "%a = input() : (4, 5) f32\n"

static const Case copy[] = {
	/* concat: variadic, any axis, negative axes, one operand */
	{A23 "%b = input() : (2, 5)\n%y = concat(%a, %b) axis=1", "(2, 8)", NULL},
	{A23 "%b = input() : (4, 3)\n%c = input() : (1, 3)\n%y = concat(%a, %b, %c) axis=-2",
	 "(7, 3)", NULL},
	{A23 "%y = concat(%a) axis=0", "(2, 3)", NULL},
	{A23 "%b = input() : (2, 3)\n%y = concat(%a, %b) axis=2", NULL,
	 "'concat' axis 2 is out of range for (2, 3) (rank 2)"},
	{A23 "%b = input() : (3, 3)\n%y = concat(%a, %b) axis=1", NULL,
	 "'concat' along axis 1 cannot join (2, 3) and (3, 3): every other dimension must be "
	 "equal"},
	{A23 "%b = input() : (2, 3, 1)\n%y = concat(%a, %b) axis=0", NULL,
	 "'concat' along axis 0 cannot join (2, 3) and (2, 3, 1): every other dimension must "
	 "be equal"},
	{"%a = input() : ()\n%y = concat(%a, %a) axis=0", NULL,
	 "'concat' cannot join rank-0 operands; they have no axis"},
	{A23 "%b = input() : (2, 3) f32\n%y = concat(%a, %b) axis=0", NULL,
	 "'concat' operands have different element types, f64 and f32 (no implicit promotion)"},
	/* slice: ONNX's defaults, negative indices, clamping, negative steps */
	{A45 "%y = slice(%a) starts=(1,) ends=(3,)", "(2, 5) f32", NULL},
	{A45 "%y = slice(%a) starts=(0, 1) ends=(4, 5) steps=(2, 3)", "(2, 2) f32", NULL},
	{A45 "%y = slice(%a) starts=(-2,) ends=(100,) axes=(1,)", "(4, 2) f32", NULL},
	{A45 "%y = slice(%a) starts=(-1,) ends=(-100,) axes=(-1,) steps=(-1,)", "(4, 5) f32",
	 NULL},
	{A45 "%y = slice(%a) starts=(9223372036854775807,) ends=(-9223372036854775807,) "
	 "steps=(-2,)", "(2, 5) f32", NULL},
	{A45 "%y = slice(%a) starts=(3, 4) ends=(0, 0) axes=(1, 0) steps=(-1, -3)", "(1, 3) f32",
	 NULL},
	{A45 "%y = slice(%a) starts=(2,) ends=(2,)", NULL,
	 "'slice' selects nothing along axis 0 of (4, 5) (start 2, end 2, step 1): a "
	 "dimension must be positive"},
	{A45 "%y = slice(%a) starts=(0,) ends=(3,) steps=(-1,)", NULL,
	 "'slice' selects nothing along axis 0 of (4, 5) (start 0, end 3, step -1): a "
	 "dimension must be positive"},
	{A45 "%y = slice(%a) starts=(0,) ends=(3,) steps=(0,)", NULL,
	 "'slice' step 0 is 0; a step must not be 0"},
	{A45 "%y = slice(%a) starts=(0, 0) ends=(3, 3) axes=(1, -1)", NULL,
	 "'slice' axes names axis 1 twice"},
	{A45 "%y = slice(%a) starts=(0, 0) ends=(3,)", NULL,
	 "'slice' ends has 1 entries but starts has 2"},
	{A45 "%y = slice(%a) starts=(0,) ends=(3,) axes=(0, 1)", NULL,
	 "'slice' axes has 2 entries but starts has 1"},
	{A45 "%y = slice(%a) starts=(0,) ends=(3,) steps=(1, 1)", NULL,
	 "'slice' steps has 2 entries but starts has 1"},
	{A45 "%y = slice(%a) starts=(0,) ends=(3,) axes=(2,)", NULL,
	 "'slice' axis 2 is out of range for (4, 5) (rank 2)"},
	{A45 "%y = slice(%a) starts=(0, 0, 0) ends=(1, 1, 1)", NULL,
	 "'slice' starts has 3 entries; (4, 5) has rank 2"},
	/* pad: ONNX order, negative pads crop */
	{A23 "%y = pad(%a) pads=(1, 2, 3, 4)", "(6, 9)", NULL},
	{A23 "%y = pad(%a) pads=(0, -1, 0, -1) value=2.5", "(2, 1)", NULL},
	{"%a = input() : (3,) i64\n%y = pad(%a) pads=(2, 0) value=-7", "(5,) i64", NULL},
	{A23 "%y = pad(%a) pads=(1, 1, 1)", NULL,
	 "'pad' pads has 3 entries; a rank-2 operand takes 4 (all begins, then all ends)"},
	{A23 "%y = pad(%a) pads=(0, -2, 0, -1)", NULL,
	 "'pad' pads=(0, -2, 0, -1) gives axis 1 of (2, 3) a size of 0; it must be from 1 to "
	 "1073741824"},
	{A23 "%y = pad(%a) pads=(0, -4, 0, 5)", NULL,
	 "'pad' pads=(0, -4, 0, 5) gives axis 1 of (2, 3) a size of 0; it must be from 1 to "
	 "1073741824"},
	/* gather: numpy take */
	{"%a = input() : (5, 4, 3)\n%i = input() : (2, 7) i64\n%y = gather(%a, %i) axis=1",
	 "(5, 2, 7, 3)", NULL},
	{"%a = input() : (5, 4) f32\n%i = input() : () i32\n%y = gather(%a, %i)", "(4,) f32",
	 NULL},
	{"%a = input() : (5, 4)\n%i = input() : (3,) i64\n%y = gather(%a, %i) axis=-1",
	 "(5, 3)", NULL},
	{"%a = input() : (5, 4)\n%i = input() : (3,) i64\n%y = gather(%a, %i) axis=2", NULL,
	 "'gather' axis 2 is out of range for (5, 4) (rank 2)"},
	{"%a = input() : (5, 4)\n%i = input() : (3,) f32\n%y = gather(%a, %i)", NULL,
	 "'gather' indices are f32; they must be i32 or i64"},
	{"%a = input() : ()\n%i = input() : (3,) i64\n%y = gather(%a, %i)", NULL,
	 "'gather' cannot index a rank-0 operand"},
	{"%a = input() : (2, 2, 2)\n%i = input() : (1, 1, 1, 1, 1, 1, 1) i64\n"
	 "%y = gather(%a, %i)", NULL,
	 "'gather' of (2, 2, 2) by indices (1, 1, 1, 1, 1, 1, 1) would have rank 9; the most "
	 "is 8"},
	/* expand: np.broadcast_shapes */
	{A23 "%y = expand(%a) shape=(4, 1, 3)", "(4, 2, 3)", NULL},
	{A23 "%y = expand(%a) shape=(1,)", "(2, 3)", NULL},
	{"%a = input() : (2, 1) f32\n%y = expand(%a) shape=(2, 6)", "(2, 6) f32", NULL},
	{A23 "%y = expand(%a) shape=(2, 4)", NULL, "'expand' cannot broadcast (2, 3) to "
	 "shape=(2, 4)"},
	{A23 "%y = expand(%a) shape=(0, 3)", NULL, "'expand' shape=(0, 3): every dimension "
	 "must be from 1 to 1073741824"},
};

START_TEST(test_shape_copy)
{
	run_case(&copy[_i]);
}
END_TEST

/* ---- the pass --------------------------------------------------------- */

/* Runs shape-infer on src; returns its result, *msgs its diagnostics and
 * *out the printed graph (NULL when parsing failed). */
static int
infer_pass(const char *src, char **msgs, char **out)
{
	size_t n = 0;
	FILE *f = open_memstream(msgs, &n);
	const Pass *p = pass_lookup(aicm_passes, "shape-infer");
	PassVal vals[1] = {{0}};
	PassArgs a = {p->opts, vals, NULL, false, NULL};
	char *pm;
	Graph *g = ck_parse(src, &pm);
	Diag d;
	int rc;

	ck_assert_msg(g != NULL, "%s", pm);
	free(pm);
	diag_init(&d, "t.aicm", src, strlen(src), f);
	rc = p->run(g, &a, &d);
	ck_assert_int_eq(rc != 0, d.nerr > 0);
	if (rc == 0)
		ck_assert_int_eq(ir_verify(g, &d), 0);
	diag_free(&d);
	fclose(f);
	*out = ir_print_str(g, NULL);
	ir_graph_free(g);
	return rc;
}

START_TEST(test_shape_pass_fills_seed)
{
	char *msgs, *out;
	int rc = infer_pass(ck_seed_text, &msgs, &out);

	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(msgs, "");
	ck_assert_str_eq(out, "graph {\n"
	    "  %x = input() : (64, 48)\n"
	    "  %W = const() : (48, 32)\n"
	    "  %bias = const() : (32,)\n"
	    "  %mm = matmul(%x, %W) : (64, 32)\n"
	    "  %bias_add = add(%mm, %bias) : (64, 32)\n"
	    "  %relu = relu(%bias_add) : (64, 32)\n"
	    "  %rowsum = sum(%relu) : (64, 1) axis=1 keepdims=True\n"
	    "}\n");
	free(msgs);
	free(out);
}
END_TEST

START_TEST(test_shape_pass_checks_written)
{
	/* %y is untyped, so the verifier cannot check %z; the pass can. */
	char *msgs, *out;
	int rc = infer_pass("graph {\n"
	    "  %x = input() : (2, 3)\n"
	    "  %y = relu(%x)\n"
	    "  %z = neg(%y) : (3, 2)\n"
	    "  %w = exp(%z)\n"
	    "}\n", &msgs, &out);

	ck_assert_int_eq(rc, -1);
	ck_assert_str_eq(msgs,
	    "t.aicm:4:18: error: 'neg' result type (3, 2) does not match (2, 3), inferred "
	    "from operand (2, 3)\n"
	    "    %z = neg(%y) : (3, 2)\n"
	    "                   ^~~~~~\n");
	/* The bad type is dropped, so its user stays untyped and quiet. */
	ck_assert_ptr_nonnull(strstr(out, "  %w = exp(%z)\n"));
	free(msgs);
	free(out);
}
END_TEST

START_TEST(test_shape_pass_error_place)
{
	char *msgs, *out;
	int rc = infer_pass("graph {\n"
	    "  %mm = input() : (64, 32)\n"
	    "  %bias = const() : (16,)\n"
	    "  %bias_add = add(%mm, %bias)\n"
	    "}\n", &msgs, &out);

	ck_assert_int_eq(rc, -1);
	ck_assert_str_eq(msgs,
	    "t.aicm:4:24: error: 'add' cannot broadcast (64, 32) with (16,)\n"
	    "    %bias_add = add(%mm, %bias)\n"
	    "                         ^~~~~\n");
	free(msgs);
	free(out);
}
END_TEST

START_TEST(test_shape_pass_error_places_by_rule)
{
	static const struct {
		const char *src, *where;
	} c[] = {
		{"graph {\n %a = input() : (2, 3)\n %y = sum(%a) axis=2\n}\n", "t.aicm:3:15: "},
		{"graph {\n %a = input() : (2, 3)\n %y = matmul(%a, %a)\n}\n", "t.aicm:3:18: "},
		{"graph {\n %a = input() : ()\n %y = matmul(%a, %a)\n}\n", "t.aicm:3:14: "},
		{"graph {\n %a = input() : (2, 3)\n %y = transpose(%a) perm=(0, 0)\n}\n",
		 "t.aicm:3:21: "},
		{"graph {\n %a = input() : (2, 3)\n %y = reshape(%a) shape=(5,)\n}\n",
		 "t.aicm:3:19: "},
		{"graph {\n %a = input() : (2, 3)\n %b = input() : (2, 3) f32\n"
		 " %y = add(%a, %b)\n}\n", "t.aicm:4:15: "},
	};

	for (int i = 0; i < N(c); i++) {
		char *msgs, *out;

		ck_assert_int_eq(infer_pass(c[i].src, &msgs, &out), -1);
		ck_assert_msg(!strncmp(msgs, c[i].where, strlen(c[i].where)), "%s\nwant %s", msgs,
		    c[i].where);
		free(msgs);
		free(out);
	}
}
END_TEST

START_TEST(test_shape_pass_quiet_after_error)
{
	/* One error at the root cause; its users stay untyped and silent, an
	 * independent error is still reported. */
	char *msgs, *out;
	int rc = infer_pass("graph {\n"
	    "  %a = input() : (2, 3)\n"
	    "  %b = input() : (4,)\n"
	    "  %c = add(%a, %b)\n"
	    "  %d = relu(%c)\n"
	    "  %e = sum(%d) axis=0\n"
	    "  %f = matmul(%a, %a)\n"
	    "  %g = neg(%a)\n"
	    "}\n", &msgs, &out);
	int n = 0;

	ck_assert_int_eq(rc, -1);
	for (const char *p = msgs; (p = strstr(p, ": error: ")); p++)
		n++;
	ck_assert_int_eq(n, 2);
	ck_assert_ptr_nonnull(strstr(msgs, "'add' cannot broadcast (2, 3) with (4,)"));
	ck_assert_ptr_nonnull(strstr(msgs, "'matmul' cannot multiply (2, 3) by (2, 3)"));
	ck_assert_ptr_nonnull(strstr(out, "  %d = relu(%c)\n"));
	ck_assert_ptr_nonnull(strstr(out, "  %g = neg(%a) : (2, 3)\n"));
	free(msgs);
	free(out);
}
END_TEST

START_TEST(test_shape_pass_keeps_f32)
{
	char *msgs, *out;
	int rc = infer_pass("graph {\n"
	    "  %a = input() : (4, 3) f32\n"
	    "  %w = const() : (3, 2) f32\n"
	    "  %m = matmul(%a, %w)\n"
	    "  %t = transpose(%m)\n"
	    "  %r = reshape(%t) shape=(-1,)\n"
	    "  %s = mean(%r) keepdims=True\n"
	    "}\n", &msgs, &out);

	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(out, "graph {\n"
	    "  %a = input() : (4, 3) f32\n"
	    "  %w = const() : (3, 2) f32\n"
	    "  %m = matmul(%a, %w) : (4, 2) f32\n"
	    "  %t = transpose(%m) : (2, 4) f32\n"
	    "  %r = reshape(%t) : (8,) f32 shape=(-1,)\n"
	    "  %s = mean(%r) : (1,) f32 keepdims=True\n"
	    "}\n");
	free(msgs);
	free(out);
}
END_TEST

START_TEST(test_shape_pass_idempotent)
{
	char *msgs, *out, *msgs2, *out2;

	ck_assert_int_eq(infer_pass("graph {\n %a = input() : (2, 3)\n %b = exp(%a)\n"
	    " %c = sum(%b) axis=-1\n}\n", &msgs, &out), 0);
	ck_assert_int_eq(infer_pass(out, &msgs2, &out2), 0);
	ck_assert_str_eq(out2, out);
	ck_assert_str_eq(msgs2, "");
	free(msgs);
	free(out);
	free(msgs2);
	free(out2);
}
END_TEST

Suite *
make_shape_suite(void)
{
	Suite *s = suite_create("shape");
	TCase *tc;

	tc = tcase_create("elementwise");
	tcase_add_loop_test(tc, test_shape_unary, 0, N(unary));
	tcase_add_loop_test(tc, test_shape_broadcast, 0, N(bcast));
	tcase_add_loop_test(tc, test_shape_elementwise_types, 0, N(elem));
	tcase_add_test(tc, test_shape_cast_needs_to);
	suite_add_tcase(s, tc);

	tc = tcase_create("reduction");
	tcase_add_loop_test(tc, test_shape_reduce, 0, N(reduce));
	tcase_add_loop_test(tc, test_shape_reduce_axes, 0, N(reduce_axes));
	tcase_add_test(tc, test_shape_argmax_tuple);
	tcase_add_test(tc, test_shape_reduce_mask);
	suite_add_tcase(s, tc);

	tc = tcase_create("matmul");
	tcase_add_loop_test(tc, test_shape_matmul, 0, N(mm));
	suite_add_tcase(s, tc);

	tc = tcase_create("transpose");
	tcase_add_loop_test(tc, test_shape_transpose, 0, N(transpose));
	suite_add_tcase(s, tc);

	tc = tcase_create("reshape");
	tcase_add_loop_test(tc, test_shape_reshape, 0, N(reshape));
	tcase_add_loop_test(tc, test_shape_copy, 0, N(copy));
	suite_add_tcase(s, tc);

	tc = tcase_create("window");
	tcase_add_loop_test(tc, test_shape_window, 0, N(window));
	suite_add_tcase(s, tc);

	tc = tcase_create("pass");
	tcase_add_test(tc, test_shape_pass_fills_seed);
	tcase_add_test(tc, test_shape_pass_checks_written);
	tcase_add_test(tc, test_shape_pass_error_place);
	tcase_add_test(tc, test_shape_pass_error_places_by_rule);
	tcase_add_test(tc, test_shape_pass_quiet_after_error);
	tcase_add_test(tc, test_shape_pass_keeps_f32);
	tcase_add_test(tc, test_shape_pass_idempotent);
	suite_add_tcase(s, tc);
	return s;
}
