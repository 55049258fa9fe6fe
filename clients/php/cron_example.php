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
 * Environment: QUOTA_GUARD_URL, QUOTA_GUARD_TOKEN (omit on loopback without a tokens file),
 * YOUTUBE_API_KEY, YOUTUBE_BASE_URL (default https://www.googleapis.com/youtube/v3),
 * QUOTA_GUARD_CREDENTIAL (default "default"). Exit 0 when done, 75 when stopped by the budget.
 */
require __DIR__ . '/QuotaGuard.php';

function logLine(array $fields): void
{
    echo json_encode($fields), "\n";
}

$qg = new QuotaGuard\Client(getenv('QUOTA_GUARD_URL') ?: 'http://127.0.0.1:9464', getenv('QUOTA_GUARD_TOKEN') ?: null);
$base = getenv('YOUTUBE_BASE_URL') ?: 'https://www.googleapis.com/youtube/v3';
$key = (string) getenv('YOUTUBE_API_KEY');
$credential = getenv('QUOTA_GUARD_CREDENTIAL') ?: 'default';
$regions = array_slice($argv, 1) ?: ['US'];
$upstream = curl_init();

/** One region's chart, spent and settled in the run; 75 when the budget stopped it. */
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
        return 0;
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
    return 0;
}

foreach ($regions as $region) {
    $code = $qg->run($credential, "trending:$region", fn (QuotaGuard\Run $run) => fetchRegion($run, $upstream, $base, $key, $region));
    if ($code !== 0) {
        exit($code);
    }
}
exit(0);
