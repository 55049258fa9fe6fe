"""
quota-guard decision API client: one file, Python's standard library only.

    from quota_guard import QuotaGuard
    qg = QuotaGuard("http://127.0.0.1:9464", token=os.environ.get("QUOTA_GUARD_TOKEN"))
    d = qg.spend("default", method="videos.list", tag="trending:US")
    if not d.allowed:
        print("stop; resume at", d.resume_at); ...
    ... call the upstream ...
    qg.settle(d, "sent")          # or "never-sent" (refund), "exhausted" (blocks the bucket)

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

__all__ = ["QuotaGuard", "Decision", "QuotaGuardError"]


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
