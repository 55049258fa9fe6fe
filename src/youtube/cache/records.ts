/**
 * Reads of what the jobs wrote (trending snapshots, videos) and the small job-state tables the
 * backfill and `status` use (cursors, run history).
 */
import type { Database } from 'better-sqlite3';
import { InvalidArgumentError } from '../../errors.js';
import type {
  CachedVideo,
  RefreshBatch,
  SnapshotEntry,
  TrendingSighting,
  TrendingSnapshot,
} from './types.js';
import { parseTags } from './video.js';

interface VideoDbRow {
  id: string;
  channel_id: string | null;
  channel_title: string | null;
  title: string | null;
  description: string | null;
  tags: string | null;
  category_id: string | null;
  default_language: string | null;
  default_audio_language: string | null;
  published_at: number | null;
  duration_s: number | null;
  view_count: number | null;
  like_count: number | null;
  comment_count: number | null;
  first_seen: number;
  last_refreshed: number;
}

export function getVideo(db: Database, id: string): CachedVideo | undefined {
  const r = db.prepare('SELECT * FROM videos WHERE id = ?').get(id) as VideoDbRow | undefined;
  if (r === undefined) return undefined;
  return {
    id: r.id,
    channelId: r.channel_id,
    channelTitle: r.channel_title,
    title: r.title,
    description: r.description,
    tags: parseTags(r.tags),
    categoryId: r.category_id,
    defaultLanguage: r.default_language,
    defaultAudioLanguage: r.default_audio_language,
    publishedAt: r.published_at,
    durationSeconds: r.duration_s,
    viewCount: r.view_count,
    likeCount: r.like_count,
    commentCount: r.comment_count,
    firstSeen: r.first_seen,
    lastRefreshed: r.last_refreshed,
  };
}

export function latestSnapshots(db: Database, region?: string, category?: string): TrendingSnapshot[] {
  const charts = db
    .prepare(
      `SELECT region, category, last_fetched_at FROM charts
       WHERE (@region IS NULL OR region = @region) AND (@category IS NULL OR category = @category)
       ORDER BY region, category`,
    )
    .all({ region: region ?? null, category: category ?? null }) as Array<{
    region: string;
    category: string;
    last_fetched_at: number;
  }>;
  const entries = db.prepare(
    `SELECT s.rank, v.id, v.title, v.channel_title AS channelTitle, v.view_count AS viewCount
     FROM snapshots s JOIN videos v ON v.vid = s.vid
     WHERE s.region = ? AND s.category = ? AND s.fetched_at = ? ORDER BY s.rank`,
  );
  return charts.map((c) => ({
    region: c.region,
    category: c.category,
    fetchedAt: c.last_fetched_at,
    videos: entries.all(c.region, c.category, c.last_fetched_at) as SnapshotEntry[],
  }));
}

export function trendingHistory(db: Database, videoId: string): TrendingSighting[] {
  return db
    .prepare(
      `SELECT region, category, min(fetched_at) AS firstSeen, max(fetched_at) AS lastSeen,
              min(rank) AS bestRank, count(DISTINCT fetched_at) AS times
       FROM snapshots WHERE vid = (SELECT vid FROM videos WHERE id = ?)
       GROUP BY region, category ORDER BY firstSeen, region, category`,
    )
    .all(videoId) as TrendingSighting[];
}

/**
 * Videos whose last refresh is oldest, after `afterCursor` (keyset pagination over
 * (last refreshed, row), so refreshing a batch moves it behind the others). Only videos last
 * refreshed before `refreshedBefore` (default: no bound) are due.
 */
export function videosDueForRefresh(
  db: Database,
  limit: number,
  afterCursor: string | null | undefined,
  refreshedBefore: number | undefined,
): RefreshBatch {
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
    throw new InvalidArgumentError('limit', 'must be an integer from 1 to 10000');
  }
  let after: [number, number] = [Number.MIN_SAFE_INTEGER, 0];
  if (afterCursor !== undefined && afterCursor !== null && afterCursor !== '') {
    const m = /^(-?\d+):(\d+)$/.exec(afterCursor);
    if (!m) throw new InvalidArgumentError('afterCursor', 'is not a cursor this cache returned');
    after = [Number(m[1]), Number(m[2])];
  }
  const rows = db
    .prepare(
      `SELECT vid, id, last_refreshed AS at FROM videos
       WHERE (last_refreshed, vid) > (?, ?) AND last_refreshed < ?
       ORDER BY last_refreshed, vid LIMIT ?`,
    )
    .all(after[0], after[1], refreshedBefore ?? Number.MAX_SAFE_INTEGER, limit) as Array<{
    vid: number;
    id: string;
    at: number;
  }>;
  const last = rows[rows.length - 1];
  return {
    ids: rows.map((r) => r.id),
    cursor: rows.length === limit && last !== undefined ? `${last.at}:${last.vid}` : null,
  };
}

/** Videos last refreshed at or after `sinceMs` (the backfill skips them as too fresh). */
export function countRefreshedSince(db: Database, sinceMs: number): number {
  return db.prepare('SELECT count(*) FROM videos WHERE last_refreshed >= ?').pluck().get(sinceMs) as number;
}

export function getCursor(db: Database, name: string): string | undefined {
  return db.prepare('SELECT value FROM cursors WHERE name = ?').pluck().get(name) as string | undefined;
}

export function setCursor(db: Database, name: string, value: string | null, now: number): void {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200) {
    throw new InvalidArgumentError('name', 'must be a non-empty string of at most 200 characters');
  }
  if (value === null) {
    db.prepare('DELETE FROM cursors WHERE name = ?').run(name);
    return;
  }
  if (typeof value !== 'string')
    throw new InvalidArgumentError('value', 'must be a string (or null to clear)');
  db.prepare(
    `INSERT INTO cursors (name, value, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  ).run(name, value, now);
}
