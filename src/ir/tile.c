/*
 * tile.c: the tile-op table (tile_ops.def) and the ops' names (tile.h);
 * tile_build.c builds tiled kernels, print.c prints them, in the form the
 * parser reads (docs/tiled.md), and tile_verify.c checks them.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tile.h"

/* ---- the tile-op table (tile_ops.def) --------------------------------- */

/* The verify column is tile_verify.c's (its table of checks). */
const TileOpInfo tile_ops[TO_COUNT] = {
#define TOP(id, name, form, graph, nin, nmax, attrs, result, verify) \
	{name, form, graph, nin, nmax, attrs, result},
#include "tile_ops.def"
#undef TOP
};

const char *const tile_attr_names[TA_COUNT] = {
#define X(id, name) name,
	TILE_ATTRS(X)
#undef X
};

/* The named rows by name (an op + 1 a slot, built once): the parser looks
 * up the op of every statement of a body. */
enum { TOPIDX = 64 };
static HashSlot top_index[TOPIDX];
static pthread_once_t top_index_once = PTHREAD_ONCE_INIT;

/* A row's name; NULL for the rows that stand for graph ops. */
static const char *
top_name(uint32_t op)
{
	return tile_ops[op].name;
}

static void
top_index_build(void)
{
	hash_names_build(top_index, TOPIDX, TO_COUNT, top_name);
}

int
tile_op_lookup(const char *name)
{
	pthread_once(&top_index_once, top_index_build);
	return hash_names_find(top_index, TOPIDX, top_name, name);
}

/* The row of each graph op class (TO_COUNT: none), built once: the parser
 * and the lowering ask for every elementwise op. */
static unsigned char top_of_class[OC_TILED + 1];
static pthread_once_t top_of_class_once = PTHREAD_ONCE_INIT;

static void
top_of_class_build(void)
{
	for (int c = 0; c <= OC_TILED; c++)
		top_of_class[c] = TO_COUNT;
	for (int i = TO_COUNT - 1; i >= 0; i--)
		if (tile_ops[i].graph >= 0)
			top_of_class[tile_ops[i].graph] = (unsigned char)i;
}

TileOpKind
tile_op_of_gop(OpId gop)
{
	pthread_once(&top_of_class_once, top_of_class_build);
	/* Of the reductions, those that an accumulator can carry: mean is
	 * lowered as a sum and a division. */
	if (ir_ops[gop].cls == OC_REDUCTION && gop == OP_MEAN)
		return TO_COUNT;
	return (TileOpKind)top_of_class[ir_ops[gop].cls];
}

const char *
tile_op_name(const TileInst *in)
{
	if ((unsigned)in->op >= TO_COUNT)
		return "?";
	return tile_ops[in->op].name ? tile_ops[in->op].name : ir_ops[in->gop].name;
}
