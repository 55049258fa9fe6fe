"""
quota-guard decision API client: one file, Python's standard library only.

    from quota_guard import QuotaGuard
    qg = QuotaGuard("http://127.0.0.1:9464", token=os.environ.get("QUOTA_GUARD_TOKEN"))
    d = qg.spend("default", method="videos.list", tag="trending:US")
    if not d.allowed:
        print("stop; resume at", d.resume_at); ...
    ... call the upstream ...
    qg.settle(d, "sent")          # or "never-sent" (refund), "exhausted" (blocks the bucket)

    with qg.run("default", "trending:US") as run:   # recorded in `quota-guard history`
        d = run.spend(method="videos.list")       # counted in the run; a denial stops it
        ...
        run.pages += 1; run.items += len(items)

One keep-alive connection per object. Each spend carries an entry id (generated unless given): a
spend sent again after a lost answer is answered with its first decision and charged once, so
spend() retries safely. When quota-guard cannot be reached (or its store is down) the call site's
fail mode decides: "open" lets the call through unrecorded, "closed" (the default) refuses it.
Denials are values; exceptions (QuotaGuardError) only for a request quota-guard refuses (a bad
token, an unknown method, an entry id reused for another spend).

docs/http-api.md describes the protocol.
"""

import http.client
import json
import secrets
import time
import urllib.parse

__all__ = ["QuotaGuard", "Decision", "QuotaGuardError", "Run"]

MAX_REASON = 300


class QuotaGuardError(Exception):
    """quota-guard refused the request (4xx): a mistake to fix, not an outage."""

    def __init__(self, status, code, message, field=None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.field = field


class Decision:
    """One spend's answer. `allowed` is what the job acts on."""

    def __init__(self, answer, entry, credential, fail_mode=None):
        self.answer = answer
        self.entry = answer.get("entry", entry)
        self.credential = answer.get("credential", credential)
        self.allowed = bool(answer.get("allowed"))
        # allowed, budget, blocked, store-down, or (not from the server) fail-open / unreachable
        self.reason = answer.get("reason", "unreachable")
        self.replayed = bool(answer.get("replayed"))
        self.remaining = answer.get("remaining")
        self.retry_after_ms = answer.get("retryAfterMs", 0)
        self.resume_at = answer.get("resumeAt")
        self.resume_at_ms = answer.get("resumeAtMs")
        self.limited_by = answer.get("limitedBy")
        self.blocked_until = answer.get("blockedUntil")
        self.fail_mode = fail_mode

    @property
    def recorded(self):
        """Whether quota-guard holds this spend (only then is there anything to settle)."""
        return self.allowed and self.reason == "allowed"

    def __repr__(self):
        return f"Decision(allowed={self.allowed}, reason={self.reason!r}, entry={self.entry!r})"


class _Unreachable(Exception):
    pass


def _now_ms():
    return int(time.time() * 1000)


def _one_line(text):
    """A reason as the run history takes it: one line of at most MAX_REASON characters."""
    line = " ".join("".join(c if c.isprintable() else " " for c in str(text)).split())
    return line if len(line) <= MAX_REASON else line[: MAX_REASON - 1] + "\u2026"


class Run:
    """One run of a job, counted as it goes and recorded in quota-guard's run history when the
    `with` block ends: done; stopped (or unavailable) by the first denial of one of its spends, an
    exhausted quota settled, or `end()`; failed when an exception leaves the block (it is raised
    on); aborted on Ctrl-C. `recorded` is the answer then, None when quota-guard could not be
    reached. Count `pages` and `items` yourself; `units` counts what the run's spends charged."""

    def __init__(self, qg, credential, job):
        self._qg = qg
        self.credential = credential
        self.job = job
        self.id = secrets.token_urlsafe(12)
        self.started_at = _now_ms()
        self.pages = 0
        self.items = 0
        self.units = 0
        self.outcome = None
        self.reason = None
        self.recorded = None

    def spend(self, method=None, bucket=None, cost=None, tier="scheduled", tag=None, entry=None,
              fail_mode=None):
        """`QuotaGuard.spend` on the run's credential, counted in the run."""
        d = self._qg.spend(self.credential, method=method, bucket=bucket, cost=cost, tier=tier,
                           tag=tag, entry=entry, fail_mode=fail_mode)
        if d.recorded:
            self.units += d.answer.get("cost", 0)
        elif not d.allowed:
            why = d.reason + (f", resume at {d.resume_at}" if d.resume_at else "")
            self.end("unavailable" if d.reason in ("store-down", "unreachable") else "stopped", why)
        return d

    def settle(self, decision, outcome, until=None, reason=None):
        """`QuotaGuard.settle`: a refund is taken off the run's units, an exhausted quota stops it."""
        ok = self._qg.settle(decision, outcome, until=until, reason=reason)
        if ok and decision.recorded and outcome == "never-sent":
            self.units -= decision.answer.get("cost", 0)
        if outcome == "exhausted":
            self.end("stopped", reason or "exhausted")
        return ok

    def end(self, outcome, reason):
        """How the run ended when not done ("stopped", "unavailable", "failed"…): the first kept."""
        if self.outcome is None:
            self.outcome, self.reason = outcome, reason

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if isinstance(exc, KeyboardInterrupt):
            self.outcome, self.reason = "aborted", "interrupted"
        elif isinstance(exc, SystemExit):
            if exc.code not in (None, 0):
                self.end("failed", f"exited with status {exc.code}")
        elif exc is not None:
            self.outcome, self.reason = "failed", f"{exc_type.__name__}: {exc}"
        try:
            self.recorded = self._qg.record_run(
                self.credential, self.job, self.started_at, _now_ms(), self.outcome or "done",
                pages=self.pages, units=max(0, self.units), items=self.items, reason=self.reason,
                run_id=self.id)
        except QuotaGuardError:
            if exc is None:
                raise
        return False


class QuotaGuard:
    def __init__(self, url, token=None, timeout=5.0, fail_mode="closed", attempts=3):
        u = urllib.parse.urlsplit(url)
        self._https = u.scheme == "https"
        self._host = u.hostname or "127.0.0.1"
        self._port = u.port or (443 if self._https else 80)
        self._token = token
        self._timeout = timeout
        self._attempts = max(1, attempts)
        self.fail_mode = fail_mode
        self._conn = None

    # -- the protocol -------------------------------------------------------------------------

    def spend(self, credential, method=None, bucket=None, cost=None, tier="scheduled", tag=None,
              entry=None, fail_mode=None):
        """One decision. `fail_mode` ("open"/"closed") overrides the object's for this call site."""
        entry = entry or secrets.token_urlsafe(12)
        body = {"credential": credential, "tier": tier, "entry": entry}
        for k, v in (("method", method), ("bucket", bucket), ("cost", cost), ("tag", tag)):
            if v is not None:
                body[k] = v
        mode = fail_mode or self.fail_mode
        try:
            answer = self._call("POST", "/v1/spend", body)
        except _Unreachable:
            return self._down(entry, credential, mode, "unreachable")
        if answer.get("reason") == "store-down":
            return self._down(entry, credential, mode, "store-down")
        return Decision(answer, entry, credential)

    def settle(self, decision, outcome, until=None, reason=None):
        """Report what became of the call: "sent", "never-sent" (refund) or "exhausted" (block
        the bucket until `until`, an ISO time or epoch ms; default the upstream's next reset).
        Idempotent. Returns False when quota-guard could not be reached (the report is lost)."""
        if not decision.recorded:
            return True
        body = {"credential": decision.credential, "entry": decision.entry, "outcome": outcome}
        if until is not None:
            body["until"] = until
        if reason is not None:
            body["reason"] = reason
        try:
            self._call("POST", "/v1/report", body)
            return True
        except _Unreachable:
            return False

    def run(self, credential, job):
        """A run of `job` (e.g. "trending:US") spending `credential`, recorded when it ends:
        `with qg.run("default", "trending:US") as run: ...` (see Run)."""
        return Run(self, credential, job)

    def record_run(self, credential, job, started_at, finished_at, outcome, pages=0, units=0,
                   items=0, reason=None, run_id=None):
        """Record one finished run in the run history (`quota-guard history` shows it under the
        token's name). Times in epoch ms; outcome one of done, stopped, aborted, unavailable,
        failed. Sent again after a lost answer with the same run id, it is recorded once. Returns
        the answer, or None when quota-guard could not be reached (the run is not recorded)."""
        body = {"credential": credential, "id": run_id or secrets.token_urlsafe(12), "job": job,
                "startedAt": int(started_at), "finishedAt": int(finished_at), "outcome": outcome,
                "pages": pages, "units": units, "items": items}
        if reason is not None:
            body["reason"] = _one_line(reason)
        try:
            return self._call("POST", "/v1/runs", body)
        except _Unreachable:
            return None

    def status(self, credential=None):
        q = "?" + urllib.parse.urlencode({"credential": credential}) if credential else ""
        return self._call("GET", "/v1/status" + q, None)

    def close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- transport ----------------------------------------------------------------------------

    @staticmethod
    def _down(entry, credential, mode, why):
        open_ = mode == "open"
        answer = {"allowed": open_, "reason": "fail-open" if open_ else why, "entry": entry,
                  "credential": credential}
        return Decision(answer, entry, credential, fail_mode=mode)

    def _connection(self):
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._conn = cls(self._host, self._port, timeout=self._timeout)
        return self._conn

    def _call(self, method, path, body):
        """The answer's JSON. The same request (same entry id) is sent again after a lost
        connection or answer: quota-guard answers a spend it has seen with its first decision."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        for attempt in range(self._attempts):
            try:
                conn = self._connection()
                conn.request(method, path, body=data, headers=headers)
                res = conn.getresponse()
                payload = res.read()
                if res.getheader("connection", "").lower() == "close":
                    self.close()
            except (OSError, http.client.HTTPException):
                # A kept-alive connection the server or the network dropped: try a fresh one at
                # once, then back off.
                self.close()
                if 0 < attempt + 1 < self._attempts:
                    time.sleep(0.05 * attempt)
                continue
            try:
                answer = json.loads(payload)
            except ValueError:
                answer = {}
            if res.status == 200:
                return answer
            if res.status >= 500:
                if attempt + 1 < self._attempts:
                    time.sleep(0.05 * (attempt + 1))
                continue
            err = answer.get("error", {})
            raise QuotaGuardError(res.status, err.get("code", "?"), err.get("message", ""), err.get("field"))
        raise _Unreachable()
