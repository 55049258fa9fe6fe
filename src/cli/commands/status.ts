/**
 * `quota-guard status [--json] [--credential ID]`: what the ledger holds per credential and bucket,
 * what each tier can still spend, blocks, and every region's last successful fetch (the text form is
 * src/cli/status.ts; the JSON fields are documented in docs/operations.md).
 */
import type { Command } from 'commander';
import { action } from '../action.js';
import { type ConfigOptions, configOption } from '../options.js';

interface StatusOptions extends ConfigOptions {
  json?: boolean;
  credential?: string;
}

export function register(program: Command): void {
  configOption(
    program
      .command('status')
      .description(
        'show quota used and left per credential, bucket and tier, blocks, region freshness, spend by region and method',
      )
      .option('--json', 'print one JSON object (fields: docs/operations.md, "Reading status")')
      .option('--credential <id>', 'only this credential'),
  ).action(
    action(async (opts: StatusOptions) => {
      const [{ withContext }, { statusView, renderStatus, outputWidth }] = await Promise.all([
        import('../context.js'),
        import('../status-view.js'),
      ]);
      const view = await withContext(
        opts,
        ({ config, ledger, logger }) => statusView(config, ledger, logger, opts.credential),
        { readOnly: true },
      );
      process.stdout.write(
        opts.json
          ? `${JSON.stringify(view, null, 2)}\n`
          : renderStatus(view, { tty: process.stdout.isTTY === true, width: outputWidth() }),
      );
      return 0;
    }),
  );
}
