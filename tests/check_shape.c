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
		if (t.dt == DT_F32)
			strcat(got, " f32");
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
	{"%a = input() : (1, 2, 3)\n%b = input() : (5, 3, 4)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' batch dimensions differ: (1, 2, 3) x (5, 3, 4)"},
	{"%a = input() : (3,)\n%b = input() : (3,)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' takes (M, K) x (K, N) or (B, M, K) x (B, K, N), not (3,) x (3,)"},
	{"%a = input() : (2, 3)\n%b = input() : (2, 3, 4)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' takes (M, K) x (K, N) or (B, M, K) x (B, K, N), not (2, 3) x (2, 3, 4)"},
	{"%a = input() : (2, 2, 3)\n%b = input() : (3, 4)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' takes (M, K) x (K, N) or (B, M, K) x (B, K, N), not (2, 2, 3) x (3, 4)"},
	{"%a = input() : (1, 2, 2, 3)\n%b = input() : (1, 2, 3, 4)\n%y = matmul(%a, %b)", NULL,
	 "'matmul' takes (M, K) x (K, N) or (B, M, K) x (B, K, N), "
	 "not (1, 2, 2, 3) x (1, 2, 3, 4)"},
	{"%a = input() : ()\n%b = input() : ()\n%y = matmul(%a, %b)", NULL,
	 "'matmul' takes (M, K) x (K, N) or (B, M, K) x (B, K, N), not () x ()"},
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
	{"%a = input() : (3,) i64\n%y = pad(%a) pads=(2, 0) value=-7", "(5,)", NULL},
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
	int rc = infer_pass("graph {\n"
	    "  %x = input() : (64, 48)\n"
	    "  %W = const() : (48, 32)\n"
	    "  %bias = const() : (32,)\n"
	    "  %mm = matmul(%x, %W)\n"
	    "  %bias_add = add(%mm, %bias)\n"
	    "  %relu = relu(%bias_add)\n"
	    "  %rowsum = sum(%relu) axis=1 keepdims=True\n"
	    "}\n", &msgs, &out);

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
		{"graph {\n %a = input() : (3,)\n %y = matmul(%a, %a)\n}\n", "t.aicm:3:7: "},
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
	suite_add_tcase(s, tc);

	tc = tcase_create("reduction");
	tcase_add_loop_test(tc, test_shape_reduce, 0, N(reduce));
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
