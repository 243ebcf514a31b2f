/*
 * tile_plan.c: exec_tile_compile, a lowered graph's kernels made into a
 * plan before anything runs (tile_priv.h has the executor's map).
 *
 * The plan keeps, per kernel, instructions with resolved slots and strides
 * and per value a place in one scratch buffer, so that running it does no
 * name lookups and no allocation.  What planning asks about a body (trip
 * counts, readers, the loops around an instruction) comes from one pass
 * over it, so that a fused chain of any length plans in linear time.  The
 * plan also decides what running does faster than by the letter: which
 * tiles share a buffer (a dot's accumulator, a loop's carried value),
 * which runs of elementwise ops go strip by strip or row by row, which
 * loads read their tensor in place instead of copying (the tile points into
 * the tensor; tiles are never written in place), which loads of consts are
 * packed once for every run (the blocks kept by the plan), which zeros()
 * accumulators need no filling, which stores stream past the caches, and
 * which packed tiles a thread keeps for the next program.  A body too
 * large to run (tile memory, or work beyond any sensible run) is refused
 * here with a diagnostic.
 */
#include <stdlib.h>
#include <string.h>

#include "tile_priv.h"

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
/* The most memory a plan's prepacked consts may take, all together. */
#define PREPACK_MAX ((int64_t)1 << 30)

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

/* A loop whose body yields a join of its parts (lower_attention.c packs
 * its running max, sum and accumulator so): when every read of the carried
 * value comes before the join and the join does not read it, the join
 * writes straight into the carried value's buffer, and the copy back at
 * each trip's end moves nothing (it was a tile [BM, dv + 2] a block). */
static void
alias_yielded_joins(const TileFn *f, PKernel *k, const Uses *u)
{
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *fo = &f->insts[i];
		int y, d, it = fo->iter;
		bool reads = false;

		if (fo->op != TO_FOR)
			continue;
		y = f->insts[fo->end].in[0];
		d = u->def[y];
		if (d <= i || d >= fo->end || u->parent[d] != i || f->insts[d].op != TO_JOIN ||
		    y == it || k->tile[y].n != k->tile[it].n || u->last[it] > d)
			continue;
		for (int q = 0; q < f->insts[d].nin; q++)
			reads |= f->insts[d].in[q] == it;
		if (!reads)
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

/* Zero accumulators.  A zeros() tile that only dots read, as their
 * accumulator, is never filled: each such dot starts its sums at 0
 * instead of loading them (simd_dot with c NULL, the same bits).  A K
 * loop's carried accumulator that starts as such a zeros() (aliased by
 * alias_loop_carried, read in the loop by its dot alone) is not filled
 * either: the dot starts at 0 on the loop's first trip.  The fill and the
 * first trip's loads of C were a pass over the accumulator tile per
 * program. */
static void
plan_zero_dots(const TileFn *f, PKernel *k, const Uses *u)
{
	int *dots = xcalloc((size_t)f->nvals + 1, sizeof *dots);

	k->zskip = xcalloc((size_t)f->ninsts + 1, sizeof *k->zskip);
	k->zdot = xmalloc(sizeof *k->zdot * ((size_t)f->ninsts + 1));
	for (int i = 0; i < f->ninsts; i++)
		k->zdot[i] = -1;
	if (k->ik || k->mx) {
		free(dots);
		return;
	}
	/* per value: the dots that read it as their accumulator only */
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];

		if (in->op == TO_DOT && in->in[0] != in->in[2] && in->in[1] != in->in[2])
			dots[in->in[2]]++;
	}
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];

		if (in->op != TO_ZEROS || u->nread[in->res] == 0 || dots[in->res] != u->nread[in->res])
			continue;
		k->zskip[i] = true;
		for (int j = i + 1; j < f->ninsts; j++)
			if (f->insts[j].op == TO_DOT && f->insts[j].in[2] == in->res)
				k->zdot[j] = -2;
	}
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *fo = &f->insts[i];
		int it = fo->iter, init, p, d;

		if (fo->op != TO_FOR || tile_trips(fo) < 1)
			continue;
		init = fo->in[0];
		p = u->def[init];
		d = u->def[f->insts[fo->end].in[0]];
		if (p < 0 || f->insts[p].op != TO_ZEROS || u->nread[init] != 1 ||
		    k->tile[init].off != k->tile[it].off || d <= i || d >= fo->end ||
		    u->parent[d] != i || f->insts[d].op != TO_DOT || f->insts[d].in[2] != it ||
		    f->insts[d].in[0] == it || f->insts[d].in[1] == it || u->nread[it] != 1)
			continue;
		k->zskip[p] = true;
		k->zdot[d] = i;
	}
	free(dots);
}

/* Strip runs.  A run of elementwise ops outside any loop, on tiles of one
 * size whose operands are that size too or a single element, is done
 * strip by strip: every op on STRIP elements (tile_priv.h) before the
 * next strip, and a store of the run's result that goes whole to one
 * contiguous place copies each strip as it is made.  The strip's operands and temporaries
 * stay in L1, and the run's input streams and its output stream move
 * together instead of one phase each: W5 (maximum(x*y+z, 0), rows of
 * 4096) went from about 25 to about 22 ms on one core (a test program
 * with the same memory: 18-22 ms op by op over whole rows, 14-16 with
 * strips of 64-256 elements, 12 fused per vector; 512 and more were no
 * better than whole rows).  Elementwise kernels are per element, so the
 * bits do not change. */

static bool
flat_operand(const PKernel *k, int v, const PTile *t)
{
	const PTile *o = &k->tile[v];

	return o->n == 1 || memcmp(o->sh, t->sh, sizeof t->sh) == 0;
}

/* Row runs: rows of at least this many elements. */
#define ROW_RUN_MIN 32

/* Whether operand v broadcasts to tile t along its dims of 1. */
static bool
row_operand(const PKernel *k, int v, const PTile *t)
{
	const PTile *o = &k->tile[v];

	for (int d = 0; d < 4; d++)
		if (o->sh[d] != t->sh[d] && o->sh[d] != 1)
			return false;
	return true;
}

/* The end of the row run that could start at instruction i (i if none):
 * elementwise ops on tiles of one shape of rows of ROW_RUN_MIN or more,
 * their operands that shape or stretched along some dims (a bias row, a
 * row's mean).  Done a row at a time (tx_run_strips), every op on the
 * row before the next row, and the store of the result row by row: the
 * epilogue of a matmul (bias, relu, a residual) or a LayerNorm's tail
 * took one pass over the whole tile per op, each tile larger than L1. */
static int
row_run(const TileFn *f, const PKernel *k, int i)
{
	const PTile *t = f->insts[i].res >= 0 ? &k->tile[f->insts[i].res] : NULL;
	int j = i;

	if (!t || t->sh[3] < ROW_RUN_MIN)
		return i;
	for (; j < f->ninsts; j++) {
		const TileInst *q = &f->insts[j];

		if ((q->op != TO_UNARY && q->op != TO_BINARY) ||
		    memcmp(k->tile[q->res].sh, t->sh, sizeof t->sh) != 0)
			break;
		if (q->op == TO_UNARY ? !flat_operand(k, q->in[0], t) || k->tile[q->in[0]].n == 1 :
		    !row_operand(k, q->in[0], t) || !row_operand(k, q->in[1], t))
			break;
	}
	return j;
}

static void
plan_strips(const TileFn *f, PKernel *k, const Uses *u)
{
	k->run_end = xcalloc((size_t)f->ninsts + 1, sizeof *k->run_end);
	k->run_rows = xcalloc((size_t)f->ninsts + 1, sizeof *k->run_rows);
	k->run_direct = xcalloc((size_t)f->ninsts + 1, sizeof *k->run_direct);
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
		/* two ops at least, or one whose result is stored next; else
		 * perhaps a row run */
		if (!(j - i >= 2 || (j - i == 1 && j < f->ninsts && f->insts[j].op == TO_STORE &&
		    f->insts[j].in[0] == f->insts[i].res))) {
			int r = row_run(f, k, i);

			if (r - i >= 2 || (r - i == 1 && r < f->ninsts && f->insts[r].op == TO_STORE &&
			    f->insts[r].in[0] == f->insts[i].res)) {
				j = r;
				k->run_rows[i] = true;
				/* the store its only reader: the last op may write
				 * each row where the store would copy it (run_rows) */
				k->run_direct[i] = r < f->ninsts && f->insts[r].op == TO_STORE &&
				    f->insts[r].in[0] == f->insts[r - 1].res &&
				    u->nread[f->insts[r - 1].res] == 1;
			}
		}
		if (j - i >= 2 || (j - i == 1 && j < f->ninsts && f->insts[j].op == TO_STORE &&
		    f->insts[j].in[0] == f->insts[i].res))
			k->run_end[i] = j;
		i = j > i ? j : i + 1;
	}
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

/* Whether index x takes only multiples of e: its constant and each
 * term's coefficient are, or the term's value is a loop's counter whose
 * start and step times the coefficient are (loopof: per value, the for
 * that counts it, or -1). */
static bool
idx_aligned(const TileFn *f, const TileIdx *x, int64_t e, const int *loopof)
{
	if (e <= 1)
		return true;
	if (x->k % e != 0)
		return false;
	for (int t = 0; t < x->nterm; t++) {
		int64_t c = x->coef[t];
		int fo = loopof[x->val[t]];

		if (c % e == 0)
			continue;
		if (fo < 0 || (f->insts[fo].lo * c) % e != 0 || (f->insts[fo].step * c) % e != 0)
			return false;
	}
	return true;
}

/* Prepacked consts.  A load of a graph const that is copied (not read in
 * place: a matmul's weight panel, whose rows are a power-of-two stride
 * apart) gets the whole tensor packed once, block by block in its tile's
 * shape, before the kernel first runs; every program then reads its block
 * where it lies.  The matmul's K loop packed those panels again in every
 * run (memo_plan keeps them only across the programs of one run): 5 MB of
 * copies per run of the transformer layer, a tenth of its time.  Only
 * when every index of the load is a multiple of the tile's extent along
 * its dim (so that each tile is one block), a tile of at most four dims,
 * a kernel of one compute type, and within PREPACK_MAX for the plan
 * and the room the caller's memory budget leaves (pp: a load that would
 * pass the room is left unpacked and counted in pp->skipped); the blocks
 * past a ragged edge hold other= as a load would.  Consts only: a graph's
 * inputs change from run to run, and a const that a caller rewrites in
 * place must be named by exec_tile_source_changed. */
static void
plan_prepack(const Graph *g, PKernel *k, const int64_t *trips, TilePrepack *pp)
{
	const TileFn *f = k->f;
	int *loopof = xmalloc(sizeof *loopof * ((size_t)f->nvals + 1));
	int64_t progs = f->grid[0] * f->grid[1] * f->grid[2];

	for (int v = 0; v < f->nvals; v++)
		loopof[v] = -1;
	for (int i = 0; i < f->ninsts; i++)
		if (f->insts[i].op == TO_FOR)
			loopof[f->insts[i].var] = i;
	for (int i = 0; i < f->ninsts && !k->mx; i++) {
		const TileInst *in = &f->insts[i];
		PAccess *a = &k->acc[i];
		const PTile *t;
		int64_t nb = 1, bytes, tb;
		bool ok = true;

		if (in->op != TO_LOAD || in->arg == TILE_RESULT || a->dense || a->view ||
		    a->pad < 0 || g->nodes[a->node].op != OP_CONST || (trips[i] <= 1 && progs <= 1))
			continue;
		t = &k->tile[in->res];
		for (int d = 0; d < 4; d++) {
			a->pblk[d] = (a->tdim[d] + t->sh[d] - 1) / t->sh[d];
			nb *= a->pblk[d];
		}
		for (int q = 0; q < a->rank && ok; q++)
			ok = idx_aligned(f, &in->idx[q], t->sh[a->pad + q], loopof);
		tb = (int64_t)(((size_t)t->n * k->es + 63) & ~(size_t)63);
		/* a tile much larger than its tensor would pad it out: not
		 * worth the memory */
		if (!ok || nb == 0 || __builtin_mul_overflow(nb, tb, &bytes) ||
		    bytes > 2 * ir_type_numel(&g->nodes[a->node].type) * (int64_t)k->es + 65536 ||
		    pp->bytes + bytes > PREPACK_MAX)
			continue;
		if (pp->room >= 0 && pp->bytes + bytes > pp->room) {
			pp->skipped += bytes;
			continue;
		}
		pp->bytes += bytes;
		a->prepack = true;
		a->pk_tile = (size_t)tb;
	}
	free(loopof);
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
		    !a->view && !a->prepack && !(a->dep & 1u) && (a->dep & 6u) && f->grid[0] > 1)
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

		/* (a memo's key is the four tile dims' offsets: none past rank 4) */
		if (in->op != TO_LOAD || trips[i] <= 1 || trips[i] == INT64_MAX ||
		    in->arg == TILE_RESULT || a->dense || a->view || a->prepack ||
		    (a->dep & (1u << fast)) ||
		    trips[i] > MEMO_MAX || a->rank > 4)
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

/* The type a kernel's tiles are held in (tile_priv.h).  A body with a
 * float value computes in floats: f32 when every tile value is f32 or
 * bool (bools are 0 and 1), else f64.  A body of integers and bools only
 * is an integer kernel (*ik) in its widest type (i64, i32, or bool for
 * bools alone).  A body that mixes integers with floats, or i32 with i64,
 * is a mixed kernel (*mx, tile_mixed.c): each tile in its own type, the
 * floats in the type returned (f32 when every float value is f32). */
static DType
compute_dt(const TileFn *f, bool *ik, bool *mx)
{
	bool flt = false, f64 = false, i32 = false, i64 = false;
	bool *idx = xcalloc((size_t)f->nvals + 1, 1);

	/* a gather's index tiles do not count: load_gather reads each index
	 * exactly from its tensor (tile_copy.c) */
	for (int i = 0; i < f->ninsts; i++)
		if (f->insts[i].op == TO_LOAD_GATHER)
			idx[f->insts[i].in[0]] = true;
	for (int v = 0; v < f->nvals; v++) {
		if (f->vals[v].rank < 0 || idx[v])
			continue;
		switch (f->vals[v].dt) {
		case DT_F64: flt = f64 = true; break;
		case DT_F32: flt = true; break;
		case DT_I64: i64 = true; break;
		case DT_I32: i32 = true; break;
		default: break;
		}
	}
	free(idx);
	*ik = !flt;
	/* several types: a mixed kernel (tile_mixed.c), its floats in this */
	*mx = (flt && (i32 || i64)) || (i32 && i64);
	if (*mx)
		return f64 ? DT_F64 : DT_F32;
	if (flt)
		return f64 || i32 || i64 ? DT_F64 : DT_F32;
	return i64 ? DT_I64 : i32 ? DT_I32 : DT_BOOL;
}

static int
compile_kernel(const Graph *g, int node, PKernel *k, TilePrepack *prepacked)
{
	const Node *n = &g->nodes[node];
	const TileFn *f = n->tile;
	size_t off = 0;
	const int64_t *trips;
	Uses u;

	k->node = node;
	k->f = f;
	k->dt = compute_dt(f, &k->ik, &k->mx);
	k->f32 = k->dt == DT_F32;
	k->es = ir_dtype_size(k->dt);
	if (k->mx) {             /* the base's ops never run: its views' do */
		k->ik = false;
		k->f32 = false;
		k->es = 8;
	}
	k->les = k->es;
	k->nvals = f->nvals;
	k->tile = xcalloc((size_t)f->nvals + 1, sizeof *k->tile);
	k->acc = xcalloc((size_t)f->ninsts + 1, sizeof *k->acc);
	for (int v = 0; v < f->nvals; v++) {
		PTile *t = &k->tile[v];

		if (f->vals[v].rank < 0)
			continue;
		/* A program holds tiles of four dims: one of a higher rank
		 * must be 1 along all but its last four (lower-tiled walks the
		 * leading dims of a space one index at a time). */
		for (int d = 0; d + 4 < f->vals[v].rank; d++)
			if (f->vals[v].shape[d] != 1)
				return -3;
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
	alias_yielded_joins(f, k, &u);
	alias_loop_carried(f, k, &u);
	plan_zero_dots(f, k, &u);
	if (!k->ik && !k->mx)    /* integer ops run tile by tile (tile_ops.c) */
		plan_strips(f, k, &u);
	else
		k->run_end = xcalloc((size_t)f->ninsts + 1, sizeof *k->run_end);
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
			/* argmax, argmin: each lane scans its whole line */
			if ((in->op == TO_ARGMAX || in->op == TO_ARGMIN) && in->axis >= 0 &&
			    in->arg >= 0 && in->arg < f->nargs &&
			    in->axis < g->nodes[f->args[in->arg]].type.rank)
				big |= __builtin_mul_overflow(e,
				    g->nodes[f->args[in->arg]].type.dim[in->axis], &e);
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

		if (!tx_ops[in->op])
			AICM_BUG("tile op %d has no row in tx_ops", (int)in->op);
		if (in->op == TO_ATOMIC_ADD || in->op == TO_ATOMIC_MAX)
			k->atomics = true;
		/* im2col, window_count, window_max and window_sum compute
		 * their own addresses (tile_window.c): no access box */
		if ((tile_ops[in->op].form != TF_LOAD && tile_ops[in->op].form != TF_STORE) ||
		    in->op == TO_IM2COL || in->op == TO_WINDOW_COUNT || in->op == TO_WINDOW_MAX ||
		    in->op == TO_WINDOW_SUM)
			continue;
		t = tile_target_type(g, n, in, &buf);
		a->node = in->arg == TILE_RESULT ? node : f->args[in->arg];
		a->rank = t->rank;
		tr = tile_ops[in->op].form == TF_LOAD ? f->vals[in->res].rank :
		    f->vals[in->in[0]].rank;
		if (tr != t->rank && in->op != TO_LOAD_GATHER)
			AICM_BUG("an access of rank %d to a tensor of rank %d", tr, t->rank);
		a->pad = 4 - t->rank;
		for (int d = 0; d < 4; d++) {
			a->tstr[d] = 0;
			a->tdim[d] = 1;
		}
		for (int d = t->rank - 1; d >= 0; d--) {
			a->dim[d] = t->dim[d];
			a->lstr[d] = st;
			if (a->pad + d >= 0) {
				a->tstr[a->pad + d] = st;
				a->tdim[a->pad + d] = t->dim[d];
			}
			st *= t->dim[d];
		}
		if (in->vstr) {
			/* a strided view (a layout op folded into the load,
			 * docs/tiled.md): its own strides and origin */
			a->base0 = in->vstr[IR_MAX_RANK];
			for (int d = 0; d < t->rank; d++) {
				a->lstr[d] = in->vstr[d];
				if (a->pad + d >= 0)
					a->tstr[a->pad + d] = in->vstr[d];
			}
		}
		if (in->op == TO_LOAD || tile_ops[in->op].form == TF_STORE)
			mark_dense(k, in, a, t, &u);
	}
	k->bytes = ((k->bufsize * k->es) + 63) & ~(size_t)63;
	plan_prepack(g, k, trips, prepacked);
	plan_memo(k, trips);
	uses_free(&u);
	if (k->mx)
		tx_plan_mixed(k, k->dt);
	return 0;
}

TilePlan *
exec_tile_compile(const Graph *g, Diag *d)
{
	return exec_tile_compile_within(g, -1, d);
}

TilePlan *
exec_tile_compile_within(const Graph *g, int64_t room, Diag *d)
{
	TilePlan *p = xcalloc(1, sizeof *p);

	p->g = g;
	p->prepack.room = room;
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OP_TILED)
			p->nk++;
	p->k = xcalloc((size_t)p->nk + 1, sizeof *p->k);
	p->stats = xcalloc((size_t)p->nk + 1, sizeof *p->stats);
	p->nk = 0;
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (n->op == OP_TILED) {
			PKernel *k = &p->k[p->nk++];
			int rc = compile_kernel(g, i, k, &p->prepack);

			if (rc == -1) {
				diag_error(d, n->loc, "tiled '%%%s' needs more tile memory than a "
				    "program may have (2^28 elements)", n->name);
				exec_tile_free(p);
				return NULL;
			}
			if (rc == -3) {
				diag_error(d, n->loc, "tiled '%%%s' has a tile longer than 1 in a dim "
				    "before its last four; the tile executor holds four dims per tile",
				    n->name);
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

TilePrepack
exec_tile_prepacked(const TilePlan *p)
{
	return p->prepack;
}

void
exec_tile_free(TilePlan *p)
{
	if (!p)
		return;
	tx_crew_stop(p->crew);
	for (int i = 0; i < p->nk; i++) {
		for (int j = 0; p->k[i].acc && j < p->k[i].f->ninsts; j++)
			free(p->k[i].acc[j].pk);
		free(p->k[i].tile);
		free(p->k[i].acc);
		free(p->k[i].memoed);
		free(p->k[i].run_end);
		free(p->k[i].run_rows);
		free(p->k[i].run_direct);
		free(p->k[i].zskip);
		free(p->k[i].zdot);
		free(p->k[i].vdt);
		free(p->k[i].idt);
		free(p->k[i].views);
	}
	free(p->k);
	free(p->stats);
	free(p);
}
