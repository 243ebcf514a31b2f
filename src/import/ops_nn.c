/*
 * ops_nn.c: ONNX's contractions and the composites built on them.
 *
 * MatMul is aicm's matmul (numpy's rule, ONNX's too), a batched A times
 * a 2-D B folded into one GEMM.  Gemm is
 * alpha*A'B' + beta*C: the transposes of a known operand (a weight) are
 * folded here, so an exported Linear layer is one matmul and one add at
 * run time; alpha and beta of 1 add no op, and C must broadcast one way to
 * (M, N) (before opset 7 only with broadcast=1).  Softmax and LogSoftmax
 * are written in aicm's ops, max-subtracted as every stable softmax is;
 * before opset 13 they coerce the input to 2-D at 'axis' (default 1) and
 * normalise over everything from it, from opset 13 over the one axis
 * (default -1).  Hardmax follows the same axis rules and is written
 * without argmax (which has no tile program) as the one-hot of the first
 * maximum.  Einsum of one or two operands is sums, transposes, reshapes
 * and one batched matmul.  The helpers at the end of the first part are
 * shared with ops_nn_window.c (conv, pools) and ops_nn_norm.c
 * (normalisations) through ops_nn.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "import.h"
#include "ops_nn.h"

/* MatMul.  A of rank 3 or more times a 2-D B (a Linear layer on a
 * sequence: PyTorch exports (S, B, E) x (E, 3E)) is one GEMM over A's rows
 * with the batch folded into M, as torch.matmul computes it: batched, it
 * would be S matrix-vector products each re-reading all of B (a third of
 * a transformer layer's time).  The reshapes are free of arithmetic. */
int
onnx_matmul(Imp *im)
{
	ImpVal *a = imp_in_req(im, 0), *b = imp_in_req(im, 1);
	int na, nb, y;
	Type ta;

	if (!a || !b)
		return -1;
	na = imp_node_of(im, a);
	nb = imp_node_of(im, b);
	if (na < 0 || nb < 0)
		return -1;
	ta = *imp_type(im, na);
	if (ta.rank >= 3 && imp_type(im, nb)->rank == 2 &&
	    ta.dim[ta.rank - 1] == imp_type(im, nb)->dim[0] &&
	    ir_type_numel(&ta) / (ta.dim[ta.rank - 1] * ta.dim[ta.rank - 2]) > 1) {
		/* (a batch of one is already a single GEMM) */
		int64_t rows = 1, flat[2], dims[IR_MAX_RANK];

		for (int k = 0; k < ta.rank - 1; k++)
			rows *= ta.dim[k];
		flat[0] = rows;
		flat[1] = ta.dim[ta.rank - 1];
		y = imp_binary(im, OP_MATMUL, NULL, imp_reshape(im, NULL, na, 2, flat), nb);
		if (y < 0)
			return -1;
		memcpy(dims, ta.dim, sizeof dims);
		dims[ta.rank - 1] = imp_type(im, nb)->dim[1];
		return imp_out(im, 0, imp_reshape(im, imp_out_name(im, 0), y, ta.rank, dims));
	}
	return imp_out(im, 0, imp_binary(im, OP_MATMUL, imp_out_name(im, 0), na, nb));
}

/* x transposed (a 2-D operand of Gemm): a known value folds. */
static int
transpose2(Imp *im, ImpVal *x)
{
	int i;

	if (x->type.rank != 2)
		return imp_fail(im, "its operand '%s' has rank %d, expected 2", x->name, x->type.rank);
	if (x->k) {
		const Type *t = &x->k->type;
		Type tt = {.rank = 2, .dt = t->dt, .dim = {t->dim[1], t->dim[0]}};
		ImpData *d = imp_data_new(im, &tt);
		size_t es = ir_dtype_size(t->dt);
		ImpVal tmp = *x;

		for (int64_t r = 0; r < t->dim[0]; r++)
			for (int64_t c = 0; c < t->dim[1]; c++)
				memcpy((char *)d->p + (c * t->dim[0] + r) * (int64_t)es,
				    (const char *)x->k->p + (r * t->dim[1] + c) * (int64_t)es, es);
		tmp.k = d;
		tmp.type = tt;
		tmp.node = -1;
		/* a fresh const of the transposed data, named after the weight */
		return imp_node_of(im, &tmp);
	}
	i = imp_new(im, OP_TRANSPOSE, NULL, 1, (int[]){imp_node_of(im, x)});
	if (i < 0)
		return -1;
	imp_set_ints(im, i, ATTR_PERM, (const int64_t[]){1, 0}, 2);
	return imp_done(im, i);
}

/* y * s, unless s is 1. */
static int
scaled(Imp *im, int y, double s)
{
	if (y < 0 || s == 1.0)
		return y;
	return imp_binary(im, OP_MUL, NULL, y, imp_splat(im, imp_type(im, y)->dt, s, 0, NULL));
}

int
onnx_gemm(Imp *im)
{
	ImpVal *a = imp_in_req(im, 0), *b = imp_in_req(im, 1);
	ImpVal *c = im->opset < 11 ? imp_in_req(im, 2) : imp_in(im, 2);
	int64_t ta, tb, bc = 1;
	double alpha, beta;
	int na, nb, y;
	bool has_c = c != NULL;

	if (!a || !b || im->rc || imp_attr_int(im, "transA", 0, &ta) != 0 ||
	    imp_attr_int(im, "transB", 0, &tb) != 0 || imp_attr_float(im, "alpha", 1, &alpha) != 0 ||
	    imp_attr_float(im, "beta", 1, &beta) != 0)
		return -1;
	/* before opset 7 C is (M, N) unless broadcast=1 */
	if (im->opset < 7 && imp_attr_int(im, "broadcast", 0, &bc) != 0)
		return -1;
	na = ta ? transpose2(im, a) : imp_node_of(im, a);
	nb = tb ? transpose2(im, b) : imp_node_of(im, b);
	if (na < 0 || nb < 0)
		return -1;
	if (imp_type(im, na)->rank != 2 || imp_type(im, nb)->rank != 2)
		return imp_fail(im, "A and B have ranks %d and %d, expected 2", imp_type(im, na)->rank,
		    imp_type(im, nb)->rank);
	y = scaled(im, imp_binary(im, OP_MATMUL, has_c ? NULL : imp_out_name(im, 0), na, nb), alpha);
	if (y >= 0 && has_c) {
		const Type *yt = imp_type(im, y);
		int nc = imp_node_of(im, c);
		const Type *ct;
		bool ok;

		if (nc < 0)
			return -1;
		ct = imp_type(im, nc);
		/* C broadcasts one way, to (M, N) */
		ok = ct->rank <= 2;
		for (int k = 0; ok && k < ct->rank; k++) {
			int64_t want = yt->dim[2 - ct->rank + k];

			ok = ct->dim[k] == want || (bc && ct->dim[k] == 1);
		}
		if (!ok || (!bc && ct->rank != 2)) {
			char sc[IR_TYPE_STR];

			return imp_fail(im, "C is %s; %s (%lld, %lld)", ir_shape_str(ct, sc),
			    bc ? "it must broadcast to" : "with broadcast=0 it must be",
			    (long long)yt->dim[0], (long long)yt->dim[1]);
		}
		if (beta != 0.0)
			y = imp_binary(im, OP_ADD, imp_out_name(im, 0), y, scaled(im, nc, beta));
	}
	return imp_out(im, 0, y);
}

/* A reduction of node x over axis, keepdims. */
static int
reduce1(Imp *im, OpId op, int x, int axis)
{
	int i = imp_new(im, op, NULL, 1, &x);
	Attrs *at;

	if (i < 0)
		return -1;
	at = imp_at(im, i);
	at->axis = axis;
	at->keepdims = true;
	at->set |= AB(AXIS) | AB(KEEPDIMS);
	return imp_done(im, i);
}

static int
softmax(Imp *im, bool logsm)
{
	int x, a, m, e, s, y;
	bool coerced;
	const char *last;
	Type t;

	if (nn_row_operand(im, &x, &a, &t, &coerced) != 0)
		return -1;
	last = coerced ? NULL : imp_out_name(im, 0);
	m = reduce1(im, OP_MAX, x, a);
	e = imp_binary(im, OP_SUB, NULL, x, m);
	if (!logsm) {
		int ex = imp_unary(im, OP_EXP, NULL, e);

		s = reduce1(im, OP_SUM, ex, a);
		y = imp_binary(im, OP_DIV, last, ex, s);
	} else {
		s = reduce1(im, OP_SUM, imp_unary(im, OP_EXP, NULL, e), a);
		y = imp_binary(im, OP_SUB, last, e, imp_unary(im, OP_LOG, NULL, s));
	}
	if (coerced)
		y = imp_reshape(im, imp_out_name(im, 0), y, t.rank, t.dim);
	return imp_out(im, 0, y);
}

int
onnx_softmax(Imp *im)
{
	return softmax(im, false);
}

int
onnx_log_softmax(Imp *im)
{
	return softmax(im, true);
}

/* ---- helpers shared with ops_nn_window.c and ops_nn_norm.c (ops_nn.h) -- */

int
nn_since(Imp *im, int64_t since)
{
	if (im->opset >= since)
		return 0;
	return imp_fail(im, "the op is in ONNX's default domain from opset %lld; the model "
	    "imports opset %lld", (long long)since, (long long)im->opset);
}

int
nn_axes(Imp *im, const int64_t *av, int n, int r, int64_t *ax)
{
	bool seen[IR_MAX_RANK] = {false};

	for (int k = 0; k < n; k++) {
		int a = imp_axis(im, av[k], r, "an axis");

		if (a < 0)
			return -1;
		if (seen[a])
			return imp_fail(im, "axis %lld is given twice", (long long)av[k]);
		seen[a] = true;
		ax[k] = a;
	}
	return 0;
}

int
nn_row_operand(Imp *im, int *x, int *a, Type *t, bool *coerced)
{
	ImpVal *xv = imp_in_req(im, 0);
	int64_t axis, dims[2] = {1, 1};

	*coerced = false;
	if (!xv || imp_attr_int(im, "axis", im->opset < 13 ? 1 : -1, &axis) != 0)
		return -1;
	if ((*x = imp_node_of(im, xv)) < 0)
		return -1;
	*t = *imp_type(im, *x);
	if ((*a = imp_axis(im, axis, t->rank, "'axis'")) < 0)
		return -1;
	if (im->opset < 13 && *a != t->rank - 1) {
		/* everything from axis on is one row */
		for (int k = 0; k < t->rank; k++)
			dims[k >= *a] *= t->dim[k];
		*x = imp_reshape(im, NULL, *x, 2, dims);
		*a = 1;
		*coerced = true;
	}
	return 0;
}

/* v's node with shape dims[0..rank): known data is copied under the new
 * shape (a weight stays one const), else a reshape. */
int
nn_reshaped(Imp *im, ImpVal *v, int rank, const int64_t *dims)
{
	if (v->k) {
		Type t = v->k->type;
		ImpData *d;
		ImpVal tmp = *v;

		t.rank = rank;
		memcpy(t.dim, dims, sizeof(int64_t) * (size_t)rank);
		if (ir_type_numel(&t) != ir_type_numel(&v->k->type))
			return imp_fail(im, "'%s' has %lld elements, expected %lld", v->name,
			    (long long)ir_type_numel(&v->k->type), (long long)ir_type_numel(&t));
		d = imp_data_new(im, &t);
		memcpy(d->p, v->k->p, (size_t)ir_type_numel(&t) * ir_dtype_size(t.dt));
		tmp.k = d;
		tmp.type = t;
		tmp.node = -1;
		return imp_node_of(im, &tmp);
	}
	return imp_reshape(im, NULL, imp_node_of(im, v), rank, dims);
}

/* A per-channel operand (C,) of an input of rank r, as (C, 1, ..., 1) so
 * that it broadcasts along axis 1. */
int
nn_per_channel(Imp *im, ImpVal *v, int r, int64_t c)
{
	int64_t dims[IR_MAX_RANK];

	if (v->type.rank >= 0 && ir_type_numel(&v->type) != c)
		return imp_fail(im, "'%s' has %lld elements; it takes one a channel, %lld",
		    v->name, (long long)ir_type_numel(&v->type), (long long)c);
	dims[0] = c;
	for (int k = 1; k < r - 1; k++)
		dims[k] = 1;
	return nn_reshaped(im, v, r > 1 ? r - 1 : 1, dims);
}

/* A reduction of node x over axes ax[0..n), keepdims. */
int
nn_reduce_axes_keep(Imp *im, OpId op, const char *name, int x, const int64_t *ax, int n)
{
	int i = imp_new(im, op, name, 1, &x);
	Attrs *at;

	if (i < 0)
		return -1;
	imp_set_ints(im, i, ATTR_AXIS, ax, n);
	at = imp_at(im, i);
	at->keepdims = true;
	at->set |= AB(KEEPDIMS);
	return imp_done(im, i);
}

/* Hardmax: 1 at the first maximum along the axis, 0 elsewhere (before
 * opset 13 over the 2-D coercion at 'axis', as Softmax).  Written without
 * argmax: the first index whose value equals the max (or is NaN, which the
 * max keeps, as np.argmax picks the first NaN) is the min over where(hit,
 * iota, D); the result compares iota with it. */
int
onnx_hardmax(Imp *im)
{
	int64_t io[IR_MAX_RANK], len;
	int x, a, m, hit, first, y, c;
	bool coerced;
	Type t, it;
	ImpData *iota;

	if (nn_row_operand(im, &x, &a, &t, &coerced) != 0)
		return -1;
	if (!ir_dtype_is_float(t.dt))
		return imp_fail(im, "its input is %s, expected a float type", ir_dtype_name(t.dt));
	it = *imp_type(im, x);
	len = it.dim[a];
	for (int k = 0; k < it.rank; k++)
		io[k] = k == a ? len : 1;
	it.dt = DT_I64;
	memcpy(it.dim, io, sizeof(int64_t) * (size_t)it.rank);
	iota = imp_data_new(im, &it);
	for (int64_t k = 0; k < len; k++)
		imp_data_set(iota, k, (double)k, k);
	{
		ImpVal iv = {"iota", iota->type, -1, iota};
		int in = imp_node_of(im, &iv), cond[3];

		m = nn_reduce_axes_keep(im, OP_MAX, NULL, x, (const int64_t[]){a}, 1);
		hit = imp_binary(im, OP_OR, NULL, imp_binary(im, OP_EQUAL, NULL, x, m),
		    imp_unary(im, OP_ISNAN, NULL, x));
		cond[0] = hit;
		cond[1] = in;
		cond[2] = imp_splat(im, DT_I64, (double)len, 0, NULL);
		first = nn_reduce_axes_keep(im, OP_MIN, NULL, imp_op(im, OP_WHERE, NULL, 3, cond),
		    (const int64_t[]){a}, 1);
		y = imp_binary(im, OP_EQUAL, NULL, in, first);
	}
	if ((c = imp_new(im, OP_CAST, coerced ? NULL : imp_out_name(im, 0), 1, &y)) < 0)
		return -1;
	imp_at(im, c)->to = t.dt;
	imp_at(im, c)->set |= AB(TO);
	y = imp_done(im, c);
	if (coerced)
		y = imp_reshape(im, imp_out_name(im, 0), y, t.rank, t.dim);
	return imp_out(im, 0, y);
}

/* ---- Einsum ----------------------------------------------------------- */

/* node x transposed by perm[0..r) (none when it is the identity), then
 * reshaped to dims[0..nd) (none when that is its shape); named name. */
static int
permute_reshape(Imp *im, const char *name, int x, const int *perm, int r, const int64_t *dims,
    int nd)
{
	bool ident = true, same;
	const Type *t;

	for (int k = 0; k < r; k++)
		ident &= perm[k] == k;
	if (!ident) {
		int64_t p[IR_MAX_RANK];
		int i;

		for (int k = 0; k < r; k++)
			p[k] = perm[k];
		if ((i = imp_new(im, OP_TRANSPOSE, dims ? NULL : name, 1, &x)) < 0)
			return -1;
		imp_set_ints(im, i, ATTR_PERM, p, r);
		x = imp_done(im, i);
	}
	if (!dims || x < 0)
		return x;
	t = imp_type(im, x);
	same = t->rank == nd;
	for (int k = 0; same && k < nd; k++)
		same = t->dim[k] == dims[k];
	return same ? x : imp_reshape(im, name, x, nd, dims);
}

/* One operand's letters: the letter of each axis and its size. */
typedef struct Term {
	int n;
	char c[IR_MAX_RANK];
	int64_t dim[IR_MAX_RANK];
	int node;
} Term;

static int
term_find(const Term *t, char c)
{
	for (int k = 0; k < t->n; k++)
		if (t->c[k] == c)
			return k;
	return -1;
}

/* The letters of t not in keep1 nor keep2, summed away (the sum named
 * name, or fresh). */
static int
term_sum_out(Imp *im, Term *t, const Term *keep1, const Term *keep2, const char *name)
{
	int64_t ax[IR_MAX_RANK];
	int n = 0, m = 0, i;

	for (int k = 0; k < t->n; k++)
		if (term_find(keep1, t->c[k]) < 0 && (!keep2 || term_find(keep2, t->c[k]) < 0))
			ax[n++] = k;
	if (n == 0)
		return 0;
	if ((i = imp_new(im, OP_SUM, name, 1, &t->node)) < 0)
		return -1;
	imp_set_ints(im, i, ATTR_AXIS, ax, n);
	if ((t->node = imp_done(im, i)) < 0)
		return -1;
	for (int k = 0, j = 0; k < t->n; k++) {
		if (j < n && ax[j] == k) {
			j++;
			continue;
		}
		t->c[m] = t->c[k];
		t->dim[m++] = t->dim[k];
	}
	t->n = m;
	return 0;
}

/* Einsum of one or two operands without '...' or a repeated letter in one
 * operand (a diagonal): each operand first sums away the letters only it
 * has and the output lacks; one operand is then a transpose; two are a
 * batched matmul, A transposed to (batch, A's own, contracted) and B to
 * (batch, contracted, B's own), each flattened to three dims, the product
 * unflattened and transposed to the output's order.  Without '->' the
 * output is the letters seen once, in alphabetical order. */
int
onnx_einsum(Imp *im)
{
	const char *eq;
	char buf[256];
	size_t len = 0;
	Term in[2], out = {0};
	int nin = imp_nin(im), nt = 0, perm[IR_MAX_RANK], y;
	const char *arrow, *p;
	int64_t dims[IR_MAX_RANK];

	if (nn_since(im, 12) != 0 || imp_attr_str(im, "equation", NULL, &eq) != 0)
		return -1;
	if (!eq)
		return imp_fail(im, "'equation' is required");
	for (p = eq; *p; p++)
		if (*p != ' ' && len + 1 < sizeof buf)
			buf[len++] = *p;
	buf[len] = 0;
	if (strstr(buf, "..."))
		return imp_unsupported(im, "equation '%s': '...' (aicm's einsum takes named axes "
		    "only)", eq);
	if (nin < 1 || nin > 2)
		return imp_unsupported(im, "%d operands: aicm's einsum takes one or two", nin);
	arrow = strstr(buf, "->");
	p = buf;
	for (;;) {
		Term *t = &in[nt];
		ImpVal *v;
		const Type *ty;

		if (nt == nin)
			return imp_fail(im, "equation '%s' has more terms than the %d operands", eq, nin);
		t->n = 0;
		for (; *p && *p != ',' && *p != '-'; p++) {
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
				return imp_fail(im, "equation '%s': '%c' is not a letter", eq, *p);
			if (term_find(t, *p) >= 0)
				return imp_unsupported(im, "equation '%s': '%c' twice in operand %d (a "
				    "diagonal)", eq, *p, nt);
			if (t->n == IR_MAX_RANK)
				return imp_fail(im, "equation '%s': operand %d has too many axes", eq, nt);
			t->c[t->n++] = *p;
		}
		if (!(v = imp_in_req(im, nt)) || (t->node = imp_node_of(im, v)) < 0)
			return -1;
		ty = imp_type(im, t->node);
		if (ty->rank != t->n)
			return imp_fail(im, "equation '%s': operand %d has %d letters and rank %d", eq, nt,
			    t->n, ty->rank);
		memcpy(t->dim, ty->dim, sizeof(int64_t) * (size_t)t->n);
		nt++;
		if (*p != ',')
			break;
		p++;
	}
	if (nt != nin)
		return imp_fail(im, "equation '%s' has %d terms for %d operands", eq, nt, nin);
	if (arrow) {
		for (p = arrow + 2; *p; p++) {
			if (term_find(&out, *p) >= 0 || (term_find(&in[0], *p) < 0 &&
			    (nt < 2 || term_find(&in[1], *p) < 0)))
				return imp_fail(im, "equation '%s': output letter '%c' is repeated or in no "
				    "operand", eq, *p);
			out.c[out.n++] = *p;
		}
	} else {
		for (char c = 'A'; c <= 'z'; c++) {
			int seen = 0;

			for (int k = 0; k < nt; k++)
				seen += term_find(&in[k], c) >= 0;
			if (seen == 1)
				out.c[out.n++] = c;
		}
	}
	/* shared letters must agree in size (aicm broadcasts no 1 here) */
	if (nt == 2)
		for (int k = 0; k < in[0].n; k++) {
			int j = term_find(&in[1], in[0].c[k]);

			if (j >= 0 && in[1].dim[j] != in[0].dim[k])
				return imp_unsupported(im, "equation '%s': '%c' is %lld in one operand "
				    "and %lld in the other", eq, in[0].c[k], (long long)in[0].dim[k],
				    (long long)in[1].dim[j]);
		}
	if (nt == 1) {
		/* the output's letters in the summed operand's order: when that
		 * is the output's order, the sum is the result */
		Term left = {0};
		bool ident = true;

		for (int k = 0; k < in[0].n; k++)
			if (term_find(&out, in[0].c[k]) >= 0)
				left.c[left.n++] = in[0].c[k];
		for (int k = 0; k < out.n; k++)
			ident &= left.c[k] == out.c[k];
		if (term_sum_out(im, &in[0], &out, NULL, ident ? imp_out_name(im, 0) : NULL) != 0)
			return -1;
		for (int k = 0; k < out.n; k++)
			perm[k] = term_find(&in[0], out.c[k]);
		return imp_out(im, 0, permute_reshape(im, imp_out_name(im, 0), in[0].node, perm,
		    out.n, NULL, 0));
	}
	if (term_sum_out(im, &in[0], &out, &in[1], NULL) != 0 ||
	    term_sum_out(im, &in[1], &out, &in[0], NULL) != 0)
		return -1;
	{
		/* batch letters, A's own, contracted, B's own */
		Term bt = {0}, fa = {0}, ct = {0}, fb = {0}, mid = {0};
		int64_t pb = 1, pa = 1, pk = 1, pf = 1;
		int a, b, n;

		for (int k = 0; k < in[0].n; k++) {
			char c = in[0].c[k];
			Term *dst = term_find(&in[1], c) < 0 ? &fa : term_find(&out, c) >= 0 ? &bt : &ct;

			dst->c[dst->n] = c;
			dst->dim[dst->n++] = in[0].dim[k];
		}
		for (int k = 0; k < in[1].n; k++)
			if (term_find(&in[0], in[1].c[k]) < 0) {
				fb.c[fb.n] = in[1].c[k];
				fb.dim[fb.n++] = in[1].dim[k];
			}
		for (int k = 0; k < bt.n; k++)
			pb *= bt.dim[k];
		for (int k = 0; k < fa.n; k++)
			pa *= fa.dim[k];
		for (int k = 0; k < ct.n; k++)
			pk *= ct.dim[k];
		for (int k = 0; k < fb.n; k++)
			pf *= fb.dim[k];
		n = 0;
		for (int k = 0; k < bt.n; k++)
			perm[n++] = term_find(&in[0], bt.c[k]);
		for (int k = 0; k < fa.n; k++)
			perm[n++] = term_find(&in[0], fa.c[k]);
		for (int k = 0; k < ct.n; k++)
			perm[n++] = term_find(&in[0], ct.c[k]);
		a = permute_reshape(im, NULL, in[0].node, perm, n, (const int64_t[]){pb, pa, pk}, 3);
		n = 0;
		for (int k = 0; k < bt.n; k++)
			perm[n++] = term_find(&in[1], bt.c[k]);
		for (int k = 0; k < ct.n; k++)
			perm[n++] = term_find(&in[1], ct.c[k]);
		for (int k = 0; k < fb.n; k++)
			perm[n++] = term_find(&in[1], fb.c[k]);
		b = permute_reshape(im, NULL, in[1].node, perm, n, (const int64_t[]){pb, pk, pf}, 3);
		/* (batch..., A's own..., B's own...), then the output's order */
		for (Term *s = &bt; s; s = s == &bt ? &fa : s == &fa ? &fb : NULL)
			for (int k = 0; k < s->n; k++) {
				mid.c[mid.n] = s->c[k];
				mid.dim[mid.n++] = s->dim[k];
			}
		memcpy(dims, mid.dim, sizeof(int64_t) * (size_t)mid.n);
		for (int k = 0; k < out.n; k++)
			perm[k] = term_find(&mid, out.c[k]);
		{
			bool ident = true, flat = mid.n == 3 && dims[0] == pb && dims[1] == pa &&
			    dims[2] == pf;

			for (int k = 0; k < out.n; k++)
				ident &= perm[k] == k;
			/* the node that ends up the result carries the output's name */
			y = imp_binary(im, OP_MATMUL, ident && flat ? imp_out_name(im, 0) : NULL, a, b);
			if (mid.n == 0)
				/* a scalar: the (1, 1, 1) product summed over every axis */
				return imp_out(im, 0, imp_op(im, OP_SUM, imp_out_name(im, 0), 1, &y));
			y = permute_reshape(im, ident ? imp_out_name(im, 0) : NULL, y,
			    (const int[]){0, 1, 2}, 3, dims, mid.n);
			if (ident)
				return imp_out(im, 0, y);
		}
		return imp_out(im, 0, permute_reshape(im, imp_out_name(im, 0), y, perm, out.n, NULL,
		    0));
	}
}

/* ---- the losses --------------------------------------------------------- */

/* NegativeLogLikelihoodLoss of log-probabilities node lp (N, C, d..) and
 * targets tv (N, d..), ONNX's reference written without a gather along
 * elements: hit = equal(target as (N, 1, d..), iota over C), and not the
 * ignore_index (so an ignored or out-of-range target picks nothing);
 * the picked value is sum(where(hit, lp, 0)) over C (a where, not a
 * multiply, so a -inf elsewhere stays out), times the picked weight
 * w = sum(cast(hit) * weight) (1 without weights).  'none' is -picked*w,
 * 'sum' its sum, 'mean' the sum over sum(w) (numpy's mean without weights
 * or ignore_index).  The result is named name. */
static int
nll(Imp *im, int lp, ImpVal *tv, ImpVal *wv, const char *red, bool has_ii, int64_t ii,
    const char *name)
{
	Type xt = *imp_type(im, lp), tt, ct;
	int64_t tdims[IR_MAX_RANK], one = 1;
	int t, hit, sel, picked, wsum = -1, loss, cond[3], r = xt.rank, in;
	bool weighted = wv || has_ii;
	ImpData *iota;

	if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean"))
		return imp_fail(im, "reduction is '%s', expected none, sum or mean", red);
	if (r < 2)
		return imp_fail(im, "its input has rank %d, expected (N, C, ...)", r);
	if ((t = imp_node_of(im, tv)) < 0)
		return -1;
	tt = *imp_type(im, t);
	if (!ir_dtype_is_int(tt.dt) || tt.rank != r - 1 || tt.dim[0] != xt.dim[0])
		return imp_fail(im, "its target '%s' must be integers of shape (N, d..) for an "
		    "input of rank %d", tv->name, r);
	for (int k = 1; k < r - 1; k++)
		if (tt.dim[k] != xt.dim[k + 1])
			return imp_fail(im, "its target '%s' does not match the input's dims", tv->name);
	tdims[0] = tt.dim[0];
	tdims[1] = 1;
	for (int k = 2; k < r; k++)
		tdims[k] = tt.dim[k - 1];
	t = imp_reshape(im, NULL, t, r, tdims);
	/* the class numbers, (1, C, 1, ..) in the target's type */
	ct = (Type){.rank = r, .dt = tt.dt};
	for (int k = 0; k < r; k++)
		ct.dim[k] = k == 1 ? xt.dim[1] : 1;
	iota = imp_data_new(im, &ct);
	for (int64_t c = 0; c < xt.dim[1]; c++)
		imp_data_set(iota, c, (double)c, c);
	{
		ImpVal iv = {"classes", ct, -1, iota};

		in = imp_node_of(im, &iv);
	}
	hit = imp_binary(im, OP_EQUAL, NULL, t, in);
	if (has_ii)
		hit = imp_binary(im, OP_AND, NULL, hit, imp_unary(im, OP_NOT, NULL,
		    imp_binary(im, OP_EQUAL, NULL, t, imp_splat(im, tt.dt, (double)ii, 0, NULL))));
	cond[0] = hit;
	cond[1] = lp;
	cond[2] = imp_splat(im, xt.dt, 0, 0, NULL);
	sel = imp_op(im, OP_WHERE, NULL, 3, cond);
	picked = nn_reduce_axes_keep(im, OP_SUM, NULL, sel, &one, 1);
	if (weighted) {
		int hf = imp_new(im, OP_CAST, NULL, 1, &hit);

		if (hf < 0)
			return -1;
		imp_at(im, hf)->to = xt.dt;
		imp_at(im, hf)->set |= AB(TO);
		hf = imp_done(im, hf);
		if (wv)
			hf = imp_binary(im, OP_MUL, NULL, hf, nn_per_channel(im, wv, r, xt.dim[1]));
		wsum = nn_reduce_axes_keep(im, OP_SUM, NULL, hf, &one, 1);
		if (wv)
			picked = imp_binary(im, OP_MUL, NULL, picked, wsum);
	}
	/* (N, 1, d..) -> (N, d..) */
	loss = imp_reshape(im, strcmp(red, "none") ? NULL : name, imp_unary(im, OP_NEG, NULL, picked),
	    tt.rank, tt.dim);
	if (!strcmp(red, "none"))
		return loss;
	if (!strcmp(red, "sum") || !weighted)
		return imp_unary(im, !strcmp(red, "sum") ? OP_SUM : OP_MEAN, name, loss);
	return imp_binary(im, OP_DIV, name, imp_unary(im, OP_SUM, NULL, loss),
	    imp_unary(im, OP_SUM, NULL, wsum));
}

/* The attributes both losses share. */
static int
loss_attrs(Imp *im, const char **red, bool *has_ii, int64_t *ii)
{
	if (nn_since(im, 12) != 0 || imp_attr_str(im, "reduction", "mean", red) != 0)
		return -1;
	*has_ii = imp_has_attr(im, "ignore_index");
	return imp_attr_int(im, "ignore_index", 0, ii);
}

int
onnx_nll_loss(Imp *im)
{
	ImpVal *xv = imp_in_req(im, 0), *tv = imp_in_req(im, 1), *wv = imp_in(im, 2);
	const char *red;
	bool has_ii;
	int64_t ii;
	int x;

	if (!xv || !tv || im->rc || loss_attrs(im, &red, &has_ii, &ii) != 0 ||
	    (x = imp_node_of(im, xv)) < 0)
		return -1;
	return imp_out(im, 0, nll(im, x, tv, wv, red, has_ii, ii, imp_out_name(im, 0)));
}

/* SoftmaxCrossEntropyLoss: the NegativeLogLikelihoodLoss of LogSoftmax
 * over axis 1; that is its second output, log_prob, when asked. */
int
onnx_softmax_ce_loss(Imp *im)
{
	ImpVal *xv = imp_in_req(im, 0), *tv = imp_in_req(im, 1), *wv = imp_in(im, 2);
	const char *red;
	bool has_ii;
	int64_t ii;
	int x, e, s, lp;

	if (!xv || !tv || im->rc || loss_attrs(im, &red, &has_ii, &ii) != 0 ||
	    (x = imp_node_of(im, xv)) < 0)
		return -1;
	if (imp_type(im, x)->rank < 2)
		return imp_fail(im, "its input has rank %d, expected (N, C, ...)", imp_type(im, x)->rank);
	e = imp_binary(im, OP_SUB, NULL, x, reduce1(im, OP_MAX, x, 1));
	s = reduce1(im, OP_SUM, imp_unary(im, OP_EXP, NULL, e), 1);
	lp = imp_binary(im, OP_SUB, imp_out_name(im, 1), e, imp_unary(im, OP_LOG, NULL, s));
	if (imp_out(im, 0, nll(im, lp, tv, wv, red, has_ii, ii, imp_out_name(im, 0))) != 0)
		return -1;
	return imp_nout(im) > 1 ? imp_out(im, 1, lp) : 0;
}
