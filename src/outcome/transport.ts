/**
 * What any client of an HTTP upstream needs below the answer's meaning: reading a body no larger
 * than a cap, and turning a transport failure, an outlived deadline or an oversized body into an
 * `UpstreamError` with the right `reached`. The YouTube client (src/youtube/upstream/client.ts) and the
 * upstream count reader (src/reconcile/) share these, so both time out, cap and classify alike.
 *
 * Transport failures: 'never' only when the request provably was not written: the failure came
 * out of connection establishment (refused, DNS, TLS handshake, connect timeout: a client tags
 * those errors in its connector), or the request was refused before it was dispatched (pool
 * closed, already aborted). Everything else (reset, headers or body timeout, a half-read body) may
 * have been received: 'maybe'.
 *
 * undici is named here by type only: the client that opens a pool loads it.
 */
import type { buildConnector, Dispatcher } from 'undici';
import { type Reached, UpstreamError } from './errors.js';
import { redactText } from './redact.js';

/** Who made the call, for an error's message; `secret` is scrubbed from any text quoted. */
export interface TransportContext {
  /** The method called, e.g. 'videos.list' or 'timeSeries.list'. */
  method: string;
  /** The request URL, already redacted. */
  url: string;
  /** A key or token, only so that it can be scrubbed from foreign text ('' when none). */
  secret: string;
  /** The settings an error names: default `upstream.deadline` and `upstream.maxResponseBytes`. */
  settings?: { deadline: string; maxResponseBytes: string };
}

const UPSTREAM_SETTINGS = { deadline: 'upstream.deadline', maxResponseBytes: 'upstream.maxResponseBytes' };

/** Codes undici uses when it refused a request before dispatching it. */
const NOT_DISPATCHED = new Set(['UND_ERR_DESTROYED', 'UND_ERR_CLOSED', 'UND_ERR_INVALID_ARG']);

/**
 * The body as text, or undefined once it passes `max` bytes: a declared Content-Length over it is
 * refused before a byte is read, and reading stops at the first chunk past it (the socket is
 * closed, never the whole answer buffered).
 */
export async function readBounded(
  body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown },
  headers: Record<string, string | string[] | undefined>,
  max: number,
  progress: (bytes: number) => void,
): Promise<string | undefined> {
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    body.destroy();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    progress(size);
    if (size > max) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/** The answer is larger than the client reads: sent, answered, charged. */
export function tooLargeError(
  ctx: TransportContext,
  status: number,
  bytesRead: number,
  max: number,
): UpstreamError {
  const setting = (ctx.settings ?? UPSTREAM_SETTINGS).maxResponseBytes;
  return new UpstreamError(
    'QG_UPSTREAM_TOO_LARGE',
    `${ctx.method}: the answer is larger than ${max} bytes (${setting}); reading stopped`,
    {
      reached: 'yes',
      status,
      method: ctx.method,
      url: ctx.url,
      details: { bytesRead, maxResponseBytes: max },
    },
  );
}

/** The whole request outlived its deadline: it may have been received, so it counts as charged. */
export function deadlineError(
  ctx: TransportContext,
  totalMs: number,
  answered: boolean,
  status: number,
  bytesRead: number,
): UpstreamError {
  const setting = (ctx.settings ?? UPSTREAM_SETTINGS).deadline;
  const when = answered ? `the answer was still arriving (${bytesRead} bytes)` : 'no answer yet';
  return new UpstreamError(
    'QG_UPSTREAM_DEADLINE',
    `${ctx.method}: no complete answer within ${totalMs} ms (${setting}): ${when}`,
    {
      reached: answered ? 'yes' : 'maybe',
      ...(answered ? { status } : {}),
      method: ctx.method,
      url: ctx.url,
      details: { deadlineMs: totalMs, bytesRead },
    },
  );
}

/**
 * A scrubbed stand-in for a foreign error (undici's, node's): same name, code and message with the
 * secret removed, and none of its own properties (which may hold the request path and its query).
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
export function errorFromTransport(e: unknown, facts: TransportFacts, ctx: TransportContext): UpstreamError {
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

/**
 * A connector that remembers the errors it failed with: an error that came out of connection
 * establishment proves the request was never written (`reached: 'never'`).
 */
export function rememberConnectFailures(base: buildConnector.connector): {
  connect: buildConnector.connector;
  failures: WeakSet<object>;
} {
  const failures = new WeakSet<object>();
  const connect: buildConnector.connector = (opts, callback) =>
    base(opts, (...args) => {
      const err = args[0];
      if (err) failures.add(err);
      callback(...args);
    });
  return { connect, failures };
}

export interface BoundedGet {
  pool: Pick<Dispatcher, 'request'>;
  /** Path and query, as the pool's origin takes it. */
  path: string;
  headers: Record<string, string>;
  /** The whole request, connect + headers + body (the deadline). */
  totalMs: number;
  /** The largest body read. */
  maxBytes: number;
  ctx: TransportContext;
  /** The pool's connector's failures (`rememberConnectFailures`). */
  connectFailures: WeakSet<object>;
  signal?: AbortSignal;
}

export interface BoundedAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * One GET under one deadline for connect, headers and body together, its body read up to a cap.
 * Any status is an answer; a transport failure, the deadline or a body over the cap rejects with
 * an `UpstreamError` (`QG_UPSTREAM_TRANSPORT`, `QG_UPSTREAM_DEADLINE`, `QG_UPSTREAM_TOO_LARGE`).
 */
export async function boundedGet(r: BoundedGet): Promise<BoundedAnswer> {
  const callerSignal = r.signal;
  const abortedBeforeDispatch = callerSignal?.aborted === true;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error('deadline')), r.totalMs);
  timer.unref();
  const signal = callerSignal ? AbortSignal.any([callerSignal, deadline.signal]) : deadline.signal;
  let status = 0;
  let answered = false;
  let bytesRead = 0;
  try {
    if (abortedBeforeDispatch) throw callerSignal?.reason ?? new Error('aborted');
    const res = await r.pool.request({ method: 'GET', path: r.path, headers: r.headers, signal });
    answered = true;
    status = res.statusCode;
    const text = await readBounded(res.body, res.headers, r.maxBytes, (n) => {
      bytesRead = n;
    });
    if (text === undefined) throw tooLargeError(r.ctx, status, bytesRead, r.maxBytes);
    return { status, headers: res.headers, text };
  } catch (e) {
    if (e instanceof UpstreamError) throw e;
    if (deadline.signal.aborted && callerSignal?.aborted !== true) {
      throw deadlineError(r.ctx, r.totalMs, answered, status, bytesRead);
    }
    const connectFailed = typeof e === 'object' && e !== null && r.connectFailures.has(e);
    throw errorFromTransport(e, { connectFailed, abortedBeforeDispatch }, r.ctx);
  } finally {
    clearTimeout(timer);
  }
}
