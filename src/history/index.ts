/**
 * Run history and region freshness, kept in the ledger's store: `openRunHistory(config.store)` opens
 * the table in the SQLite ledger's file, or the streams on its Redis (one server or a Cluster).
 */
import { parseStoreUrl } from '../config/store-url.js';
import type { Config, CredentialConfig, StoreConfig } from '../config/types.js';
import { bucketWindow } from '../guard/keys.js';
import type { JobResult } from '../jobs/types.js';
import type { Ledger } from '../ledger/types.js';
import { cronRuns } from '../plan/runs.js';
import { type RunHistory, type RunSummary, regionOfJob } from './types.js';

export * from './types.js';

export async function openRunHistory(store: StoreConfig): Promise<RunHistory> {
  const o = {
    ...(store.keyPrefix !== undefined ? { keyPrefix: store.keyPrefix } : {}),
    ...(store.commandTimeoutMs !== undefined ? { commandTimeoutMs: store.commandTimeoutMs } : {}),
    ...(store.connectTimeoutMs !== undefined ? { connectTimeoutMs: store.connectTimeoutMs } : {}),
  };
  // Only the store the URL names is loaded (as openLedger does).
  const parsed = parseStoreUrl(store.url);
  if (parsed.kind === 'sqlite') {
    const { openSqliteHistory } = await import('./sqlite.js');
    return openSqliteHistory({ path: parsed.path, ...o });
  }
  const { openRedisHistory } = await import('./redis.js');
  return openRedisHistory(parsed.kind, parsed.url, { ...o, allowUnreachable: true });
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

export interface RegionFreshness {
  region: string;
  /** Epoch ms of the last run that was done, null when none is on record. */
  lastSuccessAt: number | null;
  /** ms since then (null when never). */
  ageMs: number | null;
  /** Older than two periods of the trending schedule, or never fetched. */
  stale: boolean;
}

/** The trending schedule's period: the longest gap between its runs over the two days before `nowMs`. */
export function schedulePeriodMs(config: Config, nowMs: number): number {
  const t = config.schedules.trending;
  const runs = cronRuns(t.cron, t.timeZone, nowMs - 2 * 86_400_000, nowMs);
  let period = 0;
  for (let i = 1; i < runs.length; i++) period = Math.max(period, runs[i]! - runs[i - 1]!);
  return period > 0 ? period : 86_400_000;
}

/** Every configured region's last success and whether it is stale (older than two schedule periods). */
export async function regionFreshness(
  config: Config,
  history: RunHistory,
  nowMs: number,
): Promise<{ periodMs: number; staleAfterMs: number; regions: RegionFreshness[] }> {
  const last = await history.lastSuccess(config.credentials.map((c) => c.id));
  const periodMs = schedulePeriodMs(config, nowMs);
  const staleAfterMs = 2 * periodMs;
  const regions = config.regions.map((region) => {
    const at = last[region];
    if (at === undefined) return { region, lastSuccessAt: null, ageMs: null, stale: true };
    const ageMs = Math.max(0, nowMs - at);
    return { region, lastSuccessAt: at, ageMs, stale: ageMs > staleAfterMs };
  });
  return { periodMs, staleAfterMs, regions };
}
