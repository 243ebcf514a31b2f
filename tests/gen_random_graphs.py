#!/usr/bin/python3
"""gen_random_graphs.py: random valid aicm graphs, and the differential test
that runs them through the compiler and checks them against the reference.

    tests/gen_random_graphs.py gen SEED [--f32]      one graph on stdout
    tests/gen_random_graphs.py check BUILD_DIR [-n N] [--keep DIR]

A graph draws on every op of DESIGN §3: sources of odd sizes (1, 7, 33, 97
leave ragged tiles at every block size), elementwise ops on values that
broadcast ((M, N) with (N,), (M, 1), (1, N), ()), reductions on either axis
or over everything with and without keepdims, matmuls (also rank 3),
transposes and reshapes, the copy ops (concat, slice, pad, gather by
inline i32/i64 indices, expand), and chains long enough for fuse to build every
kind of kernel.  Values stay finite and of moderate size (log, sqrt and div
see 1 + |x|), so that a mismatch is a bug and not rounding amplified.

'check' generates N graphs (default 200) in both element types and runs each
through `aicm-run --pass=P --check` for P = shape-infer,fuse,autotune,
lower-tiled and the same without fuse (using whichever of fuse and autotune
`aicm-opt --list-passes` shows), once more on 3 threads, and with
fuse{row-fusion=true,matmul-reduce=true} (softmax rows and reductions of
matmuls, so that every kernel kind is made).  Every run must
exit 0 with every output PASS.  A failing graph is kept (--keep, default
$TMPDIR) and named in the report, with the command to reproduce it.
"""
import os
import random
import subprocess
import sys
import tempfile

SIZES = [1, 7, 33, 97, 16]
UNARY = ["relu", "neg", "exp", "tanh", "sigmoid", "abs", "erf", "sin"]
GUARDED = ["log", "sqrt", "reciprocal"]   # applied to add(abs(x), one)
BINARY = ["add", "sub", "mul", "maximum", "minimum"]


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
        return s + (" f32" if self.dt == "f32" else "")

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

    def one_val(self):
        if self.one is None:
            nm = self.name("one")
            self.lines.append(f"  %{nm} = const() : {self.ty(())} value=1.0")
            self.one = nm
        return self.one

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

    def copy(self, a, s):
        """A copy op on a (shape s): concat, slice, pad, gather or expand,
        ragged and with negative indices, kept to rank 4 (the copy
        programs' limit)."""
        r = self.r
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
            val = r.choice(["", " value=-2.5", " value=3"])
            return self.op(f"pad(%{a}) pads=({', '.join(str(b) for b, _ in pads)}, "
                           f"{', '.join(str(e) for _, e in pads)}){val}", out)
        if k == "gather":
            ax = r.randrange(len(s))
            q = r.randint(0, min(2, 5 - len(s)))
            ish = tuple(r.choice([1, 2, 3, 5]) for _ in range(q))
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
        extra = r.randint(0, 4 - len(s))
        shape = [r.choice([2, 3]) for _ in range(extra)]
        shape += [r.choice(SIZES) if d == 1 and r.random() < 0.7 else
                  (1 if r.random() < 0.3 else d) for d in s]
        out = tuple(shape[:extra]) + tuple(d if d != 1 else t for d, t in zip(s, shape[extra:]))
        sh = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
        return self.op(f"expand(%{a}) shape={sh}", out)

    def step(self):
        r = self.r.random()
        a, s = self.pick()
        if self.r.random() < 0.08 and len(s) >= 1:
            return self.softmax(a, s)
        if self.r.random() < 0.12:
            return self.copy(a, s)
        if r < 0.25:
            op = self.r.choice(UNARY)
            return self.op(f"{op}(%{a})", s)
        if r < 0.32:
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
            op = self.r.choice(["sum", "max", "mean"])
            keep = self.r.random() < 0.5
            ax = self.r.choice(list(range(len(s))) + [-1, None])
            if ax is None:
                out = (1,) * len(s) if keep else ()
                attrs = ""
            else:
                k = ax % len(s)
                out = tuple(1 if i == k else d for i, d in enumerate(s)) if keep else \
                    tuple(d for i, d in enumerate(s) if i != k)
                attrs = f" axis={ax}"
            if keep:
                attrs += " keepdims=True"
            return self.op(f"{op}(%{a}){attrs}", out)
        if r < 0.85 and len(s) in (2, 3):
            n = self.r.choice(SIZES)
            if len(s) == 2:
                w = self.source((s[1], n), "const")
                return self.op(f"matmul(%{a}, %{w})", (s[0], n))
            w = self.source((s[0], s[2], n), "const")
            return self.op(f"matmul(%{a}, %{w})", (s[0], s[1], n))
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
        for seed in range(n):
            for dt in ("f64", "f32"):
                text = gen(seed, dt)
                path = os.path.join(tmp, f"g{seed}-{dt}.aicm")
                with open(path, "w") as f:
                    f.write(text)
                for pipe, extra in pipes:
                    total += 1
                    cmd = [run, f"--pass={pipe}", "--check"] + extra + [path]
                    p = subprocess.run(cmd, capture_output=True, text=True)
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
    print(f"random graphs: {total - fails}/{total} runs passed ({n} graphs x 2 element types "
          f"x {len(pipes)} pipelines: {' | '.join(p + ' ' + ' '.join(e) for p, e in pipes)})")
    return 1 if fails else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "gen":
        sys.stdout.write(gen(int(argv[1]), "f32" if "--f32" in argv else "f64"))
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
