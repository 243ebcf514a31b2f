/*
 * svg_traffic.c: run data as pictures (report.h): per-kernel traffic bars
 * and a roofline.
 *
 * Both are drawn from KernelStats alone (what aicm-run counted, read back
 * by stats_read.c), never from the cost model, so they show the run and
 * not a prediction.  The bars put each kernel's bytes moved beside its
 * ideal (each operand read once, the result written once: the floor no
 * tiling can beat), read and written stacked; given an eager run of the
 * same graph (each op its own kernel), the totals of both runs head the
 * picture, which is what fusion saved.  KernelStats count and do not time,
 * so the roofline places each kernel at its arithmetic intensity (flops
 * per byte moved) on the machine's roof min(peak, intensity x bandwidth):
 * where it sits says whether memory or arithmetic bounds it and how far
 * the ridge is, not how fast it ran.  Kernels without flops (copies,
 * layout moves) have no place on a log axis: they are counted in a note.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../passes/cost.h"
#include "report.h"
#include "svg.h"

enum {
	BARS_MAX = 64,               /* kernels drawn as bars; the rest named in a note */
	ROOF_LIST = 24,              /* kernels listed beside the roofline */
};

int
report_peak_parse(const char *spec, bool f32, ReportPeak *out, char *why, size_t whylen)
{
	const Target *t = cost_target_lookup(spec);
	char *end;
	double a, b;

	memset(out, 0, sizeof *out);
	if (t) {
		snprintf(out->name, sizeof out->name, "%s", t->name);
		out->gflops = 1000 * (f32 ? t->tc_tflops_f32 : t->tc_tflops_f64);
		out->gbs = t->hbm_gbs;
		return 0;
	}
	a = strtod(spec, &end);
	if (end == spec || *end != ',') {
		StrBuf names = {0};

		cost_target_names(&names);
		snprintf(why, whylen, "takes a target (%s) or GFLOPS,GBS, not '%s'", names.s, spec);
		free(names.s);
		return -1;
	}
	b = strtod(end + 1, &end);
	/* bounded, so that the roofline's decades are few and finite */
	if (*end || !(a >= 1e-6 && a <= 1e12) || !(b >= 1e-6 && b <= 1e12)) {
		snprintf(why, whylen, "takes two numbers GFLOPS,GBS in [1e-6, 1e12], not '%s'",
		    spec);
		return -1;
	}
	snprintf(out->name, sizeof out->name, "given");
	out->gflops = a;
	out->gbs = b;
	return 0;
}

/* In double: a file's counts may each be near 2^63 and their sum is none. */
static double
moved(const KernelStats *k)
{
	return (double)k->bytes_read + (double)k->bytes_written;
}

static double
ideal(const KernelStats *k)
{
	return (double)k->ideal_read + (double)k->ideal_written;
}

/* A name cut to n characters with an ellipsis. */
static void
cut(char *buf, size_t size, const char *s, size_t n)
{
	if (strlen(s) <= n)
		snprintf(buf, size, "%s", s);
	else
		snprintf(buf, size, "%.*s\xe2\x80\xa6", (int)n - 1, s);
}

/* One bar pair: actual (read, written stacked) and ideal, at y. */
static void
bar_pair(FILE *f, double x, double y, double scale, const KernelStats *k, const char *c_read,
    const char *c_write)
{
	double r = (double)k->bytes_read * scale, w = (double)k->bytes_written * scale;
	double ir = (double)k->ideal_read * scale, iw = (double)k->ideal_written * scale;
	char a[32], b[32], txt[128];

	svg_rect(f, x, y, r, 11, c_read, NULL, NULL);
	svg_rect(f, x + r, y, w, 11, c_write, NULL, NULL);
	svg_rect(f, x, y + 13, ir, 7, "#bdbdbd", NULL, NULL);
	svg_rect(f, x + ir, y + 13, iw, 7, "#969696", NULL, NULL);
	svg_bytes(a, sizeof a, moved(k));
	svg_bytes(b, sizeof b, ideal(k));
	if (ideal(k) > 0)
		snprintf(txt, sizeof txt, "%s (ideal %s, %.2f\xc3\x97)", a, b,
		    moved(k) / ideal(k));
	else
		snprintf(txt, sizeof txt, "%s (ideal %s)", a, b);
	svg_text(f, x + (r + w > ir + iw ? r + w : ir + iw) + 6, y + 12, NULL, NULL, txt);
}

static void
traffic_draw(FILE *f, const ReportStats *run, const ReportStats *eager, bool standalone,
    double *pw, double *ph)
{
	int nb = run->n < BARS_MAX ? run->n : BARS_MAX;
	double w = 860, h, y, x0 = 230, span = 380, scale, mx = 1;
	char buf[512], name[64];

	for (int i = 0; i < nb; i++) {
		if (moved(&run->k[i]) > mx)
			mx = moved(&run->k[i]);
		if (ideal(&run->k[i]) > mx)
			mx = ideal(&run->k[i]);
	}
	h = 60 + (eager ? 90 : 0) + 30 * nb + (run->n > nb ? 20 : 0) + 50;
	*pw = w;
	*ph = h;
	if (standalone)
		svg_open(f, w, h, "traffic per kernel: bytes moved against the ideal");
	else
		svg_panel_open(f, 0, 0, w, h);
	svg_text(f, 14, 18, NULL, "font-size=\"13\" font-weight=\"bold\"",
	    "traffic per kernel: bytes moved against the ideal (1 KB = 1000 B)");
	snprintf(buf, sizeof buf, "%d kernel%s; ideal: each operand read once, the result "
	    "written once", run->n, run->n == 1 ? "" : "s");
	svg_text(f, 14, 36, NULL, NULL, buf);
	y = 56;
	if (eager) {
		double m2 = moved(&eager->total);
		double s2;

		if (moved(&run->total) > m2)
			m2 = moved(&run->total);
		if (ideal(&eager->total) > m2)
			m2 = ideal(&eager->total);
		s2 = span / (m2 > 0 ? m2 : 1);
		svg_text(f, 14, y, NULL, "font-weight=\"bold\"", "eager against fused, in total");
		y += 10;
		snprintf(buf, sizeof buf, "eager (%d kernel%s)", eager->n, eager->n == 1 ? "" : "s");
		svg_text(f, x0 - 8, y + 12, "end", NULL, buf);
		bar_pair(f, x0, y, s2, &eager->total, "#fb6a4a", "#cb181d");
		y += 30;
		snprintf(buf, sizeof buf, "fused (%d kernel%s)", run->n, run->n == 1 ? "" : "s");
		svg_text(f, x0 - 8, y + 12, "end", NULL, buf);
		bar_pair(f, x0, y, s2, &run->total, "#6baed6", "#2171b5");
		y += 26;
		if (moved(&run->total) > 0) {
			snprintf(buf, sizeof buf, "fusion moves %.2f\xc3\x97 fewer bytes than eager",
			    moved(&eager->total) / moved(&run->total));
			svg_text(f, x0, y + 6, NULL, "fill=\"#08519c\"", buf);
		}
		y += 18;
	}
	scale = span / mx;
	for (int i = 0; i < nb; i++) {
		const KernelStats *k = &run->k[i];

		cut(name, sizeof name, k->name, 22);
		snprintf(buf, sizeof buf, "@%s [%s]", name, k->kind);
		svg_text(f, x0 - 8, y + 12, "end", NULL, buf);
		bar_pair(f, x0, y, scale, k, "#6baed6", "#2171b5");
		y += 30;
	}
	if (run->n > nb) {
		snprintf(buf, sizeof buf, "%d more kernels not drawn (the first %d are)",
		    run->n - nb, BARS_MAX);
		svg_text(f, 14, y + 8, NULL, "fill=\"#a50f15\"", buf);
		y += 20;
	}
	y += 14;
	svg_rect(f, 14, y - 9, 12, 11, "#6baed6", NULL, NULL);
	svg_text(f, 30, y, NULL, NULL, "read");
	svg_rect(f, 70, y - 9, 12, 11, "#2171b5", NULL, NULL);
	svg_text(f, 86, y, NULL, NULL, "written");
	svg_rect(f, 146, y - 7, 12, 7, "#bdbdbd", NULL, NULL);
	svg_text(f, 162, y, NULL, NULL, "ideal read");
	svg_rect(f, 236, y - 7, 12, 7, "#969696", NULL, NULL);
	svg_text(f, 252, y, NULL, NULL, "ideal written");
	if (eager) {
		svg_rect(f, 350, y - 9, 12, 11, "#fb6a4a", NULL, NULL);
		svg_text(f, 366, y, NULL, NULL, "eager read");
		svg_rect(f, 440, y - 9, 12, 11, "#cb181d", NULL, NULL);
		svg_text(f, 456, y, NULL, NULL, "eager written");
	}
	svg_close(f);
}

void
report_traffic_svg(FILE *f, const ReportStats *run, const ReportStats *eager)
{
	double w, h;

	traffic_draw(f, run, eager, true, &w, &h);
}

/* ---- the roofline ---------------------------------------------------- */

enum { RL_X = 70, RL_Y = 50, RL_W = 420, RL_H = 300 };

typedef struct Axes {
	double lx0, lx1, ly0, ly1;   /* log10 ranges */
} Axes;

static double
ax_x(const Axes *a, double v)
{
	return RL_X + (log10(v) - a->lx0) / (a->lx1 - a->lx0) * RL_W;
}

static double
ax_y(const Axes *a, double v)
{
	return RL_Y + RL_H - (log10(v) - a->ly0) / (a->ly1 - a->ly0) * RL_H;
}

static double
intensity(const KernelStats *k)
{
	return moved(k) > 0 ? (double)k->flops / moved(k) : 0;
}

static void
roof_draw(FILE *f, const ReportStats *run, const ReportPeak *pk, bool standalone, double *pw,
    double *ph)
{
	double ridge = pk->gflops / pk->gbs, lo = ridge, hi = ridge, w = 860;
	double h = RL_Y + RL_H + 90;
	int noflop = 0, nl = 0;
	Axes a;
	char buf[512], name[64];

	for (int i = 0; i < run->n; i++) {
		double ai = intensity(&run->k[i]);

		if (ai <= 0) {
			noflop++;
			continue;
		}
		if (ai < lo)
			lo = ai;
		if (ai > hi)
			hi = ai;
	}
	/* whole decades around the kernels and the ridge */
	a.lx0 = floor(log10(lo)) - (log10(lo) - floor(log10(lo)) < 0.3 ? 1 : 0);
	a.lx1 = ceil(log10(hi)) + (ceil(log10(hi)) - log10(hi) < 0.3 ? 1 : 0);
	a.ly1 = ceil(log10(pk->gflops)) + (ceil(log10(pk->gflops)) - log10(pk->gflops) < 0.3 ? 1 : 0);
	a.ly0 = floor(log10(pow(10, a.lx0) * pk->gbs));
	if (a.ly0 >= a.ly1)
		a.ly0 = a.ly1 - 1;
	if (20 + 16 * (run->n < ROOF_LIST ? run->n : ROOF_LIST) + 40 > h)
		h = 20 + 16 * (run->n < ROOF_LIST ? run->n : ROOF_LIST) + 40 + RL_Y;
	*pw = w;
	*ph = h;
	/* a target's figures are the cost model's fitted rates (for the cpu
	 * targets, what an engine reached in the calibration), not the
	 * machine's peak: a kernel may run above them, so they are not called
	 * one (bench/peak.c's measured roofs come in as --peak=GFLOPS,GBS) */
	snprintf(buf, sizeof buf, "roofline, %s%s: %s %.4g GFLOP/s, %.4g GB/s",
	    strcmp(pk->name, "given") ? "target " : "", strcmp(pk->name, "given") ? pk->name :
	    "given figures", strcmp(pk->name, "given") ? "the model's rates" : "peak",
	    pk->gflops, pk->gbs);
	if (standalone)
		svg_open(f, w, h, buf);
	else
		svg_panel_open(f, 0, 0, w, h);
	svg_text(f, 14, 18, NULL, "font-size=\"13\" font-weight=\"bold\"", buf);
	svg_text(f, 14, 36, NULL, NULL, "each kernel at its arithmetic intensity (flops per byte "
	    "moved) on the roof min(peak, intensity \xc3\x97 bandwidth)");
	/* axes and decade grid */
	svg_rect(f, RL_X, RL_Y, RL_W, RL_H, "#fbfbfb", "#000000", NULL);
	for (double d = a.lx0; d <= a.lx1 + 1e-9; d++) {
		double x = RL_X + (d - a.lx0) / (a.lx1 - a.lx0) * RL_W;

		svg_line(f, x, RL_Y, x, RL_Y + RL_H, "#e0e0e0", NULL);
		snprintf(buf, sizeof buf, "%g", pow(10, d));
		svg_text(f, x, RL_Y + RL_H + 14, "middle", "font-size=\"10\"", buf);
	}
	for (double d = a.ly0; d <= a.ly1 + 1e-9; d++) {
		double y = RL_Y + RL_H - (d - a.ly0) / (a.ly1 - a.ly0) * RL_H;

		svg_line(f, RL_X, y, RL_X + RL_W, y, "#e0e0e0", NULL);
		snprintf(buf, sizeof buf, "%g", pow(10, d));
		svg_text(f, RL_X - 4, y + 4, "end", "font-size=\"10\"", buf);
	}
	svg_text(f, RL_X + RL_W / 2.0, RL_Y + RL_H + 30, "middle", NULL,
	    "arithmetic intensity, flop/byte");
	svg_printf(f, "<text x=\"16\" y=\"%n\" text-anchor=\"middle\" transform=\"rotate(-90 16 "
	    "%n)\">attainable GFLOP/s</text>\n", RL_Y + RL_H / 2.0, RL_Y + RL_H / 2.0);
	/* the roof: the bandwidth slope up to the ridge, then the peak */
	{
		double x0 = pow(10, a.lx0), y0 = x0 * pk->gbs, x1 = pow(10, a.lx1);

		if (y0 < pow(10, a.ly0)) {
			y0 = pow(10, a.ly0);
			x0 = y0 / pk->gbs;
		}
		svg_printf(f, "<polyline fill=\"none\" stroke=\"#252525\" stroke-width=\"2\" "
		    "points=\"%n,%n %n,%n %n,%n\"/>\n", ax_x(&a, x0), ax_y(&a, y0),
		    ax_x(&a, ridge), ax_y(&a, pk->gflops), ax_x(&a, x1), ax_y(&a, pk->gflops));
		svg_line(f, ax_x(&a, ridge), ax_y(&a, pk->gflops), ax_x(&a, ridge), RL_Y + RL_H,
		    "#737373", "stroke-dasharray=\"4 3\"");
		snprintf(buf, sizeof buf, "ridge %.3g flop/B", ridge);
		svg_text(f, ax_x(&a, ridge) + 4, RL_Y + RL_H - 6, NULL, "font-size=\"10\" "
		    "fill=\"#525252\"", buf);
	}
	/* the kernels, numbered, and their list */
	svg_text(f, RL_X + RL_W + 30, RL_Y + 4, NULL, "font-weight=\"bold\"",
	    "kernel: intensity, bound");
	for (int i = 0; i < run->n; i++) {
		const KernelStats *k = &run->k[i];
		double ai = intensity(k), y;
		char num[16];

		if (ai <= 0)
			continue;
		nl++;
		y = ai * pk->gbs < pk->gflops ? ai * pk->gbs : pk->gflops;
		snprintf(num, sizeof num, "%d", nl);
		svg_printf(f, "<circle cx=\"%n\" cy=\"%n\" r=\"5\" fill=\"%r\" stroke=\"#000000\" "
		    "stroke-width=\"0.75\"/>\n", ax_x(&a, ai), ax_y(&a, y),
		    ai < ridge ? "#6baed6" : "#fd8d3c");
		svg_text(f, ax_x(&a, ai) + 7, ax_y(&a, y) - 6 - 9 * (nl % 3), NULL,
		    "font-size=\"9\"", num);
		if (nl <= ROOF_LIST) {
			cut(name, sizeof name, k->name, 22);
			snprintf(buf, sizeof buf, "%d @%s: %.3g flop/B, %s-bound", nl, name, ai,
			    ai < ridge ? "memory" : "compute");
			svg_text(f, RL_X + RL_W + 30, RL_Y + 4 + 16 * nl, NULL, "font-size=\"10\"",
			    buf);
		}
	}
	if (nl > ROOF_LIST) {
		snprintf(buf, sizeof buf, "(%d more not listed)", nl - ROOF_LIST);
		svg_text(f, RL_X + RL_W + 30, RL_Y + 4 + 16 * (ROOF_LIST + 1), NULL,
		    "font-size=\"10\"", buf);
	}
	{
		double y = RL_Y + RL_H + 52;

		svg_printf(f, "<circle cx=\"20\" cy=\"%n\" r=\"5\" fill=\"#6baed6\" stroke=\"#000000\" "
		    "stroke-width=\"0.75\"/>\n", y - 4);
		svg_text(f, 30, y, NULL, NULL, "memory-bound");
		svg_printf(f, "<circle cx=\"140\" cy=\"%n\" r=\"5\" fill=\"#fd8d3c\" stroke=\"#000000\" "
		    "stroke-width=\"0.75\"/>\n", y - 4);
		svg_text(f, 150, y, NULL, NULL, "compute-bound");
		if (noflop) {
			snprintf(buf, sizeof buf, "%d kernel%s without flops (pure data movement) not "
			    "placed", noflop, noflop == 1 ? "" : "s");
			svg_text(f, 270, y, NULL, "fill=\"#a50f15\"", buf);
		}
		svg_text(f, 20, y + 20, NULL, "font-size=\"10\"", "KernelStats count and do not "
		    "time: a point is what the machine allows the kernel, not a measured speed");
	}
	svg_close(f);
}

void
report_roofline_svg(FILE *f, const ReportStats *run, const ReportPeak *pk)
{
	double w, h;

	roof_draw(f, run, pk, true, &w, &h);
}

void
report_traffic_doc(FILE *f, const ReportStats *run, const ReportStats *eager,
    const ReportPeak *pk)
{
	char *t1 = NULL, *t2 = NULL;
	size_t l1 = 0, l2 = 0;
	double w1, h1, w2, h2;
	FILE *m;

	if (!(m = open_memstream(&t1, &l1)))
		AICM_BUG("open_memstream failed");
	traffic_draw(m, run, eager, false, &w1, &h1);
	fclose(m);
	if (!(m = open_memstream(&t2, &l2)))
		AICM_BUG("open_memstream failed");
	roof_draw(m, run, pk, false, &w2, &h2);
	fclose(m);
	svg_doc_open(f, (w1 > w2 ? w1 : w2) + 20, h1 + h2 + 32, "run data: traffic and roofline");
	svg_printf(f, "<g transform=\"translate(10 10)\">\n");
	fwrite(t1, 1, l1, f);
	svg_printf(f, "</g>\n<g transform=\"translate(10 %n)\">\n", h1 + 22);
	fwrite(t2, 1, l2, f);
	fputs("</g>\n", f);
	svg_close(f);
	free(t1);
	free(t2);
}
