/*
 * check_io.c: io.c's bounded reads and its one writer.
 *
 * Reads: a limit is refused with EFBIG having read at most limit + 1 bytes,
 * from a regular file (refused from its size), a pipe (the bytes left in it
 * show how far the reader went) and /dev/zero.  Writes: what lies at the
 * target decides how it is written (a FIFO stays a FIFO, a symlink stays a
 * symlink and its file is replaced, a dangling or foreign one is refused),
 * a new file's mode honours the umask and a replaced one keeps its mode,
 * planted links at temporary names are never followed, and a temporary
 * file is removed on failure, exit and the signals, and left, named by its
 * documented pattern, only by SIGKILL.  Every case works in a fresh folder
 * under /tmp and never touches a real device.
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_aicm.h"
#include "exec.h"

static char dir[64];

static void
setup(void)
{
	ck_tmpdir(dir, sizeof dir, "io");
}

static void
teardown(void)
{
	ck_tmpdir_remove(dir);
}

static const char *
at(const char *name)
{
	static char path[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
	return path[k];
}

static void
put(const char *name, const char *text)
{
	FILE *f = fopen(at(name), "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* How many entries of dir hold ".aicm-tmp." (temporary files). */
static int
count_tmp(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".aicm-tmp."))
			n++;
	closedir(d);
	return n;
}

/* ---- reading --------------------------------------------------------- */

START_TEST(test_io_read_limit_file)
{
	char *buf, msg[128];
	size_t len;

	put("f", "0123456789");
	ck_assert_int_eq(aicm_read_file_max(at("f"), 10, &buf, &len), 0);
	ck_assert_uint_eq(len, 10);
	ck_assert_str_eq(buf, "0123456789");
	free(buf);
	errno = 0;
	ck_assert_int_eq(aicm_read_file_max(at("f"), 9, &buf, &len), -1);
	ck_assert_int_eq(errno, EFBIG);
	ck_assert_str_eq(aicm_read_strerror(EFBIG, 9, msg, sizeof msg),
	    "larger than the limit of 9 bytes");
	ck_assert_str_eq(aicm_read_strerror(EFBIG, AICM_READ_MAX, msg, sizeof msg),
	    "larger than the limit of 1 GiB (1073741824 bytes)");
	ck_assert_str_eq(aicm_read_strerror(ENOENT, 9, msg, sizeof msg), strerror(ENOENT));
	/* empty, and a missing file keeps its errno */
	put("empty", "");
	ck_assert_int_eq(aicm_read_file_max(at("empty"), 0, &buf, &len), 0);
	ck_assert_uint_eq(len, 0);
	free(buf);
	ck_assert_int_eq(aicm_read_file(at("none"), &buf, &len), -1);
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

/* A 40 GB sparse file is refused from its size: nothing read, nothing
 * allocated (the default limit, 1 GiB). */
START_TEST(test_io_read_limit_sparse)
{
	char *buf;
	size_t len;
	int fd = open(at("sparse"), O_WRONLY | O_CREAT, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)40 << 30), 0);
	close(fd);
	errno = 0;
	ck_assert_int_eq(aicm_read_file(at("sparse"), &buf, &len), -1);
	ck_assert_int_eq(errno, EFBIG);
}
END_TEST

/* A pipe that never ends: the reader takes exactly limit + 1 bytes of it
 * (the next byte in the pipe says where it stopped) and refuses. */
START_TEST(test_io_read_limit_pipe)
{
	enum { MAX = 100000 };
	int p[2], status;
	pid_t pid;
	char path[64], *buf;
	unsigned char next;
	size_t len;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		unsigned char b[4096];
		size_t k = 0;

		signal(SIGPIPE, SIG_DFL);
		close(p[0]);
		for (;;) {
			for (size_t i = 0; i < sizeof b; i++, k++)
				b[i] = (unsigned char)(k % 251);
			if (write(p[1], b, sizeof b) < 0)
				_exit(0);
		}
	}
	close(p[1]);
	snprintf(path, sizeof path, "/proc/self/fd/%d", p[0]);
	errno = 0;
	ck_assert_int_eq(aicm_read_file_max(path, MAX, &buf, &len), -1);
	ck_assert_int_eq(errno, EFBIG);
	ck_assert_int_eq(read(p[0], &next, 1), 1);
	ck_assert_int_eq(next, (MAX + 1) % 251);
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
}
END_TEST

/* /dev/zero: the limit, not the memory, ends the read. */
START_TEST(test_io_read_limit_devzero)
{
	char *buf;
	size_t len;

	errno = 0;
	ck_assert_int_eq(aicm_read_file_max("/dev/zero", 1 << 20, &buf, &len), -1);
	ck_assert_int_eq(errno, EFBIG);
}
END_TEST

/* The .npy reader: a FIFO is refused at once (it used to wait in open()
 * for a writer); a sparse file whose header claims 40 GB, which its size
 * agrees with, is refused by --max-bytes before anything is allocated. */
START_TEST(test_io_npy_read_limits)
{
	Type ty = {.rank = 1, .dt = DT_F64, .dim = {5000000000}};
	char err[EXEC_ERR_MAX], hdr[128];
	Tensor t;
	size_t n;
	FILE *f;

	ck_assert_int_eq(mkfifo(at("fifo.npy"), 0600), 0);
	ck_assert_int_eq(exec_npy_read(at("fifo.npy"), NULL, NULL, 0, &t, err), -2);
	ck_assert_ptr_nonnull(strstr(err, "fifo.npy': not a regular file"));

	n = (size_t)snprintf(hdr, sizeof hdr, "{'descr': '<f8', 'fortran_order': False, "
	    "'shape': (5000000000,), }");
	while ((10 + n + 1) % 64)
		hdr[n++] = ' ';
	hdr[n++] = '\n';
	ck_assert_ptr_nonnull(f = fopen(at("huge.npy"), "wb"));
	fwrite("\x93NUMPY\x01\x00", 1, 8, f);
	fputc((int)(n & 0xff), f);
	fputc((int)(n >> 8), f);
	fwrite(hdr, 1, n, f);
	ck_assert_int_eq(ftruncate(fileno(f), (off_t)(10 + n) + (off_t)40000000000), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(exec_npy_read(at("huge.npy"), &ty, "x", EXEC_DEFAULT_MAX_BYTES, &t, err),
	    -1);
	ck_assert_ptr_null(t.data);
	ck_assert_msg(strstr(err, "huge.npy' holds (5000000000,) f64, 40000000000 bytes, more "
	    "than --max-bytes=4294967296"), "%s", err);
}
END_TEST

/* ---- writing: what lies at the target -------------------------------- */

START_TEST(test_io_write_new_and_replace_mode)
{
	mode_t old = umask(027);
	struct stat st, st2;
	char *s;

	ck_assert_int_eq(aicm_write_file(at("new"), "a\n", 2), 0);
	ck_assert_int_eq(stat(at("new"), &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0640);           /* 0666 & ~027 */
	umask(077);
	ck_assert_int_eq(chmod(at("new"), 0664), 0);
	ck_assert_int_eq(aicm_write_file(at("new"), "b\n", 2), 0);
	ck_assert_int_eq(stat(at("new"), &st2), 0);
	ck_assert_int_eq(st2.st_mode & 0777, 0664);          /* kept, umask aside */
	ck_assert(st2.st_ino != st.st_ino);                  /* replaced, not rewritten */
	s = ck_slurp(at("new"));
	ck_assert_str_eq(s, "b\n");
	free(s);
	umask(old);
	ck_assert_int_eq(count_tmp(), 0);
	errno = 0;
	ck_assert_int_eq(aicm_write_file(dir, "x", 1), -1);
	ck_assert_int_eq(errno, EISDIR);
	ck_assert_int_eq(count_tmp(), 0);
}
END_TEST

/* A FIFO is written into, and is still a FIFO afterwards (the old writer
 * renamed a regular file over it, as over /dev/null). */
START_TEST(test_io_write_fifo)
{
	struct stat st;
	int status;
	pid_t pid;

	ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *buf;
		size_t len;

		_exit(aicm_read_file(at("fifo"), &buf, &len) == 0 && len == 6 &&
		    !memcmp(buf, "hello\n", 6) ? 0 : 1);
	}
	ck_assert_int_eq(aicm_write_file(at("fifo"), "hello\n", 6), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(lstat(at("fifo"), &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	ck_assert_int_eq(count_tmp(), 0);
}
END_TEST

/* The .npy writer goes through the same writer: a FIFO gets the bytes. */
START_TEST(test_io_npy_write_fifo)
{
	Type ty = {.rank = 1, .dt = DT_F64, .dim = {3}};
	char err[EXEC_ERR_MAX];
	struct stat st;
	Tensor t;
	int status;
	pid_t pid;

	ck_assert_int_eq(mkfifo(at("out.npy"), 0600), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *buf;
		size_t len;

		/* a header padded to a multiple of 64 bytes, and 3 doubles */
		_exit(aicm_read_file(at("out.npy"), &buf, &len) == 0 && len > 24 &&
		    (len - 24) % 64 == 0 && !memcmp(buf, "\x93NUMPY", 6) ? 0 : 1);
	}
	ck_assert_int_eq(exec_tensor_alloc(&t, &ty, 0), 0);
	exec_fill_splat(&t, 1.5);
	ck_assert_msg(exec_npy_write(at("out.npy"), &t, err) == 0, "%s", err);
	exec_tensor_free(&t);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(lstat(at("out.npy"), &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
}
END_TEST

/* A symlink to a regular file is followed, as cp and gcc -o do: the link
 * stays, the file it points to is replaced whole.  A dangling link is not
 * written through. */
START_TEST(test_io_write_symlink)
{
	struct stat st;
	char *s;

	put("real", "old\n");
	ck_assert_int_eq(symlink("real", at("link")), 0);
	ck_assert_int_eq(aicm_write_file(at("link"), "new\n", 4), 0);
	ck_assert_int_eq(lstat(at("link"), &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	s = ck_slurp(at("real"));
	ck_assert_str_eq(s, "new\n");
	free(s);
	ck_assert_int_eq(count_tmp(), 0);

	ck_assert_int_eq(symlink("nowhere", at("dangling")), 0);
	errno = 0;
	ck_assert_int_eq(aicm_write_file(at("dangling"), "x", 1), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(lstat(at("nowhere"), &st), -1);
	ck_assert_int_eq(count_tmp(), 0);
}
END_TEST

/* AICM_OUT_NOFOLLOW (the default crash reproducer in $TMPDIR): a link or a
 * FIFO at the name is refused, a regular file replaced. */
START_TEST(test_io_write_nofollow)
{
	char *s;

	put("victim", "keep\n");
	ck_assert_int_eq(symlink("victim", at("link")), 0);
	errno = 0;
	ck_assert_int_eq(aicm_write_file_flags(at("link"), "x\n", 2, AICM_OUT_NOFOLLOW), -1);
	ck_assert_int_eq(errno, ELOOP);
	s = ck_slurp(at("victim"));
	ck_assert_str_eq(s, "keep\n");
	free(s);
	ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
	errno = 0;
	ck_assert_int_eq(aicm_write_file_flags(at("fifo"), "x\n", 2, AICM_OUT_NOFOLLOW), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(aicm_write_file_flags(at("victim"), "x\n", 2, AICM_OUT_NOFOLLOW), 0);
	s = ck_slurp(at("victim"));
	ck_assert_str_eq(s, "x\n");
	free(s);
	ck_assert_int_eq(count_tmp(), 0);
	/* another user's file there is not replaced (root could, and would
	 * hand the new file to that user) */
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(at("victim"), 65534, 65534), 0);
		errno = 0;
		ck_assert_int_eq(aicm_write_file_flags(at("victim"), "y\n", 2, AICM_OUT_NOFOLLOW),
		    -1);
		ck_assert_int_eq(errno, EPERM);
		s = ck_slurp(at("victim"));
		ck_assert_str_eq(s, "x\n");
		free(s);
	}
}
END_TEST

/* In a sticky world-writable folder (as /tmp) a link owned by someone
 * else is not followed (Linux's protected_symlinks rule, kept whatever the
 * sysctl says).  Needs root to make a link owned by another user. */
START_TEST(test_io_write_sticky_foreign_link)
{
	char *s;

	if (geteuid() != 0)
		return;
	ck_assert_int_eq(chmod(dir, 01777), 0);
	put("victim", "keep\n");
	ck_assert_int_eq(symlink("victim", at("planted")), 0);
	ck_assert_int_eq(lchown(at("planted"), 65534, 65534), 0);
	errno = 0;
	ck_assert_int_eq(aicm_write_file(at("planted"), "x\n", 2), -1);
	ck_assert_int_eq(errno, EACCES);
	s = ck_slurp(at("victim"));
	ck_assert_str_eq(s, "keep\n");
	free(s);
	/* our own link there is followed */
	ck_assert_int_eq(symlink("victim", at("mine")), 0);
	ck_assert_int_eq(aicm_write_file(at("mine"), "y\n", 2), 0);
	s = ck_slurp(at("victim"));
	ck_assert_str_eq(s, "y\n");
	free(s);
}
END_TEST

/* Links planted at the temporary names: at the old predictable
 * PATH.tmpPID, and at the new pattern's first try (forced with the test
 * tag).  Neither is followed: the victim keeps its bytes, the planted
 * link stays, the output is written. */
START_TEST(test_io_write_planted_tmp)
{
	char old[256], *s;
	struct stat st;

	put("victim", "keep\n");
	snprintf(old, sizeof old, "%s.tmp%ld", at("out"), (long)getpid());
	ck_assert_int_eq(symlink(at("victim"), old), 0);
	ck_assert_int_eq(symlink(at("victim"), at(".out.aicm-tmp.AAAAAA")), 0);
	aicm_io_test_tag = "AAAAAA";
	ck_assert_int_eq(aicm_write_file(at("out"), "out\n", 4), 0);
	s = ck_slurp(at("victim"));
	ck_assert_str_eq(s, "keep\n");
	free(s);
	ck_assert_ptr_null(aicm_io_test_tag);              /* the tag was tried */
	s = ck_slurp(at("out"));
	ck_assert_str_eq(s, "out\n");
	free(s);
	ck_assert_int_eq(lstat(at(".out.aicm-tmp.AAAAAA"), &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(lstat(at("out"), &st), 0);
	ck_assert(S_ISREG(st.st_mode));
}
END_TEST

/* ---- writing: failures and interruptions ----------------------------- */

/* A write that fails half way (the file size limit, SIGXFSZ ignored so
 * that write() returns EFBIG) leaves the old file and no temporary file;
 * so does an abort.  In a child: the limit must not outlive the test. */
START_TEST(test_io_write_fails_cleanly)
{
	int status;
	pid_t pid;
	char *s;

	put("out", "old\n");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		static char big[1 << 16];
		struct rlimit rl = {4096, 4096};
		AicmOut o;
		int r;

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(10);
		memset(big, 'x', sizeof big);
		errno = 0;
		r = aicm_write_file(at("out"), big, sizeof big);
		if (r != -1 || errno != EFBIG || count_tmp() != 0)
			_exit(11);
		if (aicm_out_open(&o, at("out"), 0) != 0 || count_tmp() != 1)
			_exit(12);
		fputs("half", o.f);
		aicm_out_abort(&o);
		_exit(count_tmp() == 0 ? 0 : 13);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	s = ck_slurp(at("out"));
	ck_assert_str_eq(s, "old\n");
	free(s);
}
END_TEST

/* A child opens an output, writes half of it and ends by sig (0: exit(3),
 * as AICM_BUG does); returns how it ended. */
static int
die_mid_write(int sig)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		AicmOut o;

		/* Check handles SIGINT and SIGTERM (it kills the process
		 * group); a tool has the default actions */
		if (sig)
			signal(sig, SIG_DFL);
		if (aicm_out_open(&o, at("out"), 0) != 0)
			_exit(10);
		fputs("half", o.f);
		fflush(o.f);
		if (sig)
			kill(getpid(), sig);
		else
			exit(3);
		_exit(11);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

START_TEST(test_io_write_interrupted)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ};
	int status;
	char *s;

	put("out", "old\n");
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		status = die_mid_write(sigs[i]);
		ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == sigs[i],
		    "signal %d: status %#x", sigs[i], status);
		ck_assert_msg(count_tmp() == 0, "signal %d left a temporary file", sigs[i]);
	}
	status = die_mid_write(0);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	ck_assert_int_eq(count_tmp(), 0);
	s = ck_slurp(at("out"));
	ck_assert_str_eq(s, "old\n");
	free(s);
}
END_TEST

/* SIGKILL cannot be caught: the temporary file stays, named by the
 * documented pattern .NAME.aicm-tmp.XXXXXX beside its target, and the
 * target is untouched. */
START_TEST(test_io_write_killed)
{
	DIR *d;
	struct dirent *e;
	int status = die_mid_write(SIGKILL), found = 0;

	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ck_assert_ptr_nonnull(d = opendir(dir));
	while ((e = readdir(d))) {
		if (e->d_name[0] != '.' || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		ck_assert_uint_eq(strlen(e->d_name), strlen(".out.aicm-tmp.XXXXXX"));
		ck_assert(!strncmp(e->d_name, ".out.aicm-tmp.", 14));
		found++;
	}
	closedir(d);
	ck_assert_int_eq(found, 1);
	ck_assert_int_eq(access(at("out"), F_OK), -1);
}
END_TEST

Suite *
make_io_suite(void)
{
	Suite *s = suite_create("io");
	TCase *r = tcase_create("read"), *w = tcase_create("write"),
	    *f = tcase_create("failures");

	tcase_add_checked_fixture(r, setup, teardown);
	tcase_add_test(r, test_io_read_limit_file);
	tcase_add_test(r, test_io_read_limit_sparse);
	tcase_add_test(r, test_io_read_limit_pipe);
	tcase_add_test(r, test_io_read_limit_devzero);
	tcase_add_test(r, test_io_npy_read_limits);
	suite_add_tcase(s, r);
	tcase_add_checked_fixture(w, setup, teardown);
	tcase_add_test(w, test_io_write_new_and_replace_mode);
	tcase_add_test(w, test_io_write_fifo);
	tcase_add_test(w, test_io_npy_write_fifo);
	tcase_add_test(w, test_io_write_symlink);
	tcase_add_test(w, test_io_write_nofollow);
	tcase_add_test(w, test_io_write_sticky_foreign_link);
	tcase_add_test(w, test_io_write_planted_tmp);
	suite_add_tcase(s, w);
	tcase_add_checked_fixture(f, setup, teardown);
	tcase_add_test(f, test_io_write_fails_cleanly);
	tcase_add_test(f, test_io_write_interrupted);
	tcase_add_test(f, test_io_write_killed);
	suite_add_tcase(s, f);
	return s;
}
