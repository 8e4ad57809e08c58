#!/usr/bin/env bash
# Installs ferry from a build directory, as `make install` does:
#
#   scripts/install.sh BUILD_DIR DESTDIR PREFIX
#
#   $DESTDIR$PREFIX/bin/ferry                           the binary, stripped
#   $DESTDIR$PREFIX/bin/.debug/ferry.debug              its debug information
#   $DESTDIR$PREFIX/share/man/man1/ferry*.1             a man page per command
#   $DESTDIR$PREFIX/share/bash-completion/completions/ferry
#
# The binary names its debug file by a GNU debuglink (and a build ID), so
# gdb, perf and addr2line find file:line for it from the .debug directory
# beside it with no setting. The man pages and completion come from the
# commands' own --help (scripts/gen_docs.py), as docs/commands/ do.
# MAN_GZIP=1 compresses the man pages (the Debian package does).
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR DESTDIR PREFIX}" && pwd)
DESTDIR=${2-}
PREFIX=${3:?usage: $0 BUILD_DIR DESTDIR PREFIX}
cd "$(dirname "$0")/.."
FERRY="$BUILD/ferry"
[ -x "$FERRY" ] || { echo "install: no $FERRY (make ferry)" >&2; exit 1; }
case "$PREFIX" in /*) ;; *) echo "install: PREFIX must be absolute, not '$PREFIX'" >&2; exit 1 ;; esac
ROOT="$DESTDIR$PREFIX"

install -d "$ROOT/bin/.debug" "$ROOT/share/man/man1" "$ROOT/share/bash-completion/completions"
TMP=$(mktemp -d /tmp/ferry-install.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# The debug file first, then the stripped binary that points at it.
objcopy --only-keep-debug "$FERRY" "$TMP/ferry.debug"
objcopy --strip-unneeded --add-gnu-debuglink="$TMP/ferry.debug" "$FERRY" "$TMP/ferry"
install -m 644 "$TMP/ferry.debug" "$ROOT/bin/.debug/ferry.debug"
install -m 755 "$TMP/ferry" "$ROOT/bin/ferry"

python3 scripts/gen_docs.py "$FERRY" "$TMP/gen" >/dev/null
for m in "$TMP"/gen/man1/*.1; do
  if [ "${MAN_GZIP:-0}" = 1 ]; then
    gzip -9n <"$m" >"$ROOT/share/man/man1/$(basename "$m").gz"
    chmod 644 "$ROOT/share/man/man1/$(basename "$m").gz"
  else
    install -m 644 "$m" "$ROOT/share/man/man1/"
  fi
done
install -m 644 "$TMP/gen/bash-completion/ferry" "$ROOT/share/bash-completion/completions/ferry"
echo "installed ferry $("$ROOT/bin/ferry" version | awk '{ print $2 }') in $ROOT"
