/*
 * check_util.c: helpers the unit suites share (not a suite itself).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "parse.h"
#include "pass.h"

Graph *
ck_parse(const char *src, char **msgs)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	Diag d;
	Graph *g;

	diag_init(&d, "t.aicm", src, strlen(src), f);
	g = parse_graph(src, strlen(src), 1, &d);
	if (g && ir_verify(g, &d) != 0) {
		ir_graph_free(g);
		g = NULL;
	}
	diag_free(&d);
	fclose(f);
	if (msgs)
		*msgs = buf;
	else
		free(buf);
	return g;
}
