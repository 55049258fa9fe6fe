/**
 * SQLite failures as typed errors, for both stores. better-sqlite3 reports SQLite's extended result
 * codes (`SQLITE_IOERR_WRITE`, `SQLITE_READONLY_DIRECTORY`…): each belongs to a primary code (the
 * first two words), and the primary code decides what the failure means.
 *
 * - The file or its disk cannot be used right now (locked, full, read-only, an I/O error, cannot be
 *   opened, no memory): `QG_STORE_UNAVAILABLE`, and the CLI exits 69. On a store that was opened,
 *   the call site's fail-open/closed policy applies; a file that cannot be opened stops the command
 *   whatever the policy (a persistent misconfiguration: docs/operations.md says why).
 * - The file is damaged or not a database: the store's own "cannot read this file" code.
 * - Anything else (a constraint, a misuse, a schema error): a bug, `QG_INTERNAL`.
 *
 * A file-system error from Node (`EACCES`, `EROFS`, `ENOSPC`… while creating the directory or
 * reading the file's header) is the first kind. Nothing SQLite throws leaves a store untyped.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { QuotaGuardError, type QuotaGuardErrorOptions, StoreUnavailableError } from '../errors.js';
import { chosenDriver } from './driver.js';

/** Which store a failure is about, for the message and the code of an unreadable file. */
export interface StoreLabel {
  /** `SQLite ledger` or `cache`. */
  name: string;
  /** The file (absolute) or `:memory:`. */
  path: string;
  /** The store's error for a file of its own it cannot read (damaged, or of a newer schema). */
  unreadable: (message: string, options: QuotaGuardErrorOptions) => QuotaGuardError;
  /**
   * Set when the file was opened `immutable` (read without locks: open.ts), to what it was then. A
   * writer elsewhere that folds its `-wal` into the file meanwhile changes pages under the reads.
   */
  immutable?: { mtimeMs: number; size: number };
}

export type FailureKind = 'unavailable' | 'unreadable' | 'bug';

/** What each primary result code means for a store, and the words an operator reads. */
const PRIMARY: Record<string, { kind: FailureKind; says: string }> = {
  SQLITE_BUSY: { kind: 'unavailable', says: 'locked by another process past the busy timeout' },
  SQLITE_LOCKED: { kind: 'unavailable', says: 'locked by another connection' },
  SQLITE_FULL: { kind: 'unavailable', says: 'the disk is full' },
  SQLITE_READONLY: { kind: 'unavailable', says: 'the file or its directory is read-only' },
  SQLITE_IOERR: { kind: 'unavailable', says: 'disk I/O error' },
  SQLITE_CANTOPEN: {
    kind: 'unavailable',
    says: 'the file cannot be opened (it and its directory must be writable: WAL keeps -wal and -shm files beside it)',
  },
  SQLITE_PERM: { kind: 'unavailable', says: 'access denied' },
  SQLITE_AUTH: { kind: 'unavailable', says: 'access denied' },
  SQLITE_NOLFS: { kind: 'unavailable', says: 'the file is too large for this file system' },
  SQLITE_NOMEM: { kind: 'unavailable', says: 'out of memory' },
  SQLITE_PROTOCOL: { kind: 'unavailable', says: 'file locking failed' },
  SQLITE_INTERRUPT: { kind: 'unavailable', says: 'interrupted' },
  SQLITE_CORRUPT: { kind: 'unreadable', says: 'the file is damaged' },
  SQLITE_NOTADB: { kind: 'unreadable', says: 'the file is not a database' },
  SQLITE_FORMAT: { kind: 'unreadable', says: 'the file is not a database' },
};

/** A few extended codes an operator meets, said more precisely than their primary code. */
const EXTENDED: Record<string, string> = {
  SQLITE_READONLY_DIRECTORY: 'its directory is read-only',
  SQLITE_READONLY_CANTINIT: 'read-only: the shared-memory file cannot be created',
  SQLITE_READONLY_DBMOVED: 'the file was moved or deleted while open',
  SQLITE_CANTOPEN_ISDIR: 'the path is a directory',
  SQLITE_IOERR_WRITE: 'disk write error (the disk may be full or failing)',
};

/** `SQLITE_IOERR_WRITE` → `SQLITE_IOERR`; `SQLITE_BUSY` → itself. */
export function primaryCode(code: string): string {
  return code.split('_').slice(0, 2).join('_');
}

function codeOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The typed error for a failure of `what` (`opening`, `spend`, `close`…) on a store. Our own
 * errors pass through; an error that is neither SQLite's nor the file system's (a bug in our code)
 * is returned as it is, so that it keeps its stack.
 */
export function storeFailure(e: unknown, store: StoreLabel, what: string): unknown {
  if (e instanceof QuotaGuardError) return e;
  const where = `${store.name} '${store.path}': ${what} failed`;
  const addon = addonFailure(e);
  if (addon !== undefined) return new StoreUnavailableError(`${where}: ${addon}`, { cause: e });
  const code = codeOf(e);
  if (code === undefined) return e;
  if (/^E[A-Z]+$/.test(code)) {
    return new StoreUnavailableError(`${where} (${code})`, { cause: e, details: { code } });
  }
  if (!code.startsWith('SQLITE_') && !code.startsWith('UNKNOWN_SQLITE_ERROR')) return e;
  const primary = PRIMARY[primaryCode(code)];
  const says = EXTENDED[code] ?? primary?.says;
  const details = { sqliteCode: code };
  if (!primary) {
    const why = e instanceof Error ? e.message : String(e);
    return new QuotaGuardError('QG_INTERNAL', `${where}: ${why} (${code})`, { cause: e, details });
  }
  const message = `${where}: ${says} (${code})`;
  if (primary.kind === 'unavailable') return new StoreUnavailableError(message, { cause: e, details });
  // A disk that fails reads makes SQLite see a damaged page where the file is not damaged: say so.
  const disk = readFailure(store.path);
  if (disk !== undefined) {
    return new StoreUnavailableError(
      `${where}: disk I/O error (reading the file gives ${disk}; SQLite took what it could not read for damage) (${code})`,
      { cause: e, details },
    );
  }
  if (store.immutable !== undefined && changedSince(store.path, store.immutable)) {
    return new StoreUnavailableError(
      `${where}: a writer changed the file while this command read it without locks (its directory cannot be written); run the command again (${code})`,
      { cause: e, details },
    );
  }
  return store.unreadable(message, { cause: e, details });
}

/**
 * better-sqlite3's native addon that does not load: never built (its install script did not run) or
 * built for another Node version (Node upgraded since the install). An installation to repair, not a
 * bug in the code: one line saying how, and `QG_STORE_UNAVAILABLE` like any store that cannot open.
 */
function addonFailure(e: unknown): string | undefined {
  if (!(e instanceof Error)) return undefined;
  const name = chosenDriver()?.name ?? 'better-sqlite3';
  const fix =
    `run \`npm rebuild ${name}\` where quota-guard is installed (your project, or a checkout), ` +
    `or install quota-guard again with this Node (${process.version})`;
  const abi =
    /NODE_MODULE_VERSION (\d+)\. This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/.exec(
      e.message,
    );
  if (abi) {
    return `${name}'s native addon was built for another Node version (module version ${abi[1]}; this Node needs ${abi[2]}): ${fix}`;
  }
  if (e.message.startsWith('Could not locate the bindings file')) {
    return `${name}'s native addon is missing (its install script did not run): ${fix}`;
  }
  // better-sqlite3 13 ships prebuilt addons and builds one only where none fits: none is there.
  if (codeOf(e) === 'MODULE_NOT_FOUND' && e.message.includes('better_sqlite3.node')) {
    return `${name}'s native addon is missing (none prebuilt for ${process.platform}-${process.arch}, none built): ${fix}`;
  }
  return undefined;
}

/** The error code reading the file's first page gives now (`EIO` on a failing disk), or undefined. */
function readFailure(path: string): string | undefined {
  if (path === ':memory:') return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    readSync(fd, Buffer.alloc(4096), 0, 4096, 0);
    return undefined;
  } catch (err) {
    const code = codeOf(err);
    // A file removed meanwhile is not a disk that fails.
    return code === 'ENOENT' ? undefined : (code ?? 'an error');
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether a file opened `immutable` was written since (a `-wal` beside it, or another size or time). */
function changedSince(path: string, then: { mtimeMs: number; size: number }): boolean {
  if (existsSync(`${path}-wal`)) return true;
  try {
    const st = statSync(path);
    return st.mtimeMs !== then.mtimeMs || st.size !== then.size;
  } catch {
    return true;
  }
}
