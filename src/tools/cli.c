/*
 * cli.c: the option reading and command-line errors aicm-opt and aicm-run
 * share (cli.h).  What both tools say about a wrong command line is written
 * once here, so that the two cannot drift apart: the goldens under
 * testdata/opt and testdata/run hold every message.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

_Noreturn void
cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: error: ", cli_tool);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see '%s --help')\n", cli_tool);
	exit(2);
}

const char *
cli_optval(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] == '\0') {
		if (*i + 1 >= argc)
			cli_usage_error("option '%s' needs a value", name);
		return argv[++*i];
	}
	return NULL;
}

long long
cli_parse_int(const char *opt, const char *s, long long lo, long long hi)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno || v < lo || v > hi)
		cli_usage_error("%s wants an integer from %lld to %lld, not '%s'", opt, lo, hi, s);
	return v;
}

int
cli_flush_stdout(void)
{
	if (fflush(stdout) == 0)
		return 0;
	fprintf(stderr, "%s: error: cannot write the output: %s\n", cli_tool, strerror(errno));
	return 2;
}
