/*
 * tile_loop.c: what a tile `for` runs, asked in one place.
 *
 * The executor's planner, the run's work bound (--max-work) and the fuzz
 * harnesses all multiply trip counts; they used to count them three ways
 * (int64 with an overflow net, unsigned, and in doubles), which agreed
 * only because the verifier keeps loop bounds within +-2^50.  One count
 * now, exact wherever it fits.
 */
#include <stdint.h>

#include "tile.h"

int64_t
tile_trips(const TileInst *fo)
{
	int64_t span;

	if (fo->step <= 0 || fo->hi <= fo->lo)
		return 0;
	if (__builtin_sub_overflow(fo->hi, fo->lo, &span))
		return INT64_MAX;
	return (span - 1) / fo->step + 1;
}
