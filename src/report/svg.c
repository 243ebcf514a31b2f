/*
 * svg.c: the report layer's SVG writer (svg.h).
 *
 * Everything the pictures print goes through svg_printf, so that every
 * number takes svg_num's one rule and every string from the IR (a kernel
 * named '@a<b', a file name) is escaped once, here, for text and
 * attributes alike.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "diag.h"
#include "svg.h"

/* Text for XML 1.0: the five entities, and '?' for the control bytes it
 * does not allow. */
static void
svg_esc(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			/* XML 1.0 has no control characters but tab and newline */
			if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n')
				fputc('?', f);
			else
				fputc(*s, f);
		}
}

void
svg_num(FILE *f, double v)
{
	char b[64];
	size_t n;

	if (!isfinite(v))
		v = 0;   /* never drawn: a caller's guard failed; keep the XML valid */
	snprintf(b, sizeof b, "%.2f", v);
	n = strlen(b);
	while (n > 0 && b[n - 1] == '0')
		b[--n] = '\0';
	if (n > 0 && b[n - 1] == '.')
		b[--n] = '\0';
	fputs(strcmp(b, "-0") ? b : "0", f);
}

void
svg_printf(FILE *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			fputc(*p, f);
			continue;
		}
		switch (*++p) {
		case 'n': svg_num(f, va_arg(ap, double)); break;
		case 's': svg_esc(f, va_arg(ap, const char *)); break;
		case 'r': fputs(va_arg(ap, const char *), f); break;
		case 'd': fprintf(f, "%d", va_arg(ap, int)); break;
		case 'l': fprintf(f, "%lld", (long long)va_arg(ap, int64_t)); break;
		case '%': fputc('%', f); break;
		default: AICM_BUG("svg_printf: conversion '%%%c'", *p);
		}
	}
	va_end(ap);
}

void
svg_open(FILE *f, double w, double h, const char *title)
{
	svg_printf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%n\" height=\"%n\" "
	    "viewBox=\"0 0 %n %n\" %r>\n<title>%s</title>\n", w, h, w, h, SVG_FONT, title);
	svg_rect(f, 0, 0, w, h, "#ffffff", NULL, NULL);
}

void
svg_close(FILE *f)
{
	fputs("</svg>\n", f);
}

void
svg_doc_open(FILE *f, double w, double h, const char *title)
{
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	svg_open(f, w, h, title);
}

void
svg_panel_open(FILE *f, double x, double y, double w, double h)
{
	svg_printf(f, "<svg x=\"%n\" y=\"%n\" width=\"%n\" height=\"%n\">\n", x, y, w, h);
}

void
svg_rect(FILE *f, double x, double y, double w, double h, const char *fill,
    const char *stroke, const char *extra)
{
	svg_printf(f, "<rect x=\"%n\" y=\"%n\" width=\"%n\" height=\"%n\" fill=\"%r\"", x, y, w, h,
	    fill ? fill : "none");
	if (stroke)
		svg_printf(f, " stroke=\"%r\"", stroke);
	if (extra)
		svg_printf(f, " %r", extra);
	fputs("/>\n", f);
}

void
svg_text(FILE *f, double x, double y, const char *anchor, const char *extra, const char *text)
{
	svg_printf(f, "<text x=\"%n\" y=\"%n\"", x, y);
	if (anchor && strcmp(anchor, "start"))
		svg_printf(f, " text-anchor=\"%r\"", anchor);
	if (extra)
		svg_printf(f, " %r", extra);
	svg_printf(f, ">%s</text>\n", text);
}

void
svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *stroke,
    const char *extra)
{
	svg_printf(f, "<line x1=\"%n\" y1=\"%n\" x2=\"%n\" y2=\"%n\" stroke=\"%r\"", x1, y1, x2, y2,
	    stroke);
	if (extra)
		svg_printf(f, " %r", extra);
	fputs("/>\n", f);
}

/* Scaled to three significant digits at most, with the unit's prefix. */
void
svg_bytes(char *buf, size_t n, double bytes)
{
	static const char *const pre[] = {" ", " K", " M", " G", " T", " P", " E"};
	int i = 0;

	while (fabs(bytes) >= 1000 && i < 6) {
		bytes /= 1000;
		i++;
	}
	snprintf(buf, n, "%.*f%sB", i == 0 ? 0 : fabs(bytes) < 10 ? 2 : fabs(bytes) < 100 ? 1 : 0,
	    bytes, pre[i]);
}
