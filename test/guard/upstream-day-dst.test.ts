/**
 * Both windows across the upstream's reset on the two daylight-saving days of Los Angeles, spent
 * through the guard on a SQLite ledger with a fake clock, and what `status` shows for each.
 */
import { DateTime } from 'luxon';
import { afterEach, describe, expect, it } from 'vitest';
import { renderStatus } from '../../src/cli/render/status.js';
import { formatDuration } from '../../src/config/duration.js';
import { createGuard, quotaStatus } from '../../src/guard/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { capture, config, openSqlite } from './helpers.js';

const opened: Ledger[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()));
});

const HOUR = 3_600_000;

async function setup(window: string, start: string) {
  const clock = { now: Date.parse(start) };
  const ledger = await openSqlite({ now: () => clock.now });
  opened.push(ledger);
  const cfg = config({
    credentials: [{ id: 'c', buckets: { units: { quota: 6, reserve: 0, backfillHeadroom: 0, window } } }],
  });
  const log = capture();
  const guard = createGuard({ config: cfg, ledger, logger: log, now: () => clock.now, onEvent: log.onEvent });
  const spend = () => guard.spend({ credential: 'c', method: 'videos.list', tag: 'trending:US:videos.list' });
  const status = async () => {
    const report = await quotaStatus(cfg, ledger, { now: () => clock.now });
    return { report, units: report.credentials[0]!.buckets.find((b) => b.id === 'units')! };
  };
  return { clock, ledger, guard, spend, status, log };
}

describe.each([
  {
    change: 'spring forward (a 23 h day)',
    // 2026-03-08 in Los Angeles: 00:00 PST = 08:00Z, clocks jump at 02:00, next midnight 00:00 PDT = 07:00Z.
    evening: '2026-03-09T04:00:00Z', // 21:00 PDT
    midnight: '2026-03-09T07:00:00Z',
    dayLength: 23 * HOUR,
    day: '2026-03-08',
  },
  {
    change: 'fall back (a 25 h day)',
    // 2026-11-01 in Los Angeles: 00:00 PDT = 07:00Z, clocks go back at 02:00, next midnight 00:00 PST = 08:00Z.
    evening: '2026-11-02T05:00:00Z', // 21:00 PST
    midnight: '2026-11-02T08:00:00Z',
    dayLength: 25 * HOUR,
    day: '2026-11-01',
  },
])('across the upstream midnight after the $change', ({ evening, midnight, dayLength, day }) => {
  it('upstream-day frees everything at the upstream midnight; the 24 h sliding log does not', async () => {
    const up = await setup('upstream-day', evening);
    const sliding = await setup('24h', evening);
    for (let i = 0; i < 6; i++) {
      expect((await up.spend()).allowed).toBe(true);
      expect((await sliding.spend()).allowed).toBe(true);
    }
    const toMidnight = Date.parse(midnight) - up.clock.now;
    expect(await up.spend()).toMatchObject({ allowed: false, retryAfterMs: toMidnight });
    expect(await sliding.spend()).toMatchObject({ allowed: false, retryAfterMs: 24 * HOUR });

    // What status says before the reset: which window, when units free up under it.
    const before = await up.status();
    expect(before.units).toMatchObject({
      window: 'upstream-day',
      windowMs: dayLength,
      key: `qg:{c}:units:day:${day}`,
      resetsAt: new Date(midnight).toISOString(),
      remaining: { scheduled: 0 },
      freesUpInMs: { '1': toMidnight },
    });
    const text = renderStatus(before.report, { localZone: 'UTC' });
    // 100 units never fit a quota of 6 (-); one does again at the midnight.
    expect(before.units.spendableInMs).toEqual({ '1': toMidnight, '50': null, '100': null });
    expect(text).toMatch(/\n {2}units +6 +6 +0 +0 +0 +0 +-\n/);
    // The midnight in the upstream's zone (the next calendar day there), then in the operator's.
    expect(text.replace(/\s+/g, ' ')).toContain(
      `units: one log per upstream day; all of it frees at the upstream midnight, ${DateTime.fromISO(midnight, { zone: 'America/Los_Angeles' }).toFormat('yyyy-MM-dd HH:mm ZZZZ')} (${DateTime.fromISO(midnight, { zone: 'UTC' }).toFormat('HH:mm:ss')} UTC here), in ${formatDuration(toMidnight)}`,
    );
    expect(text).toMatch(/frees at the upstream midnight, 2026-\d\d-\d\d 00:00 P[DS]T/);
    const slidingText = renderStatus((await sliding.status()).report);
    expect(slidingText).toContain('units: 1d sliding window: as the oldest spends age out');
    expect((await sliding.status()).units.freesUpInMs['1']).toBe(24 * HOUR);

    // One millisecond before the reset nothing has changed; at the reset the new day is empty.
    up.clock.now = sliding.clock.now = Date.parse(midnight) - 1;
    expect((await up.spend()).allowed).toBe(false);
    up.clock.now = sliding.clock.now = Date.parse(midnight);
    for (let i = 0; i < 6; i++) expect((await up.spend()).allowed).toBe(true);
    expect((await sliding.spend()).allowed).toBe(false);
    const after = await up.status();
    expect(after.units).toMatchObject({ used: 6, windowMs: 24 * HOUR });
    expect(after.units.key).not.toBe(before.units.key);
  });

  it('a quotaExceeded block lasts until that same upstream midnight', async () => {
    const up = await setup('upstream-day', evening);
    const { until } = await up.guard.block('c', 'units', 'upstream answered quotaExceeded');
    expect(until).toBe(Date.parse(midnight));
    expect(await up.spend()).toMatchObject({ allowed: false, reason: 'blocked' });
    expect((await up.status()).report.credentials[0]!.blockedUntil).toBe(new Date(midnight).toISOString());
  });
});
