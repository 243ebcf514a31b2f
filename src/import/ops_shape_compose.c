/*
 * ops_shape_compose.c: the shape family's composite ops, written over the
 * primitives of ops_shape.h, and the tensors it makes from a shape.
 *
 * Tile is a reshape-expand-reshape per repeated axis, DepthToSpace and
 * SpaceToDepth a reshape-transpose-reshape, Pad's edge and reflect modes
 * slices and a concat per padded axis (its constant mode is aicm's pad);
 * each folds where its operand is known, as the primitives do.
 * ConstantOfShape, Range and EyeLike are known data; Trilu and OneHot
 * are folded for known data, else a where over a mask (and, for OneHot,
 * classes) known at import time.  Dropout is the inference identity.
 */
#include <math.h>
#include <string.h>

#include "ops_shape.h"

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
pad_const(Imp *im, const char *name, Opnd x, const int64_t *pads, double v, int64_t iv)
{
	Type t = x.t;
	int r = x.t.rank, i;
	bool zero = true;

	if (shp_bad(&x))
		return shp_failed;
	for (int k = 0; k < r; k++) {
		int64_t b = pads[k], e = pads[r + k], d = x.t.dim[k];

		if (b < -d || e < -d || b > IR_MAX_DIM || e > IR_MAX_DIM || d + b + e > IR_MAX_DIM) {
			imp_fail(im, "pads %lld and %lld do not fit axis %d of size %lld", (long long)b,
			    (long long)e, k, (long long)d);
			return shp_failed;
		}
		if (d + b + e <= 0) {
			imp_unsupported(im, "a zero-size result (pads crop axis %d to nothing)", k);
			return shp_failed;
		}
		t.dim[k] = d + b + e;
		zero = zero && b == 0 && e == 0;
	}
	if (zero)
		return name ? shp_reshape(im, name, x, r, x.t.dim) : x;
	if (shp_folds(&x, &t)) {
		ImpData *d = imp_data_new(im, &t);
		int64_t is[IR_MAX_RANK], os[IR_MAX_RANK], box[IR_MAX_RANK], db = 0, sb = 0;
		int64_t n = ir_type_numel(&t);

		for (int64_t e = 0; e < n; e++)
			imp_data_set(d, e, v, iv);
		shp_strides(&x.t, is);
		shp_strides(&t, os);
		for (int k = 0; k < r; k++) {
			int64_t b = pads[k], e = pads[r + k];

			box[k] = x.t.dim[k] + (b < 0 ? b : 0) + (e < 0 ? e : 0);
			if (box[k] <= 0)
				return shp_of_data(d);
			db += (b > 0 ? b : 0) * os[k];
			sb += (b < 0 ? -b : 0) * is[k];
		}
		shp_box_copy(r, box, d->p, db, os, x.k->p, sb, is, ir_dtype_size(t.dt));
		return shp_of_data(d);
	}
	i = imp_new(im, OP_PAD, name, 1, (int[]){shp_node_of(im, &x)});
	if (i < 0)
		return shp_failed;
	imp_set_ints(im, i, ATTR_PADS, pads, 2 * r);
	if (v != 0 || iv != 0 || signbit(v))
		set_value(imp_at(im, i), t.dt, v, iv);
	return shp_of_node(im, imp_done(im, i));
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
			return shp_failed;
		}
		if (rep[k] < 0 || rep[k] > IR_MAX_DIM || x.t.dim[k] * rep[k] > IR_MAX_DIM) {
			imp_fail(im, "repeats of axis %d is %lld", k, (long long)rep[k]);
			return shp_failed;
		}
		if (rep[k] > 1)
			last = k;
	}
	if (last < 0)
		return name ? shp_reshape(im, name, x, r, x.t.dim) : x;
	for (int k = 0; k <= last && !shp_bad(&x); k++) {
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
		x = shp_reshape(im, NULL, x, 3, s3);
		x = shp_expand(im, NULL, x, 3, e3);
		x = shp_reshape(im, k == last ? name : NULL, x, r, dims);
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

	if (!shp_in(im, 0, &x))
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
	return shp_bind(im, 0, tile(im, imp_out_name(im, 0), x, rep));
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
	if (ir_type_numel(&t) < 0 || ir_type_numel(&t) > SHP_FOLD_MAX) {
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

	if (!shp_in(im, 0, &x))
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
		if (ir_type_numel(&x.t) > SHP_FOLD_MAX) {
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
	return shp_bind(im, 0, x);
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

	if (!shp_in(im, 0, &x) || imp_attr_str(im, "mode", "constant", &mode) != 0)
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
		return shp_bind(im, 0, pad_const(im, imp_out_name(im, 0), x, pads, v, iv));
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
				y = shp_slice(im, NULL, x, first, len, step);
				memcpy(dims, x.t.dim, sizeof(int64_t) * (size_t)r);
				dims[k] = p;
				y = shp_expand(im, NULL, y, r, dims);
			} else {
				/* x[p], x[p-1], ..., x[1]; x[d-2], ..., x[d-1-p] */
				first[k] = s ? d - 2 : p;
				len[k] = p;
				step[k] = -1;
				y = shp_slice(im, NULL, x, first, len, step);
			}
			if (shp_bad(&y))
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
		x = shp_concat(im, last ? imp_out_name(im, 0) : NULL, np, parts, k);
		if (shp_bad(&x))
			return -1;
	}
	return shp_bind(im, 0, x);
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

	if (!shp_in(im, 0, &x) || imp_attr_int(im, "blocksize", 0, &b) != 0)
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
	x = shp_reshape(im, NULL, x, 6, s6);
	x = shp_transpose(im, NULL, x, perm);
	return shp_bind(im, 0, shp_reshape(im, imp_out_name(im, 0), x, 4, out));
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

	if (!shp_in(im, 0, &x) || imp_attr_int(im, "upper", 1, &upper) != 0)
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
		return shp_bind(im, 0, x);
	if (shp_folds(&x, &x.t)) {
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
	i = imp_new(im, OP_WHERE, imp_out_name(im, 0), 3, (int[]){mask, shp_node_of(im, &x), zero});
	return shp_bind(im, 0, shp_of_node(im, imp_done(im, i)));
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

	if (!shp_in(im, 0, &ix) || !shp_in(im, 2, &vals) ||
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
	if (ix.k && ir_type_numel(&t) <= SHP_FOLD_MAX) {
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
			int v = shp_node_of(im, &vals);

			if (vals.t.rank != 1)
				v = imp_reshape(im, NULL, v, 1, (int64_t[]){2});
			on = imp_binary(im, OP_GATHER, NULL, v, imp_splat(im, DT_I64, 1, 0, NULL));
			off = imp_binary(im, OP_GATHER, NULL, v, imp_splat(im, DT_I64, 0, 0, NULL));
		}
		c = shp_reshape(im, NULL, shp_of_data(cls), r, cdims);
		a = shp_node_of(im, &ix);
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
		i = shp_reshape(im, NULL, shp_of_node(im, a), r, idims);
		if (shp_bad(&i))
			return -1;
		eq = imp_binary(im, OP_EQUAL, NULL, shp_node_of(im, &i), shp_node_of(im, &c));
		return imp_out(im, 0, imp_op(im, OP_WHERE, imp_out_name(im, 0), 3,
		    (int[]){eq, on, off}));
	}
}
