/**
 * What a store's file is, and words for what else a file may hold. Each store stamps its files with
 * its own `PRAGMA application_id` (SQLite's field for exactly this); files written before the stamp
 * existed are recognised by their tables.
 */
import type Database from 'better-sqlite3';
import type { QuotaGuardError, QuotaGuardErrorOptions } from '../errors.js';
import { terminalText } from '../terminal-text.js';

/** How a store's file is recognised, and how messages name it. */
export interface StoreIdentity {
  /** In messages: `SQLite ledger`, `cache`. */
  name: string;
  /** In messages: `a quota-guard ledger`. */
  article: string;
  /** In messages: `ledger`, `cache`. */
  noun: string;
  /** `PRAGMA application_id` of every file the store creates. */
  applicationId: number;
  /** Tables every file of this store has (recognises files from before the application_id stamp). */
  tables: readonly string[];
}

/**
 * Every store file quota-guard writes, in one place: each store's own format adds its schema steps
 * to its identity, and each recognises the other's files by it. The ledger's file also holds the
 * run history's tables (`qg_run`, `qg_run_total`, `qg_region_success`, created on its first run),
 * which are not needed to recognise it. 'QGLG' and 'QGCA' in ASCII.
 */
export const STORES = {
  ledger: {
    name: 'SQLite ledger',
    article: 'a quota-guard ledger',
    noun: 'ledger',
    applicationId: 0x5147_4c47,
    tables: ['qg_budget', 'qg_entry'],
  },
  cache: {
    name: 'cache',
    article: 'a quota-guard cache',
    noun: 'cache',
    applicationId: 0x5147_4341,
    tables: ['videos', 'meta'],
  },
} as const satisfies Record<string, StoreIdentity>;

/**
 * A store's file format: how to recognise it and how to bring it to the current schema.
 *
 * Two releases side by side (docs/operations.md, "Upgrading"): a command that only reads never
 * changes the file, so it reads versions from `readableFrom` on as they are; a command that writes
 * takes the steps the previous release can still read (before `explicitFrom`) by itself, and the
 * others only through `quota-guard migrate`, which says what each one changes (`changes`).
 */
export interface StoreFormat extends StoreIdentity {
  /** Forward-only schema steps: `migrations[v]` takes version v to v + 1. */
  migrations: ReadonlyArray<string | ((db: Database.Database) => void)>;
  /** What each step changes, in a few words (`changes[v]` for `migrations[v]`). */
  changes?: readonly string[];
  /** The oldest version a command that only reads takes as it is (default: the current one). */
  readableFrom?: number;
  /**
   * The first step whose result the previous minor release cannot read: it and the steps after it
   * run only through `quota-guard migrate` (default: none; every step runs when a command writes).
   */
  explicitFrom?: number;
  /**
   * `PRAGMA synchronous` of a connection that writes (docs/sqlite.md, "Durability"): `FULL` syncs
   * the WAL at every commit, so a commit that returns is on the disk; `NORMAL` (the default) syncs
   * only at checkpoints, so the last commits before a power cut or a failed write-back can be lost.
   */
  synchronous?: 'FULL' | 'NORMAL';
  /** The store's error for a file of its own it cannot read (newer schema, damaged). */
  unreadable: (message: string, options: QuotaGuardErrorOptions) => QuotaGuardError;
}

/** What step `v` of a format changes (`schema version v → v + 1` when it does not say). */
export function describeStep(format: StoreFormat, v: number): string {
  return format.changes?.[v] ?? `schema version ${v} to ${v + 1}`;
}

const KNOWN: readonly StoreIdentity[] = Object.values(STORES);

/** The 16 bytes every SQLite database file starts with. */
export const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** What an SQLite database that is not ours holds, in a few words. */
export function describeDatabase(
  applicationId: number,
  userVersion: number,
  tables: readonly string[],
): string {
  const known = KNOWN.find(
    (k) =>
      k.applicationId === applicationId || (applicationId === 0 && k.tables.every((t) => tables.includes(t))),
  );
  if (known) return known.article;
  const shown = tables.slice(0, 4).map(terminalText).join(', ') + (tables.length > 4 ? ', …' : '');
  const id = applicationId === 0 ? '' : `application_id 0x${(applicationId >>> 0).toString(16)}, `;
  return `another database (${id}user_version ${userVersion}, ${tables.length} table${tables.length === 1 ? '' : 's'}${tables.length ? `: ${shown}` : ''})`;
}

/** What a non-empty file that is not an SQLite database holds, from its first bytes. */
export function describeFileBytes(head: Buffer, size: number): string {
  const bytes = `${size} byte${size === 1 ? '' : 's'}`;
  // A multi-byte character cut at the end of the head is not a sign of binary data.
  const text = head.toString('utf8').replace(/\uFFFD+$/, '');
  // Text if it decodes cleanly and is mostly printable (a config file, a log, a CSV…).
  const clean =
    !text.includes('\uFFFD') &&
    ![...text].some((c) => c.charCodeAt(0) < 9 || (c.charCodeAt(0) > 13 && c.charCodeAt(0) < 32));
  if (!clean) return `a file that is not an SQLite database (${bytes} of binary data)`;
  const first = terminalText(text.split(/\r?\n/)[0] ?? '').slice(0, 40);
  return `a file that is not an SQLite database (${bytes} of text starting "${first}")`;
}
