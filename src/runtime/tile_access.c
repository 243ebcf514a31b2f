/*
 * tile_access.c: loads, stores and atomics, the only instructions that
 * touch tensors (tile_priv.h has the executor's map).
 *
 * An access's indices give the tile's offset in its tensor and, clipped to
 * the tensor's bounds, its valid box.  A load copies its tile into the
 * worker's buffer, converting the element type if the tensor's differs,
 * and fills masked-off lanes with its `other`; a load that the plan marked
 * dense or a view reads the tensor in place instead, one of a prepacked
 * const points at its block of the plan's packs (tx_prepack, before the
 * kernel runs), and one it memoised reuses the tile this thread packed for
 * an earlier program.  A store
 * writes its tile's valid box; one of long rows into a tensor larger than
 * the caches streams past them.  An atomic reads and writes each element
 * (an add or a max, scalar.h's combining step); on several threads it is
 * logged per program and applied after the grid in program order
 * (tile_run.c), so that the result is bitwise one thread's.
 */
#include <stdlib.h>
#include <string.h>

#include "simd.h"
#include "tile_priv.h"

/* The tile coords' offset into the tensor and the valid box of an access
 * of tile shape sh at the instruction's indices. */
static int64_t
access_box(const Worker *w, const TileInst *in, const PAccess *a, const int64_t *sh,
    int64_t *valid, int64_t *off)
{
	int64_t base = a->base0;

	for (int d = 0; d < 4; d++) {
		valid[d] = sh[d];
		off[d] = 0;
	}
	for (int k = 0; k < a->rank; k++) {
		int64_t o = tx_eval_idx(w, &in->idx[k]), left = a->dim[k] - o;
		int d = a->pad + k;

		if (o < 0)
			AICM_BUG("a negative tile offset survived the verifier");
		if (d < 0) {
			/* a leading dim of extent 1 past the four a tile holds:
			 * its offset only moves the base */
			if (left < 1) {
				if (!in->masked)
					AICM_BUG("an unmasked access out of bounds survived the verifier");
				valid[0] = 0;
			}
			base += o * a->lstr[k];
			continue;
		}
		off[d] = o;
		if (left < sh[d]) {
			if (!in->masked)
				AICM_BUG("an unmasked access out of bounds survived the verifier");
			valid[d] = left < 0 ? 0 : left;
		}
		base += o * a->tstr[d];
	}
	return base;
}

/* The elements a load of valid box valid reads: a dim of stride 0 (an
 * expand folded in as a view) reads one element however many lanes it
 * fills (docs/tiled.md "Traffic rules": once per tile that touches it). */
static int64_t
distinct(const int64_t *valid, const int64_t *s)
{
	int64_t n = 1;

	for (int d = 0; d < 4; d++)
		n *= s[d] == 0 && valid[d] > 1 ? 1 : valid[d];
	return n;
}

/* Lanes [from, to) of a tile row get the load's other.  A loop per
 * element type, with the value converted once: a masked tile is often
 * mostly lanes off the tensor (a copy kernel's rows past a short dim), and
 * tset's per-lane branch made filling them cost more than the copy. */
static void
fill_other(const PKernel *k, const TileInst *in, void *row, int64_t from, int64_t to)
{
	if (k->ik) {
		for (int64_t i3 = from; i3 < to; i3++)
			tseti(row, i3, in->other.i, k->dt);
	} else if (k->f32) {
		float v = (float)in->other.d, *r = row;
		uint32_t bits;

		memcpy(&bits, &v, sizeof bits);
		if (bits == 0 && to > from)   /* +0.0, the usual other: a memset */
			memset(r + from, 0, sizeof *r * (size_t)(to - from));
		else
			for (int64_t i3 = from; i3 < to; i3++)
				r[i3] = v;
	} else {
		double v = in->other.d, *r = row;
		uint64_t bits;

		memcpy(&bits, &v, sizeof bits);
		if (bits == 0 && to > from)
			memset(r + from, 0, sizeof *r * (size_t)(to - from));
		else
			for (int64_t i3 = from; i3 < to; i3++)
				r[i3] = v;
	}
}

/* Copies the tile of load in (shape sh, tensor strides s) at element
 * base of src, valid box valid, into o: rows by memcpy where the element
 * types agree and the row is contiguous, else lane by lane converted;
 * lanes off the box get other. */
static void
pack_tile(const PKernel *k, const TileInst *in, const PAccess *a, const int64_t *sh,
    const Tensor *src, int64_t base, const int64_t *valid, void *o)
{
	const int64_t *s = a->tstr;
	size_t es = k->es;

	/* A transposed view (the tile's rows run along the tensor's rows,
	 * its columns across them: attention's K) in blocks of 16 columns,
	 * so that the 16 tensor rows being read and the tile rows being
	 * written stay in L1; lane by lane it missed on every read. */
	if (s[2] == 1 && s[3] > 1 && sh[2] > 1 && src->dt == k->dt && k->f32) {
		for (int64_t i0 = 0; i0 < sh[0]; i0++)
			for (int64_t i1 = 0; i1 < sh[1]; i1++) {
				bool in_box = i0 < valid[0] && i1 < valid[1];
				int64_t v2 = in_box ? valid[2] : 0, v3 = in_box ? valid[3] : 0;
				float *t0 = (float *)o + (i0 * sh[1] + i1) * sh[2] * sh[3];
				const float *e0 = (const float *)src->data + base + i0 * s[0] + i1 * s[1];

				for (int64_t j0 = 0; j0 < v3; j0 += 16) {
					int64_t j1 = v3 - j0 < 16 ? v3 : j0 + 16;

					for (int64_t i2 = 0; i2 < v2; i2++)
						for (int64_t j = j0; j < j1; j++)
							t0[i2 * sh[3] + j] = e0[i2 + j * s[3]];
				}
				for (int64_t i2 = 0; i2 < sh[2]; i2++)
					fill_other(k, in, t0 + i2 * sh[3], i2 < v2 ? v3 : 0, sh[3]);
			}
		return;
	}
	for (int64_t i0 = 0; i0 < sh[0]; i0++)
		for (int64_t i1 = 0; i1 < sh[1]; i1++)
			for (int64_t i2 = 0; i2 < sh[2]; i2++) {
				void *row = at(o, ((i0 * sh[1] + i1) * sh[2] + i2) * sh[3], es);
				bool in_box = i0 < valid[0] && i1 < valid[1] && i2 < valid[2];
				int64_t e = base + i0 * s[0] + i1 * s[1] + i2 * s[2], v3 = in_box ? valid[3] : 0;

				/* one element needs no stride (a rank-0 tensor has none):
				 * copied as bytes too, exact for every element type */
				if ((s[3] == 1 || v3 <= 1) && src->dt == k->dt)
					memcpy(row, at(src->data, e, es), es * (size_t)v3);
				else if (src->dt == k->dt && k->f32)
					/* strided lanes of the tile's own type (a
					 * transposed view: attention's K) without
					 * exec_get's per-lane type switch */
					for (int64_t i3 = 0; i3 < v3; i3++)
						((float *)row)[i3] = ((const float *)src->data)[e + i3 * s[3]];
				else if (src->dt == k->dt && k->dt == DT_F64)
					for (int64_t i3 = 0; i3 < v3; i3++)
						((double *)row)[i3] = ((const double *)src->data)[e + i3 * s[3]];
				else if (k->ik)
					for (int64_t i3 = 0; i3 < v3; i3++)
						tseti(row, i3, exec_geti(src, e + i3 * s[3]), k->dt);
				else
					for (int64_t i3 = 0; i3 < v3; i3++)
						tset(row, i3, exec_get(src, e + i3 * s[3]), k->f32);
				fill_other(k, in, row, v3, sh[3]);
			}
}

void
tx_prepack(const PKernel *k, int i, const Tensor *src)
{
	const TileInst *in = &k->f->insts[i];
	PAccess *a = (PAccess *)&k->acc[i];
	const int64_t *sh = k->tile[in->res].sh;
	int64_t b[4], nb = a->pblk[0] * a->pblk[1] * a->pblk[2] * a->pblk[3], q = 0;

	if (!a->pk) {
		a->pk = aligned_alloc(EXEC_ALIGN, (size_t)nb * a->pk_tile);
		if (!a->pk)
			AICM_BUG("out of memory (%zu bytes)", (size_t)nb * a->pk_tile);
	}
	for (b[0] = 0; b[0] < a->pblk[0]; b[0]++)
		for (b[1] = 0; b[1] < a->pblk[1]; b[1]++)
			for (b[2] = 0; b[2] < a->pblk[2]; b[2]++)
				for (b[3] = 0; b[3] < a->pblk[3]; b[3]++, q++) {
					int64_t valid[4], base = a->base0;

					for (int d = 0; d < 4; d++) {
						int64_t off = b[d] * sh[d], left = a->tdim[d] - off;

						valid[d] = left < sh[d] ? left : sh[d];
						base += off * a->tstr[d];
					}
					pack_tile(k, in, a, sh, src, base, valid, a->pk + (size_t)q * a->pk_tile);
				}
	a->pk_src = src->data;
}

/* The packed block of a prepacked load at tile offsets off, or NULL when
 * off is not on a block's corner (the plan proved it is, so this is a
 * check, not a path). */
static void *
prepacked(const PAccess *a, const int64_t *sh, const int64_t *off)
{
	int64_t q = 0;

	for (int d = 0; d < 4; d++) {
		if (off[d] % sh[d] != 0 || off[d] / sh[d] >= a->pblk[d])
			return NULL;
		q = q * a->pblk[d] + off[d] / sh[d];
	}
	return a->pk + (size_t)q * a->pk_tile;
}

int
tx_load(Worker *w, const TileInst *in, int i)
{
	const PKernel *k = w->k;
	const PAccess *a = &k->acc[i];
	const PTile *t = &k->tile[in->res];
	int64_t *valid = w->valid[in->res], off[4];
	int64_t base = access_box(w, in, a, t->sh, valid, off);
	const Tensor *src = &w->vals[a->node];
	void *o;

	w->rd += distinct(valid, a->tstr) * (int64_t)ir_dtype_size(src->dt);
	if ((a->dense || a->view) && box(valid) == t->n) {
		w->p[in->res] = at(src->data, base, k->es);   /* read in place */
		w->ld[in->res] = a->dense ? t->sh[3] : a->tstr[2];
		return i + 1;
	}
	w->ld[in->res] = t->sh[3];
	if (a->pk && (o = prepacked(a, t->sh, off))) {
		w->p[in->res] = o;   /* packed before the run (exec_tile_run) */
		return i + 1;
	}
	if (a->memo) {
		int64_t slot = a->slot0 + w->mcnt[i]++ % a->memo;

		o = w->p[in->res] = w->buf + a->memo_off +
		    (size_t)(slot - a->slot0) * a->memo_bytes;
		if (!memcmp(w->mkey[slot], off, sizeof off))
			return i + 1;   /* packed by this thread for an earlier program */
		memcpy(w->mkey[slot], off, sizeof off);
	} else {
		o = w->p[in->res] = w->buf + t->off * k->les;
	}
	pack_tile(k, in, a, t->sh, src, base, valid, o);
	return i + 1;
}

/* Logs one atomic element: v, or for an integer kernel iv (exactly). */
static void
atom_log(Worker *w, int64_t idx, double v, int64_t iv, int op)
{
	AtomLog *l = &w->logs[w->prog];

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->idx = xrealloc(l->idx, sizeof *l->idx * (size_t)l->cap);
		l->val = xrealloc(l->val, sizeof *l->val * (size_t)l->cap);
		l->ival = xrealloc(l->ival, sizeof *l->ival * (size_t)l->cap);
	}
	l->idx[l->n] = idx;
	l->ival[l->n] = iv;
	l->val[l->n++] = v;
	l->op = op;
}

int
tx_store(Worker *w, const TileInst *in, int i)
{
	const PKernel *k = w->k;
	const PAccess *a = &k->acc[i];
	int v = in->in[0];
	const PTile *t = &k->tile[v];
	int64_t valid[4], off[4], base = access_box(w, in, a, t->sh, valid, off);
	Tensor *dst = &w->vals[a->node];
	const void *src = w->p[v];
	const int64_t *sh = t->sh, *s = a->tstr, *vv = w->valid[v];
	size_t es = k->es;
	int64_t n;

	for (int d = 0; d < 4; d++)
		if (vv[d] < valid[d])
			valid[d] = vv[d];
	for (int64_t i0 = 0; i0 < valid[0]; i0++)
		for (int64_t i1 = 0; i1 < valid[1]; i1++)
			for (int64_t i2 = 0; i2 < valid[2]; i2++) {
				const void *row = at(src, ((i0 * sh[1] + i1) * sh[2] + i2) * sh[3], es);
				int64_t e = base + i0 * s[0] + i1 * s[1] + i2 * s[2];

				if (in->op == TO_STORE && (s[3] == 1 || valid[3] <= 1) &&
				    dst->dt == k->dt) {
					if (a->stream)
						simd_copy_stream(at(dst->data, e, es), row,
						    es * (size_t)valid[3]);
					else
						memcpy(at(dst->data, e, es), row, es * (size_t)valid[3]);
					continue;
				}
				for (int64_t i3 = 0; k->ik && i3 < valid[3]; i3++) {
					int64_t ei = e + i3 * s[3], x = tgeti(row, i3, k->dt);

					if (in->op == TO_STORE)
						exec_seti(dst, ei, x);
					else if (w->logs)
						atom_log(w, ei, 0, x, in->op);
					else
						atom_apply_i(dst, ei, x, in->op);
				}
				for (int64_t i3 = 0; !k->ik && i3 < valid[3]; i3++) {
					int64_t ei = e + i3 * s[3];
					double x = tget(row, i3, k->f32);

					if (in->op == TO_STORE)
						exec_set(dst, ei, x);
					else if (w->logs)
						atom_log(w, ei, x, 0, in->op);
					else
						atom_apply(dst, ei, x, in->op);
				}
			}
	n = box(valid) * (int64_t)ir_dtype_size(dst->dt);
	w->wr += n;
	if (in->op != TO_STORE)
		w->rd += n;
	return i + 1;
}

/* Where store i's tile starts in its tensor when the tile, and the valid
 * box of the value it stores, lie wholly inside the tensor in the
 * kernel's element type; else NULL.  tx_store_target and tx_store_rows
 * add what they need of the tensor's strides. */
static char *
store_inside(Worker *w, int i)
{
	const PKernel *k = w->k;
	const TileInst *in = &k->f->insts[i];
	const PAccess *a = &k->acc[i];
	const PTile *t = &k->tile[in->in[0]];
	int64_t valid[4], off[4], base = access_box(w, in, a, t->sh, valid, off);
	Tensor *dst = &w->vals[a->node];

	if (dst->dt != k->dt)
		return NULL;
	for (int d = 0; d < 4; d++)
		if (valid[d] < t->sh[d] || w->valid[in->in[0]][d] < t->sh[d])
			return NULL;
	return at(dst->data, base, k->es);
}

/* Where store i puts its whole tile as one contiguous run of the
 * tensor's elements, or NULL if it does not (a ragged edge, strides, a
 * conversion): then it is done the ordinary way. */
char *
tx_store_target(Worker *w, int i)
{
	const PKernel *k = w->k;
	const PAccess *a = &k->acc[i];
	char *dst = store_inside(w, i);

	if (!dst || a->tstr[3] != 1 || !whole(a->tstr, k->tile[k->f->insts[i].in[0]].sh))
		return NULL;
	return dst;
}

/* Where store i puts its tile a row at a time (each row contiguous in the
 * tensor, rs[] the tensor's strides of the outer three dims), or NULL. */
char *
tx_store_rows(Worker *w, int i, int64_t *rs)
{
	const PKernel *k = w->k;
	const TileInst *in = &k->f->insts[i];
	const PAccess *a = &k->acc[i];
	char *dst = store_inside(w, i);

	if (!dst || in->op != TO_STORE || (a->tstr[3] != 1 && k->tile[in->in[0]].sh[3] > 1))
		return NULL;
	for (int d = 0; d < 3; d++)
		rs[d] = a->tstr[d];
	return dst;
}
