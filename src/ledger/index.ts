/**
 * `openLedger(url)`: the one way to get a ledger.
 *
 *   sqlite:data/quota.db        embedded file (the default store), `sqlite::memory:` for a private one
 *   redis://host:port/db        one Redis (rediss:// for TLS)
 *   redis-cluster://h1:p1,h2:p2 Redis Cluster (rediss-cluster:// for TLS)
 */
import { QuotaGuardError } from '../errors.js';
import { CheckedLedger } from './ledger.js';
import { openRedisBackend, parseClusterUrl } from './redis.js';
import { openSqliteBackend } from './sqlite.js';
import type { Ledger, OpenLedgerOptions } from './types.js';

/** The URL with any password replaced, safe to put in messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, (_m, auth: string) => {
    const colon = auth.indexOf(':');
    return colon < 0 ? '//***@' : `//${auth.slice(0, colon)}:***@`;
  });
}

function badUrl(url: string, why: string): QuotaGuardError {
  return new QuotaGuardError(
    'QG_STORE_URL_INVALID',
    `store URL '${redactUrl(url)}': ${why} (expected sqlite:<path>, sqlite::memory:, redis://host:port, ` +
      'rediss://host:port or redis-cluster://host:port,host:port)',
    { field: 'store' },
  );
}

export async function openLedger(url: string, options: OpenLedgerOptions = {}): Promise<Ledger> {
  if (typeof url !== 'string' || url.trim() === '') throw badUrl(String(url), 'empty');
  const u = url.trim();
  if (u.startsWith('sqlite:')) {
    let path = u.slice('sqlite:'.length);
    if (path.startsWith('//')) path = path.slice(2);
    if (path === '') throw badUrl(u, 'no file path');
    const backend = openSqliteBackend({
      path,
      ...(options.busyTimeoutMs !== undefined && { busyTimeoutMs: options.busyTimeoutMs }),
      ...(options.keyPrefix !== undefined && { keyPrefix: options.keyPrefix }),
      ...(options.now !== undefined && { now: options.now }),
    });
    return new CheckedLedger(backend);
  }
  if (/^rediss?:\/\//.test(u)) {
    try {
      new URL(u);
    } catch {
      throw badUrl(u, 'not a valid URL');
    }
    return new CheckedLedger(await openRedisBackend('redis', u, options));
  }
  if (/^rediss?-cluster:\/\//.test(u)) {
    if (!parseClusterUrl(u)) throw badUrl(u, 'expected host:port[,host:port…] after the scheme');
    return new CheckedLedger(await openRedisBackend('redis-cluster', u, options));
  }
  throw badUrl(u, 'unknown scheme');
}

export { LedgerCode } from './codes.js';
export { CrossSlotError, WindowMismatchError } from './errors.js';
