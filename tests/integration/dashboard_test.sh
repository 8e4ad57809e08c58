#!/usr/bin/env bash
# `ferry server`'s dashboard in headless Chromium (driven over the DevTools
# protocol, tests/integration/cdp.py): a server with jobs in several states
# (completed, failed with a dead letter, cancelled, and one running slowly
# in the server's own runner) beside a volume daemon and a cache. The page
# must show every job with its state and progress, the running job's rate,
# ETA and pacing, the volumes' hydration and the cache's hit ratio; a
# screenshot is taken; the dead letter is shown with its reason and retried
# with the button (the job then completes); a job started from the form
# runs to completion on the page. No script error on the page.
source "$(dirname "$0")/lib.sh"
need chromium
need curl
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"

start_migrate_pair
seed_source 40 4 1024
# --- jobs in several states ----------------------------------------------------------------
make_objects "$TMP/done-src" 40 2 2048
"${M[@]}" "$TMP/done-src" "$TMP/done-dst" -q >/dev/null || fail "the completed job did not complete"
curl -sf -XPOST "$B_URL/_admin/faults" -d '{"kind": "403", "key_regex": "d01/o00005$", "op": "put"}' >/dev/null
FAILED=$("${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --detach --json | json_field job)
[ -n "$FAILED" ] || fail "no pool job"
"$FERRY" worker --state "$STATE" --once --json >"$TMP/worker.out" 2>&1 || true
[ "$("$FERRY" migrate status "$FAILED" --state "$STATE" --json | json_field state)" = failed ] ||
  fail "the pool job did not fail: $(tail -3 "$TMP/worker.out")"
CANCELLED=$("${M[@]}" "$TMP/done-src" "$TMP/never" --detach --json | json_field job)
"${M[@]}" cancel "$CANCELLED" >/dev/null || fail "cancel"

# --- a volume daemon and a cache for the dashboard's other panels -----------------------
make_file "$TMP/img" $((16 * 65536))
"$FERRY" snapshot create "$TMP/img" "$TMP/repo/base" --chunk-size 64K >/dev/null
start_volume_daemon --pool "$TMP/pool" --hydration-rate 64K
vol create vm-dash --from "$TMP/repo/base" >/dev/null || fail "volume create"
mkdir -p "$TMP/site"
for i in 1 2 3; do seq 1 2000 | sed "s/^/line $i /" >"$TMP/site/page$i.txt"; done
touch -d "2 days ago" "$TMP"/site/*.txt  # fresh by heuristic (10% of their age) for hours
start_static_origin "$TMP/site"
start_cache_named cache --origin "$ORIGIN" --dir "$TMP/cache" --default-ttl 1h
for p in page1 page2 page1 page1; do curl -sf -o /dev/null "$C/$p.txt" || fail "cache GET $p"; done
# 4 lookups, 2 hits: the dashboard shows 50.0 %.

"$FERRY" server --state "$STATE" --listen 127.0.0.1:0 --port-file "$TMP/port" --run-jobs 2 \
  --sample-interval 0.5 --volume-api "127.0.0.1:$API" --cache-metrics "$C/_ferry/metrics" \
  >"$TMP/server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$TMP/port" ] && break; sleep 0.1; done
[ -s "$TMP/port" ] || fail "server did not start: $(cat "$TMP/server.log")"
SERVER="http://127.0.0.1:$(cat "$TMP/port")"
# A slow job for the server's runner: 300 keys of up to 4 KiB at 32 KB/s (about 20 s).
make_objects "$TMP/slow-src" 300 4 4096
SLOW=$(curl -sf -XPOST "$SERVER/v1/jobs" \
  --data-binary "{\"src\": \"$TMP/slow-src\", \"dst\": \"$TMP/slow-dst\", \"options\": {\"bwlimit\": \"32K\", \"concurrency\": 2}}" |
  json_field job)
[ -n "$SLOW" ] || fail "POST /v1/jobs"
curl -sf -XPOST "$B_URL/_admin/faults" -d '{}' >/dev/null  # the dead letter can now be retried

/usr/bin/python3 - "$SERVER" "$TMP" "$FAILED" "$CANCELLED" "$SLOW" <<'PY' || fail "the dashboard in Chromium (see above)"
import json, os, sys, time
sys.path.insert(0, os.path.join(os.environ["FERRY_SOURCE"], "tests/integration"))
from cdp import Browser, check

server, tmp, failed, cancelled, slow = sys.argv[1:6]
with open(os.path.join(tmp, "chromium.log"), "w") as log, \
        Browser(["--window-size=1400,1500", "--user-data-dir=" + os.path.join(tmp, "profile")], log=log) as b:
    b.navigate(server + "/?refresh=500")
    b.wait("document.body.dataset.loaded === 'yes'", what="the first refresh")
    rows = lambda: b.eval("""[...document.querySelectorAll('tr.job')].map(r => ({
        job: r.dataset.job, state: r.dataset.state, pct: Number(r.querySelector('.bar').dataset.pct),
        rate: r.querySelector('.rate').textContent, eta: r.querySelector('.eta').textContent,
        text: r.textContent}))""")
    # The slow job running in the server's runner: a rate, an ETA and its pacing.
    running = b.wait("""(() => { const r = document.querySelector('tr.job[data-job="%s"]');
        return r && r.dataset.state === 'running' && r.querySelector('.rate').textContent !== '–'
          && r.querySelector('.rate').textContent !== '0' && r.querySelector('.eta').textContent !== '–'
          && r.textContent; })()""" % slow, timeout=30, what="the running job's rate and ETA")
    states = {r["job"]: r["state"] for r in rows()}
    check(states.get(failed) == "failed", "failed job shown as %r" % states.get(failed))
    check(states.get(cancelled) == "cancelled", "cancelled job shown as %r" % states.get(cancelled))
    check(list(states.values()).count("completed") >= 1, "no completed job: %r" % states)
    check("src 2 · dst" in running and "closed" in running, "running row lacks pacing or circuits: %r" % running)
    done = [r for r in rows() if r["state"] == "completed"][0]
    check(done["pct"] == 100.0, "completed job's bar at %r%%" % done["pct"])
    # The other panels.
    b.wait("!!document.querySelector('#volumes:not([hidden]) tr.volume[data-volume=\"vm-dash\"]')", what="the volume row")
    hit = b.wait("(t => t !== '–' && t)(document.getElementById('cache-hit').textContent)", what="the cache hit ratio")
    check(hit == "50.0 %", "cache hit ratio shown as %r" % hit)
    encodings = b.eval("[...document.querySelectorAll('#cache-encodings .encoding')].map(e => e.dataset.encoding)")
    check("identity" in encodings, "bytes by encoding: %r" % encodings)
    size = b.screenshot(os.path.join(tmp, "dashboard.png"))
    check(size > 20000, "screenshot of %d bytes" % size)

    # The failed job's dead letter, retried with the button.
    b.eval("document.querySelector('tr.job[data-job=\"%s\"] .dlq-open').click()" % failed)
    letter = b.wait("(r => r && r.textContent)(document.querySelector('#dlq-table tr.dead-letter'))", what="the dead letter")
    check("d01/o00005" in letter, "dead letter row: %r" % letter)
    b.eval("document.getElementById('dlq-retry').click()")
    note = b.wait("(t => t.includes('sent back') && t)(document.getElementById('dlq-note').textContent)", what="the retry's answer")
    b.wait("document.querySelector('tr.job[data-job=\"%s\"]').dataset.state === 'completed'" % failed, timeout=60,
           what="the retried job completing")

    # A job started from the form, watched to completion.
    b.eval("""(() => { const f = document.getElementById('job-form');
        f.src.value = %s; f.dst.value = %s; f.concurrency.value = '4'; f.requestSubmit(); })()""" %
           (json.dumps(os.path.join(tmp, "done-src")), json.dumps(os.path.join(tmp, "form-dst"))))
    job = b.wait("document.getElementById('job-form-result').dataset.job", what="the form's job")
    b.wait("(r => r && r.dataset.state === 'completed')(document.querySelector('tr.job[data-job=\"%s\"]'))" % job,
           timeout=60, what="the form's job completing")
    b.wait("document.querySelector('tr.job[data-job=\"%s\"]').dataset.state === 'completed'" % slow, timeout=60,
           what="the slow job completing")
    b.screenshot(os.path.join(tmp, "dashboard-after.png"))
    errors = b.console_errors()
    check(not errors, "script errors on the page: %r" % errors[:3])
    print("form job", job)
PY
[ "$(tree_digest "$TMP/done-src")" = "$(tree_digest "$TMP/form-dst")" ] || fail "the form's job: trees differ"
[ "$(tree_digest "$TMP/slow-src")" = "$(tree_digest "$TMP/slow-dst")" ] || fail "the slow job: trees differ"
bucket_listing src >"$TMP/la"; bucket_listing dst >"$TMP/lb"
diff "$TMP/la" "$TMP/lb" >/dev/null || fail "destination differs after the dead letter's retry"
echo "dashboard: OK"
