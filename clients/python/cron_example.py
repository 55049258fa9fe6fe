#!/usr/bin/env python3
"""
The regional trending job as a cron script: for each region, spend; on a denial stop the run and
log when to resume; call the upstream; settle what happened. Each region's run is recorded in
quota-guard's run history (`quota-guard history` lists it under the token's name): done, stopped
by the budget or an exhausted quota, unavailable or failed.

    QUOTA_GUARD_URL=http://127.0.0.1:9464 QUOTA_GUARD_TOKEN=... YOUTUBE_API_KEY=... \
      python3 cron_example.py US GB DE

Environment: QUOTA_GUARD_URL, QUOTA_GUARD_TOKEN (omit on loopback without a tokens file),
YOUTUBE_API_KEY, YOUTUBE_BASE_URL (default https://www.googleapis.com/youtube/v3),
QUOTA_GUARD_CREDENTIAL (default "default"). Exit 0 when done, 75 when stopped by the budget.
"""

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quota_guard import QuotaGuard  # noqa: E402


def log(**fields):
    print(json.dumps(fields), flush=True)


def fetch_region(run, base, key, region):
    """One region's chart, spent and settled in the run; 75 when the budget stopped it."""
    # A cheap call: let it through if quota-guard is unreachable (fail open at this call site).
    d = run.spend(method="videos.list", tag=f"trending:{region}", fail_mode="open")
    if not d.allowed:
        log(event="stopped", region=region, reason=d.reason, resumeAt=d.resume_at)
        return 75
    q = urllib.parse.urlencode({"part": "snippet,statistics", "chart": "mostPopular",
                                "regionCode": region, "maxResults": 50, "key": key})
    try:
        with urllib.request.urlopen(f"{base}/videos?{q}", timeout=10) as res:
            page = json.load(res)
        run.settle(d, "sent")
        run.pages += 1
        run.items += len(page.get("items", []))
        log(event="page", region=region, videos=len(page.get("items", [])))
    except urllib.error.HTTPError as e:
        body = e.read().decode(errors="replace")
        if e.code == 403 and "quotaExceeded" in body:
            run.settle(d, "exhausted", reason="quotaExceeded")
            log(event="stopped", region=region, reason="quotaExceeded")
            return 75
        run.settle(d, "sent")  # the upstream answered: it charged the call
        run.end("failed", f"the upstream answered HTTP {e.code}")
        log(event="error", region=region, status=e.code)
    except (urllib.error.URLError, ConnectionError) as e:
        # Never reached the upstream (refused, DNS): take the units back.
        reason = getattr(e, "reason", e)
        refused = isinstance(reason, ConnectionRefusedError) or isinstance(e, ConnectionRefusedError)
        run.settle(d, "never-sent" if refused else "sent")
        run.end("unavailable", f"the upstream could not be reached: {reason}")
        log(event="unreachable", region=region, refunded=refused)
    return 0


def main(regions):
    qg = QuotaGuard(os.environ.get("QUOTA_GUARD_URL", "http://127.0.0.1:9464"),
                    token=os.environ.get("QUOTA_GUARD_TOKEN"))
    base = os.environ.get("YOUTUBE_BASE_URL", "https://www.googleapis.com/youtube/v3")
    key = os.environ["YOUTUBE_API_KEY"]
    credential = os.environ.get("QUOTA_GUARD_CREDENTIAL", "default")
    for region in regions:
        with qg.run(credential, f"trending:{region}") as run:
            if fetch_region(run, base, key, region) == 75:
                return 75
    qg.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["US"]))
