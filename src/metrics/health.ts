/**
 * `/healthz`: the ledger store and the cache both answer and, for a server that spends (the
 * decision API, `run`), the store takes a write now → healthy; otherwise unhealthy with the reason.
 * A store that answers reads but refuses writes (a Redis at its `maxmemory`, a SQLite file on a
 * file system gone read-only) refuses every spend, so "it answers a ping" is not health there: the
 * write check blocks and unblocks a probe key of its own, which no credential's bucket can name,
 * once per check. Reasons are our own error messages (store URLs are redacted there), never a
 * secret.
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
  /** Why it is not ok: the first failing check's reason. */
  reason?: string;
  checks: { ledger?: HealthCheck; writes?: HealthCheck; cache?: HealthCheck };
}

export interface HealthSources {
  ledger?: Ledger;
  /** Also check that the ledger store takes writes (a server that spends). */
  writes?: boolean;
  cache?: Cache;
  /** Give up on a probe after this long (default 2,000 ms). */
  timeoutMs?: number;
}

/** A cursor nobody writes: reading it touches the cache file without scanning anything. */
const PROBE_CURSOR = 'healthz';

/** The key the write check blocks and unblocks: outside every credential's `qg:{<id>}:` keys. */
export const WRITE_PROBE_KEY = 'qg:healthz:write-probe';

/** A write the store must take for spends to be recorded: a block of the probe key, lifted at once. */
async function writeProbe(ledger: Ledger): Promise<void> {
  // Expires by itself should the unblock not arrive.
  await ledger.block(WRITE_PROBE_KEY, Date.now() + 60_000, 'health check');
  await ledger.unblock(WRITE_PROBE_KEY);
}

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
  // Only once the store answers: a store that is down says so under `ledger`.
  let writes =
    s.ledger && s.writes && ledger?.ok
      ? await probe(() => writeProbe(s.ledger!), timeoutMs, 'a write to the ledger store')
      : undefined;
  // A write still waiting says on what, where the store knows (another process's SQLite lock).
  const waiting = writes?.ok === false ? s.ledger?.waitingFor?.() : undefined;
  if (writes && waiting !== undefined) writes = { ...writes, error: `${writes.error}: ${waiting}` };
  const checks: Health['checks'] = {};
  if (ledger) checks.ledger = ledger;
  if (writes) checks.writes = writes;
  if (cache) checks.cache = cache;
  const failed = [
    ledger?.ok === false ? `the ledger store does not answer: ${ledger.error}` : undefined,
    writes?.ok === false
      ? `spends cannot be recorded: the ledger store refuses writes: ${writes.error}`
      : undefined,
    cache?.ok === false ? `the cache does not answer: ${cache.error}` : undefined,
  ].find((r) => r !== undefined);
  return { ok: failed === undefined, ...(failed !== undefined ? { reason: failed } : {}), checks };
}
