/**
 * The response shapes of the YouTube Data API v3 calls the jobs make, validated at the boundary.
 * Types are inferred from the schemas and keep the wire format (counts are decimal strings, as the
 * API sends 64-bit integers; durations are ISO-8601), so a video can be stored exactly as
 * `videos.list` returned it. A response that does not match is a `QG_UPSTREAM_BAD_RESPONSE`.
 */
import { z } from 'zod';

/** A 64-bit count as the API sends it: a decimal string. */
const Count = z.string().regex(/^\d+$/, 'must be a decimal count');

/** Weeks, days, hours, minutes and seconds, each optional and captured. */
const ISO_DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;
const Duration = z.string().regex(ISO_DURATION, 'must be an ISO-8601 duration');

export const ThumbnailSchema = z.object({
  url: z.string(),
  width: z.number().int().optional(),
  height: z.number().int().optional(),
});

export const ThumbnailsSchema = z.record(z.string(), ThumbnailSchema);

export const PageInfoSchema = z.object({
  totalResults: z.number().int().nonnegative(),
  resultsPerPage: z.number().int().nonnegative(),
});

const Localized = z.object({ title: z.string(), description: z.string() });

/** A list answer: kind, etag and the items. */
function list<K extends string, T extends z.ZodType>(kind: K, item: T) {
  return z.object({ kind: z.literal(kind), etag: z.string(), items: z.array(item) });
}

/** A list answer with page tokens and pageInfo. */
function pagedList<K extends string, T extends z.ZodType>(kind: K, item: T) {
  return list(kind, item).extend({
    nextPageToken: z.string().optional(),
    prevPageToken: z.string().optional(),
    pageInfo: PageInfoSchema,
  });
}

/** The fields a video's snippet and a search result's snippet share, in the API's order. */
const publishedSnippet = {
  publishedAt: z.iso.datetime({ offset: true }),
  channelId: z.string(),
  title: z.string(),
  description: z.string(),
  thumbnails: ThumbnailsSchema,
  channelTitle: z.string(),
};

export const VideoSnippetSchema = z.object({
  ...publishedSnippet,
  tags: z.array(z.string()).optional(),
  categoryId: z.string(),
  liveBroadcastContent: z.string(),
  defaultLanguage: z.string().optional(),
  defaultAudioLanguage: z.string().optional(),
  localized: Localized.optional(),
});

export const VideoContentDetailsSchema = z.object({
  duration: Duration,
  dimension: z.string(),
  definition: z.string(),
  caption: z.string(),
  licensedContent: z.boolean(),
  projection: z.string(),
  contentRating: z.record(z.string(), z.unknown()).optional(),
  regionRestriction: z
    .object({ allowed: z.array(z.string()).optional(), blocked: z.array(z.string()).optional() })
    .optional(),
});

/** likeCount and commentCount are absent when the owner hides them or disables comments. */
export const VideoStatisticsSchema = z.object({
  viewCount: Count,
  likeCount: Count.optional(),
  favoriteCount: Count.optional(),
  commentCount: Count.optional(),
});

/** A video resource with the parts the client always asks for: snippet, contentDetails, statistics. */
export const VideoSchema = z.object({
  kind: z.literal('youtube#video'),
  etag: z.string(),
  id: z.string().min(1),
  snippet: VideoSnippetSchema,
  contentDetails: VideoContentDetailsSchema,
  statistics: VideoStatisticsSchema,
});

export const VideoListResponseSchema = pagedList('youtube#videoListResponse', VideoSchema);

/** One item of `videos.batchGetStats` (a `youtube#videoStats` resource). */
export const VideoStatsSchema = z.object({
  kind: z.literal('youtube#videoStats'),
  etag: z.string(),
  id: z.string().min(1),
  snippet: z.object({ publishTime: z.iso.datetime({ offset: true }) }).optional(),
  statistics: z
    .object({ viewCount: Count, likeCount: Count.optional(), commentCount: Count.optional() })
    .optional(),
  contentDetails: z.object({ duration: Duration, durationMillis: Count.optional() }).optional(),
});

export const BatchGetStatsResponseSchema = list('youtube#batchGetStatsResponse', VideoStatsSchema);

export const VideoCategorySchema = z.object({
  kind: z.literal('youtube#videoCategory'),
  etag: z.string(),
  id: z.string(),
  snippet: z.object({ title: z.string(), assignable: z.boolean(), channelId: z.string() }),
});

export const VideoCategoryListResponseSchema = list('youtube#videoCategoryListResponse', VideoCategorySchema);

export const ChannelSchema = z.object({
  kind: z.literal('youtube#channel'),
  etag: z.string(),
  id: z.string().min(1),
  snippet: z.object({
    title: z.string(),
    description: z.string(),
    customUrl: z.string().optional(),
    publishedAt: z.iso.datetime({ offset: true }),
    thumbnails: ThumbnailsSchema,
    defaultLanguage: z.string().optional(),
    country: z.string().optional(),
    localized: Localized.optional(),
  }),
  statistics: z.object({
    viewCount: Count,
    subscriberCount: Count.optional(),
    hiddenSubscriberCount: z.boolean(),
    videoCount: Count,
  }),
});

export const ChannelListResponseSchema = pagedList('youtube#channelListResponse', ChannelSchema);

export const SearchResultSchema = z.object({
  kind: z.literal('youtube#searchResult'),
  etag: z.string(),
  id: z.object({
    kind: z.string(),
    videoId: z.string().optional(),
    channelId: z.string().optional(),
    playlistId: z.string().optional(),
  }),
  snippet: z.object({
    ...publishedSnippet,
    liveBroadcastContent: z.string(),
    publishTime: z.iso.datetime({ offset: true }).optional(),
  }),
});

export const SearchListResponseSchema = pagedList('youtube#searchListResponse', SearchResultSchema).extend({
  regionCode: z.string().optional(),
});

/** Google's error envelope. Lenient: only what the client classifies by is required. */
export const GoogleErrorEnvelopeSchema = z.object({
  error: z.object({
    code: z.number().int().optional(),
    message: z.string().optional(),
    status: z.string().optional(),
    errors: z
      .array(
        z.object({
          message: z.string().optional(),
          domain: z.string().optional(),
          reason: z.string().optional(),
        }),
      )
      .optional(),
    details: z.array(z.object({ reason: z.string().optional() }).loose()).optional(),
  }),
});

export type Thumbnail = z.infer<typeof ThumbnailSchema>;
export type PageInfo = z.infer<typeof PageInfoSchema>;
export type VideoSnippet = z.infer<typeof VideoSnippetSchema>;
export type VideoContentDetails = z.infer<typeof VideoContentDetailsSchema>;
export type VideoStatistics = z.infer<typeof VideoStatisticsSchema>;
export type Video = z.infer<typeof VideoSchema>;
export type VideoListResponse = z.infer<typeof VideoListResponseSchema>;
export type VideoStats = z.infer<typeof VideoStatsSchema>;
export type BatchGetStatsResponse = z.infer<typeof BatchGetStatsResponseSchema>;
export type VideoCategory = z.infer<typeof VideoCategorySchema>;
export type VideoCategoryListResponse = z.infer<typeof VideoCategoryListResponseSchema>;
export type Channel = z.infer<typeof ChannelSchema>;
export type ChannelListResponse = z.infer<typeof ChannelListResponseSchema>;
export type SearchResultItem = z.infer<typeof SearchResultSchema>;
export type SearchListResponse = z.infer<typeof SearchListResponseSchema>;
export type GoogleErrorEnvelope = z.infer<typeof GoogleErrorEnvelopeSchema>;

/** Seconds in an ISO-8601 duration such as `PT1H2M3S` (weeks and days count 7 × 24 h and 24 h). */
export function parseIsoDuration(duration: string): number {
  const m = ISO_DURATION.exec(duration);
  if (!m) return Number.NaN;
  const [, w, d, h, min, s] = m;
  return (
    Number(w ?? 0) * 604_800 +
    Number(d ?? 0) * 86_400 +
    Number(h ?? 0) * 3_600 +
    Number(min ?? 0) * 60 +
    Number(s ?? 0)
  );
}
