/*
 * fuzz_svg.h: the check the picture harnesses share (fuzz_stats.c,
 * fuzz_grid.c): no attribute value of an SVG text holds "nan" or "inf"
 * (every coordinate finite), and every one is closed.  One pass over the
 * text: a picture of 64 panels is megabytes, and strstr from every
 * attribute would be quadratic under ASan.
 */
#ifndef AICM_FUZZ_SVG_H
#define AICM_FUZZ_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

static inline bool
fuzz_bad_attr(const char *s, size_t n)
{
	size_t i = 0;

	while (i + 1 < n) {
		if (s[i] != '=' || s[i + 1] != '"') {
			i++;
			continue;
		}
		for (i += 2; i < n && s[i] != '"'; i++)
			if (i + 3 <= n && (!strncmp(s + i, "nan", 3) || !strncmp(s + i, "inf", 3)))
				return true;
		if (i >= n)
			return true;
		i++;
	}
	return false;
}

#endif
