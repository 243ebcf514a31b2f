/*
 * emit_c_ops.c: one program's body as C, tile op by tile op (emit_c.h).
 *
 * The C mirrors the tile executor's meaning (docs/tiled.md) with every
 * shape known when the text is written: each tile is a local array of its
 * value's own element type, padded to four dims as the executor pads them,
 * with a valid box `long bN[4]` beside it; each op is one loop nest whose
 * bounds are constants (so that gcc -O3 vectorises the inner strip) and
 * whose broadcast operands are indexed with stride 0.  Masks are loop
 * bounds: a load copies its valid box and fills the rest with its other=,
 * a store writes only the box of its value inside the tensor, reductions
 * combine only their operand's box.  Integers compute on int64 with
 * scalar.h's wrapping formulas and are stored in their type's low bits;
 * floats compute in their own type with scalar.h's float formulas.  Every
 * statement is preceded by a comment holding the tile-IR line it comes
 * from, so the text reads side by side with `aicm-opt --emit=ir`.
 *
 * The formulas themselves are small static functions that emit_c.c writes
 * once per (op, type) used (aicm_OP_f64 and the like), from scalar.h's
 * rows, so that an op's arithmetic is written once for every engine.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit_c.h"
#include "scalar.h"

const char *
cg_ctype(DType dt)
{
	switch (dt) {
	case DT_F64: return "double";
	case DT_F32: return "float";
	case DT_I32: return "int32_t";
	case DT_I64: return "int64_t";
	case DT_BOOL: return "uint8_t";
	case DT_COUNT: break;
	}
	AICM_BUG("no C type for element type %d", (int)dt);
}

void
cg_line(CgKernel *k, const char *fmt, ...)
{
	va_list ap;

	for (int i = 0; i < k->depth; i++)
		strbuf_putc(k->o, '\t');
	va_start(ap, fmt);
	{
		char tmp[1024];
		int n = vsnprintf(tmp, sizeof tmp, fmt, ap);

		if (n >= (int)sizeof tmp)
			AICM_BUG("an emitted line of %d bytes", n);
		strbuf_puts(k->o, tmp);
	}
	va_end(ap);
	strbuf_putc(k->o, '\n');
}

/* snprintf for expressions, which may be cut at n (they are far shorter:
 * the buffers are sized for the deepest nesting an op writes) */
static void sfmt(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
sfmt(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(buf, n, fmt, ap) >= (int)n)
		AICM_BUG("an emitted expression longer than %zu bytes", n);
	va_end(ap);
}

static bool
is_float(DType dt)
{
	return dt == DT_F64 || dt == DT_F32;
}

/* The formula suffix of computing type dt: f64, f32, or i64 for every
 * integer and bool (scalar.h's integer rows compute on int64). */
static const char *
fsuffix(DType dt)
{
	return dt == DT_F64 ? "f64" : dt == DT_F32 ? "f32" : "i64";
}

/* Expression e of element type from, as element type to (cast's rule:
 * floats to integers truncate and saturate, NaN 0; integers wrap). */
static void
conv(char *buf, size_t n, const char *e, DType from, DType to)
{
	if (from == to)
		snprintf(buf, n, "%s", e);
	else if (to == DT_BOOL)
		snprintf(buf, n, "(uint8_t)((%s) != 0)", e);
	else if (to == DT_F64)
		snprintf(buf, n, "(double)(%s)", e);
	else if (to == DT_F32)
		snprintf(buf, n, from == DT_I64 ? "ir_i64_to_f32(%s)" : "(float)(%s)", e);
	else if (is_float(from))
		snprintf(buf, n, "(%s)aicm_f2i%s(%s)", cg_ctype(to), to == DT_I32 ? "32" : "64", e);
	else if (to == DT_I32)
		snprintf(buf, n, "(int32_t)(uint32_t)(uint64_t)(%s)", e);
	else
		snprintf(buf, n, "(int64_t)(%s)", e);
}

/* A number of the tile IR as a C constant of element type dt. */
static void
cnum(char *buf, size_t n, TileNum v, DType dt)
{
	if (!is_float(dt)) {
		if (v.i == INT64_MIN)
			snprintf(buf, n, "INT64_MIN");
		else
			snprintf(buf, n, "INT64_C(%" PRId64 ")", v.i);
		return;
	}
	if (isnan(v.d))
		snprintf(buf, n, "NAN");
	else if (isinf(v.d))
		snprintf(buf, n, v.d < 0 ? "-INFINITY" : "INFINITY");
	else
		snprintf(buf, n, "%.17g", v.d);
	if (dt == DT_F32 && isfinite(v.d))
		strncat(buf, "f", n - strlen(buf) - 1);
	/* %.17g of an integral value has no '.': still a double (17 digits
	 * and an 'f' read back as the float nearest the number) */
	if (dt == DT_F32 && isfinite(v.d) && !strpbrk(buf, ".en")) {
		buf[strlen(buf) - 1] = '\0';
		strncat(buf, ".0f", n - strlen(buf) - 1);
	}
}

/* The elements of value v's tile. */
static int64_t
numel(const CgKernel *k, int v)
{
	const int64_t *s = k->sh[v];

	return s[0] * s[1] * s[2] * s[3];
}

static DType
vdt(const CgKernel *k, int v)
{
	return k->f->vals[v].dt;
}

/* ---- loop nests over a padded shape ------------------------------------ */

/* Opens loops i0..i3 over shape sh (dims of extent 1 take no loop: their
 * index is 0); returns how many were opened. */
static int
open_loops(CgKernel *k, const int64_t *sh, int upto)
{
	int n = 0;

	for (int d = 0; d < upto; d++)
		if (sh[d] > 1 && !(k->row && d == 2)) {
			cg_line(k, "for (long i%d = 0; i%d < %" PRId64 "; i%d++)%s", d, d, sh[d], d,
			    " {");
			k->depth++;
			n++;
		}
	return n;
}

static void
close_loops(CgKernel *k, int n)
{
	while (n-- > 0) {
		k->depth--;
		cg_line(k, "}");
	}
}

/* The prefetches of chunk c (W lanes) of the row loop that row_prefetch
 * chose: a cache line of each target a chunk, as many as W of its
 * elements span. */
static void
row_prefetches(CgKernel *k, int W)
{
	for (int t = 0; t < k->npf; t++) {
		int per = 64 / k->pf_size[t], n = W / per > 1 ? W / per : 1;

		for (int q = 0; q < n; q++) {
			char more[32] = "";

			if (q)
				snprintf(more, sizeof more, " + %d", q * per);
			cg_line(k, "AICM_PREFETCH(%s, %s + c * %d%s, %d);", k->pf[t], k->pf_off[t], W,
			    more, k->pf_rw[t]);
		}
	}
}

/* The linear index into a tile of shape tsh of the lane (i0..i3) of an
 * iteration over shape sh: a dim where tsh is 1 and sh is not is
 * stretched (index 0). */
static void
lin(char *buf, size_t n, const int64_t *tsh, const int64_t *sh)
{
	int64_t st = 1, s[4];
	size_t len = 0;

	for (int d = 3; d >= 0; d--) {
		s[d] = st;
		st *= tsh[d];
	}
	buf[0] = '\0';
	for (int d = 0; d < 4; d++) {
		if (tsh[d] == 1 || sh[d] == 1)
			continue;
		if (s[d] == 1)
			len += (size_t)snprintf(buf + len, n - len, "%si%d", len ? " + " : "", d);
		else
			len += (size_t)snprintf(buf + len, n - len, "%si%d * %" PRId64, len ? " + " : "",
			    d, s[d]);
	}
	if (!len)
		snprintf(buf, n, "0");
}

/* An element of a tile as an expression: "t5[i2 * 32 + i3]". */
static void
elem(char *buf, size_t n, const CgKernel *k, int v, const int64_t *sh)
{
	char ix[200];

	if (k->inplace[v]) {
		/* a load read in place: the tensor's strides */
		size_t len = 0;

		ix[0] = '\0';
		for (int d = 0; d < 4; d++)
			if (k->sh[v][d] > 1 && sh[d] > 1 && k->vstr[v][d])
				len += (size_t)snprintf(ix + len, sizeof ix - len, "%si%d * %" PRId64,
				    len ? " + " : "", d, k->vstr[v][d]);
		snprintf(buf, n, "t%d[%s]", v, len ? ix : "0");
		return;
	}
	lin(ix, sizeof ix, k->sh[v], sh);
	snprintf(buf, n, "t%d[%s]", v, ix);
}

/* The valid box of an elementwise result of shape sh from operands ops:
 * the intersection, a stretched operand dim imposing nothing. */
static void
box_meet(CgKernel *k, int res, const int *ops, int nops)
{
	const int64_t *sh = k->sh[res];

	for (int d = 0; d < 4; d++) {
		char e[400];
		size_t len = 0;

		for (int j = 0; j < nops; j++) {
			const int64_t *ts = k->sh[ops[j]];
			char one[80];

			if (ts[d] == sh[d])
				snprintf(one, sizeof one, "b%d[%d]", ops[j], d);
			else
				snprintf(one, sizeof one, "(b%d[%d] > 0 ? %" PRId64 " : 0)", ops[j], d,
				    sh[d]);
			if (j == 0)
				len += (size_t)snprintf(e + len, sizeof e - len, "%s", one);
			else {
				char prev[400];

				snprintf(prev, sizeof prev, "%s", e);
				len = (size_t)snprintf(e, sizeof e, "aicm_min(%s, %s)", prev, one);
			}
		}
		cg_line(k, "b%d[%d] = %s;", res, d, e);
	}
}

static void
box_full(CgKernel *k, int v)
{
	const int64_t *s = k->sh[v];

	cg_line(k, "b%d[0] = %" PRId64 "; b%d[1] = %" PRId64 "; b%d[2] = %" PRId64 "; b%d[3] = %"
	    PRId64 ";", v, s[0], v, s[1], v, s[2], v, s[3]);
}

static void
box_copy(CgKernel *k, int dst, int src)
{
	cg_line(k, "memcpy(b%d, b%d, sizeof b%d);", dst, src, dst);
}

/* ---- elementwise ------------------------------------------------------ */

/* Whether value v is a fill (zeros, full): a number of any type. */
static bool
is_fill(const CgKernel *k, int v)
{
	int def = k->f->vals[v].def;

	return def >= 0 && (k->f->insts[def].op == TO_ZEROS || k->f->insts[def].op == TO_FULL);
}

/* Whether elementwise instruction in divides integers (div, mod, fmod
 * on int64): a lane of its valid box dividing by zero is the run-time
 * error the other engines report (DESIGN section 12). */
static bool
int_divides(const CgKernel *k, const TileInst *in)
{
	DType ct;

	if (in->op != TO_BINARY || !ir_scalar_int_divides(in->gop))
		return false;
	ct = is_fill(k, in->in[0]) && !is_fill(k, in->in[1]) ? vdt(k, in->in[1]) : vdt(k, in->in[0]);
	return !is_float(ct);
}

/* Inside the loop over shape sh of integer division in, whose divisor's
 * expression is eb: a zero divisor in a lane of the result's valid box
 * (computed before the loop) goes to NAME_aicm_divz_fail with its program
 * and in's index (NAME_aicm_bad is then 2 + the lowest program's lowest
 * such index), which NAME_run returns as -3 and the native driver reports;
 * the lane's value is scalar.h's (0).  Lanes outside the box hold other= fills and are
 * never an error, as in the tile engine. */
static void
divz_check(CgKernel *k, const TileInst *in, const char *eb, const int64_t *sh)
{
	char cb[800], cond[300];
	size_t len = 0;
	int r = in->res;

	conv(cb, sizeof cb, eb, vdt(k, in->in[1]), DT_I64);
	cond[0] = '\0';
	for (int d = 0; d < 4; d++) {
		if (sh[d] > 1)
			len += (size_t)snprintf(cond + len, sizeof cond - len, " && i%d < b%d[%d]", d, r, d);
		else
			len += (size_t)snprintf(cond + len, sizeof cond - len, " && b%d[%d] > 0", r, d);
	}
	cg_line(k, "if (%s == 0%s)", cb, cond);
	cg_line(k, "\t%s_aicm_divz_fail(prog, %d);   /* an integer division by zero */", k->name,
	    (int)(in - k->f->insts));
	cg_use_divz(k);
}

static int
op_unary(CgKernel *k, const TileInst *in)
{
	int r = in->res, x = in->in[0];
	DType xt = vdt(k, x), rt = vdt(k, r);
	char ex[256], val[512], out[256], cv[600];
	int nl;

	elem(ex, sizeof ex, k, x, k->sh[r]);
	if (in->gop == OP_CAST) {
		conv(val, sizeof val, ex, xt, rt);
		snprintf(cv, sizeof cv, "%s", val);
	} else {
		DType ct = is_float(xt) ? xt : DT_I64;

		cg_use_formula(k, 0, in->gop, xt);
		snprintf(val, sizeof val, "aicm_%s_%s(%s)", ir_ops[in->gop].name, fsuffix(xt), ex);
		conv(cv, sizeof cv, val, ct, rt);
	}
	elem(out, sizeof out, k, r, k->sh[r]);
	nl = open_loops(k, k->sh[r], 4);
	cg_line(k, "%s = %s;", out, cv);
	close_loops(k, nl);
	box_copy(k, r, x);
	return 0;
}

static int
op_binary(CgKernel *k, const TileInst *in)
{
	int r = in->res, a = in->in[0], b = in->in[1];
	DType ct = vdt(k, a), rt = vdt(k, r), kt;
	char ea[256], eb[256], ca[300], cb[300], val[700], cv[800], out[256];
	int nl;

	if (is_fill(k, a) && !is_fill(k, b))
		ct = vdt(k, b);
	kt = is_float(ct) ? ct : DT_I64;
	cg_use_formula(k, 1, in->gop, ct);
	elem(ea, sizeof ea, k, a, k->sh[r]);
	elem(eb, sizeof eb, k, b, k->sh[r]);
	conv(ca, sizeof ca, ea, vdt(k, a), kt);
	conv(cb, sizeof cb, eb, vdt(k, b), kt);
	snprintf(val, sizeof val, "aicm_%s_%s(%s, %s)", ir_ops[in->gop].name, fsuffix(ct), ca, cb);
	conv(cv, sizeof cv, val, kt, rt);
	elem(out, sizeof out, k, r, k->sh[r]);
	if (int_divides(k, in))
		box_meet(k, r, in->in, 2);   /* divz_check reads it */
	nl = open_loops(k, k->sh[r], 4);
	if (int_divides(k, in))
		divz_check(k, in, eb, k->sh[r]);
	cg_line(k, "%s = %s;", out, cv);
	close_loops(k, nl);
	if (!int_divides(k, in))
		box_meet(k, r, in->in, 2);
	return 0;
}

static int
op_where(CgKernel *k, const TileInst *in)
{
	int r = in->res, c = in->in[0], a = in->in[1], b = in->in[2];
	DType rt = vdt(k, r);
	char ec[256], ea[256], eb[256], ca[300], cb[300], out[256];
	int nl;

	elem(ec, sizeof ec, k, c, k->sh[r]);
	elem(ea, sizeof ea, k, a, k->sh[r]);
	elem(eb, sizeof eb, k, b, k->sh[r]);
	conv(ca, sizeof ca, ea, vdt(k, a), rt);
	conv(cb, sizeof cb, eb, vdt(k, b), rt);
	elem(out, sizeof out, k, r, k->sh[r]);
	nl = open_loops(k, k->sh[r], 4);
	cg_line(k, "%s = %s ? %s : %s;", out, ec, ca, cb);
	close_loops(k, nl);
	box_meet(k, r, in->in, 3);
	return 0;
}

static int zero_loop(const CgKernel *k, int it);

static int
op_fill(CgKernel *k, const TileInst *in)
{
	int r = in->res, nl;
	char n[64], v[300], out[256];

	if (k->alias[r] && zero_loop(k, k->alias[r] - 1) >= 0) {
		/* the zeros that start a loop whose dot writes the whole tile
		 * in its first step from accumulators set to 0 (op_dot) */
		cg_line(k, "/* (the dot's first step starts from 0) */");
		box_full(k, r);
		return 0;
	}
	cnum(n, sizeof n, in->op == TO_ZEROS ? tile_inum(0) : in->value, vdt(k, r));
	if (!is_float(vdt(k, r)))
		conv(v, sizeof v, n, DT_I64, vdt(k, r));
	else
		snprintf(v, sizeof v, "%s", n);
	elem(out, sizeof out, k, r, k->sh[r]);
	nl = open_loops(k, k->sh[r], 4);
	cg_line(k, "%s = %s;", out, v);
	close_loops(k, nl);
	box_full(k, r);
	return 0;
}

/* ---- fused elementwise runs --------------------------------------------- */

static bool
is_elementwise(const TileInst *in)
{
	return in->op == TO_UNARY || in->op == TO_BINARY || in->op == TO_WHERE;
}

/* The value of elementwise instruction in, as an expression of its
 * operands' expressions ex[] (already of their values' types). */
static void
ew_expr(const CgKernel *k, const TileInst *in, char ex[3][600], char *buf, size_t n)
{
	int r = in->res;
	DType rt = vdt(k, r);

	if (in->op == TO_UNARY) {
		DType xt = vdt(k, in->in[0]), ct = is_float(xt) ? xt : DT_I64;
		char val[1000];

		if (in->gop == OP_CAST) {
			conv(buf, n, ex[0], xt, rt);
			return;
		}
		cg_use_formula(k, 0, in->gop, xt);
		sfmt(val, sizeof val, "aicm_%s_%s(%s)", ir_ops[in->gop].name, fsuffix(xt), ex[0]);
		conv(buf, n, val, ct, rt);
	} else if (in->op == TO_BINARY) {
		int a = in->in[0], b = in->in[1];
		DType ct = vdt(k, a), kt;
		char ca[800], cb[800], val[2000];

		if (is_fill(k, a) && !is_fill(k, b))
			ct = vdt(k, b);
		kt = is_float(ct) ? ct : DT_I64;
		cg_use_formula(k, 1, in->gop, ct);
		conv(ca, sizeof ca, ex[0], vdt(k, a), kt);
		conv(cb, sizeof cb, ex[1], vdt(k, b), kt);
		/* an f64 row's division by a value the row shares (a softmax's
		 * sum): aicm_rdiv, its divisor's work done once a row */
		bool rdiv = in->gop == OP_DIV && ct == DT_F64 && k->row && k->sh[b][3] == 1 &&
		    k->sh[r][3] > 1;

		if (rdiv)
			cg_use_rdiv(k);
		snprintf(val, sizeof val, "aicm_%s%s_%s(%s, %s)", rdiv ? "r" : "",
		    ir_ops[in->gop].name, fsuffix(ct), ca, cb);
		conv(buf, n, val, kt, rt);
	} else {
		char ca[800], cb[800];

		conv(ca, sizeof ca, ex[1], vdt(k, in->in[1]), rt);
		conv(cb, sizeof cb, ex[2], vdt(k, in->in[2]), rt);
		sfmt(buf, n, "%s ? %s : %s", ex[0], ca, cb);
	}
}

/* Whether run i..e-1 divides integers (its boxes then come first). */
static bool
run_divides(const CgKernel *k, int i, int e)
{
	for (int q = i; q < e; q++)
		if (int_divides(k, &k->f->insts[q]))
			return true;
	return false;
}

/* The end of the elementwise run that starts at instruction i (i + 1:
 * no run). */
static int
run_end(const CgKernel *k, int i, int end)
{
	const TileFn *f = k->f;
	int e = i + 1;

	if (!is_elementwise(&f->insts[i]))
		return e;
	while (e < end && is_elementwise(&f->insts[e]) &&
	    !memcmp(k->sh[f->insts[e].res], k->sh[f->insts[i].res], sizeof k->sh[0]))
		e++;
	return e;
}

/* The statements of run i..e-1 for the lane (i0..i3) of a loop over
 * shape sh: each value a local vN of the loop body, its operands the
 * run's earlier locals or tiles' elements; a value that an instruction
 * after the run reads from its tile is stored there too. */
static void
run_body(CgKernel *k, int i, int e, const int64_t *sh)
{
	const TileFn *f = k->f;

	for (int q = i; q < e; q++) {
		const TileInst *in = &f->insts[q];
		char ex[3][600], val[2500];

		for (int j = 0; j < in->nin; j++) {
			int v = in->in[j], def = f->vals[v].def;

			if (def >= i && def < q)
				snprintf(ex[j], sizeof ex[j], "v%d", v);
			else
				elem(ex[j], sizeof ex[j], k, v, sh);
		}
		ew_expr(k, in, ex, val, sizeof val);
		if (int_divides(k, in))
			divz_check(k, in, ex[1], sh);
		cg_line(k, "const %s v%d = %s;", cg_ctype(vdt(k, in->res)), in->res, val);
		if (!k->reg[in->res] && !k->chain[in->res]) {
			char out[256];

			elem(out, sizeof out, k, in->res, sh);
			cg_line(k, "%s = v%d;", out, in->res);
		}
	}
}

/* The valid boxes of run i..e-1's values. */
static void
run_boxes(CgKernel *k, int i, int e)
{
	for (int q = i; q < e; q++) {
		const TileInst *in = &k->f->insts[q];

		if (in->op == TO_UNARY)
			box_copy(k, in->res, in->in[0]);
		else
			box_meet(k, in->res, in->in, in->nin);
	}
}

/* Instructions i..e-1, elementwise ops of one result shape, as one loop
 * nest: each value is a register (a local of the loop body) and only the
 * values that an instruction after the run reads are stored to their
 * tiles.  The chain x*y+z then relu is one pass over the tile, vectorised
 * whole, instead of three passes through memory. */
static void
emit_run(CgKernel *k, int i, int e)
{
	const int64_t *sh = k->sh[k->f->insts[i].res];
	int nl;

	for (int q = i + 1; q < e; q++)
		cg_line(k, "/* %s */", k->line[q]);
	if (run_divides(k, i, e))
		run_boxes(k, i, e);   /* divz_check reads them */
	if (k->row && k->pf_inst == i) {
		/* the row in 64-byte chunks, each prefetching (row_prefetch) */
		int W = 64 / (int)ir_dtype_size(vdt(k, k->f->insts[i].res));

		cg_line(k, "for (long c = 0; c < %" PRId64 "; c++) {", sh[3] / W);
		k->depth++;
		row_prefetches(k, W);
		cg_line(k, "for (int j = 0; j < %d; j++) {", W);
		k->depth++;
		cg_line(k, "const long i3 = c * %d + j;", W);
		run_body(k, i, e, sh);
		close_loops(k, 2);
		if (sh[3] % W) {
			cg_line(k, "for (long i3 = %" PRId64 "; i3 < %" PRId64 "; i3++) {", sh[3] / W * W,
			    sh[3]);
			k->depth++;
			run_body(k, i, e, sh);
			close_loops(k, 1);
		}
		if (!run_divides(k, i, e))
			run_boxes(k, i, e);
		return;
	}
	nl = open_loops(k, sh, 4);
	run_body(k, i, e, sh);
	close_loops(k, nl);
	if (!run_divides(k, i, e))
		run_boxes(k, i, e);
}

/* Value v's element at the lane (i0..i3) of a loop over shape sh, the
 * reader's: its tile's element; or, a chained value (cg_plan_runs), the
 * statements of its run, written here inside the reader's loop, and then
 * its local vN.  relu then a row's sum is one pass over the row, the
 * relu never stored. */
static void
operand(char *buf, size_t n, CgKernel *k, int v, const int64_t *sh)
{
	const TileFn *f = k->f;
	int q;

	if (!k->chain[v]) {
		elem(buf, n, k, v, sh);
		return;
	}
	q = f->vals[v].def;
	while (q > 0 && is_elementwise(&f->insts[q - 1]) && k->chain[f->insts[q - 1].res])
		q--;
	run_body(k, q, f->vals[v].def + 1, sh);
	snprintf(buf, n, "v%d", v);
}

/* ---- reductions, dot, layout ------------------------------------------ */

/* The neutral element of reduction gop in element type dt, as C. */
static void
neutral(char *buf, size_t n, OpId gop, DType dt)
{
	if (is_float(dt)) {
		cnum(buf, n, tile_num(ir_scalar_neutral(gop, dt)), dt);
		return;
	}
	cnum(buf, n, tile_inum(ir_scalar_neutral_i64(gop, dt)), DT_I64);
}

/* Opens `if (every extent-1 dim d < upto of x's box is non-empty) {`
 * when x is read in place or chained (a masked load's lanes past the
 * tensor's edge are not in memory, and the loops below bound only the
 * dims longer than 1 by the box); returns whether it did. */
static bool
box_guard(CgKernel *k, int x, int upto)
{
	char cond[200];
	size_t len = 0;

	if (!k->inplace[x] && !k->chain[x])
		return false;
	cond[0] = '\0';
	for (int d = 0; d < upto; d++)
		if (k->sh[x][d] == 1)
			len += (size_t)snprintf(cond + len, sizeof cond - len, "%sb%d[%d] > 0",
			    len ? " && " : "", x, d);
	if (!len)
		return false;
	cg_line(k, "if (%s) {", cond);
	k->depth++;
	return true;
}

static void
box_guard_end(CgKernel *k, bool opened)
{
	if (opened) {
		k->depth--;
		cg_line(k, "}");
	}
}

static int reduce_tail(CgKernel *k, const TileInst *in, OpId comb, DType kt);
static int reduce_rows(CgKernel *k, const TileInst *in, const int64_t *osh, const char *z,
    OpId comb, DType kt);

static int
op_reduce(CgKernel *k, const TileInst *in)
{
	int r = in->res, x = in->in[0];
	int rin = k->f->vals[x].rank;
	int ax = in->axis < 0 ? -1 : (int)in->axis + 4 - rin < 0 ? -2 : (int)in->axis + 4 - rin;
	const int64_t *sh = k->sh[x];
	int64_t osh[4];
	DType xt = vdt(k, x), rt = vdt(k, r), kt = is_float(xt) ? xt : DT_I64;
	char z[64], ex[256], eo[256], cx[300];
	OpId comb = in->gop == OP_MEAN ? OP_SUM : in->gop;
	bool guard;

	for (int d = 0; d < 4; d++) {
		bool red = ax == -1 ? d >= 4 - rin : d == ax;

		osh[d] = red ? 1 : sh[d];
	}
	cg_use_formula(k, 2, comb, xt);
	neutral(z, sizeof z, comb, xt);
	if (k->row) {
		/* one row: its own result element (row_inst) */
		cg_line(k, "t%d[i2] = %s;", r, z);
	} else {
		cg_line(k, "for (long q = 0; q < %" PRId64 "; q++)", numel(k, r));
		cg_line(k, "\tt%d[q] = %s;", r, z);
	}
	/* floats only: an integer sum or max is associative, and gcc
	 * vectorises the plain loop (gcc 12's SLP vectoriser also got the
	 * partial sums of an i32 row wrong under -march=native: half of
	 * them, seen on testdata/tiled/int-atomics.aicm) */
	if (osh[3] == 1 && sh[3] >= 16 && is_float(xt))
		return reduce_rows(k, in, osh, z, comb, kt);
	/* over the operand's valid box only */
	guard = box_guard(k, x, 4);
	for (int d = 0; d < 4; d++)
		if (sh[d] > 1) {
			cg_line(k, "for (long i%d = 0; i%d < aicm_min(b%d[%d], %" PRId64 "); i%d++) {", d, d,
			    x, d, sh[d], d);
			k->depth++;
		}
	{
		char ix[200];
		int64_t st = 1, s[4];
		size_t len = 0;

		for (int d = 3; d >= 0; d--) {
			s[d] = st;
			st *= osh[d];
		}
		ix[0] = '\0';
		for (int d = 0; d < 4; d++)
			if (osh[d] > 1)
				len += (size_t)snprintf(ix + len, sizeof ix - len, "%si%d * %" PRId64,
				    len ? " + " : "", d, s[d]);
		snprintf(eo, sizeof eo, "t%d[%s]", r, len ? ix : "0");
	}
	operand(ex, sizeof ex, k, x, sh);
	conv(cx, sizeof cx, ex, xt, kt);
	{
		char cr[400], val[800];

		conv(cr, sizeof cr, eo, rt, kt);
		snprintf(val, sizeof val, "aicm_c%s_%s(%s, %s)", ir_ops[comb].name, fsuffix(xt), cr,
		    cx);
		conv(cr, sizeof cr, val, kt, rt);
		cg_line(k, "%s = %s;", eo, cr);
	}
	for (int d = 0; d < 4; d++)
		if (sh[d] > 1) {
			k->depth--;
			cg_line(k, "}");
		}
	box_guard_end(k, guard);
	return reduce_tail(k, in, comb, kt);
}

/* A reduction's result box, and its accumulator operand combined in. */
static int
reduce_tail(CgKernel *k, const TileInst *in, OpId comb, DType kt)
{
	int r = in->res, x = in->in[0];
	int rin = k->f->vals[x].rank, rout = k->f->vals[r].rank, nl;
	DType xt = vdt(k, x), rt = vdt(k, r);

	/* the result's box: the kept dims' extents, reduced ones 1 */
	{
		char tmp[IR_MAX_RANK][40];
		int nr = 0;

		for (int q = 0; q < rin; q++) {
			int d = q + 4 - rin;
			bool red = in->axis < 0 || q == in->axis;

			if (!red) {
				if (d >= 0)
					snprintf(tmp[nr++], sizeof tmp[0], "b%d[%d]", x, d);
				else
					snprintf(tmp[nr++], sizeof tmp[0], "1");
			} else if (in->keepdims) {
				snprintf(tmp[nr++], sizeof tmp[0], "1");
			}
		}
		for (int d = 0; d < 4; d++) {
			int q = d - (4 - rout);

			cg_line(k, "b%d[%d] = %s;", r, d, q >= 0 && q < nr ? tmp[q] : "1");
		}
	}
	if (in->nin == 2) {
		int c = in->in[1];
		char ec[256], cc[300], eo2[256], co[300], val[700], st2[800];

		elem(ec, sizeof ec, k, c, k->sh[r]);
		elem(eo2, sizeof eo2, k, r, k->sh[r]);
		conv(cc, sizeof cc, ec, vdt(k, c), kt);
		conv(co, sizeof co, eo2, rt, kt);
		snprintf(val, sizeof val, "aicm_c%s_%s(%s, %s)", ir_ops[comb].name, fsuffix(xt), cc,
		    co);
		conv(st2, sizeof st2, val, kt, rt);
		nl = open_loops(k, k->sh[r], 4);
		cg_line(k, "%s = %s;", eo2, st2);
		close_loops(k, nl);
		for (int d = 0; d < 4; d++)
			cg_line(k, "b%d[%d] = aicm_min(b%d[%d], b%d[%d]);", r, d, r, d, c, d);
	}
	return 0;
}

/* A reduction along the tile's last dim (a row's sum or max; floats):
 * W partial accumulators a row (64 bytes of them: one AVX-512 vector, two
 * AVX ones), combined at its end, so that the row's strip vectorises (one
 * running accumulator is a chain of dependent adds that no compiler may
 * reorder); the order of the sum differs from one accumulator's, as the
 * tile engine's vector kernels' does.  A chained operand's statements go
 * inside both strips (operand). */
static int
reduce_rows(CgKernel *k, const TileInst *in, const int64_t *osh, const char *z, OpId comb,
    DType kt)
{
	int r = in->res, x = in->in[0];
	const int64_t *sh = k->sh[x];
	DType xt = vdt(k, x), rt = vdt(k, r);
	const char *KT = cg_ctype(kt), *fs = fsuffix(xt), *op = ir_ops[comb].name;
	char ex[256], cx[300], eo[256], cr[300], val[800], w[900];
	int64_t st = 1, s[4];
	size_t len = 0;
	char ix[200];
	/* V lanes a 64-byte vector; U such vectors of partials: two on a
	 * row of at least four vectors, two independent chains of compares
	 * (or adds) where one waited on the last (W3 f64 6% faster on the
	 * Zen 5, docs/perf.md session 12); a narrower row keeps one, so that
	 * its elements do not all fall to the scalar tail */
	int V = 64 / (int)ir_dtype_size(xt), U = sh[3] >= 4 * V ? 2 : 1, W = U * V;
	/* a float max or min: gcc does not vectorise its NaN-keeping select,
	 * so the strip's values go to blk and aicm_vcmax_f32 (emit_c.c, GCC
	 * vector extensions) combines them into part a vector at a time */
	bool guard, vsel = comb == OP_MAX || comb == OP_MIN;
	/* the strip's W values contiguous in memory (a tile or a tensor's row
	 * read in place, in the type of the sum): aicm_vcOP_T reads them
	 * there.  Copied to blk, gcc turned the copy into a memcpy of 16-byte
	 * pieces that the 32-byte loads of aicm_vcmax_f32 then waited on (a
	 * failed store forwarding: a fifth of w3s f32 on the Zen 3) */
	/* a float sum a vector at a time too (aicm_vcsum_T), when it adds in
	 * the values' own type */
	bool vec = vsel || (comb == OP_SUM && xt == kt && is_float(kt));
	bool direct = vec && !k->chain[x] && xt == kt && k->sh[x][3] == sh[3] && sh[3] > 1 &&
	    (!k->inplace[x] || k->vstr[x][3] == 1);

	for (int d = 3; d >= 0; d--) {
		s[d] = st;
		st *= osh[d];
	}
	ix[0] = '\0';
	for (int d = 0; d < 3; d++)
		if (osh[d] > 1)
			len += (size_t)snprintf(ix + len, sizeof ix - len, "%si%d * %" PRId64,
			    len ? " + " : "", d, s[d]);
	snprintf(eo, sizeof eo, "t%d[%s]", r, len ? ix : "0");
	guard = box_guard(k, x, 3);
	for (int d = 0; d < 3; d++)
		if (sh[d] > 1 && k->row && d == 2) {
			cg_line(k, "if (i2 < aicm_min(b%d[2], %" PRId64 ")) {", x, sh[2]);
			k->depth++;
		} else if (sh[d] > 1) {
			cg_line(k, "for (long i%d = 0; i%d < aicm_min(b%d[%d], %" PRId64 "); i%d++) {", d, d,
			    x, d, sh[d], d);
			k->depth++;
		}
	cg_line(k, "{");
	k->depth++;
	cg_line(k, "%s part[%d], acc = %s;", KT, W, z);
	/* the box's width, bounded by the tile's for the compiler's sake */
	cg_line(k, "const long n3 = b%d[3] < 0 ? 0 : b%d[3] > %" PRId64 " ? %" PRId64 " : b%d[3];",
	    x, x, sh[3], sh[3], x);
	cg_line(k, "for (int j = 0; j < %d; j++)", W);
	cg_line(k, "\tpart[j] = %s;", z);
	cg_line(k, "for (long c = 0; c < n3 / %d; c++) {", W);
	k->depth++;
	if (k->row && k->pf_inst == (int)(in - k->f->insts))
		row_prefetches(k, W);
	if (direct) {
		cg_line(k, "const long i3 = c * %d;   /* the strip's first; its %d values follow */", W,
		    W);
		operand(ex, sizeof ex, k, x, sh);
		cg_line(k, "aicm_vc%s_%s(part, &%s);", op, fs, ex);
		for (int u = 1; u < U; u++)
			cg_line(k, "aicm_vc%s_%s(part + %d, &%s + %d);", op, fs, u * V, ex, u * V);
	} else {
		if (vsel)
			cg_line(k, "%s blk[%d];", KT, W);
		cg_line(k, "for (int j = 0; j < %d; j++) {", W);
		k->depth++;
		cg_line(k, "const long i3 = c * %d + j;", W);
		operand(ex, sizeof ex, k, x, sh);
		conv(cx, sizeof cx, ex, xt, kt);
		if (vsel)
			cg_line(k, "blk[j] = %s;", cx);
		else
			cg_line(k, "part[j] = aicm_c%s_%s(part[j], %s);", op, fs, cx);
		k->depth--;
		cg_line(k, "}");
		for (int u = 0; vsel && u < U; u++)
			cg_line(k, u ? "aicm_vc%s_%s(part + %d, blk + %d);" : "aicm_vc%s_%s(part, blk);", op,
			    fs, u * V, u * V);
	}
	k->depth--;
	cg_line(k, "}");
	/* the W partials combined pairwise, halves onto halves: log2 W
	 * dependent steps where a running fold was W (16 in f32; in w3s f32
	 * a fifth of the kernel, the row's max waiting on it before its exp
	 * could start).  A max or min gives the same value (of two equal
	 * ones it may keep the other zero's sign); a sum rounds in another
	 * order, as the tile engine's vector kernels' already does. */
	for (int h = W / 2; h > 1; h /= 2) {
		/* a whole vector onto the other, where the strip's loop keeps
		 * part in vectors too (a sum's scalar strip, a chained operand's:
		 * through aicm_vcsum here gcc stored part to memory in every
		 * step of that loop, W2 f64 at 1x1024 9.1 -> 12.5 ms) */
		if ((vsel || direct) && h == V) {
			cg_line(k, "aicm_vc%s_%s(part, part + %d);", op, fs, V);
			continue;
		}
		cg_line(k, "for (int j = 0; j < %d; j++)", h);
		cg_line(k, "\tpart[j] = aicm_c%s_%s(part[j], part[j + %d]);", op, fs, h);
	}
	cg_line(k, "part[0] = aicm_c%s_%s(part[0], part[1]);", op, fs);
	cg_line(k, "acc = aicm_c%s_%s(acc, part[0]);", op, fs);
	cg_line(k, "for (long i3 = n3 / %d * %d; i3 < n3; i3++) {", W, W);
	k->depth++;
	operand(ex, sizeof ex, k, x, sh);
	conv(cx, sizeof cx, ex, xt, kt);
	cg_line(k, "acc = aicm_c%s_%s(acc, %s);", op, fs, cx);
	k->depth--;
	cg_line(k, "}");
	conv(cr, sizeof cr, eo, rt, kt);
	snprintf(val, sizeof val, "aicm_c%s_%s(%s, acc)", op, fs, cr);
	conv(w, sizeof w, val, kt, rt);
	cg_line(k, "%s = %s;", eo, w);
	k->depth--;
	cg_line(k, "}");
	for (int d = 0; d < 3; d++)
		if (sh[d] > 1) {
			k->depth--;
			cg_line(k, "}");
		}
	box_guard_end(k, guard);
	return reduce_tail(k, in, comb, kt);
}

/* The micro-kernel's width: 256 bytes (64 f32 lanes, 32 f64: four
 * 512-bit vectors), or the largest power of two that divides N. */
static int64_t
dot_nr(int64_t N, DType rt)
{
	int64_t NR = rt == DT_F32 ? 64 : 32;

	while (NR > 1 && N % NR)
		NR /= 2;
	return NR;
}

/* Whether a float dot of K x N b packs its strips: when one fits 64 KiB
 * (op_dot), always when b is read from elsewhere (cg_plan_dots). */
static bool
dot_packs(int64_t K, int64_t N, DType rt)
{
	return K * dot_nr(N, rt) * (rt == DT_F32 ? 4 : 8) <= 65536;
}

/* Whether a packed float dot (dot_packs) packs b, read from bs (b, or the
 * tile that b transposes: cg_plan_dots' fold): when a strip is narrower
 * than b, b is read from elsewhere, or from its tensor in place, unless
 * there its strips are already contiguous, rows of one strip's width
 * (W4's v: packing copied it as it was). */
static bool
dot_packs_strips(const CgKernel *k, int b, int bs)
{
	int64_t N = k->sh[b][3];

	if (bs == b && k->inplace[b] && k->vstr[b][3] == 1 && k->vstr[b][2] == N &&
	    dot_nr(N, vdt(k, b)) == N)
		return false;
	return dot_nr(N, vdt(k, b)) < N || bs != b || k->inplace[b];
}

/* Whether a float dot of N columns calls the vector micro-kernel: its
 * strips are whole 64-byte vectors (op_dot). */
static bool
dot_vec(int64_t N, DType rt)
{
	return dot_nr(N, rt) * (rt == DT_F32 ? 4 : 8) % 64 == 0;
}

/* The loop whose carried tile is it, when that tile starts as zeros
 * and a float dot accumulates it in place (cg_plan_dots), and the loop
 * runs at least once: the dot's first step sets its accumulators to 0
 * and the zeros are never written.  Else -1. */
static int
zero_loop(const CgKernel *k, int it)
{
	const TileFn *f = k->f;

	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		int y, d;

		if (in->op != TO_FOR || in->iter != it)
			continue;
		y = f->insts[in->end].in[0];
		d = f->vals[y].def;
		if (is_fill(k, in->in[0]) && f->insts[f->vals[in->in[0]].def].op == TO_ZEROS &&
		    k->alias[in->in[0]] == it + 1 &&
		    k->alias[y] == it + 1 && d >= 0 && f->insts[d].op == TO_DOT &&
		    is_float(vdt(k, y)) && in->step > 0 && in->hi > in->lo)
			return i;
		return -1;
	}
	return -1;
}

/* How far (in elements) the tensor view that b (bs) is loaded from (in
 * place) moves from one step of loop l (its instruction) to the next; 0
 * when it does not move along it. */
static int64_t
b_step_along(CgKernel *k, int bs, int l)
{
	const TileFn *f = k->f;
	int d = f->vals[bs].def;
	int64_t delta = 0;

	if (!k->inplace[bs] || d < 0 || f->insts[d].op != TO_LOAD || l < 0 ||
	    f->insts[l].step <= 0)
		return 0;
	/* index q of the load is padded tile dim 4 - nidx + q, whose
	 * tensor stride vstr holds (a dim before the tile's four: none) */
	for (int q = 0; q < f->insts[d].nidx; q++)
		for (int t = 0; t < f->insts[d].idx[q].nterm; t++) {
			int pd = 4 - f->insts[d].nidx + q;

			if (f->insts[d].idx[q].val[t] != f->insts[l].var)
				continue;
			if (pd < 0)
				return 0;
			delta += f->insts[d].idx[q].coef[t] * f->insts[l].step * k->vstr[bs][pd];
		}
	return delta;
}

/* b_step_along the loop that carries the dot's result r, and that loop;
 * 0 when r is not a loop's carried tile. */
static int64_t
dot_b_step(CgKernel *k, int r, int bs, int *loop)
{
	const TileFn *f = k->f;
	int l = -1;

	if (!k->alias[r])
		return 0;
	for (int i = 0; i < f->ninsts && l < 0; i++)
		if (f->insts[i].op == TO_FOR && f->insts[i].iter == k->alias[r] - 1)
			l = i;
	*loop = l;
	return b_step_along(k, bs, l);
}

/* The innermost loop (its instruction) around instruction i, or -1. */
static int
loop_around(const TileFn *f, int i)
{
	int l = -1;

	for (int q = 0; q < i; q++)
		if (f->insts[q].op == TO_FOR && f->insts[q].end > i)
			l = q;
	return l;
}

/* dot(a, b, c): o = c + a b on the last two dims.  The accumulator row
 * is built in a local array of constant length and the k loop's inner
 * strip is contiguous in b and o, which gcc turns into FMA vectors. */
static int
op_dot(CgKernel *k, const TileInst *in)
{
	int r = in->res, a = in->in[0], b = in->in[1], c = in->in[2];
	int64_t M = k->sh[a][2], K = k->sh[a][3], N = k->sh[b][3];
	DType rt = vdt(k, r);
	const char *T = cg_ctype(rt);

	if (!is_float(rt)) {
		cg_line(k, "for (long m = 0; m < %" PRId64 "; m++)", M);
		cg_line(k, "\tfor (long n = 0; n < %" PRId64 "; n++) {", N);
		cg_line(k, "\t\tint64_t s = t%d[m * %" PRId64 " + n];", c, N);
		cg_line(k, "\t\tfor (long p = 0; p < %" PRId64 "; p++)", K);
		cg_line(k, "\t\t\ts = AICM_I64(AICM_U64(s) + AICM_U64(t%d[m * %" PRId64 " + p]) * "
		    "AICM_U64(t%d[p * %" PRId64 " + n]));", a, K, b, N);
		{
			char w[200];

			conv(w, sizeof w, "s", DT_I64, rt);
			cg_line(k, "\t\tt%d[m * %" PRId64 " + n] = %s;", r, N, w);
		}
		cg_line(k, "\t}");
	} else {
		/* A strip of whole 64-byte vectors calls the vector
		 * micro-kernel aicm_dot (6 rows by up to four vectors,
		 * emit_c.c's dot_text); a narrower one keeps this plain block.
		 * The plain block: MR rows by NR columns of the result held in
		 * one local array of constant bounds, every loop over it of
		 * constant trip count: gcc unrolls them all and keeps the
		 * MR x NR/lanes accumulator vectors in registers (16 of the 32
		 * zmm), each step of p one broadcast of a's element times a
		 * contiguous strip of b's row, FMA vectors under -march=native.
		 * NR x MR is 32 x 4 in f64 (four 512-bit vectors a row) and
		 * 32 x 8 in f32 (two) when M and N allow: timed on a 128^3
		 * block, 4 x 4 vectors ran at 89% of bench/peak.c's FMA peak in
		 * f64 where 8 x 2 ran at half (gcc spilled a row and split a's
		 * loads); in f32 both ran at 96%, and 8 x 2 was faster in W1.
		 * (Four separate arrays, the earlier form, left the loop
		 * vectorised over n with the accumulators on the stack.)  a is
		 * read from its copied tile: read in place, its rows 4 KiB
		 * apart, the same kernel ran 3x slower (L1 set aliasing). */
		int64_t NR = dot_nr(N, rt), MR = rt == DT_F32 ? 8 : 4;
		/* where b(p, n) is: SRC[p * sp + n * sn], b's tile, or, when
		 * cg_plan_dots says so, the tensor b is loaded from (read in
		 * place), or the tile (or tensor) that b transposes (fold) */
		int bs = b;
		int64_t sp = N, sn = 1;

		if (k->fold[b]) {
			bs = k->f->insts[k->f->vals[b].def].in[0];
			sp = k->inplace[bs] ? k->vstr[bs][3] : 1;
			sn = k->inplace[bs] ? k->vstr[bs][2] : k->sh[bs][3];
		} else if (k->inplace[b]) {
			sp = k->vstr[b][2];
			sn = k->vstr[b][3];
		}
		while (MR > 1 && M % MR)
			MR /= 2;
		/* n0 outside m: the K x NR strip of b stays in L1 while the
		 * rows of a stream past it (m outside, all of b was read from
		 * L2 once per MR rows: 1 flop a byte, the kernel L2-bound) */
		/* The strip is packed (copied contiguous, rows NR apart) when
		 * it fits 64 KiB: b's rows N apart map onto a few L1 sets
		 * (1 KiB apart, 16 of the 64) and evict each other. */
		bool pack = dot_packs(K, N, rt) && dot_packs_strips(k, b, bs);
		/* c a zeros: the accumulators start at 0, c is not read; or
		 * c is a loop's carried tile that starts as zeros (zero_loop):
		 * they start at 0 in the loop's first step */
		bool zc = k->f->vals[c].def >= 0 && k->f->insts[k->f->vals[c].def].op == TO_ZEROS &&
		    !k->alias[c];
		int zl = k->alias[r] ? zero_loop(k, k->alias[r] - 1) : -1;
		/* a strip of whole vectors (64 bytes; when N allows): the
		 * micro-kernel of vectors, else the plain block below */
		bool vec = dot_vec(N, rt);

		cg_line(k, "for (long n0 = 0; n0 < %" PRId64 "; n0 += %" PRId64 ") {", N, NR);
		k->depth++;
		if (pack && k->keep[r]) {
			/* kept (cg_plan_dots): strip (step, n0) of the loop l,
			 * packed again only when it comes from elsewhere */
			const TileInst *l = &k->f->insts[loop_around(k->f, (int)(in - k->f->insts))];

			cg_line(k, "const long slot = (s%d - %" PRId64 ") / %" PRId64 " * %" PRId64
			    " + n0 / %" PRId64 ";", l->var, l->lo, l->step, N / NR, NR);
			cg_line(k, "%s *restrict pk = &pc%d[slot * %" PRId64 "];   /* b's strip, packed */",
			    T, r, K * NR);
			cg_line(k, "if (pt%d[slot] != &t%d[n0 * %" PRId64 "]) {", r, bs, sn);
			k->depth++;
			cg_line(k, "pt%d[slot] = &t%d[n0 * %" PRId64 "];", r, bs, sn);
		} else if (pack) {
			cg_line(k, "%s pk[%" PRId64 "];   /* b's strip, packed */", T, K * NR);
		}
		if (pack) {
			/* the loop along b's contiguous dim inside (a transpose
			 * read through: p; W4 ran 4% faster than with n inside) */
			if (sp == 1 && sn != 1) {
				cg_line(k, "for (int n = 0; n < %" PRId64 "; n++)", NR);
				cg_line(k, "\tfor (long p = 0; p < %" PRId64 "; p++)", K);
			} else {
				cg_line(k, "for (long p = 0; p < %" PRId64 "; p++)", K);
				cg_line(k, "\tfor (int n = 0; n < %" PRId64 "; n++)", NR);
			}
			cg_line(k, "\t\tpk[p * %" PRId64 " + n] = t%d[p * %" PRId64 " + (n0 + n) * %"
			    PRId64 "];", NR, bs, sp, sn);
		}
		if (pack && k->keep[r]) {
			k->depth--;
			cg_line(k, "}");
		}
		if (vec) {
			/* the micro-kernel aicm_dot (emit_c.c's dot_text): 6
			 * rows at a time, then the last M % 6 */
			const char *sfx = rt == DT_F32 ? "f32" : "f64";
			char zero[64], bq[64], ldb[32], pf[256];
			int sz = rt == DT_F32 ? 4 : 8;
			int cs = zc ? r : c;   /* a zeros c is not read */

			if (zc)
				snprintf(zero, sizeof zero, "1");
			else if (zl >= 0)
				snprintf(zero, sizeof zero, "s%d == %" PRId64, k->f->insts[zl].var,
				    k->f->insts[zl].lo);
			else
				snprintf(zero, sizeof zero, "0");
			if (pack) {
				snprintf(bq, sizeof bq, "pk");
				snprintf(ldb, sizeof ldb, "%" PRId64, NR);
			} else {
				snprintf(bq, sizeof bq, "&t%d[n0]", b);
				snprintf(ldb, sizeof ldb, "%" PRId64, sp);
			}
			/* while the first row blocks of a strip compute, they
			 * prefetch the next strip of b's rows (a line of each row
			 * a block), when its rows are b's (sn 1) and it is packed:
			 * W1 f32 6-10% faster.  A strip packed through a transpose
			 * (sp 1) whose source rows are contiguous (sn K: W4's k)
			 * is one run of NR x K elements: each block prefetches K
			 * lines of it in a row, NR x size / 64 blocks the whole
			 * strip, as many as in b's case. */
			int lp = -1;
			bool rows = pack && sn == 1 && !k->keep[r];
			bool run = pack && sp == 1 && sn == K && !k->keep[r];
			int64_t bstep = rows || run ? dot_b_step(k, r, bs, &lp) : 0;

			/* a dot whose result no loop carries (W4's qk and pv,
			 * inside the loop over k's and v's blocks): the loop
			 * around it, when that moves b */
			if ((rows || run) && !bstep) {
				lp = loop_around(k->f, (int)(in - k->f->insts));
				bstep = b_step_along(k, bs, lp);
			}
			/* one block's prefetches: their first element's distance
			 * from the previous block's, and their stride */
			int64_t blk = run ? K * (64 / sz) : 64 / sz, pfs = run ? 64 / sz : sp;
			char nxt[96], ns[64];

			/* the last strip's blocks prefetch the first strip of
			 * the loop's next step, when b moves along the loop
			 * (W1's k loop): 5% faster again.  Kept strips
			 * (cg_plan_dots) prefetch nothing: most programs find
			 * them packed. */
			if (bstep)
				snprintf(nxt, sizeof nxt, "s%d + %" PRId64 " < %" PRId64 " ? &t%d[%" PRId64
				    " + m / 6 * %" PRId64 "] : 0", k->f->insts[lp].var, k->f->insts[lp].step,
				    k->f->insts[lp].hi, bs, bstep, blk);
			else
				snprintf(nxt, sizeof nxt, "0");
			/* where the next strip starts in bs: n0 + NR, times sn */
			if (sn == 1)
				snprintf(ns, sizeof ns, "n0 + %" PRId64, NR);
			else
				snprintf(ns, sizeof ns, "(n0 + %" PRId64 ") * %" PRId64, NR, sn);
			if ((rows || run) && (NR < N || bstep))
				snprintf(pf, sizeof pf, "m < %" PRId64 " ? (n0 + %" PRId64 " < %" PRId64
				    " ? &t%d[%s + m / 6 * %" PRId64 "] : %s) : 0, %" PRId64,
				    NR * (int64_t)sz / 64 * 6, NR, N, bs, ns, blk, nxt, pfs);
			else
				snprintf(pf, sizeof pf, "0, 0");
			/* a's rows lda apart: its tile's, or its tensor's when
			 * read in place (cg_plan_dots) */
			int64_t lda = k->inplace[a] ? k->vstr[a][2] : K;

			cg_use_dot(k, rt);
			if (M >= 6)
				cg_line(k, "for (long m = 0; m < %" PRId64 "; m += 6)", M / 6 * 6);
			if (M >= 6)
				cg_line(k, "\taicm_dot_%s(6, %" PRId64 ", %s, %" PRId64 ", &t%d[m * %" PRId64
				    "], %" PRId64 ", %s, %s, &t%d[m * %" PRId64 " + n0], &t%d[m * %" PRId64
				    " + n0], %" PRId64 ",", sfx, NR, zero, K, a, lda, lda, bq, ldb, cs, N, r, N,
				    N);
			if (M >= 6)
				cg_line(k, "\t    %s);", pf);
			if (M % 6)
				cg_line(k, "aicm_dot_%s(%" PRId64 ", %" PRId64 ", %s, %" PRId64 ", &t%d[%"
				    PRId64 "], %" PRId64 ", %s, %s, &t%d[%" PRId64 " + n0], &t%d[%" PRId64
				    " + n0], %" PRId64 ", 0, 0);", sfx, M % 6, NR, zero, K, a, M / 6 * 6 * lda,
				    lda, bq, ldb, cs, M / 6 * 6 * N, r, M / 6 * 6 * N, N);
			k->depth--;
			cg_line(k, "}");
		} else {
			cg_line(k, "for (long m = 0; m < %" PRId64 "; m += %" PRId64 ") {", M, MR);
			k->depth++;
			cg_line(k, "%s acc[%" PRId64 "][%" PRId64 "];", T, MR, NR);
			if (zl >= 0) {
				cg_line(k, "if (s%d == %" PRId64 ") {   /* the loop's first step */",
				    k->f->insts[zl].var, k->f->insts[zl].lo);
				k->depth++;
			}
			cg_line(k, "for (int q = 0; q < %" PRId64 "; q++)", MR);
			cg_line(k, "\tfor (int n = 0; n < %" PRId64 "; n++)", NR);
			if (zc) {
				cg_line(k, "\t\tacc[q][n] = 0;");
			} else if (zl >= 0) {
				cg_line(k, "\t\tacc[q][n] = 0;");
				k->depth--;
				cg_line(k, "} else {");
				k->depth++;
				cg_line(k, "for (int q = 0; q < %" PRId64 "; q++)", MR);
				cg_line(k, "\tfor (int n = 0; n < %" PRId64 "; n++)", NR);
				cg_line(k, "\t\tacc[q][n] = t%d[(m + q) * %" PRId64 " + n0 + n];", c, N);
				k->depth--;
				cg_line(k, "}");
			} else {
				cg_line(k, "\t\tacc[q][n] = t%d[(m + q) * %" PRId64 " + n0 + n];", c, N);
			}
			cg_line(k, "for (long p = 0; p < %" PRId64 "; p++) {", K);
			k->depth++;
			if (pack)
				cg_line(k, "const %s *restrict bp = &pk[p * %" PRId64 "];", T, NR);
			else
				cg_line(k, "const %s *restrict bp = &t%d[p * %" PRId64 " + n0];", T, b, sp);
			cg_line(k, "for (int q = 0; q < %" PRId64 "; q++) {", MR);
			cg_line(k, "\tconst %s aq = t%d[(m + q) * %" PRId64 " + p];", T, a, K);
			cg_line(k, "\tfor (int n = 0; n < %" PRId64 "; n++)", NR);
			cg_line(k, "\t\tacc[q][n] += aq * bp[n];");
			cg_line(k, "}");
			k->depth--;
			cg_line(k, "}");
			cg_line(k, "for (int q = 0; q < %" PRId64 "; q++)", MR);
			cg_line(k, "\tfor (int n = 0; n < %" PRId64 "; n++)", NR);
			cg_line(k, "\t\tt%d[(m + q) * %" PRId64 " + n0 + n] = acc[q][n];", r, N);
			k->depth--;
			cg_line(k, "}");
			k->depth--;
			cg_line(k, "}");
		}
	}
	cg_line(k, "b%d[0] = 1; b%d[1] = 1;", r, r);
	cg_line(k, "b%d[2] = aicm_min(b%d[2], b%d[2]);", r, a, c);
	cg_line(k, "b%d[3] = aicm_min(b%d[3], b%d[3]);", r, b, c);
	return 0;
}

static int
op_transpose(CgKernel *k, const TileInst *in)
{
	int r = in->res, x = in->in[0], rk = k->f->vals[x].rank, p = 4 - rk, nl;
	int64_t xs[4], st = 1, s[4];
	char ix[200], out[256];
	size_t len = 0;

	if (k->fold[r]) {
		/* its dot packs from x (cg_plan_dots): the box alone */
		for (int d = 0; d < 4; d++) {
			int src = d < p ? d : p + (int)in->perm[d - p];

			if (src >= 0)
				cg_line(k, "b%d[%d] = b%d[%d];", r, d, x, src);
			else
				cg_line(k, "b%d[%d] = 1;", r, d);
		}
		return 0;
	}
	for (int d = 3; d >= 0; d--) {
		xs[d] = st;
		st *= k->sh[x][d];
	}
	for (int d = 0; d < 4; d++) {
		int src = d < p ? d : p + (int)in->perm[d - p];

		s[d] = src >= 0 ? xs[src] : 0;
		if (src >= 0)
			cg_line(k, "b%d[%d] = b%d[%d];", r, d, x, src);
		else
			cg_line(k, "b%d[%d] = 1;", r, d);
	}
	ix[0] = '\0';
	for (int d = 0; d < 4; d++)
		if (k->sh[r][d] > 1 && s[d])
			len += (size_t)snprintf(ix + len, sizeof ix - len, "%si%d * %" PRId64,
			    len ? " + " : "", d, s[d]);
	elem(out, sizeof out, k, r, k->sh[r]);
	nl = open_loops(k, k->sh[r], 4);
	cg_line(k, "%s = t%d[%s];", out, x, len ? ix : "0");
	close_loops(k, nl);
	return 0;
}

static int
op_broadcast(CgKernel *k, const TileInst *in)
{
	int r = in->res, x = in->in[0], nl;
	char ex[256], out[256];

	elem(ex, sizeof ex, k, x, k->sh[r]);
	elem(out, sizeof out, k, r, k->sh[r]);
	nl = open_loops(k, k->sh[r], 4);
	cg_line(k, "%s = %s;", out, ex);
	close_loops(k, nl);
	for (int d = 0; d < 4; d++)
		if (k->sh[x][d] == 1)
			cg_line(k, "b%d[%d] = %" PRId64 ";", r, d, k->sh[r][d]);
		else
			cg_line(k, "b%d[%d] = b%d[%d];", r, d, x, d);
	return 0;
}

static int
op_extract(CgKernel *k, const TileInst *in)
{
	int r = in->res, x = in->in[0];
	int64_t n = k->sh[r][3], m = k->sh[x][3], rows = numel(k, r) / n;

	if (k->inplace[r]) {
		/* a view (cg_plan_dots): x's rows */
		cg_line(k, "t%d = &t%d[%" PRId64 "];   /* read in place */", r, x, in->start);
		box_copy(k, r, x);
		cg_line(k, "b%d[3] = aicm_min(%" PRId64 ", b%d[3] - %" PRId64 " < 0 ? 0 : b%d[3] - %"
		    PRId64 ");", r, n, x, in->start, x, in->start);
		return 0;
	}
	cg_line(k, "for (long q = 0; q < %" PRId64 "; q++)", rows);
	cg_line(k, "\tmemcpy(&t%d[q * %" PRId64 "], &t%d[q * %" PRId64 " + %" PRId64 "], %"
	    PRId64 " * sizeof t%d[0]);", r, n, x, m, in->start, n, r);
	box_copy(k, r, x);
	cg_line(k, "b%d[3] = aicm_min(%" PRId64 ", b%d[3] - %" PRId64 " < 0 ? 0 : b%d[3] - %" PRId64
	    ");", r, n, x, in->start, x, in->start);
	return 0;
}

static int
op_join(CgKernel *k, const TileInst *in)
{
	int r = in->res;
	int64_t n = k->sh[r][3], rows = numel(k, r) / n, col = 0;

	box_copy(k, r, in->in[0]);
	cg_line(k, "b%d[3] = 0;", r);
	cg_line(k, "{");
	k->depth++;
	cg_line(k, "int open = 1;");
	for (int j = 0; j < in->nin; j++) {
		int x = in->in[j];
		int64_t m = k->sh[x][3];

		cg_line(k, "for (long q = 0; q < %" PRId64 "; q++)", rows);
		cg_line(k, "\tmemcpy(&t%d[q * %" PRId64 " + %" PRId64 "], &t%d[q * %" PRId64 "], %"
		    PRId64 " * sizeof t%d[0]);", r, n, col, x, m, m, r);
		for (int d = 0; d < 3; d++)
			cg_line(k, "b%d[%d] = aicm_min(b%d[%d], b%d[%d]);", r, d, r, d, x, d);
		cg_line(k, "if (open) {");
		cg_line(k, "\tb%d[3] += b%d[3];", r, x);
		cg_line(k, "\topen = b%d[3] == %" PRId64 ";", x, m);
		cg_line(k, "}");
		col += m;
	}
	k->depth--;
	cg_line(k, "}");
	return 0;
}

/* ---- accesses --------------------------------------------------------- */

/* An index expression of the tile IR in the program's scalars. */
static void
idx_expr(char *buf, size_t n, const TileIdx *x)
{
	size_t len = (size_t)snprintf(buf, n, "%" PRId64, x->k);

	for (int t = 0; t < x->nterm; t++)
		len += (size_t)snprintf(buf + len, n - len, " + %" PRId64 " * s%d", x->coef[t],
		    x->val[t]);
}

/* The tensor seen by access in, as rank, dims, strides per tensor dim and
 * origin; and the C field that holds it. */
typedef struct Acc {
	int rank;
	int64_t dim[IR_MAX_RANK];
	int64_t str[IR_MAX_RANK];
	int64_t base0;
	const char *field;
	DType dt;
} Acc;

static void
acc_of(const CgKernel *k, const TileInst *in, Acc *a)
{
	const Node *n = &k->g->nodes[k->node];
	Type buf;
	const Type *t = tile_target_type(k->g, n, in, &buf);
	int node = in->arg == TILE_RESULT ? k->node : k->f->args[in->arg];
	int64_t st = 1;

	a->rank = t->rank;
	a->base0 = 0;
	for (int d = t->rank - 1; d >= 0; d--) {
		a->dim[d] = t->dim[d];
		a->str[d] = st;
		st *= t->dim[d];
	}
	if (in->vstr) {
		a->base0 = in->vstr[IR_MAX_RANK];
		for (int d = 0; d < t->rank; d++)
			a->str[d] = in->vstr[d];
	}
	a->field = k->field[node];
	a->dt = k->g->nodes[node].type.dt;
}

/* Declares `long base` and fills box bx (a C array name) of a tile of
 * shape sh at in's indices, clipped to the tensor when in is masked. */
static void
access_box(CgKernel *k, const TileInst *in, const Acc *a, const int64_t *sh, const char *bx)
{
	int pad = 4 - a->rank;

	cg_line(k, "long base = %" PRId64 ";", a->base0);
	for (int d = 0; d < 4; d++)
		cg_line(k, "%s[%d] = %" PRId64 ";", bx, d, sh[d]);
	for (int q = 0; q < a->rank; q++) {
		char e[300];
		int d = pad + q;

		idx_expr(e, sizeof e, &in->idx[q]);
		cg_line(k, "{");
		k->depth++;
		cg_line(k, "const long o = %s;", e);
		if (d < 0) {
			if (in->masked)
				cg_line(k, "if (o >= %" PRId64 ") %s[0] = 0;", a->dim[q], bx);
			cg_line(k, "base += o * %" PRId64 ";", a->str[q]);
		} else {
			if (in->masked)
				cg_line(k, "if (%" PRId64 " - o < %" PRId64 ") %s[%d] = %" PRId64
				    " - o < 0 ? 0 : %" PRId64 " - o;", a->dim[q], sh[d], bx, d,
				    a->dim[q], a->dim[q]);
			cg_line(k, "base += o * %" PRId64 ";", a->str[q]);
		}
		k->depth--;
		cg_line(k, "}");
	}
}

/* The tensor's stride along padded tile dim d (0 where the tensor has no
 * such dim). */
static int64_t
tstr(const Acc *a, int d)
{
	int q = d - (4 - a->rank);

	return q >= 0 ? a->str[q] : 0;
}

/* Value v is read in place, in the tensor that a reaches: its padded
 * strides are the tensor's, and no tile buffer is allocated for it. */
static void
mark_inplace(CgKernel *k, int v, const Acc *a)
{
	k->inplace[v] = true;
	for (int d = 0; d < 4; d++)
		k->vstr[v][d] = tstr(a, d);
}

static void
src_index(char *buf, size_t n, const Acc *a, const int64_t *sh)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int d = 0; d < 4; d++) {
		int64_t s = tstr(a, d);

		if (sh[d] > 1 && s)
			len += (size_t)snprintf(buf + len, n - len, "%si%d * %" PRId64, len ? " + " : "",
			    d, s);
	}
	if (!len)
		snprintf(buf, n, "0");
}

static int
op_load(CgKernel *k, const TileInst *in)
{
	int r = in->res, nl;
	const int64_t *sh = k->sh[r];
	Acc a;
	char bx[16], si[200], out[256], oth[300];
	DType rt = vdt(k, r);

	acc_of(k, in, &a);
	snprintf(bx, sizeof bx, "b%d", r);
	cg_line(k, "{");
	k->depth++;
	access_box(k, in, &a, sh, bx);
	if (k->inplace[r]) {
		/* unmasked and read only by elementwise ops and reductions:
		 * they index the tensor itself (cg_plan) */
		cg_line(k, "t%d = a->%s + base;   /* read in place */", r, a.field);
		k->depth--;
		cg_line(k, "}");
		return 0;
	}
	cg_line(k, "const %s *restrict src = a->%s + base;", cg_ctype(a.dt), a.field);
	src_index(si, sizeof si, &a, sh);
	elem(out, sizeof out, k, r, sh);
	if (!in->masked) {
		char cv[300], s2[260];

		snprintf(s2, sizeof s2, "src[%s]", si);
		conv(cv, sizeof cv, s2, a.dt, rt);
		nl = open_loops(k, sh, 4);
		cg_line(k, "%s = %s;", out, cv);
		close_loops(k, nl);
	} else {
		char cv[300], s2[260];

		cnum(oth, sizeof oth, in->other, is_float(rt) ? rt : DT_I64);
		if (!is_float(rt)) {
			char w[128];

			conv(w, sizeof w, oth, DT_I64, rt);
			snprintf(oth, sizeof oth, "%s", w);
		}
		snprintf(s2, sizeof s2, "src[%s]", si);
		conv(cv, sizeof cv, s2, a.dt, rt);
		nl = open_loops(k, sh, 3);
		{
			/* the row is inside when every outer index is: an extent-1
			 * dim's index is 0 */
			char cond[200];
			size_t len = 0;

			for (int d = 0; d < 3; d++)
				len += (size_t)snprintf(cond + len, sizeof cond - len, "%s%s%d < b%d[%d]",
				    d ? " && " : "", sh[d] > 1 ? "i" : "", sh[d] > 1 ? d : 0, r, d);
			cg_line(k, "const long v3 = %s ? b%d[3] : 0;", cond, r);
		}
		/* open_loops did not declare the indices of extent-1 dims */
		cg_line(k, "long i3 = 0;");
		cg_line(k, "for (; i3 < v3; i3++)");
		cg_line(k, "\t%s = %s;", out, cv);
		cg_line(k, "for (; i3 < %" PRId64 "; i3++)", sh[3]);
		cg_line(k, "\t%s = %s;", out, oth);
		close_loops(k, nl);
	}
	k->depth--;
	cg_line(k, "}");
	return 0;
}

/* A store streams (non-temporal stores, aicm_stream_T) by the tile
 * engine's rule (src/runtime/tile_plan.c, mark_dense): a float tensor of
 * at least 16 MiB written in rows of at least 256 contiguous bytes of the
 * tile's own type.  Such a tensor would only evict the inputs from the
 * caches on its way out, and its lines' reads for ownership would cost a
 * third of W3's traffic; a smaller one (w3s) stays in the cache, plain. */
#define STREAM_MIN_TENSOR ((int64_t)16 << 20)
#define STREAM_MIN_ROW 256
/* the bytes of a streamed block: its values go to a buffer of one (in
 * L1), then out a vector at a time */
#define STREAM_BLOCK 256

static bool
store_streams(const CgKernel *k, const TileInst *in, const Acc *a)
{
	const int64_t *sh = k->sh[in->in[0]];
	int64_t es = (int64_t)ir_dtype_size(a->dt), numel = 1;

	for (int d = 0; d < a->rank; d++)
		numel *= a->dim[d];
	/* f64 not in a row segment: W3 f64 (a softmax whose exp costs three
	 * f32 ones, its row recomputed from L1) is bound by its arithmetic,
	 * where blk's extra pass costs more than the reads saved (Zen 3:
	 * 10.3 ms streamed, 10.0 plain, session 14; Zen 5: 4.39-4.63 against
	 * 4.24-4.41, session 17), while an f64 elementwise chain is bound by
	 * its bytes (W5 f64 on Zen 5: 10.6-11.9 ms streamed, 14.9-15.3
	 * plain); f32 streams in both (W3 f32 3.98 to 3.81 ms: docs/perf.md) */
	return in->op == TO_STORE && (a->dt == DT_F32 || (a->dt == DT_F64 && !k->row)) &&
	    vdt(k, in->in[0]) == a->dt && tstr(a, 3) == 1 && numel * es >= STREAM_MIN_TENSOR &&
	    sh[3] * es >= STREAM_MIN_ROW;
}

/* A store's loops over its box's rows (i0, i1 and, in a row segment,
 * the segment's row i2), opened before the row's own loop. */
static void
store_rows_open(CgKernel *k)
{
	for (int d = 0; d < 3; d++) {
		if (k->row && d == 2)
			cg_line(k, "if (i2 < bx[2])");
		else
			cg_line(k, "for (long i%d = 0; i%d < bx[%d]; i%d++)", d, d, d, d);
		k->depth++;
	}
}

/* Closes the row's own loop, the rows' loops and the store's block. */
static void
store_end(CgKernel *k)
{
	k->depth--;
	cg_line(k, "}");
	for (int d = 0; d < 3; d++)
		k->depth--;
	k->depth--;
	cg_line(k, "}");
}

static int
op_store(CgKernel *k, const TileInst *in)
{
	int v = in->in[0];
	const int64_t *sh = k->sh[v];
	Acc a;
	char si[200], ev[256], cv[300], dst[260];
	bool stream;

	acc_of(k, in, &a);
	stream = store_streams(k, in, &a);
	cg_line(k, "{");
	k->depth++;
	cg_line(k, "long bx[4];");
	access_box(k, in, &a, sh, "bx");
	for (int d = 0; d < 4; d++)
		cg_line(k, "if (b%d[%d] < bx[%d]) bx[%d] = b%d[%d];", v, d, d, d, v, d);
	cg_line(k, "%s *restrict dst = a->%s + base;", cg_ctype(a.dt), a.field);
	if (stream) {
		/* the row in blocks of STREAM_BLOCK: computed into blk (a loop
		 * that vectorises), then streamed out from the block's first */
		int64_t s3;
		int nb = STREAM_BLOCK / (int)ir_dtype_size(a.dt);

		store_rows_open(k);
		cg_line(k, "for (long c3 = 0; c3 < bx[3]; c3 += %d) {   /* streamed (non-temporal) */",
		    nb);
		k->depth++;
		cg_line(k, "%s blk[%d];", cg_ctype(a.dt), nb);
		cg_line(k, "const long m3 = aicm_min(%d, bx[3] - c3);", nb);
		cg_line(k, "for (long j = 0; j < m3; j++) {");
		k->depth++;
		cg_line(k, "const long i3 = c3 + j;");
		operand(ev, sizeof ev, k, v, sh);
		conv(cv, sizeof cv, ev, vdt(k, v), a.dt);
		cg_line(k, "blk[j] = %s;", cv);
		k->depth--;
		cg_line(k, "}");
		/* the block's first element: dst's index with c3 for i3 */
		si[0] = '\0';
		for (int d = 0, len = 0; d < 4; d++)
			if (sh[d] > 1 && (s3 = tstr(&a, d)) != 0)
				len += snprintf(si + len, sizeof si - (size_t)len, "%s%s%d * %" PRId64,
				    len ? " + " : "", d == 3 ? "c" : "i", d, s3);
		cg_line(k, "aicm_stream_%s(dst + %s, blk, m3);", fsuffix(a.dt), si[0] ? si : "0");
		store_end(k);
		cg_use_stream(k);
		k->streamed = true;
		return 0;
	}
	store_rows_open(k);
	cg_line(k, "for (long i3 = 0; i3 < bx[3]; i3++) {");
	k->depth++;
	src_index(si, sizeof si, &a, sh);
	snprintf(dst, sizeof dst, "dst[%s]", si);
	operand(ev, sizeof ev, k, v, sh);
	conv(cv, sizeof cv, ev, vdt(k, v), a.dt);
	if (in->op == TO_STORE) {
		cg_line(k, "%s = %s;", dst, cv);
	} else {
		OpId op = in->op == TO_ATOMIC_MAX ? OP_MAX : OP_SUM;
		DType kt = is_float(a.dt) ? a.dt : DT_I64;
		char cd[300], c2[300], val[800], w[900];

		cg_use_formula(k, 2, op, a.dt);
		conv(cd, sizeof cd, dst, a.dt, kt);
		conv(c2, sizeof c2, ev, vdt(k, v), kt);
		snprintf(val, sizeof val, "aicm_c%s_%s(%s, %s)", ir_ops[op].name, fsuffix(a.dt), cd,
		    c2);
		conv(w, sizeof w, val, kt, a.dt);
		cg_line(k, "%s = %s;", dst, w);
	}
	store_end(k);
	return 0;
}

/* The other= of a load as a C constant of the tile's type. */
static void
other_of(char *buf, size_t n, const TileInst *in, DType rt)
{
	char v[64];

	cnum(v, sizeof v, in->other, is_float(rt) ? rt : DT_I64);
	if (is_float(rt))
		snprintf(buf, n, "%s", v);
	else
		conv(buf, n, v, DT_I64, rt);
}

/* Opens a guarded load's block (load_pad, load_step) over in's tensor a,
 * declaring `long base` as decl says (a printf of a's origin); returns
 * the padding of a's dims to four. */
static int
guarded_open(CgKernel *k, const TileInst *in, Acc *a, const char *decl)
{
	acc_of(k, in, a);
	cg_line(k, "{");
	k->depth++;
	cg_line(k, decl, a->base0);
	return 4 - a->rank;
}

/* `const long oQ = ...`: the origin of in's access along tensor dim q. */
static void
guarded_origin(CgKernel *k, const TileInst *in, int q)
{
	char e[300];

	idx_expr(e, sizeof e, &in->idx[q]);
	cg_line(k, "const long o%d = %s;", q, e);
}

/* The lanes of a guarded load (load_pad, load_step): each reads the
 * tensor at base + idx when guard holds, else fill. */
static void
guarded_lanes(CgKernel *k, int r, const Acc *a, const char *guard, const char *idx,
    const char *fill)
{
	char out[256], cv[800], s2[700];
	int nl;

	snprintf(s2, sizeof s2, "a->%s[base%s]", a->field, idx);
	conv(cv, sizeof cv, s2, a->dt, vdt(k, r));
	elem(out, sizeof out, k, r, k->sh[r]);
	nl = open_loops(k, k->sh[r], 4);
	cg_line(k, "%s = %s ? %s : %s;", out, guard, cv, fill);
	close_loops(k, nl);
}

/* load_pad: a load at any offset; a lane outside the tensor reads the
 * fill tile's lane, or other=; every lane is valid. */
static int
op_load_pad(CgKernel *k, const TileInst *in)
{
	int r = in->res, pad;
	const int64_t *sh = k->sh[r];
	Acc a;
	char cond[600], idx[600], fill[300];
	size_t lc = 0, li = 0;
	DType rt = vdt(k, r);

	pad = guarded_open(k, in, &a, "long lead = 1, base = %" PRId64 ";");
	cond[0] = idx[0] = '\0';
	for (int q = 0; q < a.rank; q++) {
		int d = pad + q;

		guarded_origin(k, in, q);
		if (d < 0) {
			cg_line(k, "lead &= o%d >= 0 && o%d < %" PRId64 ";", q, q, a.dim[q]);
			cg_line(k, "if (lead) base += o%d * %" PRId64 ";", q, a.str[q]);
			continue;
		}
		{
			char l[16];

			snprintf(l, sizeof l, sh[d] > 1 ? "i%d" : "0", d);
			lc += (size_t)snprintf(cond + lc, sizeof cond - lc, " && o%d + %s >= 0 && o%d + %s < %"
			    PRId64, q, l, q, l, a.dim[q]);
			li += (size_t)snprintf(idx + li, sizeof idx - li, " + (o%d + %s) * %" PRId64, q, l,
			    a.str[q]);
		}
	}
	if (in->nin)
		elem(fill, sizeof fill, k, in->in[0], sh);
	else
		other_of(fill, sizeof fill, in, rt);
	{
		char guard[620];

		snprintf(guard, sizeof guard, "lead%s", cond);
		guarded_lanes(k, r, &a, guard, idx, fill);
	}
	box_full(k, r);
	k->depth--;
	cg_line(k, "}");
	return 0;
}

/* load_step: lane i of dim d reads element o_d + steps_d * i; the valid
 * box is the lanes before the tensor's edge, the others read other=. */
static int
op_load_step(CgKernel *k, const TileInst *in)
{
	int r = in->res, pad;
	const int64_t *sh = k->sh[r];
	Acc a;
	char cond[400], idx[600], oth[300];
	size_t lc = 0, li = 0;
	DType rt = vdt(k, r);

	pad = guarded_open(k, in, &a, "long base = %" PRId64 ";");
	box_full(k, r);
	cond[0] = idx[0] = '\0';
	for (int q = 0; q < a.rank; q++) {
		int d = pad + q;
		int64_t st = in->steps[q];

		guarded_origin(k, in, q);
		if (d < 0) {
			cg_line(k, "base += o%d * %" PRId64 ";", q, a.str[q]);
			continue;
		}
		if (st > 0)
			cg_line(k, "{ const long left = (%" PRId64 " - o%d + %" PRId64 ") / %" PRId64 "; "
			    "if (left < b%d[%d]) b%d[%d] = left; }", a.dim[q], q, st - 1, st, r, d, r, d);
		else
			cg_line(k, "{ const long left = o%d / %" PRId64 " + 1; if (left < b%d[%d]) "
			    "b%d[%d] = left; }", q, -st, r, d, r, d);
		if (sh[d] > 1) {
			lc += (size_t)snprintf(cond + lc, sizeof cond - lc, " && i%d < b%d[%d]", d, r, d);
			li += (size_t)snprintf(idx + li, sizeof idx - li, " + (o%d + %" PRId64 " * i%d) * %"
			    PRId64, q, st, d, a.str[q]);
		} else {
			lc += (size_t)snprintf(cond + lc, sizeof cond - lc, " && 0 < b%d[%d]", r, d);
			li += (size_t)snprintf(idx + li, sizeof idx - li, " + o%d * %" PRId64, q, a.str[q]);
		}
	}
	other_of(oth, sizeof oth, in, rt);
	{
		char guard[420];

		snprintf(guard, sizeof guard, "1%s", cond);
		guarded_lanes(k, r, &a, guard, idx, oth);
	}
	k->depth--;
	cg_line(k, "}");
	return 0;
}

/* Opens loops i0..i3 over every dim of sh, extent 1 included (per-lane
 * ops that index all four). */
static void
open_all(CgKernel *k, const int64_t *sh)
{
	for (int d = 0; d < 4; d++) {
		cg_line(k, "for (long i%d = 0; i%d < %" PRId64 "; i%d++) {", d, d, sh[d], d);
		k->depth++;
	}
}

/* The flat place in its indices tensor of the index at lane (i_p+ax+j) of
 * load_gather's index tile, as a C expression, when a plain load made
 * that tile (as lower-tiled's do; the tile engine's gather_index too);
 * else "-1" (the message then says "a lane"). */
static void
gather_place(const CgKernel *k, const TileInst *in, int p, char *buf, size_t n)
{
	int iv = in->in[0], di = k->f->vals[iv].def, q = k->f->vals[iv].rank;
	const TileInst *ld = di >= 0 ? &k->f->insts[di] : NULL;
	Acc a;
	size_t len = 0;

	snprintf(buf, n, "-1");
	if (!ld || ld->op != TO_LOAD || ld->res != iv || ld->has_view || ld->arg < 0)
		return;
	acc_of(k, ld, &a);
	if (a.rank != q)
		return;
	len = (size_t)snprintf(buf, n, "0");
	for (int j = 0; j < q; j++) {
		char e[300], l[40] = "";

		idx_expr(e, sizeof e, &ld->idx[j]);
		/* (a dim before either tile's last four has the one lane 0) */
		if (4 - q + j >= 0 && p + (int)in->axis + j >= 0)
			snprintf(l, sizeof l, " + i%d", p + (int)in->axis + j);
		len += (size_t)snprintf(buf + len, n - len, " + (%s%s) * %" PRId64, e, l, a.str[j]);
	}
}

/* load_gather: lane (p, j, q) reads the tensor at idx[0..axis) + p,
 * the index tile's value at j, idx[axis+1..) + q; lanes outside the valid
 * box read 0; an index out of range reads 0 and goes to
 * NAME_aicm_gather_fail with its program, instruction, value and place
 * (the run then fails and names it, as the tile engine's does). */
static int
op_load_gather(CgKernel *k, const TileInst *in)
{
	int res = in->res, iv = in->in[0];
	const int64_t *sh = k->sh[res], *ish = k->sh[iv];
	Acc a;
	int r, q = k->f->vals[iv].rank, rr, p, pi, ax = (int)in->axis, rd[IR_MAX_RANK];
	char li[400], xe[800], cv[900], s2[860], out[256], at[1600];
	size_t ll = 0, xl = 0;
	DType rt = vdt(k, res);

	acc_of(k, in, &a);
	r = a.rank;
	rr = r - 1 + q;
	p = 4 - rr;
	pi = 4 - q;
	cg_line(k, "{");
	k->depth++;
	box_full(k, res);
	for (int d = 0; d < r; d++) {
		char e[300];

		idx_expr(e, sizeof e, &in->idx[d]);
		/* the gathered axis is placed by the index alone: no offset of
		 * its own (an unused one fails -Wall -Werror builds of the C) */
		if (d != ax)
			cg_line(k, "const long o%d = %s;", d, e);
		rd[d] = d < ax ? d : d - 1 + q;
		if (d != ax) {
			int D = p + rd[d];

			if (D < 0)
				cg_line(k, "if (%" PRId64 " - o%d < 1) b%d[0] = 0;", a.dim[d], d, res);
			else
				cg_line(k, "if (%" PRId64 " - o%d < b%d[%d]) b%d[%d] = %" PRId64 " - o%d < 0 ? "
				    "0 : %" PRId64 " - o%d;", a.dim[d], d, res, D, res, D, a.dim[d], d,
				    a.dim[d], d);
		}
	}
	for (int j = 0; j < q; j++) {
		int D = p + ax + j;
		char room[40];

		snprintf(room, sizeof room, pi + j >= 0 ? "b%d[%d]" : "1", iv, pi + j);
		if (D < 0)
			cg_line(k, "if (%s < 1) b%d[0] = 0;", room, res);
		else
			cg_line(k, "if (%s < b%d[%d]) b%d[%d] = %s;", room, res, D, res, D, room);
	}
	/* the index tile's flat lane: its dims from the result's dims ax..
	 * (either tile's dims before its last four are lane 0) */
	ll = (size_t)snprintf(li, sizeof li, "0");
	for (int j = (pi < 0 ? -pi : 0); j < q; j++) {
		int64_t st = 1;

		for (int j2 = j + 1; j2 < q; j2++)
			st *= pi + j2 >= 0 ? ish[pi + j2] : 1;
		if (p + ax + j >= 0)
			ll += (size_t)snprintf(li + ll, sizeof li - ll, " + i%d * %" PRId64, p + ax + j,
			    st);
	}
	xe[0] = '\0';
	for (int d = 0; d < r; d++) {
		if (d == ax)
			xl += (size_t)snprintf(xe + xl, sizeof xe - xl, " + v * %" PRId64, a.str[d]);
		else if (p + rd[d] >= 0)
			xl += (size_t)snprintf(xe + xl, sizeof xe - xl, " + (o%d + i%d) * %" PRId64, d,
			    p + rd[d], a.str[d]);
		else
			xl += (size_t)snprintf(xe + xl, sizeof xe - xl, " + o%d * %" PRId64, d, a.str[d]);
	}
	snprintf(s2, sizeof s2, "a->%s[%" PRId64 "%s]", a.field, a.base0, xe);
	conv(cv, sizeof cv, s2, a.dt, rt);
	{
		int64_t full[4] = {2, 2, 2, 2};
		char ix[200];

		lin(ix, sizeof ix, sh, full);
		snprintf(out, sizeof out, "t%d[%s]", res, ix);
	}
	gather_place(k, in, p, at, sizeof at);
	open_all(k, sh);
	cg_line(k, "%s = 0;", out);
	cg_line(k, "if (i0 < b%d[0] && i1 < b%d[1] && i2 < b%d[2] && i3 < b%d[3]) {", res, res, res,
	    res);
	cg_line(k, "\tint64_t v = (int64_t)t%d[%s];", iv, li);
	cg_line(k, "\tif (v < -%" PRId64 " || v >= %" PRId64 ")   /* the run fails, naming it */",
	    a.dim[ax], a.dim[ax]);
	cg_line(k, "\t\t%s_aicm_gather_fail(prog, %d, v, %s);", k->name, (int)(in - k->f->insts),
	    at);
	cg_line(k, "\telse {");
	cg_line(k, "\t\tif (v < 0)");
	cg_line(k, "\t\t\tv += %" PRId64 ";", a.dim[ax]);
	cg_line(k, "\t\t%s = %s;", out, cv);
	cg_line(k, "\t}");
	cg_line(k, "}");
	close_loops(k, 4);
	k->depth--;
	cg_line(k, "}");
	return 0;
}

/* argmax, argmin: per lane, the index along axis of the winner of the
 * lane's whole line of the tensor (scalar.h's rule: the first NaN wins;
 * last=True gives ties to the last index). */
static int
op_argreduce(CgKernel *k, const TileInst *in)
{
	int res = in->res, ax = (int)in->axis, pad;
	const int64_t *sh = k->sh[res];
	Acc a;
	bool mx = in->op == TO_ARGMAX, flt;
	char out[256], pe[400];
	size_t pl = 0;

	acc_of(k, in, &a);
	pad = 4 - a.rank;
	flt = is_float(a.dt);
	cg_line(k, "{");
	k->depth++;
	cg_line(k, "long base = %" PRId64 ";", a.base0);
	box_full(k, res);
	for (int td = 0; td < a.rank; td++) {
		char e[300];
		int d = pad + td;

		idx_expr(e, sizeof e, &in->idx[td]);
		cg_line(k, "{");
		cg_line(k, "\tconst long s = %s, room = %" PRId64 " - s;", e, a.dim[td]);
		cg_line(k, "\tbase += s * %" PRId64 ";", a.str[td]);
		if (d < 0)
			cg_line(k, "\tif (room < 1) b%d[0] = 0;", res);
		else
			cg_line(k, "\tb%d[%d] = room < 0 ? 0 : room < b%d[%d] ? room : b%d[%d];", res, d,
			    res, d, res, d);
		cg_line(k, "}");
	}
	pe[0] = '\0';
	for (int d = 0; d < 4; d++) {
		int64_t st = tstr(&a, d);

		if (st && sh[d] > 1)
			pl += (size_t)snprintf(pe + pl, sizeof pe - pl, " + i%d * %" PRId64, d, st);
	}
	{
		int64_t full[4] = {2, 2, 2, 2};
		char ix[200];

		lin(ix, sizeof ix, sh, full);
		snprintf(out, sizeof out, "t%d[%s]", res, ix);
	}
	cg_line(k, "memset(t%d, 0, sizeof(int64_t) * %" PRId64 ");", res, numel(k, res));
	for (int d = 0; d < 4; d++) {
		cg_line(k, "for (long i%d = 0; i%d < b%d[%d]; i%d++)%s", d, d, res, d, d,
		    d == 3 ? " {" : "");
		k->depth++;
	}
	k->depth -= 3;
	cg_line(k, "const %s *x = a->%s + base%s;", cg_ctype(a.dt), a.field, pe);
	cg_line(k, "%s best = x[0];", flt ? "double" : "int64_t");
	cg_line(k, "int64_t at = 0;");
	cg_line(k, "for (long r = 1; r < %" PRId64 "; r++) {", a.dim[ax]);
	cg_line(k, "\tconst %s v = x[r * %" PRId64 "];", flt ? "double" : "int64_t", a.str[ax]);
	if (flt)
		cg_line(k, "\tconst int wins = isnan(best) ? %s : isnan(v) ? 1 : v == best ? %d : v %s "
		    "best;", in->last ? "isnan(v)" : "0", in->last ? 1 : 0, mx ? ">" : "<");
	else
		cg_line(k, "\tconst int wins = v == best ? %d : v %s best;", in->last ? 1 : 0,
		    mx ? ">" : "<");
	cg_line(k, "\tif (wins) {");
	cg_line(k, "\t\tbest = v;");
	cg_line(k, "\t\tat = r;");
	cg_line(k, "\t}");
	cg_line(k, "}");
	cg_line(k, "%s = at;", out);
	k->depth--;
	cg_line(k, "}");
	k->depth--;
	cg_line(k, "}");
	return 0;
}

/* im2col: a [BK, BM] tile of the implicit im2col matrix of an (N, C, H,
 * W) operand: row (channel, ky, kx), column the output pixel; positions
 * outside the input read other=. */
static int
op_im2col(CgKernel *k, const TileInst *in)
{
	int res = in->res;
	const Node *x = &k->g->nodes[k->f->args[in->arg]];
	const int64_t *g = in->win, *sh = k->sh[res];
	int64_t cg = g[0], kh = g[1], kw = g[2], oh = g[3], ow = g[4];
	int64_t H = x->type.dim[2], W = x->type.dim[3], rows = sh[2], cols = sh[3];
	char e0[300], e1[300], e2[300], oth[300], cv[300];
	DType rt = vdt(k, res);

	(void)kh;
	idx_expr(e0, sizeof e0, &in->idx[0]);
	idx_expr(e1, sizeof e1, &in->idx[1]);
	idx_expr(e2, sizeof e2, &in->idx[2]);
	other_of(oth, sizeof oth, in, rt);
	conv(cv, sizeof cv, "src[((plane0 + c) * " "H_ + y) * W_ + xx]", x->type.dt, rt);
	cg_line(k, "{");
	k->depth++;
	cg_line(k, "const long plane0 = %s, k0 = %s, p0 = %s;", e0, e1, e2);
	cg_line(k, "const long H_ = %" PRId64 ", W_ = %" PRId64 ";", H, W);
	cg_line(k, "const %s *src = a->%s;", cg_ctype(x->type.dt), k->field[k->f->args[in->arg]]);
	cg_line(k, "long vr = %" PRId64 " - k0, vc = %" PRId64 " - p0;", cg * kh * kw, oh * ow);
	cg_line(k, "vr = vr < 0 ? 0 : vr > %" PRId64 " ? %" PRId64 " : vr;", rows, rows);
	cg_line(k, "vc = vc < 0 ? 0 : vc > %" PRId64 " ? %" PRId64 " : vc;", cols, cols);
	cg_line(k, "for (long r = 0; r < %" PRId64 "; r++) {", rows);
	k->depth++;
	cg_line(k, "const long q = k0 + r, c = q / %" PRId64 ", ky = q %% %" PRId64 " / %" PRId64
	    ", kx = q %% %" PRId64 ";", kh * kw, kh * kw, kw, kw);
	cg_line(k, "const long dy = ky * %" PRId64 " - %" PRId64 ", dx = kx * %" PRId64 " - %" PRId64
	    ";", g[9], g[7], g[10], g[8]);
	cg_line(k, "for (long j = 0; j < %" PRId64 "; j++) {", cols);
	k->depth++;
	cg_line(k, "%s v = %s;", cg_ctype(rt), oth);
	cg_line(k, "if (r < vr && j < vc) {");
	cg_line(k, "\tconst long pp = p0 + j, y = pp / %" PRId64 " * %" PRId64 " + dy, xx = pp %% %"
	    PRId64 " * %" PRId64 " + dx;", ow, g[5], ow, g[6]);
	cg_line(k, "\tif (y >= 0 && y < H_ && xx >= 0 && xx < W_)");
	cg_line(k, "\t\tv = %s;", cv);
	cg_line(k, "}");
	cg_line(k, "t%d[r * %" PRId64 " + j] = v;", res, cols);
	k->depth--;
	cg_line(k, "}");
	k->depth--;
	cg_line(k, "}");
	cg_line(k, "b%d[0] = 1; b%d[1] = 1; b%d[2] = vr; b%d[3] = vc;", res, res, res, res);
	k->depth--;
	cg_line(k, "}");
	return 0;
}

/* window_max, window_sum: per plane and output pixel, the max (NaN
 * wins) or the sum of the window's taps inside the input. */
static int
op_window_reduce(CgKernel *k, const TileInst *in)
{
	int res = in->res;
	const Node *x = &k->g->nodes[k->f->args[in->arg]];
	const int64_t *g = in->win, *sh = k->sh[res];
	int64_t H = x->type.dim[2], W = x->type.dim[3], rows = sh[2], cols = sh[3];
	bool mx = in->op == TO_WINDOW_MAX;
	char e0[300], e1[300], cv[300];
	DType rt = vdt(k, res);

	idx_expr(e0, sizeof e0, &in->idx[0]);
	idx_expr(e1, sizeof e1, &in->idx[1]);
	conv(cv, sizeof cv, "acc", DT_F64, rt);
	cg_line(k, "{");
	k->depth++;
	cg_line(k, "const long plane0 = %s, p0 = %s;", e0, e1);
	cg_line(k, "const %s *src = a->%s;", cg_ctype(x->type.dt), k->field[k->f->args[in->arg]]);
	cg_line(k, "long vr = %" PRId64 " - plane0, vc = %" PRId64 " - p0;", g[0], g[3] * g[4]);
	cg_line(k, "vr = vr < 0 ? 0 : vr > %" PRId64 " ? %" PRId64 " : vr;", rows, rows);
	cg_line(k, "vc = vc < 0 ? 0 : vc > %" PRId64 " ? %" PRId64 " : vc;", cols, cols);
	cg_line(k, "for (long r = 0; r < %" PRId64 "; r++)", rows);
	cg_line(k, "\tfor (long j = 0; j < %" PRId64 "; j++) {", cols);
	k->depth += 2;
	cg_line(k, "double acc = %s;", mx ? "-INFINITY" : "0");
	cg_line(k, "if (r < vr && j < vc) {");
	cg_line(k, "\tconst long oy = (p0 + j) / %" PRId64 ", ox = (p0 + j) %% %" PRId64 ";", g[4],
	    g[4]);
	cg_line(k, "\tconst %s *plane = src + (plane0 + r) * %" PRId64 ";", cg_ctype(x->type.dt),
	    H * W);
	cg_line(k, "\tfor (long ky = 0; ky < %" PRId64 "; ky++) {", g[1]);
	cg_line(k, "\t\tconst long y = oy * %" PRId64 " + ky * %" PRId64 " - %" PRId64 ";", g[5],
	    g[9], g[7]);
	cg_line(k, "\t\tif (y < 0 || y >= %" PRId64 ")", H);
	cg_line(k, "\t\t\tcontinue;");
	cg_line(k, "\t\tfor (long kx = 0; kx < %" PRId64 "; kx++) {", g[2]);
	cg_line(k, "\t\t\tconst long xx = ox * %" PRId64 " + kx * %" PRId64 " - %" PRId64 ";", g[6],
	    g[10], g[8]);
	cg_line(k, "\t\t\tdouble v;");
	cg_line(k, "\t\t\tif (xx < 0 || xx >= %" PRId64 ")", W);
	cg_line(k, "\t\t\t\tcontinue;");
	cg_line(k, "\t\t\tv = (double)plane[y * %" PRId64 " + xx];", W);
	cg_line(k, mx ? "\t\t\tacc = v > acc || v != v ? v : acc;" : "\t\t\tacc = acc + v;");
	cg_line(k, "\t\t}");
	cg_line(k, "\t}");
	cg_line(k, "}");
	cg_line(k, "t%d[r * %" PRId64 " + j] = %s;", res, cols, cv);
	k->depth -= 2;
	cg_line(k, "\t}");
	cg_line(k, "b%d[0] = 1; b%d[1] = 1; b%d[2] = vr; b%d[3] = vc;", res, res, res, res);
	k->depth--;
	cg_line(k, "}");
	return 0;
}

/* window_count: per output pixel, the window positions inside a range
 * (avg_pool2d's divisors); 1 past the valid columns (no 0/0). */
static int
op_window_count(CgKernel *k, const TileInst *in)
{
	int res = in->res;
	const int64_t *g = in->win, *sh = k->sh[res];
	int64_t cols = sh[3];
	char e0[300], cv[300];
	DType rt = vdt(k, res);

	idx_expr(e0, sizeof e0, &in->idx[0]);
	conv(cv, sizeof cv, "cnt", DT_I64, rt);
	cg_line(k, "{");
	k->depth++;
	cg_line(k, "const long p0 = %s;", e0);
	cg_line(k, "long vc = %" PRId64 " - p0;", g[0] * g[1]);
	cg_line(k, "vc = vc < 0 ? 0 : vc > %" PRId64 " ? %" PRId64 " : vc;", cols, cols);
	cg_line(k, "for (long j = 0; j < %" PRId64 "; j++) {", cols);
	cg_line(k, "\tint64_t cnt = 1;");
	cg_line(k, "\tif (j < vc)");
	cg_line(k, "\t\tcnt = aicm_taps((p0 + j) / %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
	    ", %" PRId64 ", %" PRId64 ") * aicm_taps((p0 + j) %% %" PRId64 ", %" PRId64 ", %" PRId64
	    ", %" PRId64 ", %" PRId64 ", %" PRId64 ");", g[1], g[2], g[4], g[6], g[8], g[9], g[1],
	    g[3], g[5], g[7], g[10], g[11]);
	cg_line(k, "\tt%d[j] = %s;", res, cv);
	cg_line(k, "}");
	cg_line(k, "b%d[0] = 1; b%d[1] = 1; b%d[2] = 1; b%d[3] = vc;", res, res, res, res);
	k->depth--;
	cg_line(k, "}");
	return 0;
}

/* Marks run i..e-1 chained when instruction e, a reduction or a store,
 * reads its last value (as its operand, not a reduction's accumulator)
 * and nothing else reads any of its values from outside the run. */
static void
plan_chain(CgKernel *k, int i, int e)
{
	const TileFn *f = k->f;
	const TileInst *c = &f->insts[e];
	int last = f->insts[e - 1].res;

	if ((c->op != TO_REDUCE && c->op != TO_STORE) || c->in[0] != last)
		return;
	for (int q = i; q < e; q++) {
		int v = f->insts[q].res, seen = 0;

		for (int q2 = i; q2 <= e; q2++)
			for (int j = 0; j < f->insts[q2].nin; j++)
				if (f->insts[q2].in[j] == v && (q2 < e || j == 0))
					seen++;
		if (seen != k->nuse[v])
			return;
	}
	for (int q = i; q < e; q++)
		k->chain[f->insts[q].res] = true;
}

void
cg_plan_runs(CgKernel *k)
{
	const TileFn *f = k->f;

	/* chains: a run whose values are read only inside it and, its last,
	 * by the reduction or store right after it, is computed inside that
	 * op's loop (operand) */
	for (int i = 0; i < f->ninsts;) {
		int e = run_end(k, i, f->ninsts);

		if (is_elementwise(&f->insts[i]) && e < f->ninsts)
			plan_chain(k, i, e);
		i = e;
	}

	/* loads read in place: of the tile's own type, and read only through
	 * elem() (elementwise ops, reductions, stores); a masked load only
	 * by readers that visit its valid box alone (reductions, stores,
	 * chained values, which their reduction or store computes in its box):
	 * the lanes past the tensor's edge are never read */
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		bool ok = in->op == TO_LOAD;
		int v = in->res;
		Acc a;

		if (!ok)
			continue;
		for (int q = 0; q < f->ninsts && ok; q++) {
			const TileInst *u = &f->insts[q];

			for (int j = 0; j < u->nin; j++) {
				bool boxed = (u->op == TO_REDUCE && j == 0) || u->op == TO_STORE ||
				    (is_elementwise(u) && k->chain[u->res]);

				if (u->in[j] == v && !(boxed || (!in->masked && (is_elementwise(u) ||
				    u->op == TO_REDUCE))))
					ok = false;
			}
		}
		acc_of(k, in, &a);
		if (!ok || a.dt != vdt(k, v))
			continue;
		mark_inplace(k, v, &a);
	}

	for (int i = 0; i < f->ninsts;) {
		int e = run_end(k, i, f->ninsts);

		for (int q = i; e > i + 1 && q < e; q++) {
			int v = f->insts[q].res, inside = 0;

			for (int q2 = i; q2 < e; q2++)
				for (int j = 0; j < f->insts[q2].nin; j++)
					inside += f->insts[q2].in[j] == v;
			k->reg[v] = k->nuse[v] == inside;
		}
		i = e;
	}
}

static int buf_of(const CgKernel *k, int v);

void
cg_plan_dots(CgKernel *k)
{
	const TileFn *f = k->f;
	int *encl = xcalloc((size_t)f->ninsts + 1, sizeof *encl);

	/* each instruction's innermost enclosing loop (-1: none) */
	for (int i = 0; i < f->ninsts; i++)
		encl[i] = -1;
	for (int i = 0; i < f->ninsts; i++)
		if (f->insts[i].op == TO_FOR)
			for (int q = i + 1; q <= f->insts[i].end; q++)
				encl[q] = i;
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		int it = in->iter, r, d, z;

		if (in->op != TO_FOR || f->vals[it].rank < 0)
			continue;
		/* the dot that yields its result and accumulates the carried
		 * tile, which nothing else reads: it adds into that tile in
		 * place, and the yield copies nothing */
		r = f->insts[in->end].in[0];
		d = f->vals[r].def;
		if (d > i && d < in->end && encl[d] == i && f->insts[d].op == TO_DOT &&
		    f->insts[d].in[2] == it && k->nuse[it] == 1 && vdt(k, r) == vdt(k, it) &&
		    !memcmp(k->sh[r], k->sh[it], sizeof k->sh[r]))
			k->alias[r] = it + 1;
		/* the loop's result is the carried tile as the loop left it */
		if (f->vals[in->res].rank >= 0 && vdt(k, in->res) == vdt(k, it) &&
		    !memcmp(k->sh[in->res], k->sh[it], sizeof k->sh[it]))
			k->alias[in->res] = it + 1;
		/* a fill that only starts the loop, in the loop's own block (a
		 * fill outside an enclosing loop runs once, the loop each time) */
		z = in->in[0];
		if (is_fill(k, z) && k->nuse[z] == 1 && encl[f->vals[z].def] == encl[i] &&
		    vdt(k, z) == vdt(k, it) && !memcmp(k->sh[z], k->sh[it], sizeof k->sh[it]))
			k->alias[z] = it + 1;
	}
	/* the join that a loop yields, written into the carried tile itself
	 * when every reader of that tile comes before the join and none of
	 * the join's parts shares its buffer: the yield copies nothing (W4's
	 * online softmax state, 33 KiB a step in f32) */
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		int it = in->iter, y, j;
		bool ok;

		if (in->op != TO_FOR || f->vals[it].rank < 0)
			continue;
		y = f->insts[in->end].in[0];
		j = f->vals[y].def;
		ok = j > i && j < in->end && encl[j] == i && f->insts[j].op == TO_JOIN &&
		    !k->alias[y] && k->nuse[y] == 1 && vdt(k, y) == vdt(k, it) &&
		    !memcmp(k->sh[y], k->sh[it], sizeof k->sh[it]);
		for (int q = j + 1; q < f->ninsts && ok; q++)
			for (int u = 0; u < f->insts[q].nin; u++)
				ok = ok && f->insts[q].in[u] != it;
		for (int u = 0; ok && u < f->insts[j].nin; u++)
			ok = f->insts[j].in[u] != it && k->alias[f->insts[j].in[u]] != it + 1;
		if (ok)
			k->alias[y] = it + 1;
	}
	/* an extract read in place, a view into its tile (as a load's into
	 * its tensor): read only as a load read in place may be, by readers
	 * in its own block, before anything writes its tile's buffer again
	 * (W4's running accumulator: 33 KiB copied a step in f32) */
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		int v = in->res, x = in->in[0], last = -1;
		bool ok = in->op == TO_EXTRACT && f->vals[x].rank >= 0 && !k->inplace[x] &&
		    !k->reg[x] && !k->chain[x] && !k->fold[x] && vdt(k, x) == vdt(k, v);

		for (int q = i + 1; q < f->ninsts && ok; q++)
			for (int j = 0; j < f->insts[q].nin; j++)
				if (f->insts[q].in[j] == v) {
					const TileInst *u = &f->insts[q];

					ok = ok && encl[q] == encl[i] && (is_elementwise(u) ||
					    u->op == TO_REDUCE || u->op == TO_STORE);
					last = q;
				}
		for (int q = i + 1; q <= last && ok; q++) {
			const TileInst *u = &f->insts[q];

			if (u->res >= 0 && f->vals[u->res].rank >= 0 && buf_of(k, u->res) == buf_of(k, x))
				ok = false;
			if (u->op == TO_FOR && (buf_of(k, u->iter) == buf_of(k, x) || u->end <= last))
				ok = false;
		}
		if (!ok || last < 0)
			continue;
		k->inplace[v] = true;
		k->vstr[v][3] = 1;
		k->vstr[v][2] = k->sh[x][3];
		k->vstr[v][1] = k->sh[x][2] * k->sh[x][3];
		k->vstr[v][0] = k->sh[x][1] * k->vstr[v][1];
	}
	free(encl);
	/* b of a float dot whose strips are packed (op_dot): read where it
	 * comes from.  A transpose of rank 2 that only the dot reads is
	 * folded into the packing (fold: only its box is written); then an
	 * unmasked load of its type that only the dot (or the folded
	 * transpose) reads is read in place, in the tensor itself. */
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		int b = in->in[1], d;
		DType rt = vdt(k, in->res);

		if (in->op != TO_DOT || !is_float(rt) || vdt(k, b) != rt ||
		    !dot_packs(k->sh[b][2], k->sh[b][3], rt) || k->nuse[b] != 1)
			continue;
		d = f->vals[b].def;
		if (d >= 0 && f->insts[d].op == TO_TRANSPOSE && f->vals[b].rank == 2 &&
		    f->insts[d].perm[0] == 1 && vdt(k, f->insts[d].in[0]) == rt) {
			k->fold[b] = true;
			b = f->insts[d].in[0];
			if (k->nuse[b] != 1)
				continue;
			d = f->vals[b].def;
		}
		if (d >= 0 && f->insts[d].op == TO_LOAD && !f->insts[d].masked && !k->inplace[b]) {
			Acc a;

			acc_of(k, &f->insts[d], &a);
			if (a.dt != vdt(k, b))
				continue;
			mark_inplace(k, b, &a);
		}
	}
	/* a of a float dot that calls the vector micro-kernel (op_dot): an
	 * unmasked load of its type that only the dot reads, its rows
	 * contiguous, is read in place (W1 f32 7% faster than copying it;
	 * the plain block lost its registers that way) */
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		int a = in->in[0], d = f->vals[a].def;
		DType rt = vdt(k, in->res);
		Acc ac;

		if (in->op != TO_DOT || !is_float(rt) || vdt(k, a) != rt || k->nuse[a] != 1 ||
		    !dot_vec(k->sh[in->in[1]][3], rt) || d < 0 || f->insts[d].op != TO_LOAD ||
		    f->insts[d].masked || k->inplace[a])
			continue;
		acc_of(k, &f->insts[d], &ac);
		if (ac.dt != rt || tstr(&ac, 3) != 1)
			continue;
		mark_inplace(k, a, &ac);
	}
	/* b's strips kept from program to program (keep): a packed float
	 * dot in a loop, with b read in place from an operand (never written
	 * by the kernel) at an index of the loop's counter and program ids
	 * of axes 1 and 2 alone: the programs of one grid column pack the
	 * same strips, so each strip, packed once, is kept in a buffer of
	 * the loop's steps x the strips of a step, tagged with where it was
	 * packed from, and the programs run column by column (emit_kernel).
	 * W1 packed all of w once per program: 64 MB of 4 KiB-strided reads
	 * from L3 per run in f32, now 4 MB; f32 about 15% faster (docs/perf.md,
	 * session 11).  Only when b's tensor is over 1 MiB, half the core's
	 * L2: a tensor that stays in L2 packs from there into a fresh strip
	 * in L1, as fast as reading a kept one back from L2 (W4's k^T, 512
	 * KiB).  The kept strips at most 1 MiB, so that they stay in L2
	 * beside a's rows. */
	for (int i = 0; i < f->ninsts; i++) {
		const TileInst *in = &f->insts[i];
		int r = in->res, b = in->in[1], bs = b, l = -1, d;
		DType rt = vdt(k, r);
		int64_t K = k->sh[b][2], N = k->sh[b][3], NR = dot_nr(N, rt), trips;
		bool ok;

		if (in->op != TO_DOT || !is_float(rt) || !dot_vec(N, rt) || !dot_packs(K, N, rt))
			continue;
		if (k->fold[b])
			bs = f->insts[f->vals[b].def].in[0];
		l = loop_around(f, i);
		if (!dot_packs_strips(k, b, bs) || !b_step_along(k, bs, l))
			continue;
		d = f->vals[bs].def;
		ok = f->insts[d].arg != TILE_RESULT &&
		    ir_type_numel(&k->g->nodes[f->args[f->insts[d].arg]].type) *
		    (rt == DT_F32 ? 4 : 8) > 1 << 20;
		for (int q = 0; q < f->insts[d].nidx && ok; q++)
			for (int t = 0; t < f->insts[d].idx[q].nterm; t++) {
				int v = f->insts[d].idx[q].val[t], vd = f->vals[v].def;

				if (v != f->insts[l].var && (vd < 0 || f->insts[vd].op != TO_PROGRAM_ID ||
				    f->insts[vd].axis == 0))
					ok = false;
			}
		trips = (f->insts[l].hi - f->insts[l].lo + f->insts[l].step - 1) / f->insts[l].step;
		if (ok && trips * N * K * (rt == DT_F32 ? 4 : 8) <= 1 << 20)
			k->keep[r] = trips * (N / NR);
	}
}

int64_t
cg_kept_elems(const CgKernel *k, int v)
{
	int b = k->f->insts[k->f->vals[v].def].in[1];

	return k->keep[v] * k->sh[b][2] * dot_nr(k->sh[b][3], vdt(k, v));
}

/* ---- control ---------------------------------------------------------- */

/* the tile whose buffer v's is (cg_plan_dots' alias) */
static int
buf_of(const CgKernel *k, int v)
{
	return k->alias[v] ? k->alias[v] - 1 : v;
}

static void
copy_tile(CgKernel *k, int dst, int src)
{
	if (k->f->vals[dst].rank < 0) {
		cg_line(k, "s%d = s%d;", dst, src);
		return;
	}
	if (buf_of(k, dst) == buf_of(k, src)) {
		/* one buffer (cg_plan_dots): the box alone */
		box_copy(k, dst, src);
		return;
	}
	if (vdt(k, dst) != vdt(k, src)) {
		/* a mixed loop: its carried tile and what is yielded differ in
		 * type (an integer kernel's zeros accumulating a float dot) */
		char e[64], cv[200];

		snprintf(e, sizeof e, "t%d[q]", src);
		conv(cv, sizeof cv, e, vdt(k, src), vdt(k, dst));
		cg_line(k, "for (long q = 0; q < %" PRId64 "; q++)", numel(k, dst));
		cg_line(k, "\tt%d[q] = %s;", dst, cv);
	} else {
		cg_line(k, "memcpy(t%d, t%d, %" PRId64 " * sizeof t%d[0]);", dst, src, numel(k, dst),
		    dst);
	}
	box_copy(k, dst, src);
}

static int
op_for(CgKernel *k, const TileInst *in, int i)
{
	const TileFn *f = k->f;

	copy_tile(k, in->iter, in->in[0]);
	if (in->step > 0 && in->hi > in->lo) {
		cg_line(k, "for (long s%d = %" PRId64 "; s%d < %" PRId64 "; s%d += %" PRId64 ") {",
		    in->var, in->lo, in->var, in->hi, in->var, in->step);
		k->depth++;
		if (cg_emit_insts(k, i + 1, in->end) != 0)
			return -1;
		cg_line(k, "/* %s */", k->line[in->end]);
		if (f->insts[in->end].in[0] != in->iter)
			copy_tile(k, in->iter, f->insts[in->end].in[0]);
		k->depth--;
		cg_line(k, "}");
	}
	copy_tile(k, in->res, in->iter);
	return 0;
}

/* Whether instruction in may be emitted one row at a time inside a row
 * segment of R rows: an elementwise op, a row reduction to [R, 1] that
 * reduce_rows writes, or a store; every tile [1, 1, R or 1, any]. */
static bool
row_inst(const CgKernel *k, const TileInst *in, int64_t R)
{
	const int64_t *sh;

	if (in->op == TO_STORE)
		sh = k->sh[in->in[0]];
	else if (is_elementwise(in) || in->op == TO_REDUCE)
		sh = k->sh[in->res];
	else
		return false;
	if (sh[0] != 1 || sh[1] != 1 || (sh[2] != R && sh[2] != 1))
		return false;
	if (in->op == TO_REDUCE) {
		const int64_t *xs = k->sh[in->in[0]];
		int rin = k->f->vals[in->in[0]].rank;

		return in->nin == 1 && is_float(vdt(k, in->in[0])) && xs[2] == R && xs[3] >= 16 &&
		    sh[2] == R && sh[3] == 1 && in->keepdims && rin >= 2 && in->axis == rin - 1;
	}
	return true;
}

/* The row segment of k's program: the instructions from the returned
 * index to the end, each a row_inst of R rows (*rows), at least one a
 * reduction; -1 when there is none.  Its rows are independent: emitted
 * inside one loop over the row i2, a softmax's max, exp, sum and divide
 * pass over one row while it is in L1, not over the whole tile four
 * times. */
static int
row_segment(const CgKernel *k, int64_t *rows)
{
	const TileFn *f = k->f;
	int s = f->ninsts, nred = 0;
	int64_t R = 0;

	for (int i = 0; i < f->ninsts; i++)
		if (f->insts[i].op == TO_REDUCE && R == 0)
			R = k->sh[f->insts[i].in[0]][2];
	/* a program of one row is a segment too: its loop runs once, and its
	 * row_prefetch reaches the next program's row (W3 f64 at BM=1, 7.1 ms with it,
	 * 10.0 without; 6.6-6.9 at BM=4) */
	if (R < 1)
		return -1;
	while (s > 0 && row_inst(k, &f->insts[s - 1], R)) {
		s--;
		nred += f->insts[s].op == TO_REDUCE;
	}
	/* a segment that starts inside an elementwise run would split it */
	while (s < f->ninsts && s > 0 && is_elementwise(&f->insts[s - 1]) &&
	    is_elementwise(&f->insts[s])) {
		nred -= f->insts[s].op == TO_REDUCE;
		s++;
	}
	if (!nred || s >= f->ninsts)
		return -1;
	*rows = R;
	return s;
}

/* The prefetches of row segment s..end-1 of R rows: the next row of each
 * load read in place, and this row of each store's destination, one
 * cache line per 64-byte chunk of a loop over the row, so that memory
 * streams while the row computes (the lines a row's loops wait for
 * otherwise: W3 f64, a softmax of 4096 x 1024, 12.3 to 9.8 ms on this
 * machine, docs/perf.md).  The loop is the row's first elementwise loop of its own (a
 * softmax's exp: the longest), else its first reduction; rows stored
 * with a stride are not prefetched.  A store's offset in its tensor is
 * computed here, before the loop over the rows. */
static void
row_prefetch(CgKernel *k, int s, int end, int64_t R)
{
	const TileFn *f = k->f;

	k->pf_inst = -1;
	k->npf = 0;
	for (int i = s; i < end && k->pf_inst < 0; i++)
		if (is_elementwise(&f->insts[i])) {
			int e = run_end(k, i, end);

			if (!k->chain[f->insts[e - 1].res] && k->sh[f->insts[i].res][3] >= 16)
				k->pf_inst = i;
			i = e - 1;
		}
	for (int i = s; i < end && k->pf_inst < 0; i++)
		if (f->insts[i].op == TO_REDUCE)
			k->pf_inst = i;
	if (k->pf_inst < 0)
		return;
	for (int i = s; i < end; i++) {
		const TileInst *in = &f->insts[i];

		for (int j = 0; j < in->nin && k->npf < 8; j++) {
			int v = in->in[j], dup = 0;
			char nm[48];

			if (!k->inplace[v] || k->sh[v][2] != R || k->sh[v][3] < 2 || k->vstr[v][3] != 1)
				continue;
			snprintf(nm, sizeof nm, "t%d", v);
			for (int t = 0; t < k->npf; t++)
				dup |= !strcmp(k->pf[t], nm);
			if (dup)
				continue;
			memcpy(k->pf[k->npf], nm, sizeof nm);
			snprintf(k->pf_off[k->npf], sizeof k->pf_off[0], "(i2 + 1) * %" PRId64,
			    k->vstr[v][2]);
			k->pf_size[k->npf] = (int)ir_dtype_size(vdt(k, v));
			k->pf_rw[k->npf++] = 0;
		}
		if (in->op == TO_STORE && k->npf < 8) {
			const int64_t *sh = k->sh[in->in[0]];
			Acc a;

			acc_of(k, in, &a);
			/* a streamed store's lines are not read: a prefetch for a
			 * write would read them */
			if (sh[2] != R || sh[3] < 2 || tstr(&a, 3) != 1 || store_streams(k, in, &a))
				continue;
			cg_line(k, "long pf%d;   /* the offset of the tile stored to %s, for prefetches */",
			    i, a.field);
			cg_line(k, "{");
			k->depth++;
			cg_line(k, "long bx[4];");
			access_box(k, in, &a, sh, "bx");
			cg_line(k, "(void)bx;");
			cg_line(k, "pf%d = base;", i);
			k->depth--;
			cg_line(k, "}");
			snprintf(k->pf[k->npf], sizeof k->pf[0], "a->%s", a.field);
			snprintf(k->pf_off[k->npf], sizeof k->pf_off[0], "pf%d + i2 * %" PRId64, i,
			    tstr(&a, 2));
			k->pf_size[k->npf] = (int)ir_dtype_size(a.dt);
			k->pf_rw[k->npf++] = 1;
		}
	}
	if (k->npf)
		cg_use_prefetch(k);
	else
		k->pf_inst = -1;
}

int
cg_emit_insts(CgKernel *k, int first, int end)
{
	const TileFn *f = k->f;
	int64_t R;
	int s;

	if (first == 0 && end == f->ninsts && !k->row && (s = row_segment(k, &R)) >= 0) {
		int rc = cg_emit_insts(k, 0, s);

		if (rc != 0)
			return rc;
		row_prefetch(k, s, end, R);
		cg_line(k, "/* the rows one at a time (a row segment: docs/codegen.md) */");
		cg_line(k, "for (long i2 = 0; i2 < %" PRId64 "; i2++) {", R);
		k->depth++;
		k->row = true;
		rc = cg_emit_insts(k, s, end);
		k->row = false;
		k->pf_inst = -1;
		k->npf = 0;
		k->depth--;
		cg_line(k, "}");
		return rc;
	}

	for (int i = first; i < end; i++) {
		const TileInst *in = &f->insts[i];
		int rc = 0;

		cg_line(k, "/* %s */", k->line[i]);
		if (is_elementwise(in)) {
			/* a run of elementwise ops over one shape: one loop nest */
			int e = run_end(k, i, end);

			if (k->chain[f->insts[e - 1].res]) {
				/* computed inside its reader's loop (operand) */
				for (int q = i + 1; q < e; q++)
					cg_line(k, "/* %s */", k->line[q]);
				cg_line(k, "/* (computed in the next op's loop) */");
				run_boxes(k, i, e);
				i = e - 1;
				continue;
			}
			if (e > i + 1) {
				emit_run(k, i, e);
				i = e - 1;
				continue;
			}
		}
		switch (in->op) {
		case TO_PROGRAM_ID:
			cg_line(k, "const long s%d = pid%d;", in->res, (int)in->axis);
			break;
		case TO_IDIV:
			cg_line(k, "const long s%d = s%d / %" PRId64 ";", in->res, in->in[0], in->by);
			break;
		case TO_IREM:
			cg_line(k, "const long s%d = s%d %% %" PRId64 ";", in->res, in->in[0], in->by);
			break;
		case TO_ZEROS:
		case TO_FULL:
			rc = op_fill(k, in);
			break;
		case TO_LOAD:
			rc = op_load(k, in);
			break;
		case TO_STORE:
		case TO_ATOMIC_ADD:
		case TO_ATOMIC_MAX:
			rc = op_store(k, in);
			break;
		case TO_FOR:
			rc = op_for(k, in, i);
			i = in->end;
			break;
		case TO_DOT:
			rc = op_dot(k, in);
			break;
		case TO_UNARY:
			rc = op_unary(k, in);
			break;
		case TO_BINARY:
			rc = op_binary(k, in);
			break;
		case TO_WHERE:
			rc = op_where(k, in);
			break;
		case TO_REDUCE:
			rc = op_reduce(k, in);
			break;
		case TO_TRANSPOSE:
			rc = op_transpose(k, in);
			break;
		case TO_BROADCAST:
			rc = op_broadcast(k, in);
			break;
		case TO_EXTRACT:
			rc = op_extract(k, in);
			break;
		case TO_JOIN:
			rc = op_join(k, in);
			break;
		case TO_LOAD_PAD:
			rc = op_load_pad(k, in);
			break;
		case TO_LOAD_STEP:
			rc = op_load_step(k, in);
			break;
		case TO_LOAD_GATHER:
			rc = op_load_gather(k, in);
			break;
		case TO_ARGMAX:
		case TO_ARGMIN:
			rc = op_argreduce(k, in);
			break;
		case TO_IM2COL:
			rc = op_im2col(k, in);
			break;
		case TO_WINDOW_MAX:
		case TO_WINDOW_SUM:
			rc = op_window_reduce(k, in);
			break;
		case TO_WINDOW_COUNT:
			rc = op_window_count(k, in);
			break;
		default:
			diag_error(k->d, in->loc.line ? in->loc : k->g->nodes[k->node].loc, "the C emitter does not generate "
			    "tile op '%s' yet (kernel '@%s'); use --engine=tile", tile_op_name(in),
			    f->name);
			return -1;
		}
		if (rc != 0)
			return -1;
	}
	return 0;
}
