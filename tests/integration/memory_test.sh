#!/usr/bin/env bash
# Bodies stream: copying a 512 MiB object up, down and within the store keeps
# ferry's peak RSS far below the object's size (memory is bounded by the
# part buffers in flight, never by the object).
source "$(dirname "$0")/lib.sh"
start_test_s3
use_endpoint
head -c $((512 << 20)) /dev/zero | tr '\0' 'x' >"$TMP/big.bin"

# rss_of CMD...: runs CMD, prints its peak RSS in MiB.
rss_of() {
  /usr/bin/time -f "%M" -o "$TMP/rss" "$@" >/dev/null || fail "failed: $*"
  echo $(( $(cat "$TMP/rss") / 1024 ))
}
up=$(rss_of "$FERRY" cp "$TMP/big.bin" s3://bkt/big.bin)
down=$(rss_of "$FERRY" cp s3://bkt/big.bin "$TMP/back.bin")
same_bytes "$TMP/big.bin" "$TMP/back.bin"
single=$(rss_of "$FERRY" cp --multipart-threshold 1G s3://bkt/big.bin "$TMP/single.bin")
same_bytes "$TMP/big.bin" "$TMP/single.bin"
# The streamed store-to-store path (no server-side copy) holds at most
# part_size x concurrency: 16 MiB x 4.
copy=$(rss_of "$FERRY" cp --no-server-side-copy --concurrency 4 s3://bkt/big.bin s3://bkt/copy.bin)
"$FERRY" cp s3://bkt/copy.bin "$TMP/copy.bin"
same_bytes "$TMP/big.bin" "$TMP/copy.bin"
[ "$copy" -lt $((16 * 4 + 48)) ] || fail "streamed copy peak RSS $copy MiB"
echo "peak RSS MiB: upload $up, download $down, single GET $single, streamed copy $copy"
[ "$up" -lt 64 ] || fail "upload peak RSS $up MiB"
[ "$down" -lt 64 ] || fail "download peak RSS $down MiB"
[ "$single" -lt 64 ] || fail "single-GET download peak RSS $single MiB"
echo "memory: ok"
