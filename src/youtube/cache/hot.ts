/**
 * The hot index: a small FTS5 index (`hot_fts`, same columns and tokenizer) over the videos users
 * most likely mean when they search for very common words: those trending in the last week, then
 * the most viewed. Ranking a word that is in half a million videos by bm25 over the whole cache
 * costs about a second (bm25 visits every match); within the hot set it costs a few milliseconds.
 * Rebuilt as a whole, in one transaction, when it has gone stale (see `hotIsStale`).
 */
import type { Database } from 'better-sqlite3';
import { INDEX_COLS } from './ingest.js';
import { BUMP_INDEX_GENERATION, FTS_COLUMNS } from './schema.js';

const TEXT_COLS = FTS_COLUMNS.join(', ');
const WEEK_MS = 7 * 86_400_000;
const DAY_MS = 86_400_000;

export interface HotState {
  builtAt: number | null;
  /** `indexed_upto` when it was built. */
  builtAtMark: number;
  videos: number;
}

export function hotState(db: Database): HotState {
  const rows = db
    .prepare(`SELECT key, value FROM meta WHERE key IN ('hot_built_at', 'hot_built_mark')`)
    .all() as Array<{ key: string; value: number }>;
  const get = (k: string) => rows.find((r) => r.key === k)?.value;
  return {
    builtAt: get('hot_built_at') ?? null,
    builtAtMark: get('hot_built_mark') ?? 0,
    videos: db.prepare('SELECT count(*) FROM hot_videos').pluck().get() as number,
  };
}

/**
 * Stale when never built, older than a day, or the cache has grown by more than 10% since
 * (a trending run adds a few hundred videos; a bulk load adds many). Never needed while the cache
 * holds no more than `needFrom` videos (the lower of `commonTermDocs` and `rankedMatches`): no query
 * is ranked within it then.
 */
export function hotIsStale(state: HotState, indexedMark: number, now: number, needFrom: number): boolean {
  if (indexedMark <= needFrom) return false;
  if (state.builtAt === null) return true;
  if (now - state.builtAt > DAY_MS) return true;
  return indexedMark - state.builtAtMark > Math.max(1000, state.builtAtMark * 0.1);
}

/** Rebuild the hot index with up to `size` videos. Returns how many it holds. */
export function rebuildHot(db: Database, size: number, now: number): number {
  return db
    .transaction(() => {
      db.exec(`INSERT INTO hot_fts (hot_fts) VALUES ('delete-all'); DELETE FROM hot_videos;`);
      const add = db.prepare('INSERT OR IGNORE INTO hot_videos (vid) VALUES (?)');
      // Recently trending first, newest fetch first, up to half of the set.
      const charts = db.prepare('SELECT region, category, last_fetched_at FROM charts').all() as Array<{
        region: string;
        category: string;
        last_fetched_at: number;
      }>;
      const recent = new Map<number, number>();
      const inChart = db
        .prepare(
          `SELECT vid, max(fetched_at) AS at FROM snapshots
           WHERE region = ? AND category = ? AND fetched_at >= ? GROUP BY vid`,
        )
        .raw();
      for (const c of charts) {
        for (const [vid, at] of inChart.iterate(
          c.region,
          c.category,
          c.last_fetched_at - WEEK_MS,
        ) as Iterable<[number, number]>) {
          if ((recent.get(vid) ?? 0) < at) recent.set(vid, at);
        }
      }
      const trending = [...recent.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]);
      for (const [vid] of trending.slice(0, Math.floor(size / 2))) add.run(vid);
      // Then the most viewed.
      const have = db.prepare('SELECT count(*) FROM hot_videos').pluck().get() as number;
      if (have < size) {
        const viewed = db
          .prepare('SELECT vid FROM videos ORDER BY view_count DESC, vid DESC LIMIT ?')
          .pluck()
          .all(size) as number[];
        let n = have;
        for (const vid of viewed) {
          if (n >= size) break;
          if (add.run(vid).changes > 0) n++;
        }
      }
      db.exec(
        `INSERT INTO hot_fts (rowid, ${TEXT_COLS})
           SELECT v.vid, ${INDEX_COLS}
           FROM hot_videos h JOIN videos v ON v.vid = h.vid ORDER BY h.vid;
         INSERT INTO hot_fts (hot_fts) VALUES ('optimize');`,
      );
      const mark = db.prepare(`SELECT value FROM meta WHERE key = 'indexed_upto'`).pluck().get() as number;
      const setMeta = db.prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      );
      setMeta.run('hot_built_at', now);
      setMeta.run('hot_built_mark', mark);
      db.prepare(BUMP_INDEX_GENERATION).run();
      return db.prepare('SELECT count(*) FROM hot_videos').pluck().get() as number;
    })
    .immediate();
}
