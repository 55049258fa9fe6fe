/**
 * `/healthz`: the ledger store and the cache both answer → healthy; otherwise unhealthy with the
 * reason. Reasons are our own error messages (store URLs are redacted there), never a secret.
 */

import { isQuotaGuardError } from '../errors.js';
import type { Ledger } from '../ledger/types.js';
import type { Cache } from '../youtube/cache/index.js';

export interface HealthCheck {
  ok: boolean;
  /** How long the probe took. */
  ms: number;
  /** Why it failed. */
  error?: string;
}

export interface Health {
  ok: boolean;
  checks: { ledger?: HealthCheck; cache?: HealthCheck };
}

export interface HealthSources {
  ledger?: Ledger;
  cache?: Cache;
  /** Give up on a probe after this long (default 2,000 ms). */
  timeoutMs?: number;
}

/** A cursor nobody writes: reading it touches the cache file without scanning anything. */
const PROBE_CURSOR = 'healthz';

function reason(e: unknown): string {
  if (isQuotaGuardError(e)) return `${e.message} (${e.code})`;
  return e instanceof Error ? e.name : 'unknown error';
}

async function probe(fn: () => unknown, timeoutMs: number, what: string): Promise<HealthCheck> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.resolve().then(fn),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what} did not answer within ${timeoutMs} ms`)),
          timeoutMs,
        );
      }),
    ]);
    return { ok: true, ms: Math.round(performance.now() - started) };
  } catch (e) {
    const msg = e instanceof Error && /did not answer within/.test(e.message) ? e.message : reason(e);
    return { ok: false, ms: Math.round(performance.now() - started), error: msg };
  } finally {
    clearTimeout(timer);
  }
}

export async function checkHealth(s: HealthSources): Promise<Health> {
  const timeoutMs = s.timeoutMs ?? 2_000;
  const [ledger, cache] = await Promise.all([
    s.ledger ? probe(() => s.ledger!.ping(), timeoutMs, 'the ledger store') : undefined,
    s.cache ? probe(() => s.cache!.getCursor(PROBE_CURSOR), timeoutMs, 'the cache') : undefined,
  ]);
  const checks: Health['checks'] = {};
  if (ledger) checks.ledger = ledger;
  if (cache) checks.cache = cache;
  return { ok: (ledger?.ok ?? true) && (cache?.ok ?? true), checks };
}
