/*
 * fuzz_pipeline_text.c: the pass pipeline's parser and printer, text in.
 *
 * The input is a pipeline as --pass takes it.  What parses is printed as
 * --dump-pipeline prints it (pass_print_pipeline: every option, defaults
 * included, unwritten no-default options left out); that print must parse,
 * print the same text again (a fixed point), and mean the same: the same
 * passes in the same order, every option with the same value (a float to
 * the bit), and the options with no default written in one exactly when in
 * the other (pass_is_set is what autotune reads them by).  A crash
 * reproducer's RUN line and a tuning cache key are made of this print, so
 * a pipeline that does not read back as itself reruns something else.
 * Error messages go to /dev/null; their code runs.
 */
#include <stdint.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* pass_print_pipeline into a string, without its final newline. */
static char *
print_str(const Pipeline *pl)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		abort();
	pass_print_pipeline(f, pl);
	if (fclose(f) != 0)
		abort();
	if (n == 0 || buf[n - 1] != '\n' || memchr(buf, '\n', n - 1))
		fuzz_fail("the pipeline does not print as one line", buf, NULL);
	buf[n - 1] = '\0';
	return buf;
}

static void
same_value(const PassOpt *o, const PassVal *a, const PassVal *b, const char *t1,
    const char *t2)
{
	bool same = true;

	/* A default written out is set in the reprint; only an option with
	 * no default means something by being set (pass.h). */
	if (o->def[0] == '(' && a->set != b->set)
		fuzz_fail("an option with no default is set in one pipeline only", t1, t2);
	if (o->def[0] == '(' && !a->set)
		return;
	switch (o->kind) {
	case PO_BOOL:
		same = a->b == b->b;
		break;
	case PO_INT:
		same = a->i == b->i;
		break;
	case PO_FLOAT:
		same = memcmp(&a->f, &b->f, sizeof a->f) == 0;
		break;
	case PO_STRING:
		same = !strcmp(a->s ? a->s : "", b->s ? b->s : "");
		break;
	}
	if (!same) {
		fprintf(stderr, "fuzz: option '%s'\n", o->key);
		fuzz_fail("an option reads back with another value", t1, t2);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Pipeline p1, p2;
	char *text, *t1, *t2;

	if (size > FUZZ_MAX_INPUT || memchr(data, '\0', size))
		return 0;
	text = xmalloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	if (pass_parse_pipeline(aicm_passes, text, &p1, fuzz_sink(), "fuzz") != 0) {
		free(text);
		return 0;
	}
	t1 = print_str(&p1);
	if (pass_parse_pipeline(aicm_passes, t1, &p2, stderr, "fuzz") != 0)
		fuzz_fail("the printed pipeline does not parse (above)", text, t1);
	t2 = print_str(&p2);
	if (strcmp(t1, t2) != 0)
		fuzz_fail("print(parse(print(parse(p)))) differs from print(parse(p))", t1, t2);
	if (p1.n != p2.n)
		fuzz_fail("the printed pipeline has another number of passes", t1, t2);
	for (int i = 0; i < p1.n; i++) {
		int k = 0;

		if (p1.p[i].pass != p2.p[i].pass)
			fuzz_fail("the printed pipeline has other passes", t1, t2);
		for (const PassOpt *o = p1.p[i].pass->opts; o && o->key; o++, k++)
			same_value(o, &p1.p[i].vals[k], &p2.p[i].vals[k], text, t1);
	}
	pass_free_pipeline(&p1);
	pass_free_pipeline(&p2);
	free(t1);
	free(t2);
	free(text);
	return 0;
}
