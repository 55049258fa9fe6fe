import { describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { createYouTubeClient } from '../../src/youtube/upstream/index.js';
import { get, JAN_15, KEY, outcome, useSimulators } from './helpers.js';

const setup = useSimulators();
const code = outcome;

const sumLog = (sim: Simulator, filter: { project?: string; bucket?: string } = {}) =>
  sim.requests
    .filter(
      (r) =>
        (filter.project === undefined || r.project === filter.project) &&
        (filter.bucket === undefined || r.bucket === filter.bucket),
    )
    .reduce((s, r) => s + r.cost, 0);

describe('quota buckets under youtube-2026', () => {
  it('charges each method to its own bucket at the profile cost', async () => {
    const { sim, client } = await setup({ keys: [`${KEY}@p`], now: () => JAN_15 });
    const page = await client.videosListChart({ regionCode: 'US', maxResults: 5 });
    await client.videosListByIds(page.items.map((v) => v.id));
    await client.videosBatchGetStats(page.items.map((v) => v.id));
    await client.searchList({ q: 'music' });
    await client.channelsList({ ids: [page.items[0]!.snippet!.channelId!] });
    await client.videoCategoriesList({ regionCode: 'US' });
    expect(sim.requests.map((r) => [r.method, r.bucket, r.cost])).toEqual([
      ['videos.list', 'units', 1],
      ['videos.list', 'units', 1],
      ['videos.batchGetStats', 'videos.batchGetStats', 1],
      ['search.list', 'search.list', 1],
      ['channels.list', 'units', 1],
      ['videoCategories.list', 'units', 1],
    ]);
    expect(sim.usage('p', 'units')).toMatchObject({ quota: 10_000, used: 4, remaining: 9_996 });
    expect(sim.usage('p', 'search.list')).toMatchObject({ quota: 100, used: 1 });
    expect(sim.usage('p', 'videos.batchGetStats')).toMatchObject({ quota: 10_000, used: 1 });
    expect(sim.charged()).toBe(6);
    expect(sim.charged({ bucket: 'units' })).toBe(4);
  });

  it('an exhausted search bucket answers quotaExceeded while videos.list and batchGetStats go on', async () => {
    const { sim, client } = await setup({ keys: [KEY], buckets: { 'search.list': 3 }, now: () => JAN_15 });
    for (let i = 0; i < 3; i++) expect(await code(client.searchList({ q: 'news' }))).toBe('ok');
    expect(await code(client.searchList({ q: 'news' }))).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
    expect(await code(client.searchList({ q: 'news' }))).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
    const page = await client.videosListChart({ regionCode: 'GB', maxResults: 3 });
    expect(page.items).toHaveLength(3);
    expect(await code(client.videosBatchGetStats(page.items.map((v) => v.id)))).toBe('ok');
    expect(sim.usage('project-1', 'search.list').remaining).toBe(0);
  });

  it('an exhausted units bucket stops videos.list while search.list goes on', async () => {
    const { client } = await setup({ keys: [KEY], quota: 2, now: () => JAN_15 });
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('ok');
    expect(await code(client.videosListChart({ regionCode: 'US' }))).toBe('ok');
    expect(await code(client.videosListChart({ regionCode: 'US' }))).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
    expect(await code(client.searchList({ q: 'news' }))).toBe('ok');
  });

  it('charges every answered request, invalid ones and quotaExceeded included, but not an unknown or missing key', async () => {
    const { sim, client } = await setup({ keys: [KEY], quota: 3, now: () => JAN_15 });
    expect((await get(sim, '/videos', { chart: 'mostPopular', key: KEY })).status).toBe(400); // part missing
    expect((await get(sim, '/videos', { part: 'id', chart: 'mostPopular', key: 'nope' })).status).toBe(400); // keyInvalid
    expect((await get(sim, '/videos', { part: 'id', chart: 'mostPopular' })).status).toBe(403); // no key
    expect((await get(sim, '/nothing-here', { key: KEY })).status).toBe(404);
    expect(sim.charged()).toBe(1);
    await client.videoCategoriesList({ regionCode: 'US' });
    await client.videoCategoriesList({ regionCode: 'US' });
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
    expect(sim.charged()).toBe(4);
    expect(sim.charged()).toBe(sumLog(sim));
    expect(sim.requests.map((r) => [r.status, r.reason ?? null, r.cost])).toEqual([
      [400, 'required', 1],
      [400, 'keyInvalid', 0],
      [403, 'forbidden', 0],
      [404, 'notFound', 0],
      [200, null, 1],
      [200, null, 1],
      [403, 'quotaExceeded', 1],
    ]);
  });

  it('K@project puts keys on one quota; a plain key is a project of its own', async () => {
    const { sim } = await setup({ keys: ['k1@team', 'k2@team', 'k3'], quota: 2, now: () => JAN_15 });
    const [a, b, c] = ['k1', 'k2', 'k3'].map((apiKey) => createYouTubeClient({ baseUrl: sim.url, apiKey }));
    try {
      expect(await code(a!.videoCategoriesList({ regionCode: 'US' }))).toBe('ok');
      expect(await code(b!.videoCategoriesList({ regionCode: 'US' }))).toBe('ok');
      expect(await code(a!.videoCategoriesList({ regionCode: 'US' }))).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
      expect(await code(c!.videoCategoriesList({ regionCode: 'US' }))).toBe('ok');
      expect(sim.charged({ project: 'team' })).toBe(3);
      expect(sim.charged({ project: 'project-3' })).toBe(1);
    } finally {
      for (const x of [a, b, c]) await x!.close();
    }
  });

  it('spend behind the guard takes quota but is not charged to requests', async () => {
    const { sim, client } = await setup({ keys: [`${KEY}@p`], quota: 10, now: () => JAN_15 });
    sim.spendBehind('p', 'units', 8);
    expect(sim.usage('p', 'units')).toMatchObject({ used: 8, remaining: 2, spentBehind: 8, charged: 0 });
    await client.videoCategoriesList({ regionCode: 'US' });
    await client.videoCategoriesList({ regionCode: 'US' });
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
    expect(sim.charged()).toBe(3);
    expect(() => sim.spendBehind('nobody', 'units', 1)).toThrow(
      expect.objectContaining({ code: 'QG_INVALID_ARGUMENT' }),
    );
    expect(() => sim.spendBehind('p', 'nope', 1)).toThrow(
      expect.objectContaining({ code: 'QG_UNKNOWN_BUCKET' }),
    );
  });
});

describe('quota buckets under youtube-classic', () => {
  it('has one bucket in which search.list costs 100, and no videos.batchGetStats', async () => {
    const { sim, client } = await setup({
      keys: [KEY],
      profile: 'youtube-classic',
      quota: 250,
      now: () => JAN_15,
    });
    expect(await code(client.searchList({ q: 'music' }))).toBe('ok');
    expect(await code(client.searchList({ q: 'music' }))).toBe('ok');
    expect(sim.usage('project-1', 'units')).toMatchObject({ used: 200, remaining: 50 });
    expect(await code(client.videosListChart({ regionCode: 'US' }))).toBe('ok');
    expect(await code(client.searchList({ q: 'music' }))).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
    expect(await code(client.videosBatchGetStats(['abc']))).toBe('QG_UPSTREAM_NOT_FOUND');
    expect(sim.requests.at(-1)).toMatchObject({ status: 404, cost: 0 });
    expect(Object.keys(sim.stats().projects['project-1']!)).toEqual(['units']);
    await expect(
      startSimulator({ profile: 'youtube-classic', buckets: { 'search.list': 5 } }),
    ).rejects.toMatchObject({
      code: 'QG_UNKNOWN_BUCKET',
    });
  });
});

describe('the daily reset at midnight America/Los_Angeles', () => {
  async function exhaustedAt(iso: string) {
    let now = Date.parse(iso);
    const { sim, client } = await setup({ keys: [KEY], quota: 1, now: () => now });
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('ok');
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
    return { sim, client, setNow: (t: string) => (now = Date.parse(t)) };
  }

  it('resets at 08:00 UTC in winter (PST), not at UTC midnight', async () => {
    const { sim, client, setNow } = await exhaustedAt('2026-01-14T23:30:00Z');
    expect(new Date(sim.nextResetAt()).toISOString()).toBe('2026-01-15T08:00:00.000Z');
    setNow('2026-01-15T00:30:00Z'); // a new UTC day, still Jan 14 in Los Angeles
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
    setNow('2026-01-15T07:59:59.999Z');
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
    setNow('2026-01-15T08:00:00.000Z');
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('ok');
    expect(new Date(sim.nextResetAt()).toISOString()).toBe('2026-01-16T08:00:00.000Z');
  });

  it('resets at 07:00 UTC in summer (PDT)', async () => {
    const { sim, client, setNow } = await exhaustedAt('2026-07-14T20:00:00Z');
    expect(new Date(sim.nextResetAt()).toISOString()).toBe('2026-07-15T07:00:00.000Z');
    setNow('2026-07-15T06:59:59.999Z');
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
    setNow('2026-07-15T07:00:00.000Z');
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('ok');
  });

  it('follows the clock across the spring-forward day (23 hours long)', async () => {
    const { sim, client, setNow } = await exhaustedAt('2026-03-08T09:00:00Z'); // 01:00 PST, March 8
    expect(new Date(sim.nextResetAt()).toISOString()).toBe('2026-03-09T07:00:00.000Z');
    setNow('2026-03-09T06:59:00Z');
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
    setNow('2026-03-09T07:00:00Z');
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('ok');
  });

  it('jumps with clock.set and clock.advance', async () => {
    const { sim, client } = await setup({
      keys: [KEY],
      quota: 1,
      now: () => Date.parse('2026-01-15T12:00:00Z'),
    });
    await client.videoCategoriesList({ regionCode: 'US' });
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
    sim.clock.set(sim.nextResetAt());
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('ok');
    sim.clock.advance(86_400_000);
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('ok');
    expect(sim.charged()).toBe(4);
  });

  it('with dayLengthSec, midnight comes every N seconds from the start', async () => {
    let now = JAN_15;
    const { sim, client } = await setup({ keys: [KEY], quota: 1, dayLengthSec: 60, now: () => now });
    expect(sim.nextResetAt()).toBe(JAN_15 + 60_000);
    await client.videoCategoriesList({ regionCode: 'US' });
    now += 59_999;
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
    now += 1;
    expect(await code(client.videoCategoriesList({ regionCode: 'US' }))).toBe('ok');
    expect(sim.nextResetAt()).toBe(JAN_15 + 120_000);
    expect(sim.stats().chartPeriodMs).toBe(2_500);
  });
});
