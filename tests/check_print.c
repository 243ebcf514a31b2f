/*
 * check_print.c: the canonical text form (DESIGN §2).
 *
 * Three properties: the printer writes one canonical text for each graph
 * (indent, separators, (32,), attribute order, defaults left out, return
 * only when it differs from the default outputs); printing is a fixed point,
 * print(parse(print(x))) == print(x), over many inputs written in odd ways;
 * and floats come out as the fewest digits that read back to the same
 * double, positional or scientific the way Python's repr chooses.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "pass.h"
#include "../passes/passes.h"

/* print(parse(src)); src must be valid. */
static char *
reprint(const char *src)
{
	char *msgs, *out;
	Graph *g = ck_parse(src, &msgs);

	ck_assert_msg(g != NULL, "rejected:\n%s\n--- messages:\n%s", src, msgs);
	free(msgs);
	out = ir_print_str(g, NULL);
	ir_graph_free(g);
	return out;
}

/* ---- canonical form ---------------------------------------------------- */

static const struct {
	const char *in, *out;
} canon[] = {
	/* odd spacing, (32) and rank 0, f64 left out, f32 kept */
	{"graph @m<%x=input():(64,48)f32\n%b=const():(32)\n%s=const():()value=0.5\n"
	 "%y=relu(%x)>",
	 "graph @m {\n"
	 "  %x = input() : (64, 48) f32\n"
	 "  %b = const() : (32,)\n"
	 "  %s = const() : () value=0.5\n"
	 "  %y = relu(%x)\n"
	 "}\n"},
	{"graph{\t%x = input( ) : ( 2 , 3 , ) f64 // note\n\n\n  %y   =   neg (%x)  :  (2,3)}",
	 "graph {\n"
	 "  %x = input() : (2, 3)\n"
	 "  %y = neg(%x) : (2, 3)\n"
	 "}\n"},
	/* attributes in declared order, whatever the written order */
	{"graph { %x = input() : (2, 3)\n %s = sum(%x) keepdims=true axis=-1 }",
	 "graph {\n"
	 "  %x = input() : (2, 3)\n"
	 "  %s = sum(%x) axis=-1 keepdims=True\n"
	 "}\n"},
	/* defaults left out: keepdims=False, transpose's swap of the last two */
	{"graph { %x = input() : (2, 3)\n %s = max(%x) axis=0 keepdims=False\n"
	 " %m = mean(%x) keepdims=false\n %t = transpose(%x) perm=(1, 0) }",
	 "graph {\n"
	 "  %x = input() : (2, 3)\n"
	 "  %s = max(%x) axis=0\n"
	 "  %m = mean(%x)\n"
	 "  %t = transpose(%x)\n"
	 "}\n"},
	{"graph { %x = input() : (2, 3, 4)\n %t = transpose(%x) perm=(0, 2, 1)\n"
	 " %u = transpose(%x) perm=(2, 0, 1)\n %v = transpose(%x) perm=(1, 0, 2)\n"
	 " %w = transpose(%x) perm=(-3, -1, -2)\n %y = transpose(%x) perm=(0, -1, 1) }",
	 "graph {\n"
	 "  %x = input() : (2, 3, 4)\n"
	 "  %t = transpose(%x)\n"
	 "  %u = transpose(%x) perm=(2, 0, 1)\n"
	 "  %v = transpose(%x) perm=(1, 0, 2)\n"
	 "  %w = transpose(%x)\n"
	 "  %y = transpose(%x)\n"
	 "}\n"},
	/* a written value is kept as written: negative axis, -1 in shape */
	{"graph { %x = input() : (2, 3)\n %r = reshape(%x) shape=(-1)\n"
	 " %q = reshape(%x) shape=(3,2,)\n %s = sum(%x) axis=-2 }",
	 "graph {\n"
	 "  %x = input() : (2, 3)\n"
	 "  %r = reshape(%x) shape=(-1,)\n"
	 "  %q = reshape(%x) shape=(3, 2)\n"
	 "  %s = sum(%x) axis=-2\n"
	 "}\n"},
	/* float attributes */
	{"graph { %a = const() : () value=100\n %b = const() : () value=1E-5\n"
	 " %c = const() : () value=-inf\n %d = const() : () value=nan\n"
	 " %e = const() : () value=.25\n %f = const() : () value=1e16 }",
	 "graph {\n"
	 "  %a = const() : () value=100.0\n"
	 "  %b = const() : () value=1e-05\n"
	 "  %c = const() : () value=-inf\n"
	 "  %d = const() : () value=nan\n"
	 "  %e = const() : () value=0.25\n"
	 "  %f = const() : () value=1e+16\n"
	 "}\n"},
	/* return: left out when it equals the default outputs */
	{"graph { %x = input() : (2,)\n %a = relu(%x)\n %b = neg(%x)\n return %a, %b }",
	 "graph {\n"
	 "  %x = input() : (2,)\n"
	 "  %a = relu(%x)\n"
	 "  %b = neg(%x)\n"
	 "}\n"},
	{"graph { %x = input() : (2,)\n %a = relu(%x)\n %b = neg(%x)\n return %b,%a }",
	 "graph {\n"
	 "  %x = input() : (2,)\n"
	 "  %a = relu(%x)\n"
	 "  %b = neg(%x)\n"
	 "  return %b, %a\n"
	 "}\n"},
	{"graph { %x = input() : (2,)\n %a = relu(%x)\n %b = neg(%a)\n return %a }",
	 "graph {\n"
	 "  %x = input() : (2,)\n"
	 "  %a = relu(%x)\n"
	 "  %b = neg(%a)\n"
	 "  return %a\n"
	 "}\n"},
	{"graph { %x = input() : (2,)\n return %x }",
	 "graph {\n"
	 "  %x = input() : (2,)\n"
	 "  return %x\n"
	 "}\n"},
	/* kernels: four-space body, attributes in declared order */
	{"graph{%x=input():(4,8)%W=const():(8,2)\n"
	 "kernel @k0 [matmul_epilogue] warps=4 BN=32 BM=16 {%mm=matmul(%x,%W)\n%r=relu(%mm)}}",
	 "graph {\n"
	 "  %x = input() : (4, 8)\n"
	 "  %W = const() : (8, 2)\n"
	 "  kernel @k0 [matmul_epilogue] BM=16 BN=32 warps=4 {\n"
	 "    %mm = matmul(%x, %W)\n"
	 "    %r = relu(%mm)\n"
	 "  }\n"
	 "}\n"},
	/* v2 types: integers exact (no round trip through double), bools as
	 * True and False, i32/i64/bool keywords after the shape */
	{"graph { %a = const() : (3,) i64 values=(9223372036854775807, -9223372036854775808, 0)\n"
	 " %b = const() : (2,) bool values=(True, 0)\n %c = const() : () i32 value=-7\n"
	 " %d = const() : (2,) bool value=1\n %e = const() : (1, 2, 1, 2, 1, 2, 1, 2) }",
	 "graph {\n"
	 "  %a = const() : (3,) i64 values=(9223372036854775807, -9223372036854775808, 0)\n"
	 "  %b = const() : (2,) bool values=(True, False)\n"
	 "  %c = const() : () i32 value=-7\n"
	 "  %d = const() : (2,) bool value=True\n"
	 "  %e = const() : (1, 2, 1, 2, 1, 2, 1, 2)\n"
	 "}\n"},
	/* v2 attributes in the table's order whatever the written one; a
	 * one-element tuple as (x,); False booleans left out; kernel= is an
	 * attribute, not the kernel keyword */
	{"graph { %x = input() : (1, 2, 5, 5) f32\n %w = input() : (2, 2, 3, 3) f32\n"
	 " %c = conv2d(%x, %w) groups=1 pads=(1,1,1,1) strides=(2, 2)\n"
	 " %p = avg_pool2d(%x) count_include_pad=True ceil_mode=False kernel=(2, 2)\n"
	 " %s = slice(%x) steps=(-1) ends=(0) starts=(4) axes=(3)\n"
	 " %r = sum(%x) keepdims=True axis=(1)\n %t = cast(%x) to=i64\n"
	 " %z = argmax(%x) last=False axis=-1 }",
	 "graph {\n"
	 "  %x = input() : (1, 2, 5, 5) f32\n"
	 "  %w = input() : (2, 2, 3, 3) f32\n"
	 "  %c = conv2d(%x, %w) strides=(2, 2) pads=(1, 1, 1, 1) groups=1\n"
	 "  %p = avg_pool2d(%x) kernel=(2, 2) count_include_pad=True\n"
	 "  %s = slice(%x) starts=(4,) ends=(0,) axes=(3,) steps=(-1,)\n"
	 "  %r = sum(%x) axis=(1,) keepdims=True\n"
	 "  %t = cast(%x) to=i64\n"
	 "  %z = argmax(%x) axis=-1\n"
	 "}\n"},
	/* variadic and three-operand ops */
	{"graph { %a = input() : (2,)\n %b = input() : (2,) bool\n"
	 " %k = concat(%a, %a, %a, %a, %a) axis=0\n %y = where(%b, %a, %a) }",
	 "graph {\n"
	 "  %a = input() : (2,)\n"
	 "  %b = input() : (2,) bool\n"
	 "  %k = concat(%a, %a, %a, %a, %a) axis=0\n"
	 "  %y = where(%b, %a, %a)\n"
	 "}\n"},
	/* the empty graph */
	{"graph<>", "graph {\n}\n"},
};

START_TEST(test_print_canonical)
{
	char *out = reprint(canon[_i].in);

	ck_assert_str_eq(out, canon[_i].out);
	free(out);
}
END_TEST

/* ---- fixed point --------------------------------------------------------- */

static const char *const rt[] = {
	"graph { %x = input() : (64, 48)\n %W = const() : (48, 32)\n %bias = const() : (32)\n"
	"%mm = matmul(%x, %W)\n %ba = add(%mm, %bias)\n %r = relu(%ba)\n"
	"%rowsum = sum(%r) axis=1 keepdims=True }",
	"graph @f32 { %a = input() : (3, 1, 5) f32\n %b = input() : (4, 1) f32\n"
	"%c = mul(%a, %b)\n %d = maximum(%c, %c)\n %e = minimum(%d, %a) : (3, 4, 5) f32 }",
	"graph { %a = input() : ()\n %b = exp(%a)\n %c = log(%b)\n %d = sqrt(%c)\n"
	" %e = tanh(%d)\n %f = sigmoid(%e)\n %g = abs(%f)\n %h = div(%g, %a)\n %i = sub(%h, %h) }",
	"graph { %a = input() : (2, 3, 4, 5)\n %t = transpose(%a) perm=(3, 2, 1, 0)\n"
	" %u = transpose(%a) perm=(-1, 0, 1, 2)\n %r = reshape(%t) shape=(5, -1)\n"
	" %m = mean(%a) axis=-3 keepdims=True\n %x = max(%a) keepdims=true }",
	"graph < %0 = input() : (1,) f32\n %1 = relu(%0)  %2 = neg(%1) return %1 >",
	"graph @a.b { %x.y = input() : (2, 2)\n %_ = const() : (2, 2) value=-1e-300\n"
	" %z = matmul(%x.y, %_) }",
	"graph { %x = input() : (2, 8, 4)\n %w = const() : (2, 4, 3)\n"
	" kernel @k [matmul] BM=16 BN=16 BK=16 warps=2 stages=4 split=2 { %m = matmul(%x, %w) }\n"
	" kernel @e [elementwise] { %n = neg(%m) %o = exp(%n) } return %o, %m }",
	"graph { %c = const() : (7,) value=0.30000000000000004\n"
	" %d = const() : (7,) value=123456789012345678\n %e = const() : (7,) value=5e-324\n"
	" %f = const() : (7,) value=1.7976931348623157e308\n %g = const() : (7,) value=-0.0\n"
	" %h = add(%c, %d) }",
	"graph { %x = input() : (4, 6)\n"
	" kernel @r [row_reduction] { %m = max(%x) axis=-1 keepdims=True %s = sub(%x, %m)\n"
	" %e = exp(%s) }\n %t = sum(%e) axis=1 keepdims=True\n %y = div(%e, %t) }",
	"graph {}",
};

START_TEST(test_print_fixed_point)
{
	char *p1 = reprint(rt[_i]), *p2 = reprint(p1);

	ck_assert_str_eq(p2, p1);
	free(p1);
	free(p2);
}
END_TEST

START_TEST(test_print_fixed_point_after_shape_infer)
{
	/* The output of a pass prints, reparses and prints the same. */
	char *msgs;
	Graph *g = ck_parse(rt[_i], &msgs);
	const Pass *p = pass_lookup(aicm_passes, "shape-infer");
	PassVal vals[1] = {{0}};
	PassArgs a = {p->opts, vals, NULL, false, NULL};
	Diag d;
	FILE *f = fopen("/dev/null", "w");
	char *p1, *p2;

	ck_assert_ptr_nonnull(g);
	free(msgs);
	diag_init(&d, "t.aicm", rt[_i], strlen(rt[_i]), f);
	ck_assert_int_eq(p->run(g, &a, &d), 0);
	ck_assert_int_eq(ir_verify(g, &d), 0);
	diag_free(&d);
	fclose(f);
	p1 = ir_print_str(g, NULL);
	ir_graph_free(g);
	p2 = reprint(p1);
	ck_assert_str_eq(p2, p1);
	free(p1);
	free(p2);
}
END_TEST

/* ---- floats -------------------------------------------------------------- */

static const struct {
	double v;
	const char *text;
} floats[] = {
	{0.0, "0.0"}, {-0.0, "-0.0"}, {1.0, "1.0"}, {-1.0, "-1.0"}, {0.5, "0.5"},
	{0.1, "0.1"}, {100.0, "100.0"}, {123456.0, "123456.0"}, {1e15, "1000000000000000.0"},
	{1e16, "1e+16"}, {1.5e16, "1.5e+16"}, {0.0001, "0.0001"}, {0.00012, "0.00012"},
	{1e-5, "1e-05"}, {1.25e-7, "1.25e-07"}, {1e-300, "1e-300"}, {-1e-300, "-1e-300"},
	{0.30000000000000004, "0.30000000000000004"}, {1.0 / 3, "0.3333333333333333"},
	{2.0 / 3, "0.6666666666666666"}, {5e-324, "5e-324"},
	{1.7976931348623157e308, "1.7976931348623157e+308"},
	{2.2250738585072014e-308, "2.2250738585072014e-308"},
	{12345678901234567890.0, "1.2345678901234567e+19"},
	{9007199254740993.0, "9007199254740992.0"},
	{1234.5678, "1234.5678"}, {3.14159, "3.14159"},
};

START_TEST(test_print_float_text)
{
	char b[64];

	ir_fmt_double(b, sizeof b, floats[_i].v);
	ck_assert_str_eq(b, floats[_i].text);
	ck_assert(strtod(b, NULL) == floats[_i].v);
	ck_assert_int_eq(signbit(strtod(b, NULL)) != 0, signbit(floats[_i].v) != 0);
}
END_TEST

START_TEST(test_print_float_specials)
{
	char b[64];

	ir_fmt_double(b, sizeof b, INFINITY);
	ck_assert_str_eq(b, "inf");
	ir_fmt_double(b, sizeof b, -INFINITY);
	ck_assert_str_eq(b, "-inf");
	ir_fmt_double(b, sizeof b, NAN);
	ck_assert_str_eq(b, "nan");
	ir_fmt_double(b, sizeof b, -NAN);
	ck_assert_str_eq(b, "-nan");
	ck_assert(signbit(strtod(b, NULL)));
}
END_TEST

/* The count of significant digits in a printed float. */
static int
sig_digits(const char *s)
{
	int n = 0, lead = 1, trail = 0;

	for (; *s && *s != 'e'; s++) {
		if (*s < '0' || *s > '9')
			continue;
		if (lead && *s == '0')
			continue;
		lead = 0;
		n++;
		trail = *s == '0' ? trail + 1 : 0;
	}
	return n - trail;
}

static uint64_t
splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

START_TEST(test_print_float_shortest_random)
{
	/* Random bit patterns over the whole range: each reads back exactly,
	 * and one digit fewer would not. */
	uint64_t seed = 42;

	for (int k = 0; k < 20000; k++) {
		uint64_t bits = splitmix(&seed);
		double v, back;
		char b[64], shorter[64];
		int p;

		memcpy(&v, &bits, sizeof v);
		if (!isfinite(v))
			continue;
		if (k % 2)
			v = (double)(bits >> 11) / 9007199254740992.0 * pow(10, (int)(bits % 40) - 20);
		ir_fmt_double(b, sizeof b, v);
		back = strtod(b, NULL);
		ck_assert_msg(back == v && signbit(back) == signbit(v), "%s does not read back to %.17g",
		    b, v);
		ck_assert_msg(strpbrk(b, ".e") != NULL, "%s reads back as an integer", b);
		p = sig_digits(b);
		if (p > 1 && v != 0) {
			snprintf(shorter, sizeof shorter, "%.*e", p - 2, v);
			ck_assert_msg(strtod(shorter, NULL) != v, "%s is not the shortest: %s", b,
			    shorter);
		}
	}
}
END_TEST

START_TEST(test_print_float_attr_round_trip)
{
	/* Through the whole text path: print, parse, same bits. */
	uint64_t seed = 7;

	for (int k = 0; k < 200; k++) {
		uint64_t bits = splitmix(&seed);
		double v;
		char src[160], *msgs;
		Graph *g;

		memcpy(&v, &bits, sizeof v);
		if (isnan(v))
			continue;
		snprintf(src, sizeof src, "graph { %%c = const() : () value=");
		ir_fmt_double(src + strlen(src), 64, v);
		strcat(src, " }");
		g = ck_parse(src, &msgs);
		ck_assert_msg(g != NULL, "%s: %s", src, msgs);
		free(msgs);
		ck_assert_msg(memcmp(&g->nodes[0].at.value, &v, sizeof v) == 0, "%s", src);
		ir_graph_free(g);
	}
}
END_TEST

/* Every byte but NUL through file=: the printer escapes '"', '\\' and the
 * bytes outside printable ASCII, and what it prints reads back the same. */
START_TEST(test_print_string_escapes)
{
	char src[1200], *once, *twice;
	size_t m = 0;

	m += (size_t)snprintf(src + m, sizeof src - m, "graph {\n  %%w = const() : (2,) file=\"");
	for (int c = 1; c < 256; c++)
		m += (size_t)snprintf(src + m, sizeof src - m, "\\x%02x", c);
	snprintf(src + m, sizeof src - m, "\"\n}\n");
	once = reprint(src);
	ck_assert_ptr_nonnull(strstr(once, "file=\"\\x01\\x02"));
	ck_assert_ptr_nonnull(strstr(once, "\\x08\\t\\n\\x0b"));
	ck_assert_ptr_nonnull(strstr(once, "\\x1f !\\\"#"));
	ck_assert_ptr_nonnull(strstr(once, "[\\\\]"));
	ck_assert_ptr_nonnull(strstr(once, "}~\\x7f\\x80"));
	ck_assert_ptr_nonnull(strstr(once, "\\xfe\\xff\"\n"));
	twice = reprint(once);
	ck_assert_str_eq(once, twice);
	free(once);
	free(twice);
}
END_TEST

/* values= prints each element as the shortest text that reads back the
 * same double, one element as '(x,)'; the printed form is a fixed point. */
START_TEST(test_print_values)
{
	char *once = reprint("graph {\n  %c = const() : (2, 3) values=(0.1, -2e-3, 1e300, inf, "
	    "-inf, nan)\n  %s = const() : () f32 values=(5)\n}\n"), *twice;

	ck_assert_ptr_nonnull(strstr(once, "values=(0.1, -0.002, 1e+300, inf, -inf, nan)\n"));
	ck_assert_ptr_nonnull(strstr(once, "f32 values=(5.0,)\n"));
	twice = reprint(once);
	ck_assert_str_eq(once, twice);
	free(once);
	free(twice);
}
END_TEST

Suite *
make_print_suite(void)
{
	Suite *s = suite_create("print");
	TCase *tc;

	tc = tcase_create("canonical");
	tcase_add_loop_test(tc, test_print_canonical, 0, (int)(sizeof canon / sizeof canon[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("fixed_point");
	tcase_add_loop_test(tc, test_print_fixed_point, 0, (int)(sizeof rt / sizeof rt[0]));
	tcase_add_loop_test(tc, test_print_fixed_point_after_shape_infer, 0,
	    (int)(sizeof rt / sizeof rt[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("floats");
	/* 20,000 random doubles: well under a second, but not under ASan and
	 * valgrind on a busy machine. */
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_print_float_text, 0, (int)(sizeof floats / sizeof floats[0]));
	tcase_add_test(tc, test_print_float_specials);
	tcase_add_test(tc, test_print_float_shortest_random);
	tcase_add_test(tc, test_print_float_attr_round_trip);
	tcase_add_test(tc, test_print_string_escapes);
	tcase_add_test(tc, test_print_values);
	suite_add_tcase(s, tc);
	return s;
}
