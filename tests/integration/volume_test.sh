#!/usr/bin/env bash
# ferry volume serve with volumes made from a snapshot in ferry-test-s3
# (5 ms added to every request), driven by qemu-img, qemu-io, nbdinfo and
# nbdcopy:
# - 20 volumes from one snapshot, hydrated in the background through the
#   shared transfer cache: the server sees each chunk fetched once;
# - qemu-img compare of a hydrated volume with its source image; nbdcopy
#   of another with md5;
# - on a volume hydrating slowly (--hydration-rate): qemu-io write/read
#   patterns on unhydrated, partly hydrated and hydrated regions;
# - SIGKILL during hydration after acknowledged (flushed) writes, then a
#   restart: the writes are there, everything else is the image, and
#   hydration goes on;
# - bad input: a missing snapshot, a damaged manifest, an unknown export,
#   bad QoS flags.
source "$(dirname "$0")/lib.sh"
need qemu-img
need qemu-io
need nbdinfo
need nbdcopy

start_test_s3
use_endpoint
IMG="$TMP/disk.img"
CHUNK=65536
# 64 chunks: random, with chunks 10-19 zeros and 40-49 a copy of 0-9.
make_file "$TMP/rand" $((44 * CHUNK))
/usr/bin/python3 - "$TMP/rand" "$IMG" $CHUNK <<'PY'
import sys
r, c = open(sys.argv[1], "rb").read(), int(sys.argv[3])
open(sys.argv[2], "wb").write(r[:10 * c] + bytes(10 * c) + r[10 * c:30 * c] + r[:10 * c] + r[30 * c:44 * c])
PY
[ "$(stat -c %s "$IMG")" = $((64 * CHUNK)) ] || fail "image size $(stat -c %s "$IMG")"
"$FERRY" snapshot create "$IMG" s3://bkt/snaps/base --chunk-size 64K >/dev/null
distinct=$(/usr/bin/python3 -c "
import hashlib
d = open('$IMG','rb').read(); c = $CHUNK
print(len({hashlib.sha256(d[i:i+c]).hexdigest() for i in range(0, len(d), c) if any(d[i:i+c])}))")
admin POST /_admin/faults '{"latency_ms": 5}' >/dev/null

start_daemon() { start_volume_daemon --pool "$TMP/${POOL_A:-pool1}" --pool "$TMP/${POOL_B:-pool2}" "$@"; }

# QoS flags: a bad value is one line naming the flag, and no daemon starts.
for bad in "--busy-window -1s" "--busy-window soon" "--trickle 0"; do
  # shellcheck disable=SC2086
  if "$FERRY" volume serve --pool "$TMP/qos-pool" --nbd 127.0.0.1:0 --api 127.0.0.1:0 $bad >"$TMP/qos.out" 2>&1; then
    fail "volume serve $bad started"
  fi
  [ "$(wc -l <"$TMP/qos.out")" = 1 ] && grep -q -- "${bad%% *}" "$TMP/qos.out" || fail "volume serve $bad: $(cat "$TMP/qos.out")"
done
# wait_hydrated [PREFIX]: until every volume (whose name starts with PREFIX) is hydrated.
wait_hydrated() {
  local left
  for _ in $(seq 1 300); do
    left=$(vol ls --json | /usr/bin/python3 -c "import json,sys; print(sum(v['state'] != 'hydrated' for v in json.load(sys.stdin) if v['name'].startswith('${1:-}')))")
    [ "$left" = 0 ] && return 0
    sleep 0.1
  done
  fail "$left volumes${1:+ named $1*} still hydrating"
}
get_requests() { admin GET /_admin/stats | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['ops']['get']['requests'])"; }
hydrated() { vol status "$1" --json | json_field state; }

# --- 20 clones, one fetch per chunk -------------------------------------------------
start_daemon --hydration-threads 4
admin POST /_admin/reset >/dev/null
vol create clone --from s3://bkt/snaps/base --count 20 >"$TMP/created"
[ "$(wc -l <"$TMP/created")" = 20 ] || fail "create --count 20: $(cat "$TMP/created")"
grep -q pool1 "$TMP/created" && grep -q pool2 "$TMP/created" || fail "placement used one pool: $(cat "$TMP/created")"
wait_hydrated
gets=$(get_requests)
# One GET per distinct chunk, plus the manifest read once for the batch.
[ "$gets" = $((distinct + 1)) ] || fail "20 volumes made $gets GETs, want $distinct chunks + 1 manifest read"
echo "20 volumes: $gets GETs for $distinct distinct chunks"
# Each volume's status splits what it fetched: from the origin (its fetch
# went there) or from the transfer cache. Across the 20, the origin sent
# each distinct chunk once; the rest came from the cache.
vol ls --json | /usr/bin/python3 -c "
import json, sys
vs = json.load(sys.stdin)
o = sum(v['bytes_from_origin'] for v in vs); c = sum(v['bytes_from_cache'] for v in vs)
assert all(v['bytes_from_origin'] + v['bytes_from_cache'] == v['fetched_bytes'] for v in vs), vs
assert o == $distinct * $CHUNK, (o, $distinct * $CHUNK)
assert c == sum(v['fetched_bytes'] for v in vs) - o and c > 0, c
" || fail "bytes from origin and from cache do not add up"
qemu-img compare -f raw -F raw "nbd://127.0.0.1:$NBD/clone-7" "$IMG" >/dev/null || fail "qemu-img compare clone-7"
nbdcopy "nbd://127.0.0.1:$NBD/clone-13" "$TMP/clone13.img"
[ "$(md5sum <"$TMP/clone13.img")" = "$(md5sum <"$IMG")" ] || fail "nbdcopy md5 of clone-13"

# --- patterns on unhydrated, partly hydrated and hydrated regions -------------------
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true
start_daemon --hydration-rate 128K --hydration-threads 1
vol create slow --from s3://bkt/snaps/base >/dev/null
U="nbd://127.0.0.1:$NBD/slow"
# A read of chunk 30 hydrates it (partly hydrated region around it); chunk 31 stays missing.
qemu-io -f raw -c "read -P 0 $((10 * CHUNK)) 4096" "$U" | grep -q 'read 4096' || fail "zero chunk read"
off=$((30 * CHUNK + 1000))
out=$(qemu-io -f raw -c "write -P 0x5a $off 3000" -c "read -P 0x5a $off 3000" \
        -c "write -P 0x6b $((31 * CHUNK - 500)) 1000" -c "read -P 0x6b $((31 * CHUNK - 500)) 1000" \
        -c "write -z $((50 * CHUNK)) $CHUNK" -c "read -P 0 $((50 * CHUNK)) $CHUNK" -c flush "$U")
echo "$out" | grep -q 'Pattern verification failed' && fail "qemu-io patterns: $out"
[ "$(echo "$out" | grep -c '^read ')" = 3 ] || fail "qemu-io: $out"
[ "$(vol status slow --json | json_field triggers)" -ge 2 ] || fail "no triggers counted"
# What this volume touched first becomes the snapshot's prefetch order.
"$FERRY" snapshot prefetch s3://bkt/snaps/base --from-volume slow --api "127.0.0.1:$API" >/dev/null
order=$("$FERRY" snapshot info s3://bkt/snaps/base --json | json_field prefetch)
[ "$order" -ge 2 ] || fail "prefetch order of $order chunks"
aws_s3 s3 cp s3://bkt/snaps/snapshots/base - | /usr/bin/python3 -c "
import json,sys; p = json.load(sys.stdin)['prefetch']; assert p[:3] == [10, 30, 31], p" || fail "prefetch order is not the first touches"

# Bandwidth in use per pool (what placement weighs), sampled each second:
# the hydration at 128 KiB/s, and 2 MiB a client writes to another volume.
pool_rate() { curl -sf "http://127.0.0.1:$API/metrics" | awk -v m="$1" '$1 ~ "^" m "[{]" { if ($2 > x) x = $2 } END { print x + 0 }'; }
pool_metrics() { curl -sf "http://127.0.0.1:$API/metrics" | grep pool_; }
vol create wr --from s3://bkt/snaps/base >/dev/null
qemu-io -f raw -c "write -P 0x33 0 2M" "nbd://127.0.0.1:$NBD/wr" >/dev/null
for _ in $(seq 1 40); do
  [ "$(pool_rate ferry_volume_pool_hydration_bytes_per_second)" -gt 16000 ] &&
    [ "$(pool_rate ferry_volume_pool_write_bytes_per_second)" -gt 100000 ] && break
  sleep 0.1
done
[ "$(pool_rate ferry_volume_pool_hydration_bytes_per_second)" -gt 16000 ] ||
  fail "pool hydration bandwidth not measured: $(pool_metrics)"
[ "$(pool_rate ferry_volume_pool_write_bytes_per_second)" -gt 100000 ] ||
  fail "pool write bandwidth not measured: $(pool_metrics)"
vol rm wr >/dev/null

# --- SIGKILL during hydration after acknowledged writes -----------------------------
[ "$(hydrated slow)" = hydrating ] || fail "slow volume hydrated too soon to test a crash"
kill -9 "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true
start_daemon --hydration-threads 4
nbdcopy "$U" "$TMP/slow.img" 2>/dev/null || nbdcopy "nbd://127.0.0.1:$NBD/slow" "$TMP/slow.img"
/usr/bin/python3 - "$IMG" "$TMP/slow.img" $CHUNK <<'PY' || fail "after SIGKILL the volume is not the image plus the acknowledged writes"
import sys
img, got, c = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), int(sys.argv[3])
want = bytearray(img)
off = 30 * c + 1000
want[off:off + 3000] = b"\x5a" * 3000
want[31 * c - 500:31 * c + 500] = b"\x6b" * 1000
want[50 * c:51 * c] = bytes(c)
assert bytes(want) == got, next(i for i in range(len(got)) if want[i] != got[i])
PY
# --- a crash inside a create: volume.json is its commit point ----------------------
# Atomic writes are counted per process: the port file is the first, the new
# volume's volume.json the second. Killed before its rename, the create never
# happened (the name is free again); killed after it, the volume exists.
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true
FERRY_CRASH_AT=atomic-write:2 start_daemon --hydration-threads 4
vol create torn --from s3://bkt/snaps/base >/dev/null 2>&1 && fail "create survived its crash point"
rc=0; wait "$DAEMON_PID" 2>/dev/null || rc=$?
[ "$rc" = 137 ] || fail "the daemon was to die at its crash point, exit $rc"
torn_dir=$(ls -d "$TMP"/pool*/volumes/torn)
[ ! -e "$torn_dir/volume.json" ] || fail "volume.json exists after a crash before its rename"
ls -A "$torn_dir" | grep -q '^\.%tmp\.' || fail "no temporary file left by the crash: $(ls -A "$torn_dir")"
FERRY_CRASH_AT=atomic-renamed:2 start_daemon --hydration-threads 4
vol ls --json | /usr/bin/python3 -c "import json,sys; assert 'torn' not in [v['name'] for v in json.load(sys.stdin)]" ||
  fail "an unfinished create is listed as a volume"
grep -q "torn: a create that did not finish" "$TMP/daemon.log" || fail "no warning for the unfinished create"
vol create kept --from s3://bkt/snaps/base >/dev/null 2>&1 && fail "create survived its crash point"
wait "$DAEMON_PID" 2>/dev/null || true
start_daemon --hydration-threads 4
vol create torn --from s3://bkt/snaps/base >/dev/null || fail "the name of an unfinished create is not free again"
vol ls --json | /usr/bin/python3 -c "import json,sys; n=[v['name'] for v in json.load(sys.stdin)]; assert 'torn' in n and 'kept' in n, n" ||
  fail "a create killed after its volume.json was renamed is not a volume"
wait_hydrated kept
nbdcopy "nbd://127.0.0.1:$NBD/kept" "$TMP/kept.img"
cmp -s "$IMG" "$TMP/kept.img" || fail "the volume whose create was killed after its commit is not the image"
# --- QoS: while clients read, background hydration on their pool trickles --------
metric_backoffs() { curl -sf "http://127.0.0.1:$API/metrics" | awk '$1 == "ferry_volume_hydration_backoffs_total" { print $2 }'; }
before=$(metric_backoffs)
# A snapshot whose chunks no volume has fetched, and a slower origin, keep
# this volume hydrating while its client reads.
make_file "$TMP/qos.img" $((45 * CHUNK))  # (make_file seeds by size: new bytes)
"$FERRY" snapshot create "$TMP/qos.img" s3://bkt/snaps/qos --chunk-size 64K >/dev/null
admin POST /_admin/faults '{"latency_ms": 150}' >/dev/null
vol create qos --from s3://bkt/snaps/qos >/dev/null
# Bursts of 300 reads on one connection (a client busy for a while, not one
# read per process start, which on a slow machine left gaps longer than the
# busy window) until a hydrator meets one (it looks before each fetch: 45
# chunks at 150 ms on 4 threads take about 1.7 s), or the volume is hydrated
# without.
BURST=()
for _ in $(seq 1 300); do BURST+=(-c "read 0 4096"); done
for _ in $(seq 1 60); do
  qemu-io -f raw "${BURST[@]}" "nbd://127.0.0.1:$NBD/qos" >/dev/null
  [ "$(metric_backoffs)" -gt "$before" ] && break
  [ "$(hydrated qos)" = hydrated ] && break
done
after=$(metric_backoffs)
admin POST /_admin/faults '{"latency_ms": 5}' >/dev/null
[ "$after" -gt "$before" ] || fail "hydration did not back off while a client was busy ($before -> $after)"

for _ in $(seq 1 300); do [ "$(hydrated slow)" = hydrated ] && break; sleep 0.1; done
[ "$(hydrated slow)" = hydrated ] || fail "hydration did not go on after the restart"

# --- the origin down: I/O fails with EIO after --fetch-deadline, hydration
# pauses, and both go on when it is back --------------------------------------------
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true
start_daemon --hydration-threads 2 --fetch-deadline 2s --hydration-rate 64K
vol create down --from s3://bkt/snaps/base >/dev/null
admin POST /_admin/faults '{"kind": 503, "op": "get"}' >/dev/null
t0=$(date +%s%N)
out=$(qemu-io -f raw -c "read $((60 * CHUNK)) 4096" "nbd://127.0.0.1:$NBD/down" 2>&1 || true)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "$out" | grep -q 'read failed' || fail "a read with the origin down did not fail: $out"
[ "$ms" -ge 1500 ] && [ "$ms" -lt 15000 ] || fail "read failed after $ms ms, want about the 2 s deadline"
admin POST /_admin/faults '{}' >/dev/null
qemu-io -f raw -c "read $((60 * CHUNK)) 4096" "nbd://127.0.0.1:$NBD/down" | grep -q 'read 4096' || fail "read after the origin came back"
[ "$(vol status down --json | json_field fetch_errors)" -ge 1 ] || fail "fetch errors not counted"

# --- a chunk's GET cut halfway resumes and is still checked against its
# name (hashed as it arrives, across the resume: a wrong hash would show as
# a third GET of the key, the check's refetch); one that arrives damaged is
# refused by its name and fetched once more, never served. Snapshots of
# their own (base's chunks are in the daemon's transfer cache by now), and
# faults that name their chunks (other volumes are hydrating), set before
# the volume exists (its own hydration may be the one to meet them).
chunk_hash() { dd if="$1" bs=$CHUNK skip="$2" count=1 status=none | sha256sum | cut -c1-64; }
# fault_stat FIELD: the active rule's count of injected faults or of the requests it matched
fault_stat() { admin GET /_admin/stats | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["faults"]["rules"][0]["'"$1"'"])'; }
# fresh_snapshot NAME CHUNKS: $TMP/NAME.img of random chunks no other test has, as snapshot NAME
fresh_snapshot() {
  head -c $(($2 * CHUNK)) /dev/urandom >"$TMP/$1.img"
  "$FERRY" snapshot create "$TMP/$1.img" "s3://bkt/snaps/$1" --chunk-size 64K >/dev/null
}
# read_through_faults NAME: a volume of snapshot NAME read whole under the
# faults set; sets $injected and $gets from the rule, clears the faults,
# and fails unless the volume's bytes are the image's.
read_through_faults() {
  vol create "$1" --from "s3://bkt/snaps/$1" >/dev/null
  nbdcopy "nbd://127.0.0.1:$NBD/$1" "$TMP/$1.out"
  injected=$(fault_stat injected) gets=$(fault_stat candidates)
  admin POST /_admin/faults '{}' >/dev/null
  cmp -s "$TMP/$1.out" "$TMP/$1.img" || fail "volume $1, read through faults, differs from its image"
}
fresh_snapshot wire 8
admin POST /_admin/faults '{"kind": "reset", "op": "get", "count": 3, "key_regex": "'"$(chunk_hash "$TMP/wire.img" 0)|$(chunk_hash "$TMP/wire.img" 1)|$(chunk_hash "$TMP/wire.img" 2)"'"}' >/dev/null
read_through_faults wire
[ "$injected" = 3 ] || fail "cut GETs: $injected injected, want 3"
[ "$gets" = 6 ] || fail "3 chunks with a cut GET each took $gets GETs, want 6 (a cut one and its resume)"
[ "$(vol status wire --json | json_field fetch_errors)" = 0 ] || fail "resumed GETs counted as fetch errors"
fresh_snapshot rot 4
admin POST /_admin/faults '{"kind": "corrupt", "op": "get", "count": 1, "key_regex": "'"$(chunk_hash "$TMP/rot.img" 2)"'"}' >/dev/null
read_through_faults rot
[ "$injected" = 1 ] || fail "the damaged GET was not sent (injected $injected)"
[ "$gets" = 2 ] || fail "a chunk that arrived damaged took $gets GETs, want 2"

# --- bad input ------------------------------------------------------------------------
rc=0; vol create nope --from s3://bkt/snaps/absent 2>"$TMP/err" || rc=$?
[ $rc != 0 ] && grep -q "no snapshot 'absent'" "$TMP/err" || fail "create from a missing snapshot: $(cat "$TMP/err")"
aws_s3 s3 cp "$TMP/created" s3://bkt/snaps/snapshots/broken >/dev/null
rc=0; vol create bad --from s3://bkt/snaps/broken 2>"$TMP/err" || rc=$?
[ $rc != 0 ] && grep -q "snapshot manifest" "$TMP/err" && [ "$(wc -l <"$TMP/err")" = 1 ] || fail "damaged manifest: $(cat "$TMP/err")"
rc=0; vol create clone-3 --from s3://bkt/snaps/base 2>"$TMP/err" || rc=$?
[ $rc != 0 ] && grep -q exists "$TMP/err" || fail "a second clone-3: $(cat "$TMP/err")"
nbdinfo "nbd://127.0.0.1:$NBD/nosuch" >/dev/null 2>&1 && fail "an unknown export answered"
# Bodies of the wrong types (which once threw out of the daemon's handler and
# ended it) and bytes that are not UTF-8 get one-line 400s and 404s; the
# daemon goes on.
for body in '{"name": "t", "from": "s3://bkt/snaps/base", "size": "big"}' \
            '{"name": "t", "from": "s3://bkt/snaps/base", "count": "2"}' '{"name": 1, "from": 2}' '[1]'; do
  code=$(curl -s -o "$TMP/api.out" -w '%{http_code}' -XPOST "http://127.0.0.1:$API/volumes" -d "$body")
  [ "$code" = 400 ] && json_field error <"$TMP/api.out" >/dev/null || fail "POST /volumes $body: $code $(cat "$TMP/api.out")"
done
code=$(curl -s -o "$TMP/api.out" -w '%{http_code}' "http://127.0.0.1:$API/volumes/caf$(printf '\xe9')")
[ "$code" = 404 ] && json_field error <"$TMP/api.out" >/dev/null || fail "a non-UTF-8 name: $code $(cat "$TMP/api.out")"
vol status clone-1 >/dev/null || fail "the daemon stopped answering after bad requests"
vol rm clone-0 >/dev/null
rc=0; vol status clone-0 2>/dev/null || rc=$?
[ $rc != 0 ] || fail "removed volume still there"
# --- --cache: chunks through a ferry cache serve tier, zstd at rest there --------
# A text-like image in a local repository, served over HTTP by Python, with
# ferry cache serve in front of it (chunks are application/octet-stream,
# immutable: compressed and kept for a day).
/usr/bin/python3 -c "
import random
r = random.Random(3); words = ['ferry', 'chunk', 'volume', 'snapshot', 'zstd', 'cache', 'nbd', 'pool']
data = ''.join(r.choice(words) + (' ' if r.random() < .9 else '\\n') for _ in range(700000)).encode()
open('$TMP/text.img', 'wb').write(data[:32 * $CHUNK])"
"$FERRY" snapshot create "$TMP/text.img" "$TMP/lrepo/text" --chunk-size 64K >/dev/null
(cd "$TMP/lrepo" && exec /usr/bin/python3 -m http.server --bind 127.0.0.1 0 >"$TMP/pyorigin.log" 2>&1) &
PIDS+=($!)
for _ in $(seq 1 50); do grep -q port "$TMP/pyorigin.log" 2>/dev/null && break; sleep 0.1; done
PYPORT=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$TMP/pyorigin.log" | head -1)
"$FERRY" cache serve --origin "http://127.0.0.1:$PYPORT" --listen 127.0.0.1:0 --port-file "$TMP/ccache.port" \
    --dir "$TMP/ccache" --default-ttl 1d --compress-type application/octet-stream >"$TMP/ccache.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$TMP/ccache.port" ] && break; sleep 0.1; done
CACHE="http://127.0.0.1:$(cat "$TMP/ccache.port")"
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true
# Its own pools: --cache serves the one repository behind that tier.
POOL_A=pool3 POOL_B=pool4 start_daemon --hydration-threads 4 --cache "$CACHE"
vol create tx --from "$TMP/lrepo/text" --count 5 >/dev/null
wait_hydrated tx-  # behind the cache tier
qemu-img compare -f raw -F raw "nbd://127.0.0.1:$NBD/tx-3" "$TMP/text.img" >/dev/null || fail "qemu-img compare through the cache tier"
cmetric() { curl -sf "$CACHE/_ferry/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }
[ "$(cmetric ferry_cache_origin_fetches_total)" = 32 ] || fail "the cache tier fetched $(cmetric ferry_cache_origin_fetches_total) chunks from its origin, want 32"
/usr/bin/python3 -c "import sys; sys.exit(0 if float('$(cmetric ferry_cache_compression_ratio)') > 2 else 1)" ||
  fail "chunks not compressed in the cache tier (ratio $(cmetric ferry_cache_compression_ratio))"

# --- deadlines: a client that sends nothing is cut, one that idles between NBD requests is not
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true
POOL_A=pool3 POOL_B=pool4 start_daemon --hydration-threads 4 --cache "$CACHE" --client-timeout 1s
/usr/bin/python3 - "$API" "$NBD" <<'PY' || fail "a silent client was not disconnected within the --client-timeout"
import socket, sys, time
def cut_within(port, send=b"", read_first=0, limit=4.0):
    s = socket.create_connection(("127.0.0.1", int(port)))
    if read_first:
        got = b""
        while len(got) < read_first:
            got += s.recv(read_first - len(got))
    s.sendall(send)
    s.settimeout(limit)
    t = time.monotonic()
    try:
        while s.recv(4096):
            pass
    except socket.timeout:
        sys.exit(f"port {port}: still open after {limit} s")
    return time.monotonic() - t
cut_within(sys.argv[1])                                              # API: nothing at all
cut_within(sys.argv[1], b"GET /v1/volumes HTTP/1.1\r\nHost: x\r\n")  # API: half a request
cut_within(sys.argv[2], read_first=18)                               # NBD: greeting read, no options
PY
vol ls >/dev/null || fail "the API does not answer after cutting silent clients"
qemu-io -f raw -c "read 0 4096" -c "sleep 2500" -c "read 4096 4096" "nbd://127.0.0.1:$NBD/tx-3" >"$TMP/idle.out" ||
  fail "an NBD client idle between requests was cut: $(cat "$TMP/idle.out")"
[ "$(grep -c '^read 4096/4096' "$TMP/idle.out")" = 2 ] || fail "reads around an idle pause: $(cat "$TMP/idle.out")"

echo "volume_test: ok"
