#!/usr/bin/env bash
# Builds ferry_VERSION_amd64.deb from a build directory:
#
#   scripts/make_deb.sh BUILD_DIR [OUT_DIR]     (make deb: build/ferry_*.deb)
#
# The package holds the stripped binary, a man page per command and bash
# completion (scripts/gen_docs.py, from the commands' own --help), example
# configs in /etc/ferry (conffiles), and the systemd units of
# packaging/systemd (the daemons run as the system user ferry, which
# postinst makes). Depends: the Debian packages of the shared libraries the
# binary links, at least the versions on this machine. Prints the path.
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
OUT=$(mkdir -p "${2:-$BUILD}" && cd "${2:-$BUILD}" && pwd)
cd "$(dirname "$0")/.."
FERRY="$BUILD/ferry"
[ -x "$FERRY" ] || { echo "make_deb: no $FERRY (make build)" >&2; exit 1; }
VERSION=$("$FERRY" version | awk '{ print $2 }')
ROOT=$(mktemp -d /tmp/ferry-deb.XXXXXX)
trap 'rm -rf "$ROOT"' EXIT

install -d "$ROOT/DEBIAN" "$ROOT/usr/bin" "$ROOT/usr/share/man/man1" "$ROOT/etc/ferry" \
  "$ROOT/lib/systemd/system" "$ROOT/usr/share/bash-completion/completions" "$ROOT/usr/share/doc/ferry"
objcopy --strip-unneeded "$FERRY" "$ROOT/usr/bin/ferry"
chmod 755 "$ROOT/usr/bin/ferry"
python3 scripts/gen_docs.py "$FERRY" "$ROOT/gen" >/dev/null
for m in "$ROOT"/gen/man1/*.1; do gzip -9n <"$m" >"$ROOT/usr/share/man/man1/$(basename "$m").gz"; done
install -m 644 "$ROOT/gen/bash-completion/ferry" "$ROOT/usr/share/bash-completion/completions/ferry"
rm -rf "$ROOT/gen"
install -m 644 packaging/etc/*.toml "$ROOT/etc/ferry/"
install -m 644 packaging/systemd/*.service "$ROOT/lib/systemd/system/"
install -m 644 packaging/debian/copyright "$ROOT/usr/share/doc/ferry/copyright"
printf 'ferry (%s) unstable; urgency=medium\n\n  * Built from %s.\n\n -- ferry developers <ferry@example.org>  %s\n' \
  "$VERSION" "$(git rev-parse --short HEAD 2>/dev/null || echo source)" "$(date -R -u -d @"${SOURCE_DATE_EPOCH:-$(date +%s)}")" |
  gzip -9n >"$ROOT/usr/share/doc/ferry/changelog.gz"
install -m 755 packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm "$ROOT/DEBIAN/"
(cd "$ROOT" && find etc -type f -printf '/%p\n' | sort) >"$ROOT/DEBIAN/conffiles"

# Depends: the package of each library the binary names (NEEDED), at least
# its version here.
needed=$(objdump -p "$FERRY" | awk '$1 == "NEEDED" { print $2 }')
deps=$(ldd "$FERRY" | awk '$3 ~ /^\// { print $1, $3 }' | while read -r name lib; do
  grep -qx "$name" <<<"$needed" || continue
  pkg=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -1 | cut -d: -f1) || true
  [ -z "$pkg" ] && pkg=$(dpkg -S "$lib" 2>/dev/null | head -1 | cut -d: -f1) || true
  [ -n "$pkg" ] && echo "$pkg (>= $(dpkg-query -W -f='${Version}' "$pkg"))"
done | sort -u | paste -sd, | sed 's/,/, /g')
[ -n "$deps" ] || { echo "make_deb: found no library packages for $FERRY" >&2; exit 1; }
size=$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
sed -e "s/@VERSION@/$VERSION/" -e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$deps/" packaging/debian/control.in \
  >"$ROOT/DEBIAN/control"
deb="$OUT/ferry_${VERSION}_amd64.deb"
dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$deb" >/dev/null
echo "$deb"
