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
#include <math.h>
#include <stdint.h>

#include "exec.h"
#include "fuzz.h"
#include "tile.h"
#include "tile_exec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_BYTES = 1 << 20, MAX_TOTAL = 1 << 24 };
static const double MAX_WORK = 1 << 21;

static bool
has_tiled(const Graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].tile)
			return true;
	return false;
}

static int
run_pass(Graph *g, const char *name, Diag *d)
{
	Pipeline pl;
	int r;

	if (pass_parse_pipeline(name, &pl, stderr, "fuzz") != 0)
		abort();
	r = pl.p[0].pass->run(g, &(PassArgs){pl.p[0].pass->opts, pl.p[0].vals, NULL, false}, d);
	pass_free_pipeline(&pl);
	if (r == 0 && ir_verify(g, d) != 0)
		fuzz_fail("the IR does not verify after a pass", name, ir_print_str(g, NULL));
	return r;
}

/* Element operations the plan would do: programs x loop trips x tile
 * elements (times K for a dot), summed over the instructions; the
 * reference interpreter's work is of the same order. */
static double
work(const Graph *g)
{
	double w = 0;

	for (int i = 0; i < g->nnodes; i++) {
		const TileFn *f = g->nodes[i].tile;
		double mult[IR_MAX_NEST + 2], programs = 1;
		int end[IR_MAX_NEST + 2], depth = 0;

		if (!f)
			continue;
		for (int a = 0; a < 3; a++)
			programs *= f->grid[a] > 0 ? (double)f->grid[a] : 1;
		mult[0] = programs;
		for (int k = 0; k < f->ninsts; k++) {
			const TileInst *in = &f->insts[k];
			double elems = 1;

			while (depth > 0 && k > end[depth])
				depth--;
			if (in->res >= 0 && f->vals[in->res].rank > 0)
				for (int r = 0; r < f->vals[in->res].rank; r++)
					elems *= (double)f->vals[in->res].shape[r];
			if (in->op == TO_DOT && in->in[0] >= 0 && f->vals[in->in[0]].rank > 0)
				elems *= (double)f->vals[in->in[0]].shape[f->vals[in->in[0]].rank - 1];
			w += mult[depth] * elems;
			if (in->op == TO_FOR && depth < IR_MAX_NEST) {
				double trips = in->step > 0 ? ceil((double)(in->hi - in->lo) / in->step) : 1;

				mult[depth + 1] = mult[depth] * (trips > 0 ? trips : 1);
				end[++depth] = in->end;
			}
		}
	}
	return w;
}

static void
fill(const Graph *g, Tensor *vals)
{
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (ir_ops[n->op].cls != OC_SOURCE || n->tile)
			continue;
		if (exec_tensor_alloc(&vals[i], &n->type, 0) != 0)
			abort();
		if (n->op == OP_CONST && (n->at.set & AB(VALUE)))
			exec_fill_splat(&vals[i], n->at.value);
		else
			exec_fill_random(&vals[i], 0, n->name);
	}
}

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
	ExecLimits lim = {MAX_BYTES, MAX_TOTAL};
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
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].type.rank < 0) {
			if (run_pass(g, "shape-infer", &d) != 0)
				goto out;
			break;
		}
	if (!has_tiled(g)) {
		ref = parse_graph(text, size, 1, &d);
		if (!ref || run_pass(ref, "shape-infer", &d) != 0)
			fuzz_fail("the graph as parsed does not parse or infer twice", NULL, NULL);
	}
	for (int i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].tile && ir_ops[g->nodes[i].op].cls != OC_SOURCE) {
			if (run_pass(g, "lower-tiled", &d) != 0)
				goto out;
			break;
		}
	{
		const Graph *gs[2] = {g, ref};

		if (exec_check_limits(gs, ref ? 2 : 1, &lim, &d) != 0 || work(g) > MAX_WORK)
			goto out;
	}
	nerr = d.nerr;
	vals = xcalloc((size_t)g->nnodes, sizeof *vals);
	fill(g, vals);
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
		fill(ref, rvals);
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
