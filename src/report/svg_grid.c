/*
 * svg_grid.c: the picture of a lowered kernel's tile grid (report.h).
 *
 * The picture is computed from the tile IR, not from a run: the scalar part
 * of the body (program_id, idiv, irem, loop counters; everything an index
 * expression may name) is evaluated for each program of the grid, loops
 * unrolled trip by trip, and every load and store records the box of the
 * tensor it touches, its index for the corner and its tile's shape for the
 * extent.  So the picture shows what the executor would touch (its
 * traffic contract is the same boxes, masked to the tensor) for whatever
 * lower-tiled or a hand-written kernel emitted.  The result's boxes from
 * every program make the grid (a box beyond the tensor is a ragged tile,
 * its masked part greyed; a box that several programs' atomics land on
 * carries their count); one program's load boxes are drawn on each
 * operand.  Loads of other forms (im2col, windows, gathers, strided) are
 * counted and named, not drawn: their footprint is no tile box.  Work is
 * capped (programs simulated, loop trips, boxes), and a capped picture
 * says so under it.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "svg.h"
#include "tile.h"

enum {
	GRID_TRIPS = 1 << 20,        /* loop trips evaluated per kernel, all programs */
	GRID_LOADS = 1024,           /* load boxes kept for the chosen program */
	PLOT_RES = 300,              /* the result's plot, px at most */
	PLOT_ARG = 200,              /* an operand's plot */
	PLOT_MIN = 24,               /* a thin dimension is drawn this thick */
	PLOT_CELL = 10,              /* px per element at most: a 2x2 tensor stays small */
};

/* A box of a tensor's last two dimensions that one access touches. */
typedef struct Box {
	int64_t r0, c0, h, w;
	int64_t prog;                /* the program (linear index) */
	int arg;                     /* operand index, or TILE_RESULT */
	bool atomic;
	bool mine;                   /* the chosen program's (or one of them, merged) */
	int64_t count;               /* merged result boxes: programs on it */
} Box;

typedef struct Boxes {
	Box *b;
	int n, cap;
} Boxes;

typedef struct Sim {
	const Graph *g;
	const Node *node;
	const TileFn *f;
	int64_t *sc;                 /* scalars, by value */
	int64_t pid[3];
	int64_t prog;
	int64_t chosen;
	int64_t trips;               /* left of GRID_TRIPS */
	bool cut;                    /* trips ran out */
	bool loads;                  /* record loads (the chosen program) or stores */
	Boxes *out;
	int maxboxes;
	bool boxes_cut;
	int64_t off_batch;           /* accesses off the drawn batch index 0 */
	int other[TO_COUNT];         /* accesses of forms not drawn, by op */
} Sim;

static void
push(Boxes *bs, Box b)
{
	if (bs->n == bs->cap) {
		bs->cap = bs->cap ? 2 * bs->cap : 64;
		bs->b = xrealloc(bs->b, sizeof *bs->b * (size_t)bs->cap);
	}
	bs->b[bs->n++] = b;
}

/* An index expression's value; wrapping, never undefined, on garbage. */
static int64_t
idx_val(const Sim *s, const TileIdx *x)
{
	uint64_t v = (uint64_t)x->k;

	for (int t = 0; t < x->nterm; t++)
		v += (uint64_t)x->coef[t] * (uint64_t)s->sc[x->val[t]];
	return (int64_t)v;
}

/* The extent of tensor dimension k (of rank R) that tile value v covers:
 * the tile's dimensions align with the tensor's last ones. */
static int64_t
tile_dim(const TileVal *v, int R, int k)
{
	int j = v->rank - R + k;

	return v->rank > 0 && j >= 0 && j < v->rank ? v->shape[j] : 1;
}

static void
record(Sim *s, const TileInst *in)
{
	Type buf;
	const Type *t = tile_target_type(s->g, s->node, in, &buf);
	const TileVal *v = &s->f->vals[in->op == TO_LOAD || in->op == TO_LOAD_PAD ? in->res :
	    in->in[0]];
	int R = t->rank;
	int64_t e[IR_MAX_RANK];
	Box b = {0};

	for (int k = 0; k < R && k < in->nidx; k++)
		e[k] = idx_val(s, &in->idx[k]);
	for (int k = in->nidx; k < R; k++)
		e[k] = 0;
	/* a batch index other than 0 is not drawn */
	for (int k = 0; k + 2 < R; k++)
		if (!(e[k] <= 0 && 0 < e[k] + tile_dim(v, R, k))) {
			s->off_batch++;
			return;
		}
	b.r0 = R >= 2 ? e[R - 2] : 0;
	b.h = R >= 2 ? tile_dim(v, R, R - 2) : 1;
	b.c0 = R >= 1 ? e[R - 1] : 0;
	b.w = R >= 1 ? tile_dim(v, R, R - 1) : 1;
	b.prog = s->prog;
	b.arg = in->arg;
	b.atomic = in->op == TO_ATOMIC_ADD || in->op == TO_ATOMIC_MAX;
	b.mine = s->prog == s->chosen;
	b.count = 1;
	if (s->out->n >= s->maxboxes) {
		s->boxes_cut = true;
		return;
	}
	push(s->out, b);
}

/* Evaluates instructions a..b-1 of the body for the current program. */
static void
walk(Sim *s, int a, int b)
{
	const TileFn *f = s->f;

	for (int i = a; i < b && !s->cut; i++) {
		const TileInst *in = &f->insts[i];

		switch (in->op) {
		case TO_PROGRAM_ID:
			s->sc[in->res] = in->axis >= 0 && in->axis < 3 ? s->pid[in->axis] : 0;
			break;
		case TO_IDIV:
			s->sc[in->res] = in->by ? s->sc[in->in[0]] / in->by : 0;
			break;
		case TO_IREM:
			s->sc[in->res] = in->by ? s->sc[in->in[0]] % in->by : 0;
			break;
		case TO_FOR: {
			int64_t trips = tile_trips(in);

			for (int64_t t = 0; t < trips && !s->cut; t++) {
				if (s->trips-- <= 0) {
					s->cut = true;
					break;
				}
				s->sc[in->var] = (int64_t)((uint64_t)in->lo + (uint64_t)t *
				    (uint64_t)in->step);
				walk(s, i + 1, in->end);
			}
			i = in->end;
			break;
		}
		case TO_LOAD:
		case TO_LOAD_PAD:
			if (s->loads && in->arg != TILE_RESULT)
				record(s, in);
			break;
		case TO_STORE:
		case TO_ATOMIC_ADD:
		case TO_ATOMIC_MAX:
			if (!s->loads)
				record(s, in);
			break;
		case TO_IM2COL:
		case TO_WINDOW_MAX:
		case TO_WINDOW_SUM:
		case TO_LOAD_STEP:
		case TO_LOAD_GATHER:
		case TO_ARGMAX:
		case TO_ARGMIN:
			if (s->loads)
				s->other[in->op]++;
			break;
		default:
			break;
		}
	}
}

static void
set_prog(Sim *s, int64_t p)
{
	const int64_t *gr = s->f->grid;
	int64_t g1 = gr[1] > 0 ? gr[1] : 1, g2 = gr[2] > 0 ? gr[2] : 1, g12;

	if (__builtin_mul_overflow(g1, g2, &g12))
		g12 = INT64_MAX;
	s->prog = p;
	s->pid[2] = p % g2;
	s->pid[1] = p / g2 % g1;
	s->pid[0] = p / g12;
}

static int
cmp_box(const void *pa, const void *pb)
{
	const Box *a = pa, *b = pb;

	if (a->r0 != b->r0)
		return a->r0 < b->r0 ? -1 : 1;
	if (a->c0 != b->c0)
		return a->c0 < b->c0 ? -1 : 1;
	if (a->h != b->h)
		return a->h < b->h ? -1 : 1;
	if (a->w != b->w)
		return a->w < b->w ? -1 : 1;
	return a->prog < b->prog ? -1 : a->prog > b->prog;
}

/* Equal boxes (atomics of several programs, or a program storing a tile
 * twice) become one, counting the programs on it. */
static void
merge(Boxes *bs)
{
	int n = 0;

	if (!bs->n)
		return;
	qsort(bs->b, (size_t)bs->n, sizeof *bs->b, cmp_box);
	for (int i = 0; i < bs->n; i++) {
		Box *o = &bs->b[n - 1];

		if (n && o->r0 == bs->b[i].r0 && o->c0 == bs->b[i].c0 && o->h == bs->b[i].h &&
		    o->w == bs->b[i].w) {
			if (bs->b[i].prog != o->prog)
				o->count++;
			o->atomic |= bs->b[i].atomic;
			o->mine |= bs->b[i].mine;
			continue;
		}
		bs->b[n++] = bs->b[i];
	}
	bs->n = n;
}

/* Everything one panel draws. */
typedef struct Grid {
	const Graph *g;
	const Node *node;
	const TileFn *f;
	int64_t programs, simulated, chosen;
	int64_t stride;              /* programs drawn: every stride-th along each axis */
	Boxes res;                   /* merged result boxes */
	Boxes loads;                 /* the chosen program's, in order */
	bool cut, boxes_cut;
	int64_t off_batch;
	int other[TO_COUNT];
	double w, h;                 /* the panel's size */
} Grid;

static void
grid_build(Grid *G, const Graph *g, int node, int64_t program)
{
	const Node *n = &g->nodes[node];
	const TileFn *f = n->tile;
	Sim s = {.g = g, .node = n, .f = f, .trips = GRID_TRIPS};
	int64_t P = 1;

	memset(G, 0, sizeof *G);
	G->g = g;
	G->node = n;
	G->f = f;
	/* saturated: a hand-written grid may multiply past int64 */
	for (int a = 0; a < 3; a++)
		if (__builtin_mul_overflow(P, f->grid[a] > 0 ? f->grid[a] : 1, &P))
			P = INT64_MAX;
	G->programs = P;
	G->chosen = program < 0 || program >= P ? P - 1 : program;
	s.chosen = G->chosen;
	s.sc = xcalloc((size_t)(f->nvals ? f->nvals : 1), sizeof *s.sc);
	/* the result: every program, or the first ones and the chosen one */
	s.out = &G->res;
	s.maxboxes = 4 * REPORT_GRID_MAX_CELLS;
	/* past the cap, a lattice: every st-th program along each axis (so
	 * that the sample reads as a regular grid), then the chosen one */
	{
		int64_t gr[3], steps[3], st = 1;
		bool chosen_done = false;

		for (int a = 0; a < 3; a++)
			gr[a] = steps[a] = f->grid[a] > 0 ? f->grid[a] : 1;
		if (P > REPORT_GRID_MAX_CELLS)
			for (st = 2; st < INT64_MAX / 4; st *= 2) {
				int64_t c = 1;

				for (int a = 0; a < 3; a++) {
					steps[a] = gr[a] / st + (gr[a] % st != 0);
					if (__builtin_mul_overflow(c, steps[a], &c))
						c = INT64_MAX;
				}
				if (c < REPORT_GRID_MAX_CELLS)
					break;
			}
		G->stride = st;
		/* steps[a] steps of st along axis a, each p_a = i * st < gr[a] */
		for (int64_t i0 = 0; i0 < steps[0] && !s.cut; i0++)
			for (int64_t i1 = 0; i1 < steps[1] && !s.cut; i1++)
				for (int64_t i2 = 0; i2 < steps[2] && !s.cut; i2++) {
					int64_t p = (i0 * st * gr[1] + i1 * st) * gr[2] + i2 * st;   /* < P */

					set_prog(&s, p);
					walk(&s, 0, f->ninsts);
					G->simulated++;
					chosen_done |= p == G->chosen;
				}
		if (!chosen_done && !s.cut) {
			set_prog(&s, G->chosen);
			walk(&s, 0, f->ninsts);
			G->simulated++;
		}
	}
	G->cut = s.cut;
	merge(&G->res);
	/* the chosen program's loads, with a fresh budget */
	s.out = &G->loads;
	s.loads = true;
	s.cut = false;
	s.trips = GRID_TRIPS;
	s.maxboxes = GRID_LOADS;
	set_prog(&s, G->chosen);
	walk(&s, 0, f->ninsts);
	G->cut |= s.cut;
	G->boxes_cut = s.boxes_cut;
	G->off_batch = s.off_batch;
	memcpy(G->other, s.other, sizeof G->other);
	free(s.sc);
}

static void
grid_free(Grid *G)
{
	free(G->res.b);
	free(G->loads.b);
}

/* ---- drawing --------------------------------------------------------- */

/* The 2-D extent drawn for a tensor and its boxes. */
typedef struct Plot {
	int64_t rows, cols;
	int64_t er0, ec0, er1, ec1;  /* the extent: tensor and overhanging boxes */
	double x, y, sx, sy;         /* placement and px per element */
	double w, h;
} Plot;

static void
plot_fit(Plot *p, const Type *t, const Boxes *bs, int arg, double maxpx)
{
	int R = t->rank;
	double s;

	p->rows = R >= 2 ? t->dim[R - 2] : 1;
	p->cols = R >= 1 ? t->dim[R - 1] : 1;
	p->er0 = p->ec0 = 0;
	p->er1 = p->rows;
	p->ec1 = p->cols;
	for (int i = 0; i < bs->n; i++) {
		const Box *b = &bs->b[i];

		if (b->arg != arg)
			continue;
		if (b->r0 < p->er0)
			p->er0 = b->r0;
		if (b->c0 < p->ec0)
			p->ec0 = b->c0;
		if (b->r0 + b->h > p->er1)
			p->er1 = b->r0 + b->h;
		if (b->c0 + b->w > p->ec1)
			p->ec1 = b->c0 + b->w;
	}
	if (p->er1 <= p->er0)
		p->er1 = p->er0 + 1;
	if (p->ec1 <= p->ec0)
		p->ec1 = p->ec0 + 1;
	s = maxpx / (double)(p->er1 - p->er0);
	if (maxpx / (double)(p->ec1 - p->ec0) < s)
		s = maxpx / (double)(p->ec1 - p->ec0);
	if (s > PLOT_CELL)
		s = PLOT_CELL;
	p->sx = p->sy = s;
	if ((double)(p->er1 - p->er0) * p->sy < PLOT_MIN)
		p->sy = PLOT_MIN / (double)(p->er1 - p->er0);
	if ((double)(p->ec1 - p->ec0) * p->sx < PLOT_MIN)
		p->sx = PLOT_MIN / (double)(p->ec1 - p->ec0);
	p->w = (double)(p->ec1 - p->ec0) * p->sx;
	p->h = (double)(p->er1 - p->er0) * p->sy;
}

static double
px(const Plot *p, int64_t c)
{
	return p->x + (double)(c - p->ec0) * p->sx;
}

static double
py(const Plot *p, int64_t r)
{
	return p->y + (double)(r - p->er0) * p->sy;
}

/* A box, with its part outside the tensor greyed (the masked lanes). */
static void
draw_box(FILE *f, const Plot *p, const Box *b, const char *fill, const char *extra)
{
	double x0 = px(p, b->c0), y0 = py(p, b->r0);
	/* at least a hairline: a 16-row panel of a 4096-row matrix is 0.8 px */
	double w = (double)b->w * p->sx < 1.5 ? 1.5 : (double)b->w * p->sx;
	double h = (double)b->h * p->sy < 1.5 ? 1.5 : (double)b->h * p->sy;
	bool fine = w >= 3 && h >= 3;
	int64_t cin = b->c0 + b->w < p->cols ? b->c0 + b->w : p->cols;

	/* extra, when given, brings its own stroke */
	svg_rect(f, x0, y0, w, h, fill, !extra && fine ? "#ffffff" : NULL,
	    extra ? extra : fine ? "stroke-width=\"0.75\"" : NULL);
	/* masked: beyond the last row or column, or before the first */
	if (b->c0 + b->w > p->cols)
		svg_rect(f, px(p, p->cols > b->c0 ? p->cols : b->c0), y0,
		    (double)(b->c0 + b->w - (p->cols > b->c0 ? p->cols : b->c0)) * p->sx, h,
		    "#7f7f7f", NULL, "fill-opacity=\"0.55\"");
	if (b->r0 + b->h > p->rows)
		svg_rect(f, x0, py(p, p->rows > b->r0 ? p->rows : b->r0),
		    (double)(cin > b->c0 ? cin - b->c0 : 0) * p->sx,
		    (double)(b->r0 + b->h - (p->rows > b->r0 ? p->rows : b->r0)) * p->sy, "#7f7f7f",
		    NULL, "fill-opacity=\"0.55\"");
	if (b->c0 < 0)
		svg_rect(f, x0, y0, (double)(-b->c0 < b->w ? -b->c0 : b->w) * p->sx, h, "#7f7f7f",
		    NULL, "fill-opacity=\"0.55\"");
	if (b->r0 < 0)
		svg_rect(f, x0, y0, w, (double)(-b->r0 < b->h ? -b->r0 : b->h) * p->sy, "#7f7f7f",
		    NULL, "fill-opacity=\"0.55\"");
}

static void
dims_str(char *buf, size_t n, const Type *t)
{
	size_t k = 0;

	buf[0] = '\0';
	if (t->rank == 0)
		k = (size_t)snprintf(buf, n, "scalar");
	for (int i = 0; i < t->rank && k < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "\xc3\x97" : "",
		    (long long)t->dim[i]);
	if (k < n)
		snprintf(buf + k, n - k, " %s", ir_dtype_name(t->dt));
}

static void
pid_str(char *buf, size_t n, const Grid *G, int64_t p)
{
	Sim s = {.f = G->f};

	set_prog(&s, p);
	snprintf(buf, n, "(%lld, %lld, %lld)", (long long)s.pid[0], (long long)s.pid[1],
	    (long long)s.pid[2]);
}

/* The kernel's header line: name, kind, grid and block sizes. */
static void
head_str(char *buf, size_t n, const TileFn *f, int64_t programs)
{
	size_t k = (size_t)snprintf(buf, n, "@%s [%s] grid=(%lld, %lld, %lld)", f->name,
	    ir_kernel_kinds[f->kind], (long long)f->grid[0], (long long)f->grid[1],
	    (long long)f->grid[2]);

	for (int a = 0; a < KA_COUNT && k < n; a++)
		if (f->kset & (1u << a))
			k += (size_t)snprintf(buf + k, n - k, " %s=%lld", ir_kattr_names[a],
			    (long long)f->kattr[a]);
	if (k < n)
		snprintf(buf + k, n - k, ", %lld program%s", (long long)programs,
		    programs == 1 ? "" : "s");
}

/* The operands of the kernel that the chosen program loads with box loads,
 * in operand order; returns their count. */
static int
load_args(const Grid *G, int *args, int cap)
{
	int n = 0;

	for (int a = 0; a < G->f->nargs && n < cap; a++)
		for (int i = 0; i < G->loads.n; i++)
			if (G->loads.b[i].arg == a) {
				args[n++] = a;
				break;
			}
	return n;
}

/* A legend entry: a swatch and its words; returns the x after it. */
static double
legend(FILE *f, double x, double y, const char *fill, const char *opacity, const char *words)
{
	svg_rect(f, x, y - 9, 12, 12, fill, "#555555", opacity);
	svg_text(f, x + 16, y + 1, NULL, NULL, words);
	return x + 16 + 6.2 * (double)strlen(words) + 14;
}

static void
grid_draw(FILE *f, Grid *G, bool standalone)
{
	const Graph *g = G->g;
	const TileFn *fn = G->f;
	Plot pr, pa[64];
	int args[64], na = load_args(G, args, 64);
	double x, top = 62, w, h, y;
	char head[512], buf[512], who[96];
	int nnote = 0;
	const char *note[8];
	char notebuf[8][768];
	bool any_atomic = false, any_masked = false;

	plot_fit(&pr, &G->node->type, &G->res, TILE_RESULT, PLOT_RES);
	pr.x = 14;
	pr.y = top;
	x = 14 + pr.w + 40;
	for (int i = 0; i < na; i++) {
		const Node *an = &g->nodes[fn->args[args[i]]];

		double lw;

		plot_fit(&pa[i], &an->type, &G->loads, args[i], PLOT_ARG);
		pa[i].x = x;
		pa[i].y = top;
		/* the label above and the count below are wider than a thin plot */
		dims_str(buf, sizeof buf, &an->type);
		lw = 7.0 * (double)(strlen(an->name) + strlen(buf) + 4);
		if (lw < 6.0 * 28)
			lw = 6.0 * 28;
		x += (pa[i].w > lw ? pa[i].w : lw) + 30;
	}
	w = x < 560 ? 560 : x;
	{
		/* the legend's width, as legend() advances (atomic's entry at most) */
		double lw = 14 + 4 * 30 + 6.2 * (double)(strlen("a program's tile") +
		    strlen("the chosen program's") + strlen("loaded by the chosen program") +
		    strlen("masked (outside the tensor)"));

		for (int i = 0; i < G->res.n; i++)
			if (G->res.b[i].atomic) {
				lw += 30 + 6.2 * 62;
				break;
			}
		if (lw > w)
			w = lw;
	}
	h = top + pr.h;
	for (int i = 0; i < na; i++)
		if (top + pa[i].h + 18 > h)
			h = top + pa[i].h + 18;
	/* notes: what the picture leaves out */
	if (G->simulated < G->programs) {
		snprintf(notebuf[nnote], sizeof notebuf[0], "%lld of %lld programs drawn (every "
		    "%lld%s along each grid axis, and the chosen one)", (long long)G->simulated,
		    (long long)G->programs, (long long)G->stride, G->stride == 2 ? "nd" : "th");
		note[nnote] = notebuf[nnote];
		nnote++;
	}
	if (G->cut) {
		snprintf(notebuf[nnote], sizeof notebuf[0], "loop trips evaluated cut at %d: the "
		    "picture is partial", GRID_TRIPS);
		note[nnote] = notebuf[nnote];
		nnote++;
	}
	if (G->boxes_cut) {
		snprintf(notebuf[nnote], sizeof notebuf[0], "the chosen program's first %d loads "
		    "drawn", GRID_LOADS);
		note[nnote] = notebuf[nnote];
		nnote++;
	}
	if (G->node->type.rank > 2 || G->off_batch) {
		snprintf(notebuf[nnote], sizeof notebuf[0], "leading (batch) dimensions: index 0 "
		    "drawn; %lld loads of the chosen program elsewhere", (long long)G->off_batch);
		note[nnote] = notebuf[nnote];
		nnote++;
	}
	{
		size_t k = 0;

		buf[0] = '\0';
		for (int op = 0; op < TO_COUNT && k < sizeof buf; op++)
			if (G->other[op])
				k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%d %s", k ? ", " : "",
				    G->other[op], tile_ops[op].name ? tile_ops[op].name : "?");
		if (k) {
			snprintf(notebuf[nnote], sizeof notebuf[0], "loads not drawn (no tile box): %s",
			    buf);
			note[nnote] = notebuf[nnote];
			nnote++;
		}
	}
	h += 34 + 16 * nnote + 8;
	G->w = w;
	G->h = h;

	head_str(head, sizeof head, fn, G->programs);
	if (standalone) {
		char title[600];

		snprintf(title, sizeof title, "tile grid of %s", head);
		svg_open(f, w, h, title);
	} else {
		svg_panel_open(f, 0, 0, w, h);
		svg_rect(f, 0.5, 0.5, w - 1, h - 1, "none", "#cccccc", NULL);
	}
	svg_text(f, 14, 18, NULL, "font-size=\"13\" font-weight=\"bold\"", head);
	pid_str(who, sizeof who, G, G->chosen);
	dims_str(buf, sizeof buf, &G->node->type);
	{
		char line[768];

		snprintf(line, sizeof line, "result %%%s (%s): the tiles the programs store; "
		    "program %s highlighted", G->node->name, buf, who);
		svg_text(f, 14, 36, NULL, NULL, line);
	}
	/* the result */
	svg_rect(f, px(&pr, 0), py(&pr, 0), (double)pr.cols * pr.sx, (double)pr.rows * pr.sy,
	    "#f4f4f4", NULL, NULL);
	for (int i = 0; i < G->res.n; i++) {
		const Box *b = &G->res.b[i];
		bool mine = b->mine;
		const char *fill;

		fill = b->atomic ? (mine ? "#e6550d" : "#fdae6b") : (mine ? "#3182bd" : "#9ecae1");
		any_atomic |= b->atomic;
		any_masked |= b->r0 < 0 || b->c0 < 0 || b->r0 + b->h > pr.rows ||
		    b->c0 + b->w > pr.cols;
		draw_box(f, &pr, b, fill, NULL);
		if (b->atomic && b->w * pr.sx >= 18 && b->h * pr.sy >= 12) {
			char c[32];

			snprintf(c, sizeof c, "\xc3\x97%lld", (long long)b->count);
			svg_text(f, px(&pr, b->c0) + (double)b->w * pr.sx / 2,
			    py(&pr, b->r0) + (double)b->h * pr.sy / 2 + 4, "middle",
			    "font-size=\"10\"", c);
		}
	}
	svg_rect(f, px(&pr, 0), py(&pr, 0), (double)pr.cols * pr.sx, (double)pr.rows * pr.sy,
	    "none", "#000000", "stroke-width=\"1.2\"");
	/* the chosen program's tile outlined again on top of the others */
	for (int i = 0; i < G->res.n; i++)
		if (G->res.b[i].mine)
			svg_rect(f, px(&pr, G->res.b[i].c0), py(&pr, G->res.b[i].r0),
			    (double)G->res.b[i].w * pr.sx, (double)G->res.b[i].h * pr.sy, "none",
			    "#08306b", "stroke-width=\"1.5\"");
	/* the operands, with the chosen program's loads */
	for (int i = 0; i < na; i++) {
		const Node *an = &g->nodes[fn->args[args[i]]];
		int nl = 0;
		char lab[512];

		for (int j = 0; j < G->loads.n; j++)
			if (G->loads.b[j].arg == args[i])
				nl++;
		dims_str(buf, sizeof buf, &an->type);
		snprintf(lab, sizeof lab, "%%%s (%s)", an->name, buf);
		svg_text(f, pa[i].x, top - 10, NULL, "font-weight=\"bold\"", lab);
		svg_rect(f, px(&pa[i], 0), py(&pa[i], 0), (double)pa[i].cols * pa[i].sx,
		    (double)pa[i].rows * pa[i].sy, "#f4f4f4", NULL, NULL);
		for (int j = 0; j < G->loads.n; j++) {
			const Box *b = &G->loads.b[j];

			if (b->arg != args[i])
				continue;
			any_masked |= b->r0 < 0 || b->c0 < 0 || b->r0 + b->h > pa[i].rows ||
			    b->c0 + b->w > pa[i].cols;
			draw_box(f, &pa[i], b, "#41ab5d", "fill-opacity=\"0.6\" stroke=\"#00441b\" "
			    "stroke-width=\"0.75\"");
		}
		svg_rect(f, px(&pa[i], 0), py(&pa[i], 0), (double)pa[i].cols * pa[i].sx,
		    (double)pa[i].rows * pa[i].sy, "none", "#000000", "stroke-width=\"1.2\"");
		snprintf(lab, sizeof lab, "%d tile load%s by %s", nl, nl == 1 ? "" : "s", who);
		svg_text(f, pa[i].x, top + pa[i].h + 14, NULL, "fill=\"#00441b\"", lab);
	}
	/* the legend and the notes */
	y = h - 16 * nnote - 24;
	x = legend(f, 14, y, "#9ecae1", NULL, "a program's tile");
	x = legend(f, x, y, "#3182bd", NULL, "the chosen program's");
	if (any_atomic) {
		snprintf(buf, sizeof buf, "atomic_%s: \xc3\x97n programs land on it%s",
		    "add/max", fn->has_init ? " (result initialised first)" : "");
		x = legend(f, x, y, "#fdae6b", NULL, buf);
	}
	x = legend(f, x, y, "#41ab5d", "fill-opacity=\"0.6\"", "loaded by the chosen program");
	if (any_masked)
		legend(f, x, y, "#7f7f7f", "fill-opacity=\"0.55\"", "masked (outside the tensor)");
	for (int i = 0; i < nnote; i++)
		svg_text(f, 14, y + 20 + 16 * i, NULL, "fill=\"#a50f15\"", note[i]);
	svg_close(f);
}

void
report_grid_svg(FILE *f, const Graph *g, int node, int64_t program)
{
	Grid G;

	if (node < 0 || node >= g->nnodes || !g->nodes[node].tile)
		AICM_BUG("report_grid_svg: node %d is no lowered kernel", node);
	grid_build(&G, g, node, program);
	grid_draw(f, &G, true);
	grid_free(&G);
}

int
report_grid_doc(FILE *f, const Graph *g)
{
	int total = 0, drawn = 0;
	double w = 560, h = 30, y;
	char **txt;
	size_t *len;
	Grid *G;

	for (int i = 0; i < g->nnodes; i++)
		total += g->nodes[i].tile != NULL;
	G = xcalloc((size_t)(total ? total : 1), sizeof *G);
	txt = xcalloc((size_t)(total ? total : 1), sizeof *txt);
	len = xcalloc((size_t)(total ? total : 1), sizeof *len);
	/* each panel drawn into memory first: the document's size is the sum */
	for (int i = 0; i < g->nnodes && drawn < REPORT_MAX_PANELS; i++) {
		FILE *m;

		if (!g->nodes[i].tile)
			continue;
		grid_build(&G[drawn], g, i, -1);
		m = open_memstream(&txt[drawn], &len[drawn]);
		if (!m)
			AICM_BUG("open_memstream failed");
		grid_draw(m, &G[drawn], false);
		fclose(m);
		if (G[drawn].w + 20 > w)
			w = G[drawn].w + 20;
		h += G[drawn].h + 12;
		drawn++;
	}
	if (total > drawn)
		h += 20;
	if (!total)
		h += 20;
	svg_doc_open(f, w, h, "tile grids of the lowered kernels");
	{
		char t[128];

		snprintf(t, sizeof t, "tile grids: %d lowered kernel%s", total, total == 1 ? "" : "s");
		svg_text(f, 10, 20, NULL, "font-size=\"14\" font-weight=\"bold\"", t);
	}
	y = 30;
	for (int i = 0; i < drawn; i++) {
		/* the panel was drawn at 0, 0: moved by a group */
		svg_printf(f, "<g transform=\"translate(10 %n)\">\n", y);
		fwrite(txt[i], 1, len[i], f);
		fputs("</g>\n", f);
		y += G[i].h + 12;
		free(txt[i]);
		grid_free(&G[i]);
	}
	if (!total)
		svg_text(f, 10, y + 12, NULL, NULL, "no lowered kernels: run lower-tiled "
		    "(--pass=shape-infer,fuse,lower-tiled)");
	else if (total > drawn) {
		char t[128];

		snprintf(t, sizeof t, "%d more lowered kernels not drawn (the first %d are)",
		    total - drawn, REPORT_MAX_PANELS);
		svg_text(f, 10, y + 12, NULL, "fill=\"#a50f15\"", t);
	}
	svg_close(f);
	free(G);
	free(txt);
	free(len);
	return total;
}
