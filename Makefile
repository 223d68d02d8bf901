# faultline build. `make` builds build/libfaultline.so (shim + runtime) and build/faultline (the CLI).
# New sources need no edit here: runtime/*.c and shim/*.c go into the library, tools/*.c into the
# CLI, lib/*.c (standalone libraries such as RAP) into both, tests/planted/*.c and
# tests/unit/test_*.c become test programs.
CC      ?= gcc
BUILD   := build
WARN    := -Wall -Wextra -Werror
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 $(WARN) -Iinc -D_GNU_SOURCE -DPACKAGE=\"faultline\" -DPACKAGE_VERSION=\"0.1\"

LIB_SRC    := $(wildcard lib/*.c)
RT_SRC     := $(wildcard runtime/*.c shim/*.c)
TOOL_SRC   := $(wildcard tools/*.c)
TOOL_MAIN  := tools/main.c
TOOL_MODS  := $(filter-out $(TOOL_MAIN),$(TOOL_SRC))
PLANTED    := $(wildcard tests/planted/*.c)
EXAMPLES   := $(wildcard examples/*.c)
UNIT       := $(wildcard tests/unit/test_*.c)

RT_OBJ     := $(patsubst %.c,$(BUILD)/pic/%.o,$(RT_SRC) $(LIB_SRC))
TOOL_OBJ   := $(patsubst %.c,$(BUILD)/obj/%.o,$(TOOL_MODS) $(LIB_SRC))
PLANTED_BIN:= $(patsubst tests/planted/%.c,$(BUILD)/tests/%,$(PLANTED))
UNIT_BIN   := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT))
EXAMPLE_BIN:= $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLES))

RT_LIBS    := -ljemalloc -lpthread -ldl -lunwind -luring -lzstd
TOOL_LIBS  := -lbfd -lsqlite3 -lz -lzstd -lm

.PHONY: all test test-long demo bench bench-quick clean deps
all: $(BUILD)/libfaultline.so $(BUILD)/faultline $(PLANTED_BIN) $(UNIT_BIN) $(EXAMPLE_BIN)

deps:
	./deps.sh --test

$(BUILD)/pic/%.o: %.c $(wildcard inc/faultline/*.h runtime/*.h shim/*.h lib/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -ftls-model=initial-exec -c $< -o $@

$(BUILD)/obj/%.o: %.c $(wildcard inc/faultline/*.h tools/*.h lib/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libfaultline.so: $(RT_OBJ)
	$(CC) -shared -o $@ $^ $(RT_LIBS) -Wl,-z,now -Wl,--no-undefined

$(BUILD)/faultline: $(BUILD)/obj/$(TOOL_MAIN:.c=.o) $(TOOL_OBJ)
	$(CC) -o $@ $^ $(TOOL_LIBS)

# Planted programs: built like ordinary user programs, -O2, without frame pointers.
$(BUILD)/tests/%: tests/planted/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer $(WARN) -o $@ $< -lpthread

$(BUILD)/examples/%: examples/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARN) -o $@ $<

$(BUILD)/tests/unit/%: tests/unit/%.c $(TOOL_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itools -Ilib -o $@ $< $(TOOL_OBJ) $(TOOL_LIBS)

test:
	./deps.sh --test
	$(MAKE) all
	tests/run.sh

test-long:
	./deps.sh --test
	$(MAKE) all
	FAULTLINE_TEST_LONG=1 tests/run.sh

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
