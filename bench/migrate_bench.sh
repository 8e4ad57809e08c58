#!/usr/bin/env bash
# Bulk-copy benchmark: `ferry migrate` beside `rclone copy` (Debian's 1.60),
# bucket to bucket between two ferry-test-s3 servers (memory mode, loopback),
# in the same run on the same machine.
#
#   bench/migrate_bench.sh BUILD_DIR [75k|2m|pool|listing|verify|gateway|all]   (default: all)
#
#   75k  Source filled with /_admin/populate: N75K objects (95% of 1-32 KiB,
#        5% of 32 KiB-1 MiB, fixed seed) plus BIG_COUNT of BIG_SIZE bytes.
#        Both servers add LATENCY_MS to every S3 request. Runs, taking turns:
#        ferry migrate --concurrency C for each C in FERRY_CONCURRENCIES
#        (the first is the one quoted), rclone copy with --transfers/--checkers
#        64 and 256, then the faster of those with --fast-list.
#        Beside them: Cloudflare Super Slurper's published figure.
#   2m   N2M empty objects, latency LATENCY_2M_MS: ferry only (rclone too if
#        RCLONE_2M_TIMEOUT > 0, capped by `timeout`): time until listing_done,
#        total objects/s, peak RSS, state-store size and rows left.
#   pool 75k with the state in PostgreSQL and 1, 2, 4 `ferry worker`
#        processes, beside the SQLite state (see bench_pool).
#   listing, verify: see migrate_bench_verify.sh.
#   gateway: the 75k job with a reader through `ferry gateway`
#        (migrate_bench_gateway.sh).
#
# The servers run with --retain-memory, and before the first run the
# destination is filled once with as many bytes as a run brings (objects of
# at most 16 MiB) and cleared: every run then finds its memory ready instead
# of paying for the kernel zeroing fresh pages in the server (otherwise a
# large share of the machine, and only in the first run).
# Every run starts with an empty destination (POST /_admin/clear) and a fresh
# ferry state directory, and is checked afterwards: the destination's
# /_admin/stats storage.objects must equal the source's object count (and
# ferry's summary must say completed, nothing failed). Each run is timed with
# /usr/bin/time (wall, peak RSS, user+sys CPU of the tool); the servers' CPU
# seconds come from /proc/PID/stat before and after, so "machine busy" (all
# CPU / (wall x cores)) shows whether the cores were the limit.
#
# Environment (defaults are the published scale; shrink them to try it out):
#   N75K=75000 BIG_COUNT=4 BIG_SIZE=209715200 LATENCY_MS=20 SEED=75000
#   FERRY_CONCURRENCIES="256 128 512 64"  BENCH_RCLONE_TRANSFERS="64 256" (none: ferry only)
#   N2M=2000000 LATENCY_2M_MS=0 FERRY_2M_CONCURRENCY=256 RCLONE_2M_TIMEOUT=0
#   SERVER_THREADS=2
#   e.g. N75K=5000 BIG_COUNT=0 N2M=50000 bench/migrate_bench.sh build
#
# Tables are appended to bench/results/latest.md. Needs only loopback.
set -euo pipefail
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd)
WHAT=${2:-all}
case "$WHAT" in 75k | 2m | pool | listing | verify | gateway | all) ;; *) echo "usage: $0 BUILD_DIR [75k|2m|pool|listing|verify|gateway|all]" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."

N75K=${N75K:-75000}
BIG_COUNT=${BIG_COUNT:-4}
BIG_SIZE=${BIG_SIZE:-209715200}
LATENCY_MS=${LATENCY_MS:-20}
SEED=${SEED:-75000}
FERRY_CONCURRENCIES=${FERRY_CONCURRENCIES:-256 128 512 64}
BENCH_RCLONE_TRANSFERS=${BENCH_RCLONE_TRANSFERS:-64 256}
N2M=${N2M:-2000000}
LATENCY_2M_MS=${LATENCY_2M_MS:-0}
FERRY_2M_CONCURRENCY=${FERRY_2M_CONCURRENCY:-256}
RCLONE_2M_TIMEOUT=${RCLONE_2M_TIMEOUT:-0}
SERVER_THREADS=${SERVER_THREADS:-2}

FERRY="$BUILD/ferry"
TEST_S3="$BUILD/ferry-test-s3"
RCLONE=/usr/bin/rclone
for bin in "$FERRY" "$TEST_S3"; do [ -x "$bin" ] || { echo "missing $bin" >&2; exit 1; }; done
[ -x "$RCLONE" ] || { echo "missing $RCLONE (apt-get install rclone)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "missing /usr/bin/time (apt-get install time)" >&2; exit 1; }

TMP=$(mktemp -d /tmp/ferry-migrate-bench.XXXXXX)
PID_A= PID_B=
stop_servers() {
  local p
  for p in $PID_A $PID_B; do kill "$p" 2>/dev/null || true; done
  for p in $PID_A $PID_B; do wait "$p" 2>/dev/null || true; done
  PID_A= PID_B=
}
cleanup() { stop_servers; rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { echo "migrate_bench: $*" >&2; exit 1; }

mkdir -p bench/results
OUT=bench/results/latest.md
CORES=$(nproc)
TICKS=$(getconf CLK_TCK)

# Nothing from the user's AWS setup; AWS_CA_BUNDLE breaks rclone.
unset AWS_CA_BUNDLE AWS_PROFILE AWS_DEFAULT_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 \
  AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN || true
export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
export AWS_CONFIG_FILE="$TMP/aws-config" AWS_SHARED_CREDENTIALS_FILE="$TMP/aws-credentials"
export RCLONE_CONFIG=/dev/null
KEY=ferrytest SECRET=ferrytestsecret

# Helpers in Python: stamping ferry's JSON lines as they arrive, and reading
# JSON answers.
cat >"$TMP/util.py" <<'PY'
import json, os, sqlite3, sys, time
cmd = sys.argv[1]
if cmd == "stamp":  # stamp OUT: stdin lines -> "SECONDS_SINCE_$T0 LINE" in OUT
    t0 = float(os.environ["T0"])
    with open(sys.argv[2], "w") as out:
        for line in sys.stdin:
            out.write("%.3f %s" % (time.time() - t0, line))
            out.flush()
elif cmd == "summary":  # summary LOG FIELD: from the last JSON line of a stamped log
    last = None
    for line in open(sys.argv[2]):
        t, _, rest = line.partition(" ")
        try:
            j = json.loads(rest)
        except ValueError:
            continue
        if j.get("event") == "summary" or "state" in j:
            last = j
    print("" if last is None else last.get(sys.argv[3], ""))
elif cmd == "event_time":  # event_time LOG EVENT: stamp of the first such line
    for line in open(sys.argv[2]):
        t, _, rest = line.partition(" ")
        try:
            if json.loads(rest).get("event") == sys.argv[3]:
                print(t); break
        except ValueError:
            pass
    else:
        print("")
elif cmd == "get":  # get PATH.TO.FIELD: from one JSON document on stdin
    j = json.load(sys.stdin)
    for part in sys.argv[2].split("."):
        j = j[part]
    print(j)
elif cmd == "rows":  # rows DB: "table=rows ..." for every table
    db = sqlite3.connect("file:%s?mode=ro" % sys.argv[2], uri=True)
    names = [r[0] for r in db.execute("select name from sqlite_master where type='table' order by name")]
    print(" ".join("%s=%d" % (n, db.execute('select count(*) from "%s"' % n).fetchone()[0]) for n in names))
PY
py() { /usr/bin/python3 "$TMP/util.py" "$@"; }

# start_servers LATENCY_MS: servers a (source) and b (destination), bucket bkt.
start_servers() {
  local name pf i
  for name in a b; do
    pf="$TMP/port.$name"
    rm -f "$pf"
    "$TEST_S3" --listen 127.0.0.1:0 --port-file "$pf" --bucket bkt --access-key "$KEY" \
      --secret-key "$SECRET" --latency-ms "$1" --threads "$SERVER_THREADS" --retain-memory \
      >"$TMP/server.$name.log" 2>&1 &
    if [ $name = a ]; then PID_A=$!; else PID_B=$!; fi
    for i in $(seq 1 100); do [ -s "$pf" ] && break; sleep 0.1; done
    [ -s "$pf" ] || { cat "$TMP/server.$name.log" >&2; die "server $name did not start"; }
  done
  URL_A="http://127.0.0.1:$(cat "$TMP/port.a")"
  URL_B="http://127.0.0.1:$(cat "$TMP/port.b")"
  # ferry: one AWS profile per endpoint (--src-profile a --dst-profile b).
  printf '[profile a]\nendpoint_url = %s\nregion = us-east-1\n[profile b]\nendpoint_url = %s\nregion = us-east-1\n' \
    "$URL_A" "$URL_B" >"$AWS_CONFIG_FILE"
  printf '[a]\naws_access_key_id = %s\naws_secret_access_key = %s\n[b]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
    "$KEY" "$SECRET" "$KEY" "$SECRET" >"$AWS_SHARED_CREDENTIALS_FILE"
  # rclone: remotes a: and b:.
  local r u
  for r in A B; do
    if [ $r = A ]; then u=$URL_A; else u=$URL_B; fi
    export RCLONE_CONFIG_${r}_TYPE=s3 RCLONE_CONFIG_${r}_PROVIDER=Other RCLONE_CONFIG_${r}_ENDPOINT="$u"
    export RCLONE_CONFIG_${r}_ACCESS_KEY_ID="$KEY" RCLONE_CONFIG_${r}_SECRET_ACCESS_KEY="$SECRET"
    export RCLONE_CONFIG_${r}_REGION=us-east-1
  done
}

admin() {  # admin URL METHOD PATH [JSON]
  if [ $# -ge 4 ]; then
    curl -sf -X "$2" -H 'Content-Type: application/json' --data "$4" "$1$3"
  else
    curl -sf -X "$2" "$1$3"
  fi
}
objects_at() { admin "$1" GET /_admin/stats | py get storage.objects; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
secs_of_ticks() { awk -v t="$1" -v h="$TICKS" 'BEGIN { printf "%.1f", t / h }'; }

# populate JSON [URL]: fills server a (or URL); sets POP_CREATED / POP_BYTES.
populate() {
  local answer url=${2:-$URL_A}
  answer=$(admin "$url" POST /_admin/populate "$1") || die "populate failed: $1"
  POP_CREATED=$(py get created <<<"$answer")
  POP_BYTES=$(py get bytes <<<"$answer")
  echo "  $([ "$url" = "$URL_A" ] && echo source || echo destination): $POP_CREATED objects, $POP_BYTES bytes (populate took $(py get seconds <<<"$answer") s)"
}

# measure ID EXPECT CMD...: one timed run into an empty destination (or, with
# KEEP_DST=1, the destination as it is). stdout goes, stamped, to
# $TMP/ID.log. Sets R_SECS R_RSS (KiB) R_CPU (tool user+sys seconds) R_USYS
# ("user+sys") R_SRV (servers' CPU seconds, "a+b") R_BUSY (% of all cores)
# R_RC R_DST.
measure() {
  local id=$1 expect=$2
  shift 2
  [ -n "${KEEP_DST:-}" ] || admin "$URL_B" POST /_admin/clear >/dev/null
  admin "$URL_A" POST /_admin/reset >/dev/null
  admin "$URL_B" POST /_admin/reset >/dev/null
  sync
  local a0 b0 a1 b1 rcs
  a0=$(cpu_ticks "$PID_A") b0=$(cpu_ticks "$PID_B")
  export T0
  T0=$(date +%s.%N)
  set +e
  /usr/bin/time -f '%e %M %U %S' -o "$TMP/$id.time" "$@" 2>"$TMP/$id.err" | py stamp "$TMP/$id.log"
  rcs=("${PIPESTATUS[@]}")
  set -e
  R_RC=${rcs[0]}
  a1=$(cpu_ticks "$PID_A") b1=$(cpu_ticks "$PID_B")
  local u s
  read -r R_SECS R_RSS u s < <(grep -E '^[0-9.]+ [0-9]+ [0-9.]+ [0-9.]+$' "$TMP/$id.time")
  R_CPU=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.1f", u + s }')
  R_USYS=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.1f+%.1f", u, s }')
  R_SRV="$(secs_of_ticks $((a1 - a0)))+$(secs_of_ticks $((b1 - b0)))"
  R_BUSY=$(awk -v c="$R_CPU" -v a=$((a1 - a0)) -v b=$((b1 - b0)) -v h="$TICKS" -v w="$R_SECS" -v n="$CORES" \
    'BEGIN { printf "%.0f", 100 * (c + (a + b) / h) / (w * n) }')
  R_DST=$(objects_at "$URL_B")
  if [ "$R_RC" != 0 ] || [ "$R_DST" != "$expect" ]; then
    echo "  $id: exit $R_RC, destination holds $R_DST of $expect objects" >&2
    tail -5 "$TMP/$id.err" >&2
  fi
}

# check_ferry ID EXPECT: ferry's summary says completed, all transferred.
check_ferry() {
  local log="$TMP/$1.log" st tr fa
  st=$(py summary "$log" state) tr=$(py summary "$log" transferred) fa=$(py summary "$log" failed)
  [ "$R_RC" = 0 ] && [ "$st" = completed ] && [ "$tr" = "$2" ] && [ "$fa" = 0 ] && [ "$R_DST" = "$2" ] ||
    die "$1: ferry exit $R_RC, state '$st', transferred $tr, failed $fa, destination $R_DST (want $2)"
}
# warm_destination COUNT BIG16: fills server b with COUNT objects of the 75k
# sizes and BIG16 of 16 MiB, then clears it (see --retain-memory).
warm_destination() {
  local extra="" i
  for i in $(seq 1 "$2"); do extra+="${extra:+,}{\"key\":\"w/big$i\",\"size\":16777216}"; done
  admin "$URL_B" POST /_admin/populate "{\"bucket\":\"bkt\",\"prefix\":\"w/\",\"count\":$1,
    \"seed\":1,\"sizes\":[{\"weight\":95,\"min\":1024,\"max\":32768},
    {\"weight\":5,\"min\":32769,\"max\":1048576}],\"extra\":[$extra]}" >/dev/null ||
    die "warming the destination failed"
  admin "$URL_B" POST /_admin/clear >/dev/null
}
mib() { echo $(( $1 / 1024 )); }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", n / s }'; }
mbs() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / 1e6 / s }'; }

# populate_75k: the 75k source (N75K objects of the 75k sizes, fixed seed,
# plus BIG_COUNT of BIG_SIZE) on server a, and the destination warmed.
populate_75k() {
  local extra="" i
  for i in $(seq 0 $((BIG_COUNT - 1))); do
    extra+="${extra:+,}{\"key\":\"big/$i\",\"size\":$BIG_SIZE}"
  done
  populate "{\"bucket\":\"bkt\",\"prefix\":\"p/\",\"count\":$N75K,\"seed\":$SEED,
    \"sizes\":[{\"weight\":95,\"min\":1024,\"max\":32768},{\"weight\":5,\"min\":32769,\"max\":1048576}],
    \"extra\":[$extra],\"content_type\":\"application/octet-stream\"}" "${1:-$URL_A}"
  [ -n "${1:-}" ] && return
  [ "$(objects_at "$URL_A")" = "$POP_CREATED" ] || die "source holds the wrong object count"
  warm_destination "$N75K" $(( (BIG_COUNT * BIG_SIZE + (16 << 20) - 1) / (16 << 20) ))
}

bench_75k() {
  echo "== migrate 75k: $N75K objects + $BIG_COUNT x $BIG_SIZE B, ${LATENCY_MS} ms latency per request"
  start_servers "$LATENCY_MS"
  populate_75k
  local expect=$POP_CREATED bytes=$POP_BYTES
  local rows=() best_f="" best_fs="" best_r="" best_rs="" best_all="" best_alls="" run=0

  row() {  # row TOOL SETTINGS [LISTING_DONE]: one table line from the R_* of the last run
    rows+=("| $1 | \`$2\` | $R_SECS | $(rate "$expect" "$R_SECS") | $(mbs "$bytes" "$R_SECS") | $(mib "$R_RSS") | $R_USYS | $R_SRV | $R_BUSY% | ${3:--} |")
    printf '  %-14s %-44s %7ss %6s obj/s %7s MB/s  RSS %5s MiB  CPU %5ss  servers %9ss  busy %3s%%%s\n' \
      "$1" "$2" "$R_SECS" "$(rate "$expect" "$R_SECS")" "$(mbs "$bytes" "$R_SECS")" "$(mib "$R_RSS")" \
      "$R_USYS" "$R_SRV" "$R_BUSY" "${3:+  listing done at ${3}s}"
  }
  ferry_run() {  # ferry_run CONCURRENCY
    run=$((run + 1))
    measure "ferry$run" "$expect" "$FERRY" migrate s3://bkt s3://bkt --src-profile a --dst-profile b \
      --concurrency "$1" --state "$TMP/state.ferry$run" --json
    check_ferry "ferry$run" "$expect"
    row "ferry migrate" "--concurrency $1" "$(py event_time "$TMP/ferry$run.log" listing_done)"
    if [ -z "$best_f" ] || awk -v a="$R_SECS" -v b="$best_fs" 'BEGIN { exit !(a < b) }'; then
      best_f=$1 best_fs=$R_SECS
    fi
  }
  rclone_run() {  # rclone_run TRANSFERS [--fast-list]
    run=$((run + 1))
    local t=$1
    shift
    measure "rclone$run" "$expect" "$RCLONE" copy a:bkt b:bkt --transfers "$t" --checkers "$t" "$@"
    [ "$R_RC" = 0 ] && [ "$R_DST" = "$expect" ] || die "rclone run failed (exit $R_RC, destination $R_DST of $expect)"
    row "rclone copy" "--transfers $t --checkers $t${1:+ $1}"
    if [ -z "$best_all" ] || awk -v a="$R_SECS" -v b="$best_alls" 'BEGIN { exit !(a < b) }'; then
      best_all="--transfers $t --checkers $t${1:+ $1}" best_alls=$R_SECS
    fi
    if [ $# = 0 ] && { [ -z "$best_r" ] || awk -v a="$R_SECS" -v b="$best_rs" 'BEGIN { exit !(a < b) }'; }; then
      best_r=$t best_rs=$R_SECS
    fi
  }

  # The tools take turns so that background noise falls on both alike.
  local fc=($FERRY_CONCURRENCIES) rt=($BENCH_RCLONE_TRANSFERS) k=0 last=${#rt[@]}
  if [ "$BENCH_RCLONE_TRANSFERS" = none ]; then rt=() last=-1; fi
  while [ $k -lt ${#fc[@]} ] || [ $k -le $last ]; do
    [ $k -lt ${#fc[@]} ] && ferry_run "${fc[$k]}"
    if [ $k -lt ${#rt[@]} ]; then
      rclone_run "${rt[$k]}"
    elif [ $k = "$last" ]; then
      rclone_run "$best_r" --fast-list
    fi
    k=$((k + 1))
  done
  # Super Slurper (Cloudflare R2 migration service), published: 75,000
  # objects in 3 min 25 s. Object sizes were not published, so no MB/s.
  rows+=("| Super Slurper (published) | — | 205 | 366 | — | — | — | — | — | — |")
  local f_rate r_rate
  f_rate=$(rate "$expect" "$best_fs") r_rate=$(rate "$expect" "${best_alls:-1}")
  local summary="Best ferry: \`--concurrency $best_f\`, ${best_fs} s ($f_rate objects/s); best rclone: \`$best_all\`, ${best_alls} s ($r_rate objects/s); ferry ÷ rclone $(awk -v a="$best_alls" -v b="$best_fs" 'BEGIN { printf "%.2f", a / b }')×, ferry ÷ Super Slurper $(awk -v r="$f_rate" 'BEGIN { printf "%.1f", r / 366 }')× (objects/s)."
  [ -n "$best_all" ] || summary="Best ferry: \`--concurrency $best_f\`, ${best_fs} s ($f_rate objects/s); no rclone run."
  echo "  $summary"
  {
    echo
    echo "### migrate: $N75K objects + $BIG_COUNT × $((BIG_SIZE >> 20)) MiB, bucket to bucket, ${LATENCY_MS} ms per request ($(date -u +%Y-%m-%d), $CORES cores)"
    echo
    echo "Two ferry-test-s3 servers in memory on this machine; $expect objects, $bytes bytes (populate seed $SEED: 95% of 1–32 KiB, 5% of 32 KiB–1 MiB). One run each, tools taking turns; each run starts with an empty destination and is checked (object count at the destination). tool CPU: user+sys seconds (/usr/bin/time); servers: source+destination CPU seconds during the run; busy: all of that over wall × $CORES cores."
    echo
    echo "| tool | settings | seconds | objects/s | MB/s | peak RSS MiB | tool CPU s (user+sys) | servers CPU s (src+dst) | busy | listing done at s |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "$summary"
  } >>"$OUT"
  stop_servers
}

bench_2m() {
  echo "== migrate 2m: $N2M empty objects, ${LATENCY_2M_MS} ms latency per request"
  start_servers "$LATENCY_2M_MS"
  populate "{\"bucket\":\"bkt\",\"prefix\":\"p/\",\"count\":$N2M,\"seed\":$SEED,\"sizes\":[{\"weight\":1,\"min\":0,\"max\":0}]}"
  local expect=$POP_CREATED state="$TMP/state.2m"
  measure ferry2m "$expect" "$FERRY" migrate s3://bkt s3://bkt --src-profile a --dst-profile b \
    --concurrency "$FERRY_2M_CONCURRENCY" --state "$state" --json
  check_ferry ferry2m "$expect"
  local listed_at state_kib rows_left
  listed_at=$(py event_time "$TMP/ferry2m.log" listing_done)
  local listed_rate="?"
  [ -z "$listed_at" ] || listed_rate=$(rate "$expect" "$listed_at")
  state_kib=$(du -sk "$state" | cut -f1)
  rows_left=$(py rows "$state/migrate.db")
  local line="| ferry migrate | \`--concurrency $FERRY_2M_CONCURRENCY\` | $expect | ${listed_at:-?} | $listed_rate | $R_SECS | $(rate "$expect" "$R_SECS") | $(mib "$R_RSS") | $R_USYS | $R_SRV | $R_BUSY% | $state_kib KiB; $rows_left |"
  printf '  ferry: listing done at %ss (%s objects/s listed), all done in %ss (%s objects/s), RSS %s MiB, CPU %ss, servers %ss, busy %s%%\n' \
    "${listed_at:-?}" "$listed_rate" "$R_SECS" "$(rate "$expect" "$R_SECS")" "$(mib "$R_RSS")" "$R_USYS" "$R_SRV" "$R_BUSY"
  echo "  state store at the end: $state_kib KiB ($(cd "$state" && ls | tr '\n' ' ')); rows: $rows_left"
  local rline=""
  if [ "$RCLONE_2M_TIMEOUT" -gt 0 ]; then
    measure rclone2m "$expect" timeout "$RCLONE_2M_TIMEOUT" "$RCLONE" copy a:bkt b:bkt \
      --transfers 256 --checkers 256
    local note=""
    if [ "$R_RC" = 124 ]; then
      note="stopped by timeout after ${RCLONE_2M_TIMEOUT} s with $R_DST of $expect copied"
    elif [ "$R_RC" != 0 ] || [ "$R_DST" != "$expect" ]; then
      die "rclone 2m failed (exit $R_RC, destination $R_DST of $expect)"
    fi
    rline="| rclone copy | \`--transfers 256 --checkers 256\` | $R_DST | — | — | $R_SECS | $(rate "$R_DST" "$R_SECS") | $(mib "$R_RSS") | $R_USYS | $R_SRV | $R_BUSY% | ${note:-—} |"
    echo "  rclone: $R_DST objects in ${R_SECS}s ($(rate "$R_DST" "$R_SECS") objects/s), RSS $(mib "$R_RSS") MiB${note:+ ($note)}"
  fi
  {
    echo
    echo "### migrate: $N2M empty objects, bucket to bucket, ${LATENCY_2M_MS} ms per request ($(date -u +%Y-%m-%d), $CORES cores)"
    echo
    echo "Listing throughput: objects over the time until ferry's \`listing_done\` event (lines stamped as they arrive). State: \`du\` of the state directory after the run, and rows left per table."
    echo
    echo "| tool | settings | objects | listing done at s | listed objects/s | seconds | objects/s | peak RSS MiB | tool CPU s (user+sys) | servers CPU s (src+dst) | busy | state store at the end |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    echo "$line"
    if [ -n "$rline" ]; then
      echo "$rline"
    else
      echo
      echo "rclone not run at this scale (set RCLONE_2M_TIMEOUT=SECONDS to include it, capped by timeout)."
    fi
  } >>"$OUT"
  stop_servers
}

# The worker pool on PostgreSQL: the 75k scenario with the state in a
# throwaway PostgreSQL cluster (testing/pg/pg_cluster.sh) and 1, 2 and 4
# `ferry worker` processes on this machine (POOL_WORKERS), beside the same
# job with the embedded SQLite state, taking turns. Each PostgreSQL run gets
# a fresh database; the job is made with --detach and the workers run it
# with --once. Reports objects/s, the state store's calls per object and
# share of the run (seconds callers waited in it, summed over workers and
# threads, over the wall time), PostgreSQL's CPU, and the rows left.
pg_cpu_ticks() {  # every server process's own CPU, plus what exited backends left in the postmaster
  local p t=0
  for p in $(pgrep -u "$PG_USER" -f "postgres" || true); do
    t=$((t + $(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo $t
}
bench_pool() {
  echo "== migrate pool: $N75K objects + $BIG_COUNT x $BIG_SIZE B, ${LATENCY_MS} ms latency, state in PostgreSQL"
  local conninfo
  chmod 711 "$TMP"
  mkdir -p "$TMP/pg"
  conninfo=$(testing/pg/pg_cluster.sh start "$TMP/pg") ||
    die "the PostgreSQL cluster did not start (make setup installs it)"
  PG_USER=$([ "$(id -u)" = 0 ] && echo nobody || id -un)
  trap 'testing/pg/pg_cluster.sh stop "$TMP/pg" || true; cleanup' EXIT
  start_servers "$LATENCY_MS"
  populate_75k
  local expect=$POP_CREATED bytes=$POP_BYTES
  cat >"$TMP/pool_run.sh" <<'SH'
#!/usr/bin/env bash
# pool_run.sh FERRY STATE WORKERS CONCURRENCY: a job for the pool, and WORKERS
# workers that run it to the end.
set -e
"$1" migrate s3://bkt s3://bkt --src-profile a --dst-profile b --concurrency "$4" --state "$2" \
  --detach -q >/dev/null
pids=()
for _ in $(seq 1 "$3"); do "$1" worker --once --state "$2" --json --poll-ms 50 & pids+=($!); done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc
SH
  chmod +x "$TMP/pool_run.sh"
  local rows=() run=0 c=${POOL_CONCURRENCY:-256} sqlite_secs=""
  # summed STATE FIELD over every summary line of a stamped log
  summed() { awk -v f="\"$2\":" '{ i = index($0, f); if (i) { v = substr($0, i + length(f)); sub(/[,}].*/, "", v); s += v } } END { printf "%.2f", s }' "$1"; }
  pool_row() {  # pool_row LABEL LOG PG_CPU ROWS
    local calls secs
    calls=$(summed "$2" state_calls) secs=$(summed "$2" state_seconds)
    # busy counts PostgreSQL's CPU too: it shares the cores.
    [ "$3" = "—" ] || R_BUSY=$(awk -v b="$R_BUSY" -v p="$3" -v w="$R_SECS" -v n="$CORES" \
      'BEGIN { printf "%.0f", b + 100 * p / (w * n) }')
    rows+=("| $1 | $R_SECS | $(rate "$expect" "$R_SECS") | $(mib "$R_RSS") | $R_USYS | $R_SRV | $3 | $R_BUSY% | $(awk -v c="$calls" -v n="$expect" 'BEGIN { printf "%.3f", c / n }') | $(awk -v s="$secs" -v w="$R_SECS" 'BEGIN { printf "%.0f%%", 100 * s / w }') | $4 |")
    printf '  %-28s %7ss %6s obj/s  RSS %5s MiB  CPU %9ss  servers %9ss  postgres %5ss  busy %3s%%  state calls/object %s, waited %ss\n' \
      "$1" "$R_SECS" "$(rate "$expect" "$R_SECS")" "$(mib "$R_RSS")" "$R_USYS" "$R_SRV" "$3" "$R_BUSY" \
      "$(awk -v c="$calls" -v n="$expect" 'BEGIN { printf "%.3f", c / n }')" "$secs"
  }
  sqlite_run() {
    run=$((run + 1))
    measure "pool$run" "$expect" "$FERRY" migrate s3://bkt s3://bkt --src-profile a --dst-profile b \
      --concurrency "$c" --state "$TMP/state.pool$run" --json
    check_ferry "pool$run" "$expect"
    pool_row "SQLite, 1 process" "$TMP/pool$run.log" "—" "$(py rows "$TMP/state.pool$run/migrate.db" | tr ' ' '\n' | grep -v '=0$' | tr '\n' ' ')"
    [ -n "$sqlite_secs" ] || sqlite_secs=$R_SECS
  }
  pg_run() {  # pg_run WORKERS
    run=$((run + 1))
    local db="b$run" p0 p1 left
    psql "$conninfo" -qc "CREATE DATABASE $db" >/dev/null || die "cannot create database $db"
    p0=$(pg_cpu_ticks)
    measure "pool$run" "$expect" "$TMP/pool_run.sh" "$FERRY" "postgres:$conninfo dbname=$db" "$1" "$c"
    p1=$(pg_cpu_ticks)
    check_ferry "pool$run" "$expect"
    left=$(psql "$conninfo dbname=$db" -tAc "select 'jobs=' || (select count(*) from jobs) || ' shards=' || (select count(*) from shards) || ' objects=' || (select count(*) from objects) || ' uploads=' || (select count(*) from uploads) || ' parts=' || (select count(*) from parts) || ' dlq=' || (select count(*) from dlq) || ' archived_jobs=' || (select count(*) from archived_jobs) || ' archived_dlq=' || (select count(*) from archived_dlq)")
    pool_row "PostgreSQL, $1 worker$([ "$1" = 1 ] || echo s)" "$TMP/pool$run.log" "$(secs_of_ticks $((p1 - p0)))" "$left"
  }
  local w
  sqlite_run
  for w in ${POOL_WORKERS:-1 2 4}; do pg_run "$w"; done
  sqlite_run
  {
    echo
    echo "### migrate pool: $N75K objects + $BIG_COUNT × $((BIG_SIZE >> 20)) MiB, state in PostgreSQL, 1/2/4 workers ($(date -u +%Y-%m-%d), $CORES cores)"
    echo
    echo "The 75k scenario (${LATENCY_MS} ms per request), every job at \`--concurrency $c\` per process. SQLite: \`ferry migrate\` alone (run first and last). PostgreSQL (Debian's 15, a throwaway cluster on this machine, fsync off): \`ferry migrate --detach\` then N \`ferry worker --once\`. state calls/object: StateStore calls over objects; state waited: seconds callers spent in them, summed over threads and workers, over the wall time. postgres CPU: the server's CPU seconds during the run. busy: ferry, the S3 servers and PostgreSQL over wall × $CORES cores. Rows left: what the database holds afterwards (zero counts omitted for SQLite)."
    echo
    echo "| state | seconds | objects/s | peak RSS MiB | ferry CPU s (user+sys) | servers CPU s (src+dst) | postgres CPU s | busy | state calls/object | state waited | rows left |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
  } >>"$OUT"
  stop_servers
}

source bench/migrate_bench_verify.sh  # (the working directory is the checkout)
source bench/migrate_bench_gateway.sh

case "$WHAT" in
  75k) bench_75k ;;
  2m) bench_2m ;;
  pool) bench_pool ;;
  listing) bench_listing ;;
  verify) bench_verify ;;
  gateway) bench_gateway ;;
  all) bench_75k; bench_2m; bench_listing; bench_verify; bench_gateway ;;
esac
echo "tables appended to $OUT"
