/*
 * view.c: layout ops as strided views (DESIGN §13, docs/passes.md "Views").
 *
 * A layout op that fuse joins to the kernel of its consumers is never
 * computed: the consumers' loads read its operand through it.  What they
 * read through is a strided view: the operand's buffer seen with dims
 * dim[], element i at offset + sum(i_k * stride_k).  A contiguous tensor
 * is the view with row-major strides; transpose permutes the strides,
 * expand gives a stretched dim stride 0, a slice with positive steps moves
 * the offset and multiplies the strides, and reshape regroups dims when the
 * groups it merges are contiguous in memory (PyTorch's view rule: a merge
 * across a transpose is no view, and fuse refuses it with a remark).  A
 * chain composes by applying each op to the view of its operand, so fuse
 * (which decides), lower-tiled (which writes the loads) and the cost model
 * (which counts them) all ask this one file.
 */
#include <string.h>

#include "ir.h"

void
ir_view_dense(const Type *t, IrView *v)
{
	int64_t st = 1;

	memset(v, 0, sizeof *v);
	v->rank = t->rank;
	for (int k = t->rank - 1; k >= 0; k--) {
		v->dim[k] = t->dim[k];
		v->stride[k] = st;
		st *= t->dim[k] > 0 ? t->dim[k] : 1;
	}
}

bool
ir_is_view_op(const Graph *g, int i)
{
	const Node *n = &g->nodes[i];

	return n->op == OP_TRANSPOSE || n->op == OP_RESHAPE || n->op == OP_EXPAND ||
	    n->op == OP_SLICE;
}

/* PyTorch's rule for a view's reshape: old dims are cut into chunks that
 * are contiguous among themselves (a dim of 1 never breaks one), and each
 * chunk must be exactly a run of new dims, which then take strides inside
 * the chunk. */
static bool
view_reshape(IrView *v, const Type *t)
{
	int64_t ns[IR_MAX_RANK], base, tn = 1, vn = 1;
	int vd = t->rank - 1;

	if (v->rank == 0 || ir_type_numel(t) == 0) {
		/* every new dim is 1 (or nothing is read): any stride will do */
		for (int k = t->rank - 1; k >= 0; k--)
			ns[k] = k == t->rank - 1 ? 1 : ns[k + 1] * (t->dim[k + 1] ? t->dim[k + 1] : 1);
		goto done;
	}
	base = v->stride[v->rank - 1];
	for (int d = v->rank - 1; d >= 0; d--) {
		tn *= v->dim[d];
		if (d == 0 || (v->dim[d - 1] != 1 && v->stride[d - 1] != tn * base)) {
			while (vd >= 0 && (vn < tn || t->dim[vd] == 1)) {
				ns[vd] = vn * base;
				vn *= t->dim[vd];
				vd--;
			}
			if (vn != tn)
				return false;
			if (d > 0) {
				base = v->stride[d - 1];
				tn = vn = 1;
			}
		}
	}
	if (vd != -1)
		return false;
done:
	v->rank = t->rank;
	for (int k = 0; k < t->rank; k++) {
		v->dim[k] = t->dim[k];
		v->stride[k] = ns[k];
	}
	return true;
}

bool
ir_view_apply(const Graph *g, int i, IrView *v, const char **why)
{
	const Node *n = &g->nodes[i];
	const Type *t = &n->type;
	IrView o = *v;

	switch (n->op) {
	case OP_TRANSPOSE:
		for (int k = 0; k < t->rank; k++) {
			int64_t p = k;

			if (n->at.set & AB(PERM)) {
				p = ir_attr_ints(&n->at, ATTR_PERM).v[k];
				p = p < 0 ? p + t->rank : p;
			} else if (t->rank >= 2 && k >= t->rank - 2) {
				p = k == t->rank - 2 ? t->rank - 1 : t->rank - 2;
			}
			v->dim[k] = o.dim[p];
			v->stride[k] = o.stride[p];
		}
		return true;
	case OP_RESHAPE:
		if (view_reshape(v, t))
			return true;
		*why = "it merges dims that are not contiguous in its operand's memory (a "
		    "reshape across a transpose or a slice), which no strided view expresses";
		return false;
	case OP_EXPAND:
		v->rank = t->rank;
		for (int j = 0; j < t->rank; j++) {
			int k = j - (t->rank - o.rank);

			v->dim[j] = t->dim[j];
			v->stride[j] = k < 0 || (o.dim[k] == 1 && t->dim[j] != 1) ? 0 : o.stride[k];
		}
		return true;
	case OP_SLICE: {
		IntTuple st = ir_attr_ints(&n->at, ATTR_STARTS), en = ir_attr_ints(&n->at, ATTR_ENDS);
		IntTuple ax = ir_attr_ints(&n->at, ATTR_AXES), sp = ir_attr_ints(&n->at, ATTR_STEPS);

		for (int q = 0; q < st.n; q++) {
			int64_t k = ax.n > 0 ? ax.v[q] : q, first, len, step = sp.n > 0 ? sp.v[q] : 1;

			if (k < 0)
				k += t->rank;
			if (step < 1) {
				*why = "it steps backwards (a negative step), which a view with "
				    "non-negative strides does not express";
				return false;
			}
			if (o.dim[k] > 0) {
				ir_slice_range(o.dim[k], st.v[q], en.v[q], step, &first, &len);
				v->offset += first * o.stride[k];
			}
			v->stride[k] = o.stride[k] * step;
		}
		for (int k = 0; k < t->rank; k++)
			v->dim[k] = t->dim[k];
		return true;
	}
	default:
		*why = "it is not a layout op";
		return false;
	}
}

bool
ir_kind_has_views(KernelKind k)
{
	return k != KK_OPAQUE;
}
