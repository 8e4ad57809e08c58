# Sourced by migrate_bench.sh (its helpers: start_servers, populate,
# measure, py, rate, mib): the listing and verify scenarios.
#
#   listing  N_LIST keys (2,000,000) under 50 prefixes of very different
#            sizes (one holds half; the rest shrink as 1/i), LATENCY_LIST_MS
#            per request: `ferry migrate --dry-run` listing by key ranges
#            beside listing by delimiter prefixes (--list-by prefixes, as
#            ferry did before), RUNS_LIST runs each taking turns. Figures:
#            time until the listing is done (the summary's listing_seconds,
#            which includes committing every page to the state store),
#            keys/s, median and spread. --max-backlog lets the listing run
#            as far ahead as it can.
#   verify   The 75k scenario's bucket on both servers (identical, by the
#            populate seed): `ferry migrate verify` beside `rclone check`
#            (--checkers 8, its default, and 64), RUNS_VERIFY runs each,
#            taking turns; then N_VERIFY_BIG (2,000,000) empty objects on
#            both: ferry's time and peak RSS, in key ranges and with the
#            source answering out of byte order (sorted on disk).

N_LIST=${N_LIST:-2000000}
LATENCY_LIST_MS=${LATENCY_LIST_MS:-100}
RUNS_LIST=${RUNS_LIST:-3}
LIST_CONCURRENCY=${LIST_CONCURRENCY:-8}
RUNS_VERIFY=${RUNS_VERIFY:-3}
N_VERIFY_BIG=${N_VERIFY_BIG:-2000000}

# median_spread SECONDS...: "median (min–max)".
median_spread() {
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END {
    m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
    printf "%.2f (%.2f–%.2f)", m, a[1], a[NR] }'
}
median_of() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

bench_listing() {
  echo "== listing: $N_LIST keys under 50 prefixes (one holds half), ${LATENCY_LIST_MS} ms per request"
  start_servers "$LATENCY_LIST_MS"
  local half=$((N_LIST / 2)) rest=$((N_LIST - N_LIST / 2)) i sum=0 counts=() c
  # Prefixes 1..49 share the other half as 1/i.
  local h
  h=$(awk 'BEGIN { for (i = 1; i <= 49; i++) s += 1 / i; print s }')
  for i in $(seq 1 49); do
    c=$(awk -v r="$rest" -v h="$h" -v i="$i" 'BEGIN { printf "%d", r / h / i }')
    [ "$i" = 49 ] && c=$((rest - sum))
    counts+=("$c")
    sum=$((sum + c))
  done
  populate "{\"bucket\":\"bkt\",\"prefix\":\"p00/\",\"count\":$half,\"dirs\":1,\"seed\":1}" >/dev/null
  for i in $(seq 1 49); do
    populate "{\"bucket\":\"bkt\",\"prefix\":\"p$(printf %02d "$i")/\",\"count\":${counts[$((i - 1))]},\"dirs\":1,\"seed\":1}" >/dev/null
  done
  local total
  total=$(objects_at "$URL_A")
  [ "$total" = "$N_LIST" ] || die "listing: the source holds $total keys, want $N_LIST"
  echo "  source: $total keys; p00/ holds $half, p01/ ${counts[0]}, p49/ ${counts[48]}"
  declare -A secs rss
  local run mode
  for run in $(seq 1 "$RUNS_LIST"); do
    for mode in ranges prefixes; do
      KEEP_DST=1 measure "list-$mode-$run" 0 "$FERRY" migrate s3://bkt s3://bkt --src-profile a \
        --dst-profile b --dry-run --list-by "$mode" --list-concurrency "$LIST_CONCURRENCY" \
        --concurrency 256 --max-backlog $((N_LIST * 2)) --state "$TMP/state.list-$mode-$run" --json
      local listed at
      listed=$(py summary "$TMP/list-$mode-$run.log" listed)
      at=$(py summary "$TMP/list-$mode-$run.log" listing_seconds)
      [ "$R_RC" = 0 ] && [ "$listed" = "$N_LIST" ] || die "listing by $mode: exit $R_RC, listed $listed of $N_LIST"
      secs[$mode]="${secs[$mode]:-} $at"
      [ "$R_RSS" -gt "${rss[$mode]:-0}" ] && rss[$mode]=$R_RSS
      printf '  %-8s run %s: listing done in %6.2fs (%s keys/s), whole dry run %ss, RSS %s MiB\n' \
        "$mode" "$run" "$at" "$(rate "$N_LIST" "$at")" "$R_SECS" "$(mib "$R_RSS")"
    done
  done
  local rm pm
  rm=$(median_of ${secs[ranges]}) pm=$(median_of ${secs[prefixes]})
  local summary="Key ranges list ${N_LIST} keys in ${rm} s (median of $RUNS_LIST), delimiter prefixes in ${pm} s: $(awk -v a="$pm" -v b="$rm" 'BEGIN { printf "%.2f", a / b }')× faster."
  echo "  $summary"
  {
    echo
    echo "### listing: $N_LIST keys under 50 prefixes of very different sizes, ${LATENCY_LIST_MS} ms per request ($(date -u +%Y-%m-%d), $CORES cores)"
    echo
    echo "\`ferry migrate --dry-run --list-concurrency $LIST_CONCURRENCY\`; p00/ holds $half keys, p01/…p49/ the rest as 1/i. Listing done: the summary's \`listing_seconds\` (every page committed to the SQLite state). Median of $RUNS_LIST runs (min–max), modes taking turns."
    echo
    echo "| listing by | listing done s | keys/s (median) | peak RSS MiB |"
    echo "|---|---|---|---|"
    echo "| key ranges (default) | $(median_spread ${secs[ranges]}) | $(rate "$N_LIST" "$rm") | $(mib "${rss[ranges]}") |"
    echo "| delimiter prefixes (\`--list-by prefixes\`) | $(median_spread ${secs[prefixes]}) | $(rate "$N_LIST" "$pm") | $(mib "${rss[prefixes]}") |"
    echo
    echo "$summary"
  } >>"$OUT"
  stop_servers
}

bench_verify() {
  echo "== verify: the 75k bucket on both servers, ${LATENCY_MS} ms per request"
  start_servers "$LATENCY_MS"
  populate_75k "$URL_A"
  populate_75k "$URL_B"
  local expect=$POP_CREATED run
  declare -A secs rss
  local tools=("ferry" "rclone8" "rclone64")
  for run in $(seq 1 "$RUNS_VERIFY"); do
    local t
    for t in "${tools[@]}"; do
      case "$t" in
        ferry) KEEP_DST=1 measure "v-$t-$run" "$expect" "$FERRY" migrate verify s3://bkt s3://bkt \
                 --src-profile a --dst-profile b --json ;;
        rclone8) KEEP_DST=1 measure "v-$t-$run" "$expect" "$RCLONE" check a:bkt b:bkt --checkers 8 ;;
        rclone64) KEEP_DST=1 measure "v-$t-$run" "$expect" "$RCLONE" check a:bkt b:bkt --checkers 64 ;;
      esac
      [ "$R_RC" = 0 ] || die "$t: exit $R_RC on identical buckets: $(tail -3 "$TMP/v-$t-$run.err")"
      secs[$t]="${secs[$t]:-} $R_SECS"
      [ "$R_RSS" -gt "${rss[$t]:-0}" ] && rss[$t]=$R_RSS
      printf '  %-9s run %s: %6ss, RSS %5s MiB, CPU %ss, servers %ss\n' "$t" "$run" "$R_SECS" \
        "$(mib "$R_RSS")" "$R_USYS" "$R_SRV"
    done
  done
  local matched
  matched=$(tail -1 "$TMP/v-ferry-1.log" | cut -d' ' -f2- | py get matched)
  [ "$matched" = "$expect" ] || die "ferry verify matched $matched of $expect"
  local fm r8 r64 best_r
  fm=$(median_of ${secs[ferry]}) r8=$(median_of ${secs[rclone8]}) r64=$(median_of ${secs[rclone64]})
  best_r=$(awk -v a="$r8" -v b="$r64" 'BEGIN { print a < b ? a : b }')
  local summary="ferry verify ${fm} s, rclone check's best ${best_r} s (medians of $RUNS_VERIFY): $(awk -v a="$best_r" -v b="$fm" 'BEGIN { printf "%.2f", a / b }')× faster; peak RSS $(mib "${rss[ferry]}") MiB."
  echo "  $summary"
  stop_servers

  echo "== verify: $N_VERIFY_BIG empty objects on both servers, no added latency"
  start_servers 0
  # p/d000.txt: where s3rver's walk order (p/d000/... first) and byte order
  # part, so the source's disorder shows once its listing reaches it.
  local pop="{\"bucket\":\"bkt\",\"prefix\":\"p/\",\"count\":$N_VERIFY_BIG,\"seed\":$SEED,
    \"extra\":[{\"key\":\"p/d000.txt\",\"size\":1}]}"
  populate "$pop" "$URL_A" >/dev/null
  populate "$pop" "$URL_B" >/dev/null
  KEEP_DST=1 measure v2m-ranges $((N_VERIFY_BIG + 1)) "$FERRY" migrate verify s3://bkt s3://bkt \
    --src-profile a --dst-profile b --json
  [ "$R_RC" = 0 ] || die "verify 2m: exit $R_RC"
  local big_ranges="$R_SECS s, peak RSS $(mib "$R_RSS") MiB"
  admin "$URL_A" POST /_admin/faults '{"list_quirks":["unordered"]}' >/dev/null
  KEEP_DST=1 measure v2m-sorted $((N_VERIFY_BIG + 1)) "$FERRY" migrate verify s3://bkt s3://bkt \
    --src-profile a --dst-profile b --json
  [ "$R_RC" = 0 ] || die "verify 2m sorted: exit $R_RC"
  local sorted
  sorted=$(tail -1 "$TMP/v2m-sorted.log" | cut -d' ' -f2- | py get sorted_on_disk)
  [ "$sorted" = True ] || die "verify 2m: the unordered source was not sorted on disk"
  local big_sorted="$R_SECS s, peak RSS $(mib "$R_RSS") MiB"
  echo "  2m in key ranges: $big_ranges; source out of byte order, sorted on disk: $big_sorted"
  {
    echo
    echo "### verify: the 75k bucket (75,004 objects, 4.08 GB) on both servers, ${LATENCY_MS} ms per request ($(date -u +%Y-%m-%d), $CORES cores)"
    echo
    echo "Identical buckets (the same populate seed on both), so every tool must find nothing and exit 0. Median of $RUNS_VERIFY runs (min–max), tools taking turns; peak RSS the largest of the runs."
    echo
    echo "| tool | settings | seconds | peak RSS MiB |"
    echo "|---|---|---|---|"
    echo "| ferry migrate verify | default (16 key ranges at once) | $(median_spread ${secs[ferry]}) | $(mib "${rss[ferry]}") |"
    echo "| rclone check | \`--checkers 8\` (default) | $(median_spread ${secs[rclone8]}) | $(mib "${rss[rclone8]}") |"
    echo "| rclone check | \`--checkers 64\` | $(median_spread ${secs[rclone64]}) | $(mib "${rss[rclone64]}") |"
    echo
    echo "$summary"
    echo
    echo "$N_VERIFY_BIG empty objects on both sides, no added latency: key ranges $big_ranges; with the source answering in walk order (\`--list-quirk unordered\`), both sides listed whole and sorted on disk: $big_sorted."
  } >>"$OUT"
  stop_servers
}
