/*
 * check_main.c: the one Check runner for every unit suite.
 *
 * Each tests/check_<module>.c exports make_<module>_suite(); the list of
 * suites is tests/suites.def, one line each, so that adding a suite is one
 * line there.  Select with CK_RUN_SUITE / CK_RUN_CASE; leak runs use
 * CK_FORK=no (Check's own advice).
 */
#include <stdlib.h>

#include <check.h>

#include "check_aicm.h"

int
main(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed;

#define SUITE(name) srunner_add_suite(sr, make_##name##_suite());
#include "suites.def"
#undef SUITE
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
