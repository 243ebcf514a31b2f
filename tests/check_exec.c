/*
 * check_exec.c: the tile executor's fast paths against the reference.
 *
 * f32 kernels hold f32 tiles, full tiles that lie in their tensor with its
 * layout are read in place, stores into large tensors stream, and a plan's
 * thread crew lives across runs; each test runs a lowered graph that takes
 * one of those paths (and, in the same grid, the ordinary one, for ragged
 * edges) and compares it with the reference interpreter, and reruns on
 * other thread counts must give the same bits.  Integer and bool kernels
 * are checked the same way, bitwise, and an integer division by zero
 * stops a run only for a divisor in a valid lane.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "exec.h"
#include "pass.h"
#include "tile_exec.h"
#include "../passes/passes.h"

/* Tensors for g with its sources random (the same for the same names). */
static Tensor *
sources(const Graph *g)
{
	Tensor *vals = xcalloc((size_t)g->nnodes, sizeof *vals);

	ck_fill_sources(g, vals, 11);
	return vals;
}

typedef struct Case {
	const char *src;
	const char *pipeline;
	double tol;                  /* against the reference; 0: bitwise */
	const char *ref;             /* the reference's graph, if not src (tiled src) */
} Case;

/* The case's graph after its pipeline.  A pipeline "PASSES|BMxBN" runs
 * PASSES, then gives every kernel BM and BN as written and lowers it:
 * block sizes that the text and lower-tiled's options refuse (not powers
 * of two, Triton's rule) but that the executor must still run, since
 * lower-tiled itself makes some (a grouped conv's BN divides the group's
 * width), and whose whole rows exercise the strip paths. */
static Graph *
case_graph(const char *src, const char *pipeline)
{
	const char *bar = strchr(pipeline, '|');
	char head[256];
	long long bm, bn;
	Graph *g;
	Diag d;
	int rc;

	if (!bar)
		return ck_pipeline(src, pipeline);
	ck_assert((size_t)(bar - pipeline) < sizeof head);
	memcpy(head, pipeline, (size_t)(bar - pipeline));
	head[bar - pipeline] = '\0';
	ck_assert_int_eq(sscanf(bar + 1, "%lldx%lld", &bm, &bn), 2);
	g = ck_pipeline(src, head);
	if (!g)
		return NULL;
	for (int k = 0; k < g->nkernels; k++) {
		g->kernels[k].kset |= 1u << KA_BM | 1u << KA_BN;
		g->kernels[k].kattr[KA_BM] = bm;
		g->kernels[k].kattr[KA_BN] = bn;
	}
	diag_init(&d, "t.aicm", src, strlen(src), stderr);
	rc = pass_run_text(aicm_passes, g, "lower-tiled", &d, stderr, "check");
	diag_free(&d);
	if (rc != 0) {
		ir_graph_free(g);
		return NULL;
	}
	return g;
}

/* Runs the case's lowered graph with the plan reused for each thread count
 * in turn, and checks every output against the reference each time and
 * bitwise against the first run; the totals of the KernelStats must not
 * depend on the threads either. */
static void
check_case(const Case *c, const int *threads, int nthreads)
{
	Graph *g = case_graph(c->src, c->pipeline);
	Graph *r = ck_pipeline(c->ref ? c->ref : c->src, "shape-infer");
	Tensor *vals, *ref;
	TilePlan *p;
	Diag d;
	int *outs, no;
	KernelStats first = {0};
	Tensor *keep;

	ck_assert_ptr_nonnull(g);
	ck_assert_ptr_nonnull(r);
	diag_init(&d, "t.aicm", "", 0, stderr);
	ref = sources(r);
	ck_assert_int_eq(exec_interp(r, ref, &d), 0);
	vals = sources(g);
	p = exec_tile_compile(g, &d);
	ck_assert_ptr_nonnull(p);
	no = ir_outputs(g, &outs);
	ck_assert_int_gt(no, 0);
	keep = xcalloc((size_t)no, sizeof *keep);
	for (int t = 0; t < nthreads; t++) {
		const KernelStats *ks;
		KernelStats tot;
		int nk;

		ck_assert_int_eq(exec_tile_run(p, vals, threads[t], &d), 0);
		for (int k = 0; k < no; k++) {
			const Tensor *a = &vals[outs[k]], *b = &ref[ir_lookup(r, g->nodes[outs[k]].name)];
			ExecErr e = exec_compare(a, b);

			if (c->tol == 0)
				ck_assert_msg(memcmp(a->data, b->data, exec_tensor_bytes(a)) == 0,
				    "'%s' on %d threads: not bitwise the reference's (rel err %g)",
				    g->nodes[outs[k]].name, threads[t], e.rel);
			else
				ck_assert_msg(e.rel <= c->tol, "'%s' on %d threads: rel err %g > %g",
				    g->nodes[outs[k]].name, threads[t], e.rel, c->tol);
			if (t == 0) {
				Type ty = exec_tensor_type(a);

				ck_assert_int_eq(exec_tensor_alloc(&keep[k], &ty, 0), 0);
				memcpy(keep[k].data, a->data, exec_tensor_bytes(a));
			}
			ck_assert_msg(memcmp(keep[k].data, a->data, exec_tensor_bytes(a)) == 0,
			    "'%s' on %d threads: not the bits of %d thread(s)",
			    g->nodes[outs[k]].name, threads[t], threads[0]);
		}
		ks = exec_tile_stats(p, &nk);
		tot = exec_tile_total(ks, nk);
		if (t == 0)
			first = tot;
		ck_assert_int_eq(tot.bytes_read, first.bytes_read);
		ck_assert_int_eq(tot.bytes_written, first.bytes_written);
		ck_assert_int_eq(tot.flops, first.flops);
		/* The next run must recompute everything, not find old results. */
		for (int k = 0; k < no; k++)
			exec_fill_splat(&vals[outs[k]], -7.0);
	}
	exec_tensors_free(keep, no);
	free(keep);
	free(outs);
	exec_tile_free(p);
	exec_tensors_free(vals, g->nnodes);
	exec_tensors_free(ref, r->nnodes);
	free(vals);
	free(ref);
	diag_free(&d);
	ir_graph_free(g);
	ir_graph_free(r);
}

static const int threads[] = {1, 3, 2, 1, 4};
#define NTHREADS ((int)(sizeof threads / sizeof threads[0]))

/* check_case on tmpl in f64 and in f32: every "DT" in it becomes the
 * element type; tol64 and tol32 are the tolerances (0: bitwise). */
static void
check_both_types(const char *tmpl, const char *pipeline, double tol64, double tol32)
{
	static const char *const types[] = {"f64", "f32"};

	for (int t = 0; t < 2; t++) {
		char src[2048];
		size_t n = 0;
		Case c = {src, pipeline, t ? tol32 : tol64, NULL};

		for (const char *q = tmpl; *q && n + 4 < sizeof src; q++) {
			if (q[0] == 'D' && q[1] == 'T') {
				memcpy(src + n, types[t], 3);
				n += 3;
				q++;
			} else {
				src[n++] = *q;
			}
		}
		ck_assert(n + 4 < sizeof src);
		src[n] = '\0';
		check_case(&c, threads, NTHREADS);
	}
}

/* Every kind in f32: elementwise results are the reference's bits, dots
 * and sums within rounding. */
START_TEST(test_exec_f32_kinds)
{
	static const Case c = {
	    "graph {\n"
	    "  %x = input() : (33, 97) f32\n"
	    "  %y = input() : (97,) f32\n"
	    "  %W = const() : (97, 7) f32\n"
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
	    "  %nl = neg(%x)\n"
	    "  %sg = sigmoid(%nl)\n"
	    "  kernel @k5 [matmul_epilogue] BM=16 BN=16 BK=16 {\n"
	    "    %mm2 = matmul(%x, %W)\n"
	    "    %r = relu(%mm2)\n"
	    "    %colmax = max(%r) axis=0 keepdims=True\n"
	    "  }\n"
	    "  return %e, %s, %m0, %sm, %tr, %rsh, %sg, %colmax\n"
	    "}\n",
	    "shape-infer,lower-tiled", 1e-5, NULL};

	check_case(&c, threads, NTHREADS);
}
END_TEST

/* Exact f32 elementwise chains: the same bits as the reference's. */
START_TEST(test_exec_f32_elementwise_bitwise)
{
	static const Case c = {
	    "graph {\n"
	    "  %x = input() : (37, 300) f32\n"
	    "  %y = input() : (37, 300) f32\n"
	    "  %z = input() : (300,) f32\n"
	    "  %m = mul(%x, %y)\n"
	    "  %d = div(%m, %z)\n"
	    "  %s = sub(%d, %x)\n"
	    "  %mx = maximum(%s, %y)\n"
	    "  %mn = minimum(%mx, %z)\n"
	    "  %r = relu(%mn)\n"
	    "}\n",
	    "shape-infer,fuse|4x300", 0, NULL};

	check_case(&c, threads, NTHREADS);
}
END_TEST

/* Tiles of whole rows (read in place) beside a ragged last block (copied
 * and masked), with a broadcast row and a scalar, in both types. */
START_TEST(test_exec_in_place_loads)
{
	check_both_types(
	    "graph {\n"
	    "  %x = input() : (45, 256) DT\n"
	    "  %y = input() : (45, 256) DT\n"
	    "  %b = input() : (256,) DT\n"
	    "  %h = const() : () DT value=0.5\n"
	    "  %m = mul(%x, %y)\n"
	    "  %a = add(%m, %b)\n"
	    "  %o = maximum(%a, %h)\n"
	    "  %rm = max(%x) axis=1 keepdims=True\n"
	    "  %sh = sub(%y, %rm)\n"
	    "  return %o, %sh\n"
	    "}\n",
	    "shape-infer,fuse{row-fusion=true},lower-tiled{bm=8,bn=256}", 0, 0);
}
END_TEST

/* A 24 MiB result streams past the caches (rows of 2048 f64 and a ragged
 * last block); the bits are the reference's on every thread count. */
START_TEST(test_exec_streamed_store)
{
	static const Case c = {
	    "graph {\n"
	    "  %x = input() : (1531, 2048)\n"
	    "  %y = input() : (1531, 2048)\n"
	    "  %m = mul(%x, %y)\n"
	    "  %o = add(%m, %x)\n"
	    "}\n",
	    "shape-infer,fuse,lower-tiled{bm=2,bn=2048}", 0, NULL};
	static const int th[] = {1, 2};

	check_case(&c, th, 2);
}
END_TEST

/* The f32 matmul of W1's shape at a small size, ragged in every dim. */
START_TEST(test_exec_f32_matmul_epilogue)
{
	static const Case c = {
	    "graph {\n"
	    "  %x = input() : (131, 77) f32\n"
	    "  %w = input() : (77, 93) f32\n"
	    "  %b = input() : (93,) f32\n"
	    "  %mm = matmul(%x, %w)\n"
	    "  %a = add(%mm, %b)\n"
	    "  %r = relu(%a)\n"
	    "  %s = sum(%r) axis=1\n"
	    "}\n",
	    "shape-infer,fuse,lower-tiled{bm=64,bn=64,bk=64}", 1e-5, NULL};

	check_case(&c, threads, NTHREADS);
}
END_TEST

/* Packed b tiles kept across programs (the grid walks axis 0 fastest):
 * five K trips, the last one ragged, seven row blocks, a ragged column
 * block, and the row sums combined atomically across column blocks. */
START_TEST(test_exec_packed_tiles_reused)
{
	check_both_types(
	    "graph {\n"
	    "  %x = input() : (200, 300) DT\n"
	    "  %w = input() : (300, 150) DT\n"
	    "  %mm = matmul(%x, %w)\n"
	    "  %r = relu(%mm)\n"
	    "  %s = sum(%r) axis=1\n"
	    "  %p = matmul(%x, %w)\n"
	    "  return %s, %p\n"
	    "}\n",
	    "shape-infer,fuse,lower-tiled{bm=32,bn=32,bk=64}", 1e-12, 1e-5);
}
END_TEST

/* A long elementwise chain on rows of 3000 read in place, one strip run
 * (11 strips and a ragged twelfth): unary ops (SIMD exp, scalar neg and
 * tanh) between binary ones, a scalar operand, an operand loaded long
 * before its use; f32 and f64. */
START_TEST(test_exec_elementwise_chain)
{
	check_both_types(
	    "graph {\n"
	    "  %x = input() : (7, 3000) DT\n"
	    "  %y = input() : (7, 3000) DT\n"
	    "  %h = const() : () DT value=0.25\n"
	    "  %m = mul(%x, %y)\n"
	    "  %e = exp(%m)\n"
	    "  %n = neg(%e)\n"
	    "  %a = add(%n, %h)\n"
	    "  %t = tanh(%a)\n"
	    "  %o = maximum(%t, %x)\n"
	    "}\n",
	    "shape-infer,fuse|1x3000", 1e-15, 1e-6);
}
END_TEST

/* Strip runs: elementwise ops on tiles of 2000 elements (strips of 256
 * and a ragged last one), a scalar operand, a loaded operand read twice,
 * a run of one op with its store (%m, an output, is a kernel of its own),
 * the result's store done strip by strip where the tile is whole and
 * contiguous (bn = the row) and the ordinary way at the ragged last row
 * block; exact ops, so the reference's bits, on 1-4 threads, f64 and f32. */
START_TEST(test_exec_strip_runs)
{
	check_both_types(
	    "graph {\n"
	    "  %x = input() : (5, 1000) DT\n"
	    "  %y = input() : (5, 1000) DT\n"
	    "  %h = const() : () DT value=-0.5\n"
	    "  %m = mul(%x, %y)\n"
	    "  %a = add(%m, %h)\n"
	    "  %r = relu(%a)\n"
	    "  %s = sub(%r, %m)\n"
	    "  %q = maximum(%s, %x)\n"
	    "  return %q, %m\n"
	    "}\n",
	    "shape-infer,fuse|2x1000", 0, 0);
}
END_TEST

/* A loop's carried value shares one buffer with its result and, when
 * nothing else needs it, with the zeros() it starts from.  Hand-written
 * kernels where that sharing would be wrong: the zeros also added after
 * the loop (it must still be zero), and zeros made outside an outer loop
 * that starts the inner one on every outer trip (it must be zero on the
 * second trip too).  Reference: mm + 0, and mm + mm. */
START_TEST(test_exec_loop_carried_buffers)
{
	static const char *const kernels[] = {
	    "  %y = tiled @k [matmul] (%x, %w) : (64, 48) grid=(2, 2) BM=32 BN=32 BK=16 {\n"
	    "    %m = program_id() axis=0\n"
	    "    %n = program_id() axis=1\n"
	    "    %zero = zeros() : [32, 32]\n"
	    "    %acc = for %k = 0 to 80 step 16 iter(%c = %zero) {\n"
	    "      %a = load %x[%m * 32, %k] : [32, 16] other=0.0\n"
	    "      %b = load %w[%k, %n * 32] : [16, 32] other=0.0\n"
	    "      %d = dot(%a, %b, %c) : [32, 32]\n"
	    "      yield %d\n"
	    "    }\n"
	    "    %s = add(%acc, %zero) : [32, 32]\n"
	    "    store %y[%m * 32, %n * 32], %s masked\n"
	    "  }\n",
	    "  %y = tiled @k [matmul] (%x, %w) : (64, 48) grid=(2, 2) BM=32 BN=32 BK=16 {\n"
	    "    %m = program_id() axis=0\n"
	    "    %n = program_id() axis=1\n"
	    "    %z0 = zeros() : [32, 32]\n"
	    "    %z1 = zeros() : [32, 32]\n"
	    "    %tot = for %j = 0 to 2 step 1 iter(%t = %z0) {\n"
	    "      %acc = for %k = 0 to 80 step 16 iter(%c = %z1) {\n"
	    "        %a = load %x[%m * 32, %k] : [32, 16] other=0.0\n"
	    "        %b = load %w[%k, %n * 32] : [16, 32] other=0.0\n"
	    "        %d = dot(%a, %b, %c) : [32, 32]\n"
	    "        yield %d\n"
	    "      }\n"
	    "      %t2 = add(%t, %acc) : [32, 32]\n"
	    "      yield %t2\n"
	    "    }\n"
	    "    store %y[%m * 32, %n * 32], %tot masked\n"
	    "  }\n",
	};
	static const char *const refs[] = {"%y = matmul(%x, %w)",
	    "%mm = matmul(%x, %w)\n  %y = add(%mm, %mm)"};

	for (int i = 0; i < 2; i++) {
		char src[2048], ref[512];
		Case c = {src, "shape-infer", 1e-12, ref};

		snprintf(src, sizeof src, "graph {\n  %%x = input() : (64, 80)\n"
		    "  %%w = input() : (80, 48)\n%s}\n", kernels[i]);
		snprintf(ref, sizeof ref, "graph {\n  %%x = input() : (64, 80)\n"
		    "  %%w = input() : (80, 48)\n  %s\n}\n", refs[i]);
		check_case(&c, threads, NTHREADS);
	}
}
END_TEST

/* A plan whose work passes 2^46 element operations (a 65536^3 matmul:
 * 2^48 multiply-adds) is refused when compiled, before anything runs or
 * is allocated; one under the limit compiles. */
/* check_case on tmpl with every "DT" replaced by element type dt. */
static void
check_type(const char *tmpl, const char *dt, const char *pipeline)
{
	char src[2048];
	size_t n = 0, l = strlen(dt);
	Case c = {src, pipeline, 0, NULL};

	for (const char *q = tmpl; *q && n + l + 1 < sizeof src; q++) {
		if (q[0] == 'D' && q[1] == 'T') {
			memcpy(src + n, dt, l);
			n += l;
			q++;
		} else {
			src[n++] = *q;
		}
	}
	ck_assert(n + l + 1 < sizeof src);
	src[n] = '\0';
	check_case(&c, threads, NTHREADS);
}

/* Every kind in i32 and i64, ragged edges included: integer kernels are
 * the reference's bits (integers are exact), on every thread count, with
 * split reductions' atomics, a matmul's integer dot and its epilogue,
 * and transposes of bools. */
START_TEST(test_exec_int_kinds)
{
	static const char *const tmpl =
	    "graph {\n"
	    "  %x = input() : (33, 97) DT\n"
	    "  %y = input() : (97,) DT\n"
	    "  %W = const() : (97, 7) DT\n"
	    "  %one = const() : () DT value=1\n"
	    "  kernel @k0 [elementwise] {\n"
	    "    %a = add(%x, %y)\n"
	    "    %m = mul(%a, %a)\n"
	    "    %n = neg(%m)\n"
	    "  }\n"
	    "  kernel @k1 [reduction] split=3 {\n"
	    "    %t = abs(%n)\n"
	    "    %s = sum(%t)\n"
	    "  }\n"
	    "  %m0 = max(%n) axis=0 keepdims=True\n"
	    "  kernel @k3 [row_reduction] {\n"
	    "    %rm = max(%x) axis=1 keepdims=True\n"
	    "    %sub = sub(%x, %rm)\n"
	    "    %ab = abs(%sub)\n"
	    "    %d1 = add(%ab, %one)\n"
	    "    %rs = sum(%x) axis=1 keepdims=True\n"
	    "    %q = div(%rs, %d1)\n"
	    "  }\n"
	    "  %tr = transpose(%x)\n"
	    "  %rsh = reshape(%x) shape=(97, 33)\n"
	    "  kernel @k5 [matmul_epilogue] BM=16 BN=16 BK=16 {\n"
	    "    %mm2 = matmul(%x, %W)\n"
	    "    %r = relu(%mm2)\n"
	    "    %colmax = max(%r) axis=0 keepdims=True\n"
	    "  }\n"
	    "  %b = input() : (5, 40, 3) bool\n"
	    "  %bt = transpose(%b) perm=(2, 0, 1)\n"
	    "  return %n, %s, %m0, %q, %tr, %rsh, %colmax, %bt\n"
	    "}\n";

	check_type(tmpl, "i32", "shape-infer,lower-tiled");
	check_type(tmpl, "i64", "shape-infer,lower-tiled");
	check_type(tmpl, "i64", "shape-infer,fuse,lower-tiled");
}
END_TEST

/* Kernels of several element types (tile_mixed.c) in f64 and f32, on
 * every thread count: floats cast to i64 and i32 (a split sum's integer
 * atomics), an integer compare choosing floats, an i32 row's max as
 * floats taken from a float row, an i32 dot (wrapping) cast to floats in
 * a matmul's epilogue (its loop's zeros typed by the float result), i32
 * with i64. */
START_TEST(test_exec_mixed_kinds)
{
	static const char *const tmpl =
	    "graph {\n"
	    "  %x = input() : (33, 97) DT\n"
	    "  %k = input() : (33, 97) i32\n"
	    "  %l = input() : (97,) i64\n"
	    "  %W = const() : (97, 7) i32\n"
	    "  %big = const() : () DT value=1000.0\n"
	    "  %wrap = const() : () i32 value=1000003\n"
	    "  kernel @k0 [elementwise] {\n"
	    "    %xs = mul(%x, %big)\n"
	    "    %xi = cast(%xs) to=i64\n"
	    "    %c = greater(%xi, %l)\n"
	    "    %w = where(%c, %xs, %x)\n"
	    "  }\n"
	    "  kernel @k1 [reduction] split=3 {\n"
	    "    %t = cast(%w) to=i32\n"
	    "    %s = sum(%t)\n"
	    "  }\n"
	    "  kernel @k3 [row_reduction] {\n"
	    "    %kf = cast(%k) to=DT\n"
	    "    %rm = max(%kf) axis=1 keepdims=True\n"
	    "    %sub = sub(%x, %rm)\n"
	    "    %rs = max(%sub) axis=1 keepdims=True\n"
	    "  }\n"
	    "  %kw = mul(%k, %wrap)\n"
	    "  kernel @k5 [matmul_epilogue] BM=16 BN=16 BK=16 {\n"
	    "    %mm = matmul(%kw, %W)\n"
	    "    %e = cast(%mm) to=DT\n"
	    "    %cm = max(%e) axis=0 keepdims=True\n"
	    "  }\n"
	    "  kernel @k6 [elementwise] {\n"
	    "    %ki = cast(%l) to=i32\n"
	    "    %kl = cast(%ki) to=i64\n"
	    "    %d = sub(%l, %kl)\n"
	    "  }\n"
	    "  return %w, %s, %rs, %cm, %d\n"
	    "}\n";

	check_both_types(tmpl, "shape-infer,lower-tiled", 0, 0);
}
END_TEST

/* An integer division by zero in a valid lane stops the run with the op
 * named at the kernel; zeros in masked lanes (a ragged tile's padding)
 * are not divisions. */
START_TEST(test_exec_int_div_zero)
{
	static const char *const src =
	    "graph {\n"
	    "  %x = input() : (3, 5) i32\n"
	    "  %y = input() : (5,) i32\n"
	    "  %q = div(%x, %y)\n"
	    "}\n";
	Graph *g = ck_pipeline(src, "shape-infer,lower-tiled");
	Tensor *vals;
	TilePlan *p;
	char *msg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&msg, &len);
	Diag d;
	int x, y;

	ck_assert_ptr_nonnull(g);
	diag_init(&d, "t.aicm", src, strlen(src), f);
	vals = xcalloc((size_t)g->nnodes, sizeof *vals);
	x = ir_lookup(g, "x");
	y = ir_lookup(g, "y");
	ck_assert_int_eq(exec_tensor_alloc(&vals[x], &g->nodes[x].type, 0), 0);
	ck_assert_int_eq(exec_tensor_alloc(&vals[y], &g->nodes[y].type, 0), 0);
	for (int i = 0; i < 15; i++)
		exec_seti(&vals[x], i, i - 7);
	for (int i = 0; i < 5; i++)
		exec_seti(&vals[y], i, i - 2);   /* -2, -1, 0, 1, 2 */
	p = exec_tile_compile(g, &d);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(exec_tile_run(p, vals, 1, &d), -1);
	fflush(f);
	ck_assert_msg(strstr(msg, "t.aicm:4:3: error: '%q': integer division by zero in 'div'"),
	    "%s", msg);
	/* no zero divisor: the 32x32 tiles' padded lanes divide by 0 unseen */
	exec_seti(&vals[y], 2, 3);
	ck_assert_int_eq(exec_tile_run(p, vals, 3, &d), 0);
	ck_assert_int_eq(exec_geti(&vals[ir_lookup(g, "q")], 0), 3);    /* -7 / -2 */
	ck_assert_int_eq(exec_geti(&vals[ir_lookup(g, "q")], 2), -1);   /* -5 / 3 */
	exec_tile_free(p);
	exec_tensors_free(vals, g->nnodes);
	free(vals);
	diag_free(&d);
	fclose(f);
	free(msg);
	ir_graph_free(g);
}
END_TEST

START_TEST(test_exec_work_limit)
{
	static const char *const srcs[] = {
	    "graph {\n  %x = input() : (65536, 65536)\n  %w = input() : (65536, 65536)\n"
	    "  %y = matmul(%x, %w)\n}\n",
	    "graph {\n  %x = input() : (4096, 4096)\n  %w = input() : (4096, 4096)\n"
	    "  %y = matmul(%x, %w)\n}\n"};

	for (int t = 0; t < 2; t++) {
		Graph *g = ck_pipeline(srcs[t], "shape-infer,lower-tiled");
		char *msg = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&msg, &len);
		Diag d;
		TilePlan *p;

		ck_assert_ptr_nonnull(g);
		diag_init(&d, "t.aicm", srcs[t], strlen(srcs[t]), f);
		p = exec_tile_compile(g, &d);
		fflush(f);
		if (t == 0) {
			ck_assert_ptr_null(p);
			ck_assert_msg(strstr(msg, "more than 2^46 element operations"), "%s", msg);
		} else {
			ck_assert_ptr_nonnull(p);
		}
		exec_tile_free(p);
		diag_free(&d);
		fclose(f);
		free(msg);
		ir_graph_free(g);
	}
}
END_TEST

Suite *
make_exec_suite(void)
{
	Suite *s = suite_create("exec");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_exec_f32_kinds);
	tcase_add_test(tc, test_exec_f32_elementwise_bitwise);
	tcase_add_test(tc, test_exec_in_place_loads);
	tcase_add_test(tc, test_exec_streamed_store);
	tcase_add_test(tc, test_exec_f32_matmul_epilogue);
	tcase_add_test(tc, test_exec_packed_tiles_reused);
	tcase_add_test(tc, test_exec_elementwise_chain);
	tcase_add_test(tc, test_exec_loop_carried_buffers);
	tcase_add_test(tc, test_exec_strip_runs);
	tcase_add_test(tc, test_exec_work_limit);
	tcase_add_test(tc, test_exec_int_kinds);
	tcase_add_test(tc, test_exec_int_div_zero);
	tcase_add_test(tc, test_exec_mixed_kinds);
	suite_add_tcase(s, tc);
	return s;
}
