/**
 * `quota-guard history [--region R] [--since 1d] [--limit N] [--credential ID] [--json]`: the last
 * job runs recorded in the ledger's store (every host's), newest first, with what each spent and why
 * it ended early. Reads the store only.
 */
import type { Command } from 'commander';
import { lazyAction } from '../action.js';
import { configOption } from '../options.js';

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
  ).action(lazyAction(() => import('../actions/history.js')));
}
