#!/usr/bin/env bash
# Big objects through ferry cache serve (over --max-object, 64 MiB by
# default): a 200 MiB text file and a 200 MiB binary one, served by Python's
# http.server and fetched with curl. Each is cached as it streams: the text
# as seekable zstd frames (1 MiB of input each), the binary as it came. Then
# a 1 MiB range in the middle of each (curl -r) is the origin's bytes while
# the decode counter grows by at most two frames (the text) or not at all
# (the binary, a read); the disk the text takes is about its `zstd -3`
# size, and `zstd -d` turns the cache's file back into the original.
source "$(dirname "$0")/lib.sh"
need curl
need zstd
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"

MIB=1048576
WWW="$TMP/www"
mkdir -p "$WWW"
# 16 MiB of varied text (a vocabulary of made-up words in random order),
# then 200 MiB of it, each copy numbered: compressible like prose, and each
# 1 MiB frame about as compressible as the next.
/usr/bin/python3 - "$WWW/big.txt" <<'PY'
import random, sys
r = random.Random(19)
vocab = ["".join(r.choice("etaoinshrdlucmfwyp") for _ in range(r.randint(2, 9))) for _ in range(5000)]
words = r.choices(vocab, k=2_600_000)
block = "\n".join(" ".join(words[i:i + 12]) for i in range(0, len(words), 12)).encode()[:16 << 20]
with open(sys.argv[1], "wb") as f:
    n = 0
    while n < 200 << 20:
        piece = (b"copy %d\n" % n) + block
        piece = piece[:(200 << 20) - n]
        f.write(piece)
        n += len(piece)
PY
head -c $((200 * MIB)) /dev/urandom >"$WWW/big.bin"
touch -d '2 days ago' "$WWW/big.txt" "$WWW/big.bin"  # fresh by heuristic for hours
start_static_origin "$WWW"
start_cache_named big --origin "$ORIGIN" --dir "$TMP/cache" --max-size 2G

wait_big() {  # wait_big N: until N big objects are on disk (their writer runs after the answer)
  for _ in $(seq 1 300); do [ "$(metric "$C" ferry_cache_disk_big_entries)" = "$1" ] && return 0; sleep 0.1; done
  fail "$1 big object(s) not on disk: $(metric "$C" ferry_cache_disk_big_entries)"
}
# range_check FILE FIRST: a 1 MiB range of $C/FILE is the file's bytes.
range_check() {
  curl -sf -D "$TMP/hr" -r "$2-$(($2 + MIB - 1))" "$C/$1" -o "$TMP/range"
  [ "$(header "$TMP/hr" x-cache)" = HIT ] || fail "$1 range: $(header "$TMP/hr" x-cache)"
  [ "$(header "$TMP/hr" content-range)" = "bytes $2-$(($2 + MIB - 1))/$((200 * MIB))" ] || fail "$1: Content-Range $(header "$TMP/hr" content-range)"
  dd if="$WWW/$1" iflag=skip_bytes,count_bytes skip="$2" count=$MIB bs=$MIB status=none | cmp -s - "$TMP/range" \
    || fail "$1: the range is not the origin's bytes"
}

# --- the text: cached as frames as it streams ------------------------------------------
curl -sf -D "$TMP/h1" "$C/big.txt" | cmp -s - "$WWW/big.txt" || fail "big.txt through the cache differs"
[ "$(header "$TMP/h1" x-cache)" = MISS ] || fail "big.txt: $(header "$TMP/h1" x-cache)"
wait_big 1
decoded0=$(metric "$C" ferry_cache_decode_bytes_total)
first=$((100 * MIB + 12345))  # in the middle, across a frame edge
range_check big.txt "$first"
decoded=$(( $(metric "$C" ferry_cache_decode_bytes_total) - decoded0 ))
[ "$decoded" -le $((2 * MIB)) ] || fail "a 1 MiB range decoded $decoded bytes (at most two frames)"
# The disk it takes: about what zstd -3 makes of it (ours is 200 frames of 1 MiB).
allocated=$(metric "$C" ferry_cache_disk_allocated_bytes)
zstd3=$(zstd -3 -c "$WWW/big.txt" | wc -c)
ratio=$(awk -v a="$allocated" -v z="$zstd3" 'BEGIN { printf "%.3f", a / z }')
awk -v r="$ratio" 'BEGIN { exit !(r <= 1.15) }' || fail "200 MiB of text takes $allocated bytes, ${ratio}x zstd -3's $zstd3"
file=$(find "$TMP/cache/big" -type f)
zstd -dcq "$file" | cmp -s - "$WWW/big.txt" || fail "zstd -d of the cached file is not the original"
curl -sf -H 'Accept-Encoding: zstd' -D "$TMP/hz" "$C/big.txt" | zstd -dcq | cmp -s - "$WWW/big.txt" \
  || fail "a zstd client: the stored frames do not decode to the original"
[ "$(header "$TMP/hz" content-encoding)" = zstd ] || fail "no Content-Encoding: zstd for a zstd client"
echo "text: 200 MiB on disk in $allocated bytes (zstd -3: $zstd3, ${ratio}x); a 1 MiB range decoded $decoded bytes"

# --- the binary: stored as it came; a range is a read -------------------------------------
curl -sf "$C/big.bin" | cmp -s - "$WWW/big.bin" || fail "big.bin through the cache differs"
wait_big 2
decoded0=$(metric "$C" ferry_cache_decode_bytes_total)
read0=$(metric "$C" ferry_cache_big_read_bytes_total)
range_check big.bin $((150 * MIB - 777))
[ "$(metric "$C" ferry_cache_decode_bytes_total)" = "$decoded0" ] || fail "a range of an identity object decoded bytes"
read=$(( $(metric "$C" ferry_cache_big_read_bytes_total) - read0 ))
[ "$read" -le $((2 * MIB)) ] || fail "a 1 MiB range of the binary read $read bytes (at most two blocks)"
echo "binary: a 1 MiB range read $read bytes, decoded none"

# --- both after a restart: hits, from disk -------------------------------------------------
kill "$CACHE_PID"; wait "$CACHE_PID" 2>/dev/null || true
start_cache_named big2 --origin "$ORIGIN" --dir "$TMP/cache" --max-size 2G
[ "$(metric "$C" ferry_cache_disk_big_entries)" = 2 ] || fail "big objects after a restart"
range_check big.txt $((199 * MIB))  # the last frame
range_check big.bin 0
echo "cache_big_object_test: ok"
