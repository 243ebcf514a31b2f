/*
 * interp_copy.c: the reference kernels of the copy ops (concat, slice, pad,
 * gather, expand).
 */
#include <stdio.h>

#include "exec.h"

#define NOT_YET(ID)                                                            \
	int exec_kern_##ID(const Node *n, const Tensor *const *in, Tensor *o,  \
	    char *err)                                                         \
	{                                                                      \
		(void)in, (void)o;                                             \
		snprintf(err, IR_ERR_MAX, "'%s' has no reference kernel yet",   \
		    ir_ops[n->op].name);                                       \
		return -1;                                                     \
	}
NOT_YET(CONCAT)
NOT_YET(SLICE)
NOT_YET(PAD)
NOT_YET(GATHER)
NOT_YET(EXPAND)
