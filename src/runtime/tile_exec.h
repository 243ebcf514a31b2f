/*
 * tile_exec.h: the tile executor and KernelStats (DESIGN §7, docs/tiled.md).
 *
 * exec_tile_compile turns a lowered graph (sources and tiled nodes only)
 * into a plan: every value of every body gets a slot (scalars) or a buffer
 * (tiles, padded to rank 4 on the left), every load and store its tensor's
 * strides, so that running it does no name lookups and no allocation (the
 * scratch and the thread crew are made at the first run and kept until
 * exec_tile_free).  exec_tile_run runs the kernels in node order and the
 * programs of each grid in a fixed order, ascending along every axis; with
 * threads > 1 the programs of a grid are spread over the crew, and atomics
 * are logged per program and applied in program order afterwards, so that
 * results are bitwise those of one thread.
 *
 * KernelStats count what the programs did: unmasked elements of every
 * executed load and store times the element size (an atomic is one load and
 * one store; initialising the result for atomics is a store), flops of
 * unmasked results, and beside them the ideal bytes (each operand read
 * once, the result written once).
 */
#ifndef AICM_TILE_EXEC_H
#define AICM_TILE_EXEC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "exec.h"

typedef struct KernelStats {
	const char *name;            /* the kernel, without '@' */
	const char *kind;
	const char *result;          /* its result value, without '%' */
	int64_t grid[3];
	int64_t programs;
	int64_t bytes_read;          /* dram__bytes_read.sum */
	int64_t bytes_written;       /* dram__bytes_write.sum */
	int64_t flops;
	int64_t ideal_read;          /* each operand once */
	int64_t ideal_written;       /* the result once */
} KernelStats;

typedef struct TilePlan TilePlan;

/* The memory of the consts' packed copies (exec_tile_source_changed):
 * bytes, what the plan packs at its first run; room, the most it may
 * (-1: no budget but the plan's own, 1 GiB); skipped, the bytes of loads
 * left unpacked for the room (they read the tensor instead, slower). */
typedef struct TilePrepack {
	int64_t bytes, room, skipped;
} TilePrepack;

/* NULL after a diagnostic when g holds a compute op that is not tiled. */
TilePlan *exec_tile_compile(const Graph *g, Diag *d);
/* The same, its packed consts within room bytes (-1: no budget): what a
 * memory budget leaves after the graph's tensors (exec_limits_room), so
 * that the copies count in --max-total-bytes.  Packing is an
 * optimisation: past the room a load is left unpacked, never refused. */
TilePlan *exec_tile_compile_within(const Graph *g, int64_t room, Diag *d);
/* Runs the plan on vals (one Tensor per node of the graph it was compiled
 * from; the sources filled in by the caller).  threads < 1 means 1.
 * Returns 0 or -1 after a diagnostic (a source of the wrong type, an
 * integer division by zero: reported at the kernel, naming the op). */
int exec_tile_run(TilePlan *p, Tensor *vals, int threads, Diag *d);
/* The plan keeps, across runs, copies of graph consts that its loads read
 * in tiles (every tile of the tensor packed once: tile_plan.c's
 * plan_prepack); they are packed again when the const's data pointer in
 * vals moves.  A caller that rewrites const node's data in place between
 * runs says so here, and the next run packs it again. */
void exec_tile_source_changed(TilePlan *p, int node);
/* How many times the plan has packed one of those consts' loads, over
 * all its runs: the first run packs each once, a run on the same consts
 * none (docs/perf.md: a re-pack per run was suspected of the transformer
 * layer's slow runs, and this count ruled it out). */
int64_t exec_tile_packs(const TilePlan *p);
/* The packed consts' memory and what the room left unpacked. */
TilePrepack exec_tile_prepacked(const TilePlan *p);
/* The statistics of the last run, one per tiled node in node order. */
const KernelStats *exec_tile_stats(const TilePlan *p, int *n);
void exec_tile_free(TilePlan *p);
/* The table (1 KB = 1000 B) or, with json, one JSON object. */
void exec_tile_print_stats(FILE *f, const KernelStats *ks, int n, bool json);
/* b bytes as the statistics print them: "305.3 KB", 1 KB = 1000 B. */
void exec_tile_fmt_bytes(char *buf, size_t n, int64_t b);
/* The sum of ks[0..n) (name "total"). */
KernelStats exec_tile_total(const KernelStats *ks, int n);

#endif
