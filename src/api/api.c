/*
 * api.c: libaicm's public functions (aicm.h) over the layers below.
 *
 * Nothing here is a second copy of the tools: parsing is parse_graph and
 * ir_verify_input, a pipeline is pass_run_text over the pass registry, the
 * engines are exec_interp, the tile executor and the native engine's
 * driver (native.c, as aicm-run --engine=native), and the run-time checks
 * are exec_check_limits and exec_check_work, exactly as aicm-run calls
 * them; what a graph still needs before an engine (ir_has_untyped,
 * ir_has_unlowered, ir_has_tiled) and where a const's file= is read from
 * (aicm_dir_of) were aicm-run's and cli.c's, moved down into src/ir for
 * both.  What is the library's own is the handles and where messages go.
 *
 * Messages: the layers below print diagnostics to a FILE (Diag.out, the
 * pipeline parser's err).  Each call that can fail points that FILE at an
 * open_memstream buffer for its duration; on failure the buffer becomes
 * the context's error text, so the caller gets the located diagnostics
 * byte for byte as aicm-opt would print them, and nothing reaches stderr.
 *
 * State: every mutable thing lives in a handle.  A module owns its text,
 * its Diag (which quotes that text) and its graph; a program owns the
 * tensors of one run (one per node, the sources among them), the tile
 * plan with its thread crew, and refers to its module for the graph.  So
 * two contexts never meet, and the only process-wide state a call reaches
 * is read-only after its first use (the op-name tables built under
 * pthread_once, the SIMD choice); docs/api.md lists it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aicm.h"
#include "diag.h"
#include "exec.h"
#include "ir.h"
#include "native.h"
#include "parse.h"
#include "pass.h"
#include "../../passes/passes.h"
#include "tile_exec.h"

/* The header's version and the tools' (ir.h) are one number. */
#define AICM_STR_(x) #x
#define AICM_STR(x) AICM_STR_(x)
#define API_VERSION_STRING AICM_STR(AICM_VERSION_MAJOR) "." AICM_STR(AICM_VERSION_MINOR) \
	"." AICM_STR(AICM_VERSION_PATCH)

_Static_assert((int)AICM_F64 == DT_F64 && (int)AICM_F32 == DT_F32 && (int)AICM_I32 == DT_I32 &&
    (int)AICM_I64 == DT_I64 && (int)AICM_BOOL == DT_BOOL, "aicm_dtype numbers DType");
_Static_assert(AICM_MAX_RANK == IR_MAX_RANK, "aicm.h's rank limit is the IR's");

/* The tool name the pipeline parser puts before its messages. */
static const char api_tool[] = "libaicm";

struct aicm_context {
	char *err;                   /* the last error text, malloc'd; NULL: none */
	int threads;
	uint64_t seed;
	FILE *cap;                   /* the capture of the call under way, or NULL */
	char *capbuf;
	size_t caplen;
};

struct aicm_module {
	aicm_context *ctx;
	char *file;
	char *text;
	size_t len;
	char *datadir;               /* where a const's file= is looked up */
	Diag d;
	Graph *g;
	int nprograms;               /* live programs compiled from it */
};

/* The native engine's KernelStats (DESIGN section 13: the tile engine's,
 * properties of the programs), counted as aicm-run --engine=native
 * --stats counts them (native_count_stats), on the last run's sources:
 * at the first question after a run, not at every run, so that a caller
 * who never asks pays nothing.  Behind a pointer because the questions
 * take a const program. */
typedef struct NativeStats {
	TilePlan *plan;              /* compiled at the first count */
	bool counted;                /* plan's figures are the last run's */
} NativeStats;

struct aicm_program {
	aicm_module *m;
	aicm_engine engine;
	int threads;
	Tensor *vals;                /* one per node of m->g */
	TilePlan *plan;              /* the tile engine's, else NULL */
	NativeModel *native;         /* the native engine's loaded module, else NULL */
	NativeStats *nstats;         /* the native engine's KernelStats, else NULL */
	int *ins, nin;               /* the input nodes, in order */
	int *outs, nout;             /* the output nodes, in order */
	bool ran;
};

/* ---- errors ------------------------------------------------------------ */

static const char oom_text[] = "libaicm: error: out of memory\n";

/* Starts capturing what the layers print for one call: returns the FILE to
 * hand them, or NULL when even that cannot be had (out of memory). */
static FILE *
cap_begin(aicm_context *ctx)
{
	ctx->capbuf = NULL;
	ctx->caplen = 0;
	ctx->cap = open_memstream(&ctx->capbuf, &ctx->caplen);
	return ctx->cap;
}

/* Ends the capture: on failure its text becomes the context's error (with
 * fallback, when the layers printed nothing); on success the error is
 * cleared.  Returns st. */
static aicm_status
cap_end(aicm_context *ctx, aicm_status st, const char *fallback)
{
	if (ctx->cap) {
		fclose(ctx->cap);
		ctx->cap = NULL;
	}
	free(ctx->err);
	ctx->err = NULL;
	if (st != AICM_OK && ctx->capbuf && ctx->caplen > 0) {
		ctx->err = ctx->capbuf;
		ctx->capbuf = NULL;
	} else if (st != AICM_OK && fallback) {
		ctx->err = xstrdup(fallback);
	}
	free(ctx->capbuf);
	ctx->capbuf = NULL;
	return st;
}

/* A whole error of the library's own (a bad argument), "libaicm: error:
 * ...", as the context's error text.  Returns st. */
static aicm_status
set_error(aicm_context *ctx, aicm_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static aicm_status
set_error(aicm_context *ctx, aicm_status st, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];
	size_t n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	n = strlen(api_tool) + strlen(": error: ") + strlen(msg) + strlen("\n") + 1;
	free(ctx->err);
	ctx->err = xmalloc(n);
	snprintf(ctx->err, n, "%s: error: %s\n", api_tool, msg);
	return st;
}

/* The module's Diag writes into the capture f, its counts fresh. */
static void
diag_to(Diag *d, FILE *f)
{
	d->out = f;
	d->nerr = d->nwarn = d->nshown = 0;
	d->stopped = false;
}

/* ---- version and contexts ---------------------------------------------- */

int
aicm_version(void)
{
	return AICM_VERSION_MAJOR * 10000 + AICM_VERSION_MINOR * 100 + AICM_VERSION_PATCH;
}

const char *
aicm_version_string(void)
{
	return API_VERSION_STRING;
}

aicm_context *
aicm_context_new(void)
{
	aicm_context *ctx = calloc(1, sizeof *ctx);
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (!ctx)
		return NULL;
	ctx->threads = n >= 1 && n <= 1024 ? (int)n : 1;
	return ctx;
}

void
aicm_context_free(aicm_context *ctx)
{
	if (!ctx)
		return;
	free(ctx->err);
	free(ctx);
}

const char *
aicm_error(const aicm_context *ctx)
{
	if (!ctx)
		return "libaicm: error: no context (NULL)\n";
	return ctx->err ? ctx->err : "";
}

aicm_status
aicm_context_set_threads(aicm_context *ctx, int threads)
{
	if (!ctx)
		return AICM_ERR_USAGE;
	if (threads < 1 || threads > 1024)
		return set_error(ctx, AICM_ERR_USAGE, "threads %d is out of range; expected 1 to 1024",
		    threads);
	ctx->threads = threads;
	return cap_end(ctx, AICM_OK, NULL);
}

aicm_status
aicm_context_set_seed(aicm_context *ctx, uint64_t seed)
{
	if (!ctx)
		return AICM_ERR_USAGE;
	ctx->seed = seed;
	return cap_end(ctx, AICM_OK, NULL);
}

/* ---- modules ----------------------------------------------------------- */

aicm_status
aicm_parse(aicm_context *ctx, const char *text, size_t len, const char *file,
    aicm_module **out)
{
	aicm_module *m;
	FILE *f;

	if (!ctx)
		return AICM_ERR_USAGE;
	if (!out || (!text && len > 0))
		return set_error(ctx, AICM_ERR_USAGE, "aicm_parse takes text and a place for the "
		    "module, not NULL");
	*out = NULL;
	if (len > AICM_READ_MAX)
		return set_error(ctx, AICM_ERR_INPUT, "the text is %zu bytes, more than the limit of "
		    "%zu", len, (size_t)AICM_READ_MAX);
	if (!(f = cap_begin(ctx)))
		return cap_end(ctx, AICM_ERR_INTERNAL, oom_text);
	m = xcalloc(1, sizeof *m);
	m->ctx = ctx;
	m->file = xstrdup(file ? file : "<string>");
	m->datadir = aicm_dir_of(file);
	m->text = xmalloc(len + 1);
	if (len)
		memcpy(m->text, text, len);
	m->text[len] = '\0';
	m->len = len;
	diag_init(&m->d, m->file, m->text, m->len, f);
	m->d.errlimit = DIAG_ERROR_LIMIT;
	m->g = parse_graph(m->text, m->len, 1, &m->d);
	if (!m->g || ir_verify_input(m->g, &m->d) != 0) {
		aicm_module_free(m);
		return cap_end(ctx, AICM_ERR_INPUT, "libaicm: error: the text does not parse\n");
	}
	m->d.out = NULL;
	*out = m;
	return cap_end(ctx, AICM_OK, NULL);
}

void
aicm_module_free(aicm_module *m)
{
	if (!m)
		return;
	ir_graph_free(m->g);
	diag_free(&m->d);
	free(m->text);
	free(m->file);
	free(m->datadir);
	free(m);
}

aicm_status
aicm_module_run_passes(aicm_module *m, const char *pipeline)
{
	aicm_context *ctx;
	Pipeline pl;
	PassRun run = {0};
	FILE *f;
	int rc;

	if (!m)
		return AICM_ERR_USAGE;
	ctx = m->ctx;
	if (!pipeline)
		return set_error(ctx, AICM_ERR_USAGE, "the pipeline is NULL");
	if (m->nprograms > 0)
		return set_error(ctx, AICM_ERR_USAGE, "'%s' has %d program%s compiled from it; free "
		    "them before running passes", m->file, m->nprograms, m->nprograms == 1 ? "" : "s");
	if (!(f = cap_begin(ctx)))
		return cap_end(ctx, AICM_ERR_INTERNAL, oom_text);
	if (pass_parse_pipeline(aicm_passes, pipeline, &pl, f, api_tool) != 0)
		return cap_end(ctx, AICM_ERR_USAGE, "libaicm: error: the pipeline does not parse\n");
	run.verify_each = true;
	diag_to(&m->d, f);
	rc = pass_run_pipeline(m->g, &pl, &run, &m->d);
	m->d.out = NULL;
	pass_free_pipeline(&pl);
	if (rc == PASS_IO)
		return cap_end(ctx, AICM_ERR_USAGE, "libaicm: error: a pass could not read or write "
		    "a file\n");
	if (rc != 0)
		return cap_end(ctx, AICM_ERR_INPUT, "libaicm: error: a pass failed\n");
	return cap_end(ctx, AICM_OK, NULL);
}

char *
aicm_module_print(const aicm_module *m, size_t *len)
{
	size_t n = 0;
	char *s;

	if (!m)
		return NULL;
	s = ir_print_str(m->g, &n);
	if (len)
		*len = n;
	return s;
}

/* ---- programs ---------------------------------------------------------- */

/* Fills the sources of p once: a const from its value=/values= or file=,
 * else from the context's seed as aicm-run does; an input gets its buffer,
 * filled by each run.  0, or the status of the failure (diagnostic
 * given). */
static aicm_status
fill_sources(aicm_program *p, uint64_t seed, Diag *d)
{
	const Graph *g = p->m->g;
	char err[EXEC_ERR_MAX], s[IR_TYPE_STR];

	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (ir_ops[n->op].cls != OC_SOURCE)
			continue;
		if (n->op == OP_CONST && (n->at.set & AB(FILE))) {
			int rc = exec_const_read(p->m->datadir, n, EXEC_DEFAULT_MAX_BYTES, &p->vals[i],
			    err);

			if (rc != 0) {
				diag_error(d, ir_attr_loc(n, ATTR_FILE).line ? ir_attr_loc(n, ATTR_FILE) :
				    n->loc, "%s", err);
				return rc == -2 ? AICM_ERR_USAGE : AICM_ERR_INPUT;
			}
			continue;
		}
		if (exec_tensor_alloc(&p->vals[i], &n->type, EXEC_DEFAULT_MAX_BYTES) != 0) {
			diag_error(d, n->loc, "'%%%s' %s %s: cannot allocate %lld bytes", n->name,
			    ir_shape_str(&n->type, s), ir_dtype_name(n->type.dt),
			    (long long)exec_type_bytes(&n->type));
			return AICM_ERR_INPUT;
		}
		if (n->op == OP_CONST && !exec_fill_const(&p->vals[i], n))
			exec_fill_random(&p->vals[i], seed, n->name);
	}
	return AICM_OK;
}

aicm_status
aicm_compile(aicm_module *m, aicm_engine engine, aicm_program **out)
{
	aicm_context *ctx;
	aicm_program *p;
	ExecLimits lim = {EXEC_DEFAULT_MAX_BYTES, 0};
	const Graph *gs[1];
	int runs[1] = {1};
	aicm_status st = AICM_ERR_INPUT;
	FILE *f;

	if (!m)
		return AICM_ERR_USAGE;
	ctx = m->ctx;
	if (!out)
		return set_error(ctx, AICM_ERR_USAGE, "aicm_compile takes a place for the program, "
		    "not NULL");
	*out = NULL;
	if (engine != AICM_ENGINE_TILE && engine != AICM_ENGINE_REFERENCE &&
	    engine != AICM_ENGINE_NATIVE)
		return set_error(ctx, AICM_ERR_USAGE, "engine %d is not AICM_ENGINE_TILE (0), "
		    "AICM_ENGINE_REFERENCE (1) or AICM_ENGINE_NATIVE (2)", (int)engine);
	if (m->nprograms > 0 && ((engine != AICM_ENGINE_REFERENCE && ir_has_unlowered(m->g)) ||
	    ir_has_untyped(m->g)))
		return set_error(ctx, AICM_ERR_USAGE, "'%s' would be changed under the programs "
		    "compiled from it; free them first", m->file);
	if (engine == AICM_ENGINE_REFERENCE && ir_has_tiled(m->g))
		return set_error(ctx, AICM_ERR_USAGE, "the reference interpreter runs graphs, not "
		    "tiled kernels; compile '%s' for the tile engine", m->file);
	if (!(f = cap_begin(ctx)))
		return cap_end(ctx, AICM_ERR_INTERNAL, oom_text);
	diag_to(&m->d, f);
	/* as aicm-run: shape-infer for an untyped graph, lower-tiled for the
	 * tile and native engines; built-in pipelines, so err NULL */
	if (ir_has_untyped(m->g) && pass_run_text(aicm_passes, m->g, "shape-infer", &m->d, NULL,
	    api_tool) != 0)
		goto fail;
	if (engine != AICM_ENGINE_REFERENCE && ir_has_unlowered(m->g) &&
	    pass_run_text(aicm_passes, m->g, "lower-tiled", &m->d, NULL, api_tool) != 0)
		goto fail;
	gs[0] = m->g;
	lim.max_total_bytes = exec_default_max_total();
	if (exec_check_limits(gs, 1, &lim, &m->d) != 0 ||
	    exec_check_work(gs, runs, 1, EXEC_DEFAULT_MAX_WORK, &m->d) != 0)
		goto fail;
	p = xcalloc(1, sizeof *p);
	p->m = m;
	p->engine = engine;
	p->threads = ctx->threads;
	p->vals = xcalloc((size_t)m->g->nnodes, sizeof *p->vals);
	p->ins = xmalloc(sizeof(int) * (size_t)m->g->nnodes);
	for (int i = 0; i < m->g->nnodes; i++)
		if (m->g->nodes[i].op == OP_INPUT)
			p->ins[p->nin++] = i;
	p->nout = ir_outputs(m->g, &p->outs);
	m->nprograms++;
	if ((st = fill_sources(p, ctx->seed, &m->d)) != AICM_OK ||
	    (engine == AICM_ENGINE_TILE && !(p->plan = exec_tile_compile_within(m->g,
	    exec_limits_room(gs, 1, &lim), &m->d)))) {
		aicm_program_free(p);
		if (st == AICM_OK)
			st = AICM_ERR_INPUT;
		goto fail;
	}
	if (engine == AICM_ENGINE_NATIVE) {
		NativeInfo ni;

		/* native_load's status is the tools' exit code: 1 what the
		 * emitter cannot write, 2 no C compiler or an I/O error, 3 the
		 * compiler refused the C (its messages in the capture) */
		if (!(p->native = native_load(m->g, m->file, api_tool, &m->d, &ni))) {
			aicm_program_free(p);
			st = (aicm_status)ni.status;
			goto fail;
		}
		p->nstats = xcalloc(1, sizeof *p->nstats);
	}
	m->d.out = NULL;
	*out = p;
	return cap_end(ctx, AICM_OK, NULL);
fail:
	m->d.out = NULL;
	return cap_end(ctx, st, "libaicm: error: the module cannot be compiled\n");
}

void
aicm_program_free(aicm_program *p)
{
	if (!p)
		return;
	exec_tile_free(p->plan);
	native_free(p->native);
	if (p->nstats)
		exec_tile_free(p->nstats->plan);
	free(p->nstats);
	exec_tensors_free(p->vals, p->m->g->nnodes);
	free(p->vals);
	free(p->ins);
	free(p->outs);
	p->m->nprograms--;
	free(p);
}

int
aicm_program_num_inputs(const aicm_program *p)
{
	return p ? p->nin : 0;
}

int
aicm_program_num_outputs(const aicm_program *p)
{
	return p ? p->nout : 0;
}

static void
describe(const Node *n, aicm_tensor *t)
{
	memset(t, 0, sizeof *t);
	t->name = n->name;
	t->dtype = (aicm_dtype)n->type.dt;
	t->rank = n->type.rank;
	for (int k = 0; k < n->type.rank; k++)
		t->shape[k] = n->type.dim[k];
}

/* aicm_program_input and _output: the i-th of the n nodes at idx. */
static aicm_status
describe_nth(const aicm_program *p, const char *what, const int *idx, int n, int i,
    aicm_tensor *desc)
{
	if (i < 0 || i >= n || !desc)
		return set_error(p->m->ctx, AICM_ERR_USAGE, "%s %d does not exist; the graph has %d",
		    what, i, n);
	describe(&p->m->g->nodes[idx[i]], desc);
	return cap_end(p->m->ctx, AICM_OK, NULL);
}

aicm_status
aicm_program_input(const aicm_program *p, int i, aicm_tensor *desc)
{
	return p ? describe_nth(p, "input", p->ins, p->nin, i, desc) : AICM_ERR_USAGE;
}

aicm_status
aicm_program_output(const aicm_program *p, int i, aicm_tensor *desc)
{
	return p ? describe_nth(p, "output", p->outs, p->nout, i, desc) : AICM_ERR_USAGE;
}

/* Whether buffer t has node n's type; otherwise a diagnostic at n's
 * definition saying what was given and what the graph has. */
static bool
check_buffer(const char *what, const aicm_tensor *t, const Node *n, Diag *d)
{
	Type ty = {0};
	char s1[IR_TYPE_STR], s2[IR_TYPE_STR];

	if ((unsigned)t->dtype >= DT_COUNT || t->rank < 0 || t->rank > IR_MAX_RANK) {
		diag_error(d, n->loc, "%s '%%%s' is given with dtype %d and rank %d; expected %s %s",
		    what, n->name, (int)t->dtype, t->rank, ir_shape_str(&n->type, s2),
		    ir_dtype_name(n->type.dt));
		return false;
	}
	ty.rank = t->rank;
	ty.dt = (DType)t->dtype;
	for (int k = 0; k < t->rank; k++)
		ty.dim[k] = t->shape[k];
	if (!ir_type_eq(&ty, &n->type)) {
		diag_error(d, n->loc, "%s '%%%s' is given as %s %s; expected %s %s", what, n->name,
		    ir_shape_str(&ty, s1), ir_dtype_name(ty.dt), ir_shape_str(&n->type, s2),
		    ir_dtype_name(n->type.dt));
		return false;
	}
	return true;
}

/* The node of entry k: by name, or the k-th of list[0..n) by position;
 * -1 after a diagnostic. */
static int
pick(const Graph *g, const aicm_tensor *t, int k, const int *list, int n, const char *what,
    bool any_source, bool any_value, Diag *d)
{
	if (!t->name) {
		if (k >= n) {
			diag_error(d, LOC_NONE, "%s %d is given, but the graph has %d %s%s", what, k + 1,
			    n, what, n == 1 ? "" : "s");
			return -1;
		}
		return list[k];
	}
	int i = ir_lookup(g, t->name);

	if (i < 0) {
		diag_error(d, LOC_NONE, "%s '%%%s' is given, but the graph has no value '%%%s'", what,
		    t->name, t->name);
		return -1;
	}
	if (any_value || g->nodes[i].op == OP_INPUT ||
	    (any_source && g->nodes[i].op == OP_CONST))
		return i;
	diag_error(d, g->nodes[i].loc, "%s '%%%s' is given, but '%%%s' is not an input or a const",
	    what, t->name, t->name);
	return -1;
}

/* The run: takes the inputs, runs the engine, hands out the outputs.
 * given[] marks the inputs given; mine[] (nout, NULL) gets the output
 * buffers the library allocates, left for the caller to free on failure. */
static aicm_status
run_program(aicm_program *p, const aicm_tensor *in, int nin, aicm_tensor *out, int nout,
    bool *given, void **mine, Diag *d)
{
	const Graph *g = p->m->g;

	if (nin < 0 || nout < 0 || (nin > 0 && !in) || (nout > 0 && !out)) {
		diag_error(d, LOC_NONE, "the buffers are NULL or their counts negative (%d inputs, "
		    "%d outputs)", nin, nout);
		return AICM_ERR_USAGE;
	}
	for (int k = 0; k < nin; k++) {
		int i = pick(g, &in[k], k, p->ins, p->nin, "input", true, false, d);

		if (i < 0)
			return AICM_ERR_INPUT;
		if (given[i]) {
			diag_error(d, g->nodes[i].loc, "input '%%%s' is given twice", g->nodes[i].name);
			return AICM_ERR_INPUT;
		}
		given[i] = true;
		if (!check_buffer("input", &in[k], &g->nodes[i], d))
			return AICM_ERR_INPUT;
		if (p->vals[i].numel > 0 && !in[k].data) {
			diag_error(d, g->nodes[i].loc, "input '%%%s' is given with no data (NULL)",
			    g->nodes[i].name);
			return AICM_ERR_USAGE;
		}
	}
	for (int k = 0; k < p->nin; k++)
		if (!given[p->ins[k]]) {
			const Node *n = &g->nodes[p->ins[k]];

			diag_error(d, n->loc, "input '%%%s' is not given", n->name);
			return AICM_ERR_INPUT;
		}
	for (int k = 0; k < nout; k++) {
		int i = pick(g, &out[k], k, p->outs, p->nout, "output", false, true, d);

		if (i < 0)
			return AICM_ERR_INPUT;
		if (out[k].data && !check_buffer("output", &out[k], &g->nodes[i], d))
			return AICM_ERR_INPUT;
	}
	/* only now is anything written: a refused call leaves the program as
	 * it was */
	for (int k = 0; k < nin; k++) {
		int i = in[k].name ? ir_lookup(g, in[k].name) : p->ins[k];

		if (p->vals[i].numel > 0)
			memcpy(p->vals[i].data, in[k].data, exec_tensor_bytes(&p->vals[i]));
		/* a const replaced in place: the plan's packed copies of it
		 * are stale (tile_exec.h) */
		if (p->plan && g->nodes[i].op == OP_CONST)
			exec_tile_source_changed(p->plan, i);
		if (p->nstats && p->nstats->plan && g->nodes[i].op == OP_CONST)
			exec_tile_source_changed(p->nstats->plan, i);
	}
	if (p->engine == AICM_ENGINE_TILE) {
		if (exec_tile_run(p->plan, p->vals, p->threads, d) != 0)
			return AICM_ERR_INPUT;
	} else if (p->engine == AICM_ENGINE_NATIVE) {
		p->nstats->counted = false;
		if (native_run(p->native, p->vals, p->threads, d) != 0)
			return AICM_ERR_INPUT;
	} else if (exec_interp(g, p->vals, d) != 0) {
		return AICM_ERR_INPUT;
	}
	p->ran = true;
	/* the library's buffers first, so that running out of memory leaves
	 * the caller's outputs as they were */
	for (int k = 0; k < nout; k++) {
		int i = out[k].name ? ir_lookup(g, out[k].name) : p->outs[k];
		size_t bytes = exec_tensor_bytes(&p->vals[i]);

		if (out[k].data)
			continue;
		/* one byte at least, so that an empty result is not NULL */
		if (!(mine[k] = malloc(bytes ? bytes : 1))) {
			diag_error(d, g->nodes[i].loc, "output '%%%s': cannot allocate %zu bytes",
			    g->nodes[i].name, bytes);
			return AICM_ERR_INTERNAL;
		}
	}
	for (int k = 0; k < nout; k++) {
		int i = out[k].name ? ir_lookup(g, out[k].name) : p->outs[k];
		const Tensor *t = &p->vals[i];
		size_t bytes = exec_tensor_bytes(t);

		if (mine[k]) {
			describe(&g->nodes[i], &out[k]);
			out[k].data = mine[k];
			mine[k] = NULL;
		}
		if (bytes)
			memcpy(out[k].data, t->data, bytes);
	}
	return AICM_OK;
}

aicm_status
aicm_program_run(aicm_program *p, const aicm_tensor *in, int nin, aicm_tensor *out, int nout)
{
	aicm_context *ctx;
	aicm_status st;
	bool *given;
	void **mine;
	FILE *f;

	if (!p)
		return AICM_ERR_USAGE;
	ctx = p->m->ctx;
	if (!(f = cap_begin(ctx)))
		return cap_end(ctx, AICM_ERR_INTERNAL, oom_text);
	diag_to(&p->m->d, f);
	given = xcalloc((size_t)p->m->g->nnodes, sizeof *given);
	mine = xcalloc(nout > 0 ? (size_t)nout : 1, sizeof *mine);
	st = run_program(p, in, nin, out, nout, given, mine, &p->m->d);
	for (int k = 0; k < nout; k++)
		free(mine[k]);
	free(mine);
	free(given);
	p->m->d.out = NULL;
	return cap_end(ctx, st, "libaicm: error: the program failed\n");
}

/* The plan whose figures are the last run's: the tile engine's own, or
 * the native engine's count, made now if the last run has none yet
 * (AICM_ERR_INPUT, the count's diagnostic the context's error, if it
 * fails).  NULL with AICM_OK before a run and for the reference
 * interpreter. */
static aicm_status
stats_plan(const aicm_program *p, const TilePlan **plan)
{
	aicm_context *ctx = p->m->ctx;
	NativeStats *ns = p->nstats;
	aicm_status st = AICM_OK;
	FILE *f;

	*plan = NULL;
	if (!p->ran)
		return AICM_OK;
	if (!ns) {
		*plan = p->plan;
		return AICM_OK;
	}
	if (!ns->counted) {
		if (!(f = cap_begin(ctx)))
			return cap_end(ctx, AICM_ERR_INTERNAL, oom_text);
		diag_to(&p->m->d, f);
		if (native_count_stats(&ns->plan, p->m->g, p->vals, &p->m->d) != 0)
			st = AICM_ERR_INPUT;
		p->m->d.out = NULL;
		ns->counted = st == AICM_OK;
		if (st != AICM_OK)
			return cap_end(ctx, st, "libaicm: error: the kernels cannot be counted\n");
		cap_end(ctx, st, NULL);
	}
	*plan = ns->plan;
	return AICM_OK;
}

int
aicm_program_num_kernels(const aicm_program *p)
{
	const TilePlan *plan;
	int n = 0;

	if (!p || stats_plan(p, &plan) != AICM_OK || !plan)
		return 0;
	exec_tile_stats(plan, &n);
	return n;
}

aicm_status
aicm_program_kernel_stats(const aicm_program *p, int k, aicm_kernel_stats *out)
{
	const KernelStats *ks = NULL;
	const TilePlan *plan;
	KernelStats s;
	aicm_status st;
	int n = 0;

	if (!p)
		return AICM_ERR_USAGE;
	if ((st = stats_plan(p, &plan)) != AICM_OK)
		return st;
	if (plan)
		ks = exec_tile_stats(plan, &n);
	if (!out || k < -1 || k >= n)
		return set_error(p->m->ctx, AICM_ERR_USAGE, "kernel %d does not exist; the last run "
		    "has %d", k, n);
	s = k < 0 ? exec_tile_total(ks, n) : ks[k];
	out->name = k < 0 ? "total" : s.name;
	out->kind = s.kind ? s.kind : "";
	out->result = s.result ? s.result : "";
	for (int j = 0; j < 3; j++)
		out->grid[j] = s.grid[j];
	out->programs = s.programs;
	out->bytes_read = s.bytes_read;
	out->bytes_written = s.bytes_written;
	out->flops = s.flops;
	out->ideal_read = s.ideal_read;
	out->ideal_written = s.ideal_written;
	return cap_end(p->m->ctx, AICM_OK, NULL);
}

size_t
aicm_dtype_size(aicm_dtype dtype)
{
	return (unsigned)dtype < DT_COUNT ? ir_dtype_size((DType)dtype) : 0;
}

void
aicm_free(void *ptr)
{
	free(ptr);
}
