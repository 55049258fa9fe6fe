/**
 * Run history, kept in the ledger's store: `openRunHistory(config.store)` opens the table in the
 * SQLite ledger's file, or the streams on its Redis (one server or a Cluster). Region freshness,
 * read from it, is in freshness.ts.
 */
import { parseStoreUrl } from '../config/store-url.js';
import type { Config, CredentialConfig, StoreConfig } from '../config/types.js';
import { bucketWindow } from '../guard/keys.js';
import type { JobResult } from '../job-library/types.js';
import type { Ledger } from '../ledger/types.js';
import { type RunHistory, type RunSummary, regionOfJob } from './types.js';

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

/** Units used in each of the credential's buckets now (their current windows). */
export async function bucketsUsed(
  ledger: Ledger,
  credential: CredentialConfig,
  nowMs: number,
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const b of Object.values(credential.buckets)) {
    const w = bucketWindow(credential, b, nowMs);
    out[b.id] = (await ledger.peek({ key: w.key, windowMs: w.windowMs })).used;
  }
  return out;
}

/** The summary of a finished run, with what its credential's buckets hold afterwards. */
export async function summarise(r: JobResult, config: Config, ledger: Ledger): Promise<RunSummary> {
  let used: Record<string, number> = {};
  const credential = config.credentials.find((c) => c.id === r.credential);
  if (credential) used = await bucketsUsed(ledger, credential, r.finishedAt).catch(() => ({}));
  return {
    credential: r.credential,
    job: r.job,
    region: regionOfJob(r.job),
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    outcome: r.outcome,
    pages: r.pages,
    units: r.units,
    videos: r.videos,
    reason: r.reason ?? null,
    used,
  };
}
