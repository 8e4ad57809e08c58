#!/usr/bin/env bash
# The sanitizer builds and what runs in them (make sanitize,
# make sanitize-slow, make tsan):
#
#   scripts/sanitize.sh asan DIR [SUITE]   SUITE: fast (default) or slow
#   scripts/sanitize.sh tsan DIR
#
# asan: AddressSanitizer and UndefinedBehaviorSanitizer (-O1, assertions
#   on, line tables), every ferry process a test starts instrumented.
#   fast (make sanitize, in CI): the unit tests, the fuzz targets' seeded
#   runs and the integration tests of `make test`; slow (make
#   sanitize-slow, not in CI, whose budget holds the slow scenarios once,
#   in the plain build): the outages, crashes, restarts and the browser
#   (label slow), where a fault path may hide a use-after-free. A leak, an
#   invalid access or undefined behaviour fails the test.
# tsan: ThreadSanitizer (-O2, line tables): the unit tests, and the
#   integration tests whose daemons and runners are the most threaded
#   (scripts/tsan_tests.txt); a race fails the test (exit 66).
#   Suppressions (scripts/tsan.supp) are only for libraries' known false
#   positives, each with its reason.
#
# JOBS: compile jobs (2); TEST_JOBS: tests at once (JOBS).
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:?usage: $0 asan|tsan DIR [fast|slow]}
DIR=${2:?usage: $0 asan|tsan DIR [fast|slow]}
SUITE=${3:-fast}
JOBS=${JOBS:-2}
TEST_JOBS=${TEST_JOBS:-$JOBS}

case "$MODE" in
  asan)
    # -O1: ASan's own advice for a usable speed; no -DNDEBUG, so assert()
    # checks too.
    cmake -S . -B "$DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFERRY_SANITIZE=ON \
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" >/dev/null
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    case "$SUITE" in
      fast) selection=(-LE 'slow|bench') ;;
      slow) selection=(-L slow) ;;
      *) echo "sanitize: unknown suite '$SUITE' (fast or slow)" >&2; exit 2 ;;
    esac
    ;;
  tsan)
    cmake -S . -B "$DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFERRY_TSAN=ON >/dev/null
    export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp"
    # The gateway test with 2,000 objects instead of 20,000.
    export GATEWAY_TEST_N=2000
    tests=$(grep -v '^#' scripts/tsan_tests.txt | paste -sd'|')
    selection=(-R "^(${tests})\$")
    ;;
  *) echo "sanitize: unknown mode '$MODE' (asan or tsan)" >&2; exit 2 ;;
esac

cmake --build "$DIR" -j"$JOBS"
cd "$DIR"
if [ "$MODE" = tsan ]; then
  ctest --output-on-failure -j"$TEST_JOBS" --timeout 900 -L unit
fi
ctest --output-on-failure -j"$TEST_JOBS" --timeout 900 "${selection[@]}"
