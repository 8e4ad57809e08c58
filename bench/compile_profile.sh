#!/usr/bin/env bash
# Where the compile time goes, per translation unit and per header:
#
#   bench/compile_profile.sh [REV] [TARGET]     (defaults: HEAD, ferry)
#
# Builds TARGET from a clone of REV file by file with clang and
# -ftime-trace (FERRY_UNITY=OFF and no precompiled header, so each source
# is its own translation unit and each header's cost shows), no compiler
# cache, then prints the costliest translation units (ninja's log) and
# bench/compile_profile.py's summary of clang's traces: headers by parse
# time summed over their includers, templates by instantiation time,
# functions by code generation time. clang's figures stand in for g++'s
# (which has no per-header timing); the ranking is what matters.
# Needs clang (scripts/setup.sh fuzz). docs/building.md has the results.
set -euo pipefail
REV=${1:-HEAD}
TARGET=${2:-ferry}
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/ferry-compile-profile.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
command -v clang++ >/dev/null || { echo "compile_profile: clang++ missing (scripts/setup.sh fuzz)" >&2; exit 1; }
git clone -q --no-hardlinks "$SRC" "$WORK/src"
git -C "$WORK/src" checkout -q "$REV"
CCACHE_DISABLE=1 CXX=clang++ cmake -S "$WORK/src" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFERRY_UNITY=OFF -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON -DCMAKE_CXX_FLAGS=-ftime-trace >/dev/null
t0=$(date +%s)
CCACHE_DISABLE=1 ninja -C "$WORK/build" -j2 "$TARGET" >"$WORK/build.log" || { tail -20 "$WORK/build.log"; exit 1; }
echo "compile_profile: $(git -C "$WORK/src" rev-parse --short HEAD), $TARGET built by clang file by file in $(( $(date +%s) - t0 )) s"
echo
echo "Translation units by compile time (top 15):"
echo
echo "| seconds | translation unit |"
echo "|---:|---|"
awk 'NR > 1 && $4 ~ /\.o$/ { printf "%.1f %s\n", ($2 - $1) / 1000, $4 }' "$WORK/build/.ninja_log" | sort -rn | head -15 |
  sed -E 's#^([0-9.]+) .*/CMakeFiles/[^/]+\.dir/#\1 #' | awk '{ printf "| %s | %s |\n", $1, $2 }'
echo
python3 "$SRC/bench/compile_profile.py" "$WORK/build" 15
