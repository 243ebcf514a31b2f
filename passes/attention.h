/*
 * attention.h: the attention pattern (DESIGN section 13), shared by the
 * passes that see it: fuse recognises it and makes one `attention` kernel,
 * lower-tiled (lower_attention.c) builds its online-softmax program from
 * the match, and the cost model (cost.c) counts that program's traffic.
 * One matcher, so that the three never disagree about what a kernel is.
 */
#ifndef AICM_ATTENTION_H
#define AICM_ATTENTION_H

#include <stdbool.h>

#include "ir.h"

enum { ATTN_MAX_NODES = 12 };

/* A scaling by a scalar constant known at compile time: x * c, c * x or
 * x / c (op OP_MUL or OP_DIV, c the constant's value). */
typedef struct AttnScale {
	int node;                    /* the mul or div, or -1: none */
	OpId op;
	double c;
} AttnScale;

typedef enum AttnMask { AM_NONE, AM_ADD, AM_WHERE } AttnMask;

typedef struct AttnMatch {
	int root;                    /* out = matmul(p, v) */
	int mm;                      /* the scores' matmul(q', kt) */
	int q, k, v;                 /* the external Q, K (or K transposed) and V */
	bool k_given_t;              /* k is Kᵀ (.., d, N) as given, no transpose */
	int tr;                      /* the absorbed transpose(K), or -1 */
	AttnScale qs, ss;            /* Q's scaling and the scores' (node -1: none) */
	AttnMask mask;
	int mask_node;               /* the add or where, or -1 */
	int mask_val;                /* the external mask (add) or condition (where) */
	double fill;                 /* where: the scalar the masked lanes take */
	bool fill_first;             /* where(c, fill, s) rather than where(c, s, fill) */
	int mx, sub, ex, sum, div;   /* the softmax */
	int rank;                    /* of Q, K, V, the scores and the output */
	int64_t batch;               /* the leading dims' product */
	int64_t m, n, d, dv;         /* queries, keys, Q·K width, V's width */
	DType dt;
	int nodes[ATTN_MAX_NODES];   /* the members, in definition order */
	int nnodes;
	/* attn_match_range only: the kernel's range; its other nodes are
	 * views (DESIGN section 13) of q, k, v and the mask */
	int first, last;
} AttnMatch;

/* Whether the op at node root (a matmul) ends the attention pattern; fills
 * a.  Structure, shapes and types only: who else reads the members is the
 * caller's question (fuse asks it; a kernel's members have no other
 * readers).  A scale or fill must be a scalar const with value=. */
bool attn_match(const Graph *g, int root, AttnMatch *a);

/* Whether nodes first..last are exactly the members of a match of last
 * (a kernel written [attention]); fills a.  On failure *why says what is
 * not the pattern (a static string). */
bool attn_match_range(const Graph *g, int first, int last, AttnMatch *a, const char **why);

/* The node that a load of operand x of the kernel matched by
 * attn_match_range reads, and the view it reads it through: x itself,
 * dense, when x is no view of the kernel; else the chain of views from x
 * up to memory, composed (view.c; fuse and the verifier checked that it
 * is a strided view). */
int attn_view_base(const Graph *g, const AttnMatch *a, int x, IrView *v);

/* lower_attention.c: builds the online-softmax program of match a into f
 * (begun, its operands registered: every external node of the kernel is
 * an operand), with blocks of bm queries and bn keys; sets f's grid. */
struct TileFn;
struct TileAttrs;
int lower_attention_build(Graph *g, struct TileFn *f, const AttnMatch *a, int64_t bm,
    int64_t bn);

/* lower_tiled.c: the attributes of a load through view v of a value of
 * type t, padded to rank R (view=, strides=, offset=). */
void lower_view_attrs(struct TileAttrs *at, const Type *t, const IrView *v, int R);

#endif
