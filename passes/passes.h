/*
 * passes.h: the registry of passes, the one list of every pass there is.
 *
 * The list lives above the passes, as MLIR's registerAllPasses and QBE's
 * pass list in main.c do, so that the pass manager (src/ir/pass.c) names
 * no pass: the tools hand this list to pass_parse_pipeline, pass_lookup
 * and pass_list, and a test or a harness may hand another.
 */
#ifndef AICM_PASSES_H
#define AICM_PASSES_H

#include "pass.h"

/* registry.c */
/* Every pass, NULL-terminated, in the order --list-passes prints them and
 * the pipeline parser's "the passes are" note names them. */
extern const Pass *const aicm_passes[];

#endif
