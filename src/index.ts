/**
 * The package root, the core: the ledger, the guard over it, the config of stores, credentials and
 * budgets, the errors, the outcome of an upstream call and the run history. It knows no upstream in
 * particular: the YouTube client, cache and jobs are `quota-guard/youtube`, the upstream simulator
 * `quota-guard/simulator`. test/layering/root.test.ts pins each list, so growing one is a decision;
 * everything else is internal and may change.
 */

// The config
export { type ConfigInput, defineConfig } from './config/define.js';
export {
  type Env,
  type LoadConfigOptions,
  loadConfig,
  type ParseConfigOptions,
  parseConfig,
} from './config/load.js';
export {
  type AnyPart,
  type ConfigPart,
  type CoreSettings,
  type PartContext,
  type PartInput,
  type PartResolver,
  registerConfigPart,
  type WithHoles,
} from './config/parts.js';
export type { NameKind, Path as ProblemPath, Problems } from './config/problems.js';
export { TIER_SPECS, type TierBucket, type TierSpec } from './config/tiers.js';
// Types that the signatures above name, importable where the functions are
// (test/packaging/public-types.test.ts walks the signatures).
export type {
  ExpectedSpendConfig,
  PaceConfig,
  ReconcileConfig,
  StoreDownConfig,
  WindowConfig,
} from './config/types.js';
export {
  type BucketConfig,
  type BudgetConfig,
  type Config,
  type CredentialConfig,
  type FailMode,
  type FailPolicy,
  type PacingConfig,
  type PacingMode,
  type StoreConfig,
  type StoreKind,
  TIERS,
  type Tier,
} from './config/types.js';
export type { QuotaGuardErrorOptions, UnsettledSpend } from './errors.js';
// The errors
export {
  type ApplicationErrorCodes,
  ConfigError,
  CostExceedsLimitError,
  ERROR_CODES,
  type ErrorCode,
  ExitCode,
  exitCodeFor,
  InvalidArgumentError,
  isQuotaGuardError,
  QuotaGuardError,
  registerErrorCodes,
  StoreUnavailableError,
} from './errors.js';
// The guard
export { createGuard, type Guard, type GuardOptions } from './guard/guard.js';
export {
  type AppendResult,
  type JournalBody,
  type JournalEntry,
  JournalFile,
  type JournalFileOptions,
  type JournalOp,
} from './guard/journal.js';
export type { ReplayResult } from './guard/late.js';
export type {
  BackfillPacer,
  DayOf,
  DaySchedule,
  PacingLine,
  ScheduledDay,
  ScheduledNeed,
  ScheduledSpend,
  UpstreamDay,
} from './guard/pacing.js';
export type { CallOutcome, ReportResult } from './guard/report.js';
export type { SettleResult } from './guard/settle.js';
export type { BackfillStatus } from './guard/status.js';
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
  Attempt,
  CallOptions,
  CallResult,
  GuardEvent,
  GuardLogger,
  GuardStats,
  LateRecord,
  SpendArgs,
  SpendOutcome,
  SpendReason,
  Stop,
  StopReason,
} from './guard/types.js';
// The run history
export { openRunHistory } from './history/history.js';
export type {
  HistoryQuery,
  JobOutcome,
  RecordedRun,
  RunHistory,
  RunOnce,
  RunSummary,
  RunTotal,
} from './history/types.js';
export type { FetchGuard } from './http/fetch.js';
// Any HTTP call through the guard
export {
  type Answer,
  type Classifier,
  type FetchInput,
  type GuardedFetchOptions,
  type GuardInterceptor,
  type GuardInterceptorOptions,
  GuardStoppedError,
  googleClassifier,
  guardedFetch,
  guardInterceptor,
  type Verdict,
} from './http/index.js';
export type { ClockStep } from './ledger/clock.js';
// The ledger
export { CrossSlotError, WindowMismatchError } from './ledger/errors.js';
export { openLedger } from './ledger/index.js';
export type {
  AllowedDecision,
  Budget,
  Decision,
  DeniedDecision,
  EntryBudget,
  LateSummary,
  Ledger,
  LedgerKind,
  MinuteUnits,
  OpenLedgerOptions,
  PeekRequest,
  PerMinuteRequest,
  RecordRequest,
  RecordResult,
  Settlement,
  Snapshot,
  SpendEntry,
  SpendRequest,
  VoidRequest,
  VoidResult,
} from './ledger/types.js';
export type { Logger } from './logger.js';
export type { Reached, UpstreamErrorOptions, UpstreamQuota } from './outcome/errors.js';
// The outcome of an upstream call
export { UpstreamError } from './outcome/errors.js';
export type { RetryInfo } from './outcome/retry.js';
export { type RetryOptions, type RetryPolicy, withRetries } from './outcome/retry.js';
export type { BucketSpec, UpstreamQuotaNames } from './profiles/profile.js';
// Quota profiles, as data
export type { MethodSpec, ProfileData, QuotaProfile } from './profiles/profiles.js';
// One handle on everything a config names
export {
  type OpenQuotaGuardOptions,
  openQuotaGuard,
  type QuotaGuard,
  type RunHandle,
  type RunOptions,
  type RunOutcome,
} from './quota-guard.js';
export type { JobResult } from './runs/types.js';
