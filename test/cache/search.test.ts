import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import tls from 'node:tls';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isQuotaGuardError } from '../../src/errors.js';
import { openLedger } from '../../src/ledger/index.js';
import { type Cache, openCache } from '../../src/youtube/cache/index.js';
import { matchExpression, parseQuery } from '../../src/youtube/cache/query.js';
import type { SearchOptions } from '../../src/youtube/cache/types.js';
import { rng } from '../../src/youtube/simulator/rng.js';
import { tempDir, video, words } from './helpers.js';

const t = tempDir();
afterAll(() => t.cleanup());

describe('search semantics', () => {
  let cache: Cache;
  beforeAll(() => {
    cache = openCache(join(t.dir, 'small.db'));
    const poke2 = video('poke2', { title: 'POKEMON record of the world', channelId: 'UC-fans' });
    const desc = video('desc', {
      title: 'Other thing',
      description: 'a long description that mentions speedrun once',
    });
    const filler = Array.from({ length: 30 }, (_, i) =>
      video(`f${i}`, { title: words(i, 6, ['lorem', 'ipsum', 'dolor', 'sit', 'amet']) }),
    );
    cache.ingestTrendingPage({
      region: 'US',
      fetchedAt: 1_000,
      rankOffset: 0,
      videos: [
        video('title', { title: 'Speedrun champion', description: 'nothing else' }),
        video('tags', { title: 'Something', tags: ['speedrun', 'games'] }),
        desc,
        video('poke', {
          title: 'Pokémon world record',
          description: 'fastest run',
          channelId: 'UC-nintendo',
        }),
        poke2,
        video('mine', { title: 'Pokemon in Minecraft world record' }),
      ],
    });
    cache.ingestTrendingPage({ region: 'GB', fetchedAt: 5_000, rankOffset: 0, videos: [poke2, desc] });
    cache.upsertVideos(filler);
  });
  afterAll(() => cache.close());
  const ids = (q: string, o: SearchOptions = {}) => cache.search(q, o).hits.map((h) => h.id);

  it('ranks a title match above a tag match above a description match', () => {
    expect(ids('speedrun')).toEqual(['title', 'tags', 'desc']);
    const r = cache.search('speedrun');
    expect(r.ranking).toBe('bm25');
    expect(r.hits[0]!.score).toBeGreaterThan(r.hits[1]!.score);
    expect(r.hits[1]!.score).toBeGreaterThan(r.hits[2]!.score);
  });

  it('folds case and diacritics both ways', () => {
    expect(new Set(ids('pokemon'))).toEqual(new Set(['poke', 'poke2', 'mine']));
    expect(new Set(ids('PoKéMoN'))).toEqual(new Set(['poke', 'poke2', 'mine']));
  });

  it('phrases need the words together and in order; words need them anywhere', () => {
    expect(new Set(ids('world record'))).toEqual(new Set(['poke', 'poke2', 'mine']));
    expect(new Set(ids('"world record"'))).toEqual(new Set(['poke', 'mine']));
    expect(ids('"record world"')).toEqual([]);
  });

  it('prefixes and exclusions', () => {
    expect(new Set(ids('speed*'))).toEqual(new Set(['title', 'tags', 'desc']));
    expect(new Set(ids('pokemon -minecraft'))).toEqual(new Set(['poke', 'poke2']));
    expect(ids('pokémon -minecraft "world record"')).toEqual(['poke']);
    expect(ids('pokemon -"world record"')).toEqual(['poke2']);
  });

  it('returns hits with the match highlighted, channel, regions and counts', () => {
    const [hit] = cache.search('fastest pokemon').hits;
    expect(hit).toMatchObject({
      id: 'poke',
      title: 'Pokémon world record',
      channelId: 'UC-nintendo',
      channelTitle: 'Channel poke',
      regions: ['US'],
      viewCount: 1000,
    });
    expect(hit!.snippet).toBe('«fastest» run');
    expect(cache.search('champion', { highlight: ['<b>', '</b>'] }).hits[0]!.snippet).toBe(
      'Speedrun <b>champion</b>',
    );
    expect(cache.search('record of the').hits[0]).toMatchObject({ id: 'poke2', regions: ['GB', 'US'] });
  });

  it('filters by region, trending time and channel', () => {
    expect(new Set(ids('pokemon', { region: 'GB' }))).toEqual(new Set(['poke2']));
    expect(new Set(ids('pokemon', { trendingSince: 2_000 }))).toEqual(new Set(['poke2']));
    expect(ids('pokemon', { region: 'US', trendingSince: 2_000 })).toEqual([]);
    expect(ids('pokemon', { channelId: 'UC-nintendo' })).toEqual(['poke']);
    expect(ids('lorem', { region: 'US' })).toEqual([]);
  });

  it('pages with limit and offset, and says when more follow', () => {
    const all = ids('lorem', { limit: 100 });
    expect(all.length).toBeGreaterThan(10);
    const pages: string[] = [];
    for (let offset = 0; ; offset += 4) {
      const r = cache.search('lorem', { limit: 4, offset });
      pages.push(...r.hits.map((h) => h.id));
      if (!r.hasMore) break;
    }
    expect(pages).toEqual(all);
  });

  it('rejects bad options with QG_INVALID_ARGUMENT', () => {
    for (const [o, field] of [
      [{ limit: 0 }, 'limit'],
      [{ limit: 101 }, 'limit'],
      [{ limit: 2.5 }, 'limit'],
      [{ offset: -1 }, 'offset'],
      [{ region: 'not a region!' }, 'region'],
      [{ trendingSince: Number.NaN }, 'trendingSince'],
      [{ highlight: ['only one'] }, 'highlight'],
    ] as Array<[SearchOptions, string]>) {
      expect(() => cache.search('pokemon', o)).toThrow(
        expect.objectContaining({ code: 'QG_INVALID_ARGUMENT', field }),
      );
    }
  });
});

describe('routing by term frequency', () => {
  // Small thresholds so a few hundred videos have "very common" words: every route is exercised.
  const COMMON = ['the', 'and', 'of', 'to', 'in'];
  const VOCAB = [...COMMON, ...COMMON, ...COMMON, 'song', 'live', 'music', 'remix', 'cover', 'dance'];
  let cache: Cache;
  let oracle: Database.Database;
  const N = 400;

  beforeAll(() => {
    const path = join(t.dir, 'routes.db');
    cache = openCache(path, { commonTermDocs: 40, hotSize: 50, indexBatch: 64 });
    for (let p = 0; p < N / 50; p++) {
      cache.ingestTrendingPage({
        region: p % 2 === 0 ? 'US' : 'BR',
        fetchedAt: 1_000 + p,
        rankOffset: 0,
        videos: Array.from({ length: 50 }, (_, i) => {
          const n = p * 50 + i;
          return video(`v${n}`, {
            title: `${words(n, 5, VOCAB)} rare${n % 37} odd${n % 13}`,
            description: words(n + 7_919, 12, VOCAB),
            channelId: `UC${n % 9}`,
            views: (n * 7_919) % 10_007,
          });
        }),
      });
    }
    cache.flush();
    oracle = new Database(path, { readonly: true });
  });
  afterAll(() => {
    oracle.close();
    cache.close();
  });

  /** Every match, by FTS5 directly, with the filters applied in SQL: what a search must page through. */
  function expected(q: string, o: SearchOptions = {}): string[] {
    const parsed = parseQuery(q);
    return oracle
      .prepare(
        `SELECT v.id FROM videos_fts JOIN videos v ON v.vid = videos_fts.rowid
         WHERE videos_fts MATCH @m
           AND (@channel IS NULL OR v.channel_id = @channel)
           AND (@region IS NULL OR EXISTS (SELECT 1 FROM snapshots s WHERE s.vid = v.vid AND s.region = @region))`,
      )
      .pluck()
      .all({
        m: matchExpression(parsed.include, parsed.exclude),
        channel: o.channelId ?? null,
        region: o.region ?? null,
      })
      .sort() as string[];
  }

  function everyPage(q: string, o: SearchOptions = {}): { ids: string[]; ranking: Set<string> } {
    const out: string[] = [];
    const ranking = new Set<string>();
    for (let offset = 0; offset <= 10_000; offset += 7) {
      const r = cache.search(q, { ...o, limit: 7, offset });
      ranking.add(r.ranking);
      out.push(...r.hits.map((h) => h.id));
      if (!r.hasMore) break;
    }
    return { ids: out, ranking };
  }

  it.each([
    ['the', 'popular', {}],
    ['the and', 'popular', {}],
    ['"the and"', 'popular', {}],
    ['the -of', 'popular', {}],
    ['the', 'popular', { region: 'BR' }],
    ['of', 'popular', { channelId: 'UC3' }],
    ['the rare5', 'bm25-selective', {}],
    ['rare5 -the', 'bm25', {}],
    ['rare5 odd5', 'bm25', {}],
    // Each word selective (11 and 31 videos), together over commonTermDocs: bm25 would read both lists.
    ['"rare5 odd5"', 'popular', {}],
    ['rare11 -dance', 'bm25', { region: 'US' }],
    ['odd5 of', 'bm25-selective', { channelId: 'UC2' }],
    ['rare36*', 'bm25', {}],
    ['rare36* -odd1', 'bm25', {}],
    ['rare36* the', 'bm25-selective', {}],
    ['"the rare36"*', 'popular', {}],
  ] as Array<[string, string, SearchOptions]>)('%s pages through exactly every match (%s)', (q, route, o) => {
    const want = expected(q, o);
    expect(want.length).toBeGreaterThan(0);
    const got = everyPage(q, o);
    expect(got.ranking).toEqual(new Set([route]));
    expect(new Set(got.ids).size).toBe(got.ids.length); // no duplicates across pages
    expect([...got.ids].sort()).toEqual(want);
  });

  it('a broad prefix stands for its most frequent words: only real matches, hot set first', () => {
    for (const q of ['rare*', 'th*', 'ra* rare5', 'the ra*']) {
      const want = new Set(expected(q));
      const got = everyPage(q);
      expect(got.ids.length).toBeGreaterThan(0);
      expect(new Set(got.ids).size).toBe(got.ids.length);
      for (const id of got.ids) expect(want.has(id)).toBe(true);
    }
    // 'rare*' covers 37 words: the 16 most frequent are searched.
    expect(everyPage('rare*').ids.length).toBeLessThan(expected('rare*').length);
    expect(everyPage('th*').ids.sort()).toEqual(expected('th*')); // 'the' is its only word
  });

  it('for very common words, the hot set comes first, ranked by bm25 within it', () => {
    const hot = new Set(
      oracle.prepare('SELECT v.id FROM hot_videos h JOIN videos v USING (vid)').pluck().all(),
    );
    expect(hot.size).toBe(50);
    const r = cache.search('the', { limit: 20 });
    expect(r.ranking).toBe('popular');
    for (const h of r.hits) expect(hot.has(h.id)).toBe(true);
    const scores = r.hits.map((h) => h.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('mixed queries rank by the selective words only, exactly like bm25 over those words', () => {
    const r = cache.search('rare5 the', { limit: 50 });
    const exact = oracle
      .prepare(
        `SELECT v.id FROM videos_fts JOIN videos v ON v.vid = videos_fts.rowid WHERE videos_fts MATCH '"rare5"'
         AND videos_fts.rowid IN (SELECT rowid FROM videos_fts WHERE videos_fts MATCH '"rare5" AND "the"')
         ORDER BY bm25(videos_fts, 10, 4, 1, 2), videos_fts.rowid DESC`,
      )
      .pluck()
      .all();
    expect(r.hits.map((h) => h.id)).toEqual(exact);
  });

  it('a query with more matches than rankedMatches is ranked within the hot set first, and pages through every match', () => {
    // The same file, with a cap of 10 matches for bm25: 'odd5' (about 31 videos, every term
    // selective) goes through the hot set; 'rare5 odd5' (one match, counted) stays exact bm25, and
    // 'rare36 the' (10 matches) ranks by its selective word.
    const capped = openCache(join(t.dir, 'routes.db'), {
      commonTermDocs: 40,
      hotSize: 50,
      rankedMatches: 10,
    });
    try {
      const page = (q: string, o: SearchOptions = {}) => {
        const out: string[] = [];
        const ranking = new Set<string>();
        for (let offset = 0; offset <= 10_000; offset += 7) {
          const r = capped.search(q, { ...o, limit: 7, offset });
          ranking.add(r.ranking);
          out.push(...r.hits.map((h) => h.id));
          if (!r.hasMore) break;
        }
        return { ids: out, ranking };
      };
      for (const [q, route, o] of [
        ['odd5', 'popular', {}],
        ['odd5 -rare1', 'popular', {}],
        ['odd5', 'popular', { region: 'BR' }],
        ['rare5 odd5', 'bm25', {}],
        ['rare36', 'bm25', {}],
        ['odd5 the', 'popular', {}],
        ['rare36 the', 'bm25-selective', {}],
      ] as Array<[string, string, SearchOptions]>) {
        const want = expected(q, o);
        expect(want.length).toBeGreaterThan(0);
        const got = page(q, o);
        expect({ q, ranking: got.ranking }).toEqual({ q, ranking: new Set([route]) });
        expect(new Set(got.ids).size).toBe(got.ids.length);
        expect([...got.ids].sort()).toEqual(want);
      }
    } finally {
      capped.close();
    }
  });

  it('any input gives results or QG_QUERY_INVALID, never an SQLite error (fuzz)', () => {
    const alphabet = [
      ...'abcdefghij -"*()^:+.,;\'`~!@#$%&=[]{}<>|\\/?'.split(''),
      'NEAR',
      'AND',
      'OR',
      'NOT',
      ' the ',
      ' rare1',
      'é',
      'ß',
      '🎮',
      '\u0000',
      '\u200b',
      '\uFFFD',
      '\u0301',
      '東京',
      '\n',
    ];
    const r = rng(12_345);
    let ok = 0;
    let invalid = 0;
    for (let i = 0; i < 400; i++) {
      const len = r.int(1, 24);
      let q = '';
      for (let k = 0; k < len; k++) q += r.pick(alphabet);
      try {
        const r = cache.search(q, { limit: 5 });
        expect(Array.isArray(r.hits)).toBe(true);
        ok++;
      } catch (e) {
        if (!isQuotaGuardError(e) || (e as { code: string }).code !== 'QG_QUERY_INVALID') {
          throw new Error(`query ${JSON.stringify(q)} threw ${String(e)}`);
        }
        invalid++;
      }
    }
    expect(ok).toBeGreaterThan(50);
    expect(invalid).toBeGreaterThan(0);
    expect(() => cache.search('x'.repeat(10_240))).toThrow(
      expect.objectContaining({ code: 'QG_QUERY_INVALID' }),
    );
    expect(cache.search(`${'the '.repeat(20)}"`).ranking).toBe('popular');
  });
});

describe('search spends nothing', () => {
  it('leaves a SQLite ledger untouched and opens no socket', async () => {
    const ledgerPath = join(t.dir, 'ledger.db');
    const ledger = await openLedger(`sqlite:${ledgerPath}`);
    const budget = { key: 'yt:{default}:units', limit: 10_000, windowMs: 86_400_000 };
    await ledger.spend({ budgets: [budget], cost: 5, tag: 'before' });
    const before = await ledger.peek(budget);
    const fileHash = () =>
      ['', '-wal']
        .map((s) => {
          try {
            return createHash('sha256')
              .update(readFileSync(ledgerPath + s))
              .digest('hex');
          } catch {
            return '-';
          }
        })
        .join(':');
    const hashBefore = fileHash();

    const connect = vi.spyOn(net.Socket.prototype, 'connect');
    const tlsConnect = vi.spyOn(tls, 'connect');
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const cache = openCache(join(t.dir, 'spend.db'));
    try {
      cache.upsertVideos([video('a', { title: 'free search' })]);
      for (const q of ['free', 'search -paid', '"free search"', 'fre*']) cache.search(q);
      expect(connect).not.toHaveBeenCalled();
      expect(tlsConnect).not.toHaveBeenCalled();
      expect(fetchSpy).not.toHaveBeenCalled();
    } finally {
      cache.close();
      connect.mockRestore();
      tlsConnect.mockRestore();
      fetchSpy.mockRestore();
    }
    const after = await ledger.peek(budget);
    expect({ ...after, now: 0 }).toEqual({ ...before, now: 0 });
    expect(fileHash()).toBe(hashBefore);
    await ledger.close();
  });
});
