/*
 * main.c: the AOT test's program (tests/aot.sh, docs/codegen.md): a
 * model compiled ahead of time by `aicm-opt --emit=c -o mlp.c`, linked
 * into a plain C program and called.  The inputs are read from raw f64
 * files (x.bin, W.bin, b.bin in the folder argv[1]), which the test also
 * hands to aicm-run's reference interpreter as .npy files; the outputs go
 * to y.bin and p.bin there, and a line of each output's sum to stdout.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mlp.h"

static int
io(const char *dir, const char *name, void *p, size_t n, int write)
{
	char path[4096];
	FILE *f;
	size_t got;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, write ? "wb" : "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	got = write ? fwrite(p, sizeof(double), n, f) : fread(p, sizeof(double), n, f);
	fclose(f);
	return got == n ? 0 : -1;
}

int
main(int argc, char **argv)
{
	static double x[mlp_x_NUMEL], W[mlp_W_NUMEL], b[mlp_b_NUMEL];
	static double y[mlp_y_NUMEL], p[mlp_p_NUMEL];
	mlp_args a = {.x = x, .W = W, .b = b, .y = y, .p = p};
	double sy = 0, sp = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: main DIR\n");
		return 2;
	}
	if (io(argv[1], "x.bin", x, mlp_x_NUMEL, 0) || io(argv[1], "W.bin", W, mlp_W_NUMEL, 0) ||
	    io(argv[1], "b.bin", b, mlp_b_NUMEL, 0))
		return 2;
	if (mlp_run(&a, 2) != 0) {
		fprintf(stderr, "mlp_run failed\n");
		return 1;
	}
	for (int i = 0; i < mlp_y_NUMEL; i++)
		sy += y[i];
	for (int i = 0; i < mlp_p_NUMEL; i++)
		sp += p[i];
	printf("y: sum %.6f\np: sum %.6f (8 rows of a softmax)\n", sy, sp);
	return io(argv[1], "y.bin", y, mlp_y_NUMEL, 1) || io(argv[1], "p.bin", p, mlp_p_NUMEL, 1);
}
