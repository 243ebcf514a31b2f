/*
 * ops_reduce.c: ONNX's reductions and ArgMax/ArgMin.
 *
 * ReduceSum/Mean/Max/Min/Prod are aicm's sum/mean/max/min/prod with the
 * axes as a tuple axis=(..) (all axes when ONNX gives none) and keepdims
 * (ONNX's default is 1).  The axes are an attribute until opset 13, where
 * ReduceSum (only it, up to opset 17) takes them as an optional input that
 * must be known at import time; with noop_with_empty_axes=1 an empty or
 * absent axes input makes the node an identity.  The others are
 * decompositions written once here: ReduceL1 = sum(abs x), ReduceL2 =
 * sqrt(sum(x*x)), ReduceSumSquare = sum(x*x), ReduceLogSum = log(sum x),
 * ReduceLogSumExp = log(sum(exp(x - m))) + m with m the max over the same
 * axes (kept, so that exp cannot overflow where ONNX's reference's would
 * not; the result is the same in exact arithmetic).  aicm's mean takes
 * floats only, so ReduceMean on integers is unsupported, as are the
 * float-only decompositions on integers.  ArgMax/ArgMin are aicm's
 * argmax/argmin; select_last_index (opset 12) is last=.
 */
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "import.h"
#include "ops_nn.h"

/* The reduction axes of a rank-r operand, normalised and checked:
 * *n of them in ax (0: every axis), or *noop when ReduceSum's
 * noop_with_empty_axes applies.  0, or -1 after an error. */
static int
reduce_axes(Imp *im, int r, bool axes_input, int64_t *ax, int *n, bool *noop)
{
	const int64_t *av = NULL;
	int64_t *iv = NULL, noop_empty = 0;
	bool present = false;
	int cnt;

	*noop = false;
	if (axes_input) {
		if (imp_attr_int(im, "noop_with_empty_axes", 0, &noop_empty) != 0)
			return -1;
		if (imp_in(im, 1)) {
			if ((cnt = imp_in_ints(im, 1, "axes", &iv, IR_MAX_RANK)) < 0)
				return -1;
			av = iv;
		} else {
			if (im->rc)
				return -1;
			cnt = 0;
		}
	} else if ((cnt = imp_attr_ints(im, "axes", &av, &present)) < 0) {
		return -1;
	}
	if (cnt == 0) {
		*noop = noop_empty != 0;
		*n = 0;
		return 0;
	}
	if (cnt > r)
		return imp_fail(im, "it has %d axes for an input of rank %d", cnt, r);
	if (nn_axes(im, av, cnt, r, ax) != 0)
		return -1;
	*n = cnt;
	return 0;
}

/* An aicm reduction op of node x over ax[0..n) (n == 0: all), keepdims;
 * named name or fresh. */
static int
reduce_node(Imp *im, OpId op, const char *name, int x, const int64_t *ax, int n, bool keep)
{
	int i = imp_new(im, op, name, 1, &x);
	Attrs *at;

	if (i < 0)
		return -1;
	at = imp_at(im, i);
	if (n > 0)
		imp_set_ints(im, i, ATTR_AXIS, ax, n);
	if (keep) {
		at->keepdims = true;
		at->set |= AB(KEEPDIMS);
	}
	return imp_done(im, i);
}

enum red { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_SUMSQ, R_LOGSUM, R_LOGSUMEXP };

static const char *const red_float_only[] = {
	[R_MEAN] = "ReduceMean", [R_L2] = "ReduceL2", [R_LOGSUM] = "ReduceLogSum",
	[R_LOGSUMEXP] = "ReduceLogSumExp",
};

/* The kinds that are one aicm reduction as they are. */
static const OpId red_op[] = {
	[R_SUM] = OP_SUM, [R_MEAN] = OP_MEAN, [R_MAX] = OP_MAX, [R_MIN] = OP_MIN,
	[R_PROD] = OP_PROD,
};

static int
reduce(Imp *im, enum red kind)
{
	ImpVal *xv = imp_in_req(im, 0);
	int64_t keep, ax[IR_MAX_RANK];
	int x, n = 0, y, r;
	bool noop;
	const char *out;
	DType dt;

	if (!xv || imp_attr_int(im, "keepdims", 1, &keep) != 0)
		return -1;
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	r = imp_type(im, x)->rank;
	dt = imp_type(im, x)->dt;
	if (reduce_axes(im, r, kind == R_SUM && im->opset >= 13, ax, &n, &noop) != 0)
		return -1;
	if (noop)
		return imp_out(im, 0, x);
	if ((size_t)kind < sizeof red_float_only / sizeof *red_float_only && red_float_only[kind] &&
	    !ir_dtype_is_float(dt))
		return imp_unsupported(im, "%s of %s: aicm computes it in floats only",
		    red_float_only[kind], ir_dtype_name(dt));
	out = imp_out_name(im, 0);
	switch (kind) {
	case R_SUM:
	case R_MEAN:
	case R_MAX:
	case R_MIN:
	case R_PROD:
		y = reduce_node(im, red_op[kind], out, x, ax, n, keep);
		break;
	case R_L1:
		y = reduce_node(im, OP_SUM, out, imp_unary(im, OP_ABS, NULL, x), ax, n, keep);
		break;
	case R_L2:
		y = imp_unary(im, OP_SQRT, out, reduce_node(im, OP_SUM, NULL,
		    imp_binary(im, OP_MUL, NULL, x, x), ax, n, keep));
		break;
	case R_SUMSQ:
		y = reduce_node(im, OP_SUM, out, imp_binary(im, OP_MUL, NULL, x, x), ax, n, keep);
		break;
	case R_LOGSUM:
		y = imp_unary(im, OP_LOG, out, reduce_node(im, OP_SUM, NULL, x, ax, n, keep));
		break;
	case R_LOGSUMEXP: {
		int mk = reduce_node(im, OP_MAX, NULL, x, ax, n, true);
		int m = keep ? mk : reduce_node(im, OP_MAX, NULL, x, ax, n, false);
		int s = reduce_node(im, OP_SUM, NULL,
		    imp_unary(im, OP_EXP, NULL, imp_binary(im, OP_SUB, NULL, x, mk)), ax, n, keep);

		y = imp_binary(im, OP_ADD, out, imp_unary(im, OP_LOG, NULL, s), m);
		break;
	}
	default:
		AICM_BUG("reduction kind %d", (int)kind);
	}
	return imp_out(im, 0, y);
}

#define REDUCE(fn, kind) int fn(Imp *im) { return reduce(im, kind); }
REDUCE(onnx_reduce_sum, R_SUM)
REDUCE(onnx_reduce_mean, R_MEAN)
REDUCE(onnx_reduce_max, R_MAX)
REDUCE(onnx_reduce_min, R_MIN)
REDUCE(onnx_reduce_prod, R_PROD)
REDUCE(onnx_reduce_l1, R_L1)
REDUCE(onnx_reduce_l2, R_L2)
REDUCE(onnx_reduce_sum_square, R_SUMSQ)
REDUCE(onnx_reduce_log_sum, R_LOGSUM)
REDUCE(onnx_reduce_log_sum_exp, R_LOGSUMEXP)
#undef REDUCE

static int
argreduce(Imp *im, OpId op)
{
	ImpVal *xv = imp_in_req(im, 0);
	int64_t axis, keep, last;
	int x, a, i;
	Attrs *at;

	if (!xv || imp_attr_int(im, "axis", 0, &axis) != 0 ||
	    imp_attr_int(im, "keepdims", 1, &keep) != 0 ||
	    imp_attr_int(im, "select_last_index", 0, &last) != 0)
		return -1;
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	if ((a = imp_axis(im, axis, imp_type(im, x)->rank, "'axis'")) < 0)
		return -1;
	if ((i = imp_new(im, op, imp_out_name(im, 0), 1, &x)) < 0)
		return -1;
	at = imp_at(im, i);
	at->axis = a;
	at->set |= AB(AXIS);
	if (keep) {
		at->keepdims = true;
		at->set |= AB(KEEPDIMS);
	}
	if (last) {
		at->last = true;
		at->set |= AB(LAST);
	}
	return imp_out(im, 0, imp_done(im, i));
}

int
onnx_argmax(Imp *im)
{
	return argreduce(im, OP_ARGMAX);
}

int
onnx_argmin(Imp *im)
{
	return argreduce(im, OP_ARGMIN);
}

/* y shifted by k along axis a of its rank-r shape, the vacated k places
 * 0: toward higher indices (fwd) or lower ones; a slice and a pad. */
static int
shifted(Imp *im, int y, int a, int r, int64_t len, int64_t k, bool fwd)
{
	int64_t pads[2 * IR_MAX_RANK] = {0};
	int i = imp_new(im, OP_SLICE, NULL, 1, &y);

	if (i < 0)
		return -1;
	imp_set_ints(im, i, ATTR_STARTS, (const int64_t[]){fwd ? 0 : k}, 1);
	imp_set_ints(im, i, ATTR_ENDS, (const int64_t[]){fwd ? len - k : len}, 1);
	imp_set_ints(im, i, ATTR_AXES, (const int64_t[]){a}, 1);
	if ((y = imp_done(im, i)) < 0 || (i = imp_new(im, OP_PAD, NULL, 1, &y)) < 0)
		return -1;
	pads[fwd ? a : r + a] = k;
	imp_set_ints(im, i, ATTR_PADS, pads, 2 * r);
	return imp_done(im, i);
}

/* CumSum: an inclusive scan by doubling (Hillis and Steele): y += y
 * shifted by 1, 2, 4, ... along the axis, ceil(log2 n) steps of a slice,
 * a pad and an add; exclusive shifts x by one first, reverse shifts
 * toward lower indices.  Only adds of real elements and zeros, so an inf
 * or a NaN stays where numpy's cumsum puts it; integers wrap as they do.
 * The axis (an input) must be known at import time. */
int
onnx_cumsum(Imp *im)
{
	ImpVal *xv = imp_in_req(im, 0);
	int64_t excl, rev, *axv, len;
	int x, r, a, y;
	const char *out;

	if (!xv || nn_since(im, 11) != 0 || imp_attr_int(im, "exclusive", 0, &excl) != 0 ||
	    imp_attr_int(im, "reverse", 0, &rev) != 0 ||
	    imp_in_ints(im, 1, "axis", &axv, 1) != 1)
		return im->rc ? -1 : imp_fail(im, "its axis (input 1) must hold one element");
	if ((x = imp_node_of(im, xv)) < 0)
		return -1;
	r = imp_type(im, x)->rank;
	if ((a = imp_axis(im, axv[0], r, "'axis'")) < 0)
		return -1;
	len = imp_type(im, x)->dim[a];
	out = imp_out_name(im, 0);
	y = x;
	if (excl && len == 1)
		/* nothing before the only element: zeros (not x - x: inf) */
		return imp_out(im, 0, imp_splat(im, imp_type(im, x)->dt, 0, r,
		    imp_type(im, x)->dim));
	if (excl)
		y = shifted(im, y, a, r, len, 1, !rev);
	if (y == x && len == 1)
		/* a one-element scan is the input */
		return imp_out(im, 0, x);
	for (int64_t k = 1; k < len; k *= 2)
		y = imp_binary(im, OP_ADD, 2 * k >= len ? out : NULL, y,
		    shifted(im, y, a, r, len, k, !rev));
	return imp_out(im, 0, y);
}
