/*
 * api_demo.c: the seed's mlp through libaicm, using only aicm.h.
 *
 *   cc -o api_demo api_demo.c $(pkg-config --cflags --libs aicm)
 *   ./api_demo mlp.aicm
 *
 * Reads the graph (the seed's scenario 1, testdata/demo/mlp.aicm, installed
 * as share/aicm/examples/mlp.aicm), runs aicm-run's full pipeline on it,
 * compiles it for the tile engine, runs it on an x of its own (the
 * constants W and bias are filled from seed 0, as aicm-run fills them), and
 * prints the result and what each kernel did.  Every call is checked: on
 * an error the library's message, located in the file, goes to stderr and
 * the program exits 1.  make check runs it and compares its output with
 * examples/api_demo.out; docs/api.md walks through it.
 */
#include <stdio.h>
#include <stdlib.h>

#include <aicm.h>

static aicm_context *ctx;

/* Ends the program with the library's message when st is not AICM_OK. */
static void
check(aicm_status st)
{
	if (st != AICM_OK) {
		fputs(aicm_error(ctx), stderr);
		exit(1);
	}
}

/* The whole of the file at path, NUL-terminated; *len its length. */
static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f) {
		perror(path);
		exit(2);
	}
	do {
		if (n + 4096 + 1 > cap && !(buf = realloc(buf, cap = 2 * cap + 4096 + 1))) {
			perror("realloc");
			exit(2);
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got > 0);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

int
main(int argc, char **argv)
{
	aicm_module *m;
	aicm_program *p;
	aicm_tensor x, y = {0};
	aicm_kernel_stats s;
	double sum = 0;
	size_t len;
	char *text;

	if (argc != 2) {
		fprintf(stderr, "usage: api_demo FILE.aicm\n");
		return 2;
	}
	if (aicm_version() / 10000 != AICM_VERSION_MAJOR) {
		fprintf(stderr, "api_demo: built for libaicm %d, running with %s\n",
		    AICM_VERSION_MAJOR, aicm_version_string());
		return 2;
	}
	printf("libaicm %s\n", aicm_version_string());
	if (!(ctx = aicm_context_new()))
		return 3;
	text = slurp(argv[1], &len);
	check(aicm_parse(ctx, text, len, argv[1], &m));
	check(aicm_module_run_passes(m, "shape-infer,fuse,autotune,lower-tiled"));
	check(aicm_compile(m, AICM_ENGINE_TILE, &p));

	/* x: the graph's one input, described by the program */
	check(aicm_program_input(p, 0, &x));
	{
		int64_t n = 1;

		for (int k = 0; k < x.rank; k++)
			n *= x.shape[k];
		if (x.dtype != AICM_F64) {
			fprintf(stderr, "api_demo: '%%%s' is not f64\n", x.name);
			return 1;
		}
		x.data = malloc(sizeof(double) * (size_t)n);
		for (int64_t i = 0; i < n; i++)
			((double *)x.data)[i] = (double)(i % 7) * 0.25 - 0.75;
		printf("input %%%s: %lld values, (i %% 7) * 0.25 - 0.75\n", x.name, (long long)n);
	}
	/* y: data NULL, so the library allocates it and says its shape */
	check(aicm_program_run(p, &x, 1, &y, 1));
	printf("output %%%s: (", y.name);
	for (int k = 0; k < y.rank; k++)
		printf("%s%lld", k ? ", " : "", (long long)y.shape[k]);
	printf(")\n");
	for (int64_t i = 0; i < y.shape[0]; i++) {
		double v = ((double *)y.data)[i];

		sum += v;
		if (i < 4 || i == y.shape[0] - 1)
			printf("  [%lld] %.6g\n", (long long)i, v);
		else if (i == 4)
			printf("  ...\n");
	}
	printf("  sum %.6g\n", sum);

	printf("%-8s %-16s %-10s %8s %10s %10s %10s\n", "kernel", "kind", "grid", "programs",
	    "read", "written", "flops");
	for (int k = 0, nk = aicm_program_num_kernels(p); k <= nk; k++) {
		char grid[32] = "";

		/* after the kernels, their totals (index -1) */
		check(aicm_program_kernel_stats(p, k < nk ? k : -1, &s));
		if (k < nk)
			snprintf(grid, sizeof grid, "%lldx%lldx%lld", (long long)s.grid[0],
			    (long long)s.grid[1], (long long)s.grid[2]);
		printf("%-8s %-16s %-10s %8lld %10lld %10lld %10lld\n", s.name, s.kind, grid,
		    (long long)s.programs,
		    (long long)s.bytes_read, (long long)s.bytes_written, (long long)s.flops);
	}
	aicm_free(y.data);
	free(x.data);
	aicm_program_free(p);
	aicm_module_free(m);
	aicm_context_free(ctx);
	free(text);
	return 0;
}
