/*
 * ops_nn_window.c: ONNX's convolutions and pools.
 *
 * aicm's window ops are 2-D (conv2d, max_pool2d, avg_pool2d over (N, C, H,
 * W)), with ONNX's pads order (t, l, b, r) and output-size rule, so a 2-D
 * Conv or pool maps onto one op; a 1-D one is the same with a height of 1,
 * a reshape on each side.  auto_pad SAME_* is computed into explicit pads
 * here as ONNX computes them.  A 3-D max or average pool is two 2-D pools,
 * exact because both are separable over a box; a 3-D convolution is not,
 * and is unsupported.  ConvTranspose is the conv2d it equals over x with
 * zeros inserted and the weight flipped (see onnx_conv_transpose).  LpPool
 * is an avg_pool2d counting the padding, scaled by the window's size.
 */
#include <string.h>

#include "import.h"
#include "ops_nn.h"

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
		w = nn_reshaped(im, wv, 4, (const int64_t[]){wt.dim[0], wt.dim[1], 1, wt.dim[2]});
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
	/* ONNX up to opset 17 rounds up without PyTorch's rule that drops a
	 * last window starting in the end padding; aicm's pools keep that
	 * rule, so where it drops a window the output would differ */
	for (int j = 0; ceil_mode && j < g.nsp; j++) {
		int64_t in = xt.dim[2 + j], span = in + g.p[j] + g.p[g.nsp + j] -
		    (g.k[j] - 1) * g.d[j] - 1;

		if (span >= 0 && (span + g.s[j] - 1) / g.s[j] * g.s[j] >= in + g.p[j])
			return imp_unsupported(im, "ceil_mode with a last window that starts in the end "
			    "padding of spatial dim %d: ONNX counts it, aicm's pools drop it (as "
			    "PyTorch does)", j);
	}
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
	return imp_out(im, 0, nn_reduce_axes_keep(im, op, imp_out_name(im, 0), x, ax, r - 2));
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

/* GlobalLpPool: (sum over the spatial axes of |x|^p)^(1/p), kept; 'p' a
 * float in opset 1, an int from 2. */
int
onnx_global_lp_pool(Imp *im)
{
	ImpVal *xv = imp_in_req(im, 0);
	int64_t ax[IR_MAX_RANK], ip;
	double p;
	int x, r, px, s;
	DType dt;

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
	r = imp_type(im, x)->rank;
	dt = imp_type(im, x)->dt;
	if (r < 3)
		return imp_fail(im, "its input has rank %d, expected (N, C, spatial dims)", r);
	for (int k = 2; k < r; k++)
		ax[k - 2] = k;
	px = p == 2 ? imp_binary(im, OP_MUL, NULL, x, x) : imp_unary(im, OP_ABS, NULL, x);
	if (p != 1 && p != 2)
		px = imp_binary(im, OP_POW, NULL, px, imp_splat(im, dt, p, 0, NULL));
	s = nn_reduce_axes_keep(im, OP_SUM, p == 1 ? imp_out_name(im, 0) : NULL, px, ax, r - 2);
	if (p == 2)
		s = imp_unary(im, OP_SQRT, imp_out_name(im, 0), s);
	else if (p != 1)
		s = imp_binary(im, OP_POW, imp_out_name(im, 0), s, imp_splat(im, dt, 1 / p, 0, NULL));
	return imp_out(im, 0, s);
}
