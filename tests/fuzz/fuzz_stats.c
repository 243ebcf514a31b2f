/*
 * fuzz_stats.c: the KernelStats JSON reader (src/report/stats_read.c),
 * bytes in, and the pictures drawn from what it accepts.
 *
 * The input is a whole stats file.  Whatever it holds, the reader must
 * return 0 or -1 after one located error, never crash or leak.  What it
 * accepts must round-trip: printed again by the writer aicm-run uses
 * (exec_tile_print_stats, JSON) and read back, every count is the same;
 * and the traffic bars and the roofline, drawn from it into memory, must
 * come out (no overflow on counts near 2^63, and no NaN or infinity in
 * any attribute: every coordinate is a finite number).
 */
#include <stdint.h>

#include "fuzz.h"
#include "fuzz_svg.h"
#include "report.h"
#include "tile_exec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
same(const KernelStats *a, const KernelStats *b)
{
	return !strcmp(a->name, b->name) && !strcmp(a->kind, b->kind) &&
	    !strcmp(a->result, b->result) && !memcmp(a->grid, b->grid, sizeof a->grid) &&
	    a->programs == b->programs && a->bytes_read == b->bytes_read &&
	    a->bytes_written == b->bytes_written && a->flops == b->flops &&
	    a->ideal_read == b->ideal_read && a->ideal_written == b->ideal_written;
}

/* Whether the writer's totals (int64 sums over the kernels) fit. */
static bool
sums_fit(const ReportStats *s)
{
	int64_t t[6] = {0};

	for (int i = 0; i < s->n; i++) {
		const KernelStats *k = &s->k[i];
		int64_t v[6] = {k->programs, k->bytes_read, k->bytes_written, k->flops,
		    k->ideal_read, k->ideal_written};

		for (int j = 0; j < 6; j++)
			if (__builtin_add_overflow(t[j], v[j], &t[j]))
				return false;
	}
	return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ReportStats s, back;
	ReportPeak pk;
	char why[256], *text = NULL, *svg = NULL;
	size_t len = 0, slen = 0;
	FILE *f;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	if (report_stats_parse("in.json", (const char *)data, size, &s, fuzz_sink()) != 0)
		return 0;
	/* the writer recomputes the total, so the kernels round-trip; counts
	 * whose sums overflow are no run's, and the writer is not for them */
	if (!sums_fit(&s)) {
		report_stats_free(&s);
		return 0;
	}
	if (!(f = open_memstream(&text, &len)))
		abort();
	exec_tile_print_stats(f, s.k, s.n, true);
	fclose(f);
	if (report_stats_parse("again.json", text, len, &back, stderr) != 0)
		fuzz_fail("stats that were read do not read back", text, NULL);
	if (back.n != s.n)
		fuzz_fail("the kernel count changed through write and read", text, NULL);
	for (int i = 0; i < s.n; i++)
		if (!same(&s.k[i], &back.k[i]))
			fuzz_fail("a kernel's stats changed through write and read", text, NULL);
	if (report_peak_parse("cpu", false, &pk, why, sizeof why) != 0)
		abort();
	if (!(f = open_memstream(&svg, &slen)))
		abort();
	report_traffic_doc(f, &s, &back, &pk);
	fclose(f);
	if (fuzz_bad_attr(svg, slen))
		fuzz_fail("a picture's attribute holds nan or inf", svg, NULL);
	free(svg);
	free(text);
	report_stats_free(&s);
	report_stats_free(&back);
	return 0;
}
