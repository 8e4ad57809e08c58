#!/usr/bin/env bash
# ferry volume serve's NBD side with clients we did not write, against
# ferry-test-s3 (2 ms per request), on a half-empty image (32 of 64 chunks
# are zeros):
# - block status: nbdinfo --map and qemu-img map of a fresh volume show the
#   snapshot's zero chunks as holes, and the object store sees no GET;
# - qemu-img convert of a fresh volume to qcow2 fetches each non-zero chunk
#   once and no zero chunk, and the copy is the image (and sparse);
# - multi-conn: nbdcopy with 4 connections writes a volume and reads it back;
# - TLS (--tls require): a plain client is refused, nbds:// with the CA is
#   served, a client trusting another CA refuses the server;
# - --nbd unix:PATH: qemu-img over nbd+unix.
source "$(dirname "$0")/lib.sh"
need qemu-img
need nbdinfo
need openssl
need nbdcopy

start_test_s3
use_endpoint
IMG="$TMP/disk.img"
CHUNK=65536
make_file "$TMP/rand" $((32 * CHUNK))
# Chunks 0-15 random, 16-47 zeros, 48-63 random.
/usr/bin/python3 - "$TMP/rand" "$IMG" $CHUNK <<'PY'
import sys
r, c = open(sys.argv[1], "rb").read(), int(sys.argv[3])
open(sys.argv[2], "wb").write(r[:16 * c] + bytes(32 * c) + r[16 * c:])
PY
"$FERRY" snapshot create "$IMG" s3://bkt/snaps/half --chunk-size 64K >/dev/null
admin POST /_admin/faults '{"latency_ms": 2}' >/dev/null
get_requests() { admin GET /_admin/stats | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['ops'].get('get', {}).get('requests', 0))"; }

# Certificates: a CA, a server certificate for 127.0.0.1, and another CA.
cert() {  # cert DIR NAME CA_DIR
  openssl req -newkey rsa:2048 -nodes -keyout "$1/$2-key.pem" -out "$1/$2.csr" -subj /CN=localhost 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\n' >"$1/$2.ext"
  openssl x509 -req -in "$1/$2.csr" -CA "$3/ca-cert.pem" -CAkey "$3/ca-key.pem" -CAcreateserial -days 2 \
    -out "$1/$2-cert.pem" -extfile "$1/$2.ext" 2>/dev/null
}
ca() { mkdir -p "$1" && openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1/ca-key.pem" -out "$1/ca-cert.pem" \
  -days 2 -subj /CN=ferry-test-ca 2>/dev/null; }
ca "$TMP/ca" && cert "$TMP/ca" server "$TMP/ca"
ca "$TMP/other"

# Background hydration held to a trickle: what moves is what clients ask.
start_volume_daemon --pool "$TMP/pool" --hydration-rate 1 --tls on \
  --tls-cert "$TMP/ca/server-cert.pem" --tls-key "$TMP/ca/server-key.pem"
vol create fresh --from s3://bkt/snaps/half >/dev/null
vol create fresh2 --from s3://bkt/snaps/half >/dev/null
sleep 0.5
before=$(get_requests)

# --- block status fetches nothing -----------------------------------------------------
nbdinfo --map --totals "nbd://127.0.0.1:$NBD/fresh" >"$TMP/totals" || fail "nbdinfo --map"
grep -q "$((32 * CHUNK)).*hole,zero" "$TMP/totals" || fail "nbdinfo --map totals: $(cat "$TMP/totals")"
qemu-img map --output=json -f raw "nbd://127.0.0.1:$NBD/fresh" >"$TMP/qmap" || fail "qemu-img map"
grep -q "\"start\": $((16 * CHUNK)), \"length\": $((32 * CHUNK)), \"depth\": 0, \"present\": true, \"zero\": true, \"data\": false" \
  "$TMP/qmap" || fail "qemu-img map: $(cat "$TMP/qmap")"
after=$(get_requests)
[ "$after" = "$before" ] || fail "block status made $((after - before)) GETs"
triggers=$(vol status fresh --json | json_field triggers)
[ "$triggers" = 0 ] || fail "block status triggered $triggers fetches"
echo "block status: nbdinfo --map and qemu-img map, 0 GETs"

# --- qemu-img convert fetches only non-zero chunks -------------------------------------
qemu-img convert -f raw -O qcow2 "nbd://127.0.0.1:$NBD/fresh2" "$TMP/copy.qcow2" || fail "qemu-img convert"
gets=$(( $(get_requests) - after ))
[ "$gets" -le 32 ] || fail "convert made $gets GETs for 32 non-zero chunks"
fetched=$(vol status fresh2 --json | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["fetched_bytes"])')
[ "$fetched" = $((32 * CHUNK)) ] || fail "fresh2 fetched $fetched bytes, want the 32 non-zero chunks"
qemu-img compare -f qcow2 -F raw "$TMP/copy.qcow2" "$IMG" >/dev/null || fail "the qcow2 copy differs from the image"
alloc=$(qemu-img map --output=json -f qcow2 "$TMP/copy.qcow2" | /usr/bin/python3 -c 'import json,sys; print(sum(e["length"] for e in json.load(sys.stdin) if e["data"]))')
[ "$alloc" = $((32 * CHUNK)) ] || fail "the qcow2 copy holds $alloc bytes of data, want the 32 non-zero chunks"
echo "qemu-img convert: $gets GETs, $fetched bytes fetched, a sparse copy"

# --- multi-conn: nbdcopy over 4 connections, writes then a read-back -------------------------
nbdinfo --json "nbd://127.0.0.1:$NBD/fresh" | grep -q '"can_multi_conn": true' || fail "multi-conn not offered"
make_file "$TMP/multi.src" $((64 * CHUNK))
vol create multi --from s3://bkt/snaps/half >/dev/null
nbdcopy --connections=4 --requests=16 "$TMP/multi.src" "nbd://127.0.0.1:$NBD/multi" || fail "nbdcopy into the volume"
nbdcopy --connections=4 "nbd://127.0.0.1:$NBD/multi" "$TMP/multi.back" || fail "nbdcopy out of the volume"
same_bytes "$TMP/multi.back" "$TMP/multi.src"
echo "multi-conn: nbdcopy with 4 connections in and out"

# --- TLS ---------------------------------------------------------------------------------
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true
start_volume_daemon --pool "$TMP/pool" --hydration-rate 1 --tls require \
  --tls-cert "$TMP/ca/server-cert.pem" --tls-key "$TMP/ca/server-key.pem"
if nbdinfo --size "nbd://127.0.0.1:$NBD/fresh" >"$TMP/plain" 2>&1; then fail "a plain client was served under --tls require"; fi
size=$(nbdinfo --size "nbds://127.0.0.1:$NBD/fresh?tls-certificates=$TMP/ca") || fail "nbds:// refused"
[ "$size" = $((64 * CHUNK)) ] || fail "nbds:// size $size"
if nbdinfo --size "nbds://127.0.0.1:$NBD/fresh?tls-certificates=$TMP/other" >"$TMP/wrongca" 2>&1; then
  fail "a client trusting another CA accepted the server"
fi
qemu-img convert --object "tls-creds-x509,id=t0,dir=$TMP/ca,endpoint=client" -O raw \
  --image-opts "driver=nbd,host=127.0.0.1,port=$NBD,export=fresh2,tls-creds=t0" "$TMP/tls.raw" ||
  fail "qemu-img over TLS"
same_bytes "$TMP/tls.raw" "$IMG"
echo "TLS: plain refused, nbds:// and qemu tls-creds-x509 served, another CA refused"
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true

# --- a Unix socket -----------------------------------------------------------------------
rm -f "$TMP/ports"
"$FERRY" volume serve --pool "$TMP/pool" --nbd "unix:$TMP/nbd.sock" --api 127.0.0.1:0 --port-file "$TMP/ports" \
  >>"$TMP/daemon.log" 2>&1 &
DAEMON_PID=$!
PIDS+=($DAEMON_PID)
for _ in $(seq 1 100); do [ -s "$TMP/ports" ] && break; sleep 0.1; done
qemu-img compare -f raw -F raw "nbd+unix:///fresh?socket=$TMP/nbd.sock" "$IMG" >/dev/null || fail "qemu-img over nbd+unix"
echo "unix socket: qemu-img compare over nbd+unix"
echo "volume_nbd_test: ok"
