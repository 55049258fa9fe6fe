/**
 * The local video cache: everything the jobs ingest, in one SQLite file with an FTS5 index, so
 * user-facing search never spends the metered quota. The cache never talks to the upstream.
 *
 *   const cache = openCache('data/cache.db');
 *   cache.ingestTrendingPage({ region: 'US', fetchedAt: Date.now(), rankOffset: 0, videos });
 *   const r = cache.search('pokémon -minecraft "world record"', { limit: 20 });
 *   cache.close();
 *
 * Schema, pragmas, query language and ranking: docs/cache.md.
 */
import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { positiveIntOption } from '../../argument-checks.js';
import { InvalidArgumentError, StoreUnavailableError } from '../../errors.js';
import { closeStore, openStore, type StoreLabel, storeFailure } from '../../sqlite/index.js';
import { DEFAULT_CACHE_PATH } from '../defaults.js';
import {
  BACKSTOP_CHECKPOINT_PAGES,
  BACKSTOP_WAL_BYTES,
  type Checkpointer,
  startCheckpointer,
} from './checkpoint.js';
import { hotIsStale, hotState, rebuildHot } from './hot.js';
import { Writer } from './ingest.js';
import * as records from './records.js';
import { CACHE_FORMAT, cachePragmas, storedTokenizer } from './schema.js';
import { Searcher } from './search.js';
import { TOKENIZER_VERSION } from './tokenize.js';
import type {
  CachedVideo,
  CacheOptions,
  CacheStats,
  IngestResult,
  RefreshBatch,
  SearchOptions,
  SearchResult,
  TrendingPage,
  TrendingSighting,
  TrendingSnapshot,
  VideoResource,
} from './types.js';

const WRITES_BEFORE_WORKER = 16;

export interface Cache {
  /** The database file (`:memory:` for an in-memory cache). */
  readonly path: string;
  /** Write one page of a trending chart (its videos and its snapshot rows) in one transaction. */
  ingestTrendingPage(page: TrendingPage): IngestResult;
  /** Refresh details and statistics (full or partial resources), no snapshot, one transaction. */
  upsertVideos(videos: readonly VideoResource[]): IngestResult;
  /** Search the cache. Never spends quota; see docs/cache.md for the query language and ranking. */
  search(query: string, options?: SearchOptions): SearchResult;
  /**
   * Bring the full-text index up to date with every written row, and rebuild the hot index if it
   * is stale. Jobs call this at the end of a run. Returns the rows indexed.
   */
  flush(): number;
  /** Rebuild the hot index now. Returns how many videos it holds. */
  rebuildHotIndex(): number;
  /** The latest snapshot of each chart of `region` (every chart when omitted). */
  latestSnapshots(region?: string): TrendingSnapshot[];
  /** The latest snapshot of one chart (`category` `''`: the whole chart). */
  latestSnapshot(region: string, category?: string): TrendingSnapshot | undefined;
  /** Where and when a video was seen trending, first sighting first. */
  trendingHistory(videoId: string): TrendingSighting[];
  getVideo(id: string): CachedVideo | undefined;
  /** The backfill's work list: oldest refresh first, resumable with the returned cursor. */
  videosDueForRefresh(
    limit: number,
    afterCursor?: string | null,
    options?: { refreshedBefore?: number },
  ): RefreshBatch;
  /** Videos last refreshed at or after `sinceMs` (epoch ms). */
  countRefreshedSince(sinceMs: number): number;
  getCursor(name: string): string | undefined;
  /** Store a job cursor (`null` clears it). */
  setCursor(name: string, value: string | null): void;
  stats(): CacheStats;
  /** Catch the index up and close the file. Further calls throw. */
  close(): void;
}

const DEFAULTS = {
  indexBatch: 5000,
  commonTermDocs: 20_000,
  rankedMatches: 5000,
  hotSize: 10_000,
  cacheMiB: 16,
  busyTimeoutMs: 5000,
};

class SqliteCache implements Cache {
  readonly #writer: Writer;
  readonly #searcher: Searcher;
  readonly #now: () => number;
  readonly #hotSize: number;
  /** The cache size from which a query can need the hot index. */
  readonly #hotFrom: number;
  #checkpointer: Checkpointer | undefined;
  #writes = 0;

  readonly #db: Database.Database;
  readonly #label: StoreLabel;

  readonly path: string;

  constructor(
    db: Database.Database,
    label: StoreLabel,
    opts: Required<Omit<CacheOptions, 'now' | 'cacheMiB' | 'busyTimeoutMs' | 'create'>> & {
      now: () => number;
    },
  ) {
    this.#db = db;
    this.#label = label;
    this.path = label.path;
    this.#now = opts.now;
    this.#hotSize = opts.hotSize;
    this.#hotFrom = Math.min(opts.commonTermDocs, opts.rankedMatches);
    // Opened read-only, an index made by other word rules (another Node or ICU) cannot be remade:
    // searched as it is, its Han, Thai and katakana words would quietly go unfound.
    const tokenizer = db.readonly ? storedTokenizer(db) : TOKENIZER_VERSION;
    if (tokenizer !== undefined && tokenizer !== TOKENIZER_VERSION) {
      throw new StoreUnavailableError(
        `${label.name} '${label.path}': opening read-only failed: its search index was made with other word rules (${String(tokenizer)}, this Node has ${TOKENIZER_VERSION}) and must be made again first, which needs a writable directory (run any command that writes where it can be written)`,
        { details: { path: label.path } },
      );
    }
    this.#writer = new Writer(db, opts.indexBatch);
    this.#searcher = new Searcher(db, this.#writer, {
      commonTermDocs: opts.commonTermDocs,
      rankedMatches: opts.rankedMatches,
      hotSize: opts.hotSize,
      now: this.#now,
    });
  }

  #run<T>(fn: () => T, what = 'reading or writing'): T {
    if (!this.#db.open) throw new InvalidArgumentError('cache', 'is closed');
    try {
      return fn();
    } catch (e) {
      throw storeFailure(e, this.#label, what);
    }
  }

  ingestTrendingPage(page: TrendingPage): IngestResult {
    this.#checkpointInBackground();
    return this.#run(() => this.#writer.ingestPage(page, this.#now()));
  }

  upsertVideos(videos: readonly VideoResource[]): IngestResult {
    this.#checkpointInBackground();
    return this.#run(() => this.#writer.upsert(videos, this.#now()));
  }

  /**
   * Once a cache has written a few transactions (a long ingest, not a test or a one-page run),
   * checkpoints run in a worker thread (see checkpoint.ts).
   */
  #checkpointInBackground(): void {
    if (this.#checkpointer !== undefined || this.#db.memory || !this.#db.open) return;
    if (++this.#writes < WRITES_BEFORE_WORKER) return;
    this.#run(() => {
      this.#db.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
      this.#db.pragma(`journal_size_limit = ${BACKSTOP_WAL_BYTES}`);
    });
    this.#checkpointer = startCheckpointer(this.path);
  }

  search(query: string, options?: SearchOptions): SearchResult {
    return this.#run(() => this.#searcher.search(query, options));
  }

  /** Index rows a previous process wrote but did not index (on open). */
  catchUp(): number {
    return this.#run(() => this.#writer.catchUp());
  }

  flush(): number {
    return this.#run(() => {
      const n = this.#writer.catchUp();
      if (hotIsStale(hotState(this.#db), this.#writer.indexedUpTo(), this.#now(), this.#hotFrom)) {
        rebuildHot(this.#db, this.#hotSize, this.#now());
      }
      return n;
    });
  }

  rebuildHotIndex(): number {
    return this.#run(() => {
      this.#writer.catchUp();
      return rebuildHot(this.#db, this.#hotSize, this.#now());
    });
  }

  latestSnapshots(region?: string): TrendingSnapshot[] {
    return this.#run(() => records.latestSnapshots(this.#db, region));
  }

  latestSnapshot(region: string, category = ''): TrendingSnapshot | undefined {
    return this.#run(() => records.latestSnapshots(this.#db, region, category)[0]);
  }

  trendingHistory(videoId: string): TrendingSighting[] {
    return this.#run(() => records.trendingHistory(this.#db, videoId));
  }

  getVideo(id: string): CachedVideo | undefined {
    return this.#run(() => records.getVideo(this.#db, id));
  }

  videosDueForRefresh(
    limit: number,
    afterCursor?: string | null,
    options: { refreshedBefore?: number } = {},
  ): RefreshBatch {
    return this.#run(() =>
      records.videosDueForRefresh(this.#db, limit, afterCursor, options.refreshedBefore),
    );
  }

  countRefreshedSince(sinceMs: number): number {
    return this.#run(() => records.countRefreshedSince(this.#db, sinceMs));
  }

  getCursor(name: string): string | undefined {
    return this.#run(() => records.getCursor(this.#db, name));
  }

  setCursor(name: string, value: string | null): void {
    this.#run(() => records.setCursor(this.#db, name, value, this.#now()));
  }

  stats(): CacheStats {
    return this.#run(() => {
      const one = (sql: string) => this.#db.prepare(sql).pluck().get() as number;
      const hot = hotState(this.#db);
      let fileBytes = 0;
      if (!this.#db.memory) {
        for (const suffix of ['', '-wal']) {
          try {
            fileBytes += statSync(this.path + suffix).size;
          } catch {
            // no WAL file right now
          }
        }
      }
      const videos = one('SELECT count(*) FROM videos');
      // Only the (few) rows above the mark are read: counting those below would scan the table.
      const pending = one(
        `SELECT count(*) FROM videos WHERE vid > (SELECT value FROM meta WHERE key = 'indexed_upto')`,
      );
      return {
        videos,
        indexedVideos: videos - pending,
        snapshotRows: one('SELECT count(*) FROM snapshots'),
        regions: one('SELECT count(DISTINCT region) FROM charts'),
        hotVideos: hot.videos,
        hotBuiltAt: hot.builtAt,
        fileBytes,
        schemaVersion: this.#db.pragma('user_version', { simple: true }) as number,
      };
    });
  }

  /** Catch the index up and close; a failure (a full disk) is a typed error, and the file is closed anyway. */
  close(): void {
    if (!this.#db.open) return;
    try {
      this.#run(() => this.#writer.catchUp(), 'closing');
    } finally {
      this.#checkpointer?.stop();
      closeStore(this.#db, this.#label);
    }
  }
}

/**
 * Open (creating if needed) the cache at `path` (default `data/cache.db`; `:memory:` for a
 * throwaway one). Creates the directory, applies pragmas, runs migrations, and indexes any rows a
 * previous process wrote but did not index (e.g. after a crash).
 */
export function openCache(path: string = DEFAULT_CACHE_PATH, options: CacheOptions = {}): Cache {
  if (typeof path !== 'string' || path.length === 0) {
    throw new InvalidArgumentError('path', 'must be a file path or ":memory:"');
  }
  const opts = {
    indexBatch: positiveIntOption('options.indexBatch', options.indexBatch, DEFAULTS.indexBatch, 1_000_000),
    commonTermDocs: positiveIntOption(
      'options.commonTermDocs',
      options.commonTermDocs,
      DEFAULTS.commonTermDocs,
      1e9,
    ),
    rankedMatches: positiveIntOption(
      'options.rankedMatches',
      options.rankedMatches,
      DEFAULTS.rankedMatches,
      1e9,
    ),
    hotSize: positiveIntOption('options.hotSize', options.hotSize, DEFAULTS.hotSize, 1_000_000),
    now: options.now ?? Date.now,
  };
  const cacheMiB = positiveIntOption('options.cacheMiB', options.cacheMiB, DEFAULTS.cacheMiB, 65_536);
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULTS.busyTimeoutMs;
  const { db, label } = openStore(CACHE_FORMAT, {
    path,
    busyTimeoutMs,
    ...(options.create !== undefined ? { create: options.create } : {}),
    pragmas: (d) => cachePragmas(d, { cacheMiB }),
  });
  try {
    const cache = new SqliteCache(db, label, opts);
    cache.catchUp();
    return cache;
  } catch (e) {
    try {
      closeStore(db, label);
    } catch {
      // the first failure is the one to report
    }
    throw storeFailure(e, label, 'opening');
  }
}
