# mk/libs.mk: how every object is compiled, and the libraries.
#   build/libropegrad.a, build/libropegrad.so.$(VERSION)  float32: src/tensor, src/autograd, src/nn, src/io
#   build/libropegrad_f64.a                               the same sources in float64 (-DRG_DOUBLE; gradient checks)
#   build/libropegrad_tasks.a                             the experiment's tasks (src/task; not in ropegrad.h)
#   build/libropegrad_engine.a                            the experiment engine (src/engine and its subfolders)
# An object is $(BUILD)/f32/<source>.o or $(BUILD)/f64/<source>.o for any source of the tree.

LIB_SRC := $(wildcard src/tensor/*.c src/autograd/*.c src/nn/*.c src/io/*.c)
LIB32 := $(BUILD)/libropegrad.a
SHLIB := $(BUILD)/libropegrad.so.$(VERSION)
LIB64 := $(BUILD)/libropegrad_f64.a
OBJ32 := $(LIB_SRC:%.c=$(BUILD)/f32/%.o)
OBJ64 := $(LIB_SRC:%.c=$(BUILD)/f64/%.o)
# The experiment library (not part of libropegrad.a, not in ropegrad.h): the copy/reverse/sort tasks and their
# evaluation sets, linked by train_order, the benchmark, the data generator and the task tests.
TASK_LIB := $(BUILD)/libropegrad_tasks.a
TASK_SRC := $(wildcard src/task/*.c)
TASK_OBJ := $(TASK_SRC:%.c=$(BUILD)/f32/%.o)
TASK_OBJ64 := $(TASK_SRC:%.c=$(BUILD)/f64/%.o)
# The experiment engine (src/engine, public header engine.h): everything train_order does, as a library; the program
# examples/train_order/main.c is one call of rg_engine_main. Every .c under src/engine, its subfolders included.
ENGINE_LIB := $(BUILD)/libropegrad_engine.a
ENGINE_OBJ := $(patsubst %.c,$(BUILD)/f32/%.o,$(shell find src/engine -name '*.c'))

# build/flags holds the flags that vary between builds (CI=true adds -Werror, OPT, EXTRA_*); every object depends
# on it, so `CI=true make test` after a plain `make` recompiles with -Werror instead of reusing the objects (and
# MPI's flags: the engine's MPI files compiled without the macro they test silently made a build without MPI).
FLAGS_TEXT = $(CC) $(OPT) $(WARN) $(EXTRA_CFLAGS) $(EXTRA_LDFLAGS) dnnl=$(DNNL_FOUND) mpi=$(MPI_CFLAGS)
$(BUILD)/flags: FORCE
	@mkdir -p $(dir $@)
	@[ "$$(cat $@ 2>/dev/null)" = "$(FLAGS_TEXT)" ] || echo "$(FLAGS_TEXT)" > $@
# <ropegrad/x.h> in the build tree: $(BUILD)/include/ropegrad is a link to src/
$(BUILD)/include/ropegrad:
	@mkdir -p $(dir $@)
	ln -sfn $(CURDIR)/src $@

# The headers an object depends on come from its dependency file (DEPFLAGS, included by the top Makefile).
# Test objects also see the shared test harness (tests/harness: common.h, eng_harness.h, ...).
$(BUILD)/f32/tests/%.o $(BUILD)/f64/tests/%.o: TEST_INC := -Itests/harness
$(BUILD)/f32/%.o: %.c $(BUILD)/flags | $(BUILD)/include/ropegrad
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(TEST_INC) $(DEPFLAGS) -c $< -o $@
$(BUILD)/f64/%.o: %.c $(BUILD)/flags | $(BUILD)/include/ropegrad
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(TEST_INC) -DRG_DOUBLE $(DEPFLAGS) -c $< -o $@
# Objects with flags of their own: oneDNN's (when found), MPI's (the MPI scheduler and transport), and the
# report's commit.
$(BUILD)/f32/src/tensor/dnnl.o: src/tensor/dnnl.c $(BUILD)/flags | $(BUILD)/include/ropegrad
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DNNL_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(BUILD)/f32/src/engine/run/mpi_%.o: src/engine/run/mpi_%.c $(BUILD)/flags | $(BUILD)/include/ropegrad
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(MPI_CFLAGS) $(DEPFLAGS) -c $< -o $@
# The report's provenance names the commit: build/git_commit holds `git rev-parse --short HEAD` ("+dirty" with
# uncommitted changes to tracked files, "unknown" outside a git checkout) and changes only when that does.
$(BUILD)/git_commit: FORCE
	@mkdir -p $(dir $@)
	@c=$$(git rev-parse --short HEAD 2>/dev/null || echo unknown); \
	 if [ "$$c" != unknown ] && [ -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then c="$$c+dirty"; fi; \
	 [ "$$(cat $@ 2>/dev/null)" = "$$c" ] || echo "$$c" > $@
$(BUILD)/f32/src/engine/views/report.o: src/engine/views/report.c $(BUILD)/git_commit $(BUILD)/flags | $(BUILD)/include/ropegrad
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DRG_GIT_COMMIT=\"$$(cat $(BUILD)/git_commit)\" $(DEPFLAGS) -c $< -o $@

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
