/*
 * check_util.c: helpers the unit suites share (not a suite itself).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "exec.h"
#include "parse.h"
#include "pass.h"
#include "../passes/passes.h"

const char ck_seed_text[] =
    "// the seed's scenario 1 (DESIGN section 10.1)\n"
    "graph {\n"
    "  %x = input() : (64, 48)\n"
    "  %W = const() : (48, 32)\n"
    "  %bias = const() : (32,)\n"
    "  %mm = matmul(%x, %W)\n"
    "  %bias_add = add(%mm, %bias)\n"
    "  %relu = relu(%bias_add)\n"
    "  %rowsum = sum(%relu) axis=1 keepdims=True\n"
    "}\n";

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

Graph *
ck_pipeline(const char *src, const char *pipeline)
{
	Graph *g = ck_parse(src, NULL);
	Diag d;
	FILE *sink = fopen("/dev/null", "w");
	int rc;

	if (!g || !sink) {
		if (sink)
			fclose(sink);
		ir_graph_free(g);
		return NULL;
	}
	diag_init(&d, "t.aicm", src, strlen(src), sink);
	rc = pass_run_text(aicm_passes, g, pipeline, &d, sink, "check");
	diag_free(&d);
	fclose(sink);
	if (rc != 0) {
		ir_graph_free(g);
		return NULL;
	}
	return g;
}

void
ck_fill_sources(const Graph *g, Tensor *vals, uint64_t seed)
{
	for (int i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].tile && ir_ops[g->nodes[i].op].cls == OC_SOURCE) {
			ck_assert_int_eq(exec_tensor_alloc(&vals[i], &g->nodes[i].type, 0), 0);
			exec_fill_random(&vals[i], seed, g->nodes[i].name);
		}
}

char *
ck_slurp(const char *path)
{
	char *buf;
	size_t len;

	ck_assert_int_eq(aicm_read_file(path, &buf, &len), 0);
	return buf;
}

void
ck_tmpdir(char *dir, size_t size, const char *tag)
{
	ck_assert_int_lt(snprintf(dir, size, "/tmp/aicm-%s.XXXXXX", tag), (int)size);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

void
ck_tmpdir_remove(const char *dir)
{
	char cmd[128];

	ck_assert_int_lt(snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir), (int)sizeof cmd);
	ck_assert_int_eq(system(cmd), 0);
}
