/**
 * Fault injection for the simulator: rates (applied with a seeded generator, so a run is
 * repeatable), queued one-shot faults for exact tests ("the next 2 requests reset"), and a burst of
 * rateLimitExceeded with a Retry-After.
 */
import * as z from 'zod';
import { InvalidArgumentError } from '../../errors.js';
import { type Rng, rng } from './rng.js';

export type FaultKind = 'error' | 'reset' | 'hang';
export const FAULT_KINDS: readonly FaultKind[] = ['error', 'reset', 'hang'];

const rate = z.number().min(0).max(1);

const FaultOptionsSchema = z.strictObject({
  /** Added to every answer, in ms. */
  latencyMs: z.number().int().min(0).max(600_000).optional(),
  /** A further random 0..latencyJitterMs ms. */
  latencyJitterMs: z.number().int().min(0).max(600_000).optional(),
  /** Share of requests answered 500 backendError. */
  errorRate: rate.optional(),
  /** Share of requests whose connection is reset in the middle of the response. */
  resetRate: rate.optional(),
  /** Share of requests that are read and never answered. */
  hangRate: rate.optional(),
});
export type FaultOptions = z.infer<typeof FaultOptionsSchema>;

export const RateLimitBurstSchema = z.strictObject({
  /** How many answers in a row are rate-limited. */
  count: z.number().int().min(1).max(1_000_000),
  /** Retry-After in seconds (default 1). */
  retryAfterSec: z.number().int().min(0).max(86_400).optional(),
  /** 403 (default, as YouTube answers) or 429. */
  status: z.union([z.literal(403), z.literal(429)]).optional(),
  reason: z.enum(['rateLimitExceeded', 'userRateLimitExceeded']).optional(),
});
export type RateLimitBurst = z.infer<typeof RateLimitBurstSchema>;

export interface FaultState {
  latencyMs: number;
  latencyJitterMs: number;
  errorRate: number;
  resetRate: number;
  hangRate: number;
  /** One-shot faults still queued, by kind. */
  queued: Record<FaultKind, number>;
  rateLimit: { remaining: number; retryAfterSec: number; status: 403 | 429; reason: string };
}

/** What to do with one request. */
export type FaultDecision =
  | { kind: 'none' }
  | { kind: 'error' }
  | { kind: 'reset' }
  | { kind: 'hang' }
  | { kind: 'rateLimit'; status: 403 | 429; reason: string; retryAfterSec: number };

/** The control surface tests and the control endpoint use. */
export interface FaultControl {
  /** Merges rates and latency into the current settings. */
  set(options: FaultOptions): FaultState;
  /** Back to no faults at all (queued ones and bursts included). */
  clear(): FaultState;
  /** The next `count` requests get this fault. */
  next(kind: FaultKind, count?: number): FaultState;
  /** The next `count` answers are rateLimitExceeded with a Retry-After. */
  rateLimitBurst(burst: RateLimitBurst): FaultState;
  state(): FaultState;
}

function parse<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const r = schema.safeParse(value);
  if (!r.success) {
    const i = r.error.issues[0];
    const path = i?.path.length ? `${field}.${i.path.join('.')}` : field;
    throw new InvalidArgumentError(path, i?.message ?? 'invalid');
  }
  return r.data;
}

export class Faults implements FaultControl {
  #s: FaultState;
  readonly #r: Rng;

  constructor(seed: number, initial: FaultOptions = {}) {
    this.#r = rng(seed);
    this.#s = Faults.#empty();
    this.set(initial);
  }

  static #empty(): FaultState {
    return {
      latencyMs: 0,
      latencyJitterMs: 0,
      errorRate: 0,
      resetRate: 0,
      hangRate: 0,
      queued: { error: 0, reset: 0, hang: 0 },
      rateLimit: { remaining: 0, retryAfterSec: 1, status: 403, reason: 'rateLimitExceeded' },
    };
  }

  set(options: FaultOptions): FaultState {
    const o = parse(FaultOptionsSchema, options, 'faults');
    for (const [k, v] of Object.entries(o))
      if (v !== undefined) (this.#s as unknown as Record<string, number>)[k] = v;
    return this.state();
  }

  clear(): FaultState {
    this.#s = Faults.#empty();
    return this.state();
  }

  next(kind: FaultKind, count = 1): FaultState {
    if (!FAULT_KINDS.includes(kind))
      throw new InvalidArgumentError('kind', `must be one of ${FAULT_KINDS.join(', ')}`);
    const n = parse(z.number().int().min(1).max(1_000_000), count, 'count');
    this.#s.queued[kind] += n;
    return this.state();
  }

  rateLimitBurst(burst: RateLimitBurst): FaultState {
    const b = parse(RateLimitBurstSchema, burst, 'rateLimit');
    this.#s.rateLimit = {
      remaining: b.count,
      retryAfterSec: b.retryAfterSec ?? 1,
      status: b.status ?? 403,
      reason: b.reason ?? 'rateLimitExceeded',
    };
    return this.state();
  }

  state(): FaultState {
    return structuredClone(this.#s);
  }

  /** The fault for the next request. Queued faults first (hang, reset, error), then the burst, then rates. */
  decide(): FaultDecision {
    const q = this.#s.queued;
    for (const kind of ['hang', 'reset', 'error'] as const) {
      if (q[kind] > 0) {
        q[kind]--;
        return { kind };
      }
    }
    const rl = this.#s.rateLimit;
    if (rl.remaining > 0) {
      rl.remaining--;
      return { kind: 'rateLimit', status: rl.status, reason: rl.reason, retryAfterSec: rl.retryAfterSec };
    }
    const { hangRate, resetRate, errorRate } = this.#s;
    if (hangRate > 0 && this.#r.next() < hangRate) return { kind: 'hang' };
    if (resetRate > 0 && this.#r.next() < resetRate) return { kind: 'reset' };
    if (errorRate > 0 && this.#r.next() < errorRate) return { kind: 'error' };
    return { kind: 'none' };
  }

  /** Added latency for one answer, in ms. */
  latency(): number {
    const { latencyMs, latencyJitterMs } = this.#s;
    return latencyMs + (latencyJitterMs > 0 ? Math.floor(this.#r.next() * (latencyJitterMs + 1)) : 0);
  }
}
