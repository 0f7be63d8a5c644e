# attnstep: build, run and test. `make run` opens the default lesson; `make test` runs every test.
# Every src/LAYER/*.c (all but src/cli/main.c) goes into one static library that the program and
# the tests link, so the tests exercise exactly the code the program runs. New tests/test_*.c
# files are picked up by themselves; tests/*.c files without that prefix are test support code.

CC      ?= cc
WARN    := -Wall -Wextra -Werror -Wshadow -Wconversion -Wno-sign-conversion
CFLAGS  ?= -O2 -g
BASE_CFLAGS = -std=c11 -ffp-contract=off $(WARN) -D_POSIX_C_SOURCE=200809L $(CFLAGS)
BUILD   ?= build
DEFAULT_LESSON := lessons/cat_sat.yaml
VERSION := $(shell sed -n 's/^\#define ATTNSTEP_VERSION "\(.*\)"/\1/p' src/cli/main.c)

# Installation (GNU conventions: PREFIX or prefix, and DESTDIR for staging).
PREFIX  ?= /usr/local
prefix  ?= $(PREFIX)
BINDIR  := $(prefix)/bin
LESSONDIR := $(prefix)/share/attnstep/lessons
MANDIR  := $(prefix)/share/man/man1

# The layers (docs/DESIGN.md): each folder of src/ is compiled with the include paths of the
# layers it may use and the package flags it needs, and no others, so the core cannot reach
# libyaml or curses and a stray include of another layer's header fails the build.
#   core    libc and libm only      text    libc, utf8proc
#   lesson  core, text, libyaml     output  core, text, lesson
#   ui      core, text, lesson, net, curses   cli (main)  every layer
#   net     text (the classroom protocol; the only layer that may reach sockets)
YAML_CFLAGS  := $(shell pkg-config --cflags yaml-0.1 2>/dev/null)
CURSES_CFLAGS := $(shell pkg-config --cflags ncursesw 2>/dev/null) -D_XOPEN_SOURCE_EXTENDED
LAYER_FLAGS_core   := -Isrc/core
LAYER_FLAGS_text   := -Isrc/text $(shell pkg-config --cflags libutf8proc 2>/dev/null)
LAYER_FLAGS_lesson := -Isrc/lesson -Isrc/core -Isrc/text $(YAML_CFLAGS)
LAYER_FLAGS_output := -Isrc/output -Isrc/core -Isrc/text -Isrc/lesson
LAYER_FLAGS_ui     := -Isrc/ui -Isrc/core -Isrc/text -Isrc/lesson -Isrc/output -Isrc/net $(CURSES_CFLAGS) \
                      -DATTNSTEP_LESSON_DIR='"$(LESSONDIR)"'
ZMQ_CFLAGS := $(shell pkg-config --cflags libzmq 2>/dev/null)
LAYER_FLAGS_net    := -Isrc/net -Isrc/text $(ZMQ_CFLAGS) -D_DEFAULT_SOURCE
LAYER_FLAGS_cli    := -Isrc/cli -Isrc/core -Isrc/text -Isrc/lesson -Isrc/output -Isrc/ui -Isrc/net \
                      -DATTNSTEP_LESSON_DIR='"$(LESSONDIR)"'
LAYERS   := core text lesson output ui net
ALL_INCLUDES := $(LAYER_FLAGS_ui) $(YAML_CFLAGS)
LIBS    = $(shell pkg-config --libs ncursesw yaml-0.1 libutf8proc libzmq 2>/dev/null) -lm -lpthread
TEST_LIBS = $(shell pkg-config --libs cmocka 2>/dev/null)

# src/core/ops/ is the core's too (its objects go to build/core/ops/ by the core's rule); the
# wildcards find nothing, and change nothing, while that folder does not exist.
LIB_SRC  := $(foreach layer,$(LAYERS),$(wildcard src/$(layer)/*.c)) $(wildcard src/core/ops/*.c)
LIB_OBJ  := $(LIB_SRC:src/%.c=$(BUILD)/%.o)
HEADERS  := $(wildcard src/*/*.h) $(wildcard src/core/ops/*.h)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
SUPPORT_SRC := $(filter-out $(TEST_SRC),$(wildcard tests/*.c))
SUPPORT_OBJ := $(SUPPORT_SRC:tests/%.c=$(BUILD)/tests/%.o)

.PHONY: all run test check test-run check-run test-asan fuzz install uninstall bench bench-whatif deps \
        update-golden mutants clean cross-arm64
all: attnstep $(BUILD)/attnstep.1 $(BUILD)/attnstep.man

deps:
	@bash .ci/install-deps test

attnstep: $(BUILD)/cli/main.o $(BUILD)/cli/help.o $(BUILD)/libattnstep.a
	$(CC) $(BASE_CFLAGS) -o $@ $^ $(LIBS)

# The manual page: OPTIONS, ENVIRONMENT and EXIT STATUS come from main.c's tables, like --help;
# KEYS from the UI's key table, like the help overlay. attnstep.man keeps @LESSONDIR@, which
# attnstep.1 (and make install, for the folder it installs to) replaces.
$(BUILD)/attnstep.man: src/cli/attnstep.1.in attnstep
	./attnstep --help=man >$@.options
	./attnstep --help-keys=man >$@.keys
	sed -e '/^@OPTIONS@$$/{r $@.options' -e 'd}' -e '/^@KEYS@$$/{r $@.keys' -e 'd}' \
	    -e 's|@VERSION@|$(VERSION)|' src/cli/attnstep.1.in >$@
	rm -f $@.options $@.keys
$(BUILD)/attnstep.1: $(BUILD)/attnstep.man
	sed 's|@LESSONDIR@|$(LESSONDIR)|' $< >$@

$(BUILD)/libattnstep.a: $(LIB_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

# One rule per layer: the object's folder names its layer and so its flags.
define layer_rule
$(BUILD)/$(1)/%.o: src/$(1)/%.c $(HEADERS)
	@mkdir -p $$(@D)
	$$(CC) $$(BASE_CFLAGS) $$(LAYER_FLAGS_$(1)) -c -o $$@ $$<
endef
$(foreach layer,$(LAYERS) cli,$(eval $(call layer_rule,$(layer))))

$(BUILD)/tests/%.o: tests/%.c $(HEADERS) $(wildcard tests/*.h)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(ALL_INCLUDES) -c -o $@ $<

$(BUILD)/tests/test_%: $(BUILD)/tests/test_%.o $(SUPPORT_OBJ) $(BUILD)/libattnstep.a
	$(CC) $(BASE_CFLAGS) -o $@ $^ $(LIBS) $(TEST_LIBS)

# The program linked in a folder of its own, for builds that cannot run ./attnstep here (cross).
$(BUILD)/attnstep: $(BUILD)/cli/main.o $(BUILD)/cli/help.o $(BUILD)/libattnstep.a
	$(CC) $(BASE_CFLAGS) -o $@ $^ $(LIBS)

# An AArch64 build of the program and of the kernel tests in build/arm64 (Debian's cross
# compiler and the arm64 multiarch libraries; .ci/install-deps test installs them), which
# tests/check_arm64.sh runs under qemu-aarch64.
CROSS_ARM64 ?= aarch64-linux-gnu-
ARM64_PKG_CONFIG_LIBDIR := /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig
cross-arm64:
	PKG_CONFIG_LIBDIR=$(ARM64_PKG_CONFIG_LIBDIR) $(MAKE) --no-print-directory BUILD=$(BUILD)/arm64 \
	    CC=$(CROSS_ARM64)gcc AR=$(CROSS_ARM64)ar $(BUILD)/arm64/attnstep \
	    $(BUILD)/arm64/tests/test_kernels $(BUILD)/arm64/tests/test_paths

run:
	@bash .ci/install-deps run
	@$(MAKE) --no-print-directory attnstep
	./attnstep $(DEFAULT_LESSON)

# The suites: every cmocka binary and every tests/check_*.sh script, each a target of its own
# (suite-NAME), so that make runs them side by side, JOBS at a time (one per processor unless
# given). tests/run.sh runs each with its output kept in $(BUILD)/suites/NAME.log, printed only
# when it fails, then the closing line "tests: N passed, N failed" and the failed suites' names.
# SLOW_SUITES, the suites of several seconds or more (valgrind, qemu, tmux, PyTorch, the
# classroom, the handouts, figures, --set's edits and the size sweep), slowest first, are started first (FIRST_SUITES), so that the run does not end
# waiting for a slow suite that started late; `make check`, the edit-compile-test loop, runs
# every other suite.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
TEST_SUITES  := $(TEST_BIN:$(BUILD)/tests/%=%)
CHECK_SUITES := $(patsubst tests/%.sh,%,$(wildcard tests/check_*.sh))
SLOW_SUITES  := check_valgrind check_arm64 check_cli check_golden_screens check_torch \
                check_torch_gradients check_torch_training check_class check_escapes check_tmux \
                check_write_errors check_redraw check_markdown check_svg check_set check_sweep
ALL_SUITES   := $(TEST_SUITES) $(CHECK_SUITES)
# test_kernels and test_paths take seconds here but are the longest of `make test-asan` (which
# leaves out valgrind and arm64): they start right after those two.
FIRST_SUITES := check_valgrind check_arm64 test_kernels test_paths \
                $(filter-out check_valgrind check_arm64,$(SLOW_SUITES))
SUITES       := $(filter $(ALL_SUITES),$(FIRST_SUITES)) $(filter-out $(FIRST_SUITES),$(ALL_SUITES))
QUICK_SUITES := $(filter-out $(SLOW_SUITES),$(SUITES))

# First the packages (as `make run` does: installed when root, else the apt-get line and a
# failure), before anything is compiled, then the suites in a second make that reads the
# package flags (pkg-config) afresh.
test:
	@bash .ci/install-deps test
	@$(MAKE) --no-print-directory -j$(JOBS) test-run
check:
	@bash .ci/install-deps test
	@$(MAKE) --no-print-directory -j$(JOBS) check-run
test-run: $(SUITES:%=suite-%)
	@bash tests/run.sh --summary $(SUITES)
check-run: $(QUICK_SUITES:%=suite-%)
	@bash tests/run.sh --summary $(QUICK_SUITES)

# A suite runs once everything it may use is built: a script after the whole build (some call
# make themselves, which then finds nothing to do, so no two makes write the same file), a
# cmocka binary as soon as it is linked.
.PHONY: $(ALL_SUITES:%=suite-%)
$(TEST_SUITES:%=suite-%): suite-%: $(BUILD)/tests/%
	@bash tests/run.sh --suite $* $(BUILD)/tests/$*
$(CHECK_SUITES:%=suite-%): suite-%: all $(TEST_BIN)
	@bash tests/run.sh --suite $* bash tests/$*.sh

# The whole suite again with AddressSanitizer and UndefinedBehaviorSanitizer, in a copy of the
# tree under build/asan so that ./attnstep there is the instrumented one; any report fails it.
# NCURSES_GPM_TERMS empty keeps ncurses from loading the GPM mouse client on TERM=linux: that
# library keeps 10 bytes LeakSanitizer reports, and its frames cannot be named for a suppression.
# Left out: valgrind (cannot run sanitized binaries), check_memory (its ulimit -v leaves no room
# for the sanitizers' shadow memory), check_arm64 (its cross build under qemu is not sanitized:
# the plain `make test` runs it).
# -O2, as the real build: at -O1 the vector kernels' intrinsics stay calls, each instrumented,
# and test_kernels alone took 128 s of processor time (6 s at -O2), most of this target's time.
SANITIZE := -O2 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
test-asan:
	rm -rf $(BUILD)/asan && mkdir -p $(BUILD)/asan
	cp -r Makefile src tests lessons tools .ci docs README.md $(BUILD)/asan/
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	NCURSES_GPM_TERMS= \
	    $(MAKE) --no-print-directory -C $(BUILD)/asan test CFLAGS="$(SANITIZE)" \
	    SKIP_SUITES="check_valgrind check_memory check_arm64"

# libFuzzer over the loader, the core and the outputs (fuzz_lesson), the cell language of
# --explain and --at (fuzz_cell), the claim and live-number language of lessons (fuzz_claim),
# the key-script parser (fuzz_keys) and the classroom protocol's messages (fuzz_message, seeded
# by tests/fuzz/messages), each for FUZZ_SECONDS (clang's runtime needed); the last four check
# that nothing they would print holds a raw control character once escaped. Each corpus grows in build/fuzz/corpus-NAME, fuzz_lesson's
# seeded by the lessons and the bad-lesson corpus; crashes are written to build/fuzz/ as
# crash-* files: turn each into a regression test (a tests/bad/ file for fuzz_lesson).
FUZZ_SECONDS ?= 60
FUZZ_SANITIZE := -O1 -g -fno-sanitize-recover=all
FUZZ_FLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L $(FUZZ_SANITIZE) -fsanitize=fuzzer,address,undefined \
              $(LAYER_FLAGS_output) -Itests/fuzz
FUZZ_SRC = $(filter-out src/ui/% src/net/net_link.c,$(LIB_SRC)) src/ui/ui_keys.c
FUZZ_PKG_CFLAGS = $(shell pkg-config --cflags yaml-0.1 libutf8proc)
FUZZ_LIBS = $(shell pkg-config --libs yaml-0.1 libutf8proc) -lm -lpthread
FUZZ_TARGETS := fuzz_lesson fuzz_cell fuzz_claim fuzz_keys fuzz_message
# The code under test is compiled once for every target (instrumented for coverage, not
# linked with libFuzzer's main) into one archive each target links, so that make -j compiles
# it in parallel and five targets do not compile it five times over (most of `make fuzz`'s
# time before). fuzz_keys adds the key table and parser of the UI (key codes from curses.h, no
# curses calls).
FUZZ_OBJ = $(FUZZ_SRC:src/%.c=$(BUILD)/fuzz/obj/%.o)
$(BUILD)/fuzz/obj/%.o: src/%.c $(HEADERS)
	@mkdir -p $(@D)
	clang -std=c11 -D_POSIX_C_SOURCE=200809L $(FUZZ_SANITIZE) \
	    -fsanitize=fuzzer-no-link,address,undefined $(LAYER_FLAGS_output) -Isrc/net \
	    $(FUZZ_PKG_CFLAGS) $(FUZZ_OBJ_FLAGS_$(notdir $*)) -c -o $@ $<
FUZZ_OBJ_FLAGS_ui_keys := -Isrc/ui $(CURSES_CFLAGS)
$(BUILD)/fuzz/libfuzzed.a: $(FUZZ_OBJ)
	rm -f $@ && $(AR) rcs $@ $^
FUZZ_EXTRA_fuzz_keys := -Isrc/ui $(CURSES_CFLAGS)
$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_escape.c tests/fuzz/fuzz_escape.h \
                 $(BUILD)/fuzz/libfuzzed.a
	mkdir -p $(BUILD)/fuzz/corpus-$*
	clang $(FUZZ_FLAGS) $(FUZZ_PKG_CFLAGS) $(FUZZ_EXTRA_$*) -o $@ tests/fuzz/$*.c \
	    tests/fuzz/fuzz_escape.c $(BUILD)/fuzz/libfuzzed.a $(FUZZ_LIBS)
FUZZ_SEEDS_fuzz_lesson := $(CURDIR)/lessons $(CURDIR)/tests/reference $(CURDIR)/tests/bad
FUZZ_SEEDS_fuzz_keys := $(CURDIR)/tests/screens
FUZZ_SEEDS_fuzz_claim := $(CURDIR)/tests/fuzz/claims
# inputs that once failed a harness, replayed by every run
FUZZ_SEEDS_fuzz_cell := $(CURDIR)/tests/fuzz/cells
FUZZ_SEEDS_fuzz_message := $(CURDIR)/tests/fuzz/messages
FUZZ_EXTRA_fuzz_message := -Isrc/net
# One run per target (fuzz-run-NAME), so that `make -j N fuzz` fuzzes N targets at a time, each
# for FUZZ_SECONDS still (CI: one per processor).
fuzz: $(FUZZ_TARGETS:%=fuzz-run-%)
.PHONY: $(FUZZ_TARGETS:%=fuzz-run-%)
$(FUZZ_TARGETS:%=fuzz-run-%): fuzz-run-%: $(BUILD)/fuzz/%
	cd $(BUILD)/fuzz && ./$* -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 \
	    -rss_limit_mb=4096 -print_final_stats=1 corpus-$* $(FUZZ_SEEDS_$*)

# The lessons go beside the program, where it looks for them (<prefix>/bin/attnstep finds
# <prefix>/share/attnstep/lessons), so one build installs to any PREFIX and the installed tree
# may move; the folder built in (ATTNSTEP_LESSON_DIR) is only a fallback. The manual page names
# the folder of this install.
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LESSONDIR) $(DESTDIR)$(MANDIR)
	install -m 755 attnstep $(DESTDIR)$(BINDIR)/attnstep
	install -m 644 lessons/*.yaml lessons/*.npy lessons/ORDER lessons/README.md $(DESTDIR)$(LESSONDIR)/
	sed 's|@LESSONDIR@|$(LESSONDIR)|' $(BUILD)/attnstep.man >$(DESTDIR)$(MANDIR)/attnstep.1
	chmod 644 $(DESTDIR)$(MANDIR)/attnstep.1

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/attnstep $(DESTDIR)$(MANDIR)/attnstep.1
	rm -rf $(DESTDIR)$(prefix)/share/attnstep

# Times the core against numpy and PyTorch (when installed) and rewrites tests/BENCH.md.
bench: attnstep
	@bash tests/bench/run.sh

# the what-if section of tests/BENCH.md alone (an edit's redraw at n = 1024)
bench-whatif: attnstep
	@bash tests/bench/whatif.sh --write

# The mutation test: each bug of tests/mutants/list put in, built, tested and reverted in a copy
# of the tree; prints the score (tests/RELIABILITY.md). Minutes, so not part of `make test`.
mutants:
	@bash tests/mutants/run.sh

# Rewrites every golden file from the current program; read `git diff` before committing.
update-golden: attnstep
	@UPDATE_GOLDEN=1 bash tests/run.sh --golden-only

clean:
	rm -rf $(BUILD) attnstep
.SECONDARY:
