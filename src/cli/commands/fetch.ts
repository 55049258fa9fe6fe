/**
 * `quota-guard fetch [--region R …] [--credential ID] [--json]`: fetch the trending charts now, every
 * configured region at once (or the ones named), each page spent through the guard and written to
 * the cache. Exit 0 done, 75 stopped by the budget (run again later), 69 store or upstream
 * unavailable, 78 configuration error.
 */
import type { Command } from 'commander';
import { lazyAction } from '../action.js';
import { collect, jobOptions } from '../options.js';

export function register(program: Command): void {
  jobOptions(
    program
      .command('fetch')
      .description(
        'fetch trending charts now (every configured region at once, or --region), spending through the guard',
      )
      .option(
        '-r, --region <code>',
        'a region to fetch (repeat for several; default: all configured)',
        collect,
        [],
      )
      .option(
        '--dry-run',
        'show what the run would spend against the ledger now, without fetching or recording',
      )
      .option('--json', 'print the results as JSON'),
  ).action(lazyAction(() => import('../actions/fetch.js')));
}
