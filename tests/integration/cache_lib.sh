# Sourced by the cache tests (after lib.sh): the scripted origin
# (cache_origin.py) and `ferry cache serve` instances on loopback.

start_origin() {  # sets ORIGIN
  /usr/bin/python3 "$FERRY_SOURCE/tests/integration/cache_origin.py" "$TMP/origin.port" &
  PIDS+=($!)
  for _ in $(seq 1 50); do [ -s "$TMP/origin.port" ] && break; sleep 0.1; done
  ORIGIN="http://127.0.0.1:$(cat "$TMP/origin.port")"
}

origin_count() {  # origin_count PATH [conditional]: requests the origin saw
  curl -sf "$ORIGIN/_stats" | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print(d['${2:-counts}'].get('$1', 0))"
}

# start_cache NAME ARGS...: runs `ferry cache serve ARGS` on a free port;
# sets C (its URL) and CACHE_PID; its log is $TMP/NAME.log.
start_cache_named() {
  local name=$1
  shift
  rm -f "$TMP/$name.port"
  "$FERRY" cache serve --listen 127.0.0.1:0 --port-file "$TMP/$name.port" "$@" >>"$TMP/$name.log" 2>&1 &
  CACHE_PID=$!
  PIDS+=($CACHE_PID)
  for _ in $(seq 1 50); do [ -s "$TMP/$name.port" ] && break; sleep 0.1; done
  [ -s "$TMP/$name.port" ] || { cat "$TMP/$name.log" >&2; fail "cache $name did not start"; }
  C="http://127.0.0.1:$(cat "$TMP/$name.port")"
  wait_port "$(cat "$TMP/$name.port")"
}

header() {  # header FILE NAME: a response header's value from curl -D output
  grep -i "^$2:" "$1" | head -1 | cut -d' ' -f2- | tr -d '\r'
}

metric() {  # metric CACHE_URL NAME: one sample from /_ferry/metrics
  curl -sf "$1/_ferry/metrics" | awk -v n="$2" '$1 == n { print $2 }'
}

# wait_metric CACHE_URL NAME WANT: until the sample is WANT (at most 20 s),
# e.g. disk entries while small bodies are compressed behind their fills.
wait_metric() {
  local _
  for _ in $(seq 1 200); do
    [ "$(metric "$1" "$2")" = "$3" ] && return 0
    sleep 0.1
  done
  fail "$2 is $(metric "$1" "$2"), not $3, after 20 s"
}

# start_static_origin DIR: Python's http.server serving DIR's files (with
# Content-Type by extension, Last-Modified, no Cache-Control: the cache's
# heuristic freshness applies); sets ORIGIN.
start_static_origin() {
  rm -f "$TMP/static.port"
  /usr/bin/python3 - "$1" "$TMP/static.port" <<'PY' >>"$TMP/static.log" 2>&1 &
import functools, sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass
srv = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=sys.argv[1]))
open(sys.argv[2], "w").write(str(srv.server_address[1]))
srv.serve_forever()
PY
  PIDS+=($!)
  for _ in $(seq 1 50); do [ -s "$TMP/static.port" ] && break; sleep 0.1; done
  [ -s "$TMP/static.port" ] || { cat "$TMP/static.log" >&2; fail "http.server did not start"; }
  ORIGIN="http://127.0.0.1:$(cat "$TMP/static.port")"
  wait_port "$(cat "$TMP/static.port")"
}
