/**
 * The scheduled reconcile of `run` and `serve`: on `reconcile.schedule` (cron), one reconcile of
 * every configured project (src/reconcile/), one at a time in a process (a tick that finds the
 * last one still running is skipped). Several processes or hosts may reconcile the same store at
 * once: each computes the same outside spend and writes it with `replace`, so the second changes
 * nothing.
 *
 * A failed reconcile is harmless: nothing is recorded from it, spending goes on as before, and its
 * cause is one warning line (repeats of the same line folded, once an hour with a count), a counted
 * error in the metrics and a run in the history. Every reconcile, done or failed, is recorded in the
 * run history (src/reconcile/runs.ts), where `status`, the status page and the metrics of any
 * process read the last one.
 */
import type { Config } from '../config/types.js';
import type { RunHistory } from '../history/types.js';
import { limitRepeats } from '../log-limit.js';
import type { Logger } from '../logger.js';
import {
  createReconciler,
  projectsOf,
  type ReconcileClock,
  type ReconcileLedger,
  type ReconcileResult,
} from '../reconcile/reconciler.js';
import { reconcileRuns } from '../reconcile/runs.js';
import { monitoringSourceFor, reconcileTokens } from '../reconcile/setup.js';
import type { UpstreamCountSource } from '../reconcile/source.js';
import { cronTicks, type TickSource } from './scheduler.js';

/** A failure said again at most this often (with how many times it came meanwhile). */
export const RECONCILE_REPEAT_MS = 3_600_000;

export interface ReconcileScheduleOptions {
  config: Pick<Config, 'credentials' | 'profiles' | 'reconcile'>;
  ledger: ReconcileLedger;
  source: UpstreamCountSource;
  logger: Logger;
  /** Where each reconcile is recorded (absent: nowhere). */
  history?: Pick<RunHistory, 'record'>;
  clock?: ReconcileClock;
  /** Default: node-cron on `reconcile.schedule`. */
  ticks?: TickSource;
  /** Each reconcile's result (the metrics count its errors). Must not throw. */
  onResult?: (r: ReconcileResult) => void;
  /** How long a repeated failure is held back (default RECONCILE_REPEAT_MS). */
  repeatMs?: number;
}

export interface ReconcileSchedule {
  /** Reconcile now, unless one is running: then that one's result. Never rejects. */
  runNow(): Promise<ReconcileResult | undefined>;
  /** The last result in this process. */
  readonly last: ReconcileResult | undefined;
  /** Reconciles finished, and ticks skipped because one was running. */
  readonly counts: { runs: number; skipped: number };
  /** No more ticks; the reconcile running is aborted and awaited; the source is closed. */
  stop(): Promise<void>;
}

/** Whether the config reconciles: some credential names its project. */
export function reconciles(config: Pick<Config, 'credentials'>): boolean {
  return projectsOf(config.credentials).size > 0;
}

/** A logger whose info lines are debug lines: a reconcile's per-bucket lines, 288 times a day. */
function quietInfo(logger: Logger): Logger {
  return {
    ...logger,
    info: (obj, msg) => logger.debug?.(obj, msg),
  };
}

export function startReconcileSchedule(o: ReconcileScheduleOptions): ReconcileSchedule {
  const logger = limitRepeats(o.logger, { intervalMs: o.repeatMs ?? RECONCILE_REPEAT_MS });
  const now = o.clock?.now ?? Date.now;
  const reconciler = createReconciler({
    config: o.config,
    ledger: o.ledger,
    source: o.source,
    logger: quietInfo(logger),
    ...(o.clock ? { clock: o.clock } : {}),
  });
  const abort = new AbortController();
  const counts = { runs: 0, skipped: 0 };
  let running: Promise<ReconcileResult | undefined> | undefined;
  let stopped = false;

  const once = async (): Promise<ReconcileResult | undefined> => {
    const startedAt = now();
    let result: ReconcileResult;
    try {
      result = await reconciler.reconcileOnce({ signal: abort.signal });
    } catch (e) {
      // A bug, not a failed read: said, and the schedules go on.
      (logger.error ?? logger.warn).call(
        logger,
        { err: e instanceof Error ? { message: e.message, stack: e.stack } : String(e) },
        'reconcile failed with an internal error',
      );
      return undefined;
    }
    // Stopped while it read: what the abort cut short is no failure to keep.
    if (abort.signal.aborted && !result.ok) return result;
    for (const p of result.projects) {
      if (!p.ok) continue;
      const added = p.buckets.filter((b) => b.added > 0);
      if (added.length)
        o.logger.info(
          { project: p.project, added: Object.fromEntries(added.map((b) => [b.bucket, b.added])) },
          `reconcile ${p.project}: outside spend ${added
            .map((b) => `+${b.added} in ${b.bucket} (${b.outside} since the upstream's midnight)`)
            .join(', ')}`,
        );
    }
    if (o.history) {
      for (const run of reconcileRuns(result, startedAt, now())) {
        try {
          await o.history.record(run);
        } catch (e) {
          logger.warn(
            { job: run.job, err: e instanceof Error ? e.message : String(e) },
            `reconcile: the run history did not take the reconcile of ${run.labels['project']}`,
          );
        }
      }
    }
    counts.runs++;
    try {
      o.onResult?.(result);
    } catch {
      // An observer's bug must not stop the schedule.
    }
    return result;
  };

  const runNow = (): Promise<ReconcileResult | undefined> => {
    if (stopped) return Promise.resolve(undefined);
    running ??= once().finally(() => {
      running = undefined;
    });
    return running;
  };

  const { cron, timeZone } = o.config.reconcile.schedule;
  const ticks = o.ticks ?? cronTicks(o.logger);
  const handle = ticks.schedule(
    {
      name: 'reconcile',
      cron,
      timeZone,
      offsetMs: 0,
      run: () => Promise.reject(new Error('the reconcile runs on its own schedule')),
    },
    () => {
      if (running) {
        counts.skipped++;
        o.logger.debug?.({ job: 'reconcile' }, 'reconcile tick skipped: the last one is still running');
        return;
      }
      void runNow();
    },
  );
  o.logger.info(
    { cron, timeZone, projects: [...projectsOf(o.config.credentials).keys()] },
    `reconciling with the upstream's count on ${cron} (${timeZone})`,
  );

  return {
    runNow,
    get last() {
      return reconciler.last;
    },
    counts,
    async stop() {
      if (stopped) return;
      stopped = true;
      handle.stop();
      abort.abort();
      await running;
      await o.source.close();
    },
  };
}

/** What the scheduled reconcile runs on instead of the config's, when given (tests, drills). */
export interface ReconcileParts {
  source?: UpstreamCountSource;
  ticks?: TickSource;
  clock?: ReconcileClock;
  /** Each result, besides the metrics' (a drill watches them). Must not throw. */
  onResult?: (r: ReconcileResult) => void;
}

/**
 * The scheduled reconcile of `run` or `serve`: on its handle's ledger, recorded in its history,
 * each result to `onResult` (the metrics). Only where `reconciles(config)`.
 */
export function reconcileSchedule(
  qg: { config: Config; ledger: ReconcileLedger; logger: Logger },
  history: Pick<RunHistory, 'record'> | undefined,
  parts: ReconcileParts,
  onResult?: (r: ReconcileResult) => void,
): ReconcileSchedule {
  const { config, ledger, logger } = qg;
  const first = config.credentials.find((c) => c.project !== undefined)!.project!;
  return startReconcileSchedule({
    config,
    ledger,
    logger,
    source: parts.source ?? monitoringSourceFor(config, reconcileTokens(config, first), logger),
    ...(history ? { history } : {}),
    ...(parts.ticks ? { ticks: parts.ticks } : {}),
    ...(parts.clock ? { clock: parts.clock } : {}),
    onResult: (r) => {
      onResult?.(r);
      parts.onResult?.(r);
    },
  });
}
