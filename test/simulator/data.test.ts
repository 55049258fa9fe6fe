import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { DEFAULT_REGIONS } from '../../src/youtube/simulator/server.js';
import {
  createYouTubeClient,
  parseIsoDuration,
  type Video,
  type YouTubeClient,
} from '../../src/youtube/upstream/index.js';
import { JAN_15, KEY, walkChart } from './helpers.js';

async function chartVideos(
  sim: Simulator,
  region: string,
  extra: Record<string, string> = {},
): Promise<Video[]> {
  const { pages } = await walkChart(sim, { regionCode: region, ...extra });
  return pages.flatMap((p) => p.items as Video[]);
}

const fold = (s: string) =>
  s
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();

describe('deterministic data from a seed', () => {
  it('gives identical answers for the same seed and clock, and different ones for another seed', async () => {
    const a = await startSimulator({ keys: [KEY], seed: 'alpha', now: () => JAN_15 });
    const b = await startSimulator({ keys: [KEY], seed: 'alpha', now: () => JAN_15 });
    const c = await startSimulator({ keys: [KEY], seed: 'beta', now: () => JAN_15 });
    try {
      // Ask b in a different order first: its answers must not depend on request order.
      await chartVideos(b, 'BR');
      const va = await chartVideos(a, 'US');
      const vb = await chartVideos(b, 'US');
      expect(JSON.stringify(vb)).toBe(JSON.stringify(va));
      const vc = await chartVideos(c, 'US');
      const shared = vc.filter((v) => va.some((x) => x.id === v.id));
      expect(shared).toHaveLength(0);
      // An id from one seed is not a video of another.
      const ca = createYouTubeClient({ baseUrl: c.url, apiKey: KEY });
      try {
        expect((await ca.videosListByIds(va.slice(0, 20).map((v) => v.id))).items).toHaveLength(0);
      } finally {
        await ca.close();
      }
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });
});

describe('a realistic corpus', () => {
  let sim: Simulator;
  let client: YouTubeClient;
  const charts = new Map<string, Video[]>();

  beforeAll(async () => {
    sim = await startSimulator({ keys: [KEY], now: () => JAN_15 });
    client = createYouTubeClient({ baseUrl: sim.url, apiKey: KEY });
    for (const r of DEFAULT_REGIONS) charts.set(r, await chartVideos(sim, r));
  });
  afterAll(async () => {
    await client.close();
    await sim.close();
  });

  const ids = (r: string) => new Set(charts.get(r)!.map((v) => v.id));
  const overlap = (a: string, b: string) => [...ids(a)].filter((x) => ids(b).has(x)).length;

  it('overlaps across regions as real charts do: a lot within a language, a little across languages', () => {
    expect(overlap('US', 'GB')).toBeGreaterThan(40);
    expect(overlap('US', 'GB')).toBeLessThan(170);
    expect(overlap('FR', 'CA')).toBeGreaterThan(10);
    expect(overlap('US', 'DE')).toBeGreaterThan(0);
    expect(overlap('US', 'DE')).toBeLessThan(overlap('US', 'GB'));
    expect(overlap('BR', 'IN')).toBeLessThan(overlap('US', 'AU'));
  });

  it('has titles in several languages, with diacritics, Devanagari and emoji, and tags', () => {
    const titles = [...charts.values()].flat().map((v) => v.snippet!.title!);
    expect(titles.some((t) => /[äöüß]/i.test(t))).toBe(true);
    expect(titles.some((t) => /[éèêçà]/i.test(t))).toBe(true);
    expect(titles.some((t) => /[ãõç]/i.test(t))).toBe(true);
    expect(titles.some((t) => /\p{Script=Devanagari}/u.test(t))).toBe(true);
    expect(titles.filter((t) => /\p{Extended_Pictographic}/u.test(t)).length).toBeGreaterThan(100);
    const all = [...charts.values()].flat();
    const langs = new Set(all.map((v) => v.snippet!.defaultAudioLanguage));
    expect([...langs].sort()).toEqual(['bn', 'de', 'en', 'fr', 'hi', 'pt', 'ta']);
    for (const v of all) {
      if (v.snippet!.defaultLanguage !== undefined)
        expect(v.snippet!.defaultLanguage).toBe(v.snippet!.defaultAudioLanguage);
      for (const tag of v.snippet!.tags ?? []) expect(typeof tag).toBe('string');
    }
    expect(charts.get('DE')!.filter((v) => (v.snippet!.tags?.length ?? 0) > 0).length).toBeGreaterThan(100);
    // As on real charts, some videos carry no tags and no default language.
    expect(all.some((v) => v.snippet!.tags === undefined)).toBe(true);
    expect(all.some((v) => v.snippet!.defaultLanguage === undefined)).toBe(true);
  });

  it('has realistic durations, counts and dates', () => {
    for (const v of [...charts.values()].flat()) {
      if (v.snippet!.liveBroadcastContent !== 'none') {
        expect(v.contentDetails!.duration).toBe('P0D');
        continue;
      }
      const sec = parseIsoDuration(v.contentDetails!.duration!);
      expect(sec).toBeGreaterThanOrEqual(10);
      expect(sec).toBeLessThanOrEqual(4 * 3600);
      const views = Number(v.statistics!.viewCount!);
      expect(views).toBeGreaterThan(0);
      if (v.statistics!.likeCount !== undefined) expect(Number(v.statistics!.likeCount)).toBeLessThan(views);
      if (v.statistics!.commentCount !== undefined)
        expect(Number(v.statistics!.commentCount)).toBeLessThan(views);
      expect(Date.parse(v.snippet!.publishedAt!)).toBeLessThan(JAN_15);
      expect(Date.parse(v.snippet!.publishedAt!)).toBeGreaterThan(JAN_15 - 10 * 86_400_000);
    }
    const music = charts
      .get('US')!
      .filter(
        (v) =>
          v.snippet!.categoryId === '10' &&
          v.snippet!.liveBroadcastContent === 'none' &&
          !v.snippet!.title!.includes('#shorts'),
      );
    for (const v of music) expect(parseIsoDuration(v.contentDetails!.duration!)).toBeLessThan(600);
  });

  it('moves on over time: a later fetch sees new videos and higher counts', async () => {
    const later = await startSimulator({ keys: [KEY], now: () => JAN_15 + 3 * 3_600_000 });
    try {
      const before = charts.get('US')!;
      const after = await chartVideos(later, 'US');
      const beforeIds = new Set(before.map((v) => v.id));
      const fresh = after.filter((v) => !beforeIds.has(v.id));
      expect(fresh.length).toBeGreaterThan(3);
      expect(fresh.length).toBeLessThan(after.length / 2);
      let grew = 0;
      for (const v of after) {
        const old = before.find((x) => x.id === v.id);
        if (!old) continue;
        expect(Number(v.statistics!.viewCount!)).toBeGreaterThanOrEqual(Number(old.statistics!.viewCount!));
        if (Number(v.statistics!.viewCount!) > Number(old.statistics!.viewCount!)) grew++;
      }
      expect(grew).toBeGreaterThan(100);
    } finally {
      await later.close();
    }
  });

  it('answers videos.list?id= for any video it has listed, long after it left the charts', async () => {
    const listed = charts.get('IN')!.slice(0, 50);
    const monthLater = await startSimulator({ keys: [KEY], now: () => JAN_15 + 30 * 86_400_000 });
    const c = createYouTubeClient({ baseUrl: monthLater.url, apiKey: KEY });
    try {
      const res = await c.videosListByIds(listed.map((v) => v.id));
      expect(res.items.map((v) => v.id)).toEqual(listed.map((v) => v.id));
      res.items.forEach((v, i) => {
        expect(v.snippet!.title!).toBe(listed[i]!.snippet!.title!);
        expect(Number(v.statistics!.viewCount!)).toBeGreaterThanOrEqual(
          Number(listed[i]!.statistics!.viewCount!),
        );
      });
      const stats = await c.videosBatchGetStats(listed.map((v) => v.id));
      expect(stats.items).toHaveLength(50);
    } finally {
      await c.close();
      await monthLater.close();
    }
  });

  it('searches the same corpus, folding case and diacritics', async () => {
    const res = await client.searchList({ q: 'POKEMON', maxResults: 50 });
    expect(res.items.length).toBeGreaterThan(0);
    for (const item of res.items)
      expect(fold(`${item.snippet!.title!} ${item.snippet!.description!}`)).toContain('pokemon');
    const found = await client.videosListByIds(res.items.slice(0, 10).map((i) => i.id.videoId!));
    expect(found.items).toHaveLength(Math.min(10, res.items.length));
    const german = await client.searchList({ q: 'übersee', regionCode: 'DE', maxResults: 5 });
    for (const item of german.items)
      expect(fold(item.snippet!.title! + item.snippet!.description!)).toContain('ubersee');
    const none = await client.searchList({ q: 'zzzqqqxxx' });
    expect(none.items).toHaveLength(0);
    expect(none.nextPageToken).toBeUndefined();
  });

  it('answers channels.list for the channels its videos name', async () => {
    const channelIds = [...new Set(charts.get('BR')!.map((v) => v.snippet!.channelId!))].slice(0, 50);
    const res = await client.channelsList({ ids: channelIds });
    expect(res.items.map((c) => c.id).sort()).toEqual([...channelIds].sort());
    for (const ch of res.items) {
      const v = charts.get('BR')!.find((x) => x.snippet!.channelId === ch.id)!;
      expect(ch.snippet!.title!).toBe(v.snippet!.channelTitle!);
      expect(ch.snippet!.defaultLanguage).toBe(v.snippet!.defaultAudioLanguage);
      expect(DEFAULT_REGIONS).toContain(ch.snippet!.country);
    }
  });
});
