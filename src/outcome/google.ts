/**
 * Google's error model, for any Google API: the JSON envelope every one of them answers an error
 * with (`error.errors[].reason`, `error.status`, `error.details[]` with ErrorInfo, QuotaFailure and
 * RetryInfo), the quota limit an answer names (ErrorInfo `metadata.quota_limit` / `quota_metric` /
 * `quota_unit` / `quota_location`), Retry-After, and one function that turns an HTTP answer
 * (status, headers, body text) into an `UpstreamError` with a stable code.
 *
 * What the body says decides first, the HTTP status second. A client adds what only its API
 * means (YouTube's region reasons) through `refine`. See docs/upstream.md for the shapes and where
 * they were recorded.
 */
import * as z from 'zod/mini';
import '../zod-mini.js';
import type { ErrorCode } from '../errors.js';
import { UpstreamError, type UpstreamQuota } from './errors.js';
import { redactText } from './redact.js';

/** One `details[]` entry of Google's error envelope: ErrorInfo, QuotaFailure, RetryInfo, Help, … (lenient). */
export const GoogleErrorDetailSchema = z.looseObject({
  '@type': z.optional(z.string()),
  /** ErrorInfo: e.g. RATE_LIMIT_EXCEEDED, API_KEY_INVALID. */
  reason: z.optional(z.string()),
  domain: z.optional(z.string()),
  /** ErrorInfo: quota_metric, quota_limit, quota_unit, quota_location, quota_limit_value, service, … */
  metadata: z.optional(z.record(z.string(), z.unknown())),
  /** QuotaFailure: one entry per limit broken. */
  violations: z.optional(
    z.array(
      z.looseObject({
        subject: z.optional(z.string()),
        description: z.optional(z.string()),
        quotaMetric: z.optional(z.string()),
        quotaId: z.optional(z.string()),
      }),
    ),
  ),
  /** RetryInfo: how long to wait, as a protobuf Duration in JSON (`"30s"`, `"1.5s"`). */
  retryDelay: z.optional(z.unknown()),
});

/** Google's error envelope. Lenient: only what the classification reads is checked. */
export const GoogleErrorEnvelopeSchema = z.object({
  error: z.object({
    code: z.optional(z.number().check(z.int())),
    message: z.optional(z.string()),
    /** The google.rpc status name, e.g. RESOURCE_EXHAUSTED, INVALID_ARGUMENT. */
    status: z.optional(z.string()),
    errors: z.optional(
      z.array(
        z.looseObject({
          message: z.optional(z.string()),
          domain: z.optional(z.string()),
          reason: z.optional(z.string()),
        }),
      ),
    ),
    details: z.optional(z.array(GoogleErrorDetailSchema)),
  }),
});

export type GoogleErrorEnvelope = z.infer<typeof GoogleErrorEnvelopeSchema>;
export type GoogleErrorDetail = z.infer<typeof GoogleErrorDetailSchema>;

/** Headers as undici's `request` gives them (a record) or as `fetch` does (a `Headers`). */
export type HeadersLike =
  | Record<string, string | string[] | undefined>
  | { get(name: string): string | null };

/** What a Google error answer says, read from its body. */
export interface GoogleErrorFacts {
  /** Every reason named: `errors[].reason` then ErrorInfo `reason`s, in order. */
  reasons: string[];
  /** The first ErrorInfo's domain, e.g. `googleapis.com`, `youtube.quota`. */
  domain?: string;
  message?: string;
  /** The google.rpc status name, e.g. RESOURCE_EXHAUSTED. */
  rpcStatus?: string;
  quota?: UpstreamQuota;
  /** A wait the body asks for: a RetryInfo `retryDelay`, or "try again in 30 seconds" in its text. */
  retryAfterMs?: number;
}

/** Who made the call, for the error's message; `secret` is scrubbed from any text quoted. */
export interface GoogleCallContext {
  /** API method name, e.g. 'videos.list'. */
  method?: string;
  /** The request URL, already redacted. */
  url?: string;
  /** The API key, only so that it can be scrubbed from foreign text. */
  secret?: string;
}

/** What a client's `refine` may decide for a 4xx the generic rules would call a bad request. */
export interface RefinedCode {
  code: ErrorCode;
  reason?: string;
}

const QUOTA_REASONS = new Set(['quotaExceeded', 'dailyLimitExceeded', 'dailyLimitExceededUnreg']);
const RATE_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'RATE_LIMIT_EXCEEDED']);
const KEY_REASONS = new Set(['keyInvalid', 'keyExpired', 'API_KEY_INVALID', 'API_KEY_EXPIRED']);

const MAX_MESSAGE = 300;
/** The longest body wait read from text: a page asking for more is not believed. */
const MAX_TEXT_WAIT_MS = 3_600_000;

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const v = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Retry-After in ms from delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(
  value: string | string[] | undefined | null,
  nowMs = Date.now(),
): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v === null || v.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/** A protobuf Duration as JSON (`"30s"`, `"0.5s"`) or `{ seconds, nanos }`, in ms. */
function durationMs(v: unknown): number | undefined {
  if (typeof v === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)s\s*$/.exec(v);
    return m ? Math.round(Number(m[1]) * 1000) : undefined;
  }
  if (typeof v === 'object' && v !== null) {
    const { seconds, nanos } = v as { seconds?: unknown; nanos?: unknown };
    const s = typeof seconds === 'string' || typeof seconds === 'number' ? Number(seconds) : 0;
    const n = typeof nanos === 'number' ? nanos : 0;
    const ms = Math.round(s * 1000 + n / 1e6);
    return Number.isFinite(ms) && ms > 0 ? ms : undefined;
  }
  return undefined;
}

const TRY_AGAIN = /try again (?:in|after) (\d{1,5}) ?(seconds?|secs?|s|minutes?|mins?)\b/i;

/**
 * A wait a page asks for in words: "Please try again in 30 seconds", "try again in 2 minutes"
 * (Google's front-end error pages, HTML or plain). Undefined when it asks for none.
 */
export function retryAfterFromText(text: string): number | undefined {
  const m = TRY_AGAIN.exec(text.replace(/<[^>]*>/g, ' '));
  if (!m) return undefined;
  const n = Number(m[1]);
  const ms = /^m/i.test(m[2]!) ? n * 60_000 : n * 1000;
  return ms > 0 && ms <= MAX_TEXT_WAIT_MS ? ms : undefined;
}

/** Plain text of the upstream's message: tags stripped, whitespace folded, key scrubbed, bounded. */
function cleanMessage(text: string, secret: string | undefined): string {
  const plain = text
    .replace(/<[^>]*>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  const safe = redactText(plain, secret);
  return safe.length > MAX_MESSAGE ? `${safe.slice(0, MAX_MESSAGE)}…` : safe;
}

const DAY = /PerDay|per day|\/d\//i;
const SHORT =
  /PerMinute|PerSecond|PerUser|Per100Seconds|per minute|per second|per user|per 100 seconds|\/min\/|\/s\/|\{user\}/i;
const INTERVALS: [RegExp, NonNullable<UpstreamQuota['interval']>][] = [
  [/Per100Seconds|per 100 seconds|\/100s\//i, '100 seconds'],
  [/PerMinute|per minute|\/min\//i, 'minute'],
  [/PerSecond|per second|\/s\//i, 'second'],
  [/PerDay|per day|\/d\//i, 'day'],
];
/** "Quota exceeded for quota metric 'Search Queries' and limit 'Search Queries per day' of service …" */
const MESSAGE_QUOTA = /quota metric '([^']+)' and limit '([^']+)'/i;

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/**
 * The limit an answer names: ErrorInfo metadata first, then a QuotaFailure violation, then the
 * message ("quota metric '…' and limit '…'", or "per day" alone when there are no details).
 */
function quotaOf(e: GoogleErrorEnvelope['error']): UpstreamQuota | undefined {
  const details = e.details ?? [];
  const meta = details.find(
    (d) => d.metadata?.['quota_metric'] !== undefined || d.metadata?.['quota_limit'] !== undefined,
  )?.metadata;
  const violation = details.flatMap((d) => d.violations ?? []).find((v) => v.quotaMetric ?? v.quotaId);
  const fromMessage = MESSAGE_QUOTA.exec(e.message ?? '');
  const metric = text(meta?.['quota_metric']) ?? text(violation?.quotaMetric) ?? fromMessage?.[1];
  const limit = text(meta?.['quota_limit']) ?? text(violation?.quotaId) ?? fromMessage?.[2];
  const unit = text(meta?.['quota_unit']);
  const location = text(meta?.['quota_location']);
  const named = [limit, unit].filter((x): x is string => x !== undefined).join(' ');
  // Without details, older answers say only "… per day" in the message.
  const evidence = named !== '' ? named : details.length === 0 ? (e.message ?? '') : '';
  if (metric === undefined && limit === undefined && unit === undefined && !DAY.test(evidence)) {
    return undefined;
  }
  const period = SHORT.test(evidence) ? 'short' : DAY.test(evidence) ? 'day' : 'unknown';
  const interval = INTERVALS.find(([re]) => re.test(evidence))?.[1];
  return {
    period,
    ...(interval === undefined ? {} : { interval }),
    ...(metric === undefined ? {} : { metric }),
    ...(limit === undefined ? {} : { limit }),
    ...(unit === undefined ? {} : { unit }),
    ...(location === undefined ? {} : { location }),
  };
}

/** What an error body says; a body that is not Google's envelope says nothing but its text's wait. */
export function readGoogleError(body: string): GoogleErrorFacts {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    const wait = retryAfterFromText(body.slice(0, 64 * 1024));
    return { reasons: [], ...(wait === undefined ? {} : { retryAfterMs: wait }) };
  }
  const parsed = GoogleErrorEnvelopeSchema.safeParse(json);
  if (!parsed.success) return { reasons: [] };
  const e = parsed.data.error;
  const reasons = [
    ...(e.errors ?? []).map((x) => x.reason),
    ...(e.details ?? []).map((x) => x.reason),
  ].filter((r): r is string => typeof r === 'string' && r.length > 0);
  const domain = (e.details ?? []).find((d) => text(d.domain) !== undefined)?.domain;
  const quota = quotaOf(e);
  const retryInfo = (e.details ?? [])
    .map((d) => durationMs(d.retryDelay))
    .find((ms): ms is number => ms !== undefined);
  const wait = retryInfo ?? retryAfterFromText(e.message ?? '');
  return {
    reasons,
    ...(domain === undefined ? {} : { domain }),
    ...(e.message === undefined ? {} : { message: e.message }),
    ...(e.status === undefined ? {} : { rpcStatus: e.status }),
    ...(quota === undefined ? {} : { quota }),
    ...(wait === undefined ? {} : { retryAfterMs: wait }),
  };
}

/**
 * The code for a non-2xx answer.
 *
 * Quota first: `quotaExceeded` / `dailyLimitExceeded`, and any rate-limit answer (429,
 * `rateLimitExceeded`, `RESOURCE_EXHAUSTED`, ErrorInfo `RATE_LIMIT_EXCEEDED`) whose limit is a
 * per-day one, are `QG_UPSTREAM_QUOTA_EXCEEDED`: the bucket is gone until the upstream's midnight.
 * A per-minute or per-user limit, or a rate limit that names no limit, is `QG_UPSTREAM_RATE_LIMITED`.
 */
export function classifyGoogleError(
  status: number,
  facts: GoogleErrorFacts,
  refine?: (status: number, facts: GoogleErrorFacts) => RefinedCode | undefined,
): RefinedCode {
  const { reasons, rpcStatus, quota } = facts;
  const has = (set: Set<string>) => reasons.find((r) => set.has(r));
  const exhausted = has(QUOTA_REASONS);
  const rate = has(RATE_REASONS);
  const key = has(KEY_REASONS);
  const first = reasons[0];
  const rateLike = rate !== undefined || status === 429 || rpcStatus === 'RESOURCE_EXHAUSTED';
  const withReason = (code: ErrorCode, reason: string | undefined): RefinedCode =>
    reason === undefined ? { code } : { code, reason };
  if (exhausted) return { code: 'QG_UPSTREAM_QUOTA_EXCEEDED', reason: exhausted };
  if (rateLike) {
    const code = quota?.period === 'day' ? 'QG_UPSTREAM_QUOTA_EXCEEDED' : 'QG_UPSTREAM_RATE_LIMITED';
    return { code, reason: rate ?? first ?? 'rateLimitExceeded' };
  }
  if (key) return { code: 'QG_UPSTREAM_KEY_INVALID', reason: key };
  if (status === 401 || status === 403) return withReason('QG_UPSTREAM_FORBIDDEN', first);
  const refined = status >= 400 && status < 500 ? refine?.(status, facts) : undefined;
  if (refined) return refined;
  if (status === 404) return withReason('QG_UPSTREAM_NOT_FOUND', first);
  if (status >= 500) return withReason('QG_UPSTREAM_SERVER_ERROR', first);
  if (status >= 400) return withReason('QG_UPSTREAM_BAD_REQUEST', first);
  return withReason('QG_UPSTREAM_BAD_RESPONSE', first);
}

export interface GoogleErrorOptions {
  /** A client's own reading of a 4xx the generic rules would call a bad request. */
  refine?: (status: number, facts: GoogleErrorFacts) => RefinedCode | undefined;
  /** For an HTTP-date Retry-After; default `Date.now()`. */
  nowMs?: number;
}

/**
 * An error for a non-2xx HTTP answer of any Google API, from what a caller has: the status, the
 * headers and the body's text. The upstream answered, so `reached` is 'yes'. The wait it asks for
 * is the Retry-After header's, else the body's (RetryInfo, or "try again in N seconds" on a page);
 * a quota answer's `quota.interval` tells a per-minute limit from a per-day one.
 */
export function googleErrorFromResponse(
  status: number,
  headers: HeadersLike,
  body: string,
  ctx: GoogleCallContext = {},
  options: GoogleErrorOptions = {},
): UpstreamError {
  const facts = readGoogleError(body);
  const { code, reason } = classifyGoogleError(status, facts, options.refine);
  const retryAfterMs = parseRetryAfter(header(headers, 'retry-after'), options.nowMs) ?? facts.retryAfterMs;
  const plain = cleanMessage(facts.message ?? `HTTP ${status}`, ctx.secret);
  const aboutQuota = code === 'QG_UPSTREAM_QUOTA_EXCEEDED' || code === 'QG_UPSTREAM_RATE_LIMITED';
  const prefix = ctx.method === undefined ? '' : `${ctx.method}: `;
  return new UpstreamError(code, `${prefix}${reason ?? `HTTP ${status}`} (${status}): ${plain}`, {
    reached: 'yes',
    status,
    ...(reason === undefined ? {} : { reason }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(aboutQuota && facts.quota !== undefined ? { quota: facts.quota } : {}),
    ...(ctx.method === undefined ? {} : { method: ctx.method }),
    ...(ctx.url === undefined ? {} : { url: ctx.url }),
  });
}
