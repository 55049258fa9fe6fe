<?php
/**
 * The regional trending job as a cron script: for each region, spend; on a denial stop the run and
 * log when to resume; call the upstream; settle what happened. Each region's run is recorded in
 * quota-guard's run history (`quota-guard history` lists it under the token's name): done, stopped
 * by the budget or an exhausted quota, unavailable or failed.
 *
 *   QUOTA_GUARD_URL=http://127.0.0.1:9464 QUOTA_GUARD_TOKEN=... YOUTUBE_API_KEY=... \
 *     php cron_example.php US GB DE
 *
 * Environment: QUOTA_GUARD_URL (one URL, or several separated by commas: the next is tried when one
 * does not answer), QUOTA_GUARD_TOKEN (omit on loopback without a tokens file), QUOTA_GUARD_CA_FILE
 * (a PEM file of CAs to trust for https), QUOTA_GUARD_JOURNAL (the journal's path; default
 * ~/.local/state/quota-guard/journal.jsonl), YOUTUBE_API_KEY, YOUTUBE_BASE_URL (default
 * https://www.googleapis.com/youtube/v3), QUOTA_GUARD_CREDENTIAL (default "default").
 *
 * When quota-guard does not answer within its deadline (5 s a call), the spend is made anyway (this
 * call site fails open), written to the journal, and recorded when quota-guard answers again (the
 * next call, the end of the run, or the next cron run); each such spend is one line on stderr.
 *
 * Exit status, as `quota-guard fetch` (README.md, "Running the jobs from cron"): 0 done; 75 stopped
 * by the budget or an exhausted quota (the next run resumes); 69 the upstream could not be used
 * (unreachable, timed out, or answered an error: the run is recorded unavailable or failed); 78
 * quota-guard refused the token, credential or request, or YOUTUBE_API_KEY is not set (a person
 * must fix it), or PHP is older than 8.1. The regions after the first that does not end done are
 * left for the next run. A signal (Ctrl-C, a cron timeout's kill) ends PHP where it is: that
 * region's run is not recorded.
 */
if (PHP_VERSION_ID < 80100) {
    fwrite(STDERR, 'cron_example: the quota-guard client needs PHP 8.1 or later, this is ' . PHP_VERSION . "\n");
    exit(78);
}
require __DIR__ . '/QuotaGuard.php';

function logLine(array $fields): void
{
    echo json_encode($fields), "\n";
}

try {
    $qg = new QuotaGuard\Client(
        getenv('QUOTA_GUARD_URL') ?: 'http://127.0.0.1:9464',
        getenv('QUOTA_GUARD_TOKEN') ?: null,
        caFile: getenv('QUOTA_GUARD_CA_FILE') ?: null,
    );
} catch (QuotaGuard\ConfigError $e) {
    fwrite(STDERR, "cron_example: {$e->getMessage()}\n");
    exit(78);
}
$base = getenv('YOUTUBE_BASE_URL') ?: 'https://www.googleapis.com/youtube/v3';
$key = (string) getenv('YOUTUBE_API_KEY');
$credential = getenv('QUOTA_GUARD_CREDENTIAL') ?: 'default';
$regions = array_slice($argv, 1) ?: ['US'];
$upstream = curl_init();

/** One region's chart, spent and settled in the run: 0 done, 75 stopped, 69 upstream unusable. */
function fetchRegion(QuotaGuard\Run $run, CurlHandle $upstream, string $base, string $key, string $region): int
{
    // A cheap call: let it through if quota-guard is unreachable (fail open at this call site).
    $d = $run->spend(['method' => 'videos.list', 'tag' => "trending:$region", 'failMode' => 'open']);
    if (!$d->allowed) {
        logLine(['event' => 'stopped', 'region' => $region, 'reason' => $d->reason, 'resumeAt' => $d->resumeAt]);
        return 75;
    }
    $q = http_build_query(['part' => 'snippet,statistics', 'chart' => 'mostPopular', 'regionCode' => $region, 'maxResults' => 50, 'key' => $key]);
    curl_setopt_array($upstream, [CURLOPT_URL => "$base/videos?$q", CURLOPT_RETURNTRANSFER => true, CURLOPT_TIMEOUT => 10]);
    $body = curl_exec($upstream);
    if ($body === false) {
        // Refused or not resolved: the upstream never got it, take the units back. A timeout may
        // have reached it: it stays charged.
        $never = in_array(curl_errno($upstream), [CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST], true);
        $run->settle($d, $never ? 'never-sent' : 'sent');
        $run->end('unavailable', 'the upstream could not be reached: ' . curl_error($upstream));
        logLine(['event' => 'unreachable', 'region' => $region, 'refunded' => $never]);
        return 69;
    }
    $status = curl_getinfo($upstream, CURLINFO_RESPONSE_CODE);
    if ($status === 403 && str_contains($body, 'quotaExceeded')) {
        $run->settle($d, 'exhausted', null, 'quotaExceeded');
        logLine(['event' => 'stopped', 'region' => $region, 'reason' => 'quotaExceeded']);
        return 75;
    }
    $run->settle($d, 'sent');
    $page = json_decode($body, true);
    if ($status === 200) {
        $run->pages++;
        $run->items += count($page['items'] ?? []);
    } else {
        $run->end('failed', "the upstream answered HTTP $status");
    }
    logLine(['event' => $status === 200 ? 'page' : 'error', 'region' => $region, 'status' => $status, 'videos' => count($page['items'] ?? [])]);
    return $status === 200 ? 0 : 69;
}

if ($key === '') {
    fwrite(STDERR, "cron_example: set YOUTUBE_API_KEY to the upstream's API key\n");
    exit(78);
}
try {
    foreach ($regions as $region) {
        $code = $qg->run($credential, "trending:$region", fn (QuotaGuard\Run $run) => fetchRegion($run, $upstream, $base, $key, $region));
        if ($code !== 0) {
            break;
        }
    }
} catch (QuotaGuard\Error $e) {
    // Not an outage: the token, the credential or the request is wrong.
    fwrite(STDERR, "cron_example: quota-guard refused the request: {$e->getMessage()}\n");
    $code = 78;
}
// What the journal holds is sent now if quota-guard answers (else at the next run).
$qg->close();
exit($code ?? 0);
