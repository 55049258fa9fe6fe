/**
 * Small deterministic randomness for the simulator: a string hash and a seeded generator. Every
 * piece of synthetic data is derived from (seed, what it is, which one), so the same seed gives
 * the same corpus in any process and in any order of requests.
 */

/** 32-bit hash of the parts (FNV-1a, then an avalanche finaliser). */
export function hash32(...parts: ReadonlyArray<string | number>): number {
  let h = 0x811c9dc5;
  for (let p = 0; p < parts.length; p++) {
    const s = String(parts[p]);
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    h ^= 0x1f;
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Uniform in [0, 1) from the parts. */
export function unit(...parts: ReadonlyArray<string | number>): number {
  return hash32(...parts) / 4_294_967_296;
}

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max]. */
  int(min: number, max: number): number;
  /** One element. */
  pick<T>(items: readonly T[]): T;
  /** True with probability p. */
  chance(p: number): boolean;
  /** Roughly normal (mean 0, sd 1). */
  normal(): number;
}

/** mulberry32: fast, small state, good enough for synthetic data. */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
    chance: (p) => next() < p,
    normal: () => {
      let s = 0;
      for (let i = 0; i < 6; i++) s += next();
      return (s - 3) * Math.SQRT2;
    },
  };
}

/** Weighted choice: `weights[i]` is the weight of `items[i]`. */
export function weighted<T>(r: Rng, items: readonly T[], weights: readonly number[]): T {
  let total = 0;
  for (const w of weights) total += w;
  let x = r.next() * total;
  for (let i = 0; i < items.length; i++) {
    x -= weights[i] ?? 0;
    if (x < 0) return items[i] as T;
  }
  return items[items.length - 1] as T;
}
