/*
 * native.c: the native engine's driver (native.h): generate, compile,
 * cache, load, run.
 *
 * The compiler is $CC, else cc, run through sh (so that CC="ccache gcc"
 * works); flags $AICM_CFLAGS, else -O3 -march=native -fPIC -shared.  The
 * cache is $XDG_CACHE_HOME/aicm, else ~/.cache/aicm: NAME-KEY.so, KEY a
 * 128-bit hash (two FNV-1a 64 with different seeds) of the C text, the
 * compiler's `--version`, the flags and the CPU (/proc/cpuinfo's model name
 * and flags lines), and beside it NAME-KEY.sum, the hash of the .so's
 * bytes.  A cached .so is used only when its bytes hash to its .sum and
 * dlopen takes it; otherwise (truncated, corrupt, half-written by a
 * crashed run) it is compiled again, never trusted.  Both files are
 * written to temporary names and renamed into place, the .sum after the
 * .so, so that concurrent runs are safe: at worst two of them compile
 * the same text and the last rename wins with identical bytes.
 *
 * No compiler (`$CC --version` fails to run): one clear error, exit 2.
 * A compiler error (the emitter wrote C it refuses: a bug) keeps the C
 * file and prints the compiler's output, exit 3.
 *
 * Running: the module's descriptor (NAME_aicm_*, emit_c.c) lists its
 * fields' graph nodes, its kernels' program counts and which are serial
 * (atomics).  Each kernel's programs are split into contiguous ranges, one
 * per thread (threads of this driver's own, started per kernel); a serial
 * kernel runs on one thread, in program order, so that its atomics
 * combine in the tile engine's order, unless its NAME_aicm_rows is set:
 * its atomics' targets depend on the grid row alone, so its ranges are
 * whole rows, and each element still sees its adds in program order.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emit_c.h"
#include "native.h"

typedef void KernelFn(int k, void *const *f, long lo, long hi);

struct NativeModel {
	const Graph *g;
	void *dl;
	KernelFn *kernel;
	int nfields;
	const int *field_node;
	int nk;
	const long *programs;
	const int *serial;
	const long *rows;            /* a serial kernel's programs per row that threads
	                              * may own whole, or 0 */
	int *bad;                    /* NAME_aicm_bad: a gather index out of range (1) or
	                              * a division by zero (2 + its instruction) */
	int64_t *gather;             /* NAME_aicm_gather: the bad gather index's program,
	                              * instruction, value and place (emit_c.c), or NULL
	                              * in a module with no gather */
	int *knode;                  /* per kernel: its tiled node */
	void **ptr;                  /* per field, filled per run */
};

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- hashing and the cache key ------------------------------------------ */

typedef struct Hash {
	uint64_t a, b;
} Hash;

static void
hash_add(Hash *h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++) {
		h->a = (h->a ^ s[i]) * UINT64_C(0x100000001b3);
		h->b = (h->b ^ s[i]) * UINT64_C(0x00000100000001b3) + UINT64_C(0x9e3779b97f4a7c15);
	}
	/* a separator, so that ("ab", "c") and ("a", "bc") differ */
	h->a = (h->a ^ 0xff) * UINT64_C(0x100000001b3);
	h->b = (h->b ^ 0xfe) * UINT64_C(0x00000100000001b3);
}

static Hash
hash_new(void)
{
	return (Hash){UINT64_C(0xcbf29ce484222325), UINT64_C(0x84222325cbf29ce4)};
}

/* The output of shell command cmd (stdout and stderr), malloc'd, and its
 * exit status in *st (-1: could not run). */
static char *
run_capture(const char *cmd, int *st)
{
	FILE *p = popen(cmd, "r");
	StrBuf b = {0};
	char buf[4096];
	size_t n;
	int rc;

	strbuf_puts(&b, "");
	if (!p) {
		*st = -1;
		return b.s;
	}
	while ((n = fread(buf, 1, sizeof buf - 1, p)) > 0) {
		buf[n] = '\0';
		strbuf_puts(&b, buf);
	}
	rc = pclose(p);
	*st = rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
	return b.s;
}

/* /proc/cpuinfo's first "model name" and "flags" lines (the CPU the code
 * is compiled for with -march=native). */
static void
cpu_id(Hash *h)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192];
	bool model = false, flags = false;

	if (!f)
		return;
	while (fgets(line, sizeof line, f) && !(model && flags)) {
		if (!model && !strncmp(line, "model name", 10)) {
			hash_add(h, line, strlen(line));
			model = true;
		} else if (!flags && (!strncmp(line, "flags", 5) || !strncmp(line, "Features", 8))) {
			hash_add(h, line, strlen(line));
			flags = true;
		}
	}
	fclose(f);
}

static int
mkdirs(const char *path)
{
	char tmp[4096];

	snprintf(tmp, sizeof tmp, "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(tmp, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int
cache_dir(char *buf, size_t n)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (x && *x)
		snprintf(buf, n, "%s/aicm", x);
	else if (home && *home)
		snprintf(buf, n, "%s/.cache/aicm", home);
	else
		snprintf(buf, n, "/tmp/aicm-cache-%ld", (long)getuid());
	return mkdirs(buf) == 0 && access(buf, W_OK) == 0 ? 0 : -1;
}

/* The bytes of file path hashed, or -1 if it cannot be read. */
static int
file_hash(const char *path, Hash *h)
{
	FILE *f = fopen(path, "rb");
	char buf[65536];
	size_t n;

	if (!f)
		return -1;
	*h = hash_new();
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		hash_add(h, buf, n);
	fclose(f);
	return 0;
}

/* Loads so_path if its bytes hash to its .sum file; NULL otherwise. */
static void *
try_cached(const char *so_path, const char *sum_path)
{
	FILE *f = fopen(sum_path, "r");
	char want[64] = "", got[64];
	Hash h;

	if (!f)
		return NULL;
	if (!fgets(want, sizeof want, f))
		want[0] = '\0';
	fclose(f);
	if (file_hash(so_path, &h) != 0)
		return NULL;
	snprintf(got, sizeof got, "%016" PRIx64 "%016" PRIx64 "\n", h.a, h.b);
	if (strcmp(want, got))
		return NULL;
	return dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
}

static void *
sym(void *dl, const char *name, const char *what)
{
	char s[512];

	snprintf(s, sizeof s, "%s_aicm_%s", name, what);
	return dlsym(dl, s);
}

NativeModel *
native_load(const Graph *g, const char *stem, const char *tool, Diag *d, NativeInfo *info)
{
	const char *cc = getenv("CC"), *flags = getenv("AICM_CFLAGS");
	FILE *err = d->out ? d->out : stderr;   /* libaicm's capture, else stderr */
	char *name, *ver, dir[2048], so[4096], sum[4096], tmp[4096], ctmp[4096], cfile[4096];
	char cmd[20000];
	StrBuf c = {0}, cc_cmd = {0};   /* the C, the command that compiles it */
	NativeModel *m = NULL;
	double t0 = now_ms();
	void *dl = NULL;
	Hash h = hash_new(), sh;
	int st;

	memset(info, 0, sizeof *info);
	if (!cc || !*cc)
		cc = "cc";
	if (!flags)
		flags = "-O3 -march=native -fPIC -shared";
	name = codegen_c_name(g, stem);
	if (codegen_c(g, name, NULL, &c, NULL, d) != 0) {
		info->status = 1;
		goto out;
	}
	info->gen_ms = now_ms() - t0;
	snprintf(cmd, sizeof cmd, "%s --version 2>&1", cc);
	ver = run_capture(cmd, &st);
	if (st != 0) {
		fprintf(err, "%s: error: the native engine needs a C compiler, and '%s' does not run "
		    "(set $CC to one)\n", tool, cc);
		free(ver);
		info->status = 2;
		goto out;
	}
	hash_add(&h, c.s, c.n);
	hash_add(&h, ver, strlen(ver));
	hash_add(&h, cc, strlen(cc));
	hash_add(&h, flags, strlen(flags));
	cpu_id(&h);
	free(ver);
	if (cache_dir(dir, sizeof dir) != 0) {
		fprintf(err, "%s: error: cannot make the cache folder '%s': %s\n", tool, dir,
		    strerror(errno));
		info->status = 2;
		goto out;
	}
	snprintf(so, sizeof so, "%s/%s-%016" PRIx64 "%016" PRIx64 ".so", dir, name, h.a, h.b);
	snprintf(sum, sizeof sum, "%s/%s-%016" PRIx64 "%016" PRIx64 ".sum", dir, name, h.a, h.b);
	dl = try_cached(so, sum);
	if (dl) {
		info->cache_hit = true;
	} else {
		/* compile to temporary names, then rename into place */
		char sums[64];

		snprintf(tmp, sizeof tmp, "%s/.tmp-%ld-%s.so", dir, (long)getpid(), name);
		snprintf(cfile, sizeof cfile, "%s/%s-%016" PRIx64 "%016" PRIx64 ".c", dir, name, h.a,
		    h.b);
		/* the C under a name of this process's own: two runs of the same
		 * graph at once share the key, and one's clean-up must not remove
		 * the file the other's compiler is about to read */
		snprintf(ctmp, sizeof ctmp, "%s/.tmp-%ld-%s.c", dir, (long)getpid(), name);
		if (aicm_write_file(ctmp, c.s, c.n) != 0) {
			fprintf(err, "%s: error: cannot write '%s': %s\n", tool, ctmp,
			    strerror(errno));
			info->status = 2;
			goto out;
		}
		strbuf_printf(&cc_cmd, "%s %s -o ", cc, flags);
		strbuf_shell_word(&cc_cmd, tmp, false);
		strbuf_putc(&cc_cmd, ' ');
		strbuf_shell_word(&cc_cmd, ctmp, false);
		strbuf_puts(&cc_cmd, " -lm 2>&1");
		t0 = now_ms();
		ver = run_capture(cc_cmd.s, &st);
		info->compile_ms = now_ms() - t0;
		if (st != 0) {
			/* kept under the key's name, for the bug report */
			if (rename(ctmp, cfile) != 0)
				snprintf(cfile, sizeof cfile, "%s", ctmp);
			fprintf(err, "%s: error: the C compiler refused the generated C (a bug in aicm's "
			    "C emitter; the C is kept in '%s'):\n%s$ %s\n%s", tool, cfile,
			    "", cc_cmd.s, ver);
			free(ver);
			unlink(tmp);
			info->status = 3;
			goto out;
		}
		free(ver);
		unlink(ctmp);
		/* This run loads what its own compiler wrote, before it goes into
		 * the cache.  Another run of the same key may rename its .so over
		 * this one's at any moment, and the two differ in their bytes (the
		 * C's file name, which is per process, is in the .so): loaded from
		 * the cache after the rename, it would fail its own .sum. */
		dl = dlopen(tmp, RTLD_NOW | RTLD_LOCAL);
		if (!dl) {
			const char *why = dlerror();

			fprintf(err, "%s: error: cannot load '%s': %s\n", tool, tmp,
			    why ? why : "dlopen failed");
			unlink(tmp);
			info->status = 2;
			goto out;
		}
		if (file_hash(tmp, &sh) != 0 || rename(tmp, so) != 0) {
			fprintf(err, "%s: error: cannot put '%s' into the cache: %s\n", tool, so,
			    strerror(errno));
			unlink(tmp);
			info->status = 2;
			goto out;
		}
		snprintf(sums, sizeof sums, "%016" PRIx64 "%016" PRIx64 "\n", sh.a, sh.b);
		if (aicm_write_file(sum, sums, strlen(sums)) != 0) {
			fprintf(err, "%s: error: cannot write '%s': %s\n", tool, sum, strerror(errno));
			info->status = 2;
			goto out;
		}
	}
	snprintf(info->so_path, sizeof info->so_path, "%s", so);
	m = xcalloc(1, sizeof *m);
	m->g = g;
	m->dl = dl;
	{
		/* POSIX's way from dlsym's object pointer to a function's */
		void *fp = sym(dl, name, "kernel");

		memcpy(&m->kernel, &fp, sizeof fp);
	}
	{
		const int *nf = sym(dl, name, "nfields"), *nk = sym(dl, name, "nkernels");

		m->field_node = sym(dl, name, "field_node");
		m->programs = sym(dl, name, "programs");
		m->serial = sym(dl, name, "serial");
		m->rows = sym(dl, name, "rows");
		m->bad = sym(dl, name, "bad");
		m->gather = sym(dl, name, "gather");
		if (!m->kernel || !nf || !nk || !m->field_node || !m->programs || !m->serial || !m->rows ||
		    !m->bad)
			AICM_BUG("'%s' lacks the descriptor of its module", so);
		m->nfields = *nf;
		m->nk = *nk;
	}
	m->knode = xcalloc((size_t)m->nk + 1, sizeof *m->knode);
	for (int i = 0, q = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == OP_TILED)
			m->knode[q++] = i;
	m->ptr = xcalloc((size_t)m->nfields + 1, sizeof *m->ptr);
	dl = NULL;
out:
	if (dl)
		dlclose(dl);
	free(c.s);
	free(cc_cmd.s);
	free(name);
	return m;
}

typedef struct Part {
	const NativeModel *m;
	int k;
	long lo, hi;
} Part;

static void *
part_run(void *p)
{
	Part *q = p;

	q->m->kernel(q->k, q->m->ptr, q->lo, q->hi);
	return NULL;
}

/* Kernel k's gather met an index out of range: the error names it, its
 * place in its indices and the axis it missed, in the tile engine's words
 * (tile_copy.c's gather_fail). */
static void
gather_error(const NativeModel *m, int k, const Tensor *vals, Diag *d)
{
	const Graph *g = m->g;
	const Node *nd = &g->nodes[m->knode[k]];
	const TileFn *f = nd->tile;
	const int64_t *r = m->gather;
	const TileInst *in, *ld;
	char where[IR_TYPE_STR];
	Type buf;
	const Type *t;

	if (!r || r[0] < 0 || !f || r[1] < 0 || r[1] >= f->ninsts ||
	    f->insts[r[1]].op != TO_LOAD_GATHER)
		AICM_BUG("native: '%%%s' flagged a gather with no record of it", nd->name);
	in = &f->insts[r[1]];
	t = tile_target_type(g, nd, in, &buf);
	ld = &f->insts[f->vals[in->in[0]].def];
	if (r[3] >= 0)
		exec_index_str(&vals[f->args[ld->arg]], r[3], where);
	else
		snprintf(where, sizeof where, "a lane");
	diag_error(d, nd->oploc.line ? nd->oploc : nd->loc, "'%%%s': 'gather' index %lld at %s of "
	    "its indices is out of range for axis %lld of size %lld", nd->name, (long long)r[2],
	    where, (long long)in->axis, (long long)t->dim[in->axis]);
}

/* Kernel k flagged a run-time error (NAME_aicm_bad: 1 a gather index out
 * of range, 2 + its instruction an integer division by zero in a valid
 * lane).  The generated code merged its threads' errors under a lock
 * (emit_c.c's divz_fail and gather_fail), keeping the tile engine's
 * (tile_run.c's run_kernel): a division by zero before a gather out of
 * range, of each the lowest program's, so the error is the same on any
 * number of threads. */
static void
kernel_error(const NativeModel *m, int k, const Tensor *vals, Diag *d)
{
	const Graph *g = m->g;
	const Node *nd = &g->nodes[m->knode[k]];
	const TileFn *f = nd->tile;
	int divz = *m->bad;

	if (divz == 1) {
		gather_error(m, k, vals, d);
		return;
	}
	if (!f || divz - 2 >= f->ninsts)
		AICM_BUG("native: '%%%s' flagged instruction %d of %d", nd->name, divz - 2,
		    f ? f->ninsts : 0);
	diag_error(d, nd->loc, "'%%%s': integer division by zero in '%s' (its tile '%%%s' of "
	    "kernel '@%s')", nd->name, ir_ops[f->insts[divz - 2].gop].name,
	    f->vals[f->insts[divz - 2].res].name, f->name);
}

int
native_run(NativeModel *m, Tensor *vals, int threads, Diag *d)
{
	const Graph *g = m->g;

	if (threads < 1)
		threads = 1;
	for (int i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];

		if (ir_ops[n->op].cls == OC_SOURCE && !exec_tensor_has_type(&vals[i], &n->type)) {
			diag_error(d, n->loc, "'%%%s' has no value of its type to run on", n->name);
			return -1;
		}
		if (n->op == OP_TILED && !exec_tensor_has_type(&vals[i], &n->type)) {
			exec_tensor_free(&vals[i]);
			if (exec_tensor_alloc(&vals[i], &n->type, 0) != 0) {
				diag_error(d, n->loc, "cannot allocate the result of '%%%s'", n->name);
				return -1;
			}
		}
	}
	for (int i = 0; i < m->nfields; i++) {
		int nd = m->field_node[i];

		/* a source returned as it is needs no copy here: the caller's
		 * tensor of that node is the output */
		m->ptr[i] = nd >= 0 ? vals[nd].data : NULL;
	}
	*m->bad = 0;
	if (m->gather)
		m->gather[0] = -1;
	for (int k = 0; k < m->nk; k++) {
		long n = m->programs[k];
		/* a serial kernel whose threads may own whole rows: split in
		 * units of a row's programs (emit_c.c's row_split) */
		long unit = m->serial[k] && m->rows[k] > 0 ? m->rows[k] : 1;
		int t = m->serial[k] && unit == 1 ? 1 : threads;

		if (m->serial[k])
			m->kernel(k, m->ptr, -1, -1);   /* the result's init= */
		if (t > n / unit)
			t = (int)(n / unit);
		if (t <= 1) {
			/* (no continue: the checks below are one thread's too) */
			m->kernel(k, m->ptr, 0, n);
		} else {
			Part *part = xcalloc((size_t)t, sizeof *part);
			pthread_t *th = xcalloc((size_t)t, sizeof *th);
			bool *started = xcalloc((size_t)t, sizeof *started);

			for (int q = 0; q < t; q++)
				part[q] = (Part){m, k, n / unit * q / t * unit, n / unit * (q + 1) / t * unit};
			for (int q = 1; q < t; q++)
				started[q] = pthread_create(&th[q], NULL, part_run, &part[q]) == 0;
			part_run(&part[0]);
			for (int q = 1; q < t; q++) {
				if (started[q])
					pthread_join(th[q], NULL);
				else
					part_run(&part[q]);
			}
			free(part);
			free(th);
			free(started);
		}
		if (*m->bad) {
			kernel_error(m, k, vals, d);
			return -1;
		}
	}
	return 0;
}

int
native_count_stats(TilePlan **plan, const Graph *g, const Tensor *vals, Diag *d)
{
	/* one more tensor than nodes, so that a graph of none still gets an
	 * allocation; the sources' tensors are borrowed (shallow copies, not
	 * freed), the results are the count's own */
	Tensor *tv = xcalloc((size_t)g->nnodes + 1, sizeof *tv);
	int rc = 0;

	for (int i = 0; i < g->nnodes; i++)
		if (ir_ops[g->nodes[i].op].cls == OC_SOURCE)
			tv[i] = vals[i];
	if ((!*plan && !(*plan = exec_tile_compile(g, d))) || exec_tile_run(*plan, tv, 1, d) != 0)
		rc = -1;
	for (int i = 0; i < g->nnodes; i++)
		if (ir_ops[g->nodes[i].op].cls != OC_SOURCE)
			exec_tensor_free(&tv[i]);
	free(tv);
	return rc;
}

void
native_free(NativeModel *m)
{
	if (!m)
		return;
	if (m->dl)
		dlclose(m->dl);
	free(m->knode);
	free(m->ptr);
	free(m);
}
