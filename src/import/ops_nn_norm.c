/*
 * ops_nn_norm.c: ONNX's normalisations, in inference.
 *
 * Each is written in aicm's reductions and elementwise ops: the mean and
 * the variance over the normalised axes are kept reductions, so they
 * broadcast back against x.  BatchNormalization with its four operands
 * known (a trained model's) folds into one multiply and one add by
 * per-channel constants computed here; its training forms are
 * unsupported.  LayerNormalization computes in its stash_type and can give
 * its Mean and InvStdDev outputs.  MeanVarianceNormalization follows ONNX's
 * own function body; LRN's channel-window sum is an avg_pool2d over the
 * channels.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "import.h"
#include "ops_nn.h"

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
			pn[k] = nn_per_channel(im, p[k], r, c);
		} else {
			if (imp_node_of(im, p[k]) < 0)
				return -1;
			pn[k] = nn_reshaped(im, p[k], r - 1, xt.dim + 1);
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
	int m = nn_reduce_axes_keep(im, OP_MEAN, mean ? imp_out_name(im, 1) : NULL, x, ax, n);
	int d = imp_binary(im, OP_SUB, NULL, x, m);
	int v = nn_reduce_axes_keep(im, OP_MEAN, NULL, imp_binary(im, OP_MUL, NULL, d, d), ax, n);
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
	y = imp_binary(im, OP_MUL, NULL, y, nn_per_channel(im, sv, r, imp_type(im, x)->dim[1]));
	return imp_out(im, 0, imp_binary(im, OP_ADD, imp_out_name(im, 0), y,
	    nn_per_channel(im, bv, r, imp_type(im, x)->dim[1])));
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

	if (!xv || !sv || im->rc || nn_since(im, 17) != 0 ||
	    imp_attr_int(im, "axis", -1, &axis) != 0 ||
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
		nrm = nn_reduce_axes_keep(im, OP_SUM, NULL, imp_unary(im, OP_ABS, NULL, x), &a, 1);
	else
		nrm = imp_unary(im, OP_SQRT, NULL, nn_reduce_axes_keep(im, OP_SUM, NULL,
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
	bool present;
	int n, x, r, m, m2, sd;
	DType dt;

	if (!xv || nn_since(im, 9) != 0 || (n = imp_attr_ints(im, "axes", &av, &present)) < 0)
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
	if (nn_axes(im, av, n, r, ax) != 0)
		return -1;
	m = nn_reduce_axes_keep(im, OP_MEAN, NULL, x, ax, n);
	m2 = nn_reduce_axes_keep(im, OP_MEAN, NULL, imp_binary(im, OP_MUL, NULL, x, x), ax, n);
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
