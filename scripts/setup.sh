#!/usr/bin/env bash
# Installs what one purpose of ferry needs on Debian 12, and only what is
# missing: Debian packages with apt-get, test peers with npm ci. Each make
# target names the purposes it needs (Makefile); safe to run again, and it
# prints nothing when everything is present.
#
#   scripts/setup.sh PURPOSE...      install what PURPOSEs need
#   scripts/setup.sh --list PURPOSE...  print their packages, one a line
#   scripts/setup.sh --missing PURPOSE...  print those not installed
#
# Purposes (README "Set-up" says what each costs on a fresh machine):
#   build    the compiler, build tools and the libraries ferry links
#   demo     the few peers `make demo` drives (curl, zstd, mke2fs, nbdinfo, qemu-img)
#   test     GoogleTest and every peer the test suites start or drive
#   vm       a real guest on a lazy volume (qemu-system-x86, a kernel)
#   bench    the benchmarks' peers, load generators and web-text corpus
#   fuzz     clang with libFuzzer and the sanitizer runtimes (make fuzz)
#   package  what builds and lints the Debian package (make deb)
#   all      every purpose
set -euo pipefail
cd "$(dirname "$0")/.."

# build: g++ and the libraries the product links (README "Dependencies");
# ccache keeps compiled objects across checkouts, mold links in seconds.
BUILD_PKGS=(g++ cmake ninja-build pkg-config ccache mold
  libboost-dev libssl-dev libzstd-dev libsqlite3-dev libpq-dev zlib1g-dev libbrotli-dev libext2fs-dev
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev libnghttp2-dev libisal-dev)
# demo: what scripts/demo.sh runs besides ferry and its test S3 server.
DEMO_PKGS=(curl python3 zstd e2fsprogs qemu-utils libnbd-bin)
# test: GoogleTest and GoogleMock (unit tests), Google Benchmark (its
# micro-benchmarks are built with the tests), universal-ctags
# (scripts/code_limits.py finds functions with it), and the peers:
# awscli (with its bundled botocore), boto3 (with Debian's botocore, which
# awscli leaves alone) and rclone as S3 clients; qemu-utils,
# libnbd-bin (nbdinfo, nbdcopy, nbdfuse) and fuse3 the NBD clients of the
# volume tests, nbdkit their reference server; postgresql the server the
# PostgreSQL state store is tested against (a throwaway cluster,
# testing/pg/); brotli decodes the cache's br answers; chromium the real
# browser of the cache and dashboard tests, headless; nghttp2-client
# (nghttp, h2load) and python3-h2 the cache's HTTP/2 peers; nginx the
# origin of one cache test; prometheus for promtool, which lints every
# daemon's metrics (its server is never started); nodejs and npm run
# s3rver and Azurite (testing/peers, pinned by its package-lock.json);
# Python's HTML documentation and jQuery are the pages the browser and
# coding tests fetch through the cache; gdb, man-db and binutils check
# what `make install` installs.
TEST_PKGS=(libgtest-dev libgmock-dev libbenchmark-dev universal-ctags
  awscli python3-boto3 rclone nodejs npm python3 openssl curl zstd brotli time sqlite3 nginx
  qemu-utils libnbd-bin fuse3 nbdkit e2fsprogs postgresql chromium
  nghttp2-client python3-h2 prometheus python3.11-doc libjs-jquery gdb man-db binutils)
# vm: a real guest on a lazy volume (tests/integration/vm_boot_test.sh, the
# VM section of bench/volume_bench.sh): qemu-system-x86 (with its firmware),
# run under TCG; linux-image-cloud-amd64 is Debian's cloud kernel, with NVMe
# and ext4 built in, so it boots a root on -device nvme with no initrd
# (testing/vm/make_rootfs.sh makes that root).
VM_PKGS=(qemu-system-x86 linux-image-cloud-amd64)
# bench: the peers ferry is measured beside (awscli, rclone, nginx,
# Varnish, nbdkit; hitch ends TLS in front of Varnish, which speaks none),
# the load generators (wrk, h2load) and the cache benchmark's corpus: real
# web text from Debian packages (HTML, JavaScript, CSS, JSON); debootstrap
# makes the fresh machine bench/build_time.sh times `make demo` on.
BENCH_PKGS=(libbenchmark-dev awscli rclone nginx varnish hitch wrk nghttp2-client time debootstrap bc
  qemu-utils libnbd-bin nbdkit e2fsprogs curl zstd
  python3.11-doc libjs-jquery libjs-bootstrap5 node-react-dom libjs-highlight.js
  node-lodash iso-codes)
# fuzz: `make fuzz` (scripts/fuzz.sh).
FUZZ_PKGS=(clang libclang-rt-14-dev)
# package: `make deb` (scripts/make_deb.sh) and its lint.
PACKAGE_PKGS=(dpkg-dev binutils lintian)

list=0 only_missing=0
case "${1:-}" in
  --list) list=1; shift ;;
  --missing) only_missing=1; shift ;;
esac
[ $# -gt 0 ] || { echo "usage: $0 [--list|--missing] PURPOSE... (build demo test vm bench fuzz package all)" >&2; exit 2; }

wanted=()
npm_peers=0
add_purpose() {
  case "$1" in
    build) wanted+=("${BUILD_PKGS[@]}") ;;
    demo) wanted+=("${DEMO_PKGS[@]}") ;;
    test) wanted+=("${TEST_PKGS[@]}"); npm_peers=1 ;;
    vm) wanted+=("${VM_PKGS[@]}") ;;
    bench) wanted+=("${BENCH_PKGS[@]}") ;;
    fuzz) wanted+=("${FUZZ_PKGS[@]}") ;;
    package) wanted+=("${PACKAGE_PKGS[@]}") ;;
    all) for p in build demo test vm bench fuzz package; do add_purpose "$p"; done ;;
    *) echo "setup: unknown purpose '$1' (build demo test vm bench fuzz package all)" >&2; exit 2 ;;
  esac
}
for p in "$@"; do add_purpose "$p"; done
mapfile -t wanted < <(printf '%s\n' "${wanted[@]}" | awk '!seen[$0]++')

if [ $list = 1 ]; then
  printf '%s\n' "${wanted[@]}"
  exit 0
fi

# node, npm and python3 may come from elsewhere on a developer machine; only
# ask apt for them when the commands are absent too.
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && continue
  case "$p" in
    nodejs) command -v node >/dev/null && continue ;;
    npm) command -v npm >/dev/null && continue ;;
    python3) [ -x /usr/bin/python3 ] && continue ;;
  esac
  missing+=("$p")
done
if [ $only_missing = 1 ]; then
  [ ${#missing[@]} -eq 0 ] || printf '%s\n' "${missing[@]}"
  exit 0
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup ($*): installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  # nginx, varnish and hitch start their system services on install (nginx
  # on port 80). The tests and benchmarks need none, and a container has no
  # init to run them: a policy-rc.d answering 101 (the Docker convention)
  # keeps every service stopped during this install. An existing one is
  # left alone.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    trap '$SUDO rm -f "$policy"' EXIT
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Under systemd they would still start at the next boot: not for a
  # test's sake.
  if [ -d /run/systemd/system ]; then
    for p in "${missing[@]}"; do
      case "$p" in nginx | varnish | hitch | prometheus) $SUDO systemctl disable -q --now "$p" 2>/dev/null || true ;; esac
    done
  fi
fi

# npm test peers (s3rver, azurite), pinned by testing/peers/package-lock.json.
if [ $npm_peers = 1 ] && { [ ! -x testing/peers/node_modules/.bin/s3rver ] ||
   [ ! -x testing/peers/node_modules/.bin/azurite-blob ] ||
   [ testing/peers/package-lock.json -nt testing/peers/node_modules/.package-lock.json ]; }; then
  echo "setup: npm ci (test peers)"
  (cd testing/peers && npm ci --no-audit --no-fund --silent)
fi
