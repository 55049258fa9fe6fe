/**
 * Dry runs: what a job run would spend, set against what the live ledger lets it spend now. Nothing
 * calls the upstream and nothing is recorded: the ledger is only read (the same figures `status`
 * shows), the cache only counted.
 */

import { methodOf } from '../../config/lookups.js';
import type { Tier } from '../../config/types.js';
import { budgetCovers } from '../../guard/keys.js';
import { quotaStatus } from '../../guard/status.js';
import type { Ledger } from '../../ledger/types.js';
import type { YouTubeConfig } from '../config/types.js';
import { scheduledNeed } from '../cron-runs.js';
import { trendingJob } from '../job-names.js';
import { TRENDING_METHOD, trendingCalls, trendingCallsText } from '../trending-spend.js';

/** One job's most expensive run: `calls` calls of `method` at `cost` units each. */
export interface DryRunJob {
  job: string;
  credential: string;
  method: string;
  tier: Tier;
  calls: number;
  /** What the calls are: `4 pages`, `12 batches of 50 videos`. */
  what: string;
}

/** One trending run of `region` at its most: every chart's `maxPages` pages of `videos.list`. */
export function trendingDryRun(config: YouTubeConfig, credential: string, region: string): DryRunJob {
  return {
    job: trendingJob(region),
    credential,
    method: TRENDING_METHOD,
    tier: 'scheduled',
    calls: trendingCalls(config, region),
    what: trendingCallsText(config, region),
  };
}

export interface DryRunSpend extends DryRunJob {
  bucket: string;
  cost: number;
  units: number;
}

/** Per credential, bucket and tier: the jobs' units against what may be spent now. */
export interface DryRunBucket {
  credential: string;
  bucket: string;
  tier: Tier;
  units: number;
  /** Units the tightest of the tier's ceiling, the pace and the narrower budgets leaves now. */
  spendable: number;
  /** What leaves the least: `the scheduled ceiling`, `units pace`, `budget backfill-hourly`. */
  limitedBy: string;
  /** ISO; set when the bucket is blocked (nothing may be spent until then). */
  blockedUntil: string | null;
  fits: boolean;
}

export interface DryRunReport {
  at: string;
  store: string;
  jobs: DryRunSpend[];
  buckets: DryRunBucket[];
  fits: boolean;
}

/** Set `jobs` against the ledger's figures now. Reads the ledger only. */
export async function dryRun(
  config: YouTubeConfig,
  ledger: Ledger,
  jobs: readonly DryRunJob[],
): Promise<DryRunReport> {
  const spends: DryRunSpend[] = jobs.map((j) => {
    const spec = methodOf(config.credential(j.credential), j.method);
    return { ...j, bucket: spec.bucket, cost: spec.cost, units: j.calls * spec.cost };
  });
  const credentials = [...new Set(spends.map((s) => s.credential))];
  const buckets: DryRunBucket[] = [];
  let at = new Date().toISOString();
  for (const id of credentials) {
    const credential = config.credential(id);
    const status = await quotaStatus(config, ledger, {
      credential: id,
      scheduledNeed: scheduledNeed(config),
    });
    at = status.at;
    const groups = new Map<string, DryRunSpend[]>();
    for (const s of spends.filter((x) => x.credential === id)) {
      const k = `${s.bucket}\u0000${s.tier}`;
      groups.set(k, [...(groups.get(k) ?? []), s]);
    }
    for (const group of groups.values()) {
      const { bucket, tier } = group[0] as DryRunSpend;
      const b = status.credentials[0]?.buckets.find((x) => x.id === bucket);
      if (!b) continue;
      const limits: Array<[string, number]> = [[`the ${tier} ceiling`, b.remaining[tier]]];
      if (b.pace) limits.push([b.pace.id, b.pace.remaining]);
      for (const budget of credential.budgets) {
        const s = b.budgets.find((x) => x.id === budget.id);
        if (s && group.some((g) => budgetCovers(budget, bucket, g.method, tier)))
          limits.push([`budget ${budget.id}`, s.remaining]);
      }
      const [limitedBy, spendable] = limits.reduce((min, l) => (l[1] < min[1] ? l : min));
      const units = group.reduce((n, g) => n + g.units, 0);
      buckets.push({
        credential: id,
        bucket,
        tier,
        units,
        spendable: b.blockedUntil !== null ? 0 : spendable,
        limitedBy: b.blockedUntil !== null ? `a block (${b.blockedReason ?? 'no reason given'})` : limitedBy,
        blockedUntil: b.blockedUntil,
        fits: b.blockedUntil === null && units <= spendable,
      });
    }
  }
  return { at, store: ledger.kind, jobs: spends, buckets, fits: buckets.every((b) => b.fits) };
}

const N = new Intl.NumberFormat('en-US');

/** The human form: one line per job, one per bucket and tier, and the verdict. */
export function renderDryRun(r: DryRunReport): string {
  const out = [`dry run against the ${r.store} ledger at ${r.at}: no upstream call, nothing recorded`];
  const width = Math.max(...r.jobs.map((j) => j.job.length));
  for (const j of r.jobs)
    out.push(
      `  ${j.job.padEnd(width)}  ${j.what}: ${N.format(j.calls)} ${j.method} call${j.calls === 1 ? '' : 's'} × ${N.format(j.cost)} = ${N.format(j.units)} unit${j.units === 1 ? '' : 's'} of ${j.credential}/${j.bucket} (${j.tier})`,
    );
  for (const b of r.buckets) {
    const head = `${b.credential}/${b.bucket}, ${b.tier} tier: at most ${N.format(b.units)} units; ${N.format(b.spendable)} may be spent now (${b.limitedBy})`;
    out.push(
      b.fits
        ? `${head}: fits`
        : b.blockedUntil !== null
          ? `${head}: blocked until ${b.blockedUntil}, the run would stop at once`
          : `${head}: the run would stop after about ${N.format(b.spendable)} units`,
    );
  }
  return `${out.join('\n')}\n`;
}
