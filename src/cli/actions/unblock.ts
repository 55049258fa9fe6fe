/** `quota-guard unblock`: the action (its options are declared in src/cli/commands/unblock.ts). */

import { bucketOf } from '../../config/lookups.js';
import { terminalJson } from '../../terminal-text.js';
import type { UnblockOptions } from '../command-options.js';
import { loadCliConfig } from '../config.js';
import { withContext } from '../context.js';
import { formatDuration } from '../render/format.js';

export async function run(
  credential: string,
  bucket: string,
  opts: UnblockOptions,
): Promise<number | undefined> {
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
          `${terminalJson({
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
}
