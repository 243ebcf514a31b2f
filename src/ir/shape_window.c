/*
 * shape_window.c: the shape rules of conv2d and the pools, DESIGN §12.
 *
 * x is (N, C, H, W); conv2d's w is (F, C/groups, KH, KW) and its optional
 * bias (F,); the pools take their window from kernel=.  strides and
 * dilations are (h, w) pairs of positive integers, pads (top, left,
 * bottom, right) of non-negative ones.  The output size is ONNX's (and
 * PyTorch's): floor((H + pt + pb - dh*(KH-1) - 1) / sh) + 1, or the
 * ceiling with ceil_mode, where a last window that would start past the
 * input and its left padding is dropped, so that every window reads at
 * least one position of the padded input.  A dilated kernel larger than
 * its padded input has no window at all and is refused.
 *
 * ir_window is shared: the reference kernels, lower-tiled and the cost
 * model read the checked geometry from it rather than from the attributes,
 * so they cannot disagree with the rule about defaults.  Every sum is
 * checked for overflow: the attributes are arbitrary 64-bit integers.
 */
#include <stdio.h>
#include <string.h>

#include "ir.h"
#include "window.h"

static Loc
place(const Node *n, Loc want)
{
	if (want.line > 0)
		return want;
	return n->oploc.line > 0 ? n->oploc : n->loc;
}

/* The tuple as written, "(1, 2)", into buf (IR_TYPE_STR bytes). */
static const char *
tuple_str(IntTuple t, char *buf)
{
	size_t m = 0;

	m += (size_t)snprintf(buf + m, IR_TYPE_STR - m, "(");
	for (int i = 0; i < t.n && m < IR_TYPE_STR; i++)
		m += (size_t)snprintf(buf + m, IR_TYPE_STR - m, "%s%lld", i ? ", " : "",
		    (long long)t.v[i]);
	if (m < IR_TYPE_STR)
		snprintf(buf + m, IR_TYPE_STR - m, t.n == 1 ? ",)" : ")");
	return buf;
}

/* Reads tuple attribute a into v[want] (dflt when unset): its length must
 * be want, every entry >= lo. */
static int
pair(const Node *n, AttrId a, int want, int64_t lo, int64_t dflt, int64_t *v, const char *what,
    char *err, Loc *where)
{
	IntTuple t = ir_attr_ints(&n->at, a);
	char s[IR_TYPE_STR];

	if (!(n->at.set & (1u << a))) {
		for (int i = 0; i < want; i++)
			v[i] = dflt;
		return 0;
	}
	*where = place(n, ir_attr_loc(n, a));
	if (t.n != want) {
		snprintf(err, IR_ERR_MAX, "'%s' %s=%s has %d entr%s; it takes %d, %s",
		    ir_ops[n->op].name, ir_attrs[a].name, tuple_str(t, s), t.n,
		    t.n == 1 ? "y" : "ies", want, what);
		return -1;
	}
	for (int i = 0; i < want; i++) {
		if (t.v[i] < lo) {
			snprintf(err, IR_ERR_MAX, "'%s' %s=%s: every entry must be %s",
			    ir_ops[n->op].name, ir_attrs[a].name, tuple_str(t, s),
			    lo == 0 ? "0 or more" : "positive");
			return -1;
		}
		v[i] = t.v[i];
	}
	return 0;
}

/* One spatial dim's output size; -1 when the dilated kernel does not fit
 * (or a sum overflows). */
static int64_t
out_size(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int64_t d, bool ceil_mode)
{
	int64_t ext, padded, span, o;

	if (__builtin_mul_overflow(d, k - 1, &ext) || __builtin_add_overflow(ext, 1, &ext) ||
	    __builtin_add_overflow(in, p0, &padded) || __builtin_add_overflow(padded, p1, &padded))
		return -1;
	if (ext > padded)
		return -1;
	span = padded - ext;
	o = span / s + 1;
	if (ceil_mode) {
		o += span % s != 0;
		/* the last window must start inside the input or its left
		 * padding (PyTorch checks it whether or not it rounded up) */
		if ((o - 1) * s >= in + p0)
			o--;
	}
	return o;
}

int
ir_window(const Node *n, const Type *x, const Type *w, const Type *b, Window *win, char *err,
    Loc *where)
{
	const char *name = ir_ops[n->op].name;
	bool conv = n->op == OP_CONV2D;
	char sx[IR_TYPE_STR], sw[IR_TYPE_STR], sk[IR_TYPE_STR];
	int64_t v[4];

	memset(win, 0, sizeof *win);
	if (x->rank != 4) {
		snprintf(err, IR_ERR_MAX, "'%s' x is %s; it must be (N, C, H, W), rank 4", name,
		    ir_shape_str(x, sx));
		*where = place(n, n->inloc[0]);
		return -1;
	}
	win->n = x->dim[0], win->c = x->dim[1], win->h = x->dim[2], win->w = x->dim[3];
	if (pair(n, ATTR_STRIDES, 2, 1, 1, v, "(sh, sw)", err, where))
		return -1;
	win->sh = v[0], win->sw = v[1];
	if (pair(n, ATTR_PADS, 4, 0, 0, v, "(top, left, bottom, right)", err, where))
		return -1;
	win->pt = v[0], win->pl = v[1], win->pb = v[2], win->pr = v[3];
	if (pair(n, ATTR_DILATIONS, 2, 1, 1, v, "(dh, dw)", err, where))
		return -1;
	win->dh = v[0], win->dw = v[1];
	win->groups = 1;
	if (conv) {
		int64_t gr = (n->at.set & AB(GROUPS)) ? n->at.groups : 1;

		if (gr < 1 || win->c % gr) {
			snprintf(err, IR_ERR_MAX, gr < 1 ? "'conv2d' groups=%lld must be positive" :
			    "'conv2d' groups=%lld does not divide C=%lld, the channels of x %s",
			    (long long)gr, (long long)win->c, ir_shape_str(x, sx));
			*where = place(n, ir_attr_loc(n, ATTR_GROUPS));
			return -1;
		}
		win->groups = gr;
		*where = place(n, n->inloc[1]);
		if (w->rank != 4) {
			snprintf(err, IR_ERR_MAX, "'conv2d' w is %s; it must be (F, C/groups, KH, KW), "
			    "rank 4", ir_shape_str(w, sw));
			return -1;
		}
		if (w->dim[1] != win->c / gr) {
			snprintf(err, IR_ERR_MAX, "'conv2d' w %s has %lld channels; x %s with groups=%lld "
			    "needs C/groups = %lld", ir_shape_str(w, sw), (long long)w->dim[1],
			    ir_shape_str(x, sx), (long long)gr, (long long)(win->c / gr));
			return -1;
		}
		if (w->dim[0] % gr) {
			snprintf(err, IR_ERR_MAX, "'conv2d' groups=%lld does not divide F=%lld, the "
			    "filters of w %s", (long long)gr, (long long)w->dim[0], ir_shape_str(w, sw));
			*where = place(n, ir_attr_loc(n, ATTR_GROUPS));
			return -1;
		}
		win->f = w->dim[0], win->kh = w->dim[2], win->kw = w->dim[3];
		if (b) {
			if (b->rank != 1 || b->dim[0] != win->f) {
				snprintf(err, IR_ERR_MAX, "'conv2d' bias is %s; it must be (F,) = (%lld,), "
				    "one per filter of w %s", ir_shape_str(b, sx), (long long)win->f,
				    ir_shape_str(w, sw));
				*where = place(n, n->inloc[2]);
				return -1;
			}
			win->bias = true;
		}
	} else {
		if (pair(n, ATTR_KERNEL, 2, 1, 1, v, "(kh, kw)", err, where))
			return -1;
		win->f = win->c, win->kh = v[0], win->kw = v[1];
		win->ceil_mode = n->at.ceil_mode;
		win->count_include_pad = n->op == OP_AVG_POOL2D && n->at.count_include_pad;
	}
	win->oh = out_size(win->h, win->kh, win->sh, win->pt, win->pb, win->dh, win->ceil_mode);
	win->ow = out_size(win->w, win->kw, win->sw, win->pl, win->pr, win->dw, win->ceil_mode);
	if (win->oh < 0 || win->ow < 0) {
		bool hbad = win->oh < 0;
		IntTuple k = {2, (int64_t[2]){win->kh, win->kw}};

		snprintf(err, IR_ERR_MAX, "'%s' %s%s, dilated by (%lld, %lld), is larger than the "
		    "padded input: %s is %lld + %lld + %lld", name, conv ? "kernel " : "kernel=",
		    tuple_str(k, sk), (long long)win->dh, (long long)win->dw, hbad ? "H" : "W",
		    (long long)(hbad ? win->h : win->w), (long long)(hbad ? win->pt : win->pl),
		    (long long)(hbad ? win->pb : win->pr));
		*where = place(n, conv ? n->inloc[1] : ir_attr_loc(n, ATTR_KERNEL));
		return -1;
	}
	return 0;
}

int
ir_window_of(const Graph *g, const Node *n, Window *win, char *err, Loc *where)
{
	return ir_window(n, &g->nodes[n->in[0]].type, n->nin > 1 ? &g->nodes[n->in[1]].type : NULL,
	    n->nin > 2 ? &g->nodes[n->in[2]].type : NULL, win, err, where);
}

int64_t
ir_conv_block_n(const Window *win, int64_t bn)
{
	int64_t fg = win->f / win->groups;

	if (win->groups == 1)
		return bn;
	for (int64_t d = bn < fg ? bn : fg; d > 1; d--)
		if (fg % d == 0)
			return d;
	return 1;
}

int64_t
ir_pool_count(const Window *win, int64_t oy, int64_t ox)
{
	int64_t lo_h = win->count_include_pad ? -win->pt : 0;
	int64_t hi_h = win->count_include_pad ? win->h + win->pb : win->h;
	int64_t lo_w = win->count_include_pad ? -win->pl : 0;
	int64_t hi_w = win->count_include_pad ? win->w + win->pr : win->w;
	int64_t ch = 0, cw = 0;

	for (int64_t i = 0; i < win->kh; i++) {
		int64_t y = oy * win->sh - win->pt + i * win->dh;

		ch += y >= lo_h && y < hi_h;
	}
	for (int64_t j = 0; j < win->kw; j++) {
		int64_t xx = ox * win->sw - win->pl + j * win->dw;

		cw += xx >= lo_w && xx < hi_w;
	}
	return ch * cw;
}

int
ir_shape_window(const Graph *g, const Node *n, Type *out, char *err, Loc *where)
{
	Window win;

	if (ir_window_of(g, n, &win, err, where) != 0)
		return -1;
	out->rank = 4;
	out->dim[0] = win.n;
	out->dim[1] = win.f;
	out->dim[2] = win.oh;
	out->dim[3] = win.ow;
	return 0;
}
