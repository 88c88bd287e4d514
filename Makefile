# ropegrad: build the static library (float32, and a float64 build for gradient checks), the tests and examples.
# Dependencies are found with pkg-config; `make deps` installs them on Debian when they are missing.
CC ?= cc
# libxsmm before openblas: the static libxsmm.a refers to BLAS symbols (sgemm_) that OpenBLAS provides.
PKGS := libxsmm openblas hdf5
# Recursive (=) so that pkg-config runs when a recipe needs it, after `deps` has installed the packages.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) cmocka)
PKG_LIBS = $(shell pkg-config --libs $(PKGS)) -lm -lpthread -ldl
CMOCKA_LIBS = $(shell pkg-config --libs cmocka)
# oneDNN (Debian libdnnl-dev 2.x, optional; src/tensor/dnnl.c is its only user, and loads libdnnl.so.2 at run time,
# so nothing links -ldnnl): bf16 products (--precision bf16) and oneDNN's float32 products. Compiled in when dnnl.h
# is found (evaluated once, on first use: after `deps` has run); without it the library is fp32 only and refuses
# bf16 with a message. RG_DNNL=0 builds without.
DNNL_FOUND = $(eval DNNL_FOUND := $(DNNL_PROBE))$(DNNL_FOUND)
DNNL_PROBE = $(if $(filter 0,$(RG_DNNL)),,$(shell printf '\043include <dnnl.h>\n' | $(CC) -fsyntax-only -x c - 2>/dev/null && echo yes))
DNNL_CFLAGS = $(if $(DNNL_FOUND),-DRG_HAVE_DNNL)

WARN := -Wall -Wextra -Wno-unused-parameter
ifeq ($(CI),true)
WERROR ?= 1
endif
ifeq ($(WERROR),1)
WARN += -Werror
endif
OPT ?= -O2
# Never the fast-math flags (nor the "fast" optimization level): they break NaN/inf handling and the gradient checks. -fno-trapping-math only drops
# floating-point exception flags (results are unchanged), which lets GCC vectorize loops with comparisons.
# -fno-math-errno: libm calls never set errno (nothing reads it; values unchanged), which lets GCC vectorize a loop
# with sqrt (AdamW's update: vsqrtpd is the same correctly rounded square root).
# -fPIC: the same objects make the static and the shared library. -I$(BUILD)/include: <ropegrad/...> as installed
# (a link to src/), for the examples written the way a user's program is.
CFLAGS_ALL = -std=c11 -D_POSIX_C_SOURCE=200809L $(OPT) -fno-trapping-math -fno-math-errno -g -fPIC $(WARN) -Isrc -I$(BUILD)/include \
  $(PKG_CFLAGS) $(EXTRA_CFLAGS)
LDFLAGS_ALL = $(EXTRA_LDFLAGS)

BUILD ?= build
# The version: one home, src/version.h (RG_VERSION). The shared library is libropegrad.so.$(VERSION) with soname
# libropegrad.so.MAJOR.MINOR (0.x: a minor release may change the interface).
VERSION := $(shell sed -n 's/^\#define RG_VERSION "\(.*\)"/\1/p' src/version.h)
SOVERSION := $(word 1,$(subst ., ,$(VERSION))).$(word 2,$(subst ., ,$(VERSION)))
LIB_SRC := $(wildcard src/tensor/*.c src/autograd/*.c src/nn/*.c src/io/*.c)
LIB32 := $(BUILD)/libropegrad.a
SHLIB := $(BUILD)/libropegrad.so.$(VERSION)
# The experiment library (not part of libropegrad.a, not in ropegrad.h): the copy/reverse/sort tasks and their
# evaluation sets, linked by train_order, the benchmark, the data generator and test_task.
TASK_LIB := $(BUILD)/libropegrad_tasks.a
TASK_OBJ := $(patsubst %.c,$(BUILD)/f32/%.o,$(wildcard src/task/*.c))
LIB64 := $(BUILD)/libropegrad_f64.a
OBJ32 := $(LIB_SRC:%.c=$(BUILD)/f32/%.o)
OBJ64 := $(LIB_SRC:%.c=$(BUILD)/f64/%.o)

# tests/test_*.c link the float32 library; tests/gradcheck_*.c the float64 one (compiled with -DRG_DOUBLE).
TEST32 := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c))
TEST64 := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/gradcheck_*.c))
TEST_COMMON32 := $(BUILD)/f32/tests/common.o
TEST_COMMON64 := $(BUILD)/f64/tests/common.o
# examples/plugin_*.c are plugins (src/engine/plugin.h): shared libraries that train_order loads with --plugin.
PLUGINS := $(patsubst examples/%.c,$(BUILD)/examples/%.so,$(wildcard examples/plugin_*.c))
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(filter-out examples/plugin_%.c,$(wildcard examples/*.c))) \
  $(BUILD)/examples/train_order $(PLUGINS)
# The experiment engine (src/engine, public header engine.h): everything train_order does, as a library; the program
# examples/train_order/main.c is one call of rg_engine_main.
ENGINE_LIB := $(BUILD)/libropegrad_engine.a
ENGINE_OBJ := $(patsubst %.c,$(BUILD)/f32/%.o,$(wildcard src/engine/*.c))

.PHONY: all lib test run experiment experiment-small experiment-variants experiment-lm experiment-tricks experiment-grids bench sanitize clean deps fixtures
# Keep the objects make builds on the way to a test or example (it would delete them as intermediate files, and
# recompile them on the next `make run` or `make experiment`).
.SECONDARY:
all: deps lib $(TEST32) $(TEST64) $(BUILD)/tests/test_conformance_f32 $(EXAMPLES) $(BUILD)/tools/rg_check_pos
lib: $(LIB32) $(SHLIB) $(LIB64) $(TASK_LIB) $(ENGINE_LIB)

deps:
	@sh tools/deps.sh

# build/flags holds the flags that vary between builds (CI=true adds -Werror, OPT, EXTRA_*); every object depends
# on it, so `CI=true make test` after a plain `make` recompiles with -Werror instead of reusing the objects.
FLAGS_TEXT = $(CC) $(OPT) $(WARN) $(EXTRA_CFLAGS) $(EXTRA_LDFLAGS) dnnl=$(DNNL_FOUND)
$(BUILD)/flags: FORCE
	@mkdir -p $(dir $@)
	@[ "$$(cat $@ 2>/dev/null)" = "$(FLAGS_TEXT)" ] || echo "$(FLAGS_TEXT)" > $@

# <ropegrad/x.h> in the build tree: $(BUILD)/include/ropegrad is a link to src/
$(BUILD)/include/ropegrad:
	@mkdir -p $(dir $@)
	ln -sfn $(CURDIR)/src $@
$(BUILD)/f32/%.o: %.c $(wildcard src/*.h src/*/*.h examples/*.h examples/*/*.h) tests/common.h $(BUILD)/flags | $(BUILD)/include/ropegrad
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@
$(BUILD)/f32/src/tensor/dnnl.o: src/tensor/dnnl.c $(wildcard src/*.h src/*/*.h) $(BUILD)/flags | $(BUILD)/include/ropegrad
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DNNL_CFLAGS) -c $< -o $@
$(BUILD)/f64/%.o: %.c $(wildcard src/*.h src/*/*.h) tests/common.h $(BUILD)/flags | $(BUILD)/include/ropegrad
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DRG_DOUBLE -c $< -o $@

$(LIB32): $(OBJ32)
	@mkdir -p $(dir $@)
	ar rcs $@ $^
$(SHLIB): $(OBJ32)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libropegrad.so.$(SOVERSION) $^ -o $@ $(LDFLAGS_ALL) $(PKG_LIBS)
	ln -sf libropegrad.so.$(VERSION) $(BUILD)/libropegrad.so.$(SOVERSION)
$(LIB64): $(OBJ64)
	@mkdir -p $(dir $@)
	ar rcs $@ $^
$(TASK_LIB): $(TASK_OBJ)
	@mkdir -p $(dir $@)
	ar rcs $@ $^
$(ENGINE_LIB): $(ENGINE_OBJ)
	@mkdir -p $(dir $@)
	ar rcs $@ $^
$(BUILD)/tests/test_task $(BUILD)/tests/test_task_registry $(BUILD)/tests/test_tricks $(BUILD)/tests/test_lm $(BUILD)/tests/test_grid: $(BUILD)/tests/%: $(BUILD)/f32/tests/%.o $(TEST_COMMON32) $(TASK_LIB) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(PKG_LIBS)

# the end-to-end tests of train_order share a harness (tests/to_harness.c)
TO_TESTS := $(BUILD)/tests/test_train_order $(BUILD)/tests/test_train_order_input $(BUILD)/tests/test_mpi \
  $(BUILD)/tests/test_custom_task $(BUILD)/tests/test_grid_engine $(BUILD)/tests/test_plugin
$(TO_TESTS): $(BUILD)/tests/%: $(BUILD)/f32/tests/%.o $(BUILD)/f32/tests/to_harness.o $(TEST_COMMON32) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(PKG_LIBS)
$(TO_TESTS:$(BUILD)/tests/%=$(BUILD)/f32/tests/%.o) $(BUILD)/f32/tests/to_harness.o: tests/to_harness.h
# end-to-end tests that also call the engine library (rg_engine_run_settings; the --continue files)
TO_ENGINE_TESTS := $(BUILD)/tests/test_train_order_settings $(BUILD)/tests/test_train_order_continue
$(TO_ENGINE_TESTS): $(BUILD)/tests/%: $(BUILD)/f32/tests/%.o $(BUILD)/f32/tests/to_harness.o $(TEST_COMMON32) \
                    $(ENGINE_LIB) $(TASK_LIB) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(PKG_LIBS) $(CJSON_LIBS) $(MPI_LIBS)
$(TO_ENGINE_TESTS:$(BUILD)/tests/%=$(BUILD)/f32/tests/%.o): tests/to_harness.h
# the plugins test_plugin runs train_order with (in their own folder: tests/run.sh runs every file of build/tests;
# never linked into a test): the example plugin's source built for float64, and tests/plugin_bad.c's refusals
# (BAD_nomagic, BAD_version, BAD_layout, BAD_init)
TEST_PLUGINS := $(addprefix $(BUILD)/test_plugins/plugin_,f64.so nomagic.so version.so layout.so init.so)
$(BUILD)/test_plugins/plugin_f64.so: examples/plugin_xpos_addition.c $(wildcard src/*.h src/*/*.h) $(BUILD)/flags | $(BUILD)/include/ropegrad
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DRG_DOUBLE -shared $< -o $@ $(LDFLAGS_ALL)
$(BUILD)/test_plugins/plugin_%.so: tests/plugin_bad.c $(wildcard src/*.h src/*/*.h) $(BUILD)/flags | $(BUILD)/include/ropegrad
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DBAD_$* -shared $< -o $@ $(LDFLAGS_ALL)
$(BUILD)/tests/test_plugin: | $(TEST_PLUGINS) $(PLUGINS) $(BUILD)/tools/rg_check_pos
$(BUILD)/tests/test_mpi: | $(PLUGINS)
# bench/targets.c's verdicts on the benchmark's targets (the benchmark itself is never a test)
$(BUILD)/tests/test_bench_targets: $(BUILD)/f32/tests/test_bench_targets.o $(BUILD)/f32/bench/targets.o \
                                   $(TEST_COMMON32) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(PKG_LIBS)
$(BUILD)/f32/tests/test_bench_targets.o: bench/bench.h
$(BUILD)/tests/test_%: $(BUILD)/f32/tests/test_%.o $(TEST_COMMON32) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(PKG_LIBS)
# the conformance check of every encoding, and of the example plugin's xpos compiled in float64 (with the task
# registry it registers into)
$(BUILD)/tests/gradcheck_conformance: $(BUILD)/f64/tests/gradcheck_conformance.o $(BUILD)/f64/examples/plugin_xpos_addition.o \
                                      $(patsubst %.c,$(BUILD)/f64/%.o,$(wildcard src/task/*.c)) $(TEST_COMMON64) $(LIB64)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DRG_DOUBLE $^ -o $@ $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(PKG_LIBS)
# the same loop in float32, at float32's bounds (what train_order --check-pos runs)
$(BUILD)/tests/test_conformance_f32: $(BUILD)/f32/tests/gradcheck_conformance.o $(BUILD)/f32/examples/plugin_xpos_addition.o \
                                     $(TEST_COMMON32) $(TASK_LIB) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(PKG_LIBS)
$(BUILD)/tests/gradcheck_%: $(BUILD)/f64/tests/gradcheck_%.o $(TEST_COMMON64) $(LIB64)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DRG_DOUBLE $^ -o $@ $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(PKG_LIBS)
# train_order alone reads JSON (--config): cJSON (Debian libcjson-dev).
CJSON_LIBS = $(shell pkg-config --libs libcjson 2>/dev/null || echo -lcjson)
# OpenMPI (docs/mpi.md): train_order's mpi.c, its only MPI code, is compiled and linked with mpicc's flags
# when mpicc is found; otherwise it compiles to stubs that refuse an mpirun launch and --data-parallel. The library
# never includes mpi.h.
MPICC_FOUND = $(shell command -v mpicc 2>/dev/null)
MPI_CFLAGS = $(if $(MPICC_FOUND),$(shell mpicc --showme:compile) -DTO_HAVE_MPI)
MPI_LIBS = $(if $(MPICC_FOUND),$(shell mpicc --showme:link))
$(BUILD)/f32/src/engine/mpi.o: src/engine/mpi.c $(wildcard src/*/*.h) $(BUILD)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(MPI_CFLAGS) -c $< -o $@
# A plugin calls the library functions of the program that loads it: train_order exports every symbol of the
# library and the tasks library (-rdynamic, the whole archives, not only the objects main pulls in).
$(BUILD)/examples/train_order: $(BUILD)/f32/examples/train_order/main.o $(ENGINE_LIB) $(TASK_LIB) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -rdynamic $< $(ENGINE_LIB) -Wl,--whole-archive $(TASK_LIB) $(LIB32) -Wl,--no-whole-archive \
	  -o $@ $(LDFLAGS_ALL) $(PKG_LIBS) $(CJSON_LIBS) $(MPI_LIBS)
# A plugin: compiled against the headers, not linked to the library (the program that loads it provides it).
$(BUILD)/examples/%.so: examples/%.c $(wildcard src/*.h src/*/*.h) $(BUILD)/flags | $(BUILD)/include/ropegrad
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -shared $< -o $@ $(LDFLAGS_ALL)
# The report's provenance names the commit: build/git_commit holds `git rev-parse --short HEAD` ("+dirty" with
# uncommitted changes to tracked files, "unknown" outside a git checkout) and changes only when that does.
$(BUILD)/git_commit: FORCE
	@mkdir -p $(dir $@)
	@c=$$(git rev-parse --short HEAD 2>/dev/null || echo unknown); \
	 if [ "$$c" != unknown ] && [ -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then c="$$c+dirty"; fi; \
	 [ "$$(cat $@ 2>/dev/null)" = "$$c" ] || echo "$$c" > $@
.PHONY: FORCE
$(BUILD)/f32/src/engine/report.o: src/engine/report.c $(BUILD)/git_commit $(wildcard src/*/*.h) $(BUILD)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DRG_GIT_COMMIT=\"$$(cat $(BUILD)/git_commit)\" -c $< -o $@
# the report's tests link the engine library, and their shared fixture (tests/report_fixture.c).
REPORT_TESTS := $(BUILD)/tests/test_report $(BUILD)/tests/test_report_tools $(BUILD)/tests/test_report_notes \
  $(BUILD)/tests/test_protocol $(BUILD)/tests/test_report_combine $(BUILD)/tests/test_capabilities
$(REPORT_TESTS:$(BUILD)/tests/%=$(BUILD)/f32/tests/%.o) $(BUILD)/f32/tests/report_fixture.o: tests/report_fixture.h
$(REPORT_TESTS): $(BUILD)/tests/%: $(BUILD)/f32/tests/%.o $(BUILD)/f32/tests/report_fixture.o $(TEST_COMMON32) $(ENGINE_LIB) $(TASK_LIB) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(PKG_LIBS) $(CJSON_LIBS) $(MPI_LIBS)
# examples/custom_task.c: a program's own task in the engine (docs/extending.md)
$(BUILD)/examples/custom_task: $(BUILD)/f32/examples/custom_task.o $(ENGINE_LIB) $(TASK_LIB) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(PKG_LIBS) $(CJSON_LIBS) $(MPI_LIBS)
$(BUILD)/examples/%: $(BUILD)/f32/examples/%.o $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(PKG_LIBS)

# The README's test command: build everything, run every test binary, print the counts.
test: all
	@sh tests/run.sh $(BUILD)/tests

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer.
sanitize: deps
	$(MAKE) BUILD=build/sanitize OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  EXTRA_LDFLAGS="-fsanitize=address,undefined" test

# The main job (docs/protocol.md): copy with four encodings that differ in the window L+1..1.5L
# (NoPE, T5 with the fair max_distance, ALiBi, RoPE and RoPE's scaling rows), one seed, the default protocol:
# 10000 steps, test lengths 8,16,17..24,32,48,64, the curves over training every 500 steps; about 8 minutes at
# --jobs 2 on an idle 2-core machine; writes out/report.md.
# A second `make run` is refused while out/ holds the first one's results: RUN_ARGS=--overwrite writes into it.
run: all
	$(BUILD)/examples/train_order --task copy --pos none,t5,alibi,rope --seeds 1 --out out $(RUN_ARGS)

# The experiment: three tasks, every registered encoding (11 built-ins with kerple-log and kerple-power; and RoPE's
# scaling types at evaluation), ten seeds per cell, the default protocol (10000 steps): 3 x 11 x 10 = 330 runs,
# measured 59.7 s of wall per run with 2 jobs on the 2-core Xeon (about 5.5 hours), 149 s on the 2-core EPYC
# (about 13.7 hours); writes out/experiment/report.md (results/experiment-10seeds/: the ten seeds, run in blocks).
# experiment-small keeps the five encodings the literature ranks (none, t5, alibi, rope, fire) on the three tasks
# with three seeds: 45 runs, about 45 minutes on the Xeon. experiment-variants adds the training variants (rope
# theta=500k, +rand for every encoding but none, t5 with max_distance 128, rope / rope-half with bf16 angles) at
# ten seeds.
experiment: all
	$(BUILD)/examples/train_order --task all --pos all --seeds 10 --out out/experiment $(RUN_ARGS)
experiment-small: all
	$(BUILD)/examples/train_order --task all --pos none,t5,alibi,rope,fire --seeds 3 --out out/experiment-small $(RUN_ARGS)
experiment-variants: all
	$(BUILD)/examples/train_order --task all --pos all --variants all --seeds 10 --out out/experiment-variants $(RUN_ARGS)

# The language-modelling curve (Press et al. 2022 Table 2 protocol, docs/lm.md): train at L = 32 on the synthetic
# language (lm) and on English bytes (lm_en), perplexity at L..8L by chunks and sliding window; lm_report.md and
# lm_ppl_<task>.svg. experiment-tricks: index hints and position coupling against their base tasks at the same
# budget (docs/tricks.md). Both are opt-in tasks (not in --task all).
experiment-lm: all
	$(BUILD)/examples/train_order --task lm,lm_en --pos sinusoidal,learned,rope,t5,alibi,none --seeds 3 --steps 3000 --train-len 32 --out out/experiment-lm $(RUN_ARGS)
experiment-tricks: all
	$(BUILD)/examples/train_order --task copy,copy_coupled,copy_hints,reverse,reverse_coupled,reverse_hints --pos learned,rope,alibi,none --seeds 3 --out out/experiment-tricks $(RUN_ARGS)

# The grid comparison (docs/grids.md, results/grids-800/): grid_copy and grid_lookup trained on grids
# up to 4x4, tested at 3x3 .. 8x8, 4x8, 8x4, 4x6, 6x4, with NoPE, 1-D RoPE over the raster index, axial 2-D RoPE,
# M-RoPE and the 2-D absolute / bias encodings; two seeds, 3000 steps (results/grids-3000/):
# 2 x 8 x 2 = 32 runs, measured 19 min 53 s (1192.7 s) with 2 jobs on the 2-core machine at load average 5-6;
# writes out/experiment-grids/report.md, heat_<task>.svg, cells_<task>.svg.
experiment-grids: all
	$(BUILD)/examples/train_order --task grid_copy,grid_lookup --pos none,rope,rope-2d,rope-2d-pixtral,mrope,learned-2d,alibi-2d-manhattan,t5-2d --seeds 2 --steps 3000 --train-len 4x4 --test-lens 3x3,4x4,5x5,6x6,8x8,4x8,8x4,4x6,6x4 --rope-scaling none --eval-every 250 --out out/experiment-grids $(RUN_ARGS)

# The benchmark (bench/README.md): the C training step next to PyTorch's, and the sgemm ceiling, run
# once with the environment as given and once with OPENBLAS_CORETYPE=Haswell. A benchmark, never part of `make test`.
bench: deps $(BUILD)/bench/bench
	sh bench/run.sh $(BUILD)/bench/bench $(BENCH_ARGS)
$(BUILD)/bench/bench: $(BUILD)/f32/bench/bench.o $(BUILD)/f32/bench/child.o $(BUILD)/f32/bench/targets.o $(TASK_LIB) \
                      $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(PKG_LIBS)
$(BUILD)/f32/bench/bench.o $(BUILD)/f32/bench/child.o $(BUILD)/f32/bench/targets.o: bench/bench.h

# Regenerate the PyTorch fixtures (needs Debian's python3-torch and python3-h5py; CI never does this).
fixtures:
	/usr/bin/python3 tools/gen_fixtures.py tests/fixtures

# Regenerate the canonical evaluation sets data/eval_sets.h5 (deterministic: see docs/data.md).
.PHONY: data
data: deps $(BUILD)/tools/gen_data
	$(BUILD)/tools/gen_data data/eval_sets.h5
# rg_check_pos: the float64 conformance check (tools/check_pos.c) with the plugin loader and the task registry
# compiled in float64, exporting every symbol of the float64 library to the plugins it loads (as train_order does).
CHECK_POS := $(BUILD)/tools/rg_check_pos
CHECK_POS_OBJ := $(BUILD)/f64/tools/check_pos.o $(BUILD)/f64/src/engine/plugin_load.o \
  $(patsubst %.c,$(BUILD)/f64/%.o,$(wildcard src/task/*.c))
$(CHECK_POS): $(CHECK_POS_OBJ) $(LIB64)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DRG_DOUBLE -rdynamic -Wl,--whole-archive $(CHECK_POS_OBJ) $(LIB64) -Wl,--no-whole-archive \
	  -o $@ $(LDFLAGS_ALL) $(PKG_LIBS)
$(BUILD)/tools/gen_data: $(BUILD)/f32/tools/gen_data.o $(TASK_LIB) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(PKG_LIBS)

# ------------------------------------------------------------------ install (docs/install.md)
# `make install PREFIX=/opt/ropegrad` (default /usr/local; DESTDIR is prepended to every path, for packagers):
# the public headers under include/ropegrad/ (#include <ropegrad/ropegrad.h>), libropegrad.a, libropegrad.so.$(VERSION)
# (soname libropegrad.so.$(SOVERSION)) and its links, libropegrad_f64.a, the tasks and engine libraries,
# lib/pkgconfig/ropegrad.pc and ropegrad-f64.pc, bin/train_order and share/ropegrad/eval_sets.h5 (train_order
# finds it through ROPEGRAD_DATA). Then: cc prog.c $$(pkg-config --cflags --libs ropegrad). `make uninstall`
# removes exactly these files. install-files copies what is built (tests/test_install.c calls it).
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share/ropegrad
PUBLIC_HEADERS := src/ropegrad.h src/version.h src/tensor/tensor.h src/tensor/ops.h src/tensor/rng.h src/tensor/blas.h \
  src/autograd/autograd.h src/nn/nn.h src/nn/pos.h src/nn/pos_ext.h src/nn/pos_grid_bias.h src/nn/generate.h src/io/checkpoint.h src/io/atomic.h \
  src/task/task.h src/engine/engine.h src/engine/plugin.h src/nn/pos_conformance.h
INSTALLED_LIBS := libropegrad.a libropegrad_f64.a libropegrad_tasks.a libropegrad_engine.a libropegrad.so.$(VERSION)
.PHONY: install install-files uninstall
install: lib $(BUILD)/examples/train_order $(BUILD)/tools/rg_check_pos
	@$(MAKE) --no-print-directory install-files
# pkg-config files: Requires (not .private) because the static tasks/engine libraries and libropegrad.a call
# OpenBLAS and HDF5 directly, so a program needs them on its link line either way.
PC_COMMON = prefix=$(PREFIX)\nlibdir=$(LIBDIR)\nincludedir=$(INCLUDEDIR)\ndatadir=$(DATADIR)\n\nVersion: $(VERSION)\nRequires: $(PKGS)\n
install-files:
	install -d $(DESTDIR)$(INCLUDEDIR)/ropegrad $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)
	for h in $(PUBLIC_HEADERS:src/%=%); do install -d $(DESTDIR)$(INCLUDEDIR)/ropegrad/$$(dirname $$h) && \
	  install -m 644 src/$$h $(DESTDIR)$(INCLUDEDIR)/ropegrad/$$h || exit 1; done
	for l in $(INSTALLED_LIBS); do install -m 644 $(BUILD)/$$l $(DESTDIR)$(LIBDIR)/$$l || exit 1; done
	ln -sf libropegrad.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libropegrad.so.$(SOVERSION)
	ln -sf libropegrad.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libropegrad.so
	install -m 755 $(BUILD)/examples/train_order $(DESTDIR)$(BINDIR)/train_order
	install -m 755 $(BUILD)/tools/rg_check_pos $(DESTDIR)$(BINDIR)/rg_check_pos
	install -m 644 data/eval_sets.h5 $(DESTDIR)$(DATADIR)/eval_sets.h5
	printf '/* ropegrad.h: the umbrella header under the name README.md'"'"'s script includes ("ropegrad.h", with\n * -I$${includedir}); the same as <ropegrad/ropegrad.h>. */\n#include <ropegrad/ropegrad.h>\n' > $(DESTDIR)$(INCLUDEDIR)/ropegrad.h
	printf '$(PC_COMMON)Name: ropegrad\nDescription: reverse-mode autodiff, transformers and the length-extrapolation engine (float32)\nCflags: -I$${includedir}\nLibs: -L$${libdir} -lropegrad_engine -lropegrad_tasks -lropegrad $(CJSON_LIBS) $(MPI_LIBS) -lm -lpthread -ldl\n' > $(DESTDIR)$(LIBDIR)/pkgconfig/ropegrad.pc
	printf '$(PC_COMMON)Name: ropegrad-f64\nDescription: ropegrad, the float64 build (gradient checks)\nCflags: -I$${includedir} -DRG_DOUBLE\nLibs: -L$${libdir} -lropegrad_f64 -lm -lpthread\n' > $(DESTDIR)$(LIBDIR)/pkgconfig/ropegrad-f64.pc
uninstall:
	rm -f $(PUBLIC_HEADERS:src/%=$(DESTDIR)$(INCLUDEDIR)/ropegrad/%) $(DESTDIR)$(INCLUDEDIR)/ropegrad.h
	for d in tensor autograd nn io task engine; do rmdir $(DESTDIR)$(INCLUDEDIR)/ropegrad/$$d 2>/dev/null; done; true
	rmdir $(DESTDIR)$(INCLUDEDIR)/ropegrad 2>/dev/null || true
	rm -f $(INSTALLED_LIBS:%=$(DESTDIR)$(LIBDIR)/%) $(DESTDIR)$(LIBDIR)/libropegrad.so.$(SOVERSION) \
	  $(DESTDIR)$(LIBDIR)/libropegrad.so $(DESTDIR)$(LIBDIR)/pkgconfig/ropegrad.pc \
	  $(DESTDIR)$(LIBDIR)/pkgconfig/ropegrad-f64.pc $(DESTDIR)$(BINDIR)/train_order $(DESTDIR)$(BINDIR)/rg_check_pos $(DESTDIR)$(DATADIR)/eval_sets.h5
	rmdir $(DESTDIR)$(DATADIR) 2>/dev/null || true

clean:
	rm -rf build

# The re-sealed mutation campaign (docs/checkpoint.md, "Parsing out of process"): FUZZ_N mutations of
# a train_order checkpoint (default 2000, seed FUZZ_SEED), each re-sealed and loaded by the library, --eval and
# --resume; 0 crashes, 0 hangs and 0 silent loads or it fails. Minutes, not part of `make test`.
.PHONY: fuzz
FUZZ_N ?= 2000
FUZZ_SEED ?= 1
fuzz: all $(BUILD)/tools/fuzz_ckpt
	sh tools/fuzz.sh $(BUILD) $(FUZZ_N) $(FUZZ_SEED)
$(BUILD)/tools/fuzz_ckpt: $(BUILD)/f32/tools/fuzz_ckpt.o $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(PKG_LIBS)
