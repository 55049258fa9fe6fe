/** The drill's options and report, and the parts of a running drill that its modules share. */
import type { CredentialConfig } from '../config/types.js';
import type { JobOutcome } from '../history/types.js';
import type { HttpAddress } from '../http-address.js';
import type { Ledger, LedgerKind } from '../ledger/types.js';
import type { ProfileId, QuotaProfile } from '../profiles/profiles.js';
import type { ReconcileParts } from '../scheduler/reconcile.js';
import type { Service } from '../scheduler/service.js';
import type { YouTubeConfig } from '../youtube/config/types.js';
import type { Simulator } from '../youtube/simulator/index.js';
import type { DrillMixed } from './mixed-types.js';

export interface DrillOptions {
  /** Length of the compressed day in seconds (default 120; at least 24). */
  daySeconds?: number;
  /** The ledger: `sqlite:<path>`, `redis://…` or `redis-cluster://…` (default: a fresh SQLite file). */
  store?: string;
  /** Key prefix on Redis (default: one of its own per drill). */
  keyPrefix?: string;
  /**
   * Quota model: a built-in profile's id or a profile (e.g. one of a config's `profiles`; it must
   * price videos.list and search.list). Default youtube-classic, where the backfill competes with
   * trending for `units`.
   */
  profile?: ProfileId | QuotaProfile;
  /** Daily quota of `units` (and of `videos.batchGetStats` under youtube-2026); default 10,000. */
  quota?: number;
  /** Units someone else spends of the key at mid-day, behind the guard's back (default 20 % of the quota). */
  behind?: number;
  /** When in the day someone else spends them, as a fraction of the day (default 0.5, mid-day). */
  behindAt?: number;
  /** Manual `search.list` calls in the burst (default 5 for a 10,000-unit quota, in proportion to it). */
  burstCalls?: number;
  /** Pages per chart (default 4, the whole chart, for a 10,000-unit quota; in proportion to it, at least 1). */
  maxPages?: number;
  /** Regions (default the 8 defaults). */
  regions?: readonly string[];
  /** Keep the work directory (ledger and cache files) instead of removing it. */
  keep?: boolean;
  /** A line now and then while the day runs. */
  onProgress?: (line: string) => void;
  /** Serve the status page, /metrics and /healthz while the day runs (port 0: any free port). */
  http?: HttpAddress;
  /**
   * Host outside spenders: two `serve --decisions` instances over the store and a PHP and a Python
   * cron job spending through them (needs php with curl and python3; see src/drill/mixed.ts).
   */
  mixed?: boolean;
  /**
   * Reconcile with the simulator's Cloud Monitoring while the day runs (src/drill/reconcile.ts):
   * the spend behind the guard's back is seen within the lag and budgeted.
   */
  reconcile?: boolean;
  /** Called once the scheduled jobs have started (its `server` is set when `http` was given). */
  onStart?: (service: Service) => void;
}

export interface DrillBucket {
  quota: number;
  reserve: number;
  /** Units charged by the simulator for our requests (refused ones included: it charges them). */
  charged: number;
  /** Units of ours in the ledger's window at the end of the day (outside spend not counted). */
  recorded: number;
  /** Units of our requests the simulator served (charged less quotaExceeded answers). */
  served: number;
  /** Units someone else spent behind the guard's back. */
  behind: number;
  /** Outside spend the reconcile recorded in the ledger's window (0 without it); not in `recorded`. */
  outside: number;
  /** What we could spend: min(quota − reserve, quota − behind). */
  spendable: number;
  utilisation: number;
}

/**
 * Why a backfill run ended: its pacing line (`line`), the bucket at the backfill's ceiling
 * (`headroom`: the headroom, and what is held back for the day's scheduled runs), a narrower budget
 * (`budget`), the upstream's quotaExceeded and the block after it (`upstream`), the drill's end of
 * the day (`day-end`), nothing left due (`done`), anything else (`other`).
 */
export type BackfillEnd = 'line' | 'headroom' | 'budget' | 'upstream' | 'day-end' | 'done' | 'other';

/** One backfill run of the day. Times are fractions of the day. */
export interface DrillBackfillRun {
  from: number;
  to: number;
  outcome: JobOutcome;
  units: number;
  end: BackfillEnd;
  /** When its stop said it could resume. */
  resumeAt?: number;
  /** The line it ended with (the stop's message, or why it ended otherwise). */
  reason?: string;
  /**
   * The pacing line as it ended: the backfill's spend today, what its line allowed by then, its
   * allowance for the day, and the units left below its ceiling on the bucket.
   */
  line?: { spentToday: number; allowed: number | null; allowance: number; belowCeiling: number };
}

export interface DrillCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface DrillReport {
  ok: boolean;
  store: LedgerKind;
  profile: ProfileId;
  daySeconds: number;
  /** Length of one scaled hour (the cron period) in seconds. */
  hourSeconds: number;
  regions: number;
  maxPages: number;
  burstCalls: number;
  /** The bucket the backfill spends (utilisation is checked on it). */
  backfillBucket: string;
  /** Utilisation of the backfill's bucket: served / spendable. */
  utilisation: number;
  /** quotaExceeded answers the jobs saw before the guard blocked the bucket. */
  upstreamQuotaExceeded: number;
  /** quotaExceeded answers in all (requests already in flight when the block landed included). */
  upstreamQuotaExceededTotal: number;
  /** Spends the ledger allowed on a blocked bucket after the block (must be 0). */
  allowedAfterBlock: number;
  /** Units the simulator charged for our requests, all buckets. */
  chargedUnits: number;
  /** Units the ledger recorded, all buckets. */
  recordedUnits: number;
  /** Scheduled spends the budget denied (not counting the upstream block). */
  scheduledDenied: number;
  /** Scheduled spends denied because the bucket was blocked after the upstream's quotaExceeded. */
  scheduledBlocked: number;
  backfillUnits: number;
  trendingUnits: number;
  manualUnits: number;
  failOpenSpends: number;
  /** Cached videos the backfill had to refresh at the start. */
  backlogVideos: number;
  runs: Record<string, Record<string, number>>;
  skippedTicks: number;
  /** When the upstream blocked the bucket, as a fraction of the day (null when it never did). */
  blockedAtDayFraction: number | null;
  /** When the upstream first answered quotaExceeded (ran dry), as a fraction of the day (null: never). */
  dryAtDayFraction: number | null;
  /** When someone else spent behind the guard's back, as a fraction of the day. */
  behindAtDayFraction: number;
  /** Regional trending runs that completed (`done`) ÷ those the schedule had in the day. */
  trendingRunsCompleted: number;
  trendingRunsDone: number;
  trendingRunsScheduled: number;
  /**
   * The backfill bucket's day, sampled: the fraction of the day, the units the upstream counted
   * (someone else's included), ours, the backfill's, and what its pacing line allowed by then.
   */
  curve: Array<{ f: number; used: number; ours: number; backfill: number | null; line: number | null }>;
  /** Each backfill run, and why it ended. */
  backfillRuns: DrillBackfillRun[];
  /** When the backfill's line is lifted (the day's last backfill run), as a fraction of the day. */
  lineLiftedAtDayFraction: number | null;
  buckets: Record<string, DrillBucket>;
  checks: DrillCheck[];
  /** The machine's 1-minute load average as the day started and as it ended (a busy machine falls behind the line). */
  loadAverage: { start: number; end: number };
  elapsedMs: number;
  /** With `mixed`: the simulator and its keys, the `serve` instances, what each cron job did. */
  mixed?: DrillMixed;
  /** The ledger and cache files, when kept (`keep`). */
  workDir?: string;
  /** With `reconcile`: what the reconciles saw, and Google's count against the ledger's at the end. */
  reconcile?: DrillReconcile;
}

/** The reconcile's part of a drill's report (src/drill/reconcile.ts). Minutes are the day's scaled ones. */
export interface DrillReconcile {
  /** The scaled minute, the lag and the period between reconciles, in ms. */
  minuteMs: number;
  lagMs: number;
  periodMs: number;
  runs: number;
  failed: number;
  /** Scaled minutes from the spend behind the guard to its outside spend recorded (null: never). */
  seenAfterMinutes: number | null;
  /** Outside spend in the backfill's bucket at the day's end. */
  outsideUnits: number;
  /** Google's count of the bucket at the day's end, and the ledger's (own + outside). */
  upstreamAtEnd: number;
  ledgerAtEnd: number;
  /** upstreamAtEnd − ledgerAtEnd: at most chargedInLastLag. */
  difference: number;
  /** Units Google counted in the last lag before the day's end (not yet comparable). */
  chargedInLastLag: number;
  /**
   * Units of ours served ÷ (the backfill's ceiling − the outside spend): what the reserve and the
   * backfill's headroom leave (a trending run after the backfill reached its ceiling may go a few
   * units past it, under its own).
   */
  utilisationWithinCeiling: number;
}

export interface Tally {
  firstBlockAt: number | null;
  firstDryAt: number | null;
  quotaExceededBeforeBlock: number;
  quotaExceededTotal: number;
  allowedAfterBlock: number;
  blocked: Set<string>;
  scheduledDenied: number;
  scheduledBlocked: number;
  manualUnits: number;
  failOpen: number;
}

export interface Setup {
  config: YouTubeConfig;
  /** The config as a file would hold it (the API key from KEY_ENV): what a drill's `serve` reads. */
  document: Record<string, unknown>;
  credential: CredentialConfig;
  hourSeconds: number;
  backfillBucket: string;
  backlogVideos: number;
  /** Upstream calls a second the backfill must make to keep its hourly pace. */
  callsPerSecond: number;
}

/** A drill's options with their defaults, checked before anything starts. */
export interface DaySettings {
  daySeconds: number;
  profile: QuotaProfile;
  quota: number;
  behind: number;
  behindAt: number;
  burstCalls: number;
  maxPages: number;
  regions: readonly string[];
  progress: (line: string) => void;
}

/** What a drill has open, closed by runDrill whatever failed. */
export interface OpenParts {
  sim: Simulator | undefined;
  service: Service | undefined;
  ledger: Ledger | undefined;
  timers: NodeJS.Timeout[];
}

/** A started day: the simulator, the ledger and the scheduled jobs running against them. */
export interface Day {
  sim: Simulator;
  service: Service;
  ledger: Ledger;
  setup: Setup;
  /** The start of the simulator's day (its clock). */
  t0: number;
  dayMs: number;
  /** A moment as a fraction of the day (3 decimals). */
  fraction: (at: number) => number;
  nextResetAt: number;
  serviceStartedAt: number;
  tally: Tally;
  /** Ticks skipped; when the spend behind the guard was made (its timer may fire late on a busy machine). */
  counts: { skippedTicks: number; behindSpentAt?: number };
  backfillRuns: () => Promise<DrillBackfillRun[]>;
  /** With `reconcile`: what the reconciles saw while the day ran. */
  reconcile?: ReconcileWatch;
}

export interface TrendingCompletion {
  scheduled: number;
  done: number;
  completed: number;
}

/** What the drill watches of the reconciles while its day runs. */
export interface ReconcileWatch {
  parts: ReconcileParts;
  /**
   * Reconciles done and failed, the first time the outside spend reached `behind` (a reconcile's
   * start), and each reconcile's start with the outside spend it left.
   */
  readonly seen: {
    runs: number;
    failed: number;
    outsideAt: number | null;
    outside: number;
    starts: Array<{ at: number; outside: number }>;
  };
}
