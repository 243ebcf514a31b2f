/*
 * fuzz.h: what the libFuzzer harnesses share.
 *
 * Each harness is one LLVMFuzzerTestOneInput over a library entry point,
 * built by 'make fuzz' with ASan+UBSan and AICM_FUZZ (AICM_BUG aborts, so
 * an internal error is a crash the fuzzer keeps).  Beyond "no crash, no
 * leak", the harnesses check properties that must hold for every input:
 * a graph that parses and verifies prints to text that parses back to the
 * same print (DESIGN §2's round trip), and a pass that succeeds leaves IR
 * that verifies.  A broken property aborts with both texts on stderr.
 * Diagnostics go to /dev/null: their code runs (quoting, carets), their
 * text is not the point here; the golden tests check it.
 */
#ifndef AICM_FUZZ_H
#define AICM_FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ir.h"
#include "parse.h"
#include "pass.h"
#include "../../passes/passes.h"

/* Inputs past this are cut: a longer text finds nothing a shorter one
 * cannot, and slow runs starve the search. */
enum { FUZZ_MAX_INPUT = 1 << 16 };

static inline FILE *
fuzz_sink(void)
{
	static FILE *sink;

	if (!sink && !(sink = fopen("/dev/null", "w")))
		abort();
	return sink;
}

static inline _Noreturn void
fuzz_fail(const char *what, const char *a, const char *b)
{
	fprintf(stderr, "fuzz: %s\n", what);
	if (a)
		fprintf(stderr, "----- first -----\n%s", a);
	if (b)
		fprintf(stderr, "----- second -----\n%s", b);
	abort();
}

/* parse(print(g)), checked: the print parses back, verifies, and prints
 * the same (print(parse(print(g))) == print(g)).  The text goes to *text
 * when text is not NULL (the caller frees it and the graph). */
static inline Graph *
fuzz_reparse(const Graph *g, char **text, size_t *len)
{
	size_t n1, n2;
	char *s1 = ir_print_str(g, &n1), *s2;
	Diag d;
	Graph *g2;

	diag_init(&d, "round-trip", s1, n1, stderr);
	g2 = parse_graph(s1, n1, 1, &d);
	if (!g2)
		fuzz_fail("the printed graph does not parse back (diagnostics above)", s1, NULL);
	if (ir_verify(g2, &d) != 0)
		fuzz_fail("the printed graph parses back but does not verify", s1, NULL);
	s2 = ir_print_str(g2, &n2);
	if (n1 != n2 || memcmp(s1, s2, n1) != 0)
		fuzz_fail("print(parse(print(g))) differs from print(g)", s1, s2);
	free(s2);
	diag_free(&d);
	if (text) {
		*text = s1;
		*len = n1;
	} else {
		free(s1);
	}
	return g2;
}

/* print(parse(print(g))) == print(g), and the reparsed graph verifies. */
static inline void
fuzz_round_trip(const Graph *g)
{
	ir_graph_free(fuzz_reparse(g, NULL, NULL));
}

#endif
