/*
 * pass.c: the pass manager: the pipeline parser, printer and runner.
 *
 * It names no pass.  The list of passes (the registry) is the caller's,
 * handed in as a NULL-terminated array: the tools pass passes/registry.c's
 * aicm_passes, so this layer stays below the passes it runs.
 *
 * The pipeline syntax is MLIR's: comma-separated pass names, each with an
 * optional brace block of key=value options separated by commas or spaces;
 * a bare key of a boolean option means true.  Errors quote the pipeline
 * and put a caret under the offending name or value, then list what exists,
 * so that a typo is fixed from the message alone.
 *
 * An option may have no default: autotune's target constants mean "the
 * target's" until written, a meaning no written value has, and a written
 * one must lie in (0, 1e12].  So every value the pipeline admits is one
 * the pass takes, and a value is refused here, once, with exit 2, never
 * later by the pass.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pass.h"

const Pass *
pass_lookup(const Pass *const *reg, const char *name)
{
	for (int i = 0; reg[i]; i++)
		if (strcmp(reg[i]->name, name) == 0)
			return reg[i];
	return NULL;
}

static const char *const kind_names[] = {"bool", "int", "float", "string"};

static bool
has_range(const PassOpt *o)
{
	return (o->kind == PO_INT || o->kind == PO_FLOAT) && !(o->lo == 0 && o->hi == 0);
}

/* A default in parentheses says what an unwritten option means. */
static bool
no_default(const PassOpt *o)
{
	return o->def[0] == '(';
}

/* "[1, 4096]" or "(0, 1e+12]": the interval of a ranged option. */
static void
range_str(char *buf, size_t n, const PassOpt *o)
{
	if (o->kind == PO_FLOAT && o->lo == PASS_ABOVE_0)
		snprintf(buf, n, "(0, %g]", o->hi);
	else
		snprintf(buf, n, o->kind == PO_INT ? "[%.0f, %.0f]" : "[%g, %g]", o->lo, o->hi);
}

void
pass_list(FILE *f, const Pass *const *reg)
{
	fprintf(f, "Passes:\n");
	for (int i = 0; reg[i]; i++) {
		const Pass *p = reg[i];

		fprintf(f, "  %-14s %s\n", p->name, p->summary);
		for (const PassOpt *o = p->opts; o && o->key; o++) {
			char r[80] = "";

			if (has_range(o)) {
				memcpy(r, "; in ", 6);
				range_str(r + 5, sizeof r - 5, o);
			}
			if (no_default(o))
				fprintf(f, "    %-18s %-6s (default: %.*s%s) %s\n", o->key,
				    kind_names[o->kind], (int)strlen(o->def) - 2, o->def + 1, r, o->help);
			else
				fprintf(f, "    %-18s %-6s (default: %s%s) %s\n", o->key,
				    kind_names[o->kind], *o->def ? o->def : "empty", r, o->help);
		}
	}
}

static void
caret(FILE *err, const char *text, size_t at, size_t len)
{
	fprintf(err, "  %s\n  %*s^", text, (int)at, "");
	for (size_t i = 1; i < len; i++)
		fputc('~', err);
	fputc('\n', err);
}

static int
parse_value(const PassOpt *o, const char *v, PassVal *out)
{
	char *end;

	out->set = true;
	switch (o->kind) {
	case PO_BOOL:
		if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "True"))
			out->b = true;
		else if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "False"))
			out->b = false;
		else
			return -1;
		return 0;
	case PO_INT:
		errno = 0;
		out->i = strtoll(v, &end, 10);
		return (*v && !*end && errno == 0) ? 0 : -1;
	case PO_FLOAT:
		errno = 0;
		out->f = strtod(v, &end);
		return (*v && !*end && errno == 0) ? 0 : -1;
	case PO_STRING:
		out->s = xstrdup(v);
		return 0;
	}
	return -1;
}

static bool
in_range(const PassOpt *o, const PassVal *v)
{
	double x = o->kind == PO_INT ? (double)v->i : v->f;

	if (!has_range(o))
		return true;
	return x >= o->lo && x <= o->hi;   /* NaN is out of every range */
}

static void
opt_list(FILE *err, const Pass *p)
{
	if (!p->opts || !p->opts[0].key) {
		fprintf(err, "note: '%s' takes no options\n", p->name);
		return;
	}
	fprintf(err, "note: '%s' takes:", p->name);
	for (const PassOpt *o = p->opts; o->key; o++)
		fprintf(err, "%s %s=<%s>", o == p->opts ? "" : ",", o->key, kind_names[o->kind]);
	fputc('\n', err);
}

static void
defaults(const Pass *p, PassVal *vals)
{
	int i = 0;

	for (const PassOpt *o = p->opts; o && o->key; o++, i++) {
		if (no_default(o))
			continue;        /* no value: calloc's zeros, never read */
		if (parse_value(o, o->def, &vals[i]) != 0 || !in_range(o, &vals[i]))
			AICM_BUG("pass '%s' option '%s' has a bad default '%s'", p->name, o->key, o->def);
		vals[i].set = false;
	}
}

static int
nopts(const Pass *p)
{
	int n = 0;

	for (const PassOpt *o = p->opts; o && o->key; o++)
		n++;
	return n;
}

const char *
pass_suggest(const Pass *const *reg, const char *name)
{
	const char *names[64];
	int n = 0;

	for (; reg[n] && n < 64; n++)
		names[n] = reg[n]->name;
	return ir_suggest(name, names, n);
}

int
pass_parse_pipeline(const Pass *const *reg, const char *text, Pipeline *pl, FILE *err,
    const char *tool)
{
	size_t i = 0, n = strlen(text);

	memset(pl, 0, sizeof *pl);
	pl->p = xcalloc(n / 2 + 2, sizeof *pl->p);
	while (i < n) {
		size_t s, e;
		char *name;
		const Pass *p;
		PassInst *pi;

		while (i < n && isspace((unsigned char)text[i]))
			i++;
		s = i;
		while (i < n && (isalnum((unsigned char)text[i]) || text[i] == '-' || text[i] == '_'))
			i++;
		e = i;
		if (e == s) {
			fprintf(err, "%s: error: expected a pass name in the pipeline, found '%c'\n",
			    tool, i < n ? text[i] : ' ');
			caret(err, text, s, 1);
			goto fail;
		}
		name = xmalloc(e - s + 1);
		memcpy(name, text + s, e - s);
		name[e - s] = '\0';
		p = pass_lookup(reg, name);
		if (!p) {
			const char *alt = pass_suggest(reg, name);

			fprintf(err, "%s: error: unknown pass '%s' in the pipeline", tool, name);
			if (alt)
				fprintf(err, "; did you mean '%s'?", alt);
			fputc('\n', err);
			caret(err, text, s, e - s);
			fprintf(err, "note: the passes are:");
			for (int k = 0; reg[k]; k++)
				fprintf(err, "%s %s", k ? "," : "", reg[k]->name);
			fputc('\n', err);
			free(name);
			goto fail;
		}
		free(name);
		pi = &pl->p[pl->n++];
		pi->pass = p;
		pi->col = (int)s + 1;
		pi->vals = xcalloc((size_t)nopts(p) + 1, sizeof *pi->vals);
		defaults(p, pi->vals);
		while (i < n && isspace((unsigned char)text[i]))
			i++;
		if (i < n && text[i] == '{') {
			i++;
			for (;;) {
				size_t ks, ke, vs, ve;
				const PassOpt *o;
				int rc;
				char *key, *val;
				int k = 0;

				while (i < n && (isspace((unsigned char)text[i]) || text[i] == ','))
					i++;
				if (i < n && text[i] == '}') {
					i++;
					break;
				}
				if (i >= n) {
					fprintf(err, "%s: error: expected '}' to close the options of '%s'\n",
					    tool, p->name);
					caret(err, text, n, 1);
					goto fail;
				}
				ks = i;
				while (i < n && text[i] != '=' && text[i] != ',' && text[i] != '}' &&
				    !isspace((unsigned char)text[i]))
					i++;
				ke = i;
				key = xmalloc(ke - ks + 1);
				memcpy(key, text + ks, ke - ks);
				key[ke - ks] = '\0';
				for (o = p->opts; o && o->key; o++, k++)
					if (!strcmp(o->key, key))
						break;
				if (!o || !o->key) {
					const char *keys[64], *alt;
					int nk = 0;

					for (o = p->opts; o && o->key && nk < 64; o++)
						keys[nk++] = o->key;
					alt = ir_suggest(key, keys, nk);
					fprintf(err, "%s: error: pass '%s' has no option '%s'", tool, p->name, key);
					if (alt)
						fprintf(err, "; did you mean '%s'?", alt);
					fputc('\n', err);
					caret(err, text, ks, ke - ks ? ke - ks : 1);
					opt_list(err, p);
					free(key);
					goto fail;
				}
				free(key);
				if (i < n && text[i] == '=') {
					i++;
					vs = i;
					while (i < n && text[i] != ',' && text[i] != '}' &&
					    !isspace((unsigned char)text[i]))
						i++;
					ve = i;
				} else if (o->kind == PO_BOOL) {
					vs = ve = 0;
				} else {
					fprintf(err, "%s: error: option '%s' of '%s' needs a value (%s=<%s>)\n",
					    tool, o->key, p->name, o->key, kind_names[o->kind]);
					caret(err, text, ks, ke - ks);
					goto fail;
				}
				val = xmalloc(ve - vs + 1);
				memcpy(val, text + vs, ve - vs);
				val[ve - vs] = '\0';
				if (ve == vs && o->kind == PO_BOOL) {
					free(val);
					val = xstrdup("true");
				}
				if (pi->vals[k].s && o->kind == PO_STRING)
					free((char *)pi->vals[k].s);
				pi->vals[k].s = NULL;
				rc = parse_value(o, val, &pi->vals[k]);
				if (rc == 0 && !in_range(o, &pi->vals[k])) {
					char r[64];

					range_str(r, sizeof r, o);
					fprintf(err, "%s: error: option '%s' of '%s' must be in %s, found '%s'\n",
					    tool, o->key, p->name, r, val);
					caret(err, text, vs, ve > vs ? ve - vs : 1);
					free(val);
					goto fail;
				}
				if (rc != 0) {
					fprintf(err, "%s: error: option '%s' of '%s' takes %s%s, found '%s'\n",
					    tool, o->key, p->name,
					    o->kind == PO_BOOL ? "" : o->kind == PO_INT ? "an " : "a ",
					    o->kind == PO_BOOL ? "true or false" : kind_names[o->kind], val);
					caret(err, text, vs, ve > vs ? ve - vs : 1);
					free(val);
					goto fail;
				}
				free(val);
			}
		}
		while (i < n && isspace((unsigned char)text[i]))
			i++;
		if (i < n) {
			if (text[i] != ',') {
				fprintf(err, "%s: error: expected ',' between passes, found '%c'\n", tool,
				    text[i]);
				caret(err, text, i, 1);
				goto fail;
			}
			i++;
			if (i >= n) {
				fprintf(err, "%s: error: expected a pass name after ','\n", tool);
				caret(err, text, i, 1);
				goto fail;
			}
		}
	}
	return 0;
fail:
	pass_free_pipeline(pl);
	return -1;
}

void
pass_free_pipeline(Pipeline *pl)
{
	for (int i = 0; i < pl->n; i++) {
		int k = 0;

		for (const PassOpt *o = pl->p[i].pass->opts; o && o->key; o++, k++)
			if (o->kind == PO_STRING)
				free((char *)pl->p[i].vals[k].s);
		free(pl->p[i].vals);
	}
	free(pl->p);
	memset(pl, 0, sizeof *pl);
}

static void
print_val(FILE *f, const PassOpt *o, const PassVal *v)
{
	switch (o->kind) {
	case PO_BOOL:
		fprintf(f, "%s", v->b ? "true" : "false");
		break;
	case PO_INT:
		fprintf(f, "%lld", (long long)v->i);
		break;
	case PO_FLOAT: {
		char buf[64];

		ir_fmt_double(buf, sizeof buf, v->f);
		fprintf(f, "%s", buf);
		break;
	}
	case PO_STRING:
		fprintf(f, "%s", v->s ? v->s : "");
		break;
	}
}

void
pass_print_pipeline(FILE *f, const Pipeline *pl)
{
	for (int i = 0; i < pl->n; i++) {
		const Pass *p = pl->p[i].pass;
		int k = 0;
		bool first = true;

		fprintf(f, "%s%s", i ? "," : "", p->name);
		if (p->opts && p->opts[0].key) {
			fputc('{', f);
			/* an option with no value is left out: the text reads back */
			for (const PassOpt *o = p->opts; o->key; o++, k++) {
				if (no_default(o) && !pl->p[i].vals[k].set)
					continue;
				fprintf(f, "%s%s=", first ? "" : ",", o->key);
				print_val(f, o, &pl->p[i].vals[k]);
				first = false;
			}
			fputc('}', f);
		}
	}
	fputc('\n', f);
}

static const PassVal *
find(const PassArgs *a, const char *key, PassOptKind kind)
{
	int k = 0;

	for (const PassOpt *o = a->opts; o && o->key; o++, k++)
		if (!strcmp(o->key, key)) {
			if (o->kind != kind)
				AICM_BUG("option '%s' read as the wrong kind", key);
			if (no_default(o) && !a->vals[k].set)
				AICM_BUG("option '%s' has no value; ask pass_is_set first", key);
			return &a->vals[k];
		}
	AICM_BUG("no option '%s'", key);
}

bool
pass_bool(const PassArgs *a, const char *key)
{
	return find(a, key, PO_BOOL)->b;
}

int64_t
pass_int(const PassArgs *a, const char *key)
{
	return find(a, key, PO_INT)->i;
}

double
pass_float(const PassArgs *a, const char *key)
{
	return find(a, key, PO_FLOAT)->f;
}

const char *
pass_str(const PassArgs *a, const char *key)
{
	return find(a, key, PO_STRING)->s;
}

bool
pass_is_set(const PassArgs *a, const char *key)
{
	int k = 0;

	for (const PassOpt *o = a->opts; o && o->key; o++, k++)
		if (!strcmp(o->key, key))
			return a->vals[k].set;
	AICM_BUG("no option '%s'", key);
}

int
pass_require_shapes(const Graph *g, Diag *d, const char *pass)
{
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].type.rank < 0) {
			diag_error(d, g->nodes[i].loc,
			    "%%%s has no shape; run shape-infer first (--pass=shape-infer,%s)",
			    g->nodes[i].name, pass);
			return -1;
		}
	return 0;
}

double
pass_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int
pass_run_pipeline(Graph *g, const Pipeline *pl, const PassRun *r, Diag *d)
{
	for (int i = 0; i < pl->n; i++) {
		const PassInst *pi = &pl->p[i];
		PassArgs a = {pi->pass->opts, pi->vals, r->report, r->report_json, r->measure};
		double t0;
		int nerr0 = d->nerr, rc;

		if (r->before)
			r->before(r->ctx, i, pi, g);
		t0 = pass_now_ms();
		if ((rc = pi->pass->run(g, &a, d)) != 0) {
			if (d->nerr == nerr0)
				diag_error(d, LOC_NONE, "pass '%s' failed", pi->pass->name);
			return rc == PASS_IO ? PASS_IO : -1;
		}
		if (r->verify_each && ir_verify(g, d) != 0) {
			diag_note(d, LOC_NONE, "the IR above is invalid after pass '%s'",
			    pi->pass->name);
			return -1;
		}
		if (r->after)
			r->after(r->ctx, i, pi, g, pass_now_ms() - t0);
	}
	return 0;
}

int
pass_run_text(const Pass *const *reg, Graph *g, const char *text, Diag *d, FILE *err,
    const char *tool)
{
	Pipeline pl;
	PassRun run = {.verify_each = true};
	int rc;

	if (pass_parse_pipeline(reg, text, &pl, err ? err : stderr, tool) != 0) {
		if (!err)
			AICM_BUG("cannot parse the built-in pipeline '%s'", text);
		return -1;
	}
	rc = pass_run_pipeline(g, &pl, &run, d);
	pass_free_pipeline(&pl);
	return rc;
}
