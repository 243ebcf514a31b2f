/*
 * ops_shape.h: the shape family's operands and primitives, shared by its
 * files (ops_shape.c defines them; ops_shape_compose.c writes composite
 * ops over them).
 *
 * An Opnd is either known data or an aicm node.  Each primitive folds
 * when its operand is known (and the result not larger than
 * SHP_FOLD_MAX elements), else emits its aicm op; a failed one returns
 * shp_failed after reporting the error, and takes a failed operand
 * quietly, so a chain of primitives needs one check at its end.  name is
 * the aicm name of the node a primitive emits (imp_out_name for a node's
 * output), NULL for an intermediate.
 */
#ifndef AICM_OPS_SHAPE_H
#define AICM_OPS_SHAPE_H

#include "import.h"

enum { SHP_FOLD_MAX = 1 << 22, SHP_GROW_MAX = 1024 };

/* An operand: known data (k), or an aicm node; src is the ONNX value it
 * is, so that a known value materialised once keeps its one const. */
typedef struct Opnd {
	Type t;                      /* rank < 0: failed */
	ImpData *k;
	int node;
	ImpVal *src;
} Opnd;

extern const Opnd shp_failed;
static inline bool shp_bad(const Opnd *o) { return o->t.rank < 0; }

/* Operands: known data, an emitted node, the node's input k (false after an
 * error); the node of an operand (a const made on first use). */
Opnd shp_of_data(ImpData *d);
Opnd shp_of_node(Imp *im, int i);
bool shp_in(Imp *im, int k, Opnd *o);
int shp_node_of(Imp *im, Opnd *o);
/* Binds output k to o. */
int shp_bind(Imp *im, int k, Opnd o);
/* Whether a result of type t is folded from x (known, not too large). */
bool shp_folds(const Opnd *x, const Type *t);

/* Row-major strides; dst[db + sum i_k ds_k] = src[sb + sum i_k ss_k] over
 * the box dims[0..r), es bytes an element. */
void shp_strides(const Type *t, int64_t *s);
void shp_box_copy(int r, const int64_t *dims, char *dst, int64_t db, const int64_t *ds,
    const char *src, int64_t sb, const int64_t *ss, size_t es);

/* The primitives: reshape (same element count), transpose (perm checked
 * by the caller), a slice in normal form (along axis k the len[k]
 * elements first[k], first[k] + step[k], ..., all inside the axis),
 * concat along ax, numpy's broadcast with shape[0..n). */
Opnd shp_reshape(Imp *im, const char *name, Opnd x, int rank, const int64_t *dims);
Opnd shp_transpose(Imp *im, const char *name, Opnd x, const int64_t *perm);
Opnd shp_slice(Imp *im, const char *name, Opnd x, const int64_t *first, const int64_t *len,
    const int64_t *step);
Opnd shp_concat(Imp *im, const char *name, int n, Opnd *xs, int ax);
Opnd shp_expand(Imp *im, const char *name, Opnd x, int n, const int64_t *shape);

#endif
