#!/usr/bin/env bash
# make demo: shows every workload ferry has so far, on embedded defaults.
set -euo pipefail
BUILD=${1:-build}
"$BUILD/ferry" version
