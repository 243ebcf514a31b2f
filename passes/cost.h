/*
 * cost.h: the analytic traffic and cost model that autotune scores with.
 *
 * cost_traffic() computes, in closed form, the bytes a kernel's programs
 * load and store and the flops they do for one tile configuration, by the
 * traffic contract that lower-tiled and the tile executor follow (every
 * unmasked element of every executed load or store, re-reads included; see
 * docs/passes.md "autotune").  A test asserts that these numbers equal the
 * executor's KernelStats, so this header is the one place both sides meet.
 * The rest turns traffic into estimated milliseconds for a target profile
 * (bandwidth, peaks, shared memory, registers, launch overheads) and says
 * which configurations a target cannot run.  Nothing here reads a clock.
 */
#ifndef AICM_COST_H
#define AICM_COST_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"
#include "pass.h"

/* One tile configuration.  0 means "does not apply to this kind" (BK and
 * stages outside matmul kinds) or "not given" (split). */
typedef struct TileConfig {
	int bm, bn, bk, warps, stages, split;
} TileConfig;

/* What a kernel's programs do for one configuration. */
typedef struct Traffic {
	bool ok;                     /* false: a size overflowed int64 */
	int64_t grid[3];
	int64_t programs;
	int64_t loaded, stored;      /* bytes, unmasked elements only */
	int64_t flops;               /* useful flops (unmasked results) */
	int64_t mm_flops;            /* the matmul's share of flops */
	double pad_mm_flops;         /* flops the masked lanes of boundary tiles */
	double pad_vec_flops;        /*   would do: the matmul's and the rest */
	int64_t steps;               /* matmul kinds: K-loop steps summed over programs */
	int64_t attn_steps;          /* of those, an attention kernel's K/V blocks (each a
	                              * dot pair and the online softmax's row updates:
	                              * charged at attn-step-us, not step-us) */
	double acc_bytes;            /* the dot's accumulator tile reloaded and stored,
	                              * once per step (whole tiles, padding included) */
	double segs;                 /* contiguous runs the loads and stores make (a
	                              * tile row shorter than its tensor's row is one,
	                              * a strided view's element is one) */
	double line_waste;           /* bytes of COST_LINE-byte cache lines that runs
	                              * shorter than a line bring in and do not use */
	double tile_foot;            /* bytes of the tiles a program holds at once */
	double mm_foot;              /* bytes of a dot's accumulator tile */
	double tile_bytes;           /* bytes the elementwise ops read and write
	                              * through their tiles */
	double fly_rows;             /* a reduction along the row: the rows a program's
	                              * loop steps read side by side (BM when a step
	                              * reads part of each row, 1 when its rows are one
	                              * contiguous block; 0: not such a kernel) */
	double fly_bytes;            /*   and the bytes it reads so, */
	double fly_segs;             /*   and the segments of those rows among segs */
	double a_foot;               /* bytes of a dot's block of a (BM x BK) */
	double a_reread;             /* bytes of that block read again, once per
	                              * further 256-byte strip of b in a step (the
	                              * native dot's strips walk the rows of a past
	                              * each strip in turn) */
} Traffic;

/* The cache line the contiguity term rounds runs up to, and the bytes of
 * lines a strided tile may touch at once before they evict each other (x86
 * cores: 64-byte lines; 32 KiB, the L1 of most, and what this Xeon's 48 KiB
 * L1 holds beside the other tiles: docs/perf.md, "Calibrating the cpu
 * targets"). */
enum { COST_LINE = 64, COST_L1 = 32768 };
/* The page a core's hardware prefetchers stay within (x86: 4 KiB): a
 * reduction's row segments of a page or more are separate streams, read
 * one after the other (docs/perf.md, session 15). */
enum { COST_PAGE = 4096 };
/* The longest segment of a row that keeps a reduction's rows in flight
 * together: the program reads each row's segment in turn, and a core's
 * streamer prefetches some lines ahead of each stream, so segments of up
 * to 16 lines come back to every stream before its prefetch runs dry;
 * longer ones are read a stream at a time, as a page is (W2's timings:
 * 4 rows of 1 KiB segments 10-20% faster than of 2 KiB, in f64 and f32,
 * docs/perf.md session 16). */
enum { COST_FLY_SEG = 1024 };

/* The problem a kernel poses, as the cost model sees it.
 * matmul kinds: batch, m, n, k of the matmul.  elementwise, opaque: m the
 * second-to-last dimension, n the last, batch the leading ones flattened.
 * reduction: m the last kept dimension, batch the other kept ones, n the
 * reduced length (a full reduction: m = 1, n = all elements).  row_reduction: m rows, n the row length. */
typedef struct Problem {
	KernelKind kind;
	int first, last;             /* node range */
	DType dt;
	int64_t batch, m, n, k;
	bool full_reduce;            /* reduction kind without an axis */
	bool ok;                     /* false: not a shape this model knows */
} Problem;

/* A kernel's model, built once and asked for many configurations (the
 * fast path autotune uses; the functions below build one per call). */
typedef struct CostModel CostModel;

/* cost.c: traffic */
CostModel *cost_model_new(const Graph *g, int kernel);
void cost_model_free(CostModel *m);
const Problem *cost_model_problem(const CostModel *m);
void cost_model_traffic(const CostModel *m, const TileConfig *c, Traffic *out);
void cost_problem(const Graph *g, KernelKind kind, int first, int last, Problem *p);
/* Traffic of kernel `kernel` of g (its own split attribute applies when c's
 * split is 0). */
void cost_traffic(const Graph *g, int kernel, const TileConfig *c, Traffic *out);
/* Traffic of node `node` run alone, as lower-tiled's single-op kernel. */
void cost_traffic_node(const Graph *g, int node, const TileConfig *c, Traffic *out);
/* Traffic of nodes first..last taken as one kernel of the given kind. */
void cost_traffic_range(const Graph *g, KernelKind kind, int first, int last,
    const TileConfig *c, Traffic *out);

/* ---- targets --------------------------------------------------------- */

/* TARGET_PARAM(field, option key, help): every constant of a profile, in
 * the order printed and hashed. */
#define COST_TARGET_PARAMS(X)                                                  \
	X(hbm_gbs, "hbm-gbs", "global memory bandwidth, GB/s")                      \
	X(sms, "sms", "streaming multiprocessors (cpu: cores)")                     \
	X(smem_kb, "smem-kb", "shared memory one program may use, KB (1024 B)")     \
	X(regs_per_sm, "regs-per-sm", "32-bit registers per SM")                    \
	X(regs_per_thread, "regs-per-thread", "32-bit registers one thread may use") \
	X(tc_tflops_f64, "tc-tflops-f64", "matmul peak, f64, TFLOP/s")              \
	X(tc_tflops_f32, "tc-tflops-f32", "matmul peak, f32 (TF32 tensor cores), TFLOP/s") \
	X(vec_tflops_f64, "vec-tflops-f64", "other flops' peak, f64, TFLOP/s")      \
	X(vec_tflops_f32, "vec-tflops-f32", "other flops' peak, f32, TFLOP/s")      \
	X(launch_us, "launch-us", "overhead per kernel launch, us")                 \
	X(wave_us, "wave-us", "overhead per wave of programs, us (cpu: a wave is a program per core, so the per-program overhead)")                  \
	X(step_us, "step-us", "overhead per loop step of a program, us (cpu: a matmul's K block, a reduction's block)") \
	X(acc_gbs, "acc-gbs", "bandwidth of the accumulator's reload per K step, GB/s (cpu: the caches)") \
	X(seg_ns, "seg-ns", "cost of one contiguous run of a tile load or store, ns (cpu: a tile row shorter than its tensor's row; 0 in a target: no such term)") \
	X(l2_kb, "l2-kb", "cache one program's tiles must fit, KB, else its ops' tile traffic goes to memory (cpu: the L2; 0 in a target: no such term)") \
	X(l1_kb, "l1-kb", "cache a dot's accumulator tile must fit, KB, else its reloads cost (acc-gbs; 0 in a target: always)") \
	X(attn_step_us, "attn-step-us", "overhead per K/V block of an attention program, us (cpu: its two dots' calls and the online softmax's row updates; 0 in a target: charged at step-us)") \
	X(streams, "streams", "rows a core reads fastest side by side (cpu: the streams its prefetchers sustain); a reduction's program that walks fewer or more rows at once pays rows-gbs per halving or doubling (0 in a target: no such term)") \
	X(rows_gbs, "rows-gbs", "bandwidth charged per halving or doubling away from streams, GB/s (0 in a target: no such term)") \
	X(reread_gbs, "reread-gbs", "bandwidth of a dot's block of a read again for each further strip of b once the block outgrows the L1, GB/s (cpu: the L2; 0 in a target: no such term)")

typedef struct Target {
	const char *name;
#define X(f, key, help) double f;
	COST_TARGET_PARAMS(X)
#undef X
} Target;

enum { COST_NPARAMS = 20, COST_NPARAMS_V1 = 11 };   /* V1: the first cache format's */
extern const Target cost_targets[];            /* {0}-terminated */
extern const char *const cost_param_keys[COST_NPARAMS];
const Target *cost_target_lookup(const char *name);
/* Appends the targets' names, "h100, h200, ...", for messages. */
void cost_target_names(StrBuf *b);
double *cost_target_param(Target *t, int i);
double cost_target_param_get(const Target *t, int i);

/* ---- configuration spaces and pruning -------------------------------- */

typedef enum PruneReason {
	PR_NONE, PR_BLOCK, PR_SMEM, PR_REGS, PR_COUNT
} PruneReason;

extern const char *const cost_prune_names[PR_COUNT];

/* The candidates of a kind in generation order; returns their count
 * (COST_MAX_SPACE at most).  Only row_reduction's space depends on p. */
enum { COST_MAX_SPACE = 576 };
int cost_space(const Problem *p, TileConfig *out);
/* A hash of a kind's space definition (changes when the space changes). */
uint64_t cost_space_hash(KernelKind kind);
int64_t cost_smem_bytes(const Problem *p, const TileConfig *c);
PruneReason cost_prune(const Target *t, const Problem *p, const TileConfig *c);

/* ---- scores ---------------------------------------------------------- */

typedef struct Score {
	double mem, comp, waste, launch;   /* ms */
	double steps;                      /* ms: K-loop steps (targets with step costs) */
	double contig;                     /* ms: runs and line waste (targets with seg-ns) */
	double total;
	double padding_pct;                /* padded / (useful + padded) flops */
	int64_t waves;
} Score;

void cost_score(const Target *t, DType dt, const Traffic *tr, Score *s);

/* ---- autotune.c ------------------------------------------------------ */

/* For tests only (tests/check_autotune.c), not for other passes or tools:
 * the autotune pass with every signature hash ANDed with hmask (0: one
 * chain, so that every lookup compares signatures in full), and the number
 * of full signature comparisons it made in *compares. */
int autotune_run_hashmask(Graph *g, const PassArgs *a, Diag *d, uint64_t hmask,
    int64_t *compares);

/* One row of autotune's table: a candidate, its prune reason, and if it
 * was scored (why PR_NONE) its score and traffic and its 1-based rank in
 * the pass's order (0: pruned). */
typedef struct TuneRow {
	TileConfig c;
	PruneReason why;
	Score s;
	Traffic t;
	int rank;
} TuneRow;

/* For the report layer (src/report): the table that the autotune pass
 * with options a (the pass's opts and values) builds for kernel `kernel`
 * of g before it chooses: every candidate of the kind's space in
 * generation order into rows[0..COST_MAX_SPACE), by the same pruning,
 * scoring and ranking, for a's target; the problem into *p.  No cache is
 * read and nothing is measured.  Returns the count, or -1 when the
 * kernel's problem is not one the model knows (its sizes overflow). */
int autotune_table(const Graph *g, int kernel, const PassArgs *a, Problem *p, TuneRow *rows);

#endif
