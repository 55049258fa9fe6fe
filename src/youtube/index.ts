/**
 * `quota-guard/youtube`: the YouTube Data API application built on the core — its client, the
 * local cache of fetched videos, the trending and backfill jobs and the budget plan of their
 * schedules. test/layering/root.test.ts pins the list, so growing it is a decision.
 */

// The cache
export { CacheSchemaError, QueryInvalidError } from './cache/errors.js';
export { type Cache, openCache } from './cache/index.js';
// Types that the signatures above name, importable where the functions are
// (test/packaging/public-types.test.ts walks the signatures).
export type {
  CachedVideo,
  CacheOptions,
  CacheStats,
  IngestResult,
  RefreshBatch,
  SearchHit,
  SearchOptions,
  SearchRanking,
  SearchResult,
  SnapshotEntry,
  TrendingPage,
  TrendingSighting,
  TrendingSnapshot,
  VideoResource,
} from './cache/types.js';
// Its part of the config: registered with the core when this module loads
export { loadYouTubeConfig, parseYouTubeConfig, youtubeConfigPart } from './config/part.js';
export { youtubeConfig } from './config/resolver.js';
export type {
  BackfillConfig,
  BackfillPace,
  ScheduleConfig,
  TrendingScheduleConfig,
  UpstreamConfig,
  YouTubeConfig,
  YouTubeSettings,
} from './config/types.js';
// The schedules' need, for a guard built for the jobs
export type { Spend } from './cron-runs.js';
export { scheduledNeed } from './cron-runs.js';
export { YOUTUBE_ERROR_CODES } from './errors.js';
export type { BackfillProgress } from './job-library/backfill.js';
// The jobs
export { type BackfillOptions, runBackfill } from './job-library/backfill.js';
export { type OpenedJobContext, type OpenJobContextOptions, openJobContext } from './job-library/context.js';
export { runTrending, type TrendingOptions } from './job-library/trending.js';
export type { JobContext, JobOutcome, JobResult, UpstreamClients } from './job-library/types.js';
// The budget plan
export { planBudget } from './plan/plan.js';
export type {
  BucketPlan,
  CheckKind,
  PlanChange,
  PlanCheck,
  PlanLine,
  PlanOptions,
  PlanReport,
  SourceKind,
} from './plan/types.js';
export type {
  ApiCall,
  ApiMethod,
  CallOptions as ApiCallOptions,
  ChartParams,
  SearchParams,
  UpstreamTimeouts,
} from './upstream/client.js';
// The upstream client
export { createYouTubeClient, type YouTubeClient, type YouTubeClientOptions } from './upstream/client.js';
