/*
 * aicm-import: an ONNX model in, an .aicm graph and its weights out.
 *
 *   aicm-import model.onnx -o model.aicm [--shape NAME=1x3x224x224]
 *               [--bind NAME=F.npy]
 *
 * The translation is src/import's (import.h); this file is the command
 * line around it: the options, the .npy files of --bind (read with the
 * runtime's reader, which the importer's layer may not include), and the
 * writing.  The outputs are written only after the whole model has
 * translated: the weights first, each .npy whole or not at all, into
 * OUT.weights/ beside OUT (".aicm" dropped from its name), then the graph;
 * so a failed import leaves no .aicm behind, and a .aicm never names a
 * weight that was not written.
 *
 * Exit status (DESIGN §4): 0 ok; 1 the model is wrong or uses what aicm
 * cannot express (that message starts "unsupported:"); 2 usage or I/O;
 * 3 internal error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "diag.h"
#include "exec.h"
#include "import.h"

const char *const cli_tool = "aicm-import";

static const char usage_text[] =
	"usage: aicm-import [options] MODEL.onnx|-\n"
	"\n"
	"Translate an ONNX model (opsets 1 to 17) into an aicm graph; initializers of\n"
	"more than 64 elements go to .npy files in OUT.weights/ beside OUT.\n"
	"\n"
	"  -o FILE                  write the graph to FILE (default: standard output,\n"
	"                           for a model whose weights all fit inline)\n"
	"  --shape NAME=DIMS        the shape of graph input NAME, as 1x3x224x224; fixes\n"
	"                           its dynamic dimensions (default: the model's)\n"
	"  --bind NAME=F.npy        freeze graph input NAME as a constant read from F.npy,\n"
	"                           for inputs that feed a shape-like operand (Reshape's\n"
	"                           shape, Slice's starts, ...) (default: none)\n"
	"  -h, --help               this text\n"
	"  --version                the version\n"
	"\n"
	"Exit status: 0 ok, 1 the model is wrong or unsupported (the message starts\n"
	"with 'unsupported:'), 2 bad usage or I/O, 3 internal error.\n";

/* "1x3x224x224" into s; a usage error otherwise. */
static void
parse_dims(const char *opt, const char *s, ImpShape *sh)
{
	const char *p = s;

	sh->rank = 0;
	while (*p) {
		char *end;
		long long v;

		if (sh->rank == IR_MAX_RANK)
			cli_usage_error("%s: more than %d dimensions in '%s'", opt, IR_MAX_RANK, s);
		errno = 0;
		v = strtoll(p, &end, 10);
		/* 0 is read: a zero-size input is the importer's "unsupported" */
		if (end == p || errno || v < 0 || v > IR_MAX_DIM || (*end && *end != 'x'))
			cli_usage_error("%s: '%s' is not a shape such as 1x3x224x224 (dimensions "
			    "joined by 'x')", opt, s);
		sh->dim[sh->rank++] = v;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			cli_usage_error("%s: '%s' ends with 'x'", opt, s);
	}
}

/* NAME=REST: the name (malloc'd) and REST. */
static char *
split_eq(const char *opt, const char *s, const char **rest)
{
	const char *eq = strchr(s, '=');

	if (!eq || eq == s)
		cli_usage_error("%s takes NAME=VALUE, found '%s'", opt, s);
	*rest = eq + 1;
	return strndup(s, (size_t)(eq - s));
}

/* OUT without a trailing ".aicm", plus ".weights": the weights folder's
 * path, and its last component for file= paths. */
static char *
weights_dir(const char *out)
{
	size_t n = strlen(out);
	char *w = xmalloc(n + 9);

	memcpy(w, out, n + 1);
	if (n > 5 && strcmp(out + n - 5, ".aicm") == 0)
		w[n - 5] = 0;
	strcat(w, ".weights");
	return w;
}

static int
write_weights(const ImpResult *r, const char *outdir_parent)
{
	char err[IMP_ERR_MAX];
	bool made = false;

	for (int k = 0; k < r->nw; k++) {
		size_t len = strlen(outdir_parent) + strlen(r->w[k].file) + 2;
		char *path = xmalloc(len);

		/* "./" is left out, so that messages name the path as given */
		if (strcmp(outdir_parent, ".") == 0)
			snprintf(path, len, "%s", r->w[k].file);
		else
			snprintf(path, len, "%s/%s", outdir_parent, r->w[k].file);
		if (!made) {
			char *dir = xstrdup(path), *slash = strrchr(dir, '/');
			struct stat st;

			*slash = 0;
			if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
				fprintf(stderr, "aicm-import: error: cannot create '%s': %s\n", dir,
				    strerror(errno));
				free(dir);
				free(path);
				return 2;
			}
			if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
				fprintf(stderr, "aicm-import: error: '%s' is not a folder\n", dir);
				free(dir);
				free(path);
				return 2;
			}
			free(dir);
			made = true;
		}
		if (aicm_npy_write(path, &r->w[k].type, r->w[k].p, err, sizeof err) != 0) {
			fprintf(stderr, "aicm-import: error: %s\n", err);
			free(path);
			return 2;
		}
		free(path);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	const char *in = NULL, *out = "-", *v;
	ImpShape *shapes = xcalloc((size_t)argc, sizeof *shapes);
	ImpBind *binds = xcalloc((size_t)argc, sizeof *binds);
	Tensor *bound = xcalloc((size_t)argc, sizeof *bound);
	int nshapes = 0, nbinds = 0, rc = 0;
	char *buf, err[IMP_ERR_MAX], *wdir = NULL, *modeldir = NULL, *outparent = NULL;
	size_t len;
	ImpOptions o = {0};
	ImpResult r;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage_text, stdout);
			rc = cli_flush_stdout();
			goto done;
		} else if (strcmp(a, "--version") == 0) {
			printf("aicm-import %s\n", AICM_VERSION);
			rc = cli_flush_stdout();
			goto done;
		} else if (strcmp(a, "-o") == 0) {
			if (i + 1 >= argc)
				cli_usage_error("-o needs a file name");
			out = argv[++i];
		} else if ((v = cli_optval(argc, argv, &i, "--shape")) != NULL) {
			const char *dims;

			shapes[nshapes].name = split_eq("--shape", v, &dims);
			parse_dims("--shape", dims, &shapes[nshapes]);
			for (int k = 0; k < nshapes; k++)
				if (strcmp(shapes[k].name, shapes[nshapes].name) == 0)
					cli_usage_error("--shape %s= is given twice", shapes[k].name);
			nshapes++;
		} else if ((v = cli_optval(argc, argv, &i, "--bind")) != NULL) {
			const char *file;

			binds[nbinds].name = split_eq("--bind", v, &file);
			binds[nbinds].file = file;
			for (int k = 0; k < nbinds; k++)
				if (strcmp(binds[k].name, binds[nbinds].name) == 0)
					cli_usage_error("--bind %s= is given twice", binds[k].name);
			nbinds++;
		} else if (a[0] == '-' && a[1]) {
			cli_usage_error("unknown option '%s'", a);
		} else if (in) {
			cli_usage_error("one model at a time: '%s' and '%s'", in, a);
		} else {
			in = a;
		}
	}
	if (!in)
		cli_usage_error("no model given");
	/* one way out from here, through done:, so that nothing leaks */
	for (int k = 0; k < nbinds; k++) {
		char e[EXEC_ERR_MAX];
		int brc = exec_npy_read(binds[k].file, NULL, NULL, 0, &bound[k], e);

		if (brc == -2) {
			fprintf(stderr, "aicm-import: error: --bind %s=: %s\n", binds[k].name, e);
			rc = 2;
			goto done;
		}
		if (brc != 0) {
			/* the content is wrong: said once the model's input is known */
			binds[k].err = xstrdup(e);
			continue;
		}
		binds[k].type = (Type){.rank = bound[k].rank, .dt = bound[k].dt};
		memcpy(binds[k].type.dim, bound[k].dim, sizeof bound[k].dim);
		binds[k].p = bound[k].data;
	}
	if (aicm_read_file_max(in, IMP_MAX_MODEL, &buf, &len) != 0) {
		char tmp[64];

		fprintf(stderr, "aicm-import: error: cannot read '%s': %s\n", in,
		    aicm_read_strerror(errno, IMP_MAX_MODEL, tmp, sizeof tmp));
		rc = 2;
		goto done;
	}
	wdir = weights_dir(strcmp(out, "-") == 0 ? "stdout" : out);
	modeldir = cli_data_dir(NULL, in);
	outparent = cli_data_dir(NULL, out);
	{
		const char *slash = strrchr(wdir, '/');

		o.weights = slash ? slash + 1 : wdir;
	}
	o.model_dir = modeldir;
	o.shapes = shapes;
	o.nshapes = nshapes;
	o.binds = binds;
	o.nbinds = nbinds;
	rc = imp_onnx(buf, len, &o, &r, err);
	free(buf);
	if (rc != 0) {
		if (rc == 1)
			fprintf(stderr, "aicm-import: %s\n", err);
		else
			fprintf(stderr, "aicm-import: error: %s: %s\n", in, err);
		rc = 1;
		goto done;
	}
	if (r.nw && strcmp(out, "-") == 0) {
		fprintf(stderr, "aicm-import: error: the model has %d tensors of more than %d "
		    "elements, which go to .npy files: give -o FILE\n", r.nw, IR_MAX_VALUES);
		rc = 2;
	} else if ((rc = write_weights(&r, outparent)) == 0) {
		size_t n;
		char *text = ir_print_str(r.g, &n);

		if (strcmp(out, "-") == 0) {
			fwrite(text, 1, n, stdout);
			rc = cli_flush_stdout();
		} else if (aicm_write_file(out, text, n) != 0) {
			fprintf(stderr, "aicm-import: error: cannot write '%s': %s\n", out,
			    strerror(errno));
			rc = 2;
		}
		free(text);
	}
	imp_result_free(&r);
done:
	for (int k = 0; k < nbinds; k++) {
		exec_tensor_free(&bound[k]);
		free((char *)binds[k].name);
		free((char *)binds[k].err);
	}
	for (int k = 0; k < nshapes; k++)
		free((char *)shapes[k].name);
	free(shapes);
	free(binds);
	free(bound);
	free(wdir);
	free(modeldir);
	free(outparent);
	return rc;
}
