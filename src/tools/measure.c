/*
 * measure.c: time a kernel's tile configurations on the engine the target
 * models (the tile executor, or the native engine for cpu), for
 * autotune{measure=true} (measure.h).
 *
 * Triton's @autotune times every candidate on the device with the real
 * launch; here a candidate is the kernel alone in a scratch graph (built
 * by ir_extract_kernel): its operands become fresh inputs of the same
 * types with the documented random values (the user's tensors are never
 * touched, nor even allocated), the kernel keeps its ops, attributes and
 * kind and takes the candidate's tile attributes, and lower-tiled (through
 * the pass registry, as any pipeline would run it) turns it into the tile
 * program that aicm-run would execute.  The reference interpreter runs the
 * scratch graph once per call; each candidate's first run is checked
 * against it with DESIGN §7's error measure, and only a matching candidate
 * is timed: `reps` more runs, the least wall time kept (the machine is
 * shared; the minimum is the run the others disturbed least).
 *
 * Before anything runs, the work is checked against the --max-work limit
 * (work.c's planned flops): the reference run, and each candidate's
 * 1 + reps runs of its own lowering (boundary tiles make the tilings'
 * figures differ).  An 8000^3 matmul was still being measured after a
 * minute; now it is refused at once.
 *
 * Each target is timed on the engine it models (DESIGN section 13): cpu
 * on the native engine, the others on the tile executor.  A native
 * candidate's lowered scratch graph goes through native_load (src/api),
 * which generates its C and compiles it into the native driver's cache,
 * so a tiling timed twice (or run later by aicm-run) is compiled once; a
 * miss costs about 0.3 s of CPU, which is why autotune times fewer
 * tilings on cpu.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "tile_exec.h"
#include "../../passes/passes.h"
#include "../api/native.h"

void
measure_init(MeasureCtx *c, PassMeasure *pm, const char *tool, int threads)
{
	memset(c, 0, sizeof *c);
	c->threads = threads < 1 ? 1 : threads;
	c->reps = 3;
	c->seed = 0;
	c->lim.max_bytes = EXEC_DEFAULT_MAX_BYTES;
	c->lim.max_total_bytes = exec_default_max_total();
	c->max_work = EXEC_DEFAULT_MAX_WORK;
	c->tool = tool;
	pm->run = measure_kernel;
	pm->ctx = c;
}

/* Allocates and fills the scratch graph's sources; 0 or -1 (diagnostic). */
static int
fill_sources(const MeasureCtx *c, const Graph *sg, Tensor *vals, Diag *d)
{
	for (int i = 0; i < sg->nnodes; i++) {
		const Node *n = &sg->nodes[i];

		if (ir_ops[n->op].cls != OC_SOURCE)
			continue;
		if (exec_tensor_alloc(&vals[i], &n->type, c->lim.max_bytes) != 0) {
			diag_error(d, n->loc, "autotune: cannot allocate a scratch copy of '%%%s' "
			    "(%lld bytes) to measure with", n->name,
			    (long long)exec_type_bytes(&n->type));
			return -1;
		}
		if (n->op == OP_CONST && (n->at.set & AB(FILE))) {
			char err[EXEC_ERR_MAX];

			exec_tensor_free(&vals[i]);
			if (exec_const_read(c->datadir, n, c->lim.max_bytes, &vals[i], err) != 0) {
				diag_error(d, ir_attr_loc(n, ATTR_FILE).line ? ir_attr_loc(n, ATTR_FILE) :
				    n->loc, "autotune: %s", err);
				return -1;
			}
		} else if (!exec_fill_const(&vals[i], n)) {
			exec_fill_random(&vals[i], c->seed, n->name);
		}
	}
	return 0;
}

static double
graph_work(const Graph *sg)
{
	double w = 0;

	for (int i = 0; i < sg->nnodes; i++)
		w += exec_node_work(sg, i);
	return w;
}

/* Checks the work of measuring kernel k against c->max_work before
 * any of it runs: the reference interpreter on rsg once, then per
 * candidate its lowering 1 + reps times.  0, or -1 (diagnostic). */
static int
check_work(const MeasureCtx *c, const Graph *g, const Kernel *k, const Kernel *cand, int n,
    const Graph *rsg, Diag *d)
{
	double lim = (double)c->max_work, w;
	/* fuse's kernels have no place of their own: their root's */
	Loc at = k->loc.line ? k->loc : g->nodes[k->last].loc;
	char lb[32];
	int rc = 0;

	if (c->max_work <= 0)
		return 0;
	exec_work_str(c->max_work, lb, sizeof lb);
	if ((w = graph_work(rsg)) > lim) {
		diag_error(d, at, "autotune: measuring kernel '@%s' checks each tiling against "
		    "the reference interpreter, whose run does %.3g flops, more than "
		    "--max-work=%s", k->name, w, lb);
		rc = -1;
	}
	for (int i = 0; rc == 0 && i < n; i++) {
		Graph *lg = ir_extract_kernel(g, k, &cand[i]);
		char cfg[128];
		size_t m = 0;

		if (pass_run_text(aicm_passes, lg, "lower-tiled", d, NULL, c->tool) != 0) {
			ir_graph_free(lg);
			return -1;
		}
		w = graph_work(lg) * (1 + c->reps);
		ir_graph_free(lg);
		if (w <= lim)
			continue;
		cfg[0] = '\0';
		for (int a = 0; a < KA_COUNT && m < sizeof cfg; a++)
			if (cand[i].kset & (1u << a))
				m += (size_t)snprintf(cfg + m, sizeof cfg - m, " %s=%lld",
				    ir_kattr_names[a], (long long)cand[i].kattr[a]);
		diag_error(d, at, "autotune: measuring kernel '@%s' with%s would do %.3g "
		    "flops (%d runs of %.3g), more than --max-work=%s", k->name, cfg, w,
		    1 + c->reps, w / (1 + c->reps), lb);
		rc = -1;
	}
	if (rc != 0)
		diag_note(d, LOC_NONE, "measure=false ranks the tilings by the cost model, which "
		    "runs nothing; --max-work=N raises the limit (flops; 0: no limit)");
	return rc;
}

/* The engine target models: the native one for cpu, else the tile
 * executor. */
static bool
target_native(const char *target)
{
	return target && strcmp(target, "cpu") == 0;
}

/* Runs the lowered scratch graph lg once on the chosen engine. */
static int
run_once(const MeasureCtx *c, TilePlan *plan, NativeModel *nm, Tensor *vals, Diag *d)
{
	return nm ? native_run(nm, vals, c->threads, d) : exec_tile_run(plan, vals, c->threads, d);
}

/* One candidate: lower, run and check once, time reps more when it
 * matches.  ref holds the reference graph's values (sources and result);
 * rsg is that graph. */
static int
measure_one(const MeasureCtx *c, bool native, const Graph *g, const Kernel *k,
    const Kernel *cand, const Graph *rsg, const Tensor *rvals, PassMeasured *out, Diag *d)
{
	Graph *lg = ir_extract_kernel(g, k, cand);
	Tensor *vals = NULL;
	TilePlan *plan = NULL;
	NativeModel *nm = NULL;
	int rc = -1, root;
	const Tensor *ref = &rvals[rsg->nnodes - 1];
	double tol = ref->dt == DT_F32 ? 1e-4 : 1e-9;
	ExecErr e;

	memset(out, 0, sizeof *out);
	out->engine = native ? "native" : "tile";
	if (pass_run_text(aicm_passes, lg, "lower-tiled", d, NULL, c->tool) != 0)
		goto done;
	vals = xcalloc((size_t)lg->nnodes, sizeof *vals);
	/* the sources are the reference's own tensors, shared (the tile
	 * executor never writes a source) and unhooked before freeing */
	for (int i = 0; i < lg->nnodes; i++)
		if (ir_ops[lg->nodes[i].op].cls == OC_SOURCE) {
			int r = ir_lookup(rsg, lg->nodes[i].name);

			if (r < 0)
				AICM_BUG("scratch source '%s' lost in lowering", lg->nodes[i].name);
			vals[i] = rvals[r];
		}
	root = ir_lookup(lg, g->nodes[k->last].name);
	if (root < 0)
		AICM_BUG("the kernel's root '%s' lost in lowering", g->nodes[k->last].name);
	if (native) {
		NativeInfo ni;

		/* status 2 (no C compiler, an I/O error) and 3 (the compiler
		 * refused the C) print their own message, without a diagnostic */
		if (!(nm = native_load(lg, NULL, c->tool, d, &ni))) {
			if (ni.status != 1)
				diag_error(d, k->loc.line ? k->loc : g->nodes[k->last].loc,
				    "autotune: the native engine cannot build kernel '@%s' to measure "
				    "it (status %d); target=cpu-tile times on the tile executor",
				    k->name, ni.status);
			goto done;
		}
	} else if (!(plan = exec_tile_compile(lg, d))) {
		goto done;
	}
	if (run_once(c, plan, nm, vals, d) != 0)
		goto done;
	e = exec_compare(&vals[root], ref);
	out->err = e.rel;
	out->match = e.rel <= tol;
	if (out->match) {
		out->ms = -1;
		for (int r = 0; r < c->reps; r++) {
			double t0 = pass_now_ms(), ms;

			if (run_once(c, plan, nm, vals, d) != 0)
				AICM_BUG("the %s engine failed on a rerun", out->engine);
			ms = pass_now_ms() - t0;
			if (out->ms < 0 || ms < out->ms)
				out->ms = ms;
		}
	}
	rc = 0;
done:
	if (vals) {
		for (int i = 0; i < lg->nnodes; i++)
			if (ir_ops[lg->nodes[i].op].cls == OC_SOURCE)
				memset(&vals[i], 0, sizeof vals[i]);
		exec_tensors_free(vals, lg->nnodes);
		free(vals);
	}
	exec_tile_free(plan);
	native_free(nm);         /* before lg: the model points into it */
	ir_graph_free(lg);
	return rc;
}

int
measure_kernel(void *ctx, const char *target, const Graph *g, const Kernel *k,
    const Kernel *cand, int n, PassMeasured *out, Diag *d)
{
	const MeasureCtx *c = ctx;
	Graph *rsg;
	Tensor *rvals;
	int rc = 0;

	if (n <= 0)
		return 0;
	if (k->first < 0 || k->last < k->first || k->last >= g->nnodes)
		AICM_BUG("measure: kernel '%s' has no nodes", k->name);
	rsg = ir_extract_kernel(g, k, &cand[0]);
	rvals = xcalloc((size_t)rsg->nnodes, sizeof *rvals);
	{
		const Graph *gs[1] = {rsg};

		if (exec_check_limits(gs, 1, &c->lim, d) != 0) {
			diag_note(d, k->loc, "autotune: measuring kernel '@%s' needs scratch copies "
			    "of its operands and result", k->name);
			rc = -1;
		}
	}
	if (rc == 0 && check_work(c, g, k, cand, n, rsg, d) != 0)
		rc = -1;
	if (rc == 0 && (fill_sources(c, rsg, rvals, d) != 0 || exec_interp(rsg, rvals, d) != 0))
		rc = -1;
	for (int i = 0; rc == 0 && i < n; i++)
		rc = measure_one(c, target_native(target), g, k, &cand[i], rsg, rvals, &out[i], d);
	exec_tensors_free(rvals, rsg->nnodes);
	free(rvals);
	ir_graph_free(rsg);
	return rc;
}
