/** What `quota-guard drill` prints for people: per bucket what was spendable, served and charged, and the checks. */
import type { BackfillEnd, DrillBackfillRun, DrillReport } from '../../drill/drill.js';
import { mixedLines } from './drill-mixed.js';
import { formatNumber, table } from './format.js';

/** The human form of a drill report. */
export function renderDrill(r: DrillReport): string {
  const out = [
    `quota-guard drill — ${r.store} ledger, ${r.profile}, a ${r.daySeconds}s day (an hour is ${r.hourSeconds}s), ${r.regions} regions, backlog ${formatNumber(r.backlogVideos)} videos; load average ${r.loadAverage.start} at the start, ${r.loadAverage.end} at the end`,
    '',
  ];
  const rows = [['  bucket', 'quota', 'behind', 'spendable', 'served', 'charged', 'recorded', 'utilisation']];
  for (const [id, b] of Object.entries(r.buckets))
    rows.push([
      `  ${id}`,
      formatNumber(b.quota),
      formatNumber(b.behind),
      formatNumber(b.spendable),
      formatNumber(b.served),
      formatNumber(b.charged),
      formatNumber(b.recorded),
      `${(b.utilisation * 100).toFixed(2)}%`,
    ]);
  out.push(table(rows), '');
  out.push(
    `  units spent: trending ${formatNumber(r.trendingUnits)}, backfill ${formatNumber(r.backfillUnits)}, manual ${formatNumber(r.manualUnits)}`,
    `  runs: ${Object.entries(r.runs)
      .map(
        ([job, o]) =>
          `${job} ${Object.entries(o)
            .map(([k, n]) => `${n} ${k}`)
            .join(', ')}`,
      )
      .join('; ')}; ${r.skippedTicks} ticks skipped (job still running)`,
    `  upstream quotaExceeded: ${r.upstreamQuotaExceeded} before the block (${r.upstreamQuotaExceededTotal} in all)${r.blockedAtDayFraction !== null ? `, bucket blocked at ${(r.blockedAtDayFraction * 100).toFixed(0)}% of the day` : ''}`,
    `  scheduled spends denied: ${r.scheduledDenied} by the budget, ${r.scheduledBlocked} by the upstream block`,
    ...backfillRunLines(r),
    ...mixedLines(r),
    `  trending runs completed: ${r.trendingRunsDone} of ${r.trendingRunsScheduled} (${(r.trendingRunsCompleted * 100).toFixed(1)}%); someone else spent at ${(r.behindAtDayFraction * 100).toFixed(0)}% of the day; the upstream ran dry at ${r.dryAtDayFraction === null ? 'no point' : `${(r.dryAtDayFraction * 100).toFixed(1)}% of the day`}`,
    ...reconcileLines(r),
    '',
  );
  for (const c of r.checks) out.push(`  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.name}: ${c.detail}`);
  out.push('', r.ok ? 'drill passed' : 'drill FAILED');
  return `${out.join('\n')}\n`;
}

/** With `--reconcile`: what the reconciles saw, and Google's count against the ledger's at the end. */
function reconcileLines(r: DrillReport): string[] {
  const x = r.reconcile;
  if (!x) return [];
  return [
    `  reconcile: every ${x.periodMs} ms (5 scaled minutes), lag ${x.lagMs} ms; ${x.runs} runs, ${x.failed} failed; the spend behind the guard seen ${x.seenAfterMinutes === null ? 'never' : `${x.seenAfterMinutes} scaled minutes after it`}, ${formatNumber(x.outsideUnits)} outside units`,
    `  at the day's end: Google counted ${formatNumber(x.upstreamAtEnd)}, the ledger holds ${formatNumber(x.ledgerAtEnd)} (${x.difference} apart; ${formatNumber(x.chargedInLastLag)} charged in the last lag); ${(x.utilisationWithinCeiling * 100).toFixed(2)}% of what the backfill's ceiling leaves once the outside units count`,
  ];
}

const ENDED_BY: Record<BackfillEnd, string> = {
  line: 'its pacing line',
  headroom: 'its ceiling on the bucket',
  budget: 'a budget',
  upstream: 'the upstream running dry',
  'day-end': "the day's end",
  done: 'nothing left due',
  other: 'another stop',
};

/** One line per backfill run: when, what it spent, why it ended and where its line stood. */
function backfillRunLines(r: DrillReport): string[] {
  const pct = (f: number) => `${(f * 100).toFixed(1)}%`;
  const lifted =
    r.lineLiftedAtDayFraction === null ? '' : `; its line is lifted at ${pct(r.lineLiftedAtDayFraction)}`;
  const line = (run: DrillBackfillRun) => {
    const l = run.line;
    const at = l
      ? `: ${formatNumber(l.spentToday)} spent today, ${l.allowed === null ? 'no line' : `${formatNumber(l.allowed)} allowed by then`} of ${formatNumber(l.allowance)}, ${formatNumber(l.belowCeiling)} below its ceiling`
      : '';
    const resume = run.resumeAt !== undefined ? `; resume at ${pct(run.resumeAt)}` : '';
    return `    ${pct(run.from)}–${pct(run.to)}: ${formatNumber(run.units)} units, ended by ${ENDED_BY[run.end]}${at}${resume}`;
  };
  return [`  backfill runs (% of the day)${lifted}:`, ...r.backfillRuns.map(line)];
}
