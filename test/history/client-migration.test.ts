/**
 * A ledger file whose run history was written before runs had a client (schema version 3) is brought
 * to version 4 when opened: its runs still read, without a client, and new runs keep theirs.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { openSqliteHistory } from '../../src/history/sqlite.js';
import { LEDGER_FORMAT } from '../../src/ledger/sqlite.js';
import { openStore } from '../../src/sqlite/index.js';
import { dir } from '../cli/helpers.js';

it('migrates a version-3 file with runs on open, and keeps them', async () => {
  const file = join(dir, 'client-migration.db');
  // The previous version's file: its three schema steps, and the history's tables as they were then.
  const v3 = { ...LEDGER_FORMAT, migrations: LEDGER_FORMAT.migrations.slice(0, 3) };
  const { db } = openStore(v3, { path: file });
  db.exec(`CREATE TABLE qg_run (
    id INTEGER PRIMARY KEY AUTOINCREMENT, credential TEXT NOT NULL, job TEXT NOT NULL, region TEXT,
    started_at INTEGER NOT NULL, finished_at INTEGER NOT NULL, outcome TEXT NOT NULL,
    pages INTEGER NOT NULL, units INTEGER NOT NULL, videos INTEGER NOT NULL, reason TEXT,
    used TEXT NOT NULL) STRICT;
    CREATE TABLE qg_run_total (credential TEXT NOT NULL, job TEXT NOT NULL, outcome TEXT NOT NULL,
      runs INTEGER NOT NULL, units INTEGER NOT NULL, PRIMARY KEY (credential, job, outcome)) STRICT, WITHOUT ROWID;
    CREATE TABLE qg_region_success (credential TEXT NOT NULL, region TEXT NOT NULL, at INTEGER NOT NULL,
      PRIMARY KEY (credential, region)) STRICT, WITHOUT ROWID;`);
  db.prepare(
    `INSERT INTO qg_run (credential, job, region, started_at, finished_at, outcome, pages, units, videos, reason, used)
     VALUES ('main', 'trending:US', 'US', 1000, 2000, 'done', 4, 4, 200, NULL, '{"units":4}')`,
  ).run();
  db.close();

  const h = openSqliteHistory({ path: file });
  try {
    expect(await h.list({ credentials: ['main'] })).toEqual([
      {
        credential: 'main',
        job: 'trending:US',
        labels: { region: 'US' },
        startedAt: 1000,
        finishedAt: 2000,
        outcome: 'done',
        pages: 4,
        units: 4,
        items: 200,
        reason: null,
        used: { units: 4 },
      },
    ]);
    const now = Date.now();
    await h.record(
      {
        credential: 'main',
        job: 'ingest:comments',
        labels: {},
        startedAt: now - 1000,
        finishedAt: now,
        outcome: 'done',
        pages: 1,
        units: 1,
        items: 0,
        reason: null,
        used: {},
        client: 'py-cron',
      },
      { id: 'py-1', request: 'r' },
    );
    expect((await h.list({ credentials: ['main'] })).map((r) => [r.job, r.client])).toEqual([
      ['ingest:comments', 'py-cron'],
      ['trending:US', undefined],
    ]);
  } finally {
    await h.close();
  }
  const after = new Database(file, { readonly: true });
  expect(after.pragma('user_version', { simple: true })).toBe(4);
  after.close();
});
