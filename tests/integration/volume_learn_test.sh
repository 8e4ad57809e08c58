#!/usr/bin/env bash
# ferry volume serve --learn-orders: each new clone's first touches are
# merged into its snapshot's prefetch order once they settle, and the next
# clone (on a new daemon) prefetches them before its client asks. Driven by
# qemu-io over NBD against ferry-test-s3.
# - clone a reads chunks 40, 5, 22: the order becomes [40, 5, 22];
# - clone b, on a fresh daemon, has them before it reads them (no trigger),
#   reads 40, 5, 60: the order merges both, in the order of first need;
# - `snapshot prefetch --from-volume` replaces a learned order and learning
#   starts again from it; the manifest stays sound throughout;
# - bad flags are one line naming the flag.
source "$(dirname "$0")/lib.sh"
need qemu-io

start_test_s3
use_endpoint
CHUNK=65536
make_file "$TMP/disk.img" $((64 * CHUNK))
"$FERRY" snapshot create "$TMP/disk.img" s3://bkt/snaps/img --chunk-size 64K >/dev/null
[ "$("$FERRY" snapshot info s3://bkt/snaps/img --json | json_field prefetch)" = 0 ] || fail "random bytes got an order"

for bad in "--learn-settle 0" "--learn-settle soon" "--learn-bytes lots"; do
  # shellcheck disable=SC2086
  if "$FERRY" volume serve --pool "$TMP/bad" --nbd 127.0.0.1:0 --api 127.0.0.1:0 --learn-orders $bad >"$TMP/bad.out" 2>&1; then
    fail "volume serve $bad started"
  fi
  [ "$(wc -l <"$TMP/bad.out")" = 1 ] && grep -q -- "${bad%% *}" "$TMP/bad.out" || fail "volume serve $bad: $(cat "$TMP/bad.out")"
done

manifest() { aws_s3 s3 cp s3://bkt/snaps/snapshots/img - | /usr/bin/python3 -c "import json,sys; m = json.load(sys.stdin); print($1)"; }
learned() { "$FERRY" snapshot info s3://bkt/snaps/img --json | json_field learned_clones; }
wait_learned() {
  for _ in $(seq 1 100); do [ "$(learned)" = "$1" ] && return 0; sleep 0.1; done
  fail "learned from $(learned) clones, want $1: $(tail -3 "$TMP/daemon.log")"
}
reads() {  # reads VOLUME CHUNK...: one 4 KiB read in each chunk, in order
  local v=$1 args=() c
  shift
  for c in "$@"; do args+=(-c "read $((c * CHUNK + 4096)) 4096"); done
  qemu-io -r -f raw "${args[@]}" "nbd://127.0.0.1:$NBD/$v" | grep -c '^read ' | grep -qx "$#" || fail "qemu-io reads of $v"
}
# Background hydration held off (1 byte/s): what a clone has, it fetched for its client or its order.
start_daemon() { start_volume_daemon --pool "$TMP/pool" --learn-orders --learn-settle 1s --hydration-rate 1 "$@"; }

start_daemon
vol create a --from s3://bkt/snaps/img >/dev/null
reads a 40 5 22
wait_learned 1
[ "$(manifest "m['prefetch']")" = "[40, 5, 22]" ] || fail "order $(manifest "m['prefetch']")"
grep -q "learned the first touches of a" "$TMP/daemon.log" || fail "no log line for the merge"
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true

# A fresh daemon: clone b prefetches the learned order before its client reads.
start_daemon
vol create b --from s3://bkt/snaps/img >/dev/null
for _ in $(seq 1 100); do [ "$(vol status b --json | json_field hydrated)" -ge 3 ] && break; sleep 0.1; done
[ "$(vol status b --json | json_field hinted)" = 3 ] || fail "clone b prefetched $(vol status b --json | json_field hinted) chunks, want 3"
reads b 40 5
[ "$(vol status b --json | json_field triggers)" = 0 ] || fail "clone b waited on a fetch for a learned chunk"
reads b 60
wait_learned 2
# Mean ranks: 40 at 0, 5 at 1, then 22 and 60 at 2 each (by index).
[ "$(manifest "m['prefetch']")" = "[40, 5, 22, 60]" ] || fail "merged order $(manifest "m['prefetch']")"
[ "$(manifest "m['learned']['seen']")" = "[2, 2, 1, 1]" ] || fail "seen $(manifest "m['learned']")"
# Clone a, re-opened by this daemon, is not learned from again.
reads a 7
sleep 2
[ "$(learned)" = 2 ] || fail "a clone re-opened at start was learned from"

# A recorded order replaces the learned one; learning starts again from it.
"$FERRY" snapshot prefetch s3://bkt/snaps/img --from-volume b --api "127.0.0.1:$API" >/dev/null
[ "$(learned)" = 0 ] || fail "snapshot prefetch kept the learned counts"
[ "$(manifest "m['prefetch']")" = "[40, 5, 60]" ] || fail "recorded order $(manifest "m['prefetch']")"
vol create c --from s3://bkt/snaps/img >/dev/null
reads c 60 33
wait_learned 1
# The recorded order counts once, c once. Mean ranks: 40 at 0; 5 (1), 60
# (2 and 0) and 33 (1) at 1, by index.
[ "$(manifest "m['prefetch']")" = "[40, 5, 33, 60]" ] || fail "order after c $(manifest "m['prefetch']")"
"$FERRY" snapshot info s3://bkt/snaps/img >/dev/null || fail "the learned manifest does not decode"
echo "orders learned from 3 clones; the second clone waited on no learned chunk"
