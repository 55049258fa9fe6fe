/**
 * `quota-guard backfill [--max-units N] [--credential ID] [--json]`: refresh cached videos, oldest
 * refresh first, under the backfill tier; resumes where the last run stopped. A progress bar on a
 * terminal, periodic log lines otherwise. Exit 0 done (or --max-units spent), 75 stopped at the
 * headroom line or by the budget, 69 store or upstream unavailable, 78 configuration error.
 */
import type { Command } from 'commander';
import { lazyAction } from '../action.js';
import { jobOptions, parsePositiveInt } from '../options.js';

export function register(program: Command): void {
  jobOptions(
    program
      .command('backfill')
      .description(
        'refresh cached videos (oldest first) under the backfill tier; resumes where the last run stopped',
      )
      .option('--max-units <n>', 'spend at most this many units in this run', parsePositiveInt)
      .option(
        '--dry-run',
        'show what the run would spend against the ledger now, without calling the upstream or recording',
      )
      .option('--json', 'print the result as JSON'),
  ).action(lazyAction(() => import('../actions/backfill.js')));
}
