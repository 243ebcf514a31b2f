/*
 * html.c: the one-page report of a compile (DESIGN section 15, html.h).
 *
 * One self-contained HTML file that a reader opens from disk: a header
 * saying what ran (command line, input, pipeline, the build), a table of
 * contents, and one section per question a reader asks of a compile:
 * what did each pass do to the IR (the stages side by side, the lines each
 * pass changed marked against the stage before), what does the program
 * look like (the graph drawn by Graphviz), what became of each kernel
 * (its shape and tiling, autotune's choice, its tile grid), and, when
 * there are run data, where the bytes and flops went.  The passes' own
 * text report closes the page.
 *
 * The page carries no script, no external stylesheet, font or image and
 * no URL: CSS in one <style>, pictures as inline SVG.  It holds no date
 * nor host name either, so that two runs of the same command give the
 * same page and tests can compare its structure.  Every section and every
 * kernel has an id (the ids tests/browser.sh looks for): "ir", "graph",
 * "kernels", "run", "reports"; "stage-N"; "kernel-NAME".
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "tile.h"

void
html_escape(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(s[i], f);
		}
	}
}

static void
esc(FILE *f, const char *s)
{
	html_escape(f, s, strlen(s));
}

/* An id for an anchor: letters, digits, '-', '_' and '.' kept, anything
 * else as '_XX' (HTML ids may hold more, URL fragments should not). */
static void
put_id(FILE *f, const char *prefix, const char *name)
{
	fputs(prefix, f);
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.')
			fputc(*p, f);
		else
			fprintf(f, "_%02x", *p);
}

/* Bytes as aicm-run's statistics print them: 1 KB = 1000 B (DESIGN
 * section 7). */
static void
put_bytes(FILE *f, int64_t b)
{
	char buf[32];

	exec_tile_fmt_bytes(buf, sizeof buf, b);
	fputs(buf, f);
}

static const char style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1400px;padding:0 1em 3em;"
    "color:#222}\n"
    "h1{font-size:1.6em;margin:.8em 0 .3em}h2{border-bottom:2px solid #ccd;padding-bottom:.2em;"
    "margin-top:2em}\n"
    "code,pre{font:12px/1.35 ui-monospace,monospace}\n"
    "table.meta th{text-align:left;padding-right:1em;vertical-align:top;color:#555}\n"
    "table.data{border-collapse:collapse;margin:.5em 0}\n"
    "table.data th,table.data td{border:1px solid #ccd;padding:.15em .5em;text-align:right}\n"
    "table.data th:first-child,table.data td:first-child{text-align:left}\n"
    "table.data thead th{background:#eef}\n"
    "nav ol ol{columns:3;max-width:60em}\n"
    ".stages{display:flex;gap:.8em;overflow-x:auto;align-items:flex-start;padding-bottom:.5em}\n"
    ".stage{flex:0 0 auto;min-width:22em;max-width:48em;border:1px solid #ccd;border-radius:4px;"
    "background:#fafafe}\n"
    ".stage h3{margin:0;padding:.3em .6em;font-size:1em;background:#eef;border-bottom:1px "
    "solid #ccd}\n"
    ".stage .sum{font-weight:normal;color:#555;font-size:.9em}\n"
    ".stage pre{margin:0;padding:.4em 0;max-height:70vh;overflow:auto}\n"
    ".stage pre span{display:block;padding:0 .6em 0 1.6em;text-indent:-1em;white-space:pre}\n"
    ".stage pre .add{background:#dfd}\n"
    ".stage pre .del{background:#fdd;color:#844;text-decoration:line-through}\n"
    ".figure{overflow-x:auto;border:1px solid #ddd;padding:.5em;margin:.5em 0;background:#fff}\n"
    ".figure svg{max-width:none;height:auto}\n"
    ".kernel{border-top:1px solid #ccd;padding-top:.5em;margin-top:1em}\n"
    ".kernel h3{margin:.3em 0}\n"
    ".note{background:#fff8dc;border-left:4px solid #e0b000;padding:.4em .8em}\n"
    "pre.report{background:#f6f6f6;padding:.6em;overflow-x:auto}\n"
    "table.tune tr.chosen td{background:#ffe9a8;font-weight:bold}\n"
    "figcaption{color:#555;font-size:.9em;margin-top:.3em}\n";

/* A picture of report.h, drawn into memory and inlined in a figure with
 * id ID (class cls) and a caption. */
#define FIGURE(f, cls, idpre, idname, caption, call)                          \
	do {                                                                  \
		char *svg_ = NULL;                                            \
		size_t n_ = 0;                                                \
		FILE *m_ = open_memstream(&svg_, &n_);                        \
		if (!m_)                                                      \
			AICM_BUG("open_memstream failed");                    \
		call;                                                         \
		fclose(m_);                                                   \
		fprintf(f, "<figure class=\"figure %s\" id=\"", cls);        \
		put_id(f, idpre, idname);                                     \
		fputs("\">\n", f);                                             \
		html_inline_svg(f, svg_);                                     \
		fputs("<figcaption>", f);                                     \
		fputs(caption, f);                                            \
		fputs("</figcaption>\n</figure>\n", f);                        \
		free(svg_);                                                   \
	} while (0)

/* ---- the header ------------------------------------------------------ */

/* A word of the command line, quoted for sh when it needs to be, then
 * escaped for HTML. */
static void
put_word(FILE *f, const char *w)
{
	StrBuf q = {0};

	strbuf_shell_word(&q, w, true);
	esc(f, q.s);
	free(q.s);
}

static void
header(FILE *f, const HtmlPage *p)
{
	fputs("<header id=\"top\">\n<h1>aicm report: ", f);
	esc(f, strcmp(p->input, "-") ? p->input : "<stdin>");
	fputs("</h1>\n<table class=\"meta\">\n<tr><th>command</th><td><code>", f);
	for (int i = 0; i < p->argc; i++) {
		if (i)
			fputc(' ', f);
		put_word(f, i == 0 ? p->tool : p->argv[i]);
	}
	fputs("</code></td></tr>\n<tr><th>input</th><td><code>", f);
	esc(f, strcmp(p->input, "-") ? p->input : "<stdin>");
	fputs("</code></td></tr>\n<tr><th>pipeline</th><td>", f);
	for (int i = 1, n = 0; i < p->nstages; i++) {
		if (!p->stage_label[i])
			continue;
		fputs(n++ ? " &rarr; " : "", f);
		fputs("<code>", f);
		esc(f, p->stage_label[i]);
		fputs("</code>", f);
	}
	if (p->nstages <= 1)
		fputs("none (the input as parsed)", f);
	if (p->pipeline) {
		fputs(" <span class=\"sum\">(--pass=<code>", f);
		esc(f, p->pipeline);
		fputs("</code>)</span>", f);
	}
	fprintf(f, "</td></tr>\n<tr><th>build</th><td>aicm %s, %s</td></tr>\n", AICM_VERSION,
	    p->tool);
	fputs("</table>\n</header>\n", f);
}

/* ---- the table of contents ------------------------------------------- */

static int
nkernels(const Graph *g)
{
	int n = g->nkernels;

	for (int i = 0; i < g->nnodes; i++)
		n += g->nodes[i].tile != NULL;
	return n;
}

/* A kernel of the page: an unlowered one (kn) or a tiled node's body (tf). */
typedef struct KRef {
	const char *name;
	KernelKind kind;
	const TileFn *tf;
	const Kernel *kn;
} KRef;

/* Kernel k of g: the unlowered ones first, then the tiled nodes in node
 * order (a graph holds both when a pipeline lowers part). */
static KRef
kernel_at(const Graph *g, int k)
{
	if (k < g->nkernels)
		return (KRef){g->kernels[k].name, g->kernels[k].kind, NULL, &g->kernels[k]};
	k -= g->nkernels;
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].tile && k-- == 0) {
			const TileFn *tf = g->nodes[i].tile;

			return (KRef){tf->name, tf->kind, tf, NULL};
		}
	AICM_BUG("kernel %d out of range", k);
}

static void
toc(FILE *f, const HtmlPage *p)
{
	int nk = p->g ? nkernels(p->g) : 0;

	fputs("<nav id=\"toc\">\n<h2>Contents</h2>\n<ol>\n", f);
	fputs("<li><a href=\"#ir\">The IR after each pass</a></li>\n", f);
	fputs("<li><a href=\"#graph\">The graph</a></li>\n", f);
	fprintf(f, "<li><a href=\"#kernels\">Kernels</a> (%d)<ol>\n", nk);
	for (int k = 0; k < nk; k++) {
		KRef kr = kernel_at(p->g, k);

		fputs("<li><a href=\"#", f);
		put_id(f, "kernel-", kr.name);
		fputs("\">@", f);
		esc(f, kr.name);
		fprintf(f, "</a> [%s]</li>\n", ir_kernel_kinds[kr.kind]);
	}
	fputs("</ol></li>\n", f);
	fputs("<li><a href=\"#run\">Run data</a></li>\n", f);
	fputs("<li><a href=\"#reports\">The passes' reports</a></li>\n", f);
	fputs("</ol>\n</nav>\n", f);
}

/* ---- the IR, stage by stage ------------------------------------------ */

static void
stage_panel(FILE *f, const HtmlPage *p, int s, int prev)
{
	HtmlDiffLine *dl = NULL;
	int n, nadd = 0, ndel = 0;

	n = html_diff(prev >= 0 ? p->stage_ir[prev] : "", p->stage_ir[s], &dl);
	if (prev >= 0)
		for (int i = 0; i < n; i++) {
			nadd += dl[i].op == HD_ADD;
			ndel += dl[i].op == HD_DEL;
		}
	fprintf(f, "<div class=\"stage\" id=\"stage-%d\">\n<h3>%02d ", s, s);
	esc(f, p->stage_label[s]);
	if (prev < 0)
		fputs(" <span class=\"sum\">(as parsed)</span>", f);
	else if (nadd + ndel == 0)
		fputs(" <span class=\"sum\">(no change)</span>", f);
	else
		fprintf(f, " <span class=\"sum\">(+%d &minus;%d lines)</span>", nadd, ndel);
	fputs("</h3>\n<pre>", f);
	for (int i = 0; i < n; i++) {
		const char *cls = prev < 0 || dl[i].op == HD_SAME ? NULL :
		    dl[i].op == HD_ADD ? "add" : "del";

		if (cls)
			fprintf(f, "<span class=\"%s\">%c ", cls, dl[i].op == HD_ADD ? '+' : '-');
		else
			fputs("<span>  ", f);
		html_escape(f, dl[i].s, dl[i].len);
		fputs("</span>", f);
	}
	fputs("</pre>\n</div>\n", f);
	free(dl);
}

static void
ir_section(FILE *f, const HtmlPage *p)
{
	int prev = -1;

	fputs("<section id=\"ir\">\n<h2>The IR after each pass</h2>\n", f);
	fputs("<p>Each panel is the IR after one stage, in the input's syntax; lines a pass "
	    "added are green (<code>+</code>), lines it removed are struck out in red "
	    "(<code>-</code>), against the panel to its left.  Passes marked "
	    "<i>(implicit)</i> are the ones aicm-run adds on its own.</p>\n", f);
	fputs("<div class=\"stages\">\n", f);
	for (int s = 0; s < p->nstages; s++) {
		if (!p->stage_ir[s])
			continue;
		stage_panel(f, p, s, prev);
		prev = s;
	}
	fputs("</div>\n</section>\n", f);
}

/* ---- the graph -------------------------------------------------------- */

static void
graph_section(FILE *f, const HtmlPage *p, FILE *warn)
{
	char *dot = NULL, *svg = NULL, why[512];
	size_t n = 0;
	FILE *m;

	fputs("<section id=\"graph\">\n<h2>The graph</h2>\n", f);
	fputs("<p>The program after the last stage as <code>--emit=dot</code> writes it, drawn "
	    "by Graphviz: each kernel a cluster labelled with its kind and tiling; a dashed "
	    "edge is a value that makes a round trip through memory between two kernels, "
	    "labelled with its bytes.</p>\n", f);
	if (!(m = open_memstream(&dot, &n)))
		AICM_BUG("open_memstream failed");
	ir_print_dot(m, p->g);
	fclose(m);
	{
		int lines = 0;

		for (size_t i = 0; i < n; i++)
			lines += dot[i] == '\n';
		if (lines > HTML_DOT_MAX_LINES)
			snprintf(why, sizeof why, "the graph is too large for dot to draw in "
			    "seconds (%d lines of Graphviz text, more than %d)", lines,
			    HTML_DOT_MAX_LINES);
		else
			svg = html_dot_svg(dot, why, sizeof why);
	}
	if (svg) {
		fputs("<div class=\"figure\" id=\"graph-svg\">\n", f);
		html_inline_svg(f, svg);
		fputs("</div>\n", f);
	} else {
		fprintf(warn, "%s: warning: no graph picture in the report: %s\n", p->tool, why);
		fputs("<p class=\"note\" id=\"graph-missing\">No picture: ", f);
		esc(f, why);
		fputs(".  <code>aicm-opt --emit=dot</code> writes the text that dot draws "
		    "(<code>dot -Tsvg</code>; Debian: <code>apt-get install graphviz</code>).</p>\n",
		    f);
	}
	fputs("</section>\n", f);
	free(dot);
	free(svg);
}

/* ---- the kernels ------------------------------------------------------ */

static const KernelStats *
stats_of(const HtmlPage *p, const char *name)
{
	for (int i = 0; p->run && i < p->run->n; i++)
		if (p->run->k[i].name && !strcmp(p->run->k[i].name, name))
			return &p->run->k[i];
	return NULL;
}

/* autotune's table of kernel name: the last autotune that tuned it. */
static const ReportTune *
tune_of(const HtmlPage *p, const char *name)
{
	for (int i = p->tunes ? p->tunes->n - 1 : -1; i >= 0; i--)
		if (!strcmp(p->tunes->t[i].kernel, name))
			return &p->tunes->t[i];
	return NULL;
}

static void
tune_row(FILE *f, const ReportTune *t, int i)
{
	const ReportTuneCand *c = &t->cand[i];

	fprintf(f, "<tr%s><td>%d%s</td><td>%d</td><td>%d</td>", i == t->chosen ?
	    " class=\"chosen\"" : "", c->rank, i == t->chosen ? " (chosen)" : "", c->bm, c->bn);
	if (t->has_bk)
		fprintf(f, "<td>%d</td>", c->bk);
	fprintf(f, "<td>%d</td>", c->warps);
	if (t->has_stages)
		fprintf(f, "<td>%d</td>", c->stages);
	fprintf(f, "<td>%.6f</td><td>%.6f</td><td>%.6f</td><td>%.6f</td><td>%.6f</td></tr>\n",
	    c->score, c->mem, c->comp, c->launch, c->waste);
}

/* The table beside the heat map: the candidates counted by fate, the best
 * HTML_TUNE_ROWS by autotune's order, and the chosen one if not among them. */
#define HTML_TUNE_ROWS 8
static void
tune_table(FILE *f, const ReportTune *t)
{
	int scored = 0, nreason = 0, shown = 0;
	const char *reason[16];
	int count[16];

	for (int i = 0; i < t->ncand; i++) {
		const char *r = t->cand[i].pruned;
		int k;

		if (!r) {
			scored++;
			continue;
		}
		for (k = 0; k < nreason && strcmp(reason[k], r); k++)
			;
		if (k == nreason && nreason < 16) {
			reason[nreason] = r;
			count[nreason++] = 0;
		}
		if (k < nreason)
			count[k]++;
	}
	fprintf(f, "<p>Target <code>");
	esc(f, t->target);
	fprintf(f, "</code>, problem batch=%" PRId64 " M=%" PRId64 " N=%" PRId64 " K=%" PRId64
	    " %s: %d candidates, %d scored, %d pruned", t->batch, t->m, t->n, t->k, t->dtype,
	    t->ncand, scored, t->ncand - scored);
	for (int k = 0; k < nreason; k++) {
		fputs(k ? ", " : " (", f);
		esc(f, reason[k]);
		fprintf(f, ": %d", count[k]);
	}
	fputs(nreason ? ")" : "", f);
	fputs(".  Scores are the cost model's estimated ms, lower is better.</p>\n", f);
	fputs("<table class=\"data tune\">\n<thead><tr><th>rank</th><th>BM</th><th>BN</th>", f);
	if (t->has_bk)
		fputs("<th>BK</th>", f);
	fputs("<th>warps</th>", f);
	if (t->has_stages)
		fputs("<th>stages</th>", f);
	fputs("<th>score</th><th>mem</th><th>comp</th><th>launch</th><th>waste</th></tr>"
	    "</thead>\n<tbody>\n", f);
	for (int r = 1; r <= HTML_TUNE_ROWS; r++)
		for (int i = 0; i < t->ncand; i++)
			if (!t->cand[i].pruned && t->cand[i].rank == r) {
				tune_row(f, t, i);
				shown += i == t->chosen;
			}
	if (t->chosen >= 0 && !shown && !t->cand[t->chosen].pruned)
		tune_row(f, t, t->chosen);
	fputs("</tbody>\n</table>\n", f);
}

static void
kernel_facts(FILE *f, const HtmlPage *p, const char *name, const TileFn *tf, const Kernel *kn)
{
	const int64_t *ka = tf ? tf->kattr : kn->kattr;
	unsigned set = tf ? tf->kset : kn->kset;
	const KernelStats *ks = stats_of(p, name);
	bool any = false;

	fputs("<table class=\"meta\">\n", f);
	if (tf) {
		fprintf(f, "<tr><th>lowered</th><td>grid (%" PRId64 ", %" PRId64 ", %" PRId64
		    "), %d tile instructions, element type %s</td></tr>\n", tf->grid[0], tf->grid[1],
		    tf->grid[2], tf->ninsts, ir_dtype_name(tf->dt));
	} else {
		fprintf(f, "<tr><th>ops</th><td>%d (not lowered)</td></tr>\n",
		    kn->last - kn->first + 1);
	}
	fputs("<tr><th>tiling</th><td>", f);
	for (int a = 0; a < KA_COUNT; a++)
		if (set & (1u << a)) {
			fprintf(f, "%s%s=%" PRId64, any ? " " : "", ir_kattr_names[a], ka[a]);
			any = true;
		}
	if (!any)
		fputs("none chosen (defaults at lowering)", f);
	fputs("</td></tr>\n", f);
	if (ks) {
		fprintf(f, "<tr><th>ran</th><td>%" PRId64 " programs, ", ks->programs);
		put_bytes(f, ks->bytes_read);
		fputs(" read, ", f);
		put_bytes(f, ks->bytes_written);
		fprintf(f, " written, %" PRId64 " flops</td></tr>\n", ks->flops);
	}
	fputs("</table>\n", f);
}

/* The node of g that holds lowered kernel tf. */
static int
tiled_node(const Graph *g, const TileFn *tf)
{
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].tile == tf)
			return i;
	AICM_BUG("a lowered kernel without its node");
}

static void
kernel_pictures(FILE *f, const HtmlPage *p, const char *name, const TileFn *tf)
{
	const ReportTune *t = tune_of(p, name);

	fputs("<h4>Autotune</h4>\n", f);
	if (t) {
		tune_table(f, t);
		FIGURE(f, "heatmap", "heatmap-", name, "The BM&times;BN heat map: each cell the "
		    "best score over its other parameters, coloured from the best (green) to "
		    "the slowest (red), pruned cells marked by their reason, the chosen cell "
		    "outlined.",
		    report_tune_svg(m_, t));
	} else {
		fputs("<p class=\"note\">Not tuned by this pipeline: add <code>autotune</code> "
		    "after <code>fuse</code> to see its table and heat map.</p>\n", f);
	}
	fputs("<h4>Tile grid</h4>\n", f);
	if (tf) {
		int node = tiled_node(p->g, tf);

		FIGURE(f, "tilegrid", "tilegrid-", name, "The result cut into the tiles the "
		    "programs of the grid store (ragged edges hatched where masked, atomics "
		    "marked), and beside it the operands with the tiles one program loads (the "
		    "last program, at the ragged corner).", report_grid_svg(m_, p->g, node, -1));
	} else {
		fputs("<p class=\"note\">Not lowered: add <code>lower-tiled</code> to the "
		    "pipeline to see its tile grid.</p>\n", f);
	}
}

static void
kernels_section(FILE *f, const HtmlPage *p)
{
	int nk = nkernels(p->g);

	fputs("<section id=\"kernels\">\n<h2>Kernels</h2>\n", f);
	if (nk == 0)
		fputs("<p class=\"note\">No kernels: run <code>fuse</code> (and "
		    "<code>lower-tiled</code>) in the pipeline to make some.</p>\n", f);
	for (int k = 0; k < nk; k++) {
		KRef kr = kernel_at(p->g, k);

		fputs("<article class=\"kernel\" id=\"", f);
		put_id(f, "kernel-", kr.name);
		fputs("\" data-kernel=\"", f);
		esc(f, kr.name);
		fputs("\">\n<h3>@", f);
		esc(f, kr.name);
		fprintf(f, " <span class=\"sum\">[%s]</span></h3>\n", ir_kernel_kinds[kr.kind]);
		kernel_facts(f, p, kr.name, kr.tf, kr.kn);
		kernel_pictures(f, p, kr.name, kr.tf);
		fputs("</article>\n", f);
	}
	fputs("</section>\n", f);
}

/* ---- run data -------------------------------------------------------- */

static void
stats_row(FILE *f, const KernelStats *k)
{
	int64_t moved = k->bytes_read + k->bytes_written;

	fputs("<tr><td>", f);
	esc(f, k->name ? k->name : "?");
	if (k->kind) {
		fputs(" [", f);
		esc(f, k->kind);
		fputs("]", f);
	}
	fprintf(f, "</td><td>%" PRId64 "</td><td>", k->programs);
	put_bytes(f, k->bytes_read);
	fputs("</td><td>", f);
	put_bytes(f, k->bytes_written);
	fputs("</td><td>", f);
	put_bytes(f, k->ideal_read + k->ideal_written);
	fprintf(f, "</td><td>%" PRId64 "</td><td>", k->flops);
	if (moved > 0)
		fprintf(f, "%.3f", (double)k->flops / (double)moved);
	else
		fputs("-", f);
	fputs("</td></tr>\n", f);
}

static void
run_section(FILE *f, const HtmlPage *p)
{
	fputs("<section id=\"run\">\n<h2>Run data</h2>\n", f);
	if (!p->run) {
		fputs("<p class=\"note\" id=\"run-missing\">No run data in this report. ", f);
		esc(f, p->no_stats_why ? p->no_stats_why : "");
		fputs("</p>\n</section>\n", f);
		return;
	}
	fputs("<p>What the programs did, counted by the tile executor (KernelStats, DESIGN "
	    "section 7; 1 KB = 1000 B), from ", f);
	esc(f, p->stats_from ? p->stats_from : "this run");
	fputs(".</p>\n", f);
	fputs("<table class=\"data\" id=\"stats\">\n<thead><tr><th>kernel</th><th>programs</th>"
	    "<th>read</th><th>written</th><th>ideal</th><th>flops</th><th>flop/B</th></tr>"
	    "</thead>\n<tbody>\n", f);
	for (int i = 0; i < p->run->n; i++)
		stats_row(f, &p->run->k[i]);
	{
		KernelStats t = p->run->total;

		t.name = "total";
		t.kind = NULL;
		stats_row(f, &t);
	}
	fputs("</tbody>\n</table>\n", f);
	FIGURE(f, "traffic", "", "traffic", p->eager ? "Bytes each kernel moved against the "
	    "ideal (each operand read once, the result written once), and the whole run "
	    "against the same graph run op by op (eager)." : "Bytes each kernel moved against "
	    "the ideal (each operand read once, the result written once).",
	    report_traffic_svg(m_, p->run, p->eager));
	FIGURE(f, "roofline", "", "roofline", "The roofline: each kernel at its arithmetic "
	    "intensity under the machine's peak and bandwidth; KernelStats count, they do not "
	    "time, so a point is what the machine allows the kernel.",
	    report_roofline_svg(m_, p->run, p->peak));
	if (!p->eager)
		fputs("<p>To draw the same graph run op by op (eager) beside this run: write both "
		    "runs' counts with <code>aicm-run --stats-file=F</code> (eager: "
		    "<code>--pass=shape-infer,lower-tiled</code>) and give them to "
		    "<code>aicm-opt --report=html --stats-file=FUSED "
		    "--eager-stats-file=EAGER</code>.</p>\n", f);
	fputs("</section>\n", f);
}

/* ---- the passes' reports ---------------------------------------------- */

static void
reports_section(FILE *f, const HtmlPage *p)
{
	fputs("<section id=\"reports\">\n<h2>The passes' reports</h2>\n", f);
	if (p->pass_report && *p->pass_report) {
		fputs("<p>What the passes said (<code>--report</code>'s text).</p>\n", f);
		fputs("<pre class=\"report\">", f);
		esc(f, p->pass_report);
		fputs("</pre>\n", f);
	} else {
		fputs("<p>The passes that ran wrote no report (fuse and autotune do).</p>\n", f);
	}
	fputs("</section>\n", f);
}

void
html_page_write(FILE *f, const HtmlPage *p, FILE *warn)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", f);
	fputs("<meta name=\"generator\" content=\"aicm ", f);
	esc(f, AICM_VERSION);
	fputs("\">\n<title>aicm report: ", f);
	esc(f, strcmp(p->input, "-") ? p->input : "<stdin>");
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", style);
	header(f, p);
	toc(f, p);
	ir_section(f, p);
	graph_section(f, p, warn);
	kernels_section(f, p);
	run_section(f, p);
	reports_section(f, p);
	fputs("<footer><p><a href=\"#top\">back to the top</a></p></footer>\n", f);
	fputs("</body>\n</html>\n", f);
}
