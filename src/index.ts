/**
 * The package root: what a library user needs, chosen name by name (test/layering/root.test.ts
 * pins the list, so growing it is a decision). The upstream simulator is `quota-guard/simulator`;
 * everything else is internal and may change.
 */

export { CacheSchemaError, QueryInvalidError } from './cache/errors.js';
// The cache
export { type Cache, openCache } from './cache/index.js';
export type {
  CachedVideo,
  CacheOptions,
  SearchHit,
  SearchOptions,
  SearchResult,
  TrendingPage,
  TrendingSnapshot,
  VideoResource,
} from './cache/types.js';
// The config
export {
  type Env,
  type LoadConfigOptions,
  loadConfig,
  type ParseConfigOptions,
  parseConfig,
} from './config/load.js';
export {
  type BucketConfig,
  type BudgetConfig,
  type Config,
  type CredentialConfig,
  type FailMode,
  type FailPolicy,
  type StoreConfig,
  type StoreKind,
  TIERS,
  type Tier,
} from './config/types.js';
// The errors
export {
  ConfigError,
  CostExceedsLimitError,
  ERROR_CODES,
  type ErrorCode,
  ExitCode,
  exitCodeFor,
  InvalidArgumentError,
  isQuotaGuardError,
  QuotaGuardError,
  StoreUnavailableError,
} from './errors.js';
// The guard
export { createGuard, type Guard, type GuardOptions } from './guard/guard.js';
export type { CallOutcome, ReportResult } from './guard/report.js';
export {
  type BucketStatus,
  type BudgetStatus,
  type CredentialStatus,
  quotaStatus,
  type StatusOptions,
  type StatusReport,
} from './guard/status.js';
export type {
  Acquired,
  AcquireOptions,
  CallOptions,
  CallResult,
  GuardEvent,
  GuardLogger,
  GuardStats,
  SpendArgs,
  SpendOutcome,
  SpendReason,
  Stop,
  StopReason,
} from './guard/types.js';

// Any HTTP call through the guard
export {
  type Answer,
  type Classifier,
  type FetchInput,
  type GuardedFetchOptions,
  type GuardInterceptorOptions,
  GuardStoppedError,
  googleClassifier,
  guardedFetch,
  guardInterceptor,
  type Verdict,
} from './http/index.js';
// The jobs
export { type BackfillOptions, runBackfill } from './job-library/backfill.js';
export { type OpenedJobContext, type OpenJobContextOptions, openJobContext } from './job-library/context.js';
export { runTrending, type TrendingOptions } from './job-library/trending.js';
export type { JobContext, JobOutcome, JobResult } from './job-library/types.js';
export { CrossSlotError, WindowMismatchError } from './ledger/errors.js';
// The ledger
export { openLedger } from './ledger/index.js';
export type {
  AllowedDecision,
  Budget,
  Decision,
  DeniedDecision,
  Ledger,
  LedgerKind,
  OpenLedgerOptions,
  PeekRequest,
  Snapshot,
  SpendRequest,
} from './ledger/types.js';
export { UpstreamError } from './outcome/errors.js';
export { type RetryOptions, type RetryPolicy, withRetries } from './outcome/retry.js';
// The budget plan
export { type PlanOptions, type PlanReport, planBudget } from './plan/plan.js';
// One handle on everything a config names
export {
  type OpenQuotaGuardOptions,
  openQuotaGuard,
  type QuotaGuard,
  type QuotaGuardWithJobs,
  type RunHandle,
  type RunOptions,
  type RunOutcome,
} from './quota-guard.js';
// The upstream client
export { createYouTubeClient, type YouTubeClient, type YouTubeClientOptions } from './upstream/client.js';
