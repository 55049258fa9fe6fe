/**
 * Every recording in test/fixtures/youtube/ replayed through the client: the answers parse (an empty
 * list where the API leaves `items` out, a video without its optional parts), the error bodies get
 * the code, reason and quota limit they say. A recording no test exercises fails the suite.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createYouTubeClient, UpstreamError, VideoCategorySchema } from '../../src/youtube/upstream/index.js';
import { failure, KEY } from './helpers.js';
import { type Replay, recordedStatus, recordingFiles, recordingJson, replayServer } from './recordings.js';

const servers: Replay[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

const ROUTES = ['videos', 'videos:batchGetStats', 'search', 'channels', 'videoCategories'];

/** A client on a server that answers every route with `name`. */
async function clientFor(name: string) {
  const srv = await replayServer(Object.fromEntries(ROUTES.map((r) => [r, name])));
  servers.push(srv);
  return { srv, client: createYouTubeClient({ baseUrl: srv.url, apiKey: KEY }) };
}

async function errorOf(name: string, call: 'search' | 'chart' = 'chart'): Promise<UpstreamError> {
  const { client } = await clientFor(name);
  try {
    const p =
      call === 'search' ? client.searchList({ q: 'news' }) : client.videosListChart({ regionCode: 'US' });
    const e = await failure(p);
    expect(e).toBeInstanceOf(UpstreamError);
    const u = e as UpstreamError;
    expect(u).toMatchObject({ reached: 'yes', status: recordedStatus(name) });
    expect(`${u.message} ${JSON.stringify(u)}`).not.toContain(KEY);
    return u;
  } finally {
    await client.close();
  }
}

/** What each recording must give. Adding a file without an entry here fails the last test. */
const EXPECTED: Record<string, () => Promise<void>> = {
  '200-channels.list-terminated.json': async () => {
    const { client } = await clientFor('200-channels.list-terminated.json');
    const res = await client.channelsList({ ids: ['UCz1bw0-JU6pFz8WYnr9i4lw'] });
    expect(res.items).toEqual([]);
    expect(res.pageInfo).toEqual({ resultsPerPage: 5, totalResults: 0 });
    await client.close();
  },
  '200-search.list-empty.json': async () => {
    const { client } = await clientFor('200-search.list-empty.json');
    const res = await client.searchList({ q: 'live' });
    expect(res).toMatchObject({ items: [], pageInfo: { totalResults: 0, resultsPerPage: 0 } });
    await client.close();
  },
  '200-search.list-upcoming.json': async () => {
    const { client } = await clientFor('200-search.list-upcoming.json');
    const res = await client.searchList({ q: 'live' });
    expect(res.items).toHaveLength(1);
    expect(res.items[0]).toMatchObject({
      id: { kind: 'youtube#video', videoId: '-bS3fde8tp0' },
      snippet: { liveBroadcastContent: 'upcoming', publishTime: '2024-02-05T16:58:04Z' },
    });
    await client.close();
  },
  '200-videos.list-upcoming-no-details.json': async () => {
    const { client } = await clientFor('200-videos.list-upcoming-no-details.json');
    const res = await client.videosListByIds(['-bS3fde8tp0']);
    expect(res.items).toHaveLength(1);
    const v = res.items[0]!;
    expect(v.snippet).toMatchObject({ liveBroadcastContent: 'upcoming', categoryId: '22' });
    expect(v.snippet?.tags).toBeUndefined();
    expect(v.contentDetails).toBeUndefined();
    expect(v.statistics).toBeUndefined();
    expect(v.liveStreamingDetails?.scheduledStartTime).toBe('2024-02-05T19:00:00Z');
    await client.close();
  },
  '400-api-key-invalid.json': async () => {
    const e = await errorOf('400-api-key-invalid.json');
    expect(e).toMatchObject({ code: 'QG_UPSTREAM_KEY_INVALID', reason: 'API_KEY_INVALID' });
    expect(e.quota).toBeUndefined();
  },
  '400-key-invalid-classic.json': async () => {
    const e = await errorOf('400-key-invalid-classic.json');
    expect(e).toMatchObject({ code: 'QG_UPSTREAM_KEY_INVALID', reason: 'keyInvalid' });
  },
  '403-daily-limit-exceeded.json': async () => {
    const e = await errorOf('403-daily-limit-exceeded.json');
    expect(e).toMatchObject({ code: 'QG_UPSTREAM_QUOTA_EXCEEDED', reason: 'dailyLimitExceeded' });
  },
  '403-quota-exceeded.json': async () => {
    const e = await errorOf('403-quota-exceeded.json');
    expect(e).toMatchObject({ code: 'QG_UPSTREAM_QUOTA_EXCEEDED', reason: 'quotaExceeded' });
    expect(e.message).not.toContain('<a href');
  },
  '403-service-disabled.json': async () => {
    const e = await errorOf('403-service-disabled.json');
    expect(e).toMatchObject({ code: 'QG_UPSTREAM_FORBIDDEN', reason: 'accessNotConfigured' });
  },
  '429-search-list-per-day.json': async () => {
    const e = await errorOf('429-search-list-per-day.json', 'search');
    expect(e).toMatchObject({
      code: 'QG_UPSTREAM_QUOTA_EXCEEDED',
      reason: 'rateLimitExceeded',
      method: 'search.list',
      quota: {
        period: 'day',
        metric: 'youtube.googleapis.com/search_list',
        limit: 'defaultSearchListPerDayPerProject',
        unit: '1/d/{project}',
      },
    });
  },
  '429-video-uploads-per-day-no-details.json': async () => {
    const e = await errorOf('429-video-uploads-per-day-no-details.json');
    expect(e).toMatchObject({
      code: 'QG_UPSTREAM_QUOTA_EXCEEDED',
      reason: 'rateLimitExceeded',
      quota: { period: 'day', metric: 'Video Uploads', limit: 'Video Uploads per day' },
    });
  },
  '429-queries-per-minute.json': async () => {
    const e = await errorOf('429-queries-per-minute.json');
    expect(e).toMatchObject({
      code: 'QG_UPSTREAM_RATE_LIMITED',
      reason: 'rateLimitExceeded',
      quota: { period: 'short', limit: 'defaultPerMinutePerProject', unit: '1/min/{project}' },
    });
  },
  '429-quota-failure-per-day.json': async () => {
    const e = await errorOf('429-quota-failure-per-day.json', 'search');
    expect(e).toMatchObject({
      code: 'QG_UPSTREAM_QUOTA_EXCEEDED',
      quota: {
        period: 'day',
        metric: 'youtube.googleapis.com/search_list',
        limit: 'defaultSearchListPerDayPerProject',
      },
    });
  },
  '429-unknown-bucket-per-day.json': async () => {
    const e = await errorOf('429-unknown-bucket-per-day.json');
    expect(e).toMatchObject({
      code: 'QG_UPSTREAM_QUOTA_EXCEEDED',
      quota: { period: 'day', metric: 'youtube.googleapis.com/live_chat_messages' },
    });
  },
  'items-videoCategories-US.json': async () => {
    const items = recordingJson<unknown[]>('items-videoCategories-US.json');
    for (const item of items) expect(VideoCategorySchema.safeParse(item).success).toBe(true);
    expect(items).toHaveLength(32);
  },
  'items-videoCategories-DE.json': async () => {
    const items = recordingJson<unknown[]>('items-videoCategories-DE.json');
    for (const item of items) expect(VideoCategorySchema.safeParse(item).success).toBe(true);
    expect(items).toHaveLength(31);
  },
  'discovery-youtube-v3.json': async () => {
    const doc = recordingJson<{ id: string; schemas: Record<string, unknown> }>('discovery-youtube-v3.json');
    expect(doc.id).toBe('youtube:v3');
    expect(Object.keys(doc.schemas)).toContain('VideoListResponse');
  },
};

describe('recordings of the real API, replayed through the client', () => {
  for (const [name, check] of Object.entries(EXPECTED)) it(name, check);

  it('every recording in test/fixtures/youtube/ has an expectation, and every expectation a recording', () => {
    expect(recordingFiles()).toEqual(Object.keys(EXPECTED).sort());
  });
});
