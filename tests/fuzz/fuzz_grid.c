/*
 * fuzz_grid.c: the tile grid picture (src/report/svg_grid.c), text in.
 *
 * The input is a graph, tiled or not: parsed, verified, given shape-infer
 * if untyped and lower-tiled's defaults where not lowered, as aicm-run
 * would run it.  Then every lowered kernel is drawn into memory.  The
 * picture evaluates the scalar part of each body for the programs of the
 * grid, so a written grid of 2^60 programs, loops of 2^50 trips and
 * indices near the verifier's bounds must all come out bounded (capped and
 * said), never crash, overflow or hang; and every attribute must be a
 * finite number or a word (no nan, no inf).
 */
#include <stdint.h>

#include "fuzz_exec.h"
#include "fuzz_svg.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char *svg = NULL;
	size_t len = 0;
	Graph *g;
	Diag d;
	FILE *f;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	diag_init(&d, "fuzz", text, size, fuzz_sink());
	g = parse_graph(text, size, 1, &d);
	if (!g || ir_verify(g, &d) != 0)
		goto out;
	if (fuzz_untyped(g) && fuzz_run_pipeline(g, "shape-infer", NULL, false, &d) != 0)
		goto out;
	if (fuzz_unlowered(g) && fuzz_run_pipeline(g, "lower-tiled", NULL, false, &d) != 0)
		goto out;
	if (!(f = open_memstream(&svg, &len)))
		abort();
	report_grid_doc(f, g);
	fclose(f);
	if (fuzz_bad_attr(svg, len))
		fuzz_fail("a grid picture's attribute holds nan or inf, or is not closed", svg, NULL);
	free(svg);
out:
	ir_graph_free(g);
	diag_free(&d);
	return 0;
}
