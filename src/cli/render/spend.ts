/**
 * What `quota-guard spend` prints: the decision (allowed or denied, with its Retry-After) and what a
 * `--report` did, as a line for people or as JSON.
 */
import type { ReportResult } from '../../guard/report.js';
import type { SpendOutcome } from '../../guard/types.js';
import { count, formatDuration, formatNumber } from './format.js';

/** What `--report` made of an entry's call (`refund` is read as `never-sent`). */
export type ReportKind = 'sent' | 'never-sent' | 'exhausted';

function retryAfterSeconds(o: SpendOutcome): number {
  return Math.ceil(o.retryAfterMs / 1000);
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

/** What `--report` did, for scripts (`--json`): the decision API's answer to `POST /v1/report`. */
export function reportJson(entry: string, kind: ReportKind, spent: SpendOutcome) {
  return { entry, outcome: kind, credential: spent.credential, bucket: spent.bucket, allowed: spent.allowed };
}

/**
 * What `--report` did, for people: refunded (or nothing left to refund: a second report of the same
 * call), blocked, or nothing to change for a call that was sent.
 */
export function renderReport(entry: string, result: ReportResult, spent: SpendOutcome): string {
  const what = `entry ${entry} (${count(spent.cost, 'unit')} of ${spent.credential}/${spent.bucket})`;
  switch (result.kind) {
    case 'never-sent':
      return result.refunded
        ? `refunded: ${what}\n`
        : `not refunded: ${what}: nothing left to take back (refunded before, denied, or aged out of its window)\n`;
    case 'exhausted':
      return `blocked: ${spent.credential}/${result.bucket} after ${what} met an exhausted quota\n`;
    case 'sent':
      return `sent: ${what}: nothing changed (a call that was sent is not refunded; a refund made before stands)\n`;
  }
}
