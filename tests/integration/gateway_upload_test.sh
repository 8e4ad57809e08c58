#!/usr/bin/env bash
# Uploads stream through `ferry gateway` (never held whole):
#  - a 256 MiB PutObject (curl --aws-sigv4, a signed body hash) past
#    --max-body 8M arrives whole, its bytes compared, while the gateway's
#    peak RSS grows by far less than the body;
#  - curl's "Expect: 100-continue" is answered (curl waits a second without
#    one), and a refused upload (a wrong key) is answered before its body;
#  - a streamed aws-chunked upload with a wrong trailing checksum, a wrong
#    body hash, and a client that goes away mid-body: each refused with
#    S3's code (BadDigest, XAmzContentSHA256Mismatch, none: the connection
#    is gone) and nothing stored at the destination; the gateway goes on,
#    and the key can be written afterwards (its claim was released).
source "$(dirname "$0")/lib.sh"
need curl
[ -x "$AWS" ] || skip "awscli not installed"

start_migrate_pair
seed_source 5 1 1000
start_job_gateway --max-body 8M
GW_PID=${PIDS[-1]}
add_profile gw "$GW_URL" gwkey gwsecret
sig=(--aws-sigv4 "aws:amz:us-east-1:s3" --user gwkey:gwsecret)
hwm() { awk '/^VmHWM/ {print $2}' "/proc/$GW_PID/status"; }  # KiB
streamed() { curl -s "$GW_URL/_ferry/metrics" | awk '$1 == "ferry_gateway_streamed_uploads_total" {print $2}'; }

# 1. 256 MiB with its SHA-256 signed, past --max-body.
head -c $((256 << 20)) /dev/urandom >"$TMP/big"
sum=$(sha256sum "$TMP/big" | cut -d' ' -f1)
before=$(hwm)
code=$(curl -s -o "$TMP/put.out" -w '%{http_code}' "${sig[@]}" -H "x-amz-content-sha256: $sum" \
  -T "$TMP/big" "$GW_URL/bkt/up/big")
[ "$code" = 200 ] || fail "the 256 MiB PUT: $code $(cat "$TMP/put.out")"
after=$(hwm)
grew=$(((after - before) / 1024))
echo "256 MiB PUT through the gateway: peak RSS $((before / 1024)) -> $((after / 1024)) MiB"
[ "$grew" -lt 64 ] || fail "the gateway's peak RSS grew by $grew MiB for a 256 MiB upload"
awsp dst s3api get-object --bucket bkt --key up/big "$TMP/big.back" >/dev/null || fail "GET up/big at the destination"
cmp -s "$TMP/big" "$TMP/big.back" || fail "the destination holds other bytes"
[ "$(streamed)" -ge 1 ] || fail "no streamed upload counted: $(streamed)"

# 2. 100-continue: answered; a wrong key is refused before the body.
head -c $((2 << 20)) /dev/urandom >"$TMP/two"
curl -sv -o /dev/null "${sig[@]}" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -T "$TMP/two" \
  "$GW_URL/bkt/up/two" 2>"$TMP/continue.log" || fail "the 2 MiB PUT"
grep -q '^< HTTP/1.1 100 Continue' "$TMP/continue.log" || fail "no 100 Continue: $(grep '^[<>]' "$TMP/continue.log")"
curl -sv -o /dev/null --aws-sigv4 "aws:amz:us-east-1:s3" --user gwkey:wrong -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
  -T "$TMP/two" "$GW_URL/bkt/up/refused" 2>"$TMP/refused.log"
grep -q '^< HTTP/1.1 403' "$TMP/refused.log" || fail "a wrong key: $(grep '^<' "$TMP/refused.log")"
grep -q '^< HTTP/1.1 100' "$TMP/refused.log" && fail "a refused upload was told to continue"
echo "100-continue: answered for a good upload, not for a refused one"

# 3. Spoiled streams: nothing stored.
got=$(/usr/bin/python3 "$FERRY_SOURCE/tests/integration/aws_chunked_client.py" "$GW_URL" gwkey gwsecret \
  bkt up/badsum unsigned-trailer checksum $((20 << 20)))
[ "$got" = "400 BadDigest" ] || fail "a 20 MiB stream with a wrong trailing CRC32: $got"
got=$(/usr/bin/python3 "$FERRY_SOURCE/tests/integration/aws_chunked_client.py" "$GW_URL" gwkey gwsecret \
  bkt up/emptybad unsigned-trailer checksum 0)
[ "$got" = "400 BadDigest" ] || fail "an empty stream with a wrong trailing CRC32: $got"
code=$(curl -s -o "$TMP/mismatch.out" -w '%{http_code}' "${sig[@]}" -H "x-amz-content-sha256: $sum" \
  -T "$TMP/two" "$GW_URL/bkt/up/mismatch")
[ "$code" = 400 ] && grep -q XAmzContentSHA256Mismatch "$TMP/mismatch.out" ||
  fail "a body that is not the one signed: $code $(cat "$TMP/mismatch.out")"
# A body cut short: a third of it sent, then the connection closed (after
# its signature was taken: the upload had begun streaming).
n0=$(streamed)
/usr/bin/python3 - "$GW_URL" <<'PY' || fail "the client that cuts its body"
import os, sys
sys.path.insert(0, os.environ["FERRY_SOURCE"] + "/tests/integration")
from raw_put import open_put
s = open_put(sys.argv[1], "up/cut", 30 << 20)
s.sendall(bytes(10 << 20))
s.close()
PY
sleep 1
[ "$(streamed)" = $((n0 + 1)) ] || fail "the cut upload was not streaming: $n0 -> $(streamed)"
for key in up/badsum up/emptybad up/mismatch up/cut up/refused; do
  awsp dst s3api head-object --bucket bkt --key "$key" >/dev/null 2>&1 && fail "$key was stored"
done
echo "a wrong trailing checksum, a wrong body hash and a body cut short: refused, nothing stored"
curl -sf -o /dev/null "${sig[@]}" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -T "$TMP/two" "$GW_URL/bkt/up/cut" ||
  fail "up/cut could not be written after the cut upload"
awsp gw s3api get-object --bucket bkt --key up/cut "$TMP/cut.back" >/dev/null && cmp -s "$TMP/two" "$TMP/cut.back" ||
  fail "up/cut read back other bytes"

# 4. Uploads whose clients stall do not stall the gateway's other traffic:
# three uploads send 1 MiB and go quiet for 6 s while an object written
# earlier is read from the destination (through the same store client, whose
# two event loops the uploads would hold if they read bodies on them).
/usr/bin/python3 - "$GW_URL" <<'PY' || fail "reads waited behind stalled uploads"
import os, subprocess, sys, threading, time
sys.path.insert(0, os.environ["FERRY_SOURCE"] + "/tests/integration")
from raw_put import open_put
gw = sys.argv[1]
def stalled(n):
    s = open_put(gw, "up/stalled-%d" % n, 2 << 20)
    s.sendall(bytes(1 << 20))
    time.sleep(6)
    s.sendall(bytes(1 << 20))
    s.recv(4096)
    s.close()
uploads = [threading.Thread(target=stalled, args=(n,)) for n in range(3)]
for t in uploads: t.start()
time.sleep(1)
worst = 0
for i in range(1, 6):
    t0 = time.time()
    out = subprocess.run(["curl", "-sf", "-o", "/dev/null", "--aws-sigv4", "aws:amz:us-east-1:s3",
                          "--user", "gwkey:gwsecret", "%s/bkt/up/two" % gw])
    worst = max(worst, time.time() - t0)
    if out.returncode != 0: sys.exit("read %d failed" % i)
for t in uploads: t.join()
print("reads beside three stalled uploads: the slowest took %.2f s" % worst)
sys.exit(0 if worst < 2.0 else 1)
PY
echo "PASS"
