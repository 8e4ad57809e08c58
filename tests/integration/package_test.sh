#!/usr/bin/env bash
# The Debian packages (scripts/make_deb.sh, `make deb`): built from this
# build, lintian-clean, installed on this machine with dpkg -i (with its
# -dbgsym package, whose debug file gdb finds by build ID), its units
# accepted by systemd-analyze verify, its man pages and bash completion in
# place, the system user made; the installed binary migrates a directory
# and serves the cache from the packaged example config; purged after,
# leaving no binary and no user.
source "$(dirname "$0")/lib.sh"
need dpkg-deb
need systemd-analyze
need gdb
need readelf
[ "$(id -u)" = 0 ] || skip "dpkg -i needs root"
if dpkg-query -W -f='${Status}' ferry 2>/dev/null | grep -q "install ok installed"; then
  skip "a ferry package is installed here already: not replacing it"
fi

DEB=$("$FERRY_SOURCE/scripts/make_deb.sh" "$FERRY_BUILD" "$TMP")
[ -s "$DEB" ] || fail "no package built"
dpkg-deb -c "$DEB" | awk '{ print $6 }' >"$TMP/files"
for f in ./usr/bin/ferry ./lib/systemd/system/ferry-cache@.service ./lib/systemd/system/ferry-volume.service \
  ./lib/systemd/system/ferry-worker@.service ./lib/systemd/system/ferry-server.service ./etc/ferry/cache-default.toml ./usr/share/man/man1/ferry-cache-serve.1.gz \
  ./lib/systemd/system/ferry-gateway@.service ./etc/ferry/gateway-default.toml ./usr/share/man/man1/ferry-gateway.1.gz \
  ./usr/share/man/man1/ferry-migrate-verify.1.gz ./usr/share/bash-completion/completions/ferry; do
  grep -qx "$f" "$TMP/files" || fail "package lacks $f"
done
DBGSYM="$TMP/$(basename "$DEB" | sed 's/^ferry_/ferry-dbgsym_/')"
[ -s "$DBGSYM" ] || fail "no -dbgsym package beside $DEB"
dpkg-deb -x "$DEB" "$TMP/deb-root"
build_id=$(readelf -n "$TMP/deb-root/usr/bin/ferry" | awk '/Build ID:/ { print $3 }')
dpkg-deb -c "$DBGSYM" | awk '{ print $6 }' | grep -qx "./usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug" ||
  fail "ferry-dbgsym lacks the debug file of build ID $build_id: $(dpkg-deb -c "$DBGSYM" | tail -3)"
readelf -S "$TMP/deb-root/usr/bin/ferry" | grep -qE '\.debug_(info|line)' && fail "the packaged binary is not stripped"
if command -v lintian >/dev/null; then
  lintian --tag-display-limit 0 "$DEB" "$DBGSYM" >"$TMP/lintian" 2>&1 || true
  grep -E '^[EW]: ' "$TMP/lintian" && fail "lintian: $(grep -E '^[EW]: ' "$TMP/lintian" | head -5)"
fi

cleanup_package() { dpkg --purge ferry-dbgsym ferry >/dev/null 2>&1 || true; }
trap 'cleanup_package; cleanup' EXIT
dpkg -i "$DEB" "$DBGSYM" >"$TMP/dpkg.log" 2>&1 || fail "dpkg -i: $(tail -5 "$TMP/dpkg.log")"
gdb -nx -batch -ex 'info line main' /usr/bin/ferry >"$TMP/gdb" 2>&1
grep -qE 'Line [0-9]+ of ".*cli/main\.cc"' "$TMP/gdb" || fail "gdb found no line for main with ferry-dbgsym: $(cat "$TMP/gdb")"
[ "$(/usr/bin/ferry version)" = "$("$FERRY" version)" ] || fail "installed binary: $(/usr/bin/ferry version)"
getent passwd ferry >/dev/null || fail "postinst made no user ferry"
[ "$(man -w ferry-cache-serve 2>/dev/null)" = /usr/share/man/man1/ferry-cache-serve.1.gz ] || fail "man ferry-cache-serve"
man -P cat ferry-volume-serve 2>/dev/null | grep -q -- '--hydration-threads' || fail "man page lacks the volume daemon's flags"
bash -c 'source /usr/share/bash-completion/completions/ferry; COMP_WORDS=(ferry cache serve --con); COMP_CWORD=3; _ferry; echo "${COMPREPLY[*]}"' \
  >"$TMP/complete"
grep -qx -- "--config" "$TMP/complete" || fail "completion of 'ferry cache serve --con': $(cat "$TMP/complete")"
# Templates are verified as the instances the example configs name.
(cd /lib/systemd/system && systemd-analyze verify ferry-volume.service ferry-cache@default.service \
  ferry-worker@default.service ferry-server.service ferry-gateway@default.service) >"$TMP/verify" 2>&1 || fail "systemd-analyze verify: $(cat "$TMP/verify")"
grep -q "ProtectSystem=strict" /lib/systemd/system/ferry-cache@.service || fail "unit not hardened"

# --- the installed binary at work -----------------------------------------------------
make_objects "$TMP/src" 200 4 4096
/usr/bin/ferry migrate "$TMP/src" "$TMP/dst" --state "$TMP/state" --json -q >"$TMP/migrate.json" ||
  fail "installed ferry migrate: $(cat "$TMP/migrate.json")"
[ "$(tree_digest "$TMP/src")" = "$(tree_digest "$TMP/dst")" ] || fail "installed ferry migrate: trees differ"
source "$(dirname "$0")/cache_lib.sh"
start_origin
FERRY=/usr/bin/ferry start_cache_named pkg --config /etc/ferry/cache-default.toml --origin "$ORIGIN" --dir "$TMP/cache"
curl -sf "$C/text/a" -o "$TMP/a1" && curl -sf -D "$TMP/h2" "$C/text/a" -o "$TMP/a2" || fail "installed cache: no answer"
[ "$(header "$TMP/h2" x-cache)" = HIT ] && cmp -s "$TMP/a1" "$TMP/a2" || fail "installed cache: no hit"
grep -q '"msg":"ferry cache: listening' "$TMP/pkg.log" || fail "the example config's json logs: $(head -2 "$TMP/pkg.log")"
kill "$CACHE_PID"

cleanup_package
[ ! -e /usr/bin/ferry ] || fail "purge left /usr/bin/ferry"
[ ! -e "/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug" ] || fail "purge left the debug file"
getent passwd ferry >/dev/null && fail "purge left the user ferry"
echo "package: OK ($(basename "$DEB"), $(wc -l <"$TMP/files") entries)"
