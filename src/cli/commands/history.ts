/**
 * `quota-guard history [--region R] [--since 1d] [--limit N] [--credential ID] [--json]`: the last
 * job runs recorded in the ledger's store (every host's), newest first, with what each spent and why
 * it ended early. Reads the store only.
 */
import type { Command } from 'commander';
import { parseDuration } from '../../config/duration.js';
import { InvalidArgumentError } from '../../errors.js';
import { action } from '../action.js';
import { type ConfigOptions, configOption } from '../options.js';

interface HistoryOptions extends ConfigOptions {
  region?: string;
  since?: string;
  limit: string;
  credential?: string;
  json?: boolean;
}

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
      const [{ loadCliConfig }, { openRunHistory }, { renderHistory, runJson, outputWidth }] =
        await Promise.all([
          import('../config.js'),
          import('../../history/index.js'),
          import('../history.js'),
        ]);
      const config = await loadCliConfig(opts.config);
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
            : renderHistory(runs, config.credentials.length > 1, outputWidth()),
        );
      } finally {
        await history.close();
      }
      return 0;
    }),
  );
}
