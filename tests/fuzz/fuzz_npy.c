/*
 * fuzz_npy.c: the .npy reader, bytes in.
 *
 * The input is a whole .npy file.  exec_npy_parse_header sees it from
 * memory; exec_npy_read sees it as a file (in a private scratch folder,
 * since the reader stats and reads a path), with a small max_bytes so that
 * a header promising gigabytes must be refused before anything is
 * allocated.  A file that reads is written back and read again: the
 * tensor must come back bit for bit (NaNs included).
 */
#include <stdint.h>
#include <unistd.h>

#include "exec.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FUZZ_MAX_BYTES = 1 << 22 };

static const char *
scratch(const char *leaf)
{
	static char dir[64], path[128];

	if (!dir[0]) {
		snprintf(dir, sizeof dir, "%s/aicm-fuzz-npy.XXXXXX",
		    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (strlen(dir) >= sizeof dir - 1 || !mkdtemp(dir))
			abort();
	}
	snprintf(path, sizeof path, "%s/%s", dir, leaf);
	return path;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[EXEC_ERR_MAX];
	NpyHeader h;
	Tensor t = {0}, back = {0};
	Type ty;
	FILE *f;
	int rc;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	exec_npy_parse_header(data, size, &h, err);
	f = fopen(scratch("in.npy"), "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	rc = exec_npy_read(scratch("in.npy"), NULL, NULL, FUZZ_MAX_BYTES, &t, err);
	if (rc == -2)
		fuzz_fail("a file that exists could not be read", err, NULL);
	if (rc != 0)
		return 0;
	if (exec_npy_write(scratch("out.npy"), &t, err) != 0)
		fuzz_fail("a tensor that was read cannot be written", err, NULL);
	ty = exec_tensor_type(&t);
	if (exec_npy_read(scratch("out.npy"), &ty, "the first read", FUZZ_MAX_BYTES, &back,
	    err) != 0)
		fuzz_fail("a written file does not read back", err, NULL);
	if (!exec_tensor_has_type(&back, &ty) || (exec_tensor_bytes(&t) > 0 &&
	    memcmp(t.data, back.data, exec_tensor_bytes(&t)) != 0))
		fuzz_fail("the tensor changed through write and read", NULL, NULL);
	exec_tensor_free(&t);
	exec_tensor_free(&back);
	return 0;
}
