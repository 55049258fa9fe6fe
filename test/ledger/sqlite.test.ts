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

  it('commits the spends in flight together, each answered as if alone, one that fails alone', async () => {
    const file = join(dir, 'group.db');
    const l = await openLedger(`sqlite:${file}`);
    const other = await openLedger(`sqlite:${file}`);
    try {
      const budget = { key: 'group', limit: 50, windowMs: 60_000 };
      await l.spend({ budgets: [budget], cost: 1 });
      // Another process's connection holds the write lock: the spends queue up behind it.
      const db = new Database(file);
      db.exec('BEGIN IMMEDIATE');
      const spends = Array.from({ length: 60 }, (_v, i) =>
        i === 7
          ? l.spend({ budgets: [{ ...budget, windowMs: 1000 }], cost: 1 }) // another window: fails alone
          : l.spend({ budgets: [budget], cost: 1, tag: `s${i}` }),
      );
      const settled = Promise.allSettled(spends);
      await new Promise((r) => setTimeout(r, 50));
      db.exec('COMMIT');
      db.close();
      const out = await settled;
      expect(out[7]).toMatchObject({ status: 'rejected', reason: { code: 'QG_WINDOW_MISMATCH' } });
      const answers = out
        .filter((_o, i) => i !== 7)
        .map((o) => (o.status === 'fulfilled' ? o.value : o.reason));
      // In order, as one after the other: 49 allowed (with 1 spent before), then denied.
      expect(answers.map((d) => d.allowed)).toEqual([...Array(49).fill(true), ...Array(10).fill(false)]);
      expect(answers.slice(0, 49).map((d) => d.remaining)).toEqual(
        Array.from({ length: 49 }, (_v, i) => 48 - i),
      );
      expect((await other.peek({ key: 'group', windowMs: 60_000 })).used).toBe(50);
    } finally {
      await l.close();
      await other.close();
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
