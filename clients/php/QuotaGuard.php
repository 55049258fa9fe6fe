<?php
/**
 * quota-guard decision API client: one file, PHP's curl extension only.
 *
 *   require __DIR__ . '/QuotaGuard.php';
 *   $qg = new QuotaGuard\Client('http://127.0.0.1:9464', getenv('QUOTA_GUARD_TOKEN') ?: null);
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
 * One curl handle (one keep-alive connection) per object. Each spend carries an entry id
 * (generated unless given): a spend sent again after a lost answer is answered with its first
 * decision and charged once, so spend() retries safely. When quota-guard cannot be reached (or its
 * store is down) the call site's fail mode decides: 'open' lets the call through unrecorded,
 * 'closed' (the default) refuses it. Denials are values; QuotaGuard\Error only for a request
 * quota-guard refuses (a bad token, an unknown method, an entry id reused for another spend).
 *
 * docs/http-api.md describes the protocol.
 */

namespace QuotaGuard;

final class Error extends \RuntimeException
{
    public function __construct(public readonly int $status, public readonly string $errorCode, string $message, public readonly ?string $field = null)
    {
        parent::__construct("$status $errorCode: $message");
    }
}

final class Decision
{
    public readonly bool $allowed;
    /** allowed, budget, blocked, store-down, or (not from the server) fail-open / unreachable */
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

    /** Whether quota-guard holds this spend (only then is there anything to settle). */
    public function recorded(): bool
    {
        return $this->allowed && $this->reason === 'allowed';
    }
}

/**
 * One run of a job, counted as it goes and recorded in quota-guard's run history when
 * Client::run's function returns: done; stopped (or unavailable) by the first denial of one of its
 * spends, an exhausted quota settled, or end(); failed when the function throws (the exception is
 * thrown on). Count $pages and $items yourself; $units counts what the run's spends charged.
 */
final class Run
{
    public int $pages = 0;
    public int $items = 0;
    public int $units = 0;
    public ?string $outcome = null;
    public ?string $reason = null;
    public readonly string $id;
    public readonly int $startedAt;
    /** The answer once recorded; null when quota-guard could not be reached. */
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
        } elseif (!$d->allowed) {
            $why = $d->reason . ($d->resumeAt !== null ? ", resume at {$d->resumeAt}" : '');
            $this->end(in_array($d->reason, ['store-down', 'unreachable'], true) ? 'unavailable' : 'stopped', $why);
        }
        return $d;
    }

    /** Client::settle: a refund is taken off the run's units, an exhausted quota stops it. */
    public function settle(Decision $d, string $outcome, string|int|null $until = null, ?string $reason = null): bool
    {
        $ok = $this->qg->settle($d, $outcome, $until, $reason);
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
}

function nowMs(): int
{
    return (int) floor(microtime(true) * 1000);
}

function newId(): string
{
    return rtrim(strtr(base64_encode(random_bytes(12)), '+/', '-_'), '=');
}

/** A reason as the run history takes it: one line of at most 300 characters. */
function oneLine(string $text): string
{
    // Byte by byte first (these bytes never occur inside a UTF-8 character), then the C1 controls.
    $line = (string) preg_replace('/[\x00-\x20\x7f]+/', ' ', $text);
    $line = trim(preg_replace('/[\x{80}-\x{9f}\s]+/u', ' ', $line) ?? $line);
    return preg_match('/^(.{299}).{2,}$/us', $line, $m) === 1 ? $m[1] . '…' : $line;
}

final class Client
{
    private ?\CurlHandle $curl = null;

    public function __construct(
        private readonly string $url,
        private readonly ?string $token = null,
        public string $failMode = 'closed',
        private readonly float $timeout = 5.0,
        private readonly int $attempts = 3,
    ) {
    }

    /**
     * One decision. $spend: method | bucket (+ cost), tier (default scheduled), tag, entry,
     * failMode ('open'/'closed', overrides the object's for this call site).
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
        $answer = $this->call('POST', '/v1/spend', $body);
        if ($answer === null) {
            return $this->down($entry, $credential, $mode, 'unreachable');
        }
        if (($answer['reason'] ?? '') === 'store-down') {
            return $this->down($entry, $credential, $mode, 'store-down');
        }
        return new Decision($answer, $entry, $credential);
    }

    /**
     * What became of the call: 'sent', 'never-sent' (refund) or 'exhausted' (blocks the bucket
     * until $until, ISO time or epoch ms; default the upstream's next reset). Idempotent. False when
     * quota-guard could not be reached (the report is lost).
     */
    public function settle(Decision $d, string $outcome, string|int|null $until = null, ?string $reason = null): bool
    {
        if (!$d->recorded()) {
            return true;
        }
        $body = ['credential' => $d->credential, 'entry' => $d->entry, 'outcome' => $outcome];
        if ($until !== null) {
            $body['until'] = $until;
        }
        if ($reason !== null) {
            $body['reason'] = $reason;
        }
        return $this->call('POST', '/v1/report', $body) !== null;
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
     * pages, units, items. Sent again after a lost answer with the same $id, it is recorded once.
     * Returns the answer, or null when quota-guard could not be reached (the run is not recorded).
     */
    public function recordRun(string $credential, string $job, int $startedAt, int $finishedAt, string $outcome, array $counts = [], ?string $reason = null, ?string $id = null): ?array
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
        return $this->call('POST', '/v1/runs', $body);
    }

    private function recordRunOf(Run $run): ?array
    {
        $counts = ['pages' => $run->pages, 'units' => max(0, $run->units), 'items' => $run->items];
        return $this->recordRun($run->credential, $run->job, $run->startedAt, nowMs(), $run->outcome ?? 'done', $counts, $run->reason, $run->id);
    }

    public function status(?string $credential = null): ?array
    {
        return $this->call('GET', '/v1/status' . ($credential !== null ? '?credential=' . rawurlencode($credential) : ''), null);
    }

    private function down(string $entry, string $credential, string $mode, string $why): Decision
    {
        $open = $mode === 'open';
        return new Decision(['allowed' => $open, 'reason' => $open ? 'fail-open' : $why], $entry, $credential);
    }

    /** The answer's JSON, or null when quota-guard could not be reached; the same request is sent again after a lost answer. */
    private function call(string $method, string $path, ?array $body): ?array
    {
        $this->curl ??= curl_init();
        $headers = ['Content-Type: application/json', 'Accept: application/json'];
        if ($this->token !== null && $this->token !== '') {
            $headers[] = 'Authorization: Bearer ' . $this->token;
        }
        for ($attempt = 0; $attempt < $this->attempts; $attempt++) {
            curl_setopt_array($this->curl, [
                CURLOPT_URL => rtrim($this->url, '/') . $path,
                CURLOPT_CUSTOMREQUEST => $method,
                CURLOPT_POSTFIELDS => $body === null ? null : json_encode($body, JSON_INVALID_UTF8_SUBSTITUTE),
                CURLOPT_HTTPGET => $method === 'GET',
                CURLOPT_HTTPHEADER => $headers,
                CURLOPT_RETURNTRANSFER => true,
                CURLOPT_TIMEOUT_MS => (int) ($this->timeout * 1000),
                CURLOPT_CONNECTTIMEOUT_MS => (int) ($this->timeout * 1000),
                CURLOPT_TCP_KEEPALIVE => 1,
            ]);
            $text = curl_exec($this->curl);
            if ($text === false) {
                // A kept-alive connection the server or the network dropped: try a fresh one at
                // once, then back off.
                usleep(50000 * $attempt);
                continue;
            }
            $status = curl_getinfo($this->curl, CURLINFO_RESPONSE_CODE);
            $answer = json_decode((string) $text, true);
            if (!is_array($answer)) {
                $answer = [];
            }
            if ($status === 200) {
                return $answer;
            }
            if ($status >= 500 || $status === 0) {
                usleep(50000 * ($attempt + 1));
                continue;
            }
            $e = $answer['error'] ?? [];
            throw new Error($status, (string) ($e['code'] ?? '?'), (string) ($e['message'] ?? ''), $e['field'] ?? null);
        }
        return null;
    }
}
