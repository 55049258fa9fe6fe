/**
 * `quota-guard plan [--json]`: before anything runs, the units each schedule spends at most per
 * bucket against its ceilings and narrower budgets; where it does not fit, by how much and what to
 * change. Exit 0 when it fits, 65 when it does not. Reads only the config: no store, no upstream.
 */
import type { Command } from 'commander';
import { lazyAction } from '../action.js';
import { configOption } from '../options.js';

export function register(program: Command): void {
  configOption(
    program
      .command('plan')
      .description(
        'check before running that the schedules fit each bucket and budget (exit 0 fits, 65 does not)',
      )
      .option('--json', 'print one JSON object'),
  ).action(lazyAction(() => import('../actions/plan.js')));
}
