# SPDX-License-Identifier: MIT
# ember: build, test and run. `make help` lists the targets. O=DIR puts the build elsewhere,
# V=1 shows full commands. Everything generated lives under $(OUTPUT).

O ?= build
OUTPUT := $(abspath $(O))
SRCDIR := $(abspath .)
SHARED ?= $(abspath ../shared)
# FlameGraph's Perl scripts for the side-by-side tests, when ../shared has them (never copied here)
FLAMEGRAPH_DIR ?= $(wildcard $(SHARED)/reference/FlameGraph)
PREFIX ?= /usr/local
DESTDIR ?=
FUZZ_SECONDS ?= 60
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
PKG_CONFIG ?= pkg-config

ifeq ($(V),1)
	Q =
	msg =
else
	Q = @
	msg = @printf '  %-8s %s\n' "$(1)" "$(patsubst $(OUTPUT)/%,%,$(2))";
endif

WARNINGS := -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes -Wno-unused-parameter
ifeq ($(CI),true)
	WARNINGS += -Werror
endif
INCLUDES := -Iinclude -I$(OUTPUT)
BASE_CFLAGS := -std=gnu11 -g $(WARNINGS) $(INCLUDES) -D_GNU_SOURCE -fno-omit-frame-pointer
CFLAGS ?= -O2
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -O1
FUZZ_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -O1

pc = $(shell $(PKG_CONFIG) --silence-errors $(1) $(2))
DAEMON_PKGS := libbpf libelf libdw libdebuginfod libmicrohttpd zlib libpcre2-8 libcurl
PKG_CFLAGS := $(call pc,--cflags,$(DAEMON_PKGS) gsl cmocka)
CLI_LIBS := $(call pc,--libs,gsl zlib libprotobuf-c libpcre2-8) -lz -lm
DAEMON_LIBS := $(call pc,--libs,$(DAEMON_PKGS)) -lz -lm -lpthread -liberty
CMOCKA_LIBS := $(call pc,--libs,cmocka)
ALL_LIBS := $(DAEMON_LIBS) $(CLI_LIBS)

# Sources by module group; new files are picked up without editing this file.
# core: src/core/<part>/ (base, model, formats, render, analysis); the daemon's stages:
# src/daemon/<stage>/ (service, sample, proc, elf, unwind, symbols, ingest, store, export, http,
# pipeline);
# docs/architecture.md.
CORE_SRCS := $(sort $(wildcard src/core/*/*.c))
DAEMON_SRCS := $(sort $(wildcard src/daemon/*/*.c))
CLI_SRCS := $(sort $(wildcard src/cli/*.c))
BPF_SRCS := $(sort $(wildcard bpf/*.bpf.c))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
MOCK_SRCS := $(sort $(wildcard tests/unit/mock_*.c))
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
WORKLOAD_SRCS := $(sort $(wildcard tests/workloads/*.c))
HAVE_DAEMON := $(wildcard src/daemon/main.c)

SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))
VMLINUX := $(OUTPUT)/vmlinux.h

# Three builds of the same sources: plain, sanitized (make test runs the unit tests in both,
# and replays the fuzz seeds with the latter) and libFuzzer-instrumented (clang: make fuzz).
objs = $(patsubst %.c,$(1)/%.o,$(2))
ROOTS := $(OUTPUT)/obj $(OUTPUT)/asan $(OUTPUT)/fuzz
EMBER := $(OUTPUT)/ember
EMBERD := $(OUTPUT)/emberd
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/obj/tests/unit/%,$(UNIT_SRCS))
ASAN_UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/asan/tests/unit/%,$(UNIT_SRCS))
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUTPUT)/fuzz/bin/%,$(FUZZ_SRCS))
# the same targets linked with tests/fuzz/replay.c and the sanitized build: what `make test`
# replays the seed corpora with (no third, coverage-instrumented build of every source)
SEED_BINS := $(patsubst tests/fuzz/%.c,$(OUTPUT)/asan/fuzz/%,$(FUZZ_SRCS))
WORKLOAD_BINS := $(patsubst tests/workloads/%.c,$(OUTPUT)/workloads/%,$(WORKLOAD_SRCS))
BINS := $(EMBER) $(if $(HAVE_DAEMON),$(EMBERD))

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps deps-run test check unit golden fuzz fuzz-bins seed-bins bench run install uninstall clean \
	format vmlinux check-layering workloads help regen-golden integration soak

all: $(BINS) workloads

help:
	@echo "targets: all deps deps-run test check unit golden integration fuzz bench soak run install"
	@echo "         uninstall clean format vmlinux check-layering regen-golden"
	@echo "vars:    O=build V=1 PREFIX=/usr/local DESTDIR= FUZZ_SECONDS=60 CI=true"

# Debian packages (scripts/packages.txt): `deps` both parts and the browser tests' npm packages,
# `deps-run` what building and running emberd needs. `make test` and `make run` run them once,
# then again only when the lists change (a stamp in $(OUTPUT)); `make deps` always checks.
DEPS_TEST_STAMP := $(OUTPUT)/.stamp-deps-test
DEPS_RUN_STAMP := $(OUTPUT)/.stamp-deps-run
deps:
	$(Q)NPM_PREFIX=$(OUTPUT)/node scripts/deps.sh test
	$(Q)mkdir -p $(OUTPUT) && touch $(DEPS_TEST_STAMP) $(DEPS_RUN_STAMP)
deps-run:
	$(Q)scripts/deps.sh run
	$(Q)mkdir -p $(OUTPUT) && touch $(DEPS_RUN_STAMP)
$(DEPS_TEST_STAMP): scripts/packages.txt scripts/deps.sh $(wildcard tests/browser/package.json)
	$(Q)NPM_PREFIX=$(OUTPUT)/node scripts/deps.sh test
	$(Q)mkdir -p $(@D) && touch $@ $(DEPS_RUN_STAMP)
$(DEPS_RUN_STAMP): scripts/packages.txt scripts/deps.sh
	$(Q)scripts/deps.sh run
	$(Q)mkdir -p $(@D) && touch $@

# --- BPF: vmlinux.h -> object -> skeleton -----------------------------------------------------
vmlinux: $(VMLINUX)
$(VMLINUX):
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)if [ -r /sys/kernel/btf/vmlinux ]; then \
		$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@; \
	else \
		echo "no /sys/kernel/btf/vmlinux: cannot generate vmlinux.h" >&2; exit 1; \
	fi

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c include/ember/daemon/sample/bpf_shared.h $(wildcard bpf/*.h) $(VMLINUX)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Iinclude -I$(OUTPUT) -Ibpf \
		-c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.tmp && mv $@.tmp $@

# --- C objects, in each of the three builds ---------------------------------------------------
$(OUTPUT)/obj/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

$(OUTPUT)/asan/%.o: %.c
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(ASAN_FLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

$(OUTPUT)/fuzz/%.o: %.c
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BASE_CFLAGS) $(FUZZ_FLAGS) $(PKG_CFLAGS) -Wno-unused-command-line-argument \
		-MMD -MP -c $< -o $@

# pprof: proto/NAME.proto -> $(OUTPUT)/gen/NAME.pb-c.{c,h} (protoc-c), compiled into the
# core archive of each build; src/core/formats/pprof.c includes "gen/NAME.pb-c.h".
PROTO_GEN := $(patsubst proto/%.proto,$(OUTPUT)/gen/%.pb-c.c,$(wildcard proto/*.proto))
$(OUTPUT)/gen/%.pb-c.c $(OUTPUT)/gen/%.pb-c.h: proto/%.proto
	$(call msg,PROTOC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)protoc-c --proto_path=proto --c_out=$(@D) $<
$(foreach r,$(ROOTS),$(call objs,$(r),src/core/formats/pprof.c src/core/formats/otlp.c)): | \
	$(PROTO_GEN:.c=.h)
$(OUTPUT)/obj/gen/%.o: $(OUTPUT)/gen/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) -c $< -o $@
$(OUTPUT)/asan/gen/%.o: $(OUTPUT)/gen/%.c
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(ASAN_FLAGS) -c $< -o $@
$(OUTPUT)/fuzz/gen/%.o: $(OUTPUT)/gen/%.c
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BASE_CFLAGS) $(FUZZ_FLAGS) -c $< -o $@

# Daemon code and tests may include the generated skeletons.
$(foreach r,$(ROOTS),$(call objs,$(r),$(DAEMON_SRCS) src/daemon/main.c $(UNIT_SRCS) \
	$(FUZZ_SRCS) tests/fuzz/replay.c)): | $(SKELS)

# emberd's dashboard: src/daemon/http/dashboard/* compiled in as $(OUTPUT)/gen/dashboard_assets.c.
DASH_ASSETS := $(sort $(wildcard src/daemon/http/dashboard/*))
# Archives per module group, so that each binary links only the objects it uses.
define ARCHIVES
$(1)/libember-core.a: $(call objs,$(1),$(CORE_SRCS)) \
	$(patsubst $(OUTPUT)/gen/%.c,$(1)/gen/%.o,$(PROTO_GEN))
$(1)/libember-daemon.a: $(call objs,$(1),$(DAEMON_SRCS)) \
	$(if $(DASH_ASSETS),$(1)/gen/dashboard_assets.o)
endef
$(OUTPUT)/gen/dashboard_assets.c: $(DASH_ASSETS) scripts/gen-assets.sh
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)scripts/gen-assets.sh $@ $(DASH_ASSETS)
$(foreach r,$(ROOTS),$(eval $(call ARCHIVES,$(r))))
%.a:
	$(call msg,AR,$@)
	$(Q)mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

LIBS_OF = $(1)/libember-daemon.a $(1)/libember-core.a

# --- binaries --------------------------------------------------------------------------------
$(EMBER): $(call objs,$(OUTPUT)/obj,$(CLI_SRCS)) $(OUTPUT)/obj/libember-core.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(CLI_LIBS)

$(EMBERD): $(OUTPUT)/obj/src/daemon/main.o $(call LIBS_OF,$(OUTPUT)/obj)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(ALL_LIBS)

# Sanitized binaries for integration tests that want them (make asan-bins).
$(OUTPUT)/asan/ember: $(call objs,$(OUTPUT)/asan,$(CLI_SRCS)) $(OUTPUT)/asan/libember-core.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ASAN_FLAGS) -o $@ $^ $(CLI_LIBS)
$(OUTPUT)/asan/emberd: $(OUTPUT)/asan/src/daemon/main.o $(call LIBS_OF,$(OUTPUT)/asan)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ASAN_FLAGS) -o $@ $^ $(ALL_LIBS)
asan-bins: $(OUTPUT)/asan/ember $(if $(HAVE_DAEMON),$(OUTPUT)/asan/emberd)

# Unit tests: one cmocka binary per tests/unit/test_<module>.c. A test that needs mocks or
# --wrap seams says so in tests/unit/test_<module>.mk (TEST_<module>_EXTRA = mock_x.c,
# TEST_<module>_LDFLAGS = -Wl,--wrap=open).
-include $(wildcard tests/unit/*.mk)
define UNIT_RULE
$(1)/tests/unit/test_$(2): $(1)/tests/unit/test_$(2).o \
		$(call objs,$(1),$(addprefix tests/unit/,$(TEST_$(2)_EXTRA))) $(call LIBS_OF,$(1))
	$$(call msg,LINK,$$@)
	$(Q)$$(CC) $(3) $(TEST_$(2)_LDFLAGS) -o $$@ $$^ $(CMOCKA_LIBS) $(ALL_LIBS)
endef
UNIT_NAMES := $(patsubst tests/unit/test_%.c,%,$(UNIT_SRCS))
$(foreach n,$(UNIT_NAMES),$(eval $(call UNIT_RULE,$(OUTPUT)/obj,$(n),$(CFLAGS))))
$(foreach n,$(UNIT_NAMES),$(eval $(call UNIT_RULE,$(OUTPUT)/asan,$(n),$(ASAN_FLAGS))))

# Fuzz targets (clang, libFuzzer).
$(OUTPUT)/fuzz/bin/%: $(OUTPUT)/fuzz/tests/fuzz/%.o $(call LIBS_OF,$(OUTPUT)/fuzz)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -fsanitize=fuzzer,address,undefined -o $@ $^ $(ALL_LIBS)
fuzz-bins: $(FUZZ_BINS)
$(OUTPUT)/asan/fuzz/%: $(OUTPUT)/asan/tests/fuzz/%.o $(OUTPUT)/asan/tests/fuzz/replay.o \
		$(call LIBS_OF,$(OUTPUT)/asan)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ASAN_FLAGS) -o $@ $^ $(ALL_LIBS)
seed-bins: $(SEED_BINS)

# Test workloads: frame pointers, no inlining surprises, symbols kept; a workload may set its own
# code generation flags (WORKLOAD_<name>_CFLAGS), e.g. to be built as distributions build.
WORKLOAD_CFLAGS := -O1 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls
WORKLOAD_nofp_CFLAGS := -O2 -fomit-frame-pointer
WORKLOAD_shortlived_CFLAGS := -O2 -fomit-frame-pointer
WORKLOAD_forker_CFLAGS := -O2 -fomit-frame-pointer
WORKLOAD_offcpu_nofp_CFLAGS := -O2 -fomit-frame-pointer
$(OUTPUT)/workloads/offcpu_nofp: tests/workloads/offcpu.c
WORKLOAD_stops_CFLAGS := -O2 -fomit-frame-pointer
# a hostile V8 (test_node.sh): forged v8dbg_ symbols exported; its frames call inside asm, so no
# red zone; fakev8_compressed: the same with a layout ember refuses
WORKLOAD_fakev8_CFLAGS := -O1 -fno-omit-frame-pointer -mno-red-zone
WORKLOAD_fakev8_LDFLAGS := -rdynamic
WORKLOAD_fakev8_compressed_CFLAGS := -O1 -fno-omit-frame-pointer -mno-red-zone
WORKLOAD_fakev8_compressed_LDFLAGS := -rdynamic
# a hostile JVM (test_java.sh): loads libjvm.so, forges its code cache; no frame pointer of its
# own (its forged frame steps to main by the stack, and main is unwound by its CFI)
WORKLOAD_fakejvm_CFLAGS := -O2 -fomit-frame-pointer
$(OUTPUT)/workloads/%: tests/workloads/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -g $(or $(WORKLOAD_$*_CFLAGS),$(WORKLOAD_CFLAGS)) -Wall -o $@ $< \
		-lm -lpthread -ldl $(WORKLOAD_$*_LDFLAGS)
# the Java workload (test_java.sh): its classes by javac, when a JDK is installed
# (openjdk-17-jdk-headless, scripts/packages.txt); without one the test says so
JAVAC ?= $(shell command -v javac 2>/dev/null)
JAVA_WORKLOADS := $(if $(JAVAC),$(OUTPUT)/workloads/javaburn/App.class)
$(OUTPUT)/workloads/javaburn/App.class: tests/workloads/javaburn/App.java
	$(call msg,JAVAC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(JAVAC) -nowarn -d $(@D) $<
workloads: $(WORKLOAD_BINS) $(JAVA_WORKLOADS)

# --- tests -----------------------------------------------------------------------------------
TEST_ENV := OUTPUT=$(OUTPUT) SRCDIR=$(SRCDIR) SHARED=$(SHARED) EMBER=$(EMBER) EMBERD=$(EMBERD) \
	NODE_PATH=$(OUTPUT)/node/node_modules FLAMEGRAPH_DIR=$(FLAMEGRAPH_DIR)

# What `make test T=...` builds: a whole suite's binaries, or only the named test's. T takes
# what tests/run.sh takes: suites (unit, golden, integration...) and names (unit/test_store,
# integration/test_unwind, test_unwind, 'unit/test_s*', golden/CASE).
TEST_WORDS := $(or $(T),all)
unit_bins_of = $(foreach n,$(patsubst tests/unit/%.c,%,$(wildcard tests/unit/$(1).c)),\
	$(OUTPUT)/obj/tests/unit/$(n) $(OUTPUT)/asan/tests/unit/$(n))
test_needs = $(strip $(if $(filter all,$(1)),all $(UNIT_BINS) $(ASAN_UNIT_BINS) seed-bins,\
	$(if $(filter unit,$(1)),$(UNIT_BINS) $(ASAN_UNIT_BINS) workloads,\
	$(if $(filter golden golden/%,$(1)),$(EMBER),\
	$(if $(filter fuzz-seeds fuzz-seeds/%,$(1)),seed-bins,\
	$(if $(filter layering,$(1)),,\
	$(if $(filter unit/% asan/%,$(1)),$(call unit_bins_of,$(notdir $(1))) workloads,\
	$(if $(filter cli/% integration/% browser/%,$(1)),all,\
	$(call unit_bins_of,$(1)) all))))))))
TEST_BUILD := $(sort $(foreach w,$(TEST_WORDS),$(call test_needs,$(w))) \
	$(if $(filter 1,$(EMBER_ASAN)),asan-bins))
# The whole suite in two lanes (tests/run.sh): the first lane's tests need only the plain build;
# the unit and fuzz binaries (two thirds of the build) are built by the second lane, beside the
# first lane's tests, before its own suites.
TEST_LANES ?= $(shell nproc)
TEST_SPLIT := $(and $(filter all,$(TEST_WORDS)),$(filter-out 0 1,$(TEST_LANES)))
TEST_BESIDE_BUILD := $(filter-out all,$(TEST_BUILD))
# not $(MAKE) in the recipe below: `make -n test` would run the tests
TEST_BESIDE_MAKE = $(MAKE)

test: $(DEPS_TEST_STAMP)
	$(Q)$(if $(TEST_BUILD),t0=$$(date +%s); $(MAKE) -s -j$(shell nproc) --no-print-directory \
		$(if $(TEST_SPLIT),all $(if $(filter 1,$(EMBER_ASAN)),asan-bins),$(TEST_BUILD)) && \
		echo "built in $$(($$(date +%s) - t0)) s")
	$(Q)$(TEST_ENV) TEST_LANES=$(TEST_LANES) $(if $(TEST_SPLIT),TEST_BESIDE_BUILD="$(TEST_BESIDE_MAKE) -s \
		-j$(shell nproc) --no-print-directory $(TEST_BESIDE_BUILD)") tests/run.sh $(TEST_WORDS)

check: all $(UNIT_BINS) $(ASAN_UNIT_BINS)
	$(Q)$(TEST_ENV) tests/run.sh unit golden

unit: $(UNIT_BINS) $(ASAN_UNIT_BINS) workloads
	$(Q)$(TEST_ENV) tests/run.sh unit

golden: $(EMBER)
	$(Q)$(TEST_ENV) tests/run.sh golden

integration: all asan-bins
	$(Q)$(TEST_ENV) tests/run.sh integration

regen-golden: $(EMBER)
	$(Q)$(TEST_ENV) tests/golden.sh --regen

fuzz: fuzz-bins
	$(Q)$(TEST_ENV) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh $(FUZZ_BINS)

bench: $(DEPS_TEST_STAMP) all
	$(Q)$(TEST_ENV) tests/bench/run.sh

soak: $(DEPS_TEST_STAMP) all
	$(Q)$(TEST_ENV) tests/bench/run.sh soak attack

check-layering:
	$(Q)scripts/check-layering.sh

format:
	$(Q)clang-format -i $(wildcard src/*/*.c src/*/*/*.[ch] include/ember/*/*/*.h bpf/*.c tests/*/*.c)

# --- run, install ----------------------------------------------------------------------------
run: $(DEPS_RUN_STAMP)
	$(Q)$(MAKE) -s -j$(shell nproc) --no-print-directory $(BINS)
	$(Q)if [ ! -x $(EMBERD) ]; then echo "emberd is not built yet" >&2; exit 1; fi
	$(EMBERD) --config config/emberd.conf

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin
	install -m 0755 $(EMBER) $(DESTDIR)$(PREFIX)/bin/ember
	$(if $(HAVE_DAEMON),install -m 0755 $(EMBERD) $(DESTDIR)$(PREFIX)/sbin/emberd)
	$(if $(wildcard config/emberd.conf),install -d -m 0755 $(DESTDIR)/etc/ember && \
		{ [ -e $(DESTDIR)/etc/ember/emberd.conf ] && \
		  echo "kept the existing $(DESTDIR)/etc/ember/emberd.conf" || \
		  install -m 0644 config/emberd.conf $(DESTDIR)/etc/ember/emberd.conf; })
	$(if $(wildcard systemd/emberd.service),install -d $(DESTDIR)/lib/systemd/system && \
		sed 's|/usr/local/sbin/emberd|$(PREFIX)/sbin/emberd|' systemd/emberd.service \
		>$(DESTDIR)/lib/systemd/system/emberd.service && \
		chmod 0644 $(DESTDIR)/lib/systemd/system/emberd.service)
	$(if $(wildcard docs/man/*.[0-9]),$(foreach m,$(wildcard docs/man/*.[0-9]),\
		install -d $(DESTDIR)$(PREFIX)/share/man/man$(subst .,,$(suffix $(m))) && \
		install -m 0644 $(m) $(DESTDIR)$(PREFIX)/share/man/man$(subst .,,$(suffix $(m)))/;))

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/ember $(DESTDIR)$(PREFIX)/sbin/emberd \
		$(DESTDIR)/lib/systemd/system/emberd.service
	$(foreach m,$(wildcard docs/man/*.[0-9]),\
		rm -f $(DESTDIR)$(PREFIX)/share/man/man$(subst .,,$(suffix $(m)))/$(notdir $(m));)
	@if cmp -s config/emberd.conf $(DESTDIR)/etc/ember/emberd.conf; then \
		rm -f $(DESTDIR)/etc/ember/emberd.conf; \
		rmdir $(DESTDIR)/etc/ember 2>/dev/null || true; \
	elif [ -e $(DESTDIR)/etc/ember/emberd.conf ]; then \
		echo "left the edited $(DESTDIR)/etc/ember/emberd.conf in place"; fi

clean:
	rm -rf $(OUTPUT)

-include $(shell find $(OUTPUT) -name '*.d' 2>/dev/null)
