/** Stops: the value a job ends with when the budget, a block, the store or the upstream says not now. */
import { formatDuration } from '../config/duration.js';
import type { CredentialConfig } from '../config/types.js';
import { ExitCode } from '../errors.js';
import type { UpstreamError } from '../outcome/errors.js';
import type { SpendOutcome, Stop, StopReason } from './types.js';

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The Stop a denied or failed spend ends a job with: what was left, why, and when to resume. */
export function stopOf(
  reason: StopReason,
  o: SpendOutcome,
  credential: CredentialConfig,
  error?: UpstreamError,
  retryAfterMs = o.retryAfterMs,
): Stop {
  const stop: Stop = {
    ok: false,
    reason,
    credential: o.credential,
    bucket: o.bucket,
    ...(o.method !== undefined ? { method: o.method } : {}),
    tier: o.tier,
    cost: o.cost,
    ...(o.remaining !== undefined && reason !== 'upstream-quota' ? { remaining: o.remaining } : {}),
    retryAfterMs,
    resumeAt: o.at + retryAfterMs,
    ...(o.limitedBy !== undefined ? { limitedBy: o.limitedBy } : {}),
    ...(o.blockedUntil !== undefined ? { blockedUntil: o.blockedUntil } : {}),
    ...(error ? { error } : {}),
    exitCode: reason === 'store-down' ? ExitCode.UNAVAILABLE : ExitCode.TEMPFAIL,
    message: '',
  };
  stop.message = stopMessage(stop, credential);
  return stop;
}

/** The one line a stop is logged with: what was left, why, and when the job can resume. */
export function stopMessage(stop: Stop, credential: CredentialConfig): string {
  const where = `${stop.credential}/${stop.bucket}`;
  const what = `${stop.method ?? 'spend'} (${stop.cost} unit${stop.cost === 1 ? '' : 's'}, ${stop.tier})`;
  const resume = `resume in ${formatDuration(stop.retryAfterMs)} (${iso(stop.resumeAt)})`;
  const bucket = credential.buckets[stop.bucket];
  switch (stop.reason) {
    case 'budget': {
      const left =
        stop.remaining === undefined ? '' : `${stop.remaining} unit${stop.remaining === 1 ? '' : 's'} left`;
      const under =
        stop.limitedBy && stop.limitedBy !== stop.bucket
          ? `${stop.limitedBy} of ${where}`
          : `${where} below the ${stop.tier} ceiling (${bucket?.ceilings[stop.tier] ?? '?'} of ${bucket?.quota ?? '?'})`;
      return `stopped: ${what} does not fit: ${left} under ${under}; ${resume}`;
    }
    case 'blocked':
      return `stopped: ${where} is blocked until ${iso(stop.blockedUntil ?? stop.resumeAt)}${stop.blockedReason ? ` (${stop.blockedReason})` : ''}; ${resume}`;
    case 'store-down':
      return `stopped: the ledger store is unavailable and ${what} is fail-closed; retry when the store is back`;
    case 'upstream-quota':
      return `stopped: the upstream answered ${stop.error?.reason ?? 'quotaExceeded'} (quota used up for the day) for ${where} although the ledger allowed it; bucket blocked until ${iso(stop.resumeAt)}, other buckets go on; ${resume}`;
    case 'rate-limited':
      return `stopped: the upstream rate-limited ${what} on ${where}${stop.error?.quota?.interval === 'minute' ? ' (a per-minute limit)' : ''}; ${resume}`;
    case 'upstream-busy':
      return `stopped: the upstream failed ${what} on ${where} (HTTP ${stop.error?.status ?? '5xx'}) and asked for a wait longer than this call site sleeps; ${resume}`;
    case 'aborted':
      return `stopped: aborted while waiting for ${where}`;
  }
}
