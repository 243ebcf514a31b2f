/*
 * svg_autotune.c: autotune's table per kernel and its BM x BN heat map
 * (report.h).
 *
 * The table is autotune's own (autotune_table in passes/autotune.c runs the
 * pass's pruning, scoring and ranking on one kernel), collected right after
 * the pass from the graph it tuned, so the picture cannot drift from what
 * the pass did; only the cache and measure=true are not replayed, and the
 * configuration the kernel carries after the pass is marked as chosen
 * whatever its source.  A BM x BN cell stands for every candidate with
 * those block sizes (BK, warps, stages vary inside it): it shows the best
 * score among them relative to the kernel's best, on a logarithmic colour
 * ramp, and how many were pruned; a cell with no scored candidate is
 * filled by the reason most of its candidates were pruned for.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../passes/cost.h"
#include "../../passes/tune_cache.h"
#include "report.h"
#include "svg.h"

/* Short names of the prune reasons, as autotune's JSON report writes them. */
static const char *const why_names[PR_COUNT] = {"", "block", "smem", "regs"};
static const char *const why_fill[PR_COUNT] = {"", "#bdbdbd", "#9ecae1", "#c2a5cf"};
static const char *const why_words[PR_COUNT] = {"",
	"block: a block larger than the problem", "smem: over the shared memory",
	"regs: over the registers"};

void
report_tunes_collect(ReportTunes *r, const Graph *g, const PassInst *pi)
{
	PassArgs a = {pi->pass->opts, pi->vals, NULL, false, NULL};
	TuneRow *rows = xmalloc(sizeof *rows * COST_MAX_SPACE);

	for (int k = 0; k < g->nkernels; k++) {
		const Kernel *kn = &g->kernels[k];
		Problem p;
		int n = autotune_table(g, k, &a, &p, rows);
		unsigned have = tune_cache_kind_attrs(kn->kind);
		ReportTune *t;

		if (n < 0)
			continue;
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 8;
			r->t = xrealloc(r->t, sizeof *r->t * (size_t)r->cap);
		}
		t = &r->t[r->n++];
		memset(t, 0, sizeof *t);
		t->kernel = xstrdup(kn->name);
		t->kind = ir_kernel_kinds[kn->kind];
		t->dtype = ir_dtype_name(p.dt);
		t->target = xstrdup(pass_str(&a, "target"));
		t->batch = p.batch;
		t->m = p.m;
		t->n = p.n;
		t->k = p.k;
		t->has_bk = have & (1u << KA_BK);
		t->has_stages = have & (1u << KA_STAGES);
		t->ncand = n;
		t->cand = xcalloc((size_t)(n ? n : 1), sizeof *t->cand);
		t->chosen = -1;
		for (int i = 0; i < n; i++) {
			ReportTuneCand *c = &t->cand[i];
			const TuneRow *w = &rows[i];

			c->bm = w->c.bm;
			c->bn = w->c.bn;
			c->bk = w->c.bk;
			c->warps = w->c.warps;
			c->stages = w->c.stages;
			c->split = w->c.split;
			c->pruned = w->why == PR_NONE ? NULL : why_names[w->why];
			c->score = w->s.total;
			c->mem = w->s.mem;
			c->comp = w->s.comp;
			c->launch = w->s.launch;
			c->waste = w->s.waste;
			c->rank = w->rank;
			/* the kernel's attributes after the pass name its choice */
			if (t->chosen < 0 && (kn->kset & (1u << KA_BM)) && (kn->kset & (1u << KA_BN)) &&
			    kn->kattr[KA_BM] == c->bm && kn->kattr[KA_BN] == c->bn &&
			    (!t->has_bk || kn->kattr[KA_BK] == c->bk) &&
			    (!(kn->kset & (1u << KA_WARPS)) || kn->kattr[KA_WARPS] == c->warps) &&
			    (!t->has_stages || !(kn->kset & (1u << KA_STAGES)) ||
			    kn->kattr[KA_STAGES] == c->stages))
				t->chosen = i;
		}
	}
	free(rows);
}

void
report_tunes_free(ReportTunes *r)
{
	for (int i = 0; i < r->n; i++) {
		free(r->t[i].kernel);
		free(r->t[i].target);
		free(r->t[i].cand);
	}
	free(r->t);
	memset(r, 0, sizeof *r);
}

/* ---- the heat map ---------------------------------------------------- */

enum { CELL_W = 70, CELL_H = 36, LEFT = 70, TOP = 84, RAMP = 10 };

/* The distinct values of a field, ascending; returns their count. */
static int
distinct(const ReportTune *t, bool bn, int *out)
{
	int n = 0;

	for (int i = 0; i < t->ncand; i++) {
		int v = bn ? t->cand[i].bn : t->cand[i].bm, j;

		for (j = 0; j < n && out[j] != v; j++)
			;
		if (j < n)
			continue;
		for (j = n++; j > 0 && out[j - 1] > v; j--)
			out[j] = out[j - 1];
		out[j] = v;
	}
	return n;
}

static int
find(const int *v, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return i;
	return -1;
}

/* A colour of the ramp, t in [0, 1]: green (best), yellow, red. */
static void
ramp(char *buf, size_t n, double t)
{
	static const double c[3][3] = {{26, 152, 80}, {254, 224, 139}, {215, 48, 39}};
	int s = t < 0.5 ? 0 : 1;
	double u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
	int rgb[3];

	for (int i = 0; i < 3; i++)
		rgb[i] = (int)lround(c[s][i] + (c[s + 1][i] - c[s][i]) * u);
	snprintf(buf, n, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

/* A score relative to the best: "+0.41%" up to twice the best, then "3.2x". */
static void
rel_str(char *buf, size_t n, double ratio)
{
	double pct = (ratio - 1) * 100;

	if (ratio < 1.995)
		snprintf(buf, n, "+%.*f%%", pct < 0.995 ? 2 : pct < 9.95 ? 1 : 0, pct);
	else
		snprintf(buf, n, "%.*f\xc3\x97", ratio < 9.95 ? 1 : 0, ratio);
}

/* About how wide a line of n characters is at font size px. */
static double
text_w(size_t n, double px)
{
	return (double)n * px * 0.6;
}

typedef struct Cell {
	int best;                    /* candidate, or -1 */
	int total, pruned[PR_COUNT];
} Cell;

static void
config_str(char *buf, size_t n, const ReportTune *t, const ReportTuneCand *c)
{
	size_t k = (size_t)snprintf(buf, n, "BM=%d BN=%d", c->bm, c->bn);

	if (t->has_bk && k < n)
		k += (size_t)snprintf(buf + k, n - k, " BK=%d", c->bk);
	if (k < n)
		k += (size_t)snprintf(buf + k, n - k, " warps=%d", c->warps);
	if (t->has_stages && k < n)
		snprintf(buf + k, n - k, " stages=%d", c->stages);
}

static void
tune_draw(FILE *f, const ReportTune *t, bool standalone, double *pw, double *ph)
{
	int bms[COST_MAX_SPACE], bns[COST_MAX_SPACE];
	int nr = distinct(t, false, bms), nc = distinct(t, true, bns);
	Cell *cell = xcalloc((size_t)(nr * nc > 0 ? nr * nc : 1), sizeof *cell);
	double best = INFINITY, worst = 0, w, h, y;
	int nscored = 0, npruned[PR_COUNT] = {0}, top[3] = {-1, -1, -1};
	char buf[512], col[16];

	for (int i = 0; i < nr * nc; i++)
		cell[i].best = -1;
	for (int i = 0; i < t->ncand; i++) {
		const ReportTuneCand *c = &t->cand[i];
		Cell *e = &cell[find(bms, nr, c->bm) * nc + find(bns, nc, c->bn)];
		int why = PR_NONE;

		e->total++;
		for (int r = PR_BLOCK; r < PR_COUNT; r++)
			if (c->pruned && !strcmp(c->pruned, why_names[r]))
				why = r;
		if (c->pruned) {
			e->pruned[why]++;
			npruned[why]++;
			continue;
		}
		nscored++;
		if (c->rank >= 1 && c->rank <= 3)
			top[c->rank - 1] = i;
		if (e->best < 0 || c->score < t->cand[e->best].score)
			e->best = i;
	}
	for (int i = 0; i < nr * nc; i++)
		if (cell[i].best >= 0) {
			double s = t->cand[cell[i].best].score;

			if (s < best)
				best = s;
			if (s > worst)
				worst = s;
		}
	w = LEFT + nc * CELL_W + 30;
	if (w < 620)
		w = 620;
	h = TOP + nr * CELL_H + 164;
	snprintf(buf, sizeof buf, "autotune @%s [%s] batch=%lld m=%lld n=%lld k=%lld %s, "
	    "target %s", t->kernel, t->kind, (long long)t->batch, (long long)t->m,
	    (long long)t->n, (long long)t->k, t->dtype, t->target);
	/* as wide as the longest line: the title, the counts, the top three */
	if (28 + text_w(strlen(buf), 13) > w)
		w = 28 + text_w(strlen(buf), 13);
	if (28 + text_w(125, 10) > w)
		w = 28 + text_w(125, 10);
	*pw = w;
	*ph = h;
	if (standalone) {
		svg_open(f, w, h, buf);
	} else {
		svg_panel_open(f, 0, 0, w, h);
		svg_rect(f, 0.5, 0.5, w - 1, h - 1, "none", "#cccccc", NULL);
	}
	svg_text(f, 14, 18, NULL, "font-size=\"13\" font-weight=\"bold\"", buf);
	snprintf(buf, sizeof buf, "%d candidates: %d scored, %d pruned (block %d, smem %d, "
	    "regs %d)", t->ncand, nscored,
	    t->ncand - nscored, npruned[PR_BLOCK], npruned[PR_SMEM], npruned[PR_REGS]);
	svg_text(f, 14, 36, NULL, NULL, buf);
	svg_text(f, LEFT + nc * CELL_W / 2.0, TOP - 24, "middle", "font-weight=\"bold\"", "BN");
	svg_text(f, 18, TOP + nr * CELL_H / 2.0, "middle", "font-weight=\"bold\"", "BM");
	for (int j = 0; j < nc; j++) {
		snprintf(buf, sizeof buf, "%d", bns[j]);
		svg_text(f, LEFT + j * CELL_W + CELL_W / 2.0, TOP - 6, "middle", NULL, buf);
	}
	for (int i = 0; i < nr; i++) {
		snprintf(buf, sizeof buf, "%d", bms[i]);
		svg_text(f, LEFT - 8, TOP + i * CELL_H + CELL_H / 2.0 + 4, "end", NULL, buf);
	}
	for (int i = 0; i < nr; i++)
		for (int j = 0; j < nc; j++) {
			const Cell *e = &cell[i * nc + j];
			double x = LEFT + j * CELL_W, yy = TOP + i * CELL_H;
			int np = e->pruned[PR_BLOCK] + e->pruned[PR_SMEM] + e->pruned[PR_REGS];

			if (!e->total) {
				svg_rect(f, x, yy, CELL_W, CELL_H, "#ffffff", "#eeeeee", NULL);
				continue;
			}
			/* the cell's details as a tooltip: a <g> with a <title> */
			{
				char tip[256];
				size_t k = (size_t)snprintf(tip, sizeof tip, "BM=%d BN=%d: %d candidates, "
				    "%d pruned (block %d, smem %d, regs %d)", bms[i], bns[j], e->total, np,
				    e->pruned[PR_BLOCK], e->pruned[PR_SMEM], e->pruned[PR_REGS]);

				if (e->best >= 0 && k < sizeof tip) {
					char cfg[128];

					config_str(cfg, sizeof cfg, t, &t->cand[e->best]);
					snprintf(tip + k, sizeof tip - k, "; best %s, %.4g ms, rank #%d", cfg,
					    t->cand[e->best].score, t->cand[e->best].rank);
				}
				svg_printf(f, "<g>\n<title>%s</title>\n", tip);
			}
			if (e->best < 0) {
				int why = PR_BLOCK;

				for (int r = PR_BLOCK; r < PR_COUNT; r++)
					if (e->pruned[r] > e->pruned[why])
						why = r;
				svg_rect(f, x, yy, CELL_W, CELL_H, why_fill[why], "#ffffff", NULL);
				svg_text(f, x + CELL_W / 2.0, yy + CELL_H / 2.0 + 4, "middle",
				    "fill=\"#333333\"", why_names[why]);
				fputs("</g>\n", f);
				continue;
			}
			{
				double s = t->cand[e->best].score;
				double u = worst > best && best > 0 ? log(s / best) / log(worst / best) : 0;

				ramp(col, sizeof col, u);
				svg_rect(f, x, yy, CELL_W, CELL_H, col, "#ffffff", NULL);
				if (s == best)
					snprintf(buf, sizeof buf, "best");
				else if (best > 0)
					rel_str(buf, sizeof buf, s / best);
				else
					snprintf(buf, sizeof buf, "%.3g", s);
				svg_text(f, x + CELL_W / 2.0, yy + 15, "middle", "font-weight=\"bold\"", buf);
				if (np) {
					snprintf(buf, sizeof buf, "%d/%d pruned", np, e->total);
					svg_text(f, x + CELL_W / 2.0, yy + 29, "middle", "font-size=\"9\"", buf);
				}
			}
			fputs("</g>\n", f);
		}
	if (t->chosen >= 0) {
		const ReportTuneCand *c = &t->cand[t->chosen];
		int i = find(bms, nr, c->bm), j = find(bns, nc, c->bn);

		svg_rect(f, LEFT + j * CELL_W + 1.5, TOP + i * CELL_H + 1.5, CELL_W - 3, CELL_H - 3,
		    "none", "#000000", "stroke-width=\"3\"");
	}
	/* the legend: the ramp, the reasons, the chosen cell */
	y = TOP + nr * CELL_H + 22;
	svg_text(f, 14, y + 4, NULL, NULL, "score / best:");
	for (int s = 0; s < RAMP; s++) {
		ramp(col, sizeof col, (double)s / (RAMP - 1));
		svg_rect(f, 100 + s * 16, y - 8, 16, 14, col, NULL, NULL);
	}
	svg_text(f, 100, y + 20, "start", "font-size=\"9\"", "best");
	if (best > 0 && worst > best) {
		char r[32];

		rel_str(r, sizeof r, worst / best);
		snprintf(buf, sizeof buf, "%s (log scale)", r);
		svg_text(f, 100 + RAMP * 16, y + 20, "end", "font-size=\"9\"", buf);
	}
	{
		double x = 290;

		for (int r = PR_BLOCK; r < PR_COUNT; r++) {
			svg_rect(f, x, y - 8, 12, 12, why_fill[r], "#555555", NULL);
			svg_text(f, x + 16, y + 2, NULL, NULL, why_names[r]);
			x += 16 + 8 * strlen(why_names[r]) + 14;
		}
		svg_rect(f, x, y - 8, 12, 12, "none", "#000000", "stroke-width=\"3\"");
		svg_text(f, x + 16, y + 2, NULL, NULL, "chosen");
	}
	svg_text(f, 14, y + 40, NULL, "font-size=\"10\"", "a cell: the best score of its "
	    "candidates (BK, warps, stages vary inside it), relative to the kernel's best");
	snprintf(buf, sizeof buf, "pruned: %s; %s; %s", why_words[PR_BLOCK], why_words[PR_SMEM],
	    why_words[PR_REGS]);
	svg_text(f, 14, y + 54, NULL, "font-size=\"10\"", buf);
	if (t->chosen >= 0) {
		const ReportTuneCand *c = &t->cand[t->chosen];
		char cfg[128];

		config_str(cfg, sizeof cfg, t, c);
		if (c->pruned)
			snprintf(buf, sizeof buf, "chosen: %s (pruned by the model: %s)", cfg,
			    c->pruned);
		else
			snprintf(buf, sizeof buf, "chosen: %s, model rank #%d, score %.4g ms", cfg,
			    c->rank, c->score);
	} else {
		snprintf(buf, sizeof buf, "chosen: none of these (the kernel carries no "
		    "configuration of this space)");
	}
	svg_text(f, 14, y + 72, NULL, NULL, buf);
	for (int r = 0; r < 3 && top[r] >= 0; r++) {
		char cfg[128];

		config_str(cfg, sizeof cfg, t, &t->cand[top[r]]);
		snprintf(buf, sizeof buf, "model's #%d: %s, %.4g ms (mem %.3g, comp %.3g, launch %.3g, "
		    "waste %.3g)", r + 1, cfg, t->cand[top[r]].score, t->cand[top[r]].mem,
		    t->cand[top[r]].comp, t->cand[top[r]].launch, t->cand[top[r]].waste);
		svg_text(f, 14, y + 90 + 14 * r, NULL, "font-size=\"10\"", buf);
	}
	svg_close(f);
	free(cell);
}

void
report_tune_svg(FILE *f, const ReportTune *t)
{
	double w, h;

	tune_draw(f, t, true, &w, &h);
}

void
report_tune_doc(FILE *f, const ReportTunes *r)
{
	int drawn = r->n < REPORT_MAX_PANELS ? r->n : REPORT_MAX_PANELS;
	char **txt = xcalloc((size_t)(drawn ? drawn : 1), sizeof *txt);
	size_t *len = xcalloc((size_t)(drawn ? drawn : 1), sizeof *len);
	double *hh = xcalloc((size_t)(drawn ? drawn : 1), sizeof *hh);
	double w = 640, h = 30, y = 30;
	char t[128];

	for (int i = 0; i < drawn; i++) {
		FILE *m = open_memstream(&txt[i], &len[i]);
		double pw;

		if (!m)
			AICM_BUG("open_memstream failed");
		tune_draw(m, &r->t[i], false, &pw, &hh[i]);
		fclose(m);
		if (pw + 20 > w)
			w = pw + 20;
		h += hh[i] + 12;
	}
	if (r->n > drawn || !r->n)
		h += 20;
	svg_doc_open(f, w, h, "autotune's tables");
	snprintf(t, sizeof t, "autotune: %d kernel%s", r->n, r->n == 1 ? "" : "s");
	svg_text(f, 10, 20, NULL, "font-size=\"14\" font-weight=\"bold\"", t);
	for (int i = 0; i < drawn; i++) {
		svg_printf(f, "<g transform=\"translate(10 %n)\">\n", y);
		fwrite(txt[i], 1, len[i], f);
		fputs("</g>\n", f);
		y += hh[i] + 12;
		free(txt[i]);
	}
	if (!r->n)
		svg_text(f, 10, y + 12, NULL, NULL, "no kernels were tuned: autotune needs fused "
		    "kernels (--pass=shape-infer,fuse,autotune)");
	else if (r->n > drawn) {
		snprintf(t, sizeof t, "%d more kernels not drawn (the first %d are)", r->n - drawn,
		    REPORT_MAX_PANELS);
		svg_text(f, 10, y + 12, NULL, "fill=\"#a50f15\"", t);
	}
	svg_close(f);
	free(txt);
	free(len);
	free(hh);
}
