/*
 * interp_window.c: the reference kernels of the windowed ops (conv2d and the pools).
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
NOT_YET(CONV2D)
NOT_YET(MAX_POOL2D)
NOT_YET(AVG_POOL2D)
