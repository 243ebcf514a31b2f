/*
 * measure.h: the measuring callback the tools hand autotune{measure=true}.
 *
 * A pass never calls the runtime (DESIGN §6), so timing a tile
 * configuration is the tools' job: aicm-opt and aicm-run both fill a
 * PassMeasure (pass.h) with measure_kernel and a MeasureCtx, and hand it to
 * the pipeline.  This layer sits beside the two main()s: it links the pass
 * registry (lower-tiled) with the runtime (interpreter, tile executor) and
 * the native engine (src/api), which neither src/ir, passes/ nor
 * src/runtime may do.
 */
#ifndef AICM_MEASURE_H
#define AICM_MEASURE_H

#include <stdint.h>

#include "exec.h"
#include "pass.h"

typedef struct MeasureCtx {
	int threads;                 /* the engine's threads (tile or native) */
	int reps;                    /* timed runs after the checked one; the min counts */
	uint64_t seed;               /* of the scratch inputs (exec_fill_random) */
	ExecLimits lim;              /* the scratch tensors must fit these */
	int64_t max_work;            /* flops of the reference run, and of each
	                              * candidate's runs (--max-work; <= 0: none) */
	const char *tool;            /* for messages */
	const char *datadir;         /* of const file= (exec_const_read) */
} MeasureCtx;

/* A context with the defaults (3 timed runs, seed 0, the default limits)
 * and a PassMeasure that uses it. */
void measure_init(MeasureCtx *c, PassMeasure *pm, const char *tool, int threads);

/* The callback (PassMeasure.run): builds a scratch graph holding kernel k
 * alone, its operands as fresh inputs filled by exec_fill_random (a
 * splat const stays a splat), runs the reference interpreter on it once,
 * then per candidate lowers it with lower-tiled (the candidate's
 * attributes), runs it once on the engine the target models (cpu: the
 * native engine, compiled through its cache; the others: the tile
 * executor) and compares the result with the
 * reference at the element type's tolerance (1e-9 f64, 1e-4 f32), and when
 * it matches times `reps` more runs, keeping the least wall time. */
int measure_kernel(void *ctx, const char *target, const Graph *g, const Kernel *k,
    const Kernel *cand, int n, PassMeasured *out, Diag *d);

#endif
