/*
 * ops_nn.c: ONNX's contractions and the composites built on them.
 *
 * MatMul is aicm's matmul (numpy's rule, ONNX's too).  Gemm is
 * alpha*A'B' + beta*C: the transposes of a known operand (a weight) are
 * folded here, so an exported Linear layer is one matmul and one add at
 * run time; alpha and beta of 1 add no op.  Softmax and LogSoftmax are
 * written in aicm's ops, max-subtracted as every stable softmax is; before
 * opset 13 they coerce the input to 2-D at 'axis' (default 1) and
 * normalise over everything from it, from opset 13 over the one axis
 * (default -1).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "import.h"

int
onnx_matmul(Imp *im)
{
	ImpVal *a = imp_in_req(im, 0), *b = imp_in_req(im, 1);

	if (!a || !b)
		return -1;
	return imp_out(im, 0, imp_binary(im, OP_MATMUL, imp_out_name(im, 0), imp_node_of(im, a),
	    imp_node_of(im, b)));
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

			return imp_fail(im, "C is %s; it must %s (%lld, %lld)", ir_shape_str(ct, sc),
			    bc ? "broadcast to" : "be (broadcast=0)", (long long)yt->dim[0],
			    (long long)yt->dim[1]);
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
	ImpVal *xv = imp_in_req(im, 0);
	int64_t axis, dims[2] = {1, 1};
	int x, r, a, m, e, s, y;
	bool coerced = false;
	const char *last;
	Type t;

	if (!xv || imp_attr_int(im, "axis", im->opset < 13 ? 1 : -1, &axis) != 0)
		return -1;
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	t = *imp_type(im, x);
	r = t.rank;
	if ((a = imp_axis(im, axis, r, "'axis'")) < 0)
		return -1;
	if (im->opset < 13 && a != r - 1) {
		/* everything from axis on is one row */
		for (int k = 0; k < r; k++)
			dims[k >= a] *= t.dim[k];
		x = imp_reshape(im, NULL, x, 2, dims);
		a = 1;
		coerced = true;
	}
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

/* ---- helpers shared by the window ops and the normalisations ---------- */

/* v's node with shape dims[0..rank): known data is copied under the new
 * shape (a weight stays one const), else a reshape. */
static int
reshaped(Imp *im, ImpVal *v, int rank, const int64_t *dims)
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
static int
per_channel(Imp *im, ImpVal *v, int r, int64_t c)
{
	int64_t dims[IR_MAX_RANK];

	if (v->type.rank >= 0 && ir_type_numel(&v->type) != c)
		return imp_fail(im, "'%s' has %lld elements; it takes one a channel, %lld",
		    v->name, (long long)ir_type_numel(&v->type), (long long)c);
	dims[0] = c;
	for (int k = 1; k < r - 1; k++)
		dims[k] = 1;
	return reshaped(im, v, r > 1 ? r - 1 : 1, dims);
}

/* A reduction of node x over axes ax[0..n), keepdims. */
static int
reduce_axes_keep(Imp *im, OpId op, const char *name, int x, const int64_t *ax, int n)
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

/* ---- Conv and the pools ----------------------------------------------- */

/* A conv's or pool's window over nsp (1 or 2) spatial dims, in ONNX's
 * terms: pads are the begins then the ends. */
typedef struct Geo {
	int nsp;
	int64_t k[3], s[3], d[3], p[6];
} Geo;

/* An INTS attribute of nsp positive entries (or 2*nsp non-negative ones
 * for pads) into v, def when absent. */
static int
geo_ints(Imp *im, const char *name, int want, int64_t lo, int64_t def, int64_t *v)
{
	const int64_t *a;
	bool present;
	int n = imp_attr_ints(im, name, &a, &present);

	if (n < 0)
		return -1;
	if (!present) {
		for (int k = 0; k < want; k++)
			v[k] = def;
		return 0;
	}
	if (n != want)
		return imp_fail(im, "'%s' has %d entries, expected %d", name, n, want);
	for (int k = 0; k < want; k++) {
		if (a[k] < lo)
			return imp_fail(im, "'%s' entry %d is %lld, expected %s", name, k,
			    (long long)a[k], lo ? "a positive number" : "0 or more");
		v[k] = a[k];
	}
	return 0;
}

/* Reads kernel_shape (wk: the conv's kernel, which it must match; NULL:
 * required), strides, dilations (when has_dil; else 1s), pads and
 * auto_pad of an input of type xt; SAME_UPPER/SAME_LOWER become explicit
 * pads the way ONNX computes them (output ceil(in / stride), the odd pad
 * at the end for UPPER, at the begin for LOWER). */
static int
read_geo(Imp *im, const Type *xt, const int64_t *wk, bool has_dil, Geo *g)
{
	int nsp = xt->rank - 2;
	const char *ap;
	bool any_pad = false;

	g->nsp = nsp;
	if (wk) {
		const int64_t *a;
		bool present;
		int n = imp_attr_ints(im, "kernel_shape", &a, &present);

		if (n < 0)
			return -1;
		for (int k = 0; k < nsp; k++) {
			if (present && (n != nsp || a[k] != wk[k]))
				return imp_fail(im, "'kernel_shape' does not match the kernel of w (dim "
				    "%d: %lld, expected %lld)", k + 2, n == nsp ? (long long)a[k] : -1LL,
				    (long long)wk[k]);
			g->k[k] = wk[k];
		}
	} else {
		if (!imp_has_attr(im, "kernel_shape"))
			return imp_fail(im, "'kernel_shape' is required");
		if (geo_ints(im, "kernel_shape", nsp, 1, 1, g->k) != 0)
			return -1;
	}
	if (geo_ints(im, "strides", nsp, 1, 1, g->s) != 0 ||
	    geo_ints(im, "pads", 2 * nsp, 0, 0, g->p) != 0)
		return -1;
	if (has_dil) {
		if (geo_ints(im, "dilations", nsp, 1, 1, g->d) != 0)
			return -1;
	} else {
		g->d[0] = g->d[1] = g->d[2] = 1;
	}
	if (imp_attr_str(im, "auto_pad", "NOTSET", &ap) != 0)
		return -1;
	for (int k = 0; k < 2 * nsp; k++)
		any_pad |= g->p[k] != 0;
	if (!strcmp(ap, "NOTSET"))
		return 0;
	if (any_pad)
		return imp_fail(im, "'pads' and auto_pad '%s' are both given", ap);
	if (!strcmp(ap, "VALID"))
		return 0;
	if (strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER"))
		return imp_fail(im, "auto_pad is '%s', expected NOTSET, VALID, SAME_UPPER or "
		    "SAME_LOWER", ap);
	for (int k = 0; k < nsp; k++) {
		int64_t in = xt->dim[2 + k], out = (in + g->s[k] - 1) / g->s[k];
		int64_t total = (out - 1) * g->s[k] + (g->k[k] - 1) * g->d[k] + 1 - in;

		if (total < 0)
			total = 0;
		g->p[k] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
		g->p[nsp + k] = total - g->p[k];
	}
	return 0;
}

/* Sets aicm's 2-D window attributes on node i from g (a 1-D window gets a
 * height of 1); kernel= only for the pools.  Defaults are left unset. */
static void
set_geo(Imp *im, int i, const Geo *g, bool kernel)
{
	int64_t k[2] = {1, 1}, s[2] = {1, 1}, d[2] = {1, 1}, p[4] = {0, 0, 0, 0};
	int o = 2 - g->nsp;
	bool pads = false;

	for (int j = 0; j < g->nsp; j++) {
		k[o + j] = g->k[j];
		s[o + j] = g->s[j];
		d[o + j] = g->d[j];
		p[o + j] = g->p[j];
		p[2 + o + j] = g->p[g->nsp + j];
	}
	for (int j = 0; j < 4; j++)
		pads |= p[j] != 0;
	if (kernel)
		imp_set_ints(im, i, ATTR_KERNEL, k, 2);
	if (s[0] != 1 || s[1] != 1)
		imp_set_ints(im, i, ATTR_STRIDES, s, 2);
	if (pads)
		imp_set_ints(im, i, ATTR_PADS, p, 4);
	if (d[0] != 1 || d[1] != 1)
		imp_set_ints(im, i, ATTR_DILATIONS, d, 2);
}

/* The input of a window op: rank 3 (1-D) or 4 (2-D), or 5 (3-D) for a
 * pool (max3 set); more spatial dims aicm has no op for. */
static int
window_rank(Imp *im, const Type *xt, const char *what, int max)
{
	if (xt->rank > max + 2)
		return imp_unsupported(im, "a %d-D %s: aicm's are 2-D (a 1-D one becomes a height "
		    "of 1%s)", xt->rank - 2, what, max == 3 ? ", a 3-D one two 2-D pools" : "");
	if (xt->rank < 3)
		return imp_fail(im, "its input has rank %d, expected (N, C, spatial dims)", xt->rank);
	return 0;
}

/* (N, C, L) -> (N, C, 1, L) */
static int
to_2d(Imp *im, int x)
{
	const Type *t = imp_type(im, x);

	return imp_reshape(im, NULL, x, 4, (const int64_t[]){t->dim[0], t->dim[1], 1, t->dim[2]});
}

/* (N, C, 1, L) -> (N, C, L), named after output 0 */
static int
from_2d(Imp *im, int y)
{
	const Type *t;

	if (y < 0)
		return -1;
	t = imp_type(im, y);
	return imp_reshape(im, imp_out_name(im, 0), y, 3,
	    (const int64_t[]){t->dim[0], t->dim[1], t->dim[3]});
}

int
onnx_conv(Imp *im)
{
	ImpVal *xv = imp_in_req(im, 0), *wv = imp_in_req(im, 1), *bv = imp_in(im, 2);
	int64_t group;
	int x, w, in[3], i, y;
	Type xt, wt;
	Geo g;

	if (!xv || !wv || (im->rc && !bv) || imp_attr_int(im, "group", 1, &group) != 0)
		return -1;
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	xt = *imp_type(im, x);
	if (window_rank(im, &xt, "convolution", 2) != 0)
		return -1;
	if (wv->k) {
		wt = wv->k->type;
	} else {
		if ((w = imp_node_of(im, wv)) < 0)
			return -1;
		wt = *imp_type(im, w);
	}
	if (wt.rank != xt.rank)
		return imp_fail(im, "w '%s' has rank %d; x has rank %d", wv->name, wt.rank, xt.rank);
	if (read_geo(im, &xt, wt.dim + 2, true, &g) != 0)
		return -1;
	if (g.nsp == 1) {
		x = to_2d(im, x);
		w = reshaped(im, wv, 4, (const int64_t[]){wt.dim[0], wt.dim[1], 1, wt.dim[2]});
	} else {
		w = imp_node_of(im, wv);
	}
	in[0] = x;
	in[1] = w;
	if (bv)
		in[2] = imp_node_of(im, bv);
	if ((i = imp_new(im, OP_CONV2D, g.nsp == 2 ? imp_out_name(im, 0) : NULL, bv ? 3 : 2,
	    in)) < 0)
		return -1;
	set_geo(im, i, &g, false);
	if (group != 1) {
		imp_at(im, i)->groups = group;
		imp_at(im, i)->set |= AB(GROUPS);
	}
	y = imp_done(im, i);
	return imp_out(im, 0, g.nsp == 1 ? from_2d(im, y) : y);
}

/* One aicm pool of node x over window g (1-D or 2-D). */
static int
pool2(Imp *im, OpId op, const char *name, int x, const Geo *g, bool ceil_mode, bool cip)
{
	int i = imp_new(im, op, name, 1, &x);

	if (i < 0)
		return -1;
	set_geo(im, i, g, true);
	if (ceil_mode) {
		imp_at(im, i)->ceil_mode = true;
		imp_at(im, i)->set |= AB(CEIL_MODE);
	}
	if (cip) {
		imp_at(im, i)->count_include_pad = true;
		imp_at(im, i)->set |= AB(COUNT_INCLUDE_PAD);
	}
	return imp_done(im, i);
}

/* A 3-D pool as two 2-D ones: (H, W) over (N, C*D, H, W), then D over
 * (N, C, D, OH*OW).  Max and average are separable over a box: the max of
 * the maxes is the max, and the count an average divides by (the
 * positions inside the input, or inside the padded input, never the
 * ceil_mode overhang) is the product of the per-dim counts. */
static int
pool3(Imp *im, OpId op, int x, const Geo *g, bool ceil_mode, bool cip)
{
	const Type *t = imp_type(im, x);
	int64_t n = t->dim[0], c = t->dim[1], d = t->dim[2], oh, ow;
	Geo hw = {.nsp = 2, .k = {g->k[1], g->k[2]}, .s = {g->s[1], g->s[2]},
	    .d = {g->d[1], g->d[2]}, .p = {g->p[1], g->p[2], g->p[4], g->p[5]}};
	Geo dd = {.nsp = 2, .k = {g->k[0], 1}, .s = {g->s[0], 1}, .d = {g->d[0], 1},
	    .p = {g->p[0], 0, g->p[3], 0}};
	int y;

	y = imp_reshape(im, NULL, x, 4, (const int64_t[]){n, c * d, t->dim[3], t->dim[4]});
	if ((y = pool2(im, op, NULL, y, &hw, ceil_mode, cip)) < 0)
		return -1;
	oh = imp_type(im, y)->dim[2];
	ow = imp_type(im, y)->dim[3];
	y = imp_reshape(im, NULL, y, 4, (const int64_t[]){n, c, d, oh * ow});
	if ((y = pool2(im, op, NULL, y, &dd, ceil_mode, cip)) < 0)
		return -1;
	return imp_reshape(im, imp_out_name(im, 0), y, 5,
	    (const int64_t[]){n, c, imp_type(im, y)->dim[2], oh, ow});
}

static int
pool(Imp *im, OpId op)
{
	ImpVal *xv = imp_in_req(im, 0);
	int64_t ceil_mode = 0, cip = 0, storage = 0;
	int x, y;
	Type xt;
	Geo g;

	if (!xv)
		return -1;
	if (im->opset >= 10 && imp_attr_int(im, "ceil_mode", 0, &ceil_mode) != 0)
		return -1;
	if (op == OP_AVG_POOL2D && im->opset >= 7 &&
	    imp_attr_int(im, "count_include_pad", 0, &cip) != 0)
		return -1;
	/* storage_order only says how Indices count */
	if (op == OP_MAX_POOL2D && im->opset >= 8 &&
	    imp_attr_int(im, "storage_order", 0, &storage) != 0)
		return -1;
	if (op == OP_MAX_POOL2D && imp_out_wanted(im, 1))
		return imp_unsupported(im, "its Indices output (output 1): aicm's max_pool2d gives "
		    "the values only");
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	xt = *imp_type(im, x);
	if (window_rank(im, &xt, "pool", 3) != 0 ||
	    read_geo(im, &xt, NULL, op == OP_MAX_POOL2D && im->opset >= 10, &g) != 0)
		return -1;
	if (g.nsp == 3)
		return imp_out(im, 0, pool3(im, op, x, &g, ceil_mode, cip));
	if (g.nsp == 1)
		x = to_2d(im, x);
	y = pool2(im, op, g.nsp == 2 ? imp_out_name(im, 0) : NULL, x, &g, ceil_mode, cip);
	return imp_out(im, 0, g.nsp == 1 ? from_2d(im, y) : y);
}

int
onnx_max_pool(Imp *im)
{
	return pool(im, OP_MAX_POOL2D);
}

int
onnx_average_pool(Imp *im)
{
	return pool(im, OP_AVG_POOL2D);
}

/* LpPool: (sum over the window of |x|^p)^(1/p), the sum an avg_pool2d
 * counting the zero padding times the window's size.  p is a float
 * attribute in opset 1, an int from 2. */
int
onnx_lp_pool(Imp *im)
{
	ImpVal *xv = imp_in_req(im, 0);
	double p;
	int64_t ip;
	int x, i, ax, px, s;
	Type xt;
	Geo g;

	if (!xv)
		return -1;
	if (im->opset < 2) {
		if (imp_attr_float(im, "p", 2, &p) != 0)
			return -1;
	} else {
		if (imp_attr_int(im, "p", 2, &ip) != 0)
			return -1;
		p = (double)ip;
	}
	if (!(p > 0))
		return imp_fail(im, "'p' is %g, expected a positive number", p);
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	xt = *imp_type(im, x);
	if (window_rank(im, &xt, "pool", 2) != 0 || read_geo(im, &xt, NULL, false, &g) != 0)
		return -1;
	if (g.nsp == 1)
		x = to_2d(im, x);
	ax = imp_unary(im, OP_ABS, NULL, x);
	px = p == 1 ? ax : p == 2 ? imp_binary(im, OP_MUL, NULL, x, x) :
	    imp_binary(im, OP_POW, NULL, ax, imp_splat(im, xt.dt, p, 0, NULL));
	if ((i = imp_new(im, OP_AVG_POOL2D, NULL, 1, &px)) < 0)
		return -1;
	set_geo(im, i, &g, true);
	imp_at(im, i)->count_include_pad = true;
	imp_at(im, i)->set |= AB(COUNT_INCLUDE_PAD);
	s = imp_binary(im, OP_MUL, p == 1 && g.nsp == 2 ? imp_out_name(im, 0) : NULL,
	    imp_done(im, i), imp_splat(im, xt.dt, (double)(g.k[0] * (g.nsp == 2 ? g.k[1] : 1)), 0,
	    NULL));
	if (p == 2)
		s = imp_unary(im, OP_SQRT, g.nsp == 2 ? imp_out_name(im, 0) : NULL, s);
	else if (p != 1)
		s = imp_binary(im, OP_POW, g.nsp == 2 ? imp_out_name(im, 0) : NULL, s,
		    imp_splat(im, xt.dt, 1 / p, 0, NULL));
	return imp_out(im, 0, g.nsp == 1 ? from_2d(im, s) : s);
}

/* GlobalAveragePool, GlobalMaxPool: mean or max over every spatial axis,
 * kept. */
static int
global_pool(Imp *im, OpId op)
{
	ImpVal *xv = imp_in_req(im, 0);
	int64_t ax[IR_MAX_RANK];
	int x, r;

	if (!xv || (x = imp_node_of(im, xv)) < 0)
		return -1;
	r = imp_type(im, x)->rank;
	if (r < 3)
		return imp_fail(im, "its input has rank %d, expected (N, C, spatial dims)", r);
	for (int k = 2; k < r; k++)
		ax[k - 2] = k;
	return imp_out(im, 0, reduce_axes_keep(im, op, imp_out_name(im, 0), x, ax, r - 2));
}

int
onnx_global_average_pool(Imp *im)
{
	return global_pool(im, OP_MEAN);
}

int
onnx_global_max_pool(Imp *im)
{
	return global_pool(im, OP_MAX);
}

/* ---- normalisations --------------------------------------------------- */

/* BatchNormalization in inference: y = (x - mean) / sqrt(var + eps) *
 * scale + bias per channel.  With the four operands known (a trained
 * model's) it folds here into y = x * a + b, a = scale / sqrt(var + eps)
 * and b = bias - mean * a computed in doubles, two (C, 1, ..) consts;
 * else the formula is emitted.  Before opset 9 'spatial=0' gives the
 * operands the shape of x's dims from 1 on (one a position, no reshape);
 * before 7 'is_test=0' means training.  Training (training_mode=1 from
 * opset 14, or any of the running-statistics outputs) is unsupported. */
int
onnx_batch_norm(Imp *im)
{
	ImpVal *xv = imp_in_req(im, 0), *p[4];
	int64_t spatial = 1, is_test = 1, training = 0, c;
	double eps;
	int x, r, pn[4], y;
	Type xt;

	if (!xv || imp_attr_float(im, "epsilon", 1e-5, &eps) != 0)
		return -1;
	for (int k = 0; k < 4; k++)
		if (!(p[k] = imp_in_req(im, k + 1)))
			return -1;
	imp_attr_ignore(im, "momentum", "consumed_inputs", NULL);
	if (im->opset < 9 && imp_attr_int(im, "spatial", 1, &spatial) != 0)
		return -1;
	if (im->opset < 7 && imp_attr_int(im, "is_test", 0, &is_test) != 0)
		return -1;
	if (im->opset >= 14 && imp_attr_int(im, "training_mode", 0, &training) != 0)
		return -1;
	if (training || !is_test)
		return imp_unsupported(im, "%s: training normalises with the batch's own statistics; "
		    "aicm imports inference", training ? "training_mode=1" : "is_test=0");
	for (int k = 1; k < imp_nout(im); k++)
		if (imp_out_wanted(im, k))
			return imp_unsupported(im, "output %d, a training statistic: aicm imports "
			    "inference", k);
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	xt = *imp_type(im, x);
	r = xt.rank;
	if (r < 2)
		return imp_fail(im, "its input has rank %d, expected (N, C, ...)", r);
	c = xt.dim[1];
	if (p[0]->k && p[1]->k && p[2]->k && p[3]->k) {
		Type pt = {.rank = spatial ? (r > 2 ? r - 1 : 1) : r - 1, .dt = xt.dt};
		ImpData *a, *b;
		int64_t n;

		pt.dim[0] = c;
		for (int k = 1; k < pt.rank; k++)
			pt.dim[k] = spatial ? 1 : xt.dim[k + 1];
		n = ir_type_numel(&pt);
		for (int k = 0; k < 4; k++)
			if (ir_type_numel(&p[k]->k->type) != n)
				return imp_fail(im, "'%s' has %lld elements, expected %lld", p[k]->name,
				    (long long)ir_type_numel(&p[k]->k->type), (long long)n);
		a = imp_data_new(im, &pt);
		b = imp_data_new(im, &pt);
		for (int64_t e = 0; e < n; e++) {
			double av = imp_data_f64(p[0]->k, e) / sqrt(imp_data_f64(p[3]->k, e) + eps);

			imp_data_set(a, e, av, 0);
			imp_data_set(b, e, imp_data_f64(p[1]->k, e) - imp_data_f64(p[2]->k, e) * av, 0);
		}
		{
			/* named after the output: they are not the model's scale and bias */
			char na[256], nb[256];
			ImpVal va = {na, pt, -1, a}, vb = {nb, pt, -1, b};

			snprintf(na, sizeof na, "%s_scale", im->n->output[0]);
			snprintf(nb, sizeof nb, "%s_shift", im->n->output[0]);

			y = imp_binary(im, OP_MUL, NULL, x, imp_node_of(im, &va));
			return imp_out(im, 0, imp_binary(im, OP_ADD, imp_out_name(im, 0), y,
			    imp_node_of(im, &vb)));
		}
	}
	for (int k = 0; k < 4; k++) {
		if (spatial) {
			pn[k] = per_channel(im, p[k], r, c);
		} else {
			if (imp_node_of(im, p[k]) < 0)
				return -1;
			pn[k] = reshaped(im, p[k], r - 1, xt.dim + 1);
		}
	}
	y = imp_binary(im, OP_DIV, NULL, imp_binary(im, OP_SUB, NULL, x, pn[2]),
	    imp_unary(im, OP_SQRT, NULL, imp_binary(im, OP_ADD, NULL, pn[3],
	    imp_splat(im, xt.dt, eps, 0, NULL))));
	y = imp_binary(im, OP_MUL, NULL, y, pn[0]);
	return imp_out(im, 0, imp_binary(im, OP_ADD, imp_out_name(im, 0), y, pn[1]));
}

/* (x - mean) / sqrt(var + eps) over axes ax[0..n) of node x, the mean and
 * the variance kept; *mean and *inv (1 / sqrt(var + eps)) when asked,
 * named after outputs 1 and 2 (LayerNormalization's). */
static int
normalise(Imp *im, int x, const int64_t *ax, int n, double eps, int *mean, int *inv)
{
	DType dt = imp_type(im, x)->dt;
	int m = reduce_axes_keep(im, OP_MEAN, mean ? imp_out_name(im, 1) : NULL, x, ax, n);
	int d = imp_binary(im, OP_SUB, NULL, x, m);
	int v = reduce_axes_keep(im, OP_MEAN, NULL, imp_binary(im, OP_MUL, NULL, d, d), ax, n);
	int sd = imp_unary(im, OP_SQRT, NULL, imp_binary(im, OP_ADD, NULL, v,
	    imp_splat(im, dt, eps, 0, NULL)));

	if (mean)
		*mean = m;
	if (inv) {
		*inv = imp_unary(im, OP_RECIPROCAL, imp_out_name(im, 2), sd);
		return imp_binary(im, OP_MUL, NULL, d, *inv);
	}
	return imp_binary(im, OP_DIV, NULL, d, sd);
}

/* InstanceNormalization: normalised over the spatial axes of each (n, c),
 * then scale and bias per channel. */
int
onnx_instance_norm(Imp *im)
{
	ImpVal *xv = imp_in_req(im, 0), *sv = imp_in_req(im, 1), *bv = imp_in_req(im, 2);
	int64_t ax[IR_MAX_RANK];
	double eps;
	int x, r, y;

	imp_attr_ignore(im, "consumed_inputs", NULL);
	if (!xv || !sv || !bv || imp_attr_float(im, "epsilon", 1e-5, &eps) != 0)
		return -1;
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	r = imp_type(im, x)->rank;
	if (r < 3)
		return imp_fail(im, "its input has rank %d, expected (N, C, spatial dims)", r);
	for (int k = 2; k < r; k++)
		ax[k - 2] = k;
	y = normalise(im, x, ax, r - 2, eps, NULL, NULL);
	y = imp_binary(im, OP_MUL, NULL, y, per_channel(im, sv, r, imp_type(im, x)->dim[1]));
	return imp_out(im, 0, imp_binary(im, OP_ADD, imp_out_name(im, 0), y,
	    per_channel(im, bv, r, imp_type(im, x)->dim[1])));
}

/* LayerNormalization (opset 17): normalised over the axes from 'axis' on,
 * computed in stash_type (1: f32; 11: f64; x cast to it and the result
 * cast back, as ONNX's function does), then Scale and optional B
 * broadcast numpy's way.  The Mean and InvStdDev outputs are the kept
 * statistics, in stash_type. */
int
onnx_layer_norm(Imp *im)
{
	ImpVal *xv = imp_in_req(im, 0), *sv = imp_in_req(im, 1), *bv = imp_in(im, 2);
	int64_t axis, stash, ax[IR_MAX_RANK];
	double eps;
	int x, xs, r, a, y, mean, inv;
	DType dt, st;
	bool last;

	if (!xv || !sv || im->rc || imp_attr_int(im, "axis", -1, &axis) != 0 ||
	    imp_attr_float(im, "epsilon", 1e-5, &eps) != 0 ||
	    imp_attr_int(im, "stash_type", 1, &stash) != 0)
		return -1;
	if (stash != 1 && stash != 11)
		return imp_unsupported(im, "stash_type %lld: aicm computes in f32 (1) or f64 (11)",
		    (long long)stash);
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	dt = imp_type(im, x)->dt;
	st = stash == 1 ? DT_F32 : DT_F64;
	if (!ir_dtype_is_float(dt))
		return imp_fail(im, "its input is %s, expected a float type", ir_dtype_name(dt));
	r = imp_type(im, x)->rank;
	if ((a = imp_axis(im, axis, r, "'axis'")) < 0)
		return -1;
	for (int k = a; k < r; k++)
		ax[k - a] = k;
	xs = x;
	if (st != dt) {
		if ((xs = imp_new(im, OP_CAST, NULL, 1, &x)) < 0)
			return -1;
		imp_at(im, xs)->to = st;
		imp_at(im, xs)->set |= AB(TO);
		xs = imp_done(im, xs);
	}
	y = normalise(im, xs, ax, r - a, eps, &mean, &inv);
	if (st != dt) {
		int c;

		if ((c = imp_new(im, OP_CAST, NULL, 1, &y)) < 0)
			return -1;
		imp_at(im, c)->to = dt;
		imp_at(im, c)->set |= AB(TO);
		y = imp_done(im, c);
	}
	last = !bv;
	y = imp_binary(im, OP_MUL, last ? imp_out_name(im, 0) : NULL, y, imp_node_of(im, sv));
	if (bv)
		y = imp_binary(im, OP_ADD, imp_out_name(im, 0), y, imp_node_of(im, bv));
	if (imp_out(im, 0, y) != 0)
		return -1;
	if (imp_nout(im) > 1 && imp_out(im, 1, mean) != 0)
		return -1;
	if (imp_nout(im) > 2 && imp_out(im, 2, inv) != 0)
		return -1;
	return 0;
}

/* LpNormalization: x / ||x||_p along 'axis', p 1 or 2. */
int
onnx_lp_norm(Imp *im)
{
	ImpVal *xv = imp_in_req(im, 0);
	int64_t axis, p, a;
	int x, nrm;

	if (!xv || imp_attr_int(im, "axis", -1, &axis) != 0 || imp_attr_int(im, "p", 2, &p) != 0)
		return -1;
	if (p != 1 && p != 2)
		return imp_fail(im, "'p' is %lld, expected 1 or 2", (long long)p);
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	if ((a = imp_axis(im, axis, imp_type(im, x)->rank, "'axis'")) < 0)
		return -1;
	if (p == 1)
		nrm = reduce_axes_keep(im, OP_SUM, NULL, imp_unary(im, OP_ABS, NULL, x), &a, 1);
	else
		nrm = imp_unary(im, OP_SQRT, NULL, reduce_axes_keep(im, OP_SUM, NULL,
		    imp_binary(im, OP_MUL, NULL, x, x), &a, 1));
	return imp_out(im, 0, imp_binary(im, OP_DIV, imp_out_name(im, 0), x, nrm));
}

/* MeanVarianceNormalization, as ONNX's function body writes it:
 * (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over 'axes' (0, 2, 3). */
int
onnx_mvn(Imp *im)
{
	ImpVal *xv = imp_in_req(im, 0);
	static const int64_t dflt[3] = {0, 2, 3};
	const int64_t *av;
	int64_t ax[IR_MAX_RANK];
	bool present, seen[IR_MAX_RANK] = {false};
	int n, x, r, m, m2, sd;
	DType dt;

	if (!xv || (n = imp_attr_ints(im, "axes", &av, &present)) < 0)
		return -1;
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	r = imp_type(im, x)->rank;
	dt = imp_type(im, x)->dt;
	if (!present) {
		av = dflt;
		n = 3;
	}
	if (n == 0 || n > r)
		return imp_fail(im, "'axes' has %d entries for an input of rank %d", n, r);
	for (int k = 0; k < n; k++) {
		int a = imp_axis(im, av[k], r, "an axis");

		if (a < 0)
			return -1;
		if (seen[a])
			return imp_fail(im, "axis %lld is given twice", (long long)av[k]);
		seen[a] = true;
		ax[k] = a;
	}
	m = reduce_axes_keep(im, OP_MEAN, NULL, x, ax, n);
	m2 = reduce_axes_keep(im, OP_MEAN, NULL, imp_binary(im, OP_MUL, NULL, x, x), ax, n);
	sd = imp_unary(im, OP_SQRT, NULL, imp_binary(im, OP_SUB, NULL, m2,
	    imp_binary(im, OP_MUL, NULL, m, m)));
	sd = imp_binary(im, OP_ADD, NULL, sd, imp_splat(im, dt, 1e-9, 0, NULL));
	return imp_out(im, 0, imp_binary(im, OP_DIV, imp_out_name(im, 0),
	    imp_binary(im, OP_SUB, NULL, x, m), sd));
}

/* LRN: x / (bias + alpha / size * sum of x^2 over the channel window
 * [c - (size-1)/2, c + ceil((size-1)/2)])^beta.  The channel-window sum is
 * an avg_pool2d over (N, 1, C, rest) counting the zero padding, times
 * size: so alpha * mean. */
int
onnx_lrn(Imp *im)
{
	ImpVal *xv = imp_in_req(im, 0);
	double alpha, beta, bias;
	int64_t size, rest = 1;
	int x, r, sq, i, d;
	Type xt;

	if (!xv || imp_attr_float(im, "alpha", 1e-4, &alpha) != 0 ||
	    imp_attr_float(im, "beta", 0.75, &beta) != 0 ||
	    imp_attr_float(im, "bias", 1, &bias) != 0 || imp_attr_int(im, "size", 0, &size) != 0)
		return -1;
	if (size < 1)
		return imp_fail(im, "'size' is %lld, expected a positive number", (long long)size);
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	xt = *imp_type(im, x);
	r = xt.rank;
	if (r < 3)
		return imp_fail(im, "its input has rank %d, expected (N, C, spatial dims)", r);
	for (int k = 2; k < r; k++)
		rest *= xt.dim[k];
	sq = imp_reshape(im, NULL, imp_binary(im, OP_MUL, NULL, x, x), 4,
	    (const int64_t[]){xt.dim[0], 1, xt.dim[1], rest});
	if ((i = imp_new(im, OP_AVG_POOL2D, NULL, 1, &sq)) < 0)
		return -1;
	imp_set_ints(im, i, ATTR_KERNEL, (const int64_t[]){size, 1}, 2);
	imp_set_ints(im, i, ATTR_PADS, (const int64_t[]){(size - 1) / 2, 0, size / 2, 0}, 4);
	imp_at(im, i)->count_include_pad = true;
	imp_at(im, i)->set |= AB(COUNT_INCLUDE_PAD);
	d = imp_reshape(im, NULL, imp_done(im, i), r, xt.dim);
	d = imp_binary(im, OP_ADD, NULL, imp_binary(im, OP_MUL, NULL, d,
	    imp_splat(im, xt.dt, alpha, 0, NULL)), imp_splat(im, xt.dt, bias, 0, NULL));
	d = imp_binary(im, OP_POW, NULL, d, imp_splat(im, xt.dt, beta, 0, NULL));
	return imp_out(im, 0, imp_binary(im, OP_DIV, imp_out_name(im, 0), x, d));
}

/* Hardmax: 1 at the first maximum along the axis, 0 elsewhere (before
 * opset 13 over the 2-D coercion at 'axis', as Softmax).  Written without
 * argmax: the first index whose value equals the max (or is NaN, which the
 * max keeps, as np.argmax picks the first NaN) is the min over where(hit,
 * iota, D); the result compares iota with it. */
int
onnx_hardmax(Imp *im)
{
	ImpVal *xv = imp_in_req(im, 0);
	int64_t axis, dims[2] = {1, 1}, io[IR_MAX_RANK], len;
	int x, r, a, m, hit, first, y, c;
	bool coerced = false;
	Type t, it;
	ImpData *iota;

	if (!xv || imp_attr_int(im, "axis", im->opset < 13 ? 1 : -1, &axis) != 0)
		return -1;
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	t = *imp_type(im, x);
	r = t.rank;
	if ((a = imp_axis(im, axis, r, "'axis'")) < 0)
		return -1;
	if (!ir_dtype_is_float(t.dt))
		return imp_fail(im, "its input is %s, expected a float type", ir_dtype_name(t.dt));
	if (im->opset < 13 && a != r - 1) {
		for (int k = 0; k < r; k++)
			dims[k >= a] *= t.dim[k];
		x = imp_reshape(im, NULL, x, 2, dims);
		a = 1;
		coerced = true;
	}
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

		m = reduce_axes_keep(im, OP_MAX, NULL, x, (const int64_t[]){a}, 1);
		hit = imp_binary(im, OP_OR, NULL, imp_binary(im, OP_EQUAL, NULL, x, m),
		    imp_unary(im, OP_ISNAN, NULL, x));
		cond[0] = hit;
		cond[1] = in;
		cond[2] = imp_splat(im, DT_I64, (double)len, 0, NULL);
		first = reduce_axes_keep(im, OP_MIN, NULL, imp_op(im, OP_WHERE, NULL, 3, cond),
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

	if (imp_attr_str(im, "equation", NULL, &eq) != 0)
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

/* ---- ConvTranspose ---------------------------------------------------- */

/* ConvTranspose (1-D and 2-D, a known weight) as the conv2d it equals: x
 * with stride-1 zeros inserted after each element (a reshape to (N, C, H,
 * 1, W, 1), a pad of the new dims, a reshape back), padded by ext - 1 -
 * pads_begin before and ext - 1 - pads_end + output_padding after (ext =
 * (k - 1) * dilation + 1; a negative amount a slice), convolved at stride
 * 1 with the weight turned into conv2d's (F, C/g, KH, KW) and flipped in
 * both spatial dims, computed here.  The pads are ONNX's: given, or from
 * output_shape or auto_pad SAME_* (output in * stride), the odd one at
 * the end for SAME_UPPER and at the begin otherwise. */
int
onnx_conv_transpose(Imp *im)
{
	ImpVal *xv = imp_in_req(im, 0), *wv = imp_in_req(im, 1), *bv = imp_in(im, 2);
	int64_t group, k[2] = {1, 1}, s[2] = {1, 1}, d[2] = {1, 1}, op[2] = {0, 0};
	int64_t p[4] = {0, 0, 0, 0}, os[2], pb[2], pe[2], in[2], x4[4];
	const int64_t *oa, *ka;
	bool has_os, has_k;
	const char *ap;
	int nsp, x, w, i, y, nos, nk, o;
	Type xt, wt, wt2;
	ImpData *wd;

	if (!xv || !wv || (im->rc && !bv) || imp_attr_int(im, "group", 1, &group) != 0)
		return -1;
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	xt = *imp_type(im, x);
	if (window_rank(im, &xt, "transposed convolution", 2) != 0)
		return -1;
	nsp = xt.rank - 2;
	o = 2 - nsp;
	if (wv->k) {
		wt = wv->k->type;
	} else {
		if ((w = imp_node_of(im, wv)) < 0)
			return -1;
		wt = *imp_type(im, w);
	}
	if (wt.rank != xt.rank || wt.dim[0] != xt.dim[1] || group < 1 || xt.dim[1] % group)
		return imp_fail(im, "w '%s' must be (C, M/group, kernel...) for x with C=%lld and "
		    "group=%lld", wv->name, (long long)xt.dim[1], (long long)group);
	if ((nk = imp_attr_ints(im, "kernel_shape", &ka, &has_k)) < 0 ||
	    (nos = imp_attr_ints(im, "output_shape", &oa, &has_os)) < 0 ||
	    geo_ints(im, "strides", nsp, 1, 1, s + o) != 0 ||
	    geo_ints(im, "dilations", nsp, 1, 1, d + o) != 0 ||
	    geo_ints(im, "output_padding", nsp, 0, 0, op + o) != 0 ||
	    imp_attr_str(im, "auto_pad", "NOTSET", &ap) != 0)
		return -1;
	{
		int64_t pp[4];

		if (geo_ints(im, "pads", 2 * nsp, 0, 0, pp) != 0)
			return -1;
		for (int j = 0; j < nsp; j++) {
			p[o + j] = pp[j];
			p[2 + o + j] = pp[nsp + j];
		}
	}
	for (int j = 0; j < nsp; j++) {
		k[o + j] = wt.dim[2 + j];
		if (has_k && (nk != nsp || ka[j] != k[o + j]))
			return imp_fail(im, "'kernel_shape' does not match the kernel of w '%s'",
			    wv->name);
	}
	in[0] = nsp == 2 ? xt.dim[2] : 1;
	in[1] = xt.dim[xt.rank - 1];
	if (has_os && nos != nsp && nos != nsp + 2)
		return imp_fail(im, "'output_shape' has %d entries, expected %d", nos, nsp);
	if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID") && strcmp(ap, "SAME_UPPER") &&
	    strcmp(ap, "SAME_LOWER"))
		return imp_fail(im, "auto_pad is '%s', expected NOTSET, VALID, SAME_UPPER or "
		    "SAME_LOWER", ap);
	if (has_os || !strncmp(ap, "SAME", 4)) {
		for (int j = o; j < 2; j++) {
			int64_t ext = (k[j] - 1) * d[j] + 1, total, half;

			os[j] = has_os ? oa[nos - nsp + j - o] : in[j] * s[j];
			total = s[j] * (in[j] - 1) + op[j] + ext - os[j];
			/* total / 2 floored, as ONNX's reference computes it: a
			 * negative total (an output_shape past the full one)
			 * extends the output at the end */
			half = total >= 0 ? total / 2 : -((1 - total) / 2);
			p[j] = !strcmp(ap, "SAME_UPPER") ? half : total - half;
			p[2 + j] = total - p[j];
		}
	}
	/* the weight, (C, M/g, KH, KW) -> (M, C/g, KH, KW) flipped */
	if (wv->k) {
		int64_t c = wt.dim[0], mg = wt.dim[1], cg = c / group, kh = k[0], kw = k[1];
		size_t es = ir_dtype_size(wt.dt);

		wt2 = (Type){.rank = 4, .dt = wt.dt, .dim = {mg * group, cg, kh, kw}};
		wd = imp_data_new(im, &wt2);
		for (int64_t g = 0; g < group; g++)
			for (int64_t m = 0; m < mg; m++)
				for (int64_t ci = 0; ci < cg; ci++)
					for (int64_t a = 0; a < kh; a++)
						for (int64_t b = 0; b < kw; b++)
							memcpy((char *)wd->p + ((((g * mg + m) * cg + ci) * kh + a) *
							    kw + b) * (int64_t)es, (const char *)wv->k->p +
							    ((((g * cg + ci) * mg + m) * kh + (kh - 1 - a)) * kw +
							    (kw - 1 - b)) * (int64_t)es, es);
		{
			ImpVal tmp = {wv->name, wt2, -1, wd};

			w = imp_node_of(im, &tmp);
		}
	} else {
		/* the same in graph ops: (g, C/g, M/g, KH, KW), its middle
		 * pair swapped, then a slice with steps -1 over KH and KW */
		int64_t c = wt.dim[0], mg = wt.dim[1], cg = c / group, kh = k[0], kw = k[1];

		w = imp_reshape(im, NULL, w, 5, (const int64_t[]){group, cg, mg, kh, kw});
		if ((i = imp_new(im, OP_TRANSPOSE, NULL, 1, &w)) < 0)
			return -1;
		imp_set_ints(im, i, ATTR_PERM, (const int64_t[]){0, 2, 1, 3, 4}, 5);
		w = imp_reshape(im, NULL, imp_done(im, i), 4, (const int64_t[]){group * mg, cg, kh, kw});
		if ((i = imp_new(im, OP_SLICE, NULL, 1, &w)) < 0)
			return -1;
		imp_set_ints(im, i, ATTR_STARTS, (const int64_t[]){-1, -1}, 2);
		imp_set_ints(im, i, ATTR_ENDS, (const int64_t[]){INT64_MIN, INT64_MIN}, 2);
		imp_set_ints(im, i, ATTR_AXES, (const int64_t[]){2, 3}, 2);
		imp_set_ints(im, i, ATTR_STEPS, (const int64_t[]){-1, -1}, 2);
		w = imp_done(im, i);
	}
	x4[0] = xt.dim[0], x4[1] = xt.dim[1], x4[2] = in[0], x4[3] = in[1];
	if (nsp == 1)
		x = imp_reshape(im, NULL, x, 4, x4);
	/* zeros between the elements, one spatial dim at a time (copy
	 * programs take rank 4 at most): (N*C, H, W, 1) padded to s_w in the
	 * last dim, then (N*C, H, 1, W*s_w) padded to s_h in the third */
	for (int j = 1; j >= 0; j--) {
		int64_t pads[8] = {0}, cur[4];

		if (s[j] == 1)
			continue;
		memcpy(cur, imp_type(im, x)->dim, sizeof cur);
		x = imp_reshape(im, NULL, x, 4, j == 1 ?
		    (const int64_t[]){cur[0] * cur[1], cur[2], cur[3], 1} :
		    (const int64_t[]){cur[0] * cur[1], cur[2], 1, cur[3]});
		pads[4 + (j == 1 ? 3 : 2)] = s[j] - 1;
		if ((i = imp_new(im, OP_PAD, NULL, 1, &x)) < 0)
			return -1;
		imp_set_ints(im, i, ATTR_PADS, pads, 8);
		cur[2 + j] *= s[j];
		x = imp_reshape(im, NULL, imp_done(im, i), 4, cur);
	}
	{
		int64_t st[2], en[2], cp[4];
		bool crop = false;

		for (int j = 0; j < 2; j++) {
			int64_t ext = (k[j] - 1) * d[j] + 1, len = in[j] * s[j];

			pb[j] = ext - 1 - p[j];
			pe[j] = ext - 1 - p[2 + j] + op[j] - (s[j] - 1);
			st[j] = pb[j] < 0 ? -pb[j] : 0;
			en[j] = len - (pe[j] < 0 ? -pe[j] : 0);
			crop |= pb[j] < 0 || pe[j] < 0;
			if (en[j] <= st[j])
				return imp_unsupported(im, "pads that leave no output");
			cp[j] = pb[j] > 0 ? pb[j] : 0;
			cp[2 + j] = pe[j] > 0 ? pe[j] : 0;
		}
		if (crop) {
			if ((i = imp_new(im, OP_SLICE, NULL, 1, &x)) < 0)
				return -1;
			imp_set_ints(im, i, ATTR_STARTS, st, 2);
			imp_set_ints(im, i, ATTR_ENDS, en, 2);
			imp_set_ints(im, i, ATTR_AXES, (const int64_t[]){2, 3}, 2);
			x = imp_done(im, i);
		}
		{
			int cin[3] = {x, w, bv ? imp_node_of(im, bv) : -1};

			if ((i = imp_new(im, OP_CONV2D, nsp == 2 ? imp_out_name(im, 0) : NULL,
			    bv ? 3 : 2, cin)) < 0)
				return -1;
			if (cp[0] || cp[1] || cp[2] || cp[3])
				imp_set_ints(im, i, ATTR_PADS, cp, 4);
		}
	}
	if (d[0] != 1 || d[1] != 1)
		imp_set_ints(im, i, ATTR_DILATIONS, d, 2);
	if (group != 1) {
		imp_at(im, i)->groups = group;
		imp_at(im, i)->set |= AB(GROUPS);
	}
	y = imp_done(im, i);
	return imp_out(im, 0, nsp == 1 ? from_2d(im, y) : y);
}
