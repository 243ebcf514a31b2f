/*
 * arena.c: bump allocation for everything a graph owns.
 *
 * Blocks are chained and freed together (QBE's alloc/freeall), so error
 * paths never have to free piece by piece.  A request larger than a block
 * gets a block of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ir.h"

enum { BLOCK = 64 * 1024 };

struct ArenaBlock {
	ArenaBlock *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

/* Bump-allocates n bytes aligned to align (a power of two). */
static void *
bump(Arena *a, size_t n, size_t align)
{
	ArenaBlock *b = a->head;
	void *p;

	if (b)
		b->used = (b->used + align - 1) & ~(align - 1);
	if (!b || b->used > b->cap || b->cap - b->used < n) {
		/* Blocks double up to 4 MB, so a large parse makes few of them,
		 * in huge pages. */
		size_t cap = b && b->cap < (4u << 20) ? 2 * b->cap : b ? b->cap : BLOCK;

		if (cap < n)
			cap = n;
		b = xmalloc_huge(sizeof *b + cap);
		b->cap = cap;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	p = b->data + b->used;
	b->used += n;
	return p;
}

void *
arena_alloc(Arena *a, size_t n)
{
	void *p = bump(a, n, 16);

	memset(p, 0, n);
	return p;
}

/* Strings are packed byte by byte: a parse copies hundreds of thousands of
 * short names, and 16-byte alignment would triple their footprint. */
char *
arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p = bump(a, n + 1, 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void
arena_free(Arena *a)
{
	ArenaBlock *b = a->head, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	a->head = NULL;
}
