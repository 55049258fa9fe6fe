/**
 * What a store implements. Policy that is the same everywhere (input checks, ids, the cost-over-limit
 * error) lives in `ledger.ts` above the backends; a backend receives validated input only.
 */
import { randomBytes } from 'node:crypto';
import type {
  Budget,
  Decision,
  EntryBudget,
  LateSummary,
  LedgerKind,
  MinuteUnits,
  RecordResult,
  Settlement,
  Snapshot,
  SpendEntry,
  VoidResult,
} from './types.js';

export interface BackendSpend {
  budgets: Budget[];
  cost: number;
  tag: string;
  /** Unique entry id, also the log member in Redis: `<nonce>:<cost>:<tag>`. */
  id: string;
  /** A caller's entry (its id is the nonce of `id`): remembered with the decision. */
  entry?: SpendEntry;
}

/** A checked `record`: `id` is the entry's log member, `at` the caller's time (not yet clamped). */
export interface BackendRecord {
  budgets: EntryBudget[];
  cost: number;
  tag: string;
  id: string;
  entry: SpendEntry;
  at: number;
  replace: boolean;
}

export interface BackendVoid {
  entry: Pick<SpendEntry, 'key' | 'id'>;
  budgets: EntryBudget[];
}

export interface LedgerBackend {
  readonly kind: LedgerKind;
  spend(req: BackendSpend): Promise<Decision>;
  /** Remove entry `id` from each key's log (a no-op where it is gone already); true when it removed any. */
  refund(keys: string[], id: string): Promise<boolean>;
  /** See `Ledger.settle`; a store that never leaves a spend unsettled need not implement it. */
  settle?(keys: string[], id: string, refund: boolean): Promise<Settlement>;
  /** `totalsOnly`: see `PeekRequest.totalsOnly` (a store may give the whole snapshot anyway). */
  peek(key: string, windowMs: number, totalsOnly?: boolean): Promise<Snapshot>;
  block(key: string, untilEpochMs: number, reason: string): Promise<void>;
  unblock(key: string): Promise<void>;
  freesUpIn(key: string, windowMs: number, limit: number, amounts: number[]): Promise<number[]>;
  recallEntry(key: string): Promise<string | undefined>;
  record(req: BackendRecord): Promise<RecordResult>;
  void(req: BackendVoid): Promise<VoidResult>;
  /** Minutes of `grid.minuteMs` counted from `grid.originMs`. */
  perMinute(
    key: string,
    windowMs: number,
    fromMs: number,
    toMs: number,
    grid: MinuteGrid,
  ): Promise<MinuteUnits[]>;
  late(key: string, windowMs: number): Promise<LateSummary>;
  ping(): Promise<void>;
  /** See `Ledger.waitingFor`. */
  waitingFor?(): string | undefined;
  close(): Promise<void>;
}

/** Keys expire this long after the window of their newest entry ends. */
export const EXPIRY_SLACK_MS = 1000;

/** Entries whose tag starts with this are spend the ledger did not see (reconcile's): `perMinute` splits them out. */
export const OUTSIDE_TAG_PREFIX = 'outside:';

/** Entry ids: a random per-process prefix and a counter, so ids are unique across processes. */
export function idFactory(): (cost: number, tag: string) => string {
  const prefix = randomBytes(6).toString('base64url');
  let n = 0;
  return (cost, tag) => `${prefix}${(n++).toString(36)}:${cost}:${tag}`;
}

/**
 * From entries oldest first (time `at` in the clock's unit, cost), the time at which the units in
 * the window drop to `target` or below: the expiry (`at + window`) of the entry whose removal gets
 * there. Returns `now` when already there. Used by the SQLite twin; the Lua scripts implement the
 * same walk (the tests' model checks both against a search by definition).
 */
export function timeUntilUsedAtMost(
  entries: Iterable<{ at: number; cost: number }>,
  used: number,
  target: number,
  window: number,
  now: number,
): number {
  if (used <= target) return now;
  let left = used;
  let last = now;
  for (const e of entries) {
    left -= e.cost;
    last = e.at + window;
    if (left <= target) return last;
  }
  return last;
}

/** How `perMinute` cuts time into minutes: the clock's (origin 0, 60,000 ms) or a compressed day's. */
export interface MinuteGrid {
  minuteMs: number;
  originMs: number;
}
