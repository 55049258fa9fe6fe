/**
 * The simulator against the real API: every kind of answer it gives is checked against the v3
 * discovery document (field names, JSON types, uint64 as strings, kind strings), its error bodies
 * against the recorded ones (same envelope, reasons, rpc status and ErrorInfo keys), its categories
 * against the recorded lists, and its parameter bounds against the document. A change that makes
 * the simulator drift from the real API fails here. Fixed clock and seed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { recordedStatus, recordingFiles, recordingJson } from '../upstream/recordings.js';
import { parameterBounds, responseProblems } from './discovery.js';
import { get, JAN_15, type Json, KEY, walkChart } from './helpers.js';

let sim: Simulator;
const ALL_PARTS = 'snippet,contentDetails,statistics,status,liveStreamingDetails';

beforeAll(async () => {
  sim = await startSimulator({ keys: [KEY], now: () => JAN_15 });
});

afterAll(async () => {
  await sim?.close();
});

async function ok(path: string, params: Record<string, string>): Promise<Json> {
  const r = await get(sim, path, { key: KEY, ...params });
  expect(r.status).toBe(200);
  return r.body;
}

/** The structure of an error body: keys, and the values that classify it; free text left out. */
function shape(v: Json, key = ''): Json {
  if (Array.isArray(v)) return v.map((x) => shape(x));
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, shape(v[k], k)]),
    );
  }
  const kept = ['code', 'reason', 'domain', 'status', '@type', 'quota_unit', 'quota_location', 'service'];
  return kept.includes(key) ? v : typeof v;
}

describe('the simulator against the discovery document', () => {
  it('chart pages with every part: live, upcoming, restricted and bare videos among them', async () => {
    const { pages } = await walkChart(sim, {
      part: ALL_PARTS,
      chart: 'mostPopular',
      regionCode: 'US',
      maxResults: '50',
    });
    for (const page of pages) expect(responseProblems('videos', 'list', page)).toEqual([]);
    const videos: Json[] = pages.flatMap((p) => p.items);
    const live = videos.filter((v) => v.snippet.liveBroadcastContent === 'live');
    const upcoming = videos.filter((v) => v.snippet.liveBroadcastContent === 'upcoming');
    expect(live.length + upcoming.length).toBeGreaterThan(0);
    for (const v of [...live, ...upcoming]) {
      expect(v.contentDetails.duration).toBe('P0D');
      expect(v.liveStreamingDetails).toBeDefined();
    }
    for (const v of live) expect(v.liveStreamingDetails.actualStartTime).toBeDefined();
    for (const v of upcoming) expect(v.liveStreamingDetails.scheduledStartTime).toBeDefined();
    for (const v of videos.filter((x) => x.snippet.liveBroadcastContent === 'none'))
      expect(v.liveStreamingDetails).toBeUndefined();
    expect(videos.some((v) => v.contentDetails.regionRestriction?.blocked?.length > 0)).toBe(true);
    expect(videos.some((v) => v.snippet.tags === undefined)).toBe(true);
    expect(videos.some((v) => v.snippet.defaultLanguage === undefined)).toBe(true);
    expect(videos.some((v) => v.statistics.likeCount === undefined)).toBe(true);
    // A restricted video is never blocked where the simulator has a chart.
    for (const v of videos)
      for (const c of v.contentDetails.regionRestriction?.blocked ?? [])
        expect(sim.stats().regions).not.toContain(c);
  });

  it('videos by id, batchGetStats, channels, categories and search', async () => {
    const chart = await ok('/videos', {
      part: 'snippet',
      chart: 'mostPopular',
      regionCode: 'GB',
      maxResults: '20',
    });
    const ids: string[] = chart.items.map((v: Json) => v.id);
    const byId = await ok('/videos', { part: ALL_PARTS, id: ids.join(',') });
    expect(responseProblems('videos', 'list', byId)).toEqual([]);
    const stats = await ok('/videos:batchGetStats', {
      part: 'snippet,statistics,contentDetails',
      id: ids.join(','),
    });
    expect(responseProblems('videos', 'batchGetStats', stats)).toEqual([]);
    const channelIds = [...new Set(chart.items.map((v: Json) => v.snippet.channelId))].join(',');
    const channels = await ok('/channels', { part: 'snippet,statistics', id: channelIds });
    expect(responseProblems('channels', 'list', channels)).toEqual([]);
    for (const region of ['US', 'DE']) {
      const cats = await ok('/videoCategories', { part: 'snippet', regionCode: region });
      expect(responseProblems('videoCategories', 'list', cats)).toEqual([]);
    }
    const search = await ok('/search', { part: 'snippet', q: 'music', maxResults: '10' });
    expect(responseProblems('search', 'list', search)).toEqual([]);
  });

  it('every recorded answer passes the same check', () => {
    const routes: Record<string, [string, string]> = {
      'videos.list': ['videos', 'list'],
      'search.list': ['search', 'list'],
      'channels.list': ['channels', 'list'],
    };
    const answers = recordingFiles().filter((f) => f.startsWith('200-'));
    expect(answers.length).toBeGreaterThan(0);
    for (const f of answers) {
      const method = /^200-([a-z]+\.[a-z]+)-/i.exec(f)?.[1] as string;
      const [resource, verb] = routes[method] as [string, string];
      expect({ f, problems: responseProblems(resource, verb, recordingJson(f)) }).toEqual({
        f,
        problems: [],
      });
    }
  });
});

describe('the simulator against the recordings', () => {
  it('lists the real categories per region: 32 in the US, 31 elsewhere', async () => {
    for (const region of ['US', 'DE']) {
      const recorded = recordingJson<Json[]>(`items-videoCategories-${region}.json`);
      const served = (await ok('/videoCategories', { part: 'snippet', regionCode: region })).items;
      const strip = (c: Json) => ({ id: c.id, title: c.snippet.title, assignable: c.snippet.assignable });
      expect(served.map(strip)).toEqual(recorded.map(strip));
    }
  });

  it('an empty search gives the pageInfo the real API gives', async () => {
    const empty = await ok('/search', { part: 'snippet', q: 'zzzqqqxxx', regionCode: 'FR' });
    const recorded = recordingJson<Json>('200-search.list-empty.json');
    expect(empty.items).toEqual([]);
    expect(empty.pageInfo).toEqual(recorded.pageInfo);
  });

  it('channels.list with no match has no items key and the pageInfo the real API gives', async () => {
    const recorded = recordingJson<Json>('200-channels.list-terminated.json');
    const none = await ok('/channels', { part: 'snippet,statistics', id: 'UCnoSuchChannel0000000000' });
    expect(Object.keys(none).sort()).toEqual(Object.keys(recorded).sort());
    expect('items' in none).toBe(false);
    expect(none.pageInfo).toEqual(recorded.pageInfo);
    const asked = await ok('/channels', {
      part: 'snippet',
      id: 'UCnoSuchChannel0000000000',
      maxResults: '50',
    });
    expect(asked.pageInfo).toEqual({ totalResults: 0, resultsPerPage: 50 });
  });

  it('a bad key is answered as today (or, with legacyErrors, as before)', async () => {
    const now = await get(sim, '/videoCategories', { part: 'snippet', regionCode: 'US', key: 'wrong' });
    expect(now.status).toBe(recordedStatus('400-api-key-invalid.json'));
    expect(shape(now.body)).toEqual(shape(recordingJson('400-api-key-invalid.json')));
    expect(now.body.error.details.map((d: Json) => d['@type'])).toEqual([
      'type.googleapis.com/google.rpc.ErrorInfo',
      'type.googleapis.com/google.rpc.LocalizedMessage',
    ]);
    const classic = await startSimulator({ keys: [KEY], legacyErrors: true });
    try {
      const old = await get(classic, '/videoCategories', { part: 'snippet', regionCode: 'US', key: 'wrong' });
      expect(old.status).toBe(recordedStatus('400-key-invalid-classic.json'));
      expect(shape(old.body)).toEqual(shape(recordingJson('400-key-invalid-classic.json')));
    } finally {
      await classic.close();
    }
  });

  it('a used-up granular bucket is a 429 naming its per-day limit; the units bucket keeps 403 quotaExceeded', async () => {
    sim.spendBehind('project-1', 'search.list', 100);
    const dry = await get(sim, '/search', { part: 'snippet', q: 'news', key: KEY });
    expect(dry.status).toBe(recordedStatus('429-search-list-per-day.json'));
    expect(shape(dry.body)).toEqual(shape(recordingJson('429-search-list-per-day.json')));
    expect(dry.body.error.details[0].metadata).toMatchObject({
      quota_metric: 'youtube.googleapis.com/search_list',
      quota_limit: 'defaultSearchListPerDayPerProject',
      quota_limit_value: '100',
    });

    sim.spendBehind('project-1', 'units', 10_000);
    const units = await get(sim, '/videoCategories', { part: 'snippet', regionCode: 'US', key: KEY });
    expect(units.status).toBe(recordedStatus('403-quota-exceeded.json'));
    expect(shape(units.body)).toEqual(shape(recordingJson('403-quota-exceeded.json')));
  });

  it('a per-minute rate limit has the shape of the per-minute 429', async () => {
    const fresh = await startSimulator({ keys: [KEY], now: () => JAN_15 });
    try {
      fresh.faults.rateLimitBurst({ count: 1, status: 429, retryAfterSec: 1 });
      const r = await get(fresh, '/channels', { part: 'snippet', id: 'UCx', key: KEY });
      expect(r.status).toBe(429);
      expect(shape(r.body)).toEqual(shape(recordingJson('429-queries-per-minute.json')));
    } finally {
      await fresh.close();
    }
  });
});

describe('parameter bounds as the discovery document gives them', () => {
  it('maxResults of videos.list and search.list', async () => {
    const cases: Array<[string, string, Record<string, string>]> = [
      ['videos', '/videos', { part: 'snippet', chart: 'mostPopular', regionCode: 'US' }],
      ['search', '/search', { part: 'snippet', q: 'a' }],
    ];
    const fresh = await startSimulator({ keys: [KEY], now: () => JAN_15 });
    try {
      for (const [resource, path, params] of cases) {
        const { min, max } = parameterBounds(resource, 'list', 'maxResults');
        expect(max).toBe(50);
        const status = async (n: number) =>
          (await get(fresh, path, { key: KEY, ...params, maxResults: String(n) })).status;
        expect(await status(min!)).toBe(200);
        expect(await status(max!)).toBe(200);
        expect(await status(max! + 1)).toBe(400);
        if (min! > 0) expect(await status(min! - 1)).toBe(400);
      }
      expect(parameterBounds('videos', 'list', 'maxResults').min).toBe(1);
    } finally {
      await fresh.close();
    }
  });
});
