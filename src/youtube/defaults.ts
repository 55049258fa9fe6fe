/**
 * The YouTube application's defaults, in one module that imports nothing: its config part, the
 * cache, the upstream client and the simulator read them from here, so none of them loads another
 * to know a default.
 */

/** The regions whose trending charts the jobs fetch when the config names none. */
export const DEFAULT_REGIONS = ['US', 'GB', 'DE', 'FR', 'IN', 'BR', 'AU', 'CA'] as const;
export const DEFAULT_CACHE_PATH = 'data/cache.db';
export const DEFAULT_BASE_URL = 'https://www.googleapis.com/youtube/v3';
/** The backfill leaves a video alone when it was refreshed less than this long ago. */
export const DEFAULT_BACKFILL_MIN_AGE_MS = 3_600_000;
/** When the trending job runs (cron, in schedules.trending.timeZone: UTC by default). */
export const DEFAULT_TRENDING_CRON = '0 * * * *';
/** When the backfill runs (cron, in schedules.backfill.timeZone: UTC by default). */
export const DEFAULT_BACKFILL_CRON = '30 * * * *';
/** The whole of one upstream request, connect + headers + body (`upstream.deadline`). */
export const DEFAULT_UPSTREAM_DEADLINE_MS = 30_000;
/** The largest upstream answer read (`upstream.maxResponseBytes`): a page is well under 1 MB. */
export const DEFAULT_UPSTREAM_MAX_RESPONSE_BYTES = 8 * 2 ** 20;
/** The upstream's trending chart holds at most 200 videos: 4 pages of 50. */
export const DEFAULT_MAX_PAGES = 4;
