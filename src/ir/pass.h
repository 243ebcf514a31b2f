/*
 * pass.h: the pass interface and the pipeline.
 *
 * A pass is a record, as in MLIR's Passes.td and QBE's target table: a name,
 * a one-line summary, its options with defaults, and one entry point.  Each
 * passes/<name>.c exports exactly one `const Pass pass_<name>`;
 * passes/registry.c lists them (passes.h: aicm_passes), above this layer,
 * and the functions here that look a pass up by name take that list, a
 * registry: a NULL-terminated array of passes.  Passes keep no mutable
 * globals: options arrive in PassArgs, and anything that must live across
 * kernels lives in the pass's own locals.
 */
#ifndef AICM_PASS_H
#define AICM_PASS_H

#include <float.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "ir.h"

typedef enum PassOptKind { PO_BOOL, PO_INT, PO_FLOAT, PO_STRING } PassOptKind;

typedef struct PassOpt {
	const char *key;             /* kebab-case: "max-ops" */
	PassOptKind kind;
	const char *def;             /* default, as it would be written; in parentheses,
	                              * "(the target's)", not a value but what the pass
	                              * does when the option is not written: then the
	                              * option has no value until written (pass_is_set) */
	const char *help;
	double lo, hi;               /* PO_INT/PO_FLOAT: the range [lo, hi] a value must
	                              * lie in, checked with the pipeline (exit 2); both
	                              * 0: any.  lo = PASS_ABOVE_0: (0, hi] */
} PassOpt;

/* The least double above 0, so that [PASS_ABOVE_0, hi] is exactly (0, hi]
 * and is printed so (a value that 0 would mean "unset" for, say). */
#define PASS_ABOVE_0 DBL_TRUE_MIN

typedef struct PassVal {
	bool set;                    /* written in the pipeline, not defaulted */
	bool b;
	int64_t i;
	double f;
	const char *s;               /* PO_STRING: owned by the pipeline */
} PassVal;

/* What one configuration of a kernel measured (autotune{measure=true}). */
typedef struct PassMeasured {
	double ms;                   /* the best wall time of a few runs */
	double err;                  /* error against the reference (DESIGN §7's measure) */
	bool match;                  /* err within the element type's tolerance */
	const char *engine;          /* the engine that ran it ("tile", "native"), for reports */
} PassMeasured;

/* A measuring callback that a tool hands the passes (DESIGN §6: passes
 * never call the runtime).  run times kernel k of g alone, once per
 * candidate cand[0..n) (copies of k carrying the candidate's attributes),
 * on scratch inputs, never the user's data, and checks each result against
 * the reference interpreter.  target is autotune's target name: the tool
 * times on the engine that target models (DESIGN section 13: cpu the native
 * engine, the others the tile executor).  0, or -1 after a diagnostic. */
typedef struct PassMeasure {
	int (*run)(void *ctx, const char *target, const Graph *g, const Kernel *k,
	    const Kernel *cand, int n, PassMeasured *out, Diag *d);
	void *ctx;
} PassMeasure;

typedef struct PassArgs {
	const PassOpt *opts;
	const PassVal *vals;         /* one per opts entry */
	FILE *report;                /* --report: where reports go, or NULL */
	bool report_json;
	const PassMeasure *measure;  /* NULL: the tool cannot measure */
} PassArgs;

typedef struct Pass {
	const char *name;
	const char *summary;
	const PassOpt *opts;         /* {0}-terminated */
	/* 0 ok; -1 the input is wrong (exit 1); PASS_IO a file the pass reads
	 * or writes (autotune's cache) cannot be (exit 2).  A diagnostic
	 * names the file and the reason before either. */
	int (*run)(Graph *g, const PassArgs *args, Diag *d);
	/* Judges a written option value that its kind and range cannot (a
	 * name from the pass's own list, a power of two), so that the
	 * pipeline refuses it with exit 2 and a caret, before any input is
	 * read.  0 accepts; -1 refuses, with why (the error, after "option
	 * 'KEY' of 'PASS' ") and note (a note line, or left empty) written.
	 * NULL: every value the kind and range admit is taken. */
	int (*check_opt)(const PassOpt *o, const PassVal *v, StrBuf *why, StrBuf *note);
} Pass;

enum { PASS_IO = -2 };

/* One pass of a pipeline with its option values. */
typedef struct PassInst {
	const Pass *pass;
	PassVal *vals;
	int col;                     /* 1-based column in the pipeline text */
} PassInst;

typedef struct Pipeline {
	PassInst *p;
	int n;
} Pipeline;

/* How a pipeline runs: verification, reports, and the driver's hooks
 * (printing IR around passes, timing, dumps).  Hooks may be NULL. */
typedef struct PassRun {
	bool verify_each;
	FILE *report;
	bool report_json;
	void (*before)(void *ctx, int idx, const PassInst *pi, const Graph *g);
	void (*after)(void *ctx, int idx, const PassInst *pi, const Graph *g, double ms);
	void *ctx;
	const PassMeasure *measure;  /* handed to every pass; NULL: none */
} PassRun;

/* pass.c */
/* The pass of registry reg named name, or NULL. */
const Pass *pass_lookup(const Pass *const *reg, const char *name);
/* The pass name of reg closest to a misspelt name (ir_suggest), or NULL. */
const char *pass_suggest(const Pass *const *reg, const char *name);
/* --list-passes: reg's passes in its order, with their options. */
void pass_list(FILE *f, const Pass *const *reg);
/* Parses "a,b{k=v,k2=v2}", names looked up in reg; on error prints to err,
 * with the text and a caret under the bad spot, what exists, and returns
 * -1. */
int pass_parse_pipeline(const Pass *const *reg, const char *text, Pipeline *pl, FILE *err,
    const char *tool);
void pass_free_pipeline(Pipeline *pl);
void pass_print_pipeline(FILE *f, const Pipeline *pl);
/* Runs the passes in order, verifying after each when asked; stops at the
 * first pass that fails.  Returns 0, or what the failing pass returned (-1
 * or PASS_IO), or -1 when the IR does not verify (diagnostics given). */
int pass_run_pipeline(Graph *g, const Pipeline *pl, const PassRun *r, Diag *d);
/* Parses text and runs it as pass_run_pipeline does, verifying after each
 * pass, with no reports or hooks.  A text that does not parse is reported
 * to err under tool's name and returns -1; with err NULL the text is the
 * caller's own (a built-in pipeline), and one that does not parse is a bug. */
int pass_run_text(const Pass *const *reg, Graph *g, const char *text, Diag *d, FILE *err,
    const char *tool);
double pass_now_ms(void);
/* An option's value; one with no default ("(...)") must be set. */
bool pass_bool(const PassArgs *a, const char *key);
int64_t pass_int(const PassArgs *a, const char *key);
double pass_float(const PassArgs *a, const char *key);
const char *pass_str(const PassArgs *a, const char *key);
bool pass_is_set(const PassArgs *a, const char *key);
/* The "needs shapes" check every shape-consuming pass starts with: reports
 * the first untyped value and returns -1. */
int pass_require_shapes(const Graph *g, Diag *d, const char *pass);

#endif
