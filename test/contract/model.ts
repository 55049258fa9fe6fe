/**
 * A small reference model of the ledger: a plain list of calls per key, summed from scratch at
 * every step (no running total, no pruning, no walk), and Retry-After found by trying each expiry
 * time in order. `runModel` drives a ledger and the model with the same random operations and
 * compares every answer.
 */
import { assert, expect } from 'vitest';
import type { Decision, Ledger } from '../../src/index.js';
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
  const decisions: Decision[] = [];
  let clock = (await ledger.peek({ key: keys[0]!.key, windowMs: keys[0]!.windowMs })).now;
  const tol = o.exact ? 0 : 1;
  let allowed = 0;
  let denied = 0;

  for (let step = 0; step < o.steps; step++) {
    const r = rnd();
    const ctx = `step ${step}`;
    if (r < 0.5) {
      const chosen =
        rnd() < 0.3 ? [pick(keys), pick(keys)].filter((k, i, a) => a.indexOf(k) === i) : [pick(keys)];
      const limits = chosen.map(() => pick([20, 35, 50]));
      const cost = 1 + Math.floor(rnd() * (rnd() < 0.2 ? Math.min(...limits) : 12));
      const tag = pick(['a', 'b', 'c']);
      const d = await ledger.spend({
        budgets: chosen.map((k, i) => ({ key: k.key, limit: limits[i]!, windowMs: k.windowMs })),
        cost,
        tag,
      });
      const now = o.exact ? clock : d.at;
      expect(d.at, ctx).toBe(now);
      // The model's decision.
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
        const candidates = chosen
          .filter((_k, i) => ats[i]! > 0 && ats[i]! >= retryAt - tol)
          .map((k) => k.key);
        expect(o.exact ? [limitedBy.key] : candidates, ctx).toContain(d.limitedBy);
        expect(Math.abs(d.retryAfterMs - (retryAt - now)), `${ctx} retryAfter`).toBeLessThanOrEqual(tol);
        const by = chosen.find((k) => k.key === d.limitedBy)!;
        expect(d.blockedUntil, ctx).toBe(by.blockedUntil > now ? by.blockedUntil : undefined);
      } else {
        allowed++;
        const remaining = Math.min(...chosen.map((k, i) => limits[i]! - used(k, now) - cost));
        expect(d, ctx).toMatchObject({ allowed: true, retryAfterMs: 0, remaining });
        assert(d.allowed);
        for (const k of chosen) {
          k.entries.push({ id: d.id, at: now, cost, tag });
          k.lastSpendAt = now;
        }
      }
      decisions.push(d);
    } else if (r < 0.6 && decisions.length > 0) {
      const d = pick(decisions);
      await ledger.refund(d);
      if (d.allowed) for (const k of keys) k.entries = k.entries.filter((e) => e.id !== d.id);
    } else if (r < 0.75) {
      const k = pick(keys);
      const s = await ledger.peek({ key: k.key, windowMs: k.windowMs });
      const now = s.now;
      if (o.exact) expect(now, ctx).toBe(clock);
      const es = live(k, now);
      const byTag: Record<string, number> = {};
      for (const e of es) byTag[e.tag] = (byTag[e.tag] ?? 0) + e.cost;
      expect(s, ctx).toMatchObject({ used: used(k, now), calls: es.length, byTag });
      expect(s.oldestAt, ctx).toBe(es.length ? Math.min(...es.map((e) => e.at)) : undefined);
      expect(s.newestAt, ctx).toBe(es.length ? Math.max(...es.map((e) => e.at)) : undefined);
      expect(s.blockedUntil, ctx).toBe(k.blockedUntil > now ? k.blockedUntil : undefined);
    } else if (r < 0.8) {
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
    } else if (r < 0.86) {
      const k = pick(keys);
      const base = o.exact ? clock : (await ledger.peek({ key: k.key, windowMs: k.windowMs })).now;
      const until = o.exact ? base + Math.floor(rnd() * 3000) : base + (rnd() < 0.5 ? 3_600_000 : -1000);
      await ledger.block(k.key, until, 'model');
      k.blockedUntil = until;
    } else if (r < 0.9) {
      const k = pick(keys);
      await ledger.unblock(k.key);
      k.blockedUntil = 0;
    } else if (r < 0.92) {
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
  // The run exercised both outcomes.
  expect(allowed).toBeGreaterThan(o.steps / 20);
  expect(denied).toBeGreaterThan(o.steps / 50);
}
