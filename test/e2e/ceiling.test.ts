/**
 * Proof: regional jobs started at once on one credential never spend past the scheduled ceiling
 * (Redis ledger, simulator, real cache file); under the classic profile a backfill beside them
 * stops at its headroom line and the scheduled jobs still get their units.
 */
import { describe, expect, inject, it } from 'vitest';
import { openCache } from '../../src/youtube/cache/index.js';
import { DEFAULT_REGIONS } from '../../src/youtube/defaults.js';
import { runBackfill, runTrending } from '../../src/youtube/job-library/index.js';
import { startSimulator } from '../../src/youtube/simulator/index.js';
import { rig, secretKey, tmpPath, used } from '../job-library/helpers.js';
import { prefix } from './helpers.js';

describe('8 regional jobs at once on one credential', () => {
  it('never spend past the scheduled ceiling; each stops with 75 when it is reached', async () => {
    const sim = await startSimulator({ port: 0, quota: 20 });
    // quota 20, reserve 2: the scheduled ceiling is 18 units; the 8 charts want 32 pages.
    const r = await rig({
      sim,
      store: inject('redisUrl'),
      keyPrefix: prefix(),
      config: { credentials: [{ id: 'default', buckets: { units: { quota: 20, reserve: 2 } } }] },
    });
    try {
      const results = await Promise.all(DEFAULT_REGIONS.map((region) => runTrending(r, { region })));
      const units = results.reduce((s, x) => s + x.units, 0);
      expect(units).toBe(18);
      expect(results.reduce((s, x) => s + x.pages, 0)).toBe(18);
      expect(await used(r)).toBe(18);
      expect(sim.charged({ project: 'default' })).toBe(18);
      expect(sim.requests.filter((q) => q.status !== 200)).toEqual([]);
      for (const x of results) {
        expect(['done', 'stopped']).toContain(x.outcome);
        if (x.outcome === 'stopped') expect(x).toMatchObject({ exitCode: 75, stop: { reason: 'budget' } });
      }
      expect(results.filter((x) => x.outcome === 'stopped').length).toBeGreaterThan(0);
      // Every page a job got is in the cache whole.
      for (const x of results) {
        const snap = r.cache.latestSnapshot(x.job.split(':')[1]!);
        expect(snap?.videos.length ?? 0).toBe(x.videos);
      }
    } finally {
      await r.close();
      await sim.close();
    }
  });

  it('under the classic profile, a backfill beside them stops at its headroom line; trending gets all its units', async () => {
    const key = secretKey();
    const sim = await startSimulator({
      port: 0,
      profile: 'youtube-classic',
      quota: 1_000,
      keys: [`${key}@main`],
    });
    const cachePath = tmpPath('cache.db');
    // 3,000 cached videos refreshed a day ago: far more backfill work than its budget allows. (Their
    // ids are unknown upstream, which answers them with empty pages and charges each call all the same.)
    const old = openCache(cachePath, { now: () => Date.now() - 86_400_000 });
    old.upsertVideos(
      Array.from({ length: 3_000 }, (_, i) => ({
        id: `old${String(i).padStart(5, '0')}`,
        snippet: { title: `old ${i}` },
      })),
    );
    old.close();
    // quota 80, reserve 4, headroom 35: scheduled ceiling 76, backfill ceiling 41; trending needs 32.
    const r = await rig({
      sim,
      key,
      store: inject('redisUrl'),
      keyPrefix: prefix(),
      config: {
        cache: { path: cachePath },
        credentials: [
          {
            id: 'main',
            profile: 'youtube-classic',
            buckets: { units: { quota: 80, reserve: 4, backfillHeadroom: 35 } },
          },
        ],
      },
    });
    try {
      const [backfill, ...trending] = await Promise.all([
        runBackfill(r),
        ...DEFAULT_REGIONS.map((region) => runTrending(r, { region })),
      ]);
      expect(backfill).toMatchObject({
        outcome: 'stopped',
        exitCode: 75,
        stop: { reason: 'budget', tier: 'backfill' },
      });
      for (const t of trending) expect(t).toMatchObject({ outcome: 'done', pages: 4, units: 4 });
      const trendingUnits = 32;
      const total = await used(r, 'units', 'main');
      expect(total).toBe(backfill.units + trendingUnits);
      // The backfill spent up to its line (41) and no further; the scheduled tier never ran short.
      expect(total).toBeLessThanOrEqual(76);
      expect(backfill.units).toBeLessThanOrEqual(41);
      expect(backfill.units).toBeGreaterThanOrEqual(41 - trendingUnits);
      expect(sim.charged({ project: 'main' })).toBe(total);
    } finally {
      await r.close();
      await sim.close();
    }
  });
});
