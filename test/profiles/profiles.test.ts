/**
 * The profiles against the API's documented quota costs: every method of the quota cost table
 * (developers.google.com/youtube/v3/determine_quota_cost, as of the revision of 2026-06-03) with
 * its cost and bucket, under both models. The classic upload cost is the one the revision history
 * of 2025-12-04 gives (about 100 units, down from about 1,600).
 */
import { describe, expect, it } from 'vitest';
import {
  BUILTIN_PROFILE_IDS,
  methodSpec,
  PROFILES,
  profileData,
  toProfile,
} from '../../src/profiles/profiles.js';
import { profileSchema } from '../../src/profiles/schema.js';

/** resource → method → documented cost in the shared units. */
const DOCUMENTED: Record<string, Record<string, number>> = {
  activities: { list: 1 },
  captions: { list: 50, insert: 400, update: 450, delete: 50 },
  channelBanners: { insert: 50 },
  channels: { list: 1, update: 50 },
  channelSections: { list: 1, insert: 50, update: 50, delete: 50 },
  comments: { list: 1, insert: 50, update: 50, setModerationStatus: 50, delete: 50 },
  commentThreads: { list: 1, insert: 50, update: 50 },
  guideCategories: { list: 1 },
  i18nLanguages: { list: 1 },
  i18nRegions: { list: 1 },
  liveBroadcasts: {
    bind: 50,
    control: 50,
    delete: 50,
    insert: 50,
    insertCuepoint: 50,
    list: 1,
    transition: 50,
    update: 50,
  },
  liveChatBans: { delete: 50, insert: 50 },
  liveChatMessages: { delete: 50, insert: 50, list: 1, transition: 50 },
  liveChatModerators: { delete: 50, insert: 50, list: 1 },
  liveStreams: { delete: 50, insert: 50, list: 1, update: 50 },
  members: { list: 1 },
  membershipsLevels: { list: 1 },
  playlistItems: { list: 1, insert: 50, update: 50, delete: 50 },
  playlists: { list: 1, insert: 50, update: 50, delete: 50 },
  subscriptions: { list: 1, insert: 50, delete: 50 },
  thumbnails: { set: 50 },
  videoAbuseReportReasons: { list: 1 },
  videoCategories: { list: 1 },
  videos: { list: 1, update: 50, rate: 50, getRating: 1, reportAbuse: 50, delete: 50 },
  watermarks: { set: 50, unset: 50 },
};

/** Methods with a bucket of their own since 2026-06-01 / 2026-06-03: bucket, cost, daily quota. */
const GRANULAR: Record<string, { bucket: string; cost: number; quota: number }> = {
  'search.list': { bucket: 'search.list', cost: 1, quota: 100 },
  'videos.insert': { bucket: 'videos.insert', cost: 1, quota: 100 },
  'videos.batchGetStats': { bucket: 'videos.batchGetStats', cost: 1, quota: 10_000 },
};

/** The same methods in the single 10,000-unit bucket of the classic model. */
const CLASSIC: Record<string, number> = { 'search.list': 100, 'videos.insert': 100 };

const shared = Object.entries(DOCUMENTED).flatMap(([resource, methods]) =>
  Object.entries(methods).map(([m, cost]) => [`${resource}.${m}`, cost] as const),
);

describe('profiles against the documented quota costs', () => {
  it('youtube-2026: every documented method spends units at its cost; search, uploads and batchGetStats their own buckets', () => {
    const p = PROFILES['youtube-2026'];
    for (const [method, cost] of shared)
      expect([method, methodSpec(p, method)]).toEqual([method, { bucket: 'units', cost }]);
    expect(p.buckets['units']).toEqual({ quota: 10_000 });
    for (const [method, g] of Object.entries(GRANULAR)) {
      expect(methodSpec(p, method)).toEqual({ bucket: g.bucket, cost: g.cost });
      expect(p.buckets[g.bucket]).toEqual({ quota: g.quota });
    }
  });

  it('youtube-classic: one 10,000-unit bucket, search.list 100 and videos.insert 100 units', () => {
    const p = PROFILES['youtube-classic'];
    for (const [method, cost] of shared)
      expect([method, methodSpec(p, method)]).toEqual([method, { bucket: 'units', cost }]);
    for (const [method, cost] of Object.entries(CLASSIC))
      expect(methodSpec(p, method)).toEqual({ bucket: 'units', cost });
    expect(Object.keys(p.buckets)).toEqual(['units']);
    expect(methodSpec(p, 'videos.batchGetStats')).toBeUndefined();
  });

  it('names each bucket the way the upstream names it, for the guard to find the bucket a quota answer names', () => {
    const p = PROFILES['youtube-2026'];
    expect(Object.keys(p.upstreamNames).sort()).toEqual(Object.keys(p.buckets).sort());
  });
});

describe('the built-in profiles as data', () => {
  it('are what the schema of a config’s profiles returns for them: valid, every default written out', () => {
    for (const id of BUILTIN_PROFILE_IDS) {
      const data = profileData(PROFILES[id]);
      expect(profileSchema.parse(data), id).toEqual(data);
      expect(toProfile(id, profileSchema.parse(data)), id).toEqual(PROFILES[id]);
    }
  });
});
