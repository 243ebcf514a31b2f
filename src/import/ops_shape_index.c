/*
 * ops_shape_index.c: ONNX's element-indexed data movement (GatherElements,
 * GatherND, Compress, ScatterElements, Scatter, ScatterND, NonZero), the
 * shape family's second file (ops_shape.c has the first).
 *
 * aicm's gather takes whole slices along one axis, and aicm has no scatter.
 * But when the indices are known at import time (an initializer, a
 * Constant, a --bind), each of these ops is a fixed map from result
 * elements to input elements, which the importer computes: a gather is
 * then aicm's gather of the flattened data by a known index tensor of the
 * result's shape, and a scatter a where between the data and a gather of
 * the updates, over a known mask of the elements written (one such round
 * for each repeated write of an element, under reduction add or mul).  Known data folds
 * outright.  With indices computed at run time the map is not known, and
 * the op is unsupported with that reason; so are NonZero of run-time data
 * (its result's shape depends on the values) and the ops aicm has nothing
 * for (TopK, Unique: sorting).
 */
#include <string.h>

#include "import.h"

enum { FOLD_MAX = 1 << 22 };

/* Input k, which must be known and of an integer type (bool too when
 * boolean); NULL after an error.  The wording is imp_in_ints', so a test
 * runner knows to --bind it. */
static ImpVal *
known_in(Imp *im, int k, const char *what, bool boolean)
{
	ImpVal *v = imp_in_req(im, k);

	if (!v)
		return NULL;
	if (!v->k) {
		imp_unsupported(im, "its %s (input %d, '%s') is computed at run time; aicm needs it "
		    "at import time (freeze a graph input with --bind)", what, k, v->name);
		return NULL;
	}
	if (boolean ? v->type.dt != DT_BOOL : !ir_dtype_is_int(v->type.dt)) {
		imp_fail(im, "its %s (input %d, '%s') is %s, expected %s", what, k, v->name,
		    ir_dtype_name(v->type.dt), boolean ? "bool" : "an integer type");
		return NULL;
	}
	return v;
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

/* Index j into an axis of size d (negative from the end): 0 with *out,
 * or -1 after imp_fail. */
static int
norm_index(Imp *im, int64_t j, int64_t d, int axis, int64_t *out)
{
	if (j < -d || j >= d)
		return imp_fail(im, "index %lld is out of range for axis %d of size %lld",
		    (long long)j, axis, (long long)d);
	*out = j < 0 ? j + d : j;
	return 0;
}

/* Output k = x's elements at the flat positions map (i64, the result's
 * shape): folded when x is known, else gather(reshape(x, (n,)), map). */
static int
take_flat(Imp *im, int k, ImpVal *x, ImpData *map)
{
	int64_t n = ir_type_numel(&map->type), nx = ir_type_numel(&x->type);
	Type t = map->type;
	int flat;

	t.dt = x->type.dt;
	if (x->k && n <= FOLD_MAX) {
		ImpData *d = imp_data_new(im, &t);
		size_t es = ir_dtype_size(t.dt);

		for (int64_t e = 0; e < n; e++)
			memcpy((char *)d->p + e * (int64_t)es,
			    (const char *)x->k->p + imp_data_i64(map, e) * (int64_t)es, es);
		return imp_out_known(im, k, d);
	}
	flat = imp_reshape(im, NULL, imp_node_of(im, x), 1, &nx);
	return imp_out(im, k, imp_binary(im, OP_GATHER, imp_out_name(im, k), flat,
	    imp_const(im, map, NULL)));
}

/* GatherElements (opset 11): out[i] = data[i with i[axis] = indices[i]]. */
int
onnx_gather_elements(Imp *im)
{
	ImpVal *x = imp_in_req(im, 0), *ix;
	int64_t axis, ds[IR_MAX_RANK], m[IR_MAX_RANK] = {0}, n;
	ImpData *map;
	int ax, r;

	if (!x || imp_attr_int(im, "axis", 0, &axis) != 0 ||
	    !(ix = known_in(im, 1, "indices", false)))
		return -1;
	r = x->type.rank;
	if ((ax = imp_axis(im, axis, r, "'axis'")) < 0)
		return -1;
	if (ix->type.rank != r)
		return imp_fail(im, "its indices have rank %d, its data %d", ix->type.rank, r);
	for (int k = 0; k < r; k++)
		if (k != ax && ix->type.dim[k] > x->type.dim[k])
			return imp_fail(im, "its indices are longer than its data along axis %d", k);
	strides(&x->type, ds);
	{
		Type mt = ix->type;

		mt.dt = DT_I64;
		map = imp_data_new(im, &mt);
	}
	n = ir_type_numel(&map->type);
	for (int64_t e = 0; e < n; e++) {
		int64_t off = 0, j = 0;

		if (norm_index(im, imp_data_i64(ix->k, e), x->type.dim[ax], ax, &j) != 0)
			return -1;
		for (int k = 0; k < r; k++)
			off += (k == ax ? j : m[k]) * ds[k];
		imp_data_set(map, e, (double)off, off);
		for (int k = r - 1; k >= 0 && ++m[k] == ix->type.dim[k]; k--)
			m[k] = 0;
	}
	return take_flat(im, 0, x, map);
}

/* GatherND (opset 11; batch_dims from 12): each index tuple of the last
 * axis of indices selects a slice of data, after batch_dims shared
 * leading axes. */
int
onnx_gather_nd(Imp *im)
{
	ImpVal *x = imp_in_req(im, 0), *ix;
	int64_t b = 0, ds[IR_MAX_RANK], nt, tail = 1, nb;
	ImpData *map;
	Type t = {.dt = DT_I64};
	int r, q, kk;

	if (!x || imp_attr_int(im, "batch_dims", 0, &b) != 0 ||
	    !(ix = known_in(im, 1, "indices", false)))
		return -1;
	r = x->type.rank;
	q = ix->type.rank;
	kk = q > 0 ? (int)ix->type.dim[q - 1] : 0;
	if (q < 1 || b < 0 || b >= (q < r ? q : r) || kk < 1 || kk > r - b)
		return imp_fail(im, "indices of shape rank %d (last dimension %d) and batch_dims %lld "
		    "do not index data of rank %d", q, kk, (long long)b, r);
	for (int k = 0; k < b; k++)
		if (ix->type.dim[k] != x->type.dim[k])
			return imp_fail(im, "batch dimension %d differs between data and indices", k);
	for (int k = 0; k < q - 1; k++)
		t.dim[t.rank++] = ix->type.dim[k];
	for (int k = (int)b + kk; k < r; k++) {
		if (t.rank == IR_MAX_RANK)
			return imp_unsupported(im, "a result of rank above %d", IR_MAX_RANK);
		t.dim[t.rank++] = x->type.dim[k];
		tail *= x->type.dim[k];
	}
	strides(&x->type, ds);
	map = imp_data_new(im, &t);
	nt = ir_type_numel(&ix->type) / kk;          /* index tuples */
	nb = 1;
	for (int k = (int)b; k < q - 1; k++)
		nb *= ix->type.dim[k];                   /* tuples per batch */
	for (int64_t j = 0; j < nt; j++) {
		int64_t off = 0, bi = j / nb;

		/* the batch coordinates of tuple j, row-major over dims [0, b) */
		for (int k = (int)b - 1; k >= 0; k--) {
			off += bi % x->type.dim[k] * ds[k];
			bi /= x->type.dim[k];
		}
		for (int c = 0; c < kk; c++) {
			int64_t v = 0;

			if (norm_index(im, imp_data_i64(ix->k, j * kk + c), x->type.dim[b + c],
			    (int)b + c, &v) != 0)
				return -1;
			off += v * ds[b + c];
		}
		for (int64_t e = 0; e < tail; e++)
			imp_data_set(map, j * tail + e, (double)(off + e), off + e);
	}
	return take_flat(im, 0, x, map);
}

/* Compress (opset 9, 11): the positions along 'axis' (the flattened
 * input without one) where the known condition is True. */
int
onnx_compress(Imp *im)
{
	ImpVal *x = imp_in_req(im, 0), *c;
	int64_t axis, nc, sel = 0, *pos, ds[IR_MAX_RANK], m[IR_MAX_RANK] = {0}, n, d;
	bool has = imp_has_attr(im, "axis");
	ImpData *map;
	Type t;
	int ax = 0;

	if (!x || imp_attr_int(im, "axis", 0, &axis) != 0 ||
	    !(c = known_in(im, 1, "condition", true)))
		return -1;
	if (c->type.rank != 1)
		return imp_fail(im, "its condition has rank %d, expected 1", c->type.rank);
	t = x->type;
	if (has) {
		if ((ax = imp_axis(im, axis, t.rank, "'axis'")) < 0)
			return -1;
	} else {
		t.rank = 1;
		t.dim[0] = ir_type_numel(&x->type);
	}
	d = t.dim[ax];
	nc = c->type.dim[0] < d ? c->type.dim[0] : d;
	if (c->type.dim[0] > d)
		return imp_fail(im, "its condition has %lld entries, the axis %lld",
		    (long long)c->type.dim[0], (long long)d);
	pos = imp_data_new(im, &(Type){.rank = 1, .dt = DT_I64, .dim = {d}})->p;
	for (int64_t e = 0; e < nc; e++)
		if (imp_data_i64(c->k, e))
			pos[sel++] = e;
	if (sel == 0)
		return imp_unsupported(im, "a zero-size result (the condition selects nothing)");
	strides(&t, ds);
	t.dim[ax] = sel;
	t.dt = DT_I64;
	map = imp_data_new(im, &t);
	n = ir_type_numel(&t);
	for (int64_t e = 0; e < n; e++) {
		int64_t off = 0;

		for (int k = 0; k < t.rank; k++)
			off += (k == ax ? pos[m[k]] : m[k]) * ds[k];
		imp_data_set(map, e, (double)off, off);
		for (int k = t.rank - 1; k >= 0 && ++m[k] == t.dim[k]; k--)
			m[k] = 0;
	}
	return take_flat(im, 0, x, map);
}

/* The writes of a scatter: update element src[i] goes to flat element
 * tgt[i] of the data, in index order. */
typedef struct Writes {
	int64_t n;
	int64_t *tgt, *src;
} Writes;

enum { MAX_ROUNDS = 16 };

/* Output 0 = x with the written elements replaced by (for reduction add
 * and mul: combined with) their updates, in index order.  Folded when x
 * and updates are known; else, over the flattened data, one round a
 * where(mask, comb(acc, gather(updates, src)), acc) for each write of an
 * element after the first (add and mul only: without a reduction, two
 * writes of one element have no defined order). */
static int
scatter(Imp *im, ImpVal *x, ImpVal *u, const Writes *w, OpId comb)
{
	int64_t n = ir_type_numel(&x->type), nu = ir_type_numel(&u->type), rounds = 0;
	int64_t *seen = imp_data_new(im, &(Type){.rank = 1, .dt = DT_I64, .dim = {n}})->p;
	int64_t *round = imp_data_new(im, &(Type){.rank = 1, .dt = DT_I64,
	    .dim = {w->n > 0 ? w->n : 1}})->p;
	int acc, fu;

	if (u->type.dt != x->type.dt)
		return imp_fail(im, "its updates are %s, its data %s", ir_dtype_name(u->type.dt),
		    ir_dtype_name(x->type.dt));
	if (comb != OP_COUNT && x->type.dt == DT_BOOL)
		return imp_unsupported(im, "a reduction of bool updates");
	for (int64_t i = 0; i < w->n; i++) {
		round[i] = seen[w->tgt[i]]++;
		if (round[i] >= rounds)
			rounds = round[i] + 1;
	}
	if (rounds > 1 && comb == OP_COUNT)
		return imp_unsupported(im, "two updates of one element (duplicate indices) without a "
		    "reduction");
	if (rounds > MAX_ROUNDS)
		return imp_unsupported(im, "%lld updates of one element (aicm-import combines at "
		    "most %d)", (long long)rounds, MAX_ROUNDS);
	if (x->k && u->k && n <= FOLD_MAX) {
		ImpData *d = imp_data_new(im, &x->type);

		memcpy(d->p, x->k->p, (size_t)n * ir_dtype_size(x->type.dt));
		for (int64_t i = 0; i < w->n; i++) {
			int64_t t = w->tgt[i], s = w->src[i];
			double a = imp_data_f64(d, t), b = imp_data_f64(u->k, s);
			int64_t ia = imp_data_i64(d, t), ib = imp_data_i64(u->k, s);

			if (comb == OP_ADD)
				imp_data_set(d, t, a + b, (int64_t)((uint64_t)ia + (uint64_t)ib));
			else if (comb == OP_MUL)
				imp_data_set(d, t, a * b, (int64_t)((uint64_t)ia * (uint64_t)ib));
			else
				imp_data_set(d, t, b, ib);
		}
		return imp_out_known(im, 0, d);
	}
	acc = imp_reshape(im, NULL, imp_node_of(im, x), 1, &n);
	fu = imp_reshape(im, NULL, imp_node_of(im, u), 1, &nu);
	for (int64_t r = 0; r < rounds; r++) {
		ImpData *mask = imp_data_new(im, &(Type){.rank = 1, .dt = DT_BOOL, .dim = {n}});
		ImpData *src = imp_data_new(im, &(Type){.rank = 1, .dt = DT_I64, .dim = {n}});
		int g;

		for (int64_t i = 0; i < w->n; i++)
			if (round[i] == r) {
				((uint8_t *)mask->p)[w->tgt[i]] = 1;
				((int64_t *)src->p)[w->tgt[i]] = w->src[i];
			}
		g = imp_binary(im, OP_GATHER, NULL, fu, imp_const(im, src, NULL));
		if (comb != OP_COUNT)
			g = imp_binary(im, comb, NULL, acc, g);
		acc = imp_op(im, OP_WHERE, NULL, 3, (int[]){imp_const(im, mask, NULL), g, acc});
	}
	return imp_out(im, 0, imp_reshape(im, imp_out_name(im, 0), acc, x->type.rank,
	    x->type.dim));
}

/* Room for n writes. */
static void
writes_new(Imp *im, Writes *w, int64_t n)
{
	Type t = {.rank = 1, .dt = DT_I64, .dim = {n > 0 ? n : 1}};

	w->n = 0;
	w->tgt = imp_data_new(im, &t)->p;
	w->src = imp_data_new(im, &t)->p;
}

static void
write_at(Writes *w, int64_t t, int64_t s)
{
	w->tgt[w->n] = t;
	w->src[w->n++] = s;
}

/* The reduction attribute of ScatterElements and ScatterND (opset 16):
 * OP_COUNT for none. */
static int
reduction(Imp *im, OpId *comb)
{
	const char *red;

	if (imp_attr_str(im, "reduction", "none", &red) != 0)
		return -1;
	if (strcmp(red, "none") == 0)
		*comb = OP_COUNT;
	else if (strcmp(red, "add") == 0)
		*comb = OP_ADD;
	else if (strcmp(red, "mul") == 0)
		*comb = OP_MUL;
	else
		return imp_fail(im, "'reduction' is '%s', expected none, add or mul", red);
	return 0;
}

static int
scatter_elements(Imp *im, bool reduce)
{
	ImpVal *x = imp_in_req(im, 0), *ix, *u;
	int64_t axis, ds[IR_MAX_RANK], m[IR_MAX_RANK] = {0}, n;
	OpId comb = OP_COUNT;
	Writes w;
	int ax, r;

	if (!x || imp_attr_int(im, "axis", 0, &axis) != 0 ||
	    !(ix = known_in(im, 1, "indices", false)) || !(u = imp_in_req(im, 2)))
		return -1;
	if (reduce && reduction(im, &comb) != 0)
		return -1;
	r = x->type.rank;
	if ((ax = imp_axis(im, axis, r, "'axis'")) < 0)
		return -1;
	if (ix->type.rank != r || !ir_same_dims(&ix->type, &u->type))
		return imp_fail(im, "its indices and updates must have one shape, of its data's rank");
	for (int k = 0; k < r; k++)
		if (k != ax && ix->type.dim[k] > x->type.dim[k])
			return imp_fail(im, "its indices are longer than its data along axis %d", k);
	strides(&x->type, ds);
	n = ir_type_numel(&ix->type);
	writes_new(im, &w, n);
	for (int64_t e = 0; e < n; e++) {
		int64_t off = 0, j = 0;

		if (norm_index(im, imp_data_i64(ix->k, e), x->type.dim[ax], ax, &j) != 0)
			return -1;
		for (int k = 0; k < r; k++)
			off += (k == ax ? j : m[k]) * ds[k];
		write_at(&w, off, e);
		for (int k = r - 1; k >= 0 && ++m[k] == ix->type.dim[k]; k--)
			m[k] = 0;
	}
	return scatter(im, x, u, &w, comb);
}

/* ScatterElements (opset 11; reduction from 16) and Scatter (9, 10: the
 * same op under its old name). */
int onnx_scatter_elements(Imp *im) { return scatter_elements(im, im->opset >= 16); }
int onnx_scatter(Imp *im) { return scatter_elements(im, false); }

/* ScatterND (opset 11; reduction from 16): each index tuple of the last
 * axis of indices names a slice of data that the matching slice of
 * updates replaces. */
int
onnx_scatter_nd(Imp *im)
{
	ImpVal *x = imp_in_req(im, 0), *ix, *u;
	int64_t ds[IR_MAX_RANK], tail = 1, nt;
	OpId comb = OP_COUNT;
	Writes w;
	int r, q, kk;

	if (!x || !(ix = known_in(im, 1, "indices", false)) || !(u = imp_in_req(im, 2)))
		return -1;
	if (im->opset >= 16 && reduction(im, &comb) != 0)
		return -1;
	r = x->type.rank;
	q = ix->type.rank;
	kk = q > 0 ? (int)ix->type.dim[q - 1] : 0;
	if (q < 1 || kk < 1 || kk > r)
		return imp_fail(im, "indices of rank %d (last dimension %d) do not index data of "
		    "rank %d", q, kk, r);
	if (u->type.rank != q - 1 + r - kk)
		return imp_fail(im, "its updates have rank %d, expected %d", u->type.rank,
		    q - 1 + r - kk);
	for (int k = 0; k < q - 1; k++)
		if (u->type.dim[k] != ix->type.dim[k])
			return imp_fail(im, "its updates differ from its indices in dimension %d", k);
	for (int k = kk; k < r; k++) {
		if (u->type.dim[q - 1 + k - kk] != x->type.dim[k])
			return imp_fail(im, "its updates differ from its data in dimension %d", k);
		tail *= x->type.dim[k];
	}
	strides(&x->type, ds);
	nt = ir_type_numel(&ix->type) / kk;
	writes_new(im, &w, nt * tail);
	for (int64_t j = 0; j < nt; j++) {
		int64_t off = 0;

		for (int c = 0; c < kk; c++) {
			int64_t v = 0;

			if (norm_index(im, imp_data_i64(ix->k, j * kk + c), x->type.dim[c], c, &v) != 0)
				return -1;
			off += v * ds[c];
		}
		for (int64_t e = 0; e < tail; e++)
			write_at(&w, off + e, j * tail + e);
	}
	return scatter(im, x, u, &w, comb);
}

/* NonZero: the coordinates of the non-zero elements, (rank, count) i64;
 * known data only, as the count is the result's shape. */
int
onnx_non_zero(Imp *im)
{
	ImpVal *x = imp_in_req(im, 0);
	int64_t n, cnt = 0, m[IR_MAX_RANK] = {0};
	int r;
	ImpData *d;

	if (!x)
		return -1;
	if (!x->k)
		return imp_unsupported(im, "NonZero of data computed at run time: the result's shape "
		    "depends on the values");
	r = x->type.rank;
	n = ir_type_numel(&x->type);
	for (int64_t e = 0; e < n; e++)
		cnt += imp_data_f64(x->k, e) != 0;
	if (r == 0 || cnt == 0)
		return imp_unsupported(im, "a zero-size result");
	d = imp_data_new(im, &(Type){.rank = 2, .dt = DT_I64, .dim = {r, cnt}});
	cnt = 0;
	for (int64_t e = 0; e < n; e++) {
		if (imp_data_f64(x->k, e) != 0) {
			for (int k = 0; k < r; k++)
				imp_data_set(d, k * d->type.dim[1] + cnt, (double)m[k], m[k]);
			cnt++;
		}
		for (int k = r - 1; k >= 0 && ++m[k] == x->type.dim[k]; k--)
			m[k] = 0;
	}
	return imp_out_known(im, 0, d);
}

/* Ops that sort: aicm has no sort, and these have no decomposition into
 * its ops. */
int
onnx_sorting(Imp *im)
{
	return imp_unsupported(im, "aicm has no sort or top-k op to express it");
}
