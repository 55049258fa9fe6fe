<?php
/**
 * A cron job of the mixed drill (`quota-guard drill --mixed`), in PHP: run after run until the file
 * $QG_DRILL_STOP exists, each run a region's chart, page by page, as a real job calls the upstream:
 * spend through the decision API, call the simulator, settle what happened, and the run recorded in
 * quota-guard's history when it ends. Fail-open on even runs, fail-closed on odd ones.
 *
 * At the end the journal is replayed until it is empty (or 30 s have passed), and one JSON line is
 * printed: the runs, the spends by reason, the pages, the quotaExceeded answers and the journal's
 * lines left. Everything comes from the environment the drill sets (see src/drill/mixed.ts).
 */
declare(strict_types=1);

require getenv('QG_DRILL_CLIENT_DIR') . '/QuotaGuard.php';

$qg = new QuotaGuard\Client(getenv('QG_DRILL_URLS'), getenv('QG_DRILL_TOKEN'), deadline: (float) getenv('QG_DRILL_DEADLINE'));
$credential = getenv('QG_DRILL_CREDENTIAL');
$job = getenv('QG_DRILL_JOB');
$sim = getenv('QG_DRILL_SIM_URL');
$key = getenv('QG_DRILL_SIM_KEY');
$pagesPerRun = (int) getenv('QG_DRILL_PAGES');
$interval = (int) getenv('QG_DRILL_INTERVAL_MS') / 1000;
$regions = explode(',', getenv('QG_DRILL_REGIONS'));
$dayEnd = (int) getenv('QG_DRILL_DAY_END_MS');
$stop = getenv('QG_DRILL_STOP');
$journal = $qg->journalPath();
$summary = ['runs' => 0, 'spends' => 0, 'reasons' => [], 'pages' => 0, 'quotaExceeded' => 0, 'upstreamErrors' => 0];
$tokens = [];
$upstream = curl_init();

/** One page of the region's chart: false when the run ends here. */
$page = function (QuotaGuard\Run $run, int $n, string $region) use ($job, $sim, $key, $dayEnd, $upstream, &$summary, &$tokens): bool {
    $d = $run->spend(['method' => 'videos.list', 'tag' => "$job:$region", 'failMode' => $n % 2 === 0 ? 'open' : 'closed']);
    $summary['spends']++;
    $summary['reasons'][$d->reason] = ($summary['reasons'][$d->reason] ?? 0) + 1;
    if (!$d->allowed) {
        return false;
    }
    $q = ['part' => 'snippet', 'chart' => 'mostPopular', 'regionCode' => $region, 'maxResults' => 50, 'key' => $key];
    if (($tokens[$region] ?? null) !== null) {
        $q['pageToken'] = $tokens[$region];
    }
    curl_setopt_array($upstream, [
        CURLOPT_URL => "$sim/videos?" . http_build_query($q),
        CURLOPT_RETURNTRANSFER => true,
        CURLOPT_TIMEOUT => 10,
    ]);
    $text = curl_exec($upstream);
    if ($text === false) {
        $summary['upstreamErrors']++;
        $refused = curl_errno($upstream) === CURLE_COULDNT_CONNECT;
        $run->settle($d, $refused ? 'never-sent' : 'sent');
        $run->end('unavailable', 'the upstream could not be reached: ' . curl_error($upstream));
        return false;
    }
    $status = curl_getinfo($upstream, CURLINFO_RESPONSE_CODE);
    if ($status === 403 && str_contains((string) $text, 'quotaExceeded')) {
        $summary['quotaExceeded']++;
        $run->settle($d, 'exhausted', $dayEnd, 'quotaExceeded');
        return false;
    }
    if ($status !== 200) {
        $summary['upstreamErrors']++;
        $run->settle($d, 'sent'); // the upstream answered: it charged the call
        $run->end('failed', "the upstream answered HTTP $status");
        return false;
    }
    $body = json_decode((string) $text, true);
    $run->settle($d, 'sent');
    $run->pages++;
    $run->items += count($body['items'] ?? []);
    $summary['pages']++;
    $tokens[$region] = $body['nextPageToken'] ?? null;
    return true;
};

$journalLeft = function () use ($journal): int {
    clearstatcache();
    if ($journal === null || !is_file($journal)) {
        return 0;
    }
    return count(array_filter(file($journal, FILE_IGNORE_NEW_LINES) ?: [], fn ($l) => trim($l) !== ''));
};

while (!file_exists($stop)) {
    $started = microtime(true);
    $n = $summary['runs']++;
    $region = $regions[$n % count($regions)];
    $qg->run($credential, "$job:$n", function (QuotaGuard\Run $run) use ($page, $pagesPerRun, $n, $region) {
        for ($p = 0; $p < $pagesPerRun; $p++) {
            if (!$page($run, $n, $region)) {
                break;
            }
        }
    });
    while (microtime(true) - $started < $interval && !file_exists($stop)) {
        usleep((int) (min(0.05, max(0.0, $interval - (microtime(true) - $started))) * 1e6));
    }
}

// What the journal still holds is sent now, within 30 s.
$end = microtime(true) + 30;
while ($journalLeft() > 0 && microtime(true) < $end) {
    $qg->replay();
    if ($journalLeft() > 0) {
        usleep(500000);
    }
}
$qg->close();
$summary['journalLeft'] = $journalLeft();
$summary['reasons'] = (object) $summary['reasons'];
echo json_encode($summary), "\n";
