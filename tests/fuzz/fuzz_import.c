/*
 * fuzz_import.c: aicm-import's reader and walk, the bytes of a .onnx in.
 *
 * Any bytes go to imp_onnx, as aicm-import hands it a file: protobuf-c's
 * unpacking (after the importer's nesting pre-scan), then the walk and
 * every translator the model names.  External data is looked for in a
 * private scratch folder holding one small file, ext.bin (the dictionary
 * has its name), so that locations, offsets and lengths are read for real.
 * Beyond "no crash, leak or hang", the result must be what import.h
 * promises: an error is a non-empty message, starting "unsupported:"
 * exactly when imp_onnx returns 1; a graph that imports (imp_onnx verified
 * it) prints to text that parses back, verifies and prints the same (the
 * round trip of issue 17), and each weight to write is named in it.
 */
#include <stdint.h>
#include <unistd.h>

#include "fuzz.h"
#include "import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The scratch folder, made once, with ext.bin: 256 bytes 0, 1, ..., 255. */
static const char *
model_dir(void)
{
	static char dir[64];

	if (!dir[0]) {
		char path[128];
		unsigned char b[256];
		FILE *f;

		snprintf(dir, sizeof dir, "%s/aicm-fuzz-import.XXXXXX",
		    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (strlen(dir) >= sizeof dir - 1 || !mkdtemp(dir))
			abort();
		snprintf(path, sizeof path, "%s/ext.bin", dir);
		for (int i = 0; i < 256; i++)
			b[i] = (unsigned char)i;
		if (!(f = fopen(path, "wb")) || fwrite(b, 1, sizeof b, f) != sizeof b ||
		    fclose(f) != 0)
			abort();
	}
	return dir;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ImpOptions o = {.weights = "m.weights", .model_dir = model_dir()};
	ImpResult r;
	char err[IMP_ERR_MAX], *text;
	size_t n;
	int rc;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	rc = imp_onnx(data, size, &o, &r, err);
	if (rc != 0) {
		bool unsup = strncmp(err, "unsupported: ", 13) == 0;

		if (rc != 1 && rc != -1)
			fuzz_fail("imp_onnx returned neither 0, 1 nor -1", err, NULL);
		if (!err[0] || strlen(err) >= IMP_ERR_MAX)
			fuzz_fail("imp_onnx failed without a message", NULL, NULL);
		if (unsup != (rc == 1))
			fuzz_fail("an 'unsupported:' message and the return code disagree", err, NULL);
		if (r.g || r.w || r.nw || r.priv)
			fuzz_fail("imp_onnx failed but handed back a result", err, NULL);
		return 0;
	}
	ir_graph_free(fuzz_reparse(r.g, &text, &n));
	for (int k = 0; k < r.nw; k++) {
		char *q = malloc(strlen(r.w[k].file) + 16);

		if (!q)
			abort();
		sprintf(q, "file=\"%s\"", r.w[k].file);
		if (!strstr(text, q))
			fuzz_fail("a weight to write is named by no const", q, text);
		if (strncmp(r.w[k].file, "m.weights/", 10) != 0 || strstr(r.w[k].file + 10, "/") ||
		    strstr(r.w[k].file, ".."))
			fuzz_fail("a weight's file is outside the weights folder", r.w[k].file, NULL);
		free(q);
	}
	free(text);
	imp_result_free(&r);
	return 0;
}
