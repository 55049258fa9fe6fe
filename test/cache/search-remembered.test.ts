import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/sqlite/open.js';
import { Writer } from '../../src/youtube/cache/ingest.js';
import { CACHE_FORMAT } from '../../src/youtube/cache/schema.js';
import { Searcher } from '../../src/youtube/cache/search.js';
import { tempDir, video, watchStatements } from './helpers.js';

const t = tempDir();
afterAll(() => t.cleanup());

describe('what the searcher remembers between searches', () => {
  it('stays bounded on a cache that is only searched (the index mark never changes)', () => {
    const { db } = openStore(CACHE_FORMAT, { path: join(t.dir, 'remembered.db') });
    const writer = new Writer(db, 5000);
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];
    writer.ingestPage(
      { region: 'US', fetchedAt: 1_000, rankOffset: 0, videos: words.map((w) => video(w, { title: w })) },
      1_000,
    );
    writer.catchUp();
    // Count the word counts SQLite is asked for.
    let counted = 0;
    watchStatements(db, 'SELECT count(*) FROM (SELECT 1 FROM videos_fts', () => counted++);
    const searcher = new Searcher(db, writer, {
      commonTermDocs: 20_000,
      rankedMatches: 5000,
      hotSize: 10_000,
      now: () => 2_000,
      remembered: 3,
    });
    for (const w of words) expect(searcher.search(w).hits.map((h) => h.id)).toEqual([w]);
    expect(counted).toBe(words.length);
    // Five words remembered against a bound of three: forgotten, so the first is counted again.
    searcher.search('alpha');
    expect(counted).toBe(words.length + 1);
    db.close();
  });
});
