/**
 * The backfill's pacing over the last hours of a compressed day: the drill's day (120 s, an "hour"
 * of 5 s, 8 regions × 4 pages every hour, 167 ms apart, the backfill 20 "minutes" after the hour,
 * maxSleep 42 ms) played on a fake clock shared by the guard and a SQLite ledger, event by event:
 * each region's pages a few ms apart at its scheduled time, and a backfill that follows its line —
 * one 1-unit call every 2 ms while it is allowed, sleeping through a denial of at most maxSleep.
 * A longer denial is where a real run stops; after the day's last backfill tick no run starts again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/ledger/types.js';
import { trendingRuns } from '../../src/youtube/cron-runs.js';
import { clockedGuard } from './helpers.js';

const DAY_MS = 120_000;
const HOUR_MS = DAY_MS / 24;
const DAY = Date.parse('2026-03-10T00:00:00Z');
const MAX_SLEEP_MS = 42;
const PAGE_GAP_MS = 6;
const BACKFILL_CALL_MS = 2;
const BACKFILL_STAGGER_MS = Math.round(HOUR_MS / 3);

const opened: Ledger[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()));
});

const RAW = {
  credentials: [{ id: 'c', profile: 'youtube-classic', timeZone: 'UTC', window: `${2 * DAY_MS}ms` }],
  regions: ['US', 'GB', 'DE', 'FR', 'JP', 'KR', 'IN', 'BR'],
  schedules: {
    trending: { cron: '*/5 * * * * *', stagger: '167ms', maxPages: 4, timeZone: 'UTC' },
    backfill: { cron: '*/5 * * * * *', stagger: `${BACKFILL_STAGGER_MS}ms`, timeZone: 'UTC' },
  },
  maxSleep: `${MAX_SLEEP_MS}ms`,
};

interface Wait {
  at: number;
  ms: number;
  limitedBy: string | undefined;
}

/** Plays the day from `fromHour` to its end; returns the backfill's long waits and the bucket's end. */
async function playDay(fromHour: number) {
  const { guard, ledger, config, set } = await clockedGuard(RAW, {
    start: DAY,
    upstreamDay: (_zone, at) => {
      const start = DAY + Math.floor((at - DAY) / DAY_MS) * DAY_MS;
      return { start, end: start + DAY_MS };
    },
  });
  opened.push(ledger);
  let clock = DAY;
  const to = (ms: number) => {
    clock = ms;
    set(ms);
  };
  const from = DAY + fromHour * HOUR_MS;
  const end = DAY + DAY_MS;
  const trending = { credential: 'c', method: 'videos.list', tier: 'scheduled' as const };
  const backfill = { credential: 'c', method: 'videos.list', tier: 'backfill' as const };

  // The day so far: the trending runs before `from`, and a backfill that kept to its line.
  const runs = trendingRuns(config, config.credential('c'), DAY, end).spends;
  to(from - 1);
  const before = runs.filter((r) => r.at < from - 1).reduce((n, r) => n + r.units, 0);
  expect((await guard.spend({ ...trending, cost: before })).allowed).toBe(true);
  to(from);
  const start = await guard.pacingLine('c', 'units');
  expect((await guard.spend({ ...backfill, cost: start.allowed! })).allowed).toBe(true);

  // The rest of the day, one event at a time in time order.
  const events: Array<{ at: number; act: () => Promise<void> }> = [];
  const add = (at: number, act: () => Promise<void>) => {
    if (at < end) events.push({ at, act });
  };
  let trendingDenied = 0;
  for (const r of runs.filter((s) => s.at >= from))
    for (let p = 0; p < r.units; p++)
      add(r.at + p * PAGE_GAP_MS, async () => {
        if (!(await guard.spend({ ...trending, cost: 1 })).allowed) trendingDenied++;
      });
  const longWaits: Wait[] = [];
  let full = false;
  const backfillCall = async () => {
    const o = await guard.spend({ ...backfill, cost: 1 });
    if (o.allowed) return add(clock + BACKFILL_CALL_MS, backfillCall);
    // At its ceiling with the line lifted: nothing more to spend today.
    if (o.limitedBy === 'units' && clock >= start.burstFrom) {
      full = true;
      return;
    }
    if (o.retryAfterMs > MAX_SLEEP_MS)
      longWaits.push({ at: clock, ms: o.retryAfterMs, limitedBy: o.limitedBy });
    add(clock + o.retryAfterMs, backfillCall);
  };
  add(from + 1, backfillCall);
  while (events.length > 0) {
    events.sort((a, b) => a.at - b.at);
    const next = events.shift()!;
    to(next.at);
    await next.act();
  }
  to(end - 1);
  const last = await guard.pacingLine('c', 'units');
  return { start, last, longWaits, full, trendingDenied, bucket: config.credential('c').buckets.units! };
}

describe('the backfill over the last hours of a compressed day', () => {
  it('is never told to wait longer than maxSleep while it keeps to its line, and ends the day at its ceiling', async () => {
    const day = await playDay(20);
    // The day's last backfill run is 20 "minutes" after the last tick: the line is lifted there.
    expect(day.start.burstFrom).toBe(DAY + 23 * HOUR_MS + BACKFILL_STAGGER_MS);
    expect(day.trendingDenied).toBe(0);
    // Each region's pages are what was held back for it: the line does not drop under the backfill
    // by more than it may sleep through, so it never stops (the run in progress at the day's last
    // backfill tick makes that tick skip, and nothing would start it again today).
    expect(day.longWaits).toEqual([]);
    // And it spent what its ceiling allows: the bucket ends the day at quota − reserve − headroom.
    expect(day.full).toBe(true);
    expect(day.last.used).toBe(day.bucket.ceilings.backfill);
  });
});
