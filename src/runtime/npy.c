/*
 * npy.c: numpy's .npy files, read and written.
 *
 * The format (numpy/lib/format.py): the magic "\x93NUMPY", a major and a
 * minor version byte, the header length (2 bytes little-endian in version
 * 1.0, 4 bytes in 2.0 and 3.0), then an ASCII (3.0: UTF-8) Python dict
 * literal {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a newline, then the data.  aicm reads versions 1.0
 * to 3.0 with f4 or f8 elements; everything else is an error that names the
 * file, what it holds and what was wanted, found before anything is
 * allocated: the shape is compared with the IR's and the file's length
 * with the header's before the data is read.  What numpy itself would load
 * is converted, not refused, as np.load does: a big-endian file ('>f8',
 * '>i4', ..., written on such a host or with astype('>f8')) is byte-swapped, and a
 * Fortran-ordered one (np.save of a transposed view or an np.asfortranarray)
 * is copied into C order through a second buffer of its size.  Files are
 * written with version 1.0 headers, which every numpy reads, padded so the
 * data starts on a 64-byte boundary as numpy does, through io.c's one
 * writer (all or nothing for a regular file, direct for a FIFO or device).
 * Only regular files are read: the header's claim is checked against the
 * file's real size and --max-bytes before the data is allocated, so a
 * sparse file or a lying header allocates nothing, and a FIFO is refused
 * without waiting for a writer.
 *
 * Little-endian data is copied as it lies, so the host must be
 * little-endian.
 */
#define _DEFAULT_SOURCE              /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c copies little-endian data as it lies; this host is big-endian"
#endif

enum { MAX_HEADER = 1 << 20 };

#define ERR(...) (snprintf(err, EXEC_ERR_MAX, __VA_ARGS__), -1)

/* ---- the header dict ------------------------------------------------- */

typedef struct Lex {
	const char *p, *end;
} Lex;

static void
skip_ws(Lex *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' ||
	    *l->p == '\r'))
		l->p++;
}

static bool
eat(Lex *l, char c)
{
	skip_ws(l);
	if (l->p < l->end && *l->p == c) {
		l->p++;
		return true;
	}
	return false;
}

/* The element types aicm holds, as little-endian descrs; '>' is accepted
 * for each '<' one (and byte-swapped). */
static const struct {
	const char *descr;
	DType dt;
} npy_descrs[] = {
	{"<f8", DT_F64}, {"<f4", DT_F32}, {"<i4", DT_I32}, {"<i8", DT_I64}, {"|b1", DT_BOOL},
};

/* A Python string literal without escapes (numpy's keys and descrs). */
static int
pystr(Lex *l, char *buf, size_t n)
{
	char q;
	size_t m = 0;

	skip_ws(l);
	if (l->p >= l->end || (*l->p != '\'' && *l->p != '"'))
		return -1;
	q = *l->p++;
	while (l->p < l->end && *l->p != q) {
		if (*l->p == '\\' || m + 1 >= n)
			return -1;
		buf[m++] = *l->p++;
	}
	if (l->p >= l->end)
		return -1;
	l->p++;
	buf[m] = '\0';
	return 0;
}

static bool
word(Lex *l, const char *w)
{
	size_t n = strlen(w);

	skip_ws(l);
	if ((size_t)(l->end - l->p) >= n && !strncmp(l->p, w, n)) {
		l->p += n;
		return true;
	}
	return false;
}

/* (d0, d1, ...): a tuple of non-negative integers ('L' of Python 2 allowed). */
static int
pyshape(Lex *l, NpyHeader *h, char *err)
{
	h->rank = 0;
	if (!eat(l, '('))
		return ERR("'shape' is not a tuple");
	while (!eat(l, ')')) {
		int64_t v = 0;
		bool digits = false;

		skip_ws(l);
		while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
			if (__builtin_mul_overflow(v, 10, &v) ||
			    __builtin_add_overflow(v, *l->p - '0', &v))
				return ERR("a dimension of 'shape' does not fit in 64 bits");
			digits = true;
			l->p++;
		}
		if (!digits)
			return ERR("'shape' holds something other than non-negative integers");
		if (l->p < l->end && *l->p == 'L')
			l->p++;
		if (h->rank == IR_MAX_RANK)
			return ERR("'shape' has more than %d dimensions; aicm handles rank 0 to %d",
			    IR_MAX_RANK, IR_MAX_RANK);
		h->dim[h->rank++] = v;
		if (!eat(l, ',')) {
			if (!eat(l, ')'))
				return ERR("'shape' tuple is not closed");
			break;
		}
	}
	return 0;
}

static int
parse_dict(const char *text, size_t len, NpyHeader *h, char *err)
{
	Lex l = {text, text + len};
	bool seen[3] = {false, false, false};
	char key[64];

	if (!eat(&l, '{'))
		return ERR("the header is not a Python dict");
	while (!eat(&l, '}')) {
		if (pystr(&l, key, sizeof key) != 0 || !eat(&l, ':'))
			return ERR("the header dict is malformed");
		if (!strcmp(key, "descr")) {
			if (pystr(&l, h->descr, sizeof h->descr) != 0)
				return ERR("'descr' is not a simple type string (structured arrays "
				    "are not supported)");
			seen[0] = true;
		} else if (!strcmp(key, "fortran_order")) {
			if (word(&l, "True"))
				h->fortran = true;
			else if (word(&l, "False"))
				h->fortran = false;
			else
				return ERR("'fortran_order' is not True or False");
			seen[1] = true;
		} else if (!strcmp(key, "shape")) {
			if (pyshape(&l, h, err) != 0)
				return -1;
			seen[2] = true;
		} else {
			return ERR("the header has an unknown key '%s'", key);
		}
		if (!eat(&l, ',')) {
			if (!eat(&l, '}'))
				return ERR("the header dict is malformed");
			break;
		}
	}
	if (!seen[0] || !seen[1] || !seen[2])
		return ERR("the header lacks '%s'", !seen[0] ? "descr" : !seen[1] ?
		    "fortran_order" : "shape");
	/* '<' little-endian, '>' big-endian; numpy writes one of the two for
	 * every multi-byte type ('=' and '|' are for native or single bytes:
	 * a bool is '|b1') */
	h->dt_ok = false;
	for (int k = 0; k < (int)(sizeof npy_descrs / sizeof npy_descrs[0]); k++) {
		const char *d = npy_descrs[k].descr;

		if (!strcmp(h->descr + 1, d + 1) && (h->descr[0] == d[0] ||
		    (d[0] == '<' && h->descr[0] == '>'))) {
			h->dt_ok = true;
			h->dt = npy_descrs[k].dt;
		}
	}
	h->swap = h->dt_ok && h->descr[0] == '>';
	return 0;
}

int
exec_npy_parse_header(const unsigned char *buf, size_t len, NpyHeader *h, char *err)
{
	size_t hlen, pre;

	memset(h, 0, sizeof *h);
	if (len < 6 || memcmp(buf, "\x93NUMPY", 6) != 0)
		return ERR("not a .npy file (no \\x93NUMPY magic)");
	if (len < 10)
		return ERR("the header is truncated");
	h->major = buf[6];
	h->minor = buf[7];
	if (h->major < 1 || h->major > 3 || h->minor != 0)
		return ERR("unsupported .npy version %d.%d (aicm reads 1.0, 2.0 and 3.0)",
		    h->major, h->minor);
	if (h->major == 1) {
		hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
		pre = 10;
	} else {
		if (len < 12)
			return ERR("the header is truncated");
		hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 |
		    (size_t)buf[11] << 24;
		pre = 12;
	}
	if (hlen > MAX_HEADER)
		return ERR("the header claims %zu bytes; aicm reads at most %d", hlen, MAX_HEADER);
	if (len < pre + hlen)
		return ERR("the header is truncated (%zu of %zu bytes)", len - pre, hlen);
	h->data_off = pre + hlen;
	return parse_dict((const char *)buf + pre, hlen, h, err);
}

/* ---- reading --------------------------------------------------------- */

static void
held_str(const NpyHeader *h, char *buf)
{
	Type t = {.rank = h->rank};
	char s[IR_TYPE_STR];

	memcpy(t.dim, h->dim, sizeof t.dim);
	snprintf(buf, IR_TYPE_STR + 32, "%s %s", ir_shape_str(&t, s),
	    h->dt_ok ? ir_dtype_name(h->dt) : h->descr);
}

/* Copies a Fortran-ordered array src (first index fastest) of shape dim
 * into dst in C order (last index fastest), elements of es bytes: dst is
 * walked in order with a counter per dimension, src at the matching
 * column-major offset. */
static void
from_fortran(unsigned char *dst, const unsigned char *src, int rank, const int64_t *dim,
    size_t es)
{
	int64_t idx[IR_MAX_RANK] = {0}, fstride[IR_MAX_RANK], off = 0, n = 1;

	for (int k = 0; k < rank; k++) {
		fstride[k] = n;
		n *= dim[k];
	}
	for (int64_t i = 0; i < n; i++) {
		memcpy(dst + (size_t)i * es, src + (size_t)off * es, es);
		for (int k = rank - 1; k >= 0; k--) {
			off += fstride[k];
			if (++idx[k] < dim[k])
				break;
			off -= fstride[k] * dim[k];
			idx[k] = 0;
		}
	}
}

/* Reverses the bytes of each of n elements of es bytes (4 or 8). */
static void
swap_bytes(void *data, int64_t n, size_t es)
{
	unsigned char *p = data;

	for (int64_t i = 0; i < n; i++, p += es)
		for (size_t a = 0, b = es - 1; a < b; a++, b--) {
			unsigned char c = p[a];

			p[a] = p[b];
			p[b] = c;
		}
}

int
exec_npy_read(const char *path, const Type *want, const char *wantname, int64_t max_bytes,
    Tensor *t, char *err)
{
	unsigned char pre[12], *buf = NULL, *fdata = NULL;
	NpyHeader h;
	struct stat st;
	size_t hlen, got;
	int64_t numel = 1, bytes;
	char held[IR_TYPE_STR + 32], ws[IR_TYPE_STR];
	FILE *f;
	Type ty;
	int rc = -1, fd;

	memset(t, 0, sizeof *t);
	/* O_NONBLOCK: a FIFO is refused below instead of waiting for a writer */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, EXEC_ERR_MAX, "cannot read '%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -2;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, EXEC_ERR_MAX, "cannot read '%s': not a regular file", path);
		close(fd);
		return -2;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 ||
	    !(f = fdopen(fd, "rb"))) {
		snprintf(err, EXEC_ERR_MAX, "cannot read '%s': %s", path, strerror(errno));
		close(fd);
		return -2;
	}
	got = fread(pre, 1, sizeof pre, f);
	if (got >= 10 && !memcmp(pre, "\x93NUMPY", 6) && pre[6] >= 1 && pre[6] <= 3) {
		hlen = pre[6] == 1 ? (size_t)pre[8] | (size_t)pre[9] << 8 :
		    (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 |
		    (size_t)pre[11] << 24;
		if (hlen > MAX_HEADER)
			hlen = MAX_HEADER + 1;     /* the parser says why */
		hlen += 12;
	} else {
		hlen = got;
	}
	if ((off_t)hlen > st.st_size)
		hlen = (size_t)st.st_size;
	buf = xmalloc((hlen > got ? hlen : got) + 1);
	memcpy(buf, pre, got);
	if (hlen > got)
		hlen = got + fread(buf + got, 1, hlen - got, f);
	else
		hlen = got;
	if (ferror(f)) {
		snprintf(err, EXEC_ERR_MAX, "cannot read '%s': %s", path, strerror(errno));
		rc = -2;
		goto out;
	}
	if (exec_npy_parse_header(buf, hlen, &h, err) != 0) {
		char m[EXEC_ERR_MAX];

		snprintf(m, sizeof m, "%s", err);
		snprintf(err, EXEC_ERR_MAX, "'%.200s': %.700s", path, m);
		goto out;
	}
	held_str(&h, held);
	if (!h.dt_ok) {
		snprintf(err, EXEC_ERR_MAX, "'%s' holds unsupported elements ('%s'); aicm reads "
		    "'f4' (f32), 'f8' (f64), 'i4' (i32), 'i8' (i64), either byte order, and "
		    "'b1' (bool)", path, h.descr);
		goto out;
	}
	ty.rank = h.rank;
	ty.dt = h.dt;
	memcpy(ty.dim, h.dim, sizeof ty.dim);
	if (want && !ir_type_eq(&ty, want)) {
		snprintf(err, EXEC_ERR_MAX, "'%s' holds %s, but %s is %s %s", path, held,
		    wantname ? wantname : "the value wanted", ir_shape_str(want, ws),
		    ir_dtype_name(want->dt));
		goto out;
	}
	for (int k = 0; k < h.rank; k++)
		if (__builtin_mul_overflow(numel, h.dim[k], &numel))
			numel = -1;
	bytes = numel < 0 || numel > INT64_MAX / 8 ? -1 : numel * (int64_t)ir_dtype_size(h.dt);
	if (bytes < 0) {
		snprintf(err, EXEC_ERR_MAX, "'%s' holds %s, more than 2^63 bytes", path, held);
		goto out;
	}
	if ((int64_t)(st.st_size - h.data_off) != bytes) {
		int64_t have = (int64_t)(st.st_size - h.data_off);

		if (have > bytes)
			snprintf(err, EXEC_ERR_MAX, "'%s' holds %lld bytes of data, more than the "
			    "%lld its header's %s needs", path, (long long)have, (long long)bytes,
			    held);
		else
			snprintf(err, EXEC_ERR_MAX, "'%s' is truncated: it holds %lld bytes of "
			    "data, its header's %s needs %lld", path, (long long)have, held,
			    (long long)bytes);
		goto out;
	}
	if (max_bytes > 0 && bytes > max_bytes) {
		snprintf(err, EXEC_ERR_MAX, "'%s' holds %s, %lld bytes, more than "
		    "--max-bytes=%lld", path, held, (long long)bytes, (long long)max_bytes);
		goto out;
	}
	if (exec_tensor_alloc(t, &ty, 0) != 0) {
		snprintf(err, EXEC_ERR_MAX, "'%s' holds %s, too large to allocate", path, held);
		goto out;
	}
	if (h.fortran && h.rank > 1)
		fdata = malloc(bytes ? (size_t)bytes : 1);
	if (h.fortran && h.rank > 1 && !fdata) {
		snprintf(err, EXEC_ERR_MAX, "'%s' holds %s in Fortran order, too large to "
		    "reorder (twice its size)", path, held);
		exec_tensor_free(t);
		goto out;
	}
	if (fseeko(f, (off_t)h.data_off, SEEK_SET) != 0 ||
	    fread(fdata ? fdata : t->data, 1, (size_t)bytes, f) != (size_t)bytes) {
		snprintf(err, EXEC_ERR_MAX, "cannot read '%s': %s", path,
		    ferror(f) ? strerror(errno) : "the file shrank while being read");
		exec_tensor_free(t);
		rc = -2;
		goto out;
	}
	if (fdata)
		from_fortran(t->data, fdata, h.rank, h.dim, ir_dtype_size(h.dt));
	if (h.swap)
		swap_bytes(t->data, numel, ir_dtype_size(h.dt));
	if (h.dt == DT_BOOL)         /* numpy writes 0 and 1; any other byte is True */
		for (int64_t i = 0; i < numel; i++)
			((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
	rc = 0;
out:
	free(fdata);
	free(buf);
	fclose(f);
	return rc;
}

/* ---- writing --------------------------------------------------------- */

int
exec_npy_write(const char *path, const Tensor *t, char *err)
{
	Type ty = exec_tensor_type(t);

	return aicm_npy_write(path, &ty, t->data, err, EXEC_ERR_MAX);
}

/* Contract in exec.h.  realpath() resolves both ends, so a link inside
 * the directory that points out of it is caught. */
int
exec_const_read(const char *datadir, const Node *n, int64_t max_bytes, Tensor *t, char *err)
{
	const char *dir = datadir ? datadir : ".", *why = ir_data_path_error(n->at.file);
	char *joined, *rdir = NULL, *rfile = NULL, who[256];
	size_t dl = strlen(dir), rl;
	int rc;

	memset(t, 0, sizeof *t);
	if (why) {
		snprintf(err, EXEC_ERR_MAX, "'file' %s", why);
		return -1;
	}
	joined = malloc(dl + strlen(n->at.file) + 2);
	if (!joined) {
		snprintf(err, EXEC_ERR_MAX, "out of memory");
		return -2;
	}
	sprintf(joined, "%s/%s", dir, n->at.file);
	if (!(rdir = realpath(dir, NULL))) {
		snprintf(err, EXEC_ERR_MAX, "cannot read the data directory '%s': %s", dir,
		    strerror(errno));
		rc = -2;
		goto out;
	}
	if (!(rfile = realpath(joined, NULL))) {
		snprintf(err, EXEC_ERR_MAX, "cannot read '%s': %s", joined, strerror(errno));
		rc = -2;
		goto out;
	}
	rl = strlen(rdir);
	if (strncmp(rfile, rdir, rl) != 0 || (rfile[rl] != '/' && strcmp(rdir, "/") != 0)) {
		snprintf(err, EXEC_ERR_MAX, "'file' '%s' leads outside the data directory '%s' "
		    "(to '%s')", joined, dir, rfile);
		rc = -1;
		goto out;
	}
	snprintf(who, sizeof who, "'%%%.200s' in the IR", n->name);
	/* the path as written in the messages, not the machine's */
	rc = exec_npy_read(joined, &n->type, who, max_bytes, t, err);
out:
	free(joined);
	free(rdir);
	free(rfile);
	return rc;
}
