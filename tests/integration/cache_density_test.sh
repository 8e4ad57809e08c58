#!/usr/bin/env bash
# How densely ferry cache serve fills its disk: a browser-like corpus from
# this machine (HTML, CSS, JavaScript, SVG, PNG, Python sources, gzip
# changelogs) served by Python's http.server, fetched once through the cache
# with curl; then the disk blocks the cache holds (st_blocks * 512 of its
# files, and the metric that reports them) against the ideal: each eligible
# text file compressed alone by `zstd -3` (the zstd CLI), every other file
# as it is. Allocated must be within 1.1x of that ideal.
source "$(dirname "$0")/lib.sh"
need curl
need zstd
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"

# --- the corpus: every Nth file of each kind, sorted, so runs agree ------------
WWW="$TMP/www"
mkdir -p "$WWW"
pick() {  # pick EXT COUNT DIRS...: COUNT files *.EXT of at least 100 bytes, spread over the sorted list
  local ext=$1 count=$2
  shift 2
  find "$@" -type f -name "*.$ext" -size +99c 2>/dev/null | sort | awk -v n="$count" '
    { f[NR] = $0 } END { step = NR / n; if (step < 1) step = 1; for (i = 1; i <= NR && c < n; i += step) { print f[int(i)]; c++ } }'
}
i=0
for spec in "html 80 /usr/share/doc /usr/share" "css 40 /usr/share" "js 60 /usr/share /usr/lib/python3" \
            "svg 40 /usr/share" "png 60 /usr/share" "py 80 /usr/lib/python3.11" "gz 30 /usr/share/doc"; do
  set -- $spec
  while IFS= read -r f; do
    i=$((i + 1))
    cp "$f" "$WWW/$i-$(basename "$f" | tr -c 'A-Za-z0-9._\n-' '_')"
  done < <(pick "$@")
done
files=$(ls "$WWW" | wc -l)
[ "$files" -ge 200 ] || skip "only $files corpus files on this machine"
touch -d '2 days ago' "$WWW"/*  # fresh by heuristic (RFC 9111 4.2.2) for hours

start_static_origin "$WWW"
start_cache_named density --origin "$ORIGIN" --dir "$TMP/cache"

# --- every file once through the cache, byte for byte ---------------------------
mkdir -p "$TMP/got"
ls "$WWW" | xargs -P 8 -I{} sh -c 'curl -sf "$1/$2" -o "$3/$2.got" && cmp -s "$4/$2" "$3/$2.got" || echo "$2"' _ \
  "$C" {} "$TMP/got" "$WWW" >"$TMP/bad" 2>&1
[ ! -s "$TMP/bad" ] || fail "wrong bytes through the cache: $(head -3 "$TMP/bad")"
wait_metric "$C" ferry_cache_disk_entries "$files"  # small text is stored once compressed, behind its fill

# --- the ideal: what the origin says each file is, and zstd -3 of the eligible ---
/usr/bin/python3 - "$ORIGIN" "$WWW" >"$TMP/ideal" <<'PY'
import os, subprocess, sys, urllib.parse, urllib.request
origin, www = sys.argv[1], sys.argv[2]
# The types ferry compresses by default (transcode_policy.h), 4 KiB and over.
def eligible(ctype, size):
    t = ctype.split(";")[0].strip().lower()
    return size >= 4096 and (t.startswith("text/") or t in ("application/json", "application/javascript",
        "application/xml", "image/svg+xml") or t.endswith("+json") or t.endswith("+xml"))
ideal = logical = compressed = 0
for name in sorted(os.listdir(www)):
    path = os.path.join(www, name)
    size = os.path.getsize(path)
    req = urllib.request.Request(origin + "/" + urllib.parse.quote(name), method="HEAD")
    ctype = urllib.request.urlopen(req).headers.get("Content-Type", "")
    logical += size
    if eligible(ctype, size):
        z = len(subprocess.run(["zstd", "-3", "-c", path], capture_output=True, check=True).stdout)
        ideal += z
        compressed += 1
    else:
        ideal += size
print(ideal, logical, compressed)
PY
read -r ideal logical compressed <"$TMP/ideal"
allocated=$(metric "$C" ferry_cache_disk_allocated_bytes)
on_disk=$(find "$TMP/cache/segments" "$TMP/cache/big" -type f -printf '%b\n' | awk '{ n += $1 * 512 } END { print n }')
[ "$allocated" = "$on_disk" ] || fail "metric says $allocated bytes allocated, the files hold $on_disk"
disk_logical=$(metric "$C" ferry_cache_disk_logical_bytes)
[ "$disk_logical" = "$logical" ] || fail "logical bytes: metric $disk_logical, files $logical"
ratio=$(awk -v a="$allocated" -v i="$ideal" 'BEGIN { printf "%.3f", a / i }')
echo "density: $files files ($compressed compressed), $logical bytes; ideal $ideal (zstd -3 each + the rest);" \
  "allocated $allocated = ${ratio}x the ideal; logical/allocated $(metric "$C" ferry_cache_disk_logical_per_allocated)"
awk -v r="$ratio" 'BEGIN { exit !(r <= 1.1) }' || fail "allocated is ${ratio}x the ideal (want at most 1.1x)"

# --- the same after a restart (the index rebuilt from the segments) --------------
kill "$CACHE_PID"; wait "$CACHE_PID" 2>/dev/null || true
start_cache_named density2 --origin "$ORIGIN" --dir "$TMP/cache"
[ "$(metric "$C" ferry_cache_disk_entries)" = "$files" ] || fail "entries after a restart: $(metric "$C" ferry_cache_disk_entries)"
[ "$(metric "$C" ferry_cache_disk_allocated_bytes)" = "$allocated" ] || fail "allocated bytes changed on reopening"
name=$(ls "$WWW" | sed -n 7p)
curl -sf -D "$TMP/h" "$C/$name" | cmp -s - "$WWW/$name" || fail "$name after a restart"
[ "$(header "$TMP/h" x-cache)" = HIT ] || fail "$name after a restart: $(header "$TMP/h" x-cache)"
echo "cache_density_test: ok"
