/** What `quota-guard plan` prints for people: per bucket what the schedules spend against each limit, and what to change. */
import { windowLabel } from '../../config/duration.js';
import type { BucketPlan, PlanReport } from '../../youtube/plan/types.js';
import { formatNumber, table } from './format.js';

function renderBucket(b: BucketPlan): string[] {
  const out = [
    '',
    `${b.credential} / ${b.bucket}: quota ${formatNumber(b.quota)}, reserve ${formatNumber(b.reserve)}, backfill headroom ${formatNumber(b.backfillHeadroom)}, per ${windowLabel(b)}`,
  ];
  const lines = [['  source', 'tier', 'method', 'units', 'made of']];
  for (const l of b.lines) lines.push([`  ${l.id}`, l.tier, l.method, formatNumber(l.units), l.detail]);
  out.push(table(lines));
  const checks = [['  limit', 'per', 'limit', 'at most', 'fits']];
  for (const k of b.checks)
    checks.push([
      `  ${k.name}`,
      windowLabel(k),
      formatNumber(k.limit),
      formatNumber(k.demand),
      k.fits ? 'yes' : `NO, over by ${formatNumber(k.over)}`,
    ]);
  if (b.checks.length) out.push(table(checks));
  for (const k of b.checks.filter((x) => !x.fits)) {
    out.push(`  ${k.name} does not fit; change one of:`);
    for (const f of k.fixes) out.push(`    - ${f}`);
  }
  for (const n of b.notes) out.push(`  note: ${n}`);
  return out;
}

/** The human form of a plan. */
export function renderPlan(report: PlanReport, source?: string): string {
  const out = [
    `quota-guard plan — ${source ?? 'built-in defaults'}; the jobs spend credential ${report.jobsCredential}`,
  ];
  for (const b of report.buckets) out.push(...renderBucket(b));
  out.push('');
  for (const w of report.warnings) out.push(`warning: ${w}`);
  if (report.fits) out.push('FITS: every schedule stays under every ceiling and budget.');
  else {
    out.push(`DOES NOT FIT (${report.problems.length}):`);
    for (const p of report.problems) out.push(`  ${p}`);
  }
  return `${out.join('\n')}\n`;
}
