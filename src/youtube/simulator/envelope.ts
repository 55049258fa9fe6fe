/**
 * Google's JSON error envelope, as the YouTube Data API sends it today (and, with `legacy`, as it
 * did before the granular quota). The shapes follow the recordings in test/fixtures/youtube/.
 */
import type { UpstreamQuotaNames } from '../../profiles/profiles.js';

export interface ApiError {
  status: number;
  domain: string;
  reason: string;
  message: string;
  /** For parameter errors: which parameter. */
  location?: string;
  /** The google.rpc status name, when the real API sends one. */
  rpcStatus?: string;
  /** `details[]` entries (ErrorInfo, …), when the real API sends them. */
  details?: ReadonlyArray<Record<string, unknown>>;
}

const SERVICE = 'youtube.googleapis.com';

export function errorBody(e: ApiError): string {
  const item: Record<string, string> = { message: e.message, domain: e.domain, reason: e.reason };
  if (e.location !== undefined) {
    item.location = e.location;
    item.locationType = 'parameter';
  }
  const error: Record<string, unknown> = { code: e.status, message: e.message, errors: [item] };
  if (e.rpcStatus !== undefined) error.status = e.rpcStatus;
  if (e.details !== undefined) error.details = e.details;
  return JSON.stringify({ error });
}

function errorInfo(reason: string, metadata: Record<string, string>): Record<string, unknown> {
  return { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com', metadata };
}

/** A limit of a project broken: the message and ErrorInfo the API gives for 429 RESOURCE_EXHAUSTED. */
function quotaLimitBroken(
  consumer: string,
  names: { displayName: string; metric?: string; limit?: string },
  period: { text: string; unit: string; value: number },
): ApiError {
  const message = `Quota exceeded for quota metric '${names.displayName}' and limit '${names.displayName} ${period.text}' of service '${SERVICE}' for consumer 'project_number:${consumer}'.`;
  return {
    status: 429,
    domain: 'global',
    reason: 'rateLimitExceeded',
    message,
    rpcStatus: 'RESOURCE_EXHAUSTED',
    // Only the limits whose ids the API is known to send get an ErrorInfo; others answer as older
    // recordings do, with the message alone.
    ...(names.metric !== undefined && names.limit !== undefined
      ? {
          details: [
            errorInfo('RATE_LIMIT_EXCEEDED', {
              quota_limit: names.limit,
              quota_location: 'global',
              quota_unit: period.unit,
              quota_limit_value: String(period.value),
              consumer: `projects/${consumer}`,
              service: SERVICE,
              quota_metric: names.metric,
            }),
          ],
        }
      : {}),
  };
}

export const apiErrors = {
  /** The shared units bucket (and, in the classic model, every bucket) used up for the day. */
  quotaExceeded: (): ApiError => ({
    status: 403,
    domain: 'youtube.quota',
    reason: 'quotaExceeded',
    message:
      'The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.',
  }),
  /** A granular bucket (search.list, uploads, batchGetStats) used up for the day: 429 naming its per-day limit. */
  bucketExhausted: (consumer: string, names: UpstreamQuotaNames, quota: number): ApiError =>
    quotaLimitBroken(consumer, names, { text: 'per day', unit: '1/d/{project}', value: quota }),
  /**
   * A short rate limit. 429: the per-minute limit of the shared units, named as the API names it
   * (per user for `userRateLimitExceeded`). 403: the classic `usageLimits` answer, no details.
   */
  rateLimited: (status: 403 | 429, reason: string, consumer = '0'): ApiError => {
    if (status === 403) {
      return {
        status,
        domain: 'usageLimits',
        reason,
        message: reason === 'userRateLimitExceeded' ? 'User Rate Limit Exceeded' : 'Rate Limit Exceeded',
      };
    }
    const perUser = reason === 'userRateLimitExceeded';
    const e = quotaLimitBroken(
      consumer,
      {
        displayName: 'Queries',
        metric: 'youtube.googleapis.com/default',
        limit: perUser ? 'defaultPerMinutePerUser' : 'defaultPerMinutePerProject',
      },
      perUser
        ? { text: 'per minute per user', unit: '1/min/{project}/{user}', value: 3_000 }
        : { text: 'per minute', unit: '1/min/{project}', value: 180_000 },
    );
    return { ...e, reason };
  },
  /** A key the API does not know: today's body, or with `legacy` the classic one. */
  keyInvalid: (legacy = false): ApiError =>
    legacy
      ? { status: 400, domain: 'usageLimits', reason: 'keyInvalid', message: 'Bad Request' }
      : {
          status: 400,
          domain: 'global',
          reason: 'badRequest',
          message: 'API key not valid. Please pass a valid API key.',
          rpcStatus: 'INVALID_ARGUMENT',
          details: [
            errorInfo('API_KEY_INVALID', { service: SERVICE }),
            {
              '@type': 'type.googleapis.com/google.rpc.LocalizedMessage',
              locale: 'en-US',
              message: 'API key not valid. Please pass a valid API key.',
            },
          ],
        },
  missingKey: (): ApiError => ({
    status: 403,
    domain: 'global',
    reason: 'forbidden',
    message: 'The request is missing a valid API key.',
    rpcStatus: 'PERMISSION_DENIED',
  }),
  backendError: (): ApiError => ({
    status: 500,
    domain: 'global',
    reason: 'backendError',
    message: 'Backend Error',
  }),
  notFound: (): ApiError => ({ status: 404, domain: 'global', reason: 'notFound', message: 'Not Found' }),
  methodNotAllowed: (): ApiError => ({
    status: 405,
    domain: 'global',
    reason: 'httpMethodNotAllowed',
    message: 'HTTP method not allowed',
  }),
  required: (param: string): ApiError => ({
    status: 400,
    domain: 'global',
    reason: 'required',
    message: `Required parameter: ${param}`,
    location: param,
  }),
  invalid: (param: string, message: string, reason = 'invalidParameter'): ApiError => ({
    status: 400,
    domain: 'youtube.parameter',
    reason,
    message,
    location: param,
  }),
  chartNotFound: (): ApiError => ({
    status: 404,
    domain: 'youtube.video',
    reason: 'videoChartNotFound',
    message: 'The requested video chart is not supported or is not available.',
    location: 'chart',
  }),
};
