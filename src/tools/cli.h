/*
 * cli.h: the command-line layer both tools share.
 *
 * aicm-opt and aicm-run read options the same way ("--name=value" or
 * "--name value") and treat a wrong command line and an output that cannot
 * be written the same way: one "TOOL: error: ..." line and exit 2 (DESIGN
 * §4).  Each tool's main file defines cli_tool, the name those lines start
 * with.  Like measure.c this layer is linked into both tools, never into
 * libaicm.a.
 */
#ifndef AICM_CLI_H
#define AICM_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "diag.h"
#include "pass.h"
#include "report.h"
#include "tile_exec.h"

/* Defined by each tool: "aicm-opt", "aicm-run". */
extern const char *const cli_tool;

/* Prints "TOOL: error: MSG" and a pointer to --help to stderr; exits 2. */
_Noreturn void cli_usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Matches argv[*i] against "--name=value" or "--name value" (then *i moves
 * to the value); returns the value, or NULL when argv[*i] is another
 * option.  "--name" as the last argument is a usage error. */
const char *cli_optval(int argc, char **argv, int *i, const char *name);
/* cli_optval for an option naming a file: an empty value is a usage error. */
const char *cli_optfile(int argc, char **argv, int *i, const char *name);

/* An integer option's value in lo..hi; anything else is a usage error
 * naming opt. */
long long cli_parse_int(const char *opt, const char *s, long long lo, long long hi);

/* A flop count (--max-work): a number such as 1e12, 2.5T or 1500 with an
 * optional k, M, G, T or P (powers of 1000, as GFLOP counts are), a whole
 * count below 2^63; anything else is a usage error naming opt. */
long long cli_parse_flops(const char *opt, const char *s);

/* The data directory of const file= paths: dir (--data-dir) when given,
 * else the folder of input ("." for "-", stdin).  Malloc'd. */
char *cli_data_dir(const char *dir, const char *input);

/* Flushes stdout; 0, or 2 after "TOOL: error: cannot write the output:
 * REASON" (a full disk, a closed pipe). */
int cli_flush_stdout(void);

/* "unknown option 'A'" with the closest of tool_flags (NULL-terminated)
 * and the shared inspection flags as a "did you mean"; exits 2. */
_Noreturn void cli_unknown_option(const char *a, const char *const *tool_flags);

/* ---- the inspection options both tools take (DESIGN §5, §15) -------- */

enum { CLI_REPORT_OFF, CLI_REPORT_TEXT, CLI_REPORT_JSON, CLI_REPORT_HTML };

typedef struct CliInspect {
	const char *pipeline;        /* --pass, --passes, --pass-pipeline */
	char *pipeline_buf;          /* --pass-pipeline=builtin.module(...) unwrapped */
	const char *output;          /* -o */
	const char *print_before, *print_after;
	bool print_before_all, print_after_all, print_after_change;
	const char *dump_dir;
	bool dump_pipeline;          /* to stderr, as mlir-opt */
	bool timing;
	int report;                  /* CLI_REPORT_* */
	const char *report_file;     /* --report-file: whole or not at all */
} CliInspect;

/* Takes argv[*i] when it is one of the options above, also in mlir-opt's
 * spellings (--dump-pass-pipeline, --mlir-timing,
 * --mlir-print-ir-after-all, --pass-pipeline=builtin.module(...)); true
 * if it did.  A bad value is a usage error. */
bool cli_inspect_arg(int argc, char **argv, int *i, CliInspect *ci);
/* After the command line: --print-ir-before/after name passes of reg. */
void cli_inspect_check(const CliInspect *ci, const Pass *const *reg);
void cli_inspect_free(CliInspect *ci);

struct CliStages;

/* Where the passes' reports go: stderr, or memory for --report-file. */
typedef struct CliReport {
	FILE *f;                     /* NULL when --report is off */
	char *buf;
	size_t len;
	const char *file;
	bool html, page;             /* --report=html; its page is built */
} CliReport;
void cli_report_open(CliReport *r, const CliInspect *ci);
/* Writes --report-file when write (whole), frees; 0, or 2 after a message. */
int cli_report_close(CliReport *r, bool write);
/* --report=html: turns what the passes reported so far into the page
 * (src/report/html.h) for graph g after stages s, with run data run from
 * stats_from (and eager's beside them, may be NULL) on machine peak (NULL:
 * the cpu target), or none (run NULL) and no_stats_why saying how to get
 * them; cli_report_close then writes it.  No-op for the other forms. */
void cli_report_html(CliReport *r, const struct CliStages *s, int argc, char **argv,
    const char *input, const Graph *g, const ReportStats *run, const ReportStats *eager,
    const ReportPeak *peak, const char *stats_from, const char *no_stats_why);

/* The stages of a run: 0 the input, then one per pass (aicm-run adds the
 * passes it runs on its own, labelled "(implicit)").  Printing around
 * passes, per-stage timing and --dump-dir's files NN-NAME.aicm, kept open
 * across --split-input-file chunks and committed whole at the end. */
typedef struct CliStages {
	const CliInspect *ci;
	const Pass *const *reg;
	int n;
	const char **name;           /* "input" or the pass's name: files, matching */
	char **label;                /* what --print-ir-* and --timing say */
	double *ms;
	AicmOut *out;
	bool *written;
	char *before;                /* for --print-ir-after-change */
	char **ir;                   /* --report=html: each stage's IR, or NULL */
	ReportTunes tunes;           /* --report=html: autotune's tables */
	bool made, failed, last_chunk;
} CliStages;

void cli_stages_init(CliStages *s, const CliInspect *ci, const Pass *const *reg, int n);
/* Names stage idx (name must outlive s); implicit adds " (implicit)". */
void cli_stage_name(CliStages *s, int idx, const char *name, bool implicit);
void cli_stage_dump(CliStages *s, int idx, const Graph *g);
void cli_stage_before(CliStages *s, int idx, const Graph *g);
/* After pass pi made g (stage idx): printing, dumping; under
 * --report=html the IR is kept, and autotune's tables when pi is autotune. */
void cli_stage_after(CliStages *s, int idx, const PassInst *pi, const Graph *g, double ms);
/* Commits the open stage files and removes the stage files an earlier run
 * left in --dump-dir (exactly NN-input.aicm and NN-PASS.aicm, PASS one of
 * reg's, that this run did not write); false after a message. */
bool cli_stages_commit(CliStages *s);
void cli_stages_free(CliStages *s);
/* --timing, to stderr: parse, every named stage, then last (e.g. "print"). */
void cli_stages_timing(const CliStages *s, double parse_ms, const char *last, double last_ms);

#endif
