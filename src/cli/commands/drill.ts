/**
 * `quota-guard drill [--json] [--day-seconds N] [--store URL] [--key-prefix P] [--profile P]
 * [--quota N] [--mixed]`: run one compressed quota day against the simulator with the real
 * scheduler, guard, ledger and cache, print the figures and check them. Exit 0 when every check passes, 70 when one fails.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { BUILTIN_PROFILE_IDS } from '../../profiles/profile-ids.js';
import { lazyAction } from '../action.js';
import { integerAtLeast } from '../options.js';

function fraction(value: string): number {
  const n = Number(value);
  if (!(n > 0 && n < 1)) throw new InvalidArgumentError('must be a number between 0 and 1');
  return n;
}

export function register(program: Command): void {
  program
    .command('drill')
    .description(
      'run one compressed quota day against the simulator (8 regions, a backfill backlog, a manual burst, someone else’s spend) and check the figures',
    )
    .option('--json', 'print one JSON object')
    .option(
      '--day-seconds <n>',
      'length of the compressed day in seconds (at least 24)',
      integerAtLeast(24),
      120,
    )
    .option(
      '--store <url>',
      'the ledger: sqlite:<path>, redis://host:port or redis-cluster://… (default: a temporary SQLite file)',
    )
    .option(
      '--profile <id>',
      `quota model: ${BUILTIN_PROFILE_IDS.join(', ')}, or one defined under profiles in --config (it must price videos.list and search.list)`,
      'youtube-classic',
    )
    .option(
      '-c, --config <file>',
      'a config file whose profiles --profile may name (nothing else in it is used)',
    )
    .option('--quota <n>', 'daily quota of the metered bucket', integerAtLeast(100), 10_000)
    .option(
      '--behind-at <fraction>',
      'when someone else spends 20 % of the quota behind the guard, as a fraction of the day',
      fraction,
      0.5,
    )
    .option(
      '--key-prefix <prefix>',
      "key prefix on Redis (default: one of the drill's own); the store is left as the day ended it",
    )
    .option(
      '--mixed',
      'host outside spenders: two serve --decisions instances (one killed at mid-day, one restarted at 0.75), and PHP and Python cron jobs spending about 1/8 of the units through them (needs php with curl, and python3)',
    )
    .option(
      '--reconcile',
      "reconcile with the simulator's Cloud Monitoring every 5 scaled minutes (lag 10): the spend behind the guard is seen and budgeted",
    )
    .option('--svg <file>', "write the day's spend curve of the backfill's bucket to FILE as an SVG")
    .option('--keep', 'keep the temporary ledger and cache files')
    .action(lazyAction(() => import('../actions/drill.js')));
}
