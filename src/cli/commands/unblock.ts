/**
 * `quota-guard unblock <credential> <bucket> [--json]`: lift a bucket's block before it ends (an
 * operator knows the upstream's quota is back, e.g. after a quota increase). The block is lifted on
 * the shared ledger, so every host spends again; the guard logs it with the block it lifted.
 * Exit 0 (also when the bucket was not blocked), 78 for an unknown credential or bucket, 66 when
 * the SQLite ledger does not exist (nothing is created: there is no block in a ledger never used).
 */
import type { Command } from 'commander';
import { action } from '../action.js';
import { type ConfigOptions, configOption } from '../options.js';

interface UnblockOptions extends ConfigOptions {
  json?: boolean;
}

export function register(program: Command): void {
  configOption(
    program
      .command('unblock')
      .description('lift a bucket’s block now (after the upstream gave the quota back), on every host')
      .argument('<credential>', 'credential id')
      .argument('<bucket>', 'bucket id, e.g. units or search.list')
      .option('--json', 'print what was lifted as JSON'),
  ).action(
    action(async (credential: string, bucket: string, opts: UnblockOptions) => {
      const [{ withContext }, { formatDuration }, { loadCliConfig }, { bucketOf }] = await Promise.all([
        import('../context.js'),
        import('../format.js'),
        import('../config.js'),
        import('../../config/lookups.js'),
      ]);
      // A mistyped credential or bucket is said first (78), before the ledger is looked for.
      const config = await loadCliConfig(opts.config);
      bucketOf(config.credential(credential), bucket);
      return withContext(
        opts,
        async ({ guard }) => {
          const lifted = await guard.unblock(credential, bucket, 'cli');
          const at = lifted.blockedUntil;
          if (opts.json) {
            process.stdout.write(
              `${JSON.stringify({
                credential,
                bucket,
                wasBlocked: at !== undefined,
                blockedUntil: at !== undefined ? new Date(at).toISOString() : null,
                reason: lifted.reason ?? null,
              })}\n`,
            );
          } else if (at === undefined) {
            process.stdout.write(`${credential}/${bucket} was not blocked; nothing to lift\n`);
          } else {
            const left = at - Date.now();
            process.stdout.write(
              `unblocked ${credential}/${bucket}: it was blocked until ${new Date(at).toISOString()}` +
                `${left > 0 ? ` (${formatDuration(left)} from now)` : ''}${lifted.reason ? `: ${lifted.reason}` : ''}; every tier may spend it again\n`,
            );
          }
          return 0;
        },
        { config, existingLedger: true },
      );
    }),
  );
}
