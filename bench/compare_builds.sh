#!/usr/bin/env bash
# Before and after: the figures a change must not lower, for two builds of
# ferry in one run, taking turns (the order swaps every round, so drift in
# the machine falls on both alike).
#
#   bench/compare_builds.sh BEFORE_BUILD AFTER_BUILD [ROUNDS]   (default 3)
#
# Each round runs, for each build:
#   migrate   bench/migrate_bench.sh 75k, ferry only, --concurrency 512
#             (N75K, BIG_COUNT... as that script takes them): seconds
#   cache     bench/cache_hit_bench.sh --seconds 5: ferry's hits/s on the
#             eligible text URLs for zstd and identity clients (nginx and
#             Varnish run beside it, as always, but are not compared here)
#   volume    bench/volume_bench.sh --volumes 10: the first clone's and a
#             later clone's boot set, trigger latency p50 from the object
#             store and from the transfer cache, background hydration MB/s
# and prints every figure per round, then the median of each for both
# builds and after ÷ before (for times, before ÷ after: above 1 is better).
# COMPARE=migrate,cache,volume picks which. Each bench's own output goes to
# $TMP/<bench>.<build>.<round>.log.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BEFORE_BUILD AFTER_BUILD [ROUNDS]" >&2; exit 2; }
BEFORE=$(cd "$1" && pwd)
AFTER=$(cd "$2" && pwd)
ROUNDS=${3:-3}
COMPARE=${COMPARE:-migrate,cache,volume}
cd "$(dirname "$0")/.."
TMP=$(mktemp -d /tmp/ferry-compare.XXXXXX)
FIGURES="$TMP/figures"  # lines: BUILD FIGURE VALUE
: >"$FIGURES"
echo "compare_builds: logs in $TMP"

record() { echo "$1 $2 $3" >>"$FIGURES"; echo "  $1 $2 $3"; }

# run_migrate NAME BUILD ROUND
run_migrate() {
  local log="$TMP/migrate.$1.$3.log"
  FERRY_CONCURRENCIES=512 BENCH_RCLONE_TRANSFERS=none bench/migrate_bench.sh "$2" 75k >"$log" 2>&1 ||
    { tail -5 "$log"; return 1; }
  record "$1" migrate_75k_seconds "$(awk '/^  ferry migrate/ { for (i = 1; i <= NF; i++) if ($i ~ /s$/ && $i + 0 > 0) { sub(/s$/, "", $i); print $i; exit } }' "$log")"
}

run_cache() {
  local log="$TMP/cache.$1.$3.log"
  bench/cache_hit_bench.sh "$2" --seconds 5 >"$log" 2>&1 || { tail -5 "$log"; return 1; }
  record "$1" cache_zstd_hits_per_s "$(awk -F' *\\| *' '$2 == "eligible" && $3 == "zstd" && $4 == "ferry" { print $5 }' "$log")"
  record "$1" cache_identity_hits_per_s "$(awk -F' *\\| *' '$2 == "eligible" && $3 == "identity" && $4 == "ferry" { print $5 }' "$log")"
}

run_volume() {
  local log="$TMP/volume.$1.$3.log"
  bench/volume_bench.sh "$2" --volumes 10 >"$log" 2>&1 || { tail -5 "$log"; return 1; }
  record "$1" volume_boot_first_s "$(awk -F' *\\| *' '$2 ~ /^until the boot set is read \(first clone/ { sub(/ s$/, "", $3); print $3 }' "$log")"
  record "$1" volume_boot_later_s "$(awk -F' *\\| *' '$2 ~ /^until the boot set is read \(a later clone/ { sub(/ s$/, "", $3); print $3 }' "$log")"
  record "$1" volume_trigger_store_p50_ms "$(awk -F' *\\| *' '$2 == "chunk from the object store" { print $3 }' "$log")"
  record "$1" volume_trigger_cache_p50_ms "$(awk -F' *\\| *' '$2 ~ /^chunk in the transfer cache/ { print $3 }' "$log")"
  record "$1" volume_hydration_mb_s "$(sed -n 's/.*stored bytes, \([0-9.]*\) MB\/s against.*/\1/p' "$log")"
}

for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then order="before after"; else order="after before"; fi
  for what in ${COMPARE//,/ }; do
    for name in $order; do
      build=$BEFORE
      [ "$name" = after ] && build=$AFTER
      echo "== round $round: $what, $name"
      # A bench that fails to set up (a port taken meanwhile) gets one more try.
      "run_$what" "$name" "$build" "$round" || { echo "  (again)"; "run_$what" "$name" "$build" "$round"; }
    done
  done
done

echo
echo "| figure | before (median of $ROUNDS) | after (median) | after vs before | runs before | runs after |"
echo "|---|---|---|---|---|---|"
for fig in $(awk '{ print $2 }' "$FIGURES" | awk '!seen[$0]++'); do
  b=$(awk -v f="$fig" '$1 == "before" && $2 == f { print $3 }' "$FIGURES" | sort -g | tr '\n' ' ')
  a=$(awk -v f="$fig" '$1 == "after" && $2 == f { print $3 }' "$FIGURES" | sort -g | tr '\n' ' ')
  med() { awk '{ n = split($0, v, " "); if (n == 0) { print "-"; exit } print (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }' <<<"$1"; }
  mb=$(med "$b") ma=$(med "$a")
  # Lower is better for times and latencies, higher for rates.
  case "$fig" in
    *_per_s | *_mb_s) better=$(awk -v b="$mb" -v a="$ma" 'BEGIN { printf "%.3f× (after ÷ before)", a / b }') ;;
    *_s | *_ms | *_seconds) better=$(awk -v b="$mb" -v a="$ma" 'BEGIN { printf "%.3f× (before ÷ after)", b / a }') ;;
    *) better=$(awk -v b="$mb" -v a="$ma" 'BEGIN { printf "%.3f× (after ÷ before)", a / b }') ;;
  esac
  echo "| $fig | $mb | $ma | $better | $b| $a|"
done
