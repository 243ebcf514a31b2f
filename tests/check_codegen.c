/*
 * check_codegen.c: the C emitter (src/codegen/emit_c.h).
 *
 * NAME from the graph's name or the file's stem, made an identifier; the
 * text deterministic (the same graph twice gives the same bytes, which the
 * native engine's cache key needs); the header's fields in their order
 * (inputs, constants, outputs, intermediates) and the module including it
 * by the name it was given; an unlowered graph refused with a located
 * error.  Whether the C computes the right thing is the native engine's
 * tests' (tests/aot.sh, tests/native.sh, the random graphs).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "emit_c.h"

static const char *const src =
    "graph {\n"
    "  %x = input() : (33, 97)\n"
    "  %w = const() : (97,)\n"
    "  %m = mul(%x, %w)\n"
    "  %r = relu(%m)\n"
    "  %s = sum(%r) axis=1\n"
    "  %t = exp(%s)\n"
    "}\n";

START_TEST(test_codegen_name)
{
	Graph *g = ck_parse("graph @my.model {\n  %x = input() : (2,)\n}\n", NULL);
	Graph *u = ck_parse("graph {\n  %x = input() : (2,)\n}\n", NULL);
	char *n;

	ck_assert_ptr_nonnull(u);
	n = codegen_c_name(u, "some/dir/2-layer net.aicm");
	ck_assert_str_eq(n, "m2_layer_net");
	free(n);
	n = codegen_c_name(u, NULL);
	ck_assert_str_eq(n, "model");
	free(n);
	n = codegen_c_name(u, "for.aicm");        /* a keyword gets a '_' */
	ck_assert_str_eq(n, "for_");
	free(n);
	if (g) {
		n = codegen_c_name(g, "x.aicm");     /* the graph's own name first */
		ck_assert_str_eq(n, "my_model");
		free(n);
		ir_graph_free(g);
	}
	ir_graph_free(u);
}
END_TEST

START_TEST(test_codegen_deterministic)
{
	Graph *g = ck_pipeline(src, "shape-infer,fuse,lower-tiled");
	StrBuf c1 = {0}, c2 = {0}, h1 = {0}, h2 = {0};
	Diag d;
	const char *in, *co, *out, *mid;

	ck_assert_ptr_nonnull(g);
	diag_init(&d, "t.aicm", "", 0, stderr);
	ck_assert_int_eq(codegen_c(g, "t", "t.h", &c1, &h1, &d), 0);
	ck_assert_int_eq(codegen_c(g, "t", "t.h", &c2, &h2, &d), 0);
	ck_assert_str_eq(c1.s, c2.s);
	ck_assert_str_eq(h1.s, h2.s);
	ck_assert_ptr_nonnull(strstr(c1.s, "#include \"t.h\""));
	ck_assert_ptr_nonnull(strstr(c1.s, "int\nt_run(const t_args *args, int threads)"));
	ck_assert_ptr_nonnull(strstr(c1.s, "static void\nt_kernel0(const t_args *a, long lo, long hi)"));
	/* the fields: inputs, constants, outputs, then intermediates */
	in = strstr(h1.s, "const double *x;");
	co = strstr(h1.s, "const double *w;");
	out = strstr(h1.s, "\tdouble *t;");
	mid = strstr(h1.s, "/* intermediates: leave NULL");
	ck_assert(in && co && out && mid && in < co && co < out && out < mid);
	ck_assert_ptr_nonnull(strstr(h1.s, "#define t_x_NUMEL 3201   /* %x: (33, 97) f64 */"));
	/* each statement carries its tile-IR line */
	ck_assert_ptr_nonnull(strstr(c1.s, "/* %m = program_id() axis=0 */"));
	/* without a header name the module stands alone */
	free(c2.s);
	c2 = (StrBuf){0};
	ck_assert_int_eq(codegen_c(g, "t", NULL, &c2, NULL, &d), 0);
	ck_assert_ptr_null(strstr(c2.s, "#include \"t.h\""));
	ck_assert_ptr_nonnull(strstr(c2.s, "typedef struct t_args {"));
	free(c1.s);
	free(c2.s);
	free(h1.s);
	free(h2.s);
	diag_free(&d);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_codegen_refuses_unlowered)
{
	Graph *g = ck_pipeline(src, "shape-infer");
	StrBuf c = {0}, h = {0};
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	Diag d;

	ck_assert_ptr_nonnull(g);
	diag_init(&d, "t.aicm", src, strlen(src), f);
	ck_assert_int_eq(codegen_c(g, "t", NULL, &c, &h, &d), -1);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "t.aicm:4:3: error: '%m' is not lowered; the C emitter "
	    "writes tiled kernels only (run lower-tiled)"));
	free(buf);
	free(c.s);
	free(h.s);
	diag_free(&d);
	ir_graph_free(g);
}
END_TEST

Suite *
make_codegen_suite(void)
{
	Suite *s = suite_create("codegen");
	TCase *tc = tcase_create("emit_c");

	tcase_add_test(tc, test_codegen_name);
	tcase_add_test(tc, test_codegen_deterministic);
	tcase_add_test(tc, test_codegen_refuses_unlowered);
	suite_add_tcase(s, tc);
	return s;
}
