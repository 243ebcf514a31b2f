/*
 * check_api.c: libaicm's public API (src/api/aicm.h), used as a program
 * embedding aicm would: only aicm.h, no IR structs.
 *
 * The seed's mlp (relu(x @ W + bias).sum(axis=1), DESIGN section 10.1)
 * runs through the full pipeline and is checked against the same sum
 * written here in plain C; errors come back as status codes with the
 * located text (file:line:col, the quoted line, the caret); wrong buffers
 * are refused before anything runs; the KernelStats of the fused kernel
 * are the figures worked out by hand below (the Python test compares them
 * with aicm-run's too); and two contexts in two threads at once give
 * bitwise what one thread gives, since no mutable state is shared.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "aicm.h"
#include "check_aicm.h"


enum { M = 64, K = 48, N = 32 };

/* Deterministic data: x and W in [-1, 1), bias small. */
static void
mlp_data(double *x, double *w, double *b, int salt)
{
	for (int i = 0; i < M * K; i++)
		x[i] = (double)((i * 37 + salt * 11) % 101) / 50.5 - 1.0;
	for (int i = 0; i < K * N; i++)
		w[i] = (double)((i * 13 + 7) % 97) / 48.5 - 1.0;
	for (int j = 0; j < N; j++)
		b[j] = 0.01 * (j - N / 2);
}

static void
mlp_ref(const double *x, const double *w, const double *b, double *y)
{
	for (int i = 0; i < M; i++) {
		double s = 0;

		for (int j = 0; j < N; j++) {
			double v = b[j];

			for (int k = 0; k < K; k++)
				v += x[i * K + k] * w[k * N + j];
			s += v > 0 ? v : 0;
		}
		y[i] = s;
	}
}

static aicm_tensor
tensor(const char *name, aicm_dtype dt, int rank, const int64_t *shape, void *data)
{
	aicm_tensor t;

	memset(&t, 0, sizeof t);
	t.name = name;
	t.dtype = dt;
	t.rank = rank;
	for (int k = 0; k < rank; k++)
		t.shape[k] = shape[k];
	t.data = data;
	return t;
}

/* Parses the seed (ck_seed_text), runs pipeline (NULL: none) and
 * compiles it for engine; every step must succeed. */
static aicm_program *
mlp_program(aicm_context *ctx, aicm_module **m, const char *pipeline, aicm_engine engine)
{
	aicm_program *p = NULL;

	ck_assert_int_eq(aicm_parse(ctx, ck_seed_text, strlen(ck_seed_text), "mlp.aicm", m), AICM_OK);
	if (pipeline)
		ck_assert_msg(aicm_module_run_passes(*m, pipeline) == AICM_OK, "%s", aicm_error(ctx));
	ck_assert_msg(aicm_compile(*m, engine, &p) == AICM_OK, "%s", aicm_error(ctx));
	return p;
}

/* Runs p on x, W, bias (consts replaced by name) into y. */
static aicm_status
mlp_run(aicm_program *p, double *x, double *w, double *b, double *y)
{
	static const int64_t xs[] = {M, K}, ws[] = {K, N}, bs[] = {N}, ys[] = {M, 1};
	aicm_tensor in[3], out[1];

	in[0] = tensor(NULL, AICM_F64, 2, xs, x);
	in[1] = tensor("W", AICM_F64, 2, ws, w);
	in[2] = tensor("bias", AICM_F64, 1, bs, b);
	out[0] = tensor(NULL, AICM_F64, 2, ys, y);
	return aicm_program_run(p, in, 3, out, 1);
}

START_TEST(test_api_version)
{
	char want[32];

	snprintf(want, sizeof want, "%d.%d.%d", AICM_VERSION_MAJOR, AICM_VERSION_MINOR,
	    AICM_VERSION_PATCH);
	ck_assert_str_eq(aicm_version_string(), want);
	ck_assert_int_eq(aicm_version(), AICM_VERSION_MAJOR * 10000 + AICM_VERSION_MINOR * 100 +
	    AICM_VERSION_PATCH);
	ck_assert_str_eq(aicm_version_string(), AICM_VERSION);   /* the tools' --version */
}
END_TEST

/* The seed's mlp, whole pipeline, tile engine, against plain C; and the
 * reference engine on the same data. */
START_TEST(test_api_mlp_runs)
{
	static double x[M * K], w[K * N], b[N], y[M], yr[M], want[M];
	aicm_context *ctx = aicm_context_new();
	aicm_module *m, *mr;
	aicm_program *p, *pr;
	aicm_tensor d;

	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(aicm_context_set_threads(ctx, 2), AICM_OK);
	p = mlp_program(ctx, &m, "shape-infer,fuse,autotune,lower-tiled", AICM_ENGINE_TILE);
	pr = mlp_program(ctx, &mr, NULL, AICM_ENGINE_REFERENCE);
	ck_assert_int_eq(aicm_program_num_inputs(p), 1);
	ck_assert_int_eq(aicm_program_num_outputs(p), 1);
	ck_assert_int_eq(aicm_program_input(p, 0, &d), AICM_OK);
	ck_assert_str_eq(d.name, "x");
	ck_assert_int_eq(d.rank, 2);
	ck_assert(d.shape[0] == M && d.shape[1] == K && d.dtype == AICM_F64);
	ck_assert_int_eq(aicm_program_output(p, 0, &d), AICM_OK);
	ck_assert_str_eq(d.name, "rowsum");
	mlp_data(x, w, b, 0);
	mlp_ref(x, w, b, want);
	ck_assert_msg(mlp_run(p, x, w, b, y) == AICM_OK, "%s", aicm_error(ctx));
	ck_assert_str_eq(aicm_error(ctx), "");
	ck_assert_msg(mlp_run(pr, x, w, b, yr) == AICM_OK, "%s", aicm_error(ctx));
	for (int i = 0; i < M; i++) {
		ck_assert_msg(fabs(y[i] - want[i]) <= 1e-12 * fmax(fabs(want[i]), 1),
		    "row %d: tile %.17g, want %.17g", i, y[i], want[i]);
		ck_assert_msg(fabs(yr[i] - want[i]) <= 1e-12 * fmax(fabs(want[i]), 1),
		    "row %d: reference %.17g, want %.17g", i, yr[i], want[i]);
	}
	/* the reference engine keeps no kernel statistics */
	ck_assert_int_eq(aicm_program_num_kernels(pr), 0);
	aicm_program_free(p);
	aicm_program_free(pr);
	aicm_module_free(m);
	aicm_module_free(mr);
	aicm_context_free(ctx);
}
END_TEST

/* A const replaced by a run keeps its new value for later runs, and the
 * tile engine's packed copy of it follows: the mlp through
 * lower-tiled{bm=16,bn=16,bk=16}, where W's 16x16 tiles are packed once
 * and kept across runs (tile_exec.h), run with W, then with another W by
 * name (the same program: without the library saying so, the first W's
 * packs would be read), then with x alone (the second W stays), each
 * against plain C. */
START_TEST(test_api_const_replaced_between_runs)
{
	static double x[M * K], w[K * N], w2[K * N], b[N], y[M], want[M];
	static const int64_t xs[] = {M, K}, ys[] = {M, 1};
	aicm_context *ctx = aicm_context_new();
	aicm_module *m;
	aicm_program *p = mlp_program(ctx, &m, "shape-infer,fuse,lower-tiled{bm=16,bn=16,bk=16}",
	    AICM_ENGINE_TILE);
	aicm_tensor in = tensor(NULL, AICM_F64, 2, xs, x), out = tensor(NULL, AICM_F64, 2, ys, y);

	mlp_data(x, w, b, 1);
	for (int i = 0; i < K * N; i++)
		w2[i] = 0.5 - w[i] * 0.75;
	for (int run = 0; run < 3; run++) {
		const double *wr = run == 0 ? w : w2;

		if (run < 2)
			ck_assert_msg(mlp_run(p, x, (double *)wr, b, y) == AICM_OK, "%s",
			    aicm_error(ctx));
		else
			ck_assert_msg(aicm_program_run(p, &in, 1, &out, 1) == AICM_OK, "%s",
			    aicm_error(ctx));
		mlp_ref(x, wr, b, want);
		for (int i = 0; i < M; i++)
			ck_assert_msg(fabs(y[i] - want[i]) <= 1e-12 * fmax(fabs(want[i]), 1),
			    "run %d, row %d: %.17g, want %.17g", run, i, y[i], want[i]);
	}
	aicm_program_free(p);
	aicm_module_free(m);
	aicm_context_free(ctx);
}
END_TEST

/* A module prints as .aicm text: after compiling for the tile engine,
 * the lowered program; and an output the library allocates. */
START_TEST(test_api_print_and_alloc)
{
	static double x[M * K];
	static const int64_t xs[] = {M, K};
	aicm_context *ctx = aicm_context_new();
	aicm_module *m;
	aicm_program *p;
	aicm_tensor in, out[2];
	size_t n;
	char *s;

	ck_assert_int_eq(aicm_parse(ctx, ck_seed_text, strlen(ck_seed_text), NULL, &m), AICM_OK);
	s = aicm_module_print(m, &n);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(strlen(s), n);
	ck_assert_ptr_nonnull(strstr(s, "%mm = matmul(%x, %W)\n"));
	aicm_free(s);
	ck_assert_int_eq(aicm_compile(m, AICM_ENGINE_TILE, &p), AICM_OK);
	s = aicm_module_print(m, NULL);
	ck_assert_ptr_nonnull(strstr(s, "tiled"));
	aicm_free(s);
	/* passes are refused while a program uses the module */
	ck_assert_int_eq(aicm_module_run_passes(m, "fuse"), AICM_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(aicm_error(ctx), "free them before running passes"));
	memset(x, 0, sizeof x);
	in = tensor("x", AICM_F64, 2, xs, x);
	memset(out, 0, sizeof out);
	out[1].name = "mm";                  /* any value by name */
	ck_assert_msg(aicm_program_run(p, &in, 1, out, 2) == AICM_OK, "%s", aicm_error(ctx));
	ck_assert_ptr_nonnull(out[0].data);
	ck_assert_str_eq(out[0].name, "rowsum");
	ck_assert_int_eq(out[0].rank, 2);
	ck_assert(out[0].shape[0] == M && out[0].shape[1] == 1 && out[0].dtype == AICM_F64);
	ck_assert_str_eq(out[1].name, "mm");
	ck_assert(out[1].rank == 2 && out[1].shape[0] == M && out[1].shape[1] == N);
	/* x = 0: mm is 0 and rowsum the sum of relu(bias) over a row */
	for (int i = 0; i < M * N; i++)
		ck_assert(((double *)out[1].data)[i] == 0);
	aicm_free(out[0].data);
	aicm_free(out[1].data);
	aicm_program_free(p);
	aicm_module_free(m);
	aicm_context_free(ctx);
}
END_TEST

/* A parse error: the status, and the text with its place, the line and
 * the caret, as aicm-opt prints it. */
START_TEST(test_api_parse_error)
{
	static const char bad[] = "graph {\n  %x = input() : (4, 4)\n  %y = matmull(%x, %x)\n}\n";
	aicm_context *ctx = aicm_context_new();
	aicm_module *m = (aicm_module *)&m;
	const char *e;

	ck_assert_int_eq(aicm_parse(ctx, bad, strlen(bad), "nets/bad.aicm", &m), AICM_ERR_INPUT);
	ck_assert_ptr_null(m);
	e = aicm_error(ctx);
	ck_assert_msg(strstr(e, "nets/bad.aicm:3:8: error: unknown op 'matmull'") == e, "%s", e);
	ck_assert_msg(strstr(e, "\n    %y = matmull(%x, %x)\n") != NULL, "%s", e);
	ck_assert_msg(strstr(e, "\n         ^~~~~~~\n") != NULL, "%s", e);
	/* a shape error, found as the text is verified, located too */
	{
		static const char shp[] = "graph {\n  %a = input() : (4, 3)\n"
		    "  %b = input() : (4, 3)\n  %c = matmul(%a, %b)\n}\n";

		ck_assert_int_eq(aicm_parse(ctx, shp, strlen(shp), "s.aicm", &m), AICM_ERR_INPUT);
		e = aicm_error(ctx);
		ck_assert_msg(strstr(e, "s.aicm:4:19: error: 'matmul' cannot multiply (4, 3) by "
		    "(4, 3): inner dimensions 3 and 4 differ\n") == e, "%s", e);
	}
	/* a pipeline that does not parse is a usage error naming the pass */
	ck_assert_int_eq(aicm_parse(ctx, ck_seed_text, strlen(ck_seed_text), NULL, &m), AICM_OK);
	ck_assert_int_eq(aicm_module_run_passes(m, "shape-infer,fusee"), AICM_ERR_USAGE);
	ck_assert_msg(strstr(aicm_error(ctx), "'fusee'") != NULL, "%s", aicm_error(ctx));
	ck_assert_int_eq(aicm_module_run_passes(m, "shape-infer"), AICM_OK);
	ck_assert_str_eq(aicm_error(ctx), "");
	aicm_module_free(m);
	/* NULL handles are refused, not dereferenced */
	ck_assert_int_eq(aicm_parse(NULL, bad, strlen(bad), NULL, &m), AICM_ERR_USAGE);
	ck_assert_int_eq(aicm_module_run_passes(NULL, "fuse"), AICM_ERR_USAGE);
	ck_assert_int_eq(aicm_compile(NULL, AICM_ENGINE_TILE, NULL), AICM_ERR_USAGE);
	ck_assert_int_eq(aicm_program_run(NULL, NULL, 0, NULL, 0), AICM_ERR_USAGE);
	aicm_context_free(ctx);
}
END_TEST

/* Wrong buffers: each refused with a diagnostic at the value, and the
 * program still runs after. */
START_TEST(test_api_wrong_buffers)
{
	static double x[M * K], w[K * N], b[N], y[M];
	static float xf[M * K];
	static const int64_t xs[] = {M, K}, bad[] = {M, K + 1}, ys[] = {M, 1};
	aicm_context *ctx = aicm_context_new();
	aicm_module *m;
	aicm_program *p = mlp_program(ctx, &m, "shape-infer,fuse,autotune,lower-tiled",
	    AICM_ENGINE_TILE);
	aicm_tensor in[2], out[1];
	const char *e;

	out[0] = tensor(NULL, AICM_F64, 2, ys, y);
	/* a shape */
	in[0] = tensor(NULL, AICM_F64, 2, bad, x);
	ck_assert_int_eq(aicm_program_run(p, in, 1, out, 1), AICM_ERR_INPUT);
	e = aicm_error(ctx);
	ck_assert_msg(strstr(e, "mlp.aicm:3:3: error: input '%x' is given as (64, 49) f64; "
	    "expected (64, 48) f64\n") == e, "%s", e);
	/* a dtype */
	in[0] = tensor(NULL, AICM_F32, 2, xs, xf);
	ck_assert_int_eq(aicm_program_run(p, in, 1, out, 1), AICM_ERR_INPUT);
	ck_assert_msg(strstr(aicm_error(ctx), "is given as (64, 48) f32; expected (64, 48) f64"),
	    "%s", aicm_error(ctx));
	/* a name the graph lacks, and one that is not a source */
	in[0] = tensor("y", AICM_F64, 2, xs, x);
	ck_assert_int_eq(aicm_program_run(p, in, 1, out, 1), AICM_ERR_INPUT);
	ck_assert_msg(strstr(aicm_error(ctx), "input '%y' is given, but the graph has no value "
	    "'%y'"), "%s", aicm_error(ctx));
	in[0] = tensor("rowsum", AICM_F64, 2, xs, x);
	ck_assert_int_eq(aicm_program_run(p, in, 1, out, 1), AICM_ERR_INPUT);
	ck_assert_msg(strstr(aicm_error(ctx), "'%rowsum' is not an input or a const"), "%s",
	    aicm_error(ctx));
	/* too many by position, none at all, twice */
	in[0] = tensor(NULL, AICM_F64, 2, xs, x);
	in[1] = tensor(NULL, AICM_F64, 2, xs, x);
	ck_assert_int_eq(aicm_program_run(p, in, 2, out, 1), AICM_ERR_INPUT);
	ck_assert_msg(strstr(aicm_error(ctx), "input 2 is given, but the graph has 1 input"),
	    "%s", aicm_error(ctx));
	ck_assert_int_eq(aicm_program_run(p, NULL, 0, out, 1), AICM_ERR_INPUT);
	ck_assert_msg(strstr(aicm_error(ctx), "input '%x' is not given"), "%s", aicm_error(ctx));
	in[1] = tensor("x", AICM_F64, 2, xs, x);
	ck_assert_int_eq(aicm_program_run(p, in, 2, out, 1), AICM_ERR_INPUT);
	ck_assert_msg(strstr(aicm_error(ctx), "input '%x' is given twice"), "%s",
	    aicm_error(ctx));
	/* an output buffer of the wrong shape */
	in[0] = tensor(NULL, AICM_F64, 2, xs, x);
	out[0] = tensor(NULL, AICM_F64, 2, xs, y);
	ck_assert_int_eq(aicm_program_run(p, in, 1, out, 1), AICM_ERR_INPUT);
	ck_assert_msg(strstr(aicm_error(ctx), "output '%rowsum' is given as (64, 48) f64; "
	    "expected (64, 1) f64"), "%s", aicm_error(ctx));
	/* and a right call still works */
	mlp_data(x, w, b, 1);
	ck_assert_int_eq(mlp_run(p, x, w, b, y), AICM_OK);
	aicm_program_free(p);
	aicm_module_free(m);
	aicm_context_free(ctx);
}
END_TEST

/* The fused mlp is one matmul_epilogue kernel; its figures by hand: it
 * reads x, W and bias once (8 bytes each: 64*48 + 48*32 + 32), writes the
 * (64, 1) result, and does 2*64*48*32 flops for the matmul and 64*32 each
 * for the add, the relu and the sum. */
START_TEST(test_api_stats)
{
	static double x[M * K], w[K * N], b[N], y[M];
	aicm_context *ctx = aicm_context_new();
	aicm_module *m;
	aicm_program *p = mlp_program(ctx, &m, "shape-infer,fuse,autotune,lower-tiled",
	    AICM_ENGINE_TILE);
	aicm_kernel_stats s, t;
	int64_t rd = 8 * (M * K + K * N + N), fl = 2 * M * K * N + 3 * M * N;

	ck_assert_int_eq(aicm_program_num_kernels(p), 0);      /* before a run */
	mlp_data(x, w, b, 2);
	ck_assert_int_eq(mlp_run(p, x, w, b, y), AICM_OK);
	ck_assert_int_eq(aicm_program_num_kernels(p), 1);
	ck_assert_int_eq(aicm_program_kernel_stats(p, 0, &s), AICM_OK);
	ck_assert_str_eq(s.kind, "matmul_epilogue");
	ck_assert_str_eq(s.result, "rowsum");
	ck_assert_int_eq(s.bytes_read, rd);
	ck_assert_int_eq(s.ideal_read, rd);
	ck_assert_int_eq(s.bytes_written, 8 * M);
	ck_assert_int_eq(s.flops, fl);
	ck_assert_int_eq(s.programs, s.grid[0] * s.grid[1] * s.grid[2]);
	ck_assert_int_eq(aicm_program_kernel_stats(p, -1, &t), AICM_OK);
	ck_assert_str_eq(t.name, "total");
	ck_assert_int_eq(t.flops, s.flops);
	ck_assert_int_eq(t.bytes_read, s.bytes_read);
	ck_assert_int_eq(aicm_program_kernel_stats(p, 1, &t), AICM_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(aicm_error(ctx), "kernel 1 does not exist"));
	aicm_program_free(p);
	aicm_module_free(m);
	aicm_context_free(ctx);
}
END_TEST

/* ---- two contexts, two threads ----------------------------------------- */

enum { THREAD_RUNS = 8 };

typedef struct Job {
	int salt;
	double y[THREAD_RUNS][M];
	int failed;
} Job;

/* Everything from scratch in its own context: parse, passes (autotune
 * included), compile, run THREAD_RUNS times on its own data. */
static void *
job_main(void *arg)
{
	static const int64_t xs[] = {M, K}, ys[] = {M, 1};
	Job *j = arg;
	double *x = malloc(sizeof(double) * M * K);
	aicm_context *ctx = aicm_context_new();
	aicm_module *m = NULL;
	aicm_program *p = NULL;

	aicm_context_set_threads(ctx, 2);
	aicm_context_set_seed(ctx, 7);
	if (aicm_parse(ctx, ck_seed_text, strlen(ck_seed_text), "mlp.aicm", &m) != AICM_OK ||
	    aicm_module_run_passes(m, "shape-infer,fuse,autotune,lower-tiled") != AICM_OK ||
	    aicm_compile(m, AICM_ENGINE_TILE, &p) != AICM_OK) {
		j->failed = 1;
	} else {
		for (int r = 0; r < THREAD_RUNS && !j->failed; r++) {
			aicm_tensor in, out;

			for (int i = 0; i < M * K; i++)
				x[i] = sin(0.01 * i + j->salt + r);
			in = tensor(NULL, AICM_F64, 2, xs, x);
			out = tensor(NULL, AICM_F64, 2, ys, j->y[r]);
			if (aicm_program_run(p, &in, 1, &out, 1) != AICM_OK)
				j->failed = 1;
		}
	}
	aicm_program_free(p);
	aicm_module_free(m);
	aicm_context_free(ctx);
	free(x);
	return NULL;
}

START_TEST(test_api_two_threads)
{
	static Job alone[2], together[2];
	pthread_t t[2];

	/* one at a time, then both at once: bitwise the same */
	for (int k = 0; k < 2; k++) {
		alone[k].salt = together[k].salt = k;
		job_main(&alone[k]);
		ck_assert(!alone[k].failed);
	}
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(pthread_create(&t[k], NULL, job_main, &together[k]), 0);
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(pthread_join(t[k], NULL), 0);
	for (int k = 0; k < 2; k++) {
		ck_assert(!together[k].failed);
		ck_assert(memcmp(alone[k].y, together[k].y, sizeof alone[k].y) == 0);
	}
	/* and the two jobs did differ (the check above could not pass by
	 * both computing nothing) */
	ck_assert(memcmp(alone[0].y, alone[1].y, sizeof alone[0].y) != 0);
}
END_TEST

/* The native engine's environment for one test: its cache in a folder
 * of the test's own, portable flags (quick to compile, and no AVX-512,
 * which valgrind cannot run), and CC when cc is given; native_env_end
 * puts the process's back (CK_FORK=no runs every test in one process). */
typedef struct NativeEnv {
	char dir[256];
	char *old[3];
} NativeEnv;

static const char *const native_vars[3] = {"XDG_CACHE_HOME", "AICM_CFLAGS", "CC"};

static void
native_env_begin(NativeEnv *e, const char *cc)
{
	for (int i = 0; i < 3; i++) {
		const char *v = getenv(native_vars[i]);

		e->old[i] = v ? strdup(v) : NULL;
	}
	ck_tmpdir(e->dir, sizeof e->dir, "api-native");
	setenv("XDG_CACHE_HOME", e->dir, 1);
	setenv("AICM_CFLAGS", "-O1 -fPIC -shared", 1);
	if (cc)
		setenv("CC", cc, 1);
}

static void
native_env_end(NativeEnv *e)
{
	for (int i = 0; i < 3; i++) {
		if (e->old[i])
			setenv(native_vars[i], e->old[i], 1);
		else
			unsetenv(native_vars[i]);
		free(e->old[i]);
	}
	ck_tmpdir_remove(e->dir);
}

/* The native engine through the library: the mlp compiled to C, built,
 * loaded and run, against the reference engine on the same data, twice
 * (the second time with another W given by name: the generated code
 * reads the const's buffer on every run); its KernelStats are the tile
 * engine's; and a gather index out of range is AICM_ERR_INPUT with the
 * message the other engines give. */
START_TEST(test_api_native)
{
	static double x[M * K], w[K * N], w2[K * N], b[N], y[M], yr[M];
	static const char gather[] = "graph {\n  %x = input() : (5, 7)\n"
	    "  %i = const() : (2, 3) i64 values=(0, 4, -5, 2, 7, -6)\n"
	    "  %g = gather(%x, %i) axis=0\n}\n";
	static const int64_t gs[] = {5, 7};
	static double gx[35];
	NativeEnv env;
	aicm_context *ctx = aicm_context_new();
	aicm_module *m, *mr, *mg, *mt;
	aicm_program *p, *pr, *pg, *pt;
	aicm_tensor in;
	aicm_kernel_stats st;
	int nk;

	native_env_begin(&env, NULL);
	ck_assert_int_eq(aicm_context_set_threads(ctx, 2), AICM_OK);
	p = mlp_program(ctx, &m, "shape-infer,fuse,lower-tiled", AICM_ENGINE_NATIVE);
	pr = mlp_program(ctx, &mr, NULL, AICM_ENGINE_REFERENCE);
	ck_assert_int_eq(aicm_program_num_kernels(p), 0);      /* before a run */
	mlp_data(x, w, b, 2);
	for (int i = 0; i < K * N; i++)
		w2[i] = 0.25 + w[i] * 0.5;
	for (int run = 0; run < 2; run++) {
		double *wr = run ? w2 : w;

		ck_assert_msg(mlp_run(p, x, wr, b, y) == AICM_OK, "%s", aicm_error(ctx));
		ck_assert_msg(mlp_run(pr, x, wr, b, yr) == AICM_OK, "%s", aicm_error(ctx));
		for (int i = 0; i < M; i++)
			ck_assert_msg(fabs(y[i] - yr[i]) <= 1e-12 * fmax(fabs(yr[i]), 1),
			    "run %d, row %d: native %.17g, reference %.17g", run, i, y[i], yr[i]);
	}
	/* KernelStats: the tile engine's on the same program (DESIGN section
	 * 13), as aicm-run --engine=native --stats gives them, figures by
	 * hand as in test_api_stats */
	pt = mlp_program(ctx, &mt, "shape-infer,fuse,lower-tiled", AICM_ENGINE_TILE);
	ck_assert_int_eq(mlp_run(pt, x, w2, b, yr), AICM_OK);
	nk = aicm_program_num_kernels(p);
	ck_assert_int_eq(nk, 1);
	ck_assert_int_eq(nk, aicm_program_num_kernels(pt));
	for (int k = -1; k < nk; k++) {
		aicm_kernel_stats s, t;

		ck_assert_msg(aicm_program_kernel_stats(p, k, &s) == AICM_OK, "%s", aicm_error(ctx));
		ck_assert_int_eq(aicm_program_kernel_stats(pt, k, &t), AICM_OK);
		ck_assert_str_eq(s.name, t.name);
		ck_assert_str_eq(s.kind, t.kind);
		ck_assert_str_eq(s.result, t.result);
		for (int j = 0; j < 3; j++)
			ck_assert_int_eq(s.grid[j], t.grid[j]);
		ck_assert_int_eq(s.programs, t.programs);
		ck_assert_int_eq(s.bytes_read, t.bytes_read);
		ck_assert_int_eq(s.bytes_written, t.bytes_written);
		ck_assert_int_eq(s.flops, t.flops);
		ck_assert_int_eq(s.ideal_read, t.ideal_read);
		ck_assert_int_eq(s.ideal_written, t.ideal_written);
		ck_assert_int_eq(s.flops, 2 * M * K * N + 3 * M * N);
		ck_assert_int_eq(s.ideal_read, 8 * (M * K + K * N + N));
		ck_assert_int_eq(s.bytes_written, 8 * M);
	}
	ck_assert_int_eq(aicm_program_kernel_stats(p, nk, &st), AICM_ERR_USAGE);
	aicm_program_free(pt);
	aicm_module_free(mt);
	/* the engine that ran is the compiled C: its cache holds it */
	{
		char so[512];
		DIR *dir;
		struct dirent *de;
		int nso = 0;

		snprintf(so, sizeof so, "%s/aicm", env.dir);
		ck_assert_ptr_nonnull(dir = opendir(so));
		while ((de = readdir(dir)))
			nso += strlen(de->d_name) > 3 && !strcmp(de->d_name + strlen(de->d_name) - 3,
			    ".so");
		closedir(dir);
		ck_assert_int_eq(nso, 1);
	}
	ck_assert_int_eq(aicm_parse(ctx, gather, strlen(gather), "g.aicm", &mg), AICM_OK);
	ck_assert_msg(aicm_compile(mg, AICM_ENGINE_NATIVE, &pg) == AICM_OK, "%s", aicm_error(ctx));
	in = tensor(NULL, AICM_F64, 2, gs, gx);
	ck_assert_int_eq(aicm_program_run(pg, &in, 1, NULL, 0), AICM_ERR_INPUT);
	ck_assert_int_eq(aicm_program_num_kernels(pg), 0);     /* no run succeeded */
	ck_assert_msg(strstr(aicm_error(ctx), "g.aicm:4:3: error: '%g': 'gather' index 7 at [1, 1] "
	    "of its indices is out of range for axis 0 of size 5\n") == aicm_error(ctx), "%s",
	    aicm_error(ctx));
	aicm_program_free(pg);
	aicm_module_free(mg);
	aicm_program_free(p);
	aicm_program_free(pr);
	aicm_module_free(m);
	aicm_module_free(mr);
	aicm_context_free(ctx);
	native_env_end(&env);
}
END_TEST

/* One kernel with a gather out of range and an integer division by zero
 * in different programs, on 2 threads, each program's a thread of its
 * own: the native engine reports what the tile engine reports, the same
 * every run (its threads raced to flag the error, and a division by zero
 * in program 2 and a gather out of range in program 60 came out as the
 * gather); and of two gathers out of range, the lower program's. */
START_TEST(test_api_native_error_order)
{
	static const struct {
		int bad_index, zero_row;   /* the programs with the errors, or -1 */
		int bad_index2;
		const char *want;
	} c[] = {
	    {60, 2, -1, "e.aicm:5:3: error: '%q': integer division by zero in 'div' (its tile "
	     "'%q1' of kernel '@k')\n"},
	    {2, 60, -1, "e.aicm:5:3: error: '%q': integer division by zero in 'div' (its tile "
	     "'%q1' of kernel '@k')\n"},
	    {50, -1, 10, "e.aicm:5:8: error: '%q': 'gather' index 99 at [10] of its indices is "
	     "out of range for axis 0 of size 64\n"},
	};
	static const int64_t zs[] = {64, 8};
	static int64_t z[64 * 8];
	NativeEnv env;
	aicm_context *ctx = aicm_context_new();

	native_env_begin(&env, NULL);
	ck_assert_int_eq(aicm_context_set_threads(ctx, 2), AICM_OK);
	for (size_t ci = 0; ci < sizeof c / sizeof c[0]; ci++) {
		char text[2048], vals[512];
		size_t len = 0;
		aicm_module *m;
		aicm_program *p[2];
		aicm_tensor in = tensor(NULL, AICM_I64, 2, zs, z);

		for (int i = 0; i < 64; i++)
			len += (size_t)snprintf(vals + len, sizeof vals - len, "%s%d", i ? ", " : "",
			    i == c[ci].bad_index || i == c[ci].bad_index2 ? 99 : i);
		snprintf(text, sizeof text, "graph {\n  %%x = const() : (64, 8) i64 value=3\n"
		    "  %%i = const() : (64,) i64 values=(%s)\n  %%z = input() : (64, 8) i64\n"
		    "  %%q = tiled @k [opaque] (%%x, %%i, %%z) : (64, 8) i64 grid=(64, 1) BM=1 BN=32 {\n"
		    "    %%m = program_id() axis=0\n    %%n = program_id() axis=1\n"
		    "    %%idx = load %%i[%%m] : [1]\n"
		    "    %%t = load_gather %%x[0, %%n * 32], %%idx : [1, 32] axis=0 masked\n"
		    "    %%zt = load %%z[%%m, %%n * 32] : [1, 32] other=1\n"
		    "    %%q1 = div(%%t, %%zt) : [1, 32]\n    store %%q[%%m, %%n * 32], %%q1 masked\n"
		    "  }\n}\n", vals);
		for (int i = 0; i < 64 * 8; i++)
			z[i] = i / 8 == c[ci].zero_row && i % 8 == 3 ? 0 : 1 + i % 5;
		ck_assert_msg(aicm_parse(ctx, text, strlen(text), "e.aicm", &m) == AICM_OK, "%s",
		    aicm_error(ctx));
		ck_assert_int_eq(aicm_compile(m, AICM_ENGINE_TILE, &p[0]), AICM_OK);
		ck_assert_msg(aicm_compile(m, AICM_ENGINE_NATIVE, &p[1]) == AICM_OK, "%s",
		    aicm_error(ctx));
		for (int e = 0; e < 2; e++)
			for (int run = 0; run < 8; run++) {
				ck_assert_int_eq(aicm_program_run(p[e], &in, 1, NULL, 0), AICM_ERR_INPUT);
				ck_assert_msg(strstr(aicm_error(ctx), c[ci].want) == aicm_error(ctx),
				    "case %zu, %s engine, "
				    "run %d: %s", ci, e ? "native" : "tile", run, aicm_error(ctx));
			}
		aicm_program_free(p[0]);
		aicm_program_free(p[1]);
		aicm_module_free(m);
	}
	aicm_context_free(ctx);
	native_env_end(&env);
}
END_TEST

/* No C compiler: aicm_compile is AICM_ERR_USAGE (aicm-run's exit 2) with
 * aicm-run's message, and the module still compiles for another engine. */
START_TEST(test_api_native_no_compiler)
{
	NativeEnv env;
	aicm_context *ctx = aicm_context_new();
	aicm_module *m;
	aicm_program *p = (aicm_program *)&p;

	native_env_begin(&env, "/nonexistent/no-such-cc");
	ck_assert_int_eq(aicm_parse(ctx, ck_seed_text, strlen(ck_seed_text), "mlp.aicm", &m),
	    AICM_OK);
	ck_assert_int_eq(aicm_compile(m, AICM_ENGINE_NATIVE, &p), AICM_ERR_USAGE);
	ck_assert_ptr_null(p);
	ck_assert_str_eq(aicm_error(ctx), "libaicm: error: the native engine needs a C compiler, "
	    "and '/nonexistent/no-such-cc' does not run (set $CC to one)\n");
	ck_assert_int_eq(aicm_compile(m, AICM_ENGINE_TILE, &p), AICM_OK);
	aicm_program_free(p);
	ck_assert_int_eq(aicm_compile(m, (aicm_engine)7, &p), AICM_ERR_USAGE);
	ck_assert_msg(strstr(aicm_error(ctx), "engine 7 is not AICM_ENGINE_TILE (0), "
	    "AICM_ENGINE_REFERENCE (1) or AICM_ENGINE_NATIVE (2)") != NULL, "%s", aicm_error(ctx));
	aicm_module_free(m);
	aicm_context_free(ctx);
	native_env_end(&env);
}
END_TEST

Suite *
make_api_suite(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("libaicm");

	tcase_add_test(tc, test_api_version);
	tcase_add_test(tc, test_api_mlp_runs);
	tcase_add_test(tc, test_api_const_replaced_between_runs);
	tcase_add_test(tc, test_api_print_and_alloc);
	tcase_add_test(tc, test_api_parse_error);
	tcase_add_test(tc, test_api_wrong_buffers);
	tcase_add_test(tc, test_api_stats);
	tcase_add_test(tc, test_api_two_threads);
	tcase_add_test(tc, test_api_native);
	tcase_add_test(tc, test_api_native_error_order);
	tcase_add_test(tc, test_api_native_no_compiler);
	suite_add_tcase(s, tc);
	return s;
}
