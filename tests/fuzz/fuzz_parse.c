/*
 * fuzz_parse.c: the front end, text in.
 *
 * Any bytes go to parse_graph; what parses is verified, and what verifies
 * must survive the round trip through the printer (fuzz.h).  Graphs with
 * tiled kernels take the same road, so this covers the tile IR's parser,
 * verifier and printer too.
 */
#include <stdint.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Diag d;
	Graph *g;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	diag_init(&d, "fuzz", (const char *)data, size, fuzz_sink());
	g = parse_graph((const char *)data, size, 1, &d);
	if (g && ir_verify(g, &d) == 0)
		fuzz_round_trip(g);
	ir_graph_free(g);
	diag_free(&d);
	return 0;
}
