"""
Runs one scenario with the Python client for the tests: argv[1] is JSON { client, steps }; prints
one JSON array, an object per step with what it gave and how long it took (ms). The PHP driver
beside it takes the same JSON and prints the same.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.environ["QG_CLIENT_DIR"])
from quota_guard import QuotaGuard, QuotaGuardError, QuotaGuardUnavailable  # noqa: E402

spec = json.loads(sys.argv[1])
c = spec["client"]
kw = {"token": c.get("token"), "fail_mode": c.get("failMode", "closed")}
for key, name in (("deadline", "deadline"), ("timeout", "timeout"), ("journalMaxBytes", "journal_max_bytes"),
                  ("caFile", "ca_file"), ("journal", "journal")):
    if key in c:
        kw[name] = c[key]
qg = QuotaGuard(c["url"], **kw)
decisions = {}
out = []
for step in spec["steps"]:
    do = step["do"]
    t = time.monotonic()
    r = {"do": do}
    try:
        if do == "spend":
            args = {k: step[k] for k in ("method", "bucket", "cost", "tag", "entry", "deadline") if k in step}
            if "failMode" in step:
                args["fail_mode"] = step["failMode"]
            d = qg.spend(step.get("credential", "default"), **args)
            decisions[step.get("name", "last")] = d
            r.update(allowed=d.allowed, reason=d.reason, entry=d.entry, replayed=d.replayed,
                     journalled=d.journalled)
        elif do == "settle":
            r["ok"] = qg.settle(decisions[step.get("name", "last")], step["outcome"])
        elif do == "status":
            r["credentials"] = [x["id"] for x in qg.status()["credentials"]]
        elif do == "replay":
            r["n"] = qg.replay()
        elif do == "recordRun":
            now = int(time.time() * 1000)
            a = qg.record_run(step.get("credential", "default"), step["job"], now - 1000, now, "done",
                              units=step.get("units", 0), run_id=step.get("id"))
            r["recorded"] = a is not None
        elif do == "close":
            qg.close()
        elif do == "sleep":
            time.sleep(step["ms"] / 1000)
    except QuotaGuardError as e:
        r.update(error="QuotaGuardError", message=str(e), status=e.status)
    except QuotaGuardUnavailable as e:
        r.update(error="QuotaGuardUnavailable", message=str(e))
    r["ms"] = round((time.monotonic() - t) * 1000)
    out.append(r)
print(json.dumps(out))
