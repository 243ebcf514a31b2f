/*
 * html.h: the one-page HTML report of a compile (DESIGN section 15).
 *
 * aicm-opt and aicm-run hand html_page_write what the pipeline left
 * behind: the IR text of every stage, the passes' text report, the final
 * graph and, when there are run data, the KernelStats.  The page draws the
 * rest itself (the line diff of consecutive stages, html_diff.c; the
 * graph through Graphviz's dot, html_dot.c) or with report.h's pictures
 * (the autotune heat map, the tile grid, traffic bars and the roofline).
 * The page is self-contained: inline CSS and SVG, no script, no URL.
 */
#ifndef AICM_HTML_H
#define AICM_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "diag.h"
#include "ir.h"
#include "report.h"
#include "tile_exec.h"

/* ---- html_diff.c ------------------------------------------------------ */

typedef enum HtmlDiffOp { HD_SAME, HD_ADD, HD_DEL } HtmlDiffOp;

typedef struct HtmlDiffLine {
	HtmlDiffOp op;
	const char *s;               /* into a (HD_DEL) or b; not NUL-ended */
	size_t len;                  /* without the newline */
} HtmlDiffLine;

/* The lines of text b against those of text a, in b's order: each line of
 * b, kept (HD_SAME) or added (HD_ADD), and each line of a that b lacks
 * (HD_DEL) where it stood, a change's deletions before its additions.
 * A shortest edit script (Myers); when the texts differ by more than
 * HTML_DIFF_MAX_EDITS lines, what lies between their common first and
 * last lines is shown as deleted and added whole.  Returns the count;
 * *out is malloc'd. */
#define HTML_DIFF_MAX_EDITS 4096
int html_diff(const char *a, const char *b, HtmlDiffLine **out);

/* ---- html_dot.c ------------------------------------------------------- */

/* Runs Graphviz's 'dot -Tsvg' (found on PATH, started with no shell; the
 * environment variable AICM_DOT names another program) on the text dot; returns the SVG (malloc'd), or NULL with a reason in why
 * (no 'dot' on PATH, it failed, it said nothing). */
char *html_dot_svg(const char *dot, char *why, size_t whylen);

/* Writes svg into f as an inline <svg> element of an HTML page: whatever
 * stands before '<svg' (the XML prolog, a DOCTYPE, comments) is dropped,
 * and so are the root's xmlns declarations, which HTML does not need and
 * whose namespace URLs would read like references. */
void html_inline_svg(FILE *f, const char *svg);

/* ---- html.c ----------------------------------------------------------- */

/* dot takes seconds for a few thousand lines and minutes beyond: a graph
 * whose --emit=dot text is longer is not drawn (the page says so). */
#define HTML_DOT_MAX_LINES 4000

typedef struct HtmlPage {
	const char *tool;            /* "aicm-opt", "aicm-run" */
	int argc;                    /* the command line, as given */
	char **argv;
	const char *input;           /* the input file, "-" for stdin */
	const char *pipeline;        /* as given, or NULL */
	int nstages;                 /* 0 the input, then one per pass */
	const char *const *stage_label;   /* "shape-infer", "lower-tiled (implicit)" */
	const char *const *stage_ir;      /* each stage's IR text; NULL: not reached */
	const char *pass_report;     /* the passes' text report, or NULL */
	const Graph *g;              /* the graph after the last stage */
	const ReportTunes *tunes;    /* autotune's tables, or NULL */
	const ReportStats *run;      /* run data, or NULL */
	const ReportStats *eager;    /* the same graph run op by op, or NULL */
	const ReportPeak *peak;      /* the roofline's machine (with run) */
	const char *stats_from;      /* where the run data came from */
	const char *no_stats_why;    /* without run data: how to get them */
} HtmlPage;

/* Writes the page; warnings (no dot) to warn as "TOOL: warning: ...". */
void html_page_write(FILE *f, const HtmlPage *p, FILE *warn);

/* Writes s with &, <, >, " and ' escaped. */
void html_escape(FILE *f, const char *s, size_t n);

#endif
