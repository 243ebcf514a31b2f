/*
 * tile_run.c: running a plan: one program's instructions, a grid's
 * programs, the threads (tile_priv.h has the executor's map).
 *
 * A program runs its instructions in order, each through its op's entry
 * in tx_ops (a loop's entry runs its body here, once per trip), a strip
 * run as one.  A grid's programs are taken in a fixed order, ascending
 * along every axis, in chunks, by the caller and a crew of threads that
 * is started once per plan and waits between grids.  Each thread has one
 * scratch buffer, sized for the plan's largest kernel, allocated when the
 * crew starts and reused by every kernel and every run.
 *
 * The crew is the plan's: exec_tile_free stops and joins it.  Its threads
 * run on stacks the crew maps and unmaps itself: glibc keeps the stacks it
 * allocates for joined threads in a cache, whose TLS blocks memcheck then
 * reports as possibly lost in a process that dies by a signal (check_io.c's
 * children, forked after the exec suite's runs); with the crew's own
 * stacks, a join frees a thread's TLS and nothing of it outlives the plan.
 */
#define _DEFAULT_SOURCE              /* MAP_ANONYMOUS, MAP_STACK */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "simd.h"
#include "tile_priv.h"

/* What a thread keeps across kernels and runs: its tile memory and
 * per-value tables, sized for the plan's largest kernel. */
typedef struct Scratch {
	char *buf;
	void **p;
	int64_t *ld;
	int64_t (*mkey)[4];          /* per memo slot: the offsets it holds */
	int64_t *mcnt;               /* per instruction: executions this program */
	int64_t *sc;
	int64_t (*valid)[4];
	int64_t (*rowstr)[4];
} Scratch;

/* ---- running one program --------------------------------------------- */

/* Runs instructions [i, end) of the kernel for the current program. */
static void
run_insts(Worker *w, int i, int end)
{
	const TileFn *f = w->k->f;

	while (i < end)
		i = w->k->mx ? tx_run_mixed(w, i) : w->k->run_end[i] ? tx_run_strips(w, i) :
		    tx_ops[f->insts[i].op](w, &f->insts[i], i);
}

static void
copy_tile(Worker *w, int dst, int src)
{
	if (dst == src)
		return;
	if (w->k->mx && w->p[dst] != w->p[src])
		tx_copy_mixed(w, dst, src);
	else if (w->p[dst] != w->p[src])   /* a dot's result may share its accumulator */
		memcpy(w->p[dst], w->p[src], w->k->es * (size_t)w->k->tile[dst].n);
	memcpy(w->valid[dst], w->valid[src], sizeof w->valid[0]);
}

/* A loop: the carried value in, the body once per trip with its yield's
 * operand carried to the next, the carried value out. */
int
tx_run_for(Worker *w, const TileInst *in, int i)
{
	const TileFn *f = w->k->f;

	copy_tile(w, in->iter, in->in[0]);
	for (int64_t v = in->lo; v < in->hi; v += in->step) {
		w->sc[in->var] = v;
		run_insts(w, i + 1, in->end);
		copy_tile(w, in->iter, f->insts[in->end].in[0]);
	}
	copy_tile(w, in->res, in->iter);
	return in->end + 1;
}

/* ---- running a grid -------------------------------------------------- */

typedef struct Pool {
	const PKernel *k;
	Tensor *vals;
	int64_t programs;
	int64_t chunk;               /* programs taken at a time, at first */
	int nt;                      /* threads taking them */
	int64_t next;                /* the next program to take (atomic) */
	AtomLog *logs;
} Pool;

static void
scratch_init(Scratch *s, const TilePlan *p)
{
	size_t n = (p->maxbuf + EXEC_ALIGN) / EXEC_ALIGN * EXEC_ALIGN;

	s->buf = aligned_alloc(EXEC_ALIGN, n);
	if (!s->buf)
		AICM_BUG("out of memory (%zu bytes)", n);
	s->p = xcalloc((size_t)p->maxvals + 1, sizeof *s->p);
	s->ld = xcalloc((size_t)p->maxvals + 1, sizeof *s->ld);
	s->mkey = xcalloc((size_t)p->maxslots + 1, sizeof *s->mkey);
	s->mcnt = xcalloc((size_t)p->maxinsts + 1, sizeof *s->mcnt);
	s->sc = xcalloc((size_t)p->maxvals + 1, sizeof *s->sc);
	s->valid = xcalloc((size_t)p->maxvals + 1, sizeof *s->valid);
	s->rowstr = xcalloc(2 * (size_t)p->maxinsts + 2, sizeof *s->rowstr);
}

static void
scratch_free(Scratch *s)
{
	free(s->buf);
	free(s->p);
	free(s->ld);
	free(s->mkey);
	free(s->mcnt);
	free(s->sc);
	free(s->valid);
	free(s->rowstr);
}

static void
worker_init(Worker *w, const Scratch *s, const PKernel *k, Tensor *vals, AtomLog *logs)
{
	memset(w, 0, sizeof *w);
	w->k = k;
	w->vals = vals;
	w->buf = s->buf;
	w->p = s->p;
	w->ld = s->ld;
	w->mkey = s->mkey;
	w->mcnt = s->mcnt;
	w->sc = s->sc;
	w->valid = s->valid;
	w->rowstr = s->rowstr;
	w->logs = logs;
	w->bad_prog = -1;
	for (int v = 0; v < k->nvals; v++) {
		w->p[v] = w->buf + k->tile[v].off * k->les;
		w->ld[v] = k->tile[v].sh[3];
	}
	for (int q = 0; q < k->nslots; q++)
		w->mkey[q][0] = -1;   /* no offset is negative: nothing kept yet */
}

static void
run_program(Worker *w, int64_t p)
{
	const int64_t *g = w->k->f->grid;

	w->prog = p;
	if (w->k->axis0_fast) {
		w->pid[0] = p % g[0];
		w->pid[1] = p / g[0] % g[1];
		w->pid[2] = p / (g[0] * g[1]);
		w->gid = (w->pid[0] * g[1] + w->pid[1]) * g[2] + w->pid[2];
	} else {
		w->pid[0] = p / (g[1] * g[2]);
		w->pid[1] = p / g[2] % g[1];
		w->pid[2] = p % g[2];
		w->gid = p;
	}
	for (int q = 0; q < w->k->nmemoed; q++)
		w->mcnt[w->k->memoed[q]] = 0;
	run_insts(w, 0, w->k->f->ninsts);
}

/* Takes programs until none is left; the streamed stores are fenced
 * before the thread reports its share done.  Chunks halve towards the end
 * (fewer than two chunks a thread left): whole columns of a memo kernel
 * took 12% of W1's time each, and when one thread ran slower (a VM's
 * second core is often shared) the other sat idle for most of one. */
static void
take_programs(Pool *pool, Worker *w)
{
	int64_t i = __atomic_load_n(&pool->next, __ATOMIC_RELAXED);

	while (i < pool->programs) {
		int64_t c = pool->chunk, e;

		while (c > 1 && pool->programs - i < 2 * pool->nt * c)
			c = (c + 1) / 2;
		if (!__atomic_compare_exchange_n(&pool->next, &i, i + c, false,
		    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue;      /* i is the current value now */
		for (e = i + c < pool->programs ? i + c : pool->programs; i < e; i++)
			run_program(w, i);
		i = __atomic_load_n(&pool->next, __ATOMIC_RELAXED);
	}
	simd_fence();
}

/* The crew: n threads started once per plan, each with its scratch, that
 * wait for a grid, take its programs with the caller, and report back.
 * A job is one generation; the caller waits until every thread is done
 * with it, so a Pool on the caller's stack outlives its use. */
typedef struct Member {
	Crew *crew;
	int id;                      /* 1..n; the caller is 0 */
	Scratch s;
	Worker w;
} Member;

struct Crew {
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	int n;
	int busy;                    /* threads still on this generation */
	int64_t gen;
	bool quit;
	Pool *pool;
	int active;                  /* threads 1..active-1 take part */
	pthread_t *tid;
	void **stack;                /* per thread 1..n: its stack mapping, */
	size_t stack_size;           /* a guard page and the default stack size */
	Member *m;
};

static void *
member_main(void *arg)
{
	Member *me = arg;
	Crew *c = me->crew;
	int64_t seen = 0;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (c->gen == seen && !c->quit)
			pthread_cond_wait(&c->go, &c->mu);
		if (c->quit)
			break;
		seen = c->gen;
		if (me->id < c->active) {
			pthread_mutex_unlock(&c->mu);
			take_programs(c->pool, &me->w);
			pthread_mutex_lock(&c->mu);
		}
		if (--c->busy == 0)
			pthread_cond_signal(&c->done);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

void
tx_crew_stop(Crew *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	c->quit = true;
	pthread_cond_broadcast(&c->go);
	pthread_mutex_unlock(&c->mu);
	for (int t = 1; t <= c->n; t++) {
		pthread_join(c->tid[t], NULL);
		munmap(c->stack[t], c->stack_size);
		scratch_free(&c->m[t].s);
	}
	scratch_free(&c->m[0].s);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->go);
	pthread_cond_destroy(&c->done);
	free(c->tid);
	free(c->stack);
	free(c->m);
	free(c);
}

/* A crew of n threads besides the caller (member 0 is the caller's
 * scratch), each on a stack of the default size that the crew maps, with
 * a guard page below it as glibc's own have. */
static Crew *
crew_start(const TilePlan *p, int n)
{
	Crew *c = xcalloc(1, sizeof *c);
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size;
	pthread_attr_t at;

	if (pthread_attr_init(&at) != 0 || pthread_attr_getstacksize(&at, &size) != 0)
		AICM_BUG("cannot read the default thread stack size");
	c->n = n;
	c->stack_size = size + page;
	c->tid = xcalloc((size_t)n + 1, sizeof *c->tid);
	c->stack = xcalloc((size_t)n + 1, sizeof *c->stack);
	c->m = xcalloc((size_t)n + 1, sizeof *c->m);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->go, NULL);
	pthread_cond_init(&c->done, NULL);
	for (int t = 0; t <= n; t++) {
		c->m[t].crew = c;
		c->m[t].id = t;
		scratch_init(&c->m[t].s, p);
	}
	for (int t = 1; t <= n; t++) {
		void *s = mmap(NULL, c->stack_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

		if (s == MAP_FAILED || mprotect(s, page, PROT_NONE) != 0 ||
		    pthread_attr_setstack(&at, (char *)s + page, size) != 0 ||
		    pthread_create(&c->tid[t], &at, member_main, &c->m[t]) != 0)
			AICM_BUG("cannot start a thread");
		c->stack[t] = s;
	}
	pthread_attr_destroy(&at);
	return c;
}

static void
add_stats(KernelStats *st, const Worker *w)
{
	st->bytes_read += w->rd;
	st->bytes_written += w->wr;
	st->flops += w->fl;
}

/* Programs are taken in grid order (axis 0 slowest, axis 2 fastest) by
 * nt threads.  Returns the run-time error of the lowest program that had
 * one (a gather's index out of range), or NULL; *divz gets the lowest
 * instruction that divided an integer by zero in the lowest program that
 * did, or NULL.  "Lowest" is by the grid id (row-major, whatever order the
 * programs were taken in), so that the error is the same on any number of
 * threads, and the native engine's (emit_c.c's divz_fail, gather_fail). */
static const char *
run_kernel(TilePlan *plan, const PKernel *k, Tensor *vals, int nt, KernelStats *st,
    const TileInst **divz)
{
	const TileFn *f = k->f;
	Tensor *out = &vals[k->node];
	int64_t programs = f->grid[0] * f->grid[1] * f->grid[2];
	Crew *c = plan->crew;
	Pool pool = {k, vals, programs, 1, 1, 0, NULL};
	const char *bad = NULL;
	int64_t badp = 0, divp = 0;

	*divz = NULL;
	if (f->has_init) {
		for (int64_t i = 0; i < out->numel; i++)
			exec_set(out, i, f->init);
		st->bytes_written += out->numel * (int64_t)(k->mx ? ir_dtype_size(out->dt) : k->es);
	}
	if (nt > programs)
		nt = (int)(programs < 1 ? 1 : programs);
	pool.nt = nt;
	if (nt > 1 && k->atomics)
		pool.logs = xcalloc((size_t)programs, sizeof *pool.logs);
	/* A thread that keeps packed tiles takes a whole column of blocks at
	 * a time, so that no two threads pack the same tiles, when there are
	 * columns enough to go round. */
	if (nt > 1 && k->nmemoed > 0 && programs / f->grid[0] >= 2 * nt)
		pool.chunk = f->grid[0];
	else if (nt > 1 && programs >= 32 * (int64_t)nt)
		/* Other kernels start with chunks of a sixteenth of a thread's
		 * share: taking W2's and W5's small programs one at a time made
		 * the threads fight over the counter's cache line (W2 f32 on two
		 * threads with one row a program was barely faster than one). */
		pool.chunk = programs / (16 * (int64_t)nt);
	for (int t = 0; t < nt; t++)
		worker_init(&c->m[t].w, &c->m[t].s, k, vals, pool.logs);
	if (nt > 1) {
		pthread_mutex_lock(&c->mu);
		c->pool = &pool;
		c->active = nt;
		c->busy = c->n;
		c->gen++;
		pthread_cond_broadcast(&c->go);
		pthread_mutex_unlock(&c->mu);
	}
	take_programs(&pool, &c->m[0].w);
	if (nt > 1) {
		pthread_mutex_lock(&c->mu);
		while (c->busy > 0)
			pthread_cond_wait(&c->done, &c->mu);
		pthread_mutex_unlock(&c->mu);
	}
	/* Atomics in program order, as one thread would have done them. */
	for (int64_t p = 0; pool.logs && p < programs; p++) {
		AtomLog *l = &pool.logs[p];

		for (int64_t q = 0; q < l->n; q++) {
			if (k->mx ? k->atom_ik : k->ik)
				atom_apply_i(out, l->idx[q], l->ival[q], l->op);
			else
				atom_apply(out, l->idx[q], l->val[q], l->op);
		}
		free(l->idx);
		free(l->val);
		free(l->ival);
	}
	free(pool.logs);
	for (int t = 0; t < nt; t++) {
		const Worker *w = &c->m[t].w;

		add_stats(st, w);
		if (w->err && tx_divz_before(w->err_prog, w->err, divp, *divz)) {
			*divz = w->err;
			divp = w->err_prog;
		}
		if (w->bad_prog >= 0 && (!bad || w->bad_prog < badp)) {
			bad = w->bad;
			badp = w->bad_prog;
		}
	}
	return bad;
}

/* The ideal read of each operand of kernel f (ideal[j], bytes): each
 * tensor once, in its own element type; one read only through strided
 * views (layout ops folded into the loads) the elements those distinct
 * views reach (a stretched dim, stride 0, reaches one), at most all.  One
 * pass over the body, and the views compared among themselves only (a
 * chain of 40k ops has no views, and must not cost 40k^2). */
static void
ideal_reads(const Graph *g, const TileFn *f, int64_t *ideal)
{
	int *views = xmalloc(sizeof(int) * ((size_t)f->ninsts + 1)), nv = 0;
	bool *plain = xcalloc((size_t)f->nargs + 1, sizeof(bool));

	for (int j = 0; j < f->nargs; j++)
		ideal[j] = 0;
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		int64_t e = 1;
		bool again = false;

		if ((tile_ops[in->op].form != TF_LOAD && tile_ops[in->op].form != TF_STORE) ||
		    in->arg < 0)
			continue;
		if (!in->vstr) {
			plain[in->arg] = true;
			continue;
		}
		for (int q = 0; q < nv && !again; q++) {
			const TileInst *o = &f->insts[views[q]];

			again = o->arg == in->arg && o->nview == in->nview &&
			    !memcmp(o->view, in->view, sizeof(int64_t) * (size_t)in->nview) &&
			    !memcmp(o->vstr, in->vstr, sizeof(int64_t) * (IR_MAX_RANK + 1));
		}
		if (again)
			continue;
		views[nv++] = i;
		for (int d = 0; d < in->nview; d++)
			if (in->vstr[d] != 0)
				e *= in->view[d];
		ideal[in->arg] += e;
	}
	for (int j = 0; j < f->nargs; j++) {
		const Type *t = &g->nodes[f->args[j]].type;
		int64_t n = ir_type_numel(t);

		ideal[j] = (plain[j] || ideal[j] > n ? n : ideal[j]) * (int64_t)ir_dtype_size(t->dt);
	}
	free(views);
	free(plain);
}

int
exec_tile_run(TilePlan *p, Tensor *vals, int threads, Diag *d)
{
	const Graph *g = p->g;
	const char *bad;

	if (threads < 1)
		threads = 1;
	if (!p->crew || p->crew->n < threads - 1) {
		tx_crew_stop(p->crew);
		p->crew = crew_start(p, threads - 1);
	}
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (ir_ops[n->op].cls == OC_SOURCE &&
		    !exec_tensor_has_type(&vals[i], &n->type)) {
			diag_error(d, n->loc, "'%%%s' has no value of its type to run on", n->name);
			return -1;
		}
	}
	for (int q = 0; q < p->nk; q++) {
		const PKernel *k = &p->k[q];
		const Node *n = &g->nodes[k->node];
		KernelStats *st = &p->stats[q];
		const TileInst *err;
		int64_t ideal = 0;

		if (!exec_tensor_has_type(&vals[k->node], &n->type)) {
			exec_tensor_free(&vals[k->node]);
			if (exec_tensor_alloc(&vals[k->node], &n->type, 0) != 0) {
				diag_error(d, n->loc, "cannot allocate the result of '%%%s'", n->name);
				return -1;
			}
		}
		/* prepacked consts: packed at the first run, again when the
		 * tensor's data moved or was said to change */
		for (int j = 0; j < k->f->ninsts; j++) {
			const PAccess *a = &k->acc[j];

			if (a->prepack && (!a->pk || a->pk_src != vals[a->node].data)) {
				tx_prepack(k, j, &vals[a->node]);
				p->packs++;
			}
		}
		memset(st, 0, sizeof *st);
		st->name = k->f->name;
		st->kind = ir_kernel_kinds[k->f->kind];
		st->result = n->name;
		memcpy(st->grid, k->f->grid, sizeof st->grid);
		st->programs = k->f->grid[0] * k->f->grid[1] * k->f->grid[2];
		/* each tensor once (ideal_reads: what its views reach) */
		{
			int64_t *per = xmalloc(sizeof(int64_t) * ((size_t)k->f->nargs + 1));

			ideal_reads(g, k->f, per);
			for (int j = 0; j < k->f->nargs; j++)
				ideal += per[j];
			free(per);
		}
		st->ideal_read = ideal;
		st->ideal_written = ir_type_numel(&n->type) * (int64_t)ir_dtype_size(n->type.dt);
		bad = run_kernel(p, k, vals, threads, st, &err);
		if (err) {
			/* an integer division by zero in a valid lane (tile_ops.c) */
			diag_error(d, n->loc, "'%%%s': integer division by zero in '%s' (its tile "
			    "'%%%s' of kernel '@%s')", n->name, ir_ops[err->gop].name,
			    k->f->vals[err->res].name, k->f->name);
			return -1;
		}
		if (bad) {
			/* a gather's index out of range (tile_copy.c) */
			diag_error(d, n->oploc.line ? n->oploc : n->loc, "'%%%s': %s", n->name, bad);
			return -1;
		}
	}
	return 0;
}

int64_t
exec_tile_packs(const TilePlan *p)
{
	return p ? p->packs : 0;
}

void
exec_tile_source_changed(TilePlan *p, int node)
{
	for (int q = 0; p && q < p->nk; q++)
		for (int j = 0; j < p->k[q].f->ninsts; j++)
			if (p->k[q].acc[j].prepack && p->k[q].acc[j].node == node)
				p->k[q].acc[j].pk_src = NULL;
}
