/**
 * What a drill watches while its day runs (the guard's events, the warnings) and what it reads and
 * checks at the end: each bucket's figures, the runs by kind, the trending runs completed, the checks.
 */

import type { CredentialConfig } from '../config/types.js';
import { bucketWindow } from '../guard/keys.js';
import type { GuardEvent, GuardLogger } from '../guard/types.js';
import { jobKind } from '../history/types.js';
import type { YouTubeConfig } from '../youtube/config/types.js';
import { trendingRuns } from '../youtube/cron-runs.js';
import type { JobResult } from '../youtube/job-library/types.js';
import { endsText } from './backfill-runs.js';
import { fmt, PROJECT } from './setup.js';
import type { Day, DrillBackfillRun, DrillBucket, DrillCheck, Tally, TrendingCompletion } from './types.js';

export function tally(): Tally & { on(e: GuardEvent): void } {
  const t: Tally & { on(e: GuardEvent): void } = {
    firstBlockAt: null,
    firstDryAt: null,
    quotaExceededBeforeBlock: 0,
    quotaExceededTotal: 0,
    allowedAfterBlock: 0,
    blocked: new Set(),
    scheduledDenied: 0,
    scheduledBlocked: 0,
    manualUnits: 0,
    failOpen: 0,
    on(e) {
      switch (e.type) {
        case 'upstream-error':
          if (e.error.reason === 'quotaExceeded') {
            t.firstDryAt ??= Date.now();
            t.quotaExceededTotal++;
            if (t.firstBlockAt === null) t.quotaExceededBeforeBlock++;
          }
          break;
        case 'block':
          t.firstBlockAt ??= Date.now();
          t.blocked.add(e.bucket);
          break;
        case 'spend': {
          const o = e.outcome;
          if (o.allowed && t.blocked.has(o.bucket)) t.allowedAfterBlock++;
          if (o.allowed && o.tier === 'manual') t.manualUnits += o.cost;
          if (!o.allowed && o.tier === 'scheduled') {
            if (o.reason === 'blocked') t.scheduledBlocked++;
            else t.scheduledDenied++;
          }
          break;
        }
        case 'refund':
          if (e.outcome.tier === 'manual') t.manualUnits -= e.outcome.cost;
          break;
        case 'fail-open':
          t.failOpen++;
          break;
        default:
          break;
      }
    },
  };
  return t;
}

/** A logger that keeps the last warnings (a drill writes thousands of page lines otherwise). */
export function quietLogger(): GuardLogger & { warnings: number; last: string[] } {
  const l = {
    warnings: 0,
    last: [] as string[],
    info: () => undefined,
    warn: (_: object, msg: string) => {
      l.warnings++;
      l.last.push(msg);
      if (l.last.length > 20) l.last.shift();
    },
  };
  return l;
}

/** Each bucket's figures: what the simulator charged and served, what the ledger recorded. */
export async function readBuckets(
  day: Day,
  behind: number,
): Promise<{ buckets: Record<string, DrillBucket>; recordedUnits: number }> {
  const { sim: simulator, ledger } = day;
  const { credential } = day.setup;
  const buckets: Record<string, DrillBucket> = {};
  let recordedUnits = 0;
  for (const b of Object.values(credential.buckets)) {
    const w = bucketWindow(credential, b, Date.now());
    // Our own entries: the reconcile's outside spend (drill --reconcile) is reported beside them.
    const peek = await ledger.peek({ key: w.key, windowMs: w.windowMs });
    const outside = peek.byTag[`outside:${PROJECT}`] ?? 0;
    const recorded = peek.used - outside;
    const charged = simulator.charged({ project: PROJECT, bucket: b.id });
    const refused = simulator.requests
      .filter((r) => r.project === PROJECT && r.bucket === b.id && r.reason === 'quotaExceeded')
      .reduce((n, r) => n + r.cost, 0);
    // Read from what was spent, not from the simulator's day, which may have ended by now.
    const spentBehind = b.id === 'units' ? behind : 0;
    const spendable = Math.min(b.ceilings.scheduled, b.quota - spentBehind);
    const served = charged - refused;
    buckets[b.id] = {
      quota: b.quota,
      reserve: b.reserve,
      charged,
      recorded,
      served,
      behind: spentBehind,
      outside,
      spendable,
      utilisation: spendable > 0 ? Math.round((served / spendable) * 10_000) / 10_000 : 0,
    };
    recordedUnits += recorded;
  }
  return { buckets, recordedUnits };
}

/** Job runs by kind (`trending`, `backfill`) and outcome. */
export function runsByKind(results: readonly JobResult[]): Record<string, Record<string, number>> {
  const runs: Record<string, Record<string, number>> = {};
  for (const r of results) {
    const kind = jobKind(r.job);
    const byOutcome = runs[kind] ?? {};
    byOutcome[r.outcome] = (byOutcome[r.outcome] ?? 0) + 1;
    runs[kind] = byOutcome;
  }
  return runs;
}

/**
 * Every region's run of the ticks the schedule had between the start of the service and the end of
 * the day (a tick before the service started ran no region), against the runs that completed.
 */
export function trendingCompletion(
  config: YouTubeConfig,
  credential: CredentialConfig,
  regions: readonly string[],
  serviceStartedAt: number,
  stopAt: number,
  results: readonly JobResult[],
): TrendingCompletion {
  const { ticks } = trendingRuns(config, credential, serviceStartedAt, stopAt);
  const stagger = config.schedules.trending.staggerMs;
  const scheduled = ticks.reduce(
    (n, tick) => n + regions.filter((_, i) => tick + i * stagger < stopAt).length,
    0,
  );
  const done = results.filter((r) => r.job.startsWith('trending') && r.outcome === 'done').length;
  const completed = scheduled > 0 ? Math.round((done / scheduled) * 1000) / 1000 : 1;
  return { scheduled, done, completed };
}

export function drillChecks(f: {
  t: Tally;
  trending: TrendingCompletion;
  main: DrillBucket;
  backfillBucket: string;
  chargedUnits: number;
  recordedUnits: number;
  fraction: (at: number | null) => number | null;
  backfillRuns: readonly DrillBackfillRun[];
}): DrillCheck[] {
  const { t, trending, main, backfillBucket, chargedUnits, recordedUnits, fraction } = f;
  const last = f.backfillRuns.at(-1);
  return [
    {
      name: 'trendingRunsCompleted',
      ok: trending.completed >= 0.97,
      detail: `${trending.done} of ${trending.scheduled} regional trending runs completed (${(trending.completed * 100).toFixed(1)} %, target ≥ 97 %); the upstream ran dry at ${t.firstDryAt === null ? 'no point' : `${((fraction(t.firstDryAt) ?? 0) * 100).toFixed(1)} %`} of the day`,
    },
    {
      name: 'utilisation',
      ok: main.utilisation >= 0.99,
      detail: `${backfillBucket}: ${fmt(main.served)} units served of ${fmt(main.spendable)} spendable (${(main.utilisation * 100).toFixed(2)} %, target ≥ 99 %); the backfill's runs ended by ${endsText(f.backfillRuns) || 'none'}${last ? `, the last at ${(last.to * 100).toFixed(1)} % of the day (${last.end})` : ''}`,
    },
    {
      name: 'upstreamQuotaExceeded',
      ok: t.quotaExceededBeforeBlock <= 1 && t.allowedAfterBlock === 0,
      detail: `${t.quotaExceededBeforeBlock} quotaExceeded before the guard blocked the bucket (at most 1), ${t.allowedAfterBlock} spends allowed after the block (must be 0)`,
    },
    {
      name: 'chargedEqualsRecorded',
      ok: chargedUnits === recordedUnits,
      detail: `the simulator charged ${fmt(chargedUnits)} units, the ledger recorded ${fmt(recordedUnits)}`,
    },
    {
      name: 'scheduledDenied',
      ok: t.scheduledDenied === 0,
      detail: `${t.scheduledDenied} scheduled spends denied by the budget while the backfill ran (must be 0); ${t.scheduledBlocked} denied by the upstream block`,
    },
    {
      name: 'noFailOpen',
      ok: t.failOpen === 0,
      detail: `${t.failOpen} spends let through unrecorded`,
    },
  ];
}
