/*
 * tune_cache.c: the tuning cache file of autotune, read and written.
 *
 * The file is text, one record per line:
 *
 *     KEY -> BM=.. BN=.. [BK=..] warps=.. [stages=..] score=MS [measured=MS]
 *
 * and '#' lines are comments.  The key is opaque here (autotune builds
 * it); only its part up to " space=" matters, as the unit a new result
 * supersedes.  Records live in an array in file order, chained in a hash
 * table by that prefix, so a lookup is one short chain however large the
 * file.  A record is never removed from the array, only marked dropped,
 * so that indices and line numbers stay valid while the pass runs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pass.h"
#include "tune_cache.h"

/* ---- a growing string ------------------------------------------------ */

typedef struct Str {
	char *s;
	size_t n, cap;
} Str;

static void
sprint(Str *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
sprint(Str *b, const char *fmt, ...)
{
	va_list ap;
	size_t room = b->cap - b->n;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? b->s + b->n : NULL, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		AICM_BUG("vsnprintf failed");
	if ((size_t)n >= room) {
		b->cap = 2 * (b->n + (size_t)n + 1);
		b->s = xrealloc(b->s, b->cap);
		va_start(ap, fmt);
		vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	b->n += (size_t)n;
}

/* ---- the table ------------------------------------------------------- */

static uint64_t
prefix_hash(const char *key, size_t *pre)
{
	const char *sp = strstr(key, " space=");
	size_t n = sp ? (size_t)(sp - key) + 7 : strlen(key);
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)key[i]) * 1099511628211ull;
	if (pre)
		*pre = n;
	return h;
}

static void
cache_link(TuneCache *c, int i)
{
	size_t b = (size_t)(c->e[i].ph & (uint64_t)(c->nbucket - 1));

	c->e[i].next = c->bucket[b];
	c->bucket[b] = i;
}

void
tune_cache_add(TuneCache *c, TuneEntry e)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->e = xrealloc(c->e, sizeof *c->e * (size_t)c->cap);
	}
	e.ph = prefix_hash(e.key, NULL);
	c->e[c->n++] = e;
	if (2 * c->n > c->nbucket) {
		/* relinked in index order, so each chain stays newest first */
		c->nbucket = c->nbucket ? 2 * c->nbucket : 64;
		free(c->bucket);
		c->bucket = xmalloc(sizeof *c->bucket * (size_t)c->nbucket);
		for (int i = 0; i < c->nbucket; i++)
			c->bucket[i] = -1;
		for (int i = 0; i < c->n; i++)
			cache_link(c, i);
	} else {
		cache_link(c, c->n - 1);
	}
}

TuneEntry *
tune_cache_find(TuneCache *c, const char *key)
{
	uint64_t ph;

	if (!c->nbucket)
		return NULL;
	ph = prefix_hash(key, NULL);
	for (int i = c->bucket[ph & (uint64_t)(c->nbucket - 1)]; i >= 0; i = c->e[i].next)
		if (!c->e[i].drop && c->e[i].ph == ph && !strcmp(c->e[i].key, key))
			return &c->e[i];
	return NULL;
}

void
tune_cache_supersede(TuneCache *c, const char *key)
{
	size_t pre;
	uint64_t ph;

	if (!c->nbucket)
		return;
	ph = prefix_hash(key, &pre);
	for (int i = c->bucket[ph & (uint64_t)(c->nbucket - 1)]; i >= 0; i = c->e[i].next)
		if (!c->e[i].drop && c->e[i].ph == ph && !strncmp(c->e[i].key, key, pre))
			c->e[i].drop = true;
}

void
tune_cache_free(TuneCache *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->e[i].key);
	free(c->e);
	free(c->bucket);
	c->e = NULL;
	c->bucket = NULL;
	c->n = c->cap = c->nbucket = 0;
}

unsigned
tune_cache_kind_attrs(KernelKind k)
{
	unsigned a = 1u << KA_BM | 1u << KA_BN | 1u << KA_WARPS;

	if (k == KK_MATMUL || k == KK_MATMUL_EPILOGUE)
		a |= 1u << KA_BK | 1u << KA_STAGES;
	return a;
}

/* ---- the reader ------------------------------------------------------ */

/* Parses "BM=64 BN=32 ... score=0.0035 [measured=1.25]"; 0 or -1. */
static int
parse_config(char *s, TuneEntry *e)
{
	bool score = false;
	char *save = NULL;

	for (char *tok = strtok_r(s, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '='), *end;
		int a;

		if (!eq)
			return -1;
		*eq = '\0';
		errno = 0;
		if (!strcmp(tok, "score")) {
			e->score = strtod(eq + 1, &end);
			if (end == eq + 1 || *end || errno || !(e->score >= 0))
				return -1;
			score = true;
			continue;
		}
		if (!strcmp(tok, "measured")) {
			e->ms = strtod(eq + 1, &end);
			if (end == eq + 1 || *end || errno || !(e->ms >= 0) || e->measured)
				return -1;
			e->measured = true;
			continue;
		}
		a = ir_kattr_lookup(tok);
		if (a < 0 || a == KA_SPLIT || (e->have & (1u << a)))
			return -1;
		long v = strtol(eq + 1, &end, 10);
		if (end == eq + 1 || *end || errno || v <= 0 || v > 1 << 20)
			return -1;
		e->have |= 1u << a;
		switch (a) {
		case KA_BM: e->c.bm = (int)v; break;
		case KA_BN: e->c.bn = (int)v; break;
		case KA_BK: e->c.bk = (int)v; break;
		case KA_WARPS: e->c.warps = (int)v; break;
		case KA_STAGES: e->c.stages = (int)v; break;
		default: return -1;
		}
	}
	return score ? 0 : -1;
}

void
tune_cache_parse(TuneCache *c, const char *buf, size_t len, Diag *d)
{
	const char *p = buf;
	int line = 0;

	while (p < buf + len) {
		const char *nl = memchr(p, '\n', (size_t)(buf + len - p));
		size_t n = (size_t)((nl ? nl : buf + len) - p);
		char *ln = xmalloc(n + 1), *arrow;
		TuneEntry e = {0};
		const char *why = NULL;

		line++;
		memcpy(ln, p, n);
		ln[n] = '\0';
		p += n + 1;
		if (n && ln[n - 1] == '\r')
			ln[--n] = '\0';
		if (n == 0 || ln[0] == '#') {
			free(ln);
			continue;
		}
		arrow = strlen(ln) == n ? strstr(ln, " -> ") : NULL;
		if (!arrow) {
			why = "expected 'KEY -> CONFIG score=MS'";
		} else {
			*arrow = '\0';
			if (parse_config(arrow + 4, &e) != 0)
				why = "expected 'NAME=VALUE' items (BM, BN, BK, warps, stages, score, "
				    "measured) after '->'";
			else if (tune_cache_find(c, ln))
				why = "a second record for the same key";
		}
		if (why) {
			diag_warning(d, LOC_NONE, "autotune: %s:%d: bad tuning cache record (%s); "
			    "dropped, its kernel re-tunes", c->path, line, why);
			c->dirty = true;
			free(ln);
			continue;
		}
		e.key = ln;
		e.line = line;
		tune_cache_add(c, e);
	}
}

int
tune_cache_load(TuneCache *c, Diag *d)
{
	char *buf;
	size_t len;

	if (aicm_read_file(c->path, &buf, &len) != 0) {
		if (errno == ENOENT)
			return 0;
		diag_error(d, LOC_NONE, "autotune: cannot read tuning cache '%s': %s", c->path,
		    strerror(errno));
		return PASS_IO;
	}
	tune_cache_parse(c, buf, len, d);
	free(buf);
	return 0;
}

/* ---- the writer ------------------------------------------------------ */

static void
config_str(Str *b, const TileConfig *c, unsigned have)
{
	sprint(b, "BM=%d BN=%d", c->bm, c->bn);
	if (have & (1u << KA_BK))
		sprint(b, " BK=%d", c->bk);
	sprint(b, " warps=%d", c->warps);
	if (have & (1u << KA_STAGES))
		sprint(b, " stages=%d", c->stages);
}

char *
tune_cache_format(const TuneCache *c, size_t *len)
{
	Str b = {0};

	sprint(&b, "# aicm autotune cache v1, one record per line: KIND DTYPE SIGNATURE "
	    "target=NAME{CONSTANTS} space=HASH -> CONFIG score=MS [measured=MS]\n");
	for (int i = 0; i < c->n; i++) {
		char s[64];

		if (c->e[i].drop)
			continue;
		ir_fmt_double(s, sizeof s, c->e[i].score);
		sprint(&b, "%s -> ", c->e[i].key);
		config_str(&b, &c->e[i].c, c->e[i].have);
		sprint(&b, " score=%s", s);
		if (c->e[i].measured) {
			ir_fmt_double(s, sizeof s, c->e[i].ms);
			sprint(&b, " measured=%s", s);
		}
		sprint(&b, "\n");
	}
	*len = b.n;
	return b.s;
}

int
tune_cache_save(TuneCache *c, Diag *d)
{
	size_t len;
	char *s = tune_cache_format(c, &len);
	int rc = 0;

	if (aicm_write_file(c->path, s, len) != 0) {
		diag_error(d, LOC_NONE, "autotune: cannot write tuning cache '%s': %s", c->path,
		    strerror(errno));
		rc = PASS_IO;
	}
	free(s);
	return rc;
}
