/*
 * emit_c.h: the C code generator (DESIGN section 13, docs/codegen.md).
 *
 * codegen_c turns a lowered graph (sources and tiled kernels) into C99:
 * one `static void NAME_kernelK(const NAME_args *a, long lo, long hi)`
 * per tiled kernel, running programs lo..hi-1 of its grid, an entry
 * `int NAME_run(const NAME_args *a, int threads)`, and a header that
 * declares NAME_args.  The text depends on nothing but the graph, so the
 * same graph always gives the same bytes (the native engine's cache key
 * hashes it).  The code generator sits on src/ir alone: it may not call
 * the runtime, and the code it writes calls only libc and libm.
 *
 * The rest of this header is the emitter's own, shared by its two files:
 * emit_c.c writes the module (prelude, args, entry, descriptor), and
 * emit_c_ops.c each kernel's body, tile op by tile op.
 */
#ifndef AICM_EMIT_C_H
#define AICM_EMIT_C_H

#include <stdbool.h>

#include "diag.h"
#include "ir.h"
#include "tile.h"

/* The C for g: the module into c and, when hname is given, the header
 * into h (both appended to), the module including it as hname; without
 * hname the header's text is inline and the module stands alone.  name
 * is NAME, already a C identifier (codegen_c_name).  Returns 0, or -1
 * after a located diagnostic naming what cannot be generated. */
int codegen_c(const Graph *g, const char *name, const char *hname, StrBuf *c, StrBuf *h,
    Diag *d);
/* NAME for g: its name, else stem (a file's name without folders and
 * extension), made a valid C identifier; malloc'd. */
char *codegen_c_name(const Graph *g, const char *stem);

/* ---- the emitter's own ------------------------------------------------ */

/* What one module's kernels call, so that the module writes each helper
 * once, before them: a formula per [kind][op][type] (kind 0 unary, 1
 * binary, 2 a reduction's combining step; type 0 f64, 1 f32, 2 integers
 * as int64), the dot's micro-kernel per float type (0 f64, 1 f32), and the
 * other helpers.  codegen_c owns it for one call and every kernel of the
 * module marks it through cg_use_*: the emitter keeps no state between
 * calls. */
typedef struct CgUses {
	unsigned char formula[3][OP_COUNT][3];
	unsigned char dot[2];
	bool rdiv, prefetch, stream, divz;
} CgUses;

typedef struct CgKernel {
	const Graph *g;
	int node;                    /* the tiled node */
	const TileFn *f;
	const char *name;            /* NAME */
	char *const *field;          /* per graph node: its NAME_args field, or NULL */
	char **line;                 /* per instruction: its tile-IR text */
	int64_t (*sh)[4];            /* per value: its tile's shape, padded to 4 */
	bool *heap;                  /* per value: held in the kernel's heap block */
	int *nuse;                   /* per value: how many operands name it */
	bool *inplace;               /* per value: a load read in place (a pointer into
	                              * its tensor, indexed with vstr) */
	int64_t (*vstr)[4];          /* per value: an in-place load's strides */
	bool *reg;                   /* per value: lives in registers only (a fused run's
	                              * value that nothing after the run reads) */
	bool *chain;                 /* per value: a run's value computed per element
	                              * inside the loop of the reduction or store right
	                              * after the run, its only reader (no tile, no
	                              * loop of its own) */
	bool row;                    /* emitting one row i2 of a row segment
	                              * (cg_emit_insts): dim 2 takes no loop */
	int *alias;                  /* per value: 1 + the value whose buffer it shares
	                              * (a loop's carried tile: cg_plan_dots), or 0 */
	bool *fold;                  /* per value: a transpose that its dot reads through
	                              * (cg_plan_dots): only its box is written */
	int64_t *keep;               /* per value: a dot's result whose b strips, packed,
	                              * are kept from one program to the next
	                              * (cg_plan_dots): how many strips, else 0 */
	bool bycol;                  /* programs run column by column of the grid
	                              * (emit_kernel), so that kept strips are reused */
	int pf_inst;                 /* in a row segment: the instruction whose loop
	                              * over the row prefetches (row_prefetch), or -1 */
	int npf;                     /* its prefetches: pf[q] an array and pf_off[q]
	                              * the row's first element in it (C text), */
	char pf[8][48], pf_off[8][96];
	int pf_size[8], pf_rw[8];    /* the element's size, 1 for a store's */
	bool streamed;               /* a store streams (op_store): fence at the end */
	CgUses *use;                 /* the module's: what its kernels call (cg_use_*) */
	StrBuf *o;
	int depth;                   /* indentation, in tabs */
	Diag *d;
} CgKernel;

/* emit_c.c (the cg_use_* mark k->use, the module's: k itself is not changed):
 * marks formula (kind 0 unary, 1 binary, 2 a reduction's
 * combining step; op; computing type) used, so that the module writes it */
void cg_use_formula(const CgKernel *k, int kind, OpId op, DType cdt);
/* emit_c.c: marks the dot's micro-kernel of float type dt used */
void cg_use_dot(const CgKernel *k, DType dt);
/* emit_c.c: marks aicm_rdiv_f64 used */
void cg_use_rdiv(const CgKernel *k);
/* emit_c.c: marks NAME_aicm_divz_fail used (an integer division) */
void cg_use_divz(const CgKernel *k);
/* emit_c.c: marks AICM_PREFETCH used */
void cg_use_prefetch(const CgKernel *k);
/* emit_c.c: marks aicm_stream_f32/f64 and aicm_stream_fence used */
void cg_use_stream(const CgKernel *k);

/* emit_c_ops.c */
/* Marks the loads read in place (inplace) and the values that live in
 * registers only (reg). */
void cg_plan_runs(CgKernel *k);
/* Marks the tiles that share a loop's carried tile (alias): the dot
 * that accumulates it, the fill that starts it, the loop's result; the
 * transposes that only a dot reads (fold), and the unmasked loads that
 * only a dot (or such a transpose) reads, read in place (inplace). */
void cg_plan_dots(CgKernel *k);
/* The elements of dot result v's kept b strips (keep). */
int64_t cg_kept_elems(const CgKernel *k, int v);
/* The body of one program (the instructions first..end-1) of k. */
int cg_emit_insts(CgKernel *k, int first, int end);
/* The C type of element type dt. */
const char *cg_ctype(DType dt);
/* Indentation, then a printf. */
void cg_line(CgKernel *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
