/*
 * io.c: whole-file reads and all-or-nothing writes.
 *
 * Outputs go to a temporary file in the target's folder and are renamed
 * over it only when every byte is written and flushed, so that a failure
 * half way never leaves a truncated output behind.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"

int
aicm_read_file(const char *path, char **buf, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	size_t cap = 1 << 16, n = 0, r;
	struct stat st;
	char *p;

	if (!f)
		return -1;
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		cap = (size_t)st.st_size + 1;   /* one read, no regrowing */
	p = xmalloc(cap + 1);
	while ((r = fread(p + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			p = xrealloc(p, cap + 1);
		}
	}
	if (ferror(f)) {
		int e = errno ? errno : EIO;

		if (f != stdin)
			fclose(f);
		free(p);
		errno = e;
		return -1;
	}
	if (f != stdin)
		fclose(f);
	p[n] = '\0';
	*buf = p;
	*len = n;
	return 0;
}

int
aicm_write_file(const char *path, const char *data, size_t len)
{
	size_t plen = strlen(path);
	char *tmp = xmalloc(plen + 16);
	FILE *f;
	int e;

	if (strcmp(path, "-") == 0) {
		free(tmp);
		if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0)
			return -1;
		return 0;
	}
	snprintf(tmp, plen + 16, "%s.tmp%ld", path, (long)getpid());
	f = fopen(tmp, "wb");
	if (!f) {
		free(tmp);
		return -1;
	}
	if (fwrite(data, 1, len, f) != len || fflush(f) != 0 || ferror(f)) {
		e = errno ? errno : EIO;
		fclose(f);
		remove(tmp);
		free(tmp);
		errno = e;
		return -1;
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		e = errno ? errno : EIO;
		remove(tmp);
		free(tmp);
		errno = e;
		return -1;
	}
	free(tmp);
	return 0;
}
