/**
 * The compressed-day drill: one whole quota day scaled down in time, run against the simulator by
 * the real scheduler, guard, ledger and cache, then checked.
 *
 * - The simulator's day lasts `daySeconds`, and so does the credential's sliding window; the
 *   schedules are scaled to match (an "hour" is a 24th of the day, rounded to a period node-cron can
 *   tick: 1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 or 60 seconds, or whole minutes dividing an hour).
 * - 8 regional trending jobs every hour, staggered by 2 scaled minutes; the backfill every hour, 20
 *   scaled minutes later (after the last region), with a cache backlog larger than the whole day's
 *   quota, paced over the simulator's day by the guard (`backfill.pace: day`, the default).
 * - A manual burst of `search.list` calls at a third of the day, and "someone else spent 2,000
 *   units of the key" injected at the simulator at mid-day (or when `behindAt` says), behind the
 *   guard's back.
 *
 * Checked at the end: the bucket the backfill spends is used (≥ 0.99 of what was spendable), the
 * upstream answered quotaExceeded at most once before the guard blocked the bucket and never after,
 * the simulator charged exactly what the ledger recorded, and the scheduled jobs were never denied by
 * the budget while the backfill ran (the backfill only took headroom).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openQuotaGuard } from '../quota-guard.js';
import { startService } from '../scheduler/service.js';
import { scheduledNeed } from '../youtube/cron-runs.js';
import type { JobResult } from '../youtube/job-library/types.js';
import { type Simulator, startSimulator } from '../youtube/simulator/index.js';
import { backfillEnd, watchBackfillRuns } from './backfill-runs.js';
import { type Mixed, prepareMixed } from './mixed.js';
import { drillChecks, quietLogger, readBuckets, runsByKind, tally, trendingCompletion } from './observe.js';
import {
  drillReconcileParts,
  drillReconcileReport,
  drillReconcileTiming,
  upstreamCountAt,
  withReconcileChecks,
} from './reconcile.js';
import {
  CREDENTIAL,
  daySettings,
  drillConfig,
  fmt,
  PROJECT,
  scaledHourSeconds,
  seedBacklog,
} from './setup.js';
import type { Day, DaySettings, DrillOptions, DrillReport, OpenParts } from './types.js';

export { type DrillPace, drillPace, MAX_DRILL_CALLS_PER_SECOND, scaledHourSeconds } from './setup.js';
export type {
  BackfillEnd,
  DrillBackfillRun,
  DrillBucket,
  DrillCheck,
  DrillOptions,
  DrillReport,
} from './types.js';

/** Run one compressed day and check it. Resolves with the report whether the checks pass or not. */
export async function runDrill(options: DrillOptions = {}): Promise<DrillReport> {
  const started = Date.now();
  const s = daySettings(options);
  const dir = mkdtempSync(join(tmpdir(), 'qg-drill-'));
  const open: OpenParts = { sim: undefined, service: undefined, ledger: undefined, timers: [] };
  let mixed: Mixed | undefined;
  try {
    // --mixed: PHP and Python cron jobs through two `serve` instances (mixed.ts).
    if (options.mixed) mixed = prepareMixed(s, options, dir, open.timers);
    const day = await startDay(s, mixed?.dayOptions ?? options, dir, open, mixed?.simulatorKeys ?? []);
    const loadAtStart = loadavg()[0]!;
    const { sim: simulator, service: svc, ledger, setup, t0, dayMs } = day;
    const { config, credential, hourSeconds, backfillBucket } = setup;
    const burst = scheduleDisturbances(s, day, open.timers);
    const { curve, sample, sampler } = startCurve(day, open.timers);
    const report = reportProgress(s, day, open.timers);

    // Stop just before the day ends, so nothing is spent on the next one: no new call starts, and
    // the calls in flight finish (an abandoned one was recorded, but the simulator may never have
    // charged it), so what the ledger recorded is what the simulator charged. The ledger keeps two
    // days and the simulator's totals are cumulative: both are read after.
    const stopAt = t0 + dayMs - Math.min(100, (hourSeconds * 1000) / 8);
    await mixed?.start(day, stopAt);
    const lagBeforeEnd =
      day.reconcile &&
      upstreamCountAt(
        simulator,
        PROJECT,
        backfillBucket,
        stopAt - drillReconcileTiming(simulator).lagMs,
        open.timers,
      );
    await sleep(Math.max(0, stopAt - Date.now()));
    clearInterval(report);
    clearInterval(sampler);
    await Promise.all([
      svc.scheduler.stop('end of the day', { finishInFlight: true }),
      svc.reconcile?.stop(),
    ]);
    await burst();
    await sample();
    // The Node jobs' last calls finish within the day, or the curve's end is the next day's.
    if (Date.now() >= day.nextResetAt) s.progress('warning: the day ended before the jobs had stopped');
    // The cron jobs stop too, and their journals are replayed before the ledger is read (after the
    // day's end is fine: the ledger keeps two days and the simulator's totals are cumulative).
    const clients = await mixed?.finish(day);

    const { buckets, recordedUnits } = await readBuckets(day, s.behind);

    const results = svc.scheduler.results();
    const sum = (pred: (r: JobResult) => boolean) => results.filter(pred).reduce((n, r) => n + r.units, 0);
    const chargedUnits = simulator.charged({ project: PROJECT });
    const trending = trendingCompletion(config, credential, s.regions, day.serviceStartedAt, stopAt, results);
    const fraction = (at: number | null) => (at === null ? null : day.fraction(at));
    const main = buckets[backfillBucket]!;
    const t = day.tally;
    const backfillRuns = await day.backfillRuns();
    let checks = drillChecks({
      t,
      trending,
      main,
      backfillBucket,
      chargedUnits,
      recordedUnits,
      fraction,
      backfillRuns,
    });
    const reconciled =
      day.reconcile && lagBeforeEnd
        ? drillReconcileReport({
            watch: day.reconcile,
            sim: simulator,
            behindAt: day.counts.behindSpentAt ?? t0 + dayMs * s.behindAt,
            // Google's count of the day: what the simulator charged for our requests (cumulative,
            // so a read after the day's end on a busy machine is still the day's) and someone else's.
            upstreamAtEnd: main.charged + main.behind,
            upstreamLagBeforeEnd: lagBeforeEnd(),
            own: main.recorded,
            outside: main.outside,
            served: main.served,
            // The day ends on the backfill's ceiling: the last spender, once the scheduled runs are done.
            ceiling: credential.buckets[backfillBucket]!.ceilings.backfill,
            behind: main.behind,
            quotaExceeded: t.quotaExceededTotal,
          })
        : undefined;
    if (reconciled)
      checks = withReconcileChecks(checks, reconciled, {
        utilisation: main.utilisation,
        reserve: main.reserve,
        bucket: backfillBucket,
      });
    checks.push(...(clients?.checks ?? []));
    const lifted = svc.guard.pacer.day(credential, t0 + 1).backfill.at(-1);
    return {
      ok: checks.every((c) => c.ok),
      store: ledger.kind,
      profile: s.profile.id,
      daySeconds: s.daySeconds,
      hourSeconds,
      regions: s.regions.length,
      maxPages: s.maxPages,
      burstCalls: s.burstCalls,
      backfillBucket,
      utilisation: main.utilisation,
      upstreamQuotaExceeded: t.quotaExceededBeforeBlock,
      upstreamQuotaExceededTotal: t.quotaExceededTotal,
      allowedAfterBlock: t.allowedAfterBlock,
      chargedUnits,
      recordedUnits,
      scheduledDenied: t.scheduledDenied,
      scheduledBlocked: t.scheduledBlocked,
      backfillUnits: sum((r) => r.job === 'backfill'),
      trendingUnits: sum((r) => r.job.startsWith('trending')),
      manualUnits: t.manualUnits,
      failOpenSpends: t.failOpen,
      backlogVideos: setup.backlogVideos,
      runs: runsByKind(results),
      skippedTicks: day.counts.skippedTicks,
      blockedAtDayFraction: fraction(t.firstBlockAt),
      dryAtDayFraction: fraction(t.firstDryAt),
      behindAtDayFraction: s.behindAt,
      trendingRunsCompleted: trending.completed,
      trendingRunsDone: trending.done,
      trendingRunsScheduled: trending.scheduled,
      curve,
      backfillRuns,
      lineLiftedAtDayFraction: fraction(lifted ?? null),
      buckets,
      checks,
      loadAverage: { start: round2(loadAtStart), end: round2(loadavg()[0]!) },
      ...(clients ? { mixed: clients.report } : {}),
      elapsedMs: Date.now() - started,
      ...(options.keep ? { workDir: dir } : {}),
      ...(reconciled ? { reconcile: reconciled.reconcile } : {}),
    };
  } finally {
    for (const timer of open.timers) clearTimeout(timer);
    await mixed?.close();
    // The service closes the ledger; without one it is closed here.
    if (open.service) await open.service.stop('drill over');
    else await open.ledger?.close();
    await open.sim?.close();
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Seeds the cache's backlog before the day starts (seeding a large cache takes seconds), then waits
 * for the next tick of the schedules.
 */
async function seedAndWaitForTick(
  s: DaySettings,
  store: string,
  cachePath: string,
  key: string,
): Promise<void> {
  const { daySeconds, profile, quota, maxPages, regions, progress } = s;
  const probe = drillConfig({
    daySeconds,
    profile,
    quota,
    maxPages,
    store,
    regions,
    cachePath,
    baseUrl: 'http://127.0.0.1:1/youtube/v3',
    key,
  });
  progress(`seeding the cache with a backlog of ${fmt(probe.backlogVideos)} videos`);
  seedBacklog(cachePath, probe.backlogVideos);
  // The day starts just after a tick of the schedules (as a calendar day starts at a whole hour),
  // so that its last backfill run comes after its last trending runs, well before its end.
  const periodMs = scaledHourSeconds(daySeconds) * 1000;
  await sleep(Math.ceil(Date.now() / periodMs) * periodMs + 20 - Date.now());
}

/** Eight progress lines a day: what the upstream counted on the backfill's bucket, and the runs. */
function reportProgress(s: DaySettings, day: Day, timers: NodeJS.Timeout[]): NodeJS.Timeout {
  const { backfillBucket } = day.setup;
  const report = setInterval(() => {
    const u = day.sim.usage(PROJECT, backfillBucket);
    s.progress(
      `t=${((Date.now() - day.t0) / 1000).toFixed(0)}s: ${backfillBucket} used upstream ${fmt(u.used)} of ${fmt(u.quota)}; runs ${day.service.scheduler.results().length}`,
    );
  }, day.dayMs / 8);
  timers.push(report);
  return report;
}

/** Seeds the backlog, waits for a tick, starts the simulator, opens the ledger and starts the jobs. */
async function startDay(
  s: DaySettings,
  options: DrillOptions,
  dir: string,
  open: OpenParts,
  outsideKeys: readonly string[],
): Promise<Day> {
  const { daySeconds, profile, quota, maxPages, regions, progress } = s;
  const key = `drill-${Math.random().toString(36).slice(2)}`;
  const store = options.store ?? `sqlite:${join(dir, 'ledger.db')}`;
  const redis = /^redis/.test(store);
  const cachePath = join(dir, 'cache.db');
  const ownStats = profile.buckets['videos.batchGetStats'] !== undefined;
  await seedAndWaitForTick(s, store, cachePath, key);

  const sim = await startSimulator({
    port: 0,
    profile,
    quota,
    ...(ownStats ? { buckets: { 'videos.batchGetStats': quota } } : {}),
    dayLengthSec: daySeconds,
    keys: [`${key}@${PROJECT}`, ...outsideKeys],
  });
  open.sim = sim;
  // The day's start as the simulator counts it (it starts counting before it listens): every
  // fraction of the day, and the end of the spend curve, is measured from there.
  const t0 = sim.nextResetAt() - Math.round(daySeconds * 1000);
  const setup = drillConfig({
    daySeconds,
    profile,
    quota,
    maxPages,
    store,
    ...(redis ? { keyPrefix: options.keyPrefix ?? `qg-drill:${t0.toString(36)}:` } : {}),
    regions,
    cachePath,
    baseUrl: sim.url,
    key,
    ...(options.reconcile
      ? { reconcile: { lagMs: drillReconcileTiming(sim).lagMs, monitoringUrl: sim.origin } }
      : {}),
  });
  const dayMs = daySeconds * 1000;
  const reconcile = options.reconcile
    ? drillReconcileParts(sim, (at) => simulatorDay(sim, dayMs, at).start, {
        bucket: profile.defaultBucket,
        units: s.behind,
      })
    : undefined;
  const t = tally();
  const counts: Day['counts'] = { skippedTicks: 0 };
  const nextResetAt = sim.nextResetAt();
  const fraction = (at: number) => Math.round(((at - t0) / dayMs) * 1000) / 1000;
  const runs = watchBackfillRuns({
    bucket: setup.backfillBucket,
    fraction,
    lastMs: nextResetAt - 1,
    line: async (at) => open.service?.guard.pacingLine(CREDENTIAL, setup.backfillBucket, at),
  });
  // The one opener, as `quota-guard run` opens it: the ledger, the guard and the run history.
  const qg = await openQuotaGuard(setup.config, {
    logger: quietLogger(),
    scheduledNeed: scheduledNeed(setup.config),
    onEvent: t.on,
    // Its store is the drill's own, gone after it: no line of it belongs in the data directory.
    journal: false,
    clock: {
      nextReset: () => sim.nextResetAt(),
      // The simulator's compressed day is the upstream's day: the backfill's pacing and what it
      // holds back for the rest of the day's scheduled runs are counted over it, not over 24 hours.
      upstreamDay: (_zone, at) => simulatorDay(sim, dayMs, at),
    },
  });
  const ledger = qg.ledger;
  open.ledger = ledger;
  const service = await startService({
    qg,
    onEvent: (e) => {
      runs.on(e);
      if (e.type === 'finish' && e.result.job === 'backfill')
        progress(
          `t=${((e.at - t0) / 1000).toFixed(2)}s: backfill ${e.result.outcome} (${backfillEnd(e.result, setup.backfillBucket)}), ${fmt(e.result.units)} units`,
        );
      if (e.type !== 'skip') return;
      counts.skippedTicks++;
      progress(
        `t=${((e.at - t0) / 1000).toFixed(2)}s: tick of ${e.job} skipped, still ${e.why} since t=${((e.since - t0) / 1000).toFixed(2)}s`,
      );
    },
    ...(options.http ? { http: options.http } : {}),
    ...(reconcile ? { reconcile: reconcile.parts } : {}),
  });
  open.service = service;
  options.onStart?.(service);
  const serviceStartedAt = Date.now();
  progress(
    `day of ${daySeconds}s on ${ledger.kind} (${profile.id}): an hour is ${setup.hourSeconds}s, ${regions.length} regions, backfill on ${setup.backfillBucket}`,
  );
  return {
    sim,
    service,
    ledger,
    setup,
    t0,
    dayMs,
    fraction,
    nextResetAt,
    serviceStartedAt,
    tally: t,
    counts,
    backfillRuns: runs.runs,
    ...(reconcile ? { reconcile } : {}),
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** The simulator's day around `at` (epoch ms): its days follow each other, `dayMs` long. */
function simulatorDay(sim: Simulator, dayMs: number, at: number): { start: number; end: number } {
  const next = sim.nextResetAt();
  const end = next + Math.ceil((at + 1 - next) / dayMs) * dayMs;
  return { start: end - dayMs, end };
}

/**
 * The manual burst at a third of the day, someone else's spend at `behindAt` of it. Returns what
 * waits for the burst to finish.
 */
function scheduleDisturbances(s: DaySettings, day: Day, timers: NodeJS.Timeout[]): () => Promise<void> {
  const { sim: simulator, service: svc, t0, dayMs } = day;
  let burst: Promise<void> = Promise.resolve();
  timers.push(
    setTimeout(() => {
      burst = (async () => {
        const client = svc.jobs.upstream.get(CREDENTIAL);
        for (let i = 0; i < s.burstCalls; i++) {
          await svc.guard.call(
            { credential: CREDENTIAL, method: 'search.list', tier: 'manual', tag: 'manual:search.list' },
            () => client.searchList({ q: `drill ${i}`, maxResults: 5 }),
          );
        }
        s.progress(
          `t=${((Date.now() - t0) / 1000).toFixed(1)}s: manual burst of ${s.burstCalls} search.list calls`,
        );
      })().catch(() => undefined);
    }, dayMs / 3),
    setTimeout(() => {
      day.counts.behindSpentAt = Date.now();
      simulator.spendBehind(PROJECT, s.profile.defaultBucket, s.behind);
      s.progress(
        `t=${((Date.now() - t0) / 1000).toFixed(1)}s: someone else spent ${fmt(s.behind)} units behind the guard`,
      );
    }, dayMs * s.behindAt),
  );
  return () => burst;
}

/** The day's spend curve: what the upstream counted on the backfill's bucket, ours, and the line. */
function startCurve(
  day: Day,
  timers: NodeJS.Timeout[],
): { curve: DrillReport['curve']; sample: () => Promise<void>; sampler: NodeJS.Timeout } {
  const { sim: simulator, service: svc, t0, dayMs } = day;
  const { backfillBucket } = day.setup;
  const curve: DrillReport['curve'] = [];
  let sampling = false;
  const sample = async () => {
    if (sampling) return;
    sampling = true;
    try {
      const at = Date.now();
      // A sample taken once the day has ended reads the next day's count: the curve ends with the day.
      // The upstream's count is read at once, before awaiting the ledger: on a busy machine the await
      // can outlast the day's end, and a count read after it would be the next day's.
      if (at - t0 >= dayMs) return;
      const u = simulator.usage(PROJECT, backfillBucket);
      const line = await svc.guard.pacingLine(CREDENTIAL, backfillBucket, at).catch(() => undefined);
      curve.push({
        f: Math.round(((at - t0) / dayMs) * 1000) / 1000,
        used: u.used,
        ours: u.used - u.spentBehind,
        backfill: line?.spentToday ?? null,
        line: line?.allowed ?? null,
      });
    } finally {
      sampling = false;
    }
  };
  const sampler = setInterval(() => void sample(), dayMs / 96);
  timers.push(sampler);
  return { curve, sample, sampler };
}
