/*
 * stats_read.c: reads back the KernelStats JSON that aicm-run's
 * --stats-file writes (report.h, DESIGN §15).
 *
 * A small strict JSON reader for exactly that shape, not a general one:
 * the file is one object {"stats":"kernels","kernels":[K...],"total":K},
 * each K an object with the keys tile_stats.c prints, each exactly once,
 * in any order; counts are non-negative integers within int64 (a fraction
 * or an exponent in a count is an error, not a rounding), and
 * "arithmetic_intensity" is any number or null (it is recomputed, never
 * trusted).  Unknown keys are errors, so that a file from another tool is
 * refused with the key named rather than half-read.  Every error is
 * located (file:line:col, the column in bytes) and says what was found
 * and what was expected; nesting is bounded by the shape, so no input can
 * recurse deeply, and every string is length-checked, so none can crash.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

typedef struct Rd {
	const char *name;
	const char *s;
	size_t n, i;
	FILE *err;
	bool failed;
} Rd;

static void
rd_error(Rd *r, const char *fmt, ...)
{
	va_list ap;
	int line = 1, col = 1;

	if (r->failed)
		return;
	r->failed = true;
	for (size_t k = 0; k < r->i && k < r->n; k++)
		if (r->s[k] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	fprintf(r->err, "%s:%d:%d: error: ", r->name, line, col);
	va_start(ap, fmt);
	vfprintf(r->err, fmt, ap);
	va_end(ap);
	fputc('\n', r->err);
}

/* What is at the cursor, for messages: "'x'" or "the end of the file". */
static const char *
found(const Rd *r, char *buf, size_t n)
{
	unsigned char c;

	if (r->i >= r->n)
		return "the end of the file";
	c = (unsigned char)r->s[r->i];
	if (c < 0x20 || c >= 0x7f)
		snprintf(buf, n, "byte 0x%02x", c);
	else
		snprintf(buf, n, "'%c'", c);
	return buf;
}

static void
ws(Rd *r)
{
	while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' ||
	    r->s[r->i] == '\r'))
		r->i++;
}

static bool
expect(Rd *r, char c, const char *what)
{
	char b[32];

	ws(r);
	if (r->i < r->n && r->s[r->i] == c) {
		r->i++;
		return true;
	}
	rd_error(r, "expected %s, found %s", what, found(r, b, sizeof b));
	return false;
}

/* After an object's member or an array's element: a ',' (*more: another
 * follows) or the closing bracket; false after an error. */
static bool
sep(Rd *r, char close, const char *what, bool *more)
{
	ws(r);
	*more = r->i < r->n && r->s[r->i] == ',';
	if (*more) {
		r->i++;
		return true;
	}
	return expect(r, close, what);
}

/* A JSON string into a new buffer (escapes decoded; \u to UTF-8), or NULL
 * after an error. */
static char *
str(Rd *r)
{
	char b[32], *out;
	size_t start, k = 0;

	ws(r);
	if (r->i >= r->n || r->s[r->i] != '"') {
		rd_error(r, "expected a string, found %s", found(r, b, sizeof b));
		return NULL;
	}
	start = ++r->i;
	/* the decoded string is never longer than the text */
	while (r->i < r->n && r->s[r->i] != '"') {
		if (r->s[r->i] == '\\' && r->i + 1 < r->n)
			r->i++;
		r->i++;
	}
	if (r->i >= r->n) {
		r->i = start - 1;
		rd_error(r, "unterminated string");
		return NULL;
	}
	out = xmalloc(r->i - start + 1);
	for (size_t j = start; j < r->i; j++) {
		unsigned char c = (unsigned char)r->s[j];

		if (c < 0x20) {
			r->i = j;
			rd_error(r, "expected a printable character in a string, found byte 0x%02x", c);
			free(out);
			return NULL;
		}
		if (c != '\\') {
			out[k++] = (char)c;
			continue;
		}
		c = (unsigned char)r->s[++j];
		switch (c) {
		case '"': case '\\': case '/': out[k++] = (char)c; break;
		case 'b': out[k++] = '\b'; break;
		case 'f': out[k++] = '\f'; break;
		case 'n': out[k++] = '\n'; break;
		case 'r': out[k++] = '\r'; break;
		case 't': out[k++] = '\t'; break;
		case 'u': {
			unsigned v = 0;

			if (j + 4 >= r->i) {
				r->i = j;
				rd_error(r, "expected four hex digits after '\\u'");
				free(out);
				return NULL;
			}
			for (int d = 1; d <= 4; d++) {
				char h = r->s[j + d];

				v = v * 16 + (unsigned)(h >= '0' && h <= '9' ? h - '0' :
				    h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ?
				    h - 'A' + 10 : 99);
				if (v > 0xffff) {
					r->i = j + d;
					rd_error(r, "expected four hex digits after '\\u'");
					free(out);
					return NULL;
				}
			}
			j += 4;
			/* a name written by ir_json_str is ASCII or UTF-8 bytes as
			 * they were; \u is for control characters: one byte, else
			 * '?' (the picture's text, not an identity) */
			out[k++] = v < 0x80 && v != 0 ? (char)v : '?';
			break;
		}
		default:
			r->i = j;
			rd_error(r, "expected an escape (\\\" \\\\ / b f n r t u) after '\\', "
			    "found %s", found(r, b, sizeof b));
			free(out);
			return NULL;
		}
	}
	out[k] = '\0';
	r->i++;
	return out;
}

/* A non-negative integer within int64. */
static bool
count(Rd *r, const char *key, int64_t *v)
{
	char b[32];
	size_t start;
	uint64_t x = 0;

	ws(r);
	start = r->i;
	if (r->i >= r->n || r->s[r->i] < '0' || r->s[r->i] > '9') {
		rd_error(r, "'%s' must be a non-negative integer, found %s", key,
		    found(r, b, sizeof b));
		return false;
	}
	if (r->s[r->i] == '0' && r->i + 1 < r->n && r->s[r->i + 1] >= '0' && r->s[r->i + 1] <= '9') {
		rd_error(r, "'%s' has a leading zero", key);
		return false;
	}
	while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9') {
		unsigned d = (unsigned)(r->s[r->i] - '0');

		if (x > ((uint64_t)INT64_MAX - d) / 10) {
			r->i = start;
			rd_error(r, "'%s' is larger than 2^63 - 1", key);
			return false;
		}
		x = x * 10 + d;
		r->i++;
	}
	if (r->i < r->n && (r->s[r->i] == '.' || r->s[r->i] == 'e' || r->s[r->i] == 'E')) {
		rd_error(r, "'%s' must be an integer, found a fraction or an exponent", key);
		return false;
	}
	*v = (int64_t)x;
	return true;
}

/* A JSON number or null, skipped (arithmetic_intensity). */
static bool
skip_num(Rd *r, const char *key)
{
	char b[32];
	size_t start;

	ws(r);
	if (r->n - r->i >= 4 && !memcmp(r->s + r->i, "null", 4)) {
		r->i += 4;
		return true;
	}
	start = r->i;
	if (r->i < r->n && r->s[r->i] == '-')
		r->i++;
	if (r->i >= r->n || r->s[r->i] < '0' || r->s[r->i] > '9') {
		r->i = start;
		rd_error(r, "'%s' must be a number or null, found %s", key, found(r, b, sizeof b));
		return false;
	}
	while (r->i < r->n && strchr("0123456789.eE+-", r->s[r->i]))
		r->i++;
	return true;
}

enum {
	K_KERNEL, K_KIND, K_RESULT, K_GRID, K_PROGRAMS, K_READ, K_WRITE, K_FLOPS, K_AI,
	K_IREAD, K_IWRITE, K_N
};

static const char *const kkeys[K_N] = {
	"kernel", "kind", "result", "grid", "programs", "dram__bytes_read.sum",
	"dram__bytes_write.sum", "flops", "arithmetic_intensity", "ideal_bytes_read",
	"ideal_bytes_write",
};

static void
ks_free(KernelStats *k)
{
	free((char *)k->name);
	free((char *)k->kind);
	free((char *)k->result);
	memset(k, 0, sizeof *k);
}

/* One KernelStats object. */
static bool
kstats(Rd *r, KernelStats *k)
{
	bool seen[K_N] = {0}, more;
	size_t open = r->i;
	/* the members that are a string or a count, each into its field */
	const char **strs[K_N] = {[K_KERNEL] = &k->name, [K_KIND] = &k->kind,
	    [K_RESULT] = &k->result};
	int64_t *counts[K_N] = {[K_PROGRAMS] = &k->programs, [K_READ] = &k->bytes_read,
	    [K_WRITE] = &k->bytes_written, [K_FLOPS] = &k->flops, [K_IREAD] = &k->ideal_read,
	    [K_IWRITE] = &k->ideal_written};

	memset(k, 0, sizeof *k);
	if (!expect(r, '{', "'{' starting a kernel's statistics"))
		return false;
	ws(r);
	if (r->i < r->n && r->s[r->i] == '}') {
		r->i++;
		goto missing;
	}
	for (;;) {
		size_t at;
		char *key;
		int kk;

		ws(r);
		at = r->i;
		if (!(key = str(r)))
			return false;
		for (kk = 0; kk < K_N && strcmp(key, kkeys[kk]); kk++)
			;
		if (kk == K_N) {
			r->i = at;
			rd_error(r, "unknown key '%s' in a kernel's statistics (expected one of "
			    "aicm-run's --stats-file keys)", key);
			free(key);
			return false;
		}
		free(key);
		if (seen[kk]) {
			r->i = at;
			rd_error(r, "key '%s' given twice", kkeys[kk]);
			return false;
		}
		seen[kk] = true;
		if (!expect(r, ':', "':' after a key"))
			return false;
		if (strs[kk]) {
			if (!(*strs[kk] = str(r)))
				return false;
		} else if (counts[kk]) {
			if (!count(r, kkeys[kk], counts[kk]))
				return false;
		} else if (kk == K_AI) {
			if (!skip_num(r, kkeys[kk]))
				return false;
		} else {        /* K_GRID */
			if (!expect(r, '[', "'[' starting 'grid'"))
				return false;
			for (int a = 0; a < 3; a++)
				if ((a && !expect(r, ',', "',' between 'grid''s three numbers")) ||
				    !count(r, "grid", &k->grid[a]))
					return false;
			if (!expect(r, ']', "']' after 'grid''s three numbers"))
				return false;
		}
		if (!sep(r, '}', "',' or '}' after a value", &more))
			return false;
		if (!more)
			break;
	}
missing:
	for (int kk = 0; kk < K_N; kk++)
		if (!seen[kk]) {
			size_t here = r->i;

			r->i = open;
			ws(r);
			rd_error(r, "a kernel's statistics lack key '%s'", kkeys[kk]);
			r->i = here;
			return false;
		}
	return true;
}

static bool
doc(Rd *r, ReportStats *out)
{
	bool seen_stats = false, seen_k = false, seen_t = false, more;
	int cap = 0;

	if (!expect(r, '{', "'{' starting aicm-run's KernelStats JSON (--stats-file)"))
		return false;
	for (;;) {
		size_t at;
		char *key;

		ws(r);
		at = r->i;
		if (!(key = str(r)))
			return false;
		if (!expect(r, ':', "':' after a key")) {
			free(key);
			return false;
		}
		if (!strcmp(key, "stats") && !seen_stats) {
			char *v;
			size_t vat;

			free(key);
			ws(r);
			vat = r->i;
			if (!(v = str(r)))
				return false;
			if (strcmp(v, "kernels")) {
				r->i = vat;
				rd_error(r, "expected \"stats\":\"kernels\", found \"%s\"", v);
				free(v);
				return false;
			}
			free(v);
			seen_stats = true;
		} else if (!strcmp(key, "kernels") && !seen_k) {
			free(key);
			seen_k = true;
			if (!expect(r, '[', "'[' starting 'kernels'"))
				return false;
			ws(r);
			if (r->i < r->n && r->s[r->i] == ']') {
				r->i++;
			} else {
				for (;;) {
					if (out->n == cap) {
						cap = cap ? 2 * cap : 8;
						out->k = xrealloc(out->k, sizeof *out->k * (size_t)cap);
					}
					if (!kstats(r, &out->k[out->n])) {
						ks_free(&out->k[out->n]);
						return false;
					}
					out->n++;
					if (!sep(r, ']', "',' or ']' after a kernel's statistics", &more))
						return false;
					if (!more)
						break;
				}
			}
		} else if (!strcmp(key, "total") && !seen_t) {
			free(key);
			seen_t = true;
			if (!kstats(r, &out->total)) {
				ks_free(&out->total);
				return false;
			}
		} else {
			r->i = at;
			rd_error(r, "%s key '%s' (expected \"stats\", \"kernels\" and \"total\", "
			    "each once)", !strcmp(key, "stats") || !strcmp(key, "kernels") ||
			    !strcmp(key, "total") ? "repeated" : "unknown", key);
			free(key);
			return false;
		}
		if (!sep(r, '}', "',' or '}' after a value", &more))
			return false;
		if (!more)
			break;
	}
	if (!seen_stats || !seen_k || !seen_t) {
		rd_error(r, "the KernelStats JSON lacks \"%s\"", !seen_stats ? "stats" :
		    !seen_k ? "kernels" : "total");
		return false;
	}
	ws(r);
	if (r->i < r->n) {
		char b[32];

		rd_error(r, "expected the end of the file after the object, found %s",
		    found(r, b, sizeof b));
		return false;
	}
	return true;
}

int
report_stats_parse(const char *name, const char *text, size_t len, ReportStats *out,
    FILE *err)
{
	Rd r = {name, text, len, 0, err, false};

	memset(out, 0, sizeof *out);
	if (!doc(&r, out)) {
		report_stats_free(out);
		return -1;
	}
	return 0;
}

int
report_stats_read(const char *tool, const char *path, ReportStats *out, FILE *err)
{
	char *buf, why[128];
	size_t len;
	int rc;

	memset(out, 0, sizeof *out);
	if (aicm_read_file(path, &buf, &len) != 0) {
		fprintf(err, "%s: error: cannot read '%s': %s\n", tool, path,
		    aicm_read_strerror(errno, AICM_READ_MAX, why, sizeof why));
		return -2;
	}
	rc = report_stats_parse(path, buf, len, out, err);
	free(buf);
	return rc;
}

void
report_stats_free(ReportStats *s)
{
	for (int i = 0; i < s->n; i++)
		ks_free(&s->k[i]);
	free(s->k);
	ks_free(&s->total);
	memset(s, 0, sizeof *s);
}
