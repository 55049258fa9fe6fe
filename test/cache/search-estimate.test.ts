/**
 * Word counts estimated from the hot index: on a cache larger than `commonTermDocs` with a hot index
 * of at least 1,000 videos, a word the hot sample shows in well under `commonTermDocs` videos is not
 * counted in the whole index, and the query's words are looked up in the hot index together. The
 * estimate only routes: the hits are every match, whatever the route.
 */
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/sqlite/open.js';
import { Writer } from '../../src/youtube/cache/ingest.js';
import { matchExpression, parseQuery } from '../../src/youtube/cache/query.js';
import { CACHE_FORMAT } from '../../src/youtube/cache/schema.js';
import { Searcher } from '../../src/youtube/cache/search.js';
import { tempDir, video, watchStatements } from './helpers.js';

const t = tempDir();

const COMMON_TERM_DOCS = 200;
const RANKED_MATCHES = 100;
const N = 3000;

/**
 * Video n: `g<n % 10>` is in 300 videos (100 of them hot: estimated at 303, counted), `m<n % 40>` in
 * 75 (25 hot: estimated at 78, at most half of commonTermDocs), `r<n % 300>` in 10 (3 or 4 hot).
 * With no trending charts, the hot index holds the 1,000 most viewed: n = 2000..2999.
 */
const title = (n: number) => `g${n % 10} m${n % 40} r${n % 300}`;

let db: Database;
let searcher: Searcher;
/** The whole-index counts asked for since the last `reset`: [match expression, limit]. */
let counted: Array<[string, number]> = [];
/** Statements that count words in the hot index since the last `reset`. */
let hotLookups = 0;

beforeAll(() => {
  ({ db } = openStore(CACHE_FORMAT, { path: join(t.dir, 'estimate.db') }));
  const writer = new Writer(db, 5000);
  writer.upsert(
    Array.from({ length: N }, (_, n) => video(`v${n}`, { title: title(n), views: n })),
    1_000,
  );
  writer.catchUp();
  watchStatements(db, 'SELECT count(*) FROM (SELECT 1 FROM videos_fts', (args) =>
    counted.push([args[0] as string, args[1] as number]),
  );
  // A word estimated at up to twice commonTermDocs is counted through FTS5's vocabulary instead
  // (the same number, capped alike): a whole-index word count too.
  watchStatements(db, 'SELECT doc FROM temp.main_vocab WHERE term = ?', (args) =>
    counted.push([`"${args[0] as string}"`, COMMON_TERM_DOCS + 1]),
  );
  watchStatements(db, 'SELECT (SELECT count(*) FROM hot_fts', () => hotLookups++);
  searcher = new Searcher(db, writer, {
    commonTermDocs: COMMON_TERM_DOCS,
    rankedMatches: RANKED_MATCHES,
    hotSize: 1000,
    now: () => 2_000,
  });
  // Builds the hot index (the 1,000 most viewed videos).
  searcher.search('r1');
});

afterAll(() => {
  db.close();
  t.cleanup();
});

function reset(): void {
  counted = [];
  hotLookups = 0;
}

/** Word counts in the whole index (bounded at commonTermDocs + 1), by word. */
function wordsCounted(): string[] {
  return counted.filter(([, limit]) => limit === COMMON_TERM_DOCS + 1).map(([m]) => m);
}

/** Every match of `q`, by FTS5 directly: the ids of the videos (video n has vid n + 1), sorted. */
function expected(q: string): string[] {
  const p = parseQuery(q);
  const vids = db
    .prepare('SELECT rowid FROM videos_fts WHERE videos_fts MATCH ?')
    .pluck()
    .all(matchExpression(p.include, p.exclude)) as number[];
  return vids.map((v) => `v${v - 1}`).sort();
}

function everyPage(q: string): { ids: string[]; ranking: Set<string> } {
  const ids: string[] = [];
  const ranking = new Set<string>();
  for (let offset = 0; offset <= 10_000; offset += 40) {
    const r = searcher.search(q, { limit: 40, offset });
    ranking.add(r.ranking);
    ids.push(...r.hits.map((h) => h.id));
    if (!r.hasMore) break;
  }
  return { ids, ranking };
}

describe('word counts estimated from the hot index', () => {
  it('words the hot sample shows as selective are not counted in the whole index, and are looked up together', () => {
    reset();
    const r = searcher.search('m7 r7 -r8', { limit: 100 });
    expect(r.ranking).toBe('bm25');
    expect(wordsCounted()).toEqual([]);
    expect(hotLookups).toBe(1);
    expect(r.hits.map((h) => h.id).sort()).toEqual(expected('m7 r7 -r8'));
  });

  it('a word the hot sample shows above half of commonTermDocs is counted, and found very common', () => {
    reset();
    const r = searcher.search('g4 r14', { limit: 100 });
    expect(wordsCounted()).toEqual(['"g4"']);
    expect(r.ranking).toBe('bm25-selective');
    expect(r.hits.map((h) => h.id).sort()).toEqual(expected('g4 r14'));
  });

  it.each([
    ['m5', 'bm25'],
    ['r5 g5', 'bm25-selective'],
    ['m6 -r6', 'bm25'],
    ['"m7 r7"', 'bm25'],
    ['g1 m1', 'bm25-selective'],
    ['g2 -m2', 'popular'],
    ['r11 -m11', 'bm25'],
    ['m9 r9 g9', 'bm25-selective'],
  ])('%s pages through exactly every match (%s)', (q, route) => {
    const want = expected(q);
    expect(want.length).toBeGreaterThan(0);
    const got = everyPage(q);
    expect(got.ranking).toEqual(new Set([route]));
    expect(new Set(got.ids).size).toBe(got.ids.length);
    expect([...got.ids].sort()).toEqual(want);
  });
});

describe('a word counted through the vocabulary', () => {
  it('counts what MATCH counts after indexed rows changed their text, and routes by that', () => {
    const u = tempDir();
    const { db: d } = openStore(CACHE_FORMAT, { path: join(u.dir, 'vocab.db') });
    try {
      const writer = new Writer(d, 5000);
      // `g<n % 10>` in 300 videos each, 100 of them hot (estimated at 303: counted, above the cap).
      writer.upsert(
        Array.from({ length: N }, (_, n) => video(`v${n}`, { title: title(n), views: n })),
        1_000,
      );
      writer.catchUp();
      const s = new Searcher(d, writer, {
        commonTermDocs: COMMON_TERM_DOCS,
        rankedMatches: RANKED_MATCHES,
        hotSize: 1000,
        now: () => 2_000,
      });
      expect(s.search('g3 r3', { limit: 100 }).ranking).toBe('bm25-selective');
      // 200 of g3's videos (none of them hot) lose it: 100 left, under the cap, and the word is
      // counted again (the index changed), through the vocabulary (still estimated at 303).
      writer.upsert(
        Array.from({ length: 200 }, (_, k) => {
          const n = 3 + 10 * k;
          return video(`v${n}`, { title: `x m${n % 40} r${n % 300}`, views: n });
        }),
        2_000,
      );
      const vocabCounts: string[] = [];
      watchStatements(d, 'SELECT doc FROM temp.main_vocab WHERE term = ?', (args) =>
        vocabCounts.push(args[0] as string),
      );
      const fresh = new Searcher(d, writer, {
        commonTermDocs: COMMON_TERM_DOCS,
        rankedMatches: RANKED_MATCHES,
        hotSize: 1000,
        now: () => 2_000,
      });
      const before = d.prepare('SELECT count(*) FROM videos_fts WHERE videos_fts MATCH ?').pluck();
      expect(before.get('"g3"')).toBe(100);
      const r = fresh.search('g3 r3', { limit: 100 });
      expect(vocabCounts).toEqual(['g3']);
      expect(r.ranking).toBe('bm25');
      const p = parseQuery('g3 r3');
      const want = (
        d
          .prepare('SELECT rowid FROM videos_fts WHERE videos_fts MATCH ?')
          .pluck()
          .all(matchExpression(p.include)) as number[]
      ).length;
      expect(r.hits.length).toBe(want);
    } finally {
      d.close();
      u.cleanup();
    }
  });
});
