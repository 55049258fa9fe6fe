/**
 * What `quota-guard run` runs: the scheduled jobs of a config (one trending job per region, staggered,
 * and the backfill) on one guard, ledger and cache, with metrics fed by the guard and the jobs, and
 * optionally the loopback /metrics and /healthz server. `stop()` is the graceful shutdown: no more
 * ticks, running pages finished, then the HTTP server, the cache and the ledger closed.
 */

import type { CallerRules } from '../api/callers.js';
import type { TokenFile } from '../api/tokens.js';
import type { Config } from '../config/types.js';
import { createGuard, type Guard } from '../guard/guard.js';
import type { DayOf } from '../guard/pacing.js';
import type { GuardEvent, GuardLogger } from '../guard/types.js';
import { openRunHistory } from '../history/index.js';
import { trendingJob } from '../history/types.js';
import type { HttpAddress } from '../http-address.js';
import type { Ledger } from '../ledger/types.js';
import { limitRepeats } from '../log-limit.js';
import { createMetrics, type Metrics } from '../metrics/metrics.js';
import { renderStatusPage, statusPageData } from '../metrics/page.js';
import { type MetricsServer, startMetricsServer } from '../metrics/server.js';
import { scheduledNeed } from '../youtube/cron-runs.js';
import { runBackfill } from '../youtube/job-library/backfill.js';
import {
  type OpenedJobContext,
  type OpenJobContextOptions,
  openJobContext,
} from '../youtube/job-library/context.js';
import { runTrending } from '../youtube/job-library/trending.js';
import type { JobContext } from '../youtube/job-library/types.js';
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
    run: (signal) => runTrending(ctx, { region, signal, maxPages: t.maxPages, ...credential }),
  }));
  if (options.backfill !== false) {
    jobs.push({
      name: 'backfill',
      cron: b.cron,
      timeZone: b.timeZone,
      offsetMs: b.staggerMs,
      run: (signal) => runBackfill(ctx, { signal, ...credential }),
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
  config: Config;
  ledger: Ledger;
  logger: GuardLogger;
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
  /** Passed to the guard (drills: the simulator's reset instead of the upstream's midnight). */
  nextReset?: (timeZone: string, nowMs: number) => number;
  /** Passed to the guard (drills: the simulator's day instead of the upstream's calendar day). */
  upstreamDay?: DayOf;
  jobContext?: OpenJobContextOptions;
  /** Every scheduler event, besides the metrics. */
  onEvent?: (e: SchedulerEvent) => void;
  /** Every guard event, besides the metrics. */
  onGuardEvent?: (e: GuardEvent) => void;
}

export interface Service {
  config: Config;
  guard: Guard;
  jobs: OpenedJobContext;
  metrics: Metrics;
  scheduler: Scheduler;
  server?: MetricsServer;
  /** Graceful: stop ticking, let running pages finish, close the server, the cache and the ledger. */
  stop(reason?: string): Promise<void>;
}

/** Start the schedules (and the HTTP server when asked). The ledger is closed by `stop`. */
export async function startService(opts: ServiceOptions): Promise<Service> {
  const { config, ledger, logger } = opts;
  const metrics = createMetrics();
  const guard = createGuard({
    config,
    ledger,
    logger,
    scheduledNeed: scheduledNeed(config),
    onEvent: opts.onGuardEvent
      ? (e) => {
          metrics.guardEvent(e);
          opts.onGuardEvent!(e);
        }
      : metrics.guardEvent,
    ...(opts.nextReset ? { nextReset: opts.nextReset } : {}),
    ...(opts.upstreamDay ? { upstreamDay: opts.upstreamDay } : {}),
  });
  const history = opts.jobContext?.history || (await openRunHistory(config.store));
  const jobs = openJobContext({ config, guard, logger }, { ...opts.jobContext, history });
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
    await jobs.close();
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
  let stopping: Promise<void> | undefined;
  return {
    config,
    guard,
    jobs,
    metrics,
    scheduler,
    ...(server ? { server } : {}),
    stop(reason) {
      stopping ??= (async () => {
        try {
          await scheduler.stop(reason);
          // Spends whose answer never came get one command timeout to be settled before the ledger closes.
          await guard.settlePending(config.store.commandTimeoutMs ?? 1000);
        } finally {
          try {
            await server?.close();
            await jobs.close();
          } finally {
            await ledger.close();
          }
        }
      })();
      return stopping;
    },
  };
}
