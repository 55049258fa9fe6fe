/**
 * The YouTube application's view of a config: the core's settings (src/config/types.ts) and the
 * application's own part (its schema: schema.ts; resolved by resolver.ts), read from the same file.
 */
import type { Config } from '../../config/types.js';

export interface ScheduleConfig {
  cron: string;
  /** Offset between consecutive regions' runs, so regional bursts interleave. */
  staggerMs: number;
  timeZone: string;
}

/** The trending schedule: also the most pages of each chart one run fetches. */
export interface TrendingScheduleConfig extends ScheduleConfig {
  maxPages: number;
}

/**
 * How the backfill's spend is spread: `day` (default) along a line over the upstream's day, `none`
 * as fast as its ceiling allows, or by a narrower budget of the config. The guard paces it
 * (`config.pacing`, set from this section).
 */
export type BackfillPace = { kind: 'day' } | { kind: 'none' } | { kind: 'budget'; budget: string };

export interface BackfillConfig {
  /** A video refreshed less than this many ms ago is not refreshed again (default 1 h). */
  minAgeMs: number;
  pace: BackfillPace;
  /** Hold back from the backfill the units today's remaining scheduled runs need (default true). */
  holdScheduled: boolean;
}

export interface UpstreamConfig {
  baseUrl: string;
  /** Longest silence while connecting, waiting for headers, or between two body chunks. */
  timeoutMs: number;
  /** The whole of one request: connect + headers + body. */
  deadlineMs: number;
  /** The largest answer read. */
  maxResponseBytes: number;
}

/** The application's settings, as its part resolves them. */
export interface YouTubeSettings {
  cache: { path: string };
  upstream: UpstreamConfig;
  /** The regions whose trending charts the jobs fetch (may be empty: no trending job). */
  regions: readonly string[];
  /** Chart categories per region; an empty list means the whole chart. */
  categories: Readonly<Record<string, readonly string[]>>;
  schedules: { trending: TrendingScheduleConfig; backfill: ScheduleConfig };
  backfill: BackfillConfig;
}

/** A config read with the YouTube application's part: the core's settings and the application's. */
export interface YouTubeConfig extends Config, YouTubeSettings {
  /** The region's code (upper-cased); throws ConfigError (QG_UNKNOWN_REGION) when not configured. */
  region(code: string): string;
}
