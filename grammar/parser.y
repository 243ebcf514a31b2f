/*
 * parser.y: the grammar of the aicm text format (DESIGN §2) and the
 * actions that build the graph.
 *
 * The grammar is deliberately loose where a precise message helps more than
 * a syntax error would: every op is 'IDENT ( operands )', every attribute is
 * 'IDENT = value', and the actions check the op table (unknown op, arity,
 * attributes, their kinds) and report in words.  Names are resolved as they
 * come; a name not yet defined is kept pending and settled at the end, which
 * tells "used before it is defined" from "undefined".  The first syntax
 * error stops the parse; semantic errors are all reported.  A tiled body's
 * statements are read here and built by tile_build.c; which ops and
 * attributes a body takes is tile_ops.def's.
 *
 * Lists (operands, tuples, attributes) are malloc'd and carry %destructors,
 * so that a syntax error leaks nothing; all other memory is the graph's
 * arena, freed with the graph.
 */
%require "3.6"

/* No globals: the scanner and the parser keep their state in the call. */
%define api.pure full
%locations
/* Messages in our own words ("expected ')', found '%x'"); LAC keeps the
 * expected-token list exact (the Bison manual warns it can be wrong
 * without it). */
%define parse.error custom
%define parse.lac full
%define api.token.prefix {TOK_}
/* On at run time with AICM_YYDEBUG=1. */
%define parse.trace
/* The grammar is LALR(1) with no conflicts; keep it that way. */
%expect 0

%code requires {
#include "parse.h"
#ifndef YY_TYPEDEF_YY_SCANNER_T
#define YY_TYPEDEF_YY_SCANNER_T
typedef void *yyscan_t;
#endif
}

%code top {
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
}

%lex-param {yyscan_t scanner}
%parse-param {yyscan_t scanner} {ParseCtx *ctx}

%union {
	Tok tok;
	Refs *refs;
	Items *items;
	Idx *idx;
	Idxs *idxs;
}

%code {
#include "lexer.h"
#include "tile.h"

typedef struct Pend {
	int node, slot;
	Ref r;
} Pend;

struct ParseCtx {
	Graph *g;
	Diag *d;
	int line0;
	bool in_values;              /* the lexer is inside values=(...) */
	int kernel;                  /* the open kernel block, or -1 */
	int kstmts;                  /* statements written in it, good or bad */
	bool returned;
	bool late;                   /* a statement after 'return' was reported */
	Pend *pend;                  /* operands named before their definition */
	int npend, cappend;
	Refs *ret;
	Loc retloc;
	TileFn *tf;                  /* the open tiled body, or NULL */
	const char *tname;           /* its result's name */
	int *tfor;                   /* its open loops (instruction indices) */
	int ntfor, captfor;
	HashMap targ;                /* its operands by name (targ_find) */
	Loc *open;                   /* the '{' (or graph '<') not yet closed, */
	int nopen, capopen;          /* innermost last: note_unclosed */
};

/* Past the error limit (diag.h) the scanner's next token is the end of the
 * input: the parser stops at once, as at a syntax error (whose message the
 * Diag no longer prints), and bison's destructors free what its stack
 * holds.  Scanning on would only feed errors nobody sees. */
/* An unknown kernel kind, with every kind the IR has (ir.h's list, so a
 * new kind is named here without an edit). */
static void
unknown_kind(ParseCtx *c, Loc at, const char *kind)
{
	char list[512];
	size_t m = 0;

	for (int k = 0; k < KK_COUNT; k++)
		m += (size_t)snprintf(list + m, sizeof list - m, "%s%s", k == 0 ? "" :
		    k == KK_COUNT - 1 ? " or " : ", ", ir_kernel_kinds[k]);
	diag_error(c->d, at, "unknown kernel kind '%s'; expected %s", kind, list);
}

static int
lex(YYSTYPE *lval, YYLTYPE *lloc, yyscan_t scanner)
{
	return yyget_extra(scanner)->d->stopped ? TOK_YYEOF : yylex(lval, lloc, scanner);
}
#define yylex lex

static void yyerror(YYLTYPE *loc, yyscan_t scanner, ParseCtx *ctx, const char *msg);
static Loc L(YYLTYPE l);
static Refs *refs_add(Refs *r, Tok t, Loc loc);
static void refs_free(Refs *r);
static Items *items_add(Items *it, Item item);
static void items_free(Items *it);
static void op_stmt(ParseCtx *c, Tok name, Loc nl, Tok op, Loc ol, Refs *ins,
    Refs *shape, Loc tl, Items *items);
static void kernel_open(ParseCtx *c, Tok name, Loc kl, Loc nl, Tok kind, Loc kindl, Items *items);
static void kernel_close(ParseCtx *c);
static bool room_ok(ParseCtx *c, Loc nl);
static bool nest_ok(ParseCtx *c, Loc kwl);
static void return_stmt(ParseCtx *c, Loc rl, Refs *names);
static void idx_free(Idx *x);
static void idxs_free(Idxs *x);
static Idx *idx_add(Idx *x, Ref v, Ref c, Loc loc);
static Idxs *idxs_add(Idxs *x, Idx *i);
static void tiled_open(ParseCtx *c, Tok name, Loc nl, Tok kw, Loc kwl, Tok sym, Tok kind,
    Loc kindl, Refs *ins, Refs *shape, Loc tl, Items *items);
static void tiled_close(ParseCtx *c);
static void t_op(ParseCtx *c, Tok name, Loc nl, Tok op, Loc ol, Refs *ins, Refs *shape,
    Loc tl, Items *items);
static void t_access(ParseCtx *c, Tok name, Loc nl, Tok op, Loc ol, Tok target, Loc gl,
    Idxs *idx, Refs *shape, Loc tl, Tok val, Loc vl, Items *items);
static void t_for_open(ParseCtx *c, Tok name, Loc nl, Tok kw, Loc kwl, Tok var, Loc vl,
    Ref lo, Tok to, Ref hi, Tok step, Ref st, Tok iter, Tok it, Loc itl, Tok init, Loc il);
static void t_for_close(ParseCtx *c, Tok name, Loc nl, Tok kw, Loc kwl, Tok val, Loc vl);
static void open_push(ParseCtx *c, Loc l);
}

%initial-action {
	@$.first_line = @$.last_line = ctx->line0;
	@$.first_column = @$.last_column = 1;
}

%token <tok> VALUE "value name" SYMBOL "'@name'" IDENT "identifier"
%token <tok> INT "integer" FLOAT "number" STRING "string"
%token GRAPH "'graph'" KERNEL "'kernel'" RETURN "'return'"
/* Words that start a statement of a tiled body: keywords, because an
 * attribute list (items) may end in any identifier. */
%token <tok> STORE "'store'" ATOMIC_ADD "'atomic_add'" ATOMIC_MAX "'atomic_max'"
%token <tok> YIELD "'yield'"

%type <refs> operands operands_opt tuple ints type_opt atuple elems
%type <items> items
%type <tok> storekw elem
%type <idx> idx
%type <idxs> idxs idxs_opt
%type <refs> ttype_opt ttype

%destructor { refs_free($$); } <refs>
%destructor { items_free($$); } <items>
%destructor { idx_free($$); } <idx>
%destructor { idxs_free($$); } <idxs>

%%

/* graph = "graph" ["@" name] ("{" stmt* "}" | "<" stmt* ">") */
graph:
	  head '{' { open_push(ctx, L(@2)); } stmts '}' { ctx->nopen--; }
	| head '<' { open_push(ctx, L(@2)); } stmts '>' { ctx->nopen--; }
	;

head:
	  GRAPH                 { ctx->g->loc = L(@1); }
	| GRAPH SYMBOL          { ctx->g->loc = L(@1); ctx->g->name = $2.s; }
	;

stmts:
	  %empty
	| stmts stmt
	;

stmt:
	  opstmt
	| kernel
	| tiled
	| RETURN operands       { return_stmt(ctx, L(@1), $2); }
	;

/* tiled = value "=" "tiled" "@" name "[" kind "]" "(" operands? ")" ":" shape item*
 *         "{" tstmt* "}"                                     (docs/tiled.md) */
tiled:
	  VALUE '=' IDENT SYMBOL '[' IDENT ']' '(' operands_opt ')' ':' tuple items
	    { if (!room_ok(ctx, L(@1))) {
	        refs_free($9); refs_free($12); items_free($13);
	        $9 = NULL; $12 = NULL; $13 = NULL;
	        YYABORT;
	      }
	      tiled_open(ctx, $1, L(@1), $3, L(@3), $4, $6, L(@6), $9, $12, L(@12), $13);
	      /* freed: a later syntax error must not run their %destructors */
	      $9 = NULL; $12 = NULL; $13 = NULL; }
	  '{' { open_push(ctx, L(@15)); } tstmts '}'
	    { ctx->nopen--; tiled_close(ctx); }
	;

tstmts:
	  %empty
	| tstmts tstmt
	;

/* tstmt = value "=" op "(" operands? ")" (":" ttype)? item*
 *       | value "=" "load" value "[" idxs? "]" ("," value)? ":" ttype item*
 *       | ("store" | "atomic_add" | "atomic_max") value "[" idxs? "]" "," value item*
 *   (no index: a rank-0 tensor, as the printer writes it)
 *       | value "=" "for" value "=" int "to" int "step" int "iter" "(" value "=" value ")"
 *         "{" tstmt* "yield" value "}" */
tstmt:
	  VALUE '=' IDENT '(' operands_opt ')' ttype_opt items
	    { t_op(ctx, $1, L(@1), $3, L(@3), $5, $7, L(@7), $8); }
	| VALUE '=' IDENT VALUE '[' idxs_opt ']' ttype_opt items
	    { t_access(ctx, $1, L(@1), $3, L(@3), $4, L(@4), $6, $8, L(@8), (Tok){0},
	        L(@4), $9); }
	| VALUE '=' IDENT VALUE '[' idxs_opt ']' ',' VALUE ttype_opt items
	    { t_access(ctx, $1, L(@1), $3, L(@3), $4, L(@4), $6, $10, L(@10), $9,
	        L(@9), $11); }
	| storekw VALUE '[' idxs_opt ']' ',' VALUE items
	    { t_access(ctx, (Tok){0}, L(@1), $1, L(@1), $2, L(@2), $4, NULL, L(@1), $7,
	        L(@7), $8); }
	| VALUE '=' IDENT VALUE '=' INT IDENT INT IDENT INT IDENT '(' VALUE '=' VALUE ')' '{'
	    { if (!nest_ok(ctx, L(@3)))
	        YYABORT;
	      t_for_open(ctx, $1, L(@1), $3, L(@3), $4, L(@4), (Ref){$6, L(@6)}, $7,
	        (Ref){$8, L(@8)}, $9, (Ref){$10, L(@10)}, $11, $13, L(@13), $15, L(@15));
	      open_push(ctx, L(@17)); }
	  tstmts YIELD VALUE '}'
	    { ctx->nopen--; t_for_close(ctx, $1, L(@1), $20, L(@20), $21, L(@21)); }
	;

storekw:
	  STORE
	| ATOMIC_ADD
	| ATOMIC_MAX
	;

/* ttype = "[" "]" | "[" int ("," int)* "]" */
ttype_opt:
	  %empty                { $$ = NULL; }
	| ':' ttype             { $$ = $2; @$ = @2; }
	;

ttype:
	  '[' ']'               { $$ = refs_add(NULL, (Tok){0}, L(@1)); $$->n = 0; }
	| '[' ints ']'          { $$ = $2; }
	;

/* idx = term ("+" term)*;  term = int | value | value "*" int */
idxs_opt:
	  %empty                { $$ = xcalloc(1, sizeof *$$); }
	| idxs                  { $$ = $1; }
	;

idxs:
	  idx                   { $$ = idxs_add(NULL, $1); }
	| idxs ',' idx          { $$ = idxs_add($1, $3); }
	;

idx:
	  INT                   { $$ = idx_add(NULL, (Ref){{0}, L(@1)}, (Ref){$1, L(@1)}, L(@1)); }
	| VALUE                 { $$ = idx_add(NULL, (Ref){$1, L(@1)}, (Ref){{0}, L(@1)}, L(@1)); }
	| VALUE '*' INT         { $$ = idx_add(NULL, (Ref){$1, L(@1)}, (Ref){$3, L(@3)}, L(@1)); }
	| idx '+' INT           { $$ = idx_add($1, (Ref){{0}, L(@3)}, (Ref){$3, L(@3)}, L(@3)); }
	| idx '+' VALUE         { $$ = idx_add($1, (Ref){$3, L(@3)}, (Ref){{0}, L(@3)}, L(@3)); }
	| idx '+' VALUE '*' INT { $$ = idx_add($1, (Ref){$3, L(@3)}, (Ref){$5, L(@5)}, L(@3)); }
	;

/* opstmt = value "=" op "(" operands? ")" (":" shape)? item* */
opstmt:
	  VALUE '=' IDENT '(' operands_opt ')' type_opt items
	    { if (!room_ok(ctx, L(@1))) {
	        /* YYABORT keeps the rule's own values: free them here */
	        refs_free($5); refs_free($7); items_free($8);
	        YYABORT;
	      }
	      op_stmt(ctx, $1, L(@1), $3, L(@3), $5, $7, L(@7), $8); }
	;

/* kernel = "kernel" "@" name "[" kind "]" item* "{" opstmt* "}" */
kernel:
	  KERNEL SYMBOL '[' IDENT ']' items
	    { kernel_open(ctx, $2, L(@1), L(@2), $4, L(@4), $6);
	      $6 = NULL; /* freed: a later syntax error must not free it again */ }
	  '{' { open_push(ctx, L(@8)); } kstmts '}'
	    { ctx->nopen--; kernel_close(ctx); }
	;

kstmts:
	  %empty
	| kstmts opstmt
	;

operands_opt:
	  %empty                { $$ = NULL; }
	| operands              { $$ = $1; }
	;

operands:
	  VALUE                 { $$ = refs_add(NULL, $1, L(@1)); }
	| operands ',' VALUE    { $$ = refs_add($1, $3, L(@3)); }
	;

type_opt:
	  %empty                { $$ = NULL; }
	| ':' tuple             { $$ = $2; @$ = @2; }
	;

/* tuple = "(" ")" | "(" int ("," int)* ","? ")" */
tuple:
	  '(' ')'               { $$ = refs_add(NULL, (Tok){0}, L(@1)); $$->n = 0; }
	| '(' ints ')'          { $$ = $2; }
	| '(' ints ',' ')'      { $$ = $2; }
	;

ints:
	  INT                   { $$ = refs_add(NULL, $1, L(@1)); }
	| ints ',' INT          { $$ = refs_add($1, $3, L(@3)); }
	;

/* An attribute's tuple also holds numbers and words (values=(1.5, inf));
 * the attribute says which it takes.
 * atuple = "(" ")" | "(" elem ("," elem)* ","? ")";  elem = int | float | word */
atuple:
	  '(' ')'               { $$ = refs_add(NULL, (Tok){0}, L(@1)); $$->n = 0; }
	| '(' elems ')'         { $$ = $2; }
	| '(' elems ',' ')'     { $$ = $2; }
	;

elems:
	  elem                  { $$ = refs_add(NULL, $1, L(@1)); }
	| elems ',' elem        { $$ = refs_add($1, $3, L(@3)); }
	;

elem:
	  INT
	| FLOAT
	| IDENT
	;

/* item = word | name "=" (int | float | word | tuple | string), each added to the
 * list as it is read: an Item on bison's value stack made every semantic
 * value 80 bytes, and the copies of them were a fifth of a large parse. */
items:
	  %empty                { $$ = NULL; }
	| items IDENT           { $$ = items_add($1, (Item){{$2, L(@2)}, IV_BARE, {{0}, {0}}, NULL}); }
	| items IDENT '=' INT   { $$ = items_add($1, (Item){{$2, L(@2)}, IV_INT, {$4, L(@4)}, NULL}); }
	| items IDENT '=' FLOAT { $$ = items_add($1, (Item){{$2, L(@2)}, IV_FLOAT, {$4, L(@4)}, NULL}); }
	| items IDENT '=' IDENT { $$ = items_add($1, (Item){{$2, L(@2)}, IV_WORD, {$4, L(@4)}, NULL}); }
	| items IDENT '=' atuple { $$ = items_add($1, (Item){{$2, L(@2)}, IV_TUPLE, {{0}, L(@4)}, $4}); }
	| items IDENT '=' STRING { $$ = items_add($1, (Item){{$2, L(@2)}, IV_STRING, {$4, L(@4)}, NULL}); }
	;

%%

static Loc
L(YYLTYPE l)
{
	Loc r = {l.first_line, l.first_column, 1};

	if (l.last_line == l.first_line && l.last_column > l.first_column)
		r.len = l.last_column - l.first_column;
	return r;
}

char *
parse_strndup(ParseCtx *ctx, const char *s, size_t n)
{
	return arena_strndup(&ctx->g->arena, s, n);
}

Tok
parse_value(ParseCtx *ctx, const char *s, size_t n)
{
	Tok t = {arena_strndup(&ctx->g->arena, s, n), (int)n, 0};

	t.hash = ir_name_prefetch(ctx->g, t.s);
	return t;
}

void
parse_values_tuple(ParseCtx *ctx, bool in)
{
	ctx->in_values = in;
}

void
parse_bad_char(ParseCtx *ctx, const YYLTYPE *loc, unsigned char c)
{
	if (c >= 0x20 && c < 0x7f)
		diag_error(ctx->d, L(*loc), "unexpected character '%c'", c);
	else
		diag_error(ctx->d, L(*loc), "unexpected byte 0x%02x", c);
}

static Loc
at_byte(const YYLTYPE *loc, size_t off, size_t n)
{
	Loc r = {loc->first_line, loc->first_column + (int)off, (int)n};

	return r;
}

void
parse_non_ascii(ParseCtx *ctx, const YYLTYPE *loc, const char *text, size_t n)
{
	unsigned char c = (unsigned char)text[n - 1];
	Loc at = at_byte(loc, n - 1, 1);

	if (n == 1)
		diag_error(ctx->d, at, "unexpected non-ASCII byte 0x%02x; outside comments and "
		    "strings the text is ASCII", c);
	else
		diag_error(ctx->d, at, "non-ASCII byte 0x%02x in a name, after '%.*s'; names are "
		    "ASCII letters, digits, '_' and '.'", c, (int)(n - 1), text);
}

/* If the line of `at` opens with 'name =' and `at` is on or after that
 * name, a note: the user most likely meant the value name '%name'.  A
 * newline does not end a statement (DESIGN §12, "Text"), so such a line
 * was read on from the one before, as its attributes; only the error path
 * looks at lines, to say so. */
static void
suggest_value_name(ParseCtx *c, Loc at)
{
	int len, i = 0, s;
	const char *line = diag_line(c->d, at.line, &len);

	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	s = i;
	if (i >= len || !(isalpha((unsigned char)line[i]) || line[i] == '_'))
		return;
	while (i < len && (isalnum((unsigned char)line[i]) || line[i] == '_' || line[i] == '.'))
		i++;
	{
		int e = i;
		Loc nl = {at.line, s + 1, e - s};

		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i >= len || line[i] != '=' || at.col < s + 1)
			return;
		if ((e - s == 6 && !strncmp(line + s, "kernel", 6)) ||
		    (e - s == 6 && !strncmp(line + s, "values", 6)))
			return;   /* pools' kernel= and const's values= are attributes */
		if (at.col == s + 1)
			diag_note(c->d, nl, "did you mean '%%%.*s'? a statement starts with a value "
			    "name", e - s, line + s);
		else
			diag_note(c->d, nl, "did you mean '%%%.*s'? a statement starts with a value "
			    "name; a newline does not end one, so this line was read as attributes of "
			    "the line before", e - s, line + s);
	}
}

/* At the end of the input: a note at the innermost '{' (or the graph's
 * '<') not closed, as clang's "to match this '{'". */
static void
note_unclosed(ParseCtx *c)
{
	if (c->nopen > 0) {
		Loc o = c->open[c->nopen - 1];
		int len;
		const char *line = diag_line(c->d, o.line, &len);
		char ch = o.col >= 1 && o.col <= len ? line[o.col - 1] : '{';

		diag_note(c->d, o, "to match this '%c'", ch);
	}
}

static void
open_push(ParseCtx *c, Loc l)
{
	if (c->nopen == c->capopen) {
		c->capopen = c->capopen ? 2 * c->capopen : 8;
		c->open = xrealloc(c->open, (size_t)c->capopen * sizeof *c->open);
	}
	c->open[c->nopen++] = l;
}

void
parse_unterminated(ParseCtx *ctx, const YYLTYPE *loc)
{
	Loc r = {loc->first_line, loc->first_column, 1};

	diag_error(ctx->d, r, "unterminated string: found the end of the line, expected '\"'");
}

static int
hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool
parse_string(ParseCtx *ctx, const YYLTYPE *loc, const char *text, size_t n, Tok *out)
{
	char *buf = parse_strndup(ctx, text + 1, n - 2), *w = buf;

	for (size_t i = 1; i + 1 < n; i++) {
		unsigned char c = (unsigned char)text[i];
		int hi, lo;

		if (c == '\0') {
			diag_error(ctx->d, at_byte(loc, i, 1), "a string cannot hold a NUL byte");
			return false;
		}
		if (c != '\\') {
			*w++ = (char)c;
			continue;
		}
		c = (unsigned char)text[++i];
		switch (c) {
		case '"': *w++ = '"'; break;
		case '\\': *w++ = '\\'; break;
		case 'n': *w++ = '\n'; break;
		case 't': *w++ = '\t'; break;
		case 'x':
			hi = i + 2 < n ? hexval((unsigned char)text[i + 1]) : -1;
			lo = hi >= 0 && i + 3 < n ? hexval((unsigned char)text[i + 2]) : -1;
			if (lo < 0) {
				diag_error(ctx->d, at_byte(loc, i - 1, 2), "bad escape '\\x' in a string: "
				    "expected two hex digits after it");
				return false;
			}
			if (hi == 0 && lo == 0) {
				diag_error(ctx->d, at_byte(loc, i - 1, 4), "a string cannot hold a NUL "
				    "byte ('\\x00')");
				return false;
			}
			*w++ = (char)(hi * 16 + lo);
			i += 2;
			break;
		default:
			if (c >= 0x20 && c < 0x7f)
				diag_error(ctx->d, at_byte(loc, i - 1, 2), "bad escape '\\%c' in a string: "
				    "expected \\\", \\\\, \\n, \\t or \\xHH", c);
			else
				diag_error(ctx->d, at_byte(loc, i - 1, 2), "bad escape '\\' then byte "
				    "0x%02x in a string: expected \\\", \\\\, \\n, \\t or \\xHH", c);
			return false;
		}
	}
	*w = '\0';
	out->s = buf;
	out->len = (int)(w - buf);
	out->hash = 0;
	return true;
}

static void
yyerror(YYLTYPE *loc, yyscan_t scanner, ParseCtx *ctx, const char *msg)
{
	(void)scanner;
	diag_error(ctx->d, L(*loc), "%s", msg);
}

/* "expected ')' or ',', found '%x'": the text of the offending token is
 * quoted from the buffer, cut short if it is long. */
static int
yyreport_syntax_error(const yypcontext_t *yc, yyscan_t scanner, ParseCtx *ctx)
{
	enum { MAXEXP = 6 };
	yysymbol_kind_t exp[MAXEXP], look = yypcontext_token(yc);
	const YYLTYPE *yl = yypcontext_location(yc);
	Loc loc = L(*yl);
	int n = yypcontext_expected_tokens(yc, exp, MAXEXP);
	int total = yypcontext_expected_tokens(yc, NULL, 0);
	char buf[512], found[96];
	size_t m = 0;

	(void)scanner;
	if (look == YYSYMBOL_YYerror)
		return 0;               /* the scanner has said what it was */
	if (ctx->d->stopped)
		return 0;               /* the end lex() made up past the error limit */
	if (look == YYSYMBOL_YYEOF) {
		snprintf(found, sizeof found, "end of file");
	} else {
		int len;
		const char *line = diag_line(ctx->d, loc.line, &len);
		int tl = loc.len, off = loc.col - 1;

		if (off > len)
			off = len;
		if (tl > len - off)
			tl = len - off;
		if (tl > 40)
			snprintf(found, sizeof found, "'%.40s...'", line + off);
		else
			snprintf(found, sizeof found, "'%.*s'", tl, line + off);
	}
	/* A string is only ever a file name (const's file=): offering it
	 * wherever a value may follow '=' would be noise. */
	/* Likewise an attribute tuple's numbers and words serve values= alone:
	 * inside a tuple (an integer or ')' may follow) the hint is integers. */
	{
		bool tup = false, in_int = false;

		for (int i = 0; i < n; i++) {
			in_int = in_int || exp[i] == YYSYMBOL_INT;
			tup = tup || !strcmp(yysymbol_name(exp[i]), "')'");
		}
		for (int i = 0; i < n; ) {
			if (exp[i] == YYSYMBOL_STRING || (tup && in_int && (exp[i] == YYSYMBOL_FLOAT ||
			    exp[i] == YYSYMBOL_IDENT))) {
				memmove(&exp[i], &exp[i + 1], sizeof exp[0] * (size_t)(n - i - 1));
				n--;
				total--;
			} else {
				i++;
			}
		}
	}
	buf[0] = '\0';
	if (total > MAXEXP)
		n = MAXEXP - 1;
	for (int i = 0; i < n && m < sizeof buf; i++)
		m += (size_t)snprintf(buf + m, sizeof buf - m, "%s%s",
		    i == 0 ? "" : (i == n - 1 && total <= MAXEXP) ? " or " : ", ",
		    /* values= holds numbers and True/False, not integers alone */
		    exp[i] == YYSYMBOL_INT && ctx->in_values ? "number" : yysymbol_name(exp[i]));
	if (total > MAXEXP && m < sizeof buf)
		snprintf(buf + m, sizeof buf - m, " or another");
	if (n == 0)
		diag_error(ctx->d, loc, "unexpected %s", found);
	else
		diag_error(ctx->d, loc, "expected %s, found %s", buf, found);
	if (look == YYSYMBOL_YYEOF)
		note_unclosed(ctx);
	else
		suggest_value_name(ctx, loc);
	return 0;
}

static Refs *
refs_add(Refs *r, Tok t, Loc loc)
{
	if (!r)
		r = xcalloc(1, sizeof *r);
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 4;
		r->v = xrealloc(r->v, sizeof *r->v * (size_t)r->cap);
	}
	r->v[r->n++] = (Ref){t, loc};
	return r;
}

static void
refs_free(Refs *r)
{
	if (!r)
		return;
	free(r->v);
	free(r);
}

static Items *
items_add(Items *it, Item item)
{
	if (!it)
		it = xcalloc(1, sizeof *it);
	if (it->n == it->cap) {
		it->cap = it->cap ? 2 * it->cap : 4;
		it->v = xrealloc(it->v, sizeof *it->v * (size_t)it->cap);
	}
	it->v[it->n++] = item;
	return it;
}

static void
items_free(Items *it)
{
	if (!it)
		return;
	for (int i = 0; i < it->n; i++)
		refs_free(it->v[i].tuple);
	free(it->v);
	free(it);
}

/* ---- semantic actions ------------------------------------------------ */

static Loc
span(Loc a, Loc b)
{
	if (a.line == b.line && b.col >= a.col)
		a.len = b.col - a.col + b.len;
	return a;
}

static bool
parse_int(ParseCtx *c, Ref r, int64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoll(r.t.s, &end, 10);
	if (*end) {
		diag_error(c->d, r.loc, "expected an integer, found '%.40s%s'", r.t.s,
		    r.t.len > 40 ? "..." : "");
		return false;
	}
	if (errno == ERANGE) {
		diag_error(c->d, r.loc, "integer '%.40s%s' is out of range", r.t.s,
		    r.t.len > 40 ? "..." : "");
		return false;
	}
	return true;
}

static bool
parse_shape(ParseCtx *c, Refs *s, Loc tl, Type *t)
{
	bool ok = true;
	char buf[IR_TYPE_STR];

	if (s->n > IR_MAX_RANK) {
		diag_error(c->d, tl, "rank %d is more than the maximum of %d", s->n, IR_MAX_RANK);
		return false;
	}
	t->rank = s->n;
	t->dt = DT_F64;
	for (int i = 0; i < s->n; i++) {
		int64_t v;

		if (!parse_int(c, s->v[i], &v)) {
			ok = false;
			continue;
		}
		if (v <= 0) {
			diag_error(c->d, s->v[i].loc, "dimension %lld is not positive", (long long)v);
			ok = false;
		} else if (v > IR_MAX_DIM) {
			diag_error(c->d, s->v[i].loc,
			    "dimension %lld is more than the maximum of %d", (long long)v, IR_MAX_DIM);
			ok = false;
		}
		t->dim[i] = v;
	}
	if (ok && ir_type_numel(t) < 0) {
		diag_error(c->d, tl, "shape %s has more elements than a 64-bit count holds",
		    ir_shape_str(t, buf));
		ok = false;
	}
	return ok;
}

static void
attr_names(unsigned set, char *buf, size_t n)
{
	size_t m = 0;

	buf[0] = '\0';
	for (int a = 0; a < ATTR_COUNT; a++)
		if (set & (1u << a))
			m += (size_t)snprintf(buf + m, n - m, "%s%s", m ? ", " : "", ir_attrs[a].name);
}

static const char *
item_text(const Item *it)
{
	return it->kind == IV_TUPLE ? "a tuple" : it->kind == IV_STRING ? "a string" :
	    it->val.t.s;
}

/* A file= path must stay inside the data directory: relative, no '..'
 * component, not empty (symbolic links are checked when it is read). */
static bool
file_ok(ParseCtx *c, const Item *it)
{
	const char *why = ir_data_path_error(it->val.t.s);

	if (why)
		diag_error(c->d, it->val.loc, "'file' %s", why);
	return !why;
}

/* The integers of a tuple attribute, at most max of them. */
static bool
int_tuple(ParseCtx *c, const Item *it, int max, int64_t *t, int *cnt)
{
	if (it->tuple->n > max) {
		diag_error(c->d, it->val.loc, "'%s' has %d entries; it holds at most %d",
		    it->name.t.s, it->tuple->n, max);
		return false;
	}
	for (int i = 0; i < it->tuple->n; i++)
		if (!parse_int(c, it->tuple->v[i], &t[i]))
			return false;
	*cnt = it->tuple->n;
	return true;
}

/* One number of value= or values=: an integer (exact in *iv, *isint), a
 * float, inf or nan (as strtod reads it), or True or False (1 and 0, as
 * integers).  r is the token, NULL when the item is not a number at all
 * (found says what it is). */
static bool
number(ParseCtx *c, const char *attr, const Ref *r, const char *found, Loc at, double *v,
    int64_t *iv, bool *isint)
{
	const char *s = r ? r->t.s : "";
	char *end;

	*isint = false;
	if (r && (!strcmp(s, "True") || !strcmp(s, "False"))) {
		*isint = true;
		*iv = s[0] == 'T';
		*v = (double)*iv;
		return true;
	}
	if (r && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))) {
		errno = 0;
		*iv = strtoll(s, &end, 10);
		if (!*end) {
			if (errno == ERANGE) {
				diag_error(c->d, at, "integer '%.40s' is out of range", s);
				return false;
			}
			*isint = true;
			*v = (double)*iv;
			return true;
		}
	}
	if (r && (!strcmp(s, "inf") || !strcmp(s, "nan") || s[0] == '-' || s[0] == '.' ||
	    (s[0] >= '0' && s[0] <= '9'))) {
		*v = strtod(s, &end);
		*iv = 0;
		if (!*end)
			return true;
	}
	diag_error(c->d, at, "'%s' takes %s, found %s%.40s%s", attr,
	    found ? "a number" : "numbers", found ? "" : "'", found ? found : s, found ? "" : "'");
	return false;
}

static void
set_attr(ParseCtx *c, Node *n, const Item *it)
{
	int a = ir_attr_lookup(it->name.t.s);
	const OpInfo *op = &ir_ops[n->op];
	Loc where = span(it->name.loc, it->val.loc);
	int64_t v;

	if (a < 0 || !(op->attrs & (1u << a))) {
		char list[128];

		attr_names(op->attrs, list, sizeof list);
		if (op->attrs)
			diag_error(c->d, it->name.loc, "'%s' has no attribute '%s'; it takes %s",
			    op->name, it->name.t.s, list);
		else
			diag_error(c->d, it->name.loc, "'%s' has no attribute '%s'; it takes none",
			    op->name, it->name.t.s);
		if (it->kind != IV_BARE)
			suggest_value_name(c, it->name.loc);
		return;
	}
	if (n->at.set & (1u << a)) {
		diag_error(c->d, it->name.loc, "attribute '%s' is given twice", it->name.t.s);
		return;
	}
	{
		/* value=, file= and values= each give a const its data: one at most */
		unsigned data = AB(VALUE) | AB(FILE) | AB(VALUES), had = n->at.set & data;

		if ((data & (1u << a)) && had) {
			diag_error(c->d, it->name.loc, "'%s' takes one of 'value', 'file' and "
			    "'values'; '%s' is given already", op->name,
			    ir_attrs[__builtin_ctz(had)].name);
			return;
		}
	}
	switch (ir_attrs[a].kind) {
	case AK_FLOAT:
		if (!number(c, it->name.t.s, it->kind == IV_WORD || it->kind == IV_INT ||
		    it->kind == IV_FLOAT ? &it->val : NULL, item_text(it), it->val.loc,
		    &n->at.value, &n->at.ivalue, &n->at.value_int))
			return;
		break;
	case AK_INT:
		if (it->kind != IV_INT) {
			diag_error(c->d, it->val.loc, "'%s' takes an integer, found %s",
			    it->name.t.s, item_text(it));
			return;
		}
		if (!parse_int(c, it->val, &v))
			return;
		n->at.groups = v;
		break;
	case AK_AXIS:
		if (it->kind == IV_TUPLE) {
			int64_t t[IR_MAX_TUPLE];
			int cnt;

			if (ir_ops[n->op].cls != OC_REDUCTION) {
				diag_error(c->d, it->val.loc, "'%s' takes one axis, axis=<int>; only "
				    "a reduction takes a tuple", op->name);
				return;
			}
			if (!int_tuple(c, it, IR_MAX_RANK, t, &cnt))
				return;
			if (cnt == 0) {
				diag_error(c->d, it->val.loc, "'axis' is an empty tuple; leave it out "
				    "to reduce over all axes");
				return;
			}
			ir_attr_set_ints(c->g, &n->at, ATTR_AXIS, t, cnt);
			break;
		}
		if (it->kind != IV_INT) {
			diag_error(c->d, it->val.loc, "'%s' takes an integer%s, found %s",
			    it->name.t.s, ir_ops[n->op].cls == OC_REDUCTION ? " or a tuple of them" : "",
			    item_text(it));
			return;
		}
		if (!parse_int(c, it->val, &v))
			return;
		n->at.axis = v;
		break;
	case AK_TYPE: {
		int dt = it->kind == IV_WORD ? ir_dtype_lookup(it->val.t.s) : -1;

		if (dt < 0) {
			diag_error(c->d, it->val.loc, "'%s' takes an element type (f32, f64, i32, i64 "
			    "or bool), found %s", it->name.t.s, it->kind == IV_BARE ? "nothing" :
			    item_text(it));
			return;
		}
		n->at.to = (DType)dt;
		break;
	}
	case AK_BOOL: {
		bool b;

		if (it->kind == IV_WORD && (!strcmp(it->val.t.s, "True") || !strcmp(it->val.t.s, "true")))
			b = true;
		else if (it->kind == IV_WORD && (!strcmp(it->val.t.s, "False") ||
		    !strcmp(it->val.t.s, "false")))
			b = false;
		else {
			diag_error(c->d, it->val.loc, "'%s' takes True or False, found %s",
			    it->name.t.s, item_text(it));
			return;
		}
		*(a == ATTR_KEEPDIMS ? &n->at.keepdims : a == ATTR_LAST ? &n->at.last :
		    a == ATTR_CEIL_MODE ? &n->at.ceil_mode : &n->at.count_include_pad) = b;
		break;
	}
	case AK_STRING:
		if (it->kind != IV_STRING) {
			diag_error(c->d, it->val.loc, "'%s' takes a string such as \"w.npy\", found %s",
			    it->name.t.s, it->kind == IV_BARE ? "nothing" : item_text(it));
			return;
		}
		if (!file_ok(c, it))
			return;
		n->at.file = it->val.t.s;
		break;
	case AK_FLOATS: {
		double *vs;
		int64_t *is;
		bool isint;

		if (it->kind != IV_TUPLE) {
			diag_error(c->d, it->val.loc, "'%s' takes a tuple of numbers such as (1.5, -2), "
			    "found %s", it->name.t.s, it->kind == IV_BARE ? "nothing" : item_text(it));
			return;
		}
		if (it->tuple->n == 0 || it->tuple->n > IR_MAX_VALUES) {
			diag_error(c->d, it->val.loc, "'%s' has %d elements; it holds 1 to %d (larger "
			    "data goes in a file=)", it->name.t.s, it->tuple->n, IR_MAX_VALUES);
			return;
		}
		vs = arena_alloc(&c->g->arena, sizeof(double) * (size_t)it->tuple->n);
		is = arena_alloc(&c->g->arena, sizeof(int64_t) * (size_t)it->tuple->n);
		for (int i = 0; i < it->tuple->n; i++) {
			const Ref *r = &it->tuple->v[i];

			if (!number(c, it->name.t.s, r, NULL, r->loc, &vs[i], &is[i], &isint))
				return;
			if (!isint)
				n->at.values_float |= (uint64_t)1 << i;
		}
		n->at.values = vs;
		n->at.ivalues = is;
		n->at.nvalues = it->tuple->n;
		break;
	}
	case AK_INTS: {
		int64_t t[IR_MAX_TUPLE];
		int cnt;

		if (it->kind != IV_TUPLE) {
			diag_error(c->d, it->val.loc, "'%s' takes a tuple such as (1, 0), found %s",
			    it->name.t.s, item_text(it));
			return;
		}
		if (!int_tuple(c, it, a == ATTR_PADS ? IR_MAX_TUPLE : IR_MAX_RANK, t, &cnt))
			return;
		ir_attr_set_ints(c->g, &n->at, (AttrId)a, t, cnt);
		break;
	}
	}
	n->at.set |= 1u << a;
	if (!n->attrloc)
		n->attrloc = arena_alloc(&c->g->arena, sizeof(Loc) * ATTR_COUNT);
	n->attrloc[a] = where;
}

static void
pend_add(ParseCtx *c, int node, int slot, Ref r)
{
	if (c->npend == c->cappend) {
		c->cappend = c->cappend ? 2 * c->cappend : 8;
		c->pend = xrealloc(c->pend, sizeof *c->pend * (size_t)c->cappend);
	}
	c->pend[c->npend++] = (Pend){node, slot, r};
}

static bool
name_ok(ParseCtx *c, Tok name, Loc nl)
{
	if (name.len > IR_MAX_NAME) {
		diag_error(c->d, nl, "value name of %d bytes is longer than the limit of %d",
		    name.len, IR_MAX_NAME);
		return false;
	}
	return true;
}

/* Statements after 'return' are reported once, at the first of them: a
 * kernel block after it would otherwise be reported again for each op. */
static void
after_return(ParseCtx *c, Loc at)
{
	if (c->returned && !c->late) {
		diag_error(c->d, at, "'return' must be the last statement of the graph");
		c->late = true;
	}
}

/* The limits that stop the parse (docs/reliability.md): past them the
 * input is not a model but an attack on the memory, and one message says
 * so better than a million. */
static bool
room_ok(ParseCtx *c, Loc nl)
{
	if (c->g->nnodes < IR_MAX_NODES)
		return true;
	diag_error(c->d, nl, "the graph has more than %d ops, the limit (IR_MAX_NODES in "
	    "src/ir/ir.h)", IR_MAX_NODES);
	return false;
}

static bool
nest_ok(ParseCtx *c, Loc kwl)
{
	if (c->ntfor < IR_MAX_NEST)
		return true;
	diag_error(c->d, kwl, "loops are nested more than %d deep, the limit (IR_MAX_NEST in "
	    "src/ir/ir.h)", IR_MAX_NEST);
	return false;
}

/* A const's value= and values= in its element type: integers for an
 * integer type (exact), 0 or 1 (True, False) for bool. */
static void
data_fits(ParseCtx *c, Node *n)
{
	DType dt = n->type.dt;

	if (n->op != OP_CONST || n->type.rank < 0 || ir_dtype_is_float(dt))
		return;
	if ((n->at.set & AB(VALUE)) && (!n->at.value_int ||
	    (dt == DT_BOOL && (n->at.ivalue < 0 || n->at.ivalue > 1)) ||
	    (dt == DT_I32 && (n->at.ivalue < INT32_MIN || n->at.ivalue > INT32_MAX))))
		diag_error(c->d, n->attrloc[ATTR_VALUE], "'value' does not fit the element type %s",
		    ir_dtype_name(dt));
	if (n->at.set & AB(VALUES))
		for (int i = 0; i < n->at.nvalues; i++) {
			int64_t v = n->at.ivalues[i];

			if (((n->at.values_float >> i) & 1) || (dt == DT_BOOL && (v < 0 || v > 1)) ||
			    (dt == DT_I32 && (v < INT32_MIN || v > INT32_MAX))) {
				diag_error(c->d, n->attrloc[ATTR_VALUES], "'values' element %d does not "
				    "fit the element type %s", i, ir_dtype_name(dt));
				break;
			}
		}
}

static void
op_stmt(ParseCtx *c, Tok name, Loc nl, Tok op, Loc ol, Refs *ins, Refs *shape, Loc tl,
    Items *items)
{
	Graph *g = c->g;
	int opid = ir_op_lookup(op.s), nin = ins ? ins->n : 0, prev, idx;
	Node *n;
	bool poison = false;
	unsigned named = 0;          /* attributes written, even if refused */

	after_return(c, nl);
	if (c->kernel >= 0)
		c->kstmts++;
	if (!name_ok(c, name, nl))
		goto out;
	/* A bad op still defines its name (as an input), so that its users do
	 * not each report it undefined. */
	idx = ir_define(g, OP_INPUT, name.s, name.hash, &prev);
	if (idx < 0) {
		diag_error(c->d, nl, "redefinition of '%%%s'", name.s);
		diag_note(c->d, g->nodes[prev].loc, "previous definition is here");
		goto out;
	}
	if (opid < 0) {
		const char *s = ir_op_suggest(op.s);

		if (s)
			diag_error(c->d, ol, "unknown op '%s'; did you mean '%s'?", op.s, s);
		else
			diag_error(c->d, ol, "unknown op '%s'", op.s);
		poison = true;
	} else if (nin < ir_ops[opid].nmin ||
	    (ir_ops[opid].nmax != IR_VARIADIC && nin > ir_ops[opid].nmax)) {
		const OpInfo *oi = &ir_ops[opid];

		if (oi->nmax == IR_VARIADIC)
			diag_error(c->d, ol, "'%s' takes %d or more operands, found %d", op.s,
			    oi->nmin, nin);
		else if (oi->nmax > oi->nmin)
			diag_error(c->d, ol, "'%s' takes %d or %d operands, found %d", op.s,
			    oi->nmin, oi->nmax, nin);
		else
			diag_error(c->d, ol, "'%s' takes %d operand%s, found %d", op.s,
			    oi->nmin, oi->nmin == 1 ? "" : "s", nin);
		poison = true;
	}
	n = &g->nodes[idx];
	if (!poison)
		n->op = (OpId)opid;
	n->loc = nl;
	n->oploc = ol;
	n->kernel = c->kernel;
	if (poison)
		goto out;
	ir_set_nin(g, idx, nin);
	n = &g->nodes[idx];
	for (int j = 0; j < nin; j++) {
		int k = ir_lookup_hashed(g, ins->v[j].t.s, ins->v[j].t.hash);

		n->inloc[j] = ins->v[j].loc;
		if (k >= 0 && k != idx)
			n->in[j] = k;
		else
			pend_add(c, idx, j, ins->v[j]);
	}
	if (shape) {
		n->typeloc = tl;
		if (!parse_shape(c, shape, tl, &n->type))
			n->type.rank = -1;
	}
	for (int i = 0; items && i < items->n; i++) {
		const Item *it = &items->v[i];

		if (it->kind != IV_BARE) {
			int a = ir_attr_lookup(it->name.t.s);

			if (a >= 0)
				named |= 1u << a;
			set_attr(c, n, it);
		} else if (i == 0 && shape) {
			int dt = ir_dtype_lookup(it->name.t.s);

			if (dt >= 0)
				n->type.dt = (DType)dt;
			else
				diag_error(c->d, it->name.loc, "unknown element type '%s'; expected f32, "
				    "f64, i32, i64 or bool", it->name.t.s);
		} else {
			diag_error(c->d, it->name.loc, "expected an attribute 'name=value', found '%s'",
			    it->name.t.s);
		}
	}
	if (ir_ops[n->op].cls == OC_SOURCE && !shape)
		diag_error(c->d, ol, "'%s' needs a type, such as ': (64, 48)'", op.s);
	if ((n->at.set & AB(VALUES)) && n->type.rank >= 0 &&
	    ir_type_numel(&n->type) != n->at.nvalues) {
		char buf[IR_TYPE_STR];

		diag_error(c->d, n->attrloc[ATTR_VALUES], "'values' has %d element%s, but the type "
		    "%s has %lld", n->at.nvalues, n->at.nvalues == 1 ? "" : "s",
		    ir_shape_str(&n->type, buf), (long long)ir_type_numel(&n->type));
	}
	data_fits(c, n);
	for (int a = 0; a < ATTR_COUNT; a++)
		if ((ir_ops[n->op].required & (1u << a)) && !(named & (1u << a)))
			diag_error(c->d, ol, "'%s' needs attribute '%s'", op.s, ir_attrs[a].name);
out:
	refs_free(ins);
	refs_free(shape);
	items_free(items);
}

static void
kernel_open(ParseCtx *c, Tok name, Loc kl, Loc nl, Tok kind, Loc kindl, Items *items)
{
	Graph *g = c->g;
	int kk = ir_kernel_kind_lookup(kind.s), k;
	Kernel *kn;

	after_return(c, kl);
	for (int i = 0; i < g->nkernels; i++)
		if (!strcmp(g->kernels[i].name, name.s)) {
			diag_error(c->d, nl, "redefinition of kernel '@%s'", name.s);
			diag_note(c->d, g->kernels[i].nameloc, "previous definition is here");
			break;
		}
	if (kk < 0) {
		unknown_kind(c, kindl, kind.s);
		kk = KK_OPAQUE;
	}
	k = ir_add_kernel(g, name.s, (KernelKind)kk);
	kn = &g->kernels[k];
	kn->loc = kl;
	kn->nameloc = nl;
	kn->first = g->nnodes;
	for (int i = 0; items && i < items->n; i++) {
		const Item *it = &items->v[i];
		int a = ir_kattr_lookup(it->name.t.s);
		int64_t v;

		if (a < 0) {
			diag_error(c->d, it->name.loc, "unknown kernel attribute '%s'; expected BM, "
			    "BN, BK, warps, stages or split", it->name.t.s);
			continue;
		}
		if (it->kind != IV_INT) {
			diag_error(c->d, it->kind == IV_BARE ? it->name.loc : it->val.loc,
			    "kernel attribute '%s' takes a positive integer", it->name.t.s);
			continue;
		}
		if (!parse_int(c, it->val, &v))
			continue;
		if (v <= 0 || v > IR_MAX_DIM) {
			diag_error(c->d, it->val.loc, "kernel attribute '%s' must be in 1..%d, found %lld",
			    it->name.t.s, IR_MAX_DIM, (long long)v);
			continue;
		}
		if (ir_kattr_is_block(a) && !ir_is_pow2(v)) {
			diag_error(c->d, it->val.loc, "kernel attribute '%s' must be " IR_POW2_WHY
			    ", found %lld", it->name.t.s, (long long)v);
			continue;
		}
		if (kn->kset & (1u << a)) {
			diag_error(c->d, it->name.loc, "kernel attribute '%s' is given twice",
			    it->name.t.s);
			continue;
		}
		kn->kset |= 1u << a;
		kn->kattr[a] = v;
	}
	items_free(items);
	c->kernel = k;
	c->kstmts = 0;
}

static void
kernel_close(ParseCtx *c)
{
	Kernel *kn = &c->g->kernels[c->kernel];

	kn->last = c->g->nnodes - 1;
	if (kn->last < kn->first) {
		/* Statements that failed were reported; the block is not empty. */
		if (c->kstmts == 0)
			diag_error(c->d, kn->loc, "kernel '@%s' is empty", kn->name);
		kn->first = kn->last = -1;
	}
	c->kernel = -1;
}

static void
return_stmt(ParseCtx *c, Loc rl, Refs *names)
{
	if (c->returned) {
		diag_error(c->d, rl, "a graph has only one 'return'");
		refs_free(names);
		return;
	}
	c->returned = true;
	c->ret = names;
	c->retloc = rl;
}

/* ---- the tile IR (docs/tiled.md) ------------------------------------- */

static Idx *
idx_add(Idx *x, Ref v, Ref c, Loc loc)
{
	if (!x) {
		x = xcalloc(1, sizeof *x);
		x->loc = loc;
	}
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 4;
		x->v = xrealloc(x->v, sizeof *x->v * (size_t)x->cap);
	}
	x->v[x->n++] = (Term){v, c};
	return x;
}

static void
idx_free(Idx *x)
{
	if (!x)
		return;
	free(x->v);
	free(x);
}

static Idxs *
idxs_add(Idxs *x, Idx *i)
{
	if (!x)
		x = xcalloc(1, sizeof *x);
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 4;
		x->v = xrealloc(x->v, sizeof *x->v * (size_t)x->cap);
	}
	x->v[x->n++] = i;
	return x;
}

static void
idxs_free(Idxs *x)
{
	if (!x)
		return;
	for (int i = 0; i < x->n; i++)
		idx_free(x->v[i]);
	free(x->v);
	free(x);
}

/* A tile shape "[32, 16]": rank <= 4, each dimension in 1..IR_MAX_DIM. */
static bool
tile_shape(ParseCtx *c, Refs *s, Loc tl, int *rank, int64_t *dim)
{
	/* up to IR_MAX_RANK: the executor runs a tile whose dims before its
	 * last four are 1 and refuses any other (tile_plan.c) */
	if (s->n > IR_MAX_RANK) {
		diag_error(c->d, tl, "tile rank %d is more than the maximum of %d", s->n, IR_MAX_RANK);
		return false;
	}
	*rank = s->n;
	for (int i = 0; i < s->n; i++) {
		if (!parse_int(c, s->v[i], &dim[i]))
			return false;
		if (dim[i] <= 0 || dim[i] > IR_MAX_DIM) {
			diag_error(c->d, s->v[i].loc, "tile dimension %lld is not in 1..%d",
			    (long long)dim[i], IR_MAX_DIM);
			return false;
		}
	}
	return true;
}

static bool
item_double(ParseCtx *c, const Item *it, double *v)
{
	if (it->kind == IV_INT || it->kind == IV_FLOAT || (it->kind == IV_WORD &&
	    (!strcmp(it->val.t.s, "inf") || !strcmp(it->val.t.s, "nan")))) {
		*v = strtod(it->val.t.s, NULL);
		return true;
	}
	diag_error(c->d, it->kind == IV_BARE ? it->name.loc : it->val.loc, "'%s' takes a number, "
	    "found %s", it->name.t.s, it->kind == IV_BARE ? "nothing" : item_text(it));
	return false;
}

/* A tile op's number (value=, other=): an integer exactly (an i64 past
 * 2^53 too; one beyond int64's range as the double it rounds to), a
 * float, inf or nan. */
static bool
item_tnum(ParseCtx *c, const Item *it, TileNum *v)
{
	double d;
	char *end;
	long long i;

	if (!item_double(c, it, &d))
		return false;
	*v = tile_num(d);
	if (it->kind == IV_INT) {
		errno = 0;
		i = strtoll(it->val.t.s, &end, 10);
		if (!*end && errno != ERANGE)
			*v = tile_inum(i);
	}
	return true;
}

static bool
item_int(ParseCtx *c, const Item *it, int64_t *v)
{
	if (it->kind != IV_INT) {
		diag_error(c->d, it->kind == IV_BARE ? it->name.loc : it->val.loc, "'%s' takes an "
		    "integer, found %s", it->name.t.s, it->kind == IV_BARE ? "nothing" : item_text(it));
		return false;
	}
	return parse_int(c, it->val, v);
}

static bool
item_ints(ParseCtx *c, const Item *it, int64_t *v, int *n)
{
	if (it->kind != IV_TUPLE || it->tuple->n > IR_MAX_RANK) {
		diag_error(c->d, it->kind == IV_BARE ? it->name.loc : it->val.loc, "'%s' takes a "
		    "tuple of at most %d integers", it->name.t.s, IR_MAX_RANK);
		return false;
	}
	*n = it->tuple->n;
	for (int i = 0; i < *n; i++)
		if (!parse_int(c, it->tuple->v[i], &v[i]))
			return false;
	return true;
}

/* The open body's operands by name (items: operand indices), reused from
 * body to body.  Each access and each definition asks for an operand by
 * name; a scan of the operands made a fused kernel of 10k operands
 * quadratic.  While the body opens, names come from its operand list
 * (TargCtx.ins); later from the graph (an undefined operand then matches
 * nothing, as the scans skipped it). */
typedef struct TargCtx {
	const ParseCtx *c;
	const Refs *ins;
} TargCtx;

static bool
targ_eq(const void *ctx, uint32_t j, const void *name)
{
	const TargCtx *t = ctx;
	int a = t->c->tf->args[j];
	const char *s = t->ins ? t->ins->v[j].t.s : a >= 0 ? t->c->g->nodes[a].name : NULL;

	return s && !strcmp(s, name);
}

/* The operand of the open body named name, or -1. */
static int
targ_find(const ParseCtx *c, const char *name)
{
	TargCtx t = {c, NULL};

	return (int)hashmap_find(&c->targ, (uint32_t)ir_hash_str(name), targ_eq, &t, name);
}

/* An empty index with room for n operands, cleared at a cost in proportion
 * to n (one much larger, left by a large body, is freed). */
static void
targ_reset(ParseCtx *c, int n)
{
	if (c->targ.cap > 4 * hash_cap((size_t)n))
		hashmap_free(&c->targ);
	else
		hashmap_clear(&c->targ);
	hashmap_reserve(&c->targ, (size_t)n);
}

/* Reports a name that a new value of the open body may not take (the
 * value is defined all the same, so that no use of it fails). */
static void
t_name(ParseCtx *c, Tok name, Loc nl)
{
	TileFn *f = c->tf;
	int prev = tile_lookup(f, name.s);

	if (prev >= 0) {
		diag_error(c->d, nl, "redefinition of '%%%s'", name.s);
		diag_note(c->d, f->vals[prev].loc, "previous definition is here");
	} else if (!strcmp(name.s, c->tname)) {
		diag_error(c->d, nl, "'%%%s' is the kernel's result; a value inside it needs "
		    "another name", name.s);
	} else if (targ_find(c, name.s) >= 0) {
		diag_error(c->d, nl, "'%%%s' is an operand of the kernel; a value inside "
		    "it needs another name", name.s);
	}
}

/* Defines the result of instruction i of the open body. */
static void
t_def(ParseCtx *c, int i, Tok name, Loc nl, int rank, const int64_t *shape)
{
	int v;

	t_name(c, name, nl);
	v = tile_build_def(c->g, c->tf, i, name.s, rank, shape);
	c->tf->vals[v].loc = nl;
}

static int
t_use(ParseCtx *c, Tok name, Loc loc)
{
	int v = tile_lookup(c->tf, name.s);

	if (v < 0)
		diag_error(c->d, loc, "use of undefined value '%%%s' in tiled '@%s'", name.s,
		    c->tf->name);
	return v < 0 ? 0 : v;
}

static void
tiled_open(ParseCtx *c, Tok name, Loc nl, Tok kw, Loc kwl, Tok sym, Tok kind, Loc kindl,
    Refs *ins, Refs *shape, Loc tl, Items *items)
{
	Graph *g = c->g;
	int kk = ir_kernel_kind_lookup(kind.s), idx = -1;
	TileFn *f;
	Type t = {.rank = -1};

	if (strcmp(kw.s, "tiled"))
		diag_error(c->d, kwl, "expected 'tiled' before '@%s', found '%s'", sym.s, kw.s);
	after_return(c, nl);
	if (kk < 0) {
		unknown_kind(c, kindl, kind.s);
		kk = KK_OPAQUE;
	}
	f = tile_fn_new(g, sym.s, (KernelKind)kk);
	f->loc = kwl;
	c->tf = f;
	c->tname = name.s;
	if (!parse_shape(c, shape, tl, &t))
		t.rank = -1;
	f->nargs = ins ? ins->n : 0;
	f->args = arena_alloc(&g->arena, sizeof(int) * (size_t)(f->nargs + 1));
	f->argloc = arena_alloc(&g->arena, sizeof(Loc) * (size_t)(f->nargs + 1));
	targ_reset(c, f->nargs);
	for (int j = 0; j < f->nargs; j++) {
		TargCtx tc = {c, ins};

		f->args[j] = ir_lookup(g, ins->v[j].t.s);
		f->argloc[j] = ins->v[j].loc;
		if (f->args[j] < 0)
			diag_error(c->d, ins->v[j].loc, "use of undefined value '%%%s'", ins->v[j].t.s);
		/* Of equal names the first stays: the body is refused anyway. */
		if (hashmap_put(&c->targ, (uint32_t)ir_hash_str(ins->v[j].t.s), (uint32_t)j, targ_eq,
		    &tc, ins->v[j].t.s) >= 0)
			diag_error(c->d, ins->v[j].loc, "'%%%s' is named twice among the operands",
			    ins->v[j].t.s);
	}
	for (int i = 0; items && i < items->n; i++) {
		const Item *it = &items->v[i];
		const char *key = it->name.t.s;
		int a = ir_kattr_lookup(key);
		int64_t v, gv[IR_MAX_RANK];
		int ng;

		if (it->kind == IV_BARE && i == 0 && ir_dtype_lookup(key) >= 0) {
			t.dt = (DType)ir_dtype_lookup(key);   /* f32, i64, bool, ... */
		} else if (!strcmp(key, "grid")) {
			if (!item_ints(c, it, gv, &ng))
				continue;
			if (ng < 1 || ng > 3) {
				diag_error(c->d, it->val.loc, "'grid' has 1 to 3 axes, found %d", ng);
				continue;
			}
			for (int k = 0; k < ng; k++)
				f->grid[k] = gv[k];
		} else if (!strcmp(key, "init")) {
			if (item_double(c, it, &f->init))
				f->has_init = true;
		} else if (a >= 0) {
			if (!item_int(c, it, &v))
				continue;
			if (v <= 0 || v > IR_MAX_DIM) {
				diag_error(c->d, it->val.loc, "kernel attribute '%s' must be in 1..%d, "
				    "found %lld", key, IR_MAX_DIM, (long long)v);
				continue;
			}
			f->kset |= 1u << a;
			f->kattr[a] = v;
		} else {
			diag_error(c->d, it->name.loc, "unknown attribute '%s' of 'tiled'; expected "
			    "grid, init, BM, BN, BK, warps, stages or split", key);
		}
	}
	f->dt = t.dt;
	if (name_ok(c, name, nl)) {
		int prev = ir_lookup(g, name.s);

		if (prev >= 0) {
			diag_error(c->d, nl, "redefinition of '%%%s'", name.s);
			diag_note(c->d, g->nodes[prev].loc, "previous definition is here");
		} else {
			idx = ir_add_node(g, OP_TILED, name.s);
			g->nodes[idx].loc = nl;
			g->nodes[idx].oploc = kwl;
			g->nodes[idx].typeloc = tl;
			g->nodes[idx].type = t;
			g->nodes[idx].tile = f;
		}
	}
	(void)idx;
	refs_free(ins);
	refs_free(shape);
	items_free(items);
}

static void
tiled_close(ParseCtx *c)
{
	c->tf = NULL;
	c->tname = NULL;
}

/* The number of operands an op takes, in words: "no", "2", "1 or 2". */
static const char *
nin_words(const TileOpInfo *t, char *buf, size_t n)
{
	if (t->nin != t->nmax)
		snprintf(buf, n, "%d or %d", t->nin, t->nmax);
	else if (t->nin == 0)
		snprintf(buf, n, "no");
	else
		snprintf(buf, n, "%d", t->nin);
	return buf;
}

/* Reads the attribute items of a statement of op k (written op) into at:
 * the op's row says which it takes. */
static void
t_attrs(ParseCtx *c, TileOpKind k, TileAttrs *at, const char *op, Items *items)
{
	for (int j = 0; items && j < items->n; j++) {
		const Item *it = &items->v[j];
		const char *key = it->name.t.s;
		int a = -1;

		/* only the op's own attributes are candidates: one or two */
		for (unsigned set = tile_ops[k].attrs; set && a < 0; set &= set - 1)
			if (!strcmp(tile_attr_names[__builtin_ctz(set)], key))
				a = __builtin_ctz(set);
		if (a < 0 || (a == TA_MASKED && it->kind != IV_BARE)) {
			diag_error(c->d, it->name.loc, "'%s' has no attribute '%s'", op, key);
			continue;
		}
		switch ((TileAttrId)a) {
		case TA_AXIS:
			at->set |= TAB(AXIS);
			if (item_int(c, it, &at->axis) && at->axis < 0 && (k == TO_REDUCE ||
			    k == TO_ARGMAX || k == TO_ARGMIN))
				diag_error(c->d, it->val.loc, "a tile reduction's axis is written "
				    "non-negative, found %lld", (long long)at->axis);
			break;
		case TA_KEEPDIMS:
			at->set |= TAB(KEEPDIMS);
			if (it->kind == IV_WORD && (!strcmp(it->val.t.s, "True") ||
			    !strcmp(it->val.t.s, "true")))
				at->keepdims = true;
			else if (!(it->kind == IV_WORD && (!strcmp(it->val.t.s, "False") ||
			    !strcmp(it->val.t.s, "false"))))
				diag_error(c->d, it->name.loc, "'keepdims' takes True or False");
			break;
		case TA_BY:
			at->set |= TAB(BY);
			item_int(c, it, &at->by);
			break;
		case TA_AT:
			at->set |= TAB(AT);
			item_int(c, it, &at->start);
			break;
		case TA_VALUE:
			at->set |= TAB(VALUE);
			item_tnum(c, it, &at->value);
			break;
		case TA_PERM:
			at->set |= TAB(PERM);
			item_ints(c, it, at->perm, &at->nperm);
			break;
		case TA_OTHER:
			if (item_tnum(c, it, &at->other))
				at->set |= TAB(OTHER);
			break;
		case TA_MASKED:
			at->set |= TAB(MASKED);
			break;
		case TA_VIEW:
			if (item_ints(c, it, at->view, &at->nview))
				at->set |= TAB(VIEW);
			break;
		case TA_TO: {
			int dt = it->kind == IV_WORD ? ir_dtype_lookup(it->val.t.s) : -1;

			if (strcmp(op, "cast") != 0)
				diag_error(c->d, it->name.loc, "'%s' has no attribute 'to'", op);
			else if (dt < 0) {
				diag_error(c->d, it->val.loc, "'to' takes an element type: f32, f64, "
				    "i32, i64 or bool");
				at->set |= TAB(TO);      /* said once: not "needs 'to'" too */
			} else {
				at->set |= TAB(TO);
				at->to = (DType)dt;
			}
			break;
		}
		case TA_WINDOW:
			if (it->kind != IV_TUPLE || it->tuple->n > TILE_MAX_WINDOW) {
				diag_error(c->d, it->kind == IV_BARE ? it->name.loc : it->val.loc,
				    "'window' takes a tuple of at most %d integers", TILE_MAX_WINDOW);
				break;
			}
			at->nwin = it->tuple->n;
			at->set |= TAB(WINDOW);
			for (int q = 0; q < at->nwin; q++)
				if (!parse_int(c, it->tuple->v[q], &at->win[q]))
					at->set &= ~TAB(WINDOW);
			break;
		case TA_STEPS:
			if (item_ints(c, it, at->steps, &at->nsteps))
				at->set |= TAB(STEPS);
			break;
		case TA_STRIDES:
			if (item_ints(c, it, at->strides, &at->nstrides))
				at->set |= TAB(STRIDES);
			break;
		case TA_OFFSET:
			at->set |= TAB(OFFSET);
			item_int(c, it, &at->offset);
			break;
		case TA_LAST:
			at->set |= TAB(LAST);
			if (it->kind == IV_WORD && (!strcmp(it->val.t.s, "True") ||
			    !strcmp(it->val.t.s, "true")))
				at->last = true;
			else if (!(it->kind == IV_WORD && (!strcmp(it->val.t.s, "False") ||
			    !strcmp(it->val.t.s, "false"))))
				diag_error(c->d, it->name.loc, "'last' takes True or False");
			break;
		case TA_COUNT:
			break;
		}
	}
}

static void
t_op(ParseCtx *c, Tok name, Loc nl, Tok op, Loc ol, Refs *ins, Refs *shape, Loc tl,
    Items *items)
{
	TileFn *f = c->tf;
	int k = tile_op_lookup(op.s);
	OpId gop = OP_INPUT;
	int nin = ins ? ins->n : 0, rank = -1, in[3];
	const TileOpInfo *t;
	bool tile;
	int64_t dim[IR_MAX_RANK] = {0};
	char want[32];
	TileAttrs at = {.axis = -1};

	if (k >= 0 && tile_ops[k].form != TF_CALL)
		k = -1;                      /* load, for, ...: not written as calls */
	if (k < 0) {
		int g = ir_op_lookup(op.s);

		if (g < 0 || (k = tile_op_of_gop((OpId)g)) == TO_COUNT) {
			diag_error(c->d, ol, "unknown tile op '%s'; a tiled body takes program_id, "
			    "idiv, irem, zeros, full, load, store, atomic_add, atomic_max, for, dot, "
			    "transpose, extract, join, sum, max and the elementwise ops", op.s);
			goto out;
		}
		gop = (OpId)g;
	}
	t = &tile_ops[k];
	tile = t->result != TR_SCALAR;
	if (nin < t->nin || nin > t->nmax) {
		diag_error(c->d, ol, "'%s' takes %s operand%s, found %d", op.s,
		    nin_words(t, want, sizeof want), t->nin == 1 && t->nmax == 1 ? "" : "s", nin);
		goto out;
	}
	if (tile && !shape) {
		diag_error(c->d, ol, "'%s' needs a tile type, such as ': [32, 32]'", op.s);
		goto out;
	}
	if (!tile && shape) {
		diag_error(c->d, tl, "'%s' makes a scalar; it takes no tile type", op.s);
		goto out;
	}
	if (shape && !tile_shape(c, shape, tl, &rank, dim))
		goto out;
	for (int j = 0; j < nin; j++)
		in[j] = t_use(c, ins->v[j].t, ins->v[j].loc);
	t_attrs(c, (TileOpKind)k, &at, op.s, items);
	if (k == TO_PROGRAM_ID && at.axis < 0)
		diag_error(c->d, ol, "'program_id' needs axis=0, 1 or 2");
	if (gop == OP_CAST && !(at.set & TAB(TO)))
		diag_error(c->d, ol, "'cast' needs attribute 'to'");
	t_def(c, tile_build_op(c->g, f, (TileOpKind)k, gop, nin, in, &at, ol), name, nl, rank, dim);
out:
	refs_free(ins);
	refs_free(shape);
	items_free(items);
}

/* Reads the index expressions idx of an access into x[0..idx->n). */
static bool
t_index(ParseCtx *c, Idxs *idx, TileIdx *x)
{
	if (idx->n > IR_MAX_RANK) {
		diag_error(c->d, idx->v[0]->loc, "%d indices; a tensor has at most %d dimensions",
		    idx->n, IR_MAX_RANK);
		return false;
	}
	for (int k = 0; k < idx->n; k++) {
		Idx *e = idx->v[k];
		TileIdx *t = &x[k];

		for (int j = 0; j < e->n; j++) {
			int64_t coef = 1;

			if (e->v[j].c.t.s && !parse_int(c, e->v[j].c, &coef))
				return false;
			if (!e->v[j].v.t.s) {
				int64_t sum;

				/* Constant terms add up; near int64's edges the sum
				 * would overflow (the verifier refuses far less).  The
				 * access is still defined, so that no use of it fails. */
				if (__builtin_add_overflow(t->k, coef, &sum))
					diag_error(c->d, e->v[j].c.loc, "the constants of index %d add up "
					    "beyond 64 bits; an index stays within +-2^50", k);
				else
					t->k = sum;
				continue;
			}
			if (t->nterm == TILE_MAX_TERMS) {
				diag_error(c->d, e->v[j].v.loc, "an index has at most %d value terms",
				    TILE_MAX_TERMS);
				return false;
			}
			t->val[t->nterm] = t_use(c, e->v[j].v.t, e->v[j].v.loc);
			t->coef[t->nterm++] = coef;
		}
	}
	return true;
}

/* load (name set), store, atomic_add, atomic_max (name.s NULL). */
static void
t_access(ParseCtx *c, Tok name, Loc nl, Tok op, Loc ol, Tok target, Loc gl, Idxs *idx,
    Refs *shape, Loc tl, Tok val, Loc vl, Items *items)
{
	TileFn *f = c->tf;
	int k = tile_op_lookup(op.s);
	int arg = -2, rank = 0, v = -1, i;
	int64_t dim[IR_MAX_RANK] = {0};
	TileIdx x[IR_MAX_RANK] = {{0}};
	TileAttrs at = {0};

	if (k < 0 || tile_ops[k].form != (name.s ? TF_LOAD : TF_STORE)) {
		diag_error(c->d, ol, name.s ? "expected 'load', 'load_pad', 'load_step', "
		    "'load_gather', 'argmax' or 'argmin', found '%s'" :
		    "expected 'store', 'atomic_add' or 'atomic_max', found '%s'", op.s);
		goto out;
	}
	arg = targ_find(c, target.s);    /* an operand wins over the result's name */
	if (arg < 0)
		arg = !strcmp(target.s, c->tname) ? TILE_RESULT : -2;
	if (arg == -2) {
		diag_error(c->d, gl, "'%%%s' is neither an operand nor the result of tiled '@%s'",
		    target.s, f->name);
		goto out;
	}
	if (name.s && !shape) {
		diag_error(c->d, ol, "'%s' needs a tile type, such as ': [32, 32]'", op.s);
		goto out;
	}
	if (shape && !tile_shape(c, shape, tl, &rank, dim))
		goto out;
	if (!t_index(c, idx, x))
		goto out;
	if (val.s && name.s && tile_ops[k].nmax < 1) {
		diag_error(c->d, vl, "'%s' takes no operand tile", op.s);
		goto out;
	}
	if (name.s && !val.s && tile_ops[k].nin > 0) {
		diag_error(c->d, ol, "'%s' needs an operand tile: '%s %%x[..], %%t'", op.s, op.s);
		goto out;
	}
	if (val.s)
		v = t_use(c, val, vl);
	t_attrs(c, (TileOpKind)k, &at, op.s, items);
	/* a strided view: one stride per dim of view=, an offset only with
	 * strides (docs/tiled.md) */
	if ((at.set & TAB(STRIDES)) && (!(at.set & TAB(VIEW)) || at.nstrides != at.nview)) {
		diag_error(c->d, ol, "'%s' strides= has %d numbers but view= has %d; expected "
		    "one stride per view dim (and a view=)", op.s, at.nstrides,
		    (at.set & TAB(VIEW)) ? at.nview : 0);
		at.set &= ~(TAB(STRIDES) | TAB(OFFSET));
	}
	if ((at.set & TAB(OFFSET)) && !(at.set & TAB(STRIDES))) {
		diag_error(c->d, ol, "'%s' offset= needs strides= (the view's strides)", op.s);
		at.set &= ~TAB(OFFSET);
	}
	i = tile_build_access(c->g, f, (TileOpKind)k, arg, idx->n, x, v, &at, ol);
	if (name.s)
		t_def(c, i, name, nl, rank, dim);
out:
	idxs_free(idx);
	refs_free(shape);
	items_free(items);
}

static void
t_for_open(ParseCtx *c, Tok name, Loc nl, Tok kw, Loc kwl, Tok var, Loc vl, Ref lo, Tok to,
    Ref hi, Tok step, Ref st, Tok iter, Tok it, Loc itl, Tok init, Loc il)
{
	TileFn *f = c->tf;
	int64_t b[3] = {0, 0, 0};    /* lo, hi, step */
	int i, v0, v;

	(void)name;                  /* the result is defined at the close */
	(void)nl;
	if (strcmp(kw.s, "for") || strcmp(to.s, "to") || strcmp(step.s, "step") ||
	    strcmp(iter.s, "iter"))
		diag_error(c->d, kwl, "expected 'for %%i = LO to HI step S iter(%%c = %%init)'");
	parse_int(c, lo, &b[0]);
	parse_int(c, hi, &b[1]);
	parse_int(c, st, &b[2]);
	v0 = t_use(c, init, il);
	i = tile_build_for(c->g, f, b[0], b[1], b[2], v0, kwl);
	t_name(c, var, vl);
	v = tile_build_loop_var(c->g, f, i, var.s);
	f->vals[v].loc = vl;
	t_name(c, it, itl);
	v = tile_build_loop_iter(c->g, f, i, it.s);
	f->vals[v].loc = itl;
	if (c->ntfor == c->captfor) {
		c->captfor = c->captfor ? 2 * c->captfor : 4;
		c->tfor = xrealloc(c->tfor, sizeof(int) * (size_t)c->captfor);
	}
	c->tfor[c->ntfor++] = i;
}

static void
t_for_close(ParseCtx *c, Tok name, Loc nl, Tok kw, Loc kwl, Tok val, Loc vl)
{
	TileFn *f = c->tf;
	int fo = c->tfor[--c->ntfor], init = f->insts[fo].in[0], v, r;
	int64_t s[IR_MAX_RANK];

	if (strcmp(kw.s, "yield"))
		diag_error(c->d, kwl, "expected 'yield' to end the loop, found '%s'", kw.s);
	v = t_use(c, val, vl);
	tile_build_yield(c->g, f, fo, v, kwl);
	r = f->vals[init].rank;
	memcpy(s, f->vals[init].shape, sizeof s);
	t_def(c, fo, name, nl, r, s);
}

/* Settles the names that were used before being defined, and the return
 * list; both report in the user's words. */
static void
finish(ParseCtx *c)
{
	Graph *g = c->g;

	for (int i = 0; i < c->npend; i++) {
		Pend *p = &c->pend[i];
		int k = ir_lookup(g, p->r.t.s);

		if (k < 0) {
			diag_error(c->d, p->r.loc, "use of undefined value '%%%s'", p->r.t.s);
		} else {
			diag_error(c->d, p->r.loc, "'%%%s' is used before it is defined", p->r.t.s);
			diag_note(c->d, g->nodes[k].loc, "'%%%s' is defined here", p->r.t.s);
		}
	}
	if (c->ret) {
		g->retloc = c->retloc;
		g->ret = arena_alloc(&g->arena, sizeof(int) * (size_t)c->ret->n);
		g->nret = c->ret->n;
		for (int i = 0; i < c->ret->n; i++) {
			int k = ir_lookup(g, c->ret->v[i].t.s);

			if (k < 0)
				diag_error(c->d, c->ret->v[i].loc, "use of undefined value '%%%s'",
				    c->ret->v[i].t.s);
			g->ret[i] = k < 0 ? 0 : k;
		}
	}
}

Graph *
parse_graph(const char *text, size_t len, int line0, Diag *d)
{
	ParseCtx c = {0};
	yyscan_t sc;
	YY_BUFFER_STATE b;
	int nerr0 = d->nerr, r;
	/* flex scans in place and needs two NULs at the end: our own copy, in
	 * huge pages when large. */
	char *copy = xmalloc_huge(len + 2);

	c.g = ir_graph_new();
	c.d = d;
	c.line0 = line0;
	c.kernel = -1;
	/* A statement takes about 30 bytes: sizing the node array and the name
	 * table once saves regrowing them on large inputs. */
	ir_reserve(c.g, (int)(len / 32 < (1 << 24) ? len / 32 : 1 << 24));
	if (yylex_init_extra(&c, &sc) != 0)
		AICM_BUG("cannot create the scanner");
	memcpy(copy, text, len);
	copy[len] = copy[len + 1] = '\0';
	b = yy_scan_buffer(copy, len + 2, sc);
	yydebug = getenv("AICM_YYDEBUG") != NULL;
	r = yyparse(sc, &c);
	yy_delete_buffer(b, sc);
	yylex_destroy(sc);
	free(copy);
	if (r == 0)
		finish(&c);
	free(c.pend);
	free(c.tfor);
	free(c.open);
	hashmap_free(&c.targ);
	refs_free(c.ret);
	if (r != 0 || d->nerr > nerr0) {
		ir_graph_free(c.g);
		return NULL;
	}
	return c.g;
}
