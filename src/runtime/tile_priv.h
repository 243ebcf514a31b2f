/*
 * tile_priv.h: the tile executor's own half of tile_exec.h, shared by the
 * files that make it up.
 *
 * Every program of every grid really runs: loads fill tile buffers from the
 * tensors (a masked-off lane reads the load's `other`), ops work on whole
 * tiles, stores and atomics write back, and KernelStats count as they go.
 * Tiles are held in the kernel's compute type (tile_plan.c's compute_dt),
 * padded to rank 4 on the left, so that every op is one loop nest.  A body
 * with floats computes in f32 when every value is f32 or bool (bools are
 * 0 and 1; an f32 kernel's work runs at the f32 rate and moves half the
 * bytes), else in f64, where a value of element type f32 is rounded to
 * float after the op that makes it; a body of integers and bools is an
 * integer kernel (ik) in its integer type.  A body that mixes integers
 * with floats, or i32 with i64, is a mixed kernel (mx, tile_mixed.c):
 * each tile in its own value's type.  Loads and stores convert to
 * and from the tensors' own element types and count their bytes.  The valid box (tile.h) rides along with
 * each tile; reductions and stores honour it, so that ragged tiles never
 * change a result.
 *
 *   tile_plan.c    exec_tile_compile: a TilePlan of PKernels, every tile
 *                  and access resolved, before anything runs
 *   tile_access.c  loads, stores and atomics: tiles in and out of tensors
 *   tile_ops.c     the compute ops, strip runs, and tx_ops, the table
 *                  that dispatches an instruction by its op kind
 *   tile_mixed.c   mixed kernels: per-value types, views, casts
 *   tile_arg.c     argmax and argmin: i64 indices from a scan of the tensor
 *   tile_run.c     one program's instructions, a grid's programs on the
 *                  crew of threads, exec_tile_run
 *   tile_stats.c   KernelStats: the getter, totals, the table and JSON
 *
 * Names that cross those files start with tx_.  What runs per element
 * (tget, tset, at, box) and the few helpers more than one file needs are
 * static inline here, so that splitting the executor into files cost no
 * inlining in its loops.
 */
#ifndef AICM_TILE_PRIV_H
#define AICM_TILE_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "exec.h"
#include "scalar.h"
#include "tile.h"
#include "tile_exec.h"

/* The elements a strip run does at a time (tile_plan.c's plan_strips). */
enum { STRIP = 256 };            /* elements: 2 KiB of f64, 1 KiB of f32 */

typedef struct PTile {
	int64_t sh[4];
	int64_t n;
	size_t off;                  /* in the worker's buffer */
} PTile;

typedef struct PAccess {
	int node;                    /* the tensor's graph node */
	int rank;
	int64_t dim[IR_MAX_RANK];
	int64_t tstr[4];             /* tensor stride per padded tile dim */
	int64_t tdim[4];             /* tensor extent per padded tile dim (1 if none) */
	int pad;                     /* 4 - rank (< 0: leading dims of extent 1) */
	int64_t lstr[IR_MAX_RANK];   /* tensor stride per tensor dim */
	int64_t base0;               /* element of the tile's origin (a strided
	                              * view's offset=; else 0) */
	bool dense;                  /* a whole tile has the tensor's layout */
	bool view;                   /* loads: a dot's a, read in place with its rows' stride */
	bool stream;                 /* stores: non-temporal */
	unsigned dep;                /* loads: the grid axes its indices use */
	int memo;                    /* loads: packed tiles kept, one per trip (0: none) */
	int slot0;                   /* its first memo slot */
	size_t memo_off;             /* bytes into the worker's buffer */
	size_t memo_bytes;           /* per slot */
	/* Loads of a const (tile_plan.c plan_prepack): every tile of the
	 * tensor packed once, block by block (pblk[d] blocks along padded
	 * tile dim d, pk_tile bytes each), kept across runs until the
	 * tensor's data moves or the caller says it changed
	 * (exec_tile_source_changed); a load at block-aligned offsets then
	 * points at its block instead of copying. */
	bool prepack;
	int64_t pblk[4];
	size_t pk_tile;
	char *pk;                    /* NULL: not packed yet (or stale) */
	const void *pk_src;          /* the tensor data it was packed from */
} PAccess;

typedef struct PKernel {
	int node;
	const TileFn *f;
	DType dt;
	bool f32;
	bool ik;                     /* an integer or bool kernel: tiles hold
	                              * dt's integers, ops compute with
	                              * scalar.h's integer formulas */
	size_t es;
	PTile *tile;                 /* per value (tiles only) */
	PAccess *acc;                /* per instruction (loads, stores, atomics) */
	size_t bufsize;              /* elements of the tiles */
	size_t bytes;                /* the tiles' bytes, then the memo's */
	int nvals;
	int nslots;                  /* memo slots of all loads */
	int *memoed;                 /* the loads that keep tiles */
	int nmemoed;
	bool axis0_fast;             /* programs in order with axis 0 fastest */
	int *run_end;                /* per instruction: the end of the strip run
	                              * that starts there (plan_strips), or 0 */
	bool *run_rows;              /* per instruction: that run goes row by row */
	bool *run_direct;            /* per instruction: that row run's last op writes
	                              * its rows straight into the store's tensor
	                              * (only the store reads its result) */
	bool *zskip;                 /* per instruction: a zeros() that only dots
	                              * read as their accumulator (plan_zero_dots):
	                              * not filled */
	int *zdot;                   /* per instruction: a dot whose accumulator is
	                              * that zeros(): -2 always, a loop's index on
	                              * its first trip, -1 never */
	bool atomics;
	KernelStats st;
	/* A mixed kernel (tile_mixed.c): integers with floats, or i32 with
	 * i64.  Each tile holds its value's own type (vdt: a float in the
	 * kernel's float type, an integer or bool in its own), each
	 * instruction computes in one type (idt) and runs on the view of the
	 * kernel as one of that type (views, per DType), its operands of
	 * another type converted first; tiles are laid out les bytes an
	 * element (8), whatever they hold. */
	bool mx;
	size_t les;                  /* a tile element's bytes in the buffer */
	DType *vdt;                  /* mixed: per value */
	DType *idt;                  /* mixed: per instruction */
	struct PKernel *views;       /* mixed: per DType (DT_COUNT of them) */
	size_t cvt_off;              /* mixed: 3 scratch tiles for converted operands */
	size_t cvt_bytes;            /* each */
	bool atom_ik;                /* mixed: the atomics add integers */
} PKernel;

typedef struct Crew Crew;

struct TilePlan {
	const Graph *g;
	PKernel *k;
	int nk;
	KernelStats *stats;
	size_t maxbuf;               /* bytes of the largest kernel's tiles and memo */
	int maxvals;
	int maxslots;
	int maxinsts;
	Crew *crew;                  /* started at the first run with threads */
	int64_t packs;               /* prepacked loads packed, all runs (exec_tile_packs) */
	TilePrepack prepack;         /* their memory (exec_tile_prepacked) */
};

typedef struct AtomLog {
	int64_t n, cap;
	int64_t *idx;
	double *val;
	int64_t *ival;               /* an integer kernel's values, exactly */
	int op;
} AtomLog;

typedef struct Worker {
	const PKernel *k;
	Tensor *vals;
	char *buf;
	void **p;                    /* per value: its tile (buf or a tensor) */
	int64_t *ld;                 /* per value: its rows' stride (elements) */
	int64_t (*mkey)[4];
	int64_t *mcnt;
	int64_t *sc;                 /* scalar slots */
	int64_t (*valid)[4];         /* per value */
	int64_t (*rowstr)[4];        /* a row run's operand strides: 2 per instruction */
	int64_t rd, wr, fl;
	int64_t pid[3];
	AtomLog *logs;               /* per program, or NULL: apply at once */
	int64_t prog;                /* the program's place in the taking order */
	int64_t gid;                 /* its grid id, row-major: errors keep the lowest */
	const TileInst *err;         /* the lowest instruction that divided an
	                              * integer by zero in a valid lane in the
	                              * lowest program that did, or NULL */
	int64_t err_prog;            /* that program (gid) */
	int64_t bad_prog;            /* the lowest program (gid) whose gather
	                              * failed, or -1 */
	char bad[IR_ERR_MAX];        /* its message (load_gather's index) */
} Worker;

/* Runs instruction i (in) of the current program and returns the next
 * one to run: an entry of tx_ops. */
typedef int TxOp(Worker *w, const TileInst *in, int i);

/* The order of a kernel's integer divisions by zero: the lowest program
 * (its grid id, row-major) first, then in it the lowest tile instruction;
 * an order of the grid, not of execution, so that the error reported does
 * not depend on the threads and is the native engine's (emit_c.c's
 * divz_fail).  True when (prog, in) goes before (cur_prog, cur); cur NULL:
 * none recorded yet.  A worker keeps its lowest (tile_ops.c's divz_fail),
 * run_kernel the lowest of its workers' (tile_run.c). */
static inline bool
tx_divz_before(int64_t prog, const TileInst *in, int64_t cur_prog, const TileInst *cur)
{
	return !cur || prog < cur_prog || (prog == cur_prog && in < cur);
}

/* tile_ops.c */
/* The executor of each tile op, indexed by its kind. */
extern TxOp *const tx_ops[TO_COUNT];
/* Runs the strip run that starts at instruction i (and the store after
 * it, when that can go strip by strip); returns the next instruction. */
int tx_run_strips(Worker *w, int i);

/* tile_access.c */
int tx_load(Worker *w, const TileInst *in, int i);
/* Packs every block of prepacked load i of kernel k from src (a->pk,
 * allocated here when NULL). */
void tx_prepack(const PKernel *k, int i, const Tensor *src);
int tx_store(Worker *w, const TileInst *in, int i);   /* stores and atomics */
/* Where store i puts its whole tile as one contiguous run of its tensor,
 * or NULL (a strip run's store then goes the ordinary way). */
char *tx_store_target(Worker *w, int i);
/* Where store i puts row (0, 0, 0) of its tile when every row of it goes
 * whole to a contiguous run of its tensor (rs: the tensor's strides, in
 * elements, for the tile's first three dims), or NULL. */
char *tx_store_rows(Worker *w, int i, int64_t *rs);

/* tile_window.c: im2col and window_count */
int tx_im2col(Worker *w, const TileInst *in, int i);
int tx_window_reduce(Worker *w, const TileInst *in, int i);
int tx_window_count(Worker *w, const TileInst *in, int i);
/* tile_arg.c: argmax and argmin, each lane scanning its line of the tensor */
int tx_argreduce(Worker *w, const TileInst *in, int i);
/* tile_copy.c: the copy programs' loads and broadcast */
int tx_load_pad(Worker *w, const TileInst *in, int i);
int tx_load_step(Worker *w, const TileInst *in, int i);
int tx_load_gather(Worker *w, const TileInst *in, int i);
int tx_broadcast(Worker *w, const TileInst *in, int i);

/* tile_mixed.c: runs instruction i of a mixed kernel (PKernel.mx);
 * returns the next one. */
int tx_run_mixed(Worker *w, int i);
/* The types of a mixed kernel's values and instructions, its views and
 * its scratch (after the rest of the plan); fdt is its float type. */
void tx_plan_mixed(PKernel *k, DType fdt);
/* Copies tile src to tile dst of a mixed kernel, converting between
 * their types (a loop's carried value). */
void tx_copy_mixed(Worker *w, int dst, int src);

/* tile_run.c */
int tx_run_for(Worker *w, const TileInst *in, int i);
void tx_crew_stop(Crew *c);

/* Shape s of rank rank as 4 dims, padded with 1s on the left. */
static inline void
pad4(int rank, const int64_t *s, int64_t *out)
{
	/* rank > 4: the last four dims (the plan checks that the leading
	 * ones are 1s, tile_plan.c compile_kernel) */
	for (int d = 0; d < 4; d++)
		out[d] = d < 4 - rank ? 1 : s[d - (4 - rank)];
}

/* Whether strides s walk a tile of shape sh densely. */
static inline bool
whole(const int64_t *s, const int64_t *sh)
{
	int64_t st = 1;

	for (int d = 3; d >= 0; d--) {
		if (sh[d] > 1 && s[d] != st)
			return false;
		st *= sh[d];
	}
	return true;
}

/* Element i of a tile of the kernel's type, and its store. */
static inline double
tget(const void *p, int64_t i, bool f32)
{
	return f32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static inline void
tset(void *p, int64_t i, double v, bool f32)
{
	if (f32)
		((float *)p)[i] = (float)v;
	else
		((double *)p)[i] = v;
}

/* Element i of an integer kernel's tile (dt i32, i64 or bool) as an
 * int64, and the store that keeps dt's low bits (scalar.h's wrapping). */
static inline int64_t
tgeti(const void *p, int64_t i, DType dt)
{
	switch (dt) {
	case DT_I32:
		return ((const int32_t *)p)[i];
	case DT_BOOL:
		return ((const uint8_t *)p)[i];
	default:
		return ((const int64_t *)p)[i];
	}
}

static inline void
tseti(void *p, int64_t i, int64_t v, DType dt)
{
	switch (dt) {
	case DT_I32:
		((int32_t *)p)[i] = (int32_t)(uint32_t)(uint64_t)v;
		break;
	case DT_BOOL:
		((uint8_t *)p)[i] = v != 0;
		break;
	default:
		((int64_t *)p)[i] = v;
		break;
	}
}

/* A float as an integer: truncated and saturated, NaN 0, as cast does
 * (tile.h's tile_num, which gives a tile op's number its integer). */
static inline int64_t
tint_of(double v)
{
	return tile_num(v).i;
}

/* Byte arithmetic on tiles of element size es. */
static inline void *
at(const void *p, int64_t i, size_t es)
{
	return (char *)(uintptr_t)p + i * (int64_t)es;
}

/* The elements of a valid box. */
static inline int64_t
box(const int64_t *v)
{
	return v[0] * v[1] * v[2] * v[3];
}

/* One element of an atomic (op TO_ATOMIC_ADD or TO_ATOMIC_MAX) into
 * tensor element e: the sum's or the max's combining step (scalar.h). */
static inline void
atom_apply(Tensor *t, int64_t e, double v, int op)
{
	double cur = exec_get(t, e);

	exec_set(t, e, ir_scalar_combine(op == TO_ATOMIC_MAX ? OP_MAX : OP_SUM, cur, v));
}

/* The same on an integer tensor, exactly and wrapping. */
static inline void
atom_apply_i(Tensor *t, int64_t e, int64_t v, int op)
{
	int64_t cur = exec_geti(t, e);

	exec_seti(t, e, ir_scalar_combine_i64(op == TO_ATOMIC_MAX ? OP_MAX : OP_SUM, cur, v));
}

/* The value of an index expression of the tile IR in the worker's current
 * scalars (program ids, loop variables). */
static inline int64_t
tx_eval_idx(const Worker *w, const TileIdx *x)
{
	int64_t v = x->k;

	for (int t = 0; t < x->nterm; t++)
		v += x->coef[t] * w->sc[x->val[t]];
	return v;
}

#endif
