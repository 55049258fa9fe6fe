/**
 * `openLedger(url)`: the one way to get a ledger. The URL is read by config/store-url.ts; only the
 * store it names is loaded (ioredis for redis URLs, better-sqlite3 for sqlite ones).
 */
import { parseStoreUrl } from '../config/store-url.js';
import { CheckedLedger } from './ledger.js';
import type { Ledger, OpenLedgerOptions } from './types.js';

export async function openLedger(url: string, options: OpenLedgerOptions = {}): Promise<Ledger> {
  const store = parseStoreUrl(url);
  if (store.kind === 'sqlite') {
    const { openSqliteBackend } = await import('./sqlite.js');
    const backend = openSqliteBackend({
      path: store.path,
      ...(options.busyTimeoutMs !== undefined && { busyTimeoutMs: options.busyTimeoutMs }),
      ...(options.keyPrefix !== undefined && { keyPrefix: options.keyPrefix }),
      ...(options.now !== undefined && { now: options.now }),
      ...(options.create !== undefined && { create: options.create }),
      ...(options.writes !== undefined && { writes: options.writes }),
      ...(options.monotonic !== undefined && { monotonic: options.monotonic }),
      ...(options.bootId !== undefined && { bootId: options.bootId }),
      ...(options.onClockStep !== undefined && { onClockStep: options.onClockStep }),
      ...(options.synchronous !== undefined && { synchronous: options.synchronous }),
    });
    return new CheckedLedger(backend);
  }
  const { openRedisBackend } = await import('./redis.js');
  return new CheckedLedger(await openRedisBackend(store.kind, store.url, options));
}
