/*
 * fuzz_threads.c: the whole pipeline with fuzzed options, then the tile
 * executor on one thread against three, bit for bit.
 *
 * The input's first PREFIX bytes choose the pipeline (decode() below): fuse
 * or not, with row-fusion, matmul-reduce, explain and max-ops; autotune or
 * not, with a target and one of its constants overridden; lower-tiled's
 * bm, bn and bk; reports on or off.  The rest is a graph, tiled or not.
 * It runs as aicm-run runs it: shape-infer when untyped, the chosen
 * passes, lower-tiled for whatever is left.  Then one plan runs on one
 * thread, and again on three: tile_exec.h promises the same bits (programs
 * spread over the crew, atomics applied in program order), NaN payloads
 * included.  When the graph came with no tiled kernel, every result starts
 * filled with a different byte in the two runs, so that an element the
 * lowered program never writes shows too (lower-tiled covers every
 * element; a hand-written grid need not).  Work is bounded first, as in
 * fuzz_tile.  Autotune's cache and measure options are never set: the
 * fuzzer writes no files and times nothing.
 */
#include <stdint.h>

#include "fuzz_exec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { PREFIX = 5, THREADS = 3 };

static const char *const targets[8] = {
	"h100", "h200", "a100", "rubin", "cpu", "cpu", "a100", "h100",
};
static const char *const constants[16] = {
	"1e-06", "0.001", "0.01", "0.1", "0.5", "1", "2", "4",
	"16", "64", "256", "1000", "10000", "1e+06", "1e+09", "1e+12",
};
/* "": the option is not written (lower-tiled's default, 32). */
static const char *const sizes[16] = {
	"", "1", "2", "3", "4", "5", "7", "8", "16", "17", "32", "33", "64", "100", "128", "256",
};

/* autotune's i-th target constant (its options with no default), or NULL. */
static const char *
constant_key(int i)
{
	const Pass *p = pass_lookup(aicm_passes, "autotune");

	for (const PassOpt *o = p->opts; o->key; o++)
		if (o->def[0] == '(' && i-- == 0)
			return o->key;
	return NULL;
}

static void
size_opt(char *buf, size_t n, size_t *m, const char *key, int idx)
{
	if (*sizes[idx])
		*m += (size_t)snprintf(buf + *m, n - *m, "%s%s=%s", buf[*m - 1] == '{' ? "" : ",",
		    key, sizes[idx]);
}

/* The pipeline the prefix b[0..PREFIX) chooses:
 *   b[0]  bit 0 fuse, 1 row-fusion, 2 matmul-reduce, 3 explain,
 *         4 autotune, 5 --report, 6 --report as JSON
 *   b[1]  bits 0-3 fuse's max-ops, bits 4-6 the autotune target
 *   b[2]  bits 0-3 which target constant is written (past the last: none),
 *         bits 4-7 its value
 *   b[3]  bits 0-3 lower-tiled's bm, bits 4-7 its bn (0: not written)
 *   b[4]  bits 0-3 its bk */
static void
decode(const uint8_t *b, bool untyped, char *buf, size_t n)
{
	size_t m = 0;
	const char *key = constant_key(b[2] & 15);

	m += (size_t)snprintf(buf + m, n - m, "%s", untyped ? "shape-infer," : "");
	if (b[0] & 1)
		m += (size_t)snprintf(buf + m, n - m, "fuse{row-fusion=%s,matmul-reduce=%s,"
		    "explain=%s,max-ops=%d},", b[0] & 2 ? "true" : "false",
		    b[0] & 4 ? "true" : "false", b[0] & 8 ? "true" : "false", b[1] & 15);
	if (b[0] & 16) {
		m += (size_t)snprintf(buf + m, n - m, "autotune{target=%s", targets[(b[1] >> 4) & 7]);
		if (key)
			m += (size_t)snprintf(buf + m, n - m, ",%s=%s", key, constants[b[2] >> 4]);
		m += (size_t)snprintf(buf + m, n - m, "},");
	}
	m += (size_t)snprintf(buf + m, n - m, "lower-tiled{");
	size_opt(buf, n, &m, "bm", b[3] & 15);
	size_opt(buf, n, &m, "bn", b[3] >> 4);
	size_opt(buf, n, &m, "bk", b[4] & 15);
	snprintf(buf + m, n - m, "}");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data + PREFIX;
	ExecLimits lim = {FUZZ_MAX_BYTES, FUZZ_MAX_TOTAL};
	Tensor *v1 = NULL, *v3 = NULL;
	TilePlan *plan = NULL;
	unsigned char fill3;
	char pipe[512];
	Graph *g;
	Diag d;
	int nerr;

	if (size < PREFIX || size > FUZZ_MAX_INPUT)
		return 0;
	size -= PREFIX;
	diag_init(&d, "fuzz", text, size, fuzz_sink());
	g = parse_graph(text, size, 1, &d);
	if (!g || ir_verify(g, &d) != 0)
		goto out;
	fill3 = fuzz_has_tiled(g) ? 0x5a : 0xa5;
	decode(data, fuzz_untyped(g), pipe, sizeof pipe);
	if (fuzz_run_pipeline(g, pipe, data[0] & 32 ? fuzz_sink() : NULL, data[0] & 64, &d) != 0)
		goto out;
	if (fuzz_unlowered(g))
		fuzz_fail("lower-tiled left a compute op", pipe, ir_print_str(g, NULL));
	{
		const Graph *gs[1] = {g};

		if (exec_check_limits(gs, 1, &lim, &d) != 0 || fuzz_tile_work(g) > FUZZ_MAX_WORK)
			goto out;
	}
	v1 = xcalloc((size_t)g->nnodes + 1, sizeof *v1);
	v3 = xcalloc((size_t)g->nnodes + 1, sizeof *v3);
	fuzz_fill(g, v1, 0x5a);
	fuzz_fill(g, v3, fill3);
	nerr = d.nerr;
	if (!(plan = exec_tile_compile(g, &d))) {
		if (d.nerr == nerr)
			fuzz_fail("the plan was refused without an error", pipe, ir_print_str(g, NULL));
		goto out;
	}
	if (exec_tile_run(plan, v1, 1, &d) != 0) {
		if (d.nerr == nerr)
			fuzz_fail("the run failed without an error", pipe, ir_print_str(g, NULL));
		goto out;
	}
	if (exec_tile_run(plan, v3, THREADS, &d) != 0)
		fuzz_fail("a plan that ran on one thread fails on three", pipe, ir_print_str(g, NULL));
	fuzz_same_bits(g, v1, 0x5a, g, v3, fill3, pipe);
out:
	exec_tile_free(plan);
	if (v1)
		exec_tensors_free(v1, g->nnodes);
	if (v3)
		exec_tensors_free(v3, g->nnodes);
	free(v1);
	free(v3);
	ir_graph_free(g);
	diag_free(&d);
	return 0;
}
