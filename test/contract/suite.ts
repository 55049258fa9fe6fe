/**
 * The ledger contract: one suite, run against every backend (redis.test.ts, cluster.test.ts,
 * sqlite.test.ts). Each test uses its own keys, so the suite can share a store with other tests.
 * Time-dependent checks use real time with short windows and compare against the store's own
 * timestamps (`Decision.at`, `Snapshot.now`), never against client timing.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, assert, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Decision, Ledger, LedgerKind } from '../../src/index.js';
import { describeLateEntries } from './late-suite.js';
import { runModel } from './model.js';

export interface ContractTarget {
  kind: LedgerKind;
  /** A fresh ledger on the shared store. `now` is honoured only by backends with a host clock. */
  open(opts?: { now?: () => number }): Promise<Ledger>;
  /** True when the backend takes its clock from the `now` option (SQLite). */
  injectableClock: boolean;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function keyMaker() {
  // One hash tag per run: any keys of the suite may share a spend, on Redis Cluster too.
  const run = randomBytes(4).toString('hex');
  let n = 0;
  return (name: string) => `ct:{${run}}:${n++}:${name}`;
}

export function describeLedgerContract(target: ContractTarget): void {
  describe(`ledger contract: ${target.kind}`, () => {
    let ledger: Ledger;
    const key = keyMaker();
    const HOUR = 3_600_000;

    beforeAll(async () => {
      ledger = await target.open();
    });
    afterAll(async () => {
      await ledger?.close();
    });

    const budget = (k: string, limit: number, windowMs = HOUR) => ({ key: k, limit, windowMs });

    describe('1. exact sliding window', () => {
      it('allows a spend iff used + cost <= limit, and nothing else counts', async () => {
        const k = key('exact');
        const other = key('other');
        for (const cost of [3, 4, 3]) {
          const d = await ledger.spend({ budgets: [budget(k, 10)], cost });
          expect(d.allowed).toBe(true);
        }
        const full = await ledger.spend({ budgets: [budget(k, 10)], cost: 1 });
        expect(full).toMatchObject({ allowed: false, remaining: 0, limitedBy: k });
        expect(full.retryAfterMs).toBeGreaterThan(HOUR - 60_000);
        expect(full.retryAfterMs).toBeLessThanOrEqual(HOUR);
        expect(full).not.toHaveProperty('id');
        expect((await ledger.spend({ budgets: [budget(other, 10)], cost: 10 })).allowed).toBe(true);
        expect((await ledger.peek({ key: k, windowMs: HOUR })).used).toBe(10);
      });

      it('reports remaining after the decision', async () => {
        const k = key('remaining');
        expect((await ledger.spend({ budgets: [budget(k, 10)], cost: 4 })).remaining).toBe(6);
        expect((await ledger.spend({ budgets: [budget(k, 10)], cost: 6 })).remaining).toBe(0);
        const d = await ledger.spend({ budgets: [budget(k, 12)], cost: 5 });
        expect(d).toMatchObject({ allowed: false, remaining: 2 });
      });

      it('frees units exactly when their entries leave the window', async () => {
        const W = 1500;
        const k = key('slide');
        const first = await ledger.spend({ budgets: [budget(k, 10, W)], cost: 6 });
        await sleep(500);
        const second = await ledger.spend({ budgets: [budget(k, 10, W)], cost: 4 });
        expect(second.allowed).toBe(true);
        const denied = await ledger.spend({ budgets: [budget(k, 10, W)], cost: 6 });
        expect(denied.allowed).toBe(false);
        // The first entry frees 6: that is exactly when a cost of 6 fits again.
        expect(Math.abs(denied.retryAfterMs - (first.at + W - denied.at))).toBeLessThanOrEqual(1);
        await sleep(denied.retryAfterMs + 30);
        const snap = await ledger.peek({ key: k, windowMs: W });
        const totals = await ledger.peek({ key: k, windowMs: W, totalsOnly: true });
        if (totals.now < second.at + W - 5) {
          // Only the second entry is left: a sliding window, not a reset. The totals-only read
          // subtracts the expired entry that no spend has pruned yet.
          expect(snap).toMatchObject({ used: 4, calls: 1 });
          expect(totals.used).toBe(4);
          expect((await ledger.spend({ budgets: [budget(k, 10, W)], cost: 7 })).allowed).toBe(false);
        }
        expect((await ledger.spend({ budgets: [budget(k, 10, W)], cost: 6 })).allowed).toBe(true);
        await sleep(W + 50);
        expect(await ledger.peek({ key: k, windowMs: W })).toMatchObject({ used: 0, calls: 0, byTag: {} });
        expect((await ledger.peek({ key: k, windowMs: W, totalsOnly: true })).used).toBe(0);
      });

      it('lets exactly `limit` through a burst on each side of a fixed-window edge, never 2x', async () => {
        const W = 2000;
        const limit = 5;
        let checked = false;
        for (let attempt = 0; attempt < 4 && !checked; attempt++) {
          const k = key(`edge${attempt}`);
          // Just before a W-aligned boundary of the store's clock (what a fixed window would reset on).
          const now = (await ledger.peek({ key: k, windowMs: W })).now;
          await sleep((W - (now % W) + W - 250) % W);
          const burst = () =>
            Promise.all(
              Array.from({ length: limit * 2 }, () =>
                ledger.spend({ budgets: [budget(k, limit, W)], cost: 1 }),
              ),
            );
          const before = await burst();
          await sleep(400); // now just after the boundary
          const after = await burst();
          const firstAt = Math.min(...before.map((d) => d.at));
          const lastAt = Math.max(...after.map((d) => d.at));
          if (lastAt - firstAt >= W - 100) continue; // the machine stalled: this attempt proves nothing
          const admitted = [...before, ...after].filter((d) => d.allowed).length;
          expect(admitted).toBe(limit);
          expect(before.filter((d) => d.allowed).length).toBe(limit);
          checked = true;
        }
        expect(checked).toBe(true);
      });
    });

    describe('2. the clock is the store’s', () => {
      it.runIf(!target.injectableClock)(
        'ignores the client clock: a skewed client cannot stretch the window',
        async () => {
          const k = key('skew');
          const real = Date.now;
          const spy = vi.spyOn(Date, 'now');
          try {
            spy.mockImplementation(() => real() - 2 * HOUR);
            const a = await ledger.spend({ budgets: [budget(k, 10, 60_000)], cost: 10 });
            spy.mockImplementation(() => real() + 2 * HOUR);
            const b = await ledger.spend({ budgets: [budget(k, 10, 60_000)], cost: 1 });
            expect(a.allowed).toBe(true);
            expect(b.allowed).toBe(false);
            expect(Math.abs(a.at - real())).toBeLessThan(60_000);
            expect(b.retryAfterMs).toBeGreaterThan(50_000);
          } finally {
            spy.mockRestore();
          }
        },
      );

      it.runIf(target.injectableClock)('uses the host clock it was given (one host, one clock)', async () => {
        let now = 5_000_000;
        const l = await target.open({ now: () => now });
        try {
          const k = key('hostclock');
          expect((await l.spend({ budgets: [budget(k, 10, 1000)], cost: 10 })).at).toBe(5_000_000);
          now += 999;
          expect(await l.spend({ budgets: [budget(k, 10, 1000)], cost: 1 })).toMatchObject({
            allowed: false,
            retryAfterMs: 1,
          });
          now += 1;
          expect((await l.spend({ budgets: [budget(k, 10, 1000)], cost: 10 })).allowed).toBe(true);
        } finally {
          await l.close();
        }
      });
    });

    describe('3. weighted cost, one entry per call', () => {
      it('stores a spend of cost 100 as one call', async () => {
        const k = key('weighted');
        await ledger.spend({ budgets: [budget(k, 1000)], cost: 100, tag: 'big' });
        await ledger.spend({ budgets: [budget(k, 1000)], cost: 1, tag: 'small' });
        const s = await ledger.peek({ key: k, windowMs: HOUR });
        expect(s).toMatchObject({ used: 101, calls: 2, byTag: { big: 100, small: 1 } });
        expect(s.oldestAt).toBeLessThanOrEqual(s.newestAt!);
        expect(Math.abs(s.newestAt! - s.now)).toBeLessThan(60_000);
      });
    });

    describe('4. limit is the caller’s ceiling; the window is the key’s', () => {
      it('lets priority tiers share one log with different ceilings', async () => {
        const k = key('tiers');
        const scheduled = budget(k, 100);
        const backfill = budget(k, 60);
        expect((await ledger.spend({ budgets: [scheduled], cost: 55, tag: 'sched' })).allowed).toBe(true);
        expect((await ledger.spend({ budgets: [backfill], cost: 5, tag: 'bf' })).allowed).toBe(true);
        const bf = await ledger.spend({ budgets: [backfill], cost: 1, tag: 'bf' });
        expect(bf).toMatchObject({ allowed: false, remaining: 0 });
        const sc = await ledger.spend({ budgets: [scheduled], cost: 40, tag: 'sched' });
        expect(sc).toMatchObject({ allowed: true, remaining: 0 });
        expect((await ledger.peek({ key: k, windowMs: HOUR })).byTag).toEqual({ sched: 95, bf: 5 });
        // Above its own ceiling, a backfill stays at remaining 0 (never negative).
        expect((await ledger.spend({ budgets: [backfill], cost: 1 })).remaining).toBe(0);
      });

      it('rejects another window on an existing key with QG_WINDOW_MISMATCH', async () => {
        const k = key('window');
        await ledger.spend({ budgets: [budget(k, 10, 60_000)], cost: 1 });
        const other = key('window-other');
        await expect(
          ledger.spend({ budgets: [budget(other, 10, 60_000), budget(k, 10, 30_000)], cost: 1 }),
        ).rejects.toMatchObject({ code: 'QG_WINDOW_MISMATCH', field: 'budgets[1].windowMs' });
        await expect(ledger.peek({ key: k, windowMs: 30_000 })).rejects.toMatchObject({
          code: 'QG_WINDOW_MISMATCH',
        });
        // Nothing was spent on the other budget of the failed call.
        expect((await ledger.peek({ key: other, windowMs: 60_000 })).used).toBe(0);
        expect((await ledger.peek({ key: k, windowMs: 60_000 })).used).toBe(1);
      });
    });

    describe('5. atomic across budgets', () => {
      it('admits on all budgets or on none', async () => {
        const daily = key('daily');
        const search = key('search');
        const both = [budget(daily, 100), budget(search, 10)];
        expect((await ledger.spend({ budgets: both, cost: 8 })).remaining).toBe(2);
        const d = await ledger.spend({ budgets: both, cost: 5 });
        expect(d).toMatchObject({ allowed: false, limitedBy: search, remaining: 2 });
        expect((await ledger.peek({ key: daily, windowMs: HOUR })).used).toBe(8);
        expect((await ledger.spend({ budgets: both, cost: 2 })).allowed).toBe(true);
        expect((await ledger.peek({ key: daily, windowMs: HOUR })).used).toBe(10);
        expect((await ledger.peek({ key: search, windowMs: HOUR })).used).toBe(10);
      });

      it('reports the longest Retry-After over the denying budgets', async () => {
        const slow = key('slow');
        const fast = key('fast');
        await ledger.spend({ budgets: [budget(slow, 10, HOUR)], cost: 10 });
        await ledger.spend({ budgets: [budget(fast, 10, 5000)], cost: 10 });
        const d = await ledger.spend({ budgets: [budget(fast, 10, 5000), budget(slow, 10, HOUR)], cost: 1 });
        assert(!d.allowed);
        expect(d.limitedBy).toBe(slow);
        expect(d.retryAfterMs).toBeGreaterThan(HOUR - 60_000);
      });

      it.runIf(target.kind === 'redis-cluster')(
        'rejects keys in different slots before Redis sees them',
        async () => {
          const a = `ct:{a-${Date.now()}}:x`;
          const b = `ct:{b-${Date.now()}}:y`;
          await expect(
            ledger.spend({ budgets: [budget(a, 10), budget(b, 10)], cost: 1 }),
          ).rejects.toMatchObject({
            code: 'QG_CROSS_SLOT',
          });
          expect((await ledger.peek({ key: a, windowMs: HOUR })).used).toBe(0);
        },
      );
    });

    describe('6. exact Retry-After for the requested cost', () => {
      it('walks weighted entries: old cost-1 then cost-99, asking 50 waits for the 99', async () => {
        const W = 60_000;
        const k = key('retry');
        const one = await ledger.spend({ budgets: [budget(k, 100, W)], cost: 1 });
        await sleep(300);
        const big = await ledger.spend({ budgets: [budget(k, 100, W)], cost: 99 });
        const ask50 = await ledger.spend({ budgets: [budget(k, 100, W)], cost: 50 });
        const ask1 = await ledger.spend({ budgets: [budget(k, 100, W)], cost: 1 });
        expect(big.at - one.at).toBeGreaterThanOrEqual(250);
        expect(ask50.allowed).toBe(false);
        expect(Math.abs(ask50.retryAfterMs - (big.at + W - ask50.at))).toBeLessThanOrEqual(1);
        expect(Math.abs(ask1.retryAfterMs - (one.at + W - ask1.at))).toBeLessThanOrEqual(1);
      });

      it('is long enough and no longer: after waiting it, the same spend is allowed', async () => {
        const W = 1200;
        const k = key('retry-wait');
        await ledger.spend({ budgets: [budget(k, 10, W)], cost: 3 });
        await sleep(200);
        await ledger.spend({ budgets: [budget(k, 10, W)], cost: 7 });
        const d = await ledger.spend({ budgets: [budget(k, 10, W)], cost: 5 });
        expect(d.allowed).toBe(false);
        await sleep(d.retryAfterMs + 20);
        expect((await ledger.spend({ budgets: [budget(k, 10, W)], cost: 5 })).allowed).toBe(true);
      });

      it('throws CostExceedsLimitError for a cost that can never fit, and spends nothing', async () => {
        const k = key('toobig');
        const other = key('toobig-other');
        const err = await ledger
          .spend({ budgets: [budget(other, 500), budget(k, 100)], cost: 101 })
          .catch((e: unknown) => e);
        expect(err).toMatchObject({ code: 'QG_COST_EXCEEDS_LIMIT', name: 'CostExceedsLimitError' });
        expect((err as Error).message).toContain('budgets[1].limit');
        expect((await ledger.peek({ key: other, windowMs: HOUR })).used).toBe(0);
      });
    });

    describe('refund', () => {
      it('takes back an allowed spend, once, on every budget', async () => {
        const a = key('refund-a');
        const b = key('refund-b');
        const budgets = [budget(a, 100), budget(b, 100)];
        const keep = await ledger.spend({ budgets, cost: 30, tag: 'keep' });
        const back = await ledger.spend({ budgets, cost: 5, tag: 'back' });
        await ledger.refund(back);
        await ledger.refund(back);
        for (const k of [a, b]) {
          expect(await ledger.peek({ key: k, windowMs: HOUR })).toMatchObject({
            used: 30,
            calls: 1,
            byTag: { keep: 30 },
          });
        }
        // The running total agrees: 70 more fit exactly.
        expect((await ledger.spend({ budgets, cost: 70 })).allowed).toBe(true);
        expect((await ledger.spend({ budgets, cost: 1 })).allowed).toBe(false);
        expect(keep.allowed).toBe(true);
      });

      it('is a no-op for a denied decision and for an entry that already expired', async () => {
        const k = key('refund-noop');
        const W = 800;
        const a = await ledger.spend({ budgets: [budget(k, 10, W)], cost: 10 });
        const denied = await ledger.spend({ budgets: [budget(k, 10, W)], cost: 1 });
        await ledger.refund(denied);
        expect((await ledger.peek({ key: k, windowMs: W })).used).toBe(10);
        await sleep(W + 50);
        const b = await ledger.spend({ budgets: [budget(k, 10, W)], cost: 4 });
        await ledger.refund(a);
        expect((await ledger.peek({ key: k, windowMs: W })).used).toBe(4);
        expect((await ledger.spend({ budgets: [budget(k, 10, W)], cost: 7 })).allowed).toBe(false);
        expect(b.allowed).toBe(true);
      });
    });

    describe('block', () => {
      it('denies every spend on the key until the block ends, with the reason in peek', async () => {
        const k = key('block');
        const other = key('block-other');
        await ledger.spend({ budgets: [budget(k, 100)], cost: 1 });
        const now = (await ledger.peek({ key: k, windowMs: HOUR })).now;
        await ledger.block(k, now + 1500, 'upstream said quotaExceeded');
        const d = await ledger.spend({ budgets: [budget(other, 100), budget(k, 100)], cost: 1 });
        expect(d).toMatchObject({ allowed: false, limitedBy: k, blockedUntil: now + 1500, remaining: 0 });
        expect(d.retryAfterMs).toBeGreaterThan(0);
        expect(d.retryAfterMs).toBeLessThanOrEqual(1500);
        expect(await ledger.peek({ key: k, windowMs: HOUR })).toMatchObject({
          blockedUntil: now + 1500,
          blockedReason: 'upstream said quotaExceeded',
          used: 1,
        });
        expect((await ledger.peek({ key: other, windowMs: HOUR })).used).toBe(0);
        await sleep(Math.max(0, now + 1500 - Date.now()) + 300);
        expect((await ledger.spend({ budgets: [budget(k, 100)], cost: 1 })).allowed).toBe(true);
        expect((await ledger.peek({ key: k, windowMs: HOUR })).blockedUntil).toBeUndefined();
      });

      it('can block a key before its first spend, and unblock it', async () => {
        const k = key('preblock');
        const now = (await ledger.peek({ key: k, windowMs: HOUR })).now;
        await ledger.block(k, now + HOUR, 'manual');
        expect(await ledger.spend({ budgets: [budget(k, 100)], cost: 1 })).toMatchObject({
          allowed: false,
          blockedUntil: now + HOUR,
        });
        await ledger.unblock(k);
        expect((await ledger.spend({ budgets: [budget(k, 100)], cost: 1 })).allowed).toBe(true);
        expect((await ledger.peek({ key: k, windowMs: HOUR })).blockedUntil).toBeUndefined();
        await ledger.unblock(key('never-blocked'));
      });
    });

    describe('freesUpIn', () => {
      it('says when the next units free up, walking weighted entries', async () => {
        const W = 60_000;
        const k = key('frees');
        const one = await ledger.spend({ budgets: [budget(k, 100, W)], cost: 1 });
        await sleep(300);
        const big = await ledger.spend({ budgets: [budget(k, 100, W)], cost: 99 });
        // The store's clock just before and just after each call brackets the answer.
        const between = async <T>(fn: () => Promise<T>) => {
          const before = (await ledger.peek({ key: k, windowMs: W })).now;
          const out = await fn();
          const after = (await ledger.peek({ key: k, windowMs: W })).now;
          return { out, before, after };
        };
        const expectWait = (ms: number, expiresAt: number, r: { before: number; after: number }) => {
          expect(ms).toBeGreaterThanOrEqual(expiresAt - r.after - 1);
          expect(ms).toBeLessThanOrEqual(expiresAt - r.before + 1);
        };
        const r = await between(() =>
          ledger.freesUpIn({ key: k, windowMs: W, limit: 100, amounts: [1, 50, 100, 500] }),
        );
        const [a1, a50, a100, a500] = r.out;
        expectWait(a1!, one.at + W, r);
        expectWait(a50!, big.at + W, r);
        expect(a100).toBe(a50);
        expect(a500).toBe(a50); // more than the window holds: when the window empties
        // A lower ceiling (already exceeded): the first unit under it frees when the 99 goes.
        const low = await between(() => ledger.freesUpIn({ key: k, windowMs: W, limit: 60, amounts: [1] }));
        expectWait(low.out[0]!, big.at + W, low);
        expect(
          await ledger.freesUpIn({ key: key('empty'), windowMs: W, limit: 10, amounts: [1, 5] }),
        ).toEqual([0, 0]);
      });
    });

    describe('9. bad input is a typed error naming the field, and never reaches the store', () => {
      const k = 'ct:{bad}:input';
      const good = { key: k, limit: 10, windowMs: 60_000 };
      const cases: Array<[string, unknown, string]> = [
        ['cost 0', { budgets: [good], cost: 0 }, 'cost'],
        ['cost 1.5', { budgets: [good], cost: 1.5 }, 'cost'],
        ['cost as string', { budgets: [good], cost: '1' }, 'cost'],
        ['negative limit', { budgets: [{ ...good, limit: -1 }], cost: 1 }, 'budgets[0].limit'],
        ['fractional limit', { budgets: [{ ...good, limit: 2.5 }], cost: 1 }, 'budgets[0].limit'],
        ['zero window', { budgets: [{ ...good, windowMs: 0 }], cost: 1 }, 'budgets[0].windowMs'],
        ['NaN window', { budgets: [{ ...good, windowMs: Number.NaN }], cost: 1 }, 'budgets[0].windowMs'],
        ['empty budgets', { budgets: [], cost: 1 }, 'budgets'],
        ['no budgets', { cost: 1 }, 'budgets'],
        ['empty key', { budgets: [good, { ...good, key: '' }], cost: 1 }, 'budgets[1].key'],
        ['duplicate key', { budgets: [good, good], cost: 1 }, 'budgets[1].key'],
        ['tag too long', { budgets: [good], cost: 1, tag: 'x'.repeat(201) }, 'tag'],
        ['tag not a string', { budgets: [good], cost: 1, tag: 42 }, 'tag'],
      ];
      it.each(cases)('%s', async (_name, req, field) => {
        const err = await ledger.spend(req as never).catch((e: unknown) => e);
        expect(err).toMatchObject({ code: 'QG_INVALID_ARGUMENT', field, name: 'InvalidArgumentError' });
        expect((err as Error).message.startsWith(`${field}:`)).toBe(true);
      });

      it('checks peek, block, freesUpIn and refund too', async () => {
        await expect(ledger.peek({ key: '', windowMs: 1 })).rejects.toMatchObject({ field: 'key' });
        await expect(ledger.peek({ key: k, windowMs: -5 })).rejects.toMatchObject({ field: 'windowMs' });
        await expect(ledger.block(k, Number.NaN)).rejects.toMatchObject({ field: 'untilEpochMs' });
        await expect(ledger.block('', 1)).rejects.toMatchObject({ field: 'key' });
        await expect(
          ledger.freesUpIn({ key: k, windowMs: 1000, limit: 10, amounts: [0] }),
        ).rejects.toMatchObject({ field: 'amounts[0]' });
        await expect(
          ledger.refund({ allowed: true, retryAfterMs: 0, remaining: 0 } as never),
        ).rejects.toMatchObject({
          field: 'decision.id',
        });
        expect((await ledger.peek({ key: k, windowMs: 60_000 })).calls).toBe(0);
      });
    });

    describe('model', () => {
      it('agrees with a small reference model over random spend/refund/peek/block sequences', async () => {
        if (target.injectableClock) {
          let now = 10_000_000;
          const l = await target.open({ now: () => now });
          try {
            await runModel(l, {
              seed: 7,
              steps: 1500,
              keyPrefix: key('model'),
              windows: [500, 2000],
              advance: (ms) => {
                now += ms;
              },
              exact: true,
            });
          } finally {
            await l.close();
          }
        } else {
          // Real time: windows long enough that nothing expires during the run; times come from
          // the store's decisions.
          await runModel(ledger, {
            seed: 11,
            steps: 400,
            keyPrefix: key('model'),
            windows: [HOUR, 2 * HOUR],
            exact: false,
          });
        }
      });
    });

    describe('entries chosen by the caller: a spend happens once', () => {
      const entryKey = (k: string) =>
        `${k.slice(0, k.indexOf('}') + 1)}:entry:${k.slice(-12).replace(/[^\w]/g, '')}`;

      it('answers a repeated entry with its first decision and charges it once', async () => {
        const k = key('entry-once');
        const entry = { key: entryKey(k), id: 'job-1.a_b', request: 'r1' };
        const first = await ledger.spend({ budgets: [budget(k, 10)], cost: 4, tag: 't', entry });
        assert(first.allowed);
        expect(first.id).toBe('job-1.a_b:4:t');
        expect(first.replayed).toBeUndefined();
        await ledger.spend({ budgets: [budget(k, 10)], cost: 1 });
        const again = await ledger.spend({ budgets: [budget(k, 10)], cost: 4, tag: 't', entry });
        expect(again).toMatchObject({
          allowed: true,
          id: first.id,
          remaining: 6,
          at: first.at,
          replayed: true,
        });
        expect((await ledger.peek({ key: k, windowMs: HOUR })).used).toBe(5);
        expect(await ledger.recallEntry(entry.key)).toBe('r1');
        // Recall-only answers the same; a refund of the replayed decision takes the one entry back.
        const recalled = await ledger.spend({
          budgets: [budget(k, 10)],
          cost: 4,
          tag: 't',
          entry: { ...entry, recallOnly: true },
        });
        expect(recalled).toMatchObject({ allowed: true, replayed: true });
        await ledger.refund(recalled);
        expect((await ledger.peek({ key: k, windowMs: HOUR })).used).toBe(1);
      });

      it('remembers a denial as the first answer too', async () => {
        const k = key('entry-denied');
        await ledger.spend({ budgets: [budget(k, 3)], cost: 3 });
        const entry = { key: entryKey(k), id: 'd1', request: 'r' };
        const first = await ledger.spend({ budgets: [budget(k, 3)], cost: 2, entry });
        expect(first).toMatchObject({ allowed: false, limitedBy: k, remaining: 0 });
        const again = await ledger.spend({ budgets: [budget(k, 3)], cost: 2, entry });
        expect(again).toMatchObject({ ...first, replayed: true });
      });

      it('refuses the same id with another request, and a recall of an unknown entry', async () => {
        const k = key('entry-conflict');
        const entry = { key: entryKey(k), id: 'c1', request: 'first' };
        await ledger.spend({ budgets: [budget(k, 10)], cost: 1, entry });
        await expect(
          ledger.spend({ budgets: [budget(k, 10)], cost: 2, entry: { ...entry, request: 'second' } }),
        ).rejects.toMatchObject({ code: 'QG_ENTRY_CONFLICT' });
        await expect(
          ledger.spend({
            budgets: [budget(k, 10)],
            cost: 1,
            entry: { key: `${entry.key}x`, id: 'c2', request: 'first', recallOnly: true },
          }),
        ).rejects.toMatchObject({ code: 'QG_ENTRY_UNKNOWN' });
        expect(await ledger.recallEntry(`${entry.key}x`)).toBeUndefined();
        expect((await ledger.peek({ key: k, windowMs: HOUR })).used).toBe(1);
        await expect(
          ledger.spend({ budgets: [budget(k, 10)], cost: 1, entry: { ...entry, id: 'no:colons' } }),
        ).rejects.toMatchObject({ code: 'QG_INVALID_ARGUMENT', field: 'entry.id' });
      });

      it('forgets an entry once its longest window has passed', async () => {
        const k = key('entry-expiry');
        const entry = { key: entryKey(k), id: 'e1', request: 'r' };
        const first = await ledger.spend({ budgets: [budget(k, 10, 300)], cost: 1, entry });
        await sleep(300 + 1000 + 100);
        const later = await ledger.spend({ budgets: [budget(k, 10, 300)], cost: 1, entry });
        expect(later.allowed).toBe(true);
        expect(later.replayed).toBeUndefined();
        expect(later.at).toBeGreaterThan(first.at);
      });
    });

    describeLateEntries(target, () => ledger, key);

    it('answers ping and closes twice without complaint', async () => {
      const l = await target.open();
      await l.ping();
      await l.close();
      await l.close();
    });
  });
}

export type { Decision };
