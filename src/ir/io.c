/*
 * io.c: bounded whole-file reads and all-or-nothing writes.
 *
 * Reading stops at a limit plus one byte, whatever the input is (a regular
 * file, a pipe, stdin, /dev/zero): more than the limit is EFBIG, and
 * neither the reading nor the buffer ever goes past limit + 1 bytes.  A
 * regular file's size only sizes the first buffer, never beyond the limit,
 * and a size over the limit is refused before anything is read.
 *
 * Writing (docs/reliability.md, "What the writers promise") depends on what
 * is at the target:
 * - nothing, or a regular file: the bytes go to a temporary file created
 *   in the target's folder with O_CREAT|O_EXCL|O_NOFOLLOW under a random
 *   name, .NAME.aicm-tmp.XXXXXX, renamed over the target only when all of
 *   it is written and closed.  A new file gets 0666 less the umask (the
 *   kernel applies it, and a default ACL, as for any create); a replaced
 *   one keeps its mode and, where we may, its owner.
 * - a device, FIFO or socket: written directly, as cp and compilers do;
 *   replacing /dev/null with a regular file is what this is for.
 * - a symbolic link: followed, as cp and gcc -o do, and the file it points
 *   to is replaced atomically as above (the link stays a link).  A link
 *   to something that is not a regular file is written directly; a
 *   dangling link is refused (ENOENT), as GNU cp refuses to create through
 *   one; a link under /dev or /proc (/dev/stdout, /dev/fd/N) names an open
 *   file and is appended to in place.  A link in a sticky world-writable
 *   folder (/tmp) owned by neither us nor the folder's owner is refused
 *   (EACCES), the rule of Linux's fs.protected_symlinks, so that a link
 *   planted in /tmp never redirects a write whatever the sysctl says.
 * - AICM_OUT_NOFOLLOW (the default crash reproducer in the shared $TMPDIR)
 *   takes only nothing or a regular file of ours: a link is ELOOP, another
 *   user's file EPERM, anything else EEXIST.
 * A temporary file is removed on every failure, on exit() (AICM_BUG, out
 * of memory) and on SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE and SIGXFSZ
 * when those have their default action: a handler unlinks the open
 * temporary files of this process and re-raises the signal.  Only SIGKILL
 * (or a crash) can leave one, named as above, beside its target; 'make
 * clean' removes those under the source tree.
 */
#define _DEFAULT_SOURCE          /* getentropy, realpath, fchown */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"

/* ---- reading --------------------------------------------------------- */

int
aicm_read_file_max(const char *path, size_t max, char **buf, size_t *len)
{
	bool std = strcmp(path, "-") == 0;
	int fd = std ? 0 : open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	size_t cap = 1 << 16, n = 0;
	struct stat st;
	char *p;
	int e = 0;

	if (fd < 0)
		return -1;
	if (max > SIZE_MAX - 2)
		max = SIZE_MAX - 2;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if ((uintmax_t)st.st_size > max) {
			e = EFBIG;            /* known before reading a byte */
			goto fail_fd;
		}
		if (st.st_size > 0)
			cap = (size_t)st.st_size + 1;   /* one read, and one to see the end */
	}
	if (cap > max + 1)
		cap = max + 1;
	p = xmalloc(cap + 1);
	for (;;) {
		ssize_t r;

		if (n == cap) {
			if (cap == max + 1) {
				e = EFBIG;    /* limit + 1 bytes read: too large */
				break;
			}
			cap = cap > (max + 1) / 2 ? max + 1 : 2 * cap;
			p = xrealloc(p, cap + 1);
		}
		r = read(fd, p + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (e) {
		free(p);
		goto fail_fd;
	}
	if (!std)
		close(fd);
	p[n] = '\0';
	*buf = p;
	*len = n;
	return 0;
fail_fd:
	if (!std)
		close(fd);
	errno = e;
	return -1;
}

int
aicm_read_file(const char *path, char **buf, size_t *len)
{
	return aicm_read_file_max(path, AICM_READ_MAX, buf, len);
}

/* "1 GiB (1073741824 bytes)", or "100 bytes" for a limit that is no
 * whole number of KiB. */
static void
size_str(char *buf, size_t n, size_t v)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
	int u = -1;
	size_t w = v;

	while (u < 3 && w >= 1024 && w % 1024 == 0) {
		w /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, n, "%zu bytes", v);
	else
		snprintf(buf, n, "%zu %s (%zu bytes)", w, unit[u], v);
}

const char *
aicm_read_strerror(int e, size_t max, char *buf, size_t n)
{
	char s[64];

	if (e != EFBIG)
		return strerror(e);
	size_str(s, sizeof s, max);
	snprintf(buf, n, "larger than the limit of %s", s);
	return buf;
}

/* ---- temporary files and their cleanup ------------------------------- */

/* The temporary files open in this process, for the signal handler and
 * exit: fixed storage, so that the handler reads no heap, and a pid, so
 * that a forked child (Check's tests) does not remove its parent's files.
 * A write past the table's size still works; its file is only not removed
 * on a signal. */
enum { NSLOT = 64, SLOT_PATH = 4096 };
static struct {
	volatile sig_atomic_t used;
	pid_t pid;
	char path[SLOT_PATH];
} slots[NSLOT];

/* Threads of one process (two libaicm contexts, each with an autotune
 * cache) may open temporary files at once: the table and the atexit
 * registration are claimed under this lock.  The signal handler takes no
 * lock; it reads 'used', which is set last. */
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

static const int cleanup_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ};

static void
unlink_slots(void)
{
	pid_t me = getpid();

	for (int i = 0; i < NSLOT; i++)
		if (slots[i].used && slots[i].pid == me)
			unlink(slots[i].path);
}

/* Async-signal-safe: unlink, then die of the same signal (SA_RESETHAND
 * restored the default action; the raised signal is delivered when the
 * handler returns). */
static void
on_signal(int sig)
{
	int e = errno;

	unlink_slots();
	raise(sig);
	errno = e;
}

/* Each time a temporary file opens, so that a signal whose action went
 * back to the default since (a forked child) is covered again. */
static void
install_cleanup(void)
{
	static bool done;
	struct sigaction sa, old;

	if (!done)
		atexit(unlink_slots);
	done = true;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof cleanup_sigs / sizeof cleanup_sigs[0]; i++) {
		/* an ignored or handled signal is the caller's business */
		if (sigaction(cleanup_sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO))
			sigaction(cleanup_sigs[i], &sa, NULL);
	}
}

static int
register_tmp(const char *path)
{
	int slot = -1;

	if (strlen(path) >= SLOT_PATH)
		return -1;
	pthread_mutex_lock(&slots_lock);
	install_cleanup();
	for (int i = 0; i < NSLOT; i++)
		if (!slots[i].used) {
			memcpy(slots[i].path, path, strlen(path) + 1);
			slots[i].pid = getpid();
			atomic_signal_fence(memory_order_seq_cst);
			slots[i].used = 1;
			slot = i;
			break;
		}
	pthread_mutex_unlock(&slots_lock);
	return slot;
}

static void
unregister_tmp(int slot)
{
	if (slot >= 0) {
		pthread_mutex_lock(&slots_lock);
		slots[slot].used = 0;
		pthread_mutex_unlock(&slots_lock);
	}
}

const char *aicm_io_test_tag;

/* Six characters of [A-Za-z0-9], from the kernel's entropy when it gives
 * some; O_EXCL makes a guessed name harmless anyway (it only costs a retry). */
static void
random_tag(char *out)
{
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	static unsigned long counter;
	unsigned char r[6];

	if (aicm_io_test_tag) {
		snprintf(out, 7, "%s", aicm_io_test_tag);
		aicm_io_test_tag = NULL;     /* the first try only */
		return;
	}
	if (getentropy(r, sizeof r) != 0) {
		struct timespec ts;
		unsigned long x;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = (unsigned long)ts.tv_nsec * 2654435761u ^ (unsigned long)getpid() << 16 ^
		    __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 40503u;
		for (int i = 0; i < 6; i++, x = x * 6364136223846793005u + 1442695040888963407u)
			r[i] = (unsigned char)(x >> 33);
	}
	for (int i = 0; i < 6; i++)
		out[i] = al[r[i] % 62];
	out[6] = '\0';
}

char *
aicm_dir_of(const char *path)
{
	const char *slash;
	char *r;

	if (!path || !strcmp(path, "-") || !(slash = strrchr(path, '/')))
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	r = xstrdup(path);
	r[slash - path] = '\0';
	return r;
}

/* ---- writing --------------------------------------------------------- */

/* Linux's protected_symlinks rule: a link in a sticky world-writable
 * folder is followed only when we or the folder's owner own it. */
static bool
foreign_link_in_sticky_dir(const char *path, const struct stat *lst)
{
	char *dir = aicm_dir_of(path);
	struct stat ds;
	bool bad = false;

	if (stat(dir, &ds) == 0 && (ds.st_mode & S_ISVTX) && (ds.st_mode & S_IWOTH) &&
	    lst->st_uid != geteuid() && lst->st_uid != ds.st_uid)
		bad = true;
	free(dir);
	return bad;
}

/* Opens a fresh temporary file beside target; old is the file it will
 * replace (its mode and owner are kept), NULL for a new one. */
static int
open_tmp(AicmOut *o, const char *target, const struct stat *old)
{
	const char *sl = strrchr(target, '/');
	const char *base = sl ? sl + 1 : target;
	size_t dlen = (size_t)(base - target), blen = strlen(base);
	size_t tlen;
	char *tmp, tag[7];
	int fd = -1, e;

	if (blen > 200)
		blen = 200;           /* .NAME.aicm-tmp.XXXXXX stays within NAME_MAX */
	tlen = dlen + blen + 32;
	tmp = xmalloc(tlen);
	for (int tries = 0; tries < 100; tries++) {
		random_tag(tag);
		snprintf(tmp, tlen, "%.*s.%.*s.aicm-tmp.%s", (int)dlen, target, (int)blen, base, tag);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
		    old ? 0600 : 0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		free(tmp);
		return -1;
	}
	o->slot = register_tmp(tmp);
	if (old) {
		/* best effort, as editors do: root keeps the owner, others
		 * may keep the group */
		if (old->st_uid != geteuid() || old->st_gid != getegid())
			if (fchown(fd, old->st_uid, old->st_gid) != 0 && fchown(fd, (uid_t)-1,
			    old->st_gid) != 0) {
				/* the file is ours; that is all we can do */
			}
		(void)fchmod(fd, old->st_mode & 0777);
	}
	o->f = fdopen(fd, "wb");
	if (!o->f) {
		e = errno;
		close(fd);
		unlink(tmp);
		unregister_tmp(o->slot);
		free(tmp);
		errno = e;
		return -1;
	}
	o->tmp = tmp;
	o->target = xstrdup(target);
	return 0;
}

/* Opens an existing non-regular target (or one named through /dev or
 * /proc) for writing in place. */
static int
open_direct(AicmOut *o, const char *path, bool follow, bool append)
{
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW) |
	    (append ? O_APPEND : 0));
	struct stat st;

	if (fd < 0)
		return -1;
	if (!append && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		/* it became a regular file since lstat: writing over it in
		 * place would leave old bytes behind; let the caller retry */
		close(fd);
		errno = EAGAIN;
		return -1;
	}
	o->f = fdopen(fd, "wb");
	if (!o->f) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	o->target = xstrdup(path);
	return 0;
}

static bool
under_dev_or_proc(const char *path)
{
	return !strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6);
}

static int
out_open(AicmOut *o, const char *path, int flags)
{
	struct stat st, tst;
	char *real;
	int r;

	memset(o, 0, sizeof *o);
	o->slot = -1;
	if (!strcmp(path, "-")) {
		o->f = stdout;
		o->is_stdout = true;
		return 0;
	}
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? open_tmp(o, path, NULL) : -1;
	if (S_ISREG(st.st_mode)) {
		if ((flags & AICM_OUT_NOFOLLOW) && st.st_uid != geteuid()) {
			errno = EPERM;    /* root would hand it to its owner */
			return -1;
		}
		return open_tmp(o, path, &st);
	}
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (!S_ISLNK(st.st_mode)) {
		if (flags & AICM_OUT_NOFOLLOW) {
			errno = EEXIST;
			return -1;
		}
		return open_direct(o, path, false, false);
	}
	if (flags & AICM_OUT_NOFOLLOW) {
		errno = ELOOP;
		return -1;
	}
	if (foreign_link_in_sticky_dir(path, &st)) {
		errno = EACCES;
		return -1;
	}
	if (stat(path, &tst) != 0)
		return -1;                /* dangling: not created through */
	if (S_ISDIR(tst.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (!S_ISREG(tst.st_mode))
		return open_direct(o, path, true, false);
	if (under_dev_or_proc(path))
		return open_direct(o, path, true, true);
	if (!(real = realpath(path, NULL)))
		return -1;
	r = open_tmp(o, real, &tst);
	free(real);
	return r;
}

int
aicm_out_open(AicmOut *o, const char *path, int flags)
{
	int r, tries = 0;

	/* EAGAIN: a target that was not a regular file became one between
	 * lstat and open; look again */
	while ((r = out_open(o, path, flags)) != 0 && errno == EAGAIN && ++tries < 3)
		;
	return r;
}

static void
out_free(AicmOut *o)
{
	free(o->tmp);
	free(o->target);
	o->tmp = o->target = NULL;
	o->f = NULL;
}

int
aicm_out_commit(AicmOut *o)
{
	int e = 0;

	if (!o->f)
		return 0;
	if (o->is_stdout) {
		o->f = NULL;
		return fflush(stdout) != 0 || ferror(stdout) ? -1 : 0;
	}
	errno = 0;
	if (fflush(o->f) != 0 || ferror(o->f))
		e = errno ? errno : EIO;
	if (fclose(o->f) != 0 && !e)
		e = errno ? errno : EIO;
	if (o->tmp && !e && rename(o->tmp, o->target) != 0)
		e = errno;
	if (o->tmp && e)
		unlink(o->tmp);
	unregister_tmp(o->slot);
	out_free(o);
	errno = e;
	return e ? -1 : 0;
}

void
aicm_out_abort(AicmOut *o)
{
	int e = errno;

	if (!o->f)
		return;
	if (!o->is_stdout) {
		fclose(o->f);
		if (o->tmp)
			unlink(o->tmp);
		unregister_tmp(o->slot);
	}
	out_free(o);
	errno = e;
}

int
aicm_write_file_flags(const char *path, const char *data, size_t len, int flags)
{
	AicmOut o;

	if (aicm_out_open(&o, path, flags) != 0)
		return -1;
	if (fwrite(data, 1, len, o.f) != len) {
		int e = errno ? errno : EIO;

		aicm_out_abort(&o);
		errno = e;
		return -1;
	}
	return aicm_out_commit(&o);
}

int
aicm_write_file(const char *path, const char *data, size_t len)
{
	return aicm_write_file_flags(path, data, len, 0);
}

/* ---- .npy files ------------------------------------------------------ */

/* The little-endian descr numpy writes for each element type; the reader
 * (runtime/npy.c) takes these and their big-endian twins. */
const char *
aicm_npy_descr(DType dt)
{
	static const char *const descr[DT_COUNT] = {
		[DT_F64] = "<f8", [DT_F32] = "<f4", [DT_I32] = "<i4", [DT_I64] = "<i8",
		[DT_BOOL] = "|b1",
	};

	if ((unsigned)dt >= DT_COUNT || !descr[dt])
		AICM_BUG("no .npy descr for element type %d", (int)dt);
	return descr[dt];
}

/* Version 1.0, C order, the header padded with spaces and a newline to a
 * multiple of 64 bytes with its 10-byte preamble, as numpy.save writes it;
 * through the one writer above, so a file is whole or absent. */
int
aicm_npy_write(const char *path, const Type *ty, const void *data, char *err, size_t errn)
{
	char hdr[256], shape[IR_TYPE_STR];
	int64_t numel = ir_type_numel(ty);
	size_t n, bytes = (size_t)numel * ir_dtype_size(ty->dt);
	unsigned char pre[10];
	AicmOut o;

	n = (size_t)snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, "
	    "'shape': %s, }", aicm_npy_descr(ty->dt), ir_shape_str(ty, shape));
	while ((10 + n + 1) % 64 != 0)
		hdr[n++] = ' ';
	hdr[n++] = '\n';
	memcpy(pre, "\x93NUMPY\x01\x00", 8);
	pre[8] = (unsigned char)(n & 0xff);
	pre[9] = (unsigned char)(n >> 8);
	if (aicm_out_open(&o, path, 0) != 0) {
		snprintf(err, errn, "cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fwrite(pre, 1, 10, o.f) != 10 || fwrite(hdr, 1, n, o.f) != n ||
	    (bytes && fwrite(data, 1, bytes, o.f) != bytes)) {
		int e = errno ? errno : EIO;

		aicm_out_abort(&o);
		snprintf(err, errn, "cannot write '%s': %s", path, strerror(e));
		return -1;
	}
	if (aicm_out_commit(&o) != 0) {
		snprintf(err, errn, "cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
