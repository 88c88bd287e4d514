# mk/examples.mk: the example programs (examples/*.c), train_order (examples/train_order/main.c) and the plugins
# (examples/plugin_*.c: shared libraries that train_order loads with --plugin; src/engine/plugin.h).
PLUGINS := $(patsubst examples/%.c,$(BUILD)/examples/%.so,$(wildcard examples/plugin_*.c))
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(filter-out examples/plugin_%.c,$(wildcard examples/*.c))) \
  $(BUILD)/examples/train_order $(PLUGINS)

# A plugin calls the library functions of the program that loads it: train_order exports every symbol of the
# library and the tasks library (-rdynamic, the whole archives, not only the objects main pulls in).
$(BUILD)/examples/train_order: $(BUILD)/f32/examples/train_order/main.o $(ENGINE_LIB) $(TASK_LIB) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -rdynamic $< $(ENGINE_LIB) -Wl,--whole-archive $(TASK_LIB) $(LIB32) -Wl,--no-whole-archive \
	  -o $@ $(LDFLAGS_ALL) $(PKG_LIBS) $(CJSON_LIBS) $(MPI_LIBS)
# A plugin: compiled against the headers, not linked to the library (the program that loads it provides it).
$(BUILD)/examples/%.so: examples/%.c $(BUILD)/flags | $(BUILD)/include/ropegrad
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DEPFLAGS) -shared $< -o $@ $(LDFLAGS_ALL)
# examples/custom_task.c: a program's own task in the engine (docs/extending.md)
$(BUILD)/examples/custom_task: $(BUILD)/f32/examples/custom_task.o $(ENGINE_LIB) $(TASK_LIB) $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(PKG_LIBS) $(CJSON_LIBS) $(MPI_LIBS)
$(BUILD)/examples/%: $(BUILD)/f32/examples/%.o $(LIB32)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDFLAGS_ALL) $(PKG_LIBS)
