/*
 * tile_window.c: the executor of the windowed tile ops, im2col and
 * window_count (tile_priv.h has the executor's map; docs/tiled.md the ops).
 *
 * im2col packs the tile of conv2d's implicit im2col matrix that one K step
 * of the dot needs, [rows (channel, ky, kx), columns (output pixels)], into
 * the tile buffer that the dot's micro-kernel reads as its packed b: the
 * matrix itself never exists.  A row's pixels run along output rows, and
 * for one output row the input positions are one run of the input row
 * (stride sw), so a row is packed as a few runs: a memcpy where sw == 1
 * and the types agree, padding (other) where the window leaves the input.
 * Only positions inside the input are reads (KernelStats count them; the
 * cost model counts the same, cost.c).  A pool's taps are the same op with
 * KH = KW = 1 and the tap folded into the pads.  The pools themselves use
 * window_max and window_sum, which fold each tap into the result as they
 * read it (no tap tile, no pass of maximum or add over it); window_count
 * gives avg_pool2d its divisors from the geometry alone.
 */
#include <math.h>
#include <string.h>

#include "simd.h"
#include "tile_priv.h"

static void
fill(void *row, int64_t n, double v, bool f32)
{
	if (n <= 0)
		return;
	if (v == 0 && !signbit(v)) {
		memset(row, 0, (f32 ? sizeof(float) : sizeof(double)) * (size_t)n);
		return;
	}
	for (int64_t q = 0; q < n; q++)
		tset(row, q, v, f32);
}

int
tx_im2col(Worker *w, const TileInst *in, int i)
{
	const PKernel *k = w->k;
	const PTile *t = &k->tile[in->res];
	const Tensor *x = &w->vals[k->f->args[in->arg]];
	const int64_t *g = in->win;
	int64_t cg = g[0], kh = g[1], kw = g[2], oh = g[3], ow = g[4], sh = g[5], sw = g[6];
	int64_t pt = g[7], pl = g[8], dh = g[9], dw = g[10];
	int64_t H = x->dim[2], W = x->dim[3], kk = kh * kw;
	int64_t plane0 = tx_eval_idx(w, &in->idx[0]), k0 = tx_eval_idx(w, &in->idx[1]);
	int64_t p0 = tx_eval_idx(w, &in->idx[2]);
	int64_t rows = t->sh[2], cols = t->sh[3], vr = cg * kk - k0, vc = oh * ow - p0, reads = 0;
	bool f32 = k->f32, same = x->dt == k->dt;
	size_t es = k->es;
	double other = in->other.d;
	char *o = w->buf + t->off * k->les;

	vr = vr < 0 ? 0 : vr > rows ? rows : vr;
	vc = vc < 0 ? 0 : vc > cols ? cols : vc;
	w->p[in->res] = o;
	w->ld[in->res] = cols;
	for (int64_t r = 0; r < rows; r++) {
		char *row = o + (size_t)(r * cols) * es;
		int64_t q = k0 + r, c, ky, kx, dy, dx, p, j, oy_next = 0;

		if (r >= vr) {
			fill(row, cols, other, f32);
			continue;
		}
		c = q / kk;
		ky = q % kk / kw;
		kx = q % kw;
		dy = ky * dh - pt;
		dx = kx * dw - pl;
		if (f32 && same) {
			/* the common case, a whole row in one call */
			reads += simd_im2col_row_f32((float *)(void *)row, vc, p0, ow, sh, sw, dy, dx,
			    (const float *)x->data + (plane0 + c) * H * W, H, W, (float)other);
			fill(row + (size_t)vc * es, cols - vc, other, f32);
			continue;
		}
		/* output pixels p0 .. p0+vc, one output row's run at a time
		 * (the first may start inside a row; the others start at ox 0) */
		for (j = 0, p = p0; j < vc;) {
			int64_t oy = j ? oy_next : p / ow, ox = j ? 0 : p % ow, seg = ow - ox;
			int64_t y = oy * sh + dy, base;

			oy_next = oy + 1;
			char *dst = row + (size_t)j * es;

			if (seg > vc - j)
				seg = vc - j;
			base = y < 0 || y >= H ? 0 : ((plane0 + c) * H + y) * W;
			if (y < 0 || y >= H) {
				fill(dst, seg, other, f32);
			} else if (sw == 1) {
				/* x positions ox+dx .. ox+dx+seg: a left pad, a run, a right pad */
				int64_t x0 = ox + dx, lo = x0 < 0 ? -x0 : 0, hi = W - x0;

				if (lo > seg)
					lo = seg;
				hi = hi < lo ? lo : hi > seg ? seg : hi;
				fill(dst, lo, other, f32);
				if (same && f32)
					simd_gather_f32(hi - lo, (const float *)x->data + base + x0 + lo, 1,
					    (float *)(void *)dst + lo);
				else if (same)
					memcpy(dst + (size_t)lo * es, (const char *)x->data +
					    (size_t)(base + x0 + lo) * es, (size_t)(hi - lo) * es);
				else
					for (int64_t e = lo; e < hi; e++)
						tset(dst, e, exec_get(x, base + x0 + e), f32);
				fill(dst + (size_t)hi * es, seg - hi, other, f32);
				reads += hi - lo;
			} else {
				/* the positions inside the input are one strided run,
				 * e in [lo, hi): (ox + e)*sw + dx in [0, W) */
				int64_t x0 = ox * sw + dx;
				int64_t lo = x0 >= 0 ? 0 : (-x0 + sw - 1) / sw;
				int64_t hi = x0 >= W ? 0 : (W - x0 + sw - 1) / sw;

				hi = hi > seg ? seg : hi;
				if (f32 && same && hi > lo) {
					fill(dst, lo, other, f32);
					simd_gather_f32(hi - lo, (const float *)x->data + base + x0 + lo * sw,
					    sw, (float *)(void *)dst + lo);
					fill(dst + (size_t)hi * es, seg - hi, other, f32);
					reads += hi - lo;
					j += seg;
					p += seg;
					continue;
				}
				for (int64_t e = 0; e < seg; e++) {
					int64_t xx = (ox + e) * sw + dx;

					if (xx < 0 || xx >= W) {
						tset(dst, e, other, f32);
						continue;
					}
					reads++;
					if (f32 && same)
						((float *)(void *)dst)[e] = ((const float *)x->data)[base + xx];
					else
						tset(dst, e, exec_get(x, base + xx), f32);
				}
			}
			j += seg;
			p += seg;
		}
		fill(row + (size_t)vc * es, cols - vc, other, f32);
	}
	w->valid[in->res][0] = w->valid[in->res][1] = 1;
	w->valid[in->res][2] = vr;
	w->valid[in->res][3] = vc;
	w->rd += reads * (int64_t)es;
	return i + 1;
}

/* window_max, window_sum: a [planes, pixels] tile of max_pool2d's or
 * avg_pool2d's (not yet divided) result, each tap folded in as it is read
 * (the f32 rows in simd_pool_row_f32).  Reads and flops are the taps' as
 * im2col with maximum or add counted them: the taps inside the input, and
 * KH*KW per valid output. */
int
tx_window_reduce(Worker *w, const TileInst *in, int i)
{
	const PKernel *k = w->k;
	const PTile *t = &k->tile[in->res];
	const Tensor *x = &w->vals[k->f->args[in->arg]];
	const int64_t *g = in->win;
	int64_t kh = g[1], kw = g[2], oh = g[3], ow = g[4], sh = g[5], sw = g[6];
	int64_t pt = g[7], pl = g[8], dh = g[9], dw = g[10];
	int64_t H = x->dim[2], W = x->dim[3];
	int64_t plane0 = tx_eval_idx(w, &in->idx[0]), p0 = tx_eval_idx(w, &in->idx[1]);
	int64_t rows = t->sh[2], cols = t->sh[3], vr = g[0] - plane0, vc = oh * ow - p0, reads = 0;
	bool f32 = k->f32, same = x->dt == k->dt, mx = in->op == TO_WINDOW_MAX;
	size_t es = k->es;
	double init = mx ? -INFINITY : 0;
	char *o = w->buf + t->off * es;

	vr = vr < 0 ? 0 : vr > rows ? rows : vr;
	vc = vc < 0 ? 0 : vc > cols ? cols : vc;
	w->p[in->res] = o;
	w->ld[in->res] = cols;
	for (int64_t r = 0; r < rows; r++) {
		char *row = o + (size_t)(r * cols) * es;
		int64_t base = (plane0 + r) * H * W;

		if (r >= vr) {
			fill(row, cols, init, f32);
			continue;
		}
		if (f32 && same) {
			reads += simd_pool_row_f32((float *)(void *)row, vc, p0, g,
			    (const float *)x->data + base, H, W, mx);
			fill(row + (size_t)vc * es, cols - vc, init, f32);
			continue;
		}
		for (int64_t j = 0; j < vc; j++) {
			int64_t oy = (p0 + j) / ow, ox = (p0 + j) % ow;
			double acc = init;

			for (int64_t ky = 0; ky < kh; ky++) {
				int64_t y = oy * sh + ky * dh - pt;

				if (y < 0 || y >= H)
					continue;
				for (int64_t kx = 0; kx < kw; kx++) {
					int64_t xx = ox * sw + kx * dw - pl;
					double v;

					if (xx < 0 || xx >= W)
						continue;
					v = exec_get(x, base + y * W + xx);
					reads++;
					acc = !mx ? acc + v : v > acc || v != v ? v : acc;
				}
			}
			tset(row, j, acc, f32);
		}
		fill(row + (size_t)vc * es, cols - vc, init, f32);
	}
	w->valid[in->res][0] = w->valid[in->res][1] = 1;
	w->valid[in->res][2] = vr;
	w->valid[in->res][3] = vc;
	w->rd += reads * (int64_t)es;
	w->fl += kh * kw * vr * vc;
	return i + 1;
}

static int64_t
floordiv(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* The taps k < n of one axis whose coordinate o*s + k*d lies in [lo, hi):
 * k in [ceil((lo - o*s)/d), ceil((hi - o*s)/d)), in O(1). */
static int64_t
taps(int64_t o, int64_t s, int64_t n, int64_t d, int64_t lo, int64_t hi)
{
	int64_t a = -floordiv(o * s - lo, d), b = -floordiv(o * s - hi, d);

	a = a < 0 ? 0 : a;
	b = b > n ? n : b;
	return b > a ? b - a : 0;
}

int
tx_window_count(Worker *w, const TileInst *in, int i)
{
	const PKernel *k = w->k;
	const PTile *t = &k->tile[in->res];
	const int64_t *g = in->win;
	int64_t ow = g[1], p0 = tx_eval_idx(w, &in->idx[0]), cols = t->sh[3];
	int64_t vc = g[0] * ow - p0;
	char *o = w->buf + t->off * k->les;

	vc = vc < 0 ? 0 : vc > cols ? cols : vc;
	w->p[in->res] = o;
	w->ld[in->res] = cols;
	for (int64_t j = 0; j < cols; j++) {
		int64_t p = p0 + j, cnt = 1;    /* 1 past the end: no 0/0 in masked lanes */

		if (j < vc)
			cnt = taps(p / ow, g[2], g[4], g[6], g[8], g[9]) *
			    taps(p % ow, g[3], g[5], g[7], g[10], g[11]);
		tset(o, j, (double)cnt, k->f32);
	}
	w->valid[in->res][0] = w->valid[in->res][1] = w->valid[in->res][2] = 1;
	w->valid[in->res][3] = vc;
	return i + 1;
}
