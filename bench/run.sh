#!/usr/bin/env bash
# make bench: ferry beside its peers, in the same run on the same server.
#
#   1. cp of a 1 GiB object, test server -> local and local -> test server:
#      ferry cp, aws s3 cp (Debian's awscli) and rclone copyto (Debian's
#      rclone), each with its default settings; GiB/s (median of $RUNS runs)
#      and peak RSS (/usr/bin/time). rclone gets --ignore-times so that it
#      uploads even though an earlier run left the same object. Downloads
#      count until the file is durable (see measure()).
#   2. Google Benchmark micro-benchmarks: SigV4 signing, list-page parsing,
#      ferry's zstd coder beside raw libzstd; the cache's stored/logical ratio
#      and coder cost on the corpus of web text (bench/cache_corpus.sh).
#   3. Cache hit throughput with wrk: ferry cache serve beside nginx
#      proxy_cache and Varnish, for zstd and identity clients, on the same
#      corpus behind an nginx origin (bench/cache_hit_bench.sh;
#      CACHE_HIT_BENCH=none skips it; skipped with a message when nginx,
#      varnish, wrk or the corpus is missing).
#   3b. The cache over TLS, HTTP/1.1 (wrk) and HTTP/2 (h2load), for zstd,
#      br, gzip and identity clients: ferry beside nginx (gzip on) and
#      Varnish behind hitch, and the disk each cache takes for the corpus
#      (bench/cache_tls_bench.sh; CACHE_TLS_BENCH=none skips it).
#   3c. What compressing costs on the cache's fill path beside one-shot
#      libzstd, small and large bodies (bench/cache_fill_bench.sh;
#      CACHE_FILL_BENCH=none skips it).
#   4. Lazy volumes: time to the first read and to a boot set beside
#      downloading the image first, trigger latency from the object store and
#      from the transfer cache, bytes 50 clones take from the object store,
#      background hydration against the origin's cap (bench/volume_bench.sh;
#      VOLUME_BENCH=none skips it; with --vm: real guests booting from lazy
#      clones beside a local copy: no order, an order predicted from the
#      image, a recorded order; median of 5 rounds); NBD pipelining (a guest's 16 reads in
#      flight) and block status (copies of a half-empty fresh volume beside
#      nbdkit) (bench/volume_nbd_bench.sh; VOLUME_NBD_BENCH=none skips it).
#   4c. A boot storm: 500 to 8,000 guests replaying a recorded qemu boot
#      (testing/traces/vm_boot.trace) on lazy clones over 8 daemons sharing
#      one origin through a cache tier; boot p50/p99/max beside one guest
#      alone, origin bytes, per-guest costs (bench/volume_storm_bench.sh;
#      VOLUME_STORM_BENCH=none skips it).
#   4d. Prefetch orders: one clone's replayed boot on an image with 1.6 GB
#      more data than its boot reads, with no order, a wrong one, the
#      predicted one and one learned (--learn-orders), beside a clone
#      hydrated whole (bench/volume_order_bench.sh; VOLUME_ORDER_BENCH=none
#      skips it).
#   5. Bulk copy, bucket to bucket: ferry migrate beside rclone copy
#      (bench/migrate_bench.sh; MIGRATE_BENCH=75k|2m|listing|verify|gateway|all|none,
#      default all).
#
# Machines are noisy: read the ratios within one run, not absolute figures
# across runs. Results also land in bench/results/latest.md; the published
# runs, their method and history are in docs/benchmarks.md (the latest
# headline figures also in the README's "Performance" table).
set -euo pipefail
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd)
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
SIZE_MIB=${SIZE_MIB:-1024}
TMP=$(mktemp -d /tmp/ferry-bench.XXXXXX)
export DST="$TMP/dst.bin"
SERVER_PID=
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$TMP"; }
stop_server() { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=; }
trap cleanup EXIT
mkdir -p bench/results
OUT=bench/results/latest.md

"$BUILD/ferry-test-s3" --listen 127.0.0.1:0 --port-file "$TMP/port" --bucket bench \
    --access-key bench --secret-key bench-secret >"$TMP/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
PORT=$(cat "$TMP/port")
URL="http://127.0.0.1:$PORT"

export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret AWS_REGION=us-east-1
export AWS_DEFAULT_REGION=us-east-1 AWS_ENDPOINT_URL="$URL" AWS_PAGER=""
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export RCLONE_CONFIG_BENCH_TYPE=s3 RCLONE_CONFIG_BENCH_PROVIDER=Other
export RCLONE_CONFIG_BENCH_ACCESS_KEY_ID=bench RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY=bench-secret
export RCLONE_CONFIG_BENCH_ENDPOINT="$URL" RCLONE_CONFIG_BENCH_REGION=us-east-1
export RCLONE_CONFIG=/dev/null

echo "making a ${SIZE_MIB} MiB file..."
head -c $((SIZE_MIB << 20)) /dev/urandom >"$TMP/src.bin"

# run_once NAME DIRECTION CMD...: one timed run; appends its seconds to
# TIMES[NAME.DIRECTION] and keeps the largest peak RSS in RSS[...].
declare -A SECS RSS TIMES
run_once() {
  local name=$1 dir=$2; shift 2
  rm -f "$TMP/dst.bin"
  sync  # no dirty pages left from earlier steps to compete with this run
  # Downloads are timed until the file is on disk: ferry fsyncs before it
  # renames the file into place, the peers do not, so each run ends with
  # `sync FILE` (free for ferry, whose data is already durable).
  /usr/bin/time -f "%e %M" -o "$TMP/time" \
    bash -c '"$@" && if [ "$0" = download ]; then sync "$DST"; fi' "$dir" "$@" >/dev/null 2>"$TMP/err" ||
    { cat "$TMP/err" >&2; echo "bench: $name $dir failed" >&2; exit 1; }
  local t m
  read -r t m <"$TMP/time"
  TIMES[$name.$dir]="${TIMES[$name.$dir]:-} $t"
  [ "$m" -gt "${RSS[$name.$dir]:-0}" ] && RSS[$name.$dir]=$m
  if [ "$dir" = download ]; then
    cmp -s "$TMP/src.bin" "$TMP/dst.bin" || { echo "bench: $name download differs" >&2; exit 1; }
  fi
}

# The tools take turns (ferry, aws, rclone, ferry, ...) so that whatever the
# machine does in the background falls on all of them alike.
echo "cp of ${SIZE_MIB} MiB, $RUNS runs each, interleaved (server: ferry-test-s3 in memory, $URL)"
for i in $(seq 1 "$RUNS"); do
  run_once ferry upload "$BUILD/ferry" cp -q "$TMP/src.bin" s3://bench/obj.bin
  run_once aws upload /usr/bin/aws --endpoint-url "$URL" s3 cp --quiet "$TMP/src.bin" s3://bench/obj-aws.bin
  run_once rclone upload env -u AWS_CA_BUNDLE /usr/bin/rclone copyto --ignore-times "$TMP/src.bin" bench:bench/obj-rclone.bin
done
for i in $(seq 1 "$RUNS"); do
  run_once ferry download "$BUILD/ferry" cp -q s3://bench/obj.bin "$TMP/dst.bin"
  run_once aws download /usr/bin/aws --endpoint-url "$URL" s3 cp --quiet s3://bench/obj.bin "$TMP/dst.bin"
  run_once rclone download env -u AWS_CA_BUNDLE /usr/bin/rclone copyto bench:bench/obj.bin "$TMP/dst.bin"
done
for key in ferry.upload aws.upload rclone.upload ferry.download aws.download rclone.download; do
  SECS[$key]=$(printf '%s\n' ${TIMES[$key]} | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")
  printf '  %-16s median %6ss  peak RSS %6d MiB  (runs:%s)\n' "$key" "${SECS[$key]}" \
    $(( ${RSS[$key]} / 1024 )) "${TIMES[$key]}"
done

gibs() { awk -v s="$1" -v m="$SIZE_MIB" 'BEGIN { printf "%.2f", (m / 1024) / s }'; }
{
  echo "### cp of a ${SIZE_MIB} MiB object ($(date -u +%Y-%m-%d), $(nproc) cores, median of $RUNS)"
  echo
  echo "| direction | ferry GiB/s | aws s3 cp GiB/s | rclone copyto GiB/s | ferry ÷ faster peer | ferry peak RSS | aws RSS | rclone RSS |"
  echo "|---|---|---|---|---|---|---|---|"
  for dir in upload download; do
    f=${SECS[ferry.$dir]} a=${SECS[aws.$dir]} r=${SECS[rclone.$dir]}
    best=$(awk -v a="$a" -v r="$r" 'BEGIN { print (a < r ? a : r) }')
    ratio=$(awk -v b="$best" -v f="$f" 'BEGIN { printf "%.2f", b / f }')
    echo "| $dir | $(gibs "$f") | $(gibs "$a") | $(gibs "$r") | ${ratio}× | $(( ${RSS[ferry.$dir]} / 1024 )) MiB | $(( ${RSS[aws.$dir]} / 1024 )) MiB | $(( ${RSS[rclone.$dir]} / 1024 )) MiB |"
  done
  echo
  echo "### Micro-benchmarks (Google Benchmark)"
  echo
  echo '```'
  "$BUILD/bench/ferry_micro_bench" --benchmark_min_time=0.3 2>/dev/null | grep -E '^(BM_|Benchmark|-)'
  echo '```'
  echo
  echo "### Cache: what would be stored for the web-text corpus (policy and coder, no server yet)"
  echo
  bench/cache_corpus.sh "$BUILD"
} | tee "$OUT"

# own_step NAME MISSING SCRIPT: a benchmark with its own servers, after the
# test server's memory is given back; its table goes to the results. Exit 77
# from it: a peer it needs is missing (MISSING names them; make setup).
own_step() {
  stop_server
  local rc=0
  "$3" "$BUILD" "${@:4}" >"$TMP/$1.md" || rc=$?
  if [ "$rc" = 77 ]; then
    echo "$1 benchmark skipped: $2 is missing (make setup)"
  else
    { echo; cat "$TMP/$1.md"; } | tee -a "$OUT"
    [ "$rc" = 0 ] || { echo "bench: $1 benchmark failed" >&2; exit "$rc"; }
  fi
}

# 3. Cache hits: its own origin and caches.
if [ "${CACHE_HIT_BENCH:-all}" != none ]; then
  rm -f "$TMP/src.bin" "$TMP/dst.bin"
  own_step "cache hit" "nginx, varnish, wrk or the corpus" bench/cache_hit_bench.sh
fi

# 3b. The cache over TLS and HTTP/2: its own origin and caches.
if [ "${CACHE_TLS_BENCH:-all}" != none ]; then
  own_step "cache tls" "nginx, varnish, hitch, wrk, h2load (nghttp2-client), brotli or the corpus" \
    bench/cache_tls_bench.sh
fi
# 3c. The fill path's encode cost (bench/cache_fill_bench.sh).
if [ "${CACHE_FILL_BENCH:-all}" != none ]; then
  own_step "cache fill" "nginx or the corpus's packages" bench/cache_fill_bench.sh
fi

# 4. Lazy volumes: their own test server and daemon.
if [ "${VOLUME_BENCH:-all}" != none ]; then
  own_step volume "qemu-utils, libnbd-bin, fuse3, nbdkit or e2fsprogs" bench/volume_bench.sh --vm
fi
# 4b. NBD pipelining and block status (bench/volume_nbd_bench.sh).
if [ "${VOLUME_NBD_BENCH:-all}" != none ]; then
  own_step "volume nbd" "qemu-utils, libnbd-bin or nbdkit" bench/volume_nbd_bench.sh
fi
# 4c. A boot storm: thousands of guests replaying a recorded qemu boot on
# lazy clones over 8 daemons (bench/volume_storm_bench.sh).
if [ "${VOLUME_STORM_BENCH:-all}" != none ]; then
  own_step "volume storm" "e2fsprogs" bench/volume_storm_bench.sh
fi
# 4d. Prefetch orders that are wrong, predicted or learned (bench/volume_order_bench.sh).
if [ "${VOLUME_ORDER_BENCH:-all}" != none ]; then
  own_step "volume order" "e2fsprogs or qemu-utils" bench/volume_order_bench.sh
fi

# 5. Bulk copy; its own servers, so this one's memory is given back first.
# It appends its tables to $OUT.
if [ "${MIGRATE_BENCH:-all}" != none ]; then
  stop_server
  rm -f "$TMP/src.bin" "$TMP/dst.bin"
  bench/migrate_bench.sh "$BUILD" "${MIGRATE_BENCH:-all}"
fi
