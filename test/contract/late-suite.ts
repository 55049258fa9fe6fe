/**
 * The ledger contract, part two: entries written down late (`record`), entries whose answer was
 * lost and that were not used (`void`), and units per minute (`perMinute`). Run by suite.ts against
 * every backend, on the shared store and real time: times are compared with the store's own
 * (`Snapshot.now`, `Decision.at`), never with the client's clock.
 */
import { assert, describe, expect, it } from 'vitest';
import type { Ledger, RecordRequest } from '../../src/index.js';
import type { ContractTarget } from './suite.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const HOUR = 3_600_000;
const MIN = 60_000;

export function describeLateEntries(
  target: ContractTarget,
  ledger: () => Ledger,
  key: (name: string) => string,
): void {
  const budget = (k: string, windowMs = HOUR, limit = 10) => ({ key: k, limit, windowMs });
  /** An entry key beside a budget key (the same hash tag). */
  const entryOf = (k: string, id: string, request = 'r') => ({
    key: `${k}:entry:${id}`,
    id,
    request,
  });
  /** The store's clock now. */
  const storeNow = async (k: string, windowMs = HOUR) => (await ledger().peek({ key: k, windowMs })).now;

  describe('record: a spend that already happened, written down late', () => {
    it('counts a replayed entry once after 3 replays, at its original time: it frees when it would have', async () => {
      const W = 2000;
      const k = key('rec-once');
      const at = (await storeNow(k, W)) - 700;
      const req: RecordRequest = {
        budgets: [budget(k, W)],
        cost: 4,
        tag: 'job',
        entry: entryOf(k, 'j1'),
        at,
      };
      const first = await ledger().record(req);
      expect(first).toMatchObject({ outcome: 'recorded', at, keys: [k], cost: 4, id: 'j1:4:job' });
      for (let i = 0; i < 3; i++) {
        expect(await ledger().record(req)).toMatchObject({ outcome: 'replayed', at, cost: 4 });
      }
      expect(await ledger().peek({ key: k, windowMs: W })).toMatchObject({
        used: 4,
        calls: 1,
        oldestAt: at,
        byTag: { job: 4 },
      });
      // Never denied, but counted by spends: 7 does not fit until the entry is W old.
      const denied = await ledger().spend({ budgets: [budget(k, W)], cost: 7 });
      assert(!denied.allowed);
      expect(Math.abs(denied.retryAfterMs - (at + W - denied.at))).toBeLessThanOrEqual(1);
      await sleep(denied.retryAfterMs + 30);
      const later = await ledger().spend({ budgets: [budget(k, W)], cost: 7 });
      expect(later).toMatchObject({ allowed: true, remaining: 3 });
      expect((await ledger().peek({ key: k, windowMs: W })).calls).toBe(1);
    });

    it('is never denied: over the limit and on a blocked key alike', async () => {
      const k = key('rec-never-denied');
      const now = await storeNow(k);
      await ledger().spend({ budgets: [budget(k)], cost: 10 });
      await ledger().block(k, now + HOUR, 'test');
      const r = await ledger().record({ budgets: [budget(k)], cost: 6, entry: entryOf(k, 'over'), at: now });
      expect(r.outcome).toBe('recorded');
      expect((await ledger().peek({ key: k, windowMs: HOUR })).used).toBe(16);
    });

    it('answers an entry whose spend landed as replayed, and a spend after a record as replayed', async () => {
      const k = key('rec-after-spend');
      const entry = entryOf(k, 'landed');
      const spent = await ledger().spend({ budgets: [budget(k)], cost: 3, tag: 't', entry });
      assert(spent.allowed);
      const r = await ledger().record({
        budgets: [budget(k)],
        cost: 3,
        tag: 't',
        entry,
        at: spent.at - 5000,
      });
      expect(r).toMatchObject({ outcome: 'replayed', at: spent.at });
      const e2 = entryOf(k, 'journalled');
      const at = (await storeNow(k)) - 60_000;
      expect((await ledger().record({ budgets: [budget(k)], cost: 2, entry: e2, at })).outcome).toBe(
        'recorded',
      );
      const late = await ledger().spend({ budgets: [budget(k)], cost: 2, entry: e2 });
      expect(late).toMatchObject({ allowed: true, replayed: true, at });
      expect((await ledger().peek({ key: k, windowMs: HOUR })).used).toBe(5);
      expect(await ledger().recallEntry(e2.key)).toBe('r');
    });

    it('writes an entry remembered as denied: the spend happened after all', async () => {
      const k = key('rec-after-denial');
      await ledger().spend({ budgets: [budget(k)], cost: 9 });
      const entry = entryOf(k, 'denied');
      const d = await ledger().spend({ budgets: [budget(k)], cost: 5, entry });
      expect(d.allowed).toBe(false);
      const r = await ledger().record({ budgets: [budget(k)], cost: 5, entry, at: d.at });
      expect(r).toMatchObject({ outcome: 'recorded', at: d.at });
      expect((await ledger().peek({ key: k, windowMs: HOUR })).used).toBe(14);
      expect((await ledger().record({ budgets: [budget(k)], cost: 5, entry, at: d.at })).outcome).toBe(
        'replayed',
      );
    });

    it('clamps a time ahead of the store to now: a fast client clock cannot put an entry in the future', async () => {
      const W = 1500;
      const k = key('rec-future');
      const before = await storeNow(k, W);
      const r = await ledger().record({
        budgets: [budget(k, W)],
        cost: 2,
        entry: entryOf(k, 'f'),
        at: before + HOUR,
      });
      const after = await storeNow(k, W);
      expect(r.outcome).toBe('recorded');
      expect(r.at).toBeGreaterThanOrEqual(before);
      expect(r.at).toBeLessThanOrEqual(after);
      const snap = await ledger().peek({ key: k, windowMs: W });
      expect(snap).toMatchObject({ used: 2, newestAt: r.at });
      // It ages out one window after now, not after the client's time.
      await sleep(r.at + W - snap.now + 50);
      expect((await ledger().peek({ key: k, windowMs: W })).used).toBe(0);
    });

    it('drops an entry older than every window, and writes one only to the windows it is still in', async () => {
      const k = key('rec-old');
      const minute = key('rec-old-minute');
      const now = await storeNow(k);
      const gone = await ledger().record({
        budgets: [budget(k), budget(minute, MIN)],
        cost: 3,
        entry: entryOf(k, 'gone'),
        at: now - HOUR - 1000,
      });
      expect(gone).toMatchObject({ outcome: 'dropped', at: now - HOUR - 1000 });
      expect(await ledger().recallEntry(entryOf(k, 'gone').key)).toBeUndefined();
      const half = await ledger().record({
        budgets: [budget(k), budget(minute, MIN)],
        cost: 3,
        entry: entryOf(k, 'half'),
        at: now - 5 * MIN,
      });
      expect(half).toMatchObject({ outcome: 'recorded', at: now - 5 * MIN });
      expect((await ledger().peek({ key: k, windowMs: HOUR })).used).toBe(3);
      expect((await ledger().peek({ key: minute, windowMs: MIN })).used).toBe(0);
    });

    it('refuses an entry remembered with another request, and another window on a live key', async () => {
      const k = key('rec-conflict');
      const entry = entryOf(k, 'c', 'first');
      const now = await storeNow(k);
      await ledger().spend({ budgets: [budget(k)], cost: 1, entry });
      await expect(
        ledger().record({ budgets: [budget(k)], cost: 1, entry: { ...entry, request: 'second' }, at: now }),
      ).rejects.toMatchObject({ code: 'QG_ENTRY_CONFLICT' });
      await expect(
        ledger().record({ budgets: [budget(k, MIN)], cost: 1, entry: entryOf(k, 'w'), at: now }),
      ).rejects.toMatchObject({ code: 'QG_WINDOW_MISMATCH', field: 'budgets[0].windowMs' });
      expect((await ledger().peek({ key: k, windowMs: HOUR })).used).toBe(1);
    });

    it('replace: the entry’s cost becomes the one given, 0 takes it out, the same again changes nothing', async () => {
      const k = key('rec-replace');
      const day = key('rec-replace-day');
      const budgets = [budget(k), budget(day, 2 * HOUR)];
      const entry = entryOf(k, 'outside-1');
      const at = (await storeNow(k)) - 10 * MIN;
      const put = (cost: number, when = at) =>
        ledger().record({ budgets, cost, tag: 'outside:minute', entry, at: when, replace: true });
      expect(await put(5)).toMatchObject({ outcome: 'recorded', at, cost: 5 });
      expect(await put(5)).toMatchObject({ outcome: 'replayed', at });
      expect(await put(8)).toMatchObject({ outcome: 'recorded', at, cost: 8 });
      for (const b of budgets) {
        expect(await ledger().peek({ key: b.key, windowMs: b.windowMs })).toMatchObject({
          used: 8,
          calls: 1,
          oldestAt: at,
          byTag: { 'outside:minute': 8 },
        });
      }
      expect(await put(8, at + 1000)).toMatchObject({ outcome: 'recorded', at: at + 1000 });
      expect((await ledger().peek({ key: k, windowMs: HOUR })).oldestAt).toBe(at + 1000);
      expect(await put(0)).toMatchObject({ outcome: 'recorded', cost: 0 });
      expect(await ledger().peek({ key: k, windowMs: HOUR })).toMatchObject({ used: 0, calls: 0 });
      expect(await put(2)).toMatchObject({ outcome: 'recorded', cost: 2 });
      // The running total agrees with the log: exactly 8 more fit.
      expect((await ledger().spend({ budgets: [budget(k)], cost: 8 })).allowed).toBe(true);
      expect((await ledger().spend({ budgets: [budget(k)], cost: 1 })).allowed).toBe(false);
    });

    it('replace from two connections at once: one entry with one of the costs, the total its cost', async () => {
      const other = await target.open();
      try {
        const k = key('rec-replace-race');
        const entry = entryOf(k, 'race');
        const at = (await storeNow(k)) - MIN;
        const costs = [3, 7, 0, 5, 3, 9, 7, 5, 3, 9];
        const results = await Promise.all(
          costs.map((cost, i) =>
            (i % 2 ? other : ledger()).record({
              budgets: [budget(k, HOUR, 100)],
              cost,
              tag: 'outside:race',
              entry,
              at,
              replace: true,
            }),
          ),
        );
        expect(results.every((r) => r.outcome !== 'dropped')).toBe(true);
        const snap = await ledger().peek({ key: k, windowMs: HOUR });
        expect(snap.calls).toBeLessThanOrEqual(1);
        expect(costs).toContain(snap.used);
        // The running total is the log's: the rest of the 100 fits exactly.
        if (100 - snap.used > 0) {
          expect(
            (await ledger().spend({ budgets: [budget(k, HOUR, 100)], cost: 100 - snap.used })).allowed,
          ).toBe(true);
        }
        expect((await ledger().spend({ budgets: [budget(k, HOUR, 100)], cost: 1 })).allowed).toBe(false);
        // The same cost from both at once: one entry.
        const k2 = key('rec-replace-same');
        const same = entryOf(k2, 'same');
        await Promise.all(
          Array.from({ length: 8 }, (_v, i) =>
            (i % 2 ? other : ledger()).record({
              budgets: [budget(k2)],
              cost: 4,
              entry: same,
              at,
              replace: true,
            }),
          ),
        );
        expect(await ledger().peek({ key: k2, windowMs: HOUR })).toMatchObject({ used: 4, calls: 1 });
      } finally {
        await other.close();
      }
    });
  });

  describe('late: what of a window was recorded late', () => {
    it('counts records on their first budget, in the window, once each; not spends, replaces or voided ones', async () => {
      const k = key('late-count');
      const other = key('late-other');
      const now = await storeNow(k);
      const rec = (id: string, cost: number, at: number, extra: Partial<RecordRequest> = {}) =>
        ledger().record({
          budgets: [budget(k), budget(other)],
          cost,
          tag: 'j',
          entry: entryOf(k, id),
          at,
          ...extra,
        });
      expect(await ledger().late({ key: k, windowMs: HOUR })).toEqual({ units: 0, entries: 0 });
      await rec('a', 3, now - 20 * MIN);
      await rec('a', 3, now - 20 * MIN);
      await rec('b', 2, now - 5 * MIN);
      await rec('old', 9, now - 2 * HOUR);
      await ledger().spend({ budgets: [budget(k)], cost: 1 });
      await rec('c', 4, now - MIN, { replace: true });
      await rec('d', 6, now - MIN);
      expect(
        await ledger().void({ entry: entryOf(k, 'd'), budgets: [{ key: k, windowMs: HOUR }] }),
      ).toMatchObject({
        outcome: 'refunded',
      });
      expect(await ledger().late({ key: k, windowMs: HOUR })).toEqual({
        units: 5,
        entries: 2,
        oldestAt: now - 20 * MIN,
      });
      // Only the first budget of a record is counted.
      expect(await ledger().late({ key: other, windowMs: HOUR })).toEqual({ units: 0, entries: 0 });
    });
  });

  describe('void: an entry whose answer was lost, not used, never counts', () => {
    it('remembers an unknown entry as void: the spend arriving later is denied and charges nothing', async () => {
      const k = key('void-race');
      const entry = entryOf(k, 'lost', '["req"]');
      expect(await ledger().void({ entry, budgets: [budget(k)] })).toEqual({ outcome: 'voided', cost: 0 });
      // The original spend, held up (a paused store) and run after the void.
      const late = await ledger().spend({ budgets: [budget(k)], cost: 3, entry });
      expect(late).toMatchObject({ allowed: false, replayed: true, voided: true, retryAfterMs: 0 });
      expect((await ledger().peek({ key: k, windowMs: HOUR })).used).toBe(0);
      expect(await ledger().void({ entry, budgets: [budget(k)] })).toEqual({ outcome: 'none', cost: 0 });
      // Written down as used after all (a contradicting journal): the spend happened.
      const r = await ledger().record({ budgets: [budget(k)], cost: 3, entry, at: late.at });
      expect(r.outcome).toBe('recorded');
      expect((await ledger().peek({ key: k, windowMs: HOUR })).used).toBe(3);
    });

    it('races the original spend from another connection: in either order the entry never counts', async () => {
      const other = await target.open();
      try {
        const k = key('void-both-orders');
        const b = budget(k, HOUR, 1000);
        const pairs = await Promise.all(
          Array.from({ length: 40 }, async (_v, i) => {
            const entry = entryOf(k, `r${i}`);
            const spend = () => (i % 2 ? other : ledger()).spend({ budgets: [b], cost: 3, entry });
            const cancel = () => (i % 2 ? ledger() : other).void({ entry, budgets: [b] });
            // Sent in both orders (an embedded store runs them so); a server takes them as they come.
            if (i % 4 < 2) {
              const [spent, voided] = await Promise.all([spend(), cancel()]);
              return { spent, voided };
            }
            const [voided, spent] = await Promise.all([cancel(), spend()]);
            return { spent, voided };
          }),
        );
        if (target.kind === 'sqlite') expect(new Set(pairs.map((p) => p.spent.allowed)).size).toBe(2);
        for (const { spent, voided } of pairs) {
          // The spend first: charged, then refunded. The void first: the spend is denied.
          if (spent.allowed) expect(voided).toEqual({ outcome: 'refunded', cost: 3 });
          else
            expect({ spent, voided }).toMatchObject({
              spent: { voided: true },
              voided: { outcome: 'voided' },
            });
        }
        expect((await ledger().peek({ key: k, windowMs: HOUR })).used).toBe(0);
      } finally {
        await other.close();
      }
    });

    it('takes an allowed entry out of every log; the same spend sent again is denied', async () => {
      const a = key('void-a');
      const b = key('void-b');
      const budgets = [budget(a), budget(b)];
      const entry = entryOf(a, 'used-not');
      const keep = await ledger().spend({ budgets, cost: 2 });
      const d = await ledger().spend({ budgets, cost: 4, tag: 't', entry });
      assert(d.allowed && keep.allowed);
      expect(await ledger().void({ entry, budgets })).toEqual({ outcome: 'refunded', cost: 4 });
      for (const k of [a, b]) expect((await ledger().peek({ key: k, windowMs: HOUR })).used).toBe(2);
      expect(await ledger().spend({ budgets, cost: 4, tag: 't', entry })).toMatchObject({
        allowed: false,
        voided: true,
      });
      expect(await ledger().void({ entry, budgets })).toEqual({ outcome: 'none', cost: 0 });
      // The running totals agree: exactly 8 more fit.
      expect((await ledger().spend({ budgets, cost: 8 })).allowed).toBe(true);
      expect((await ledger().spend({ budgets, cost: 1 })).allowed).toBe(false);
    });

    it('changes nothing for a denied entry, or one refunded already', async () => {
      const k = key('void-none');
      await ledger().spend({ budgets: [budget(k)], cost: 9 });
      const denied = entryOf(k, 'denied');
      expect((await ledger().spend({ budgets: [budget(k)], cost: 5, entry: denied })).allowed).toBe(false);
      expect(await ledger().void({ entry: denied, budgets: [budget(k)] })).toEqual({
        outcome: 'none',
        cost: 0,
      });
      const gone = entryOf(k, 'gone');
      const d = await ledger().spend({ budgets: [budget(k)], cost: 1, entry: gone });
      await ledger().refund(d);
      expect(await ledger().void({ entry: gone, budgets: [budget(k)] })).toEqual({
        outcome: 'none',
        cost: 0,
      });
      expect((await ledger().peek({ key: k, windowMs: HOUR })).used).toBe(9);
    });
  });

  describe('perMinute: units per minute, own and outside', () => {
    it('splits each minute’s units by the outside: tag, over [from, to), within the window', async () => {
      const k = key('per-minute');
      const now = await storeNow(k);
      const minuteOf = (t: number) => t - (t % MIN);
      const late = (id: string, cost: number, tag: string, at: number) =>
        ledger().record({ budgets: [budget(k, HOUR, 1000)], cost, tag, entry: entryOf(k, id), at });
      const spots = [
        ['a', 5, 'job', now - 30 * MIN],
        ['b', 7, 'outside:m1', now - 30 * MIN + 1],
        ['c', 2, 'job:x', now - 10 * MIN],
        ['d', 4, 'outside:', now - 10 * MIN],
        ['e', 1, 'outsider', now - 10 * MIN],
        ['f', 9, 'outside:m3', now - 2 * HOUR], // dropped: older than the window
      ] as const;
      for (const [id, cost, tag, at] of spots) await late(id, cost, tag, at);
      const spent = await ledger().spend({ budgets: [budget(k, HOUR, 1000)], cost: 3, tag: 'now' });
      const expected = new Map<number, { minute: number; own: number; outside: number }>();
      for (const [, cost, tag, at] of [...spots.slice(0, 5), ['', 3, 'now', spent.at] as const]) {
        const m = minuteOf(at);
        const row = expected.get(m) ?? { minute: m, own: 0, outside: 0 };
        if (tag.startsWith('outside:')) row.outside += cost;
        else row.own += cost;
        expected.set(m, row);
      }
      const all = [...expected.values()].sort((x, y) => x.minute - y.minute);
      expect(await ledger().perMinute({ key: k, windowMs: HOUR, fromMs: 0, toMs: spent.at + 1 })).toEqual(
        all,
      );
      // [from, to): the minute of `to` is left out when `to` is its start.
      const to = minuteOf(now - 10 * MIN);
      expect(await ledger().perMinute({ key: k, windowMs: HOUR, fromMs: now - 40 * MIN, toMs: to })).toEqual(
        all.filter((m) => m.minute < to),
      );
      expect(
        await ledger().perMinute({ key: key('per-minute-empty'), windowMs: HOUR, fromMs: 0, toMs: now }),
      ).toEqual([]);
      await expect(ledger().perMinute({ key: k, windowMs: MIN, fromMs: 0, toMs: now })).rejects.toMatchObject(
        {
          code: 'QG_WINDOW_MISMATCH',
        },
      );
    });

    it('counts a compressed day’s minutes (minuteMs) from fromMs', async () => {
      const k = key('per-minute-short');
      const now = await storeNow(k);
      const from = now - 10 * MIN + 7; // not on a clock minute: the short minutes start here
      const late = (id: string, cost: number, tag: string, at: number) =>
        ledger().record({ budgets: [budget(k, HOUR, 1000)], cost, tag, entry: entryOf(k, id), at });
      await late('a', 3, 'job', from); // minute 0
      await late('b', 4, 'job', from + 49); // minute 0
      await late('c', 5, 'outside:p', from + 50); // minute 1
      await late('d', 6, 'job', from + 1_234); // minute 24
      await late('e', 8, 'job', from - 1); // before fromMs
      expect(
        await ledger().perMinute({ key: k, windowMs: HOUR, fromMs: from, toMs: from + 1_250, minuteMs: 50 }),
      ).toEqual([
        { minute: from, own: 7, outside: 0 },
        { minute: from + 50, own: 0, outside: 5 },
        { minute: from + 1_200, own: 6, outside: 0 },
      ]);
      await expect(
        ledger().perMinute({ key: k, windowMs: HOUR, fromMs: from, toMs: from + 50, minuteMs: 0 }),
      ).rejects.toMatchObject({ code: 'QG_INVALID_ARGUMENT', field: 'minuteMs' });
    });
  });

  describe('bad input to record, void and perMinute is a typed error naming the field', () => {
    const k = 'ct:{bad}:late';
    const entry = { key: 'ct:{bad}:entry', id: 'e', request: 'r' };
    const good = { budgets: [{ key: k, windowMs: MIN }], cost: 1, entry, at: 1 };
    const records: Array<[string, unknown, string]> = [
      ['no entry', { ...good, entry: undefined }, 'entry'],
      ['recall-only entry', { ...good, entry: { ...entry, recallOnly: true } }, 'entry.recallOnly'],
      ['at not a time', { ...good, at: 'yesterday' }, 'at'],
      ['fractional at', { ...good, at: 1.5 }, 'at'],
      ['cost 0 without replace', { ...good, cost: 0 }, 'cost'],
      ['negative cost with replace', { ...good, cost: -1, replace: true }, 'cost'],
      ['replace not a boolean', { ...good, replace: 'yes' }, 'replace'],
      ['no window', { ...good, budgets: [{ key: k }] }, 'budgets[0].windowMs'],
      ['repeated key', { ...good, budgets: [good.budgets[0], good.budgets[0]] }, 'budgets[1].key'],
    ];
    it.each(records)('record: %s', async (_name, req, field) => {
      await expect(ledger().record(req as never)).rejects.toMatchObject({
        code: 'QG_INVALID_ARGUMENT',
        field,
      });
    });

    it('void and perMinute', async () => {
      await expect(
        ledger().void({ entry: { key: k, id: 'a:b' }, budgets: good.budgets }),
      ).rejects.toMatchObject({
        field: 'entry.id',
      });
      await expect(ledger().void({ entry, budgets: [] })).rejects.toMatchObject({ field: 'budgets' });
      await expect(ledger().perMinute({ key: k, windowMs: MIN, fromMs: 10, toMs: 10 })).rejects.toMatchObject(
        {
          field: 'toMs',
        },
      );
      await expect(ledger().perMinute({ key: k, windowMs: MIN, fromMs: -1, toMs: 10 })).rejects.toMatchObject(
        {
          field: 'fromMs',
        },
      );
      expect(await ledger().recallEntry(entry.key)).toBeUndefined();
    });
  });
}
