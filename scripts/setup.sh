#!/usr/bin/env bash
# Installs what ferry needs to build, test and benchmark on Debian 12, and only
# what is missing: Debian packages with apt-get, test peers with npm ci.
# Safe to run again; it prints nothing when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

# Build: compiler, build tools and the libraries the product links.
BUILD_PKGS=(g++ cmake ninja-build pkg-config ccache
  libboost-dev libssl-dev libzstd-dev libsqlite3-dev libpq-dev zlib1g-dev libbrotli-dev
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libnghttp2-dev
  universal-ctags)  # universal-ctags: scripts/code_limits.py finds functions with it;
                    # libnghttp2-dev: the cache's HTTP/2 (framing, HPACK, flow control)
# Tests and benchmarks: independent peers and the tools that drive them
# (nginx and varnish are the cache benchmark's origin and peer caches, wrk its
# load generator; bench/cache_hit_bench.sh runs them with its own configs;
# qemu-utils, libnbd-bin (nbdinfo, nbdcopy, nbdfuse) and fuse3 (fusermount3)
# are the NBD peers of the volume tests, nbdkit (curl plugin, cow and cache
# filters) the volume benchmark's peer; postgresql the server the PostgreSQL
# state store is tested against, in a throwaway cluster, testing/pg/;
# brotli decodes the cache's br answers in its tests; chromium is the real
# browser of tests/integration/cache_browser_test.sh, headless;
# nghttp2-client (nghttp, h2load) the HTTP/2 peers of the cache's h2 tests,
# python3-h2 the raw client of its abuse tests; prometheus for promtool,
# which lints every daemon's metrics in tests/integration/metrics_promtool_test.sh;
# its server is never started; lintian checks the Debian package, make deb).
PEER_PKGS=(awscli rclone nodejs npm python3 openssl curl zstd brotli time sqlite3
  nginx varnish wrk qemu-utils libnbd-bin fuse3 nbdkit e2fsprogs postgresql chromium
  nghttp2-client python3-h2 prometheus lintian)
# A real guest on a lazy volume (tests/integration/vm_boot_test.sh, the VM
# section of bench/volume_bench.sh): qemu-system-x86 is qemu-system-x86_64
# (with its firmware: seabios, ipxe-qemu and qemu-system-data come as
# dependencies), run under TCG; linux-image-cloud-amd64 is Debian's cloud
# kernel, with NVMe and ext4 built in, so it boots a root file system on
# -device nvme with no initrd (testing/vm/make_rootfs.sh makes that root).
VM_PKGS=(qemu-system-x86 linux-image-cloud-amd64)
# The cache benchmark's corpus: real web text from Debian packages (HTML,
# JavaScript, CSS, JSON) with the images and gzip files that come with it.
CORPUS_PKGS=(python3.11-doc libjs-jquery libjs-bootstrap5 node-react-dom libjs-highlight.js
  node-lodash iso-codes)
# The cache over TLS and HTTP/2 (bench/cache_tls_bench.sh): hitch ends TLS
# (ALPN h2 and http/1.1) in front of Varnish, which speaks no TLS itself;
# its HTTP/2 load generator is h2load (nghttp2-client, above).
TLS_BENCH_PKGS=(hitch)
# `make fuzz` (scripts/fuzz.sh): clang with libFuzzer and the sanitizer runtimes.
FUZZ_PKGS=(clang libclang-rt-14-dev)

missing=()
for p in "${BUILD_PKGS[@]}" "${PEER_PKGS[@]}" "${VM_PKGS[@]}" "${CORPUS_PKGS[@]}" "${TLS_BENCH_PKGS[@]}" "${FUZZ_PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  # node and npm may come from elsewhere on a developer machine; only ask apt
  # for them when the commands are absent too.
  pkgs=()
  for p in "${missing[@]}"; do
    case "$p" in
      nodejs) command -v node >/dev/null || pkgs+=("$p") ;;
      npm) command -v npm >/dev/null || pkgs+=("$p") ;;
      python3) [ -x /usr/bin/python3 ] || pkgs+=("$p") ;;
      *) pkgs+=("$p") ;;
    esac
  done
  if [ ${#pkgs[@]} -gt 0 ]; then
    echo "setup: installing ${pkgs[*]}"
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    $SUDO apt-get update -qq
    # nginx, varnish and hitch start their system services on install (nginx
    # on port 80). The benchmarks need none, and a container has no init to
    # run them: a policy-rc.d answering 101 (the Docker convention) keeps every
    # service stopped during this install. An existing one is left alone.
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      policy=/usr/sbin/policy-rc.d
      printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
      $SUDO chmod 755 "$policy"
      trap '$SUDO rm -f "$policy"' EXIT
    fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
    # Under systemd they would still start at the next boot: not for a
    # benchmark's sake.
    if [ -d /run/systemd/system ]; then
      for p in "${pkgs[@]}"; do
        case "$p" in nginx | varnish | hitch | prometheus) $SUDO systemctl disable -q --now "$p" 2>/dev/null || true ;; esac
      done
    fi
  fi
fi

# npm test peers (s3rver, azurite), pinned by testing/peers/package-lock.json.
if [ ! -x testing/peers/node_modules/.bin/s3rver ] ||
   [ ! -x testing/peers/node_modules/.bin/azurite-blob ] ||
   [ testing/peers/package-lock.json -nt testing/peers/node_modules/.package-lock.json ]; then
  echo "setup: npm ci (test peers)"
  (cd testing/peers && npm ci --no-audit --no-fund --silent)
fi
