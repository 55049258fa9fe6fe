/**
 * `quota-guard migrate [--dry-run] [--json]`: bring the config's stores (the ledger, on SQLite or
 * Redis, and the cache) to this release's format, saying what each step changes and whether the
 * previous release still reads the result. The only command that takes a step the previous release
 * could not read; commands that only read never change a store. Exit 0 (also when nothing needed
 * doing, or a store does not exist yet), 69 when a store cannot be reached or opened, 70 for a store
 * of a newer format, 78 for a path that holds something else.
 */
import type { Command } from 'commander';
import { lazyAction } from '../action.js';
import { configOption } from '../options.js';

export function register(program: Command): void {
  configOption(
    program
      .command('migrate')
      .description(
        'bring the stores to this release’s format, saying what changes (--dry-run: change nothing)',
      )
      .option('--dry-run', 'say what would change, and change nothing')
      .option('--json', 'print one JSON object'),
  ).action(lazyAction(() => import('../actions/migrate.js')));
}
