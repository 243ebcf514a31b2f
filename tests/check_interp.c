/*
 * check_interp.c: the reference interpreter's kernels against values
 * worked out by hand (broadcast corners, keepdims, negative axes, batched
 * matmul, transposes, reshapes, mean, NaN), plus the pieces around it:
 * the random generator, the size limits, the error measure and the
 * numpy-style preview.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "exec.h"

/* A parsed graph with its values; sources filled from 'in' in source
 * order, each array holding the node's numel values. */
typedef struct Run {
	Graph *g;
	Tensor *v;
	int rc;
	char *msgs;
} Run;

static Run
run(const char *src, const double *const *in)
{
	Run r = {0};
	FILE *f;
	size_t n = 0;
	Diag d;
	int k = 0;

	r.g = ck_parse(src, NULL);
	ck_assert_ptr_nonnull(r.g);
	r.v = calloc((size_t)r.g->nnodes, sizeof *r.v);
	for (int i = 0; i < r.g->nnodes; i++) {
		const Node *nd = &r.g->nodes[i];

		if (ir_ops[nd->op].cls != OC_SOURCE || !in || !in[k])
			continue;
		ck_assert_int_eq(exec_tensor_alloc(&r.v[i], &nd->type, 0), 0);
		for (int64_t e = 0; e < r.v[i].numel; e++)
			exec_set(&r.v[i], e, in[k][e]);
		k++;
	}
	f = open_memstream(&r.msgs, &n);
	diag_init(&d, "t.aicm", src, strlen(src), f);
	r.rc = exec_interp(r.g, r.v, &d);
	diag_free(&d);
	fclose(f);
	return r;
}

static void
done(Run *r)
{
	exec_tensors_free(r->v, r->g->nnodes);
	free(r->v);
	ir_graph_free(r->g);
	free(r->msgs);
}

static const Tensor *
val(const Run *r, const char *name)
{
	int i = ir_lookup(r->g, name);

	ck_assert_int_ge(i, 0);
	return &r->v[i];
}

/* Equal shape, and every element equal to want within 1e-15 relative
 * (NaN to NaN, infinities exactly). */
static void
expect(const Run *r, const char *name, int rank, const int64_t *dim, const double *want)
{
	const Tensor *t = val(r, name);

	ck_assert_int_eq(r->rc, 0);
	ck_assert_int_eq(t->rank, rank);
	for (int k = 0; k < rank; k++)
		ck_assert_int_eq(t->dim[k], dim[k]);
	for (int64_t i = 0; i < t->numel; i++) {
		double got = exec_get(t, i), w = want[i];

		if (isnan(w))
			ck_assert_msg(isnan(got), "%%%s[%lld]: %g, want nan", name, (long long)i, got);
		else if (isinf(w))
			ck_assert_msg(got == w, "%%%s[%lld]: %g, want %g", name, (long long)i, got, w);
		else
			ck_assert_msg(fabs(got - w) <= 1e-15 * fmax(fabs(w), 1), "%%%s[%lld]: %.17g, "
			    "want %.17g", name, (long long)i, got, w);
	}
}

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define V(...) ((const double[]){__VA_ARGS__})
#define IN(...) ((const double *const[]){__VA_ARGS__, NULL})

/* ---- elementwise ----------------------------------------------------- */

START_TEST(test_interp_unary)
{
	Run r = run("graph {\n  %x = input() : (5,)\n"
	    "  %relu = relu(%x) : (5,)\n  %neg = neg(%x) : (5,)\n  %exp = exp(%x) : (5,)\n"
	    "  %log = log(%x) : (5,)\n  %sqrt = sqrt(%x) : (5,)\n  %tanh = tanh(%x) : (5,)\n"
	    "  %sig = sigmoid(%x) : (5,)\n  %abs = abs(%x) : (5,)\n"
	    "  return %relu, %neg, %exp, %log, %sqrt, %tanh, %sig, %abs\n}\n",
	    IN(V(-1, 0, 4, NAN, INFINITY)));

	expect(&r, "relu", 1, D(5), V(0, 0, 4, NAN, INFINITY));
	expect(&r, "neg", 1, D(5), V(1, 0, -4, NAN, -INFINITY));
	expect(&r, "exp", 1, D(5), V(0.36787944117144233, 1, 54.598150033144236, NAN, INFINITY));
	expect(&r, "log", 1, D(5), V(NAN, -INFINITY, 1.3862943611198906, NAN, INFINITY));
	expect(&r, "sqrt", 1, D(5), V(NAN, 0, 2, NAN, INFINITY));
	expect(&r, "tanh", 1, D(5), V(-0.76159415595576485, 0, 0.99932929973906703, NAN, 1));
	expect(&r, "sig", 1, D(5), V(0.2689414213699951, 0.5, 0.98201379003790845, NAN, 1));
	expect(&r, "abs", 1, D(5), V(1, 0, 4, NAN, INFINITY));
	done(&r);
}
END_TEST

/* The ops that issue 15 added as one op-table row and one scalar.h row
 * each: C's erf and sin, and 1 / x with IEEE's signed zeros. */
START_TEST(test_interp_unary_table_rows)
{
	Run r = run("graph {\n  %x = input() : (6,)\n"
	    "  %erf = erf(%x) : (6,)\n  %rec = reciprocal(%x) : (6,)\n  %sin = sin(%x) : (6,)\n"
	    "  return %erf, %rec, %sin\n}\n",
	    IN(V(-1, 0, 4, NAN, INFINITY, -0.0)));

	expect(&r, "erf", 1, D(6), V(-0.8427007929497149, 0, 0.9999999845827421, NAN, 1, -0.0));
	expect(&r, "rec", 1, D(6), V(-1, INFINITY, 0.25, NAN, 0, -INFINITY));
	expect(&r, "sin", 1, D(6), V(-0.8414709848078965, 0, -0.7568024953079282, NAN, NAN, -0.0));
	/* expect() takes -0 for 0: the signs of the zeros, by hand */
	ck_assert(signbit(exec_get(val(&r, "erf"), 5)) && !signbit(exec_get(val(&r, "erf"), 1)));
	ck_assert(signbit(exec_get(val(&r, "sin"), 5)) && !signbit(exec_get(val(&r, "sin"), 1)));
	done(&r);
}
END_TEST

START_TEST(test_interp_binary_same_shape)
{
	Run r = run("graph {\n  %a = input() : (2, 2)\n  %b = input() : (2, 2)\n"
	    "  %add = add(%a, %b) : (2, 2)\n  %sub = sub(%a, %b) : (2, 2)\n"
	    "  %mul = mul(%a, %b) : (2, 2)\n  %div = div(%a, %b) : (2, 2)\n"
	    "  return %add, %sub, %mul, %div\n}\n",
	    IN(V(1, 2, 3, 4), V(4, 0, -1, 0.5)));

	expect(&r, "add", 2, D(2, 2), V(5, 2, 2, 4.5));
	expect(&r, "sub", 2, D(2, 2), V(-3, 2, 4, 3.5));
	expect(&r, "mul", 2, D(2, 2), V(4, 0, -3, 2));
	expect(&r, "div", 2, D(2, 2), V(0.25, INFINITY, -3, 8));
	done(&r);
}
END_TEST

/* (2, 3) with (3,) and (2, 1); (2, 1) with (1, 3); () with (2, 2);
 * (3, 1, 2) with (2, 1) -> (3, 2, 2). */
START_TEST(test_interp_broadcast_corners)
{
	Run r = run("graph {\n  %m = input() : (2, 3)\n  %row = input() : (3,)\n"
	    "  %col = input() : (2, 1)\n  %r13 = input() : (1, 3)\n  %s = input() : ()\n"
	    "  %q = input() : (2, 2)\n  %t = input() : (3, 1, 2)\n  %u = input() : (2, 1)\n"
	    "  %a = add(%m, %row)\n  %b = sub(%m, %col)\n  %c = mul(%col, %r13)\n"
	    "  %d = div(%s, %q)\n  %e = add(%t, %u)\n  %f = sub(%row, %m)\n"
	    "  return %a, %b, %c, %d, %e, %f\n}\n",
	    IN(V(1, 2, 3, 4, 5, 6), V(10, 20, 30), V(100, 200), V(1, 2, 3), V(6),
	    V(1, 2, 3, 6), V(1, 2, 3, 4, 5, 6), V(10, 20)));
	Run ti;

	/* the graph is untyped: shape-infer is the tool's job, not the
	 * interpreter's; it must say so */
	ck_assert_int_eq(r.rc, -1);
	ck_assert_ptr_nonnull(strstr(r.msgs, "'%a' has no type; run shape-infer first"));
	done(&r);

	ti = run("graph {\n  %m = input() : (2, 3)\n  %row = input() : (3,)\n"
	    "  %col = input() : (2, 1)\n  %r13 = input() : (1, 3)\n  %s = input() : ()\n"
	    "  %q = input() : (2, 2)\n  %t = input() : (3, 1, 2)\n  %u = input() : (2, 1)\n"
	    "  %a = add(%m, %row) : (2, 3)\n  %b = sub(%m, %col) : (2, 3)\n"
	    "  %c = mul(%col, %r13) : (2, 3)\n  %d = div(%s, %q) : (2, 2)\n"
	    "  %e = add(%t, %u) : (3, 2, 2)\n  %f = sub(%row, %m) : (2, 3)\n"
	    "  return %a, %b, %c, %d, %e, %f\n}\n",
	    IN(V(1, 2, 3, 4, 5, 6), V(10, 20, 30), V(100, 200), V(1, 2, 3), V(6),
	    V(1, 2, 3, 6), V(1, 2, 3, 4, 5, 6), V(10, 20)));
	expect(&ti, "a", 2, D(2, 3), V(11, 22, 33, 14, 25, 36));
	expect(&ti, "b", 2, D(2, 3), V(-99, -98, -97, -196, -195, -194));
	expect(&ti, "c", 2, D(2, 3), V(100, 200, 300, 200, 400, 600));
	expect(&ti, "d", 2, D(2, 2), V(6, 3, 2, 1));
	/* e[i, j, k] = t[i, 0, k] + u[j, 0] */
	expect(&ti, "e", 3, D(3, 2, 2), V(11, 12, 21, 22, 13, 14, 23, 24, 15, 16, 25, 26));
	expect(&ti, "f", 2, D(2, 3), V(9, 18, 27, 6, 15, 24));
	done(&ti);
}
END_TEST

/* np.maximum / np.minimum propagate a NaN from either side. */
START_TEST(test_interp_maximum_nan)
{
	Run r = run("graph {\n  %a = input() : (4,)\n  %b = input() : (4,)\n"
	    "  %mx = maximum(%a, %b) : (4,)\n  %mn = minimum(%a, %b) : (4,)\n"
	    "  %mx2 = maximum(%b, %a) : (4,)\n  return %mx, %mn, %mx2\n}\n",
	    IN(V(1, NAN, 3, -INFINITY), V(2, 5, NAN, -1)));

	expect(&r, "mx", 1, D(4), V(2, NAN, NAN, -1));
	expect(&r, "mn", 1, D(4), V(1, NAN, NAN, -INFINITY));
	expect(&r, "mx2", 1, D(4), V(2, NAN, NAN, -1));
	done(&r);
}
END_TEST

/* ---- reductions ------------------------------------------------------ */

START_TEST(test_interp_reduce_axes)
{
	/* x = [[1, 2, 3], [4, 5, 6]] */
	Run r = run("graph {\n  %x = input() : (2, 3)\n"
	    "  %s0 = sum(%x) : (3,) axis=0\n  %s1 = sum(%x) : (2, 1) axis=-1 keepdims=True\n"
	    "  %sa = sum(%x) : ()\n  %sk = sum(%x) : (1, 1) keepdims=True\n"
	    "  %m0 = max(%x) : (1, 3) axis=-2 keepdims=True\n  %m1 = max(%x) : (2,) axis=1\n"
	    "  %ma = max(%x) : ()\n  %e0 = mean(%x) : (3,) axis=0\n"
	    "  %e1 = mean(%x) : (2, 1) axis=1 keepdims=True\n  %ea = mean(%x) : ()\n"
	    "  return %s0, %s1, %sa, %sk, %m0, %m1, %ma, %e0, %e1, %ea\n}\n",
	    IN(V(1, 2, 3, 4, 5, 6)));

	expect(&r, "s0", 1, D(3), V(5, 7, 9));
	expect(&r, "s1", 2, D(2, 1), V(6, 15));
	expect(&r, "sa", 0, D(0), V(21));
	expect(&r, "sk", 2, D(1, 1), V(21));
	expect(&r, "m0", 2, D(1, 3), V(4, 5, 6));
	expect(&r, "m1", 1, D(2), V(3, 6));
	expect(&r, "ma", 0, D(0), V(6));
	expect(&r, "e0", 1, D(3), V(2.5, 3.5, 4.5));
	expect(&r, "e1", 2, D(2, 1), V(2, 5));
	expect(&r, "ea", 0, D(0), V(3.5));
	done(&r);
}
END_TEST

/* The middle axis of a rank-3 tensor, and a rank-4 one by a negative axis. */
START_TEST(test_interp_reduce_middle)
{
	/* x[i, j, k] = 100 i + 10 j + k, shape (2, 3, 2) */
	Run r = run("graph {\n  %x = input() : (2, 3, 2)\n  %y = input() : (1, 2, 2, 1)\n"
	    "  %s = sum(%x) : (2, 2) axis=1\n  %m = max(%x) : (2, 1, 2) axis=-2 keepdims=True\n"
	    "  %t = mean(%y) : (1, 2, 1) axis=-2\n  return %s, %m, %t\n}\n",
	    IN(V(0, 1, 10, 11, 20, 21, 100, 101, 110, 111, 120, 121), V(1, 2, 3, 5)));

	expect(&r, "s", 2, D(2, 2), V(30, 33, 330, 333));
	expect(&r, "m", 3, D(2, 1, 2), V(20, 21, 120, 121));
	expect(&r, "t", 3, D(1, 2, 1), V(1.5, 4));
	done(&r);
}
END_TEST

/* np.max and np.sum propagate NaN; -inf is a value like any other. */
START_TEST(test_interp_reduce_nan)
{
	Run r = run("graph {\n  %x = input() : (2, 3)\n"
	    "  %m = max(%x) : (2,) axis=1\n  %s = sum(%x) : (3,) axis=0\n"
	    "  %a = max(%x) : ()\n  return %m, %s, %a\n}\n",
	    IN(V(NAN, 1, 2, -INFINITY, -INFINITY, -INFINITY)));

	expect(&r, "m", 1, D(2), V(NAN, -INFINITY));
	expect(&r, "s", 1, D(3), V(NAN, -INFINITY, -INFINITY));
	expect(&r, "a", 0, D(0), V(NAN));
	done(&r);
}
END_TEST

/* f32 sums and dots accumulate in f64 and round once: 1e8 + 1 - 1e8 is 1,
 * where an f32 accumulator would give 0. */
START_TEST(test_interp_f32_accumulates_in_f64)
{
	Run r = run("graph {\n  %x = input() : (3,) f32\n  %w = input() : (3, 1) f32\n"
	    "  %s = sum(%x) : () f32\n  %e = mean(%x) : () f32\n"
	    "  %r = reshape(%x) : (1, 3) f32 shape=(1, 3)\n  %d = matmul(%r, %w) : (1, 1) f32\n"
	    "  return %s, %e, %d\n}\n",
	    IN(V(1e8, 1, -1e8), V(1, 1, 1)));

	ck_assert_int_eq(val(&r, "s")->dt, DT_F32);
	expect(&r, "s", 0, D(0), V(1));
	expect(&r, "e", 0, D(0), V((double)(float)(1.0 / 3)));
	expect(&r, "d", 2, D(1, 1), V(1));
	done(&r);
}
END_TEST

/* ---- matmul ---------------------------------------------------------- */

START_TEST(test_interp_matmul)
{
	/* [[1, 2], [3, 4], [5, 6]] x [[1, 0, 2, 1], [0, 1, 3, -1]] */
	Run r = run("graph {\n  %a = input() : (3, 2)\n  %b = input() : (2, 4)\n"
	    "  %c = matmul(%a, %b) : (3, 4)\n}\n",
	    IN(V(1, 2, 3, 4, 5, 6), V(1, 0, 2, 1, 0, 1, 3, -1)));

	expect(&r, "c", 2, D(3, 4), V(1, 2, 8, -1, 3, 4, 18, -1, 5, 6, 28, -1));
	done(&r);
}
END_TEST

START_TEST(test_interp_matmul_batched)
{
	/* batch 0: [[1, 2], [3, 4]] x [[1], [1]]; batch 1: [[0, 1], [1, 0]] x [[5], [7]] */
	Run r = run("graph {\n  %a = input() : (2, 2, 2)\n  %b = input() : (2, 2, 1)\n"
	    "  %c = matmul(%a, %b) : (2, 2, 1)\n}\n",
	    IN(V(1, 2, 3, 4, 0, 1, 1, 0), V(1, 1, 5, 7)));

	expect(&r, "c", 3, D(2, 2, 1), V(3, 7, 7, 5));
	done(&r);
}
END_TEST

/* ---- layout ---------------------------------------------------------- */

START_TEST(test_interp_transpose)
{
	/* x[i, j, k] = 100 i + 10 j + k, shape (2, 3, 2) */
	Run r = run("graph {\n  %x = input() : (2, 3, 2)\n  %v = input() : (3,)\n"
	    "  %d = transpose(%x) : (2, 2, 3)\n"
	    "  %p = transpose(%x) : (2, 2, 3) perm=(2, 0, 1)\n"
	    "  %n = transpose(%x) : (3, 2, 2) perm=(-2, -1, 0)\n"
	    "  %one = transpose(%v) : (3,)\n  return %d, %p, %n, %one\n}\n",
	    IN(V(0, 1, 10, 11, 20, 21, 100, 101, 110, 111, 120, 121), V(7, 8, 9)));

	/* default: swap the last two, d[i, k, j] = x[i, j, k] */
	expect(&r, "d", 3, D(2, 2, 3), V(0, 10, 20, 1, 11, 21, 100, 110, 120, 101, 111, 121));
	/* p[k, i, j] = x[i, j, k] */
	expect(&r, "p", 3, D(2, 2, 3), V(0, 10, 20, 100, 110, 120, 1, 11, 21, 101, 111, 121));
	/* perm (1, 2, 0): n[j, k, i] = x[i, j, k] */
	expect(&r, "n", 3, D(3, 2, 2), V(0, 100, 1, 101, 10, 110, 11, 111, 20, 120, 21, 121));
	expect(&r, "one", 1, D(3), V(7, 8, 9));
	done(&r);
}
END_TEST

START_TEST(test_interp_reshape)
{
	Run r = run("graph {\n  %x = input() : (2, 3)\n"
	    "  %a = reshape(%x) : (3, 2) shape=(3, 2)\n"
	    "  %b = reshape(%x) : (6, 1) shape=(-1, 1)\n"
	    "  %t = transpose(%x) : (3, 2)\n  %c = reshape(%t) : (6,) shape=(6,)\n"
	    "  return %a, %b, %c\n}\n",
	    IN(V(1, 2, 3, 4, 5, 6)));

	expect(&r, "a", 2, D(3, 2), V(1, 2, 3, 4, 5, 6));
	expect(&r, "b", 2, D(6, 1), V(1, 2, 3, 4, 5, 6));
	expect(&r, "c", 1, D(6), V(1, 4, 2, 5, 3, 6));
	done(&r);
}
END_TEST

/* ---- copy ops (interp_copy.c) ---------------------------------------- */

START_TEST(test_interp_concat)
{
	Run r = run("graph {\n  %a = input() : (2, 2)\n  %b = input() : (2, 1)\n"
	    "  %c = input() : (1, 2)\n"
	    "  %x = concat(%a, %b, %a) : (2, 5) axis=-1\n"
	    "  %y = concat(%a, %c) : (3, 2) axis=0\n  %one = concat(%c) : (1, 2) axis=1\n"
	    "  return %x, %y, %one\n}\n",
	    IN(V(1, 2, 3, 4), V(5, 6), V(7, 8)));

	expect(&r, "x", 2, D(2, 5), V(1, 2, 5, 1, 2, 3, 4, 6, 3, 4));
	expect(&r, "y", 2, D(3, 2), V(1, 2, 3, 4, 7, 8));
	expect(&r, "one", 2, D(1, 2), V(7, 8));
	done(&r);
}
END_TEST

START_TEST(test_interp_slice)
{
	/* x[i, j] = 10 i + j, shape (3, 5) */
	Run r = run("graph {\n  %x = input() : (3, 5)\n"
	    "  %a = slice(%x) : (2, 5) starts=(1,) ends=(100,)\n"
	    "  %b = slice(%x) : (3, 2) starts=(-1, 4) ends=(-100, -9223372036854775807) "
	    "axes=(0, 1) steps=(-1, -3)\n"
	    "  %c = slice(%x) : (3, 2) starts=(-4,) ends=(-1,) axes=(-1,) steps=(2,)\n"
	    "  %d = slice(%x) : (1, 1) starts=(9, 2) ends=(-9223372036854775807, 1) "
	    "steps=(-5, -9223372036854775807)\n"
	    "  return %a, %b, %c, %d\n}\n",
	    IN(V(0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24)));

	expect(&r, "a", 2, D(2, 5), V(10, 11, 12, 13, 14, 20, 21, 22, 23, 24));
	/* rows 2, 1, 0 (start -1 is row 2, end clamps to -1); columns 4, 1 */
	expect(&r, "b", 2, D(3, 2), V(24, 21, 14, 11, 4, 1));
	/* columns 1 and 3 */
	expect(&r, "c", 2, D(3, 2), V(1, 3, 11, 13, 21, 23));
	/* start 9 clamps to row 2; one step of INT64_MIN + 1 */
	expect(&r, "d", 2, D(1, 1), V(22));
	done(&r);
}
END_TEST

START_TEST(test_interp_pad)
{
	Run r = run("graph {\n  %x = input() : (2, 3)\n  %i = input() : (3,) i64\n"
	    "  %a = pad(%x) : (3, 5) pads=(1, 0, 0, 2) value=-1.5\n"
	    "  %b = pad(%x) : (1, 2) pads=(0, -1, -1, 0)\n"
	    "  %c = pad(%i) : (5,) i64 pads=(1, 1) value=-9007199254740993\n"
	    "  return %a, %b, %c\n}\n",
	    IN(V(1, 2, 3, 4, 5, 6), V(7, 8, 9)));

	expect(&r, "a", 2, D(3, 5), V(-1.5, -1.5, -1.5, -1.5, -1.5, 1, 2, 3, -1.5, -1.5, 4, 5, 6,
	    -1.5, -1.5));
	/* negative pads crop: row 0, columns 1 and 2 */
	expect(&r, "b", 2, D(1, 2), V(2, 3));
	/* an integer value= is exact past 2^53 */
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(exec_geti(val(&r, "c"), 0), -9007199254740993LL);
	ck_assert_int_eq(exec_geti(val(&r, "c"), 2), 8);
	ck_assert_int_eq(exec_geti(val(&r, "c"), 4), -9007199254740993LL);
	done(&r);
}
END_TEST

START_TEST(test_interp_gather)
{
	/* x[i, j] = 10 i + j, shape (3, 4) */
	Run r = run("graph {\n  %x = input() : (3, 4)\n  %i = input() : (2, 2) i64\n"
	    "  %k = input() : () i32\n"
	    "  %a = gather(%x, %i) : (2, 2, 4) axis=0\n"
	    "  %b = gather(%x, %i) : (3, 2, 2) axis=-1\n"
	    "  %c = gather(%x, %k) : (3,) axis=1\n"
	    "  return %a, %b, %c\n}\n",
	    IN(V(0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23), V(0, -1, 2, -3), V(-2)));

	expect(&r, "a", 3, D(2, 2, 4), V(0, 1, 2, 3, 20, 21, 22, 23, 20, 21, 22, 23, 0, 1, 2,
	    3));
	expect(&r, "b", 3, D(3, 2, 2), V(0, 3, 2, 1, 10, 13, 12, 11, 20, 23, 22, 21));
	expect(&r, "c", 1, D(3), V(2, 12, 22));
	done(&r);
}
END_TEST

START_TEST(test_interp_gather_out_of_range)
{
	Run r = run("graph {\n  %x = input() : (3, 4)\n  %i = input() : (2, 2) i64\n"
	    "  %a = gather(%x, %i) : (3, 2, 2) axis=1\n}\n",
	    IN(V(0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23), V(0, 3, -4, -5)));

	ck_assert_int_eq(r.rc, -1);
	ck_assert_msg(strstr(r.msgs, "t.aicm:4:8: error: '%a': 'gather' index -5 at [1, 1] of "
	    "its indices is out of range for axis 1 of size 4") != NULL, "%s", r.msgs);
	done(&r);
}
END_TEST

START_TEST(test_interp_expand)
{
	Run r = run("graph {\n  %x = input() : (2, 1)\n"
	    "  %a = expand(%x) : (2, 2, 3) shape=(2, 1, 3)\n"
	    "  %b = expand(%x) : (2, 1) shape=(1,)\n  return %a, %b\n}\n",
	    IN(V(1, 2)));

	expect(&r, "a", 3, D(2, 2, 3), V(1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2));
	expect(&r, "b", 2, D(2, 1), V(1, 2));
	done(&r);
}
END_TEST

/* ---- the interpreter itself ------------------------------------------ */

START_TEST(test_interp_missing_source)
{
	Run r = run("graph {\n  %x = input() : (2,)\n  %y = neg(%x) : (2,)\n}\n", NULL);

	ck_assert_int_eq(r.rc, -1);
	ck_assert_ptr_nonnull(strstr(r.msgs, "t.aicm:2:3: error: '%x' has no value of type "
	    "(2,) f64"));
	done(&r);
}
END_TEST

/* A rerun reuses the tensors it made and gives the same answer. */
START_TEST(test_interp_rerun)
{
	Run r = run("graph {\n  %x = input() : (2,)\n  %y = exp(%x) : (2,)\n}\n",
	    IN(V(0, 1)));
	const Tensor *y = val(&r, "y");
	void *p = y->data;
	Diag d;

	ck_assert_int_eq((uintptr_t)p % EXEC_ALIGN, 0);
	diag_init(&d, "t.aicm", "", 0, stderr);
	ck_assert_int_eq(exec_interp(r.g, r.v, &d), 0);
	diag_free(&d);
	ck_assert_ptr_eq(y->data, p);
	expect(&r, "y", 1, D(2), V(1, 2.7182818284590451));
	done(&r);
}
END_TEST

/* ---- generator, limits, comparison, preview --------------------------- */

/* The values docs/run.md's formula gives (worked out in Python). */
START_TEST(test_interp_random)
{
	Type t64 = {.rank = 1, .dt = DT_F64, .dim = {3}}, t32 = {.rank = 1, .dt = DT_F32, .dim = {2}};
	Tensor a, b, c;

	ck_assert_uint_eq(exec_fnv1a64("x"), 0xaf63f54c86021707ULL);
	exec_tensor_alloc(&a, &t64, 0);
	exec_tensor_alloc(&b, &t32, 0);
	exec_tensor_alloc(&c, &t64, 0);
	exec_fill_random(&a, 0, "x");
	ck_assert(exec_get(&a, 0) == -0.5975834313129111);
	ck_assert(exec_get(&a, 1) == 0.617053524968139);
	ck_assert(exec_get(&a, 2) == 0.28664726835009247);
	exec_fill_random(&b, 7, "x");
	ck_assert(exec_get(&b, 0) == 0.10066103935241699);
	ck_assert(exec_get(&b, 1) == 0.12715494632720947);
	exec_fill_random(&c, 0, "y");   /* another name, another stream */
	ck_assert(exec_get(&c, 0) != exec_get(&a, 0));
	exec_fill_splat(&c, 0.25);
	ck_assert(exec_get(&c, 2) == 0.25);
	exec_tensor_free(&a);
	exec_tensor_free(&b);
	exec_tensor_free(&c);
}
END_TEST

START_TEST(test_interp_limits)
{
	Graph *g = ck_parse("graph {\n  %x = input() : (1000, 1000)\n"
	    "  %y = relu(%x) : (1000, 1000)\n  %z = sum(%y) : ()\n}\n", NULL);
	const Graph *gs[1] = {g};
	ExecLimits big = {8000000, 16000008}, small = {7999999, 0}, tot = {0, 16000007};
	char *m = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&m, &n);
	Diag d;
	Type huge = {.rank = 4, .dt = DT_F64, .dim = {1 << 30, 1 << 30, 1 << 30, 1 << 30}};
	Tensor t;

	diag_init(&d, "t.aicm", "", 0, f);
	ck_assert_int_eq(exec_check_limits(gs, 1, &big, &d), 0);
	ck_assert_int_eq(exec_check_limits(gs, 1, &small, &d), -1);
	ck_assert_int_eq(exec_check_limits(gs, 1, &tot, &d), -1);
	fflush(f);
	ck_assert_ptr_nonnull(strstr(m, "t.aicm:2:3: error: '%x' (1000, 1000) f64 needs 8000000 "
	    "bytes, more than --max-bytes=7999999"));
	ck_assert_ptr_nonnull(strstr(m, "t.aicm:3:3: error: '%y' (1000, 1000) f64 needs"));
	ck_assert_ptr_nonnull(strstr(m, "error: the tensors need 16000008 bytes together, more "
	    "than --max-total-bytes=16000007; the largest is '%x' (1000, 1000) f64 at 8000000 "
	    "bytes"));
	diag_free(&d);
	fclose(f);
	free(m);
	ir_graph_free(g);
	ck_assert_int_eq(exec_type_bytes(&huge), -1);
	ck_assert_int_eq(exec_tensor_alloc(&t, &huge, 0), -1);
	ck_assert_ptr_null(t.data);
}
END_TEST

static Tensor
vec(const double *v, int n)
{
	Type ty = {.rank = 1, .dt = DT_F64, .dim = {n}};
	Tensor t;

	exec_tensor_alloc(&t, &ty, 0);
	for (int i = 0; i < n; i++)
		exec_set(&t, i, v[i]);
	return t;
}

START_TEST(test_interp_compare)
{
	Tensor a = vec(V(1, NAN, INFINITY, 10), 4), b = vec(V(1, NAN, INFINITY, 9.5), 4);
	Tensor c = vec(V(0.5, 0.25), 2), e = vec(V(0.5, 0.5), 2);
	Tensor f = vec(V(1, NAN), 2), h = vec(V(1, 2), 2), i = vec(V(-INFINITY), 1);
	Tensor j = vec(V(INFINITY), 1);
	ExecErr r;

	r = exec_compare(&a, &b);        /* 0.5 / max(9.5, 1) */
	ck_assert(r.maxabs == 0.5);
	ck_assert(fabs(r.rel - 0.5 / 9.5) < 1e-16);
	ck_assert_int_eq(r.worst, 3);
	r = exec_compare(&c, &e);        /* small values: divided by 1 */
	ck_assert(r.rel == 0.25);
	ck_assert_int_eq(r.worst, 1);
	r = exec_compare(&e, &e);
	ck_assert(r.rel == 0 && r.worst == -1);
	r = exec_compare(&f, &h);        /* NaN against a number */
	ck_assert(isinf(r.rel) && r.worst == 1);
	r = exec_compare(&i, &j);        /* -inf against inf */
	ck_assert(isinf(r.rel) && r.worst == 0);
	exec_tensor_free(&a);
	exec_tensor_free(&b);
	exec_tensor_free(&c);
	exec_tensor_free(&e);
	exec_tensor_free(&f);
	exec_tensor_free(&h);
	exec_tensor_free(&i);
	exec_tensor_free(&j);
}
END_TEST

static char *
preview(const Tensor *t)
{
	char *m = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&m, &n);

	exec_print_preview(f, t);
	fclose(f);
	return m;
}

START_TEST(test_interp_preview)
{
	Type t23 = {.rank = 2, .dt = DT_F64, .dim = {2, 3}};
	Type t2000 = {.rank = 1, .dt = DT_F32, .dim = {2000}};
	Type t3d = {.rank = 3, .dt = DT_F64, .dim = {10, 10, 11}};
	Type t30 = {.rank = 1, .dt = DT_F64, .dim = {30}};
	Type t0 = {.rank = 0, .dt = DT_F64};
	Tensor a, b, c, d, e;
	char *s;

	exec_tensor_alloc(&a, &t23, 0);
	exec_tensor_alloc(&b, &t2000, 0);
	exec_tensor_alloc(&c, &t3d, 0);
	exec_tensor_alloc(&d, &t30, 0);
	exec_tensor_alloc(&e, &t0, 0);
	for (int i = 0; i < 6; i++)
		exec_set(&a, i, i == 4 ? NAN : i * 1.5 - 2);
	for (int i = 0; i < 2000; i++)
		exec_set(&b, i, i);
	for (int i = 0; i < 1100; i++)
		exec_set(&c, i, i);
	for (int i = 0; i < 30; i++)
		exec_set(&d, i, i + 0.125);
	exec_set(&e, 0, -0.0);
	s = preview(&a);
	ck_assert_str_eq(s, "[[  -2 -0.5    1]\n [ 2.5  nan  5.5]]\n");
	free(s);
	s = preview(&b);
	ck_assert_str_eq(s, "[   0    1    2 ... 1997 1998 1999]\n");
	free(s);
	/* numpy: blocks apart by a blank line, '...' rows and blocks */
	s = preview(&c);
	ck_assert_str_eq(s,
	    "[[[   0    1    2 ...    8    9   10]\n"
	    "  [  11   12   13 ...   19   20   21]\n"
	    "  [  22   23   24 ...   30   31   32]\n"
	    "  ...\n"
	    "  [  77   78   79 ...   85   86   87]\n"
	    "  [  88   89   90 ...   96   97   98]\n"
	    "  [  99  100  101 ...  107  108  109]]\n"
	    "\n"
	    " [[ 110  111  112 ...  118  119  120]\n"
	    "  [ 121  122  123 ...  129  130  131]\n"
	    "  [ 132  133  134 ...  140  141  142]\n"
	    "  ...\n"
	    "  [ 187  188  189 ...  195  196  197]\n"
	    "  [ 198  199  200 ...  206  207  208]\n"
	    "  [ 209  210  211 ...  217  218  219]]\n"
	    "\n"
	    " [[ 220  221  222 ...  228  229  230]\n"
	    "  [ 231  232  233 ...  239  240  241]\n"
	    "  [ 242  243  244 ...  250  251  252]\n"
	    "  ...\n"
	    "  [ 297  298  299 ...  305  306  307]\n"
	    "  [ 308  309  310 ...  316  317  318]\n"
	    "  [ 319  320  321 ...  327  328  329]]\n"
	    "\n"
	    " ...\n"
	    "\n"
	    " [[ 770  771  772 ...  778  779  780]\n"
	    "  [ 781  782  783 ...  789  790  791]\n"
	    "  [ 792  793  794 ...  800  801  802]\n"
	    "  ...\n"
	    "  [ 847  848  849 ...  855  856  857]\n"
	    "  [ 858  859  860 ...  866  867  868]\n"
	    "  [ 869  870  871 ...  877  878  879]]\n"
	    "\n"
	    " [[ 880  881  882 ...  888  889  890]\n"
	    "  [ 891  892  893 ...  899  900  901]\n"
	    "  [ 902  903  904 ...  910  911  912]\n"
	    "  ...\n"
	    "  [ 957  958  959 ...  965  966  967]\n"
	    "  [ 968  969  970 ...  976  977  978]\n"
	    "  [ 979  980  981 ...  987  988  989]]\n"
	    "\n"
	    " [[ 990  991  992 ...  998  999 1000]\n"
	    "  [1001 1002 1003 ... 1009 1010 1011]\n"
	    "  [1012 1013 1014 ... 1020 1021 1022]\n"
	    "  ...\n"
	    "  [1067 1068 1069 ... 1075 1076 1077]\n"
	    "  [1078 1079 1080 ... 1086 1087 1088]\n"
	    "  [1089 1090 1091 ... 1097 1098 1099]]]\n");
	free(s);
	/* wrapped at 75 columns, continuation lines indented by one */
	s = preview(&d);
	ck_assert_str_eq(s,
	    "[ 0.125  1.125  2.125  3.125  4.125  5.125  6.125  7.125  8.125  9.125\n"
	    " 10.125 11.125 12.125 13.125 14.125 15.125 16.125 17.125 18.125 19.125\n"
	    " 20.125 21.125 22.125 23.125 24.125 25.125 26.125 27.125 28.125 29.125]\n");
	free(s);
	s = preview(&e);
	ck_assert_str_eq(s, "0\n");
	free(s);
	exec_tensor_free(&a);
	exec_tensor_free(&b);
	exec_tensor_free(&c);
	exec_tensor_free(&d);
	exec_tensor_free(&e);
}
END_TEST

START_TEST(test_interp_stats)
{
	Tensor a = vec(V(1, -2, 3.5), 3), b = vec(V(1, NAN, 3), 3);
	double s, lo, hi;

	exec_stats(&a, &s, &lo, &hi);
	ck_assert(s == 2.5 && lo == -2 && hi == 3.5);
	exec_stats(&b, &s, &lo, &hi);
	ck_assert(isnan(s) && isnan(lo) && isnan(hi));
	exec_tensor_free(&a);
	exec_tensor_free(&b);
}
END_TEST

Suite *
make_interp_suite(void)
{
	Suite *s = suite_create("interp");
	TCase *k = tcase_create("kernels"), *x = tcase_create("interp"),
	    *o = tcase_create("around");

	tcase_add_test(k, test_interp_unary);
	tcase_add_test(k, test_interp_unary_table_rows);
	tcase_add_test(k, test_interp_binary_same_shape);
	tcase_add_test(k, test_interp_broadcast_corners);
	tcase_add_test(k, test_interp_maximum_nan);
	tcase_add_test(k, test_interp_reduce_axes);
	tcase_add_test(k, test_interp_reduce_middle);
	tcase_add_test(k, test_interp_reduce_nan);
	tcase_add_test(k, test_interp_f32_accumulates_in_f64);
	tcase_add_test(k, test_interp_matmul);
	tcase_add_test(k, test_interp_matmul_batched);
	tcase_add_test(k, test_interp_transpose);
	tcase_add_test(k, test_interp_reshape);
	tcase_add_test(k, test_interp_concat);
	tcase_add_test(k, test_interp_slice);
	tcase_add_test(k, test_interp_pad);
	tcase_add_test(k, test_interp_gather);
	tcase_add_test(k, test_interp_gather_out_of_range);
	tcase_add_test(k, test_interp_expand);
	tcase_add_test(x, test_interp_missing_source);
	tcase_add_test(x, test_interp_rerun);
	tcase_add_test(o, test_interp_random);
	tcase_add_test(o, test_interp_limits);
	tcase_add_test(o, test_interp_compare);
	tcase_add_test(o, test_interp_preview);
	tcase_add_test(o, test_interp_stats);
	suite_add_tcase(s, k);
	suite_add_tcase(s, x);
	suite_add_tcase(s, o);
	return s;
}
