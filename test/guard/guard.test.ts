import { afterEach, describe, expect, it, vi } from 'vitest';
import { nextMidnight } from '../../src/calendar-day.js';
import { createGuard, type Guard, spendBudgets } from '../../src/guard/index.js';
import type { SpendArgs } from '../../src/guard/types.js';
import type { Ledger } from '../../src/ledger/types.js';
import { UpstreamError } from '../../src/outcome/errors.js';
import { BACKENDS, capture, config, openSqlite } from './helpers.js';

const opened: Ledger[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()));
});
async function track(p: Promise<Ledger>): Promise<Ledger> {
  const l = await p;
  opened.push(l);
  return l;
}

/** Units spent on a credential's bucket log (sliding window). */
async function usedOn(ledger: Ledger, guard: Guard, credential: string, bucket = 'units'): Promise<number> {
  const cred = guard.config.credential(credential);
  const [b] = spendBudgets(cred, cred.buckets[bucket]!, undefined, 'scheduled', Date.now());
  return (await ledger.peek({ key: b!.key, windowMs: b!.windowMs })).used;
}

/** units: quota 100, reserve 10, headroom 20 → ceilings scheduled 90, backfill 70, manual 100. */
const SMALL = {
  credentials: [{ id: 'c1', buckets: { units: { quota: 100, reserve: 10, backfillHeadroom: 20 } } }],
  // The tiers' ceilings alone, whatever the time of day (pacing has tests of its own).
  backfill: { pace: 'none', holdScheduled: false },
};

function upstreamError(
  code: 'QG_UPSTREAM_QUOTA_EXCEEDED' | 'QG_UPSTREAM_TRANSPORT' | 'QG_UPSTREAM_SERVER_ERROR',
  reached: 'never' | 'maybe' | 'yes',
) {
  return new UpstreamError(code, `simulated ${code}`, {
    reached,
    ...(code === 'QG_UPSTREAM_QUOTA_EXCEEDED' ? { status: 403, reason: 'quotaExceeded' } : {}),
  });
}

describe.each(BACKENDS)('guard on $name', ({ open }) => {
  it('spends every tier on one log, each up to its own ceiling', async () => {
    const ledger = await track(open());
    const log = capture();
    const guard = createGuard({ config: config(SMALL), ledger, logger: log });
    const spend = (tier: 'scheduled' | 'backfill' | 'manual') =>
      guard.spend({ credential: 'c1', bucket: 'units', cost: 10, tier, tag: `${tier}:x` });

    for (let i = 0; i < 7; i++) expect((await spend('backfill')).allowed).toBe(true);
    const b = await spend('backfill');
    expect(b).toMatchObject({
      allowed: false,
      reason: 'budget',
      limitedBy: 'units',
      ceiling: 70,
      remaining: 0,
    });
    expect(b.retryAfterMs).toBeGreaterThan(0);
    // The backfill's denial left the scheduled tier its units: 70 used, 20 left under 90.
    expect((await spend('scheduled')).allowed).toBe(true);
    expect((await spend('scheduled')).allowed).toBe(true);
    expect(await spend('scheduled')).toMatchObject({ allowed: false, ceiling: 90 });
    // Manual may take the reserve.
    expect(await spend('manual')).toMatchObject({ allowed: true, remaining: 0 });
    expect((await spend('manual')).allowed).toBe(false);

    const cred = guard.config.credential('c1');
    const [bucketBudget] = spendBudgets(cred, cred.buckets['units']!, undefined, 'manual', Date.now());
    const snap = await ledger.peek({ key: bucketBudget!.key, windowMs: bucketBudget!.windowMs });
    expect(snap.used).toBe(100);
    expect(snap.byTag).toEqual({ 'backfill:x': 70, 'scheduled:x': 20, 'manual:x': 10 });
    expect(guard.stats()).toMatchObject({ allowed: 10, denied: 3, failOpen: 0 });
  });

  it('spends narrower budgets atomically with the bucket', async () => {
    const ledger = await track(open());
    const guard = createGuard({
      config: config({
        ...SMALL,
        budgets: [
          { id: 'bf-hourly', bucket: 'units', tiers: ['backfill'], limit: 30, window: '1h' },
          { id: 'manual-search', methods: ['search.list'], tiers: ['manual'], limit: 2, window: '24h' },
        ],
      }),
      ledger,
      logger: capture(),
    });
    const cred = guard.config.credential('c1');
    const used = async (key: string, windowMs: number) => (await ledger.peek({ key, windowMs })).used;
    const [unitsB, bfB] = spendBudgets(cred, cred.buckets['units']!, undefined, 'backfill', Date.now());
    expect(bfB).toMatchObject({ role: 'budget', name: 'budget bf-hourly', limit: 30 });

    for (let i = 0; i < 3; i++)
      expect((await guard.spend({ credential: 'c1', cost: 10, tier: 'backfill' })).allowed).toBe(true);
    const denied = await guard.spend({ credential: 'c1', cost: 10, tier: 'backfill' });
    expect(denied).toMatchObject({ allowed: false, limitedBy: 'budget bf-hourly' });
    // All or nothing: the denied spend charged neither log.
    expect(await used(unitsB!.key, unitsB!.windowMs)).toBe(30);
    expect(await used(bfB!.key, bfB!.windowMs)).toBe(30);

    // The budget covers only the backfill tier: scheduled spends fill the bucket up to 90.
    for (let i = 0; i < 6; i++)
      expect((await guard.spend({ credential: 'c1', cost: 10 })).allowed).toBe(true);
    expect(await used(unitsB!.key, unitsB!.windowMs)).toBe(90);
    expect(await used(bfB!.key, bfB!.windowMs)).toBe(30);

    // A method-scoped budget: manual search.list is capped at 2 calls, its own bucket is not.
    const s1 = await guard.spend({ credential: 'c1', method: 'search.list', tier: 'manual' });
    const s2 = await guard.spend({ credential: 'c1', method: 'search.list', tier: 'manual' });
    const s3 = await guard.spend({ credential: 'c1', method: 'search.list', tier: 'manual' });
    expect([s1.allowed, s2.allowed, s3.allowed]).toEqual([true, true, false]);
    expect(s3).toMatchObject({ bucket: 'search.list', limitedBy: 'budget manual-search' });
    expect((await guard.spend({ credential: 'c1', method: 'search.list', tier: 'scheduled' })).allowed).toBe(
      true,
    );
    const [searchB] = spendBudgets(cred, cred.buckets['search.list']!, 'search.list', 'manual', Date.now());
    expect(await used(searchB!.key, searchB!.windowMs)).toBe(3);
  });

  it('hash-tags every key of a spend by credential', async () => {
    const cfg = config({
      ...SMALL,
      budgets: [{ id: 'bf', bucket: 'units', limit: 30, window: '1h' }],
      credentials: [{ id: 'c1', buckets: { units: { pace: { limit: 50, window: '1h' } } } }],
    });
    const cred = cfg.credential('c1');
    const budgets = spendBudgets(cred, cred.buckets['units']!, 'videos.list', 'scheduled', Date.now());
    expect(budgets.map((p) => p.key)).toEqual(['qg:{c1}:units', 'qg:{c1}:units:pace', 'qg:{c1}:budget:bf']);
  });

  it('sleeps through a short Retry-After, and stops instead of sleeping through a long one', async () => {
    const ledger = await track(open());
    const log = capture();
    const cfg = config({
      credentials: [
        { id: 'short', buckets: { units: { quota: 3, reserve: 0, backfillHeadroom: 0, window: '1500ms' } } },
        { id: 'long', buckets: { units: { quota: 3, reserve: 0, backfillHeadroom: 0, window: '1h' } } },
      ],
      maxSleep: '10s',
    });
    const guard = createGuard({ config: cfg, ledger, logger: log, onEvent: log.onEvent });

    for (const credential of ['short', 'long']) {
      for (let i = 0; i < 3; i++)
        expect((await guard.spend({ credential, method: 'videos.list' })).allowed).toBe(true);
    }
    const slept = await guard.acquire({
      credential: 'short',
      method: 'videos.list',
      tag: 'trending:US:videos.list',
    });
    expect(slept.ok).toBe(true);
    if (slept.ok) expect(slept.waitedMs).toBeGreaterThan(0);
    expect(log.events.some((e) => e.type === 'sleep')).toBe(true);

    const started = Date.now();
    const stop = await guard.acquire({
      credential: 'long',
      method: 'videos.list',
      tag: 'trending:US:videos.list',
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(stop.ok).toBe(false);
    if (stop.ok) return;
    expect(stop).toMatchObject({
      reason: 'budget',
      exitCode: 75,
      credential: 'long',
      bucket: 'units',
      remaining: 0,
    });
    expect(stop.retryAfterMs).toBeGreaterThan(10_000);
    expect(stop.resumeAt).toBeGreaterThan(Date.now() + 10_000);
    expect(stop.message).toMatch(
      /^stopped: videos\.list \(1 unit, scheduled\) does not fit: 0 units left under long\/units/,
    );
    expect(stop.message).toContain(new Date(stop.resumeAt).toISOString());
    // Exactly one log line for the stop.
    expect(log.lines.filter((l) => l.msg === stop.message)).toHaveLength(1);
  });

  it('never sleeps longer than maxSleep, jitter included', async () => {
    const ledger = await track(open());
    const log = capture();
    const cfg = config({
      credentials: [
        { id: 'w', buckets: { units: { quota: 1, reserve: 0, backfillHeadroom: 0, window: '1s' } } },
      ],
    });
    const guard = createGuard({ config: cfg, ledger, logger: log, onEvent: log.onEvent });
    expect((await guard.spend({ credential: 'w', method: 'videos.list' })).allowed).toBe(true);
    // The largest jitter: a Retry-After close to maxSleep must still not be overslept.
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.999);
    try {
      const got = await guard.acquire({ credential: 'w', method: 'videos.list' }, { maxSleepMs: 1_000 });
      expect(got.ok).toBe(true);
    } finally {
      random.mockRestore();
    }
    const sleeps = log.events.flatMap((e) => (e.type === 'sleep' ? [e.ms] : []));
    expect(sleeps.length).toBeGreaterThan(0);
    for (const ms of sleeps) expect(ms).toBeLessThanOrEqual(1_000);
  });

  it('refunds a request only when it provably never reached the upstream', async () => {
    const ledger = await track(open());
    const guard = createGuard({ config: config(SMALL), ledger, logger: capture() });
    const used = () => usedOn(ledger, guard, 'c1');
    const fail = (e: UpstreamError) => async () => {
      throw e;
    };
    const args = { credential: 'c1', method: 'videos.list', cost: 5 } as const;

    await expect(
      guard.call(args, fail(upstreamError('QG_UPSTREAM_TRANSPORT', 'never')), { attempts: 1 }),
    ).rejects.toMatchObject({ code: 'QG_UPSTREAM_TRANSPORT' });
    expect(await used()).toBe(0);
    await expect(
      guard.call(args, fail(upstreamError('QG_UPSTREAM_TRANSPORT', 'maybe')), { attempts: 1 }),
    ).rejects.toMatchObject({ reached: 'maybe' });
    expect(await used()).toBe(5);
    await expect(
      guard.call(args, fail(upstreamError('QG_UPSTREAM_SERVER_ERROR', 'yes')), { attempts: 1 }),
    ).rejects.toMatchObject({ reached: 'yes' });
    expect(await used()).toBe(10);
    expect(guard.stats().refunds).toBe(1);

    // Retried: every attempt spends; the one that never left is refunded, the success stays.
    let n = 0;
    const r = await guard.call(args, async (a) => {
      n++;
      if (a.n === 1) throw upstreamError('QG_UPSTREAM_TRANSPORT', 'never');
      return 'page';
    });
    expect(r).toMatchObject({ ok: true, value: 'page', attempts: 2 });
    expect(n).toBe(2);
    expect(await used()).toBe(15);
  });

  it('waits out a short upstream rate limit (spending again) and stops on a long one', async () => {
    const ledger = await track(open());
    const guard = createGuard({ config: config(SMALL), ledger, logger: capture() });
    const used = () => usedOn(ledger, guard, 'c1');
    const limited = (retryAfterMs: number) =>
      new UpstreamError('QG_UPSTREAM_RATE_LIMITED', 'rate limited', {
        reached: 'yes',
        status: 403,
        reason: 'rateLimitExceeded',
        retryAfterMs,
      });
    const args = { credential: 'c1', method: 'videos.list' } as const;
    const ok = await guard.call(args, async (a) => {
      if (a.n === 1) throw limited(50);
      return a.n;
    });
    expect(ok).toMatchObject({ ok: true, value: 2, attempts: 2 });
    expect(await used()).toBe(2);

    const stop = await guard.call(args, async () => {
      throw limited(120_000);
    });
    expect(stop).toMatchObject({ ok: false, reason: 'rate-limited', exitCode: 75, retryAfterMs: 120_000 });
    if (!stop.ok) expect(stop.error?.reason).toBe('rateLimitExceeded');
    expect(await used()).toBe(3);
  });

  it('blocks the bucket until the upstream midnight when the upstream says quotaExceeded; other buckets go on', async () => {
    const ledger = await track(open());
    const log = capture();
    const guard = createGuard({ config: config(SMALL), ledger, logger: log, onEvent: log.onEvent });
    const r = await guard.call(
      { credential: 'c1', method: 'videos.list', tag: 'trending:US:videos.list' },
      async () => {
        throw upstreamError('QG_UPSTREAM_QUOTA_EXCEEDED', 'yes');
      },
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const midnight = nextMidnight('America/Los_Angeles', Date.now());
    expect(r).toMatchObject({
      reason: 'upstream-quota',
      exitCode: 75,
      bucket: 'units',
      blockedUntil: midnight,
      resumeAt: midnight,
    });
    expect(r.message).toContain('quotaExceeded');
    expect(log.events.filter((e) => e.type === 'block')).toHaveLength(1);

    const next = await guard.spend({ credential: 'c1', method: 'videos.list' });
    expect(next).toMatchObject({
      allowed: false,
      reason: 'blocked',
      blockedUntil: midnight,
      limitedBy: 'units',
    });
    const stop = await guard.acquire({ credential: 'c1', method: 'channels.list' });
    expect(stop).toMatchObject({ ok: false, reason: 'blocked', blockedUntil: midnight });
    if (!stop.ok) expect(stop.blockedReason).toMatch(/quotaExceeded to videos\.list/);
    // The credential's other buckets are not blocked.
    expect((await guard.spend({ credential: 'c1', method: 'search.list' })).allowed).toBe(true);
    expect((await guard.spend({ credential: 'c1', method: 'videos.batchGetStats' })).allowed).toBe(true);
    // The call that met quotaExceeded was received, so it stays charged.
    expect(await usedOn(ledger, guard, 'c1')).toBe(1);
  });

  it('rejects unknown credentials, methods and buckets with their config codes', async () => {
    const ledger = await track(open());
    const guard = createGuard({ config: config(SMALL), ledger, logger: capture() });
    await expect(guard.spend({ credential: 'nope', method: 'videos.list' })).rejects.toMatchObject({
      code: 'QG_UNKNOWN_CREDENTIAL',
    });
    await expect(guard.spend({ credential: 'c1', method: 'videos.fly' })).rejects.toMatchObject({
      code: 'QG_UNKNOWN_METHOD',
    });
    await expect(guard.spend({ credential: 'c1', bucket: 'nope' })).rejects.toMatchObject({
      code: 'QG_UNKNOWN_BUCKET',
    });
    await expect(guard.spend({ credential: 'c1', bucket: 'units', cost: 0 })).rejects.toMatchObject({
      code: 'QG_INVALID_ARGUMENT',
    });
    // Left out (JavaScript has no type to catch it): said so, not "unknown credential 'undefined'".
    const missing = { method: 'videos.list' } as unknown as SpendArgs;
    await expect(guard.spend(missing)).rejects.toMatchObject({
      code: 'QG_INVALID_ARGUMENT',
      message: 'credential: required: the id of a configured credential (c1)',
    });
    expect((await guard.acquire(missing).catch((e: unknown) => e)) as object).toMatchObject({
      code: 'QG_INVALID_ARGUMENT',
    });
  });
});

describe('block lifts at the upstream midnight (SQLite on a fake clock)', () => {
  it('denies until midnight in America/Los_Angeles and allows after it', async () => {
    let now = Date.parse('2026-03-07T20:00:00Z'); // noon PST, the day before clocks spring forward
    const ledger = await track(openSqlite({ now: () => now }));
    const guard = createGuard({ config: config(SMALL), ledger, logger: capture(), now: () => now });
    const r = await guard.call({ credential: 'c1', method: 'videos.list' }, async () => {
      throw upstreamError('QG_UPSTREAM_QUOTA_EXCEEDED', 'yes');
    });
    expect(r).toMatchObject({ ok: false, blockedUntil: Date.parse('2026-03-08T08:00:00Z') });
    now = Date.parse('2026-03-08T07:59:59Z');
    expect(await guard.spend({ credential: 'c1', method: 'videos.list' })).toMatchObject({
      allowed: false,
      reason: 'blocked',
      retryAfterMs: 1000,
    });
    now = Date.parse('2026-03-08T08:00:00Z');
    expect((await guard.spend({ credential: 'c1', method: 'videos.list' })).allowed).toBe(true);
  });
});
