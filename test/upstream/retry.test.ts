import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuotaGuardError } from '../../src/errors.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import {
  createYouTubeClient,
  isRetryable,
  retryDelayMs,
  UpstreamError,
  withRetries,
  type YouTubeClient,
} from '../../src/youtube/upstream/index.js';
import { failure, KEY } from './helpers.js';

const err = (
  code: ConstructorParameters<typeof UpstreamError>[0],
  extra: Partial<{ retryAfterMs: number }> = {},
) => new UpstreamError(code, code, { reached: 'yes', ...extra });

describe('retry classification', () => {
  it('retries 5xx, rate limits and transport failures; never quota, key, forbidden, bad request or bad response', () => {
    expect(isRetryable(err('QG_UPSTREAM_SERVER_ERROR'))).toBe(true);
    expect(isRetryable(err('QG_UPSTREAM_RATE_LIMITED'))).toBe(true);
    expect(isRetryable(new UpstreamError('QG_UPSTREAM_TRANSPORT', 'x', { reached: 'never' }))).toBe(true);
    for (const code of [
      'QG_UPSTREAM_QUOTA_EXCEEDED',
      'QG_UPSTREAM_KEY_INVALID',
      'QG_UPSTREAM_FORBIDDEN',
      'QG_UPSTREAM_BAD_REQUEST',
      'QG_UPSTREAM_NOT_FOUND',
      'QG_UPSTREAM_BAD_RESPONSE',
    ] as const) {
      expect(isRetryable(err(code)), code).toBe(false);
      expect(retryDelayMs(err(code), 1)).toBeUndefined();
    }
    expect(isRetryable(new Error('bug'))).toBe(false);
    expect(isRetryable(new QuotaGuardError('QG_STORE_UNAVAILABLE', 'down'))).toBe(false);
  });

  it('backs off exponentially with jitter, within the ceiling', () => {
    const p = { baseDelayMs: 100, maxDelayMs: 1_000 };
    const e = err('QG_UPSTREAM_SERVER_ERROR');
    expect(retryDelayMs(e, 1, { ...p, random: () => 0 })).toBe(50);
    expect(retryDelayMs(e, 1, { ...p, random: () => 0.999999 })).toBe(100);
    expect(retryDelayMs(e, 3, { ...p, random: () => 0 })).toBe(200);
    expect(retryDelayMs(e, 3, { ...p, random: () => 0.999999 })).toBe(400);
    expect(retryDelayMs(e, 10, { ...p, random: () => 0.999999 })).toBe(1_000);
    const seen = new Set(Array.from({ length: 20 }, () => retryDelayMs(e, 4, p)));
    expect(seen.size).toBeGreaterThan(1);
  });

  it('honours a short Retry-After exactly and refuses a long one', () => {
    expect(retryDelayMs(err('QG_UPSTREAM_RATE_LIMITED', { retryAfterMs: 2_000 }), 1)).toBe(2_000);
    expect(retryDelayMs(err('QG_UPSTREAM_RATE_LIMITED', { retryAfterMs: 60_000 }), 1)).toBeUndefined();
    expect(
      retryDelayMs(err('QG_UPSTREAM_RATE_LIMITED', { retryAfterMs: 60_000 }), 1, { maxRetryAfterMs: 60_000 }),
    ).toBe(60_000);
  });
});

describe('withRetries', () => {
  const instant = { sleep: async () => {}, random: () => 0 };

  it('stops after maxAttempts and throws the last error unchanged', async () => {
    let calls = 0;
    const last = err('QG_UPSTREAM_SERVER_ERROR');
    const e = await failure(
      withRetries(
        async () => {
          calls++;
          throw last;
        },
        { ...instant, maxAttempts: 3 },
      ),
    );
    expect(calls).toBe(3);
    expect(e).toBe(last);
  });

  it('stops when the next wait would pass maxTotalMs', async () => {
    let clock = 0;
    let calls = 0;
    const waits: number[] = [];
    const e = await failure(
      withRetries(
        async () => {
          calls++;
          throw err('QG_UPSTREAM_SERVER_ERROR');
        },
        {
          maxAttempts: 100,
          maxTotalMs: 1_000,
          baseDelayMs: 200,
          random: () => 0.999999,
          now: () => clock,
          sleep: async (ms) => {
            waits.push(ms);
            clock += ms;
          },
        },
      ),
    );
    expect((e as UpstreamError).code).toBe('QG_UPSTREAM_SERVER_ERROR');
    expect(waits).toEqual([200, 400]); // a third wait (800) would end past 1,000 ms
    expect(calls).toBe(3);
  });

  it('does not retry what is not retryable', async () => {
    let calls = 0;
    await failure(
      withRetries(async () => {
        calls++;
        throw err('QG_UPSTREAM_QUOTA_EXCEEDED');
      }, instant),
    );
    expect(calls).toBe(1);
  });

  it('reports each wait and stops waiting when aborted', async () => {
    const ac = new AbortController();
    const infos: number[] = [];
    let calls = 0;
    const e = await failure(
      withRetries(
        async () => {
          calls++;
          throw err('QG_UPSTREAM_SERVER_ERROR');
        },
        {
          signal: ac.signal,
          baseDelayMs: 60_000,
          maxDelayMs: 60_000,
          maxTotalMs: 600_000,
          onRetry: (i) => {
            infos.push(i.attempt);
            setTimeout(() => ac.abort(), 20);
          },
        },
      ),
    );
    expect((e as UpstreamError).code).toBe('QG_UPSTREAM_SERVER_ERROR');
    expect(infos).toEqual([1]);
    expect(calls).toBe(1);
  });
});

describe('withRetries around the real client', () => {
  let sim: Simulator;
  let client: YouTubeClient;
  beforeAll(async () => {
    sim = await startSimulator({ keys: [KEY] });
    client = createYouTubeClient({ baseUrl: sim.url, apiKey: KEY });
  });
  afterAll(async () => {
    await client.close();
    await sim.close();
  });

  it('recovers from two backend errors and a reset; every attempt is one request and is charged', async () => {
    sim.faults.next('error', 2);
    sim.faults.next('reset', 1);
    const before = sim.charged();
    const attempts: number[] = [];
    const res = await withRetries(
      (n) => {
        attempts.push(n);
        return client.videoCategoriesList({ regionCode: 'US' });
      },
      { baseDelayMs: 5, maxAttempts: 5 },
    );
    expect(res.items.length).toBeGreaterThan(0);
    expect(attempts).toEqual([1, 2, 3, 4]);
    expect(sim.charged() - before).toBe(4);
  });

  it('waits out a short rate-limit burst by its Retry-After', async () => {
    sim.faults.rateLimitBurst({ count: 1, retryAfterSec: 1 });
    const waits: number[] = [];
    const res = await withRetries(() => client.videoCategoriesList({ regionCode: 'US' }), {
      onRetry: (i) => waits.push(i.delayMs),
    });
    expect(res.items.length).toBeGreaterThan(0);
    expect(waits).toEqual([1_000]);
  });
});
