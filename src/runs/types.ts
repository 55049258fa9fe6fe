/**
 * A guarded run's types, for any job: what one run needs (`RunContext`) and the value it ends with
 * (`JobResult`), whatever happens to it (done, stopped by the budget, aborted, store or upstream
 * unavailable, misconfigured); only bugs throw. The CLI maps `exitCode` to the process's exit code.
 */
import type { Config } from '../config/types.js';
import type { ErrorCode, ExitCode } from '../errors.js';
import type { Guard } from '../guard/guard.js';
import type { GuardLogger, Stop } from '../guard/types.js';
import type { JobOutcome, RunHistory } from '../history/types.js';

export type { JobOutcome };

export interface JobResult {
  /** `trending:US`, `trending:US:10` (one category), `backfill`. */
  job: string;
  credential: string;
  outcome: JobOutcome;
  exitCode: ExitCode;
  /** Upstream pages (or id batches) fetched and written to the cache. */
  pages: number;
  /** Units spent through the guard by this run: every attempt, refunds deducted, fail-open spends included. */
  units: number;
  /** Of `units`, those spent while the ledger store was down (allowed unrecorded, fail-open). */
  failOpenUnits: number;
  /** Of `failOpenUnits`, those the guard's journal holds: recorded in the ledger once the store answers. */
  journalledUnits?: number;
  /** Items the run fetched or wrote (the YouTube jobs: videos written to the cache). */
  items: number;
  /** `items` under the YouTube jobs' name for them (kept for the callers of 0.2). */
  videos: number;
  /** What the application says of the run: the YouTube application's trending runs carry `{ region }`. */
  labels: Readonly<Record<string, string>>;
  /** The backfill: videos left alone because they were refreshed less than `backfill.minAge` ago. */
  skipped?: number;
  startedAt: number;
  finishedAt: number;
  /** One line: why the run ended early (absent when done without remark). Never holds a secret. */
  reason?: string;
  /** Epoch ms from which a run can succeed again (for `stopped`). */
  resumeAt?: number;
  /** The guard's stop, when the budget ended the run. */
  stop?: Stop;
  /** The error code, when an error ended the run. */
  errorCode?: ErrorCode;
}

/**
 * What one run needs: the guard it spends through, where it is summarised, and (for the jobs that
 * fill it) the cache its runs are noted in. A `JobContext` is one; so is a `QuotaGuard`'s.
 */
export interface RunContext {
  config: Config;
  guard: Guard;
  logger: GuardLogger;
  now?: () => number;
  history?: RunHistory;
  /** A cache its runs are noted in: flushed when a run ends. */
  cache?: { flush(): void };
}

export interface JobRunOptions {
  /** The credential to spend (default: the first one in the config). */
  credential?: string;
  /**
   * Aborting ends the run at the next page boundary (a sleep in the guard is cut short) and, unless
   * `inFlightSignal` is given, the request in flight with it.
   */
  signal?: AbortSignal;
  /**
   * Aborting ends the request in flight (it counts as charged, its page is never written); default
   * `signal`. With a signal of its own, aborting `signal` alone lets the request in flight finish
   * and its page be written, and starts no new one: what the run spent is what the upstream saw.
   */
  inFlightSignal?: AbortSignal;
}
