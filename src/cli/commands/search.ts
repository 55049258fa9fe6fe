/**
 * `quota-guard search <query…> [--region R] [--limit N] [--json]`: search the local cache. It never
 * calls the upstream and never spends quota; the cache is filled by `fetch` and `backfill`.
 */
import type { Command } from 'commander';
import { terminalJson } from '../../terminal-text.js';
import { action } from '../action.js';
import { type ConfigOptions, configOption, parsePositiveInt } from '../options.js';
import { renderSearch } from '../search.js';

interface SearchCommandOptions extends ConfigOptions {
  region?: string;
  limit?: number;
  json?: boolean;
}

export function register(program: Command): void {
  const command = program
    .command('search')
    .description('search the local cache of fetched videos (never spends quota)')
    .argument('<query...>', 'words; "a phrase", -exclude, prefix* (with an -exclude, put the query after --)')
    .option('-r, --region <code>', 'only videos seen trending in this region')
    .option('-n, --limit <n>', 'hits to show, 1-100 (default 20)', parsePositiveInt)
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  quota-guard search official trailer',
        '  quota-guard search "official trailer" --region GB',
        '  quota-guard search -- music -live     (-live excludes "live"; after -- it is not read as an option)',
        '  quota-guard search trail*',
      ].join('\n'),
    );
  // `search music -live` reads -live as an option: say what to type instead.
  const output = command.configureOutput();
  command.configureOutput({
    ...output,
    outputError: (str, write) => {
      const flag = /unknown option '-([^-'][^']*)'/.exec(str)?.[1];
      const said =
        flag !== undefined
          ? `${str.trimEnd()}: to exclude "${flag}", put the query after -- (quota-guard search -- <words> -${flag})\n`
          : str;
      if (output.outputError) output.outputError(said, write);
      else write(said);
    },
  });
  configOption(command).action(
    action(async (words: string[], opts: SearchCommandOptions) => {
      const [{ loadCliConfig }, { openCache }] = await Promise.all([
        import('../config.js'),
        import('../../cache/index.js'),
      ]);
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
    }),
  );
}
