# ropegrad: build the static library (float32, and a float64 build for gradient checks), the tests and examples.
# Dependencies are found with pkg-config; `make deps` installs them on Debian when they are missing.
# The rules are in mk/: libs.mk (the libraries and how every object is compiled), tests.mk, examples.mk,
# experiments.mk (make run / experiment*), tools.mk (bench, data, fixtures, fuzz, rg_check_pos), install.mk.
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
# train_order alone reads JSON (--config): cJSON (Debian libcjson-dev).
CJSON_LIBS = $(shell pkg-config --libs libcjson 2>/dev/null || echo -lcjson)
# OpenMPI (docs/mpi.md): the engine's run/mpi_*.c, its only MPI code, are compiled and linked with mpicc's flags when mpicc
# is found; otherwise they compile to stubs that refuse an mpirun launch and --data-parallel. The library never
# includes mpi.h.
MPICC_FOUND = $(shell command -v mpicc 2>/dev/null)
MPI_CFLAGS = $(if $(MPICC_FOUND),$(shell mpicc --showme:compile) -DENG_HAVE_MPI)
MPI_LIBS = $(if $(MPICC_FOUND),$(shell mpicc --showme:link))

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
# Every compile also writes its dependency file (x.o -> x.d: the headers x.c includes), so that a header edit
# rebuilds the objects that include it and no others; -MP adds an empty rule per header, so that deleting a header
# does not break the build.
DEPFLAGS = -MMD -MP

BUILD ?= build
# The version: one home, src/version.h (RG_VERSION). The shared library is libropegrad.so.$(VERSION) with soname
# libropegrad.so.MAJOR.MINOR (0.x: a minor release may change the interface).
VERSION := $(shell sed -n 's/^\#define RG_VERSION "\(.*\)"/\1/p' src/version.h)
SOVERSION := $(word 1,$(subst ., ,$(VERSION))).$(word 2,$(subst ., ,$(VERSION)))

.DEFAULT_GOAL := all
.PHONY: all lib test sanitize clean deps FORCE
# Keep the objects make builds on the way to a test or example (it would delete them as intermediate files, and
# recompile them on the next `make run` or `make experiment`).
.SECONDARY:

include mk/libs.mk
include mk/examples.mk
include mk/tools.mk
include mk/tests.mk
include mk/experiments.mk
include mk/install.mk

all: deps lib $(TEST32) $(TEST64) $(TEST_EXTRA) $(EXAMPLES) $(CHECK_POS)
lib: $(LIB32) $(SHLIB) $(LIB64) $(TASK_LIB) $(ENGINE_LIB)

deps:
	@sh tools/deps.sh

# The README's test command: build everything, run every test binary, print the counts.
test: all
	@sh tests/run.sh $(BUILD)/tests

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer.
sanitize: deps
	$(MAKE) BUILD=build/sanitize OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  EXTRA_LDFLAGS="-fsanitize=address,undefined" test

clean:
	rm -rf build

# The dependency files of every object built so far (none before the first build: then everything is built anyway).
# The sanitizer build lives under build/sanitize and reads its own.
-include $(shell find $(BUILD) -name '*.d' -not -path '$(BUILD)/sanitize/*' 2>/dev/null)
