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

/* The seed's mlp, scenario 1 of DESIGN section 10.1, untyped but for its
 * sources; line 1 a comment, so %x is on line 3.  check_util.c. */
extern const char ck_seed_text[];
/* Parses src (a whole graph) with diagnostics going to a memory stream;
 * returns the graph or NULL, and the messages in *msgs (malloc'd, may be
 * NULL when not wanted).  check_util.c. */
Graph *ck_parse(const char *src, char **msgs);
/* src parsed and run through pipeline (verifying after each pass); NULL on
 * any error, its messages dropped. */
Graph *ck_pipeline(const char *src, const char *pipeline);
/* Allocates and fills g's source tensors (not tiled) in vals with the
 * documented random values of seed. */
struct Tensor;
void ck_fill_sources(const Graph *g, struct Tensor *vals, uint64_t seed);
/* The whole of a file, malloc'd; the read must succeed. */
char *ck_slurp(const char *path);
/* A fresh folder /tmp/aicm-TAG.XXXXXX in dir (size bytes), and its removal
 * with everything in it: the fixtures of the suites that write files. */
void ck_tmpdir(char *dir, size_t size, const char *tag);
void ck_tmpdir_remove(const char *dir);

#endif
