import type { FailMode, FailPolicy, Tier } from '../config/types.js';
import type { ExitCode } from '../errors.js';
import type { Decision, UnsettledSpend } from '../ledger/types.js';
import type { Logger } from '../logger.js';
import type { UpstreamError } from '../outcome/errors.js';
import type { JournalOp } from './journal.js';
import type { SettleResult } from './settle.js';

/** What to spend: a method (its bucket and cost come from the credential's profile), or a bare bucket. */
export interface SpendArgs {
  credential: string;
  /** An API method, e.g. `videos.list`. Either this or `bucket`. */
  method?: string;
  /** A bucket to spend directly (default: the credential's shared bucket when no method is given). */
  bucket?: string;
  /** Units to spend (default: the method's cost, or 1 for a bare bucket). */
  cost?: number;
  /** Priority tier (default `scheduled`). */
  tier?: Tier;
  /** Who spent it, e.g. `trending:US:videos.list` (shows in `status` by region and method). */
  tag?: string;
  /**
   * What to do when the ledger store is down; overrides the config for this call site. `caller`:
   * decide nothing, answer `store-down` for the caller to apply its own fail mode (the decision
   * API); a spend whose answer never came is kept if the store applied it, as with `open`.
   */
  failMode?: FailPolicy | 'caller';
  /** The call site's name for `storeDown.sites` (default: the tag's first `:` segment). */
  site?: string;
  /**
   * An entry id chosen by the caller (1–64 of `A-Z a-z 0-9 _ . -`): the spend happens once. Sent
   * again with the same request it is answered with its first decision (`replayed`); with another
   * request it is `QG_ENTRY_CONFLICT` (docs/ledger.md).
   */
  entry?: string;
  /** With `entry`: only answer its remembered decision, never spend (`QG_ENTRY_UNKNOWN` if none). */
  recallOnly?: boolean;
}

export type SpendReason = 'allowed' | 'fail-open' | 'budget' | 'blocked' | 'store-down';

/** The guard's decision: a value whether allowed or not. */
export interface SpendOutcome {
  allowed: boolean;
  /** `allowed`, `fail-open` (store down, let through unrecorded), or why it was denied. */
  reason: SpendReason;
  credential: string;
  bucket: string;
  method?: string;
  tier: Tier;
  cost: number;
  tag: string;
  /** The tier's ceiling on the bucket. */
  ceiling: number;
  /** 0 when allowed; else ms until the spend can fit (or the block lifts). */
  retryAfterMs: number;
  /** Smallest units left over the spend's budgets after this decision (unknown when the store is down). */
  remaining?: number;
  /** Name of the budget that denied: the bucket id, `<bucket> pace` or `budget <id>`. */
  limitedBy?: string;
  /** Its ledger key. */
  limitedByKey?: string;
  /** Epoch ms the block on the bucket lifts (when denied because blocked). */
  blockedUntil?: number;
  /** The fail mode applied (when the store was down). */
  failMode?: FailMode;
  /** The ledger's decision (for refunds); absent when the store was down. */
  decision?: Decision;
  /**
   * Set when the store was down because the spend's answer never came: the store may still apply
   * it. The guard settles it in the background once the store answers (see `Guard.settlePending`).
   */
  unsettled?: UnsettledSpend;
  /** The guard's clock when decided (epoch ms). */
  at: number;
  /** The caller's entry id (`SpendArgs.entry`). */
  entry?: string;
  /** The entry's remembered first decision, answered again (nothing was charged this time). */
  replayed?: true;
  /**
   * Fail-open, or an answer that never came: the journal entry id the spend is written down under
   * (src/guard/journal.ts); the guard records it in the ledger once the store answers.
   */
  journal?: string;
}

export const STOP_REASONS = [
  'budget',
  'blocked',
  'store-down',
  'upstream-quota',
  'rate-limited',
  'upstream-busy',
  'aborted',
] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/**
 * A job should stop now rather than wait: says what was left, why, and when it can resume.
 * `exitCode` is what a job process ends with (75: try later; 69: the store is unavailable).
 */
export interface Stop {
  ok: false;
  reason: StopReason;
  credential: string;
  bucket: string;
  method?: string;
  tier: Tier;
  cost: number;
  /** Units left under the tier's ceiling when it stopped (unknown when the store is down). */
  remaining?: number;
  /** ms from the stop until a retry can succeed (0 when unknown). */
  retryAfterMs: number;
  /** Epoch ms from which a retry can succeed. */
  resumeAt: number;
  limitedBy?: string;
  blockedUntil?: number;
  blockedReason?: string;
  /** The upstream error behind an `upstream-quota`, `rate-limited` or `upstream-busy` stop. */
  error?: UpstreamError;
  exitCode: typeof ExitCode.UNAVAILABLE | typeof ExitCode.TEMPFAIL;
  /** One log line: what was left, why, and when it can resume. */
  message: string;
}

export interface Acquired {
  ok: true;
  spend: SpendOutcome;
  /** Total ms slept waiting for the budget. */
  waitedMs: number;
}

export interface AcquireOptions {
  /** Longest single Retry-After to sleep through (default: the config's maxSleep). */
  maxSleepMs?: number;
  /** Most spend attempts before stopping (default 20). */
  maxAttempts?: number;
  /** Abort a sleep (graceful shutdown): the result is a Stop with reason `aborted`. */
  signal?: AbortSignal;
}

export interface Attempt {
  /** 1 for the first attempt. */
  n: number;
  spend: SpendOutcome;
  signal?: AbortSignal;
}

export interface CallOptions extends AcquireOptions {
  /** Upstream attempts, each spending the budget again (default 3). */
  attempts?: number;
}

export type CallResult<T> = { ok: true; value: T; attempts: number; spend: SpendOutcome } | Stop;

export type GuardEvent =
  | { type: 'spend'; outcome: SpendOutcome }
  /** `unsettled`: the spend may still have been recorded; a `settled` event says so later. */
  | { type: 'fail-open'; outcome: SpendOutcome; error: unknown; unsettled: boolean }
  /** The store was down and the caller decides (`failMode: 'caller'`): no spend was allowed here. */
  | { type: 'store-down'; outcome: SpendOutcome; error: unknown }
  | { type: 'fail-closed'; outcome: SpendOutcome; error: unknown }
  | { type: 'sleep'; ms: number; outcome: SpendOutcome }
  | { type: 'stop'; stop: Stop }
  | { type: 'refund'; outcome: SpendOutcome }
  | { type: 'block'; credential: string; bucket: string; key: string; until: number; reason: string }
  | { type: 'upstream-error'; error: UpstreamError; outcome: SpendOutcome }
  /**
   * What became of an unsettled spend: `recorded` / `refunded` / `absent`, or `abandoned` (the store
   * did not answer before the entry left its window). `unrecorded`: a fail-open spend that the
   * ledger truly does not hold (counted as fail-open only now).
   */
  | { type: 'settled'; outcome: SpendOutcome; result: SettleResult; unrecorded: boolean }
  /** A spend written to the journal (`op`: `record` for fail-open, `unknown` for a lost answer). */
  | { type: 'journalled'; outcome: SpendOutcome; op: JournalOp; id: string }
  /**
   * A spend written into the ledger after the fact (`Guard.recordLate`): from this guard's journal
   * or from a client's (`POST /v1/record`). `recorded`: written now, at `at`; `replayed`: it was
   * there already; `dropped`: older than every window, not written.
   */
  | { type: 'recorded-late'; late: LateRecord };

/** What `Guard.recordLate` did with one spend. */
export interface LateRecord {
  credential: string;
  bucket: string;
  cost: number;
  tag: string;
  /** When it was spent (for `recorded`/`replayed`: the time the ledger holds it at). */
  at: number;
  outcome: 'recorded' | 'replayed' | 'dropped';
  /** Where it came from: this guard's journal, or a client's (the decision API). */
  source: 'journal' | 'client';
}

export interface GuardStats {
  allowed: number;
  denied: number;
  /** Spends let through that the ledger does not hold (fail-open, settled as not recorded). */
  failOpen: number;
  failClosed: number;
  refunds: number;
  blocks: number;
  stops: number;
  /** Spends whose answer never came, not settled yet (not in `failOpen` until they are). */
  unsettled: number;
  /** Spends written to the journal (fail-open, or an answer that never came). */
  journalled: number;
  /** Spends the journal could not take (full, locked, unwritable): logged, and in `failOpen`. */
  unjournalled: number;
  /** Entries written into the ledger after the fact (`recordLate`: the journal's and the clients'), and their units. */
  recordedLate: number;
  recordedLateUnits: number;
  /** Late entries older than every window: not written. */
  droppedLate: number;
}

/** The logger the guard writes to (see src/logger.ts). */
export type GuardLogger = Logger;
