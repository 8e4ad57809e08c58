#!/usr/bin/env bash
# Listings of >2,500 keys with odd names agree with aws s3api list-objects-v2,
# flat and with a delimiter. Usage: list_interop_test.sh test-s3|s3rver
source "$(dirname "$0")/lib.sh"
[ -x /usr/bin/aws ] || skip "Debian awscli not installed"
case "${1:?server kind}" in
  test-s3) start_test_s3; LONG=1 ;;
  s3rver) start_s3rver; LONG=0 ;;  # s3rver keeps keys as file names: no 1024-byte keys, no "//"
  *) fail "unknown server $1" ;;
esac
use_endpoint

# Populate with botocore (the copy inside Debian's awscli), 16 at a time.
/usr/bin/python3 - "$S3_URL" "$LONG" <<'PY'
import sys
from concurrent.futures import ThreadPoolExecutor
import awscli  # noqa: F401 - exposes the bundled botocore
import botocore.session
url, long_keys = sys.argv[1], sys.argv[2] == "1"
s3 = botocore.session.get_session().create_client("s3", endpoint_url=url, region_name="us-east-1")
odd = ["a b", "a+b", "100%", "%41", "tilde~", "ü", "日本/語", "quote'\"", "amp&lt;", "eq=?#",
       "dir//double" if long_keys else "dir/single", "trailing/", "sp  ace", "emoji😀", "-dash", "comma,"]
keys = []
for i in range(2600):
    top = ["alpha", "beta gamma", "δ", "zz+top"][i % 4]
    keys.append(f"{top}/{odd[i % len(odd)]}-{i:05d}")
keys += ["root-file", "a/b/c/d/e", "x" * 200]
if long_keys:
    keys += ["L" * 1024, "seg/" + "M" * 1000, "/leading-slash", "//two"]
    # 1,100 keys near 1024 bytes, mostly non-ASCII: a 1000-key page of them
    # is over 3 MiB of URL-encoded XML.
    keys += [f"long/{i:04d}-" + "é" * 505 for i in range(1100)]
def put(k):
    s3.put_object(Bucket="bkt", Key=k, Body=k.encode())
with ThreadPoolExecutor(16) as ex:
    list(ex.map(put, keys))
print(f"put {len(keys)} keys")
PY

# aws s3api paginates list-objects-v2 itself (1000 a page).
aws_s3 s3api list-objects-v2 --bucket bkt --output json >"$TMP/aws.json" || { tail -30 "$TMP/s3rver.log"; exit 1; }
"$FERRY" ls -r --json s3://bkt >"$TMP/ferry.json"
aws_s3 s3api list-objects-v2 --bucket bkt --delimiter / --output json >"$TMP/aws-delim.json"
"$FERRY" ls --json s3://bkt >"$TMP/ferry-delim.json"
aws_s3 s3api list-objects-v2 --bucket bkt --prefix "beta gamma/" --output json >"$TMP/aws-prefix.json"
"$FERRY" ls -r --json "s3://bkt/beta gamma/" >"$TMP/ferry-prefix.json"
/usr/bin/python3 - "$TMP" "$1" <<'PY'
import json, sys
d, server = sys.argv[1], sys.argv[2]
def aws(name):
    doc = json.load(open(f"{d}/{name}"))
    return ([(o["Key"], o["Size"], o["ETag"].strip('"')) for o in doc.get("Contents", [])],
            [p["Prefix"] for p in doc.get("CommonPrefixes", [])])
def ferry(name):
    rows = [json.loads(l) for l in open(f"{d}/{name}")]
    return ([(r["key"], r["size"], r["etag"]) for r in rows if "key" in r],
            [r["prefix"] for r in rows if "prefix" in r])
flat_a, _ = aws("aws.json")
flat_f, _ = ferry("ferry.json")
assert len(flat_a) > 2500, len(flat_a)
if server == "test-s3":
    assert sum(1 for k, _, _ in flat_a if k.startswith("long/")) == 1100
assert flat_f == flat_a, f"flat listings differ: {len(flat_f)} vs {len(flat_a)}; first diff " + \
    str(next(((x, y) for x, y in zip(flat_f, flat_a) if x != y), None))
keys = [k for k, _, _ in flat_f]
assert keys == sorted(keys, key=lambda k: k.encode("utf-8")), "not in byte order"
pa = aws("aws-prefix.json")[0]
pf = ferry("ferry-prefix.json")[0]
assert pf == pa and len(pf) == 650, (len(pf), len(pa))
if server == "s3rver":
    print("(s3rver ignores delimiter in ListObjectsV2: delimiter comparison skipped)")
else:
    oa, ca = aws("aws-delim.json")
    of, cf = ferry("ferry-delim.json")
    assert cf == ca and of == oa, (cf, ca, of, oa)
    assert set(ca) >= {"alpha/", "beta gamma/", "δ/", "zz+top/", "a/", "seg/", "/"}, ca
print(f"listings agree: {len(flat_f)} keys")
PY
echo "list interop ($1): ok"
