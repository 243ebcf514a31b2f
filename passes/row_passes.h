/*
 * row_passes.h: the two program forms of a row_reduction kernel, shared by
 * lower-tiled (which writes them) and autotune's cost model (which counts
 * what they read), so that both see the same passes.
 *
 * A row is kept whole in one tile when its width fits (its power of two at
 * most the row limit, and BN at least the width); otherwise each program
 * loops over its rows once per reduction (a loop carries one value), in
 * definition order, and a final pass computes and stores the output.  A
 * pass reads what its value needs along the row: the row values of its
 * cone, stopping at the statistics already computed.
 */
#ifndef AICM_ROW_PASSES_H
#define AICM_ROW_PASSES_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"

/* The widest row (in elements, its power of two) that a row_reduction
 * keeps in one tile by default (lower-tiled's row-max, autotune's space). */
enum { ROW_TILE_MAX = 8192 };

/* Whether a row of width w is held whole in one tile for block bn and
 * row limit rmax. */
bool row_passes_fit(int64_t w, int64_t bn, int64_t rmax);
/* Whether value x, seen from the row_reduction nodes first..last, varies
 * along the row: a reduction's result does not, an elementwise op or an
 * operand does when its last dim is more than 1. */
bool row_passes_is_row(const Graph *g, int first, int last, int x);
/* The passes of nodes first..last when the row does not fit: val[p] is the
 * value pass p computes along the row (a reduction's operand, in
 * definition order, then the root or, for a reducing root, its operand),
 * red[p] the reduction it feeds or -1 (the final pass of a root that does
 * not reduce).  Returns the count; val and red have room for last - first
 * + 2 entries. */
int row_passes_plan(const Graph *g, int first, int last, int *val, int *red);
/* Whether node x is computed by the row_reduction nodes first..last: one
 * of them and no view (a layout op folded into its consumers' loads, which
 * a pass reads from memory as it reads an operand from outside). */
bool row_passes_computed(const Graph *g, int first, int last, int x);
/* Marks with stamp in mark[i - first] the kernel's row values that
 * computing value v reads in one pass: v (when it is one), and
 * transitively their operands that are.  A pass reads an operand (from
 * outside the kernel, or a view) when it is v, or a row operand of a
 * marked node. */
void row_passes_cone(const Graph *g, int first, int last, int v, int *mark, int stamp);

#endif
