/*
 * tile_arg.c: the executor of argmax and argmin (tile_priv.h has the
 * executor's map; docs/tiled.md the ops).
 *
 * The tile IR's loops carry one value, and an arg reduction needs two (the
 * best value so far and its index), so argmax and argmin are ops that
 * read their tensor themselves, as window_max does: each lane of the i64
 * result tile scans its whole line of the tensor along the axis, carrying
 * the best value and its index in registers, and keeps the winner's index.
 * The values are compared in the tensor's own type (floats as doubles,
 * which is exact for f32; integers as int64, exactly), by the reference's
 * rule (scalar.h's ir_scalar_arg_wins: the first NaN wins; last=True lets
 * a later equal value win), so the result is the reference's bit for bit.
 * A row of lanes that lies along the tensor's rows is scanned axis-outer,
 * so that each step of the scan reads contiguous lanes; a lane whose line
 * is contiguous (the axis is the tensor's last dim) is scanned along it.
 * KernelStats: the valid lanes' lines are reads, in the tensor's own
 * element size, and one flop per element read (DESIGN §7: one per input
 * element of a reduction); the cost model counts the same (cost.c).
 */
#include <string.h>

#include "tile_priv.h"

enum { CHUNK = 256 };            /* lanes of one axis-outer scan */

/* Element e of tensor data p of type dt, for the float and the integer
 * scans. */
static inline double
getf(const void *p, int64_t e, bool f32)
{
	return f32 ? (double)((const float *)p)[e] : ((const double *)p)[e];
}

/* n lanes from element p0 of x (lane stride ls), each scanning len
 * elements at stride as; the winners' indices into o[0..n). */
static void
scan_float(const Tensor *x, OpId op, bool last, int64_t p0, int64_t n, int64_t ls,
    int64_t len, int64_t as, int64_t *o)
{
	bool f32 = x->dt == DT_F32;
	double best[CHUNK];

	for (int64_t q0 = 0; q0 < n; q0 += CHUNK) {
		int64_t m = n - q0 < CHUNK ? n - q0 : CHUNK, b = p0 + q0 * ls;

		for (int64_t q = 0; q < m; q++) {
			best[q] = getf(x->data, b + q * ls, f32);
			o[q0 + q] = 0;
		}
		for (int64_t r = 1; r < len; r++) {
			int64_t e = b + r * as;

			for (int64_t q = 0; q < m; q++) {
				double v = getf(x->data, e + q * ls, f32);

				if (ir_scalar_arg_wins(op, v, best[q], last)) {
					best[q] = v;
					o[q0 + q] = r;
				}
			}
		}
	}
}

static void
scan_int(const Tensor *x, OpId op, bool last, int64_t p0, int64_t n, int64_t ls,
    int64_t len, int64_t as, int64_t *o)
{
	bool mx = op == OP_ARGMAX;
	int64_t best[CHUNK];

	for (int64_t q0 = 0; q0 < n; q0 += CHUNK) {
		int64_t m = n - q0 < CHUNK ? n - q0 : CHUNK, b = p0 + q0 * ls;

		for (int64_t q = 0; q < m; q++) {
			best[q] = tgeti(x->data, b + q * ls, x->dt);
			o[q0 + q] = 0;
		}
		for (int64_t r = 1; r < len; r++) {
			int64_t e = b + r * as;

			for (int64_t q = 0; q < m; q++) {
				int64_t v = tgeti(x->data, e + q * ls, x->dt);

				if (v == best[q] ? last : mx ? v > best[q] : v < best[q]) {
					best[q] = v;
					o[q0 + q] = r;
				}
			}
		}
	}
}

int
tx_argreduce(Worker *w, const TileInst *in, int i)
{
	const PKernel *k = w->k;
	const PTile *t = &k->tile[in->res];
	const PAccess *a = &k->acc[i];
	const Tensor *x = &w->vals[a->node];
	int ax = (int)in->axis;
	int64_t len = a->dim[ax], as = a->lstr[ax], base = 0, v[4], lanes;
	OpId op = in->op == TO_ARGMAX ? OP_ARGMAX : OP_ARGMIN;
	bool flt = ir_dtype_is_float(x->dt);
	/* an i64 tile: 8 bytes an element in an i64 kernel and in a mixed one */
	int64_t *o = (int64_t *)(void *)(w->buf + t->off * k->les);

	memset(o, 0, sizeof(int64_t) * (size_t)t->n);
	for (int d = 0; d < 4; d++)
		v[d] = t->sh[d];
	for (int td = 0; td < a->rank; td++) {
		int64_t s = tx_eval_idx(w, &in->idx[td]), d = a->pad + td, room = a->dim[td] - s;

		base += s * a->lstr[td];
		if (d < 0) {             /* before the last four: extent 1 */
			if (room < 1)
				v[0] = 0;
			continue;
		}
		v[d] = room < 0 ? 0 : room < v[d] ? room : v[d];
	}
	lanes = box(v);
	w->p[in->res] = o;
	w->ld[in->res] = t->sh[3];
	memcpy(w->valid[in->res], v, sizeof v);
	if (lanes == 0 || len == 0)
		return i + 1;
	for (int64_t l0 = 0; l0 < v[0]; l0++)
		for (int64_t l1 = 0; l1 < v[1]; l1++)
			for (int64_t l2 = 0; l2 < v[2]; l2++) {
				int64_t p0 = base + l0 * a->tstr[0] + l1 * a->tstr[1] + l2 * a->tstr[2];
				int64_t *row = o + ((l0 * t->sh[1] + l1) * t->sh[2] + l2) * t->sh[3];

				if (flt)
					scan_float(x, op, in->last, p0, v[3], a->tstr[3], len, as, row);
				else
					scan_int(x, op, in->last, p0, v[3], a->tstr[3], len, as, row);
			}
	w->rd += lanes * len * (int64_t)ir_dtype_size(x->dt);
	w->fl += lanes * len;
	return i + 1;
}
