/*
 * interp_window.c: the reference kernels of the windowed ops (conv2d and
 * the pools), DESIGN §12.
 *
 * Direct loops over the window, the oracle for the tile engine's implicit
 * GEMM and windowed reductions: each output element accumulates in f64 in
 * the order (channel, ky, kx) and is rounded once.  The geometry comes from
 * ir_window, the shape rule's own code, so defaults and the ceil_mode rule
 * are the shape rule's.  A window position outside the input is padding:
 * conv2d reads 0 there, max_pool2d -inf, and avg_pool2d skips it and
 * divides by ir_pool_count.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "exec.h"
#include "window.h"

static int
geometry(const Node *n, const Tensor *const *in, Window *win, char *err)
{
	Type x = exec_tensor_type(in[0]), w, b;
	Loc at;

	if (n->op == OP_CONV2D) {
		w = exec_tensor_type(in[1]);
		if (n->nin > 2)
			b = exec_tensor_type(in[2]);
	}
	return ir_window(n, &x, n->op == OP_CONV2D ? &w : NULL,
	    n->op == OP_CONV2D && n->nin > 2 ? &b : NULL, win, err, &at);
}

int
exec_kern_CONV2D(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	const Tensor *x = in[0], *w = in[1];
	Window v;
	int64_t cg, fg;

	if (geometry(n, in, &v, err) != 0)
		return -1;
	cg = v.c / v.groups, fg = v.f / v.groups;
	for (int64_t b = 0; b < v.n; b++)
		for (int64_t f = 0; f < v.f; f++) {
			int64_t c0 = f / fg * cg;
			double bias = v.bias ? exec_get(in[2], f) : 0;

			for (int64_t oy = 0; oy < v.oh; oy++)
				for (int64_t ox = 0; ox < v.ow; ox++) {
					double acc = 0;

					for (int64_t c = 0; c < cg; c++)
						for (int64_t i = 0; i < v.kh; i++) {
							int64_t y = oy * v.sh - v.pt + i * v.dh;

							if (y < 0 || y >= v.h)
								continue;
							for (int64_t j = 0; j < v.kw; j++) {
								int64_t xx = ox * v.sw - v.pl + j * v.dw;

								if (xx < 0 || xx >= v.w)
									continue;
								acc += exec_get(x, ((b * v.c + c0 + c) * v.h + y) *
								    v.w + xx) * exec_get(w, ((f * cg + c) * v.kh + i) *
								    v.kw + j);
							}
						}
					exec_set(o, ((b * v.f + f) * v.oh + oy) * v.ow + ox, acc + bias);
				}
		}
	return 0;
}

static int
pool(const Node *n, const Tensor *const *in, Tensor *o, char *err, bool max)
{
	const Tensor *x = in[0];
	Window v;

	if (geometry(n, in, &v, err) != 0)
		return -1;
	for (int64_t p = 0; p < v.n * v.c; p++)
		for (int64_t oy = 0; oy < v.oh; oy++)
			for (int64_t ox = 0; ox < v.ow; ox++) {
				double acc = max ? -INFINITY : 0;

				for (int64_t i = 0; i < v.kh; i++) {
					int64_t y = oy * v.sh - v.pt + i * v.dh;

					if (y < 0 || y >= v.h)
						continue;
					for (int64_t j = 0; j < v.kw; j++) {
						int64_t xx = ox * v.sw - v.pl + j * v.dw;
						double e;

						if (xx < 0 || xx >= v.w)
							continue;
						e = exec_get(x, (p * v.h + y) * v.w + xx);
						/* NaN propagates, as numpy's max does */
						if (max)
							acc = e > acc || e != e ? e : acc;
						else
							acc += e;
					}
				}
				if (!max)
					acc /= (double)ir_pool_count(&v, oy, ox);
				exec_set(o, (p * v.oh + oy) * v.ow + ox, acc);
			}
	return 0;
}

int
exec_kern_MAX_POOL2D(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	return pool(n, in, o, err, true);
}

int
exec_kern_AVG_POOL2D(const Node *n, const Tensor *const *in, Tensor *o, char *err)
{
	return pool(n, in, o, err, false);
}
