/*
 * cli.c: the option reading and command-line errors aicm-opt and aicm-run
 * share (cli.h).  What both tools say about a wrong command line is written
 * once here, so that the two cannot drift apart: the goldens under
 * testdata/opt and testdata/run hold every message.
 *
 * The inspection options (--pass, -o, --print-ir-*, --dump-dir,
 * --dump-pipeline, --timing, --report) live here too, with the stage hooks
 * that serve them: aicm-run runs a pipeline as aicm-opt does, so it takes
 * the same options with the same meaning (DESIGN §15), and one copy of the
 * code keeps them the same.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "diag.h"
#include "html.h"
#include "tile.h"

_Noreturn void
cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: error: ", cli_tool);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see '%s --help')\n", cli_tool);
	exit(2);
}

const char *
cli_optval(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] == '\0') {
		if (*i + 1 >= argc)
			cli_usage_error("option '%s' needs a value", name);
		return argv[++*i];
	}
	return NULL;
}

const char *
cli_optfile(int argc, char **argv, int *i, const char *name)
{
	const char *v = cli_optval(argc, argv, i, name);

	if (v && !*v)
		cli_usage_error("%s needs a file name", name);
	return v;
}

long long
cli_parse_int(const char *opt, const char *s, long long lo, long long hi)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno || v < lo || v > hi)
		cli_usage_error("%s wants an integer from %lld to %lld, not '%s'", opt, lo, hi, s);
	return v;
}

long long
cli_parse_flops(const char *opt, const char *s)
{
	static const struct { char suf; double mul; } sufs[] = {
		{'k', 1e3}, {'M', 1e6}, {'G', 1e9}, {'T', 1e12}, {'P', 1e15},
	};
	size_t n = strspn(s, "0123456789.eE+-");
	char num[64], *end;
	double v, mul = 1;

	/* strtod alone would also take "inf", "0x1p40" and leading blanks */
	if (*s < '0' || *s > '9' || n >= sizeof num)
		goto bad;
	memcpy(num, s, n);
	num[n] = '\0';
	v = strtod(num, &end);
	if (*end != '\0')
		goto bad;
	if (s[n] != '\0') {
		size_t k = 0;

		while (k < sizeof sufs / sizeof sufs[0] && sufs[k].suf != s[n])
			k++;
		if (k == sizeof sufs / sizeof sufs[0] || s[n + 1] != '\0')
			goto bad;
		mul = sufs[k].mul;
	}
	v *= mul;
	if (!(v < 9.2e18))
		cli_usage_error("%s=%s is more than 2^63 flops", opt, s);
	if (v != (double)(long long)v)
		cli_usage_error("%s wants a whole number of flops, not '%s'", opt, s);
	return (long long)v;
bad:
	cli_usage_error("%s wants a flop count such as 1e12, 500G or 2T, not '%s'", opt, s);
}

int
cli_flush_stdout(void)
{
	if (fflush(stdout) == 0)
		return 0;
	fprintf(stderr, "%s: error: cannot write the output: %s\n", cli_tool, strerror(errno));
	return 2;
}

char *
cli_data_dir(const char *dir, const char *input)
{
	return dir ? xstrdup(dir) : aicm_dir_of(input);
}

/* ---- did you mean ----------------------------------------------------- */

static const char *const inspect_flags[] = {
	"--pass", "--passes", "--pass-pipeline", "-o", "--print-ir-before", "--print-ir-after",
	"--print-ir-before-all", "--print-ir-after-all", "--print-ir-after-change",
	"--mlir-print-ir-before-all", "--mlir-print-ir-after-all",
	"--mlir-print-ir-after-change", "--dump-dir", "--dump-pipeline", "--dump-pass-pipeline",
	"--timing", "--mlir-timing", "--report", "--report-file", "--help", "--version", NULL,
};

_Noreturn void
cli_unknown_option(const char *a, const char *const *tool_flags)
{
	const char *names[128], *eq = strchr(a, '='), *alt;
	char key[64];
	int n = 0;

	snprintf(key, sizeof key, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
	for (int k = 0; inspect_flags[k] && n < 128; k++)
		names[n++] = inspect_flags[k];
	for (int k = 0; tool_flags && tool_flags[k] && n < 128; k++)
		names[n++] = tool_flags[k];
	alt = ir_suggest(key, names, n);
	if (alt)
		cli_usage_error("unknown option '%s'; did you mean '%s'?", key, alt);
	cli_usage_error("unknown option '%s'", a);
}

/* ---- the inspection options ------------------------------------------ */

/* mlir-opt's --pass-pipeline='builtin.module(a,b)': the passes inside. */
static const char *
unwrap_module(CliInspect *ci, const char *v)
{
	static const char pre[] = "builtin.module(";
	size_t n = strlen(v), p = sizeof pre - 1;

	if (strncmp(v, pre, p) != 0)
		return v;
	if (n == p || v[n - 1] != ')')
		cli_usage_error("--pass-pipeline '%s': expected ')' to close 'builtin.module('", v);
	free(ci->pipeline_buf);
	ci->pipeline_buf = xmalloc(n - p);
	memcpy(ci->pipeline_buf, v + p, n - p - 1);
	ci->pipeline_buf[n - p - 1] = '\0';
	return ci->pipeline_buf;
}

static bool
set_report(CliInspect *ci, const char *a)
{
	if (!strcmp(a, "--report") || !strcmp(a, "--report=text"))
		ci->report = CLI_REPORT_TEXT;
	else if (!strcmp(a, "--report=json"))
		ci->report = CLI_REPORT_JSON;
	else if (!strcmp(a, "--report=html"))
		ci->report = CLI_REPORT_HTML;
	else if (!strncmp(a, "--report=", 9))
		cli_usage_error("--report takes text, json, html or nothing, not '%s'", a + 9);
	else
		return false;
	return true;
}

bool
cli_inspect_arg(int argc, char **argv, int *i, CliInspect *ci)
{
	const char *a = argv[*i], *v;

	if ((v = cli_optval(argc, argv, i, "--pass")) ||
	    (v = cli_optval(argc, argv, i, "--passes")) ||
	    (v = cli_optval(argc, argv, i, "--pass-pipeline"))) {
		ci->pipeline = unwrap_module(ci, v);
	} else if (!strcmp(a, "-o")) {
		if (*i + 1 >= argc)
			cli_usage_error("option '%s' needs a value", a);
		ci->output = argv[++*i];
	} else if ((v = cli_optval(argc, argv, i, "--print-ir-before"))) {
		ci->print_before = v;
	} else if ((v = cli_optval(argc, argv, i, "--print-ir-after"))) {
		ci->print_after = v;
	} else if (!strcmp(a, "--print-ir-before-all") || !strcmp(a, "--mlir-print-ir-before-all")) {
		ci->print_before_all = true;
	} else if (!strcmp(a, "--print-ir-after-all") || !strcmp(a, "--mlir-print-ir-after-all")) {
		ci->print_after_all = true;
	} else if (!strcmp(a, "--print-ir-after-change") ||
	    !strcmp(a, "--mlir-print-ir-after-change")) {
		ci->print_after_change = true;
	} else if ((v = cli_optval(argc, argv, i, "--dump-dir"))) {
		if (!*v)
			cli_usage_error("--dump-dir needs a folder name");
		ci->dump_dir = v;
	} else if (!strcmp(a, "--dump-pipeline") || !strcmp(a, "--dump-pass-pipeline")) {
		ci->dump_pipeline = true;
	} else if (!strcmp(a, "--timing") || !strcmp(a, "--mlir-timing")) {
		ci->timing = true;
	} else if ((v = cli_optfile(argc, argv, i, "--report-file"))) {
		ci->report_file = v;
	} else {
		return set_report(ci, a);
	}
	return true;
}

void
cli_inspect_check(const CliInspect *ci, const Pass *const *reg)
{
	/* A misspelt pass name would otherwise print nothing, silently. */
	const char *const which[2] = {"--print-ir-before", "--print-ir-after"};
	const char *const names[2] = {ci->print_before, ci->print_after};

	for (int k = 0; k < 2; k++) {
		const char *alt;

		if (!names[k] || pass_lookup(reg, names[k]))
			continue;
		if ((alt = pass_suggest(reg, names[k])))
			cli_usage_error("%s: unknown pass '%s'; did you mean '%s'?", which[k],
			    names[k], alt);
		cli_usage_error("%s: unknown pass '%s' (--list-passes lists them)", which[k],
		    names[k]);
	}
	if (ci->report_file && ci->report == CLI_REPORT_OFF)
		cli_usage_error("--report-file=%s needs --report[=text|json|html] to say what to "
		    "write", ci->report_file);
	/* a page of several hundred lines of HTML is no use on a terminal */
	if (ci->report == CLI_REPORT_HTML && !ci->report_file)
		cli_usage_error("--report=html needs --report-file=F: the page is written to a "
		    "file, not to stderr");
}

void
cli_inspect_free(CliInspect *ci)
{
	free(ci->pipeline_buf);
	ci->pipeline_buf = NULL;
}

void
cli_report_open(CliReport *r, const CliInspect *ci)
{
	memset(r, 0, sizeof *r);
	if (ci->report == CLI_REPORT_OFF)
		return;
	r->file = ci->report_file;
	/* html: the passes' text report is kept for the page, which
	 * cli_report_html builds in its place */
	r->html = ci->report == CLI_REPORT_HTML;
	r->f = r->file ? open_memstream(&r->buf, &r->len) : stderr;
	if (!r->f)
		AICM_BUG("open_memstream failed");
}

int
cli_report_close(CliReport *r, bool write)
{
	int status = 0;

	if (!r->file)
		return 0;
	fclose(r->f);
	if (write && r->html && !r->page)
		AICM_BUG("--report=html: the run succeeded but no page was built");
	if (write && aicm_write_file(r->file, r->buf, r->len) != 0) {
		fprintf(stderr, "%s: error: cannot write '%s': %s\n", cli_tool, r->file,
		    strerror(errno));
		status = 2;
	}
	free(r->buf);
	memset(r, 0, sizeof *r);
	return status;
}

/* The roofline's machine: the cpu target of the cost model (passes/cost.c:
 * this machine as the native engine sees it, bench/calibrate.py's fit on
 * that engine: its effective rates, not peak.c's roofs), for the element
 * type most of g's lowered kernels have. */
static void
page_peak(const Graph *g, ReportPeak *pk)
{
	int f32 = 0, n = 0;
	char why[256];

	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].tile) {
			n++;
			f32 += g->nodes[i].tile->dt == DT_F32;
		}
	if (report_peak_parse("cpu", 2 * f32 > n, pk, why, sizeof why) != 0)
		AICM_BUG("the cpu target's peaks: %s", why);
}

void
cli_report_html(CliReport *r, const CliStages *s, int argc, char **argv, const char *input,
    const Graph *g, const ReportStats *run, const ReportStats *eager, const ReportPeak *peak,
    const char *stats_from, const char *no_stats_why)
{
	ReportPeak pk;
	HtmlPage p = {cli_tool, argc, argv, input, s->ci->pipeline, s->n,
	    (const char *const *)s->label, (const char *const *)s->ir, NULL, g, &s->tunes, run,
	    eager, peak, stats_from, no_stats_why};
	char *text;

	if (!r->html || !r->file)
		return;
	if (!peak) {
		page_peak(g, &pk);
		p.peak = &pk;
	}
	if (fclose(r->f) != 0)
		AICM_BUG("fclose of a memory stream failed");
	text = r->buf;
	p.pass_report = text;
	r->buf = NULL;
	r->len = 0;
	if (!(r->f = open_memstream(&r->buf, &r->len)))
		AICM_BUG("open_memstream failed");
	/* stderr is buffered (the tools' setvbuf): warnings come in order */
	html_page_write(r->f, &p, stderr);
	r->page = true;
	free(text);
}

/* ---- stages ----------------------------------------------------------- */

void
cli_stages_init(CliStages *s, const CliInspect *ci, const Pass *const *reg, int n)
{
	memset(s, 0, sizeof *s);
	s->ci = ci;
	s->reg = reg;
	s->n = n;
	s->name = xcalloc((size_t)n + 1, sizeof *s->name);
	s->label = xcalloc((size_t)n + 1, sizeof *s->label);
	s->ms = xcalloc((size_t)n + 1, sizeof *s->ms);
	s->out = xcalloc((size_t)n + 1, sizeof *s->out);
	s->written = xcalloc((size_t)n + 1, sizeof *s->written);
	if (ci->report == CLI_REPORT_HTML)
		s->ir = xcalloc((size_t)n + 1, sizeof *s->ir);
	cli_stage_name(s, 0, "input", false);
}

void
cli_stage_name(CliStages *s, int idx, const char *name, bool implicit)
{
	size_t n = strlen(name) + 16;

	if (idx < 0 || idx >= s->n)
		AICM_BUG("stage %d of %d", idx, s->n);
	s->name[idx] = name;
	free(s->label[idx]);
	s->label[idx] = xmalloc(n);
	snprintf(s->label[idx], n, "%s%s", name, implicit ? " (implicit)" : "");
}

static void
dump_failed(CliStages *s, const char *what, const char *path)
{
	fprintf(stderr, "%s: error: cannot %s '%s': %s\n", cli_tool, what, path, strerror(errno));
	s->failed = true;
}

void
cli_stage_dump(CliStages *s, int idx, const Graph *g)
{
	const char *dir = s->ci->dump_dir;
	AicmOut *out;

	if (s->ir && idx < s->n) {
		free(s->ir[idx]);
		s->ir[idx] = ir_print_str(g, NULL);
	}
	if (!dir || s->failed || idx >= s->n)
		return;                 /* one message, not one per stage */
	if (!s->made) {
		if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
			dump_failed(s, "create", dir);
			return;
		}
		s->made = true;
	}
	out = &s->out[idx];
	if (!out->f) {
		size_t n = strlen(dir) + strlen(s->name[idx]) + 32;
		char *path = xmalloc(n);
		int r;

		snprintf(path, n, "%s/%02d-%s.aicm", dir, idx, s->name[idx]);
		r = aicm_out_open(out, path, 0);
		if (r != 0)
			dump_failed(s, "write", path);
		free(path);
		if (r != 0)
			return;
		s->written[idx] = true;
	} else {
		fprintf(out->f, "// -----\n");
	}
	ir_print(out->f, g);
	if (s->last_chunk) {
		char *path = xstrdup(out->target);

		if (aicm_out_commit(out) != 0)
			dump_failed(s, "write", path);
		free(path);
	}
}

void
cli_stage_before(CliStages *s, int idx, const Graph *g)
{
	const CliInspect *ci = s->ci;

	if (ci->print_before_all || (ci->print_before && !strcmp(ci->print_before, s->name[idx]))) {
		fprintf(stderr, "// ----- IR before %s -----\n", s->label[idx]);
		ir_print(stderr, g);
	}
	if (ci->print_after_change) {
		free(s->before);
		s->before = ir_print_str(g, NULL);
	}
}

void
cli_stage_after(CliStages *s, int idx, const PassInst *pi, const Graph *g, double ms)
{
	const CliInspect *ci = s->ci;
	bool show = ci->print_after_all || (ci->print_after && !strcmp(ci->print_after, s->name[idx]));

	s->ms[idx] = ms;
	if (s->ir && !strcmp(pi->pass->name, "autotune"))
		report_tunes_collect(&s->tunes, g, pi);
	if (!show && ci->print_after_change) {
		char *now = ir_print_str(g, NULL);

		show = !s->before || strcmp(now, s->before) != 0;
		free(now);
	}
	if (show) {
		fprintf(stderr, "// ----- IR after %s -----\n", s->label[idx]);
		ir_print(stderr, g);
	}
	cli_stage_dump(s, idx, g);
}

/* Whether f is a stage file aicm writes: exactly NN-input.aicm or
 * NN-PASS.aicm with PASS a pass of reg; nothing else is touched. */
static bool
stage_file(const CliStages *s, const char *f)
{
	size_t n = strlen(f);
	char name[128];

	if (n < 9 || f[0] < '0' || f[0] > '9' || f[1] < '0' || f[1] > '9' || f[2] != '-' ||
	    strcmp(f + n - 5, ".aicm") != 0 || n - 8 >= sizeof name)
		return false;
	memcpy(name, f + 3, n - 8);
	name[n - 8] = '\0';
	return !strcmp(name, "input") || pass_lookup(s->reg, name);
}

/* Removes the stage files of an earlier run that this one did not write,
 * so that the folder shows this run alone. */
static bool
clear_stale(CliStages *s)
{
	const char *dir = s->ci->dump_dir;
	DIR *d = opendir(dir);
	struct dirent *e;
	bool ok = true;

	if (!d)
		return errno == ENOENT;  /* nothing written, nothing to clear */
	while ((e = readdir(d))) {
		bool ours = false;
		char *path;
		size_t n;

		if (!stage_file(s, e->d_name))
			continue;
		for (int k = 0; k < s->n && !ours; k++) {
			char mine[160];

			if (!s->written[k])
				continue;
			snprintf(mine, sizeof mine, "%02d-%s.aicm", k, s->name[k]);
			ours = !strcmp(mine, e->d_name);
		}
		if (ours)
			continue;
		n = strlen(dir) + strlen(e->d_name) + 2;
		path = xmalloc(n);
		snprintf(path, n, "%s/%s", dir, e->d_name);
		if (unlink(path) != 0) {
			fprintf(stderr, "%s: error: cannot remove the earlier stage '%s': %s\n",
			    cli_tool, path, strerror(errno));
			ok = false;
		}
		free(path);
	}
	closedir(d);
	return ok;
}

bool
cli_stages_commit(CliStages *s)
{
	bool ok = !s->failed;

	for (int i = 0; i < s->n; i++) {
		char *path;

		if (!s->out[i].f)
			continue;
		path = xstrdup(s->out[i].target);
		if (aicm_out_commit(&s->out[i]) != 0) {
			fprintf(stderr, "%s: error: cannot write '%s': %s\n", cli_tool, path,
			    strerror(errno));
			ok = false;
		}
		free(path);
	}
	if (s->ci->dump_dir && !clear_stale(s))
		ok = false;
	return ok;
}

void
cli_stages_free(CliStages *s)
{
	for (int i = 0; i < s->n; i++) {
		if (s->out[i].f)
			aicm_out_abort(&s->out[i]);
		free(s->label[i]);
		if (s->ir)
			free(s->ir[i]);
	}
	free(s->ir);
	report_tunes_free(&s->tunes);
	free(s->name);
	free(s->label);
	free(s->ms);
	free(s->out);
	free(s->written);
	free(s->before);
	memset(s, 0, sizeof *s);
}

void
cli_stages_timing(const CliStages *s, double parse_ms, const char *last, double last_ms)
{
	double total = parse_ms + last_ms;

	fprintf(stderr, "%s: timing (wall, ms)\n", cli_tool);
	fprintf(stderr, "  %-24s %10.3f\n", "parse+verify", parse_ms);
	for (int i = 1; i < s->n; i++) {
		if (!s->name[i])
			continue;
		fprintf(stderr, "  %-24s %10.3f\n", s->label[i], s->ms[i]);
		total += s->ms[i];
	}
	fprintf(stderr, "  %-24s %10.3f\n", last, last_ms);
	fprintf(stderr, "  %-24s %10.3f\n", "total", total);
}
