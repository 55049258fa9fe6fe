/** The outside-spend rule (src/reconcile/outside.ts), on series small enough to read. */
import { describe, expect, it } from 'vitest';
import { planOutside } from '../../src/reconcile/outside.js';

const cumulative = (xs: readonly number[]) => xs.map((_, i) => xs.slice(0, i + 1).reduce((a, b) => a + b, 0));

/** A repeatable series of small spends (a linear congruential generator, seeded). */
function series(seed: number, n: number, max: number): number[] {
  let s = seed;
  return Array.from({ length: n }, () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s % (max + 1);
  });
}

describe('outside spend', () => {
  it('is nothing when the upstream counted what the ledger holds', () => {
    const p = planOutside({ upstream: [3, 0, 5, 1], own: [3, 0, 5, 1] });
    expect(p.outside).toEqual([0, 0, 0, 0]);
    expect(p).toMatchObject({ upstream: 9, own: 9, outsideTotal: 0, ledgerAbove: 0 });
  });

  it('appears at the minute the unseen spend was charged', () => {
    const p = planOutside({ upstream: [1, 21, 1, 1, 4], own: [1, 1, 1, 1, 1] });
    expect(p.outside).toEqual([0, 20, 0, 0, 3]);
    expect(p.outsideTotal).toBe(23);
    expect(p.ledgerAbove).toBe(0);
  });

  it('does not count a spend on a minute boundary twice, whichever side the upstream put it', () => {
    // The ledger wrote it at 12:00:59.9, the upstream charged it at 12:01:00.1 ...
    expect(planOutside({ upstream: [0, 5, 0], own: [5, 0, 0] }).outside).toEqual([0, 0, 0]);
    // ... or the clocks disagree the other way.
    expect(planOutside({ upstream: [5, 0, 0], own: [0, 5, 0] }).outside).toEqual([0, 0, 0]);
  });

  it('sees a point the upstream published late, at its own minute', () => {
    const before = planOutside({ upstream: [2, 0, 0, 2], own: [2, 0, 0, 2] });
    const after = planOutside({ upstream: [2, 7, 0, 2], own: [2, 0, 0, 2] });
    expect(before.outsideTotal).toBe(0);
    expect(after.outside).toEqual([0, 7, 0, 0]);
  });

  it('shrinks by as much as a spend of ours written late for the same minutes', () => {
    const unseen = planOutside({ upstream: [0, 10, 0, 0], own: [0, 0, 0, 0] });
    expect(unseen.outside).toEqual([0, 10, 0, 0]);
    // A journal replays 6 of those 10 units as ours, at the minute they were spent.
    const replayed = planOutside({ upstream: [0, 10, 0, 0], own: [0, 6, 0, 0] });
    expect(replayed.outside).toEqual([0, 4, 0, 0]);
    expect(replayed.outsideTotal + replayed.own).toBe(unseen.outsideTotal + unseen.own);
  });

  it('reports a ledger above the upstream, never takes it back, and lets later outside spend fill it first', () => {
    const above = planOutside({ upstream: [0, 0, 0], own: [4, 0, 0] });
    expect(above.outside).toEqual([0, 0, 0]);
    expect(above.ledgerAbove).toBe(4);
    const filled = planOutside({ upstream: [0, 0, 6, 0], own: [4, 0, 0, 0] });
    expect(filled.outside).toEqual([0, 0, 2, 0]);
    expect(filled.ledgerAbove).toBe(0);
  });

  it('keeps its promises on any series: never negative, never below the upstream at the end, minimal', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const upstream = series(seed, 30, 6);
      const own = series(seed * 7 + 3, 30, 5);
      const p = planOutside({ upstream, own });
      expect(p.outside.every((x) => x >= 0)).toBe(true);
      expect(p.own + p.outsideTotal).toBeGreaterThanOrEqual(p.upstream);
      expect(p.ledgerAbove).toBe(p.own + p.outsideTotal - p.upstream);
      // The ledger with its outside spend stays at or above the upstream's count at every minute
      // where the difference held for two minutes: no less would do.
      const cu = cumulative(upstream);
      const co = cumulative(own);
      const cx = cumulative(p.outside);
      for (let i = 0; i + 1 < 30; i++) {
        const settled = Math.min(cu[i]! - co[i]!, cu[i + 1]! - co[i + 1]!);
        expect(co[i]! + cx[i]!).toBeGreaterThanOrEqual(co[i]! + settled);
      }
      // More of our own spend never adds outside spend; more upstream count never removes any.
      const moreOwn = planOutside({ upstream, own: own.map((x, i) => (i === seed % 30 ? x + 3 : x)) });
      expect(moreOwn.outsideTotal).toBeLessThanOrEqual(p.outsideTotal);
      const moreUpstream = planOutside({
        upstream: upstream.map((x, i) => (i === seed % 30 ? x + 3 : x)),
        own,
      });
      expect(moreUpstream.outsideTotal).toBeGreaterThanOrEqual(p.outsideTotal);
    }
  });

  it('refuses series of different lengths', () => {
    expect(() => planOutside({ upstream: [1, 2], own: [1] })).toThrow(RangeError);
  });
});
