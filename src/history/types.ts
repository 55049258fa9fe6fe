/**
 * The run history's public types: one small summary per finished job run, kept in the ledger's
 * store (so every host that spends a credential sees every host's runs), bounded in size.
 */
import { InvalidArgumentError, QuotaGuardError } from '../errors.js';
import { credentialKeyPrefix } from '../guard/keys.js';

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

/**
 * The label the stores index (a column of its own, and each value's last successful run): `region`,
 * as the previous release stores it, so that both releases read and write one store.
 */
export const INDEXED_LABEL = 'region';

export interface RunSummary {
  credential: string;
  /** The job's name: `ingest:comments`, or the YouTube application's `trending:US`, `backfill`. */
  job: string;
  /**
   * What the application says of the run, as names and values: the YouTube application's trending
   * runs carry `{ region: 'US' }`; `{}` when it says nothing. `region` is indexed (INDEXED_LABEL).
   */
  labels: Readonly<Record<string, string>>;
  startedAt: number;
  finishedAt: number;
  outcome: JobOutcome;
  pages: number;
  units: number;
  /** Items the run fetched or wrote (the YouTube jobs: videos). */
  items: number;
  /** Why the run ended early (one line), null when it did all its work. */
  reason: string | null;
  /** Units used in each of the credential's buckets right after the run, as the ledger counted them. */
  used: Record<string, number>;
  /**
   * The decision API's client that recorded the run (`POST /v1/runs`): its token's name. Absent
   * for the runs of this package's own jobs and of `qg.run`.
   */
  client?: string;
}

/**
 * A run recorded at most once (the decision API's `POST /v1/runs`), remembered like a spend's entry
 * id: the same id with the same request is answered with the run as first recorded, with another
 * request it is `QG_ENTRY_CONFLICT`.
 */
export interface RunOnce {
  /** Chosen by the client: 1 to 64 characters of `A-Z a-z 0-9 _ . -`. */
  id: string;
  /** The request in the caller's words: the same id with another request is a conflict. */
  request: string;
}

/** What `record` did: recorded the run now, or found its id recorded before (`replayed`). */
export interface RecordedRun {
  /** The run as it is recorded: the one given, or the one first recorded under its id. */
  run: RunSummary;
  replayed: boolean;
}

/** How long after it finished a run may still be recorded through the decision API. */
export const MAX_RUN_AGE_MS = 7 * 86_400_000;

/** How long a run's id is remembered: longer than a run may be recorded after it finished. */
export const RUN_ID_MEMORY_MS = MAX_RUN_AGE_MS + 86_400_000;

/** Where a credential's run id is remembered (beside the credential's history, in its hash slot). */
export function runIdKey(credential: string, id: string): string {
  return `${credentialKeyPrefix(credential)}:runs:id:${id}`;
}

/** The run id was recorded with another request. */
export function runIdConflict(id: string): QuotaGuardError {
  return new QuotaGuardError(
    'QG_ENTRY_CONFLICT',
    `run '${id}' was recorded with another request: a run id names one run`,
    { field: 'id', details: { id } },
  );
}

/**
 * A run as remembered under its id: with the previous release's fields too (`region`, `videos`),
 * so that either release answers a replay of the other's.
 */
export function rememberRun(r: RunSummary): string {
  return JSON.stringify(withCompatibleFields(r));
}

/**
 * A run as remembered under its id, read back, whichever release remembered it (a value that is
 * not one is damage in the store).
 */
export function parseRememberedRun(text: string, key: string): RunSummary {
  try {
    const v = JSON.parse(text) as Partial<RunSummary> & { region?: string | null; videos?: number };
    if (
      typeof v === 'object' &&
      v !== null &&
      typeof v.job === 'string' &&
      typeof v.credential === 'string'
    ) {
      const { region, videos, ...rest } = v;
      const labels = storableLabels(v.labels);
      if (typeof region === 'string' && region !== '') labels[INDEXED_LABEL] = region;
      return { ...rest, labels, items: v.items ?? videos ?? 0 } as RunSummary;
    }
  } catch {
    // Reported below.
  }
  throw unreadableRunKey(key);
}

/** A run history key holding what the history did not write (damage, or another program's data). */
export function unreadableRunKey(key: string): QuotaGuardError {
  return new QuotaGuardError('QG_STORE_CORRUPT', `run history key '${key}' holds data it cannot read`, {
    details: { key },
  });
}

/** The longest job name the run history keeps. */
export const MAX_JOB_NAME = 100;

/**
 * A job's name as the run history keeps it (`qg.run(name)`, the decision API's `job`): one line of
 * at most MAX_JOB_NAME characters, not blank, without `|` (the history's own separator).
 */
export function checkJobName(name: unknown, field = 'name'): string {
  if (typeof name !== 'string' || name.trim() === '') {
    throw new InvalidArgumentError(field, 'a run needs a name, e.g. ingest:comments');
  }
  if ([...name].length > MAX_JOB_NAME || /[\p{Cc}|]/u.test(name)) {
    throw new InvalidArgumentError(
      field,
      `a run's name is one line of at most ${MAX_JOB_NAME} characters, without '|'`,
    );
  }
  return name;
}

export interface HistoryQuery {
  /** These credentials (default: every one in the store that the caller names). */
  credentials: readonly string[];
  /** Only runs whose indexed label (`region`) has this value. */
  region?: string;
  /** Only runs of this job (its whole name: `reconcile:my-project`). */
  job?: string;
  /** Only runs started at or after this epoch ms. */
  since?: number;
  /** At most this many runs, newest first (default 100). */
  limit?: number;
}

export interface RunHistory {
  /**
   * Append one run (and, when it was done, the region's last success). With `once`, the run is
   * recorded at most once under its id: see RunOnce.
   */
  record(run: RunSummary, once?: RunOnce): Promise<RecordedRun>;
  /** Runs newest first. */
  list(query: HistoryQuery): Promise<RunSummary[]>;
  /** Epoch ms of the last successful (done) run per value of the indexed label (`region`), over the given credentials. */
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

/** A job's kind: its name up to the first `:` (`ingest:comments` → `ingest`). */
export function jobKind(job: string): string {
  return job.split(':')[0] ?? job;
}

/** The labels as the stores take them: names and values of one line, none empty. */
export function storableLabels(labels: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(labels ?? {})) {
    if (typeof value === 'string' && value !== '' && name !== '' && !/[\p{Cc}]/u.test(name + value))
      out[name] = value;
  }
  return out;
}

/**
 * A run as the previous release's readers take it, besides its generic fields: `region` (its
 * indexed label, or null) and `videos` (its items). `history --json` and the decision API's answers
 * keep these fields.
 */
export function withCompatibleFields<T extends RunSummary>(
  r: T,
): T & { region: string | null; videos: number } {
  return { ...r, region: r.labels[INDEXED_LABEL] ?? null, videos: r.items };
}

/** Newest first, then the first `limit`. */
export function newestFirst(runs: RunSummary[], limit: number): RunSummary[] {
  return runs.sort((a, b) => b.finishedAt - a.finishedAt || b.startedAt - a.startedAt).slice(0, limit);
}

export const DEFAULT_HISTORY_LIMIT = 100;
