/**
 * The core's resolved configuration: every default applied, every name checked, every duration in
 * ms. Produced by `loadConfig` / `parseConfig` (src/config/load.ts); consumed by the guard, the
 * ledger's opener and the run history. An application's own settings (the YouTube application's
 * regions, schedules, cache and upstream) are a part it registers (parts.ts): they are on the same
 * object, typed by the application's own view of it. It never holds an API key: keys are read from
 * the environment on demand (`config.apiKey(credentialId)`).
 */
import type { MethodSpec, ProfileId, QuotaProfile } from '../profiles/profiles.js';
import type { StoreKind } from './store-url.js';
import { TIERS, type Tier } from './tiers.js';

export type { StoreKind, Tier };
/** The tiers' names (the tiers themselves are values: tiers.ts). */
export { TIERS };

/** What a call site does when the ledger store is unavailable. */
export type FailMode = 'open' | 'closed';
/** `auto`: open for calls costing at most `storeDown.openMaxCost` units, closed above. */
export type FailPolicy = FailMode | 'auto';

/**
 * How a bucket's budget is windowed.
 * - `sliding`: one exact sliding log of `ms` (default 24 h). Safest: never more than the quota in
 *   any window of that length, whatever the upstream's reset time.
 * - `upstream-day`: one log per calendar day of the upstream (its time zone), so the whole quota
 *   frees at the upstream's midnight; pair it with `pace` to smooth bursts.
 */
export type WindowConfig = { kind: 'sliding'; ms: number } | { kind: 'upstream-day' };

/** A sliding budget spent atomically with its bucket (e.g. at most 1,500 units per rolling hour). */
export interface PaceConfig {
  limit: number;
  windowMs: number;
}

export interface BucketConfig {
  id: string;
  /** Units per upstream day. */
  quota: number;
  window: WindowConfig;
  /** Units scheduled and backfill spends never touch (default 5 % of the quota). */
  reserve: number;
  /** Backfills stop while fewer than this many units are left above the reserve. */
  backfillHeadroom: number;
  /** The ceiling each tier spends up to (tiers.ts): scheduled = quota − reserve, backfill = that − headroom, manual = quota. */
  ceilings: Record<Tier, number>;
  pace?: PaceConfig;
}

/** An extra budget narrower than a bucket, spent atomically with it. */
export interface BudgetConfig {
  id: string;
  bucket: string;
  limit: number;
  windowMs: number;
  /** Tiers it covers (all by default). */
  tiers: readonly Tier[];
  /** Methods it covers; undefined = every spend on the bucket. */
  methods?: readonly string[];
}

export interface CredentialConfig {
  id: string;
  /** Name of the environment variable holding the API key (never the key itself). */
  apiKeyEnv: string;
  profile: ProfileId;
  /** The upstream's reset time zone. */
  timeZone: string;
  /** The bucket a spend without a method uses (the profile's shared bucket, `units`). */
  defaultBucket: string;
  buckets: Record<string, BucketConfig>;
  /** method → bucket and cost, from the profile. */
  methods: Record<string, MethodSpec>;
  /** Narrower budgets that apply to this credential. */
  budgets: readonly BudgetConfig[];
  /** The Google Cloud project its key belongs to; `reconcile` reads the count of each one named. */
  project?: string;
}

/** Holding the ledger against the upstream's own count (`quota-guard reconcile`). */
export interface ReconcileConfig {
  /** Minutes that ended less than this long ago are not compared yet. */
  lagMs: number;
  /** When `run` and `serve` reconcile. */
  schedule: { cron: string; timeZone: string };
  /** A service account's key file (absolute); undefined: Application Default Credentials. */
  keyFile?: string;
  monitoring: {
    baseUrl: string;
    deadlineMs: number;
    maxResponseBytes: number;
    /** Overrides each profile's `usageMetric`. */
    metricType?: string;
  };
  /** Per bucket: the upstream's quota metric, over the profile's. */
  quotaMetrics: Record<string, string>;
}

/** Calls per upstream day made outside the configured jobs (people, scripts); counted by `plan`. */
export interface ExpectedSpendConfig {
  id: string;
  credential: string;
  method: string;
  bucket: string;
  /** Units per call (the method's cost in the credential's profile). */
  cost: number;
  tier: Tier;
  callsPerDay: number;
}

export interface StoreConfig {
  /** `sqlite:<path>`, `redis://…`, `rediss://…`, `redis-cluster://host:port,…` or `redis-sentinel://host:port,…/name`. May hold a password: never log it. */
  url: string;
  kind: StoreKind;
  /** Where the URL came from. */
  from: 'file' | 'env' | 'default';
  keyPrefix?: string;
  commandTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Redis: replicas that must hold an allowed spend (WAIT), and how long to wait for them. */
  waitReplicas?: number;
  waitTimeoutMs?: number;
}

export interface StoreDownConfig {
  default: FailPolicy;
  openMaxCost: number;
  /** Per call site (the first `:` segment of a spend's tag, e.g. `trending`): open or closed. */
  sites: Record<string, FailMode>;
}

/**
 * How the paced tier's spend is spread over the upstream's day (src/guard/pacing.ts): `day` (the
 * default) along a line, `none` as fast as its ceiling allows, or by a narrower budget of the config.
 */
export type PacingMode = { kind: 'day' } | { kind: 'none' } | { kind: 'budget'; budget: string };

export interface PacingConfig {
  mode: PacingMode;
  /** Hold back from the paced tier the units today's remaining scheduled runs need (default true). */
  holdScheduled: boolean;
}

export interface Config {
  /** The file it was read from, or undefined for the embedded defaults. */
  source?: string;
  store: StoreConfig;
  credentials: readonly CredentialConfig[];
  /** Spending outside the configured jobs, counted by `plan`. */
  expected: readonly ExpectedSpendConfig[];
  /** The longest Retry-After a job sleeps through before it stops instead. */
  maxSleepMs: number;
  storeDown: StoreDownConfig;
  reconcile: ReconcileConfig;
  /** Every profile a credential may use: the built-in ones and the config's own `profiles`. */
  profiles: Readonly<Record<ProfileId, QuotaProfile>>;
  /**
   * How the guard paces the paced tier: set by the part that owns the schedules (the YouTube
   * application's `backfill:` section); absent, the day's line with the scheduled need held back.
   */
  pacing?: PacingConfig;
  /** The names of the parts this config was read with besides the core's (e.g. `youtube`). */
  readonly parts: readonly string[];
  /** The credential's config; throws ConfigError (QG_UNKNOWN_CREDENTIAL) for an unknown id. */
  credential(id: string): CredentialConfig;
  /**
   * The credential's API key, read from its environment variable now. Throws ConfigError
   * (QG_MISSING_API_KEY) naming the variable when it is unset or empty.
   */
  apiKey(credentialId: string): string;
}

/** Where environment variables are read from (`process.env` unless given). */
export type Env = Record<string, string | undefined>;
