import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openCache } from '../../src/youtube/cache/index.js';
import { tempDir, video } from './helpers.js';

const t = tempDir();
afterAll(() => t.cleanup());

describe('trending queries', () => {
  it('latest snapshot per chart, and where and when a video was seen trending', () => {
    const cache = openCache(join(t.dir, 'trending.db'));
    try {
      const page = (region: string, at: number, ids: string[], rankOffset = 0, category?: string) =>
        cache.ingestTrendingPage({
          region,
          fetchedAt: at,
          rankOffset,
          videos: ids.map((id) => video(id)),
          ...(category ? { category } : {}),
        });
      page('US', 1_000, ['a', 'b']);
      page('US', 1_000, ['c'], 2);
      page('US', 2_000, ['b', 'a']);
      page('GB', 1_500, ['a']);
      page('US', 3_000, ['m'], 0, '10');
      expect(cache.latestSnapshot('US')).toEqual({
        region: 'US',
        category: '',
        fetchedAt: 2_000,
        videos: [
          { rank: 0, id: 'b', title: 'Video b', channelTitle: 'Channel b', viewCount: 1000 },
          { rank: 1, id: 'a', title: 'Video a', channelTitle: 'Channel a', viewCount: 1000 },
        ],
      });
      expect(cache.latestSnapshot('US', '10')?.videos.map((v) => v.id)).toEqual(['m']);
      expect(cache.latestSnapshot('FR')).toBeUndefined();
      expect(cache.latestSnapshots().map((s) => `${s.region}/${s.category}@${s.fetchedAt}`)).toEqual([
        'GB/@1500',
        'US/@2000',
        'US/10@3000',
      ]);
      expect(cache.latestSnapshots('US')).toHaveLength(2);
      expect(cache.trendingHistory('a')).toEqual([
        { region: 'US', category: '', firstSeen: 1_000, lastSeen: 2_000, bestRank: 0, times: 2 },
        { region: 'GB', category: '', firstSeen: 1_500, lastSeen: 1_500, bestRank: 0, times: 1 },
      ]);
      expect(cache.trendingHistory('c')).toEqual([
        { region: 'US', category: '', firstSeen: 1_000, lastSeen: 1_000, bestRank: 2, times: 1 },
      ]);
      expect(cache.trendingHistory('nope')).toEqual([]);
      expect(cache.stats()).toMatchObject({ videos: 4, snapshotRows: 7, regions: 2 });
    } finally {
      cache.close();
    }
  });
});

describe('job state', () => {
  it('pages through videos oldest refresh first, also across many videos refreshed at the same time', () => {
    let now = 1_000;
    const cache = openCache(join(t.dir, 'refresh.db'), { now: () => now });
    try {
      cache.upsertVideos(Array.from({ length: 120 }, (_, i) => video(`same${i}`))); // all at 1,000
      now = 500; // an older refresh (clock set back): comes first
      cache.upsertVideos([video('old')]);
      now = 2_000;
      cache.upsertVideos([video('new')]);
      const seen: string[] = [];
      let cursor: string | null = null;
      let batches = 0;
      do {
        const b = cache.videosDueForRefresh(50, cursor);
        seen.push(...b.ids);
        cursor = b.cursor;
        batches++;
      } while (cursor !== null && batches < 10);
      // `old` was inserted with last_refreshed 500; upsert keeps the max, so it is the oldest.
      expect(seen[0]).toBe('old');
      expect(seen[seen.length - 1]).toBe('new');
      expect(new Set(seen).size).toBe(122);
      expect(seen).toHaveLength(122);
      expect(batches).toBe(3);
      // Only what was refreshed before a time is due.
      expect(cache.videosDueForRefresh(500, null, { refreshedBefore: 1_000 }).ids).toEqual(['old']);
      // Refreshing a video moves it behind the others.
      now = 3_000;
      cache.upsertVideos([{ id: 'old', statistics: { viewCount: '5' } }]);
      expect(cache.videosDueForRefresh(1).ids).toEqual(['same0']);
      expect(() => cache.videosDueForRefresh(10, 'garbage')).toThrow(
        expect.objectContaining({ code: 'QG_INVALID_ARGUMENT', field: 'afterCursor' }),
      );
      expect(() => cache.videosDueForRefresh(0)).toThrow(
        expect.objectContaining({ code: 'QG_INVALID_ARGUMENT' }),
      );
    } finally {
      cache.close();
    }
  });

  it('keeps cursors', () => {
    let now = 10;
    const cache = openCache(join(t.dir, 'jobs.db'), { now: () => now });
    try {
      expect(cache.getCursor('backfill:default')).toBeUndefined();
      cache.setCursor('backfill:default', '{"after":"x"}');
      now = 20;
      cache.setCursor('backfill:default', '{"after":"y"}');
      expect(cache.getCursor('backfill:default')).toBe('{"after":"y"}');
      cache.setCursor('backfill:default', null);
      expect(cache.getCursor('backfill:default')).toBeUndefined();
      expect(() => cache.setCursor('', 'x')).toThrow(
        expect.objectContaining({ code: 'QG_INVALID_ARGUMENT' }),
      );
    } finally {
      cache.close();
    }
  });
});
