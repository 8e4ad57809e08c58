#!/usr/bin/env bash
# The cache's compression on a corpus of real web text from Debian packages
# (installed by `make setup`): Python's HTML documentation (with its images
# and gzip files, which must be stored as received), jQuery, Bootstrap 5,
# highlight.js, React DOM, lodash and the iso-codes JSON. Prints the table of
# bench/cache_corpus_bench.cc: stored/logical ratio for eligible bodies and
# overall, and encode/decode ns per byte for ferry beside raw libzstd.
#
#   bench/cache_corpus.sh BUILD_DIR [--level N]
set -euo pipefail
BUILD=${1:-build}
shift || true
DIRS=(/usr/share/doc/python3.11 /usr/share/javascript/jquery /usr/share/javascript/bootstrap5
  /usr/share/javascript/highlight.js /usr/share/nodejs/react-dom /usr/share/nodejs/lodash
  /usr/share/iso-codes/json)
for d in "${DIRS[@]}"; do
  [ -d "$d" ] || { echo "cache_corpus: $d is missing (run make setup)" >&2; exit 1; }
done
"$BUILD/bench/ferry_cache_corpus_bench" "$@" "${DIRS[@]}"
