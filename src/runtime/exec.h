/*
 * exec.h: the runtime: tensors, the reference interpreter, .npy files and
 * the random input generator.
 *
 * A Tensor is a dense C-order array of one element type, its data 64-byte
 * aligned so that vector code may load it whole.  Execution works on one
 * Tensor per graph node ("vals", indexed like Graph.nodes): the caller fills
 * in the sources (input, const), an engine fills in every computed node.
 * The reference interpreter runs the ops in node order with plain loops and
 * is the oracle that every other engine is checked against; its kernels are
 * indexed by the op ids of ops.def, so adding an op is a row there and a
 * kernel in interp.c.  Sizes are checked against limits before anything is
 * allocated (exec_check_limits), so no graph allocates without bound.
 *
 * The runtime includes the IR and the diagnostics, never a pass.
 */
#ifndef AICM_EXEC_H
#define AICM_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "ir.h"
#include "scalar.h"

/* ---- tensor.c -------------------------------------------------------- */

typedef struct Tensor {
	DType dt;
	int rank;
	int64_t dim[IR_MAX_RANK];
	int64_t numel;
	void *data;                  /* 64-byte aligned, NULL when empty */
} Tensor;

enum { EXEC_ALIGN = 64 };

/* The bytes a tensor of type t needs, or -1 when the count overflows. */
int64_t exec_type_bytes(const Type *t);
/* Allocates t's data for type ty, uninitialised, refusing more than
 * max_bytes (<= 0: no limit but overflow).  Returns 0, or -1 when refused
 * or out of memory (t stays empty): the limits are what the user set, so
 * running out is the input's size, reported, not a crash. */
int exec_tensor_alloc(Tensor *t, const Type *ty, int64_t max_bytes);
void exec_tensor_free(Tensor *t);
void exec_tensors_free(Tensor *vals, int n);
size_t exec_tensor_bytes(const Tensor *t);
/* The tensor's type, for comparing it with the IR's. */
Type exec_tensor_type(const Tensor *t);
bool exec_tensor_has_type(const Tensor *t, const Type *ty);
/* Element i as a double, and the store that rounds to the element type
 * (to an integer type: truncated toward zero and saturated, NaN to 0, as
 * cast does; to bool: v != 0). */
static inline double
exec_get(const Tensor *t, int64_t i)
{
	switch (t->dt) {
	case DT_F32:
		return (double)((const float *)t->data)[i];
	case DT_I32:
		return (double)((const int32_t *)t->data)[i];
	case DT_I64:
		return (double)((const int64_t *)t->data)[i];
	case DT_BOOL:
		return (double)((const uint8_t *)t->data)[i];
	default:
		return ((const double *)t->data)[i];
	}
}
/* Element i of an integer or bool tensor, exactly (a float one: as
 * exec_set would store it in an i64). */
static inline int64_t
exec_geti(const Tensor *t, int64_t i)
{
	switch (t->dt) {
	case DT_I32:
		return ((const int32_t *)t->data)[i];
	case DT_I64:
		return ((const int64_t *)t->data)[i];
	case DT_BOOL:
		return ((const uint8_t *)t->data)[i];
	default: {
		double v = exec_get(t, i);

		return v != v ? 0 : v >= 0x1p63 ? INT64_MAX : v < -0x1p63 ? INT64_MIN : (int64_t)v;
	}
	}
}
/* Stores an integer exactly: an i32 keeps the low 32 bits (wrapping), a
 * bool v != 0, a float the nearest value. */
static inline void
exec_seti(Tensor *t, int64_t i, int64_t v)
{
	switch (t->dt) {
	case DT_I32:
		((int32_t *)t->data)[i] = (int32_t)(uint32_t)(uint64_t)v;
		break;
	case DT_I64:
		((int64_t *)t->data)[i] = v;
		break;
	case DT_BOOL:
		((uint8_t *)t->data)[i] = v != 0;
		break;
	case DT_F32:
		((float *)t->data)[i] = ir_i64_to_f32(v);   /* rounded once */
		break;
	default:
		((double *)t->data)[i] = (double)v;
		break;
	}
}
static inline void
exec_set(Tensor *t, int64_t i, double v)
{
	switch (t->dt) {
	case DT_F32:
		((float *)t->data)[i] = (float)v;
		break;
	case DT_I32:
		((int32_t *)t->data)[i] = v != v ? 0 : v >= 0x1p31 ? INT32_MAX :
		    v < -0x1p31 ? INT32_MIN : (int32_t)v;
		break;
	case DT_I64:
		((int64_t *)t->data)[i] = v != v ? 0 : v >= 0x1p63 ? INT64_MAX :
		    v < -0x1p63 ? INT64_MIN : (int64_t)v;
		break;
	case DT_BOOL:
		((uint8_t *)t->data)[i] = v != 0;
		break;
	default:
		((double *)t->data)[i] = v;
		break;
	}
}

/* Limits of DESIGN §7: the largest tensor and all of them together. */
typedef struct ExecLimits {
	int64_t max_bytes;           /* per tensor */
	int64_t max_total_bytes;     /* sum over every graph given */
} ExecLimits;

#define EXEC_DEFAULT_MAX_BYTES ((int64_t)4 << 30)
/* --max-work's default, in flops (work.c): about half a minute of the tile
 * executor's matmul on the 2-core machine this was written on (36 GFLOP/s),
 * minutes of elementwise work or of the reference interpreter (docs/run.md,
 * "Limits"). */
#define EXEC_DEFAULT_MAX_WORK ((int64_t)1000000000000)
/* Half the machine's physical memory (4 GiB when it cannot be told). */
int64_t exec_default_max_total(void);
/* Checks every node of the graphs against the limits before anything is
 * allocated: a tensor over max_bytes is reported at its definition with
 * its name, type and size; the total with the largest tensor.  Untyped
 * nodes are reported too.  Returns 0 or -1 (diagnostics given). */
int exec_check_limits(const Graph *const *gs, int ngraphs, const ExecLimits *lim, Diag *d);
/* What max_total_bytes leaves beside the graphs' tensors (which passed
 * exec_check_limits), for the copies an engine keeps (the tile engine's
 * packed consts, exec_tile_compile_within); -1 when there is no limit. */
int64_t exec_limits_room(const Graph *const *gs, int ngraphs, const ExecLimits *lim);

/* Error measure of DESIGN §7 between a (the result) and b (the reference):
 * max|a - b| / max(max|b|, 1) over finite b; NaN matches NaN, an infinity
 * the same infinity, anything else against a NaN or an infinity is an
 * error of +inf.  Integers and bools compare exactly: any difference is
 * an error of +inf.  worst gets the flat index of the worst element (-1 when
 * none differs); maxabs the largest |a - b| (inf for a special mismatch).
 * The shapes and element types must be equal (the caller checks). */
typedef struct ExecErr {
	double maxabs;
	double rel;
	int64_t worst;
} ExecErr;
ExecErr exec_compare(const Tensor *a, const Tensor *b);
/* "[1, 2]": the multi-index of flat element i; buf of IR_TYPE_STR bytes. */
char *exec_index_str(const Tensor *t, int64_t i, char *buf);

/* numpy's str() of the tensor with elements in %.6g (integers exact, bools
 * True and False): edges with "..."
 * past 1000 elements (3 items per edge), lines wrapped at 75 columns. */
void exec_print_preview(FILE *f, const Tensor *t);
/* Sum (accumulated in f64), min and max; NaN propagates as in numpy. */
void exec_stats(const Tensor *t, double *sum, double *min, double *max);
/* %.6g, but "nan", "inf", "-inf" as numpy writes them. */
void exec_fmt_g(char *buf, size_t n, double v);
/* Element i as numpy prints it: floats as exec_fmt_g, integers exactly,
 * bools True and False. */
void exec_fmt_elem(char *buf, size_t n, const Tensor *t, int64_t i);
/* exec_stats printed, each into n bytes: for floats exec_fmt_g of the
 * figures, for integers and bools the exact sum (an int64, wrapping, as
 * numpy's; a bool's counts the Trues) and the min and max elements as
 * exec_fmt_elem prints them. */
void exec_stats_fmt(const Tensor *t, char *sum, char *min, char *max, size_t n);

/* ---- work.c ---------------------------------------------------------- */

struct TileFn;
/* The planned flops of a tiled body: per program (into *per_program when
 * not NULL) times the grid's programs; loops count their trips, tiles
 * count whole, and an instruction at least 1024 (its cost however small
 * its tile). */
double exec_tile_work(const struct TileFn *f, double *per_program);
/* Node i's planned flops: its tiled body's, or for a graph op the op
 * table's flops, at least one per result element and at least 1024; 0
 * for a source. */
double exec_node_work(const Graph *g, int i);
/* Checks, before anything runs, that the graphs, gs[k] run runs[k] times,
 * plan at most max_work flops together (<= 0: no limit).  Over it, the
 * error is at the node that does the most, with its figure and the flag
 * (--max-work).  Returns 0 or -1 (diagnostics given). */
int exec_check_work(const Graph *const *gs, const int *runs, int ngraphs, int64_t max_work,
    Diag *d);
/* A flop count as --max-work takes it: "1T", "500G", "1500". */
const char *exec_work_str(int64_t v, char *buf, size_t n);

/* ---- rng.c ----------------------------------------------------------- */

/* The documented generator (docs/run.md): splitmix64 seeded with
 * seed * 0x9E3779B97F4A7C15 ^ FNV-1a-64(name); each element takes the next
 * output; f64 is (z >> 11) * 2^-53 * 2 - 1, f32 is (z >> 40) * 2^-24 * 2 - 1,
 * both exact and in [-1, 1); i32 and i64 are z >> 61, in [0, 8); bool is
 * z >> 63. */
uint64_t exec_fnv1a64(const char *s);
void exec_fill_random(Tensor *t, uint64_t seed, const char *name);
void exec_fill_splat(Tensor *t, double v);
/* Fills const n's tensor from its value= (a splat) or values= (row-major),
 * exactly for integer types when they were written as integers (at.ivalue,
 * at.ivalues); returns false when n has neither (the caller fills it some
 * other way). */
bool exec_fill_const(Tensor *t, const Node *n);

/* ---- npy.c ----------------------------------------------------------- */

/* What a .npy header says. */
typedef struct NpyHeader {
	int major, minor;
	size_t data_off;             /* where the data starts */
	char descr[16];              /* as written: "<f8" */
	bool fortran;                /* the data is in Fortran (column-major) order */
	bool swap;                   /* the data is big-endian ('>f4', '>i8', ..) */
	bool dt_ok;                  /* descr is '<f4', '<f8', '<i4', '<i8' or
	                              * their '>' forms, or '|b1' */
	DType dt;
	int rank;
	int64_t dim[IR_MAX_RANK];
} NpyHeader;

enum { EXEC_ERR_MAX = 1024 };
/* Parses the header at the start of buf[0..len).  Returns 0, or -1 with a
 * message in err (it does not name the file; the caller does).  Accepts
 * versions 1.0, 2.0 and 3.0; any dtype is parsed, dt_ok says if it is one
 * aicm holds. */
int exec_npy_parse_header(const unsigned char *buf, size_t len, NpyHeader *h, char *err);
/* Reads path into t.  want, when not NULL, is the type the IR wants: the
 * file must hold exactly that (element type and shape), checked before
 * anything is allocated; wantname says whose type it is in the message
 * ("'%x' in the IR"); max_bytes bounds the allocation (<= 0: none).
 * Returns 0; -1 when the content is wrong (exit 1), -2 when the file cannot
 * be read (exit 2); err names the file, what it holds and what is wanted. */
int exec_npy_read(const char *path, const Type *want, const char *wantname, int64_t max_bytes,
    Tensor *t, char *err);
/* Reads the data of const n, written file="PATH": PATH is taken relative
 * to datadir (NULL: the current directory) and must resolve, symbolic
 * links followed, to a file inside it.  Otherwise as exec_npy_read, the
 * file checked against n's type: 0, -1 (a path that leads outside, or
 * wrong content: exit 1) or -2 (cannot be read: exit 2). */
int exec_const_read(const char *datadir, const Node *n, int64_t max_bytes, Tensor *t,
    char *err);
/* Writes t as a version 1.0 .npy file, whole or not at all.  Returns 0 or
 * -1 with the message in err. */
int exec_npy_write(const char *path, const Tensor *t, char *err);

/* ---- interp.c -------------------------------------------------------- */

/* Runs g with the reference kernels, in node order; kernel blocks are
 * ignored.  vals has one Tensor per node: the sources filled in by the
 * caller with their nodes' types; every computed node gets its result
 * (a tensor already of the right type is reused, so reruns allocate
 * nothing).  Every node must be typed.  Returns 0, or -1 after a
 * diagnostic (an untyped node, a source missing or of the wrong type). */
int exec_interp(const Graph *g, Tensor *vals, Diag *d);

/* A reference kernel: in[0..n->nin-1] are the operands, out is allocated
 * with the node's type.  Returns 0, or -1 with what went wrong in err (of
 * IR_ERR_MAX bytes: an integer division by zero, a gather index out of
 * range), which the interpreter reports at the node. */
typedef int (*ExecKernel)(const Node *n, const Tensor *const *in, Tensor *out, char *err);
extern const ExecKernel exec_ref_kernels[OP_COUNT];
/* The kernels of interp_copy.c and interp_window.c. */
#define EXEC_KERNEL_(ID) int exec_kern_##ID(const Node *n, const Tensor *const *in, Tensor *o, \
    char *err);
EXEC_KERNEL_(CONCAT)
EXEC_KERNEL_(SLICE)
EXEC_KERNEL_(PAD)
EXEC_KERNEL_(GATHER)
EXEC_KERNEL_(EXPAND)
EXEC_KERNEL_(CONV2D)
EXEC_KERNEL_(MAX_POOL2D)
EXEC_KERNEL_(AVG_POOL2D)
#undef EXEC_KERNEL_

#endif
