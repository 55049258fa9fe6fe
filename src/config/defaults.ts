/**
 * Every default of the core's config that another layer also needs, in one module that imports
 * nothing, so loading the config never loads them. The YouTube application's defaults (regions,
 * schedules, cache, upstream) are its own: src/youtube/defaults.ts.
 */

/** The environment variable a credential's API key is read from when it names none. */
export const DEFAULT_API_KEY_ENV = 'YOUTUBE_API_KEY';
export const DEFAULT_RESERVE = '5%';
export const DEFAULT_BACKFILL_HEADROOM = '10%';
export const DEFAULT_WINDOW = '24h';
/**
 * The longest window a ledger key may have (about 31 years: keeps microsecond arithmetic in Lua,
 * which uses doubles, exact). The ledger refuses longer ones, so the config does too.
 */
export const MAX_WINDOW_MS = 1e12;
/** A config file larger than this is refused before it is read. */
export const MAX_CONFIG_BYTES = 2 ** 20;

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
