/**
 * When the ledger's store is down the decision API says so in an ordinary answer, and a client
 * applies its call site's fail mode; when quota-guard itself cannot be reached, the same.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { journalDir } from './drivers.js';
import { ApiClient, type Served, startServe, writeConfig } from './helpers.js';

const run = promisify(execFile);
const PY = join(import.meta.dirname, '../../clients/python');
let served: Served;
let client: ApiClient;

beforeAll(async () => {
  // Nothing listens on port 1: the store is down from the start.
  const config = writeConfig({ store: 'redis://127.0.0.1:1', credentials: [{ id: 'default' }] });
  served = await startServe(config, [], { LOG_LEVEL: 'info' });
  client = new ApiClient(served.url);
});

afterAll(async () => {
  await client?.close();
  await served?.stop();
});

it('answers a spend with reason store-down, and the clients apply their fail mode', async () => {
  const r = await client.spend({ credential: 'default', method: 'videos.list', entry: 'down-1' });
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ allowed: false, reason: 'store-down', entry: 'down-1' });
  const report = await client.report({ credential: 'default', entry: 'down-1', outcome: 'sent' });
  expect(report.status).toBe(503);
  // A late record and a void wait for the store too: the clients keep them in their journals.
  const late = { credential: 'default', method: 'videos.list', entry: 'down-2', at: Date.now() };
  expect((await client.call('POST', '/v1/record', late)).status).toBe(503);
  expect((await client.call('POST', '/v1/void', { credential: 'default', entry: 'down-1' })).status).toBe(
    503,
  );
  // The service allowed nothing: it says so, in its log and its metrics, and leaves it to the client.
  expect(served.stderr()).toMatch(/answered store-down, the caller applies its own fail mode/);
  expect(served.stderr()).not.toMatch(/fail-open/);
  const metrics = await (await fetch(`${served.url}/metrics`)).text();
  expect(metrics).toMatch(/quota_guard_ledger_decisions_total\{[^}]*outcome="store-down"[^}]*\} 1\n/);
  expect(metrics).not.toMatch(/quota_guard_ledger_decisions_total\{[^}]*outcome="fail-open"[^}]*\} [1-9]/);

  const script = `
import json, sys
from quota_guard import QuotaGuard
out = {}
for url in (sys.argv[1], "http://127.0.0.1:9"):
    qg = QuotaGuard(url, attempts=2, timeout=2)
    for mode in ("open", "closed"):
        d = qg.spend("default", method="videos.list", fail_mode=mode)
        out[("up" if url == sys.argv[1] else "unreachable") + "-" + mode] = [d.allowed, d.reason]
print(json.dumps(out))
`;
  // Their fail-open spends go to a journal of the test's own.
  const env = { ...process.env, QUOTA_GUARD_JOURNAL: join(journalDir(), 'journal.jsonl') };
  const py = JSON.parse(
    (await run('python3', ['-c', script, served.url], { cwd: PY, env })).stdout,
  ) as Record<string, [boolean, string]>;
  expect(py).toEqual({
    'up-open': [true, 'fail-open'],
    'up-closed': [false, 'store-down'],
    'unreachable-open': [true, 'fail-open'],
    'unreachable-closed': [false, 'unreachable'],
  });

  const php = `
require '${join(import.meta.dirname, '../../clients/php/QuotaGuard.php')}';
$out = [];
foreach ([$argv[1] => 'up', 'http://127.0.0.1:9' => 'unreachable'] as $url => $name) {
    $qg = new QuotaGuard\\Client($url, null, 'closed', 2.0, 2);
    foreach (['open', 'closed'] as $mode) {
        $d = $qg->spend('default', ['method' => 'videos.list', 'failMode' => $mode]);
        $out["$name-$mode"] = [$d->allowed, $d->reason];
    }
}
echo json_encode($out);
`;
  const ph = JSON.parse((await run('php', ['-r', php, '--', served.url], { env })).stdout) as Record<
    string,
    unknown
  >;
  expect(ph).toEqual(py);
});

it('says the store is down once per interval, with a count, however many spends it refuses', async () => {
  const before = served
    .stderr()
    .split('\n')
    .filter((l) => l.includes('answered store-down')).length;
  const answers = await Promise.all(
    Array.from({ length: 300 }, (_, i) =>
      client.spend({ credential: 'default', method: 'videos.list', entry: `flood-${i}` }),
    ),
  );
  expect(answers.every((a) => (a.body as { reason: string }).reason === 'store-down')).toBe(true);
  // The first line came with the first test's spend: these 300 are counted into its interval's line.
  const lines = served
    .stderr()
    .split('\n')
    .filter((l) => l.includes('answered store-down'));
  expect(lines.length - before).toBeLessThanOrEqual(1);
  const metrics = await (await fetch(`${served.url}/metrics`)).text();
  expect(metrics).toMatch(
    /quota_guard_api_request_duration_seconds_count\{route="spend"\} (30[1-9]|3[1-9]\d)\n/,
  );
});
