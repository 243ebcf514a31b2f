/*
 * interp_copy.c: the reference kernels of the copy ops (concat, slice, pad,
 * gather, expand).
 *
 * Each walks the result in C order with a multi-index and copies one
 * element at a time, by its size, from the operand element that the op's
 * index map names: no arithmetic, so every element type goes through the
 * same code and comes out bit for bit (a NaN's payload, an int64 past
 * 2^53).  Plain loops on purpose: this is the oracle.  A gather index out
 * of range is the one run-time error; it fails with the index, where it
 * sits in the indices and the axis it missed.
 */
#include <stdio.h>
#include <string.h>

#include "exec.h"

/* The C-order strides of t's dims. */
static void
strides(const Tensor *t, int64_t *s)
{
	int64_t st = 1;

	for (int k = t->rank - 1; k >= 0; k--) {
		s[k] = st;
		st *= t->dim[k];
	}
}

/* Advances multi-index idx over dims dim (rank r) in C order. */
static void
next(int r, const int64_t *dim, int64_t *idx)
{
	for (int k = r - 1; k >= 0; k--) {
		if (++idx[k] < dim[k])
			return;
		idx[k] = 0;
	}
}

static void
copy1(Tensor *o, int64_t i, const Tensor *a, int64_t j)
{
	size_t es = ir_dtype_size(o->dt);

	memcpy((char *)o->data + (size_t)i * es, (const char *)a->data + (size_t)j * es, es);
}

/* The operands one after another along axis. */
int
exec_kern_CONCAT(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	int r = o->rank, ax = (int)(n->at.axis < 0 ? n->at.axis + r : n->at.axis);
	int64_t idx[IR_MAX_RANK] = {0};

	(void)err;
	for (int64_t i = 0; i < o->numel; i++) {
		int64_t at = idx[ax], s[IR_MAX_RANK], j = 0;
		int q = 0;

		while (at >= in[q]->dim[ax])     /* the operand that holds this row */
			at -= in[q++]->dim[ax];
		strides(in[q], s);
		for (int k = 0; k < r; k++)
			j += (k == ax ? at : idx[k]) * s[k];
		copy1(o, i, in[q], j);
		next(r, o->dim, idx);
	}
	return 0;
}

/* out[i] = a[first + step * i] on each sliced axis (ir_slice_range). */
int
exec_kern_SLICE(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	const Tensor *a = in[0];
	IntTuple st = ir_attr_ints(&n->at, ATTR_STARTS), en = ir_attr_ints(&n->at, ATTR_ENDS);
	IntTuple ax = ir_attr_ints(&n->at, ATTR_AXES), sp = ir_attr_ints(&n->at, ATTR_STEPS);
	int r = a->rank;
	int64_t first[IR_MAX_RANK] = {0}, step[IR_MAX_RANK], s[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};

	(void)err;
	for (int k = 0; k < r; k++)
		step[k] = 1;
	for (int i = 0; i < st.n; i++) {
		int64_t k = ax.n > 0 ? ax.v[i] : i, len;

		if (k < 0)
			k += r;
		step[k] = sp.n > 0 ? sp.v[i] : 1;
		ir_slice_range(a->dim[k], st.v[i], en.v[i], step[k], &first[k], &len);
	}
	strides(a, s);
	for (int64_t i = 0; i < o->numel; i++) {
		int64_t j = 0;

		for (int k = 0; k < r; k++)
			j += (first[k] + step[k] * idx[k]) * s[k];
		copy1(o, i, a, j);
		next(r, o->dim, idx);
	}
	return 0;
}

/* The operand at offset begin on each axis (a negative begin crops), the
 * rest value=, stored as the element type stores it. */
int
exec_kern_PAD(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	const Tensor *a = in[0];
	IntTuple p = ir_attr_ints(&n->at, ATTR_PADS);
	int r = a->rank;
	int64_t s[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
	_Alignas(8) unsigned char pv[8];
	Tensor one = {.dt = o->dt, .rank = 0, .numel = 1, .data = pv};

	(void)err;
	if (!(n->at.set & AB(VALUE)))
		exec_seti(&one, 0, 0);
	else if (n->at.value_int)
		exec_seti(&one, 0, n->at.ivalue);
	else
		exec_set(&one, 0, n->at.value);
	strides(a, s);
	for (int64_t i = 0; i < o->numel; i++) {
		int64_t j = 0;
		bool inside = true;

		for (int k = 0; k < r; k++) {
			int64_t x = idx[k] - p.v[k];

			inside &= x >= 0 && x < a->dim[k];
			j += x * s[k];
		}
		if (inside)
			copy1(o, i, a, j);
		else
			copy1(o, i, &one, 0);
		next(r, o->dim, idx);
	}
	return 0;
}

/* numpy's take along axis: out[pre, ix, post] = a[pre, indices[ix], post];
 * a negative index counts from the end. */
int
exec_kern_GATHER(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	const Tensor *a = in[0], *ix = in[1];
	int r = a->rank, ax = (int)(n->at.axis < 0 ? n->at.axis + r : n->at.axis);
	int64_t s[IR_MAX_RANK], si[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
	char where[IR_TYPE_STR];

	strides(a, s);
	strides(ix, si);
	for (int64_t i = 0; i < o->numel; i++) {
		int64_t j = 0, e = 0, v;

		for (int k = 0; k < ix->rank; k++)
			e += idx[ax + k] * si[k];
		v = exec_geti(ix, e);
		if (v < -a->dim[ax] || v >= a->dim[ax]) {
			snprintf(err, IR_ERR_MAX, "'gather' index %lld at %s of its indices is out "
			    "of range for axis %d of size %lld", (long long)v,
			    exec_index_str(ix, e, where), ax,
			    (long long)a->dim[ax]);
			return -1;
		}
		if (v < 0)
			v += a->dim[ax];
		for (int k = 0; k < ax; k++)
			j += idx[k] * s[k];
		j += v * s[ax];
		for (int k = ax + 1; k < r; k++)
			j += idx[k - 1 + ix->rank] * s[k];
		copy1(o, i, a, j);
		next(o->rank, o->dim, idx);
	}
	return 0;
}

/* numpy broadcasting of the operand to the result: a dimension of 1 (or a
 * missing leading one) repeats. */
int
exec_kern_EXPAND(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	const Tensor *a = in[0];
	int r = o->rank, off = o->rank - a->rank;
	int64_t s[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};

	(void)n, (void)err;
	strides(a, s);
	for (int64_t i = 0; i < o->numel; i++) {
		int64_t j = 0;

		for (int k = 0; k < a->rank; k++)
			if (a->dim[k] != 1)
				j += idx[k + off] * s[k];
		copy1(o, i, a, j);
		next(r, o->dim, idx);
	}
	return 0;
}
