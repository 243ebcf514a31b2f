# aicm: build, test, install.
#
# Everything but the tools' main()s goes into $(B)/libaicm-internal.a,
# linked by the tools and by the Check binary.  The public libraries
# (DESIGN section 14), $(B)/libaicm.a and $(B)/libaicm.so, are the core
# layers (src/ir, grammar, passes, src/runtime; not src/import, which needs
# protobuf-c) and src/api, whose header src/api/aicm.h is the only one
# installed; the .so is built from -fPIC objects in $(B)/pic/ with only the
# aicm_* functions of aicm.h exported.  Generated parser and scanner sources go to
# $(B)/grammar, never into git.  SANITIZE=1 builds with ASan+UBSan into
# build-san/, so that both builds can live side by side.

.SUFFIXES:
# Keep the tools' objects: they are intermediate to the pattern rule.
.SECONDARY:

PREFIX = /usr/local
BINDIR = $(PREFIX)/bin
MANDIR = $(PREFIX)/share/man/man1
# make install also puts the examples that the man pages run, the docs and
# the editor files under share/ (issue 21 item 11)
EXAMPLEDIR = $(PREFIX)/share/aicm/examples
EDITORDIR = $(PREFIX)/share/aicm/editors
DOCDIR = $(PREFIX)/share/doc/aicm

CC = cc
BISON = bison
FLEX = flex
PKG_CONFIG = pkg-config

CFLAGS = -std=c11 -g -O2 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wwrite-strings -Wundef
LDFLAGS =
LDLIBS = -lm -lpthread -lprotobuf-c -ldl

ifeq ($(WERROR),1)
CFLAGS += -Werror
endif

# FUZZ=1 (set by 'make fuzz-bins' for its inner make): clang's libFuzzer with
# ASan+UBSan, AICM_BUG aborting so the fuzzer sees it.
ifeq ($(FUZZ),1)
B = build-fuzz
CC = clang
FUZZFLAGS = -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined -DAICM_FUZZ
CFLAGS += $(FUZZFLAGS)
LDFLAGS += -fsanitize=address,undefined
else ifeq ($(SANITIZE),1)
B = build-san
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
CFLAGS += $(SANFLAGS)
LDFLAGS += $(SANFLAGS)
# python loads the ASan build of libaicm.so only with ASan's runtime first
# in the process; python itself keeps memory to its exit, so leaks are
# checked by the C tests and memcheck, not in a python process.
PYENV = env LD_PRELOAD=$$($(CC) -print-file-name=libasan.so) \
	ASAN_OPTIONS=$${ASAN_OPTIONS:+$$ASAN_OPTIONS:}detect_leaks=0:halt_on_error=1
else
B = build
endif

CPPFLAGS = -Isrc/ir -Isrc/runtime -Isrc/import -Isrc/codegen -Isrc/api -Isrc/report -Igrammar -I$(B)/grammar -I$(B)/import \
	-D_POSIX_C_SOURCE=200809L

# aicm-import's protobuf reader is generated from Debian's onnx.proto
# (libonnx-dev) by protoc-c at build time; no ONNX file is kept here.
ONNX_PROTO = /usr/include/onnx/onnx.proto
PROTOC_C = protoc-c

LIB_SRC = $(wildcard src/ir/*.c) $(wildcard passes/*.c) $(wildcard src/runtime/*.c) \
	$(wildcard src/import/*.c) $(wildcard src/report/*.c) $(wildcard src/codegen/*.c) $(wildcard src/api/native*.c)
LIB_OBJ = $(LIB_SRC:%.c=$(B)/%.o) $(B)/grammar/parser.o $(B)/grammar/lexer.o \
	$(B)/import/onnx.pb-c.o
# The tools are src/tools/aicm-*.c; the other files there (the measuring
# callback) are the tools' own layer, linked into both, never into libaicm.a.
TOOL_MAINS = $(wildcard src/tools/aicm-*.c)
TOOL_OBJ = $(patsubst %.c,$(B)/%.o,$(filter-out $(TOOL_MAINS),$(wildcard src/tools/*.c)))
TOOLS = $(patsubst src/tools/%.c,$(B)/%,$(TOOL_MAINS))

# The public libraries: version from aicm.h, soname libaicm.so.MAJOR.
API_H = src/api/aicm.h
API_VERSION := $(shell sed -n 's/^\#define AICM_VERSION_[A-Z]* \([0-9]*\)$$/\1/p' $(API_H) | paste -sd.)
API_MAJOR := $(firstword $(subst ., ,$(API_VERSION)))
API_SRC = $(wildcard src/api/*.c)
API_OBJ = $(API_SRC:%.c=$(B)/%.o)
CORE_SRC = $(wildcard src/ir/*.c) $(wildcard passes/*.c) $(wildcard src/runtime/*.c) $(wildcard src/codegen/*.c)
PUB_OBJ = $(CORE_SRC:%.c=$(B)/%.o) $(B)/grammar/parser.o $(B)/grammar/lexer.o $(API_OBJ)
PIC_OBJ = $(patsubst %.c,$(B)/pic/%.o,$(CORE_SRC) $(API_SRC)) $(B)/pic/grammar/parser.o \
	$(B)/pic/grammar/lexer.o
PUB_LIBS = -lm -lpthread -ldl
SONAME = libaicm.so.$(API_MAJOR)
LIBDIR = $(PREFIX)/lib
INCLUDEDIR = $(PREFIX)/include
# Debian's python3 looks in dist-packages under /usr and /usr/local
PYTHONDIR = $(PREFIX)/lib/python3/dist-packages
PY_SRC = $(wildcard python/aicm/*.py)
PUBLIC = $(B)/libaicm.a $(B)/libaicm.so $(B)/pkgconfig/aicm.pc

CHECK_SRC = $(wildcard tests/check_*.c)
CHECK_OBJ = $(CHECK_SRC:%.c=$(B)/%.o)

all: $(TOOLS) $(PUBLIC)

# A fresh machine may lack the generators and Check: install them when we
# are root, otherwise say exactly what to run.
DEPS_STAMP = $(B)/.deps-ok
$(DEPS_STAMP):
	@mkdir -p $(B)
	@sh scripts/ensure-deps.sh
	@touch $@

$(B)/grammar/parser.c $(B)/grammar/parser.h &: grammar/parser.y $(DEPS_STAMP)
	@mkdir -p $(B)/grammar
	$(BISON) -Wall -Werror --header=$(B)/grammar/parser.h -o $(B)/grammar/parser.c grammar/parser.y

$(B)/grammar/lexer.c $(B)/grammar/lexer.h &: grammar/lexer.l $(DEPS_STAMP)
	@mkdir -p $(B)/grammar
	$(FLEX) --header-file=$(B)/grammar/lexer.h -o $(B)/grammar/lexer.c grammar/lexer.l

$(B)/import/onnx.pb-c.c $(B)/import/onnx.pb-c.h &: $(ONNX_PROTO) $(DEPS_STAMP)
	@mkdir -p $(B)/import
	$(PROTOC_C) --proto_path=$(dir $(ONNX_PROTO)) --c_out=$(B)/import $(ONNX_PROTO)

# Generated code is not ours to keep warning-free.
GEN_CFLAGS = -Wno-unused-function -Wno-missing-prototypes -Wno-sign-compare -Wno-unused-parameter

$(B)/grammar/parser.o: $(B)/grammar/parser.c $(B)/grammar/parser.h $(B)/grammar/lexer.h
	$(CC) $(CPPFLAGS) $(CFLAGS) $(GEN_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/grammar/lexer.o: $(B)/grammar/lexer.c $(B)/grammar/parser.h
	$(CC) $(CPPFLAGS) $(CFLAGS) $(GEN_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/import/onnx.pb-c.o: $(B)/import/onnx.pb-c.c $(B)/import/onnx.pb-c.h
	$(CC) $(CPPFLAGS) $(CFLAGS) $(GEN_CFLAGS) -MMD -MP -c -o $@ $<

# Whatever includes import.h needs the generated header first.
$(patsubst %.c,$(B)/%.o,$(wildcard src/import/*.c)) $(B)/src/tools/aicm-import.o $(CHECK_OBJ): \
	$(B)/import/onnx.pb-c.h

$(B)/%.o: %.c $(B)/grammar/parser.h $(B)/grammar/lexer.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/tests/%.o: tests/%.c $(B)/grammar/parser.h $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests -Isrc/api $(CFLAGS) $$($(PKG_CONFIG) --cflags check) -MMD -MP -c -o $@ $<

$(B)/libaicm-internal.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $(LIB_OBJ)

$(B)/aicm-%: $(B)/src/tools/aicm-%.o $(TOOL_OBJ) $(B)/libaicm-internal.a
	$(CC) $(LDFLAGS) -o $@ $< $(TOOL_OBJ) $(B)/libaicm-internal.a $(LDLIBS)

$(B)/check_aicm: $(CHECK_OBJ) $(API_OBJ) $(B)/libaicm-internal.a
	$(CC) $(LDFLAGS) -o $@ $(CHECK_OBJ) $(API_OBJ) $(B)/libaicm-internal.a $$($(PKG_CONFIG) --libs check) $(LDLIBS)

# The public static library.
$(B)/libaicm.a: $(PUB_OBJ)
	rm -f $@
	ar rcs $@ $(PUB_OBJ)

# The shared one: position-independent objects, internals hidden.
PIC_CFLAGS = -fPIC -fvisibility=hidden

$(B)/pic/%.o: %.c $(B)/grammar/parser.h $(B)/grammar/lexer.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PIC_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/pic/grammar/parser.o: $(B)/grammar/parser.c $(B)/grammar/parser.h $(B)/grammar/lexer.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(GEN_CFLAGS) $(PIC_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/pic/grammar/lexer.o: $(B)/grammar/lexer.c $(B)/grammar/parser.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(GEN_CFLAGS) $(PIC_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/$(SONAME): $(PIC_OBJ)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined -o $@ $(PIC_OBJ) $(PUB_LIBS)

$(B)/libaicm.so: $(B)/$(SONAME)
	ln -sf $(SONAME) $@

# aicm.pc for the build tree (make check builds examples/api_demo.c with
# it); make install writes the installed one from the same template.
$(B)/pkgconfig/aicm.pc: aicm.pc.in $(API_H)
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(CURDIR)|' -e 's|@LIBDIR@|$(CURDIR)/$(B)|' \
		-e 's|@INCLUDEDIR@|$(CURDIR)/src/api|' -e 's|@VERSION@|$(API_VERSION)|' \
		-e 's|@LIBS@|$(PUB_LIBS)|' aicm.pc.in >$@

# The README's first command: build, then run the seed's six scenarios
# (DESIGN §10) with the real tools; PASS/FAIL per scenario, exit 1 on a FAIL.
demo: $(TOOLS)
	@sh scripts/demo.sh $(B)

check: check-layers check-unit check-api check-golden check-numpy check-models check-docs check-random check-scaling \
	check-triton check-native check-browser

# DESIGN section 12's layers: no lower layer includes a higher one.
check-layers:
	sh tests/layers.sh

# libaicm from outside (DESIGN section 14): examples/api_demo.c built with
# pkg-config against the build tree's aicm.pc and run, its output compared
# with examples/api_demo.out; then the Python package over the .so
# (tests/python_api.py, with /usr/bin/python3 and numpy; under SANITIZE=1
# with ASan's runtime preloaded, PYENV).
$(B)/api_demo: examples/api_demo.c $(B)/libaicm.so $(B)/pkgconfig/aicm.pc
	$(CC) $(CFLAGS) $$(PKG_CONFIG_PATH=$(B)/pkgconfig $(PKG_CONFIG) --cflags aicm) -o $@ $< \
		$(LDFLAGS) -Wl,-rpath,$(CURDIR)/$(B) $$(PKG_CONFIG_PATH=$(B)/pkgconfig $(PKG_CONFIG) --libs aicm)

check-api: $(B)/api_demo $(TOOLS)
	$(B)/api_demo testdata/demo/mlp.aicm >$(B)/api_demo.out
	diff -u examples/api_demo.out $(B)/api_demo.out
	@if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then \
		AICM_LIB=$(CURDIR)/$(B)/libaicm.so PYTHONPATH=python $(PYENV) /usr/bin/python3 tests/python_api.py $(B); \
	else \
		echo "check-api: tests/python_api.py SKIPPED: python3-numpy is not installed"; \
	fi

.PHONY: check-api

# Check's default 4 s per test is too tight on a loaded 2-core machine
# (the sanitizer build is several times slower still); a hang still ends.
check-unit: $(B)/check_aicm
	CK_DEFAULT_TIMEOUT=$${CK_DEFAULT_TIMEOUT:-120} $(B)/check_aicm

check-golden: $(TOOLS)
	sh tests/golden.sh $(B)
	sh tests/dotrender.sh $(B)
	@# The cases that execute tiled programs, again on the other SIMD paths
	@# that this CPU has (forcing one it lacks would add a note on stderr).
	isas=portable; grep -qw avx2 /proc/cpuinfo 2>/dev/null && isas="avx2 portable"; \
	for isa in $$isas; do \
		AICM_ISA=$$isa sh tests/golden.sh $(B) testdata/run testdata/tiled testdata/demo || exit 1; \
	done

# The reference interpreter against numpy itself (tests/numpy_check.py).
check-numpy: $(B)/aicm-run
	@if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then \
		/usr/bin/python3 tests/numpy_check.py $(B); \
	else \
		echo "check-numpy: SKIPPED: python3-numpy is not installed"; \
	fi

# aicm.trace (python/aicm/trace.py): every op traced and compiled against
# numpy, the seed's text, names, errors (tests/python_trace.py, a few seconds).
check: check-python-trace check-calibrate
# bench/calibrate.py's fit and --write on the model's own scores (make
# calibrate's machinery, without a clock; a few seconds)
check-calibrate: $(TOOLS)
	sh tests/calibrate.sh $(B)
.PHONY: check-calibrate
.PHONY: check-python-trace
check-python-trace: $(TOOLS) $(B)/libaicm.so
	@if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then \
		AICM_LIB=$(B)/libaicm.so PYTHONPATH=python $(PYENV) /usr/bin/python3 tests/python_trace.py $(B); \
	else \
		echo "check-python-trace: SKIPPED: python3-numpy is not installed"; \
	fi

# aicm-opt --emit=triton's goldens: they compile, use Triton's API only, and
# run on a numpy model of triton.language equal to the reference
# (tests/triton_check.py; Triton itself is not needed).
check-triton: $(TOOLS)
	@if /usr/bin/python3 -c 'import numpy, torch' 2>/dev/null; then \
		/usr/bin/python3 tests/triton_check.py $(B); \
	else \
		echo "check-triton: SKIPPED: python3-numpy or python3-torch is not installed"; \
	fi

.PHONY: check-triton

# The commands shown in the README's tour, the tutorial and the exercises,
# run again and diffed against the output the docs show
# (tests/doccheck.sh), every option of --help in the man pages
# (tests/mancheck.sh), and the man pages' EXAMPLES run from a scratch
# install (tests/installcheck.sh); update-docs rewrites the docs' outputs:
# review 'git diff docs/ README.md'.
DOCS_CHECKED = README.md docs/tutorial.md docs/exercises.md docs/run.md docs/api.md docs/codegen.md
# docs/python.md (and the tutorial's Python path) run /usr/bin/python3 with
# numpy over build/libaicm.so
DOCS_CHECKED += docs/python.md
check-docs update-docs: $(B)/libaicm.so

check-docs: $(TOOLS) $(B)/api_demo
	$(PYENV) sh tests/doccheck.sh $(B) $(DOCS_CHECKED)
	@# docs/import.md's worked example imports the transformer layer that
	@# check-models exports (it needs python3-torch)
	@if [ -f $(B)/models/transformer.onnx ]; then \
		sh tests/doccheck.sh $(B) docs/import.md; \
	else \
		echo "check-docs: docs/import.md SKIPPED: no exported models in $(B)/models (make check-models)"; \
	fi
	sh tests/mancheck.sh $(B)
	sh tests/installcheck.sh $(B)
	sh tests/opnames.sh

update-docs: $(TOOLS) $(B)/api_demo
	sh tests/doccheck.sh --update $(B) $(DOCS_CHECKED)
	@if [ -f $(B)/models/transformer.onnx ]; then sh tests/doccheck.sh --update $(B) docs/import.md; fi

.PHONY: check-docs update-docs

# Differential test: 200 random graphs x f64/f32 through the whole pipeline,
# without fuse and on 3 threads, each against the reference (--check).
check-random: $(TOOLS)
	/usr/bin/python3 tests/gen_random_graphs.py check $(B) -n $(or $(RANDOM_N),200)

.PHONY: check-random

# The native engine (issue 18): the AOT walk-through of docs/codegen.md
# (generate, compile, link, run, compare with the reference), its cache
# (corrupt .so and .sum recompiled, no compiler exit 2), and the random
# graphs through it against the reference, cached under $(B)/native-cache.
check-native: $(TOOLS)
	sh tests/aot.sh $(B)
	sh tests/native.sh $(B)
	/usr/bin/python3 tests/gen_random_graphs.py check $(B) -n $(or $(NATIVE_N),16) --native

.PHONY: check-native

# The HTML report opened in headless Chromium (issue 22, tests/browser.sh):
# the DOM of two pages checked, a screenshot taken, no request leaving
# them; installs Debian's chromium as root, else says "skipped" (seconds).
check-browser: $(TOOLS)
	sh tests/browser.sh $(B)

# docs/img/report-*.png, the tutorial's pictures of the report, taken by
# the browser test so that they show the page as it is.
screenshots: $(TOOLS)
	sh tests/browser.sh $(B) --update-screenshots

.PHONY: check-browser screenshots

# Time linear in the length of a fused chain (issue 14): 10k, 20k and 40k
# ops through aicm-opt and aicm-run, CPU time at 40k at most 5x that at
# 10k (tests/scaling.py; about 10 s).
check-scaling: $(TOOLS)
	/usr/bin/python3 tests/scaling.py $(B)

.PHONY: check-scaling

# Real PyTorch models end to end (issue 17): exported with python3-torch
# (cached in $(B)/models/), imported, run through the whole pipeline against
# torch's output (tests/models.sh); skipped with a message without torch.
check-models: $(TOOLS)
	sh tests/models.sh $(B)

.PHONY: check-models

# ONNX's backend tests (Debian's libonnx-testdata) through aicm-import and
# aicm-run's full pipeline, compared with ONNX's rule (tests/conformance.py,
# docs/conformance.md); CONFORMANCE_FLAGS passes -k, -j, --list-unsupported.
conformance: $(TOOLS)
	sh scripts/ensure-conformance-deps.sh
	/usr/bin/python3 tests/conformance.py $(B) --self-test
	/usr/bin/python3 tests/conformance.py $(B) $(CONFORMANCE_FLAGS)

.PHONY: conformance

# Rewrites the expected outputs from what the tools print now; review
# 'git diff testdata/' before committing.  T=path limits it to some cases.
update-golden: $(TOOLS)
	sh tests/golden.sh --update $(B) $(T)

# aicm-run against numpy on the workloads of docs/perf.md, side by side
# (bench/run.sh; REPS, WORKLOADS, DTYPES, THREADS in the environment); then
# conv2d, the real models and the transformer blocks (LayerNorm, RMSNorm,
# attention, the encoder layer: bench/blocks.sh) against PyTorch; autotune's
# picks against a timed sweep (bench/sweep.sh); the native engine's targets
# of issue 18 (bench/native.sh).
bench: $(TOOLS)
	sh bench/run.sh $(B)
	sh bench/conv.sh $(B)
	sh bench/models.sh $(B)
	sh bench/blocks.sh $(B)
	sh bench/sweep.sh $(B)
	sh bench/native.sh $(B)
.PHONY: bench

# The cpu targets refitted (issue 18 item 6; docs/passes.md "Calibration"):
# cpu-tile on the tile engine, cpu on the native engine.  Each run's timings
# are kept in bench/cal/TARGET-DATE.times.log (commit them with the row),
# and the row written into passes/cost.c is the fit of that log, named in
# the row's comment, so that tests/calibrate.sh can fit it again; the
# fits' reports stay in $(B)/cal/.  Then: make, make update-golden
# T=testdata/autotune (read the diff), and TARGETS="cpu-tile cpu" sh
# bench/sweep.sh for the picks against a sweep.
calibrate: $(TOOLS)
	mkdir -p $(B)/cal bench/cal
	for t in cpu-tile cpu; do \
	    /usr/bin/python3 bench/calibrate.py fit --target=$$t --build=$(B) \
	        >$(B)/cal/$$t.fit 2>$(B)/cal/$$t.times.log || { tail -5 $(B)/cal/$$t.times.log; exit 1; }; \
	    log=bench/cal/$$t-$$(sed -n '1s/^# timed at \([0-9-]*\) \([0-9]*\):\([0-9]*\) UTC.*/\1-\2\3/p' \
	        $(B)/cal/$$t.times.log).times.log; \
	    grep -E '^(  .* ms|# .*)$$' $(B)/cal/$$t.times.log >$$log || exit 1; \
	    /usr/bin/python3 bench/calibrate.py fit --target=$$t --build=$(B) --times=$$log \
	        --write=passes/cost.c >$(B)/cal/$$t.fit 2>$(B)/cal/$$t.refit.log || exit 1; \
	    cat $(B)/cal/$$t.fit; \
	done
.PHONY: calibrate
check-valgrind: $(TOOLS) $(B)/check_aicm
	AICM_CHECK_SHARD=0/2 CK_FORK=no valgrind -q --leak-check=full --error-exitcode=1 $(B)/check_aicm & \
	AICM_CHECK_SHARD=1/2 CK_FORK=no valgrind -q --leak-check=full --error-exitcode=1 $(B)/check_aicm; \
	b=$$?; wait $$! || exit 1; exit $$b
	AICM_VALGRIND=1 sh tests/golden.sh $(B)

# libFuzzer harnesses (tests/fuzz/README.md): build-fuzz/fuzz_*.  'make fuzz'
# builds them and runs each for FUZZ_SECONDS (60) at the lowest priority,
# one at a time, on a corpus kept in build-fuzz/corpus/ and seeded from
# tests/fuzz/seeds/ and testdata/; 'make fuzz-bins' only builds them.
FUZZERS = $(patsubst tests/fuzz/%.c,build-fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SECONDS = 60

fuzz: fuzz-bins
	sh tests/fuzz/run.sh $(FUZZ_SECONDS)

# The harnesses need the FUZZ=1 build of the library: a plain 'make
# fuzz-bins' hands itself to that build.
ifeq ($(FUZZ),1)
fuzz-bins: $(FUZZERS)
else
fuzz-bins:
	$(MAKE) FUZZ=1 fuzz-bins
endif

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c build-fuzz/libaicm-internal.a $(wildcard tests/fuzz/*.h)
	$(CC) $(CPPFLAGS) -Itests/fuzz $(CFLAGS) -fsanitize=fuzzer -o $@ $< build-fuzz/libaicm-internal.a $(LDLIBS)

check-long: fuzz

# The examples: the seed's demo graphs and the small ONNX model with its
# input and torch's output (the man pages' EXAMPLES use them).  The man
# pages name /usr/local/share/...: installed, they name $(PREFIX)'s.
EXAMPLES = testdata/demo/mlp.aicm testdata/demo/gemm100.aicm testdata/demo/gemm256.aicm \
	testdata/demo/relu-sum.aicm testdata/models/mlp.onnx testdata/models/mlp.in.npy \
	testdata/models/mlp.out.npy
DOCFILES = README.md docs/api.md docs/ir.md docs/passes.md docs/tiled.md docs/run.md \
	docs/perf.md docs/tutorial.md docs/mapping.md docs/exercises.md docs/reliability.md \
	docs/conformance.md docs/import.md
MANPAGES = docs/aicm-opt.1 docs/aicm-run.1 docs/aicm-import.1

install: $(TOOLS) $(PUBLIC)
	mkdir -p $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PYTHONDIR)/aicm
	install -m644 $(B)/libaicm.a $(DESTDIR)$(LIBDIR)
	install -m755 $(B)/$(SONAME) $(DESTDIR)$(LIBDIR)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libaicm.so
	install -m644 $(API_H) $(DESTDIR)$(INCLUDEDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$${prefix}/lib|' \
		-e 's|@INCLUDEDIR@|$${prefix}/include|' -e 's|@VERSION@|$(API_VERSION)|' \
		-e 's|@LIBS@|$(PUB_LIBS)|' aicm.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/aicm.pc
	install -m644 $(PY_SRC) $(DESTDIR)$(PYTHONDIR)/aicm
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR) $(DESTDIR)$(EXAMPLEDIR) \
		$(DESTDIR)$(DOCDIR)/img $(DESTDIR)$(EDITORDIR)/vim/syntax \
		$(DESTDIR)$(EDITORDIR)/vim/ftdetect $(DESTDIR)$(EDITORDIR)/vscode/syntaxes
	install -m755 $(TOOLS) $(DESTDIR)$(BINDIR)
	for m in $(MANPAGES); do \
		sed 's|/usr/local/share/|$(PREFIX)/share/|g' $$m >$(DESTDIR)$(MANDIR)/$${m#docs/} && \
		chmod 644 $(DESTDIR)$(MANDIR)/$${m#docs/} || exit 1; \
	done
	install -m644 $(EXAMPLES) examples/api_demo.c $(DESTDIR)$(EXAMPLEDIR)
	install -m644 $(DOCFILES) $(DESTDIR)$(DOCDIR)
	install -m644 docs/img/* $(DESTDIR)$(DOCDIR)/img
	install -m644 docs/editors/README.md $(DESTDIR)$(EDITORDIR)
	install -m644 docs/editors/vim/syntax/aicm.vim $(DESTDIR)$(EDITORDIR)/vim/syntax
	install -m644 docs/editors/vim/ftdetect/aicm.vim $(DESTDIR)$(EDITORDIR)/vim/ftdetect
	install -m644 docs/editors/vscode/package.json docs/editors/vscode/language-configuration.json \
		$(DESTDIR)$(EDITORDIR)/vscode
	install -m644 docs/editors/vscode/syntaxes/aicm.tmLanguage.json \
		$(DESTDIR)$(EDITORDIR)/vscode/syntaxes

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/aicm-opt $(DESTDIR)$(BINDIR)/aicm-run $(DESTDIR)$(BINDIR)/aicm-import
	rm -f $(DESTDIR)$(MANDIR)/aicm-opt.1 $(DESTDIR)$(MANDIR)/aicm-run.1 $(DESTDIR)$(MANDIR)/aicm-import.1
	rm -rf $(DESTDIR)$(PREFIX)/share/aicm $(DESTDIR)$(DOCDIR)
	rm -f $(DESTDIR)$(LIBDIR)/libaicm.a $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libaicm.so
	rm -f $(DESTDIR)$(INCLUDEDIR)/aicm.h $(DESTDIR)$(LIBDIR)/pkgconfig/aicm.pc
	rm -rf $(DESTDIR)$(PYTHONDIR)/aicm

# make install into a scratch PREFIX and a scratch DESTDIR, the files
# checked, and the man pages' EXAMPLES run from the installed paths
# (tests/installcheck.sh).
check-install: $(TOOLS)
	sh tests/installcheck.sh $(B)

# The targets a user runs, with one line each.
help:
	@echo 'make [all]          build $(B)/aicm-opt, aicm-run, aicm-import, libaicm.a, libaicm.so and aicm.pc'
	@echo 'make demo           the seed'"'"'s six scenarios, each with PASS or FAIL'
	@echo 'make check          unit, golden, docs (with install) and random-graph tests (SANITIZE=1: ASan+UBSan)'
	@echo 'make check-docs     the docs'"'"' and README'"'"'s transcripts, the man pages'"'"' options and examples'
	@echo 'make check-install  install into scratch folders and run the man pages'"'"' examples there'
	@echo 'make check-api      libaicm'"'"'s example program (examples/api_demo.c) and the Python package'"'"'s tests'
	@echo 'make check-valgrind the goldens and unit tests under memcheck'
	@echo 'make update-golden [T=path]  rewrite expected outputs (read the diff)'
	@echo 'make update-docs    rewrite the docs'"'"' transcripts (read the diff)'
	@echo 'make bench          W1-W5 against numpy, autotune against a sweep (docs/perf.md)'
	@echo 'make calibrate      refit the cpu and cpu-tile targets on their engines (passes/cost.c)'
	@echo 'make conformance    ONNX'"'"'s backend tests through aicm-import'
	@echo 'make fuzz           the libFuzzer harnesses (clang)'
	@echo 'make install [PREFIX=/usr/local] [DESTDIR=]   tools, man pages, examples, docs, editor files,'
	@echo '                     libaicm (lib/, include/aicm.h, lib/pkgconfig/aicm.pc) and the Python package'
	@echo 'make uninstall      remove what install put there'
	@echo 'make clean          remove build/, build-san/, build-fuzz/'

# Also the temporary files that only a SIGKILL during a write can leave
# (src/ir/io.c: .NAME.aicm-tmp.XXXXXX beside the file being written), in
# this tree; docs/reliability.md says where else one can be.
clean:
	rm -rf build build-san build-fuzz
	find . -name .git -prune -o -type f -name '.*.aicm-tmp.??????' -exec rm -f {} +

.PHONY: all demo check check-layers check-unit check-golden check-numpy update-golden check-valgrind install uninstall clean \
	fuzz fuzz-bins check-long check-install help

-include $(shell find $(B) -name '*.d' 2>/dev/null)
