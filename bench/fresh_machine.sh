# Sourced by the benchmarks that time what a new user waits for
# (build_time.sh, setup_time.sh): a fresh Debian 12 machine, as a chroot.
#
#   fresh_machine DIR          a new machine in DIR: bookworm (debootstrap,
#                              minbase) with what a new machine of this kind
#                              has (g++, cmake, make, git, python3, curl,
#                              GoogleTest, Google Benchmark), an empty apt
#                              cache and /proc, /sys, /dev mounted
#   in_fresh_machine DIR CMD   runs CMD (bash) in it as root, clean env
#   drop_fresh_machine DIR     unmounts and removes it
#   drop_fresh_machines        every one still mounted (for an EXIT trap)
#
# The base is made once and kept in $FERRY_BENCH_CACHE
# (/var/cache/ferry-bench/bookworm-fresh.tar); every package ferry needs
# beyond it is downloaded from Debian's archive again in each machine.
FRESH_CACHE=${FERRY_BENCH_CACHE:-/var/cache/ferry-bench}
FRESH_MOUNTS=()

fresh_base() {
  local base="$FRESH_CACHE/bookworm-fresh.tar" root
  if [ ! -s "$base" ]; then
    command -v debootstrap >/dev/null || { echo "fresh_machine: debootstrap missing (scripts/setup.sh bench)" >&2; return 1; }
    mkdir -p "$FRESH_CACHE"
    root=$(mktemp -d /tmp/ferry-debootstrap.XXXXXX)
    debootstrap --variant=minbase \
      --include=g++,cmake,make,git,python3,curl,ca-certificates,libgtest-dev,libgmock-dev,libbenchmark-dev \
      bookworm "$root" http://deb.debian.org/debian >"$root.log" 2>&1 ||
      { tail -5 "$root.log" >&2; rm -rf "$root" "$root.log"; return 1; }
    # The archive this machine uses, security updates included.
    cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/" 2>/dev/null &&
      rm -f "$root/etc/apt/sources.list"
    chroot "$root" apt-get clean
    tar -C "$root" -cf "$base.tmp" . && mv "$base.tmp" "$base"
    rm -rf "$root" "$root.log"
  fi
  echo "$base"
}

fresh_machine() {
  local root=$1 base m
  base=$(fresh_base)
  mkdir -p "$root"
  tar -C "$root" -xf "$base"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  for m in proc sys dev dev/pts; do
    mount --bind "/$m" "$root/$m"
    FRESH_MOUNTS+=("$root/$m")
  done
}

in_fresh_machine() {
  local root=$1
  shift
  chroot "$root" env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 CCACHE_DISABLE=1 bash -c "$*"
}

# Never removes a directory that still has the host's /dev or /proc
# mounted in it: --one-file-system, and a check first.
drop_fresh_machine() {
  local root=$1 m
  for m in dev/pts dev sys proc; do umount -l "$root/$m" 2>/dev/null || true; done
  for m in dev/pts dev sys proc; do
    if mountpoint -q "$root/$m"; then
      echo "fresh_machine: $root/$m is still mounted: not removing $root" >&2
      return 1
    fi
  done
  rm -rf --one-file-system "$root"
}

drop_fresh_machines() {
  local i
  for ((i = ${#FRESH_MOUNTS[@]} - 1; i >= 0; i--)); do umount -l "${FRESH_MOUNTS[i]}" 2>/dev/null || true; done
  FRESH_MOUNTS=()
}
