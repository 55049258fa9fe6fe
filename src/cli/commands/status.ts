/**
 * `quota-guard status [--json] [--credential ID]`: what the ledger holds per credential and bucket,
 * what each tier can still spend, blocks, and every region's last successful fetch (the text form is
 * src/cli/render/status.ts; the JSON fields are documented in docs/operations.md).
 */
import type { Command } from 'commander';
import { lazyAction } from '../action.js';
import { configOption } from '../options.js';

export function register(program: Command): void {
  configOption(
    program
      .command('status')
      .description(
        'show quota used and left per credential, bucket and tier, blocks, region freshness, spend by region and method',
      )
      .option('--json', 'print one JSON object (fields: docs/operations.md, "Reading status")')
      .option('--credential <id>', 'only this credential'),
  ).action(lazyAction(() => import('../actions/status.js')));
}
