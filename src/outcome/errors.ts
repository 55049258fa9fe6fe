import { type ErrorCode, QuotaGuardError, type QuotaGuardErrorOptions } from '../errors.js';

/**
 * Whether a failed request reached the upstream, which decides whether it was charged:
 * - 'never': provably never reached it (connection refused, DNS failure, TLS failure before the
 *   request was written). Not charged: the guard refunds the ledger spend.
 * - 'maybe': may have been received (reset or timeout after the request was written). Charged.
 * - 'yes':   the upstream answered (any HTTP status). Charged: every request it receives is.
 */
export type Reached = 'never' | 'maybe' | 'yes';

/**
 * The quota limit an answer says was broken, as far as the body names it (ErrorInfo metadata,
 * QuotaFailure, or the text of the message when there are no details).
 */
export interface UpstreamQuota {
  /**
   * 'day': a per-day limit, used up until the upstream's midnight. 'short': a per-minute or
   * per-user limit that frees within moments. 'unknown': the body does not say.
   */
  period: 'day' | 'short' | 'unknown';
  /**
   * The limit's own interval, when its name or unit says it (`…PerMinute…`, `1/min/{project}`):
   * a per-minute limit frees at the next minute, a per-day one at the upstream's midnight.
   */
  interval?: 'second' | '100 seconds' | 'minute' | 'day';
  /** The quota metric, e.g. `youtube.googleapis.com/search_list` or its display name `Search Queries`. */
  metric?: string;
  /** The limit, e.g. `defaultSearchListPerDayPerProject` or `Search Queries per day`. */
  limit?: string;
  /** The limit's unit, e.g. `1/d/{project}`, `1/min/{project}/{user}`. */
  unit?: string;
  /** Where the limit applies, e.g. `global` or a region (ErrorInfo `quota_location`). */
  location?: string;
}

export interface UpstreamErrorOptions extends QuotaGuardErrorOptions {
  reached: Reached;
  /** HTTP status when the upstream answered. */
  status?: number;
  /** The reason that decided the code (`errors[].reason` or an ErrorInfo reason), e.g. 'quotaExceeded'. */
  reason?: string;
  /** Retry-After the upstream asked for, in ms. */
  retryAfterMs?: number;
  /** The quota limit the answer names, for quota and rate-limit answers. */
  quota?: UpstreamQuota;
  /** The API method, e.g. 'videos.list'. */
  method?: string;
  /** The request URL with the key redacted (`key=***`). Never the real key. */
  url?: string;
}

/** Every failure of an upstream call. Match on `code`; `reached` tells whether it was charged. */
export class UpstreamError extends QuotaGuardError {
  override name = 'UpstreamError';
  readonly reached: Reached;
  readonly status?: number;
  readonly reason?: string;
  readonly retryAfterMs?: number;
  readonly quota?: UpstreamQuota;
  readonly method?: string;
  readonly url?: string;

  constructor(code: ErrorCode, message: string, options: UpstreamErrorOptions) {
    super(code, message, options);
    this.reached = options.reached;
    if (options.status !== undefined) this.status = options.status;
    if (options.reason !== undefined) this.reason = options.reason;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.quota !== undefined) this.quota = options.quota;
    if (options.method !== undefined) this.method = options.method;
    if (options.url !== undefined) this.url = options.url;
  }

  /**
   * Whether a project may have been charged for this request: not when it never reached the
   * upstream, nor when the upstream rejected its key (it could attribute it to no project). The
   * guard refunds the spend of a request that was not charged.
   */
  get charged(): boolean {
    return this.reached !== 'never' && this.code !== 'QG_UPSTREAM_KEY_INVALID';
  }
}
