/**
 * The response shapes of the YouTube Data API v3 calls the jobs make, validated at the boundary.
 * Types are inferred from the schemas and keep the wire format (counts are decimal strings, as the
 * API sends 64-bit integers; durations are ISO-8601), so a video can be stored exactly as
 * `videos.list` returned it. Tolerant where the v3 discovery document makes a field optional (every
 * field of a resource but its `kind` and `id`), strict where a wrong shape means a wrong API: kind
 * strings, ids, page tokens and the JSON type of every field present (uint64 counts as decimal
 * strings, ISO-8601 durations and times). A response that does not match is a
 * `QG_UPSTREAM_BAD_RESPONSE`.
 */
import * as z from 'zod';
import { ISO_DURATION } from '../../config/duration.js';

/** A 64-bit count as the API sends it: a decimal string. */
const Count = z.string().regex(/^\d+$/, 'must be a decimal count');

/** Weeks, days, hours, minutes and seconds, each optional and captured. */
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

const Localized = z.object({ title: z.string().optional(), description: z.string().optional() });
const DateTime = z.iso.datetime({ offset: true });

/**
 * A list answer: kind, etag and the items. The API leaves `items` out when there are none (e.g.
 * `channels.list` for a terminated channel): that is an empty list.
 */
function list<K extends string, T extends z.ZodType>(kind: K, item: T) {
  return z.object({
    kind: z.literal(kind),
    etag: z.string().optional(),
    items: z.array(item).optional().default([]),
  });
}

/** A list answer with page tokens and pageInfo. */
function pagedList<K extends string, T extends z.ZodType>(kind: K, item: T) {
  return list(kind, item).extend({
    nextPageToken: z.string().min(1).optional(),
    prevPageToken: z.string().min(1).optional(),
    pageInfo: PageInfoSchema.optional(),
  });
}

/** The fields a video's snippet and a search result's snippet share, in the API's order. */
const publishedSnippet = {
  publishedAt: DateTime.optional(),
  channelId: z.string().optional(),
  title: z.string().optional(),
  description: z.string().optional(),
  thumbnails: ThumbnailsSchema.optional(),
  channelTitle: z.string().optional(),
};

/**
 * Every field below `kind` and `id` is optional, as the v3 discovery document has it: the API
 * leaves out what does not apply (no tags, no language, hidden like counts, a live video's
 * details) and a video missing a part is still a video.
 */
export const VideoSnippetSchema = z.object({
  ...publishedSnippet,
  tags: z.array(z.string()).optional(),
  categoryId: z.string().optional(),
  /** 'none', 'live' or 'upcoming'. */
  liveBroadcastContent: z.string().optional(),
  defaultLanguage: z.string().optional(),
  defaultAudioLanguage: z.string().optional(),
  localized: Localized.optional(),
});

export const VideoContentDetailsSchema = z.object({
  /** `P0D` while a video is live or upcoming. */
  duration: Duration.optional(),
  dimension: z.string().optional(),
  definition: z.string().optional(),
  caption: z.string().optional(),
  licensedContent: z.boolean().optional(),
  projection: z.string().optional(),
  hasCustomThumbnail: z.boolean().optional(),
  contentRating: z.record(z.string(), z.unknown()).optional(),
  regionRestriction: z
    .object({ allowed: z.array(z.string()).optional(), blocked: z.array(z.string()).optional() })
    .optional(),
});

/** likeCount and commentCount are absent when the owner hides them or disables comments. */
export const VideoStatisticsSchema = z.object({
  viewCount: Count.optional(),
  likeCount: Count.optional(),
  dislikeCount: Count.optional(),
  favoriteCount: Count.optional(),
  commentCount: Count.optional(),
});

/** Present on live and upcoming videos (and on past broadcasts). */
export const VideoLiveStreamingDetailsSchema = z.object({
  actualStartTime: DateTime.optional(),
  actualEndTime: DateTime.optional(),
  scheduledStartTime: DateTime.optional(),
  scheduledEndTime: DateTime.optional(),
  concurrentViewers: Count.optional(),
  activeLiveChatId: z.string().optional(),
});

/** A video resource with the parts the client asks for: snippet, contentDetails, statistics. */
export const VideoSchema = z.object({
  kind: z.literal('youtube#video'),
  etag: z.string().optional(),
  id: z.string().min(1),
  snippet: VideoSnippetSchema.optional(),
  contentDetails: VideoContentDetailsSchema.optional(),
  statistics: VideoStatisticsSchema.optional(),
  liveStreamingDetails: VideoLiveStreamingDetailsSchema.optional(),
});

export const VideoListResponseSchema = pagedList('youtube#videoListResponse', VideoSchema);

/** One item of `videos.batchGetStats` (a `youtube#videoStats` resource). */
export const VideoStatsSchema = z.object({
  kind: z.literal('youtube#videoStats'),
  etag: z.string().optional(),
  id: z.string().min(1),
  snippet: z.object({ publishTime: DateTime.optional() }).optional(),
  statistics: z
    .object({ viewCount: Count.optional(), likeCount: Count.optional(), commentCount: Count.optional() })
    .optional(),
  contentDetails: z.object({ duration: Duration.optional() }).optional(),
});

export const BatchGetStatsResponseSchema = list('youtube#batchGetStatsResponse', VideoStatsSchema);

export const VideoCategorySchema = z.object({
  kind: z.literal('youtube#videoCategory'),
  etag: z.string().optional(),
  id: z.string().min(1),
  snippet: z
    .object({
      title: z.string().optional(),
      assignable: z.boolean().optional(),
      channelId: z.string().optional(),
    })
    .optional(),
});

export const VideoCategoryListResponseSchema = list('youtube#videoCategoryListResponse', VideoCategorySchema);

export const ChannelSchema = z.object({
  kind: z.literal('youtube#channel'),
  etag: z.string().optional(),
  id: z.string().min(1),
  snippet: z
    .object({
      title: z.string().optional(),
      description: z.string().optional(),
      customUrl: z.string().optional(),
      publishedAt: DateTime.optional(),
      thumbnails: ThumbnailsSchema.optional(),
      defaultLanguage: z.string().optional(),
      country: z.string().optional(),
      localized: Localized.optional(),
    })
    .optional(),
  statistics: z
    .object({
      viewCount: Count.optional(),
      subscriberCount: Count.optional(),
      hiddenSubscriberCount: z.boolean().optional(),
      videoCount: Count.optional(),
    })
    .optional(),
});

export const ChannelListResponseSchema = pagedList('youtube#channelListResponse', ChannelSchema);

export const SearchResultSchema = z.object({
  kind: z.literal('youtube#searchResult'),
  etag: z.string().optional(),
  id: z.object({
    kind: z.string().regex(/^youtube#/, 'must be a youtube# kind'),
    videoId: z.string().min(1).optional(),
    channelId: z.string().min(1).optional(),
    playlistId: z.string().min(1).optional(),
  }),
  snippet: z
    .object({
      ...publishedSnippet,
      liveBroadcastContent: z.string().optional(),
      /** Sent by the API although the discovery document does not list it. */
      publishTime: DateTime.optional(),
    })
    .optional(),
});

export const SearchListResponseSchema = pagedList('youtube#searchListResponse', SearchResultSchema).extend({
  regionCode: z.string().optional(),
});

/** Google's error envelope, the same for every Google API: see src/outcome/google.ts. */
export {
  type GoogleErrorDetail,
  GoogleErrorDetailSchema,
  type GoogleErrorEnvelope,
  GoogleErrorEnvelopeSchema,
} from '../../outcome/google.js';

export type Thumbnail = z.infer<typeof ThumbnailSchema>;
export type PageInfo = z.infer<typeof PageInfoSchema>;
export type VideoSnippet = z.infer<typeof VideoSnippetSchema>;
export type VideoContentDetails = z.infer<typeof VideoContentDetailsSchema>;
export type VideoStatistics = z.infer<typeof VideoStatisticsSchema>;
export type VideoLiveStreamingDetails = z.infer<typeof VideoLiveStreamingDetailsSchema>;
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
