/**
 * Retries as a separate, composable helper. The client makes exactly one request per call; the
 * caller wraps whatever one attempt means to it (for the guard: spend through the ledger, then one
 * request) in `withRetries(attempt, policy)`, so every attempt is metered.
 *
 * What is retried:
 * - 5xx / backendError and transport failures: jittered exponential backoff;
 * - rateLimitExceeded / userRateLimitExceeded: after the upstream's Retry-After when it is short
 *   (at most `maxRetryAfterMs`), else not at all (the caller should stop rather than sleep); a
 *   per-minute limit (`…PerMinute…`, `1/min/…`) only in the next minute (see `upstreamWaitMs`), so
 *   at most one charged attempt falls in the minute that refused;
 * - a 5xx whose answer asks for a wait (Retry-After, RetryInfo, "try again in 30 seconds") after
 *   that wait, if it is short, else not at all;
 * - never quotaExceeded, keyInvalid, forbidden, bad request, not found or a malformed response.
 * Attempts are bounded in number and in total time (waits included).
 */
import { setTimeout as sleepFor } from 'node:timers/promises';
import { QuotaGuardError } from '../errors.js';
import { UpstreamError } from './errors.js';

export interface RetryPolicy {
  /** Attempts in all, the first one included. */
  maxAttempts: number;
  /** No retry starts once this much time (attempts and waits) would be exceeded. */
  maxTotalMs: number;
  /** Backoff before the 2nd attempt; doubles for each further attempt. */
  baseDelayMs: number;
  /** Backoff ceiling. */
  maxDelayMs: number;
  /** The longest Retry-After honoured; a longer one is not retried. */
  maxRetryAfterMs: number;
  /** Jitter source in [0, 1). */
  random: () => number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 4,
  maxTotalMs: 30_000,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 10_000,
  random: Math.random,
});

export interface RetryInfo {
  /** The attempt that just failed (1-based). */
  attempt: number;
  delayMs: number;
  error: unknown;
}

export interface RetryOptions extends Partial<RetryPolicy> {
  /** Aborting stops waiting; the last error is thrown. */
  signal?: AbortSignal;
  /** Called before each wait (e.g. to log it). */
  onRetry?: (info: RetryInfo) => void;
  /** Injectable for tests. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  now?: () => number;
}

const RETRYABLE_CODES = new Set([
  'QG_UPSTREAM_SERVER_ERROR',
  'QG_UPSTREAM_RATE_LIMITED',
  'QG_UPSTREAM_TRANSPORT',
]);

/** Whether another attempt may succeed: 5xx, rate limits and transport failures. */
export function isRetryable(err: unknown): boolean {
  return err instanceof QuotaGuardError && RETRYABLE_CODES.has(err.code);
}

/** Jitter added past a minute boundary, so processes refused in one minute do not all return at :00. */
export const MINUTE_JITTER_MS = 2_000;

/**
 * The wait the upstream's answer itself implies, or undefined when it implies none:
 * - a per-minute limit: the earlier of its Retry-After and the next minute boundary plus jitter
 *   (never 0: the minute that refused is spent);
 * - otherwise the Retry-After it asked for (header, RetryInfo, or a page's "try again in N seconds").
 */
export function upstreamWaitMs(
  err: unknown,
  nowMs: number = Date.now(),
  random: () => number = Math.random,
): number | undefined {
  if (!(err instanceof UpstreamError)) return undefined;
  const asked = err.retryAfterMs;
  if (err.code === 'QG_UPSTREAM_RATE_LIMITED' && err.quota?.interval === 'minute') {
    return perMinuteWaitMs(nowMs, asked, random);
  }
  return asked;
}

/**
 * The wait after a per-minute limit, for every client (ours, the guarded fetch, the interceptor):
 * the earlier of the upstream's Retry-After and the next minute boundary plus jitter. Never 0: the
 * minute that refused is spent.
 */
export function perMinuteWaitMs(
  nowMs: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const toNextMinute = 60_000 - (nowMs % 60_000) + Math.floor(random() * MINUTE_JITTER_MS);
  return Math.max(
    1,
    retryAfterMs !== undefined && retryAfterMs > 0 ? Math.min(retryAfterMs, toNextMinute) : toNextMinute,
  );
}

/**
 * How long to wait after `attempt` (1-based) failed with `err`, or undefined when it must not be
 * retried (not retryable, or a Retry-After longer than the policy honours).
 */
export function retryDelayMs(
  err: unknown,
  attempt: number,
  policy: Partial<RetryPolicy> = {},
  now: number = Date.now(),
): number | undefined {
  const p = { ...DEFAULT_RETRY_POLICY, ...policy };
  if (!isRetryable(err)) return undefined;
  const retryAfterMs = upstreamWaitMs(err, now, p.random);
  if (retryAfterMs !== undefined) {
    return retryAfterMs <= p.maxRetryAfterMs ? retryAfterMs : undefined;
  }
  // "Equal jitter": half the exponential step is fixed, half random, so waits grow but never bunch.
  const step = Math.min(p.maxDelayMs, p.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(step / 2 + p.random() * (step / 2));
}

async function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  await sleepFor(ms, undefined, signal ? { signal } : undefined);
}

/**
 * Runs `attempt(1)`, `attempt(2)`, … until one resolves, an error is not retryable, or the attempt
 * or time bound is reached; then throws the last error unchanged.
 */
export async function withRetries<T>(
  attempt: (n: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const { signal, onRetry, sleep = defaultSleep, now = Date.now, ...policy } = options;
  const p = { ...DEFAULT_RETRY_POLICY, ...policy };
  if (!Number.isInteger(p.maxAttempts) || p.maxAttempts < 1) {
    throw new QuotaGuardError('QG_INVALID_ARGUMENT', 'maxAttempts: must be an integer >= 1', {
      field: 'maxAttempts',
    });
  }
  const started = now();
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (n >= p.maxAttempts) throw err;
      const delayMs = retryDelayMs(err, n, p, now());
      if (delayMs === undefined) throw err;
      if (now() - started + delayMs > p.maxTotalMs) throw err;
      if (signal?.aborted) throw err;
      onRetry?.({ attempt: n, delayMs, error: err });
      try {
        await sleep(delayMs, signal);
      } catch {
        throw err;
      }
    }
  }
}
