/**
 * `quota-guard demo [--dir DIR]`: the main job on embedded defaults, with no Redis and no API key
 * (what it does: src/cli/demo.ts, loaded when the command runs).
 */
import type { Command } from 'commander';
import { lazyAction } from '../action.js';
import { configOption } from '../options.js';

export function register(program: Command): void {
  configOption(
    program
      .command('demo')
      .description(
        'run the main job on embedded defaults: simulator, 8 regional jobs at once, a backfill, status and a search (no Redis, no API key)',
      )
      .option(
        '--dir <dir>',
        'keep the ledger and cache in this directory (default: a temporary one, removed)',
      ),
  ).action(lazyAction(() => import('../actions/demo.js')));
}
