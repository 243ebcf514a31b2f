/*
 * check_main.c: the one Check runner for every unit suite.
 *
 * Each tests/check_<module>.c exports make_<module>_suite(); the list of
 * suites is tests/suites.def, one line each, so that adding a suite is one
 * line there.  Select with CK_RUN_SUITE / CK_RUN_CASE; leak runs use
 * CK_FORK=no (Check's own advice).  AICM_CHECK_SHARD=I/N runs only the
 * suites whose line number in suites.def is I modulo N, so that
 * check-valgrind can run N memcheck processes side by side (memcheck keeps
 * a process on one core).
 */
#include <stdio.h>
#include <stdlib.h>

#include <check.h>

#include "check_aicm.h"

int
main(void)
{
	SRunner *sr = srunner_create(NULL);
	const char *shard = getenv("AICM_CHECK_SHARD");
	int failed, k = 0, si = 0, sn = 1;

	if (shard && (sscanf(shard, "%d/%d", &si, &sn) != 2 || sn < 1 || si < 0 || si >= sn)) {
		fprintf(stderr, "check_aicm: AICM_CHECK_SHARD is '%s'; expected I/N with 0 <= I < N\n",
		    shard);
		return EXIT_FAILURE;
	}
#define SUITE(name) \
	if (k++ % sn == si) \
		srunner_add_suite(sr, make_##name##_suite());
#include "suites.def"
#undef SUITE
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
