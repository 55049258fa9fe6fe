import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCache } from '../../src/youtube/cache/index.js';
import {
  backfillCursorName,
  backfillProgress,
  runBackfill,
  runTrending,
} from '../../src/youtube/job-library/index.js';
import { jobLine } from '../../src/youtube/job-library/summary.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { capture } from '../guard/helpers.js';
import { type Rig, rig, used } from './helpers.js';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});

afterAll(async () => {
  await sim?.close();
});

/** Fill the cache with one region's chart; returns the cached ids. */
async function seed(r: Rig, region = 'US'): Promise<string[]> {
  const t = await runTrending(r, { region });
  expect(t.outcome).toBe('done');
  return r.cache.latestSnapshot(region)!.videos.map((v) => v.id);
}

function requestsOf(method: string, since: number): number {
  return sim.requests.filter((q) => q.seq > since && q.method === method).length;
}

describe('backfill job', () => {
  it('refreshes every cached video through videos.batchGetStats (its own bucket) and clears its cursor', async () => {
    const r = await rig({ sim });
    try {
      const ids = await seed(r);
      const before = Math.max(...ids.map((id) => r.cache.getVideo(id)!.lastRefreshed));
      const seq = sim.requests.at(-1)!.seq;
      const result = await runBackfill(r);
      const calls = Math.ceil(ids.length / 50);
      expect(result).toMatchObject({
        job: 'backfill',
        outcome: 'done',
        exitCode: 0,
        pages: calls,
        units: calls,
      });
      expect(result.videos).toBe(ids.length);
      expect(requestsOf('videos.batchGetStats', seq)).toBe(calls);
      expect(requestsOf('videos.list', seq)).toBe(0);
      // It never competed with trending: the shared bucket holds only the 4 trending pages.
      expect(await used(r, 'videos.batchGetStats')).toBe(calls);
      expect(await used(r, 'units')).toBe(4);
      for (const id of ids) expect(r.cache.getVideo(id)!.lastRefreshed).toBeGreaterThanOrEqual(before);
      expect(r.cache.getCursor(backfillCursorName('default'))).toBeUndefined();
      const lines = r.log.lines.filter((l) => l.msg === 'backfill batch written');
      expect(lines).toHaveLength(calls);
      expect(lines[0]?.obj).toMatchObject({
        method: 'videos.batchGetStats',
        ids: 50,
        refreshed: 50,
        missing: 0,
      });
    } finally {
      await r.close();
    }
  });

  it('uses videos.list by id under the classic profile, where there is no batchGetStats bucket', async () => {
    const classic = await startSimulator({ port: 0, profile: 'youtube-classic' });
    const r = await rig({
      sim: classic,
      config: { credentials: [{ id: 'legacy', profile: 'youtube-classic' }] },
    });
    try {
      const ids = await seed(r, 'CA');
      const seq = classic.requests.at(-1)!.seq;
      const result = await runBackfill(r);
      expect(result).toMatchObject({ outcome: 'done', credential: 'legacy', videos: ids.length });
      const listCalls = classic.requests.filter((q) => q.seq > seq && q.method === 'videos.list').length;
      expect(listCalls).toBe(Math.ceil(ids.length / 50));
      expect(await used(r, 'units')).toBe(4 + listCalls);
    } finally {
      await r.close();
      await classic.close();
    }
  });

  it('resumes where a run capped by --max-units stopped, refreshing no video twice in a pass', async () => {
    const r = await rig({ sim });
    try {
      const ids = await seed(r, 'AU');
      const seq = sim.requests.at(-1)!.seq;
      const first = await runBackfill(r, { maxUnits: 2 });
      expect(first).toMatchObject({ outcome: 'done', exitCode: 0, pages: 2, units: 2, videos: 100 });
      expect(first.reason).toMatch(/--max-units/);
      const cursor = r.cache.getCursor(backfillCursorName('default'));
      expect(cursor).toBeDefined();

      // The next run: a new process would read the same cursor from the cache.
      const second = await runBackfill(r);
      expect(second).toMatchObject({ outcome: 'done', videos: ids.length - 100 });
      expect(requestsOf('videos.batchGetStats', seq)).toBe(Math.ceil(ids.length / 50));
      expect(r.cache.getCursor(backfillCursorName('default'))).toBeUndefined();

      // A finished pass starts a new one next time.
      const third = await runBackfill(r, { maxUnits: 1 });
      expect(third).toMatchObject({ outcome: 'done', pages: 1, videos: 50 });
    } finally {
      await r.close();
    }
  });

  it('stops with 75 at the headroom line and leaves the units above it to scheduled jobs', async () => {
    const classic = await startSimulator({ port: 0, profile: 'youtube-classic' });
    // quota 20, reserve 1, headroom 10: backfill ceiling 9, scheduled ceiling 19.
    const r = await rig({
      sim: classic,
      config: {
        credentials: [
          {
            id: 'legacy',
            profile: 'youtube-classic',
            buckets: { units: { quota: 20, reserve: 1, backfillHeadroom: 10 } },
          },
        ],
      },
    });
    try {
      await seed(r, 'BR'); // 4 units
      const backfill = await runBackfill(r, { batchSize: 10 });
      expect(backfill).toMatchObject({ outcome: 'stopped', exitCode: 75, units: 5, pages: 5 });
      expect(backfill.stop).toMatchObject({ reason: 'budget', tier: 'backfill', remaining: 0 });
      // The stop is logged once, by the guard; the run's end says it stopped without saying it again.
      const msgs = r.log.lines.map((l) => l.msg);
      expect(msgs.filter((m) => m.includes(backfill.stop!.message))).toHaveLength(1);
      expect(msgs).toContain('backfill stopped (budget, the stop above)');
      expect(msgs.join('\n')).not.toMatch(/stopped: stopped/);
      expect(await used(r, 'units')).toBe(9);
      // The scheduled tier still has its 10 units: a whole chart (4 pages) fits.
      const trending = await runTrending(r, { region: 'US' });
      expect(trending).toMatchObject({ outcome: 'done', units: 4 });
      // The stopped backfill left its cursor: the next run resumes after the 50 videos it did.
      expect(r.cache.getCursor(backfillCursorName('legacy'))).toBeDefined();
    } finally {
      await r.close();
      await classic.close();
    }
  });

  it('rejects a bad --max-units as a value, not a throw', async () => {
    const r = await rig({ sim });
    try {
      expect(await runBackfill(r, { maxUnits: 0 })).toMatchObject({
        outcome: 'failed',
        exitCode: 64,
        errorCode: 'QG_INVALID_ARGUMENT',
      });
    } finally {
      await r.close();
    }
  });
});

describe('backfill order and freshness', () => {
  /**
   * `n` videos of a region's chart that are not in `taken`, written to the cache as last refreshed
   * `agoMs` ago (through a second connection with its clock set back).
   */
  async function cachedAgo(r: Rig, region: string, n: number, agoMs: number, taken: Set<string>) {
    const page = await r.upstream.get('default').videosListChart({ regionCode: region, maxResults: 50 });
    const videos = page.items.filter((v) => !taken.has(v.id)).slice(0, n);
    expect(videos).toHaveLength(n);
    const past = openCache(r.config.cache.path, { now: () => Date.now() - agoMs });
    try {
      past.upsertVideos(videos);
    } finally {
      past.close();
    }
    for (const v of videos) taken.add(v.id);
    return videos.map((v) => v.id);
  }

  it('refreshes the stalest first and skips what was refreshed less than backfill.minAge ago, saying how many', async () => {
    const r = await rig({ sim, config: { backfill: { minAge: '1h' } } });
    try {
      const fresh = await seed(r); // refreshed just now by the trending run
      const taken = new Set(fresh);
      const stalest = await cachedAgo(r, 'IN', 20, 3 * 3_600_000, taken);
      const stale = await cachedAgo(r, 'BR', 20, 2 * 3_600_000, taken);
      const justBefore = await cachedAgo(r, 'AU', 5, 30 * 60_000, taken); // 30 minutes: too fresh
      const at = (id: string) => r.cache.getVideo(id)!.lastRefreshed;
      const freshAt = new Map(fresh.map((id) => [id, at(id)]));

      // One call of 30 ids: the 30 stalest, all 20 of the oldest group and 10 of the next.
      const one = await runBackfill(r, { maxUnits: 1, batchSize: 30 });
      expect(one).toMatchObject({ outcome: 'done', pages: 1, units: 1, skipped: fresh.length + 5 });
      const start = one.startedAt;
      expect(stalest.filter((id) => at(id) >= start)).toHaveLength(20);
      expect(stale.filter((id) => at(id) >= start)).toHaveLength(10);

      // The rest of the pass: the other 10, never the fresh ones.
      const rest = await runBackfill(r, { batchSize: 30 });
      expect(rest).toMatchObject({ outcome: 'done', pages: 1, units: 1 });
      expect(stale.every((id) => at(id) >= start)).toBe(true);
      expect(justBefore.every((id) => at(id) < start)).toBe(true);
      expect(fresh.every((id) => at(id) === freshAt.get(id))).toBe(true);

      // Straight after, everything is fresh: nothing spent, everything skipped and said so.
      const again = await runBackfill(r);
      expect(again).toMatchObject({ outcome: 'done', pages: 0, units: 0, skipped: fresh.length + 45 });
      expect(jobLine(again)).toContain(`${fresh.length + 45} videos skipped as refreshed too recently`);
      // The run that did nothing says why (the history shows its reason, not `done 0 0 0`).
      expect(again.reason).toBe(
        `nothing due: the ${fresh.length + 45} cached videos were refreshed within backfill.minAge (1h) and are left alone`,
      );
    } finally {
      await r.close();
    }
  });

  it('refreshes everything again with minAge 0', async () => {
    const r = await rig({ sim, config: { backfill: { minAge: 0 } } });
    try {
      const ids = await seed(r);
      const first = await runBackfill(r);
      expect(first).toMatchObject({ outcome: 'done', pages: Math.ceil(ids.length / 50), skipped: 0 });
      // A video refreshed in the very millisecond a run starts is 0 ms old, so still skipped: start
      // the next run on a later millisecond than the last write.
      while (Date.now() <= first.finishedAt) await new Promise((done) => setTimeout(done, 1));
      const again = await runBackfill(r);
      expect(again).toMatchObject({ outcome: 'done', pages: first.pages, videos: first.videos, skipped: 0 });
    } finally {
      await r.close();
    }
  });
});

describe('backfill progress', () => {
  it('ends its lines before the run’s own last line', async () => {
    const r = await rig({ sim, config: { backfill: { minAge: 0 } } });
    try {
      await seed(r);
      await runBackfill(r, {
        progress: backfillProgress({ tty: false, logger: r.log, intervalMs: 1_000_000 }),
      });
      const msgs = r.log.lines.map((l) => l.msg);
      const done = msgs.findIndex((m) => m.startsWith('backfill done'));
      expect(done).toBeGreaterThan(-1);
      expect(msgs.findLastIndex((m) => m.startsWith('backfill progress'))).toBeLessThan(done);
    } finally {
      await r.close();
    }
  });

  it('logs a line per interval and a last one at the end when the output is not a terminal', () => {
    const log = capture();
    let t = 0;
    const p = backfillProgress({ tty: false, logger: log, intervalMs: 10_000, now: () => t });
    p.start(200);
    p.update(50, { units: 1, batches: 1 });
    t = 10_000;
    p.update(100, { units: 2, batches: 2 });
    t = 12_000;
    p.update(150, { units: 3, batches: 3 });
    p.stop();
    expect(log.lines.map((l) => l.msg)).toEqual([
      'backfill progress: 100/200 videos',
      'backfill progress: 150/200 videos',
    ]);
  });
});
