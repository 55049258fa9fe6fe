import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createGuard } from '../../src/guard/index.js';
import { openLedger } from '../../src/ledger/index.js';
import {
  checkHealth,
  createMetrics,
  type MetricsServer,
  parseHttpAddress,
  startMetricsServer,
} from '../../src/metrics/index.js';
import { parseYouTubeConfig as parseConfig } from '../../src/youtube/config/part.js';
import { runTrending } from '../../src/youtube/job-library/index.js';
import { capture } from '../guard/helpers.js';
import { type RedisServer, startRedisServer } from '../harness/redis.js';
import { type Rig, rig } from '../job-library/helpers.js';
import { get, sample, scrape } from './helpers.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function serve(opts: Parameters<typeof startMetricsServer>[0]): Promise<MetricsServer> {
  const s = await startMetricsServer({ port: 0, ...opts });
  cleanup.push(() => s.close());
  return s;
}

/** A rig whose guard feeds the metrics, as `quota-guard run` wires it. */
async function metered(config: Record<string, unknown> = {}) {
  const r: Rig = await rig({ config: { regions: ['US', 'GB'], ...config } });
  cleanup.push(() => r.close());
  const metrics = createMetrics({ config: r.config, ledger: r.ledger, cache: r.cache });
  const guard = createGuard({
    config: r.config,
    ledger: r.ledger,
    logger: r.log,
    onEvent: metrics.guardEvent,
  });
  const ctx = { ...r, guard };
  const server = await serve({ metrics, ledger: r.ledger, cache: r.cache });
  return { r, metrics, guard, ctx, server };
}

describe('/metrics', () => {
  it('serves what the guard and the jobs reported, parsed as Prometheus text', async () => {
    const { r, metrics, ctx, server } = await metered();
    const us = await runTrending(ctx, { region: 'US', maxPages: 2 });
    metrics.jobRun(us);
    expect(us).toMatchObject({ outcome: 'done', pages: 2, units: 2 });

    const res = await get(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.type).toContain('text/plain');
    let f = await scrape(server.url);
    const units = { credential: 'default', bucket: 'units' };
    expect(sample(f, 'quota_guard_units_used', units)).toBe(2);
    expect(sample(f, 'quota_guard_units_quota', units)).toBe(10_000);
    expect(sample(f, 'quota_guard_units_remaining', { ...units, tier: 'scheduled' })).toBe(9_500 - 2);
    expect(sample(f, 'quota_guard_units_remaining', { ...units, tier: 'backfill' })).toBe(8_500 - 2);
    expect(sample(f, 'quota_guard_units_remaining', { ...units, tier: 'manual' })).toBe(10_000 - 2);
    expect(sample(f, 'quota_guard_bucket_blocked', units)).toBe(0);
    expect(sample(f, 'quota_guard_ledger_up')).toBe(1);
    expect(
      sample(f, 'quota_guard_ledger_decisions_total', { ...units, tier: 'scheduled', outcome: 'allowed' }),
    ).toBe(2);
    expect(sample(f, 'quota_guard_job_runs_total', { job: 'trending', outcome: 'done' })).toBe(1);
    // The parser keeps no labels on histogram samples, so the count is read from the text itself.
    expect(f.get('quota_guard_job_run_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(res.body).toMatch(
      /^quota_guard_job_run_duration_seconds_count\{job="trending",outcome="done"\} 1$/m,
    );
    expect(sample(f, 'quota_guard_pages_written_total', { job: 'trending', region: 'US' })).toBe(2);
    expect(sample(f, 'quota_guard_job_units_total', { job: 'trending' })).toBe(2);
    expect(sample(f, 'quota_guard_cache_videos')).toBe(us.videos);
    expect(sample(f, 'quota_guard_cache_bytes')).toBeGreaterThan(0);

    // Someone else empties the key: the next page gets quotaExceeded, the bucket is blocked.
    r.sim.spendBehind('default', 'units', 10_000);
    const gb = await runTrending(ctx, { region: 'GB', maxPages: 2 });
    metrics.jobRun(gb);
    expect(gb.outcome).toBe('stopped');
    f = await scrape(server.url);
    expect(
      sample(f, 'quota_guard_upstream_errors_total', { method: 'videos.list', reason: 'quotaExceeded' }),
    ).toBe(1);
    expect(sample(f, 'quota_guard_bucket_blocks_total', units)).toBe(1);
    expect(sample(f, 'quota_guard_bucket_blocked', units)).toBe(1);
    // A block does not bend the figure (its own gauge says it): what the ledger counts is left.
    const used = sample(f, 'quota_guard_units_used', units)!;
    expect(sample(f, 'quota_guard_units_remaining', { ...units, tier: 'scheduled' })).toBe(9_500 - used);
    expect(sample(f, 'quota_guard_guard_stops_total', { reason: 'upstream-quota' })).toBe(1);
    expect(sample(f, 'quota_guard_job_runs_total', { job: 'trending', outcome: 'stopped' })).toBe(1);
    // Other buckets go on and are reported too.
    expect(
      sample(f, 'quota_guard_units_remaining', {
        credential: 'default',
        bucket: 'search.list',
        tier: 'manual',
      }),
    ).toBe(100);
  });

  it('reports what a tier has left under a narrower budget, as status and the page do', async () => {
    const { guard, server } = await metered({
      budgets: [
        { id: 'manual-search', methods: ['search.list'], tiers: ['manual'], limit: 40, window: '24h' },
      ],
    });
    await guard.spend({
      credential: 'default',
      method: 'search.list',
      tier: 'manual',
      tag: 'manual:search.list',
    });
    const f = await scrape(server.url);
    const search = { credential: 'default', bucket: 'search.list' };
    // The bucket's ceiling would leave 99; the manual-search budget leaves 39.
    expect(sample(f, 'quota_guard_units_remaining', { ...search, tier: 'manual' })).toBe(39);
    expect(sample(f, 'quota_guard_units_remaining', { ...search, tier: 'scheduled' })).toBe(95 - 1);
  });

  it('counts denials and skipped ticks', async () => {
    const { metrics, guard, server } = await metered({
      credentials: [{ id: 'default', buckets: { units: { quota: 3, reserve: 0, backfillHeadroom: 0 } } }],
    });
    for (let i = 0; i < 4; i++) await guard.spend({ credential: 'default', method: 'videos.list' });
    metrics.skippedTick('trending:US');
    metrics.skippedTick('trending:GB');
    const f = await scrape(server.url);
    const labels = { credential: 'default', bucket: 'units', tier: 'scheduled' };
    expect(sample(f, 'quota_guard_ledger_decisions_total', { ...labels, outcome: 'allowed' })).toBe(3);
    expect(sample(f, 'quota_guard_ledger_decisions_total', { ...labels, outcome: 'denied' })).toBe(1);
    expect(sample(f, 'quota_guard_scheduler_skipped_ticks_total', { job: 'trending' })).toBe(2);
  });

  it('answers 404 elsewhere and 405 to writes', async () => {
    const { server } = await metered();
    expect((await get(`${server.url}/`)).status).toBe(404);
    const { request } = await import('undici');
    const post = await request(`${server.url}/metrics`, { method: 'POST' });
    await post.body.text();
    expect(post.statusCode).toBe(405);
  });
});

describe('/healthz against a Redis that goes away and comes back', () => {
  let redis: RedisServer | undefined;
  afterEach(async () => {
    await redis?.stop();
    redis = undefined;
  });

  it('is 200 while Redis answers, 503 with the reason while it is stopped, 200 again when it returns', async () => {
    redis = await startRedisServer();
    const ledger = await openLedger(redis.url, {
      keyPrefix: `${inject('keyPrefix')}healthz:`,
      allowUnreachable: true,
      commandTimeoutMs: 500,
      connectTimeoutMs: 500,
    });
    cleanup.push(() => ledger.close());
    const config = parseConfig({}, { env: {} });
    const metrics = createMetrics({ config, ledger });
    const log = capture();
    const guard = createGuard({ config, ledger, logger: log, onEvent: metrics.guardEvent });
    const server = await serve({ metrics, ledger });

    let h = await get(`${server.url}/healthz`);
    expect(h.status).toBe(200);
    expect(JSON.parse(h.body)).toMatchObject({ status: 'ok', checks: { ledger: { ok: true } } });

    await redis.stop();
    h = await get(`${server.url}/healthz`);
    expect(h.status).toBe(503);
    const body = JSON.parse(h.body) as { status: string; checks: { ledger: { ok: boolean; error: string } } };
    expect(body.status).toBe('unavailable');
    expect(body.checks.ledger.ok).toBe(false);
    expect(body.checks.ledger.error).toMatch(/QG_STORE_UNAVAILABLE|did not answer/);
    // A cheap call goes through unrecorded (fail-open) and is counted; the gauges of a store that
    // does not answer are dropped rather than left stale.
    expect((await guard.spend({ credential: 'default', method: 'videos.list' })).reason).toBe('fail-open');
    let f = await scrape(server.url);
    expect(sample(f, 'quota_guard_ledger_up')).toBe(0);
    expect(sample(f, 'quota_guard_units_remaining', { bucket: 'units', tier: 'scheduled' })).toBeUndefined();
    expect(sample(f, 'quota_guard_fail_open_spends_total', { credential: 'default', bucket: 'units' })).toBe(
      1,
    );
    expect(sample(f, 'quota_guard_ledger_decisions_total', { bucket: 'units', outcome: 'fail-open' })).toBe(
      1,
    );

    await redis.restart();
    const deadline = Date.now() + 20_000;
    for (;;) {
      h = await get(`${server.url}/healthz`);
      if (h.status === 200 || Date.now() > deadline) break;
      await sleep(200);
    }
    expect(h.status).toBe(200);
    f = await scrape(server.url);
    expect(sample(f, 'quota_guard_ledger_up')).toBe(1);
    expect(sample(f, 'quota_guard_units_remaining', { bucket: 'units', tier: 'scheduled' })).toBe(9_500);
  });

  it('reports a cache that cannot be read', async () => {
    const { r } = await metered();
    r.cache.close();
    const h = await checkHealth({ ledger: r.ledger, cache: r.cache });
    expect(h.ok).toBe(false);
    expect(h.checks.ledger?.ok).toBe(true);
    expect(h.checks.cache).toMatchObject({ ok: false, error: expect.stringContaining('closed') });
  });
});

describe('--http addresses', () => {
  it('defaults to loopback port 9464', () => {
    expect(parseHttpAddress('9464')).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseHttpAddress(':9100')).toEqual({ host: '127.0.0.1', port: 9100 });
    expect(parseHttpAddress('127.0.0.1:9464')).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseHttpAddress('[::1]:9464')).toEqual({ host: '::1', port: 9464 });
    expect(parseHttpAddress('localhost')).toEqual({ host: 'localhost', port: 9464 });
    expect(() => parseHttpAddress('127.0.0.1:99999')).toThrow(/port must be/);
  });
});

describe('a burst of requests', () => {
  it('renders the status page once for every request that arrives while a render is in flight', async () => {
    const metrics = createMetrics();
    let inFlight = 0;
    let most = 0;
    let renders = 0;
    const server = await serve({
      metrics,
      page: async () => {
        renders++;
        most = Math.max(most, ++inFlight);
        await sleep(50);
        inFlight--;
        return '<html>status</html>';
      },
    });
    const answers = await Promise.all(Array.from({ length: 200 }, () => get(`${server.url}/`)));
    expect(answers.every((a) => a.status === 200 && a.body === '<html>status</html>')).toBe(true);
    // Bounded: one render at a time, and far fewer renders than requests.
    expect(most).toBe(1);
    expect(renders).toBeLessThan(50);
  });
});
