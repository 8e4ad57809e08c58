#!/usr/bin/env bash
# The cache as browsers meet it (issue 19): over TLS, HTTP/1.1 and HTTP/2,
# for clients that take zstd, br, gzip or no coding, `ferry cache serve`
# beside nginx proxy_cache (gzip on) and Varnish behind hitch, each fronting
# the same origin (nginx serving the web-text corpus of
# bench/cache_corpus.sh) on loopback, in the same run.
#
#   bench/cache_tls_bench.sh BUILD_DIR [--seconds 10] [--connections 64] [--rounds 3] [--streams 10]
#
# The peers, each with a test certificate (ECDSA P-256, for 127.0.0.1),
# TLS 1.2 and 1.3, ALPN h2 and http/1.1:
#   nginx    1.22, `listen ... ssl http2`, proxy_cache as in
#            bench/cache_hit_bench.sh, and gzip on the fly as a site would
#            set it: gzip_comp_level 1, gzip_proxied any, gzip_vary on,
#            gzip_types for the text types ferry compresses, gzip_min_length
#            4096 (ferry's --min-size), no gzip_static. Debian 12's nginx has
#            no brotli or zstd module: br and zstd clients get its gzip.
#   varnish  7.1 with gzip at rest (do_gzip) for the same bodies, HTTP/2 on
#            (feature=+http2), behind hitch (2 workers) that ends TLS and
#            passes ALPN and the client's address to it by PROXY v2. Every
#            client that accepts gzip gets the stored gzip; identity clients
#            get it gunzipped.
#   ferry    `cache serve --tls-cert --tls-key`, defaults otherwise: zstd
#            clients get its stored zstd, br and gzip clients a variant made
#            from it (level 5 and 6) and kept in memory, identity clients
#            the decoded bytes. HTTP/2 when the build speaks it (ALPN h2):
#            found out with curl, else its HTTP/2 rows say n/a.
# Client kinds, each with a browser's Accept-Encoding:
#   zstd      `gzip, deflate, br, zstd` (Chromium over https)
#   br        `gzip, deflate, br` (Firefox, Safari)
#   gzip      `gzip, deflate` (Chromium over plain http to a host name)
#   identity  none
#
# What is measured, each peer in turn with the same connections for the
# same time, over every eligible text URL of the corpus (html/js/css/json/
# svg of at least 4 KiB) in one shuffled order (a fixed seed: a short run's
# first URLs are a fair sample of them all):
#   HTTP/1.1  wrk 4.1 (2 threads, --connections keep-alive connections).
#   HTTP/2    h2load (2 threads, --connections connections, --streams
#             streams each). Every h2load connection walks the list from
#             its start.
# requests/s; p99 ms (wrk's latency percentile; for h2load, from the
# per-request times of --log-file); bytes/response, the body bytes as sent
# (compressed) per response: h2load's DATA bytes over its responses; for
# wrk, the bytes it read over its requests less the mean header bytes curl
# saw from the same cache for the same URLs and client kind (so nginx's
# chunk framing of its gzip stays in: a few bytes). With --rounds N every
# figure is the median of N rounds, with the spread (min–max); the peers
# take turns within each round. Goals (issue 19): at least nginx's
# requests/s for every client kind; no more bytes per response than nginx
# for gzip clients.
#
# Disk: after a cold fill of the whole corpus (every file once, identity
# client, before any measured run), the blocks (`du -sB1`) of ferry's cache
# directory and of nginx's proxy_cache directory beside the corpus's
# logical bytes and the ideal: each file ferry's policy compresses (a text
# Content-Type, at least 4 KiB) as `zstd -3` alone makes it, the others as
# they are. Varnish keeps its objects in memory (malloc) and has no row.
#
# The machine has 2 cores and everything shares them: the client's 2
# threads, hitch and Varnish, the peer under test and the idle others (the
# origin gets no request once the caches are warm). Read ratios within a
# run, not figures across runs.
#
# Checks, each fatal: every peer starts, nginx and Varnish (hitch) speak
# h2; after the fill, every measured URL is a 200 HIT by the cache's own
# header (X-Cache, added to nginx and Varnish) for every client kind, over
# HTTP/1.1 and (where spoken) HTTP/2, with the coding each peer is set to
# give (above); for a sample of URLs each body, decoded by its
# Content-Encoding (zstd -d, brotli -d, gzip -d), equals the file, for
# every client kind and protocol. After the runs (the tables are printed,
# then exit 1): the origin's access log does not grow during any measured
# run (so every measured request was a hit); wrk reports no errors; h2load
# answers only 2xx and fails no stream but those cut at the end of its run.
# Exit 77: a peer or tool is missing (make setup installs them). Every
# process started here is stopped on exit.
set -euo pipefail
usage() {
  echo "usage: $0 BUILD_DIR [--seconds N] [--connections N] [--rounds N] [--streams N]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd)
shift
SECS=10 CONNS=64 ROUNDS=3 STREAMS=10
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECS=${2:?}; shift 2 ;;
    --connections) CONNS=${2:?}; shift 2 ;;
    --rounds) ROUNDS=${2:?}; shift 2 ;;
    --streams) STREAMS=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
cd "$(dirname "$0")/.."
. bench/cache_bench_lib.sh
bench_init cache_tls_bench
WRK_THREADS=2 H2_THREADS=2  # one per core
[ "$CONNS" -ge 2 ] && [ "$ROUNDS" -ge 1 ] && [ "$SECS" -ge 1 ] && [ "$STREAMS" -ge 1 ] ||
  die "--connections must be at least 2 (one per client thread); --rounds, --seconds, --streams at least 1"
FERRY="$BUILD/ferry"
[ -x "$FERRY" ] || die "missing $FERRY"
need_tools /usr/sbin/nginx /usr/sbin/varnishd /usr/sbin/hitch /usr/bin/wrk /usr/bin/h2load /usr/bin/curl \
  /usr/bin/openssl /usr/bin/zstd /usr/bin/brotli /usr/bin/ss
corpus_web_root
# The measured URLs: the eligible ones, shuffled with a fixed seed.
shuf --random-source=<(yes) "$TMP/eligible.paths" >"$TMP/measured.paths"

# --- The test certificate, trusted by curl through CURL_TLS. It names
# localhost too: hitch 1.7.2 aborts a worker (an assertion in
# sni_try_lookup) on any client that sends SNI, as wrk does even for an IP
# address, when its certificate names no DNS host. hitch takes key and
# certificate in one file.
mkdir "$TMP/tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
  -keyout "$TMP/tls/key.pem" -out "$TMP/tls/cert.pem" 2>"$TMP/openssl.log" ||
  { cat "$TMP/openssl.log" >&2; die "openssl could not make the test certificate"; }
cat "$TMP/tls/key.pem" "$TMP/tls/cert.pem" >"$TMP/tls/both.pem"
CURL_TLS=(--cacert "$TMP/tls/cert.pem")

# --- The origin and the three caches.
start_origin
NGINX_PORT=$(free_port)
start_nginx_cache nginx "127.0.0.1:$NGINX_PORT ssl http2" "
    ssl_certificate $TMP/tls/cert.pem;
    ssl_certificate_key $TMP/tls/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;  # 1.22's default has no TLS 1.3
    gzip on;
    gzip_comp_level 1;
    gzip_proxied any;
    gzip_vary on;
    gzip_min_length 4096;
    gzip_types text/css text/xml text/plain text/mathml text/x-component application/javascript
      application/json application/xml application/atom+xml application/rss+xml application/xhtml+xml
      image/svg+xml;"
wait_up nginx "$SPAWNED" "https://127.0.0.1:$NGINX_PORT/"

VARNISH_PORT=$(free_port) HITCH_PORT=$(free_port)
start_varnish varnish -a "127.0.0.1:$VARNISH_PORT,PROXY" -p feature=+http2
VARNISH_PID=$SPAWNED
# hitch refuses to run its workers as root: they run as the package's user.
HITCH_USER=()
[ "$(id -u)" = 0 ] && HITCH_USER=(--user=_hitch)
spawn hitch /usr/sbin/hitch "${HITCH_USER[@]}" --frontend="[127.0.0.1]:$HITCH_PORT" \
  --backend="[127.0.0.1]:$VARNISH_PORT" --write-proxy-v2 --alpn-protos=h2,http/1.1 --workers=2 \
  --tls-protos="TLSv1.2 TLSv1.3" "$TMP/tls/both.pem"
kill -0 "$VARNISH_PID" 2>/dev/null || { cat "$TMP/varnish.log" >&2; die "varnish did not start"; }
wait_up hitch "$SPAWNED" "https://127.0.0.1:$HITCH_PORT/"

start_ferry ferry --tls-cert "$TMP/tls/cert.pem" --tls-key "$TMP/tls/key.pem"
FERRY_PID=$SPAWNED
wait_up ferry "$FERRY_PID" "https://127.0.0.1:${FERRY_PORT[ferry]}/"

PEERS=(nginx varnish ferry)
BASE=([nginx]=https://127.0.0.1:$NGINX_PORT [varnish]=https://127.0.0.1:$HITCH_PORT
  [ferry]=https://127.0.0.1:${FERRY_PORT[ferry]})
KINDS=(zstd br gzip identity)
AE=([zstd]="gzip, deflate, br, zstd" [br]="gzip, deflate, br" [gzip]="gzip, deflate" [identity]=)
PROTOS=(h1 h2)
declare -A PROTO_NAME=([h1]=HTTP/1.1 [h2]=HTTP/2) CURL_PROTO=([h1]=--http1.1 [h2]=--http2)
NO_H2="n/a (ferry speaks no h2 in this build)"

# speaks PEER PROTO: whether the peer is measured over PROTO. HTTP/2 is
# what curl gets offering h2 by ALPN; nginx and Varnish must speak it.
declare -A SPEAKS
for peer in "${PEERS[@]}"; do
  SPEAKS[$peer.h1]=1
  v=$(curl -s --http2 "${CURL_TLS[@]}" -o /dev/null -w '%{http_version}' "${BASE[$peer]}/") || v=none
  if [ "$v" = 2 ]; then SPEAKS[$peer.h2]=1; else SPEAKS[$peer.h2]=0; fi
  [ "$peer" = ferry ] || [ "$v" = 2 ] || die "$peer negotiated HTTP $v, not HTTP/2, offered h2 by ALPN"
done
[ "${SPEAKS[ferry.h2]}" = 1 ] || log "ferry: $NO_H2"
speaks() { [ "${SPEAKS[$1.$2]}" = 1 ]; }

# The TLS version and cipher each peer agrees with OpenSSL's client.
declare -A TLS_USED
for peer in "${PEERS[@]}"; do
  TLS_USED[$peer]=$(openssl s_client -connect "${BASE[$peer]#https://}" -alpn http/1.1 </dev/null 2>/dev/null |
    awk '/^New, / { sub(/,$/, "", $2); print $2, $NF; exit }')
done

# --- Cold fill, every corpus URL once, identity clients; then what the
# disk holds.
for peer in "${PEERS[@]}"; do
  log "filling $peer (${BASE[$peer]}): $N_ALL URLs"
  fill "$peer" "$TMP/all.paths" --http1.1
done
# settled_du DIR: "ALLOCATED APPARENT FILES" once two readings 0.5 s apart
# agree (ferry and nginx may still be writing the last entries).
settled_du() {
  local a b=""
  for _ in $(seq 1 40); do
    a="$(du -sB1 "$1" | cut -f1) $(du -sB1 --apparent-size "$1" | cut -f1) $(find "$1" -type f | wc -l)"
    [ "$a" = "$b" ] && break
    b=$a
    sleep 0.5
  done
  echo "$a"
}
declare -A DISK=([nginx]=$(settled_du "$TMP/nginx/cache") [ferry]=$(settled_du "$TMP/ferry-cache"))
# The ideal: zstd -3 of each file ferry's policy compresses (the
# Content-Type ferry answered the fill with: its transcode_policy.h types),
# the rest as they are.
paste -d' ' "$TMP/sized" "$TMP/fill.ferry" | awk '{
    t = $7
    text = t ~ /^text\// || t ~ /^application\/(json|javascript|xml)$/ || t == "image/svg+xml" || t ~ /\+(json|xml)$/
    print ($1 >= 4096 && text) ? "z" : "-", $1, $2 }' >"$TMP/ideal.list"
LOGICAL=$(awk '{ s += $2 } END { print s }' "$TMP/ideal.list")
N_TEXT=$(awk '$1 == "z"' "$TMP/ideal.list" | wc -l)
IDEAL=$(awk '$1 == "-" { s += $2 } END { print s + 0 }' "$TMP/ideal.list")
while read -r _ _ path; do
  IDEAL=$(( IDEAL + $(zstd -3 -qc <"$WWW$path" | wc -c) ))
done < <(awk '$1 == "z"' "$TMP/ideal.list")

# --- Warm-up checks: every measured URL a HIT for every client kind, over
# each protocol a peer speaks, with the coding it is set to give. The
# HTTP/1.1 answers' header bytes are what wrk's bytes are reduced by.
# expected_coding PEER KIND
expected_coding() {
  case "$1/$2" in
    */identity) echo - ;;
    ferry/*) echo "$2" ;;
    *) echo gzip ;;  # nginx and Varnish: gzip to every client that takes it
  esac
}
for peer in "${PEERS[@]}"; do
  for proto in "${PROTOS[@]}"; do
    speaks "$peer" "$proto" || continue
    log "checking hits and codings: $peer, ${PROTO_NAME[$proto]}, ${KINDS[*]} clients, $N_ELIG URLs"
    for kind in "${KINDS[@]}"; do
      out="$TMP/hit.$peer.$proto.$kind"
      check_hits "$peer" "$kind" "$TMP/measured.paths" "$out" "${CURL_PROTO[$proto]}"
      want=$(expected_coding "$peer" "$kind")
      got=$(awk -v w="$want" '$6 != w { n++; c[$6]++ } END { for (k in c) printf "%s%d %s", (s++ ? ", " : ""), c[k], k }' "$out")
      [ -z "$got" ] || die "$peer, $kind clients, ${PROTO_NAME[$proto]}: expected Content-Encoding '$want' for every measured URL, got: $got ('-': none)"
    done
  done
done

# Byte checks: the sample's bodies, every client kind and protocol.
log "checking bodies of $(wc -l <"$TMP/sample.paths") URLs from each cache, every client kind and protocol"
for peer in "${PEERS[@]}"; do
  for proto in "${PROTOS[@]}"; do
    speaks "$peer" "$proto" || continue
    for kind in "${KINDS[@]}"; do
      check_bodies "$peer" "$kind" "$TMP/sample.paths" "${CURL_PROTO[$proto]}" >/dev/null
    done
  done
done

# run_h2load PEER KIND: one measured h2load run; H2_LINE is
# "requests_per_s p99_ms data_bytes responses". Non-2xx answers, failed
# streams but those cut at the end, and requests that reached the origin
# go to FAILED.
run_h2load() {
  local peer=$1 kind=$2 before after e ae=()
  [ -n "${AE[$kind]}" ] && ae=(-H "accept-encoding: ${AE[$kind]}")
  awk -v base="${BASE[$peer]}" '{ print base $0 }' "$TMP/measured.paths" >"$TMP/h2.urls"
  rm -f "$TMP/h2.log"  # h2load appends to it
  before=$(origin_requests)
  h2load -t"$H2_THREADS" -c"$CONNS" -m"$STREAMS" -D "$SECS" --log-file="$TMP/h2.log" -i "$TMP/h2.urls" "${ae[@]}" \
    >"$TMP/h2.out" 2>&1 || { cat "$TMP/h2.out" >&2; die "h2load failed against $peer"; }
  after=$(origin_requests)
  e="$peer, $kind clients, h2load"
  grep -q '^Application protocol: h2$' "$TMP/h2.out" || { cat "$TMP/h2.out" >&2; die "$e: no h2"; }
  # requests: T total, S started, D done, OK succeeded, F failed, E errored, TO timeout
  # status codes: A 2xx, B 3xx, C 4xx, D 5xx
  # traffic: ... (TOTAL) total, ... (HEADERS) headers (...), ... (DATA) data
  local rps ok failed errored timeout s2xx other data late p99
  rps=$(awk '/^finished in/ { print $4 }' "$TMP/h2.out")
  read -r ok failed errored timeout < <(awk '/^requests:/ { print $8, $10, $12, $14 }' "$TMP/h2.out")
  read -r s2xx other < <(awk '/^status codes:/ { print $3, $5 + $7 + $9 }' "$TMP/h2.out")
  data=$(grep '^traffic:' "$TMP/h2.out" | grep -o '([0-9]*)' | tr -d '()' | sed -n 3p)
  [ -n "$rps" ] && [ -n "$ok" ] && [ -n "$data" ] || { cat "$TMP/h2.out" >&2; die "$e: could not read h2load's summary"; }
  # Streams cut when the run ends fail with status -1; any that started
  # longer before the last request than twice the slowest answer (or 1 s)
  # failed in the run.
  late=$(awk -F'\t' '{ if ($1 > last) last = $1 } $2 == -1 { cut[++n] = $1 } $2 != -1 && $3 > slow { slow = $3 }
    END { w = 2 * slow; if (w < 1e6) w = 1e6; for (i = 1; i <= n; i++) if (cut[i] < last - w) m++; print m + 0 }' "$TMP/h2.log")
  p99=$(awk -F'\t' '$2 != -1 { print $3 }' "$TMP/h2.log" | sort -n |
    awk '{ v[NR] = $1 } END { i = int(NR * 0.99); if (i < NR * 0.99) i++; printf "%.3f", v[i] / 1000 }')
  [ "$timeout" = 0 ] && [ "$other" = 0 ] && [ "$late" = 0 ] && [ "$failed" -le $(( CONNS * STREAMS )) ] ||
    FAILED+=("$e: $s2xx 2xx, $other other answers, $failed failed ($late before the end), $errored errored, $timeout timed out")
  # A stream cut at the end after its headers counts as a 2xx, not as a
  # success: at most one per stream in flight.
  [ "$s2xx" -ge "$ok" ] && [ $(( s2xx - ok )) -le $(( CONNS * STREAMS )) ] ||
    FAILED+=("$e: $ok succeeded, $failed failed, but $s2xx answers were 2xx")
  [ "$before" = "$after" ] || FAILED+=("$e: $(( after - before )) requests reached the origin (not hits)")
  H2_LINE="$rps $p99 $data $ok"
}

# mean_header PEER KIND: curl's mean header bytes over the measured URLs,
# HTTP/1.1.
mean_header() { awk '{ s += $3 } END { print s / NR }' "$TMP/hit.$1.h1.$2"; }

# The measured runs. RPS, P99 and BPR[PEER.PROTO.KIND]: one figure per round.
declare -A RPS P99 BPR
measure() {
  local peer=$1 proto=$2 kind=$3 key=$1.$2.$3
  log "round $round/$ROUNDS: ${PROTO_NAME[$proto]}, $kind clients, $peer, ${SECS}s"
  if [ "$proto" = h1 ]; then
    run_wrk "$peer" "$kind" "$TMP/measured.paths"
    # requests bytes seconds (5 error counts) p50_ms p99_ms
    read -r req bytes secs _ _ _ _ _ _ p99 <<<"$WRK_LINE"
    RPS[$key]+=" $(awk -v r="$req" -v s="$secs" 'BEGIN { printf "%.0f", r / s }')"
    P99[$key]+=" $(printf '%.1f' "$p99")"
    BPR[$key]+=" $(awk -v r="$req" -v b="$bytes" -v h="$(mean_header "$peer" "$kind")" 'BEGIN { printf "%.0f", b / r - h }')"
  else
    run_h2load "$peer" "$kind"
    read -r rps p99 data n <<<"$H2_LINE"
    RPS[$key]+=" $(printf '%.0f' "$rps")"
    P99[$key]+=" $(printf '%.1f' "$p99")"
    BPR[$key]+=" $(awk -v d="$data" -v n="$n" 'BEGIN { printf "%.0f", d / n }')"
  fi
  local p
  for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null || die "a server exited during the runs (see $TMP/*.log)"; done
}
for round in $(seq 1 "$ROUNDS"); do
  for proto in "${PROTOS[@]}"; do
    for kind in "${KINDS[@]}"; do
      for peer in "${PEERS[@]}"; do
        speaks "$peer" "$proto" && measure "$peer" "$proto" "$kind"
      done
    done
  done
done

# --- The tables (markdown, like the rest of bench/results/latest.md).
# stats VALUES: "median min max" (the middle value; the lower middle of an
# even count).
stats() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }'; }
median() { stats "$1" | cut -d' ' -f1; }
# fig VALUES: the median, with the spread when there are several rounds.
fig() {
  read -r m lo hi < <(stats "$1")
  if [ "$ROUNDS" = 1 ]; then echo "$m"; else echo "$m ($lo–$hi)"; fi
}
# coding PEER PROTO KIND: what the peer answered the warm-up with.
coding() { awk '{ c[$6 == "-" ? "identity" : $6]++ } END { for (k in c) printf "%s%s", (n++ ? ", " : ""), k }' "$TMP/hit.$1.$2.$3"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f×", a / b }'; }

SPREAD=""
[ "$ROUNDS" -gt 1 ] && SPREAD=", median of $ROUNDS rounds (min–max)"
echo "### Cache over TLS and HTTP/2: ferry cache serve beside nginx proxy_cache and Varnish behind hitch ($(date -u +%Y-%m-%d), $(nproc) cores, wrk -t$WRK_THREADS -c$CONNS -d${SECS}s, h2load -t$H2_THREADS -c$CONNS -m$STREAMS -D$SECS$SPREAD)"
echo
echo "$(/usr/sbin/nginx -v 2>&1 | sed 's/^nginx version: //'), $(/usr/sbin/varnishd -V 2>&1 | grep -o 'varnish-[0-9.]*' | head -1), hitch $(/usr/sbin/hitch --version 2>&1 | awk '{ print $2; exit }'), wrk $(wrk -v 2>&1 | head -1 | awk '{ print $2 }'), h2load $(h2load --version | awk '{ print $2 }'), $(openssl version | awk '{ print $1, $2 }'), $("$FERRY" --version 2>&1 | head -1)."
echo "Corpus (bench/cache_corpus.sh): $N_ELIG eligible text URLs measured (html/js/css/json/svg of at least 4 KiB, $MIB_ELIG MiB), $N_ALL URLs in all."
tls_note=$(for peer in "${PEERS[@]}"; do echo "${TLS_USED[$peer]}"; done | sort -u)
if [ "$(wc -l <<<"$tls_note")" = 1 ]; then
  echo "TLS: every peer agreed $tls_note with OpenSSL's client."
else
  echo "TLS: $(for peer in "${PEERS[@]}"; do printf '%s %s; ' "$peer" "${TLS_USED[$peer]}"; done)"
fi
echo "Clients: zstd \`${AE[zstd]}\` (Chromium over https), br \`${AE[br]}\` (Firefox, Safari), gzip \`${AE[gzip]}\` (Chromium over plain http to a host name), identity none."
echo "nginx 1.22 in Debian 12 has no brotli or zstd module: br and zstd clients get its gzip (level 1, made for every response); Varnish sends its stored gzip to every client that takes gzip. The coding column is what each peer answered."
echo "bytes/response: body bytes as sent; HTTP/2 h2load's DATA bytes per response; HTTP/1.1 wrk's bytes per response less the headers' mean (nginx's chunk framing stays in)."
echo
echo "| protocol | clients | peer | coding | requests/s | p99 ms | bytes/response | ferry ÷ nginx | ferry ÷ varnish |"
echo "|---|---|---|---|---|---|---|---|---|"
for proto in "${PROTOS[@]}"; do
  for kind in "${KINDS[@]}"; do
    for peer in "${PEERS[@]}"; do
      key=$peer.$proto.$kind
      if ! speaks "$peer" "$proto"; then
        echo "| ${PROTO_NAME[$proto]} | $kind | $peer | $NO_H2 |  |  |  |  |  |"
        continue
      fi
      vs_nginx='' vs_varnish=''
      if [ "$peer" = ferry ]; then
        vs_nginx=$(ratio "$(median "${RPS[$key]}")" "$(median "${RPS[nginx.$proto.$kind]}")")
        vs_varnish=$(ratio "$(median "${RPS[$key]}")" "$(median "${RPS[varnish.$proto.$kind]}")")
      fi
      echo "| ${PROTO_NAME[$proto]} | $kind | $peer | $(coding "$peer" "$proto" "$kind") | $(fig "${RPS[$key]}") | $(fig "${P99[$key]}") | $(fig "${BPR[$key]}") | $vs_nginx | $vs_varnish |"
    done
  done
done
echo
# Goals, per protocol: ferry's median requests/s at least nginx's for every
# client kind; its median bytes/response for gzip clients at most nginx's.
goals() {
  local proto=$1 kind behind=() f n
  if ! speaks ferry "$proto"; then echo "n/a"; return; fi
  for kind in "${KINDS[@]}"; do
    f=$(median "${RPS[ferry.$proto.$kind]}") n=$(median "${RPS[nginx.$proto.$kind]}")
    [ "$f" -ge "$n" ] || behind+=("$kind $(ratio "$f" "$n")")
  done
  if [ ${#behind[@]} = 0 ]; then printf 'met'; else printf 'not met (%s)' "$(IFS=,; echo "${behind[*]}" | sed 's/,/, /g')"; fi
  f=$(median "${BPR[ferry.$proto.gzip]}") n=$(median "${BPR[nginx.$proto.gzip]}")
  if [ "$f" -le "$n" ]; then echo "; gzip bytes/response $f ≤ $n: met"; else echo "; gzip bytes/response $f > $n: not met"; fi
}
echo "Goals (issue 19): at least nginx's requests/s for every client kind, and no more bytes per response than nginx for gzip clients. HTTP/1.1: $(goals h1). HTTP/2: $(goals h2)."
echo
echo "Disk after a cold fill of the whole corpus ($N_ALL files, $LOGICAL logical bytes, every file once, identity clients). Ideal: $N_TEXT text files of at least 4 KiB (the Content-Types ferry compresses) as \`zstd -3\` makes each alone, the others as they are: $IDEAL bytes. Allocated: \`du -sB1\` (blocks); Varnish keeps its objects in memory."
echo
echo "| cache | files | allocated bytes | apparent bytes | logical ÷ allocated | allocated ÷ ideal |"
echo "|---|---|---|---|---|---|"
for peer in nginx ferry; do
  read -r alloc apparent files <<<"${DISK[$peer]}"
  echo "| $peer | $files | $alloc | $apparent | $(ratio "$LOGICAL" "$alloc") | $(ratio "$alloc" "$IDEAL") |"
done
echo "| ideal |  | $IDEAL |  | $(ratio "$LOGICAL" "$IDEAL") | 1.00× |"

if [ ${#FAILED[@]} -gt 0 ]; then
  echo
  for f in "${FAILED[@]}"; do echo "FAILED: $f"; done
  exit 1
fi
