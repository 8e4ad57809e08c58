#!/usr/bin/env bash
# Chaos, volumes: three lazy volumes of one 16 MiB snapshot in a test S3
# server, written by qemu-io over NBD (64 KiB writes with FUA, a flush
# every fourth, each to a region no other write touches) while, for ROUNDS
# rounds, the daemon is SIGKILLed at a seeded moment and started again on
# the same ports, and the object store flaps (every other round its chunk
# reads answer 503 half the time). Hydration and triggers run throughout.
# Then every volume is read whole through a restarted daemon and checked
# against its image plus its writes: each acknowledged write is there
# whole; a write in flight at a kill left each of its sectors old or new;
# every other byte is the snapshot's.
source "$(dirname "$0")/../integration/lib.sh"
need qemu-io
need qemu-img

ROUNDS=${ROUNDS:-8}
RANDOM=${CHAOS_SEED:-1}
VOLS=3
WRITES=24  # per volume and round

start_test_s3
use_endpoint
IMG="$TMP/disk.img"
make_file "$IMG" $((16 << 20))
"$FERRY" snapshot create "$IMG" s3://bkt/snaps/base --chunk-size 256K >/dev/null
admin POST /_admin/faults '{"latency_ms": 5}' >/dev/null

NBD=$(free_port)
API=$(free_port)
start_daemon() {
  "$FERRY" volume serve --pool "$TMP/pool" --nbd "127.0.0.1:$NBD" --api "127.0.0.1:$API" \
    --hydration-threads 2 --hydration-rate 4M >>"$TMP/daemon.log" 2>&1 &
  DAEMON_PID=$!
  PIDS+=($DAEMON_PID)
  wait_port "$API"
  wait_port "$NBD"
}
start_daemon
vol create v --from s3://bkt/snaps/base --count $VOLS >/dev/null

# Region r of a volume (64 KiB) is written at most once: rounds take
# regions in a fixed shuffled order. issued.txt and acked.txt: "VOL REGION".
/usr/bin/python3 -c "import random; r = list(range(256)); random.Random(7).shuffle(r); print(' '.join(map(str, r)))" >"$TMP/order"
read -r -a ORDER <"$TMP/order"
t0=$(date +%s)
for round in $(seq 0 $((ROUNDS - 1))); do
  flap=""
  if [ $((round % 2)) = 1 ]; then
    admin POST /_admin/faults '{"latency_ms": 5, "rules": [{"kind": "503", "op": "get", "probability": 0.5}]}' >/dev/null
    flap=" (chunk reads 50% 503)"
  fi
  writers=()
  for v in $(seq 0 $((VOLS - 1))); do
    cmds=()
    for i in $(seq 0 $((WRITES - 1))); do
      region=${ORDER[$((round * WRITES + i))]}
      cmds+=(-c "write -f -P $((region % 250 + 1)) $((region * 65536)) 64k")
      echo "$v $region" >>"$TMP/issued.txt"
      [ $((i % 4)) = 3 ] && cmds+=(-c "flush")
    done
    qemu-io -f raw "${cmds[@]}" "nbd://127.0.0.1:$NBD/v-$v" >"$TMP/io.$round.$v" 2>&1 &
    writers+=($!)
  done
  sleep "0.$((RANDOM % 9 + 1))"
  kill -KILL "$DAEMON_PID"
  wait "$DAEMON_PID" 2>/dev/null || true
  for w in "${writers[@]}"; do wait "$w" 2>/dev/null || true; done
  for v in $(seq 0 $((VOLS - 1))); do
    sed -n 's/^wrote 65536\/65536 bytes at offset \([0-9]*\).*/\1/p' "$TMP/io.$round.$v" |
      while read -r off; do echo "$v $((off / 65536))" >>"$TMP/acked.txt"; done
  done
  echo "round $round: daemon SIGKILLed with $(grep -c wrote "$TMP"/io."$round".* | awk -F: '{s += $2} END {print s}') of $((VOLS * WRITES)) writes acknowledged$flap"
  admin POST /_admin/faults '{"latency_ms": 5}' >/dev/null
  start_daemon
done

for v in $(seq 0 $((VOLS - 1))); do
  qemu-img convert -f raw -O raw "nbd://127.0.0.1:$NBD/v-$v" "$TMP/got.$v" || fail "volume v-$v cannot be read"
done
/usr/bin/python3 - "$IMG" "$TMP" $VOLS <<'PY' || fail "a volume is not its image plus its writes"
import sys
img = open(sys.argv[1], "rb").read()
tmp, vols = sys.argv[2], int(sys.argv[3])
pairs = lambda f: {tuple(map(int, l.split())) for l in open(f"{tmp}/{f}") if l.strip()}
issued, acked = pairs("issued.txt"), pairs("acked.txt")
R = 65536
torn = 0
for v in range(vols):
    got = open(f"{tmp}/got.{v}", "rb").read()
    assert len(got) == len(img), (v, len(got))
    for r in range(len(img) // R):
        old, now = img[r * R:(r + 1) * R], got[r * R:(r + 1) * R]
        new = bytes([r % 250 + 1]) * R
        if (v, r) in acked:
            assert now == new, f"v-{v} region {r}: an acknowledged write is not there"
        elif (v, r) in issued:
            for s in range(0, R, 512):
                assert now[s:s + 512] in (old[s:s + 512], new[s:s + 512]), f"v-{v} region {r} sector {s // 512}: neither old nor new"
            torn += now != old and now != new
        else:
            assert now == old, f"v-{v} region {r}: not the snapshot's bytes"
print(f"{len(acked)} acknowledged writes there, {len(issued) - len(acked)} in flight at kills"
      f" (each old or new per sector, {torn} part-written), every other byte the snapshot's")
PY
echo "chaos/volume: OK in $(($(date +%s) - t0)) s, $ROUNDS daemon kills"
