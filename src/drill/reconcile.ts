/**
 * The drill with the reconcile on (`drill --reconcile`): the service reconciles with the
 * simulator's Cloud Monitoring every five scaled minutes, with a lag of ten, on the simulator's
 * compressed minute (a 1,440th of its day) and its day, so that the unseen spender is seen within
 * the lag and budgeted, and the guard stops before the upstream says the quota is used up.
 *
 * What it adds to the report: when the spend behind the guard's back was seen (recorded as outside
 * spend), the outside units the ledger holds, Google's count against the ledger's (own + outside)
 * at the day's end and the units the upstream charged in the last lag (the most they may differ
 * by), and the utilisation of what the ceilings leave once the outside spend is counted.
 */
import { staticTokens } from '../reconcile/google-auth.js';
import { cloudMonitoringSource } from '../reconcile/google-monitoring.js';
import type { ReconcileResult } from '../reconcile/reconciler.js';
import type { TickSource } from '../scheduler/scheduler.js';
import type { Simulator } from '../youtube/simulator/index.js';
import type { DrillCheck, DrillReconcile, ReconcileWatch } from './types.js';

/** Scaled minutes between reconciles, and the lag: as the defaults are in real minutes. */
export const DRILL_RECONCILE_EVERY_MINUTES = 5;
export const DRILL_RECONCILE_LAG_MINUTES = 10;

/** The reconcile's settings for a day: its lag in ms (for the config), and its period. */
export function drillReconcileTiming(sim: Simulator): { minuteMs: number; lagMs: number; periodMs: number } {
  const minuteMs = sim.monitoring.minuteMs;
  return {
    minuteMs,
    lagMs: DRILL_RECONCILE_LAG_MINUTES * minuteMs,
    periodMs: DRILL_RECONCILE_EVERY_MINUTES * minuteMs,
  };
}

/** Ticks every `periodMs` (node-cron ticks no faster than a second). */
function everyTicks(periodMs: number): TickSource {
  return {
    schedule(_job, onTick) {
      const timer = setInterval(() => onTick(new Date()), periodMs);
      return { stop: () => clearInterval(timer) };
    },
  };
}

/** The reconcile's parts for the drill's service: the simulator's Monitoring, its minute and day. */
export function drillReconcileParts(
  sim: Simulator,
  dayStart: (at: number) => number,
  behind: { bucket: string; units: number },
): ReconcileWatch {
  const { minuteMs, periodMs } = drillReconcileTiming(sim);
  const seen: ReconcileWatch['seen'] = { runs: 0, failed: 0, outsideAt: null, outside: 0, starts: [] };
  const onResult = (r: ReconcileResult) => {
    seen.runs++;
    for (const p of r.projects) {
      if (!p.ok) {
        seen.failed++;
        continue;
      }
      const b = p.buckets.find((x) => x.bucket === behind.bucket);
      if (!b) continue;
      seen.outside = b.outside;
      seen.starts.push({ at: r.at, outside: b.outside });
      if (seen.outsideAt === null && behind.units > 0 && b.outside >= behind.units) seen.outsideAt = r.at;
    }
  };
  return {
    seen,
    parts: {
      source: cloudMonitoringSource({ baseUrl: sim.origin, tokens: staticTokens(sim.monitoring.token()) }),
      ticks: everyTicks(periodMs),
      clock: { now: () => Date.now(), dayStart: (_c, at) => dayStart(at), minuteMs },
      onResult,
    },
  };
}

/** The reconcile's figures at the day's end, and its checks. */
export function drillReconcileReport(f: {
  watch: ReconcileWatch;
  sim: Simulator;
  behindAt: number;
  /** Google's count of the bucket at the day's end, and `lag` before it. */
  upstreamAtEnd: number;
  upstreamLagBeforeEnd: number;
  /** The ledger's own units and its outside units of the bucket at the day's end. */
  own: number;
  outside: number;
  /** Units of ours the upstream served, and the bucket's backfill ceiling (its spender at the day's end). */
  served: number;
  ceiling: number;
  behind: number;
  quotaExceeded: number;
}): { reconcile: DrillReconcile; checks: DrillCheck[] } {
  const { minuteMs, lagMs, periodMs } = drillReconcileTiming(f.sim);
  const { seen } = f.watch;
  const seenAfterMs = seen.outsideAt === null ? null : seen.outsideAt - f.behindAt;
  const lastLag = Math.max(0, f.upstreamAtEnd - f.upstreamLagBeforeEnd);
  const ledger = f.own + f.outside;
  const difference = f.upstreamAtEnd - ledger;
  const withinCeiling = f.ceiling - f.behind;
  const reconcile: DrillReconcile = {
    minuteMs,
    lagMs,
    periodMs,
    runs: seen.runs,
    failed: seen.failed,
    seenAfterMinutes: seenAfterMs === null ? null : Math.round((seenAfterMs / minuteMs) * 10) / 10,
    outsideUnits: f.outside,
    upstreamAtEnd: f.upstreamAtEnd,
    ledgerAtEnd: ledger,
    difference,
    chargedInLastLag: lastLag,
    utilisationWithinCeiling:
      withinCeiling > 0 ? Math.round((f.served / withinCeiling) * 10_000) / 10_000 : 0,
  };
  // A spend is comparable once its minute and the next have ended (outside.ts counts a minute's
  // difference once the next minute still shows it) and the lag has passed: the first reconcile
  // that starts after that must see it (ticks that come while one runs are skipped, so on a busy
  // machine that may be more than a period later).
  const comparableAt = f.behindAt + lagMs + 2 * minuteMs;
  const first = seen.starts.find((x) => x.at >= comparableAt);
  const checks: DrillCheck[] = [
    {
      name: 'reconcileSawBehind',
      // Within 1 %: a call of ours the upstream charged minutes after the ledger recorded it (a
      // compressed minute is 50 to 80 ms) lowers the difference for as long, so a few units of the
      // spend are recorded by the next reconciles; the day's end checks the whole (upstreamEqualsLedger).
      ok: first !== undefined && first.outside >= Math.floor(0.99 * f.behind),
      detail: `the ${f.behind} units spent behind the guard were recorded as outside spend ${
        reconcile.seenAfterMinutes === null
          ? 'never'
          : `by the reconcile that started ${reconcile.seenAfterMinutes} scaled minutes after they were spent`
      }; the first to start once they were comparable (the lag and two minutes, ${DRILL_RECONCILE_LAG_MINUTES + 2}; it must see 99 %) ${
        first === undefined
          ? 'never came'
          : `started ${Math.round(((first.at - f.behindAt) / minuteMs) * 10) / 10} minutes after and ${first.outside >= f.behind ? 'saw them' : `saw ${first.outside}`}`
      }; ${seen.runs} reconciles, ${seen.failed} failed`,
    },
    {
      name: 'noExhaustionAnswers',
      ok: f.quotaExceeded === 0,
      detail: `${f.quotaExceeded} quotaExceeded answers from the upstream (target 0: the guard stops first)`,
    },
    {
      name: 'upstreamEqualsLedger',
      ok: Math.abs(difference) <= lastLag,
      detail: `at the day's end Google counted ${f.upstreamAtEnd} units, the ledger holds ${ledger} (own ${f.own} + outside ${f.outside}): ${difference} apart, at most the ${lastLag} charged in the last lag`,
    },
  ];
  return { reconcile, checks };
}

/**
 * The day's checks with the reconcile's: its own three, and the utilisation measured against what
 * the backfill's ceiling leaves once the outside spend is counted (the reserve and the backfill's
 * headroom are kept, so the quota less the unseen spender's units is out of reach by as much; at the
 * day's end the backfill is the one spender left, and its ceiling the one that binds); the drill's
 * own figure stays in the report and in the detail.
 */
export function withReconcileChecks(
  checks: DrillCheck[],
  r: { reconcile: DrillReconcile; checks: DrillCheck[] },
  f: { utilisation: number; reserve: number; bucket: string },
): DrillCheck[] {
  const u = r.reconcile.utilisationWithinCeiling;
  const out = checks.map((c) =>
    c.name !== 'utilisation'
      ? c
      : {
          name: 'utilisation',
          ok: u >= 0.99,
          detail: `${f.bucket}: ${(u * 100).toFixed(2)} % of what the backfill's ceiling leaves once the ${r.reconcile.outsideUnits} outside units are counted (target ≥ 99 %); of the quota less the unseen spender's units ${(f.utilisation * 100).toFixed(2)} %, the reserve of ${f.reserve} units and the backfill's headroom kept. ${c.detail}`,
        },
  );
  return [...out, ...r.checks];
}

/** Google's count of a bucket a while before the day's end: read by a timer, at `at`. */
export function upstreamCountAt(
  sim: Simulator,
  project: string,
  bucket: string,
  at: number,
  timers: NodeJS.Timeout[],
): () => number {
  let count: number | undefined;
  timers.push(
    setTimeout(
      () => {
        count = sim.usage(project, bucket).used;
      },
      Math.max(0, at - Date.now()),
    ),
  );
  return () => count ?? sim.usage(project, bucket).used;
}
