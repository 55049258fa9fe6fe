/** `quota-guard spend`: the action (its options are declared in src/cli/commands/spend.ts). */

import { randomBytes } from 'node:crypto';
import { spendAnswer } from '../../api/answers.js';
import { bucketOf, methodOf } from '../../config/lookups.js';
import { ExitCode, InvalidArgumentError, QuotaGuardError } from '../../errors.js';
import type { Guard } from '../../guard/guard.js';
import { withMethod } from '../../guard/tags.js';
import { terminalJson } from '../../terminal-text.js';
import type { SpendOptions } from '../command-options.js';
import { loadCliConfig } from '../config.js';
import { withContext } from '../context.js';
import { renderReport, renderSpend, reportJson } from '../render/spend.js';

export async function run(credential: string, opts: SpendOptions): Promise<number> {
  // A mistyped credential, bucket or method is said first (78), before a ledger is opened or made.
  const config = await loadCliConfig(opts.config);
  const c = config.credential(credential);
  if (opts.bucket !== undefined) bucketOf(c, opts.bucket);
  if (opts.method !== undefined) methodOf(c, opts.method);
  if (opts.report === undefined && opts.method === undefined && opts.cost === undefined) {
    throw new InvalidArgumentError('--cost', 'give --method, or --cost (with --bucket)');
  }
  return withContext(
    opts,
    async ({ guard }) => {
      if (opts.report !== undefined) return report(guard, credential, opts);
      // With --json the answer is the decision API's (POST /v1/spend), which always names an entry:
      // one is made here when none is given, so that `--report` can be told about the call.
      const entry = opts.entry ?? (opts.json ? randomBytes(12).toString('base64url') : undefined);
      const outcome = await guard.spend({
        credential,
        ...(opts.method !== undefined ? { method: opts.method } : {}),
        ...(opts.bucket !== undefined ? { bucket: opts.bucket } : {}),
        ...(opts.cost !== undefined ? { cost: opts.cost } : {}),
        ...(entry !== undefined ? { entry } : {}),
        tier: opts.tier,
        tag: withMethod(opts.tag ?? 'spend:cli', opts.method),
      });
      process.stdout.write(
        opts.json ? `${terminalJson(spendAnswer(outcome, entry ?? ''))}\n` : renderSpend(outcome),
      );
      if (outcome.allowed) return ExitCode.OK;
      return outcome.reason === 'store-down' ? ExitCode.UNAVAILABLE : ExitCode.TEMPFAIL;
    },
    // An unreachable Redis is the store-down policy's business, not an error at open.
    { allowUnreachable: true, config },
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
  const result = await guard.report(
    spent,
    kind === 'exhausted' ? { kind, ...(until !== undefined ? { until } : {}) } : { kind },
  );
  process.stdout.write(
    opts.json
      ? `${terminalJson(reportJson(opts.entry, kind, spent))}\n`
      : renderReport(opts.entry, result, spent),
  );
  return ExitCode.OK;
}
