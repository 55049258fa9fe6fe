/**
 * What became of a call the guard allowed, reported by whoever made it: `Guard.report(spent, outcome)`.
 *
 * - `sent`: the request reached the upstream; the spend stays charged.
 * - `never-sent`: it provably never left (connection refused, DNS, TLS handshake); the entry is refunded.
 * - `exhausted`: the upstream answered that a quota is used up although the ledger allowed the call;
 *   the bucket the answer names (or the one the call spent) is blocked until `until`, never past the
 *   upstream's next reset for that credential, and the result carries the `Stop` to honour.
 *
 * `Guard.call` goes through the same code when its request throws a quota error, so a custom client,
 * the guarded `fetch` and the YouTube client end alike.
 */

import { hostname } from 'node:os';
import { bucketOf } from '../config/lookups.js';
import type { Config } from '../config/types.js';
import { InvalidArgumentError, isQuotaGuardError } from '../errors.js';
import type { UpstreamError, UpstreamQuota } from '../outcome/errors.js';
import { bucketOfUpstreamQuota } from '../profiles/profile.js';
import { siteOf } from './tags.js';
import type { GuardLogger, SpendOutcome, Stop, StopReason } from './types.js';

/** What a caller says became of the call it spent for. */
export type CallOutcome =
  | { kind: 'sent' }
  | { kind: 'never-sent' }
  | {
      kind: 'exhausted';
      /** Epoch ms the block lifts (default and maximum: the upstream's next reset for the credential). */
      until?: number;
      /** The upstream's reason, e.g. `quotaExceeded` (shown in the block's reason and the stop). */
      reason?: string;
      /** The limit the answer names: picks the bucket through the profile's upstream names. */
      quota?: UpstreamQuota;
    };

export const CALL_OUTCOME_KINDS = ['sent', 'never-sent', 'exhausted'] as const;

/** What the guard did with a reported outcome. */
export type ReportResult =
  | { kind: 'sent'; ok: true }
  | {
      kind: 'never-sent';
      ok: true;
      /**
       * False when there was nothing to take back: a denied or fail-open spend, or one refunded
       * before (a report sent twice) or aged out of its window.
       */
      refunded: boolean;
    }
  | {
      kind: 'exhausted';
      ok: false;
      /** The bucket blocked (the one the answer names, else the one spent). */
      bucket: string;
      /** Epoch ms the block lifts. */
      until: number;
      /** Stop spending this bucket: logged once, with its resume time. */
      stop: Stop;
    };

/** The parts of the guard that reporting uses (the guard hands them over; nothing here is public). */
export interface ReportDeps {
  config: Config;
  logger: GuardLogger;
  now(): number;
  nextReset(timeZone: string, nowMs: number): number;
  block(credential: string, bucket: string, reason: string, until: number): Promise<unknown>;
  /** True when units were (or will be, once the store answers) taken back. */
  refund(spent: SpendOutcome): Promise<boolean>;
  stopOf(reason: StopReason, o: SpendOutcome, error?: UpstreamError, retryAfterMs?: number): Stop;
  /** Counts, logs and emits a stop. */
  stop(stop: Stop): Stop;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export interface Exhaustion {
  until?: number;
  reason?: string;
  quota?: UpstreamQuota;
  /** The upstream error behind it (carried by the stop). */
  error?: UpstreamError;
}

/**
 * Block the bucket an exhaustion answer names (the profile's table of upstream quota names), or
 * the bucket the call spent when it names none the profile knows, until `until` capped at the
 * upstream's next reset; returns the stop (not yet logged). A store that is down is logged, not thrown.
 */
export async function blockExhausted(deps: ReportDeps, spent: SpendOutcome, ex: Exhaustion): Promise<Stop> {
  const credential = deps.config.credential(spent.credential);
  const now = deps.now();
  const reset = deps.nextReset(credential.timeZone, now);
  const until = Math.min(ex.until ?? reset, reset);
  const quota = ex.quota ?? ex.error?.quota;
  const profiles = deps.config.profiles;
  const profile = Object.hasOwn(profiles, credential.profile) ? profiles[credential.profile] : undefined;
  const named = quota && profile ? bucketOfUpstreamQuota(profile, quota) : undefined;
  const bucket = named !== undefined && credential.buckets[named] !== undefined ? named : spent.bucket;
  const what = ex.reason ?? ex.error?.reason ?? 'quotaExceeded';
  const limit = quota?.limit ?? quota?.metric;
  // Who met it, for the operator who must find the other spender: the spend's site (the job, or
  // the decision API's token name) and this host, unless the reason names its reporter already.
  const who = /\breported by\b/.test(what)
    ? ''
    : `; reported by ${siteOf(spent.tag) || 'a caller'} on ${hostname()}`;
  const reason = `upstream answered ${what}${limit ? ` (${limit})` : ''} to ${spent.method ?? spent.bucket} at ${iso(now)} although the ledger allowed it${who}`;
  try {
    await deps.block(credential.id, bucket, reason, until);
  } catch (e) {
    if (!(isQuotaGuardError(e) && e.code === 'QG_STORE_UNAVAILABLE')) throw e;
    deps.logger.warn(
      { credential: credential.id, bucket },
      'ledger store unavailable: could not record the upstream quota block',
    );
  }
  const stop = deps.stopOf('upstream-quota', { ...spent, bucket, at: now }, ex.error, until - now);
  stop.blockedUntil = until;
  stop.blockedReason = reason;
  if (ex.error === undefined && ex.reason !== undefined) {
    // The stop's line names the upstream's reason even without an error object.
    stop.message = stop.message.replace('answered quotaExceeded', `answered ${ex.reason}`);
  }
  return stop;
}

function checkOutcome(deps: ReportDeps, outcome: CallOutcome): void {
  const kind = (outcome as { kind?: unknown } | null)?.kind;
  if (!CALL_OUTCOME_KINDS.includes(kind as CallOutcome['kind'])) {
    throw new InvalidArgumentError('outcome.kind', `must be one of ${CALL_OUTCOME_KINDS.join(', ')}`);
  }
  if (outcome.kind === 'exhausted' && outcome.until !== undefined) {
    if (!Number.isFinite(outcome.until)) throw new InvalidArgumentError('outcome.until', 'must be epoch ms');
    if (outcome.until <= deps.now()) throw new InvalidArgumentError('outcome.until', 'must be in the future');
  }
}

/** `Guard.report`: see the file's comment. */
export async function reportOutcome(
  deps: ReportDeps,
  spent: SpendOutcome,
  outcome: CallOutcome,
): Promise<ReportResult> {
  if (typeof spent !== 'object' || spent === null || typeof spent.credential !== 'string') {
    throw new InvalidArgumentError('spent', 'must be the SpendOutcome the guard answered');
  }
  checkOutcome(deps, outcome);
  switch (outcome.kind) {
    case 'sent':
      return { kind: 'sent', ok: true };
    case 'never-sent': {
      const refunded = await deps.refund(spent);
      return { kind: 'never-sent', ok: true, refunded };
    }
    case 'exhausted': {
      // Check the bucket names before anything is blocked.
      bucketOf(deps.config.credential(spent.credential), spent.bucket);
      const stop = deps.stop(
        await blockExhausted(deps, spent, {
          ...(outcome.until !== undefined ? { until: outcome.until } : {}),
          ...(outcome.reason !== undefined ? { reason: outcome.reason } : {}),
          ...(outcome.quota !== undefined ? { quota: outcome.quota } : {}),
        }),
      );
      return {
        kind: 'exhausted',
        ok: false,
        bucket: stop.bucket,
        until: stop.blockedUntil ?? stop.resumeAt,
        stop,
      };
    }
  }
}
