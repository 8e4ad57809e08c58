# Sourced by migrate_bench.sh (its helpers: start_servers, populate_75k,
# measure, check_ferry, py, rate): the gateway scenario.
#
#   gateway  The 75k scenario, GATEWAY_ROUNDS rounds taking turns:
#            (a) `ferry migrate` alone (--concurrency GATEWAY_CONCURRENCY);
#            (b) the same job made with --detach and run by one `ferry
#            worker`, with `ferry gateway` in front of it and, for the
#            whole run, a botocore reader fetching random keys through the
#            gateway (GATEWAY_READERS threads) beside a second one fetching
#            random keys straight from the source (GATEWAY_DIRECT_READERS
#            threads: what a GET from the source costs at the same moment);
#            both are bench/s3_reader.py (standard library, SigV4 by hand:
#            botocore's CPU per request would itself slow the job on 2 cores).
#            Figures: the job's seconds with and without the reader, and the
#            reader's p50/p99 by where the gateway's answer came from
#            (destination: copied by the job; on_demand: copied by this
#            read) beside the direct source GETs. Goals (issue 22): on-demand
#            p50 within 1.2x of a direct GET, the job at most 10% slower.

GATEWAY_ROUNDS=${GATEWAY_ROUNDS:-3}
GATEWAY_CONCURRENCY=${GATEWAY_CONCURRENCY:-256}
GATEWAY_READERS=${GATEWAY_READERS:-4}
GATEWAY_DIRECT_READERS=${GATEWAY_DIRECT_READERS:-2}
READER="$PWD/tests/integration/gateway_reader.py"  # botocore: lists the keys
LIGHT_READER="$PWD/bench/s3_reader.py"             # the readers during the job

# median VALUES...: the middle one (the lower middle of an even count).
median_of() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# jq-less: one field of the reader's JSON line (answers.ANSWER.FIELD).
reader_field() { /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(j['answers'].get(sys.argv[2],{}).get(sys.argv[3],0))" "$@"; }

# gateway_run ROUND: the job under the gateway with the two readers; sets
# R_* (measure) and writes $TMP/gw$ROUND.reader.json, .direct.json.
gateway_run() {
  local r=$1 state="$TMP/state.gw$1" port job
  admin "$URL_B" POST /_admin/clear >/dev/null
  "$FERRY" migrate s3://bkt s3://bkt --src-profile a --dst-profile b --state "$state" \
    --concurrency "$GATEWAY_CONCURRENCY" --detach --json >"$TMP/gw$r.job" || die "gateway: --detach failed"
  job=$(py get job <"$TMP/gw$r.job")
  rm -f "$TMP/gw.port" "$TMP/gw.stop"
  "$FERRY" gateway --job "$job" --state "$state" --listen 127.0.0.1:0 --port-file "$TMP/gw.port" \
    --credentials "$TMP/gw.keys" >"$TMP/gw$r.log" 2>&1 &
  local gw=$!
  for _ in $(seq 1 100); do [ -s "$TMP/gw.port" ] && break; sleep 0.1; done
  port=$(cat "$TMP/gw.port")
  /usr/bin/python3 "$LIGHT_READER" "http://127.0.0.1:$port" gwkey gwsecret bkt "$TMP/gw.keys.list" \
    "$GATEWAY_READERS" "$TMP/gw.stop" "$r" >"$TMP/gw$r.reader.json" &
  local rd=$!
  /usr/bin/python3 "$LIGHT_READER" "$URL_A" "$KEY" "$SECRET" bkt "$TMP/gw.keys.list" \
    "$GATEWAY_DIRECT_READERS" "$TMP/gw.stop" "$((r + 100))" >"$TMP/gw$r.direct.json" &
  local dr=$!
  local g0 r0
  g0=$(cpu_ticks $gw) r0=$(( $(cpu_ticks $rd) + $(cpu_ticks $dr) ))
  KEEP_DST=1 measure "gw$r" "$EXPECT_GW" "$FERRY" worker --state "$state" --once --json
  GW_CPU=$(secs_of_ticks $(( $(cpu_ticks $gw) - g0 )))
  READERS_CPU=$(secs_of_ticks $(( $(cpu_ticks $rd) + $(cpu_ticks $dr) - r0 )))
  touch "$TMP/gw.stop"
  wait $rd || die "gateway: the reader through the gateway failed: $(cat "$TMP/gw$r.reader.json")"
  wait $dr || die "gateway: the direct reader failed: $(cat "$TMP/gw$r.direct.json")"
  kill $gw; wait $gw 2>/dev/null || true
  [ "$R_RC" = 0 ] && [ "$R_DST" = "$EXPECT_GW" ] ||
    die "gateway run $r: worker exit $R_RC, destination $R_DST of $EXPECT_GW"
}

bench_gateway() {
  echo "== gateway: the 75k job with a reader through ferry gateway, ${LATENCY_MS} ms latency per request"
  start_servers "$LATENCY_MS"
  populate_75k
  EXPECT_GW=$POP_CREATED
  printf 'gwkey gwsecret\n' >"$TMP/gw.keys"
  /usr/bin/python3 "$READER" "$URL_A" "$KEY" "$SECRET" bkt - --list-to "$TMP/gw.keys.list" --prefix p/ ||
    die "gateway: listing the source failed"
  local r alone=() with=() od50=() od99=() ds50=() ds99=() dir50=() dir99=() odn=() dsn=()
  local busy_alone=() busy_with=() gwcpu=() rdcpu=() wcpu=()
  for r in $(seq 1 "$GATEWAY_ROUNDS"); do
    measure "alone$r" "$EXPECT_GW" "$FERRY" migrate s3://bkt s3://bkt --src-profile a --dst-profile b \
      --concurrency "$GATEWAY_CONCURRENCY" --state "$TMP/state.alone$r" --json
    check_ferry "alone$r" "$EXPECT_GW"
    alone+=("$R_SECS") busy_alone+=("$R_BUSY")
    gateway_run "$r"
    with+=("$R_SECS") busy_with+=("$R_BUSY") gwcpu+=("$GW_CPU") rdcpu+=("$READERS_CPU") wcpu+=("$R_CPU")
    od50+=("$(reader_field "$TMP/gw$r.reader.json" on_demand p50_ms)")
    od99+=("$(reader_field "$TMP/gw$r.reader.json" on_demand p99_ms)")
    odn+=("$(reader_field "$TMP/gw$r.reader.json" on_demand n)")
    ds50+=("$(reader_field "$TMP/gw$r.reader.json" destination p50_ms)")
    ds99+=("$(reader_field "$TMP/gw$r.reader.json" destination p99_ms)")
    dsn+=("$(reader_field "$TMP/gw$r.reader.json" destination n)")
    dir50+=("$(reader_field "$TMP/gw$r.direct.json" none p50_ms)")
    dir99+=("$(reader_field "$TMP/gw$r.direct.json" none p99_ms)")
    echo "  round $r: job alone ${alone[-1]} s, with the gateway's reader ${with[-1]} s;" \
      "on-demand p50 ${od50[-1]} ms (${odn[-1]} reads), destination p50 ${ds50[-1]} ms (${dsn[-1]})," \
      "direct source p50 ${dir50[-1]} ms; CPU s: worker ${wcpu[-1]}, gateway ${gwcpu[-1]}, readers ${rdcpu[-1]}"
  done
  local ma mw mo md
  ma=$(median_of "${alone[@]}") mw=$(median_of "${with[@]}")
  mo=$(median_of "${od50[@]}") md=$(median_of "${dir50[@]}")
  local slower ratio
  slower=$(awk -v a="$ma" -v w="$mw" 'BEGIN { printf "%.1f", 100 * (w / a - 1) }')
  ratio=$(awk -v o="$mo" -v d="$md" 'BEGIN { printf "%.2f", o / d }')
  local summary="Job with the reader $slower% slower than alone (goal ≤ 10%); on-demand p50 ${ratio}× a direct source GET (goal ≤ 1.2×). Medians of $GATEWAY_ROUNDS rounds."
  echo "  $summary"
  {
    echo
    echo "### gateway: the 75k job with a reader through \`ferry gateway\` ($(date -u +%Y-%m-%d), $CORES cores, ${LATENCY_MS} ms per request)"
    echo
    echo "| figure | median | rounds |"
    echo "|---|---|---|"
    echo "| job alone, s | $ma | ${alone[*]} |"
    echo "| job with the reader, s | $mw | ${with[*]} |"
    echo "| reader p50, on-demand copies, ms | $mo | ${od50[*]} |"
    echo "| reader p99, on-demand copies, ms | $(median_of "${od99[@]}") | ${od99[*]} |"
    echo "| reader p50, copied by the job, ms | $(median_of "${ds50[@]}") | ${ds50[*]} |"
    echo "| reader p99, copied by the job, ms | $(median_of "${ds99[@]}") | ${ds99[*]} |"
    echo "| direct source GET p50, ms | $md | ${dir50[*]} |"
    echo "| direct source GET p99, ms | $(median_of "${dir99[@]}") | ${dir99[*]} |"
    echo "| reads on demand / from the destination | $(median_of "${odn[@]}") / $(median_of "${dsn[@]}") | ${odn[*]} / ${dsn[*]} |"
    echo "| CPU s during the job: worker / gateway / the two readers | $(median_of "${wcpu[@]}") / $(median_of "${gwcpu[@]}") / $(median_of "${rdcpu[@]}") | ${wcpu[*]} / ${gwcpu[*]} / ${rdcpu[*]} |"
    echo "| machine busy (tools' and servers' CPU over wall × cores), alone / with | $(median_of "${busy_alone[@]}")% / $(median_of "${busy_with[@]}")% | ${busy_alone[*]} / ${busy_with[*]} |"
    echo
    echo "$summary"
  } >>"$OUT"
  stop_servers
}
