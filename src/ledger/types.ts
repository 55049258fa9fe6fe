/**
 * The budget ledger's public contract. Every backend (Redis, Redis Cluster, SQLite) implements
 * `Ledger` with the same semantics; test/contract runs one suite against each.
 */

import type { StoreKind } from '../config/store-url.js';
import type { UnsettledSpend } from '../errors.js';
import type { RedisConnectOptions } from '../redis/connection.js';
import type { ClockStep } from './clock.js';

/** One budget a spend must fit under. Several budgets in one spend are all-or-nothing. */
export interface Budget {
  /** Ledger key, e.g. `yt:{default}:units`. In Redis Cluster all keys of one spend must share a `{hash tag}`. */
  key: string;
  /** The caller's ceiling in units over the window (priority tiers pass different ceilings on one key). */
  limit: number;
  /** Sliding window length in ms. Fixed per key: a different window for an existing key is an error. */
  windowMs: number;
}

export interface SpendRequest {
  budgets: Budget[];
  /** Integer >= 1. Stored as one entry, whatever its size. */
  cost: number;
  /** Who spent it (shows up in `peek().byTag`). At most 200 characters. */
  tag?: string;
  /** An entry id chosen by the caller: the spend happens at most once (see `SpendEntry`). */
  entry?: SpendEntry;
}

/**
 * A spend that may be sent again (a retry over an unreliable network). The store remembers the
 * entry with its first decision for the longest window of its budgets: the same id with the same
 * request is answered with that decision (`replayed`) and charged once; the same id with another
 * request is `QG_ENTRY_CONFLICT`. The entry's log member is `<id>:<cost>:<tag>`.
 */
export interface SpendEntry {
  /** Where the entry is remembered: a ledger key (in a Cluster, with the budgets' `{hash tag}`). */
  key: string;
  /** 1 to 64 characters of `A-Z a-z 0-9 _ . -`. */
  id: string;
  /** The request as the caller words it (at most 1,000 characters). */
  request: string;
  /** Only answer a remembered decision, never spend: an entry not remembered is `QG_ENTRY_UNKNOWN`. */
  recallOnly?: boolean;
}

/**
 * The outcome of a spend: a value, never an exception, when the budget says no. Narrow on
 * `allowed`: an allowed decision carries the entry `id` (pass the decision to `refund` to take it
 * back); a denied one says which budget denied and, when blocked, until when.
 */
export type Decision = AllowedDecision | DeniedDecision;

interface DecisionBase {
  /** The smallest `limit - used` over the budgets, after this decision. */
  remaining: number;
  /** Keys of the spend's budgets (needed by `refund`). */
  keys: string[];
  /** Cost of the spend. */
  cost: number;
  /** The store's clock when the decision was taken (epoch ms). */
  at: number;
  /** The remembered first decision of a spend's entry (`SpendRequest.entry`), answered again. */
  replayed?: true;
}

export interface AllowedDecision extends DecisionBase {
  allowed: true;
  retryAfterMs: 0;
  /** The entry the spend stored; `refund` takes it back. */
  id: string;
}

export interface DeniedDecision extends DecisionBase {
  allowed: false;
  /** ms until enough entries expire for this cost to fit on every budget (or the block lifts). */
  retryAfterMs: number;
  /** Key of a budget that denied (or is blocked). */
  limitedBy: string;
  /** Set when denied because the key is blocked (see `block`). */
  blockedUntil?: number;
  /**
   * Set (with `replayed`) when the entry was voided (`Ledger.void`): its caller said it was not
   * used, so it never spends; `retryAfterMs` is 0 and waiting does not change the answer.
   */
  voided?: true;
}

export type { UnsettledSpend };

/**
 * What `settle` found: `recorded` (the entry is in the ledger and stays), `refunded` (it was, and
 * has been taken out), `absent` (it never landed, or is gone already).
 */
export type Settlement = 'recorded' | 'refunded' | 'absent';

/** A budget as `record` and `void` take it: the key and its window (a spend's `limit` is ignored). */
export interface EntryBudget {
  key: string;
  windowMs: number;
  limit?: number;
}

/**
 * A spend that already happened, written down late (a journal replayed once the store answers
 * again): never denied, recorded at the time it was spent, counted once per entry id.
 */
export interface RecordRequest {
  /** The budgets the spend would have taken; limits and blocks are not checked. */
  budgets: EntryBudget[];
  /** Integer >= 1 (>= 0 with `replace`: 0 takes the entry out). */
  cost: number;
  tag?: string;
  /** The spend's entry: its id is what makes a replay count once. `recallOnly` is not taken. */
  entry: SpendEntry;
  /**
   * When it was spent (epoch ms, the caller's clock). Written at this time clamped to
   * `[now - windowMs, now]` of each budget (the store's clock): a budget whose window it has left
   * already is not written; a time ahead of the store's is written as now.
   */
  at: number;
  /**
   * The entry's cost becomes `cost` whatever it was (reconcile's outside spend): any entry of this
   * id is taken out of the logs and this one written. Idempotent; atomic.
   */
  replace?: boolean;
}

/**
 * What `record` did: `recorded` (written at `at`), `replayed` (the entry id was remembered: the
 * original spend landed, or an earlier record did; nothing written, `at` is when it was), `dropped`
 * (older than every budget's window: nothing written, nothing remembered).
 */
export interface RecordResult {
  outcome: 'recorded' | 'replayed' | 'dropped';
  /** The time written (epoch ms on the store's clock); for `dropped`, the time given. */
  at: number;
  /** The budgets' keys. */
  keys: string[];
  cost: number;
  /** The entry's log member (`<id>:<cost>:<tag>`), as an allowed decision's `id`. */
  id: string;
}

/** An entry whose answer was lost and that was not used: it must not count. */
export interface VoidRequest {
  /** The entry (`key`, `id`; a `request` is ignored). */
  entry: Pick<SpendEntry, 'key' | 'id'>;
  /** The budgets the entry's spend would take: where it is looked for, and how long it is remembered. */
  budgets: EntryBudget[];
}

/**
 * What `void` did: `refunded` (the entry was remembered as allowed and was in the logs: taken out),
 * `voided` (not remembered: remembered now as void, so that the spend arriving later is denied and
 * charges nothing), `none` (remembered as denied, void or refunded already, or allowed and no longer
 * in any log: nothing changed).
 */
export interface VoidResult {
  outcome: 'refunded' | 'voided' | 'none';
  /** Units taken out of each log (`refunded` only; 0 otherwise). */
  cost: number;
}

/** Units of one key per minute, for comparing with an upstream's own count (reconcile). */
export interface PerMinuteRequest {
  key: string;
  windowMs: number;
  /** Epoch ms, inclusive; entries that have left the window are not counted. */
  fromMs: number;
  /** Epoch ms, exclusive. */
  toMs: number;
  /**
   * The length of a minute in ms, for a compressed day (a drill's): minutes are then counted from
   * `fromMs`. Default 60,000, minutes of the clock.
   */
  minuteMs?: number;
}

/** The units of one minute: `own` (every entry not tagged `outside:…`) and `outside`. */
export interface MinuteUnits {
  /** Start of the minute (epoch ms, a multiple of 60,000; with `minuteMs`, fromMs + a multiple of it). */
  minute: number;
  own: number;
  outside: number;
}

export interface PeekRequest {
  key: string;
  windowMs: number;
  /**
   * Only `used`, `now` and the block are wanted (`calls` is 0, `byTag` empty, no oldest or newest):
   * on Redis a read of the running total instead of a walk of every entry in the window, for a
   * caller that reads before each spend (the backfill's pacing line).
   */
  totalsOnly?: boolean;
}

export interface Snapshot {
  /** Units spent on the key within the window. */
  used: number;
  /** Entries (calls) within the window. */
  calls: number;
  /** Epoch ms of the oldest / newest entry in the window (undefined when empty). */
  oldestAt?: number;
  newestAt?: number;
  /** Units by tag within the window. */
  byTag: Record<string, number>;
  /** Epoch ms until which every spend on the key is denied. */
  blockedUntil?: number;
  /** Why the key was blocked. */
  blockedReason?: string;
  /** The store's clock when the snapshot was taken (epoch ms). */
  now: number;
}

/** The entries of a budget that were written late (`record`, not a replace) and are still in its window. */
export interface LateSummary {
  units: number;
  entries: number;
  /** Epoch ms of the oldest (undefined when there is none). */
  oldestAt?: number;
}

export interface Ledger {
  /** Which backend this is: 'redis' | 'redis-cluster' | 'sqlite'. */
  readonly kind: LedgerKind;
  spend(req: SpendRequest): Promise<Decision>;
  /**
   * Take back an allowed spend. Idempotent; a denied decision is a no-op. True when it took
   * anything back (false: refunded before, pruned with its window, or denied).
   */
  refund(decision: Decision): Promise<boolean>;
  peek(req: PeekRequest): Promise<Snapshot>;
  /** Every spend on `key` denies until `untilEpochMs`. */
  block(key: string, untilEpochMs: number, reason?: string): Promise<void>;
  unblock(key: string): Promise<void>;
  /**
   * When the units currently in the window free up: for each requested amount, ms from now until
   * that many units (beyond what is free now under `limit`) become available. Used by `status`.
   */
  freesUpIn(req: PeekRequest & { limit: number; amounts: number[] }): Promise<number[]>;
  /**
   * What became of a spend whose answer never came (see UnsettledSpend), asked once the store
   * answers again; with `refund` an entry that landed is taken out. Idempotent. Rejects with
   * StoreUnavailableError while the store is still away. Only Redis leaves spends unsettled.
   */
  settle?(spend: UnsettledSpend, refund: boolean): Promise<Settlement>;
  /** The request a spend's entry was remembered with (`SpendEntry.key`), or undefined. */
  recallEntry(key: string): Promise<string | undefined>;
  /**
   * Write down a spend that already happened (see RecordRequest): never denied, at its own time
   * clamped to each window, once per entry id. docs/ledger.md, "Late entries".
   */
  record(req: RecordRequest): Promise<RecordResult>;
  /** Make sure an unused entry never counts (see VoidResult). Atomic; idempotent. */
  void(req: VoidRequest): Promise<VoidResult>;
  /**
   * The entries written late by `record` (a journal's, not reconcile's `replace`) still in the
   * window of `key` (the first budget of each record is counted). Read-only.
   */
  late(req: PeekRequest): Promise<LateSummary>;
  /** Units per minute over `[fromMs, toMs)`, own and outside, minutes with no units left out. Read-only. */
  perMinute(req: PerMinuteRequest): Promise<MinuteUnits[]>;
  /** Health probe: resolves when the store answers. */
  ping(): Promise<void>;
  /**
   * What the store's writes are waiting for at this moment, if anything (SQLite: another process
   * holds the file's write lock); a health check that times out on a write says it.
   */
  waitingFor?(): string | undefined;
  close(): Promise<void>;
}

/** The store a ledger keeps its entries in: the kind of its URL. */
export type LedgerKind = StoreKind;

/** The Redis options (`commandTimeoutMs`, `connectTimeoutMs`, `allowUnreachable`) are src/redis/'s. */
export interface OpenLedgerOptions extends RedisConnectOptions {
  /**
   * Redis (one server or Sentinel): an allowed spend counts only once this many replicas hold it
   * (Redis WAIT). When they do not within `waitTimeoutMs`, the spend fails with
   * StoreUnavailableError (carrying `unsettled`), so the call site's fail-open/closed applies.
   * Default 0: no wait.
   */
  waitReplicas?: number;
  /** How long a spend waits for `waitReplicas` (default 100 ms). */
  waitTimeoutMs?: number;
  /** Prefix prepended to every key the ledger writes (tests use a unique one). */
  keyPrefix?: string;
  /** SQLite busy timeout in ms (default 5000). */
  busyTimeoutMs?: number;
  /**
   * SQLite: create the file when it does not exist (default true). False for commands that only
   * read: a missing file is then `QG_STORE_NOT_FOUND` and nothing is created. False without
   * `writes` means the command only reads, on either store: nothing is written at open (no SQLite
   * migration, the connection opened read-only; no Redis format key).
   */
  create?: boolean;
  /**
   * SQLite only, with `create: false`: the command changes what the ledger holds but has nothing to
   * do on a new one. A missing file is `QG_STORE_NOT_FOUND` saying so, and a file this process
   * cannot write is not opened read-only. Default false: the command only reads.
   */
  writes?: boolean;
  /**
   * SQLite only: called once for each step of the host's wall clock the ledger detects (and
   * corrects by moving its stored times; docs/ledger.md, "Clock steps"). The CLI logs it and counts it.
   */
  onClockStep?: (step: ClockStep) => void;
  /** SQLite only, for tests: the monotonic clock (ms) steps are measured against, and its boot. */
  monotonic?: () => number;
  bootId?: string;
  /** SQLite only: the clock (epoch ms), for tests. Redis always uses the server's clock. */
  now?: () => number;
  /**
   * SQLite only: `PRAGMA synchronous`. `FULL` (the default) syncs the WAL at every commit, so an
   * allowed spend is on the disk before it is answered, and a commit the disk refuses is
   * `QG_STORE_UNAVAILABLE`; `NORMAL` answers before the disk has it (faster; the last spends before
   * a power cut, or before the disk failed, can be lost). docs/sqlite.md, "Durability".
   */
  synchronous?: 'FULL' | 'NORMAL';
}
