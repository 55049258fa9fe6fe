/**
 * A reconcile in the run history: each reconcile of a project is a run of its own kind, job
 * `reconcile:<project>`, recorded under the project's first credential, so that `status`, the status
 * page and the metrics of any process (any host) read the last one from the ledger's store, as they
 * read the jobs' runs. No key or column is added: the figures travel in the run's labels, which the
 * previous release stores and skips.
 *
 *   labels.project            the project
 *   labels.through            the end of the last minute compared (epoch ms)
 *   labels['bucket:<name>']   `<upstream> <own> <outside> <added> <ledgerAbove>` over the span
 *   pages                     requests made to the upstream's count
 *   items                     buckets compared
 *   units                     0: a reconcile spends nothing of the quota (the outside spend it
 *                             records is someone else's)
 *   outcome                   done; else failed (a setting to fix), unavailable (the upstream's
 *                             count unreachable or broken), stopped (its rate limit)
 */
import type { Config } from '../config/types.js';
import { exitCodeFor } from '../errors.js';
import type { JobOutcome, RunHistory, RunSummary } from '../history/types.js';
import type { BucketReconcile, ProjectReconcile, ReconcileResult } from './reconciler.js';
import { projectsOf } from './reconciler.js';

export const RECONCILE_JOB_PREFIX = 'reconcile:';

/** The run history's job name of a project's reconciles. */
export function reconcileJob(project: string): string {
  return `${RECONCILE_JOB_PREFIX}${project}`;
}

const BUCKET_LABEL = 'bucket:';

/** Runs looked through for the last successful reconcile (a day of the default schedule). */
export const RECONCILE_RUNS_READ = 300;

/** How a failed reconcile's cause maps to a run's outcome (its exit status, as the CLI's). */
function outcomeOf(p: ProjectReconcile): JobOutcome {
  if (p.ok) return 'done';
  const status = exitCodeFor({ code: p.error.code });
  return status === 69 ? 'unavailable' : status === 75 ? 'stopped' : 'failed';
}

/** One run summary per project of a reconcile's result, started at `startedAt`. */
export function reconcileRuns(result: ReconcileResult, startedAt: number, finishedAt: number): RunSummary[] {
  return result.projects.map((p) => {
    const labels: Record<string, string> = { project: p.project };
    let items = 0;
    if (p.ok) {
      for (const b of p.buckets) {
        labels[`${BUCKET_LABEL}${b.bucket}`] = [b.upstream, b.own, b.outside, b.added, b.ledgerAbove].join(
          ' ',
        );
        labels['through'] = String(b.through);
        items++;
      }
    }
    return {
      credential: p.credentials[0]!,
      job: reconcileJob(p.project),
      labels,
      startedAt,
      finishedAt,
      outcome: outcomeOf(p),
      pages: p.reads,
      units: 0,
      items,
      reason: p.ok ? null : `${p.error.message} (${p.error.code})`,
      used: {},
    };
  });
}

/** A bucket's figures as the last successful reconcile left them. */
export type ReconciledBucket = Pick<
  BucketReconcile,
  'bucket' | 'upstream' | 'own' | 'outside' | 'added' | 'ledgerAbove'
>;

/** What the run history says of a project's reconciles. */
export interface LastReconcile {
  project: string;
  /** Its credentials in the config. */
  credentials: string[];
  /** The last reconcile's end (epoch ms) and how it ended; null when none is recorded. */
  lastAt: number | null;
  lastOutcome: JobOutcome | null;
  /** Why the last one failed (one line), null when it was done. */
  lastError: string | null;
  /** The last successful one: its end, the end of the last minute it compared, and its figures. */
  success: { at: number; through: number | null; buckets: ReconciledBucket[] } | null;
}

/** The figures of a reconcile run's labels. */
export function bucketsOfRun(run: RunSummary): ReconciledBucket[] {
  const out: ReconciledBucket[] = [];
  for (const [name, value] of Object.entries(run.labels)) {
    if (!name.startsWith(BUCKET_LABEL)) continue;
    const [upstream, own, outside, added, ledgerAbove] = value.split(' ').map(Number);
    if ([upstream, own, outside, added, ledgerAbove].some((n) => n === undefined || !Number.isFinite(n)))
      continue;
    out.push({
      bucket: name.slice(BUCKET_LABEL.length),
      upstream: upstream!,
      own: own!,
      outside: outside!,
      added: added!,
      ledgerAbove: ledgerAbove!,
    });
  }
  return out;
}

/**
 * Per project a credential of the config names, what its recorded reconciles say (whichever host
 * or process ran them). Empty when no credential names a project.
 */
export async function lastReconciles(
  config: Pick<Config, 'credentials'>,
  history: Pick<RunHistory, 'list'>,
): Promise<LastReconcile[]> {
  const out: LastReconcile[] = [];
  for (const [project, credentials] of projectsOf(config.credentials)) {
    const ids = credentials.map((c) => c.id);
    const runs = await history.list({
      credentials: ids,
      job: reconcileJob(project),
      limit: RECONCILE_RUNS_READ,
    });
    const last = runs[0];
    const done = runs.find((r) => r.outcome === 'done');
    const through = done ? Number(done.labels['through']) : Number.NaN;
    out.push({
      project,
      credentials: ids,
      lastAt: last?.finishedAt ?? null,
      lastOutcome: last?.outcome ?? null,
      lastError: last && last.outcome !== 'done' ? last.reason : null,
      success: done
        ? {
            at: done.finishedAt,
            through: Number.isFinite(through) ? through : null,
            buckets: bucketsOfRun(done),
          }
        : null,
    });
  }
  return out;
}
