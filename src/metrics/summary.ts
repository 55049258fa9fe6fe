/**
 * What needs an operator now, worst first, in one line each: the summary at the top of the status
 * page and of `quota-guard status`. A blocked bucket (with until when and the command that lifts
 * it), stale regions (since when, and why where the last runs say), a bucket whose scheduled tier is
 * nearly out; else that nothing needs doing. Lines from other parts of the program (entries recorded
 * late, drift from the upstream's count) come in as `notices` and take their place by severity.
 */

import type { StatusReport } from '../guard/status.js';
import type { RunSummary } from '../history/types.js';
import type { RegionFreshness } from '../youtube/freshness.js';

/** `bad`: something is stopped now; `warn`: something to look at; `ok`: nothing needs doing. */
export type Severity = 'bad' | 'warn' | 'ok';

export interface SummaryLine {
  severity: Severity;
  text: string;
  /** A command that acts on it (`quota-guard unblock default units`). */
  command?: string;
}

/** The command that lifts a block on every host. */
export function unblockCommand(credential: string, bucket: string): string {
  return `quota-guard unblock ${credential} ${bucket}`;
}

/** How the summary writes a moment: the caller's clock (the page's, the terminal's). */
export interface SummaryClock {
  /** `08:00 PST (in 12h 42m)`: a moment in a credential's zone, and how far it is from now. */
  until(ms: number, zone: string): string;
  /** `14:00 CET`: a moment in the operator's zone. */
  at(ms: number): string;
}

export interface SummaryInput {
  report: StatusReport;
  freshness?: { staleAfterMs: number; regions: readonly RegionFreshness[] };
  /** Runs newest first (the stale regions' last runs say why). */
  runs?: readonly RunSummary[];
  /** Lines of other parts (recorded late, drift), placed by their severity. */
  notices?: readonly SummaryLine[];
}

/** A share of the quota below which the scheduled tier's figure is worth a line (as the alert's). */
const LOW = 0.01;

const RANK: Record<Severity, number> = { bad: 0, warn: 1, ok: 2 };

/** The summary's lines, worst first; never empty (all clear is a line too). */
export function summaryLines(input: SummaryInput, clock: SummaryClock): SummaryLine[] {
  const { report } = input;
  const lines: SummaryLine[] = [];
  for (const c of report.credentials)
    for (const b of c.buckets) {
      if (b.blockedUntil) {
        const unseen = b.blockedReason?.includes('although the ledger allowed it') === true;
        lines.push({
          severity: 'bad',
          text: `${c.id}/${b.id} is blocked until ${clock.until(Date.parse(b.blockedUntil), c.timeZone)}${
            unseen ? ': the upstream says its quota is used up, so someone else spends this key' : ''
          }`,
          command: unblockCommand(c.id, b.id),
        });
      } else if (b.spendable.scheduled < Math.max(1, b.quota * LOW)) {
        lines.push({
          severity: 'warn',
          text: `${c.id}/${b.id}: ${b.spendable.scheduled} units left for the scheduled jobs${
            b.spendableLimitedBy.scheduled ? ` (held by ${b.spendableLimitedBy.scheduled})` : ''
          }`,
        });
      }
    }
  const stale = input.freshness?.regions.filter((r) => r.stale) ?? [];
  if (stale.length) {
    const after = input.freshness?.staleAfterMs ?? 0;
    const since = stale
      .filter((r) => r.lastSuccessAt !== null)
      .map((r) => `${r.region} since ${clock.at(r.lastSuccessAt! + after)}`);
    const never = stale.filter((r) => r.lastSuccessAt === null).map((r) => r.region);
    const parts = [...since, ...(never.length ? [`never fetched: ${never.join(', ')}`] : [])];
    const why = staleWhy(stale, input.runs ?? []);
    lines.push({
      severity: 'warn',
      text: `${stale.length === 1 ? '1 region is' : `${stale.length} regions are`} stale: ${parts.join('; ')}${why ? `; ${why}` : ''}`,
    });
  }
  lines.push(...(input.notices ?? []));
  lines.sort((x, y) => RANK[x.severity] - RANK[y.severity]);
  if (!lines.some((l) => l.severity !== 'ok'))
    lines.unshift({
      severity: 'ok',
      text: `nothing needs you: no bucket blocked${input.freshness ? ', every region fresh' : ''}, the scheduled jobs have room`,
    });
  return lines;
}

/** Why the stale regions' last runs ended, when they agree: `their last runs stopped (upstream-quota)`. */
function staleWhy(stale: readonly RegionFreshness[], runs: readonly RunSummary[]): string {
  const last = stale.map((r) => runs.find((x) => x.labels.region === r.region));
  const outcomes = new Set(last.map((r) => (r ? r.outcome : 'none')));
  if (outcomes.size !== 1 || outcomes.has('none') || outcomes.has('done')) return '';
  const [outcome] = outcomes;
  const blocked = last.every((r) => r?.reason?.includes('blocked') === true);
  return `${stale.length === 1 ? 'its last run' : 'their last runs'} ${outcome}${blocked ? ' at the block' : ''}`;
}
