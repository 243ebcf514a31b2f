/*
 * aicm-opt: parse a graph, run a pipeline of passes, print the result.
 *
 * The driver of DESIGN §5, modelled on mlir-opt: the input is split into
 * chunks (one, or one per '// -----' with --split-input-file), each chunk
 * is parsed, verified, run through the pipeline and printed on its own.
 * Output is collected in memory and written at the end, so that -o FILE is
 * written whole or not at all.  Under --verify-diagnostics the diagnostics
 * are collected instead of printed and matched against the input's
 * `// expected-error@+N {{...}}` comments.
 *
 * The crash and failure reproducer (docs/reliability.md), after mlir-opt's:
 * with --reproducer=FILE the IR is printed into memory before every pass,
 * and when a pass fails, or its output does not verify, or anything hits
 * an internal error (AICM_BUG, through aicm_set_bug_hook), FILE gets that
 * IR under a '// RUN:' line with the rest of the pipeline and its options.
 * Without the flag an internal error still writes one, to
 * $TMPDIR/aicm-opt-crash-PID.aicm, holding the chunk as read and the whole
 * pipeline: that costs nothing until it is needed.
 *
 * Exit codes (DESIGN §4): 0 ok, 1 the input is wrong, 2 the command line is
 * wrong or a file cannot be read or written, 3 an internal error.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "diag.h"
#include "emit_c.h"
#include "measure.h"
#include "parse.h"
#include "pass.h"
#include "../../passes/passes.h"
#include "emit_triton.h"
#include "report.h"

const char *const cli_tool = "aicm-opt";

typedef struct Opts {
	const char *input;
	CliInspect ci;               /* --pass, -o, --print-ir-*, --dump-dir, --report... */
	bool verify_each;
	bool split;
	bool verify_diags;
	bool emit_dot;
	bool emit_c;                 /* --emit=c (src/codegen/emit_c.h) */
	int emit_svg;                /* --emit=svg-*: SVG_GRID.., or 0 */
	const char *stats_file;      /* --stats-file: run data to draw (read) */
	const char *eager_stats_file;   /* --eager-stats-file: the eager run's */
	const char *peak;            /* --peak: the roofline's machine */
	bool emit_triton;            /* --emit=triton (src/codegen/emit_triton.c) */
	const char *reproducer;
	const char *test_crash;      /* --test-crash-in=NAME: AICM_BUG before it */
	int errlimit;                /* --error-limit */
	int64_t max_work;            /* --max-work: autotune{measure=true}'s runs */
	const char *datadir;         /* --data-dir */
} Opts;

/* State for one chunk while its pipeline runs (the PassRun hooks). */
/* --emit=svg-*: the pictures of src/report (docs/report.md "The pictures"). */
enum { SVG_GRID = 1, SVG_AUTOTUNE, SVG_TRAFFIC };

typedef struct Stage {
	const Opts *o;
	ReportTunes *tunes;          /* --emit=svg-autotune: autotune's tables */
	int chunk;
	CliStages *stages;           /* printing, timing, --dump-dir (cli.c) */
	bool io_failed;              /* a pass or the reproducer could not read or write */
	const Pipeline *pl;
	const char *text;            /* the chunk as read */
	size_t len;
	int pass;                    /* the pass running, -1 before, pl->n after */
	char *ir;                    /* --reproducer: the IR given to that pass */
} Stage;

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: aicm-opt [options] [FILE|-]\n"
	    "\n"
	    "Parse an aicm graph, run passes over it and print the result.\n"
	    "\n"
	    "  --pass=PIPELINE          passes to run, comma-separated, each with optional\n"
	    "                           {key=value,...} options (default: none); also\n"
	    "                           --pass-pipeline=PIPELINE or ='builtin.module(...)'\n"
	    "  -o FILE                  write the output to FILE, whole or not at all\n"
	    "                           (default: stdout)\n"
	    "  --print-ir-before=NAME   the IR before pass NAME, to stderr (default: none)\n"
	    "  --print-ir-after=NAME    the IR after pass NAME, to stderr (default: none)\n"
	    "  --print-ir-before-all    print the IR before every pass (default: off)\n"
	    "  --print-ir-after-all     print the IR after every pass (default: off; also\n"
	    "                           --mlir-print-ir-after-all)\n"
	    "  --print-ir-after-change  print the IR after a pass only if it changed it\n"
	    "                           (default: off)\n"
	    "  --dump-dir=DIR           write each stage to DIR/NN-NAME.aicm (00-input.aicm,\n"
	    "                           01-shape-infer.aicm, ...), removing the stage files\n"
	    "                           of an earlier run there (default: none)\n"
	    "  --dump-pipeline          print the pipeline as parsed, every option's value,\n"
	    "                           to stderr (default: off; also --dump-pass-pipeline)\n"
	    "  --verify-each            verify the IR after every pass (default: on)\n"
	    "  --no-verify-each         do not\n"
	    "  --timing                 per-pass wall time, to stderr (default: off; also\n"
	    "                           --mlir-timing)\n"
	    "  --report[=text|json]     the passes' reports, to stderr (default: off); JSON\n"
	    "                           is one object per line\n"
	    "  --report=html            one self-contained HTML page of the compile (needs\n"
	    "                           --report-file): the IR after each pass with the\n"
	    "                           changes marked, the graph (Graphviz's dot), per\n"
	    "                           kernel autotune's table and heat map and the tile\n"
	    "                           grid, and with --stats-file the run's traffic and\n"
	    "                           roofline (docs/report.md)\n"
	    "  --report-file=FILE       write the report to FILE instead (needs --report),\n"
	    "                           whole or not at all\n"
	    "  --emit=ir|dot|c|triton   what to print (default: ir); c: C99 of the tile\n"
	    "                           programs, with -o model.c, model.h beside it; triton:\n"
	    "                           Python source of @triton.jit kernels and a launcher;\n"
	    "                           both for a lowered graph (put lower-tiled in --pass:\n"
	    "                           a compute op left is a usage error, exit 2)\n");
	/* in two pieces: C99 promises string literals of 4095 bytes only */
	fprintf(f,
	    "  --emit=svg-grid          the tile grid of every lowered kernel, as SVG\n"
	    "  --emit=svg-autotune      autotune's BM x BN heat map per kernel, as SVG (needs\n"
	    "                           autotune in --pass)\n"
	    "  --emit=svg-traffic       traffic bars and a roofline of a run, as SVG (needs\n"
	    "                           --stats-file)\n"
	    "  --stats-file=FILE        read aicm-run's KernelStats JSON (its --stats-file)\n"
	    "                           to draw run data, in --report=html or\n"
	    "                           --emit=svg-traffic (default: none)\n"
	    "  --eager-stats-file=FILE  the same of an eager run (each op its own kernel),\n"
	    "                           drawn beside it (default: none)\n"
	    "  --peak=TARGET|GFLOPS,GBS the roofline's machine: a target's peak and\n"
	    "                           bandwidth, or bench/peak.c's figures (default: cpu)\n"
	    "  --split-input-file       one graph per '// -----' chunk, each on its own\n"
	    "                           (default: off)\n"
	    "  --verify-diagnostics     check diagnostics against the input's\n"
	    "                           // expected-error@+N {{...}} comments (default: off)\n"
	    "  --error-limit=N          after N errors print \"too many errors; stopping\" and\n"
	    "                           stop (default 20, as clang; 0: no limit)\n"
	    "  --max-work=N             the flops autotune{measure=true} may plan for one\n"
	    "                           tiling's runs (and for its reference run), checked\n"
	    "                           before measuring (default 1T = 1e12; 0: no limit;\n"
	    "                           k/M/G/T/P are powers of 1000)\n"
	    "  --data-dir=DIR           folder that const file= paths are relative to, and\n"
	    "                           must stay inside, when autotune{measure=true} reads\n"
	    "                           them (default: the input's folder; for stdin, the\n"
	    "                           current directory); file= is printed as written\n"
	    "  --reproducer=FILE        when a pass fails, write the IR it was given and a\n"
	    "                           // RUN: line that reproduces the failure to FILE\n"
	    "                           (internal errors always write one, by default to\n"
	    "                           $TMPDIR/aicm-opt-crash-PID.aicm)\n"
	    "  --list-passes            list the passes and their options\n"
	    "  --help                   this text\n"
	    "  --version                the version\n"
	    "\n"
	    "Exit status: 0 ok, 1 the input is wrong, 2 bad usage or I/O, 3 internal error.\n");
}

/* aicm-opt's own flags, for "did you mean" (cli.c adds the shared ones). */
static const char *const opt_flags[] = {
	"--verify-each", "--no-verify-each", "--emit", "--split-input-file",
	"--verify-diagnostics", "--error-limit", "--max-work", "--data-dir", "--reproducer",
	"--list-passes", "--stats-file", "--eager-stats-file", "--peak", NULL,
};

static void
parse_args(int argc, char **argv, Opts *o)
{
	const char *v;

	memset(o, 0, sizeof *o);
	o->verify_each = true;
	o->errlimit = DIAG_ERROR_LIMIT;
	o->max_work = EXEC_DEFAULT_MAX_WORK;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--version")) {
			printf("aicm-opt %s\n", AICM_VERSION);
			exit(0);
		} else if (!strcmp(a, "--list-passes")) {
			pass_list(stdout, aicm_passes);
			exit(0);
		} else if (cli_inspect_arg(argc, argv, &i, &o->ci)) {
			continue;
		} else if (!strcmp(a, "--verify-each")) {
			o->verify_each = true;
		} else if (!strcmp(a, "--no-verify-each")) {
			o->verify_each = false;
		} else if ((v = cli_optval(argc, argv, &i, "--emit"))) {
			o->emit_svg = 0;
			o->emit_dot = o->emit_triton = o->emit_c = false;
			if (!strcmp(v, "dot"))
				o->emit_dot = true;
			else if (!strcmp(v, "triton"))
				o->emit_triton = true;
			else if (!strcmp(v, "c"))
				o->emit_c = true;
			else if (!strcmp(v, "svg-grid"))
				o->emit_svg = SVG_GRID;
			else if (!strcmp(v, "svg-autotune"))
				o->emit_svg = SVG_AUTOTUNE;
			else if (!strcmp(v, "svg-traffic"))
				o->emit_svg = SVG_TRAFFIC;
			else if (strcmp(v, "ir"))
				cli_usage_error("--emit takes ir, dot, c, triton, svg-grid, svg-autotune or "
				    "svg-traffic, not '%s'", v);
		} else if ((v = cli_optfile(argc, argv, &i, "--stats-file"))) {
			o->stats_file = v;
		} else if ((v = cli_optfile(argc, argv, &i, "--eager-stats-file"))) {
			o->eager_stats_file = v;
		} else if ((v = cli_optval(argc, argv, &i, "--peak"))) {
			o->peak = v;
		} else if (!strcmp(a, "--split-input-file")) {
			o->split = true;
		} else if (!strcmp(a, "--verify-diagnostics")) {
			o->verify_diags = true;
		} else if ((v = cli_optval(argc, argv, &i, "--error-limit"))) {
			o->errlimit = (int)cli_parse_int("--error-limit", v, 0, INT_MAX);
		} else if ((v = cli_optval(argc, argv, &i, "--data-dir"))) {
			o->datadir = v;
		} else if ((v = cli_optval(argc, argv, &i, "--max-work"))) {
			o->max_work = cli_parse_flops("--max-work", v);
		} else if ((v = cli_optfile(argc, argv, &i, "--reproducer"))) {
			o->reproducer = v;
		} else if ((v = cli_optval(argc, argv, &i, "--test-crash-in"))) {
			o->test_crash = v;
		} else if (a[0] == '-' && a[1] != '\0') {
			cli_unknown_option(a, opt_flags);
		} else if (o->input) {
			cli_usage_error("more than one input file ('%s')", a);
		} else {
			o->input = a;
		}
	}
	if (!o->input)
		o->input = "-";
	if (o->emit_svg && (o->emit_dot || o->emit_triton))
		AICM_BUG("--emit: two outputs");
	if (o->emit_svg && o->split)
		cli_usage_error("--emit=svg-* draws one graph; drop --split-input-file");
	if (o->emit_svg == SVG_TRAFFIC && !o->stats_file)
		cli_usage_error("--emit=svg-traffic draws a run's data: give --stats-file=FILE "
		    "(aicm-run --stats-file=FILE writes one)");
	if (o->eager_stats_file && !o->stats_file)
		cli_usage_error("--eager-stats-file is drawn beside --stats-file: give both");
	cli_inspect_check(&o->ci, aicm_passes);
	/* the page shows one graph, which a passing run leaves behind */
	if (o->ci.report == CLI_REPORT_HTML && o->split)
		cli_usage_error("--report=html draws one graph; drop --split-input-file");
	if (o->stats_file && o->ci.report != CLI_REPORT_HTML && o->emit_svg != SVG_TRAFFIC)
		cli_usage_error("--stats-file=%s gives run data to draw; it needs "
		    "--report=html --report-file=F or --emit=svg-traffic", o->stats_file);
	if (o->ci.report == CLI_REPORT_HTML && o->verify_diags)
		cli_usage_error("--report=html draws the graph a pipeline made; drop "
		    "--verify-diagnostics");
}

/* ---- pass hooks: printing, dumping, timing --------------------------- */

static void
hook_before(void *ctx, int idx, const PassInst *pi, const Graph *g)
{
	Stage *s = ctx;
	const Opts *o = s->o;

	s->pass = idx;
	if (o->reproducer) {
		free(s->ir);
		s->ir = ir_print_str(g, NULL);
	}
	if (o->test_crash && !strcmp(o->test_crash, pi->pass->name))
		AICM_BUG("--test-crash-in=%s: an internal error on purpose, before the pass",
		    pi->pass->name);
	cli_stage_before(s->stages, idx + 1, g);
}

static void
hook_after(void *ctx, int idx, const PassInst *pi, const Graph *g, double ms)
{
	Stage *s = ctx;

	if (s->tunes && !strcmp(pi->pass->name, "autotune"))
		report_tunes_collect(s->tunes, g, pi);
	cli_stage_after(s->stages, idx + 1, pi, g, ms);
}

/* ---- the reproducer -------------------------------------------------- */

/* Writes s as one shell word, always quoted (the RUN line is run by sh;
 * a quote in a cache path must not end the word). */
static void
put_shell_word(FILE *f, const char *s)
{
	StrBuf w = {0};

	strbuf_shell_word(&w, s, false);
	fputs(w.s, f);
	free(w.s);
}

/* Writes a file name in quotes on one comment line: a quote, a backslash
 * and every control byte escaped as in C, so that a newline in the name
 * cannot start a line of IR. */
static void
put_name(FILE *f, const char *s)
{
	fputc('\'', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\'' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

/* Writes text under a RUN line naming passes from..n-1 of the pipeline;
 * returns 0 or -1 with errno set. */
static int
write_repro(const Stage *s, const char *path, int flags, int from, const char *text, size_t len,
    const char *why)
{
	Pipeline rest = {s->pl->p + from, s->pl->n - from};
	char *buf = NULL, *pipe = NULL;
	size_t n = 0, pn = 0;
	FILE *f = open_memstream(&buf, &n), *pf;
	int r;

	if (!f)
		return -1;
	if (rest.n > 0) {
		if (!(pf = open_memstream(&pipe, &pn))) {
			fclose(f);
			free(buf);
			return -1;
		}
		pass_print_pipeline(pf, &rest);
		if (fclose(pf) != 0) {
			fclose(f);
			free(buf);
			free(pipe);
			return -1;
		}
		if (pn && pipe[pn - 1] == '\n')
			pipe[--pn] = '\0';     /* pass_print_pipeline's newline */
	}
	if (pipe && strpbrk(pipe, "\n\r")) {
		/* option values end at white space, so this cannot be: but a
		 * line break would put the rest of the line among the IR */
		fprintf(f, "// (no RUN line: the pipeline's text holds a line break)\n");
	} else {
		fprintf(f, "// RUN: aicm-opt");
		if (pipe) {
			fprintf(f, " --pass=");
			put_shell_word(f, pipe);
		}
		fprintf(f, "%s %%s\n", s->o->verify_each ? "" : " --no-verify-each");
	}
	free(pipe);
	fprintf(f, "// aicm-opt reproducer: %s; read from ", why);
	put_name(f, strcmp(s->o->input, "-") ? s->o->input : "<stdin>");
	fputc('\n', f);
	fwrite(text, 1, len, f);
	if (len && text[len - 1] != '\n')
		fputc('\n', f);
	if (fclose(f) != 0) {
		free(buf);
		return -1;
	}
	r = aicm_write_file_flags(path, buf, n, flags);
	free(buf);
	return r;
}

static void
repro_written(const char *path, int r, bool shared)
{
	if (r != 0)
		fprintf(stderr, "%s: error: cannot write the reproducer '%s': %s\n", cli_tool, path,
		    shared && errno == ELOOP ? "a symbolic link is there, not followed in a shared "
		    "folder" : shared && errno == EEXIST ? "something other than a regular file is "
		    "there" : shared && errno == EPERM ? "another user's file is there" :
		    strerror(errno));
	else
		fprintf(stderr, "%s: note: reproducer written to '%s'\n", cli_tool, path);
}

/* A pass failed, or its output did not verify: FILE gets its input; a
 * FILE that cannot be written is an I/O failure (exit 2). */
static void
pass_failed(Stage *s)
{
	char why[256];
	int r;

	if (!s->o->reproducer || !s->ir || s->pass < 0 || s->pass >= s->pl->n)
		return;
	snprintf(why, sizeof why, "pass '%s' (%d of %d) failed on this IR",
	    s->pl->p[s->pass].pass->name, s->pass + 1, s->pl->n);
	r = write_repro(s, s->o->reproducer, 0, s->pass, s->ir, strlen(s->ir), why);
	repro_written(s->o->reproducer, r, false);
	if (r != 0)
		s->io_failed = true;
}

/* The AICM_BUG hook: the IR given to the pass when it was kept, else the
 * chunk as read with the whole pipeline.  The default file has a name
 * anyone can guess in a shared folder, so only a regular file (or none)
 * is replaced there, never something a link points to.  The stage files
 * of --dump-dir written so far are committed too. */
static void
crashed(void *ctx)
{
	Stage *s = ctx;
	char path[4096], why[256];
	const char *tmp = getenv("TMPDIR");
	int flags = 0;

	if (s->stages)
		cli_stages_commit(s->stages);
	if (s->o->reproducer) {
		snprintf(path, sizeof path, "%s", s->o->reproducer);
	} else {
		snprintf(path, sizeof path, "%s/aicm-opt-crash-%ld.aicm", tmp && *tmp ? tmp : "/tmp",
		    (long)getpid());
		flags = AICM_OUT_NOFOLLOW;
	}
	if (s->ir && s->pass >= 0 && s->pass < s->pl->n) {
		snprintf(why, sizeof why, "internal error in pass '%s' (%d of %d) on this IR",
		    s->pl->p[s->pass].pass->name, s->pass + 1, s->pl->n);
		repro_written(path, write_repro(s, path, flags, s->pass, s->ir, strlen(s->ir), why),
		    flags != 0);
	} else {
		snprintf(why, sizeof why, "internal error %s",
		    s->pass < 0 ? "before the pipeline" : s->pass >= s->pl->n ? "after the pipeline" :
		    "in the pipeline");
		repro_written(path, write_repro(s, path, flags, 0, s->text, s->len, why), flags != 0);
	}
}

/* ---- the chunks ------------------------------------------------------ */

typedef struct Chunk {
	size_t off, len;
	int line;                    /* first line, 1-based */
	int lastline;
} Chunk;

static void
push_chunk(Chunk **c, int *n, int *cap, Chunk ch)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 4;
		*c = xrealloc(*c, sizeof **c * (size_t)*cap);
	}
	(*c)[(*n)++] = ch;
}

/* Cuts the input at lines that start with "// -----" when splitting. */
static int
split_chunks(const char *buf, size_t len, bool split, Chunk **out)
{
	Chunk *c = NULL, cur = {0, 0, 1, 1};
	int n = 0, cap = 0, line = 1;
	size_t i = 0;

	/* Unsplit, the whole input is one chunk: no need to walk its lines. */
	if (!split) {
		cur.len = len;
		cur.lastline = INT_MAX;
		push_chunk(&c, &n, &cap, cur);
		*out = c;
		return n;
	}
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - buf) : len;

		if (split && e - i >= 8 && !strncmp(buf + i, "// -----", 8)) {
			cur.len = i - cur.off;
			cur.lastline = line - 1;
			push_chunk(&c, &n, &cap, cur);
			cur.off = e < len ? e + 1 : len;
			cur.line = line + 1;
		}
		i = e + 1;
		line++;
	}
	cur.len = len - cur.off;
	cur.lastline = line;
	push_chunk(&c, &n, &cap, cur);
	*out = c;
	return n;
}

/* --emit=c and --emit=triton write a lowered graph's tile programs.  As
 * mlir-opt runs the passes it is given and no others (and mlir-translate
 * refuses IR not yet in the dialect it writes), a compute op that the
 * pipeline left is refused at its place, saying what to add to --pass:
 * 0, or 2 (the command line lacks lower-tiled) after the diagnostic. */
static int
check_lowered(const Graph *g, const char *emit, Diag *d)
{
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (n->op == OP_TILED || ir_ops[n->op].cls == OC_SOURCE)
			continue;
		diag_error(d, n->loc, "--emit=%s needs a lowered graph: '%%%s' ('%s') is not a "
		    "tiled kernel (add lower-tiled to --pass)", emit, n->name, ir_ops[n->op].name);
		return 2;
	}
	return 0;
}

/* --emit=c: the C of the lowered g to os; with -o, the header text into
 * *header for main to write beside the module.  0, or -1 after a
 * diagnostic. */
static int
emit_c(const Graph *g, const Opts *o, FILE *os, StrBuf *header, Diag *d)
{
	StrBuf c = {0};
	char *name, *hname = NULL;
	int rc;

	name = codegen_c_name(g, strcmp(o->input, "-") ? o->input : NULL);
	if (o->ci.output) {
		/* model.c includes "model.h", written beside it */
		const char *b = strrchr(o->ci.output, '/');
		size_t n;

		b = b ? b + 1 : o->ci.output;
		n = strlen(b);
		if (n > 2 && !strcmp(b + n - 2, ".c"))
			n -= 2;
		hname = xmalloc(n + 3);
		memcpy(hname, b, n);
		memcpy(hname + n, ".h", 3);
	}
	rc = codegen_c(g, name, hname, &c, header, d);
	if (rc == 0)
		fputs(c.s, os);
	free(c.s);
	free(name);
	free(hname);
	return rc;
}

/* --emit=svg-*'s checks against the pipeline, and the run data read: 0, or
 * the exit status after the message (2 usage or a file unread, 1 a bad
 * stats file). */
static int
draw_setup(const Opts *o, const Pipeline *pl, ReportStats *stats, ReportStats *eager,
    ReportPeak *peak)
{
	char why[512];
	int rc;

	if (o->emit_svg == SVG_AUTOTUNE) {
		int k;

		for (k = 0; k < pl->n && strcmp(pl->p[k].pass->name, "autotune"); k++)
			;
		if (k == pl->n)
			cli_usage_error("--emit=svg-autotune draws autotune's tables: put autotune in "
			    "--pass (e.g. --pass=shape-infer,fuse,autotune,lower-tiled)");
	}
	if (report_peak_parse(o->peak ? o->peak : "cpu", false, peak, why, sizeof why) != 0)
		cli_usage_error("--peak %s", why);
	if (o->stats_file && (rc = report_stats_read(cli_tool, o->stats_file, stats, stderr)))
		return rc == -2 ? 2 : 1;
	if (o->eager_stats_file &&
	    (rc = report_stats_read(cli_tool, o->eager_stats_file, eager, stderr))) {
		report_stats_free(stats);
		return rc == -2 ? 2 : 1;
	}
	return 0;
}

/* --emit=triton: g's Triton module, named after the graph or the input
 * file's stem.  Returns the exit status: 0; 2 for a graph that is not
 * lowered (the pipeline lacks lower-tiled: usage); 1 for a tiled body
 * written by hand that has no Triton form (the input); each said in d. */
static int
emit_triton_chunk(FILE *os, const Graph *g, const char *input, Diag *d)
{
	int rc;
	char stem[256] = "graph";

	if (input && strcmp(input, "-")) {
		const char *b = strrchr(input, '/'), *dot;

		b = b ? b + 1 : input;
		dot = strrchr(b, '.');
		snprintf(stem, sizeof stem, "%.*s", (int)(dot && dot > b ? dot - b : (long)strlen(b)), b);
	}
	rc = triton_emit(os, g, stem, d);
	return rc == 0 ? 0 : rc == -1 ? 2 : 1;
}

int
main(int argc, char **argv)
{
	Opts o;
	Pipeline pl = {0};
	char *buf, *out = NULL, *datadir;
	size_t len, outlen = 0;
	StrBuf header = {0};         /* --emit=c -o: the header beside the module */
	FILE *os;
	Diag d;
	Chunk *ch;
	int nch, status = 0, vbad = 0, printed = 0;
	MeasureCtx mc;
	PassMeasure pm;
	CliStages stages;
	CliReport rep;
	ReportTunes tunes = {0};
	ReportStats stats = {0}, eager = {0};
	ReportPeak peak;

	/* Diagnostics come by the thousand under fuse{explain}: an unbuffered
	 * stderr made each piece of each message a system call.  exit() and
	 * AICM_BUG flush it. */
	setvbuf(stderr, NULL, _IOFBF, 1 << 16);
	parse_args(argc, argv, &o);
	if (o.ci.pipeline &&
	    pass_parse_pipeline(aicm_passes, o.ci.pipeline, &pl, stderr, cli_tool) != 0) {
		cli_inspect_free(&o.ci);
		return 2;
	}
	if ((status = draw_setup(&o, &pl, &stats, &eager, &peak)) != 0) {
		pass_free_pipeline(&pl);
		cli_inspect_free(&o.ci);
		return status;
	}
	/* autotune{measure=true} times candidates on the engine its target
	 * models (measure.c), all cores, as aicm-run runs by default */
	measure_init(&mc, &pm, cli_tool, (int)sysconf(_SC_NPROCESSORS_ONLN));
	mc.max_work = o.max_work;
	/* to stderr, as mlir-opt: stdout is the IR, for the next tool */
	if (o.ci.dump_pipeline)
		pass_print_pipeline(stderr, &pl);
	if (aicm_read_file(o.input, &buf, &len) != 0) {
		char why[128];

		fprintf(stderr, "%s: error: cannot read '%s': %s\n", cli_tool, o.input,
		    aicm_read_strerror(errno, AICM_READ_MAX, why, sizeof why));
		report_stats_free(&stats);
		report_stats_free(&eager);
		pass_free_pipeline(&pl);
		cli_inspect_free(&o.ci);
		return 2;
	}
	diag_init(&d, strcmp(o.input, "-") ? o.input : "<stdin>", buf, len, stderr);
	datadir = cli_data_dir(o.datadir, o.input);
	mc.datadir = datadir;
	d.collect = o.verify_diags;
	/* Under --verify-diagnostics the limit bounds the mismatches printed;
	 * what is collected to match is never cut short. */
	d.errlimit = o.errlimit;
	/* -o is written whole or not at all, so its text is kept in memory;
	 * stdout is streamed. */
	os = o.ci.output ? open_memstream(&out, &outlen) : stdout;
	if (!os)
		AICM_BUG("open_memstream failed");
	nch = split_chunks(buf, len, o.split, &ch);
	cli_stages_init(&stages, &o.ci, aicm_passes, pl.n + 1);
	for (int k = 0; k < pl.n; k++)
		cli_stage_name(&stages, k + 1, pl.p[k].pass->name, false);
	cli_report_open(&rep, &o.ci);
	for (int c = 0; c < nch; c++) {
		Stage st = {.o = &o, .tunes = o.emit_svg == SVG_AUTOTUNE ? &tunes : NULL,
		    .chunk = c, .pl = &pl, .text = buf + ch[c].off,
		    .len = ch[c].len, .pass = -1, .stages = &stages};
		PassRun run = {o.verify_each, rep.f, o.ci.report == CLI_REPORT_JSON,
		    hook_before, hook_after, &st, &pm};
		double t0 = pass_now_ms(), parse_ms, print_ms;
		int nerr0 = d.nerr;
		Graph *g;

		memset(stages.ms, 0, sizeof(double) * (size_t)stages.n);
		stages.last_chunk = c == nch - 1;
		aicm_set_bug_hook(crashed, &st);
		g = parse_graph(buf + ch[c].off, ch[c].len, ch[c].line, &d);
		if (g && ir_verify_input(g, &d) != 0) {
			ir_graph_free(g);
			g = NULL;
		}
		parse_ms = pass_now_ms() - t0;
		if (g) {
			cli_stage_dump(&stages, 0, g);
			int prc = pass_run_pipeline(g, &pl, &run, &d);

			/* Reports and remarks come before the IR they describe,
			 * also when both streams go to one place. */
			fflush(stderr);
			if (prc != 0) {
				st.io_failed = prc == PASS_IO;
				pass_failed(&st);
				ir_graph_free(g);
				g = NULL;
			}
		}
		st.pass = pl.n;
		t0 = pass_now_ms();
		if (g) {
			/* Between printed graphs only: a failed first chunk must
			 * not leave a leading separator (an empty chunk on reading). */
			if (printed++)
				fprintf(os, "// -----\n");
			if (o.emit_svg == SVG_GRID) {
				report_grid_doc(os, g);
			} else if (o.emit_svg == SVG_AUTOTUNE) {
				report_tune_doc(os, &tunes);
			} else if (o.emit_svg == SVG_TRAFFIC) {
				report_traffic_doc(os, &stats, o.eager_stats_file ? &eager : NULL, &peak);
			} else if (o.emit_dot) {
				ir_print_dot(os, g);
			} else if ((o.emit_c || o.emit_triton) &&
			    check_lowered(g, o.emit_c ? "c" : "triton", &d) != 0) {
				status = 2;
				ir_graph_free(g);
				g = NULL;
			} else if (o.emit_c) {
				if (emit_c(g, &o, os, &header, &d) != 0) {
					ir_graph_free(g);
					g = NULL;
				}
			} else if (o.emit_triton) {
				int erc = emit_triton_chunk(os, g, o.input, &d);

				if (erc > status)
					status = erc;
			} else {
				ir_print(os, g);
			}
		}
		print_ms = pass_now_ms() - t0;
		if (g)
			cli_report_html(&rep, &stages, argc, argv, o.input, g,
			    o.stats_file ? &stats : NULL, o.eager_stats_file ? &eager : NULL,
			    &peak, o.stats_file, "aicm-opt compiles without "
			    "running: run the same command with aicm-run, which runs the program and "
			    "counts each kernel's traffic, or give aicm-opt a run's counts with "
			    "--stats-file=F (written by aicm-run --stats-file=F).");
		if (o.ci.timing)
			cli_stages_timing(&stages, parse_ms, "print", print_ms);
		if (st.io_failed)
			status = 2;
		if (o.verify_diags)
			vbad += diag_verify(&d, ch[c].line, ch[c].lastline);
		else if (d.nerr > nerr0 && status == 0)
			status = 1;
		aicm_set_bug_hook(NULL, NULL);
		ir_graph_free(g);
		free(st.ir);
		if (d.stopped)
			break;          /* past --error-limit: no more chunks either */
	}
	if (o.ci.output)
		fclose(os);
	/* stages that the last chunk did not reach (a pass failed) */
	if (!cli_stages_commit(&stages))
		status = 2;
	cli_stages_free(&stages);
	if (o.verify_diags && vbad && status == 0)
		status = 1;
	{
		int rc = cli_report_close(&rep, status == 0);

		if (rc > status)
			status = rc;
	}
	if (status == 0 && o.ci.output && header.n) {
		/* --emit=c: model.h beside model.c, both whole or neither */
		size_t n = strlen(o.ci.output);
		char *hp = xmalloc(n + 3);

		memcpy(hp, o.ci.output, n + 1);
		if (n > 2 && !strcmp(hp + n - 2, ".c"))
			hp[n - 2] = '\0';
		strcat(hp, ".h");
		if (aicm_write_file(hp, header.s, header.n) != 0) {
			fprintf(stderr, "%s: error: cannot write '%s': %s\n", cli_tool, hp,
			    strerror(errno));
			status = 2;
		} else if (aicm_write_file(o.ci.output, out, outlen) != 0) {
			fprintf(stderr, "%s: error: cannot write '%s': %s\n", cli_tool, o.ci.output,
			    strerror(errno));
			unlink(hp);
			status = 2;
		}
		free(hp);
	} else if (status == 0 && o.ci.output) {
		if (aicm_write_file(o.ci.output, out, outlen) != 0) {
			fprintf(stderr, "%s: error: cannot write '%s': %s\n", cli_tool, o.ci.output,
			    strerror(errno));
			status = 2;
		}
	} else if (!o.ci.output && cli_flush_stdout() != 0) {
		status = 2;
	}
	if (!o.verify_diags && d.nerr) {
		int n = d.stopped ? d.nshown : d.nerr;   /* as clang, the errors shown */

		fprintf(stderr, "%s: %d error%s\n", cli_tool, n, n == 1 ? "" : "s");
	}
	free(out);
	free(header.s);
	free(ch);
	diag_free(&d);
	free(buf);
	free(datadir);
	pass_free_pipeline(&pl);
	cli_inspect_free(&o.ci);
	report_tunes_free(&tunes);
	report_stats_free(&stats);
	report_stats_free(&eager);
	return status;
}
