/*
 * hash.c: the hash function and the heap-owned side of the hash map
 * (hash.h).  Lookups are inline in the header; growth, which is rare and
 * never on a lookup's path, lives here.
 */
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "hash.h"

uint64_t
ir_hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * UINT64_C(1099511628211);
	return h;
}

uint64_t
ir_hash_words(uint64_t h, const int64_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint64_t)w[i]) * UINT64_C(1099511628211);
	return h;
}

uint64_t
ir_hash_mix(uint64_t h)
{
	h ^= h >> 32;
	h *= UINT64_C(0x9e3779b97f4a7c15);
	h ^= h >> 29;
	return h;
}

/* The string loop is ir_hash_bytes' without a strlen first: names are
 * hashed once per definition and per use, millions in a large parse. */
size_t
ir_hash_str(const char *s)
{
	uint64_t h = IR_HASH_SEED;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
	return (size_t)ir_hash_mix(h);
}

size_t
hash_cap(size_t n)
{
	size_t cap = 8;

	while (cap < 2 * n)
		cap *= 2;
	return cap;
}

void
hash_move(const HashSlot *old, size_t oldcap, HashSlot *slot, size_t cap)
{
	size_t e = 0;

	/* Walking from an empty slot takes each probe run from its start, so
	 * equal hashes keep their order (a multimap's first stays first). */
	while (e < oldcap && old[e].item)
		e++;
	for (size_t j = 1; j <= oldcap; j++) {
		size_t i = (e + j) & (oldcap - 1);

		if (old[i].item)
			slot[hash_empty(slot, cap, old[i].hash)] = old[i];
	}
}

static bool
name_eq(const void *ctx, uint32_t row, const void *key)
{
	return strcmp((*(const HashName *)ctx)(row), key) == 0;
}

void
hash_names_build(HashSlot *slot, size_t cap, int nrows, HashName name)
{
	for (int i = 0; i < nrows; i++) {
		const char *s = name((uint32_t)i);
		uint32_t h;

		if (!s)
			continue;
		h = (uint32_t)ir_hash_str(s);
		slot[hash_empty(slot, cap, h)] = (HashSlot){(uint32_t)i + 1, h};
	}
}

int
hash_names_find(const HashSlot *slot, size_t cap, HashName name, const char *key)
{
	return (int)slot[hash_find(slot, cap, (uint32_t)ir_hash_str(key), name_eq,
	    &name, key)].item - 1;
}

static void
grow(HashMap *m, size_t n)
{
	size_t cap;
	HashSlot *slot;

	if (2 * n <= m->cap)         /* the common case: room, nothing to compute */
		return;
	cap = hash_cap(n);
	slot = xcalloc(cap, sizeof *slot);
	hash_move(m->slot, m->cap, slot, cap);
	free(m->slot);
	m->slot = slot;
	m->cap = cap;
}

void
hashmap_reserve(HashMap *m, size_t n)
{
	grow(m, n);
}

void
hashmap_clear(HashMap *m)
{
	if (m->cap)
		memset(m->slot, 0, m->cap * sizeof *m->slot);
	m->n = 0;
}

void
hashmap_free(HashMap *m)
{
	free(m->slot);
	memset(m, 0, sizeof *m);
}

int64_t
hashmap_put(HashMap *m, uint32_t h, uint32_t item, HashEq eq, const void *ctx, const void *key)
{
	size_t k;

	grow(m, m->n + 1);
	k = hash_find(m->slot, m->cap, h, eq, ctx, key);
	if (m->slot[k].item)
		return (int64_t)m->slot[k].item - 1;
	m->slot[k] = (HashSlot){item + 1, h};
	m->n++;
	return -1;
}

void
hashmap_add(HashMap *m, uint32_t h, uint32_t item)
{
	grow(m, m->n + 1);
	m->slot[hash_empty(m->slot, m->cap, h)] = (HashSlot){item + 1, h};
	m->n++;
}
