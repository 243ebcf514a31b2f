/*
 * tile_exec.c: the tile executor (tile_exec.h).
 *
 * Every program of every grid really runs: loads fill tile buffers from the
 * tensors (a masked-off lane reads the load's `other`), ops work on whole
 * tiles, stores and atomics write back, and KernelStats count as they go.
 * Tiles are held in the kernel's element type (an f32 kernel's work runs at
 * the f32 rate and moves half the bytes), padded to rank 4 on the left, so
 * that every op is one loop nest.  Elementwise f32 results equal the
 * reference's (an IEEE float op is the rounded double op); f32 dots
 * accumulate in float as sgemm does, and sums in double per row, so they
 * differ from the reference by rounding only, far inside the f32
 * tolerance.  The valid box (tile.h) rides along with each tile;
 * reductions and stores honour it, so that ragged tiles never change a
 * result.
 *
 * The plan keeps, per kernel, instructions with resolved slots and strides,
 * and per thread one scratch buffer, allocated once and reused by every
 * kernel and every run; the threads themselves are a crew started once per
 * plan.  What planning asks about a body (trip counts, readers, the loops
 * around an instruction) comes from one pass over it, so that a fused chain
 * of any length plans in linear time.  Op dispatch is one switch per tile op, never per element.  A load
 * whose tile lies whole inside its tensor with the tensor's own layout is
 * not copied: the tile points into the tensor (tiles are never written in
 * place).  A store of long rows into a tensor larger than the caches
 * streams past them.  The hot loops (dot, elementwise rows, reductions,
 * copies) are simd.c's vector kernels, chosen at run time (AICM_ISA forces
 * a path).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "scalar.h"
#include "simd.h"
#include "tile.h"
#include "tile_exec.h"

/* Tile memory of one program (elements), and the work a plan may ask for
 * (element operations, summed over programs and loop trips): beyond them
 * the input is refused rather than run for days. */
#define TILE_MAX_ELEMS ((int64_t)1 << 28)
#define TILE_MAX_WORK ((int64_t)1 << 46)
/* A store streams (non-temporal) into a tensor of at least this many
 * bytes, when its rows are at least STREAM_MIN_ROW bytes long: such a
 * tensor would only evict the inputs from the caches on its way out. */
#define STREAM_MIN_TENSOR ((int64_t)16 << 20)
#define STREAM_MIN_ROW 256
/* The most memory a kernel's reused packed tiles may take per thread. */
#define MEMO_MAX ((int64_t)4 << 20)

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
	int pad;                     /* 4 - rank */
	bool dense;                  /* a whole tile has the tensor's layout */
	bool view;                   /* loads: a dot's a, read in place with its rows' stride */
	bool stream;                 /* stores: non-temporal */
	unsigned dep;                /* loads: the grid axes its indices use */
	int memo;                    /* loads: packed tiles kept, one per trip (0: none) */
	int slot0;                   /* its first memo slot */
	size_t memo_off;             /* bytes into the worker's buffer */
	size_t memo_bytes;           /* per slot */
} PAccess;

typedef struct PKernel {
	int node;
	const TileFn *f;
	DType dt;
	bool f32;
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
	bool atomics;
	KernelStats st;
} PKernel;

typedef struct Crew Crew;
static void crew_stop(Crew *c);

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
};

typedef struct AtomLog {
	int64_t n, cap;
	int64_t *idx;
	double *val;
	int op;
} AtomLog;

/* What a thread keeps across kernels and runs: its tile memory and
 * per-value tables, sized for the plan's largest kernel. */
typedef struct Scratch {
	char *buf;
	void **p;
	int64_t *ld;
	int64_t (*mkey)[4];          /* per memo slot: the offsets it holds */
	int64_t *mcnt;               /* per instruction: executions this program */
	int64_t *sc;
	int64_t (*valid)[4];
} Scratch;

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
	int64_t rd, wr, fl;
	int64_t pid[3];
	AtomLog *logs;               /* per program, or NULL: apply at once */
	int64_t prog;
} Worker;

/* ---- compiling ------------------------------------------------------- */

static void
pad4(int rank, const int64_t *s, int64_t *out)
{
	for (int d = 0; d < 4; d++)
		out[d] = d < 4 - rank ? 1 : s[d - (4 - rank)];
}

/* What the planning steps ask about a body, found in one pass over it.
 * Each step used to scan the body again per loop or per load, which made
 * the plan of a fused chain of 40k ops take seconds (issue 14). */
typedef struct Uses {
	int *def;                    /* per value: the instruction it is the result of, or -1 */
	int *nread;                  /* per value: the instructions that read it */
	int *last;                   /* per value: the last instruction that reads it, or -1 */
	bool *notlhs;                /* per value: read other than as a dot's left operand */
	int *parent;                 /* per instruction: the innermost loop around it, or -1 */
	int64_t *trips;              /* per instruction: runs in one program, the product
	                              * of the trip counts of the loops around it
	                              * (INT64_MAX when that overflows) */
} Uses;

static void
uses_build(const TileFn *f, Uses *u)
{
	int *loop = xmalloc(sizeof *loop * (size_t)(f->ninsts + 1)), sp = 0;
	int64_t *body = xmalloc(sizeof *body * (size_t)(f->ninsts + 1));

	u->def = xmalloc(sizeof *u->def * (size_t)(f->nvals + 1));
	u->last = xmalloc(sizeof *u->last * (size_t)(f->nvals + 1));
	u->nread = xcalloc((size_t)f->nvals + 1, sizeof *u->nread);
	u->notlhs = xcalloc((size_t)f->nvals + 1, sizeof *u->notlhs);
	u->parent = xmalloc(sizeof *u->parent * (size_t)(f->ninsts + 1));
	u->trips = xmalloc(sizeof *u->trips * (size_t)(f->ninsts + 1));
	for (int v = 0; v < f->nvals; v++)
		u->def[v] = u->last[v] = -1;
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];

		while (sp && f->insts[loop[sp - 1]].end < i)
			sp--;
		u->parent[i] = sp ? loop[sp - 1] : -1;
		u->trips[i] = sp ? body[sp - 1] : 1;
		if (in->res >= 0 && u->def[in->res] < 0)
			u->def[in->res] = i;
		for (int q = 0; q < in->nin; q++) {
			int v = in->in[q];
			bool again = false;

			for (int r = 0; r < q; r++)
				again = again || in->in[r] == v;
			if (again)
				continue;        /* an instruction reads a value once */
			u->nread[v]++;
			u->last[v] = i;
			if (in->op != TO_DOT || q != 0 || in->in[1] == v || in->in[2] == v)
				u->notlhs[v] = true;
		}
		if (in->op == TO_FOR) {
			int64_t t = tile_trips(in);

			loop[sp] = i;
			if (u->trips[i] == INT64_MAX ||
			    __builtin_mul_overflow(u->trips[i], t, &body[sp]))
				body[sp] = INT64_MAX;
			sp++;
		}
	}
	free(loop);
	free(body);
}

static void
uses_free(Uses *u)
{
	free(u->def);
	free(u->nread);
	free(u->last);
	free(u->notlhs);
	free(u->parent);
	free(u->trips);
}

/* A K loop whose body ends `d = dot(a, b, acc); yield d` with acc the
 * loop's carried value: d shares acc's buffer (simd_dot works in place),
 * so each trip neither copies the tile back nor touches a second tile.
 * Only when nothing after the dot reads acc, a and b are not acc, and the
 * dot is not inside a nested loop (speed, issue 8). */
static void
alias_dot_accumulators(const TileFn *f, PKernel *k, const Uses *u)
{
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *fo = &f->insts[i];
		int y, d, it = fo->iter;

		if (fo->op != TO_FOR)
			continue;
		y = f->insts[fo->end].in[0];
		d = u->def[y];
		if (d <= i || d >= fo->end || u->parent[d] != i || f->insts[d].op != TO_DOT ||
		    f->insts[d].in[2] != it || f->insts[d].in[0] == it || f->insts[d].in[1] == it ||
		    y == it || k->tile[y].n != k->tile[it].n || u->last[it] > d)
			continue;
		k->tile[y].off = k->tile[it].off;
	}
}

/* A loop's carried value lives in one buffer from start to end: its result
 * shares it (the carried value is dead after the loop), and so does its
 * initial value when that is a zeros() or full() made in the same loops
 * and read by nothing else (dead once the loop starts).  The copies in and
 * out of the loop then cost nothing: for a matmul's accumulator they were
 * two tile copies a program. */
static void
alias_loop_carried(const TileFn *f, PKernel *k, const Uses *u)
{
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *fo = &f->insts[i];
		int it = fo->iter, init = fo->in[0], p;

		if (fo->op != TO_FOR)
			continue;
		if (fo->res != it && k->tile[fo->res].n == k->tile[it].n)
			k->tile[fo->res].off = k->tile[it].off;
		p = u->def[init];
		/* in the same loops: loops nest, so the innermost one says it */
		if (p >= 0 && p < i && u->nread[init] == 1 && init != it &&
		    (f->insts[p].op == TO_ZEROS || f->insts[p].op == TO_FULL) &&
		    k->tile[init].n == k->tile[it].n && u->parent[p] == u->parent[i])
			k->tile[init].off = k->tile[it].off;
	}
}

/* Strip runs.  A run of elementwise ops outside any loop, on tiles of one
 * size whose operands are that size too or a single element, is done
 * strip by strip: every op on STRIP elements before the next strip, and a
 * store of the run's result that goes whole to one contiguous place
 * copies each strip as it is made.  The strip's operands and temporaries
 * stay in L1, and the run's input streams and its output stream move
 * together instead of one phase each: W5 (maximum(x*y+z, 0), rows of
 * 4096) went from about 25 to about 22 ms on one core (a test program
 * with the same memory: 18-22 ms op by op over whole rows, 14-16 with
 * strips of 64-256 elements, 12 fused per vector; 512 and more were no
 * better than whole rows).  Elementwise kernels are per element, so the
 * bits do not change. */
enum { STRIP = 256 };            /* elements: 2 KiB of f64, 1 KiB of f32 */

static bool
flat_operand(const PKernel *k, int v, const PTile *t)
{
	const PTile *o = &k->tile[v];

	return o->n == 1 || memcmp(o->sh, t->sh, sizeof t->sh) == 0;
}

static void
plan_strips(const TileFn *f, PKernel *k)
{
	k->run_end = xcalloc((size_t)f->ninsts + 1, sizeof *k->run_end);
	for (int i = 0; i < f->ninsts;) {
		const TileInst *in = &f->insts[i];
		int j = i;
		int64_t n = -1;

		if (in->op == TO_FOR) {
			i = in->end + 1;
			continue;
		}
		for (; j < f->ninsts; j++) {
			const TileInst *q = &f->insts[j];
			const PTile *t = &k->tile[q->res];

			if (q->op != TO_UNARY && q->op != TO_BINARY)
				break;
			if (n < 0)
				n = t->n;
			if (t->n != n || !flat_operand(k, q->in[0], t) ||
			    (q->op == TO_BINARY && !flat_operand(k, q->in[1], t)))
				break;
		}
		/* two ops at least, or one whose result is stored next */
		if (j - i >= 2 || (j - i == 1 && j < f->ninsts && f->insts[j].op == TO_STORE &&
		    f->insts[j].in[0] == f->insts[i].res))
			k->run_end[i] = j;
		i = j > i ? j : i + 1;
	}
}

/* Whether strides s walk a tile of shape sh densely. */
static bool
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

/* Whether a whole tile of the access has the tensor's own layout (so that
 * a load may read it in place), whether a 2-d tile that only a dot reads
 * as its left operand may be read in place with the tensor's row stride
 * (the micro-kernel broadcasts a from a few rows at a time, so a's rows
 * need not be packed; b's are, as their power-of-two strides would map a
 * panel's rows onto a few cache sets), and whether a store streams. */
static void
mark_dense(const PKernel *k, const TileInst *in, PAccess *a, const Type *t, const Uses *u)
{
	const int64_t *sh = k->tile[in->op == TO_LOAD ? in->res : in->in[0]].sh;
	int64_t bytes = ir_type_numel(t) * (int64_t)k->es;

	a->dense = t->dt == k->dt && whole(a->tstr, sh);
	a->view = in->op == TO_LOAD && !a->dense && t->dt == k->dt && a->tstr[3] == 1 &&
	    sh[0] == 1 && sh[1] == 1 && !u->notlhs[in->res];
	a->stream = in->op == TO_STORE && t->dt == k->dt && a->tstr[3] == 1 &&
	    bytes >= STREAM_MIN_TENSOR && sh[3] * (int64_t)k->es >= STREAM_MIN_ROW;
}

/* Packed tiles that neighbouring programs repeat.  A dot's b tile in a K
 * loop does not depend on the row block: when the programs of one column
 * of blocks run one after another (axis 0 fastest), each thread keeps the
 * tiles it packed for the previous program, one per trip, and reuses one
 * whose offsets are the same, instead of packing it again from strided
 * rows.  Only copied loads of the kernel's operands (never of its result,
 * which it writes) inside a loop, that do not depend on the fastest grid
 * axis, within MEMO_MAX bytes.  The order of programs along any one axis
 * stays ascending, so atomics combine in the same order either way. */
static void
plan_memo(PKernel *k, const int64_t *trips)
{
	const TileFn *f = k->f;
	unsigned *dep = xcalloc((size_t)f->nvals + 1, sizeof *dep);
	int64_t total = 0;
	int fast = f->grid[2] > 1 ? 2 : f->grid[1] > 1 ? 1 : 0;

	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		PAccess *a = &k->acc[i];

		if (in->op == TO_PROGRAM_ID)
			dep[in->res] = 1u << in->axis;
		else if (in->op == TO_IDIV || in->op == TO_IREM)
			dep[in->res] = dep[in->in[0]];
		if (in->op != TO_LOAD)
			continue;
		for (int q = 0; q < in->nidx; q++)
			for (int t = 0; t < in->idx[q].nterm; t++)
				a->dep |= dep[in->idx[q].val[t]];
	}
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		const PAccess *a = &k->acc[i];

		if (in->op == TO_LOAD && trips[i] > 1 && in->arg != TILE_RESULT && !a->dense &&
		    !a->view && !(a->dep & 1u) && (a->dep & 6u) && f->grid[0] > 1)
			k->axis0_fast = true;
	}
	if (k->axis0_fast)
		fast = 0;
	k->memoed = xcalloc((size_t)f->ninsts + 1, sizeof *k->memoed);
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		PAccess *a = &k->acc[i];
		size_t bytes;
		int64_t need;

		if (in->op != TO_LOAD || trips[i] <= 1 || trips[i] == INT64_MAX ||
		    in->arg == TILE_RESULT || a->dense || a->view || (a->dep & (1u << fast)) ||
		    trips[i] > MEMO_MAX)
			continue;
		bytes = ((size_t)k->tile[in->res].n * k->es + 63) & ~(size_t)63;
		if (__builtin_mul_overflow(trips[i], (int64_t)bytes, &need) ||
		    total + need > MEMO_MAX)
			continue;
		a->memo = (int)trips[i];
		a->slot0 = k->nslots;
		a->memo_off = k->bytes + (size_t)total;
		a->memo_bytes = bytes;
		k->nslots += a->memo;
		total += need;
		k->memoed[k->nmemoed++] = i;
	}
	k->bytes += (size_t)total;
	free(dep);
}

static int
compile_kernel(const Graph *g, int node, PKernel *k)
{
	const Node *n = &g->nodes[node];
	const TileFn *f = n->tile;
	size_t off = 0;
	const int64_t *trips;
	Uses u;

	k->node = node;
	k->f = f;
	k->dt = n->type.dt;
	k->f32 = n->type.dt == DT_F32;
	k->es = ir_dtype_size(n->type.dt);
	k->nvals = f->nvals;
	k->tile = xcalloc((size_t)f->nvals + 1, sizeof *k->tile);
	k->acc = xcalloc((size_t)f->ninsts + 1, sizeof *k->acc);
	for (int v = 0; v < f->nvals; v++) {
		PTile *t = &k->tile[v];

		if (f->vals[v].rank < 0)
			continue;
		pad4(f->vals[v].rank, f->vals[v].shape, t->sh);
		t->n = 1;
		for (int d = 0; d < 4; d++)
			if (__builtin_mul_overflow(t->n, t->sh[d], &t->n) || t->n > TILE_MAX_ELEMS)
				return -1;
		off = (off + 15) & ~(size_t)15;   /* each tile on its own lines */
		t->off = off;
		off += (size_t)t->n;
		if (off > TILE_MAX_ELEMS)
			return -1;
	}
	k->bufsize = off;
	uses_build(f, &u);
	trips = u.trips;
	alias_dot_accumulators(f, k, &u);
	alias_loop_carried(f, k, &u);
	plan_strips(f, k);
	/* The work: each instruction's tile elements times the trips of the
	 * loops around it, times the programs (saturating). */
	{
		int64_t work = 0;
		int64_t progs = f->grid[0] * f->grid[1] * f->grid[2];
		bool big = false;

		for (int i = 0; i < f->ninsts; i++) {
			const TileInst *in = &f->insts[i];
			int64_t t = trips[i], e = 1, w;

			big |= t == INT64_MAX;
			if (in->res >= 0 && f->vals[in->res].rank >= 0)
				e = k->tile[in->res].n;
			if (in->op == TO_DOT)
				big |= __builtin_mul_overflow(e, k->tile[in->in[0]].sh[3], &e);
			big |= __builtin_mul_overflow(t, e, &w);
			big |= __builtin_add_overflow(work, w, &work);
		}
		big |= __builtin_mul_overflow(work, progs, &work);
		if (big || work > TILE_MAX_WORK) {
			uses_free(&u);
			return -2;
		}
	}
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		PAccess *a = &k->acc[i];
		Type buf;
		const Type *t;
		int64_t st = 1;
		int tr;

		if (in->op == TO_ATOMIC_ADD || in->op == TO_ATOMIC_MAX)
			k->atomics = true;
		if (in->op != TO_LOAD && in->op != TO_STORE && in->op != TO_ATOMIC_ADD &&
		    in->op != TO_ATOMIC_MAX)
			continue;
		t = tile_target_type(g, n, in, &buf);
		a->node = in->arg == TILE_RESULT ? node : f->args[in->arg];
		a->rank = t->rank;
		tr = in->op == TO_LOAD ? f->vals[in->res].rank : f->vals[in->in[0]].rank;
		if (tr != t->rank)
			AICM_BUG("an access of rank %d to a tensor of rank %d", tr, t->rank);
		a->pad = 4 - t->rank;
		for (int d = 0; d < 4; d++) {
			a->tstr[d] = 0;
			a->tdim[d] = 1;
		}
		for (int d = t->rank - 1; d >= 0; d--) {
			a->dim[d] = t->dim[d];
			a->tstr[a->pad + d] = st;
			a->tdim[a->pad + d] = t->dim[d];
			st *= t->dim[d];
		}
		mark_dense(k, in, a, t, &u);
	}
	k->bytes = ((k->bufsize * k->es) + 63) & ~(size_t)63;
	plan_memo(k, trips);
	uses_free(&u);
	return 0;
}

TilePlan *
exec_tile_compile(const Graph *g, Diag *d)
{
	TilePlan *p = xcalloc(1, sizeof *p);

	p->g = g;
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].tile)
			p->nk++;
	p->k = xcalloc((size_t)p->nk + 1, sizeof *p->k);
	p->stats = xcalloc((size_t)p->nk + 1, sizeof *p->stats);
	p->nk = 0;
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (n->tile) {
			PKernel *k = &p->k[p->nk++];
			int rc = compile_kernel(g, i, k);

			if (rc == -1) {
				diag_error(d, n->loc, "tiled '%%%s' needs more tile memory than a "
				    "program may have (2^28 elements)", n->name);
				exec_tile_free(p);
				return NULL;
			}
			if (rc == -2) {
				diag_error(d, n->loc, "tiled '%%%s' would do more than 2^46 element "
				    "operations; refusing to run it", n->name);
				exec_tile_free(p);
				return NULL;
			}
			if (k->bytes > p->maxbuf)
				p->maxbuf = k->bytes;
			if (k->nvals > p->maxvals)
				p->maxvals = k->nvals;
			if (k->nslots > p->maxslots)
				p->maxslots = k->nslots;
			if (k->f->ninsts > p->maxinsts)
				p->maxinsts = k->f->ninsts;
			continue;
		}
		if (ir_ops[n->op].cls != OC_SOURCE) {
			diag_error(d, n->loc, "'%%%s' is not lowered; the tile executor runs tiled "
			    "kernels only (run lower-tiled)", n->name);
			exec_tile_free(p);
			return NULL;
		}
	}
	return p;
}

void
exec_tile_free(TilePlan *p)
{
	if (!p)
		return;
	crew_stop(p->crew);
	for (int i = 0; i < p->nk; i++) {
		free(p->k[i].tile);
		free(p->k[i].acc);
		free(p->k[i].memoed);
		free(p->k[i].run_end);
	}
	free(p->k);
	free(p->stats);
	free(p);
}

const KernelStats *
exec_tile_stats(const TilePlan *p, int *n)
{
	*n = p->nk;
	return p->stats;
}

/* ---- running one program --------------------------------------------- */

static int64_t
eval_idx(const Worker *w, const TileIdx *x)
{
	int64_t v = x->k;

	for (int t = 0; t < x->nterm; t++)
		v += x->coef[t] * w->sc[x->val[t]];
	return v;
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

/* Byte arithmetic on tiles of element size es. */
static inline void *
at(const void *p, int64_t i, size_t es)
{
	return (char *)(uintptr_t)p + i * (int64_t)es;
}

static int64_t
box(const int64_t *v)
{
	return v[0] * v[1] * v[2] * v[3];
}

/* The tile coords' offset into the tensor and the valid box of an access
 * of tile shape sh at the instruction's indices. */
static int64_t
access_box(const Worker *w, const TileInst *in, const PAccess *a, const int64_t *sh,
    int64_t *valid, int64_t *off)
{
	int64_t base = 0;

	for (int d = 0; d < 4; d++) {
		valid[d] = sh[d];
		off[d] = 0;
	}
	for (int k = 0; k < a->rank; k++) {
		int64_t o = eval_idx(w, &in->idx[k]), left = a->dim[k] - o;
		int d = a->pad + k;

		off[d] = o;
		if (o < 0)
			AICM_BUG("a negative tile offset survived the verifier");
		if (left < sh[d]) {
			if (!in->masked)
				AICM_BUG("an unmasked access out of bounds survived the verifier");
			valid[d] = left < 0 ? 0 : left;
		}
		base += o * a->tstr[d];
	}
	return base;
}

static void
do_load(Worker *w, int i)
{
	const PKernel *k = w->k;
	const TileInst *in = &k->f->insts[i];
	const PAccess *a = &k->acc[i];
	const PTile *t = &k->tile[in->res];
	int64_t *valid = w->valid[in->res], off[4];
	int64_t base = access_box(w, in, a, t->sh, valid, off);
	const Tensor *src = &w->vals[a->node];
	const int64_t *sh = t->sh, *s = a->tstr;
	size_t es = k->es;
	void *o;

	w->rd += box(valid) * (int64_t)es;
	if ((a->dense || a->view) && box(valid) == t->n) {
		w->p[in->res] = at(src->data, base, es);   /* read in place */
		w->ld[in->res] = a->dense ? sh[3] : s[2];
		return;
	}
	w->ld[in->res] = sh[3];
	if (a->memo) {
		int64_t slot = a->slot0 + w->mcnt[i]++ % a->memo;

		o = w->p[in->res] = w->buf + a->memo_off +
		    (size_t)(slot - a->slot0) * a->memo_bytes;
		if (!memcmp(w->mkey[slot], off, sizeof off))
			return;   /* packed by this thread for an earlier program */
		memcpy(w->mkey[slot], off, sizeof off);
	} else {
		o = w->p[in->res] = w->buf + t->off * es;
	}
	for (int64_t i0 = 0; i0 < sh[0]; i0++)
		for (int64_t i1 = 0; i1 < sh[1]; i1++)
			for (int64_t i2 = 0; i2 < sh[2]; i2++) {
				void *row = at(o, ((i0 * sh[1] + i1) * sh[2] + i2) * sh[3], es);
				bool in_box = i0 < valid[0] && i1 < valid[1] && i2 < valid[2];
				int64_t e = base + i0 * s[0] + i1 * s[1] + i2 * s[2], v3 = in_box ? valid[3] : 0;

				if (s[3] == 1 && src->dt == k->dt)
					memcpy(row, at(src->data, e, es), es * (size_t)v3);
				else
					for (int64_t i3 = 0; i3 < v3; i3++)
						tset(row, i3, exec_get(src, e + i3 * s[3]), k->f32);
				for (int64_t i3 = v3; i3 < sh[3]; i3++)
					tset(row, i3, in->other, k->f32);
			}
}

static void
atom_log(Worker *w, int64_t idx, double v, int op)
{
	AtomLog *l = &w->logs[w->prog];

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->idx = xrealloc(l->idx, sizeof *l->idx * (size_t)l->cap);
		l->val = xrealloc(l->val, sizeof *l->val * (size_t)l->cap);
	}
	l->idx[l->n] = idx;
	l->val[l->n++] = v;
	l->op = op;
}

static void
atom_apply(Tensor *t, int64_t e, double v, int op)
{
	double cur = exec_get(t, e);

	exec_set(t, e, ir_scalar_combine(op == TO_ATOMIC_MAX ? OP_MAX : OP_SUM, cur, v));
}

static void
do_store(Worker *w, int i)
{
	const PKernel *k = w->k;
	const TileInst *in = &k->f->insts[i];
	const PAccess *a = &k->acc[i];
	int v = in->in[0];
	const PTile *t = &k->tile[v];
	int64_t valid[4], off[4], base = access_box(w, in, a, t->sh, valid, off);
	Tensor *dst = &w->vals[a->node];
	const void *src = w->p[v];
	const int64_t *sh = t->sh, *s = a->tstr, *vv = w->valid[v];
	size_t es = k->es;
	int64_t n;

	for (int d = 0; d < 4; d++)
		if (vv[d] < valid[d])
			valid[d] = vv[d];
	for (int64_t i0 = 0; i0 < valid[0]; i0++)
		for (int64_t i1 = 0; i1 < valid[1]; i1++)
			for (int64_t i2 = 0; i2 < valid[2]; i2++) {
				const void *row = at(src, ((i0 * sh[1] + i1) * sh[2] + i2) * sh[3], es);
				int64_t e = base + i0 * s[0] + i1 * s[1] + i2 * s[2];

				if (in->op == TO_STORE && s[3] == 1 && dst->dt == k->dt) {
					if (a->stream)
						simd_copy_stream(at(dst->data, e, es), row,
						    es * (size_t)valid[3]);
					else
						memcpy(at(dst->data, e, es), row, es * (size_t)valid[3]);
					continue;
				}
				for (int64_t i3 = 0; i3 < valid[3]; i3++) {
					int64_t ei = e + i3 * s[3];
					double x = tget(row, i3, k->f32);

					if (in->op == TO_STORE)
						exec_set(dst, ei, x);
					else if (w->logs)
						atom_log(w, ei, x, in->op);
					else
						atom_apply(dst, ei, x, in->op);
				}
			}
	n = box(valid) * (int64_t)es;
	w->wr += n;
	if (in->op != TO_STORE)
		w->rd += n;
}

/* Runs unary op on n elements with its vector kernel (simd.h), or
 * returns false when it has none. */
static inline bool
unary_vector(OpId op, bool f32, int64_t n, const void *x, void *o)
{
	switch (op) {
	case OP_RELU:
		if (f32)
			simd_relu_f32(n, x, o);
		else
			simd_relu(n, x, o);
		return true;
	case OP_EXP:
		if (f32)
			simd_exp_f32(n, x, o);
		else
			simd_exp(n, x, o);
		return true;
	default:
		return false;
	}
}

/* Elements lo..lo+n of a unary op's result (the whole tile: 0, t->n):
 * its vector kernel, else its formula (scalar.h) element by element, in
 * double.  One case per op, so that each loop has its formula inline. */
static void
unary_range(Worker *w, const TileInst *in, int64_t lo, int64_t n)
{
	size_t es = w->k->es;
	const void *x = at(w->p[in->in[0]], lo, es);
	void *o = at(w->p[in->res], lo, es);
	bool f32 = w->k->f32;

	switch (in->gop) {
#define U(ID, formula)                                                         \
	case OP_##ID:                                                          \
		if (!unary_vector(OP_##ID, f32, n, x, o))                      \
			for (int64_t i = 0; i < n; i++)                        \
				tset(o, i, ir_scalar_unary(OP_##ID, tget(x, i, f32)), f32); \
		break;
	IR_SCALAR_UNARY(U)
#undef U
	default:
		AICM_BUG("'%s' is not a unary op", ir_ops[in->gop].name);
	}
}

/* A unary op's valid box and flops (its data: unary_range). */
static void
unary_meta(Worker *w, const TileInst *in)
{
	memcpy(w->valid[in->res], w->valid[in->in[0]], sizeof w->valid[0]);
	w->fl += box(w->valid[in->res]);
}

static void
do_unary(Worker *w, const TileInst *in)
{
	unary_range(w, in, 0, w->k->tile[in->res].n);
	unary_meta(w, in);
}

static int64_t
stretch_valid(int64_t sh, int64_t v, int64_t osh)
{
	return sh == osh ? v : v > 0 ? osh : 0;
}

static SimdOp
simd_op_of(OpId gop)
{
	switch (gop) {
	case OP_ADD: return SIMD_ADD;
	case OP_SUB: return SIMD_SUB;
	case OP_MUL: return SIMD_MUL;
	case OP_DIV: return SIMD_DIV;
	case OP_MAXIMUM: return SIMD_MAXIMUM;
	case OP_MINIMUM: return SIMD_MINIMUM;
	default:
		AICM_BUG("'%s' is not a binary op", ir_ops[gop].name);
	}
}

/* A binary op's operand strides over the result's shape (0 where an
 * operand is stretched), its vector op, and the result's valid box and
 * flops; do_binary and strip runs share it. */
static SimdOp
binary_prep(Worker *w, const TileInst *in, int64_t *sa, int64_t *sb)
{
	const PTile *t = &w->k->tile[in->res], *ta = &w->k->tile[in->in[0]],
	    *tb = &w->k->tile[in->in[1]];
	const int64_t *sh = t->sh;
	int64_t ma = 1, mb = 1, *ov = w->valid[in->res];

	for (int d = 3; d >= 0; d--) {
		int64_t va = stretch_valid(ta->sh[d], w->valid[in->in[0]][d], sh[d]);
		int64_t vb = stretch_valid(tb->sh[d], w->valid[in->in[1]][d], sh[d]);

		sa[d] = ta->sh[d] == 1 ? 0 : ma;
		sb[d] = tb->sh[d] == 1 ? 0 : mb;
		ma *= ta->sh[d];
		mb *= tb->sh[d];
		ov[d] = va < vb ? va : vb;
	}
	w->fl += box(ov);
	return simd_op_of(in->gop);
}

static void
do_binary(Worker *w, const TileInst *in)
{
	const PTile *t = &w->k->tile[in->res];
	const void *a = w->p[in->in[0]], *b = w->p[in->in[1]];
	void *o = w->p[in->res];
	const int64_t *sh = t->sh;
	int64_t sa[4], sb[4];
	size_t es = w->k->es;
	SimdOp op = binary_prep(w, in, sa, sb);

	/* One vector kernel per row; sa[3] and sb[3] are 0 (stretched) or 1.
	 * A tile that is whole rows of both operands is one row. */
	if (whole(sa, sh) && whole(sb, sh)) {
		if (w->k->f32)
			simd_binary_f32(op, t->n, a, 1, b, 1, o);
		else
			simd_binary(op, t->n, a, 1, b, 1, o);
	} else {
		for (int64_t i0 = 0, q = 0; i0 < sh[0]; i0++)
			for (int64_t i1 = 0; i1 < sh[1]; i1++)
				for (int64_t i2 = 0; i2 < sh[2]; i2++, q += sh[3]) {
					const void *ra = at(a, i0 * sa[0] + i1 * sa[1] + i2 * sa[2], es);
					const void *rb = at(b, i0 * sb[0] + i1 * sb[1] + i2 * sb[2], es);

					if (w->k->f32)
						simd_binary_f32(op, sh[3], ra, (int)sa[3], rb, (int)sb[3],
						    at(o, q, es));
					else
						simd_binary(op, sh[3], ra, (int)sa[3], rb, (int)sb[3],
						    at(o, q, es));
				}
	}
}

/* One row of a reduction (sum or max) into *po, or accumulated
 * elementwise into po[] when the row's dim is kept (ost3 != 0). */
static void
reduce_row(bool f32, OpId op, int64_t n, const void *row, void *po, bool lanes)
{
	bool mx = op == OP_MAX;

	if (lanes) {
		if (f32)
			(mx ? simd_acc_max_f32 : simd_acc_sum_f32)(n, row, po);
		else
			(mx ? simd_acc_max : simd_acc_sum)(n, row, po);
	} else if (f32) {
		float *p = po;

		*p = (float)ir_scalar_combine(op, *p, mx ? simd_max_f32(n, row) :
		    simd_sum_f32(n, row));
	} else {
		double *p = po;

		*p = ir_scalar_combine(op, *p, mx ? simd_max(n, row) : simd_sum(n, row));
	}
}

static void
do_reduce(Worker *w, const TileInst *in)
{
	const TileFn *f = w->k->f;
	const PTile *ti = &w->k->tile[in->in[0]];
	int rin = f->vals[in->in[0]].rank;
	const void *x = w->p[in->in[0]];
	void *o = w->p[in->res];
	const int64_t *sh = ti->sh, *vi = w->valid[in->in[0]];
	int64_t *ov = w->valid[in->res], osh[4], ost[4], m = 1;
	int ax = in->axis < 0 ? -1 : (int)in->axis + 4 - rin;
	bool f32 = w->k->f32;
	const void *acc = in->nin == 2 ? w->p[in->in[1]] : NULL;
	int64_t on = w->k->tile[in->res].n;
	size_t es = w->k->es;

	/* The output indexed with the input's padded coords: reduced dims
	 * have stride 0 (the result tile's own layout is the same elements in
	 * the same order, whether or not the reduced dims are kept). */
	for (int d = 3; d >= 0; d--) {
		bool red = ax < 0 ? d >= 4 - rin : d == ax;

		osh[d] = red ? 1 : sh[d];
		ost[d] = red ? 0 : m;
		m *= osh[d];
	}
	{
		double z = ir_scalar_neutral(in->gop, w->k->dt);

		for (int64_t i = 0; i < on; i++)
			tset(o, i, z, f32);
	}
	for (int64_t i0 = 0; i0 < vi[0]; i0++)
		for (int64_t i1 = 0; i1 < vi[1]; i1++)
			for (int64_t i2 = 0; i2 < vi[2]; i2++)
				reduce_row(f32, in->gop, vi[3],
				    at(x, ((i0 * sh[1] + i1) * sh[2] + i2) * sh[3], es),
				    at(o, i0 * ost[0] + i1 * ost[1] + i2 * ost[2], es), ost[3] != 0);
	w->fl += box(vi);
	/* The result's valid box, in its own padded layout: the kept dims'
	 * extents, reduced ones 1. */
	{
		int64_t kv[4], r = 0, tmp[IR_MAX_RANK];
		int rout = f->vals[in->res].rank;

		for (int d = 4 - rin; d < 4; d++) {
			bool red = ax < 0 || d == ax;

			if (!red)
				tmp[r++] = vi[d];
			else if (in->keepdims)
				tmp[r++] = 1;
		}
		pad4(rout, tmp, kv);
		memcpy(ov, kv, sizeof kv);
	}
	if (acc) {
		const int64_t *av = w->valid[in->in[1]];

		for (int64_t i = 0; i < on; i++) {
			double c = tget(acc, i, f32), v = tget(o, i, f32);

			tset(o, i, ir_scalar_combine(in->gop, c, v), f32);
		}
		for (int d = 0; d < 4; d++)
			if (av[d] < ov[d])
				ov[d] = av[d];
	}
}

static void
do_dot(Worker *w, const TileInst *in)
{
	const PTile *ta = &w->k->tile[in->in[0]], *tb = &w->k->tile[in->in[1]];
	const void *a = w->p[in->in[0]], *b = w->p[in->in[1]], *c = w->p[in->in[2]];
	void *o = w->p[in->res];
	int64_t M = ta->sh[2], K = ta->sh[3], N = tb->sh[3];
	const int64_t *va = w->valid[in->in[0]], *vb = w->valid[in->in[1]],
	    *vc = w->valid[in->in[2]];
	int64_t *ov = w->valid[in->res], vk = va[3] < vb[2] ? va[3] : vb[2];

	/* Masked lanes hold the loads' other (0), so the whole tile is summed
	 * by the register-blocked micro-kernel; the loads packed a and b. */
	if (w->k->f32)
		simd_dot_f32(M, N, K, a, w->ld[in->in[0]], b, N, c, o, N);
	else
		simd_dot(M, N, K, a, w->ld[in->in[0]], b, N, c, o, N);
	ov[0] = ov[1] = 1;
	ov[2] = va[2] < vc[2] ? va[2] : vc[2];
	ov[3] = vb[3] < vc[3] ? vb[3] : vc[3];
	w->fl += 2 * va[2] * vb[3] * vk;
}

static void
do_transpose(Worker *w, const TileInst *in)
{
	int r = w->k->f->vals[in->in[0]].rank, p = 4 - r;
	const PTile *ti = &w->k->tile[in->in[0]], *to = &w->k->tile[in->res];
	const void *x = w->p[in->in[0]];
	void *o = w->p[in->res];
	int64_t xs[4], st = 1, s[4];
	bool f32 = w->k->f32;

	for (int d = 3; d >= 0; d--) {
		xs[d] = st;
		st *= ti->sh[d];
	}
	for (int d = 0; d < 4; d++) {
		int src = d < p ? d : p + (int)in->perm[d - p];

		s[d] = xs[src];
		w->valid[in->res][d] = w->valid[in->in[0]][src];
	}
	for (int64_t i0 = 0, q = 0; i0 < to->sh[0]; i0++)
		for (int64_t i1 = 0; i1 < to->sh[1]; i1++)
			for (int64_t i2 = 0; i2 < to->sh[2]; i2++)
				for (int64_t i3 = 0; i3 < to->sh[3]; i3++)
					tset(o, q++, tget(x, i0 * s[0] + i1 * s[1] + i2 * s[2] +
					    i3 * s[3], f32), f32);
}

static void
copy_tile(Worker *w, int dst, int src)
{
	if (dst == src)
		return;
	if (w->p[dst] != w->p[src])   /* a dot's result may share its accumulator */
		memcpy(w->p[dst], w->p[src], w->k->es * (size_t)w->k->tile[dst].n);
	memcpy(w->valid[dst], w->valid[src], sizeof w->valid[0]);
}

/* Elements lo..lo+n of an op of a strip run. */
static void
strip_op(Worker *w, const TileInst *in, int64_t lo, int64_t n)
{
	const PKernel *k = w->k;
	size_t es = k->es;
	bool fa, fb;
	const void *a, *b;

	if (in->op == TO_UNARY) {
		unary_range(w, in, lo, n);
		return;
	}
	fa = k->tile[in->in[0]].n > 1;           /* else one element, stride 0 */
	fb = k->tile[in->in[1]].n > 1;
	a = fa ? at(w->p[in->in[0]], lo, es) : w->p[in->in[0]];
	b = fb ? at(w->p[in->in[1]], lo, es) : w->p[in->in[1]];
	if (k->f32)
		simd_binary_f32(simd_op_of(in->gop), n, a, fa, b, fb, at(w->p[in->res], lo, es));
	else
		simd_binary(simd_op_of(in->gop), n, a, fa, b, fb, at(w->p[in->res], lo, es));
}

/* Where store i puts its whole tile as one contiguous run of the
 * tensor's elements, or NULL if it does not (a ragged edge, strides, a
 * conversion): then it is done the ordinary way. */
static char *
strip_store_target(Worker *w, int i)
{
	const PKernel *k = w->k;
	const TileInst *in = &k->f->insts[i];
	const PAccess *a = &k->acc[i];
	const PTile *t = &k->tile[in->in[0]];
	int64_t valid[4], off[4], base = access_box(w, in, a, t->sh, valid, off);
	Tensor *dst = &w->vals[a->node];

	if (a->tstr[3] != 1 || dst->dt != k->dt || !whole(a->tstr, t->sh))
		return NULL;
	for (int d = 0; d < 4; d++)
		if (valid[d] < t->sh[d] || w->valid[in->in[0]][d] < t->sh[d])
			return NULL;
	return at(dst->data, base, k->es);
}

/* Runs the strip run that starts at instruction i (and the store that
 * follows it, when it can go strip by strip); returns the next one. */
static int
run_strips(Worker *w, int i)
{
	const PKernel *k = w->k;
	const TileFn *f = k->f;
	int end = k->run_end[i], last = f->insts[end - 1].res;
	int64_t n = k->tile[last].n, sa[4], sb[4];
	size_t es = k->es;
	char *dst = NULL;

	for (int q = i; q < end; q++) {
		if (f->insts[q].op == TO_UNARY)
			unary_meta(w, &f->insts[q]);
		else
			(void)binary_prep(w, &f->insts[q], sa, sb);
	}
	if (end < f->ninsts && f->insts[end].op == TO_STORE && f->insts[end].in[0] == last)
		dst = strip_store_target(w, end);
	for (int64_t lo = 0; lo < n; lo += STRIP) {
		int64_t len = n - lo < STRIP ? n - lo : STRIP;

		for (int q = i; q < end; q++)
			strip_op(w, &f->insts[q], lo, len);
		if (dst && k->acc[end].stream)
			simd_copy_stream(dst + lo * (int64_t)es, at(w->p[last], lo, es), es * (size_t)len);
		else if (dst)
			memcpy(dst + lo * (int64_t)es, at(w->p[last], lo, es), es * (size_t)len);
	}
	if (!dst)
		return end;
	w->wr += n * (int64_t)es;
	return end + 1;
}

/* Runs instructions [i, end) of the kernel for the current program. */
static void
run_insts(Worker *w, int i, int end)
{
	const TileFn *f = w->k->f;

	while (i < end) {
		const TileInst *in = &f->insts[i];

		if (w->k->run_end[i]) {
			i = run_strips(w, i);
			continue;
		}
		switch (in->op) {
		case TO_PROGRAM_ID:
			w->sc[in->res] = w->pid[in->axis];
			break;
		case TO_IDIV:
			w->sc[in->res] = w->sc[in->in[0]] / in->by;
			break;
		case TO_IREM:
			w->sc[in->res] = w->sc[in->in[0]] % in->by;
			break;
		case TO_ZEROS:
		case TO_FULL: {
			const PTile *t = &w->k->tile[in->res];
			void *p = w->p[in->res];

			if (in->op == TO_ZEROS)
				memset(p, 0, w->k->es * (size_t)t->n);
			else if (w->k->f32)
				for (int64_t q = 0; q < t->n; q++)
					((float *)p)[q] = (float)in->value;
			else
				for (int64_t q = 0; q < t->n; q++)
					((double *)p)[q] = in->value;
			memcpy(w->valid[in->res], t->sh, sizeof t->sh);
			break;
		}
		case TO_LOAD:
			do_load(w, i);
			break;
		case TO_STORE:
		case TO_ATOMIC_ADD:
		case TO_ATOMIC_MAX:
			do_store(w, i);
			break;
		case TO_FOR:
			copy_tile(w, in->iter, in->in[0]);
			for (int64_t v = in->lo; v < in->hi; v += in->step) {
				w->sc[in->var] = v;
				run_insts(w, i + 1, in->end);
				copy_tile(w, in->iter, f->insts[in->end].in[0]);
			}
			copy_tile(w, in->res, in->iter);
			i = in->end + 1;
			continue;
		case TO_YIELD:
			break;
		case TO_DOT:
			do_dot(w, in);
			break;
		case TO_UNARY:
			do_unary(w, in);
			break;
		case TO_BINARY:
			do_binary(w, in);
			break;
		case TO_REDUCE:
			do_reduce(w, in);
			break;
		case TO_TRANSPOSE:
			do_transpose(w, in);
			break;
		case TO_COUNT:
			AICM_BUG("bad tile op");
		}
		i++;
	}
}

/* ---- running a grid -------------------------------------------------- */

typedef struct Pool {
	const PKernel *k;
	Tensor *vals;
	int64_t programs;
	int64_t chunk;               /* programs taken at a time, at first */
	int nt;                      /* threads taking them */
	int64_t next;                /* the next program to take (atomic) */
	AtomLog *logs;
} Pool;

static void
scratch_init(Scratch *s, const TilePlan *p)
{
	size_t n = (p->maxbuf + EXEC_ALIGN) / EXEC_ALIGN * EXEC_ALIGN;

	s->buf = aligned_alloc(EXEC_ALIGN, n);
	if (!s->buf)
		AICM_BUG("out of memory (%zu bytes)", n);
	s->p = xcalloc((size_t)p->maxvals + 1, sizeof *s->p);
	s->ld = xcalloc((size_t)p->maxvals + 1, sizeof *s->ld);
	s->mkey = xcalloc((size_t)p->maxslots + 1, sizeof *s->mkey);
	s->mcnt = xcalloc((size_t)p->maxinsts + 1, sizeof *s->mcnt);
	s->sc = xcalloc((size_t)p->maxvals + 1, sizeof *s->sc);
	s->valid = xcalloc((size_t)p->maxvals + 1, sizeof *s->valid);
}

static void
scratch_free(Scratch *s)
{
	free(s->buf);
	free(s->p);
	free(s->ld);
	free(s->mkey);
	free(s->mcnt);
	free(s->sc);
	free(s->valid);
}

static void
worker_init(Worker *w, const Scratch *s, const PKernel *k, Tensor *vals, AtomLog *logs)
{
	memset(w, 0, sizeof *w);
	w->k = k;
	w->vals = vals;
	w->buf = s->buf;
	w->p = s->p;
	w->ld = s->ld;
	w->mkey = s->mkey;
	w->mcnt = s->mcnt;
	w->sc = s->sc;
	w->valid = s->valid;
	w->logs = logs;
	for (int v = 0; v < k->nvals; v++) {
		w->p[v] = w->buf + k->tile[v].off * k->es;
		w->ld[v] = k->tile[v].sh[3];
	}
	for (int q = 0; q < k->nslots; q++)
		w->mkey[q][0] = -1;   /* no offset is negative: nothing kept yet */
}

static void
run_program(Worker *w, int64_t p)
{
	const int64_t *g = w->k->f->grid;

	w->prog = p;
	if (w->k->axis0_fast) {
		w->pid[0] = p % g[0];
		w->pid[1] = p / g[0] % g[1];
		w->pid[2] = p / (g[0] * g[1]);
	} else {
		w->pid[0] = p / (g[1] * g[2]);
		w->pid[1] = p / g[2] % g[1];
		w->pid[2] = p % g[2];
	}
	for (int q = 0; q < w->k->nmemoed; q++)
		w->mcnt[w->k->memoed[q]] = 0;
	run_insts(w, 0, w->k->f->ninsts);
}

/* Takes programs until none is left; the streamed stores are fenced
 * before the thread reports its share done.  Chunks halve towards the end
 * (fewer than two chunks a thread left): whole columns of a memo kernel
 * took 12% of W1's time each, and when one thread ran slower (a VM's
 * second core is often shared) the other sat idle for most of one. */
static void
take_programs(Pool *pool, Worker *w)
{
	int64_t i = __atomic_load_n(&pool->next, __ATOMIC_RELAXED);

	while (i < pool->programs) {
		int64_t c = pool->chunk, e;

		while (c > 1 && pool->programs - i < 2 * pool->nt * c)
			c = (c + 1) / 2;
		if (!__atomic_compare_exchange_n(&pool->next, &i, i + c, false,
		    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue;      /* i is the current value now */
		for (e = i + c < pool->programs ? i + c : pool->programs; i < e; i++)
			run_program(w, i);
		i = __atomic_load_n(&pool->next, __ATOMIC_RELAXED);
	}
	simd_fence();
}

/* The crew: n threads started once per plan, each with its scratch, that
 * wait for a grid, take its programs with the caller, and report back.
 * A job is one generation; the caller waits until every thread is done
 * with it, so a Pool on the caller's stack outlives its use. */
typedef struct Member {
	Crew *crew;
	int id;                      /* 1..n; the caller is 0 */
	Scratch s;
	Worker w;
} Member;

struct Crew {
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	int n;
	int busy;                    /* threads still on this generation */
	int64_t gen;
	bool quit;
	Pool *pool;
	int active;                  /* threads 1..active-1 take part */
	pthread_t *tid;
	Member *m;
};

static void *
member_main(void *arg)
{
	Member *me = arg;
	Crew *c = me->crew;
	int64_t seen = 0;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (c->gen == seen && !c->quit)
			pthread_cond_wait(&c->go, &c->mu);
		if (c->quit)
			break;
		seen = c->gen;
		if (me->id < c->active) {
			pthread_mutex_unlock(&c->mu);
			take_programs(c->pool, &me->w);
			pthread_mutex_lock(&c->mu);
		}
		if (--c->busy == 0)
			pthread_cond_signal(&c->done);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

static void
crew_stop(Crew *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	c->quit = true;
	pthread_cond_broadcast(&c->go);
	pthread_mutex_unlock(&c->mu);
	for (int t = 1; t <= c->n; t++) {
		pthread_join(c->tid[t], NULL);
		scratch_free(&c->m[t].s);
	}
	scratch_free(&c->m[0].s);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->go);
	pthread_cond_destroy(&c->done);
	free(c->tid);
	free(c->m);
	free(c);
}

/* A crew of n threads besides the caller (member 0 is the caller's
 * scratch). */
static Crew *
crew_start(const TilePlan *p, int n)
{
	Crew *c = xcalloc(1, sizeof *c);

	c->n = n;
	c->tid = xcalloc((size_t)n + 1, sizeof *c->tid);
	c->m = xcalloc((size_t)n + 1, sizeof *c->m);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->go, NULL);
	pthread_cond_init(&c->done, NULL);
	for (int t = 0; t <= n; t++) {
		c->m[t].crew = c;
		c->m[t].id = t;
		scratch_init(&c->m[t].s, p);
	}
	for (int t = 1; t <= n; t++)
		if (pthread_create(&c->tid[t], NULL, member_main, &c->m[t]) != 0)
			AICM_BUG("cannot start a thread");
	return c;
}

static void
add_stats(KernelStats *st, const Worker *w)
{
	st->bytes_read += w->rd;
	st->bytes_written += w->wr;
	st->flops += w->fl;
}

/* Programs are taken in grid order (axis 0 slowest, axis 2 fastest) by
 * nt threads. */
static void
run_kernel(TilePlan *plan, const PKernel *k, Tensor *vals, int nt, KernelStats *st)
{
	const TileFn *f = k->f;
	Tensor *out = &vals[k->node];
	int64_t programs = f->grid[0] * f->grid[1] * f->grid[2];
	Crew *c = plan->crew;
	Pool pool = {k, vals, programs, 1, 1, 0, NULL};

	if (f->has_init) {
		for (int64_t i = 0; i < out->numel; i++)
			exec_set(out, i, f->init);
		st->bytes_written += out->numel * (int64_t)k->es;
	}
	if (nt > programs)
		nt = (int)(programs < 1 ? 1 : programs);
	pool.nt = nt;
	if (nt > 1 && k->atomics)
		pool.logs = xcalloc((size_t)programs, sizeof *pool.logs);
	/* A thread that keeps packed tiles takes a whole column of blocks at
	 * a time, so that no two threads pack the same tiles, when there are
	 * columns enough to go round. */
	if (nt > 1 && k->nmemoed > 0 && programs / f->grid[0] >= 2 * nt)
		pool.chunk = f->grid[0];
	else if (nt > 1 && programs >= 32 * (int64_t)nt)
		/* Other kernels start with chunks of a sixteenth of a thread's
		 * share: taking W2's and W5's small programs one at a time made
		 * the threads fight over the counter's cache line (W2 f32 on two
		 * threads with one row a program was barely faster than one). */
		pool.chunk = programs / (16 * (int64_t)nt);
	for (int t = 0; t < nt; t++)
		worker_init(&c->m[t].w, &c->m[t].s, k, vals, pool.logs);
	if (nt > 1) {
		pthread_mutex_lock(&c->mu);
		c->pool = &pool;
		c->active = nt;
		c->busy = c->n;
		c->gen++;
		pthread_cond_broadcast(&c->go);
		pthread_mutex_unlock(&c->mu);
	}
	take_programs(&pool, &c->m[0].w);
	if (nt > 1) {
		pthread_mutex_lock(&c->mu);
		while (c->busy > 0)
			pthread_cond_wait(&c->done, &c->mu);
		pthread_mutex_unlock(&c->mu);
	}
	/* Atomics in program order, as one thread would have done them. */
	for (int64_t p = 0; pool.logs && p < programs; p++) {
		AtomLog *l = &pool.logs[p];

		for (int64_t q = 0; q < l->n; q++)
			atom_apply(out, l->idx[q], l->val[q], l->op);
		free(l->idx);
		free(l->val);
	}
	free(pool.logs);
	for (int t = 0; t < nt; t++)
		add_stats(st, &c->m[t].w);
}

int
exec_tile_run(TilePlan *p, Tensor *vals, int threads, Diag *d)
{
	const Graph *g = p->g;

	if (threads < 1)
		threads = 1;
	if (!p->crew || p->crew->n < threads - 1) {
		crew_stop(p->crew);
		p->crew = crew_start(p, threads - 1);
	}
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (ir_ops[n->op].cls == OC_SOURCE && !n->tile &&
		    !exec_tensor_has_type(&vals[i], &n->type)) {
			diag_error(d, n->loc, "'%%%s' has no value of its type to run on", n->name);
			return -1;
		}
	}
	for (int q = 0; q < p->nk; q++) {
		const PKernel *k = &p->k[q];
		const Node *n = &g->nodes[k->node];
		KernelStats *st = &p->stats[q];
		int64_t ideal = 0;

		if (!exec_tensor_has_type(&vals[k->node], &n->type)) {
			exec_tensor_free(&vals[k->node]);
			if (exec_tensor_alloc(&vals[k->node], &n->type, 0) != 0) {
				diag_error(d, n->loc, "cannot allocate the result of '%%%s'", n->name);
				return -1;
			}
		}
		memset(st, 0, sizeof *st);
		st->name = k->f->name;
		st->kind = ir_kernel_kinds[k->f->kind];
		st->result = n->name;
		memcpy(st->grid, k->f->grid, sizeof st->grid);
		st->programs = k->f->grid[0] * k->f->grid[1] * k->f->grid[2];
		for (int j = 0; j < k->f->nargs; j++)
			ideal += ir_type_numel(&g->nodes[k->f->args[j]].type);
		st->ideal_read = ideal * (int64_t)k->es;
		st->ideal_written = ir_type_numel(&n->type) * (int64_t)k->es;
		run_kernel(p, k, vals, threads, st);
	}
	return 0;
}

/* ---- statistics ------------------------------------------------------ */

KernelStats
exec_tile_total(const KernelStats *ks, int n)
{
	KernelStats t = {0};

	t.name = "total";
	t.kind = "";
	t.result = "";
	for (int i = 0; i < n; i++) {
		t.programs += ks[i].programs;
		t.bytes_read += ks[i].bytes_read;
		t.bytes_written += ks[i].bytes_written;
		t.flops += ks[i].flops;
		t.ideal_read += ks[i].ideal_read;
		t.ideal_written += ks[i].ideal_written;
	}
	return t;
}

/* "305.3 KB": 1 KB = 1000 B, as Nsight Compute and the seed count. */
static void
fmt_bytes(char *buf, size_t n, int64_t b)
{
	static const char *const unit[] = {"B", "KB", "MB", "GB", "TB"};
	double v = (double)b;
	int u = 0;

	while (v >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%lld B", (long long)b);
	else
		snprintf(buf, n, "%.1f %s", v, unit[u]);
}

static double
intensity(const KernelStats *k)
{
	int64_t b = k->bytes_read + k->bytes_written;

	return b ? (double)k->flops / (double)b : 0.0;
}

static void
print_row(FILE *f, const KernelStats *k, bool total)
{
	char grid[64], rd[32], wr[32], ird[32], iwr[32], name[96];

	if (total)
		snprintf(grid, sizeof grid, "-");
	else if (k->grid[2] != 1)
		snprintf(grid, sizeof grid, "(%lld, %lld, %lld)", (long long)k->grid[0],
		    (long long)k->grid[1], (long long)k->grid[2]);
	else
		snprintf(grid, sizeof grid, "(%lld, %lld)", (long long)k->grid[0],
		    (long long)k->grid[1]);
	fmt_bytes(rd, sizeof rd, k->bytes_read);
	fmt_bytes(wr, sizeof wr, k->bytes_written);
	fmt_bytes(ird, sizeof ird, k->ideal_read);
	fmt_bytes(iwr, sizeof iwr, k->ideal_written);
	if (total)
		snprintf(name, sizeof name, "total");
	else
		snprintf(name, sizeof name, "%s [%s]", k->name, k->kind);
	fprintf(f, "%-28s %-14s %8lld %10s %10s %12lld %8.3f %10s %10s\n", name, grid,
	    (long long)k->programs, rd, wr, (long long)k->flops, intensity(k), ird, iwr);
}

static void
print_json(FILE *f, const KernelStats *k, const char *indent)
{
	fprintf(f, "%s{\"kernel\": \"%s\", \"kind\": \"%s\", \"result\": \"%s\", "
	    "\"grid\": [%lld, %lld, %lld], \"programs\": %lld, "
	    "\"dram__bytes_read.sum\": %lld, \"dram__bytes_write.sum\": %lld, "
	    "\"flops\": %lld, \"arithmetic_intensity\": %.6g, "
	    "\"ideal_bytes_read\": %lld, \"ideal_bytes_write\": %lld}", indent, k->name, k->kind,
	    k->result, (long long)k->grid[0], (long long)k->grid[1], (long long)k->grid[2],
	    (long long)k->programs, (long long)k->bytes_read, (long long)k->bytes_written,
	    (long long)k->flops, intensity(k), (long long)k->ideal_read,
	    (long long)k->ideal_written);
}

void
exec_tile_print_stats(FILE *f, const KernelStats *ks, int n, bool json)
{
	KernelStats t = exec_tile_total(ks, n);

	if (json) {
		fprintf(f, "{\"kernels\": [\n");
		for (int i = 0; i < n; i++) {
			print_json(f, &ks[i], "  ");
			fprintf(f, "%s\n", i + 1 < n ? "," : "");
		}
		fprintf(f, "], \"total\": ");
		print_json(f, &t, "");
		fprintf(f, "}\n");
		return;
	}
	fprintf(f, "KernelStats (1 KB = 1000 B; read = dram__bytes_read.sum, written = "
	    "dram__bytes_write.sum)\n");
	fprintf(f, "%-28s %-14s %8s %10s %10s %12s %8s %10s %10s\n", "kernel", "grid", "programs",
	    "read", "written", "flops", "flop/B", "ideal rd", "ideal wr");
	for (int i = 0; i < n; i++)
		print_row(f, &ks[i], false);
	print_row(f, &t, true);
	fprintf(f, "bytes: %lld read, %lld written, %lld total (ideal %lld)\n",
	    (long long)t.bytes_read, (long long)t.bytes_written,
	    (long long)(t.bytes_read + t.bytes_written),
	    (long long)(t.ideal_read + t.ideal_written));
}
