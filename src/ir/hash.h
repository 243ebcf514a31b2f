/*
 * hash.h: the compiler's one hash function and one hash map.
 *
 * The hash is FNV-1a over bytes (ir_hash_bytes, a running state, so that a
 * key made of pieces hashes without being assembled first) or, for rows of
 * integers, over whole words (ir_hash_words), and, for the tables, a
 * multiply-shift finaliser on top (ir_hash_mix, ir_hash_str): FNV's low
 * bits depend only on the low bits of the input, and tables index by the
 * low bits.  The raw FNV state is what a persistent value uses (the space
 * hash in the tuning cache's keys is written to disk and must not change).
 *
 * The map is open addressing with linear probing, at most half full, over
 * slots of two 32-bit words: the item (an index into the caller's own
 * array, plus one; 0 is an empty slot) and its key's hash.  The map never
 * sees a key: the caller's array holds the items, and a lookup compares
 * the stored hash first and calls the caller's equality only on a match,
 * so a probe past other keys touches neither their items nor their text
 * (in a large table, a cache miss each).  hash_find is static inline so
 * that a constant equality function inlines into its caller's loop.
 *
 * Two ways to own the slots: a HashMap holds them on the heap and grows
 * itself; a caller that keeps its slots elsewhere (the graph's name table,
 * on huge pages) uses the slot-array functions (hash_find, hash_empty,
 * hash_move) directly.
 */
#ifndef AICM_HASH_H
#define AICM_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* FNV-1a's offset basis: the state before the first byte. */
#define IR_HASH_SEED UINT64_C(14695981039346656037)

/* FNV-1a of n bytes at p, continuing from state h (IR_HASH_SEED at first). */
uint64_t ir_hash_bytes(uint64_t h, const void *p, size_t n);
/* FNV-1a taken a 64-bit word at a time over w[0..n), continuing from
 * state h: for rows of integers (a signature), eight times fewer steps
 * than their bytes.  A word's high bits reach only the state's high bits;
 * a table hash mixes the result (ir_hash_mix), which folds them down. */
uint64_t ir_hash_words(uint64_t h, const int64_t *w, size_t n);
/* The finaliser: spreads every bit of h into the low ones. */
uint64_t ir_hash_mix(uint64_t h);
/* A NUL-terminated string's table hash: ir_hash_mix of its FNV-1a. */
size_t ir_hash_str(const char *s);

typedef struct HashSlot {
	uint32_t item;               /* the caller's index + 1; 0: empty */
	uint32_t hash;
} HashSlot;

/* Whether item (the caller's index, not + 1) has the key sought. */
typedef bool (*HashEq)(const void *ctx, uint32_t item, const void *key);

/* The slot of slot[0..cap-1] (cap a power of two, never full) that holds
 * the item whose key equals key (hash h), or the empty slot where it would
 * go.  With eq NULL, the first item of hash h matches. */
static inline size_t
hash_find(const HashSlot *slot, size_t cap, uint32_t h, HashEq eq, const void *ctx,
    const void *key)
{
	size_t m = cap - 1, k;

	for (k = h & m; slot[k].item; k = (k + 1) & m)
		if (slot[k].hash == h && (!eq || eq(ctx, slot[k].item - 1, key)))
			break;
	return k;
}

/* The empty slot at the end of h's probe run in slot[0..cap-1]: where an
 * item of hash h goes when no key is compared (after any equal ones). */
static inline size_t
hash_empty(const HashSlot *slot, size_t cap, uint32_t h)
{
	size_t m = cap - 1, k;

	for (k = h & m; slot[k].item; k = (k + 1) & m)
		;
	return k;
}

/* The smallest capacity, a power of two from 8, that keeps n items at most
 * half full. */
size_t hash_cap(size_t n);
/* Enters every item of old (oldcap slots) into slot (cap slots, zeroed, room
 * for all of them) by its stored hash: no key is read again.  Items of one
 * hash keep their order. */
void hash_move(const HashSlot *old, size_t oldcap, HashSlot *slot, size_t cap);

/* A fixed table's names by hash, in cap static slots: the op tables' names,
 * looked up for every statement a parser reads.  name(i) is row i's name,
 * or NULL for a row that is never looked up by name.  Built once (the
 * caller's pthread_once); a lookup gives the row, or -1. */
typedef const char *(*HashName)(uint32_t row);
void hash_names_build(HashSlot *slot, size_t cap, int nrows, HashName name);
int hash_names_find(const HashSlot *slot, size_t cap, HashName name, const char *key);

/* A map that owns its slots; zeroed is empty (cap 0: hashmap_find gives
 * -1, hashmap_put allocates). */
typedef struct HashMap {
	HashSlot *slot;
	size_t cap;                  /* a power of two, or 0 */
	size_t n;
} HashMap;

/* Room for n items without growing; the map must be empty. */
void hashmap_reserve(HashMap *m, size_t n);
/* Empties the map, keeping its slots. */
void hashmap_clear(HashMap *m);
void hashmap_free(HashMap *m);

/* The item with key key (hash h), or -1. */
static inline int64_t
hashmap_find(const HashMap *m, uint32_t h, HashEq eq, const void *ctx, const void *key)
{
	size_t k;

	if (!m->cap)
		return -1;
	k = hash_find(m->slot, m->cap, h, eq, ctx, key);
	return (int64_t)m->slot[k].item - 1;
}

/* Finds key; if it is absent, enters item under it.  Returns the item
 * found, or -1 when item was entered.  (One probe serves lookup and
 * insertion: a symbol table's "define unless defined".) */
int64_t hashmap_put(HashMap *m, uint32_t h, uint32_t item, HashEq eq, const void *ctx,
    const void *key);
/* Enters item without looking for an equal key (rebuilding from items
 * known to be distinct, or a multimap whose caller walks the chain). */
void hashmap_add(HashMap *m, uint32_t h, uint32_t item);

#endif
