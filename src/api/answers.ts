/**
 * The decision API's answers, built from the guard's and the history's own values; a spend's is
 * also what `quota-guard spend --json` prints, so a script reads the same fields whichever way it
 * spent.
 */
import type { SpendOutcome } from '../guard/types.js';
import { type RunSummary, withCompatibleFields } from '../history/types.js';

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * A spend's answer: the guard's SpendOutcome values, times absolute as ISO and epoch ms. With
 * `allowUnknown`, a spend whose store command was sent but not answered (it may still run) is
 * `unknown` rather than `store-down`: the caller resolves its entry later (/v1/record, /v1/void);
 * and the spend of an entry voided before it landed is `void` (it charges nothing).
 */
export function spendAnswer(o: SpendOutcome, entry: string, allowUnknown = false): Record<string, unknown> {
  const storeDown = o.reason === 'fail-open' || o.reason === 'store-down';
  const unknown = storeDown && allowUnknown && o.unsettled !== undefined;
  // The entry was voided (/v1/void): said as such to a caller that may have voided it.
  const voided = allowUnknown && o.decision?.allowed === false && o.decision.voided === true;
  const resumeAtMs = o.at + o.retryAfterMs;
  return {
    allowed: storeDown ? false : o.allowed,
    reason: unknown ? 'unknown' : voided ? 'void' : storeDown ? 'store-down' : o.reason,
    entry,
    replayed: o.replayed === true,
    credential: o.credential,
    bucket: o.bucket,
    ...(o.method !== undefined ? { method: o.method } : {}),
    tier: o.tier,
    cost: o.cost,
    tag: o.tag,
    ceiling: o.ceiling,
    ...(o.remaining !== undefined ? { remaining: o.remaining } : {}),
    retryAfterMs: o.retryAfterMs,
    resumeAt: iso(resumeAtMs),
    resumeAtMs,
    ...(o.limitedBy !== undefined ? { limitedBy: o.limitedBy } : {}),
    ...(o.blockedUntil !== undefined
      ? { blockedUntil: iso(o.blockedUntil), blockedUntilMs: o.blockedUntil }
      : {}),
    at: o.at,
  };
}

/** A recorded run's answer: the run as the history holds it (with `region`, as 0.2 answered). */
export function runAnswer(r: RunSummary, id: string, replayed: boolean): Record<string, unknown> {
  const { region } = withCompatibleFields(r);
  return {
    id,
    replayed,
    credential: r.credential,
    job: r.job,
    ...(r.client !== undefined ? { client: r.client } : {}),
    ...(region !== null ? { region } : {}),
    labels: r.labels,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    outcome: r.outcome,
    pages: r.pages,
    units: r.units,
    items: r.items,
    ...(r.reason !== null ? { reason: r.reason } : {}),
    used: r.used,
  };
}
