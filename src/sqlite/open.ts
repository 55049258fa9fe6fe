/**
 * Opening a store's SQLite file, the same way for the ledger and the cache:
 *
 * 1. The file is looked at before SQLite touches it. A missing file is created (with its directory)
 *    unless the caller only reads; a file that is not an SQLite database, or that holds another
 *    application's database or the other quota-guard store, is refused with one line saying what is
 *    in it, and is left byte for byte as it was.
 * 2. Connection settings (busy timeout, WAL, synchronous = NORMAL, checkpoint sizes; docs/sqlite.md).
 * 3. The schema version in `PRAGMA user_version`: a newer one is refused, an older one migrated
 *    forward, each step in its own `BEGIN IMMEDIATE` transaction re-checked under the lock. New
 *    files get the store's `PRAGMA application_id`, so that either store recognises the other.
 *
 * A command that only reads, on a file or a directory it cannot write, skips 2 and 3 and opens the
 * file read-only (`openReadOnly`).
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
import { describeDatabase, describeFileBytes, SQLITE_HEADER, type StoreFormat } from './formats.js';

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
}

export interface OpenedStore {
  db: Database.Database;
  /**
   * The connection cannot write: a command that only reads, on a file or directory it cannot write
   * (see `openReadOnly`). Nothing that writes (a migration, an index catch-up) may run.
   */
  readOnly: boolean;
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

function migrate(db: Database.Database, format: StoreFormat, from: number): void {
  for (let v = from; v < format.migrations.length; v++) {
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
    // A command that only reads, on a file it cannot write: read it without writing anything.
    if (exists && !create && !writes && cannotWrite(file)) {
      db = openReadOnly(Driver, file, label, timeout);
      const version = identify(db, format, label);
      if (version < format.migrations.length) {
        throw new StoreUnavailableError(
          `${label.name} '${file}': opening read-only failed: its schema (version ${version}) must be brought to version ${format.migrations.length} first, which needs a writable directory (run any command that writes where it can be written)`,
          { details: { path: file } },
        );
      }
      opts.pragmas?.(db);
      return { db, label, readOnly: true };
    }
    db = new Driver(file, { timeout });
    const version = identify(db, format, label);
    if (!memory) {
      db.pragma('journal_mode = WAL');
      db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
      db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
    }
    db.pragma('synchronous = NORMAL');
    opts.pragmas?.(db);
    migrate(db, format, version);
    return { db, label, readOnly: false };
  } catch (e) {
    try {
      db?.close();
    } catch {
      // the first failure is the one to report
    }
    throw storeFailure(e, label, 'opening');
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
