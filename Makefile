# ferry's entry points. `make demo` and `make test` work on a fresh Debian 12
# machine as root: they install what is missing, build, and run.
BUILD_DIR ?= build
ASAN_DIR ?= build-asan
TSAN_DIR ?= build-tsan
JOBS ?= 2
CMAKE_FLAGS ?=

.PHONY: all setup build test test-slow test-all test-fast sanitize tsan fuzz chaos demo bench deb clean format

all: build

setup:
	@scripts/setup.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: setup $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j$(JOBS)

# Unit, conformance and integration tests with real peers, but for the
# slowest scenarios (label "slow", run by test-slow; CI runs both).
test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS) --timeout 600 -LE slow

# The slow scenarios: migrations through outages, crashes and restarts.
test-slow: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS) --timeout 600 -L slow

# Everything.
test-all: test test-slow

# Unit tests only (no peers, seconds).
test-fast: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS) -L unit

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
sanitize: setup
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFERRY_SANITIZE=ON
	cmake --build $(ASAN_DIR) -j$(JOBS)
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j$(JOBS) -LE bench --timeout 900

# ThreadSanitizer: the unit tests, and the integration tests whose daemons
# and runners are the most threaded (scripts/tsan_tests.txt), with every
# ferry process they start built with -fsanitize=thread; a race fails the
# test (exit 66). Suppressions (scripts/tsan.supp) are only for libraries'
# known false positives, each with its reason.
TSAN_ENV = TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$(CURDIR)/scripts/tsan.supp"
tsan: setup
	cmake -S . -B $(TSAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFERRY_TSAN=ON
	cmake --build $(TSAN_DIR) -j$(JOBS)
	cd $(TSAN_DIR) && $(TSAN_ENV) ctest --output-on-failure -j$(JOBS) --timeout 900 -L unit
	cd $(TSAN_DIR) && GATEWAY_TEST_N=2000 $(TSAN_ENV) ctest --output-on-failure -j$(JOBS) --timeout 900 \
	  -R "^($$(grep -v '^#' $(CURDIR)/scripts/tsan_tests.txt | paste -sd'|'))$$"

# Every fuzz target built with clang, libFuzzer, ASan and UBSan, each run
# open-ended for FUZZ_SECONDS (default 60), two at a time; prints each
# one's executions, rate and coverage (scripts/fuzz.sh). The same targets'
# seeded form runs in `make test` (label fuzz).
FUZZ_DIR ?= build-fuzz
fuzz: setup
	@FUZZ_DIR=$(CURDIR)/$(FUZZ_DIR) JOBS=$(JOBS) scripts/fuzz.sh

# Long faults, bounded (about 4 minutes): a migrate pool on PostgreSQL,
# volumes and cache tiers through repeated kills and outages, each checked
# for lost, doubled or corrupt data (scripts/chaos.sh, tests/chaos).
chaos: build
	@FERRY_BUILD=$(CURDIR)/$(BUILD_DIR) scripts/chaos.sh

demo: build
	@scripts/demo.sh $(BUILD_DIR)

bench: build
	@bench/run.sh $(BUILD_DIR)

# The Debian package: $(BUILD_DIR)/ferry_VERSION_amd64.deb (scripts/make_deb.sh).
deb: build
	@scripts/make_deb.sh $(BUILD_DIR)

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR) $(FUZZ_DIR)
