#!/usr/bin/env bash
# Two ferry cache tiers (a lower one with --parent, an upper one facing the
# origin) and the cache's operator surface, with curl as the client:
# - the lower tier fills from the upper tier; each object leaves the origin
#   once; the bytes between the tiers are the zstd bytes (counted by the
#   lower tier's metrics), the lower tier compresses nothing again, and no
#   client ever sees the tier marker;
# - concurrent misses for one key are one origin fetch (coalesced);
# - Range requests on a compressed entry (curl -r) give the original's bytes;
# - PURGE from an allowed address empties an entry; from another it is 403;
# - /_ferry/metrics is Prometheus text with the counters moving as they should;
# - a lower tier with three parents (--parent three times): each object is
#   cached once in the parent tier (rendezvous hashing on the key); one
#   parent killed, a fresh lower tier finds the others' keys where they were
#   and sends the dead one's on to their next parent (counted failovers),
#   which fetches just those from the origin.
source "$(dirname "$0")/lib.sh"
need curl
need zstd
curl -V | grep -q zstd || skip "curl without zstd"
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"
start_origin

start_cache_named upper --origin "$ORIGIN" --dir "$TMP/upper"
UPPER=$C
start_cache_named lower --origin "$ORIGIN" --parent "$UPPER" --dir "$TMP/lower"
LOWER=$C

# --- a fill through two tiers ------------------------------------------------------
logical=0
for n in 1 2 3 4 5; do
  curl -sf "$ORIGIN/text/t$n" -o "$TMP/t$n.orig"
  logical=$((logical + $(stat -c %s "$TMP/t$n.orig")))
  curl -sf -D "$TMP/h$n" "$LOWER/text/t$n" -o "$TMP/t$n.lower"
  cmp -s "$TMP/t$n.orig" "$TMP/t$n.lower" || fail "t$n: bytes through two tiers differ"
  [ "$(header "$TMP/h$n" x-cache)" = MISS ] || fail "t$n: $(header "$TMP/h$n" x-cache)"
  [ -z "$(header "$TMP/h$n" x-ferry-stored)" ] || fail "t$n: the tier marker reached a client"
  [ -z "$(header "$TMP/h$n" content-encoding)" ] || fail "t$n: identity client got an encoding"
  [ "$(origin_count /text/t$n)" = 2 ] || fail "t$n: origin saw $(origin_count /text/t$n) (1 direct + 1 fill)"
done
between=$(metric "$LOWER" ferry_cache_upstream_bytes_total)
echo "logical $logical bytes, between tiers $between bytes"
[ "$between" -gt 0 ] && [ "$between" -lt $((logical / 3)) ] || fail "tier-to-tier bytes $between of $logical"
[ "$(metric "$LOWER" ferry_cache_encode_bytes_total)" = 0 ] || fail "the lower tier compressed again"
[ "$(metric "$UPPER" ferry_cache_encode_bytes_total)" = "$logical" ] || fail "upper tier encode count"
# The lower tier's entries are the zstd bytes; zstd clients get them as they are.
curl -sf -D "$TMP/hz" -H 'Accept-Encoding: zstd' "$LOWER/text/t1" -o "$TMP/t1.zst"
[ "$(header "$TMP/hz" x-cache)" = HIT ] && [ "$(header "$TMP/hz" content-encoding)" = zstd ] || fail "zstd from lower"
zstd -dcq "$TMP/t1.zst" | cmp -s - "$TMP/t1.orig" || fail "zstd bytes from the lower tier"
# Media passes the tiers as received.
curl -sf "$LOWER/img.png" -o "$TMP/img.lower"
curl -sf "$ORIGIN/img.png" | cmp -s - "$TMP/img.lower" || fail "png through two tiers"

# --- concurrent misses are one origin fetch -----------------------------------------
clients=()
for i in $(seq 1 8); do curl -sf "$UPPER/slow/s" -o "$TMP/slow.$i" & clients+=($!); done
for p in "${clients[@]}"; do wait "$p" || fail "a concurrent client failed"; done
for i in $(seq 1 8); do curl -sf "$ORIGIN/slow/s" | cmp -s - "$TMP/slow.$i" || fail "coalesced body $i"; done
[ "$(origin_count /slow/s)" = 9 ] || fail "8 concurrent misses made $(( $(origin_count /slow/s) - 8 )) origin fetches"
[ "$(metric "$UPPER" ferry_cache_coalesced_total)" -ge 1 ] || fail "no coalesced count"

# --- Range on a compressed entry -----------------------------------------------------
curl -sf -r 1000-1999 -D "$TMP/hr" "$LOWER/text/t2" -o "$TMP/r"
[ "$(header "$TMP/hr" content-range)" = "bytes 1000-1999/$(stat -c %s "$TMP/t2.orig")" ] || fail "Content-Range"
dd if="$TMP/t2.orig" bs=1 skip=1000 count=1000 status=none | cmp -s - "$TMP/r" || fail "range bytes"
code=$(curl -s -o /dev/null -w '%{http_code}' -r 99999999- "$LOWER/text/t2")
[ "$code" = 416 ] || fail "range past the end: $code"

# --- PURGE -------------------------------------------------------------------------
code=$(curl -s -o /dev/null -w '%{http_code}' -X PURGE "$LOWER/text/t3")
[ "$code" = 200 ] || fail "PURGE: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X PURGE "$LOWER/text/t3")
[ "$code" = 404 ] || fail "PURGE of nothing: $code"
curl -sf -D "$TMP/hp" "$LOWER/text/t3" -o /dev/null
[ "$(header "$TMP/hp" x-cache)" = MISS ] || fail "after PURGE: $(header "$TMP/hp" x-cache)"
[ "$(metric "$LOWER" ferry_cache_purges_total)" = 1 ] || fail "purge count"
# From an address outside --admin-allow: refused.
kill "$CACHE_PID"; wait "$CACHE_PID" 2>/dev/null || true
start_cache_named strict --origin "$ORIGIN" --dir "$TMP/lower" --admin-allow 10.9.9.9
code=$(curl -s -o /dev/null -w '%{http_code}' -X PURGE "$C/text/t1")
[ "$code" = 403 ] || fail "PURGE from a disallowed address: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$C/_ferry/metrics")
[ "$code" = 403 ] || fail "metrics from a disallowed address: $code"
curl -sf -D "$TMP/hs" "$C/text/t1" -o /dev/null
[ "$(header "$TMP/hs" x-cache)" = HIT ] || fail "entry gone after a refused PURGE"

# --- metrics are Prometheus text ------------------------------------------------------
curl -sf "$UPPER/_ferry/metrics" >"$TMP/metrics"
grep -q '^# TYPE ferry_cache_requests_total counter$' "$TMP/metrics" || fail "metrics format"
awk '!/^#/ && NF != 2 { exit 1 }' "$TMP/metrics" || fail "a metrics line is not NAME VALUE"
ratio=$(awk '$1 == "ferry_cache_compression_ratio" { print $2 }' "$TMP/metrics")
/usr/bin/python3 -c "import sys; sys.exit(0 if float('$ratio') > 3 else 1)" || fail "ratio $ratio"
# --- one lower tier, three parents ----------------------------------------------------
for k in 0 1 2; do
  start_cache_named "p$k" --origin "$ORIGIN" --dir "$TMP/p$k"
  P[$k]=$C
  PPID_[$k]=$CACHE_PID
done
start_cache_named fan --origin "$ORIGIN" --parent "${P[0]}" --parent "${P[1]}" --parent "${P[2]}" --dir "$TMP/fan"
fetches() { local k n=0; for k in "$@"; do n=$((n + $(metric "${P[$k]}" ferry_cache_origin_fetches_total))); done; echo "$n"; }
for n in $(seq 1 30); do
  curl -sf "$C/text/f$n" -o "$TMP/f" && curl -sf "$ORIGIN/text/f$n" | cmp -s - "$TMP/f" || fail "f$n through the fan-out"
done
[ "$(fetches 0 1 2)" = 30 ] || fail "the parents fetched $(fetches 0 1 2) objects for 30"
for k in 0 1 2; do
  share[$k]=$(metric "${P[$k]}" ferry_cache_origin_fetches_total)
  [ "${share[$k]}" -gt 2 ] || fail "parent $k filled ${share[$k]} of 30: not spread"
done
kill -9 "${PPID_[1]}"
wait "${PPID_[1]}" 2>/dev/null || true
start_cache_named fan2 --origin "$ORIGIN" --parent "${P[0]}" --parent "${P[1]}" --parent "${P[2]}" --dir "$TMP/fan2"
for n in $(seq 1 30); do
  curl -sf "$C/text/f$n" -o "$TMP/f" && curl -sf "$ORIGIN/text/f$n" | cmp -s - "$TMP/f" || fail "f$n with a parent down"
done
[ "$(metric "$C" ferry_cache_parent_failovers_total)" = "${share[1]}" ] ||
  fail "$(metric "$C" ferry_cache_parent_failovers_total) failovers, the dead parent had ${share[1]} keys"
[ "$(fetches 0 2)" = $((share[0] + share[2] + share[1])) ] || fail "the live parents fetched $(fetches 0 2)"
echo "three parents: ${share[0]} / ${share[1]} / ${share[2]} of 30 keys; one killed: its ${share[1]} went on, nothing else moved"
echo "cache_tier_test: ok"
