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
import { TIERS, type Tier } from '../../config/types.js';
import { ExitCode, InvalidArgumentError, QuotaGuardError } from '../../errors.js';
import type { Guard } from '../../guard/guard.js';
import type { SpendOutcome } from '../../guard/types.js';
import { action } from '../action.js';
import { type ConfigOptions, configOption, parsePositiveInt } from '../options.js';
import { formatDuration, formatNumber } from '../render/format.js';

const REPORTS = ['sent', 'never-sent', 'refund', 'exhausted'] as const;

interface SpendOptions extends ConfigOptions {
  cost?: number;
  method?: string;
  bucket?: string;
  entry?: string;
  report?: (typeof REPORTS)[number];
  until?: string;
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
      .option('--method <method>', 'an API method: its bucket and cost come from the profile')
      .option('--cost <n>', 'units to spend (default: the method’s cost)', parsePositiveInt)
      .option('--bucket <bucket>', 'bucket to spend (default: the method’s, else the shared bucket)')
      .addOption(new Option('--tier <tier>', 'priority tier').choices(TIERS).default('scheduled'))
      .option('--tag <tag>', 'who spent it, shown by status (default spend:cli)')
      .option('--entry <id>', 'the spend’s entry id: sent again, answered as the first time and charged once')
      .addOption(
        new Option('--report <outcome>', 'report what became of --entry’s call instead of spending').choices(
          REPORTS,
        ),
      )
      .option(
        '--until <time>',
        'with --report exhausted: blocked until then (ISO time; default the next reset)',
      )
      .option('--json', 'print the decision as JSON'),
  ).action(
    action(async (credential: string, opts: SpendOptions) => {
      const { withContext } = await import('../context.js');
      return withContext(
        opts,
        async ({ guard }) => {
          if (opts.report !== undefined) return report(guard, credential, opts);
          if (opts.method === undefined && opts.cost === undefined) {
            throw new InvalidArgumentError('--cost', 'give --method, or --cost (with --bucket)');
          }
          const outcome = await guard.spend({
            credential,
            ...(opts.method !== undefined ? { method: opts.method } : {}),
            ...(opts.bucket !== undefined ? { bucket: opts.bucket } : {}),
            ...(opts.cost !== undefined ? { cost: opts.cost } : {}),
            ...(opts.entry !== undefined ? { entry: opts.entry } : {}),
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

/** `--report`: the entry's spend found again, then what became of its call applied. */
async function report(guard: Guard, credential: string, opts: SpendOptions): Promise<number> {
  if (opts.entry === undefined) throw new InvalidArgumentError('--report', 'needs the --entry it is about');
  let until: number | undefined;
  if (opts.until !== undefined) {
    if (opts.report !== 'exhausted')
      throw new InvalidArgumentError('--until', 'only with --report exhausted');
    until = Date.parse(opts.until);
    if (Number.isNaN(until)) throw new InvalidArgumentError('--until', `'${opts.until}' is not an ISO time`);
  }
  const args = await guard.recallEntry(credential, opts.entry);
  if (!args) {
    throw new QuotaGuardError(
      'QG_ENTRY_UNKNOWN',
      `entry '${opts.entry}' is not known: never spent, or its window has passed`,
    );
  }
  const spent = await guard.spend({ ...args, entry: opts.entry, recallOnly: true, failMode: 'closed' });
  if (spent.reason === 'store-down') return ExitCode.UNAVAILABLE;
  const kind = opts.report === 'refund' ? 'never-sent' : opts.report!;
  await guard.report(
    spent,
    kind === 'exhausted' ? { kind, ...(until !== undefined ? { until } : {}) } : { kind },
  );
  const what = `entry ${opts.entry} (${spent.cost} unit${spent.cost === 1 ? '' : 's'} of ${spent.credential}/${spent.bucket})`;
  process.stdout.write(
    opts.json
      ? `${JSON.stringify({ entry: opts.entry, outcome: kind, credential: spent.credential, bucket: spent.bucket, allowed: spent.allowed })}\n`
      : kind === 'never-sent'
        ? `refunded: ${what}\n`
        : kind === 'exhausted'
          ? `blocked: ${spent.credential}/${spent.bucket} after ${what} met an exhausted quota\n`
          : `sent: ${what} stays charged\n`,
  );
  return ExitCode.OK;
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
    entry: o.entry ?? null,
    replayed: o.replayed === true,
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
