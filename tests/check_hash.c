/*
 * check_hash.c: src/ir/hash.c, the one hash function and map.
 *
 * The function's raw state is FNV-1a, checked against the published test
 * vectors (the tuning cache writes it to disk, so it must never drift); the
 * map is checked against a brute-force scan over many keys, with every key
 * forced onto one hash as well, so that the probing and the caller's
 * equality carry the whole lookup.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_aicm.h"
#include "hash.h"

START_TEST(test_hash_fnv_vectors)
{
	/* FNV-1a 64's published vectors: "" is the offset basis. */
	ck_assert_uint_eq(ir_hash_bytes(IR_HASH_SEED, "", 0), UINT64_C(0xcbf29ce484222325));
	ck_assert_uint_eq(ir_hash_bytes(IR_HASH_SEED, "a", 1), UINT64_C(0xaf63dc4c8601ec8c));
	ck_assert_uint_eq(ir_hash_bytes(IR_HASH_SEED, "foobar", 6), UINT64_C(0x85944171f73967e8));
	/* A running state: pieces hash as the whole. */
	ck_assert_uint_eq(ir_hash_bytes(ir_hash_bytes(IR_HASH_SEED, "foo", 3), "bar", 3),
	    UINT64_C(0x85944171f73967e8));
}
END_TEST

/* The word form: FNV-1a's step on whole words, a running state too. */
START_TEST(test_hash_words)
{
	static const int64_t w[] = {3, -1, 1 << 20, INT64_MAX};
	uint64_t h = IR_HASH_SEED;

	for (int i = 0; i < 4; i++)
		h = (h ^ (uint64_t)w[i]) * UINT64_C(1099511628211);
	ck_assert_uint_eq(ir_hash_words(IR_HASH_SEED, w, 4), h);
	ck_assert_uint_eq(ir_hash_words(ir_hash_words(IR_HASH_SEED, w, 1), w + 1, 3), h);
	ck_assert_uint_eq(ir_hash_words(IR_HASH_SEED, w, 0), IR_HASH_SEED);
}
END_TEST

START_TEST(test_hash_str_is_mixed_fnv)
{
	ck_assert_uint_eq(ir_hash_str("foobar"),
	    (size_t)ir_hash_mix(ir_hash_bytes(IR_HASH_SEED, "foobar", 6)));
}
END_TEST

START_TEST(test_hash_cap)
{
	ck_assert_uint_eq(hash_cap(0), 8);
	ck_assert_uint_eq(hash_cap(4), 8);
	ck_assert_uint_eq(hash_cap(5), 16);
	ck_assert_uint_eq(hash_cap(1000), 2048);
}
END_TEST

enum { NKEYS = 5000 };
static char keys[NKEYS][16];

static bool
key_eq(const void *ctx, uint32_t item, const void *key)
{
	(void)ctx;
	return strcmp(keys[item], key) == 0;
}

/* Fills the map with the even keys, hashed by hf, then checks every key
 * against what a scan would say, and that a second put finds the first. */
static void
map_vs_scan(uint32_t (*hf)(const char *))
{
	HashMap m = {0};

	for (int i = 0; i < NKEYS; i++)
		snprintf(keys[i], sizeof keys[i], "k%d", i);
	for (int i = 0; i < NKEYS; i += 2)
		ck_assert_int_eq(hashmap_put(&m, hf(keys[i]), (uint32_t)i, key_eq, NULL, keys[i]), -1);
	ck_assert_uint_eq(m.n, NKEYS / 2);
	ck_assert_uint_le(2 * m.n, m.cap);
	for (int i = 0; i < NKEYS; i++)
		ck_assert_int_eq(hashmap_find(&m, hf(keys[i]), key_eq, NULL, keys[i]),
		    i % 2 ? -1 : i);
	/* Defining an existing key again returns its first item. */
	ck_assert_int_eq(hashmap_put(&m, hf(keys[10]), 11, key_eq, NULL, keys[10]), 10);
	ck_assert_uint_eq(m.n, NKEYS / 2);
	hashmap_clear(&m);
	ck_assert_uint_eq(m.n, 0);
	ck_assert_int_eq(hashmap_find(&m, hf(keys[0]), key_eq, NULL, keys[0]), -1);
	hashmap_free(&m);
	ck_assert_ptr_null(m.slot);
}

static uint32_t
real_hash(const char *s)
{
	return (uint32_t)ir_hash_str(s);
}

static uint32_t
one_hash(const char *s)
{
	(void)s;
	return 42;
}

START_TEST(test_hash_map_matches_scan)
{
	map_vs_scan(real_hash);
}
END_TEST

START_TEST(test_hash_map_all_collide)
{
	map_vs_scan(one_hash);
}
END_TEST

START_TEST(test_hash_map_empty_and_add)
{
	HashMap m = {0};

	ck_assert_int_eq(hashmap_find(&m, 1, NULL, NULL, NULL), -1);
	/* hashmap_add keeps duplicates: a chain the caller walks. */
	hashmap_add(&m, 7, 0);
	hashmap_add(&m, 7, 1);
	ck_assert_uint_eq(m.n, 2);
	ck_assert_int_eq(hashmap_find(&m, 7, NULL, NULL, NULL), 0);
	hashmap_reserve(&m, 100);
	ck_assert_uint_eq(m.cap, 256);
	ck_assert_int_eq(hashmap_find(&m, 7, NULL, NULL, NULL), 0);
	ck_assert_int_eq(hashmap_find(&m, 8, NULL, NULL, NULL), -1);
	hashmap_free(&m);
}
END_TEST

/* hash_empty: the end of h's probe run, past items of other hashes that
 * took the slots on the way, and round the end of the array. */
START_TEST(test_hash_empty_ends_the_run)
{
	HashSlot slot[8] = {{0}};

	ck_assert_uint_eq(hash_empty(slot, 8, 6), 6);
	slot[6] = (HashSlot){1, 6};
	slot[7] = (HashSlot){2, 7};
	ck_assert_uint_eq(hash_empty(slot, 8, 6), 0);
	ck_assert_uint_eq(hash_empty(slot, 8, 14), 0);  /* 14 & 7 == 6 */
	ck_assert_uint_eq(hash_empty(slot, 8, 3), 3);
	/* an equal key found by hash_find lies before the run's end */
	ck_assert_uint_eq(hash_find(slot, 8, 6, NULL, NULL, NULL), 6);
}
END_TEST

static const char *const table_names[] = {"relu", NULL, "sum", "max", NULL, "matmul"};

static const char *
table_name(uint32_t row)
{
	return table_names[row];
}

START_TEST(test_hash_names_table)
{
	HashSlot slot[16] = {{0, 0}};

	hash_names_build(slot, 16, 6, table_name);
	ck_assert_int_eq(hash_names_find(slot, 16, table_name, "relu"), 0);
	ck_assert_int_eq(hash_names_find(slot, 16, table_name, "sum"), 2);
	ck_assert_int_eq(hash_names_find(slot, 16, table_name, "matmul"), 5);
	ck_assert_int_eq(hash_names_find(slot, 16, table_name, "mat"), -1);
	ck_assert_int_eq(hash_names_find(slot, 16, table_name, ""), -1);
	/* the NULL rows take no slot */
	int used = 0;

	for (int i = 0; i < 16; i++)
		used += slot[i].item != 0;
	ck_assert_int_eq(used, 4);
}
END_TEST

Suite *
make_hash_suite(void)
{
	Suite *s = suite_create("hash");
	TCase *tc = tcase_create("hash");

	tcase_add_test(tc, test_hash_fnv_vectors);
	tcase_add_test(tc, test_hash_words);
	tcase_add_test(tc, test_hash_empty_ends_the_run);
	tcase_add_test(tc, test_hash_str_is_mixed_fnv);
	tcase_add_test(tc, test_hash_cap);
	tcase_add_test(tc, test_hash_map_matches_scan);
	tcase_add_test(tc, test_hash_map_all_collide);
	tcase_add_test(tc, test_hash_map_empty_and_add);
	tcase_add_test(tc, test_hash_names_table);
	suite_add_tcase(s, tc);
	return s;
}
