/** Google's JSON error envelope, as the YouTube Data API sends it. */

export interface ApiError {
  status: number;
  domain: string;
  reason: string;
  message: string;
  /** For parameter errors: which parameter. */
  location?: string;
  /** The google.rpc status name, when the real API sends one. */
  rpcStatus?: string;
  /** An ErrorInfo reason in `details`, when the real API sends one. */
  errorInfo?: string;
}

export function errorBody(e: ApiError): string {
  const item: Record<string, string> = { message: e.message, domain: e.domain, reason: e.reason };
  if (e.location !== undefined) {
    item.location = e.location;
    item.locationType = 'parameter';
  }
  const error: Record<string, unknown> = { code: e.status, message: e.message, errors: [item] };
  if (e.rpcStatus !== undefined) error.status = e.rpcStatus;
  if (e.errorInfo !== undefined) {
    error.details = [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: e.errorInfo,
        domain: 'googleapis.com',
        metadata: { service: 'youtube.googleapis.com' },
      },
    ];
  }
  return JSON.stringify({ error });
}

export const apiErrors = {
  quotaExceeded: (): ApiError => ({
    status: 403,
    domain: 'youtube.quota',
    reason: 'quotaExceeded',
    message:
      'The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.',
  }),
  rateLimited: (status: 403 | 429, reason: string): ApiError => ({
    status,
    domain: reason === 'userRateLimitExceeded' ? 'usageLimits' : 'youtube.quota',
    reason,
    message: 'The request cannot be completed because you have exceeded your rate limit. Retry later.',
    ...(status === 429 ? { rpcStatus: 'RESOURCE_EXHAUSTED' } : {}),
  }),
  keyInvalid: (): ApiError => ({
    status: 400,
    domain: 'usageLimits',
    reason: 'keyInvalid',
    message: 'API key not valid. Please pass a valid API key.',
    rpcStatus: 'INVALID_ARGUMENT',
    errorInfo: 'API_KEY_INVALID',
  }),
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
