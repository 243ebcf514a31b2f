/*
 * aicm-run: execute a graph on random or given inputs and show, save or
 * check its outputs (DESIGN §7).
 *
 * The flow: parse and verify the file; run the --pass pipeline (an untyped
 * graph gets shape-infer first); check every tensor against the size
 * limits before anything is allocated; fill the sources (from --input,
 * from a const's value=, or from the documented random generator); run the
 * engine; print each output (name, type, a numpy-style preview, sum, min,
 * max); then write --output-dir, compare with --expected-output, and under
 * --check run the reference interpreter on a second copy of the graph as
 * parsed and compare output by output.  The engine is a switch
 * (--engine): the tile executor, the default, which first lowers whatever
 * the pipeline left un-lowered with lower-tiled's defaults, or the
 * reference interpreter.
 *
 * This is the one place that links the runtime with the pass manager.
 *
 * Exit codes (DESIGN §4): 0 ok, 1 the input is wrong or a comparison
 * failed, 2 the command line is wrong or a file cannot be read or written,
 * 3 an internal error.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "diag.h"
#include "exec.h"
#include "measure.h"
#include "parse.h"
#include "pass.h"
#include "../../passes/passes.h"
#include "tile.h"
#include "tile_exec.h"

const char *const cli_tool = "aicm-run";

typedef enum Engine { ENGINE_TILE, ENGINE_REFERENCE } Engine;

/* --input NAME=F.npy, or NAME=2x3xf32=1,2,... inline (IREE's form). */
typedef struct InputSpec {
	const char *arg;             /* as written, for messages */
	char *name;
	const char *file;            /* NULL for inline */
	Type ty;                     /* inline: the written type */
	double *v;                   /* inline: the values */
	int64_t *iv;                 /* inline, integer or bool type: exactly */
	int64_t nv;                  /* numel, or 1 for a splat */
} InputSpec;

typedef struct ExpectSpec {
	char *name;
	const char *file;
} ExpectSpec;

typedef struct Opts {
	const char *file;
	const char *pipeline;
	Engine engine;
	uint64_t seed;
	InputSpec *in;
	int nin;
	ExpectSpec *exp;
	int nexp;
	const char *outdir;
	bool check;
	double tol;                  /* < 0: by element type */
	bool close;                  /* --rtol/--atol: ONNX's rule instead of tol */
	double rtol, atol;
	int bench;
	ExecLimits lim;
	int threads;                 /* tile engine: programs over N threads */
	bool stats, stats_json;      /* --stats[=json] */
	int errlimit;                /* --error-limit */
	int64_t max_work;            /* --max-work */
	const char *datadir_opt;     /* --data-dir */
	char *datadir;               /* of const file=: --data-dir or FILE's folder */
} Opts;

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: aicm-run [options] FILE\n"
	    "\n"
	    "Run an aicm graph on random or given inputs and print its outputs.\n"
	    "\n"
	    "  --pass=PIPELINE          passes to run first, as aicm-opt would (default: none;\n"
	    "                           an untyped graph gets shape-infer first)\n"
	    "  --engine=tile|reference  the tile executor (default; whatever the pipeline\n"
	    "                           leaves un-lowered is lowered with lower-tiled's\n"
	    "                           defaults) or the reference interpreter\n"
	    "  --stats[=json]           KernelStats per kernel and in total, as text or JSON\n"
	    "                           (tile engine; default: off)\n"
	    "  --threads=N              programs of a grid on N threads (default: all cores)\n"
	    "  --seed=N                 seed of the random inputs and constants (default 0)\n"
	    "  --input NAME=F.npy       take input or const NAME from a .npy file (default:\n"
	    "                           random, see --seed; a const with value= is a splat)\n"
	    "  --input NAME=2x3xf32=1,2,3,4,5,6\n"
	    "                           the same, inline (IREE's form; 'f64=2.5' for a scalar,\n"
	    "                           one value to splat)\n"
	    "  --data-dir=DIR           folder that const file= paths are relative to, and\n"
	    "                           must stay inside (default: FILE's folder; for\n"
	    "                           stdin, the current directory)\n"
	    "  --output-dir=DIR         write every output as DIR/NAME.npy (default: none)\n"
	    "  --expected-output NAME=F.npy\n"
	    "                           compare output NAME with a file; exit 1 on mismatch\n"
	    "                           (default: none)\n"
	    "  --check                  also run the reference interpreter on the graph as\n"
	    "                           parsed and compare every output (default: off)\n"
	    "  --tolerance=T            for --check and --expected-output: largest\n"
	    "                           max|a-b| / max(max|b|, 1) (default 1e-9 f64, 1e-4 f32)\n"
	    "  --rtol=R, --atol=A       for --check and --expected-output instead of\n"
	    "                           --tolerance: ONNX's rule, every element within\n"
	    "                           |a-b| <= A + R*|b| (the one not given is 0; integers\n"
	    "                           and bools still compare exactly)\n"
	    "  --bench=N                run N times after one warm-up; print the min and\n"
	    "                           median time of execution alone (default: off)\n"
	    "  --max-bytes=B            largest tensor (default 4GiB; 0: no limit)\n"
	    "  --max-total-bytes=B      all tensors together (default: half the machine's\n"
	    "                           memory; 0: no limit); B takes k/M/G/T suffixes\n"
	    "                           (1024-based; kB, MB, GB are 1000-based)\n"
	    "  --max-work=N             the flops a run may plan, every kernel's grid and\n"
	    "                           loops and --bench's runs counted, also those of the\n"
	    "                           reference interpreter under --check and of\n"
	    "                           autotune{measure=true}'s runs; checked before\n"
	    "                           running (default 1T = 1e12; 0: no limit; k/M/G/T/P\n"
	    "                           are powers of 1000)\n"
	    "  --error-limit=N          after N errors print \"too many errors; stopping\" and\n"
	    "                           stop (default 20, as clang; 0: no limit)\n"
	    "  -h, --help               this text\n"
	    "  --version                the version\n"
	    "\n"
	    "Exit status: 0 ok, 1 the input is wrong or a comparison failed, 2 bad usage\n"
	    "or I/O, 3 internal error.\n");
}

/* A byte count: digits with an optional k/M/G/T (1024-based, also KiB...)
 * or kB/MB/GB/TB (1000-based) suffix. */
static int64_t
parse_bytes(const char *opt, const char *s)
{
	static const struct { const char *suf; int64_t mul; } sufs[] = {
		{"", 1}, {"B", 1},
		{"k", 1LL << 10}, {"K", 1LL << 10}, {"KiB", 1LL << 10}, {"kB", 1000}, {"KB", 1000},
		{"M", 1LL << 20}, {"MiB", 1LL << 20}, {"MB", 1000000},
		{"G", 1LL << 30}, {"GiB", 1LL << 30}, {"GB", 1000000000},
		{"T", 1LL << 40}, {"TiB", 1LL << 40}, {"TB", 1000000000000LL},
	};
	char *end;
	unsigned long long v;

	errno = 0;
	if (*s < '0' || *s > '9')
		cli_usage_error("%s wants a byte count such as 4GiB, not '%s'", opt, s);
	v = strtoull(s, &end, 10);
	for (size_t k = 0; k < sizeof sufs / sizeof sufs[0]; k++) {
		int64_t r;

		if (strcmp(end, sufs[k].suf) != 0)
			continue;
		if (errno || v > INT64_MAX || __builtin_mul_overflow((int64_t)v, sufs[k].mul, &r))
			cli_usage_error("%s=%s is more than 2^63 bytes", opt, s);
		return r;
	}
	cli_usage_error("%s wants a byte count such as 4GiB, not '%s'", opt, s);
}

static int64_t
parse_count(const char *opt, const char *s, int64_t lo, int64_t hi)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno || v < lo || v > hi)
		cli_usage_error("%s wants an integer from %lld to %lld, not '%s'", opt, (long long)lo,
		    (long long)hi, s);
	return v;
}

/* "2x3xf32" or "f64": a type in IREE's spelling; 0 or -1. */
static int
parse_iree_type(const char *s, size_t n, Type *t)
{
	t->rank = 0;
	for (;;) {
		size_t k = 0;

		while (k < n && s[k] != 'x')
			k++;
		if (k == n) {
			if (n == 3 && !strncmp(s, "f32", 3))
				t->dt = DT_F32;
			else if (n == 3 && !strncmp(s, "f64", 3))
				t->dt = DT_F64;
			else if (n == 3 && !strncmp(s, "i32", 3))
				t->dt = DT_I32;
			else if (n == 3 && !strncmp(s, "i64", 3))
				t->dt = DT_I64;
			else if (n == 2 && !strncmp(s, "i1", 2))   /* IREE's bool */
				t->dt = DT_BOOL;
			else
				return -1;
			return 0;
		}
		if (k == 0 || t->rank == IR_MAX_RANK)
			return -1;
		t->dim[t->rank] = 0;
		for (size_t j = 0; j < k; j++) {
			if (s[j] < '0' || s[j] > '9')
				return -1;
			t->dim[t->rank] = t->dim[t->rank] * 10 + (s[j] - '0');
			if (t->dim[t->rank] > IR_MAX_DIM)
				return -1;
		}
		if (t->dim[t->rank] == 0)
			return -1;
		t->rank++;
		s += k + 1;
		n -= k + 1;
	}
}

static void
parse_input(const char *arg, InputSpec *in)
{
	const char *eq = strchr(arg, '='), *rest, *eq2;
	char ts[IR_TYPE_STR];
	int64_t numel, cap = 0;

	memset(in, 0, sizeof *in);
	in->arg = arg;
	if (!eq || eq == arg)
		cli_usage_error("--input wants NAME=F.npy or NAME=2x3xf32=1,2,..., not '%s'", arg);
	if (arg[0] == '%')
		arg++;
	in->name = xmalloc((size_t)(eq - arg) + 1);
	memcpy(in->name, arg, (size_t)(eq - arg));
	in->name[eq - arg] = '\0';
	rest = eq + 1;
	eq2 = strchr(rest, '=');
	if (!eq2 || parse_iree_type(rest, (size_t)(eq2 - rest), &in->ty) != 0) {
		if (eq2 && strspn(rest, "0123456789x") == (size_t)(eq2 - rest) - 3)
			cli_usage_error("--input '%s': '%.*s' is not a type such as 2x3xf32 or f64 "
			    "(dimensions 1 to 2^30, f32 or f64)", in->arg, (int)(eq2 - rest), rest);
		if (*rest == '\0')
			cli_usage_error("--input '%s' names no file", in->arg);
		in->file = rest;
		return;
	}
	numel = ir_type_numel(&in->ty);
	for (const char *p = eq2 + 1; *p;) {
		char *end;
		double v;
		long long iv = 0;
		bool isint = !ir_dtype_is_float(in->ty.dt);

		while (*p == ',' || *p == ' ' || *p == '\t' || *p == '[' || *p == ']')
			p++;
		if (!*p)
			break;
		if (isint && !strncmp(p, "True", 4)) {
			iv = 1;
			end = (char *)p + 4;
		} else if (isint && !strncmp(p, "False", 5)) {
			end = (char *)p + 5;
		} else if (isint) {
			/* integers exactly, in range of the type; bools 0 or 1 */
			errno = 0;
			iv = strtoll(p, &end, 10);
			if (end != p && (errno || (in->ty.dt == DT_I32 && (iv < INT32_MIN ||
			    iv > INT32_MAX)) || (in->ty.dt == DT_BOOL && iv != 0 && iv != 1)))
				cli_usage_error("--input '%s': '%.*s' does not fit %s", in->arg,
				    (int)(end - p), p, ir_dtype_name(in->ty.dt));
		} else {
			end = (char *)p;
		}
		v = isint ? (double)iv : strtod(p, &end);
		if (end == p)
			cli_usage_error("--input '%s': '%.20s' is not %s", in->arg, p,
			    isint ? "an integer" : "a number");
		if (in->nv >= numel)
			cli_usage_error("--input '%s' gives more than the %lld values of %s %s", in->arg,
			    (long long)numel, ir_shape_str(&in->ty, ts), ir_dtype_name(in->ty.dt));
		if (in->nv == cap) {
			cap = cap ? 2 * cap : 16;
			in->v = xrealloc(in->v, sizeof(double) * (size_t)cap);
			in->iv = xrealloc(in->iv, sizeof(int64_t) * (size_t)cap);
		}
		in->iv[in->nv] = iv;
		in->v[in->nv++] = v;
		p = end;
	}
	if (in->nv != numel && in->nv != 1)
		cli_usage_error("--input '%s' gives %lld value%s; %s %s needs %lld (or 1 to splat)",
		    in->arg, (long long)in->nv, in->nv == 1 ? "" : "s", ir_shape_str(&in->ty, ts),
		    ir_dtype_name(in->ty.dt), (long long)numel);
}

static void
parse_expect(const char *arg, ExpectSpec *e)
{
	const char *eq = strchr(arg, '=');

	if (arg[0] == '%')
		arg++;
	if (!eq || eq == arg || eq[1] == '\0')
		cli_usage_error("--expected-output wants NAME=F.npy, not '%s'", arg);
	e->name = xmalloc((size_t)(eq - arg) + 1);
	memcpy(e->name, arg, (size_t)(eq - arg));
	e->name[eq - arg] = '\0';
	e->file = eq + 1;
}

static void
parse_args(int argc, char **argv, Opts *o)
{
	const char *v;

	memset(o, 0, sizeof *o);
	o->tol = -1;
	o->errlimit = DIAG_ERROR_LIMIT;
	o->lim.max_bytes = EXEC_DEFAULT_MAX_BYTES;
	o->lim.max_total_bytes = exec_default_max_total();
	o->max_work = EXEC_DEFAULT_MAX_WORK;
	o->threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (o->threads < 1)
		o->threads = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--version")) {
			printf("aicm-run %s\n", AICM_VERSION);
			exit(0);
		} else if ((v = cli_optval(argc, argv, &i, "--pass")) ||
		    (v = cli_optval(argc, argv, &i, "--passes"))) {
			o->pipeline = v;
		} else if ((v = cli_optval(argc, argv, &i, "--engine"))) {
			if (!strcmp(v, "reference"))
				o->engine = ENGINE_REFERENCE;
			else if (!strcmp(v, "tile"))
				o->engine = ENGINE_TILE;
			else
				cli_usage_error("--engine takes tile or reference, not '%s'", v);
		} else if (!strcmp(a, "--stats") || !strcmp(a, "--stats=text")) {
			o->stats = true;
		} else if (!strcmp(a, "--stats=json")) {
			o->stats = o->stats_json = true;
		} else if (!strncmp(a, "--stats=", 8)) {
			cli_usage_error("--stats takes json (or nothing), not '%s'", a + 8);
		} else if ((v = cli_optval(argc, argv, &i, "--data-dir"))) {
			o->datadir_opt = v;
		} else if ((v = cli_optval(argc, argv, &i, "--threads"))) {
			o->threads = (int)parse_count("--threads", v, 1, 1024);
		} else if ((v = cli_optval(argc, argv, &i, "--seed"))) {
			char *end;

			errno = 0;
			o->seed = strtoull(v, &end, 10);
			if (*v < '0' || *v > '9' || *end || errno)
				cli_usage_error("--seed wants a non-negative integer below 2^64, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--input"))) {
			o->in = xrealloc(o->in, sizeof *o->in * (size_t)(o->nin + 1));
			parse_input(v, &o->in[o->nin]);
			for (int k = 0; k < o->nin; k++)
				if (!strcmp(o->in[k].name, o->in[o->nin].name))
					cli_usage_error("--input gives '%s' twice", o->in[k].name);
			o->nin++;
		} else if ((v = cli_optval(argc, argv, &i, "--expected-output"))) {
			o->exp = xrealloc(o->exp, sizeof *o->exp * (size_t)(o->nexp + 1));
			parse_expect(v, &o->exp[o->nexp++]);
		} else if ((v = cli_optval(argc, argv, &i, "--output-dir"))) {
			o->outdir = v;
		} else if (!strcmp(a, "--check")) {
			o->check = true;
		} else if ((v = cli_optval(argc, argv, &i, "--tolerance"))) {
			char *end;

			o->tol = strtod(v, &end);
			if (*v == '\0' || *end || !(o->tol >= 0) || isinf(o->tol))
				cli_usage_error("--tolerance wants a non-negative number, not '%s'", v);
		} else if ((v = cli_optval(argc, argv, &i, "--rtol")) ||
		    (v = cli_optval(argc, argv, &i, "--atol"))) {
			bool r = !strncmp(a, "--rtol", 6);
			double *p = r ? &o->rtol : &o->atol;
			char *end;

			*p = strtod(v, &end);
			if (*v == '\0' || *end || !(*p >= 0) || isinf(*p))
				cli_usage_error("%s wants a non-negative number, not '%s'",
				    r ? "--rtol" : "--atol", v);
			o->close = true;
		} else if ((v = cli_optval(argc, argv, &i, "--bench"))) {
			o->bench = (int)parse_count("--bench", v, 1, 1000000);
		} else if ((v = cli_optval(argc, argv, &i, "--max-bytes"))) {
			o->lim.max_bytes = parse_bytes("--max-bytes", v);
		} else if ((v = cli_optval(argc, argv, &i, "--max-total-bytes"))) {
			o->lim.max_total_bytes = parse_bytes("--max-total-bytes", v);
		} else if ((v = cli_optval(argc, argv, &i, "--error-limit"))) {
			o->errlimit = (int)cli_parse_int("--error-limit", v, 0, INT_MAX);
		} else if ((v = cli_optval(argc, argv, &i, "--max-work"))) {
			o->max_work = cli_parse_flops("--max-work", v);
		} else if (a[0] == '-' && a[1] != '\0') {
			cli_usage_error("unknown option '%s'", a);
		} else if (o->file) {
			cli_usage_error("more than one input file ('%s')", a);
		} else {
			o->file = a;
		}
	}
	if (!o->file)
		cli_usage_error("no input file");
	if (o->close && o->tol >= 0)
		cli_usage_error("--tolerance and --rtol/--atol are two different measures; give "
		    "one of them");
	if (o->stats && o->engine != ENGINE_TILE)
		cli_usage_error("--stats counts the tile engine's traffic; drop --engine=reference");
}

static void
free_opts(Opts *o)
{
	free(o->datadir);
	for (int k = 0; k < o->nin; k++) {
		free(o->in[k].name);
		free(o->in[k].v);
		free(o->in[k].iv);
	}
	free(o->in);
	for (int k = 0; k < o->nexp; k++)
		free(o->exp[k].name);
	free(o->exp);
}

/* ---- the engine switch ----------------------------------------------- */

/* The tile engine's plan, compiled on its first run and reused by the
 * --bench reruns. */
static TilePlan *tile_plan;

static int
run_engine(Engine e, const Graph *g, Tensor *vals, Diag *d, int threads)
{
	switch (e) {
	case ENGINE_REFERENCE:
		return exec_interp(g, vals, d);
	case ENGINE_TILE:
		if (!tile_plan && !(tile_plan = exec_tile_compile(g, d)))
			return -1;
		return exec_tile_run(tile_plan, vals, threads, d);
	}
	AICM_BUG("unknown engine %d", (int)e);
}

static bool
has_tiled(const Graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OP_TILED)
			return true;
	return false;
}

/* Whether a compute op is left for lower-tiled (DESIGN §7). */
static bool
unlowered(const Graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		if (ir_ops[g->nodes[i].op].cls != OC_SOURCE && g->nodes[i].op != OP_TILED)
			return true;
	return false;
}

/* ---- preparing the graph --------------------------------------------- */

static bool
untyped(const Graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].type.rank < 0)
			return true;
	return false;
}

/* Parses and verifies the file; runs shape-infer when the graph is untyped
 * and the pipeline does not start with it, then the pipeline (may be
 * NULL) with the measuring callback pm (autotune{measure=true}).  Returns
 * the graph, or NULL (diagnostics given) with *status the exit status: 2
 * when a pass could not read or write a file (autotune's cache), else 1. */
static Graph *
load_graph(const char *buf, size_t len, const Pipeline *pl, const PassMeasure *pm, Diag *d,
    int *status)
{
	PassRun run = {true, NULL, false, NULL, NULL, NULL, pm};
	Graph *g = parse_graph(buf, len, 1, d);
	int rc;

	*status = 1;
	if (!g)
		return NULL;
	if (ir_verify_input(g, d) != 0)
		goto fail;
	if (untyped(g) && !(pl && pl->n > 0 && !strcmp(pl->p[0].pass->name, "shape-infer")) &&
	    pass_run_text(aicm_passes, g, "shape-infer", d, NULL, cli_tool) != 0)
		goto fail;
	if (pl && (rc = pass_run_pipeline(g, pl, &run, d)) != 0) {
		if (rc == PASS_IO)
			*status = 2;
		goto fail;
	}
	*status = 0;
	return g;
fail:
	ir_graph_free(g);
	return NULL;
}

/* ---- sources --------------------------------------------------------- */

/* Fills every source of g: --input, else a const's file= or value=, else
 * random.  0, or the exit status of the failure (message printed). */
static int
fill_sources(const Graph *g, Tensor *vals, const Opts *o, Diag *d)
{
	char err[EXEC_ERR_MAX], s1[IR_TYPE_STR], s2[IR_TYPE_STR], who[256];

	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		const InputSpec *in = NULL;

		if (ir_ops[n->op].cls != OC_SOURCE)
			continue;
		for (int k = 0; k < o->nin; k++)
			if (!strcmp(o->in[k].name, n->name))
				in = &o->in[k];
		if (in && in->file) {
			int rc;

			snprintf(who, sizeof who, "'%%%.200s' in the IR", n->name);
			rc = exec_npy_read(in->file, &n->type, who, o->lim.max_bytes, &vals[i], err);
			if (rc != 0) {
				fprintf(stderr, "%s: error: %s\n", cli_tool, err);
				return rc == -2 ? 2 : 1;
			}
			continue;
		}
		if (in && !ir_type_eq(&in->ty, &n->type)) {
			fprintf(stderr, "%s: error: --input '%s' gives %s %s, but '%%%s' in the IR "
			    "is %s %s\n", cli_tool, in->arg, ir_shape_str(&in->ty, s1),
			    ir_dtype_name(in->ty.dt), n->name, ir_shape_str(&n->type, s2),
			    ir_dtype_name(n->type.dt));
			return 1;
		}
		if (!in && n->op == OP_CONST && (n->at.set & AB(FILE))) {
			int rc = exec_const_read(o->datadir, n, o->lim.max_bytes, &vals[i], err);

			if (rc != 0) {
				diag_error(d, ir_attr_loc(n, ATTR_FILE).line ? ir_attr_loc(n, ATTR_FILE) :
				    n->loc, "%s", err);
				return rc == -2 ? 2 : 1;
			}
			continue;
		}
		if (exec_tensor_alloc(&vals[i], &n->type, 0) != 0) {
			fprintf(stderr, "%s: error: '%%%s' %s %s: cannot allocate %lld bytes\n", cli_tool,
			    n->name, ir_shape_str(&n->type, s1), ir_dtype_name(n->type.dt),
			    (long long)exec_type_bytes(&n->type));
			return 1;
		}
		if (in) {
			for (int64_t e = 0; e < vals[i].numel; e++) {
				if (ir_dtype_is_float(vals[i].dt))
					exec_set(&vals[i], e, in->v[in->nv == 1 ? 0 : e]);
				else
					exec_seti(&vals[i], e, in->iv[in->nv == 1 ? 0 : e]);
			}
		} else if (!exec_fill_const(&vals[i], n)) {
			exec_fill_random(&vals[i], o->seed, n->name);
		}
	}
	return 0;
}

/* The --input and --expected-output names must exist; 0 or 2. */
static int
check_names(const Graph *g, const Opts *o, const int *outs, int nout)
{
	for (int k = 0; k < o->nin; k++) {
		int i = ir_lookup(g, o->in[k].name);

		if (i < 0 || ir_ops[g->nodes[i].op].cls != OC_SOURCE) {
			fprintf(stderr, "%s: error: --input names '%%%s', which is %s\n", cli_tool,
			    o->in[k].name, i < 0 ? "not a value of the graph" :
			    "computed, not an input or a const");
			return 2;
		}
	}
	for (int k = 0; k < o->nexp; k++) {
		bool found = false;

		for (int j = 0; j < nout; j++)
			found = found || !strcmp(g->nodes[outs[j]].name, o->exp[k].name);
		if (!found) {
			fprintf(stderr, "%s: error: --expected-output names '%%%s', which is not an "
			    "output of the graph\n", cli_tool, o->exp[k].name);
			return 2;
		}
	}
	return 0;
}

/* ---- outputs --------------------------------------------------------- */

static void
print_output(const Node *n, const Tensor *t)
{
	char s[IR_TYPE_STR], a[64], b[64], c[64];
	Type ty = exec_tensor_type(t);

	printf("%%%s: %s %s\n", n->name, ir_shape_str(&ty, s), ir_dtype_name(t->dt));
	exec_print_preview(stdout, t);
	exec_stats_fmt(t, a, b, c, sizeof a);
	printf("sum=%s min=%s max=%s\n", a, b, c);
}

static double
tolerance(const Opts *o, DType dt)
{
	if (!ir_dtype_is_float(dt))
		return 0;            /* integers and bools: exact, always */
	if (o->tol >= 0)
		return o->tol;
	return dt == DT_F32 ? 1e-4 : 1e-9;
}

/* ONNX's rule (DESIGN §16), as numpy.testing.assert_allclose with
 * equal_nan: element i passes when |a - b| <= atol + rtol*|b|, or when both
 * are NaN, or both the same infinity (inf - inf would be NaN and fail the
 * inequality).  Integers and bools pass only when equal.  Every element is
 * checked, so the message can say how many fail and which is the first:
 * the first, not the worst, because a wrong index computation shows up at
 * its first element.  a and b have one type (the caller checks).  true if
 * every element passes. */
static bool
compare_close(const Opts *o, const char *what, const char *name, const Tensor *a,
    const Tensor *b)
{
	char ix[IR_TYPE_STR], rule[96], e1[64], x[64], y[64];
	bool fl = ir_dtype_is_float(a->dt);
	int64_t nbad = 0, first = -1;
	double maxabs = 0;

	for (int64_t i = 0; i < a->numel; i++) {
		bool ok;

		if (fl) {
			double p = exec_get(a, i), q = exec_get(b, i), d;

			if (p == q || (isnan(p) && isnan(q))) {
				d = 0;
				ok = true;
			} else if (!isfinite(p) || !isfinite(q)) {
				/* a NaN or an infinity against anything else: never
				 * close, even where rtol*|inf| would make it so */
				d = INFINITY;
				ok = false;
			} else {
				d = fabs(p - q);
				ok = d <= o->atol + o->rtol * fabs(q);
			}
			if (d > maxabs)
				maxabs = d;
		} else {
			ok = exec_geti(a, i) == exec_geti(b, i);
		}
		if (!ok && nbad++ == 0)
			first = i;
	}
	if (fl)
		snprintf(rule, sizeof rule, "beyond atol %g + rtol %g*|expected|", o->atol, o->rtol);
	else
		snprintf(rule, sizeof rule, "different (%s compares exactly)", ir_dtype_name(a->dt));
	if (fl) {
		snprintf(e1, sizeof e1, "%.3g", maxabs);
		printf("%s %%%s: max abs err %s; %lld of %lld elements %s: %s\n", what, name, e1,
		    (long long)nbad, (long long)a->numel, rule, nbad ? "FAIL" : "PASS");
	} else {
		printf("%s %%%s: %lld of %lld elements %s: %s\n", what, name, (long long)nbad,
		    (long long)a->numel, rule, nbad ? "FAIL" : "PASS");
	}
	if (nbad == 0)
		return true;
	exec_fmt_elem(x, sizeof x, a, first);
	exec_fmt_elem(y, sizeof y, b, first);
	if (!strcmp(x, y)) {
		/* 6 digits hide the difference: show enough to tell them apart */
		int dig = a->dt == DT_F32 ? 9 : 17;

		snprintf(x, sizeof x, "%.*g", dig, exec_get(a, first));
		snprintf(y, sizeof y, "%.*g", dig, exec_get(b, first));
	}
	fprintf(stderr, "%s: error: %s %%%s: %lld of %lld elements %s; the first is %s: got %s, "
	    "expected %s\n", cli_tool, what, name, (long long)nbad, (long long)a->numel, rule,
	    exec_index_str(a, first, ix), x, y);
	return false;
}

/* Compares result a with reference b; prints the verdict line (to stdout
 * on success, with the worst element to stderr on failure).  true if
 * within tolerance (or, with --rtol/--atol, ONNX's rule: compare_close). */
static bool
compare(const Opts *o, const char *what, const char *name, const Tensor *a, const Tensor *b)
{
	char s1[IR_TYPE_STR], s2[IR_TYPE_STR], ix[IR_TYPE_STR], e1[64], e2[64], x[64], y[64];
	Type ta = exec_tensor_type(a), tb = exec_tensor_type(b);
	double tol = tolerance(o, a->dt);
	ExecErr e;

	if (!ir_type_eq(&ta, &tb)) {
		printf("%s %%%s: FAIL\n", what, name);
		fprintf(stderr, "%s: error: %s %%%s: the result is %s %s, the reference %s %s\n",
		    cli_tool, what, name, ir_shape_str(&ta, s1), ir_dtype_name(ta.dt),
		    ir_shape_str(&tb, s2), ir_dtype_name(tb.dt));
		return false;
	}
	if (o->close)
		return compare_close(o, what, name, a, b);
	e = exec_compare(a, b);
	snprintf(e1, sizeof e1, "%.3g", e.maxabs);
	snprintf(e2, sizeof e2, "%.3g", e.rel);
	printf("%s %%%s: max abs err %s, rel err %s (tolerance %g): %s\n", what, name, e1, e2,
	    tol, e.rel <= tol ? "PASS" : "FAIL");
	if (e.rel <= tol)
		return true;
	exec_fmt_elem(x, sizeof x, a, e.worst);
	exec_fmt_elem(y, sizeof y, b, e.worst);
	fprintf(stderr, "%s: error: %s %%%s: error %s exceeds the tolerance %g; the worst "
	    "element is %s: got %s, expected %s\n", cli_tool, what, name, e2, tol,
	    exec_index_str(a, e.worst, ix), x, y);
	return false;
}

static int
write_outputs(const Opts *o, const Graph *g, const Tensor *vals, const int *outs, int nout)
{
	char err[EXEC_ERR_MAX];

	if (mkdir(o->outdir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "%s: error: cannot create '%s': %s\n", cli_tool, o->outdir,
		    strerror(errno));
		return 2;
	}
	for (int j = 0; j < nout; j++) {
		const Node *n = &g->nodes[outs[j]];
		size_t len = strlen(o->outdir) + strlen(n->name) + 8;
		char *path = xmalloc(len);
		int rc;

		snprintf(path, len, "%s/%s.npy", o->outdir, n->name);
		rc = exec_npy_write(path, &vals[outs[j]], err);
		free(path);
		if (rc != 0) {
			fprintf(stderr, "%s: error: %s\n", cli_tool, err);
			return 2;
		}
	}
	return 0;
}

/* 1 when a comparison fails, 2 when a file cannot be read. */
static int
check_expected(const Opts *o, const Graph *g, const Tensor *vals, const int *outs, int nout)
{
	char err[EXEC_ERR_MAX], who[256];
	int status = 0;

	for (int k = 0; k < o->nexp; k++) {
		const ExpectSpec *e = &o->exp[k];
		Tensor t;
		int j = 0, rc;

		while (strcmp(g->nodes[outs[j]].name, e->name) != 0)
			j++;
		snprintf(who, sizeof who, "output '%%%.200s'", e->name);
		rc = exec_npy_read(e->file, &g->nodes[outs[j]].type, who, o->lim.max_bytes, &t,
		    err);
		(void)nout;
		if (rc != 0) {
			fprintf(stderr, "%s: error: %s\n", cli_tool, err);
			if (status == 0 || rc == -2)
				status = rc == -2 ? 2 : 1;
			continue;
		}
		if (!compare(o, "expected", e->name, &vals[outs[j]], &t) && status == 0)
			status = 1;
		exec_tensor_free(&t);
	}
	return status;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* ---- main ------------------------------------------------------------ */

int
main(int argc, char **argv)
{
	Opts o;
	Pipeline pl = {0};
	Graph *g = NULL, *ref = NULL;
	Tensor *vals = NULL, *rvals = NULL;
	int *outs = NULL, nout = 0, status = 0;
	char *buf;
	size_t len;
	Diag d;
	MeasureCtx mc;
	PassMeasure pm;

	/* Diagnostics come by the thousand under fuse{explain}: an unbuffered
	 * stderr made each piece of each message a system call.  exit() and
	 * AICM_BUG flush it. */
	setvbuf(stderr, NULL, _IOFBF, 1 << 16);
	parse_args(argc, argv, &o);
	if (o.pipeline && pass_parse_pipeline(aicm_passes, o.pipeline, &pl, stderr, cli_tool) != 0) {
		free_opts(&o);
		return 2;
	}
	if (aicm_read_file(o.file, &buf, &len) != 0) {
		char why[128];

		fprintf(stderr, "%s: error: cannot read '%s': %s\n", cli_tool, o.file,
		    aicm_read_strerror(errno, AICM_READ_MAX, why, sizeof why));
		pass_free_pipeline(&pl);
		free_opts(&o);
		return 2;
	}
	diag_init(&d, strcmp(o.file, "-") ? o.file : "<stdin>", buf, len, stderr);
	d.errlimit = o.errlimit;
	measure_init(&mc, &pm, cli_tool, o.threads);
	mc.seed = o.seed;
	mc.lim = o.lim;
	mc.max_work = o.max_work;
	o.datadir = cli_data_dir(o.datadir_opt, o.file);
	mc.datadir = o.datadir;
	g = load_graph(buf, len, &pl, &pm, &d, &status);
	if (g && o.check)
		ref = load_graph(buf, len, NULL, NULL, &d, &status);
	if (!g || (o.check && !ref))
		goto done;
	if (ref && has_tiled(ref)) {
		fprintf(stderr, "%s: error: --check needs the graph before lowering; '%s' is "
		    "already tiled\n", cli_tool, o.file);
		status = 2;
		goto done;
	}
	if (o.engine == ENGINE_REFERENCE && has_tiled(g)) {
		fprintf(stderr, "%s: error: the reference interpreter runs graphs, not tiled "
		    "kernels; use --engine=tile\n", cli_tool);
		status = 2;
		goto done;
	}
	if (o.engine == ENGINE_TILE && unlowered(g) &&
	    pass_run_text(aicm_passes, g, "lower-tiled", &d, NULL, cli_tool) != 0) {
		status = 1;
		goto done;
	}
	nout = ir_outputs(g, &outs);
	if ((status = check_names(g, &o, outs, nout)) != 0)
		goto done;
	{
		const Graph *gs[2] = {g, ref};
		/* --bench runs the engine once more than it says: the warm-up */
		int runs[2] = {o.bench > 0 ? o.bench + 1 : 1, 1};

		if (exec_check_limits(gs, ref ? 2 : 1, &o.lim, &d) != 0 ||
		    exec_check_work(gs, runs, ref ? 2 : 1, o.max_work, &d) != 0) {
			status = 1;
			goto done;
		}
	}
	vals = xcalloc((size_t)g->nnodes, sizeof *vals);
	if ((status = fill_sources(g, vals, &o, &d)) != 0)
		goto done;
	if (o.bench > 0) {
		double *ms = xmalloc(sizeof(double) * (size_t)o.bench), med;

		if (run_engine(o.engine, g, vals, &d, o.threads) != 0) {
			free(ms);
			status = 1;
			goto done;
		}
		for (int r = 0; r < o.bench; r++) {
			double t0 = pass_now_ms();

			if (run_engine(o.engine, g, vals, &d, o.threads) != 0)
				AICM_BUG("the engine failed on a rerun");
			ms[r] = pass_now_ms() - t0;
		}
		qsort(ms, (size_t)o.bench, sizeof *ms, cmp_double);
		med = o.bench % 2 ? ms[o.bench / 2] : (ms[o.bench / 2 - 1] + ms[o.bench / 2]) / 2;
		for (int j = 0; j < nout; j++) {
			print_output(&g->nodes[outs[j]], &vals[outs[j]]);
			printf("\n");
		}
		printf("bench: %d run%s after 1 warm-up: min %.3f ms, median %.3f ms\n", o.bench,
		    o.bench == 1 ? "" : "s", ms[0], med);
		free(ms);
	} else {
		if (run_engine(o.engine, g, vals, &d, o.threads) != 0) {
			status = 1;
			goto done;
		}
		for (int j = 0; j < nout; j++) {
			if (j)
				printf("\n");
			print_output(&g->nodes[outs[j]], &vals[outs[j]]);
		}
	}
	if (o.stats && status == 0) {
		int nk;
		const KernelStats *ks = exec_tile_stats(tile_plan, &nk);

		printf("\n");
		exec_tile_print_stats(stdout, ks, nk, o.stats_json);
	}
	if (ref) {
		rvals = xcalloc((size_t)ref->nnodes, sizeof *rvals);
		if ((status = fill_sources(ref, rvals, &o, &d)) != 0)
			goto done;
		if (exec_interp(ref, rvals, &d) != 0) {
			status = 1;
			goto done;
		}
		printf("\n");
		for (int j = 0; j < nout; j++) {
			const Node *n = &g->nodes[outs[j]];
			int r = ir_lookup(ref, n->name);

			if (r < 0) {
				printf("check %%%s: FAIL\n", n->name);
				fprintf(stderr, "%s: error: check %%%s: the graph as parsed has no "
				    "value '%%%s'\n", cli_tool, n->name, n->name);
				status = 1;
				continue;
			}
			if (!compare(&o, "check", n->name, &vals[outs[j]], &rvals[r]))
				status = 1;
		}
	}
	if (o.outdir) {
		int rc = write_outputs(&o, g, vals, outs, nout);

		if (rc > status)
			status = rc;
	}
	if (o.nexp) {
		int rc;

		printf("\n");
		rc = check_expected(&o, g, vals, outs, nout);
		if (rc > status)
			status = rc;
	}
	if (cli_flush_stdout() != 0)
		status = 2;
done:
	if (d.nerr) {
		int n = d.stopped ? d.nshown : d.nerr;   /* as clang, the errors shown */

		fprintf(stderr, "%s: %d error%s\n", cli_tool, n, n == 1 ? "" : "s");
	}
	if (vals)
		exec_tensors_free(vals, g->nnodes);
	if (rvals)
		exec_tensors_free(rvals, ref->nnodes);
	free(vals);
	free(rvals);
	free(outs);
	exec_tile_free(tile_plan);
	ir_graph_free(g);
	ir_graph_free(ref);
	diag_free(&d);
	free(buf);
	pass_free_pipeline(&pl);
	free_opts(&o);
	return status;
}
