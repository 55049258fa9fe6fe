/**
 * The SQLite ledger's file: its tables, the steps that brought them to this version (the shared
 * opener runs them, src/sqlite/), and every statement the ledger runs on them, prepared once per
 * connection. docs/sqlite.md, "Schema".
 */
import type Database from 'better-sqlite3';
import { QuotaGuardError } from '../errors.js';
import { STORES, type StoreFormat } from '../sqlite/index.js';
import { EXPIRY_SLACK_MS, OUTSIDE_TAG_PREFIX } from './backend.js';
import type { ClockMark } from './clock.js';

export interface BudgetRow {
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
  changes: [
    'the ledger: budgets and their entries (qg_budget, qg_entry)',
    'the clocks of the last spend, to correct steps of the host clock (qg_clock)',
    'entry ids remembered with their first decision (qg_spend_entry)',
    'the client that recorded a run, in the run history (qg_run.client)',
  ],
  // Version 3 holds every table the ledger reads; the run history reads a run without its client.
  readableFrom: 3,
  // An allowed spend is answered once its commit is on the disk (docs/sqlite.md, "Durability").
  synchronous: 'FULL',
  unreadable: (message, options) => new QuotaGuardError('QG_STORE_CORRUPT', message, options),
};

/**
 * Entries `record` wrote at a time the caller gave (a journal's): a step of the host clock moves
 * every other stored time, never these (docs/ledger.md, "Late entries"). A table 0.2.0 never reads,
 * created by the first record without changing the schema version, so that release keeps reading
 * and writing the file; rows whose entry is gone are swept.
 */
export const RECORDED_SCHEMA = `
CREATE TABLE IF NOT EXISTS qg_recorded (
  key TEXT NOT NULL,
  id  TEXT NOT NULL,
  PRIMARY KEY (key, id)
) STRICT, WITHOUT ROWID;
`;

/**
 * Entries `record` wrote late (a journal's; not reconcile's replace), for `late`: created by the
 * first such record without changing the schema version, as `qg_recorded`; rows whose entry is gone
 * are swept.
 */
export const LATE_SCHEMA = `
CREATE TABLE IF NOT EXISTS qg_late (
  key TEXT NOT NULL,
  id  TEXT NOT NULL,
  PRIMARY KEY (key, id)
) STRICT, WITHOUT ROWID;
`;

/**
 * The statements on `qg_late`, prepared once the table exists.
 * @internal As `ledgerStatements`.
 */
export function lateStatements(db: Database.Database) {
  return {
    mark: db.prepare<[string, string]>('INSERT OR IGNORE INTO qg_late (key, id) VALUES (?, ?)'),
    sweep: db.prepare(
      `DELETE FROM qg_late WHERE NOT EXISTS
         (SELECT 1 FROM qg_entry e WHERE e.key = qg_late.key AND e.id = qg_late.id)`,
    ),
    summary: db.prepare<[string, number], { units: number | null; entries: number; oldest: number | null }>(
      `SELECT SUM(e.cost) AS units, COUNT(*) AS entries, MIN(e.at) AS oldest
       FROM qg_late l JOIN qg_entry e ON e.key = l.key AND e.id = l.id WHERE l.key = ? AND e.at > ?`,
    ),
  };
}

/** @internal */
export type LateStatements = ReturnType<typeof lateStatements>;

/** Whether a table exists (the ones created at their first use). */
export const HAS_TABLE = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?";

/** The entries recorded at the caller's time that are still in the ledger. */
const RECORDED_ENTRIES =
  'SELECT e.key, e.at FROM qg_recorded r JOIN qg_entry e ON e.key = r.key AND e.id = r.id';

/** Whether a tag is reconcile's outside spend, in SQL. */
const OUTSIDE = `substr(tag, 1, ${OUTSIDE_TAG_PREFIX.length}) = '${OUTSIDE_TAG_PREFIX}'`;

/**
 * Every statement of the ledger but those on `qg_recorded`, which may not exist yet.
 * @internal Its type names better-sqlite3's statement class, which a declaration file cannot.
 */
export function ledgerStatements(db: Database.Database) {
  return {
    getClock: db.prepare<[], ClockMark>('SELECT wall, mono, boot FROM qg_clock WHERE id = 1'),
    setClock: db.prepare<[number, number, string]>(
      `INSERT INTO qg_clock (id, wall, mono, boot) VALUES (1, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET wall = excluded.wall, mono = excluded.mono, boot = excluded.boot`,
    ),
    // Every stored time moves with the wall clock, so each keeps its real distance from now.
    shiftEntries: db.prepare<[number]>('UPDATE qg_entry SET at = at + ?'),
    shiftBudgets: db.prepare<[number, number, number]>(
      `UPDATE qg_budget SET oldest_at = oldest_at + ?, expires_at = expires_at + ?,
         blocked_until = CASE WHEN blocked_until > 0 THEN blocked_until + ? ELSE 0 END`,
    ),
    hasRecorded: db
      .prepare<[], number>("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'qg_recorded'")
      .pluck(),
    getEntry: db.prepare<[string, number], RememberedEntry>(ENTRY_SQL.get),
    putEntry: db.prepare<[string, string, string, number]>(ENTRY_SQL.put),
    sweepEntryRecords: db.prepare<[number]>('DELETE FROM qg_spend_entry WHERE expires_at <= ?'),
    getBudget: db.prepare<[string], BudgetRow>(
      'SELECT window_ms, total, oldest_at, blocked_until, blocked_reason, expires_at FROM qg_budget WHERE key = ?',
    ),
    oldest: db.prepare<[string], number>('SELECT at FROM qg_entry WHERE key = ? ORDER BY at LIMIT 1').pluck(),
    prune: db
      .prepare<[string, number], number>('DELETE FROM qg_entry WHERE key = ? AND at <= ? RETURNING cost')
      .pluck(),
    insertEntry: db.prepare<[string, number, string, number, string]>(
      'INSERT INTO qg_entry (key, at, id, cost, tag) VALUES (?, ?, ?, ?, ?)',
    ),
    // The expiry only moves out: a record in the past may end before what the key already needs.
    upsertBudget: db.prepare<[string, number, number, number, number]>(
      `INSERT INTO qg_budget (key, window_ms, total, oldest_at, expires_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET window_ms = excluded.window_ms, total = excluded.total,
         oldest_at = excluded.oldest_at,
         expires_at = MAX(qg_budget.expires_at, excluded.expires_at, qg_budget.blocked_until + ${EXPIRY_SLACK_MS})`,
    ),
    setTotal: db.prepare<[number, number, string]>(
      'UPDATE qg_budget SET total = ?, oldest_at = ? WHERE key = ?',
    ),
    entries: db.prepare<[string, number], { at: number; cost: number }>(
      'SELECT at, cost FROM qg_entry WHERE key = ? AND at > ? ORDER BY at',
    ),
    removeEntry: db
      .prepare<[string, string], number>('DELETE FROM qg_entry WHERE id = ? AND key = ? RETURNING cost')
      .pluck(),
    // An entry's member by its id ("<id>:" up to "<id>;", ';' being the character after ':').
    findMember: db.prepare<[string, string], { key: string; id: string; at: number; cost: number }>(
      'SELECT key, id, at, cost FROM qg_entry INDEXED BY qg_entry_id WHERE id >= ? AND id < ?',
    ),
    subtract: db.prepare<[number, string]>('UPDATE qg_budget SET total = MAX(0, total - ?) WHERE key = ?'),
    byTag: db.prepare<
      [string, number],
      { tag: string; units: number; calls: number; oldest: number; newest: number }
    >(
      `SELECT tag, SUM(cost) AS units, COUNT(*) AS calls, MIN(at) AS oldest, MAX(at) AS newest
       FROM qg_entry WHERE key = ? AND at > ? GROUP BY tag`,
    ),
    // The minute: origin + ⌊(at − origin) ÷ minuteMs⌋ × minuteMs (numbers are bound as reals: CAST truncates); at ≥ fromMs ≥ origin.
    perMinute: db.prepare<
      [number, number, number, number, string, number, number, number],
      { minute: number; own: number; outside: number }
    >(
      `SELECT CAST((at - ?) / ? AS INTEGER) * ? + ? AS minute,
         SUM(CASE WHEN ${OUTSIDE} THEN 0 ELSE cost END) AS own,
         SUM(CASE WHEN ${OUTSIDE} THEN cost ELSE 0 END) AS outside
       FROM qg_entry WHERE key = ? AND at > ? AND at >= ? AND at < ? GROUP BY minute ORDER BY minute`,
    ),
    block: db.prepare<[string, number, string, number]>(
      `INSERT INTO qg_budget (key, window_ms, total, blocked_until, blocked_reason, expires_at)
       VALUES (?, NULL, 0, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET blocked_until = excluded.blocked_until,
         blocked_reason = excluded.blocked_reason, expires_at = MAX(qg_budget.expires_at, excluded.expires_at)`,
    ),
    unblock: db.prepare<[string]>(
      'UPDATE qg_budget SET blocked_until = 0, blocked_reason = NULL WHERE key = ?',
    ),
    sweepEntries: db.prepare<[number]>(
      'DELETE FROM qg_entry WHERE key IN (SELECT key FROM qg_budget WHERE expires_at <= ?)',
    ),
    sweepBudgets: db.prepare<[number]>('DELETE FROM qg_budget WHERE expires_at <= ?'),
    dropEntries: db.prepare<[string]>('DELETE FROM qg_entry WHERE key = ?'),
    dropBudget: db.prepare<[string]>('DELETE FROM qg_budget WHERE key = ?'),
  };
}

/** @internal */
export type LedgerStatements = ReturnType<typeof ledgerStatements>;

/**
 * The statements on `qg_recorded`, prepared once the table exists.
 * @internal As `ledgerStatements`.
 */
export function recordedStatements(db: Database.Database) {
  return {
    mark: db.prepare<[string, string]>('INSERT OR IGNORE INTO qg_recorded (key, id) VALUES (?, ?)'),
    sweep: db.prepare(
      `DELETE FROM qg_recorded WHERE NOT EXISTS
         (SELECT 1 FROM qg_entry e WHERE e.key = qg_recorded.key AND e.id = qg_recorded.id)`,
    ),
    // A clock step: every other entry moves; each key's oldest and expiry still cover these.
    shiftOthers: db.prepare<[number]>(
      `UPDATE qg_entry SET at = at + ? WHERE NOT EXISTS
         (SELECT 1 FROM qg_recorded r WHERE r.key = qg_entry.key AND r.id = qg_entry.id)`,
    ),
    cover: db.prepare(
      `UPDATE qg_budget SET
         oldest_at = MIN(oldest_at, COALESCE((SELECT MIN(x.at) FROM (${RECORDED_ENTRIES}) x
           WHERE x.key = qg_budget.key), oldest_at)),
         expires_at = MAX(expires_at, COALESCE((SELECT MAX(x.at) FROM (${RECORDED_ENTRIES}) x
           WHERE x.key = qg_budget.key) + window_ms + ${EXPIRY_SLACK_MS}, 0))
       WHERE key IN (SELECT key FROM qg_recorded)`,
    ),
  };
}

/** @internal */
export type RecordedStatements = ReturnType<typeof recordedStatements>;
