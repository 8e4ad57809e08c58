#!/usr/bin/env bash
# A volume daemon SIGKILLed while 1,000 guests write: every write it had
# acknowledged is on its volume after a restart.
# - 1,000 lazy volumes of one snapshot (testing/vm/make_rootfs.sh's image,
#   64 KiB chunks, 2 ms added to each origin request) on one daemon, with
#   background hydration held off so the guests' reads are triggers.
# - ferry-nbd-replay plays the recorded boot (testing/traces/vm_boot.trace:
#   reads, then the guest's journal and file writes) as 1,000 guests, one
#   connection and volume each, think times at a fifth, and keeps the count
#   of acknowledged writes in a file.
# - Once 5,000 writes are acknowledged (of 35 per guest), the daemon is
#   SIGKILLed: guests in flight fail, and the replay's write log holds each
#   change's fate (acknowledged, or sent and unanswered).
# - A new daemon on the same pool serves the volumes again; the replay client
#   reads back every whole sector an acknowledged change covered: each holds
#   that change or a later one of its guest (write_pattern.h), none lost.
source "$(dirname "$0")/lib.sh"
need /sbin/mke2fs
ulimit -n "$(ulimit -Hn)"
REPLAY="$FERRY_BUILD/ferry-nbd-replay"
GUESTS=1000

"$FERRY_SOURCE/testing/vm/make_rootfs.sh" "$TMP/root.img" 64 2>"$TMP/rootfs.log" || { cat "$TMP/rootfs.log" >&2; fail "make_rootfs.sh"; }
start_test_s3
use_endpoint
"$FERRY" snapshot create "$TMP/root.img" s3://bkt/snaps/root --chunk-size 64K --no-predict >/dev/null
admin POST /_admin/faults '{"latency_ms": 2}' >/dev/null
start_volume_daemon --pool "$TMP/pool" --hydration-rate 1 --overcommit 100
vol create v --from s3://bkt/snaps/root --count "$GUESTS" >/dev/null

"$REPLAY" --trace "$FERRY_SOURCE/testing/traces/vm_boot.trace" --nbd "127.0.0.1:$NBD" --guests "$GUESTS" \
  --ramp-ms 2000 --time-scale 0.2 --timeout 300 --write-log "$TMP/writes.log" --progress "$TMP/progress" \
  >"$TMP/replay.json" 2>"$TMP/replay.err" &
REPLAY_PID=$!
PIDS+=($REPLAY_PID)
acked=0
deadline=$((SECONDS + 240))  # below the replay's own --timeout 300
while [ "$SECONDS" -lt "$deadline" ]; do
  read -r _ acked <"$TMP/progress" 2>/dev/null || acked=0
  [ "${acked:-0}" -ge 5000 ] && break
  kill -0 "$REPLAY_PID" 2>/dev/null || break
  sleep 0.05
done
[ "$SECONDS" -lt "$deadline" ] || fail "240 s passed and the guests had acknowledged only $acked writes"
[ "${acked:-0}" -ge 5000 ] || fail "the guests acknowledged $acked writes before the replay ended: $(cat "$TMP/replay.json" "$TMP/replay.err")"
kill -KILL "$DAEMON_PID"
rc=0; wait "$REPLAY_PID" || rc=$?
[ "$rc" = 1 ] || fail "the replay exited $rc after the daemon was killed: $(cat "$TMP/replay.json" "$TMP/replay.err")"
failed=$(json_field failed <"$TMP/replay.json")
[ "$failed" -gt 0 ] || fail "no guest saw the daemon die: $(cat "$TMP/replay.json")"
acked_total=$(grep -c '^A ' "$TMP/writes.log" || true)
unanswered=$(grep -c '^S ' "$TMP/writes.log" || true)
[ "$acked_total" -ge 5000 ] || fail "the write log holds $acked_total acknowledged changes"

start_volume_daemon --pool "$TMP/pool" --hydration-rate 1 --overcommit 100
"$REPLAY" --verify-writes "$TMP/writes.log" --nbd "127.0.0.1:$NBD" >"$TMP/verify.json" 2>&1 ||
  fail "acknowledged writes lost: $(cat "$TMP/verify.json")"
[ "$(json_field sectors_lost <"$TMP/verify.json")" = 0 ] || fail "verify: $(cat "$TMP/verify.json")"
[ "$(json_field changes_acked <"$TMP/verify.json")" = "$acked_total" ] || fail "verify counted: $(cat "$TMP/verify.json")"
echo "killed with $acked writes acknowledged; $failed of $GUESTS guests cut off; $unanswered changes unanswered"
echo "verified: $(cat "$TMP/verify.json")"
echo "volume_storm_crash_test: ok"
