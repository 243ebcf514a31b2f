/*
 * fail.c: the AOT test's failing program (tests/aot.sh): bad_run on
 * tests/aot/fail.aicm, whose first kernel (a gather) meets an index out of
 * range and whose second would divide an integer by zero.  The run must
 * end at the first failing kernel with its code, -2; it prints the code.
 */
#include <stdio.h>

#include "bad.h"

int
main(void)
{
	static double x[bad_x_NUMEL], g[bad_g_NUMEL];
	static const int64_t i[bad_i_NUMEL] = {0, 4, -5, 2, 7, -6};
	static const int32_t a_1[bad_a_1_NUMEL] = {1, 2, 3, 4}, z[bad_z_NUMEL] = {1, 0, 1, 0};
	static int32_t q[bad_q_NUMEL];
	bad_args a = {.x = x, .a_1 = a_1, .z = z, .i = i, .g = g, .q = q};

	printf("bad_run: %d\n", bad_run(&a, 2));
	return 0;
}
