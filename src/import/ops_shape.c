/*
 * ops_shape.c: ONNX's constants, shape computations and layout ops, and
 * the shape family's primitives (ops_shape.h).
 *
 * Shapes are static in aicm, so Shape is always known at import time, and
 * so is whatever a model computes from it with ops whose inputs are all
 * known: those fold here into known values (import.h), and Reshape, Slice,
 * Expand, ... read their shape-like operands as the attributes they are.
 * So PyTorch's Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains
 * leave a single reshape.
 *
 * Every translator works on Opnd, an operand that is either known data or
 * an aicm node, through a handful of primitives (reshape, transpose, slice,
 * concat, expand, gather) that fold when their operand is known and emit
 * the aicm op when it is not, so a weight rearranged at export time (a
 * transposed Linear weight) becomes a rearranged const and costs nothing
 * at run time; Split is slices.  A fold whose result would be larger than
 * SHP_FOLD_MAX elements emits the op on a const instead, and so does an
 * Expand of known data to more than SHP_GROW_MAX elements that are not all
 * one value: folding is for shapes and weights, not for writing a
 * broadcast weight out at its broadcast size.  The composite ops are in
 * ops_shape_compose.c, the element-indexed ones in ops_shape_index.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ops_shape.h"

static Opnd
of_val(ImpVal *v)
{
	return (Opnd){v->type, v->k, v->k ? -1 : v->node, v};
}

Opnd
shp_of_data(ImpData *d)
{
	return (Opnd){d->type, d, -1, NULL};
}

/* An emitted node (i < 0: the error is reported; t's rank -1 tells). */
Opnd
shp_of_node(Imp *im, int i)
{
	Opnd o = {{.rank = -1}, NULL, i, NULL};

	if (i >= 0)
		o.t = *imp_type(im, i);
	return o;
}

const Opnd shp_failed = {{.rank = -1}, NULL, -1, NULL};

int
shp_node_of(Imp *im, Opnd *o)
{
	if (o->node >= 0)
		return o->node;
	if (o->src)
		return o->node = imp_node_of(im, o->src);
	return o->node = imp_const(im, o->k, NULL);
}

/* Binds output k to o. */
int
shp_bind(Imp *im, int k, Opnd o)
{
	if (shp_bad(&o))
		return -1;
	if (o.k)
		return imp_out_known(im, k, o.k);
	return imp_out(im, k, shp_node_of(im, &o));
}

/* Whether a result of type t is folded from known x. */
bool
shp_folds(const Opnd *x, const Type *t)
{
	int64_t n = ir_type_numel(t);

	return x->k && n >= 0 && n <= SHP_FOLD_MAX;
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

/* shp_folds for an op that repeats its input's elements (Expand, Tile's
 * expand): a large result is folded only when it stays a splat, so that a
 * broadcast weight is not written out at its broadcast size. */
static bool
folds_growing(const Opnd *x, const Type *t)
{
	return shp_folds(x, t) && (ir_type_numel(t) <= SHP_GROW_MAX || uniform(x->k));
}

void
shp_strides(const Type *t, int64_t *s)
{
	int64_t m = 1;

	for (int k = t->rank - 1; k >= 0; k--) {
		s[k] = m;
		m *= t->dim[k];
	}
}

/* dst[db + sum i_k ds_k] = src[sb + sum i_k ss_k] over the box dims[0..r),
 * es bytes an element. */
void
shp_box_copy(int r, const int64_t *dims, char *dst, int64_t db, const int64_t *ds, const char *src,
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
Opnd
shp_reshape(Imp *im, const char *name, Opnd x, int rank, const int64_t *dims)
{
	Type t = x.t;

	if (shp_bad(&x))
		return shp_failed;
	t.rank = rank;
	memcpy(t.dim, dims, sizeof(int64_t) * (size_t)rank);
	if (ir_type_numel(&t) != ir_type_numel(&x.t)) {
		imp_fail(im, "%lld elements cannot take a shape of %lld",
		    (long long)ir_type_numel(&x.t), (long long)ir_type_numel(&t));
		return shp_failed;
	}
	if (x.k) {
		/* the same bytes under another shape */
		ImpData *d = imp_data_new(im, &t);

		memcpy(d->p, x.k->p, (size_t)ir_type_numel(&t) * ir_dtype_size(t.dt));
		return shp_of_data(d);
	}
	if (same_dims(&x.t, rank, dims) && !name)
		return x;
	return shp_of_node(im, imp_reshape(im, name, shp_node_of(im, &x), rank, dims));
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

Opnd
shp_transpose(Imp *im, const char *name, Opnd x, const int64_t *perm)
{
	Type t = x.t;
	int i;

	if (shp_bad(&x))
		return shp_failed;
	for (int k = 0; k < x.t.rank; k++)
		t.dim[k] = x.t.dim[perm[k]];
	if (shp_folds(&x, &t)) {
		ImpData *d = imp_data_new(im, &t);
		int64_t is[IR_MAX_RANK], os[IR_MAX_RANK], ss[IR_MAX_RANK];

		shp_strides(&x.t, is);
		shp_strides(&t, os);
		for (int k = 0; k < t.rank; k++)
			ss[k] = is[perm[k]];
		shp_box_copy(t.rank, t.dim, d->p, 0, os, x.k->p, 0, ss, ir_dtype_size(t.dt));
		return shp_of_data(d);
	}
	{
		/* a permutation that keeps the dims larger than 1 in their order
		 * moves no element: a reshape (the exporter's (1, S, E) -> (S, 1, E)) */
		int last = -1;
		bool moves = false;

		for (int k = 0; k < x.t.rank; k++)
			if (x.t.dim[perm[k]] > 1) {
				moves = moves || perm[k] < last;
				last = (int)perm[k];
			}
		if (!moves)
			return shp_of_node(im, imp_reshape(im, name, shp_node_of(im, &x), t.rank, t.dim));
	}
	i = imp_new(im, OP_TRANSPOSE, name, 1, (int[]){shp_node_of(im, &x)});
	if (i < 0)
		return shp_failed;
	imp_set_ints(im, i, ATTR_PERM, perm, x.t.rank);
	return shp_of_node(im, imp_done(im, i));
}

/* A slice in normal form: along every axis k the elements first[k],
 * first[k] + step[k], ... (len[k] of them, all inside the axis). */
Opnd
shp_slice(Imp *im, const char *name, Opnd x, const int64_t *first, const int64_t *len,
    const int64_t *step)
{
	Type t = x.t;
	int64_t st[IR_MAX_RANK], en[IR_MAX_RANK], sp[IR_MAX_RANK], ax[IR_MAX_RANK];
	int n = 0, i;

	if (shp_bad(&x))
		return shp_failed;
	for (int k = 0; k < t.rank; k++) {
		if (len[k] <= 0) {
			imp_unsupported(im, "a zero-size result (axis %d selects nothing)", k);
			return shp_failed;
		}
		t.dim[k] = len[k];
	}
	if (shp_folds(&x, &t)) {
		ImpData *d = imp_data_new(im, &t);
		int64_t is[IR_MAX_RANK], os[IR_MAX_RANK], ss[IR_MAX_RANK], base = 0;

		shp_strides(&x.t, is);
		shp_strides(&t, os);
		for (int k = 0; k < t.rank; k++) {
			ss[k] = is[k] * step[k];
			base += first[k] * is[k];
		}
		shp_box_copy(t.rank, t.dim, d->p, 0, os, x.k->p, base, ss, ir_dtype_size(t.dt));
		return shp_of_data(d);
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
		return name ? shp_reshape(im, name, x, x.t.rank, x.t.dim) : x;
	i = imp_new(im, OP_SLICE, name, 1, (int[]){shp_node_of(im, &x)});
	if (i < 0)
		return shp_failed;
	imp_set_ints(im, i, ATTR_STARTS, st, n);
	imp_set_ints(im, i, ATTR_ENDS, en, n);
	if (n != x.t.rank || ax[n - 1] != n - 1)
		imp_set_ints(im, i, ATTR_AXES, ax, n);
	for (int j = 0; j < n; j++)
		if (sp[j] != 1) {
			imp_set_ints(im, i, ATTR_STEPS, sp, n);
			break;
		}
	return shp_of_node(im, imp_done(im, i));
}

/* The part [from, from + len) of axis ax. */
static Opnd
part_of(Imp *im, const char *name, Opnd x, int ax, int64_t from, int64_t len)
{
	int64_t first[IR_MAX_RANK], n[IR_MAX_RANK], step[IR_MAX_RANK];

	for (int k = 0; k < x.t.rank; k++) {
		first[k] = 0;
		n[k] = x.t.dim[k];
		step[k] = 1;
	}
	first[ax] = from;
	n[ax] = len;
	return shp_slice(im, name, x, first, n, step);
}

Opnd
shp_concat(Imp *im, const char *name, int n, Opnd *xs, int ax)
{
	Type t = xs[0].t;
	bool known = true;
	int *in, i;

	for (int j = 0; j < n; j++)
		if (shp_bad(&xs[j]))
			return shp_failed;
	for (int j = 1; j < n; j++) {
		const Type *b = &xs[j].t;

		if (b->rank != t.rank || b->dt != t.dt) {
			imp_fail(im, "input %d is %s of rank %d, input 0 %s of rank %d", j,
			    ir_dtype_name(b->dt), b->rank, ir_dtype_name(t.dt), t.rank);
			return shp_failed;
		}
		for (int k = 0; k < t.rank; k++)
			if (k != ax && b->dim[k] != t.dim[k]) {
				imp_fail(im, "input %d differs from input 0 in dimension %d", j, k);
				return shp_failed;
			}
		t.dim[ax] += b->dim[ax];
	}
	for (int j = 0; j < n; j++)
		known = known && xs[j].k;
	if (n == 1)
		return name ? shp_reshape(im, name, xs[0], t.rank, t.dim) : xs[0];
	if (known && shp_folds(&xs[0], &t)) {
		ImpData *d = imp_data_new(im, &t);
		int64_t os[IR_MAX_RANK], is[IR_MAX_RANK], at = 0;

		shp_strides(&t, os);
		for (int j = 0; j < n; j++) {
			shp_strides(&xs[j].t, is);
			shp_box_copy(t.rank, xs[j].t.dim, d->p, at * os[ax], os, xs[j].k->p, 0, is,
			    ir_dtype_size(t.dt));
			at += xs[j].t.dim[ax];
		}
		return shp_of_data(d);
	}
	in = xmalloc(sizeof(int) * (size_t)n);
	for (int j = 0; j < n; j++)
		in[j] = shp_node_of(im, &xs[j]);
	i = imp_new(im, OP_CONCAT, name, n, in);
	free(in);
	if (i < 0)
		return shp_failed;
	imp_at(im, i)->axis = ax;
	imp_at(im, i)->set |= AB(AXIS);
	return shp_of_node(im, imp_done(im, i));
}

/* x broadcast (numpy's way) with shape[0..n). */
Opnd
shp_expand(Imp *im, const char *name, Opnd x, int n, const int64_t *shape)
{
	Type t = x.t;
	int r = n > x.t.rank ? n : x.t.rank, i;

	if (shp_bad(&x))
		return shp_failed;
	if (r > IR_MAX_RANK) {
		imp_unsupported(im, "a result of rank %d (aicm takes at most %d)", r, IR_MAX_RANK);
		return shp_failed;
	}
	t.rank = r;
	for (int k = 0; k < r; k++) {
		int ia = x.t.rank - r + k, is = n - r + k;
		int64_t da = ia >= 0 ? x.t.dim[ia] : 1, ds = is >= 0 ? shape[is] : 1;

		if (ds == 0) {
			imp_unsupported(im, "a zero-size result");
			return shp_failed;
		}
		if (ds < 0 || (da != ds && da != 1 && ds != 1)) {
			imp_fail(im, "dimension %lld of the input does not broadcast to %lld",
			    (long long)da, (long long)ds);
			return shp_failed;
		}
		t.dim[k] = da == 1 ? ds : da;
	}
	if (folds_growing(&x, &t)) {
		ImpData *d = imp_data_new(im, &t);
		int64_t is[IR_MAX_RANK], os[IR_MAX_RANK], ss[IR_MAX_RANK];

		shp_strides(&x.t, is);
		shp_strides(&t, os);
		for (int k = 0; k < r; k++) {
			int ia = x.t.rank - r + k;

			ss[k] = ia < 0 || x.t.dim[ia] == 1 ? 0 : is[ia];
		}
		shp_box_copy(r, t.dim, d->p, 0, os, x.k->p, 0, ss, ir_dtype_size(t.dt));
		return shp_of_data(d);
	}
	if (same_dims(&x.t, t.rank, t.dim))
		return name ? shp_reshape(im, name, x, t.rank, t.dim) : x;
	i = imp_new(im, OP_EXPAND, name, 1, (int[]){shp_node_of(im, &x)});
	if (i < 0)
		return shp_failed;
	imp_set_ints(im, i, ATTR_SHAPE, t.dim, r);
	return shp_of_node(im, imp_done(im, i));
}

/* numpy's take(x, ix, axis=ax); ix integers, negative ones from the end. */
static Opnd
take(Imp *im, const char *name, Opnd x, Opnd ix, int ax)
{
	Type t = x.t;
	int i;

	if (shp_bad(&x) || shp_bad(&ix))
		return shp_failed;
	if (!ir_dtype_is_int(ix.t.dt)) {
		imp_fail(im, "its indices are %s, expected int32 or int64", ir_dtype_name(ix.t.dt));
		return shp_failed;
	}
	if (x.t.rank - 1 + ix.t.rank > IR_MAX_RANK) {
		imp_unsupported(im, "a result of rank %d (aicm takes at most %d)",
		    x.t.rank - 1 + ix.t.rank, IR_MAX_RANK);
		return shp_failed;
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
				return shp_failed;
			}
		}
	}
	if (ix.k && shp_folds(&x, &t)) {
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
		return shp_of_data(d);
	}
	i = imp_new(im, OP_GATHER, name, 2, (int[]){shp_node_of(im, &x), shp_node_of(im, &ix)});
	if (i < 0)
		return shp_failed;
	if (ax != 0) {
		imp_at(im, i)->axis = ax;
		imp_at(im, i)->set |= AB(AXIS);
	}
	return shp_of_node(im, imp_done(im, i));
}

/* ---- operands of the translators -------------------------------------- */

bool
shp_in(Imp *im, int k, Opnd *o)
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

	return shp_in(im, 0, &x) ? shp_bind(im, 0, x) : -1;
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

	if (!shp_in(im, 0, &x) || imp_attr_int(im, "allowzero", 0, &allowzero) != 0)
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
	return shp_bind(im, 0, shp_reshape(im, imp_out_name(im, 0), x, n, dims));
}

/* Flatten: 2-D, the dims before 'axis' (1) times the rest; axis may be
 * negative from opset 11 and equal to the rank. */
int
onnx_flatten(Imp *im)
{
	Opnd x;
	int64_t axis, dims[2] = {1, 1};

	if (!shp_in(im, 0, &x) || imp_attr_int(im, "axis", 1, &axis) != 0)
		return -1;
	if (axis < 0)
		axis += x.t.rank;
	if (axis < 0 || axis > x.t.rank)
		return imp_fail(im, "'axis' is out of range for rank %d", x.t.rank);
	for (int k = 0; k < x.t.rank; k++)
		dims[k >= axis] *= x.t.dim[k];
	return shp_bind(im, 0, shp_reshape(im, imp_out_name(im, 0), x, 2, dims));
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

	if (!shp_in(im, 0, &x) || !axes_of(im, 1, axes, &n))
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
	return shp_bind(im, 0, shp_reshape(im, imp_out_name(im, 0), x, r, dims));
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

	if (!shp_in(im, 0, &x) || !axes_of(im, 1, axes, &n))
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
	return shp_bind(im, 0, shp_reshape(im, imp_out_name(im, 0), x, r, dims));
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

	if (!shp_in(im, 0, &x) || (n = imp_attr_ints(im, "perm", &perm, &has)) < 0)
		return -1;
	if (!has) {
		n = x.t.rank;
		for (int k = 0; k < n; k++)
			rev[k] = n - 1 - k;
		perm = rev;
	}
	if (check_perm(im, perm, n, x.t.rank) != 0)
		return -1;
	return shp_bind(im, 0, shp_transpose(im, imp_out_name(im, 0), x, perm));
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
		if (!shp_in(im, j, &xs[j]))
			goto out;
	if (xs[0].t.rank == 0)
		imp_fail(im, "its inputs have rank 0");
	else if ((ax = imp_axis(im, axis, xs[0].t.rank, "'axis'")) >= 0)
		rc = shp_bind(im, 0, shp_concat(im, imp_out_name(im, 0), n, xs, ax));
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

	if (!shp_in(im, 0, &x) || imp_attr_int(im, "axis", 0, &axis) != 0)
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
		    shp_bind(im, k, part_of(im, imp_out_name(im, k), x, ax, at, len)) != 0)
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

	if (!shp_in(im, 0, &x))
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
	return shp_bind(im, 0, shp_slice(im, imp_out_name(im, 0), x, first, len, step));
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

	if (!shp_in(im, 0, &x) || !shp_in(im, 1, &ix) || imp_attr_int(im, "axis", 0, &axis))
		return -1;
	if (x.t.rank == 0)
		return imp_fail(im, "its data has rank 0");
	if ((ax = imp_axis(im, axis, x.t.rank, "'axis'")) < 0)
		return -1;
	return shp_bind(im, 0, take(im, imp_out_name(im, 0), x, ix, ax));
}

/* Expand: numpy's broadcast of the input with the shape input. */
int
onnx_expand(Imp *im)
{
	Opnd x;
	int64_t *shape;
	int n;

	if (!shp_in(im, 0, &x) || (n = imp_in_ints(im, 1, "shape", &shape, IR_MAX_RANK)) < 0)
		return -1;
	return shp_bind(im, 0, shp_expand(im, imp_out_name(im, 0), x, n, shape));
}
