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
#include "diag.h"

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

long long
cli_parse_flops(const char *opt, const char *s)
{
	static const struct { char suf; double mul; } sufs[] = {
		{'k', 1e3}, {'M', 1e6}, {'G', 1e9}, {'T', 1e12}, {'P', 1e15},
	};
	size_t n = strspn(s, "0123456789.eE+-");
	char num[64], *end;
	double v, mul = 1;

	/* strtod alone would also take "inf", "0x1p40" and leading blanks */
	if (*s < '0' || *s > '9' || n >= sizeof num)
		goto bad;
	memcpy(num, s, n);
	num[n] = '\0';
	v = strtod(num, &end);
	if (*end != '\0')
		goto bad;
	if (s[n] != '\0') {
		size_t k = 0;

		while (k < sizeof sufs / sizeof sufs[0] && sufs[k].suf != s[n])
			k++;
		if (k == sizeof sufs / sizeof sufs[0] || s[n + 1] != '\0')
			goto bad;
		mul = sufs[k].mul;
	}
	v *= mul;
	if (!(v < 9.2e18))
		cli_usage_error("%s=%s is more than 2^63 flops", opt, s);
	if (v != (double)(long long)v)
		cli_usage_error("%s wants a whole number of flops, not '%s'", opt, s);
	return (long long)v;
bad:
	cli_usage_error("%s wants a flop count such as 1e12, 500G or 2T, not '%s'", opt, s);
}

int
cli_flush_stdout(void)
{
	if (fflush(stdout) == 0)
		return 0;
	fprintf(stderr, "%s: error: cannot write the output: %s\n", cli_tool, strerror(errno));
	return 2;
}

char *
cli_data_dir(const char *dir, const char *input)
{
	const char *slash;
	char *r;

	if (dir)
		return xstrdup(dir);
	if (!strcmp(input, "-") || !(slash = strrchr(input, '/')))
		return xstrdup(".");
	if (slash == input)
		return xstrdup("/");
	r = xstrdup(input);
	r[slash - input] = '\0';
	return r;
}
