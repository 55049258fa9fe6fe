export { entryKey } from './entries.js';
export { createGuard, Guard, type GuardOptions, stopMessage } from './guard.js';
export {
  type BucketWindow,
  bucketKey,
  bucketWindow,
  budgetKey,
  credentialKeyPrefix,
  dayBucketKey,
  paceKey,
  type SpendBudget,
  spendBudgets,
} from './keys.js';
export {
  BackfillPacer,
  backfillDayKey,
  calendarDay,
  type DayOf,
  PACE_HOLD_BACK,
  type PacingLine,
  pacingLineAt,
  type UpstreamDay,
} from './pacing.js';
export type { CallOutcome, ReportResult } from './report.js';
export {
  type BackfillStatus,
  type BucketStatus,
  type BudgetStatus,
  type CredentialStatus,
  FREES_UP_AMOUNTS,
  quotaStatus,
  type StatusOptions,
  type StatusReport,
} from './status.js';
export { parseTag, siteOf, spendTag } from './tags.js';
export type * from './types.js';
