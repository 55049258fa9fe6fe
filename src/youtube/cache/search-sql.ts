/**
 * What a search asks for and reads back, apart from how it ranks: its options checked, its filters
 * as SQL conditions, and the columns of a hit (written once for every statement that reads them).
 */
import { InvalidArgumentError } from '../../errors.js';
import { REGION_CODE } from './ingest.js';
import type { SearchOptions } from './types.js';

export interface Scored {
  vid: number;
  score: number;
}

/** The columns of a hit's row (`HitRow`), in its order. */
export const HIT_COLUMNS = [
  'vid',
  'id',
  'title',
  'channel_id',
  'channel_title',
  'description',
  'tags',
  'view_count',
  'published_at',
  'regions',
] as const;

/** `HIT_COLUMNS` as a select list, unqualified and from the `videos` table aliased `v`. */
export const HIT_SELECT = HIT_COLUMNS.join(', ');

export const HIT_SELECT_V = HIT_COLUMNS.map((c) => `v.${c}`).join(', ');

/** A hit's row: `HIT_COLUMNS`' values. */
export type HitRow = [
  number,
  string,
  string | null,
  string | null,
  string | null,
  string | null,
  string | null,
  number | null,
  number | null,
  string | null,
];

export interface Filters {
  region: string | null;
  since: number | null;
  channel: string | null;
}

export type Params = Record<string, string | number | null>;

const MAX_LIMIT = 100;

const MAX_OFFSET = 10_000;

/** `AND …` conditions on `table`'s rowid for the filters, with their parameters. */
export function filterSql(table: string, f: Filters): { sql: string; params: Params } {
  const parts: string[] = [];
  if (f.channel !== null) {
    parts.push(`EXISTS (SELECT 1 FROM videos fv WHERE fv.vid = ${table}.rowid AND fv.channel_id = @channel)`);
  }
  if (f.region !== null || f.since !== null) {
    const conds = [`fs.vid = ${table}.rowid`];
    if (f.region !== null) conds.push('fs.region = @region');
    if (f.since !== null) conds.push('fs.fetched_at >= @since');
    parts.push(`EXISTS (SELECT 1 FROM snapshots fs WHERE ${conds.join(' AND ')})`);
  }
  return {
    sql: parts.map((p) => `AND ${p}`).join(' '),
    params: { channel: f.channel, region: f.region, since: f.since },
  };
}

export function validateOptions(o: SearchOptions): {
  limit: number;
  offset: number;
  filters: Filters;
  highlight: [string, string];
} {
  if (o === null || typeof o !== 'object') throw new InvalidArgumentError('options', 'must be an object');
  const limit = o.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new InvalidArgumentError('limit', `must be an integer from 1 to ${MAX_LIMIT}`);
  }
  const offset = o.offset ?? 0;
  if (!Number.isInteger(offset) || offset < 0 || offset > MAX_OFFSET) {
    throw new InvalidArgumentError('offset', `must be an integer from 0 to ${MAX_OFFSET}`);
  }
  if (o.region !== undefined && (typeof o.region !== 'string' || !REGION_CODE.test(o.region))) {
    throw new InvalidArgumentError('region', 'must be a region code such as "US"');
  }
  if (o.channelId !== undefined && (typeof o.channelId !== 'string' || o.channelId.length > 64)) {
    throw new InvalidArgumentError('channelId', 'must be a channel id');
  }
  if (
    o.trendingSince !== undefined &&
    (typeof o.trendingSince !== 'number' || !Number.isFinite(o.trendingSince))
  ) {
    throw new InvalidArgumentError('trendingSince', 'must be a time in epoch milliseconds');
  }
  const highlight = o.highlight ?? ['«', '»'];
  if (!Array.isArray(highlight) || highlight.length !== 2 || !highlight.every((h) => typeof h === 'string')) {
    throw new InvalidArgumentError('highlight', 'must be two strings: [before, after]');
  }
  return {
    limit,
    offset,
    filters: {
      region: o.region ?? null,
      since: o.trendingSince ?? null,
      channel: o.channelId ?? null,
    },
    highlight: [highlight[0]!, highlight[1]!],
  };
}
