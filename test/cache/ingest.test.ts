import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { type Cache, openCache } from '../../src/youtube/cache/index.js';
import { SCHEMA_VERSION } from '../../src/youtube/cache/schema.js';
import { parseDuration } from '../../src/youtube/cache/video.js';
import { ftsContentCheck, tempDir, video } from './helpers.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function fresh(options: Parameters<typeof openCache>[1] = {}): { cache: Cache; path: string; dir: string } {
  const t = tempDir();
  const path = join(t.dir, 'nested', 'dir', 'cache.db');
  const cache = openCache(path, options);
  cleanups.push(() => {
    cache.close();
    t.cleanup();
  });
  return { cache, path, dir: t.dir };
}

/** A second, raw connection to inspect the file as another process would. */
function raw(path: string): Database.Database {
  const db = new Database(path, { readonly: true });
  cleanups.unshift(() => db.close());
  return db;
}

describe('opening', () => {
  it('creates the directory and a WAL database at the current schema version', () => {
    const { cache, path } = fresh();
    expect(existsSync(path)).toBe(true);
    const db = raw(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(cache.stats()).toMatchObject({ videos: 0, schemaVersion: SCHEMA_VERSION });
  });

  it('keeps data across reopen and runs no migration twice', () => {
    const { cache, path } = fresh();
    cache.ingestTrendingPage({ region: 'US', fetchedAt: 1000, rankOffset: 0, videos: [video('a')] });
    cache.close();
    const again = openCache(path);
    try {
      expect(again.getVideo('a')?.title).toBe('Video a');
      expect(again.search('video').hits.map((h) => h.id)).toEqual(['a']);
    } finally {
      again.close();
    }
  });

  it('checkpoints in a worker while writing, and leaves no WAL behind after close', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const path = join(t.dir, 'wal.db');
    const cache = openCache(path);
    for (let p = 0; p < 20; p++) {
      cache.ingestTrendingPage({
        region: 'US',
        fetchedAt: p,
        rankOffset: 0,
        videos: Array.from({ length: 50 }, (_, i) => video(`w${p}-${i}`, { description: 'x'.repeat(2000) })),
      });
    }
    expect(existsSync(`${path}-wal`)).toBe(true);
    await new Promise((r) => setTimeout(r, 1000)); // the worker has opened its connection by now
    cache.close();
    // Both connections closed: the last one checkpointed and removed the WAL.
    expect(existsSync(`${path}-wal`)).toBe(false);
    const db = raw(path);
    expect(db.prepare('SELECT count(*) FROM videos').pluck().get()).toBe(1000);
  });

  it('refuses a file written by a newer schema, a file that is not a database and another database, with typed errors', () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const newer = join(t.dir, 'newer.db');
    const db = new Database(newer);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => openCache(newer)).toThrow(expect.objectContaining({ code: 'QG_CACHE_SCHEMA' }));
    const junk = join(t.dir, 'junk.db');
    writeFileSync(
      junk,
      'this is not a database, just some text that is long enough to look like a header'.repeat(20),
    );
    expect(() => openCache(junk)).toThrow(expect.objectContaining({ code: 'QG_STORE_FOREIGN' }));
    const other = join(t.dir, 'other.db');
    const o = new Database(other);
    o.exec('CREATE TABLE videos (x)');
    o.close();
    expect(() => openCache(other)).toThrow(expect.objectContaining({ code: 'QG_STORE_FOREIGN' }));
  });

  it('rejects bad options as QG_INVALID_ARGUMENT', () => {
    expect(() => openCache(':memory:', { indexBatch: 0 })).toThrow(
      expect.objectContaining({ code: 'QG_INVALID_ARGUMENT', field: 'options.indexBatch' }),
    );
    expect(() => openCache('')).toThrow(expect.objectContaining({ code: 'QG_INVALID_ARGUMENT' }));
  });

  it('works in memory', () => {
    const cache = openCache(':memory:');
    cache.upsertVideos([video('m', { title: 'memory only' })]);
    expect(cache.search('memory').hits[0]?.id).toBe('m');
    expect(cache.stats().fileBytes).toBe(0);
    cache.close();
    expect(() => cache.search('memory')).toThrow(expect.objectContaining({ code: 'QG_INVALID_ARGUMENT' }));
  });
});

describe('ingest', () => {
  it('writes a page: videos with all fields, and one snapshot row per rank', () => {
    const { cache, path } = fresh({ now: () => 5_000 });
    const r = cache.ingestTrendingPage({
      region: 'US',
      fetchedAt: 4_000,
      rankOffset: 50,
      videos: [video('a', { title: 'Alpha', tags: ['x', 'y z'], views: 7 }), video('b')],
    });
    expect(r).toEqual({ inserted: 2, updated: 0 });
    expect(cache.getVideo('a')).toEqual({
      id: 'a',
      channelId: 'UC-a',
      channelTitle: 'Channel a',
      title: 'Alpha',
      description: '',
      tags: ['x', 'y z'],
      categoryId: '20',
      defaultLanguage: null,
      defaultAudioLanguage: 'en',
      publishedAt: Date.parse('2025-03-01T12:00:00Z'),
      durationSeconds: 200,
      viewCount: 7,
      likeCount: 10,
      commentCount: 3,
      firstSeen: 4_000,
      lastRefreshed: 5_000,
    });
    const ranks = raw(path).prepare('SELECT rank FROM snapshots ORDER BY rank').pluck().all();
    expect(ranks).toEqual([50, 51]);
  });

  it('is idempotent: the same page twice changes only last refreshed and the counts', () => {
    let now = 10_000;
    const { cache, path } = fresh({ now: () => now, indexBatch: 1 });
    const page = {
      region: 'GB',
      fetchedAt: 9_000,
      rankOffset: 0,
      videos: [video('a', { title: 'Cats' }), video('b', { title: 'Dogs' })],
    };
    cache.ingestTrendingPage(page);
    const before = cache.getVideo('a')!;
    const db = raw(path);
    const snapshot = () => db.prepare('SELECT * FROM snapshots ORDER BY rank').all();
    const fts = () => db.prepare('SELECT count(*) FROM videos_fts_data').pluck().get();
    const snap1 = snapshot();
    const fts1 = fts();
    now = 20_000;
    page.videos[0] = video('a', { title: 'Cats', views: 99 });
    expect(cache.ingestTrendingPage(page)).toEqual({ inserted: 0, updated: 2 });
    const after = cache.getVideo('a')!;
    expect(after).toEqual({ ...before, lastRefreshed: 20_000, viewCount: 99 });
    expect(snapshot()).toEqual(snap1);
    expect(fts()).toBe(fts1); // unchanged text: the index was not touched
    expect(cache.stats()).toMatchObject({ videos: 2, snapshotRows: 2 });
  });

  it('a statistics-only resource (batchGetStats) refreshes counts without wiping anything else', () => {
    let now = 1_000;
    const { cache } = fresh({ now: () => now });
    cache.upsertVideos([video('a', { title: 'Keep me', description: 'and me', tags: ['t1'] })]);
    now = 2_000;
    cache.upsertVideos([{ id: 'a', statistics: { viewCount: '123', likeCount: '4', commentCount: '5' } }]);
    expect(cache.getVideo('a')).toMatchObject({
      title: 'Keep me',
      description: 'and me',
      tags: ['t1'],
      channelTitle: 'Channel a',
      durationSeconds: 200,
      viewCount: 123,
      likeCount: 4,
      commentCount: 5,
      firstSeen: 1_000,
      lastRefreshed: 2_000,
    });
    expect(cache.search('keep').hits.map((h) => h.id)).toEqual(['a']);
  });

  it('a statistics-only resource for an unknown video stores what it has', () => {
    const { cache } = fresh();
    cache.upsertVideos([{ id: 'new', statistics: { viewCount: 5 } }]);
    expect(cache.getVideo('new')).toMatchObject({ title: null, tags: [], viewCount: 5 });
    cache.upsertVideos([video('new', { title: 'Now with a title' })]);
    expect(cache.search('title').hits.map((h) => h.id)).toEqual(['new']);
  });

  it('re-indexes changed text whether the row was already indexed or still pending', () => {
    for (const indexBatch of [1, 10_000]) {
      const { cache, path } = fresh({ indexBatch });
      cache.upsertVideos([video('a', { title: 'old words here', tags: ['ancient'] }), video('b')]);
      cache.upsertVideos([video('a', { title: 'new words here', tags: ['modern'] })]);
      expect(cache.search('old').hits).toEqual([]);
      expect(cache.search('ancient').hits).toEqual([]);
      expect(cache.search('new').hits.map((h) => h.id)).toEqual(['a']);
      expect(cache.search('modern').hits.map((h) => h.id)).toEqual(['a']);
      cache.close();
      ftsContentCheck(path);
    }
  });

  it('feeds the index in batches, and a search or a reopen catches up with the rest', () => {
    const { cache, path } = fresh({ indexBatch: 100 });
    const db = raw(path);
    const mark = () => db.prepare(`SELECT value FROM meta WHERE key = 'indexed_upto'`).pluck().get();
    const page = (n: number, at: number) => ({
      region: 'DE',
      fetchedAt: at,
      rankOffset: 0,
      videos: Array.from({ length: 50 }, (_, i) => video(`p${n}-${i}`, { title: `batch item${n}x${i}` })),
    });
    cache.ingestTrendingPage(page(1, 1));
    expect(mark()).toBe(0); // 50 pending, below the batch
    cache.ingestTrendingPage(page(2, 2));
    expect(mark()).toBe(100); // the page that filled the batch indexed it, in its own transaction
    cache.ingestTrendingPage(page(3, 3));
    expect(mark()).toBe(100);
    expect(cache.stats()).toMatchObject({ videos: 150, indexedVideos: 100 });
    expect(cache.search('item3x7').hits.map((h) => h.id)).toEqual(['p3-7']); // search caught up
    expect(mark()).toBe(150);
    cache.ingestTrendingPage(page(4, 4));
    cache.close(); // close catches up too
    expect(mark()).toBe(200);
    ftsContentCheck(path);
  });

  it('rejects malformed pages and videos with QG_INVALID_ARGUMENT and writes nothing', () => {
    const { cache } = fresh();
    const ok = { region: 'US', fetchedAt: 1, rankOffset: 0, videos: [video('a')] };
    const bad: Array<[unknown, string]> = [
      [{ ...ok, region: '' }, 'page.region'],
      [{ ...ok, region: 'U S' }, 'page.region'],
      [{ ...ok, fetchedAt: 'now' }, 'page.fetchedAt'],
      [{ ...ok, rankOffset: -1 }, 'page.rankOffset'],
      [{ ...ok, rankOffset: 1.5 }, 'page.rankOffset'],
      [{ ...ok, videos: 'x' }, 'page.videos'],
      [{ ...ok, videos: [video('b'), { snippet: {} }] }, 'page.videos[1].id'],
      [{ ...ok, videos: [null] }, 'page.videos[0]'],
    ];
    for (const [page, field] of bad) {
      expect(() => cache.ingestTrendingPage(page as never)).toThrow(
        expect.objectContaining({ code: 'QG_INVALID_ARGUMENT', field }),
      );
    }
    expect(() => cache.upsertVideos('nope' as never)).toThrow(
      expect.objectContaining({ code: 'QG_INVALID_ARGUMENT' }),
    );
    expect(cache.stats()).toMatchObject({ videos: 0, snapshotRows: 0 }); // the page with a bad 2nd video rolled back
  });

  it('parses ISO 8601 durations', () => {
    expect(parseDuration('PT4M13S')).toBe(253);
    expect(parseDuration('PT1H2M3S')).toBe(3723);
    expect(parseDuration('P1DT1S')).toBe(86_401);
    expect(parseDuration('P0D')).toBe(0);
    expect(parseDuration('PT')).toBeNull();
    expect(parseDuration('P')).toBeNull();
    expect(parseDuration('4 minutes')).toBeNull();
    expect(parseDuration(undefined)).toBeNull();
  });
});
