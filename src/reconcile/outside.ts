/**
 * The outside spend of one bucket, from two per-minute series over the same minutes: what the
 * upstream says it charged and what the ledger holds of its own. Pure: no store, no clock.
 *
 * The rule. Let D(m) be the cumulative difference up to minute m, upstream minus ledger. A spend
 * the upstream counts in another minute than the ledger (a request sent at 12:00:59.9 and charged
 * at 12:01:00.1) moves D down and back up, or up and back down, within one minute; a spend the
 * ledger never saw moves it up for good. So a minute's difference counts only once the next minute
 * still shows it, `S(m) = min(D(m), D(m + 1))` (the newest minute has no next one and counts as it
 * stands), and the outside spend up to m is the highest S so far, never below 0:
 *
 *     O(m) = max(0, S(0), …, S(m))        outside spend at minute m = O(m) − O(m − 1)
 *
 * Only increases are recorded, at the minute where they appear: a ledger above the upstream's
 * count (a refund missed, a request that never arrived) lowers D and is reported, never taken
 * back; outside spend later in the day first fills that gap. The whole span is computed again on
 * every reconcile, so a point the upstream publishes late is seen at its own minute, and a spend
 * of ours written late for minutes already reconciled (a journal's replay) lowers the outside
 * spend by as much as it overlaps.
 */

export interface OutsideInput {
  /** Units the upstream counted, per minute, oldest first. */
  upstream: readonly number[];
  /** Units the ledger holds of its own (every entry not tagged outside), per minute, same minutes. */
  own: readonly number[];
}

export interface OutsidePlan {
  /** The outside spend each minute should hold (>= 0), same minutes. */
  outside: number[];
  /** The upstream's count over the span. */
  upstream: number;
  /** The ledger's own units over the span. */
  own: number;
  /** The outside spend over the span: `outside`'s sum. */
  outsideTotal: number;
  /**
   * How far the ledger (own + outside) is above the upstream's count at the span's last minute:
   * units the ledger holds that the upstream did not charge (0 when they agree).
   */
  ledgerAbove: number;
}

/** The outside spend per minute the rule above gives for one bucket. */
export function planOutside(input: OutsideInput): OutsidePlan {
  const n = input.upstream.length;
  if (input.own.length !== n) {
    throw new RangeError(`planOutside: ${n} upstream minutes but ${input.own.length} ledger minutes`);
  }
  const diff: number[] = [];
  let upstream = 0;
  let own = 0;
  for (let i = 0; i < n; i++) {
    upstream += input.upstream[i] ?? 0;
    own += input.own[i] ?? 0;
    diff.push(upstream - own);
  }
  const outside: number[] = [];
  let high = 0;
  for (let i = 0; i < n; i++) {
    const settled = i + 1 < n ? Math.min(diff[i]!, diff[i + 1]!) : diff[i]!;
    const next = Math.max(high, settled);
    outside.push(next - high);
    high = next;
  }
  return { outside, upstream, own, outsideTotal: high, ledgerAbove: own + high - upstream };
}
