/*
 * ops_elem.h: the elementwise translators' values (ops_elem.c), either an
 * aicm node or elements known at import time, and the ops over them
 * (ops_elem_fold.c) that fold known operands and emit nodes for the rest.
 */
#ifndef AICM_OPS_ELEM_H
#define AICM_OPS_ELEM_H

#include "import.h"

/* The most elements a folded result has; above it, nodes are emitted. */
enum { ELEM_FOLD_MAX = 1 << 16 };

/* A value of a formula: the aicm node computing it (node >= 0), or its
 * elements (k).  v is the ONNX value it is, when it is one unchanged (a
 * known one becomes a node through imp_node_of).  Neither node nor k:
 * an error (already reported) or an absent optional input. */
typedef struct Ev {
	int node;
	ImpData *k;
	ImpVal *v;
} Ev;

#define ELEM_NONE ((Ev){-1, NULL, NULL})

static inline bool elem_ok(Ev e) { return e.node >= 0 || e.k; }

/* v as a value: its elements when fold and it is known, else its node. */
Ev elem_in(Imp *im, ImpVal *v, bool fold);
const Type *elem_type(const Imp *im, Ev e);
/* The node holding e (a formula's constant becomes a splat); -1 after an
 * error. */
int elem_node(Imp *im, Ev e);
/* Binds output 0 to e: 0, or -1 after an error. */
int elem_out(Imp *im, Ev e);

/* The ops.  Known operands give known data (scalar.h's formulas, numpy's
 * broadcasting); otherwise an aicm node named name (NULL: a fresh name).
 * An invalid operand gives ELEM_NONE. */
Ev elem_un(Imp *im, OpId op, Ev a, const char *name);
Ev elem_bin(Imp *im, OpId op, Ev a, Ev b, const char *name);
Ev elem_where(Imp *im, Ev c, Ev a, Ev b, const char *name);
/* e cast to to (e itself when it has that type already). */
Ev elem_cast(Imp *im, DType to, Ev a, const char *name);
Ev elem_reshape(Imp *im, Ev a, int rank, const int64_t *dims);
/* A constant of type dt, shape (): v, or iv for an integer type. */
Ev elem_const(Imp *im, DType dt, double v, int64_t iv);
/* v (0 or 1 for bool, integral for an integer type) over shape t. */
Ev elem_full(Imp *im, DType dt, double v, const Type *t);

/* numpy's broadcast of a and b into *out (which may be a); false when
 * they do not broadcast.  out's element type is a's. */
bool elem_bshape(const Type *a, const Type *b, Type *out);
/* Whether integer data d holds a 0 (a divisor the run time refuses). */
bool elem_has_int_zero(const ImpData *d);

#endif
