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
THREADS=2  # wrk threads, one per core
FERRY="$BUILD/ferry"
[ -x "$FERRY" ] || { echo "cache_hit_bench: missing $FERRY" >&2; exit 1; }
for tool in /usr/sbin/nginx /usr/sbin/varnishd /usr/bin/wrk /usr/bin/curl /usr/bin/zstd /usr/bin/ss; do
  [ -x "$tool" ] || { echo "cache_hit_bench: $tool is missing: run make setup" >&2; exit 77; }
done

# The corpus: the directory list of bench/cache_corpus.sh, read from there so
# that the two benchmarks cannot drift apart.
eval "$(sed -n '/^DIRS=(/,/)$/p' bench/cache_corpus.sh)"
[ "${#DIRS[@]}" -gt 0 ] || { echo "cache_hit_bench: no DIRS in bench/cache_corpus.sh" >&2; exit 1; }

TMP=$(mktemp -d /tmp/ferry-cache-hit.XXXXXX)
# varnishd started as root compiles and runs the VCL as its own users
# (varnish, vcache: the default unix jail), which must be able to read it.
chmod 755 "$TMP"
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { echo "cache_hit_bench: $*" >&2; exit 1; }
log() { echo "$*" >&2; }  # progress on stderr; the table alone on stdout

# Web root: one symlink per corpus directory, at its path under /usr/share
# (/usr/share/doc/python3.11 -> /doc/python3.11/...).
WWW="$TMP/www"
for d in "${DIRS[@]}"; do
  [ -d "$d" ] || { echo "cache_hit_bench: corpus missing: run make setup ($d)" >&2; exit 77; }
  mkdir -p "$WWW/$(dirname "${d#/usr/share/}")"
  ln -s "$d" "$WWW/${d#/usr/share/}"
done
# Paths of all files, and of the eligible ones (sizes of symlink targets).
(cd "$WWW" && find -L . -type f -printf '%s /%P\n' | sort -k2) >"$TMP/sized"
awk '{ print $2 }' "$TMP/sized" >"$TMP/all.paths"
awk '$1 >= 4096 && $2 ~ /\.(html|js|css|json|svg)$/ { print $2 }' "$TMP/sized" >"$TMP/eligible.paths"
[ -s "$TMP/eligible.paths" ] || { echo "cache_hit_bench: corpus missing: run make setup" >&2; exit 77; }
N_ALL=$(wc -l <"$TMP/all.paths")
N_ELIG=$(wc -l <"$TMP/eligible.paths")
MIB_ELIG=$(awk '$1 >= 4096 && $2 ~ /\.(html|js|css|json|svg)$/ { s += $1 } END { printf "%.1f", s / 1048576 }' "$TMP/sized")
# Sample for the byte checks: a spread of eligible bodies and one of each
# kind that must be stored as received (an image, a gzip file, a small page).
{
  awk -v k=$(( N_ELIG / 12 + 1 )) 'NR % k == 1' "$TMP/eligible.paths"
  grep -m1 '\.png$' "$TMP/all.paths" || true
  grep -m1 '\.gz$' "$TMP/all.paths" || true
  awk '$1 < 4096 && $2 ~ /\.html$/ { print $2; exit }' "$TMP/sized"
} >"$TMP/sample.paths"

# free_port: a loopback port nobody listens on (nor given out here before).
USED_PORTS=" "
free_port() {
  local p
  while :; do
    p=$(( 20000 + RANDOM % 40000 ))
    case "$USED_PORTS" in *" $p "*) continue ;; esac
    [ -z "$(ss -Htln "sport = :$p")" ] && break
  done
  USED_PORTS+="$p "
  echo "$p"
}
# wait_up NAME PID URL: until URL answers; dies when the process is gone.
wait_up() {
  for _ in $(seq 1 100); do
    curl -s -o /dev/null "$3" && return 0
    kill -0 "$2" 2>/dev/null || { cat "$TMP/$1.log" >&2; die "$1 did not start"; }
    sleep 0.1
  done
  cat "$TMP/$1.log" >&2
  die "$1 did not answer on $3"
}

# --- Origin: nginx serving the web root, everything fresh for an hour. Its
# access log is how the runs prove they never reached it.
ORIGIN_PORT=$(free_port)
mkdir -p "$TMP/origin"
cat >"$TMP/origin/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $TMP/origin/nginx.pid;
error_log $TMP/origin/error.log warn;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log $TMP/origin/access.log;
  client_body_temp_path $TMP/origin/body;
  proxy_temp_path $TMP/origin/proxy;
  fastcgi_temp_path $TMP/origin/fastcgi;
  uwsgi_temp_path $TMP/origin/uwsgi;
  scgi_temp_path $TMP/origin/scgi;
  sendfile on;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$ORIGIN_PORT;
    root $WWW;
    expires 1h;  # Cache-Control: max-age=3600 and Expires
  }
}
EOF
/usr/sbin/nginx -p "$TMP/origin" -e "$TMP/origin/error.log" -c "$TMP/origin/nginx.conf" >"$TMP/origin.log" 2>&1 &
PIDS+=($!)
wait_up origin $! "http://127.0.0.1:$ORIGIN_PORT/"
origin_requests() { wc -l <"$TMP/origin/access.log"; }

# --- Peer 1: nginx proxy_cache, 2 workers, keep-alive to the origin.
NGINX_PORT=$(free_port)
mkdir -p "$TMP/nginx"
cat >"$TMP/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 2;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $TMP/nginx/body;
  proxy_temp_path $TMP/nginx/proxy;
  fastcgi_temp_path $TMP/nginx/fastcgi;
  uwsgi_temp_path $TMP/nginx/uwsgi;
  scgi_temp_path $TMP/nginx/scgi;
  sendfile on;
  tcp_nopush off;  # see the top of this file
  keepalive_timeout 65;
  keepalive_requests 1000000;
  proxy_cache_path $TMP/nginx/cache levels=1:2 keys_zone=bench:64m max_size=4g inactive=1d use_temp_path=off;
  upstream origin {
    server 127.0.0.1:$ORIGIN_PORT;
    keepalive 32;
  }
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache bench;
      proxy_cache_valid 200 1h;
      add_header X-Cache \$upstream_cache_status;
    }
  }
}
EOF
/usr/sbin/nginx -p "$TMP/nginx" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf" >"$TMP/nginx.log" 2>&1 &
PIDS+=($!)
wait_up nginx $! "http://127.0.0.1:$NGINX_PORT/"

# --- Peer 2: Varnish 7.1, gzip at rest for the bodies ferry would compress
# (text types of at least 4 KiB); X-Cache from obj.hits.
VARNISH_PORT=$(free_port)
cat >"$TMP/varnish.vcl" <<EOF
vcl 4.1;
import std;
backend origin { .host = "127.0.0.1"; .port = "$ORIGIN_PORT"; }
sub vcl_backend_response {
  if (beresp.http.Content-Type ~ "^(text/|application/(javascript|json|xml)|image/svg\+xml)" &&
      std.integer(beresp.http.Content-Length, 0) >= 4096) {
    set beresp.do_gzip = true;
  }
}
sub vcl_deliver {
  if (obj.hits > 0) { set resp.http.X-Cache = "HIT"; } else { set resp.http.X-Cache = "MISS"; }
}
EOF
/usr/sbin/varnishd -F -a "127.0.0.1:$VARNISH_PORT" -f "$TMP/varnish.vcl" -n "$TMP/varnish" \
  -s malloc,1G >"$TMP/varnish.log" 2>&1 &
PIDS+=($!)
wait_up varnish $! "http://127.0.0.1:$VARNISH_PORT/"

# --- ferry cache serve.
"$FERRY" cache serve --origin "http://127.0.0.1:$ORIGIN_PORT" --listen 127.0.0.1:0 \
  --port-file "$TMP/ferry.port" --dir "$TMP/ferry-cache" --max-size 4G >"$TMP/ferry.log" 2>&1 &
PIDS+=($!)
FERRY_PID=$!
for _ in $(seq 1 100); do [ -s "$TMP/ferry.port" ] && break; sleep 0.1; done
[ -s "$TMP/ferry.port" ] || { cat "$TMP/ferry.log" >&2; die "ferry did not start"; }
FERRY_PORT=$(cat "$TMP/ferry.port")
wait_up ferry "$FERRY_PID" "http://127.0.0.1:$FERRY_PORT/"

PEERS=(nginx varnish ferry)
declare -A PORT=([nginx]=$NGINX_PORT [varnish]=$VARNISH_PORT [ferry]=$FERRY_PORT)
# curl's header for each client kind ("Accept-Encoding:" makes sure there is
# none; curl sends none unless asked anyway).
declare -A AE=([zstd]="Accept-Encoding: zstd" [identity]="Accept-Encoding:")

# fetch_all PEER KIND PATHS_FILE: every path once, on one keep-alive
# connection; prints "CODE X-CACHE" per response.
fetch_all() {
  awk -v base="http://127.0.0.1:${PORT[$1]}" '{ printf "url = \"%s%s\"\noutput = \"/dev/null\"\n", base, $0 }' \
    "$3" >"$TMP/curl.cfg"
  curl -sS -K "$TMP/curl.cfg" -H "${AE[$2]}" -w '%{response_code} %header{x-cache}\n'
}

# Warm-up: fill with every corpus URL, then every measured URL must be a
# HIT for both client kinds.
MEASURED=("$TMP/eligible.paths")
[ "$MIXED" = 1 ] && MEASURED+=("$TMP/all.paths")
for peer in "${PEERS[@]}"; do
  log "warming $peer (port ${PORT[$peer]}): $N_ALL URLs"
  fetch_all "$peer" zstd "$TMP/all.paths" >"$TMP/fill.$peer" || die "$peer: fill failed"
  bad=$(grep -cv '^200 ' "$TMP/fill.$peer" || true)
  [ "$bad" = 0 ] || die "$peer: $bad of $N_ALL fill responses were not 200 ($(grep -v '^200 ' "$TMP/fill.$peer" | sort | uniq -c | head -3 | xargs))"
  for kind in zstd identity; do
    for paths in "${MEASURED[@]}"; do
      fetch_all "$peer" "$kind" "$paths" >"$TMP/hit.$peer" || die "$peer: warm-up failed"
      bad=$(grep -cvx '200 HIT' "$TMP/hit.$peer" || true)
      [ "$bad" = 0 ] || die "$peer, $kind clients: $bad of $(wc -l <"$paths") responses after warm-up were not 200 HIT ($(grep -vx '200 HIT' "$TMP/hit.$peer" | sort | uniq -c | head -3 | xargs))"
    done
  done
done

# Byte checks: each cache's body for the sample, decoded by its
# Content-Encoding, must equal the file.
log "checking bodies of $(wc -l <"$TMP/sample.paths") URLs from each cache, both client kinds"
while read -r path; do
  eligible=0
  grep -qxF "$path" "$TMP/eligible.paths" && eligible=1
  for peer in "${PEERS[@]}"; do
    for kind in zstd identity; do
      curl -sS -D "$TMP/h" -o "$TMP/b" -H "${AE[$kind]}" "http://127.0.0.1:${PORT[$peer]}$path" ||
        die "$peer, $kind: GET $path failed"
      ce=$(tr -d '\r' <"$TMP/h" | awk 'tolower($1) == "content-encoding:" { print tolower($2) }')
      case "$ce" in
        zstd) zstd -dqc "$TMP/b" >"$TMP/d" || die "$peer, $kind: $path: bad zstd body" ;;
        gzip) gzip -dc "$TMP/b" >"$TMP/d" || die "$peer, $kind: $path: bad gzip body" ;;
        "") mv "$TMP/b" "$TMP/d" ;;
        *) die "$peer, $kind: $path: unexpected Content-Encoding $ce" ;;
      esac
      cmp -s "$TMP/d" "$WWW$path" || die "$peer, $kind: $path: body differs from the file (Content-Encoding '${ce}')"
      if [ "$peer/$kind/$eligible" = ferry/zstd/1 ] && [ "$ce" != zstd ]; then
        die "ferry answered a zstd client with '$ce', not zstd, for eligible $path"
      fi
    done
  done
done <"$TMP/sample.paths"

# run_wrk PEER KIND PATHS_FILE: one measured run; R[PEER.KIND.URLS] is wrk's
# RESULT line without its first word.
declare -A R
FAILED=()
run_wrk() {
  local peer=$1 kind=$2 paths=$3 urls before after line
  urls=$(basename "$paths" .paths)
  log "wrk: $peer, $kind clients, $urls URLs, ${SECS}s"
  before=$(origin_requests)
  wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s bench/cache_hit_urls.lua \
    "http://127.0.0.1:${PORT[$peer]}" -- "$paths" "$kind" >"$TMP/wrk.out" 2>&1 ||
    { cat "$TMP/wrk.out" >&2; die "wrk failed against $peer"; }
  after=$(origin_requests)
  line=$(grep '^RESULT ' "$TMP/wrk.out") || { cat "$TMP/wrk.out" >&2; die "no RESULT from wrk"; }
  R[$peer.$kind.$urls]=${line#RESULT }
  local connect read write status timeout
  read -r _ _ _ _ connect read write status timeout _ <<<"$line"
  [ $(( connect + read + write + status + timeout )) = 0 ] ||
    FAILED+=("$peer, $kind clients, $urls URLs: wrk errors: connect $connect, read $read, write $write, status $status, timeout $timeout")
  [ "$before" = "$after" ] ||
    FAILED+=("$peer, $kind clients, $urls URLs: $(( after - before )) requests reached the origin (not hits)")
  kill -0 "$FERRY_PID" 2>/dev/null || { cat "$TMP/ferry.log" >&2; die "ferry exited during the runs"; }
}
# Peers take turns, one client kind after the other.
for paths in "${MEASURED[@]}"; do
  for kind in zstd identity; do
    for peer in "${PEERS[@]}"; do run_wrk "$peer" "$kind" "$paths"; done
  done
done

# --- The table (markdown, like the rest of bench/results/latest.md).
# rps PEER.KIND.URLS: requests per second of one run.
rps() { awk '{ printf "%.0f", $1 / $3 }' <<<"${R[$1]}"; }
echo "### Cache hits: ferry cache serve beside nginx proxy_cache and Varnish ($(date -u +%Y-%m-%d), $(nproc) cores, wrk -t$THREADS -c$CONNS -d${SECS}s)"
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
"$FERRY" cache serve --origin "http://127.0.0.1:$ORIGIN_PORT" --parent "http://127.0.0.1:$FERRY_PORT" \
  --listen 127.0.0.1:0 --port-file "$TMP/lower.port" --dir "$TMP/lower-cache" --max-size 4G >"$TMP/lower.log" 2>&1 &
PIDS+=($!)
LOWER_PID=$!
for _ in $(seq 1 100); do [ -s "$TMP/lower.port" ] && break; sleep 0.1; done
[ -s "$TMP/lower.port" ] || { cat "$TMP/lower.log" >&2; die "lower ferry tier did not start"; }
PORT[lower]=$(cat "$TMP/lower.port")
wait_up lower "$LOWER_PID" "http://127.0.0.1:${PORT[lower]}/"
# lower_metric NAME: one counter of the lower tier.
lower_metric() {
  curl -sf "http://127.0.0.1:${PORT[lower]}/_ferry/metrics" | awk -v n="$1" '$1 == n { print $2 }'
}
grep -vxF -f "$TMP/eligible.paths" "$TMP/all.paths" >"$TMP/rest.paths" || true
log "filling a lower ferry tier through the upper one: $N_ALL URLs"
fetch_all lower identity "$TMP/eligible.paths" >"$TMP/fill.lower" || die "lower tier fill failed"
between_elig=$(lower_metric ferry_cache_upstream_bytes_total)
stored_elig=$(lower_metric ferry_cache_stored_bytes_total)
fetch_all lower identity "$TMP/rest.paths" >>"$TMP/fill.lower" || die "lower tier fill failed"
between_all=$(lower_metric ferry_cache_upstream_bytes_total)
stored_all=$(lower_metric ferry_cache_stored_bytes_total)
bad=$(grep -cv '^200 ' "$TMP/fill.lower" || true)
[ "$bad" = 0 ] || FAILED+=("lower tier: $bad fill responses were not 200")
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
