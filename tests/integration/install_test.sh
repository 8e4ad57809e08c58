#!/usr/bin/env bash
# make install (scripts/install.sh) into a DESTDIR: the binary stripped,
# its debug information beside it where gdb finds it with no setting (the
# same build ID, file:line for a function), a man page per command that man
# renders, bash completion that completes; the installed binary runs. A
# relative PREFIX is refused with one line.
source "$(dirname "$0")/lib.sh"
need objcopy
need readelf
need gdb
need man

DEST="$TMP/dest"
"$FERRY_SOURCE/scripts/install.sh" "$FERRY_BUILD" "$DEST" /usr/local >"$TMP/install.log" 2>&1 ||
  fail "install.sh: $(cat "$TMP/install.log")"
BIN="$DEST/usr/local/bin/ferry"
DBG="$DEST/usr/local/bin/.debug/ferry.debug"
[ -x "$BIN" ] && [ -s "$DBG" ] || fail "installed no binary or no debug file: $(find "$DEST" -type f | head)"
[ "$("$BIN" version)" = "$("$FERRY" version)" ] || fail "installed binary: $("$BIN" version)"

# Stripped: no DWARF, no symbol table; the debug file has the line tables.
readelf -S "$BIN" | grep -qE '\.debug_(info|line)|\.symtab' && fail "the installed binary is not stripped"
readelf -S "$DBG" 2>/dev/null | grep -q '\.debug_line' || fail "the debug file has no line tables"
[ "$(stat -c %s "$BIN")" -lt "$(stat -c %s "$FERRY_BUILD/ferry")" ] || fail "stripping saved nothing"
id_of() { readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3 }'; }
[ -n "$(id_of "$BIN")" ] && [ "$(id_of "$BIN")" = "$(id_of "$DBG")" ] || fail "build IDs differ: $(id_of "$BIN") $(id_of "$DBG")"
readelf -x .gnu_debuglink "$BIN" 2>/dev/null | grep -q 'ferry.debug' || fail "no debuglink to ferry.debug"

# gdb finds the debug file by itself and maps a function to its line.
gdb -nx -batch -ex 'info line main' "$BIN" >"$TMP/gdb" 2>&1 || true
grep -qE 'Line [0-9]+ of ".*cli/main\.cc"' "$TMP/gdb" || fail "gdb found no line for main: $(cat "$TMP/gdb")"
# Without the debug file, it cannot: the line came from it.
mv "$DBG" "$TMP/moved.debug"
gdb -nx -batch -ex 'info line main' "$BIN" >"$TMP/gdb2" 2>&1 || true
grep -qE 'Line [0-9]+ of' "$TMP/gdb2" && fail "gdb found lines without the debug file: $(cat "$TMP/gdb2")"
mv "$TMP/moved.debug" "$DBG"

# A man page per command, rendered by man; completion that completes.
MAN="$DEST/usr/local/share/man/man1"
for page in ferry ferry-cp ferry-migrate-verify ferry-cache-serve ferry-volume-serve ferry-gateway; do
  [ -s "$MAN/$page.1" ] || fail "no man page $page"
done
man -l -P cat "$MAN/ferry-volume-serve.1" 2>/dev/null | grep -q -- '--hydration-threads' ||
  fail "man ferry-volume-serve lacks --hydration-threads"
COMPLETION="$DEST/usr/local/share/bash-completion/completions/ferry"
bash -c "source '$COMPLETION'; COMP_WORDS=(ferry migrate ver); COMP_CWORD=2; _ferry; echo \"\${COMPREPLY[*]}\"" >"$TMP/complete"
grep -qx verify "$TMP/complete" || fail "completion of 'ferry migrate ver': $(cat "$TMP/complete")"

# The installed binary at work.
make_objects "$TMP/src" 50 2 1024
"$BIN" migrate "$TMP/src" "$TMP/dst" --state "$TMP/state" -q || fail "installed ferry migrate"
[ "$(tree_digest "$TMP/src")" = "$(tree_digest "$TMP/dst")" ] || fail "installed ferry migrate: trees differ"

# A relative PREFIX: one line, nothing installed.
if "$FERRY_SOURCE/scripts/install.sh" "$FERRY_BUILD" "$TMP/other" usr/local >"$TMP/rel" 2>&1; then
  fail "a relative PREFIX was accepted"
fi
[ "$(wc -l <"$TMP/rel")" = 1 ] && grep -q 'PREFIX must be absolute' "$TMP/rel" || fail "relative PREFIX: $(cat "$TMP/rel")"
[ ! -e "$TMP/other" ] || fail "a refused install left files"
echo "PASS: install"
