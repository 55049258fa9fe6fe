/**
 * Two handles on one cache file (two processes, or a job and a server in one): what one writes to
 * the indexes, the other's next search sees, as a handle opened afterwards would.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { type Cache, openCache, type VideoResource } from '../../src/youtube/cache/index.js';
import { tempDir, video } from './helpers.js';

const t = tempDir();
afterAll(() => t.cleanup());

// A cache past `commonTermDocs`, so a broad prefix is expanded from the hot index's words.
const OPTIONS = { commonTermDocs: 20, rankedMatches: 20, hotSize: 30, now: () => 5_000_000 };
const apples = Array.from({ length: 30 }, (_, i) => `apple-${i}`);
const bananas = Array.from({ length: 30 }, (_, i) => `banana-${i}`);

const apple = (views: number) => apples.map((id) => video(id, { title: `fooapple ${id}`, views }));
const banana = (views: number) => bananas.map((id) => video(id, { title: `foobanana ${id}`, views }));

/** The US chart's first page, fetched at `fetchedAt`. */
function trending(cache: Cache, fetchedAt: number, videos: VideoResource[]): void {
  cache.ingestTrendingPage({ region: 'US', fetchedAt, rankOffset: 0, videos });
}

function ids(hits: Array<{ id: string }>): string[] {
  return hits.map((h) => h.id).sort();
}

describe('a cache shared by two handles', () => {
  it("a hot index rebuilt by one handle is what the other's next search uses", () => {
    const path = join(t.dir, 'shared-hot.db');
    const writer = openCache(path, OPTIONS);
    writer.upsertVideos([...apple(1_000_000), ...banana(10)]);
    trending(writer, 1_000_000, apple(1_000_000));
    expect(writer.rebuildHotIndex()).toBe(30);

    const searcher = openCache(path, OPTIONS);
    const before = searcher.search('foo*', { limit: 100 });
    expect(ids(before.hits)).toEqual([...apples].sort());

    // The bananas trend now, and are the most viewed: the rebuilt hot index holds only them.
    trending(writer, 4_000_000, banana(2_000_000));
    expect(writer.rebuildHotIndex()).toBe(30);

    const fresh = openCache(path, OPTIONS);
    const expected = fresh.search('foo*', { limit: 100 });
    expect(ids(expected.hits)).toEqual([...bananas].sort());
    const after = searcher.search('foo*', { limit: 100 });
    expect({ ids: ids(after.hits), ranking: after.ranking }).toEqual({
      ids: ids(expected.hits),
      ranking: expected.ranking,
    });
    for (const c of [fresh, searcher, writer]) c.close();
  });

  it("an indexed video's new text, written by one handle, is what the other's next search finds", () => {
    const path = join(t.dir, 'shared-text.db');
    const writer = openCache(path, OPTIONS);
    writer.upsertVideos([...apple(1_000_000), ...banana(10)]);
    writer.upsertVideos([video('late', { title: 'zzquiet' })]);
    writer.flush();
    const searcher = openCache(path, OPTIONS);
    expect(ids(searcher.search('zzq*').hits)).toEqual(['late']);
    expect(ids(searcher.search('fooapple zzq*').hits)).toEqual([]);

    // Re-indexed in place: the index mark stays where it was.
    writer.upsertVideos([video('apple-3', { title: 'fooapple zzquick apple-3' })]);
    const after = searcher.search('zzq*');
    expect(ids(after.hits)).toEqual(['apple-3', 'late']);
    expect(ids(searcher.search('fooapple zzq*').hits)).toEqual(['apple-3']);
    for (const c of [searcher, writer]) c.close();
  });

  it("an index remade for other word rules by one handle is what the other's next search uses", () => {
    const path = join(t.dir, 'shared-retokenized.db');
    const searcher = openCache(path, OPTIONS);
    searcher.upsertVideos([...apple(1_000_000), ...banana(10)]);
    expect(searcher.rebuildHotIndex()).toBe(30);
    expect(searcher.search('fooapple').ranking).toBe('popular');

    // The file as another Node (other ICU word rules) left it: the next handle opened remakes both
    // indexes (empty, the hot one not rebuilt) and re-indexes every row, so the index mark ends
    // where it was.
    const raw = new Database(path);
    raw.prepare(`UPDATE meta SET value = 'other word rules' WHERE key = 'tokenizer'`).run();
    raw.close();
    const reopened = openCache(path, OPTIONS);

    const after = searcher.search('fooapple', { limit: 100 });
    const fresh = openCache(path, OPTIONS);
    const expected = fresh.search('fooapple', { limit: 100 });
    const view = (r: typeof after) => ({ hits: r.hits.map((h) => [h.id, h.score]), ranking: r.ranking });
    expect(view(after)).toEqual(view(expected));
    expect(expected.hits.every((h) => h.score > 0)).toBe(true);
    for (const c of [fresh, reopened, searcher]) c.close();
  });
});
