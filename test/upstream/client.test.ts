import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import {
  createYouTubeClient,
  parseIsoDuration,
  UpstreamError,
  YOUTUBE_API_METHODS,
  type YouTubeClient,
} from '../../src/youtube/upstream/index.js';
import { failure, httpServer, json, KEY } from './helpers.js';

let sim: Simulator;
let client: YouTubeClient;

beforeAll(async () => {
  // A fixed clock: the charts, and so the videos these tests look at, are the same every day.
  sim = await startSimulator({
    keys: [`${KEY}@main`],
    seed: 'client-tests',
    now: () => Date.parse('2026-01-15T20:00:00Z'),
  });
  client = createYouTubeClient({ baseUrl: sim.url, apiKey: KEY });
});

afterAll(async () => {
  await client.close();
  await sim.close();
});

describe('YouTube client against the simulator', () => {
  it('names the API method of every client method, so the guard can look up bucket and cost', () => {
    expect(client.videosListChart.apiMethod).toBe('videos.list');
    expect(client.videosListByIds.apiMethod).toBe('videos.list');
    expect(client.videosBatchGetStats.apiMethod).toBe('videos.batchGetStats');
    expect(client.videoCategoriesList.apiMethod).toBe('videoCategories.list');
    expect(client.channelsList.apiMethod).toBe('channels.list');
    expect(client.searchList.apiMethod).toBe('search.list');
    expect(client.apiMethodOf('searchList')).toBe('search.list');
    expect(Object.keys(YOUTUBE_API_METHODS).sort()).toEqual([
      'channelsList',
      'searchList',
      'videoCategoriesList',
      'videosBatchGetStats',
      'videosListByIds',
      'videosListChart',
    ]);
  });

  it('fetches one validated chart page per call, with the parts the jobs need', async () => {
    const before = sim.requests.length;
    const page = await client.videosListChart({ regionCode: 'us' });
    expect(sim.requests.length - before).toBe(1);
    const last = sim.requests.at(-1)!;
    expect(last).toMatchObject({
      method: 'videos.list',
      project: 'main',
      bucket: 'units',
      cost: 1,
      status: 200,
    });
    expect(page.items).toHaveLength(50);
    expect(page.nextPageToken).toBeTruthy();
    expect(page.pageInfo!.resultsPerPage).toBe(50);
    for (const v of page.items) {
      expect(v.kind).toBe('youtube#video');
      expect(v.snippet!.title!.length).toBeGreaterThan(0);
      expect(Number(v.statistics!.viewCount!)).toBeGreaterThanOrEqual(0);
      // A live or upcoming video has no duration yet (P0D), as on the real API.
      if (v.snippet!.liveBroadcastContent === 'none') {
        expect(parseIsoDuration(v.contentDetails!.duration!)).toBeGreaterThan(0);
      } else expect(v.contentDetails!.duration).toBe('P0D');
    }
  });

  it('looks videos up by id and batch-gets their statistics', async () => {
    const page = await client.videosListChart({ regionCode: 'GB', maxResults: 10 });
    const ids = page.items.map((v) => v.id);
    const byId = await client.videosListByIds(ids);
    expect(byId.items.map((v) => v.id)).toEqual(ids);
    const stats = await client.videosBatchGetStats(ids);
    expect(stats.items.map((s) => s.id)).toEqual(ids);
    const broadcast = new Map(byId.items.map((v) => [v.id, v.snippet?.liveBroadcastContent]));
    for (const s of stats.items) {
      expect(Number(s.statistics?.viewCount)).toBeGreaterThanOrEqual(0);
      if (broadcast.get(s.id) === 'none')
        expect(parseIsoDuration(s.contentDetails!.duration!)).toBeGreaterThan(0);
      else expect(s.contentDetails!.duration).toBe('P0D');
    }
    expect(sim.requests.at(-1)).toMatchObject({
      method: 'videos.batchGetStats',
      bucket: 'videos.batchGetStats',
    });
  });

  it('lists categories, channels and search results', async () => {
    const cats = await client.videoCategoriesList({ regionCode: 'DE' });
    expect(cats.items.map((c) => c.id)).toContain('10');
    const page = await client.videosListChart({ regionCode: 'FR', maxResults: 5 });
    const channelIds = [...new Set(page.items.map((v) => v.snippet!.channelId!))];
    const channels = await client.channelsList({ ids: channelIds });
    expect(channels.items.map((c) => c.id).sort()).toEqual([...channelIds].sort());
    const word = page.items[0]!.snippet!.title!.split(/\s+/)[0]!;
    const found = await client.searchList({ q: word, regionCode: 'FR', maxResults: 10 });
    expect(found.items.length).toBeGreaterThan(0);
    expect(sim.requests.at(-1)).toMatchObject({ method: 'search.list', bucket: 'search.list', cost: 1 });
  });

  it('refuses bad arguments before any request is made', async () => {
    const before = sim.requests.length;
    const cases: Array<[Promise<unknown>, string]> = [
      [client.videosListByIds([]), 'ids'],
      [client.videosListByIds(Array.from({ length: 51 }, (_, i) => `id${i}`)), 'ids'],
      [client.videosListByIds(['a,b']), 'ids'],
      [client.videosListChart({ regionCode: 'USA' }), 'regionCode'],
      [client.videosListChart({ regionCode: 'US', maxResults: 51 }), 'maxResults'],
      [client.searchList({ q: '  ' }), 'q'],
    ];
    for (const [p, field] of cases) {
      const e = (await failure(p)) as UpstreamError;
      expect(e).toBeInstanceOf(UpstreamError);
      expect(e.code).toBe('QG_INVALID_ARGUMENT');
      expect(e.reached).toBe('never');
      expect(e.field).toBe(field);
    }
    expect(sim.requests.length).toBe(before);
  });

  it('rejects a missing key and a malformed base URL at construction', () => {
    expect(() => createYouTubeClient({ apiKey: '' })).toThrow(
      expect.objectContaining({ code: 'QG_MISSING_API_KEY' }),
    );
    expect(() => createYouTubeClient({ apiKey: KEY, baseUrl: 'ftp://x/y' })).toThrow(
      expect.objectContaining({ code: 'QG_INVALID_ARGUMENT', field: 'baseUrl' }),
    );
    expect(() => createYouTubeClient({ apiKey: KEY, baseUrl: 'http://h/v3?key=abc' })).toThrow(
      expect.objectContaining({ field: 'baseUrl' }),
    );
  });
});

describe('response validation', () => {
  it('turns a 200 of the wrong shape into QG_UPSTREAM_BAD_RESPONSE, not a crash', async () => {
    const bodies: unknown[] = [
      {
        kind: 'youtube#videoListResponse',
        etag: 'x',
        pageInfo: { totalResults: 1, resultsPerPage: 1 },
        items: [{ id: 'x' }],
      },
      { kind: 'youtube#searchListResponse', etag: 'x', items: [] },
      {
        kind: 'youtube#videoListResponse',
        items: [{ kind: 'youtube#video', id: 'abc', statistics: { viewCount: 12 } }],
      },
      { kind: 'youtube#videoListResponse', nextPageToken: 42, items: [] },
      'not json at all',
    ];
    let i = 0;
    const srv = await httpServer((_req, res) => {
      const body = bodies[i++];
      if (typeof body === 'string') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(body);
      } else json(res, 200, body);
    });
    const c = createYouTubeClient({ baseUrl: srv.url, apiKey: KEY });
    try {
      for (let n = 0; n < bodies.length; n++) {
        const e = (await failure(c.videosListChart({ regionCode: 'US' }))) as UpstreamError;
        expect(e.code).toBe('QG_UPSTREAM_BAD_RESPONSE');
        expect(e.reached).toBe('yes');
        expect(e.status).toBe(200);
        expect(e.method).toBe('videos.list');
      }
    } finally {
      await c.close();
      await srv.close();
    }
  });
});
