/**
 * kill -9 in the middle of a large ingest: the file stays consistent, every page is whole or
 * absent, and after reopening (which catches the index up) every ingested video is searchable.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openCache } from '../../src/youtube/cache/index.js';
import { ftsContentCheck, tempDir } from './helpers.js';

const t = tempDir('qg-crash-');
afterAll(() => t.cleanup());
const path = join(t.dir, 'cache.db');
const child = join(import.meta.dirname, 'fixtures', 'crash-child.ts');

/**
 * Start the ingesting child at `start`; once it has reported `atLeast` more pages, SIGKILL it
 * after `delayMs` (different delays land the kill in different places of a page or index batch).
 */
function ingestAndKill(start: number, atLeast: number, delayMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', child, path, String(start), '5000'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let reported = start - 1;
    let killing = false;
    let buf = '';
    let stderr = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`child did not report ${atLeast} pages in time; stderr: ${stderr}`));
    }, 90_000);
    proc.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const l of lines) if (l.startsWith('page ')) reported = Number(l.slice(5));
      if (reported - start + 1 >= atLeast && !killing) {
        killing = true;
        setTimeout(() => proc.kill('SIGKILL'), delayMs);
      }
    });
    proc.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`child exited by itself (${code}); stderr: ${stderr}`));
      else resolve(reported);
    });
  });
}

function expectedIds(n: number): string[] {
  const ids = Array.from({ length: 50 }, (_, i) => `p${n}-${i}`);
  if (n >= 10) {
    ids[48] = `p${n - 10}-0`;
    ids[49] = `p${n - 10}-1`;
  }
  return ids;
}

/** Checks the file as left by the killed process; returns the number of whole pages. */
function checkWholeOrAbsent(reported: number): number {
  const db = new Database(path);
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.pragma('foreign_key_check')).toEqual([]);
    const perPage = db
      .prepare('SELECT fetched_at AS n, count(*) AS c FROM snapshots GROUP BY fetched_at ORDER BY fetched_at')
      .all() as Array<{ n: number; c: number }>;
    // Every page the child reported as committed is there, whole; at most one more (committed
    // between its last report and the kill); nothing else.
    const pages = perPage.map((p) => p.n);
    expect(pages).toEqual(Array.from({ length: pages.length }, (_, i) => i));
    expect(pages.length).toBeGreaterThanOrEqual(reported + 1);
    for (const p of perPage) expect(p.c).toBe(50);
    const idsOf = db
      .prepare(
        'SELECT v.id FROM snapshots s JOIN videos v ON v.vid = s.vid WHERE s.fetched_at = ? ORDER BY s.rank',
      )
      .pluck();
    for (const n of pages) expect(idsOf.all(n)).toEqual(expectedIds(n));
    // Pages 0-9 bring 50 new videos each, later pages 48 (two come back from ten pages before).
    const n = pages.length;
    expect(db.prepare('SELECT count(*) FROM videos').pluck().get()).toBe(
      50 * Math.min(n, 10) + 48 * Math.max(0, n - 10),
    );
    const mark = db.prepare(`SELECT value FROM meta WHERE key = 'indexed_upto'`).pluck().get() as number;
    expect(mark).toBeLessThanOrEqual(db.prepare('SELECT max(vid) FROM videos').pluck().get() as number);
    return pages.length;
  } finally {
    db.close();
  }
}

function checkSearchable(pages: number): void {
  const cache = openCache(path, { indexBatch: 400 });
  try {
    for (const n of [0, Math.floor(pages / 2), pages - 1]) {
      const r = cache.search(`tok${n}x5`);
      expect(r.hits.map((h) => h.id)).toEqual([`p${n}-5`]);
    }
    // A video re-titled by a later page is found by its new title only.
    if (pages > 10) {
      const last = pages - 1;
      expect(
        cache
          .search(`again${last}`)
          .hits.map((h) => h.id)
          .sort(),
      ).toEqual([`p${last - 10}-0`, `p${last - 10}-1`]);
    }
    expect(cache.stats().indexedVideos).toBe(cache.stats().videos);
  } finally {
    cache.close();
  }
  ftsContentCheck(path);
}

describe('crash consistency', () => {
  it('survives SIGKILL mid-ingest, again and again: whole-or-absent pages, then everything searchable', async () => {
    let pages = 0;
    for (const delayMs of [0, 3, 11, 23, 37]) {
      const reported = await ingestAndKill(pages, 60, delayMs);
      // The reported pages are whole, and a page committed after the last report may be too.
      const whole = checkWholeOrAbsent(reported);
      expect(whole).toBeGreaterThan(pages);
      checkSearchable(whole);
      pages = whole;
    }
  }, 300_000);
});
