import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import type { Video } from '../../src/youtube/upstream/index.js';
import { JAN_15, KEY, walkChart } from './helpers.js';

/** The script each added region's chart is mostly written in. */
const SCRIPT: Record<string, RegExp> = {
  JP: /[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]/u,
  KR: /\p{Script=Hangul}/u,
  TW: /\p{Script=Han}/u,
  TH: /\p{Script=Thai}/u,
  RU: /\p{Script=Cyrillic}/u,
  SA: /\p{Script=Arabic}/u,
  EG: /\p{Script=Arabic}/u,
  IL: /\p{Script=Hebrew}/u,
};

describe('charts in their regions’ scripts', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({
      keys: [KEY],
      seed: 'scripts',
      now: () => JAN_15,
      regions: [...Object.keys(SCRIPT), 'IN', 'US'],
    });
  });
  afterAll(() => sim.close());

  it('a region added to the list gets titles, tags and channel names in its own script', async () => {
    for (const [region, script] of Object.entries(SCRIPT)) {
      const { pages } = await walkChart(sim, { regionCode: region });
      const videos = pages.flatMap((p) => p.items as Video[]);
      expect(videos.length, region).toBeGreaterThan(50);
      const home = videos.filter((v) => script.test(v.snippet?.title ?? ''));
      // Charts overlap across regions (global hits), but most of a chart is the region's own.
      expect(home.length / videos.length, region).toBeGreaterThan(0.5);
      expect(
        home.some((v) => (v.snippet?.tags ?? []).some((t) => script.test(t))),
        region,
      ).toBe(true);
      expect(
        home.some((v) => script.test(v.snippet?.channelTitle ?? '')),
        region,
      ).toBe(true);
    }
  });

  it("India's chart has Hindi, Tamil and Bengali titles", async () => {
    const { pages } = await walkChart(sim, { regionCode: 'IN' });
    const titles = pages.flatMap((p) => (p.items as Video[]).map((v) => v.snippet?.title ?? ''));
    for (const script of [/\p{Script=Devanagari}/u, /\p{Script=Tamil}/u, /\p{Script=Bengali}/u]) {
      expect(
        titles.some((t) => script.test(t)),
        String(script),
      ).toBe(true);
    }
  });
});
