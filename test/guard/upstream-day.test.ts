import { afterEach, describe, expect, it } from 'vitest';
import { createGuard, quotaStatus, spendBudgets } from '../../src/guard/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { capture, config, openRedis, openSqlite } from './helpers.js';

const opened: Ledger[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()));
});

const HOUR = 3_600_000;

function cfg(window: string, pace?: { limit: number; window: string }) {
  return config({
    credentials: [
      {
        id: 'c',
        buckets: { units: { quota: 10, reserve: 0, backfillHeadroom: 0, window, ...(pace ? { pace } : {}) } },
      },
    ],
  });
}

async function setup(window: string, start: string, pace?: { limit: number; window: string }) {
  const clock = { now: Date.parse(start) };
  const ledger = await openSqlite({ now: () => clock.now });
  opened.push(ledger);
  const guard = createGuard({ config: cfg(window, pace), ledger, logger: capture(), now: () => clock.now });
  const spend = () => guard.spend({ credential: 'c', method: 'videos.list', tag: 'trending:US:videos.list' });
  const fill = async (n: number) => {
    for (let i = 0; i < n; i++) expect((await spend()).allowed).toBe(true);
  };
  return { clock, ledger, guard, spend, fill };
}

describe('window: upstream-day against the 24 h sliding log, across the upstream midnight', () => {
  it('a sliding log keeps counting last evening after the reset; an upstream-day log frees at midnight', async () => {
    // 23:00 PST on 2026-03-07; the upstream resets at 08:00Z (midnight PST).
    const start = '2026-03-08T07:00:00Z';
    const sliding = await setup('24h', start);
    const day = await setup('upstream-day', start);
    await sliding.fill(10);
    await day.fill(10);
    const s = await sliding.spend();
    const d = await day.spend();
    expect(s).toMatchObject({ allowed: false, limitedBy: 'units' });
    expect(s.retryAfterMs).toBe(24 * HOUR);
    expect(d).toMatchObject({ allowed: false, limitedBy: 'units' });
    expect(d.retryAfterMs).toBe(HOUR); // until the upstream's midnight, not 24 h

    sliding.clock.now = day.clock.now = Date.parse('2026-03-08T08:00:00Z');
    expect((await sliding.spend()).allowed).toBe(false);
    expect((await day.spend()).allowed).toBe(true);
  });

  it('keys each day by its date with that day’s length, through a daylight-saving change', async () => {
    const day = await setup('upstream-day', '2026-03-08T12:00:00Z'); // 2026-03-08 is 23 h long in LA
    const cred = day.guard.config.credential('c');
    const [b] = spendBudgets(cred, cred.buckets['units']!, 'videos.list', 'scheduled', day.clock.now);
    expect(b).toMatchObject({ key: 'qg:{c}:units:day:2026-03-08', windowMs: 23 * HOUR });
    expect(b!.resetsAt).toBe(Date.parse('2026-03-09T07:00:00Z')); // midnight PDT
    await day.fill(10);
    day.clock.now = Date.parse('2026-03-09T06:00:00Z'); // 23:00 PDT, an hour before the 23 h day ends
    expect((await day.spend()).retryAfterMs).toBe(HOUR);
    day.clock.now = Date.parse('2026-03-09T07:00:00Z');
    expect((await day.spend()).allowed).toBe(true);
    const [next] = spendBudgets(cred, cred.buckets['units']!, 'videos.list', 'scheduled', day.clock.now);
    expect(next).toMatchObject({ key: 'qg:{c}:units:day:2026-03-09', windowMs: 24 * HOUR });
    // The 25 h day in November.
    const [fall] = spendBudgets(
      cred,
      cred.buckets['units']!,
      undefined,
      'scheduled',
      Date.parse('2026-11-01T20:00:00Z'),
    );
    expect(fall).toMatchObject({ key: 'qg:{c}:units:day:2026-11-01', windowMs: 25 * HOUR });
  });

  it('spends a pace budget atomically with the day budget, smoothing bursts', async () => {
    const day = await setup('upstream-day', '2026-01-15T18:00:00Z', { limit: 4, window: '1h' });
    await day.fill(4);
    const paced = await day.spend();
    expect(paced).toMatchObject({ allowed: false, limitedBy: 'units pace' });
    expect(paced.retryAfterMs).toBe(HOUR);
    day.clock.now += HOUR;
    await day.fill(4);
    day.clock.now += HOUR;
    await day.fill(2);
    // 10 spent: the day budget denies now, until midnight PST (08:00Z), and the pace log was not charged.
    const full = await day.spend();
    expect(full).toMatchObject({ allowed: false, limitedBy: 'units' });
    expect(full.retryAfterMs).toBe(Date.parse('2026-01-16T08:00:00Z') - day.clock.now);
    const cred = day.guard.config.credential('c');
    const [, pace] = spendBudgets(cred, cred.buckets['units']!, undefined, 'scheduled', day.clock.now);
    expect((await day.ledger.peek({ key: pace!.key, windowMs: pace!.windowMs })).used).toBe(2);
  });

  it('status says which window applies and that everything frees at the upstream midnight', async () => {
    const day = await setup('upstream-day', '2026-01-15T18:00:00Z', { limit: 8, window: '1h' });
    await day.fill(3);
    const report = await quotaStatus(day.guard.config, day.ledger, { now: () => day.clock.now });
    const units = report.credentials[0]!.buckets.find((b) => b.id === 'units')!;
    const midnight = Date.parse('2026-01-16T08:00:00Z');
    expect(units).toMatchObject({
      window: 'upstream-day',
      key: 'qg:{c}:units:day:2026-01-15',
      resetsAt: new Date(midnight).toISOString(),
      used: 3,
      remaining: { scheduled: 7 },
      freesUpInMs: {
        '1': midnight - day.clock.now,
        '50': midnight - day.clock.now,
        '100': midnight - day.clock.now,
      },
      pace: { limit: 8, used: 3, remaining: 5 },
    });
  });
});

describe('upstream-day on Redis (server clock)', () => {
  it('spends the day key and reports it', async () => {
    const ledger = await openRedis();
    opened.push(ledger);
    const guard = createGuard({
      config: cfg('upstream-day', { limit: 5, window: '1h' }),
      ledger,
      logger: capture(),
    });
    for (let i = 0; i < 5; i++)
      expect((await guard.spend({ credential: 'c', method: 'videos.list' })).allowed).toBe(true);
    expect(await guard.spend({ credential: 'c', method: 'videos.list' })).toMatchObject({
      allowed: false,
      limitedBy: 'units pace',
    });
    const report = await quotaStatus(guard.config, ledger);
    const units = report.credentials[0]!.buckets.find((b) => b.id === 'units')!;
    expect(units.key).toMatch(/^qg:\{c\}:units:day:\d{4}-\d{2}-\d{2}$/);
    expect(units).toMatchObject({ window: 'upstream-day', used: 5, pace: { used: 5, remaining: 0 } });
  });
});
