/*
 * tile.h: the tile IR, the Triton-like form that lower-tiled produces and
 * the tile executor runs (DESIGN §6, docs/tiled.md).
 *
 * A lowered kernel is one graph node of op OP_TILED (its own row of
 * ops.def) whose `tile` field points at a TileFn: a grid, block sizes and a
 * body of tile instructions that one program of the grid runs.  Each tile
 * op is a row of tile_ops.def; tile_build.c builds bodies.  The body is isolated from the graph: it names the
 * kernel's operands (TileFn.args, graph node indices) and its own result by
 * position, and its values live in their own SSA table (TileFn.vals).
 * Instructions are a flat array; a `for` owns the run of instructions after
 * it up to its `yield`, so that nesting is index ranges, as kernels are in
 * the graph.  Loop-carried values are explicit (one iter value per loop).
 *
 * Values are scalars (program ids, loop counters, index arithmetic: int64)
 * or tiles (rank 0 to 8, every dimension known when written; the executor
 * holds a tile's last four dims, 1 along any before them).  Every tile
 * carries, at run time, a valid box: the leading extent of each dimension
 * whose elements are real; masked loads shrink it to the tensor's bounds,
 * elementwise ops intersect their operands' boxes (a stretched dimension of
 * extent 1 imposes nothing), reductions ignore what lies outside it and
 * stores write only inside it.  That is how ragged tiles never change a
 * result, and how KernelStats count unmasked elements only.
 */
#ifndef AICM_TILE_H
#define AICM_TILE_H

#include "diag.h"
#include "ir.h"

enum {
	TILE_MAX_TERMS = 4,          /* terms of one index expression */
	TILE_RESULT = -1,            /* TileInst.arg naming the kernel's result */
	TILE_MAX_WINDOW = 16,        /* numbers in a window= (im2col, window_count) */
};

/* The attributes a tile op may take (tile_ops.def's attrs column), in
 * printing order. */
#define TILE_ATTRS(X)          \
	X(AXIS, "axis")            \
	X(KEEPDIMS, "keepdims")    \
	X(BY, "by")                \
	X(VALUE, "value")          \
	X(PERM, "perm")            \
	X(OTHER, "other")          \
	X(MASKED, "masked")        \
	X(VIEW, "view")            \
	X(TO, "to")                \
	X(WINDOW, "window")        \
	X(STEPS, "steps")          \
	X(LAST, "last")            \
	X(AT, "at")                \
	X(STRIDES, "strides")      \
	X(OFFSET, "offset")

typedef enum TileAttrId {
#define X(id, name) TA_##id,
	TILE_ATTRS(X)
#undef X
	TA_COUNT
} TileAttrId;

#define TAB(id) (1u << TA_##id)

/* How a statement of the op is written (docs/tiled.md). */
typedef enum TileForm {
	TF_CALL,                     /* %r = name(operands) [: [shape]] attrs */
	TF_LOAD,                     /* %r = name %x[idx] : [shape] attrs */
	TF_STORE,                    /* name %y[idx], %v attrs */
	TF_FOR,                      /* %r = for %k = .. iter(%c = %init) { .. */
	TF_YIELD                     /* yield %v } */
} TileForm;

/* What an op's result is (tile_ops.def's result column). */
typedef enum TileResult {
	TR_NONE, TR_SCALAR, TR_GIVEN, TR_SAME, TR_BROADCAST, TR_DOT, TR_REDUCE,
	TR_PERM, TR_ITER
} TileResult;

/* The tile ops, one per row of tile_ops.def:
 *   TO_PROGRAM_ID        scalar: the program's index on grid axis
 *   TO_IDIV, TO_IREM     scalar: in[0] / by, in[0] % by
 *   TO_ZEROS, TO_FULL    tile filled with 0 or with value
 *   TO_LOAD              tile of operand arg at idx[], masked if masked
 *   TO_STORE, TO_ATOMIC_ADD, TO_ATOMIC_MAX   in[0] into the result at idx[]
 *   TO_FOR               result = for var = lo to hi step st iter(it = in[0])
 *   TO_YIELD             in[0]: the loop's next iter value
 *   TO_DOT               in[0] @ in[1] + in[2] on the last two dims
 *   TO_UNARY, TO_BINARY  gop on tiles, numpy broadcasting (cast: to=)
 *   TO_WHERE             where(in[0], in[1], in[2]), the three broadcast
 *   TO_REDUCE            gop (sum/max) of in[0] along axis, into
 *                        accumulator in[1] if nin == 2
 *   TO_TRANSPOSE         permute in[0] by perm
 *   TO_IM2COL            tile [BK, BM] of the implicit im2col matrix of
 *                        operand arg (N, C, H, W) at idx [plane, k, p]: row
 *                        k is (channel, ky, kx) of the planes from plane on,
 *                        column p the output pixel (oy, ox); positions
 *                        outside the input read other (window=, docs/tiled.md)
 *   TO_WINDOW_COUNT      tile [1, BN]: per output pixel from idx [p], the
 *                        window positions inside a range (avg_pool2d's
 *                        divisor; reads no tensor)
 *   TO_WINDOW_MAX,       tile [planes, BN]: per plane from idx [plane, p] and
 *   TO_WINDOW_SUM        output pixel p + j, the max (NaN wins) or the sum of
 *                        the window's taps inside the input of operand arg
 *                        (max_pool2d, avg_pool2d; window= as im2col's)
 *   TO_LOAD_PAD          a load at any offset: lanes outside the tensor
 *                        read in[0]'s lanes if nin == 1, else other; the
 *                        whole tile is valid (pad, concat)
 *   TO_LOAD_STEP         a load whose lane i of dim k reads element
 *                        idx[k] + steps[k] * i (slice; steps may be < 0)
 *   TO_LOAD_GATHER       lane (p, j, q) reads the tensor at idx[0..axis) +
 *                        p, in[0][j] (the index tile), idx[axis+1..) + q;
 *                        'masked': lanes off the tensor read 0
 *   TO_BROADCAST         in[0] broadcast to the written shape (expand)
 *   TO_ARGMAX,           i64 tile over operand arg's dims with 1 along
 *   TO_ARGMIN            axis: per lane, the index along axis of the
 *                        winner of the lane's whole line of the tensor
 *                        from idx (idx[axis] 0), scanned carrying the
 *                        best value and its index (scalar.h's rule:
 *                        the first NaN wins; last=True: ties go to the
 *                        last index); 'masked': lanes off the tensor
 *                        are outside the valid box
 *   TO_EXTRACT           the columns at .. at + n of in[0] along its last
 *                        dim, n the written shape's last dim (the others
 *                        in[0]'s): a part of a packed loop-carried tile
 *   TO_JOIN              in[0], in[1] (, in[2]) side by side along the
 *                        last dim, the others equal: what a loop that
 *                        carries several tiles yields as its one value */
typedef enum TileOpKind {
#define TOP(id, name, form, graph, nin, nmax, attrs, result, verify) TO_##id,
#include "tile_ops.def"
#undef TOP
	TO_COUNT
} TileOpKind;

typedef struct TileOpInfo {
	const char *name;            /* NULL: the graph op's (tile_op_name) */
	TileForm form;
	int graph;                   /* the OpClass it stands for, or -1 */
	int nin, nmax;               /* operand counts */
	unsigned attrs;              /* TAB() bits it accepts */
	TileResult result;
} TileOpInfo;

extern const TileOpInfo tile_ops[TO_COUNT];
extern const char *const tile_attr_names[TA_COUNT];

/* A number of the tile IR (full's value=, a load's other=): a double for a
 * float tile, and for an integer or bool tile the integer it stands for,
 * exactly (an i64 past 2^53 is no double; pad's value= must stay exact).
 * Both are always set, d the rounding of i or i the truncation of d. */
typedef struct TileNum {
	double d;
	int64_t i;
} TileNum;

/* v, and as an integer truncated toward zero and saturated (NaN 0), as
 * cast to i64 does. */
static inline TileNum
tile_num(double v)
{
	return (TileNum){v, v != v ? 0 : v >= 0x1p63 ? INT64_MAX : v < -0x1p63 ? INT64_MIN :
	    (int64_t)v};
}

/* i exactly, and as the nearest double. */
static inline TileNum
tile_inum(int64_t i)
{
	return (TileNum){(double)i, i};
}

/* An index expression: k + sum(coef[i] * value[i]); values are scalars. */
typedef struct TileIdx {
	int nterm;
	int val[TILE_MAX_TERMS];
	int64_t coef[TILE_MAX_TERMS];
	int64_t k;
} TileIdx;

/* A value of a tiled body: a scalar (rank < 0) or a tile. */
typedef struct TileVal {
	const char *name;            /* without '%' */
	int rank;                    /* -1: scalar */
	DType dt;                    /* a tile's element type (the builder's rule,
	                              * tile_build.c); a scalar is an int64 index
	                              * whatever dt says, until integer types come */
	int64_t shape[IR_MAX_RANK];
	int def;                     /* the instruction that defines it */
	Loc loc;
} TileVal;

/* One instruction.  A lowered graph holds tens of thousands of bodies, so
 * the fields that no two op kinds share overlap, and the index expressions
 * (the largest part) live out of line, exactly nidx of them; readers look
 * at a field only for the op kinds that the comments name. */
typedef struct TileInst {
	TileOpKind op;
	OpId gop;                    /* TO_UNARY, TO_BINARY, TO_WHERE, TO_REDUCE */
	int res;                     /* value defined, or -1 */
	int nin;
	int in[3];
	int arg;                     /* TO_LOAD/stores: operand index or TILE_RESULT */
	int nidx;
	int nview;                   /* load/store: the tensor seen with this shape */
	int nperm;                   /* transpose; load_step: its steps */
	int var, iter;               /* for: the counter and the carried value */
	int end;                     /* for: index of its yield */
	Loc loc;
	bool masked;                 /* load: other= given; store: 'masked' */
	bool has_view;               /* view= given (nview 0 is a rank-0 view) */
	bool keepdims;               /* reduce */
	bool last;                   /* argmax, argmin: the last index wins ties */
	TileIdx *idx;                /* load/stores: nidx of them (tile_set_nidx) */
	/* load with strides=: the view's nview strides, and at [IR_MAX_RANK]
	 * its offset= (0 if not given), in the graph's arena; NULL: the view
	 * (or the tensor) is contiguous, row-major, from element 0 */
	const int64_t *vstr;
	union {
		int64_t axis;        /* program_id; reduce (-1: all axes); argmax */
		TileNum other;       /* load: a masked-off lane reads this */
		TileNum value;       /* full */
		int64_t by;          /* idiv, irem */
		DType to;            /* cast (a unary of gop OP_CAST) */
	};
	union {
		int64_t view[IR_MAX_RANK];      /* load/stores with has_view */
		int64_t perm[IR_MAX_RANK];      /* transpose */
		int64_t steps[IR_MAX_RANK];     /* load_step, nperm of them */
		int64_t start;                  /* extract: at= */
		struct {
			int64_t lo, hi, step;   /* for */
		};
		struct {                        /* im2col, window_*: window=, */
			const int64_t *win;     /*   nwin numbers in the graph's arena */
			int nwin;
		};
	};
} TileInst;

/* A body under construction grows in scratch arrays that the builder
 * reuses from body to body; tile_fn_end moves it into the graph at its
 * exact size.  (Grown in the arena, each body would leave its outgrown
 * copies there: lowering makes one body per kernel.) */
typedef struct TileScratch {
	TileVal *vals;
	int capvals;
	TileInst *insts;
	int capinsts;
	HashSlot *index;             /* all empty between bodies */
	int capindex;
} TileScratch;

typedef struct TileFn {
	const char *name;            /* the kernel's name, without '@' */
	KernelKind kind;
	DType dt;                    /* its element type: its node's */
	int nargs;
	int *args;                   /* graph node indices of the operands */
	Loc *argloc;
	int64_t grid[3];
	unsigned kset;               /* the block sizes and tuning attributes */
	int64_t kattr[KA_COUNT];
	bool has_init;               /* the result starts at init (atomics) */
	double init;
	TileVal *vals;
	int nvals, capvals;
	/* The values by name (tile_lookup): open addressing, at most half
	 * full; a parsed body of 100k values scanned its list for every name
	 * it read. */
	HashSlot *index;             /* hash.h's slots, items value + 1 */
	int capindex;                /* a power of two, or 0 */
	TileInst *insts;
	int ninsts, capinsts;
	TileScratch *scratch;        /* while built in scratch arrays, else NULL */
	Loc loc;
} TileFn;

/* The attributes given to a builder: TAB() bits in set, each bit's value
 * in its field (OTHER makes a load masked, MASKED a store).  A builder
 * takes only the attributes that the op's row accepts. */
typedef struct TileAttrs {
	unsigned set;
	int64_t axis;
	int64_t by;
	TileNum value;
	TileNum other;
	bool keepdims;
	bool last;
	DType to;
	int nperm, nview, nsteps, nstrides;
	int64_t strides[IR_MAX_RANK];
	int64_t offset;
	int64_t perm[IR_MAX_RANK];
	int64_t view[IR_MAX_RANK];
	int64_t steps[IR_MAX_RANK];
	int nwin;
	int64_t win[TILE_MAX_WINDOW];
	int64_t start;               /* at= */
} TileAttrs;

/* tile_build.c */
/* A new empty body; it and everything it holds live in g's arena and die
 * with the graph. */
TileFn *tile_fn_new(Graph *g, const char *name, KernelKind kind);
int tile_add_val(Graph *g, TileFn *f, const char *name, int rank, const int64_t *shape);
int tile_add_inst(Graph *g, TileFn *f, TileOpKind op);
/* Sets the index count of access inst i and gives it that many zeroed
 * index expressions; returns them. */
TileIdx *tile_set_nidx(Graph *g, TileFn *f, int i, int n);
/* Builds f in s's arrays (f empty) until tile_fn_end moves it into g. */
void tile_fn_begin(TileFn *f, TileScratch *s);
void tile_fn_end(Graph *g, TileFn *f);
void tile_scratch_free(TileScratch *s);
/* The first value named name, or -1; O(1) (the body's name index). */
int tile_lookup(const TileFn *f, const char *name);
/* The builders return the instruction they add (tile_build_def and the
 * loop's values: the value).  An instruction of form TF_CALL, with nin
 * operands and the attributes at (NULL: none): */
int tile_build_op(Graph *g, TileFn *f, TileOpKind op, OpId gop, int nin, const int *in,
    const TileAttrs *at, Loc loc);
/* A load (v unused) or a store or atomic of value v, of operand arg (or
 * TILE_RESULT) at nidx index expressions idx (NULL: all 0). */
int tile_build_access(Graph *g, TileFn *f, TileOpKind op, int arg, int nidx, const TileIdx *idx,
    int v, const TileAttrs *at, Loc loc);
/* A loop from lo to hi by step carrying value init; its counter, carried
 * value, yield and result follow (tile_build_loop_var, _iter, _yield,
 * tile_build_def of the loop). */
int tile_build_for(Graph *g, TileFn *f, int64_t lo, int64_t hi, int64_t step, int init, Loc loc);
int tile_build_loop_var(Graph *g, TileFn *f, int fo, const char *name);
int tile_build_loop_iter(Graph *g, TileFn *f, int fo, const char *name);
/* Ends loop fo: v is the carried value's next one. */
int tile_build_yield(Graph *g, TileFn *f, int fo, int v, Loc loc);
/* Defines the result of inst i, of the given shape (rank -1: a scalar); its
 * element type follows from the op (tile_build.c). */
int tile_build_def(Graph *g, TileFn *f, int i, const char *name, int rank, const int64_t *shape);

/* tile.c */
/* The op's text: its row's name, or its graph op's (unary, binary,
 * reduce). */
const char *tile_op_name(const TileInst *in);
/* The op of the row named name (the rows with a name), or -1. */
int tile_op_lookup(const char *name);
/* The row that stands for graph op gop in a body (TO_UNARY, TO_BINARY,
 * TO_REDUCE for sum and max), or TO_COUNT. */
TileOpKind tile_op_of_gop(OpId gop);

/* tile_verify.c */
/* Checks one tiled node: SSA, shapes of every tile against its op, tile
 * dimensions against the block sizes, loads and stores inside their tensors
 * unless masked, the result stored by exactly one store.  Returns the
 * number of errors reported. */
int tile_verify(const Graph *g, int node, Diag *d);
/* The tensor shape a load or store at inst sees (its view, or the type of
 * the operand or result). */
const Type *tile_target_type(const Graph *g, const Node *n, const TileInst *in, Type *buf);

/* tile_loop.c */
/* The trips of loop for_inst: 0 when it runs none (step <= 0 or hi <= lo),
 * INT64_MAX when hi - lo overflows (the verifier keeps bounds within
 * +-2^50, so that is a net). */
int64_t tile_trips(const TileInst *for_inst);

#endif
