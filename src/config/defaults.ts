/**
 * Every default the config fills in that another layer also needs, in one module that imports
 * nothing: the cache, the upstream client and the simulator read their defaults from here, so
 * loading the config never loads them.
 */

/** The regions whose trending charts the jobs fetch when the config names none. */
export const DEFAULT_REGIONS = ['US', 'GB', 'DE', 'FR', 'IN', 'BR', 'AU', 'CA'] as const;
export const DEFAULT_CACHE_PATH = 'data/cache.db';
export const DEFAULT_BASE_URL = 'https://www.googleapis.com/youtube/v3';
export const DEFAULT_API_KEY_ENV = 'YOUTUBE_API_KEY';
export const DEFAULT_RESERVE = '5%';
export const DEFAULT_BACKFILL_HEADROOM = '10%';
export const DEFAULT_WINDOW = '24h';
/** The backfill leaves a video alone when it was refreshed less than this long ago. */
export const DEFAULT_BACKFILL_MIN_AGE_MS = 3_600_000;
/**
 * The longest window a ledger key may have (about 31 years: keeps microsecond arithmetic in Lua,
 * which uses doubles, exact). The ledger refuses longer ones, so the config does too.
 */
export const MAX_WINDOW_MS = 1e12;
/** A config file larger than this is refused before it is read. */
export const MAX_CONFIG_BYTES = 2 ** 20;
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

/** How long after a minute ends the reconcile first compares it (`reconcile.lag`). */
export const DEFAULT_RECONCILE_LAG_MS = 600_000;
/** When `run` and `serve` reconcile (cron, UTC): every five minutes. */
export const DEFAULT_RECONCILE_CRON = '*/5 * * * *';
/** Cloud Monitoring's API. */
export const DEFAULT_MONITORING_URL = 'https://monitoring.googleapis.com';
/** One read of the upstream's count, connect to last byte (`reconcile.monitoring.deadline`). */
export const DEFAULT_COUNT_DEADLINE_MS = 30_000;
/** The largest answer of the upstream's count read: a day of minutes for every method fits well under it. */
export const DEFAULT_COUNT_MAX_RESPONSE_BYTES = 16 * 2 ** 20;

/** The environment variable naming the config file when `--config` is not given. */
export const CONFIG_ENV = 'QUOTA_GUARD_CONFIG';
/** The environment variable holding the store URL when the config file sets none. */
export const STORE_ENV = 'REDIS_URL';
