# faultline build. `make` builds build/libfaultline.so (shim + runtime) and build/faultline (the CLI).
# New sources need no edit here: runtime/*.c and shim/*.c go into the library, tools/*/*.c (the stage
# folders of tools/README.md, each on the include path) into the CLI, lib/*.c (standalone libraries such as RAP) into both, tests/planted/*.c and
# tests/unit/test_*.c become test programs.
CC      ?= gcc
.DEFAULT_GOAL := all
BUILD   := build
WARN    := -Wall -Wextra -Werror
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 $(WARN) -Iinc -D_GNU_SOURCE -DPACKAGE=\"faultline\" -DPACKAGE_VERSION=\"0.1\" $(CPPFLAGS)

LIB_SRC    := $(wildcard lib/*.c)
RT_SRC     := $(wildcard runtime/*.c shim/*.c)
TOOL_DIRS  := $(sort $(patsubst %/,%,$(dir $(wildcard tools/*/*.c tools/*/*.h))))
TOOL_INC   := $(addprefix -I,$(TOOL_DIRS))
TOOL_SRC   := $(wildcard tools/*/*.c)
TOOL_MAIN  := tools/cmd/main.c
TOOL_MODS  := $(filter-out $(TOOL_MAIN),$(TOOL_SRC))
PLANTED    := $(wildcard tests/planted/*.c)
EXAMPLES   := $(wildcard examples/*.c)
UNIT       := $(wildcard tests/unit/test_*.c)

RT_OBJ     := $(patsubst %.c,$(BUILD)/pic/%.o,$(RT_SRC) $(LIB_SRC))
TOOL_OBJ   := $(patsubst %.c,$(BUILD)/obj/%.o,$(TOOL_MODS) $(LIB_SRC))
PLANTED_BIN:= $(patsubst tests/planted/%.c,$(BUILD)/tests/%,$(PLANTED))
UNIT_BIN   := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT))
EXAMPLE_BIN:= $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLES))

RT_LIBS    := -ljemalloc -lpthread -ldl -lunwind-x86_64 -lunwind -luring -lzstd
TOOL_LIBS  := -lbfd -lsqlite3 -lz -lzstd -lm

# pprof export (tools/render/pprof.c): protoc-c (protobuf-c-compiler) generates the encoder of
# tools/render/pprof_profile.proto into $(BUILD)/gen, built into the CLI with libprotobuf-c.
PPROF_PROTO := tools/render/pprof_profile.proto
PPROF_GEN  := $(BUILD)/gen/pprof_profile.pb-c
TOOL_OBJ   += $(PPROF_GEN).o
TOOL_INC   += -I$(BUILD)/gen
TOOL_LIBS  += -lprotobuf-c

$(PPROF_GEN).c $(PPROF_GEN).h: $(PPROF_PROTO)
	@mkdir -p $(dir $@)
	protoc-c --proto_path=$(dir $(PPROF_PROTO)) --c_out=$(BUILD)/gen $(PPROF_PROTO)
$(PPROF_GEN).o: $(PPROF_GEN).c $(PPROF_GEN).h
	$(CC) $(CFLAGS) -I$(BUILD)/gen -c $< -o $@
$(BUILD)/obj/tools/render/pprof.o: $(PPROF_GEN).h

# report.html's script, style and page body (tools/render/html/*) become byte arrays in a generated
# header, compiled into the CLI: the page is one self-contained file, and its JS stays a JS file.
HTML_ASSETS := $(sort $(wildcard tools/render/html/*))
$(BUILD)/gen/html_assets.h: $(HTML_ASSETS) scripts/embed_assets.sh
	@mkdir -p $(dir $@)
	scripts/embed_assets.sh $@ $(HTML_ASSETS)
$(BUILD)/obj/tools/render/html_report.o: $(BUILD)/gen/html_assets.h

.PHONY: all test test-long demo bench bench-quick clean deps
all: $(BUILD)/libfaultline.so $(BUILD)/debug/libfaultline.so $(BUILD)/faultline $(PLANTED_BIN) $(UNIT_BIN) $(EXAMPLE_BIN) \
     $(BUILD)/tests/plant_recording

deps:
	./deps.sh --test

$(BUILD)/pic/%.o: %.c $(wildcard inc/faultline/*.h runtime/*.h shim/*.h lib/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -ftls-model=initial-exec -c $< -o $@

$(BUILD)/obj/%.o: %.c $(wildcard inc/faultline/*.h tools/*/*.h lib/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TOOL_INC) -c $< -o $@

# The debug runtime: the invariants (FL_ASSERT, runtime/diag.h) checked; tests run planted
# programs with it (FAULTLINE_LIB=build/debug/libfaultline.so).
DEBUG_OBJ  := $(patsubst %.c,$(BUILD)/debug/%.o,$(RT_SRC) $(LIB_SRC))
$(BUILD)/debug/%.o: %.c $(wildcard inc/faultline/*.h runtime/*.h shim/*.h lib/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DFL_DEBUG -fPIC -fvisibility=hidden -ftls-model=initial-exec -c $< -o $@

$(BUILD)/debug/libfaultline.so: $(DEBUG_OBJ)
	$(CC) -shared -o $@ $^ $(RT_LIBS) -Wl,-z,now -Wl,--no-undefined

$(BUILD)/libfaultline.so: $(RT_OBJ)
	$(CC) -shared -o $@ $^ $(RT_LIBS) $(LDFLAGS) -Wl,-z,now -Wl,--no-undefined

$(BUILD)/faultline: $(BUILD)/obj/$(TOOL_MAIN:.c=.o) $(TOOL_OBJ)
	$(CC) -o $@ $^ $(TOOL_LIBS) $(LDFLAGS)

# Planted programs: built like ordinary user programs, -O2, without frame pointers.
# rt_interpose defines the names the shim interposes: -rdynamic puts them first in lookup.
$(BUILD)/tests/rt_interpose: PLANTED_LDFLAGS := -rdynamic -ldl
$(BUILD)/tests/%: tests/planted/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer $(WARN) -o $@ $< -lpthread $(PLANTED_LDFLAGS)

# A test helper, not a planted program: writes a recording of N faults straight to disk.
$(BUILD)/tests/plant_recording: tests/helpers/plant_recording.c lib/record_codec.c $(wildcard inc/faultline/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ tests/helpers/plant_recording.c lib/record_codec.c -lzstd

$(BUILD)/examples/%: examples/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARN) -o $@ $<

# Unit tests of runtime modules (test_rt_*.c): linked with the module under test and the
# runtime's diagnostics and raw system calls, never with the shim (no interposed malloc).
RT_UNIT_OBJ := $(BUILD)/obj/runtime/region.o $(BUILD)/obj/runtime/diag.o $(BUILD)/obj/runtime/sys.o $(BUILD)/obj/runtime/fds.o
$(RT_UNIT_OBJ): $(BUILD)/obj/%.o: %.c $(wildcard inc/faultline/*.h runtime/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
$(BUILD)/tests/unit/test_rt_%: tests/unit/test_rt_%.c $(RT_UNIT_OBJ) $(wildcard runtime/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iruntime -o $@ $< $(RT_UNIT_OBJ) -lpthread -ldl

$(BUILD)/tests/unit/%: tests/unit/%.c $(TOOL_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TOOL_INC) -Ilib -o $@ $< $(TOOL_OBJ) $(TOOL_LIBS)

test:
	./deps.sh --test
	$(MAKE) all
	tests/run.sh

test-long:
	./deps.sh --test
	$(MAKE) all
	FAULTLINE_TEST_LONG=1 FAULTLINE_TEST_TIMEOUT=$${FAULTLINE_TEST_TIMEOUT:-3600} tests/run.sh

demo:
	./deps.sh
	$(MAKE) all
	scripts/demo.sh

bench:
	./deps.sh
	$(MAKE) all
	scripts/bench.sh

bench-quick:
	./deps.sh
	$(MAKE) all
	scripts/bench.sh --quick

clean:
	rm -rf $(BUILD)

# ---------------------------------------------------------------- fuzzing and sanitizers
# `make fuzz`: libFuzzer harnesses of fuzz/ (clang, ASan+UBSan), FUZZ_SECONDS in all (default 600);
# `make check-asan`: build/asan/faultline and the unit tests under ASan+UBSan, then the tool-side
# tests with them (scripts/check-asan.sh). Neither is part of `make test` or CI.
.PHONY: fuzz check-asan
fuzz:
	./deps.sh --fuzz
	scripts/fuzz.sh

check-asan:
	./deps.sh
	$(MAKE) all
	scripts/check-asan.sh

# ---------------------------------------------------------------- manual pages, completion, install, package
# Manual pages: man/*.scd, written in scdoc (a small, fast tool that does man pages only), built into
# $(BUILD)/man/man1 and man5, where `faultline help VERB` finds them in the build tree.
# The bash completion is generated from the command's own option tables (completion/gen.sh).
# `make install` takes PREFIX (default /usr/local) and DESTDIR; the command finds its runtime library
# as ../lib/faultline/libfaultline.so from its own directory (or FAULTLINE_LIB). `make uninstall`
# removes exactly the files install wrote. `make deb`: a Debian package (debian/), built from a copy
# of the source in $(BUILD)/deb, so that its clean step never touches this build tree.
SCDOC      ?= scdoc
MAN1_SRC   := $(wildcard man/*.1.scd)
MAN5_SRC   := $(wildcard man/*.5.scd)
MAN_PAGES  := $(patsubst man/%.scd,$(BUILD)/man/man1/%,$(MAN1_SRC)) $(patsubst man/%.scd,$(BUILD)/man/man5/%,$(MAN5_SRC))
COMPLETION := $(BUILD)/completion/faultline
# the pages' date: the last commit's, so a rebuild gives the same pages (dpkg-buildpackage sets it too)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
ifneq ($(SOURCE_DATE_EPOCH),)
export SOURCE_DATE_EPOCH
else
unexport SOURCE_DATE_EPOCH
endif

.PHONY: man completion install uninstall deb
all: $(MAN_PAGES) $(COMPLETION)
man: $(MAN_PAGES)
completion: $(COMPLETION)

$(BUILD)/man/man1/%.1: man/%.1.scd
	@mkdir -p $(dir $@)
	$(SCDOC) < $< > $@.tmp && mv $@.tmp $@
$(BUILD)/man/man5/%.5: man/%.5.scd
	@mkdir -p $(dir $@)
	$(SCDOC) < $< > $@.tmp && mv $@.tmp $@

$(COMPLETION): $(BUILD)/faultline completion/gen.sh completion/faultline.bash.in
	@mkdir -p $(dir $@)
	completion/gen.sh $(BUILD)/faultline completion/faultline.bash.in > $@.tmp && mv $@.tmp $@

PREFIX        ?= /usr/local
INSTALL_BIN   := $(PREFIX)/bin/faultline
INSTALL_LIB   := $(PREFIX)/lib/faultline/libfaultline.so
INSTALL_MAN   := $(PREFIX)/share/man
INSTALL_COMPL := $(PREFIX)/share/bash-completion/completions/faultline
INSTALLED     := $(INSTALL_BIN) $(INSTALL_LIB) $(INSTALL_COMPL) \
                 $(patsubst $(BUILD)/man/%,$(INSTALL_MAN)/%,$(MAN_PAGES))

install: $(BUILD)/faultline $(BUILD)/libfaultline.so $(MAN_PAGES) $(COMPLETION)
	install -D -m 755 $(BUILD)/faultline $(DESTDIR)$(INSTALL_BIN)
	install -D -m 644 $(BUILD)/libfaultline.so $(DESTDIR)$(INSTALL_LIB)
	install -D -m 644 $(COMPLETION) $(DESTDIR)$(INSTALL_COMPL)
	install -d $(DESTDIR)$(INSTALL_MAN)/man1 $(DESTDIR)$(INSTALL_MAN)/man5
	install -m 644 $(filter $(BUILD)/man/man1/%,$(MAN_PAGES)) $(DESTDIR)$(INSTALL_MAN)/man1
	install -m 644 $(filter $(BUILD)/man/man5/%,$(MAN_PAGES)) $(DESTDIR)$(INSTALL_MAN)/man5

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(PREFIX)/lib/faultline 2>/dev/null

deb:
	./deps.sh --deb
	rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/faultline
	tar --exclude=./build --exclude=./$(BUILD) --exclude=./.git --exclude='./faultline-*' -cf - . | tar -xf - -C $(BUILD)/deb/faultline
	cd $(BUILD)/deb/faultline && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL DEB_BUILD_OPTIONS="parallel=$$(nproc) $(DEB_BUILD_OPTIONS)" dpkg-buildpackage -b -us -uc
	@ls $(BUILD)/deb/*.deb
