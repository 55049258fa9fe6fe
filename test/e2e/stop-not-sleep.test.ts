/**
 * Proof: a job whose Retry-After exceeds the maximum sleep stops at once with exit code 75 instead
 * of sleeping (Redis ledger, simulator, real cache file, the CLI in-process).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { cli } from '../cli/helpers.js';
import { secretKey, tmpPath } from '../job-library/helpers.js';
import { configFile, prefix } from './helpers.js';

let sim: Simulator;
const key = secretKey();

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});

afterAll(async () => {
  await sim?.close();
});

beforeEach(() => {
  vi.stubEnv('QG_E2E_KEY', key);
  vi.stubEnv('LOG_LEVEL', 'silent');
});

afterEach(() => {
  vi.unstubAllEnvs();
  sim.faults.clear();
});

function config(quota = 10_000): string {
  return configFile({
    store: { url: inject('redisUrl'), keyPrefix: prefix() },
    cache: { path: tmpPath('cache.db') },
    upstream: { baseUrl: sim.url },
    credentials: [{ id: 'default', apiKeyEnv: 'QG_E2E_KEY', buckets: { units: { quota, reserve: 1 } } }],
    maxSleep: '30s',
  });
}

interface JsonResult {
  outcome: string;
  exitCode: number;
  startedAt: string;
  finishedAt: string;
  reason?: string;
  stopReason?: string;
  resumeAt?: string;
  pages: number;
}

function jobMs(r: JsonResult): number {
  return Date.parse(r.finishedAt) - Date.parse(r.startedAt);
}

describe('stop instead of sleep', () => {
  it('a budget that frees up in hours stops the job within a second with 75', async () => {
    const file = config(10);
    // Someone spends the scheduled ceiling (9 of 10) first.
    expect((await cli('spend', 'default', '--cost', '9', '--tier', 'scheduled', '--config', file)).code).toBe(
      0,
    );
    const started = performance.now();
    const out = await cli('fetch', '--region', 'US', '--json', '--config', file);
    const wall = performance.now() - started;
    expect(out.code).toBe(75);
    const [result] = JSON.parse(out.stdout) as JsonResult[];
    expect(result).toMatchObject({ outcome: 'stopped', exitCode: 75, stopReason: 'budget', pages: 0 });
    expect(result!.reason).toMatch(/resume in (23h|1d)/);
    expect(Date.parse(result!.resumeAt!)).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    expect(jobMs(result!)).toBeLessThan(1_000);
    expect(wall).toBeLessThan(10_000); // the whole command, opening Redis and the cache included
  });

  it('an upstream rate limit with a Retry-After above maxSleep stops the job within a second with 75', async () => {
    const file = config();
    sim.faults.rateLimitBurst({ count: 3, retryAfterSec: 120 });
    const out = await cli('fetch', '--region', 'GB', '--json', '--config', file);
    expect(out.code).toBe(75);
    const [result] = JSON.parse(out.stdout) as JsonResult[];
    expect(result).toMatchObject({ outcome: 'stopped', exitCode: 75, stopReason: 'rate-limited', pages: 0 });
    expect(result!.reason).toMatch(/rate-limited .* resume in 2m/);
    expect(jobMs(result!)).toBeLessThan(1_000);
  });

  it('a short Retry-After (below maxSleep) is slept through and the job completes', async () => {
    const file = config();
    sim.faults.rateLimitBurst({ count: 1, retryAfterSec: 1 });
    const out = await cli('fetch', '--region', 'DE', '--json', '--config', file);
    expect(out.code).toBe(0);
    const [result] = JSON.parse(out.stdout) as JsonResult[];
    expect(result).toMatchObject({ outcome: 'done', pages: 4 });
    expect(jobMs(result!)).toBeGreaterThanOrEqual(1_000);
  });
});
