/**
 * `quota-guard spend <credential> --cost N [--bucket B] [--tier T] [--tag S]`: spend units from a
 * shell script. Exit 0 when allowed, 75 when denied (with its Retry-After), 69 when the store is
 * down and the call site is fail-closed.
 */
import { type Command, Option } from 'commander';
import { TIERS, type Tier } from '../../config/types.js';
import { ExitCode } from '../../errors.js';
import type { SpendOutcome } from '../../guard/types.js';
import { action } from '../action.js';
import { type ConfigOptions, configOption, parsePositiveInt } from '../options.js';
import { formatDuration, formatNumber } from '../render/format.js';

interface SpendOptions extends ConfigOptions {
  cost: number;
  bucket?: string;
  tier: Tier;
  tag?: string;
  json?: boolean;
}

export function register(program: Command): void {
  configOption(
    program
      .command('spend')
      .description('spend units of a credential’s bucket (exit 0 allowed, 75 denied with Retry-After)')
      .argument('<credential>', 'credential id')
      .requiredOption('--cost <n>', 'units to spend', parsePositiveInt)
      .option('--bucket <bucket>', 'bucket to spend (default: the shared bucket, units)')
      .addOption(new Option('--tier <tier>', 'priority tier').choices(TIERS).default('manual'))
      .option('--tag <tag>', 'who spent it, shown by status (default spend:cli)')
      .option('--json', 'print the decision as JSON'),
  ).action(
    action(async (credential: string, opts: SpendOptions) => {
      const { withContext } = await import('../context.js');
      return withContext(
        opts,
        async ({ guard }) => {
          const outcome = await guard.spend({
            credential,
            ...(opts.bucket !== undefined ? { bucket: opts.bucket } : {}),
            cost: opts.cost,
            tier: opts.tier,
            tag: opts.tag ?? 'spend:cli',
          });
          process.stdout.write(
            opts.json ? `${JSON.stringify(decisionJson(outcome))}\n` : renderSpend(outcome),
          );
          if (outcome.allowed) return ExitCode.OK;
          return outcome.reason === 'store-down' ? ExitCode.UNAVAILABLE : ExitCode.TEMPFAIL;
        },
        // An unreachable Redis is the store-down policy's business, not an error at open.
        { allowUnreachable: true },
      );
    }),
  );
}

function retryAfterSeconds(o: SpendOutcome): number {
  return Math.ceil(o.retryAfterMs / 1000);
}

function decisionJson(o: SpendOutcome) {
  return {
    allowed: o.allowed,
    reason: o.reason,
    credential: o.credential,
    bucket: o.bucket,
    tier: o.tier,
    cost: o.cost,
    tag: o.tag,
    ceiling: o.ceiling,
    remaining: o.remaining ?? null,
    retryAfterMs: o.retryAfterMs,
    retryAfter: retryAfterSeconds(o),
    limitedBy: o.limitedBy ?? null,
    blockedUntil: o.blockedUntil !== undefined ? new Date(o.blockedUntil).toISOString() : null,
  };
}

export function renderSpend(o: SpendOutcome): string {
  const what = `${formatNumber(o.cost)} unit${o.cost === 1 ? '' : 's'} of ${o.credential}/${o.bucket} (${o.tier})`;
  switch (o.reason) {
    case 'allowed':
      return `allowed: ${what}; ${formatNumber(o.remaining ?? 0)} left under the ${o.tier} ceiling (${formatNumber(o.ceiling)})\n`;
    case 'fail-open':
      return `allowed: ${what} without recording it: the ledger store is unavailable and this call site fails open\n`;
    case 'store-down':
      return `denied: ${what}: the ledger store is unavailable and this call site fails closed\n`;
    case 'blocked':
      return (
        `denied: ${what}: blocked until ${new Date(o.blockedUntil ?? o.at + o.retryAfterMs).toISOString()}; ` +
        `retry in ${formatDuration(o.retryAfterMs)}\nRetry-After: ${retryAfterSeconds(o)}\n`
      );
    case 'budget':
      return (
        `denied: ${what}: ${formatNumber(o.remaining ?? 0)} left under ${o.limitedBy && o.limitedBy !== o.bucket ? o.limitedBy : `the ${o.tier} ceiling (${formatNumber(o.ceiling)})`}; ` +
        `retry in ${formatDuration(o.retryAfterMs)}\nRetry-After: ${retryAfterSeconds(o)}\n`
      );
  }
}
