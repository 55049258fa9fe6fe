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
 * Every failure is a typed error (errors.ts).
 */
import { closeSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { QuotaGuardError } from '../errors.js';
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
  /** The store's own connection settings, applied after the shared ones on every open. */
  pragmas?: (db: Database.Database) => void;
}

export interface OpenedStore {
  db: Database.Database;
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
function checkFile(file: string, format: StoreFormat, label: StoreLabel, create: boolean): boolean {
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
        `no ${format.name} at '${label.path}' (nothing was created: this command only reads)`,
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
  let db: Database.Database | undefined;
  try {
    if (!memory) checkFile(file, format, label, opts.create ?? true);
    db = new Database(file, { timeout: opts.busyTimeoutMs ?? 5000 });
    const version = identify(db, format, label);
    if (!memory) {
      db.pragma('journal_mode = WAL');
      db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
      db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
    }
    db.pragma('synchronous = NORMAL');
    opts.pragmas?.(db);
    migrate(db, format, version);
    return { db, label };
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
