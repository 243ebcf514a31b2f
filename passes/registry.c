/*
 * registry.c: the list of passes (passes.h).
 *
 * Each passes/<name>.c exports exactly one `const Pass pass_<name>`; this
 * file is the only one that names them all.  A new pass is a file and a
 * row here.  The order is the order users see: --list-passes, and the
 * note that follows an unknown pass name.
 */
#include "passes.h"

extern const Pass pass_shape_infer;
extern const Pass pass_fuse;
extern const Pass pass_autotune;
extern const Pass pass_lower_tiled;

const Pass *const aicm_passes[] = {
	&pass_shape_infer,
	&pass_fuse,
	&pass_autotune,
	&pass_lower_tiled,
	NULL,
};
