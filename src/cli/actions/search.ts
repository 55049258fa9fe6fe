/** `quota-guard search`: the action (its options are declared in src/cli/commands/search.ts). */

import { terminalJson } from '../../terminal-text.js';
import { openCache } from '../../youtube/cache/index.js';
import type { SearchCommandOptions } from '../command-options.js';
import { loadCliConfig } from '../config.js';
import { renderSearch } from '../render/search.js';

export async function run(words: string[], opts: SearchCommandOptions): Promise<number | undefined> {
  const query = words.join(' ');
  const config = await loadCliConfig(opts.config);
  const region = opts.region !== undefined ? config.region(opts.region) : undefined;
  const cache = openCache(config.cache.path, { create: false });
  try {
    const result = cache.search(query, {
      ...(region !== undefined ? { region } : {}),
      ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
    });
    process.stdout.write(
      opts.json ? `${terminalJson(result, 2)}\n` : renderSearch(query, result, cache.stats().videos),
    );
  } finally {
    cache.close();
  }
  return 0;
}
