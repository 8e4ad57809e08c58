#!/usr/bin/env bash
# Trained dictionaries for small bodies, and the figure for them: a corpus
# of small real objects (bench/small_corpus.py: AWS API answers from
# botocore's documentation, HTML fragments of Python's docs; 64 B to 4 KiB)
# served by Python's http.server is fetched in a shuffled order, its first
# half then its second, through three caches:
#   trained     ferry's defaults (small bodies compressed with a zstd
#               dictionary trained per content type on what it stored);
#   zstd        --no-trained-dictionaries --min-size 1: every body zstd
#               alone, as ferry compresses larger ones;
#   as-came     --no-trained-dictionaries: small bodies stored as they came;
# and each file with the zstd CLI (-3, one file each). The figure is what
# the second half added to each store (the first half taught the trained
# cache; its first bodies went in as they came), and the whole corpus.
# Every body arrives byte for byte; the trained cache adds fewer bytes and
# fewer allocated blocks than zstd per object; after a restart its entries
# are hits, decoded with the stored dictionaries.
source "$(dirname "$0")/lib.sh"
need curl
need zstd
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"

SITE="$TMP/site"
counts=$(/usr/bin/python3 "$FERRY_SOURCE/bench/small_corpus.py" "$SITE") || skip "no corpus: $counts"
touch -d '10 days ago' -- "$SITE"/*/*  # fresh for a day by heuristic freshness
(cd "$SITE" && find . -type f | sed 's|^\./||' | sort | shuf --random-source=<(yes)) >"$TMP/paths"
N=$(wc -l <"$TMP/paths")
HALF=$((N / 2))
head -n "$HALF" "$TMP/paths" >"$TMP/paths.1"
tail -n +"$((HALF + 1))" "$TMP/paths" >"$TMP/paths.2"
LOGICAL=$(cat "$SITE"/*/* | wc -c)
start_static_origin "$SITE"

fetch() {  # fetch CACHE_URL OUT LIST: the paths of LIST once, over one connection, into OUT
  mkdir -p "$2"/api "$2"/html
  awk -v base="$1" -v out="$2" '{ printf "url = \"%s/%s\"\noutput = \"%s/%s\"\n", base, $0, out, $0 }' \
    "$3" >"$TMP/curl.cfg"
  curl -sf -H "Accept-Encoding: zstd, gzip" -K "$TMP/curl.cfg" || fail "fetching the corpus through $1"
}
fetch_all() {  # fetch_all CACHE_URL OUT: every path, checked against the files
  rm -rf "$2"
  fetch "$1" "$2" "$TMP/paths"
  diff -r -q "$SITE" "$2" >/dev/null || fail "bodies through $1 differ: $(diff -r -q "$SITE" "$2" | head -3)"
}
settled() {  # settled CACHE_URL ENTRIES: until its disk entries stop changing (compression behind fills)
  local last=-1 now _
  for _ in $(seq 1 100); do
    now=$(metric "$1" ferry_cache_disk_entries)
    [ "$now" = "$last" ] && [ "$now" -ge "$2" ] && return 0
    last=$now
    sleep 0.2
  done
  fail "the disk entries of $1 did not settle ($now)"
}
declare -A BYTES ALLOC BODY BYTES2 ALLOC2 BODY2
run() {  # run NAME ARGS: a cache, the corpus through it in two halves, its figures
  local name=$1 b a o
  shift
  start_cache_named "$name" --origin "$ORIGIN" --dir "$TMP/$name" "$@"
  rm -rf "$TMP/out-$name"
  fetch "$C" "$TMP/out-$name" "$TMP/paths.1"
  settled "$C" "$HALF"
  b=$(metric "$C" ferry_cache_disk_bytes) a=$(metric "$C" ferry_cache_disk_allocated_bytes)
  o=$(metric "$C" ferry_cache_stored_bytes_total)
  fetch "$C" "$TMP/out-$name" "$TMP/paths.2"
  settled "$C" "$N"
  diff -r -q "$SITE" "$TMP/out-$name" >/dev/null || fail "bodies through $name differ: $(diff -r -q "$SITE" "$TMP/out-$name" | head -3)"
  BYTES[$name]=$(metric "$C" ferry_cache_disk_bytes)
  ALLOC[$name]=$(metric "$C" ferry_cache_disk_allocated_bytes)
  BODY[$name]=$(metric "$C" ferry_cache_stored_bytes_total)
  BYTES2[$name]=$((BYTES[$name] - b)) ALLOC2[$name]=$((ALLOC[$name] - a)) BODY2[$name]=$((BODY[$name] - o))
}
run trained
TRAINED_URL=$C TRAINED_PID=$CACHE_PID
dicts=$(metric "$C" ferry_cache_trained_dictionaries_total)
compressed=$(metric "$C" ferry_cache_trained_entries_total)
[ "$dicts" -ge 2 ] || fail "trained $dicts dictionaries (want one per class at least: json, html)"
[ "$compressed" -ge $((N / 2)) ] || fail "only $compressed of $N bodies were stored with a trained dictionary"
run zstd --no-trained-dictionaries --min-size 1
run as-came --no-trained-dictionaries
(cd "$SITE" && zstd -3 -q -r --output-dir-mirror "$TMP/zfiles" api html)
sizes() { sed "s|^|$TMP/zfiles/|; s|\$|.zst|" "$1" | xargs stat -c '%s %b' | awk '{ s += $1; b += $2 * 512 } END { print s, b }'; }
read -r BODY[files] ALLOC[files] < <(sizes "$TMP/paths")
read -r BODY2[files] ALLOC2[files] < <(sizes "$TMP/paths.2")
BYTES[files]=${BODY[files]} BYTES2[files]=${BODY2[files]}
LOGICAL2=$(sed "s|^|$SITE/|" "$TMP/paths.2" | xargs cat | wc -c)

echo "figure: $counts, $N objects, $LOGICAL bytes ($LOGICAL2 in the second half); $dicts dictionaries trained, $compressed bodies stored with one"
echo "  store: bytes of entries (metadata included) / of bodies / allocated (ratio to the bodies' own bytes), second half | whole corpus"
for k in trained zstd as-came files; do
  case $k in
    trained) label="ferry, trained dictionaries (default)" ;;
    zstd) label="ferry, zstd per object, no dictionary" ;;
    as-came) label="ferry, small bodies as they came" ;;
    files) label="zstd -3 per file (a file system)" ;;
  esac
  printf '  %-40s %9s %9s %9s (%s) | %9s %9s %9s\n' "$label" "${BYTES2[$k]}" "${BODY2[$k]}" "${ALLOC2[$k]}" \
    "$(awk -v a="${ALLOC2[$k]}" -v l="$LOGICAL2" 'BEGIN { printf "%.3f", a / l }')" "${BYTES[$k]}" "${BODY[$k]}" "${ALLOC[$k]}"
done
[ "${BYTES2[trained]}" -lt "${BYTES2[zstd]}" ] || fail "trained dictionaries stored more bytes than zstd per object"
[ "${ALLOC2[trained]}" -lt "${ALLOC2[zstd]}" ] || fail "trained dictionaries allocated more than zstd per object"
[ "${BODY2[trained]}" -lt "${BODY2[files]}" ] || fail "trained dictionaries stored more body bytes than zstd -3 per file"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "  second half, trained / zstd per object: entries $(ratio "${BYTES2[trained]}" "${BYTES2[zstd]}"), bodies $(ratio "${BODY2[trained]}" "${BODY2[zstd]}"), allocated $(ratio "${ALLOC2[trained]}" "${ALLOC2[zstd]}")"

# A restart: the entries stored with dictionaries are hits, byte for byte.
kill "$TRAINED_PID"
wait "$TRAINED_PID" 2>/dev/null || true
start_cache_named trained2 --origin "$ORIGIN" --dir "$TMP/trained"
hits0=$(metric "$C" 'ferry_cache_requests_total{result="hit"}')
fetch_all "$C" "$TMP/out-restart"
hits=$(( $(metric "$C" 'ferry_cache_requests_total{result="hit"}') - hits0 ))
[ "$hits" = "$N" ] || fail "after a restart only $hits of $N were hits"
echo "cache trained: ok"
