import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openLedger } from '../../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'qg-ledger-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite ledger specifics', () => {
  it('opens sqlite::memory: and a file, creating its directory, in WAL mode', async () => {
    const mem = await openLedger('sqlite::memory:');
    expect(mem.kind).toBe('sqlite');
    await mem.ping();
    await mem.close();

    const file = join(dir, 'nested', 'deeper', 'quota.db');
    const l = await openLedger(`sqlite:${file}`);
    const d = await l.spend({ budgets: [{ key: 'k', limit: 10, windowMs: 60_000 }], cost: 3 });
    expect(d.allowed).toBe(true);
    await l.close();
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.prepare('SELECT total FROM qg_budget WHERE key = ?').pluck().get('k')).toBe(3);
    } finally {
      db.close();
    }
  });

  it('deletes idle keys once their expiry has passed (with an injected clock)', async () => {
    let now = 1_000_000;
    const file = join(dir, 'sweep.db');
    const l = await openLedger(`sqlite:${file}`, { now: () => now });
    await l.spend({ budgets: [{ key: 'idle', limit: 10, windowMs: 1000 }], cost: 1, tag: 't' });
    now += 120_000; // well past window + slack, and past the sweep interval
    await l.spend({ budgets: [{ key: 'busy', limit: 10, windowMs: 1000 }], cost: 1 });
    await l.close();
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare("SELECT COUNT(*) FROM qg_entry WHERE key = 'idle'").pluck().get()).toBe(0);
      expect(db.prepare("SELECT COUNT(*) FROM qg_budget WHERE key = 'idle'").pluck().get()).toBe(0);
      expect(db.prepare("SELECT COUNT(*) FROM qg_entry WHERE key = 'busy'").pluck().get()).toBe(1);
    } finally {
      db.close();
    }
  });

  it('refuses a file written by a newer schema', async () => {
    const file = join(dir, 'future.db');
    const db = new Database(file);
    db.pragma('user_version = 99');
    db.close();
    await expect(openLedger(`sqlite:${file}`)).rejects.toMatchObject({ code: 'QG_STORE_CORRUPT' });
  });

  it('rejects unknown URL schemes with QG_STORE_URL_INVALID and never echoes a password', async () => {
    await expect(openLedger('mongo://x')).rejects.toMatchObject({ code: 'QG_STORE_URL_INVALID' });
    await expect(openLedger('sqlite:')).rejects.toMatchObject({ code: 'QG_STORE_URL_INVALID' });
    const err = (await openLedger('memcached://user:s3cret@host:1').catch((e: unknown) => e)) as Error;
    expect(err.message).not.toContain('s3cret');
  });
});
