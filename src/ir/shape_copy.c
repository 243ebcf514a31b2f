/*
 * shape_copy.c: the shape rules of the copy ops (concat, slice, pad,
 * gather, expand), DESIGN §12.
 *
 * These ops move elements without computing on them; their rules are
 * ONNX's (Concat, Slice, Pad, Gather, Expand), so that aicm-import can map
 * those nodes one to one.  Two choices beyond ONNX: every dimension of a
 * result must be positive (DESIGN §12), so a slice that selects nothing or
 * a pad that crops a dimension away is an error that names the attribute;
 * and negative pads are accepted, as ONNX accepts them: they crop.  The
 * element type is ir_infer_type's business (the op table's); these
 * functions fill the dims and rank.  ir_slice_range is the one place that
 * knows Slice's clamping: the reference kernel and lower-tiled ask it too.
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

static void
ints_str(const int64_t *v, int n, char *buf)
{
	Type t = {.rank = n};

	memcpy(t.dim, v, sizeof(int64_t) * (size_t)n);
	ir_shape_str(&t, buf);
}

void
ir_slice_range(int64_t d, int64_t start, int64_t end, int64_t step, int64_t *first,
    int64_t *len)
{
	/* ONNX Slice: negative indices count from the end, then clamp to
	 * [0, d] going forward or [-1, d-1] going backward.  start and end may
	 * be INT64_MIN or INT64_MAX ("to the edge"); d > 0 keeps the adds in
	 * range. */
	if (start < 0)
		start += d;
	if (end < 0)
		end += d;
	if (step > 0) {
		start = start < 0 ? 0 : start > d ? d : start;
		end = end < 0 ? 0 : end > d ? d : end;
		*len = end > start ? (end - start - 1) / step + 1 : 0;
	} else {
		start = start < 0 ? 0 : start > d - 1 ? d - 1 : start;
		end = end < -1 ? -1 : end > d - 1 ? d - 1 : end;
		/* start - end <= d; step may be INT64_MIN, whose negation is not */
		*len = start <= end ? 0 : step == INT64_MIN ? 1 :
		    (start - end - 1) / -step + 1;
	}
	*first = start;
}

/* The operand's axis from axis= (the default when unset), normalised;
 * -1 after an error. */
static int
one_axis(const Node *n, const Type *a, int64_t dflt, int rank, char *err, Loc *where)
{
	char sa[IR_TYPE_STR];
	int64_t ax = (n->at.set & AB(AXIS)) ? n->at.axis : dflt;

	*where = place(n, ir_attr_loc(n, ATTR_AXIS));
	if (ir_axis_is_tuple(&n->at)) {
		snprintf(err, IR_ERR_MAX, "'%s' takes one axis, axis=<int>, not a tuple",
		    ir_ops[n->op].name);
		return -1;
	}
	if (ax < -rank || ax >= rank) {
		snprintf(err, IR_ERR_MAX, "'%s' axis %lld is out of range for %s (rank %d)",
		    ir_ops[n->op].name, (long long)ax, ir_shape_str(a, sa), a->rank);
		return -1;
	}
	return (int)(ax < 0 ? ax + rank : ax);
}

static int
concat(const Graph *g, const Node *n, Type *out, char *err, Loc *where)
{
	const Type *a = &g->nodes[n->in[0]].type;
	char sa[IR_TYPE_STR], sb[IR_TYPE_STR];
	int ax;

	if (a->rank == 0) {
		snprintf(err, IR_ERR_MAX, "'concat' cannot join rank-0 operands; they have no axis");
		*where = place(n, n->inloc[0]);
		return -1;
	}
	if ((ax = one_axis(n, a, 0, a->rank, err, where)) < 0)
		return -1;
	*out = *a;
	for (int j = 1; j < n->nin; j++) {
		const Type *b = &g->nodes[n->in[j]].type;
		bool same = b->rank == a->rank;

		for (int k = 0; same && k < a->rank; k++)
			same = k == ax || a->dim[k] == b->dim[k];
		if (!same) {
			snprintf(err, IR_ERR_MAX, "'concat' along axis %d cannot join %s and %s: "
			    "every other dimension must be equal", ax, ir_shape_str(a, sa),
			    ir_shape_str(b, sb));
			*where = place(n, n->inloc[j]);
			return -1;
		}
		if (__builtin_add_overflow(out->dim[ax], b->dim[ax], &out->dim[ax]) ||
		    out->dim[ax] > IR_MAX_DIM) {
			snprintf(err, IR_ERR_MAX, "'concat' along axis %d makes a dimension larger "
			    "than %d", ax, IR_MAX_DIM);
			*where = place(n, n->inloc[j]);
			return -1;
		}
	}
	if (ir_type_numel(out) < 0) {
		snprintf(err, IR_ERR_MAX, "'concat' of %s has more elements than a 64-bit count "
		    "holds", ir_shape_str(out, sa));
		*where = place(n, n->oploc);
		return -1;
	}
	return 0;
}

static int
slice(const Node *n, const Type *a, Type *out, char *err, Loc *where)
{
	IntTuple st = ir_attr_ints(&n->at, ATTR_STARTS), en = ir_attr_ints(&n->at, ATTR_ENDS);
	IntTuple ax = ir_attr_ints(&n->at, ATTR_AXES), sp = ir_attr_ints(&n->at, ATTR_STEPS);
	char sa[IR_TYPE_STR];
	bool seen[IR_MAX_RANK] = {false};

	*out = *a;
	*where = place(n, ir_attr_loc(n, ATTR_ENDS));
	if (en.n != st.n) {
		snprintf(err, IR_ERR_MAX, "'slice' ends has %d entries but starts has %d",
		    en.n, st.n);
		return -1;
	}
	if (ax.n > 0 && ax.n != st.n) {
		snprintf(err, IR_ERR_MAX, "'slice' axes has %d entries but starts has %d",
		    ax.n, st.n);
		*where = place(n, ir_attr_loc(n, ATTR_AXES));
		return -1;
	}
	if (sp.n > 0 && sp.n != st.n) {
		snprintf(err, IR_ERR_MAX, "'slice' steps has %d entries but starts has %d",
		    sp.n, st.n);
		*where = place(n, ir_attr_loc(n, ATTR_STEPS));
		return -1;
	}
	if (st.n > a->rank) {
		snprintf(err, IR_ERR_MAX, "'slice' starts has %d entries; %s has rank %d",
		    st.n, ir_shape_str(a, sa), a->rank);
		*where = place(n, ir_attr_loc(n, ATTR_STARTS));
		return -1;
	}
	for (int i = 0; i < st.n; i++) {
		int64_t k = ax.n > 0 ? ax.v[i] : i, step = sp.n > 0 ? sp.v[i] : 1, first, len;

		if (k < -a->rank || k >= a->rank) {
			snprintf(err, IR_ERR_MAX, "'slice' axis %lld is out of range for %s (rank %d)",
			    (long long)k, ir_shape_str(a, sa), a->rank);
			*where = place(n, ir_attr_loc(n, ATTR_AXES));
			return -1;
		}
		if (k < 0)
			k += a->rank;
		if (seen[k]) {
			snprintf(err, IR_ERR_MAX, "'slice' axes names axis %lld twice", (long long)k);
			*where = place(n, ir_attr_loc(n, ATTR_AXES));
			return -1;
		}
		seen[k] = true;
		if (step == 0) {
			snprintf(err, IR_ERR_MAX, "'slice' step %d is 0; a step must not be 0", i);
			*where = place(n, ir_attr_loc(n, ATTR_STEPS));
			return -1;
		}
		ir_slice_range(a->dim[k], st.v[i], en.v[i], step, &first, &len);
		if (len == 0) {
			snprintf(err, IR_ERR_MAX, "'slice' selects nothing along axis %lld of %s "
			    "(start %lld, end %lld, step %lld): a dimension must be positive",
			    (long long)k, ir_shape_str(a, sa), (long long)st.v[i], (long long)en.v[i],
			    (long long)step);
			return -1;
		}
		out->dim[k] = len;
	}
	return 0;
}

static int
pad(const Node *n, const Type *a, Type *out, char *err, Loc *where)
{
	IntTuple p = ir_attr_ints(&n->at, ATTR_PADS);
	char sa[IR_TYPE_STR], sp[IR_TYPE_STR];

	*out = *a;
	*where = place(n, ir_attr_loc(n, ATTR_PADS));
	if (p.n != 2 * a->rank) {
		snprintf(err, IR_ERR_MAX, "'pad' pads has %d entries; a rank-%d operand takes %d "
		    "(all begins, then all ends)", p.n, a->rank, 2 * a->rank);
		return -1;
	}
	for (int k = 0; k < a->rank; k++) {
		int64_t b = p.v[k], e = p.v[a->rank + k], d = a->dim[k];

		/* |pads| bounded so that the sum cannot overflow */
		if (b > IR_MAX_DIM || e > IR_MAX_DIM || b < -d || e < -d || d + b + e <= 0 ||
		    d + b + e > IR_MAX_DIM) {
			ints_str(p.v, p.n, sp);
			snprintf(err, IR_ERR_MAX, "'pad' pads=%s gives axis %d of %s a size of %lld; "
			    "it must be from 1 to %d", sp, k, ir_shape_str(a, sa),
			    (b < -d || e < -d || b > IR_MAX_DIM || e > IR_MAX_DIM) ? 0LL :
			    (long long)(d + b + e), IR_MAX_DIM);
			return -1;
		}
		out->dim[k] = d + b + e;
	}
	if (ir_type_numel(out) < 0) {
		snprintf(err, IR_ERR_MAX, "'pad' of %s has more elements than a 64-bit count holds",
		    ir_shape_str(a, sa));
		return -1;
	}
	return 0;
}

static int
gather(const Graph *g, const Node *n, const Type *a, Type *out, char *err, Loc *where)
{
	const Type *ix = &g->nodes[n->in[1]].type;
	char sa[IR_TYPE_STR], si[IR_TYPE_STR];
	int ax;

	if (a->rank == 0) {
		snprintf(err, IR_ERR_MAX, "'gather' cannot index a rank-0 operand");
		*where = place(n, n->inloc[0]);
		return -1;
	}
	if ((ax = one_axis(n, a, 0, a->rank, err, where)) < 0)
		return -1;
	if (a->rank - 1 + ix->rank > IR_MAX_RANK) {
		snprintf(err, IR_ERR_MAX, "'gather' of %s by indices %s would have rank %d; "
		    "the most is %d", ir_shape_str(a, sa), ir_shape_str(ix, si),
		    a->rank - 1 + ix->rank, IR_MAX_RANK);
		*where = place(n, n->inloc[1]);
		return -1;
	}
	out->rank = 0;
	for (int k = 0; k < ax; k++)
		out->dim[out->rank++] = a->dim[k];
	for (int k = 0; k < ix->rank; k++)
		out->dim[out->rank++] = ix->dim[k];
	for (int k = ax + 1; k < a->rank; k++)
		out->dim[out->rank++] = a->dim[k];
	if (ir_type_numel(out) < 0) {
		snprintf(err, IR_ERR_MAX, "'gather' of %s by indices %s has more elements than a "
		    "64-bit count holds", ir_shape_str(a, sa), ir_shape_str(ix, si));
		*where = place(n, n->oploc);
		return -1;
	}
	return 0;
}

static int
expand(const Node *n, const Type *a, Type *out, char *err, Loc *where)
{
	IntTuple s = ir_attr_ints(&n->at, ATTR_SHAPE);
	char sa[IR_TYPE_STR], ss[IR_TYPE_STR];
	int r = s.n > a->rank ? s.n : a->rank;

	*where = place(n, ir_attr_loc(n, ATTR_SHAPE));
	ints_str(s.v, s.n > IR_MAX_RANK ? IR_MAX_RANK : s.n, ss);
	if (s.n > IR_MAX_RANK) {
		snprintf(err, IR_ERR_MAX, "'expand' shape has %d entries; the most is %d", s.n,
		    IR_MAX_RANK);
		return -1;
	}
	out->rank = r;
	for (int i = 0; i < r; i++) {
		int ia = a->rank - r + i, is = s.n - r + i;
		int64_t da = ia >= 0 ? a->dim[ia] : 1, ds = is >= 0 ? s.v[is] : 1;

		if (ds <= 0 || ds > IR_MAX_DIM) {
			snprintf(err, IR_ERR_MAX, "'expand' shape=%s: every dimension must be from 1 "
			    "to %d", ss, IR_MAX_DIM);
			return -1;
		}
		if (da != ds && da != 1 && ds != 1) {
			snprintf(err, IR_ERR_MAX, "'expand' cannot broadcast %s to shape=%s",
			    ir_shape_str(a, sa), ss);
			return -1;
		}
		out->dim[i] = da == 1 ? ds : da;
	}
	if (ir_type_numel(out) < 0) {
		snprintf(err, IR_ERR_MAX, "'expand' of %s to shape=%s has more elements than a "
		    "64-bit count holds", ir_shape_str(a, sa), ss);
		return -1;
	}
	return 0;
}

int
ir_shape_copy(const Graph *g, const Node *n, Type *out, char *err, Loc *where)
{
	const Type *a = &g->nodes[n->in[0]].type;

	out->dt = a->dt;
	switch (ir_ops[n->op].shape) {
	case SR_CONCAT:
		return concat(g, n, out, err, where);
	case SR_SLICE:
		return slice(n, a, out, err, where);
	case SR_PAD:
		return pad(n, a, out, err, where);
	case SR_GATHER:
		return gather(g, n, a, out, err, where);
	case SR_EXPAND:
		return expand(n, a, out, err, where);
	default:
		break;
	}
	snprintf(err, IR_ERR_MAX, "'%s' is not a copy op", ir_ops[n->op].name);
	*where = place(n, n->oploc);
	return -1;
}
