/**
 * Every result code better-sqlite3 can report (read from its own source, so a new SQLite code is
 * not missed) becomes a typed error, classified by its primary code.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { QuotaGuardError, type QuotaGuardErrorOptions } from '../../src/errors.js';
import { sqliteDriver } from '../../src/sqlite/driver.js';
import { storeFailure } from '../../src/sqlite/index.js';
import { CacheSchemaError } from '../../src/youtube/cache/errors.js';

// The driver this Node loads (13 names them through Node-API's `env`, 12 through V8's `isolate`).
const pkg = dirname(dirname(sqliteDriver().entry));
const CODES = [
  ...readFileSync(join(pkg, 'src/util/constants.cpp'), 'utf8').matchAll(/SetCode\(\w+, \w+, "(\w+)"\)/g),
]
  .map((m) => m[1]!)
  // Not errors: success and step results.
  .filter((c) => !/^SQLITE_(OK|ROW|DONE)(_|$)/.test(c));

/** The expectation, written out independently of the table in src/sqlite/errors.ts. */
const UNAVAILABLE = ['BUSY', 'LOCKED', 'FULL', 'READONLY', 'IOERR', 'CANTOPEN', 'PERM', 'AUTH', 'NOLFS'];
const ALSO_UNAVAILABLE = ['NOMEM', 'PROTOCOL', 'INTERRUPT'];
const UNREADABLE = ['CORRUPT', 'NOTADB', 'FORMAT'];

function expected(code: string): string {
  const primary = code.split('_')[1]!;
  if ([...UNAVAILABLE, ...ALSO_UNAVAILABLE].includes(primary)) return 'QG_STORE_UNAVAILABLE';
  if (UNREADABLE.includes(primary)) return 'QG_STORE_CORRUPT';
  return 'QG_INTERNAL';
}

const ledger = {
  name: 'SQLite ledger',
  path: '/data/quota.db',
  unreadable: (m: string, o: QuotaGuardErrorOptions) => new QuotaGuardError('QG_STORE_CORRUPT', m, o),
};

describe('SQLite result codes', () => {
  it('reads the whole list, extended codes included', () => {
    expect(CODES.length).toBeGreaterThan(90);
    for (const c of [
      'SQLITE_FULL',
      'SQLITE_IOERR_WRITE',
      'SQLITE_READONLY_DIRECTORY',
      'SQLITE_BUSY_SNAPSHOT',
    ]) {
      expect(CODES).toContain(c);
    }
  });

  it.each(CODES)('%s is a typed error with the code its primary code says', (code) => {
    const e = storeFailure(new Database.SqliteError('boom', code), ledger, 'spend');
    expect(e).toBeInstanceOf(QuotaGuardError);
    const qe = e as QuotaGuardError;
    expect(qe.code).toBe(expected(code));
    expect(qe.message).toContain(`SQLite ledger '/data/quota.db': spend failed`);
    expect(qe.message).toContain(`(${code})`);
    expect(qe.details).toEqual({ sqliteCode: code });
  });

  it('a code this version does not know is a typed error too', () => {
    const e = storeFailure(new Database.SqliteError('odd', 'UNKNOWN_SQLITE_ERROR_4242'), ledger, 'peek');
    expect(e).toMatchObject({ code: 'QG_INTERNAL' });
  });

  it("the cache's unreadable file has the cache's code", () => {
    const cache = {
      name: 'cache',
      path: '/data/cache.db',
      unreadable: (m: string, o: QuotaGuardErrorOptions) => new CacheSchemaError(m, o),
    };
    const e = storeFailure(new Database.SqliteError('x', 'SQLITE_NOTADB'), cache, 'opening');
    expect(e).toBeInstanceOf(CacheSchemaError);
    expect(e).toMatchObject({ code: 'QG_CACHE_SCHEMA' });
  });

  it('a file read without locks that a writer changed meanwhile is unavailable, not damaged', () => {
    const dir = mkdtempSync(join(tmpdir(), 'qg-immutable-'));
    try {
      const path = join(dir, 'quota.db');
      writeFileSync(path, 'x'.repeat(4096));
      const { mtimeMs, size } = statSync(path);
      const label = { ...ledger, path, immutable: { mtimeMs, size } };
      const corrupt = () => storeFailure(new Database.SqliteError('x', 'SQLITE_CORRUPT'), label, 'peek');
      // Unchanged: damaged, as from any connection.
      expect(corrupt()).toMatchObject({ code: 'QG_STORE_CORRUPT' });
      // A writer started (its -wal), or folded its -wal back in (the file grew): run again.
      writeFileSync(`${path}-wal`, '');
      expect(corrupt()).toMatchObject({
        code: 'QG_STORE_UNAVAILABLE',
        message: expect.stringContaining('a writer changed the file while this command read it'),
      });
      rmSync(`${path}-wal`);
      writeFileSync(path, 'x'.repeat(8192));
      expect(corrupt()).toMatchObject({ code: 'QG_STORE_UNAVAILABLE' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a file-system error is unavailable; a bug in our code keeps its stack', () => {
    const fsErr = Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' });
    expect(storeFailure(fsErr, ledger, 'opening')).toMatchObject({
      code: 'QG_STORE_UNAVAILABLE',
      message: `SQLite ledger '/data/quota.db': opening failed (EROFS)`,
    });
    const bug = new TypeError('x is not a function');
    expect(storeFailure(bug, ledger, 'spend')).toBe(bug);
  });
});
