#!/usr/bin/env bash
# The disk image of bench/volume_bench.sh: a real ext4 file system whose
# content is a fixed set, so its size does not drift as the machine gains
# packages.
#
#   bench/volume_bench_image.sh DIR [IMAGE_MIB] [DATA_MB]   (2560, 1700)
#
# Writes DIR/os.img (IMAGE_MIB MiB, mke2fs -d), DIR/packed.img (the same
# files, -E packed_meta_blocks=1) and DIR/boot-files (the boot set's files,
# paths in the image), and prints one line on what it holds. In the image:
# - testing/vm/make_rootfs.sh's root (bash, python3.11, mount, sync, their
#   libraries, /init), so the image boots as a guest's root on NVMe;
# - the boot set's programs (python3.11, bash, ls, cat, cp, grep, sed) and
#   every library ldd lists for them, at their merged-/usr paths;
# - the files of a pinned list of Debian packages that `make setup` installs
#   (directly or as dependencies; PACKAGES below, about 1.1 GB): compilers,
#   Boost's headers, Node.js, awscli, rclone, PostgreSQL and LLVM, qemu,
#   CMake, Perl, Python's stdlib and HTML documentation;
# - filler: pseudo-random files (seeded, 1 to 64 MiB, incompressible, no two
#   chunks alike) under /usr/share/ferry-filler, as many bytes as bring the
#   files' total to exactly DATA_MB million bytes, whatever versions of
#   those packages are installed. Package files a machine lacks (dpkg
#   path-excludes) are made up for the same way.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 3 ] || { echo "usage: $0 DIR [IMAGE_MIB] [DATA_MB]" >&2; exit 2; }
DIR=$1
IMAGE_MIB=${2:-2560}
DATA_MB=${3:-1700}
SRC=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "volume_bench_image: $*" >&2; exit 1; }

PACKAGES=(nodejs libicu72 libboost1.74-dev awscli gcc-12 cpp-12 g++-12
  python3.11-doc libpython3.11-stdlib python3.11-minimal libpython3.11-minimal
  rclone postgresql-15 libllvm14 qemu-system-x86 qemu-system-data qemu-utils
  cmake libperl5.36 perl-modules-5.36 libc6 coreutils bash grep sed
  libstdc++6 libssl3)
BOOT_PROGRAMS=(python3.11 bash ls cat cp grep sed)

mkdir -p "$DIR"
STAGE="$DIR/stage"
FERRY_ROOTFS_STAGE="$STAGE" "$SRC/testing/vm/make_rootfs.sh" -

# The boot set: each program and library as named, and what it resolves to.
for b in "${BOOT_PROGRAMS[@]}"; do
  echo "/usr/bin/$b"
  ldd "/usr/bin/$b" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
done | sed 's|^/lib/|/usr/lib/|' | sort -u >"$DIR/boot-named"
while read -r f; do readlink -f "$f"; done <"$DIR/boot-named" | sed 's|^/lib/|/usr/lib/|' | sort -u >"$DIR/boot-files"

for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    die "package $p is not installed: run make setup"
done
dpkg -L "${PACKAGES[@]}" | cat - "$DIR/boot-named" "$DIR/boot-files" >"$DIR/paths"

# Copy (hard links where the file system allows) at merged-/usr paths, then
# top up with filler to the exact total.
/usr/bin/python3 - "$STAGE" "$DIR/paths" $((DATA_MB * 1000000)) <<'PY'
import os, random, re, shutil, stat, sys
stage, paths, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
merged = re.compile(r"^/(bin|sbin|lib|lib64)/")
for p in sorted({l.rstrip("\n") for l in open(paths)}):
    if not p.startswith("/") or p in ("/.",) or not os.path.lexists(p):
        continue
    st = os.lstat(p)
    if stat.S_ISDIR(st.st_mode):
        continue
    dst = stage + merged.sub(r"/usr/\1/", p)
    if os.path.lexists(dst):
        continue
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(p), dst)
    elif stat.S_ISREG(st.st_mode):
        try:
            os.link(p, dst)
        except OSError:
            shutil.copy2(p, dst)
seen, total, files = set(), 0, 0
for root, dirs, names in os.walk(stage):
    for n in names:
        st = os.lstat(os.path.join(root, n))
        if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += st.st_size
            files += 1
if total > target:
    sys.exit(f"volume_bench_image: the pinned files hold {total} bytes, more than the {target} asked for")
left, i, r = target - total, 0, random.Random(1700)
fill = os.path.join(stage, "usr/share/ferry-filler")
os.makedirs(fill, exist_ok=True)
while left:
    n = min(left, r.randint(1 << 20, 64 << 20))
    g = random.Random(i)
    with open(os.path.join(fill, f"f{i:04d}.bin"), "wb") as f:
        for k in range(0, n, 1 << 20):
            f.write(g.randbytes(min(1 << 20, n - k)))
    left -= n
    i += 1
print(f"{files} files from pinned Debian packages, the boot set and a guest's root ({total} bytes)"
      f" and {i} seeded filler files ({target - total} bytes)")
PY
for f in $(cat "$DIR/boot-files"); do
  [ -f "$STAGE$f" ] || die "boot file $f is not in the image"
done
for img in os packed; do rm -f "$DIR/$img.img"; truncate -s "${IMAGE_MIB}M" "$DIR/$img.img"; done
/sbin/mke2fs -q -F -t ext4 -d "$STAGE" "$DIR/os.img" >&2
/sbin/mke2fs -q -F -t ext4 -E packed_meta_blocks=1 -d "$STAGE" "$DIR/packed.img" >&2
rm -rf "$STAGE" "$DIR/paths" "$DIR/boot-named"
