export { parseIsoDuration } from '../../config/duration.js';
export { type Reached, UpstreamError, type UpstreamErrorOptions } from '../../outcome/errors.js';
export {
  DEFAULT_RETRY_POLICY,
  isRetryable,
  type RetryInfo,
  type RetryOptions,
  type RetryPolicy,
  retryDelayMs,
  withRetries,
} from '../../outcome/retry.js';
export { parseRetryAfter } from './classify.js';
export {
  type ApiCall,
  type ApiMethod,
  type CallOptions as UpstreamCallOptions,
  type ChartParams,
  createYouTubeClient,
  DEFAULT_BASE_URL,
  DEFAULT_TIMEOUTS,
  type SearchParams,
  type UpstreamLogger,
  type UpstreamTimeouts,
  YOUTUBE_API_METHODS,
  type YouTubeClient,
  type YouTubeClientOptions,
  type YouTubeMethodName,
} from './client.js';
export { redactKeyParam, redactText } from './redact.js';
export * from './schemas.js';
