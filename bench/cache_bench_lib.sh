# What the cache benchmarks share (bench/cache_hit_bench.sh,
# bench/cache_tls_bench.sh): a temp dir and the processes started in it,
# stopped on exit; the web root of the corpus and its path lists; free
# loopback ports; the nginx origin; the three caches (nginx proxy_cache,
# Varnish with gzip at rest, ferry) with the settings both benchmarks give
# them; fetching a path list through a cache and checking it was all hits;
# checking bodies decoded by their Content-Encoding against the files; one
# wrk run. Sourced, not run:
#
#   . bench/cache_bench_lib.sh
#   bench_init NAME   # NAME (the script's) prefixes messages and the temp dir
#
# The caller sets, before it fetches: BASE[PEER] (scheme, host and port of a
# cache), AE[KIND] (the Accept-Encoding a client kind sends, "" for none)
# and, for HTTPS, CURL_TLS (curl's options to trust the test certificate).
# Checks that fail after the measured runs append to FAILED; the others die.

BENCH_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
declare -A BASE AE
CURL_TLS=()
FAILED=()
PIDS=()

# bench_init NAME: the temp dir ($TMP), stopped and removed on exit.
bench_init() {
  BENCH=$1
  TMP=$(mktemp -d "/tmp/ferry-$1.XXXXXX")
  # varnishd and hitch started as root drop to their own users (varnish,
  # vcache, _hitch), which must be able to read their configs here.
  chmod 755 "$TMP"
  trap cleanup EXIT
  trap 'exit 130' INT TERM
}
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
die() { echo "$BENCH: $*" >&2; exit 1; }
log() { echo "$*" >&2; }  # progress on stderr; the tables alone on stdout

# need_tools PATH...: exit 77 (skipped) when one is missing.
need_tools() {
  local tool
  for tool in "$@"; do
    [ -x "$tool" ] || { echo "$BENCH: $tool is missing: run make setup" >&2; exit 77; }
  done
}

# corpus_web_root: $WWW, one symlink per corpus directory at its path under
# /usr/share (/usr/share/doc/python3.11 -> /doc/python3.11/...), read from
# bench/cache_corpus.sh so that the benchmarks cannot drift apart; and
#   $TMP/sized           "SIZE /PATH" of every file
#   $TMP/all.paths       every path; N_ALL of them
#   $TMP/eligible.paths  html/js/css/json/svg of at least 4 KiB (the pages
#                        and resources a browser asks for that ferry stores
#                        zstd-compressed); N_ELIG of them, MIB_ELIG MiB
#   $TMP/sample.paths    for the byte checks: a spread of eligible bodies and
#                        one of each kind stored as received (an image, a
#                        gzip file, a small page)
corpus_web_root() {
  local d DIRS=()
  eval "$(sed -n '/^DIRS=(/,/)$/p' "$BENCH_LIB_DIR/cache_corpus.sh")"
  [ "${#DIRS[@]}" -gt 0 ] || die "no DIRS in bench/cache_corpus.sh"
  WWW="$TMP/www"
  for d in "${DIRS[@]}"; do
    [ -d "$d" ] || { echo "$BENCH: corpus missing: run make setup ($d)" >&2; exit 77; }
    mkdir -p "$WWW/$(dirname "${d#/usr/share/}")"
    ln -s "$d" "$WWW/${d#/usr/share/}"
  done
  (cd "$WWW" && find -L . -type f -printf '%s /%P\n' | sort -k2) >"$TMP/sized"
  awk '{ print $2 }' "$TMP/sized" >"$TMP/all.paths"
  awk '$1 >= 4096 && $2 ~ /\.(html|js|css|json|svg)$/ { print $2 }' "$TMP/sized" >"$TMP/eligible.paths"
  [ -s "$TMP/eligible.paths" ] || { echo "$BENCH: corpus missing: run make setup" >&2; exit 77; }
  N_ALL=$(wc -l <"$TMP/all.paths")
  N_ELIG=$(wc -l <"$TMP/eligible.paths")
  MIB_ELIG=$(awk '$1 >= 4096 && $2 ~ /\.(html|js|css|json|svg)$/ { s += $1 } END { printf "%.1f", s / 1048576 }' "$TMP/sized")
  {
    awk -v k=$(( N_ELIG / 12 + 1 )) 'NR % k == 1' "$TMP/eligible.paths"
    grep -m1 '\.png$' "$TMP/all.paths" || true
    grep -m1 '\.gz$' "$TMP/all.paths" || true
    awk '$1 < 4096 && $2 ~ /\.html$/ { print $2; exit }' "$TMP/sized"
  } >"$TMP/sample.paths"
}

# free_port: a loopback port no socket uses (nor given out here before),
# below the kernel's ephemeral range when there is room, where a client's
# connection could take it before the server binds it.
USED_PORTS=" "
free_port() {
  local p lo hi
  read -r lo _ </proc/sys/net/ipv4/ip_local_port_range
  if [ "$lo" -gt 21000 ]; then hi=$lo; else hi=60000; fi
  while :; do
    p=$(( 20000 + RANDOM % (hi - 20000) ))
    case "$USED_PORTS" in *" $p "*) continue ;; esac
    [ -z "$(ss -Htan "sport = :$p")" ] && break
  done
  USED_PORTS+="$p "
  echo "$p"
}
# wait_up NAME PID URL: until URL answers (trusting CURL_TLS); dies when the
# process is gone. Its output is in $TMP/NAME.log.
wait_up() {
  for _ in $(seq 1 100); do
    curl -s "${CURL_TLS[@]}" -o /dev/null "$3" && return 0
    kill -0 "$2" 2>/dev/null || { cat "$TMP/$1.log" >&2; die "$1 did not start"; }
    sleep 0.1
  done
  cat "$TMP/$1.log" >&2
  die "$1 did not answer on $3"
}
# spawn NAME CMD...: runs CMD in the background, output in $TMP/NAME.log,
# stopped on exit; its pid in SPAWNED.
spawn() {
  local name=$1
  shift
  "$@" >"$TMP/$name.log" 2>&1 &
  SPAWNED=$!
  PIDS+=("$SPAWNED")
}

# nginx_temp_paths DIR: the temp paths an nginx config needs, all in DIR.
nginx_temp_paths() {
  local t
  for t in client_body proxy fastcgi uwsgi scgi; do echo "  ${t}_temp_path $1/$t;"; done
}

# start_origin: nginx serving $WWW on ORIGIN_PORT, everything fresh for an
# hour. Its access log is how the runs prove they never reached it
# (origin_requests).
start_origin() {
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
$(nginx_temp_paths "$TMP/origin")
  sendfile on;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$ORIGIN_PORT;
    root $WWW;
    expires 1h;  # Cache-Control: max-age=3600 and Expires
  }
}
EOF
  spawn origin /usr/sbin/nginx -p "$TMP/origin" -e "$TMP/origin/error.log" -c "$TMP/origin/nginx.conf"
  wait_up origin "$SPAWNED" "http://127.0.0.1:$ORIGIN_PORT/"
}
origin_requests() { wc -l <"$TMP/origin/access.log"; }

# start_nginx_cache NAME LISTEN [SERVER_CONF]: nginx proxy_cache in front of
# the origin, 2 workers, keep-alive to the origin; `listen LISTEN;` and
# SERVER_CONF (TLS, gzip) in its server block; X-Cache from
# $upstream_cache_status; the cache in $TMP/NAME/cache. sendfile on, no
# access log, keepalive_requests raised so no client connection is ever
# closed, and tcp_nopush off (nginx's default): Debian's nginx.conf turns it
# on, and on loopback that stalls about one keep-alive response in ten for
# 40 ms (a delayed ACK).
start_nginx_cache() {
  local dir="$TMP/$1"
  mkdir -p "$dir"
  cat >"$dir/nginx.conf" <<EOF
daemon off;
worker_processes 2;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
$(nginx_temp_paths "$dir")
  sendfile on;
  tcp_nopush off;
  keepalive_timeout 65;
  keepalive_requests 1000000;
  proxy_cache_path $dir/cache levels=1:2 keys_zone=bench:64m max_size=4g inactive=1d use_temp_path=off;
  upstream origin {
    server 127.0.0.1:$ORIGIN_PORT;
    keepalive 32;
  }
  server {
    listen $2;
${3:-}
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
  spawn "$1" /usr/sbin/nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf"
}

# start_varnish NAME [VARNISHD ARGS...]: Varnish in front of the origin,
# storage malloc,1G, its default 2 thread pools; gzip at rest for the bodies
# ferry would compress (text types of at least 4 KiB); X-Cache from
# obj.hits. The caller gives the listen address (-a).
start_varnish() {
  local name=$1
  shift
  cat >"$TMP/$name.vcl" <<EOF
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
  spawn "$name" /usr/sbin/varnishd -F -f "$TMP/$name.vcl" -n "$TMP/$name" -s malloc,1G "$@"
}

# start_ferry NAME [ARGS...]: ferry cache serve in front of the origin on a
# loopback port it picks (FERRY_PORT[NAME]), entries in $TMP/NAME-cache;
# its pid in SPAWNED. The caller waits for it to answer (wait_up).
declare -A FERRY_PORT
start_ferry() {
  local name=$1
  shift
  spawn "$name" "$FERRY" cache serve --origin "http://127.0.0.1:$ORIGIN_PORT" --listen 127.0.0.1:0 \
    --port-file "$TMP/$name.port" --dir "$TMP/$name-cache" --max-size 4G "$@"
  for _ in $(seq 1 100); do [ -s "$TMP/$name.port" ] && break; sleep 0.1; done
  [ -s "$TMP/$name.port" ] || { cat "$TMP/$name.log" >&2; die "$name did not start"; }
  FERRY_PORT[$name]=$(cat "$TMP/$name.port")
}

# ae_header KIND: curl's -H for a client kind ("Accept-Encoding:" alone
# makes sure there is none).
ae_header() { echo "Accept-Encoding:${AE[$1]:+ ${AE[$1]}}"; }

# fetch_all PEER KIND PATHS_FILE [CURL ARGS...]: every path once, on one
# keep-alive connection; prints one line per response:
#   CODE X-CACHE HEADER_BYTES BODY_BYTES CONTENT-TYPE CONTENT-ENCODING
# (BODY_BYTES as sent, before decoding; "-" for an absent field).
fetch_all() {
  local peer=$1 kind=$2 paths=$3
  shift 3
  awk -v base="${BASE[$peer]}" '{ printf "url = \"%s%s\"\noutput = \"/dev/null\"\n", base, $0 }' \
    "$paths" >"$TMP/curl.cfg"
  curl -sS "${CURL_TLS[@]}" "$@" -K "$TMP/curl.cfg" -H "$(ae_header "$kind")" \
    -w '%{response_code}\t%header{x-cache}\t%{size_header}\t%{size_download}\t%{content_type}\t%header{content-encoding}\n' |
    awk -F'\t' '{ sub(/;.*/, "", $5); for (i = 1; i <= 6; i++) if ($i == "") $i = "-"; print $1, $2, $3, $4, $5, $6 }'
}

# fill PEER PATHS_FILE [CURL ARGS...]: every path once for an identity
# client, each a 200; the lines of fetch_all in $TMP/fill.PEER.
fill() {
  local peer=$1 paths=$2 bad
  shift 2
  fetch_all "$peer" identity "$paths" "$@" >"$TMP/fill.$peer" || die "$peer: fill failed"
  bad=$(awk '$1 != 200' "$TMP/fill.$peer" | wc -l)
  [ "$bad" = 0 ] || die "$peer: $bad of $(wc -l <"$paths") fill responses were not 200 ($(awk '$1 != 200 { print $1 }' "$TMP/fill.$peer" | sort | uniq -c | head -3 | xargs))"
}

# check_hits PEER KIND PATHS_FILE OUT [CURL ARGS...]: every path a 200 HIT
# by the cache's own X-Cache for that client kind, else dies; the lines of
# fetch_all in OUT.
check_hits() {
  local peer=$1 kind=$2 paths=$3 out=$4 bad
  shift 4
  fetch_all "$peer" "$kind" "$paths" "$@" >"$out" || die "$peer: warm-up failed"
  bad=$(awk '$1 != 200 || $2 != "HIT"' "$out" | wc -l)
  [ "$bad" = 0 ] || die "$peer, $kind clients${*:+ ($*)}: $bad of $(wc -l <"$paths") responses after warm-up were not 200 HIT ($(awk '$1 != 200 || $2 != "HIT" { print $1, $2 }' "$out" | sort | uniq -c | head -3 | xargs))"
}

# check_bodies PEER KIND PATHS_FILE [CURL ARGS...]: each body, decoded by its
# Content-Encoding (zstd, br, gzip or none), must equal the file, else dies.
# Prints "PATH CODING" per path ("identity" for none).
check_bodies() {
  local peer=$1 kind=$2 paths=$3 what path ce i=0
  shift 3
  what="$peer, $kind clients${*:+ ($*)}"
  rm -rf "$TMP/bodies" && mkdir "$TMP/bodies"
  awk -v base="${BASE[$peer]}" -v dir="$TMP/bodies" \
    '{ printf "url = \"%s%s\"\noutput = \"%s/%d\"\n", base, $0, dir, NR }' "$paths" >"$TMP/curl.cfg"
  curl -sS "${CURL_TLS[@]}" "$@" -K "$TMP/curl.cfg" -H "$(ae_header "$kind")" \
    -w '%{response_code} %header{content-encoding}\n' >"$TMP/bodies.codings" || die "$what: GETs failed"
  while read -r path; do
    i=$(( i + 1 ))
    read -r code ce < <(sed -n "${i}p" "$TMP/bodies.codings")
    [ "$code" = 200 ] || die "$what: $path: status $code"
    ce=${ce,,}
    case "$ce" in
      zstd) zstd -dqc "$TMP/bodies/$i" >"$TMP/d" || die "$what: $path: bad zstd body" ;;
      br) brotli -dc "$TMP/bodies/$i" >"$TMP/d" || die "$what: $path: bad br body" ;;
      gzip) gzip -dc "$TMP/bodies/$i" >"$TMP/d" || die "$what: $path: bad gzip body" ;;
      "") mv "$TMP/bodies/$i" "$TMP/d" ;;
      *) die "$what: $path: unexpected Content-Encoding $ce" ;;
    esac
    cmp -s "$TMP/d" "$WWW$path" || die "$what: $path: body differs from the file (Content-Encoding '$ce')"
    echo "$path ${ce:-identity}"
  done <"$paths"
}

# run_wrk PEER KIND PATHS_FILE: one measured wrk run (WRK_THREADS threads,
# CONNS connections, SECS seconds; bench/cache_hit_urls.lua); WRK_LINE is
# its RESULT line without the first word:
#   requests bytes seconds connect read write status timeout p50_ms p99_ms
# wrk errors, and requests that reached the origin, go to FAILED.
run_wrk() {
  local peer=$1 kind=$2 paths=$3 before after e connect read write status timeout
  before=$(origin_requests)
  wrk -t"$WRK_THREADS" -c"$CONNS" -d"${SECS}s" -s "$BENCH_LIB_DIR/cache_hit_urls.lua" \
    "${BASE[$peer]}" -- "$paths" "${AE[$kind]}" >"$TMP/wrk.out" 2>&1 ||
    { cat "$TMP/wrk.out" >&2; die "wrk failed against $peer"; }
  after=$(origin_requests)
  WRK_LINE=$(grep '^RESULT ' "$TMP/wrk.out") || { cat "$TMP/wrk.out" >&2; die "no RESULT from wrk"; }
  WRK_LINE=${WRK_LINE#RESULT }
  read -r _ _ _ connect read write status timeout _ <<<"$WRK_LINE"
  e="$peer, $kind clients, $(basename "$paths" .paths) URLs, wrk"
  [ $(( connect + read + write + status + timeout )) = 0 ] ||
    FAILED+=("$e: errors: connect $connect, read $read, write $write, status $status, timeout $timeout")
  [ "$before" = "$after" ] || FAILED+=("$e: $(( after - before )) requests reached the origin (not hits)")
}
