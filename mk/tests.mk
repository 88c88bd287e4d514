# mk/tests.mk: the tests. tests/ mirrors src/ (tensor, autograd, nn, nn/pos, io, task, engine), plus e2e/ (the
# programs and the README's contract), bench/ (the benchmark's verdicts) and harness/ (shared by all, never a test).
# Every tests/<folder>/test_*.c is a float32 test and every tests/<folder>/gradcheck_*.c a float64 one (-DRG_DOUBLE),
# each built to $(BUILD)/tests/<name> (tests/run.sh runs every binary there). The folder decides what a test links,
# beyond the harness's common.o and the library of its precision:
TEST_LINK_task := $(TASK_LIB)
TEST_LINK_engine := $(BUILD)/f32/tests/harness/report_fixture.o $(ENGINE_LIB) $(TASK_LIB)
TEST_LIBS_engine = $(CJSON_LIBS) $(MPI_LIBS)
TEST_LINK_e2e := $(BUILD)/f32/tests/harness/eng_harness.o $(BUILD)/f32/tests/harness/report_fixture.o $(ENGINE_LIB) $(TASK_LIB)
TEST_LIBS_e2e = $(CJSON_LIBS) $(MPI_LIBS)
TEST_LINK_bench := $(BUILD)/f32/bench/targets.o

TEST_COMMON32 := $(BUILD)/f32/tests/harness/common.o
TEST_COMMON64 := $(BUILD)/f64/tests/harness/common.o
TEST_SRC := $(shell find tests -name 'test_*.c' -o -name 'gradcheck_*.c')
TEST_DIRS := $(sort $(patsubst tests/%/,%,$(dir $(TEST_SRC))))
# Tests with a rule of their own below (built from other sources too).
TEST_OWN_RULE := $(BUILD)/tests/gradcheck_conformance

define TEST_FOLDER
TESTS32_$(1) := $$(patsubst tests/$(1)/%.c,$$(BUILD)/tests/%,$$(wildcard tests/$(1)/test_*.c))
TESTS64_$(1) := $$(filter-out $$(TEST_OWN_RULE),$$(patsubst tests/$(1)/%.c,$$(BUILD)/tests/%,$$(wildcard tests/$(1)/gradcheck_*.c)))
$$(TESTS32_$(1)): $$(BUILD)/tests/%: $$(BUILD)/f32/tests/$(1)/%.o $$(TEST_COMMON32) $$(TEST_LINK_$(1)) $$(LIB32)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_ALL) $$^ -o $$@ $$(LDFLAGS_ALL) $$(CMOCKA_LIBS) $$(PKG_LIBS) $$(TEST_LIBS_$(1))
$$(TESTS64_$(1)): $$(BUILD)/tests/%: $$(BUILD)/f64/tests/$(1)/%.o $$(TEST_COMMON64) $$(LIB64)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_ALL) -DRG_DOUBLE $$^ -o $$@ $$(LDFLAGS_ALL) $$(CMOCKA_LIBS) $$(PKG_LIBS)
TEST32 += $$(TESTS32_$(1))
TEST64 += $$(TESTS64_$(1)) $$(filter $$(TEST_OWN_RULE),$$(patsubst tests/$(1)/%.c,$$(BUILD)/tests/%,$$(wildcard tests/$(1)/gradcheck_*.c)))
endef
TEST32 :=
TEST64 :=
$(foreach d,$(TEST_DIRS),$(eval $(call TEST_FOLDER,$(d))))

# The conformance check of every encoding, and of the example plugin's xpos compiled in float64 (with the task
# registry it registers into); and the same loop in float32, at float32's bounds (what train_order --check-pos
# runs), an extra binary of the same source.
CONFORMANCE_SRC := tests/nn/pos/gradcheck_conformance.c
$(BUILD)/tests/gradcheck_conformance: $(CONFORMANCE_SRC:%.c=$(BUILD)/f64/%.o) $(BUILD)/f64/examples/plugin_xpos_addition.o \
                                      $(TASK_OBJ64) $(TEST_COMMON64) $(LIB64)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DRG_DOUBLE $^ -o $@ $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(PKG_LIBS)
TEST_EXTRA := $(BUILD)/tests/test_conformance_f32
$(BUILD)/tests/test_conformance_f32: $(CONFORMANCE_SRC:%.c=$(BUILD)/f32/%.o) $(BUILD)/f32/examples/plugin_xpos_addition.o \
                                     $(TEST_COMMON32) $(TASK_LIB) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(CMOCKA_LIBS) $(PKG_LIBS)

# The plugins test_plugin runs train_order with (in their own folder: tests/run.sh runs every file of build/tests;
# never linked into a test): the example plugin's source built for float64, and tests/e2e/plugin_bad.c's refusals
# (BAD_nomagic, BAD_version, BAD_layout, BAD_small, BAD_init, BAD_silent).
TEST_PLUGINS := $(addprefix $(BUILD)/test_plugins/plugin_,f64.so nomagic.so version.so layout.so small.so init.so \
                  silent.so)
$(BUILD)/test_plugins/plugin_f64.so: examples/plugin_xpos_addition.c $(BUILD)/flags | $(BUILD)/include/ropegrad
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DRG_DOUBLE $(DEPFLAGS) -shared $< -o $@ $(LDFLAGS_ALL)
$(BUILD)/test_plugins/plugin_%.so: tests/e2e/plugin_bad.c $(BUILD)/flags | $(BUILD)/include/ropegrad
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DBAD_$* $(DEPFLAGS) -shared $< -o $@ $(LDFLAGS_ALL)
# What the end-to-end tests run, besides train_order (every test is built before any runs: `make test` builds all).
$(BUILD)/tests/test_plugin: | $(TEST_PLUGINS) $(PLUGINS) $(CHECK_POS)
$(BUILD)/tests/test_mpi: | $(PLUGINS)
