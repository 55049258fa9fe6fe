/**
 * A ledger file written before spends had entries (schema version 2) is brought to version 3 (and
 * on, to the current version) when opened: what it holds still counts, and a spend with an entry
 * id works at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { openLedger } from '../../src/index.js';
import { LEDGER_FORMAT } from '../../src/ledger/sqlite.js';
import { openStore } from '../../src/sqlite/index.js';

const dir = mkdtempSync(join(tmpdir(), 'qg-entry-migration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('migrates a version-2 ledger on open and keeps its spends', async () => {
  const file = join(dir, 'ledger.db');
  const HOUR = 3_600_000;
  const now = Date.now();
  // The previous version's file: its two schema steps, and one spend as it wrote it.
  const v2 = { ...LEDGER_FORMAT, migrations: LEDGER_FORMAT.migrations.slice(0, 2) };
  const { db } = openStore(v2, { path: file });
  db.prepare(
    'INSERT INTO qg_budget (key, window_ms, total, oldest_at, expires_at) VALUES (?, ?, ?, ?, ?)',
  ).run('qg:{default}:units', HOUR, 7, now - 1000, now + HOUR);
  db.prepare('INSERT INTO qg_entry (key, at, id, cost, tag) VALUES (?, ?, ?, ?, ?)').run(
    'qg:{default}:units',
    now - 1000,
    'abc:7:old',
    7,
    'old',
  );
  expect(db.pragma('user_version', { simple: true })).toBe(2);
  db.close();

  const ledger = await openLedger(`sqlite:${file}`);
  try {
    const budgets = [{ key: 'qg:{default}:units', limit: 10, windowMs: HOUR }];
    expect((await ledger.peek({ key: 'qg:{default}:units', windowMs: HOUR })).used).toBe(7);
    const entry = { key: 'qg:{default}:entry:job-1', id: 'job-1', request: 'r' };
    const d = await ledger.spend({ budgets, cost: 2, entry });
    expect(d).toMatchObject({ allowed: true, remaining: 1 });
    expect(await ledger.spend({ budgets, cost: 2, entry })).toMatchObject({ allowed: true, replayed: true });
    expect((await ledger.peek({ key: 'qg:{default}:units', windowMs: HOUR })).used).toBe(9);
  } finally {
    await ledger.close();
  }
  const after = new Database(file, { readonly: true });
  expect(after.pragma('user_version', { simple: true })).toBe(LEDGER_FORMAT.migrations.length);
  after.close();
});
