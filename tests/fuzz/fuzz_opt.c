/*
 * fuzz_opt.c: the whole aicm-opt pipeline, text in.
 *
 * The input is a graph, optionally preceded by a first line
 * '//P: PIPELINE' that picks the passes and their options (so the pipeline
 * parser and every option value are fuzzed too); without it every pass in
 * aicm_passes (passes/registry.c) runs, in registry order, with its
 * defaults, so a pass registered later is fuzzed without touching this
 * file.  A pass may
 * refuse its input with a diagnostic; what it may not do is crash, leak,
 * or hand on IR that does not verify or does not survive the printer's
 * round trip.  Options that name files (a tuning cache) are refused, so
 * that the fuzzer writes nothing.
 */
#include <stdint.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
all_passes(Pipeline *pl)
{
	char text[1024];
	size_t m = 0;

	text[0] = '\0';
	for (int i = 0; aicm_passes[i]; i++)
		m += (size_t)snprintf(text + m, sizeof text - m, "%s%s", i ? "," : "",
		    aicm_passes[i]->name);
	return pass_parse_pipeline(aicm_passes, text, pl, stderr, "fuzz");
}

/* A pipeline from the input's first line, or -1 to skip the input. */
static int
own_pipeline(const char *text, size_t len, Pipeline *pl)
{
	char *s = xmalloc(len + 1);
	int r;

	memcpy(s, text, len);
	s[len] = '\0';
	if (strlen(s) != len || strstr(s, "cache")) {
		free(s);
		return -1;
	}
	r = pass_parse_pipeline(aicm_passes, s, pl, fuzz_sink(), "fuzz");
	free(s);
	return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	Pipeline pl;
	Diag d;
	Graph *g;
	size_t off = 0;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	if (size >= 4 && !memcmp(text, "//P:", 4)) {
		const char *nl = memchr(text, '\n', size);
		size_t end = nl ? (size_t)(nl - text) : size;

		if (own_pipeline(text + 4, end - 4, &pl) != 0)
			return 0;
	} else if (all_passes(&pl) != 0) {
		abort();
	}
	diag_init(&d, "fuzz", text, size, fuzz_sink());
	g = parse_graph(text + off, size - off, 1, &d);
	if (g && ir_verify(g, &d) != 0) {
		ir_graph_free(g);
		g = NULL;
	}
	for (int i = 0; g && i < pl.n; i++) {
		const PassInst *pi = &pl.p[i];
		PassArgs a = {pi->pass->opts, pi->vals, fuzz_sink(), i % 2 == 1, NULL};
		int nerr = d.nerr;

		if (pi->pass->run(g, &a, &d) != 0) {
			if (d.nerr == nerr)
				fuzz_fail("a pass failed without an error", pi->pass->name, NULL);
			break;
		}
		if (d.nerr != nerr)
			fuzz_fail("a pass reported an error but succeeded", pi->pass->name, NULL);
		d.out = stderr;
		if (ir_verify(g, &d) != 0) {
			char *s = ir_print_str(g, NULL);

			fuzz_fail("the IR does not verify after a pass (above)", pi->pass->name, s);
		}
		d.out = fuzz_sink();
		fuzz_round_trip(g);
	}
	ir_graph_free(g);
	diag_free(&d);
	pass_free_pipeline(&pl);
	return 0;
}
