#!/usr/bin/env bash
# Daemons run from a config file (--config, TOML): one file holds the
# cache's and the volume daemon's settings under [cache.serve] and
# [volume.serve]; keys become flags, a flag on the command line wins, and
# --log-format json (here from the file) makes every log line on stderr a
# JSON object. A wrong key or an unreadable file is a one-line error and
# the daemon does not start.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cache_lib.sh"

start_origin
mkdir -p "$TMP/pool"
cat >"$TMP/ferry.toml" <<EOF
log-format = "json"

[cache.serve]
origin = "$ORIGIN"
dir = "$TMP/cache"
listen = "127.0.0.1:1"
port-file = "$TMP/cache.port"
default-ttl = "1h"

[volume.serve]
pool = ["$TMP/pool"]
nbd = "127.0.0.1:0"
api = "127.0.0.1:0"
port-file = "$TMP/volume.ports"
hydration-threads = 3
EOF

# --- the cache from the file; --listen on the command line wins over its 127.0.0.1:1 -
"$FERRY" cache serve --config "$TMP/ferry.toml" --listen 127.0.0.1:0 >"$TMP/cache.out" 2>"$TMP/cache.err" &
CACHE_PID=$!
PIDS+=($CACHE_PID)
for _ in $(seq 1 50); do [ -s "$TMP/cache.port" ] && break; sleep 0.1; done
[ -s "$TMP/cache.port" ] || { cat "$TMP/cache.err" >&2; fail "cache from its config file did not start"; }
[ "$(cat "$TMP/cache.port")" != 1 ] || fail "the file's listen won over the command line's"
C="http://127.0.0.1:$(cat "$TMP/cache.port")"
wait_port "$(cat "$TMP/cache.port")"
curl -sf -D "$TMP/h1" -o "$TMP/b1" "$C/plain/a"
curl -sf -D "$TMP/h2" -o "$TMP/b2" "$C/plain/a"
[ "$(header "$TMP/h2" x-cache)" = HIT ] || fail "second request not a hit: the file's default-ttl was not applied"
cmp -s "$TMP/b1" "$TMP/b2" || fail "hit bytes differ"
[ "$(origin_count /plain/a)" = 1 ] || fail "origin saw /plain/a $(origin_count /plain/a) times"
[ -d "$TMP/cache" ] || fail "the file's dir was not used"

# --- the volume daemon from the same file ---------------------------------------------
"$FERRY" volume serve --config "$TMP/ferry.toml" >"$TMP/volume.out" 2>"$TMP/volume.err" &
PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$TMP/volume.ports" ] && break; sleep 0.1; done
[ -s "$TMP/volume.ports" ] || { cat "$TMP/volume.err" >&2; fail "volume daemon from its config file did not start"; }
read -r NBD API <"$TMP/volume.ports"
wait_port "$API"
"$FERRY" volume ls --api "127.0.0.1:$API" --json >/dev/null || fail "volume daemon's API does not answer"

# --- every log line of both is a JSON object with a message, a stop's too ---------------
kill -TERM "$CACHE_PID"
wait "$CACHE_PID" 2>/dev/null || true
grep -q '"msg":"interrupted, cleaning up' "$TMP/cache.err" || fail "no JSON line for the stop: $(cat "$TMP/cache.err")"
for f in "$TMP/cache.err" "$TMP/volume.err"; do
  [ -s "$f" ] || fail "$f: no log lines"
  /usr/bin/python3 - "$f" <<'PY' || fail "$f: a log line is not JSON: $(head -3 "$f")"
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    assert {"time", "level", "msg"} <= o.keys(), o
PY
done
grep -q '"msg":"ferry cache: listening on 127.0.0.1:' "$TMP/cache.err" || fail "cache log: $(cat "$TMP/cache.err")"

# --- mistakes: one line, exit 2, nothing started ----------------------------------------
printf '[cache.serve]\ndir = "%s"\nlisten = "127.0.0.1:0"\nmax-sise = "1G"\n' "$TMP/c2" >"$TMP/bad.toml"
set +e
"$FERRY" cache serve --config "$TMP/bad.toml" >"$TMP/bad.out" 2>&1
rc=$?
"$FERRY" volume serve --config "$TMP/missing.toml" >"$TMP/missing.out" 2>&1
rc2=$?
set -e
[ "$rc" = 2 ] && [ "$(wc -l <"$TMP/bad.out")" = 1 ] || fail "unknown key: rc $rc: $(cat "$TMP/bad.out")"
grep -q "unknown key 'max-sise'" "$TMP/bad.out" || fail "unknown key message: $(cat "$TMP/bad.out")"
[ ! -e "$TMP/c2" ] || fail "a cache with a bad config file made its directory"
[ "$rc2" = 2 ] && [ "$(wc -l <"$TMP/missing.out")" = 1 ] && grep -q "missing.toml" "$TMP/missing.out" ||
  fail "missing file: rc $rc2: $(cat "$TMP/missing.out")"
echo "daemon config: OK"
