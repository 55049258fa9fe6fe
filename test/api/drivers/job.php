<?php
/**
 * A cron-style job for the outage tests: run after run until the file $QG_STOP exists, each run one
 * spend through the PHP client (fail-open on even runs, fail-closed on odd ones), the upstream called
 * when allowed and settled `sent`, the run recorded. Prints one JSON summary: the runs, the slowest
 * client call (ms) and what each decision was.
 */
declare(strict_types=1);

require getenv('QG_CLIENT_DIR') . '/QuotaGuard.php';

$qg = new QuotaGuard\Client(getenv('QG_URL'), getenv('QG_TOKEN'), deadline: (float) getenv('QG_DEADLINE'));
$credential = getenv('QG_CREDENTIAL');
$prefix = getenv('QG_PREFIX');
$sim = getenv('QG_SIM');
$slowest = ['ms' => 0, 'call' => null];
$reasons = [];
$runs = 0;
$upstream = curl_init();

$timed = function (string $call, callable $fn) use (&$slowest) {
    $t = hrtime(true);
    try {
        return $fn();
    } finally {
        $ms = (hrtime(true) - $t) / 1e6;
        if ($ms > $slowest['ms']) {
            $slowest = ['ms' => (int) round($ms), 'call' => $call];
        }
    }
};

while (!file_exists(getenv('QG_STOP'))) {
    $n = $runs++;
    $t = 0;
    $qg->run($credential, "$prefix:$n", function (QuotaGuard\Run $run) use ($n, $prefix, $sim, $upstream, $timed, &$reasons, &$t) {
        $mode = $n % 2 === 0 ? 'open' : 'closed';
        $d = $timed('spend', fn () => $run->spend(['method' => 'videos.list', 'tag' => "$prefix:$n", 'failMode' => $mode]));
        $reasons[$d->reason] = ($reasons[$d->reason] ?? 0) + 1;
        if ($d->allowed) {
            curl_setopt_array($upstream, [
                CURLOPT_URL => "$sim/videos?part=snippet&chart=mostPopular&regionCode=US&maxResults=5&key=k-test",
                CURLOPT_RETURNTRANSFER => true,
                CURLOPT_TIMEOUT => 10,
            ]);
            curl_exec($upstream);
            $timed('settle', fn () => $run->settle($d, 'sent'));
            $run->pages++;
        }
        $t = hrtime(true);
    });
    $ms = (hrtime(true) - $t) / 1e6; // the run's record, sent when the function returns
    if ($ms > $slowest['ms']) {
        $slowest = ['ms' => (int) round($ms), 'call' => 'recordRun'];
    }
    usleep(50000);
}
$timed('close', fn () => $qg->close());
echo json_encode(['runs' => $runs, 'slowest' => $slowest, 'reasons' => (object) $reasons]), "\n";
