/**
 * What `quota-guard run` runs: the scheduled jobs of a config (one trending job per region, staggered,
 * and the backfill) on the guard, ledger and run history of one `openQuotaGuard` handle and one cache,
 * with metrics fed by the guard (subscribed to the handle) and the jobs, and optionally the loopback
 * /metrics and /healthz server. `stop()` is the graceful shutdown: no more ticks, running pages
 * finished, then the HTTP server and the cache closed, and the handle (pending spends settled).
 */

import type { CallerRules } from '../api/callers.js';
import type { TokenFile } from '../api/tokens.js';
import type { Guard } from '../guard/guard.js';
import { openRunHistory } from '../history/index.js';
import type { HttpAddress } from '../http-address.js';
import { limitRepeats } from '../log-limit.js';
import { createMetrics, type Metrics } from '../metrics/metrics.js';
import { renderStatusPage, statusPageData } from '../metrics/page.js';
import { type MetricsServer, startMetricsServer } from '../metrics/server.js';
import type { QuotaGuard } from '../quota-guard.js';
import { youtubeConfig } from '../youtube/config/resolver.js';
import type { YouTubeConfig } from '../youtube/config/types.js';
import { runBackfill } from '../youtube/job-library/backfill.js';
import {
  type OpenedJobContext,
  type OpenJobContextOptions,
  openJobContext,
} from '../youtube/job-library/context.js';
import { runTrending } from '../youtube/job-library/trending.js';
import type { JobContext } from '../youtube/job-library/types.js';
import { trendingJob, trendingLabels } from '../youtube/job-names.js';
import { type ReconcileParts, type ReconcileSchedule, reconcileSchedule, reconciles } from './reconcile.js';
import type { ScheduledJob } from './scheduler.js';
import { Scheduler, type SchedulerEvent, type TickSource } from './scheduler.js';

export interface ScheduledJobsOptions {
  /** The credential the jobs spend (default: the first in the config). */
  credential?: string;
  /** Regions (default: the config's). */
  regions?: readonly string[];
  /** Schedule the backfill too (default true). */
  backfill?: boolean;
}

/** One trending job per region (region i starts i × stagger after each tick) and the backfill. */
export function scheduledJobs(ctx: JobContext, options: ScheduledJobsOptions = {}): ScheduledJob[] {
  const { trending: t, backfill: b } = ctx.config.schedules;
  const regions = options.regions ?? ctx.config.regions;
  const credential = options.credential !== undefined ? { credential: options.credential } : {};
  const jobs: ScheduledJob[] = regions.map((region, i) => ({
    name: trendingJob(region),
    cron: t.cron,
    timeZone: t.timeZone,
    offsetMs: i * t.staggerMs,
    run: (signal, inFlightSignal) =>
      runTrending(ctx, { region, signal, inFlightSignal, maxPages: t.maxPages, ...credential }),
  }));
  if (options.backfill !== false) {
    jobs.push({
      name: 'backfill',
      cron: b.cron,
      timeZone: b.timeZone,
      offsetMs: b.staggerMs,
      run: (signal, inFlightSignal) => runBackfill(ctx, { signal, inFlightSignal, ...credential }),
    });
  }
  return jobs;
}

/** Metrics and logs from scheduler events. */
export function observeScheduler(metrics: Metrics): (e: SchedulerEvent) => void {
  return (e) => {
    if (e.type === 'skip') metrics.skippedTick(e.job);
    else if (e.type === 'finish') metrics.jobRun(e.result);
  };
}

export interface ServiceOptions extends ScheduledJobsOptions {
  /**
   * The ledger, the guard and the run history, opened by `openQuotaGuard` (with the schedules'
   * `scheduledNeed`, and a drill's clock); closed by `stop`.
   */
  qg: QuotaGuard;
  /** Serve /metrics and /healthz here. */
  http?: HttpAddress;
  /**
   * Also serve the decision API under /v1/ on `http` (src/api/), with these bearer tokens (a file,
   * or one already read) and the host names and origins allowed beyond the defaults.
   */
  decisions?: { tokensFile?: string; tokens?: TokenFile; callers?: CallerRules };
  /** Jobs to schedule instead of the config's (drills scale them). */
  jobs?: (ctx: JobContext) => ScheduledJob[];
  ticks?: TickSource;
  jobContext?: Omit<OpenJobContextOptions, 'history'>;
  /** Every scheduler event, besides the metrics. */
  onEvent?: (e: SchedulerEvent) => void;
  /**
   * The scheduled reconcile (on by default where a credential names its project): `false` turns it
   * off; a count source, ticks or a clock replace Cloud Monitoring, `reconcile.schedule` and the
   * real time (tests, drills).
   */
  reconcile?: false | ReconcileParts;
}

export interface Service {
  config: YouTubeConfig;
  guard: Guard;
  jobs: OpenedJobContext;
  metrics: Metrics;
  scheduler: Scheduler;
  server?: MetricsServer;
  /** The scheduled reconcile, where one runs. */
  reconcile?: ReconcileSchedule;
  /** Graceful: stop ticking, let running pages finish, close the server, the cache and the ledger. */
  stop(reason?: string): Promise<void>;
}

/** Start the schedules (and the HTTP server when asked). The handle is closed by `stop`. */
export async function startService(opts: ServiceOptions): Promise<Service> {
  const { qg } = opts;
  const { ledger, guard, logger } = qg;
  const config = youtubeConfig(qg.config);
  const metrics = createMetrics();
  const unsubscribe = qg.subscribe(metrics.guardEvent);
  // The jobs record their runs in the handle's history, which the handle closes.
  const history = qg.history ?? (await openRunHistory(config.store));
  const jobs = openJobContext({ config, guard, logger, history }, { ...opts.jobContext });
  metrics.setSources({ config, ledger, cache: jobs.cache, history });
  let server: MetricsServer | undefined;
  try {
    if (opts.http) {
      const routes = opts.decisions
        ? (await import('../api/setup.js')).decisionApiFor({
            guard,
            history,
            host: opts.http.host,
            ...(opts.decisions.tokensFile !== undefined ? { tokensFile: opts.decisions.tokensFile } : {}),
            ...(opts.decisions.tokens !== undefined ? { tokens: opts.decisions.tokens } : {}),
            ...(opts.decisions.callers !== undefined ? { callers: opts.decisions.callers } : {}),
            // A wrong token's refusals, said once per interval with a count.
            logger: limitRepeats(logger),
            onRequest: metrics.apiRequest,
            labelsOf: trendingLabels,
          })
        : undefined;
      server = await startMetricsServer({
        ...(routes ? { routes } : {}),
        metrics,
        ledger,
        // It spends: healthy only while the store takes writes.
        writes: true,
        cache: jobs.cache,
        page: async () =>
          renderStatusPage(
            await statusPageData(config, ledger, history, {
              pacing: (credential, bucket) => guard.pacingLine(credential, bucket),
            }),
          ),
        ...opts.http,
      });
      logger.info(
        { url: server.url },
        `serving ${server.url}/metrics, ${server.url}/healthz and the status page at ${server.url}/`,
      );
    }
  } catch (e) {
    unsubscribe();
    await jobs.close();
    if (!qg.history) await history.close();
    throw e;
  }
  const observe = observeScheduler(metrics);
  const scheduler = new Scheduler({
    jobs: opts.jobs ? opts.jobs(jobs) : scheduledJobs(jobs, opts),
    logger,
    onEvent: (e) => {
      observe(e);
      opts.onEvent?.(e);
    },
    ...(opts.ticks ? { ticks: opts.ticks } : {}),
  });
  scheduler.start();
  const reconcile =
    opts.reconcile !== false && reconciles(config)
      ? reconcileSchedule(qg, history, opts.reconcile ?? {}, (r) => metrics.reconcile.reconciled(r))
      : undefined;
  let stopping: Promise<void> | undefined;
  return {
    config,
    guard,
    jobs,
    metrics,
    scheduler,
    ...(server ? { server } : {}),
    ...(reconcile ? { reconcile } : {}),
    stop(reason) {
      stopping ??= (async () => {
        try {
          await Promise.all([scheduler.stop(reason), reconcile?.stop()]);
        } finally {
          try {
            await server?.close();
            await jobs.close();
            if (!qg.history) await history.close();
          } finally {
            unsubscribe();
            // Spends whose answer never came get one command timeout to be settled, then the
            // history and the ledger close.
            await qg.close();
          }
        }
      })();
      return stopping;
    },
  };
}
