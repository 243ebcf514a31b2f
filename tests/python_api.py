"""python_api.py: the aicm package's core (compile, run, Error, stats) over libaicm.

    AICM_LIB=build/libaicm.so PYTHONPATH=python /usr/bin/python3 tests/python_api.py BUILD_DIR

The seed's mlp (testdata/demo/mlp.aicm) through aicm.run and aicm.compile,
against numpy on the same x, W and bias and against aicm-run itself (its
outputs written as .npy, its KernelStats as JSON, with the constants from
the same seed); every dtype of the table through a graph that uses it;
errors raised as aicm.Error with their located message; and no leak:
10,000 compile-and-run calls leave the resident set where 1,000 left it
(/proc/self/statm), skipped under valgrind (AICM_VALGRIND) or sanitizers;
engine="native" against the reference engine, and its error without a C
compiler.
Prints one line per test and exits 1 on a failure.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import aicm

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MLP = os.path.join(TOP, "testdata", "demo", "mlp.aicm")
MLP_TEXT = open(MLP).read()
failures = []


def test(fn):
    t0 = time.time()
    try:
        fn()
    except Exception as e:              # report every failure, go on
        import traceback
        traceback.print_exc()
        failures.append(fn.__name__)
        print("[FAIL] %s: %s" % (fn.__name__, e))
        return
    print("[ OK ] %s (%.1f s)" % (fn.__name__, time.time() - t0))


def mlp_numpy(x, W, bias):
    return np.maximum(x @ W + bias, 0).sum(axis=1, keepdims=True)


def close(a, b, tol=1e-12):
    return a.shape == b.shape and np.abs(a - b).max() <= tol * max(np.abs(b).max(), 1)


def aicm_run(*args):
    """build/aicm-run's stdout, which must succeed."""
    r = subprocess.run([os.path.join(BUILD, "aicm-run")] + list(args), capture_output=True,
                       text=True)
    assert r.returncode == 0, "aicm-run %s: %s" % (" ".join(args), r.stderr)
    return r.stdout


@test
def test_run_mlp_numpy():
    rng = np.random.default_rng(1)
    x, W, bias = rng.standard_normal((64, 48)), rng.standard_normal((48, 32)), \
        rng.standard_normal(32)
    want = mlp_numpy(x, W, bias)
    for engine in ("tile", "reference"):
        got = aicm.run(MLP_TEXT, x=x, W=W, bias=bias, engine=engine)
        assert list(got) == ["rowsum"], got.keys()
        assert got["rowsum"].dtype == np.float64
        assert close(got["rowsum"], want), (engine, np.abs(got["rowsum"] - want).max())


@test
def test_compile_mlp_numpy():
    rng = np.random.default_rng(2)
    f = aicm.compile(MLP_TEXT)
    assert f.inputs == [("x", "f64", (64, 48))], f.inputs
    assert f.outputs == [("rowsum", "f64", (64, 1))], f.outputs
    W, bias = rng.standard_normal((48, 32)), rng.standard_normal(32)
    for _ in range(3):                  # one program, several runs
        x = rng.standard_normal((64, 48))
        assert close(f(x, W=W, bias=bias), mlp_numpy(x, W, bias))
    # a non-contiguous array is made contiguous
    xt = rng.standard_normal((48, 64)).T
    assert not xt.flags.c_contiguous
    assert close(f(x=xt, W=W, bias=bias), mlp_numpy(xt, W, bias))
    assert "tiled" in f.text


# aicm-run's KernelStats JSON keys and the package's names for them
STATS_KEYS = {"kernel": "name", "kind": "kind", "result": "result", "grid": "grid",
              "programs": "programs", "dram__bytes_read.sum": "bytes_read",
              "dram__bytes_write.sum": "bytes_written", "flops": "flops",
              "ideal_bytes_read": "ideal_read", "ideal_bytes_write": "ideal_written"}


@test
def test_against_aicm_run():
    """The same x and the same seeded consts: aicm-run's output and stats."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 48))
    passes = "shape-infer,fuse,autotune,lower-tiled"
    with tempfile.TemporaryDirectory() as d:
        np.save(os.path.join(d, "x.npy"), x)
        aicm_run("-q", "--seed=5", "--pass=" + passes, "--input", "x=" + d + "/x.npy",
                 "--output-dir=" + d, MLP)
        want = np.load(os.path.join(d, "rowsum.npy"))
        stats = json.loads(aicm_run("-q", "--seed=5", "--pass=" + passes,
                                    "--stats=json", MLP))
    got, st = aicm.run(MLP_TEXT, x=x, seed=5, stats=True)
    assert np.array_equal(got["rowsum"], want), np.abs(got["rowsum"] - want).max()
    f = aicm.compile(MLP_TEXT, seed=5)
    assert np.array_equal(f(x), want)
    assert f.stats == st
    assert len(st["kernels"]) == len(stats["kernels"]) >= 1
    for theirs, ours in zip(stats["kernels"], st["kernels"]):
        for k, v in STATS_KEYS.items():
            assert theirs[k] == ours[v], (k, theirs[k], ours[v])
    for k, v in STATS_KEYS.items():
        if k in stats["total"] and k not in ("kernel", "kind", "result", "grid"):
            assert stats["total"][k] == st["total"][v], (k, stats["total"][k], st["total"])


@test
def test_dtypes():
    """Each element type in and out: a graph that casts and adds."""
    for dt, npdt in (("f64", np.float64), ("f32", np.float32), ("i32", np.int32),
                     ("i64", np.int64)):
        text = ("graph {\n  %%a = input() : (3, 5) %s\n  %%b = input() : (5,) %s\n"
                "  %%c = add(%%a, %%b)\n  %%d = greater(%%c, %%a)\n  return %%c, %%d\n}\n" % (dt, dt))
        a = (np.arange(15).reshape(3, 5) - 7).astype(npdt)
        b = (np.arange(5) - 2).astype(npdt)
        for engine in ("tile", "reference"):
            c, d = aicm.compile(text, engine=engine)(a, b)
            assert c.dtype == npdt and np.array_equal(c, a + b), (dt, engine, c)
            assert d.dtype == np.bool_ and np.array_equal(d, a + b > a), (dt, engine, d)
    text = "graph {\n  %p = input() : (4,) bool\n  %q = not(%p)\n}\n"
    p = np.array([True, False, False, True])
    assert np.array_equal(aicm.run(text, p=p)["q"], ~p)


@test
def test_const_files():
    """A const's file= is read from the folder of the name the text is given."""
    W = np.arange(12, dtype=np.float32).reshape(3, 4)
    text = ('graph {\n  %x = input() : (2, 3) f32\n'
            '  %W = const() : (3, 4) f32 file="W.npy"\n  %y = matmul(%x, %W)\n}\n')
    x = np.ones((2, 3), np.float32)
    with tempfile.TemporaryDirectory() as d:
        np.save(os.path.join(d, "W.npy"), W)
        y = aicm.run(text, x=x, name=os.path.join(d, "g.aicm"))["y"]
        assert np.array_equal(y, x @ W), y
        try:
            aicm.run(text, x=x, name=os.path.join(d, "sub", "g.aicm"))
            raise AssertionError("no error")
        except aicm.Error as e:
            assert str(e).startswith(os.path.join(d, "sub", "g.aicm") + ":3:"), str(e)
            assert "W.npy" in str(e), str(e)


@test
def test_errors():
    # a parse error: located, with the line and the caret
    try:
        aicm.run("graph {\n  %x = input() : (4, 4)\n  %y = matmull(%x, %x)\n}\n",
                 name="bad.aicm")
        raise AssertionError("no error")
    except aicm.Error as e:
        s = str(e)
        assert s.startswith("bad.aicm:3:8: error: unknown op 'matmull'"), s
        assert "\n    %y = matmull(%x, %x)\n         ^~~~~~~" in s, s
        assert e.status == 1
    f = aicm.compile(MLP_TEXT, name="mlp.aicm")
    x = np.zeros((64, 48))
    for bad, want in ((x.astype(np.float32), "input '%x' is given as (64, 48) f32; "
                       "expected (64, 48) f64"),
                      (np.zeros((64, 47)), "input '%x' is given as (64, 47) f64; "
                       "expected (64, 48) f64")):
        try:
            f(bad)
            raise AssertionError("no error for %s" % want)
        except aicm.Error as e:
            assert str(e).startswith("mlp.aicm:3:3: error: " + want), str(e)
    for call, want in ((lambda: f(), "input '%x' is not given"),
                       (lambda: f(x, x), "2 inputs given by position, but the graph has 1"),
                       (lambda: f(x, x=x), "input 'x' is given by position and by name"),
                       (lambda: f(x.astype(np.complex128)), "dtype complex128"),
                       (lambda: aicm.run(MLP_TEXT, passes="shape-infer,fusee"), "'fusee'"),
                       (lambda: aicm.compile(MLP_TEXT, engine="gpu"), "engine 'gpu'"),
                       (lambda: aicm.compile(MLP_TEXT, passes="shape-infer,lower-tiled",
                                             engine="reference"),
                        "the reference interpreter runs graphs")):
        try:
            call()
            raise AssertionError("no error for %s" % want)
        except aicm.Error as e:
            assert want in str(e), (want, str(e))
    assert aicm.Error.__module__ == "aicm"


@test
def test_native():
    """engine="native" against the reference engine on a small graph (a matmul, a
    softmax's exp and a reduction through the generated C), in a cache of the test's
    own with portable flags; its .stats those of aicm-run --engine=native --stats; and
    no C compiler is an aicm.Error of status 2."""
    text = ("graph {\n  %x = input() : (6, 20)\n  %W = const() : (20, 12)\n"
            "  %h = matmul(%x, %W)\n  %e = exp(%h)\n  %s = sum(%e) axis=1 keepdims=True\n"
            "  %y = div(%e, %s)\n}\n")
    rng = np.random.default_rng(3)
    x, W = rng.uniform(-1, 1, (6, 20)), rng.uniform(-1, 1, (20, 12))
    keep = {k: os.environ.get(k) for k in ("XDG_CACHE_HOME", "AICM_CFLAGS", "CC")}
    with tempfile.TemporaryDirectory() as d:
        try:
            os.environ["XDG_CACHE_HOME"] = d
            os.environ["AICM_CFLAGS"] = "-O1 -fPIC -shared"
            want = aicm.run(text, x=x, W=W, engine="reference")["y"]
            f = aicm.compile(text, engine="native", threads=2)
            for _ in range(2):
                got = f(x, W=W)
                assert close(got, want), np.abs(got - want).max()
                W = W * 0.5
                want = aicm.run(text, x=x, W=W, engine="reference")["y"]
            # KernelStats: the tile engine's count, as aicm-run --engine=native gives it
            st = f.stats
            with open(os.path.join(d, "g.aicm"), "w") as fh:
                fh.write(text)
            want_st = json.loads(aicm_run("-q", "--engine=native",
                                          "--pass=" + aicm.DEFAULT_PASSES, "--stats=json",
                                          os.path.join(d, "g.aicm")))
            assert len(st["kernels"]) == len(want_st["kernels"]) >= 2, (st, want_st)
            for theirs, ours in zip(want_st["kernels"] + [want_st["total"]],
                                    st["kernels"] + [st["total"]]):
                for k, v in STATS_KEYS.items():
                    if k in theirs:
                        assert theirs[k] == ours[v], (k, theirs[k], ours[v])
            f.close()
            assert any(n.endswith(".so") for n in os.listdir(os.path.join(d, "aicm")))
            os.environ["CC"] = "/nonexistent/no-such-cc"
            try:
                aicm.compile(text, engine="native")
                raise AssertionError("no error without a C compiler")
            except aicm.Error as e:
                assert e.status == 2, e.status
                assert str(e) == ("libaicm: error: the native engine needs a C compiler, and "
                                  "'/nonexistent/no-such-cc' does not run (set $CC to one)"
                                  ), str(e)
        finally:
            for k, v in keep.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


@test
def test_no_leak():
    """RSS after 10,000 compile-and-run calls is that after 1,000."""
    if os.environ.get("AICM_VALGRIND") or os.environ.get("ASAN_OPTIONS"):
        print("test_no_leak: SKIPPED under valgrind or a sanitizer")
        return
    page = os.sysconf("SC_PAGE_SIZE")
    text = ("graph {\n  %a = input() : (8, 8)\n  %b = input() : (8, 8)\n"
            "  %c = matmul(%a, %b)\n  %d = relu(%c)\n}\n")
    a = np.ones((8, 8))
    want = np.maximum(a @ a, 0)

    def rss():
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * page

    def once():
        f = aicm.compile(text, threads=1)
        y = f(a, a)
        assert np.array_equal(y, want)
        f.stats

    for _ in range(1000):
        once()
    r1 = rss()
    for _ in range(9000):
        once()
    r2 = rss()
    # a leak of even 100 bytes a call would be 900 KB here
    assert r2 - r1 < 512 * 1024, "RSS grew from %d to %d bytes" % (r1, r2)
    print("test_no_leak: RSS %.1f MB after 1,000 calls, %.1f MB after 10,000"
          % (r1 / 1e6, r2 / 1e6))


print("python_api: libaicm %s" % aicm.version())
if failures:
    print("python_api: %d failed: %s" % (len(failures), ", ".join(failures)))
    sys.exit(1)
