#!/usr/bin/env bash
# `make chaos`: the long-fault runs (tests/chaos), each bounded and each
# printing what it did and what it checked:
#   migrate  WORKERS workers on PostgreSQL over an OBJECTS-object job
#            (default 4 and 50,000) through kills, stops, PostgreSQL
#            restarts, 503 and reset bursts
#   volume   three lazy volumes written with FUA and flushes while the
#            daemon is SIGKILLed and the object store flaps
#   cache    an edge and an upper tier hammered while the origin, the tier
#            and the edge are SIGKILLed in turn
# CHAOS_SEED picks the faults' order and targets (default 1); ROUNDS
# overrides each run's rounds. Needs a build (make build).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
export FERRY_BUILD="${FERRY_BUILD:-$ROOT/build}" FERRY_SOURCE="$ROOT"
start=$(date +%s)
failed=0
for run in ${CHAOS_RUNS:-migrate volume cache}; do
  t=$(date +%s)
  echo "== chaos: $run"
  if bash "$ROOT/tests/chaos/${run}_chaos.sh"; then
    echo "== chaos: $run OK in $(($(date +%s) - t)) s"
  else
    rc=$?
    [ $rc = 77 ] && { echo "== chaos: $run skipped"; continue; }
    echo "== chaos: $run FAILED (exit $rc) after $(($(date +%s) - t)) s"
    failed=1
  fi
done
echo "chaos: $(($(date +%s) - start)) s in all"
exit $failed
