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

void *
arena_alloc(Arena *a, size_t n)
{
	ArenaBlock *b = a->head;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > BLOCK ? n : BLOCK;

		b = xmalloc(sizeof *b + cap);
		b->cap = cap;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	p = b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

char *
arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);

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
