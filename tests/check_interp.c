/*
 * check_interp.c: the reference interpreter's kernels against values
 * worked out by hand (broadcast corners, keepdims, negative axes, batched
 * matmul, transposes, reshapes, mean, NaN), plus the pieces around it:
 * the random generator, the size limits, the error measure and the
 * numpy-style preview; and the same for i32, i64 and bool (wrapping,
 * truncating division, division by zero, exact compare and printing).
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
run_(const char *src, const double *const *in, bool infer)
{
	Run r = {0};
	FILE *f;
	size_t n = 0;
	Diag d;
	int k = 0;

	r.g = ck_parse(src, NULL);
	ck_assert_ptr_nonnull(r.g);
	r.v = calloc((size_t)r.g->nnodes, sizeof *r.v);
	/* with infer, results written without a type get the inferred one */
	for (int i = 0; infer && i < r.g->nnodes; i++) {
		char err[IR_ERR_MAX];
		Loc at;

		if (r.g->nodes[i].type.rank < 0)
			ck_assert_msg(ir_infer_type(r.g, i, &r.g->nodes[i].type, err, &at) == 0, "%s",
			    err);
	}
	for (int i = 0; i < r.g->nnodes; i++) {
		const Node *nd = &r.g->nodes[i];

		if (nd->op == OP_CONST && (nd->at.set & (AB(VALUE) | AB(VALUES)))) {
			/* a const with its data: value= or values=, exact for
			 * integers */
			bool ints = !ir_dtype_is_float(nd->type.dt);

			ck_assert_int_eq(exec_tensor_alloc(&r.v[i], &nd->type, 0), 0);
			for (int64_t e = 0; e < r.v[i].numel; e++) {
				bool splat = nd->at.set & AB(VALUE);

				if (ints)
					exec_seti(&r.v[i], e, splat ? nd->at.ivalue : nd->at.ivalues[e]);
				else
					exec_set(&r.v[i], e, splat ? nd->at.value : nd->at.values[e]);
			}
			continue;
		}
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

static Run
run(const char *src, const double *const *in)
{
	return run_(src, in, false);
}

/* run, shape-inferring the results written without a type. */
static Run
runt(const char *src, const double *const *in)
{
	return run_(src, in, true);
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

/* Issue 16's unary rows: round is half to even, sign keeps NaN and
 * makes -0 +0 (numpy), isnan and not give bools. */
START_TEST(test_interp_unary_v2_rows)
{
	Run r = runt("graph {\n  %x = input() : (8,)\n  %c = input() : (8,) bool\n"
	    "  %cos = cos(%x)\n  %floor = floor(%x)\n  %ceil = ceil(%x)\n"
	    "  %round = round(%x)\n  %sign = sign(%x)\n  %isnan = isnan(%x)\n  %not = not(%c)\n"
	    "  return %cos, %floor, %ceil, %round, %sign, %isnan, %not\n}\n",
	    IN(V(0.5, 1.5, 2.5, -0.5, -2.5, -0.0, NAN, -INFINITY), V(1, 0, 1, 1, 0, 0, 1, 0)));

	expect(&r, "cos", 1, D(8), V(0.87758256189037276, 0.070737201667702906,
	    -0.80114361554693371, 0.87758256189037276, -0.80114361554693371, 1, NAN, NAN));
	expect(&r, "floor", 1, D(8), V(0, 1, 2, -1, -3, -0.0, NAN, -INFINITY));
	expect(&r, "ceil", 1, D(8), V(1, 2, 3, -0.0, -2, -0.0, NAN, -INFINITY));
	expect(&r, "round", 1, D(8), V(0, 2, 2, -0.0, -2, -0.0, NAN, -INFINITY));
	expect(&r, "sign", 1, D(8), V(1, 1, 1, -1, -1, 0, NAN, -1));
	expect(&r, "isnan", 1, D(8), V(0, 0, 0, 0, 0, 0, 1, 0));
	expect(&r, "not", 1, D(8), V(0, 1, 0, 0, 1, 1, 0, 1));
	ck_assert_int_eq(val(&r, "isnan")->dt, DT_BOOL);
	ck_assert(signbit(exec_get(val(&r, "round"), 3)));      /* round(-0.5) is -0 */
	ck_assert(!signbit(exec_get(val(&r, "sign"), 5)));      /* sign(-0) is +0 */
	done(&r);
}
END_TEST

/* mod takes the divisor's sign, a zero result too (numpy.mod); fmod the
 * dividend's; by zero a float gives NaN. */
START_TEST(test_interp_mod_signs)
{
	Run r = runt("graph {\n  %a = input() : (8,)\n  %b = input() : (8,)\n"
	    "  %mod = mod(%a, %b)\n  %fmod = fmod(%a, %b)\n  %pow = pow(%a, %b)\n"
	    "  return %mod, %fmod, %pow\n}\n",
	    IN(V(-0.0, 0.0, 3, -3, 1, -1, 5.5, 2), V(2, -2, -3, 3, INFINITY, INFINITY, 0, -2)));

	expect(&r, "mod", 1, D(8), V(0, -0.0, -0.0, 0, 1, INFINITY, NAN, -0.0));
	expect(&r, "fmod", 1, D(8), V(-0.0, 0, 0, -0.0, 1, -1, NAN, 0));
	expect(&r, "pow", 1, D(8), V(0, INFINITY, 1.0 / 27, -27, 1, 1, 1, 0.25));
	for (int i = 0; i < 4; i++)
		ck_assert_msg(!!signbit(exec_get(val(&r, "mod"), i)) == (i == 1 || i == 2),
		    "mod's zero %d has the wrong sign", i);
	ck_assert(signbit(exec_get(val(&r, "mod"), 7)));
	ck_assert(signbit(exec_get(val(&r, "fmod"), 0)) && signbit(exec_get(val(&r, "fmod"), 3)));
	done(&r);
}
END_TEST

/* The compares give bools (NaN: only 'not equal' holds, so all five are
 * 0); and, or, xor on bools; where broadcasts all three operands. */
START_TEST(test_interp_compare_where)
{
	Run r = runt("graph {\n  %a = input() : (2, 3)\n  %b = input() : (3,)\n"
	    "  %c = input() : (2, 1) bool\n"
	    "  %eq = equal(%a, %b)\n  %lt = less(%a, %b)\n  %le = less_equal(%a, %b)\n"
	    "  %gt = greater(%a, %b)\n  %ge = greater_equal(%a, %b)\n"
	    "  %and = and(%lt, %c)\n  %or = or(%gt, %c)\n  %xor = xor(%le, %c)\n"
	    "  %w = where(%c, %a, %b)\n  %w2 = where(%lt, %a, %b)\n"
	    "  return %eq, %lt, %le, %gt, %ge, %and, %or, %xor, %w, %w2\n}\n",
	    IN(V(1, 2, NAN, 4, -5, 6), V(1, 3, 0), V(1, 0)));

	expect(&r, "eq", 2, D(2, 3), V(1, 0, 0, 0, 0, 0));
	expect(&r, "lt", 2, D(2, 3), V(0, 1, 0, 0, 1, 0));
	expect(&r, "le", 2, D(2, 3), V(1, 1, 0, 0, 1, 0));
	expect(&r, "gt", 2, D(2, 3), V(0, 0, 0, 1, 0, 1));
	expect(&r, "ge", 2, D(2, 3), V(1, 0, 0, 1, 0, 1));
	expect(&r, "and", 2, D(2, 3), V(0, 1, 0, 0, 0, 0));
	expect(&r, "or", 2, D(2, 3), V(1, 1, 1, 1, 0, 1));
	expect(&r, "xor", 2, D(2, 3), V(0, 0, 1, 0, 1, 0));
	expect(&r, "w", 2, D(2, 3), V(1, 2, NAN, 1, 3, 0));
	expect(&r, "w2", 2, D(2, 3), V(1, 2, 0, 1, -5, 0));
	ck_assert_int_eq(val(&r, "eq")->dt, DT_BOOL);
	done(&r);
}
END_TEST

/* cast (DESIGN §12): a float to an integer truncates and saturates, NaN
 * is 0; to bool x != 0 with NaN true; integers go exactly (an i64 past
 * 2^53 rounds once into a float, wraps into i32). */
START_TEST(test_interp_cast)
{
	Run r = runt("graph {\n  %x = input() : (7,)\n"
	    "  %i32 = cast(%x) to=i32\n  %i64 = cast(%x) to=i64\n  %b = cast(%x) to=bool\n"
	    "  %f32 = cast(%x) to=f32\n  %bf = cast(%b) to=f32\n"
	    "  %big = const() : (3,) i64 values=(9007199254740993, 4294967297, -9223372036854775808)\n"
	    "  %bigf = cast(%big) to=f64\n  %big32 = cast(%big) to=i32\n"
	    "  %bigb = cast(%big) to=bool\n"
	    "  return %i32, %i64, %b, %f32, %bf, %bigf, %big32, %bigb\n}\n",
	    IN(V(1e10, -1e10, NAN, -2.7, 2.7, 1e19, -0.0)));
	const Tensor *i64;

	expect(&r, "i32", 1, D(7), V(2147483647, -2147483648.0, 0, -2, 2, 2147483647, 0));
	expect(&r, "b", 1, D(7), V(1, 1, 1, 1, 1, 1, 0));
	expect(&r, "f32", 1, D(7), V(1e10, -1e10, NAN, (float)-2.7, (float)2.7, (float)1e19, 0));
	expect(&r, "bf", 1, D(7), V(1, 1, 1, 1, 1, 1, 0));
	expect(&r, "bigf", 1, D(3), V(9007199254740992.0, 4294967297.0, -0x1p63));
	expect(&r, "big32", 1, D(3), V(1, 1, 0));
	expect(&r, "bigb", 1, D(3), V(1, 1, 1));
	i64 = val(&r, "i64");
	ck_assert_int_eq(i64->dt, DT_I64);
	ck_assert(exec_geti(i64, 0) == 10000000000 && exec_geti(i64, 1) == -10000000000);
	ck_assert(exec_geti(i64, 2) == 0 && exec_geti(i64, 3) == -2 && exec_geti(i64, 4) == 2);
	ck_assert(exec_geti(i64, 5) == INT64_MAX);
	ck_assert_int_eq(val(&r, "i32")->dt, DT_I32);
	ck_assert_int_eq(val(&r, "bf")->dt, DT_F32);
	done(&r);
}
END_TEST

/* Integer pow wraps and takes a negative exponent to 0 unless the base is
 * 1 or -1; mod and fmod are exact on int64 (INT64_MIN by -1 is 0); the
 * compares are exact past 2^53. */
START_TEST(test_interp_int_pow_mod)
{
	Run r = runt("graph {\n"
	    "  %a = const() : (7,) i64 values=(2, 3, -1, -1, 1, 0, -9223372036854775808)\n"
	    "  %b = const() : (7,) i64 values=(-1, 40, -3, -4, -5, 3, -1)\n"
	    "  %pow = pow(%a, %b)\n  %mod = mod(%a, %b)\n  %fmod = fmod(%a, %b)\n"
	    "  %x = const() : (4,) i32 values=(-7, 7, -7, 7)\n"
	    "  %y = const() : (4,) i32 values=(2, -2, -2, 2)\n"
	    "  %m32 = mod(%x, %y)\n  %f32 = fmod(%x, %y)\n  %p32 = pow(%x, %y)\n"
	    "  %s32 = sign(%x)\n"
	    "  %u = const() : (2,) i64 values=(9007199254740993, 9007199254740993)\n"
	    "  %v = const() : (2,) i64 values=(9007199254740992, 9007199254740993)\n"
	    "  %eq = equal(%u, %v)\n  %gt = greater(%u, %v)\n"
	    "  return %pow, %mod, %fmod, %m32, %f32, %p32, %s32, %eq, %gt\n}\n", NULL);
	const int64_t pow[] = {0, (int64_t)12157665459056928801ull, -1, 1, 1, 0, 0};
	const int64_t mod[] = {0, 3, -1, -1, -4, 0, 0}, fmod[] = {0, 3, -1, -1, 1, 0, 0};
	const Tensor *t;

	ck_assert_int_eq(r.rc, 0);
	t = val(&r, "pow");
	for (int i = 0; i < 7; i++)
		ck_assert_msg(exec_geti(t, i) == pow[i], "pow[%d]: %lld", i,
		    (long long)exec_geti(t, i));
	t = val(&r, "mod");
	for (int i = 0; i < 7; i++)
		ck_assert_msg(exec_geti(t, i) == mod[i], "mod[%d]", i);
	t = val(&r, "fmod");
	for (int i = 0; i < 7; i++)
		ck_assert_msg(exec_geti(t, i) == fmod[i], "fmod[%d]", i);
	expect(&r, "m32", 1, D(4), V(1, -1, -1, 1));
	expect(&r, "f32", 1, D(4), V(-1, 1, -1, 1));
	expect(&r, "p32", 1, D(4), V(49, 0, 0, 49));
	expect(&r, "s32", 1, D(4), V(-1, 1, -1, 1));
	expect(&r, "eq", 1, D(2), V(0, 1));
	expect(&r, "gt", 1, D(2), V(1, 0));
	done(&r);
}
END_TEST

/* An integer mod or fmod by zero is a run-time error at the node, never
 * a crash. */
START_TEST(test_interp_int_mod_by_zero)
{
	static const char *ops[] = {"mod", "fmod"};

	for (int k = 0; k < 2; k++) {
		char src[256];
		Run r;

		snprintf(src, sizeof src, "graph {\n  %%a = const() : (2, 2) i32 value=3\n"
		    "  %%b = const() : (2,) i32 values=(1, 0)\n  %%m = %s(%%a, %%b)\n"
		    "  return %%m\n}\n", ops[k]);
		r = runt(src, NULL);
		ck_assert_int_eq(r.rc, -1);
		ck_assert_msg(strstr(r.msgs, "t.aicm:4:") && strstr(r.msgs, "by zero") &&
		    strstr(r.msgs, "element [0, 1]") && strstr(r.msgs, ops[k]), "%s", r.msgs);
		done(&r);
	}
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

/* A tuple of axes: x[i, j, k] = 100 i + 10 j + k, shape (2, 3, 2). */
START_TEST(test_interp_reduce_tuple)
{
	Run r = run("graph {\n  %x = input() : (2, 3, 2)\n"
	    "  %s = sum(%x) : (3,) axis=(0, 2)\n  %m = max(%x) : (1, 3, 1) axis=(2, 0) keepdims=True\n"
	    "  %e = mean(%x) : (2,) axis=(-1, -2)\n  %n = min(%x) : (2,) axis=(0, 1)\n"
	    "  %p = prod(%x) : () axis=(0, 1, 2)\n  return %s, %m, %e, %n, %p\n}\n",
	    IN(V(0, 1, 10, 11, 20, 21, 100, 101, 110, 111, 120, 121)));

	expect(&r, "s", 1, D(3), V(202, 242, 282));
	expect(&r, "m", 3, D(1, 3, 1), V(101, 111, 121));
	expect(&r, "e", 1, D(2), V(10.5, 110.5));
	expect(&r, "n", 1, D(2), V(0, 1));
	expect(&r, "p", 0, D(0), V(0));
	done(&r);
}
END_TEST

/* min keeps a NaN once met (np.min); prod of an empty-free row, of signs,
 * and NaN and infinities by arithmetic (inf * 0 is NaN). */
START_TEST(test_interp_min_prod)
{
	Run r = run("graph {\n  %x = input() : (3, 3)\n"
	    "  %n = min(%x) : (3,) axis=1\n  %p = prod(%x) : (3,) axis=1\n  %q = prod(%x) : (3,) axis=0\n"
	    "  %a = min(%x) : ()\n  return %n, %p, %q, %a\n}\n",
	    IN(V(3, -2, 0.5, 1, NAN, -7, INFINITY, 0, 2)));

	expect(&r, "n", 1, D(3), V(-2, NAN, 0));
	expect(&r, "p", 1, D(3), V(-3, NAN, NAN));
	expect(&r, "q", 1, D(3), V(3 * INFINITY, NAN, -7));
	expect(&r, "a", 0, D(0), V(NAN));
	done(&r);
}
END_TEST

/* argmax and argmin: i64 indices; ties go to the first index, or the last
 * with last=True; a NaN wins (np.argmax: the first NaN; with last=True,
 * ONNX's select_last_index: the last one). */
START_TEST(test_interp_argmax)
{
	Run r = run("graph {\n  %x = input() : (3, 4)\n"
	    "  %a = argmax(%x) : (3,) i64 axis=1\n  %al = argmax(%x) : (3,) i64 axis=1 last=True\n"
	    "  %i = argmin(%x) : (3, 1) i64 axis=-1 keepdims=True\n  %il = argmin(%x) : (3,) i64 axis=1 last=True\n"
	    "  %c = argmax(%x) : (4,) i64\n  %d = argmin(%x) : (4,) i64 axis=0 last=True\n"
	    "  return %a, %al, %i, %il, %c, %d\n}\n",
	    IN(V(1, 5, 5, -1,    -1, 2, -1, 2,    0, NAN, 3, NAN)));

	ck_assert_int_eq(val(&r, "a")->dt, DT_I64);
	expect(&r, "a", 1, D(3), V(1, 1, 1));
	expect(&r, "al", 1, D(3), V(2, 3, 3));
	expect(&r, "i", 2, D(3, 1), V(3, 0, 1));
	expect(&r, "il", 1, D(3), V(3, 2, 3));
	expect(&r, "c", 1, D(4), V(0, 2, 0, 2));
	expect(&r, "d", 1, D(4), V(1, 2, 1, 2));
	done(&r);
}
END_TEST

/* numpy's matmul: 1-D operands promoted and the added dim removed, batch
 * dims broadcast (b's one batch serves both of a's; a's 1 stretches). */
START_TEST(test_interp_matmul_numpy)
{
	Run r = run("graph {\n  %a = input() : (2, 2, 2)\n  %b = input() : (2, 1)\n"
	    "  %v = input() : (2,)\n  %w = input() : (3, 1, 2, 1)\n"
	    "  %ab = matmul(%a, %b) : (2, 2, 1)\n  %av = matmul(%a, %v) : (2, 2)\n  %va = matmul(%v, %a) : (2, 2)\n"
	    "  %vv = matmul(%v, %v) : ()\n  %wa = matmul(%v, %w) : (3, 1, 1)\n  %aw = matmul(%a, %w) : (3, 2, 2, 1)\n"
	    "  return %ab, %av, %va, %vv, %wa, %aw\n}\n",
	    IN(V(1, 2, 3, 4, 0, 1, 1, 0), V(1, 1), V(5, 7), V(1, 2, 3, 4, 5, 6)));

	expect(&r, "ab", 3, D(2, 2, 1), V(3, 7, 1, 1));
	expect(&r, "av", 2, D(2, 2), V(19, 43, 7, 5));
	expect(&r, "va", 2, D(2, 2), V(26, 38, 7, 5));
	expect(&r, "vv", 0, D(0), V(74));
	expect(&r, "wa", 3, D(3, 1, 1), V(19, 43, 67));
	expect(&r, "aw", 4, D(3, 2, 2, 1),
	    V(5, 11, 2, 1,  11, 25, 4, 3,  17, 39, 6, 5));
	done(&r);
}
END_TEST

/* transpose and reshape at rank 8: y[perm] walks x's axes reversed. */
START_TEST(test_interp_rank8)
{
	double x[2 * 3 * 2] = {0};
	Run r;

	for (int i = 0; i < 12; i++)
		x[i] = i;
	r = run("graph {\n  %x = input() : (2, 1, 1, 3, 1, 1, 1, 2)\n"
	    "  %t = transpose(%x) : (2, 1, 1, 1, 3, 1, 1, 2) perm=(7, 6, 5, 4, 3, 2, 1, 0)\n"
	    "  %r = reshape(%t) : (1, 1, 1, 1, 1, 2, 3, 2) shape=(1, 1, 1, 1, 1, 2, -1, 2)\n"
	    "  %s = sum(%x) : (1, 1, 3, 1, 1, 1) axis=(0, 7)\n  return %t, %r, %s\n}\n", IN(x));
	expect(&r, "t", 8, D(2, 1, 1, 1, 3, 1, 1, 2), V(0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11));
	expect(&r, "r", 8, D(1, 1, 1, 1, 1, 2, 3, 2), V(0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11));
	expect(&r, "s", 6, D(1, 1, 3, 1, 1, 1), V(14, 22, 30));
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

/* ---- integer and bool types ------------------------------------------ */

/* Runs src with every source a const whose value=/values= fills it
 * (exact integers, as aicm-run fills them). */
static Run
run_consts(const char *src)
{
	Run r = {0};
	FILE *f;
	size_t n = 0;
	Diag d;

	r.g = ck_parse(src, NULL);
	ck_assert_ptr_nonnull(r.g);
	r.v = calloc((size_t)r.g->nnodes, sizeof *r.v);
	for (int i = 0; i < r.g->nnodes; i++) {
		const Node *nd = &r.g->nodes[i];

		if (ir_ops[nd->op].cls != OC_SOURCE)
			continue;
		ck_assert_int_eq(exec_tensor_alloc(&r.v[i], &nd->type, 0), 0);
		ck_assert(exec_fill_const(&r.v[i], nd));
	}
	f = open_memstream(&r.msgs, &n);
	diag_init(&d, "t.aicm", src, strlen(src), f);
	r.rc = exec_interp(r.g, r.v, &d);
	diag_free(&d);
	fclose(f);
	return r;
}

/* Every element of name exactly equal to want, and of element type dt. */
static void
expect_i(const Run *r, const char *name, DType dt, int64_t n, const int64_t *want)
{
	const Tensor *t = val(r, name);

	ck_assert_int_eq(r->rc, 0);
	ck_assert_int_eq(t->dt, dt);
	ck_assert_int_eq(t->numel, n);
	for (int64_t i = 0; i < n; i++)
		ck_assert_msg(exec_geti(t, i) == want[i], "%%%s[%lld]: %lld, want %lld", name,
		    (long long)i, (long long)exec_geti(t, i), (long long)want[i]);
}

#define I(...) ((const int64_t[]){__VA_ARGS__})

/* Wrapping, truncating i32 arithmetic: INT32_MAX + 1, INT32_MIN / -1,
 * abs and neg of INT32_MIN, -7 / 2 toward zero, broadcast of a scalar. */
START_TEST(test_interp_i32_arith)
{
	Run r = run_consts("graph {\n"
	    "  %a = const() : (5,) i32 values=(2147483647, -2147483648, -7, 7, 0)\n"
	    "  %b = const() : (5,) i32 values=(1, -1, 2, -2, 3)\n"
	    "  %s = const() : () i32 value=3\n"
	    "  %add = add(%a, %b) : (5,) i32\n  %sub = sub(%a, %b) : (5,) i32\n"
	    "  %mul = mul(%a, %b) : (5,) i32\n  %div = div(%a, %b) : (5,) i32\n"
	    "  %mx = maximum(%a, %b) : (5,) i32\n  %mn = minimum(%a, %b) : (5,) i32\n"
	    "  %neg = neg(%a) : (5,) i32\n  %abs = abs(%a) : (5,) i32\n"
	    "  %relu = relu(%a) : (5,) i32\n  %sc = mul(%a, %s) : (5,) i32\n"
	    "  return %add, %sub, %mul, %div, %mx, %mn, %neg, %abs, %relu, %sc\n}\n");

	expect_i(&r, "add", DT_I32, 5, I(INT32_MIN, INT32_MAX, -5, 5, 3));
	expect_i(&r, "sub", DT_I32, 5, I(2147483646, -2147483647, -9, 9, -3));
	expect_i(&r, "mul", DT_I32, 5, I(INT32_MAX, INT32_MIN, -14, -14, 0));
	expect_i(&r, "div", DT_I32, 5, I(INT32_MAX, INT32_MIN, -3, -3, 0));
	expect_i(&r, "mx", DT_I32, 5, I(INT32_MAX, -1, 2, 7, 3));
	expect_i(&r, "mn", DT_I32, 5, I(1, INT32_MIN, -7, -2, 0));
	expect_i(&r, "neg", DT_I32, 5, I(-INT32_MAX, INT32_MIN, 7, -7, 0));
	expect_i(&r, "abs", DT_I32, 5, I(INT32_MAX, INT32_MIN, 7, 7, 0));
	expect_i(&r, "relu", DT_I32, 5, I(INT32_MAX, 0, 0, 7, 0));
	expect_i(&r, "sc", DT_I32, 5, I(2147483645, INT32_MIN, -21, 21, 0));
	done(&r);
}
END_TEST

/* i64 exactly, past 2^53 where a double would round, and wrapping at the
 * ends: INT64_MIN / -1 is INT64_MIN, INT64_MAX * 2 is -2. */
START_TEST(test_interp_i64_arith)
{
	Run r = run_consts("graph {\n"
	    "  %a = const() : (4,) i64 values=(9223372036854775807, -9223372036854775808, "
	    "9007199254740993, -9)\n"
	    "  %b = const() : (4,) i64 values=(2, -1, 1, 4)\n"
	    "  %add = add(%a, %b) : (4,) i64\n  %mul = mul(%a, %b) : (4,) i64\n"
	    "  %div = div(%a, %b) : (4,) i64\n  %neg = neg(%a) : (4,) i64\n"
	    "  %abs = abs(%a) : (4,) i64\n"
	    "  return %add, %mul, %div, %neg, %abs\n}\n");

	expect_i(&r, "add", DT_I64, 4, I(INT64_MIN + 1, INT64_MAX, 9007199254740994, -5));
	expect_i(&r, "mul", DT_I64, 4, I(-2, INT64_MIN, 9007199254740993, -36));
	expect_i(&r, "div", DT_I64, 4, I(INT64_MAX / 2, INT64_MIN, 9007199254740993, -2));
	expect_i(&r, "neg", DT_I64, 4, I(-INT64_MAX, INT64_MIN, -9007199254740993, 9));
	expect_i(&r, "abs", DT_I64, 4, I(INT64_MAX, INT64_MIN, 9007199254740993, 9));
	done(&r);
}
END_TEST

/* A zero divisor is a run-time error at the op, naming it and the
 * element, not a crash. */
START_TEST(test_interp_int_div_zero)
{
	Run r = run_consts("graph {\n"
	    "  %a = const() : (2, 2) i32 values=(1, 2, 3, 4)\n"
	    "  %b = const() : (2,) i32 values=(5, 0)\n"
	    "  %q = div(%a, %b) : (2, 2) i32\n  return %q\n}\n");

	ck_assert_int_eq(r.rc, -1);
	ck_assert_msg(strstr(r.msgs, "t.aicm:4:8: error: '%q': integer division by zero in "
	    "'div' (element [0, 1] of the result)") != NULL, "%s", r.msgs);
	done(&r);
}
END_TEST

/* Integer sums wrap (an i32's in i32, as numpy's sum with dtype=int32),
 * max starts from the type's minimum, over an axis and over all. */
START_TEST(test_interp_int_reduce)
{
	Run r = run_consts("graph {\n"
	    "  %a = const() : (2, 3) i32 values=(2147483647, 1, -5, -2147483648, -9, -3)\n"
	    "  %b = const() : (2,) i64 values=(-9223372036854775807, -9223372036854775808)\n"
	    "  %s0 = sum(%a) : (3,) i32 axis=0\n  %s1 = sum(%a) : (2, 1) i32 axis=1 keepdims=True\n"
	    "  %m1 = max(%a) : (2,) i32 axis=1\n  %sall = sum(%a) : () i32\n"
	    "  %mb = max(%b) : () i64\n  %sb = sum(%b) : () i64\n"
	    "  return %s0, %s1, %m1, %sall, %mb, %sb\n}\n");

	expect_i(&r, "s0", DT_I32, 3, I(-1, -8, -8));
	expect_i(&r, "s1", DT_I32, 2, I(2147483643, 2147483636));
	expect_i(&r, "m1", DT_I32, 2, I(INT32_MAX, -3));
	expect_i(&r, "sall", DT_I32, 1, I(-17));
	expect_i(&r, "mb", DT_I64, 1, I(-INT64_MAX));
	expect_i(&r, "sb", DT_I64, 1, I(1));
	done(&r);
}
END_TEST

/* An integer matmul wraps its dot in the element type, batched too. */
START_TEST(test_interp_int_matmul)
{
	Run r = run_consts("graph {\n"
	    "  %a = const() : (2, 2) i32 values=(65536, 1, 2, 3)\n"
	    "  %b = const() : (2, 2) i32 values=(65536, 4, 5, 6)\n"
	    "  %c = matmul(%a, %b) : (2, 2) i32\n"
	    "  %x = const() : (2, 1, 2) i64 values=(1, 2, 3, 4)\n"
	    "  %y = const() : (2, 2, 1) i64 values=(4611686018427387904, 1, -1, 5)\n"
	    "  %z = matmul(%x, %y) : (2, 1, 1) i64\n"
	    "  return %c, %z\n}\n");

	/* 65536 * 65536 + 5 = 2^32 + 5 wraps to 5 in i32 */
	expect_i(&r, "c", DT_I32, 4, I(5, 262150, 131087, 26));
	expect_i(&r, "z", DT_I64, 2, I(4611686018427387906, 17));
	done(&r);
}
END_TEST

/* transpose and reshape move elements exactly whatever their type. */
START_TEST(test_interp_int_layout)
{
	Run r = run_consts("graph {\n"
	    "  %a = const() : (2, 3) i64 values=(9007199254740993, 1, 2, 3, 4, -5)\n"
	    "  %t = transpose(%a) : (3, 2) i64\n  %rs = reshape(%t) : (6,) i64 shape=(6,)\n"
	    "  %b = const() : (2, 2) bool values=(True, False, False, False)\n"
	    "  %bt = transpose(%b) : (2, 2) bool perm=(1, 0)\n"
	    "  %i = const() : (1, 2) i32 values=(-1, 2)\n"
	    "  %it = transpose(%i) : (2, 1) i32\n"
	    "  return %rs, %bt, %it\n}\n");

	expect_i(&r, "rs", DT_I64, 6, I(9007199254740993, 3, 1, 4, 2, -5));
	expect_i(&r, "bt", DT_BOOL, 4, I(1, 0, 0, 0));
	expect_i(&r, "it", DT_I32, 2, I(-1, 2));
	done(&r);
}
END_TEST

/* Random integers lie in [0, 8) and bools are 0 or 1, from the same
 * stream as the floats: the top bits of the element's splitmix64 output. */
START_TEST(test_interp_int_random)
{
	Type ti = {.rank = 1, .dt = DT_I32, .dim = {1000}};
	Type tl = {.rank = 1, .dt = DT_I64, .dim = {1000}};
	Type tb = {.rank = 1, .dt = DT_BOOL, .dim = {1000}};
	Type tf = {.rank = 1, .dt = DT_F64, .dim = {1000}};
	Tensor a, b, c, f;
	int seen[8] = {0}, ones = 0;

	exec_tensor_alloc(&a, &ti, 0);
	exec_tensor_alloc(&b, &tl, 0);
	exec_tensor_alloc(&c, &tb, 0);
	exec_tensor_alloc(&f, &tf, 0);
	exec_fill_random(&a, 3, "x");
	exec_fill_random(&b, 3, "x");
	exec_fill_random(&c, 3, "x");
	exec_fill_random(&f, 3, "x");
	for (int i = 0; i < 1000; i++) {
		int64_t v = exec_geti(&a, i);
		double x = exec_get(&f, i);

		ck_assert(v >= 0 && v < 8);
		ck_assert(exec_geti(&b, i) == v);
		seen[v]++;
		/* the same z: f64 is (z >> 11) 2^-52 - 1, so its top 3 bits
		 * of 53 are v, and its sign is the bool */
		ck_assert_int_eq((int64_t)((x + 1) * 4), v);
		ck_assert_int_eq(exec_geti(&c, i), v >= 4);
		ones += (int)exec_geti(&c, i);
	}
	for (int k = 0; k < 8; k++)
		ck_assert_int_gt(seen[k], 80);
	ck_assert(ones > 400 && ones < 600);
	exec_tensor_free(&a);
	exec_tensor_free(&b);
	exec_tensor_free(&c);
	exec_tensor_free(&f);
}
END_TEST

/* Integers compare exactly: one unit apart is an error of +inf, at the
 * element; printing is numpy's, with True and False for bools. */
START_TEST(test_interp_int_compare_print)
{
	Type ti = {.rank = 2, .dt = DT_I64, .dim = {2, 2}};
	Type tb = {.rank = 1, .dt = DT_BOOL, .dim = {3}};
	Tensor a, b, c;
	ExecErr e;
	char *s, sum[64], lo[64], hi[64];

	exec_tensor_alloc(&a, &ti, 0);
	exec_tensor_alloc(&b, &ti, 0);
	exec_tensor_alloc(&c, &tb, 0);
	for (int i = 0; i < 4; i++) {
		exec_seti(&a, i, (int64_t)1 << 60 | i);
		exec_seti(&b, i, (int64_t)1 << 60 | i);
	}
	e = exec_compare(&a, &b);
	ck_assert(e.rel == 0 && e.worst == -1);
	exec_seti(&b, 2, ((int64_t)1 << 60 | 2) + 1);
	e = exec_compare(&a, &b);
	ck_assert(isinf(e.rel) && e.maxabs == 1 && e.worst == 2);
	exec_seti(&a, 0, -10);
	s = preview(&a);
	ck_assert_str_eq(s, "[[                -10 1152921504606846977]\n"
	    " [1152921504606846978 1152921504606846979]]\n");
	free(s);
	exec_stats_fmt(&a, sum, lo, hi, sizeof sum);
	ck_assert_str_eq(sum, "3458764513820540924");
	ck_assert_str_eq(lo, "-10");
	ck_assert_str_eq(hi, "1152921504606846979");
	exec_seti(&c, 0, 1);
	exec_seti(&c, 1, 0);
	exec_seti(&c, 2, 1);
	s = preview(&c);
	ck_assert_str_eq(s, "[ True False  True]\n");
	free(s);
	exec_stats_fmt(&c, sum, lo, hi, sizeof sum);
	ck_assert_str_eq(sum, "2");
	ck_assert_str_eq(lo, "False");
	ck_assert_str_eq(hi, "True");
	exec_tensor_free(&a);
	exec_tensor_free(&b);
	exec_tensor_free(&c);
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
	tcase_add_test(k, test_interp_unary_v2_rows);
	tcase_add_test(k, test_interp_mod_signs);
	tcase_add_test(k, test_interp_compare_where);
	tcase_add_test(k, test_interp_cast);
	tcase_add_test(k, test_interp_int_pow_mod);
	tcase_add_test(k, test_interp_int_mod_by_zero);
	tcase_add_test(k, test_interp_binary_same_shape);
	tcase_add_test(k, test_interp_broadcast_corners);
	tcase_add_test(k, test_interp_maximum_nan);
	tcase_add_test(k, test_interp_reduce_axes);
	tcase_add_test(k, test_interp_reduce_middle);
	tcase_add_test(k, test_interp_reduce_nan);
	tcase_add_test(k, test_interp_f32_accumulates_in_f64);
	tcase_add_test(k, test_interp_matmul);
	tcase_add_test(k, test_interp_matmul_batched);
	tcase_add_test(k, test_interp_reduce_tuple);
	tcase_add_test(k, test_interp_min_prod);
	tcase_add_test(k, test_interp_argmax);
	tcase_add_test(k, test_interp_matmul_numpy);
	tcase_add_test(k, test_interp_rank8);
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
	tcase_add_test(k, test_interp_i32_arith);
	tcase_add_test(k, test_interp_i64_arith);
	tcase_add_test(k, test_interp_int_div_zero);
	tcase_add_test(k, test_interp_int_reduce);
	tcase_add_test(k, test_interp_int_matmul);
	tcase_add_test(k, test_interp_int_layout);
	tcase_add_test(o, test_interp_int_random);
	tcase_add_test(o, test_interp_int_compare_print);
	suite_add_tcase(s, k);
	suite_add_tcase(s, x);
	suite_add_tcase(s, o);
	return s;
}
