<?php
/**
 * Runs one scenario with the PHP client for the tests: $argv[1] is JSON { client, steps }; prints one
 * JSON array, an object per step with what it gave and how long it took (ms). The Python driver
 * beside it takes the same JSON and prints the same.
 */
declare(strict_types=1);

require getenv('QG_CLIENT_DIR') . '/QuotaGuard.php';

$spec = json_decode($argv[1], true);
$c = $spec['client'];
$named = [];
foreach (['deadline', 'timeout', 'journalMaxBytes', 'caFile', 'journal', 'proxy'] as $k) {
    if (array_key_exists($k, $c)) {
        $named[$k] = in_array($k, ['deadline', 'timeout'], true) ? (float) $c[$k] : $c[$k];
    }
}
$qg = new QuotaGuard\Client($c['url'], $c['token'] ?? null, $c['failMode'] ?? 'closed', ...$named);
$decisions = [];
$out = [];
foreach ($spec['steps'] as $step) {
    $do = $step['do'];
    $t = hrtime(true);
    $r = ['do' => $do];
    try {
        switch ($do) {
            case 'spend':
                $args = array_intersect_key($step, array_flip(['method', 'bucket', 'cost', 'tag', 'entry', 'deadline', 'failMode']));
                $d = $qg->spend($step['credential'] ?? 'default', $args);
                $decisions[$step['name'] ?? 'last'] = $d;
                $r += ['allowed' => $d->allowed, 'reason' => $d->reason, 'entry' => $d->entry, 'replayed' => $d->replayed, 'journalled' => $d->journalled];
                break;
            case 'settle':
                $r['ok'] = $qg->settle($decisions[$step['name'] ?? 'last'], $step['outcome']);
                break;
            case 'status':
                $s = $qg->status();
                if ($s === null) {
                    $r += ['error' => 'unavailable'];
                } else {
                    $r['credentials'] = array_map(fn ($x) => $x['id'], $s['credentials']);
                }
                break;
            case 'replay':
                $r['n'] = $qg->replay();
                break;
            case 'recordRun':
                $now = (int) (microtime(true) * 1000);
                $a = $qg->recordRun($step['credential'] ?? 'default', $step['job'], $now - 1000, $now, 'done', ['units' => $step['units'] ?? 0], null, $step['id'] ?? null);
                $r['recorded'] = $a !== null;
                break;
            case 'close':
                $qg->close();
                break;
            case 'sleep':
                usleep($step['ms'] * 1000);
                break;
        }
    } catch (QuotaGuard\Error $e) {
        $r += ['error' => 'QuotaGuardError', 'message' => $e->getMessage(), 'status' => $e->status];
    }
    $r['ms'] = (int) round((hrtime(true) - $t) / 1e6);
    $out[] = $r;
}
echo json_encode($out), "\n";
