/**
 * `quota-guard history [--region R] [--since 1d] [--limit N] [--credential ID] [--json]`: the last
 * job runs recorded in the ledger's store (every host's), newest first, with what each spent and why
 * it ended early. Reads the store only.
 */
import type { Command } from 'commander';
import { DateTime } from 'luxon';
import { parseDuration } from '../../config/duration.js';
import { InvalidArgumentError } from '../../errors.js';
import type { RunSummary } from '../../history/index.js';
import { action } from '../action.js';
import { formatDuration, formatNumber, table } from '../format.js';
import { type ConfigOptions, configOption } from '../options.js';

interface HistoryOptions extends ConfigOptions {
  region?: string;
  since?: string;
  limit: string;
  credential?: string;
  json?: boolean;
}

/** The terminal width the table keeps to. */
const WIDTH = 100;

export function register(program: Command): void {
  configOption(
    program
      .command('history')
      .description('list the last job runs (every host’s) from the ledger’s store, newest first')
      .option('-r, --region <code>', 'only the runs of this region')
      .option('--since <duration>', 'only runs started within this long (e.g. 6h, 1d)')
      .option('-n, --limit <n>', 'at most this many runs', '50')
      .option('--credential <id>', 'only this credential')
      .option('--json', 'print one JSON object'),
  ).action(
    action(async (opts: HistoryOptions) => {
      const [{ loadConfig }, { openRunHistory }] = await Promise.all([
        import('../../config/load.js'),
        import('../../history/index.js'),
      ]);
      const config = loadConfig(opts.config !== undefined ? { file: opts.config } : {});
      const credentials =
        opts.credential !== undefined
          ? [config.credential(opts.credential).id]
          : config.credentials.map((c) => c.id);
      const region = opts.region !== undefined ? config.region(opts.region) : undefined;
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1)
        throw new InvalidArgumentError('--limit', `must be a whole number >= 1, got '${opts.limit}'`);
      let since: number | undefined;
      if (opts.since !== undefined) {
        const ms = parseDuration(opts.since);
        if (ms === undefined || ms <= 0)
          throw new InvalidArgumentError(
            '--since',
            `'${opts.since}' is not a duration such as 30m, 6h or 1d`,
          );
        since = Date.now() - ms;
      }
      const history = await openRunHistory(config.store);
      try {
        const runs = await history.list({
          credentials,
          limit,
          ...(region !== undefined ? { region } : {}),
          ...(since !== undefined ? { since } : {}),
        });
        process.stdout.write(
          opts.json
            ? `${JSON.stringify({ runs: runs.map(runJson) }, null, 2)}\n`
            : renderHistory(runs, config.credentials.length > 1),
        );
      } finally {
        await history.close();
      }
      return 0;
    }),
  );
}

/** A run for scripts: times as ISO strings besides the epoch ms. */
export function runJson(r: RunSummary): Record<string, unknown> {
  return {
    ...r,
    started: new Date(r.startedAt).toISOString(),
    finished: new Date(r.finishedAt).toISOString(),
    durationMs: r.finishedAt - r.startedAt,
  };
}

/** `11-23 14:05:09` in the operator's zone. */
export function localTime(ms: number): string {
  return DateTime.fromMillis(ms).toFormat('MM-dd HH:mm:ss');
}

/** The human form: one line per run, within 100 columns (the reason is cut to fit). */
export function renderHistory(runs: RunSummary[], showCredential: boolean): string {
  if (runs.length === 0) return 'no runs recorded yet (jobs record each run when they finish)\n';
  const head = ['started', ...(showCredential ? ['credential'] : []), 'job', 'outcome', 'took'];
  const rows = [[...head, 'pages', 'units', 'videos']];
  for (const r of runs) {
    rows.push([
      localTime(r.startedAt),
      ...(showCredential ? [r.credential] : []),
      r.job,
      r.outcome,
      formatDuration(r.finishedAt - r.startedAt),
      formatNumber(r.pages),
      formatNumber(r.units),
      formatNumber(r.videos),
    ]);
  }
  const lines = table(rows).split('\n');
  const out = [runs.some((r) => r.reason) ? `${lines[0]!}  reason` : lines[0]!];
  runs.forEach((r, i) => {
    const line = lines[i + 1]!;
    const room = WIDTH - line.length - 2;
    out.push(r.reason && room > 8 ? `${line}  ${clip(r.reason, room)}` : line);
  });
  out.push(`(${runs.length} run${runs.length === 1 ? '' : 's'}, newest first; times in ${localZone()})`);
  return `${out.join('\n')}\n`;
}

export function clip(s: string, width: number): string {
  const chars = [...s];
  return chars.length <= width ? s : `${chars.slice(0, width - 1).join('')}…`;
}

export function localZone(): string {
  return DateTime.local().zoneName ?? 'local time';
}
