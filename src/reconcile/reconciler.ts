/**
 * One reconcile: for every Google Cloud project a credential names, the upstream's own count of
 * each bucket held against what the ledger recorded over the same minutes, and what the ledger did
 * not see written down as outside spend (outside.ts says how much, and at which minute).
 *
 * The span is the upstream's day so far: from its midnight (or from as far back as the bucket's
 * window reaches, when that is nearer) to the last whole minute that ended at least `lag` ago; it
 * is read whole every time, so a point the upstream publishes late is seen where it belongs. The
 * credentials of one project are added up (two keys of one project never see each other as
 * outside); the outside spend is written to each of them, since each log stands for the project's
 * quota.
 *
 * Outside spend is one entry per credential, bucket and minute, tagged `outside:<project>`, at the
 * minute's start, with an id made of the bucket and the minute: written with the ledger's `record`
 * and `replace`, so that the entry's cost becomes what this reconcile computed whatever it was
 * before. A second reconcile, or one running at the same time on another host, computes the same
 * and changes nothing; a reconcile that fails anywhere before it writes records nothing.
 *
 * `reconcileOnce()` returns a value (per project, per bucket: the upstream's count, the ledger's,
 * the outside spend, what changed, or the error) that the CLI prints and that a scheduler, a
 * status page or metrics can keep as the last result.
 */
import { createHash } from 'node:crypto';
import { startOfDay } from '../calendar-day.js';
import type { BucketConfig, Config, CredentialConfig } from '../config/types.js';
import { isQuotaGuardError, QuotaGuardError } from '../errors.js';
import { entryKey } from '../guard/entries.js';
import { bucketWindow } from '../guard/keys.js';
import type { Ledger } from '../ledger/types.js';
import type { Logger } from '../logger.js';
import { planOutside } from './outside.js';
import type { CountedQuota, UpstreamCountSource } from './source.js';

/** What a reconcile needs of the ledger: its two late-entry operations. */
export type ReconcileLedger = Pick<Ledger, 'record' | 'perMinute'>;

/** The tag of outside spend: `outside:<project>`. */
export const OUTSIDE_TAG_PREFIX = 'outside:';

/** Time as the reconcile reads it. */
export interface ReconcileClock {
  now(): number;
  /** Where the upstream's day containing `at` starts, for a credential (its time zone's midnight). */
  dayStart(credential: CredentialConfig, at: number): number;
  /** A minute, in ms. */
  minuteMs: number;
}

export const REAL_TIME: ReconcileClock = {
  now: () => Date.now(),
  dayStart: (credential, at) => startOfDay(credential.timeZone, at),
  minuteMs: 60_000,
};

export interface ReconcilerOptions {
  config: Pick<Config, 'credentials' | 'profiles' | 'reconcile'>;
  ledger: ReconcileLedger;
  source: UpstreamCountSource;
  clock?: ReconcileClock;
  logger?: Logger;
}

/** One bucket of one project, reconciled over `[from, through)`. */
export interface BucketReconcile {
  bucket: string;
  /** The upstream's name of the quota read. */
  metric: string;
  from: number;
  through: number;
  /** The upstream's count over the span. */
  upstream: number;
  /** The ledger's own units over the span, every credential of the project. */
  own: number;
  /** The outside spend the ledger holds for the span now. */
  outside: number;
  /** Outside units this reconcile added (below 0: a late spend of ours took some back). */
  added: number;
  /** Outside entries written, replaced or taken out (each credential's counted). */
  written: number;
  /** Units the ledger holds above the upstream's count (reported, never taken back). */
  ledgerAbove: number;
}

export type ProjectReconcile =
  | {
      project: string;
      credentials: string[];
      ok: true;
      /** Nothing to compare yet: the day's first minutes are still within the lag. */
      waiting?: true;
      buckets: BucketReconcile[];
      /** Requests made to the upstream's count. */
      reads: number;
    }
  | {
      project: string;
      credentials: string[];
      ok: false;
      error: { code: string; message: string };
      reads: number;
    };

export interface ReconcileResult {
  /** When it ran (epoch ms). */
  at: number;
  /** Every project reconciled. */
  ok: boolean;
  projects: ProjectReconcile[];
}

export interface Reconciler {
  /**
   * Reconciles every project once. A project's failure is in its result (no outside spend is
   * recorded from it); only a bug rejects.
   */
  reconcileOnce(options?: { signal?: AbortSignal }): Promise<ReconcileResult>;
  /** The last result, once one has run. */
  readonly last: ReconcileResult | undefined;
}

/** Credentials by the project they name, in the config's order; those naming none are left out. */
export function projectsOf(credentials: readonly CredentialConfig[]): Map<string, CredentialConfig[]> {
  const out = new Map<string, CredentialConfig[]>();
  for (const c of credentials) {
    if (c.project === undefined) continue;
    const list = out.get(c.project) ?? [];
    list.push(c);
    out.set(c.project, list);
  }
  return out;
}

/** The entry id of one minute's outside spend in one bucket: the bucket and the minute. */
export function outsideEntryId(bucket: string, minute: number): string {
  const name = /^[A-Za-z0-9_.-]{1,24}$/.test(bucket)
    ? bucket
    : createHash('sha256').update(bucket).digest('base64url').slice(0, 16);
  return `outside.${name}.${minute.toString(36)}`;
}

export function createReconciler(options: ReconcilerOptions): Reconciler {
  const clock = options.clock ?? REAL_TIME;
  let last: ReconcileResult | undefined;
  return {
    get last() {
      return last;
    },
    async reconcileOnce(o = {}) {
      const at = clock.now();
      const projects: ProjectReconcile[] = [];
      for (const [project, credentials] of projectsOf(options.config.credentials)) {
        projects.push(await reconcileProject(options, clock, project, credentials, at, o.signal));
      }
      last = { at, ok: projects.every((p) => p.ok), projects };
      return last;
    },
  };
}

/** A bucket of the project to reconcile: its quota metric and each credential's log. */
interface Plan {
  quota: CountedQuota;
  from: number;
  logs: Array<{ credential: CredentialConfig; key: string; windowMs: number }>;
}

async function reconcileProject(
  o: ReconcilerOptions,
  clock: ReconcileClock,
  project: string,
  credentials: CredentialConfig[],
  now: number,
  signal: AbortSignal | undefined,
): Promise<ProjectReconcile> {
  const ids = credentials.map((c) => c.id);
  let reads = 0;
  try {
    const first = credentials[0]!;
    const m = clock.minuteMs;
    const dayStart = clock.dayStart(first, now);
    const through = dayStart + Math.floor((now - o.config.reconcile.lagMs - dayStart) / m) * m;
    const usageMetric =
      o.config.reconcile.monitoring.metricType ?? o.config.profiles[first.profile]?.usageMetric;
    if (usageMetric === undefined) {
      throw new QuotaGuardError(
        'QG_CONFIG_INVALID',
        `${project}: profile ${first.profile} names no usage metric to read (profiles.${first.profile}.usageMetric, or reconcile.monitoring.metricType)`,
      );
    }
    const plans = bucketPlans(o.config, credentials, dayStart, now, m);
    if (through <= dayStart || plans.length === 0) {
      return {
        project,
        credentials: ids,
        ok: true,
        ...(plans.length > 0 ? { waiting: true } : {}),
        buckets: [],
        reads,
      };
    }
    const count = await o.source.count({
      project,
      quotas: plans.map((p) => p.quota),
      usageMetric,
      fromMs: dayStart,
      toMs: through,
      minuteMs: m,
      ...(signal !== undefined ? { signal } : {}),
    });
    reads += count.reads;
    const buckets: BucketReconcile[] = [];
    for (const p of plans) {
      const from = Math.min(p.from, through);
      const upstream = (count.perMinute[p.quota.bucket] ?? []).slice((from - dayStart) / m);
      buckets.push(await reconcileBucket(o.ledger, project, p, from, through, m, upstream));
    }
    for (const b of buckets) logBucket(o.logger, project, b);
    return { project, credentials: ids, ok: true, buckets, reads };
  } catch (e) {
    if (!isQuotaGuardError(e)) throw e;
    o.logger?.warn({ project, code: e.code }, `reconcile ${project}: ${e.message}`);
    return { project, credentials: ids, ok: false, error: { code: e.code, message: e.message }, reads };
  }
}

/** The buckets a project's count is read for: those with a quota metric, on every credential that has them. */
function bucketPlans(
  config: ReconcilerOptions['config'],
  credentials: CredentialConfig[],
  dayStart: number,
  now: number,
  minuteMs: number,
): Plan[] {
  const names = [...new Set(credentials.flatMap((c) => Object.keys(c.buckets)))];
  const plans: Plan[] = [];
  for (const bucket of names) {
    const holders = credentials.filter((c) => Object.hasOwn(c.buckets, bucket));
    const metric =
      config.reconcile.quotaMetrics[bucket] ??
      config.profiles[holders[0]!.profile]?.upstreamNames[bucket]?.metric;
    if (metric === undefined) continue;
    const logs = holders.map((credential) => {
      const w = bucketWindow(credential, credential.buckets[bucket] as BucketConfig, dayStart);
      return { credential, key: w.key, windowMs: w.windowMs };
    });
    // A window shorter than the day so far: only the minutes it still holds are compared.
    const reach = now - Math.min(...logs.map((l) => l.windowMs));
    const from = Math.max(dayStart, dayStart + Math.ceil((reach - dayStart) / minuteMs) * minuteMs);
    plans.push({ quota: { bucket, metric }, from, logs });
  }
  return plans;
}

async function reconcileBucket(
  ledger: ReconcileLedger,
  project: string,
  p: Plan,
  from: number,
  through: number,
  minuteMs: number,
  upstream: readonly number[],
): Promise<BucketReconcile> {
  const n = Math.round((through - from) / minuteMs);
  const own = new Array<number>(n).fill(0);
  const outsideNow: number[][] = [];
  for (const log of p.logs) {
    const row = new Array<number>(n).fill(0);
    const minutes = await ledger.perMinute({
      key: log.key,
      windowMs: log.windowMs,
      fromMs: from,
      toMs: through,
      // A compressed day's minutes (a drill's), counted from the span's start like the upstream's.
      ...(minuteMs !== 60_000 ? { minuteMs } : {}),
    });
    for (const u of minutes) {
      const i = Math.floor((u.minute - from) / minuteMs);
      if (i < 0 || i >= n) continue;
      own[i] = own[i]! + u.own;
      row[i] = row[i]! + u.outside;
    }
    outsideNow.push(row);
  }
  const plan = planOutside({ upstream: upstream.slice(0, n), own });
  let written = 0;
  for (const [j, log] of p.logs.entries()) {
    for (let i = 0; i < n; i++) {
      const cost = plan.outside[i]!;
      if (cost === outsideNow[j]![i]) continue;
      const minute = from + i * minuteMs;
      const id = outsideEntryId(p.quota.bucket, minute);
      await ledger.record({
        budgets: [{ key: log.key, windowMs: log.windowMs }],
        cost,
        tag: `${OUTSIDE_TAG_PREFIX}${project}`,
        entry: {
          key: entryKey(log.credential.id, id),
          id,
          request: JSON.stringify(['outside', project, p.quota.bucket, minute]),
        },
        at: minute,
        replace: true,
      });
      written++;
    }
  }
  const before = (outsideNow[0] ?? []).reduce((a, b) => a + b, 0);
  return {
    bucket: p.quota.bucket,
    metric: p.quota.metric,
    from,
    through,
    upstream: plan.upstream,
    own: plan.own,
    outside: plan.outsideTotal,
    added: plan.outsideTotal - before,
    written,
    ledgerAbove: plan.ledgerAbove,
  };
}

function logBucket(logger: Logger | undefined, project: string, b: BucketReconcile): void {
  if (!logger) return;
  const fields = {
    project,
    bucket: b.bucket,
    upstream: b.upstream,
    own: b.own,
    outside: b.outside,
    added: b.added,
  };
  const through = new Date(b.through).toISOString();
  if (b.ledgerAbove > 0) {
    logger.warn(
      { ...fields, ledgerAbove: b.ledgerAbove },
      `reconcile ${project} ${b.bucket}: the ledger holds ${b.ledgerAbove} units more than the upstream counted up to ${through} (a refund missed, or requests that never arrived); left as it is`,
    );
  } else logger.info(fields, `reconcile ${project} ${b.bucket}: up to ${through}`);
}
