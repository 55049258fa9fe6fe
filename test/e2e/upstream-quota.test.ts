/**
 * Proof: the simulator's own counter is exhausted behind the guard's back, so it answers
 * quotaExceeded although the ledger allowed the call. The guard blocks that bucket of the
 * credential until the simulator's next midnight in America/Los_Angeles, every job spending it
 * stops, and the credential's other buckets go on (Redis ledger, real cache file).
 */
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { quotaStatus } from '../../src/guard/index.js';
import { DEFAULT_REGIONS } from '../../src/youtube/defaults.js';
import { runBackfill, runTrending } from '../../src/youtube/job-library/index.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { logText, type Rig, rig } from '../job-library/helpers.js';
import { prefix } from './helpers.js';

let sim: Simulator;
let r: Rig;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  r = await rig({ sim, store: inject('redisUrl'), keyPrefix: prefix() });
});

afterAll(async () => {
  await r?.close();
  await sim?.close();
});

const quotaExceeded = () => sim.requests.filter((q) => q.reason === 'quotaExceeded');

describe('the upstream says quotaExceeded although the ledger allowed it', () => {
  it('blocks units until the upstream midnight: every trending job stops, the backfill on its own bucket goes on', async () => {
    const seeded = await runTrending(r, { region: 'US' });
    expect(seeded.outcome).toBe('done');

    sim.spendBehind('default', 'units', 10_000);
    const resetAt = sim.nextResetAt();
    const [backfill, ...trending] = await Promise.all([
      runBackfill(r),
      ...DEFAULT_REGIONS.map((region) => runTrending(r, { region })),
    ]);

    for (const t of trending) {
      expect(t).toMatchObject({ outcome: 'stopped', exitCode: 75, pages: 0 });
      expect(['upstream-quota', 'blocked']).toContain(t.stop?.reason);
      expect(t.resumeAt).toBe(resetAt);
    }
    // Only jobs whose request was already allowed met the 403; the block stopped the rest in the ledger.
    const hits = quotaExceeded().length;
    expect(hits).toBeGreaterThanOrEqual(1);
    expect(hits).toBeLessThanOrEqual(DEFAULT_REGIONS.length);
    expect(trending.filter((t) => t.stop?.reason === 'upstream-quota')).toHaveLength(hits);

    // videos.batchGetStats has its own bucket: the backfill refreshed the whole cache.
    expect(backfill).toMatchObject({ outcome: 'done', videos: seeded.videos });

    // A later job stops at the ledger, without another request to the upstream.
    const requests = sim.requests.length;
    const later = await runTrending(r, { region: 'CA' });
    expect(later).toMatchObject({ outcome: 'stopped', exitCode: 75, stop: { reason: 'blocked' } });
    expect(later.reason).toMatch(/blocked until .*quotaExceeded/);
    expect(sim.requests.length).toBe(requests);

    // status shows the block, until the simulator's midnight, and why; the other buckets are open.
    const status = await quotaStatus(r.config, r.ledger);
    const buckets = Object.fromEntries(status.credentials[0]!.buckets.map((b) => [b.id, b]));
    expect(buckets['units']!.blockedUntil).toBe(new Date(resetAt).toISOString());
    expect(buckets['units']!.blockedReason).toMatch(/quotaExceeded/);
    expect(buckets['videos.batchGetStats']!.blockedUntil).toBeNull();
    expect(buckets['units']!.remaining.scheduled).toBe(0);
    expect(logText(r)).not.toContain(r.key);

    // One warning for the block, however many requests in flight met it; it says who reported it.
    const blocked = r.log.lines.filter((l) => l.msg === 'bucket blocked');
    expect(blocked.map((l) => l.level)).toEqual(['warn']);
    expect(buckets['units']!.blockedReason).toContain(`; reported by trending on ${hostname()}`);
    // The upstream's answers themselves are debug lines: the block's line says it.
    expect(
      r.log.lines.filter((l) => l.level === 'warn' && /^videos\.list: quotaExceeded/.test(l.msg)),
    ).toEqual([]);
  });
});
