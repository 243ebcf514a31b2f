/*
 * tile_stats.c: KernelStats, as tile_exec.h defines them: the last run's,
 * their total, and printed as a table (1 KB = 1000 B, as Nsight Compute
 * counts) or as JSON with Nsight Compute's metric names.  The counting
 * itself happens where the work does (tile_access.c, tile_ops.c) and is
 * summed per kernel in tile_run.c.
 */
#include <stdio.h>

#include "tile_priv.h"

const KernelStats *
exec_tile_stats(const TilePlan *p, int *n)
{
	*n = p->nk;
	return p->stats;
}

KernelStats
exec_tile_total(const KernelStats *ks, int n)
{
	KernelStats t = {0};

	t.name = "total";
	t.kind = "";
	t.result = "";
	for (int i = 0; i < n; i++) {
		t.programs += ks[i].programs;
		t.bytes_read += ks[i].bytes_read;
		t.bytes_written += ks[i].bytes_written;
		t.flops += ks[i].flops;
		t.ideal_read += ks[i].ideal_read;
		t.ideal_written += ks[i].ideal_written;
	}
	return t;
}

/* "305.3 KB": 1 KB = 1000 B, as Nsight Compute and the seed count. */
void
exec_tile_fmt_bytes(char *buf, size_t n, int64_t b)
{
	static const char *const unit[] = {"B", "KB", "MB", "GB", "TB"};
	double v = (double)b;
	int u = 0;

	while (v >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%lld B", (long long)b);
	else
		snprintf(buf, n, "%.1f %s", v, unit[u]);
}

static double
intensity(const KernelStats *k)
{
	int64_t b = k->bytes_read + k->bytes_written;

	return b ? (double)k->flops / (double)b : 0.0;
}

static void
print_row(FILE *f, const KernelStats *k, bool total)
{
	char grid[64], rd[32], wr[32], ird[32], iwr[32], name[96];

	if (total)
		snprintf(grid, sizeof grid, "-");
	else if (k->grid[2] != 1)
		snprintf(grid, sizeof grid, "(%lld, %lld, %lld)", (long long)k->grid[0],
		    (long long)k->grid[1], (long long)k->grid[2]);
	else
		snprintf(grid, sizeof grid, "(%lld, %lld)", (long long)k->grid[0],
		    (long long)k->grid[1]);
	exec_tile_fmt_bytes(rd, sizeof rd, k->bytes_read);
	exec_tile_fmt_bytes(wr, sizeof wr, k->bytes_written);
	exec_tile_fmt_bytes(ird, sizeof ird, k->ideal_read);
	exec_tile_fmt_bytes(iwr, sizeof iwr, k->ideal_written);
	if (total)
		snprintf(name, sizeof name, "total");
	else
		snprintf(name, sizeof name, "%s [%s]", k->name, k->kind);
	fprintf(f, "%-28s %-14s %8lld %10s %10s %12lld %8.3f %10s %10s\n", name, grid,
	    (long long)k->programs, rd, wr, (long long)k->flops, intensity(k), ird, iwr);
}

/* One object, in the JSON style of every report (ir_json_str): the keys
 * of the byte counts are Nsight Compute's metric names, on purpose. */
static void
print_json(FILE *f, const KernelStats *k)
{
	fprintf(f, "{\"kernel\":");
	ir_json_str(f, k->name);
	fprintf(f, ",\"kind\":");
	ir_json_str(f, k->kind);
	fprintf(f, ",\"result\":");
	ir_json_str(f, k->result);
	fprintf(f, ",\"grid\":[%lld,%lld,%lld],\"programs\":%lld,"
	    "\"dram__bytes_read.sum\":%lld,\"dram__bytes_write.sum\":%lld,"
	    "\"flops\":%lld,\"arithmetic_intensity\":", (long long)k->grid[0],
	    (long long)k->grid[1], (long long)k->grid[2], (long long)k->programs,
	    (long long)k->bytes_read, (long long)k->bytes_written, (long long)k->flops);
	ir_json_num(f, intensity(k));
	fprintf(f, ",\"ideal_bytes_read\":%lld,\"ideal_bytes_write\":%lld}",
	    (long long)k->ideal_read, (long long)k->ideal_written);
}

void
exec_tile_print_stats(FILE *f, const KernelStats *ks, int n, bool json)
{
	KernelStats t = exec_tile_total(ks, n);

	if (json) {
		/* one object on one line (JSON Lines), as the passes' reports */
		fprintf(f, "{\"stats\":\"kernels\",\"kernels\":[");
		for (int i = 0; i < n; i++) {
			fprintf(f, "%s", i ? "," : "");
			print_json(f, &ks[i]);
		}
		fprintf(f, "],\"total\":");
		print_json(f, &t);
		fprintf(f, "}\n");
		return;
	}
	fprintf(f, "KernelStats (1 KB = 1000 B; read = dram__bytes_read.sum, written = "
	    "dram__bytes_write.sum)\n");
	fprintf(f, "%-28s %-14s %8s %10s %10s %12s %8s %10s %10s\n", "kernel", "grid", "programs",
	    "read", "written", "flops", "flop/B", "ideal rd", "ideal wr");
	for (int i = 0; i < n; i++)
		print_row(f, &ks[i], false);
	print_row(f, &t, true);
	fprintf(f, "bytes: %lld read, %lld written, %lld total (ideal %lld)\n",
	    (long long)t.bytes_read, (long long)t.bytes_written,
	    (long long)(t.bytes_read + t.bytes_written),
	    (long long)(t.ideal_read + t.ideal_written));
}

