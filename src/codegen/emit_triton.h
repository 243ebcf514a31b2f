/*
 * emit_triton.h: Triton source for a lowered graph (aicm-opt --emit=triton,
 * DESIGN section 13, docs/codegen.md).
 *
 * One @triton.jit kernel per tiled program and a launcher `run` that
 * allocates the results and calls each kernel on its grid.  The text is
 * deterministic: it depends on the graph only.
 */
#ifndef AICM_EMIT_TRITON_H
#define AICM_EMIT_TRITON_H

#include <stddef.h>
#include <stdio.h>

#include "diag.h"
#include "ir.h"

/* Writes g's Triton module to out.  stem names the graph when it has no
 * name of its own (the input file's stem; NULL: "graph").  Returns 0 when
 * written; -1 for a graph that still holds un-lowered ops (aicm-opt
 * refuses those itself first, as for --emit=c), -2 for a tiled body that has no
 * Triton form (an extract that is not one part of a join, written by
 * hand), each said in d at its place and nothing written. */
int triton_emit(FILE *out, const Graph *g, const char *stem, Diag *d);

#endif
