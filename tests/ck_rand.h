/*
 * ck_rand.h: the xorshift64 step (Marsaglia's 13, 7, 17) that the tests'
 * pseudo-random inputs come from: the unit suites (check_simd.c) and the
 * stand-alone programs tests/native.sh builds against the generated C
 * (native/vdiv.c, native/vexp.c).  A header alone, C99, with nothing of
 * the library, because those programs are built without it; one step
 * for all of them, so their sequences stay what they were.
 */
#ifndef CK_RAND_H
#define CK_RAND_H

#include <stdint.h>

/* Advances *s (never 0) by one step and returns the new state. */
static inline uint64_t
ck_xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#endif
