/**
 * The reconcile as `status` and the status page show it: a summary line per project (its age, and
 * outside spend or a failure when there is one) and, on each bucket's card, the upstream's count at
 * the last minute compared beside the ledger's. Read from the run history (src/reconcile/runs.ts),
 * so any process shows what any host reconciled.
 */
import type { Config } from '../config/types.js';
import type { RunHistory } from '../history/types.js';
import { type LastReconcile, lastReconciles, type ReconciledBucket } from '../reconcile/runs.js';
import type { SummaryLine } from './summary.js';

/** A reconcile older than this is worth a line (the alert QuotaGuardReconcileStale says the same). */
export const RECONCILE_STALE_MS = 3_600_000;

/** What the history says of every configured project's reconciles; undefined when none is configured or it cannot be read. */
export async function reconcileView(
  config: Pick<Config, 'credentials'>,
  history: Pick<RunHistory, 'list'> | undefined,
): Promise<LastReconcile[] | undefined> {
  if (!history || !config.credentials.some((c) => c.project !== undefined)) return undefined;
  return lastReconciles(config, history).catch(() => undefined);
}

/** `4m`, `2h 5m`: how long ago, short. */
function age(ms: number): string {
  const m = Math.max(0, Math.round(ms / 60_000));
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
}

const n = (x: number) => x.toLocaleString('en-US');

/** The summary's lines for the reconciles, worst first within them. */
export function reconcileNotices(projects: readonly LastReconcile[], nowMs: number): SummaryLine[] {
  const lines: SummaryLine[] = [];
  for (const p of projects) {
    const s = p.success;
    const since = s ? `last success ${age(nowMs - s.at)} ago` : 'none succeeded yet';
    if (p.lastOutcome === null) {
      lines.push({
        severity: 'warn',
        text: `${p.project}: never reconciled with the upstream's count (run, serve --decisions or a scheduled quota-guard reconcile does)`,
        command: 'quota-guard reconcile',
      });
      continue;
    }
    if (p.lastOutcome !== 'done') {
      lines.push({
        severity: 'warn',
        text: `${p.project}: the last reconcile failed (${since}): ${p.lastError ?? p.lastOutcome}`,
        command: 'quota-guard reconcile',
      });
    } else if (s && nowMs - s.at > RECONCILE_STALE_MS) {
      lines.push({ severity: 'warn', text: `${p.project}: ${since}: the reconciles stopped` });
    }
    if (!s) continue;
    const outside = s.buckets.filter((b) => b.outside > 0);
    if (outside.length)
      lines.push({
        severity: 'warn',
        text: `${p.project}: spent outside the guard since the upstream's midnight: ${outside
          .map((b) => `${n(b.outside)} units in ${b.bucket}`)
          .join(', ')} (reconciled ${age(nowMs - s.at)} ago; the ceilings count them)`,
      });
    else if (p.lastOutcome === 'done')
      lines.push({
        severity: 'ok',
        text: `${p.project}: the ledger agrees with the upstream's count (reconciled ${age(nowMs - s.at)} ago)`,
      });
  }
  return lines;
}

/** A bucket's figures in the last successful reconcile of its credential's project. */
export function reconciledBucket(
  projects: readonly LastReconcile[] | undefined,
  credential: string,
  bucket: string,
): { project: LastReconcile; bucket: ReconciledBucket } | undefined {
  const project = projects?.find((p) => p.credentials.includes(credential));
  const b = project?.success?.buckets.find((x) => x.bucket === bucket);
  return project && b ? { project, bucket: b } : undefined;
}

/**
 * One line for a bucket's card: `upstream 4,212 · ledger 4,212 (own 3,380 + outside 832) from the
 * upstream's midnight to 17:50, reconciled 4m ago`; `through` is the time of day as the caller writes it.
 */
export function reconcileLine(
  r: { project: LastReconcile; bucket: ReconciledBucket },
  nowMs: number,
  through: (ms: number) => string,
): string {
  const b = r.bucket;
  const s = r.project.success!;
  const above = b.ledgerAbove > 0 ? `; the ledger holds ${n(b.ledgerAbove)} more` : '';
  return `upstream's count ${n(b.upstream)} · ledger ${n(b.own + b.outside)} (own ${n(b.own)} + outside ${n(b.outside)}) from its midnight${
    s.through !== null ? ` to ${through(s.through)}` : ''
  }, reconciled ${age(nowMs - s.at)} ago${above}`;
}
