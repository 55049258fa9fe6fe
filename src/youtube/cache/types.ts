/**
 * Public types of the local video cache. The input shape is the subset of the YouTube Data API
 * `videos` resource the cache stores; every field except `id` may be missing, so a
 * statistics-only answer (`videos.batchGetStats`) refreshes counts without wiping anything else.
 */

/**
 * A `videos` resource as `videos.list` / `videos.batchGetStats` return it (the part the cache reads).
 * A field that is `undefined` counts as missing, as the parsed answers of the upstream client give it.
 */
export interface VideoResource {
  id: string;
  snippet?:
    | {
        publishedAt?: string | undefined;
        channelId?: string | undefined;
        channelTitle?: string | undefined;
        title?: string | undefined;
        description?: string | undefined;
        tags?: string[] | undefined;
        categoryId?: string | undefined;
        defaultLanguage?: string | undefined;
        defaultAudioLanguage?: string | undefined;
      }
    | undefined;
  contentDetails?:
    | {
        /** ISO 8601 duration, e.g. `PT4M13S`. */
        duration?: string | undefined;
      }
    | undefined;
  statistics?:
    | {
        /** The API sends counts as decimal strings; numbers are accepted too. */
        viewCount?: string | number | undefined;
        likeCount?: string | number | undefined;
        commentCount?: string | number | undefined;
      }
    | undefined;
}

/** One page of a regional trending chart, written in one transaction. */
export interface TrendingPage {
  /** ISO 3166 region code of the chart, e.g. `US`. */
  region: string;
  /** Chart category (`videoCategoryId`); omitted or `''` for the whole chart. */
  category?: string;
  /** When the chart was fetched (epoch ms). All pages of one fetch share it. */
  fetchedAt: number;
  /** Rank of the page's first video, 0-based (page 2 of 50 starts at 50). */
  rankOffset: number;
  /** The page's videos in chart order. */
  videos: VideoResource[];
}

export interface CacheOptions {
  /**
   * Rows are written at once; the full-text index is fed from them in batches of this many rows
   * (fewer, larger index commits), and always caught up at the end of a job run, on open and
   * before a search. Default 5,000.
   */
  indexBatch?: number;
  /** A term in more documents than this is "very common" (see docs/cache.md). Default 20,000. */
  commonTermDocs?: number;
  /**
   * A query with more matches than this is ranked within the hot index first, then newest first
   * (bm25 scores every match: about a microsecond each). Default 5,000.
   */
  rankedMatches?: number;
  /** Size of the hot index used to rank very common terms. Default 10,000. */
  hotSize?: number;
  /** SQLite page cache in MiB. Default 16 (the OS caches the file; a large SQLite cache slows commits). */
  cacheMiB?: number;
  /** Busy timeout in ms when another process holds the write lock. Default 5,000. */
  busyTimeoutMs?: number;
  /** Clock for `first seen` / `last refreshed` stamps (epoch ms). Default `Date.now`. */
  now?: () => number;
  /**
   * Create the file (and its directory) when it does not exist. Default true; commands that only
   * read pass false, and a missing cache is then `QG_STORE_NOT_FOUND` with nothing created.
   */
  create?: boolean;
}

export interface SearchOptions {
  /** Only videos seen trending in this region. */
  region?: string;
  /** Only videos seen trending (in `region` if given) at or after this time (epoch ms). */
  trendingSince?: number;
  /** Only videos of this channel. */
  channelId?: string;
  /** Hits per page, 1–100. Default 20. */
  limit?: number;
  /** Hits to skip, 0–10,000. Default 0. */
  offset?: number;
  /** Markers put around matched words in `snippet`. Default `['«', '»']`. */
  highlight?: [string, string];
}

export interface SearchHit {
  id: string;
  title: string;
  channelId: string | null;
  channelTitle: string;
  /** A short excerpt of the best-matching field with the matches between the highlight markers. */
  snippet: string;
  /** Relevance, higher is better (negated bm25 of the index that ranked the hit; 0 when not ranked). */
  score: number;
  /** Regions whose trending chart has listed the video, sorted. */
  regions: string[];
  viewCount: number | null;
  publishedAt: number | null;
}

/**
 * How a search was ranked (see docs/cache.md):
 * - `bm25`: every searched term is selective; exact bm25 with column weights over the whole cache.
 * - `bm25-selective`: exact bm25 over the selective terms; very common terms only filter.
 * - `popular`: every searched term is very common; matches in the hot set (most viewed and recently
 *   trending videos) by bm25 within that set first, then the other matches, newest first.
 */
export type SearchRanking = 'bm25' | 'bm25-selective' | 'popular';

export interface SearchResult {
  hits: SearchHit[];
  /** Whether more hits follow this page. */
  hasMore: boolean;
  ranking: SearchRanking;
  /** Wall time of the search in ms. */
  took: number;
}

/** A cached video as stored (the fields the cache keeps of a `videos` resource). */
export interface CachedVideo {
  id: string;
  channelId: string | null;
  channelTitle: string | null;
  title: string | null;
  description: string | null;
  tags: string[];
  categoryId: string | null;
  defaultLanguage: string | null;
  defaultAudioLanguage: string | null;
  publishedAt: number | null;
  durationSeconds: number | null;
  viewCount: number | null;
  likeCount: number | null;
  commentCount: number | null;
  firstSeen: number;
  lastRefreshed: number;
}

/** What one page or upsert call did. */
export interface IngestResult {
  /** Videos not in the cache before. */
  inserted: number;
  /** Videos already in the cache (refreshed). */
  updated: number;
}

/** A video in a trending snapshot, in chart order. */
export interface SnapshotEntry {
  rank: number;
  id: string;
  title: string | null;
  channelTitle: string | null;
  viewCount: number | null;
}

export interface TrendingSnapshot {
  region: string;
  category: string;
  fetchedAt: number;
  videos: SnapshotEntry[];
}

/** Where and when a video was seen trending. */
export interface TrendingSighting {
  region: string;
  category: string;
  firstSeen: number;
  lastSeen: number;
  /** Best (lowest) rank, 0-based. */
  bestRank: number;
  /** Number of fetches that listed it. */
  times: number;
}

/** A page of videos for the backfill, oldest refresh first. */
export interface RefreshBatch {
  ids: string[];
  /** Pass back as `afterCursor` for the next batch; `null` when nothing more is due. */
  cursor: string | null;
}

export interface CacheStats {
  videos: number;
  /** Videos the full-text index has caught up with. */
  indexedVideos: number;
  snapshotRows: number;
  /** Distinct regions with at least one snapshot. */
  regions: number;
  hotVideos: number;
  /** When the hot index was last rebuilt (epoch ms), if ever. */
  hotBuiltAt: number | null;
  /** Size of the database file plus its write-ahead log, in bytes (0 for `:memory:`). */
  fileBytes: number;
  schemaVersion: number;
}
