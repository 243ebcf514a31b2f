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
 * aicm-opt's inspection options (--print-ir-*, --dump-dir, --timing,
 * --report, -o) come from cli.c with the same meaning; the passes aicm-run
 * adds on its own are stages of their own there, "NAME (implicit)".
 * Values on the command line take IREE's forms too (by position, @F.npy),
 * and once one input is given every input must be, unless --random-rest.
 * Human output goes to stdout, or to stderr when stdout carries the
 * KernelStats JSON alone.
 *
 * Exit codes (DESIGN §4): 0 ok, 1 the input is wrong or a comparison
 * failed, 2 the command line is wrong or a file cannot be read or written,
 * 3 an internal error.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "diag.h"
#include "exec.h"
#include "measure.h"
#include "native.h"
#include "parse.h"
#include "pass.h"
#include "../../passes/passes.h"
#include "tile.h"
#include "tile_exec.h"

const char *const cli_tool = "aicm-run";

typedef enum Engine { ENGINE_TILE, ENGINE_REFERENCE, ENGINE_NATIVE } Engine;

/* A value on the command line (--input, --expected-output, --output):
 * NAME=F.npy or NAME=@F.npy, NAME=2x3xf32=1,2,... inline (IREE's form),
 * NAME=2x3xf32=@F.npy (a file that must have that type), and each of
 * these without "NAME=": by position, the k-th input or output of the
 * graph, as iree-run-module takes them. */
typedef struct InputSpec {
	const char *opt;             /* "--input", ... for messages */
	const char *arg;             /* as written, for messages */
	char *name;                  /* NULL until a positional one is resolved */
	int pos;                     /* by position: 0-based among its kind; -1 named */
	const char *file;            /* NULL for inline */
	bool typed;                  /* ty written */
	Type ty;                     /* the written type */
	double *v;                   /* inline: the values */
	int64_t *iv;                 /* inline, integer or bool type: exactly */
	int64_t nv;                  /* numel, or 1 for a splat */
} InputSpec;

typedef InputSpec ExpectSpec;

typedef struct Opts {
	const char *file;
	CliInspect ci;               /* --pass, -o, --print-ir-*, --dump-dir, --report... */
	Engine engine;
	uint64_t seed;
	InputSpec *in;
	int nin;
	ExpectSpec *exp;
	int nexp;
	InputSpec *outf;             /* --output=@F.npy (IREE's form) */
	int noutf;
	int npos_in, npos_exp, npos_out;
	bool random_rest;            /* inputs not given are random */
	bool quiet;                  /* -q: no previews */
	const char *stats_file;      /* --stats-file: the KernelStats JSON */
	const char *outdir;
	bool check;
	double tol;                  /* < 0: by element type */
	bool close;                  /* --rtol/--atol: ONNX's rule instead of tol */
	double rtol, atol;
	int bench;
	ExecLimits lim;
	int threads;                 /* tile engine: programs over N threads */
	bool stats, stats_json;      /* --stats[=json] */
	bool verbose;                /* --verbose: the native engine's cache and times,
	                              * the tile engine's packing under --bench */
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
	    "                           an untyped graph gets shape-infer first); also\n"
	    "                           --pass-pipeline=PIPELINE or ='builtin.module(...)'\n"
	    "  --engine=tile|native|reference  the tile executor (default; what the pipeline\n"
	    "                           leaves un-lowered gets lower-tiled's defaults), its\n"
	    "                           programs as C compiled by $CC, or the interpreter\n"
	    "  --verbose                native engine: cache hit or miss, compile time;\n"
	    "                           tile engine with --bench: the consts' packing\n"
	    "  --stats[=text|json]      KernelStats per kernel and in total, as text or JSON\n"
	    "                           (tile engine; default: off); the JSON is alone on\n"
	    "                           stdout, the previews and verdicts go to stderr\n"
	    "  --stats-file=FILE        write the KernelStats JSON to FILE, whole\n");
	/* three strings: C11 promises 4095 bytes in one */
	fprintf(f,
	    "  -q, --quiet              no previews of the outputs (default: off)\n"
	    "  --threads=N              programs of a grid on N threads (default: all cores)\n"
	    "  --seed=N                 seed of the random inputs and constants (default 0)\n"
	    "  --input NAME=F.npy       take input or const NAME from a .npy file (default:\n"
	    "                           random, see --seed; a const with value= is a splat)\n"
	    "  --input NAME=2x3xf32=1,2,3,4,5,6\n"
	    "                           the same, inline (IREE's form; 'f64=2.5' for a scalar,\n"
	    "                           one value to splat); NAME=2x3xf32=@F.npy, a file of\n"
	    "                           that type; without 'NAME=' (@F.npy, 2x3xf32=...) the\n"
	    "                           k-th --input is the graph's k-th input.  Once one\n"
	    "                           input is given, every input must be\n"
	    "  --random-rest            inputs not given are random (see --seed)\n"
	    "  --data-dir=DIR           folder that const file= paths are relative to, and\n"
	    "                           must stay inside (default: FILE's folder; for\n"
	    "                           stdin, the current directory)\n"
	    "  --output-dir=DIR         write every output as DIR/NAME.npy (default: none)\n"
	    "  --expected-output NAME=F.npy\n"
	    "                           compare output NAME with a file, or inline values\n"
	    "                           (NAME=2x3xf32=1,2,...), or by position as --input;\n"
	    "                           exit 1 on mismatch (default: none; also\n"
	    "                           --expected_output)\n"
	    "  --output=@F.npy          write the k-th output to F.npy (IREE's form;\n"
	    "                           NAME=@F.npy by name)\n"
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
	    "                           (1024-based; kB, MB, GB are 1000-based); the tile\n"
	    "                           engine packs consts ahead only within what is left\n"
	    "  --max-work=N             the flops a run may plan, every kernel's grid and\n"
	    "                           loops and --bench's runs counted, also those of the\n"
	    "                           reference interpreter under --check and of\n"
	    "                           autotune{measure=true}'s runs; checked before\n"
	    "                           running (default 1T = 1e12; 0: no limit; k/M/G/T/P\n"
	    "                           are powers of 1000)\n"
	    "  --error-limit=N          after N errors print \"too many errors; stopping\" and\n"
	    "                           stop (default 20, as clang; 0: no limit)\n");
	/* two strings: C11 promises 4095 bytes in one */
	fprintf(f,
	    "\n"
	    "aicm-opt's inspection options, with the same meaning; the passes aicm-run\n"
	    "adds on its own are stages named 'NAME (implicit)':\n"
	    "  -o FILE                  the program that ran, as IR, whole (on success)\n"
	    "  --print-ir-before=NAME, --print-ir-after=NAME, --print-ir-before-all,\n"
	    "  --print-ir-after-all, --print-ir-after-change\n"
	    "                           the IR around passes, to stderr\n"
	    "  --dump-dir=DIR           each stage to DIR/NN-NAME.aicm\n"
	    "  --dump-pipeline          the pipeline as parsed, to stderr\n"
	    "  --timing                 per-stage wall time and the run's, to stderr\n"
	    "  --report[=text|json]     the passes' reports, to stderr\n"
	    "  --report=html            one self-contained HTML page of the compile and the\n"
	    "                           run (needs --report-file): the IR after each pass,\n"
	    "                           the graph, each kernel's autotune table, heat map\n"
	    "                           and tile grid, this run's traffic and roofline\n"
	    "                           (docs/report.md)\n"
	    "  --report-file=FILE       the report to FILE instead (needs --report), whole\n"
	    "\n"
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

/* A command-line value that disagrees with itself (a count of inline
 * values that is not its type's): the input is wrong, exit 1, as a .npy of
 * the wrong shape (DESIGN §4). */
_Noreturn static void
value_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
value_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: error: ", cli_tool);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* The inline values after "TYPE=" (rest), checked against in->ty. */
static void
parse_values(InputSpec *in, const char *rest)
{
	char ts[IR_TYPE_STR];
	int64_t numel = ir_type_numel(&in->ty), cap = 0;

	for (const char *p = rest; *p;) {
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
				cli_usage_error("%s '%s': '%.*s' does not fit %s", in->opt, in->arg,
				    (int)(end - p), p, ir_dtype_name(in->ty.dt));
		} else {
			end = (char *)p;
		}
		v = isint ? (double)iv : strtod(p, &end);
		if (end == p)
			cli_usage_error("%s '%s': '%.20s' is not %s", in->opt, in->arg, p,
			    isint ? "an integer" : "a number");
		if (in->nv >= numel)
			value_error("%s '%s' gives more than the %lld values of %s %s", in->opt,
			    in->arg, (long long)numel, ir_shape_str(&in->ty, ts),
			    ir_dtype_name(in->ty.dt));
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
		value_error("%s '%s' gives %lld value%s; %s %s needs %lld (or 1 to splat)", in->opt,
		    in->arg, (long long)in->nv, in->nv == 1 ? "" : "s", ir_shape_str(&in->ty, ts),
		    ir_dtype_name(in->ty.dt), (long long)numel);
}

/* Whether s[0..n) reads as a type in IREE's spelling. */
static bool
is_iree_type(const char *s, size_t n, Type *t)
{
	return parse_iree_type(s, n, t) == 0;
}

/* The forms of InputSpec; pos is the next position of its kind. */
static void
parse_spec(const char *opt, const char *arg, int *pos, bool file_only, InputSpec *in)
{
	const char *eq = strchr(arg, '='), *rest, *eq2;
	bool named = arg[0] == '%';
	Type t;

	memset(in, 0, sizeof *in);
	in->opt = opt;
	in->arg = arg;
	in->pos = -1;
	/* by position: "@F.npy", "TYPE=...", unless the text before '=' is a
	 * name followed by a type or a file ("x=2x3xf32=...", "x=F.npy") */
	if (!named && arg[0] == '@') {
		in->pos = (*pos)++;
		in->file = arg + 1;
		goto file;
	}
	if (!named && eq && is_iree_type(arg, (size_t)(eq - arg), &t)) {
		eq2 = strchr(eq + 1, '=');
		if (!eq2 || !is_iree_type(eq + 1, (size_t)(eq2 - eq - 1), &in->ty)) {
			in->pos = (*pos)++;
			in->ty = t;
			in->typed = true;
			rest = eq + 1;
			goto typed;
		}
	}
	if (named)
		arg++;
	if (!eq || eq == arg)
		cli_usage_error("%s wants NAME=F.npy, NAME=2x3xf32=1,2,..., or by position @F.npy "
		    "or 2x3xf32=1,2,..., not '%s'", opt, in->arg);
	in->name = xmalloc((size_t)(eq - arg) + 1);
	memcpy(in->name, arg, (size_t)(eq - arg));
	in->name[eq - arg] = '\0';
	rest = eq + 1;
	eq2 = strchr(rest, '=');
	if (!eq2 || parse_iree_type(rest, (size_t)(eq2 - rest), &in->ty) != 0) {
		if (eq2 && strspn(rest, "0123456789x") == (size_t)(eq2 - rest) - 3)
			cli_usage_error("%s '%s': '%.*s' is not a type such as 2x3xf32 or f64 "
			    "(dimensions 1 to 2^30, f32 or f64)", opt, in->arg, (int)(eq2 - rest), rest);
		in->file = rest[0] == '@' ? rest + 1 : rest;
		goto file;
	}
	in->typed = true;
	rest = eq2 + 1;
typed:
	if (rest[0] == '@') {
		in->file = rest + 1;
		goto file;
	}
	if (file_only)
		cli_usage_error("%s '%s' names no file (@F.npy)", opt, in->arg);
	parse_values(in, rest);
	return;
file:
	if (*in->file == '\0')
		cli_usage_error("%s '%s' names no file", opt, in->arg);
}

/* aicm-run's own flags, for "did you mean" (cli.c adds the shared ones). */
static const char *const run_flags[] = {
	"-q", "--quiet", "--random-rest", "--stats", "--stats-file", "--engine", "--data-dir",
	"--threads", "--seed", "--input", "--expected-output", "--expected_output", "--output",
	"--output-dir", "--check", "--tolerance", "--rtol", "--atol", "--bench", "--max-bytes",
	"--max-total-bytes", "--error-limit", "--max-work", "--verbose", NULL,
};

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
		} else if (cli_inspect_arg(argc, argv, &i, &o->ci)) {
			continue;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			o->quiet = true;
		} else if (!strcmp(a, "--random-rest")) {
			o->random_rest = true;
		} else if ((v = cli_optfile(argc, argv, &i, "--stats-file"))) {
			o->stats_file = v;
		} else if ((v = cli_optval(argc, argv, &i, "--engine"))) {
			if (!strcmp(v, "reference"))
				o->engine = ENGINE_REFERENCE;
			else if (!strcmp(v, "tile"))
				o->engine = ENGINE_TILE;
			else if (!strcmp(v, "native"))
				o->engine = ENGINE_NATIVE;
			else
				cli_usage_error("--engine takes tile, native or reference, not '%s'", v);
		} else if (!strcmp(a, "--verbose")) {
			o->verbose = true;
		} else if (!strcmp(a, "--stats") || !strcmp(a, "--stats=text")) {
			o->stats = true;
		} else if (!strcmp(a, "--stats=json")) {
			o->stats = o->stats_json = true;
		} else if (!strncmp(a, "--stats=", 8)) {
			cli_usage_error("--stats takes text, json or nothing, not '%s'", a + 8);
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
			parse_spec("--input", v, &o->npos_in, false, &o->in[o->nin++]);
		} else if ((v = cli_optval(argc, argv, &i, "--expected-output")) ||
		    (v = cli_optval(argc, argv, &i, "--expected_output"))) {
			/* the second is iree-run-module's spelling */
			o->exp = xrealloc(o->exp, sizeof *o->exp * (size_t)(o->nexp + 1));
			parse_spec("--expected-output", v, &o->npos_exp, false, &o->exp[o->nexp++]);
		} else if ((v = cli_optval(argc, argv, &i, "--output"))) {
			o->outf = xrealloc(o->outf, sizeof *o->outf * (size_t)(o->noutf + 1));
			parse_spec("--output", v, &o->npos_out, true, &o->outf[o->noutf++]);
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
			cli_unknown_option(a, run_flags);
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
	if ((o->stats || o->stats_file) && o->engine == ENGINE_REFERENCE)
		cli_usage_error("--stats counts the tile engine's traffic; drop --engine=reference");
	cli_inspect_check(&o->ci, aicm_passes);
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
	for (int k = 0; k < o->nexp; k++) {
		free(o->exp[k].name);
		free(o->exp[k].v);
		free(o->exp[k].iv);
	}
	free(o->exp);
	for (int k = 0; k < o->noutf; k++)
		free(o->outf[k].name);
	free(o->outf);
	cli_inspect_free(&o->ci);
}

/* ---- the engine switch ----------------------------------------------- */

/* The tile engine's plan, compiled on its first run and reused by the
 * --bench reruns. */
static TilePlan *tile_plan;
/* The native engine's module, loaded on its first run (native.h). */
static NativeModel *native_model;
/* What --max-total-bytes leaves beside the tensors for the tile plan's
 * packed consts (-1: no limit). */
static int64_t tile_room = -1;

static int
run_engine(Engine e, const Graph *g, Tensor *vals, Diag *d, int threads)
{
	switch (e) {
	case ENGINE_NATIVE:
		return native_run(native_model, vals, threads, d);
	case ENGINE_REFERENCE:
		return exec_interp(g, vals, d);
	case ENGINE_TILE:
		if (!tile_plan) {
			TilePrepack pp;

			if (!(tile_plan = exec_tile_compile_within(g, tile_room, d)))
				return -1;
			pp = exec_tile_prepacked(tile_plan);
			/* packing is an optimisation: the budget skips it, not the run, and says
			 * so as a remark (an optimisation report: DESIGN section 4) */
			if (pp.skipped > 0)
				fprintf(stderr, "%s: remark: %lld bytes of consts' tiles not packed ahead: "
				    "--max-total-bytes leaves %lld bytes beside the tensors, %lld of them "
				    "packed (the other loads copy from their tensor in every run)\n",
				    cli_tool, (long long)pp.skipped, (long long)pp.room,
				    (long long)pp.bytes);
		}
		return exec_tile_run(tile_plan, vals, threads, d);
	}
	AICM_BUG("unknown engine %d", (int)e);
}

/* ---- preparing the graph --------------------------------------------- */

/* The stages of the run as aicm-opt's options see them (cli.c): the
 * passes aicm-run adds on its own (shape-infer for an untyped graph,
 * lower-tiled for the tile engine) are stages too, labelled "(implicit)",
 * so --print-ir-after-all, --dump-dir, --timing and --report show them. */
typedef struct RunStages {
	CliStages *st;               /* NULL: no hooks (the --check copy) */
	CliReport *rep;
	int next;                    /* the next stage's index */
	const PassMeasure *pm;
} RunStages;

typedef struct Hooked {
	CliStages *st;
	int base;                    /* stage of the pipeline's first pass */
} Hooked;

static void
run_before(void *ctx, int idx, const PassInst *pi, const Graph *g)
{
	Hooked *h = ctx;

	(void)pi;
	cli_stage_before(h->st, h->base + idx, g);
}

static void
run_after(void *ctx, int idx, const PassInst *pi, const Graph *g, double ms)
{
	Hooked *h = ctx;

	cli_stage_after(h->st, h->base + idx, pi, g, ms);
}

/* Runs pl as the next stages (named, unless the caller named them). */
static int
run_stages(Graph *g, const Pipeline *pl, RunStages *rs, Diag *d)
{
	Hooked h = {rs->st, rs->next};
	PassRun run = {true, NULL, false, NULL, NULL, NULL, rs->pm};

	if (rs->st) {
		run.report = rs->rep->f;
		run.report_json = rs->st->ci->report == CLI_REPORT_JSON;
		run.before = run_before;
		run.after = run_after;
		run.ctx = &h;
		for (int k = 0; k < pl->n; k++)
			if (!rs->st->name[rs->next + k])
				cli_stage_name(rs->st, rs->next + k, pl->p[k].pass->name, false);
	}
	rs->next += pl->n;
	return pass_run_pipeline(g, pl, &run, d);
}

/* One pass aicm-run adds on its own, with its defaults. */
static int
run_implicit(Graph *g, const char *name, RunStages *rs, Diag *d)
{
	Pipeline pl;
	int rc;

	if (pass_parse_pipeline(aicm_passes, name, &pl, stderr, cli_tool) != 0)
		AICM_BUG("cannot parse the built-in pass '%s'", name);
	if (rs->st)
		cli_stage_name(rs->st, rs->next, pl.p[0].pass->name, true);
	rc = run_stages(g, &pl, rs, d);
	pass_free_pipeline(&pl);
	return rc;
}

/* Parses and verifies the file; runs shape-infer when the graph is untyped
 * and the pipeline does not start with it, then the pipeline (may be
 * NULL) with the measuring callback rs->pm (autotune{measure=true}).
 * Returns the graph, or NULL (diagnostics given) with *status the exit
 * status: 2 when a pass could not read or write a file (autotune's cache),
 * else 1. */
static Graph *
load_graph(const char *buf, size_t len, const Pipeline *pl, RunStages *rs, Diag *d,
    int *status)
{
	Graph *g = parse_graph(buf, len, 1, d);
	int rc;

	*status = 1;
	if (!g)
		return NULL;
	if (ir_verify_input(g, d) != 0)
		goto fail;
	if (rs->st)
		cli_stage_dump(rs->st, 0, g);
	if (ir_has_untyped(g) && !(pl && pl->n > 0 && !strcmp(pl->p[0].pass->name, "shape-infer")) &&
	    run_implicit(g, "shape-infer", rs, d) != 0)
		goto fail;
	if (pl && (rc = run_stages(g, pl, rs, d)) != 0) {
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

/* An inline value into t (allocated with its type). */
static void
spec_fill(const InputSpec *in, Tensor *t)
{
	for (int64_t e = 0; e < t->numel; e++) {
		if (ir_dtype_is_float(t->dt))
			exec_set(t, e, in->v[in->nv == 1 ? 0 : e]);
		else
			exec_seti(t, e, in->iv[in->nv == 1 ? 0 : e]);
	}
}

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
		if (in && in->file && in->typed && !ir_type_eq(&in->ty, &n->type)) {
			fprintf(stderr, "%s: error: %s '%s' says %s %s, but '%%%s' in the IR is %s %s\n",
			    cli_tool, in->opt, in->arg, ir_shape_str(&in->ty, s1),
			    ir_dtype_name(in->ty.dt), n->name, ir_shape_str(&n->type, s2),
			    ir_dtype_name(n->type.dt));
			return 1;
		}
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
			spec_fill(in, &vals[i]);
		} else if (!exec_fill_const(&vals[i], n)) {
			exec_fill_random(&vals[i], o->seed, n->name);
		}
	}
	return 0;
}

/* Names the values given by position: the k-th --input is the graph's
 * k-th input, the k-th --expected-output or --output its k-th output, as
 * iree-run-module counts them.  More than there are is a wrong count
 * (exit 1). */
static int
resolve_positions(const Graph *g, InputSpec *sp, int n, int npos, const int *outs, int nout)
{
	int ninputs = 0, k = 0;

	for (int i = 0; i < g->nnodes; i++)
		ninputs += g->nodes[i].op == OP_INPUT;
	for (int j = 0; j < n; j++) {
		const char *name = NULL;
		int want = sp[j].pos;

		if (want < 0)
			continue;
		if (!outs) {
			for (int i = 0; i < g->nnodes && !name; i++)
				if (g->nodes[i].op == OP_INPUT && k++ == want)
					name = g->nodes[i].name;
			k = 0;
		} else if (want < nout) {
			name = g->nodes[outs[want]].name;
		}
		if (!name) {
			fprintf(stderr, "%s: error: %s gives %d value%s by position, but the graph has "
			    "%d %s%s\n", cli_tool, sp[j].opt, npos, npos == 1 ? "" : "s",
			    outs ? nout : ninputs, outs ? "output" : "input",
			    (outs ? nout : ninputs) == 1 ? "" : "s");
			return 1;
		}
		free(sp[j].name);
		sp[j].name = xstrdup(name);
	}
	return 0;
}

/* The --input, --expected-output and --output names must exist and be
 * given once (0 or 2); once any input is given every input must be (or
 * --random-rest), as iree-run-module refuses a wrong count (1). */
static int
check_names(const Graph *g, Opts *o, const int *outs, int nout)
{
	struct { InputSpec *sp; int n, npos; bool out; } kinds[3] = {
		{o->in, o->nin, o->npos_in, false},
		{o->exp, o->nexp, o->npos_exp, true},
		{o->outf, o->noutf, o->npos_out, true},
	};
	int missing = 0;

	for (int t = 0; t < 3; t++) {
		InputSpec *sp = kinds[t].sp;
		int rc = resolve_positions(g, sp, kinds[t].n, kinds[t].npos,
		    kinds[t].out ? outs : NULL, nout);

		if (rc)
			return rc;
		for (int k = 0; k < kinds[t].n; k++) {
			/* one output may be compared with two references */
			for (int j = 0; j < k && t != 1; j++)
				if (!strcmp(sp[j].name, sp[k].name)) {
					fprintf(stderr, "%s: error: %s gives '%%%s' twice ('%s' and "
					    "'%s')\n", cli_tool, sp[k].opt, sp[k].name, sp[j].arg,
					    sp[k].arg);
					return 2;
				}
			if (!kinds[t].out) {
				int i = ir_lookup(g, sp[k].name);

				if (i < 0 || ir_ops[g->nodes[i].op].cls != OC_SOURCE) {
					fprintf(stderr, "%s: error: --input names '%%%s', which is %s\n",
					    cli_tool, sp[k].name, i < 0 ? "not a value of the graph" :
					    "computed, not an input or a const");
					return 2;
				}
			} else {
				bool found = false;

				for (int j = 0; j < nout; j++)
					found = found || !strcmp(g->nodes[outs[j]].name, sp[k].name);
				if (!found) {
					fprintf(stderr, "%s: error: %s names '%%%s', which is not an "
					    "output of the graph\n", cli_tool, sp[k].opt, sp[k].name);
					return 2;
				}
			}
		}
	}
	if (o->nin == 0 || o->random_rest)
		return 0;
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		char ts[IR_TYPE_STR];
		bool given = false;

		if (n->op != OP_INPUT)
			continue;
		for (int k = 0; k < o->nin && !given; k++)
			given = !strcmp(o->in[k].name, n->name);
		if (given)
			continue;
		fprintf(stderr, "%s: error: no --input for '%%%s', a %s %s input; give every input, "
		    "or --random-rest for random values\n", cli_tool, n->name,
		    ir_shape_str(&n->type, ts), ir_dtype_name(n->type.dt));
		missing++;
	}
	return missing ? 1 : 0;
}

/* ---- outputs --------------------------------------------------------- */

/* Where the previews and verdicts go: stdout, or stderr when stdout holds
 * the KernelStats JSON alone (--stats=json without --stats-file), so that
 * it pipes into a JSON reader. */
static FILE *hout;

/* An element for a failure message: every digit that tells two apart
 * (%.17g, %.9g for f32: each reads back exactly), integers exactly. */
static void
fmt_exact(char *buf, size_t n, const Tensor *t, int64_t i)
{
	if (ir_dtype_is_float(t->dt) && isnan(exec_get(t, i)))
		snprintf(buf, n, "nan");     /* printf's "-nan" says nothing more */
	else if (ir_dtype_is_float(t->dt))
		snprintf(buf, n, "%.*g", t->dt == DT_F32 ? 9 : 17, exec_get(t, i));
	else
		exec_fmt_elem(buf, n, t, i);
}

static void
print_output(const Node *n, const Tensor *t)
{
	char s[IR_TYPE_STR], a[64], b[64], c[64];
	Type ty = exec_tensor_type(t);

	fprintf(hout, "%%%s: %s %s\n", n->name, ir_shape_str(&ty, s), ir_dtype_name(t->dt));
	exec_print_preview(hout, t);
	exec_stats_fmt(t, a, b, c, sizeof a);
	fprintf(hout, "sum=%s min=%s max=%s\n", a, b, c);
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
		fprintf(hout, "%s %%%s: max abs err %s; %lld of %lld elements %s: %s\n", what, name, e1,
		    (long long)nbad, (long long)a->numel, rule, nbad ? "FAIL" : "PASS");
	} else {
		fprintf(hout, "%s %%%s: %lld of %lld elements %s: %s\n", what, name, (long long)nbad,
		    (long long)a->numel, rule, nbad ? "FAIL" : "PASS");
	}
	if (nbad == 0)
		return true;
	fmt_exact(x, sizeof x, a, first);
	fmt_exact(y, sizeof y, b, first);
	fprintf(stderr, "%s: error: %s %%%s: %lld of %lld elements %s; the first is %s: got %s, "
	    "expected %s", cli_tool, what, name, (long long)nbad, (long long)a->numel, rule,
	    exec_index_str(a, first, ix), x, y);
	if (fl && isfinite(exec_get(a, first)) && isfinite(exec_get(b, first)))
		fprintf(stderr, " (|a-b| = %.3g, allowed %.3g)", fabs(exec_get(a, first) -
		    exec_get(b, first)), o->atol + o->rtol * fabs(exec_get(b, first)));
	fputc('\n', stderr);
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
		fprintf(hout, "%s %%%s: FAIL\n", what, name);
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
	fprintf(hout, "%s %%%s: max abs err %s, rel err %s (tolerance %g): %s\n", what, name, e1,
	    e2, tol, e.rel <= tol ? "PASS" : "FAIL");
	if (e.rel <= tol)
		return true;
	fmt_exact(x, sizeof x, a, e.worst);
	fmt_exact(y, sizeof y, b, e.worst);
	fprintf(stderr, "%s: error: %s %%%s: error max|a-b| / max(max|b|, 1) = %s exceeds the "
	    "tolerance %g; the worst element is %s: got %s, expected %s\n", cli_tool, what, name,
	    e2, tol, exec_index_str(a, e.worst, ix), x, y);
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

/* --output=@F.npy: each named output to its file, whole or not at all. */
static int
write_output_files(const Opts *o, const Graph *g, const Tensor *vals)
{
	char err[EXEC_ERR_MAX];

	for (int k = 0; k < o->noutf; k++) {
		int i = ir_lookup(g, o->outf[k].name);

		if (exec_npy_write(o->outf[k].file, &vals[i], err) != 0) {
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
	char err[EXEC_ERR_MAX], who[256], s1[IR_TYPE_STR], s2[IR_TYPE_STR];
	int status = 0;

	for (int k = 0; k < o->nexp; k++) {
		const ExpectSpec *e = &o->exp[k];
		const Type *want;
		Tensor t;
		int j = 0, rc;

		while (strcmp(g->nodes[outs[j]].name, e->name) != 0)
			j++;
		(void)nout;
		want = &g->nodes[outs[j]].type;
		if (e->typed && !ir_type_eq(&e->ty, want)) {
			fprintf(hout, "expected %%%s: FAIL\n", e->name);
			fprintf(stderr, "%s: error: --expected-output '%s' says %s %s, but output "
			    "'%%%s' is %s %s\n", cli_tool, e->arg, ir_shape_str(&e->ty, s1),
			    ir_dtype_name(e->ty.dt), e->name, ir_shape_str(want, s2),
			    ir_dtype_name(want->dt));
			if (status == 0)
				status = 1;
			continue;
		}
		if (!e->file) {
			/* inline: the values as written, of the output's type */
			if (exec_tensor_alloc(&t, want, 0) != 0) {
				fprintf(stderr, "%s: error: --expected-output '%%%s': cannot allocate %lld "
				    "bytes\n", cli_tool, e->name, (long long)exec_type_bytes(want));
				status = 1;
				continue;
			}
			spec_fill(e, &t);
			rc = 0;
		} else {
			snprintf(who, sizeof who, "output '%%%.200s'", e->name);
			rc = exec_npy_read(e->file, want, who, o->lim.max_bytes, &t, err);
		}
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

/* The process's CPU time, ms (all its threads). */
static double
cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* ---- main ------------------------------------------------------------ */

/* --stats and --stats-file: the text table to hout, the JSON to its file
 * (whole) or alone on stdout.  0 or 2. */
static int
print_stats(const Opts *o, const Graph *g, const Tensor *vals, Diag *d)
{
	int nk, rc = 0;
	const KernelStats *ks;

	/* KernelStats are properties of the programs: the tile engine
	 * counts them, on the same sources, beside the native results */
	if (o->engine == ENGINE_NATIVE && native_count_stats(&tile_plan, g, vals, d) != 0)
		return 1;
	ks = exec_tile_stats(tile_plan, &nk);

	if (o->stats && !o->stats_json) {
		if (!o->quiet)
			fprintf(hout, "\n");
		exec_tile_print_stats(hout, ks, nk, false);
	}
	if (o->stats_file) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		if (!f)
			AICM_BUG("open_memstream failed");
		exec_tile_print_stats(f, ks, nk, true);
		fclose(f);
		if (aicm_write_file(o->stats_file, buf, len) != 0) {
			fprintf(stderr, "%s: error: cannot write '%s': %s\n", cli_tool, o->stats_file,
			    strerror(errno));
			rc = 2;
		}
		free(buf);
	} else if (o->stats_json) {
		exec_tile_print_stats(stdout, ks, nk, true);
	}
	return rc;
}

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
	CliStages stages;
	CliReport rep;
	RunStages rs, rs_ref = {0};
	double t0, parse_ms = 0, run_ms = 0;

	/* Diagnostics come by the thousand under fuse{explain}: an unbuffered
	 * stderr made each piece of each message a system call.  exit() and
	 * AICM_BUG flush it. */
	setvbuf(stderr, NULL, _IOFBF, 1 << 16);
	hout = stdout;
	parse_args(argc, argv, &o);
	if (o.stats_json && !o.stats_file)
		hout = stderr;          /* the JSON is alone on stdout */
	if (o.ci.pipeline &&
	    pass_parse_pipeline(aicm_passes, o.ci.pipeline, &pl, stderr, cli_tool) != 0) {
		free_opts(&o);
		return 2;
	}
	if (o.ci.dump_pipeline)
		pass_print_pipeline(stderr, &pl);
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
	/* stages: the input, an implicit shape-infer, the pipeline, an
	 * implicit lower-tiled */
	cli_stages_init(&stages, &o.ci, aicm_passes, pl.n + 3);
	stages.last_chunk = true;
	cli_report_open(&rep, &o.ci);
	rs = (RunStages){&stages, &rep, 1, &pm};
	t0 = pass_now_ms();
	g = load_graph(buf, len, &pl, &rs, &d, &status);
	parse_ms = pass_now_ms() - t0;
	if (g && o.check)
		ref = load_graph(buf, len, NULL, &rs_ref, &d, &status);
	if (!g || (o.check && !ref))
		goto done;
	if (ref && ir_has_tiled(ref)) {
		fprintf(stderr, "%s: error: --check needs the graph before lowering; '%s' is "
		    "already tiled\n", cli_tool, o.file);
		status = 2;
		goto done;
	}
	if (o.engine == ENGINE_REFERENCE && ir_has_tiled(g)) {
		fprintf(stderr, "%s: error: the reference interpreter runs graphs, not tiled "
		    "kernels; use --engine=tile\n", cli_tool);
		status = 2;
		goto done;
	}
	if (o.engine != ENGINE_REFERENCE && ir_has_unlowered(g) &&
	    run_implicit(g, "lower-tiled", &rs, &d) != 0) {
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
		tile_room = exec_limits_room(gs, ref ? 2 : 1, &o.lim);
	}
	if (o.engine == ENGINE_NATIVE) {
		NativeInfo ni;

		native_model = native_load(g, o.file, cli_tool, &d, &ni);
		if (!native_model) {
			status = ni.status;
			goto done;
		}
		if (o.verbose && ni.cache_hit)
			fprintf(stderr, "%s: native: cache hit '%s' (C generated in %.1f ms)\n", cli_tool,
			    ni.so_path, ni.gen_ms);
		else if (o.verbose)
			fprintf(stderr, "%s: native: cache miss, compiled '%s' (C generated in %.1f ms, "
			    "compiled in %.1f ms)\n", cli_tool, ni.so_path, ni.gen_ms, ni.compile_ms);
	}
	vals = xcalloc((size_t)g->nnodes, sizeof *vals);
	if ((status = fill_sources(g, vals, &o, &d)) != 0)
		goto done;
	t0 = pass_now_ms();
	if (o.bench > 0) {
		double *ms = xmalloc(sizeof(double) * (size_t)o.bench), med;
		/* the process's CPU time per run beside the wall time: on a
		 * shared machine a single-threaded run's CPU time is what the
		 * load does not inflate (bench/calibrate.py takes its median) */
		double *cpu = xmalloc(sizeof(double) * (size_t)o.bench), cmed;

		int64_t packs;

		if (run_engine(o.engine, g, vals, &d, o.threads) != 0) {
			free(ms);
			status = 1;
			goto done;
		}
		packs = exec_tile_packs(tile_plan);
		for (int r = 0; r < o.bench; r++) {
			double t1 = pass_now_ms(), c1 = cpu_ms();

			if (run_engine(o.engine, g, vals, &d, o.threads) != 0)
				AICM_BUG("the engine failed on a rerun");
			ms[r] = pass_now_ms() - t1;
			cpu[r] = cpu_ms() - c1;
		}
		/* the kept packs (tile_exec.h): a timed run should pack nothing */
		if (o.verbose && o.engine == ENGINE_TILE)
			fprintf(stderr, "%s: tile: %lld const loads packed at the warm-up (%lld bytes), "
			    "%lld over the %d timed runs\n", cli_tool, (long long)packs,
			    (long long)exec_tile_prepacked(tile_plan).bytes,
			    (long long)(exec_tile_packs(tile_plan) - packs), o.bench);
		qsort(ms, (size_t)o.bench, sizeof *ms, cmp_double);
		qsort(cpu, (size_t)o.bench, sizeof *cpu, cmp_double);
		med = o.bench % 2 ? ms[o.bench / 2] : (ms[o.bench / 2 - 1] + ms[o.bench / 2]) / 2;
		cmed = o.bench % 2 ? cpu[o.bench / 2] : (cpu[o.bench / 2 - 1] + cpu[o.bench / 2]) / 2;
		for (int j = 0; j < nout && !o.quiet; j++) {
			print_output(&g->nodes[outs[j]], &vals[outs[j]]);
			fprintf(hout, "\n");
		}
		/* to 0.1 us: a kernel held in cache runs in 5-20 us, where a
		 * whole microsecond is 5-20% of its time (bench/native.sh's
		 * small suite compares two such times) */
		fprintf(hout, "bench: %d run%s after 1 warm-up: min %.4f ms, median %.4f ms\n",
		    o.bench, o.bench == 1 ? "" : "s", ms[0], med);
		fprintf(hout, "bench cpu: min %.4f ms, median %.4f ms (process CPU time, all threads)\n",
		    cpu[0], cmed);
		free(ms);
		free(cpu);
	} else {
		if (run_engine(o.engine, g, vals, &d, o.threads) != 0) {
			status = 1;
			goto done;
		}
		for (int j = 0; j < nout && !o.quiet; j++) {
			if (j)
				fprintf(hout, "\n");
			print_output(&g->nodes[outs[j]], &vals[outs[j]]);
		}
	}
	run_ms = pass_now_ms() - t0;
	if ((o.stats || o.stats_file) && status == 0)
		status = print_stats(&o, g, vals, &d);
	if (rep.html) {
		ReportStats run = {0};

		/* the native engine's run data: the tile engine's count, as for
		 * --stats (which made it already, when given) */
		if (o.engine == ENGINE_NATIVE && !tile_plan && status == 0 &&
		    native_count_stats(&tile_plan, g, vals, &d) != 0) {
			status = 1;
			goto done;
		}
		if (tile_plan) {
			run.k = (KernelStats *)exec_tile_stats(tile_plan, &run.n);
			run.total = exec_tile_total(run.k, run.n);
		}
		cli_report_html(&rep, &stages, argc, argv, o.file, g, tile_plan ? &run : NULL,
		    NULL, NULL, "this run",
		    "The reference interpreter ran (--engine=reference), which counts no traffic; "
		    "run with the tile engine, the default, to see it here.");
	}
	if (ref) {
		rvals = xcalloc((size_t)ref->nnodes, sizeof *rvals);
		if ((status = fill_sources(ref, rvals, &o, &d)) != 0)
			goto done;
		if (exec_interp(ref, rvals, &d) != 0) {
			status = 1;
			goto done;
		}
		if (!o.quiet)
			fprintf(hout, "\n");
		for (int j = 0; j < nout; j++) {
			const Node *n = &g->nodes[outs[j]];
			int r = ir_lookup(ref, n->name);

			if (r < 0) {
				fprintf(hout, "check %%%s: FAIL\n", n->name);
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
	if (o.noutf) {
		int rc = write_output_files(&o, g, vals);

		if (rc > status)
			status = rc;
	}
	if (o.nexp) {
		int rc;

		if (!o.quiet || ref)
			fprintf(hout, "\n");
		rc = check_expected(&o, g, vals, outs, nout);
		if (rc > status)
			status = rc;
	}
	/* -o: the program that ran, after every stage, whole or not at all */
	if (o.ci.output && status == 0) {
		size_t n;
		char *ir = ir_print_str(g, &n);

		if (aicm_write_file(o.ci.output, ir, n) != 0) {
			fprintf(stderr, "%s: error: cannot write '%s': %s\n", cli_tool, o.ci.output,
			    strerror(errno));
			status = 2;
		}
		free(ir);
	}
	if (o.ci.timing)
		cli_stages_timing(&stages, parse_ms, "run", run_ms);
	if (cli_flush_stdout() != 0)
		status = 2;
done:
	if (!cli_stages_commit(&stages) && status == 0)
		status = 2;
	{
		int rc = cli_report_close(&rep, status == 0);

		if (rc > status)
			status = rc;
	}
	if (d.nerr) {
		int n = d.stopped ? d.nshown : d.nerr;   /* as clang, the errors shown */

		fprintf(stderr, "%s: %d error%s\n", cli_tool, n, n == 1 ? "" : "s");
	}
	cli_stages_free(&stages);
	if (vals)
		exec_tensors_free(vals, g->nnodes);
	if (rvals)
		exec_tensors_free(rvals, ref->nnodes);
	free(vals);
	free(rvals);
	free(outs);
	exec_tile_free(tile_plan);
	native_free(native_model);
	ir_graph_free(g);
	ir_graph_free(ref);
	diag_free(&d);
	free(buf);
	pass_free_pipeline(&pl);
	free_opts(&o);
	return status;
}
