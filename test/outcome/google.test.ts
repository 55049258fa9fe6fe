import { describe, expect, it } from 'vitest';
import { googleErrorFromResponse, readGoogleError, retryAfterFromText } from '../../src/outcome/google.js';

const perMinute = JSON.stringify({
  error: {
    code: 429,
    message:
      "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'youtube.googleapis.com'.",
    status: 'RESOURCE_EXHAUSTED',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'RATE_LIMIT_EXCEEDED',
        domain: 'googleapis.com',
        metadata: {
          quota_limit: 'defaultPerMinutePerProject',
          quota_metric: 'youtube.googleapis.com/default',
          quota_unit: '1/min/{project}',
          quota_location: 'global',
        },
      },
    ],
  },
});

describe("Google's error model, from a status, headers and a body alone", () => {
  it('tells a per-minute limit from a per-day one', () => {
    const minute = googleErrorFromResponse(429, new Headers(), perMinute);
    expect(minute.code).toBe('QG_UPSTREAM_RATE_LIMITED');
    expect(minute.quota).toMatchObject({ period: 'short', interval: 'minute', location: 'global' });
    const day = googleErrorFromResponse(
      429,
      {},
      perMinute.replaceAll('PerMinute', 'PerDay').replace('1/min/', '1/d/'),
    );
    expect(day.code).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
    expect(day.quota?.interval).toBe('day');
    expect(readGoogleError(perMinute).domain).toBe('googleapis.com');
  });

  it('reads a wait from Retry-After (Headers or record), RetryInfo, or the words of a page', () => {
    expect(googleErrorFromResponse(503, new Headers({ 'retry-after': '7' }), '').retryAfterMs).toBe(7000);
    expect(googleErrorFromResponse(503, { 'retry-after': '7' }, '').retryAfterMs).toBe(7000);
    const page = '<html><p>502. That’s an error.</p><p>Please try again in 30 seconds.</p></html>';
    const e = googleErrorFromResponse(502, {}, page, { method: 'videos.list' });
    expect(e.code).toBe('QG_UPSTREAM_SERVER_ERROR');
    expect(e.retryAfterMs).toBe(30_000);
    const info = JSON.stringify({
      error: {
        code: 503,
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12s' }],
      },
    });
    expect(googleErrorFromResponse(503, {}, info).retryAfterMs).toBe(12_000);
    expect(retryAfterFromText('try again in 2 minutes')).toBe(120_000);
    expect(retryAfterFromText('try again later')).toBeUndefined();
  });

  it('lets a client refine a 4xx and scrubs the key from the message', () => {
    const body = JSON.stringify({
      error: { code: 400, message: 'bad key=SECRET', errors: [{ reason: 'odd' }] },
    });
    const e = googleErrorFromResponse(
      400,
      {},
      body,
      { secret: 'SECRET' },
      {
        refine: (_s, f) =>
          f.reasons.includes('odd') ? { code: 'QG_UPSTREAM_REGION_UNSUPPORTED', reason: 'odd' } : undefined,
      },
    );
    expect(e.code).toBe('QG_UPSTREAM_REGION_UNSUPPORTED');
    expect(e.message).not.toContain('SECRET');
  });
});
