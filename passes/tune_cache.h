/*
 * tune_cache.h: autotune's tuning cache file, read and written.
 *
 * One record per line, "KEY -> CONFIG score=MS [measured=MS]", the key
 * being a kernel's signature, element type, target and space hash (built
 * by autotune.c; this file treats it as text up to " -> ").  The pass
 * loads the file, looks records up and adds its results, and saves it
 * when anything changed.  The reader and the writer are here, apart from
 * the pass, so that tests and the fuzz harness (tests/fuzz/fuzz_cache.c)
 * can call them on their own.
 */
#ifndef AICM_TUNE_CACHE_H
#define AICM_TUNE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost.h"
#include "diag.h"
#include "ir.h"

/* The largest BM, BN, BK, warps or stages a record may hold. */
enum { TUNE_CACHE_MAX_VALUE = 1 << 20 };

typedef struct TuneEntry {
	char *key;
	TileConfig c;
	double score;
	double ms;                   /* measured=: its time */
	bool measured;
	unsigned have;               /* bit per KAttrId read */
	int line;
	bool drop;                   /* invalid: re-tuned, not written back */
	bool fresh;                  /* tuned in this run */
} TuneEntry;

/* The records, in a multimap by the key up to its " space=" (all of it
 * without one): a lookup and the records a new result supersedes (the same
 * prefix, any space) are both one probe run.  Zeroed is empty. */
typedef struct TuneCache {
	const char *path;
	TuneEntry *e;
	int n, cap;
	HashMap map;                 /* items: indices into e */
	bool dirty;
} TuneCache;

/* tune_cache.c */
/* The kernel attributes a kind's configurations set (bits of KAttrId). */
unsigned tune_cache_kind_attrs(KernelKind k);
/* Appends e; the cache owns e.key from then on. */
void tune_cache_add(TuneCache *c, TuneEntry e);
/* The live record of a key (there is at most one), or NULL. */
TuneEntry *tune_cache_find(TuneCache *c, const char *key);
/* Drops the live records of the same kernel and target as key, whatever
 * their space: a new result supersedes them. */
void tune_cache_supersede(TuneCache *c, const char *key);
/* Reads records from the text buf[0..len) (as if from c->path) into c.
 * A malformed or incomplete record, a second one for a key, and a last
 * record without its newline are warned about (PATH:LINE) on d (when not
 * NULL) and skipped, and make c dirty. */
void tune_cache_parse(TuneCache *c, const char *buf, size_t len, Diag *d);
/* Reads c->path; a missing file is an empty cache.  0, or PASS_IO after a
 * diagnostic. */
int tune_cache_load(TuneCache *c, Diag *d);
/* The file's text for c's live records (malloc'd, NUL-terminated): each
 * on one line that the reader takes back as the same record.  A record it
 * would refuse (incomplete, a value out of range, a key it would cut
 * elsewhere) is left out. */
char *tune_cache_format(const TuneCache *c, size_t *len);
/* Writes c to c->path, merged with what the file holds by then: under an
 * exclusive flock on PATH.lock, reads the file again and writes its
 * records less those c replaced or refused, then c's new (fresh) ones.
 * Another run's records are kept; c's win for the same kernel and target.
 * A cache that is not a regular file is written as it is, unlocked.
 * 0, or PASS_IO after a diagnostic (the lock file cannot be created or
 * locked, the file cannot be read or written). */
int tune_cache_save(TuneCache *c, Diag *d);
void tune_cache_free(TuneCache *c);

#endif
