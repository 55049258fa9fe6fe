/**
 * Plumbing every job run shares: spending each upstream request through the guard (every attempt
 * spent, retries by the guard's retry helper), counting what the run spent, turning stops and
 * errors into a `JobResult`, recording the run in the cache, and the exit code a process ends with.
 */
import { ConfigError, ExitCode, exitCodeFor, isQuotaGuardError, type QuotaGuardError } from '../errors.js';
import { notCharged } from '../guard/guard.js';
import type { CallOptions, SpendArgs, Stop } from '../guard/types.js';
import { childLogger, type Logger } from '../logger.js';
import { summarise } from './summary.js';
import type { JobOutcome, JobResult, RunContext } from './types.js';

const OUTCOME_EXIT: Record<Exclude<JobOutcome, 'failed'>, ExitCode> = {
  done: ExitCode.OK,
  stopped: ExitCode.TEMPFAIL,
  aborted: ExitCode.TEMPFAIL,
  unavailable: ExitCode.UNAVAILABLE,
};

/** How a run ended early: what `JobRun.finish` needs besides the counters. */
export interface JobEnd {
  outcome: JobOutcome;
  reason?: string;
  resumeAt?: number;
  stop?: Stop;
  error?: QuotaGuardError;
}

export type PageCall<T> = { ok: true; value: T; attempts: number } | { ok: false; end: JobEnd };

/** The end a guard `Stop` means for a job. */
export function endFromStop(stop: Stop): JobEnd {
  const outcome: JobOutcome =
    stop.reason === 'aborted' ? 'aborted' : stop.reason === 'store-down' ? 'unavailable' : 'stopped';
  return {
    outcome,
    reason: stop.message,
    ...(outcome === 'stopped' ? { resumeAt: stop.resumeAt } : {}),
    stop,
  };
}

/** The end an error means for a job; undefined for anything that is not ours (a bug: rethrow it). */
export function endFromError(e: unknown, signal?: AbortSignal): JobEnd | undefined {
  if (!isQuotaGuardError(e)) return undefined;
  if (signal?.aborted) return { outcome: 'aborted', reason: 'aborted', error: e };
  // The codes whose exit status is 69 (src/errors.ts) mean "the store or the upstream is not serving
  // us right now": the run is unavailable, not failed.
  const outcome: JobOutcome = exitCodeFor(e) === ExitCode.UNAVAILABLE ? 'unavailable' : 'failed';
  return { outcome, reason: `${e.message} (${e.code})`, error: e };
}

/** What the history says of a run that spent while the ledger store could not answer. */
function journalledRemark(units: number): string {
  return `${units} unit${units === 1 ? '' : 's'} spent while the ledger store could not answer, journalled and recorded late`;
}

/** One run of one job: counters, the guarded page call, and the result. */
export class JobRun {
  pages = 0;
  units = 0;
  failOpenUnits = 0;
  /** Of `failOpenUnits`, those the guard wrote to its journal (recorded once the store answers). */
  journalledUnits = 0;
  /** Items the run fetched or wrote (the YouTube jobs: videos). */
  items = 0;
  /** What the application says of the run (the YouTube application's trending runs: `{ region }`). */
  labels: Record<string, string> = {};
  /** Videos the run left alone as refreshed too recently (the backfill). */
  skipped: number | undefined;
  readonly startedAt: number;
  readonly #now: () => number;
  readonly #inFlight: AbortSignal | undefined;

  /** The jobs' logger with this run's job and credential on every line. */
  readonly logger: Logger;

  constructor(
    readonly ctx: RunContext,
    readonly job: string,
    readonly credential: string,
    readonly signal?: AbortSignal,
    inFlightSignal: AbortSignal | undefined = signal,
  ) {
    this.#inFlight = inFlightSignal;
    this.logger = childLogger(ctx.logger, { job, credential });
    this.#now = ctx.now ?? Date.now;
    this.startedAt = this.#now();
  }

  now(): number {
    return this.#now();
  }

  /**
   * One upstream request through the guard: each attempt spends (and is counted here), a request
   * that provably never reached the upstream is refunded by the guard (and uncounted here).
   * The request is given the run's in-flight signal (its abort signal unless told otherwise):
   * SIGINT/SIGTERM ends a request in flight at once (it counts as charged, and its page is never
   * written), so an upstream that drips cannot hold a stopping run. Errors that are ours become an
   * end; bugs are thrown.
   */
  async call<T>(
    args: SpendArgs,
    request: (signal?: AbortSignal) => Promise<T>,
    options: CallOptions = {},
  ): Promise<PageCall<T>> {
    if (this.signal?.aborted) return { ok: false, end: { outcome: 'aborted', reason: 'aborted' } };
    try {
      const r = await this.ctx.guard.call(
        args,
        async ({ spend }) => {
          this.units += spend.cost;
          const failOpen = spend.reason === 'fail-open';
          const journalled = failOpen && spend.journal !== undefined;
          if (failOpen) this.failOpenUnits += spend.cost;
          if (journalled) this.journalledUnits += spend.cost;
          try {
            return await request(this.#inFlight);
          } catch (e) {
            // The guard refunds a request no project was charged for (not a fail-open one: it was never recorded).
            if (notCharged(e)) {
              this.units -= spend.cost;
              if (failOpen) this.failOpenUnits -= spend.cost;
              if (journalled) this.journalledUnits -= spend.cost;
            }
            throw e;
          }
        },
        { ...options, ...(this.signal ? { signal: this.signal } : {}) },
      );
      if (!r.ok) return { ok: false, end: endFromStop(r) };
      return { ok: true, value: r.value, attempts: r.attempts };
    } catch (e) {
      const end = endFromError(e, this.signal);
      if (end === undefined) throw e;
      return { ok: false, end };
    }
  }

  /** The run's result; also recorded in the cache (a cache that cannot be written is logged, not thrown). */
  finish(end: JobEnd = { outcome: 'done' }): JobResult {
    const finishedAt = this.#now();
    const exitCode = end.outcome === 'failed' ? exitCodeFor(end.error) : OUTCOME_EXIT[end.outcome];
    const result: JobResult = {
      job: this.job,
      credential: this.credential,
      outcome: end.outcome,
      exitCode,
      pages: this.pages,
      units: this.units,
      failOpenUnits: this.failOpenUnits,
      ...(this.journalledUnits > 0 ? { journalledUnits: this.journalledUnits } : {}),
      items: this.items,
      videos: this.items,
      labels: { ...this.labels },
      ...(this.skipped !== undefined ? { skipped: this.skipped } : {}),
      startedAt: this.startedAt,
      finishedAt,
      ...(end.reason !== undefined || this.journalledUnits > 0
        ? { reason: end.reason ?? journalledRemark(this.journalledUnits) }
        : {}),
      ...(end.resumeAt !== undefined ? { resumeAt: end.resumeAt } : {}),
      ...(end.stop !== undefined ? { stop: end.stop } : {}),
      ...(end.error !== undefined ? { errorCode: end.error.code } : {}),
    };
    // The run is recorded once, in the run history (#remember); the cache only catches its
    // full-text index up with the pages the run wrote.
    try {
      this.ctx.cache?.flush();
    } catch (e) {
      if (!isQuotaGuardError(e)) throw e;
      this.logger.warn({ code: e.code }, `could not bring the cache's index up to date: ${e.message}`);
    }
    const log = {
      outcome: result.outcome,
      exitCode,
      pages: result.pages,
      units: result.units,
      failOpenUnits: result.failOpenUnits,
      items: result.items,
      ...(result.skipped !== undefined ? { skipped: result.skipped } : {}),
      ms: finishedAt - this.startedAt,
      ...(result.resumeAt !== undefined ? { resumeAt: new Date(result.resumeAt).toISOString() } : {}),
      ...(result.errorCode !== undefined ? { code: result.errorCode } : {}),
    };
    // A stop's reason was logged by the guard when it stopped (a line of its own, with its fields):
    // the run's end says it ended, not the reason again. Other reasons are said here, once, without
    // repeating the outcome they often start with ("stopped: ...").
    const why = result.reason?.replace(new RegExp(`^${result.outcome}: `), '');
    const msg = `${this.job} ${result.outcome}${why && !result.stop ? `: ${why}` : result.stop ? ` (${result.stop.reason}, the stop above)` : ''}`;
    if (result.outcome === 'done') this.logger.info(log, msg);
    else this.logger.warn(log, msg);
    return result;
  }

  /** Run `body`; an error that is ours ends the run as a result, a bug is thrown. */
  async guarded(body: () => Promise<JobEnd | undefined>): Promise<JobResult> {
    let end: JobEnd | undefined;
    try {
      end = await body();
    } catch (e) {
      end = endFromError(e, this.signal);
      if (end === undefined) throw e;
    }
    const result = this.finish(end);
    await this.#remember(result);
    return result;
  }

  /** Summarise the run in the history (a store that cannot take it is logged, not thrown). */
  async #remember(result: JobResult): Promise<void> {
    const history = this.ctx.history;
    if (!history) return;
    try {
      await history.record(await summarise(result, this.ctx.config, this.ctx.guard.ledger));
    } catch (e) {
      if (!isQuotaGuardError(e)) throw e;
      this.logger.warn({ code: e.code }, `could not record the run in the history: ${e.message}`);
    }
  }
}

/** The credential a job spends: the one asked for (checked), else the config's first. */
export function jobCredential(ctx: RunContext, credential: string | undefined): string {
  if (credential !== undefined) return ctx.config.credential(credential).id;
  const first = ctx.config.credentials[0];
  if (first === undefined) throw new ConfigError(['the config has no credentials']);
  return first.id;
}

/**
 * Run jobs side by side and wait for every one of them, even when one throws (only a bug does:
 * outcomes are values). The first error is rethrown after the others have ended, so the caller
 * never closes the ledger or the cache under a job that is still writing a page.
 */
export async function runSideBySide<T>(jobs: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(jobs);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}

/**
 * One exit code for several runs (e.g. 8 regions): a configuration or software failure first, then
 * unavailable (69), then stopped (75), else 0.
 */
export function combinedExitCode(results: readonly JobResult[]): ExitCode {
  const codes = results.map((r) => r.exitCode);
  for (const c of [ExitCode.CONFIG, ExitCode.SOFTWARE, ExitCode.USAGE, ExitCode.DATAERR]) {
    if (codes.includes(c)) return c;
  }
  if (codes.includes(ExitCode.UNAVAILABLE)) return ExitCode.UNAVAILABLE;
  if (codes.includes(ExitCode.TEMPFAIL)) return ExitCode.TEMPFAIL;
  return ExitCode.OK;
}

/**
 * SIGINT/SIGTERM abort the returned signal (jobs then abandon the request in flight, unwritten, and
 * stop); a second signal calls `onForce` (the CLI exits at once, as a shell would report it: 130
 * after SIGINT, 143 after SIGTERM). `dispose` removes the handlers.
 */
export function abortOnSignals(
  onForce: (signal: NodeJS.Signals) => void = (signal) => process.exit(signal === 'SIGINT' ? 130 : 143),
): {
  signal: AbortSignal;
  dispose: () => void;
} {
  const controller = new AbortController();
  const handler = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) onForce(signal);
    else controller.abort();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
