/**
 * The run history read from a directory this process cannot write: the ledger's file is opened
 * without locks (`immutable`), and a writer that changes it meanwhile is not reported as damage.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, utimesSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSqliteHistory } from '../../src/history/sqlite.js';
import { diskOrSkip, readOnlyDir } from '../harness/disk.js';

describe('run history on a read-only directory', () => {
  it('a page changed by a writer after the open is QG_STORE_UNAVAILABLE (run again), not a damaged file', async (ctx) => {
    const d = diskOrSkip(ctx, readOnlyDir());
    try {
      const path = join(d.dir, 'quota.db');
      const w = openSqliteHistory({ path });
      for (let i = 0; i < 20; i++) {
        await w.record({
          credential: 'main',
          job: 'trending:US',
          labels: { region: 'US' },
          startedAt: 1_000 + i,
          finishedAt: 2_000 + i,
          outcome: 'done',
          pages: 1,
          units: 1,
          items: 50,
          reason: null,
          used: { units: 1 },
        });
      }
      await w.close();
      const db = new Database(path);
      const pageSize = db.pragma('page_size', { simple: true }) as number;
      const root = db
        .prepare(`SELECT rootpage FROM sqlite_master WHERE name = 'qg_run'`)
        .pluck()
        .get() as number;
      db.close();
      // Written a while ago (a file's time only moves on with the kernel's coarse clock).
      utimesSync(path, new Date(2026, 0, 1), new Date(2026, 0, 1));
      d.readOnly();

      const h = openSqliteHistory({ path });
      // Opens the file (no -wal: read without locks) and reads the totals, not the runs' pages.
      expect(await h.totals(['main'])).toHaveLength(1);
      // A writer elsewhere rewrites the runs' pages (here: garbage over their root page).
      if (process.getuid?.() === 0) execFileSync('mount', ['-o', 'remount,rw', d.dir], { stdio: 'ignore' });
      const fd = openSync(path, 'r+');
      writeSync(fd, Buffer.alloc(pageSize, 0xff), 0, pageSize, (root - 1) * pageSize);
      closeSync(fd);
      await expect(h.list({ credentials: ['main'] })).rejects.toMatchObject({
        code: 'QG_STORE_UNAVAILABLE',
        message: expect.stringContaining('a writer changed the file while this command read it'),
      });
      await h.close();
    } finally {
      d.cleanup();
    }
  });
});
