/**
 * The embedded twin of the Redis ledger: the same semantics in one SQLite file (or in memory).
 *
 * - Every write runs in a `BEGIN IMMEDIATE` transaction, which takes the file's write lock up
 *   front: two processes can never both read a total and then both write on top of it.
 * - WAL lets readers (peek, status) run while a writer holds the lock; a busy timeout makes a writer
 *   wait for the lock instead of failing at once. A lock not obtained in time is StoreUnavailable.
 * - The clock is the host's (`Date.now`, or the `now` option in tests): one host, one clock. A step
 *   of it (NTP correcting a wrong clock) is detected against the monotonic clock and every stored
 *   time moved by the step, so windows stay measured in real time (clock.ts), but for the times a
 *   caller gave `record`.
 * - Same data model as Redis: one row per call with its cost, a running total per key, expired rows
 *   pruned (their cost subtracted) only when the oldest one has left the window.
 * The tables and statements are sqlite-schema.ts's; docs/sqlite.md has the pragmas and why.
 */
import type Database from 'better-sqlite3';
import { closeStore, openStore, type StoreLabel, storeFailure } from '../sqlite/index.js';
import {
  type BackendRecord,
  type BackendSpend,
  type BackendVoid,
  EXPIRY_SLACK_MS,
  type LedgerBackend,
  type MinuteGrid,
  timeUntilUsedAtMost,
} from './backend.js';
import { BOOT_ID, type ClockMark, type ClockStep, clockStep, countClockStep, monotonicMs } from './clock.js';
import { LedgerCode, ledgerFailure } from './codes.js';
import {
  decisionOf,
  parseRemembered,
  rememberDecision,
  remembered,
  rememberRecord,
  rememberVoid,
  VOID_MARK,
} from './remembered.js';
import { Commits } from './sqlite-commits.js';
import {
  type BudgetRow,
  HAS_TABLE,
  LATE_SCHEMA,
  type LateStatements,
  LEDGER_FORMAT,
  type LedgerStatements,
  lateStatements,
  ledgerStatements,
  RECORDED_SCHEMA,
  type RecordedStatements,
  type RememberedEntry,
  recordedStatements,
} from './sqlite-schema.js';
import type { Decision, LateSummary, MinuteUnits, RecordResult, Snapshot, VoidResult } from './types.js';

export { ENTRY_SQL, LEDGER_FORMAT, type RememberedEntry } from './sqlite-schema.js';

/** How long a transaction waits for another process's write lock (`busyTimeoutMs`). */
const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** Idle keys (past their expiry) are deleted at most this often. */
const SWEEP_EVERY_MS = 60_000;

export interface SqliteLedgerOptions {
  /** File path, or ':memory:'. */
  path: string;
  busyTimeoutMs?: number;
  keyPrefix?: string;
  /** The clock (epoch ms). Tests inject one; defaults to Date.now. */
  now?: () => number;
  /**
   * The monotonic clock (ms) steps of `now` are measured against (clock.ts). Tests inject one;
   * when only `now` is injected, no step is looked for.
   */
  monotonic?: () => number;
  /** The boot the monotonic clock belongs to (clock.ts). Tests inject one. */
  bootId?: string;
  /** Called once for each step of the wall clock the ledger detects and corrects (clock.ts). */
  onClockStep?: (step: ClockStep) => void;
  /** Create the file when missing (default true); false for commands that only read. */
  create?: boolean;
  /** With `create: false`: the command changes an existing ledger (see OpenStoreOptions.writes). */
  writes?: boolean;
  /** `PRAGMA synchronous` (default FULL: an allowed spend is on the disk; docs/sqlite.md, "Durability"). */
  synchronous?: 'FULL' | 'NORMAL';
}

export function openSqliteBackend(opts: SqliteLedgerOptions): LedgerBackend {
  const { db, label } = openStore(LEDGER_FORMAT, {
    path: opts.path,
    ...(opts.busyTimeoutMs !== undefined ? { busyTimeoutMs: opts.busyTimeoutMs } : {}),
    ...(opts.create !== undefined ? { create: opts.create } : {}),
    ...(opts.writes !== undefined ? { writes: opts.writes } : {}),
    ...(opts.synchronous !== undefined ? { synchronous: opts.synchronous } : {}),
  });
  try {
    return new SqliteBackend(
      db,
      label,
      opts.keyPrefix ?? '',
      {
        wall: opts.now ?? Date.now,
        // An injected wall clock without a monotonic one is the whole truth: no step is looked for.
        ...(opts.monotonic !== undefined || opts.now === undefined
          ? { mono: opts.monotonic ?? monotonicMs }
          : {}),
        boot: opts.bootId ?? BOOT_ID,
        ...(opts.onClockStep ? { onStep: opts.onClockStep } : {}),
      },
      opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
    );
  } catch (e) {
    closeStore(db, label);
    throw storeFailure(e, label, 'opening');
  }
}

interface Clocks {
  wall: () => number;
  /** Absent: the wall clock is taken as it is (an injected test clock). */
  mono?: () => number;
  boot: string;
  onStep?: (step: ClockStep) => void;
}

/** The longest window of a call's budgets: how long its entry is remembered (plus the slack). */
function longestWindow(budgets: ReadonlyArray<{ windowMs: number }>): number {
  return Math.max(...budgets.map((b) => b.windowMs));
}

class SqliteBackend implements LedgerBackend {
  readonly kind = 'sqlite' as const;
  readonly #db: Database.Database;
  readonly #label: StoreLabel;
  readonly #prefix: string;
  readonly #clock: Clocks;
  readonly #commits: Commits;
  readonly #sql: LedgerStatements;
  /** The statements on `qg_recorded`, once this connection has seen the table. */
  #recorded: RecordedStatements | undefined;
  /** The statements on `qg_late`, once this connection has seen the table. */
  #late: LateStatements | undefined;
  /** A step found in the transaction that is running, reported once it has committed. */
  #step: ClockStep | undefined;
  #lastSweep = Number.NEGATIVE_INFINITY;

  constructor(
    db: Database.Database,
    label: StoreLabel,
    prefix: string,
    clock: Clocks,
    busyTimeoutMs: number,
  ) {
    this.#db = db;
    this.#label = label;
    this.#prefix = prefix;
    this.#clock = clock;
    this.#commits = new Commits(db, label, busyTimeoutMs, this.#ended);
    this.#sql = ledgerStatements(db);
  }

  /** Runs fn in a transaction (BEGIN IMMEDIATE for writes, DEFERRED for reads): sqlite-commits.ts. */
  #run<T>(what: string, fn: () => T, write = true): Promise<T> {
    return this.#commits.run(what, fn, write);
  }

  /** After each transaction: a step of the clock it corrected is reported once it has committed. */
  readonly #ended = (committed: boolean): void => {
    const step = this.#step;
    this.#step = undefined;
    if (committed && step) {
      countClockStep();
      this.#clock.onStep?.(step);
    }
  };

  /**
   * The statements on `qg_recorded`, or undefined while no record has created it (`create`: create
   * it now, in the caller's write transaction).
   */
  #recordedSql(create = false): RecordedStatements | undefined {
    if (this.#recorded) return this.#recorded;
    if (create) this.#db.exec(RECORDED_SCHEMA);
    else if (this.#sql.hasRecorded.get() === 0) return undefined;
    this.#recorded = recordedStatements(this.#db);
    return this.#recorded;
  }

  /** The statements on `qg_late`, or undefined while no late record has created it. */
  #lateSql(create = false): LateStatements | undefined {
    if (this.#late) return this.#late;
    if (create) this.#db.exec(LATE_SCHEMA);
    else if (this.#db.prepare<[string], number>(HAS_TABLE).pluck().get('qg_late') === 0) return undefined;
    this.#late = lateStatements(this.#db);
    return this.#late;
  }

  /**
   * The time of a decision, in a transaction (clock.ts). A write that finds the wall clock stepped
   * moves every stored time by the step (but the times callers gave `record`) and records the
   * clocks; a read that finds a step not yet corrected reads in the ledger's time before the step.
   */
  #time(write: boolean): number {
    if (!this.#clock.mono) return this.#clock.wall();
    const now: ClockMark = { wall: this.#clock.wall(), mono: this.#clock.mono(), boot: this.#clock.boot };
    const sql = this.#sql;
    const step = clockStep(sql.getClock.get(), now);
    if (!write) return step ? now.wall - step.stepMs : now.wall;
    if (step) {
      const recorded = this.#recordedSql();
      if (recorded) recorded.shiftOthers.run(step.stepMs);
      else sql.shiftEntries.run(step.stepMs);
      sql.shiftBudgets.run(step.stepMs, step.stepMs, step.stepMs);
      recorded?.cover.run();
      this.#step = step;
    }
    sql.setClock.run(now.wall, now.mono, now.boot);
    return now.wall;
  }

  /** Delete keys whose expiry has passed: idle keys cost nothing. */
  #maybeSweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = now;
    this.#sql.sweepEntries.run(now);
    this.#sql.sweepBudgets.run(now);
    this.#sql.sweepEntryRecords.run(now);
    this.#recordedSql()?.sweep.run();
    this.#lateSql()?.sweep.run();
  }

  /**
   * The key's row, or undefined when it has expired (as a Redis key would have): then its data is
   * gone, window included. In a write transaction the expired rows are deleted on the spot.
   */
  #live(key: string, now: number, write: boolean): BudgetRow | undefined {
    const row = this.#sql.getBudget.get(key);
    if (!row || row.expires_at > now) return row;
    if (write) {
      this.#sql.dropEntries.run(key);
      this.#sql.dropBudget.run(key);
    }
    return undefined;
  }

  #checkWindow(key: string, row: BudgetRow | undefined, windowMs: number, field: string): void {
    if (row && row.window_ms !== null && row.window_ms !== windowMs) {
      throw ledgerFailure({
        code: LedgerCode.WindowMismatch,
        key: key.slice(this.#prefix.length),
        detail: row.window_ms,
        windowMs,
        field,
      });
    }
  }

  /** An entry remembered under `entry.key` (its decision's fields), checked against the request asked. */
  #remembered(
    entry: { key: string; id: string },
    now: number,
    request?: string,
  ): { fields: number[]; seen: RememberedEntry } | undefined {
    const seen = this.#sql.getEntry.get(this.#prefix + entry.key, now);
    if (!seen) return undefined;
    const fields = parseRemembered(seen.remembered);
    // A void of an entry never seen remembers no request: any request of its id is answered by it.
    const voidOfUnknown = fields[6] === VOID_MARK && seen.request === '';
    if (request !== undefined && seen.request !== request && !voidOfUnknown) {
      throw ledgerFailure({ code: LedgerCode.EntryConflict, key: entry.key, entry: entry.id });
    }
    return { fields, seen };
  }

  #remember(entry: { key: string }, remembered: string, request: string, until: number): void {
    this.#sql.putEntry.run(this.#prefix + entry.key, remembered, request, until);
  }

  async spend(req: BackendSpend): Promise<Decision> {
    return this.#run('spend', () => {
      const now = this.#time(true);
      this.#maybeSweep(now);
      const entry = req.entry;
      if (!entry) return this.#decide(req, now);
      const known = this.#remembered(entry, now, entry.request);
      if (known) {
        return decisionOf(
          known.fields,
          { id: req.id, keys: req.budgets.map((b) => b.key), cost: req.cost },
          true,
        );
      }
      if (entry.recallOnly)
        throw ledgerFailure({ code: LedgerCode.EntryUnknown, key: entry.key, entry: entry.id });
      const d = this.#decide(req, now);
      this.#remember(
        entry,
        rememberDecision(d),
        entry.request,
        now + longestWindow(req.budgets) + EXPIRY_SLACK_MS,
      );
      return d;
    });
  }

  async recallEntry(key: string): Promise<string | undefined> {
    return this.#run(
      'recallEntry',
      () => this.#sql.getEntry.get(this.#prefix + key, this.#time(false))?.request,
      false,
    );
  }

  /** The decision of a spend, written when allowed (in the caller's transaction). */
  #decide(req: BackendSpend, now: number): Decision {
    const sql = this.#sql;
    const states = req.budgets.map((b, i) => {
      const key = this.#prefix + b.key;
      const row = this.#live(key, now, true);
      this.#checkWindow(key, row, b.windowMs, `budgets[${i}].windowMs`);
      const cutoff = now - b.windowMs;
      const { total, oldest } = this.#pruned(key, row, cutoff);
      const blockedUntil = row && row.blocked_until > now ? row.blocked_until : 0;
      return { b, key, total, oldest, blockedUntil, cutoff };
    });

    let retryAt = 0;
    let limitedBy: string | undefined;
    let blockedUntil: number | undefined;
    for (const s of states) {
      let at = 0;
      if (s.blockedUntil > 0) at = s.blockedUntil;
      else if (s.total + req.cost > s.b.limit) {
        at = timeUntilUsedAtMost(
          sql.entries.iterate(s.key, s.cutoff),
          s.total,
          s.b.limit - req.cost,
          s.b.windowMs,
          now,
        );
        at = Math.max(at, now + 1);
      }
      if (at > retryAt) {
        retryAt = at;
        limitedBy = s.b.key;
        blockedUntil = s.blockedUntil > 0 ? s.blockedUntil : undefined;
      }
    }
    const keys = req.budgets.map((b) => b.key);
    if (limitedBy !== undefined) {
      const d: Decision = {
        allowed: false,
        retryAfterMs: retryAt - now,
        remaining: Math.min(
          ...states.map((s) => (s.blockedUntil > 0 ? 0 : Math.max(0, s.b.limit - s.total))),
        ),
        limitedBy,
        keys,
        cost: req.cost,
        at: now,
      };
      if (blockedUntil !== undefined) d.blockedUntil = blockedUntil;
      return d;
    }
    for (const s of states) this.#add(s.key, s.b.windowMs, s.total, s.oldest, now, req);
    return {
      allowed: true,
      retryAfterMs: 0,
      remaining: Math.min(...states.map((s) => s.b.limit - s.total - req.cost)),
      id: req.id,
      keys,
      cost: req.cost,
      at: now,
    };
  }

  /**
   * The key's running total and oldest time once the entries at or before `cutoff` are gone. Nothing
   * can have expired while the oldest entry is inside the window: no prune then.
   */
  #pruned(key: string, row: BudgetRow | undefined, cutoff: number): { total: number; oldest: number } {
    let total = row?.total ?? 0;
    let oldest = row?.oldest_at ?? 0;
    if (row && total > 0 && oldest <= cutoff) {
      for (const c of this.#sql.prune.all(key, cutoff)) total -= c;
      oldest = this.#sql.oldest.get(key) ?? 0;
      this.#sql.setTotal.run(total, oldest, key);
    }
    return { total, oldest };
  }

  /** Write entry `req.id` at `at` on a key whose running total and oldest time are as given. */
  #add(
    key: string,
    windowMs: number,
    total: number,
    oldest: number,
    at: number,
    req: { id: string; cost: number; tag: string },
  ): void {
    this.#sql.insertEntry.run(key, at, req.id, req.cost, req.tag);
    const oldestAt = total === 0 ? at : Math.min(oldest, at);
    this.#sql.upsertBudget.run(key, windowMs, total + req.cost, oldestAt, at + windowMs + EXPIRY_SLACK_MS);
  }

  async refund(keys: string[], id: string): Promise<boolean> {
    return this.#run('refund', () => this.#takeOut(keys, id) > 0);
  }

  /** Remove entry `id` from the keys' logs, subtracting its cost; how many logs held it. */
  #takeOut(keys: readonly string[], id: string): number {
    let removed = 0;
    for (const k of keys) {
      const key = this.#prefix + k;
      for (const cost of this.#sql.removeEntry.all(id, key)) {
        this.#sql.subtract.run(cost, key);
        removed++;
      }
    }
    return removed;
  }

  /** The log member of entry `id` on one of the keys (its id, time and cost), or undefined. */
  #findMember(keys: readonly string[], id: string): { id: string; at: number; cost: number } | undefined {
    const wanted = new Set(keys.map((k) => this.#prefix + k));
    for (const m of this.#sql.findMember.iterate(`${id}:`, `${id};`)) if (wanted.has(m.key)) return m;
    return undefined;
  }

  async record(req: BackendRecord): Promise<RecordResult> {
    return this.#run('record', () => {
      const now = this.#time(true);
      this.#maybeSweep(now);
      const keys = req.budgets.map((b) => b.key);
      const result = (outcome: RecordResult['outcome'], at: number): RecordResult => ({
        outcome,
        at,
        keys,
        cost: req.cost,
        id: req.id,
      });
      const states = req.budgets.map((b, i) => {
        const key = this.#prefix + b.key;
        const row = this.#live(key, now, true);
        this.#checkWindow(key, row, b.windowMs, `budgets[${i}].windowMs`);
        return { b, key };
      });
      // The caller's time, never ahead of the store's: a time from the future is now.
      const at = Math.min(req.at, now);
      const known = this.#remembered(req.entry, now, req.entry.request);
      const was = known && remembered(known.fields);
      if (was?.allowed) {
        if (!req.replace) return result('replayed', was.at);
        const old = this.#findMember(keys, req.entry.id);
        if (old?.id === req.id && old.at === at) return result('replayed', at);
        if (old) this.#takeOut(keys, old.id);
      }
      let written = 0;
      for (const s of states) {
        if (req.cost === 0 || at <= now - s.b.windowMs) continue;
        // Read after a replace took the old entry out; pruned as a spend would, so no old copy remains.
        const { total, oldest } = this.#pruned(s.key, this.#sql.getBudget.get(s.key), now - s.b.windowMs);
        this.#add(s.key, s.b.windowMs, total, oldest, at, req);
        if (at === req.at) this.#recordedSql(true)!.mark.run(s.key, req.id);
        if (s === states[0] && !req.replace) this.#lateSql(true)!.mark.run(s.key, req.id);
        written++;
      }
      if (written === 0 && req.cost > 0) return result('dropped', req.at);
      const until = now + longestWindow(req.budgets) + EXPIRY_SLACK_MS;
      this.#remember(req.entry, rememberRecord(at), req.entry.request, until);
      return result('recorded', at);
    });
  }

  async void(req: BackendVoid): Promise<VoidResult> {
    return this.#run('void', () => {
      const now = this.#time(true);
      const until = now + longestWindow(req.budgets) + EXPIRY_SLACK_MS;
      const known = this.#remembered(req.entry, now);
      if (!known) {
        this.#remember(req.entry, rememberVoid(now), '', until);
        return { outcome: 'voided', cost: 0 };
      }
      const was = remembered(known.fields);
      const keys = req.budgets.map((b) => b.key);
      const member = was.allowed ? this.#findMember(keys, req.entry.id) : undefined;
      if (!member) return { outcome: 'none', cost: 0 };
      this.#takeOut(keys, member.id);
      this.#remember(req.entry, rememberVoid(was.at), known.seen.request, until);
      return { outcome: 'refunded', cost: member.cost };
    });
  }

  /** A read of one key in a deferred transaction: its live row (window checked) and the clock. */
  #read<T>(
    what: string,
    key: string,
    windowMs: number,
    fn: (k: string, row: BudgetRow | undefined, now: number) => T,
  ) {
    return this.#run(
      what,
      () => {
        const now = this.#time(false);
        const k = this.#prefix + key;
        const row = this.#live(k, now, false);
        this.#checkWindow(k, row, windowMs, 'windowMs');
        return fn(k, row, now);
      },
      false,
    );
  }

  async peek(key: string, windowMs: number): Promise<Snapshot> {
    return this.#read('peek', key, windowMs, (k, row, now) => {
      const snap: Snapshot = { used: 0, calls: 0, byTag: Object.create(null), now };
      for (const t of row ? this.#sql.byTag.all(k, now - windowMs) : []) {
        snap.used += t.units;
        snap.calls += t.calls;
        snap.byTag[t.tag] = t.units;
        if (snap.oldestAt === undefined || t.oldest < snap.oldestAt) snap.oldestAt = t.oldest;
        if (snap.newestAt === undefined || t.newest > snap.newestAt) snap.newestAt = t.newest;
      }
      if (row && row.blocked_until > now) {
        snap.blockedUntil = row.blocked_until;
        if (row.blocked_reason) snap.blockedReason = row.blocked_reason;
      }
      return snap;
    });
  }

  async late(key: string, windowMs: number): Promise<LateSummary> {
    return this.#read('late', key, windowMs, (k, row, now) => {
      const r = row ? this.#lateSql()?.summary.get(k, now - windowMs) : undefined;
      if (!r || r.entries === 0) return { units: 0, entries: 0 };
      return {
        units: r.units ?? 0,
        entries: r.entries,
        ...(r.oldest !== null ? { oldestAt: r.oldest } : {}),
      };
    });
  }

  async perMinute(
    key: string,
    windowMs: number,
    fromMs: number,
    toMs: number,
    grid: MinuteGrid,
  ): Promise<MinuteUnits[]> {
    const { minuteMs: m, originMs: o } = grid;
    return this.#read('perMinute', key, windowMs, (k, row, now) =>
      row ? this.#sql.perMinute.all(o, m, m, o, k, now - windowMs, fromMs, toMs) : [],
    );
  }

  async block(key: string, untilEpochMs: number, reason: string): Promise<void> {
    await this.#run('block', () => {
      this.#sql.block.run(this.#prefix + key, untilEpochMs, reason, untilEpochMs + EXPIRY_SLACK_MS);
    });
  }

  async unblock(key: string): Promise<void> {
    await this.#run('unblock', () => {
      this.#sql.unblock.run(this.#prefix + key);
    });
  }

  async freesUpIn(key: string, windowMs: number, limit: number, amounts: number[]): Promise<number[]> {
    return this.#read('freesUpIn', key, windowMs, (k, row, now) => {
      const entries = row ? this.#sql.entries.all(k, now - windowMs) : [];
      const used = entries.reduce((s, e) => s + e.cost, 0);
      return amounts.map(
        (a) =>
          timeUntilUsedAtMost(entries, used, Math.max(0, Math.min(used, limit) - a), windowMs, now) - now,
      );
    });
  }

  waitingFor(): string | undefined {
    const since = this.#commits.busySince;
    if (since === undefined) return undefined;
    return `another process holds the SQLite file's write lock (locked for ${Math.round(performance.now() - since)} ms so far)`;
  }

  async ping(): Promise<void> {
    try {
      this.#db.prepare('SELECT 1').get();
    } catch (e) {
      throw storeFailure(e, this.#label, 'ping');
    }
  }

  async close(): Promise<void> {
    closeStore(this.#db, this.#label);
  }
}
