/*
 * svg.h: the small SVG writer that every picture of the report layer uses
 * (not part of report.h's interface).
 *
 * One rule for numbers (svg_num: at most two decimals, trailing zeros and
 * a negative zero dropped), so that goldens do not depend on how a libc
 * rounds the last digit of a long fraction; one escape for text and
 * attribute values; and presentation attributes only, no <style> and no
 * ids, because several pictures inlined into one HTML page must not
 * restyle or shadow one another.
 */
#ifndef AICM_SVG_H
#define AICM_SVG_H

#include <stdio.h>

/* The font, sizes and the colours the pictures share. */
#define SVG_FONT "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\""

/* An <svg> element of w x h px with xmlns, a <title> and a white
 * background; svg_close ends it. */
void svg_open(FILE *f, double w, double h, const char *title);
void svg_close(FILE *f);
/* The XML prolog of a standalone document, and its outer <svg>. */
void svg_doc_open(FILE *f, double w, double h, const char *title);
/* A panel inside a document: a nested <svg> at x, y. */
void svg_panel_open(FILE *f, double x, double y, double w, double h);
void svg_num(FILE *f, double v);
/* Prints fmt with these conversions only: %n a double (svg_num), %s a
 * string escaped, %r a string raw (markup of our own), %d an int, %l an
 * int64_t, %% a percent sign. */
void svg_printf(FILE *f, const char *fmt, ...);
void svg_rect(FILE *f, double x, double y, double w, double h, const char *fill,
    const char *stroke, const char *extra);
/* Text at x, y (anchor start, middle or end), escaped. */
void svg_text(FILE *f, double x, double y, const char *anchor, const char *extra,
    const char *text);
void svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *stroke,
    const char *extra);
/* A byte count in three significant digits at most: "88.5 KB", "144 KB"
 * (1 KB = 1000 B, as KernelStats count; the pictures' labels are short). */
void svg_bytes(char *buf, size_t n, double bytes);

#endif
