/**
 * Writes: one transaction per trending page or upsert call, prepared statements reused.
 *
 * Rows land in `videos` at once; the full-text index (`videos_fts`) is fed from them in batches
 * (`indexBatch` rows, one FTS commit each) because FTS5 pays per commit for merging small
 * segments. `meta.indexed_upto` marks the highest `vid` the index has taken, in the same database,
 * so the mark and the index can never disagree: the batch is indexed inside the transaction of
 * the page that fills it, and `catchUp()` (end of a job run, open, before a search) indexes the
 * rest. A video already in the index whose text changes is re-indexed at once in the same
 * transaction (old text out, new text in), so the index never serves stale text.
 */
import type { Database, Statement, Transaction } from 'better-sqlite3';
import { InvalidArgumentError } from '../../errors.js';
import { BUMP_INDEX_GENERATION, FTS_COLUMNS, resetIndexIfTokenizerChanged } from './schema.js';
import { indexText, indexTextSql, registerIndexText } from './tokenize.js';
import type { IngestResult, TrendingPage, VideoResource } from './types.js';
import { rowValues, toRow, VIDEO_COLUMNS, type VideoRow } from './video.js';

interface ExistingRow {
  vid: number;
  title: string | null;
  tags: string | null;
  description: string | null;
  channel_title: string | null;
}

const TEXT_COLS = FTS_COLUMNS.join(', ');
/** The columns' index text, computed in SQL from `videos` (see tokenize.ts). */
export const INDEX_COLS = FTS_COLUMNS.map((c) => indexTextSql(c)).join(', ');
const MAX_PAGE = 1000;
/** A region code as charts are stored under it (and searches filter by it). */
export const REGION_CODE = /^[A-Za-z0-9_-]{1,16}$/;

export class Writer {
  readonly #findVideo: Statement<[string], ExistingRow>;
  readonly #insertVideo: Statement<unknown[]>;
  readonly #updateVideo: Statement<unknown[]>;
  readonly #addRegion: Statement<[{ region: string; vid: number }]>;
  readonly #insertSnapshots: Statement<unknown[]>;
  readonly #touchChart: Statement<unknown[]>;
  readonly #getMark: Statement<[], number>;
  readonly #setMark: Statement<[number]>;
  readonly #maxVid: Statement<[], number | null>;
  readonly #indexRange: Statement<[number, number]>;
  readonly #ftsDelete: Statement<unknown[]>;
  readonly #ftsInsert: Statement<unknown[]>;
  readonly #hotDelete: Statement<unknown[]>;
  readonly #hotInsert: Statement<unknown[]>;
  readonly #isHot: Statement<[number], number>;
  readonly #bumpGeneration: Statement<[]>;
  readonly #ingestTx: Transaction<(page: TrendingPage, now: number) => IngestResult>;
  readonly #upsertTx: Transaction<(videos: readonly VideoResource[], now: number) => IngestResult>;
  readonly #catchUpTx: Transaction<() => number>;
  /**
   * Bumped whenever this writer changes what the index holds (search caches term counts per
   * generation); a change that leaves the mark where it is also bumps `meta.index_generation`.
   */
  generation = 0;

  readonly #indexBatch: number;
  /** A cache opened read-only (a read-only directory): nothing is indexed, what is indexed is read. */
  readonly #readOnly: boolean;

  constructor(db: Database, indexBatch: number) {
    this.#indexBatch = indexBatch;
    this.#readOnly = db.readonly;
    registerIndexText(db);
    if (!this.#readOnly) resetIndexIfTokenizerChanged(db);
    this.#findVideo = db.prepare(`SELECT vid, ${TEXT_COLS} FROM videos WHERE id = ?`);
    const valueMarks = VIDEO_COLUMNS.map(() => '?').join(', ');
    this.#insertVideo = db.prepare(
      `INSERT INTO videos (id, ${VIDEO_COLUMNS.join(', ')}, first_seen, last_refreshed, regions)
       VALUES (?, ${valueMarks}, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    );
    // A video's regions (comma-separated, in the order first seen), kept on its row so a search
    // hit does not read the snapshots index; only a region not listed yet writes.
    this.#addRegion = db.prepare(
      `UPDATE videos SET regions = CASE WHEN regions IS NULL OR regions = '' THEN @region
         ELSE regions || ',' || @region END
       WHERE vid = @vid AND (regions IS NULL OR instr(',' || regions || ',', ',' || @region || ',') = 0)`,
    );
    this.#updateVideo = db.prepare(
      `UPDATE videos SET ${VIDEO_COLUMNS.map((c) => `${c} = coalesce(?, ${c})`).join(', ')},
         last_refreshed = max(last_refreshed, ?)
       WHERE vid = ?`,
    );
    // A page's snapshot rows in one statement, from its videos' vids as a JSON array (rank =
    // the page's offset + the position): a statement per row cost about a microsecond each.
    // (`WHERE true` tells the parser that ON CONFLICT belongs to the INSERT, not to a join.)
    this.#insertSnapshots = db.prepare(
      `INSERT INTO snapshots (region, category, fetched_at, rank, vid)
       SELECT ?, ?, ?, ? + key, value FROM json_each(?) WHERE true
       ON CONFLICT (region, category, fetched_at, rank) DO UPDATE SET vid = excluded.vid`,
    );
    this.#touchChart = db.prepare(
      `INSERT INTO charts (region, category, first_fetched_at, last_fetched_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (region, category) DO UPDATE SET
         first_fetched_at = min(first_fetched_at, excluded.first_fetched_at),
         last_fetched_at = max(last_fetched_at, excluded.last_fetched_at)`,
    );
    this.#getMark = db.prepare<[], number>(`SELECT value FROM meta WHERE key = 'indexed_upto'`).pluck();
    this.#setMark = db.prepare(`UPDATE meta SET value = ? WHERE key = 'indexed_upto'`);
    this.#maxVid = db.prepare<[], number | null>('SELECT max(vid) FROM videos').pluck();
    this.#indexRange = db.prepare(
      `INSERT INTO videos_fts (rowid, ${TEXT_COLS})
       SELECT vid, ${INDEX_COLS} FROM videos WHERE vid > ? AND vid <= ? ORDER BY vid`,
    );
    const marks = FTS_COLUMNS.map(() => '?').join(', ');
    this.#ftsDelete = db.prepare(
      `INSERT INTO videos_fts (videos_fts, rowid, ${TEXT_COLS}) VALUES ('delete', ?, ${marks})`,
    );
    this.#ftsInsert = db.prepare(`INSERT INTO videos_fts (rowid, ${TEXT_COLS}) VALUES (?, ${marks})`);
    this.#hotDelete = db.prepare(
      `INSERT INTO hot_fts (hot_fts, rowid, ${TEXT_COLS}) VALUES ('delete', ?, ${marks})`,
    );
    this.#hotInsert = db.prepare(`INSERT INTO hot_fts (rowid, ${TEXT_COLS}) VALUES (?, ${marks})`);
    this.#isHot = db.prepare<[number], number>('SELECT count(*) FROM hot_videos WHERE vid = ?').pluck();
    this.#bumpGeneration = db.prepare<[]>(BUMP_INDEX_GENERATION);

    this.#ingestTx = db.transaction((page: TrendingPage, now: number) => {
      const result: IngestResult = { inserted: 0, updated: 0 };
      const region = page.region;
      const category = page.category ?? '';
      const fetchedAt = Math.floor(page.fetchedAt);
      const vids = page.videos.map((v, i) =>
        this.#upsertOne(toRow(v, `page.videos[${i}]`), fetchedAt, now, result, region),
      );
      if (vids.length > 0) {
        this.#insertSnapshots.run(region, category, fetchedAt, page.rankOffset, JSON.stringify(vids));
        this.#touchChart.run(region, category, fetchedAt, fetchedAt);
      }
      this.#indexIfBatchFull();
      return result;
    });
    this.#upsertTx = db.transaction((videos: readonly VideoResource[], now: number) => {
      const result: IngestResult = { inserted: 0, updated: 0 };
      videos.forEach((v, i) => {
        this.#upsertOne(toRow(v, `videos[${i}]`), now, now, result, null);
        if ((i + 1) % this.#indexBatch === 0) this.#indexIfBatchFull();
      });
      this.#indexIfBatchFull();
      return result;
    });
    this.#catchUpTx = db.transaction(() => this.#indexPending(1));
  }

  ingestPage(page: TrendingPage, now: number): IngestResult {
    validatePage(page);
    return this.#ingestTx.immediate(page, now);
  }

  upsert(videos: readonly VideoResource[], now: number): IngestResult {
    if (!Array.isArray(videos))
      throw new InvalidArgumentError('videos', 'must be an array of video resources');
    if (videos.length === 0) return { inserted: 0, updated: 0 };
    return this.#upsertTx.immediate(videos, now);
  }

  /** Rows written but not yet in the full-text index. */
  pending(): number {
    return (this.#maxVid.get() ?? 0) - (this.#getMark.get() ?? 0);
  }

  /** Index every pending row now. Returns how many rows were indexed. */
  catchUp(): number {
    if (this.#readOnly || this.pending() <= 0) return 0;
    return this.#catchUpTx.immediate();
  }

  indexedUpTo(): number {
    return this.#getMark.get() ?? 0;
  }

  #indexIfBatchFull(): void {
    this.#indexPending(this.#indexBatch);
  }

  /** Index pending rows if at least `atLeast` are waiting (inside the caller's transaction). */
  #indexPending(atLeast: number): number {
    const mark = this.#getMark.get() ?? 0;
    const top = this.#maxVid.get() ?? 0;
    const waiting = top - mark;
    if (waiting < atLeast) return 0;
    this.#indexRange.run(mark, top);
    this.#setMark.run(top);
    this.generation++;
    return waiting;
  }

  #upsertOne(
    row: VideoRow,
    seenAt: number,
    now: number,
    result: IngestResult,
    region: string | null,
  ): number {
    // New videos are the common case of a trending page: try the insert first (one index probe).
    const values = rowValues(row);
    const inserted = this.#insertVideo.run(row.id, ...values, seenAt, now, region);
    if (inserted.changes > 0) {
      result.inserted++;
      return Number(inserted.lastInsertRowid);
    }
    const old = this.#findVideo.get(row.id)!;
    if (region !== null) this.#addRegion.run({ region, vid: old.vid });
    const next = [
      row.title ?? old.title,
      row.tags ?? old.tags,
      row.description ?? old.description,
      row.channelTitle ?? old.channel_title,
    ];
    const before = [old.title, old.tags, old.description, old.channel_title];
    const textChanged = next.some((v, k) => v !== before[k]);
    // An indexed row leaves the index with exactly the tokens it entered it with (FTS5's
    // 'delete' of a contentless table takes them from the values given), then re-enters it.
    if (textChanged) {
      const oldText = before.map(indexText);
      const newText = next.map(indexText);
      if (old.vid <= (this.#getMark.get() ?? 0)) {
        this.#ftsDelete.run(old.vid, ...oldText);
        this.#ftsInsert.run(old.vid, ...newText);
        this.generation++;
        this.#bumpGeneration.run();
      }
      if (this.#isHot.get(old.vid)) {
        this.#hotDelete.run(old.vid, ...oldText);
        this.#hotInsert.run(old.vid, ...newText);
      }
    }
    this.#updateVideo.run(...values, now, old.vid);
    result.updated++;
    return old.vid;
  }
}

function validatePage(page: TrendingPage): void {
  if (page === null || typeof page !== 'object') throw new InvalidArgumentError('page', 'must be an object');
  if (typeof page.region !== 'string' || !REGION_CODE.test(page.region)) {
    throw new InvalidArgumentError('page.region', 'must be a region code such as "US"');
  }
  if (page.category !== undefined && (typeof page.category !== 'string' || page.category.length > 64)) {
    throw new InvalidArgumentError('page.category', 'must be a string of at most 64 characters');
  }
  if (
    typeof page.fetchedAt !== 'number' ||
    !Number.isSafeInteger(Math.floor(page.fetchedAt)) ||
    page.fetchedAt < 0
  ) {
    throw new InvalidArgumentError('page.fetchedAt', 'must be a time in epoch milliseconds');
  }
  if (!Number.isInteger(page.rankOffset) || page.rankOffset < 0) {
    throw new InvalidArgumentError('page.rankOffset', 'must be an integer >= 0');
  }
  if (!Array.isArray(page.videos) || page.videos.length > MAX_PAGE) {
    throw new InvalidArgumentError('page.videos', `must be an array of at most ${MAX_PAGE} video resources`);
  }
}
