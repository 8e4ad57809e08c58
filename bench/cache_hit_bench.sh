#!/usr/bin/env bash
# Cache hit throughput: `ferry cache serve` beside nginx proxy_cache and
# Varnish with beresp.do_gzip, each fronting the same origin (nginx serving
# the web-text corpus of bench/cache_corpus.sh) on loopback, in the same run.
#
#   bench/cache_hit_bench.sh BUILD_DIR [--seconds 10] [--connections 64] [--mixed]
#
# What is measured: wrk 4.1 (2 threads, keep-alive) requesting, round and
# round, every eligible text URL of the corpus (html/js/css/json/svg of at
# least 4 KiB, the bodies ferry stores zstd-compressed), from each cache in
# turn, for the same time with the same connections. Two kinds of clients,
# with the same request headers for all three caches:
#   zstd      `Accept-Encoding: zstd`. ferry sends its stored zstd bytes as
#             they are; nginx and Varnish do not speak zstd and answer
#             identity (Varnish gunzips its stored gzip for every response).
#   identity  no Accept-Encoding: ferry decodes its zstd entry as it sends,
#             Varnish gunzips, nginx sends its stored copy as it is.
# --mixed adds both kinds over every corpus URL (images, gzip files, small
# files, source maps: whatever the corpus holds, mostly stored as received).
#
# How to read it: requests/s is the figure to compare (goals, issue 4: zstd
# clients at least 1.2x nginx, identity clients at least 0.8x nginx, both
# ahead of Varnish). MB/s (10^6 bytes) is what wrk read, headers included,
# so zstd clients of ferry read fewer bytes for the same requests. p99 is
# wrk's latency percentile. The machine has 2 cores and everything shares
# them: wrk's 2 threads, the cache under test and the idle others (the
# origin gets no request once the caches are warm). Each cache is given the
# 2 cores: nginx worker_processes 2; Varnish its default 2 thread pools,
# storage malloc,1G; ferry its defaults (2 event-loop threads, 32 workers),
# entries in the temp dir like nginx's. nginx has sendfile on, no access log
# and keepalive_requests raised so wrk's connections are never closed, and
# tcp_nopush off (nginx's default): Debian's nginx.conf turns it on, and on
# loopback that stalls about one keep-alive response in ten for 40 ms (a
# delayed ACK), which cut nginx's hits to a quarter. Read ratios within a run,
# not figures across runs.
#
# Last, tiers: a second ferry with --parent pointing at the first is filled
# with the whole corpus through it, and the body bytes that crossed between
# the tiers are set beside the corpus's logical bytes.
#
# Checks, each fatal: every peer starts; after warm-up every measured URL is
# a HIT by the cache's own header (X-Cache, which this script adds to nginx
# and Varnish) for both client kinds; the origin's access log does not grow
# during any measured run (so every measured request was a hit); wrk reports
# no errors; for a sample of URLs each cache's body, decoded by its
# Content-Encoding, equals the file (and ferry answers zstd clients with
# zstd for eligible bodies). Failures after the runs still print the table,
# then exit 1. Exit 77: nginx, varnishd, wrk or the corpus is missing (make
# setup installs them). Every process started here is stopped on exit.
set -euo pipefail
usage() { echo "usage: $0 BUILD_DIR [--seconds N] [--connections N] [--mixed]" >&2; exit 2; }
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd)
shift
SECS=10 CONNS=64 MIXED=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECS=${2:?}; shift 2 ;;
    --connections) CONNS=${2:?}; shift 2 ;;
    --mixed) MIXED=1; shift ;;
    *) usage ;;
  esac
done
cd "$(dirname "$0")/.."
. bench/cache_bench_lib.sh
bench_init cache_hit_bench
WRK_THREADS=2  # one per core
FERRY="$BUILD/ferry"
[ -x "$FERRY" ] || die "missing $FERRY"
need_tools /usr/sbin/nginx /usr/sbin/varnishd /usr/bin/wrk /usr/bin/curl /usr/bin/zstd /usr/bin/ss
corpus_web_root

# The origin, then the caches (settings: bench/cache_bench_lib.sh).
start_origin
NGINX_PORT=$(free_port)
start_nginx_cache nginx "127.0.0.1:$NGINX_PORT"
wait_up nginx "$SPAWNED" "http://127.0.0.1:$NGINX_PORT/"
VARNISH_PORT=$(free_port)
start_varnish varnish -a "127.0.0.1:$VARNISH_PORT"
wait_up varnish "$SPAWNED" "http://127.0.0.1:$VARNISH_PORT/"
start_ferry ferry
FERRY_PID=$SPAWNED
wait_up ferry "$FERRY_PID" "http://127.0.0.1:${FERRY_PORT[ferry]}/"

PEERS=(nginx varnish ferry)
BASE=([nginx]=http://127.0.0.1:$NGINX_PORT [varnish]=http://127.0.0.1:$VARNISH_PORT
  [ferry]=http://127.0.0.1:${FERRY_PORT[ferry]})
AE=([zstd]=zstd [identity]=)

# Warm-up: fill with every corpus URL, then every measured URL must be a
# HIT for both client kinds.
MEASURED=("$TMP/eligible.paths")
[ "$MIXED" = 1 ] && MEASURED+=("$TMP/all.paths")
for peer in "${PEERS[@]}"; do
  log "warming $peer (${BASE[$peer]}): $N_ALL URLs"
  fill "$peer" "$TMP/all.paths"
  for kind in zstd identity; do
    for paths in "${MEASURED[@]}"; do check_hits "$peer" "$kind" "$paths" "$TMP/hit.$peer"; done
  done
done

# Byte checks: each cache's body for the sample, decoded by its
# Content-Encoding, must equal the file; ferry answers zstd clients with
# zstd for eligible bodies.
log "checking bodies of $(wc -l <"$TMP/sample.paths") URLs from each cache, both client kinds"
for peer in "${PEERS[@]}"; do
  for kind in zstd identity; do
    check_bodies "$peer" "$kind" "$TMP/sample.paths" >"$TMP/codings"
    [ "$peer/$kind" = ferry/zstd ] || continue
    bad=$(grep -Fxf "$TMP/eligible.paths" <(awk '$2 != "zstd" { print $1 }' "$TMP/codings") | head -1 || true)
    [ -z "$bad" ] || die "ferry answered a zstd client with '$(awk -v p="$bad" '$1 == p { print $2 }' "$TMP/codings")', not zstd, for eligible $bad"
  done
done

# measure PEER KIND PATHS_FILE: one wrk run; R[PEER.KIND.URLS] is its
# RESULT (run_wrk).
declare -A R
measure() {
  local urls
  urls=$(basename "$3" .paths)
  log "wrk: $1, $2 clients, $urls URLs, ${SECS}s"
  run_wrk "$@"
  R[$1.$2.$urls]=$WRK_LINE
  kill -0 "$FERRY_PID" 2>/dev/null || { cat "$TMP/ferry.log" >&2; die "ferry exited during the runs"; }
}
# Peers take turns, one client kind after the other.
for paths in "${MEASURED[@]}"; do
  for kind in zstd identity; do
    for peer in "${PEERS[@]}"; do measure "$peer" "$kind" "$paths"; done
  done
done

# --- The table (markdown, like the rest of bench/results/latest.md).
# rps PEER.KIND.URLS: requests per second of one run.
rps() { awk '{ printf "%.0f", $1 / $3 }' <<<"${R[$1]}"; }
echo "### Cache hits: ferry cache serve beside nginx proxy_cache and Varnish ($(date -u +%Y-%m-%d), $(nproc) cores, wrk -t$WRK_THREADS -c$CONNS -d${SECS}s)"
echo
echo "$(/usr/sbin/nginx -v 2>&1 | sed 's/^nginx version: //'), $(/usr/sbin/varnishd -V 2>&1 | grep -o 'varnish-[0-9.]*' | head -1), wrk $(wrk -v 2>&1 | head -1 | awk '{ print $2 }'), $("$FERRY" --version 2>&1 | head -1)."
echo "Corpus (bench/cache_corpus.sh): $N_ELIG eligible text URLs (html/js/css/json/svg of at least 4 KiB, $MIB_ELIG MiB), $N_ALL URLs in all."
echo "zstd clients send \`Accept-Encoding: zstd\` to every cache; identity clients send no Accept-Encoding."
echo
echo "| URLs | clients | peer | requests/s | MB/s | bytes/response | p50 ms | p99 ms | ferry ÷ nginx | ferry ÷ varnish |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for paths in "${MEASURED[@]}"; do
  urls=$(basename "$paths" .paths)
  for kind in zstd identity; do
    for peer in "${PEERS[@]}"; do
      key=$peer.$kind.$urls
      vs_nginx='' vs_varnish=''
      if [ "$peer" = ferry ]; then
        vs_nginx=$(awk -v f="$(rps "$key")" -v o="$(rps "nginx.$kind.$urls")" 'BEGIN { printf "%.2f×", f / o }')
        vs_varnish=$(awk -v f="$(rps "$key")" -v o="$(rps "varnish.$kind.$urls")" 'BEGIN { printf "%.2f×", f / o }')
      fi
      # R: requests bytes seconds (5 error counts) p50_ms p99_ms
      awk -v u="$urls" -v k="$kind" -v p="$peer" -v n="$vs_nginx" -v v="$vs_varnish" '{
        printf "| %s | %s | %s | %.0f | %.1f | %.0f | %s | %s | %s | %s |\n",
          u, k, p, $1 / $3, $2 / $3 / 1e6, $2 / $1, $9, $10, n, v }' <<<"${R[$key]}"
    done
  done
done
echo
# goal KIND FACTOR: "met" when ferry >= FACTOR x nginx and > varnish.
goal() {
  awk -v f="$(rps "ferry.$1.eligible")" -v n="$(rps "nginx.$1.eligible")" -v v="$(rps "varnish.$1.eligible")" -v g="$2" \
    'BEGIN { print (f >= g * n && f > v) ? "met" : "not met" }'
}
echo "Goals (issue 4, eligible URLs): zstd clients ≥ 1.2× nginx and ahead of Varnish: $(goal zstd 1.2);" \
  "identity clients ≥ 0.8× nginx and ahead of Varnish: $(goal identity 0.8)."

# --- Tiers: a lower ferry tier (--parent) filled with the whole corpus
# through the warm ferry above; its metrics count the body bytes it
# received from the upper tier. Eligible URLs first, then the rest.
start_ferry lower --parent "http://127.0.0.1:${FERRY_PORT[ferry]}"
wait_up lower "$SPAWNED" "http://127.0.0.1:${FERRY_PORT[lower]}/"
BASE[lower]=http://127.0.0.1:${FERRY_PORT[lower]}
# lower_metric NAME: one counter of the lower tier.
lower_metric() {
  curl -sf "${BASE[lower]}/_ferry/metrics" | awk -v n="$1" '$1 == n { print $2 }'
}
grep -vxF -f "$TMP/eligible.paths" "$TMP/all.paths" >"$TMP/rest.paths" || true
log "filling a lower ferry tier through the upper one: $N_ALL URLs"
fill lower "$TMP/eligible.paths"
between_elig=$(lower_metric ferry_cache_upstream_bytes_total)
stored_elig=$(lower_metric ferry_cache_stored_bytes_total)
fill lower "$TMP/rest.paths"
between_all=$(lower_metric ferry_cache_upstream_bytes_total)
stored_all=$(lower_metric ferry_cache_stored_bytes_total)
logical_elig=$(awk '$1 >= 4096 && $2 ~ /\.(html|js|css|json|svg)$/ { s += $1 } END { print s }' "$TMP/sized")
logical_all=$(awk '{ s += $1 } END { print s }' "$TMP/sized")
echo
echo "Tiers and storage: a lower ferry tier (\`--parent\`) filled with the whole corpus (served by nginx) through the upper one. Its own counters give the body bytes that crossed between the tiers (\`ferry_cache_upstream_bytes_total\`) and the bytes it stored (\`ferry_cache_stored_bytes_total\`), beside the logical bytes:"
echo
echo "| URLs | logical bytes | stored bytes | logical ÷ stored | bytes between tiers | logical ÷ between |"
echo "|---|---|---|---|---|---|"
awk -v l="$logical_elig" -v s="$stored_elig" -v b="$between_elig" -v n="$N_ELIG" \
  'BEGIN { printf "| eligible (%d) | %d | %d | %.2f× | %d | %.2f× |\n", n, l, s, l / s, b, l / b }'
awk -v l="$logical_all" -v s="$stored_all" -v b="$between_all" -v n="$N_ALL" \
  'BEGIN { printf "| all (%d) | %d | %d | %.2f× | %d | %.2f× |\n", n, l, s, l / s, b, l / b }'

if [ ${#FAILED[@]} -gt 0 ]; then
  echo
  for f in "${FAILED[@]}"; do echo "FAILED: $f"; done
  exit 1
fi
