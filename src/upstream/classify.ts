/**
 * Turning what came back from the upstream (an HTTP answer or a transport failure) into an
 * `UpstreamError` with a stable code and the right `reached`.
 *
 * HTTP answers: what the body says decides first — the reasons in Google's envelope
 * (`error.errors[].reason`, ErrorInfo reasons in `error.details`), the rpc `status` and the quota
 * limit it names (ErrorInfo `metadata.quota_limit`/`quota_unit`, QuotaFailure, the message) — and
 * the HTTP status second. See docs/upstream.md for the shapes and where they were recorded.
 *
 * Transport failures: 'never' only when we can prove the request was not written: the failure
 * came out of connection establishment (refused, DNS, TLS handshake, connect timeout: the client
 * tags those errors in its connector), or the request was refused before it was dispatched (pool
 * closed, already aborted). Everything else (reset, headers or body timeout, a half-read body) may
 * have been received and charged: 'maybe'.
 */
import type { ErrorCode } from '../errors.js';
import { type Reached, UpstreamError, type UpstreamQuota } from '../outcome/errors.js';
import { redactText } from './redact.js';
import { type GoogleErrorEnvelope, GoogleErrorEnvelopeSchema } from './schemas.js';

export interface CallContext {
  /** API method name, e.g. 'videos.list'. */
  method: string;
  /** The request URL, already redacted. */
  url: string;
  /** The API key, only so that it can be scrubbed from foreign text. */
  secret: string;
}

const QUOTA_REASONS = new Set(['quotaExceeded', 'dailyLimitExceeded', 'dailyLimitExceededUnreg']);
const RATE_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'RATE_LIMIT_EXCEEDED']);
const KEY_REASONS = new Set(['keyInvalid', 'keyExpired', 'API_KEY_INVALID', 'API_KEY_EXPIRED']);
/** Codes undici uses when it refused a request before dispatching it. */
const NOT_DISPATCHED = new Set(['UND_ERR_DESTROYED', 'UND_ERR_CLOSED', 'UND_ERR_INVALID_ARG']);

const MAX_MESSAGE = 300;

/** Retry-After in ms from delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(
  value: string | string[] | undefined,
  nowMs = Date.now(),
): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/** Plain text of the upstream's message: tags stripped, whitespace folded, key scrubbed, bounded. */
function cleanMessage(text: string, secret: string): string {
  const plain = text
    .replace(/<[^>]*>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  const safe = redactText(plain, secret);
  return safe.length > MAX_MESSAGE ? `${safe.slice(0, MAX_MESSAGE)}…` : safe;
}

interface Envelope {
  reasons: string[];
  message?: string;
  /** The google.rpc status name, e.g. RESOURCE_EXHAUSTED. */
  rpcStatus?: string;
  quota?: UpstreamQuota;
}

const DAY = /PerDay|per day|\/d\//i;
const SHORT =
  /PerMinute|PerSecond|PerUser|Per100Seconds|per minute|per second|per user|per 100 seconds|\/min\/|\/s\/|\{user\}/i;
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
  const named = [limit, unit].filter((x): x is string => x !== undefined).join(' ');
  // Without details, older answers say only "… per day" in the message.
  const evidence = named !== '' ? named : details.length === 0 ? (e.message ?? '') : '';
  if (metric === undefined && limit === undefined && unit === undefined && !DAY.test(evidence)) {
    return undefined;
  }
  const period = SHORT.test(evidence) ? 'short' : DAY.test(evidence) ? 'day' : 'unknown';
  return {
    period,
    ...(metric === undefined ? {} : { metric }),
    ...(limit === undefined ? {} : { limit }),
    ...(unit === undefined ? {} : { unit }),
  };
}

function readEnvelope(body: string): Envelope {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { reasons: [] };
  }
  const parsed = GoogleErrorEnvelopeSchema.safeParse(json);
  if (!parsed.success) return { reasons: [] };
  const e = parsed.data.error;
  const reasons = [
    ...(e.errors ?? []).map((x) => x.reason),
    ...(e.details ?? []).map((x) => x.reason),
  ].filter((r): r is string => typeof r === 'string' && r.length > 0);
  const quota = quotaOf(e);
  return {
    reasons,
    ...(e.message === undefined ? {} : { message: e.message }),
    ...(e.status === undefined ? {} : { rpcStatus: e.status }),
    ...(quota === undefined ? {} : { quota }),
  };
}

/**
 * An error for a non-2xx HTTP answer. The upstream answered, so `reached` is 'yes'.
 *
 * Quota first: `quotaExceeded` / `dailyLimitExceeded`, and any rate-limit answer (429,
 * `rateLimitExceeded`, `RESOURCE_EXHAUSTED`, ErrorInfo `RATE_LIMIT_EXCEEDED`) whose limit is a
 * per-day one, are `QG_UPSTREAM_QUOTA_EXCEEDED`: the bucket is gone until the upstream's midnight.
 * A per-minute or per-user limit, or a rate limit that names no limit, is `QG_UPSTREAM_RATE_LIMITED`.
 */
export function errorFromResponse(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  body: string,
  ctx: CallContext,
): UpstreamError {
  const { reasons, message, rpcStatus, quota } = readEnvelope(body);
  const has = (set: Set<string>) => reasons.find((r) => set.has(r));
  let code: ErrorCode;
  let reason = reasons[0];
  const exhausted = has(QUOTA_REASONS);
  const rate = has(RATE_REASONS);
  const key = has(KEY_REASONS);
  const rateLike = rate !== undefined || status === 429 || rpcStatus === 'RESOURCE_EXHAUSTED';
  if (exhausted) {
    code = 'QG_UPSTREAM_QUOTA_EXCEEDED';
    reason = exhausted;
  } else if (rateLike && quota?.period === 'day') {
    code = 'QG_UPSTREAM_QUOTA_EXCEEDED';
    reason = rate ?? reason ?? 'rateLimitExceeded';
  } else if (rateLike) {
    code = 'QG_UPSTREAM_RATE_LIMITED';
    reason = rate ?? reason ?? 'rateLimitExceeded';
  } else if (key) {
    code = 'QG_UPSTREAM_KEY_INVALID';
    reason = key;
  } else if (status === 401 || status === 403) {
    code = 'QG_UPSTREAM_FORBIDDEN';
  } else if (status === 404) {
    code = 'QG_UPSTREAM_NOT_FOUND';
  } else if (status >= 500) {
    code = 'QG_UPSTREAM_SERVER_ERROR';
  } else if (status >= 400 && reasons.some((r) => /regioncode/i.test(r))) {
    // A configured region the upstream has no chart for: that region's job stops, the others run.
    code = 'QG_UPSTREAM_REGION_UNSUPPORTED';
    reason = reasons.find((r) => /regioncode/i.test(r));
  } else if (status >= 400) {
    code = 'QG_UPSTREAM_BAD_REQUEST';
  } else {
    code = 'QG_UPSTREAM_BAD_RESPONSE';
  }
  const retryAfterMs = parseRetryAfter(headers['retry-after']);
  const text = cleanMessage(message ?? `HTTP ${status}`, ctx.secret);
  const aboutQuota = code === 'QG_UPSTREAM_QUOTA_EXCEEDED' || code === 'QG_UPSTREAM_RATE_LIMITED';
  return new UpstreamError(code, `${ctx.method}: ${reason ?? `HTTP ${status}`} (${status}): ${text}`, {
    reached: 'yes',
    status,
    ...(reason === undefined ? {} : { reason }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(aboutQuota && quota !== undefined ? { quota } : {}),
    method: ctx.method,
    url: ctx.url,
  });
}

/** A 2xx answer whose body is not what the method returns. */
export function badResponse(
  ctx: CallContext,
  status: number,
  problem: string,
  issues?: string[],
): UpstreamError {
  return new UpstreamError('QG_UPSTREAM_BAD_RESPONSE', `${ctx.method}: unexpected response: ${problem}`, {
    reached: 'yes',
    status,
    method: ctx.method,
    url: ctx.url,
    ...(issues === undefined ? {} : { details: { issues } }),
  });
}

/**
 * A scrubbed stand-in for a foreign error (undici's, node's): same name, code and message with the
 * key removed, and none of its own properties (which may hold the request path and its query).
 */
export function scrubbedCause(e: unknown, secret: string, depth = 0): Error {
  const src = e as { name?: unknown; message?: unknown; code?: unknown; cause?: unknown } | null;
  const message = typeof src?.message === 'string' ? src.message : String(e);
  const cause =
    depth < 3 && src?.cause !== undefined && src.cause !== null
      ? { cause: scrubbedCause(src.cause, secret, depth + 1) }
      : undefined;
  const out = new Error(redactText(message, secret), cause) as Error & { code?: string };
  if (typeof src?.name === 'string') out.name = src.name;
  if (typeof src?.code === 'string') out.code = src.code;
  return out;
}

export interface TransportFacts {
  /** The error came out of connection establishment (tagged by the client's connector). */
  connectFailed: boolean;
  /** The call was aborted before it was handed to the pool. */
  abortedBeforeDispatch: boolean;
}

/** An error for a failure below HTTP. */
export function errorFromTransport(e: unknown, facts: TransportFacts, ctx: CallContext): UpstreamError {
  const code = (e as { code?: unknown } | null)?.code;
  const never =
    facts.connectFailed ||
    facts.abortedBeforeDispatch ||
    (typeof code === 'string' && NOT_DISPATCHED.has(code));
  const reached: Reached = never ? 'never' : 'maybe';
  const what = never ? 'request not sent' : 'no complete answer (the request may have been received)';
  const cause = scrubbedCause(e, ctx.secret);
  const label = typeof code === 'string' ? code : cause.name;
  return new UpstreamError('QG_UPSTREAM_TRANSPORT', `${ctx.method}: ${what}: ${cause.message} (${label})`, {
    reached,
    method: ctx.method,
    url: ctx.url,
    cause,
    ...(typeof code === 'string' ? { details: { transportCode: code } } : {}),
  });
}
