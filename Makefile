# ferry's entry points. On a fresh Debian 12 machine as root, each target
# installs what its purposes need (scripts/setup.sh: build, demo, test, vm,
# bench, fuzz, package), builds what it runs, and runs it.
BUILD_DIR ?= build
ASAN_DIR ?= build-asan
TSAN_DIR ?= build-tsan
FUZZ_DIR ?= build-fuzz
JOBS ?= 2
CMAKE_FLAGS ?=
PREFIX ?= /usr/local
DESTDIR ?=
# ctest's parallelism for the integration suites: most of their time is
# spent waiting (on outages, backoffs, servers), so more than one a core.
TEST_JOBS ?= $(JOBS)

.PHONY: all setup ferry build test test-slow test-all test-fast sanitize sanitize-slow tsan fuzz chaos demo bench \
        deb install docs clean format configure

all: build

# Every purpose; `scripts/setup.sh --list PURPOSE` shows what one installs.
setup:
	@scripts/setup.sh all

# Configures the build directory; run again on every build (a second of
# work) so that tests appear once `setup test` has installed GoogleTest.
configure:
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null

# The binary alone.
ferry:
	@scripts/setup.sh build
	@$(MAKE) --no-print-directory configure
	cmake --build $(BUILD_DIR) -j$(JOBS) --target ferry

# Everything: the binary, the test S3 server, tests and benchmarks.
build:
	@scripts/setup.sh build test
	@$(MAKE) --no-print-directory configure
	cmake --build $(BUILD_DIR) -j$(JOBS)

# Every workload ferry has, on embedded defaults: builds only what it runs.
demo:
	@scripts/setup.sh build demo
	@$(MAKE) --no-print-directory configure
	cmake --build $(BUILD_DIR) -j$(JOBS) --target ferry ferry-test-s3
	@scripts/demo.sh $(BUILD_DIR)

# Unit, conformance and integration tests with real peers, but for the
# slowest scenarios (label "slow", run by test-slow; CI runs both).
test: build
	@scripts/setup.sh vm
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(TEST_JOBS) --timeout 600 -LE slow

# The slow scenarios: migrations through outages, crashes and restarts,
# the browser, the Debian package.
test-slow: build
	@scripts/setup.sh vm package
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(TEST_JOBS) --timeout 600 -L slow

# Everything.
test-all: test test-slow

# Unit tests only (no peers, under a minute).
test-fast: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS) -L unit

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/sanitize.sh says which, and why).
sanitize:
	@scripts/setup.sh build test vm
	@JOBS=$(JOBS) TEST_JOBS=$(TEST_JOBS) scripts/sanitize.sh asan $(ASAN_DIR)

# The slow scenarios under the same sanitizers (not in CI: see
# scripts/sanitize.sh).
sanitize-slow:
	@scripts/setup.sh build test vm package
	@JOBS=$(JOBS) TEST_JOBS=$(TEST_JOBS) scripts/sanitize.sh asan $(ASAN_DIR) slow

# ThreadSanitizer: the unit tests, and the integration tests whose daemons
# and runners are the most threaded (scripts/tsan_tests.txt), with every
# ferry process they start built with -fsanitize=thread; a race fails the
# test (exit 66). Suppressions (scripts/tsan.supp) are only for libraries'
# known false positives, each with its reason.
tsan:
	@scripts/setup.sh build test
	@JOBS=$(JOBS) TEST_JOBS=$(TEST_JOBS) scripts/sanitize.sh tsan $(TSAN_DIR)

# Every fuzz target built with clang, libFuzzer, ASan and UBSan, each run
# open-ended for FUZZ_SECONDS (default 60), two at a time; prints each
# one's executions, rate and coverage (scripts/fuzz.sh). The same targets'
# seeded form runs in `make test` (label fuzz).
fuzz:
	@scripts/setup.sh build test fuzz
	@FUZZ_DIR=$(CURDIR)/$(FUZZ_DIR) JOBS=$(JOBS) scripts/fuzz.sh

# Long faults, bounded (about 4 minutes): a migrate pool on PostgreSQL,
# volumes and cache tiers through repeated kills and outages, each checked
# for lost, doubled or corrupt data (scripts/chaos.sh, tests/chaos).
chaos: build
	@FERRY_BUILD=$(CURDIR)/$(BUILD_DIR) scripts/chaos.sh

bench: build
	@scripts/setup.sh bench vm
	@bench/run.sh $(BUILD_DIR)

# The stripped binary, man pages and bash completion under
# $(DESTDIR)$(PREFIX); its debug information beside it in bin/.debug/,
# where gdb finds it (scripts/install.sh).
install: ferry
	@scripts/install.sh $(BUILD_DIR) "$(DESTDIR)" "$(PREFIX)"

# The Debian packages: $(BUILD_DIR)/ferry_VERSION_amd64.deb and its debug
# symbols, ferry-dbgsym_VERSION_amd64.deb (scripts/make_deb.sh).
deb: ferry
	@scripts/setup.sh package
	@scripts/make_deb.sh $(BUILD_DIR)

# docs/commands/*.md's option tables, from the commands' own --help.
docs: ferry
	@python3 scripts/gen_docs.py $(BUILD_DIR)/ferry --markdown docs/commands

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR) $(FUZZ_DIR)
