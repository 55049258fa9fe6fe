/**
 * Region freshness: how long ago each configured region was last fetched successfully, and whether
 * that is stale (older than two periods of the trending schedule), from the run history.
 */

import type { Config } from '../config/types.js';
import type { RunHistory } from '../history/types.js';
import { youtubeConfig } from './config/resolver.js';
import type { YouTubeConfig } from './config/types.js';
import { cronRuns } from './cron-runs.js';

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
function schedulePeriodMs(config: YouTubeConfig, nowMs: number): number {
  const t = config.schedules.trending;
  const runs = cronRuns(t.cron, t.timeZone, nowMs - 2 * 86_400_000, nowMs);
  let period = 0;
  for (let i = 1; i < runs.length; i++) period = Math.max(period, runs[i]! - runs[i - 1]!);
  return period > 0 ? period : 86_400_000;
}

/** Every configured region's last success and whether it is stale (older than two schedule periods). */
export async function regionFreshness(
  base: Config,
  history: RunHistory,
  nowMs: number,
): Promise<{ periodMs: number; staleAfterMs: number; regions: RegionFreshness[] }> {
  const config = youtubeConfig(base);
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
