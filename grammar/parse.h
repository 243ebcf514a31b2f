/*
 * parse.h: the front end's entry point, and what the scanner and the
 * grammar share.
 *
 * parse_graph() turns one chunk of text into a Graph or reports why it
 * cannot: the first syntax error stops the parse (as mlir-opt does), while
 * semantic errors (unknown ops, undefined values, bad dimensions) are all
 * reported before it gives up.  Either way it frees everything it made.
 */
#ifndef AICM_PARSE_H
#define AICM_PARSE_H

#include "diag.h"
#include "ir.h"

/* Parses text[0..len) whose first line is line 'line0' of d's buffer.
 * Returns the graph, or NULL after reporting errors to d. */
Graph *parse_graph(const char *text, size_t len, int line0, Diag *d);

/* ---- shared by lexer.l and parser.y ---------------------------------- */

typedef struct Tok {
	char *s;                     /* in the graph's arena */
	int len;
	uint32_t hash;               /* a value name's ir_name_prefetch(), else 0 */
} Tok;

/* A token and its place: an operand, a tuple element. */
typedef struct Ref {
	Tok t;
	Loc loc;
} Ref;

/* The grammar's lists are malloc'd and grown by doubling; %destructor
 * frees them when a syntax error discards them. */
typedef struct Refs {
	int n, cap;
	Ref *v;
} Refs;

enum { IV_BARE, IV_INT, IV_FLOAT, IV_WORD, IV_TUPLE, IV_STRING };

/* One 'name=value' (or a bare word, such as an element type). */
typedef struct Item {
	Ref name;
	int kind;                    /* IV_* */
	Ref val;                     /* INT, FLOAT, IDENT or STRING (decoded) */
	Refs *tuple;                 /* IV_TUPLE */
} Item;

typedef struct Items {
	int n, cap;
	Item *v;
} Items;

/* A tile index expression (tile.h): terms 'VALUE', 'VALUE * INT' or 'INT'
 * joined by '+'; a term with no value is a constant. */
typedef struct Term {
	Ref v;                       /* v.t.s NULL: a constant */
	Ref c;                       /* c.t.s NULL: coefficient 1 */
} Term;

typedef struct Idx {
	int n, cap;
	Term *v;
	Loc loc;
} Idx;

typedef struct Idxs {
	int n, cap;
	Idx **v;
} Idxs;

struct ParseCtx;
typedef struct ParseCtx ParseCtx;
struct YYLTYPE;

char *parse_strndup(ParseCtx *ctx, const char *s, size_t n);
/* A value name's token: its text, its hash, and its name table slot on
 * the way into the cache by the time the statement is reduced. */
Tok parse_value(ParseCtx *ctx, const char *s, size_t n);
void parse_bad_char(ParseCtx *ctx, const struct YYLTYPE *loc, unsigned char c);
/* Reports the last byte of text[0..n), a non-ASCII one, at its place: a
 * name (text[0..n-1) its ASCII head) holds ASCII only. */
void parse_non_ascii(ParseCtx *ctx, const struct YYLTYPE *loc, const char *text, size_t n);
/* The lexer says when it enters values=( and leaves at ')': a syntax
 * error inside hints at numbers, not integers. */
void parse_values_tuple(ParseCtx *ctx, bool in);
/* A string token text[0..n) with its quotes: decodes its escapes into
 * *out (in the graph's arena, NUL-terminated); false after reporting a bad
 * escape or a NUL byte at its place. */
bool parse_string(ParseCtx *ctx, const struct YYLTYPE *loc, const char *text, size_t n,
    Tok *out);
/* Reports a string that its line or the file ends before it is closed. */
void parse_unterminated(ParseCtx *ctx, const struct YYLTYPE *loc);

#endif
