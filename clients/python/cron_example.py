#!/usr/bin/env python3
"""
The regional trending job as a cron script: for each region, spend; on a denial stop the run and
log when to resume; call the upstream; settle what happened. Each region's run is recorded in
quota-guard's run history (`quota-guard history` lists it under the token's name): done, stopped
by the budget or an exhausted quota, unavailable or failed.

    QUOTA_GUARD_URL=http://127.0.0.1:9464 QUOTA_GUARD_TOKEN=... YOUTUBE_API_KEY=... \
      python3 cron_example.py US GB DE

Environment: QUOTA_GUARD_URL (one URL, or several separated by commas: the next is tried when one
does not answer), QUOTA_GUARD_TOKEN (omit on loopback without a tokens file), QUOTA_GUARD_CA_FILE
(a PEM file of CAs to trust for https), QUOTA_GUARD_JOURNAL (the journal's path; default
~/.local/state/quota-guard/journal.jsonl), YOUTUBE_API_KEY, YOUTUBE_BASE_URL (default
https://www.googleapis.com/youtube/v3), QUOTA_GUARD_CREDENTIAL (default "default").

When quota-guard does not answer within its deadline (5 s a call), the spend is made anyway (this
call site fails open), written to the journal, and recorded when quota-guard answers again (the
next call, the end of the run, or the next cron run); each such spend is one line on stderr.

Exit status, as `quota-guard fetch` (README.md, "Running the jobs from cron"): 0 done; 75 stopped by
the budget or an exhausted quota (the next run resumes); 69 the upstream could not be used
(unreachable, timed out, or answered an error: the run is recorded unavailable or failed); 78
quota-guard refused the token, credential or request, or YOUTUBE_API_KEY is not set (a person must
fix it); 130 interrupted (Ctrl-C: the run is recorded aborted). The regions after the first that
does not end done are left for the next run.
"""

import http.client
import json
import os
import socket
import sys
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quota_guard import QuotaGuard, QuotaGuardError  # noqa: E402


def log(**fields):
    print(json.dumps(fields), flush=True)


def fetch_region(run, base, key, region):
    """One region's chart, spent and settled in the run: 0 done, 75 stopped, 69 upstream unusable."""
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
        return 69
    except (OSError, http.client.HTTPException) as e:
        # Refused or not resolved: the upstream never got it, take the units back. A timeout or a
        # connection lost mid-answer may have reached it: it stays charged.
        reason = getattr(e, "reason", e)
        never = isinstance(reason, (ConnectionRefusedError, socket.gaierror))
        run.settle(d, "never-sent" if never else "sent")
        run.end("unavailable", f"the upstream could not be reached: {str(reason) or type(e).__name__}")
        log(event="unreachable", region=region, refunded=never)
        return 69
    return 0


def main(regions):
    qg = QuotaGuard(os.environ.get("QUOTA_GUARD_URL", "http://127.0.0.1:9464"),
                    token=os.environ.get("QUOTA_GUARD_TOKEN"),
                    ca_file=os.environ.get("QUOTA_GUARD_CA_FILE") or None)
    base = os.environ.get("YOUTUBE_BASE_URL", "https://www.googleapis.com/youtube/v3")
    key = os.environ.get("YOUTUBE_API_KEY")
    if not key:
        print("cron_example: set YOUTUBE_API_KEY to the upstream's API key", file=sys.stderr)
        return 78
    credential = os.environ.get("QUOTA_GUARD_CREDENTIAL", "default")
    try:
        for region in regions:
            with qg.run(credential, f"trending:{region}") as run:
                code = fetch_region(run, base, key, region)
            if code != 0:
                return code
        return 0
    except QuotaGuardError as e:
        # Not an outage: the token, the credential or the request is wrong.
        print(f"cron_example: quota-guard refused the request: {e}", file=sys.stderr)
        return 78
    except KeyboardInterrupt:
        print("cron_example: interrupted", file=sys.stderr)
        return 130
    finally:
        # What the journal holds is sent now if quota-guard answers (else at the next run).
        qg.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["US"]))
