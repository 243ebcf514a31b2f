/*
 * check_import.c: aicm-import's reader (src/import/import.c) from C.
 *
 * imp_safe_name against the rule import.h states, case by case; imp_onnx
 * on models built here with protobuf-c's own generated API and packed to
 * bytes (no file, no python): a Relu, --shape and --bind, a weight large
 * enough for a .npy file, and one model for each kind of failure (a node
 * input defined nowhere, an op with no translation, bytes that are no
 * model, messages nested past IMP_MAX_NESTING by protobuf-c's own packer),
 * each message checked for the place it names.  Last, the round trip over
 * Debian's libonnx-testdata (when it is installed; a note on stderr when
 * not): every model that imports prints to text that parses back, verifies
 * and prints the same, as aicm-opt would do with the file (issue 17).  It
 * runs in process, so that the thousand models take well under a second
 * and the sanitizer and valgrind runs of the unit tests cover them.
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "import.h"
#include "parse.h"

/* ---- imp_safe_name ----------------------------------------------------- */

static void
safe_is(const char *onnx, const char *want)
{
	char *s = imp_safe_name(onnx);

	ck_assert_msg(strcmp(s, want) == 0, "imp_safe_name(\"%s\") is \"%s\", expected \"%s\"",
	    onnx, s, want);
	free(s);
}

START_TEST(test_import_safe_name)
{
	safe_is("x", "x");
	safe_is("fc1_weight", "fc1_weight");
	/* a leading '/' dropped (all of them), a trailing _output_0 made _out */
	safe_is("/l1/Gemm_output_0", "l1_Gemm_out");
	safe_is("//a", "a");
	safe_is("a_output_0", "a_out");
	safe_is("/a/b_output_1", "a_b_output_1");
	/* "_output_0" alone is the whole name, not a suffix */
	safe_is("_output_0", "_output_0");
	/* every byte outside [A-Za-z0-9_] is '_', UTF-8 a '_' a byte */
	safe_is("input:0", "input_0");
	safe_is("a.b-c d/e", "a_b_c_d_e");
	safe_is("a/b/", "a_b_");
	safe_is("\xc3\xa9t\xc3\xa9", "__t__");
	/* a leading digit gets a '_', unless the name is all digits */
	safe_is("1a", "_1a");
	safe_is("3.5", "_3_5");
	safe_is("0", "0");
	safe_is("123", "123");
	safe_is("1_output_0", "_1_out");
	/* nothing left: "v" */
	safe_is("", "v");
	safe_is("/", "v");
	safe_is("///", "v");
}
END_TEST

/* ---- models built with protobuf-c ------------------------------------- */

/* A value's type: rank dims, a negative one a dim_param "N". */
typedef struct Vi {
	Onnx__ValueInfoProto v;
	Onnx__TypeProto tp;
	Onnx__TypeProto__Tensor tt;
	Onnx__TensorShapeProto sh;
	Onnx__TensorShapeProto__Dimension d[IR_MAX_RANK], *dp[IR_MAX_RANK];
} Vi;

/* A model of up to 8 nodes of one or two inputs, 4 graph inputs, outputs
 * and initializers, all in this struct (nothing to free but the bytes). */
typedef struct Mb {
	Onnx__ModelProto m;
	Onnx__OperatorSetIdProto os, *osp[1];
	Onnx__GraphProto g;
	Vi in[4], out[4];
	Onnx__ValueInfoProto *inp[4], *outp[4];
	Onnx__NodeProto node[8], *nodep[8];
	char *nin[8][2], *nout[8][1];
	Onnx__TensorProto init[4], *initp[4];
} Mb;

static void
mb_init(Mb *b, int64_t opset)
{
	memset(b, 0, sizeof *b);
	b->m = (Onnx__ModelProto)ONNX__MODEL_PROTO__INIT;
	b->m.has_ir_version = true;
	b->m.ir_version = 8;
	b->os = (Onnx__OperatorSetIdProto)ONNX__OPERATOR_SET_ID_PROTO__INIT;
	b->os.domain = (char *)"";
	b->os.has_version = true;
	b->os.version = opset;
	b->osp[0] = &b->os;
	b->m.n_opset_import = 1;
	b->m.opset_import = b->osp;
	b->g = (Onnx__GraphProto)ONNX__GRAPH_PROTO__INIT;
	b->g.name = (char *)"t";
	b->g.input = b->inp;
	b->g.output = b->outp;
	b->g.node = b->nodep;
	b->g.initializer = b->initp;
	b->m.graph = &b->g;
}

static Onnx__ValueInfoProto *
mb_value(Vi *v, const char *name, int et, int rank, const int64_t *dims)
{
	v->v = (Onnx__ValueInfoProto)ONNX__VALUE_INFO_PROTO__INIT;
	v->tp = (Onnx__TypeProto)ONNX__TYPE_PROTO__INIT;
	v->tt = (Onnx__TypeProto__Tensor)ONNX__TYPE_PROTO__TENSOR__INIT;
	v->sh = (Onnx__TensorShapeProto)ONNX__TENSOR_SHAPE_PROTO__INIT;
	v->v.name = (char *)name;
	v->v.type = &v->tp;
	v->tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	v->tp.tensor_type = &v->tt;
	v->tt.has_elem_type = true;
	v->tt.elem_type = et;
	v->tt.shape = &v->sh;
	v->sh.n_dim = (size_t)rank;
	v->sh.dim = v->dp;
	for (int k = 0; k < rank; k++) {
		v->d[k] = (Onnx__TensorShapeProto__Dimension)ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
		if (dims[k] < 0) {
			v->d[k].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			v->d[k].dim_param = (char *)"N";
		} else {
			v->d[k].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			v->d[k].dim_value = dims[k];
		}
		v->dp[k] = &v->d[k];
	}
	return &v->v;
}

static void
mb_input(Mb *b, const char *name, int et, int rank, const int64_t *dims)
{
	b->inp[b->g.n_input] = mb_value(&b->in[b->g.n_input], name, et, rank, dims);
	b->g.n_input++;
}

static void
mb_output(Mb *b, const char *name, int et, int rank, const int64_t *dims)
{
	b->outp[b->g.n_output] = mb_value(&b->out[b->g.n_output], name, et, rank, dims);
	b->g.n_output++;
}

/* A node op(in0[, in1]) -> out, named name. */
static void
mb_node(Mb *b, const char *op, const char *name, const char *in0, const char *in1,
    const char *out)
{
	size_t k = b->g.n_node++;
	Onnx__NodeProto *n = &b->node[k];

	*n = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
	n->op_type = (char *)op;
	n->name = (char *)name;
	b->nin[k][0] = (char *)in0;
	b->nin[k][1] = (char *)in1;
	n->n_input = in1 ? 2 : 1;
	n->input = b->nin[k];
	b->nout[k][0] = (char *)out;
	n->n_output = 1;
	n->output = b->nout[k];
	b->nodep[k] = n;
}

/* A float initializer of rank dims holding vals (the caller's). */
static void
mb_init_f32(Mb *b, const char *name, int rank, int64_t *dims, float *vals, size_t n)
{
	size_t k = b->g.n_initializer++;
	Onnx__TensorProto *t = &b->init[k];

	*t = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
	t->name = (char *)name;
	t->has_data_type = true;
	t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	t->n_dims = (size_t)rank;
	t->dims = dims;
	t->n_float_data = n;
	t->float_data = vals;
	b->initp[k] = t;
}

static uint8_t *
mb_pack(const Mb *b, size_t *len)
{
	uint8_t *buf;

	*len = onnx__model_proto__get_packed_size(&b->m);
	buf = malloc(*len ? *len : 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(onnx__model_proto__pack(&b->m, buf), *len);
	return buf;
}

/* imp_onnx on b's bytes: its return, the message in err; *text the
 * graph's print (malloc'd) on success, NULL otherwise. */
static int
mb_import(const Mb *b, const ImpOptions *o, char *err, char **text, ImpResult *keep)
{
	ImpOptions def = {.weights = "m.weights", .model_dir = "."};
	ImpResult r;
	size_t len, n;
	uint8_t *buf = mb_pack(b, &len);
	int rc = imp_onnx(buf, len, o ? o : &def, &r, err);

	free(buf);
	*text = NULL;
	if (rc != 0) {
		ck_assert_ptr_null(r.g);
		ck_assert(err[0]);
		ck_assert_int_eq(rc == 1, strncmp(err, "unsupported: ", 13) == 0);
		return rc;
	}
	*text = ir_print_str(r.g, &n);
	if (keep)
		*keep = r;
	else
		imp_result_free(&r);
	return 0;
}

static void
contains(const char *s, const char *want)
{
	ck_assert_msg(strstr(s, want) != NULL, "'%s' does not contain '%s'", s, want);
}

static const int64_t d23[] = {2, 3};

START_TEST(test_import_relu)
{
	Mb b;
	char err[IMP_ERR_MAX], *text;

	mb_init(&b, 13);
	mb_input(&b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d23);
	mb_output(&b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d23);
	mb_node(&b, "Relu", "r", "x", NULL, "y");
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), 0);
	ck_assert_str_eq(text, "graph @t {\n"
	    "  %x = input() : (2, 3) f32\n"
	    "  %y = relu(%x) : (2, 3) f32\n"
	    "}\n");
	free(text);
	/* the graph's name made safe; all digits, it gets a '_' (an @name
	 * cannot start with a digit), found by fuzz_import */
	b.g.name = (char *)"0";
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), 0);
	contains(text, "graph @_0 {\n");
	free(text);
	b.g.name = (char *)"my model/v2";
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), 0);
	contains(text, "graph @my_model_v2 {\n");
	free(text);
	b.g.name = (char *)"";
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), 0);
	contains(text, "graph {\n");
	free(text);
}
END_TEST

/* ONNX names made safe and unique; the outputs in ONNX's order, one that
 * is a graph input copied under its own name. */
START_TEST(test_import_names_outputs)
{
	Mb b;
	char err[IMP_ERR_MAX], *text;

	mb_init(&b, 13);
	mb_input(&b, "in:0", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 2, d23);
	mb_output(&b, "/b/Neg_output_0", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 2, d23);
	mb_output(&b, "/a/Relu_output_0", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 2, d23);
	mb_output(&b, "in:0", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 2, d23);
	mb_node(&b, "Relu", "", "in:0", NULL, "/a/Relu_output_0");
	mb_node(&b, "Neg", "", "/a/Relu_output_0", NULL, "/b/Neg_output_0");
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), 0);
	ck_assert_str_eq(text, "graph @t {\n"
	    "  %in_0 = input() : (2, 3)\n"
	    "  %a_Relu_out = relu(%in_0) : (2, 3)\n"
	    "  %b_Neg_out = neg(%a_Relu_out) : (2, 3)\n"
	    "  %in_0.0 = reshape(%in_0) : (2, 3) shape=(2, 3)\n"
	    "  return %b_Neg_out, %a_Relu_out, %in_0.0\n"
	    "}\n");
	free(text);
}
END_TEST

/* A dynamic dimension: an error naming the input and the option, then
 * fixed with --shape; --shape that contradicts the model. */
START_TEST(test_import_shape_option)
{
	static const int64_t dyn[] = {-1, 3};
	ImpShape sh = {.name = "x", .rank = 2, .dim = {5, 3}};
	ImpOptions o = {.weights = "m.weights", .model_dir = ".", .shapes = &sh, .nshapes = 1};
	Mb b;
	char err[IMP_ERR_MAX], *text;

	mb_init(&b, 13);
	mb_input(&b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dyn);
	mb_output(&b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dyn);
	mb_node(&b, "Relu", "r", "x", NULL, "y");
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), -1);
	ck_assert_str_eq(err, "graph input 'x': dimension 0 is dynamic ('N'); give the shape with "
	    "--shape x=DIMS");
	ck_assert_int_eq(mb_import(&b, &o, err, &text, NULL), 0);
	contains(text, "%x = input() : (5, 3) f32");
	contains(text, "%y = relu(%x) : (5, 3) f32");
	free(text);
	sh.dim[1] = 4;
	ck_assert_int_eq(mb_import(&b, &o, err, &text, NULL), -1);
	ck_assert_str_eq(err, "--shape x= gives dimension 1 as 4, the model fixes it at 3");
	sh.name = "z";
	ck_assert_int_eq(mb_import(&b, &o, err, &text, NULL), -1);
	ck_assert_str_eq(err, "--shape z=: the model has no graph input 'z'");
}
END_TEST

/* --bind freezes a graph input: Reshape's shape from it becomes the
 * attribute; a bind of another type is refused naming both. */
START_TEST(test_import_bind_option)
{
	static const int64_t two[] = {2}, d32[] = {3, 2};
	int64_t shape[2] = {3, 2};
	double wrong[2] = {3, 2};
	ImpBind bind = {.name = "s", .file = "s.npy", .type = {.rank = 1, .dt = DT_I64, .dim = {2}},
	    .p = shape};
	ImpOptions o = {.weights = "m.weights", .model_dir = ".", .binds = &bind, .nbinds = 1};
	Mb b;
	char err[IMP_ERR_MAX], *text;

	mb_init(&b, 13);
	mb_input(&b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d23);
	mb_input(&b, "s", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, two);
	mb_output(&b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d32);
	mb_node(&b, "Reshape", "rs", "x", "s", "y");
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), 1);
	contains(err, "unsupported: node 'rs' (Reshape): its shape (input 1, 's') is computed at "
	    "run time");
	ck_assert_int_eq(mb_import(&b, &o, err, &text, NULL), 0);
	ck_assert_str_eq(text, "graph @t {\n"
	    "  %x = input() : (2, 3) f32\n"
	    "  %y = reshape(%x) : (3, 2) f32 shape=(3, 2)\n"
	    "}\n");
	free(text);
	bind.type.dt = DT_F64;
	bind.p = wrong;
	ck_assert_int_eq(mb_import(&b, &o, err, &text, NULL), -1);
	ck_assert_str_eq(err, "--bind s=s.npy: the file holds (2,) f64, the input is (2,) i64");
}
END_TEST

/* An initializer of more than 64 elements is a weight to write, named in
 * the graph's file= under the weights folder; one of 64 is inline. */
START_TEST(test_import_weights)
{
	static int64_t big[] = {5, 13}, small[] = {64}, d513[] = {5, 13};
	static float wbig[65], wsmall[64];
	ImpResult r;
	Mb b;
	char err[IMP_ERR_MAX], *text;

	for (int k = 0; k < 65; k++)
		wbig[k] = (float)k / 4;
	for (int k = 0; k < 64; k++)
		wsmall[k] = (float)-k;
	mb_init(&b, 13);
	mb_input(&b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d513);
	mb_input(&b, "x2", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, small);
	mb_output(&b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d513);
	mb_output(&b, "z", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, small);
	mb_init_f32(&b, "fc.w", 2, big, wbig, 65);
	mb_init_f32(&b, "v", 1, small, wsmall, 64);
	/* each read as data by an op over a graph input, so neither folds */
	mb_node(&b, "Add", "a", "x", "fc.w", "y");
	mb_node(&b, "Add", "a2", "x2", "v", "z");
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, &r), 0);
	ck_assert_int_eq(r.nw, 1);
	ck_assert_str_eq(r.w[0].file, "m.weights/fc_w.npy");
	ck_assert_int_eq(r.w[0].type.dt, DT_F32);
	ck_assert_int_eq(r.w[0].type.rank, 2);
	ck_assert(memcmp(r.w[0].p, wbig, sizeof wbig) == 0);
	contains(text, "%fc_w = const() : (5, 13) f32 file=\"m.weights/fc_w.npy\"");
	contains(text, "%v = const() : (64,) f32 values=(0.0, -1.0, ");
	imp_result_free(&r);
	free(text);
	/* the data do not match the dims: the initializer named, both counts */
	b.init[0].n_float_data = 64;
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), -1);
	ck_assert_str_eq(err, "initializer 'fc.w': holds 64 elements in float_data, its dims make 65");
}
END_TEST

/* A bias added after the batched MatMul's GEMM fold is added before the
 * reshape back (sink_reshape in ops_elem.c), so fuse can make it the GEMM's
 * epilogue; a vector of higher rank than the GEMM is reshaped first; an
 * operand that is not a last-dim vector leaves the graph as it was. */
START_TEST(test_import_sink_reshape)
{
	Mb b;
	char err[IMP_ERR_MAX], *text;
	static int64_t dx[3] = {2, 3, 4}, dw[2] = {4, 5}, dy[3] = {2, 3, 5}, dv[3] = {1, 1, 5},
	    dm[3] = {2, 1, 5};
	static float w[20], v[5], m[10];

	mb_init(&b, 13);
	mb_input(&b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 3, dx);
	mb_output(&b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 3, dy);
	mb_init_f32(&b, "w", 2, dw, w, 20);
	mb_init_f32(&b, "v", 3, dv, v, 5);
	mb_node(&b, "MatMul", "mm", "x", "w", "t");
	mb_node(&b, "Add", "add", "v", "t", "y");
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), 0);
	contains(text, "%y.0 = reshape(%v) : (5,) f32 shape=(5,)");
	contains(text, "%y.1 = add(%y.0, %t.1) : (6, 5) f32");
	contains(text, "%y = reshape(%y.1) : (2, 3, 5) f32 shape=(2, 3, 5)");
	free(text);
	/* (2, 1, 5) varies along a dim the reshape merges: no sinking */
	mb_init(&b, 13);
	mb_input(&b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 3, dx);
	mb_output(&b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 3, dy);
	mb_init_f32(&b, "w", 2, dw, w, 20);
	mb_init_f32(&b, "v", 3, dm, m, 10);
	mb_node(&b, "MatMul", "mm", "x", "w", "t");
	mb_node(&b, "Add", "add", "v", "t", "y");
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), 0);
	contains(text, "%y = add(%v, %t) : (2, 3, 5) f32");
	free(text);
}
END_TEST

START_TEST(test_import_undefined_input)
{
	Mb b;
	char err[IMP_ERR_MAX], *text;

	mb_init(&b, 13);
	mb_input(&b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d23);
	mb_output(&b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d23);
	mb_node(&b, "Relu", "r", "x", NULL, "t");
	mb_node(&b, "Add", "", "t", "ghost", "y");
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), -1);
	ck_assert_str_eq(err, "node #1 (Add) computing 'y': input 1 'ghost' is not defined by an "
	    "earlier node, an initializer or a graph input");
	/* defined, but by a later node: still not before its use */
	mb_node(&b, "Neg", "late", "x", NULL, "ghost");
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), -1);
	contains(err, "input 1 'ghost' is not defined by an earlier node");
}
END_TEST

START_TEST(test_import_unsupported)
{
	Mb b;
	char err[IMP_ERR_MAX], *text;

	mb_init(&b, 13);
	mb_input(&b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d23);
	mb_output(&b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d23);
	mb_node(&b, "NoSuchOp", "n7", "x", NULL, "y");
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), 1);
	ck_assert_str_eq(err, "unsupported: node 'n7' (NoSuchOp): no translation of op 'NoSuchOp'");
	/* opsets outside 1 to 17 */
	b.node[0].op_type = (char *)"Relu";
	b.os.version = 18;
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), -1);
	ck_assert_str_eq(err, "opset 18 of the default domain: aicm-import knows opsets 1 to 17");
	b.os.version = 0;
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), -1);
	b.os.version = 1;
	ck_assert_int_eq(mb_import(&b, NULL, err, &text, NULL), 0);
	free(text);
}
END_TEST

/* Bytes that are no model: every prefix of a good one, and garbage. */
START_TEST(test_import_bad_bytes)
{
	ImpOptions o = {.weights = "m.weights", .model_dir = "."};
	ImpResult r;
	Mb b;
	char err[IMP_ERR_MAX], want[IMP_ERR_MAX];
	size_t len;
	uint8_t *buf;
	int bad = 0;

	mb_init(&b, 13);
	mb_input(&b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d23);
	mb_output(&b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d23);
	mb_node(&b, "Relu", "r", "x", NULL, "y");
	buf = mb_pack(&b, &len);
	ck_assert_int_eq(imp_onnx(buf, len, &o, &r, err), 0);
	imp_result_free(&r);
	/* a prefix may happen to end between fields and parse; none imports */
	for (size_t k = 0; k < len; k++) {
		int rc = imp_onnx(buf, k, &o, &r, err);

		ck_assert_int_eq(rc, -1);
		ck_assert_ptr_null(r.g);
		bad += strstr(err, "truncated or corrupt") != NULL;
	}
	ck_assert_int_gt(bad, (int)len / 2);
	ck_assert_int_eq(imp_onnx(buf, 0, &o, &r, err), -1);
	ck_assert_str_eq(err, "the file is empty, expected an ONNX model");
	memcpy(buf, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11);
	ck_assert_int_eq(imp_onnx(buf, len, &o, &r, err), -1);
	snprintf(want, sizeof want, "not an ONNX model, or a truncated or corrupt one: at byte 0 "
	    "of %zu, a field's tag is a varint of more than 10 bytes", len);
	ck_assert_str_eq(err, want);
	free(buf);
}
END_TEST

/* Messages nested past IMP_MAX_NESTING, packed by protobuf-c itself: a
 * node whose GRAPH attribute holds a node whose ... (three levels each). */
static uint8_t *
pack_nested(int graphs, size_t *len)
{
	Onnx__GraphProto *g = calloc((size_t)graphs + 1, sizeof *g);
	Onnx__NodeProto *n = calloc((size_t)graphs, sizeof *n), **np = calloc((size_t)graphs,
	    sizeof *np);
	Onnx__AttributeProto *a = calloc((size_t)graphs, sizeof *a), **ap = calloc((size_t)graphs,
	    sizeof *ap);
	Mb b;
	uint8_t *buf;

	ck_assert(g && n && np && a && ap);
	for (int k = 0; k <= graphs; k++)
		g[k] = (Onnx__GraphProto)ONNX__GRAPH_PROTO__INIT;
	for (int k = 0; k < graphs; k++) {
		n[k] = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
		a[k] = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
		n[k].op_type = (char *)"If";
		a[k].name = (char *)"then_branch";
		a[k].has_type = true;
		a[k].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
		a[k].g = &g[k + 1];
		ap[k] = &a[k];
		n[k].n_attribute = 1;
		n[k].attribute = &ap[k];
		np[k] = &n[k];
		g[k].n_node = 1;
		g[k].node = &np[k];
	}
	mb_init(&b, 13);
	b.m.graph = &g[0];
	buf = mb_pack(&b, len);
	free(g);
	free(n);
	free(np);
	free(a);
	free(ap);
	return buf;
}

/* The same in the wire format, from the inside out: a graph holding a
 * node (GraphProto.node = 1) holding an attribute (NodeProto.attribute =
 * 5) holding a graph (AttributeProto.g = 6), graphs times, inside a model
 * (ModelProto.graph = 7).  Each level's length is a varint of up to 4
 * bytes (the lengths stay under 2^28). */
static uint8_t *
wire_nested(int graphs, size_t *len)
{
	size_t cap = (size_t)graphs * 3 * 5 + 16, at = cap, body;
	uint8_t *buf = malloc(cap), *out;

	ck_assert_ptr_nonnull(buf);
	for (int k = 0; k <= 3 * graphs; k++) {
		static const uint8_t field[3] = {6, 5, 1};
		uint64_t v;
		uint8_t tmp[10];
		int nb = 0;

		body = cap - at;
		v = body;
		do {
			tmp[nb++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
			v >>= 7;
		} while (v);
		at -= (size_t)nb;
		memcpy(buf + at, tmp, (size_t)nb);
		buf[--at] = (uint8_t)((k == 3 * graphs ? 7 : field[k % 3]) << 3 | 2);
	}
	*len = cap - at;
	out = malloc(*len);
	ck_assert_ptr_nonnull(out);
	memcpy(out, buf + at, *len);
	free(buf);
	return out;
}

START_TEST(test_import_nesting)
{
	ImpOptions o = {.weights = "m.weights", .model_dir = "."};
	ImpResult r;
	char err[IMP_ERR_MAX];
	size_t len;
	uint8_t *buf;
	/* the model is level 1, its graph 2; graph k's node 3k, attribute
	 * 3k + 1, the attribute's graph 3k + 2: 33 graphs below reach 101 */
	int deep = (IMP_MAX_NESTING - 2) / 3 + 1;

	buf = pack_nested(deep, &len);
	ck_assert_int_eq(imp_onnx(buf, len, &o, &r, err), -1);
	ck_assert_str_eq(err, "its protobuf messages nest more than 100 deep; aicm-import reads at "
	    "most 100");
	free(buf);
	/* one level of graphs less: read, then refused for what it is */
	buf = pack_nested(deep - 1, &len);
	ck_assert_int_eq(imp_onnx(buf, len, &o, &r, err), 1);
	ck_assert_str_eq(err, "unsupported: node #0 (If): no translation of op 'If'");
	free(buf);
	/* very deep (written by hand: protobuf-c's packer recurses too): still
	 * refused before unpacking, no stack overflow */
	buf = wire_nested(1000000, &len);
	ck_assert_int_eq(imp_onnx(buf, len, &o, &r, err), -1);
	contains(err, "nest more than 100 deep");
	free(buf);
}
END_TEST

/* ---- the round trip over ONNX's test models ---------------------------- */

/* path's model imported: 1 when it round-trips, 0 when it is refused;
 * a failure of the round trip fails the test. */
static int
round_trip(const char *path, const char *dir)
{
	ImpOptions o = {.weights = "m.weights", .model_dir = dir};
	ImpResult r;
	char err[IMP_ERR_MAX], *buf, *t1, *t2;
	size_t len, n1, n2;
	Diag d;
	Graph *g;
	int rc;

	ck_assert_int_eq(aicm_read_file_max(path, IMP_MAX_MODEL, &buf, &len), 0);
	rc = imp_onnx(buf, len, &o, &r, err);
	free(buf);
	if (rc != 0)
		return 0;
	t1 = ir_print_str(r.g, &n1);
	diag_init(&d, path, t1, n1, NULL);
	d.collect = true;
	g = parse_graph(t1, n1, 1, &d);
	ck_assert_msg(g != NULL, "%s: its import does not parse back: %s", path,
	    d.nrecs ? d.recs[0].msg : "?");
	ck_assert_msg(ir_verify(g, &d) == 0, "%s: its import does not verify: %s", path,
	    d.nrecs ? d.recs[0].msg : "?");
	t2 = ir_print_str(g, &n2);
	ck_assert_msg(n1 == n2 && memcmp(t1, t2, n1) == 0, "%s: its import prints back "
	    "differently:\n%s\n----\n%s", path, t1, t2);
	free(t1);
	free(t2);
	ir_graph_free(g);
	diag_free(&d);
	imp_result_free(&r);
	return 1;
}

START_TEST(test_import_roundtrip_testdata)
{
	static const char *const sets[] = {"node", "pytorch-converted", "pytorch-operator",
		"simple"};
	const char *top = getenv("ONNX_TESTDATA") ? getenv("ONNX_TESTDATA") :
	    "/usr/share/libonnx-testdata/data";
	int n = 0, ok = 0;

	for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
		char dir[512];
		struct dirent **e;
		int m;

		snprintf(dir, sizeof dir, "%s/%s", top, sets[s]);
		if ((m = scandir(dir, &e, NULL, alphasort)) < 0)
			continue;
		for (int k = 0; k < m; k++) {
			char tdir[1024], path[1100];
			FILE *f;

			snprintf(tdir, sizeof tdir, "%s/%s", dir, e[k]->d_name);
			snprintf(path, sizeof path, "%s/model.onnx", tdir);
			free(e[k]);
			if (!(f = fopen(path, "rb")))
				continue;
			fclose(f);
			n++;
			ok += round_trip(path, tdir);
		}
		free(e);
	}
	if (n == 0) {
		fprintf(stderr, "check_import: round trip SKIPPED: no ONNX test models in %s "
		    "(Debian's libonnx-testdata)\n", top);
		return;
	}
	/* the framework's own translators alone import 175 of them */
	ck_assert_int_ge(ok, 100);
}
END_TEST

Suite *
make_import_suite(void)
{
	Suite *s = suite_create("import");
	TCase *names = tcase_create("names"), *models = tcase_create("models"),
	    *bad = tcase_create("bad"), *rt = tcase_create("roundtrip");

	tcase_add_test(names, test_import_safe_name);
	suite_add_tcase(s, names);
	tcase_add_test(models, test_import_relu);
	tcase_add_test(models, test_import_names_outputs);
	tcase_add_test(models, test_import_shape_option);
	tcase_add_test(models, test_import_bind_option);
	tcase_add_test(models, test_import_weights);
	tcase_add_test(models, test_import_sink_reshape);
	suite_add_tcase(s, models);
	tcase_add_test(bad, test_import_undefined_input);
	tcase_add_test(bad, test_import_unsupported);
	tcase_add_test(bad, test_import_bad_bytes);
	tcase_add_test(bad, test_import_nesting);
	suite_add_tcase(s, bad);
	tcase_add_test(rt, test_import_roundtrip_testdata);
	suite_add_tcase(s, rt);
	return s;
}
