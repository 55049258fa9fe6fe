/** `quota-guard history`: the action (its options are declared in src/cli/commands/history.ts). */

import { parseDuration } from '../../config/duration.js';
import { InvalidArgumentError } from '../../errors.js';
import { openRunHistory } from '../../history/index.js';
import { terminalJson } from '../../terminal-text.js';
import { youtubeConfigured } from '../../youtube/trending-spend.js';
import type { HistoryOptions } from '../command-options.js';
import { loadCliConfig } from '../config.js';
import { outputWidth, renderHistory, runJson } from '../render/history.js';

export async function run(opts: HistoryOptions): Promise<number | undefined> {
  const config = await loadCliConfig(opts.config);
  const credentials =
    opts.credential !== undefined
      ? [config.credential(opts.credential).id]
      : config.credentials.map((c) => c.id);
  const region = opts.region !== undefined ? config.region(opts.region) : undefined;
  const limit = Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new InvalidArgumentError('--limit', `must be a whole number >= 1, got '${opts.limit}'`);
  let since: number | undefined;
  if (opts.since !== undefined) {
    const ms = parseDuration(opts.since);
    if (ms === undefined || ms <= 0)
      throw new InvalidArgumentError('--since', `'${opts.since}' is not a duration such as 30m, 6h or 1d`);
    since = Date.now() - ms;
  }
  const history = await openRunHistory(config.store);
  try {
    const runs = await history.list({
      credentials,
      limit,
      ...(region !== undefined ? { region } : {}),
      ...(since !== undefined ? { since } : {}),
    });
    process.stdout.write(
      opts.json
        ? `${terminalJson({ runs: runs.map(runJson) }, 2)}\n`
        : renderHistory(
            runs,
            config.credentials.length > 1,
            outputWidth(),
            youtubeConfigured(config) ? 'videos' : 'items',
          ),
    );
  } finally {
    await history.close();
  }
  return 0;
}
