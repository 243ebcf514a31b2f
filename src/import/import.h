/*
 * import.h: aicm-import, ONNX models translated into the graph IR.
 *
 * The reader is protobuf-c's, generated at build time from Debian's
 * onnx.proto (onnx.pb-c.h in the build folder).  imp_onnx walks the
 * model's graph once, in ONNX's node order, keeping one ImpVal per ONNX
 * value name: the aicm node that computes it, or the elements themselves
 * when they are known at import time (an initializer, a Constant, a --bind,
 * or a shape computation folded here: Shape, Gather, Concat, ... over known
 * values).  Known values become const nodes only when an aicm op reads them
 * as data, so that a folded shape computation leaves nothing behind and an
 * attribute-like operand (Reshape's shape, Slice's starts) becomes the
 * attribute it is.
 *
 * Each ONNX op is a row of onnx_ops.def naming its translator, a function
 * of one of the ops_*.c files (one file a family).  A translator reads its
 * node's inputs and attributes through the imp_ helpers below, emits aicm
 * nodes whose types are inferred as they are made (so every shape error is
 * caught at the node that causes it), and binds the node's outputs.  It
 * never writes a wrong graph: what it cannot translate is one error
 * starting "unsupported:", naming the node and its op type (imp_unsupported);
 * an attribute it did not read, or an output it did not bind, is one too.
 */
#ifndef AICM_IMPORT_H
#define AICM_IMPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "hash.h"
#include "ir.h"
#include "onnx.pb-c.h"

/* ---- the interface (import.c) ---------------------------------------- */

/* Elements known at import time: row-major in the element type's C type
 * (double, float, int32_t, int64_t, and uint8_t 0 or 1 for bool). */
typedef struct ImpData {
	Type type;
	void *p;                     /* malloc'd, owned by the importer */
} ImpData;

/* --shape NAME=DIMS: the whole shape of graph input NAME. */
typedef struct ImpShape {
	const char *name;            /* ONNX's name */
	int rank;
	int64_t dim[IR_MAX_RANK];
} ImpShape;

/* --bind NAME=F.npy: graph input NAME frozen as a constant (the tool reads
 * the file; its element type must be the input's). */
typedef struct ImpBind {
	const char *name;
	const char *file;            /* for messages */
	Type type;
	const void *p;
	/* Why the file could not be taken (its elements are of a type aicm
	 * lacks, ...), or NULL: reported only once the input's own type is
	 * known to be one aicm has, so that an int8 input is unsupported for
	 * being int8. */
	const char *err;
} ImpBind;

typedef struct ImpOptions {
	const ImpShape *shapes;
	int nshapes;
	const ImpBind *binds;
	int nbinds;
	/* The folder of file= paths, relative to the .aicm's folder
	 * ("model.weights"); a file-safe name, no '/'. */
	const char *weights;
	/* The .onnx file's folder, where external data is looked for. */
	const char *model_dir;
} ImpOptions;

/* A .npy file to write beside the graph: weights/NAME.npy. */
typedef struct ImpWeight {
	const char *file;            /* as file= says: "model.weights/fc1_weight.npy" */
	Type type;
	const void *p;
} ImpWeight;

typedef struct ImpResult {
	Graph *g;
	ImpWeight *w;
	int nw;
	void *priv;                  /* what the weights' elements live in */
} ImpResult;

/* The most bytes of .onnx aicm-import reads (protobuf's own 2 GiB limit). */
#define IMP_MAX_MODEL ((size_t)2 << 30)
/* The most bytes of external data (data_location EXTERNAL) it reads, all
 * the model's tensors together: what a model refers to is bounded as what
 * it holds is. */
#define IMP_MAX_EXTERNAL ((size_t)4 << 30)
enum { IMP_ERR_MAX = 1024 };
/* The deepest a message may nest in the .onnx (the model is level 1; a
 * subgraph in a node's attribute is three levels below its graph): deeper
 * is refused before protobuf-c's recursive unpacking could overflow the
 * stack. */
enum { IMP_MAX_NESTING = 100 };

/* Translates the serialised ModelProto buf[0..len) into r.  Returns 0;
 * 1 with a message "unsupported: ..." in err when the model uses what aicm
 * cannot express; -1 with another message when the input is wrong (a
 * corrupt file, an unknown opset, a dynamic dimension without --shape, an
 * initializer whose size does not match its dims, ...).  Nothing is left
 * allocated after an error.  imp_result_free frees r after success. */
int imp_onnx(const void *buf, size_t len, const ImpOptions *o, ImpResult *r, char *err);
void imp_result_free(ImpResult *r);
/* The name an ONNX value gets in aicm: a leading '/' dropped, a trailing
 * "_output_0" made "_out", every byte outside [A-Za-z0-9_] made '_', a
 * '_' in front of a name that starts with a digit and is not all digits,
 * "v" for an empty one (the caller makes it unique).  Malloc'd. */
char *imp_safe_name(const char *onnx);

/* ---- for the translators (import.c) ----------------------------------- */

/* One ONNX value. */
typedef struct ImpVal {
	const char *name;            /* ONNX's */
	Type type;                   /* rank < 0: not known yet */
	int node;                    /* the aicm node, or -1 (a known value
	                              * not read as data yet) */
	ImpData *k;                  /* the elements when known, or NULL */
} ImpVal;

typedef struct Imp {
	const ImpOptions *o;
	Graph *g;
	int64_t opset;               /* of the default domain */
	ImpVal *val;
	int nval, capval;
	HashMap byname;
	int ninit;                   /* val[0..ninit): the initializers */
	/* the node being translated */
	const Onnx__NodeProto *n;
	int nodeidx;
	uint64_t attrs_read;         /* bit per attribute its translator read */
	bool *out_bound;             /* per output */
	/* weights to write, and every ImpData made */
	ImpWeight *w;
	int nw, capw;
	ImpData **datas;
	int ndatas, capdatas;
	char *err;
	int rc;                      /* 0, 1 unsupported, -1 error */
	size_t ext_bytes;            /* external data read so far */
} Imp;

/* A translator: 0, or -1 after imp_fail or imp_unsupported. */
typedef int (*ImpFn)(Imp *im);

/* Errors about the node being translated: "unsupported: node 'N' (Op):
 * ..." and "node 'N' (Op): ...".  Both return -1. */
int imp_unsupported(Imp *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int imp_fail(Imp *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Inputs.  imp_nin is how many the node lists (trailing empty names
 * count; an empty name is an absent optional input); imp_in is input k or
 * NULL when it is absent (k past the list or an empty name). */
int imp_nin(const Imp *im);
ImpVal *imp_in(Imp *im, int k);
/* imp_in that must be present: NULL after imp_fail when it is not. */
ImpVal *imp_in_req(Imp *im, int k);
/* The aicm node that holds v, a const made for a known value on first
 * use; -1 after an error. */
int imp_node_of(Imp *im, ImpVal *v);
/* A const node holding known data d that no ONNX value names (an
 * intermediate of a decomposition: Trilu's mask), named after name (an
 * ONNX name made safe and unique; NULL: a fresh name from the node's
 * first output, "y.N"); -1 after an error. */
int imp_const(Imp *im, ImpData *d, const char *name);
/* v's elements when known, else NULL. */
static inline const ImpData *imp_known(const ImpVal *v) { return v ? v->k : NULL; }
/* Input k's elements as int64s (an attribute-like operand: Reshape's
 * shape, Slice's starts): its count, or -1 after an error (absent, not
 * known at import time — bind it with --bind —, not an integer type, more
 * than max elements).  *v is malloc'd, freed with the importer. */
int imp_in_ints(Imp *im, int k, const char *what, int64_t **v, int max);
/* Input k as one number (Clip's min, Pad's value): 0 with *d, or -1. */
int imp_in_scalar(Imp *im, int k, const char *what, double *d);

/* Attributes.  Each getter marks the attribute read; an attribute that no
 * getter read is unsupported.  Present with another type: imp_fail. */
const Onnx__AttributeProto *imp_attr(Imp *im, const char *name);
bool imp_has_attr(Imp *im, const char *name);  /* marks it read */
int imp_attr_int(Imp *im, const char *name, int64_t def, int64_t *out);
int imp_attr_float(Imp *im, const char *name, double def, double *out);
/* A string attribute (NUL-terminated copy, or def). */
int imp_attr_str(Imp *im, const char *name, const char *def, const char **out);
/* INTS: the count (-1 after an error, 0 absent or empty, *present
 * tells), the values in *v (the model's own array). */
int imp_attr_ints(Imp *im, const char *name, const int64_t **v, bool *present);
int imp_attr_floats(Imp *im, const char *name, const float **v, bool *present);
/* A TENSOR attribute as known data; NULL when absent, -1 rc on error
 * (then *bad is set). */
ImpData *imp_attr_tensor(Imp *im, const char *name, bool *bad);
/* Reads and drops attributes that do not change the result (a Dropout's
 * seed); NULL-terminated. */
void imp_attr_ignore(Imp *im, ...);

/* Outputs.  imp_nout: how many the node lists; imp_out_wanted: whether
 * output k is listed with a name. */
int imp_nout(const Imp *im);
bool imp_out_wanted(const Imp *im, int k);
/* Binds output k to aicm node i (0), or to known data (which the importer
 * then owns). */
int imp_out(Imp *im, int k, int i);
int imp_out_known(Imp *im, int k, ImpData *d);
/* The name for the node that computes output k. */
const char *imp_out_name(Imp *im, int k);

/* Emitting nodes.  imp_new makes node op over in[0..nin) named name (NULL:
 * a fresh one from the node's first output); the caller sets its
 * attributes on imp_at (valid until the next node is made), then
 * imp_done infers its type.  Both return the node index, -1 after an
 * error. */
int imp_new(Imp *im, OpId op, const char *name, int nin, const int *in);
static inline Attrs *imp_at(Imp *im, int i) { return &im->g->nodes[i].at; }
int imp_done(Imp *im, int i);
/* The common shapes of those: an op without attributes, made and typed. */
int imp_op(Imp *im, OpId op, const char *name, int nin, const int *in);
int imp_unary(Imp *im, OpId op, const char *name, int a);
int imp_binary(Imp *im, OpId op, const char *name, int a, int b);
/* A splat constant of element type dt, shape () unless rank > 0. */
int imp_splat(Imp *im, DType dt, double v, int rank, const int64_t *dim);
/* Sets a tuple attribute. */
void imp_set_ints(Imp *im, int i, AttrId a, const int64_t *v, int n);
/* A reshape of node a to dims[0..rank) (named name, or fresh). */
int imp_reshape(Imp *im, const char *name, int a, int rank, const int64_t *dims);
/* The type of node i. */
static inline const Type *imp_type(const Imp *im, int i) { return &im->g->nodes[i].type; }

/* Known data.  imp_data_new allocates zeroed elements for type t; the
 * importer owns and frees it. */
ImpData *imp_data_new(Imp *im, const Type *t);
double imp_data_f64(const ImpData *d, int64_t i);
int64_t imp_data_i64(const ImpData *d, int64_t i);
void imp_data_set(ImpData *d, int64_t i, double v, int64_t iv);
/* An axis attribute normalised into 0..rank-1, or -1 after imp_fail. */
int imp_axis(Imp *im, int64_t axis, int rank, const char *what);

/* ---- the op table (onnx_ops.def; ops_*.c) ----------------------------- */

#define ONNX_OP(name, fn) int fn(Imp *im);
#include "onnx_ops.def"
#undef ONNX_OP

#endif
