/**
 * The backfill's ceiling less today's scheduled need, and its pacing line over the upstream day, on
 * a SQLite ledger and a guard sharing one fake clock (so nothing depends on when the test runs).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { renderStatus } from '../../src/cli/render/status.js';
import { type Guard, quotaStatus } from '../../src/guard/index.js';
import { PACE_HOLD_BACK, pacingLineAt } from '../../src/guard/pacing.js';
import type { Ledger } from '../../src/ledger/types.js';
import { parseYouTubeConfig as parseConfig } from '../../src/youtube/config/part.js';
import { scheduledNeed } from '../../src/youtube/cron-runs.js';
import { clockedGuard } from './helpers.js';

const HOUR = 3_600_000;
const DAY = Date.parse('2026-03-10T00:00:00Z');

const opened: Ledger[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()));
});

interface Rig {
  guard: Guard;
  ledger: Ledger;
  /** Set the shared clock to `h` hours into the day. */
  at(h: number): void;
}

async function rig(raw: Record<string, unknown>, options: { schedules?: boolean } = {}): Promise<Rig> {
  const r = await clockedGuard(raw, { start: DAY, ...options });
  opened.push(r.ledger);
  return { guard: r.guard, ledger: r.ledger, at: (h) => r.set(DAY + h * HOUR) };
}

/** Classic profile, one credential in UTC: 2 regions × 4 pages every hour at :00 and :02 = 8 units an hour. */
const CLASSIC = {
  credentials: [
    {
      id: 'c',
      profile: 'youtube-classic',
      timeZone: 'UTC',
      buckets: { units: { quota: 1_000, reserve: 50, backfillHeadroom: 100 } },
    },
  ],
  regions: ['US', 'GB'],
  schedules: {
    trending: { cron: '0 * * * *', stagger: '2m', timeZone: 'UTC', maxPages: 4 },
    backfill: { cron: '30 * * * *', timeZone: 'UTC' },
  },
};

describe('a guard told of no schedule', () => {
  it('holds nothing back for scheduled runs and lifts the line only at midnight', async () => {
    const r = await rig(CLASSIC, { schedules: false });
    r.at(12);
    const line = await r.guard.pacingLine('c', 'units');
    expect(line).toMatchObject({
      scheduledNeed: 0,
      scheduledRunsLeft: 0,
      ceiling: 850,
      burstFrom: DAY + 24 * HOUR,
    });
    const told = await rig(CLASSIC);
    told.at(12);
    expect((await told.guard.pacingLine('c', 'units')).scheduledNeed).toBeGreaterThan(0);
  });
});

describe("today's scheduled runs are held back from the backfill", () => {
  it('the backfill ceiling is min(backfill ceiling, scheduled ceiling − what the rest of the day’s runs need)', async () => {
    const r = await rig({
      ...CLASSIC,
      credentials: [
        { ...CLASSIC.credentials[0], buckets: { units: { quota: 1_000, reserve: 50, backfillHeadroom: 0 } } },
      ],
      backfill: { pace: 'none' },
    });
    // 10:30: runs at 11:00 … 23:00 are left, 13 ticks × 2 regions × 4 pages.
    r.at(10.5);
    const line = await r.guard.pacingLine('c', 'units');
    expect(line).toMatchObject({
      scheduledNeed: 104,
      scheduledRunsLeft: 26,
      ceiling: 950 - 104,
      allowed: null,
    });
    // The backfill stops there; the scheduled tier still has its 104 units.
    expect(
      await r.guard.spend({ credential: 'c', bucket: 'units', cost: 846, tier: 'backfill' }),
    ).toMatchObject({
      allowed: true,
    });
    const denied = await r.guard.spend({ credential: 'c', bucket: 'units', cost: 1, tier: 'backfill' });
    expect(denied).toMatchObject({ allowed: false, reason: 'budget', limitedBy: 'units' });
    // It may go on once the next run has started (11:00 and the grace of maxSleep).
    expect(denied.retryAfterMs).toBe(HOUR / 2 + 30_000 + 1);
    for (let i = 0; i < 13; i++)
      expect(
        (await r.guard.spend({ credential: 'c', bucket: 'units', cost: 8, tier: 'scheduled' })).allowed,
      ).toBe(true);
    // At 23:30 no run is left: the backfill may use the bucket up to its own ceiling.
    r.at(23.5);
    expect(await r.guard.pacingLine('c', 'units')).toMatchObject({ scheduledNeed: 0, ceiling: 950 });
  });

  it('holds nothing back with holdScheduled: false, and a bucket no schedule spends is never held back', async () => {
    const r = await rig({ ...CLASSIC, backfill: { pace: 'none', holdScheduled: false } });
    r.at(1);
    expect(await r.guard.pacingLine('c', 'units')).toMatchObject({ scheduledNeed: 0, ceiling: 850 });
    const modern = await rig({ credentials: [{ id: 'c', timeZone: 'UTC' }] });
    modern.at(1);
    expect(await modern.guard.pacingLine('c', 'videos.batchGetStats')).toMatchObject({
      scheduledNeed: 0,
      ceiling: 8_500,
    });
  });
});

describe('status shows what is held back and the line', () => {
  it('per bucket: the scheduled need, the backfill ceiling, spent today and allowed by now', async () => {
    const r = await rig(CLASSIC);
    r.at(12);
    expect(
      (await r.guard.spend({ credential: 'c', bucket: 'units', cost: 100, tier: 'backfill' })).allowed,
    ).toBe(true);
    const report = await quotaStatus(r.guard.config, r.ledger, {
      now: () => DAY + 12 * HOUR,
      scheduledNeed: scheduledNeed(r.guard.config),
    });
    const units = report.credentials[0]!.buckets.find((b) => b.id === 'units')!;
    expect(units.backfill).toEqual({
      scheduledNeed: 96,
      scheduledRunsLeft: 24,
      ceiling: 850,
      pace: 'day',
      spentToday: 100,
      // The allowance: 100 spent + what is left under 850 once the 96 units of need are spent.
      allowedByNow: Math.floor((((850 - 96) * 12) / 23.5) * (1 - PACE_HOLD_BACK)),
      burstFrom: new Date(DAY + 23.5 * HOUR).toISOString(),
    });
    // One line per note, wrapped to the width: read it unwrapped.
    const text = renderStatus(report, { localZone: 'UTC' }).replace(/\s+/g, ' ');
    expect(text).toContain(
      'backfill: up to 850 in the bucket (96 held back for 24 scheduled runs left today);',
    );
    expect(text).toContain(
      `pace day: 100 spent today, ${Math.floor((((850 - 96) * 12) / 23.5) * 0.9)} allowed by now on its line`,
    );
  });
});

describe('the backfill is paced over the upstream day', () => {
  /** youtube-2026: the backfill spends videos.batchGetStats, its own bucket; 9,500 spendable. */
  const MODERN = {
    credentials: [{ id: 'c', timeZone: 'UTC', buckets: { 'videos.batchGetStats': { backfillHeadroom: 0 } } }],
    schedules: { backfill: { cron: '30 * * * *', timeZone: 'UTC' } },
  };
  const spend = (r: Rig, cost: number) =>
    r.guard.spend({ credential: 'c', method: 'videos.batchGetStats', cost, tier: 'backfill' });

  it('spends at most the share of its allowance the day has used, then bursts at the last run', async () => {
    const r = await rig(MODERN);
    // 06:00: 6 of the 23.5 hours to the day's last backfill run (23:30).
    r.at(6);
    expect(await r.guard.pacingLine('c', 'videos.batchGetStats')).toMatchObject({
      pace: 'day',
      allowance: 9_500,
      holdBack: 0,
      allowed: Math.floor((9_500 * 6) / 23.5), // 2,425
      burstFrom: DAY + 23.5 * HOUR,
    });
    expect((await spend(r, 2_000)).allowed).toBe(true);
    expect((await spend(r, 425)).allowed).toBe(true);
    const denied = await spend(r, 95);
    expect(denied).toMatchObject({
      allowed: false,
      reason: 'budget',
      limitedBy: 'videos.batchGetStats backfill pace',
    });
    // 95 more units (1 % of the day's allowance): the first ms at which the line reaches 2,520.
    expect(denied.retryAfterMs).toBe(Math.ceil((23.5 * HOUR * 2_520) / 9_500) - 6 * HOUR);
    // 12:00: the line has risen to 12 / 23.5 of the allowance.
    r.at(12);
    expect((await spend(r, Math.floor((9_500 * 12) / 23.5) - 2_425)).allowed).toBe(true);
    expect((await spend(r, 1)).allowed).toBe(false);
    // At the day's last backfill run the line is lifted: everything left may go.
    r.at(23.5);
    expect((await spend(r, 9_500 - Math.floor((9_500 * 12) / 23.5))).allowed).toBe(true);
    expect(await spend(r, 1)).toMatchObject({ allowed: false, limitedBy: 'videos.batchGetStats' });
  });

  it('holds a share back until the last backfill run where the backfill shares the bucket with scheduled runs', async () => {
    const r = await rig(CLASSIC);
    r.at(12);
    const line = await r.guard.pacingLine('c', 'units');
    // 12:00: 12 ticks × 2 regions × 4 pages are still to come: under the 850 backfill ceiling they
    // leave the backfill 754 for the day.
    expect(line).toMatchObject({ scheduledNeed: 96, ceiling: 850, allowance: 754, holdBack: PACE_HOLD_BACK });
    expect(line.allowed).toBe(Math.floor(((754 * 12) / 23.5) * (1 - PACE_HOLD_BACK)));
    // The line is lifted at the day's last backfill run (23:30, after the last trending run at 23:02).
    expect(line.burstFrom).toBe(DAY + 23.5 * HOUR);
    expect(pacingLineAt(line, line.burstFrom - 1)).toBeLessThan(754);
    expect(pacingLineAt(line, line.burstFrom)).toBe(754);
    // The backfill on its line; the 12:00 run (US) spends its 4 pages: the line dips while that
    // run's need still counts (maxSleep after its start), and a backfill denied meanwhile is told
    // to wait until the line allows it counting the need's drop at 12:00:30.001 (allowance 754
    // again), not for the dipped line to rise that far.
    const spend = (cost: number, tier: 'backfill' | 'scheduled') =>
      r.guard.spend({ credential: 'c', bucket: 'units', cost, tier });
    expect((await spend(line.allowed!, 'backfill')).allowed).toBe(true);
    expect((await spend(4, 'scheduled')).allowed).toBe(true);
    expect((await r.guard.pacingLine('c', 'units')).allowance).toBe(750);
    const dipped = await spend(1, 'backfill');
    expect(dipped).toMatchObject({ allowed: false, limitedBy: 'units backfill pace' });
    const reaches = Math.ceil((23.5 * HOUR * (line.allowed! + 1)) / (754 * (1 - PACE_HOLD_BACK))) - 12 * HOUR;
    expect(reaches).toBeGreaterThan(30_000);
    expect(Math.abs(dipped.retryAfterMs - reaches)).toBeLessThanOrEqual(1);
    // Once the run's need no longer counts, what it spent was what was held back for it.
    r.at(12 + 31 / 3600);
    expect((await r.guard.pacingLine('c', 'units')).allowance).toBe(754);
  });

  it('pace: none spends as fast as the ceiling allows; pace: <budget> leaves it to that budget', async () => {
    const none = await rig({ ...MODERN, backfill: { pace: 'none' } });
    none.at(1);
    expect((await spend(none, 9_500)).allowed).toBe(true);
    const budget = await rig({
      ...MODERN,
      budgets: [
        { id: 'stats-hourly', bucket: 'videos.batchGetStats', tiers: ['backfill'], limit: 500, window: '1h' },
      ],
      backfill: { pace: 'stats-hourly' },
    });
    budget.at(1);
    expect(await budget.guard.pacingLine('c', 'videos.batchGetStats')).toMatchObject({
      pace: 'budget stats-hourly',
      allowed: null,
    });
    expect((await spend(budget, 500)).allowed).toBe(true);
    expect(await spend(budget, 1)).toMatchObject({ allowed: false, limitedBy: 'budget stats-hourly' });
    expect(() => parseConfig({ backfill: { pace: 'hourly' } }, { env: {} })).toThrow(
      /backfill\.pace: must be day, none or the id of a budget of credential default, got 'hourly'/,
    );
  });
});
