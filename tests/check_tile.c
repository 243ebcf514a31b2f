/*
 * check_tile.c: the tile IR, lower-tiled and the tile executor.
 *
 * Round trips of written and lowered tiled graphs; the seed's property that
 * smaller blocks repeat more traffic (test_smaller_blocks_repeat_traffic);
 * the traffic rules' totals for each kernel kind; results equal to the
 * reference interpreter's, and bitwise the same on any number of threads.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "../passes/cost.h"
#include "../passes/passes.h"
#include "../passes/row_passes.h"
#include "scalar.h"
#include "exec.h"
#include "pass.h"
#include "tile.h"
#include "tile_exec.h"

/* Runs g (lowered) on random sources with the given threads; returns the
 * tensors (caller frees) and the total stats in *tot. */
static Tensor *
run_tiled(const Graph *g, int threads, KernelStats *tot)
{
	Tensor *vals = xcalloc((size_t)g->nnodes, sizeof *vals);
	Diag d;
	TilePlan *p;
	int nk;
	const KernelStats *ks;

	diag_init(&d, "t.aicm", "", 0, stderr);
	ck_fill_sources(g, vals, 7);
	for (int i = 0; i < g->nnodes; i++)     /* values= (a gather's indices) */
		if (g->nodes[i].op == OP_CONST && (g->nodes[i].at.set & AB(VALUES)))
			for (int64_t e = 0; e < vals[i].numel; e++)
				exec_seti(&vals[i], e, g->nodes[i].at.ivalues[e]);
	p = exec_tile_compile(g, &d);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(exec_tile_run(p, vals, threads, &d), 0);
	ks = exec_tile_stats(p, &nk);
	if (tot)
		*tot = exec_tile_total(ks, nk);
	exec_tile_free(p);
	diag_free(&d);
	return vals;
}

static Tensor *
run_ref(const Graph *g)
{
	Tensor *vals = xcalloc((size_t)g->nnodes, sizeof *vals);
	Diag d;

	diag_init(&d, "t.aicm", "", 0, stderr);
	ck_fill_sources(g, vals, 7);
	ck_assert_int_eq(exec_interp(g, vals, &d), 0);
	diag_free(&d);
	return vals;
}

/* Frees a run's tensors (run_tiled's, run_ref's) and the array. */
static void
free_run(Tensor *vals, const Graph *g)
{
	exec_tensors_free(vals, g->nnodes);
	free(vals);
}

/* g (lowered) against the reference interpreter on r (the same graph not
 * lowered): every output of a one-thread run within tol relative, then
 * the same bits on each count of threads (a list ending in 0).  Returns
 * the number of outputs, so a caller can check it compared what it
 * meant to. */
static int
check_tiled_any_threads(const Graph *g, const Graph *r, double tol, const int *threads)
{
	Tensor *ref = run_ref(r), *v1 = run_tiled(g, 1, NULL);
	int *outs = NULL, no = ir_outputs(g, &outs);

	ck_assert_int_gt(no, 0);
	for (int k = 0; k < no; k++) {
		int o = outs[k], ro = ir_lookup(r, g->nodes[o].name);
		ExecErr e;

		ck_assert_int_ge(ro, 0);
		e = exec_compare(&v1[o], &ref[ro]);
		ck_assert_msg(e.rel < tol, "%s: rel err %g", g->nodes[o].name, e.rel);
	}
	for (const int *th = threads; *th; th++) {
		Tensor *vt = run_tiled(g, *th, NULL);

		for (int k = 0; k < no; k++)
			ck_assert_msg(memcmp(vt[outs[k]].data, v1[outs[k]].data,
			    exec_tensor_bytes(&v1[outs[k]])) == 0, "%s: other bits on %d threads",
			    g->nodes[outs[k]].name, *th);
		free_run(vt, g);
	}
	free(outs);
	free_run(ref, r);
	free_run(v1, g);
	return no;
}

static char *
print_str(const Graph *g)
{
	return ir_print_str(g, NULL);
}

static const char *seed_mm =
    "graph {\n"
    "  %A = input() : (100, 60)\n"
    "  %B = input() : (60, 84)\n"
    "  %C = matmul(%A, %B)\n"
    "}\n";

static const char *kinds =
    "graph {\n"
    "  %x = input() : (33, 97)\n"
    "  %y = input() : (97,)\n"
    "  %W = const() : (97, 7)\n"
    "  kernel @k0 [elementwise] {\n"
    "    %a = add(%x, %y)\n"
    "    %e = exp(%a)\n"
    "  }\n"
    "  kernel @k1 [reduction] split=3 {\n"
    "    %t = tanh(%e)\n"
    "    %s = sum(%t)\n"
    "  }\n"
    "  %m0 = max(%e) axis=0 keepdims=True\n"
    "  kernel @k3 [row_reduction] {\n"
    "    %rm = max(%x) axis=1 keepdims=True\n"
    "    %sub = sub(%x, %rm)\n"
    "    %ex = exp(%sub)\n"
    "    %rs = sum(%ex) axis=1 keepdims=True\n"
    "    %sm = div(%ex, %rs)\n"
    "  }\n"
    "  %tr = transpose(%x)\n"
    "  %rsh = reshape(%x) shape=(97, 33)\n"
    "  kernel @k5 [matmul_epilogue] BM=16 BN=16 BK=16 {\n"
    "    %mm2 = matmul(%x, %W)\n"
    "    %colmax = max(%mm2) axis=0 keepdims=True\n"
    "  }\n"
    "  return %e, %s, %m0, %sm, %tr, %rsh, %colmax\n"
    "}\n";

START_TEST(test_tile_roundtrip_lowered)
{
	Graph *g = ck_pipeline(kinds, "shape-infer,lower-tiled");
	char *a, *b;
	Graph *h;

	ck_assert_ptr_nonnull(g);
	a = print_str(g);
	h = ck_parse(a, NULL);
	ck_assert_ptr_nonnull(h);
	b = print_str(h);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	ir_graph_free(g);
	ir_graph_free(h);
}
END_TEST

/* The seed's test_smaller_blocks_repeat_traffic: on the same matmul, each
 * halving of the blocks reads more (A once per column tile, B once per row
 * tile), writes the same, and computes the same result. */
START_TEST(test_tile_smaller_blocks_repeat_traffic)
{
	static const int blocks[] = {64, 32, 16, 8};
	int64_t prev = -1, wr = -1;
	Graph *r = ck_pipeline(seed_mm, "shape-infer");
	Tensor *ref;

	ck_assert_ptr_nonnull(r);
	ref = run_ref(r);
	for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
		char pipe[128];
		Graph *g;
		KernelStats t;
		Tensor *v;
		int64_t gm, gn, c;
		ExecErr e;

		snprintf(pipe, sizeof pipe, "shape-infer,lower-tiled{bm=%d,bn=%d,bk=%d}", blocks[i],
		    blocks[i], blocks[i]);
		g = ck_pipeline(seed_mm, pipe);
		ck_assert_ptr_nonnull(g);
		v = run_tiled(g, 1, &t);
		gm = (100 + blocks[i] - 1) / blocks[i];
		gn = (84 + blocks[i] - 1) / blocks[i];
		ck_assert_int_eq(t.bytes_read, (gn * 100 * 60 + gm * 60 * 84) * 8);
		ck_assert_int_eq(t.flops, 2 * 100 * 84 * 60);
		if (prev >= 0)
			ck_assert_int_gt(t.bytes_read, prev);
		if (wr >= 0)
			ck_assert_int_eq(t.bytes_written, wr);
		prev = t.bytes_read;
		wr = t.bytes_written;
		c = ir_lookup(g, "C");
		e = exec_compare(&v[c], &ref[ir_lookup(r, "C")]);
		ck_assert(e.rel < 1e-12);
		free_run(v, g);
		ir_graph_free(g);
	}
	ck_assert_int_eq(wr, 100 * 84 * 8);
	free_run(ref, r);
	ir_graph_free(r);
}
END_TEST

/* Every kind against the reference, and the same bits on 1, 2 and 5
 * threads (the split reduction and the column maxima combine atomically). */
START_TEST(test_tile_kinds_match_reference_any_threads)
{
	static const int threads[] = {2, 5, 0};
	Graph *g = ck_pipeline(kinds, "shape-infer,lower-tiled");
	Graph *r = ck_pipeline(kinds, "shape-infer");

	ck_assert_ptr_nonnull(g);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(check_tiled_any_threads(g, r, 1e-12, threads), 7);
	ir_graph_free(g);
	ir_graph_free(r);
}
END_TEST

/* Prepacked consts (tile_plan.c plan_prepack): a const matmul operand in
 * 16x16 tiles of a (48, 40) weight (ragged in N, so its last blocks hold
 * other=) is packed at the first run and kept: a second run on the same
 * data gives the same bits; rewritten in place, the stale packs are used
 * (the cache is real) until exec_tile_source_changed names the const,
 * and then the result is the reference's on the new weight; a weight at
 * a new address is packed again without being named.  The input is never
 * cached: a new x changes the result at once.  The same on 3 threads.
 * exec_tile_packs counts the packing: some at the first run, none at a
 * run on the same consts (nor on a new input), the weight's own again
 * when it is named or moves. */
START_TEST(test_tile_prepacked_const_refreshed)
{
	static const char *src =
	    "graph {\n"
	    "  %x = input() : (37, 48) f32\n"
	    "  %w = const() : (48, 40) f32\n"
	    "  %b = const() : (40,) f32\n"
	    "  %mm = matmul(%x, %w)\n"
	    "  %y = add(%mm, %b)\n"
	    "}\n";
	Graph *g = ck_pipeline(src, "shape-infer,fuse,lower-tiled{bm=16,bn=16,bk=16}");
	Graph *r = ck_pipeline(src, "shape-infer");
	int y = ir_lookup(g, "y"), w = ir_lookup(g, "w"), x = ir_lookup(g, "x");
	int ry = ir_lookup(r, "y"), rw = ir_lookup(r, "w"), rx = ir_lookup(r, "x");

	ck_assert_ptr_nonnull(g);
	ck_assert_ptr_nonnull(r);
	for (int th = 1; th <= 3; th += 2) {
		Tensor *v = xcalloc((size_t)g->nnodes, sizeof *v);
		Tensor *rv = xcalloc((size_t)r->nnodes, sizeof *rv);
		Tensor first = {0};
		Diag d;
		TilePlan *p;
		void *moved;
		int64_t packs, named;

		diag_init(&d, "t.aicm", "", 0, stderr);
		ck_fill_sources(g, v, 7);
		ck_fill_sources(r, rv, 7);
		p = exec_tile_compile(g, &d);
		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(exec_tile_packs(p), 0);
		ck_assert_int_eq(exec_tile_run(p, v, th, &d), 0);
		packs = exec_tile_packs(p);
		ck_assert_int_gt(packs, 0);
		ck_assert_int_eq(exec_interp(r, rv, &d), 0);
		ck_assert(exec_compare(&v[y], &rv[ry]).rel < 1e-5);
		ck_assert_int_eq(exec_tensor_alloc(&first, &g->nodes[y].type, 0), 0);
		memcpy(first.data, v[y].data, exec_tensor_bytes(&first));
		ck_assert_int_eq(exec_tile_run(p, v, th, &d), 0);
		ck_assert_int_eq(exec_tile_packs(p), packs);
		ck_assert(memcmp(first.data, v[y].data, exec_tensor_bytes(&first)) == 0);
		/* the weight rewritten in place, not named: the packs stand */
		for (int64_t e = 0; e < v[w].numel; e++) {
			exec_set(&v[w], e, exec_get(&v[w], e) * -2.0 + 0.25);
			exec_set(&rv[rw], e, exec_get(&v[w], e));
		}
		ck_assert_int_eq(exec_tile_run(p, v, th, &d), 0);
		ck_assert(memcmp(first.data, v[y].data, exec_tensor_bytes(&first)) == 0);
		/* named: packed again, the new weight's result */
		exec_tile_source_changed(p, w);
		ck_assert_int_eq(exec_tile_run(p, v, th, &d), 0);
		named = exec_tile_packs(p) - packs;
		ck_assert_int_gt(named, 0);
		ck_assert_int_eq(exec_interp(r, rv, &d), 0);
		ck_assert(memcmp(first.data, v[y].data, exec_tensor_bytes(&first)) != 0);
		ck_assert(exec_compare(&v[y], &rv[ry]).rel < 1e-5);
		/* a weight at a new address (another buffer, other values) */
		moved = xmalloc(exec_tensor_bytes(&v[w]));
		for (int64_t e = 0; e < v[w].numel; e++)
			((float *)moved)[e] = (float)(e % 7) * 0.125f - 0.375f;
		free(v[w].data);
		v[w].data = moved;
		for (int64_t e = 0; e < v[w].numel; e++)
			exec_set(&rv[rw], e, exec_get(&v[w], e));
		ck_assert_int_eq(exec_tile_run(p, v, th, &d), 0);
		ck_assert_int_eq(exec_tile_packs(p), packs + 2 * named);
		ck_assert_int_eq(exec_interp(r, rv, &d), 0);
		ck_assert(exec_compare(&v[y], &rv[ry]).rel < 1e-5);
		/* the input: never cached */
		for (int64_t e = 0; e < v[x].numel; e++) {
			exec_set(&v[x], e, (double)(e % 11) * 0.1 - 0.5);
			exec_set(&rv[rx], e, exec_get(&v[x], e));
		}
		ck_assert_int_eq(exec_tile_run(p, v, th, &d), 0);
		ck_assert_int_eq(exec_tile_packs(p), packs + 2 * named);
		ck_assert_int_eq(exec_interp(r, rv, &d), 0);
		ck_assert(exec_compare(&v[y], &rv[ry]).rel < 1e-5);
		exec_tensor_free(&first);
		exec_tile_free(p);
		free_run(v, g);
		free_run(rv, r);
		diag_free(&d);
	}
	ir_graph_free(g);
	ir_graph_free(r);
}
END_TEST

/* The packed consts within a room (exec_tile_compile_within, what
 * --max-total-bytes leaves): the weight's panels are packed with room for
 * them (exec_tile_prepacked says their bytes) and not with a byte less
 * (skipped says what was left), and the result is the same bits either
 * way; no room (-1) is the plan's own cap. */
START_TEST(test_tile_prepack_room)
{
	Graph *g = ck_pipeline("graph {\n  %x = input() : (37, 48) f32\n"
	    "  %w = const() : (48, 40) f32\n  %mm = matmul(%x, %w)\n}\n",
	    "shape-infer,fuse,lower-tiled{bm=16,bn=16,bk=16}");
	int mm = ir_lookup(g, "mm");
	Tensor *v = xcalloc((size_t)g->nnodes, sizeof *v);
	Tensor first = {0};
	Diag d;
	int64_t need = 0;

	ck_assert_ptr_nonnull(g);
	diag_init(&d, "t.aicm", "", 0, stderr);
	ck_fill_sources(g, v, 7);
	for (int q = 0; q < 4; q++) {
		int64_t room = q == 0 ? -1 : q == 1 ? need : q == 2 ? need - 1 : 0;
		TilePlan *p = exec_tile_compile_within(g, room, &d);
		TilePrepack pp;

		ck_assert_ptr_nonnull(p);
		pp = exec_tile_prepacked(p);
		if (q == 0)
			need = pp.bytes;
		ck_assert_int_gt(need, 0);
		ck_assert_int_eq(pp.room, room);
		ck_assert_int_eq(pp.bytes, q < 2 ? need : 0);
		ck_assert_int_eq(pp.skipped, q < 2 ? 0 : need);
		ck_assert_int_eq(exec_tile_run(p, v, 2, &d), 0);
		ck_assert_int_eq(exec_tile_packs(p), q < 2 ? 1 : 0);
		if (q == 0) {
			ck_assert_int_eq(exec_tensor_alloc(&first, &g->nodes[mm].type, 0), 0);
			memcpy(first.data, v[mm].data, exec_tensor_bytes(&first));
		} else {
			ck_assert(memcmp(first.data, v[mm].data, exec_tensor_bytes(&first)) == 0);
		}
		exec_tile_free(p);
	}
	exec_tensor_free(&first);
	free_run(v, g);
	diag_free(&d);
	ir_graph_free(g);
}
END_TEST

/* A matmul epilogue (bias, relu, a residual) done as a row run whose
 * last op writes its rows straight into the result (tile_ops.c run_rows,
 * run_direct): M = 40 in row tiles of 16 leaves a ragged last tile, which
 * takes the copying path, so both paths are in one run.  f32 and f64,
 * against the reference, and the same bits on 1 and 3 threads.  The
 * second graph (f64) returns the epilogue's result and reads it again in
 * the next kernel, from the tensor the direct rows were written to. */
START_TEST(test_tile_row_run_direct_store)
{
	static const char *srcs[] = {
	    "graph {\n"
	    "  %x = input() : (40, 48) f32\n"
	    "  %w = const() : (48, 64) f32\n"
	    "  %b = const() : (64,) f32\n"
	    "  %res = input() : (40, 64) f32\n"
	    "  %mm = matmul(%x, %w)\n"
	    "  %a = add(%mm, %b)\n"
	    "  %r = relu(%a)\n"
	    "  %y = add(%r, %res)\n"
	    "}\n",
	    "graph {\n"
	    "  %x = input() : (40, 48)\n"
	    "  %w = const() : (48, 64)\n"
	    "  %b = const() : (64,)\n"
	    "  %mm = matmul(%x, %w)\n"
	    "  %a = add(%mm, %b)\n"
	    "  %r = relu(%a)\n"
	    "  %y = mul(%r, %r)\n"
	    "  %z = add(%y, %r)\n"
	    "  return %r, %z\n"
	    "}\n",
	};

	for (size_t s = 0; s < sizeof srcs / sizeof srcs[0]; s++) {
		static const int threads[] = {3, 0};
		Graph *g = ck_pipeline(srcs[s], "shape-infer,fuse,lower-tiled{bm=16,bn=32,bk=16}");
		Graph *r = ck_pipeline(srcs[s], "shape-infer");

		ck_assert_ptr_nonnull(g);
		ck_assert_ptr_nonnull(r);
		ck_assert_int_eq(check_tiled_any_threads(g, r, s == 0 ? 1e-5 : 1e-12, threads),
		    s == 0 ? 1 : 2);
		ir_graph_free(g);
		ir_graph_free(r);
	}
}
END_TEST

/* conv_epilogue: a ragged filter block (F = 37, BN = 8 or 32) that passes
 * its image's end, a bias (F, 1, 1) and a residual, against the
 * reference, and the same bits on 1, 2 and 5 threads (each program stores
 * only its own image's rows, so the programs' order cannot matter). */
START_TEST(test_tile_conv_epilogue_any_threads)
{
	static const char *const src =
	    "graph {\n  %x = input() : (3, 5, 9, 8) f32\n  %w = const() : (37, 5, 3, 3) f32\n"
	    "  %b = const() : (37, 1, 1) f32\n  %r = input() : (3, 37, 9, 8) f32\n"
	    "  %y = conv2d(%x, %w) pads=(1, 1, 1, 1)\n  %z = add(%y, %b)\n  %s = add(%z, %r)\n"
	    "  %o = relu(%s)\n}\n";
	static const char *const pipes[] = {"shape-infer,fuse,lower-tiled{bm=16,bn=8,bk=8}",
	    "shape-infer,fuse,lower-tiled{bm=32,bn=32,bk=16}"};
	static const int threads[] = {2, 5, 0};
	Graph *r = ck_pipeline(src, "shape-infer");

	ck_assert_ptr_nonnull(r);
	for (size_t pi = 0; pi < sizeof pipes / sizeof pipes[0]; pi++) {
		Graph *g = ck_pipeline(src, pipes[pi]);

		ck_assert_ptr_nonnull(g);
		ck_assert_int_eq(g->nodes[ir_lookup(g, "o")].tile->kind, KK_CONV_EPILOGUE);
		ck_assert_int_eq(check_tiled_any_threads(g, r, 1e-5, threads), 1);
		ir_graph_free(g);
	}
	ir_graph_free(r);
}
END_TEST

/* The traffic rules' totals (docs/tiled.md), kind by kind. */
START_TEST(test_tile_traffic_rules)
{
	static const struct {
		const char *src, *pipe;
		int64_t rd, wr;
	} c[] = {
		/* elementwise: bias (97,) once per row tile (2 of them) */
		{"graph {\n  %x = input() : (33, 97)\n  %b = input() : (97,)\n"
		 "  %y = add(%x, %b)\n}\n", "shape-infer,lower-tiled",
		 (33 * 97 + 2 * 97) * 8, 33 * 97 * 8},
		/* reduction over axis 0: input once, output once */
		{"graph {\n  %x = input() : (33, 97)\n  %s = sum(%x) axis=0\n}\n",
		 "shape-infer,lower-tiled", 33 * 97 * 8, 97 * 8},
		/* split full reduction: init + 4 atomics (a load and a store each) */
		{"graph {\n  %x = input() : (33, 97)\n  kernel @k [reduction] split=4 {\n"
		 "    %s = max(%x)\n  }\n}\n", "shape-infer,lower-tiled",
		 (33 * 97 + 4) * 8, (1 + 4) * 8},
		/* matmul epilogue reducing over 3 column tiles: 3*M atomics */
		{"graph {\n  %x = input() : (40, 20)\n  %w = input() : (20, 70)\n"
		 "  kernel @k [matmul_epilogue] {\n    %m = matmul(%x, %w)\n"
		 "    %s = sum(%m) axis=1\n  }\n}\n", "shape-infer,lower-tiled",
		 (3 * 40 * 20 + 2 * 20 * 70 + 3 * 40) * 8, (40 + 3 * 40) * 8},
		/* transpose: input once, output once */
		{"graph {\n  %x = input() : (33, 97)\n  %t = transpose(%x)\n}\n",
		 "shape-infer,lower-tiled", 33 * 97 * 8, 33 * 97 * 8},
	};

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		Graph *g = ck_pipeline(c[i].src, c[i].pipe);
		KernelStats t;
		Tensor *v;

		ck_assert_ptr_nonnull(g);
		v = run_tiled(g, 1, &t);
		ck_assert_msg(t.bytes_read == c[i].rd, "case %zu: read %lld, want %lld", i,
		    (long long)t.bytes_read, (long long)c[i].rd);
		ck_assert_msg(t.bytes_written == c[i].wr, "case %zu: written %lld, want %lld", i,
		    (long long)t.bytes_written, (long long)c[i].wr);
		free_run(v, g);
		ir_graph_free(g);
	}
}
END_TEST


/* autotune's cost model and the executor count the same bytes (the traffic
 * contract): every kernel and every lone op of these graphs, with the
 * blocks lower-tiled would use, before and after fuse. */
static const char *const xgraphs[] = {
	"graph {\n  %x = input() : (33, 97)\n  %b = input() : (97,)\n  %c = input() : (33, 1)\n"
	"  %y = add(%x, %b)\n  %z = mul(%y, %c)\n  %e = exp(%z)\n  %s = sum(%e) axis=1\n"
	"  %t = max(%e) axis=0 keepdims=True\n  %m = mean(%e)\n  return %s, %t, %m\n}\n",
	"graph {\n  %x = input() : (3, 33, 7)\n  %w = input() : (3, 7, 40)\n  %v = input() : (40,)\n"
	"  %mm = matmul(%x, %w)\n  %y = add(%mm, %v)\n  %r = relu(%y)\n  %s = sum(%r) axis=1\n"
	"  %u = transpose(%r) perm=(2, 0, 1)\n  return %s, %u\n}\n",
	"graph {\n  %x = input() : (64, 48)\n  %W = const() : (48, 70)\n  %bias = const() : (70,)\n"
	"  %mm = matmul(%x, %W)\n  %a = add(%mm, %bias)\n  %r = relu(%a)\n"
	"  %s = sum(%r) axis=1 keepdims=True\n}\n",
	"graph {\n  %x = input() : (5, 7, 33)\n  %y = input() : (7, 1)\n  %a = sub(%x, %y)\n"
	"  %b = tanh(%a)\n  %s = max(%b) axis=0\n  %q = reshape(%s) shape=(33, 7)\n"
	"  %m = sum(%b)\n  return %q, %m\n}\n",
	/* kernels that mix element types: each operand's bytes are its own
	 * type's (a bool is one byte, an f32 operand of an f64 kernel four) */
	"graph {\n  %x = input() : (33, 97) f32\n  %y = input() : (97,) f32\n"
	"  %l = less(%x, %y)\n  %w = where(%l, %x, %y)\n  %c = cast(%w) to=f64\n"
	"  %r = round(%c)\n  %s = max(%x) axis=1 keepdims=True\n  %g = greater_equal(%x, %s)\n"
	"  %n = not(%g)\n  %k = cast(%n) to=f32\n  return %l, %r, %k\n}\n",
	/* conv2d's implicit GEMM (grouped, ragged, with bias; then depthwise,
	 * strided and dilated) and the pools' windowed reductions: the reads
	 * are the taps inside the input */
	"graph {\n  %x = input() : (2, 6, 11, 9) f32\n  %w = input() : (10, 3, 3, 3) f32\n"
	"  %b = input() : (10,) f32\n  %d = input() : (6, 1, 3, 2) f32\n"
	"  %y = conv2d(%x, %w, %b) pads=(1, 2, 0, 1) groups=2\n"
	"  %z = conv2d(%x, %d) strides=(2, 1) pads=(2, 1, 2, 1) dilations=(2, 3) groups=6\n"
	"  %p = max_pool2d(%y) kernel=(3, 2) strides=(2, 2) pads=(1, 1, 1, 0) ceil_mode=True\n"
	"  %q = avg_pool2d(%z) kernel=(2, 2) pads=(1, 1, 1, 1) dilations=(2, 1)\n"
	"  %r = avg_pool2d(%y) kernel=(3, 3) strides=(2, 2) pads=(1, 1, 1, 1) ceil_mode=True "
	"count_include_pad=True\n  return %p, %q, %r\n}\n",
	/* conv_epilogue (after fuse): a bias of shape (F, 1, 1), a residual
	 * of the output's shape, relu; ragged filter and pixel blocks and two
	 * images, so that a filter block passes its image's end; then a
	 * grouped, strided one whose epilogue reads a (1, F, 1, 1) scale, a
	 * per-image (N, 1, 1, 1) shift, a (OH, OW) map and a scalar; f64 */
	"graph {\n  %x = input() : (2, 6, 11, 9) f32\n  %w = input() : (37, 6, 3, 3) f32\n"
	"  %b = input() : (37, 1, 1) f32\n  %r = input() : (2, 37, 11, 9) f32\n"
	"  %y = conv2d(%x, %w) pads=(1, 1, 1, 1)\n  %z = add(%y, %b)\n  %s = add(%z, %r)\n"
	"  %o = relu(%s)\n  return %o\n}\n",
	"graph {\n  %x = input() : (3, 4, 13, 10)\n  %w = input() : (6, 2, 3, 2)\n"
	"  %c = input() : (1, 6, 1, 1)\n  %h = input() : (3, 1, 1, 1)\n  %m = input() : (6, 5)\n"
	"  %k = const() : () values=(0.5,)\n"
	"  %y = conv2d(%x, %w) strides=(2, 2) pads=(0, 1, 1, 0) dilations=(1, 2) groups=2\n"
	"  %a = mul(%y, %c)\n  %b = sub(%a, %h)\n  %d = add(%b, %m)\n  %e = mul(%d, %k)\n"
	"  %o = sigmoid(%e)\n  return %o\n}\n",
	/* min and prod, and reductions over several axes */
	"graph {\n  %x = input() : (3, 40, 5, 7)\n  %y = input() : (5, 1)\n  %a = add(%x, %y)\n"
	"  %s = sum(%a) axis=(0, 2)\n  %p = prod(%x) axis=(3, 1) keepdims=True\n"
	"  %n = min(%a) axis=1\n  %e = mean(%x) axis=(0, 1, 3)\n"
	"  %m = max(%x) axis=(1, 2) keepdims=True\n  %q = min(%x)\n  %r = prod(%a) axis=-1\n"
	"  return %s, %p, %n, %e, %m, %q, %r\n}\n",
	/* row_reductions: a LayerNorm whose row fits in one tile, and written
	 * kernels with BN below their rows, which loop over each row once per
	 * reduction (an operand read by k passes is read k times) */
	"graph {\n  %x = input() : (33, 97)\n  %g = input() : (97,)\n  %b = input() : (97,)\n"
	"  %eps = const() : () value=0.00001\n  %mu = mean(%x) axis=-1 keepdims=True\n"
	"  %d = sub(%x, %mu)\n  %sq = mul(%d, %d)\n  %var = mean(%sq) axis=-1 keepdims=True\n"
	"  %ve = add(%var, %eps)\n  %sd = sqrt(%ve)\n  %n = div(%d, %sd)\n  %s = mul(%n, %g)\n"
	"  %y = add(%s, %b)\n}\n",
	"graph {\n  %x = input() : (33, 97)\n  %g = input() : (97,)\n  %b = input() : (97,)\n"
	"  %eps = const() : () value=0.00001\n  %h = input() : (3, 5, 40) f32\n"
	"  kernel @ln [row_reduction] BM=16 BN=32 {\n  %mu = mean(%x) axis=-1 keepdims=True\n"
	"  %d = sub(%x, %mu)\n  %sq = mul(%d, %d)\n  %var = mean(%sq) axis=-1 keepdims=True\n"
	"  %ve = add(%var, %eps)\n  %sd = sqrt(%ve)\n  %n = div(%d, %sd)\n  %s = mul(%n, %g)\n"
	"  %y = add(%s, %b)\n  }\n"
	"  kernel @lsm [row_reduction] BM=2 BN=16 {\n  %m = max(%h) axis=-1 keepdims=True\n"
	"  %e = sub(%h, %m)\n  %x2 = exp(%e)\n  %se = sum(%x2) axis=-1 keepdims=True\n"
	"  %l = log(%se)\n  %o = sub(%e, %l)\n  %r = mean(%o) axis=-1\n  }\n"
	"  return %y, %r\n}\n",
	/* numpy's matmul: batch dims that broadcast, 1-D operands */
	"graph {\n  %x = input() : (2, 1, 33, 7)\n  %w = input() : (3, 7, 40)\n"
	"  %v = input() : (7,)\n  %u = input() : (40,)\n  %mm = matmul(%x, %w)\n"
	"  %y = relu(%mm)\n  %s = sum(%y) axis=(0, 2)\n  %a = matmul(%v, %w)\n"
	"  %b = matmul(%x, %v)\n  %c = matmul(%y, %u)\n  %d = matmul(%u, %u)\n"
	"  return %s, %a, %b, %c, %d\n}\n",
	/* the copy programs: ragged tiles, crops, concat of one value twice,
	 * gathers by a 2-d and a 0-d index, an expand along two dims */
	"graph {\n  %x = input() : (5, 37)\n  %y = input() : (5, 3)\n  %z = input() : (3, 1, 40)\n"
	"  %i = const() : (2, 3) i64 values=(0, -1, 4, 2, 3, 1)\n  %k = const() : () i32 values=(-2,)\n"
	"  %c = concat(%x, %y, %x) axis=1\n  %p = pad(%x) pads=(2, -1, 1, 30)\n"
	"  %q = pad(%z) pads=(0, 0, -3, 1, 2, -1)\n"
	"  %s = slice(%x) starts=(-1, 36) ends=(-100, 0) steps=(-2, -5)\n"
	"  %g = gather(%x, %i) axis=0\n  %h = gather(%z, %k) axis=-1\n"
	"  %e = expand(%z) shape=(2, 1, 33, 1)\n  return %c, %p, %q, %s, %g, %h, %e\n}\n",
	/* the copy programs at ranks 5 to 8: leading dims walked one index at
	 * a time, a pad and a crop on them (a program wholly in the pad reads
	 * nothing), a concat and a backwards slice along one, a gather by a
	 * rank-5 index whose result has rank 6, and one of rank 8, an expand
	 * from rank 3 to rank 8 (bool: one byte an element) */
	"graph {\n  %x = input() : (2, 3, 1, 5, 37)\n  %y = input() : (2, 1, 1, 5, 37)\n"
	"  %v = input() : (3, 2, 1, 2, 2, 1, 3, 33) f32\n  %u = input() : (2, 1, 7) bool\n"
	"  %a = input() : (4, 37)\n"
	"  %i = const() : (2, 1, 1, 2, 3) i64 values=(0, -1, 3, 2, -4, 1, 1, 1, 0, 0, 2, -2)\n"
	"  %j = const() : (2,) i32 values=(1, -3)\n"
	"  %p = pad(%x) pads=(1, -1, 0, 2, 3, 0, 2, 1, 0, -2)\n"
	"  %c = concat(%x, %y, %x) axis=1\n"
	"  %s = slice(%v) starts=(-1, 5, 0) ends=(-100, 0, 40) axes=(0, 6, 7) steps=(-2, -1, 3)\n"
	"  %g = gather(%a, %i) axis=0\n  %h = gather(%v, %j) axis=0\n"
	"  %e = expand(%u) shape=(2, 3, 1, 2, 1, 2, 5, 1)\n"
	"  return %p, %c, %s, %g, %h, %e\n}\n",
	/* attention (fuse's attention kind, lower_attention.c): ragged blocks,
	 * a transposed K absorbed, scores scaled; batched with Kᵀ given, Q
	 * divided and an additive mask broadcast over heads and rows; a
	 * where-mask of bool (one byte) made by a compare in the graph */
	"graph {\n  %q = input() : (37, 24) f32\n  %k = input() : (45, 24) f32\n"
	"  %v = input() : (45, 20) f32\n  %c = const() : () f32 value=0.25\n"
	"  %kt = transpose(%k)\n  %s = matmul(%q, %kt)\n  %t = mul(%s, %c)\n"
	"  %m = max(%t) axis=-1 keepdims=True\n  %d = sub(%t, %m)\n  %e = exp(%d)\n"
	"  %z = sum(%e) axis=-1 keepdims=True\n  %p = div(%e, %z)\n  %o = matmul(%p, %v)\n}\n",
	"graph {\n  %q = input() : (2, 3, 37, 16)\n  %kt = input() : (2, 3, 16, 45)\n"
	"  %v = input() : (2, 3, 45, 8)\n  %pad = input() : (2, 1, 1, 45)\n"
	"  %c = const() : () value=4\n  %qs = div(%q, %c)\n  %s = matmul(%qs, %kt)\n"
	"  %t = add(%pad, %s)\n  %m = max(%t) axis=3 keepdims=True\n  %d = sub(%t, %m)\n"
	"  %e = exp(%d)\n  %z = sum(%e) axis=3 keepdims=True\n  %p = div(%e, %z)\n"
	"  %o = matmul(%p, %v)\n}\n",
	"graph {\n  %q = input() : (2, 40, 16) f32\n  %k = input() : (2, 33, 16) f32\n"
	"  %v = input() : (2, 33, 8) f32\n  %a = input() : (40, 1) f32\n  %b = input() : (33,) f32\n"
	"  %f = const() : () f32 value=-1e9\n  %c = less(%a, %b)\n"
	"  %kt = transpose(%k) perm=(0, 2, 1)\n  %s = matmul(%q, %kt)\n  %t = where(%c, %f, %s)\n"
	"  %m = max(%t) axis=-1 keepdims=True\n  %d = sub(%t, %m)\n  %e = exp(%d)\n"
	"  %z = sum(%e) axis=-1 keepdims=True\n  %p = div(%e, %z)\n  %o = matmul(%p, %v)\n}\n",
	/* attention over views (the heads' split of a transformer layer):
	 * Q, Kᵀ (transpose perm=(1, 2, 0) of (N, h, d)) and V sliced,
	 * reshaped and transposed from one qkv tensor, an additive mask
	 * expanded over heads and rows (stride 0: one element a tile); then a
	 * strided slice for Q, an absorbed transpose of a reshaped K and an
	 * expanded V; ragged, f32 */
	"graph {\n  %x = input() : (37, 1, 96) f32\n  %mk = input() : (1, 37) f32\n"
	"  %c = const() : () f32 value=0.25\n  %qs = slice(%x) starts=(0,) ends=(32,) axes=(2,)\n"
	"  %ks = slice(%x) starts=(32,) ends=(64,) axes=(2,)\n"
	"  %vs = slice(%x) starts=(64,) ends=(96,) axes=(2,)\n  %qr = reshape(%qs) shape=(37, 2, 16)\n"
	"  %kr = reshape(%ks) shape=(37, 2, 16)\n  %vr = reshape(%vs) shape=(37, 2, 16)\n"
	"  %q = transpose(%qr) perm=(1, 0, 2)\n  %kt = transpose(%kr) perm=(1, 2, 0)\n"
	"  %v = transpose(%vr) perm=(1, 0, 2)\n  %me = expand(%mk) shape=(2, 37, 37)\n"
	"  %s = matmul(%q, %kt)\n  %t = mul(%s, %c)\n  %u = add(%t, %me)\n"
	"  %m = max(%u) axis=-1 keepdims=True\n  %d = sub(%u, %m)\n  %e = exp(%d)\n"
	"  %z = sum(%e) axis=-1 keepdims=True\n  %p = div(%e, %z)\n  %o = matmul(%p, %v)\n}\n",
	"graph {\n  %qi = input() : (2, 80, 16) f32\n  %ki = input() : (2, 720) f32\n"
	"  %vi = input() : (1, 45, 8) f32\n  %pad = input() : (2, 1, 45) f32\n"
	"  %q = slice(%qi) starts=(0,) ends=(80,) axes=(1,) steps=(2,)\n"
	"  %kr = reshape(%ki) shape=(2, 45, 16)\n  %kt = transpose(%kr) perm=(0, 2, 1)\n"
	"  %v = expand(%vi) shape=(2, 45, 8)\n  %s = matmul(%q, %kt)\n  %t = add(%s, %pad)\n"
	"  %m = max(%t) axis=-1 keepdims=True\n  %d = sub(%t, %m)\n  %e = exp(%d)\n"
	"  %z = sum(%e) axis=-1 keepdims=True\n  %p = div(%e, %z)\n  %o = matmul(%p, %v)\n}\n",
	/* argmax and argmin: f32 and i32 read in their own sizes, the i64
	 * indices written in theirs; ragged rows, each axis, rank 5 */
	"graph {\n  %x = input() : (33, 97) f32\n  %y = input() : (3, 40, 7) i32\n"
	"  %z = input() : (2, 3, 1, 5, 37)\n  %a = argmax(%x) axis=1\n"
	"  %b = argmin(%x) axis=0 keepdims=True last=True\n  %c = argmax(%y) axis=1 last=True\n"
	"  %d = argmin(%y) axis=-1 keepdims=True\n  %e = argmax(%y)\n  %f = argmin(%z) axis=3\n"
	"  %h = argmax(%z) axis=4 keepdims=True\n  return %a, %b, %c, %d, %e, %f, %h\n}\n",
	/* views (layout ops folded into their consumers' loads): a transposed
	 * weight and a transposed input into matmuls, a chain (slice, reshape,
	 * transpose) into a batched matmul, a reshape into an elementwise op,
	 * an expand into an add and into a sum over its stretched dim (read
	 * once per tile), a slice into a reduction, an expand of a matmul's
	 * batch; ragged everywhere, f32 */
	"graph {\n  %x = input() : (33, 20) f32\n  %W = input() : (37, 20) f32\n"
	"  %b = input() : (37,) f32\n  %a = input() : (20, 33) f32\n"
	"  %wt = transpose(%W)\n  %mm = matmul(%x, %wt)\n  %y = add(%mm, %b)\n"
	"  %at = transpose(%a)\n  %m2 = matmul(%at, %wt)\n"
	"  %z = input() : (9, 1, 60) f32\n  %zs = slice(%z) starts=(20,) ends=(60,) axes=(2,)\n"
	"  %zr = reshape(%zs) shape=(9, 4, 10)\n  %zt = transpose(%zr) perm=(1, 2, 0)\n"
	"  %q = input() : (4, 7, 10) f32\n  %m3 = matmul(%q, %zt)\n"
	"  %r = reshape(%x) shape=(3, 11, 20)\n  %e = exp(%r)\n"
	"  %c = input() : (33, 1) f32\n  %ce = expand(%c) shape=(33, 20)\n"
	"  %s1 = add(%x, %ce)\n  %s2 = sum(%ce) axis=1\n"
	"  %xs = slice(%x) starts=(3, 2) ends=(30, 19)\n  %s3 = max(%xs) axis=0\n"
	"  %v = input() : (7, 20) f32\n  %ve = expand(%v) shape=(3, 7, 20)\n"
	"  %m4 = matmul(%ve, %wt)\n"
	"  %c3 = input() : (33, 1, 1) f32\n  %e3 = expand(%c3) shape=(33, 5, 70)\n"
	"  %s5 = sum(%e3) axis=(1, 2)\n  %e4 = expand(%c3) shape=(33, 5, 70)\n"
	"  %s6 = max(%e4)\n  %e5 = expand(%c3) shape=(33, 70, 5)\n  %s7 = sum(%e5) axis=1\n"
	"  %e6 = expand(%c) shape=(33, 70)\n  %s8 = sum(%e6) axis=-1 keepdims=True\n"
	"  %d8 = div(%e6, %s8)\n"
	"  return %y, %m2, %m3, %e, %s1, %s2, %s3, %m4, %s5, %s6, %s7, %d8\n}\n",
};

START_TEST(test_tile_cost_model_agrees)
{
	static const char *const pipes[] = {"shape-infer", "shape-infer,fuse",
	    "shape-infer,fuse{row-fusion=true}"};

	for (size_t gi = 0; gi < sizeof xgraphs / sizeof xgraphs[0]; gi++)
		for (size_t pi = 0; pi < sizeof pipes / sizeof pipes[0]; pi++) {
			Graph *g = ck_pipeline(xgraphs[gi], pipes[pi]);
			Graph *t;
			char pipe[64];
			KernelStats tot;
			Tensor *v;
			int64_t want_rd = 0, want_wr = 0;

			ck_assert_ptr_nonnull(g);
			for (int i = 0; i < g->nnodes; i++) {
				const Node *n = &g->nodes[i];
				TileConfig c = {32, 32, 32, 4, 3, 0};
				Traffic tr;

				if (ir_ops[n->op].cls == OC_SOURCE)
					continue;
				if (n->kernel >= 0) {
					const Kernel *k = &g->kernels[n->kernel];

					if (i != k->last)
						continue;
					if (k->kset & (1u << KA_BM))
						c.bm = (int)k->kattr[KA_BM];
					if (k->kset & (1u << KA_BN))
						c.bn = (int)k->kattr[KA_BN];
					else if (k->kind == KK_ROW_REDUCTION)
						c.bn = ROW_TILE_MAX;   /* lower-tiled's row-max */
					if (k->kset & (1u << KA_BK))
						c.bk = (int)k->kattr[KA_BK];
					cost_traffic(g, n->kernel, &c, &tr);
				} else {
					cost_traffic_node(g, i, &c, &tr);
				}
				ck_assert(tr.ok);
				want_rd += tr.loaded;
				want_wr += tr.stored;
			}
			snprintf(pipe, sizeof pipe, "%s,lower-tiled", pipes[pi]);
			t = ck_pipeline(xgraphs[gi], pipe);
			ck_assert_ptr_nonnull(t);
			v = run_tiled(t, 1, &tot);
			ck_assert_msg(tot.bytes_read == want_rd && tot.bytes_written == want_wr,
			    "graph %zu, %s: executor read %lld written %lld, cost model %lld %lld", gi,
			    pipes[pi], (long long)tot.bytes_read, (long long)tot.bytes_written,
			    (long long)want_rd, (long long)want_wr);
			free_run(v, t);
			ir_graph_free(t);
			ir_graph_free(g);
		}
}
END_TEST

START_TEST(test_tile_verify_unmasked_load)
{
	char *msgs = NULL;
	Graph *g = ck_parse(
	    "graph {\n"
	    "  %x = input() : (40, 32)\n"
	    "  %y = tiled @k [elementwise] (%x) : (40, 32) grid=(3, 1) BM=16 BN=32 {\n"
	    "    %m = program_id() axis=0\n"
	    "    %t = load %x[%m * 16, 0] : [16, 32]\n"
	    "    store %y[%m * 16, 0], %t masked\n"
	    "  }\n"
	    "}\n", &msgs);

	ck_assert_ptr_null(g);
	ck_assert_ptr_nonnull(strstr(msgs, "t.aicm:5:10: error: 'load' of '%x' reaches element 47 "
	    "of dimension 0 (size 40) without a mask"));
	free(msgs);
}
END_TEST

/* The copy programs copy an i64 past 2^53 bit for bit (no round trip
 * through double), and a bool as a bool; pad's value= fills exactly as
 * the reference stores it: an i64 past 2^53 and INT64_MIN, an i32's low
 * bits, a float saturated into an i32, an integer rounded once to an f32
 * (2^60 + 2^36 + 1 is 2^60 + 2^37; through a double it would be 2^60),
 * even when the tile IR is printed and parsed again. */
START_TEST(test_tile_copy_exact_integers)
{
	const char *src = "graph {\n"
	    "  %n = const() : (4,) i64 values=(1, -2, 9007199254740993, 4)\n"
	    "  %i = const() : (3,) i64 values=(2, -2, 0)\n"
	    "  %b = const() : (2,) bool values=(True, False)\n"
	    "  %m = const() : (1,) i32 values=(5,)\n  %f = const() : (1,) f32 values=(0.5,)\n"
	    "  %p = pad(%n) pads=(1, 2) value=-7\n"
	    "  %s = slice(%n) starts=(-2,) ends=(-100,) steps=(-1,)\n"
	    "  %g = gather(%n, %i)\n  %c = concat(%n, %n) axis=0\n"
	    "  %e = expand(%b) shape=(3, 2)\n"
	    "  %q = pad(%n) pads=(1, 1) value=9007199254740993\n"
	    "  %r = pad(%n) pads=(0, 1) value=-9223372036854775808\n"
	    "  %w = pad(%m) pads=(1, 1) value=4294967297\n  %x = pad(%m) pads=(0, 1) value=-1e10\n"
	    "  %y = pad(%f) pads=(0, 1) value=1152921573326323713\n"
	    "  return %p, %s, %g, %c, %e, %q, %r, %w, %x, %y\n}\n";
	Graph *t = ck_pipeline(src, "shape-infer,lower-tiled");
	Tensor *v;
	int p, s, gi, c, e;

	ck_assert_ptr_nonnull(t);
	for (int round = 0; round < 2; round++) {
		v = run_tiled(t, 1, NULL);
		ck_assert_int_eq(exec_geti(&v[ir_lookup(t, "q")], 0), 9007199254740993LL);
		ck_assert_int_eq(exec_geti(&v[ir_lookup(t, "q")], 5), 9007199254740993LL);
		ck_assert_int_eq(exec_geti(&v[ir_lookup(t, "r")], 4), INT64_MIN);
		ck_assert_int_eq(exec_geti(&v[ir_lookup(t, "w")], 0), 1);
		ck_assert_int_eq(exec_geti(&v[ir_lookup(t, "w")], 1), 5);
		ck_assert_int_eq(exec_geti(&v[ir_lookup(t, "x")], 1), INT32_MIN);
		ck_assert(exec_get(&v[ir_lookup(t, "y")], 1) == 0x1p60 + 0x1p37);
		free_run(v, t);
		if (round == 0) {          /* the tile IR printed and parsed back */
			char *text = ir_print_str(t, NULL), *msgs = NULL;

			ir_graph_free(t);
			t = ck_parse(text, &msgs);
			free(text);
			ck_assert_msg(t != NULL, "%s", msgs ? msgs : "");
			free(msgs);
		}
	}
	v = run_tiled(t, 1, NULL);
	p = ir_lookup(t, "p"), s = ir_lookup(t, "s"), gi = ir_lookup(t, "g");
	c = ir_lookup(t, "c"), e = ir_lookup(t, "e");
	ck_assert_int_eq(exec_geti(&v[p], 0), -7);
	ck_assert_int_eq(exec_geti(&v[p], 3), 9007199254740993LL);
	ck_assert_int_eq(exec_geti(&v[p], 6), -7);
	ck_assert_int_eq(exec_geti(&v[s], 0), 9007199254740993LL);
	ck_assert_int_eq(exec_geti(&v[s], 2), 1);
	ck_assert_int_eq(exec_geti(&v[gi], 0), 9007199254740993LL);
	ck_assert_int_eq(exec_geti(&v[gi], 1), 9007199254740993LL);
	ck_assert_int_eq(exec_geti(&v[c], 6), 9007199254740993LL);
	ck_assert_int_eq(exec_geti(&v[e], 4), 1);
	ck_assert_int_eq(exec_geti(&v[e], 5), 0);
	free_run(v, t);
	ir_graph_free(t);
}
END_TEST

/* The copy programs' tile ops refuse what they cannot run: a load_step that
 * can step out without a mask, a load_pad without a fill, a gather whose
 * index tile is not its result's dims from axis (from a tensor of rank 5,
 * which it may be), a broadcast that does not broadcast, an operand tile on
 * a plain load. */
static const struct {
	const char *body;            /* statements of a kernel over %x (5, 37), %z (1, 1, 1, 1, 3) */
	const char *want;
} copy_bad[] = {
	{"    %t = load_step %x[0, 36] : [8, 8] steps=(1, -5)\n    store %y[0, 0], %t masked\n",
	 "t.aicm:6:10: error: 'load_step' of '%x' can step out of dimension 0 (size 5) without a "
	 "mask; write other=..."},
	{"    %t = load_step %x[0, 36] : [8, 8] other=0.0 steps=(1, 0)\n    store %y[0, 0], %t masked\n",
	 "t.aicm:6:10: error: 'load_step' step 1 is 0; a step is nonzero and within +-2^30"},
	{"    %t = load_step %x[-1, 0] : [8, 8] other=0.0 steps=(1, 1)\n    store %y[0, 0], %t masked\n",
	 "t.aicm:6:10: error: 'load_step' of '%x' index 0 can leave dimension 0 (size 5); its first "
	 "lane must be inside"},
	{"    %t = load_pad %x[-3, 0] : [8, 8]\n    store %y[0, 0], %t masked\n",
	 "t.aicm:6:10: error: 'load_pad' needs a fill: other=V or an operand tile"},
	{"    %i = zeros() : [3]\n    %t = load_gather %z[0, 0, 0, 0, 0], %i : [1, 1, 1, 1, 2] axis=4\n"
	 "    store %y[0, 0], %t masked\n",
	 "error: 'load_gather' index tile '%i' does not match its result's dimensions from axis 4"},
	{"    %t = load %x[0, 0] : [8, 8] other=0.0\n    %b = broadcast(%t) : [8, 1]\n"
	 "    store %y[0, 0], %b masked\n",
	 "t.aicm:7:10: error: 'broadcast' result '%b' is written [8, 1] but its operands make "
	 "[8, 8]"},
	{"    %t = load %x[0, 0] : [8, 8] other=0.0\n    %b = broadcast(%t) : [8]\n"
	 "    store %y[0, 0], %t masked\n", "t.aicm:7:10: error: 'broadcast' cannot broadcast '%t' "
	 "to its result"},
	{"    %t = load %x[0, 0] : [8, 8] other=0.0\n    %u = load %x[0, 0], %t : [8, 8] other=0.0\n"
	 "    store %y[0, 0], %u masked\n",
	 "error: 'load' takes no operand tile"},
};

START_TEST(test_tile_verify_copy_ops)
{
	char src[1024], *msgs = NULL;
	Graph *g;

	snprintf(src, sizeof src, "graph {\n  %%x = input() : (5, 37)\n"
	    "  %%z = input() : (1, 1, 1, 1, 3)\n"
	    "  %%y = tiled @k [opaque] (%%x, %%z) : (5, 37) grid=(1, 1) BM=8 BN=8 {\n"
	    "    %%m = program_id() axis=0\n%s  }\n}\n", copy_bad[_i].body);
	g = ck_parse(src, &msgs);
	ck_assert_msg(g == NULL && strstr(msgs, copy_bad[_i].want), "%s\n%s", src, msgs);
	free(msgs);
}
END_TEST

/* Bodies grow in the builder's scratch arrays past their first capacity
 * and land in the graph at their exact size; the next body reuses the
 * scratch without disturbing the first. */
START_TEST(test_tile_scratch_build)
{
	Graph *g = ir_graph_new();
	TileScratch s = {0};
	TileFn *f[2];
	char name[16];
	TileIdx *x;

	for (int b = 0; b < 2; b++) {
		f[b] = tile_fn_new(g, b ? "k1" : "k0", KK_ELEMENTWISE);
		tile_fn_begin(f[b], &s);
		ck_assert_ptr_eq(f[b]->scratch, &s);
		for (int i = 0; i < 40 + b; i++) {
			int k = tile_add_inst(g, f[b], TO_PROGRAM_ID);

			snprintf(name, sizeof name, "p%d", i);
			f[b]->insts[k].res = tile_add_val(g, f[b],
			    arena_strndup(&g->arena, name, strlen(name)), -1, NULL);
			f[b]->insts[k].axis = (i + b) % 3;
		}
		tile_fn_end(g, f[b]);
		ck_assert_ptr_null(f[b]->scratch);
		ck_assert_int_eq(f[b]->ninsts, 40 + b);
		ck_assert_int_eq(f[b]->capinsts, 40 + b);
		ck_assert_int_eq(f[b]->capvals, 40 + b);
		ck_assert_ptr_ne(f[b]->insts, s.insts);
		ck_assert_ptr_ne(f[b]->vals, s.vals);
	}
	ck_assert_int_ge(s.capinsts, 41);
	for (int b = 0; b < 2; b++)
		for (int i = 0; i < 40 + b; i++) {
			snprintf(name, sizeof name, "p%d", i);
			ck_assert_int_eq(f[b]->insts[i].axis, (i + b) % 3);
			ck_assert_int_eq(f[b]->insts[i].res, i);
			ck_assert_str_eq(f[b]->vals[i].name, name);
			ck_assert_int_eq(tile_lookup(f[b], name), i);
		}
	/* an access's index expressions: exactly n, zeroed */
	tile_add_inst(g, f[0], TO_STORE);   /* built in place now, in the arena */
	x = tile_set_nidx(g, f[0], f[0]->ninsts - 1, 3);
	ck_assert_int_eq(f[0]->insts[f[0]->ninsts - 1].nidx, 3);
	ck_assert_ptr_eq(f[0]->insts[f[0]->ninsts - 1].idx, x);
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(x[k].nterm == 0 && x[k].k == 0, 1);
	ck_assert_ptr_null(tile_set_nidx(g, f[0], 0, 0));
	tile_scratch_free(&s);
	ir_graph_free(g);
}
END_TEST

/* The body's value names avoid the kernel's operands and result (a
 * program id next to an operand %m is %m.1), and the text reads back. */
START_TEST(test_tile_names_avoid_operands)
{
	const char *src =
	    "graph {\n  %m = input() : (8, 8)\n  %zero = const() : (8, 8)\n"
	    "  %acc = matmul(%m, %zero)\n  %a = max(%acc) axis=1\n}\n";
	Graph *g = ck_pipeline(src, "shape-infer,lower-tiled"), *h;
	char *a, *b;

	ck_assert_ptr_nonnull(g);
	a = print_str(g);
	ck_assert_ptr_nonnull(strstr(a, "    %m.1 = program_id() axis=0\n"));
	ck_assert_ptr_nonnull(strstr(a, "    %zero.1 = zeros() : [32, 32]\n"));
	ck_assert_ptr_nonnull(strstr(a, "    %acc.1 = for %k = 0 to 8 step 32 iter(%c = %zero.1) {\n"));
	ck_assert_ptr_nonnull(strstr(a, "      %a = load %m[%m.1 * 32, %k] : [32, 32] other=0.0\n"));
	/* in the second kernel %m is free again, and %acc is its operand */
	ck_assert_ptr_nonnull(strstr(a, "    %m = program_id() axis=0\n    %init = full() : [32] "
	    "value=-inf\n    %acc.1 = for"));
	h = ck_parse(a, NULL);
	ck_assert_ptr_nonnull(h);
	b = print_str(h);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	ir_graph_free(h);
	ir_graph_free(g);
}
END_TEST

/* lower-tiled rebuilds the graph in place: when a later kernel cannot be
 * lowered (here: one program per element of 2^41 is over the grid limit),
 * the graph is left as it was (the earlier op's body undone). */
START_TEST(test_tile_failure_leaves_graph)
{
	const char *src =
	    "graph {\n  %x = input() : (8, 8)\n  %a = relu(%x) : (8, 8)\n"
	    "  %y = input() : (2097152, 1048576)\n"
	    "  kernel @k [elementwise] {\n    %b = relu(%y) : (2097152, 1048576)\n  }\n}\n";
	Graph *g = ck_parse(src, NULL);
	Pipeline pl = {0};
	PassRun run = {.verify_each = true};
	FILE *sink = fopen("/dev/null", "w");
	char *before, *after;
	Diag d;

	ck_assert_ptr_nonnull(g);
	before = print_str(g);
	diag_init(&d, "t.aicm", src, strlen(src), sink);
	ck_assert_int_eq(pass_parse_pipeline(aicm_passes, "lower-tiled{bm=1,bn=1}", &pl, sink,
	    "check"), 0);
	ck_assert_int_eq(pass_run_pipeline(g, &pl, &run, &d), -1);
	ck_assert_int_eq(d.nerr, 1);
	after = print_str(g);
	ck_assert_str_eq(before, after);
	for (int i = 0; i < g->nnodes; i++)
		ck_assert_ptr_null(g->nodes[i].tile);
	ck_assert_int_eq(ir_verify(g, &d), 0);
	pass_free_pipeline(&pl);
	diag_free(&d);
	fclose(sink);
	free(before);
	free(after);
	ir_graph_free(g);
}
END_TEST

/* One kernel of 100k ops: the body's names are checked by hashing and the
 * neutral values found in one sweep, so lowering stays linear (a scan per
 * name would take minutes). */
START_TEST(test_tile_lower_long_kernel)
{
	int n = 100000;
	size_t cap = (size_t)n * 40 + 64, m = 0;
	char *s = malloc(cap), root[32];
	Graph *g;
	const TileFn *f;

	m += (size_t)snprintf(s + m, cap - m, "graph {\n  %%v0 = input() : (4,)\n");
	for (int i = 1; i <= n; i++)
		m += (size_t)snprintf(s + m, cap - m, "  %%v%d = relu(%%v%d)\n", i, i - 1);
	snprintf(s + m, cap - m, "}\n");
	g = ck_pipeline(s, "shape-infer,fuse,lower-tiled");
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(g->nnodes, 2);
	f = g->nodes[1].tile;
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->ninsts, n + 3);                /* program_id, load, n ops, store */
	snprintf(root, sizeof root, "v%d", n);
	ck_assert_int_lt(tile_lookup(f, root), 0);         /* the result's name is taken */
	snprintf(root, sizeof root, "v%d.1", n);
	ck_assert_int_ge(tile_lookup(f, root), 0);
	ck_assert_int_ge(tile_lookup(f, "v0.tile"), 0);
	free(s);
	ir_graph_free(g);
}
END_TEST

/* The name index of a body (tile_lookup): the first of two equal names
 * wins, as a scan found it; it works while a body grows in the scratch, in
 * the arena and after tile_fn_end; a small body after a large one does
 * not see the large one's names (the scratch index is cleared or freed
 * between bodies). */
START_TEST(test_tile_name_index)
{
	Graph *g = ir_graph_new();
	TileScratch s = {0};
	TileFn *f[3];
	char name[16];
	int n[3] = {5000, 3, 40};

	for (int b = 0; b < 3; b++) {
		f[b] = tile_fn_new(g, "k", KK_ELEMENTWISE);
		if (b < 2)
			tile_fn_begin(f[b], &s);
		ck_assert_int_lt(tile_lookup(f[b], "v0"), 0);
		for (int i = 0; i < n[b]; i++) {
			snprintf(name, sizeof name, "v%d", i);
			ck_assert_int_eq(tile_add_val(g, f[b], arena_strndup(&g->arena, name,
			    strlen(name)), -1, NULL), i);
			ck_assert_int_eq(tile_lookup(f[b], name), i);
		}
		ck_assert_int_eq(tile_add_val(g, f[b], "v1", -1, NULL), n[b]);
		ck_assert_int_eq(tile_lookup(f[b], "v1"), 1);          /* the first */
		if (b < 2)
			tile_fn_end(g, f[b]);
	}
	for (int b = 0; b < 3; b++) {
		for (int i = 0; i < n[b]; i++) {
			snprintf(name, sizeof name, "v%d", i);
			ck_assert_int_eq(tile_lookup(f[b], name), i);
		}
		snprintf(name, sizeof name, "v%d", n[b]);
		ck_assert_int_lt(tile_lookup(f[b], name), 0);
		ck_assert_int_lt(tile_lookup(f[b], "w"), 0);
		ck_assert_int_eq(tile_lookup(f[b], "v1"), 1);
	}
	tile_scratch_free(&s);
	ir_graph_free(g);
}
END_TEST

/* ---- the verifier (tile_verify.c): one test per op check that no golden
 * test reaches ---------------------------------------------------------- */

/* Counts the errors in msgs and expects nerr of them, the first line being
 * want (place and message). */
static void
expect_errors(char *msgs, int nerr, const char *want)
{
	char *nl;
	int n = 0;

	for (const char *p = msgs; (p = strstr(p, ": error: ")); p++)
		n++;
	ck_assert_msg(n == nerr, "expected %d errors, found %d:\n%s", nerr, n, msgs);
	nl = strchr(msgs, '\n');
	if (nl)
		*nl = '\0';
	ck_assert_str_eq(msgs, want);
	free(msgs);
}

/* Parses src, which the verifier must refuse with nerr errors, want first. */
static void
expect_refused(const char *src, int nerr, const char *want)
{
	char *msgs = NULL;
	Graph *g = ck_parse(src, &msgs);

	ck_assert_ptr_null(g);
	expect_errors(msgs, nerr, want);
}

/* Runs ir_verify on g (parsed from src, then broken by hand, as a buggy
 * pass would) and expects nerr errors, want first. */
static void
expect_verify(const Graph *g, const char *src, int nerr, const char *want)
{
	char *msgs = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&msgs, &n);
	Diag d;

	diag_init(&d, "t.aicm", src, strlen(src), f);
	ck_assert_int_eq(ir_verify(g, &d), nerr);
	diag_free(&d);
	fclose(f);
	expect_errors(msgs, nerr, want);
}

/* A valid kernel that the tests below break by hand. */
static const char *tile_loop =
    "graph {\n"
    "  %x = input() : (32, 32)\n"
    "  %y = tiled @k [elementwise] (%x) : (32, 32) grid=(1, 1) BM=32 BN=32 {\n"
    "    %z = zeros() : [32, 32]\n"
    "    %r = for %i = 0 to 1 step 1 iter(%c = %z) {\n"
    "      %t = load %x[0, 0] : [32, 32]\n"
    "      %s = add(%c, %t) : [32, 32]\n"
    "      yield %s\n"
    "    }\n"
    "    store %y[0, 0], %r\n"
    "  }\n"
    "}\n";

/* idiv and irem take a scalar (the check common to all ops), with a
 * positive by= of at most 2^50 (tv_idiv). */
START_TEST(test_tile_verify_idiv)
{
	expect_refused(
	    "graph {\n"
	    "  %x = input() : (32, 32)\n"
	    "  %y = tiled @k [elementwise] (%x) : (32, 32) grid=(1, 1) BM=32 BN=32 {\n"
	    "    %t = load %x[0, 0] : [32, 32]\n"
	    "    %q = idiv(%t) by=2\n"
	    "    store %y[0, 0], %t\n"
	    "  }\n"
	    "}\n", 1, "t.aicm:5:10: error: 'idiv' takes a scalar, but '%t' is a tile");
	expect_refused(
	    "graph {\n"
	    "  %x = input() : (32, 32)\n"
	    "  %y = tiled @k [elementwise] (%x) : (32, 32) grid=(1, 1) BM=32 BN=32 {\n"
	    "    %m = program_id() axis=0\n"
	    "    %q = irem(%m) by=0\n"
	    "    %p = idiv(%m) by=1125899906842625\n"
	    "    %t = load %x[0, 0] : [32, 32]\n"
	    "    store %y[0, 0], %t\n"
	    "  }\n"
	    "}\n", 2, "t.aicm:5:10: error: 'irem' needs a positive by=, found 0");
}
END_TEST

/* An index term is a scalar defined before it; an index stays within
 * +-2^50 (check_access). */
START_TEST(test_tile_verify_index)
{
	expect_refused(
	    "graph {\n"
	    "  %x = input() : (32, 32)\n"
	    "  %y = tiled @k [elementwise] (%x) : (32, 32) grid=(1, 1) BM=32 BN=32 {\n"
	    "    %t = load %x[0, 0] : [32, 32]\n"
	    "    store %y[%t, 0], %t masked\n"
	    "  }\n"
	    "}\n", 2, "t.aicm:5:5: error: index 0 of 'store' uses '%t', which is not a scalar "
	    "defined before it");
	expect_refused(
	    "graph {\n"
	    "  %x = input() : (64, 32)\n"
	    "  %y = tiled @k [elementwise] (%x) : (64, 32) grid=(2, 1) BM=32 BN=32 {\n"
	    "    %m = program_id() axis=0\n"
	    "    %t = load %x[%m * 1125899906842625, 0] : [32, 32] other=0.0\n"
	    "    store %y[%m * 32, 0], %t\n"
	    "  }\n"
	    "}\n", 1, "t.aicm:5:10: error: 'load' of '%x' index 0 can exceed 1125899906842624 in "
	    "magnitude");
}
END_TEST

/* A kernel combines its result with one kind of atomic (tv_store). */
START_TEST(test_tile_verify_atomics_mixed)
{
	expect_refused(
	    "graph {\n"
	    "  %x = input() : (32, 32)\n"
	    "  %y = tiled @k [reduction] (%x) : () grid=(1, 1) BM=32 BN=32 init=0.0 {\n"
	    "    %t = load %x[0, 0] : [32, 32]\n"
	    "    %s = sum(%t) : []\n"
	    "    atomic_add %y[], %s\n"
	    "    atomic_max %y[], %s\n"
	    "  }\n"
	    "}\n", 1, "t.aicm:7:5: error: '%y' is combined with both atomic_add and atomic_max; "
	    "a kernel uses one");
}
END_TEST

/* A loop's result, iter value and initial value share one type (tv_for):
 * the parser types all three from the initial value, so a pass's mistake
 * is played here by retyping the result. */
START_TEST(test_tile_verify_for_type)
{
	Graph *g = ck_parse(tile_loop, NULL);
	TileFn *f;

	ck_assert_ptr_nonnull(g);
	f = g->nodes[ir_lookup(g, "y")].tile;
	f->vals[tile_lookup(f, "r")].shape[1] = 1;
	expect_verify(g, tile_loop, 1, "t.aicm:5:10: error: 'for' result, iter value and initial "
	    "value must have one tile type");
	ir_graph_free(g);
}
END_TEST

/* dot: leading dimensions 1, and an accumulator of the operands' [M, N]
 * (tv_dot). */
START_TEST(test_tile_verify_dot)
{
	expect_refused(
	    "graph {\n"
	    "  %x = input() : (4, 32, 32)\n"
	    "  %y = tiled @k [matmul] (%x) : (4, 32, 32) grid=(1, 1) BM=32 BN=32 BK=4 {\n"
	    "    %a = load %x[0, 0, 0] : [4, 32, 32]\n"
	    "    %z = zeros() : [4, 32, 32]\n"
	    "    %d = dot(%a, %a, %z) : [4, 32, 32]\n"
	    "    store %y[0, 0, 0], %d\n"
	    "  }\n"
	    "}\n", 1, "t.aicm:6:10: error: 'dot' leading tile dimensions must be 1");
	expect_refused(
	    "graph {\n"
	    "  %x = input() : (32, 16)\n"
	    "  %w = input() : (16, 32)\n"
	    "  %y = tiled @k [matmul] (%x, %w) : (32, 16) grid=(1, 1) BM=32 BN=32 BK=16 {\n"
	    "    %a = load %x[0, 0] : [32, 16]\n"
	    "    %b = load %w[0, 0] : [16, 32]\n"
	    "    %z = zeros() : [32, 16]\n"
	    "    %d = dot(%a, %b, %z) : [32, 16]\n"
	    "    store %y[0, 0], %d\n"
	    "  }\n"
	    "}\n", 1, "t.aicm:8:10: error: 'dot' accumulator does not have the shape [.., M, N] "
	    "of its operands");
}
END_TEST

/* Elementwise ops: a unary op keeps its operand's shape, a binary op's
 * operands broadcast (tv_unary, tv_binary). */
START_TEST(test_tile_verify_elementwise)
{
	expect_refused(
	    "graph {\n"
	    "  %x = input() : (32, 32)\n"
	    "  %y = tiled @k [elementwise] (%x) : (32, 32) grid=(1, 1) BM=32 BN=32 {\n"
	    "    %t = load %x[0, 0] : [32, 32]\n"
	    "    %e = exp(%t) : [32, 1]\n"
	    "    store %y[0, 0], %e\n"
	    "  }\n"
	    "}\n", 1, "t.aicm:5:10: error: 'exp' result '%e' is written [32, 1] but its operands "
	    "make [32, 32]");
	expect_refused(
	    "graph {\n"
	    "  %x = input() : (32, 32)\n"
	    "  %y = tiled @k [elementwise] (%x) : (32, 32) grid=(1, 1) BM=32 BN=16 {\n"
	    "    %t = load %x[0, 0] : [32, 32]\n"
	    "    %u = load %x[0, 0] : [32, 16]\n"
	    "    %s = add(%t, %u) : [32, 32]\n"
	    "    store %y[0, 0], %s\n"
	    "  }\n"
	    "}\n", 1, "t.aicm:6:10: error: 'add' cannot broadcast its tiles");
}
END_TEST

/* A reduction's accumulator has the reduced shape (tv_reduce). */
START_TEST(test_tile_verify_reduce_accumulator)
{
	expect_refused(
	    "graph {\n"
	    "  %x = input() : (32, 32)\n"
	    "  %y = tiled @k [reduction] (%x) : (32,) grid=(1, 1) BM=32 BN=32 {\n"
	    "    %t = load %x[0, 0] : [32, 32]\n"
	    "    %c = zeros() : [32, 1]\n"
	    "    %s = sum(%t, %c) : [32] axis=1\n"
	    "    store %y[0], %s\n"
	    "  }\n"
	    "}\n", 1, "t.aicm:6:10: error: 'sum' accumulator '%c' does not have the reduced shape");
}
END_TEST

/* transpose's perm has one entry per dimension (tv_transpose). */
START_TEST(test_tile_verify_transpose_rank)
{
	expect_refused(
	    "graph {\n"
	    "  %x = input() : (32, 32)\n"
	    "  %y = tiled @k [opaque] (%x) : (32, 32) grid=(1, 1) BM=32 BN=32 {\n"
	    "    %t = load %x[0, 0] : [32, 32]\n"
	    "    %u = transpose(%t) : [32, 32] perm=(1, 0, 2)\n"
	    "    store %y[0, 0], %u\n"
	    "  }\n"
	    "}\n", 1, "t.aicm:5:10: error: 'transpose' perm has 3 entries for a tile of rank 2");
}
END_TEST

/* The kernel around the body: at most 2^40 programs, a result type; the
 * body is not looked at then (check_kernel). */
START_TEST(test_tile_verify_kernel)
{
	Graph *g;

	expect_refused(
	    "graph {\n"
	    "  %x = input() : (32, 32)\n"
	    "  %y = tiled @k [elementwise] (%x) : (32, 32) grid=(1048576, 1048576, 2) BM=32 "
	    "BN=32 {\n"
	    "    %t = load %x[0, 0] : [32, 32]\n"
	    "    store %y[0, 0], %t\n"
	    "  }\n"
	    "}\n", 1, "t.aicm:3:3: error: tiled '%y' grid has more than 2^40 programs");
	g = ck_parse(tile_loop, NULL);
	ck_assert_ptr_nonnull(g);
	g->nodes[ir_lookup(g, "y")].type.rank = -1;
	expect_verify(g, tile_loop, 1, "t.aicm:3:3: error: tiled '%y' needs a result type");
	ir_graph_free(g);
}
END_TEST

/* ---- the tile-op table (tile_ops.def) --------------------------------- */

/* Every named row is found by its name and prints under it; the rows that
 * stand for graph ops have no name of their own and are not found. */
START_TEST(test_tile_table_lookup)
{
	TileInst in = {0};
	int named = 0;

	for (int k = 0; k < TO_COUNT; k++) {
		in.op = (TileOpKind)k;
		in.gop = OP_RELU;
		if (tile_ops[k].name) {
			ck_assert_int_eq(tile_op_lookup(tile_ops[k].name), k);
			ck_assert_str_eq(tile_op_name(&in), tile_ops[k].name);
			ck_assert_int_lt(tile_ops[k].graph, 0);
			named++;
		} else {
			ck_assert_str_eq(tile_op_name(&in), "relu");
			ck_assert_int_ge(tile_ops[k].graph, 0);
		}
		ck_assert_int_le(tile_ops[k].nin, tile_ops[k].nmax);
		ck_assert_int_le(tile_ops[k].nmax, 3);
	}
	/* unary, binary, where and reduce stand for graph ops */
	ck_assert_int_eq(named, TO_COUNT - 4);
	ck_assert_int_eq(tile_op_lookup("load"), TO_LOAD);
	ck_assert_int_eq(tile_op_lookup("atomic_max"), TO_ATOMIC_MAX);
	ck_assert_int_lt(tile_op_lookup("relu"), 0);
	ck_assert_int_lt(tile_op_lookup("tiled"), 0);
	ck_assert_int_lt(tile_op_lookup(""), 0);
	in.op = TO_COUNT;
	ck_assert_str_eq(tile_op_name(&in), "?");
	ck_assert_int_eq(tile_op_of_gop(OP_EXP), TO_UNARY);
	ck_assert_int_eq(tile_op_of_gop(OP_MAXIMUM), TO_BINARY);
	ck_assert_int_eq(tile_op_of_gop(OP_SUM), TO_REDUCE);
	ck_assert_int_eq(tile_op_of_gop(OP_MAX), TO_REDUCE);
	ck_assert_int_eq(tile_op_of_gop(OP_MEAN), TO_COUNT);   /* lowered as sum and div */
	ck_assert_int_eq(tile_op_of_gop(OP_MATMUL), TO_COUNT);
	ck_assert_int_eq(tile_op_of_gop(OP_TILED), TO_COUNT);
	ck_assert_str_eq(tile_attr_names[TA_AXIS], "axis");
	ck_assert_str_eq(tile_attr_names[TA_VIEW], "view");
	ck_assert(tile_ops[TO_LOAD].attrs & TAB(OTHER));
	ck_assert(!(tile_ops[TO_LOAD].attrs & TAB(MASKED)));
	ck_assert(tile_ops[TO_REDUCE].attrs & TAB(KEEPDIMS));
	ck_assert_int_eq(tile_ops[TO_PROGRAM_ID].result, TR_SCALAR);
	ck_assert_int_eq(tile_ops[TO_STORE].form, TF_STORE);
}
END_TEST

/* A tiled node is its own row of the graph op table: computed, never
 * looked up or suggested as an op statement's name. */
START_TEST(test_tile_graph_row)
{
	Graph *g = ck_parse("graph {\n  %x = input() : (4,)\n"
	    "  %y = tiled @k [elementwise] (%x) : (4,) grid=(1, 1) BM=1 BN=4 {\n"
	    "    %t = load %x[0] : [4]\n    store %y[0], %t\n  }\n}\n", NULL);

	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(g->nodes[1].op, OP_TILED);
	ck_assert_ptr_nonnull(g->nodes[1].tile);
	ck_assert_int_ne(ir_ops[OP_TILED].cls, OC_SOURCE);
	ck_assert_str_eq(ir_ops[OP_TILED].name, "tiled");
	ck_assert_int_lt(ir_op_lookup("tiled"), 0);
	ck_assert_ptr_null(ir_op_suggest("tiles"));
	ir_graph_free(g);
}
END_TEST

/* ---- the builder (tile_build.c) ---------------------------------------- */

/* A body built by hand: each builder adds one instruction with what its
 * row takes; values get the element type of what they are made from. */
START_TEST(test_tile_build_body)
{
	Graph *g = ck_parse("graph {\n  %x = input() : (4, 8) f32\n}\n", NULL);
	TileFn *f = tile_fn_new(g, "k", KK_ELEMENTWISE);
	TileAttrs at = {.set = TAB(AXIS), .axis = 0};
	TileIdx idx[2] = {{0}};
	int64_t s[2] = {4, 8};
	int m, z, fo, l, r, y, st, arg = 0, in[2];

	ck_assert_ptr_nonnull(g);
	f->dt = DT_F32;
	f->nargs = 1;
	f->args = &arg;
	m = tile_build_def(g, f, tile_build_op(g, f, TO_PROGRAM_ID, OP_INPUT, 0, NULL, &at, LOC_NONE),
	    "m", -1, NULL);
	ck_assert_int_eq(f->insts[0].axis, 0);
	ck_assert_int_eq(f->vals[m].def, 0);
	z = tile_build_def(g, f, tile_build_op(g, f, TO_ZEROS, OP_INPUT, 0, NULL, NULL, LOC_NONE),
	    "z", 2, s);
	ck_assert_int_eq(f->vals[z].dt, DT_F32);                   /* the kernel's */
	fo = tile_build_for(g, f, 0, 8, 4, z, LOC_NONE);
	ck_assert_int_eq(tile_build_loop_var(g, f, fo, "k"), f->insts[fo].var);
	ck_assert_int_eq(tile_build_loop_iter(g, f, fo, "c"), f->insts[fo].iter);
	ck_assert_int_eq(f->vals[f->insts[fo].iter].rank, 2);
	ck_assert_int_eq(f->vals[f->insts[fo].iter].shape[1], 8);
	idx[0] = (TileIdx){1, {m}, {4}, 0};
	at = (TileAttrs){.set = TAB(OTHER), .other = tile_num(-1.5)};
	l = tile_build_def(g, f, tile_build_access(g, f, TO_LOAD, 0, 2, idx, -1, &at, LOC_NONE),
	    "t", 2, s);
	ck_assert(f->insts[f->vals[l].def].masked);
	ck_assert(f->insts[f->vals[l].def].other.d == -1.5);
	ck_assert_int_eq(f->insts[f->vals[l].def].idx[0].coef[0], 4);
	ck_assert_int_eq(f->vals[l].dt, DT_F32);                   /* %x's */
	in[0] = l;
	in[1] = f->insts[fo].iter;
	r = tile_build_def(g, f, tile_build_op(g, f, TO_BINARY, OP_ADD, 2, in, NULL, LOC_NONE),
	    "r", 2, s);
	ck_assert_str_eq(tile_op_name(&f->insts[f->vals[r].def]), "add");
	y = tile_build_yield(g, f, fo, r, LOC_NONE);
	ck_assert_int_eq(f->insts[fo].end, y);
	ck_assert_int_eq(tile_build_def(g, f, fo, "acc", 2, s), f->insts[fo].res);
	at = (TileAttrs){.set = TAB(MASKED)};
	st = tile_build_access(g, f, TO_STORE, TILE_RESULT, 2, NULL, f->insts[fo].res, &at,
	    LOC_NONE);
	ck_assert_int_eq(f->insts[st].nin, 1);
	ck_assert(f->insts[st].masked);
	ck_assert_int_eq(f->insts[st].idx[1].nterm, 0);
	ck_assert_int_eq(f->ninsts, 7);
	for (int v = 0; v < f->nvals; v++)
		if (f->vals[v].rank >= 0)
			ck_assert_int_eq(f->vals[v].dt, DT_F32);
	ck_assert_int_eq(tile_lookup(f, "acc"), f->insts[fo].res);
	ck_assert(ir_scalar_neutral(OP_MAX, DT_F32) < -1e308);
	ck_assert(ir_scalar_neutral(OP_SUM, DT_F64) == 0);
	ir_graph_free(g);
}
END_TEST

/* Lowered and parsed bodies give every tile its kernel's element type. */
START_TEST(test_tile_value_types)
{
	static const char *const dts[] = {"f32", "f64"};

	for (int k = 0; k < 2; k++) {
		char src[512], *text;
		Graph *g, *h;

		snprintf(src, sizeof src, "graph {\n  %%a = input() : (40, 24) %s\n"
		    "  %%b = input() : (24, 36) %s\n  %%c = matmul(%%a, %%b)\n"
		    "  %%d = sum(%%c) axis=1\n  %%e = relu(%%d)\n}\n", dts[k], dts[k]);
		g = ck_pipeline(src, "shape-infer,fuse,lower-tiled");
		ck_assert_ptr_nonnull(g);
		text = print_str(g);
		h = ck_parse(text, NULL);
		ck_assert_ptr_nonnull(h);
		for (int pass = 0; pass < 2; pass++) {
			const Graph *x = pass ? h : g;

			for (int i = 0; i < x->nnodes; i++) {
				const TileFn *f = x->nodes[i].tile;

				if (x->nodes[i].op != OP_TILED)
					continue;
				ck_assert_int_eq(f->dt, k ? DT_F64 : DT_F32);
				for (int v = 0; v < f->nvals; v++)
					if (f->vals[v].rank >= 0)
						ck_assert_int_eq(f->vals[v].dt, f->dt);
			}
		}
		free(text);
		ir_graph_free(g);
		ir_graph_free(h);
	}
}
END_TEST

Suite *
make_tile_suite(void)
{
	Suite *s = suite_create("tile");
	TCase *tc = tcase_create("tile");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_tile_roundtrip_lowered);
	tcase_add_test(tc, test_tile_smaller_blocks_repeat_traffic);
	tcase_add_test(tc, test_tile_kinds_match_reference_any_threads);
	tcase_add_test(tc, test_tile_prepacked_const_refreshed);
	tcase_add_test(tc, test_tile_prepack_room);
	tcase_add_test(tc, test_tile_row_run_direct_store);
	tcase_add_test(tc, test_tile_conv_epilogue_any_threads);
	tcase_add_test(tc, test_tile_traffic_rules);
	tcase_add_test(tc, test_tile_verify_unmasked_load);
	tcase_add_test(tc, test_tile_copy_exact_integers);
	tcase_add_loop_test(tc, test_tile_verify_copy_ops, 0,
	    (int)(sizeof copy_bad / sizeof copy_bad[0]));
	tcase_add_test(tc, test_tile_cost_model_agrees);
	tcase_add_test(tc, test_tile_scratch_build);
	tcase_add_test(tc, test_tile_names_avoid_operands);
	tcase_add_test(tc, test_tile_lower_long_kernel);
	tcase_add_test(tc, test_tile_failure_leaves_graph);
	tcase_add_test(tc, test_tile_name_index);
	tcase_add_test(tc, test_tile_table_lookup);
	tcase_add_test(tc, test_tile_graph_row);
	tcase_add_test(tc, test_tile_build_body);
	tcase_add_test(tc, test_tile_value_types);
	suite_add_tcase(s, tc);
	tc = tcase_create("verify");
	tcase_add_test(tc, test_tile_verify_idiv);
	tcase_add_test(tc, test_tile_verify_index);
	tcase_add_test(tc, test_tile_verify_atomics_mixed);
	tcase_add_test(tc, test_tile_verify_for_type);
	tcase_add_test(tc, test_tile_verify_dot);
	tcase_add_test(tc, test_tile_verify_elementwise);
	tcase_add_test(tc, test_tile_verify_reduce_accumulator);
	tcase_add_test(tc, test_tile_verify_transpose_rank);
	tcase_add_test(tc, test_tile_verify_kernel);
	suite_add_tcase(s, tc);
	return s;
}
