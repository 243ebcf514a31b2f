/*
 * shape.c: the shape rules of the op table (DESIGN §3).
 *
 * One function computes an op's result type from its operands' types and
 * its attributes; shape-infer uses it to fill types in and the verifier to
 * check the types a pass or a user wrote.  Broadcasting is numpy's: align
 * from the right, a 1 or a missing dimension stretches.
 */
#include <stdio.h>
#include <string.h>

#include "ir.h"

static Loc
place(const Node *n, Loc want)
{
	if (want.line > 0)
		return want;
	return n->oploc.line > 0 ? n->oploc : n->loc;
}

int
ir_reduce_mask(const Node *n, int rank, bool *mask)
{
	int cnt = 0;

	for (int k = 0; k < rank; k++)
		mask[k] = !(n->at.set & AB(AXIS));
	if (!(n->at.set & AB(AXIS)))
		return rank;
	if (ir_axis_is_tuple(&n->at)) {
		IntTuple t = ir_attr_ints(&n->at, ATTR_AXIS);

		for (int i = 0; i < t.n; i++) {
			int64_t ax = t.v[i] < 0 ? t.v[i] + rank : t.v[i];

			if (ax >= 0 && ax < rank)
				mask[ax] = true;
		}
	} else {
		int64_t ax = n->at.axis < 0 ? n->at.axis + rank : n->at.axis;

		if (ax >= 0 && ax < rank)
			mask[ax] = true;
	}
	for (int k = 0; k < rank; k++)
		cnt += mask[k];
	return cnt;
}

int
ir_reduce_axis(const Node *n, int rank)
{
	bool mask[IR_MAX_RANK];
	int cnt = ir_reduce_mask(n, rank, mask);

	if (!(n->at.set & AB(AXIS)) || cnt == rank)
		return cnt == 1 && rank == 1 && (n->at.set & AB(AXIS)) ? 0 : -1;
	if (cnt != 1)
		return -2;
	for (int k = 0; k < rank; k++)
		if (mask[k])
			return k;
	return -2;
}

/* A result whose element count overflows a 64-bit count would print as a
 * type that does not parse back (the parser refuses it when written), and
 * would give later passes a count of -1: refuse it here too. */
static int
too_big(const Node *n, const Type *a, const Type *b, const Type *out, char *err, Loc *where)
{
	char sa[IR_TYPE_STR], sb[IR_TYPE_STR], so[IR_TYPE_STR];

	if (ir_type_numel(out) >= 0)
		return 0;
	snprintf(err, IR_ERR_MAX,
	    "'%s' of %s and %s gives %s, which has more elements than a 64-bit count holds",
	    ir_ops[n->op].name, ir_shape_str(a, sa), ir_shape_str(b, sb), ir_shape_str(out, so));
	*where = place(n, n->oploc);
	return -1;
}

bool
ir_reduces_last_axis(const Graph *g, int i)
{
	const Node *n = &g->nodes[i];
	int rank = g->nodes[n->in[0]].type.rank, ax = ir_reduce_axis(n, rank);

	return rank >= 1 && (ax == rank - 1 || (ax < 0 && rank == 1));
}

bool
ir_is_row_stat(const Type *t, const Type *iter)
{
	if (t->rank != iter->rank || iter->rank < 1 || iter->dim[iter->rank - 1] == 1 ||
	    t->dim[t->rank - 1] != 1)
		return false;
	for (int k = 0; k + 1 < t->rank; k++)
		if (t->dim[k] != iter->dim[k])
			return false;
	return true;
}

static int
broadcast(const Node *n, const Type *a, const Type *b, Type *out, char *err, Loc *where)
{
	char sa[IR_TYPE_STR], sb[IR_TYPE_STR];
	int r = a->rank > b->rank ? a->rank : b->rank;

	out->rank = r;
	out->dt = a->dt;
	for (int i = 0; i < r; i++) {
		int ia = a->rank - r + i, ib = b->rank - r + i;
		int64_t da = ia >= 0 ? a->dim[ia] : 1, db = ib >= 0 ? b->dim[ib] : 1;

		if (da != db && da != 1 && db != 1) {
			snprintf(err, IR_ERR_MAX, "'%s' cannot broadcast %s with %s",
			    ir_ops[n->op].name, ir_shape_str(a, sa), ir_shape_str(b, sb));
			*where = place(n, n->inloc[1]);
			return -1;
		}
		out->dim[i] = da == 1 ? db : da;
	}
	return too_big(n, a, b, out, err, where);
}

/* The axes of axis=: each in range, none twice (a tuple is not empty: the
 * parser refuses '()'). */
static int
axes_ok(const Node *n, const Type *a, char *err, Loc *where)
{
	char sa[IR_TYPE_STR];
	IntTuple t = ir_attr_ints(&n->at, ATTR_AXIS);
	int64_t one = n->at.axis;
	const int64_t *v = ir_axis_is_tuple(&n->at) ? t.v : &one;
	int cnt = ir_axis_is_tuple(&n->at) ? t.n : 1;
	int seen[IR_MAX_RANK] = {0};

	if (!(n->at.set & AB(AXIS)))
		return 0;
	*where = place(n, ir_attr_loc(n, ATTR_AXIS));
	for (int i = 0; i < cnt; i++) {
		int64_t ax = v[i] < 0 ? v[i] + a->rank : v[i];

		if (v[i] < -a->rank || v[i] >= a->rank) {
			snprintf(err, IR_ERR_MAX, "'%s' axis %lld is out of range for %s (rank %d)",
			    ir_ops[n->op].name, (long long)v[i], ir_shape_str(a, sa), a->rank);
			return -1;
		}
		if (seen[ax]++) {
			snprintf(err, IR_ERR_MAX, "'%s' axis %lld is given twice", ir_ops[n->op].name,
			    (long long)v[i]);
			return -1;
		}
	}
	return 0;
}

static int
reduce(const Node *n, const Type *a, Type *out, char *err, Loc *where)
{
	bool keep = n->at.keepdims, mask[IR_MAX_RANK];

	if (axes_ok(n, a, err, where) != 0)
		return -1;
	ir_reduce_mask(n, a->rank, mask);
	out->dt = a->dt;
	out->rank = 0;
	for (int i = 0; i < a->rank; i++) {
		if (!mask[i])
			out->dim[out->rank++] = a->dim[i];
		else if (keep)
			out->dim[out->rank++] = 1;
	}
	return 0;
}

/* argmax and argmin: one axis, 0 when not given (ONNX's default). */
static int
argreduce(const Node *n, const Type *a, Type *out, char *err, Loc *where)
{
	char sa[IR_TYPE_STR];
	int64_t ax = (n->at.set & AB(AXIS)) ? n->at.axis : 0;

	if (ir_axis_is_tuple(&n->at)) {
		snprintf(err, IR_ERR_MAX, "'%s' takes one axis, axis=<int>, not a tuple",
		    ir_ops[n->op].name);
		*where = place(n, ir_attr_loc(n, ATTR_AXIS));
		return -1;
	}
	if (a->rank == 0 || ax < -a->rank || ax >= a->rank) {
		snprintf(err, IR_ERR_MAX, "'%s' axis %lld is out of range for %s (rank %d)",
		    ir_ops[n->op].name, (long long)ax, ir_shape_str(a, sa), a->rank);
		*where = place(n, (n->at.set & AB(AXIS)) ? ir_attr_loc(n, ATTR_AXIS) : n->oploc);
		return -1;
	}
	if (ax < 0)
		ax += a->rank;
	out->rank = 0;
	for (int i = 0; i < a->rank; i++) {
		if (i != ax)
			out->dim[out->rank++] = a->dim[i];
		else if (n->at.keepdims)
			out->dim[out->rank++] = 1;
	}
	return 0;
}

/* where(cond, a, b): the broadcast of the three. */
static int
where3(const Node *n, const Type *c, const Type *a, const Type *b, Type *out, char *err,
    Loc *where)
{
	char sc[IR_TYPE_STR], sa[IR_TYPE_STR], sb[IR_TYPE_STR];
	int r = c->rank;

	if (a->rank > r)
		r = a->rank;
	if (b->rank > r)
		r = b->rank;
	out->rank = r;
	for (int i = 0; i < r; i++) {
		const Type *t[3] = {c, a, b};
		int64_t d = 1;

		for (int k = 0; k < 3; k++) {
			int ik = t[k]->rank - r + i;
			int64_t dk = ik >= 0 ? t[k]->dim[ik] : 1;

			if (dk != 1 && d != 1 && dk != d) {
				snprintf(err, IR_ERR_MAX, "'where' cannot broadcast %s, %s and %s",
				    ir_shape_str(c, sc), ir_shape_str(a, sa), ir_shape_str(b, sb));
				*where = place(n, n->inloc[k]);
				return -1;
			}
			if (dk != 1)
				d = dk;
		}
		out->dim[i] = d;
	}
	return too_big(n, a, b, out, err, where);
}

/* numpy's matmul: the last two dims multiply as (M, K) x (K, N); a 1-D a is
 * promoted to (1, K) and a 1-D b to (K, 1), the added dim removed from the
 * result; the batch dims (all before the last two) broadcast as an
 * elementwise op's do.  The result's rank is at most the larger operand's,
 * so IR_MAX_RANK holds it. */
static int
matmul(const Node *n, const Type *a, const Type *b, Type *out, char *err, Loc *where)
{
	char sa[IR_TYPE_STR], sb[IR_TYPE_STR];
	int ra = a->rank, rb = b->rank, ba, bb, r;
	int64_t ka, kb, m, nn;

	if (ra == 0 || rb == 0) {
		snprintf(err, IR_ERR_MAX, "'matmul' takes operands of rank 1 or more, not %s x %s",
		    ir_shape_str(a, sa), ir_shape_str(b, sb));
		*where = place(n, n->inloc[ra == 0 ? 0 : 1]);
		return -1;
	}
	ka = a->dim[ra - 1];
	kb = rb == 1 ? b->dim[0] : b->dim[rb - 2];
	if (ka != kb) {
		snprintf(err, IR_ERR_MAX,
		    "'matmul' cannot multiply %s by %s: inner dimensions %lld and %lld differ",
		    ir_shape_str(a, sa), ir_shape_str(b, sb), (long long)ka, (long long)kb);
		*where = place(n, n->inloc[1]);
		return -1;
	}
	m = ra == 1 ? 1 : a->dim[ra - 2];
	nn = rb == 1 ? 1 : b->dim[rb - 1];
	ba = ra > 2 ? ra - 2 : 0;     /* batch ranks */
	bb = rb > 2 ? rb - 2 : 0;
	r = ba > bb ? ba : bb;
	out->rank = 0;
	out->dt = a->dt;
	for (int i = 0; i < r; i++) {
		int ia = ba - r + i, ib = bb - r + i;
		int64_t da = ia >= 0 ? a->dim[ia] : 1, db = ib >= 0 ? b->dim[ib] : 1;

		if (da != db && da != 1 && db != 1) {
			snprintf(err, IR_ERR_MAX, "'matmul' batch dimensions differ: %s x %s",
			    ir_shape_str(a, sa), ir_shape_str(b, sb));
			*where = place(n, n->inloc[1]);
			return -1;
		}
		out->dim[out->rank++] = da == 1 ? db : da;
	}
	if (ra > 1)
		out->dim[out->rank++] = m;
	if (rb > 1)
		out->dim[out->rank++] = nn;
	return too_big(n, a, b, out, err, where);
}

static void
ints_str(const int64_t *v, int n, char *buf)
{
	Type t = {.rank = n};

	memcpy(t.dim, v, sizeof(int64_t) * (size_t)n);
	ir_shape_str(&t, buf);
}

static int
transpose(const Node *n, const Type *a, Type *out, char *err, Loc *where)
{
	char sa[IR_TYPE_STR], sp[IR_TYPE_STR];
	int perm[IR_MAX_RANK], seen[IR_MAX_RANK] = {0};

	if (!(n->at.set & AB(PERM))) {
		for (int i = 0; i < a->rank; i++)
			perm[i] = i;
		if (a->rank >= 2) {
			perm[a->rank - 2] = a->rank - 1;
			perm[a->rank - 1] = a->rank - 2;
		}
	} else {
		IntTuple pt = ir_attr_ints(&n->at, ATTR_PERM);
		bool ok = pt.n == a->rank;

		for (int i = 0; ok && i < a->rank; i++) {
			int64_t p = pt.v[i] < 0 ? pt.v[i] + a->rank : pt.v[i];

			if (p < 0 || p >= a->rank || seen[p]++)
				ok = false;
			else
				perm[i] = (int)p;
		}
		if (!ok) {
			ints_str(pt.v, pt.n, sp);
			snprintf(err, IR_ERR_MAX,
			    "'transpose' perm=%s is not a permutation of the %d axes of %s",
			    sp, a->rank, ir_shape_str(a, sa));
			*where = place(n, ir_attr_loc(n, ATTR_PERM));
			return -1;
		}
	}
	out->rank = a->rank;
	out->dt = a->dt;
	for (int i = 0; i < a->rank; i++)
		out->dim[i] = a->dim[perm[i]];
	return 0;
}

static int
reshape(const Node *n, const Type *a, Type *out, char *err, Loc *where)
{
	char sa[IR_TYPE_STR], sp[IR_TYPE_STR];
	int64_t known = 1, total = ir_type_numel(a);
	int infer = -1;
	IntTuple st = ir_attr_ints(&n->at, ATTR_SHAPE);

	*where = place(n, ir_attr_loc(n, ATTR_SHAPE));
	ints_str(st.v, st.n, sp);
	out->rank = st.n;
	out->dt = a->dt;
	for (int i = 0; i < st.n; i++) {
		int64_t d = st.v[i];

		if (d == -1 && infer < 0) {
			infer = i;
			continue;
		}
		if (d <= 0) {
			snprintf(err, IR_ERR_MAX,
			    "'reshape' shape=%s: a dimension must be positive, or one -1 to infer",
			    sp);
			return -1;
		}
		if (__builtin_mul_overflow(known, d, &known) || known > total)
			goto bad;
		out->dim[i] = d;
	}
	if (infer >= 0) {
		if (known == 0 || total % known)
			goto bad;
		out->dim[infer] = total / known;
	} else if (known != total) {
		goto bad;
	}
	return 0;
bad:
	snprintf(err, IR_ERR_MAX, "'reshape' cannot make %s of %s: %lld elements",
	    sp, ir_shape_str(a, sa), (long long)total);
	return -1;
}

/* The element types of the operands against the op table's type set:
 * the data operands share one type (where's condition is bool, gather's
 * indices i32 or i64, conv2d's operands one float type). */
static int
operand_types(const Graph *g, const Node *n, char *err, Loc *where)
{
	const OpInfo *op = &ir_ops[n->op];
	int first = n->op == OP_WHERE ? 1 : 0, last = n->op == OP_GATHER ? 0 : n->nin - 1;
	DType dt;

	if (n->nin == 0)
		return 0;
	if (n->op == OP_WHERE && g->nodes[n->in[0]].type.dt != DT_BOOL) {
		snprintf(err, IR_ERR_MAX, "'where' condition is %s; it must be bool",
		    ir_dtype_name(g->nodes[n->in[0]].type.dt));
		*where = place(n, n->inloc[0]);
		return -1;
	}
	if (n->op == OP_GATHER && !ir_dtype_is_int(g->nodes[n->in[1]].type.dt)) {
		snprintf(err, IR_ERR_MAX, "'gather' indices are %s; they must be i32 or i64",
		    ir_dtype_name(g->nodes[n->in[1]].type.dt));
		*where = place(n, n->inloc[1]);
		return -1;
	}
	dt = g->nodes[n->in[first]].type.dt;
	for (int j = first + 1; j <= last; j++) {
		DType dj = g->nodes[n->in[j]].type.dt;

		if (dj != dt) {
			snprintf(err, IR_ERR_MAX, "'%s' operands have different element types, %s and "
			    "%s (no implicit promotion)", op->name, ir_dtype_name(dt),
			    ir_dtype_name(dj));
			*where = place(n, n->inloc[j]);
			return -1;
		}
	}
	if (!ir_types_take(op->types, dt)) {
		static const char *const want[] = {
			[TY_ANY] = "any type", [TY_NUM] = "numbers (f32, f64, i32 or i64)",
			[TY_FLOAT] = "floats (f32 or f64)", [TY_BOOL] = "bool",
		};

		snprintf(err, IR_ERR_MAX, "'%s' takes %s, not %s", op->name, want[op->types],
		    ir_dtype_name(dt));
		*where = place(n, n->inloc[first]);
		return -1;
	}
	return 0;
}

int
ir_infer_type(const Graph *g, int i, Type *out, char *err, Loc *where)
{
	const Node *n = &g->nodes[i];
	const Type *a = n->nin > 0 ? &g->nodes[n->in[0]].type : NULL;
	const Type *b = n->nin > 1 ? &g->nodes[n->in[1]].type : NULL;
	int rc = 0;

	memset(out, 0, sizeof *out);
	if (operand_types(g, n, err, where) != 0)
		return -1;
	switch (ir_ops[n->op].shape) {
	case SR_SOURCE:
		*out = n->type;
		return 0;
	case SR_SAME:
		*out = *a;
		break;
	case SR_BROADCAST:
		rc = broadcast(n, a, b, out, err, where);
		break;
	case SR_WHERE:
		rc = where3(n, a, b, &g->nodes[n->in[2]].type, out, err, where);
		out->dt = b->dt;
		break;
	case SR_REDUCE:
		rc = reduce(n, a, out, err, where);
		break;
	case SR_ARGREDUCE:
		rc = argreduce(n, a, out, err, where);
		break;
	case SR_MATMUL:
		rc = matmul(n, a, b, out, err, where);
		break;
	case SR_TRANSPOSE:
		rc = transpose(n, a, out, err, where);
		break;
	case SR_RESHAPE:
		rc = reshape(n, a, out, err, where);
		break;
	case SR_CONCAT:
	case SR_SLICE:
	case SR_PAD:
	case SR_GATHER:
	case SR_EXPAND:
		rc = ir_shape_copy(g, n, out, err, where);
		break;
	case SR_CONV:
	case SR_POOL:
		rc = ir_shape_window(g, n, out, err, where);
		break;
	}
	if (rc != 0)
		return -1;
	switch (ir_ops[n->op].result) {
	case RT_SAME:
	case RT_SOURCE:
		if (n->op != OP_WHERE)
			out->dt = a->dt;
		break;
	case RT_BOOL:
		out->dt = DT_BOOL;
		break;
	case RT_I64:
		out->dt = DT_I64;
		break;
	case RT_TO:
		out->dt = n->at.to;
		break;
	}
	return 0;
}

static void
operand_list(const Graph *g, const Node *n, char *buf, size_t len)
{
	char s[IR_TYPE_STR];
	size_t m = 0;

	buf[0] = '\0';
	for (int j = 0; j < n->nin && m < len; j++)
		m += (size_t)snprintf(buf + m, len - m, "%s%s",
		    j == 0 ? "" : j == n->nin - 1 ? " and " : ", ",
		    ir_shape_str(&g->nodes[n->in[j]].type, s));
}

int
ir_check_type(const Graph *g, int i, char *err, Loc *where)
{
	const Node *n = &g->nodes[i];
	char want[IR_TYPE_STR], have[IR_TYPE_STR], ops[4 * IR_TYPE_STR];
	Type t;

	if (ir_infer_type(g, i, &t, err, where) != 0)
		return -1;
	if (ir_type_eq(&t, &n->type))
		return 0;
	operand_list(g, n, ops, sizeof ops);
	if (t.dt != n->type.dt && t.rank == n->type.rank && !memcmp(t.dim, n->type.dim,
	    sizeof(int64_t) * (size_t)t.rank))
		snprintf(err, IR_ERR_MAX, ir_ops[n->op].result == RT_SAME ?
		    "'%s' result is written %s but its operands are %s" :
		    "'%s' result is written %s but the op gives %s",
		    ir_ops[n->op].name, ir_dtype_name(n->type.dt), ir_dtype_name(t.dt));
	else
		snprintf(err, IR_ERR_MAX,
		    "'%s' result type %s does not match %s, inferred from operand%s %s",
		    ir_ops[n->op].name, ir_shape_str(&n->type, have), ir_shape_str(&t, want),
		    n->nin == 1 ? "" : "s", ops);
	*where = place(n, n->typeloc);
	return -1;
}
