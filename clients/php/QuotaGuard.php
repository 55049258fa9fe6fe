<?php
/**
 * quota-guard decision API client: one file, PHP >= 8.1 with the curl extension only. A shop copies
 * this file or installs it with composer (composer.json beside it); it is one file on purpose,
 * hence over 600 lines.
 *
 *   require __DIR__ . '/QuotaGuard.php';
 *   $qg = new QuotaGuard\Client('http://127.0.0.1:9464', getenv('QUOTA_GUARD_TOKEN'));
 *   $d = $qg->spend('default', ['method' => 'videos.list', 'tag' => 'trending:US']);
 *   if (!$d->allowed) { error_log("stop; resume at {$d->resumeAt}"); exit(75); }
 *   ... call the upstream ...
 *   $qg->settle($d, 'sent');   // or 'never-sent' (refund), 'exhausted' (blocks the bucket)
 *
 *   $qg->run('default', 'trending:US', function (QuotaGuard\Run $run) {   // in `quota-guard history`
 *       $d = $run->spend(['method' => 'videos.list']);   // counted in the run; a denial stops it
 *       ...
 *       $run->pages++; $run->items += count($items);
 *   });
 *
 * - One deadline per call (5 s unless `deadline:` says otherwise, per client or per call): within
 *   it a refused or reset connection is retried with backoff and jitter, and the next service URL
 *   is tried when one does not answer. A hung service costs at most the deadline.
 * - Each spend carries an entry id: sent again, it is answered with its first decision and charged
 *   once. A spend whose answer is lost (the deadline passed after it was sent), or that the service
 *   answers 'unknown', is an "unknown" decision: the call site's fail mode decides, and the journal
 *   resolves it later by its entry id (recorded if it was used, voided if not).
 * - When quota-guard cannot be reached (or its store is down) the fail mode decides: 'open' lets
 *   the call through and writes it to the journal, 'closed' (the default) refuses it.
 * - The journal (a local file, one JSON object per line, mode 0600, locked, bounded, never holding
 *   a token) keeps what could not be delivered: fail-open spends, unknown spends, reports, run
 *   records. It is replayed at the next call that gets an answer, at the end of a run and when the
 *   client is closed or destroyed.
 * - Every fail-open and unknown decision writes one line on stderr.
 * - The service is reached directly: proxy variables (http_proxy…) are ignored unless `proxy:`
 *   names one, so the bearer token never goes through a proxy by accident.
 * - Denials are values; QuotaGuard\Error only for a request quota-guard refuses (a bad token, an
 *   unknown method, an entry id reused for another spend), QuotaGuard\ConfigError for a client
 *   set up wrong (an unset token, a bad URL).
 *
 * docs/http-api.md describes the protocol and the journal.
 */

declare(strict_types=1);

namespace QuotaGuard;

/** The quota-guard release whose decision API this client speaks (`serve --decisions` of it or later). */
const SERVER_VERSION = '0.3.0';
const VERSION = '0.3.0';
/** Seconds one call may take, retries and failover included. */
const DEFAULT_DEADLINE = 5.0;
/** Seconds one attempt waits for its answer before the next attempt (never past the deadline). */
const DEFAULT_ATTEMPT_TIMEOUT = 2.0;
/** Bytes the journal may hold; a line that does not fit is refused (and said). */
const DEFAULT_JOURNAL_MAX_BYTES = 1048576;

/** quota-guard refused the request (4xx): a mistake to fix, not an outage. */
final class Error extends \RuntimeException
{
    public function __construct(public readonly int $status, public readonly string $errorCode, string $message, public readonly ?string $field = null)
    {
        parent::__construct("$status $errorCode: $message");
    }
}

/** The client is set up wrong (an unset token, a bad URL or option): one line to fix. */
final class ConfigError extends \InvalidArgumentException
{
}

/**
 * One spend's answer. $reason: allowed, budget, blocked, store-down (from the service); fail-open
 * (allowed without an answer: journalled to be recorded); unreachable (refused: no answer); unknown
 * (the answer was lost or the service could not know: allowed or refused by the fail mode, resolved
 * later by the journal); journal-full (a fail-open spend refused: the journal could not take it).
 */
final class Decision
{
    public readonly bool $allowed;
    public readonly string $reason;
    public readonly string $entry;
    public readonly string $credential;
    public readonly bool $replayed;
    public readonly ?int $remaining;
    public readonly int $retryAfterMs;
    public readonly ?string $resumeAt;
    public readonly ?int $resumeAtMs;
    public readonly ?string $limitedBy;
    public readonly ?string $blockedUntil;
    /** The journal line that settles this decision later ('record' or 'void'), if any. */
    public ?string $journalled = null;

    public function __construct(public readonly array $answer, string $entry, string $credential)
    {
        $this->allowed = (bool) ($answer['allowed'] ?? false);
        $this->reason = (string) ($answer['reason'] ?? 'unreachable');
        $this->entry = (string) ($answer['entry'] ?? $entry);
        $this->credential = (string) ($answer['credential'] ?? $credential);
        $this->replayed = (bool) ($answer['replayed'] ?? false);
        $this->remaining = $answer['remaining'] ?? null;
        $this->retryAfterMs = (int) ($answer['retryAfterMs'] ?? 0);
        $this->resumeAt = $answer['resumeAt'] ?? null;
        $this->resumeAtMs = $answer['resumeAtMs'] ?? null;
        $this->limitedBy = $answer['limitedBy'] ?? null;
        $this->blockedUntil = $answer['blockedUntil'] ?? null;
    }

    /** Whether quota-guard holds this spend (only then is there anything to report now). */
    public function recorded(): bool
    {
        return $this->allowed && $this->reason === 'allowed';
    }

    /** The answer was lost, or the service could not know: resolved later by the journal. */
    public function unknown(): bool
    {
        return $this->reason === 'unknown';
    }
}

/**
 * One run of a job, counted as it goes and recorded in quota-guard's run history when
 * Client::run's function returns: done; stopped (or unavailable) by the first denial of one of its
 * spends, an exhausted quota settled, or end(); failed when the function throws (the exception is
 * thrown on). Count $pages and $items yourself; $units counts what the service answered as charged
 * (refunds taken off). Spends made without the service's answer are counted in $failOpen and
 * $unknown, and the run's reason says so.
 */
final class Run
{
    public int $pages = 0;
    public int $items = 0;
    public int $units = 0;
    public int $failOpen = 0;
    public int $unknown = 0;
    public ?string $outcome = null;
    public ?string $reason = null;
    public readonly string $id;
    public readonly int $startedAt;
    /** The answer once recorded; null when it went to the journal. */
    public ?array $recorded = null;

    public function __construct(private readonly Client $qg, public readonly string $credential, public readonly string $job)
    {
        $this->id = newId();
        $this->startedAt = nowMs();
    }

    /** Client::spend on the run's credential, counted in the run. */
    public function spend(array $spend): Decision
    {
        $d = $this->qg->spend($this->credential, $spend);
        if ($d->recorded()) {
            $this->units += (int) ($d->answer['cost'] ?? 0);
        } elseif ($d->unknown()) {
            $this->unknown++;
        } elseif ($d->reason === 'fail-open') {
            $this->failOpen++;
        }
        if (!$d->allowed) {
            $why = $d->reason . ($d->resumeAt !== null ? ", resume at {$d->resumeAt}" : '');
            $down = in_array($d->reason, ['store-down', 'unreachable', 'unknown', 'journal-full'], true);
            $this->end($down ? 'unavailable' : 'stopped', $why);
        }
        return $d;
    }

    /** Client::settle: a refund is taken off the run's units, an exhausted quota stops it. */
    public function settle(Decision $d, string $outcome, string|int|null $until = null, ?string $reason = null, ?float $deadline = null): bool
    {
        $ok = $this->qg->settle($d, $outcome, $until, $reason, $deadline);
        if ($ok && $d->recorded() && $outcome === 'never-sent') {
            $this->units -= (int) ($d->answer['cost'] ?? 0);
        }
        if ($outcome === 'exhausted') {
            $this->end('stopped', $reason ?? 'exhausted');
        }
        return $ok;
    }

    /** How the run ended when not done ('stopped', 'unavailable', 'failed'…): the first kept. */
    public function end(string $outcome, string $reason): void
    {
        if ($this->outcome === null) {
            $this->outcome = $outcome;
            $this->reason = $reason;
        }
    }

    /** The run's reason, with its spends made without an answer said. */
    public function reasonSaid(): ?string
    {
        $notes = [];
        if ($this->failOpen > 0) {
            $notes[] = "{$this->failOpen} fail-open";
        }
        if ($this->unknown > 0) {
            $notes[] = "{$this->unknown} unknown";
        }
        if ($notes === []) {
            return $this->reason;
        }
        $said = implode(' and ', $notes) . ' spend' . ($this->failOpen + $this->unknown > 1 ? 's' : '') . ' journalled';
        return $this->reason !== null ? "{$this->reason}; $said" : $said;
    }
}

function nowMs(): int
{
    return (int) floor(microtime(true) * 1000);
}

function newId(int $bytes = 12): string
{
    return rtrim(strtr(base64_encode(random_bytes($bytes)), '+/', '-_'), '=');
}

/** A reason as the run history takes it: one line of at most 300 characters. */
function oneLine(string $text): string
{
    // Byte by byte first (these bytes never occur inside a UTF-8 character), then the C1 controls.
    $line = (string) preg_replace('/[\x00-\x20\x7f]+/', ' ', $text);
    $line = trim(preg_replace('/[\x{80}-\x{9f}\s]+/u', ' ', $line) ?? $line);
    return preg_match('/^(.{299}).{2,}$/us', $line, $m) === 1 ? $m[1] . '…' : $line;
}

/**
 * $QUOTA_GUARD_JOURNAL, else $XDG_STATE_HOME/quota-guard/journal.jsonl, else
 * ~/.local/state/quota-guard/journal.jsonl (the Python client's default too).
 */
function defaultJournalPath(): string
{
    $explicit = getenv('QUOTA_GUARD_JOURNAL');
    if (is_string($explicit) && $explicit !== '') {
        return $explicit;
    }
    $state = getenv('XDG_STATE_HOME');
    if (!is_string($state) || $state === '') {
        $home = getenv('HOME');
        if (!is_string($home) || $home === '') {
            $home = function_exists('posix_getpwuid') ? (string) (posix_getpwuid(posix_geteuid())['dir'] ?? '') : '';
        }
        $state = rtrim($home, '/') . '/.local/state';
    }
    return "$state/quota-guard/journal.jsonl";
}

/** A journal line that could not be written: why. */
final class JournalRefused extends \RuntimeException
{
}

/**
 * The local journal: one JSON object per line, appended under an exclusive flock; replayed lines
 * are taken out by rewriting the file (a new file renamed over the old one, under the lock). A
 * writer that locked a file since renamed over opens the new one.
 * @internal
 */
final class Journal
{
    private ?array $skip = null;

    public function __construct(public readonly string $path, public readonly int $maxBytes)
    {
    }

    /** @return resource the journal opened ('a' or 'c+', created 0600) and locked exclusively */
    private function openLocked(string $mode)
    {
        while (true) {
            $old = umask(0077);
            $fp = @fopen($this->path, $mode);
            umask($old);
            if ($fp === false) {
                throw new JournalRefused("cannot open {$this->path}: " . lastError());
            }
            flock($fp, LOCK_EX);
            clearstatcache(true, $this->path);
            $st = fstat($fp);
            $now = @stat($this->path);
            if ($now !== false && $st !== false && $now['ino'] === $st['ino']) {
                if (($st['mode'] & 0077) !== 0) {
                    @chmod($this->path, 0600);
                }
                return $fp;
            }
            fclose($fp); // rewritten meanwhile: lock the new one
        }
    }

    /** Append one line, or JournalRefused (full, disk full, unwritable). */
    public function append(array $line): void
    {
        $data = json_encode($line, JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE) . "\n";
        $dir = dirname($this->path);
        if (!is_dir($dir) && !@mkdir($dir, 0700, true) && !is_dir($dir)) {
            throw new JournalRefused("cannot create $dir: " . lastError());
        }
        $fp = $this->openLocked('a');
        try {
            $size = (int) fstat($fp)['size'];
            if ($size + strlen($data) > $this->maxBytes) {
                throw new JournalRefused("{$this->path} is full ($size of {$this->maxBytes} bytes)");
            }
            $written = @fwrite($fp, $data);
            if ($written !== strlen($data) || !@fflush($fp)) {
                $why = lastError();
                @ftruncate($fp, $size); // no half line left behind
                throw new JournalRefused("cannot write {$this->path}: " . ($why !== '' ? $why : 'No space left on device'));
            }
            if (function_exists('fsync')) {
                @fsync($fp);
            }
        } finally {
            fclose($fp);
        }
    }

    /** @return list<array{0: string, 1: ?array}> each line's text and its object (null when torn) */
    private function read($fp): array
    {
        rewind($fp);
        $lines = [];
        foreach (explode("\n", (string) stream_get_contents($fp)) as $raw) {
            if (trim($raw) === '') {
                continue;
            }
            $line = json_decode($raw, true);
            $lines[] = [$raw, is_array($line) ? $line : null];
        }
        return $lines;
    }

    /** This client's lines not replayed yet, in order (lines of another token are left). */
    public function pending(?string $tok): array
    {
        clearstatcache(true, $this->path);
        $st = @stat($this->path);
        if ($st === false || $st['size'] === 0 || $this->skip === [$st['ino'], $st['size'], $st['mtime']]) {
            return [];
        }
        $fp = $this->openLocked('c+');
        try {
            $mine = [];
            foreach ($this->read($fp) as [, $line]) {
                if ($line !== null && ($line['tok'] ?? null) === $tok) {
                    $mine[] = $line;
                }
            }
            if ($mine === []) {
                $st = fstat($fp);
                $this->skip = [$st['ino'], $st['size'], $st['mtime']];
            }
            return $mine;
        } finally {
            fclose($fp);
        }
    }

    /** Take the lines with these ids out (a torn line goes too). */
    public function remove(array $ids): void
    {
        $fp = $this->openLocked('c+');
        try {
            $lines = $this->read($fp);
            $keep = [];
            foreach ($lines as [$raw, $line]) {
                if ($line !== null && !isset($ids[$line['id'] ?? ''])) {
                    $keep[] = $raw . "\n";
                }
            }
            if ($keep === []) {
                ftruncate($fp, 0);
                return;
            }
            if (count($keep) === count($lines)) {
                return;
            }
            $tmp = $this->path . '.' . getmypid() . '.tmp';
            $old = umask(0077);
            $ok = @file_put_contents($tmp, implode('', $keep), LOCK_EX);
            umask($old);
            if ($ok === false || !@rename($tmp, $this->path)) {
                @unlink($tmp);
                throw new JournalRefused("cannot rewrite {$this->path}: " . lastError());
            }
        } finally {
            fclose($fp);
        }
    }

    /** @return resource|null a lock only one replayer holds (null: another process is replaying) */
    public function replayLock()
    {
        $old = umask(0077);
        $fp = @fopen($this->path . '.lock', 'c');
        umask($old);
        if ($fp === false) {
            return null;
        }
        if (!flock($fp, LOCK_EX | LOCK_NB)) {
            fclose($fp);
            return null;
        }
        return $fp;
    }
}

function lastError(): string
{
    $e = error_get_last();
    error_clear_last();
    // 'fwrite(): Write of 199 bytes failed with errno=28 No space left on device': the reason only.
    return $e === null ? '' : (string) preg_replace(['/^\w+\([^)]*\): /', '/^Write of \d+ bytes failed with errno=\d+ /'], '', $e['message']);
}

/** No answer within the deadline; $sent: some attempt may have reached the service. @internal */
final class NoAnswer extends \RuntimeException
{
    public function __construct(public readonly bool $sent, string $problems)
    {
        parent::__construct($problems);
    }
}

/**
 * A client of one or more `quota-guard serve --decisions` instances over one store.
 *
 * $url: 'http://host:9464', several ('http://a:9464,http://b:9464') or a list. $token: the bearer
 * token; null on loopback without a tokens file; false (an unset getenv) is a ConfigError.
 * $deadline: seconds one call may take at most (default 5), retries and failover included;
 * $timeout: seconds one attempt waits for an answer before the next (default 2, never past the
 * deadline); $attempts: most attempts per call (default: as many as the deadline allows);
 * $journal: its path (default defaultJournalPath()), or false for none (a fail-open spend then
 * goes unrecorded, which stderr says); $caFile: a PEM file of CAs to trust for https; $proxy: a
 * proxy to reach the service through (default none, whatever http_proxy says); $log: where the
 * one-line notices go (default stderr).
 */
final class Client
{
    private ?\CurlHandle $curl = null;
    private ?string $token;
    /** @var list<string> */
    private array $urls;
    private ?string $tok;
    private ?Journal $journal;
    private int $preferred = 0;
    private bool $replaying = false;
    private bool $closed = false;
    /** @var callable|null */
    private $log;

    public function __construct(
        string|array $url,
        string|false|null $token = null,
        public string $failMode = 'closed',
        private readonly ?float $timeout = null,
        private readonly ?int $attempts = null,
        public readonly float $deadline = DEFAULT_DEADLINE,
        string|false|null $journal = null,
        int $journalMaxBytes = DEFAULT_JOURNAL_MAX_BYTES,
        private readonly ?string $caFile = null,
        private readonly ?string $proxy = null,
        ?callable $log = null,
    ) {
        if ($token === false) {
            throw new ConfigError('QuotaGuard\Client: the token is not set (getenv returned false): set QUOTA_GUARD_TOKEN, or pass null for a service on loopback without a tokens file');
        }
        $this->token = $token === '' ? null : $token;
        $this->tok = $this->token !== null ? substr(hash('sha256', $this->token), 0, 16) : null;
        if (!in_array($failMode, ['open', 'closed'], true)) {
            throw new ConfigError("QuotaGuard\\Client: failMode is 'open' or 'closed', not '$failMode'");
        }
        $list = is_array($url) ? array_values($url) : preg_split('/[\s,]+/', trim($url), -1, PREG_SPLIT_NO_EMPTY);
        if ($list === [] || $list === false) {
            throw new ConfigError('QuotaGuard\Client: no quota-guard URL given');
        }
        foreach ($list as $u) {
            $p = parse_url((string) $u);
            if (!is_array($p) || !in_array($p['scheme'] ?? '', ['http', 'https'], true) || ($p['host'] ?? '') === '') {
                throw new ConfigError("QuotaGuard\\Client: quota-guard URL '$u': expected http(s)://host[:port][/path]");
            }
        }
        $this->urls = array_map(fn ($u) => rtrim((string) $u, '/'), $list);
        $this->journal = $journal === false ? null : new Journal($journal ?? defaultJournalPath(), $journalMaxBytes);
        $this->log = $log;
    }

    public function journalPath(): ?string
    {
        return $this->journal?->path;
    }

    /**
     * One decision. $spend: method | bucket (+ cost), tier (default scheduled), tag, entry,
     * failMode ('open'/'closed', overrides the object's for this call site), deadline (seconds).
     */
    public function spend(string $credential, array $spend): Decision
    {
        $entry = $spend['entry'] ?? newId();
        $body = ['credential' => $credential, 'tier' => $spend['tier'] ?? 'scheduled', 'entry' => $entry];
        foreach (['method', 'bucket', 'cost', 'tag'] as $k) {
            if (isset($spend[$k])) {
                $body[$k] = $spend[$k];
            }
        }
        $mode = $spend['failMode'] ?? $this->failMode;
        $at = nowMs();
        $end = $this->end($spend['deadline'] ?? null);
        try {
            $answer = $this->call('POST', '/v1/spend', $body + ['allowUnknown' => true], $end);
        } catch (NoAnswer $e) {
            return $this->withoutAnswer($body, $at, $mode, $e->sent ? 'unknown' : 'unreachable', $e->getMessage());
        }
        $reason = $answer['reason'] ?? '';
        if ($reason === 'unknown') {
            return $this->withoutAnswer($body, $at, $mode, 'unknown', 'the service could not know');
        }
        if ($reason === 'store-down') {
            return $this->withoutAnswer($body, $at, $mode, 'store-down', 'answered store-down');
        }
        $this->replayUntil($end);
        return new Decision($answer, $entry, $credential);
    }

    /**
     * What became of the call: 'sent', 'never-sent' (refund) or 'exhausted' (blocks the bucket
     * until $until, ISO time or epoch ms; default the upstream's next reset). Idempotent. A report
     * that cannot be delivered goes to the journal. False only when it could neither be delivered
     * nor journalled.
     */
    public function settle(Decision $d, string $outcome, string|int|null $until = null, ?string $reason = null, ?float $deadline = null): bool
    {
        if (!in_array($outcome, ['sent', 'never-sent', 'exhausted'], true)) {
            throw new ConfigError("settle: the outcome is sent, never-sent or exhausted, not '$outcome'");
        }
        $body = ['credential' => $d->credential, 'entry' => $d->entry, 'outcome' => $outcome];
        if ($until !== null) {
            $body['until'] = $until;
        }
        if ($reason !== null) {
            $body['reason'] = $reason;
        }
        if ($d->journalled === 'record') {
            // Used without an answer: its record waits in the journal; what became of it follows.
            if ($outcome === 'sent') {
                return true;
            }
            $ok = $outcome === 'never-sent'
                ? $this->journalLine('void', ['credential' => $d->credential, 'entry' => $d->entry], "the never-sent report of entry {$d->entry}")
                : $this->journalLine('report', $body, "the exhausted report of entry {$d->entry}");
            $this->replayUntil($this->end($deadline));
            return $ok;
        }
        if (!$d->recorded()) {
            return true;
        }
        return $this->deliver('report', $body, $this->end($deadline)) !== false;
    }

    /**
     * Run $body(Run $run) as a run of $job (e.g. 'trending:US') spending $credential, and record it
     * when $body returns (its value is returned) or throws (recorded as failed, then thrown on).
     */
    public function run(string $credential, string $job, callable $body): mixed
    {
        $run = new Run($this, $credential, $job);
        try {
            $value = $body($run);
        } catch (\Throwable $e) {
            $run->outcome = 'failed';
            $run->reason = get_class($e) . ': ' . $e->getMessage();
            try {
                $run->recorded = $this->recordRunOf($run);
            } catch (Error) {
                // The job's own exception is the one to see.
            }
            throw $e;
        }
        $run->recorded = $this->recordRunOf($run);
        return $value;
    }

    /**
     * Record one finished run in the run history (`quota-guard history` shows it under the token's
     * name). Times in epoch ms; $outcome one of done, stopped, aborted, unavailable, failed; $counts
     * pages, units, items. Sent again with the same $id, it is recorded once. Returns the answer, or
     * null when it went to the journal (recorded when the journal is replayed).
     */
    public function recordRun(string $credential, string $job, int $startedAt, int $finishedAt, string $outcome, array $counts = [], ?string $reason = null, ?string $id = null, ?float $deadline = null): ?array
    {
        $body = [
            'credential' => $credential,
            'id' => $id ?? newId(),
            'job' => $job,
            'startedAt' => $startedAt,
            'finishedAt' => $finishedAt,
            'outcome' => $outcome,
            'pages' => (int) ($counts['pages'] ?? 0),
            'units' => (int) ($counts['units'] ?? 0),
            'items' => (int) ($counts['items'] ?? 0),
        ];
        if ($reason !== null) {
            $body['reason'] = oneLine($reason);
        }
        $answer = $this->deliver('runs', $body, $this->end($deadline));
        return is_array($answer) ? $answer : null;
    }

    private function recordRunOf(Run $run): ?array
    {
        $counts = ['pages' => $run->pages, 'units' => max(0, $run->units), 'items' => $run->items];
        return $this->recordRun($run->credential, $run->job, $run->startedAt, nowMs(), $run->outcome ?? 'done', $counts, $run->reasonSaid(), $run->id);
    }

    /** The buckets of the credentials the token may use; null without an answer within the deadline. */
    public function status(?string $credential = null, ?float $deadline = null): ?array
    {
        $end = $this->end($deadline);
        try {
            $answer = $this->call('GET', '/v1/status' . ($credential !== null ? '?credential=' . rawurlencode($credential) : ''), null, $end);
        } catch (NoAnswer) {
            return null;
        }
        $this->replayUntil($end);
        return $answer;
    }

    /** Send the journal's lines of this client now (within $deadline seconds); how many were settled. */
    public function replay(?float $deadline = null): int
    {
        return $this->replayUntil($this->end($deadline));
    }

    /** Replay the journal (within one deadline) and close the connection. */
    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        try {
            $this->replayUntil($this->end(null));
        } finally {
            $this->curl = null;
        }
    }

    public function __destruct()
    {
        $this->close();
    }

    // -- without an answer ---------------------------------------------------------------------

    /** A spend the service did not decide: the fail mode decides, the journal resolves it. */
    private function withoutAnswer(array $body, int $at, string $mode, string $why, string $detail): Decision
    {
        $open = $mode === 'open';
        $entry = (string) $body['entry'];
        $credential = (string) $body['credential'];
        $what = 'spend of ' . ($body['method'] ?? $body['bucket'] ?? '?') . " for $credential (entry $entry)";
        $path = $this->journal?->path;
        if ($why === 'unknown') {
            $op = $open ? 'record' : 'void';
            $ok = $this->journalLine($op, $open ? $body + ['at' => $at] : ['credential' => $credential, 'entry' => $entry], "the unknown $what");
            $acted = $open ? 'used (fail-open)' : 'not used (fail-closed)';
            $this->say("unknown: $what: no answer known ($detail); $acted; " . ($ok
                ? 'journalled to be ' . ($open ? 'recorded' : 'voided') . " in $path"
                : 'NOT journalled: it may stay ' . ($open ? 'unrecorded' : 'charged')));
            $d = new Decision(['allowed' => $open && $ok, 'reason' => 'unknown'], $entry, $credential);
            $d->journalled = $ok ? $op : null;
            return $d;
        }
        if (!$open) {
            return new Decision(['allowed' => false, 'reason' => $why], $entry, $credential);
        }
        $ok = $this->journalLine('record', $body + ['at' => $at], "the fail-open $what");
        $down = $why === 'unreachable' ? 'quota-guard unreachable' : "quota-guard's store is down";
        $this->say("fail-open: $what: $down ($detail); " . ($ok
            ? "allowed, journalled to be recorded in $path"
            : 'refused: it could not be journalled'));
        $d = new Decision(['allowed' => $ok, 'reason' => $ok ? 'fail-open' : 'journal-full'], $entry, $credential);
        $d->journalled = $ok ? 'record' : null;
        return $d;
    }

    /** Append one line for route $op; false (and one line on stderr) when it cannot be. */
    private function journalLine(string $op, array $body, string $about): bool
    {
        if ($this->journal === null) {
            $this->say("journal: none configured: $about is lost");
            return false;
        }
        try {
            $this->journal->append(['id' => newId(9), 'op' => $op, 'tok' => $this->tok, 'written' => nowMs(), 'body' => $body]);
            return true;
        } catch (JournalRefused $e) {
            $this->say("journal: {$e->getMessage()}: $about is lost");
            return false;
        }
    }

    /** POST one report or run: its answer, true when journalled instead (no answer, or the store is down), false when neither. */
    private function deliver(string $op, array $body, float $end): array|bool
    {
        try {
            $answer = $this->call('POST', "/v1/$op", $body, $end);
        } catch (NoAnswer $e) {
            $what = $op === 'runs' ? 'run' : $op;
            $ok = $this->journalLine($op, $body, "this $what");
            if ($ok) {
                $this->say("journal: $what not delivered ({$e->getMessage()}); journalled in {$this->journal?->path}");
            }
            return $ok;
        }
        $this->replayUntil($end);
        return $answer;
    }

    private function say(string $text): void
    {
        $line = 'quota-guard: ' . preg_replace('/\s+/', ' ', $text);
        if ($this->log !== null) {
            ($this->log)($line);
        } elseif (defined('STDERR')) {
            fwrite(STDERR, $line . "\n");
        } else {
            error_log($line);
        }
    }

    // -- the journal's replay ------------------------------------------------------------------

    /** Send this client's journalled lines in order until one gets no answer; how many were settled. */
    private function replayUntil(float $end): int
    {
        $j = $this->journal;
        if ($j === null || $this->replaying) {
            return 0;
        }
        $this->replaying = true;
        $lock = null;
        try {
            if ($j->pending($this->tok) === [] || ($lock = $j->replayLock()) === null) {
                return 0;
            }
            $lines = $j->pending($this->tok);
            $done = [];
            $late = $known = 0;
            $dropped = [];
            foreach ($lines as $line) {
                $op = $line['op'] ?? '';
                $body = $line['body'] ?? null;
                if (!in_array($op, ['record', 'void', 'report', 'runs'], true) || !is_array($body)) {
                    $done[$line['id'] ?? ''] = true;
                    continue;
                }
                try {
                    $answer = $this->call('POST', "/v1/$op", $body, $end);
                } catch (NoAnswer) {
                    break;
                } catch (Error $e) {
                    if ($e->status === 401 || in_array($e->errorCode, ['not_found', 'method_not_allowed'], true)) {
                        break; // a token or a server that cannot take it yet: the line stays
                    }
                    $dropped[] = "$op " . ($body['entry'] ?? $body['id'] ?? '?') . ": {$e->getMessage()}";
                    $done[$line['id'] ?? ''] = true;
                    continue;
                }
                $done[$line['id'] ?? ''] = true;
                if ($op === 'record') {
                    ($answer['outcome'] ?? '') === 'recorded' ? $late++ : $known++;
                }
            }
            if ($done !== []) {
                $j->remove($done);
                $n = count($done);
                $left = count($lines) - $n;
                $this->say("journal: replayed $n line" . ($n !== 1 ? 's' : '') . " from {$j->path} ($late spend" . ($late !== 1 ? 's' : '') . " recorded late, $known already known or too old), $left left");
            }
            foreach ($dropped as $text) {
                $this->say("journal: dropped a line quota-guard refused: $text");
            }
            return count($done);
        } catch (JournalRefused $e) {
            $this->say("journal: cannot replay: {$e->getMessage()}");
            return 0;
        } finally {
            if (is_resource($lock)) {
                fclose($lock);
            }
            $this->replaying = false;
        }
    }

    // -- transport -----------------------------------------------------------------------------

    private function end(?float $deadline): float
    {
        return hrtime(true) / 1e9 + ($deadline ?? $this->deadline);
    }

    /**
     * The answer's JSON. Every attempt before $end (monotonic seconds): a failed one moves to the
     * next URL, a full round of failures backs off with jitter. The same request (entry id, run id)
     * is answered by the service with its first decision, so sending it again is safe. A 503 saying
     * the store is down is final (every instance shares the store). NoAnswer when none came.
     */
    private function call(string $method, string $path, ?array $body, float $end): array
    {
        $this->curl ??= curl_init();
        $headers = ['Content-Type: application/json', 'Accept: application/json', 'User-Agent: quota-guard-php/' . VERSION, 'Expect:'];
        if ($this->token !== null) {
            $headers[] = 'Authorization: Bearer ' . $this->token;
        }
        $data = $body === null ? null : json_encode($body, JSON_INVALID_UTF8_SUBSTITUTE | JSON_UNESCAPED_SLASHES);
        $n = count($this->urls);
        $first = $this->preferred;
        $failed = 0;
        $sent = false;
        $backoff = 0.05;
        $problems = [];
        $permanent = [];
        while (count($permanent) < $n && ($this->attempts === null || $failed < $this->attempts)) {
            $remaining = $end - hrtime(true) / 1e9;
            if ($remaining <= 0.001) {
                break;
            }
            $i = ($first + $failed) % $n;
            $failed++;
            if (isset($permanent[$i])) {
                continue;
            }
            $url = $this->urls[$i];
            $ms = max(1, (int) (min($remaining, $this->timeout ?? DEFAULT_ATTEMPT_TIMEOUT) * 1000));
            $options = [
                CURLOPT_URL => $url . $path,
                CURLOPT_CUSTOMREQUEST => $method,
                CURLOPT_POSTFIELDS => $data,
                CURLOPT_HTTPGET => $method === 'GET',
                CURLOPT_HTTPHEADER => $headers,
                CURLOPT_RETURNTRANSFER => true,
                CURLOPT_TIMEOUT_MS => $ms,
                CURLOPT_CONNECTTIMEOUT_MS => $ms,
                CURLOPT_NOSIGNAL => true,
                CURLOPT_TCP_KEEPALIVE => 1,
                // '' keeps curl from reading http_proxy and the like: the token goes to the service only.
                CURLOPT_PROXY => $this->proxy ?? '',
            ];
            if ($this->caFile !== null) {
                $options[CURLOPT_CAINFO] = $this->caFile;
            }
            curl_setopt_array($this->curl, $options);
            $text = curl_exec($this->curl);
            if ($text === false) {
                $errno = curl_errno($this->curl);
                $problems[$url] = "$url: " . describeCurl($errno, curl_error($this->curl));
                if (in_array($errno, [CURLE_SSL_PEER_CERTIFICATE, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM, CURLE_UNSUPPORTED_PROTOCOL], true)) {
                    $permanent[$i] = true;
                }
                // Sent, perhaps, once the connection was made (no answer, or a connection dropped).
                $sent = $sent || (!in_array($errno, [CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_SSL_CONNECT_ERROR], true)
                    && curl_getinfo($this->curl, CURLINFO_PRETRANSFER_TIME) > 0);
                // A connection in a bad state is not kept for the next attempt.
                $this->curl = curl_init();
            } else {
                $status = (int) curl_getinfo($this->curl, CURLINFO_RESPONSE_CODE);
                $answer = json_decode((string) $text, true);
                $answer = is_array($answer) ? $answer : [];
                $err = is_array($answer['error'] ?? null) ? $answer['error'] : [];
                if ($status === 200) {
                    $this->preferred = $i;
                    return $answer;
                }
                if ($status === 503 && ($err['code'] ?? '') === 'QG_STORE_UNAVAILABLE') {
                    throw new NoAnswer($sent, "$url: its store is down");
                }
                if ($status < 500 && $status !== 408 && $status !== 429 && $status !== 0) {
                    throw new Error($status, (string) ($err['code'] ?? '?'), (string) ($err['message'] ?? ''), $err['field'] ?? null);
                }
                // The service (or a proxy before it) could not serve it now: another URL, or later.
                $sent = $sent || $status >= 500;
                $problems[$url] = "$url: HTTP $status";
            }
            if ($failed % $n === 0) {
                // Every URL failed once more: wait a little, jittered, before the next round.
                $pause = min($backoff * (0.5 + mt_rand() / mt_getrandmax() / 2), $end - hrtime(true) / 1e9);
                if ($pause > 0) {
                    usleep((int) ($pause * 1e6));
                }
                $backoff = min($backoff * 2, 0.5);
            }
        }
        throw new NoAnswer($sent, $problems !== [] ? implode('; ', $problems) : 'the deadline passed');
    }
}

/** What went wrong with an attempt, in a few words. */
function describeCurl(int $errno, string $error): string
{
    return match ($errno) {
        CURLE_COULDNT_CONNECT => 'connection refused',
        CURLE_OPERATION_TIMEDOUT => 'no answer in time',
        CURLE_GOT_NOTHING => 'connection closed without an answer',
        CURLE_RECV_ERROR, CURLE_SEND_ERROR => 'connection reset',
        CURLE_SSL_PEER_CERTIFICATE => "certificate not trusted ($error)",
        default => $error !== '' ? $error : "curl error $errno",
    };
}
