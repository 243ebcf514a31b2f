/*
 * diag.h: diagnostics about the input, clang/mlir-opt style.
 *
 * A Diag keeps the input buffer and a table of line starts, so that any
 * layer can quote the offending line and underline the token; messages go
 * to a stream (stderr) as they come, or, under --verify-diagnostics, into a
 * list that the tool matches against the input's expected-* comments.
 * Errors are counted and the work goes on where it can; the tool prints a
 * summary at the end.  Past an error limit (clang's -ferror-limit) the
 * Diag prints "too many errors; stopping" once and nothing after it, and
 * says so in 'stopped', which the parser and the tools check to stop.
 */
#ifndef AICM_DIAG_H
#define AICM_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ir.h"

typedef enum Severity { SEV_ERROR, SEV_WARNING, SEV_NOTE, SEV_REMARK } Severity;

typedef struct DiagRec {
	Severity sev;
	Loc loc;
	char *msg;
} DiagRec;

typedef struct Diag {
	const char *file;            /* as the user named it; "<stdin>" for - */
	const char *buf;
	size_t len;
	int *linestart;              /* byte offset of each line, 1-based index */
	int nlines;
	FILE *out;
	int nerr, nwarn;             /* every one reported, printed or not */
	int errlimit;                /* errors printed before stopping; 0: none */
	int nshown;                  /* errors printed */
	bool stopped;                /* the limit was passed: nothing more is printed */
	bool collect;                /* record instead of printing (no limit) */
	DiagRec *recs;
	int nrecs, caprecs;
} Diag;

/* The tools' --error-limit default, as clang's -ferror-limit. */
enum { DIAG_ERROR_LIMIT = 20 };

/* diag.c */
/* Starts with no error limit; a tool sets errlimit from --error-limit. */
void diag_init(Diag *d, const char *file, const char *buf, size_t len, FILE *out);
void diag_free(Diag *d);
void diag_report(Diag *d, Severity s, Loc loc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A diagnostic about no place in particular. */
#define LOC_NONE ((Loc){0})
#define diag_error(d, loc, ...) diag_report((d), SEV_ERROR, (loc), __VA_ARGS__)
#define diag_note(d, loc, ...) diag_report((d), SEV_NOTE, (loc), __VA_ARGS__)
#define diag_warning(d, loc, ...) diag_report((d), SEV_WARNING, (loc), __VA_ARGS__)
#define diag_remark(d, loc, ...) diag_report((d), SEV_REMARK, (loc), __VA_ARGS__)
/* --verify-diagnostics (as mlir-opt's): matches the records collected so
 * far against the comments 'expected-SEV[@+N|@-N|@N|@above|@below]
 * {{text}}' on lines first..last, prints every diagnostic that no comment
 * expects, every comment that no diagnostic meets and every malformed
 * comment (one that names no line of the input included) as errors,
 * clears the records and returns how many there were. */
int diag_verify(Diag *d, int first, int last);
/* How many lines the buffer has (the first call builds the line table, as the first quote does). */
int diag_nlines(const Diag *d);
/* The text of line n (1-based) without its newline; *len gets its length.
 * A lookup in the line table, whatever the line's length. */
const char *diag_line(const Diag *d, int n, int *len);

/* An internal invariant failed: print where, exit 3 (abort in fuzz builds). */
_Noreturn void aicm_bug(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define AICM_BUG(...) aicm_bug(__FILE__, __LINE__, __VA_ARGS__)
/* A function aicm_bug calls once, after its message and before it exits,
 * so that a tool can save what it was working on (aicm-opt's crash
 * reproducer); NULL removes it. */
void aicm_set_bug_hook(void (*hook)(void *ctx), void *ctx);

/* Allocation that cannot fail quietly: out of memory is exit 3 with a
 * message, never a NULL dereference. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
void *xmalloc_huge(size_t n);          /* free() it; huge pages if large */
char *xstrdup(const char *s);

/* io.c: bounded reads and all-or-nothing writes (docs/reliability.md). */
/* The size limit of aicm_read_file: both tools' inputs, the tuning cache. */
#define AICM_READ_MAX ((size_t)1 << 30)
/* Reads a whole file ("-" is stdin) of at most AICM_READ_MAX bytes.
 * Returns 0, or -1 with errno set: EFBIG when there is more, found having
 * read and allocated at most the limit plus one byte. */
int aicm_read_file(const char *path, char **buf, size_t *len);
/* The same with limit max. */
int aicm_read_file_max(const char *path, size_t max, char **buf, size_t *len);
/* The folder that holds path (malloc'd): "." for a bare name, NULL or
 * "-" (stdin), "/" for a file at the root; where a const's file= is looked
 * up from (aicm-run, libaicm). */
char *aicm_dir_of(const char *path);
/* The reason for a read's errno e, for "cannot read 'F': REASON": the
 * limit max spelt out for EFBIG (written into buf), else strerror(e). */
const char *aicm_read_strerror(int e, size_t max, char *buf, size_t n);

/* An output being written: aicm_out_open, writes to f, then
 * aicm_out_commit (or aicm_out_abort, which leaves the target as it was).
 * A regular file (or none) is replaced whole or not at all through a
 * temporary file .NAME.aicm-tmp.XXXXXX beside it, created exclusively; a
 * device or FIFO is written directly; "-" is stdout.  Symbolic links are
 * followed, except where a planted one could redirect us (see io.c). */
typedef struct AicmOut {
	FILE *f;                     /* write here */
	char *target;                /* what is written or replaced */
	char *tmp;                   /* the temporary file; NULL when direct */
	int slot;                    /* its row in the signal-cleanup table */
	bool is_stdout;
} AicmOut;
/* For a fixed name in a shared folder ($TMPDIR): the target must be absent
 * or a regular file of ours; a link there is ELOOP, another user's file
 * EPERM, a FIFO or device EEXIST. */
enum { AICM_OUT_NOFOLLOW = 1 };
/* 0, or -1 with errno set (nothing is left behind). */
int aicm_out_open(AicmOut *o, const char *path, int flags);
/* Flushes, closes and renames into place: 0, or -1 with errno set, the
 * target untouched and the temporary file removed. */
int aicm_out_commit(AicmOut *o);
void aicm_out_abort(AicmOut *o);
/* Writes data to path through an AicmOut.  Returns 0, or -1 with errno. */
int aicm_write_file(const char *path, const char *data, size_t len);
int aicm_write_file_flags(const char *path, const char *data, size_t len, int flags);
/* The .npy descr of an element type ("<f4", "|b1"). */
const char *aicm_npy_descr(DType dt);
/* Writes data (ty's elements, row-major) as a version 1.0 .npy file, whole
 * or not at all.  Returns 0, or -1 with "cannot write 'P': REASON" in err. */
int aicm_npy_write(const char *path, const Type *ty, const void *data, char *err, size_t errn);
/* For tests: the random part of the next temporary name, once (so that a
 * test can plant a link there). */
extern const char *aicm_io_test_tag;

#endif
