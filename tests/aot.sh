#!/bin/sh
# aot.sh: the AOT walk-through of docs/codegen.md as a test.
#
#   sh tests/aot.sh BUILD
#
# aicm-opt --emit=c -o writes mlp.c and mlp.h for tests/aot/model.aicm;
# cc compiles them with tests/aot/main.c (-pthread: mlp_run's threads);
# the program runs on inputs that numpy draws, and its outputs must equal
# what aicm-run's reference interpreter gives on the same inputs (.npy)
# within 1e-12.  Then tests/aot/fail.aicm, lowered without fuse (a kernel
# an op), linked with tests/aot/fail.c: its first kernel's gather meets an
# index out of range, its second would divide by zero, and bad_run must
# stop at the first with -2.  Fails on any step; a few seconds.
set -eu
B=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
PY=/usr/bin/python3
CC=${CC:-cc}

"$B/aicm-opt" --pass=shape-infer,fuse,lower-tiled --emit=c -o "$T/mlp.c" "$top/tests/aot/model.aicm"
test -s "$T/mlp.h" || { echo "aot: no mlp.h beside mlp.c" >&2; exit 1; }
$CC -std=c99 -O2 -Wall -Werror -pthread -I"$T" -o "$T/main" "$top/tests/aot/main.c" "$T/mlp.c" -lm
$PY - "$T" <<'PYEOF'
import sys, numpy as np
d = sys.argv[1]
r = np.random.default_rng(18)
for name, shape in (("x", (8, 16)), ("W", (16, 32)), ("b", (32,))):
    v = r.standard_normal(shape)
    np.save(f"{d}/{name}.npy", v)
    v.astype("<f8").tofile(f"{d}/{name}.bin")
PYEOF
"$T/main" "$T"
"$B/aicm-run" --engine=reference -q --input "x=@$T/x.npy" --input "W=@$T/W.npy" \
    --input "b=@$T/b.npy" --output-dir "$T/ref" "$top/tests/aot/model.aicm"
$PY - "$T" <<'PYEOF'
import sys, numpy as np
d = sys.argv[1]
bad = 0
for name, shape in (("y", (8, 32)), ("p", (8, 32))):
    got = np.fromfile(f"{d}/{name}.bin", dtype="<f8").reshape(shape)
    want = np.load(f"{d}/ref/{name}.npy")
    err = float(np.max(np.abs(got - want)))
    ok = np.allclose(got, want, rtol=1e-12, atol=1e-12)
    print(f"aot: {name}: max abs err {err:.3g} against the reference: {'PASS' if ok else 'FAIL'}")
    bad += not ok
sys.exit(1 if bad else 0)
PYEOF

"$B/aicm-opt" --pass=shape-infer,lower-tiled --emit=c -o "$T/bad.c" "$top/tests/aot/fail.aicm"
$CC -std=c99 -O2 -Wall -Werror -pthread -I"$T" -o "$T/fail" "$top/tests/aot/fail.c" "$T/bad.c" -lm
got=$("$T/fail")
if [ "$got" != "bad_run: -2" ]; then
	echo "aot: bad_run gave '$got', expected 'bad_run: -2' (the first failing kernel's error, a gather's)" >&2
	exit 1
fi
echo "aot: bad_run stops at its first failing kernel: -2: PASS"
