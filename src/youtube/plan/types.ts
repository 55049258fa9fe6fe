/**
 * What `planBudget` answers: per credential and bucket, the sources that spend it (`PlanLine`), the
 * limits they must stay under (`PlanCheck`) and the changes to the trending schedule that would
 * make it fit (`PlanChange`). The CLI's `plan` renders it; `plan --json` prints it as it is.
 */
import type { Tier } from '../../config/types.js';

export type SourceKind = 'trending' | 'backfill' | 'expected';

/** One source of spending in one bucket. */
export interface PlanLine {
  source: SourceKind;
  /** `trending`, `backfill` or the expected spend's id. */
  id: string;
  tier: Tier;
  method: string;
  /** Units per call. */
  cost: number;
  /** Units at most per bucket window (24 h sliding, or one upstream day); for the backfill, the most it can take. */
  units: number;
  /** Runs per bucket window at most (trending). */
  runs?: number;
  /** How `units` is made up, e.g. `8 regions × 1 chart × 4 pages × 24 runs × 1 unit`. */
  detail: string;
}

export type CheckKind = 'ceiling' | 'headroom' | 'manual' | 'pace' | 'budget';

/** One limit the schedules must stay under. */
export interface PlanCheck {
  kind: CheckKind;
  /** e.g. `units scheduled ceiling`, `units pace`, `budget manual-search`. */
  name: string;
  limit: number;
  /** Its window in ms (upstream-day: the longest day, 25 h). */
  windowMs: number;
  window: 'sliding' | 'upstream-day';
  /** Units the schedules spend at most within the window. */
  demand: number;
  fits: boolean;
  /** demand − limit when it does not fit, else 0. */
  over: number;
  /** What to change when it does not fit. */
  fixes: string[];
}

/**
 * A change to the trending schedule that makes a bucket fit, checked by planning the changed config
 * again: fewer runs (a cron expression), fewer pages, or some regions moved to another credential.
 */
export interface PlanChange {
  /** The advice as one line. */
  text: string;
  /** `schedules.trending.cron` to set. */
  cron?: string;
  /** `schedules.trending.maxPages` to set. */
  maxPages?: number;
  /** Regions to take out of `regions` (to another credential). */
  moveRegions?: string[];
}

export interface BucketPlan {
  credential: string;
  bucket: string;
  quota: number;
  reserve: number;
  backfillHeadroom: number;
  ceilings: Record<Tier, number>;
  window: 'sliding' | 'upstream-day';
  windowMs: number;
  lines: PlanLine[];
  /** Units the scheduled tier spends at most per window. */
  scheduledUnits: number;
  checks: PlanCheck[];
  /** Advice that does not make the plan fail. */
  notes: string[];
  /** Changes to the trending schedule after which every check of this bucket that trending takes part in fits. */
  changes: PlanChange[];
  fits: boolean;
}

export interface PlanReport {
  fits: boolean;
  /** The credential the jobs spend. */
  jobsCredential: string;
  /**
   * Whether the config runs the application's schedules (trending and backfill); false for a config
   * of another API, whose plan holds its `expected` spends only.
   */
  schedules: boolean;
  buckets: BucketPlan[];
  /** Every check that does not fit, as one line each. */
  problems: string[];
  /** Configuration that does nothing (a budget covering nothing its tiers spend), as one line each. */
  warnings: string[];
}

export interface PlanOptions {
  /** Where the week looked at starts (default now). */
  now?: number;
  /** Work out and check the changes that would make a bucket fit (default true). */
  advise?: boolean;
}
