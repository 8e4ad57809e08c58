#!/usr/bin/env bash
# Builds the root file system of ferry's test guest: a small, real ext4 image
# made with mke2fs -d from a staging tree (no mount, no root needed).
#
#   testing/vm/make_rootfs.sh OUT.img [SIZE_MIB]     (SIZE_MIB: 64)
#
# What goes in is a fixed list of this machine's files, so the image holds the
# same set whatever else is installed: bash, python3.11 with the four stdlib
# files it needs to start and print (os.py as the prefix landmark, encodings
# with aliases and utf_8), mount and sync, every shared library ldd lists for
# those four programs, and /init (init.sh beside this script). Debian 12's
# merged /usr is kept: /bin, /sbin, /lib and /lib64 are links into /usr.
#
# The guest it boots (Debian's cloud kernel, root on NVMe, no initrd) prints
# to the serial console, in order: FERRY-VM-PYTHON ..., FERRY-VM-BOOTED,
# FERRY-VM-WROTE, and powers off; it leaves /ferry-guest-wrote on the disk
# (init.sh says what is in it). tests/integration/vm_boot_test.sh boots it
# from a lazy volume.
#
# With FERRY_ROOTFS_STAGE=DIR the staging tree is left in DIR (made empty
# first) instead of a temporary directory, for a caller that adds files
# before its own mke2fs (bench/volume_bench.sh); then no image is made when
# OUT.img is "-".
set -euo pipefail
usage() { echo "usage: $0 OUT.img [SIZE_MIB]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
OUT=$1
SIZE_MIB=${2:-64}
HERE=$(cd "$(dirname "$0")" && pwd)
die() { echo "make_rootfs: $*" >&2; exit 1; }

# The pinned list. Programs are copied to the same path in the image.
PROGRAMS=(/usr/bin/bash /usr/bin/python3.11 /usr/bin/mount /usr/bin/sync)
PY_LIB=/usr/lib/python3.11
PY_FILES=(os.py encodings/__init__.py encodings/aliases.py encodings/utf_8.py)

for f in "${PROGRAMS[@]}" "${PY_FILES[@]/#/$PY_LIB/}" /sbin/mke2fs; do
  [ -e "$f" ] || die "$f is missing (make setup installs what this needs)"
done

if [ -n "${FERRY_ROOTFS_STAGE:-}" ]; then
  ROOT=$FERRY_ROOTFS_STAGE
  rm -rf "$ROOT"
  mkdir -p "$ROOT"
else
  ROOT=$(mktemp -d /tmp/ferry-rootfs.XXXXXX)
  trap 'rm -rf "$ROOT"' EXIT
fi

mkdir -p "$ROOT"/usr/{bin,sbin,lib/x86_64-linux-gnu,lib64} "$ROOT"/{proc,sys,dev,tmp,etc}
ln -s usr/bin "$ROOT/bin"
ln -s usr/sbin "$ROOT/sbin"
ln -s usr/lib "$ROOT/lib"
ln -s usr/lib64 "$ROOT/lib64"

for p in "${PROGRAMS[@]}"; do cp -L "$p" "$ROOT$p"; done
ln -s python3.11 "$ROOT/usr/bin/python3"
ln -s bash "$ROOT/usr/bin/sh"

# The libraries, each at the path ldd names it by (under /usr, where /lib is
# a link to), its content dereferenced. The dynamic loader finds them in
# /usr/lib/x86_64-linux-gnu with no ld.so.cache.
libs=$(for p in "${PROGRAMS[@]}"; do ldd "$p"; done |
  awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u)
[ -n "$libs" ] || die "ldd listed no libraries"
for l in $libs; do
  dst="$ROOT/usr${l#/usr}"
  mkdir -p "$(dirname "$dst")"
  cp -L "$l" "$dst"
done

for f in "${PY_FILES[@]}"; do
  mkdir -p "$(dirname "$ROOT$PY_LIB/$f")"
  cp "$PY_LIB/$f" "$ROOT$PY_LIB/$f"
done
# Its absence would make python warn that exec_prefix was not found.
mkdir -p "$ROOT$PY_LIB/lib-dynload"

install -m 755 "$HERE/init.sh" "$ROOT/init"

[ "$OUT" = - ] && exit 0
# Fixed UUID, hash seed and time: the same files give the same image. The
# inode tables and journal are written now (no lazy init), so a guest that
# mounts it does not go on zeroing them in the background.
rm -f "$OUT"
truncate -s "${SIZE_MIB}M" "$OUT"
E2FSPROGS_FAKE_TIME=1700000000 /sbin/mke2fs -q -F -t ext4 -L ferry-root \
  -U 5f0e2d6c-6a1b-4c3e-9d7f-0a1b2c3d4e5f \
  -E lazy_itable_init=0,lazy_journal_init=0,hash_seed=5f0e2d6c-6a1b-4c3e-9d7f-0a1b2c3d4e5f \
  -d "$ROOT" "$OUT" >&2
