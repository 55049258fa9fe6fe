/**
 * `quota-guard spend <credential> (--method M | --cost N [--bucket B]) [--tier T] [--tag S] [--entry ID]`:
 * spend units from a shell script. Exit 0 when allowed, 75 when denied (with its Retry-After), 69
 * when the store is down and the call site is fail-closed. The tier is `scheduled` unless asked.
 *
 * `quota-guard spend <credential> --entry ID --report never-sent|exhausted|sent [--until T]`: what
 * became of that entry's call: refunded, the bucket blocked (never past the upstream's next
 * reset), or nothing to do. Idempotent.
 */
import { type Command, Option } from 'commander';
import { TIERS } from '../../config/types.js';
import { lazyAction } from '../action.js';
import { SPEND_REPORTS } from '../command-options.js';
import { configOption, parsePositiveInt } from '../options.js';

export function register(program: Command): void {
  configOption(
    program
      .command('spend')
      .description('spend units of a credential’s bucket (exit 0 allowed, 75 denied with Retry-After)')
      .argument('<credential>', 'credential id')
      .option('--method <method>', 'an API method: its bucket and cost come from the profile')
      .option('--cost <n>', 'units to spend (default: the method’s cost)', parsePositiveInt)
      .option('--bucket <bucket>', 'bucket to spend (default: the method’s, else the shared bucket)')
      .addOption(new Option('--tier <tier>', 'priority tier').choices(TIERS).default('scheduled'))
      .option('--tag <tag>', 'who spent it, shown by status (default spend:cli)')
      .option('--entry <id>', 'the spend’s entry id: sent again, answered as the first time and charged once')
      .addOption(
        new Option('--report <outcome>', 'report what became of --entry’s call instead of spending').choices(
          SPEND_REPORTS,
        ),
      )
      .option(
        '--until <time>',
        'with --report exhausted: blocked until then (ISO time; default the next reset)',
      )
      .option('--json', 'print the decision as JSON'),
  ).action(lazyAction(() => import('../actions/spend.js')));
}
