/**
 * `quota-guard search <query…> [--region R] [--limit N] [--json]`: search the local cache. It never
 * calls the upstream and never spends quota; the cache is filled by `fetch` and `backfill`.
 */
import type { Command } from 'commander';
import { lazyAction } from '../action.js';
import { configOption, parsePositiveInt } from '../options.js';

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
        '  quota-guard search -- music -live     (-live excludes "live";',
        '                                         after -- it is not read as an option)',
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
  configOption(command).action(lazyAction(() => import('../actions/search.js')));
}
