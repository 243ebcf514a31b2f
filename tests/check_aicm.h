/*
 * check_aicm.h: the suites of the unit tests, and small helpers they share.
 */
#ifndef CHECK_AICM_H
#define CHECK_AICM_H

#include <check.h>

#include "diag.h"
#include "ir.h"

#define SUITE(name) Suite *make_##name##_suite(void);
#include "suites.def"
#undef SUITE

/* Parses src (a whole graph) with diagnostics going to a memory stream;
 * returns the graph or NULL, and the messages in *msgs (malloc'd, may be
 * NULL when not wanted).  check_util.c. */
Graph *ck_parse(const char *src, char **msgs);

#endif
