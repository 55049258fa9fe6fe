/**
 * Cache schema and pragmas. The schema version lives in `PRAGMA user_version`; migrations are
 * forward-only and run on open (src/sqlite), each in its own transaction. Reasons for every choice:
 * docs/cache.md.
 */
import type { Database } from 'better-sqlite3';
import { APPLICATION_ID, type StoreFormat } from '../sqlite/index.js';
import { CacheSchemaError } from './errors.js';

/** FTS5 column order; bm25 weights below follow it (title above tags above description). */
export const FTS_COLUMNS = ['title', 'tags', 'description', 'channel_title'] as const;
export const BM25_WEIGHTS = [10, 4, 1, 2] as const;
export const BM25 = (table: string): string => `bm25(${table}, ${BM25_WEIGHTS.join(', ')})`;

const TOKENIZE = `tokenize = 'unicode61 remove_diacritics 2'`;

function ftsTable(name: string): string {
  return `CREATE VIRTUAL TABLE ${name} USING fts5(${FTS_COLUMNS.join(', ')},
    content = 'videos', content_rowid = 'vid', ${TOKENIZE})`;
}

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

  ${ftsTable('videos_fts')};
  ${ftsTable('hot_fts')};
  -- An index batch of thousands of rows fits in one in-memory hash, so it becomes one segment.
  INSERT INTO videos_fts (videos_fts, rank) VALUES ('hashsize', ${16 * 2 ** 20});
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** The cache's file format for the shared SQLite opener (src/sqlite). */
export const CACHE_FORMAT: StoreFormat = {
  name: 'cache',
  article: 'a quota-guard cache',
  applicationId: APPLICATION_ID.cache,
  tables: ['videos', 'meta'],
  migrations: MIGRATIONS,
  unreadable: (message, options) => new CacheSchemaError(message, options),
};

/**
 * The cache's own connection settings, after the shared ones (busy timeout, WAL, synchronous =
 * NORMAL, ~40 MB between checkpoints; docs/sqlite.md). Once the cache writes, a worker takes over
 * checkpointing (checkpoint.ts).
 */
export function cachePragmas(db: Database, opts: { cacheMiB: number }): void {
  db.pragma('foreign_keys = ON');
  db.pragma(`cache_size = -${Math.max(2, Math.floor(opts.cacheMiB)) * 1024}`);
  db.pragma('temp_store = MEMORY');
}
