/*
 * window.h: the geometry of conv2d and the pools (DESIGN §12), computed
 * once from a typed node by the shape rule's code, so that the reference
 * kernels, lower-tiled and the cost model read the same numbers the shape
 * rule checked.
 */
#ifndef AICM_WINDOW_H
#define AICM_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"

typedef struct Window {
	int64_t n, c, h, w;          /* x (N, C, H, W) */
	int64_t f;                   /* conv: w's F; pools: C */
	int64_t kh, kw;              /* the kernel (conv: w's KH, KW) */
	int64_t oh, ow;              /* the result's spatial dims */
	int64_t sh, sw;              /* strides */
	int64_t pt, pl, pb, pr;      /* pads: top, left, bottom, right */
	int64_t dh, dw;              /* dilations */
	int64_t groups;              /* conv only; 1 for the pools */
	bool bias;                   /* conv2d with a third operand */
	bool ceil_mode, count_include_pad;
} Window;

/* The geometry of conv2d or pool node n with operand types x, w and b
 * (w and b NULL when absent), checked: 0, or -1 with a message (naming the
 * op and the attribute) in err and the place in *where. */
int ir_window(const Node *n, const Type *x, const Type *w, const Type *b, Window *win,
    char *err, Loc *where);
/* The same, the operand types read from g. */
int ir_window_of(const Graph *g, const Node *n, Window *win, char *err, Loc *where);

/* conv2d's block of filters (BN) for a requested bn: a block stays inside
 * one group, so with groups > 1 it is the largest divisor of F/groups that
 * is at most bn (lower-tiled and the cost model agree on it). */
int64_t ir_conv_block_n(const Window *win, int64_t bn);

/* The divisor of avg_pool2d's output (oy, ox): the window positions
 * inside the input (count_include_pad: inside the padded input, never the
 * ceil_mode overhang past it). */
int64_t ir_pool_count(const Window *win, int64_t oy, int64_t ox);

#endif
