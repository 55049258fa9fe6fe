/**
 * `quota-guard plan [--json]`: before anything runs, the units each schedule spends at most per
 * bucket against its ceilings and narrower budgets; where it does not fit, by how much and what to
 * change. Exit 0 when it fits, 65 when it does not. Reads only the config: no store, no upstream.
 */
import type { Command } from 'commander';
import { windowLabel } from '../../config/duration.js';
import { ExitCode } from '../../errors.js';
import type { BucketPlan, PlanReport } from '../../plan/plan.js';
import { action } from '../action.js';
import { formatNumber, table } from '../format.js';
import { type ConfigOptions, configOption } from '../options.js';

interface PlanOptions extends ConfigOptions {
  json?: boolean;
}

export function register(program: Command): void {
  configOption(
    program
      .command('plan')
      .description(
        'check before running that the schedules fit each bucket and budget (exit 0 fits, 65 does not)',
      )
      .option('--json', 'print one JSON object'),
  ).action(
    action(async (opts: PlanOptions) => {
      const [{ loadCliConfig }, { planBudget }] = await Promise.all([
        import('../config.js'),
        import('../../plan/plan.js'),
      ]);
      const config = await loadCliConfig(opts.config);
      const report = planBudget(config);
      process.stdout.write(
        opts.json ? `${JSON.stringify(report, null, 2)}\n` : renderPlan(report, config.source),
      );
      return report.fits ? ExitCode.OK : ExitCode.DATAERR;
    }),
  );
}

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
