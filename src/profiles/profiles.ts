/**
 * Quota profiles: how the upstream meters each method. Shared by the simulator (which charges by
 * them), the config (which builds budgets from them) and `plan`.
 *
 * A profile is data: buckets with their daily quotas, each method's bucket and cost, the time zone
 * the upstream's day runs in, and the upstream's own names for its buckets. The built-in ones below
 * are written in the form a config's `profiles:` section takes (schema.ts; a test validates them), so
 * the next change of the upstream's model is a config edit, not a release.
 *
 * youtube-2026 is the YouTube Data API v3 model in force since June 2026: quota belongs to the
 * Google Cloud project, resets at midnight America/Los_Angeles, and is granular — search.list and
 * videos.insert have their own buckets (100 calls a day), videos.batchGetStats its own 10,000
 * units, and every other method spends the shared 10,000 units with weighted costs.
 *
 * youtube-classic is the older single bucket (search.list = 100 units, videos.insert = 100 since the
 * revision of 2025-12-04, which lowered uploads from about 1,600 units to about 100).
 *
 * Costs follow the API's quota cost table (developers.google.com/youtube/v3/determine_quota_cost);
 * test/profiles/profiles.test.ts lists every documented cost and bucket and checks these against it.
 */

import {
  type MethodSpec,
  type ProfileId,
  type QuotaProfile,
  toProfile,
  type UpstreamQuotaNames,
  type ValidProfileData,
} from './profile.js';
import { BUILTIN_PROFILE_IDS } from './profile-ids.js';

export * from './profile.js';
export { BUILTIN_PROFILE_IDS };

/** The built-in profiles' ids. */
export const PROFILE_IDS: readonly string[] = BUILTIN_PROFILE_IDS;

/**
 * The upstream's names for the granular buckets. The shared units and search.list names are the
 * ones the API's answers carry; for uploads only the display name is known ("Video Uploads per
 * day"), and for videos.batchGetStats none is published, so the method's own name stands in.
 */
const GRANULAR_NAMES = {
  units: {
    displayName: 'Queries',
    metric: 'youtube.googleapis.com/default',
    limit: 'defaultPerDayPerProject',
  },
  'search.list': {
    displayName: 'Search Queries',
    metric: 'youtube.googleapis.com/search_list',
    limit: 'defaultSearchListPerDayPerProject',
  },
  'videos.insert': { displayName: 'Video Uploads', aliases: ['videos.insert'] },
  'videos.batchGetStats': { displayName: 'Batch Get Stats', aliases: ['videos.batchGetStats'] },
} satisfies Record<string, UpstreamQuotaNames>;

/**
 * Cloud Monitoring's count of a rate quota's use, per minute and quota metric: the metric the Cloud
 * Console's quota pages sum over the upstream's day.
 */
const NET_USAGE = 'serviceruntime.googleapis.com/quota/rate/net_usage';

/** Weighted costs in the shared `units` bucket (identical in both profiles unless overridden). */
const SHARED_COSTS: Record<string, number> = {
  'activities.list': 1,
  'captions.list': 50,
  'captions.insert': 400,
  'captions.update': 450,
  'captions.delete': 50,
  'captions.download': 200,
  'channelBanners.insert': 50,
  'channels.list': 1,
  'channels.update': 50,
  'channelSections.list': 1,
  'channelSections.insert': 50,
  'channelSections.update': 50,
  'channelSections.delete': 50,
  'comments.list': 1,
  'comments.insert': 50,
  'comments.update': 50,
  'comments.setModerationStatus': 50,
  'comments.delete': 50,
  'commentThreads.list': 1,
  'commentThreads.insert': 50,
  'commentThreads.update': 50,
  'guideCategories.list': 1,
  'i18nLanguages.list': 1,
  'i18nRegions.list': 1,
  'liveBroadcasts.bind': 50,
  'liveBroadcasts.control': 50,
  'liveBroadcasts.delete': 50,
  'liveBroadcasts.insert': 50,
  'liveBroadcasts.insertCuepoint': 50,
  'liveBroadcasts.list': 1,
  'liveBroadcasts.transition': 50,
  'liveBroadcasts.update': 50,
  'liveChatBans.delete': 50,
  'liveChatBans.insert': 50,
  'liveChatMessages.delete': 50,
  'liveChatMessages.insert': 50,
  'liveChatMessages.list': 1,
  'liveChatMessages.transition': 50,
  'liveChatModerators.delete': 50,
  'liveChatModerators.insert': 50,
  'liveChatModerators.list': 1,
  'liveStreams.delete': 50,
  'liveStreams.insert': 50,
  'liveStreams.list': 1,
  'liveStreams.update': 50,
  'members.list': 1,
  'membershipsLevels.list': 1,
  'playlistItems.list': 1,
  'playlistItems.insert': 50,
  'playlistItems.update': 50,
  'playlistItems.delete': 50,
  'playlists.list': 1,
  'playlists.insert': 50,
  'playlists.update': 50,
  'playlists.delete': 50,
  'subscriptions.list': 1,
  'subscriptions.insert': 50,
  'subscriptions.delete': 50,
  'thumbnails.set': 50,
  'videoAbuseReportReasons.list': 1,
  'videoCategories.list': 1,
  'videos.list': 1,
  'videos.update': 50,
  'videos.rate': 50,
  'videos.getRating': 1,
  'videos.reportAbuse': 50,
  'videos.delete': 50,
  'watermarks.set': 50,
  'watermarks.unset': 50,
};

function shared(bucket: string): Record<string, MethodSpec> {
  return Object.fromEntries(Object.entries(SHARED_COSTS).map(([m, cost]) => [m, { bucket, cost }]));
}

/**
 * The built-in profiles, as data (the form of a config's `profiles:` section) with every field the
 * schema would fill in written out, so they are used as they are: validating them on each start
 * cost every command a zod parse. test/profiles/profiles.test.ts checks that the schema accepts
 * each one unchanged.
 */
const BUILTIN_DATA: Record<(typeof BUILTIN_PROFILE_IDS)[number], ValidProfileData> = {
  'youtube-2026': {
    description: 'YouTube Data API v3 since June 2026: granular buckets',
    timeZone: 'America/Los_Angeles',
    defaultBucket: 'units',
    buckets: {
      units: { quota: 10_000 },
      'search.list': { quota: 100 },
      'videos.insert': { quota: 100 },
      'videos.batchGetStats': { quota: 10_000 },
    },
    methods: {
      ...shared('units'),
      'search.list': { bucket: 'search.list', cost: 1 },
      'videos.insert': { bucket: 'videos.insert', cost: 1 },
      'videos.batchGetStats': { bucket: 'videos.batchGetStats', cost: 1 },
    },
    upstreamNames: GRANULAR_NAMES,
    usageMetric: NET_USAGE,
  },
  'youtube-classic': {
    description: 'YouTube Data API v3 before June 2026: one 10,000-unit bucket',
    timeZone: 'America/Los_Angeles',
    defaultBucket: 'units',
    buckets: {
      units: { quota: 10_000 },
    },
    methods: {
      ...shared('units'),
      'search.list': { bucket: 'units', cost: 100 },
      'videos.insert': { bucket: 'units', cost: 100 },
    },
    upstreamNames: { units: GRANULAR_NAMES.units },
    usageMetric: NET_USAGE,
  },
};

/** The built-in profiles. */
export const PROFILES = Object.fromEntries(
  Object.entries(BUILTIN_DATA).map(([id, data]) => [id, toProfile(id, data)]),
) as Readonly<Record<(typeof BUILTIN_PROFILE_IDS)[number], QuotaProfile>>;

/**
 * A profile by id: one of `custom` (a config's profiles), else a built-in one; undefined when
 * neither has it.
 */
export function getProfile(id: (typeof BUILTIN_PROFILE_IDS)[number]): QuotaProfile;
export function getProfile(
  id: ProfileId,
  custom?: Readonly<Record<string, QuotaProfile>>,
): QuotaProfile | undefined;
export function getProfile(
  id: ProfileId,
  custom: Readonly<Record<string, QuotaProfile>> = {},
): QuotaProfile | undefined {
  if (Object.hasOwn(custom, id)) return custom[id];
  return Object.hasOwn(PROFILES, id) ? PROFILES[id as keyof typeof PROFILES] : undefined;
}
