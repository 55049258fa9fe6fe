/**
 * `guardedFetch(guard, args, input, init?, options?)`: a `fetch` through the guard, with the outcomes
 * the YouTube client has. The spend comes before the request; a connection that never opened
 * (refused, DNS, TLS handshake, connect timeout) is refunded; a per-day exhaustion answer blocks the
 * bucket until the upstream's reset and returns the `Stop`; a per-minute answer is retried once at
 * the next minute boundary when that is within `maxSleep`, else it returns a `Stop` with that resume
 * time; a 5xx is charged (and retried once when safe). Only GET/HEAD, or what the caller marks
 * `idempotent`, is ever sent twice.
 */
import type { Guard } from '../guard/guard.js';
import type { CallResult, SpendArgs, SpendOutcome, Stop } from '../guard/types.js';
import { UpstreamError } from '../outcome/errors.js';
import {
  askedWaitMs,
  type Classifier,
  googleClassifier,
  rateLimitedError,
  type Verdict,
} from './classify.js';
import { neverOpened, transportError } from './transport.js';

export interface GuardedFetchOptions {
  /** The fetch to call (default: the global `fetch`). */
  fetch?: (input: FetchInput, init?: RequestInit) => Promise<Response>;
  /** What an answer with status ≥ 400 means (default: Google's error model). */
  classify?: Classifier;
  /** The whole request, body included, must finish within this (an expired one counts as sent). */
  timeoutMs?: number;
  /** A larger response body is refused (counted as sent): the body is read before the call returns. */
  maxBytes?: number;
  /** Safe to send twice although the method is not GET or HEAD (default: GET and HEAD only). */
  idempotent?: boolean;
  /** Longest wait for the budget or a per-minute limit (default: the config's maxSleep). */
  maxSleepMs?: number;
  /** Jitter source for the per-minute wait. */
  random?: () => number;
}

/** What the fetch needs of a guard (a `Guard`, or a run's handle on one). */
export type FetchGuard = Pick<Guard, 'call' | 'report'>;

/** What `fetch` takes as its first argument. */
export type FetchInput = string | URL | Request;

/** The most of an error body read to classify it when no `maxBytes` is given. */
const ERROR_BODY_LIMIT = 1 << 20;

/** A complete answer handed back through `guard.call` as an error (so that it is retried or refunded). */
class Answered extends UpstreamError {
  constructor(
    code: 'QG_UPSTREAM_SERVER_ERROR' | 'QG_UPSTREAM_KEY_INVALID',
    readonly response: Response,
    readonly spend: SpendOutcome,
    readonly attempt: number,
    retryAfterMs?: number,
  ) {
    super(code, `HTTP ${response.status}`, {
      reached: 'yes',
      status: response.status,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
}

/** Carries a Stop that `guard.report` already logged out of `guard.call`. */
class Reported extends Error {
  constructor(readonly stop: Stop) {
    super(stop.message);
  }
}

function methodOf(input: FetchInput, init?: RequestInit): string {
  const m =
    init?.method ?? (typeof Request !== 'undefined' && input instanceof Request ? input.method : 'GET');
  return m.toUpperCase();
}

function urlOf(input: FetchInput): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}

/** The body, at most `limit` bytes; a larger one is refused (it was sent, so it stays charged). */
async function readBody(res: Response, limit: number, signal: AbortSignal | undefined): Promise<Uint8Array> {
  const length = Number(res.headers.get('content-length') ?? Number.NaN);
  const tooLarge = () =>
    new UpstreamError('QG_UPSTREAM_BAD_RESPONSE', `response larger than maxBytes (${limit})`, {
      reached: 'yes',
      status: res.status,
    });
  if (length > limit) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!res.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    let r: Awaited<ReturnType<typeof reader.read>>;
    try {
      r = await reader.read();
    } catch (e) {
      throw transportError(e, { sent: true, deadline: signal?.aborted === true });
    }
    if (r.done) break;
    size += r.value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(r.value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** One request and what it means; throws what `guard.call` acts on. */
async function attempt(
  guard: FetchGuard,
  n: number,
  spend: SpendOutcome,
  input: FetchInput,
  init: RequestInit | undefined,
  options: GuardedFetchOptions,
): Promise<Response> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const deadline = options.timeoutMs !== undefined ? AbortSignal.timeout(options.timeoutMs) : undefined;
  const signal =
    deadline && init?.signal
      ? AbortSignal.any([deadline, init.signal])
      : (deadline ?? init?.signal ?? undefined);
  let res: Response;
  try {
    res = await (signal ? fetchImpl(input, { ...init, signal }) : fetchImpl(input, init));
  } catch (e) {
    if (init?.signal?.aborted) throw e; // the caller's own abort: theirs to handle
    throw transportError(e, { sent: !neverOpened(e), deadline: deadline?.aborted === true });
  }
  if (res.status < 400 && options.maxBytes === undefined) return res;
  const bytes = await readBody(res, options.maxBytes ?? ERROR_BODY_LIMIT, deadline);
  const copy = () =>
    new Response(res.status === 204 || res.status === 304 || bytes.byteLength === 0 ? null : bytes, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  if (res.status < 400) return copy();
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    headers[k] = v;
  });
  const method = methodOf(input, init);
  const verdict: Verdict = await (options.classify ?? googleClassifier)({
    status: res.status,
    headers,
    body: new TextDecoder().decode(bytes),
    method,
    url: urlOf(input),
  });
  switch (verdict.kind) {
    case 'answer':
      return copy();
    case 'exhausted': {
      const r = await guard.report(spend, {
        kind: 'exhausted',
        ...(verdict.until !== undefined ? { until: verdict.until } : {}),
        ...(verdict.reason !== undefined ? { reason: verdict.reason } : {}),
        ...(verdict.quota !== undefined ? { quota: verdict.quota } : {}),
      });
      if (r.kind === 'exhausted') throw new Reported(r.stop);
      return copy();
    }
    case 'rate-limited':
      throw rateLimitedError(verdict, { status: res.status, headers, method }, options.random);
    case 'server-error':
      throw new Answered('QG_UPSTREAM_SERVER_ERROR', copy(), spend, n, askedWaitMs(verdict, headers));
    case 'not-charged':
      throw new Answered('QG_UPSTREAM_KEY_INVALID', copy(), spend, n);
  }
}

/**
 * `fetch(input, init)` spent from `args`' budget. Resolves `{ ok: true, value: Response }` for any
 * answer the upstream gave (check `value.ok` as with fetch), or a `Stop` (a value: the budget, a
 * block or the upstream said stop; `exitCode` is what a job ends with). Throws an `UpstreamError`
 * when no answer came (`reached` says whether it was charged), as fetch throws.
 */
export async function guardedFetch(
  guard: FetchGuard,
  args: SpendArgs,
  input: FetchInput,
  init?: RequestInit,
  options: GuardedFetchOptions = {},
): Promise<CallResult<Response>> {
  const method = methodOf(input, init);
  const safe = options.idempotent ?? (method === 'GET' || method === 'HEAD');
  try {
    return await guard.call(args, ({ n, spend }) => attempt(guard, n, spend, input, init, options), {
      attempts: safe ? 2 : 1,
      ...(options.maxSleepMs !== undefined ? { maxSleepMs: options.maxSleepMs } : {}),
      ...(init?.signal ? { signal: init.signal } : {}),
    });
  } catch (e) {
    if (e instanceof Answered) return { ok: true, value: e.response, attempts: e.attempt, spend: e.spend };
    if (e instanceof Reported) return e.stop;
    throw e;
  }
}
