/**
 * What a trending run spends, in one place: the method every page is fetched with, the charts a
 * region's run fetches (one per configured category, else the whole chart), and the most calls
 * and units one run makes. The job, the schedules' need, the plan and `fetch --dry-run` read these.
 */

import { methodOf } from '../config/lookups.js';
import type { Config, CredentialConfig } from '../config/types.js';
import type { MethodSpec } from '../profiles/profile.js';
import type { YouTubeConfig } from './config/types.js';

/** The method every trending page is fetched with. */
export const TRENDING_METHOD = 'videos.list';

/**
 * Whether the config runs the YouTube application: its jobs' credential (the first) has a profile
 * that knows the trending method. A config for another API (a Drive profile, a 60-per-minute
 * profile of one's own) does not, and the tools then show the core's parts only: no regions, no
 * freshness, no trending or backfill schedule. The one place that asks.
 */
export function youtubeConfigured(config: Config): boolean {
  const jobs = config.credentials[0];
  return jobs !== undefined && Object.hasOwn(jobs.methods, TRENDING_METHOD);
}

/** Charts one run of `region` fetches: one per configured category, else the whole chart. */
export function chartsOf(config: YouTubeConfig, region: string): number {
  return Math.max(1, config.categories[region]?.length ?? 0);
}

/** The bucket and cost of a trending page under a credential. */
export function trendingMethod(credential: CredentialConfig): MethodSpec {
  return methodOf(credential, TRENDING_METHOD);
}

/** Calls one run of `region` makes at most: its charts × `schedules.trending.maxPages`. */
export function trendingCalls(config: YouTubeConfig, region: string): number {
  return chartsOf(config, region) * config.schedules.trending.maxPages;
}

/** Units one run of `region` spends at most on `credential`: its calls × the method's cost. */
export function trendingUnits(config: YouTubeConfig, credential: CredentialConfig, region: string): number {
  return trendingCalls(config, region) * trendingMethod(credential).cost;
}

/** How one run's calls add up, for a dry run: `2 charts × 4 pages`, or `4 pages`. */
export function trendingCallsText(config: YouTubeConfig, region: string): string {
  const charts = chartsOf(config, region);
  const { maxPages } = config.schedules.trending;
  return `${charts > 1 ? `${charts} charts × ` : ''}${maxPages} page${maxPages === 1 ? '' : 's'}`;
}
