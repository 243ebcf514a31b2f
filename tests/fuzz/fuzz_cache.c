/*
 * fuzz_cache.c: the tuning cache's reader and writer (passes/tune_cache.c),
 * text in.
 *
 * The input is a cache file's text.  What the reader takes, read(x), is
 * written and read again: read(write(read(x))) must be the same records,
 * field by field and times bit for bit, in the same order, with no warning
 * (the writer never writes a record the reader refuses, nor leaves out one
 * it took), and write must be a fixed point after one round:
 * write(read(write(read(x)))) == write(read(x)).  On the way, every record
 * read must be found by its key (the table's hash chains).  The harness
 * calls the reader and writer on memory, without the pass or a file: the
 * lock and the merge are tests/cache_race.sh's and check_tune_cache.c's.
 */
#include <stdint.h>

#include "fuzz.h"
#include "../../passes/tune_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const TuneEntry *
next_live(const TuneCache *c, int *i)
{
	while (*i < c->n && c->e[*i].drop)
		(*i)++;
	return *i < c->n ? &c->e[(*i)++] : NULL;
}

static void
same_records(const TuneCache *a, const TuneCache *b, const char *text)
{
	int i = 0, j = 0;
	const TuneEntry *x, *y;

	for (;;) {
		x = next_live(a, &i);
		y = next_live(b, &j);
		if (!x && !y)
			return;
		if (!x || !y)
			fuzz_fail(x ? "a record read was not written back" :
			    "the written text reads back with a record more", text, NULL);
		if (strcmp(x->key, y->key) != 0)
			fuzz_fail("a record read was not written back, or came back with another "
			    "key", x->key, text);
		if (x->have != y->have ||
		    memcmp(&x->c, &y->c, sizeof x->c) != 0 ||
		    memcmp(&x->score, &y->score, sizeof x->score) != 0 ||
		    x->measured != y->measured ||
		    (x->measured && memcmp(&x->ms, &y->ms, sizeof x->ms) != 0))
			fuzz_fail("a record changed through write and read", x->key, text);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	TuneCache c1 = {.path = "fuzz.cache"}, c2 = {.path = "fuzz.cache"};
	Diag d1, d2;
	char *s1, *s2;
	size_t n1, n2;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	diag_init(&d1, "fuzz.aicm", "", 0, fuzz_sink());
	tune_cache_parse(&c1, (const char *)data, size, &d1);
	for (int i = 0; i < c1.n; i++)
		if (tune_cache_find(&c1, c1.e[i].key) != &c1.e[i])
			fuzz_fail("a record read is not found by its key", c1.e[i].key, NULL);
	s1 = tune_cache_format(&c1, &n1);
	if (strlen(s1) != n1)
		fuzz_fail("the written text has a NUL byte", s1, NULL);
	diag_init(&d2, "fuzz.aicm", "", 0, fuzz_sink());
	tune_cache_parse(&c2, s1, n1, &d2);
	if (d2.nwarn != 0 || c2.dirty)
		fuzz_fail("the written text reads back with a warning", s1, NULL);
	same_records(&c1, &c2, s1);
	s2 = tune_cache_format(&c2, &n2);
	if (n1 != n2 || memcmp(s1, s2, n1) != 0)
		fuzz_fail("write(read(write(read(x)))) differs from write(read(x))", s1, s2);
	free(s1);
	free(s2);
	tune_cache_free(&c1);
	tune_cache_free(&c2);
	diag_free(&d1);
	diag_free(&d2);
	return 0;
}
