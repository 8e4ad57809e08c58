# What the bench scripts share (sourced, after BUILD is set): a temporary
# directory that goes at exit with every background process listed in PIDS,
# the helpers they report with, and the test object store.
#
#   bench_begin NAME   sets TMP (/tmp/ferry-NAME.XXXXXX), PIDS, the exit trap;
#                      NAME prefixes log and die messages
#   bench_on_exit CMD  one more command for the exit (before processes end)
#   log MSG, die MSG, now_ms
#   start_test_s3 [FLAG...]  ferry-test-s3 on loopback, bucket `bench`, keys
#                      bench/bench-secret; sets S3 and the AWS_* variables
#                      for awscli, defines admin METHOD PATH [JSON]

bench_begin() {
  BENCH_NAME=$1
  TMP=$(mktemp -d "/tmp/ferry-$1.XXXXXX")
  PIDS=()
  BENCH_ON_EXIT=()
  BENCH_START_MS=$(now_ms)
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}
bench_on_exit() { BENCH_ON_EXIT+=("$1"); }
bench_cleanup() {
  local p c
  for c in "${BENCH_ON_EXIT[@]:-}"; do [ -n "$c" ] && eval "$c" 2>/dev/null || true; done
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
log() { echo "$BENCH_NAME [$(( ($(now_ms) - BENCH_START_MS) / 1000 )) s] $*" >&2; }
die() { echo "$BENCH_NAME: $*" >&2; exit 1; }

start_test_s3() {
  "$BUILD/ferry-test-s3" --listen 127.0.0.1:0 --port-file "$TMP/s3.port" --bucket bench \
    --access-key bench --secret-key bench-secret "$@" >"$TMP/s3.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 100); do [ -s "$TMP/s3.port" ] && break; sleep 0.1; done
  [ -s "$TMP/s3.port" ] || { cat "$TMP/s3.log" >&2; die "ferry-test-s3 did not start"; }
  S3="http://127.0.0.1:$(cat "$TMP/s3.port")"
  export AWS_ENDPOINT_URL="$S3" AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret AWS_REGION=us-east-1
  export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
}
admin() { curl -sf -X "$1" ${3:+-H 'Content-Type: application/json' --data "$3"} "$S3$2"; }
