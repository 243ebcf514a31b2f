/*
 * cli.h: the command-line layer both tools share.
 *
 * aicm-opt and aicm-run read options the same way ("--name=value" or
 * "--name value") and treat a wrong command line and an output that cannot
 * be written the same way: one "TOOL: error: ..." line and exit 2 (DESIGN
 * §4).  Each tool's main file defines cli_tool, the name those lines start
 * with.  Like measure.c this layer is linked into both tools, never into
 * libaicm.a.
 */
#ifndef AICM_CLI_H
#define AICM_CLI_H

/* Defined by each tool: "aicm-opt", "aicm-run". */
extern const char *const cli_tool;

/* Prints "TOOL: error: MSG" and a pointer to --help to stderr; exits 2. */
_Noreturn void cli_usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Matches argv[*i] against "--name=value" or "--name value" (then *i moves
 * to the value); returns the value, or NULL when argv[*i] is another
 * option.  "--name" as the last argument is a usage error. */
const char *cli_optval(int argc, char **argv, int *i, const char *name);

/* An integer option's value in lo..hi; anything else is a usage error
 * naming opt. */
long long cli_parse_int(const char *opt, const char *s, long long lo, long long hi);

/* A flop count (--max-work): a number such as 1e12, 2.5T or 1500 with an
 * optional k, M, G, T or P (powers of 1000, as GFLOP counts are), a whole
 * count below 2^63; anything else is a usage error naming opt. */
long long cli_parse_flops(const char *opt, const char *s);

/* The data directory of const file= paths: dir (--data-dir) when given,
 * else the folder of input ("." for "-", stdin).  Malloc'd. */
char *cli_data_dir(const char *dir, const char *input);

/* Flushes stdout; 0, or 2 after "TOOL: error: cannot write the output:
 * REASON" (a full disk, a closed pipe). */
int cli_flush_stdout(void);

#endif
