#!/usr/bin/env bash
# The three build-time figures issue 37 sets goals for, each the median of
# RUNS (3) runs with its spread, and the ten costliest translation units:
#
#   bench/build_time.sh [RUNS]
#
#   1. the `ferry` binary from a fresh clone: a new build directory, no
#      compiler cache (CCACHE_DISABLE=1), -j2 (goal: 240 s);
#   2. everything `make test` builds, the same way (goal: 600 s);
#   3. `make demo` on a fresh Debian 12 machine, installs included (goal:
#      480 s): a bookworm chroot made with debootstrap, holding what a new
#      machine of this kind has (g++, cmake, make, git, python3, curl,
#      GoogleTest, Google Benchmark) and nothing of ferry's, with an empty
#      apt cache, so every package the demo needs is downloaded and
#      installed; the time runs from `make demo` to its last line
#      (bench/fresh_machine.sh). FRESH_MACHINE=0 leaves this figure out.
#
# Runs on the committed HEAD (clones of it), as root for the chroot. The
# translation units are ninja's log of the first run of 2: a unity batch
# (cmake/unity.cmake) is named by the target it belongs to.
set -euo pipefail
RUNS=${1:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/ferry-build-time.XXXXXX)
FRESH_MACHINE=${FRESH_MACHINE:-1}
source "$SRC/bench/fresh_machine.sh"
trap 'drop_fresh_machines; rm -rf --one-file-system "$WORK"' EXIT
export CCACHE_DISABLE=1

median() { sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%d", m }'; }
spread() { sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%d-%d", lo, hi }'; }

# Every run builds the revision checked out when the benchmark started.
REV=$(git -C "$SRC" rev-parse HEAD)
clone_rev() { git clone -q --no-hardlinks "$SRC" "$1" && git -C "$1" checkout -q "$REV"; }

echo "build_time: ${REV:0:7}, $RUNS runs, $(nproc) cores, $(c++ --version | head -1)"

# --- 1 and 2: cold builds of a fresh clone ----------------------------------
for run in $(seq 1 "$RUNS"); do
  dir="$WORK/clone$run"
  clone_rev "$dir"
  cmake -S "$dir" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  t0=$(date +%s.%N)
  ninja -C "$dir/build" -j2 ferry >"$WORK/ferry$run.log"
  t1=$(date +%s.%N)
  ninja -C "$dir/build" -j2 >"$WORK/all$run.log"
  t2=$(date +%s.%N)
  ferry_s=$(echo "$t1 - $t0" | bc)
  all_s=$(echo "$t2 - $t0" | bc)
  printf 'run %d: ferry %.0f s, everything %.0f s\n' "$run" "$ferry_s" "$all_s"
  echo "$ferry_s" >>"$WORK/ferry.times"
  echo "$all_s" >>"$WORK/all.times"
  [ "$run" = 1 ] && cp "$dir/build/.ninja_log" "$WORK/ninja_log.1"
  rm -rf "$dir"
done

# --- 3: make demo on a fresh machine ---------------------------------------
if [ "$FRESH_MACHINE" = 1 ]; then
  for run in $(seq 1 "$RUNS"); do
    root="$WORK/fresh$run"
    fresh_machine "$root"
    clone_rev "$root/root/ferry"
    t0=$(date +%s.%N)
    if ! in_fresh_machine "$root" 'cd /root/ferry && make demo' >"$WORK/demo$run.log" 2>&1; then
      tail -20 "$WORK/demo$run.log" >&2
      echo "build_time: make demo failed in the fresh machine (run $run)" >&2
      exit 1
    fi
    t1=$(date +%s.%N)
    grep -q '^demo finished' "$WORK/demo$run.log" || { echo "build_time: the demo did not finish" >&2; exit 1; }
    demo_s=$(echo "$t1 - $t0" | bc)
    printf 'run %d: fresh-machine make demo %.0f s\n' "$run" "$demo_s"
    echo "$demo_s" >>"$WORK/demo.times"
    drop_fresh_machine "$root"
  done
fi

echo
echo "| figure | goal | median | spread (${RUNS} runs) |"
echo "|---|---:|---:|---:|"
echo "| \`ferry\` binary, cold, -j2 | 240 s | $(median <"$WORK/ferry.times") s | $(spread <"$WORK/ferry.times") s |"
echo "| everything \`make test\` builds, cold, -j2 | 600 s | $(median <"$WORK/all.times") s | $(spread <"$WORK/all.times") s |"
if [ -s "$WORK/demo.times" ]; then
  echo "| fresh-machine \`make demo\`, installs included | 480 s | $(median <"$WORK/demo.times") s | $(spread <"$WORK/demo.times") s |"
fi
echo
echo "The ten costliest translation units (run 1; unity batches by target):"
echo
echo "| seconds | translation unit |"
echo "|---:|---|"
awk 'NR > 1 && $4 ~ /\.o$/ { printf "%.1f %s\n", ($2 - $1) / 1000, $4 }' "$WORK/ninja_log.1" |
  sort -rn | head -10 | sed -E 's#^([0-9.]+) .*/CMakeFiles/[^/]+\.dir/(__/unity/)?#\1 #' |
  awk '{ printf "| %s | %s |\n", $1, $2 }'
