#!/usr/bin/env bash
# What each set-up purpose costs a new user: for every purpose of
# scripts/setup.sh, on its own fresh Debian 12 machine (a chroot,
# bench/fresh_machine.sh: an empty apt cache, so every package is
# downloaded), the time `scripts/setup.sh PURPOSE` takes, the packages it
# installed and the disk they took.
#
#   bench/setup_time.sh [PURPOSE...]     (default: every purpose)
#
# Runs as root; the README's "Set-up by purpose" table quotes it.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/ferry-setup-time.XXXXXX)
source "$SRC/bench/fresh_machine.sh"
trap 'drop_fresh_machines; rm -rf --one-file-system "$WORK"' EXIT
PURPOSES=("$@")
[ ${#PURPOSES[@]} -gt 0 ] || PURPOSES=(build demo test vm bench fuzz package)

echo "| purpose | packages installed | disk | time |"
echo "|---|---:|---:|---:|"
for purpose in "${PURPOSES[@]}"; do
  root="$WORK/$purpose"
  fresh_machine "$root"
  git clone -q --no-hardlinks "$SRC" "$root/root/ferry"
  before=$(in_fresh_machine "$root" "dpkg-query -W -f='\${Package}\n' | wc -l")
  disk0=$(du -sm --one-file-system "$root" | cut -f1)
  t0=$(date +%s)
  in_fresh_machine "$root" "cd /root/ferry && scripts/setup.sh $purpose" >"$WORK/$purpose.log" 2>&1 ||
    { tail -5 "$WORK/$purpose.log" >&2; echo "setup_time: scripts/setup.sh $purpose failed" >&2; exit 1; }
  t1=$(date +%s)
  after=$(in_fresh_machine "$root" "dpkg-query -W -f='\${Package}\n' | wc -l")
  in_fresh_machine "$root" "apt-get clean"
  disk1=$(du -sm --one-file-system "$root" | cut -f1)
  echo "| $purpose | $((after - before)) | $((disk1 - disk0)) MB | $((t1 - t0)) s |"
  drop_fresh_machine "$root"
done
