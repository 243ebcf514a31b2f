/*
 * check_tune_cache.c: the tuning cache file (passes/tune_cache.c) read and
 * written on its own, without the pass.  The reader refuses incomplete
 * records with a PATH:LINE warning; the writer writes only records that
 * read back the same, so that write(read(x)) reads back to read(x) and a
 * second write changes nothing (tests/fuzz/fuzz_cache.c checks the same
 * on random text).  Saving merges with what the file holds by then, under
 * the lock: another run's records stay, this run's win for its kernels,
 * and a save waits for a run that holds the lock.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_aicm.h"
#include "../passes/tune_cache.h"

/* A record's key for a matmul kernel of m rows (the rest fixed). */
#define MM_KEY(m) "matmul:matmul($0=" #m "x8,$1=8x8)=" #m "x8 f64 target=h100{sms=1.0} space=0a"

/* The same, in space SP. */
#define MM_KEY_SPACE(m, sp) "matmul:matmul($0=" #m "x8,$1=8x8)=" #m "x8 f64 target=h100{sms=1.0} space=" sp

/* Parses text as the file "t.cache"; the warnings go to *msgs (malloc'd). */
static void
parse_text(TuneCache *c, const char *text, char **msgs, int *nwarn)
{
	size_t n = 0;
	FILE *f = open_memstream(msgs, &n);
	Diag d;

	ck_assert_ptr_nonnull(f);
	diag_init(&d, "in.aicm", "", 0, f);
	c->path = "t.cache";
	tune_cache_parse(c, text, strlen(text), &d);
	*nwarn = d.nwarn;
	diag_free(&d);
	fclose(f);
}

static int
live(const TuneCache *c)
{
	int n = 0;

	for (int i = 0; i < c->n; i++)
		n += !c->e[i].drop;
	return n;
}

START_TEST(test_tune_cache_incomplete_refused)
{
	const char *text =
	    "# comment\n"
	    MM_KEY(1) " -> BM=16 BK=16 warps=4 stages=3 score=1\n"              /* no BN */
	    "elementwise:relu($0=4x4)=4x4 f64 t space=0 -> BM=4 BN=4 score=1\n"  /* no warps */
	    MM_KEY(2) " -> BM=16 BN=16 BK=16 warps=4 score=1\n"                 /* no stages */
	    MM_KEY(3) " -> BM=16 BN=16 BK=16 warps=4 stages=3 score=1\n"        /* good */
	    MM_KEY(4) " -> BM=16 BN=16 BK=16 warps=4 stages=3 score=0.0";       /* cut short */
	TuneCache c = {0};
	char *msgs;
	int nwarn;

	parse_text(&c, text, &msgs, &nwarn);
	ck_assert_int_eq(nwarn, 4);
	ck_assert_int_eq(live(&c), 1);
	ck_assert_ptr_nonnull(tune_cache_find(&c, MM_KEY(3)));
	ck_assert_int_eq(tune_cache_find(&c, MM_KEY(3))->line, 5);
	ck_assert_ptr_nonnull(strstr(msgs, "t.cache:2: bad tuning cache record (incomplete: no 'BN';"));
	ck_assert_ptr_nonnull(strstr(msgs, "t.cache:3: bad tuning cache record (incomplete: no 'warps';"));
	ck_assert_ptr_nonnull(strstr(msgs, "t.cache:4: bad tuning cache record (incomplete: no 'stages';"));
	ck_assert_ptr_nonnull(strstr(msgs, "t.cache:6: bad tuning cache record (no newline"));
	ck_assert(c.dirty);
	free(msgs);
	tune_cache_free(&c);
}
END_TEST

START_TEST(test_tune_cache_writer_skips_incomplete)
{
	TuneCache c = {.path = "t.cache"};
	TuneEntry good = {0}, nobn = {0}, nowarps = {0}, zero = {0};
	unsigned all = tune_cache_kind_attrs(KK_MATMUL);
	size_t len;
	char *s;

	good.key = xstrdup(MM_KEY(1));
	good.c = (TileConfig){16, 16, 16, 4, 3, 0};
	good.have = all;
	good.score = 0.5;
	nobn = good;
	nobn.key = xstrdup(MM_KEY(2));
	nobn.have = all & ~(1u << KA_BN);
	nobn.c.bn = 0;
	nowarps = good;
	nowarps.key = xstrdup(MM_KEY(3));
	nowarps.have = all & ~(1u << KA_WARPS);
	nowarps.c.warps = 0;
	zero = good;                        /* complete, but a value the reader refuses */
	zero.key = xstrdup(MM_KEY(4));
	zero.c.bk = 0;
	tune_cache_add(&c, good);
	tune_cache_add(&c, nobn);
	tune_cache_add(&c, nowarps);
	tune_cache_add(&c, zero);
	s = tune_cache_format(&c, &len);
	ck_assert_uint_eq(strlen(s), len);
	ck_assert_ptr_nonnull(strstr(s, MM_KEY(1) " -> BM=16 BN=16 BK=16 warps=4 stages=3 score=0.5\n"));
	ck_assert_ptr_null(strstr(s, MM_KEY(2)));
	ck_assert_ptr_null(strstr(s, MM_KEY(3)));
	ck_assert_ptr_null(strstr(s, MM_KEY(4)));
	ck_assert_ptr_null(strstr(s, "=0 "));
	free(s);
	tune_cache_free(&c);
}
END_TEST

/* Field by field, scores bit for bit (-0.0 and 0.0 differ). */
static void
same_records(const TuneCache *a, const TuneCache *b)
{
	int i = 0, j = 0;

	for (;; i++, j++) {
		while (i < a->n && a->e[i].drop)
			i++;
		while (j < b->n && b->e[j].drop)
			j++;
		if (i == a->n || j == b->n)
			break;
		ck_assert_str_eq(a->e[i].key, b->e[j].key);
		ck_assert_uint_eq(a->e[i].have, b->e[j].have);
		ck_assert_mem_eq(&a->e[i].c, &b->e[j].c, sizeof a->e[i].c);
		ck_assert_mem_eq(&a->e[i].score, &b->e[j].score, sizeof(double));
		ck_assert_int_eq(a->e[i].measured, b->e[j].measured);
		if (a->e[i].measured)
			ck_assert_mem_eq(&a->e[i].ms, &b->e[j].ms, sizeof(double));
	}
	ck_assert_int_eq(i, a->n);
	ck_assert_int_eq(j, b->n);
}

START_TEST(test_tune_cache_round_trip)
{
	/* odd but valid spellings: CRLF, tabs, any order, '+', hex and
	 * subnormal scores, underflow, inf, -0, a record of each kind */
	const char *text =
	    MM_KEY(1) " -> stages=3\tBK=16 warps=4 BN=+16 BM=16 score=0x1p-1074\r\n"
	    MM_KEY(2) " -> BM=16 BN=16 BK=16 warps=4 stages=3 score=1e-400 measured=inf\n"
	    MM_KEY(3) " -> BM=16 BN=16 BK=16 warps=4 stages=3 score=-0 measured=2.5e-310\n"
	    "elementwise:relu($0=4x4)=4x4 f64 t space=0 -> BM=4 BN=4 warps=2 score=3.25\n"
	    "row_reduction:x space=1 ->  BM=1 BN=1024 warps=1048576   score=1e300  \n"
	    "matmul_epilogue:y -> BM=32 BN=32 BK=32 warps=8 stages=2 score=0.1\n"
	    "reduction:z space=0 -> BM=1 BN=64 warps=4 score=7\n"
	    "opaque:w -> BM=1 BN=1 warps=1 score=0\n";
	TuneCache c1 = {0}, c2 = {0};
	char *m1, *m2, *s1, *s2;
	size_t n1, n2;
	int w1, w2;

	parse_text(&c1, text, &m1, &w1);
	ck_assert_msg(w1 == 0, "%s", m1);
	ck_assert_int_eq(live(&c1), 8);
	s1 = tune_cache_format(&c1, &n1);
	parse_text(&c2, s1, &m2, &w2);
	ck_assert_msg(w2 == 0, "%s", m2);
	same_records(&c1, &c2);
	s2 = tune_cache_format(&c2, &n2);
	ck_assert_str_eq(s1, s2);
	ck_assert_ptr_nonnull(strstr(s1, MM_KEY(1) " -> BM=16 BN=16 BK=16 warps=4 stages=3 score=5e-324\n"));
	ck_assert(signbit(tune_cache_find(&c2, MM_KEY(3))->score));
	free(m1);
	free(m2);
	free(s1);
	free(s2);
	tune_cache_free(&c1);
	tune_cache_free(&c2);
}
END_TEST

/* A scratch cache path, its file and lock removed. */
static const char *
scratch_path(char *buf, size_t n, const char *what)
{
	char lock[256];

	snprintf(buf, n, "/tmp/aicm-check-%s-%ld.cache", what, (long)getpid());
	snprintf(lock, sizeof lock, "%s.lock", buf);
	remove(buf);
	remove(lock);
	return buf;
}

static void
write_text(const char *path, const char *text)
{
	ck_assert_int_eq(aicm_write_file(path, text, strlen(text)), 0);
}

/* A new result of this run, as the pass adds it. */
static void
add_fresh(TuneCache *c, const char *key, int bm)
{
	TuneEntry e = {0};

	tune_cache_supersede(c, key);
	e.key = xstrdup(key);
	e.c = (TileConfig){bm, 16, 16, 4, 3, 0};
	e.have = tune_cache_kind_attrs(KK_MATMUL);
	e.score = 1;
	e.fresh = true;
	tune_cache_add(c, e);
	c->dirty = true;
}

static Diag *
quiet_diag(void)
{
	static Diag d;
	static FILE *sink;

	if (!sink)
		sink = fopen("/dev/null", "w");
	ck_assert_ptr_nonnull(sink);
	diag_init(&d, "in.aicm", "", 0, sink);
	return &d;
}

START_TEST(test_tune_cache_merge_keeps_others)
{
	char path[128], *txt;
	TuneCache c = {0};
	Diag *d = quiet_diag();

	scratch_path(path, sizeof path, "merge");
	write_text(path,
	    MM_KEY(1) " -> BM=16 BN=16 BK=16 warps=4 stages=3 score=1\n"
	    MM_KEY(2) " -> BM=16 BN=16 BK=16 warps=4 stages=3 score=1\n"
	    MM_KEY(3) " -> BM=16 BN=16 BK=16 warps=4 stages=3 score=1\n"
	    MM_KEY_SPACE(4, "0a") " -> BM=16 BN=16 BK=16 warps=4 stages=3 score=1\n");
	c.path = path;
	ck_assert_int_eq(tune_cache_load(&c, d), 0);
	ck_assert_int_eq(c.n, 4);
	/* this run: refuses 3, re-tunes 4 in a new space, tunes 5 */
	tune_cache_find(&c, MM_KEY(3))->drop = true;
	add_fresh(&c, MM_KEY_SPACE(4, "0b"), 32);
	add_fresh(&c, MM_KEY(5), 32);
	/* meanwhile another run re-tuned 2, tuned 5 and 6 */
	write_text(path,
	    MM_KEY(1) " -> BM=16 BN=16 BK=16 warps=4 stages=3 score=1\n"
	    MM_KEY(2) " -> BM=64 BN=16 BK=16 warps=4 stages=3 score=1\n"
	    MM_KEY(3) " -> BM=16 BN=16 BK=16 warps=4 stages=3 score=1\n"
	    MM_KEY_SPACE(4, "0a") " -> BM=16 BN=16 BK=16 warps=4 stages=3 score=1\n"
	    MM_KEY(5) " -> BM=64 BN=16 BK=16 warps=4 stages=3 score=1\n"
	    MM_KEY(6) " -> BM=64 BN=16 BK=16 warps=4 stages=3 score=1\n");
	ck_assert_int_eq(tune_cache_save(&c, d), 0);
	txt = ck_slurp(path);
	/* the other run's records and changes stay, in the file's order;
	 * this run's refusal and its results win, after them */
	ck_assert_str_eq(strchr(txt, '\n') + 1,
	    MM_KEY(1) " -> BM=16 BN=16 BK=16 warps=4 stages=3 score=1.0\n"
	    MM_KEY(2) " -> BM=64 BN=16 BK=16 warps=4 stages=3 score=1.0\n"
	    MM_KEY(6) " -> BM=64 BN=16 BK=16 warps=4 stages=3 score=1.0\n"
	    MM_KEY_SPACE(4, "0b") " -> BM=32 BN=16 BK=16 warps=4 stages=3 score=1.0\n"
	    MM_KEY(5) " -> BM=32 BN=16 BK=16 warps=4 stages=3 score=1.0\n");
	free(txt);
	tune_cache_free(&c);
	diag_free(d);
	remove(path);
	ck_assert_int_eq(access(strcat(path, ".lock"), F_OK), 0);   /* left for the next run */
	remove(path);
}
END_TEST

/* A run holding the lock: a save waits for it, then merges with what that
 * run wrote. */
START_TEST(test_tune_cache_save_waits_for_lock)
{
	char path[128], lock[140], *txt;
	TuneCache c = {0};
	Diag *d = quiet_diag();
	struct timespec wait = {0, 300 * 1000 * 1000};
	int fd, st;
	pid_t pid;

	scratch_path(path, sizeof path, "lock");
	snprintf(lock, sizeof lock, "%s.lock", path);
	c.path = path;
	add_fresh(&c, MM_KEY(1), 32);
	fd = open(lock, O_RDONLY | O_CREAT, 0666);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fd);   /* the parent's lock is on the description they share */
		_exit(tune_cache_save(&c, d) == 0 ? 0 : 1);
	}
	nanosleep(&wait, NULL);
	ck_assert_int_ne(access(path, F_OK), 0);     /* still waiting */
	write_text(path, MM_KEY(2) " -> BM=64 BN=16 BK=16 warps=4 stages=3 score=1\n");
	close(fd);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	txt = ck_slurp(path);
	ck_assert_ptr_nonnull(strstr(txt, MM_KEY(1) " -> BM=32 "));
	ck_assert_ptr_nonnull(strstr(txt, MM_KEY(2) " -> BM=64 "));
	free(txt);
	tune_cache_free(&c);
	diag_free(d);
	remove(path);
	remove(lock);
}
END_TEST

Suite *
make_tune_cache_suite(void)
{
	Suite *s = suite_create("tune_cache");
	TCase *rw = tcase_create("read-write");
	TCase *mg = tcase_create("merge");

	tcase_add_test(rw, test_tune_cache_incomplete_refused);
	tcase_add_test(rw, test_tune_cache_writer_skips_incomplete);
	tcase_add_test(rw, test_tune_cache_round_trip);
	tcase_add_test(mg, test_tune_cache_merge_keeps_others);
	tcase_add_test(mg, test_tune_cache_save_waits_for_lock);
	suite_add_tcase(s, rw);
	suite_add_tcase(s, mg);
	return s;
}
