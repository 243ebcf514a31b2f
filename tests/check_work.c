/*
 * check_work.c: src/runtime/work.c, the planned flops that --max-work
 * bounds.
 *
 * Graph ops count by the op table (2*M*N*K for a matmul), at least one per
 * result element; a tiled body counts its instructions' tiles times their
 * loops' trips times the grid; anything counts at least 1024.  The figures here are worked by hand; the
 * goldens testdata/run/max-work*.aicm check the messages.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "exec.h"
#include "tile.h"

START_TEST(test_work_graph_ops)
{
	Graph *g = ck_parse(
	    "graph {\n"
	    "  %x = input() : (64, 32)\n"
	    "  %w = const() : (32, 48)\n"
	    "  %m = matmul(%x, %w) : (64, 48)\n"
	    "  %r = relu(%m) : (64, 48)\n"
	    "  %s = sum(%r) : (64, 1) axis=1 keepdims=True\n"
	    "  %t = transpose(%r) : (48, 64)\n"
	    "  %n = neg(%s) : (64, 1)\n"
	    "}\n", NULL);

	ck_assert_ptr_nonnull(g);
	ck_assert(exec_node_work(g, 0) == 0);           /* sources run nothing */
	ck_assert(exec_node_work(g, 1) == 0);
	ck_assert(exec_node_work(g, 2) == 2.0 * 64 * 48 * 32);
	ck_assert(exec_node_work(g, 3) == 64 * 48);
	ck_assert(exec_node_work(g, 4) == 64 * 48);     /* the elements it reads */
	ck_assert(exec_node_work(g, 5) == 64 * 48);     /* no flops, but all moved */
	ck_assert(exec_node_work(g, 6) == 1024);        /* 64 flops: the floor */
	ir_graph_free(g);
}
END_TEST

/* A loop of ceil((hi - lo) / step) trips around a dot of 2*M*N*K; an
 * instruction on a small tile or a scalar counts 1024. */
START_TEST(test_work_tile_loops)
{
	Graph *g = ck_parse(
	    "graph {\n"
	    "  %a = input() : (64, 80)\n"
	    "  %b = input() : (80, 96)\n"
	    "  %c = tiled @k [matmul] (%a, %b) : (64, 96) grid=(2, 3) BM=32 BN=32 BK=64 {\n"
	    "    %m = program_id() axis=0\n"
	    "    %n = program_id() axis=1\n"
	    "    %z = zeros() : [32, 32]\n"
	    "    %acc = for %i = 0 to 80 step 64 iter(%p = %z) {\n"
	    "      %at = load %a[%m * 32, %i] : [32, 64] other=0.0\n"
	    "      %bt = load %b[%i, %n * 32] : [64, 32] other=0.0\n"
	    "      %q = dot(%at, %bt, %p) : [32, 32]\n"
	    "      yield %q\n"
	    "    }\n"
	    "    store %c[%m * 32, %n * 32], %acc masked\n"
	    "  }\n"
	    "}\n", NULL);
	double per = -1, all;
	const int runs[1] = {1};
	int64_t lim = 0;
	Diag d;
	FILE *sink = fopen("/dev/null", "w");
	const Graph *gs[1];

	ck_assert_ptr_nonnull(g);
	ck_assert_ptr_nonnull(sink);
	/* program_id 2 x 1024, zeros 1024, for 1024, 2 trips of (2048 + 2048
	 * + 2*32*32*64 + 1024 for the yield), store 1024 */
	all = exec_tile_work(g->nodes[2].tile, &per);
	ck_assert(per == 2048 + 1024 + 1024 + 2 * (2048 + 2048 + 131072 + 1024) + 1024);
	ck_assert(all == per * 6);
	ck_assert(exec_node_work(g, 2) == all);
	gs[0] = g;
	diag_init(&d, "t.aicm", "", 0, sink);
	ck_assert_int_eq(exec_check_work(gs, runs, 1, lim, &d), 0);   /* 0: no limit */
	lim = (int64_t)all;
	ck_assert_int_eq(exec_check_work(gs, runs, 1, lim, &d), 0);
	lim = (int64_t)all - 1;
	ck_assert_int_eq(exec_check_work(gs, runs, 1, lim, &d), -1);
	ck_assert_int_eq(d.nerr, 1);
	diag_free(&d);
	fclose(sink);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_work_limit_str)
{
	char b[32];

	ck_assert_str_eq(exec_work_str(1000000000000LL, b, sizeof b), "1T");
	ck_assert_str_eq(exec_work_str(2500000000LL, b, sizeof b), "2500M");
	ck_assert_str_eq(exec_work_str(7785, b, sizeof b), "7785");
	ck_assert_str_eq(exec_work_str(0, b, sizeof b), "0");
}
END_TEST

Suite *
make_work_suite(void)
{
	Suite *s = suite_create("work");
	TCase *tc = tcase_create("plan");

	tcase_add_test(tc, test_work_graph_ops);
	tcase_add_test(tc, test_work_tile_loops);
	tcase_add_test(tc, test_work_limit_str);
	suite_add_tcase(s, tc);
	return s;
}
