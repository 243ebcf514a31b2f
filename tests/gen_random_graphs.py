#!/usr/bin/python3
"""gen_random_graphs.py: random valid aicm graphs, and the differential test
that runs them through the compiler and checks them against the reference.

    tests/gen_random_graphs.py gen SEED [--f32|--i32|--i64]   one graph on stdout
    tests/gen_random_graphs.py check BUILD_DIR [-n N] [--keep DIR]

A graph draws on every op of DESIGN §3 (and conv2d and the pools of §12,
on fresh (N, C, H, W) sources with random strides, pads, dilations, groups
and ceil_mode, reshaped to rank 2 to join the rest): sources of odd sizes (1, 7, 33, 97
leave ragged tiles at every block size), elementwise ops on values that
broadcast ((M, N) with (N,), (M, 1), (1, N), ()), reductions on either axis
or over everything with and without keepdims, matmuls (also rank 3),
transposes and reshapes (also feeding compute, to fold in as views: a
Linear's transposed weight, a slice into a reduction, an expand into a sum
over its new dim), the copy ops (concat, slice, pad, gather by
inline i32/i64 indices, expand; at ranks up to 8), argmax and argmin (their i64 indices cast
back to the graph's type; ties common, last= either way), and chains long enough for fuse to build every
kind of kernel.  Values stay finite and of moderate size (log, sqrt and div
see 1 + |x|), so that a mismatch is a bug and not rounding amplified.
In i32 and i64 a graph draws on the v1 ops that take integers (relu, neg,
abs, the binary ops, sum and max, matmul and the layout ops); a divisor is
add(abs(x), 1), which is never 0 even where abs wraps, and results compare
exactly.  Graphs of every type also pass values through another element
type (elem_mixed: floats through i32 or i64, integers through the other
integer type or a float), so that kernels mix types.

'check' generates N graphs (default 200) in f64 and f32, and N/4 in each of
i32 and i64, and runs each
through `aicm-run --pass=P --check` for P = shape-infer,fuse,autotune,
lower-tiled and the same without fuse (using whichever of fuse and autotune
`aicm-opt --list-passes` shows), once more on 3 threads, and with
fuse{row-fusion=true,matmul-reduce=true} (softmax, LayerNorm, RMSNorm and
log-softmax rows and reductions of matmuls, so that every kernel kind is
made; on odd seeds with lower-tiled{row-max=16}, so that a row_reduction's
program in passes runs too).  Every run must
exit 0 with every output PASS.  A failing graph is kept (--keep, default
$TMPDIR) and named in the report, with the command to reproduce it.
"""
import concurrent.futures
import os
import random
import subprocess
import sys
import tempfile

SIZES = [1, 7, 33, 97, 16]
UNARY = ["relu", "neg", "exp", "tanh", "sigmoid", "abs", "erf", "sin", "cos", "floor", "ceil",
         "round", "sign"]
GUARDED = ["log", "sqrt", "reciprocal"]   # applied to add(abs(x), one)
BINARY = ["add", "sub", "mul", "maximum", "minimum"]
COMPARE = ["equal", "less", "less_equal", "greater", "greater_equal"]
LOGIC = ["and", "or", "xor"]
INTS = ("i32", "i64")
UNARY_INT = ["relu", "neg", "abs"]


class Gen:
    def __init__(self, seed, dt):
        self.r = random.Random(seed)
        self.dt = dt
        self.lines = []
        self.vals = []               # (name, shape)
        self.n = 0
        self.one = None

    def name(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def ty(self, shape):
        s = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
        return s + ("" if self.dt == "f64" else " " + self.dt)

    def source(self, shape, kind=None):
        kind = kind or self.r.choice(["input", "const"])
        nm = self.name("x" if kind == "input" else "c")
        self.lines.append(f"  %{nm} = {kind}() : {self.ty(shape)}")
        self.vals.append((nm, tuple(shape)))
        return nm

    def op(self, text, shape, base="v"):
        nm = self.name(base)
        self.lines.append(f"  %{nm} = {text}")
        self.vals.append((nm, tuple(shape)))
        return nm

    def temp(self, text, base="b"):
        """A value that is not of the graph's element type (a bool, or the
        other float type): used by the next op, never picked as an
        operand."""
        nm = self.name(base)
        self.lines.append(f"  %{nm} = {text}")
        return nm

    def cond(self, a, s):
        """A bool value over shape s: a compare of a with a partner (or
        of floor and round of a, so that equal holds somewhere), maybe
        combined with another by and/or/xor or negated by not."""
        b, t = self.partner(s)
        out = self.bcast(s, t)
        if self.r.random() < 0.3:
            f = self.temp(f"floor(%{a})", "f")
            g = self.temp(f"round(%{a})", "f")
            c = self.temp(f"equal(%{f}, %{g})")
            out = s
            self.vals.append((f, tuple(s)))
            self.vals.append((g, tuple(s)))
        else:
            c = self.temp(f"{self.r.choice(COMPARE)}(%{a}, %{b})")
        if self.r.random() < 0.3:
            d = self.temp(f"isnan(%{a})") if self.r.random() < 0.3 else \
                self.temp(f"{self.r.choice(COMPARE)}(%{b}, %{a})")
            dout = s if "isnan" in self.lines[-1] else out
            c = self.temp(f"{self.r.choice(LOGIC)}(%{c}, %{d})")
            out = self.bcast(out, dout)
        if self.r.random() < 0.2:
            c = self.temp(f"not(%{c})")
        return c, out, b, t

    def elem_v2(self, a, s):
        """Issue 16's elementwise ops on values of the graph's type: pow
        and mod/fmod guarded as div is, compares and bool logic feeding
        where and cast, casts through the other float type and bool."""
        k = self.r.random()
        if k < 0.2:
            b, t = self.partner(s)
            g = self.op(f"abs(%{a})", s)
            h = self.op(f"add(%{g}, %{self.one_val()})", s)
            e = self.op(f"tanh(%{b})", t)
            return self.op(f"pow(%{h}, %{e})", self.bcast(s, t))
        if k < 0.4:
            b, t = self.partner(s)
            g = self.op(f"abs(%{b})", t)
            h = self.op(f"add(%{g}, %{self.one_val()})", t)
            op = self.r.choice(["mod", "fmod"])
            return self.op(f"{op}(%{a}, %{h})", self.bcast(s, t))
        if k < 0.7:
            c, cs, b, t = self.cond(a, s)
            if self.r.random() < 0.5:
                return self.op(f"where(%{c}, %{a}, %{b})", self.bcast(cs, self.bcast(s, t)))
            return self.op(f"cast(%{c}) to={self.dt}", cs)
        if k < 0.85:
            other = "f64" if self.dt == "f32" else "f32"
            c = self.temp(f"cast(%{a}) to={other}", "t")
            return self.op(f"cast(%{c}) to={self.dt}", s)
        c = self.temp(f"cast(%{a}) to=bool")
        return self.op(f"cast(%{c}) to={self.dt}", s)

    def elem_v2_int(self, a, s):
        """The same on integers: sign, pow (wrapping), mod and fmod by
        |b| + 1 (never 0, INT_MIN's abs included), compares and bool logic
        into where and cast, a cast through bool."""
        k = self.r.random()
        if k < 0.15:
            return self.op(f"sign(%{a})", s)
        if k < 0.3:
            b, t = self.partner(s)
            return self.op(f"pow(%{a}, %{b})", self.bcast(s, t))
        if k < 0.5:
            b, t = self.partner(s)
            g = self.op(f"abs(%{b})", t)
            h = self.op(f"add(%{g}, %{self.one_val()})", t)
            op = self.r.choice(["mod", "fmod"])
            return self.op(f"{op}(%{a}, %{h})", self.bcast(s, t))
        if k < 0.85:
            b, t = self.partner(s)
            out = self.bcast(s, t)
            c = self.temp(f"{self.r.choice(COMPARE)}(%{a}, %{b})")
            if self.r.random() < 0.3:
                d = self.temp(f"{self.r.choice(COMPARE)}(%{b}, %{a})")
                c = self.temp(f"{self.r.choice(LOGIC)}(%{c}, %{d})")
            if self.r.random() < 0.2:
                c = self.temp(f"not(%{c})")
            if self.r.random() < 0.5:
                return self.op(f"where(%{c}, %{a}, %{b})", out)
            return self.op(f"cast(%{c}) to={self.dt}", out)
        c = self.temp(f"cast(%{a}) to=bool")
        return self.op(f"cast(%{c}) to={self.dt}", s)

    def elem_mixed(self, a, s):
        """Values of another element type inside the graph's kernels (the
        tile engine's mixed kernels): a float graph's values cast to i32 or
        i64 (truncated, saturated), an integer sum or compare there, back
        through cast or a where; an integer graph's through the other
        integer type (the low bits) or a float (rounded, saturated back),
        or chosen by a float compare."""
        b, t = self.partner(s)
        out = self.bcast(s, t)
        isint = self.dt in INTS
        k = self.r.random()
        if isint:
            other = self.r.choice([d for d in INTS if d != self.dt] + ["f32", "f64"])
        else:
            other = self.r.choice(INTS)
        ca = self.temp(f"cast(%{a}) to={other}", "m")
        cb = self.temp(f"cast(%{b}) to={other}", "m")
        if k < 0.4:
            c = self.temp(f"{self.r.choice(COMPARE)}(%{ca}, %{cb})")
            return self.op(f"where(%{c}, %{a}, %{b})", out)
        if k < 0.7:
            op = self.r.choice(["add", "sub", "maximum", "minimum"])
            d = self.temp(f"{op}(%{ca}, %{cb})", "m")
            return self.op(f"cast(%{d}) to={self.dt}", out)
        if k < 0.85 and len(s) >= 1:
            ax = self.r.randrange(len(s))
            d = self.temp(f"sum(%{ca}) axis={ax} keepdims=True", "m")
            return self.op(f"cast(%{d}) to={self.dt}",
                           tuple(1 if i == ax else x for i, x in enumerate(s)))
        return self.op(f"cast(%{ca}) to={self.dt}", s)

    def argreduce(self, a, s):
        """argmax or argmin along a random axis (maybe negative), keepdims
        and last either way; floats often rounded first, so that ties
        (which last= decides) are common.  The i64 indices go back to the
        graph's type through a cast, as a value of the graph."""
        op = self.r.choice(["argmax", "argmin"])
        ax = self.r.randrange(-len(s), len(s))
        keep, last = self.r.random() < 0.5, self.r.random() < 0.5
        if self.dt not in INTS and self.r.random() < 0.5:
            a = self.op(f"round(%{a})", s)
        k = ax % len(s)
        out = tuple(1 if i == k else d for i, d in enumerate(s)) if keep else \
            tuple(d for i, d in enumerate(s) if i != k)
        text = f"{op}(%{a}) axis={ax}" + (" keepdims=True" if keep else "") + \
            (" last=True" if last else "")
        if self.dt == "i64":
            return self.op(text, out)
        i = self.temp(text, "i")
        return self.op(f"cast(%{i}) to={self.dt}", out)

    def one_val(self):
        if self.one is None:
            nm = self.name("one")
            one = "1" if self.dt in INTS else "1.0"
            self.lines.append(f"  %{nm} = const() : {self.ty(())} value={one}")
            self.one = nm
        return self.one

    def half_val(self):
        if getattr(self, "half", None) is None:
            nm = self.name("half")
            self.lines.append(f"  %{nm} = const() : {self.ty(())} value=0.5")
            self.half = nm
        return self.half

    def pick(self, pred=lambda s: True):
        cands = [v for v in self.vals if pred(v[1])]
        # recent values more often, so that chains form
        cands = cands[-8:] if self.r.random() < 0.7 and len(cands) > 8 else cands
        return self.r.choice(cands) if cands else None

    @staticmethod
    def bcast(a, b):
        r = max(len(a), len(b))
        a = (1,) * (r - len(a)) + a
        b = (1,) * (r - len(b)) + b
        out = []
        for x, y in zip(a, b):
            if x != y and x != 1 and y != 1:
                return None
            out.append(max(x, y))
        return tuple(out)

    def partner(self, s):
        """A value (or a fresh source) that broadcasts with shape s."""
        v = self.pick(lambda t: self.bcast(s, t) is not None and t != ())
        if v and self.r.random() < 0.6:
            return v
        forms = [s]
        if len(s) >= 1:
            forms += [s[-1:], ()]
        if len(s) >= 2:
            forms += [s[:-1] + (1,), (1,) + s[1:], s[-2:]]
        shape = self.r.choice(forms)
        return (self.source(shape), tuple(shape))

    def softmax(self, a, s):
        m = self.op(f"max(%{a}) axis=-1 keepdims=True", s[:-1] + (1,))
        d = self.op(f"sub(%{a}, %{m})", s)
        e = self.op(f"exp(%{d})", s)
        t = self.op(f"sum(%{e}) axis=-1 keepdims=True", s[:-1] + (1,))
        return self.op(f"div(%{e}, %{t})", s)

    def eps(self):
        nm = self.name("eps")
        self.lines.append(f"  %{nm} = const() : {self.ty(())} value=1e-05")
        return nm

    def norm(self, a, s):
        """LayerNorm (gamma and beta (C,) inputs), RMSNorm or log-softmax
        over the last axis: one row_reduction each under row-fusion, its
        statistics' ops (+ eps, sqrt, reciprocal, log) over the reduced
        rows."""
        red = s[:-1] + (1,)
        kind = self.r.choice(["layernorm", "rmsnorm", "log_softmax"])
        if kind == "log_softmax":
            m = self.op(f"max(%{a}) axis=-1 keepdims=True", red)
            d = self.op(f"sub(%{a}, %{m})", s)
            e = self.op(f"exp(%{d})", s)
            t = self.op(f"sum(%{e}) axis=-1 keepdims=True", red)
            return self.op(f"sub(%{d}, %{self.op(f'log(%{t})', red)})", s)
        if kind == "layernorm":
            mu = self.op(f"mean(%{a}) axis=-1 keepdims=True", red)
            d = self.op(f"sub(%{a}, %{mu})", s)
        else:
            d = a
        sq = self.op(f"mul(%{d}, %{d})", s)
        v = self.op(f"mean(%{sq}) axis=-1 keepdims=True", red)
        sd = self.op(f"sqrt(%{self.op(f'add(%{v}, %{self.eps()})', red)})", red)
        n = self.op(f"mul(%{d}, %{self.op(f'reciprocal(%{sd})', red)})", s)
        y = self.op(f"mul(%{n}, %{self.source(s[-1:], 'input')})", s)
        if kind == "layernorm":
            y = self.op(f"add(%{y}, %{self.source(s[-1:], 'input')})", s)
        return y

    @staticmethod
    def window_out(n, k, s, p0, p1, d, ceil_mode):
        span = n + p0 + p1 - (d * (k - 1) + 1)
        o = (-(-span // s) if ceil_mode else span // s) + 1
        return o - 1 if ceil_mode and (o - 1) * s >= n + p0 else o

    def window(self):
        """conv2d on a fresh (N, C, H, W) source, maybe a pool on it, and a
        reshape to rank 2 so that the rest of the graph uses the result."""
        r = self.r
        n, g = r.choice([1, 2]), r.choice([1, 1, 2, 3])
        c, f = g * r.choice([1, 2, 3]), g * r.choice([1, 2, 5])
        h, w = r.choice([5, 7, 9, 16]), r.choice([5, 6, 11, 17])
        kh, kw = r.choice([1, 2, 3]), r.choice([1, 3])
        st, dl = (r.choice([1, 2]), r.choice([1, 2])), (r.choice([1, 1, 2]), 1)
        pd = tuple(r.choice([0, 1, 2]) for _ in range(4))
        x = self.source((n, c, h, w), "input")
        wt = self.source((f, c // g, kh, kw), "const")
        args = f"%{x}, %{wt}"
        if r.random() < 0.5:
            args += ", %" + self.source((f,), "const")
        oh = self.window_out(h, kh, st[0], pd[0], pd[2], dl[0], False)
        ow = self.window_out(w, kw, st[1], pd[1], pd[3], dl[1], False)
        if oh < 1 or ow < 1:
            return self.op(f"neg(%{x})", (n, c, h, w))
        v = self.op(f"conv2d({args}) strides=({st[0]}, {st[1]}) pads=({', '.join(map(str, pd))}) "
                    f"dilations=({dl[0]}, {dl[1]}) groups={g}", (n, f, oh, ow))
        shape = (n, f, oh, ow)
        if r.random() < 0.6 and oh >= 2 and ow >= 2:
            op = r.choice(["max_pool2d", "avg_pool2d"])
            k, ps, cm = (2, r.choice([1, 2])), r.choice([1, 2]), r.random() < 0.5
            pp = (r.choice([0, 1]), 0, r.choice([0, 1]), 1)
            ph = self.window_out(oh, k[0], ps, pp[0], pp[2], 1, cm)
            pw = self.window_out(ow, k[1], ps, pp[1], pp[3], 1, cm)
            extra = " count_include_pad=True" if op == "avg_pool2d" and r.random() < 0.5 else ""
            v = self.op(f"{op}(%{v}) kernel=({k[0]}, {k[1]}) strides=({ps}, {ps}) "
                        f"pads=({', '.join(map(str, pp))}) ceil_mode={cm}{extra}",
                        (n, f, ph, pw))
            shape = (n, f, ph, pw)
        return self.op(f"reshape(%{v}) shape=({n * f * shape[2]}, {shape[3]})",
                       (n * f * shape[2], shape[3]))

    def lead_dims(self, s, most, budget=30000, choices=(1, 2, 3)):
        """most dims (of choices; 1 once the elements would pass budget)
        to put before shape s."""
        n = 1
        for d in s:
            n *= d
        out = []
        for _ in range(most):
            d = self.r.choice(choices)
            if n * d > budget:
                d = 1
            n *= d
            out.append(d)
        return tuple(out)

    def copy(self, a, s):
        """A copy op on a (shape s): concat, slice, pad, gather or expand,
        ragged and with negative indices, at any rank up to 8: a third of
        the time a is first expanded to rank 5 to 8 (leading dims of 1, 2
        or 3), and gather and expand themselves can reach rank 8, so that
        the copy programs' leading dims (walked one index at a time) and
        the values of rank 5 to 8 they make meet the rest of the graph."""
        r = self.r
        if r.random() < 0.33 and len(s) < 8:
            lead = self.lead_dims(s, r.randint(max(5 - len(s), 1), 8 - len(s)))
            sh = lead + s
            a = self.op(f"expand(%{a}) shape=({', '.join(map(str, sh))}"
                        f"{',' if len(sh) == 1 else ''})", sh)
            s = sh
        k = r.choice(["concat", "slice", "pad", "gather", "expand"]) if s else "expand"
        if k == "concat":
            ax = r.randrange(len(s))
            parts, out = [a], list(s)
            for _ in range(r.randint(0, 2)):
                t = s[:ax] + (r.choice(SIZES),) + s[ax + 1:]
                b = self.pick(lambda u: u == t)
                parts.append(b[0] if b and r.random() < 0.5 else self.source(t))
                out[ax] += t[ax]
            axis = ax - len(s) if r.random() < 0.3 else ax
            return self.op(f"concat({', '.join('%' + p for p in parts)}) axis={axis}",
                           tuple(out))
        if k == "slice":
            axes = r.sample(range(len(s)), r.randint(1, len(s)))
            st, en, sp, out = [], [], [], list(s)
            for ax in axes:
                d = s[ax]
                while True:
                    step = r.choice([1, 1, 2, 3, -1, -2])
                    b, e = r.randint(-d - 2, d + 2), r.randint(-d - 2, d + 2)
                    if r.random() < 0.2:
                        e = 9223372036854775807 if step > 0 else -9223372036854775807
                    n = len(range(*slice(b, e, step).indices(d)))
                    if n > 0:
                        break
                st.append(b)
                en.append(e)
                sp.append(step)
                out[ax] = n
            tup = lambda v: "(" + ", ".join(map(str, v)) + ("," if len(v) == 1 else "") + ")"
            return self.op(f"slice(%{a}) starts={tup(st)} ends={tup(en)} "
                           f"axes={tup(axes)} steps={tup(sp)}", tuple(out))
        if k == "pad":
            pads = []
            for d in s:
                b, e = r.randint(-1, 3), r.randint(-1, 3)
                while d + b + e <= 0:
                    b, e = b + 1, e + 1
                pads.append((b, e))
            out = tuple(d + b + e for d, (b, e) in zip(s, pads))
            # each type's own extremes: an i64 past 2^53 stays exact
            val = r.choice(["", " value=3"] + {"i64": [" value=9007199254740993",
                                                       " value=-9223372036854775808"],
                                               "i32": [" value=-2147483648"]}.get(
                                                   self.dt, [" value=-2.5"]))
            return self.op(f"pad(%{a}) pads=({', '.join(str(b) for b, _ in pads)}, "
                           f"{', '.join(str(e) for _, e in pads)}){val}", out)
        if k == "gather":
            ax = r.randrange(len(s))
            q = r.randint(0, min(2, 9 - len(s)))
            ish = self.lead_dims(s[:ax] + s[ax + 1:], q, 60000, (1, 2, 3, 5))
            n = 1
            for d in ish:
                n *= d
            vals = [r.randrange(-s[ax], s[ax]) for _ in range(n)]
            nm = self.name("i")
            self.lines.append(f"  %{nm} = const() : {'(' + ', '.join(map(str, ish)) + (',' if q == 1 else '') + ')'} "
                              f"{r.choice(['i64', 'i32'])} values=({', '.join(map(str, vals))}"
                              f"{',' if n == 1 else ''})")
            axis = ax - len(s) if r.random() < 0.3 else ax
            return self.op(f"gather(%{a}, %{nm}) axis={axis}", s[:ax] + ish + s[ax + 1:])
        extra = r.randint(0, 8 - len(s))
        shape = list(self.lead_dims(s, extra))
        shape += [r.choice(SIZES) if d == 1 and r.random() < 0.7 else
                  (1 if r.random() < 0.3 else d) for d in s]
        out = tuple(shape[:extra]) + tuple(d if d != 1 else t for d, t in zip(s, shape[extra:]))
        sh = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
        return self.op(f"expand(%{a}) shape={sh}", out)

    def views(self, a, s):
        """Layout ops feeding compute, which fuse folds into the compute's
        loads as views (docs/passes.md "Views"): a Linear layer's
        matmul(a, transpose(W)); a transposed value into an elementwise op
        with a partner; a unit-step slice into a reduction; a chain
        (transpose, then a reshape that merges across it, which is no view
        and stays a copy); an expand along a new leading dim into a sum
        over it."""
        r = self.r
        k = r.choice(["linear", "elem", "slice", "chain", "expand"])
        if k == "linear" and len(s) in (2, 3):
            n = r.choice(SIZES)
            w = self.source((n, s[-1]), "const")
            wt = self.op(f"transpose(%{w})", (s[-1], n))
            return self.op(f"matmul(%{a}, %{wt})", s[:-1] + (n,))
        if k == "elem" and len(s) >= 2:
            t = s[:-2] + (s[-1], s[-2])
            b = self.op(f"transpose(%{a})", t)
            c, u = self.partner(t)
            return self.op(f"{r.choice(['add', 'mul', 'sub'])}(%{b}, %{c})", self.bcast(t, u))
        if k == "slice" and len(s) >= 1 and s[-1] > 1:
            lo = r.randint(0, s[-1] - 1)
            hi = r.randint(lo + 1, s[-1])
            b = self.op(f"slice(%{a}) starts=({lo},) ends=({hi},) axes=({len(s) - 1},)",
                        s[:-1] + (hi - lo,))
            op = r.choice(["sum", "max"])
            return self.op(f"{op}(%{b}) axis=-1 keepdims=True", s[:-1] + (1,))
        if k == "chain" and len(s) == 2:
            b = self.op(f"transpose(%{a})", (s[1], s[0]))
            c = self.op(f"reshape(%{b}) shape=({s[0] * s[1]},)", (s[0] * s[1],))
            return self.op(f"exp(%{c})" if self.dt not in INTS else f"neg(%{c})",
                           (s[0] * s[1],))
        if len(s) <= 3:
            m = r.choice([2, 3])
            b = self.op(f"expand(%{a}) shape=({', '.join(map(str, (m,) + s))})", (m,) + s)
            return self.op(f"sum(%{b}) axis=0", s)
        return self.op(f"neg(%{a})", s)

    def step(self):
        r = self.r.random()
        isint = self.dt in INTS
        if self.r.random() < 0.08:
            return self.views(*self.pick())
        if self.r.random() < 0.06 and not isint:
            return self.window()        # conv2d and the pools take floats
        a, s = self.pick()
        if self.r.random() < 0.08 and len(s) >= 1 and not isint:
            return self.softmax(a, s) if self.r.random() < 0.5 else self.norm(a, s)
        if self.r.random() < 0.15:
            return self.elem_v2_int(a, s) if isint else self.elem_v2(a, s)
        if self.r.random() < 0.12:
            return self.copy(a, s)
        if self.r.random() < 0.1:
            return self.elem_mixed(a, s)
        if self.r.random() < 0.06 and len(s) >= 1:
            return self.argreduce(a, s)
        if r < 0.25:
            op = self.r.choice(UNARY_INT if isint else UNARY)
            return self.op(f"{op}(%{a})", s)
        if r < 0.32 and not isint:
            op = self.r.choice(GUARDED)
            g = self.op(f"abs(%{a})", s)
            h = self.op(f"add(%{g}, %{self.one_val()})", s)
            return self.op(f"{op}(%{h})", s)
        if r < 0.55:
            b, t = self.partner(s)
            if self.r.random() < 0.5:
                a, b, s, t = b, a, t, s
            out = self.bcast(s, t)
            op = self.r.choice(BINARY + ["div"])
            if op == "div":
                g = self.op(f"abs(%{b})", t)
                b = self.op(f"add(%{g}, %{self.one_val()})", t)
            return self.op(f"{op}(%{a}, %{b})", out)
        if r < 0.72 and len(s) >= 1:
            op = self.r.choice(["sum", "max", "min", "prod"] + ([] if isint else ["mean"]))
            keep = self.r.random() < 0.5
            ax = self.r.choice(list(range(len(s))) + [-1, None, "tuple"])
            if ax == "tuple":
                # a tuple of axes (written in any order, maybe negative)
                ks = self.r.sample(range(len(s)), self.r.randint(1, len(s)))
                ax = tuple(k - len(s) if self.r.random() < 0.3 else k for k in ks)
            if op == "prod" and not isint:
                # keep products of many elements away from 0 and overflow
                # (an integer product wraps, exactly on both engines)
                g = self.op(f"tanh(%{a})", s)
                h = self.op(f"mul(%{g}, %{self.half_val()})", s)
                a = self.op(f"add(%{h}, %{self.one_val()})", s)
            if ax is None:
                out = (1,) * len(s) if keep else ()
                attrs = ""
            elif isinstance(ax, tuple):
                ks = {k % len(s) for k in ax}
                out = tuple(1 if i in ks else d for i, d in enumerate(s)) if keep else \
                    tuple(d for i, d in enumerate(s) if i not in ks)
                attrs = " axis=(" + ", ".join(map(str, ax)) + ("," if len(ax) == 1 else "") + ")"
            else:
                k = ax % len(s)
                out = tuple(1 if i == k else d for i, d in enumerate(s)) if keep else \
                    tuple(d for i, d in enumerate(s) if i != k)
                attrs = f" axis={ax}"
            if keep:
                attrs += " keepdims=True"
            return self.op(f"{op}(%{a}){attrs}", out)
        if r < 0.85 and len(s) in (1, 2, 3, 4):
            n = self.r.choice(SIZES)
            form = self.r.random()
            if len(s) == 1:
                # numpy's matmul with a 1-D a: (K,) x (.., K, N) drops M
                bs = self.r.choice([(), (2,), (1, 3)])
                w = self.source(bs + (s[0], n), "const")
                return self.op(f"matmul(%{a}, %{w})", bs + (n,))
            if form < 0.15:
                # a 1-D b drops N
                w = self.source((s[-1],), "const")
                return self.op(f"matmul(%{a}, %{w})", s[:-1])
            if form < 0.4:
                # batch dims that broadcast: b with its own leading dims,
                # a's stretched where they are 1
                lead = s[:-2]
                bl = tuple(self.r.choice([d, 1]) for d in lead)
                if self.r.random() < 0.5 and len(s) < 4:
                    bl = (self.r.choice([2, 3]),) + bl
                w = self.source(bl + (s[-1], n), "const")
                out = self.bcast(lead, bl[-len(lead):] if lead else ()) if lead else ()
                out = bl[:len(bl) - len(lead)] + (out or ())
                return self.op(f"matmul(%{a}, %{w})", out + (s[-2], n))
            w = self.source(s[:-2] + (s[-1], n), "const")
            return self.op(f"matmul(%{a}, %{w})", s[:-2] + (s[-2], n))
        if r < 0.93 and len(s) >= 2:
            if len(s) == 3 and self.r.random() < 0.5:
                perm = self.r.sample(range(3), 3)
                out = tuple(s[p] for p in perm)
                return self.op(f"transpose(%{a}) perm=({', '.join(map(str, perm))})", out)
            return self.op(f"transpose(%{a})", s[:-2] + (s[-1], s[-2]))
        if len(s) >= 1:
            n = 1
            for d in s:
                n *= d
            forms = [(n,), (1, n)]
            if len(s) >= 2:
                forms.append((s[-1],) + s[:-1])
                forms.append((s[0] * s[1],) + s[2:])
            out = self.r.choice(forms)
            return self.op(f"reshape(%{a}) shape=({', '.join(map(str, out))}"
                           f"{',' if len(out) == 1 else ''})", out)
        return self.op(f"neg(%{a})", s)

    def graph(self):
        m, n = self.r.choice(SIZES), self.r.choice(SIZES)
        if self.r.random() < 0.2:
            self.source((self.r.choice([2, 3]), m, n), "input")
        else:
            self.source((m, n), "input")
        for _ in range(self.r.randint(0, 2)):
            self.source(self.r.choice([(m, n), (n,), (m, 1), ()]))
        for _ in range(self.r.randint(3, 12)):
            self.step()
        return "graph {\n" + "\n".join(self.lines) + "\n}\n"


def gen(seed, dt):
    return Gen(seed, dt).graph()


def passes(build):
    out = subprocess.run([os.path.join(build, "aicm-opt"), "--list-passes"],
                         capture_output=True, text=True, check=True).stdout
    return {l.split()[0] for l in out.splitlines() if l.startswith("  ") and
            not l.startswith("    ")}


def check(build, n, keep):
    have = passes(build)
    if "lower-tiled" not in have:
        print("gen_random_graphs: aicm-opt has no lower-tiled pass", file=sys.stderr)
        return 2
    full = ["shape-infer"] + [p for p in ("fuse", "autotune") if p in have] + ["lower-tiled"]
    nofuse = [p for p in full if p != "fuse"]
    pipes = [(",".join(full), []), (",".join(nofuse), []), (",".join(full), ["--threads=3"])]
    if "fuse" in have:
        pipes.append((",".join(full).replace("fuse", "fuse{row-fusion=true,matmul-reduce=true}"),
                      []))
    run = os.path.join(build, "aicm-run")
    fails = 0
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for seed in range(n):
            for dt in ("f64", "f32") + (INTS if seed % 4 == 0 else ()):
                text = gen(seed, dt)
                path = os.path.join(tmp, f"g{seed}-{dt}.aicm")
                with open(path, "w") as f:
                    f.write(text)
                for pipe, extra in pipes:
                    if "row-fusion" in pipe and seed % 2:
                        # odd seeds: rows wider than 16 run in passes
                        pipe = pipe.replace("lower-tiled", "lower-tiled{row-max=16}")
                    jobs.append((seed, dt, text, [run, f"--pass={pipe}", "--check"] + extra + [path]))
        # The runs are independent processes: as many at a time as there are
        # CPUs, reported in the order they were listed.
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as ex:
            results = ex.map(lambda j: subprocess.run(j[3], capture_output=True, text=True), jobs)
            for (seed, dt, text, cmd), p in zip(jobs, results):
                total += 1
                checks = [l for l in p.stdout.splitlines() if l.startswith("check ")]
                ok = p.returncode == 0 and checks and all(l.endswith("PASS") for l in checks)
                if ok:
                    continue
                fails += 1
                os.makedirs(keep, exist_ok=True)
                kept = os.path.join(keep, f"random-{seed}-{dt}.aicm")
                with open(kept, "w") as f:
                    f.write(text)
                print(f"[FAIL] seed {seed} {dt}: exit {p.returncode}: "
                      f"{' '.join(cmd[:-1])} {kept}")
                for l in (p.stderr.splitlines() + [l for l in checks if "FAIL" in l])[:8]:
                    print("    " + l)
    print(f"random graphs: {total - fails}/{total} runs passed ({n} graphs in f64 and f32, "
          f"{(n + 3) // 4} in i32 and i64, x {len(pipes)} pipelines: {' | '.join(p + ' ' + ' '.join(e) for p, e in pipes)})")
    return 1 if fails else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "gen":
        dt = next((d[2:] for d in argv if d in ("--f32", "--i32", "--i64")), "f64")
        sys.stdout.write(gen(int(argv[1]), dt))
        return 0
    if len(argv) >= 2 and argv[0] == "check":
        n, keep = 200, os.environ.get("TMPDIR", "/tmp")
        if "-n" in argv:
            n = int(argv[argv.index("-n") + 1])
        if "--keep" in argv:
            keep = argv[argv.index("--keep") + 1]
        return check(argv[1], n, keep)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
