# mk/install.mk: make install / make uninstall (docs/install.md).
# `make install PREFIX=/opt/ropegrad` (default /usr/local; DESTDIR is prepended to every path, for packagers):
# the public headers under include/ropegrad/ (#include <ropegrad/ropegrad.h>), libropegrad.a, libropegrad.so.$(VERSION)
# (soname libropegrad.so.$(SOVERSION)) and its links, libropegrad_f64.a, the tasks and engine libraries,
# lib/pkgconfig/ropegrad.pc and ropegrad-f64.pc, bin/train_order and share/ropegrad/eval_sets.h5 (train_order
# finds it through ROPEGRAD_DATA). Then: cc prog.c $$(pkg-config --cflags --libs ropegrad). `make uninstall`
# removes exactly these files. install-files copies what is built (tests/e2e/test_install.c calls it).
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
