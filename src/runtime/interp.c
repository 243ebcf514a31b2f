/*
 * interp.c: the reference interpreter, the oracle of every other engine.
 *
 * It runs the ops in node order (kernel blocks are ignored) with plain
 * loops that follow numpy's semantics: broadcasting aligned from the right,
 * reductions over one axis or all of them, keepdims only shaping the result,
 * NaN propagating through maximum, minimum and max as np.maximum and np.max
 * do.  Every element is computed in double and stored once, rounded to the
 * element type: for f32 that makes sums and dots accumulate in f64 and
 * round once (DESIGN §7), and the elementwise ops exact or nearly so.
 * Integer and bool operands compute on int64 with scalar.h's integer rows
 * (exact, wrapping), and cast and where move integers as int64, so an
 * i64 past 2^53 survives.  Speed is not the point; being obviously right
 * is.
 *
 * The kernels are indexed by op id through an X-macro over ops.def, so an
 * op added to the table without a kernel here does not compile.  The
 * elementwise ops and the reductions compute with their formulas in
 * src/ir/scalar.h, shared with the tile executor; their kernels here are
 * made from its rows.
 */
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "scalar.h"

/* ---- iteration over an output with strided operands ------------------ */

/* Strides (in elements) with which operand x is read along each axis of
 * out when x is broadcast to out's shape: 0 where x is stretched. */
static void
bcast_strides(const Tensor *x, const Tensor *out, int64_t *st)
{
	int64_t s = 1;

	for (int k = out->rank - 1; k >= 0; k--) {
		int kx = x->rank - out->rank + k;

		if (kx < 0) {
			st[k] = 0;
		} else {
			st[k] = x->dim[kx] == 1 ? 0 : s;
			s *= x->dim[kx];
		}
	}
}

/* Steps the multi-index idx over shape dim (rank r), moving the offsets of
 * up to two operands by their strides. */
static void
step(int r, const int64_t *dim, int64_t *idx, const int64_t *sa, int64_t *ia,
    const int64_t *sb, int64_t *ib)
{
	for (int k = r - 1; k >= 0; k--) {
		idx[k]++;
		*ia += sa[k];
		*ib += sb[k];
		if (idx[k] < dim[k])
			return;
		*ia -= sa[k] * dim[k];
		*ib -= sb[k] * dim[k];
		idx[k] = 0;
	}
}

/* ---- elementwise ----------------------------------------------------- */

/* Integer and bool operands compute with scalar.h's integer formulas on
 * exact int64 values (exec_geti) and store with exec_seti, which keeps an
 * i32's low 32 bits: the wrapping of DESIGN §12.  Whether the integer
 * path runs is the operands' type, not the result's (a compare of ints
 * gives bools). */
static bool
int_operands(const Tensor *a)
{
	return !ir_dtype_is_float(a->dt);
}

static void
unary(const Node *n, const Tensor *a, Tensor *o, double (*f)(double))
{
	if (int_operands(a)) {
		for (int64_t i = 0; i < o->numel; i++)
			exec_seti(o, i, ir_scalar_unary_i64(n->op, exec_geti(a, i)));
		return;
	}
	for (int64_t i = 0; i < o->numel; i++)
		exec_set(o, i, f(exec_get(a, i)));
}

static int
binary(const Node *n, const Tensor *a, const Tensor *b, Tensor *o,
    double (*f)(double, double), char *err)
{
	int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK], idx[IR_MAX_RANK] = {0}, ia = 0, ib = 0;

	bcast_strides(a, o, sa);
	bcast_strides(b, o, sb);
	if (int_operands(a)) {
		for (int64_t i = 0; i < o->numel; i++) {
			int64_t x = exec_geti(a, ia), y = exec_geti(b, ib);

			if (ir_scalar_int_div_by_zero(n->op, y)) {
				char at[IR_TYPE_STR];

				snprintf(err, IR_ERR_MAX, "integer division by zero in '%s' "
				    "(element %s of the result)", ir_ops[n->op].name,
				    exec_index_str(o, i, at));
				return -1;
			}
			exec_seti(o, i, ir_scalar_binary_i64(n->op, x, y));
			step(o->rank, o->dim, idx, sa, &ia, sb, &ib);
		}
		return 0;
	}
	for (int64_t i = 0; i < o->numel; i++) {
		exec_set(o, i, f(exec_get(a, ia), exec_get(b, ib)));
		step(o->rank, o->dim, idx, sa, &ia, sb, &ib);
	}
	return 0;
}

/* One kernel per unary and binary op, its formula scalar.h's: a row
 * there is all an elementwise op needs here. */
#define UNARY(ID, formula)                                                     \
	static double f_##ID(double x) { return ir_scalar_unary(OP_##ID, x); } \
	static int kern_##ID(const Node *n, const Tensor *const *in,           \
	    Tensor *o, char *err)                                              \
	{                                                                      \
		(void)err;                                                     \
		unary(n, in[0], o, f_##ID);                                    \
		return 0;                                                      \
	}
#define BINARY(ID, formula)                                                    \
	static double f_##ID(double x, double y)                               \
	{                                                                      \
		return ir_scalar_binary(OP_##ID, x, y);                        \
	}                                                                      \
	static int kern_##ID(const Node *n, const Tensor *const *in,           \
	    Tensor *o, char *err)                                              \
	{                                                                      \
		return binary(n, in[0], in[1], o, f_##ID, err);                \
	}

IR_SCALAR_UNARY(UNARY)
IR_SCALAR_BINARY(BINARY)
#undef UNARY
#undef BINARY

/* cast (DESIGN §12): exec_set's store is cast's rule from a float (to an
 * integer: truncated toward zero and saturated, NaN to 0; to bool: x !=
 * 0, NaN true; to f32: rounded once); from an integer or bool the value
 * goes exactly (exec_seti rounds once into a float and wraps into i32). */
static int
kern_CAST(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	const Tensor *a = in[0];

	(void)n, (void)err;
	for (int64_t i = 0; i < o->numel; i++) {
		if (ir_dtype_is_float(a->dt))
			exec_set(o, i, exec_get(a, i));
		else
			exec_seti(o, i, exec_geti(a, i));
	}
	return 0;
}

/* where(cond, a, b): the three broadcast to the result; a and b share an
 * element type, moved exactly (as int64 for integers). */
static int
kern_WHERE(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	const Tensor *c = in[0], *a = in[1], *b = in[2];
	int64_t sc[IR_MAX_RANK], sa[IR_MAX_RANK], sb[IR_MAX_RANK], zero[IR_MAX_RANK] = {0};
	int64_t idx[IR_MAX_RANK] = {0}, idx2[IR_MAX_RANK] = {0}, ic = 0, ia = 0, ib = 0, dummy = 0;
	bool flt = ir_dtype_is_float(a->dt);

	(void)n, (void)err;
	bcast_strides(c, o, sc);
	bcast_strides(a, o, sa);
	bcast_strides(b, o, sb);
	for (int64_t i = 0; i < o->numel; i++) {
		const Tensor *t = exec_geti(c, ic) ? a : b;
		int64_t j = t == a ? ia : ib;

		if (flt)
			exec_set(o, i, exec_get(t, j));
		else
			exec_seti(o, i, exec_geti(t, j));
		/* two steppers over the same index: (a, b), then (c, -) */
		step(o->rank, o->dim, idx, sa, &ia, sb, &ib);
		step(o->rank, o->dim, idx2, sc, &ic, zero, &dummy);
	}
	return 0;
}

/* ---- sources --------------------------------------------------------- */

/* The caller fills sources in; exec_interp never calls these. */
static int
kern_INPUT(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	(void)in, (void)o, (void)err;
	AICM_BUG("source '%%%s' has no kernel", n->name);
}
#define kern_CONST kern_INPUT

/* exec_interp refuses a tiled node before it would get here. */
static int
kern_TILED(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	(void)in, (void)o, (void)err;
	AICM_BUG("tiled '%%%s' reached the reference kernels", n->name);
}

/* ---- reductions ------------------------------------------------------ */

/* Strides (in elements of out, which has the kept dims of a in order)
 * with which a's multi-index moves through out: 0 along the reduced
 * axes (mask), whether or not they are kept as 1s. */
static void
reduced_strides(const Tensor *a, const bool *mask, int64_t *st)
{
	int64_t s = 1;

	for (int k = a->rank - 1; k >= 0; k--) {
		st[k] = mask[k] ? 0 : s;
		if (!mask[k])
			s *= a->dim[k];
	}
}

/* out[j] reduces the elements of a that map to j (every reduced axis
 * walked) by op's formula from its neutral element, in a's order, so that
 * each result combines its elements first to last (mean: a sum, divided
 * once by the count). */
static inline void
reduce(const Node *n, const Tensor *a, Tensor *out, OpId op)
{
	bool mask[IR_MAX_RANK];
	int64_t st[IR_MAX_RANK], zero[IR_MAX_RANK] = {0}, idx[IR_MAX_RANK] = {0};
	int64_t io = 0, dummy = 0, cnt = 1;
	double *acc = xmalloc(sizeof(double) * (size_t)out->numel);

	ir_reduce_mask(n, a->rank, mask);
	reduced_strides(a, mask, st);
	for (int k = 0; k < a->rank; k++)
		if (mask[k])
			cnt *= a->dim[k];
	if (!ir_dtype_is_float(a->dt)) {
		/* integers: exact and wrapping, scalar.h's integer formulas */
		int64_t *iacc = xmalloc(sizeof(int64_t) * (size_t)out->numel);

		for (int64_t j = 0; j < out->numel; j++)
			iacc[j] = ir_scalar_neutral_i64(op, a->dt);
		for (int64_t i = 0; i < a->numel; i++) {
			iacc[io] = ir_scalar_combine_i64(op, iacc[io], exec_geti(a, i));
			step(a->rank, a->dim, idx, st, &io, zero, &dummy);
		}
		for (int64_t j = 0; j < out->numel; j++)
			exec_seti(out, j, iacc[j]);
		free(iacc);
		free(acc);
		return;
	}
	for (int64_t j = 0; j < out->numel; j++)
		acc[j] = ir_scalar_neutral(op, a->dt);
	for (int64_t i = 0; i < a->numel; i++) {
		acc[io] = ir_scalar_combine(op, acc[io], exec_get(a, i));
		step(a->rank, a->dim, idx, st, &io, zero, &dummy);
	}
	for (int64_t j = 0; j < out->numel; j++)
		exec_set(out, j, op == OP_MEAN ? acc[j] / (double)cnt : acc[j]);
	free(acc);
}

#define REDUCE(ID, step, neutral)                                              \
	static int kern_##ID(const Node *n, const Tensor *const *in,           \
	    Tensor *o, char *err)                                              \
	{                                                                      \
		(void)err;                                                     \
		reduce(n, in[0], o, OP_##ID);                                  \
		return 0;                                                      \
	}
IR_SCALAR_REDUCE(REDUCE)
#undef REDUCE

/* ---- argmax, argmin -------------------------------------------------- */

/* a viewed as (outer, len, inner) around the axis; out[o * inner + i] is
 * the index along the axis of the winner of a[o, :, i] by scalar.h's rule
 * (ir_scalar_arg_wins).  Integers compare exactly, as integers. */
static int
argreduce(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	const Tensor *a = in[0];
	int64_t ax = (n->at.set & AB(AXIS)) ? n->at.axis : 0, outer = 1, len, inner = 1;
	bool last = n->at.last, isint = ir_dtype_is_int(a->dt) || a->dt == DT_BOOL;

	(void)err;
	if (ax < 0)
		ax += a->rank;
	len = a->dim[ax];
	for (int k = 0; k < ax; k++)
		outer *= a->dim[k];
	for (int k = (int)ax + 1; k < a->rank; k++)
		inner *= a->dim[k];
	for (int64_t p = 0; p < outer; p++)
		for (int64_t i = 0; i < inner; i++) {
			int64_t base = p * len * inner + i, win = 0;

			for (int64_t r = 1; r < len; r++) {
				int64_t e = base + r * inner, w = base + win * inner;
				bool take;

				if (isint) {
					int64_t v = exec_geti(a, e), b = exec_geti(a, w);

					take = v == b ? last : n->op == OP_ARGMAX ? v > b : v < b;
				} else {
					take = ir_scalar_arg_wins(n->op, exec_get(a, e), exec_get(a, w),
					    last);
				}
				if (take)
					win = r;
			}
			exec_seti(o, p * inner + i, win);
		}
	return 0;
}
#define kern_ARGMAX argreduce
#define kern_ARGMIN argreduce

/* ---- contraction ----------------------------------------------------- */

/* numpy's matmul (DESIGN §12): a 1-D a is (1, K), a 1-D b (K, 1), and the
 * batch dims broadcast; the result (whose shape the shape rule made) is
 * walked batch by batch, each operand's batch offset from its broadcast
 * strides.  Each dot in f64.  A row of the result is accumulated at once
 * (for each p, a[i, p] times row p of b), so that b is read along its
 * rows; every element still sums its products in the order p = 0, 1, ...,
 * K-1 and is rounded once. */
static int
kern_MATMUL(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	const Tensor *a = in[0], *b = in[1];
	int ra = a->rank, rb = b->rank, nbd = o->rank - (ra > 1) - (rb > 1);
	int64_t m = ra == 1 ? 1 : a->dim[ra - 2], k = a->dim[ra - 1];
	int64_t nn = rb == 1 ? 1 : b->dim[rb - 1], nb = 1;
	int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK], idx[IR_MAX_RANK] = {0}, za = 0, zb = 0;
	bool isint = !ir_dtype_is_float(a->dt);
	double *acc = xmalloc(sizeof(double) * (size_t)nn);

	(void)n, (void)err;
	/* batch strides, in whole matrices, aligned from the right */
	{
		int64_t s1 = 1, s2 = 1;

		for (int d = nbd - 1; d >= 0; d--) {
			int ia = ra - 2 - nbd + d, ib = rb - 2 - nbd + d;
			int64_t da = ia >= 0 ? a->dim[ia] : 1, db = ib >= 0 ? b->dim[ib] : 1;

			sa[d] = da == 1 ? 0 : s1;
			sb[d] = db == 1 ? 0 : s2;
			s1 *= da;
			s2 *= db;
			nb *= o->dim[d];
		}
	}
	for (int64_t z = 0; z < nb; z++) {
		int64_t ao = za * m * k, bo = zb * k * nn, oo = z * m * nn;

		for (int64_t i = 0; isint && i < m; i++)
			for (int64_t j = 0; j < nn; j++) {
				/* integers: a wrapping sum of wrapping products in int64
				 * (an i32's is its low 32 bits) */
				int64_t iacc = 0;

				for (int64_t p = 0; p < k; p++)
					iacc = ir_scalar_binary_i64(OP_ADD, iacc,
					    ir_scalar_binary_i64(OP_MUL, exec_geti(a, ao + i * k + p),
					    exec_geti(b, bo + p * nn + j)));
				exec_seti(o, oo + i * nn + j, iacc);
			}
		for (int64_t i = 0; !isint && i < m; i++) {
			for (int64_t j = 0; j < nn; j++)
				acc[j] = 0;
			for (int64_t p = 0; p < k; p++) {
				double x = exec_get(a, ao + i * k + p);

				if (b->dt == DT_F64) {
					const double *row = (const double *)b->data + bo + p * nn;

					for (int64_t j = 0; j < nn; j++)
						acc[j] += x * row[j];
				} else if (b->dt == DT_F32) {
					const float *row = (const float *)b->data + bo + p * nn;

					for (int64_t j = 0; j < nn; j++)
						acc[j] += x * (double)row[j];
				} else {
					for (int64_t j = 0; j < nn; j++)
						acc[j] += x * exec_get(b, bo + p * nn + j);
				}
			}
			for (int64_t j = 0; j < nn; j++)
				exec_set(o, oo + i * nn + j, acc[j]);
		}
		step(nbd, o->dim, idx, sa, &za, sb, &zb);
	}
	free(acc);
	return 0;
}

/* ---- layout ---------------------------------------------------------- */

/* out[i0, .., ir] = a[idx permuted]: out axis i walks a's axis perm[i]. */
static int
kern_TRANSPOSE(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	const Tensor *a = in[0];
	int r = a->rank, perm[IR_MAX_RANK];
	int64_t sa[IR_MAX_RANK], st[IR_MAX_RANK], zero[IR_MAX_RANK] = {0};
	int64_t idx[IR_MAX_RANK] = {0}, ia = 0, dummy = 0;
	size_t es = ir_dtype_size(a->dt);

	(void)err;
	for (int k = 0; k < r; k++)
		perm[k] = k;
	if (n->at.set & AB(PERM)) {
		const int64_t *p = ir_attr_ints(&n->at, ATTR_PERM).v;

		for (int k = 0; k < r; k++)
			perm[k] = (int)(p[k] < 0 ? p[k] + r : p[k]);
	} else if (r >= 2) {
		perm[r - 2] = r - 1;
		perm[r - 1] = r - 2;
	}
	if (r > 0)
		sa[r - 1] = 1;
	for (int k = r - 2; k >= 0; k--)
		sa[k] = sa[k + 1] * a->dim[k + 1];
	for (int k = 0; k < r; k++)
		st[k] = sa[perm[k]];
	/* a copy of whole elements, so every type moves exactly */
	for (int64_t i = 0; i < o->numel; i++) {
		memcpy((char *)o->data + (size_t)i * es, (const char *)a->data + (size_t)ia * es,
		    es);
		step(r, o->dim, idx, st, &ia, zero, &dummy);
	}
	return 0;
}

/* C order makes a reshape a copy of the elements as they are. */
static int
kern_RESHAPE(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	(void)n, (void)err;
	memcpy(o->data, in[0]->data, exec_tensor_bytes(in[0]));
	return 0;
}

/* The kernels of the copy and windowed ops live in their own files. */
#define kern_CONCAT exec_kern_CONCAT
#define kern_SLICE exec_kern_SLICE
#define kern_PAD exec_kern_PAD
#define kern_GATHER exec_kern_GATHER
#define kern_EXPAND exec_kern_EXPAND
#define kern_CONV2D exec_kern_CONV2D
#define kern_MAX_POOL2D exec_kern_MAX_POOL2D
#define kern_AVG_POOL2D exec_kern_AVG_POOL2D

const ExecKernel exec_ref_kernels[OP_COUNT] = {
#define OP(id, ...) [OP_##id] = kern_##id,
#include "ops.def"
#undef OP
};

/* ---- the interpreter ------------------------------------------------- */

int
exec_interp(const Graph *g, Tensor *vals, Diag *d)
{
	char s[IR_TYPE_STR], err[IR_ERR_MAX];

	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		Loc at;

		if (n->type.rank < 0) {
			diag_error(d, n->loc, "'%%%s' has no type; run shape-infer first", n->name);
			return -1;
		}
		if (n->op == OP_TILED) {
			diag_error(d, n->loc, "'%%%s' is a tiled kernel; the reference interpreter "
			    "runs graph IR only", n->name);
			return -1;
		}
		if (ir_ops[n->op].cls == OC_SOURCE) {
			if (!exec_tensor_has_type(&vals[i], &n->type)) {
				diag_error(d, n->loc, "'%%%s' has no value of type %s %s", n->name,
				    ir_shape_str(&n->type, s), ir_dtype_name(n->type.dt));
				return -1;
			}
			continue;
		}
		/* the kernels trust the shapes; make sure they hold */
		if (ir_check_type(g, i, err, &at) != 0) {
			diag_error(d, at, "%s", err);
			return -1;
		}
		if (!exec_tensor_has_type(&vals[i], &n->type)) {
			exec_tensor_free(&vals[i]);
			if (exec_tensor_alloc(&vals[i], &n->type, 0) != 0) {
				diag_error(d, n->loc, "'%%%s' %s %s is too large to allocate", n->name,
				    ir_shape_str(&n->type, s), ir_dtype_name(n->type.dt));
				return -1;
			}
		}
		{
			const Tensor *inl[4], **in = n->nin <= 4 ? inl :
			    xmalloc(sizeof *in * (size_t)n->nin);
			int rc;

			for (int j = 0; j < n->nin; j++)
				in[j] = &vals[n->in[j]];
			rc = exec_ref_kernels[n->op](n, in, &vals[i], err);
			if (in != inl)
				free(in);
			if (rc != 0) {
				diag_error(d, n->oploc.line ? n->oploc : n->loc, "'%%%s': %s", n->name,
				    err);
				return -1;
			}
		}
	}
	return 0;
}
