/**
 * Turning what came back from the upstream (an HTTP answer or a transport failure) into an
 * `UpstreamError` with a stable code and the right `reached`.
 *
 * HTTP answers: the reason in Google's envelope (`error.errors[0].reason`, or an ErrorInfo reason in
 * `error.details`) decides first, the status second.
 *
 * Transport failures: 'never' only when we can prove the request was not written: the failure
 * came out of connection establishment (refused, DNS, TLS handshake, connect timeout: the client
 * tags those errors in its connector), or the request was refused before it was dispatched (pool
 * closed, already aborted). Everything else (reset, headers or body timeout, a half-read body) may
 * have been received and charged: 'maybe'.
 */
import type { ErrorCode } from '../errors.js';
import { type Reached, UpstreamError } from './errors.js';
import { redactText } from './redact.js';
import { GoogleErrorEnvelopeSchema } from './schemas.js';

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

function reasonsOf(body: string): { reasons: string[]; message?: string } {
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
  return e.message === undefined ? { reasons } : { reasons, message: e.message };
}

/** An error for a non-2xx HTTP answer. The upstream answered, so `reached` is 'yes'. */
export function errorFromResponse(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  body: string,
  ctx: CallContext,
): UpstreamError {
  const { reasons, message } = reasonsOf(body);
  const has = (set: Set<string>) => reasons.find((r) => set.has(r));
  let code: ErrorCode;
  let reason = reasons[0];
  const quota = has(QUOTA_REASONS);
  const rate = has(RATE_REASONS);
  const key = has(KEY_REASONS);
  if (quota) {
    code = 'QG_UPSTREAM_QUOTA_EXCEEDED';
    reason = quota;
  } else if (rate || status === 429) {
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
  } else if (status >= 400) {
    code = 'QG_UPSTREAM_BAD_REQUEST';
  } else {
    code = 'QG_UPSTREAM_BAD_RESPONSE';
  }
  const retryAfterMs = parseRetryAfter(headers['retry-after']);
  const text = cleanMessage(message ?? `HTTP ${status}`, ctx.secret);
  return new UpstreamError(code, `${ctx.method}: ${reason ?? `HTTP ${status}`} (${status}): ${text}`, {
    reached: 'yes',
    status,
    ...(reason === undefined ? {} : { reason }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
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
