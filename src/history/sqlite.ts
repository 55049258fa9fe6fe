/**
 * The run history in the SQLite ledger's file: a table of run summaries, capped per credential, and
 * the last success per value of the indexed label (`region`). A run's generic fields are mapped to
 * the columns the previous release reads and writes: its `region` label to `region`, its items to
 * `videos`; the other labels go to a `labels` column (JSON) that the previous release does not know
 * and leaves alone, added by the first run recorded without changing the schema version. Its own connection to the file (WAL: it never holds up a spend for
 * longer than one small insert). A run recorded once under a client's id (RunOnce) has its id
 * remembered in the ledger's `qg_spend_entry`, as a spend's entry is, in the run's own transaction.
 */

import { resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { isQuotaGuardError, QuotaGuardError } from '../errors.js';
import { ENTRY_SQL, LEDGER_FORMAT, type RememberedEntry } from '../ledger/sqlite.js';
import { closeStore, openStore, type StoreLabel, storeFailure } from '../sqlite/index.js';
import type { JobOutcome } from './types.js';
import {
  DEFAULT_HISTORY_LIMIT,
  type HistoryQuery,
  INDEXED_LABEL,
  jobKind,
  MAX_RUNS_PER_CREDENTIAL,
  parseRememberedRun,
  type RecordedRun,
  RUN_ID_MEMORY_MS,
  type RunHistory,
  type RunOnce,
  type RunSummary,
  type RunTotal,
  rememberRun,
  runIdConflict,
  runIdKey,
  storableLabels,
} from './types.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS qg_run (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  credential  TEXT NOT NULL,
  job         TEXT NOT NULL,
  region      TEXT,
  started_at  INTEGER NOT NULL,
  finished_at INTEGER NOT NULL,
  outcome     TEXT NOT NULL,
  pages       INTEGER NOT NULL,
  units       INTEGER NOT NULL,
  videos      INTEGER NOT NULL,
  reason      TEXT,
  used        TEXT NOT NULL,
  client      TEXT,
  labels      TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS qg_run_credential ON qg_run (credential, id);
CREATE TABLE IF NOT EXISTS qg_run_total (
  credential  TEXT NOT NULL,
  job         TEXT NOT NULL,
  outcome     TEXT NOT NULL,
  runs        INTEGER NOT NULL,
  units       INTEGER NOT NULL,
  PRIMARY KEY (credential, job, outcome)
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS qg_region_success (
  credential  TEXT NOT NULL,
  region      TEXT NOT NULL,
  at          INTEGER NOT NULL,
  PRIMARY KEY (credential, region)
) STRICT, WITHOUT ROWID;
`;

interface RunRow {
  credential: string;
  job: string;
  region: string | null;
  started_at: number;
  finished_at: number;
  outcome: string;
  pages: number;
  units: number;
  videos: number;
  reason: string | null;
  used: string;
  /** Absent in a file of schema version 3 read without migrating it (read-only). */
  client?: string | null;
  /** Absent in a file no run of this release was recorded in yet. */
  labels?: string | null;
}

/** The labels of a row: its `labels` column and its `region`. */
function labelsOf(row: RunRow): Record<string, string> {
  let labels: Record<string, string> = {};
  if (typeof row.labels === 'string') {
    try {
      labels = storableLabels(JSON.parse(row.labels) as Record<string, string>);
    } catch {
      // A damaged column keeps the run's other fields.
    }
  }
  return row.region !== null ? { ...labels, [INDEXED_LABEL]: row.region } : labels;
}

export interface SqliteHistoryOptions {
  path: string;
  keyPrefix?: string;
  busyTimeoutMs?: number;
  maxRuns?: number;
}

export function openSqliteHistory(o: SqliteHistoryOptions): RunHistory {
  return new SqliteHistory(o);
}

/** The run history in the ledger's SQLite file: one row per run, totals per job and outcome. */
class SqliteHistory implements RunHistory {
  readonly #o: SqliteHistoryOptions;
  // Failures are mapped like every other SQLite failure (src/sqlite): full, read-only, locked → 69.
  readonly #label: StoreLabel;
  readonly #prefix: string;
  readonly #maxRuns: number;
  #db: Database.Database | undefined;
  #record: ((r: RunSummary, once?: RunOnce) => RecordedRun) | undefined;

  constructor(o: SqliteHistoryOptions) {
    this.#o = o;
    this.#label = {
      name: 'run history',
      path: o.path === ':memory:' ? o.path : resolve(o.path),
      unreadable: (message, options) => new QuotaGuardError('QG_STORE_CORRUPT', message, options),
    };
    this.#prefix = o.keyPrefix ?? '';
    this.#maxRuns = o.maxRuns ?? MAX_RUNS_PER_CREDENTIAL;
  }

  #unavailable(e: unknown, what: string): unknown {
    return storeFailure(e, this.#label, what);
  }

  /**
   * The ledger's file, opened on first use the way the ledger opens it (a file of something else is
   * refused). Reading a file that does not exist yet (or holds no runs yet) creates nothing; the
   * tables are created by the first run recorded.
   */
  #open(create: boolean): Database.Database | undefined {
    // Opened to read (which never writes), and now a run to record: open it again to write.
    if (create && this.#db?.readonly) {
      closeStore(this.#db, this.#label);
      this.#db = undefined;
    }
    if (!this.#db) {
      try {
        const opened = openStore(LEDGER_FORMAT, {
          path: this.#o.path,
          create,
          ...(this.#o.busyTimeoutMs !== undefined ? { busyTimeoutMs: this.#o.busyTimeoutMs } : {}),
        });
        this.#db = opened.db;
        // Read without locks (a read-only directory): a writer's change is told apart from damage.
        if (opened.label.immutable !== undefined) this.#label.immutable = opened.label.immutable;
      } catch (e) {
        if (!create && isQuotaGuardError(e) && e.code === 'QG_STORE_NOT_FOUND') return undefined;
        throw e;
      }
    }
    const db = this.#db;
    const has = db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'qg_run'`).get() !== undefined;
    if (!has && !create) return undefined;
    if (!has) db.exec(SCHEMA);
    return db;
  }

  #writer(d: Database.Database): (r: RunSummary, once?: RunOnce) => RecordedRun {
    // The labels column, on a table an earlier release created: written to only, so added here.
    const columns = (d.prepare('PRAGMA table_info(qg_run)').all() as Array<{ name: string }>).map(
      (c) => c.name,
    );
    if (!columns.includes('labels')) d.exec('ALTER TABLE qg_run ADD COLUMN labels TEXT');
    const prefix = this.#prefix;
    const maxRuns = this.#maxRuns;
    const insert = d.prepare(
      `INSERT INTO qg_run (credential, job, region, started_at, finished_at, outcome, pages, units, videos, reason, used, client, labels)
       VALUES (@credential, @job, @region, @startedAt, @finishedAt, @outcome, @pages, @units, @videos, @reason, @used, @client, @labels)`,
    );
    // Everything of the credential older than its newest maxRuns goes.
    const trim = d.prepare(
      `DELETE FROM qg_run WHERE credential = ? AND id <= (
         SELECT id FROM qg_run WHERE credential = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
    );
    const success = d.prepare(
      `INSERT INTO qg_region_success (credential, region, at) VALUES (?, ?, ?)
       ON CONFLICT (credential, region) DO UPDATE SET at = max(at, excluded.at)`,
    );
    const total = d.prepare(
      `INSERT INTO qg_run_total (credential, job, outcome, runs, units) VALUES (?, ?, ?, 1, ?)
       ON CONFLICT (credential, job, outcome) DO UPDATE SET runs = runs + 1, units = units + excluded.units`,
    );
    const getId = d.prepare<[string, number], RememberedEntry>(ENTRY_SQL.get);
    const putId = d.prepare<[string, string, string, number]>(ENTRY_SQL.put);
    const tx = d.transaction((r: RunSummary, once?: RunOnce): RecordedRun => {
      if (once) {
        const key = prefix + runIdKey(r.credential, once.id);
        const now = Date.now();
        const seen = getId.get(key, now);
        if (seen) {
          if (seen.request !== once.request) throw runIdConflict(once.id);
          return { run: parseRememberedRun(seen.remembered, key), replayed: true };
        }
        putId.run(key, rememberRun(r), once.request, now + RUN_ID_MEMORY_MS);
      }
      const credential = prefix + r.credential;
      const labels = storableLabels(r.labels);
      const region = labels[INDEXED_LABEL] ?? null;
      insert.run({
        credential,
        job: r.job,
        region,
        startedAt: r.startedAt,
        finishedAt: r.finishedAt,
        outcome: r.outcome,
        pages: r.pages,
        units: r.units,
        videos: r.items,
        reason: r.reason,
        used: JSON.stringify(r.used),
        client: r.client ?? null,
        labels: Object.keys(labels).length > 0 ? JSON.stringify(labels) : null,
      });
      total.run(credential, jobKind(r.job), r.outcome, r.units);
      trim.run(credential, credential, maxRuns);
      if (r.outcome === 'done' && region !== null) success.run(credential, region, r.finishedAt);
      return { run: r, replayed: false };
    });
    return (r, once) => tx.immediate(r, once);
  }

  async record(r: RunSummary, once?: RunOnce): Promise<RecordedRun> {
    try {
      this.#record ??= this.#writer(this.#open(true)!);
      return this.#record(r, once);
    } catch (e) {
      throw this.#unavailable(e, 'record');
    }
  }

  async list(q: HistoryQuery): Promise<RunSummary[]> {
    if (q.credentials.length === 0) return [];
    const prefix = this.#prefix;
    const where = [`credential IN (${q.credentials.map(() => '?').join(', ')})`];
    const args: Array<string | number> = q.credentials.map((c) => prefix + c);
    if (q.region !== undefined) {
      where.push('region = ?');
      args.push(q.region);
    }
    if (q.job !== undefined) {
      where.push('job = ?');
      args.push(q.job);
    }
    if (q.since !== undefined) {
      where.push('started_at >= ?');
      args.push(q.since);
    }
    args.push(q.limit ?? DEFAULT_HISTORY_LIMIT);
    try {
      const d = this.#open(false);
      if (!d) return [];
      const rows = d
        .prepare(
          `SELECT * FROM qg_run WHERE ${where.join(' AND ')} ORDER BY finished_at DESC, started_at DESC LIMIT ?`,
        )
        .all(...args) as RunRow[];
      return rows.map((row) => ({
        credential: row.credential.slice(prefix.length),
        job: row.job,
        labels: labelsOf(row),
        startedAt: row.started_at,
        finishedAt: row.finished_at,
        outcome: row.outcome as JobOutcome,
        pages: row.pages,
        units: row.units,
        items: row.videos,
        reason: row.reason,
        used: JSON.parse(row.used) as Record<string, number>,
        ...(typeof row.client === 'string' ? { client: row.client } : {}),
      }));
    } catch (e) {
      throw this.#unavailable(e, 'list');
    }
  }

  async lastSuccess(credentials: readonly string[]): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    if (credentials.length === 0) return out;
    try {
      const d = this.#open(false);
      if (!d) return out;
      const rows = d
        .prepare(
          `SELECT region, max(at) AS at FROM qg_region_success
           WHERE credential IN (${credentials.map(() => '?').join(', ')}) GROUP BY region`,
        )
        .all(...credentials.map((c) => this.#prefix + c)) as Array<{ region: string; at: number }>;
      for (const r of rows) out[r.region] = r.at;
      return out;
    } catch (e) {
      throw this.#unavailable(e, 'lastSuccess');
    }
  }

  async totals(credentials: readonly string[]): Promise<RunTotal[]> {
    if (credentials.length === 0) return [];
    try {
      const d = this.#open(false);
      if (!d) return [];
      const rows = d
        .prepare(
          `SELECT * FROM qg_run_total WHERE credential IN (${credentials.map(() => '?').join(', ')})
           ORDER BY credential, job, outcome`,
        )
        .all(...credentials.map((c) => this.#prefix + c)) as Array<RunTotal>;
      return rows.map((r) => ({ ...r, credential: r.credential.slice(this.#prefix.length) }));
    } catch (e) {
      throw this.#unavailable(e, 'totals');
    }
  }

  async close(): Promise<void> {
    const d = this.#db;
    this.#db = undefined;
    this.#record = undefined;
    if (d) closeStore(d, this.#label);
  }
}
