/**
 * Proof: Redis killed in the middle of a run. Cheap calls go on (fail-open, logged and counted),
 * expensive ones stop (fail-closed, 69), no job hangs, and once Redis is back the same process
 * records its spending again without a restart.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBackfill, runTrending } from '../../src/youtube/job-library/index.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { type RedisServer, startRedisServer } from '../harness/redis.js';
import { logText, type Rig, rig, used } from '../job-library/helpers.js';

let sim: Simulator;
let redis: RedisServer;
let r: Rig;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  redis = await startRedisServer();
  r = await rig({
    sim,
    store: redis.url,
    // The backfill is a call site that must not spend unrecorded: fail-closed.
    config: { storeDown: { default: 'auto', openMaxCost: 1, sites: { backfill: 'closed' } } },
  });
});

afterAll(async () => {
  await r?.close();
  await redis?.stop();
  await sim?.close();
});

async function waitForStore(): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      await r.ledger.ping();
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error('the ledger did not reconnect to the restarted Redis');
}

describe('Redis killed mid-run', () => {
  it('cheap calls fail open and are counted, expensive ones stop, nothing hangs, spending resumes after', async () => {
    const before = await runTrending(r, { region: 'US' });
    expect(before).toMatchObject({ outcome: 'done', units: 4, failOpenUnits: 0 });
    expect(await used(r)).toBe(4);

    // Kill Redis between pages of a running job.
    let killed = false;
    const killer = {
      info: (obj: object, msg: string) => {
        r.log.info(obj, msg);
        if (msg === 'trending page written' && !killed) {
          killed = true;
          void redis.stop();
        }
      },
      warn: r.log.warn,
    };
    const started = performance.now();
    const during = await runTrending({ ...r, logger: killer }, { region: 'GB' });
    // Pages 2-4 were spent while Redis was dead: allowed (1 unit each, fail-open), unrecorded, counted.
    expect(during).toMatchObject({ outcome: 'done', pages: 4, units: 4 });
    expect(during.failOpenUnits).toBeGreaterThanOrEqual(2);
    const failOpenLines = r.log.lines.filter((l) => /fail-open/.test(l.msg));
    expect(failOpenLines.length).toBe(during.failOpenUnits);
    // A page spend in flight when Redis died counts once settled (the restarted Redis lacks it).
    const stats = r.guard.stats();
    expect(stats.failOpen + stats.unsettled).toBe(during.failOpenUnits);

    // A whole job with Redis down: still goes on, and ends quickly.
    const down = await runTrending(r, { region: 'DE' });
    expect(down).toMatchObject({ outcome: 'done', pages: 4, failOpenUnits: 4 });

    // Expensive or fail-closed call sites stop with 69 instead of spending blind.
    const write = await r.guard.acquire({
      credential: 'default',
      method: 'channels.update',
      tag: 'manual:channels.update',
    });
    expect(write).toMatchObject({ ok: false, reason: 'store-down', exitCode: 69 });
    const backfill = await runBackfill(r);
    expect(backfill).toMatchObject({ outcome: 'unavailable', exitCode: 69, units: 0, pages: 0 });
    // No hang: every call failed fast (the command timeout is 1 s; these are refused connections).
    expect(performance.now() - started).toBeLessThan(20_000);

    // Redis comes back (empty: it keeps nothing on disk). The same guard records spends again.
    await redis.restart();
    await waitForStore();
    expect(await r.guard.settlePending(10_000)).toBe(0);
    const failOpenBefore = r.guard.stats().failOpen;
    const after = await runTrending(r, { region: 'FR' });
    expect(after).toMatchObject({ outcome: 'done', units: 4, failOpenUnits: 0 });
    expect(await used(r)).toBe(4);
    expect(r.guard.stats().failOpen).toBe(failOpenBefore);
    expect(logText(r)).not.toContain(r.key);
  });
});
