# One file on purpose (a shop copies it or installs it alone), hence over 600 lines.
"""
quota-guard decision API client: one file, Python's standard library only (Python >= 3.8).
A shop copies this file or installs it with pip (pyproject.toml beside it); it is one file on
purpose.

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

- One deadline per call (5 s unless `deadline=` says otherwise, per client or per call): within it
  a refused or reset connection is retried with backoff and jitter, and the next service URL is
  tried when one does not answer. A hung service costs at most the deadline.
- Each spend carries an entry id: sent again, it is answered with its first decision and charged
  once. A spend whose answer is lost (the deadline passed after it was sent), or that the service
  answers `unknown`, is an "unknown" decision: the call site's fail mode decides, and the journal
  resolves it later by its entry id (recorded if it was used, voided if not).
- When quota-guard cannot be reached (or its store is down) the fail mode decides: "open" lets the
  call through and writes it to the journal, "closed" (the default) refuses it.
- The journal (a local file, one JSON object per line, mode 0600, locked, bounded, never holding a
  token) keeps what could not be delivered: fail-open spends, unknown spends, reports, run records.
  It is replayed at the next call that gets an answer, at the end of a run and at close().
- Every fail-open and unknown decision writes one line on stderr.
- Thread-safe: each thread has its own keep-alive connection.
- Denials are values; exceptions: QuotaGuardError (quota-guard refused the request: a bad token,
  an unknown method, an entry id reused for another spend) and QuotaGuardUnavailable (status()
  could not get an answer).

docs/http-api.md describes the protocol and the journal.
"""

import hashlib
import http.client
import json
import os
import random
import secrets
import ssl
import sys
import threading
import time
import urllib.parse

try:
    import fcntl
except ImportError:  # not a Unix: the journal is written without locks
    fcntl = None

__all__ = ["QuotaGuard", "Decision", "QuotaGuardError", "QuotaGuardUnavailable", "Run",
           "SERVER_VERSION", "DEFAULT_DEADLINE", "default_journal_path"]

__version__ = "0.3.0"
#: The quota-guard release whose decision API this client speaks (`serve --decisions` of it or later).
SERVER_VERSION = "0.3.0"
#: Seconds one call may take, retries and failover included.
DEFAULT_DEADLINE = 5.0
#: Seconds one attempt waits for its answer before the next attempt (never past the deadline).
DEFAULT_ATTEMPT_TIMEOUT = 2.0
#: Bytes the journal may hold; a line that does not fit is refused (and said).
DEFAULT_JOURNAL_MAX_BYTES = 1024 * 1024
MAX_REASON = 300
_BACKOFF_FIRST = 0.05
_BACKOFF_MAX = 0.5


class QuotaGuardError(Exception):
    """quota-guard refused the request (4xx): a mistake to fix, not an outage."""

    def __init__(self, status, code, message, field=None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.field = field


class QuotaGuardUnavailable(Exception):
    """No answer from quota-guard within the call's deadline (only status() raises it: the other
    calls apply the fail mode or write the journal). `problems` lists what each URL did."""

    def __init__(self, message, problems=()):
        super().__init__(message)
        self.problems = list(problems)


class Decision:
    """One spend's answer. `allowed` is what the job acts on.

    `reason`: allowed, budget, blocked, store-down (from the service); fail-open (allowed without
    an answer: journalled to be recorded); unreachable (refused: no answer); unknown (the answer
    was lost or the service could not know: allowed or refused by the fail mode, resolved later by
    the journal); journal-full (a fail-open spend refused because the journal could not take it).
    """

    def __init__(self, answer, entry, credential, fail_mode=None):
        self.answer = answer
        self.entry = answer.get("entry", entry)
        self.credential = answer.get("credential", credential)
        self.allowed = bool(answer.get("allowed"))
        self.reason = answer.get("reason", "unreachable")
        self.replayed = bool(answer.get("replayed"))
        self.remaining = answer.get("remaining")
        self.retry_after_ms = answer.get("retryAfterMs", 0)
        self.resume_at = answer.get("resumeAt")
        self.resume_at_ms = answer.get("resumeAtMs")
        self.limited_by = answer.get("limitedBy")
        self.blocked_until = answer.get("blockedUntil")
        self.fail_mode = fail_mode
        # The journal line that settles this decision later ("record" or "void"), if any.
        self.journalled = None
        self._spend = None

    @property
    def recorded(self):
        """Whether quota-guard holds this spend (only then is there anything to report now)."""
        return self.allowed and self.reason == "allowed"

    @property
    def unknown(self):
        """The answer was lost, or the service could not know: resolved later by the journal."""
        return self.reason == "unknown"

    def __repr__(self):
        return f"Decision(allowed={self.allowed}, reason={self.reason!r}, entry={self.entry!r})"


class _NoAnswer(Exception):
    """No answer within the deadline; `sent`: some attempt may have reached the service."""

    def __init__(self, sent, problems):
        super().__init__("; ".join(problems) or "no answer")
        self.sent = sent
        self.problems = problems


class _Attempt(Exception):
    def __init__(self, problem, sent, permanent=False):
        super().__init__(problem)
        self.sent = sent
        self.permanent = permanent


class _JournalRefused(Exception):
    pass


def _now_ms():
    return int(time.time() * 1000)


def _one_line(text):
    """A reason as the run history takes it: one line of at most MAX_REASON characters."""
    line = " ".join("".join(c if c.isprintable() else " " for c in str(text)).split())
    return line if len(line) <= MAX_REASON else line[: MAX_REASON - 1] + "\u2026"


def default_journal_path():
    """$QUOTA_GUARD_JOURNAL, else $XDG_STATE_HOME/quota-guard/journal.jsonl, else
    ~/.local/state/quota-guard/journal.jsonl (the PHP client's default too)."""
    explicit = os.environ.get("QUOTA_GUARD_JOURNAL")
    if explicit:
        return explicit
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "quota-guard", "journal.jsonl")


class _Journal:
    """The local journal: one JSON object per line, appended under an exclusive flock; replayed
    lines are taken out by rewriting the file (a new file renamed over the old one, under the
    lock). A writer that locked a file since renamed over opens the new one."""

    def __init__(self, path, max_bytes):
        self.path = path
        self.max_bytes = max_bytes
        self._skip = None  # (inode, size, mtime) of a file found with nothing for this client

    def _open_locked(self, flags):
        """The journal open (created 0600) and locked exclusively; the caller closes it."""
        while True:
            fd = os.open(self.path, flags | os.O_CREAT, 0o600)
            try:
                if fcntl:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                st = os.fstat(fd)
                try:
                    same = os.stat(self.path).st_ino == st.st_ino
                except FileNotFoundError:
                    same = False
                if same:
                    if st.st_mode & 0o077:
                        os.fchmod(fd, 0o600)
                    return fd
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)  # rewritten meanwhile: lock the new one

    def append(self, line):
        """Append one line; _JournalRefused says why it could not be (full, disk full, unwritable)."""
        data = (json.dumps(line, separators=(",", ":"), ensure_ascii=True) + "\n").encode()
        try:
            os.makedirs(os.path.dirname(self.path) or ".", mode=0o700, exist_ok=True)
            fd = self._open_locked(os.O_WRONLY | os.O_APPEND)
        except OSError as e:
            raise _JournalRefused(f"cannot open {self.path}: {e.strerror or e}") from None
        try:
            size = os.fstat(fd).st_size
            if size + len(data) > self.max_bytes:
                raise _JournalRefused(f"{self.path} is full ({size} of {self.max_bytes} bytes)")
            try:
                written = os.write(fd, data)
                if written != len(data):
                    raise OSError(28, "No space left on device")
                os.fsync(fd)
            except OSError as e:
                try:
                    os.ftruncate(fd, size)  # no half line left behind
                except OSError:
                    pass
                raise _JournalRefused(f"cannot write {self.path}: {e.strerror or e}") from None
        finally:
            os.close(fd)

    def _read(self, fd):
        chunks = []
        os.lseek(fd, 0, os.SEEK_SET)
        while True:
            b = os.read(fd, 65536)
            if not b:
                break
            chunks.append(b)
        lines = []
        for raw in b"".join(chunks).split(b"\n"):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except ValueError:
                line = None
            lines.append((raw, line if isinstance(line, dict) else None))
        return lines

    def pending(self, tok):
        """This client's lines not replayed yet, in order (lines of another token are left)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return []
        if st.st_size == 0 or self._skip == (st.st_ino, st.st_size, st.st_mtime_ns):
            return []
        fd = self._open_locked(os.O_RDONLY)
        try:
            lines = [ln for _, ln in self._read(fd) if ln and ln.get("tok") == tok]
            if not lines:
                st = os.fstat(fd)
                self._skip = (st.st_ino, st.st_size, st.st_mtime_ns)
            return lines
        finally:
            os.close(fd)

    def remove(self, ids):
        """Take the lines with these ids out (a torn line goes too)."""
        fd = self._open_locked(os.O_RDWR)
        try:
            lines = self._read(fd)
            keep = [raw for raw, ln in lines if ln is not None and ln.get("id") not in ids]
            if not keep:
                os.ftruncate(fd, 0)
                return
            if len(keep) == len(lines):
                return
            tmp = f"{self.path}.{os.getpid()}.tmp"
            tfd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(tfd, b"".join(raw + b"\n" for raw in keep))
                os.fsync(tfd)
            finally:
                os.close(tfd)
            os.replace(tmp, self.path)
        finally:
            os.close(fd)

    def replay_lock(self):
        """A lock only one replayer holds (None: another process is replaying)."""
        if not fcntl:
            return -1
        try:
            fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError:
            os.close(fd)
            return None


class Run:
    """One run of a job, counted as it goes and recorded in quota-guard's run history when the
    `with` block ends: done; stopped (or unavailable) by the first denial of one of its spends, an
    exhausted quota settled, or `end()`; failed when an exception leaves the block (it is raised
    on); aborted on Ctrl-C. `recorded` is the answer then, None when it went to the journal.
    Count `pages` and `items` yourself; `units` counts what the service answered as charged
    (refunds taken off). Spends made without the service's answer (fail-open, unknown) are counted
    in `fail_open` and `unknown`, and the run's reason says so."""

    def __init__(self, qg, credential, job):
        self._qg = qg
        self.credential = credential
        self.job = job
        self.id = secrets.token_urlsafe(12)
        self.started_at = _now_ms()
        self.pages = 0
        self.items = 0
        self.units = 0
        self.fail_open = 0
        self.unknown = 0
        self.outcome = None
        self.reason = None
        self.recorded = None

    def spend(self, method=None, bucket=None, cost=None, tier="scheduled", tag=None, entry=None,
              fail_mode=None, deadline=None):
        """`QuotaGuard.spend` on the run's credential, counted in the run."""
        d = self._qg.spend(self.credential, method=method, bucket=bucket, cost=cost, tier=tier,
                           tag=tag, entry=entry, fail_mode=fail_mode, deadline=deadline)
        if d.recorded:
            self.units += d.answer.get("cost", 0)
        elif d.unknown:
            self.unknown += 1
        elif d.reason == "fail-open":
            self.fail_open += 1
        if not d.allowed:
            why = d.reason + (f", resume at {d.resume_at}" if d.resume_at else "")
            down = d.reason in ("store-down", "unreachable", "unknown", "journal-full")
            self.end("unavailable" if down else "stopped", why)
        return d

    def settle(self, decision, outcome, until=None, reason=None, deadline=None):
        """`QuotaGuard.settle`: a refund is taken off the run's units, an exhausted quota stops it."""
        ok = self._qg.settle(decision, outcome, until=until, reason=reason, deadline=deadline)
        if ok and decision.recorded and outcome == "never-sent":
            self.units -= decision.answer.get("cost", 0)
        if outcome == "exhausted":
            self.end("stopped", reason or "exhausted")
        return ok

    def end(self, outcome, reason):
        """How the run ended when not done ("stopped", "unavailable", "failed"…): the first kept."""
        if self.outcome is None:
            self.outcome, self.reason = outcome, reason

    def _reason(self):
        """The run's reason, with its spends made without an answer said."""
        notes = []
        if self.fail_open:
            notes.append(f"{self.fail_open} fail-open")
        if self.unknown:
            notes.append(f"{self.unknown} unknown")
        if not notes:
            return self.reason
        said = " and ".join(notes) + " spend" + ("s" if self.fail_open + self.unknown > 1 else "")
        said += " journalled"
        return f"{self.reason}; {said}" if self.reason else said

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
                pages=self.pages, units=max(0, self.units), items=self.items, reason=self._reason(),
                run_id=self.id)
        except QuotaGuardError:
            if exc is None:
                raise
        return False


class _Url:
    def __init__(self, url):
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"quota-guard URL {url!r}: expected http(s)://host[:port][/path]")
        self.text = url
        self.https = u.scheme == "https"
        self.host = u.hostname
        self.port = u.port or (443 if self.https else 80)
        self.base = u.path.rstrip("/")


def _urls(url):
    """One URL, several separated by commas or spaces, or a list of them."""
    items = url.replace(",", " ").split() if isinstance(url, str) else list(url)
    if not items:
        raise ValueError("quota-guard URL: none given")
    return [_Url(u) for u in items]


class QuotaGuard:
    """A client of one or more `quota-guard serve --decisions` instances over one store.

    url:        "http://host:9464", several ("http://a:9464,http://b:9464") or a list; a path is
                kept ("http://host/quota/" requests /quota/v1/spend)
    token:      the bearer token (None on loopback without a tokens file)
    deadline:   seconds one call may take at most (default 5), retries and failover included
    timeout:    seconds one attempt waits for an answer before the next (default 2, never past
                the deadline)
    fail_mode:  "open" or "closed" (default), when no answer comes; each spend may override it
    attempts:   most attempts per call (default: as many as the deadline allows)
    journal:    the journal's path (default: default_journal_path()); False: no journal (a
                fail-open spend then goes unrecorded, which stderr says)
    journal_max_bytes: the journal's bound (default 1 MiB)
    ca_file:    a PEM file of CAs to trust for https (default: the system's)
    log:        where the one-line notices go (default: sys.stderr)
    """

    def __init__(self, url, token=None, timeout=None, fail_mode="closed", attempts=None, *,
                 deadline=DEFAULT_DEADLINE, journal=None, journal_max_bytes=DEFAULT_JOURNAL_MAX_BYTES,
                 ca_file=None, log=None):
        if fail_mode not in ("open", "closed"):
            raise ValueError(f"fail_mode: 'open' or 'closed', not {fail_mode!r}")
        self._urls = _urls(url)
        self._token = token or None
        self._tok = hashlib.sha256(token.encode()).hexdigest()[:16] if token else None
        self.deadline = float(deadline)
        self._timeout = float(timeout) if timeout is not None else DEFAULT_ATTEMPT_TIMEOUT
        self._attempts = max(1, attempts) if attempts is not None else None
        self.fail_mode = fail_mode
        self._ssl = ssl.create_default_context(cafile=ca_file) if ca_file else None
        self._log = log
        if journal is False:
            self._journal = None
        else:
            self._journal = _Journal(journal or default_journal_path(), journal_max_bytes)
        self._local = threading.local()
        self._preferred = 0
        self._replaying = threading.Lock()
        self._closed = False

    @property
    def journal_path(self):
        return self._journal.path if self._journal else None

    # -- the protocol -------------------------------------------------------------------------

    def spend(self, credential, method=None, bucket=None, cost=None, tier="scheduled", tag=None,
              entry=None, fail_mode=None, deadline=None):
        """One decision. `fail_mode` ("open"/"closed") overrides the object's for this call site."""
        entry = entry or secrets.token_urlsafe(12)
        body = {"credential": credential, "tier": tier, "entry": entry}
        for k, v in (("method", method), ("bucket", bucket), ("cost", cost), ("tag", tag)):
            if v is not None:
                body[k] = v
        mode = fail_mode or self.fail_mode
        at = _now_ms()
        end = self._end(deadline)
        try:
            answer = self._call("POST", "/v1/spend", dict(body, allowUnknown=True), end)
        except _NoAnswer as e:
            why = "unknown" if e.sent else "unreachable"
            return self._without_answer(body, at, mode, why, str(e))
        reason = answer.get("reason")
        if reason == "unknown":
            return self._without_answer(body, at, mode, "unknown", "the service could not know")
        if reason == "store-down":
            return self._without_answer(body, at, mode, "store-down", "answered store-down")
        self._replay(end)
        return Decision(answer, entry, credential)

    def settle(self, decision, outcome, until=None, reason=None, deadline=None):
        """Report what became of the call: "sent", "never-sent" (refund) or "exhausted" (block
        the bucket until `until`, an ISO time or epoch ms; default the upstream's next reset).
        Idempotent. A report that cannot be delivered goes to the journal. Returns False only when
        it could neither be delivered nor journalled."""
        if outcome not in ("sent", "never-sent", "exhausted"):
            raise ValueError(f"outcome: sent, never-sent or exhausted, not {outcome!r}")
        body = {"credential": decision.credential, "entry": decision.entry, "outcome": outcome}
        if until is not None:
            body["until"] = until
        if reason is not None:
            body["reason"] = reason
        if decision.journalled == "record":
            # Used without an answer: its record waits in the journal; what became of it follows.
            if outcome == "sent":
                return True
            line = ("void", {"credential": decision.credential, "entry": decision.entry}) \
                if outcome == "never-sent" else ("report", body)
            ok = self._journal_line(*line, about=f"the {outcome} report of entry {decision.entry}")
            self._replay(self._end(deadline))
            return ok
        if not decision.recorded:
            return True
        return self._deliver("report", body, self._end(deadline))

    def run(self, credential, job):
        """A run of `job` (e.g. "trending:US") spending `credential`, recorded when it ends:
        `with qg.run("default", "trending:US") as run: ...` (see Run)."""
        return Run(self, credential, job)

    def record_run(self, credential, job, started_at, finished_at, outcome, pages=0, units=0,
                   items=0, reason=None, run_id=None, deadline=None):
        """Record one finished run in the run history (`quota-guard history` shows it under the
        token's name). Times in epoch ms; outcome one of done, stopped, aborted, unavailable,
        failed. Sent again with the same run id, it is recorded once. Returns the answer, or None
        when it went to the journal (recorded when the journal is replayed)."""
        body = {"credential": credential, "id": run_id or secrets.token_urlsafe(12), "job": job,
                "startedAt": int(started_at), "finishedAt": int(finished_at), "outcome": outcome,
                "pages": pages, "units": units, "items": items}
        if reason is not None:
            body["reason"] = _one_line(reason)
        answer = {}
        self._deliver("runs", body, self._end(deadline), answer)
        return answer.get("answer")

    def status(self, credential=None, deadline=None):
        """The buckets of the credentials the token may use; QuotaGuardUnavailable without an answer."""
        q = "?" + urllib.parse.urlencode({"credential": credential}) if credential else ""
        end = self._end(deadline)
        try:
            answer = self._call("GET", "/v1/status" + q, None, end)
        except _NoAnswer as e:
            raise QuotaGuardUnavailable(
                f"quota-guard did not answer within {self._budget(deadline):g} s: {e}", e.problems) from None
        self._replay(end)
        return answer

    def replay(self, deadline=None):
        """Send the journal's lines of this client now; returns how many were settled."""
        return self._replay(self._end(deadline))

    def close(self):
        """Replay the journal (within one deadline) and close the connections."""
        if not self._closed:
            self._closed = True
            try:
                self._replay(self._end(None))
            finally:
                self._disconnect()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        if not sys.is_finalizing() and not getattr(self, "_closed", True):
            try:
                self.close()
            except Exception:
                pass

    # -- without an answer --------------------------------------------------------------------

    def _without_answer(self, body, at, mode, why, detail):
        """A spend the service did not decide: the fail mode decides, the journal resolves it."""
        open_ = mode == "open"
        entry, credential = body["entry"], body["credential"]
        what = (f"spend of {body.get('method') or body.get('bucket')} for {credential} "
                f"(entry {entry})")
        if why == "unknown":
            op = "record" if open_ else "void"
            line = dict(body, at=at) if open_ else {"credential": credential, "entry": entry}
            ok = self._journal_line(op, line, about=f"the unknown {what}")
            acted = "used (fail-open)" if open_ else "not used (fail-closed)"
            self._say(f"unknown: {what}: no answer known ({detail}); {acted}; "
                      + (f"journalled to be {'recorded' if open_ else 'voided'} in {self._journal.path}"
                         if ok else "NOT journalled: it may stay "
                         + ("unrecorded" if open_ else "charged")))
            d = Decision({"allowed": open_ and ok, "reason": "unknown", "entry": entry,
                          "credential": credential}, entry, credential, fail_mode=mode)
            d.journalled = op if ok else None
            return d
        if not open_:
            return Decision({"allowed": False, "reason": why, "entry": entry, "credential": credential},
                            entry, credential, fail_mode=mode)
        ok = self._journal_line("record", dict(body, at=at), about=f"the fail-open {what}")
        down = "quota-guard unreachable" if why == "unreachable" else "quota-guard's store is down"
        self._say(f"fail-open: {what}: {down} ({detail}); "
                  + (f"allowed, journalled to be recorded in {self._journal.path}" if ok
                     else "refused: it could not be journalled"))
        d = Decision({"allowed": ok, "reason": "fail-open" if ok else "journal-full", "entry": entry,
                      "credential": credential}, entry, credential, fail_mode=mode)
        d.journalled = "record" if ok else None
        return d

    def _journal_line(self, op, body, about):
        """Append one line for route `op`; False (and one line on stderr) when it cannot be."""
        if self._journal is None:
            self._say(f"journal: none configured: {about} is lost")
            return False
        line = {"id": secrets.token_urlsafe(9), "op": op, "tok": self._tok, "written": _now_ms(),
                "body": body}
        try:
            self._journal.append(line)
            return True
        except _JournalRefused as e:
            self._say(f"journal: {e}: {about} is lost")
            return False

    def _deliver(self, op, body, end, out=None):
        """POST one report or run, or journal it when no answer comes (or the store is down)."""
        try:
            answer = self._call("POST", f"/v1/{op}", body, end)
        except _NoAnswer as e:
            ok = self._journal_line(op, body, about=f"this {'run record' if op == 'runs' else op}")
            if ok:
                self._say(f"journal: {'run' if op == 'runs' else op} not delivered ({e}); journalled "
                          f"in {self._journal.path}")
            return ok
        if out is not None:
            out["answer"] = answer
        self._replay(end)
        return True

    def _say(self, text):
        line = "quota-guard: " + " ".join(str(text).split())
        if self._log is not None:
            self._log(line)
        else:
            print(line, file=sys.stderr, flush=True)

    # -- the journal's replay -------------------------------------------------------------------

    def _replay(self, end):
        """Send this client's journalled lines in order until one gets no answer; returns how
        many were settled (taken out of the journal)."""
        j = self._journal
        if j is None or not self._replaying.acquire(blocking=False):
            return 0
        lock = None
        try:
            if not j.pending(self._tok):
                return 0
            lock = j.replay_lock()
            if lock is None:
                return 0
            lines = j.pending(self._tok)
            done, late, known, dropped = set(), 0, 0, []
            for line in lines:
                op, body = line.get("op"), line.get("body")
                if op not in ("record", "void", "report", "runs") or not isinstance(body, dict):
                    done.add(line.get("id"))
                    continue
                try:
                    answer = self._call("POST", f"/v1/{op}", body, end)
                except _NoAnswer:
                    break
                except QuotaGuardError as e:
                    if e.status == 401 or e.code in ("not_found", "method_not_allowed"):
                        break  # a token or a server that cannot take it yet: the line stays
                    dropped.append(f"{op} {body.get('entry') or body.get('id')}: {e}")
                    done.add(line.get("id"))
                    continue
                done.add(line.get("id"))
                if op == "record" and answer.get("outcome") == "recorded":
                    late += 1
                elif op == "record":
                    known += 1
            if done:
                j.remove(done)
                left = len(lines) - len(done)
                self._say(f"journal: replayed {len(done)} line{'s' if len(done) != 1 else ''} from "
                          f"{j.path} ({late} spend{'s' if late != 1 else ''} recorded late, {known} "
                          f"already known or too old), {left} left")
            for text in dropped:
                self._say(f"journal: dropped a line quota-guard refused: {text}")
            return len(done)
        except OSError as e:
            self._say(f"journal: cannot replay {j.path}: {e.strerror or e}")
            return 0
        finally:
            if lock is not None and lock >= 0:
                os.close(lock)
            self._replaying.release()

    # -- transport ----------------------------------------------------------------------------

    def _budget(self, deadline):
        return self.deadline if deadline is None else float(deadline)

    def _end(self, deadline):
        return time.monotonic() + self._budget(deadline)

    def _connections(self):
        conns = getattr(self._local, "conns", None)
        if conns is None:
            conns = self._local.conns = {}
        return conns

    def _disconnect(self, i=None):
        conns = self._connections()
        for k in list(conns) if i is None else [i]:
            c = conns.pop(k, None)
            if c is not None:
                c.close()

    def _attempt(self, i, method, path, data, headers, timeout):
        """One exchange with URL i: (status, payload); _Attempt when it fails, saying whether the
        request may have reached the service."""
        u = self._urls[i]
        conns = self._connections()
        conn = conns.get(i)
        if conn is None:
            if u.https:
                conn = http.client.HTTPSConnection(u.host, u.port, timeout=timeout, context=self._ssl)
            else:
                conn = http.client.HTTPConnection(u.host, u.port, timeout=timeout)
            conns[i] = conn
        conn.timeout = timeout
        if conn.sock is None:
            try:
                conn.connect()
            except ssl.SSLCertVerificationError as e:
                self._disconnect(i)
                raise _Attempt(f"{u.text}: certificate not trusted ({e.verify_message})", False, True) from None
            except (OSError, http.client.HTTPException) as e:
                self._disconnect(i)
                raise _Attempt(f"{u.text}: {_describe(e)}", False) from None
        else:
            conn.sock.settimeout(timeout)
        try:
            conn.request(method, u.base + path, body=data, headers=headers)
            res = conn.getresponse()
            payload = res.read()
        except (OSError, http.client.HTTPException) as e:
            # Sent, perhaps: a kept-alive connection dropped, or no answer in time.
            self._disconnect(i)
            raise _Attempt(f"{u.text}: {_describe(e)}", True) from None
        if res.getheader("connection", "").lower() == "close":
            self._disconnect(i)
        return res.status, payload

    def _call(self, method, path, body, end):
        """The answer's JSON. Every attempt before `end` (monotonic): a failed one moves to the next
        URL, a full round of failures backs off with jitter. The same request (entry id, run id) is
        answered by the service with its first decision, so sending it again is safe. A 503 saying
        the store is down is final (every instance shares the store)."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": f"quota-guard-python/{__version__}"}
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        n = len(self._urls)
        first = self._preferred
        failed, problems, sent, backoff, permanent = 0, {}, False, _BACKOFF_FIRST, set()
        while len(permanent) < n and (self._attempts is None or failed < self._attempts):
            remaining = end - time.monotonic()
            if remaining <= 0.001:
                break
            i = (first + failed) % n
            failed += 1
            if i in permanent:
                continue
            u = self._urls[i].text
            try:
                status, payload = self._attempt(i, method, path, data, headers,
                                                min(remaining, self._timeout))
            except _Attempt as a:
                sent = sent or a.sent
                problems[u] = str(a)
                if a.permanent:
                    permanent.add(i)
            else:
                try:
                    answer = json.loads(payload)
                except ValueError:
                    answer = None
                answer = answer if isinstance(answer, dict) else {}
                err = answer.get("error") if isinstance(answer.get("error"), dict) else {}
                if status == 200:
                    self._preferred = i
                    return answer
                if status == 503 and err.get("code") == "QG_STORE_UNAVAILABLE":
                    raise _NoAnswer(sent, [f"{u}: its store is down"])
                if status < 500 and status not in (408, 429):
                    raise QuotaGuardError(status, err.get("code", "?"), err.get("message", ""),
                                          err.get("field"))
                # The service (or a proxy before it) could not serve it now: another URL, or later.
                sent = sent or status >= 500
                problems[u] = f"{u}: HTTP {status}"
            if failed % n == 0:
                # Every URL failed once more: wait a little, jittered, before the next round.
                pause = min(backoff * (0.5 + random.random() / 2), end - time.monotonic())
                if pause > 0:
                    time.sleep(pause)
                backoff = min(backoff * 2, _BACKOFF_MAX)
        raise _NoAnswer(sent, list(problems.values()) or ["the deadline passed"])


def _describe(e):
    """What went wrong with an attempt, in a few words."""
    if isinstance(e, TimeoutError) or type(e).__name__ == "timeout":
        return "no answer in time"
    if isinstance(e, ConnectionRefusedError):
        return "connection refused"
    if isinstance(e, http.client.RemoteDisconnected):
        return "connection closed without an answer"
    if isinstance(e, ConnectionResetError):
        return "connection reset"
    if isinstance(e, ssl.SSLError):
        return f"TLS: {e.reason or e}"
    text = getattr(e, "strerror", None) or str(e) or type(e).__name__
    return text
