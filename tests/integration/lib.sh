# Sourced by the integration tests: starts peers on loopback, stops them on
# exit, and gives small assertion helpers. Each test script is one scenario;
# exit 77 means "skipped" (a peer is missing), as in automake and nbdkit;
# with FERRY_REQUIRE_PEERS=1 (CI) a missing peer fails the test instead.
set -euo pipefail

: "${FERRY_BUILD:?set FERRY_BUILD to the build directory}"
: "${FERRY_SOURCE:?set FERRY_SOURCE to the source directory}"
FERRY="$FERRY_BUILD/ferry"
TEST_S3="$FERRY_BUILD/ferry-test-s3"
S3RVER="$FERRY_SOURCE/testing/peers/node_modules/.bin/s3rver"
TMP=$(mktemp -d /tmp/ferry-it.XXXXXX)
PIDS=()

cleanup() {
  local p
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
  if [ -n "${KEEP_TMP:-}" ]; then echo "kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# A missing peer skips the test (77), but not where FERRY_REQUIRE_PEERS=1
# (CI): there a test that cannot run is a failure.
skip() {
  if [ "${FERRY_REQUIRE_PEERS:-0}" = 1 ]; then echo "FAIL: cannot run: $* (FERRY_REQUIRE_PEERS=1)" >&2; exit 1; fi
  echo "SKIP: $*"
  exit 77
}
need() { command -v "$1" >/dev/null 2>&1 || skip "$1 not installed"; }

# Keep the user's AWS files and variables out of every test.
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_SESSION_TOKEN AWS_DEFAULT_PROFILE || true
export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 AWS_PAGER=""
export TEST_KEY=ferrytest TEST_SECRET=ferrytestsecret
# ...and the user's Azure and GCS ones.
unset AZURE_STORAGE_CONNECTION_STRING AZURE_STORAGE_ACCOUNT AZURE_STORAGE_KEY \
  AZURE_STORAGE_SAS_TOKEN GS_ACCESS_KEY_ID GS_SECRET_ACCESS_KEY GS_ENDPOINT_URL || true

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

wait_port() {  # wait_port PORT: until something listens there (10 s at most)
  local i
  for i in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  fail "nothing listening on port $1"
}

# start_test_s3 [extra flags...]: starts ferry's test S3 server with bucket
# "bkt" and sets S3_URL / S3_PORT.
start_test_s3() {
  local pf="$TMP/test-s3.port.$RANDOM"
  "$TEST_S3" --listen "${TEST_S3_LISTEN:-127.0.0.1:0}" --port-file "$pf" --bucket bkt \
      --access-key "$TEST_KEY" --secret-key "$TEST_SECRET" "$@" >"${TEST_S3_LOG:-$TMP/test-s3.log}" 2>&1 &
  PIDS+=($!)
  local i
  for i in $(seq 1 100); do [ -s "$pf" ] && break; sleep 0.1; done
  [ -s "$pf" ] || { cat "${TEST_S3_LOG:-$TMP/test-s3.log}" >&2; fail "test S3 server did not start"; }
  S3_PORT=$(cat "$pf")
  S3_URL="http://127.0.0.1:$S3_PORT"
  wait_port "$S3_PORT"
}

# start_s3rver: starts s3rver (npm) with bucket "bkt"; sets S3_URL / S3_PORT.
# s3rver accepts any signature made with its fixed key pair S3RVER/S3RVER.
start_s3rver() {
  [ -x "$S3RVER" ] || skip "s3rver not installed (make setup)"
  need node
  S3_PORT=$(free_port)
  local dir="$TMP/s3rver-$S3_PORT"
  mkdir -p "$dir"
  # s3rver 3.7 makes continuation tokens with DES, which Node 20's OpenSSL 3
  # only has in its legacy provider.
  NODE_OPTIONS=--openssl-legacy-provider "$S3RVER" -d "$dir" -a 127.0.0.1 -p "$S3_PORT" --configure-bucket bkt \
      >"$dir.log" 2>&1 &
  PIDS+=($!)
  wait_port "$S3_PORT"
  S3_URL="http://127.0.0.1:$S3_PORT"
  TEST_KEY=S3RVER TEST_SECRET=S3RVER
}

# start_azurite: Azurite's blob service (npm) on a loopback port, in memory,
# telemetry off; sets AZ_URL (path-style, with the account) and
# AZURE_STORAGE_CONNECTION_STRING for its well-known account. az_blob ARGS:
# the independent client in azure_blob.py against it.
AZURITE="$FERRY_SOURCE/testing/peers/node_modules/.bin/azurite-blob"
AZ_DEV_KEY="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
start_azurite() {
  [ -x "$AZURITE" ] || skip "azurite not installed (make setup)"
  need node
  local port
  port=$(free_port)
  "$AZURITE" --silent --inMemoryPersistence --disableTelemetry --blobHost 127.0.0.1 \
      --blobPort "$port" >"$TMP/azurite-$port.log" 2>&1 &
  PIDS+=($!)
  wait_port "$port"
  AZ_URL="http://127.0.0.1:$port/devstoreaccount1"
  export AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$AZ_DEV_KEY;BlobEndpoint=$AZ_URL"
  unset AZURE_STORAGE_ACCOUNT AZURE_STORAGE_KEY AZURE_STORAGE_SAS_TOKEN || true
}
az_blob() { /usr/bin/python3 "$FERRY_SOURCE/tests/integration/azure_blob.py" "$AZ_URL" "$@"; }

# use_endpoint: points ferry and aws at $S3_URL with the test credentials.
use_endpoint() {
  export AWS_ACCESS_KEY_ID="$TEST_KEY" AWS_SECRET_ACCESS_KEY="$TEST_SECRET"
  export AWS_ENDPOINT_URL="$S3_URL"
}

AWS=/usr/bin/aws  # Debian's awscli, not one a user put earlier on PATH
aws_s3() { "$AWS" --endpoint-url "$S3_URL" "$@"; }

# admin GET|POST PATH [JSON]: the test server's admin API.
admin() {
  if [ $# -ge 3 ]; then
    curl -sf -X "$1" -H 'Content-Type: application/json' --data "$3" "$S3_URL$2"
  else
    curl -sf -X "$1" "$S3_URL$2"
  fi
}

# start_volume_daemon --pool DIR... [flags]: starts `ferry volume serve` on
# loopback ports; sets NBD, API and DAEMON_PID. vol ARGS...: the CLI
# against it.
start_volume_daemon() {
  rm -f "$TMP/ports"
  "$FERRY" volume serve --nbd 127.0.0.1:0 --api 127.0.0.1:0 --port-file "$TMP/ports" "$@" >>"$TMP/daemon.log" 2>&1 &
  DAEMON_PID=$!
  PIDS+=($DAEMON_PID)
  for _ in $(seq 1 100); do [ -s "$TMP/ports" ] && break; sleep 0.1; done
  [ -s "$TMP/ports" ] || { cat "$TMP/daemon.log" >&2; fail "volume daemon did not start"; }
  read -r NBD API <"$TMP/ports"
}
vol() { "$FERRY" volume "$@" --api "127.0.0.1:$API"; }

make_file() {  # make_file PATH SIZE_BYTES: deterministic pseudo-random bytes
  /usr/bin/python3 - "$1" "$2" <<'PY'
import random, sys
path, size = sys.argv[1], int(sys.argv[2])
r = random.Random(size)
with open(path, "wb") as f:
    left = size
    while left:
        n = min(left, 1 << 20)
        f.write(r.randbytes(n))
        left -= n
PY
}

same_bytes() { cmp -s "$1" "$2" || fail "$1 and $2 differ"; }

# add_profile NAME URL KEY SECRET: an AWS profile in this test's own config
# files, so one ferry command can talk to two endpoints (--src-profile /
# --dst-profile). AWS_ENDPOINT_URL would override every profile: unset it.
declare -A PROFILE_URL
add_profile() {
  PROFILE_URL[$1]=$2
  mkdir -p "$TMP/aws"
  export AWS_CONFIG_FILE="$TMP/aws/config" AWS_SHARED_CREDENTIALS_FILE="$TMP/aws/credentials"
  printf '[profile %s]\nendpoint_url = %s\nregion = us-east-1\n' "$1" "$2" >>"$AWS_CONFIG_FILE"
  printf '[%s]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$1" "$3" "$4" >>"$AWS_SHARED_CREDENTIALS_FILE"
  unset AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
}

# awsp PROFILE ARGS...: Debian's awscli (2.9) against a profile's endpoint;
# it predates endpoint_url in profiles, so the URL is passed explicitly.
awsp() { local p=$1; shift; "$AWS" --profile "$p" --endpoint-url "${PROFILE_URL[$p]}" "$@"; }

# use_state: sets STATE, where the migrate tests keep job state. A
# directory (SQLite) by default; with FERRY_TEST_STATE=pg a fresh database
# on the PostgreSQL cluster the CTest fixture started (FERRY_PG_CONNINFO_FILE),
# so the same scenarios check the same semantics on both stores. Skips
# when there is no cluster.
use_state() {
  if [ "${FERRY_TEST_STATE:-}" != pg ]; then STATE="$TMP/state"; return; fi
  need psql
  [ -s "${FERRY_PG_CONNINFO_FILE:-}" ] || skip "no PostgreSQL test cluster (FERRY_PG_CONNINFO_FILE)"
  local base db
  base=$(cat "$FERRY_PG_CONNINFO_FILE")
  db="it_$$_${RANDOM}"
  psql "$base" -qc "CREATE DATABASE $db" >/dev/null || fail "cannot create database $db"
  PG_STATE="$base dbname=$db"
  STATE="postgres:$PG_STATE"
}

# start_own_pg: a PostgreSQL cluster of this test's own under $TMP/pg (which
# it may stop and restart: "$CLUSTER" stop|restart "$TMP/pg"), stopped at
# exit; two test servers (profiles src and dst) and M=(ferry migrate) with
# its state there. Skips when PostgreSQL is not installed.
start_own_pg() {
  CLUSTER="$FERRY_SOURCE/testing/pg/pg_cluster.sh"
  chmod 711 "$TMP"  # the server runs as `nobody` under root
  mkdir -p "$TMP/pg"
  local rc=0
  CONNINFO=$("$CLUSTER" start "$TMP/pg") || rc=$?
  [ $rc = 77 ] && skip "PostgreSQL is not installed"
  [ $rc = 0 ] || fail "the PostgreSQL cluster did not start"
  trap '"$CLUSTER" stop "$TMP/pg" >/dev/null 2>&1 || true; cleanup' EXIT
  start_test_s3; A_URL=$S3_URL
  start_test_s3; B_URL=$S3_URL
  add_profile src "$A_URL" "$TEST_KEY" "$TEST_SECRET"
  add_profile dst "$B_URL" "$TEST_KEY" "$TEST_SECRET"
  PG_STATE="$CONNINFO"
  STATE="postgres:$CONNINFO"
  M=("$FERRY" migrate --state "$STATE")
}

# state_sql SQL: runs a query on the state store (the SQLite file or the
# PostgreSQL database) and prints the rows, '|'-separated.
state_sql() {
  if [ -n "${PG_STATE:-}" ]; then
    psql "$PG_STATE" -tAqc "$1"
  else
    sqlite3 "$STATE/migrate.db" "$1"
  fi
}

# make_objects DIR N DIRS MAX_BYTES: N files of 0..MAX_BYTES random bytes
# (seeded by N) spread over DIRS directories under DIR.
make_objects() {
  /usr/bin/python3 - "$@" <<'PY'
import os, random, sys
root, n, dirs, most = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
r = random.Random(n)
for i in range(n):
    d = os.path.join(root, f"d{i % dirs:02d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"o{i:05d}"), "wb") as f:
        f.write(r.randbytes(r.randint(0, most)))
PY
}

# seed_source N DIRS MAX_BYTES: make_objects in $TMP/src, copied by
# "${M[@]}" into bucket bkt of profile src.
seed_source() {
  make_objects "$TMP/src" "$@"
  "${M[@]}" "$TMP/src" s3://bkt/ --dst-profile src --json -q >"$TMP/seed.json" || fail "seeding failed"
  [ "$(json_field listed <"$TMP/seed.json")" = "$1" ] ||
    fail "seed listed $(json_field listed <"$TMP/seed.json")"
}

# bucket_listing PROFILE: "key size etag" for every object of bucket bkt,
# sorted by key.
bucket_listing() {
  awsp "$1" s3api list-objects-v2 --bucket bkt --output json |
    /usr/bin/python3 -c "import json,sys; [print(o['Key'], o['Size'], o['ETag']) for o in sorted(json.load(sys.stdin).get('Contents', []), key=lambda o: o['Key'])]"
}

# start_migrate_pair: two test servers, A (profile "src", A_URL) and B
# (profile "dst", B_URL), and M=(ferry migrate --state $STATE).
start_migrate_pair() {
  start_test_s3; A_URL=$S3_URL
  start_test_s3; B_URL=$S3_URL
  add_profile src "$A_URL" "$TEST_KEY" "$TEST_SECRET"
  add_profile dst "$B_URL" "$TEST_KEY" "$TEST_SECRET"
  use_state
  M=("$FERRY" migrate --state "$STATE")
}

# need_js_sdk SCRIPT.mjs...: node and the AWS SDK for JavaScript
# (testing/peers, scripts/setup.sh test); the scripts from
# tests/integration copied to $TMP/sdk beside a link to the peers'
# node_modules (ES modules resolve packages from the script's own folder).
need_js_sdk() {
  need node
  local peers=$FERRY_SOURCE/testing/peers s
  [ -d "$peers/node_modules/@aws-sdk/client-s3" ] && [ -d "$peers/node_modules/@aws-sdk/s3-request-presigner" ] ||
    skip "the AWS SDK for JavaScript is not installed (scripts/setup.sh test)"
  mkdir -p "$TMP/sdk"
  [ -e "$TMP/sdk/node_modules" ] || ln -s "$peers/node_modules" "$TMP/sdk/node_modules"
  for s in "$@"; do cp "$FERRY_SOURCE/tests/integration/$s" "$TMP/sdk/"; done
}

# start_job_gateway [FLAG...]: a detached migration of bucket bkt between
# the pair (start_migrate_pair first) and `ferry gateway` serving it, with
# the keys gwkey/gwsecret and FLAGs; sets JOB and GW_URL.
start_job_gateway() {
  "${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --detach --json >"$TMP/job.json" ||
    fail "--detach failed"
  JOB=$(json_field job <"$TMP/job.json")
  printf 'gwkey gwsecret\n' >"$TMP/gw.keys"
  "$FERRY" gateway --job "$JOB" --state "$STATE" --listen 127.0.0.1:0 --port-file "$TMP/gw.port" \
    --credentials "$TMP/gw.keys" "$@" >"$TMP/gw.log" 2>&1 &
  PIDS+=($!)
  local i
  for i in $(seq 1 100); do [ -s "$TMP/gw.port" ] && break; sleep 0.1; done
  [ -s "$TMP/gw.port" ] || { cat "$TMP/gw.log" >&2; fail "the gateway did not start"; }
  GW_URL="http://127.0.0.1:$(cat "$TMP/gw.port")"
}

# self_signed_cert NAME: $TMP/NAME.pem and $TMP/NAME.key, an EC P-256
# certificate for 127.0.0.1 and localhost (the server's and the client's CA).
self_signed_cert() {
  need openssl
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
    -keyout "$TMP/$1.key" -out "$TMP/$1.pem" 2>/dev/null || fail "openssl could not make a certificate"
}

# stat_of URL OP FIELD: one counter of a test server's /_admin/stats.
stat_of() {
  curl -sf "$1/_admin/stats" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['ops'].get('$2',{}).get('$3',0))"
}

# json_field FIELD: reads one JSON object on stdin and prints FIELD.
json_field() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1'])"; }

# tree_digest DIR: one line per file, "relative-path md5", sorted.
tree_digest() { (cd "$1" && find . -type f ! -name '.*' -printf '%P\0' | sort -z | xargs -0 -r md5sum | awk '{print $2, $1}'); }

# make_prefix_tree DIR N: N small files under the seven top-level prefixes
# of the listing scenario (issue 16): names with spaces, non-ASCII, '+',
# '%', '~', '=' and '&', and prefixes whose keys all sit several levels
# down (which s3rver's delimiter listing forgets).
make_prefix_tree() {
  /usr/bin/python3 - "$@" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
# A local directory writes the key "p+l%us/" as "p+l%25us" (store/local/key_path.h).
prefixes = ["plain/", "dir a/sp ace/", "ü/ñ/", "p+l%25us/", "deep/a/b/c/d/", "tilde~/", "x=y&z/"]
r = random.Random(n)
for i in range(n):
    d = os.path.join(root, prefixes[i % len(prefixes)])
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"o{i:05d}.txt"), "wb") as f:
        f.write(r.randbytes(r.randint(1, 600)))
PY
}
