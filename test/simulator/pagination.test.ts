import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { DEFAULT_REGIONS } from '../../src/youtube/simulator/server.js';
import { createYouTubeClient } from '../../src/youtube/upstream/index.js';
import { get, JAN_15, KEY, walkChart } from './helpers.js';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ keys: [KEY], now: () => JAN_15 });
});
afterAll(() => sim.close());

describe('trending charts and pagination', () => {
  it.each(DEFAULT_REGIONS)('walks the whole %s chart in pages of <= 50 and ends', async (region) => {
    const { pages, ids } = await walkChart(sim, { regionCode: region });
    expect(ids.length).toBeGreaterThanOrEqual(190);
    expect(ids.length).toBeLessThanOrEqual(200);
    expect(new Set(ids).size).toBe(ids.length);
    expect(pages.length).toBe(Math.ceil(ids.length / 50));
    pages.forEach((p, i) => {
      expect(p.items.length).toBeLessThanOrEqual(50);
      expect(p.pageInfo).toEqual({ totalResults: ids.length, resultsPerPage: 50 });
      expect(p.prevPageToken === undefined).toBe(i === 0);
    });
    expect(pages.at(-1).nextPageToken).toBeUndefined();
  });

  it('gives the same chart whatever the page size', async () => {
    const big = await walkChart(sim, { regionCode: 'DE' });
    const small = await walkChart(sim, { regionCode: 'DE', maxResults: '7' });
    expect(small.ids).toEqual(big.ids);
    expect(small.pages.length).toBe(Math.ceil(big.ids.length / 7));
  });

  it('serves the Music, Gaming and Movies charts by videoCategoryId, and no others', async () => {
    for (const cat of ['10', '20', '30']) {
      const { pages, ids } = await walkChart(sim, { regionCode: 'FR', videoCategoryId: cat });
      expect(ids.length).toBeGreaterThanOrEqual(150);
      for (const p of pages) for (const v of p.items) expect(v.snippet.categoryId).toBe(cat);
    }
    const sports = await get(sim, '/videos', {
      part: 'snippet',
      chart: 'mostPopular',
      videoCategoryId: '17',
      key: KEY,
    });
    expect(sports.status).toBe(404);
    expect(sports.body.error.errors[0].reason).toBe('videoChartNotFound');
    const unknown = await get(sim, '/videos', {
      part: 'snippet',
      chart: 'mostPopular',
      videoCategoryId: '999',
      key: KEY,
    });
    expect(unknown.status).toBe(400);
  });

  it('keeps a walk on the chart it started on even when the chart moves on mid-walk', async () => {
    const moving = await startSimulator({ keys: [KEY], now: () => JAN_15 });
    try {
      const before = await walkChart(moving, { regionCode: 'US' });
      const first = await get(moving, '/videos', {
        part: 'id',
        chart: 'mostPopular',
        regionCode: 'US',
        maxResults: '50',
        key: KEY,
      });
      moving.clock.advance(6 * 3_600_000);
      const rest = await walkChart(moving, { regionCode: 'US', pageToken: first.body.nextPageToken });
      expect([...first.body.items.map((v: { id: string }) => v.id), ...rest.ids]).toEqual(before.ids);
      const fresh = await walkChart(moving, { regionCode: 'US' });
      expect(fresh.ids).not.toEqual(before.ids);
    } finally {
      await moving.close();
    }
  });

  it('answers a forged page token with 400 invalidPageToken, and charges it', async () => {
    const before = sim.charged();
    const r = await get(sim, '/videos', {
      part: 'id',
      chart: 'mostPopular',
      pageToken: 'CAxyz_1_2',
      key: KEY,
    });
    expect(r.status).toBe(400);
    expect(r.body.error.errors[0].reason).toBe('invalidPageToken');
    expect(sim.charged() - before).toBe(1);
  });

  it('checks parameters the way the real API does', async () => {
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ chart: 'mostPopular' }, 400, 'required'],
      [{ part: 'snippet,bogus', chart: 'mostPopular' }, 400, 'unknownPart'],
      [{ part: 'snippet' }, 400, 'incompatibleParameters'],
      [{ part: 'snippet', chart: 'mostPopular', id: 'x' }, 400, 'incompatibleParameters'],
      [{ part: 'snippet', chart: 'leastPopular' }, 400, 'invalidChart'],
      [{ part: 'snippet', chart: 'mostPopular', maxResults: '51' }, 400, 'invalidParameter'],
      [{ part: 'snippet', chart: 'mostPopular', regionCode: 'JP' }, 400, 'invalidRegionCode'],
    ];
    for (const [params, status, reason] of cases) {
      const r = await get(sim, '/videos', { ...params, key: KEY });
      expect(r.status, JSON.stringify(params)).toBe(status);
      expect(r.body.error.code).toBe(status);
      expect(r.body.error.errors[0].reason, JSON.stringify(params)).toBe(reason);
    }
  });

  it('is walked to the end by the client as well', async () => {
    const client = createYouTubeClient({ baseUrl: sim.url, apiKey: KEY });
    try {
      let token: string | undefined;
      let n = 0;
      let calls = 0;
      do {
        const page = await client.videosListChart({
          regionCode: 'IN',
          ...(token ? { pageToken: token } : {}),
        });
        n += page.items.length;
        token = page.nextPageToken;
        calls++;
      } while (token && calls < 10);
      expect(token).toBeUndefined();
      expect(n).toBeGreaterThanOrEqual(190);
      expect(calls).toBe(Math.ceil(n / 50));
    } finally {
      await client.close();
    }
  });
});
