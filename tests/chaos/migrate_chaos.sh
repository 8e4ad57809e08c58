#!/usr/bin/env bash
# Chaos, migrate pool: WORKERS `ferry worker`s on PostgreSQL share one
# OBJECTS-object job between two test servers while, for ROUNDS rounds, one
# fault a round, in turn from a seeded first one (CHAOS_SEED), on a seeded
# random worker: a worker SIGKILLed (its
# supervisor starts another, as systemd would), a random worker SIGSTOPped
# for a second (shorter than its lease) and SIGCONTed, PostgreSQL stopped
# for 2 s and started again, the destination answering 503 to 30% of PUTs
# for 2 s, or resetting 10% of PUTs mid-body for 2 s.
# Then the pool finishes the job, and this checks: the summary is exact,
# `ferry migrate verify` finds the destination equal to the source, and no
# object was uploaded to completion twice (the destination's PUT counter).
source "$(dirname "$0")/../integration/lib.sh"
need curl
need psql

OBJECTS=${OBJECTS:-50000}
WORKERS=${WORKERS:-4}
ROUNDS=${ROUNDS:-10}
RANDOM=${CHAOS_SEED:-1}

start_own_pg

t0=$(date +%s)
seed_source "$OBJECTS" 100 2048
echo "chaos/migrate: $OBJECTS objects seeded in $(($(date +%s) - t0)) s; $WORKERS workers, $ROUNDS rounds, seed ${CHAOS_SEED:-1}"
faults() { curl -sf -XPOST "$B_URL/_admin/faults" -d "$1" >/dev/null; }
faults '{"latency_ms": 15}'
"${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --detach --json --concurrency 8 \
  >"$TMP/job.json" || fail "--detach failed"
JOB=$(json_field job <"$TMP/job.json")

# The supervisor's workers: slot i runs W[i]; a killed one is started again.
declare -a WPID
start_worker() {
  "$FERRY" worker --state "$STATE" --once --lease 3s --json --poll-ms 200 >>"$TMP/w$1.out" 2>>"$TMP/w$1.err" &
  WPID[$1]=$!
}
for i in $(seq 0 $((WORKERS - 1))); do start_worker "$i"; done
state_of() { "${M[@]}" status "$JOB" --json 2>/dev/null | json_field state 2>/dev/null || echo unknown; }

kills=0 stops=0 pg_restarts=0 bursts=0 resets=0
first=$((RANDOM % 5))  # the faults take turns, from a seeded first one
for round in $(seq 1 "$ROUNDS"); do
  sleep 2
  [ "$(state_of)" = completed ] && { echo "round $round: the job is done already"; break; }
  w=$((RANDOM % WORKERS))
  case $(((first + round) % 5)) in
    0)
      kill -KILL "${WPID[$w]}" 2>/dev/null || true
      wait "${WPID[$w]}" 2>/dev/null || true
      start_worker "$w"
      kills=$((kills + 1))
      echo "round $round: SIGKILL worker $w (restarted)"
      ;;
    1)
      kill -STOP "${WPID[$w]}" 2>/dev/null || true
      sleep 1
      kill -CONT "${WPID[$w]}" 2>/dev/null || true
      stops=$((stops + 1))
      echo "round $round: SIGSTOP worker $w for 1 s"
      ;;
    2)
      "$CLUSTER" stop "$TMP/pg" >/dev/null
      sleep 2
      "$CLUSTER" restart "$TMP/pg" >/dev/null || fail "PostgreSQL did not come back"
      pg_restarts=$((pg_restarts + 1))
      echo "round $round: PostgreSQL down for 2 s"
      ;;
    3)
      faults '{"latency_ms": 15, "rules": [{"kind": "503", "op": "put", "probability": 0.3}]}'
      sleep 2
      faults '{"latency_ms": 15}'
      bursts=$((bursts + 1))
      echo "round $round: 503 to 30% of PUTs for 2 s"
      ;;
    4)
      faults '{"latency_ms": 15, "rules": [{"kind": "reset", "op": "put", "probability": 0.1}]}'
      sleep 2
      faults '{"latency_ms": 15}'
      resets=$((resets + 1))
      echo "round $round: 10% of PUTs reset mid-body for 2 s"
      ;;
  esac
  # A worker that exited (--once: nothing runnable when it looked, or a
  # state-store outage) is started again while the job is not done.
  for i in $(seq 0 $((WORKERS - 1))); do kill -0 "${WPID[$i]}" 2>/dev/null || start_worker "$i"; done
done
faults '{}'

# The pool finishes: workers that end are started again until the job is done.
deadline=$(($(date +%s) + 900))
while [ "$(state_of)" != completed ]; do
  [ "$(date +%s)" -lt "$deadline" ] || fail "the job did not complete: $("${M[@]}" status "$JOB" --json)"
  for i in $(seq 0 $((WORKERS - 1))); do kill -0 "${WPID[$i]}" 2>/dev/null || start_worker "$i"; done
  sleep 1
done
for i in $(seq 0 $((WORKERS - 1))); do wait "${WPID[$i]}" 2>/dev/null || true; done

"${M[@]}" status "$JOB" --json >"$TMP/final.json"
/usr/bin/python3 - "$TMP/final.json" "$OBJECTS" <<'PY' || fail "summary not exact: $(cat "$TMP/final.json")"
import json, sys
j = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert j["state"] == "completed", j
assert j["listed"] == n and j["failed"] == 0 and j["pending"] == 0, j
assert j["transferred"] + j["skipped"] == n, j
PY
"${M[@]}" verify --job "$JOB" >"$TMP/verify.out" 2>&1 || fail "verify: $(tail -3 "$TMP/verify.out")"
puts=$(($(stat_of "$B_URL" put requests) - $(stat_of "$B_URL" put errors)))
[ "$puts" = "$OBJECTS" ] || fail "$puts successful PUTs for $OBJECTS objects: one was uploaded twice (or lost)"
echo "chaos/migrate: OK in $(($(date +%s) - t0)) s: $kills kills, $stops stops, $pg_restarts PostgreSQL restarts," \
  "$bursts 503 bursts, $resets reset bursts; summary exact, verify equal, $puts PUTs for $OBJECTS objects," \
  "$(json_field skipped <"$TMP/final.json") found already copied"
