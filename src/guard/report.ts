/**
 * What became of an upstream call the guard allowed, reported after the fact by whoever made it
 * (a job in another process through the decision API, the `spend` command): sent (it stays
 * charged), never sent (its entry is refunded), or exhausted (the bucket is blocked for every job,
 * never past the upstream's next reset).
 */
import { nextMidnight } from '../calendar-day.js';
import type { Config } from '../config/types.js';
import type { UpstreamQuota } from '../outcome/errors.js';
import type { SpendOutcome } from './types.js';

export type CallOutcome =
  | { kind: 'sent' }
  | { kind: 'never-sent' }
  | { kind: 'exhausted'; until?: number; reason?: string; quota?: UpstreamQuota };

export interface ReportResult {
  /** The outcome applied. */
  kind: CallOutcome['kind'];
  /** Whether the spend's entry was taken back (never sent). */
  refunded: boolean;
  /** The block set on the bucket (exhausted). */
  blocked?: { key: string; until: number };
}

/** The guard's calls a report uses (the guard itself; named here so this module need not import it). */
export interface Reportable {
  readonly config: Config;
  refund(outcome: SpendOutcome): Promise<void>;
  block(
    credential: string,
    bucket: string,
    reason: string,
    until?: number,
  ): Promise<{ key: string; until: number }>;
}

export async function reportOutcome(
  guard: Reportable,
  spent: SpendOutcome,
  outcome: CallOutcome,
): Promise<ReportResult> {
  switch (outcome.kind) {
    case 'sent':
      return { kind: 'sent', refunded: false };
    case 'never-sent': {
      const refunded = spent.decision?.allowed === true;
      await guard.refund(spent);
      return { kind: 'never-sent', refunded };
    }
    case 'exhausted': {
      const credential = guard.config.credential(spent.credential);
      const reset = nextMidnight(credential.timeZone, Date.now());
      const until = Math.min(outcome.until ?? reset, reset);
      const reason =
        outcome.reason ?? `upstream answered quotaExceeded to ${spent.method ?? spent.bucket} (reported)`;
      const blocked = await guard.block(spent.credential, spent.bucket, reason, until);
      return { kind: 'exhausted', refunded: false, blocked };
    }
  }
}
