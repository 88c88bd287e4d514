# mk/tools.mk: the benchmark, the data and fixture generators, the conformance checker and the fuzzing campaign.
.PHONY: bench fixtures data fuzz

# The benchmark (bench/README.md): the C training step next to PyTorch's, and the product ceilings, run once with
# the environment as given and once with the CPU's own OpenBLAS kernels (bench --own-coretype). A benchmark, never
# part of `make test`.
bench: deps $(BUILD)/bench/bench
	sh bench/run.sh $(BUILD)/bench/bench $(BENCH_ARGS)
$(BUILD)/bench/bench: $(BUILD)/f32/bench/bench.o $(BUILD)/f32/bench/report.o $(BUILD)/f32/bench/child.o \
                      $(BUILD)/f32/bench/ceiling.o $(BUILD)/f32/bench/targets.o $(TASK_LIB) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(PKG_LIBS)

# Regenerate the PyTorch fixtures (needs Debian's python3-torch and python3-h5py; CI never does this).
fixtures:
	/usr/bin/python3 tools/gen_fixtures.py tests/fixtures

# Regenerate the canonical evaluation sets data/eval_sets.h5 (deterministic: see docs/data.md).
data: deps $(BUILD)/tools/gen_data
	$(BUILD)/tools/gen_data data/eval_sets.h5
$(BUILD)/tools/gen_data: $(BUILD)/f32/tools/gen_data.o $(TASK_LIB) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(PKG_LIBS)

# rg_check_pos: the float64 conformance check (tools/check_pos.c) with the plugin loader and the task registry
# compiled in float64, exporting every symbol of the float64 library to the plugins it loads (as train_order does).
CHECK_POS := $(BUILD)/tools/rg_check_pos
CHECK_POS_OBJ := $(BUILD)/f64/tools/check_pos.o $(BUILD)/f64/src/engine/settings/plugin_load.o \
  $(BUILD)/f64/src/engine/base/messages.o $(TASK_OBJ64)
$(CHECK_POS): $(CHECK_POS_OBJ) $(LIB64)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DRG_DOUBLE -rdynamic -Wl,--whole-archive $(CHECK_POS_OBJ) $(LIB64) -Wl,--no-whole-archive \
	  -o $@ $(LDFLAGS_ALL) $(PKG_LIBS)

# The re-sealed mutation campaign (docs/checkpoint.md, "Parsing out of process"): FUZZ_N mutations of a train_order
# checkpoint (default 2000, seed FUZZ_SEED), each re-sealed and loaded by the library, --eval and --resume; 0
# crashes, 0 hangs and 0 silent loads or it fails. Not part of `make test`.
FUZZ_N ?= 2000
FUZZ_SEED ?= 1
fuzz: all $(BUILD)/tools/fuzz_ckpt
	sh tools/fuzz.sh $(BUILD) $(FUZZ_N) $(FUZZ_SEED)
$(BUILD)/tools/fuzz_ckpt: $(BUILD)/f32/tools/fuzz_ckpt.o $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(PKG_LIBS)
