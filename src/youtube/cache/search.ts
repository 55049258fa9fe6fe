/**
 * Search over the local cache. Queries are routed by how many videos each term is in (counted
 * with a bounded scan, so counting never costs more than ranking a selective term):
 *
 * - every term selective (in at most `commonTermDocs` videos) and at most `rankedMatches` matches:
 *   exact bm25 with column weights;
 * - some terms very common: the common ones only filter, bm25 over the selective ones ranks
 *   (bm25 has to visit every match of every term to weigh it, and a very common word weighs
 *   almost nothing anyway);
 * - every term very common, or more than `rankedMatches` matches (bm25 scores every match, about
 *   a microsecond each): bm25 within the hot index, then the other matches newest first.
 *
 * Excluded terms never enter a bm25 call over the whole cache: they only filter.
 * See docs/cache.md for the ranking users get in each case.
 */
import type { Database, Statement } from 'better-sqlite3';
import { rebuildHot } from './hot.js';
import type { Writer } from './ingest.js';
import { matchExpression, type ParsedQuery, parseQuery, type QueryTerm } from './query.js';
import { BM25, INDEX_GENERATION } from './schema.js';
import {
  type Filters,
  filterSql,
  HIT_COLUMNS,
  HIT_SELECT,
  HIT_SELECT_V,
  type HitRow,
  type Params,
  type Scored,
  validateOptions,
} from './search-sql.js';
import { hitSnippet } from './snippet.js';
import type { SearchHit, SearchOptions, SearchRanking, SearchResult } from './types.js';

// better-sqlite3 binds JS numbers as REAL, and FTS5 ignores a REAL `rowid = ?` constraint next to
// MATCH (it returns every match): a rowid bound into an FTS5 query goes through CAST(? AS INTEGER).

/** At most this many candidate videos are checked one by one when a filter drives a common-word search. */
const FILTER_DRIVEN_MAX = 2000;

/** A broad prefix (in more than `commonTermDocs` videos) stands for its most frequent words. */
const BROAD_COMPLETIONS = 16;

/** A narrow prefix is searched as the OR of all its words when it has at most this many. */
const NARROW_COMPLETIONS = 64;

/** Words whose hot-index documents are looked up in one statement, at most. */
const HOT_LOOKUPS = 8;

/**
 * A word estimated from the hot index at up to this many times `commonTermDocs` videos is counted
 * with FTS5's vocabulary (it reads the whole list: cheaper than the bounded count up to about
 * three times the cap at a million videos); one estimated higher, with the bounded count.
 */
const VOCAB_COUNTED = 2;

/** Counts of at most this many words (and as many prefixes and queries) are kept between searches. */
const REMEMBERED_MAX = 50_000;

interface PrefixInfo {
  /** Videos with a word starting with the prefix (at most the sum over its words). */
  docs: number;
  /** The words to search instead of the prefix; null: search the prefix itself. */
  completions: string[] | null;
}

/** The smallest string greater than every string that starts with `p` (code point order = UTF-8 order). */
function prefixEnd(p: string): string {
  const cps = Array.from(p);
  const last = cps.pop()!.codePointAt(0)!;
  return last >= 0x10ffff ? `${p}\u{10ffff}` : cps.join('') + String.fromCodePoint(last + 1);
}

export interface SearcherOptions {
  commonTermDocs: number;
  rankedMatches: number;
  hotSize: number;
  now: () => number;
  /** Words, prefixes and queries whose counts are kept, each; default REMEMBERED_MAX. */
  remembered?: number;
}

export class Searcher {
  readonly #statements = new Map<string, Statement>();
  readonly #counts = new Map<string, number>();
  /** Matches of whole expressions, counted up to `rankedMatches + 1`. */
  readonly #matchCounts = new Map<string, number>();
  /** Words whose entry in `counts` is an estimate (`estimateFromHot`), not a count. */
  readonly #estimated = new Set<string>();
  readonly #prefixes = new Map<string, PrefixInfo>();
  /** The hot index's documents of the current query's words (`prefetchHot`). */
  readonly #inHot = new Map<string, number>();
  #countsKey = '';
  /** Videos in the hot index (read once per index generation). */
  #hotVideos: number | undefined;
  /** The hot index was seen built (checked once per index generation). */
  #hotBuilt = false;
  /** `indexed_upto`, read once per search (`#refresh`). */
  #mark = 0;

  readonly #db: Database;
  readonly #writer: Writer;
  readonly #opts: SearcherOptions;

  constructor(db: Database, writer: Writer, opts: SearcherOptions) {
    this.#db = db;
    this.#writer = writer;
    this.#opts = opts;
    // The indexes' vocabularies with document counts (per connection, nothing stored).
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.hot_vocab USING fts5vocab(main, hot_fts, row);
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.main_vocab USING fts5vocab(main, videos_fts, row);`);
  }

  search(query: string, options: SearchOptions = {}): SearchResult {
    const started = performance.now();
    const { limit, offset, filters, highlight } = validateOptions(options);
    const parsed = parseQuery(query);
    this.#refresh();
    const n = limit + 1;
    const { rows, ranking, info } = this.#rank(parsed, filters, n, offset);
    const hits = this.#decorate(rows.slice(0, limit), parsed.include, highlight, info);
    return { hits, hasMore: rows.length > limit, ranking, took: performance.now() - started };
  }

  /**
   * What a term costs bm25, in documents: a word's documents, counted up to `commonTermDocs + 1`
   * (a bounded scan) or estimated from the hot index; a prefix's (see `prefix`). A phrase costs
   * what all its words cost together: bm25 reads the whole match list of each, however rare the
   * phrase is (`"of the rarest"`; a Thai or katakana word is a phrase of several letter pairs, each
   * in thousands of videos).
   */
  #termDocs(term: QueryTerm): number {
    return this.#tokenDocs(term).reduce((sum, d) => sum + d, 0);
  }

  /**
   * Reads the index mark once for the search; when the index changed since the last one, drops
   * what was learnt about it (counts, prefixes, the hot index's size). The stored generation
   * (`INDEX_GENERATION`) tells of changes that leave the mark, made through any handle.
   */
  #refresh(): void {
    // One statement for what every search needs to know first: the index mark, the newest row
    // (pages written since the last batch become searchable now) and the stored generation.
    const state = this.#stmt(
      `SELECT (SELECT value FROM meta WHERE key = 'indexed_upto'), (SELECT max(vid) FROM videos),
              (${INDEX_GENERATION})`,
    ).raw();
    let [mark, top, stored] = state.get() as [number | null, number | null, number | null];
    if ((top ?? 0) > (mark ?? 0) && this.#writer.catchUp() > 0) {
      [mark, top, stored] = state.get() as [number | null, number | null, number | null];
    }
    this.#mark = mark ?? 0;
    const key = `${this.#mark}:${this.#writer.generation}:${stored ?? 0}`;
    if (key !== this.#countsKey) {
      // Counts over the cap stay valid (videos are never removed); the others may have grown.
      for (const [k, v] of this.#counts) if (v <= this.#opts.commonTermDocs) this.#counts.delete(k);
      for (const [k, v] of this.#matchCounts) if (v <= this.#opts.rankedMatches) this.#matchCounts.delete(k);
      this.#estimated.clear();
      this.#prefixes.clear();
      this.#hotVideos = undefined;
      this.#hotBuilt = false;
      this.#countsKey = key;
    }
    // Bounded on every search, not only when the index changed: a cache that is only searched (a
    // read-only file, a process that never ingests) keeps its mark, and would otherwise remember
    // every word, prefix and query it was ever asked about.
    const max = this.#opts.remembered ?? REMEMBERED_MAX;
    if (this.#counts.size > max) {
      this.#counts.clear();
      this.#estimated.clear();
    }
    if (this.#matchCounts.size > max) this.#matchCounts.clear();
    if (this.#prefixes.size > max) this.#prefixes.clear();
  }

  /** Per token of a term: its documents (a word's counted or estimated, a prefix's; see `#termDocs`). */
  #tokenDocs(term: QueryTerm): number[] {
    return term.tokens.map((tok, i) => {
      if (term.prefix && i === term.tokens.length - 1) return this.#prefix(tok).docs;
      const fts = `"${tok}"`;
      let c = this.#counts.get(fts);
      if (c === undefined) {
        const cap = this.#opts.commonTermDocs;
        const estimate = this.#estimateFromHot(tok);
        if (estimate !== undefined && estimate <= cap / 2) {
          c = estimate;
          this.#estimated.add(fts);
        } else if (estimate !== undefined && estimate <= VOCAB_COUNTED * cap) {
          // Probably in fewer than a few times `commonTermDocs` videos: FTS5's vocabulary counts
          // the word's documents inside FTS5 (about 16 ns per document at a million videos),
          // where the bounded count below returns each match as a row (about 45 ns each, up to
          // the cap). Capped as that count is, so every decision sees the same number.
          c = Math.min(
            (this.#stmt('SELECT doc FROM temp.main_vocab WHERE term = ?').pluck().get(tok) as
              | number
              | undefined) ?? 0,
            cap + 1,
          );
        } else {
          c = this.#stmt('SELECT count(*) FROM (SELECT 1 FROM videos_fts WHERE videos_fts MATCH ? LIMIT ?)')
            .pluck()
            .get(fts, cap + 1) as number;
        }
        this.#counts.set(fts, c);
      }
      return c;
    });
  }

  /**
   * How many videos bm25 would score for the included terms `selective` (and the whole expression
   * `full`), up to `rankedMatches + 1`. An AND matches at most what its rarest term matches, a
   * phrase at most what its rarest word does: that bound, from the words' counts or estimates, is
   * taken when it is at most half of `rankedMatches` (an estimate is rough); a word alone, when
   * its count is exact. Otherwise the whole expression's matches are counted, up to the cap (one
   * bounded scan: FTS5 finds matches without scoring them).
   */
  #matchesToRank(q: ParsedQuery, selective: QueryTerm[], full: string): number {
    const cap = this.#opts.rankedMatches;
    const bound = Math.min(...selective.map((t) => Math.min(...this.#tokenDocs(t))));
    if (bound <= cap / 2) return bound;
    const only = q.include.length === 1 && q.exclude.length === 0 ? q.include[0]! : undefined;
    if (only !== undefined && only.tokens.length === 1 && !only.prefix && !this.#estimated.has(only.fts)) {
      return bound;
    }
    let c = this.#matchCounts.get(full);
    if (c === undefined) {
      c =
        this.#estimateMatchesFromHot(matchExpression(q.include, q.exclude)) ??
        (this.#stmt('SELECT count(*) FROM (SELECT 1 FROM videos_fts WHERE videos_fts MATCH ? LIMIT ?)')
          .pluck()
          .get(full, cap + 1) as number);
      this.#matchCounts.set(full, c);
    }
    return c;
  }

  /**
   * A query's matches estimated from its matches in the hot index (`hotFull`: a sample; counting
   * there reads lists a hundredth as long), when that estimate is below a quarter of
   * `rankedMatches` (a word's own estimate, `estimateFromHot`, has its own margin): two words that are each in thousands of
   * videos are seldom in many together, and this spares reading both lists to find out.
   */
  #estimateMatchesFromHot(hotFull: string): number | undefined {
    const total = this.#mark;
    if (total <= this.#opts.commonTermDocs) return undefined;
    const hotVideos = this.#hotCount();
    if (hotVideos < 1000) return undefined;
    const inHot = this.#stmt('SELECT count(*) FROM hot_fts WHERE hot_fts MATCH ?')
      .pluck()
      .get(hotFull) as number;
    const estimate = Math.ceil(((inHot + 1) * total) / hotVideos);
    return estimate <= this.#opts.rankedMatches / 4 ? estimate : undefined;
  }

  /**
   * A word's document count estimated from the hot index (a sample of 10,000 videos); undefined on
   * a small cache or without a hot index. Taken for the count (`tokenDocs`) when well below
   * `commonTermDocs`: counting a mid-frequency word's matches in the whole index reads as much as
   * ranking them, and bm25 reads them again. Above half of the threshold the word is counted
   * exactly: the hot set is biased towards trending and popular videos, so only a margin skips
   * the count. A word it misjudges costs what the plain query would: searched alone and estimated
   * above half of `rankedMatches`, its matches are counted again (`matchesToRank`); estimated
   * below, it is ranked by bm25 over all its matches; in a query of several words, a word in
   * somewhat more than `commonTermDocs` videos is weighed by bm25 instead of only filtering.
   */
  #estimateFromHot(token: string): number | undefined {
    if (!this.#hotSampled()) return undefined;
    const inHot = this.#inHot.get(token) ?? (this.#hotDocs([token])[0] as number);
    return Math.ceil(((inHot + 1) * this.#mark) / this.#hotCount());
  }

  /** Whether word counts may be estimated from the hot index (a large cache with a hot index). */
  #hotSampled(): boolean {
    return this.#mark > this.#opts.commonTermDocs && this.#hotCount() >= 1000;
  }

  /**
   * The hot index's documents of each token, in one statement (counting a word's matches there
   * costs less than a look-up in its vocabulary table, which reads every position too).
   */
  #hotDocs(tokens: readonly string[]): number[] {
    const one = '(SELECT count(*) FROM hot_fts WHERE hot_fts MATCH ?)';
    return this.#stmt(`SELECT ${tokens.map(() => one).join(', ')}`)
      .raw()
      .get(...tokens.map((t) => `"${t}"`)) as number[];
  }

  /**
   * Looks up the hot index's documents of every word of the query not counted yet, together
   * (`estimateFromHot` reads them): one statement, not one per word.
   */
  #prefetchHot(q: ParsedQuery): void {
    this.#inHot.clear();
    const want: string[] = [];
    for (const t of [...q.include, ...q.exclude]) {
      t.tokens.forEach((tok, i) => {
        if (t.prefix && i === t.tokens.length - 1) return;
        if (!this.#counts.has(`"${tok}"`) && !want.includes(tok)) want.push(tok);
      });
    }
    if (want.length < 2 || !this.#hotSampled()) return;
    for (let i = 0; i < want.length; i += HOT_LOOKUPS) {
      const chunk = want.slice(i, i + HOT_LOOKUPS);
      const docs = this.#hotDocs(chunk);
      for (let k = 0; k < chunk.length; k++) this.#inHot.set(chunk[k]!, docs[k]!);
    }
  }

  /**
   * FTS5 runs a prefix query by merging the lists of every word with that prefix, positions
   * included, before it returns a row, and bm25 makes it do that twice: a short prefix of common
   * words costs seconds on a large cache, whatever the LIMIT. So a prefix is expanded into the words
   * it stands for, with their document counts from the vocabulary (which only counts), and searched
   * as an OR of those words, which FTS5 streams:
   * - the hot index (a sample) first: a prefix clearly too broad there is not looked up further;
   * - then the whole index's vocabulary: a prefix in at most `commonTermDocs` videos becomes the OR
   *   of all its words (the same matches as the prefix), a broader one the OR of its
   *   BROAD_COMPLETIONS most frequent words (see docs/cache.md).
   * `completions: null` keeps the plain prefix (small caches, or very many rare words).
   */
  #prefix(token: string): PrefixInfo {
    const known = this.#prefixes.get(token);
    if (known) return known;
    const total = this.#mark;
    const cap = this.#opts.commonTermDocs;
    let info: PrefixInfo = { docs: 0, completions: null };
    if (total > cap) {
      const range = [token, prefixEnd(token)];
      const hotSize = this.#hotCount();
      const inHot = this.#stmt('SELECT term, doc FROM temp.hot_vocab WHERE term >= ? AND term < ?')
        .raw()
        .all(...range) as Array<[string, number]>;
      const estimate = hotSize === 0 ? 0 : (inHot.reduce((sum, [, d]) => sum + d, 0) * total) / hotSize;
      const words =
        estimate > 2 * cap
          ? inHot
          : (this.#stmt('SELECT term, doc FROM temp.main_vocab WHERE term >= ? AND term < ?')
              .raw()
              .all(...range) as Array<[string, number]>);
      const docs = estimate > 2 * cap ? Math.round(estimate) : words.reduce((sum, [, d]) => sum + d, 0);
      words.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      if (docs > cap) info = { docs, completions: words.slice(0, BROAD_COMPLETIONS).map(([w]) => w) };
      else if (words.length <= NARROW_COMPLETIONS) info = { docs, completions: words.map(([w]) => w) };
      else info = { docs, completions: null };
    }
    this.#prefixes.set(token, info);
    return info;
  }

  /** The FTS5 string of a term for the whole-cache index: a broad prefix becomes its completions. */
  #mainFts(term: QueryTerm): string {
    if (!term.prefix) return term.fts;
    const { completions } = this.#prefix(term.tokens[term.tokens.length - 1]!);
    if (completions === null) return term.fts;
    const head = term.tokens.slice(0, -1);
    const alternatives = completions.map((c) => `"${[...head, c].join(' ').replaceAll('"', '""')}"`);
    return alternatives.length === 0 ? '""' : `(${alternatives.join(' OR ')})`;
  }

  #isCommon(term: QueryTerm): boolean {
    return this.#termDocs(term) > this.#opts.commonTermDocs;
  }

  #rank(
    q: ParsedQuery,
    f: Filters,
    n: number,
    offset: number,
  ): { rows: Scored[]; ranking: SearchRanking; info?: Map<number, HitRow> } {
    this.#prefetchHot(q);
    const main = (t: QueryTerm): QueryTerm => ({ ...t, fts: this.#mainFts(t) });
    const selective = q.include.filter((t) => !this.#isCommon(t)).map(main);
    const full = matchExpression(q.include.map(main), q.exclude.map(main));
    if (selective.length === 0 || this.#matchesToRank(q, selective, full) > this.#opts.rankedMatches) {
      const hotFull = matchExpression(q.include, q.exclude);
      return { rows: this.#rankPopular(hotFull, full, f, n, offset), ranking: 'popular' };
    }
    const commonInclude = selective.length < q.include.length;
    const { sql, params } = filterSql('videos_fts', f);
    // The page's size written into the statement: SQLite keeps only that many rows while it sorts
    // when the LIMIT is a literal (measured: a tenth of a rare word's ranking). `n` is at most
    // MAX_LIMIT + 1, so there are few such statements.
    const page = `LIMIT ${n}${offset > 0 ? ' OFFSET @offset' : ''}`;
    if (!commonInclude && !q.exclude.some((t) => this.#isCommon(t))) {
      // Exact bm25 over everything (excluded selective terms are cheap for bm25 to weigh).
      return {
        ...this.#withRows(
          `SELECT rowid AS vid, ${BM25('videos_fts')} AS score FROM videos_fts
           WHERE videos_fts MATCH @match ${sql} ORDER BY score, rowid DESC ${page}`,
          { ...params, match: full, ...(offset > 0 ? { offset } : {}) },
        ),
        ranking: 'bm25',
      };
    }
    // The selective terms bound the work: the full expression's matches (FTS5 intersects by seeking
    // the common terms' lists) are the allowed set; bm25 over the selective terms orders it, and
    // scores only the allowed matches (`+rowid`: a filter on each match, not one FTS5 query per
    // allowed row, which would read the selective terms' lists again for each).
    return {
      ...this.#withRows(
        `SELECT rowid AS vid, ${BM25('videos_fts')} AS score FROM videos_fts
         WHERE videos_fts MATCH @selective
           AND +rowid IN (SELECT rowid FROM videos_fts WHERE videos_fts MATCH @match ${sql})
         ORDER BY score, rowid DESC ${page}`,
        { ...params, selective: matchExpression(selective), match: full, ...(offset > 0 ? { offset } : {}) },
      ),
      ranking: commonInclude ? 'bm25-selective' : 'bm25',
    };
  }

  /**
   * Runs a ranking statement (`vid`, `score`, best first) with the hits' rows read in the same
   * statement: one statement per search instead of two.
   */
  #withRows(ranked: string, params: Params): { rows: Scored[]; info: Map<number, HitRow> } {
    const out = this.#stmt(
      `SELECT ${HIT_SELECT_V}, r.score
       FROM (${ranked}) r JOIN videos v ON v.vid = r.vid ORDER BY r.score, r.vid DESC`,
    )
      .raw()
      .all(params) as Array<[...HitRow, number]>;
    const rows: Scored[] = [];
    const info = new Map<number, HitRow>();
    for (const row of out) {
      rows.push({ vid: row[0], score: row[HIT_COLUMNS.length] });
      info.set(row[0], row as unknown as HitRow);
    }
    return { rows, info };
  }

  /**
   * Every term very common: bm25 within the hot set first, then the other matches newest first.
   * `hotFull` is the expression for the hot index, `full` the one for the whole cache.
   */
  #rankPopular(hotFull: string, full: string, f: Filters, n: number, offset: number): Scored[] {
    this.#ensureHot();
    const hot = filterSql('hot_fts', f);
    const hotRows = this.#stmt(
      `SELECT rowid AS vid, ${BM25('hot_fts')} AS score FROM hot_fts
       WHERE hot_fts MATCH @match ${hot.sql} ORDER BY score, rowid DESC LIMIT @n OFFSET @offset`,
    ).all({ ...hot.params, match: hotFull, n, offset }) as Scored[];
    if (hotRows.length >= n) return hotRows;
    const hotTotal =
      hotRows.length > 0 || offset === 0
        ? offset + hotRows.length
        : (this.#stmt(`SELECT count(*) FROM hot_fts WHERE hot_fts MATCH @match ${hot.sql}`)
            .pluck()
            .get({ ...hot.params, match: hotFull }) as number);
    const skip = Math.max(0, offset - hotTotal);
    const need = n - hotRows.length;
    const rest = this.#fillNewestFirst(full, f, need, skip);
    return [...hotRows, ...rest.map((vid) => ({ vid, score: 0 }))];
  }

  /** Matches outside the hot set, newest first. */
  #fillNewestFirst(full: string, f: Filters, need: number, skip: number): number[] {
    const candidates = this.#filterCandidates(f);
    if (candidates === null) {
      const { sql, params } = filterSql('videos_fts', f);
      return this.#stmt(
        `SELECT rowid FROM videos_fts WHERE videos_fts MATCH @match
           AND rowid NOT IN (SELECT vid FROM hot_videos) ${sql}
         ORDER BY rowid DESC LIMIT @need OFFSET @skip`,
      )
        .pluck()
        .all({ ...params, match: full, need, skip }) as number[];
    }
    // A narrow filter: check its few candidates one by one instead of walking a huge match list.
    const matches = this.#stmt(
      `SELECT count(*) FROM videos_fts WHERE videos_fts MATCH ? AND rowid = CAST(? AS INTEGER)
         AND NOT EXISTS (SELECT 1 FROM hot_videos WHERE vid = ?)`,
    ).pluck();
    const out: number[] = [];
    for (const vid of candidates) {
      if (out.length >= need) break;
      if ((matches.get(full, vid, vid) as number) === 0) continue;
      if (skip > 0) skip--;
      else out.push(vid);
    }
    return out;
  }

  /**
   * The videos a trending filter (region, since) allows, newest first, when there are few of them;
   * null when there is no such filter or too many candidates (then the match list is walked).
   */
  #filterCandidates(f: Filters): number[] | null {
    if (f.region === null && f.since === null) return null;
    const cap = FILTER_DRIVEN_MAX + 1;
    const seen = new Set<number>();
    const charts = this.#stmt(
      'SELECT region, category FROM charts WHERE (@region IS NULL OR region = @region)',
    ).all({
      region: f.region,
    }) as Array<{ region: string; category: string }>;
    const inChart = this.#stmt(
      'SELECT DISTINCT vid FROM snapshots WHERE region = ? AND category = ? AND fetched_at >= ? LIMIT ?',
    ).pluck();
    for (const c of charts) {
      for (const vid of inChart.all(c.region, c.category, f.since ?? 0, cap) as number[]) seen.add(vid);
      if (seen.size >= cap) return null;
    }
    const vids = [...seen].sort((a, b) => b - a);
    if (f.channel === null) return vids;
    const ok = this.#stmt('SELECT count(*) FROM videos WHERE vid = ? AND channel_id = ?').pluck();
    return vids.filter((vid) => (ok.get(vid, f.channel) as number) > 0);
  }

  /** Videos in the hot index, built first when it never was (read once per index generation). */
  #hotCount(): number {
    this.#ensureHot();
    this.#hotVideos ??= this.#stmt('SELECT count(*) FROM hot_videos').pluck().get() as number;
    return this.#hotVideos;
  }

  /** Builds the hot index when it was never built (one cached lookup per index generation). */
  #ensureHot(): void {
    if (this.#hotBuilt) return;
    const builtAt = this.#stmt("SELECT value FROM meta WHERE key = 'hot_built_at'").pluck().get();
    // Read-only (a read-only directory): search without the hot index rather than write it.
    if ((builtAt === undefined || builtAt === null) && !this.#db.readonly) {
      rebuildHot(this.#db, this.#opts.hotSize, this.#opts.now());
      this.#hotVideos = undefined;
    }
    this.#hotBuilt = true;
  }

  /**
   * The hits with their snippets. Their rows (with their regions) are those the ranking statement
   * read (`withRows`), or else read in one statement for the whole page, as arrays (better-sqlite3
   * builds an object per row otherwise, a tenth of the rows' cost).
   */
  #decorate(
    rows: Scored[],
    terms: readonly QueryTerm[],
    marks: [string, string],
    read?: Map<number, HitRow>,
  ): SearchHit[] {
    if (rows.length === 0) return [];
    let info = read;
    if (info === undefined) {
      info = new Map<number, HitRow>();
      for (const v of this.#stmt(
        `SELECT ${HIT_SELECT} FROM videos WHERE vid IN (SELECT value FROM json_each(?))`,
      )
        .raw()
        .all(JSON.stringify(rows.map((r) => r.vid))) as HitRow[]) {
        info.set(v[0], v);
      }
    }
    return rows.map(({ vid, score }) => {
      const [, id, title, channelId, channelTitle, description, tags, viewCount, publishedAt, regions] =
        info!.get(vid)!;
      return {
        id,
        title: title ?? '',
        channelId,
        channelTitle: channelTitle ?? '',
        snippet: hitSnippet({ description, title, tags, channelTitle }, terms, marks),
        score: score === 0 ? 0 : -score,
        regions: regions === null || regions === '' ? [] : regions.split(',').sort(),
        viewCount,
        publishedAt,
      };
    });
  }

  #stmt(sql: string): Statement {
    let s = this.#statements.get(sql);
    if (s === undefined) {
      s = this.#db.prepare(sql);
      this.#statements.set(sql, s);
    }
    return s;
  }
}
