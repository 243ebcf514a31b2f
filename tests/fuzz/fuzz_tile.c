/*
 * fuzz_tile.c: the tile IR's parser and the tile executor, text in.
 *
 * The input is a graph, tiled or not.  It is parsed and verified; an
 * untyped graph gets shape-infer and what is not lowered gets lower-tiled
 * with its defaults, as aicm-run does.  Then the tile executor compiles the
 * plan and runs it on one thread with aicm-run's random inputs.  A graph
 * that was not tiled as written is also run by the reference interpreter,
 * and the two must agree within aicm-run's default tolerances (DESIGN §7's
 * error measure): the executor may refuse a program only with an error,
 * and may never compute something else.  Work is bounded before running
 * (tensors, programs times loop trips times tile elements), so that a
 * written grid of a billion programs is skipped, not timed out on.
 */
#include <stdint.h>

#include "fuzz_exec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
compare(const Graph *g, const Tensor *vals, const Graph *ref, const Tensor *rvals)
{
	int *outs, n = ir_outputs(g, &outs);

	for (int j = 0; j < n; j++) {
		const Node *o = &g->nodes[outs[j]];
		int r = ir_lookup(ref, o->name);
		double tol = o->type.dt == DT_F32 ? 1e-4 : 1e-9;
		ExecErr e;

		if (r < 0)
			fuzz_fail("an output of the lowered graph is not in the graph as parsed",
			    o->name, NULL);
		e = exec_compare(&vals[outs[j]], &rvals[r]);
		if (!(e.rel <= tol)) {
			fprintf(stderr, "fuzz: %%%s: rel err %g\n", o->name, e.rel);
			fuzz_fail("the tile executor and the reference interpreter disagree",
			    ir_print_str(g, NULL), NULL);
		}
	}
	free(outs);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	ExecLimits lim = {FUZZ_MAX_BYTES, FUZZ_MAX_TOTAL};
	Graph *g, *ref = NULL;
	Tensor *vals = NULL, *rvals = NULL;
	TilePlan *plan = NULL;
	Diag d;
	int nerr;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	diag_init(&d, "fuzz", text, size, fuzz_sink());
	g = parse_graph(text, size, 1, &d);
	if (!g || ir_verify(g, &d) != 0)
		goto out;
	if (fuzz_untyped(g) && fuzz_run_pipeline(g, "shape-infer", NULL, false, &d) != 0)
		goto out;
	if (!fuzz_has_tiled(g)) {
		ref = parse_graph(text, size, 1, &d);
		if (!ref || fuzz_run_pipeline(ref, "shape-infer", NULL, false, &d) != 0)
			fuzz_fail("the graph as parsed does not parse or infer twice", NULL, NULL);
	}
	if (fuzz_unlowered(g) && fuzz_run_pipeline(g, "lower-tiled", NULL, false, &d) != 0)
		goto out;
	{
		const Graph *gs[2] = {g, ref};

		if (exec_check_limits(gs, ref ? 2 : 1, &lim, &d) != 0 ||
		    fuzz_tile_work(g) > FUZZ_MAX_WORK)
			goto out;
	}
	nerr = d.nerr;
	vals = xcalloc((size_t)g->nnodes, sizeof *vals);
	fuzz_fill(g, vals, 0);
	if (!(plan = exec_tile_compile(g, &d))) {
		if (d.nerr == nerr)
			fuzz_fail("the plan was refused without an error", ir_print_str(g, NULL), NULL);
		goto out;
	}
	if (exec_tile_run(plan, vals, 1, &d) != 0) {
		if (d.nerr == nerr)
			fuzz_fail("the run failed without an error", ir_print_str(g, NULL), NULL);
		goto out;
	}
	if (ref) {
		rvals = xcalloc((size_t)ref->nnodes, sizeof *rvals);
		fuzz_fill(ref, rvals, 0);
		if (exec_interp(ref, rvals, &d) != 0)
			fuzz_fail("the reference interpreter failed on a verified graph", NULL, NULL);
		compare(g, vals, ref, rvals);
	}
out:
	exec_tile_free(plan);
	if (vals)
		exec_tensors_free(vals, g->nnodes);
	if (rvals)
		exec_tensors_free(rvals, ref->nnodes);
	free(vals);
	free(rvals);
	ir_graph_free(g);
	ir_graph_free(ref);
	diag_free(&d);
	return 0;
}
