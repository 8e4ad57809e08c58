#!/usr/bin/env bash
# `make fuzz`: every fuzz target (tests/fuzz) built with clang, libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer, then run open-ended for
# FUZZ_SECONDS each (default 60), two at a time, from its seed corpus and
# what earlier runs found (build-fuzz/corpus/NAME, kept between runs).
# Prints one line per target: executions, executions per second, coverage
# (libFuzzer's cov: edges and ft: features) and corpus size; a crash or a
# broken invariant leaves its input in build-fuzz/artifacts/ and fails the
# run (add it to tests/fuzz/corpus/NAME as a regression seed once fixed).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${FUZZ_DIR:-$ROOT/build-fuzz}"
SECONDS_EACH="${FUZZ_SECONDS:-60}"
JOBS="${JOBS:-2}"
TARGETS="$(sed -n 's/^ferry_fuzz_target(\([a-z0-9_]*\) .*/\1/p' "$ROOT/tests/fuzz/CMakeLists.txt")"

command -v clang++ >/dev/null || { echo "fuzz: clang++ is missing (make setup installs it)" >&2; exit 1; }
if [ ! -f "$DIR/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFERRY_LIBFUZZER=ON -DFERRY_SANITIZE=ON >/dev/null
fi
start=$(date +%s)
# shellcheck disable=SC2046
cmake --build "$DIR" -j"$JOBS" --target $(for t in $TARGETS; do printf '%s_fuzz ' "$t"; done) >"$DIR/build.log" 2>&1 ||
  { tail -30 "$DIR/build.log"; echo "fuzz: the build failed" >&2; exit 1; }
echo "fuzz: built in $(($(date +%s) - start)) s; ${SECONDS_EACH} s per target, $JOBS at a time"
mkdir -p "$DIR/artifacts" "$DIR/logs"

run_one() {
  local t=$1 dict=()
  [ -f "$ROOT/tests/fuzz/dict/$t.dict" ] && dict=(-dict="$ROOT/tests/fuzz/dict/$t.dict")
  mkdir -p "$DIR/corpus/$t"
  # -rss_limit_mb: a leak or runaway allocation fails the run; -timeout: a hang does.
  (cd "$DIR" && ASAN_OPTIONS=detect_leaks=0 "$DIR/tests/fuzz/${t}_fuzz" -max_total_time="$SECONDS_EACH" \
    -print_final_stats=1 -timeout=25 -rss_limit_mb=2048 -artifact_prefix="$DIR/artifacts/$t-" "${dict[@]}" \
    "$DIR/corpus/$t" "$ROOT/tests/fuzz/corpus/$t" >"$DIR/logs/$t.log" 2>&1)
  echo "$t $?" >"$DIR/logs/$t.rc"
}
export -f run_one
export DIR ROOT SECONDS_EACH
printf '%s\n' $TARGETS | xargs -P "$JOBS" -I{} bash -c 'run_one {}'

failed=0
printf '%-14s %10s %10s %8s %8s %8s  %s\n' target execs "execs/s" cov ft corpus result
for t in $TARGETS; do
  log="$DIR/logs/$t.log"
  rc=$(cut -d' ' -f2 "$DIR/logs/$t.rc")
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)  # (sed never fails)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  result=ok
  if [ "$rc" != 0 ]; then
    result="FAILED: $(grep -m1 -E 'ERROR|invariant broken|Test unit written' "$log" || echo "exit $rc")"
    failed=1
  fi
  printf '%-14s %10s %10s %8s %8s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
done
echo "fuzz: $(($(date +%s) - start)) s in all (clang $(clang++ --version | sed -n 's/.*version \([0-9.]*\).*/\1/p;q'))"
exit $failed
