/**
 * Cache schema and pragmas. The schema version lives in `PRAGMA user_version`; migrations are
 * forward-only and run on open (src/sqlite), each in its own transaction. Reasons for every choice:
 * docs/cache.md.
 */
import type { Database } from 'better-sqlite3';
import { STORES, type StoreFormat } from '../../sqlite/index.js';
import { CacheSchemaError } from './errors.js';
import { TOKENIZER_VERSION } from './tokenize.js';

/** FTS5 column order; bm25 weights below follow it (title above tags above description). */
export const FTS_COLUMNS = ['title', 'tags', 'description', 'channel_title'] as const;
const BM25_WEIGHTS = [10, 4, 1, 2] as const;
export const BM25 = (table: string): string => `bm25(${table}, ${BM25_WEIGHTS.join(', ')})`;

/**
 * `meta.index_generation` counts changes to the indexes that leave `indexed_upto` where it is (a
 * hot index rebuilt, an indexed row's text re-indexed, both indexes remade for other word rules,
 * after which the catch-up brings the mark back). A searcher remembers what it learnt about
 * the indexes until the mark or this count moves, so it is stored: a handle on the same file in
 * another process (or the same one) sees the change at its next search.
 */
export const BUMP_INDEX_GENERATION = `INSERT INTO meta (key, value) VALUES ('index_generation', 1)
  ON CONFLICT (key) DO UPDATE SET value = value + 1`;
export const INDEX_GENERATION = `SELECT value FROM meta WHERE key = 'index_generation'`;

/** Version 1's index: FTS5 read and folded the text itself. */
function ftsTableV1(name: string): string {
  return `CREATE VIRTUAL TABLE ${name} USING fts5(${FTS_COLUMNS.join(', ')},
    content = 'videos', content_rowid = 'vid', tokenize = 'unicode61 remove_diacritics 2')`;
}

/**
 * Since version 2: the index holds the tokens of tokenize.ts (written as space-separated words,
 * which FTS5's `ascii` tokenizer takes as they are). Contentless, because the indexed text is not
 * the stored text; a row leaves the index with FTS5's 'delete' and its old index text.
 */
function ftsTable(name: string): string {
  return `CREATE VIRTUAL TABLE ${name} USING fts5(${FTS_COLUMNS.join(', ')},
    content = '', tokenize = 'ascii')`;
}

/** An index batch of thousands of rows fits in one in-memory hash, so it becomes one segment. */
const HASHSIZE = `INSERT INTO videos_fts (videos_fts, rank) VALUES ('hashsize', ${16 * 2 ** 20})`;

/**
 * The migrations, in order. Version 1's `runs` table was written by releases before 0.2.0, which
 * logged every job run here as well; the run history (src/history/) is the one log now, and the
 * table stays so that every file migrates the same way.
 */
const MIGRATIONS: readonly string[] = [
  // 1: videos, trending snapshots, job state, the full-text index and the hot index.
  `
  CREATE TABLE videos (
    vid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    channel_id TEXT,
    channel_title TEXT,
    title TEXT,
    description TEXT,
    tags TEXT,
    category_id TEXT,
    default_language TEXT,
    default_audio_language TEXT,
    published_at INTEGER,
    duration_s INTEGER,
    view_count INTEGER,
    like_count INTEGER,
    comment_count INTEGER,
    first_seen INTEGER NOT NULL,
    last_refreshed INTEGER NOT NULL
  );
  CREATE INDEX videos_refresh ON videos(last_refreshed);

  CREATE TABLE snapshots (
    region TEXT NOT NULL,
    category TEXT NOT NULL,
    fetched_at INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    vid INTEGER NOT NULL REFERENCES videos(vid),
    PRIMARY KEY (region, category, fetched_at, rank)
  ) WITHOUT ROWID;
  CREATE INDEX snapshots_video ON snapshots(vid, region, fetched_at);

  CREATE TABLE charts (
    region TEXT NOT NULL,
    category TEXT NOT NULL,
    first_fetched_at INTEGER NOT NULL,
    last_fetched_at INTEGER NOT NULL,
    PRIMARY KEY (region, category)
  ) WITHOUT ROWID;

  CREATE TABLE cursors (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    job TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    finished_at INTEGER NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'stopped', 'failed')),
    pages INTEGER,
    videos INTEGER,
    units INTEGER,
    detail TEXT
  );
  CREATE INDEX runs_job ON runs(job, started_at);

  CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
  ) WITHOUT ROWID;
  INSERT INTO meta(key, value) VALUES ('indexed_upto', 0);

  CREATE TABLE hot_videos (vid INTEGER PRIMARY KEY);

  ${ftsTableV1('videos_fts')};
  ${ftsTableV1('hot_fts')};
  ${HASHSIZE};
  `,
  // 2: one tokenization for index and query (tokenize.ts). The old index's tokens are not the new
  // ones, so both indexes are recreated empty and the index mark goes back to 0: the rows are
  // re-indexed from `videos` on open, by the usual catch-up.
  `
  DROP TABLE videos_fts;
  DROP TABLE hot_fts;
  ${ftsTable('videos_fts')};
  ${ftsTable('hot_fts')};
  ${HASHSIZE};
  DELETE FROM hot_videos;
  DELETE FROM meta WHERE key IN ('hot_built_at', 'hot_built_mark');
  UPDATE meta SET value = 0 WHERE key = 'indexed_upto';
  INSERT INTO meta (key, value) VALUES ('tokenizer', '${TOKENIZER_VERSION}');
  `,
  // 3: a video's regions on its row (comma-separated), so a search hit reads one row, not also
  // the snapshots index (a random page each on a large cache).
  `
  ALTER TABLE videos ADD COLUMN regions TEXT;
  UPDATE videos SET regions = (SELECT group_concat(region, ',') FROM
    (SELECT DISTINCT region FROM snapshots s WHERE s.vid = videos.vid ORDER BY region));
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** The cache's file format for the shared SQLite opener (src/sqlite). */
export const CACHE_FORMAT: StoreFormat = {
  ...STORES.cache,
  migrations: MIGRATIONS,
  changes: [
    'videos, trending snapshots, job state and the search indexes',
    'one tokenization for index and query: both indexes made again',
    "each video's regions on its row",
  ],
  unreadable: (message, options) => new CacheSchemaError(message, options),
};

/** Bytes of the file read through a memory map (SQLite lowers it to its build's maximum). */
const MMAP_BYTES = 2 ** 31;

/**
 * The cache's own connection settings, after the shared ones (busy timeout, WAL, synchronous =
 * NORMAL, ~40 MB between checkpoints; docs/sqlite.md). Once the cache writes, a worker takes over
 * checkpointing (checkpoint.ts).
 */
export function cachePragmas(db: Database, opts: { cacheMiB: number }): void {
  db.pragma('foreign_keys = ON');
  db.pragma(`cache_size = -${Math.max(2, Math.floor(opts.cacheMiB)) * 1024}`);
  db.pragma('temp_store = MEMORY');
  // Reads straight from the OS's copy of the file instead of copying each page into the page cache:
  // a search touches a few hundred pages it has not read before (a word's index entries, the
  // matches' column sizes for bm25, the hits' rows), and copying them was about a quarter of a rare
  // word's search's CPU (docs/benchmarks.md). SQLite caps it at its build's maximum (2 GiB).
  db.pragma(`mmap_size = ${MMAP_BYTES}`);
}

/**
 * ICU's word dictionaries come with Node: a cache indexed under another ICU (or other rules) would
 * hold tokens a query no longer produces. Such a cache's indexes are emptied and the mark reset,
 * so the rows are re-indexed from `videos` by the catch-up on open, as after the migration to 2.
 */
/** The word rules the file's search index was made with (undefined before the first index). */
export function storedTokenizer(db: Database): unknown {
  return db.prepare(`SELECT value FROM meta WHERE key = 'tokenizer'`).pluck().get();
}

export function resetIndexIfTokenizerChanged(db: Database): void {
  const stored = () => storedTokenizer(db);
  if (stored() === TOKENIZER_VERSION) return;
  db.transaction(() => {
    if (stored() === TOKENIZER_VERSION) return;
    db.exec(`
      INSERT INTO videos_fts (videos_fts) VALUES ('delete-all');
      INSERT INTO hot_fts (hot_fts) VALUES ('delete-all');
      DELETE FROM hot_videos;
      DELETE FROM meta WHERE key IN ('hot_built_at', 'hot_built_mark');
      UPDATE meta SET value = 0 WHERE key = 'indexed_upto';`);
    db.prepare(
      `INSERT INTO meta (key, value) VALUES ('tokenizer', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    ).run(TOKENIZER_VERSION);
    // The catch-up brings the mark back where it was: another handle's searcher would go on
    // with what it learnt about the old indexes (a hot index it saw built, now empty).
    db.prepare(BUMP_INDEX_GENERATION).run();
  }).immediate();
}
