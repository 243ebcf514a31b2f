/*
 * aicm.h: libaicm, the compiler as a library (DESIGN section 14).
 *
 * The one public header: everything a program embedding aicm needs, and
 * nothing of the internals (no IR structs: every object is an opaque
 * handle).  The flow is that of aicm-run:
 *
 *   aicm_context_new          a context: options (threads, seed) and the
 *                             text of the last error
 *   aicm_parse                .aicm text -> a module (the graph)
 *   aicm_module_run_passes    a pipeline given as text, "shape-infer,fuse"
 *   aicm_module_print         the module as .aicm text
 *   aicm_compile              a module -> a program for an engine (tile,
 *                             reference or native), its constants filled in
 *   aicm_program_run          the program on caller-owned buffers
 *   aicm_program_kernel_stats what each kernel of the last run did
 *
 * Errors: every function that can fail returns an aicm_status; AICM_OK is
 * 0.  The context then holds the error text (aicm_error), with the located
 * diagnostics exactly as aicm-opt prints them (file:line:col, the line,
 * a caret).  No function exits or aborts on bad input; an internal error
 * (a bug in aicm) still ends the process with status 3, as the tools do.
 *
 * Threads: nothing mutable is shared between contexts, so two threads may
 * use two contexts (and what was made from them) at once.  A context and
 * its modules and programs are used by one thread at a time.
 *
 * Ownership: what a _new, aicm_parse or aicm_compile call makes is freed by
 * the matching _free; strings and buffers the library allocates for the
 * caller (aicm_module_print, outputs with data NULL) are freed with
 * aicm_free.  A module must outlive the programs compiled from it; strings
 * returned as const char * belong to the handle they came from.
 */
#ifndef AICM_H
#define AICM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AICM_VERSION_MAJOR 0
#define AICM_VERSION_MINOR 1
#define AICM_VERSION_PATCH 0

#if defined(__GNUC__) && !defined(AICM_STATIC_ONLY)
#define AICM_API __attribute__((visibility("default")))
#else
#define AICM_API
#endif

/* The largest rank of a tensor. */
#define AICM_MAX_RANK 8

typedef struct aicm_context aicm_context;
typedef struct aicm_module aicm_module;
typedef struct aicm_program aicm_program;

/* The status of a call, as the tools' exit codes (DESIGN section 4). */
typedef enum aicm_status {
	AICM_OK = 0,
	AICM_ERR_INPUT = 1,          /* the text, the graph or a buffer is wrong */
	AICM_ERR_USAGE = 2,          /* a bad argument: a pipeline that does not parse,
	                              * a NULL handle, a file that cannot be read */
	AICM_ERR_INTERNAL = 3        /* out of memory for the library's own use */
} aicm_status;

/* Element types; the numbering is part of the ABI. */
typedef enum aicm_dtype {
	AICM_F64 = 0,                /* double */
	AICM_F32 = 1,                /* float */
	AICM_I32 = 2,                /* int32_t */
	AICM_I64 = 3,                /* int64_t */
	AICM_BOOL = 4                /* one byte, 0 or 1 */
} aicm_dtype;

typedef enum aicm_engine {
	AICM_ENGINE_TILE = 0,        /* the tile executor: lowers what is not lowered */
	AICM_ENGINE_REFERENCE = 1,   /* the reference interpreter: graphs, not tiled kernels */
	AICM_ENGINE_NATIVE = 2       /* the tiled kernels as C, compiled by the system's C
	                              * compiler ($CC, else cc) and cached (aicm-run
	                              * --engine=native; docs/codegen.md) */
} aicm_engine;

/* A dense row-major tensor the caller owns (or the library allocated,
 * for an output given with data NULL).  name selects a value by name
 * (without '%'); NULL selects by position. */
typedef struct aicm_tensor {
	const char *name;
	aicm_dtype dtype;
	int rank;
	int64_t shape[AICM_MAX_RANK];
	void *data;
} aicm_tensor;

/* What one kernel did in the last run (DESIGN section 7's KernelStats):
 * bytes moved, flops, and the ideal bytes (each operand read once, the
 * result written once).  The strings belong to the program. */
typedef struct aicm_kernel_stats {
	const char *name;            /* the kernel, without '@'; "total" for the sum */
	const char *kind;
	const char *result;          /* its result value, without '%' */
	int64_t grid[3];
	int64_t programs;
	int64_t bytes_read;
	int64_t bytes_written;
	int64_t flops;
	int64_t ideal_read;
	int64_t ideal_written;
} aicm_kernel_stats;

/* ---- version --------------------------------------------------------- */

/* The library's version as MAJOR * 10000 + MINOR * 100 + PATCH, to compare
 * with the macros of the header a program was built with. */
AICM_API int aicm_version(void);
/* "0.1.0" */
AICM_API const char *aicm_version_string(void);

/* ---- contexts and errors --------------------------------------------- */

/* NULL only when out of memory. */
AICM_API aicm_context *aicm_context_new(void);
AICM_API void aicm_context_free(aicm_context *ctx);
/* The text of the last failed call on ctx or its handles ("" after a call
 * that succeeded): the diagnostics, one or more lines, each ending in a
 * newline.  Valid until the next call on ctx. */
AICM_API const char *aicm_error(const aicm_context *ctx);
/* Threads of the tile and native engines, for programs compiled afterwards (>= 1;
 * the default is the machine's online cores, as aicm-run's). */
AICM_API aicm_status aicm_context_set_threads(aicm_context *ctx, int threads);
/* The seed of the constants that have no data (no value=, values= or
 * file=), filled as aicm-run --seed fills them (default 0). */
AICM_API aicm_status aicm_context_set_seed(aicm_context *ctx, uint64_t seed);

/* ---- modules ----------------------------------------------------------- */

/* Parses and verifies text[0..len) (a graph in .aicm syntax); file names
 * it in diagnostics (NULL: "<string>") and is where a const's file= is
 * looked up from (its folder).  The module keeps its own copy of text. */
AICM_API aicm_status aicm_parse(aicm_context *ctx, const char *text, size_t len,
    const char *file, aicm_module **out);
AICM_API void aicm_module_free(aicm_module *m);
/* Runs a pipeline, "shape-infer,fuse{max-ops=4},autotune,lower-tiled",
 * verifying after each pass.  A pipeline that does not parse is
 * AICM_ERR_USAGE; a pass that fails, AICM_ERR_INPUT (or AICM_ERR_USAGE
 * when a file a pass reads or writes, autotune's cache, cannot be).  Not
 * allowed while programs compiled from m exist. */
AICM_API aicm_status aicm_module_run_passes(aicm_module *m, const char *pipeline);
/* The module as .aicm text, NUL-terminated, *len (when not NULL) its
 * length; free it with aicm_free.  NULL only when out of memory. */
AICM_API char *aicm_module_print(const aicm_module *m, size_t *len);

/* ---- programs ---------------------------------------------------------- */

/* Prepares m to run on engine: an untyped graph gets shape-infer, and for
 * the tile and native engines whatever is not lowered gets lower-tiled (as
 * aicm-run does; m is changed so, and prints so after).  The constants are
 * filled in once, from their data or the context's seed; sizes and the
 * planned work are checked against aicm-run's default limits.  The native
 * engine then generates the kernels' C, compiles it into a shared object
 * (cached in $XDG_CACHE_HOME/aicm, else ~/.cache/aicm) and loads it: no C
 * compiler is AICM_ERR_USAGE ("the native engine needs a C compiler, and
 * 'cc' does not run (set $CC to one)"), a compiler that refuses the C
 * AICM_ERR_INTERNAL.  m must outlive the program. */
AICM_API aicm_status aicm_compile(aicm_module *m, aicm_engine engine, aicm_program **out);
AICM_API void aicm_program_free(aicm_program *p);

/* The graph's inputs (in the order of the text) and outputs (the values
 * nothing uses, in order), each described with data NULL; i out of range
 * is AICM_ERR_USAGE. */
AICM_API int aicm_program_num_inputs(const aicm_program *p);
AICM_API int aicm_program_num_outputs(const aicm_program *p);
AICM_API aicm_status aicm_program_input(const aicm_program *p, int i, aicm_tensor *desc);
AICM_API aicm_status aicm_program_output(const aicm_program *p, int i, aicm_tensor *desc);

/* Runs p.  in[0..nin): unnamed entries are the inputs in order; a named
 * one names an input, or a constant to replace (it keeps the new value
 * for later runs).  Every input must be given, once; each buffer's dtype
 * and shape must be the graph's (else AICM_ERR_INPUT with a diagnostic
 * at the value's definition).  out[0..nout): unnamed entries are the
 * outputs in order, named ones name any value of the graph; with data
 * NULL the library allocates the buffer (free it with aicm_free) and
 * fills in name (the program's string), dtype, rank and shape; otherwise
 * they are checked as the inputs' are and the result is copied into
 * data.  The buffers need no alignment; the caller's are only read (in)
 * or written (out) during the call. */
AICM_API aicm_status aicm_program_run(aicm_program *p, const aicm_tensor *in, int nin,
    aicm_tensor *out, int nout);

/* The kernels of the last run (0 for the reference interpreter, or before
 * a run), their statistics in node order, k = -1 the totals.  The native
 * engine's are the tile engine's (DESIGN section 13), counted on the last
 * run's inputs at the first call after the run, as aicm-run
 * --engine=native --stats counts them: a count that fails makes
 * aicm_program_num_kernels 0 and aicm_program_kernel_stats
 * AICM_ERR_INPUT with its diagnostic.  k out of range is AICM_ERR_USAGE. */
AICM_API int aicm_program_num_kernels(const aicm_program *p);
AICM_API aicm_status aicm_program_kernel_stats(const aicm_program *p, int k,
    aicm_kernel_stats *out);

/* The element size of dtype in bytes (0 for one that is not). */
AICM_API size_t aicm_dtype_size(aicm_dtype dtype);
/* Frees what the library allocated for the caller; NULL is ignored. */
AICM_API void aicm_free(void *ptr);

#ifdef __cplusplus
}
#endif

#endif
