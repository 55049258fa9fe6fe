/**
 * `quota-guard drill [--json] [--day-seconds N] [--store URL] [--profile P] [--quota N]`: run one
 * compressed quota day against the simulator with the real scheduler, guard, ledger and cache, print
 * the figures and check them. Exit 0 when every check passes, 70 when one fails.
 */
import { type Command, InvalidArgumentError } from 'commander';
import type { DrillReport } from '../../drill/drill.js';
import { ExitCode } from '../../errors.js';
import { BUILTIN_PROFILE_IDS } from '../../profiles/profile-ids.js';
import { action } from '../action.js';
import { formatNumber, table } from '../format.js';
import { integerAtLeast } from '../options.js';

interface DrillCommandOptions {
  json?: boolean;
  daySeconds: number;
  store?: string;
  profile: string;
  config?: string;
  quota: number;
  behindAt: number;
  svg?: string;
  keep?: boolean;
}

function fraction(value: string): number {
  const n = Number(value);
  if (!(n > 0 && n < 1)) throw new InvalidArgumentError('must be a number between 0 and 1');
  return n;
}

export function register(program: Command): void {
  program
    .command('drill')
    .description(
      'run one compressed quota day against the simulator (8 regions, a backfill backlog, a manual burst, someone else’s spend) and check the figures',
    )
    .option('--json', 'print one JSON object')
    .option(
      '--day-seconds <n>',
      'length of the compressed day in seconds (at least 24)',
      integerAtLeast(24),
      120,
    )
    .option(
      '--store <url>',
      'the ledger: sqlite:<path>, redis://host:port or redis-cluster://… (default: a temporary SQLite file)',
    )
    .option(
      '--profile <id>',
      `quota model: ${BUILTIN_PROFILE_IDS.join(', ')}, or one defined under profiles in --config (it must price videos.list and search.list)`,
      'youtube-classic',
    )
    .option(
      '-c, --config <file>',
      'a config file whose profiles --profile may name (nothing else in it is used)',
    )
    .option('--quota <n>', 'daily quota of the metered bucket', integerAtLeast(100), 10_000)
    .option(
      '--behind-at <fraction>',
      'when someone else spends 20 % of the quota behind the guard, as a fraction of the day',
      fraction,
      0.5,
    )
    .option('--svg <file>', "write the day's spend curve of the backfill's bucket to FILE as an SVG")
    .option('--keep', 'keep the temporary ledger and cache files')
    .action(
      action(async (opts: DrillCommandOptions) => {
        const [{ runDrill }, { profileFor }] = await Promise.all([
          import('../../drill/drill.js'),
          import('../profile.js'),
        ]);
        const profile = await profileFor(opts.profile, opts.config);
        const progress = opts.json ? undefined : (line: string) => process.stderr.write(`drill: ${line}\n`);
        const report = await runDrill({
          daySeconds: opts.daySeconds,
          profile,
          quota: opts.quota,
          behindAt: opts.behindAt,
          ...(opts.store !== undefined ? { store: opts.store } : {}),
          ...(opts.keep ? { keep: true } : {}),
          ...(progress ? { onProgress: progress } : {}),
        });
        if (opts.svg !== undefined) {
          const [{ writeFileSync }, { drillSvg }] = await Promise.all([
            import('node:fs'),
            import('../../drill/svg.js'),
          ]);
          writeFileSync(opts.svg, drillSvg(report));
        }
        process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : renderDrill(report));
        return report.ok ? ExitCode.OK : ExitCode.SOFTWARE;
      }),
    );
}

/** The human form of a drill report. */
export function renderDrill(r: DrillReport): string {
  const out = [
    `quota-guard drill — ${r.store} ledger, ${r.profile}, a ${r.daySeconds}s day (an hour is ${r.hourSeconds}s), ${r.regions} regions, backlog ${formatNumber(r.backlogVideos)} videos`,
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
    `  trending runs completed: ${r.trendingRunsDone} of ${r.trendingRunsScheduled} (${(r.trendingRunsCompleted * 100).toFixed(1)}%); someone else spent at ${(r.behindAtDayFraction * 100).toFixed(0)}% of the day; the upstream ran dry at ${r.dryAtDayFraction === null ? 'no point' : `${(r.dryAtDayFraction * 100).toFixed(1)}% of the day`}`,
    '',
  );
  for (const c of r.checks) out.push(`  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.name}: ${c.detail}`);
  out.push('', r.ok ? 'drill passed' : 'drill FAILED');
  return `${out.join('\n')}\n`;
}
