#!/usr/bin/env bash
# ferry cp survives the faults the test server injects — 500s, 503 SlowDown
# with Retry-After, resets and truncation mid-body, wrong ETags, latency —
# with the bytes intact, and the server's counters show the retries it took.
source "$(dirname "$0")/lib.sh"
start_test_s3
use_endpoint

stats() { admin GET /_admin/stats; }
# count OP FIELD: a counter from the server's stats.
count() { stats | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['ops'].get('$1',{}).get('$2',0))"; }
faults() { admin POST /_admin/faults "$1" >/dev/null; }
reset_counters() { admin POST /_admin/reset >/dev/null; }
# Faults injected under the config now in force.
injected() { stats | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['faults']['injected'])"; }

make_file "$TMP/f.bin" $((21 << 20))   # 5 parts of 5 MiB (the last 1 MiB)
MP=(--multipart-threshold 5M --part-size 5M --concurrency 3)

# Baseline: exactly 5 parts, one create, one complete, nothing retried, and
# keep-alive: the 7 requests ride on at most 3 connections (the concurrency).
reset_counters
"$FERRY" cp "${MP[@]}" "$TMP/f.bin" s3://bkt/base.bin
stats | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
ops = s["ops"]
assert ops["upload-part"]["requests"] == 5, ops["upload-part"]
assert ops["complete"]["requests"] == 1 and ops["create-multipart"]["requests"] == 1, ops
conns = s["connections"]["accepted"] - 1  # less this stats request itself
assert conns <= 3, f"7 requests used {conns} connections: no keep-alive?"
'

# case NAME FAULT_JSON: upload and download under the fault; bytes must match
# and the fault must really have fired.
case_fault() {
  local name=$1 json=$2 injected
  faults "$json"
  reset_counters
  "$FERRY" cp "${MP[@]}" "$TMP/f.bin" "s3://bkt/$name.bin" || fail "$name: upload failed"
  injected=$(injected)
  faults '{}'
  "$FERRY" cp "${MP[@]}" "s3://bkt/$name.bin" "$TMP/$name.up" || fail "$name: check download failed"
  same_bytes "$TMP/f.bin" "$TMP/$name.up"
  faults "$json"
  "$FERRY" cp "${MP[@]}" "s3://bkt/base.bin" "$TMP/$name.down" || fail "$name: download failed"
  same_bytes "$TMP/f.bin" "$TMP/$name.down"
  injected=$((injected + $(injected)))
  faults '{}'
  # (Latency is not counted as a fault.)
  [ "$injected" -gt 0 ] || [ "${3:-}" = latency ] || fail "$name: no fault was injected"
  echo "ok: $name ($injected faults injected)"
}

case_fault 500-every-3rd '{"kind":"500","every":3}'
case_fault slowdown-3 '{"kind":"503","count":3}'
case_fault reset-mid-body '{"kind":"reset","every":4}'
case_fault truncated-body '{"kind":"truncate","op":"get","every":2}'
case_fault wrong-etag-once '{"kind":"wrong-etag","op":"upload-part","count":1}'
case_fault complete-200-error-once '{"kind":"complete-200-error","op":"complete","count":1}'
case_fault latency '{"latency_ms":30,"latency_jitter_ms":20}' latency

# A part whose ETag came back wrong is uploaded again (6 part uploads, not 5).
faults '{"kind":"wrong-etag","op":"upload-part","count":1}'
reset_counters
"$FERRY" cp "${MP[@]}" "$TMP/f.bin" s3://bkt/etag.bin
faults '{}'
[ "$(count upload-part requests)" -eq 6 ] || fail "wrong ETag: expected 6 part uploads, got $(count upload-part requests)"

# An interrupted GET resumes where it stopped instead of starting over: with
# resets on every other GET of one 21 MiB object, bytes sent stay below 2x.
faults '{"kind":"reset","op":"get","every":2}'
reset_counters
"$FERRY" cp --multipart-threshold 1G s3://bkt/base.bin "$TMP/resumed.bin"
faults '{}'
same_bytes "$TMP/f.bin" "$TMP/resumed.bin"
out=$(count get bytes_out)
[ "$out" -lt $((2 * (21 << 20))) ] || fail "resumed GET re-sent too much: $out bytes"
echo "faults: ok"
