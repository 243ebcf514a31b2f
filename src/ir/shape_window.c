/*
 * shape_window.c: the shape rules of conv2d and the pools,
 * DESIGN §12.
 */
#include <stdio.h>
#include <string.h>

#include "ir.h"

int
ir_shape_window(const Graph *g, const Node *n, Type *out, char *err, Loc *where)
{
	(void)g, (void)out;
	snprintf(err, IR_ERR_MAX, "'%s' has no shape rule yet", ir_ops[n->op].name);
	*where = n->oploc;
	return -1;
}
