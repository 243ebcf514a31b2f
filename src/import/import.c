/*
 * import.c: the ONNX model walked once into a Graph (import.h has the
 * design).
 *
 * The walk: the default domain's opset; the initializers as known values;
 * the graph inputs (those that are not initializers) as input nodes in
 * ONNX's order, or as known values when --bind freezes them; each node
 * through its translator (onnx_ops.def), after which every attribute must
 * have been read and every named output bound; then the graph outputs, in
 * ONNX's order, as the return list, each a node named after its ONNX
 * output (a copy when the value has another name: an Identity's output, a
 * graph input).  The result is verified before it is handed back: a graph
 * that does not verify is the importer's bug, not the model's.
 *
 * Errors are written into the caller's buffer once; the first one wins and
 * the walk stops.  Every allocation of the walk is freed on every path:
 * the protobuf message by protobuf-c, the values and datas here.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "import.h"

/* ---- the op table ----------------------------------------------------- */

static const struct {
	const char *name;
	ImpFn fn;
} onnx_ops[] = {
#define ONNX_OP(name, fn) {name, fn},
#include "onnx_ops.def"
#undef ONNX_OP
};
enum { NONNX = sizeof onnx_ops / sizeof onnx_ops[0], ONNXIDX = 1024 };
_Static_assert(2 * NONNX <= ONNXIDX, "the ONNX op index must stay half empty");

static HashSlot onnx_index[ONNXIDX];

static const char *
onnx_op_name(uint32_t row)
{
	return onnx_ops[row].name;
}

static ImpFn
onnx_lookup(const char *name)
{
	static bool built;
	int r;

	/* built once, before any thread could race: aicm-import is one */
	if (!built) {
		hash_names_build(onnx_index, ONNXIDX, NONNX, onnx_op_name);
		built = true;
	}
	r = hash_names_find(onnx_index, ONNXIDX, onnx_op_name, name);
	return r < 0 ? NULL : onnx_ops[r].fn;
}

/* ---- errors ----------------------------------------------------------- */

/* "node 'N' (Op)" or, for a node without a name, "node #K (Op) computing
 * 'out'". */
static void
node_words(const Imp *im, char *buf, size_t n)
{
	const Onnx__NodeProto *nd = im->n;
	const char *op = nd->op_type && nd->op_type[0] ? nd->op_type : "?";

	if (nd->name && nd->name[0])
		snprintf(buf, n, "node '%s' (%s)", nd->name, op);
	else if (nd->n_output > 0 && nd->output[0][0])
		snprintf(buf, n, "node #%d (%s) computing '%s'", im->nodeidx, op, nd->output[0]);
	else
		snprintf(buf, n, "node #%d (%s)", im->nodeidx, op);
}

static int
vreport(Imp *im, int rc, const char *pre, const char *fmt, va_list ap)
{
	char where[512] = "";
	int k;

	if (im->rc)
		return -1;
	if (im->n) {
		node_words(im, where, sizeof where - 2);
		strcat(where, ": ");
	}
	/* the message may be cut at IMP_ERR_MAX, never overrun */
	k = snprintf(im->err, IMP_ERR_MAX, "%s%s", pre, where);
	if (k >= 0 && k < IMP_ERR_MAX)
		vsnprintf(im->err + k, IMP_ERR_MAX - (size_t)k, fmt, ap);
	im->rc = rc;
	return -1;
}

int
imp_unsupported(Imp *im, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(im, 1, "unsupported: ", fmt, ap);
	va_end(ap);
	return -1;
}

int
imp_fail(Imp *im, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(im, -1, "", fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- names ------------------------------------------------------------ */

char *
imp_safe_name(const char *onnx)
{
	const char *s = onnx;
	size_t n, k = 0;
	bool digits = true, out0;
	char *r;

	while (*s == '/')
		s++;
	n = strlen(s);
	out0 = n > 9 && strcmp(s + n - 9, "_output_0") == 0;
	if (out0)
		n -= 9;
	r = xmalloc(n + 6);
	for (size_t i = 0; i < n; i++)
		digits = digits && s[i] >= '0' && s[i] <= '9';
	if (n > 0 && s[0] >= '0' && s[0] <= '9' && !(digits && !out0))
		r[k++] = '_';
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_';

		r[k++] = ok ? c : '_';
	}
	if (out0) {
		memcpy(r + k, "_out", 4);
		k += 4;
	}
	if (k == 0)
		r[k++] = 'v';
	r[k] = 0;
	return r;
}

/* The graph's own copy of a unique name from ONNX name onnx. */
static const char *
unique_name(Imp *im, const char *onnx)
{
	char *s = imp_safe_name(onnx);
	const char *r;

	if (ir_lookup(im->g, s) < 0)
		r = arena_strndup(&im->g->arena, s, strlen(s));
	else
		r = ir_fresh_name(im->g, s);
	free(s);
	return r;
}

/* ---- known data ------------------------------------------------------- */

ImpData *
imp_data_new(Imp *im, const Type *t)
{
	ImpData *d = xcalloc(1, sizeof *d);
	int64_t n = ir_type_numel(t);

	d->type = *t;
	d->p = xcalloc((size_t)(n > 0 ? n : 1), ir_dtype_size(t->dt));
	if (im->ndatas == im->capdatas) {
		im->capdatas = im->capdatas ? 2 * im->capdatas : 64;
		im->datas = xrealloc(im->datas, sizeof *im->datas * (size_t)im->capdatas);
	}
	im->datas[im->ndatas++] = d;
	return d;
}

double
imp_data_f64(const ImpData *d, int64_t i)
{
	switch (d->type.dt) {
	case DT_F64: return ((const double *)d->p)[i];
	case DT_F32: return ((const float *)d->p)[i];
	case DT_I32: return ((const int32_t *)d->p)[i];
	case DT_I64: return (double)((const int64_t *)d->p)[i];
	case DT_BOOL: return ((const uint8_t *)d->p)[i];
	default: AICM_BUG("element type %d", (int)d->type.dt);
	}
}

int64_t
imp_data_i64(const ImpData *d, int64_t i)
{
	switch (d->type.dt) {
	case DT_I32: return ((const int32_t *)d->p)[i];
	case DT_I64: return ((const int64_t *)d->p)[i];
	case DT_BOOL: return ((const uint8_t *)d->p)[i];
	default: {
		double v = imp_data_f64(d, i);

		/* as cast does: toward zero, saturated, NaN 0 */
		if (isnan(v))
			return 0;
		if (v >= 9223372036854775807.0)
			return INT64_MAX;
		if (v <= -9223372036854775808.0)
			return INT64_MIN;
		return (int64_t)v;
	}
	}
}

void
imp_data_set(ImpData *d, int64_t i, double v, int64_t iv)
{
	switch (d->type.dt) {
	case DT_F64: ((double *)d->p)[i] = v; break;
	case DT_F32: ((float *)d->p)[i] = (float)v; break;
	case DT_I32: ((int32_t *)d->p)[i] = (int32_t)(uint32_t)(uint64_t)iv; break;
	case DT_I64: ((int64_t *)d->p)[i] = iv; break;
	case DT_BOOL: ((uint8_t *)d->p)[i] = iv != 0; break;
	default: AICM_BUG("element type %d", (int)d->type.dt);
	}
}

/* The element types of onnx_dtype, for messages. */
#define IMP_DTYPES "float, double, int32, int64 and bool"

/* ONNX's element type codes that aicm has. */
static bool
onnx_dtype(int32_t et, DType *dt)
{
	switch (et) {
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: *dt = DT_F32; return true;
	case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: *dt = DT_F64; return true;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: *dt = DT_I32; return true;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: *dt = DT_I64; return true;
	case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: *dt = DT_BOOL; return true;
	default: return false;
	}
}

static const char *
onnx_dtype_name(int32_t et)
{
	static const char *const names[] = {
		"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64",
		"string", "bool", "float16", "double", "uint32", "uint64", "complex64",
		"complex128", "bfloat16",
	};

	return et >= 0 && et < (int32_t)(sizeof names / sizeof names[0]) ? names[et] : "unknown";
}

/* Why path may not be read as external data (the rule of const file=:
 * relative, no '..'), or NULL. */
static const char *
external_path_error(const char *path)
{
	if (!ir_data_path_error(path))
		return NULL;
	if (!path[0])
		return "is empty, expected a file in the model's folder";
	if (path[0] == '/')
		return "is an absolute path, expected a path relative to the model's folder";
	return "has a '..' component, expected a path inside the model's folder";
}

/* The bytes of a tensor stored outside the model (data_location EXTERNAL):
 * location, offset and length from external_data, the file relative to
 * the model's folder.  0 with *buf (malloc'd) holding exactly want bytes,
 * or -1 after imp_fail. */
static int
external_bytes(Imp *im, const Onnx__TensorProto *t, const char *who, size_t want, char **out)
{
	const char *loc = NULL, *why;
	long long off = 0, len = -1;
	char *path, *buf;
	size_t blen;
	struct stat st;
	int fd = -1, rc = -1;

	for (size_t i = 0; i < t->n_external_data; i++) {
		const Onnx__StringStringEntryProto *e = t->external_data[i];
		char *end;

		if (!e->key || !e->value)
			continue;
		if (strcmp(e->key, "location") == 0) {
			loc = e->value;
		} else if (strcmp(e->key, "offset") == 0 || strcmp(e->key, "length") == 0) {
			long long v;

			errno = 0;
			v = strtoll(e->value, &end, 10);
			if (errno || end == e->value || *end || v < 0)
				return imp_fail(im, "%s: external data %s '%s' is not a byte count", who,
				    e->key, e->value);
			*(e->key[0] == 'o' ? &off : &len) = v;
		}
	}
	if (!loc)
		return imp_fail(im, "%s: its data is external but names no 'location'", who);
	if ((why = external_path_error(loc)) != NULL)
		return imp_fail(im, "%s: external data location '%s' %s", who, loc, why);
	if (!im->o->model_dir || strcmp(im->o->model_dir, ".") == 0) {
		path = xstrdup(loc);
	} else {
		path = xmalloc(strlen(im->o->model_dir) + strlen(loc) + 2);
		sprintf(path, "%s/%s", im->o->model_dir, loc);
	}
	/* only the bytes wanted are read: the file may hold every weight */
	if ((fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC)) < 0 || fstat(fd, &st) != 0) {
		imp_fail(im, "%s: cannot read its external data '%s': %s", who, path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		imp_fail(im, "%s: its external data '%s' is not a regular file", who, path);
		goto out;
	}
	blen = (size_t)st.st_size;
	if (len >= 0 && (size_t)len != want) {
		imp_fail(im, "%s: external data length %lld, its dims and type make %zu bytes", who,
		    len, want);
		goto out;
	}
	if ((unsigned long long)off > blen || blen - (size_t)off < want) {
		imp_fail(im, "%s: external data '%s' holds %zu bytes, %zu needed from offset %lld",
		    who, loc, blen, want, off);
		goto out;
	}
	if (want > IMP_MAX_EXTERNAL - im->ext_bytes) {
		imp_fail(im, "%s: the model's external data pass %zu bytes, the most aicm-import "
		    "reads", who, (size_t)IMP_MAX_EXTERNAL);
		goto out;
	}
	buf = xmalloc(want);
	for (size_t got = 0; got < want; ) {
		ssize_t r = pread(fd, buf + got, want - got, off + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			imp_fail(im, "%s: cannot read its external data '%s': %s", who, path,
			    r < 0 ? strerror(errno) : "the file became shorter while read");
			free(buf);
			goto out;
		}
		got += (size_t)r;
	}
	im->ext_bytes += want;
	*out = buf;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(path);
	return rc;
}

/* A TensorProto as known data (an initializer, a Constant's value, a
 * test's input); who names it in messages.  NULL after an error. */
static ImpData *
tensor_data(Imp *im, const Onnx__TensorProto *t, const char *who)
{
	Type ty = {0};
	ImpData *d;
	int64_t numel = 1;
	size_t es, bytes;
	int32_t et = t->has_data_type ? t->data_type : 0;

	if (!onnx_dtype(et, &ty.dt)) {
		imp_unsupported(im, "%s: element type %s, expected one of " IMP_DTYPES, who,
		    onnx_dtype_name(et));
		return NULL;
	}
	if (t->segment) {
		imp_unsupported(im, "%s: a segmented tensor", who);
		return NULL;
	}
	if (t->n_dims > IR_MAX_RANK) {
		imp_unsupported(im, "%s: rank %zu (aicm takes at most %d)", who, t->n_dims,
		    IR_MAX_RANK);
		return NULL;
	}
	ty.rank = (int)t->n_dims;
	for (size_t i = 0; i < t->n_dims; i++) {
		if (t->dims[i] < 0) {
			imp_fail(im, "%s: dimension %zu is %lld, expected a size", who, i,
			    (long long)t->dims[i]);
			return NULL;
		}
		if (t->dims[i] == 0) {
			imp_unsupported(im, "%s: dimension %zu is 0; aicm's dimensions are positive",
			    who, i);
			return NULL;
		}
		if (t->dims[i] > IR_MAX_DIM || numel > (int64_t)(IMP_MAX_MODEL / 8) / t->dims[i]) {
			imp_fail(im, "%s: %lld elements along dimension %zu is more than aicm-import "
			    "reads", who, (long long)t->dims[i], i);
			return NULL;
		}
		ty.dim[i] = t->dims[i];
		numel *= t->dims[i];
	}
	es = ir_dtype_size(ty.dt);
	bytes = (size_t)numel * es;
	if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		char *buf = NULL;

		if (external_bytes(im, t, who, bytes, &buf) != 0)
			return NULL;
		d = imp_data_new(im, &ty);
		memcpy(d->p, buf, bytes);
		free(buf);
		goto check_bool;
	}
	if (t->has_raw_data) {
		if (t->raw_data.len != bytes) {
			imp_fail(im, "%s: holds %zu bytes of raw data, its dims (%lld elements of %s) "
			    "make %zu", who, t->raw_data.len, (long long)numel, onnx_dtype_name(et), bytes);
			return NULL;
		}
		d = imp_data_new(im, &ty);
		memcpy(d->p, t->raw_data.data, bytes);
		goto check_bool;
	}
	{
		size_t have;

		switch (ty.dt) {
		case DT_F32: have = t->n_float_data; break;
		case DT_F64: have = t->n_double_data; break;
		case DT_I64: have = t->n_int64_data; break;
		default: have = t->n_int32_data; break;
		}
		if (have != (size_t)numel) {
			imp_fail(im, "%s: holds %zu elements in %s, its dims make %lld", who, have,
			    ty.dt == DT_F32 ? "float_data" : ty.dt == DT_F64 ? "double_data" :
			    ty.dt == DT_I64 ? "int64_data" : "int32_data", (long long)numel);
			return NULL;
		}
		d = imp_data_new(im, &ty);
		for (int64_t i = 0; i < numel; i++)
			switch (ty.dt) {
			case DT_F32: ((float *)d->p)[i] = t->float_data[i]; break;
			case DT_F64: ((double *)d->p)[i] = t->double_data[i]; break;
			case DT_I64: ((int64_t *)d->p)[i] = t->int64_data[i]; break;
			case DT_I32: ((int32_t *)d->p)[i] = t->int32_data[i]; break;
			case DT_BOOL: ((uint8_t *)d->p)[i] = t->int32_data[i] != 0; break;
			default: AICM_BUG("element type %d", (int)ty.dt);
			}
		return d;
	}
check_bool:
	/* a bool byte other than 0 or 1 is not a bool aicm can hold */
	if (ty.dt == DT_BOOL)
		for (int64_t i = 0; i < numel; i++)
			((uint8_t *)d->p)[i] = ((uint8_t *)d->p)[i] != 0;
	return d;
}

/* ---- values ----------------------------------------------------------- */

static bool
val_eq(const void *ctx, uint32_t item, const void *key)
{
	const Imp *im = ctx;

	return strcmp(im->val[item].name, key) == 0;
}

static ImpVal *
val_find(Imp *im, const char *name)
{
	int64_t i = hashmap_find(&im->byname, (uint32_t)ir_hash_str(name), val_eq, im, name);

	return i < 0 ? NULL : &im->val[i];
}

/* A new value named name, defined by what ("output 0", "initializer 3");
 * NULL after imp_fail when the name is taken (SSA: ONNX defines each value
 * once). */
static ImpVal *
val_add(Imp *im, const char *name, const char *what)
{
	ImpVal *v;
	int64_t old;

	if (im->nval == im->capval) {
		im->capval = im->capval ? 2 * im->capval : 256;
		im->val = xrealloc(im->val, sizeof *im->val * (size_t)im->capval);
	}
	if ((old = hashmap_put(&im->byname, (uint32_t)ir_hash_str(name), (uint32_t)im->nval,
	    val_eq, im, name)) >= 0) {
		const ImpVal *o = &im->val[old];

		/* the initializers come first (while they are read, ninit is
		 * INT_MAX) */
		imp_fail(im, "%s '%s' is defined already, by %s; expected one definition of "
		    "each value", what, name, old < im->ninit ? "an initializer" :
		    o->node >= 0 && im->g->nodes[o->node].op == OP_INPUT ? "a graph input" :
		    "an earlier node");
		return NULL;
	}
	v = &im->val[im->nval++];
	*v = (ImpVal){name, {.rank = -1}, -1, NULL};
	return v;
}

/* ---- inputs ----------------------------------------------------------- */

int
imp_nin(const Imp *im)
{
	return (int)im->n->n_input;
}

ImpVal *
imp_in(Imp *im, int k)
{
	const char *name;
	ImpVal *v;

	if (k < 0 || (size_t)k >= im->n->n_input || !(name = im->n->input[k])[0])
		return NULL;
	if (!(v = val_find(im, name))) {
		imp_fail(im, "input %d '%s' is not defined by an earlier node, an initializer or a "
		    "graph input", k, name);
		return NULL;
	}
	return v;
}

ImpVal *
imp_in_req(Imp *im, int k)
{
	ImpVal *v = imp_in(im, k);

	if (!v && !im->rc)
		imp_fail(im, "input %d is required, found %s", k,
		    (size_t)k < im->n->n_input ? "an empty name" : "none");
	return v;
}

/* The const node of known value v, its data inline (values=, at most
 * IR_MAX_VALUES elements), as a splat (value=) when every element is the
 * same and it is not an initializer, else in a .npy file beside the
 * graph. */
static int
materialise(Imp *im, ImpVal *v, bool initializer)
{
	const ImpData *d = v->k;
	int64_t n = ir_type_numel(&d->type);
	bool splat = true;
	int i = imp_new(im, OP_CONST, v->name ? unique_name(im, v->name) : NULL, 0, NULL);
	Node *nd;

	if (i < 0)
		return -1;
	nd = &im->g->nodes[i];
	nd->type = d->type;
	for (int64_t e = 1; e < n && splat; e++)
		splat = ir_dtype_is_float(d->type.dt) ?
		    memcmp((const char *)d->p + e * (int64_t)ir_dtype_size(d->type.dt), d->p,
		    ir_dtype_size(d->type.dt)) == 0 : imp_data_i64(d, e) == imp_data_i64(d, 0);
	if (n <= IR_MAX_VALUES) {
		double *vs = arena_alloc(&im->g->arena, sizeof(double) * (size_t)n);
		int64_t *is = arena_alloc(&im->g->arena, sizeof(int64_t) * (size_t)n);

		for (int64_t e = 0; e < n; e++) {
			vs[e] = imp_data_f64(d, e);
			is[e] = imp_data_i64(d, e);
			if (ir_dtype_is_float(d->type.dt) && (double)is[e] != vs[e])
				nd->at.values_float |= (uint64_t)1 << e;
		}
		nd->at.values = vs;
		nd->at.ivalues = is;
		nd->at.nvalues = (int)n;
		nd->at.set |= AB(VALUES);
	} else if (splat && !initializer) {
		nd->at.value = imp_data_f64(d, 0);
		nd->at.ivalue = imp_data_i64(d, 0);
		nd->at.value_int = !ir_dtype_is_float(d->type.dt) || (double)nd->at.ivalue == nd->at.value;
		nd->at.set |= AB(VALUE);
	} else {
		size_t len = strlen(im->o->weights) + strlen(nd->name) + 6;
		char *file = arena_alloc(&im->g->arena, len);

		snprintf(file, len, "%s/%s.npy", im->o->weights, nd->name);
		nd->at.file = file;
		nd->at.set |= AB(FILE);
		if (im->nw == im->capw) {
			im->capw = im->capw ? 2 * im->capw : 32;
			im->w = xrealloc(im->w, sizeof *im->w * (size_t)im->capw);
		}
		im->w[im->nw++] = (ImpWeight){file, d->type, d->p};
	}
	v->node = i;
	return i;
}

int
imp_const(Imp *im, ImpData *d, const char *name)
{
	ImpVal v = {name, d->type, -1, d};

	return materialise(im, &v, false);
}

int
imp_node_of(Imp *im, ImpVal *v)
{
	if (!v)
		return -1;
	if (v->node >= 0)
		return v->node;
	if (!v->k)
		AICM_BUG("value '%s' has neither a node nor data", v->name);
	return materialise(im, v, v - im->val < im->ninit);
}

int
imp_in_ints(Imp *im, int k, const char *what, int64_t **out, int max)
{
	ImpVal *v = imp_in_req(im, k);
	const ImpData *d;
	int64_t n;

	if (!v)
		return -1;
	if (!(d = v->k))
		return imp_unsupported(im, "its %s (input %d, '%s') is computed at run time; aicm "
		    "needs it at import time (freeze a graph input with --bind)", what, k, v->name);
	if (!ir_dtype_is_int(d->type.dt))
		return imp_fail(im, "its %s (input %d, '%s') is %s, expected an integer type", what,
		    k, v->name, ir_dtype_name(d->type.dt));
	n = ir_type_numel(&d->type);
	if (d->type.rank > 1 || n > max)
		return imp_unsupported(im, "its %s (input %d, '%s') has %lld elements of rank %d; "
		    "expected at most %d in one dimension", what, k, v->name, (long long)n,
		    d->type.rank, max);
	*out = imp_data_new(im, &(Type){.rank = 1, .dt = DT_I64, .dim = {n}})->p;
	for (int64_t e = 0; e < n; e++)
		(*out)[e] = imp_data_i64(d, e);
	return (int)n;
}

int
imp_in_scalar(Imp *im, int k, const char *what, double *out)
{
	ImpVal *v = imp_in_req(im, k);

	if (!v)
		return -1;
	if (!v->k)
		return imp_unsupported(im, "its %s (input %d, '%s') is computed at run time; aicm "
		    "needs it at import time (freeze a graph input with --bind)", what, k, v->name);
	if (ir_type_numel(&v->k->type) != 1)
		return imp_fail(im, "its %s (input %d, '%s') has %lld elements, expected one", what,
		    k, v->name, (long long)ir_type_numel(&v->k->type));
	*out = imp_data_f64(v->k, 0);
	return 0;
}

/* ---- attributes ------------------------------------------------------- */

static const char *
attr_type_name(Onnx__AttributeProto__AttributeType t)
{
	static const char *const names[] = {
		"undefined", "a float", "an integer", "a string", "a tensor", "a graph",
		"a list of floats", "a list of integers", "a list of strings", "a list of tensors",
		"a list of graphs", "a sparse tensor", "a list of sparse tensors", "a type",
		"a list of types",
	};

	return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "of an unknown type";
}

static const Onnx__AttributeProto *
attr_typed(Imp *im, const char *name, Onnx__AttributeProto__AttributeType want, const char *wname)
{
	const Onnx__NodeProto *n = im->n;

	for (size_t i = 0; i < n->n_attribute; i++) {
		const Onnx__AttributeProto *a = n->attribute[i];

		if (!a->name || strcmp(a->name, name) != 0)
			continue;
		im->attrs_read |= (uint64_t)1 << i;
		if (a->ref_attr_name && a->ref_attr_name[0]) {
			imp_unsupported(im, "attribute '%s' refers to a function's attribute", name);
			return NULL;
		}
		if (want && a->type != want) {
			imp_fail(im, "attribute '%s' is %s, expected %s", name, attr_type_name(a->type),
			    wname);
			return NULL;
		}
		return a;
	}
	return NULL;
}

const Onnx__AttributeProto *
imp_attr(Imp *im, const char *name)
{
	return attr_typed(im, name, 0, NULL);
}

bool
imp_has_attr(Imp *im, const char *name)
{
	return imp_attr(im, name) != NULL;
}

int
imp_attr_int(Imp *im, const char *name, int64_t def, int64_t *out)
{
	const Onnx__AttributeProto *a = attr_typed(im, name,
	    ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, "an integer");

	*out = a ? a->i : def;
	return im->rc ? -1 : 0;
}

int
imp_attr_float(Imp *im, const char *name, double def, double *out)
{
	const Onnx__AttributeProto *a = attr_typed(im, name,
	    ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, "a float");

	*out = a ? a->f : def;
	return im->rc ? -1 : 0;
}

int
imp_attr_str(Imp *im, const char *name, const char *def, const char **out)
{
	const Onnx__AttributeProto *a = attr_typed(im, name,
	    ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, "a string");

	if (im->rc)
		return -1;
	if (!a) {
		*out = def;
		return 0;
	}
	if (memchr(a->s.data, 0, a->s.len))
		return imp_fail(im, "attribute '%s' holds a NUL byte", name);
	*out = arena_strndup(&im->g->arena, (const char *)a->s.data, a->s.len);
	return 0;
}

int
imp_attr_ints(Imp *im, const char *name, const int64_t **v, bool *present)
{
	const Onnx__AttributeProto *a = attr_typed(im, name,
	    ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, "a list of integers");

	*present = a != NULL;
	*v = a ? a->ints : NULL;
	if (im->rc)
		return -1;
	return a ? (int)a->n_ints : 0;
}

int
imp_attr_floats(Imp *im, const char *name, const float **v, bool *present)
{
	const Onnx__AttributeProto *a = attr_typed(im, name,
	    ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS, "a list of floats");

	*present = a != NULL;
	*v = a ? a->floats : NULL;
	if (im->rc)
		return -1;
	return a ? (int)a->n_floats : 0;
}

ImpData *
imp_attr_tensor(Imp *im, const char *name, bool *bad)
{
	const Onnx__AttributeProto *a = attr_typed(im, name,
	    ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR, "a tensor");
	ImpData *d = NULL;

	*bad = im->rc != 0;
	if (a && !*bad) {
		if (!a->t) {
			imp_fail(im, "attribute '%s' holds no tensor", name);
		} else {
			char who[256];

			snprintf(who, sizeof who, "attribute '%s'", name);
			d = tensor_data(im, a->t, who);
		}
		*bad = d == NULL;
	}
	return d;
}

void
imp_attr_ignore(Imp *im, ...)
{
	va_list ap;
	const char *name;

	va_start(ap, im);
	while ((name = va_arg(ap, const char *)) != NULL)
		(void)imp_attr(im, name);
	va_end(ap);
}

int
imp_axis(Imp *im, int64_t axis, int rank, const char *what)
{
	int64_t a = axis < 0 ? axis + rank : axis;

	if (a < 0 || a >= (rank > 0 ? rank : 1))
		return imp_fail(im, "%s %lld is out of range for rank %d", what, (long long)axis, rank);
	return (int)a;
}

/* ---- outputs ---------------------------------------------------------- */

int
imp_nout(const Imp *im)
{
	return (int)im->n->n_output;
}

bool
imp_out_wanted(const Imp *im, int k)
{
	return k >= 0 && (size_t)k < im->n->n_output && im->n->output[k][0];
}

const char *
imp_out_name(Imp *im, int k)
{
	if (!imp_out_wanted(im, k))
		return NULL;
	return unique_name(im, im->n->output[k]);
}

static ImpVal *
out_val(Imp *im, int k)
{
	char what[48];

	if (!imp_out_wanted(im, k)) {
		if ((size_t)k < im->n->n_output)
			im->out_bound[k] = true;
		return NULL;
	}
	im->out_bound[k] = true;
	snprintf(what, sizeof what, "output %d", k);
	return val_add(im, im->n->output[k], what);
}

int
imp_out(Imp *im, int k, int i)
{
	ImpVal *v;

	if (i < 0)
		return -1;
	if (!(v = out_val(im, k)))
		return im->rc ? -1 : 0;
	v->node = i;
	v->type = im->g->nodes[i].type;
	return 0;
}

int
imp_out_known(Imp *im, int k, ImpData *d)
{
	ImpVal *v;

	if (!d)
		return -1;
	if (!(v = out_val(im, k)))
		return im->rc ? -1 : 0;
	v->k = d;
	v->type = d->type;
	return 0;
}

/* ---- emitting --------------------------------------------------------- */

int
imp_new(Imp *im, OpId op, const char *name, int nin, const int *in)
{
	int i;

	if (im->rc)
		return -1;
	for (int j = 0; j < nin; j++)
		if (in[j] < 0)
			return -1;
	if (!name) {
		char *base = imp_safe_name(im->n && im->n->n_output ? im->n->output[0] : "v");

		name = ir_fresh_name(im->g, base);
		free(base);
	} else if (ir_lookup(im->g, name) >= 0) {
		name = ir_fresh_name(im->g, name);
	}
	i = ir_add_node(im->g, op, name);
	ir_set_nin(im->g, i, nin);
	for (int j = 0; j < nin; j++)
		im->g->nodes[i].in[j] = in[j];
	return i;
}

int
imp_done(Imp *im, int i)
{
	char err[IR_ERR_MAX];
	Loc where;
	Type t;

	if (i < 0)
		return -1;
	if (ir_infer_type(im->g, i, &t, err, &where) != 0)
		return imp_fail(im, "the aicm %s it becomes is wrong: %s",
		    ir_ops[im->g->nodes[i].op].name, err);
	im->g->nodes[i].type = t;
	return i;
}

int
imp_op(Imp *im, OpId op, const char *name, int nin, const int *in)
{
	return imp_done(im, imp_new(im, op, name, nin, in));
}

int
imp_unary(Imp *im, OpId op, const char *name, int a)
{
	return imp_op(im, op, name, 1, &a);
}

int
imp_binary(Imp *im, OpId op, const char *name, int a, int b)
{
	int in[2] = {a, b};

	return imp_op(im, op, name, 2, in);
}

void
imp_set_ints(Imp *im, int i, AttrId a, const int64_t *v, int n)
{
	ir_attr_set_ints(im->g, &im->g->nodes[i].at, a, v, n);
}

int
imp_splat(Imp *im, DType dt, double v, int rank, const int64_t *dim)
{
	int i = imp_new(im, OP_CONST, NULL, 0, NULL);
	Node *nd;

	if (i < 0)
		return -1;
	nd = &im->g->nodes[i];
	nd->type.dt = dt;
	nd->type.rank = rank;
	for (int k = 0; k < rank; k++)
		nd->type.dim[k] = dim[k];
	nd->at.value = v;
	if (ir_dtype_is_float(dt)) {
		nd->at.value_int = trunc(v) == v && fabs(v) < 9e18;
		nd->at.ivalue = nd->at.value_int ? (int64_t)v : 0;
	} else {
		nd->at.value_int = true;
		nd->at.ivalue = (int64_t)v;
	}
	nd->at.set |= AB(VALUE);
	return i;
}

int
imp_reshape(Imp *im, const char *name, int a, int rank, const int64_t *dims)
{
	int i;

	/* a reshape of a reshape is one reshape of the first's operand (both
	 * keep the row-major order); the inner one stays only if something
	 * else reads it (drop_dead) */
	if (a >= 0 && im->g->nodes[a].op == OP_RESHAPE)
		a = im->g->nodes[a].in[0];
	i = imp_new(im, OP_RESHAPE, name, 1, &a);

	if (i < 0)
		return -1;
	imp_set_ints(im, i, ATTR_SHAPE, dims, rank);
	return imp_done(im, i);
}

/* ---- the walk --------------------------------------------------------- */

/* A graph input's type from its ValueInfo and --shape. */
static int
input_type(Imp *im, const Onnx__ValueInfoProto *vi, Type *t)
{
	const Onnx__TypeProto *tp = vi->type;
	const Onnx__TensorShapeProto *sh;
	const ImpShape *given = NULL;
	int32_t et;

	for (int k = 0; k < im->o->nshapes; k++)
		if (strcmp(im->o->shapes[k].name, vi->name) == 0)
			given = &im->o->shapes[k];
	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
		return imp_unsupported(im, "graph input '%s' is not a tensor", vi->name);
	et = tp->tensor_type->has_elem_type ? tp->tensor_type->elem_type : 0;
	if (!onnx_dtype(et, &t->dt))
		return imp_unsupported(im, "graph input '%s' has element type %s, expected one of "
		    IMP_DTYPES, vi->name,
		    onnx_dtype_name(et));
	sh = tp->tensor_type->shape;
	if (!sh && !given)
		return imp_fail(im, "graph input '%s' has no shape: give it with --shape %s=DIMS",
		    vi->name, vi->name);
	if (sh && sh->n_dim > IR_MAX_RANK)
		return imp_unsupported(im, "graph input '%s' has rank %zu (aicm takes at most %d)",
		    vi->name, sh->n_dim, IR_MAX_RANK);
	if (given && sh && (size_t)given->rank != sh->n_dim)
		return imp_fail(im, "--shape %s= gives rank %d, the model's input has rank %zu",
		    vi->name, given->rank, sh->n_dim);
	t->rank = given ? given->rank : (int)sh->n_dim;
	for (int k = 0; k < t->rank; k++) {
		const Onnx__TensorShapeProto__Dimension *d = sh ? sh->dim[k] : NULL;
		bool fixed = d && d->value_case ==
		    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;

		if ((fixed && d->dim_value == 0) || (given && given->dim[k] == 0))
			return imp_unsupported(im, "graph input '%s': dimension %d is 0; aicm's "
			    "dimensions are positive",
			    vi->name, k);
		if (fixed && d->dim_value < 0)
			return imp_fail(im, "graph input '%s': dimension %d is %lld, expected a size or "
			    "a name", vi->name, k,
			    (long long)d->dim_value);
		if (given) {
			if (fixed && d->dim_value != given->dim[k])
				return imp_fail(im, "--shape %s= gives dimension %d as %lld, the model "
				    "fixes it at %lld", vi->name, k, (long long)given->dim[k],
				    (long long)d->dim_value);
			t->dim[k] = given->dim[k];
		} else if (fixed) {
			if (d->dim_value > IR_MAX_DIM)
				return imp_unsupported(im, "graph input '%s': dimension %d is %lld",
				    vi->name, k, (long long)d->dim_value);
			t->dim[k] = d->dim_value;
		} else {
			return imp_fail(im, "graph input '%s': dimension %d is dynamic%s%s%s; give the "
			    "shape with --shape %s=DIMS", vi->name, k,
			    d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ?
			    " ('" : "",
			    d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ?
			    d->dim_param : "",
			    d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ?
			    "')" : "", vi->name);
		}
	}
	return 0;
}

static int
add_inputs(Imp *im, const Onnx__GraphProto *gp)
{
	for (int b = 0; b < im->o->nbinds; b++) {
		bool found = false;

		for (size_t k = 0; k < gp->n_input; k++)
			found = found || (gp->input[k]->name && strcmp(gp->input[k]->name,
			    im->o->binds[b].name) == 0);
		if (!found)
			return imp_fail(im, "--bind %s=: the model has no graph input '%s'",
			    im->o->binds[b].name, im->o->binds[b].name);
	}
	for (int s = 0; s < im->o->nshapes; s++) {
		bool found = false;

		for (size_t k = 0; k < gp->n_input; k++)
			found = found || (gp->input[k]->name && strcmp(gp->input[k]->name,
			    im->o->shapes[s].name) == 0);
		if (!found)
			return imp_fail(im, "--shape %s=: the model has no graph input '%s'",
			    im->o->shapes[s].name, im->o->shapes[s].name);
	}
	for (size_t k = 0; k < gp->n_input; k++) {
		const Onnx__ValueInfoProto *vi = gp->input[k];
		const ImpBind *bind = NULL;
		Type t = {0};
		ImpVal *v;
		char what[48];

		if (!vi->name || !vi->name[0])
			return imp_fail(im, "graph input %zu has no name", k);
		/* before IR version 4 the initializers are listed as inputs too;
		 * aicm takes their data, which --shape and --bind cannot change */
		if (val_find(im, vi->name)) {
			for (int b = 0; b < im->o->nbinds; b++)
				if (strcmp(im->o->binds[b].name, vi->name) == 0)
					return imp_fail(im, "--bind %s=: graph input '%s' is an initializer, "
					    "expected an input without data", vi->name, vi->name);
			for (int b = 0; b < im->o->nshapes; b++)
				if (strcmp(im->o->shapes[b].name, vi->name) == 0)
					return imp_fail(im, "--shape %s=: graph input '%s' is an initializer, "
					    "expected an input without data", vi->name, vi->name);
			continue;
		}
		if (input_type(im, vi, &t) != 0)
			return -1;
		for (int b = 0; b < im->o->nbinds; b++)
			if (strcmp(im->o->binds[b].name, vi->name) == 0)
				bind = &im->o->binds[b];
		snprintf(what, sizeof what, "graph input %zu", k);
		if (!(v = val_add(im, vi->name, what)))
			return -1;
		if (bind && bind->err)
			return imp_fail(im, "--bind %s=: %s", vi->name, bind->err);
		if (bind) {
			char want[IR_TYPE_STR], got[IR_TYPE_STR];

			if (bind->type.dt != t.dt || !ir_same_dims(&bind->type, &t))
				return imp_fail(im, "--bind %s=%s: the file holds %s %s, the input is %s %s",
				    vi->name, bind->file, ir_shape_str(&bind->type, got),
				    ir_dtype_name(bind->type.dt), ir_shape_str(&t, want),
				    ir_dtype_name(t.dt));
			v->k = imp_data_new(im, &t);
			memcpy(v->k->p, bind->p, (size_t)ir_type_numel(&t) * ir_dtype_size(t.dt));
			v->type = t;
			continue;
		}
		v->node = imp_new(im, OP_INPUT, unique_name(im, vi->name), 0, NULL);
		im->g->nodes[v->node].type = t;
		v->type = t;
	}
	return 0;
}

static int
add_initializers(Imp *im, const Onnx__GraphProto *gp)
{
	if (gp->n_sparse_initializer)
		return imp_unsupported(im, "sparse initializer '%s'",
		    gp->sparse_initializer[0]->values && gp->sparse_initializer[0]->values->name ?
		    gp->sparse_initializer[0]->values->name : "?");
	im->ninit = INT_MAX;
	for (size_t k = 0; k < gp->n_initializer; k++) {
		const Onnx__TensorProto *t = gp->initializer[k];
		char who[300], what[48];
		ImpVal *v;

		if (!t->name || !t->name[0])
			return imp_fail(im, "initializer %zu has no name", k);
		snprintf(who, sizeof who, "initializer '%.200s'", t->name);
		snprintf(what, sizeof what, "initializer %zu", k);
		if (!(v = val_add(im, t->name, what)))
			return -1;
		if (!(v->k = tensor_data(im, t, who)))
			return -1;
		v->type = v->k->type;
	}
	im->ninit = im->nval;
	return 0;
}

static int
translate_node(Imp *im, const Onnx__NodeProto *n, int idx)
{
	ImpFn fn;
	bool bound[64];

	im->n = n;
	im->nodeidx = idx;
	im->attrs_read = 0;
	if (!n->op_type || !n->op_type[0])
		return imp_fail(im, "the op type is empty, expected an ONNX op");
	if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
		return imp_unsupported(im, "op domain '%s' (aicm-import knows ONNX's default domain)",
		    n->domain);
	if (n->n_attribute > 64)
		return imp_unsupported(im, "%zu attributes", n->n_attribute);
	if (n->n_output > 64)
		return imp_unsupported(im, "%zu outputs", n->n_output);
	for (size_t k = 0; k < n->n_input; k++)
		if (!n->input[k])
			return imp_fail(im, "input %zu has no name", k);
	for (size_t k = 0; k < n->n_output; k++)
		if (!n->output[k])
			return imp_fail(im, "output %zu has no name", k);
	if (!(fn = onnx_lookup(n->op_type)))
		return imp_unsupported(im, "no translation of op '%s'", n->op_type);
	/* every ONNX op has an output, and translators name their nodes after
	 * the first (fuzz_import found a BatchNormalization without one) */
	if (n->n_output == 0)
		return imp_fail(im, "it has no outputs; every ONNX op has at least one");
	memset(bound, 0, sizeof bound);
	im->out_bound = bound;
	if (fn(im) != 0 || im->rc) {
		if (!im->rc)
			AICM_BUG("the translator of %s failed without saying why", n->op_type);
		return -1;
	}
	for (size_t k = 0; k < n->n_attribute; k++)
		if (!(im->attrs_read >> k & 1))
			return imp_unsupported(im, "attribute '%s', which its translation at opset "
			    "%lld does not read", n->attribute[k]->name ? n->attribute[k]->name : "?",
			    (long long)im->opset);
	for (size_t k = 0; k < n->n_output; k++)
		if (!bound[k] && n->output[k][0])
			return imp_unsupported(im, "output %zu ('%s')", k, n->output[k]);
	im->out_bound = NULL;
	return 0;
}

/* The graph outputs, in ONNX's order: each a node named after it. */
static int
set_outputs(Imp *im, const Onnx__GraphProto *gp)
{
	Graph *g = im->g;

	if (gp->n_output == 0)
		return imp_fail(im, "the graph has no outputs");
	g->ret = arena_alloc(&g->arena, sizeof(int) * gp->n_output);
	g->nret = (int)gp->n_output;
	for (size_t k = 0; k < gp->n_output; k++) {
		const char *name = gp->output[k]->name;
		ImpVal *v = name ? val_find(im, name) : NULL;
		char *want;
		int i;
		bool taken = false;

		if (!v)
			return imp_fail(im, "graph output '%s' is computed by no node", name ? name : "");
		if ((i = imp_node_of(im, v)) < 0)
			return -1;
		want = imp_safe_name(name);
		for (size_t j = 0; j < k; j++)
			taken = taken || g->ret[j] == i;
		if (strcmp(g->nodes[i].name, want) != 0 || taken || g->nodes[i].op == OP_INPUT) {
			/* a copy under the output's own name (reshape to its own shape) */
			const char *nm = ir_lookup(g, want) < 0 ?
			    arena_strndup(&g->arena, want, strlen(want)) : ir_fresh_name(g, want);

			i = imp_reshape(im, nm, i, g->nodes[i].type.rank, g->nodes[i].type.dim);
		}
		free(want);
		if (i < 0)
			return -1;
		g->ret[k] = i;
	}
	return 0;
}

static int
walk(Imp *im, const Onnx__ModelProto *m)
{
	const Onnx__GraphProto *gp = m->graph;
	bool have = false;

	for (size_t k = 0; k < m->n_opset_import; k++) {
		const Onnx__OperatorSetIdProto *os = m->opset_import[k];

		if (!os->domain || !os->domain[0] || strcmp(os->domain, "ai.onnx") == 0) {
			if (!os->has_version || os->version < 1 || os->version > 17)
				return imp_fail(im, "opset %lld of the default domain: aicm-import knows "
				    "opsets 1 to 17", os->has_version ? (long long)os->version : 0LL);
			im->opset = os->version;
			have = true;
		}
	}
	if (!gp)
		return imp_fail(im, "the model has no graph");
	/* a model of another domain's ops only (ai.onnx.preview.training's)
	 * needs no default opset: its first node is unsupported for its domain */
	for (size_t k = 0; k < gp->n_node && !have; k++)
		if (!gp->node[k]->domain || !gp->node[k]->domain[0] ||
		    strcmp(gp->node[k]->domain, "ai.onnx") == 0) {
			im->n = gp->node[k];
			im->nodeidx = (int)k;
			return imp_fail(im, "the model imports no opset of ONNX's default domain, "
			    "expected one of 1 to 17");
		}
	if (m->n_functions)
		for (size_t k = 0; k < gp->n_node; k++)
			for (size_t f = 0; f < m->n_functions; f++)
				if (gp->node[k]->op_type && m->functions[f]->name &&
				    strcmp(gp->node[k]->op_type, m->functions[f]->name) == 0) {
					im->n = gp->node[k];
					im->nodeidx = (int)k;
					return imp_unsupported(im, "a model-local function");
				}
	if (gp->name && gp->name[0]) {
		char *s = imp_safe_name(gp->name);
		/* a graph's @name, unlike a value's %name, may not be all digits
		 * (fuzz_import found "graph @0", which does not parse back) */
		bool digit = s[0] >= '0' && s[0] <= '9';
		char *n = arena_alloc(&im->g->arena, strlen(s) + 2);

		sprintf(n, "%s%s", digit ? "_" : "", s);
		im->g->name = n;
		free(s);
	}
	if (add_initializers(im, gp) != 0 || add_inputs(im, gp) != 0)
		return -1;
	for (size_t k = 0; k < gp->n_node; k++)
		if (translate_node(im, gp->node[k], (int)k) != 0)
			return -1;
	im->n = NULL;
	return set_outputs(im, gp);
}

/* Drops the nodes that no output needs (a reshape that a later one
 * bypassed, a decomposition's unused piece): the graph inputs stay, in
 * ONNX's order, whether read or not. */
static void
drop_dead(Imp *im)
{
	Graph *g = im->g;
	bool *live = xcalloc((size_t)g->nnodes + 1, sizeof *live);
	int *map = xmalloc(sizeof(int) * ((size_t)g->nnodes + 1)), n = 0;

	for (int k = 0; k < g->nret; k++)
		live[g->ret[k]] = true;
	for (int i = g->nnodes - 1; i >= 0; i--) {
		if (g->nodes[i].op == OP_INPUT)
			live[i] = true;
		if (live[i])
			for (int j = 0; j < g->nodes[i].nin; j++)
				live[g->nodes[i].in[j]] = true;
	}
	for (int i = 0; i < g->nnodes; i++)
		map[i] = live[i] ? n++ : -1;
	if (n < g->nnodes) {
		int nw = 0;

		/* a weight goes with its const: a dropped one is not written */
		for (int k = 0; k < im->nw; k++) {
			bool used = false;

			for (int i = 0; i < g->nnodes && !used; i++)
				used = live[i] && g->nodes[i].op == OP_CONST &&
				    g->nodes[i].at.file == im->w[k].file;
			if (used)
				im->w[nw++] = im->w[k];
		}
		im->nw = nw;
		ir_compact(g, map);
	}
	free(live);
	free(map);
}

/* The walk's result verified: a failure is the importer's bug. */
static void
verify(Imp *im)
{
	Diag d;

	diag_init(&d, "<import>", NULL, 0, NULL);
	d.collect = true;
	if (ir_verify(im->g, &d) > 0)
		AICM_BUG("the imported graph does not verify: %s", d.nrecs ? d.recs[0].msg : "?");
	diag_free(&d);
}

typedef struct Owned {
	ImpData **datas;
	int ndatas;
} Owned;

static void
free_datas(ImpData **datas, int n)
{
	for (int k = 0; k < n; k++) {
		free(datas[k]->p);
		free(datas[k]);
	}
	free(datas);
}

/* ---- the wire format, before unpacking -------------------------------- */

/* protobuf-c unpacks a nested message by recursion, with no bound of its
 * own: at a few bytes a level (an attribute's graph holding a node holding
 * an attribute's graph ...), a 2 GiB file goes a hundred million levels
 * down and overflows the stack long before.  So the bytes are walked once
 * before unpacking, with the descriptors protoc-c generated, following
 * only the fields that are messages; a message nested deeper than
 * IMP_MAX_NESTING is refused.  The walk visits each byte once, at the
 * innermost message that holds it, and recurses at most IMP_MAX_NESTING
 * deep itself.  On the way it notes the first fault it sees (a field cut
 * short, a wire type that is no protobuf's or not its field's), so that
 * when protobuf-c then refuses the bytes (it says only that it did) the
 * message can say where and what: a bad file is most often a truncated
 * one. */

typedef struct Wire {
	const uint8_t *start, *end;  /* the whole file */
	const uint8_t *bad_at;       /* the first fault, or NULL */
	char bad[160];
} Wire;

static void
wire_fault(Wire *w, const uint8_t *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
wire_fault(Wire *w, const uint8_t *at, const char *fmt, ...)
{
	va_list ap;

	if (w->bad_at)
		return;
	w->bad_at = at;
	va_start(ap, fmt);
	vsnprintf(w->bad, sizeof w->bad, fmt, ap);
	va_end(ap);
}

/* A varint at *p (advanced past it); false at a fault, noted. */
static bool
wire_varint(Wire *w, const uint8_t **p, const uint8_t *end, uint64_t *v, const char *what)
{
	const uint8_t *at = *p;
	uint64_t r = 0;

	for (int s = 0; s < 64 && *p < end; s += 7) {
		uint8_t b = *(*p)++;

		r |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	if (*p < end)
		wire_fault(w, at, "%s is a varint of more than 10 bytes", what);
	else
		wire_fault(w, at, "%s runs past the end of %s", what,
		    end == w->end ? "the file" : "the message holding it");
	return false;
}

/* The wire type a field of type t is written with (2 also for a packed
 * repeated number). */
static int
wire_type_of(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_FLOAT:
		return 5;
	case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
		return 1;
	case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_BYTES: case PROTOBUF_C_TYPE_MESSAGE:
		return 2;
	default:
		return 0;
	}
}

/* 0, or -1 when a message in p[0..end) (of type desc, depth levels down)
 * nests deeper than IMP_MAX_NESTING.  A fault is noted and ends the walk
 * of the message it is in. */
static int
wire_check(Wire *w, const uint8_t *p, const uint8_t *end, const ProtobufCMessageDescriptor *desc,
    int depth)
{
	if (depth > IMP_MAX_NESTING)
		return -1;
	while (p < end) {
		const uint8_t *at = p;
		uint64_t tag, len;
		const ProtobufCFieldDescriptor *f;
		int wt;

		if (!wire_varint(w, &p, end, &tag, "a field's tag"))
			return 0;
		wt = (int)(tag & 7);
		if (tag >> 3 == 0 || tag >> 3 > 0x1fffffff) {
			wire_fault(w, at, "a field of %s has number %llu, expected 1 to 536870911",
			    desc->name, (unsigned long long)(tag >> 3));
			return 0;
		}
		f = protobuf_c_message_descriptor_get_field(desc, (unsigned)(tag >> 3));
		if (f && wt != wire_type_of(f->type) && !(wt == 2 &&
		    f->label == PROTOBUF_C_LABEL_REPEATED && wire_type_of(f->type) != 2)) {
			/* noted; the walk goes on (as a field it does not know) so that
			 * what follows is still bounded */
			wire_fault(w, at, "field '%s' of %s has wire type %d, expected %d", f->name,
			    desc->name, wt, wire_type_of(f->type));
			f = NULL;
		}
		switch (wt) {
		case 0:
			if (!wire_varint(w, &p, end, &len, "a varint"))
				return 0;
			break;
		case 1:
		case 5:
			if (end - p < (wt == 1 ? 8 : 4)) {
				wire_fault(w, at, "a %d-byte field runs past the end of %s", wt == 1 ? 8 : 4,
				    end == w->end ? "the file" : "the message holding it");
				return 0;
			}
			p += wt == 1 ? 8 : 4;
			break;
		case 2:
			if (!wire_varint(w, &p, end, &len, "a field's length"))
				return 0;
			if (len > (uint64_t)(end - p)) {
				wire_fault(w, at, "%s%s%s of %llu bytes runs past the end of %s (%zu bytes "
				    "left)", f ? "field '" : "a field", f ? f->name : "", f ? "'" : "",
				    (unsigned long long)len,
				    end == w->end ? "the file" : "the message holding it", (size_t)(end - p));
				return 0;
			}
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
			    wire_check(w, p, p + len, f->descriptor, depth + 1) != 0)
				return -1;
			p += len;
			break;
		default:
			wire_fault(w, at, "a field has wire type %d, %s", wt, wt == 3 || wt == 4 ?
			    "a group, which ONNX does not use" : "which protobuf does not have");
			return 0;
		}
	}
	return 0;
}

int
imp_onnx(const void *buf, size_t len, const ImpOptions *o, ImpResult *r, char *err)
{
	Onnx__ModelProto *m;
	Imp im = {0};
	Wire wire = {0};
	int rc;

	memset(r, 0, sizeof *r);
	err[0] = 0;
	if (len == 0) {
		snprintf(err, IMP_ERR_MAX, "the file is empty, expected an ONNX model");
		return -1;
	}
	wire.start = buf;
	wire.end = wire.start + len;
	if (wire_check(&wire, wire.start, wire.end, &onnx__model_proto__descriptor, 1) != 0) {
		snprintf(err, IMP_ERR_MAX, "its protobuf messages nest more than %d deep; "
		    "aicm-import reads at most %d", IMP_MAX_NESTING, IMP_MAX_NESTING);
		return -1;
	}
	m = onnx__model_proto__unpack(NULL, len, buf);
	if (!m) {
		if (wire.bad_at)
			snprintf(err, IMP_ERR_MAX, "not an ONNX model, or a truncated or corrupt one: "
			    "at byte %zu of %zu, %s", (size_t)(wire.bad_at - wire.start), len, wire.bad);
		else
			snprintf(err, IMP_ERR_MAX, "not an ONNX model, or a corrupt one: protobuf-c "
			    "cannot unpack it as a ModelProto");
		return -1;
	}
	im.o = o;
	im.err = err;
	im.g = ir_graph_new();
	walk(&im, m);
	rc = im.rc;
	if (rc == 0) {
		drop_dead(&im);
		verify(&im);
	}
	onnx__model_proto__free_unpacked(m, NULL);
	hashmap_free(&im.byname);
	free(im.val);
	if (rc != 0) {
		ir_graph_free(im.g);
		free(im.w);
		free_datas(im.datas, im.ndatas);
		return rc;
	}
	r->g = im.g;
	r->w = im.w;
	r->nw = im.nw;
	{
		Owned *ow = xmalloc(sizeof *ow);

		ow->datas = im.datas;
		ow->ndatas = im.ndatas;
		r->priv = ow;
	}
	return 0;
}

void
imp_result_free(ImpResult *r)
{
	Owned *ow = r->priv;

	if (r->g)
		ir_graph_free(r->g);
	free(r->w);
	if (ow) {
		free_datas(ow->datas, ow->ndatas);
		free(ow);
	}
	memset(r, 0, sizeof *r);
}
