/*
 * strbuf.c: a growing, always NUL-terminated string.
 *
 * Reports, tuning-cache records and cache keys are built piece by piece
 * into one heap buffer that the caller frees (free(b.s)); a zeroed StrBuf
 * is empty and ready.  strbuf_printf formats straight into the free room
 * and calls vsnprintf a second time only when the piece did not fit, so
 * that the common short append costs one call.
 * strbuf_shell_word is the one sh quoting of the tools: the native
 * engine's compile command, aicm-opt's reproducer RUN line and the HTML
 * report's command line all pass file names that may hold a space or a
 * quote.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ir.h"

void
strbuf_grow(StrBuf *b, size_t more)
{
	if (b->n + more + 1 > b->cap) {
		b->cap = 2 * (b->n + more + 1);
		b->s = xrealloc(b->s, b->cap);
	}
}

void
strbuf_printf(StrBuf *b, const char *fmt, ...)
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
		strbuf_grow(b, (size_t)n);
		va_start(ap, fmt);
		vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	b->n += (size_t)n;
}

void
strbuf_puts(StrBuf *b, const char *s)
{
	size_t n = strlen(s);

	strbuf_grow(b, n);
	memcpy(b->s + b->n, s, n + 1);
	b->n += n;
}

void
strbuf_putc(StrBuf *b, char c)
{
	strbuf_grow(b, 1);
	b->s[b->n++] = c;
	b->s[b->n] = '\0';
}

void
strbuf_shell_word(StrBuf *b, const char *s, bool bare_ok)
{
	/* an empty word needs its quotes, else it is no word at all */
	bool bare = bare_ok && *s;

	for (const char *p = s; bare && *p; p++)
		bare = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-_./=:,+@%", *p);
	if (bare) {
		strbuf_puts(b, s);
		return;
	}
	strbuf_putc(b, '\'');
	for (; *s; s++)
		if (*s == '\'')
			strbuf_puts(b, "'\\''");
		else
			strbuf_putc(b, *s);
	strbuf_putc(b, '\'');
}
