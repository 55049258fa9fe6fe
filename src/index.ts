export * from './cache/index.js';
export * from './config/index.js';
export * from './errors.js';
export * from './guard/index.js';
export * from './jobs/index.js';
export { CrossSlotError, LedgerCode, openLedger, WindowMismatchError } from './ledger/index.js';
export type * from './ledger/types.js';
export * from './metrics/index.js';
export {
  type BucketPlan,
  type CheckKind,
  jobsCredential,
  type PlanCheck,
  type PlanLine,
  type PlanOptions,
  type PlanReport,
  planBudget,
  type SourceKind,
} from './plan/plan.js';
export { cronRuns } from './plan/runs.js';
export type { BucketSpec, MethodSpec, ProfileId, QuotaProfile } from './quota/profiles.js';
export { getProfile, methodSpec, PROFILE_IDS, PROFILES } from './quota/profiles.js';
export * from './scheduler/index.js';
export * from './simulator/index.js';
export * from './upstream/index.js';
