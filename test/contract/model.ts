/**
 * A small reference model of the ledger: a plain list of calls per key, summed from scratch at
 * every step (no running total, no pruning, no walk), Retry-After found by trying each expiry time
 * in order, and entries remembered in a plain map. `runModel` drives a ledger and the model with the
 * same random operations (spends with and without an entry id, refunds, records at past, present
 * and future times, replaces, voids, reads per minute, blocks) and compares every answer.
 */
import { assert, expect } from 'vitest';
import type { Decision, Ledger } from '../../src/index.js';
import { OUTSIDE_TAG_PREFIX } from '../../src/ledger/backend.js';
import { rng } from '../../src/youtube/simulator/rng.js';

interface Entry {
  id: string;
  at: number;
  cost: number;
  tag: string;
}

interface ModelKey {
  key: string;
  windowMs: number;
  entries: Entry[];
  blockedUntil: number;
  reason: string;
  lastSpendAt: number;
}

/** An entry id of the pool: always the same budgets, cost, tag and request, as a real caller's. */
interface PoolEntry {
  id: string;
  key: string;
  keys: ModelKey[];
  cost: number;
  tag: string;
  /** Reconcile's kind: only ever recorded with `replace`, at varying costs. */
  outside: boolean;
  /** The member it has in the logs now (outside entries). */
  current?: { id: string; at: number } | undefined;
}

/** What the store remembers of an entry, until `expires`. */
interface Memory {
  kind: 'allowed' | 'denied' | 'void';
  at: number;
  expires: number;
  /** A spend's first decision, answered again. */
  first?: Decision;
}

const SLACK_MS = 1000;
const MIN = 60_000;

function live(k: ModelKey, now: number): Entry[] {
  return k.entries.filter((e) => e.at > now - k.windowMs);
}

function used(k: ModelKey, now: number): number {
  return live(k, now).reduce((s, e) => s + e.cost, 0);
}

/** The first time t > now at which `cost` fits under `limit` on k (by definition, not by walking). */
function fitsAt(k: ModelKey, now: number, cost: number, limit: number): number {
  const expiries = [...new Set(live(k, now).map((e) => e.at + k.windowMs))].sort((a, b) => a - b);
  for (const t of expiries) if (used(k, t) + cost <= limit) return t;
  return now;
}

export interface ModelOptions {
  seed: number;
  steps: number;
  /** Prefix for the model's keys (must carry one hash tag so a cluster takes multi-key spends). */
  keyPrefix: string;
  windows: number[];
  /** Moves the ledger's injected clock; absent when the store keeps its own time. */
  advance?: (ms: number) => void;
  /** Exact time comparisons (injected clock); otherwise Retry-After may differ by 1 ms (µs rounding). */
  exact: boolean;
}

export async function runModel(ledger: Ledger, o: ModelOptions): Promise<void> {
  const { next: rnd, pick } = rng(o.seed);
  const keys: ModelKey[] = Array.from({ length: 4 }, (_v, i) => ({
    key: `${o.keyPrefix}:k${i}`,
    windowMs: o.windows[i % o.windows.length]!,
    entries: [],
    blockedUntil: 0,
    reason: '',
    lastSpendAt: Number.NEGATIVE_INFINITY,
  }));
  const pool: PoolEntry[] = Array.from({ length: 8 }, (_v, i) => {
    const outside = i >= 6;
    const first = keys[i % keys.length]!;
    const second = keys[(i + 1) % keys.length]!;
    return {
      id: `e${i}`,
      key: `${o.keyPrefix}:entry:e${i}`,
      keys: i % 3 === 0 ? [first, second] : [first],
      cost: 1 + (i % 4) * 3,
      tag: outside ? `${OUTSIDE_TAG_PREFIX}m${i}` : `t${i % 2}`,
      outside,
    };
  });
  const memory = new Map<string, Memory>();
  const decisions: Decision[] = [];
  let clock = (await ledger.peek({ key: keys[0]!.key, windowMs: keys[0]!.windowMs })).now;
  /** The store's time as last seen (real-time stores: only moves forward). */
  let seen = clock;
  const tol = o.exact ? 0 : 1;
  let allowed = 0;
  let denied = 0;
  const counts = { recorded: 0, replayed: 0, dropped: 0, refunded: 0, voided: 0, none: 0 };
  const remembered = (e: PoolEntry, now: number) => {
    const m = memory.get(e.key);
    return m && m.expires > now ? m : undefined;
  };
  const longest = (e: PoolEntry) => Math.max(...e.keys.map((k) => k.windowMs));
  const memberOf = (e: PoolEntry, cost: number) => `${e.id}:${cost}:${e.tag}`;

  /** The model's decision of a spend at `now`, written when allowed. */
  const decide = (
    chosen: ModelKey[],
    limits: number[],
    cost: number,
    tag: string,
    d: Decision,
    now: number,
    ctx: string,
  ) => {
    let retryAt = 0;
    let limitedBy: ModelKey | undefined;
    const ats = chosen.map((k, i) => {
      let at = 0;
      if (k.blockedUntil > now) at = k.blockedUntil;
      else if (used(k, now) + cost > limits[i]!) at = Math.max(fitsAt(k, now, cost, limits[i]!), now + 1);
      if (at > retryAt) {
        retryAt = at;
        limitedBy = k;
      }
      return at;
    });
    if (limitedBy) {
      denied++;
      const remaining = Math.min(
        ...chosen.map((k, i) => (k.blockedUntil > now ? 0 : Math.max(0, limits[i]! - used(k, now)))),
      );
      expect(d, ctx).toMatchObject({ allowed: false, remaining });
      assert(!d.allowed);
      // Equal Retry-Afters: the first budget. Off by the store's sub-ms rounding: either of them.
      const candidates = chosen.filter((_k, i) => ats[i]! > 0 && ats[i]! >= retryAt - tol).map((k) => k.key);
      expect(o.exact ? [limitedBy.key] : candidates, ctx).toContain(d.limitedBy);
      expect(Math.abs(d.retryAfterMs - (retryAt - now)), `${ctx} retryAfter`).toBeLessThanOrEqual(tol);
      const by = chosen.find((k) => k.key === d.limitedBy)!;
      expect(d.blockedUntil, ctx).toBe(by.blockedUntil > now ? by.blockedUntil : undefined);
      return;
    }
    allowed++;
    const remaining = Math.min(...chosen.map((k, i) => limits[i]! - used(k, now) - cost));
    expect(d, ctx).toMatchObject({ allowed: true, retryAfterMs: 0, remaining });
    assert(d.allowed);
    for (const k of chosen) {
      k.entries.push({ id: d.id, at: now, cost, tag });
      k.lastSpendAt = now;
    }
  };

  /** An entry's member taken out of every log (a refund, a void, a replace). */
  const takeOut = (id: string) => {
    for (const k of keys) k.entries = k.entries.filter((e) => e.id !== id);
  };

  for (let step = 0; step < o.steps; step++) {
    const r = rnd();
    const ctx = `step ${step}`;
    if (r < 0.4) {
      const withEntry = rnd() < 0.25 ? pick(pool.filter((e) => !e.outside)) : undefined;
      const chosen = withEntry
        ? withEntry.keys
        : rnd() < 0.3
          ? [pick(keys), pick(keys)].filter((k, i, a) => a.indexOf(k) === i)
          : [pick(keys)];
      const limits = chosen.map(() => pick([20, 35, 50]));
      const cost = withEntry?.cost ?? 1 + Math.floor(rnd() * (rnd() < 0.2 ? Math.min(...limits) : 12));
      const tag = withEntry?.tag ?? pick(['a', 'b', 'c']);
      const entry = withEntry && { key: withEntry.key, id: withEntry.id, request: `req-${withEntry.id}` };
      const d = await ledger.spend({
        budgets: chosen.map((k, i) => ({ key: k.key, limit: limits[i]!, windowMs: k.windowMs })),
        cost,
        tag,
        ...(entry ? { entry } : {}),
      });
      const now = o.exact ? clock : d.at;
      const m = withEntry && remembered(withEntry, now);
      if (m) {
        // The remembered answer, charged nothing.
        if (m.kind === 'void') {
          expect(d, ctx).toMatchObject({ allowed: false, replayed: true, voided: true, retryAfterMs: 0 });
        } else if (m.first) {
          expect(d, ctx).toEqual({ ...m.first, replayed: true });
        } else {
          expect(d, ctx).toMatchObject({ allowed: true, replayed: true, at: m.at, remaining: 0 });
        }
      } else {
        expect(d.at, ctx).toBe(now);
        decide(chosen, limits, cost, tag, d, now, ctx);
        if (withEntry) {
          memory.set(withEntry.key, {
            kind: d.allowed ? 'allowed' : 'denied',
            at: now,
            expires: now + longest(withEntry) + SLACK_MS,
            first: d,
          });
        }
      }
      seen = Math.max(seen, d.at);
      decisions.push(d);
    } else if (r < 0.47) {
      // A record: a journal's spend (at its own time) or reconcile's outside spend (replace).
      const e = pick(pool);
      const window = longest(e);
      const offset = o.exact
        ? Math.floor(rnd() * (window + 800)) - 300
        : pick([
            -(1000 + rnd() * 5000),
            (0.05 + rnd() * 0.4) * window,
            0.6 * window + rnd() * 0.2 * window,
            1.3 * window,
          ]);
      const at = Math.floor((o.exact ? clock : seen) - offset);
      const cost = e.outside ? pick([0, 2, 5, 5, 9]) : e.cost;
      const res = await ledger.record({
        budgets: e.keys.map((k) => ({ key: k.key, windowMs: k.windowMs })),
        cost,
        tag: e.tag,
        entry: { key: e.key, id: e.id, request: `req-${e.id}` },
        at,
        ...(e.outside ? { replace: true } : {}),
      });
      counts[res.outcome]++;
      // The store's now: exact, or bounded by the answer (a time ahead of it is written as now).
      const now = o.exact ? clock : Math.max(seen, res.outcome === 'recorded' && res.at < at ? res.at : seen);
      const written = Math.min(at, now);
      if (!o.exact && res.outcome === 'recorded') {
        expect(res.at <= at, ctx).toBe(true);
        if (at < seen) expect(res.at, ctx).toBe(at);
        seen = Math.max(seen, res.at);
      }
      const m = remembered(e, now);
      const member = memberOf(e, cost);
      if (!e.outside) {
        if (m?.kind === 'allowed') {
          expect(res, ctx).toMatchObject({ outcome: 'replayed', at: m.at });
          continue;
        }
      } else if (m?.kind === 'allowed' && e.current) {
        const old = e.current;
        const oldLive = e.keys.some((k) => old.at > now - k.windowMs);
        if (old.id === member && old.at === written) {
          // Unchanged: left as it is; an old copy that has left every window may be gone already.
          expect(oldLive ? ['replayed'] : ['replayed', 'dropped'], ctx).toContain(res.outcome);
          if (res.outcome === 'dropped') e.current = undefined;
          continue;
        }
        takeOut(old.id);
        e.current = undefined;
      }
      const into = e.keys.filter((k) => written > now - k.windowMs);
      if (cost > 0 && into.length === 0) {
        expect(res, ctx).toMatchObject({ outcome: 'dropped', at });
        continue;
      }
      expect(res, ctx).toMatchObject({
        outcome: 'recorded',
        cost,
        id: member,
        ...(o.exact ? { at: written } : {}),
      });
      const w = o.exact ? written : res.at;
      if (cost > 0) {
        for (const k of into) {
          k.entries.push({ id: member, at: w, cost, tag: e.tag });
          k.lastSpendAt = Math.max(k.lastSpendAt, w);
        }
        if (e.outside) e.current = { id: member, at: w };
      }
      memory.set(e.key, { kind: 'allowed', at: w, expires: now + window + SLACK_MS });
    } else if (r < 0.51) {
      const e = pick(pool.filter((x) => !x.outside));
      const res = await ledger.void({
        entry: { key: e.key, id: e.id },
        budgets: e.keys.map((k) => ({ key: k.key, windowMs: k.windowMs })),
      });
      counts[res.outcome]++;
      const now = o.exact ? clock : seen;
      const m = remembered(e, now);
      if (!m) {
        expect(res, ctx).toEqual({ outcome: 'voided', cost: 0 });
        memory.set(e.key, { kind: 'void', at: now, expires: now + longest(e) + SLACK_MS });
        continue;
      }
      const member = memberOf(e, e.cost);
      const inLogs = e.keys.some((k) => k.entries.some((x) => x.id === member));
      const isLive = e.keys.some((k) => live(k, now).some((x) => x.id === member));
      if (m.kind !== 'allowed' || !inLogs) {
        expect(res, ctx).toEqual({ outcome: 'none', cost: 0 });
      } else if (isLive) {
        expect(res, ctx).toEqual({ outcome: 'refunded', cost: e.cost });
      } else {
        // Left every window: whether the store has pruned it yet is its own business.
        expect(['refunded', 'none'], ctx).toContain(res.outcome);
      }
      if (res.outcome === 'refunded') {
        takeOut(member);
        memory.set(e.key, { kind: 'void', at: m.at, expires: now + longest(e) + SLACK_MS });
      }
    } else if (r < 0.55) {
      const k = pick(keys);
      const now = o.exact ? clock : seen;
      const fromMs = Math.max(0, Math.floor(now - rnd() * 1.5 * k.windowMs));
      const toMs = rnd() < 0.5 ? now + 1 : Math.floor(fromMs + rnd() * (now + 1 - fromMs)) + 1;
      const got = await ledger.perMinute({ key: k.key, windowMs: k.windowMs, fromMs, toMs });
      const want = new Map<number, { minute: number; own: number; outside: number }>();
      for (const e of live(k, now)) {
        if (e.at < fromMs || e.at >= toMs) continue;
        const minute = e.at - (e.at % MIN);
        const row = want.get(minute) ?? { minute, own: 0, outside: 0 };
        if (e.tag.startsWith(OUTSIDE_TAG_PREFIX)) row.outside += e.cost;
        else row.own += e.cost;
        want.set(minute, row);
      }
      expect(got, ctx).toEqual([...want.values()].sort((a, b) => a.minute - b.minute));
    } else if (r < 0.62 && decisions.length > 0) {
      const d = pick(decisions);
      await ledger.refund(d);
      if (d.allowed) takeOut(d.id);
    } else if (r < 0.74) {
      const k = pick(keys);
      const s = await ledger.peek({ key: k.key, windowMs: k.windowMs });
      const now = s.now;
      seen = Math.max(seen, now);
      if (o.exact) expect(now, ctx).toBe(clock);
      const es = live(k, now);
      const byTag: Record<string, number> = {};
      for (const e of es) byTag[e.tag] = (byTag[e.tag] ?? 0) + e.cost;
      expect(s, ctx).toMatchObject({ used: used(k, now), calls: es.length, byTag });
      expect(s.oldestAt, ctx).toBe(es.length ? Math.min(...es.map((e) => e.at)) : undefined);
      expect(s.newestAt, ctx).toBe(es.length ? Math.max(...es.map((e) => e.at)) : undefined);
      expect(s.blockedUntil, ctx).toBe(k.blockedUntil > now ? k.blockedUntil : undefined);
      // The totals-only read (the pacing line's) agrees on the units and the block.
      const t = await ledger.peek({ key: k.key, windowMs: k.windowMs, totalsOnly: true });
      if (o.exact) expect(t.now, ctx).toBe(clock);
      expect(t.used, ctx).toBe(used(k, t.now));
      expect(t.blockedUntil, ctx).toBe(k.blockedUntil > t.now ? k.blockedUntil : undefined);
    } else if (r < 0.78) {
      const k = pick(keys);
      const limit = pick([20, 35, 50]);
      const amounts = [1, 10, 40];
      const got = await ledger.freesUpIn({ key: k.key, windowMs: k.windowMs, limit, amounts });
      if (o.exact) {
        const u = used(k, clock);
        const want = amounts.map((a) => {
          const target = Math.max(0, Math.min(u, limit) - a);
          const expiries = [...new Set(live(k, clock).map((e) => e.at + k.windowMs))].sort((x, y) => x - y);
          return u <= target ? 0 : expiries.find((t) => used(k, t) <= target)! - clock;
        });
        expect(got, ctx).toEqual(want);
      } else {
        expect(
          got.every((x, i) => x >= 0 && (i === 0 || x >= got[i - 1]!)),
          ctx,
        ).toBe(true);
      }
    } else if (r < 0.84) {
      const k = pick(keys);
      const base = o.exact ? clock : (await ledger.peek({ key: k.key, windowMs: k.windowMs })).now;
      const until = o.exact ? base + Math.floor(rnd() * 3000) : base + (rnd() < 0.5 ? 3_600_000 : -1000);
      await ledger.block(k.key, until, 'model');
      k.blockedUntil = until;
    } else if (r < 0.88) {
      const k = pick(keys);
      await ledger.unblock(k.key);
      k.blockedUntil = 0;
    } else if (r < 0.9) {
      // A different window on a key that is live: always an error, nothing changes.
      const k = pick(keys);
      const now = o.exact ? clock : (await ledger.peek({ key: k.key, windowMs: k.windowMs })).now;
      if (now < k.lastSpendAt + k.windowMs) {
        await expect(
          ledger.spend({ budgets: [{ key: k.key, limit: 50, windowMs: k.windowMs + 1 }], cost: 1 }),
          ctx,
        ).rejects.toMatchObject({ code: 'QG_WINDOW_MISMATCH' });
      }
    } else if (o.advance) {
      const ms = Math.floor(rnd() * 700);
      o.advance(ms);
      clock += ms;
    }
  }
  // The run exercised every outcome.
  expect(allowed).toBeGreaterThan(o.steps / 20);
  expect(denied).toBeGreaterThan(o.steps / 50);
  for (const outcome of ['recorded', 'replayed', 'refunded', 'voided', 'none'] as const) {
    expect(counts[outcome], outcome).toBeGreaterThan(0);
  }
  if (o.exact) expect(counts.dropped).toBeGreaterThan(0);
}
