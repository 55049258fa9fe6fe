/**
 * `quota-guard serve` as its own process: after cron-style runs (`fetch` in-process), it serves the
 * status page and metrics read from the ledger's store alone, writes nothing, and exits 0 on SIGTERM.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openRunHistory } from '../../src/history/index.js';
import { loadYouTubeConfig as loadConfig } from '../../src/youtube/config/part.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { configFile } from '../e2e/helpers.js';
import { secretKey, tmpPath } from '../job-library/helpers.js';
import { get, sample, scrape } from '../metrics/helpers.js';
import { cli, expectOneLine } from './helpers.js';

let sim: Simulator;
let child: ChildProcess | undefined;
const key = secretKey();

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});
afterAll(async () => {
  await sim?.close();
});
afterEach(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  vi.unstubAllEnvs();
});

async function until(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('quota-guard serve', () => {
  it('serves the status page and the metrics of runs other processes made, from the store alone', async () => {
    const file = configFile({
      store: `sqlite:${tmpPath('ledger.db')}`,
      cache: { path: tmpPath('cache.db') },
      upstream: { baseUrl: sim.url },
      credentials: [{ id: 'default', apiKeyEnv: 'QG_SERVE_TEST_KEY' }],
      regions: ['US', 'GB', 'DE'],
    });
    vi.stubEnv('QG_SERVE_TEST_KEY', key);
    vi.stubEnv('LOG_LEVEL', 'silent');
    // What cron would have run: two regions, one of them twice.
    for (const region of ['US', 'GB', 'US'])
      expect((await cli('fetch', '-r', region, '--config', file)).code).toBe(0);
    const config = loadConfig({ file, env: {} });
    const history = await openRunHistory(config.store);
    const runs = await history.list({ credentials: ['default'] });
    const lastUs = (await history.lastSuccess(['default']))['US']!;
    await history.close();
    expect(runs).toHaveLength(3);

    // No API key in serve's environment: it never calls the upstream.
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
    delete env['QG_SERVE_TEST_KEY'];
    child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/bin.ts',
        'serve',
        '--config',
        file,
        '--http',
        '127.0.0.1:0',
        '--refresh',
        '7',
      ],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    await until('serve to listen', () => /serving http:\/\/127\.0\.0\.1:\d+\/metrics/.test(stderr));
    const base = /serving (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(stderr)![1]!;

    const page = await get(`${base}/`);
    expect(page.status).toBe(200);
    expect(page.type).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<meta http-equiv="refresh" content="7">');
    expect(page.body).toMatch(/<svg class="chart"[^>]*data-bucket="units"/);
    expect([...page.body.matchAll(/data-kind="run"/g)]).toHaveLength(
      3 * Object.keys(config.credential('default').buckets).length,
    );
    expect(page.body).toMatch(/data-region="DE" data-stale="true"/);
    // The backfill's bucket is paced over the upstream day by the guard: its line is drawn there, with
    // what the backfill spent today (nothing yet); the other buckets get an even pace.
    expect(page.body).toMatch(
      /data-bucket="videos\.batchGetStats"[^>]*>(?:(?!<\/svg>)[\s\S])*data-pace="guard"(?:(?!<\/svg>)[\s\S])*data-backfill-today="0"/,
    );
    expect(page.body).toMatch(/data-bucket="search\.list"[^>]*>(?:(?!<\/svg>)[\s\S])*data-pace="even"/);
    expect(page.body).toMatch(/data-region="US" data-stale="false"/);

    const f = await scrape(base);
    expect(sample(f, 'quota_guard_units_used', { bucket: 'units' })).toBe(12);
    expect(sample(f, 'quota_guard_units_remaining', { bucket: 'units', tier: 'scheduled' })).toBe(9_500 - 12);
    expect(sample(f, 'quota_guard_region_last_success_timestamp_seconds', { region: 'US' })).toBe(
      lastUs / 1000,
    );
    expect(sample(f, 'quota_guard_region_last_success_timestamp_seconds', { region: 'DE' })).toBeUndefined();
    expect(sample(f, 'quota_guard_region_stale', { region: 'US' })).toBe(0);
    expect(sample(f, 'quota_guard_region_stale', { region: 'DE' })).toBe(1);
    const runsOf = (outcome: string) =>
      sample(f, 'quota_guard_recorded_job_runs_total', { credential: 'default', job: 'trending', outcome });
    expect(runsOf('done')).toBe(3);
    // Series that have not happened yet are there at 0, so increase() sees their first event.
    expect(runsOf('failed')).toBe(0);
    expect(sample(f, 'quota_guard_recorded_job_runs_total', { job: 'backfill', outcome: 'done' })).toBe(0);
    expect(sample(f, 'quota_guard_recorded_job_units_total', { job: 'trending' })).toBe(12);
    expect(sample(f, 'quota_guard_fail_open_spends_total', { credential: 'default', bucket: 'units' })).toBe(
      0,
    );
    expect(sample(f, 'quota_guard_bucket_blocks_total', { credential: 'default', bucket: 'units' })).toBe(0);
    expect(
      sample(f, 'quota_guard_ledger_decisions_total', {
        bucket: 'units',
        tier: 'scheduled',
        outcome: 'fail-open',
      }),
    ).toBe(0);
    expect(sample(f, 'quota_guard_ledger_up')).toBe(1);
    expect(sample(f, 'quota_guard_history_up')).toBe(1);
    expect((await get(`${base}/healthz`)).status).toBe(200);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).not.toContain('internal error');
    // Serving read only: the ledger and the history hold what they held.
    const after = await openRunHistory(config.store);
    expect(await after.list({ credentials: ['default'] })).toEqual(runs);
    await after.close();
    const status = JSON.parse((await cli('status', '--json', '--config', file)).stdout);
    expect(status.credentials[0].buckets[0].used).toBe(12);
  });

  it('never creates a store: no ledger yet is exit 66 naming where it looked, and no file appears', async () => {
    const path = tmpPath('never-created.db');
    const file = configFile({ store: `sqlite:${path}`, cache: { path: tmpPath('cache.db') } });
    vi.stubEnv('LOG_LEVEL', 'info');
    const r = await cli('serve', '--config', file, '--http', '127.0.0.1:0');
    expect(r.code).toBe(66);
    expect(r.stderr).toContain('QG_STORE_NOT_FOUND');
    expect(r.stderr).toContain(path);
    expect(r.stderr).not.toContain('created a new SQLite ledger');
    expect(existsSync(path)).toBe(false);
  });

  it('a port in use is a temporary failure: exit 69, one line, so systemd restarts it', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', () => resolve()));
    const port = (holder.address() as { port: number }).port;
    try {
      const file = configFile({
        store: `sqlite:${tmpPath('ledger.db')}`,
        cache: { path: tmpPath('cache.db') },
      });
      vi.stubEnv('LOG_LEVEL', 'silent');
      // A ledger to read, made the way a job makes it.
      expect((await cli('spend', 'default', '--cost', '1', '--config', file)).code).toBe(0);
      const r = await cli('serve', '--config', file, '--http', `127.0.0.1:${port}`);
      expect(r.code).toBe(69);
      expectOneLine(r.stderr, new RegExp(`127\\.0\\.0\\.1:${port} is in use .*\\(QG_ADDRESS_IN_USE\\)`));
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });
});
