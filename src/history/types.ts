/**
 * The run history's public types: one small summary per finished job run, kept in the ledger's
 * store (so every host that spends a credential sees every host's runs), bounded in size.
 */

/**
 * How a job run ended (the run history records it; the job library returns it):
 * - `done`: the job did all its work (or all it was asked to, e.g. `maxUnits`) — exit 0;
 * - `stopped`: the budget said stop (denied with a Retry-After above maxSleep, a blocked bucket, an
 *   upstream quotaExceeded or a long rate limit) — exit 75, run again later;
 * - `aborted`: SIGINT/SIGTERM (the page in flight was finished or abandoned, never half-written) — exit 75;
 * - `unavailable`: the ledger store is down for a fail-closed call, the cache cannot be written, or
 *   the upstream kept failing (5xx, transport) — exit 69;
 * - `failed`: a configuration problem (missing API key, unknown region or credential, a key the
 *   upstream rejects) — exit 78, or a request the upstream refused as malformed — exit 70.
 */
export const JOB_OUTCOMES = ['done', 'stopped', 'aborted', 'unavailable', 'failed'] as const;
export type JobOutcome = (typeof JOB_OUTCOMES)[number];

/** Runs kept per credential; older ones are dropped as new ones arrive (about 50 days of 8 hourly regions and a backfill). */
export const MAX_RUNS_PER_CREDENTIAL = 10_000;

export interface RunSummary {
  credential: string;
  /** `trending:US`, `trending:US:10`, `backfill`. */
  job: string;
  /** The region a trending run fetched; null for the backfill. */
  region: string | null;
  startedAt: number;
  finishedAt: number;
  outcome: JobOutcome;
  pages: number;
  units: number;
  videos: number;
  /** Why the run ended early (one line), null when it did all its work. */
  reason: string | null;
  /** Units used in each of the credential's buckets right after the run, as the ledger counted them. */
  used: Record<string, number>;
}

export interface HistoryQuery {
  /** These credentials (default: every one in the store that the caller names). */
  credentials: readonly string[];
  /** Only runs of this region. */
  region?: string;
  /** Only runs started at or after this epoch ms. */
  since?: number;
  /** At most this many runs, newest first (default 100). */
  limit?: number;
}

export interface RunHistory {
  /** Append one run (and, when it was done, the region's last success). */
  record(run: RunSummary): Promise<void>;
  /** Runs newest first. */
  list(query: HistoryQuery): Promise<RunSummary[]>;
  /** Epoch ms of the last successful (done) run per region, over the given credentials. */
  lastSuccess(credentials: readonly string[]): Promise<Record<string, number>>;
  /** Every run ever recorded (never trimmed), counted per credential, job kind and outcome. */
  totals(credentials: readonly string[]): Promise<RunTotal[]>;
  close(): Promise<void>;
}

/** Runs recorded of one job kind with one outcome, and the units they spent. */
export interface RunTotal {
  credential: string;
  /** `trending` or `backfill`: the job's kind, without its region. */
  job: string;
  outcome: JobOutcome;
  runs: number;
  units: number;
}

/**
 * A job run's name, as the run history, the metrics and the scheduler give it: `trending:<region>`
 * for a region's trending run, `backfill` for the backfill. Built here and read back by `jobKind`
 * and `regionOfJob`.
 */
export function trendingJob(region: string): string {
  return `trending:${region}`;
}

/** `trending:US` → `trending`. */
export function jobKind(job: string): string {
  return job.split(':')[0] ?? job;
}

/** `trending:US` and `trending:US:10` → `US`; anything else → null. */
export function regionOfJob(job: string): string | null {
  const [kind, region] = job.split(':');
  return kind === 'trending' && region ? region : null;
}

/** Newest first, then the first `limit`. */
export function newestFirst(runs: RunSummary[], limit: number): RunSummary[] {
  return runs.sort((a, b) => b.finishedAt - a.finishedAt || b.startedAt - a.startedAt).slice(0, limit);
}

export const DEFAULT_HISTORY_LIMIT = 100;
