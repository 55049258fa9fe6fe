/**
 * How the ledger's answer and the backfill's pacing line become the guard's outcome of a spend:
 * the backfill's bucket limit and day log, and a Retry-After that is exact for logs keyed by the
 * upstream day, for the rising pacing line and for the scheduled need as its runs start.
 */
import type { Decision } from '../ledger/types.js';
import type { SpendBudget } from './keys.js';
import { type BackfillPacer, backfillDayKey, type PacingLine } from './pacing.js';
import type { SpendBase } from './resolve.js';
import type { SpendOutcome } from './types.js';

/** What the backfill's denials wait for: the need held back to drop, the line to rise. */
type PaceWaits = Pick<BackfillPacer, 'untilNeedDrops' | 'untilLineAllows'>;

/**
 * A backfill spend: the bucket's limit becomes the backfill's ceiling less the scheduled need, and
 * the day's backfill log is spent with the pacing line as its limit. Returns a denial when either
 * is already short (the ledger refuses limits below the cost), else undefined.
 */
export function paceBackfill(
  budgets: SpendBudget[],
  line: PacingLine,
  cost: number,
  base: SpendBase,
  waits: PaceWaits,
): SpendOutcome | undefined {
  const bucket = budgets[0]!;
  const dayLimit = line.allowed ?? Number.MAX_SAFE_INTEGER;
  const denied = (limitedBy: string, remaining: number, retryAfterMs: number): SpendOutcome => ({
    ...base,
    ceiling: line.ceiling,
    allowed: false,
    reason: 'budget',
    retryAfterMs: Math.max(1, Math.ceil(retryAfterMs)),
    remaining: Math.max(0, remaining),
    limitedBy,
  });
  // A blocked bucket: the ledger says so.
  if (line.blockedUntil !== undefined) return undefined;
  if (line.ceiling < cost) {
    // Held back for the scheduled runs: it frees as they start.
    return denied(bucket.name, line.ceiling - line.used, waits.untilNeedDrops(line));
  }
  // A full bucket is the bucket's denial (the ledger says when it frees), not the line's.
  const full = line.used + cost > line.ceiling;
  if (!full && line.spentToday + cost > dayLimit)
    return denied(
      `${bucket.name} backfill pace`,
      dayLimit - line.spentToday,
      waits.untilLineAllows(line, cost),
    );
  bucket.limit = line.ceiling;
  budgets.push({
    key: backfillDayKey(line.credential, line.bucket, line.dayStart),
    limit: Math.max(cost, dayLimit),
    windowMs: line.dayEnd - line.dayStart,
    role: 'backfill-day',
    name: `${bucket.name} backfill pace`,
  });
  return undefined;
}

/** The guard's outcome of a ledger decision: the Retry-After made exact for day logs and the pacing line. */
export function fromDecision(
  base: SpendBase,
  budgets: SpendBudget[],
  d: Decision,
  line: PacingLine | undefined,
  waits: PaceWaits,
): SpendOutcome {
  if (d.allowed)
    return {
      ...base,
      allowed: true,
      reason: 'allowed',
      retryAfterMs: 0,
      remaining: d.remaining,
      decision: d,
      at: d.at,
    };
  const limiter = budgets.find((p) => p.key === d.limitedBy);
  let retryAfterMs = d.retryAfterMs;
  // A log keyed by the upstream day empties at the upstream's midnight, not when its entries age out.
  if (d.blockedUntil === undefined && limiter?.resetsAt !== undefined) {
    retryAfterMs = Math.min(retryAfterMs, Math.max(1, limiter.resetsAt - d.at));
  }
  // The pacing line rises with time; its entries do not age out within the day. The scheduled
  // need held back from the backfill shrinks as the runs start.
  if (d.blockedUntil === undefined && line) {
    if (limiter?.role === 'backfill-day') retryAfterMs = waits.untilLineAllows(line, base.cost);
    else if (limiter?.role === 'bucket') retryAfterMs = Math.min(retryAfterMs, waits.untilNeedDrops(line));
  }
  return {
    ...base,
    allowed: false,
    reason: d.blockedUntil !== undefined ? 'blocked' : 'budget',
    retryAfterMs,
    remaining: d.remaining,
    ...(limiter ? { limitedBy: limiter.name } : {}),
    limitedByKey: d.limitedBy,
    ...(d.blockedUntil !== undefined ? { blockedUntil: d.blockedUntil } : {}),
    decision: d,
    at: d.at,
  };
}
