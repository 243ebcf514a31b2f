/*
 * ir.h: the graph IR that every layer of aicm shares.
 *
 * A Graph is a flat array of Nodes in definition order (SSA: an operand is
 * always an earlier node, referenced by index, never by pointer, so that the
 * array may grow and be reordered).  Kernels, made by fuse or written in the
 * input, are contiguous index ranges of that array.  Everything a Graph owns
 * lives in its Arena and dies with it; the node and kernel arrays are the only
 * malloc'd pieces, grown by doubling.  Names are looked up through an
 * open-addressing hash table, so parsing and printing stay linear.
 *
 * The op set lives in ops.def; the attribute set and the kernel attributes
 * are the two X-macro lists below.
 */
#ifndef AICM_IR_H
#define AICM_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hash.h"

#define AICM_VERSION "0.1.0"

enum {
	IR_MAX_RANK = 8,
	IR_MAX_DIM = 1 << 30,          /* one dimension, checked by the parser */
	IR_MAX_NAME = 1 << 20,         /* bytes in a value name */
	IR_MAX_NODES = 1 << 24,        /* ops in one graph, checked by the parser */
	IR_MAX_NEST = 64,              /* loops nested in a tiled body */
};

/* ---- arena.c --------------------------------------------------------- */

typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
	ArenaBlock *head;
} Arena;

void *arena_alloc(Arena *a, size_t n);         /* zeroed, 16-aligned */
char *arena_strndup(Arena *a, const char *s, size_t n);
void arena_free(Arena *a);

/* ---- strbuf.c -------------------------------------------------------- */

/* A growing string, NUL-terminated whenever n > 0; zeroed is empty. */
typedef struct StrBuf {
	char *s;
	size_t n, cap;
} StrBuf;

void strbuf_grow(StrBuf *b, size_t more);      /* room for more bytes and a NUL */
void strbuf_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_puts(StrBuf *b, const char *s);
void strbuf_putc(StrBuf *b, char c);
/* s as one word for sh: in single quotes, each ' as '\'' (bytes >= 0x80
 * pass as they are); bare when bare_ok and every byte is one sh takes
 * literally (letters, digits, -_./=:,+@%) */
void strbuf_shell_word(StrBuf *b, const char *s, bool bare_ok);

/* ---- locations ------------------------------------------------------- */

/* A place in the input: 1-based line and byte column, and the length of the
 * token to underline.  line == 0 means "made by a pass, no place". */
typedef struct Loc {
	int line, col, len;
} Loc;

/* ---- types ----------------------------------------------------------- */

/* DTYPE(id, name, bytes): f64 first, so that a zeroed Type is f64 (the
 * default, not printed).  Integers wrap and bools are one byte, 0 or 1
 * (DESIGN §12). */
#define IR_DTYPES(X)     \
	X(F64, "f64", 8) \
	X(F32, "f32", 4) \
	X(I32, "i32", 4) \
	X(I64, "i64", 8) \
	X(BOOL, "bool", 1)

typedef enum DType {
#define X(id, name, bytes) DT_##id,
	IR_DTYPES(X)
#undef X
	DT_COUNT
} DType;

/* rank < 0: not known yet (left for shape-infer). */
typedef struct Type {
	int rank;
	DType dt;
	int64_t dim[IR_MAX_RANK];
} Type;

const char *ir_dtype_name(DType dt);
size_t ir_dtype_size(DType dt);
int ir_dtype_lookup(const char *name);         /* -1 if unknown */
static inline bool ir_dtype_is_float(DType dt) { return dt == DT_F32 || dt == DT_F64; }
static inline bool ir_dtype_is_int(DType dt) { return dt == DT_I32 || dt == DT_I64; }
int64_t ir_type_numel(const Type *t);          /* -1 when it overflows */
bool ir_type_eq(const Type *a, const Type *b);
bool ir_same_dims(const Type *a, const Type *b); /* the shapes, not the element types */
/* "(64, 32)" or "(32,)" or "()"; buf of at least IR_TYPE_STR bytes. */
enum { IR_TYPE_STR = 128 };
char *ir_shape_str(const Type *t, char *buf);

/* ---- attributes ------------------------------------------------------ */

/* AK_AXIS: an integer, or (on a reduction) a tuple of them; AK_TYPE: a
 * bare element type keyword (to=i64); AK_FLOATS: values=, numbers that
 * are exact for 64-bit integers and take True and False. */
typedef enum AttrKind {
	AK_INT, AK_FLOAT, AK_BOOL, AK_INTS, AK_STRING, AK_FLOATS, AK_AXIS, AK_TYPE
} AttrKind;

/* ATTR(id, name, kind): declared order is printing order. */
#define IR_ATTRS(X)                                     \
	X(TO, "to", AK_TYPE)                                 \
	X(AXIS, "axis", AK_AXIS)                             \
	X(KEEPDIMS, "keepdims", AK_BOOL)                     \
	X(LAST, "last", AK_BOOL)                             \
	X(PERM, "perm", AK_INTS)                             \
	X(SHAPE, "shape", AK_INTS)                           \
	X(STARTS, "starts", AK_INTS)                         \
	X(ENDS, "ends", AK_INTS)                             \
	X(AXES, "axes", AK_INTS)                             \
	X(STEPS, "steps", AK_INTS)                           \
	X(KERNEL, "kernel", AK_INTS)                         \
	X(STRIDES, "strides", AK_INTS)                       \
	X(PADS, "pads", AK_INTS)                             \
	X(DILATIONS, "dilations", AK_INTS)                   \
	X(GROUPS, "groups", AK_INT)                          \
	X(CEIL_MODE, "ceil_mode", AK_BOOL)                   \
	X(COUNT_INCLUDE_PAD, "count_include_pad", AK_BOOL)   \
	X(VALUE, "value", AK_FLOAT)                          \
	X(FILE, "file", AK_STRING)                           \
	X(VALUES, "values", AK_FLOATS)

typedef enum AttrId {
#define X(id, name, kind) ATTR_##id,
	IR_ATTRS(X)
#undef X
	ATTR_COUNT
} AttrId;

#define AB(id) (1u << ATTR_##id)

typedef struct AttrInfo {
	const char *name;
	AttrKind kind;
} AttrInfo;

extern const AttrInfo ir_attrs[ATTR_COUNT];
int ir_attr_lookup(const char *name);          /* -1 if unknown */
/* Why a file= path cannot name a file inside the data directory (empty,
 * absolute, or with a '..' component), as words to follow "'file' "; NULL
 * when it is fine as text. */
const char *ir_data_path_error(const char *path);

/* The most elements a values= holds: larger data goes in a file=. */
enum { IR_MAX_VALUES = 64 };

/* An integer tuple attribute, its elements in the graph's arena. */
typedef struct IntTuple {
	int n;
	const int64_t *v;
} IntTuple;

/* The most elements an integer tuple holds (pads= of a rank-8 pad). */
enum { IR_MAX_TUPLE = 2 * IR_MAX_RANK };

/* The values of one node's attributes; set has a bit per written one. */
typedef struct Attrs {
	unsigned set;
	/* value=: as a double, and exactly when written as an integer (then
	 * value_int; True and False are 1 and 0 with value_int too) */
	bool value_int;
	double value;
	int64_t ivalue;
	/* file=: a .npy path relative to the data directory, as written (no
	 * NUL inside); in the graph's arena. */
	const char *file;
	int64_t axis;                /* axis=<int>; a tuple is in tup[ATTR_AXIS] */
	int64_t groups;
	DType to;
	bool keepdims, last, ceil_mode, count_include_pad;
	/* values=: a const's elements, row-major, in the graph's arena, as
	 * doubles and (exact for integer types) as int64s */
	int nvalues;                 /* 1..IR_MAX_VALUES */
	uint64_t values_float;       /* bit i: element i is not written as an integer */
	const double *values;
	const int64_t *ivalues;
	/* Every AK_INTS attribute (and a tuple axis=), indexed by AttrId: an
	 * array of ATTR_COUNT in the arena, NULL until a node has one (most
	 * have none); read it with ir_attr_ints. */
	IntTuple *tup;
} Attrs;

/* The tuple attribute a of at; n == 0 when it is not set. */
static inline IntTuple
ir_attr_ints(const Attrs *at, AttrId a)
{
	IntTuple none = {0, NULL};

	return at->tup && (at->set & (1u << a)) ? at->tup[a] : none;
}
/* Sets tuple attribute a to v[0..n-1] (copied into g's arena) and marks it
 * set.  (ir.c) */
struct Graph;
void ir_attr_set_ints(struct Graph *g, Attrs *at, AttrId a, const int64_t *v, int n);
/* Whether a reduction's axis= is written as a tuple, axis=(..). */
static inline bool
ir_axis_is_tuple(const Attrs *at)
{
	return at->tup && (at->set & (1u << ATTR_AXIS)) && at->tup[ATTR_AXIS].n > 0;
}

/* ---- ops ------------------------------------------------------------- */

typedef enum OpClass {
	OC_SOURCE, OC_UNARY, OC_BINARY, OC_WHERE, OC_REDUCTION, OC_ARGREDUCE,
	OC_CONTRACTION, OC_LAYOUT, OC_COPY, OC_CONV, OC_POOL, OC_TILED
} OpClass;

typedef enum ShapeRule {
	SR_SOURCE, SR_SAME, SR_BROADCAST, SR_WHERE, SR_REDUCE, SR_ARGREDUCE, SR_MATMUL,
	SR_TRANSPOSE, SR_RESHAPE, SR_CONCAT, SR_SLICE, SR_PAD, SR_GATHER, SR_EXPAND,
	SR_CONV, SR_POOL
} ShapeRule;

typedef enum FlopRule { FL_NONE, FL_PER_OUT, FL_PER_IN, FL_MATMUL, FL_CONV, FL_POOL } FlopRule;

/* The element types an op's data operands take, and its result's. */
typedef enum TypeSet { TY_ANY, TY_NUM, TY_FLOAT, TY_BOOL } TypeSet;
typedef enum ResultType { RT_SAME, RT_BOOL, RT_I64, RT_TO, RT_SOURCE } ResultType;

/* nmax of an op that takes any number of operands (concat). */
enum { IR_VARIADIC = -1 };

typedef enum OpId {
#define OP(id, name, ...) OP_##id,
#include "ops.def"
#undef OP
	OP_COUNT
} OpId;

typedef struct OpInfo {
	const char *name;
	OpClass cls;
	int nmin, nmax;     /* operands; nmax IR_VARIADIC: nmin or more */
	TypeSet types;
	ResultType result;
	unsigned attrs;     /* AB() bits the op accepts */
	unsigned required;  /* AB() bits it must have */
	ShapeRule shape;
	FlopRule flops;
} OpInfo;

extern const OpInfo ir_ops[OP_COUNT];
int ir_op_lookup(const char *name);            /* -1 if unknown */
const char *ir_op_suggest(const char *name);   /* closest op name or NULL */
/* Edit distance of two names (99 past 30 bytes): the "did you mean" of ops,
 * pass names, pass options and command-line flags. */
int ir_edit_distance(const char *a, const char *b);
/* The closest of cands[0..n) to name within a third of its length (at
 * least 1 edit), or NULL; a name under 3 bytes gets none. */
const char *ir_suggest(const char *name, const char *const *cands, int n);
bool ir_is_elementwise(OpId op);               /* unary, binary or where */
/* Whether element type dt is one that the type set takes. */
bool ir_types_take(TypeSet ts, DType dt);

/* ---- kernels --------------------------------------------------------- */

#define IR_KERNEL_KINDS(X)                       \
	X(MATMUL_EPILOGUE, "matmul_epilogue")        \
	X(MATMUL, "matmul")                          \
	X(ELEMENTWISE, "elementwise")                \
	X(REDUCTION, "reduction")                    \
	X(ROW_REDUCTION, "row_reduction")            \
	X(OPAQUE, "opaque")                          \
	X(CONV_EPILOGUE, "conv_epilogue")            \
	X(ATTENTION, "attention")

typedef enum KernelKind {
#define X(id, name) KK_##id,
	IR_KERNEL_KINDS(X)
#undef X
	KK_COUNT
} KernelKind;

extern const char *const ir_kernel_kinds[KK_COUNT];
int ir_kernel_kind_lookup(const char *name);   /* -1 if unknown */

/* Kernel attributes (the tile configuration autotune chooses), in printing
 * order.  All are positive integers. */
#define IR_KERNEL_ATTRS(X) \
	X(BM, "BM")            \
	X(BN, "BN")            \
	X(BK, "BK")            \
	X(WARPS, "warps")      \
	X(STAGES, "stages")    \
	X(SPLIT, "split")

typedef enum KAttrId {
#define X(id, name) KA_##id,
	IR_KERNEL_ATTRS(X)
#undef X
	KA_COUNT
} KAttrId;

extern const char *const ir_kattr_names[KA_COUNT];
int ir_kattr_lookup(const char *name);         /* -1 if unknown */
/* Block sizes (BM, BN, BK) that a kernel's text or lower-tiled's options
 * give must be powers of two: Triton's tl.arange takes no other length, and
 * a kernel aicm tunes is one Triton could run (DESIGN section 13). */
static inline bool ir_kattr_is_block(int a) { return a == KA_BM || a == KA_BN || a == KA_BK; }
static inline bool ir_is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
#define IR_POW2_WHY "a power of two (Triton's tl.arange takes no other length)"

/* A kernel: the nodes first..last (inclusive) of its graph; its root, whose
 * value is the kernel's output, is the last. */
typedef struct Kernel {
	const char *name;            /* without '@' */
	KernelKind kind;
	int first, last;
	unsigned kset;               /* bit per KAttrId written */
	int64_t kattr[KA_COUNT];
	Loc loc;                     /* the 'kernel' keyword */
	Loc nameloc;
} Kernel;

/* ---- nodes and graphs ------------------------------------------------ */

typedef struct Node {
	OpId op;
	const char *name;            /* the value's name, without '%' */
	int nin;
	int *in;                     /* nin operand node indices, all < this
	                              * one's, in the graph's arena
	                              * (ir_set_nin) */
	Type type;
	Attrs at;
	int kernel;                  /* index into Graph.kernels, or -1 */
	Loc loc;                     /* '%name' where it is defined */
	Loc oploc;                   /* the op's name */
	Loc *inloc;                  /* nin, beside in */
	Loc typeloc;
	/* Loc[ATTR_COUNT] in the graph's arena, or NULL: most nodes have no
	 * attributes, and inline it was a fifth of a node (ir_attr_loc). */
	Loc *attrloc;
	struct TileFn *tile;         /* a lowered kernel (tile.h), or NULL */
} Node;

/* Node names (ir.c), on hash.h's slots: an item is a node index. */
typedef struct NameTab {
	HashSlot *slot;
	size_t cap;                  /* power of two */
	size_t n;
	int dup;                     /* a node whose name an earlier one has, + 1 */
} NameTab;

typedef struct Graph {
	Arena arena;
	const char *name;            /* without '@'; NULL if unnamed */
	Loc loc;
	Node *nodes;
	int nnodes, capnodes;
	Kernel *kernels;
	int nkernels, capkernels;
	int *ret;                    /* explicit return list, or NULL */
	int nret;
	Loc retloc;
	NameTab names;
} Graph;

/* ir.c */
Graph *ir_graph_new(void);
void ir_graph_free(Graph *g);
/* Appends a node (zeroed but for op, name, kernel = -1, type.rank = -1) and
 * enters its name; returns its index.  The name must be unique. */
int ir_add_node(Graph *g, OpId op, const char *name);
/* Gives node i room for nin operands (in[] and inloc[] zeroed, in the
 * arena) and sets its nin. */
void ir_set_nin(Graph *g, int i, int nin);
int ir_lookup(const Graph *g, const char *name);   /* node index or -1 */
/* Where attribute a is written, or a zero Loc (line 0) if nowhere. */
Loc ir_attr_loc(const Node *n, AttrId a);
/* The parser's side of the name table.  ir_name_prefetch returns name's
 * hash and starts loading its slot: a definition's slot is a cache miss
 * (the table is larger than the cache and names scatter over it), taken
 * while the rest of the statement is read.  ir_define is ir_add_node for
 * a name that may be taken: one probe looks and enters; it returns -1,
 * and the node that has the name in *prev, when it is taken. */
uint32_t ir_name_prefetch(const Graph *g, const char *name);
int ir_lookup_hashed(const Graph *g, const char *name, uint32_t h);
int ir_define(Graph *g, OpId op, const char *name, uint32_t h, int *prev);
/* Room for n nodes without regrowing (a hint: the parser's estimate). */
void ir_reserve(Graph *g, int n);
/* A fresh name "base.N" that no node has; allocated in the graph's arena. */
const char *ir_fresh_name(Graph *g, const char *base);
int ir_add_kernel(Graph *g, const char *name, KernelKind kind);
/* Puts the nodes in the order perm (perm[new] = old), remapping operands,
 * kernels and the return list.  The caller keeps SSA order valid. */
void ir_reorder(Graph *g, const int *perm);
/* Keeps the nodes with map[i] >= 0 (map[i]: the new index, in the old
 * order), moved down in place; remaps operands, tiled kernels' operands and
 * the return list, which must name kept nodes only.  No kernels allowed. */
void ir_compact(Graph *g, const int *map);
/* A new graph holding kernel k of g alone, named and configured as cand
 * (k itself, or a candidate with other attributes): operands from outside
 * the kernel become inputs, except that a const stays a const with its
 * value=, so that a splat stays one.  The caller frees it with
 * ir_graph_free.  (autotune{measure=true} times kernels on such copies.) */
Graph *ir_extract_kernel(const Graph *g, const Kernel *k, const Kernel *cand);

/* The outputs: the explicit return list, or every computed value that
 * nothing consumes.  Returns their count; *out is malloc'd (caller frees). */
int ir_outputs(const Graph *g, int **out);
/* What a graph still needs before an engine runs it, as aicm-run and
 * libaicm decide: a value of unknown type (shape-infer), a compute op not
 * lowered (lower-tiled, DESIGN §7), a tiled kernel (which the reference
 * interpreter cannot run). */
bool ir_has_untyped(const Graph *g);
bool ir_has_unlowered(const Graph *g);
bool ir_has_tiled(const Graph *g);
/* Whether the return list equals the default outputs (then it is not
 * printed). */
bool ir_return_is_default(const Graph *g);

/* Consumers of every node, compressed: the users of node i are
 * user[start[i] .. start[i+1]-1], in definition order (a node using the same
 * value twice appears twice). */
typedef struct Users {
	int *start;
	int *user;
} Users;
void ir_users(const Graph *g, Users *u);
void ir_users_free(Users *u);

/* The op's flops by the op table's rule; INT64_MAX when it overflows. */
int64_t ir_node_flops(const Graph *g, int i);

/* shape.c */
/* The result type of node i from its operands' types and its attributes.
 * All operand types must be known.  Returns 0, or -1 after writing a message
 * to err (what is wrong, naming the op and the operand shapes) and setting
 * *where to the place to point at. */
enum { IR_ERR_MAX = 512 };
int ir_infer_type(const Graph *g, int i, Type *out, char *err, Loc *where);
/* Infers node i's type (operands and result all known) and compares it
 * with the one it has; 0 if they agree, else -1 with the message in err. */
int ir_check_type(const Graph *g, int i, char *err, Loc *where);
/* Whether reduction node i reduces its operand's last axis and no other
 * (the row reductions of fuse's row_reduction kind). */
bool ir_reduces_last_axis(const Graph *g, int i);
/* Whether t is a row statistic of iteration shape iter: iter with its
 * last dim 1, the same rank (a mean kept as (rows, 1)); false when iter's
 * rows are one element wide (the shapes are then the same).  fuse's
 * row-fusion rule and the verifier's row_reduction rule. */
bool ir_is_row_stat(const Type *t, const Type *iter);
/* A reduction's axes: mask[k] for each reduced axis of an operand of the
 * given rank; returns how many (all of them when axis= is absent). */
int ir_reduce_mask(const Node *n, int rank, bool *mask);
/* Normalises a reduction axis: 0 <= axis < rank when one axis is reduced,
 * -1 for all axes, -2 for several but not all (ir_reduce_mask). */
int ir_reduce_axis(const Node *n, int rank);
/* The shape rules of the copy ops (shape_copy.c: concat, slice, pad,
 * gather, expand) and of the windowed ops (shape_window.c: conv2d and the
 * pools), as ir_infer_type: the result's dims (its element type is the
 * table's), or -1 with the message and the place. */
int ir_shape_copy(const Graph *g, const Node *n, Type *out, char *err, Loc *where);
int ir_shape_window(const Graph *g, const Node *n, Type *out, char *err, Loc *where);
/* ONNX Slice's range along one dimension of size d > 0 (shape_copy.c):
 * the first index taken and how many, stepping by step != 0, after
 * negative indices count from the end and the clamping. */
void ir_slice_range(int64_t d, int64_t start, int64_t end, int64_t step, int64_t *first,
    int64_t *len);

/* view.c: layout ops as strided views (DESIGN §13).  A tensor's buffer
 * seen with dims dim[], element i at offset + sum(i_k * stride_k); a
 * stride of 0 is a dim that expand stretched. */
typedef struct IrView {
	int rank;
	int64_t dim[IR_MAX_RANK];
	int64_t stride[IR_MAX_RANK];
	int64_t offset;
} IrView;
/* The contiguous (row-major) view of a tensor of type t. */
void ir_view_dense(const Type *t, IrView *v);
/* Whether node i is an op that a view can stand for: transpose, reshape,
 * expand, slice (ir_view_apply still refuses some). */
bool ir_is_view_op(const Graph *g, int i);
/* Whether a kernel of kind k reads its layout ops (other than its root) as
 * views: every computing kind (attention too: its absorbed transpose of
 * the keys is a view that its program reads as K's rows transposed in the
 * tile, passes/lower_attention.c). */
bool ir_kind_has_views(KernelKind k);
/* Applies layout op i to *v, the view of its operand: true, or false with
 * the reason (*why, static text) when the result is no strided view of the
 * same buffer (a reshape merging non-contiguous dims, a negative step). */
bool ir_view_apply(const Graph *g, int i, IrView *v, const char **why);

/* print.c */
void ir_print(FILE *f, const Graph *g);
char *ir_print_str(const Graph *g, size_t *len); /* malloc'd */
/* JSON for the reports (one style everywhere: print.c): a quoted, escaped
 * string; a number with 17 digits, or null when not finite. */
void ir_json_str(FILE *f, const char *s);
void ir_json_num(FILE *f, double v);
/* Shortest text that reads back to the same double, numpy's way for
 * specials: "inf", "-inf", "nan", and "-nan" for a NaN with its sign bit
 * set (the parser takes it; a NaN's payload cannot be written, and
 * strtod gives every NaN the default one). */
void ir_fmt_double(char *buf, size_t n, double v);

/* dot.c */
/* A Graphviz picture: each kernel a labelled cluster with its kind, the
 * edges that cross into a kernel from another compute op dashed (they are
 * the unfused ones, whose values go through memory). */
void ir_print_dot(FILE *f, const Graph *g);

/* verify.c */
/* diag.h, which includes this header, defines Diag; C11 allows the same
 * typedef twice, so the verifier's prototype can live with the IR. */
typedef struct Diag Diag;
/* Checks the structural invariants (SSA order, arity, attributes, kernels,
 * the return list) and every type that can be checked against the shape
 * rules.  Reports each violation; returns the number found. */
int ir_verify(const Graph *g, Diag *d);
/* The same for a tool's input, which is also held to be inferable: an
 * unwritten type whose operands' types are known must follow from them,
 * so that every independent shape error is reported at once (not those
 * shape-infer would find hidden behind a wrong written type). */
int ir_verify_input(const Graph *g, Diag *d);

#endif
