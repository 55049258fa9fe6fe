import { type ErrorCode, QuotaGuardError, type QuotaGuardErrorOptions } from '../errors.js';

/**
 * Whether a failed request reached the upstream, which decides whether it was charged:
 * - 'never': provably never reached it (connection refused, DNS failure, TLS failure before the
 *   request was written). Not charged: the guard refunds the ledger spend.
 * - 'maybe': may have been received (reset or timeout after the request was written). Charged.
 * - 'yes':   the upstream answered (any HTTP status). Charged: every request it receives is.
 */
export type Reached = 'never' | 'maybe' | 'yes';

export interface UpstreamErrorOptions extends QuotaGuardErrorOptions {
  reached: Reached;
  /** HTTP status when the upstream answered. */
  status?: number;
  /** Google's `error.errors[0].reason`, e.g. 'quotaExceeded', 'rateLimitExceeded', 'keyInvalid'. */
  reason?: string;
  /** Retry-After the upstream asked for, in ms. */
  retryAfterMs?: number;
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
  readonly method?: string;
  readonly url?: string;

  constructor(code: ErrorCode, message: string, options: UpstreamErrorOptions) {
    super(code, message, options);
    this.reached = options.reached;
    if (options.status !== undefined) this.status = options.status;
    if (options.reason !== undefined) this.reason = options.reason;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.method !== undefined) this.method = options.method;
    if (options.url !== undefined) this.url = options.url;
  }

  /** The upstream charged (or may have charged) this request. */
  get charged(): boolean {
    return this.reached !== 'never';
  }
}
