/**
 * Turning what came back from the upstream (an HTTP answer or a transport failure) into an
 * `UpstreamError` with a stable code and the right `reached`.
 *
 * HTTP answers: Google's error model, the same for every Google API, is read by
 * src/outcome/google.ts; this file adds what only YouTube's answers mean (a region without a
 * chart). See docs/upstream.md for the shapes and where they were recorded.
 *
 * Transport failures: 'never' only when we can prove the request was not written: the failure
 * came out of connection establishment (refused, DNS, TLS handshake, connect timeout: the client
 * tags those errors in its connector), or the request was refused before it was dispatched (pool
 * closed, already aborted). Everything else (reset, headers or body timeout, a half-read body) may
 * have been received and charged: 'maybe'.
 */
// Registers the application's error codes, which this module throws.
import '../errors.js';
import { type Reached, UpstreamError } from '../../outcome/errors.js';
import {
  type GoogleErrorFacts,
  googleErrorFromResponse,
  type HeadersLike,
  type RefinedCode,
} from '../../outcome/google.js';
import { redactText } from '../../outcome/redact.js';

export { parseRetryAfter } from '../../outcome/google.js';

export interface CallContext {
  /** API method name, e.g. 'videos.list'. */
  method: string;
  /** The request URL, already redacted. */
  url: string;
  /** The API key, only so that it can be scrubbed from foreign text. */
  secret: string;
}

/** Codes undici uses when it refused a request before dispatching it. */
const NOT_DISPATCHED = new Set(['UND_ERR_DESTROYED', 'UND_ERR_CLOSED', 'UND_ERR_INVALID_ARG']);

/**
 * YouTube's own 4xx reasons: a configured region the upstream has no chart for
 * (`videoChartNotFound`, or a reason naming `regionCode`). That region's job stops, the others run.
 */
export function youtubeRefine(_status: number, facts: GoogleErrorFacts): RefinedCode | undefined {
  const region = facts.reasons.find((r) => r === 'videoChartNotFound' || /regioncode/i.test(r));
  return region === undefined ? undefined : { code: 'QG_UPSTREAM_REGION_UNSUPPORTED', reason: region };
}

/**
 * An error for a non-2xx HTTP answer: Google's error model (src/outcome/google.ts) with YouTube's
 * region reasons. The upstream answered, so `reached` is 'yes'.
 */
export function errorFromResponse(
  status: number,
  headers: HeadersLike,
  body: string,
  ctx: CallContext,
): UpstreamError {
  return googleErrorFromResponse(status, headers, body, ctx, { refine: youtubeRefine });
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
