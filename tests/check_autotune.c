/*
 * check_autotune.c: the cost model's traffic against the seed's figures and
 * the traffic contract, the model's properties (padding pays, smaller tiles
 * move more, bandwidth only lowers mem, what does not fit is never chosen),
 * the pass's determinism, and that kernels of one signature share a tuning
 * through a hash table that stays linear (full comparisons counted through
 * a test hook) and right when every hash collides.  One test prints how
 * long scoring takes (docs/perf.md records it); it asserts nothing about
 * time.
 */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_aicm.h"
#include "pass.h"
#include "../passes/cost.h"
#include "../passes/passes.h"

static const char *seed =
    "graph {\n"
    "  %x = input() : (64, 48)\n"
    "  %W = const() : (48, 32)\n"
    "  %bias = const() : (32,)\n"
    "  kernel @kernel0 [matmul_epilogue] {\n"
    "    %mm = matmul(%x, %W) : (64, 32)\n"
    "    %bias_add = add(%mm, %bias) : (64, 32)\n"
    "    %relu = relu(%bias_add) : (64, 32)\n"
    "    %rowsum = sum(%relu) : (64, 1) axis=1 keepdims=True\n"
    "  }\n"
    "}\n";

static Graph *
parse_ok(const char *src)
{
	char *msgs = NULL;
	Graph *g = ck_parse(src, &msgs);

	ck_assert_msg(g != NULL, "parse failed: %s", msgs ? msgs : "");
	free(msgs);
	return g;
}

static Graph *
matmul_graph(int m, int k, int n, const char *dt)
{
	char src[512];

	snprintf(src, sizeof src,
	    "graph {\n  %%a = input() : (%d, %d)%s\n  %%b = input() : (%d, %d)%s\n"
	    "  kernel @k [matmul] {\n    %%c = matmul(%%a, %%b) : (%d, %d)%s\n  }\n}\n",
	    m, k, dt, k, n, dt, m, n, dt);
	return parse_ok(src);
}

/* Runs `pipeline` on g; returns the printed IR (malloc'd) and the report in
 * *report (malloc'd) when asked. */
static char *
run_pipeline(Graph *g, const char *pipeline, char **report, int *rc)
{
	Pipeline pl;
	char *rbuf = NULL, *dbuf = NULL, *out;
	size_t rn = 0, dn = 0, len;
	FILE *rf = open_memstream(&rbuf, &rn), *df = open_memstream(&dbuf, &dn);
	Diag d;
	PassRun run = {.verify_each = true, .report = rf};

	ck_assert_int_eq(pass_parse_pipeline(aicm_passes, pipeline, &pl, df, "check"), 0);
	diag_init(&d, "t.aicm", "", 0, df);
	*rc = pass_run_pipeline(g, &pl, &run, &d);
	pass_free_pipeline(&pl);
	diag_free(&d);
	fclose(rf);
	fclose(df);
	free(dbuf);
	if (report)
		*report = rbuf;
	else
		free(rbuf);
	out = ir_print_str(g, &len);
	return out;
}

/* ---- traffic: the seed's figures -------------------------------------- */

START_TEST(test_traffic_seed_matmul)
{
	/* scenario 4: M=100 K=60 N=84 at 32x32x32, a matmul outside any kernel */
	Graph *g = parse_ok("graph {\n  %a = input() : (100, 60)\n  %b = input() : (60, 84)\n"
	    "  %c = matmul(%a, %b) : (100, 84)\n}\n");
	TileConfig c = {32, 32, 32, 4, 3, 0};
	Traffic t;

	cost_traffic_node(g, 2, &c, &t);
	ck_assert(t.ok);
	ck_assert_int_eq(t.grid[0], 4);
	ck_assert_int_eq(t.grid[1], 3);
	ck_assert_int_eq(t.programs, 12);
	ck_assert_int_eq(t.loaded, 305280);     /* 3 x 48,000 + 4 x 40,320 */
	ck_assert_int_eq(t.stored, 67200);
	ck_assert_int_eq(t.flops, 2 * 100 * 84 * 60);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_traffic_seed_chain)
{
	/* scenario 6: 24,576 + 12,288 + 256 loaded, 512 stored, one program */
	Graph *g = parse_ok(seed);
	TileConfig c = {64, 32, 16, 4, 3, 0};
	Traffic t, r;

	cost_traffic(g, 0, &c, &t);
	ck_assert(t.ok);
	ck_assert_int_eq(t.programs, 1);
	ck_assert_int_eq(t.loaded, 37120);
	ck_assert_int_eq(t.stored, 512);
	/* flops: 2MNK + add + relu + sum */
	ck_assert_int_eq(t.flops, 2 * 64 * 32 * 48 + 3 * 64 * 32);
	cost_traffic_range(g, KK_MATMUL_EPILOGUE, 3, 6, &c, &r);
	ck_assert_int_eq(r.loaded, t.loaded);
	ck_assert_int_eq(r.stored, t.stored);

	/* BN=16: two column tiles share each row's sum: init + 2 atomics */
	c.bn = 16;
	cost_traffic(g, 0, &c, &t);
	ck_assert_int_eq(t.grid[1], 2);
	ck_assert_int_eq(t.loaded, 2 * 24576 + 12288 + 256 + 2 * 64 * 8);
	ck_assert_int_eq(t.stored, (64 + 2 * 64) * 8);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_traffic_fused_vs_eager)
{
	/* scenario 5: relu(x).sum(axis=1), x 128x96 f64 */
	Graph *g = parse_ok("graph {\n  %x = input() : (128, 96)\n  %r = relu(%x) : (128, 96)\n"
	    "  %s = sum(%r) : (128,) axis=1\n}\n");
	TileConfig c = {32, 32, 32, 4, 3, 0};
	Traffic f, e1, e2;

	cost_traffic_range(g, KK_REDUCTION, 1, 2, &c, &f);
	ck_assert_int_eq(f.loaded + f.stored, 99328);
	cost_traffic_node(g, 1, &c, &e1);
	cost_traffic_node(g, 2, &c, &e2);
	ck_assert_int_eq(e1.loaded, 98304);
	ck_assert_int_eq(e1.stored, 98304);
	ck_assert_int_eq(e2.loaded, 98304);
	ck_assert_int_eq(e2.stored, 1024);
	ck_assert_int_eq(e1.loaded + e1.stored + e2.loaded + e2.stored, 295936);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_traffic_split_and_broadcast)
{
	/* a full reduction split 4 ways: init 1 + 4 atomics; a broadcast (1, N)
	 * operand of an elementwise kernel is loaded once per row tile */
	Graph *g = parse_ok("graph {\n  %x = input() : (100, 40)\n  %b = input() : (1, 40)\n"
	    "  kernel @e [elementwise] {\n    %y = mul(%x, %b) : (100, 40)\n  }\n"
	    "  kernel @s [reduction] split=4 {\n    %t = sum(%y) : ()\n  }\n}\n");
	TileConfig c = {16, 32, 0, 4, 0, 0};
	Traffic t;

	cost_traffic(g, 0, &c, &t);
	ck_assert_int_eq(t.grid[0], 7);
	ck_assert_int_eq(t.grid[1], 2);
	ck_assert_int_eq(t.loaded, (100 * 40 + 7 * 40) * 8);
	ck_assert_int_eq(t.stored, 100 * 40 * 8);
	cost_traffic(g, 1, &c, &t);
	ck_assert_int_eq(t.programs, 4);
	ck_assert_int_eq(t.loaded, (4000 + 4) * 8);
	ck_assert_int_eq(t.stored, (1 + 4) * 8);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_traffic_full_reduce_reloads)
{
	/* figures cross-checked with the tile executor's KernelStats: a full
	 * reduction reloads a broadcast operand once per iteration of the loops
	 * outside its own innermost dimension; split=2 cuts the outer loop in
	 * two chunks of 3 (6 iterations for 5 rows); mean scales each partial */
	Graph *g = parse_ok("graph {\n  %x = input() : (5, 6, 70)\n  %v = input() : (70,)\n"
	    "  %w = input() : (6, 1)\n"
	    "  kernel @f [reduction] {\n    %y = add(%x, %v) : (5, 6, 70)\n"
	    "    %y3 = mul(%y, %w) : (5, 6, 70)\n    %s = sum(%y3) : ()\n  }\n"
	    "  kernel @f2 [reduction] split=2 {\n    %y2 = add(%x, %w) : (5, 6, 70)\n"
	    "    %s2 = mean(%y2) : ()\n  }\n}\n");
	TileConfig c = {1, 32, 0, 4, 0, 0};
	Traffic t;

	cost_traffic(g, 0, &c, &t);
	ck_assert_int_eq(t.programs, 1);
	ck_assert_int_eq(t.loaded, 33840);      /* x 16,800 + v 5*6*70*8 + w 5*6*8 */
	ck_assert_int_eq(t.stored, 8);
	cost_traffic(g, 1, &c, &t);
	ck_assert_int_eq(t.programs, 2);
	ck_assert_int_eq(t.loaded, 17104);      /* x 16,800 + w 6*6*8 + 2 atomics */
	ck_assert_int_eq(t.stored, 24);
	ck_assert_int_eq(t.flops, 4202);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_traffic_leading_dims_on_axis2)
{
	/* rank 4 elementwise: [BM, BN] over the last two dimensions, the
	 * leading ones on grid axis 2, one position per program */
	Graph *g = parse_ok("graph {\n  %q = input() : (2, 3, 4, 5)\n  %r = input() : (3, 1, 5)\n"
	    "  kernel @e [elementwise] {\n    %c = add(%q, %r) : (2, 3, 4, 5)\n  }\n"
	    "  kernel @m [reduction] {\n    %s = mean(%c) : (2, 3, 5) axis=2\n  }\n}\n");
	TileConfig c = {4, 32, 0, 4, 0, 0};
	Traffic t;

	cost_traffic(g, 0, &c, &t);
	ck_assert_int_eq(t.grid[0], 1);
	ck_assert_int_eq(t.grid[1], 1);
	ck_assert_int_eq(t.grid[2], 6);
	ck_assert_int_eq(t.loaded, (120 + 6 * 5) * 8);   /* %r: one row per program */
	ck_assert_int_eq(t.stored, 120 * 8);
	cost_traffic(g, 1, &c, &t);
	ck_assert_int_eq(t.grid[0], 2);
	ck_assert_int_eq(t.grid[2], 6);
	ck_assert_int_eq(t.flops, 120 + 30);
	/* one row a program: the rows still walk axis 0, as lower-tiled has it */
	c.bm = 1;
	cost_traffic(g, 1, &c, &t);
	ck_assert_int_eq(t.grid[0], 5);
	ck_assert_int_eq(t.grid[1], 1);
	ck_assert_int_eq(t.grid[2], 6);
	ir_graph_free(g);
}
END_TEST

/* ---- properties ------------------------------------------------------- */

START_TEST(test_model_padding_penalty)
{
	Graph *g = matmul_graph(100, 100, 100, "");
	Graph *h = matmul_graph(128, 128, 128, "");
	TileConfig c = {32, 32, 32, 4, 3, 0};
	Traffic t;
	Score s;

	cost_traffic(g, 0, &c, &t);
	cost_score(&cost_targets[0], DT_F64, &t, &s);
	ck_assert(s.waste > 0);
	ck_assert(s.padding_pct > 0);
	cost_traffic(h, 0, &c, &t);
	cost_score(&cost_targets[0], DT_F64, &t, &s);
	ck_assert(s.waste == 0);
	ck_assert(s.padding_pct == 0);
	ir_graph_free(g);
	ir_graph_free(h);
}
END_TEST

START_TEST(test_model_smaller_tiles_move_more)
{
	static const int blk[] = {16, 32, 64, 128};
	Graph *g = matmul_graph(256, 256, 256, "");

	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++) {
			TileConfig big = {blk[a], blk[b], 32, 4, 3, 0};
			Traffic tb;

			cost_traffic(g, 0, &big, &tb);
			for (int a2 = 0; a2 <= a; a2++)
				for (int b2 = 0; b2 <= b; b2++) {
					TileConfig sm = {blk[a2], blk[b2], 32, 4, 3, 0};
					Traffic ts;

					cost_traffic(g, 0, &sm, &ts);
					if (a2 < a || b2 < b)
						ck_assert_int_gt(ts.loaded, tb.loaded);
					ck_assert_int_eq(ts.stored, tb.stored);
				}
		}
	ir_graph_free(g);
}
END_TEST

START_TEST(test_model_bandwidth_lowers_mem)
{
	Graph *g = parse_ok(seed);
	CostModel *m = cost_model_new(g, 0);
	TileConfig sp[COST_MAX_SPACE];
	int n = cost_space(cost_model_problem(m), sp);

	ck_assert_int_eq(n, 576);
	for (int i = 0; i < n; i++) {
		Traffic t;
		double prev = 1e300;

		cost_model_traffic(m, &sp[i], &t);
		for (double bw = 100; bw < 100000; bw *= 1.7) {
			Target tg = cost_targets[0];
			Score s;

			tg.hbm_gbs = bw;
			cost_score(&tg, DT_F64, &t, &s);
			ck_assert(s.mem <= prev);
			prev = s.mem;
		}
	}
	cost_model_free(m);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_model_never_chooses_unfit)
{
	/* squeeze shared memory and registers: the winner must still fit */
	static const char *const pipes[] = {
		"autotune{smem-kb=8}", "autotune{regs-per-thread=64}",
		"autotune{target=a100,smem-kb=20,regs-per-thread=100}", "autotune{target=cpu}",
		"autotune{target=cpu-tile}",
	};
	static const char *const dts[] = {"", " f32"};

	for (int p = 0; p < 5; p++)
		for (int d = 0; d < 2; d++) {
			Graph *g = matmul_graph(256, 256, 256, dts[d]);
			Target t;
			Problem pr;
			TileConfig c;
			int rc;
			char *out = run_pipeline(g, pipes[p], NULL, &rc);
			const Kernel *k = &g->kernels[0];

			ck_assert_int_eq(rc, 0);
			free(out);
			t = *cost_target_lookup(strstr(pipes[p], "a100") ? "a100" :
			    strstr(pipes[p], "cpu-tile") ? "cpu-tile" : strstr(pipes[p], "cpu") ? "cpu" :
			    "h100");
			if (strstr(pipes[p], "smem-kb=8"))
				t.smem_kb = 8;
			if (strstr(pipes[p], "smem-kb=20"))
				t.smem_kb = 20;
			if (strstr(pipes[p], "regs-per-thread=64"))
				t.regs_per_thread = 64;
			if (strstr(pipes[p], "regs-per-thread=100"))
				t.regs_per_thread = 100;
			ck_assert_uint_eq(k->kset & 0x1f, 0x1f);
			c = (TileConfig){(int)k->kattr[KA_BM], (int)k->kattr[KA_BN], (int)k->kattr[KA_BK],
			    (int)k->kattr[KA_WARPS], (int)k->kattr[KA_STAGES], 0};
			cost_problem(g, k->kind, k->first, k->last, &pr);
			ck_assert_int_eq(cost_prune(&t, &pr, &c), PR_NONE);
			ck_assert(cost_smem_bytes(&pr, &c) <= t.smem_kb * 1024);
			ir_graph_free(g);
		}
}
END_TEST

/* ---- the pass --------------------------------------------------------- */

/* ---- the cpu targets' terms (issue 18 item 6) ------------------------ */

/* An elementwise add of two 64 x 4096 f64 operands: runs and line waste. */
START_TEST(test_model_contiguity_runs)
{
	Graph *g = parse_ok("graph {\n  %x = input() : (64, 4096)\n  %y = input() : (64, 4096)\n"
	    "  kernel @k [elementwise] {\n    %o = add(%x, %y) : (64, 4096)\n  }\n}\n");
	TileConfig c = {16, 4, 0, 4, 0, 0};
	Traffic t;
	double elems = 64.0 * 4096.0;

	/* BN=4: every tile row is a run of 4 elements (32 bytes), half a
	 * line wasted per run, for both loads and the store */
	cost_traffic(g, 0, &c, &t);
	ck_assert(t.ok);
	ck_assert(fabs(t.segs - 3 * elems / 4) < 1e-6);
	ck_assert(fabs(t.line_waste - 3 * elems / 4 * 32) < 1e-6);
	/* BN=4096: a 16-row tile of whole rows is one run of 16 x 4096 */
	c.bn = 4096;
	cost_traffic(g, 0, &c, &t);
	ck_assert(fabs(t.segs - 3 * elems / (16 * 4096)) < 1e-6);
	ck_assert(t.line_waste == 0);
	ir_graph_free(g);
}
END_TEST

/* A transposed view reads its runs along its dim of stride 1 (the rows
 * of the iteration, BM), and past the L1 wastes a line per element. */
START_TEST(test_model_contiguity_transposed_view)
{
	Graph *g = parse_ok("graph {\n  %x = input() : (1024, 1024)\n  %y = input() : (1024, 1024)\n"
	    "  kernel @k [elementwise] {\n    %t = transpose(%x) : (1024, 1024)\n"
	    "    %o = add(%t, %y) : (1024, 1024)\n  }\n}\n");
	TileConfig small = {64, 64, 0, 4, 0, 0}, wide = {64, 1024, 0, 4, 0, 0};
	Traffic a, b;
	double elems = 1024.0 * 1024.0;

	cost_traffic(g, 0, &small, &a);
	cost_traffic(g, 0, &wide, &b);
	ck_assert(a.ok && b.ok);
	/* x^T: runs of BM = 64; y and the store: runs of BN, or of whole
	 * rows when BN holds the row */
	ck_assert(fabs(a.segs - (elems / 64 + 2 * elems / 64)) < 1e-6);
	ck_assert(fabs(b.segs - (elems / 64 + 2 * elems / (64 * 1024))) < 1e-6);
	/* 64 lines at once fit the L1, 1024 do not: 56 bytes per element */
	ck_assert(a.line_waste == 0);
	ck_assert(fabs(b.line_waste - elems * 56) < 1e-6);
	ir_graph_free(g);
}
END_TEST

/* The elementwise and reduction spaces hold the row's width; the
 * cpu-tile target charges tiles that outgrow its L2, and not those that
 * fit; the GPU targets charge neither term. */
START_TEST(test_model_row_width_and_l2)
{
	Graph *g = parse_ok("graph {\n  %x = input() : (4096, 4096)\n  %y = input() : (4096, 4096)\n"
	    "  kernel @k [elementwise] {\n    %o = add(%x, %y) : (4096, 4096)\n  }\n}\n");
	CostModel *m = cost_model_new(g, 0);
	TileConfig sp[COST_MAX_SPACE];
	int n = cost_space(cost_model_problem(m), sp), wide = 0;
	const Target *tile = cost_target_lookup("cpu-tile"), *h100 = cost_target_lookup("h100");
	TileConfig fit = {1, 4096, 0, 4, 0, 0}, spill = {64, 4096, 0, 4, 0, 0};
	Traffic a, b;
	Score sa, sb;

	for (int i = 0; i < n; i++)
		wide += sp[i].bn == 4096;
	ck_assert_int_eq(wide, 4 * 3);          /* each BM, each warps */
	ck_assert_ptr_nonnull(tile);
	ck_assert(tile->l2_kb > 0 && tile->seg_ns > 0);
	cost_model_traffic(m, &fit, &a);
	cost_model_traffic(m, &spill, &b);
	/* 3 tiles (x, y, o) of 1 x 4096 f64: 96 KiB; of 64 x 4096: 6 MiB */
	ck_assert(fabs(a.tile_foot - 3 * 4096 * 8) < 1e-6);
	ck_assert(fabs(b.tile_foot - 64 * 3 * 4096 * 8) < 1e-6);
	cost_score(tile, DT_F64, &a, &sa);
	cost_score(tile, DT_F64, &b, &sb);
	/* runs and line waste on both, the spill of the tiles' traffic on
	 * the one that outgrows the L2 alone */
	ck_assert(fabs(sa.contig - (a.segs / tile->sms * tile->seg_ns / 1e6 +
	    a.line_waste / (tile->hbm_gbs * 1e6))) < 1e-12);
	ck_assert(fabs(sb.contig - (b.segs / tile->sms * tile->seg_ns / 1e6 +
	    (b.line_waste + b.tile_bytes) / (tile->hbm_gbs * 1e6))) < 1e-12);
	ck_assert(b.tile_bytes > 0);
	cost_score(h100, DT_F64, &b, &sb);
	ck_assert(sb.contig == 0);
	cost_model_free(m);
	ir_graph_free(g);
}
END_TEST

/* The rule of l2-kb, whatever a fit made of it: a program whose tiles
 * outgrow l2-kb pays its ops' tile traffic at the memory's bandwidth, one
 * whose tiles fit pays none, and l2-kb 0 is no such term.  Which cache each
 * engine's tiles must fit is fitted (bench/calibrate.py) and may change
 * with a refit, so the thresholds here are set, on both cpu rows. */
START_TEST(test_model_cpu_targets_tile_caches)
{
	Graph *g = parse_ok("graph {\n  %x = input() : (4096, 4096)\n  %y = input() : (4096, 4096)\n"
	    "  kernel @k [elementwise] {\n    %o = add(%x, %y) : (4096, 4096)\n  }\n}\n");
	const char *names[] = {"cpu", "cpu-tile"};
	TileConfig mid = {16, 256, 0, 4, 0, 0}, small = {1, 256, 0, 4, 0, 0};
	Traffic a, b;
	Score s;

	cost_traffic(g, 0, &mid, &a);
	cost_traffic(g, 0, &small, &b);
	ck_assert(a.ok && b.ok);
	/* x's, y's and o's tiles: 16 rows of 256 f64 */
	ck_assert(fabs(a.tile_foot - 3 * 16 * 256 * 8) < 1e-6);
	ck_assert(fabs(b.tile_foot - 3 * 1 * 256 * 8) < 1e-6);
	ck_assert(a.tile_bytes > 0);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const Target *base = cost_target_lookup(names[i]);
		Target t;
		double runs;

		ck_assert_ptr_nonnull(base);
		t = *base;
		t.seg_ns = 5;   /* the runs' term on, whatever the fit made of it */
		ck_assert(t.hbm_gbs > 0);
		/* a cache between the two footprints: the 16-row tiles spill */
		t.l2_kb = 48;
		ck_assert(a.tile_foot > t.l2_kb * 1024 && b.tile_foot <= t.l2_kb * 1024);
		runs = a.segs / t.sms * t.seg_ns / 1e6;
		cost_score(&t, DT_F64, &a, &s);
		ck_assert(fabs(s.contig - (runs + (a.line_waste + a.tile_bytes) /
		    (t.hbm_gbs * 1e6))) < 1e-12);
		cost_score(&t, DT_F64, &b, &s);
		ck_assert(fabs(s.contig - (b.segs / t.sms * t.seg_ns / 1e6 +
		    b.line_waste / (t.hbm_gbs * 1e6))) < 1e-12);
		/* a cache they fit, and none: no tile traffic */
		t.l2_kb = 1024;
		cost_score(&t, DT_F64, &a, &s);
		ck_assert(fabs(s.contig - (runs + a.line_waste / (t.hbm_gbs * 1e6))) < 1e-12);
		t.l2_kb = 0;
		cost_score(&t, DT_F64, &a, &s);
		ck_assert(fabs(s.contig - (runs + a.line_waste / (t.hbm_gbs * 1e6))) < 1e-12);
	}
	ir_graph_free(g);
}
END_TEST

/* Rows in flight (streams, rows-gbs): a reduction along the row whose
 * program reads part of each of its BM rows a loop step walks BM streams
 * side by side, and pays rows-gbs per halving or doubling away from the
 * target's streams; whole rows are one contiguous block, one stream, and so
 * are rows whose segments are longer than COST_FLY_SEG (read one after the
 * other).  W2's shape (relu, then the row sum of 4096^2): with streams 4, a
 * program of 4 rows of 128 columns (1 KiB segments) scores below one of 1
 * row, one of 16 and one of 4 rows of 256 columns (the native engine's
 * order, docs/perf.md sessions 15 and 16), and without the term (streams 0)
 * the 16-row program scores below the 4-row one (the same bytes and runs
 * in fewer loop steps). */
START_TEST(test_model_rows_in_flight)
{
	Graph *g = parse_ok("graph {\n  %x = input() : (4096, 4096)\n"
	    "  kernel @k [reduction] {\n    %r = relu(%x) : (4096, 4096)\n"
	    "    %y = sum(%r) : (4096,) axis=1\n  }\n}\n");
	TileConfig one = {1, 128, 0, 4, 0, 0}, four = {4, 128, 0, 4, 0, 0}, many = {16, 128, 0, 4, 0, 0};
	TileConfig whole = {4, 4096, 0, 4, 0, 0}, longer = {4, 256, 0, 4, 0, 0};
	Traffic a, b, c, w, l;
	Score s1, s4, s16, sw, sl;
	Target t = *cost_target_lookup("cpu");

	cost_traffic(g, 0, &one, &a);
	cost_traffic(g, 0, &four, &b);
	cost_traffic(g, 0, &many, &c);
	cost_traffic(g, 0, &whole, &w);
	cost_traffic(g, 0, &longer, &l);
	ck_assert(a.ok && b.ok && c.ok && w.ok && l.ok);
	ck_assert(a.fly_rows == 1 && b.fly_rows == 4 && c.fly_rows == 16);
	ck_assert(w.fly_rows == 1);                 /* 4 whole rows: one block */
	ck_assert(l.fly_rows == 1);                 /* 2 KiB segments: one at a time */
	ck_assert(fabs(b.fly_bytes - 4096.0 * 4096 * 8) < 1e-6);
	ck_assert(b.fly_bytes == (double)b.loaded);
	/* the other terms set, whatever a fit made of them */
	t.l2_kb = 0;
	t.seg_ns = 1;
	t.step_us = 0.003;
	t.wave_us = 0;
	t.streams = 4;
	t.rows_gbs = 50;
	cost_score(&t, DT_F64, &a, &s1);
	cost_score(&t, DT_F64, &b, &s4);
	cost_score(&t, DT_F64, &c, &s16);
	cost_score(&t, DT_F64, &w, &sw);
	cost_score(&t, DT_F64, &l, &sl);
	/* 1 row: two halvings from 4; 16 rows: two doublings; 4: none; the
	 * rows' segments of 128 continue their streams: no runs charged */
	ck_assert(fabs(b.fly_segs - 4096.0 * 4096 / 128) < 1e-6 && b.fly_segs <= b.segs);
	ck_assert(fabs(s1.contig - ((a.segs - a.fly_segs) * t.seg_ns / 1e6 + a.line_waste / (t.hbm_gbs * 1e6) +
	    2.0 * a.fly_bytes / (t.rows_gbs * 1e6))) < 1e-9);
	ck_assert(fabs(s16.contig - ((c.segs - c.fly_segs) * t.seg_ns / 1e6 + c.line_waste / (t.hbm_gbs * 1e6) +
	    2.0 * c.fly_bytes / (t.rows_gbs * 1e6))) < 1e-9);
	ck_assert(s4.total < s1.total && s4.total < s16.total && s4.total < sw.total && s4.total < sl.total);
	t.streams = 0;
	cost_score(&t, DT_F64, &b, &s4);
	cost_score(&t, DT_F64, &c, &s16);
	ck_assert(fabs(s4.contig - (b.segs * t.seg_ns / 1e6 + b.line_waste / (t.hbm_gbs * 1e6))) < 1e-12);
	ck_assert(s16.total < s4.total);
	ir_graph_free(g);
	/* a matmul has no rows in flight */
	g = matmul_graph(256, 256, 256, "");
	cost_traffic(g, 0, &(TileConfig){64, 64, 64, 4, 2, 0}, &a);
	ck_assert(a.ok && a.fly_rows == 0 && a.fly_bytes == 0);
	ir_graph_free(g);
}
END_TEST

/* a's block read again (reread-gbs): the native dot walks the rows of a,
 * read in place, past each 256-byte strip of b in turn, so a [BM, BK]
 * block past the L1 is read from the L2 once a strip.  W1's 1024^3 in
 * f64: 128x128x128 has 4 strips (128 f64 are 1 KiB) over a 128 KiB block,
 * read 3 more times each of its 512 steps; 128x32x128 has one strip (no
 * reread), 64x128x64 a block of 32 KiB, inside the L1 (no charge). */
START_TEST(test_model_dot_a_reread)
{
	Graph *g = matmul_graph(1024, 1024, 1024, "");
	TileConfig big = {128, 128, 128, 4, 2, 0}, narrow = {128, 32, 128, 4, 2, 0}, small = {64, 128, 64, 4, 2, 0};
	Traffic a, b, c;
	Score sa, sa0, sc, sc0;
	Target t = *cost_target_lookup("cpu");

	cost_traffic(g, 0, &big, &a);
	cost_traffic(g, 0, &narrow, &b);
	cost_traffic(g, 0, &small, &c);
	ck_assert(a.ok && b.ok && c.ok);
	ck_assert_int_eq(a.steps, 512);
	ck_assert(a.a_foot == 128.0 * 128 * 8 && a.a_reread == 512.0 * 128 * 128 * 8 * 3);
	ck_assert(b.a_foot == 128.0 * 128 * 8 && b.a_reread == 0);
	ck_assert(c.a_foot == 64.0 * 64 * 8 && c.a_foot <= COST_L1 && c.a_reread > 0);
	t.reread_gbs = 0;
	cost_score(&t, DT_F64, &a, &sa0);
	cost_score(&t, DT_F64, &c, &sc0);
	t.reread_gbs = 40;
	cost_score(&t, DT_F64, &a, &sa);
	cost_score(&t, DT_F64, &c, &sc);
	ck_assert(fabs(sa.steps - (sa0.steps + a.a_reread / (t.reread_gbs * 1e6))) < 1e-12);
	ck_assert(sc.steps == sc0.steps);            /* inside the L1: no charge */
	ck_assert(sa.total > sa0.total);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_autotune_seed_winners)
{
	Graph *g = parse_ok(seed);
	Graph *h = matmul_graph(256, 256, 256, "");
	char *rep;
	int rc;
	char *out = run_pipeline(g, "autotune", NULL, &rc);

	ck_assert_int_eq(rc, 0);
	ck_assert_ptr_nonnull(strstr(out, "[matmul_epilogue] BM=64 BN=32 BK=16 warps=4 stages=3 {"));
	free(out);
	out = run_pipeline(h, "autotune", &rep, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(h->kernels[0].kattr[KA_BM], 128);
	ck_assert_int_eq(h->kernels[0].kattr[KA_BN], 128);
	ck_assert_ptr_nonnull(strstr(rep, "576 candidates"));
	free(rep);
	free(out);
	ir_graph_free(g);
	ir_graph_free(h);
}
END_TEST

START_TEST(test_autotune_deterministic)
{
	static const char *const pipes[] = {"autotune", "autotune{target=cpu,top-k=5}",
		"autotune{target=cpu-tile,top-k=5}"};

	for (int p = 0; p < 3; p++) {
		Graph *g1 = parse_ok(seed), *g2 = parse_ok(seed);
		char *r1, *r2;
		int rc1, rc2;
		char *o1 = run_pipeline(g1, pipes[p], &r1, &rc1);
		char *o2 = run_pipeline(g2, pipes[p], &r2, &rc2);

		ck_assert_int_eq(rc1, 0);
		ck_assert_int_eq(rc2, 0);
		ck_assert_str_eq(o1, o2);
		ck_assert_str_eq(r1, r2);
		free(o1);
		free(o2);
		free(r1);
		free(r2);
		ir_graph_free(g1);
		ir_graph_free(g2);
	}
}
END_TEST

START_TEST(test_autotune_scoring_time)
{
	/* not an assertion on time: prints the figure docs/perf.md records */
	Graph *g = matmul_graph(256, 256, 256, "");
	CostModel *m = cost_model_new(g, 0);
	const int reps = 2000;
	double t0, ms;
	int rc;

	t0 = pass_now_ms();
	for (int i = 0; i < reps; i++)
		free(run_pipeline(g, "autotune", NULL, &rc));
	ms = (pass_now_ms() - t0) / reps;
	printf("autotune scoring time: 576 candidates, %.1f us per kernel "
	    "(whole pass incl. print, mean of %d runs)\n", ms * 1e3, reps);
	t0 = pass_now_ms();
	for (int i = 0; i < reps; i++) {
		TileConfig sp[COST_MAX_SPACE];
		int n = cost_space(cost_model_problem(m), sp);
		double best = 1e300;

		for (int j = 0; j < n; j++) {
			Traffic t;
			Score s;

			if (cost_prune(&cost_targets[0], cost_model_problem(m), &sp[j]) != PR_NONE)
				continue;
			cost_model_traffic(m, &sp[j], &t);
			cost_score(&cost_targets[0], DT_F64, &t, &s);
			best = s.total < best ? s.total : best;
		}
		ck_assert(best < 1);
	}
	ms = (pass_now_ms() - t0) / reps;
	printf("autotune scoring time: 576 candidates, %.1f us per kernel "
	    "(cost model only: prune + traffic + score)\n", ms * 1e3);
	ck_assert_int_eq(rc, 0);
	cost_model_free(m);
	ir_graph_free(g);
}
END_TEST

/* ---- measure=true, with a fake measuring callback -------------------- */

/* The fake "executor": a tiling takes bm + 2 bn + 4 bk ms, so the model's
 * favourite is not the fastest; `wrong` names a tiling whose result
 * differs from the reference. */
typedef struct Fake {
	int calls, timed;
	int wrong_bm, wrong_bn, wrong_bk;   /* 0: none wrong */
	bool all_wrong;
	bool dup;                           /* two candidates with one tiling */
	bool bad_cand;                      /* a candidate without the kernel's range */
	char target[16];                    /* the target the callback was handed */
} Fake;

static int
fake_measure(void *ctx, const char *target, const Graph *g, const Kernel *k,
    const Kernel *cand, int n, PassMeasured *out, Diag *d)
{
	Fake *f = ctx;

	(void)d;
	f->calls++;
	snprintf(f->target, sizeof f->target, "%s", target ? target : "(none)");
	for (int i = 0; i < n; i++) {
		const int64_t *a = cand[i].kattr;

		if (cand[i].first != k->first || cand[i].last != k->last || k->last >= g->nnodes ||
		    !(cand[i].kset & (1u << KA_BM)))
			f->bad_cand = true;
		for (int j = 0; j < i; j++)
			if (cand[j].kattr[KA_BM] == a[KA_BM] && cand[j].kattr[KA_BN] == a[KA_BN] &&
			    cand[j].kattr[KA_BK] == a[KA_BK])
				f->dup = true;
		out[i].ms = (double)(a[KA_BM] + 2 * a[KA_BN] + 4 * a[KA_BK]);
		out[i].match = !f->all_wrong && !(a[KA_BM] == f->wrong_bm &&
		    a[KA_BN] == f->wrong_bn && a[KA_BK] == f->wrong_bk);
		out[i].err = out[i].match ? 0 : 0.5;
		f->timed++;
	}
	return 0;
}

/* Runs `pipeline` on g with the fake callback (NULL: none); the report and
 * the diagnostics come back malloc'd. */
static int
run_measured(Graph *g, const char *pipeline, Fake *f, char **report, char **diags)
{
	Pipeline pl;
	char *rbuf = NULL, *dbuf = NULL;
	size_t rn = 0, dn = 0;
	FILE *rf = open_memstream(&rbuf, &rn), *df = open_memstream(&dbuf, &dn);
	PassMeasure pm = {fake_measure, f};
	PassRun run = {.verify_each = true, .report = rf, .measure = f ? &pm : NULL};
	Diag d;
	int rc;

	ck_assert_int_eq(pass_parse_pipeline(aicm_passes, pipeline, &pl, df, "check"), 0);
	diag_init(&d, "t.aicm", "", 0, df);
	rc = pass_run_pipeline(g, &pl, &run, &d);
	pass_free_pipeline(&pl);
	diag_free(&d);
	fclose(rf);
	fclose(df);
	*report = rbuf;
	*diags = dbuf;
	return rc;
}

static void
ck_tiling(const Graph *g, int bm, int bn, int bk)
{
	ck_assert_int_eq(g->kernels[0].kattr[KA_BM], bm);
	ck_assert_int_eq(g->kernels[0].kattr[KA_BN], bn);
	ck_assert_int_eq(g->kernels[0].kattr[KA_BK], bk);
}

START_TEST(test_measure_ranks_by_time)
{
	Graph *g = parse_ok(seed);
	Fake f = {0};
	char *rep, *dg;

	/* the seed's kernel has 18 distinct tilings that fit h100; the model
	 * picks 64x32x16, the fake clock 16x16x16 */
	ck_assert_int_eq(run_measured(g, "autotune{measure=true,measure-top=576}", &f, &rep, &dg), 0);
	ck_assert_int_eq(f.calls, 1);
	ck_assert_int_eq(f.timed, 18);
	ck_assert(!f.dup);
	ck_assert(!f.bad_cand);
	ck_tiling(g, 16, 16, 16);
	ck_assert_ptr_nonnull(strstr(rep, "measured the model's best 18 distinct tilings"));
	ck_assert_ptr_nonnull(strstr(rep, "#1 BM= 16 BN= 16 BK= 16  measured=112.000 ms  model #"));
	free(rep);
	free(dg);
	ir_graph_free(g);

	/* measure-top bounds the timing: the model's first tiling alone */
	g = parse_ok(seed);
	memset(&f, 0, sizeof f);
	ck_assert_int_eq(run_measured(g, "autotune{measure=true,measure-top=1}", &f, &rep, &dg), 0);
	ck_assert_int_eq(f.timed, 1);
	ck_tiling(g, 64, 32, 16);
	ck_assert_str_eq(f.target, "h100");
	free(rep);
	free(dg);
	ir_graph_free(g);

	/* the callback learns the target (cpu: the tool times on the native
	 * engine), and on cpu measure-top defaults to 4, not 16: each timed
	 * tiling is compiled there */
	g = parse_ok(seed);
	memset(&f, 0, sizeof f);
	ck_assert_int_eq(run_measured(g, "autotune{target=cpu,measure=true}", &f, &rep, &dg), 0);
	ck_assert_str_eq(f.target, "cpu");
	ck_assert_int_eq(f.timed, 4);
	free(rep);
	free(dg);
	ir_graph_free(g);
	g = parse_ok(seed);
	memset(&f, 0, sizeof f);
	ck_assert_int_eq(run_measured(g, "autotune{target=cpu-tile,measure=true}", &f, &rep, &dg),
	    0);
	ck_assert_str_eq(f.target, "cpu-tile");
	ck_assert_int_eq(f.timed, 16);
	free(rep);
	free(dg);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_measure_rejects_wrong)
{
	Graph *g = parse_ok(seed);
	Fake f = {.wrong_bm = 16, .wrong_bn = 16, .wrong_bk = 16};
	char *rep, *dg;

	ck_assert_int_eq(run_measured(g, "autotune{measure=true,measure-top=576}", &f, &rep, &dg), 0);
	ck_tiling(g, 32, 16, 16);           /* the fastest that matches */
	ck_assert_ptr_nonnull(strstr(rep, "BM= 16 BN= 16 BK= 16  rejected: differs from the "
	    "reference (error 0.5)"));
	free(rep);
	free(dg);
	ir_graph_free(g);

	/* nothing matches: an error, not a silent pick */
	g = parse_ok(seed);
	memset(&f, 0, sizeof f);
	f.all_wrong = true;
	ck_assert_int_eq(run_measured(g, "autotune{measure=true}", &f, &rep, &dg), -1);
	ck_assert_ptr_nonnull(strstr(dg, "every measured configuration of kernel '@kernel0' "
	    "differs from the reference"));
	free(rep);
	free(dg);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_measure_needs_callback)
{
	Graph *g = parse_ok(seed);
	char *rep, *dg;

	ck_assert_int_eq(run_measured(g, "autotune{measure=true}", NULL, &rep, &dg), -1);
	ck_assert_ptr_nonnull(strstr(dg, "measure=true needs a measuring callback"));
	ck_assert(!(g->kernels[0].kset & (1u << KA_BM)));   /* untouched */
	free(rep);
	free(dg);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_measure_cache_round_trip)
{
	char path[64], pipe[160], *rep, *dg, *txt, *m;
	Fake f = {0};
	Graph *g;

	snprintf(path, sizeof path, "/tmp/aicm-check-measure-%ld.cache", (long)getpid());
	remove(path);
	snprintf(pipe, sizeof pipe, "autotune{measure=true,measure-top=576,cache=%s}", path);
	g = parse_ok(seed);
	ck_assert_int_eq(run_measured(g, pipe, &f, &rep, &dg), 0);
	ck_assert_int_eq(f.calls, 1);
	free(rep);
	free(dg);
	ir_graph_free(g);
	txt = ck_slurp(path);
	ck_assert_ptr_nonnull(strstr(txt, "-> BM=16 BN=16 BK=16 warps=4 stages=3 score="));
	ck_assert_ptr_nonnull(strstr(txt, " measured=112.0\n"));
	free(txt);

	/* measured again: read from the cache, the callback never called */
	g = parse_ok(seed);
	memset(&f, 0, sizeof f);
	ck_assert_int_eq(run_measured(g, pipe, &f, &rep, &dg), 0);
	ck_assert_int_eq(f.calls, 0);
	ck_tiling(g, 16, 16, 16);
	ck_assert_ptr_nonnull(strstr(rep, "from the tuning cache"));
	ck_assert_ptr_nonnull(strstr(rep, "measured=112.000 ms"));
	free(rep);
	free(dg);
	ir_graph_free(g);

	/* a scoring run takes the measured record too */
	snprintf(pipe, sizeof pipe, "autotune{cache=%s}", path);
	g = parse_ok(seed);
	ck_assert_int_eq(run_measured(g, pipe, NULL, &rep, &dg), 0);
	ck_tiling(g, 16, 16, 16);
	free(rep);
	free(dg);
	ir_graph_free(g);

	/* an old record (no measured=) is measured again and replaced */
	txt = ck_slurp(path);
	m = strstr(txt, " measured=");
	ck_assert_ptr_nonnull(m);
	strcpy(m, "\n");
	ck_assert_int_eq(aicm_write_file(path, txt, strlen(txt)), 0);
	free(txt);
	snprintf(pipe, sizeof pipe, "autotune{measure=true,measure-top=576,cache=%s}", path);
	g = parse_ok(seed);
	memset(&f, 0, sizeof f);
	ck_assert_int_eq(run_measured(g, pipe, &f, &rep, &dg), 0);
	ck_assert_int_eq(f.calls, 1);
	free(rep);
	free(dg);
	ir_graph_free(g);
	txt = ck_slurp(path);
	ck_assert_ptr_nonnull(strstr(txt, " measured=112.0\n"));
	ck_assert_ptr_null(strstr(strstr(txt, " measured=112.0\n") + 1, " -> "));  /* one record */
	free(txt);
	remove(path);
}
END_TEST

/* ---- reuse of a signature's tuning ------------------------------------ */

static int
run_hashmask(Graph *g, uint64_t hmask, int64_t *compares, char **report)
{
	Pipeline pl;
	char *rbuf = NULL, *dbuf = NULL;
	size_t rn = 0, dn = 0;
	FILE *rf = open_memstream(&rbuf, &rn), *df = open_memstream(&dbuf, &dn);
	Diag d;
	PassArgs a;
	int rc;

	ck_assert_int_eq(pass_parse_pipeline(aicm_passes, "autotune", &pl, df, "check"), 0);
	a = (PassArgs){pl.p[0].pass->opts, pl.p[0].vals, rf, false, NULL};
	diag_init(&d, "t.aicm", "", 0, df);
	rc = autotune_run_hashmask(g, &a, &d, hmask, compares);
	pass_free_pipeline(&pl);
	diag_free(&d);
	fclose(rf);
	fclose(df);
	free(dbuf);
	*report = rbuf;
	return rc;
}

static int
count_str(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

START_TEST(test_autotune_reuse_linear)
{
	/* 2000 relu kernels of distinct shapes, then 1000 that repeat the
	 * shapes of the first 1000: each repeat is one full comparison (the
	 * scan over earlier keys it replaced made 2 million), and gets the
	 * attributes of the kernel it repeats */
	enum { DISTINCT = 2000, REPEAT = 1000, N = DISTINCT + REPEAT };
	size_t cap = 160 * N, len = 0;
	char *src = malloc(cap), *rep;
	int64_t compares = -1;
	Graph *g;

	len += (size_t)snprintf(src + len, cap - len, "graph {\n");
	for (int i = 0; i < N; i++) {
		int rows = i < DISTINCT ? i + 1 : i - DISTINCT + 1;

		len += (size_t)snprintf(src + len, cap - len, "  %%x%d = input() : (%d, 8)\n"
		    "  kernel @k%d [elementwise] {\n    %%r%d = relu(%%x%d) : (%d, 8)\n  }\n",
		    i, rows, i, i, i, rows);
	}
	snprintf(src + len, cap - len, "}\n");
	g = parse_ok(src);
	free(src);
	ck_assert_int_eq(g->nkernels, N);
	ck_assert_int_eq(run_hashmask(g, ~(uint64_t)0, &compares, &rep), 0);
	ck_assert_int_eq(compares, REPEAT);
	ck_assert_int_eq(count_str(rep, "same signature as @"), REPEAT);
	ck_assert_int_eq(count_str(rep, " candidates, "), DISTINCT);
	ck_assert_ptr_nonnull(strstr(rep, "@k2999 [elementwise] rows=1000 cols=8 f64, target "
	    "h100\n  same signature as @k999: "));
	for (int i = DISTINCT; i < N; i++) {
		const Kernel *a = &g->kernels[i], *b = &g->kernels[i - DISTINCT];

		ck_assert_uint_eq(a->kset, b->kset);
		ck_assert_uint_ne(a->kset, 0);
		for (int t = 0; t < KA_COUNT; t++)
			if (a->kset & (1u << t))
				ck_assert_int_eq(a->kattr[t], b->kattr[t]);
	}
	free(rep);
	ir_graph_free(g);
}
END_TEST

/* Kernels alike but for one thing each, and kernels alike from different
 * nodes: reuse must follow the signature, not the hash or the operands. */
static const char *lookalikes =
    "graph {\n"
    "  %x = input() : (64, 32)\n"
    "  %y = input() : (64, 32)\n"
    "  %u = input() : (64, 32) f32\n"
    "  %v = input() : (64, 32) f32\n"
    "  kernel @k0 [elementwise] {\n    %a0 = add(%x, %y) : (64, 32)\n  }\n"
    "  kernel @k1 [elementwise] {\n    %a1 = add(%x, %x) : (64, 32)\n  }\n"
    "  kernel @k2 [elementwise] {\n    %a2 = add(%y, %x) : (64, 32)\n  }\n"
    "  kernel @k3 [elementwise] {\n    %a3 = add(%u, %v) : (64, 32) f32\n  }\n"
    "  kernel @k4 [reduction] {\n    %s4 = sum(%x) : (64,) axis=1\n  }\n"
    "  kernel @k5 [reduction] {\n    %s5 = sum(%x) : (32,) axis=0\n  }\n"
    "  kernel @k6 [reduction] {\n    %s6 = sum(%y) : (64,) axis=1\n  }\n"
    "  kernel @k7 [elementwise] {\n    %b7 = add(%x, %y) : (64, 32)\n"
    "    %r7 = relu(%b7) : (64, 32)\n  }\n"
    "  kernel @k8 [elementwise] {\n    %a8 = add(%a1, %a2) : (64, 32)\n  }\n"
    "  kernel @k9 [elementwise] {\n    %a9 = add(%a1, %a1) : (64, 32)\n  }\n"
    "  kernel @k10 [reduction] {\n    %s10 = sum(%x) : (64, 1) axis=1 keepdims=True\n  }\n"
    "  return %a3, %s4, %s5, %s6, %r7, %a8, %a9, %s10\n"
    "}\n";

START_TEST(test_autotune_reuse_collisions)
{
	/* hash ANDed with 0: every signature collides, so reuse rests on the
	 * full comparison alone; the result must not change */
	Graph *g = parse_ok(lookalikes), *h = parse_ok(lookalikes), *p = parse_ok(lookalikes);
	char *rg, *rh, *rp, *og, *oh, *op;
	int64_t cg = -1, ch = -1;
	int rc;
	size_t n;

	ck_assert_int_eq(run_hashmask(g, ~(uint64_t)0, &cg, &rg), 0);
	ck_assert_int_eq(run_hashmask(h, 0, &ch, &rh), 0);
	op = run_pipeline(p, "autotune", &rp, &rc);
	ck_assert_int_eq(rc, 0);
	og = ir_print_str(g, &n);
	oh = ir_print_str(h, &n);
	ck_assert_str_eq(rg, rh);
	ck_assert_str_eq(rg, rp);
	ck_assert_str_eq(og, oh);
	ck_assert_str_eq(og, op);
	ck_assert_int_eq(count_str(rg, "same signature as @"), 4);
	ck_assert_ptr_nonnull(strstr(rg, "@k2 [elementwise] rows=64 cols=32 f64, target h100\n"
	    "  same signature as @k0: "));
	ck_assert_ptr_nonnull(strstr(rg, "@k6 [reduction] rows=64 reduced=32 f64, target h100\n"
	    "  same signature as @k4: "));
	ck_assert_ptr_nonnull(strstr(rg, "@k8 [elementwise] rows=64 cols=32 f64, target h100\n"
	    "  same signature as @k0: "));
	ck_assert_ptr_nonnull(strstr(rg, "@k9 [elementwise] rows=64 cols=32 f64, target h100\n"
	    "  same signature as @k1: "));
	/* one comparison per reuse with the real hash; with every hash equal,
	 * each lookup walks the 7 first-of-their-signature kernels in turn */
	ck_assert_int_eq(cg, 4);
	ck_assert_int_gt(ch, 4);
	free(rg);
	free(rh);
	free(rp);
	free(og);
	free(oh);
	free(op);
	ir_graph_free(g);
	ir_graph_free(h);
	ir_graph_free(p);
}
END_TEST

Suite *
make_autotune_suite(void)
{
	Suite *s = suite_create("autotune");
	TCase *tr = tcase_create("traffic");
	TCase *pm = tcase_create("model");
	TCase *ps = tcase_create("pass");

	tcase_add_test(tr, test_traffic_seed_matmul);
	tcase_add_test(tr, test_traffic_seed_chain);
	tcase_add_test(tr, test_traffic_fused_vs_eager);
	tcase_add_test(tr, test_traffic_split_and_broadcast);
	tcase_add_test(tr, test_traffic_full_reduce_reloads);
	tcase_add_test(tr, test_traffic_leading_dims_on_axis2);
	tcase_add_test(pm, test_model_padding_penalty);
	tcase_add_test(pm, test_model_smaller_tiles_move_more);
	tcase_add_test(pm, test_model_bandwidth_lowers_mem);
	tcase_add_test(pm, test_model_never_chooses_unfit);
	tcase_add_test(pm, test_model_contiguity_runs);
	tcase_add_test(pm, test_model_contiguity_transposed_view);
	tcase_add_test(pm, test_model_row_width_and_l2);
	tcase_add_test(pm, test_model_cpu_targets_tile_caches);
	tcase_add_test(pm, test_model_rows_in_flight);
	tcase_add_test(pm, test_model_dot_a_reread);
	tcase_add_test(ps, test_autotune_seed_winners);
	tcase_add_test(ps, test_autotune_deterministic);
	tcase_add_test(ps, test_autotune_scoring_time);
	tcase_add_test(ps, test_measure_ranks_by_time);
	tcase_add_test(ps, test_measure_rejects_wrong);
	tcase_add_test(ps, test_measure_needs_callback);
	tcase_add_test(ps, test_measure_cache_round_trip);
	tcase_add_test(ps, test_autotune_reuse_linear);
	tcase_add_test(ps, test_autotune_reuse_collisions);
	tcase_set_timeout(ps, 60);
	suite_add_tcase(s, tr);
	suite_add_tcase(s, pm);
	suite_add_tcase(s, ps);
	return s;
}
