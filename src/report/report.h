/*
 * report.h: the pictures of a compile (DESIGN §15, docs/report.md "The
 * pictures"), as self-contained SVG that aicm-opt's --emit=svg-* writes
 * alone and the HTML report inlines.
 *
 * Every picture is drawn from data the tools already hold: the tile grid
 * from a lowered kernel's TileFn (its program ids and index expressions,
 * evaluated for the programs of the grid, never run), the autotune heat
 * map from the cost model's table of every candidate (autotune_table,
 * passes/autotune.c: the same scoring and ranking autotune chose by), the
 * traffic bars and the roofline from KernelStats that aicm-run wrote
 * (--stats-file) and this layer reads back.  Output is deterministic
 * (numbers printed by one rule, no clock, no address), so that goldens
 * hold.  Each *_svg function writes one <svg> element with its xmlns and
 * no XML prolog, fit to be inlined in HTML or written alone; the *_doc
 * functions write a whole SVG document (prolog, one panel per kernel).
 * This layer sits above passes/ and src/runtime/ and below src/tools/.
 */
#ifndef AICM_REPORT_H
#define AICM_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir.h"
#include "pass.h"
#include "tile_exec.h"

enum {
	REPORT_GRID_MAX_CELLS = 4096,  /* output tiles drawn per kernel; more are
	                                * summarised, and the picture says so */
	REPORT_MAX_PANELS = 64,        /* kernels drawn by a *_doc; the rest named */
};

/* ---- the tile grid (svg_grid.c) ----------------------------------------- */

/* One lowered kernel (node `node` of g, an OP_TILED node): its result's
 * last two dimensions cut into the tiles that the programs of the grid
 * store (ragged edge tiles hatched with their masked part, split-K's
 * atomics marked with the number of programs that land on a tile), and
 * beside it every operand's last two dimensions with the tiles that one
 * program loads, over all its loop trips (program < 0: the grid's last
 * program, the one at the ragged corner).  Leading (batch) dimensions:
 * index 0 is drawn, the others said. */
void report_grid_svg(FILE *f, const Graph *g, int node, int64_t program);
/* Every lowered kernel of g, one panel each (at most REPORT_MAX_PANELS);
 * returns how many lowered kernels g holds (0: a document that says so). */
int report_grid_doc(FILE *f, const Graph *g);

/* ---- autotune (svg_autotune.c) ------------------------------------------ */

/* One candidate of autotune's table. */
typedef struct ReportTuneCand {
	int bm, bn, bk, warps, stages, split;   /* 0: not of this kind */
	const char *pruned;          /* NULL: scored; else the reason: cost_prune_names'
	                              * "block", "smem", "regs" */
	double score;                /* estimated ms (scored only) */
	double mem, comp, launch, waste;        /* its parts, ms */
	int rank;                    /* 1-based among the scored by autotune's order; 0: pruned */
} ReportTuneCand;

/* autotune's table for one kernel, as the cost model scores it for the
 * pass's target: every candidate in generation order, pruned ones with
 * their reason.  chosen is the candidate the kernel carries after the
 * pass (from the model, the cache or a measurement), or -1. */
typedef struct ReportTune {
	char *kernel;                /* without '@' */
	const char *kind;            /* ir_kernel_kinds */
	const char *dtype;
	char *target;
	int64_t batch, m, n, k;      /* the problem (cost.h) */
	bool has_bk, has_stages;
	ReportTuneCand *cand;
	int ncand;
	int chosen;
} ReportTune;

typedef struct ReportTunes {
	ReportTune *t;
	int n, cap;
} ReportTunes;

/* Adds the table of every kernel of g, as autotune instance pi (a pass
 * named "autotune", its option values) scores it: call it from a
 * PassRun.after hook with the graph autotune just tuned.  A pipeline with
 * several autotune instances adds each one's tables. */
void report_tunes_collect(ReportTunes *r, const Graph *g, const PassInst *pi);
void report_tunes_free(ReportTunes *r);
/* The BM x BN heat map of one kernel: per cell the best score of its
 * candidates (other BK, warps, stages), coloured by score relative to the
 * best, pruned cells marked by reason, the chosen cell outlined. */
void report_tune_svg(FILE *f, const ReportTune *t);
/* Every table of r, one panel each (at most REPORT_MAX_PANELS). */
void report_tune_doc(FILE *f, const ReportTunes *r);

/* ---- run data (stats_read.c) -------------------------------------------- */

/* The KernelStats of one run, read back from aicm-run's --stats-file JSON
 * ({"stats":"kernels","kernels":[...],"total":{...}}); the strings are
 * owned by it. */
typedef struct ReportStats {
	KernelStats *k;
	int n;
	KernelStats total;
} ReportStats;

/* Parses text[0..len) strictly (one JSON object, the keys aicm-run writes,
 * each once, integers non-negative and within int64).  0, or -1 after one
 * located error to err: "NAME:LINE:COL: error: ...", NAME the file's. */
int report_stats_parse(const char *name, const char *text, size_t len, ReportStats *out,
    FILE *err);
/* Reads and parses file path: 0, -1 on bad input (exit 1), -2 when the file
 * cannot be read (exit 2: "TOOL: error: cannot read 'PATH': why"); the
 * message to err either way. */
int report_stats_read(const char *tool, const char *path, ReportStats *out, FILE *err);
void report_stats_free(ReportStats *s);

/* ---- traffic and roofline (svg_traffic.c) ------------------------------- */

/* A machine's peaks for the roofline. */
typedef struct ReportPeak {
	char name[64];               /* "cpu", "h100", or "given" */
	double gflops;               /* peak GFLOP/s */
	double gbs;                  /* memory bandwidth, GB/s */
} ReportPeak;

/* spec is a target of passes/cost.c (its f64 matmul peak and bandwidth,
 * or f32's when f32 is true) or "GFLOPS,GBS" (bench/peak.c's figures, two
 * numbers within [1e-6, 1e12]).  0, or -1 with why written (lowercase, no
 * period). */
int report_peak_parse(const char *spec, bool f32, ReportPeak *out, char *why, size_t whylen);
/* Per kernel: bytes actually moved against the ideal (each operand read
 * once, the result written once); with eager (a run of the same graph with
 * each op its own kernel; may be NULL) also the totals of the eager run
 * beside the fused one. */
void report_traffic_svg(FILE *f, const ReportStats *run, const ReportStats *eager);
/* The roofline of pk (min(peak, intensity x bandwidth), log-log, the ridge
 * point marked) with each kernel of run placed at its arithmetic intensity
 * (flops / bytes moved) on the roof: KernelStats count, they do not time,
 * so a kernel's point is what the machine allows it, memory- or
 * compute-bound as said beside it. */
void report_roofline_svg(FILE *f, const ReportStats *run, const ReportPeak *pk);
/* Both pictures in one SVG document (--emit=svg-traffic). */
void report_traffic_doc(FILE *f, const ReportStats *run, const ReportStats *eager,
    const ReportPeak *pk);

#endif
