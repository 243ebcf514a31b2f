/*
 * fuzz_verifydiag.c: aicm-opt --verify-diagnostics, text in.
 *
 * The expected-* comments are read by diag_verify (src/ir/diag.c), which
 * neither fuzz_parse nor fuzz_opt calls: they print what the parser says
 * and never match it against the input's comments.  Here the input is
 * parsed and verified as aicm-opt does with the diagnostics collected,
 * then matched against its own comments, so that the comment reader meets
 * every offset (the '@+2147483647' that overflowed, issue 14 item 6),
 * malformed place and brace the fuzzer can make.  The error limit varies
 * with the input's length (off, 10, 20), so the stop path runs too.
 */
#include <limits.h>
#include <stdint.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Diag d;
	Graph *g;
	int bad;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	diag_init(&d, "fuzz", (const char *)data, size, fuzz_sink());
	d.collect = true;
	d.errlimit = (int)(size % 3) * 10;
	g = parse_graph((const char *)data, size, 1, &d);
	if (g && ir_verify(g, &d) != 0) {
		ir_graph_free(g);
		g = NULL;
	}
	bad = diag_verify(&d, 1, INT_MAX);
	if (bad < 0 || d.nrecs != 0 || !d.collect)
		fuzz_fail("diag_verify left its records or its mode behind", NULL, NULL);
	ir_graph_free(g);
	diag_free(&d);
	return 0;
}
