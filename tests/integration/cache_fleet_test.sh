#!/usr/bin/env bash
# A fleet of three ferry caches behind Debian's nginx hashing the URL
# consistently (`hash $request_uri consistent`), the usual way to spread
# one key space over caches, in front of Python's http.server (300 files
# of real text, a year old: fresh for weeks by the heuristic).
# - 300 URLs through nginx: each object is cached once in the fleet (the
#   caches' entries add up to 300, and the origin sent 300);
# - again: every answer a HIT from the cache that had it;
# - one cache SIGKILLed: nginx sends its keys on round the ring; the
#   others' keys stay where they were (HITs, same cache); the dead one's
#   share is fetched once more from the origin, and only that;
# - its keys then HIT where they went.
# Prints the hit ratio before and after, and the origin's extra fetches.
source "$(dirname "$0")/lib.sh"
need curl
need /usr/sbin/nginx
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"

N=300
mkdir -p "$TMP/site"
files=(/usr/share/doc/*/copyright)
for i in $(seq 0 $((N - 1))); do cp "${files[$((i % ${#files[@]}))]}" "$TMP/site/f$i.txt"; echo "$i" >>"$TMP/site/f$i.txt"; done
touch -d '1 year ago' "$TMP/site"/*.txt
start_static_origin "$TMP/site"

PORTS=()
for k in 0 1 2; do
  start_cache_named "c$k" --origin "$ORIGIN" --dir "$TMP/c$k"
  PORTS+=("$(cat "$TMP/c$k.port")")
  PID[$k]=$CACHE_PID
done
LB=$(free_port)
mkdir -p "$TMP/lb"
cat >"$TMP/lb/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $TMP/lb/nginx.pid;
error_log $TMP/lb/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
$(for t in client_body proxy fastcgi uwsgi scgi; do echo "  ${t}_temp_path $TMP/lb/$t;"; done)
  upstream fleet {
    hash \$request_uri consistent;
    server 127.0.0.1:${PORTS[0]} max_fails=1 fail_timeout=60s;
    server 127.0.0.1:${PORTS[1]} max_fails=1 fail_timeout=60s;
    server 127.0.0.1:${PORTS[2]} max_fails=1 fail_timeout=60s;
  }
  server {
    listen 127.0.0.1:$LB;
    location / {
      proxy_pass http://fleet;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream error timeout;
      add_header X-Upstream \$upstream_addr always;
    }
  }
}
CONF
/usr/sbin/nginx -p "$TMP/lb" -e "$TMP/lb/error.log" -c "$TMP/lb/nginx.conf" >"$TMP/lb/out.log" 2>&1 &
PIDS+=($!)
wait_port "$LB"

# pass NAME: every URL once through nginx; "PATH CACHE_PORT X-CACHE" lines in $TMP/NAME.
pass() {
  local i
  : >"$TMP/$1"
  for i in $(seq 0 $((N - 1))); do
    curl -sf -D "$TMP/h" "http://127.0.0.1:$LB/f$i.txt" -o "$TMP/got" || fail "$1: f$i.txt failed"
    cmp -s "$TMP/got" "$TMP/site/f$i.txt" || fail "$1: f$i.txt is not the origin's"
    echo "f$i.txt $(header "$TMP/h" x-upstream | sed 's/.*://') $(header "$TMP/h" x-cache)" >>"$TMP/$1"
  done
}
fetches() {  # the origin fetches of the caches given by index
  local k n=0
  for k in "$@"; do n=$((n + $(metric "http://127.0.0.1:${PORTS[$k]}" ferry_cache_origin_fetches_total))); done
  echo "$n"
}
hits() { awk '$3 == "HIT"' "$TMP/$1" | wc -l; }

pass first
[ "$(hits first)" = 0 ] || fail "hits on a cold fleet"
[ "$(fetches 0 1 2)" = "$N" ] || fail "the fleet fetched $(fetches 0 1 2) objects for $N"
for k in 0 1 2; do
  share[$k]=$(awk -v p="${PORTS[$k]}" '$2 == p' "$TMP/first" | wc -l)
  [ "${share[$k]}" -gt $((N / 10)) ] || fail "cache $k has ${share[$k]} of $N keys: not spread"
  wait_metric "http://127.0.0.1:${PORTS[$k]}" ferry_cache_disk_entries "${share[$k]}"
done
echo "spread: ${share[0]} / ${share[1]} / ${share[2]} keys; each cached once ($N entries, $N origin fetches)"
pass second
[ "$(hits second)" = "$N" ] || fail "second pass: $(hits second) hits of $N"
cmp -s <(cut -d' ' -f1,2 "$TMP/first") <(cut -d' ' -f1,2 "$TMP/second") || fail "keys moved between passes"

kill -9 "${PID[1]}"
wait "${PID[1]}" 2>/dev/null || true
before=$(fetches 0 2)
pass third
extra=$(($(fetches 0 2) - before))
# The other caches' keys stayed, and hit; the dead one's went elsewhere, once each.
join <(sort "$TMP/first") <(sort "$TMP/third") | awk -v dead="${PORTS[1]}" '
  $2 != dead && ($4 != $2 || $5 != "HIT") { bad++ }
  $2 == dead && ($4 == dead || $5 == "HIT") { bad++ }
  END { exit bad > 0 }' || fail "keys of live caches moved, or the dead cache's keys hit: $(head -5 "$TMP/third")"
[ "$extra" = "${share[1]}" ] || fail "the origin sent $extra more, the dead cache had ${share[1]}"
pass fourth
[ "$(hits fourth)" = "$N" ] || fail "after the move: $(hits fourth) hits of $N"
echo "hit ratio: 100% before; with one cache of three killed $((100 * $(hits third) / N))% on the next pass, 100% after;" \
  "the origin's extra fetches: $extra (the dead cache's share, ${share[1]} keys)"
