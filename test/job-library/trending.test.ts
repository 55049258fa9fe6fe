import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTrending } from '../../src/youtube/job-library/index.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { logText, rig, used } from './helpers.js';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});

afterAll(async () => {
  await sim?.close();
});

describe('trending job', () => {
  it('writes every page of the chart to the cache, one spend and one log line per page', async () => {
    const r = await rig({ sim, history: true });
    try {
      const charged = sim.charged();
      const result = await runTrending(r, { region: 'gb' });
      expect(result).toMatchObject({
        job: 'trending:GB',
        outcome: 'done',
        exitCode: 0,
        credential: 'default',
      });
      // The simulator's charts hold 190-200 videos: 4 pages of at most 50.
      expect(result.pages).toBe(4);
      expect(result.videos).toBeGreaterThanOrEqual(190);
      expect(result.units).toBe(4);
      expect(sim.charged() - charged).toBe(4);
      expect(await used(r)).toBe(4);

      const snap = r.cache.latestSnapshot('GB');
      expect(snap?.videos).toHaveLength(result.videos);
      expect(snap?.videos.map((v) => v.rank)).toEqual([...Array(result.videos).keys()]);
      const pages = r.log.lines.filter((l) => l.msg === 'trending page written');
      expect(pages.map((l) => (l.obj as { page: number }).page)).toEqual([1, 2, 3, 4]);
      expect(pages.every((l) => (l.obj as { region: string }).region === 'GB')).toBe(true);
      // The run is recorded once, in the run history.
      expect(await r.history!.list({ credentials: ['default'] })).toMatchObject([
        {
          job: 'trending:GB',
          labels: { region: 'GB' },
          outcome: 'done',
          pages: 4,
          units: 4,
          items: result.items,
        },
      ]);
      expect(logText(r)).not.toContain(r.key);
    } finally {
      await r.close();
    }
  });

  it("fetches the config's chart categories for a region instead of the whole chart", async () => {
    const r = await rig({ sim, config: { categories: { US: ['10'] } } });
    try {
      const result = await runTrending(r, { region: 'US' });
      expect(result.outcome).toBe('done');
      expect(r.cache.latestSnapshot('US', '10')?.videos.length).toBe(result.videos);
      expect(r.cache.latestSnapshot('US')).toBeUndefined();
    } finally {
      await r.close();
    }
  });

  it('stops with 75 when the scheduled ceiling is reached, keeping every page it wrote whole', async () => {
    // quota 7, reserve 1: the scheduled ceiling is 6 units; two regions want 8.
    const r = await rig({
      sim,
      config: { credentials: [{ id: 'default', buckets: { units: { quota: 7, reserve: 1 } } }] },
    });
    try {
      const us = await runTrending(r, { region: 'US' });
      const de = await runTrending(r, { region: 'DE' });
      expect(us).toMatchObject({ outcome: 'done', pages: 4 });
      expect(de).toMatchObject({ outcome: 'stopped', exitCode: 75, pages: 2, units: 2 });
      expect(de.stop).toMatchObject({ reason: 'budget', bucket: 'units', remaining: 0 });
      expect(de.reason).toMatch(/^stopped: videos\.list .* does not fit: 0 units left .*; resume in /);
      expect(de.resumeAt).toBeGreaterThan(Date.now() + 3_600_000);
      expect(await used(r)).toBe(6);
      // The two pages it got are in the cache, ranks 0..99 with no gap.
      expect(r.cache.latestSnapshot('DE')?.videos.map((v) => v.rank)).toEqual([...Array(100).keys()]);
    } finally {
      await r.close();
    }
  });

  it('ends at a page boundary when aborted: the page in flight is finished and written', async () => {
    const r = await rig({ sim });
    try {
      const controller = new AbortController();
      const logger = {
        info: (obj: object, msg: string) => {
          r.log.info(obj, msg);
          if (msg === 'trending page written') controller.abort();
        },
        warn: r.log.warn,
      };
      const result = await runTrending({ ...r, logger }, { region: 'FR', signal: controller.signal });
      expect(result).toMatchObject({ outcome: 'aborted', exitCode: 75, pages: 1, units: 1, videos: 50 });
      expect(r.cache.latestSnapshot('FR')?.videos).toHaveLength(50);
    } finally {
      await r.close();
    }
  });

  it('reports an upstream that keeps failing as unavailable (69), every attempt spent', async () => {
    const r = await rig({ sim });
    try {
      sim.faults.next('error', 3);
      const result = await runTrending(r, { region: 'IN' });
      expect(result).toMatchObject({
        outcome: 'unavailable',
        exitCode: 69,
        pages: 0,
        errorCode: 'QG_UPSTREAM_SERVER_ERROR',
      });
      // Three attempts (the guard's default), each one spent: the upstream charged them all.
      expect(result.units).toBe(3);
      expect(await used(r)).toBe(3);
      expect(logText(r)).not.toContain(r.key);
    } finally {
      sim.faults.clear();
      await r.close();
    }
  });

  it('returns a config failure (78) for an unknown region, an unknown credential or a missing API key', async () => {
    const r = await rig({ sim });
    const noKey = await rig({ sim, noKey: true });
    try {
      expect(await runTrending(r, { region: 'XX' })).toMatchObject({
        outcome: 'failed',
        exitCode: 78,
        errorCode: 'QG_UNKNOWN_REGION',
        pages: 0,
        units: 0,
      });
      expect(await runTrending(r, { region: 'US', credential: 'nope' })).toMatchObject({
        outcome: 'failed',
        exitCode: 78,
        errorCode: 'QG_UNKNOWN_CREDENTIAL',
      });
      const missing = await runTrending(noKey, { region: 'US' });
      expect(missing).toMatchObject({
        outcome: 'failed',
        exitCode: 78,
        errorCode: 'QG_MISSING_API_KEY',
        units: 0,
      });
      expect(missing.reason).toContain('QG_TEST_API_KEY');
      expect(await used(noKey)).toBe(0);
    } finally {
      await r.close();
      await noKey.close();
    }
  });

  it('reports a key the upstream rejects as a config failure (78) without the key in any line', async () => {
    const strict = await startSimulator({ port: 0, keys: ['the-only-valid-key'] });
    const r = await rig({ sim: strict });
    try {
      const result = await runTrending(r, { region: 'US' });
      expect(result).toMatchObject({ outcome: 'failed', exitCode: 78, errorCode: 'QG_UPSTREAM_KEY_INVALID' });
      expect(JSON.stringify({ result, lines: r.log.lines })).not.toContain(r.key);
      // The guard refunded the rejected request, so the run reports what the ledger holds: nothing.
      expect(await used(r)).toBe(0);
      expect(result.units).toBe(0);
    } finally {
      await r.close();
      await strict.close();
    }
  });
});
