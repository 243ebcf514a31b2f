/*
 * tune_cache.c: the tuning cache file of autotune, read and written.
 *
 * The file is text, one record per line:
 *
 *     KEY -> BM=.. BN=.. [BK=..] warps=.. [stages=..] score=MS [measured=MS]
 *
 * and '#' lines are comments.  The key is opaque here (autotune builds
 * it); only its part up to " space=" matters, as the unit a new result
 * supersedes.  Records live in an array in file order, entered in a hash
 * map (hash.h) by that prefix, so a lookup is one short probe however
 * large the file.  A record is never removed from the array, only marked dropped,
 * so that indices and line numbers stay valid while the pass runs.
 *
 * Runs that share one cache file may overlap (a build running several
 * aicm-opt at once).  Each reads the file at its start without a lock (a
 * write replaces the file whole, so a reader sees one version or the
 * other), and at its end, holding an exclusive flock on PATH.lock, reads
 * the file again, merges its own results into what it finds, and writes
 * the result (tune_cache_save).  So no run's results are lost to another
 * run that wrote in between, which with a plain rewrite happened to 20-30%
 * of the records when two runs raced (tests/cache_race.sh).
 */
#define _DEFAULT_SOURCE              /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pass.h"
#include "tune_cache.h"

/* ---- the table ------------------------------------------------------- */

/* The length of key up to and including its " space=" (all of it
 * without one): records with the same prefix are one kernel and target. */
static size_t
prefix_len(const char *key)
{
	const char *sp = strstr(key, " space=");

	return sp ? (size_t)(sp - key) + 7 : strlen(key);
}

static uint32_t
prefix_hash(const char *key, size_t pre)
{
	return (uint32_t)ir_hash_mix(ir_hash_bytes(IR_HASH_SEED, key, pre));
}

void
tune_cache_add(TuneCache *c, TuneEntry e)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->e = xrealloc(c->e, sizeof *c->e * (size_t)c->cap);
	}
	c->e[c->n] = e;
	hashmap_add(&c->map, prefix_hash(e.key, prefix_len(e.key)), (uint32_t)c->n);
	c->n++;
}

/* What the table's lookups compare a record with: a key, or its prefix
 * of pre bytes. */
typedef struct Probe {
	const char *key;
	size_t pre;
} Probe;

static bool
live_key_eq(const void *c, uint32_t i, const void *key)
{
	const TuneEntry *e = &((const TuneCache *)c)->e[i];

	return !e->drop && !strcmp(e->key, key);
}

static bool
live_prefix_eq(const void *c, uint32_t i, const void *q)
{
	const TuneEntry *e = &((const TuneCache *)c)->e[i];
	const Probe *p = q;

	return !e->drop && !strncmp(e->key, p->key, p->pre) && prefix_len(e->key) == p->pre;
}

TuneEntry *
tune_cache_find(TuneCache *c, const char *key)
{
	int64_t i = hashmap_find(&c->map, prefix_hash(key, prefix_len(key)), live_key_eq, c, key);

	return i < 0 ? NULL : &c->e[i];
}

void
tune_cache_supersede(TuneCache *c, const char *key)
{
	Probe q = {key, prefix_len(key)};
	uint32_t h = prefix_hash(key, q.pre);
	int64_t i;

	/* a dropped record matches no more, so each search finds the next */
	while ((i = hashmap_find(&c->map, h, live_prefix_eq, c, &q)) >= 0)
		c->e[i].drop = true;
}

void
tune_cache_free(TuneCache *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->e[i].key);
	free(c->e);
	hashmap_free(&c->map);
	c->e = NULL;
	c->n = c->cap = 0;
}

unsigned
tune_cache_kind_attrs(KernelKind k)
{
	unsigned a = 1u << KA_BM | 1u << KA_BN | 1u << KA_WARPS;

	if (k == KK_MATMUL || k == KK_MATMUL_EPILOGUE || k == KK_CONV_EPILOGUE)
		a |= 1u << KA_BK | 1u << KA_STAGES;
	return a;
}

/* ---- the reader ------------------------------------------------------ */

/* A time in ms: a number >= 0 (inf too), the whole of s.  One too small
 * for a double reads as 0 or a subnormal (strtod's ERANGE on underflow),
 * since the writer may print a subnormal that it had read exactly from
 * hex ("0x1p-1074" is written "5e-324"); one too large is refused. */
static int
parse_ms(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (end == s || *end || (errno == ERANGE && isinf(*v)) || !(*v >= 0))
		return -1;
	return 0;
}

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
			if (score || parse_ms(eq + 1, &e->score) != 0)
				return -1;
			score = true;
			continue;
		}
		if (!strcmp(tok, "measured")) {
			if (e->measured || parse_ms(eq + 1, &e->ms) != 0)
				return -1;
			e->measured = true;
			continue;
		}
		a = ir_kattr_lookup(tok);
		if (a < 0 || a == KA_SPLIT || (e->have & (1u << a)))
			return -1;
		long v = strtol(eq + 1, &end, 10);
		if (end == eq + 1 || *end || errno || v <= 0 || v > TUNE_CACHE_MAX_VALUE)
			return -1;
		if (ir_kattr_is_block(a) && !ir_is_pow2(v))
			return -1;   /* a block size the text would refuse */
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

/* The attribute names of bits `a`, as "BM, BN and warps". */
static void
attr_list(char *out, size_t n, unsigned a)
{
	int left = 0;

	for (unsigned b = a; b; b &= b - 1)
		left++;
	out[0] = '\0';
	for (int i = 0; i < KA_COUNT; i++) {
		size_t l = strlen(out);

		if (!(a & (1u << i)))
			continue;
		snprintf(out + l, n - l, "%s'%s'", l == 0 ? "" : left == 1 ? " and " : ", ",
		    ir_kattr_names[i]);
		left--;
	}
}

/* What keeps a record whose items parsed from being complete, or NULL: its
 * key must start with a kernel kind, and its items must be exactly the
 * attributes that kind's configurations set.  Such a record is what the
 * pass writes; any other would be written back with made-up values
 * (BN=0), or never match a kernel.  why: a buffer of n bytes. */
static const char *
record_problem(const char *key, const TuneEntry *e, char *why, size_t n)
{
	char kind[32], names[64];
	size_t kl = strcspn(key, ":");
	unsigned want, bad;
	int k, first = 0;

	if (key[kl] != ':' || kl >= sizeof kind) {
		snprintf(why, n, "expected the key to start with 'KIND:'");
		return why;
	}
	memcpy(kind, key, kl);
	kind[kl] = '\0';
	if ((k = ir_kernel_kind_lookup(kind)) < 0) {
		snprintf(why, n, "unknown kernel kind '%s' at the start of the key", kind);
		return why;
	}
	want = tune_cache_kind_attrs((KernelKind)k);
	if (!(bad = want & ~e->have) && !(bad = e->have & ~want))
		return NULL;
	while (!(bad & (1u << first)))
		first++;
	attr_list(names, sizeof names, want);
	if (want & ~e->have)
		snprintf(why, n, "incomplete: no '%s'; records of kind '%s' have %s",
		    ir_kattr_names[first], kind, names);
	else
		snprintf(why, n, "'%s' does not apply; records of kind '%s' have %s",
		    ir_kattr_names[first], kind, names);
	return why;
}

/* Whether the reader takes e back as it is: a complete record, values in
 * the reader's ranges, and a key that the line's first " -> " ends (no
 * " -> " inside, not ending in " ->") on one line. */
static bool
record_writable(const TuneEntry *e)
{
	char why[160];
	size_t kl = strlen(e->key);
	const int v[] = {e->c.bm, e->c.bn, e->c.bk, e->c.warps, e->c.stages};
	const int ka[] = {KA_BM, KA_BN, KA_BK, KA_WARPS, KA_STAGES};

	if (strchr(e->key, '\n') || strstr(e->key, " -> ") ||
	    (kl >= 3 && !strcmp(e->key + kl - 3, " ->")))
		return false;
	if (record_problem(e->key, e, why, sizeof why))
		return false;
	for (int i = 0; i < 5; i++)
		if ((e->have & (1u << ka[i])) && (v[i] <= 0 || v[i] > TUNE_CACHE_MAX_VALUE))
			return false;
	return e->score >= 0 && (!e->measured || e->ms >= 0);
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
		char whybuf[160];

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
			else
				why = record_problem(ln, &e, whybuf, sizeof whybuf);
			if (!why && !nl)
				/* the writer ends every record with one: this line
				 * may have been cut short ("score=0.00") */
				why = "no newline at the end of the file's last record";
			if (!why && tune_cache_find(c, ln))
				why = "a second record for the same key";
		}
		if (why) {
			if (d)
				diag_warning(d, LOC_NONE, "autotune: %s:%d: bad tuning cache record "
				    "(%s); dropped, its kernel re-tunes", c->path, line, why);
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

/* The items of have, in the order the pass writes them. */
static void
config_str(StrBuf *b, const TileConfig *c, unsigned have)
{
	const int v[] = {c->bm, c->bn, c->bk, c->warps, c->stages};
	const int ka[] = {KA_BM, KA_BN, KA_BK, KA_WARPS, KA_STAGES};
	const char *sep = "";

	for (int i = 0; i < 5; i++)
		if (have & (1u << ka[i])) {
			strbuf_printf(b, "%s%s=%d", sep, ir_kattr_names[ka[i]], v[i]);
			sep = " ";
		}
}

char *
tune_cache_format(const TuneCache *c, size_t *len)
{
	StrBuf b = {0};

	strbuf_printf(&b, "# aicm autotune cache v1, one record per line: KIND DTYPE SIGNATURE "
	    "target=NAME{CONSTANTS} space=HASH -> CONFIG score=MS [measured=MS]\n");
	for (int i = 0; i < c->n; i++) {
		char s[64];

		/* never a record that the reader would refuse or read back
		 * differently: none is in the table (the reader refuses them,
		 * the pass adds complete ones), but one would cost the next
		 * run a warning and a re-tune, or come back with other values */
		if (c->e[i].drop || !record_writable(&c->e[i]))
			continue;
		ir_fmt_double(s, sizeof s, c->e[i].score);
		strbuf_printf(&b, "%s -> ", c->e[i].key);
		config_str(&b, &c->e[i].c, c->e[i].have);
		strbuf_printf(&b, " score=%s", s);
		if (c->e[i].measured) {
			ir_fmt_double(s, sizeof s, c->e[i].ms);
			strbuf_printf(&b, " measured=%s", s);
		}
		strbuf_printf(&b, "\n");
	}
	*len = b.n;
	return b.s;
}

static int
write_text(const TuneCache *c, Diag *d)
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

/* Opens PATH.lock, beside the cache file (beside the file that a symbolic
 * link leads to, so that two names of one cache share one lock), creating
 * it, and takes an exclusive flock on it, waiting for another run to
 * release its own.  Not a lock on the cache file itself: the writer
 * renames a new file over it, and a lock on the old inode would not stop
 * a run that opened the new one.  The lock file is never removed (a run
 * could be waiting on it while another creates a new one); empty, it is
 * safe to delete when no aicm runs.  A symbolic link there is not
 * followed.  Returns the descriptor (closing it releases the lock), or -1
 * after a diagnostic: without the lock nothing is written, as a folder
 * where the lock file cannot be created could not take the cache either. */
static int
lock_cache(const char *path, Diag *d)
{
	char *real = realpath(path, NULL);
	const char *base = real ? real : path;
	size_t n = strlen(base);
	char *lp = xmalloc(n + sizeof ".lock");
	const char *why = NULL;
	struct stat st;
	int fd;

	memcpy(lp, base, n);
	memcpy(lp + n, ".lock", sizeof ".lock");
	free(real);
	/* read-only is enough for flock, and works on a lock file another
	 * user created; O_NONBLOCK, so that a FIFO there cannot hang us */
	fd = open(lp, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
	if (fd < 0) {
		why = errno == ELOOP ? "it is a symbolic link" : strerror(errno);
		diag_error(d, LOC_NONE, "autotune: cannot write tuning cache '%s': cannot open "
		    "its lock file '%s': %s", path, lp, why);
		free(lp);
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		why = "not a regular file";
	else
		while (flock(fd, LOCK_EX) != 0)
			if (errno != EINTR) {
				why = strerror(errno);
				break;
			}
	if (why) {
		diag_error(d, LOC_NONE, "autotune: cannot write tuning cache '%s': cannot lock "
		    "'%s': %s", path, lp, why);
		close(fd);
		fd = -1;
	}
	free(lp);
	return fd;
}

static bool
same_content(const TuneEntry *a, const TuneEntry *b)
{
	return a->have == b->have && !memcmp(&a->c, &b->c, sizeof a->c) &&
	    a->score == b->score && a->measured == b->measured &&
	    (!a->measured || a->ms == b->ms);
}

/* Merges run's changes into now (the file as it is, read under the lock):
 *
 *   now's records, less those this run replaced or refused,
 *   then this run's new records, in the order it made them.
 *
 * A record of now is replaced when run has a new one for the same kernel
 * and target (the same key up to " space=", as tune_cache_supersede), so
 * this run's result wins over another run's for the same kernel; and
 * refused when run dropped one with the same key and the same values (one
 * that did not fit, or that a new result superseded).  Everything else in
 * now stays: another run's records, and what it changed in records this
 * run only read, which are not brought back as they were. */
/* Whether run's record i replaces or refuses now's record f (key). */
static bool
beats(const void *run, uint32_t i, const void *f)
{
	const TuneEntry *r = &((const TuneCache *)run)->e[i], *fe = f;
	size_t pre = prefix_len(fe->key);

	return (r->fresh && !r->drop && prefix_len(r->key) == pre &&
	    !strncmp(r->key, fe->key, pre)) ||
	    (r->drop && !r->fresh && !strcmp(r->key, fe->key) && same_content(r, fe));
}

static void
merge(TuneCache *now, const TuneCache *run)
{
	for (int i = 0; i < now->n && run->map.cap; i++) {
		TuneEntry *f = &now->e[i];

		if (!f->drop &&
		    hashmap_find(&run->map, prefix_hash(f->key, prefix_len(f->key)), beats, run, f) >= 0)
			f->drop = true;
	}
	for (int j = 0; j < run->n; j++)
		if (run->e[j].fresh && !run->e[j].drop) {
			TuneEntry e = run->e[j];

			e.key = xstrdup(e.key);
			e.line = 0;
			tune_cache_add(now, e);
		}
}

int
tune_cache_save(TuneCache *c, Diag *d)
{
	TuneCache now = {.path = c->path};
	struct stat st;
	char *buf;
	size_t len;
	int fd, rc = 0;

	/* not a regular file (cache=/dev/null): written as it is, without a
	 * lock beside it, nor a merge with what reading it again would give */
	if (stat(c->path, &st) == 0 && !S_ISREG(st.st_mode))
		return write_text(c, d);
	if ((fd = lock_cache(c->path, d)) < 0)
		return PASS_IO;
	if (aicm_read_file(c->path, &buf, &len) == 0) {
		/* quietly: this run warned about the lines it read, and a line
		 * that another run added is its business */
		tune_cache_parse(&now, buf, len, NULL);
		free(buf);
	} else if (errno != ENOENT) {
		diag_error(d, LOC_NONE, "autotune: cannot read tuning cache '%s': %s", c->path,
		    strerror(errno));
		rc = PASS_IO;
	}
	if (rc == 0) {
		merge(&now, c);
		rc = write_text(&now, d);
	}
	close(fd);
	tune_cache_free(&now);
	return rc;
}
