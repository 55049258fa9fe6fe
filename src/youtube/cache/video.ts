/** Turning `videos` resources into rows. Missing fields stay `null` so an upsert keeps the old value. */

import { parseIsoDuration } from '../../config/duration.js';
import { InvalidArgumentError } from '../../errors.js';
import type { VideoResource } from './types.js';

/** Column values of a video; `null` means "not in this resource". */
export interface VideoRow {
  id: string;
  channelId: string | null;
  channelTitle: string | null;
  title: string | null;
  description: string | null;
  tags: string | null;
  categoryId: string | null;
  defaultLanguage: string | null;
  defaultAudioLanguage: string | null;
  publishedAt: number | null;
  durationS: number | null;
  viewCount: number | null;
  likeCount: number | null;
  commentCount: number | null;
}

/** The `videos` columns a resource fills, in the order of `rowValues`. */
export const VIDEO_COLUMNS = [
  'channel_id',
  'channel_title',
  'title',
  'description',
  'tags',
  'category_id',
  'default_language',
  'default_audio_language',
  'published_at',
  'duration_s',
  'view_count',
  'like_count',
  'comment_count',
] as const;

/** A row's values in the order of VIDEO_COLUMNS. */
export function rowValues(r: VideoRow): Array<string | number | null> {
  return [
    r.channelId,
    r.channelTitle,
    r.title,
    r.description,
    r.tags,
    r.categoryId,
    r.defaultLanguage,
    r.defaultAudioLanguage,
    r.publishedAt,
    r.durationS,
    r.viewCount,
    r.likeCount,
    r.commentCount,
  ];
}

/** `PT1H2M3S` → 3723. Anything unparsable (or `P0D` for live streams) → null / 0. */
export function parseDuration(iso: string | undefined): number | null {
  if (typeof iso !== 'string' || iso === 'P' || iso.endsWith('T')) return null;
  const seconds = parseIsoDuration(iso);
  return Number.isNaN(seconds) ? null : Math.round(seconds);
}

/** The stored `tags` column back as a list (`[]` when absent or not a JSON array). */
export function parseTags(json: string | null): string[] {
  if (json === null) return [];
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? v.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}

function count(v: string | number | undefined): number | null {
  if (v === undefined || v === null) return null;
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : null;
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function time(v: string | undefined): number | null {
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : null;
}

export function toRow(v: VideoResource, field: string): VideoRow {
  if (v === null || typeof v !== 'object') throw new InvalidArgumentError(field, 'must be a video resource');
  if (typeof v.id !== 'string' || v.id.length === 0 || v.id.length > 64) {
    throw new InvalidArgumentError(`${field}.id`, 'must be a non-empty string of at most 64 characters');
  }
  const s = v.snippet ?? {};
  const tags = Array.isArray(s.tags) ? JSON.stringify(s.tags.filter((t) => typeof t === 'string')) : null;
  return {
    id: v.id,
    channelId: str(s.channelId),
    channelTitle: str(s.channelTitle),
    title: str(s.title),
    description: str(s.description),
    tags,
    categoryId: str(s.categoryId),
    defaultLanguage: str(s.defaultLanguage),
    defaultAudioLanguage: str(s.defaultAudioLanguage),
    publishedAt: time(s.publishedAt),
    durationS: parseDuration(v.contentDetails?.duration),
    viewCount: count(v.statistics?.viewCount),
    likeCount: count(v.statistics?.likeCount),
    commentCount: count(v.statistics?.commentCount),
  };
}
