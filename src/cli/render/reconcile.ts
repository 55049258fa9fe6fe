/** What `quota-guard reconcile` prints: per project, each bucket's count, the ledger's, the outside spend. */
import type { ReconcileResult } from '../../reconcile/reconciler.js';
import { formatDuration, formatNumber, table } from './format.js';

function hhmm(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 16)} UTC`;
}

function signed(n: number): string {
  return n > 0 ? `+${formatNumber(n)}` : n < 0 ? `-${formatNumber(-n)}` : '0';
}

/**
 * For each project: a line saying how far it was reconciled (or why not), then one row per bucket:
 * the upstream's count since its midnight, the ledger's own units and outside spend over the same
 * minutes, and what this reconcile changed; a note under a bucket whose ledger is above the count.
 */
export function renderReconcile(result: ReconcileResult, lagMs: number): string {
  const out: string[] = [];
  for (const p of result.projects) {
    const who = `${p.project} (${p.credentials.join(', ')})`;
    if (!p.ok) {
      out.push(`${who}: not reconciled: ${p.error.code}; nothing recorded`);
      continue;
    }
    if (p.waiting || p.buckets.length === 0) {
      out.push(
        p.waiting
          ? `${who}: nothing to compare yet: the upstream's day began less than ${formatDuration(lagMs)} ago`
          : `${who}: no bucket with a quota metric to read (reconcile.quotaMetrics)`,
      );
      continue;
    }
    const through = Math.max(...p.buckets.map((b) => b.through));
    out.push(`${who}: reconciled up to ${hhmm(through)} (${p.reads} ${p.reads === 1 ? 'read' : 'reads'})`);
    const rows = [['bucket', 'upstream', 'ledger', 'own', 'outside', 'change']];
    for (const b of p.buckets) {
      rows.push([
        b.bucket,
        formatNumber(b.upstream),
        formatNumber(b.own + b.outside),
        formatNumber(b.own),
        formatNumber(b.outside),
        signed(b.added),
      ]);
    }
    out.push(table(rows, '  '));
    for (const b of p.buckets) {
      if (b.ledgerAbove > 0) {
        out.push(
          `  ${b.bucket}: the ledger holds ${formatNumber(b.ledgerAbove)} units more than the upstream counted (a refund missed, or requests that never reached it); left as it is`,
        );
      }
    }
  }
  return `${out.join('\n')}\n`;
}

/** The result for scripts: times as ISO strings. */
export function reconcileJson(result: ReconcileResult, lagMs: number) {
  return {
    at: new Date(result.at).toISOString(),
    ok: result.ok,
    lagMs,
    projects: result.projects.map((p) =>
      p.ok
        ? {
            ...p,
            buckets: p.buckets.map((b) => ({
              ...b,
              from: new Date(b.from).toISOString(),
              through: new Date(b.through).toISOString(),
            })),
          }
        : p,
    ),
  };
}
