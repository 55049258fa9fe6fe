import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { bucketWindow } from '../../src/guard/index.js';
import { openRunHistory } from '../../src/history/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { openQuotaGuard } from '../../src/quota-guard.js';
import { type ScheduledJob, startService, type TickSource } from '../../src/scheduler/index.js';
import { openCache } from '../../src/youtube/cache/index.js';
import { parseYouTubeConfig as parseConfig } from '../../src/youtube/config/part.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { cli, expectOneLine } from '../cli/helpers.js';
import { capture } from '../guard/helpers.js';
import { KEY_ENV, secretKey, tmpPath } from '../job-library/helpers.js';
import { get, sample, scrape } from '../metrics/helpers.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function simulator(latencyMs: number): Promise<Simulator> {
  const sim = await startSimulator({ port: 0, faults: { latencyMs } });
  cleanup.push(() => sim.close());
  return sim;
}

async function until(what: string, cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Ticks fired by hand. */
function manualTicks(): TickSource & { fire(): void } {
  const handlers: Array<() => void> = [];
  return {
    schedule(_job: ScheduledJob, onTick: (at: Date) => void) {
      const h = () => onTick(new Date());
      handlers.push(h);
      return { stop: () => handlers.splice(handlers.indexOf(h), 1) };
    },
    fire: () => {
      for (const h of [...handlers]) h();
    },
  };
}

/** One region's trending run on the service, its first page in flight (the simulator answers in 700 ms). */
async function pageInFlight() {
  const sim = await simulator(700);
  const key = secretKey();
  const cachePath = tmpPath('cache.db');
  const store = `sqlite:${tmpPath('ledger.db')}`;
  const config = parseConfig(
    {
      store,
      cache: { path: cachePath },
      upstream: { baseUrl: sim.url },
      credentials: [{ id: 'default', apiKeyEnv: KEY_ENV }],
      regions: ['US'],
    },
    { env: { [KEY_ENV]: key } },
  );
  const ticks = manualTicks();
  const log = capture();
  const qg = await openQuotaGuard(config, { logger: log });
  const { ledger } = qg;
  const service = await startService({ qg, ticks, backfill: false });
  ticks.fire();
  await until('the first page to be in flight', () => sim.requests.length >= 1);
  const cred = config.credential('default');
  const recorded = async (l = ledger) =>
    (await l.peek(bucketWindow(cred, cred.buckets['units']!, Date.now()))).used;
  return { sim, key, cachePath, store, service, log, recorded };
}

describe('graceful shutdown while a page is in flight', () => {
  it('abandons the page in flight at once (charged, unwritten), spends nothing more, and closes the ledger and the cache', async () => {
    const { sim, key, cachePath, store, service, log, recorded } = await pageInFlight();
    await service.stop('test');

    expect(service.scheduler.results()).toMatchObject([
      { job: 'trending:US', outcome: 'aborted', pages: 0, units: 1, videos: 0 },
    ]);
    // The one request was sent (the simulator may still answer it after the client left): no other.
    expect(sim.requests.length).toBeLessThanOrEqual(1);
    // The cache and the ledger were closed; reopened, the cache holds no part of the page and the
    // ledger the one charged request.
    const cache = openCache(cachePath);
    cleanup.push(async () => cache.close());
    expect(cache.latestSnapshot('US')).toBeUndefined();
    const ledger = await openLedger(store);
    cleanup.push(() => ledger.close());
    expect(await recorded(ledger)).toBe(1);
    expect(JSON.stringify(log.lines)).not.toContain(key);
  });

  it('with finishInFlight, writes the page in flight, starts no other, and leaves the ledger at what the upstream charged', async () => {
    const { sim, service, recorded } = await pageInFlight();
    cleanup.push(() => service.stop('test over'));
    await service.scheduler.stop('end of the day', { finishInFlight: true });

    expect(service.scheduler.results()).toMatchObject([
      { job: 'trending:US', outcome: 'aborted', pages: 1, units: 1, videos: 50 },
    ]);
    expect(sim.requests.map((r) => r.status)).toEqual([200]);
    expect(await recorded()).toBe(sim.charged());
    expect(sim.charged()).toBe(1);
  });
});

/** `quota-guard run` as its own process, stopped with a real SIGTERM. */
describe('quota-guard run', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('runs the schedules, serves /metrics and /healthz, and exits 0 on SIGTERM with every whole page written', async () => {
    const sim = await simulator(250);
    const key = secretKey();
    const cachePath = tmpPath('cache.db');
    const ledgerPath = tmpPath('ledger.db');
    const file = tmpPath('run.yaml');
    writeFileSync(
      file,
      [
        `store: sqlite:${ledgerPath}`,
        `cache: { path: ${cachePath} }`,
        `upstream: { baseUrl: ${sim.url} }`,
        `credentials: [{ id: default, apiKeyEnv: ${KEY_ENV} }]`,
        'regions: [US, GB]',
        'schedules:',
        '  trending: { cron: "* * * * * *", stagger: 300ms, maxPages: 3 }',
        '  backfill: { cron: "*/2 * * * * *" }',
      ].join('\n'),
    );
    child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/bin.ts', 'run', '--config', file, '--http', '127.0.0.1:0'],
      { env: { ...process.env, [KEY_ENV]: key, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    let stdout = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));

    await until(
      'the metrics server',
      () => /serving http:\/\/127\.0\.0\.1:\d+\/metrics/.test(stderr),
      30_000,
    );
    const base = /serving (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(stderr)![1]!;
    await until(
      'pages of both regions',
      () => /"region":"US"/.test(stderr) && /"region":"GB"/.test(stderr),
      30_000,
    );
    const health = await get(`${base}/healthz`);
    expect(health.status).toBe(200);
    const f = await scrape(base);
    expect(sample(f, 'quota_guard_units_used', { credential: 'default', bucket: 'units' })).toBeGreaterThan(
      0,
    );
    expect(sample(f, 'quota_guard_cache_videos')).toBeGreaterThan(0);

    child.kill('SIGTERM');
    const code = await Promise.race([exited, sleep(30_000).then(() => 'timeout')]);
    expect(code).toBe(0);
    expect(stderr).toContain('stopping (signal)');
    expect(stderr).toContain('scheduler stopped');
    expect(stderr).not.toContain('internal error');
    expect(stderr + stdout).not.toContain(key);

    // Every request the upstream answered was a page (or batch) the jobs wrote, but for the ones in
    // flight at the signal (at most one per job: two regions and the backfill), abandoned unwritten.
    const lines = stderr.split('\n').filter((l) => l.startsWith('{'));
    const written = lines.filter((l) => /"msg":"(trending page|backfill batch) written"/.test(l)).length;
    expect(written).toBeGreaterThan(0);
    const answered = sim.requests.filter((r) => r.status === 200).length;
    expect(answered).toBeGreaterThanOrEqual(written);
    expect(answered - written).toBeLessThanOrEqual(3);
    const cache = openCache(cachePath);
    cleanup.push(async () => cache.close());
    for (const region of ['US', 'GB']) {
      const snap = cache.latestSnapshot(region);
      expect(snap).toBeDefined();
      expect(snap!.videos.length % 50 === 0 || snap!.videos.length >= 190).toBe(true);
      expect(snap!.videos.map((v) => v.rank)).toEqual(snap!.videos.map((_, i) => i));
    }
    // No two runs of one job overlapped: each run's start comes after the previous run's end.
    const history = await openRunHistory({
      url: `sqlite:${ledgerPath}`,
      kind: 'sqlite',
      from: 'file',
    });
    cleanup.push(() => history.close());
    const runs = await history.list({ credentials: ['default'], limit: 1000 });
    for (const job of ['trending:US', 'trending:GB']) {
      const mine = runs.filter((r) => r.job === job).sort((a, b) => a.startedAt - b.startedAt);
      expect(mine.length).toBeGreaterThan(0);
      for (let i = 1; i < mine.length; i++)
        expect(mine[i]!.startedAt).toBeGreaterThanOrEqual(mine[i - 1]!.finishedAt);
    }
  }, 90_000);

  it('exits 78 with one line when the API key variable is missing', async () => {
    const file = tmpPath('nokey.yaml');
    writeFileSync(file, 'credentials: [{ id: default, apiKeyEnv: QG_TEST_NO_SUCH_KEY }]\n');
    const r = await cli('run', '--config', file);
    expect(r.code).toBe(78);
    expectOneLine(r.stderr, /QG_TEST_NO_SUCH_KEY/);
  });
});
