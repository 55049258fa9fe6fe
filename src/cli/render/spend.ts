/**
 * What `quota-guard spend` prints: the decision (allowed or denied, with its Retry-After) and what a
 * `--report` did, as a line for people or as JSON.
 */
import type { SpendOutcome } from '../../guard/types.js';
import { formatDuration, formatNumber } from './format.js';

/** What `--report` made of an entry's call (`refund` is read as `never-sent`). */
export type ReportKind = 'sent' | 'never-sent' | 'exhausted';

function retryAfterSeconds(o: SpendOutcome): number {
  return Math.ceil(o.retryAfterMs / 1000);
}

/** The decision for scripts (`--json`). */
export function decisionJson(o: SpendOutcome) {
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

/** The decision for people: what was allowed or denied and why, and when to retry. */
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

/** What `--report` did, for scripts (`--json`). */
export function reportJson(entry: string, kind: ReportKind, spent: SpendOutcome) {
  return { entry, outcome: kind, credential: spent.credential, bucket: spent.bucket, allowed: spent.allowed };
}

/** What `--report` did, for people: refunded, blocked, or left charged. */
export function renderReport(entry: string, kind: ReportKind, spent: SpendOutcome): string {
  const what = `entry ${entry} (${spent.cost} unit${spent.cost === 1 ? '' : 's'} of ${spent.credential}/${spent.bucket})`;
  return kind === 'never-sent'
    ? `refunded: ${what}\n`
    : kind === 'exhausted'
      ? `blocked: ${spent.credential}/${spent.bucket} after ${what} met an exhausted quota\n`
      : `sent: ${what} stays charged\n`;
}
