/**
 * Proof: search.list's own daily bucket runs dry at the simulator, which answers as the real API
 * does since the granular quota: 429 RESOURCE_EXHAUSTED naming defaultSearchListPerDayPerProject.
 * The guard blocks search.list until the upstream's midnight after that one answer; status and
 * /metrics show the block; trending and the backfill go on spending their own buckets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, quotaStatus } from '../../src/guard/index.js';
import { createMetrics, type MetricsServer, startMetricsServer } from '../../src/metrics/index.js';
import { runBackfill, runTrending } from '../../src/youtube/job-library/index.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { createYouTubeClient, type YouTubeClient } from '../../src/youtube/upstream/index.js';
import { type Rig, rig } from '../job-library/helpers.js';
import { sample, scrape } from '../metrics/helpers.js';

const SEARCH_CALLS = 5;
let sim: Simulator;
let r: Rig;
let client: YouTubeClient;
let server: MetricsServer;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, buckets: { 'search.list': SEARCH_CALLS } });
  r = await rig({ sim, config: { regions: ['US'] } });
  client = createYouTubeClient({ baseUrl: sim.url, apiKey: r.key });
});

afterAll(async () => {
  await server?.close();
  await client?.close();
  await r?.close();
  await sim?.close();
});

describe("search.list's bucket run dry at the upstream", () => {
  it('is blocked until midnight after one 429, shown in status and /metrics; trending and backfill go on', async () => {
    const metrics = createMetrics({ config: r.config, ledger: r.ledger, cache: r.cache });
    const guard = createGuard({
      config: r.config,
      ledger: r.ledger,
      logger: r.log,
      onEvent: metrics.guardEvent,
    });
    server = await startMetricsServer({ port: 0, metrics, ledger: r.ledger, cache: r.cache });
    const ctx = { ...r, guard };
    const search = (q: string) =>
      guard.call({ credential: 'default', method: 'search.list', tier: 'manual' }, () =>
        client.searchList({ q }),
      );

    for (let i = 0; i < SEARCH_CALLS; i++) expect((await search(`news ${i}`)).ok).toBe(true);
    const resetAt = sim.nextResetAt();
    const dry = await search('one more');
    expect(dry).toMatchObject({
      ok: false,
      reason: 'upstream-quota',
      bucket: 'search.list',
      exitCode: 75,
      blockedUntil: resetAt,
    });
    const rejected = sim.requests.filter((q) => q.bucket === 'search.list' && q.status === 429);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toBe('rateLimitExceeded');

    const sent = sim.requests.length;
    expect(await search('and again')).toMatchObject({ ok: false, reason: 'blocked', resumeAt: resetAt });
    expect(sim.requests.length).toBe(sent);

    const status = await quotaStatus(r.config, r.ledger);
    const buckets = Object.fromEntries(status.credentials[0]!.buckets.map((b) => [b.id, b]));
    expect(buckets['search.list']!.blockedUntil).toBe(new Date(resetAt).toISOString());
    expect(buckets['search.list']!.blockedReason).toMatch(
      /rateLimitExceeded \(defaultSearchListPerDayPerProject\)/,
    );
    expect(buckets['units']!.blockedUntil).toBeNull();
    expect(buckets['videos.batchGetStats']!.blockedUntil).toBeNull();

    const f = await scrape(server.url);
    expect(sample(f, 'quota_guard_bucket_blocked', { credential: 'default', bucket: 'search.list' })).toBe(1);
    expect(sample(f, 'quota_guard_bucket_blocked', { credential: 'default', bucket: 'units' })).toBe(0);

    // Trending spends units, the backfill videos.batchGetStats: both go on.
    const unitsBefore = sim.charged({ project: 'default', bucket: 'units' });
    const trending = await runTrending(ctx, { region: 'US' });
    expect(trending).toMatchObject({ outcome: 'done', pages: 4, units: 4 });
    expect(sim.charged({ project: 'default', bucket: 'units' }) - unitsBefore).toBe(4);
    const backfill = await runBackfill(ctx, { maxUnits: 2 });
    expect(backfill.units).toBe(2);
    expect(sim.charged({ project: 'default', bucket: 'videos.batchGetStats' })).toBe(2);
    expect(sim.requests.filter((q) => q.status === 429)).toHaveLength(1);
  });
});
