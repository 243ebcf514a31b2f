/*
 * work.c: what a run will cost, counted before it runs (--max-work).
 *
 * The size limits (tensor.c) bound memory; this bounds time.  The count is
 * in flops, the unit of KernelStats and of the op table, planned from the
 * IR alone so that it can refuse a run before any of it happens: an
 * 8000^3 matmul's autotune{measure=true} was still measuring after a
 * minute, and a grid may hold 2^30 programs.
 *
 *   - a graph op (the reference interpreter): the op table's flops
 *     (2*M*N*K for a matmul, one per element read for a reduction), and
 *     at least one per result element, so that layout ops count too;
 *   - a tiled kernel (the tile executor): per program, each instruction's
 *     tile elements (2*M*N*K for a dot, the operand's for a reduction,
 *     the moved tile for a load or store), times the trips of the loops
 *     around it, times the programs of the grid.  Tiles count whole: the
 *     plan, not the masked lanes, so this is an upper bound of what
 *     --stats then reports (which has no loads and stores in flops).
 *
 * Every instruction and every graph op counts at least WORK_MIN: running
 * one costs the executor about 30 ns however small its tile (measured on
 * the 2-core build machine: a loop of 10^8 trips of a bare 'yield' took
 * 0.9 s, 2^24 programs of four one-element instructions 3 s), the time
 * of about a thousand flops of its matmul.  Without that floor a grid of
 * 2^30 one-element programs planned 4*2^30 flops, far under the default
 * limit, and would have run for minutes.
 *
 * Figures are doubles: a planned count can pass 2^63 and must still
 * compare with the limit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "exec.h"
#include "tile.h"

enum { WORK_MIN = 1024 };

static double
at_least_min(double w)
{
	return w > WORK_MIN ? w : WORK_MIN;
}

static double
tile_numel(const TileFn *f, int v)
{
	double n = 1;

	if (v < 0 || v >= f->nvals || f->vals[v].rank < 0)
		return 1;
	for (int i = 0; i < f->vals[v].rank; i++)
		n *= (double)f->vals[v].shape[i];
	return n;
}

/* One trip of one program through instruction in. */
static double
inst_work(const TileFn *f, const TileInst *in)
{
	switch (in->op) {
	case TO_FOR:
	case TO_YIELD:
		return 1;
	case TO_DOT: {
		const TileVal *a = &f->vals[in->in[0]];

		/* 2 * (elements of the result) * K, K the last dim of a */
		return 2 * tile_numel(f, in->res) * (a->rank > 0 ? (double)a->shape[a->rank - 1] : 1);
	}
	case TO_REDUCE:
		return tile_numel(f, in->in[0]);
	case TO_STORE:
	case TO_ATOMIC_ADD:
	case TO_ATOMIC_MAX:
		return tile_numel(f, in->in[0]);
	default:
		return tile_numel(f, in->res);
	}
}

double
exec_tile_work(const TileFn *f, double *per_program)
{
	/* the open loops: each one's end (its yield) and the trips of one
	 * program's pass through its body */
	struct Loop {
		int end;
		double mult;
	} *loops = NULL;
	int nopen = 0, cap = 0;
	double w = 0, mult = 1;

	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];

		while (nopen > 0 && loops[nopen - 1].end < i)
			nopen--;
		mult = nopen ? loops[nopen - 1].mult : 1;
		w += mult * at_least_min(inst_work(f, in));
		if (in->op == TO_FOR) {
			if (nopen == cap) {
				cap = cap ? 2 * cap : 8;
				loops = xrealloc(loops, sizeof *loops * (size_t)cap);
			}
			loops[nopen++] = (struct Loop){in->end, mult * (double)tile_trips(in)};
		}
	}
	free(loops);
	if (per_program)
		*per_program = w;
	return w * (double)f->grid[0] * (double)f->grid[1] * (double)f->grid[2];
}

double
exec_node_work(const Graph *g, int i)
{
	const Node *n = &g->nodes[i];
	double f, e;

	if (n->op == OP_TILED)
		return exec_tile_work(n->tile, NULL);
	if (ir_ops[n->op].cls == OC_SOURCE || n->type.rank < 0)
		return 0;
	f = (double)ir_node_flops(g, i);
	e = (double)ir_type_numel(&n->type);
	return at_least_min(f > e ? f : e);
}

const char *
exec_work_str(int64_t v, char *buf, size_t n)
{
	static const struct { char suf; int64_t mul; } s[] = {
		{'P', 1000000000000000LL}, {'T', 1000000000000LL}, {'G', 1000000000LL},
		{'M', 1000000LL}, {'k', 1000LL},
	};

	for (size_t k = 0; k < sizeof s / sizeof s[0]; k++)
		if (v >= s[k].mul && v % s[k].mul == 0) {
			snprintf(buf, n, "%lld%c", (long long)(v / s[k].mul), s[k].suf);
			return buf;
		}
	snprintf(buf, n, "%lld", (long long)v);
	return buf;
}

/* A planned figure: exact while it is small enough to read, else 3
 * digits (it is a plan, not a count). */
static const char *
flops_str(double w, char *buf, size_t n)
{
	snprintf(buf, n, w < 1e7 ? "%.0f" : "%.3g", w);
	return buf;
}

int
exec_check_work(const Graph *const *gs, const int *runs, int ngraphs, int64_t max_work,
    Diag *d)
{
	const Graph *bigg = NULL;
	int bigi = -1, bigk = 0;
	double total = 0, big = -1;
	char lb[32], t1[32], t2[32], t3[32];

	if (max_work <= 0)
		return 0;
	for (int k = 0; k < ngraphs; k++)
		for (int i = 0; i < gs[k]->nnodes; i++) {
			double w = exec_node_work(gs[k], i) * runs[k];

			total += w;
			if (w > big) {
				big = w;
				bigg = gs[k];
				bigi = i;
				bigk = k;
			}
		}
	if (total <= (double)max_work)
		return 0;
	exec_work_str(max_work, lb, sizeof lb);
	{
		const Node *n = &bigg->nodes[bigi];
		char again[48] = "";

		if (runs[bigk] > 1)
			snprintf(again, sizeof again, ", run %d times", runs[bigk]);
		if (n->op == OP_TILED) {
			const TileFn *f = n->tile;
			double per;

			exec_tile_work(f, &per);
			diag_error(d, n->loc, "the run would do %s flops, more than --max-work=%s; "
			    "kernel '@%s' alone does %s (a grid of %lldx%lldx%lld programs of %s "
			    "each%s)", flops_str(total, t1, sizeof t1), lb, f->name,
			    flops_str(big, t2, sizeof t2), (long long)f->grid[0],
			    (long long)f->grid[1], (long long)f->grid[2],
			    flops_str(per, t3, sizeof t3), again);
		} else {
			diag_error(d, n->loc, "the run would do %s flops, more than --max-work=%s; "
			    "'%%%s' (%s) alone does %s in the reference interpreter%s",
			    flops_str(total, t1, sizeof t1), lb, n->name, ir_ops[n->op].name,
			    flops_str(big, t2, sizeof t2), again);
		}
	}
	diag_note(d, LOC_NONE, "--max-work=N raises the limit (flops; k, M, G, T, P are "
	    "powers of 1000; 0: no limit)");
	return -1;
}
