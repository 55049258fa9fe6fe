/**
 * The Python and PHP clients (Debian's python3 and php-cli) and their cron examples against a real
 * `serve --decisions`, a real Redis and the simulator, beside a Node job on the same credential.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createGuard } from '../../src/guard/guard.js';
import { openLedger } from '../../src/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { loadYouTubeConfig as loadConfig } from '../../src/youtube/config/part.js';
import { ANY_KEY_PROJECT, type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { cli } from '../cli/helpers.js';
import { journalDir } from './drivers.js';
import { type HistoryRun, historyRuns, type Served, startServe, tokensFile, writeConfig } from './helpers.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const PY = join(ROOT, 'clients/python');
const PHP = join(ROOT, 'clients/php');
const DAY = 86_400_000;

const cred = `cl${randomBytes(4).toString('hex')}`;
let sim: Simulator;
let served: Served;
let ledger: Ledger;
let secrets: Record<string, string>;
let configPath: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  const t = tokensFile([
    { name: 'php-cron', credentials: [cred], tiers: ['scheduled'], mayBlock: true },
    { name: 'py-cron', credentials: [cred], tiers: ['scheduled'], mayBlock: true },
  ]);
  secrets = t.secrets;
  configPath = writeConfig({
    store: inject('redisUrl'),
    upstream: { baseUrl: sim.url },
    credentials: [{ id: cred, apiKeyEnv: 'QG_CLIENTS_TEST_KEY' }],
    regions: ['US', 'GB', 'DE', 'FR', 'IN'],
  });
  served = await startServe(configPath, ['--tokens', t.file]);
  ledger = await openLedger(inject('redisUrl'));
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await served?.stop();
  await ledger?.close();
  await sim?.close();
});

/** Units the ledger holds for the credential, over every bucket. */
async function recorded(): Promise<number> {
  const config = loadConfig({ file: configPath, env: {} });
  let sum = 0;
  for (const b of Object.values(config.credential(cred).buckets)) {
    sum += (await ledger.peek({ key: `qg:{${cred}}:${b.id}`, windowMs: DAY })).used;
  }
  return sum;
}

function env(token: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'] ?? '',
    QUOTA_GUARD_URL: served.url,
    QUOTA_GUARD_TOKEN: token,
    QUOTA_GUARD_CREDENTIAL: cred,
    YOUTUBE_API_KEY: 'k-test',
    YOUTUBE_BASE_URL: sim.url,
    QUOTA_GUARD_JOURNAL: join(journalDir(), 'journal.jsonl'),
    ...extra,
  };
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function ran(p: Promise<{ stdout: string; stderr: string }>): Promise<Ran> {
  return p.then(
    (r) => ({ code: 0, ...r }),
    (e: Ran) => e,
  );
}

function python(args: string[], token: string, extra?: Record<string, string>): Promise<Ran> {
  return ran(run('python3', args, { cwd: PY, env: env(token, extra) }));
}

function php(args: string[], token: string, extra?: Record<string, string>): Promise<Ran> {
  return ran(run('php', args, { cwd: PHP, env: env(token, extra) }));
}

/** The runs `quota-guard history --json` lists that started at or after `since`, newest first. */
async function historySince(since: number): Promise<HistoryRun[]> {
  return (await historyRuns(configPath)).filter((x) => x.startedAt >= since);
}

const events = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string; refunded?: boolean; reason?: string; resumeAt?: string });

describe('the cron examples', () => {
  it('record exactly the units the simulator charged after PHP, Python and Node jobs on one credential', async () => {
    const before = await recorded();
    const charged = sim.charged();
    const p = await php(['cron_example.php', 'US', 'GB'], secrets['php-cron']!);
    expect(events(p.stdout).map((e) => e.event)).toEqual(['page', 'page']);
    const y = await python(['cron_example.py', 'DE', 'FR'], secrets['py-cron']!);
    expect(events(y.stdout).map((e) => e.event)).toEqual(['page', 'page']);
    vi.stubEnv('QG_CLIENTS_TEST_KEY', 'k-test');
    vi.stubEnv('LOG_LEVEL', 'silent');
    expect((await cli('fetch', '-r', 'IN', '--config', configPath)).code).toBe(0);
    const spent = (await recorded()) - before;
    expect(spent).toBeGreaterThanOrEqual(5);
    expect(spent).toBe(sim.charged() - charged);
  });

  it('record each region’s run in the run history under the token’s name', async () => {
    const since = Date.now();
    expect((await php(['cron_example.php', 'GB'], secrets['php-cron']!)).code).toBe(0);
    expect((await python(['cron_example.py', 'FR'], secrets['py-cron']!)).code).toBe(0);
    const runs = await historySince(since);
    expect(runs.map((r) => [r.job, r.client, r.outcome, r.pages, r.units])).toEqual([
      ['trending:FR', 'py-cron', 'done', 1, 1],
      ['trending:GB', 'php-cron', 'done', 1, 1],
    ]);
    for (const r of runs) expect(r.videos).toBeGreaterThan(0);
  });

  it('refund a call the upstream refused to connect', async () => {
    const since = Date.now();
    const before = await recorded();
    const closed = { YOUTUBE_BASE_URL: 'http://127.0.0.1:9/youtube/v3' };
    const p = await php(['cron_example.php', 'US'], secrets['php-cron']!, closed);
    expect(events(p.stdout)).toEqual([{ event: 'unreachable', region: 'US', refunded: true }]);
    const y = await python(['cron_example.py', 'US'], secrets['py-cron']!, closed);
    expect(events(y.stdout)).toEqual([{ event: 'unreachable', region: 'US', refunded: true }]);
    // 69 as `quota-guard fetch`: a cron wrapper that keeps 0 and 75 quiet alerts on it.
    expect([p.code, y.code]).toEqual([69, 69]);
    expect(await recorded()).toBe(before);
    // Each run is recorded as unavailable, its refunded unit not counted.
    const runs = await historySince(since);
    expect(runs.map((r) => [r.client, r.outcome, r.units])).toEqual([
      ['py-cron', 'unavailable', 0],
      ['php-cron', 'unavailable', 0],
    ]);
  });

  it('keep a call whose answer was cut off mid-body charged, and end unavailable (69), without a trace', async () => {
    const since = Date.now();
    const before = await recorded();
    const cut = await cutOffUpstream();
    try {
      const base = { YOUTUBE_BASE_URL: `${cut.url}/youtube/v3` };
      const p = await php(['cron_example.php', 'US', 'GB'], secrets['php-cron']!, base);
      const y = await python(['cron_example.py', 'DE', 'FR'], secrets['py-cron']!, base);
      for (const r of [p, y]) {
        expect(r.code, r.stderr).toBe(69);
        expect(r.stderr).toBe('');
      }
      // The first region ends the run; the next is left for the next run.
      expect(events(p.stdout)).toEqual([{ event: 'unreachable', region: 'US', refunded: false }]);
      expect(events(y.stdout)).toEqual([{ event: 'unreachable', region: 'DE', refunded: false }]);
    } finally {
      await cut.close();
    }
    expect((await recorded()) - before).toBe(2);
    const runs = await historySince(since);
    expect(runs.map((r) => [r.job, r.client, r.outcome, r.units])).toEqual([
      ['trending:DE', 'py-cron', 'unavailable', 1],
      ['trending:US', 'php-cron', 'unavailable', 1],
    ]);
  });

  it('say in one line, exit 78, when quota-guard refuses the token or the credential', async () => {
    const cases: [string, Record<string, string>, string][] = [
      ['not-a-token', {}, '401 unauthorized'],
      [secrets['php-cron']!, { QUOTA_GUARD_CREDENTIAL: 'elsewhere' }, "403 forbidden: token 'php-cron'"],
    ];
    for (const [token, extra, says] of cases) {
      for (const r of [
        await php(['cron_example.php', 'US'], token, extra),
        await python(['cron_example.py', 'US'], token, extra),
      ]) {
        expect(r.code, r.stderr).toBe(78);
        expect(r.stdout).toBe('');
        expect(r.stderr).toMatch(/^cron_example: quota-guard refused the request: [^\n]+\n$/);
        expect(r.stderr).toContain(says);
        expect(r.stderr).not.toContain(token);
      }
    }
  });

  it('an exhaustion PHP reports blocks the Node job’s next call', async () => {
    const since = Date.now();
    sim.spendBehind(ANY_KEY_PROJECT, 'units', 1_000_000);
    const p = await php(['cron_example.php', 'US'], secrets['php-cron']!);
    expect(p.code).toBe(75);
    expect(events(p.stdout)).toEqual([{ event: 'stopped', region: 'US', reason: 'quotaExceeded' }]);
    const config = loadConfig({ file: configPath, env: {} });
    const guard = createGuard({ config, ledger });
    const next = await guard.spend({ credential: cred, method: 'videos.list', tag: 'trending:FR' });
    expect(next).toMatchObject({ allowed: false, reason: 'blocked' });
    // And the Python job stops at once, saying when to resume.
    const y = await python(['cron_example.py', 'DE'], secrets['py-cron']!);
    expect(y.code).toBe(75);
    const [stop] = events(y.stdout);
    expect(stop).toMatchObject({ event: 'stopped', reason: 'blocked' });
    expect(Date.parse(stop!.resumeAt!)).toBeGreaterThan(Date.now());
    await ledger.unblock(`qg:{${cred}}:units`);
    // Both runs are recorded as stopped, with the stop's reason.
    const [py, ph] = await historySince(since);
    expect(ph).toMatchObject({
      job: 'trending:US',
      client: 'php-cron',
      outcome: 'stopped',
      reason: 'quotaExceeded',
    });
    expect(py).toMatchObject({ job: 'trending:DE', client: 'py-cron', outcome: 'stopped', units: 0 });
    expect(py!.reason).toBe(`blocked, resume at ${stop!.resumeAt}`);
  });

  it('record a run that raised as failed, and raise on', async () => {
    const since = Date.now();
    const y = await python(
      [
        '-c',
        `
import os
from quota_guard import QuotaGuard
qg = QuotaGuard(os.environ["QUOTA_GUARD_URL"], token=os.environ["QUOTA_GUARD_TOKEN"])
try:
    with qg.run(os.environ["QUOTA_GUARD_CREDENTIAL"], "ingest:comments") as run:
        run.spend(bucket="units", cost=2)
        raise ValueError("row 7 is not JSON\\nat all")
except ValueError:
    print(run.recorded["outcome"])
`,
      ],
      secrets['py-cron']!,
    );
    expect(y.stdout.trim(), y.stderr).toBe('failed');
    const p = await php(
      [
        '-r',
        `require 'QuotaGuard.php';
$qg = new QuotaGuard\\Client(getenv('QUOTA_GUARD_URL'), getenv('QUOTA_GUARD_TOKEN'));
try {
    $qg->run(getenv('QUOTA_GUARD_CREDENTIAL'), 'ingest:likes', function (QuotaGuard\\Run $run) {
        $run->spend(['bucket' => 'units', 'cost' => 3]);
        throw new RuntimeException('the feed is gone');
    });
} catch (RuntimeException $e) {
    echo "raised\n";
}`,
      ],
      secrets['php-cron']!,
    );
    expect(p.stdout.trim(), p.stderr).toBe('raised');
    expect((await historySince(since)).map((r) => [r.job, r.client, r.outcome, r.units, r.reason])).toEqual([
      ['ingest:likes', 'php-cron', 'failed', 3, 'RuntimeException: the feed is gone'],
      ['ingest:comments', 'py-cron', 'failed', 2, 'ValueError: row 7 is not JSON at all'],
    ]);
  });
});

/** An upstream that answers every request with headers and the first byte of a body, then hangs up. */
async function cutOffUpstream(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    s.once('data', () => {
      s.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{', () =>
        s.destroy(),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/**
 * A loopback proxy in front of `serve` that drops the connection after every `every`th request to
 * `path` has been passed on, before its answer comes back: the request has landed, the client never
 * hears.
 */
async function droppingProxy(
  target: URL,
  path = '/v1/spend',
  every = 10,
): Promise<{ url: string; dropped: () => number; close: () => Promise<void> }> {
  let requests = 0;
  let dropped = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect({ port: Number(target.port), host: target.hostname, noDelay: true });
    client.setNoDelay(true);
    sockets.add(client).add(upstream);
    let drop = false;
    client.on('data', (chunk) => {
      if (chunk.includes(`POST ${path} `)) {
        requests++;
        if (requests % every === 0) drop = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (drop) {
        dropped++;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    dropped: () => dropped,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe('the Python client over a network that drops answers', () => {
  it('retries 1,000 spends with every tenth connection dropped after the request: none charged twice', async () => {
    const proxy = await droppingProxy(new URL(served.url));
    const before = await recorded();
    try {
      const script = `
import json, sys
from quota_guard import QuotaGuard
qg = QuotaGuard(sys.argv[1], token=sys.argv[2])
allowed = replayed = 0
for i in range(1000):
    d = qg.spend(sys.argv[3], bucket="units", cost=1, tag="drops")
    allowed += d.allowed
    replayed += d.replayed
print(json.dumps({"allowed": allowed, "replayed": replayed}))
`;
      const r = await run('python3', ['-c', script, proxy.url, secrets['py-cron']!, cred], { cwd: PY });
      const out = JSON.parse(r.stdout) as { allowed: number; replayed: number };
      expect(proxy.dropped()).toBeGreaterThanOrEqual(90);
      expect(out.allowed).toBe(1000);
      expect(out.replayed).toBe(proxy.dropped());
      expect((await recorded()) - before).toBe(1000);
    } finally {
      await proxy.close();
    }
  });
});

describe('the clients’ runs over a network that drops answers', () => {
  it('are recorded once each when every third POST of a run loses its answer', async () => {
    const proxy = await droppingProxy(new URL(served.url), '/v1/runs', 3);
    const since = Date.now();
    try {
      const py = `
import json, sys, time
from quota_guard import QuotaGuard
qg = QuotaGuard(sys.argv[1], token=sys.argv[2])
now = int(time.time() * 1000)
answers = [qg.record_run(sys.argv[3], "sync:py", now - 1000, now, "done", units=i) for i in range(3)]
print(json.dumps([a["replayed"] for a in answers]))
`;
      const y = await run('python3', ['-c', py, proxy.url, secrets['py-cron']!, cred], { cwd: PY });
      // The third POST lost its answer: sent again, it was answered with the first record.
      expect(JSON.parse(y.stdout)).toEqual([false, false, true]);
      const ph = `require 'QuotaGuard.php';
$qg = new QuotaGuard\\Client($argv[1], $argv[2]);
$now = (int) (microtime(true) * 1000);
$out = [];
for ($i = 0; $i < 3; $i++) {
    $out[] = $qg->recordRun($argv[3], 'sync:php', $now - 1000, $now, 'done', ['units' => $i])['replayed'];
}
echo json_encode($out);`;
      const p = await run('php', ['-r', ph, '--', proxy.url, secrets['php-cron']!, cred], { cwd: PHP });
      expect(JSON.parse(p.stdout)).toEqual([false, true, false]);
      expect(proxy.dropped()).toBe(2);
    } finally {
      await proxy.close();
    }
    const runs = (await historySince(since - 60_000)).filter((r) => r.job.startsWith('sync:'));
    expect(runs.map((r) => [r.job, r.client, r.units]).sort()).toEqual([
      ['sync:php', 'php-cron', 0],
      ['sync:php', 'php-cron', 1],
      ['sync:php', 'php-cron', 2],
      ['sync:py', 'py-cron', 0],
      ['sync:py', 'py-cron', 1],
      ['sync:py', 'py-cron', 2],
    ]);
  });
});
