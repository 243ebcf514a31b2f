/*
 * ops_nn.h: helpers shared by ops_nn.c, ops_nn_window.c, ops_nn_norm.c and
 * ops_reduce.c (defined in ops_nn.c).  Internal to src/import.
 */
#ifndef AICM_OPS_NN_H
#define AICM_OPS_NN_H

#include "import.h"

/* v's node with shape dims[0..rank): known data is copied under the new
 * shape (a weight stays one const), else a reshape. */
int nn_reshaped(Imp *im, ImpVal *v, int rank, const int64_t *dims);
/* A per-channel operand (C,) of an input of rank r, as (C, 1, ..., 1). */
int nn_per_channel(Imp *im, ImpVal *v, int r, int64_t c);
/* Reduction op of node x over axes ax[0..n), kept; named name or fresh. */
int nn_reduce_axes_keep(Imp *im, OpId op, const char *name, int x, const int64_t *ax, int n);
/* ONNX's axes av[0..n) of a rank-r operand, normalised into ax; an axis
 * out of range or named twice is an error.  0, or -1 after an error. */
int nn_axes(Imp *im, const int64_t *av, int n, int r, int64_t *ax);
/* Softmax's and Hardmax's operand: node *x with its 'axis' in *a; before
 * opset 13 an axis other than the last is ONNX's 2-D coercion, so *x
 * becomes the reshape to (outer, row) and *coerced is set.  *t is the
 * original type.  0, or -1 after an error. */
int nn_row_operand(Imp *im, int *x, int *a, Type *t, bool *coerced);
/* 0 when the model's opset has the op (from opset since), else an error:
 * a model that uses an op before ONNX defined it is wrong. */
int nn_since(Imp *im, int64_t since);

#endif
