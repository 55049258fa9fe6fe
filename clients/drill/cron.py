#!/usr/bin/env python3
"""
A cron job of the mixed drill (`quota-guard drill --mixed`), in Python: run after run until the
file $QG_DRILL_STOP exists, each run a region's chart, page by page, as a real job calls the
upstream: spend through the decision API, call the simulator, settle what happened, and the run
recorded in quota-guard's history when it ends. Fail-open on even runs, fail-closed on odd ones.

At the end the journal is replayed until it is empty (or 30 s have passed), and one JSON line is
printed: the runs, the spends by reason, the pages, the quotaExceeded answers and the journal's
lines left. Everything comes from the environment the drill sets (see src/drill/mixed.ts).
"""

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.environ["QG_DRILL_CLIENT_DIR"])
from quota_guard import QuotaGuard  # noqa: E402

env = os.environ
qg = QuotaGuard(env["QG_DRILL_URLS"], token=env["QG_DRILL_TOKEN"], deadline=float(env["QG_DRILL_DEADLINE"]))
credential, job, sim, key = env["QG_DRILL_CREDENTIAL"], env["QG_DRILL_JOB"], env["QG_DRILL_SIM_URL"], env["QG_DRILL_SIM_KEY"]
pages_per_run, interval = int(env["QG_DRILL_PAGES"]), int(env["QG_DRILL_INTERVAL_MS"]) / 1000
regions, day_end, stop = env["QG_DRILL_REGIONS"].split(","), int(env["QG_DRILL_DAY_END_MS"]), env["QG_DRILL_STOP"]
journal = qg.journal_path
summary = {"runs": 0, "spends": 0, "reasons": {}, "pages": 0, "quotaExceeded": 0, "upstreamErrors": 0}
tokens = {}


def page(run, n, region):
    """One page of the region's chart: False when the run ends here."""
    d = run.spend(method="videos.list", tag=f"{job}:{region}", fail_mode="open" if n % 2 == 0 else "closed")
    summary["spends"] += 1
    summary["reasons"][d.reason] = summary["reasons"].get(d.reason, 0) + 1
    if not d.allowed:
        return False
    q = {"part": "snippet", "chart": "mostPopular", "regionCode": region, "maxResults": 50, "key": key}
    if tokens.get(region):
        q["pageToken"] = tokens[region]
    try:
        with urllib.request.urlopen(f"{sim}/videos?{urllib.parse.urlencode(q)}", timeout=10) as res:
            body = json.load(res)
    except urllib.error.HTTPError as e:
        text = e.read().decode(errors="replace")
        if e.code == 403 and "quotaExceeded" in text:
            summary["quotaExceeded"] += 1
            run.settle(d, "exhausted", until=day_end, reason="quotaExceeded")
            return False
        summary["upstreamErrors"] += 1
        run.settle(d, "sent")  # the upstream answered: it charged the call
        run.end("failed", f"the upstream answered HTTP {e.code}")
        return False
    except OSError as e:
        summary["upstreamErrors"] += 1
        refused = isinstance(getattr(e, "reason", e), ConnectionRefusedError)
        run.settle(d, "never-sent" if refused else "sent")
        run.end("unavailable", f"the upstream could not be reached: {e}")
        return False
    run.settle(d, "sent")
    run.pages += 1
    run.items += len(body.get("items", []))
    summary["pages"] += 1
    tokens[region] = body.get("nextPageToken")
    return True


def journal_left():
    try:
        with open(journal, encoding="utf-8") as f:
            return sum(1 for line in f if line.strip())
    except FileNotFoundError:
        return 0


while not os.path.exists(stop):
    started = time.monotonic()
    n = summary["runs"]
    summary["runs"] += 1
    region = regions[n % len(regions)]
    with qg.run(credential, f"{job}:{n}") as run:
        for _ in range(pages_per_run):
            if not page(run, n, region):
                break
    while time.monotonic() - started < interval and not os.path.exists(stop):
        time.sleep(min(0.05, max(0.0, interval - (time.monotonic() - started))))

# What the journal still holds is sent now, within 30 s.
end = time.monotonic() + 30
while journal_left() > 0 and time.monotonic() < end:
    qg.replay()
    if journal_left() > 0:
        time.sleep(0.5)
qg.close()
summary["journalLeft"] = journal_left()
print(json.dumps(summary), flush=True)
