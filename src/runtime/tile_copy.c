/*
 * tile_copy.c: the copy programs' loads (load_pad, load_step,
 * load_gather) and broadcast, the tile ops that lower-tiled gives pad,
 * concat, slice, gather and expand (tile_priv.h has the executor's map).
 *
 * They move elements and compute nothing, converting only where a tensor's
 * element type differs from the kernel's, as every load does.  Each
 * counts what it reads as tx_load does: the elements it takes from the
 * tensor, never the lanes it fills (a pad's value, the lanes past a ragged
 * edge).  The offsets and the valid box follow each op's rule in tile.h;
 * load_gather is the one that can fail at run time: an index outside the
 * gathered axis is recorded with its program (the lowest program's error
 * wins, so that the message is the same on any number of threads) and the
 * lane reads 0; exec_tile_run reports it after the grid.
 *
 * A tensor or a tile of rank 5 to 8 is held as every tile is (tile_priv.h):
 * its last four dims, the ones before them of extent 1 in the tile (the
 * plan refuses any other).  An index on such a leading dim has one lane:
 * it moves the base, and the tile is outside (an empty valid box, a fill)
 * when that lane leaves the tensor.
 */
#include <stdio.h>
#include <string.h>

#include "tile_priv.h"

/* Lane q of tile o gets element e of src: its bytes when the types agree
 * (exact for every element type: an i64 past 2^53, a bool, a NaN's
 * payload), else converted as every load converts (a float kernel). */
static inline void
take(const PKernel *k, void *o, int64_t q, const Tensor *src, int64_t e)
{
	if (src->dt == k->dt)
		memcpy(at(o, q, k->es), at(src->data, e, k->es), k->es);
	else
		tset(o, q, exec_get(src, e), k->f32);
}

/* Lane q of tile o gets number v in the kernel's element type: a float
 * kernel's v.d (rounded to an f32), an integer or bool kernel's v.i
 * exactly (an i64 past 2^53; exec_seti keeps an i32's low bits). */
static inline void
put(const PKernel *k, void *o, int64_t q, const TileNum *v)
{
	Tensor t = {.dt = k->dt, .data = o};

	if (ir_dtype_is_float(k->dt))
		exec_set(&t, q, v->d);
	else
		exec_seti(&t, q, v->i);
}

/* The 4-d lane index of flat lane q of a tile of padded shape sh. */
static void
lane(const int64_t *sh, int64_t q, int64_t *l)
{
	for (int d = 3; d >= 0; d--) {
		l[d] = q % sh[d];
		q /= sh[d];
	}
}

/* Lanes p[0..n) of element size es all get the value at v: one copy,
 * then doubling (a masked row of a thin slice is most of its tile). */
static void
fill_lanes(char *p, int64_t n, const char *v, size_t es)
{
	int64_t have = 1;

	if (n <= 0)
		return;
	memcpy(p, v, es);
	while (have < n) {
		int64_t m = have < n - have ? have : n - have;

		memcpy(p + have * (int64_t)es, p, (size_t)m * es);
		have += m;
	}
}

int
tx_load_pad(Worker *w, const TileInst *in, int i)
{
	const PKernel *k = w->k;
	const PAccess *a = &k->acc[i];
	const PTile *t = &k->tile[in->res];
	const Tensor *src = &w->vals[a->node];
	const void *fill = in->nin ? w->p[in->in[0]] : NULL;
	void *o = w->p[in->res] = w->buf + t->off * k->les;
	int64_t off[4] = {0, 0, 0, 0}, l[4], n = 0, base = 0;
	bool lead = true;            /* the leading dims' one lane is inside */

	for (int d = 0; d < a->rank; d++) {
		int64_t x = tx_eval_idx(w, &in->idx[d]);

		if (a->pad + d >= 0) {
			off[a->pad + d] = x;
		} else {
			lead &= x >= 0 && x < a->dim[d];
			if (lead)            /* only inside: no overflow */
				base += x * a->lstr[d];
		}
	}
	for (int64_t q = 0; q < t->n; q++) {
		int64_t e = base;
		bool inside = lead;

		lane(t->sh, q, l);
		for (int d = 0; d < 4; d++)
			inside &= off[d] + l[d] >= 0 && off[d] + l[d] < a->tdim[d];
		for (int d = 0; inside && d < 4; d++)     /* only inside: no overflow */
			e += (off[d] + l[d]) * a->tstr[d];
		if (inside) {
			take(k, o, q, src, e);
			n++;
		} else if (fill) {
			memcpy(at(o, q, k->es), at(fill, q, k->es), k->es);
		} else {
			put(k, o, q, &in->other);
		}
	}
	/* every lane holds a value: the store clips to the result */
	memcpy(w->valid[in->res], t->sh, sizeof t->sh);
	w->rd += n * (int64_t)ir_dtype_size(src->dt);   /* in the tensor's type */
	return i + 1;
}

int
tx_load_step(Worker *w, const TileInst *in, int i)
{
	const PKernel *k = w->k;
	const PAccess *a = &k->acc[i];
	const PTile *t = &k->tile[in->res];
	const Tensor *src = &w->vals[a->node];
	void *o = w->p[in->res] = w->buf + t->off * k->les;
	int64_t *valid = w->valid[in->res], off[4] = {0, 0, 0, 0}, st[4] = {1, 1, 1, 1};
	int64_t lead = 0;            /* the leading dims' offset (rank > 4) */
	_Alignas(8) char fill[8];   /* exec_set stores an int64 or a double there */

	for (int d = 0; d < 4; d++)
		valid[d] = t->sh[d];
	for (int d = 0; d < a->rank; d++) {
		int D = a->pad + d;
		int64_t o0 = tx_eval_idx(w, &in->idx[d]), s = in->steps[d];
		/* lanes from the first (inside, by the verifier) to the edge */
		int64_t left = s > 0 ? (a->dim[d] - o0 + s - 1) / s : o0 / -s + 1;

		if (D < 0) {             /* a leading dim: its one lane, inside */
			lead += o0 * a->lstr[d];
			continue;
		}
		off[D] = o0;
		st[D] = s;
		if (left < valid[D])
			valid[D] = left;
	}
	/* A row (the last lane dimension) at a time: the lanes inside are a
	 * strided run of the tensor, one memcpy when it is contiguous and of
	 * the kernel's type (a slice of whole rows: the transformer layer's
	 * q/k/v split spent half its time here lane by lane). */
	put(k, fill, 0, &in->other);
	for (int64_t r = 0; r < t->n / t->sh[3]; r++) {
		int64_t rl[4] = {0, 0, 0, 0}, q = r * t->sh[3], base = lead, n3 = valid[3];
		char *row = at(o, q, k->es);
		bool inside = true;

		for (int64_t rr = r, d = 2; d >= 0; d--) {
			rl[d] = rr % t->sh[d];
			rr /= t->sh[d];
			inside &= rl[d] < valid[d];
		}
		if (!inside)
			n3 = 0;
		for (int d = 0; inside && d < 3; d++)
			base += (off[d] + st[d] * rl[d]) * a->tstr[d];
		base += off[3] * a->tstr[3];
		if (n3 > 0 && src->dt == k->dt && st[3] * a->tstr[3] == 1)
			memcpy(row, at(src->data, base, k->es), (size_t)n3 * k->es);
		else
			for (int64_t c = 0; c < n3; c++)
				take(k, o, q + c, src, base + c * st[3] * a->tstr[3]);
		fill_lanes(row + n3 * (int64_t)k->es, t->sh[3] - n3, fill, k->es);
	}
	w->rd += box(valid) * (int64_t)ir_dtype_size(src->dt);
	return i + 1;
}

/* Index lane li of load_gather's index tile, exactly: from the indices
 * tensor when a plain load made the tile (as lower-tiled's do), so that
 * an f32 kernel reads an i64 index without rounding; else the tile's
 * value.  *at gets its flat place in that tensor (-1 when none). */
static int64_t
gather_index(const Worker *w, const TileInst *in, int64_t li, int64_t *at)
{
	const PKernel *k = w->k;
	int v = in->in[0], di = k->f->vals[v].def;
	const TileInst *ld = &k->f->insts[di];
	const PTile *ti = &k->tile[v];
	double x;

	*at = -1;
	if (ld->op == TO_LOAD && ld->res == v && !ld->has_view && ld->arg >= 0) {
		const PAccess *a = &k->acc[di];
		int64_t l[4], e = 0;

		/* (a dim before the tile's last four has the one lane 0) */
		lane(ti->sh, li, l);
		for (int d = 0; d < a->rank; d++)
			e += (tx_eval_idx(w, &ld->idx[d]) + (a->pad + d >= 0 ? l[a->pad + d] : 0)) *
			    a->lstr[d];
		*at = e;
		return exec_geti(&w->vals[a->node], e);
	}
	x = tget(w->p[v], li, k->f32);
	return x != x ? INT64_MIN : x >= 0x1p62 ? INT64_MAX : x <= -0x1p62 ? INT64_MIN :
	    (int64_t)x;
}

/* Records the first bad index of the lowest program. */
static void
gather_fail(Worker *w, const TileInst *in, const PAccess *a, int64_t v, int64_t at)
{
	char where[IR_TYPE_STR];
	int di = w->k->f->vals[in->in[0]].def;

	if (w->bad_prog >= 0 && w->bad_prog <= w->gid)
		return;
	w->bad_prog = w->gid;
	if (at >= 0)
		exec_index_str(&w->vals[w->k->acc[di].node], at, where);
	else
		snprintf(where, sizeof where, "a lane");
	snprintf(w->bad, sizeof w->bad, "'gather' index %lld at %s of its indices is out of "
	    "range for axis %lld of size %lld", (long long)v, where, (long long)in->axis,
	    (long long)a->dim[in->axis]);
}

/* Clips valid box v along padded dim D to room lanes; a D before the last
 * four (< 0) is a dim of one lane: the box is empty when it has none. */
static void
clip(int64_t *v, int D, int64_t room)
{
	if (room < 0)
		room = 0;
	if (D < 0) {
		if (room < 1)
			v[0] = 0;
	} else if (room < v[D]) {
		v[D] = room;
	}
}

int
tx_load_gather(Worker *w, const TileInst *in, int i)
{
	const PKernel *k = w->k;
	const PAccess *a = &k->acc[i];
	const PTile *t = &k->tile[in->res], *ti = &k->tile[in->in[0]];
	const Tensor *src = &w->vals[a->node];
	void *o = w->p[in->res] = w->buf + t->off * k->les;
	/* the result's dim D is padded dim p + D of its tile, the index
	 * tile's dim j padded dim pi + j of its own (either < 0: a leading
	 * dim of one lane) */
	int r = a->rank, q = w->k->f->vals[in->in[0]].rank, rr = r - 1 + q, p = 4 - rr, pi = 4 - q;
	int ax = (int)in->axis, rd[IR_MAX_RANK];
	int64_t *valid = w->valid[in->res], off[IR_MAX_RANK], l[4], n = 0;

	for (int d = 0; d < 4; d++)
		valid[d] = t->sh[d];
	/* the tensor's dims around axis: clipped to its bounds; the index
	 * tile's: its own valid box */
	for (int d = 0; d < r; d++) {
		off[d] = tx_eval_idx(w, &in->idx[d]);
		rd[d] = d < ax ? d : d - 1 + q;  /* the result's dim of tensor dim d */
		if (d != ax)
			clip(valid, p + rd[d], a->dim[d] - off[d]);
	}
	for (int j = 0; j < q; j++)
		clip(valid, p + ax + j, pi + j >= 0 ? w->valid[in->in[0]][pi + j] : 1);
	for (int64_t e = 0; e < t->n; e++) {
		int64_t x = 0, li = 0, v, pos;
		bool inside = true;

		lane(t->sh, e, l);
		for (int d = 0; d < 4; d++)
			inside &= l[d] < valid[d];
		if (!inside) {
			memset(at(o, e, k->es), 0, k->es);   /* masked: 0, as 'masked' says */
			continue;
		}
		/* the index tile's lane: the result's dims ax .. ax+q (those
		 * of either tile before its last four are lane 0) */
		for (int j = (pi < 0 ? -pi : 0); j < q; j++)
			li = li * ti->sh[pi + j] + (p + ax + j >= 0 ? l[p + ax + j] : 0);
		v = gather_index(w, in, li, &pos);
		if (v < -a->dim[ax] || v >= a->dim[ax]) {
			gather_fail(w, in, a, v, pos);
			memset(at(o, e, k->es), 0, k->es);
			continue;
		}
		if (v < 0)
			v += a->dim[ax];
		for (int d = 0; d < r; d++)
			x += (d == ax ? v : off[d] + (p + rd[d] >= 0 ? l[p + rd[d]] : 0)) * a->lstr[d];
		take(k, o, e, src, x);
		n++;
	}
	w->rd += n * (int64_t)ir_dtype_size(src->dt);
	return i + 1;
}

int
tx_broadcast(Worker *w, const TileInst *in, int i)
{
	const PKernel *k = w->k;
	const PTile *ti = &k->tile[in->in[0]], *to = &k->tile[in->res];
	const void *x = w->p[in->in[0]];
	void *o = w->p[in->res];
	int64_t xs[4], st = 1, l[4];

	for (int d = 3; d >= 0; d--) {
		xs[d] = ti->sh[d] == 1 ? 0 : st;
		st *= ti->sh[d];
		w->valid[in->res][d] = ti->sh[d] == 1 ? to->sh[d] : w->valid[in->in[0]][d];
	}
	for (int64_t q = 0; q < to->n; q++) {
		lane(to->sh, q, l);
		memcpy(at(o, q, k->es), at(x, l[0] * xs[0] + l[1] * xs[1] + l[2] * xs[2] +
		    l[3] * xs[3], k->es), k->es);
	}
	return i + 1;
}
