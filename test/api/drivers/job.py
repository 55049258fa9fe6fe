"""
A cron-style job for the outage tests: run after run until the file $QG_STOP exists, each run one
spend through the Python client (fail-open on even runs, fail-closed on odd ones), the upstream
called when allowed and settled `sent`, the run recorded. Prints one JSON summary: the runs, the
slowest client call (ms) and what each decision was.
"""

import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.environ["QG_CLIENT_DIR"])
from quota_guard import QuotaGuard  # noqa: E402

qg = QuotaGuard(os.environ["QG_URL"], token=os.environ["QG_TOKEN"], deadline=float(os.environ["QG_DEADLINE"]))
credential, prefix, sim = os.environ["QG_CREDENTIAL"], os.environ["QG_PREFIX"], os.environ["QG_SIM"]
slowest = {"ms": 0, "call": None}
reasons = {}
runs = 0


def timed(call, fn):
    t = time.monotonic()
    try:
        return fn()
    finally:
        ms = (time.monotonic() - t) * 1000
        if ms > slowest["ms"]:
            slowest.update(ms=round(ms), call=call)


while not os.path.exists(os.environ["QG_STOP"]):
    n = runs
    runs += 1
    with qg.run(credential, f"{prefix}:{n}") as run:
        mode = "open" if n % 2 == 0 else "closed"
        d = timed("spend", lambda: run.spend(method="videos.list", tag=f"{prefix}:{n}", fail_mode=mode))
        reasons[d.reason] = reasons.get(d.reason, 0) + 1
        if d.allowed:
            url = f"{sim}/videos?part=snippet&chart=mostPopular&regionCode=US&maxResults=5&key=k-test"
            with urllib.request.urlopen(url, timeout=10) as res:
                res.read()
            timed("settle", lambda: run.settle(d, "sent"))
            run.pages += 1
        t = time.monotonic()
    ms = (time.monotonic() - t) * 1000  # the run's record, sent when the block ends
    if ms > slowest["ms"]:
        slowest.update(ms=round(ms), call="record_run")
    time.sleep(0.05)
timed("close", qg.close)
print(json.dumps({"runs": runs, "slowest": slowest, "reasons": reasons}))
