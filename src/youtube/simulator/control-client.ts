/**
 * A client for the simulator's control API, for tests and drills whose simulator runs in another
 * process (`quota-guard simulate`). Mirrors the in-process handle: stats, request log, charges,
 * faults, spend-behind and the clock.
 */
import { request } from 'undici';
import { QuotaGuardError } from '../../errors.js';
import type { FaultKind, FaultOptions, FaultState, RateLimitBurst } from './faults.js';
import type { BucketUsage } from './quota.js';
import type { RequestLogEntry, SimulatorStats } from './types.js';

export interface SimulatorControl {
  stats(): Promise<SimulatorStats>;
  requests(since?: number): Promise<RequestLogEntry[]>;
  charged(filter?: { project?: string; bucket?: string }): Promise<number>;
  setFaults(options: FaultOptions): Promise<FaultState>;
  clearFaults(): Promise<FaultState>;
  nextFaults(kind: FaultKind, count?: number): Promise<FaultState>;
  rateLimitBurst(burst: RateLimitBurst): Promise<FaultState>;
  spendBehind(project: string, bucket: string, units: number): Promise<BucketUsage>;
  clock(): Promise<{ now: number; dayStart: number; nextResetAt: number }>;
  setClock(ms: number | string): Promise<{ now: number; dayStart: number; nextResetAt: number }>;
  advanceClock(ms: number): Promise<{ now: number; dayStart: number; nextResetAt: number }>;
}

/** `url` may be the simulator's API base URL, its origin or its control URL. */
export function simulatorControl(url: string): SimulatorControl {
  const origin = new URL(url).origin;
  const base = `${origin}/_sim`;

  async function call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(`${base}${path}`, {
        method,
        ...(body === undefined
          ? {}
          : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      });
    } catch (e) {
      throw new QuotaGuardError(
        'QG_UPSTREAM_TRANSPORT',
        `simulator control ${path}: ${(e as Error).message}`,
      );
    }
    const json = (await res.body.json()) as T & { error?: { code?: string; message?: string } };
    if (res.statusCode !== 200) {
      throw new QuotaGuardError(
        res.statusCode === 400 ? 'QG_INVALID_ARGUMENT' : 'QG_INTERNAL',
        `simulator control ${path}: ${json.error?.message ?? `HTTP ${res.statusCode}`}`,
      );
    }
    return json;
  }

  return {
    stats: () => call('GET', '/stats'),
    requests: async (since = 0) =>
      (await call<{ requests: RequestLogEntry[] }>('GET', `/requests?since=${since}`)).requests,
    charged: async (filter = {}) => {
      const q = new URLSearchParams();
      if (filter.project) q.set('project', filter.project);
      if (filter.bucket) q.set('bucket', filter.bucket);
      return (await call<{ units: number }>('GET', `/charged?${q}`)).units;
    },
    setFaults: (options) => call('POST', '/faults', options),
    clearFaults: () => call('DELETE', '/faults'),
    nextFaults: (kind, count = 1) => call('POST', '/faults/next', { kind, count }),
    rateLimitBurst: (burst) => call('POST', '/faults/rate-limit', burst),
    spendBehind: async (project, bucket, units) =>
      (await call<{ usage: BucketUsage }>('POST', '/spend-behind', { project, bucket, units })).usage,
    clock: () => call('GET', '/clock'),
    setClock: (ms) => call('POST', '/clock', { set: ms }),
    advanceClock: (ms) => call('POST', '/clock', { advance: ms }),
  };
}
