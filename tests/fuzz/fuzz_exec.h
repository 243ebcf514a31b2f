/*
 * fuzz_exec.h: what the harnesses that run graphs share (fuzz_tile,
 * fuzz_roundtrip, fuzz_threads).
 *
 * Running a fuzzed graph needs its work bounded first: a written grid of a
 * billion programs, or a loop of 2^40 trips, is a valid program that would
 * only time out, so work is estimated from the IR and the input skipped
 * past a bound (tensor sizes are bounded by exec_check_limits).  Sources
 * get aicm-run's inputs (random by name, seed 0; a const its splat), so
 * two graphs that name their values alike get the same inputs.  Results
 * can be compared bit for bit: every computed tensor is allocated and
 * filled with a known byte before the run (the engines reuse a tensor of
 * the right type), so an element that no engine writes reads the same
 * in both runs when the fill is the same, and shows as the fill when it
 * differs.
 */
#ifndef AICM_FUZZ_EXEC_H
#define AICM_FUZZ_EXEC_H

#include <stdint.h>

#include "exec.h"
#include "fuzz.h"
#include "tile.h"
#include "tile_exec.h"

/* Bytes per tensor and in all, and element operations per run. */
enum { FUZZ_MAX_BYTES = 1 << 20, FUZZ_MAX_TOTAL = 1 << 24 };
static const double FUZZ_MAX_WORK = 1 << 21;

static inline bool
fuzz_has_tiled(const Graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].tile)
			return true;
	return false;
}

/* A compute op that lower-tiled would lower (aicm-run lowers it). */
static inline bool
fuzz_unlowered(const Graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].tile && ir_ops[g->nodes[i].op].cls != OC_SOURCE)
			return true;
	return false;
}

static inline bool
fuzz_untyped(const Graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].type.rank < 0)
			return true;
	return false;
}

/* Runs the pipeline text (which must parse) on g, verifying after each
 * pass, reports (--report) to report when not NULL: 0, or -1 after an
 * error.  A pass that fails without an error, or succeeds with one, or
 * leaves IR that does not verify, is a bug. */
static inline int
fuzz_run_pipeline(Graph *g, const char *text, FILE *report, bool json, Diag *d)
{
	Pipeline pl;
	int r = 0;

	if (pass_parse_pipeline(aicm_passes, text, &pl, stderr, "fuzz") != 0)
		fuzz_fail("the harness's own pipeline does not parse", text, NULL);
	for (int i = 0; i < pl.n && r == 0; i++) {
		const PassInst *pi = &pl.p[i];
		PassArgs a = {pi->pass->opts, pi->vals, report, json, NULL};
		int nerr = d->nerr;

		if ((r = pi->pass->run(g, &a, d)) != 0) {
			if (d->nerr == nerr)
				fuzz_fail("a pass failed without an error", pi->pass->name, text);
			r = -1;
			break;
		}
		if (d->nerr != nerr)
			fuzz_fail("a pass reported an error but succeeded", pi->pass->name, text);
		if (ir_verify(g, d) != 0)
			fuzz_fail("the IR does not verify after a pass", pi->pass->name,
			    ir_print_str(g, NULL));
	}
	pass_free_pipeline(&pl);
	return r;
}

/* Element operations the plan would do: programs x loop trips x tile
 * elements (times K for a dot), summed over the instructions.  In doubles
 * throughout: the bounds of a written loop may be anything (tile_trips
 * saturates), and so may their product. */
static inline double
fuzz_tile_work(const Graph *g)
{
	double w = 0;

	for (int i = 0; i < g->nnodes; i++) {
		const TileFn *f = g->nodes[i].tile;
		double mult[IR_MAX_NEST + 2], programs = 1;
		int end[IR_MAX_NEST + 2], depth = 0;

		if (!f)
			continue;
		for (int a = 0; a < 3; a++)
			programs *= f->grid[a] > 0 ? (double)f->grid[a] : 1;
		mult[0] = programs;
		for (int k = 0; k < f->ninsts; k++) {
			const TileInst *in = &f->insts[k];
			double elems = 1;

			while (depth > 0 && k > end[depth])
				depth--;
			if (in->res >= 0 && f->vals[in->res].rank > 0)
				for (int r = 0; r < f->vals[in->res].rank; r++)
					elems *= (double)f->vals[in->res].shape[r];
			if (in->op == TO_DOT && in->in[0] >= 0 && f->vals[in->in[0]].rank > 0)
				elems *= (double)f->vals[in->in[0]].shape[f->vals[in->in[0]].rank - 1];
			w += mult[depth] * elems;
			if (in->op == TO_FOR && depth < IR_MAX_NEST) {
				int64_t trips = tile_trips(in);

				mult[depth + 1] = mult[depth] * (trips > 0 ? (double)trips : 1);
				end[++depth] = in->end;
			}
		}
	}
	return w;
}

/* The reference interpreter's element operations on a typed graph: every
 * operand and result element once, times K for a matmul. */
static inline double
fuzz_graph_work(const Graph *g)
{
	double w = 0;

	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		double out = (double)ir_type_numel(&n->type);

		for (int j = 0; j < n->nin; j++)
			w += (double)ir_type_numel(&g->nodes[n->in[j]].type);
		if (n->op == OP_MATMUL && n->nin == 2) {
			const Type *a = &g->nodes[n->in[0]].type;

			out *= a->rank > 0 ? (double)a->dim[a->rank - 1] : 1;
		}
		w += out;
	}
	return w;
}

/* The sources as aicm-run fills them; every computed value allocated and
 * filled with the byte fill. */
static inline void
fuzz_fill(const Graph *g, Tensor *vals, unsigned char fill)
{
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (exec_tensor_alloc(&vals[i], &n->type, 0) != 0)
			abort();
		if (ir_ops[n->op].cls != OC_SOURCE || n->tile) {
			if (vals[i].data)
				memset(vals[i].data, fill, exec_tensor_bytes(&vals[i]));
		} else if (n->op == OP_CONST && (n->at.set & AB(VALUE))) {
			exec_fill_splat(&vals[i], n->at.value);
		} else {
			exec_fill_random(&vals[i], 0, n->name);
		}
	}
}

/* Whether the element at byte offset off of t is fill in every byte. */
static inline bool
fuzz_is_fill(const Tensor *t, size_t off, size_t es, unsigned char fill)
{
	for (size_t b = 0; b < es; b++)
		if (((const unsigned char *)t->data)[off + b] != fill)
			return false;
	return true;
}

/* Every value of a and b (graphs with the same nodes, run on the same
 * inputs) bit for bit, NaN payloads included: the same program on the
 * same engine has no freedom in any bit.  what names the two runs;
 * fa and fb are the fills the results started with. */
static inline void
fuzz_same_bits(const Graph *ga, const Tensor *a, unsigned char fa, const Graph *gb,
    const Tensor *b, unsigned char fb, const char *what)
{
	if (ga->nnodes != gb->nnodes)
		fuzz_fail("the two graphs have different node counts", what, NULL);
	for (int i = 0; i < ga->nnodes; i++) {
		const Tensor *x = &a[i], *y = &b[i];
		size_t n = exec_tensor_bytes(x), es = x->dt == DT_F32 ? 4 : 8;

		if (strcmp(ga->nodes[i].name, gb->nodes[i].name) != 0)
			fuzz_fail("the two graphs name their nodes differently", ga->nodes[i].name,
			    gb->nodes[i].name);
		if (!exec_tensor_has_type(y, &ga->nodes[i].type) || n != exec_tensor_bytes(y))
			fuzz_fail("a value has different types in the two runs", ga->nodes[i].name,
			    what);
		if (n == 0 || memcmp(x->data, y->data, n) == 0)
			continue;
		for (size_t off = 0; off < n; off += es) {
			uint64_t u = 0, v = 0;

			if (memcmp((const char *)x->data + off, (const char *)y->data + off, es) == 0)
				continue;
			memcpy(&u, (const char *)x->data + off, es);
			memcpy(&v, (const char *)y->data + off, es);
			fprintf(stderr, "fuzz: %%%s element %zu: %#llx against %#llx (%.17g, %.17g)%s\n",
			    ga->nodes[i].name, off / es, (unsigned long long)u,
			    (unsigned long long)v, exec_get(x, (int64_t)(off / es)),
			    exec_get(y, (int64_t)(off / es)),
			    fa != fb && fuzz_is_fill(x, off, es, fa) && fuzz_is_fill(y, off, es, fb) ?
			    "; neither run wrote it" : "");
			break;
		}
		fprintf(stderr, "fuzz: the runs: %s\n", what);
		fuzz_fail("two runs of the same program differ in a bit", ir_print_str(ga, NULL),
		    NULL);
	}
}

#endif
