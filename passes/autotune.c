/*
 * autotune.c: pick a tile configuration for every kernel with the analytic
 * cost model of cost.c.
 *
 * For each kernel: enumerate its kind's space in a fixed generation order,
 * prune what the target cannot run (each pruned candidate counted with its
 * reason), score the rest as estimated milliseconds (mem + comp + waste +
 * launch), and sort by score, then warps=4, then stages=3, then generation
 * order, so the choice depends on nothing but the input and the options.
 * The winner becomes the kernel's attributes.  Kernels with the same
 * signature (kind, ops, shapes, element type) share one tuning within a run,
 * and a tuning cache file keeps results across runs, keyed by signature,
 * target constants and a hash of the space, one readable line per result
 * (read and written by tune_cache.c).  Both lookups are hash tables, so a run stays linear in its kernels when
 * signatures differ; within a run a signature is a row of integers, hashed
 * and compared in full, and its text is built only for the cache.
 *
 * Measured tuning (measure=true), Triton's @autotune on this executor: the
 * model ranks, then the tool's measuring callback (PassArgs.measure; a pass
 * never calls the runtime) times the model's best few distinct tilings on
 * scratch inputs and checks each against the reference interpreter; the
 * fastest that matches wins.  Candidates that differ only in warps and
 * stages lower to the same tile program (lower-tiled carries them, the
 * executor has no use for them), so each tiling is timed once.  The cache
 * records what was measured beside the model's score, and a measuring run
 * takes only measured records from it.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "pass.h"
#include "tune_cache.h"

/* As "%" PRId64 prints it. */
static void
bint(StrBuf *b, int64_t v)
{
	char d[24];
	int i = (int)sizeof d;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do {
		d[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		d[--i] = '-';
	strbuf_grow(b, sizeof d - (size_t)i);
	memcpy(b->s + b->n, d + i, sizeof d - (size_t)i);
	b->n += sizeof d - (size_t)i;
	b->s[b->n] = '\0';
}

static void
bshape(StrBuf *b, const Type *t)
{
	if (t->rank == 0)
		strbuf_puts(b, "scalar");
	for (int i = 0; i < t->rank; i++) {
		if (i)
			strbuf_putc(b, 'x');
		bint(b, t->dim[i]);
	}
}

/* ---- options and target ---------------------------------------------- */

static const PassOpt opts[] = {
	{"target", PO_STRING, "h100", "target profile: h100, h200, a100, rubin, cpu (the native engine), cpu-tile (the tile engine)", 0, 0},
/* no default: left out, a constant is the target's; written, it is above 0 */
#define X(f, key, help) {key, PO_FLOAT, "(the target's)", help, PASS_ABOVE_0, 1e12},
	COST_TARGET_PARAMS(X)
#undef X
	{"top-k", PO_INT, "3", "configurations shown per kernel by --report", 0, 576},
	{"cache", PO_STRING, "", "tuning cache file (empty: none)", 0, 0},
	{"measure", PO_BOOL, "false", "time the model's best tilings on the engine the target "
	    "models (cpu: the native engine; the others: the tile executor) and keep the fastest "
	    "that matches the reference", 0, 0},
	{"measure-top", PO_INT, "(16; 4 on cpu)", "distinct tilings of the model's ranking that "
	    "measure=true times (on cpu each one is compiled, about 0.3 s apiece, so fewer)", 1, 576},
	{0},
};

/* A target not in cost_targets is refused with the pipeline (exit 2, the
 * caret under it), as docs/passes.md promises, not after the model is read. */
static int
check_opt(const PassOpt *o, const PassVal *v, StrBuf *why, StrBuf *note)
{
	if (strcmp(o->key, "target") != 0 || cost_target_lookup(v->s))
		return 0;
	strbuf_printf(why, "names no target, found '%s'", v->s);
	strbuf_puts(note, "the targets are ");
	cost_target_names(note);
	return -1;
}

static int
setup_target(const PassArgs *a, Target *t, Diag *d)
{
	const char *name = pass_str(a, "target");
	const Target *base = cost_target_lookup(name);

	if (!base)   /* check_opt refused it with the pipeline */
		AICM_BUG("autotune: target '%s' passed the pipeline's check", name);
	(void)d;
	*t = *base;
	/* the pipeline admitted only (0, 1e12] */
	for (int i = 0; i < COST_NPARAMS; i++)
		if (pass_is_set(a, cost_param_keys[i]))
			*cost_target_param(t, i) = pass_float(a, cost_param_keys[i]);
	return 0;
}

static void
target_desc(StrBuf *b, const Target *t)
{
	strbuf_printf(b, "%s{", t->name);
	for (int i = 0; i < COST_NPARAMS; i++) {
		char v[64];

		/* step-us and acc-gbs came later: left out of the key when 0,
		 * so that the GPU targets' records in older caches still match */
		if (i >= COST_NPARAMS_V1 && cost_target_param_get(t, i) == 0)
			continue;
		ir_fmt_double(v, sizeof v, cost_target_param_get(t, i));
		strbuf_printf(b, "%s%s=%s", i ? "," : "", cost_param_keys[i], v);
	}
	strbuf_printf(b, "}");
}

/* ---- signatures ------------------------------------------------------ */

/* A kernel's signature exists in two forms, built by the same walk over its
 * nodes: text, the token a tuning cache record starts with, and words, from
 * which the reuse table hashes and compares kernels within a run.  Equal
 * words if and only if equal text (plus the element type, which the key
 * appends): so a run with a cache and one without share exactly the same
 * kernels, and text is built only for the cache file. */

/* Numbers a kernel's operands from outside it by first use ($0, $1, ...),
 * through a small hash set (a kernel may have thousands): scratch reused
 * from kernel to kernel, so its slots are hash.h's slot array, of which a
 * kernel clears and uses only as many as it needs. */
typedef struct ExtNums {
	int *v;                      /* by number: the node */
	int n, cap;
	HashSlot *slot;              /* items: numbers */
	size_t nslot;                /* allocated */
	size_t used;                 /* this kernel's: a power of two */
} ExtNums;

static void
ext_reset(ExtNums *x, const Kernel *k)
{
	size_t want = 16;

	while (want < 4 * (size_t)(k->last - k->first + 1))   /* 2 operands a node, half full */
		want *= 2;
	if (want > x->nslot) {
		free(x->slot);
		x->slot = xmalloc(sizeof *x->slot * want);
		x->nslot = want;
	}
	memset(x->slot, 0, sizeof *x->slot * want);
	x->used = want;
	x->n = 0;
}

static bool
ext_eq(const void *x, uint32_t e, const void *v)
{
	return ((const ExtNums *)x)->v[e] == *(const int *)v;
}

/* The number of external operand v, and whether this is its first use. */
static int
ext_num(ExtNums *x, int v, bool *first)
{
	uint32_t h = (uint32_t)ir_hash_mix((uint64_t)(uint32_t)v);
	size_t k = hash_find(x->slot, x->used, h, ext_eq, x, &v);

	if (x->slot[k].item) {
		*first = false;
		return (int)x->slot[k].item - 1;
	}
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 16;
		x->v = xrealloc(x->v, sizeof *x->v * (size_t)x->cap);
	}
	x->v[x->n] = v;
	x->slot[k] = (HashSlot){(uint32_t)x->n + 1, h};
	*first = true;
	return x->n++;
}

/* The same signature as words, the element type first. */
typedef struct Words {
	int64_t *w;
	int n, cap;
} Words;

static void
wput(Words *s, int64_t v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->w = xrealloc(s->w, sizeof *s->w * (size_t)s->cap);
	}
	s->w[s->n++] = v;
}

/* Every attribute but axis and keepdims (which the signature spells out
 * by name, as v1 did; perm and shape too unless perm_shape), as words: for each one set, its id, then its
 * values (a tuple: its length first). */
static void
attr_words(Words *s, const Node *n, bool perm_shape)
{
	for (int a = 0; a < ATTR_COUNT; a++) {
		IntTuple t;

		if (!(n->at.set & (1u << a)) || ((a == ATTR_AXIS && !ir_axis_is_tuple(&n->at)) ||
		    a == ATTR_KEEPDIMS) || (!perm_shape && (a == ATTR_PERM || a == ATTR_SHAPE)))
			continue;
		wput(s, a);
		switch (ir_attrs[a].kind) {
		case AK_AXIS:
		case AK_INTS:
			t = ir_attr_ints(&n->at, (AttrId)a);
			wput(s, t.n);
			for (int j = 0; j < t.n; j++)
				wput(s, t.v[j]);
			break;
		case AK_INT:
			wput(s, n->at.groups);
			break;
		case AK_TYPE:
			wput(s, n->at.to);
			break;
		case AK_BOOL:
			wput(s, a == ATTR_LAST ? n->at.last : a == ATTR_CEIL_MODE ? n->at.ceil_mode :
			    n->at.count_include_pad);
			break;
		case AK_FLOAT: {
			union { double d; int64_t i; } u = {.d = n->at.value};

			wput(s, u.i);
			wput(s, n->at.ivalue);
			break;
		}
		case AK_STRING:
		case AK_FLOATS:
			break;               /* a const's data: consts are not in kernels */
		}
	}
}

/* Kind, ops, attributes, operand structure and shapes of a kernel, in one
 * token without spaces: equal signatures tune alike. */
static void
signature(StrBuf *b, ExtNums *x, const Graph *g, const Kernel *k)
{
	ext_reset(x, k);
	strbuf_puts(b, ir_kernel_kinds[k->kind]);
	strbuf_putc(b, ':');
	if (k->kset & (1u << KA_SPLIT)) {
		strbuf_puts(b, "split=");
		bint(b, k->kattr[KA_SPLIT]);
		strbuf_putc(b, ':');
	}
	for (int i = k->first; i <= k->last; i++) {
		const Node *n = &g->nodes[i];

		if (i != k->first)
			strbuf_putc(b, ';');
		strbuf_puts(b, ir_ops[n->op].name);
		strbuf_putc(b, '(');
		for (int j = 0; j < n->nin; j++) {
			int v = n->in[j], e;
			bool first;

			if (j)
				strbuf_putc(b, ',');
			if (v >= k->first && v <= k->last) {
				strbuf_putc(b, '#');
				bint(b, v - k->first);
				continue;
			}
			e = ext_num(x, v, &first);
			strbuf_putc(b, '$');
			bint(b, e);
			if (first) {
				strbuf_putc(b, '=');
				bshape(b, &g->nodes[v].type);
			}
		}
		strbuf_puts(b, ")=");
		bshape(b, &n->type);
		if (n->at.set & AB(AXIS)) {
			strbuf_puts(b, ",axis=");
			bint(b, n->at.axis);
		}
		if (n->at.set & AB(KEEPDIMS)) {
			strbuf_puts(b, ",keepdims=");
			bint(b, n->at.keepdims);
		}
		for (int j = 0; j < ir_attr_ints(&n->at, ATTR_PERM).n; j++) {
			strbuf_puts(b, j ? "," : ",perm=");
			bint(b, ir_attr_ints(&n->at, ATTR_PERM).v[j]);
		}
		for (int j = 0; j < ir_attr_ints(&n->at, ATTR_SHAPE).n; j++) {
			strbuf_puts(b, j ? "," : ",shape=");
			bint(b, ir_attr_ints(&n->at, ATTR_SHAPE).v[j]);
		}
		/* the attributes v2 added, as attr_words lists them */
		{
			Words w = {0};

			attr_words(&w, n, false);
			for (int j = 0; j < w.n; j++) {
				strbuf_putc(b, ',');
				bint(b, w.w[j]);
			}
			free(w.w);
		}
	}
}

static void
wshape(Words *s, const Type *t)
{
	wput(s, t->rank);
	for (int i = 0; i < t->rank; i++)
		wput(s, t->dim[i]);
}

static void
sig_words(Words *s, ExtNums *x, const Graph *g, const Kernel *k, DType dt)
{
	s->n = 0;
	ext_reset(x, k);
	wput(s, dt);
	wput(s, k->kind);
	wput(s, (k->kset & (1u << KA_SPLIT)) != 0);
	if (k->kset & (1u << KA_SPLIT))
		wput(s, k->kattr[KA_SPLIT]);
	wput(s, k->last - k->first + 1);
	for (int i = k->first; i <= k->last; i++) {
		const Node *n = &g->nodes[i];

		wput(s, n->op);
		wput(s, n->nin);
		for (int j = 0; j < n->nin; j++) {
			int v = n->in[j], e;
			bool first;

			if (v >= k->first && v <= k->last) {
				wput(s, 0);
				wput(s, v - k->first);
				continue;
			}
			e = ext_num(x, v, &first);
			wput(s, first ? 1 : 2);
			wput(s, e);
			if (first)
				wshape(s, &g->nodes[v].type);
		}
		wshape(s, &n->type);
		wput(s, (n->at.set & AB(AXIS)) ? 1 : 0);
		if (n->at.set & AB(AXIS))
			wput(s, n->at.axis);
		wput(s, (n->at.set & AB(KEEPDIMS)) ? 1 : 0);
		if (n->at.set & AB(KEEPDIMS))
			wput(s, n->at.keepdims);
		attr_words(s, n, true);
	}
}

/* ---- results and the cache ------------------------------------------- */

typedef enum Source { SRC_SCORED, SRC_CACHE, SRC_REUSE, SRC_NONE } Source;

typedef struct Result {
	TileConfig c;
	double score;
	double ms;                   /* measured: its time */
	bool measured;
	bool found;                  /* a config was chosen */
	DType dt;                    /* the problem's element type */
} Result;

static void
config_str(StrBuf *b, const TileConfig *c, unsigned have)
{
	strbuf_printf(b, "BM=%d BN=%d", c->bm, c->bn);
	if (have & (1u << KA_BK))
		strbuf_printf(b, " BK=%d", c->bk);
	strbuf_printf(b, " warps=%d", c->warps);
	if (have & (1u << KA_STAGES))
		strbuf_printf(b, " stages=%d", c->stages);
}

/* ---- tuning ---------------------------------------------------------- */

typedef struct Cand {
	TileConfig c;
	PruneReason why;
	Traffic t;
	Score s;
	int gen;
} Cand;

/* A tiling that measure=true timed. */
typedef struct Timed {
	int cand;                    /* index into Tuning.cand */
	int rank;                    /* 1-based, among the model's distinct tilings */
	PassMeasured m;
} Timed;

typedef struct Tuning {
	Cand cand[COST_MAX_SPACE];
	int n;
	int pruned[PR_COUNT];
	int order[COST_MAX_SPACE];   /* the scored ones, best first */
	int nscored;
	Timed timed[COST_MAX_SPACE]; /* measured: matching ones fastest first, then the rest */
	int ntimed;
} Tuning;

static int
cmp_cand(const void *pa, const void *pb)
{
	const Cand *a = pa, *b = pb;
	int pa4 = a->c.warps != 4, pb4 = b->c.warps != 4;
	int pa3 = a->c.stages != 0 && a->c.stages != 3;
	int pb3 = b->c.stages != 0 && b->c.stages != 3;

	if (a->s.total != b->s.total)
		return a->s.total < b->s.total ? -1 : 1;
	if (pa4 != pb4)
		return pa4 - pb4;
	if (pa3 != pb3)
		return pa3 - pb3;
	return a->gen - b->gen;
}

static void
tune(const CostModel *m, const Target *t, Tuning *tu)
{
	const Problem *p = cost_model_problem(m);
	TileConfig space[COST_MAX_SPACE];
	Cand *sorted;

	memset(tu->pruned, 0, sizeof tu->pruned);
	tu->n = cost_space(p, space);
	tu->nscored = 0;
	for (int i = 0; i < tu->n; i++) {
		Cand *c = &tu->cand[i];

		memset(c, 0, sizeof *c);
		c->c = space[i];
		c->gen = i;
		c->why = cost_prune(t, p, &c->c);
		tu->pruned[c->why]++;
		if (c->why != PR_NONE)
			continue;
		cost_model_traffic(m, &c->c, &c->t);
		if (!c->t.ok) {
			c->why = PR_BLOCK;   /* never: sizes are checked before tuning */
			continue;
		}
		cost_score(t, p->dt, &c->t, &c->s);
		tu->order[tu->nscored++] = i;
	}
	sorted = xmalloc(sizeof *sorted * (size_t)(tu->nscored ? tu->nscored : 1));
	for (int i = 0; i < tu->nscored; i++)
		sorted[i] = tu->cand[tu->order[i]];
	qsort(sorted, (size_t)tu->nscored, sizeof *sorted, cmp_cand);
	for (int i = 0; i < tu->nscored; i++)
		tu->order[i] = sorted[i].gen;
	free(sorted);
}

/* Whether a cached config is one of the kind's candidates and fits. */
static bool
cached_ok(const CostModel *m, const Target *t, const TuneEntry *e)
{
	const Problem *p = cost_model_problem(m);
	TileConfig space[COST_MAX_SPACE];
	int n = cost_space(p, space);
	unsigned want = tune_cache_kind_attrs(p->kind);

	if (e->have != want)
		return false;
	for (int i = 0; i < n; i++) {
		const TileConfig *c = &space[i];

		if (c->bm == e->c.bm && c->bn == e->c.bn && c->warps == e->c.warps &&
		    (!(want & (1u << KA_BK)) || (c->bk == e->c.bk && c->stages == e->c.stages)))
			return cost_prune(t, p, c) == PR_NONE;
	}
	return false;
}

static void apply(Kernel *k, const TileConfig *c);

/* Whether two candidates lower to the same tile program: lower-tiled
 * carries warps and stages as attributes, but nothing runs differently. */
static bool
same_tiling(const TileConfig *a, const TileConfig *b)
{
	return a->bm == b->bm && a->bn == b->bn && a->bk == b->bk && a->split == b->split;
}

static int
cmp_timed(const void *pa, const void *pb)
{
	const Timed *a = pa, *b = pb;

	if (a->m.match != b->m.match)
		return a->m.match ? -1 : 1;
	if (a->m.match && a->m.ms != b->m.ms)
		return a->m.ms < b->m.ms ? -1 : 1;
	return a->rank - b->rank;
}

/* measure-top when not written: 16, but 4 on cpu, where each timed
 * tiling is generated as C and compiled (about 0.3 s of CPU apiece). */
static int
measure_top_n(const PassArgs *a)
{
	if (pass_is_set(a, "measure-top"))
		return (int)pass_int(a, "measure-top");
	return strcmp(pass_str(a, "target"), "cpu") == 0 ? 4 : 16;
}

/* measure=true: times the model's first `top` distinct tilings of kernel k
 * with the tool's callback and sorts them, the fastest that matches the
 * reference first.  0, or -1 after a diagnostic. */
static int
measure_top(const PassMeasure *pm, const char *target, const Graph *g, const Kernel *k,
    Tuning *tu, int top, Diag *d)
{
	Kernel *kc;
	PassMeasured *out;
	int n = 0, rc;

	for (int i = 0; i < tu->nscored && n < top; i++) {
		const Cand *c = &tu->cand[tu->order[i]];
		bool dup = false;

		for (int j = 0; j < n && !dup; j++)
			dup = same_tiling(&tu->cand[tu->timed[j].cand].c, &c->c);
		if (dup)
			continue;
		tu->timed[n].cand = tu->order[i];
		tu->timed[n].rank = n + 1;
		n++;
	}
	kc = xcalloc((size_t)n, sizeof *kc);
	out = xcalloc((size_t)n, sizeof *out);
	for (int j = 0; j < n; j++) {
		kc[j] = *k;
		apply(&kc[j], &tu->cand[tu->timed[j].cand].c);
	}
	rc = pm->run(pm->ctx, target, g, k, kc, n, out, d);
	for (int j = 0; j < n; j++)
		tu->timed[j].m = out[j];
	free(kc);
	free(out);
	if (rc != 0)
		return -1;
	tu->ntimed = n;
	qsort(tu->timed, (size_t)n, sizeof *tu->timed, cmp_timed);
	if (n && !tu->timed[0].m.match) {
		diag_error(d, k->loc, "autotune: every measured configuration of kernel '@%s' "
		    "differs from the reference interpreter (%d timed); the tile executor "
		    "is wrong here", k->name, n);
		return -1;
	}
	return 0;
}

static void
apply(Kernel *k, const TileConfig *c)
{
	unsigned want = tune_cache_kind_attrs(k->kind);
	int64_t v[KA_COUNT] = {0};

	v[KA_BM] = c->bm;
	v[KA_BN] = c->bn;
	v[KA_BK] = c->bk;
	v[KA_WARPS] = c->warps;
	v[KA_STAGES] = c->stages;
	for (int a = KA_BM; a <= KA_STAGES; a++) {
		k->kset &= ~(1u << a);
		if (want & (1u << a)) {
			k->kset |= 1u << a;
			k->kattr[a] = v[a];
		}
	}
}

/* ---- reports --------------------------------------------------------- */

/* Whether the target charges K-loop steps (the cpu target): only then do
 * reports show the term, so the GPU targets' reports keep their form. */
static bool
has_steps(const Target *t)
{
	return t->step_us > 0 || t->acc_gbs > 0 || t->attn_step_us > 0 || t->reread_gbs > 0;
}

static void
problem_str(StrBuf *b, const Problem *p)
{
	switch (p->kind) {
	case KK_MATMUL:
	case KK_MATMUL_EPILOGUE:
	case KK_CONV_EPILOGUE:
		if (p->batch > 1)
			strbuf_printf(b, "B=%" PRId64 " ", p->batch);
		strbuf_printf(b, "M=%" PRId64 " N=%" PRId64 " K=%" PRId64, p->m, p->n, p->k);
		break;
	case KK_REDUCTION:
		if (p->batch > 1)
			strbuf_printf(b, "B=%" PRId64 " ", p->batch);
		strbuf_printf(b, "rows=%" PRId64 " reduced=%" PRId64 "%s", p->m, p->n,
		    p->full_reduce ? " (all)" : "");
		break;
	case KK_ROW_REDUCTION:
		strbuf_printf(b, "rows=%" PRId64 " row=%" PRId64, p->m, p->n);
		break;
	case KK_ATTENTION:
		if (p->batch > 1)
			strbuf_printf(b, "B=%" PRId64 " ", p->batch);
		strbuf_printf(b, "M=%" PRId64 " N=%" PRId64 " d=%" PRId64, p->m, p->n, p->k);
		break;
	default:
		if (p->batch > 1)
			strbuf_printf(b, "B=%" PRId64 " ", p->batch);
		strbuf_printf(b, "rows=%" PRId64 " cols=%" PRId64, p->m, p->n);
		break;
	}
}

/* measure=true: what was timed, the fastest matching first, beside the
 * model's rank and score. */
static void
report_timed(FILE *f, const Kernel *k, const Tuning *tu)
{
	unsigned have = tune_cache_kind_attrs(k->kind);

	fprintf(f, "  measured the model's best %d distinct tiling%s on the %s engine, on "
	    "scratch inputs, each checked against the reference (fastest first):\n", tu->ntimed,
	    tu->ntimed == 1 ? "" : "s", tu->ntimed && tu->timed[0].m.engine ?
	    tu->timed[0].m.engine : "tile");
	for (int i = 0; i < tu->ntimed; i++) {
		const Timed *t = &tu->timed[i];
		const Cand *c = &tu->cand[t->cand];

		fprintf(f, "    #%d BM=%3d BN=%3d", i + 1, c->c.bm, c->c.bn);
		if (have & (1u << KA_BK))
			fprintf(f, " BK=%3d", c->c.bk);
		if (t->m.match)
			fprintf(f, "  measured=%.3f ms", t->m.ms);
		else
			fprintf(f, "  rejected: differs from the reference (error %.3g)", t->m.err);
		fprintf(f, "  model #%d score=%.6f ms\n", t->rank, c->s.total);
	}
}

static void
report_text(FILE *f, const Kernel *k, const Problem *p, const Target *t, Source src,
    const Tuning *tu, const Result *r, const char *from, int topk)
{
	StrBuf b = {0};

	problem_str(&b, p);
	fprintf(f, "autotune: @%s [%s] %s %s, target %s\n", k->name, ir_kernel_kinds[k->kind],
	    b.s, ir_dtype_name(p->dt), t->name);
	b.n = 0;
	if (r->found)
		config_str(&b, &r->c, tune_cache_kind_attrs(k->kind));
	switch (src) {
	case SRC_CACHE:
		fprintf(f, "  from the tuning cache (%s): %s  score=%.6f ms", from, b.s, r->score);
		if (r->measured)
			fprintf(f, "  measured=%.3f ms", r->ms);
		fprintf(f, "\n");
		break;
	case SRC_REUSE:
		fprintf(f, "  same signature as @%s: %s\n", from, r->found ? b.s : "left untuned");
		break;
	case SRC_SCORED:
	case SRC_NONE:
		fprintf(f, "  %d candidates, %d pruned (", tu->n, tu->n - tu->pruned[PR_NONE]);
		for (int i = PR_BLOCK; i < PR_COUNT; i++)
			fprintf(f, "%s%s: %d", i == PR_BLOCK ? "" : ", ", cost_prune_names[i],
			    tu->pruned[i]);
		fprintf(f, "), %d scored\n", tu->nscored);
		if (!tu->nscored) {
			fprintf(f, "  no configuration fits; left untuned\n");
			break;
		}
		if (tu->ntimed) {
			report_timed(f, k, tu);
			break;
		}
		if (topk > 0)
			fprintf(f, "  top %d (score = estimated ms, lower is better):\n",
			    topk < tu->nscored ? topk : tu->nscored);
		for (int i = 0; i < topk && i < tu->nscored; i++) {
			const Cand *c = &tu->cand[tu->order[i]];

			fprintf(f, "    #%d BM=%3d BN=%3d", i + 1, c->c.bm, c->c.bn);
			if (tune_cache_kind_attrs(k->kind) & (1u << KA_BK))
				fprintf(f, " BK=%3d warps=%d stages=%d", c->c.bk, c->c.warps, c->c.stages);
			else
				fprintf(f, " warps=%d", c->c.warps);
			fprintf(f, "  score=%.6f ms", c->s.total);
			/* an exact tie was ordered by the tie rule alone (cmp_cand):
			 * said, so that a reader does not take #2 for worse than #1 */
			for (int j = 0; j < i; j++)
				if (tu->cand[tu->order[j]].s.total == c->s.total) {
					fprintf(f, "  (tie with #%d)", j + 1);
					break;
				}
			fputc('\n', f);
			fprintf(f, "        breakdown: mem=%.6f comp=%.6f launch=%.6f waste=%.6f ",
			    c->s.mem, c->s.comp, c->s.launch, c->s.waste);
			if (has_steps(t))
				fprintf(f, "steps=%.6f ", c->s.steps);
			if (t->seg_ns > 0)
				fprintf(f, "contig=%.6f ", c->s.contig);
			fprintf(f, "(padding waste %.1f%%)\n", c->s.padding_pct);
		}
		break;
	}
	free(b.s);
}

static void
json_config(FILE *f, const TileConfig *c, unsigned have)
{
	fprintf(f, "\"BM\":%d,\"BN\":%d", c->bm, c->bn);
	if (have & (1u << KA_BK))
		fprintf(f, ",\"BK\":%d", c->bk);
	fprintf(f, ",\"warps\":%d", c->warps);
	if (have & (1u << KA_STAGES))
		fprintf(f, ",\"stages\":%d", c->stages);
}

/* One JSON object per kernel, on one line (JSON Lines). */
static void
report_json(FILE *f, const Kernel *k, const Problem *p, const Target *t, Source src,
    const Tuning *tu, const Result *r, const char *from)
{
	static const char *const srcname[] = {"scored", "cache", "reuse", "scored"};
	unsigned have = tune_cache_kind_attrs(k->kind);

	fprintf(f, "{\"pass\":\"autotune\",\"kernel\":");
	ir_json_str(f, k->name);
	fprintf(f, ",\"kind\":\"%s\",\"dtype\":\"%s\",\"target\":", ir_kernel_kinds[k->kind],
	    ir_dtype_name(p->dt));
	ir_json_str(f, t->name);
	fprintf(f, ",\"problem\":{\"batch\":%" PRId64 ",\"m\":%" PRId64 ",\"n\":%" PRId64
	    ",\"k\":%" PRId64 "},\"source\":\"%s\"", p->batch, p->m, p->n, p->k, srcname[src]);
	if (from) {
		fprintf(f, ",\"from\":");
		ir_json_str(f, from);
	}
	if (r->found) {
		fprintf(f, ",\"chosen\":{");
		json_config(f, &r->c, have);
		fprintf(f, ",\"score\":%.17g", r->score);
		if (r->measured)
			fprintf(f, ",\"measured_ms\":%.17g", r->ms);
		fprintf(f, "}");
	} else {
		fprintf(f, ",\"chosen\":null");
	}
	if (src == SRC_SCORED || src == SRC_NONE) {
		fprintf(f, ",\"candidates\":%d,\"pruned\":{\"block\":%d,\"smem\":%d,\"regs\":%d}"
		    ",\"scored\":%d,\"scores\":[", tu->n, tu->pruned[PR_BLOCK], tu->pruned[PR_SMEM],
		    tu->pruned[PR_REGS], tu->nscored);
		for (int i = 0; i < tu->n; i++) {
			const Cand *c = &tu->cand[i];
			static const char *const why[] = {"", "block", "smem", "regs"};

			fprintf(f, "%s{", i ? "," : "");
			json_config(f, &c->c, have);
			if (c->why != PR_NONE) {
				fprintf(f, ",\"pruned\":\"%s\"}", why[c->why]);
				continue;
			}
			fprintf(f, ",\"score\":%.17g,\"mem\":%.17g,\"comp\":%.17g,\"launch\":%.17g,"
			    "\"waste\":%.17g,\"padding_pct\":%.17g,\"loaded\":%" PRId64 ",\"stored\":%"
			    PRId64 ",\"programs\":%" PRId64, c->s.total, c->s.mem, c->s.comp,
			    c->s.launch, c->s.waste, c->s.padding_pct, c->t.loaded, c->t.stored,
			    c->t.programs);
			if (has_steps(t))
				fprintf(f, ",\"steps\":%.17g,\"loop_steps\":%" PRId64, c->s.steps,
				    c->t.steps);
			/* a cpu target's features, as bench/calibrate.py fits them */
			if (t->seg_ns > 0 || has_steps(t))
				fprintf(f, ",\"contig\":%.17g,\"segs\":%.17g,\"line_waste\":%.17g,"
				    "\"flops\":%" PRId64 ",\"mm_flops\":%" PRId64 ",\"pad_mm_flops\":%.17g,"
				    "\"pad_vec_flops\":%.17g,\"acc_bytes\":%.17g,\"waves\":%" PRId64
				    ",\"tile_foot\":%.17g,\"tile_bytes\":%.17g,\"mm_foot\":%.17g"
				    ",\"attn_steps\":%" PRId64 ",\"fly_rows\":%.17g,\"fly_bytes\":%.17g,\"fly_segs\":%.17g"
				    ",\"a_foot\":%.17g,\"a_reread\":%.17g",
				    c->s.contig, c->t.segs, c->t.line_waste, c->t.flops, c->t.mm_flops,
				    c->t.pad_mm_flops, c->t.pad_vec_flops, c->t.acc_bytes, c->s.waves,
				    c->t.tile_foot, c->t.tile_bytes, c->t.mm_foot, c->t.attn_steps,
				    c->t.fly_rows, c->t.fly_bytes, c->t.fly_segs, c->t.a_foot, c->t.a_reread);
			fprintf(f, "}");
		}
		fprintf(f, "]");
		if (tu->ntimed) {
			fprintf(f, ",\"measured\":[");
			for (int i = 0; i < tu->ntimed; i++) {
				const Timed *tm = &tu->timed[i];

				fprintf(f, "%s{", i ? "," : "");
				json_config(f, &tu->cand[tm->cand].c, have);
				fprintf(f, ",\"model_rank\":%d,\"score\":%.17g,\"match\":%s", tm->rank,
				    tu->cand[tm->cand].s.total, tm->m.match ? "true" : "false");
				if (tm->m.match)
					fprintf(f, ",\"ms\":%.17g", tm->m.ms);
				/* JSON has no inf or NaN: a non-finite error is null */
				if (isfinite(tm->m.err))
					fprintf(f, ",\"err\":%.17g}", tm->m.err);
				else
					fprintf(f, ",\"err\":null}");
			}
			fprintf(f, "]");
		}
	}
	fprintf(f, "}\n");
}

/* ---- the pass -------------------------------------------------------- */

/* Checks that every size of the kernel fits int64 (one config suffices:
 * the smallest blocks give the largest counts). */
static bool
sizes_ok(const CostModel *m)
{
	TileConfig c = {16, 16, 16, 4, 3, 0};
	Traffic t;

	if (!cost_model_problem(m)->ok)
		return false;
	if (cost_model_problem(m)->kind != KK_MATMUL &&
	    cost_model_problem(m)->kind != KK_MATMUL_EPILOGUE &&
	    cost_model_problem(m)->kind != KK_CONV_EPILOGUE)
		c.bm = c.bn = 1;
	cost_model_traffic(m, &c, &t);
	return t.ok;
}

/* The kernels tuned so far in this run, one per signature (the first that
 * had it), in a map by the hash of the signature's words. */
typedef struct Reuse {
	HashMap map;                 /* items: kernel indices */
	uint64_t hmask;              /* applied to every hash: all ones but in tests */
	Words a, b;                  /* the kernel looked up, and one compared with */
	ExtNums x;
	int64_t compares;            /* full comparisons of words */
} Reuse;

/* A lookup's key, for the map's equality: the words sought are in ru->a;
 * the kernels' words are built into ru->b, from g and their results. */
typedef struct ReuseKey {
	Reuse *ru;
	const Graph *g;
	const Result *res;
} ReuseKey;

static bool
same_words(const void *ctx, uint32_t j, const void *key)
{
	const ReuseKey *q = key;
	Reuse *ru = q->ru;

	(void)ctx;
	ru->compares++;
	sig_words(&ru->b, &ru->x, q->g, &q->g->kernels[j], q->res[j].dt);
	return ru->b.n == ru->a.n && !memcmp(ru->a.w, ru->b.w, sizeof *ru->a.w * (size_t)ru->a.n);
}

/* The earlier kernel with the signature of words r->a (hash h), or -1. */
static int
reuse_find(Reuse *ru, const Graph *g, const Result *res, uint32_t h)
{
	ReuseKey q = {ru, g, res};

	return (int)hashmap_find(&ru->map, h, same_words, NULL, &q);
}

/* requires: shapes, kernels (fuse or written); preserves: nodes, kernels,
 * names; sets: each kernel's BM BN [BK] warps [stages] (split kept).
 * Returns 0, -1, or PASS_IO when the cache cannot be read or written. */
static int
tune_all(Graph *g, const PassArgs *a, Diag *d, uint64_t hmask, int64_t *compares)
{
	Target t;
	StrBuf tdesc = {0}, key = {0}, from = {0};
	TuneCache cache = {0};
	Reuse ru = {0};
	Result *res;
	Tuning *tu;
	int topk = (int)pass_int(a, "top-k"), rc = 0;
	const char *cpath = pass_str(a, "cache");
	bool meas = pass_bool(a, "measure");

	if (meas && !a->measure) {
		diag_error(d, LOC_NONE, "autotune: measure=true needs a measuring callback, and "
		    "this tool hands the passes none (aicm-opt and aicm-run do); drop measure=true "
		    "to score with the cost model alone");
		return -1;
	}
	if (setup_target(a, &t, d) != 0 || pass_require_shapes(g, d, "fuse,autotune") != 0)
		return -1;
	if (g->nkernels == 0) {
		/* a graph of sources only has nothing to tune and nothing to fuse */
		for (int i = 0; i < g->nnodes; i++)
			if (ir_ops[g->nodes[i].op].cls != OC_SOURCE && g->nodes[i].op != OP_TILED) {
				diag_remark(d, LOC_NONE, "autotune: no kernels to tune; run fuse "
				    "first (--pass=shape-infer,fuse,autotune)");
				break;
			}
		return 0;
	}
	if (cpath && *cpath) {
		cache.path = cpath;
		if (tune_cache_load(&cache, d) != 0) {
			tune_cache_free(&cache);
			return PASS_IO;
		}
	}
	/* the target's constants go into each cache key: described once */
	target_desc(&tdesc, &t);
	hashmap_reserve(&ru.map, (size_t)g->nkernels);
	ru.hmask = hmask;
	res = xcalloc((size_t)g->nkernels, sizeof *res);
	tu = xmalloc(sizeof *tu);
	for (int k = 0; k < g->nkernels; k++) {
		Kernel *kn = &g->kernels[k];
		CostModel *m = cost_model_new(g, k);
		const Problem *p = cost_model_problem(m);
		Result *r = &res[k];
		const char *fromp = NULL;
		Source src = SRC_SCORED;
		TuneEntry *e;
		uint32_t h;
		int j;

		if (!sizes_ok(m)) {
			diag_error(d, kn->loc, "kernel '@%s' is too large for the cost model "
			    "(a byte or flop count overflows 64 bits)", kn->name);
			cost_model_free(m);
			rc = -1;
			break;
		}
		r->dt = p->dt;
		sig_words(&ru.a, &ru.x, g, kn, p->dt);
		h = (uint32_t)(ir_hash_mix(ir_hash_words(IR_HASH_SEED, ru.a.w, (size_t)ru.a.n)) &
		    ru.hmask);
		if ((j = reuse_find(&ru, g, res, h)) >= 0) {
			src = SRC_REUSE;
			r->found = res[j].found;
			r->c = res[j].c;
			r->score = res[j].score;
			r->measured = res[j].measured;
			r->ms = res[j].ms;
			fromp = g->kernels[j].name;
		} else {
			hashmap_add(&ru.map, h, (uint32_t)k);
		}
		if (src == SRC_SCORED && cache.path) {
			key.n = 0;
			signature(&key, &ru.x, g, kn);
			strbuf_putc(&key, ' ');
			strbuf_puts(&key, ir_dtype_name(p->dt));
			strbuf_puts(&key, " target=");
			strbuf_puts(&key, tdesc.s);
			strbuf_printf(&key, " space=%016" PRIx64, cost_space_hash(kn->kind));
		}
		/* a measuring run takes only measured records; the model's are
		 * measured again and replaced */
		if (src == SRC_SCORED && cache.path && (e = tune_cache_find(&cache, key.s)) &&
		    (e->measured || !meas)) {
			if (cached_ok(m, &t, e)) {
				src = SRC_CACHE;
				r->found = true;
				r->c = e->c;
				r->score = e->score;
				r->measured = e->measured;
				r->ms = e->ms;
				from.n = 0;
				strbuf_printf(&from, "%s:%d", cache.path, e->line);
				fromp = from.s;
			} else {
				diag_warning(d, LOC_NONE, "autotune: %s:%d: the cached config of '@%s' "
				    "is not a candidate that fits; re-tuning", cache.path, e->line,
				    kn->name);
				e->drop = true;
				cache.dirty = true;
			}
		}
		if (src == SRC_SCORED) {
			tune(m, &t, tu);
			tu->ntimed = 0;
			if (tu->nscored && meas) {
				if (measure_top(a->measure, pass_str(a, "target"), g, kn, tu,
				    measure_top_n(a), d) != 0) {
					cost_model_free(m);
					rc = -1;
					break;
				}
				r->found = true;
				r->c = tu->cand[tu->timed[0].cand].c;
				r->score = tu->cand[tu->timed[0].cand].s.total;
				r->measured = true;
				r->ms = tu->timed[0].m.ms;
			} else if (tu->nscored) {
				r->found = true;
				r->c = tu->cand[tu->order[0]].c;
				r->score = tu->cand[tu->order[0]].s.total;
			} else {
				src = SRC_NONE;
				diag_warning(d, kn->loc, "no tile configuration of kernel '@%s' fits "
				    "target '%s' (%d candidates, all pruned); left untuned", kn->name,
				    t.name, tu->n);
			}
			if (r->found && cache.path) {
				TuneEntry ne = {0};

				/* a record of an older space for the same kernel and
				 * target is superseded, not kept beside the new one */
				tune_cache_supersede(&cache, key.s);
				ne.key = xstrdup(key.s);
				ne.c = r->c;
				ne.score = r->score;
				ne.measured = r->measured;
				ne.ms = r->ms;
				ne.have = tune_cache_kind_attrs(kn->kind);
				ne.fresh = true;
				tune_cache_add(&cache, ne);
				cache.dirty = true;
			}
		}
		if (r->found)
			apply(kn, &r->c);
		if (a->report && a->report_json)
			report_json(a->report, kn, p, &t, src, tu, r, fromp);
		else if (a->report)
			report_text(a->report, kn, p, &t, src, tu, r, fromp, topk);
		cost_model_free(m);
	}
	if (rc == 0 && cache.path && cache.dirty)
		rc = tune_cache_save(&cache, d);
	if (compares)
		*compares = ru.compares;
	tune_cache_free(&cache);
	hashmap_free(&ru.map);
	free(ru.a.w);
	free(ru.b.w);
	free(ru.x.v);
	free(ru.x.slot);
	free(res);
	free(tu);
	free(tdesc.s);
	free(key.s);
	free(from.s);
	return rc;
}

static int
run(Graph *g, const PassArgs *a, Diag *d)
{
	return tune_all(g, a, d, ~(uint64_t)0, NULL);
}

/* For tests only; declared in cost.h. */
int
autotune_run_hashmask(Graph *g, const PassArgs *a, Diag *d, uint64_t hmask, int64_t *compares)
{
	return tune_all(g, a, d, hmask, compares);
}

/* Declared in cost.h, for the report layer: tune() on one kernel. */
int
autotune_table(const Graph *g, int kernel, const PassArgs *a, Problem *p, TuneRow *rows)
{
	Target t;
	CostModel *m;
	Tuning *tu;
	int n;

	if (setup_target(a, &t, NULL) != 0)
		return -1;
	m = cost_model_new(g, kernel);
	*p = *cost_model_problem(m);
	if (!sizes_ok(m)) {
		cost_model_free(m);
		return -1;
	}
	tu = xmalloc(sizeof *tu);
	tune(m, &t, tu);
	n = tu->n;
	for (int i = 0; i < n; i++)
		rows[i] = (TuneRow){tu->cand[i].c, tu->cand[i].why, tu->cand[i].s, tu->cand[i].t, 0};
	for (int i = 0; i < tu->nscored; i++)
		rows[tu->order[i]].rank = i + 1;
	free(tu);
	cost_model_free(m);
	return n;
}

const Pass pass_autotune = {
	.name = "autotune",
	.summary = "pick each kernel's tile configuration with an analytic cost model",
	.opts = opts,
	.run = run,
	.check_opt = check_opt,
};
