/*
 * ops_elem_fold.c: the elementwise translators' ops over Ev values
 * (ops_elem.h): computed at import time when every operand is known, an
 * aicm node otherwise.
 *
 * A fold computes what the reference interpreter would (src/runtime/
 * interp.c): each element with scalar.h's formula for the op, in double
 * for floats (an f32 result rounded once as it is stored) and on exact
 * int64 values for integers and bools (an i32 result keeping its low 32
 * bits), operands broadcast numpy's way, cast by scalar.h's cast rules.
 * So a folded shape computation gives the numbers the compiled graph
 * would.  A fold checks the element types as the op's table row does,
 * so a model that is wrong is wrong whether its inputs are known or not.
 *
 * A known operand that meets a node is materialised: an ONNX value by
 * imp_node_of, a formula's constant (one value, possibly over a shape) as
 * a splat.  The translators fold all or nothing per ONNX node, so no
 * other known data meets a node.
 */
#include <math.h>
#include <string.h>

#include "diag.h"
#include "import.h"
#include "ops_elem.h"
#include "scalar.h"

/* ---- values ------------------------------------------------------------ */

Ev
elem_in(Imp *im, ImpVal *v, bool fold)
{
	if (!v)
		return ELEM_NONE;
	if (fold && v->k)
		return (Ev){-1, v->k, v};
	return (Ev){imp_node_of(im, v), NULL, v};
}

const Type *
elem_type(const Imp *im, Ev e)
{
	return e.k ? &e.k->type : imp_type(im, e.node);
}

static Ev
node_ev(int i)
{
	return i < 0 ? ELEM_NONE : (Ev){i, NULL, NULL};
}

static Ev
data_ev(ImpData *d)
{
	return (Ev){-1, d, NULL};
}

/* A splat const of d's type holding its element 0, exact for integers
 * (imp_splat's double would round an i64 above 2^53). */
static int
splat_of(Imp *im, const ImpData *d)
{
	DType dt = d->type.dt;
	int i = imp_splat(im, dt, ir_dtype_is_float(dt) ? imp_data_f64(d, 0) : 0, d->type.rank,
	    d->type.dim);

	if (i >= 0 && !ir_dtype_is_float(dt)) {
		imp_at(im, i)->ivalue = imp_data_i64(d, 0);
		imp_at(im, i)->value = (double)imp_data_i64(d, 0);
		imp_at(im, i)->value_int = true;
	}
	return i;
}

int
elem_node(Imp *im, Ev e)
{
	size_t es;
	int64_t n;

	if (e.node >= 0)
		return e.node;
	if (!e.k)
		return -1;
	if (e.v)
		return imp_node_of(im, e.v);
	es = ir_dtype_size(e.k->type.dt);
	n = ir_type_numel(&e.k->type);
	for (int64_t i = 1; i < n; i++)
		if (memcmp((const char *)e.k->p + i * (int64_t)es, e.k->p, es) != 0)
			AICM_BUG("folded data of %lld elements meets a node", (long long)n);
	return splat_of(im, e.k);
}

int
elem_out(Imp *im, Ev e)
{
	if (e.k)
		return imp_out_known(im, 0, e.k);
	if (e.node < 0)
		return -1;
	return imp_out(im, 0, e.node);
}

/* ---- shapes ------------------------------------------------------------ */

bool
elem_bshape(const Type *a, const Type *b, Type *out)
{
	Type t = {0};
	int r = a->rank > b->rank ? a->rank : b->rank;

	t.rank = r;
	t.dt = a->dt;
	for (int k = 0; k < r; k++) {
		int ka = k - (r - a->rank), kb = k - (r - b->rank);
		int64_t da = ka >= 0 ? a->dim[ka] : 1, db = kb >= 0 ? b->dim[kb] : 1;

		if (da != db && da != 1 && db != 1)
			return false;
		t.dim[k] = da == 1 ? db : da;
	}
	*out = t;
	return true;
}

bool
elem_has_int_zero(const ImpData *d)
{
	if (ir_dtype_is_float(d->type.dt))
		return false;
	for (int64_t i = 0; i < ir_type_numel(&d->type); i++)
		if (imp_data_i64(d, i) == 0)
			return true;
	return false;
}

/* x's element strides against broadcast shape o (0 along a broadcast
 * dimension), as the interpreter's bcast_strides. */
static void
bstrides(const Type *x, const Type *o, int64_t *st)
{
	int64_t s = 1;

	for (int k = o->rank - 1; k >= 0; k--) {
		int kx = x->rank - o->rank + k;

		if (kx < 0) {
			st[k] = 0;
		} else {
			st[k] = x->dim[kx] == 1 ? 0 : s;
			s *= x->dim[kx];
		}
	}
}

/* Walks the elements of shape o with n operands' offsets off[], their
 * strides st[][]: call next() after each element. */
typedef struct Walk {
	const Type *o;
	int n;
	int64_t idx[IR_MAX_RANK], st[3][IR_MAX_RANK], off[3];
} Walk;

static void
walk_init(Walk *w, const Type *o, int n, const ImpData *const *in)
{
	memset(w, 0, sizeof *w);
	w->o = o;
	w->n = n;
	for (int j = 0; j < n; j++)
		bstrides(&in[j]->type, o, w->st[j]);
}

static void
walk_next(Walk *w)
{
	for (int k = w->o->rank - 1; k >= 0; k--) {
		for (int j = 0; j < w->n; j++)
			w->off[j] += w->st[j][k];
		if (++w->idx[k] < w->o->dim[k])
			return;
		for (int j = 0; j < w->n; j++)
			w->off[j] -= w->st[j][k] * w->o->dim[k];
		w->idx[k] = 0;
	}
}

/* ---- type checks ------------------------------------------------------- */

/* Whether element type dt is in op's type set (ops.def). */
static bool
takes(OpId op, DType dt)
{
	switch (ir_ops[op].types) {
	case TY_ANY: return true;
	case TY_NUM: return dt != DT_BOOL;
	case TY_FLOAT: return ir_dtype_is_float(dt);
	case TY_BOOL: return dt == DT_BOOL;
	}
	return false;
}

/* The fold of op over operands of types a and b must type as the node
 * would: one element type, in the op's set. */
static int
check_types(Imp *im, OpId op, DType a, DType b)
{
	if (a != b)
		return imp_fail(im, "the aicm %s it becomes is wrong: its operands have different "
		    "element types, %s and %s (no implicit promotion)", ir_ops[op].name,
		    ir_dtype_name(a), ir_dtype_name(b));
	if (!takes(op, a))
		return imp_fail(im, "the aicm %s it becomes is wrong: it does not take %s",
		    ir_ops[op].name, ir_dtype_name(a));
	return 0;
}

/* ---- the ops ----------------------------------------------------------- */

/* Stores formula result x (a double; a bool as 0 or 1) as element i. */
static void
set_f(ImpData *r, int64_t i, double x)
{
	imp_data_set(r, i, x, ir_dtype_is_float(r->type.dt) ? 0 : x != 0);
}

Ev
elem_un(Imp *im, OpId op, Ev a, const char *name)
{
	ImpData *r;
	Type t;
	int64_t n;

	if (!elem_ok(a))
		return ELEM_NONE;
	if (!a.k)
		return node_ev(imp_unary(im, op, name, a.node));
	if (check_types(im, op, a.k->type.dt, a.k->type.dt) != 0)
		return ELEM_NONE;
	t = a.k->type;
	if (ir_ops[op].result == RT_BOOL)
		t.dt = DT_BOOL;
	r = imp_data_new(im, &t);
	n = ir_type_numel(&t);
	for (int64_t i = 0; i < n; i++) {
		if (ir_dtype_is_float(a.k->type.dt)) {
			set_f(r, i, ir_scalar_unary(op, imp_data_f64(a.k, i)));
		} else {
			int64_t v = ir_scalar_unary_i64(op, imp_data_i64(a.k, i));

			imp_data_set(r, i, (double)v, v);
		}
	}
	return data_ev(r);
}

Ev
elem_bin(Imp *im, OpId op, Ev a, Ev b, const char *name)
{
	const ImpData *in[2];
	ImpData *r;
	Type t;
	Walk w;
	int64_t n;
	bool flt;

	if (!elem_ok(a) || !elem_ok(b))
		return ELEM_NONE;
	if (!a.k || !b.k)
		return node_ev(imp_binary(im, op, name, elem_node(im, a), elem_node(im, b)));
	if (check_types(im, op, a.k->type.dt, b.k->type.dt) != 0)
		return ELEM_NONE;
	if (!elem_bshape(&a.k->type, &b.k->type, &t)) {
		char sa[IR_TYPE_STR], sb[IR_TYPE_STR];

		imp_fail(im, "the aicm %s it becomes is wrong: '%s' cannot broadcast %s with %s",
		    ir_ops[op].name, ir_ops[op].name, ir_shape_str(&a.k->type, sa),
		    ir_shape_str(&b.k->type, sb));
		return ELEM_NONE;
	}
	if (ir_ops[op].result == RT_BOOL)
		t.dt = DT_BOOL;
	flt = ir_dtype_is_float(a.k->type.dt);
	in[0] = a.k;
	in[1] = b.k;
	r = imp_data_new(im, &t);
	n = ir_type_numel(&t);
	walk_init(&w, &t, 2, in);
	for (int64_t i = 0; i < n; i++, walk_next(&w)) {
		if (flt) {
			set_f(r, i, ir_scalar_binary(op, imp_data_f64(a.k, w.off[0]),
			    imp_data_f64(b.k, w.off[1])));
		} else {
			int64_t x = imp_data_i64(a.k, w.off[0]), y = imp_data_i64(b.k, w.off[1]), v;

			if (ir_scalar_int_div_by_zero(op, y)) {
				imp_fail(im, "integer division by zero in its folded '%s'",
				    ir_ops[op].name);
				return ELEM_NONE;
			}
			v = ir_scalar_binary_i64(op, x, y);
			imp_data_set(r, i, (double)v, v);
		}
	}
	return data_ev(r);
}

Ev
elem_where(Imp *im, Ev c, Ev a, Ev b, const char *name)
{
	const ImpData *in[3];
	ImpData *r;
	Type t;
	Walk w;
	int64_t n;

	if (!elem_ok(c) || !elem_ok(a) || !elem_ok(b))
		return ELEM_NONE;
	if (!c.k || !a.k || !b.k) {
		int ops[3] = {elem_node(im, c), elem_node(im, a), elem_node(im, b)};

		return node_ev(imp_op(im, OP_WHERE, name, 3, ops));
	}
	if (c.k->type.dt != DT_BOOL) {
		imp_fail(im, "the aicm where it becomes is wrong: its condition is %s, expected bool",
		    ir_dtype_name(c.k->type.dt));
		return ELEM_NONE;
	}
	if (check_types(im, OP_WHERE, a.k->type.dt, b.k->type.dt) != 0)
		return ELEM_NONE;
	if (!elem_bshape(&c.k->type, &a.k->type, &t) || !elem_bshape(&t, &b.k->type, &t)) {
		imp_fail(im, "the aicm where it becomes is wrong: its operands do not broadcast");
		return ELEM_NONE;
	}
	t.dt = a.k->type.dt;
	in[0] = c.k;
	in[1] = a.k;
	in[2] = b.k;
	r = imp_data_new(im, &t);
	n = ir_type_numel(&t);
	walk_init(&w, &t, 3, in);
	for (int64_t i = 0; i < n; i++, walk_next(&w)) {
		const ImpData *s = imp_data_i64(c.k, w.off[0]) ? a.k : b.k;
		int64_t j = s == a.k ? w.off[1] : w.off[2];

		if (ir_dtype_is_float(t.dt))
			imp_data_set(r, i, imp_data_f64(s, j), 0);
		else
			imp_data_set(r, i, 0, imp_data_i64(s, j));
	}
	return data_ev(r);
}

/* cast's rule (DESIGN §12, the interpreter's kern_CAST): from a float,
 * ir_scalar_cast (truncated toward zero and saturated, NaN 0; bool x !=
 * 0); from an integer or bool, exactly, rounded once into a float. */
Ev
elem_cast(Imp *im, DType to, Ev a, const char *name)
{
	ImpData *r;
	Type t;
	int64_t n;

	if (!elem_ok(a))
		return ELEM_NONE;
	if (elem_type(im, a)->dt == to)
		return a;
	if (!a.k) {
		int i = imp_new(im, OP_CAST, name, 1, &a.node);

		if (i < 0)
			return ELEM_NONE;
		imp_at(im, i)->to = to;
		imp_at(im, i)->set |= AB(TO);
		return node_ev(imp_done(im, i));
	}
	t = a.k->type;
	t.dt = to;
	r = imp_data_new(im, &t);
	n = ir_type_numel(&t);
	for (int64_t i = 0; i < n; i++) {
		if (ir_dtype_is_float(a.k->type.dt)) {
			double v = ir_scalar_cast(to, imp_data_f64(a.k, i));
			int64_t iv = ir_dtype_is_float(to) ? 0 : v >= 0x1p63 ? INT64_MAX : (int64_t)v;

			imp_data_set(r, i, v, iv);
		} else {
			int64_t v = imp_data_i64(a.k, i);

			if (to == DT_F32)
				imp_data_set(r, i, (double)(float)v, 0);
			else if (to == DT_F64)
				imp_data_set(r, i, (double)v, 0);
			else
				imp_data_set(r, i, 0, ir_scalar_int_cast(to, v));
		}
	}
	return data_ev(r);
}

Ev
elem_reshape(Imp *im, Ev a, int rank, const int64_t *dims)
{
	ImpData *r;
	Type t = {0};

	if (!elem_ok(a))
		return ELEM_NONE;
	if (!a.k)
		return node_ev(imp_reshape(im, NULL, a.node, rank, dims));
	t.dt = a.k->type.dt;
	t.rank = rank;
	for (int k = 0; k < rank; k++)
		t.dim[k] = dims[k];
	if (ir_type_numel(&t) != ir_type_numel(&a.k->type))
		AICM_BUG("a reshape of %lld elements to %lld", (long long)ir_type_numel(&a.k->type),
		    (long long)ir_type_numel(&t));
	r = imp_data_new(im, &t);
	memcpy(r->p, a.k->p, (size_t)ir_type_numel(&t) * ir_dtype_size(t.dt));
	return data_ev(r);
}

Ev
elem_const(Imp *im, DType dt, double v, int64_t iv)
{
	ImpData *r = imp_data_new(im, &(Type){.rank = 0, .dt = dt});

	imp_data_set(r, 0, v, iv);
	return data_ev(r);
}

Ev
elem_full(Imp *im, DType dt, double v, const Type *t)
{
	Type s = *t;
	ImpData *r;
	int64_t n = ir_type_numel(t);

	s.dt = dt;
	/* too large to hold: a splat (v is small and whole, exact as a
	 * double) */
	if (n > ELEM_FOLD_MAX)
		return node_ev(imp_splat(im, dt, v, t->rank, t->dim));
	r = imp_data_new(im, &s);
	for (int64_t i = 0; i < n; i++)
		imp_data_set(r, i, v, (int64_t)v);
	return data_ev(r);
}
