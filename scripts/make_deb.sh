#!/usr/bin/env bash
# Builds ferry_VERSION_amd64.deb and ferry-dbgsym_VERSION_amd64.deb from a
# build directory:
#
#   scripts/make_deb.sh BUILD_DIR [OUT_DIR]     (make deb: build/ferry*.deb)
#
# The package holds what `make install` installs (scripts/install.sh: the
# stripped binary, a man page per command and bash completion, from the
# commands' own --help), example configs in /etc/ferry (conffiles), and the
# systemd units of packaging/systemd (the daemons run as the system user
# ferry, which postinst makes). Depends: the Debian packages of the shared
# libraries the binary links, at least the versions on this machine. The
# debug information goes in ferry-dbgsym, as Debian's own packages ship it:
# /usr/lib/debug/.build-id/NN/REST.debug, where gdb looks by the binary's
# build ID. Prints the path of the main package.
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR [OUT_DIR]}" && pwd)
OUT=$(mkdir -p "${2:-$BUILD}" && cd "${2:-$BUILD}" && pwd)
cd "$(dirname "$0")/.."
FERRY="$BUILD/ferry"
[ -x "$FERRY" ] || { echo "make_deb: no $FERRY (make build)" >&2; exit 1; }
VERSION=$("$FERRY" version | awk '{ print $2 }')
ROOT=$(mktemp -d /tmp/ferry-deb.XXXXXX)

DBG=$(mktemp -d /tmp/ferry-dbgsym.XXXXXX)
trap 'rm -rf "$ROOT" "$DBG"' EXIT

install -d "$ROOT/DEBIAN" "$ROOT/etc/ferry" "$ROOT/lib/systemd/system" "$ROOT/usr/share/doc/ferry"
MAN_GZIP=1 scripts/install.sh "$BUILD" "$ROOT" /usr >/dev/null
# The debug file moves to the -dbgsym package, under its build ID.
build_id=$(readelf -n "$ROOT/usr/bin/ferry" | awk '/Build ID:/ { print $3 }')
[ -n "$build_id" ] || { echo "make_deb: $FERRY has no build ID" >&2; exit 1; }
install -d "$DBG/DEBIAN" "$DBG/usr/lib/debug/.build-id/${build_id:0:2}" "$DBG/usr/share/doc"
mv "$ROOT/usr/bin/.debug/ferry.debug" "$DBG/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug"
rmdir "$ROOT/usr/bin/.debug"
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

# ferry-dbgsym: the debug information, for exactly this build of ferry.
ln -s ferry "$DBG/usr/share/doc/ferry-dbgsym"
cat >"$DBG/DEBIAN/control" <<EOF
Package: ferry-dbgsym
Source: ferry
Version: $VERSION
Architecture: amd64
Maintainer: ferry developers <ferry@example.org>
Installed-Size: $(du -sk --exclude=DEBIAN "$DBG" | cut -f1)
Depends: ferry (= $VERSION)
Section: debug
Priority: optional
Description: debug symbols for ferry
Build-Ids: $build_id
EOF
dpkg-deb --root-owner-group -Zxz --build "$DBG" "$OUT/ferry-dbgsym_${VERSION}_amd64.deb" >/dev/null
echo "$deb"
