/**
 * `quota-guard unblock <credential> <bucket> [--json]`: lift a bucket's block before it ends (an
 * operator knows the upstream's quota is back, e.g. after a quota increase). The block is lifted on
 * the shared ledger, so every host spends again; the guard logs it with the block it lifted.
 * Exit 0 (also when the bucket was not blocked), 78 for an unknown credential or bucket, 66 when
 * the SQLite ledger does not exist (nothing is created: there is no block in a ledger never used).
 */
import type { Command } from 'commander';
import { lazyAction } from '../action.js';
import { configOption } from '../options.js';

export function register(program: Command): void {
  configOption(
    program
      .command('unblock')
      .description('lift a bucket’s block now (after the upstream gave the quota back), on every host')
      .argument('<credential>', 'credential id')
      .argument('<bucket>', 'bucket id, e.g. units or search.list')
      .option('--json', 'print what was lifted as JSON'),
  ).action(lazyAction(() => import('../actions/unblock.js')));
}
