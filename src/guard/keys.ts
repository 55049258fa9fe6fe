/**
 * Ledger keys and the budgets of one spend. Every key of a credential starts with `qg:{<credential>}`,
 * so all the budgets of one spend hash to one Redis Cluster slot and are spent atomically.
 *
 *   qg:{default}:units                    the bucket's sliding log (window: 24h, the default)
 *   qg:{default}:units:day:2026-01-15     the bucket's log for one upstream day (window: upstream-day)
 *   qg:{default}:units:pace               the bucket's pace budget (a sliding log)
 *   qg:{default}:budget:backfill-hourly   a narrower budget from the config
 *
 * How a bucket is windowed is decided in one place, `bucketWindow`: a new window mode adds a case
 * there and nowhere else.
 */

import { dayKey, dayLengthMs, nextMidnight } from '../calendar-day.js';
import type { BucketConfig, BudgetConfig, CredentialConfig, Tier } from '../config/types.js';
import type { Budget } from '../ledger/types.js';

export function credentialKeyPrefix(credential: string): string {
  return `qg:{${credential}}`;
}

export function bucketKey(credential: string, bucket: string): string {
  return `${credentialKeyPrefix(credential)}:${bucket}`;
}

export function dayBucketKey(credential: string, bucket: string, day: string): string {
  return `${bucketKey(credential, bucket)}:day:${day}`;
}

export function paceKey(credential: string, bucket: string): string {
  return `${bucketKey(credential, bucket)}:pace`;
}

export function budgetKey(credential: string, budget: string): string {
  return `${credentialKeyPrefix(credential)}:budget:${budget}`;
}

/** The log a bucket spends at `nowMs`. */
export interface BucketWindow {
  key: string;
  windowMs: number;
  /** When everything in this log frees at once (upstream-day: the upstream's next midnight). */
  resetsAt?: number;
}

export function bucketWindow(
  credential: CredentialConfig,
  bucket: BucketConfig,
  nowMs: number,
): BucketWindow {
  const w = bucket.window;
  switch (w.kind) {
    case 'sliding':
      return { key: bucketKey(credential.id, bucket.id), windowMs: w.ms };
    case 'upstream-day':
      return {
        key: dayBucketKey(credential.id, bucket.id, dayKey(credential.timeZone, nowMs)),
        windowMs: dayLengthMs(credential.timeZone, nowMs),
        resetsAt: nextMidnight(credential.timeZone, nowMs),
      };
  }
}

/** One budget a spend must fit under, with what it is for (to explain a denial). */
export interface SpendBudget extends Budget {
  /** `bucket`, `pace`, `budget`, or `backfill-day` (the backfill's pacing line over the upstream day). */
  role: 'bucket' | 'pace' | 'budget' | 'backfill-day';
  /** Human name: the bucket id, `<bucket> pace`, `budget <id>`, or `<bucket> backfill pace`. */
  name: string;
  resetsAt?: number;
}

/** Whether a narrower budget covers a spend of `method` (or of the bare bucket) at `tier`. */
export function budgetCovers(
  budget: BudgetConfig,
  bucket: string,
  method: string | undefined,
  tier: Tier,
): boolean {
  if (budget.bucket !== bucket || !budget.tiers.includes(tier)) return false;
  if (budget.methods === undefined) return true;
  return method !== undefined && budget.methods.includes(method);
}

/**
 * Every budget one spend must fit under: the bucket at the tier's ceiling, its pace budget, and
 * each narrower budget covering (method, tier). All share the credential's hash tag.
 */
export function spendBudgets(
  credential: CredentialConfig,
  bucket: BucketConfig,
  method: string | undefined,
  tier: Tier,
  nowMs: number,
): SpendBudget[] {
  const w = bucketWindow(credential, bucket, nowMs);
  const out: SpendBudget[] = [
    {
      key: w.key,
      limit: bucket.ceilings[tier],
      windowMs: w.windowMs,
      role: 'bucket',
      name: bucket.id,
      ...(w.resetsAt !== undefined ? { resetsAt: w.resetsAt } : {}),
    },
  ];
  if (bucket.pace) {
    out.push({
      key: paceKey(credential.id, bucket.id),
      limit: bucket.pace.limit,
      windowMs: bucket.pace.windowMs,
      role: 'pace',
      name: `${bucket.id} pace`,
    });
  }
  for (const b of credential.budgets) {
    if (!budgetCovers(b, bucket.id, method, tier)) continue;
    out.push({
      key: budgetKey(credential.id, b.id),
      limit: b.limit,
      windowMs: b.windowMs,
      role: 'budget',
      name: `budget ${b.id}`,
    });
  }
  return out;
}
