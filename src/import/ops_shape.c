/*
 * ops_shape.c: ONNX's constants, shape computations and layout ops.
 *
 * Shapes are static in aicm, so Shape is always known at import time, and
 * so is whatever a model computes from it with ops whose inputs are all
 * known: those fold here into known values (import.h), and Reshape reads
 * its shape operand as the attribute it is.  A known value that a layout
 * op rearranges stays known (a Reshape of an initializer is an initializer
 * of the new shape), so a weight reshaped at export time costs nothing at
 * run time.
 */
#include <string.h>

#include "import.h"

/* Constant: the tensor in 'value' (all opsets), or from opset 12 one of
 * value_float(s) and value_int(s). */
int
onnx_constant(Imp *im)
{
	bool bad;
	ImpData *d = imp_attr_tensor(im, "value", &bad);
	const int64_t *iv;
	const float *fv;
	int n;
	bool has;
	Type t = {0};

	if (bad)
		return -1;
	if (imp_has_attr(im, "sparse_value"))
		return imp_unsupported(im, "a sparse constant");
	if (imp_has_attr(im, "value_string") || imp_has_attr(im, "value_strings"))
		return imp_unsupported(im, "a string constant");
	if (!d && imp_has_attr(im, "value_float")) {
		double f;

		if (imp_attr_float(im, "value_float", 0, &f) != 0)
			return -1;
		t.dt = DT_F32;
		d = imp_data_new(im, &t);
		imp_data_set(d, 0, f, 0);
	}
	if (!d && imp_has_attr(im, "value_int")) {
		int64_t i;

		if (imp_attr_int(im, "value_int", 0, &i) != 0)
			return -1;
		t.dt = DT_I64;
		d = imp_data_new(im, &t);
		imp_data_set(d, 0, (double)i, i);
	}
	if (!d && (n = imp_attr_floats(im, "value_floats", &fv, &has), has)) {
		if (n <= 0)
			return n < 0 ? -1 : imp_unsupported(im, "an empty constant");
		t = (Type){.rank = 1, .dt = DT_F32, .dim = {n}};
		d = imp_data_new(im, &t);
		memcpy(d->p, fv, sizeof(float) * (size_t)n);
	}
	if (!d && (n = imp_attr_ints(im, "value_ints", &iv, &has), has)) {
		if (n <= 0)
			return n < 0 ? -1 : imp_unsupported(im, "an empty constant");
		t = (Type){.rank = 1, .dt = DT_I64, .dim = {n}};
		d = imp_data_new(im, &t);
		memcpy(d->p, iv, sizeof(int64_t) * (size_t)n);
	}
	if (!d)
		return im->rc ? -1 : imp_fail(im, "it has no value attribute");
	return imp_out_known(im, 0, d);
}

/* Shape (opset 15: 'start' and 'end' slice it, clamped). */
int
onnx_shape(Imp *im)
{
	ImpVal *x = imp_in_req(im, 0);
	int64_t start, end, first, len;
	ImpData *d;

	if (!x || imp_attr_int(im, "start", 0, &start) != 0 ||
	    imp_attr_int(im, "end", x->type.rank, &end) != 0)
		return -1;
	if (x->type.rank == 0) {
		first = 0;
		len = 0;
	} else {
		ir_slice_range(x->type.rank, start, end, 1, &first, &len);
	}
	if (len == 0)
		return imp_unsupported(im, "an empty shape (a zero-size tensor)");
	d = imp_data_new(im, &(Type){.rank = 1, .dt = DT_I64, .dim = {len}});
	for (int64_t k = 0; k < len; k++)
		imp_data_set(d, k, (double)x->type.dim[first + k], x->type.dim[first + k]);
	return imp_out_known(im, 0, d);
}

/* A known value under another name, or the same node. */
static int
alias(Imp *im, ImpVal *x)
{
	if (x->k)
		return imp_out_known(im, 0, x->k);
	return imp_out(im, 0, imp_node_of(im, x));
}

int
onnx_identity(Imp *im)
{
	ImpVal *x = imp_in_req(im, 0);

	return x ? alias(im, x) : -1;
}

/* x with dims[0..rank): known data keeps its bytes, else a reshape. */
static int
reshape_to(Imp *im, ImpVal *x, int rank, const int64_t *dims)
{
	Type t = x->type;
	ImpData *d;

	if (!x->k)
		return imp_out(im, 0, imp_reshape(im, imp_out_name(im, 0), imp_node_of(im, x), rank,
		    dims));
	t.rank = rank;
	memcpy(t.dim, dims, sizeof(int64_t) * (size_t)rank);
	if (ir_type_numel(&t) != ir_type_numel(&x->type))
		return imp_fail(im, "%lld elements cannot take a shape of %lld",
		    (long long)ir_type_numel(&x->type), (long long)ir_type_numel(&t));
	d = imp_data_new(im, &t);
	memcpy(d->p, x->k->p, (size_t)ir_type_numel(&t) * ir_dtype_size(t.dt));
	return imp_out_known(im, 0, d);
}

/* Reshape: the shape an input from opset 5 (an attribute before); a 0
 * copies the input's dimension unless allowzero (opset 14), one -1 is
 * inferred. */
int
onnx_reshape(Imp *im)
{
	ImpVal *x = imp_in_req(im, 0);
	int64_t *shape, allowzero, dims[IR_MAX_RANK], known = 1;
	int n, minus = -1;

	if (!x || imp_attr_int(im, "allowzero", 0, &allowzero) != 0)
		return -1;
	imp_attr_ignore(im, "consumed_inputs", NULL);
	if (im->opset < 5) {
		const int64_t *s;
		bool has;

		n = imp_attr_ints(im, "shape", &s, &has);
		if (n < 0)
			return -1;
		if (!has)
			return imp_fail(im, "it has no 'shape' attribute");
		if (n > IR_MAX_RANK)
			return imp_unsupported(im, "a result of rank %d", n);
		shape = dims;
		memcpy(dims, s, sizeof(int64_t) * (size_t)n);
	} else if ((n = imp_in_ints(im, 1, "shape", &shape, IR_MAX_RANK)) < 0) {
		return -1;
	}
	for (int k = 0; k < n; k++) {
		if (shape[k] == 0 && !allowzero) {
			if (k >= x->type.rank)
				return imp_fail(im, "shape element %d is 0 (copy) but the input has rank %d",
				    k, x->type.rank);
			dims[k] = x->type.dim[k];
		} else if (shape[k] == 0) {
			return imp_unsupported(im, "a zero-size result");
		} else if (shape[k] == -1) {
			if (minus >= 0)
				return imp_fail(im, "its shape has more than one -1");
			minus = k;
			dims[k] = 1;
		} else if (shape[k] < 0) {
			return imp_fail(im, "shape element %d is %lld", k, (long long)shape[k]);
		} else {
			dims[k] = shape[k];
		}
		if (shape[k] != -1)
			known *= dims[k];
	}
	if (minus >= 0) {
		int64_t total = ir_type_numel(&x->type);

		if (known == 0 || total % known)
			return imp_fail(im, "%lld elements cannot take its shape", (long long)total);
		dims[minus] = total / known;
	}
	return reshape_to(im, x, n, dims);
}

/* Flatten: 2-D, the dims before 'axis' (1) times the rest; axis may be
 * negative from opset 11 and equal to the rank. */
int
onnx_flatten(Imp *im)
{
	ImpVal *x = imp_in_req(im, 0);
	int64_t axis, dims[2] = {1, 1};

	if (!x || imp_attr_int(im, "axis", 1, &axis) != 0)
		return -1;
	if (axis < 0)
		axis += x->type.rank;
	if (axis < 0 || axis > x->type.rank)
		return imp_fail(im, "'axis' is out of range for rank %d", x->type.rank);
	for (int k = 0; k < x->type.rank; k++)
		dims[k >= axis] *= x->type.dim[k];
	return reshape_to(im, x, 2, dims);
}

/* Transpose: 'perm' (default: the dims reversed). */
int
onnx_transpose(Imp *im)
{
	ImpVal *x = imp_in_req(im, 0);
	const int64_t *perm;
	int64_t rev[IR_MAX_RANK];
	bool has;
	int n, i;

	if (!x || (n = imp_attr_ints(im, "perm", &perm, &has)) < 0)
		return -1;
	if (!has) {
		n = x->type.rank;
		for (int k = 0; k < n; k++)
			rev[k] = n - 1 - k;
		perm = rev;
	}
	i = imp_new(im, OP_TRANSPOSE, imp_out_name(im, 0), 1, (int[]){imp_node_of(im, x)});
	if (i < 0)
		return -1;
	imp_set_ints(im, i, ATTR_PERM, perm, n);
	return imp_out(im, 0, imp_done(im, i));
}
