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
ir_reduce_axis(const Node *n, int rank)
{
	int64_t ax;

	if (!(n->at.set & AB(AXIS)))
		return -1;
	ax = n->at.axis < 0 ? n->at.axis + rank : n->at.axis;
	return (int)ax;
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

static int
reduce(const Node *n, const Type *a, Type *out, char *err, Loc *where)
{
	char sa[IR_TYPE_STR];
	bool keep = n->at.keepdims;
	int ax;

	if ((n->at.set & AB(AXIS)) && (n->at.axis < -a->rank || n->at.axis >= a->rank)) {
		snprintf(err, IR_ERR_MAX, "'%s' axis %lld is out of range for %s (rank %d)",
		    ir_ops[n->op].name, (long long)n->at.axis, ir_shape_str(a, sa), a->rank);
		*where = place(n, ir_attr_loc(n, ATTR_AXIS));
		return -1;
	}
	ax = ir_reduce_axis(n, a->rank);
	out->dt = a->dt;
	out->rank = 0;
	for (int i = 0; i < a->rank; i++) {
		bool reduced = ax < 0 || ax == i;

		if (!reduced)
			out->dim[out->rank++] = a->dim[i];
		else if (keep)
			out->dim[out->rank++] = 1;
	}
	return 0;
}

static int
matmul(const Node *n, const Type *a, const Type *b, Type *out, char *err, Loc *where)
{
	char sa[IR_TYPE_STR], sb[IR_TYPE_STR];
	int r = a->rank;

	if (!((a->rank == 2 && b->rank == 2) || (a->rank == 3 && b->rank == 3))) {
		snprintf(err, IR_ERR_MAX,
		    "'matmul' takes (M, K) x (K, N) or (B, M, K) x (B, K, N), not %s x %s",
		    ir_shape_str(a, sa), ir_shape_str(b, sb));
		*where = place(n, n->oploc);
		return -1;
	}
	if (a->dim[r - 1] != b->dim[r - 2]) {
		snprintf(err, IR_ERR_MAX,
		    "'matmul' cannot multiply %s by %s: inner dimensions %lld and %lld differ",
		    ir_shape_str(a, sa), ir_shape_str(b, sb), (long long)a->dim[r - 1],
		    (long long)b->dim[r - 2]);
		*where = place(n, n->inloc[1]);
		return -1;
	}
	if (r == 3 && a->dim[0] != b->dim[0]) {
		snprintf(err, IR_ERR_MAX,
		    "'matmul' batch dimensions differ: %s x %s", ir_shape_str(a, sa),
		    ir_shape_str(b, sb));
		*where = place(n, n->inloc[1]);
		return -1;
	}
	out->rank = r;
	out->dt = a->dt;
	if (r == 3)
		out->dim[0] = a->dim[0];
	out->dim[r - 2] = a->dim[r - 2];
	out->dim[r - 1] = b->dim[r - 1];
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
		bool ok = n->at.nperm == a->rank;

		for (int i = 0; ok && i < a->rank; i++) {
			int64_t p = n->at.perm[i] < 0 ? n->at.perm[i] + a->rank : n->at.perm[i];

			if (p < 0 || p >= a->rank || seen[p]++)
				ok = false;
			else
				perm[i] = (int)p;
		}
		if (!ok) {
			ints_str(n->at.perm, n->at.nperm, sp);
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

	*where = place(n, ir_attr_loc(n, ATTR_SHAPE));
	ints_str(n->at.shape, n->at.nshape, sp);
	out->rank = n->at.nshape;
	out->dt = a->dt;
	for (int i = 0; i < n->at.nshape; i++) {
		int64_t d = n->at.shape[i];

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

int
ir_infer_type(const Graph *g, int i, Type *out, char *err, Loc *where)
{
	const Node *n = &g->nodes[i];
	const Type *a = n->nin > 0 ? &g->nodes[n->in[0]].type : NULL;
	const Type *b = n->nin > 1 ? &g->nodes[n->in[1]].type : NULL;

	memset(out, 0, sizeof *out);
	if (b && a->dt != b->dt) {
		snprintf(err, IR_ERR_MAX,
		    "'%s' operands have different element types, %s and %s (no implicit promotion)",
		    ir_ops[n->op].name, ir_dtype_name(a->dt), ir_dtype_name(b->dt));
		*where = place(n, n->inloc[1]);
		return -1;
	}
	switch (ir_ops[n->op].shape) {
	case SR_SOURCE:
		*out = n->type;
		return 0;
	case SR_SAME:
		*out = *a;
		return 0;
	case SR_BROADCAST:
		return broadcast(n, a, b, out, err, where);
	case SR_REDUCE:
		return reduce(n, a, out, err, where);
	case SR_MATMUL:
		return matmul(n, a, b, out, err, where);
	case SR_TRANSPOSE:
		return transpose(n, a, out, err, where);
	case SR_RESHAPE:
		return reshape(n, a, out, err, where);
	}
	return 0;
}

static void
operand_list(const Graph *g, const Node *n, char *buf, size_t len)
{
	char s[IR_TYPE_STR];
	size_t m = 0;

	buf[0] = '\0';
	for (int j = 0; j < n->nin; j++)
		m += (size_t)snprintf(buf + m, len - m, "%s%s",
		    j == 0 ? "" : j == n->nin - 1 ? " and " : ", ",
		    ir_shape_str(&g->nodes[n->in[j]].type, s));
}

int
ir_check_type(const Graph *g, int i, char *err, Loc *where)
{
	const Node *n = &g->nodes[i];
	char want[IR_TYPE_STR], have[IR_TYPE_STR], ops[3 * IR_TYPE_STR];
	Type t;

	if (ir_infer_type(g, i, &t, err, where) != 0)
		return -1;
	if (ir_type_eq(&t, &n->type))
		return 0;
	operand_list(g, n, ops, sizeof ops);
	if (t.dt != n->type.dt && t.rank == n->type.rank && !memcmp(t.dim, n->type.dim,
	    sizeof(int64_t) * (size_t)t.rank))
		snprintf(err, IR_ERR_MAX, "'%s' result is written %s but its operands are %s",
		    ir_ops[n->op].name, ir_dtype_name(n->type.dt), ir_dtype_name(t.dt));
	else
		snprintf(err, IR_ERR_MAX,
		    "'%s' result type %s does not match %s, inferred from operand%s %s",
		    ir_ops[n->op].name, ir_shape_str(&n->type, have), ir_shape_str(&t, want),
		    n->nin == 1 ? "" : "s", ops);
	*where = place(n, n->typeloc);
	return -1;
}
