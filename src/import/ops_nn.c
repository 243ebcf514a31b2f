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
	ImpVal *a = imp_in_req(im, 0), *b = imp_in_req(im, 1), *c = imp_in(im, 2);
	int64_t ta, tb, bc;
	double alpha, beta;
	int na, nb, y;
	bool has_c = c != NULL;

	if (!a || !b || imp_attr_int(im, "transA", 0, &ta) != 0 ||
	    imp_attr_int(im, "transB", 0, &tb) != 0 || imp_attr_float(im, "alpha", 1, &alpha) != 0 ||
	    imp_attr_float(im, "beta", 1, &beta) != 0 || imp_attr_int(im, "broadcast", 0, &bc) != 0)
		return -1;
	na = ta ? transpose2(im, a) : imp_node_of(im, a);
	nb = tb ? transpose2(im, b) : imp_node_of(im, b);
	y = scaled(im, imp_binary(im, OP_MATMUL, has_c ? NULL : imp_out_name(im, 0), na, nb), alpha);
	if (has_c && beta != 0.0) {
		int nc = scaled(im, imp_node_of(im, c), beta);

		y = imp_binary(im, OP_ADD, imp_out_name(im, 0), y, nc);
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
