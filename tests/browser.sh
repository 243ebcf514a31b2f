#!/bin/sh
# browser.sh: the HTML report opened in a real browser (DESIGN section 15).
#
#   sh tests/browser.sh [BUILD_DIR] [--update-screenshots]
#
# A report is only as good as what a reader's browser makes of it, so the
# page is opened in headless Chromium (Debian's chromium), which dumps the
# DOM it built and takes a screenshot, and the DOM is checked by
# tests/report_check.py: every section, every IR panel, every kernel with
# its heat map and tile grid, the graph, the run data.  Two pages: the
# seed's mlp (testdata/demo/mlp.aicm) through the whole pipeline, run by
# aicm-run so that the run data are there, and a generated chain of 50
# matmul+relu layers of varying widths (50 kernels, ragged tiles).
#
# No request may leave the page.  Chromium writes its network log
# (--log-net-log); a request the page made is one whose initiator is a
# document (Chromium's own background requests, which it makes despite
# --disable-background-networking, have initiator "not an origin"), and
# any such request for a URL other than file: or data: fails the test.
# The detector is itself checked on every run: a canary page that loads
# an image from http://example.invalid must be caught, else the test
# fails, so a Chromium whose log changed shape cannot pass silently.
# (--host-resolver-rules keeps even the canary off any real network.)
#
# Chromium is installed with apt-get when it is missing and we are root;
# when it cannot be, the test says "browser test: skipped: ..." and exits
# 0, and `make check` shows that line.  Each Chromium run takes about a
# second; the whole test a few seconds.
#
# --update-screenshots also writes docs/img/report-*.png: the two pages
# and one page per scenario of the tutorial (docs/tutorial.md), each
# scrolled to the section that scenario is about, so that the docs'
# pictures come from this test and stay current.
#
# Exit status: 0 passed or skipped, 1 a check failed, 2 bad usage.
update=0
build=build
for a in "$@"; do
	case $a in
	--update-screenshots) update=1 ;;
	-*) echo "usage: sh tests/browser.sh [BUILD_DIR] [--update-screenshots]" >&2; exit 2 ;;
	*) build=$a ;;
	esac
done
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
bin=$(cd "$build" 2>/dev/null && pwd) || { echo "browser test: no build folder '$build'" >&2; exit 2; }
py=/usr/bin/python3

skip() {
	echo "browser test: skipped: $1"
	exit 0
}

# Chromium: Debian's package, installed when missing and possible.
if ! command -v chromium >/dev/null 2>&1; then
	if ! command -v apt-get >/dev/null 2>&1; then
		skip "chromium not available (not installed, and no apt-get to install it with)"
	fi
	if [ "$(id -u)" != 0 ]; then
		skip "chromium not available (not installed; as root: apt-get install chromium)"
	fi
	echo "browser test: installing chromium (apt-get install chromium)"
	# the package lists may be missing or old on a fresh machine
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 &&
	    ! { apt-get update -q >/dev/null 2>&1 &&
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1; }; then
		skip "chromium not available (apt-get install chromium failed; no network?)"
	fi
	command -v chromium >/dev/null 2>&1 || skip "chromium not available (installed, but not on PATH)"
fi
[ -x "$py" ] || skip "no /usr/bin/python3 to read the DOM with"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aicm-browser.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
fail() {
	echo "browser test: FAIL: $1"
	fails=$((fails + 1))
}

# browse NAME URL WIDTHxHEIGHT: opens URL in headless Chromium, a fresh
# profile each time; $tmp/NAME.dom (the DOM), NAME.png, NAME.net (the
# network log), NAME.log (what Chromium said).
browse() {
	prof=$(mktemp -d "$tmp/profile.XXXXXX")
	timeout 60 chromium --headless --no-sandbox --disable-gpu \
		--disable-background-networking --disable-component-update --no-first-run \
		--user-data-dir="$prof" --host-resolver-rules='MAP * ~NOTFOUND' \
		--hide-scrollbars --window-size="$3" --screenshot="$tmp/$1.png" \
		--log-net-log="$tmp/$1.net" --dump-dom "$2" >"$tmp/$1.dom" 2>"$tmp/$1.log"
	rc=$?
	rm -rf "$prof"
	if [ $rc != 0 ] || [ ! -s "$tmp/$1.dom" ] || [ ! -s "$tmp/$1.png" ]; then
		fail "$1: chromium exited with $rc and wrote no DOM or screenshot; it said:"
		tail -5 "$tmp/$1.log"
		return 1
	fi
	return 0
}

# requests NAME: the URLs that page NAME asked for other than file:
# and data:, one a line (nothing when it asked for none).
requests() {
	"$py" - "$tmp/$1.net" <<'EOF'
import json, sys
try:
    log = json.load(open(sys.argv[1]))
except ValueError:
    # a log cut short (Chromium ends it at exit): close its event list
    text = open(sys.argv[1]).read().rstrip().rstrip(",")
    log = json.loads(text + "]}")
start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
seen = set()
for e in log["events"]:
    p = e.get("params") or {}
    if e["type"] != start or "url" not in p:
        continue
    if p.get("initiator", "not an origin") == "not an origin":
        continue            # Chromium's own, not the page's
    if p["url"].split(":", 1)[0] in ("file", "data") or p["url"] in seen:
        continue
    seen.add(p["url"])
    print(p["url"])
EOF
}

# screenshot NAME WIDTH: a PNG of that width that is not one flat colour.
screenshot_ok() {
	"$py" - "$tmp/$1.png" "$2" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("not a PNG")
w, h = struct.unpack(">II", data[16:24])
if w != int(sys.argv[2]):
    sys.exit("%dx%d, expected width %s" % (w, h, sys.argv[2]))
idat, i = b"", 8
while i < len(data):
    n, kind = struct.unpack(">I4s", data[i:i + 8])
    if kind == b"IDAT":
        idat += data[i + 8:i + 8 + n]
    i += 12 + n
raw = zlib.decompress(idat)
if len(set(raw[j] for j in range(0, len(raw), 7))) < 16:
    sys.exit("a blank picture")
EOF
}

# The detector first: a page that does make a request must be caught.
cat >"$tmp/canary.html" <<'EOF'
<!DOCTYPE html><html><body><p>canary</p><img src="http://example.invalid/canary.png"></body></html>
EOF
if browse canary "file://$tmp/canary.html" 400,300; then
	case $(requests canary) in
	*example.invalid/canary.png*) ;;
	*) fail "the request detector missed the canary page's http://example.invalid request" ;;
	esac
fi

# The pages.  50 layers of widths 16, 32, 48, 64, ... so that some tiles
# are ragged.
gen50() {
	awk 'BEGIN {
		print "// 50 layers: h = relu(h @ W), widths cycling 16..64 (tests/browser.sh)"
		print "graph {"
		print "  %h0 = input() : (64, 32)"
		d0 = 32
		for (i = 1; i <= 50; i++) {
			d = 16 * (1 + i % 4)
			printf "  %%W%d = const() : (%d, %d)\n", i, d0, d
			printf "  %%m%d = matmul(%%h%d, %%W%d)\n", i, i - 1, i
			printf "  %%h%d = relu(%%m%d)\n", i, i
			d0 = d
		}
		print "}"
	}'
}
gen50 >"$tmp/k50.aicm"
pipe=shape-infer,fuse,autotune,lower-tiled
t0=$(date +%s)
"$bin/aicm-run" --pass=$pipe -q --report=html --report-file="$tmp/mlp.html" \
	testdata/demo/mlp.aicm >/dev/null || fail "aicm-run on mlp.aicm"
"$bin/aicm-run" --pass=$pipe -q --report=html --report-file="$tmp/k50.html" \
	"$tmp/k50.aicm" >/dev/null || fail "aicm-run on the 50-kernel graph"

# check NAME KERNELS: open the page and check its DOM, its requests, its
# screenshot.
check() {
	[ -s "$tmp/$1.html" ] || { fail "$1: no page written"; return; }
	browse "$1" "file://$tmp/$1.html" 1280,1600 || return
	if ! "$py" tests/report_check.py "$tmp/$1.dom" --kernels "$2" --stages 5 --run; then
		fail "$1: the DOM Chromium built lacks the parts above"
	fi
	r=$(requests "$1")
	[ -z "$r" ] || fail "$1: the page made requests: $r"
	why=$(screenshot_ok "$1" 1280 2>&1) || fail "$1: screenshot: $why"
}
check mlp 1
check k50 50
t1=$(date +%s)

if [ $update = 1 ]; then
	# shot NAME PAGE SECTION: docs/img/report-NAME.png, the page from
	# SECTION on, as a reader who clicked it in the contents sees it.
	# (Headless Chromium draws a blank page for a URL with a #fragment,
	# so a copy of the page hides what stands before the section.)
	shot() {
		if [ "$3" = top ]; then
			cp "$2" "$tmp/shot-$1.html"
		else
			sed "s|</style>|header,nav,section{display:none}#$3,#$3 ~ section{display:block}\n</style>|" \
				"$2" >"$tmp/shot-$1.html"
		fi
		browse "shot-$1" "file://$tmp/shot-$1.html" 1280,900 || return
		why=$(screenshot_ok "shot-$1" 1280 2>&1) || { fail "shot-$1: $why"; return; }
		cp "$tmp/shot-$1.png" "docs/img/report-$1.png"
		echo "browser test: wrote docs/img/report-$1.png"
	}
	d=testdata/demo
	"$bin/aicm-opt" --pass=shape-infer --report=html --report-file="$tmp/s1.html" \
		$d/mlp.aicm >/dev/null || fail "scenario 1's page"
	"$bin/aicm-opt" --pass=shape-infer,fuse --report=html --report-file="$tmp/s2.html" \
		$d/mlp.aicm >/dev/null || fail "scenario 2's page"
	"$bin/aicm-opt" --pass=shape-infer,fuse,autotune --report=html \
		--report-file="$tmp/s3.html" $d/gemm256.aicm >/dev/null || fail "scenario 3's page"
	"$bin/aicm-run" -q --pass='shape-infer,lower-tiled{bm=32,bn=32,bk=32}' --report=html \
		--report-file="$tmp/s4.html" $d/gemm100.aicm >/dev/null || fail "scenario 4's page"
	# scenario 5 compares two runs: aicm-opt draws both
	"$bin/aicm-run" -q --pass=shape-infer,lower-tiled --stats-file="$tmp/eager.json" \
		$d/relu-sum.aicm >/dev/null || fail "scenario 5's eager run"
	"$bin/aicm-run" -q --pass=shape-infer,fuse,lower-tiled --stats-file="$tmp/fused.json" \
		$d/relu-sum.aicm >/dev/null || fail "scenario 5's fused run"
	"$bin/aicm-opt" --pass=shape-infer,fuse,lower-tiled --stats-file="$tmp/fused.json" \
		--eager-stats-file="$tmp/eager.json" --report=html --report-file="$tmp/s5.html" \
		$d/relu-sum.aicm >/dev/null || fail "scenario 5's page"
	shot top "$tmp/mlp.html" top
	shot scenario1 "$tmp/s1.html" ir
	shot scenario2 "$tmp/s2.html" graph
	shot scenario3 "$tmp/s3.html" kernels
	shot scenario4 "$tmp/s4.html" kernels
	shot scenario5 "$tmp/s5.html" run
	shot scenario6 "$tmp/mlp.html" kernels
	shot k50 "$tmp/k50.html" toc
fi

if [ $fails != 0 ]; then
	echo "browser test: $fails failure(s)"
	exit 1
fi
echo "browser test: ok: mlp (1 kernel) and 50 kernels opened in $(chromium --version 2>/dev/null | head -1), no request left the pages ($((t1 - t0)) s)"
