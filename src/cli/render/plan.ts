/**
 * What `quota-guard plan` prints for people: per bucket what the schedules spend against each limit,
 * and what to change; within the terminal's width (`outputWidth`), a long line wrapped at a word.
 */
import { windowLabel } from '../../config/duration.js';
import type { BucketPlan, PlanReport } from '../../youtube/plan/types.js';
import { DEFAULT_WIDTH, fitTable, formatNumber, wrap } from './format.js';

function renderBucket(b: BucketPlan, width: number): string[] {
  const out = [
    '',
    wrap(
      `${b.credential} / ${b.bucket}: quota ${formatNumber(b.quota)}, reserve ${formatNumber(b.reserve)}, backfill headroom ${formatNumber(b.backfillHeadroom)}, per ${windowLabel(b)}`,
      width,
    ),
  ];
  const lines = [['  source', 'tier', 'method', 'units', 'made of']];
  for (const l of b.lines) lines.push([`  ${l.id}`, l.tier, l.method, formatNumber(l.units), l.detail]);
  out.push(fitTable(lines, width));
  const checks = [['  limit', 'per', 'limit', 'at most', 'fits']];
  for (const k of b.checks)
    checks.push([
      `  ${k.name}`,
      windowLabel(k),
      formatNumber(k.limit),
      formatNumber(k.demand),
      k.fits ? 'yes' : `NO, over by ${formatNumber(k.over)}`,
    ]);
  if (b.checks.length) out.push(fitTable(checks, width));
  for (const k of b.checks.filter((x) => !x.fits)) {
    out.push(wrap(`${k.name} does not fit; change one of:`, width, '  '));
    for (const f of k.fixes) out.push(wrap(`- ${f}`, width, '    '));
  }
  for (const n of b.notes) out.push(wrap(`note: ${n}`, width, '  '));
  return out;
}

/** The human form of a plan, within `width` columns (100 by default). */
export function renderPlan(report: PlanReport, source?: string, width = DEFAULT_WIDTH): string {
  const from = source ?? 'built-in defaults';
  const out = [
    wrap(
      report.schedules
        ? `quota-guard plan — ${from}; the jobs spend credential ${report.jobsCredential}`
        : `quota-guard plan — ${from}; no schedules: the expected spends only`,
      width,
    ),
  ];
  for (const b of report.buckets) out.push(...renderBucket(b, width));
  out.push('');
  for (const w of report.warnings) out.push(wrap(`warning: ${w}`, width));
  if (report.fits)
    out.push(
      report.buckets.length
        ? 'FITS: every schedule stays under every ceiling and budget.'
        : wrap(
            'FITS: nothing is planned to spend (list the calls people and scripts make a day under `expected` to plan them).',
            width,
          ),
    );
  else {
    out.push(`DOES NOT FIT (${report.problems.length}):`);
    for (const p of report.problems) out.push(wrap(p, width, '  '));
  }
  return `${out.join('\n')}\n`;
}
