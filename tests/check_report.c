/*
 * check_report.c: the report layer's data (src/report): autotune's table as
 * report_tunes_collect gathers it must be the pass's own (the kernel's
 * chosen configuration is the table's rank 1 when no cache or measurement
 * intervenes, ranks run 1..scored, pruned candidates carry a reason and no
 * rank); the KernelStats JSON that aicm-run writes reads back field for
 * field; --peak's figures parse or are refused.  The pictures themselves
 * are held by the goldens in testdata/svg/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "exec.h"
#include "pass.h"
#include "report.h"
#include "tile_exec.h"
#include "../passes/cost.h"
#include "../passes/passes.h"

static void
collect(void *ctx, int idx, const PassInst *pi, const Graph *g, double ms)
{
	(void)idx;
	(void)ms;
	if (!strcmp(pi->pass->name, "autotune"))
		report_tunes_collect(ctx, g, pi);
}

/* Runs pipeline on src, collecting autotune's tables into *r. */
static void
tune_tables(const char *src, const char *pipeline, ReportTunes *r)
{
	Graph *g = ck_parse(src, NULL);
	Pipeline pl = {0};
	PassRun run = {true, NULL, false, NULL, collect, r, NULL};
	FILE *sink = fopen("/dev/null", "w");
	Diag d;

	ck_assert_ptr_nonnull(g);
	ck_assert_ptr_nonnull(sink);
	ck_assert_int_eq(pass_parse_pipeline(aicm_passes, pipeline, &pl, stderr, "check"), 0);
	diag_init(&d, "t.aicm", src, strlen(src), sink);
	ck_assert_int_eq(pass_run_pipeline(g, &pl, &run, &d), 0);
	diag_free(&d);
	fclose(sink);
	pass_free_pipeline(&pl);
	ir_graph_free(g);
}

static const char *mlp =
    "graph {\n"
    "  %x = input() : (100, 60)\n"
    "  %w = input() : (60, 84)\n"
    "  %v = input() : (84, 33)\n"
    "  %h = matmul(%x, %w)\n"
    "  %r = relu(%h)\n"
    "  %o = matmul(%r, %v)\n"
    "  %s = sum(%o) axis=1\n"
    "  %e = exp(%x)\n"
    "}\n";

START_TEST(test_report_tune_is_the_pass)
{
	static const char *const pipes[] = {
		"shape-infer,fuse,autotune",
		"shape-infer,fuse,autotune{target=cpu}",
		"shape-infer,fuse,autotune{smem-kb=40,regs-per-thread=96}",
		"shape-infer,fuse,autotune{target=a100,sms=7}",
	};

	for (size_t p = 0; p < sizeof pipes / sizeof *pipes; p++) {
		ReportTunes r = {0};

		tune_tables(mlp, pipes[p], &r);
		ck_assert_int_ge(r.n, 3);
		for (int k = 0; k < r.n; k++) {
			const ReportTune *t = &r.t[k];
			int scored = 0, *seen = calloc((size_t)t->ncand + 1, sizeof *seen);

			ck_assert_int_gt(t->ncand, 0);
			for (int i = 0; i < t->ncand; i++) {
				const ReportTuneCand *c = &t->cand[i];

				if (c->pruned) {
					ck_assert_int_eq(c->rank, 0);
					ck_assert(!strcmp(c->pruned, "block") || !strcmp(c->pruned, "smem") ||
					    !strcmp(c->pruned, "regs"));
					continue;
				}
				scored++;
				ck_assert_int_ge(c->rank, 1);
				ck_assert_int_le(c->rank, t->ncand);
				ck_assert_int_eq(seen[c->rank]++, 0);
				ck_assert(c->score > 0);
			}
			/* ranks are 1..scored, each once */
			for (int i = 1; i <= scored; i++)
				ck_assert_int_eq(seen[i], 1);
			/* no cache, no measuring: the pass chose the model's best */
			ck_assert_msg(t->chosen >= 0, "%s: @%s has no chosen candidate", pipes[p],
			    t->kernel);
			ck_assert_int_eq(t->cand[t->chosen].rank, 1);
			for (int i = 0; i < t->ncand; i++)
				if (!t->cand[i].pruned)
					ck_assert(t->cand[i].score >= t->cand[t->chosen].score);
			free(seen);
		}
		report_tunes_free(&r);
	}
}
END_TEST

/* A real run's KernelStats, written as aicm-run writes them, read back. */
START_TEST(test_report_stats_roundtrip)
{
	Graph *g = ck_pipeline(mlp, "shape-infer,fuse,autotune,lower-tiled");
	FILE *sink = fopen("/dev/null", "w");
	Tensor *vals;
	TilePlan *p;
	const KernelStats *ks;
	ReportStats s;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	Diag d;
	int n;

	ck_assert_ptr_nonnull(g);
	diag_init(&d, "t.aicm", "", 0, sink);
	vals = calloc((size_t)g->nnodes, sizeof *vals);
	ck_fill_sources(g, vals, 3);
	ck_assert_ptr_nonnull(p = exec_tile_compile(g, &d));
	ck_assert_int_eq(exec_tile_run(p, vals, 1, &d), 0);
	ks = exec_tile_stats(p, &n);
	ck_assert_int_ge(n, 3);
	f = open_memstream(&text, &len);
	exec_tile_print_stats(f, ks, n, true);
	fclose(f);
	ck_assert_int_eq(report_stats_parse("s.json", text, len, &s, stderr), 0);
	ck_assert_int_eq(s.n, n);
	for (int i = 0; i <= n; i++) {
		KernelStats want = i < n ? ks[i] : exec_tile_total(ks, n);
		const KernelStats *got = i < n ? &s.k[i] : &s.total;

		ck_assert_str_eq(got->name, want.name);
		ck_assert_str_eq(got->kind, want.kind);
		ck_assert_str_eq(got->result, want.result);
		ck_assert_mem_eq(got->grid, want.grid, sizeof want.grid);
		ck_assert_int_eq(got->programs, want.programs);
		ck_assert_int_eq(got->bytes_read, want.bytes_read);
		ck_assert_int_eq(got->bytes_written, want.bytes_written);
		ck_assert_int_eq(got->flops, want.flops);
		ck_assert_int_eq(got->ideal_read, want.ideal_read);
		ck_assert_int_eq(got->ideal_written, want.ideal_written);
	}
	report_stats_free(&s);
	free(text);
	exec_tile_free(p);
	exec_tensors_free(vals, g->nnodes);
	free(vals);
	ir_graph_free(g);
	diag_free(&d);
	fclose(sink);
}
END_TEST

START_TEST(test_report_stats_refused)
{
	static const char *const bad[] = {
		"", "{}", "[]", "{\"stats\":\"kernels\"}", "{\"stats\":\"kernels\",\"kernels\":[]}",
		"{\"stats\":\"kernels\",\"kernels\":[],\"total\":{}}", "{\"stats\":1}",
		"{\"stats\":\"kernels\",\"stats\":\"kernels\"}", "\"\\u12\"", "{\"a\\q\":1}",
	};

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *msg = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&msg, &len);
		ReportStats s;

		ck_assert_int_eq(report_stats_parse("b.json", bad[i], strlen(bad[i]), &s, f), -1);
		fclose(f);
		/* one located error line */
		ck_assert_msg(!strncmp(msg, "b.json:1:", 9), "'%s': %s", bad[i], msg);
		ck_assert_ptr_nonnull(strstr(msg, ": error: "));
		ck_assert_ptr_eq(strchr(msg, '\n'), msg + len - 1);
		ck_assert_int_eq(s.n, 0);
		free(msg);
	}
}
END_TEST

START_TEST(test_report_peak)
{
	ReportPeak pk;
	char why[256];

	const Target *cpu = cost_target_lookup("cpu");

	/* a target's roofs are its own constants (which calibration changes) */
	ck_assert_ptr_nonnull(cpu);
	ck_assert_int_eq(report_peak_parse("cpu", false, &pk, why, sizeof why), 0);
	ck_assert_str_eq(pk.name, "cpu");
	ck_assert(pk.gflops == 1000 * cpu->tc_tflops_f64);
	ck_assert(pk.gbs == cpu->hbm_gbs);
	ck_assert_int_eq(report_peak_parse("h100", true, &pk, why, sizeof why), 0);
	ck_assert(pk.gflops == 495000 && pk.gbs == 3350);
	ck_assert_int_eq(report_peak_parse("73,40.5", false, &pk, why, sizeof why), 0);
	ck_assert_str_eq(pk.name, "given");
	ck_assert(pk.gflops == 73 && pk.gbs == 40.5);
	ck_assert_int_eq(report_peak_parse("h101", false, &pk, why, sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "h101"));
	ck_assert_int_eq(report_peak_parse("0,1", false, &pk, why, sizeof why), -1);
	ck_assert_int_eq(report_peak_parse("1e300,1", false, &pk, why, sizeof why), -1);
	ck_assert_int_eq(report_peak_parse("5,", false, &pk, why, sizeof why), -1);
	ck_assert_int_eq(report_peak_parse("5,6x", false, &pk, why, sizeof why), -1);
}
END_TEST

Suite *
make_report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("data");

	tcase_add_test(tc, test_report_tune_is_the_pass);
	tcase_add_test(tc, test_report_stats_roundtrip);
	tcase_add_test(tc, test_report_stats_refused);
	tcase_add_test(tc, test_report_peak);
	suite_add_tcase(s, tc);
	return s;
}
