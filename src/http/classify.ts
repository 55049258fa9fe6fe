/**
 * What an HTTP answer means for the budget, for any client: charged and handed back, a per-day
 * exhaustion (block the bucket until the upstream's reset), a short rate limit (wait for the next
 * minute, once), a server error (charged, retried when safe), or not charged at all (a key the
 * upstream could attribute to no project). `googleClassifier` reads Google's error model (the
 * envelope, ErrorInfo reasons, `quota_limit` metadata, Retry-After), the same reading the YouTube
 * client's errors come from; another upstream passes its own `classify`.
 */
import { UpstreamError, type UpstreamQuota } from '../outcome/errors.js';
import { googleErrorFromResponse, parseRetryAfter } from '../outcome/google.js';
import { perMinuteWaitMs } from '../outcome/retry.js';

/** An answer to classify: called for every status ≥ 400 (and for none below). */
export interface Answer {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string | string[] | undefined>;
  /** The body's text (at most the size limit). */
  body: string;
  /** The HTTP method of the request. */
  method: string;
  /** The request URL (to tell endpoints apart; never log it: it may hold a key). */
  url: string;
}

export type Verdict =
  /** Charged; the answer goes back to the caller as it is. */
  | { kind: 'answer' }
  /** A daily (or longer) quota is used up: block the bucket until `until` (default: the upstream's next reset). */
  | { kind: 'exhausted'; until?: number; reason?: string; quota?: UpstreamQuota }
  /** A short limit (per minute, per user): wait until the next minute boundary (or `retryAfterMs`), retry once. */
  | { kind: 'rate-limited'; retryAfterMs?: number; reason?: string; quota?: UpstreamQuota }
  /** The upstream failed (5xx): charged, retried when the request is safe to repeat. */
  | { kind: 'server-error'; retryAfterMs?: number }
  /** The upstream charged no project (e.g. it rejected the key): refunded, the answer goes back. */
  | { kind: 'not-charged' };

export type Classifier = (answer: Answer) => Verdict | Promise<Verdict>;

/** Google's error model (every Google API answers errors in the same envelope). */
export const googleClassifier: Classifier = (a) => {
  if (a.status < 400) return { kind: 'answer' };
  const e = googleErrorFromResponse(a.status, a.headers, a.body, { method: a.method });
  const named = {
    ...(e.reason !== undefined ? { reason: e.reason } : {}),
    ...(e.quota !== undefined ? { quota: e.quota } : {}),
  };
  switch (e.code) {
    case 'QG_UPSTREAM_QUOTA_EXCEEDED':
      return { kind: 'exhausted', ...named };
    case 'QG_UPSTREAM_RATE_LIMITED':
      return {
        kind: 'rate-limited',
        ...named,
        ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
      };
    case 'QG_UPSTREAM_SERVER_ERROR':
      return {
        kind: 'server-error',
        ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
      };
    case 'QG_UPSTREAM_KEY_INVALID':
      return { kind: 'not-charged' };
    default:
      return { kind: 'answer' };
  }
};

/**
 * The wait an answer asks for: the verdict's own, else the answer's Retry-After header (seconds or
 * an HTTP date), so that a classifier of one's own need not read it.
 */
export function askedWaitMs(
  verdict: { retryAfterMs?: number },
  headers: Answer['headers'],
  nowMs = Date.now(),
): number | undefined {
  return verdict.retryAfterMs ?? parseRetryAfter(headers['retry-after'], nowMs);
}

/**
 * A `rate-limited` verdict as the error `guard.call` acts on, for the fetch and the interceptor
 * alike: wait until the next minute boundary (plus jitter), or sooner when the answer asked for less.
 */
export function rateLimitedError(
  verdict: Extract<Verdict, { kind: 'rate-limited' }>,
  answer: Pick<Answer, 'status' | 'headers' | 'method'>,
  random?: () => number,
): UpstreamError {
  const now = Date.now();
  return new UpstreamError(
    'QG_UPSTREAM_RATE_LIMITED',
    `${answer.method}: ${verdict.reason ?? 'rate limited'} (${answer.status})`,
    {
      reached: 'yes',
      status: answer.status,
      retryAfterMs: perMinuteWaitMs(now, askedWaitMs(verdict, answer.headers, now), random),
      ...(verdict.reason !== undefined ? { reason: verdict.reason } : {}),
      ...(verdict.quota !== undefined ? { quota: verdict.quota } : {}),
    },
  );
}
