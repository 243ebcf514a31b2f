/*
 * ops_shape.c: ONNX's constants, shape computations and data-movement ops.
 *
 * Shapes are static in aicm, so Shape is always known at import time, and
 * so is whatever a model computes from it with ops whose inputs are all
 * known: those fold here into known values (import.h), and Reshape, Slice,
 * Expand, Pad, ... read their shape-like operands as the attributes they
 * are.  So PyTorch's Shape -> Gather -> Unsqueeze -> Concat -> Reshape
 * chains leave a single reshape.
 *
 * Every translator works on Opnd, an operand that is either known data or
 * an aicm node, through a handful of primitives (reshape, transpose, slice,
 * concat, expand, pad, gather) that fold when their operand is known and
 * emit the aicm op when it is not.  Composite ops are written once over
 * those primitives (Tile as reshape-expand-reshape, DepthToSpace as
 * reshape-transpose-reshape, Pad's edge and reflect modes as slices and a
 * concat, Split as slices), so a weight rearranged at export time becomes
 * a rearranged const and costs nothing at run time.  A fold whose result
 * would be larger than FOLD_MAX elements emits the op on a const instead,
 * and so does an Expand of known data to more than GROW_MAX elements that
 * are not all one value: folding is for shapes and weights, not for
 * writing a broadcast weight out at its broadcast size.
 *
 * Data the result depends on only through its shape (EyeLike, Trilu's mask,
 * OneHot's classes) is computed here too; what depends on run-time values
 * in a way aicm's ops cannot express (GatherElements, ScatterElements,
 * NonZero, TopK, ...) has no row in onnx_ops.def, so it is "unsupported: no
 * translation of op".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "import.h"

enum { FOLD_MAX = 1 << 22, GROW_MAX = 1024 };

/* An operand: known data (k), or an aicm node; src is the ONNX value it
 * is, so that a known value materialised once keeps its one const. */
typedef struct Opnd {
	Type t;
	ImpData *k;
	int node;
	ImpVal *src;
} Opnd;

static Opnd
of_val(ImpVal *v)
{
	return (Opnd){v->type, v->k, v->k ? -1 : v->node, v};
}

static Opnd
of_data(ImpData *d)
{
	return (Opnd){d->type, d, -1, NULL};
}

/* An emitted node (i < 0: the error is reported; t's rank -1 tells). */
static Opnd
of_node(Imp *im, int i)
{
	Opnd o = {{.rank = -1}, NULL, i, NULL};

	if (i >= 0)
		o.t = *imp_type(im, i);
	return o;
}

static bool
bad(const Opnd *o)
{
	return o->t.rank < 0;
}

static const Opnd failed = {{.rank = -1}, NULL, -1, NULL};

static int
node_of(Imp *im, Opnd *o)
{
	if (o->node >= 0)
		return o->node;
	if (o->src)
		return o->node = imp_node_of(im, o->src);
	return o->node = imp_const(im, o->k, NULL);
}

/* Binds output k to o. */
static int
bind(Imp *im, int k, Opnd o)
{
	if (bad(&o))
		return -1;
	if (o.k)
		return imp_out_known(im, k, o.k);
	return imp_out(im, k, node_of(im, &o));
}

/* Whether a result of type t is folded from known x. */
static bool
folds(const Opnd *x, const Type *t)
{
	int64_t n = ir_type_numel(t);

	return x->k && n >= 0 && n <= FOLD_MAX;
}

/* Whether a known x is one value repeated (it stays a splat const). */
static bool
uniform(const ImpData *d)
{
	int64_t n = ir_type_numel(&d->type);
	size_t es = ir_dtype_size(d->type.dt);

	for (int64_t e = 1; e < n; e++)
		if (memcmp((const char *)d->p + e * (int64_t)es, d->p, es) != 0)
			return false;
	return true;
}

/* folds for an op that repeats its input's elements (Expand, Tile's
 * expand): a large result is folded only when it stays a splat, so that a
 * broadcast weight is not written out at its broadcast size. */
static bool
folds_growing(const Opnd *x, const Type *t)
{
	return folds(x, t) && (ir_type_numel(t) <= GROW_MAX || uniform(x->k));
}

static void
strides(const Type *t, int64_t *s)
{
	int64_t m = 1;

	for (int k = t->rank - 1; k >= 0; k--) {
		s[k] = m;
		m *= t->dim[k];
	}
}

/* dst[db + sum i_k ds_k] = src[sb + sum i_k ss_k] over the box dims[0..r),
 * es bytes an element. */
static void
box_copy(int r, const int64_t *dims, char *dst, int64_t db, const int64_t *ds, const char *src,
    int64_t sb, const int64_t *ss, size_t es)
{
	int64_t idx[IR_MAX_RANK] = {0}, n = 1;

	for (int k = 0; k < r; k++)
		n *= dims[k];
	for (int64_t e = 0; e < n; e++) {
		memcpy(dst + db * (int64_t)es, src + sb * (int64_t)es, es);
		for (int k = r - 1; k >= 0; k--) {
			db += ds[k];
			sb += ss[k];
			if (++idx[k] < dims[k])
				break;
			db -= ds[k] * dims[k];
			sb -= ss[k] * dims[k];
			idx[k] = 0;
		}
	}
}

static bool
same_dims(const Type *a, int rank, const int64_t *dims)
{
	if (a->rank != rank)
		return false;
	for (int k = 0; k < rank; k++)
		if (a->dim[k] != dims[k])
			return false;
	return true;
}

/* ---- the primitives: fold when known, else the aicm op ---------------- */

/* x with dims[0..rank) (the element count the caller's to check). */
static Opnd
p_reshape(Imp *im, const char *name, Opnd x, int rank, const int64_t *dims)
{
	Type t = x.t;

	if (bad(&x))
		return failed;
	t.rank = rank;
	memcpy(t.dim, dims, sizeof(int64_t) * (size_t)rank);
	if (ir_type_numel(&t) != ir_type_numel(&x.t)) {
		imp_fail(im, "%lld elements cannot take a shape of %lld",
		    (long long)ir_type_numel(&x.t), (long long)ir_type_numel(&t));
		return failed;
	}
	if (x.k) {
		/* the same bytes under another shape */
		ImpData *d = imp_data_new(im, &t);

		memcpy(d->p, x.k->p, (size_t)ir_type_numel(&t) * ir_dtype_size(t.dt));
		return of_data(d);
	}
	if (same_dims(&x.t, rank, dims) && !name)
		return x;
	return of_node(im, imp_reshape(im, name, node_of(im, &x), rank, dims));
}

/* Checks that perm[0..n) permutes 0..rank-1. */
static int
check_perm(Imp *im, const int64_t *perm, int n, int rank)
{
	bool seen[IR_MAX_RANK] = {false};

	if (n != rank)
		return imp_fail(im, "'perm' has %d entries, the input has rank %d", n, rank);
	for (int k = 0; k < n; k++) {
		if (perm[k] < 0 || perm[k] >= rank || seen[perm[k]])
			return imp_fail(im, "'perm' is not a permutation of 0..%d", rank - 1);
		seen[perm[k]] = true;
	}
	return 0;
}

static Opnd
p_transpose(Imp *im, const char *name, Opnd x, const int64_t *perm)
{
	Type t = x.t;
	int i;

	if (bad(&x))
		return failed;
	for (int k = 0; k < x.t.rank; k++)
		t.dim[k] = x.t.dim[perm[k]];
	if (folds(&x, &t)) {
		ImpData *d = imp_data_new(im, &t);
		int64_t is[IR_MAX_RANK], os[IR_MAX_RANK], ss[IR_MAX_RANK];

		strides(&x.t, is);
		strides(&t, os);
		for (int k = 0; k < t.rank; k++)
			ss[k] = is[perm[k]];
		box_copy(t.rank, t.dim, d->p, 0, os, x.k->p, 0, ss, ir_dtype_size(t.dt));
		return of_data(d);
	}
	i = imp_new(im, OP_TRANSPOSE, name, 1, (int[]){node_of(im, &x)});
	if (i < 0)
		return failed;
	imp_set_ints(im, i, ATTR_PERM, perm, x.t.rank);
	return of_node(im, imp_done(im, i));
}

/* A slice in normal form: along every axis k the elements first[k],
 * first[k] + step[k], ... (len[k] of them, all inside the axis). */
static Opnd
p_slice(Imp *im, const char *name, Opnd x, const int64_t *first, const int64_t *len,
    const int64_t *step)
{
	Type t = x.t;
	int64_t st[IR_MAX_RANK], en[IR_MAX_RANK], sp[IR_MAX_RANK], ax[IR_MAX_RANK];
	int n = 0, i;

	if (bad(&x))
		return failed;
	for (int k = 0; k < t.rank; k++) {
		if (len[k] <= 0) {
			imp_unsupported(im, "a zero-size result (axis %d selects nothing)", k);
			return failed;
		}
		t.dim[k] = len[k];
	}
	if (folds(&x, &t)) {
		ImpData *d = imp_data_new(im, &t);
		int64_t is[IR_MAX_RANK], os[IR_MAX_RANK], ss[IR_MAX_RANK], base = 0;

		strides(&x.t, is);
		strides(&t, os);
		for (int k = 0; k < t.rank; k++) {
			ss[k] = is[k] * step[k];
			base += first[k] * is[k];
		}
		box_copy(t.rank, t.dim, d->p, 0, os, x.k->p, base, ss, ir_dtype_size(t.dt));
		return of_data(d);
	}
	for (int k = 0; k < t.rank; k++) {
		int64_t d = x.t.dim[k], s = len[k] == 1 ? 1 : step[k], e = first[k] + len[k] * s;

		if (first[k] == 0 && len[k] == d && s == 1)
			continue;
		/* an end before the axis' start reads as "from the end": say
		 * "before the first" the way ONNX's clamping takes it */
		ax[n] = k;
		st[n] = first[k];
		en[n] = e < 0 ? -d - 1 : e;
		sp[n] = s;
		n++;
	}
	if (n == 0)
		return name ? p_reshape(im, name, x, x.t.rank, x.t.dim) : x;
	i = imp_new(im, OP_SLICE, name, 1, (int[]){node_of(im, &x)});
	if (i < 0)
		return failed;
	imp_set_ints(im, i, ATTR_STARTS, st, n);
	imp_set_ints(im, i, ATTR_ENDS, en, n);
	if (n != x.t.rank || ax[n - 1] != n - 1)
		imp_set_ints(im, i, ATTR_AXES, ax, n);
	for (int j = 0; j < n; j++)
		if (sp[j] != 1) {
			imp_set_ints(im, i, ATTR_STEPS, sp, n);
			break;
		}
	return of_node(im, imp_done(im, i));
}

/* The part [from, from + len) of axis ax. */
static Opnd
p_range(Imp *im, const char *name, Opnd x, int ax, int64_t from, int64_t len)
{
	int64_t first[IR_MAX_RANK], n[IR_MAX_RANK], step[IR_MAX_RANK];

	for (int k = 0; k < x.t.rank; k++) {
		first[k] = 0;
		n[k] = x.t.dim[k];
		step[k] = 1;
	}
	first[ax] = from;
	n[ax] = len;
	return p_slice(im, name, x, first, n, step);
}

static Opnd
p_concat(Imp *im, const char *name, int n, Opnd *xs, int ax)
{
	Type t = xs[0].t;
	bool known = true;
	int *in, i;

	for (int j = 0; j < n; j++)
		if (bad(&xs[j]))
			return failed;
	for (int j = 1; j < n; j++) {
		const Type *b = &xs[j].t;

		if (b->rank != t.rank || b->dt != t.dt) {
			imp_fail(im, "input %d is %s of rank %d, input 0 %s of rank %d", j,
			    ir_dtype_name(b->dt), b->rank, ir_dtype_name(t.dt), t.rank);
			return failed;
		}
		for (int k = 0; k < t.rank; k++)
			if (k != ax && b->dim[k] != t.dim[k]) {
				imp_fail(im, "input %d differs from input 0 in dimension %d", j, k);
				return failed;
			}
		t.dim[ax] += b->dim[ax];
	}
	for (int j = 0; j < n; j++)
		known = known && xs[j].k;
	if (n == 1)
		return name ? p_reshape(im, name, xs[0], t.rank, t.dim) : xs[0];
	if (known && folds(&xs[0], &t)) {
		ImpData *d = imp_data_new(im, &t);
		int64_t os[IR_MAX_RANK], is[IR_MAX_RANK], at = 0;

		strides(&t, os);
		for (int j = 0; j < n; j++) {
			strides(&xs[j].t, is);
			box_copy(t.rank, xs[j].t.dim, d->p, at * os[ax], os, xs[j].k->p, 0, is,
			    ir_dtype_size(t.dt));
			at += xs[j].t.dim[ax];
		}
		return of_data(d);
	}
	in = xmalloc(sizeof(int) * (size_t)n);
	for (int j = 0; j < n; j++)
		in[j] = node_of(im, &xs[j]);
	i = imp_new(im, OP_CONCAT, name, n, in);
	free(in);
	if (i < 0)
		return failed;
	imp_at(im, i)->axis = ax;
	imp_at(im, i)->set |= AB(AXIS);
	return of_node(im, imp_done(im, i));
}

/* x broadcast (numpy's way) with shape[0..n). */
static Opnd
p_expand(Imp *im, const char *name, Opnd x, int n, const int64_t *shape)
{
	Type t = x.t;
	int r = n > x.t.rank ? n : x.t.rank, i;

	if (bad(&x))
		return failed;
	if (r > IR_MAX_RANK) {
		imp_unsupported(im, "a result of rank %d (aicm takes at most %d)", r, IR_MAX_RANK);
		return failed;
	}
	t.rank = r;
	for (int k = 0; k < r; k++) {
		int ia = x.t.rank - r + k, is = n - r + k;
		int64_t da = ia >= 0 ? x.t.dim[ia] : 1, ds = is >= 0 ? shape[is] : 1;

		if (ds == 0) {
			imp_unsupported(im, "a zero-size result");
			return failed;
		}
		if (ds < 0 || (da != ds && da != 1 && ds != 1)) {
			imp_fail(im, "dimension %lld of the input does not broadcast to %lld",
			    (long long)da, (long long)ds);
			return failed;
		}
		t.dim[k] = da == 1 ? ds : da;
	}
	if (folds_growing(&x, &t)) {
		ImpData *d = imp_data_new(im, &t);
		int64_t is[IR_MAX_RANK], os[IR_MAX_RANK], ss[IR_MAX_RANK];

		strides(&x.t, is);
		strides(&t, os);
		for (int k = 0; k < r; k++) {
			int ia = x.t.rank - r + k;

			ss[k] = ia < 0 || x.t.dim[ia] == 1 ? 0 : is[ia];
		}
		box_copy(r, t.dim, d->p, 0, os, x.k->p, 0, ss, ir_dtype_size(t.dt));
		return of_data(d);
	}
	if (same_dims(&x.t, t.rank, t.dim))
		return name ? p_reshape(im, name, x, t.rank, t.dim) : x;
	i = imp_new(im, OP_EXPAND, name, 1, (int[]){node_of(im, &x)});
	if (i < 0)
		return failed;
	imp_set_ints(im, i, ATTR_SHAPE, t.dim, r);
	return of_node(im, imp_done(im, i));
}

/* Sets a pad's or a splat's value= for element type dt. */
static void
set_value(Attrs *at, DType dt, double v, int64_t iv)
{
	if (ir_dtype_is_float(dt)) {
		at->value = v;
		at->value_int = trunc(v) == v && fabs(v) < 9e18;
		at->ivalue = at->value_int ? (int64_t)v : 0;
	} else {
		at->value = (double)iv;
		at->value_int = true;
		at->ivalue = iv;
	}
	at->set |= AB(VALUE);
}

/* ONNX's constant Pad: pads[0..2r) all begins then all ends, negative
 * ones crop; the value as a double and (exact for integers) an int64. */
static Opnd
p_pad(Imp *im, const char *name, Opnd x, const int64_t *pads, double v, int64_t iv)
{
	Type t = x.t;
	int r = x.t.rank, i;
	bool zero = true;

	if (bad(&x))
		return failed;
	for (int k = 0; k < r; k++) {
		int64_t b = pads[k], e = pads[r + k], d = x.t.dim[k];

		if (b < -d || e < -d || b > IR_MAX_DIM || e > IR_MAX_DIM || d + b + e > IR_MAX_DIM) {
			imp_fail(im, "pads %lld and %lld do not fit axis %d of size %lld", (long long)b,
			    (long long)e, k, (long long)d);
			return failed;
		}
		if (d + b + e <= 0) {
			imp_unsupported(im, "a zero-size result (pads crop axis %d to nothing)", k);
			return failed;
		}
		t.dim[k] = d + b + e;
		zero = zero && b == 0 && e == 0;
	}
	if (zero)
		return name ? p_reshape(im, name, x, r, x.t.dim) : x;
	if (folds(&x, &t)) {
		ImpData *d = imp_data_new(im, &t);
		int64_t is[IR_MAX_RANK], os[IR_MAX_RANK], box[IR_MAX_RANK], db = 0, sb = 0;
		int64_t n = ir_type_numel(&t);

		for (int64_t e = 0; e < n; e++)
			imp_data_set(d, e, v, iv);
		strides(&x.t, is);
		strides(&t, os);
		for (int k = 0; k < r; k++) {
			int64_t b = pads[k], e = pads[r + k];

			box[k] = x.t.dim[k] + (b < 0 ? b : 0) + (e < 0 ? e : 0);
			if (box[k] <= 0)
				return of_data(d);
			db += (b > 0 ? b : 0) * os[k];
			sb += (b < 0 ? -b : 0) * is[k];
		}
		box_copy(r, box, d->p, db, os, x.k->p, sb, is, ir_dtype_size(t.dt));
		return of_data(d);
	}
	i = imp_new(im, OP_PAD, name, 1, (int[]){node_of(im, &x)});
	if (i < 0)
		return failed;
	imp_set_ints(im, i, ATTR_PADS, pads, 2 * r);
	if (v != 0 || iv != 0 || signbit(v))
		set_value(imp_at(im, i), t.dt, v, iv);
	return of_node(im, imp_done(im, i));
}

/* numpy's take(x, ix, axis=ax); ix integers, negative ones from the end. */
static Opnd
p_gather(Imp *im, const char *name, Opnd x, Opnd ix, int ax)
{
	Type t = x.t;
	int i;

	if (bad(&x) || bad(&ix))
		return failed;
	if (!ir_dtype_is_int(ix.t.dt)) {
		imp_fail(im, "its indices are %s, expected int32 or int64", ir_dtype_name(ix.t.dt));
		return failed;
	}
	if (x.t.rank - 1 + ix.t.rank > IR_MAX_RANK) {
		imp_unsupported(im, "a result of rank %d (aicm takes at most %d)",
		    x.t.rank - 1 + ix.t.rank, IR_MAX_RANK);
		return failed;
	}
	t.rank = 0;
	for (int k = 0; k < ax; k++)
		t.dim[t.rank++] = x.t.dim[k];
	for (int k = 0; k < ix.t.rank; k++)
		t.dim[t.rank++] = ix.t.dim[k];
	for (int k = ax + 1; k < x.t.rank; k++)
		t.dim[t.rank++] = x.t.dim[k];
	if (ix.k) {
		int64_t n = ir_type_numel(&ix.t), d = x.t.dim[ax];

		for (int64_t e = 0; e < n; e++) {
			int64_t j = imp_data_i64(ix.k, e);

			if (j < -d || j >= d) {
				imp_fail(im, "index %lld is out of range for axis %d of size %lld",
				    (long long)j, ax, (long long)d);
				return failed;
			}
		}
	}
	if (ix.k && folds(&x, &t)) {
		ImpData *d = imp_data_new(im, &t);
		int64_t outer = 1, inner = 1, n = ir_type_numel(&ix.t), dim = x.t.dim[ax];
		size_t es = ir_dtype_size(t.dt);
		char *o = d->p;
		const char *s = x.k->p;

		for (int k = 0; k < ax; k++)
			outer *= x.t.dim[k];
		for (int k = ax + 1; k < x.t.rank; k++)
			inner *= x.t.dim[k];
		for (int64_t a = 0; a < outer; a++)
			for (int64_t e = 0; e < n; e++) {
				int64_t j = imp_data_i64(ix.k, e);

				j = j < 0 ? j + dim : j;
				memcpy(o, s + ((a * dim + j) * inner) * (int64_t)es, (size_t)inner * es);
				o += (size_t)inner * es;
			}
		return of_data(d);
	}
	i = imp_new(im, OP_GATHER, name, 2, (int[]){node_of(im, &x), node_of(im, &ix)});
	if (i < 0)
		return failed;
	if (ax != 0) {
		imp_at(im, i)->axis = ax;
		imp_at(im, i)->set |= AB(AXIS);
	}
	return of_node(im, imp_done(im, i));
}

/* ---- operands of the translators -------------------------------------- */

static bool
in_opnd(Imp *im, int k, Opnd *o)
{
	ImpVal *v = imp_in_req(im, k);

	if (!v)
		return false;
	*o = of_val(v);
	return true;
}

/* An axes attribute (before opset 13) or input k (from it); *n the count,
 * -1 absent; false after an error. */
static bool
axes_of(Imp *im, int k, int64_t *axes, int *n)
{
	*n = -1;
	if (im->opset < 13) {
		const int64_t *a;
		bool has;
		int c = imp_attr_ints(im, "axes", &a, &has);

		if (c < 0)
			return false;
		if (!has)
			return true;
		if (c > IR_MAX_RANK) {
			imp_fail(im, "'axes' has %d entries", c);
			return false;
		}
		memcpy(axes, a, sizeof(int64_t) * (size_t)c);
		*n = c;
		return true;
	}
	if (imp_in(im, k)) {
		int64_t *a;
		int c = imp_in_ints(im, k, "axes", &a, IR_MAX_RANK);

		if (c < 0)
			return false;
		memcpy(axes, a, sizeof(int64_t) * (size_t)c);
		*n = c;
	}
	return !im->rc;
}

/* ---- the translators -------------------------------------------------- */

/* Constant: the tensor in 'value' (all opsets), or from opset 12 one of
 * value_float(s) and value_int(s). */
int
onnx_constant(Imp *im)
{
	bool isbad;
	ImpData *d = imp_attr_tensor(im, "value", &isbad);
	const int64_t *iv;
	const float *fv;
	int n;
	bool has;
	Type t = {0};

	if (isbad)
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

/* Size: the element count, an int64 scalar. */
int
onnx_size(Imp *im)
{
	ImpVal *x = imp_in_req(im, 0);
	ImpData *d;

	if (!x)
		return -1;
	d = imp_data_new(im, &(Type){.rank = 0, .dt = DT_I64});
	imp_data_set(d, 0, 0, ir_type_numel(&x->type));
	return imp_out_known(im, 0, d);
}

int
onnx_identity(Imp *im)
{
	Opnd x;

	return in_opnd(im, 0, &x) ? bind(im, 0, x) : -1;
}

/* Reshape: the shape an input from opset 5 (an attribute before); a 0
 * copies the input's dimension unless allowzero (opset 14), one -1 is
 * inferred. */
int
onnx_reshape(Imp *im)
{
	Opnd x;
	int64_t *shape, allowzero, dims[IR_MAX_RANK], known = 1;
	int n, minus = -1;

	if (!in_opnd(im, 0, &x) || imp_attr_int(im, "allowzero", 0, &allowzero) != 0)
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
			if (k >= x.t.rank)
				return imp_fail(im, "shape element %d is 0 (copy) but the input has rank %d",
				    k, x.t.rank);
			dims[k] = x.t.dim[k];
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
		int64_t total = ir_type_numel(&x.t);

		if (known == 0 || total % known)
			return imp_fail(im, "%lld elements cannot take its shape", (long long)total);
		dims[minus] = total / known;
	}
	return bind(im, 0, p_reshape(im, imp_out_name(im, 0), x, n, dims));
}

/* Flatten: 2-D, the dims before 'axis' (1) times the rest; axis may be
 * negative from opset 11 and equal to the rank. */
int
onnx_flatten(Imp *im)
{
	Opnd x;
	int64_t axis, dims[2] = {1, 1};

	if (!in_opnd(im, 0, &x) || imp_attr_int(im, "axis", 1, &axis) != 0)
		return -1;
	if (axis < 0)
		axis += x.t.rank;
	if (axis < 0 || axis > x.t.rank)
		return imp_fail(im, "'axis' is out of range for rank %d", x.t.rank);
	for (int k = 0; k < x.t.rank; k++)
		dims[k >= axis] *= x.t.dim[k];
	return bind(im, 0, p_reshape(im, imp_out_name(im, 0), x, 2, dims));
}

/* Squeeze: the axes named (an attribute before opset 13, an optional input
 * from it; negative from opset 11), each of size 1, or every axis of size
 * 1 when none is named. */
int
onnx_squeeze(Imp *im)
{
	Opnd x;
	int64_t axes[IR_MAX_RANK], dims[IR_MAX_RANK];
	bool drop[IR_MAX_RANK] = {false};
	int n, r = 0;

	if (!in_opnd(im, 0, &x) || !axes_of(im, 1, axes, &n))
		return -1;
	for (int k = 0; k < n; k++) {
		int a = imp_axis(im, axes[k], x.t.rank, "axis");

		if (a < 0)
			return -1;
		if (x.t.rank == 0 || x.t.dim[a] != 1)
			return imp_fail(im, "axis %d has size %lld; only axes of size 1 are squeezed", a,
			    x.t.rank ? (long long)x.t.dim[a] : 0LL);
		drop[a] = true;
	}
	for (int k = 0; k < x.t.rank; k++)
		if (!(n < 0 ? x.t.dim[k] == 1 : drop[k]))
			dims[r++] = x.t.dim[k];
	return bind(im, 0, p_reshape(im, imp_out_name(im, 0), x, r, dims));
}

/* Unsqueeze: 1s inserted at the axes named (of the result; an attribute
 * before opset 13, an input from it; negative from opset 11). */
int
onnx_unsqueeze(Imp *im)
{
	Opnd x;
	int64_t axes[IR_MAX_RANK], dims[IR_MAX_RANK];
	bool one[IR_MAX_RANK] = {false};
	int n, r, j = 0;

	if (!in_opnd(im, 0, &x) || !axes_of(im, 1, axes, &n))
		return -1;
	if (n < 0)
		return imp_fail(im, "it names no axes");
	r = x.t.rank + n;
	if (r > IR_MAX_RANK)
		return imp_unsupported(im, "a result of rank %d (aicm takes at most %d)", r,
		    IR_MAX_RANK);
	for (int k = 0; k < n; k++) {
		int a = imp_axis(im, axes[k], r, "axis");

		if (a < 0)
			return -1;
		if (one[a])
			return imp_fail(im, "axis %d is named twice", a);
		one[a] = true;
	}
	for (int k = 0; k < r; k++)
		dims[k] = one[k] ? 1 : x.t.dim[j++];
	return bind(im, 0, p_reshape(im, imp_out_name(im, 0), x, r, dims));
}

/* Transpose: 'perm' (default: the dims reversed); a known input (a
 * weight) is transposed here. */
int
onnx_transpose(Imp *im)
{
	Opnd x;
	const int64_t *perm;
	int64_t rev[IR_MAX_RANK];
	bool has;
	int n;

	if (!in_opnd(im, 0, &x) || (n = imp_attr_ints(im, "perm", &perm, &has)) < 0)
		return -1;
	if (!has) {
		n = x.t.rank;
		for (int k = 0; k < n; k++)
			rev[k] = n - 1 - k;
		perm = rev;
	}
	if (check_perm(im, perm, n, x.t.rank) != 0)
		return -1;
	return bind(im, 0, p_transpose(im, imp_out_name(im, 0), x, perm));
}

/* Concat: 'axis' (required from opset 4; 1 before; negative from 11). */
int
onnx_concat(Imp *im)
{
	int n = imp_nin(im), ax, rc = -1;
	int64_t axis;
	Opnd *xs;

	if (imp_attr_int(im, "axis", 1, &axis) != 0)
		return -1;
	if (im->opset >= 4 && !imp_attr(im, "axis"))
		return imp_fail(im, "it has no 'axis' attribute");
	if (n == 0)
		return imp_fail(im, "it has no inputs");
	xs = xcalloc((size_t)n, sizeof *xs);
	for (int j = 0; j < n; j++)
		if (!in_opnd(im, j, &xs[j]))
			goto out;
	if (xs[0].t.rank == 0)
		imp_fail(im, "its inputs have rank 0");
	else if ((ax = imp_axis(im, axis, xs[0].t.rank, "'axis'")) >= 0)
		rc = bind(im, 0, p_concat(im, imp_out_name(im, 0), n, xs, ax));
out:
	free(xs);
	return rc;
}

/* Split: the parts' sizes from 'split' (an attribute before opset 13, also
 * an input at opset 1; an input from 13), else equal parts; each output a
 * slice. */
int
onnx_split(Imp *im)
{
	Opnd x;
	int64_t axis, *sizes = NULL, at = 0;
	int ax, nout = imp_nout(im), n = -1;

	if (!in_opnd(im, 0, &x) || imp_attr_int(im, "axis", 0, &axis) != 0)
		return -1;
	if ((ax = imp_axis(im, axis, x.t.rank, "'axis'")) < 0)
		return -1;
	if (im->opset < 13) {
		const int64_t *s;
		bool has;

		if ((n = imp_attr_ints(im, "split", &s, &has)) < 0)
			return -1;
		if (has) {
			sizes = imp_data_new(im, &(Type){.rank = 1, .dt = DT_I64,
			    .dim = {n > 0 ? n : 1}})->p;
			memcpy(sizes, s, sizeof(int64_t) * (size_t)n);
		} else {
			n = -1;
		}
	}
	if (n < 0 && (im->opset >= 13 || im->opset == 1) && imp_in(im, 1)) {
		if ((n = imp_in_ints(im, 1, "split", &sizes, 64)) < 0)
			return -1;
	}
	if (im->rc)
		return -1;
	if (n >= 0) {
		int64_t total = 0;

		if (n != nout)
			return imp_fail(im, "'split' has %d sizes for %d outputs", n, nout);
		for (int k = 0; k < n; k++) {
			if (sizes[k] < 0)
				return imp_fail(im, "'split' size %d is %lld", k, (long long)sizes[k]);
			total += sizes[k];
		}
		if (total != x.t.dim[ax])
			return imp_fail(im, "'split' sizes add up to %lld, axis %d has %lld",
			    (long long)total, ax, (long long)x.t.dim[ax]);
	} else if (nout == 0 || x.t.dim[ax] % nout) {
		return imp_fail(im, "axis %d of size %lld does not split into %d equal parts", ax,
		    (long long)x.t.dim[ax], nout);
	}
	for (int k = 0; k < nout; k++) {
		int64_t len = n >= 0 ? sizes[k] : x.t.dim[ax] / nout;

		if (len == 0)
			return imp_unsupported(im, "a zero-size output (%d)", k);
		if (imp_out_wanted(im, k) &&
		    bind(im, k, p_range(im, imp_out_name(im, k), x, ax, at, len)) != 0)
			return -1;
		at += len;
	}
	return 0;
}

/* Slice: starts, ends and axes attributes before opset 10; from it inputs
 * starts, ends, axes and steps.  ONNX's clamping, negative steps. */
int
onnx_slice(Imp *im)
{
	Opnd x;
	int64_t *st, *en, *ax = NULL, *sp = NULL;
	int64_t first[IR_MAX_RANK], len[IR_MAX_RANK], step[IR_MAX_RANK];
	bool seen[IR_MAX_RANK] = {false};
	int n, nax = -1, nsp = -1;

	if (!in_opnd(im, 0, &x))
		return -1;
	if (im->opset < 10) {
		const int64_t *a;
		bool has;
		int c;

		if ((n = imp_attr_ints(im, "starts", &a, &has)) < 0)
			return -1;
		if (!has)
			return imp_fail(im, "it has no 'starts' attribute");
		st = imp_data_new(im, &(Type){.rank = 1, .dt = DT_I64, .dim = {n ? n : 1}})->p;
		memcpy(st, a, sizeof(int64_t) * (size_t)n);
		if ((c = imp_attr_ints(im, "ends", &a, &has)) < 0)
			return -1;
		if (!has || c != n)
			return imp_fail(im, "'ends' has %d entries, 'starts' %d", c, n);
		en = imp_data_new(im, &(Type){.rank = 1, .dt = DT_I64, .dim = {n ? n : 1}})->p;
		memcpy(en, a, sizeof(int64_t) * (size_t)n);
		if ((c = imp_attr_ints(im, "axes", &a, &has)) < 0)
			return -1;
		if (has) {
			ax = imp_data_new(im, &(Type){.rank = 1, .dt = DT_I64, .dim = {c ? c : 1}})->p;
			memcpy(ax, a, sizeof(int64_t) * (size_t)c);
			nax = c;
		}
	} else {
		int c;

		if ((n = imp_in_ints(im, 1, "starts", &st, IR_MAX_RANK)) < 0 ||
		    (c = imp_in_ints(im, 2, "ends", &en, IR_MAX_RANK)) < 0)
			return -1;
		if (c != n)
			return imp_fail(im, "'ends' has %d entries, 'starts' %d", c, n);
		if (imp_in(im, 3) && (nax = imp_in_ints(im, 3, "axes", &ax, IR_MAX_RANK)) < 0)
			return -1;
		if (imp_in(im, 4) && (nsp = imp_in_ints(im, 4, "steps", &sp, IR_MAX_RANK)) < 0)
			return -1;
		if (im->rc)
			return -1;
	}
	if ((nax >= 0 && nax != n) || (nsp >= 0 && nsp != n))
		return imp_fail(im, "'axes' or 'steps' has a count other than 'starts' (%d)", n);
	if (n > x.t.rank)
		return imp_fail(im, "'starts' has %d entries for rank %d", n, x.t.rank);
	for (int k = 0; k < x.t.rank; k++) {
		first[k] = 0;
		len[k] = x.t.dim[k];
		step[k] = 1;
	}
	for (int j = 0; j < n; j++) {
		int a = imp_axis(im, nax >= 0 ? ax[j] : j, x.t.rank, "axis");
		int64_t s = nsp >= 0 ? sp[j] : 1, d;

		if (a < 0)
			return -1;
		if (seen[a])
			return imp_fail(im, "axis %d is named twice", a);
		seen[a] = true;
		if (s == 0)
			return imp_fail(im, "step %d is 0", j);
		d = x.t.dim[a];
		ir_slice_range(d, st[j], en[j], s, &first[a], &len[a]);
		/* a step past the axis takes one element: keep it in range */
		step[a] = s > d ? d : s < -d ? -d : s;
	}
	return bind(im, 0, p_slice(im, imp_out_name(im, 0), x, first, len, step));
}

/* Gather: numpy's take along 'axis' (0); negative indices from opset 11
 * (aicm's gather takes them at every opset: a model before 11 with one
 * was wrong anyway). */
int
onnx_gather(Imp *im)
{
	Opnd x, ix;
	int64_t axis;
	int ax;

	if (!in_opnd(im, 0, &x) || !in_opnd(im, 1, &ix) || imp_attr_int(im, "axis", 0, &axis))
		return -1;
	if (x.t.rank == 0)
		return imp_fail(im, "its data has rank 0");
	if ((ax = imp_axis(im, axis, x.t.rank, "'axis'")) < 0)
		return -1;
	return bind(im, 0, p_gather(im, imp_out_name(im, 0), x, ix, ax));
}

/* Expand: numpy's broadcast of the input with the shape input. */
int
onnx_expand(Imp *im)
{
	Opnd x;
	int64_t *shape;
	int n;

	if (!in_opnd(im, 0, &x) || (n = imp_in_ints(im, 1, "shape", &shape, IR_MAX_RANK)) < 0)
		return -1;
	return bind(im, 0, p_expand(im, imp_out_name(im, 0), x, n, shape));
}

/* x repeated rep[k] times along each axis k, one axis at a time: x seen
 * as (A, 1, d*B) (A the dims before the axis, B those after) expanded to
 * (A, rep, d*B), the copies following each other as Tile's do, and seen
 * again with the axis rep times longer.  Rank 3 at most in between, which
 * every engine lowers. */
static Opnd
tile(Imp *im, const char *name, Opnd x, const int64_t *rep)
{
	int r = x.t.rank, last = -1;

	for (int k = 0; k < r; k++) {
		if (rep[k] == 0) {
			imp_unsupported(im, "a zero-size result (repeats of axis %d is 0)", k);
			return failed;
		}
		if (rep[k] < 0 || rep[k] > IR_MAX_DIM || x.t.dim[k] * rep[k] > IR_MAX_DIM) {
			imp_fail(im, "repeats of axis %d is %lld", k, (long long)rep[k]);
			return failed;
		}
		if (rep[k] > 1)
			last = k;
	}
	if (last < 0)
		return name ? p_reshape(im, name, x, r, x.t.dim) : x;
	for (int k = 0; k <= last && !bad(&x); k++) {
		int64_t a = 1, b = 1, s3[3], e3[3], dims[IR_MAX_RANK];

		if (rep[k] == 1)
			continue;
		for (int j = 0; j < r; j++) {
			if (j < k)
				a *= x.t.dim[j];
			else
				b *= x.t.dim[j];
			dims[j] = x.t.dim[j];
		}
		dims[k] *= rep[k];
		s3[0] = e3[0] = a;
		s3[1] = 1;
		e3[1] = rep[k];
		s3[2] = e3[2] = b;
		x = p_reshape(im, NULL, x, 3, s3);
		x = p_expand(im, NULL, x, 3, e3);
		x = p_reshape(im, k == last ? name : NULL, x, r, dims);
	}
	return x;
}

/* Tile: 'repeats' an input from opset 6; at opset 1 inputs 'tiles' (one
 * count) and 'axis'. */
int
onnx_tile(Imp *im)
{
	Opnd x;
	int64_t rep[IR_MAX_RANK], *r;
	int n;

	if (!in_opnd(im, 0, &x))
		return -1;
	if (im->opset < 6) {
		double tiles, axis;
		int a;

		if (imp_in_scalar(im, 1, "tiles", &tiles) != 0 ||
		    imp_in_scalar(im, 2, "axis", &axis) != 0)
			return -1;
		if ((a = imp_axis(im, (int64_t)axis, x.t.rank, "axis")) < 0)
			return -1;
		for (int k = 0; k < x.t.rank; k++)
			rep[k] = k == a ? (int64_t)tiles : 1;
	} else {
		if ((n = imp_in_ints(im, 1, "repeats", &r, IR_MAX_RANK)) < 0)
			return -1;
		if (n != x.t.rank)
			return imp_fail(im, "'repeats' has %d entries for rank %d", n, x.t.rank);
		memcpy(rep, r, sizeof(int64_t) * (size_t)n);
	}
	return bind(im, 0, tile(im, imp_out_name(im, 0), x, rep));
}

/* One element of type dt from a 1-element known value (ConstantOfShape's
 * value, Pad's constant_value): its double and int64. */
static void
scalar_of(const ImpData *d, double *v, int64_t *iv)
{
	*v = imp_data_f64(d, 0);
	*iv = imp_data_i64(d, 0);
}

/* ConstantOfShape: 'value' (a one-element tensor; float 0 by default)
 * everywhere in the shape given by the input (empty: a scalar). */
int
onnx_constant_of_shape(Imp *im)
{
	bool isbad;
	ImpData *val = imp_attr_tensor(im, "value", &isbad), *d;
	ImpVal *s = imp_in_req(im, 0);
	int64_t *shape, iv = 0;
	double v = 0;
	Type t = {.dt = DT_F32};
	int n;

	if (isbad || !s)
		return -1;
	if (val) {
		if (ir_type_numel(&val->type) != 1)
			return imp_fail(im, "'value' has %lld elements, expected one",
			    (long long)ir_type_numel(&val->type));
		t.dt = val->type.dt;
		scalar_of(val, &v, &iv);
	}
	if ((n = imp_in_ints(im, 0, "shape", &shape, IR_MAX_RANK)) < 0)
		return -1;
	t.rank = n;
	for (int k = 0; k < n; k++) {
		if (shape[k] == 0)
			return imp_unsupported(im, "a zero-size result");
		if (shape[k] < 0 || shape[k] > IR_MAX_DIM)
			return imp_fail(im, "shape element %d is %lld", k, (long long)shape[k]);
		t.dim[k] = shape[k];
	}
	if (ir_type_numel(&t) < 0 || ir_type_numel(&t) > FOLD_MAX) {
		int i = imp_splat(im, t.dt, v, t.rank, t.dim);

		if (i >= 0)
			set_value(imp_at(im, i), t.dt, v, iv);
		return imp_out(im, 0, i);
	}
	d = imp_data_new(im, &t);
	for (int64_t e = 0; e < ir_type_numel(&t); e++)
		imp_data_set(d, e, v, iv);
	return imp_out_known(im, 0, d);
}

/* Range: start, start + delta, ... up to limit (excluded), in start's
 * type; every operand must be known. */
int
onnx_range(Imp *im)
{
	ImpVal *a = imp_in_req(im, 0), *l = imp_in_req(im, 1), *dl = imp_in_req(im, 2);
	double s, lim, del;
	int64_t n;
	ImpData *d;
	DType dt;

	if (!a || !l || !dl || imp_in_scalar(im, 0, "start", &s) != 0 ||
	    imp_in_scalar(im, 1, "limit", &lim) != 0 || imp_in_scalar(im, 2, "delta", &del) != 0)
		return -1;
	dt = a->type.dt;
	if (l->type.dt != dt || dl->type.dt != dt)
		return imp_fail(im, "its operands' element types differ");
	if (dt == DT_BOOL)
		return imp_fail(im, "its operands are bool");
	if (ir_dtype_is_int(dt)) {
		int64_t is = imp_data_i64(a->k, 0), il = imp_data_i64(l->k, 0);
		int64_t id = imp_data_i64(dl->k, 0), span;

		if (id == 0)
			return imp_fail(im, "delta is 0");
		if (__builtin_sub_overflow(il, is, &span))
			return imp_unsupported(im, "a range wider than int64");
		/* ceil(span / id), at least 0 */
		n = span / id + (span % id != 0 && ((span < 0) == (id < 0)));
		if (n > IR_MAX_DIM)
			return imp_unsupported(im, "%lld elements", (long long)n);
		if (n <= 0)
			return imp_unsupported(im, "a zero-size result");
		d = imp_data_new(im, &(Type){.rank = 1, .dt = dt, .dim = {n}});
		for (int64_t e = 0; e < n; e++) {
			int64_t v = (int64_t)((uint64_t)is + (uint64_t)e * (uint64_t)id);

			imp_data_set(d, e, (double)v, v);
		}
		return imp_out_known(im, 0, d);
	}
	if (del == 0 || !isfinite(s) || !isfinite(lim) || !isfinite(del))
		return imp_fail(im, "start, limit and delta must be finite and delta not 0");
	{
		double c = ceil((lim - s) / del);

		if (c > IR_MAX_DIM)
			return imp_unsupported(im, "%.0f elements", c);
		if (c <= 0)
			return imp_unsupported(im, "a zero-size result");
		n = (int64_t)c;
	}
	d = imp_data_new(im, &(Type){.rank = 1, .dt = dt, .dim = {n}});
	for (int64_t e = 0; e < n; e++)
		imp_data_set(d, e, s + (double)e * del, 0);
	return imp_out_known(im, 0, d);
}

/* Dropout in inference: the output is the input.  Training (is_test=0
 * before opset 7; training_mode true from 12) with a ratio other than 0
 * is random: unsupported.  The mask, where asked for, is all True (bool
 * from opset 10; before it its type is the input's and its inference
 * value undefined: unsupported). */
int
onnx_dropout(Imp *im)
{
	Opnd x;
	bool training = false;
	double ratio = 0.5;

	if (!in_opnd(im, 0, &x))
		return -1;
	imp_attr_ignore(im, "consumed_inputs", "seed", NULL);
	if (im->opset < 7) {
		int64_t is_test;

		if (imp_attr_int(im, "is_test", 0, &is_test) != 0 ||
		    imp_attr_float(im, "ratio", 0.5, &ratio) != 0)
			return -1;
		training = !is_test;
	} else if (im->opset < 12) {
		if (imp_attr_float(im, "ratio", 0.5, &ratio) != 0)
			return -1;
	} else {
		if (imp_in(im, 2)) {
			double t;

			if (imp_in_scalar(im, 2, "training_mode", &t) != 0)
				return -1;
			training = t != 0;
		}
		if (training && imp_in(im, 1) && imp_in_scalar(im, 1, "ratio", &ratio) != 0)
			return -1;
		if (im->rc)
			return -1;
	}
	if (training && ratio != 0)
		return imp_unsupported(im, "training-mode dropout (ratio %g) is random", ratio);
	if (imp_out_wanted(im, 1)) {
		ImpData *m;

		if (im->opset < 10)
			return imp_unsupported(im, "the mask output before opset 10");
		if (ir_type_numel(&x.t) > FOLD_MAX) {
			if (imp_out(im, 1, imp_splat(im, DT_BOOL, 1, x.t.rank, x.t.dim)) != 0)
				return -1;
		} else {
			Type mt = x.t;

			mt.dt = DT_BOOL;
			m = imp_data_new(im, &mt);
			memset(m->p, 1, (size_t)ir_type_numel(&mt));
			if (imp_out_known(im, 1, m) != 0)
				return -1;
		}
	}
	return bind(im, 0, x);
}

/* Pad: mode constant (aicm's pad), edge and reflect (slices and a concat
 * per axis).  'paddings' at opset 1, 'pads' and 'value' attributes from 2,
 * inputs pads and constant_value from 11. */
int
onnx_pad(Imp *im)
{
	Opnd x;
	int64_t *pads, iv = 0;
	double v = 0;
	const char *mode;
	int n, r;

	if (!in_opnd(im, 0, &x) || imp_attr_str(im, "mode", "constant", &mode) != 0)
		return -1;
	r = x.t.rank;
	if (im->opset < 11) {
		const int64_t *p;
		bool has;

		if ((n = imp_attr_ints(im, im->opset < 2 ? "paddings" : "pads", &p, &has)) < 0 ||
		    imp_attr_float(im, "value", 0, &v) != 0)
			return -1;
		if (!has)
			return imp_fail(im, "it has no '%s' attribute", im->opset < 2 ? "paddings" :
			    "pads");
		pads = imp_data_new(im, &(Type){.rank = 1, .dt = DT_I64, .dim = {n ? n : 1}})->p;
		memcpy(pads, p, sizeof(int64_t) * (size_t)n);
		iv = (int64_t)v;
	} else {
		ImpVal *cv = imp_in(im, 2);

		if ((n = imp_in_ints(im, 1, "pads", &pads, 2 * IR_MAX_RANK)) < 0)
			return -1;
		if (cv) {
			if (imp_in_scalar(im, 2, "constant_value", &v) != 0)
				return -1;
			if (cv->type.dt != x.t.dt)
				return imp_fail(im, "its constant_value is %s, the data %s",
				    ir_dtype_name(cv->type.dt), ir_dtype_name(x.t.dt));
			iv = imp_data_i64(cv->k, 0);
		}
		if (im->rc)
			return -1;
	}
	if (n != 2 * r)
		return imp_fail(im, "pads has %d entries for rank %d", n, r);
	if (!ir_dtype_is_float(x.t.dt) && im->opset < 11)
		iv = (int64_t)v;
	if (strcmp(mode, "constant") == 0)
		return bind(im, 0, p_pad(im, imp_out_name(im, 0), x, pads, v, iv));
	if (strcmp(mode, "edge") != 0 && strcmp(mode, "reflect") != 0)
		return imp_fail(im, "'mode' is '%s', expected constant, reflect or edge", mode);
	for (int k = 0; k < r; k++) {
		int64_t b = pads[k], e = pads[r + k], d = x.t.dim[k];
		bool last = true;
		Opnd parts[3];
		int np = 0;

		for (int j = k + 1; j < r; j++)
			last = last && pads[j] == 0 && pads[r + j] == 0;
		if (b < 0 || e < 0)
			return imp_unsupported(im, "negative pads in mode '%s'", mode);
		if (b == 0 && e == 0)
			continue;
		if (mode[0] == 'r' && (b > d - 1 || e > d - 1))
			return imp_unsupported(im, "reflect pads %lld and %lld on an axis of size %lld "
			    "(aicm reflects at most size - 1)", (long long)b, (long long)e, (long long)d);
		for (int s = 0; s < 2; s++) {
			int64_t p = s ? e : b, first[IR_MAX_RANK], len[IR_MAX_RANK], step[IR_MAX_RANK];
			Opnd y;

			if (p == 0)
				continue;
			for (int j = 0; j < r; j++) {
				first[j] = 0;
				len[j] = x.t.dim[j];
				step[j] = 1;
			}
			if (mode[0] == 'e') {
				int64_t dims[IR_MAX_RANK];

				first[k] = s ? d - 1 : 0;
				len[k] = 1;
				y = p_slice(im, NULL, x, first, len, step);
				memcpy(dims, x.t.dim, sizeof(int64_t) * (size_t)r);
				dims[k] = p;
				y = p_expand(im, NULL, y, r, dims);
			} else {
				/* x[p], x[p-1], ..., x[1]; x[d-2], ..., x[d-1-p] */
				first[k] = s ? d - 2 : p;
				len[k] = p;
				step[k] = -1;
				y = p_slice(im, NULL, x, first, len, step);
			}
			if (bad(&y))
				return -1;
			if (s == 0) {
				parts[np++] = y;
				parts[np++] = x;
			} else {
				if (np == 0)
					parts[np++] = x;
				parts[np++] = y;
			}
		}
		x = p_concat(im, last ? imp_out_name(im, 0) : NULL, np, parts, k);
		if (bad(&x))
			return -1;
	}
	return bind(im, 0, x);
}

/* DepthToSpace (DCR: depth as (b, b, C/b²); CRD, opset 11: as (C/b², b,
 * b)) and SpaceToDepth: a reshape to rank 6, a transpose, a reshape. */
static int
depth_space(Imp *im, bool to_space)
{
	Opnd x;
	int64_t b, n, c, h, w, s6[6], out[4];
	const char *mode = "DCR";
	const int64_t dcr[6] = {0, 3, 4, 1, 5, 2}, crd[6] = {0, 1, 4, 2, 5, 3};
	const int64_t s2d[6] = {0, 3, 5, 1, 2, 4};
	const int64_t *perm;

	if (!in_opnd(im, 0, &x) || imp_attr_int(im, "blocksize", 0, &b) != 0)
		return -1;
	if (to_space && im->opset >= 11 && imp_attr_str(im, "mode", "DCR", &mode) != 0)
		return -1;
	if (!imp_attr(im, "blocksize") || b <= 0)
		return imp_fail(im, "'blocksize' must be given and positive");
	if (x.t.rank != 4)
		return imp_fail(im, "its input has rank %d, expected 4", x.t.rank);
	n = x.t.dim[0], c = x.t.dim[1], h = x.t.dim[2], w = x.t.dim[3];
	if (to_space) {
		if (c % (b * b))
			return imp_fail(im, "%lld channels do not divide by blocksize² %lld",
			    (long long)c, (long long)(b * b));
		if (strcmp(mode, "DCR") == 0) {
			int64_t s[6] = {n, b, b, c / (b * b), h, w};

			memcpy(s6, s, sizeof s);
			perm = dcr;
		} else if (strcmp(mode, "CRD") == 0) {
			int64_t s[6] = {n, c / (b * b), b, b, h, w};

			memcpy(s6, s, sizeof s);
			perm = crd;
		} else {
			return imp_fail(im, "'mode' is '%s', expected DCR or CRD", mode);
		}
		out[0] = n, out[1] = c / (b * b), out[2] = h * b, out[3] = w * b;
	} else {
		if (h % b || w % b)
			return imp_fail(im, "height %lld or width %lld does not divide by blocksize %lld",
			    (long long)h, (long long)w, (long long)b);
		int64_t s[6] = {n, c, h / b, b, w / b, b};

		memcpy(s6, s, sizeof s);
		perm = s2d;
		out[0] = n, out[1] = c * b * b, out[2] = h / b, out[3] = w / b;
	}
	x = p_reshape(im, NULL, x, 6, s6);
	x = p_transpose(im, NULL, x, perm);
	return bind(im, 0, p_reshape(im, imp_out_name(im, 0), x, 4, out));
}

int onnx_depth_to_space(Imp *im) { return depth_space(im, true); }
int onnx_space_to_depth(Imp *im) { return depth_space(im, false); }

/* Trilu (opset 14): the upper (j - i >= k) or lower (j - i <= k) triangle
 * of the last two axes, the rest 0: folded when the input is known, else a
 * where over a known mask. */
int
onnx_trilu(Imp *im)
{
	Opnd x;
	int64_t upper, k = 0, h, w;
	ImpData *m;
	bool all = true;
	int i, zero, mask;

	if (!in_opnd(im, 0, &x) || imp_attr_int(im, "upper", 1, &upper) != 0)
		return -1;
	if (imp_in(im, 1)) {
		int64_t *kv;
		int n = imp_in_ints(im, 1, "k", &kv, 1);

		if (n < 0)
			return -1;
		if (n != 1)
			return imp_fail(im, "'k' has %d elements, expected one", n);
		k = kv[0];
	}
	if (im->rc)
		return -1;
	if (x.t.rank < 2)
		return imp_fail(im, "its input has rank %d, expected at least 2", x.t.rank);
	h = x.t.dim[x.t.rank - 2];
	w = x.t.dim[x.t.rank - 1];
	/* past h + w every diagonal is on one side: clamped, c - r - k
	 * cannot overflow */
	k = k > h + w ? h + w : k < -(h + w) ? -(h + w) : k;
	m = imp_data_new(im, &(Type){.rank = 2, .dt = DT_BOOL, .dim = {h, w}});
	for (int64_t r = 0; r < h; r++)
		for (int64_t c = 0; c < w; c++) {
			bool keep = upper ? c - r >= k : c - r <= k;

			imp_data_set(m, r * w + c, keep, keep);
			all = all && keep;
		}
	if (all)
		return bind(im, 0, x);
	if (folds(&x, &x.t)) {
		ImpData *d = imp_data_new(im, &x.t);
		int64_t n = ir_type_numel(&x.t);
		size_t es = ir_dtype_size(x.t.dt);

		for (int64_t e = 0; e < n; e++)
			if (((uint8_t *)m->p)[e % (h * w)])
				memcpy((char *)d->p + e * (int64_t)es, (char *)x.k->p + e * (int64_t)es, es);
		return imp_out_known(im, 0, d);
	}
	zero = imp_splat(im, x.t.dt, 0, 0, NULL);
	mask = imp_const(im, m, NULL);
	i = imp_new(im, OP_WHERE, imp_out_name(im, 0), 3, (int[]){mask, node_of(im, &x), zero});
	return bind(im, 0, of_node(im, imp_done(im, i)));
}

/* ONNX's element type codes that aicm has. */
static bool
dtype_of(int64_t et, DType *dt)
{
	switch (et) {
	case 1: *dt = DT_F32; return true;
	case 6: *dt = DT_I32; return true;
	case 7: *dt = DT_I64; return true;
	case 9: *dt = DT_BOOL; return true;
	case 11: *dt = DT_F64; return true;
	default: return false;
	}
}

/* EyeLike: 1s on diagonal k of a 2-D tensor of the input's shape, in
 * 'dtype' (the input's type by default): known from the shape alone. */
int
onnx_eye_like(Imp *im)
{
	ImpVal *x = imp_in_req(im, 0);
	int64_t et, k;
	Type t;
	ImpData *d;

	if (!x || imp_attr_int(im, "dtype", -1, &et) != 0 || imp_attr_int(im, "k", 0, &k) != 0)
		return -1;
	t = x->type;
	if (et >= 0 && !dtype_of(et, &t.dt))
		return imp_unsupported(im, "'dtype' %lld", (long long)et);
	if (t.rank != 2)
		return imp_fail(im, "its input has rank %d, expected 2", t.rank);
	d = imp_data_new(im, &t);
	for (int64_t r = 0; r < t.dim[0]; r++)
		if (k > -t.dim[1] && k < t.dim[1] && r + k >= 0 && r + k < t.dim[1])
			imp_data_set(d, r * t.dim[1] + r + k, 1, 1);
	return imp_out_known(im, 0, d);
}

/* OneHot (opset 9, 11): a new axis of size depth where the position of
 * each index (negative ones from the end; out of range: none) holds
 * values[1] and the rest values[0].  Folded for known indices, else
 * where(equal(indices, 0..depth-1 along the new axis), on, off). */
int
onnx_one_hot(Imp *im)
{
	Opnd ix, vals;
	double dd;
	int64_t axis, depth;
	Type t;
	int ax, r;

	if (!in_opnd(im, 0, &ix) || !in_opnd(im, 2, &vals) ||
	    imp_attr_int(im, "axis", -1, &axis) != 0 || imp_in_scalar(im, 1, "depth", &dd) != 0)
		return -1;
	if (ir_type_numel(&vals.t) != 2)
		return imp_fail(im, "its values have %lld elements, expected 2",
		    (long long)ir_type_numel(&vals.t));
	if (!(dd >= 1) || dd > IR_MAX_DIM)
		return dd >= 0 && dd < 1 ? imp_unsupported(im, "a zero-size result (depth %g)", dd) :
		    imp_fail(im, "depth is %g", dd);
	depth = (int64_t)dd;
	r = ix.t.rank + 1;
	if (r > IR_MAX_RANK)
		return imp_unsupported(im, "a result of rank %d", r);
	if ((ax = imp_axis(im, axis, r, "'axis'")) < 0)
		return -1;
	t.dt = vals.t.dt;
	t.rank = r;
	for (int k = 0, j = 0; k < r; k++)
		t.dim[k] = k == ax ? depth : ix.t.dim[j++];
	if (ix.k && ir_type_numel(&t) <= FOLD_MAX) {
		ImpData *d = imp_data_new(im, &t);
		int64_t outer = 1, inner = 1, n = ir_type_numel(&t);

		for (int k = 0; k < ax; k++)
			outer *= t.dim[k];
		for (int k = ax + 1; k < r; k++)
			inner *= t.dim[k];
		for (int64_t e = 0; e < n; e++) {
			int64_t o = e / (depth * inner), c = e / inner % depth, in = e % inner;
			int64_t j = imp_data_i64(ix.k, o * inner + in);
			bool on = j == c || (j < 0 && j + depth == c);

			imp_data_set(d, e, imp_data_f64(vals.k, on), imp_data_i64(vals.k, on));
		}
		return imp_out_known(im, 0, d);
	}
	{
		int64_t cdims[IR_MAX_RANK], idims[IR_MAX_RANK];
		ImpData *cls = imp_data_new(im, &(Type){.rank = 1, .dt = DT_I64, .dim = {depth}});
		Opnd c, i;
		int a, neg, eq, zero, on, off;

		for (int64_t e = 0; e < depth; e++)
			imp_data_set(cls, e, (double)e, e);
		for (int k = 0; k < r; k++) {
			cdims[k] = k == ax ? depth : 1;
			idims[k] = t.dim[k];
		}
		idims[ax] = 1;
		if (vals.k) {
			ImpData *von = imp_data_new(im, &(Type){.rank = 0, .dt = t.dt});
			ImpData *voff = imp_data_new(im, &(Type){.rank = 0, .dt = t.dt});

			imp_data_set(von, 0, imp_data_f64(vals.k, 1), imp_data_i64(vals.k, 1));
			imp_data_set(voff, 0, imp_data_f64(vals.k, 0), imp_data_i64(vals.k, 0));
			on = imp_const(im, von, NULL);
			off = imp_const(im, voff, NULL);
		} else {
			/* values[1] and values[0] as scalars read at run time */
			int v = node_of(im, &vals);

			if (vals.t.rank != 1)
				v = imp_reshape(im, NULL, v, 1, (int64_t[]){2});
			on = imp_binary(im, OP_GATHER, NULL, v, imp_splat(im, DT_I64, 1, 0, NULL));
			off = imp_binary(im, OP_GATHER, NULL, v, imp_splat(im, DT_I64, 0, 0, NULL));
		}
		c = p_reshape(im, NULL, of_data(cls), r, cdims);
		a = node_of(im, &ix);
		if (ix.t.dt != DT_I64) {
			a = imp_new(im, OP_CAST, NULL, 1, &a);
			if (a >= 0) {
				imp_at(im, a)->to = DT_I64;
				imp_at(im, a)->set |= AB(TO);
			}
			a = imp_done(im, a);
		}
		/* a negative index counts from the end: index + depth */
		zero = imp_splat(im, DT_I64, 0, 0, NULL);
		neg = imp_binary(im, OP_LESS, NULL, a, zero);
		a = imp_op(im, OP_WHERE, NULL, 3, (int[]){neg,
		    imp_binary(im, OP_ADD, NULL, a, imp_splat(im, DT_I64, (double)depth, 0, NULL)), a});
		i = p_reshape(im, NULL, of_node(im, a), r, idims);
		if (bad(&i))
			return -1;
		eq = imp_binary(im, OP_EQUAL, NULL, node_of(im, &i), node_of(im, &c));
		return imp_out(im, 0, imp_op(im, OP_WHERE, imp_out_name(im, 0), 3,
		    (int[]){eq, on, off}));
	}
}
