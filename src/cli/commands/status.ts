/**
 * `quota-guard status [--json] [--credential ID]`: per credential and bucket, the quota, reserve,
 * used and remaining for each tier, blocks and why, when the next 1 / 50 / 100 units free up, and
 * spend in the window by region and by method. A table with bars on a terminal, JSON for scripts.
 */
import type { Command } from 'commander';
import type { BucketStatus, StatusReport } from '../../guard/status.js';
import { bar, breakdown, formatDuration, formatNumber, table } from '../format.js';
import { type ConfigOptions, configOption } from '../options.js';
import { action } from '../run.js';

interface StatusOptions extends ConfigOptions {
  json?: boolean;
  credential?: string;
}

export function register(program: Command): void {
  configOption(
    program
      .command('status')
      .description(
        'show quota used and left per credential, bucket and tier, blocks, and spend by region and method',
      )
      .option('--json', 'print one JSON object')
      .option('--credential <id>', 'only this credential'),
  ).action(
    action(async (opts: StatusOptions) => {
      const [{ withContext }, { quotaStatus }] = await Promise.all([
        import('../context.js'),
        import('../../guard/status.js'),
      ]);
      const report = await withContext(opts, ({ config, ledger }) =>
        quotaStatus(config, ledger, opts.credential !== undefined ? { credential: opts.credential } : {}),
      );
      process.stdout.write(
        opts.json
          ? `${JSON.stringify(report, null, 2)}\n`
          : renderStatus(report, process.stdout.isTTY === true),
      );
      return 0;
    }),
  );
}

function windowLabel(b: BucketStatus): string {
  return b.window === 'upstream-day' ? 'upstream day' : `${formatDuration(b.windowMs)} sliding`;
}

function freesUp(b: BucketStatus): string {
  if (b.used === 0) return '-';
  return Object.values(b.freesUpInMs)
    .map((ms) => (ms === null ? '?' : formatDuration(ms)))
    .join(' / ');
}

/** The human form of a status report; bars only on a terminal. */
export function renderStatus(report: StatusReport, tty: boolean): string {
  const out: string[] = [`quota-guard status — ${report.store} ledger, ${report.at}`];
  for (const c of report.credentials) {
    out.push('', `credential ${c.id} (${c.profile}, upstream day in ${c.timeZone})`);
    const head = [
      'bucket',
      ...(tty ? [''] : []),
      'used',
      'quota',
      'reserve',
      'scheduled',
      'backfill',
      'manual',
      'window',
      'next 1/50/100 free in',
    ];
    const rows = [head];
    for (const b of c.buckets) {
      rows.push([
        b.id,
        ...(tty ? [bar(b.used / b.quota)] : []),
        formatNumber(b.used),
        formatNumber(b.quota),
        formatNumber(b.reserve),
        formatNumber(b.remaining.scheduled),
        formatNumber(b.remaining.backfill),
        formatNumber(b.remaining.manual),
        windowLabel(b),
        freesUp(b),
      ]);
    }
    out.push(table(rows, '  '));
    out.push('  (scheduled / backfill / manual: units left under each tier’s ceiling)');
    for (const b of c.buckets) {
      if (b.blockedUntil)
        out.push(`  BLOCKED ${b.id} until ${b.blockedUntil}${b.blockedReason ? `: ${b.blockedReason}` : ''}`);
      if (b.resetsAt && b.used > 0)
        out.push(`  ${b.id}: everything frees at the upstream midnight, ${b.resetsAt}`);
      if (b.pace)
        out.push(
          `  ${b.pace.id}: ${formatNumber(b.pace.used)} of ${formatNumber(b.pace.limit)} per ${formatDuration(b.pace.windowMs)}`,
        );
      for (const x of b.budgets) {
        out.push(
          `  budget ${x.id} (${b.id}): ${formatNumber(x.used)} of ${formatNumber(x.limit)} per ${formatDuration(x.windowMs)}, ${formatNumber(x.remaining)} left`,
        );
      }
      if (b.used > 0) {
        out.push(`  ${b.id} by region: ${breakdown(b.byRegion)}`);
        out.push(`  ${b.id} by method: ${breakdown(b.byMethod)}`);
      }
    }
  }
  return `${out.join('\n')}\n`;
}
