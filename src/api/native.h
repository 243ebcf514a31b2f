/*
 * native.h: the native engine, aicm-run --engine=native (DESIGN section
 * 13, docs/codegen.md).
 *
 * native_load generates the graph's C (src/codegen), compiles it with the
 * system C compiler into a shared object cached by a hash of the C text,
 * the compiler's version, the flags and the CPU, and loads it; native_run
 * runs its kernels' program ranges on threads of its own.  KernelStats are
 * the tile engine's (properties of the program): native_count_stats has
 * the tile engine count them beside a native run, for aicm-run --stats and
 * libaicm alike.
 */
#ifndef AICM_NATIVE_H
#define AICM_NATIVE_H

#include <stdbool.h>

#include "exec.h"
#include "tile_exec.h"

typedef struct NativeModel NativeModel;

/* The outcome of native_load besides the model: exit status (0 ok, 2 no C
 * compiler or an I/O error, 3 the compiler refused the C, 1 the graph
 * holds what the emitter cannot generate: a diagnostic in d). */
typedef struct NativeInfo {
	int status;
	bool cache_hit;
	char so_path[4096];          /* the shared object loaded */
	double gen_ms, compile_ms;   /* C generation; compile (0 on a hit) */
} NativeInfo;

/* stem: the input file (for NAME), or NULL.  Messages other than the
 * emitter's diagnostics go to d's stream (d->out: stderr in the tools,
 * libaicm's capture) prefixed with tool. */
NativeModel *native_load(const Graph *g, const char *stem, const char *tool, Diag *d,
    NativeInfo *info);
/* Runs every kernel on vals (one tensor per node, the sources filled);
 * allocates the kernels' results.  0, or -1 after a diagnostic. */
int native_run(NativeModel *m, Tensor *vals, int threads, Diag *d);
void native_free(NativeModel *m);
/* The KernelStats of a native run of g on vals: the tile engine's count,
 * on one thread over the same sources (vals' sources, only read), into
 * results of its own (vals' results are left as the native run wrote
 * them).  *plan is compiled on the first call and kept for the next
 * ones (the caller frees it); exec_tile_stats(*plan) then holds the
 * figures.  0, or -1 after a diagnostic. */
int native_count_stats(TilePlan **plan, const Graph *g, const Tensor *vals, Diag *d);

#endif
