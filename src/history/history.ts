/**
 * Run history, kept in the ledger's store: `openRunHistory(config.store)` opens the table in the
 * SQLite ledger's file, or the streams on its Redis (one server or a Cluster). It stores what it is
 * given: a job run writes its own summary (src/runs/summary.ts). Region freshness, read from it by
 * the YouTube application, is in src/youtube/freshness.ts.
 */
import { parseStoreUrl } from '../config/store-url.js';
import type { StoreConfig } from '../config/types.js';
import type { RunHistory } from './types.js';

export async function openRunHistory(store: StoreConfig): Promise<RunHistory> {
  const o = {
    ...(store.keyPrefix !== undefined ? { keyPrefix: store.keyPrefix } : {}),
    ...(store.commandTimeoutMs !== undefined ? { commandTimeoutMs: store.commandTimeoutMs } : {}),
    ...(store.connectTimeoutMs !== undefined ? { connectTimeoutMs: store.connectTimeoutMs } : {}),
  };
  const url = parseStoreUrl(store.url);
  // Only the store the URL names is loaded.
  if (url.kind === 'sqlite') {
    const { openSqliteHistory } = await import('./sqlite.js');
    return openSqliteHistory({ path: url.path, ...o });
  }
  const { openRedisHistory } = await import('./redis.js');
  return openRedisHistory(url.kind, url.url, { ...o, allowUnreachable: true });
}
