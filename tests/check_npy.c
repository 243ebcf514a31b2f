/*
 * check_npy.c: .npy files: header versions 1.0, 2.0 and 3.0, the writer's
 * bytes, round trips of every rank and both element types, and each error
 * with the message it must give (the file, what it holds, what is wanted);
 * a const's file= confined to its data directory.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_aicm.h"
#include "exec.h"

static char dir[64];

static void
setup(void)
{
	ck_tmpdir(dir, sizeof dir, "npy");
}

static void
teardown(void)
{
	ck_tmpdir_remove(dir);
}

/* Writes a file: a version major.0 preamble, header text (padded with
 * spaces and a newline to a multiple of 16), then nbytes of data. */
static char *
make_file(const char *name, int major, const char *hdr, size_t nbytes)
{
	static char path[128];
	size_t h = strlen(hdr), pre = major == 1 ? 10 : 12, total = h + 1;
	FILE *f;

	while ((pre + total) % 16)
		total++;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	fwrite("\x93NUMPY", 1, 6, f);
	fputc(major, f);
	fputc(0, f);
	fputc((int)(total & 0xff), f);
	fputc((int)(total >> 8), f);
	if (major > 1) {
		fputc(0, f);
		fputc(0, f);
	}
	fputs(hdr, f);
	for (size_t i = h; i + 1 < total; i++)
		fputc(' ', f);
	fputc('\n', f);
	for (size_t i = 0; i < nbytes; i++)
		fputc((int)(i % 251), f);
	fclose(f);
	return path;
}

START_TEST(test_npy_header_versions)
{
	static const char *hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
	unsigned char buf[256];
	NpyHeader h;
	char err[EXEC_ERR_MAX];

	for (int major = 1; major <= 3; major++) {
		size_t pre = major == 1 ? 10 : 12, n = strlen(hdr);

		memset(buf, 0, sizeof buf);
		memcpy(buf, "\x93NUMPY", 6);
		buf[6] = (unsigned char)major;
		buf[8] = (unsigned char)n;
		memcpy(buf + pre, hdr, n);
		ck_assert_int_eq(exec_npy_parse_header(buf, pre + n, &h, err), 0);
		ck_assert_int_eq(h.major, major);
		ck_assert_uint_eq(h.data_off, pre + n);
		ck_assert(h.dt_ok && h.dt == DT_F32 && !h.fortran);
		ck_assert_int_eq(h.rank, 2);
		ck_assert_int_eq(h.dim[0], 2);
		ck_assert_int_eq(h.dim[1], 3);
	}
}
END_TEST

/* What older numpys and hand-written files may hold: double quotes, other
 * key order, Python 2 longs, no trailing comma, a scalar. */
START_TEST(test_npy_header_variants)
{
	static const char *hdrs[] = {
		"{\"shape\": (4,), \"fortran_order\": False, \"descr\": \"<f8\"}",
		"{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L)}",
		"{'descr':'<f8','fortran_order':False,'shape':()}",
	};
	static const int ranks[] = {1, 2, 0};
	unsigned char buf[256];
	NpyHeader h;
	char err[EXEC_ERR_MAX];

	for (int k = 0; k < 3; k++) {
		size_t n = strlen(hdrs[k]);

		memcpy(buf, "\x93NUMPY\x01\x00", 8);
		buf[8] = (unsigned char)n;
		buf[9] = 0;
		memcpy(buf + 10, hdrs[k], n);
		ck_assert_msg(exec_npy_parse_header(buf, 10 + n, &h, err) == 0, "%s", err);
		ck_assert_int_eq(h.rank, ranks[k]);
		ck_assert(h.dt == DT_F64);
	}
}
END_TEST

static void
roundtrip(DType dt, int rank)
{
	Type ty = {.rank = rank, .dt = dt, .dim = {2, 3, 1, 5}};
	Tensor t, u;
	char path[128], err[EXEC_ERR_MAX];
	unsigned char pre[10];
	FILE *f;

	ck_assert_int_eq(exec_tensor_alloc(&t, &ty, 0), 0);
	for (int64_t i = 0; i < t.numel; i++)
		exec_set(&t, i, (double)i / 7 - 1);
	snprintf(path, sizeof path, "%s/r%d%d.npy", dir, (int)dt, rank);
	ck_assert_msg(exec_npy_write(path, &t, err) == 0, "%s", err);
	f = fopen(path, "rb");
	ck_assert_int_eq(fread(pre, 1, 10, f), 10);
	fclose(f);
	ck_assert(!memcmp(pre, "\x93NUMPY\x01\x00", 8));
	ck_assert_int_eq((10 + pre[8] + 256 * pre[9]) % 64, 0);   /* numpy's alignment */
	ck_assert_msg(exec_npy_read(path, &ty, "it", 0, &u, err) == 0, "%s", err);
	ck_assert(exec_tensor_has_type(&u, &ty));
	ck_assert(!memcmp(t.data, u.data, exec_tensor_bytes(&t)));
	exec_tensor_free(&u);
	ck_assert_int_eq(exec_npy_read(path, NULL, NULL, 0, &u, err), 0);   /* any type */
	ck_assert_int_eq(u.rank, rank);
	exec_tensor_free(&u);
	exec_tensor_free(&t);
}

START_TEST(test_npy_roundtrip)
{
	for (int rank = 0; rank <= 4; rank++) {
		roundtrip(DT_F64, rank);
		roundtrip(DT_F32, rank);
		roundtrip(DT_I32, rank);
		roundtrip(DT_I64, rank);
		roundtrip(DT_BOOL, rank);
	}
}
END_TEST

/* The exact header the writer makes, byte for byte numpy's own. */
START_TEST(test_npy_write_header)
{
	Type ty = {.rank = 1, .dt = DT_F32, .dim = {3}};
	Tensor t;
	char path[128], err[EXEC_ERR_MAX], buf[129];
	FILE *f;

	exec_tensor_alloc(&t, &ty, 0);
	exec_fill_splat(&t, 1);
	snprintf(path, sizeof path, "%s/h.npy", dir);
	ck_assert_int_eq(exec_npy_write(path, &t, err), 0);
	f = fopen(path, "rb");
	/* 10 + 57 header bytes + a newline pad to 128, then 12 data bytes */
	ck_assert_int_eq(fread(buf, 1, 129, f), 129);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	ck_assert_int_eq(ftell(f), 140);
	fclose(f);
	ck_assert_int_eq(buf[8], 118);
	ck_assert(!memcmp(buf + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
	    57));
	ck_assert_int_eq(buf[127], '\n');
	ck_assert_int_eq(buf[126], ' ');
	exec_tensor_free(&t);
}
END_TEST

/* Reads path wanting type ty; returns the status and the message. */
static int
read_err(const char *path, const Type *ty, char *err)
{
	Tensor t;
	int rc = exec_npy_read(path, ty, "'%x' in the IR", 0, &t, err);

	if (rc == 0)
		exec_tensor_free(&t);
	else
		ck_assert_ptr_null(t.data);
	return rc;
}

#define HDR(descr, fortran, shape) \
	"{'descr': '" descr "', 'fortran_order': " fortran ", 'shape': " shape ", }"

/* A file of header hdr and the given data bytes. */
static char *
make_data(const char *name, const char *hdr, const void *data, size_t n)
{
	char *p = make_file(name, 1, hdr, 0);
	FILE *f = fopen(p, "ab");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	fclose(f);
	return p;
}

/* Checks and frees a (2, 3, 4) tensor read from the Fortran-ordered ramp
 * 0..23: element (i, j, l) lies at i + 2 j + 6 l. */
static void
expect_ramp234(Tensor *t)
{
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++)
			for (int l = 0; l < 4; l++)
				ck_assert(exec_get(t, (i * 3 + j) * 4 + l) == i + 2 * j + 6 * l);
	exec_tensor_free(t);
}

/* Big-endian and Fortran-ordered files are converted, as np.load does:
 * each against the C-order array numpy would give. */
START_TEST(test_npy_convert)
{
	Type t23 = {.rank = 2, .dt = DT_F64, .dim = {2, 3}};
	Type t234 = {.rank = 3, .dt = DT_F32, .dim = {2, 3, 4}};
	char err[EXEC_ERR_MAX], *p;
	unsigned char be[48];
	double col[6] = {1, 2, 3, 4, 5, 6};
	float f3[24];
	Tensor t;

	/* (2, 3) in Fortran order: columns [1 2], [3 4], [5 6] */
	p = make_data("fortran.npy", HDR("<f8", "True", "(2, 3)"), col, sizeof col);
	ck_assert_int_eq(exec_npy_read(p, &t23, "'%x' in the IR", 0, &t, err), 0);
	static const double want[6] = {1, 3, 5, 2, 4, 6};

	for (int i = 0; i < 6; i++)
		ck_assert(exec_get(&t, i) == want[i]);
	exec_tensor_free(&t);

	/* rank 3 */
	for (int k = 0; k < 24; k++)
		f3[k] = (float)k;
	p = make_data("fortran3.npy", HDR("<f4", "True", "(2, 3, 4)"), f3, sizeof f3);
	ck_assert_int_eq(exec_npy_read(p, &t234, NULL, 0, &t, err), 0);
	expect_ramp234(&t);

	/* big-endian f8, C order */
	for (int i = 0; i < 6; i++)
		for (int b = 0; b < 8; b++)
			be[8 * i + b] = ((unsigned char *)&col[i])[7 - b];
	p = make_data("big.npy", HDR(">f8", "False", "(2, 3)"), be, sizeof be);
	ck_assert_int_eq(exec_npy_read(p, &t23, NULL, 0, &t, err), 0);
	for (int i = 0; i < 6; i++)
		ck_assert(exec_get(&t, i) == col[i]);
	exec_tensor_free(&t);

	/* big-endian and Fortran order at once, f4 */
	{
		unsigned char b4[96];

		for (int k = 0; k < 24; k++) {
			float v = (float)k;

			for (int b = 0; b < 4; b++)
				b4[4 * k + b] = ((unsigned char *)&v)[3 - b];
		}
		p = make_data("bigf.npy", HDR(">f4", "True", "(2, 3, 4)"), b4, sizeof b4);
	}
	ck_assert_int_eq(exec_npy_read(p, &t234, NULL, 0, &t, err), 0);
	expect_ramp234(&t);

	/* rank 1 in "Fortran order" is C order too */
	p = make_data("f1.npy", HDR("<f8", "True", "(6,)"), col, sizeof col);
	ck_assert_int_eq(exec_npy_read(p, NULL, NULL, 0, &t, err), 0);
	ck_assert(exec_get(&t, 5) == 6);
	exec_tensor_free(&t);
}
END_TEST

/* The integer and bool files: exact values in both byte orders, a bool
 * byte other than 0 read as True, and each refused where the IR wants
 * another element type (i32 for i64, bool for i32). */
START_TEST(test_npy_int_types)
{
	Type t2i32 = {.rank = 1, .dt = DT_I32, .dim = {2}};
	Type t2i64 = {.rank = 1, .dt = DT_I64, .dim = {2}};
	Type t3b = {.rank = 1, .dt = DT_BOOL, .dim = {3}};
	char err[EXEC_ERR_MAX], *p;
	int32_t i4[2] = {INT32_MIN, 7};
	int64_t i8[2] = {INT64_MAX, -3};
	unsigned char be4[8], be8[16], b1[3] = {0, 1, 2};
	Tensor t;

	p = make_data("i4.npy", HDR("<i4", "False", "(2,)"), i4, sizeof i4);
	ck_assert_msg(exec_npy_read(p, &t2i32, "it", 0, &t, err) == 0, "%s", err);
	ck_assert_int_eq(exec_geti(&t, 0), INT32_MIN);
	ck_assert_int_eq(exec_geti(&t, 1), 7);
	exec_tensor_free(&t);
	ck_assert_int_eq(read_err(p, &t2i64, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "i4.npy' holds (2,) i32, but '%x' in the IR is (2,) i64"));

	for (int i = 0; i < 2; i++)
		for (int b = 0; b < 4; b++)
			be4[4 * i + b] = ((unsigned char *)&i4[i])[3 - b];
	p = make_data("bi4.npy", HDR(">i4", "False", "(2,)"), be4, sizeof be4);
	ck_assert_msg(exec_npy_read(p, &t2i32, "it", 0, &t, err) == 0, "%s", err);
	ck_assert_int_eq(exec_geti(&t, 0), INT32_MIN);
	ck_assert_int_eq(exec_geti(&t, 1), 7);
	exec_tensor_free(&t);

	for (int i = 0; i < 2; i++)
		for (int b = 0; b < 8; b++)
			be8[8 * i + b] = ((unsigned char *)&i8[i])[7 - b];
	p = make_data("bi8.npy", HDR(">i8", "False", "(2,)"), be8, sizeof be8);
	ck_assert_msg(exec_npy_read(p, &t2i64, "it", 0, &t, err) == 0, "%s", err);
	ck_assert(exec_geti(&t, 0) == INT64_MAX);
	ck_assert_int_eq(exec_geti(&t, 1), -3);
	exec_tensor_free(&t);

	p = make_data("b1.npy", HDR("|b1", "False", "(3,)"), b1, sizeof b1);
	ck_assert_msg(exec_npy_read(p, &t3b, "it", 0, &t, err) == 0, "%s", err);
	ck_assert_int_eq(((uint8_t *)t.data)[0], 0);
	ck_assert_int_eq(((uint8_t *)t.data)[1], 1);
	ck_assert_int_eq(((uint8_t *)t.data)[2], 1);
	exec_tensor_free(&t);
	t3b.dt = DT_I32;
	ck_assert_int_eq(read_err(p, &t3b, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "b1.npy' holds (3,) bool, but '%x' in the IR is "
	    "(3,) i32"));
}
END_TEST

/* The writer's descr for each type, as numpy writes it. */
START_TEST(test_npy_write_int_descr)
{
	static const struct {
		DType dt;
		const char *descr;
	} want[] = {{DT_I32, "'<i4'"}, {DT_I64, "'<i8'"}, {DT_BOOL, "'|b1'"}};

	for (int k = 0; k < 3; k++) {
		Type ty = {.rank = 1, .dt = want[k].dt, .dim = {2}};
		Tensor t;
		char path[128], err[EXEC_ERR_MAX], buf[64] = {0};
		FILE *f;

		ck_assert_int_eq(exec_tensor_alloc(&t, &ty, 0), 0);
		exec_seti(&t, 0, 1);
		exec_seti(&t, 1, 0);
		snprintf(path, sizeof path, "%s/w%d.npy", dir, k);
		ck_assert_int_eq(exec_npy_write(path, &t, err), 0);
		f = fopen(path, "rb");
		ck_assert_int_eq(fread(buf, 1, 30, f), 30);
		fclose(f);
		ck_assert_msg(!memcmp(buf + 10, "{'descr': ", 10) &&
		    !memcmp(buf + 20, want[k].descr, 5), "%s", buf + 10);
		exec_tensor_free(&t);
	}
}
END_TEST

START_TEST(test_npy_errors)
{
	Type t23 = {.rank = 2, .dt = DT_F64, .dim = {2, 3}};
	Type t23f = {.rank = 2, .dt = DT_F32, .dim = {2, 3}};
	char err[EXEC_ERR_MAX], path[128], *p;
	FILE *f;

	p = make_file("ok.npy", 2, HDR("<f8", "False", "(2, 3)"), 48);
	ck_assert_int_eq(read_err(p, &t23, err), 0);
	p = make_file("ok3.npy", 3, HDR("<f4", "False", "(2, 3)"), 24);
	ck_assert_int_eq(read_err(p, &t23f, err), 0);

	p = make_file("int.npy", 1, HDR("<i2", "False", "(2, 3)"), 12);
	ck_assert_int_eq(read_err(p, &t23, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "int.npy' holds unsupported elements ('<i2'); aicm "
	    "reads 'f4' (f32), 'f8' (f64), 'i4' (i32), 'i8' (i64), either byte order, and "
	    "'b1' (bool)"));

	/* an integer file is read only where the IR wants its type */
	p = make_file("i8.npy", 1, HDR("<i8", "False", "(2, 3)"), 48);
	ck_assert_int_eq(read_err(p, &t23, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "i8.npy' holds (2, 3) i64, but '%x' in the IR is "
	    "(2, 3) f64"));

	p = make_file("half.npy", 1, HDR(">f2", "False", "(2, 3)"), 12);
	ck_assert_int_eq(read_err(p, &t23, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "half.npy' holds unsupported elements ('>f2')"));

	p = make_file("short.npy", 1, HDR("<f8", "False", "(2, 3)"), 40);
	ck_assert_int_eq(read_err(p, &t23, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "short.npy' is truncated: it holds 40 bytes of data, "
	    "its header's (2, 3) f64 needs 48"));

	p = make_file("long.npy", 1, HDR("<f8", "False", "(2, 3)"), 56);
	ck_assert_int_eq(read_err(p, &t23, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "long.npy' holds 56 bytes of data, more than the 48"));

	p = make_file("shape.npy", 1, HDR("<f8", "False", "(3, 2)"), 48);
	ck_assert_int_eq(read_err(p, &t23, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "shape.npy' holds (3, 2) f64, but '%x' in the IR is "
	    "(2, 3) f64"));

	p = make_file("dtype.npy", 1, HDR("<f4", "False", "(2, 3)"), 24);
	ck_assert_int_eq(read_err(p, &t23, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "dtype.npy' holds (2, 3) f32, but '%x' in the IR is "
	    "(2, 3) f64"));

	/* a huge shape is refused from the header, before any allocation */
	p = make_file("huge.npy", 1, HDR("<f8", "False", "(4611686018427387904, 4)"), 8);
	ck_assert_int_eq(read_err(p, NULL, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "huge.npy' holds (4611686018427387904, 4) f64, more "
	    "than 2^63 bytes"));

	p = make_file("rank9.npy", 1, HDR("<f8", "False", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), 8);
	ck_assert_int_eq(read_err(p, NULL, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "more than 8 dimensions"));

	p = make_file("key.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), "
	    "'extra': 1}", 8);
	ck_assert_int_eq(read_err(p, NULL, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown key 'extra'"));

	p = make_file("nokey.npy", 1, "{'descr': '<f8', 'shape': ()}", 8);
	ck_assert_int_eq(read_err(p, NULL, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "lacks 'fortran_order'"));

	p = make_file("v4.npy", 4, HDR("<f8", "False", "()"), 8);
	ck_assert_int_eq(read_err(p, NULL, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "unsupported .npy version 4.0"));

	p = make_file("struct.npy", 1, "{'descr': [('a', '<f8')], 'fortran_order': False, "
	    "'shape': ()}", 8);
	ck_assert_int_eq(read_err(p, NULL, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "structured"));

	snprintf(path, sizeof path, "%s/magic.npy", dir);
	f = fopen(path, "wb");
	fputs("PK\x03\x04 not numpy", f);
	fclose(f);
	ck_assert_int_eq(read_err(path, NULL, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "magic.npy': not a .npy file"));

	/* a header whose length runs past the end of the file */
	snprintf(path, sizeof path, "%s/cut.npy", dir);
	f = fopen(path, "wb");
	fwrite("\x93NUMPY\x01\x00\x76\x00{'descr'", 1, 18, f);
	fclose(f);
	ck_assert_int_eq(read_err(path, NULL, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "the header is truncated"));

	ck_assert_int_eq(read_err("/nonexistent/x.npy", NULL, err), -2);
	ck_assert_ptr_nonnull(strstr(err, "cannot read '/nonexistent/x.npy'"));
	ck_assert_int_eq(read_err(dir, NULL, err), -2);
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
}
END_TEST

START_TEST(test_npy_read_limit)
{
	Type t23 = {.rank = 2, .dt = DT_F64, .dim = {2, 3}};
	Tensor t;
	char err[EXEC_ERR_MAX];
	char *p = make_file("lim.npy", 1, HDR("<f8", "False", "(2, 3)"), 48);

	ck_assert_int_eq(exec_npy_read(p, &t23, "x", 47, &t, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "48 bytes, more than --max-bytes=47"));
	ck_assert_int_eq(exec_npy_read(p, &t23, "x", 48, &t, err), 0);
	exec_tensor_free(&t);
}
END_TEST

START_TEST(test_npy_write_error)
{
	Type ty = {.rank = 0, .dt = DT_F64};
	Tensor t;
	char err[EXEC_ERR_MAX];

	exec_tensor_alloc(&t, &ty, 0);
	exec_fill_splat(&t, 2);
	ck_assert_int_eq(exec_npy_write("/nonexistent/dir/y.npy", &t, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "cannot write '/nonexistent/dir/y.npy'"));
	exec_tensor_free(&t);
}
END_TEST

/* A const's file= (exec_const_read): read relative to the data directory,
 * which it must stay inside: absolute, '..' and a symbolic link that leads
 * out are refused (-1), a missing file cannot be read (-2). */
static int
const_read(const char *datadir, const char *file, Tensor *t, char *err)
{
	Node n = {.op = OP_CONST, .name = "W", .type = {.rank = 1, .dt = DT_F64, .dim = {2}}};

	n.at.set = AB(FILE);
	n.at.file = file;
	return exec_const_read(datadir, &n, 0, t, err);
}

START_TEST(test_npy_const_confined)
{
	char in[128], path[256], err[EXEC_ERR_MAX];
	Tensor t;

	make_file("out.npy", 1, HDR("<f8", "False", "(2,)"), 16);
	snprintf(in, sizeof in, "%s/in", dir);
	ck_assert_int_eq(mkdir(in, 0700), 0);
	snprintf(path, sizeof path, "%s/sub", in);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	make_file("in/sub/w.npy", 1, HDR("<f8", "False", "(2,)"), 16);
	make_file("in/f32.npy", 1, HDR("<f4", "False", "(2,)"), 8);

	ck_assert_int_eq(const_read(in, "sub/w.npy", &t, err), 0);
	ck_assert_int_eq(t.numel, 2);
	exec_tensor_free(&t);
	ck_assert_int_eq(const_read(in, "./sub//w.npy", &t, err), 0);
	exec_tensor_free(&t);

	ck_assert_int_eq(const_read(in, "f32.npy", &t, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "holds (2,) f32, but '%W' in the IR is (2,) f64"));
	ck_assert_int_eq(const_read(in, "../out.npy", &t, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "'file' has a '..' component"));
	ck_assert_int_eq(const_read(in, "sub/../../out.npy", &t, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "'..' component"));
	snprintf(path, sizeof path, "%s/out.npy", dir);
	ck_assert_int_eq(const_read(in, path, &t, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "'file' is an absolute path"));

	/* a link inside that leads out, directly or through a folder */
	snprintf(path, sizeof path, "%s/link.npy", in);
	ck_assert_int_eq(symlink("../out.npy", path), 0);
	ck_assert_int_eq(const_read(in, "link.npy", &t, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "leads outside the data directory"));
	snprintf(path, sizeof path, "%s/up", in);
	ck_assert_int_eq(symlink("..", path), 0);
	ck_assert_int_eq(const_read(in, "up/out.npy", &t, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "leads outside the data directory"));
	/* a link that stays inside is fine */
	snprintf(path, sizeof path, "%s/inner.npy", in);
	ck_assert_int_eq(symlink("sub/w.npy", path), 0);
	ck_assert_int_eq(const_read(in, "inner.npy", &t, err), 0);
	exec_tensor_free(&t);

	ck_assert_int_eq(const_read(in, "none.npy", &t, err), -2);
	ck_assert_ptr_nonnull(strstr(err, "cannot read"));
	ck_assert_ptr_nonnull(strstr(err, "none.npy"));
	ck_assert_int_eq(const_read("/nonexistent-dir", "w.npy", &t, err), -2);
	ck_assert_ptr_nonnull(strstr(err, "cannot read the data directory"));
}
END_TEST

Suite *
make_npy_suite(void)
{
	Suite *s = suite_create("npy");
	TCase *h = tcase_create("header"), *f = tcase_create("files");

	tcase_add_test(h, test_npy_header_versions);
	tcase_add_test(h, test_npy_header_variants);
	tcase_add_checked_fixture(f, setup, teardown);
	tcase_add_test(f, test_npy_roundtrip);
	tcase_add_test(f, test_npy_write_header);
	tcase_add_test(f, test_npy_errors);
	tcase_add_test(f, test_npy_convert);
	tcase_add_test(f, test_npy_int_types);
	tcase_add_test(f, test_npy_write_int_descr);
	tcase_add_test(f, test_npy_read_limit);
	tcase_add_test(f, test_npy_write_error);
	tcase_add_test(f, test_npy_const_confined);
	suite_add_tcase(s, h);
	suite_add_tcase(s, f);
	return s;
}
