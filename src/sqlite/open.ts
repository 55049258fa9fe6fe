/**
 * Opening a store's SQLite file, the same way for the ledger and the cache:
 *
 * 1. The file is looked at before SQLite touches it. A missing file is created (with its directory)
 *    unless the caller only reads; a file that is not an SQLite database, or that holds another
 *    application's database or the other quota-guard store, is refused with one line saying what is
 *    in it, and is left byte for byte as it was.
 * 2. Connection settings (busy timeout, WAL, the format's `synchronous`, checkpoint sizes; docs/sqlite.md).
 * 3. The schema version in `PRAGMA user_version`: a newer one is refused, an older one migrated
 *    forward, each step in its own `BEGIN IMMEDIATE` transaction re-checked under the lock — the
 *    steps the previous release can still read; the others wait for `quota-guard migrate`
 *    (`migrateStore`). New files get the store's `PRAGMA application_id`, so that either store
 *    recognises the other.
 *
 * A command that only reads changes nothing: it skips 2 and 3 and opens the file read-only (SQLite
 * refuses every write on the connection), through `openReadOnly` when it cannot write the
 * directory. A file older than it can read as it is gets one line saying to run `quota-guard
 * migrate` (QG_STORE_OUTDATED).
 *
 * Every failure is a typed error (errors.ts).
 */
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  statSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { QuotaGuardError, StoreUnavailableError } from '../errors.js';
import { sqliteDriver } from './driver.js';
import { type StoreLabel, storeFailure } from './errors.js';
import {
  describeDatabase,
  describeFileBytes,
  describeStep,
  SQLITE_HEADER,
  type StoreFormat,
} from './formats.js';

export interface OpenStoreOptions {
  /** File path (relative to the working directory) or `:memory:`. */
  path: string;
  /** How long a writer waits for another process's lock (ms). Default 5000. */
  busyTimeoutMs?: number;
  /**
   * Create the file (and its directory) when it does not exist. Default true. Commands that only
   * read pass false: a missing file is then `QG_STORE_NOT_FOUND` and nothing is created.
   */
  create?: boolean;
  /**
   * With `create: false`: the command changes what the store holds but has nothing to do on a new
   * one (`unblock`). A missing file is `QG_STORE_NOT_FOUND` saying so, and a file this process
   * cannot write is opened like any other, not read-only. Default false: the command only reads.
   */
  writes?: boolean;
  /** The store's own connection settings, applied after the shared ones on every open. */
  pragmas?: (db: Database.Database) => void;
  /** `PRAGMA synchronous` of a connection that writes, instead of the format's (the bench compares them). */
  synchronous?: 'FULL' | 'NORMAL';
}

export interface OpenedStore {
  db: Database.Database;
  /**
   * The connection cannot write: a command that only reads (`create: false` without `writes`).
   * Nothing that writes (a migration, an index catch-up) may run.
   */
  readOnly: boolean;
  /** The file's schema version, once opened (a command that only reads may take an older one). */
  version: number;
  /** For messages: the store's name and absolute path. */
  label: StoreLabel;
}

/** Pages of WAL between checkpoints (~40 MB) and the size the WAL is cut back to: docs/sqlite.md. */
const WAL_AUTOCHECKPOINT_PAGES = 10_000;
const JOURNAL_SIZE_LIMIT = 64 * 2 ** 20;

/** The first 100 bytes of a file (the SQLite header's size), or fewer when it is shorter. */
function readHead(file: string): Buffer {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(100);
    return buf.subarray(0, readSync(fd, buf, 0, buf.length, 0));
  } finally {
    closeSync(fd);
  }
}

/** Before SQLite opens it: the file exists as a regular file holding an SQLite database, or nothing. */
function checkFile(
  file: string,
  format: StoreFormat,
  label: StoreLabel,
  create: boolean,
  writes: boolean,
): boolean {
  let size: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw foreign(label, format, st.isDirectory() ? 'a directory' : 'not a regular file');
    size = st.size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    if (!create) {
      throw new QuotaGuardError(
        'QG_STORE_NOT_FOUND',
        `no ${format.name} at '${label.path}' (nothing was created: ${writes ? `this command changes an existing ${format.noun}` : 'this command only reads'})`,
        { details: { path: label.path } },
      );
    }
    mkdirSync(dirname(file), { recursive: true });
    return false;
  }
  if (size === 0) return false;
  const head = readHead(file);
  if (!head.subarray(0, SQLITE_HEADER.length).equals(SQLITE_HEADER)) {
    throw foreign(label, format, describeFileBytes(head, size));
  }
  return true;
}

function foreign(label: StoreLabel, format: StoreFormat, what: string): QuotaGuardError {
  return new QuotaGuardError(
    'QG_STORE_FOREIGN',
    `${label.name} '${label.path}' holds ${what}, not ${format.article}: refused, the file was not changed`,
    { details: { path: label.path } },
  );
}

/**
 * Whether this process cannot write the file or the directory beside it (a read-only mount, another
 * user's files). Root passes the permission checks but not a read-only mount (EROFS).
 */
function cannotWrite(file: string): boolean {
  for (const p of [dirname(file), file]) {
    try {
      accessSync(p, constants.W_OK);
    } catch {
      return true;
    }
  }
  return false;
}

/**
 * SQLite takes a URI for a file name only when better-sqlite3's SQLite is configured for it, which
 * its native code does once, when it loads, from `SQLITE_USE_URI`. Set here, before the first
 * connection of the process loads it (nothing else opens SQLite before this module is imported),
 * whatever the environment said: every other file name given to SQLite is an absolute path, which
 * reads the same either way, and the read-only open needs it.
 */
process.env['SQLITE_USE_URI'] = '1';

/** `file:` URI of an absolute path, with SQLite's URI specials escaped. */
function fileUri(file: string, query: string): string {
  return `file:${file.replace(/[%?#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}?${query}`;
}

/**
 * A WAL database in a directory this process cannot write, for a command that only reads. SQLite
 * needs the `-wal` and `-shm` files beside a WAL database and cannot create them here:
 *
 * - Both exist (a writer is running elsewhere, or one stopped without closing): a read-only
 *   connection reads through them, under the same locks as any reader, so it sees every committed
 *   transaction and nothing half-written; with no writer left, SQLite reads the `-wal` into memory.
 * - No `-wal` (the last connection closed cleanly and folded it into the file): the file alone holds
 *   everything committed, and a writer cannot be running (a WAL writer keeps its `-wal` for as long
 *   as it is open), so the file is opened `immutable`: read as it is, without locks or `-shm`.
 * - A `-wal` without its `-shm`: refused (QG_STORE_UNAVAILABLE). Ignoring the `-wal` would show an
 *   older state than the one committed.
 */
function openReadOnly(
  Driver: typeof Database,
  file: string,
  label: StoreLabel,
  timeout: number,
): Database.Database {
  if (existsSync(`${file}-wal`)) {
    if (!existsSync(`${file}-shm`)) {
      throw new StoreUnavailableError(
        `${label.name} '${file}': opening read-only failed: its directory cannot be written and its -wal file has no -shm beside it (open it once where it can be written)`,
        { details: { path: file } },
      );
    }
    return new Driver(file, { readonly: true, fileMustExist: true, timeout });
  }
  // Read without locks: a damaged page seen later is told apart from a writer's change (errors.ts).
  const { mtimeMs, size } = statSync(file);
  label.immutable = { mtimeMs, size };
  return new Driver(fileUri(file, 'immutable=1'), { readonly: true, fileMustExist: true, timeout });
}

/** Our file (created by us, or empty), or refuse it; returns its schema version. */
function identify(db: Database.Database, format: StoreFormat, label: StoreLabel): number {
  const version = db.pragma('user_version', { simple: true }) as number;
  const appId = db.pragma('application_id', { simple: true }) as number;
  const tables = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
    .pluck()
    .all() as string[];
  const ours =
    appId === format.applicationId ||
    (appId === 0 && (tables.length === 0 || format.tables.every((t) => tables.includes(t))));
  if (!ours) throw foreign(label, format, describeDatabase(appId, version, tables));
  if (version > format.migrations.length) {
    throw format.unreadable(
      `${label.name} '${label.path}': schema version ${version} is newer than this quota-guard understands (${format.migrations.length}); upgrade quota-guard`,
      { details: { path: label.path } },
    );
  }
  return version;
}

/** A store of an older version than this command takes as it is, and will not change. */
function outdated(label: StoreLabel, version: number, why: string): QuotaGuardError {
  return new QuotaGuardError(
    'QG_STORE_OUTDATED',
    `${label.name} '${label.path}' is of schema version ${version}, ${why}: run \`quota-guard migrate\` (it says what it changes; --dry-run changes nothing)`,
    { details: { path: label.path, version } },
  );
}

/** The steps a command that writes takes by itself: those the previous release can still read. */
function automaticUpTo(format: StoreFormat): number {
  return Math.min(format.explicitFrom ?? format.migrations.length, format.migrations.length);
}

function migrate(db: Database.Database, format: StoreFormat, from: number, to: number): void {
  for (let v = from; v < to; v++) {
    db.transaction(() => {
      // Re-checked under the write lock: another process may have migrated meanwhile.
      if ((db.pragma('user_version', { simple: true }) as number) !== v) return;
      const step = format.migrations[v]!;
      if (typeof step === 'string') db.exec(step);
      else step(db);
      db.pragma(`application_id = ${format.applicationId}`);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}

/** Open (or create) a store's file: see the comment at the top. Throws only QuotaGuardErrors. */
export function openStore(format: StoreFormat, opts: OpenStoreOptions): OpenedStore {
  const memory = opts.path === ':memory:';
  const file = memory ? opts.path : resolve(opts.path);
  const label: StoreLabel = { name: format.name, path: file, unreadable: format.unreadable };
  const create = opts.create ?? true;
  const writes = opts.writes ?? false;
  const timeout = opts.busyTimeoutMs ?? 5000;
  let db: Database.Database | undefined;
  try {
    // The driver that runs on this Node, or one line saying what to install (driver.ts).
    const Driver = sqliteDriver().Database;
    const exists = !memory && checkFile(file, format, label, create, writes);
    // A command that only reads: read the file as it is, without writing anything.
    if (exists && !create && !writes) {
      db = cannotWrite(file)
        ? openReadOnly(Driver, file, label, timeout)
        : new Driver(file, { readonly: true, fileMustExist: true, timeout });
      const version = identify(db, format, label);
      if (version < (format.readableFrom ?? format.migrations.length)) {
        throw outdated(label, version, `which this command does not read as it is and never changes`);
      }
      opts.pragmas?.(db);
      return { db, label, readOnly: true, version };
    }
    db = new Driver(file, { timeout });
    const version = identify(db, format, label);
    connectionSettings(db, memory, opts.synchronous ?? format.synchronous ?? 'NORMAL');
    opts.pragmas?.(db);
    const upTo = automaticUpTo(format);
    migrate(db, format, version, upTo);
    if (Math.max(version, upTo) < format.migrations.length) {
      throw outdated(
        label,
        Math.max(version, upTo),
        `and its next step (${describeStep(format, Math.max(version, upTo))}) leaves a file the previous release cannot read`,
      );
    }
    return { db, label, readOnly: false, version: format.migrations.length };
  } catch (e) {
    try {
      db?.close();
    } catch {
      // the first failure is the one to report
    }
    throw storeFailure(e, label, 'opening');
  }
}

/** The settings of a connection that writes (docs/sqlite.md, "Pragmas"). */
function connectionSettings(db: Database.Database, memory: boolean, synchronous: 'FULL' | 'NORMAL'): void {
  if (!memory) {
    db.pragma('journal_mode = WAL');
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
  }
  db.pragma(`synchronous = ${synchronous}`);
}

/** What `quota-guard migrate` did to one file, or would do with `dryRun`. */
export interface MigrationReport {
  /** The store's name (`SQLite ledger`, `cache`) and its file (absolute). */
  name: string;
  path: string;
  /** The file's version before; absent when there is no file (the first command that writes creates it). */
  from?: number;
  /** The current version: what the file is at afterwards (or would be). */
  to: number;
  /** Each step taken (or to take): the version it starts from, what it changes, and whether the previous release still reads the result. */
  steps: Array<{ from: number; change: string; previousReads: boolean }>;
}

/**
 * `quota-guard migrate` for one file: every step from its version to the current one, those the
 * previous release cannot read included, each in its own transaction. With `dryRun` the file is
 * opened read-only and only the report is made. A missing file is reported, not created.
 */
export function migrateStore(
  format: StoreFormat,
  opts: { path: string; busyTimeoutMs?: number; dryRun?: boolean },
): MigrationReport {
  const file = resolve(opts.path);
  const label: StoreLabel = { name: format.name, path: file, unreadable: format.unreadable };
  const to = format.migrations.length;
  const report: MigrationReport = { name: format.name, path: file, to, steps: [] };
  let db: Database.Database | undefined;
  try {
    const Driver = sqliteDriver().Database;
    try {
      checkFile(file, format, label, false, true);
    } catch (e) {
      if (e instanceof QuotaGuardError && e.code === 'QG_STORE_NOT_FOUND') return report;
      throw e;
    }
    const timeout = opts.busyTimeoutMs ?? 5000;
    db = opts.dryRun
      ? new Driver(file, { readonly: true, fileMustExist: true, timeout })
      : new Driver(file, { timeout, fileMustExist: true });
    const from = identify(db, format, label);
    report.from = from;
    const explicit = automaticUpTo(format);
    for (let v = from; v < to; v++) {
      report.steps.push({ from: v, change: describeStep(format, v), previousReads: v < explicit });
    }
    if (!opts.dryRun && from < to) {
      connectionSettings(db, false, format.synchronous ?? 'NORMAL');
      migrate(db, format, from, to);
    }
    return report;
  } catch (e) {
    throw storeFailure(e, label, 'migrating');
  } finally {
    try {
      db?.close();
    } catch {
      // the report or the first failure is what matters
    }
  }
}

/** Close a store's connection; a failure (a final checkpoint on a full disk) is a typed error. */
export function closeStore(db: Database.Database, label: StoreLabel): void {
  try {
    if (db.open) db.close();
  } catch (e) {
    throw storeFailure(e, label, 'closing');
  }
}
