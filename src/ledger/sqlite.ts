/**
 * The embedded twin of the Redis ledger: the same semantics in one SQLite file (or in memory).
 *
 * - Every write runs in a `BEGIN IMMEDIATE` transaction, which takes the file's write lock up
 *   front: two processes can never both read a total and then both write on top of it.
 * - WAL lets readers (peek, status) run while a writer holds the lock; a busy timeout makes a writer
 *   wait for the lock instead of failing at once. A lock not obtained in time is StoreUnavailable.
 * - The clock is the host's (`Date.now`, or the `now` option in tests): one host, one clock. A step
 *   of it (NTP correcting a wrong clock) is detected against the monotonic clock and every stored
 *   time moved by the step, so windows stay measured in real time (clock.ts).
 * - Same data model as Redis: one row per call with its cost, a running total per key, expired rows
 *   pruned (their cost subtracted) only when the oldest one has left the window.
 * See docs/sqlite.md for the pragmas and why.
 */
import type Database from 'better-sqlite3';
import { QuotaGuardError } from '../errors.js';
import {
  closeStore,
  openStore,
  STORES,
  type StoreFormat,
  type StoreLabel,
  storeFailure,
} from '../sqlite/index.js';
import { type BackendSpend, EXPIRY_SLACK_MS, type LedgerBackend, timeUntilUsedAtMost } from './backend.js';
import { BOOT_ID, type ClockMark, type ClockStep, clockStep, countClockStep, monotonicMs } from './clock.js';
import { LedgerCode, ledgerFailure } from './codes.js';
import type { Decision, Snapshot } from './types.js';

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
}

interface BudgetRow {
  window_ms: number | null;
  total: number;
  /** A lower bound of the oldest entry's `at` (exact after a prune). */
  oldest_at: number;
  blocked_until: number;
  blocked_reason: string | null;
  expires_at: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS qg_budget (
  key            TEXT PRIMARY KEY,
  window_ms      INTEGER,
  total          INTEGER NOT NULL DEFAULT 0,
  oldest_at      INTEGER NOT NULL DEFAULT 0,
  blocked_until  INTEGER NOT NULL DEFAULT 0,
  blocked_reason TEXT,
  expires_at     INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS qg_entry (
  key  TEXT NOT NULL,
  at   INTEGER NOT NULL,
  id   TEXT NOT NULL,
  cost INTEGER NOT NULL,
  tag  TEXT NOT NULL,
  PRIMARY KEY (key, at, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS qg_entry_id ON qg_entry (id);
`;

/** An entry as `qg_spend_entry` remembers it: its first answer and its request. */
export interface RememberedEntry {
  remembered: string;
  request: string;
}

/**
 * Reading and writing `qg_spend_entry` (key, now / key, remembered, request, expiry): the spends'
 * entries here, and the run history's run ids (src/history/sqlite.ts) in the same table.
 */
export const ENTRY_SQL = {
  get: 'SELECT remembered, request FROM qg_spend_entry WHERE key = ? AND expires_at > ?',
  put: `INSERT INTO qg_spend_entry (key, remembered, request, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET remembered = excluded.remembered, request = excluded.request,
         expires_at = excluded.expires_at`,
} as const;

/** Version 2: the clocks of the last decision, to detect steps of the wall clock (clock.ts). */
const CLOCK_SCHEMA = `
CREATE TABLE IF NOT EXISTS qg_clock (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  wall INTEGER NOT NULL,
  mono REAL NOT NULL,
  boot TEXT NOT NULL
) STRICT;
`;

/**
 * Version 3: spends' entries chosen by the caller, each with its first decision (`remembered`:
 * the Lua script's reply, comma-separated) and its request, until one longest window has passed.
 */
const ENTRY_SCHEMA = `
CREATE TABLE IF NOT EXISTS qg_spend_entry (
  key        TEXT PRIMARY KEY,
  remembered TEXT NOT NULL,
  request    TEXT NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS qg_spend_entry_expiry ON qg_spend_entry (expires_at);
`;

/**
 * Version 4: the run history's `client` (the decision API's token that recorded a run), added to
 * its table where the history has created it already (src/history/sqlite.ts creates it with the column).
 */
function runClientColumn(db: Database.Database): void {
  const columns = db.prepare<[], string>("SELECT name FROM pragma_table_info('qg_run')").pluck().all();
  if (columns.length > 0 && !columns.includes('client')) db.exec('ALTER TABLE qg_run ADD COLUMN client TEXT');
}

/** The ledger's file format for the shared SQLite opener. */
export const LEDGER_FORMAT: StoreFormat = {
  ...STORES.ledger,
  migrations: [SCHEMA, CLOCK_SCHEMA, ENTRY_SCHEMA, runClientColumn],
  unreadable: (message, options) => new QuotaGuardError('QG_STORE_CORRUPT', message, options),
};

export function openSqliteBackend(opts: SqliteLedgerOptions): LedgerBackend {
  const { db, label } = openStore(LEDGER_FORMAT, {
    path: opts.path,
    ...(opts.busyTimeoutMs !== undefined ? { busyTimeoutMs: opts.busyTimeoutMs } : {}),
    ...(opts.create !== undefined ? { create: opts.create } : {}),
    ...(opts.writes !== undefined ? { writes: opts.writes } : {}),
  });
  try {
    return new SqliteBackend(db, label, opts.keyPrefix ?? '', {
      wall: opts.now ?? Date.now,
      // An injected wall clock without a monotonic one is the whole truth: no step is looked for.
      ...(opts.monotonic !== undefined || opts.now === undefined
        ? { mono: opts.monotonic ?? monotonicMs }
        : {}),
      boot: opts.bootId ?? BOOT_ID,
      ...(opts.onClockStep ? { onStep: opts.onClockStep } : {}),
    });
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

class SqliteBackend implements LedgerBackend {
  readonly kind = 'sqlite' as const;
  readonly #db: Database.Database;
  readonly #label: StoreLabel;
  readonly #prefix: string;
  readonly #clock: Clocks;
  /** A step found in the transaction that is running, reported once it has committed. */
  #step: ClockStep | undefined;
  #lastSweep = Number.NEGATIVE_INFINITY;
  /** One transaction wrapper, made once: it runs the function it is given. */
  readonly #tx: Database.Transaction<(fn: () => unknown) => unknown>;

  readonly #getBudget;
  readonly #oldest;
  readonly #prune;
  readonly #insertEntry;
  readonly #upsertBudget;
  readonly #setTotal;
  readonly #entries;
  readonly #removeEntry;
  readonly #subtract;
  readonly #byTag;
  readonly #block;
  readonly #unblock;
  readonly #sweepEntries;
  readonly #sweepBudgets;
  readonly #dropEntries;
  readonly #dropBudget;
  readonly #getClock;
  readonly #setClock;
  readonly #shiftEntries;
  readonly #shiftBudgets;
  readonly #getEntry;
  readonly #putEntry;
  readonly #sweepEntryRecords;

  constructor(db: Database.Database, label: StoreLabel, prefix: string, clock: Clocks) {
    this.#db = db;
    this.#label = label;
    this.#prefix = prefix;
    this.#clock = clock;
    this.#getClock = db.prepare<[], ClockMark>('SELECT wall, mono, boot FROM qg_clock WHERE id = 1');
    this.#setClock = db.prepare<[number, number, string]>(
      `INSERT INTO qg_clock (id, wall, mono, boot) VALUES (1, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET wall = excluded.wall, mono = excluded.mono, boot = excluded.boot`,
    );
    // Every stored time moves with the wall clock, so each keeps its real distance from now.
    this.#shiftEntries = db.prepare<[number]>('UPDATE qg_entry SET at = at + ?');
    this.#shiftBudgets = db.prepare<[number, number, number]>(
      `UPDATE qg_budget SET oldest_at = oldest_at + ?, expires_at = expires_at + ?,
         blocked_until = CASE WHEN blocked_until > 0 THEN blocked_until + ? ELSE 0 END`,
    );
    this.#tx = db.transaction((fn: () => unknown) => fn());
    this.#getEntry = db.prepare<[string, number], RememberedEntry>(ENTRY_SQL.get);
    this.#putEntry = db.prepare<[string, string, string, number]>(ENTRY_SQL.put);
    this.#sweepEntryRecords = db.prepare<[number]>('DELETE FROM qg_spend_entry WHERE expires_at <= ?');
    this.#getBudget = db.prepare<[string], BudgetRow>(
      'SELECT window_ms, total, oldest_at, blocked_until, blocked_reason, expires_at FROM qg_budget WHERE key = ?',
    );
    this.#oldest = db
      .prepare<[string], number>('SELECT at FROM qg_entry WHERE key = ? ORDER BY at LIMIT 1')
      .pluck();
    this.#prune = db
      .prepare<[string, number], number>('DELETE FROM qg_entry WHERE key = ? AND at <= ? RETURNING cost')
      .pluck();
    this.#insertEntry = db.prepare<[string, number, string, number, string]>(
      'INSERT INTO qg_entry (key, at, id, cost, tag) VALUES (?, ?, ?, ?, ?)',
    );
    this.#upsertBudget = db.prepare<[string, number, number, number, number]>(
      `INSERT INTO qg_budget (key, window_ms, total, oldest_at, expires_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET window_ms = excluded.window_ms, total = excluded.total,
         oldest_at = excluded.oldest_at,
         expires_at = MAX(excluded.expires_at, qg_budget.blocked_until + ${EXPIRY_SLACK_MS})`,
    );
    this.#setTotal = db.prepare<[number, number, string]>(
      'UPDATE qg_budget SET total = ?, oldest_at = ? WHERE key = ?',
    );
    this.#entries = db.prepare<[string, number], { at: number; cost: number }>(
      'SELECT at, cost FROM qg_entry WHERE key = ? AND at > ? ORDER BY at',
    );
    this.#removeEntry = db
      .prepare<[string, string], number>('DELETE FROM qg_entry WHERE id = ? AND key = ? RETURNING cost')
      .pluck();
    this.#subtract = db.prepare<[number, string]>(
      'UPDATE qg_budget SET total = MAX(0, total - ?) WHERE key = ?',
    );
    this.#byTag = db.prepare<
      [string, number],
      { tag: string; units: number; calls: number; oldest: number; newest: number }
    >(
      `SELECT tag, SUM(cost) AS units, COUNT(*) AS calls, MIN(at) AS oldest, MAX(at) AS newest
       FROM qg_entry WHERE key = ? AND at > ? GROUP BY tag`,
    );
    this.#block = db.prepare<[string, number, string, number]>(
      `INSERT INTO qg_budget (key, window_ms, total, blocked_until, blocked_reason, expires_at)
       VALUES (?, NULL, 0, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET blocked_until = excluded.blocked_until,
         blocked_reason = excluded.blocked_reason, expires_at = MAX(qg_budget.expires_at, excluded.expires_at)`,
    );
    this.#unblock = db.prepare<[string]>(
      'UPDATE qg_budget SET blocked_until = 0, blocked_reason = NULL WHERE key = ?',
    );
    this.#sweepEntries = db.prepare<[number]>(
      'DELETE FROM qg_entry WHERE key IN (SELECT key FROM qg_budget WHERE expires_at <= ?)',
    );
    this.#sweepBudgets = db.prepare<[number]>('DELETE FROM qg_budget WHERE expires_at <= ?');
    this.#dropEntries = db.prepare<[string]>('DELETE FROM qg_entry WHERE key = ?');
    this.#dropBudget = db.prepare<[string]>('DELETE FROM qg_budget WHERE key = ?');
  }

  /** Runs fn in a transaction: BEGIN IMMEDIATE for writes (the lock up front), DEFERRED for reads. */
  #run<T>(what: string, fn: () => T, write = true): T {
    let result: T;
    this.#step = undefined;
    try {
      result = (write ? this.#tx.immediate(fn) : this.#tx.deferred(fn)) as T;
    } catch (e) {
      throw storeFailure(e, this.#label, what);
    }
    const step = this.#step;
    this.#step = undefined;
    if (step) {
      countClockStep();
      this.#clock.onStep?.(step);
    }
    return result;
  }

  /**
   * The time of a decision, in a transaction (clock.ts). A write that finds the wall clock stepped
   * moves every stored time by the step and records the clocks; a read that finds a step not yet
   * corrected reads in the ledger's time before the step.
   */
  #time(write: boolean): number {
    if (!this.#clock.mono) return this.#clock.wall();
    const now: ClockMark = { wall: this.#clock.wall(), mono: this.#clock.mono(), boot: this.#clock.boot };
    const step = clockStep(this.#getClock.get(), now);
    if (!write) return step ? now.wall - step.stepMs : now.wall;
    if (step) {
      this.#shiftEntries.run(step.stepMs);
      this.#shiftBudgets.run(step.stepMs, step.stepMs, step.stepMs);
      this.#step = step;
    }
    this.#setClock.run(now.wall, now.mono, now.boot);
    return now.wall;
  }

  /** Delete keys whose expiry has passed: idle keys cost nothing. */
  #maybeSweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = now;
    this.#sweepEntries.run(now);
    this.#sweepBudgets.run(now);
    this.#sweepEntryRecords.run(now);
  }

  /**
   * The key's row, or undefined when it has expired (as a Redis key would have): then its data is
   * gone, window included. In a write transaction the expired rows are deleted on the spot.
   */
  #live(key: string, now: number, write: boolean): BudgetRow | undefined {
    const row = this.#getBudget.get(key);
    if (!row || row.expires_at > now) return row;
    if (write) {
      this.#dropEntries.run(key);
      this.#dropBudget.run(key);
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

  async spend(req: BackendSpend): Promise<Decision> {
    return this.#run('spend', () => {
      const now = this.#time(true);
      this.#maybeSweep(now);
      const entry = req.entry;
      if (!entry) return this.#decide(req, now);
      const key = this.#prefix + entry.key;
      const seen = this.#getEntry.get(key, now);
      if (seen) {
        if (seen.request !== entry.request) {
          throw ledgerFailure({ code: LedgerCode.EntryConflict, key: entry.key, entry: entry.id });
        }
        return this.#replay(req, seen.remembered);
      }
      if (entry.recallOnly)
        throw ledgerFailure({ code: LedgerCode.EntryUnknown, key: entry.key, entry: entry.id });
      const d = this.#decide(req, now);
      const remembered = d.allowed
        ? `1,${d.remaining},${d.at}`
        : `0,${d.retryAfterMs},${d.remaining},${d.keys.indexOf(d.limitedBy) + 1},${d.blockedUntil ?? 0},${d.at}`;
      const longest = Math.max(...req.budgets.map((b) => b.windowMs));
      this.#putEntry.run(key, remembered, entry.request, now + longest + EXPIRY_SLACK_MS);
      return d;
    });
  }

  /** An entry's first decision, as the Lua script replays it (`remembered`: its reply). */
  #replay(req: BackendSpend, remembered: string): Decision {
    const r = remembered.split(',').map(Number);
    const keys = req.budgets.map((b) => b.key);
    if (r[0] === 1) {
      return {
        allowed: true,
        retryAfterMs: 0,
        remaining: r[1]!,
        id: req.id,
        keys,
        cost: req.cost,
        at: r[2]!,
        replayed: true,
      };
    }
    const d: Decision = {
      allowed: false,
      retryAfterMs: r[1]!,
      remaining: r[2]!,
      limitedBy: keys[r[3]! - 1] ?? keys[0]!,
      keys,
      cost: req.cost,
      at: r[5]!,
      replayed: true,
    };
    if (r[4]! > 0) d.blockedUntil = r[4]!;
    return d;
  }

  async recallEntry(key: string): Promise<string | undefined> {
    return this.#run(
      'recallEntry',
      () => this.#getEntry.get(this.#prefix + key, this.#time(false))?.request,
      false,
    );
  }

  /** The decision of a spend, written when allowed (in the caller's transaction). */
  #decide(req: BackendSpend, now: number): Decision {
    {
      const states = req.budgets.map((b, i) => {
        const key = this.#prefix + b.key;
        const row = this.#live(key, now, true);
        this.#checkWindow(key, row, b.windowMs, `budgets[${i}].windowMs`);
        let total = row?.total ?? 0;
        let oldest = row?.oldest_at ?? 0;
        const cutoff = now - b.windowMs;
        // Nothing can have expired while the oldest entry is inside the window: no prune then.
        if (row && total > 0 && oldest <= cutoff) {
          for (const c of this.#prune.all(key, cutoff)) total -= c;
          oldest = this.#oldest.get(key) ?? 0;
          this.#setTotal.run(total, oldest, key);
        }
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
            this.#entries.iterate(s.key, s.cutoff),
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
      for (const s of states) {
        this.#insertEntry.run(s.key, now, req.id, req.cost, req.tag);
        const oldest = s.total === 0 ? now : Math.min(s.oldest, now);
        this.#upsertBudget.run(
          s.key,
          s.b.windowMs,
          s.total + req.cost,
          oldest,
          now + s.b.windowMs + EXPIRY_SLACK_MS,
        );
      }
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
  }

  async refund(keys: string[], id: string): Promise<boolean> {
    return this.#run('refund', () => {
      let removed = false;
      for (const k of keys) {
        const key = this.#prefix + k;
        for (const cost of this.#removeEntry.all(id, key)) {
          this.#subtract.run(cost, key);
          removed = true;
        }
      }
      return removed;
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
      const snap: Snapshot = { used: 0, calls: 0, byTag: {}, now };
      for (const t of row ? this.#byTag.all(k, now - windowMs) : []) {
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

  async block(key: string, untilEpochMs: number, reason: string): Promise<void> {
    this.#run('block', () => {
      this.#block.run(this.#prefix + key, untilEpochMs, reason, untilEpochMs + EXPIRY_SLACK_MS);
    });
  }

  async unblock(key: string): Promise<void> {
    this.#run('unblock', () => {
      this.#unblock.run(this.#prefix + key);
    });
  }

  async freesUpIn(key: string, windowMs: number, limit: number, amounts: number[]): Promise<number[]> {
    return this.#read('freesUpIn', key, windowMs, (k, row, now) => {
      const entries = row ? this.#entries.all(k, now - windowMs) : [];
      const used = entries.reduce((s, e) => s + e.cost, 0);
      return amounts.map(
        (a) =>
          timeUntilUsedAtMost(entries, used, Math.max(0, Math.min(used, limit) - a), windowMs, now) - now,
      );
    });
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
