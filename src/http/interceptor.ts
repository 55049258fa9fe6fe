/**
 * `guardInterceptor(guard, { spend })`: the guard as an undici interceptor, composed with
 * `Dispatcher.compose(agent, guardInterceptor(…))` like undici's own retry, DNS and cache
 * interceptors. Each request whose `spend(opts)` names a budget is spent before it is dispatched;
 * the handler decides the outcome where the facts are:
 *
 * - an error before the request was started on a connection (refused, DNS, TLS handshake): the
 *   connection never opened, the spend is refunded and the error passed on;
 * - an answer below 400: passed on as it streams (charged);
 * - 400 and above: the body is held (up to `maxBytes`) and classified (Google's error model by
 *   default): a per-day exhaustion blocks the bucket until the upstream's reset and fails the
 *   request with a `GuardStoppedError` carrying the `Stop`; a per-minute limit fails it with a
 *   `Stop` whose resume time is the next minute boundary, or the answer's Retry-After when that is
 *   sooner, whoever classified it (compose undici's retry interceptor
 *   outside this one to retry: each retry is then spent); anything else is passed on, charged
 *   (refunded when the upstream charged no project).
 *
 * A request that the budget denies never reaches the dispatcher: it fails with `GuardStoppedError`.
 */
import { createRequire } from 'node:module';
import type { Dispatcher } from 'undici';
import { QuotaGuardError } from '../errors.js';
import type { Guard } from '../guard/guard.js';
import type { SpendArgs, SpendOutcome, Stop } from '../guard/types.js';
import type { UpstreamError } from '../outcome/errors.js';
import { type Classifier, googleClassifier, rateLimitedError } from './classify.js';
import { neverOpened, transportError } from './transport.js';

/**
 * undici's DecoratorHandler (it speaks both handler APIs), loaded when the first request goes
 * through an interceptor: the caller composing one has loaded undici already, and the package root
 * stays free of it for everyone else.
 */
let decorator: typeof import('undici').DecoratorHandler | undefined;
function decoratorHandler(): typeof import('undici').DecoratorHandler {
  decorator ??= (createRequire(import.meta.url)('undici') as typeof import('undici')).DecoratorHandler;
  return decorator;
}

/** A request the guard stopped: the budget, a block, or the upstream said so. `stop` says until when. */
export class GuardStoppedError extends QuotaGuardError {
  override name = 'GuardStoppedError';
  constructor(readonly stop: Stop) {
    super('QG_STOPPED', stop.message, { details: { reason: stop.reason, resumeAt: stop.resumeAt } });
  }

  /** The stop's: 75 (try later) or 69 (the store is unavailable and the call is fail-closed). */
  override get exitCode(): Stop['exitCode'] {
    return this.stop.exitCode;
  }
}

export interface GuardInterceptorOptions {
  /** The spend for a request, or undefined to let it through unguarded. */
  spend: (opts: Dispatcher.DispatchOptions) => SpendArgs | undefined;
  /** What an answer with status ≥ 400 means (default: Google's error model). */
  classify?: Classifier;
  /** The most of an error body held to classify it (default 1 MiB; the rest is dropped). */
  maxBytes?: number;
  /** Longest wait for the budget (default: the config's maxSleep). */
  maxSleepMs?: number;
}

const ERROR_BODY_LIMIT = 1 << 20;

type Inner = Required<
  Pick<
    Dispatcher.DispatchHandler,
    'onRequestStart' | 'onResponseStart' | 'onResponseData' | 'onResponseEnd' | 'onResponseError'
  >
>;

/** A controller for failing a request that was never dispatched. */
const IDLE: Dispatcher.DispatchController = {
  aborted: false,
  paused: false,
  reason: null,
  abort() {},
  pause() {},
  resume() {},
};

/** Carries a stop already logged by `guard.report` out of `guard.call`. */
class Reported extends Error {
  constructor(readonly stop: Stop) {
    super(stop.message);
  }
}

/** Carries the dispatcher's own error (passed on unchanged) through `guard.call`. */
function withOriginal(e: UpstreamError, original: Error): UpstreamError {
  (e as UpstreamError & { original?: Error }).original = original;
  return e;
}

class GuardHandler implements Dispatcher.DispatchHandler {
  readonly #inner: Inner;
  #started = false;
  #status = 0;
  #headers: Record<string, string | string[] | undefined> = {};
  #statusMessage: string | undefined;
  #chunks: Buffer[] = [];
  #size = 0;

  constructor(
    handler: Dispatcher.DispatchHandler,
    readonly guard: Guard,
    readonly spend: SpendOutcome,
    readonly opts: Dispatcher.DispatchOptions,
    readonly options: GuardInterceptorOptions,
    readonly settle: { resolve: () => void; reject: (e: unknown) => void },
  ) {
    this.#inner = new (decoratorHandler())(handler) as unknown as Inner;
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.#started = true;
    this.#controller = controller;
    this.#inner.onRequestStart(controller, context);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
    statusMessage?: string,
  ): void {
    this.#status = statusCode;
    if (statusCode < 400) {
      this.#inner.onResponseStart(controller, statusCode, headers, statusMessage);
      return;
    }
    this.#headers = headers;
    this.#statusMessage = statusMessage;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#status < 400) {
      this.#inner.onResponseData(controller, chunk);
      return;
    }
    const limit = this.options.maxBytes ?? ERROR_BODY_LIMIT;
    if (this.#size + chunk.byteLength <= limit) {
      this.#chunks.push(chunk);
      this.#size += chunk.byteLength;
    }
  }

  onResponseEnd(
    controller: Dispatcher.DispatchController,
    trailers: Record<string, string | string[] | undefined>,
  ): void {
    if (this.#status < 400) {
      this.#inner.onResponseEnd(controller, trailers);
      this.settle.resolve();
      return;
    }
    this.#classify(controller, trailers).then(this.settle.resolve, this.settle.reject);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    if (this.#status === 0 || this.#status >= 400) {
      // No answer was passed on yet: the guard decides (refund when the connection never opened).
      const sent = this.#started || !neverOpened(error);
      this.settle.reject(withOriginal(transportError(error, { sent, deadline: false }), error));
      this.#errorController = controller;
      return;
    }
    this.#inner.onResponseError(controller, error);
    this.settle.resolve();
  }

  #errorController: Dispatcher.DispatchController | undefined;

  /** Fail the request towards the caller (after the guard has refunded or blocked). */
  fail(error: Error): void {
    this.#inner.onResponseError(this.#errorController ?? this.#controller ?? IDLE, error);
  }

  #controller: Dispatcher.DispatchController | undefined;

  #replay(
    controller: Dispatcher.DispatchController,
    trailers: Record<string, string | string[] | undefined>,
  ): void {
    this.#inner.onResponseStart(controller, this.#status, this.#headers, this.#statusMessage);
    for (const c of this.#chunks) this.#inner.onResponseData(controller, c);
    this.#inner.onResponseEnd(controller, trailers);
  }

  async #classify(
    controller: Dispatcher.DispatchController,
    trailers: Record<string, string | string[] | undefined>,
  ): Promise<void> {
    const verdict = await (this.options.classify ?? googleClassifier)({
      status: this.#status,
      headers: this.#headers,
      body: Buffer.concat(this.#chunks).toString('utf8'),
      method: this.opts.method,
      url: `${String(this.opts.origin ?? '')}${this.opts.path}`,
    });
    switch (verdict.kind) {
      case 'exhausted': {
        const r = await this.guard.report(this.spend, {
          kind: 'exhausted',
          ...(verdict.until !== undefined ? { until: verdict.until } : {}),
          ...(verdict.reason !== undefined ? { reason: verdict.reason } : {}),
          ...(verdict.quota !== undefined ? { quota: verdict.quota } : {}),
        });
        if (r.kind === 'exhausted') throw new Reported(r.stop);
        break;
      }
      case 'rate-limited':
        throw rateLimitedError(verdict, {
          status: this.#status,
          headers: this.#headers,
          method: this.opts.method,
        });
      case 'not-charged':
        await this.guard.report(this.spend, { kind: 'never-sent' });
        break;
      default:
        break;
    }
    this.#replay(controller, trailers);
  }
}

/**
 * What `Dispatcher.compose` takes, for undici 7 and 8 alike: a dispatch function (as either major
 * declares it) in, one of the same type out. A project with undici 8 composes it with its own
 * `Agent` although this package's types name undici 7 (Node 20 cannot run 8): each major's
 * `DispatcherComposeInterceptor` is an instance of it.
 */
export type GuardInterceptor = <D extends (options: never, handler: never) => boolean>(dispatch: D) => D;

export function guardInterceptor(guard: Guard, options: GuardInterceptorOptions): GuardInterceptor {
  // Both majors call a dispatch with the options and a handler of the onRequestStart/onResponse*
  // API, which GuardHandler speaks: undici 7's types describe either at run time.
  return <D extends (options: never, handler: never) => boolean>(next: D): D =>
    guardDispatch(guard, options, next as Dispatcher['dispatch']) as D;
}

function guardDispatch(
  guard: Guard,
  options: GuardInterceptorOptions,
  dispatch: Dispatcher['dispatch'],
): Dispatcher['dispatch'] {
  return function guarded(opts, handler) {
    const args = options.spend(opts);
    if (args === undefined) return dispatch(opts, handler);
    let current: GuardHandler | undefined;
    guard
      .call(
        args,
        ({ spend }) =>
          new Promise<void>((resolve, reject) => {
            current = new GuardHandler(handler, guard, spend, opts, options, { resolve, reject });
            try {
              dispatch(opts, current);
            } catch (e) {
              // Refused before dispatching (bad options, a closed agent): never sent, refunded.
              reject(withOriginal(transportError(e, { sent: false, deadline: false }), e as Error));
            }
          }),
        { attempts: 1, ...(options.maxSleepMs !== undefined ? { maxSleepMs: options.maxSleepMs } : {}) },
      )
      .then(
        (r) => {
          if (!r.ok) fail(new GuardStoppedError(r));
        },
        (e: unknown) => {
          if (e instanceof Reported) fail(new GuardStoppedError(e.stop));
          else fail((e as { original?: Error }).original ?? (e as Error));
        },
      );
    // Never dispatched (denied, or the store refused): the caller's handler hears it directly.
    const fail = (error: Error) => {
      if (current) current.fail(error);
      else (new (decoratorHandler())(handler) as unknown as Inner).onResponseError(IDLE, error);
    };
    return true;
  };
}
