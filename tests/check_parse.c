/*
 * check_parse.c: the scanner and the grammar (DESIGN §2).
 *
 * Each test parses a small text and looks at the graph it builds, or at the
 * exact diagnostic it gives: every token kind, both brace styles, comments,
 * the type syntax ((32) and (32,), rank 0, f32/f64), every attribute kind,
 * kernel blocks and return.  Parsing goes through parse_graph alone (no
 * verifier), so that what is tested is the front end's own judgement; the
 * error table checks place and wording of every parse-time message.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "parse.h"

/* Parses src as t.aicm; *msgs gets every diagnostic (malloc'd). */
static Graph *
parse(const char *src, char **msgs)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	Diag d;
	Graph *g;

	diag_init(&d, "t.aicm", src, strlen(src), f);
	g = parse_graph(src, strlen(src), 1, &d);
	diag_free(&d);
	fclose(f);
	if (msgs)
		*msgs = buf;
	else
		free(buf);
	return g;
}

/* Parses src, which must be accepted with no message at all. */
static Graph *
parse_ok(const char *src)
{
	char *msgs;
	Graph *g = parse(src, &msgs);

	ck_assert_msg(g != NULL, "rejected:\n%s\n--- messages:\n%s", src, msgs);
	ck_assert_msg(msgs[0] == '\0', "messages for a good input:\n%s", msgs);
	free(msgs);
	return g;
}

static const Node *
node(const Graph *g, const char *name)
{
	int i = ir_lookup(g, name);

	ck_assert_msg(i >= 0, "no value '%s'", name);
	return &g->nodes[i];
}

/* ---- tokens ----------------------------------------------------------- */

START_TEST(test_lex_keywords_and_punctuation)
{
	/* graph, '@name', '{', value names, '=', identifiers, '(', ')', ',',
	 * ':', integers, kernel, '[', ']', return, '}': all in one graph. */
	Graph *g = parse_ok("graph @all{%x=input():(2,3)%W=const():(3,4)"
	    "kernel @k0[matmul]BM=16{%mm=matmul(%x,%W)}return %mm}");

	ck_assert_str_eq(g->name, "all");
	ck_assert_int_eq(g->nnodes, 3);
	ck_assert_int_eq(g->nkernels, 1);
	ck_assert_str_eq(g->kernels[0].name, "k0");
	ck_assert_int_eq(g->kernels[0].kind, KK_MATMUL);
	ck_assert_int_eq(g->kernels[0].kattr[KA_BM], 16);
	ck_assert_int_eq(g->nret, 1);
	ck_assert_int_eq(g->ret[0], 2);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_lex_value_names)
{
	Graph *g = parse_ok("graph {\n"
	    "  %0 = input() : (2,)\n"
	    "  %_a.b.3 = relu(%0)\n"
	    "  %A9 = neg(%_a.b.3)\n"
	    "  %123 = abs(%A9)\n"
	    "}\n");

	ck_assert_int_eq(ir_lookup(g, "0"), 0);
	ck_assert_int_eq(ir_lookup(g, "_a.b.3"), 1);
	ck_assert_int_eq(ir_lookup(g, "A9"), 2);
	ck_assert_int_eq(node(g, "123")->in[0], 2);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_lex_keyword_prefix_is_an_identifier)
{
	/* 'graphs' and 'returned' are words, not keywords followed by junk. */
	char *msgs;
	Graph *g = parse("graph { %x = input() : (2,) returned=1 }", &msgs);

	ck_assert_ptr_null(g);
	ck_assert_str_eq(msgs,
	    "t.aicm:1:29: error: 'input' has no attribute 'returned'; it takes none\n"
	    "  graph { %x = input() : (2,) returned=1 }\n"
	    "                              ^~~~~~~~\n");
	free(msgs);
}
END_TEST

START_TEST(test_lex_numbers)
{
	static const struct {
		const char *text;
		double want;
	} cases[] = {
		{"1", 1}, {"-7", -7}, {"1.5", 1.5}, {".5", 0.5}, {"5.", 5},
		{"1e3", 1e3}, {"1E-3", 1e-3}, {"2.5e+2", 250}, {"-2.5", -2.5},
		{"-.25", -0.25}, {"0.1", 0.1}, {"1e-320", 1e-320},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char src[128];
		Graph *g;

		snprintf(src, sizeof src, "graph { %%c = const() : () value=%s }", cases[i].text);
		g = parse_ok(src);
		ck_assert_msg(node(g, "c")->at.value == cases[i].want, "value=%s read as %.17g",
		    cases[i].text, node(g, "c")->at.value);
		ir_graph_free(g);
	}
}
END_TEST

START_TEST(test_lex_bad_character)
{
	char *msgs;
	Graph *g = parse("graph {\n  %x = input() : (2,) $\n}\n", &msgs);

	ck_assert_ptr_null(g);
	/* Reported once, by the scanner, not again as a syntax error. */
	ck_assert_str_eq(msgs,
	    "t.aicm:2:23: error: unexpected character '$'\n"
	    "    %x = input() : (2,) $\n"
	    "                        ^\n");
	free(msgs);
}
END_TEST

START_TEST(test_lex_bad_byte)
{
	char *msgs;
	Graph *g = parse("graph { %x = input() : (2,) \x01 }", &msgs);

	ck_assert_ptr_null(g);
	ck_assert_ptr_nonnull(strstr(msgs, "t.aicm:1:29: error: unexpected byte 0x01\n"));
	free(msgs);
}
END_TEST

/* A string's escapes decode to the bytes they name. */
START_TEST(test_lex_string_escapes)
{
	static const char src[] = "graph { %w = const() : (2,) file=\"a\\\"b\\\\c\\n\\t\\x41\\xfF"
	    "\xc3\xa9\" }";
	Graph *g = parse_ok(src);

	ck_assert_str_eq(node(g, "w")->at.file, "a\"b\\c\n\tA\xff\xc3\xa9");
	ck_assert(node(g, "w")->at.set & AB(FILE));
	ir_graph_free(g);
}
END_TEST

/* Each bad string: one located message naming what was found and what was
 * expected, and no second one from the grammar. */
START_TEST(test_lex_string_errors)
{
	static const struct {
		const char *src, *msg;
	} bad[] = {
		{"graph { %w = const() : (2,) file=\"ab\n}", "t.aicm:1:34: error: unterminated string: "
		    "found the end of the line, expected '\"'\n"},
		{"graph { %w = const() : (2,) file=\"ab", "t.aicm:1:34: error: unterminated string"},
		{"graph { %w = const() : (2,) file=\"ab\\", "t.aicm:1:34: error: unterminated string"},
		{"graph { %w = const() : (2,) file=\"a\\qb\" }", "t.aicm:1:36: error: bad escape '\\q' "
		    "in a string: expected \\\", \\\\, \\n, \\t or \\xHH\n"},
		{"graph { %w = const() : (2,) file=\"a\\\x01\" }", "t.aicm:1:36: error: bad escape '\\' "
		    "then byte 0x01"},
		{"graph { %w = const() : (2,) file=\"a\\xg0\" }", "t.aicm:1:36: error: bad escape '\\x' "
		    "in a string: expected two hex digits after it\n"},
		{"graph { %w = const() : (2,) file=\"a\\x0\" }", "expected two hex digits"},
		{"graph { %w = const() : (2,) file=\"a\\x00\" }", "t.aicm:1:36: error: a string cannot "
		    "hold a NUL byte ('\\x00')\n"},
		{"graph { %w = const() : (2,) file=\"/w.npy\" }", "t.aicm:1:34: error: 'file' is an "
		    "absolute path; expected a path relative to the data directory\n"},
		{"graph { %w = const() : (2,) file=\"a/../../w.npy\" }", "t.aicm:1:34: error: 'file' has "
		    "a '..' component"},
		{"graph { %w = const() : (2,) file=\"..\" }", "'..' component"},
		{"graph { %w = const() : (2,) value=1 file=\"w\" }", "t.aicm:1:37: error: 'const' takes "
		    "one of 'value', 'file' and 'values'; 'value' is given already\n"},
		{"graph { %w = const() : (2,) file=(1, 2) }", "'file' takes a string such as \"w.npy\", "
		    "found a tuple\n"},
		{"graph { %w = input() : (2,) file=\"w\" }", "'input' has no attribute 'file'"},
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *msgs;
		Graph *g = parse(bad[i].src, &msgs);

		ck_assert_msg(g == NULL, "accepted: %s", bad[i].src);
		ck_assert_msg(strstr(msgs, bad[i].msg) != NULL, "for %s\nwanted %s\ngot %s",
		    bad[i].src, bad[i].msg, msgs);
		ck_assert_msg(!strstr(msgs + 1, "t.aicm:1") || !strstr(strstr(msgs + 1, "t.aicm:1") + 1,
		    "t.aicm:1"), "more than one message: %s", msgs);
		free(msgs);
	}
	/* A NUL byte in the text inside a string */
	{
		static const char src[] = "graph { %w = const() : (2,) file=\"a\0b\" }";
		char *buf = NULL;
		size_t n = 0;
		FILE *f = open_memstream(&buf, &n);
		Diag d;

		diag_init(&d, "t.aicm", src, sizeof src - 1, f);
		ck_assert_ptr_null(parse_graph(src, sizeof src - 1, 1, &d));
		diag_free(&d);
		fclose(f);
		ck_assert_ptr_nonnull(strstr(buf, "t.aicm:1:36: error: a string cannot hold a NUL byte"));
		free(buf);
	}
}
END_TEST

/* values=: exactly the type's element count, 1 to 64, numbers only, and
 * not beside value= or file=; '(5)' is one element. */
START_TEST(test_parse_values)
{
	static const struct {
		const char *src, *msg;
	} bad[] = {
		{"graph { %c = const() : (2,) values=(1, 2, 3) }", "t.aicm:1:29: error: 'values' has 3 "
		    "elements, but the type (2,) has 2\n"},
		{"graph { %c = const() : () values=(1, 2) }", "'values' has 2 elements, but the type () "
		    "has 1\n"},
		{"graph { %c = const() : (2,) values=() }", "'values' has 0 elements; it holds 1 to 64"},
		{"graph { %c = const() : (2,) values=(1, x) }", "t.aicm:1:40: error: 'values' takes "
		    "numbers, found 'x'\n"},
		{"graph { %c = const() : (2,) values=(1, 2) value=1 }", "'const' takes one of 'value', "
		    "'file' and 'values'; 'values' is given already\n"},
		{"graph { %c = const() : (2,) file=\"w\" values=(1, 2) }", "'file' is given already"},
		{"graph { %c = const() : (2,) values=1 }", "'values' takes a tuple of numbers"},
		{"graph { %x = input() : (2, 3) %y = transpose(%x) perm=(1.5, 0) }", "expected an "
		    "integer, found '1.5'"},
	};
	char src[800];
	size_t m = 0;
	char *msgs;
	Graph *g;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		g = parse(bad[i].src, &msgs);
		ck_assert_msg(g == NULL, "accepted: %s", bad[i].src);
		ck_assert_msg(strstr(msgs, bad[i].msg) != NULL, "for %s\nwanted %s\ngot %s",
		    bad[i].src, bad[i].msg, msgs);
		free(msgs);
	}
	m += (size_t)snprintf(src + m, sizeof src - m, "graph { %%c = const() : (65,) values=(");
	for (int i = 0; i < 65; i++)
		m += (size_t)snprintf(src + m, sizeof src - m, "%s%d", i ? ", " : "", i);
	snprintf(src + m, sizeof src - m, ") }");
	g = parse(src, &msgs);
	ck_assert_ptr_null(g);
	ck_assert_ptr_nonnull(strstr(msgs, "'values' has 65 elements; it holds 1 to 64"));
	free(msgs);

	g = parse_ok("graph { %c = const() : (2, 2) f32 values=(1.5, -2e-3, inf, -inf)\n"
	    "%s = const() : () values=(5) %t = const() : (1,) values=(nan,) }");
	ck_assert_int_eq(node(g, "c")->at.nvalues, 4);
	ck_assert(node(g, "c")->at.values[0] == 1.5);
	ck_assert(node(g, "c")->at.values[1] == -2e-3);
	ck_assert(node(g, "c")->at.values[3] < -1e308);
	ck_assert(node(g, "s")->at.values[0] == 5);
	ck_assert(node(g, "t")->at.values[0] != node(g, "t")->at.values[0]);
	ir_graph_free(g);
}
END_TEST

/* ---- graph, braces, comments ------------------------------------------ */

START_TEST(test_parse_angle_braces)
{
	Graph *g = parse_ok("graph @g < %x = input() : (2,)\n %y = relu(%x) >");

	ck_assert_str_eq(g->name, "g");
	ck_assert_int_eq(g->nnodes, 2);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_parse_mixed_braces_rejected)
{
	char *msgs;
	Graph *g = parse("graph < %x = input() : (2,) }", &msgs);

	ck_assert_ptr_null(g);
	ck_assert_ptr_nonnull(strstr(msgs, "t.aicm:1:29: error: expected "));
	ck_assert_ptr_nonnull(strstr(msgs, "found '}'"));
	free(msgs);
}
END_TEST

START_TEST(test_parse_unnamed_and_empty)
{
	Graph *g = parse_ok("graph {}");

	ck_assert_ptr_null(g->name);
	ck_assert_int_eq(g->nnodes, 0);
	ck_assert_int_eq(g->loc.line, 1);
	ck_assert_int_eq(g->loc.col, 1);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_parse_comments)
{
	Graph *g = parse_ok("// leading comment\n"
	    "graph // after the keyword\n"
	    "{ // after the brace\n"
	    "  // a whole line; %y = relu(%x) is not code here\n"
	    "  %x = input() : (2,) // trailing\n"
	    "} // at the end, no newline");

	ck_assert_int_eq(g->nnodes, 1);
	ck_assert_int_eq(node(g, "x")->loc.line, 5);
	ck_assert_int_eq(node(g, "x")->loc.col, 3);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_parse_locations_of_parts)
{
	Graph *g = parse_ok("graph {\n"
	    "\t%x = input() : (2, 3)\n"
	    "  %s = sum(%x) : (2, 1) axis=-1 keepdims=True\n"
	    "}\n");
	const Node *s = node(g, "s");

	/* Columns are 1-based bytes: a tab is one column. */
	ck_assert_int_eq(node(g, "x")->loc.col, 2);
	ck_assert_int_eq(node(g, "x")->loc.len, 2);
	ck_assert_int_eq(s->loc.line, 3);
	ck_assert_int_eq(s->oploc.col, 8);
	ck_assert_int_eq(s->oploc.len, 3);
	ck_assert_int_eq(s->inloc[0].col, 12);
	ck_assert_int_eq(s->typeloc.col, 18);
	ck_assert_int_eq(s->typeloc.len, 6);
	ck_assert_int_eq(s->attrloc[ATTR_AXIS].col, 25);
	ck_assert_int_eq(s->attrloc[ATTR_AXIS].len, 7);       /* axis=-1 */
	ck_assert_int_eq(s->attrloc[ATTR_KEEPDIMS].col, 33);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_parse_line0_offset)
{
	/* A chunk of a split file keeps the file's line numbers. */
	const char *text = "graph {\n  %x = input() : (2,)\n}\n";
	Diag d;
	FILE *f = fopen("/dev/null", "w");
	Graph *g;

	diag_init(&d, "t.aicm", text, strlen(text), f);
	g = parse_graph(text, strlen(text), 41, &d);
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(g->loc.line, 41);
	ck_assert_int_eq(node(g, "x")->loc.line, 42);
	ir_graph_free(g);
	diag_free(&d);
	fclose(f);
}
END_TEST

/* ---- types ----------------------------------------------------------- */

START_TEST(test_parse_type_rank1_forms)
{
	Graph *g = parse_ok("graph { %a = input() : (32)\n %b = input() : (32,) }");

	ck_assert_int_eq(node(g, "a")->type.rank, 1);
	ck_assert_int_eq(node(g, "a")->type.dim[0], 32);
	ck_assert(ir_type_eq(&node(g, "a")->type, &node(g, "b")->type));
	ir_graph_free(g);
}
END_TEST

START_TEST(test_parse_type_rank0_and_rank4)
{
	Graph *g = parse_ok("graph { %a = input() : ()\n %b = input() : (1, 2, 3, 4,) }");

	ck_assert_int_eq(node(g, "a")->type.rank, 0);
	ck_assert_int_eq(ir_type_numel(&node(g, "a")->type), 1);
	ck_assert_int_eq(node(g, "b")->type.rank, 4);
	ck_assert_int_eq(node(g, "b")->type.dim[3], 4);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_parse_type_element_types)
{
	Graph *g = parse_ok("graph { %a = input() : (2,) f32\n %b = input() : (2,) f64\n"
	    "%c = input() : (2,)\n %d = relu(%a) : (2,) f32 }");

	ck_assert_int_eq(node(g, "a")->type.dt, DT_F32);
	ck_assert_int_eq(node(g, "b")->type.dt, DT_F64);
	ck_assert_int_eq(node(g, "c")->type.dt, DT_F64);
	ck_assert_int_eq(node(g, "d")->type.dt, DT_F32);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_parse_type_optional_on_compute)
{
	Graph *g = parse_ok("graph { %a = input() : (2,)\n %b = relu(%a)\n %c = sum(%b) axis=0 }");

	ck_assert_int_eq(node(g, "b")->type.rank, -1);
	ck_assert_int_eq(node(g, "c")->type.rank, -1);
	ck_assert(node(g, "c")->at.set & AB(AXIS));
	ir_graph_free(g);
}
END_TEST

START_TEST(test_parse_type_largest_dims)
{
	Graph *g = parse_ok("graph { %a = input() : (1073741824, 1073741824, 7) }");

	ck_assert_int_eq(ir_type_numel(&node(g, "a")->type), (int64_t)7 << 60);
	ir_graph_free(g);
}
END_TEST

/* ---- attributes ------------------------------------------------------ */

START_TEST(test_parse_attr_float_specials)
{
	Graph *g = parse_ok("graph { %a = const() : () value=inf\n %b = const() : () value=-inf\n"
	    " %c = const() : () value=nan\n %d = const() : () value=-nan\n"
	    " %e = const() : () value=3\n %f = const() : () value=-0.0 }");

	ck_assert(isinf(node(g, "a")->at.value) && node(g, "a")->at.value > 0);
	ck_assert(isinf(node(g, "b")->at.value) && node(g, "b")->at.value < 0);
	ck_assert(isnan(node(g, "c")->at.value));
	ck_assert(isnan(node(g, "d")->at.value));
	ck_assert(node(g, "e")->at.value == 3.0);
	ck_assert(node(g, "f")->at.value == 0.0 && signbit(node(g, "f")->at.value));
	ck_assert(node(g, "f")->at.set & AB(VALUE));
	ir_graph_free(g);
}
END_TEST

START_TEST(test_parse_attr_bools)
{
	static const char *const words[] = {"True", "true", "False", "false"};

	for (int i = 0; i < 4; i++) {
		char src[128];
		Graph *g;

		snprintf(src, sizeof src,
		    "graph { %%a = input() : (2, 3)\n %%s = sum(%%a) axis=1 keepdims=%s }", words[i]);
		g = parse_ok(src);
		ck_assert_int_eq(node(g, "s")->at.keepdims, i < 2);
		ck_assert(node(g, "s")->at.set & AB(KEEPDIMS));
		ir_graph_free(g);
	}
}
END_TEST

START_TEST(test_parse_attr_negative_axis)
{
	Graph *g = parse_ok("graph { %a = input() : (2, 3)\n %s = max(%a) axis=-2 }");

	ck_assert_int_eq(node(g, "s")->at.axis, -2);
	ck_assert_int_eq(ir_reduce_axis(node(g, "s"), 2), 0);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_parse_attr_tuples)
{
	Graph *g = parse_ok("graph { %a = input() : (2, 3, 4)\n"
	    " %t = transpose(%a) perm=(2, 0, 1)\n"
	    " %r = reshape(%a) shape=(24)\n"
	    " %q = reshape(%a) shape=(-1, 4,)\n"
	    " %z = reshape(%a) shape=() }");

	ck_assert_int_eq(ir_attr_ints(&node(g, "t")->at, ATTR_PERM).n, 3);
	ck_assert_int_eq(ir_attr_ints(&node(g, "t")->at, ATTR_PERM).v[0], 2);
	ck_assert_int_eq(ir_attr_ints(&node(g, "t")->at, ATTR_PERM).v[2], 1);
	ck_assert_int_eq(ir_attr_ints(&node(g, "r")->at, ATTR_SHAPE).n, 1);
	ck_assert_int_eq(ir_attr_ints(&node(g, "r")->at, ATTR_SHAPE).v[0], 24);
	ck_assert_int_eq(ir_attr_ints(&node(g, "q")->at, ATTR_SHAPE).n, 2);
	ck_assert_int_eq(ir_attr_ints(&node(g, "q")->at, ATTR_SHAPE).v[0], -1);
	ck_assert_int_eq(ir_attr_ints(&node(g, "z")->at, ATTR_SHAPE).n, 0);
	ck_assert(node(g, "z")->at.set & AB(SHAPE));
	ir_graph_free(g);
}
END_TEST

START_TEST(test_parse_attr_after_operands_without_type)
{
	Graph *g = parse_ok("graph { %a = input() : (2, 3)\n %s = mean(%a) keepdims=true axis=0 }");

	ck_assert_int_eq(node(g, "s")->type.rank, -1);
	ck_assert_int_eq(node(g, "s")->at.axis, 0);
	ck_assert(node(g, "s")->at.keepdims);
	ir_graph_free(g);
}
END_TEST

/* ---- every op, kernels, return ---------------------------------------- */

START_TEST(test_parse_every_op)
{
	char src[4096];
	size_t m = 0;
	Graph *g;
	int want[OP_COUNT], n = 0;

	m += (size_t)snprintf(src + m, sizeof src - m, "graph {\n");
	for (int op = 0; op < OP_COUNT; op++) {
		const OpInfo *o = &ir_ops[op];

		if (o->cls == OC_TILED)
			continue;       /* written 'tiled @k ...' (tests/check_tile.c) */
		want[n++] = op;
		if (o->cls == OC_SOURCE) {
			m += (size_t)snprintf(src + m, sizeof src - m, "  %%v%d = %s() : (2, 2)\n", op,
			    o->name);
			continue;
		}
		m += (size_t)snprintf(src + m, sizeof src - m, "  %%v%d = %s(", op, o->name);
		for (int j = 0; j < o->nmin; j++)
			m += (size_t)snprintf(src + m, sizeof src - m, "%s%%v%d", j ? ", " : "", j);
		m += (size_t)snprintf(src + m, sizeof src - m, ")");
		/* each required attribute, with a value of its kind */
		for (int a = 0; a < ATTR_COUNT; a++)
			if (o->required & (1u << a))
				m += (size_t)snprintf(src + m, sizeof src - m, " %s=%s", ir_attrs[a].name,
				    ir_attrs[a].kind == AK_TYPE ? "f32" : ir_attrs[a].kind == AK_AXIS ?
				    "0" : a == ATTR_PADS ? "(0, 0, 0, 0)" : "(1, 1)");
		m += (size_t)snprintf(src + m, sizeof src - m, "\n");
	}
	snprintf(src + m, sizeof src - m, "}\n");
	g = parse_ok(src);
	ck_assert_int_eq(g->nnodes, n);
	for (int k = 0; k < n; k++) {
		ck_assert_int_eq(g->nodes[k].op, want[k]);
		ck_assert_int_eq(g->nodes[k].nin, ir_ops[want[k]].nmin);
	}
	ir_graph_free(g);
}
END_TEST

START_TEST(test_parse_kernel_blocks)
{
	Graph *g = parse_ok("graph {\n"
	    "  %x = input() : (4, 8)\n"
	    "  %W = const() : (8, 2)\n"
	    "  kernel @k0 [matmul_epilogue] BM=16 BN=32 BK=8 warps=4 stages=3 split=2 {\n"
	    "    %mm = matmul(%x, %W)\n"
	    "    %r = relu(%mm)\n"
	    "  }\n"
	    "  %n = neg(%r)\n"
	    "  kernel @k1 [elementwise] {\n"
	    "    %e = exp(%n)\n"
	    "  }\n"
	    "}\n");
	const Kernel *k = &g->kernels[0];

	ck_assert_int_eq(g->nkernels, 2);
	ck_assert_int_eq(k->kind, KK_MATMUL_EPILOGUE);
	ck_assert_int_eq(k->first, 2);
	ck_assert_int_eq(k->last, 3);
	ck_assert_int_eq(k->kset, (1u << KA_COUNT) - 1);
	ck_assert_int_eq(k->kattr[KA_BN], 32);
	ck_assert_int_eq(k->kattr[KA_BK], 8);
	ck_assert_int_eq(k->kattr[KA_WARPS], 4);
	ck_assert_int_eq(k->kattr[KA_STAGES], 3);
	ck_assert_int_eq(k->kattr[KA_SPLIT], 2);
	ck_assert_int_eq(k->loc.line, 4);
	ck_assert_int_eq(node(g, "n")->kernel, -1);
	ck_assert_int_eq(node(g, "r")->kernel, 0);
	ck_assert_int_eq(g->kernels[1].kind, KK_ELEMENTWISE);
	ck_assert_int_eq(g->kernels[1].first, 5);
	ck_assert_int_eq(g->kernels[1].last, 5);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_parse_every_kernel_kind)
{
	for (int kk = 0; kk < KK_COUNT; kk++) {
		char src[256];
		Graph *g;

		snprintf(src, sizeof src, "graph { %%x = input() : (2, 2)\n"
		    " kernel @k [%s] { %%y = relu(%%x) } }", ir_kernel_kinds[kk]);
		g = parse_ok(src);
		ck_assert_int_eq(g->kernels[0].kind, kk);
		ir_graph_free(g);
	}
}
END_TEST

START_TEST(test_parse_return)
{
	Graph *g = parse_ok("graph { %x = input() : (2,)\n %a = relu(%x)\n %b = neg(%a)\n"
	    " return %b, %a, %x }");

	ck_assert_int_eq(g->nret, 3);
	ck_assert_int_eq(g->ret[0], 2);
	ck_assert_int_eq(g->ret[1], 1);
	ck_assert_int_eq(g->ret[2], 0);
	ck_assert_int_eq(g->retloc.line, 4);
	ck_assert_int_eq(g->retloc.col, 2);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_parse_no_return)
{
	Graph *g = parse_ok("graph { %x = input() : (2,)\n %a = relu(%x) }");

	ck_assert_ptr_null(g->ret);
	ck_assert_int_eq(g->nret, 0);
	ir_graph_free(g);
}
END_TEST

/* ---- errors: place and wording ----------------------------------------- */

static const struct {
	const char *src;
	const char *msg;             /* the first line of the first message */
} errors[] = {
	/* syntax */
	{"", "t.aicm:1:1: error: expected 'graph', found end of file"},
	{"%x = input() : (2,)", "t.aicm:1:1: error: expected 'graph', found '%x'"},
	{"graph { %x = input() : (2,)",
	 "t.aicm:1:28: error: expected value name, identifier, 'kernel', 'return' or '}', "
	 "found end of file"},
	{"graph { x = input() : (2,) }",
	 "t.aicm:1:9: error: expected value name, 'kernel', 'return' or '}', found 'x'"},
	{"graph { %x input() : (2,) }", "t.aicm:1:12: error: expected '=', found 'input'"},
	{"graph { %x = input( : (2,) }",
	 "t.aicm:1:21: error: expected value name or ')', found ':'"},
	{"graph { %x = input() : (2,,3) }",
	 "t.aicm:1:27: error: expected integer or ')', found ','"},
	{"graph { %x = input() : ((2)) }",
	 "t.aicm:1:25: error: expected integer or ')', found '('"},
	{"graph { %x = input() : (2.5,) }",
	 "t.aicm:1:25: error: expected integer or ')', found '2.5'"},
	{"graph { %x = input() : 2 }", "t.aicm:1:24: error: expected '(', found '2'"},
	{"graph { %x = input() : (2,) } trailing",
	 "t.aicm:1:31: error: expected end of file, found 'trailing'"},
	{"graph { %x = input() : (2,)\n return }",
	 "t.aicm:2:9: error: expected value name, found '}'"},
	{"graph { %x = relu(%y,) }", "t.aicm:1:22: error: expected value name, found ')'"},
	{"graph { kernel k0 [opaque] {} }", "t.aicm:1:16: error: expected '@name', found 'k0'"},
	{"graph @ { }", "t.aicm:1:7: error: unexpected character '@'"},
	{"graph { %x = input() : (2,) axis= }",
	 "t.aicm:1:35: error: expected identifier, integer, number or '(', found '}'"},
	/* scanner */
	{"graph { %x = input() : (2,) ; }", "t.aicm:1:29: error: unexpected character ';'"},
	{"graph { % = input() : (2,) }", "t.aicm:1:9: error: unexpected character '%'"},
	/* values */
	{"graph { %y = relu(%x) }", "t.aicm:1:19: error: use of undefined value '%x'"},
	{"graph { %y = relu(%y) }", "t.aicm:1:19: error: '%y' is used before it is defined"},
	{"graph { %y = relu(%x)\n %x = input() : (2,) }",
	 "t.aicm:1:19: error: '%x' is used before it is defined"},
	{"graph { %x = input() : (2,)\n %x = input() : (2,) }",
	 "t.aicm:2:2: error: redefinition of '%x'"},
	{"graph { %x = input() : (2,)\n return %nope }",
	 "t.aicm:2:9: error: use of undefined value '%nope'"},
	/* ops */
	{"graph { %x = matmull() : (2,) }",
	 "t.aicm:1:14: error: unknown op 'matmull'; did you mean 'matmul'?"},
	{"graph { %x = conv3d() : (2,) }", "t.aicm:1:14: error: unknown op 'conv3d'; did you mean 'conv2d'?"},
	{"graph { %x = conv2d() : (2,) }", "t.aicm:1:14: error: 'conv2d' takes 2 or 3 operands, found 0"},
	{"graph { %x = concat() : (2,) }", "t.aicm:1:14: error: 'concat' takes 1 or more operands, found 0"},
	{"graph { %x = input() : (2,)\n %y = add(%x) }",
	 "t.aicm:2:7: error: 'add' takes 2 operands, found 1"},
	{"graph { %x = input() : (2,)\n %y = relu(%x, %x) }",
	 "t.aicm:2:7: error: 'relu' takes 1 operand, found 2"},
	{"graph { %x = input(%x) : (2,) }", "t.aicm:1:14: error: 'input' takes 0 operands, found 1"},
	{"graph { %x = input() }", "t.aicm:1:14: error: 'input' needs a type, such as ': (64, 48)'"},
	{"graph { %x = const() value=1.0 }",
	 "t.aicm:1:14: error: 'const' needs a type, such as ': (64, 48)'"},
	{"graph { %x = input() : (4,)\n %r = reshape(%x) }",
	 "t.aicm:2:7: error: 'reshape' needs attribute 'shape'"},
	/* attributes */
	{"graph { %x = input() : (2,)\n %y = relu(%x) axis=0 }",
	 "t.aicm:2:16: error: 'relu' has no attribute 'axis'; it takes none"},
	{"graph { %x = input() : (2,)\n %y = sum(%x) perm=(0,) }",
	 "t.aicm:2:15: error: 'sum' has no attribute 'perm'; it takes axis, keepdims"},
	{"graph { %x = input() : (2,)\n %y = sum(%x) color=1 }",
	 "t.aicm:2:15: error: 'sum' has no attribute 'color'; it takes axis, keepdims"},
	{"graph { %x = input() : (2,)\n %y = sum(%x) axis=0 axis=0 }",
	 "t.aicm:2:22: error: attribute 'axis' is given twice"},
	{"graph { %x = input() : (2,)\n %y = sum(%x) axis=1.5 }",
	 "t.aicm:2:20: error: 'axis' takes an integer or a tuple of them, found 1.5"},
	{"graph { %x = input() : (2,)\n %y = sum(%x) axis=() }",
	 "t.aicm:2:20: error: 'axis' is an empty tuple; leave it out to reduce over all axes"},
	{"graph { %x = input() : (2,)\n %y = argmax(%x) axis=(0,) }",
	 "t.aicm:2:23: error: 'argmax' takes one axis, axis=<int>; only a reduction takes a tuple"},
	{"graph { %c = const() : (2,) values=(1, +) }",
	 "t.aicm:1:40: error: expected number or ')', found '+'"},
	{"graph { %c = const() : (2,) values=(1, 2)\n %t = transpose(%c) perm=(1, +) }",
	 "t.aicm:2:30: error: expected integer or ')', found '+'"},
	{"graph { %x = input() : (2,)\n %y = cast(%x) to=f16 }",
	 "t.aicm:2:19: error: 'to' takes an element type (f32, f64, i32, i64 or bool), found f16"},
	{"graph { %x = input() : (2,)\n %y = cast(%x) }",
	 "t.aicm:2:7: error: 'cast' needs attribute 'to'"},
	{"graph { %x = const() : (2,) i64 values=(1, 2.5) }",
	 "t.aicm:1:33: error: 'values' element 1 does not fit the element type i64"},
	{"graph { %x = const() : (2,) bool value=2 }",
	 "t.aicm:1:34: error: 'value' does not fit the element type bool"},
	{"graph { %x = const() : (2,) i32 value=2147483648 }",
	 "t.aicm:1:33: error: 'value' does not fit the element type i32"},
	{"graph { %x = input() : (2,)\n %y = sum(%x) keepdims=1 }",
	 "t.aicm:2:24: error: 'keepdims' takes True or False, found 1"},
	{"graph { %x = input() : (2,)\n %y = sum(%x) keepdims=yes }",
	 "t.aicm:2:24: error: 'keepdims' takes True or False, found yes"},
	{"graph { %x = const() : (2,) value=Inf }",
	 "t.aicm:1:35: error: 'value' takes a number, found Inf"},
	{"graph { %x = const() : (2,) value=(1,) }",
	 "t.aicm:1:35: error: 'value' takes a number, found a tuple"},
	{"graph { %x = input() : (2, 2)\n %y = transpose(%x) perm=1 }",
	 "t.aicm:2:26: error: 'perm' takes a tuple such as (1, 0), found 1"},
	{"graph { %x = input() : (2, 2)\n %y = reshape(%x) shape=(1, 1, 1, 1, 1, 1, 1, 1, 4) }",
	 "t.aicm:2:25: error: 'shape' has 9 entries; it holds at most 8"},
	{"graph { %x = input() : (2, 2)\n %y = sum(%x) axis=99999999999999999999 }",
	 "t.aicm:2:20: error: integer '99999999999999999999' is out of range"},
	{"graph { %x = input() : (2,) axis }",
	 "t.aicm:1:29: error: unknown element type 'axis'; expected f32, f64, i32, i64 or bool"},
	{"graph { %x = input() : (2,) f32 axis }",
	 "t.aicm:1:33: error: expected an attribute 'name=value', found 'axis'"},
	{"graph { %x = input() : (2,)\n %y = relu(%x) f32 }",
	 "t.aicm:2:16: error: expected an attribute 'name=value', found 'f32'"},
	/* types and dimensions */
	{"graph { %x = input() : (0,) }", "t.aicm:1:25: error: dimension 0 is not positive"},
	{"graph { %x = input() : (-3,) }", "t.aicm:1:25: error: dimension -3 is not positive"},
	{"graph { %x = input() : (1073741825,) }",
	 "t.aicm:1:25: error: dimension 1073741825 is more than the maximum of 1073741824"},
	{"graph { %x = input() : (123456789012345678901234567890,) }",
	 "t.aicm:1:25: error: integer '123456789012345678901234567890' is out of range"},
	{"graph { %x = input() : (1073741824, 1073741824, 1073741824, 1073741824) }",
	 "t.aicm:1:24: error: shape (1073741824, 1073741824, 1073741824, 1073741824) has more "
	 "elements than a 64-bit count holds"},
	{"graph { %x = input() : (1, 2, 3, 4, 5, 6, 7, 8, 9) }",
	 "t.aicm:1:24: error: rank 9 is more than the maximum of 8"},
	{"graph { %x = input() : (2,) f16 }",
	 "t.aicm:1:29: error: unknown element type 'f16'; expected f32, f64, i32, i64 or bool"},
	{"graph { %x = input() : (2,) F32 }",
	 "t.aicm:1:29: error: unknown element type 'F32'; expected f32, f64, i32, i64 or bool"},
	/* kernels */
	{"graph { %x = input() : (2,)\n kernel @k [fast] { %y = relu(%x) } }",
	 "t.aicm:2:13: error: unknown kernel kind 'fast'; expected matmul_epilogue, matmul, "
	 "elementwise, reduction, row_reduction, opaque, conv_epilogue or attention"},
	{"graph { kernel @k [opaque] { } }", "t.aicm:1:9: error: kernel '@k' is empty"},
	{"graph { %x = input() : (2,)\n kernel @k [opaque] { %y = relu(%x) }\n"
	 " kernel @k [opaque] { %z = relu(%x) } }",
	 "t.aicm:3:9: error: redefinition of kernel '@k'"},
	{"graph { %x = input() : (2,)\n kernel @k [opaque] BQ=1 { %y = relu(%x) } }",
	 "t.aicm:2:21: error: unknown kernel attribute 'BQ'; expected BM, BN, BK, warps, "
	 "stages or split"},
	{"graph { %x = input() : (2,)\n kernel @k [opaque] BM=0 { %y = relu(%x) } }",
	 "t.aicm:2:24: error: kernel attribute 'BM' must be in 1..1073741824, found 0"},
	{"graph { %x = input() : (2,)\n kernel @k [opaque] BM=1.5 { %y = relu(%x) } }",
	 "t.aicm:2:24: error: kernel attribute 'BM' takes a positive integer"},
	{"graph { %x = input() : (2,)\n kernel @k [opaque] BM { %y = relu(%x) } }",
	 "t.aicm:2:21: error: kernel attribute 'BM' takes a positive integer"},
	{"graph { %x = input() : (2,)\n kernel @k [opaque] BM=2 BM=4 { %y = relu(%x) } }",
	 "t.aicm:2:26: error: kernel attribute 'BM' is given twice"},
	{"graph { %x = input() : (2,)\n kernel @k [opaque] { kernel @j [opaque] { } } }",
	 "t.aicm:2:23: error: expected value name or '}', found 'kernel'"},
	/* return */
	{"graph { %x = input() : (2,)\n return %x\n return %x }",
	 "t.aicm:3:2: error: a graph has only one 'return'"},
	{"graph { %x = input() : (2,)\n return %x\n %y = relu(%x) }",
	 "t.aicm:3:2: error: 'return' must be the last statement of the graph"},
	{"graph { %x = input() : (2,)\n return %x\n kernel @k [opaque] { %y = relu(%x) } }",
	 "t.aicm:3:2: error: 'return' must be the last statement of the graph"},
};

START_TEST(test_parse_error_message)
{
	char *msgs, *nl;
	Graph *g = parse(errors[_i].src, &msgs);

	ck_assert_msg(g == NULL, "accepted: %s", errors[_i].src);
	nl = strchr(msgs, '\n');
	ck_assert_ptr_nonnull(nl);
	*nl = '\0';
	ck_assert_str_eq(msgs, errors[_i].msg);
	free(msgs);
}
END_TEST

START_TEST(test_parse_error_caret)
{
	char *msgs;
	Graph *g = parse("graph {\n  %x = input() : (2,)\n  %y = add(%x, %zz)\n}\n", &msgs);

	ck_assert_ptr_null(g);
	ck_assert_str_eq(msgs,
	    "t.aicm:3:16: error: use of undefined value '%zz'\n"
	    "    %y = add(%x, %zz)\n"
	    "                 ^~~\n");
	free(msgs);
}
END_TEST

START_TEST(test_parse_redefinition_note)
{
	char *msgs;
	Graph *g = parse("graph {\n  %x = input() : (2,)\n  %x = const() : (2,)\n}\n", &msgs);

	ck_assert_ptr_null(g);
	ck_assert_str_eq(msgs,
	    "t.aicm:3:3: error: redefinition of '%x'\n"
	    "    %x = const() : (2,)\n"
	    "    ^~\n"
	    "t.aicm:2:3: note: previous definition is here\n"
	    "    %x = input() : (2,)\n"
	    "    ^~\n");
	free(msgs);
}
END_TEST

START_TEST(test_parse_use_before_def_note)
{
	char *msgs;
	Graph *g = parse("graph {\n  %y = relu(%x)\n  %x = input() : (2,)\n}\n", &msgs);

	ck_assert_ptr_null(g);
	ck_assert_ptr_nonnull(strstr(msgs, "t.aicm:3:3: note: '%x' is defined here\n"));
	free(msgs);
}
END_TEST

START_TEST(test_parse_semantic_errors_all_reported)
{
	char *msgs;
	Graph *g = parse("graph {\n  %a = input() : (0,)\n  %b = foo()\n  %c = relu(%q)\n}\n", &msgs);
	int n = 0;

	ck_assert_ptr_null(g);
	for (const char *p = msgs; (p = strstr(p, ": error: ")); p++)
		n++;
	ck_assert_int_eq(n, 3);
	free(msgs);
}
END_TEST

START_TEST(test_parse_error_caret_under_tab)
{
	/* A tab before the token stays a tab in the caret line. */
	char *msgs;
	Graph *g = parse("graph {\n\t%x = input() : (0,)\n}\n", &msgs);

	ck_assert_ptr_null(g);
	ck_assert_str_eq(msgs,
	    "t.aicm:2:18: error: dimension 0 is not positive\n"
	    "  \t%x = input() : (0,)\n"
	    "  \t                ^\n");
	free(msgs);
}
END_TEST

/* Inputs with one mistake each, which must give exactly one error: no
 * cascade of follow-on messages. */
static const char *const single[] = {
	/* a refused shape= is not also "missing" */
	"graph { %x = input() : (4,)\n %r = reshape(%x) shape=four }",
	"graph { %x = input() : (4,)\n %r = reshape(%x) shape=(1, 1, 1, 1, 1, 1, 1, 1, 4) }",
	/* a kernel whose only op failed is not also "empty" */
	"graph { %x = input() : (2,)\n kernel @k [opaque] { %x = relu(%x) } }",
	"graph { %x = input() : (2,)\n kernel @k [opaque] { %y = foo(%x) } }",
	/* a kernel after return is reported once, not again for its ops */
	("graph { %x = input() : (2,)\n return %x\n kernel @k [opaque] { %y = relu(%x)\n"
	 " %z = neg(%y) } }"),
	"graph { %x = input() : (2,)\n return %x\n %y = relu(%x)\n %z = neg(%y) }",
	/* an unknown op's users do not report it undefined */
	"graph { %a = foo()\n %b = relu(%a)\n %c = add(%a, %b) }",
};

START_TEST(test_parse_no_cascade)
{
	char *msgs;
	Graph *g = parse(single[_i], &msgs);
	int n = 0;

	ck_assert_ptr_null(g);
	for (const char *p = msgs; (p = strstr(p, ": error: ")); p++)
		n++;
	ck_assert_msg(n == 1, "%d errors for\n%s\n---\n%s", n, single[_i], msgs);
	free(msgs);
}
END_TEST

START_TEST(test_parse_bad_op_defines_its_name)
{
	/* One error for the unknown op, none for its users. */
	char *msgs;
	Graph *g = parse("graph {\n  %a = foo()\n  %b = relu(%a)\n}\n", &msgs);

	ck_assert_ptr_null(g);
	ck_assert_ptr_null(strstr(msgs, "undefined"));
	ck_assert_ptr_nonnull(strstr(msgs, "unknown op 'foo'"));
	free(msgs);
}
END_TEST

START_TEST(test_parse_long_name)
{
	size_t n = IR_MAX_NAME + 1;
	char *src = malloc(n + 64), *msgs;
	Graph *g;

	memcpy(src, "graph { %", 9);
	memset(src + 9, 'a', n);
	strcpy(src + 9 + n, " = input() : (2,) }");
	g = parse(src, &msgs);
	ck_assert_ptr_null(g);
	ck_assert_ptr_nonnull(strstr(msgs,
	    "t.aicm:1:9: error: value name of 1048577 bytes is longer than the limit of 1048576\n"));
	/* The quote is cut short, not a megabyte of 'a'. */
	ck_assert_uint_lt(strlen(msgs), 1000);
	free(msgs);
	free(src);
}
END_TEST

START_TEST(test_parse_name_at_limit)
{
	size_t n = IR_MAX_NAME;
	char *src = malloc(n + 64);
	Graph *g;

	memcpy(src, "graph { %", 9);
	memset(src + 9, 'b', n);
	strcpy(src + 9 + n, " = input() : (2,) }");
	g = parse_ok(src);
	ck_assert_uint_eq(strlen(g->nodes[0].name), n);
	ir_graph_free(g);
	free(src);
}
END_TEST

START_TEST(test_parse_deep_parentheses)
{
	size_t depth = 100000;
	char *src = malloc(2 * depth + 64), *msgs;
	size_t m = 0;
	Graph *g;

	m += (size_t)sprintf(src, "graph { %%x = input() : ");
	memset(src + m, '(', depth);
	m += depth;
	memset(src + m, ')', depth);
	m += depth;
	strcpy(src + m, " }");
	g = parse(src, &msgs);
	ck_assert_ptr_null(g);
	ck_assert_ptr_nonnull(strstr(msgs, "t.aicm:1:25: error: expected integer or ')', found '('\n"));
	free(msgs);
	free(src);
}
END_TEST

START_TEST(test_parse_many_values)
{
	/* A long graph parses in linear time and every name resolves. */
	int n = 50000;
	size_t cap = (size_t)n * 40 + 64, m = 0;
	char *src = malloc(cap);
	Graph *g;

	m += (size_t)snprintf(src + m, cap - m, "graph {\n  %%v0 = input() : (2,)\n");
	for (int i = 1; i < n; i++)
		m += (size_t)snprintf(src + m, cap - m, "  %%v%d = relu(%%v%d)\n", i, i - 1);
	snprintf(src + m, cap - m, "}\n");
	g = parse_ok(src);
	ck_assert_int_eq(g->nnodes, n);
	ck_assert_int_eq(g->nodes[n - 1].in[0], n - 2);
	ck_assert_int_eq(ir_lookup(g, "v12345"), 12345);
	ir_graph_free(g);
	free(src);
}
END_TEST

Suite *
make_parse_suite(void)
{
	Suite *s = suite_create("parse");
	TCase *tc;

	tc = tcase_create("tokens");
	tcase_add_test(tc, test_lex_keywords_and_punctuation);
	tcase_add_test(tc, test_lex_value_names);
	tcase_add_test(tc, test_lex_keyword_prefix_is_an_identifier);
	tcase_add_test(tc, test_lex_numbers);
	tcase_add_test(tc, test_lex_bad_character);
	tcase_add_test(tc, test_lex_bad_byte);
	tcase_add_test(tc, test_lex_string_escapes);
	tcase_add_test(tc, test_lex_string_errors);
	tcase_add_test(tc, test_parse_values);
	suite_add_tcase(s, tc);

	tc = tcase_create("graph");
	tcase_add_test(tc, test_parse_angle_braces);
	tcase_add_test(tc, test_parse_mixed_braces_rejected);
	tcase_add_test(tc, test_parse_unnamed_and_empty);
	tcase_add_test(tc, test_parse_comments);
	tcase_add_test(tc, test_parse_locations_of_parts);
	tcase_add_test(tc, test_parse_line0_offset);
	suite_add_tcase(s, tc);

	tc = tcase_create("types");
	tcase_add_test(tc, test_parse_type_rank1_forms);
	tcase_add_test(tc, test_parse_type_rank0_and_rank4);
	tcase_add_test(tc, test_parse_type_element_types);
	tcase_add_test(tc, test_parse_type_optional_on_compute);
	tcase_add_test(tc, test_parse_type_largest_dims);
	suite_add_tcase(s, tc);

	tc = tcase_create("attributes");
	tcase_add_test(tc, test_parse_attr_float_specials);
	tcase_add_test(tc, test_parse_attr_bools);
	tcase_add_test(tc, test_parse_attr_negative_axis);
	tcase_add_test(tc, test_parse_attr_tuples);
	tcase_add_test(tc, test_parse_attr_after_operands_without_type);
	suite_add_tcase(s, tc);

	tc = tcase_create("statements");
	tcase_add_test(tc, test_parse_every_op);
	tcase_add_test(tc, test_parse_kernel_blocks);
	tcase_add_test(tc, test_parse_every_kernel_kind);
	tcase_add_test(tc, test_parse_return);
	tcase_add_test(tc, test_parse_no_return);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_loop_test(tc, test_parse_error_message, 0, (int)(sizeof errors / sizeof errors[0]));
	tcase_add_test(tc, test_parse_error_caret);
	tcase_add_test(tc, test_parse_redefinition_note);
	tcase_add_test(tc, test_parse_use_before_def_note);
	tcase_add_test(tc, test_parse_semantic_errors_all_reported);
	tcase_add_test(tc, test_parse_bad_op_defines_its_name);
	tcase_add_test(tc, test_parse_error_caret_under_tab);
	tcase_add_loop_test(tc, test_parse_no_cascade, 0, (int)(sizeof single / sizeof single[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("limits");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_parse_long_name);
	tcase_add_test(tc, test_parse_name_at_limit);
	tcase_add_test(tc, test_parse_deep_parentheses);
	tcase_add_test(tc, test_parse_many_values);
	suite_add_tcase(s, tc);
	return s;
}
