/**
 * `quota-guard status [--json] [--credential ID]`: what the ledger holds per credential and bucket,
 * what each tier can still spend, blocks, and every region's last successful fetch (the text form is
 * src/cli/status.ts; the JSON fields are documented in docs/operations.md).
 */
import type { Command } from 'commander';
import { redactStoreUrl } from '../../config/store-url.js';
import type { Config } from '../../config/types.js';
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
      const [{ withContext }, { quotaStatus }, { regionFreshness }, { openRunHistory }, { renderStatus }] =
        await Promise.all([
          import('../context.js'),
          import('../../guard/status.js'),
          import('../../history/freshness.js'),
          import('../../history/index.js'),
          import('../status.js'),
        ]);
      const view = await withContext(
        opts,
        async ({ config, ledger, logger }) => {
          const report: import('../status.js').StatusView = {
            ...(await quotaStatus(
              config,
              ledger,
              opts.credential !== undefined ? { credential: opts.credential } : {},
            )),
            ...storeLocations(config),
          };
          const history = await openRunHistory(config.store);
          try {
            report.freshness = await regionFreshness(config, history, Date.parse(report.at));
          } catch (e) {
            logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'run history unreadable');
          } finally {
            await history.close();
          }
          return report;
        },
        { readOnly: true },
      );
      process.stdout.write(
        opts.json
          ? `${JSON.stringify(view, null, 2)}\n`
          : renderStatus(view, { tty: process.stdout.isTTY === true }),
      );
      return 0;
    }),
  );
}

/** Where the ledger and the cache are, as an operator should see them: absolute, no password. */
function storeLocations(config: Config): { ledger: string; cache: string } {
  const url = config.store.url;
  return {
    ledger: url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : redactStoreUrl(url),
    cache: config.cache.path,
  };
}
