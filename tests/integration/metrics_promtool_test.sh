#!/usr/bin/env bash
# Every daemon's metrics pass `promtool check metrics` (Prometheus's own
# linter: HELP and TYPE for each family, counters ending in _total, base
# units), scraped after real work: the cache after misses, hits and a
# gzip variant; the volume daemon with a volume hydrated from a snapshot
# (its pool path, with a quote in it, as a label value).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cache_lib.sh"
need promtool

check() {  # check NAME FILE: promtool's verdict on a scrape
  [ -s "$2" ] || fail "$1: empty scrape"
  promtool check metrics <"$2" >"$2.lint" 2>&1 || fail "$1: promtool check metrics: $(cat "$2.lint")"
  echo "$1: $(grep -c '^# TYPE' "$2") families pass promtool"
}

# --- cache ---------------------------------------------------------------------------
start_origin
start_cache_named c --origin "$ORIGIN" --dir "$TMP/cache"
curl -sf "$C/text/a" -o /dev/null
curl -sf "$C/text/a" -o /dev/null
curl -sf -H 'Accept-Encoding: gzip' "$C/text/a" -o /dev/null
curl -sf "$C/_ferry/metrics" -o "$TMP/cache.prom"
check cache "$TMP/cache.prom"
grep -q '^ferry_cache_encode_cpu_seconds_total [0-9.e-]*$' "$TMP/cache.prom" || fail "no encode CPU counter"
[ "$(awk '$1 == "ferry_cache_encode_bytes_total" { print $2 }' "$TMP/cache.prom")" -gt 0 ] || fail "nothing encoded"

# --- volume daemon -------------------------------------------------------------------
start_test_s3
use_endpoint
make_file "$TMP/disk.img" $((4 * 65536))
"$FERRY" snapshot create "$TMP/disk.img" s3://bkt/snaps/m --chunk-size 64K >/dev/null
POOL="$TMP/pool \"one\""
mkdir -p "$POOL"
start_volume_daemon --pool "$POOL"
vol create v1 --from s3://bkt/snaps/m >/dev/null
for _ in $(seq 1 100); do [ "$(vol status v1 --json | json_field state)" = hydrated ] && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$API/metrics" -o "$TMP/volume.prom"
check volume "$TMP/volume.prom"
grep -q '^ferry_volume_hydrated_chunks{volume="v1"} 4$' "$TMP/volume.prom" || fail "volume v1: $(grep hydrated "$TMP/volume.prom")"
grep -q "^ferry_volume_trigger_wait_seconds_count 0$" "$TMP/volume.prom" || fail "background hydration counted as client waits: $(grep trigger_wait_seconds_count "$TMP/volume.prom")"
grep -qF 'pool="'"$TMP"'/pool \"one\""' "$TMP/volume.prom" || fail "pool label not escaped: $(grep pool= "$TMP/volume.prom" | head -2)"
echo "metrics: OK"
