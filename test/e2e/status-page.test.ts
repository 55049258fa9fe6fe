/**
 * The status page in a real browser (Debian's headless Chromium, never a downloaded one): loaded
 * while a short drill runs and again once it has ended, its chart's points are checked against the
 * run history and the ledger, and a screenshot is saved (UPDATE_SCREENSHOT=1 writes the one shown in
 * docs/operations.md).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDrill } from '../../src/drill/index.js';
import { bucketWindow } from '../../src/guard/keys.js';
import { openRunHistory, type RunSummary } from '../../src/history/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { renderStatusPage, statusPageData } from '../../src/metrics/page.js';
import { startMetricsServer } from '../../src/metrics/server.js';
import type { YouTubeConfig as Config } from '../../src/youtube/config/types.js';
import { CHROMIUM, CHROMIUM_HINT, dumpDom, screenshot, updateDocsScreenshot } from '../harness/chromium.js';

if (!CHROMIUM) console.warn(`status page browser test skipped: ${CHROMIUM_HINT}`);

interface Point {
  kind: string;
  at: number;
  used: number;
  cy: number;
}

/** The points of one bucket's chart, as the browser parsed them. */
function chartPoints(dom: string, bucket: string): Point[] {
  const svg = new RegExp(
    `<svg class="chart"[^>]*data-bucket="${bucket.replace('.', '\\.')}"[^>]*>([\\s\\S]*?)</svg>`,
  ).exec(dom);
  expect(svg, `a chart for ${bucket}`).not.toBeNull();
  return [...svg![1]!.matchAll(/<circle [^>]*>/g)].map(([tag]) => {
    const attr = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(tag)?.[1] ?? '';
    return {
      kind: attr('data-kind'),
      at: Number(attr('data-at')),
      used: Number(attr('data-used')),
      cy: Number(attr('cy')),
    };
  });
}

/** Every run point is what the history recorded the ledger held when that run ended; drawn on one linear scale. */
function expectFollowsHistory(points: Point[], runs: RunSummary[], bucket: string): void {
  const recorded = new Map(
    runs.filter((r) => r.used[bucket] !== undefined).map((r) => [r.finishedAt, r.used[bucket]!]),
  );
  const runPoints = points.filter((p) => p.kind === 'run');
  expect(runPoints.length).toBeGreaterThan(3);
  for (const p of runPoints) expect(recorded.get(p.at), `run ended at ${p.at}`).toBe(p.used);
  // In time order, ending with the reading of now.
  expect(points.map((p) => p.at)).toEqual([...points.map((p) => p.at)].sort((a, b) => a - b));
  expect(points.at(-1)!.kind).toBe('now');
  // The same units are drawn at the same height, and more units higher up (a smaller cy).
  const [lo, hi] = [points[0]!, points.reduce((a, b) => (b.used > a.used ? b : a))];
  expect(hi.used).toBeGreaterThan(lo.used);
  const perUnit = (lo.cy - hi.cy) / (hi.used - lo.used);
  for (const p of points) expect(p.cy).toBeCloseTo(lo.cy - (p.used - lo.used) * perUnit, 0);
}

describe.skipIf(!CHROMIUM)('the status page in headless Chromium', () => {
  it('charts what the ledger held after each run of a short drill, during the day and after it', {
    timeout: 180_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qg-page-'));
    const store = `sqlite:${join(dir, 'ledger.db')}`;
    let config: Config | undefined;
    let url = '';
    let during: Promise<string> | undefined;
    let shot: Promise<unknown> | undefined;
    const shotFile = join(dir, 'status-page.png');
    // A light day (4 regions, a small quota): the drill tests beside it carry the load.
    const drill = runDrill({
      daySeconds: 24,
      quota: 400,
      regions: ['US', 'GB', 'DE', 'FR'],
      store,
      http: { host: '127.0.0.1', port: 0 },
      onStart: (service) => {
        config = service.config;
        url = service.server!.url;
        // Half-way through the day; the screenshot near its end, while every region is fresh.
        during = new Promise((resolve) => setTimeout(resolve, 12_000)).then(() => dumpDom(`${url}/`));
        shot = new Promise((resolve) => setTimeout(resolve, 19_000)).then(() =>
          screenshot(`${url}/`, shotFile, { width: 1100, height: 1400 }),
        );
      },
    });
    const report = await drill;
    expect(config).toBeDefined();
    const dom = await during!;
    expect(dom).toContain('<title>quota-guard status</title>');
    const history = await openRunHistory(config!.store);
    const ledger = await openLedger(config!.store.url);
    try {
      const runs = await history.list({ credentials: ['default'], limit: 5_000 });
      expect(runs.length).toBeGreaterThan(20);
      const midday = chartPoints(dom, 'units');
      expectFollowsHistory(midday, runs, 'units');
      // Half-way, the chart holds about half the day's runs.
      expect(midday.filter((p) => p.kind === 'run').length).toBeLessThan(runs.length);
      expect(dom).toMatch(/<h2>Regions/);
      expect(dom).toMatch(/<table class="runs[ "]/);

      // After the day: served the way `quota-guard serve` serves it, from the store alone.
      const server = await startMetricsServer({
        metrics: createMetrics({ config: config!, ledger, history }),
        ledger,
        page: async () =>
          renderStatusPage(await statusPageData(config!, ledger, history, { refreshSeconds: 5 })),
        port: 0,
      });
      try {
        // The drill's 24 s window keeps sliding after the day: its oldest spends age out while the page
        // loads, so the page's reading of now lies between the ledger's just before and just after.
        const credential = config!.credential('default');
        const peek = async () => {
          const w = bucketWindow(credential, credential.buckets['units']!, Date.now());
          return (await ledger.peek({ key: w.key, windowMs: w.windowMs })).used;
        };
        const before = await peek();
        const end = await dumpDom(`${server.url}/`);
        const after = await peek();
        const points = chartPoints(end, 'units');
        expectFollowsHistory(points, runs, 'units');
        expect(points.at(-1)!.used).toBeLessThanOrEqual(before);
        expect(points.at(-1)!.used).toBeGreaterThanOrEqual(after);
        expect(before).toBeLessThanOrEqual(report.buckets['units']!.recorded);
        // Every region's freshness and the last runs are on the page, and the upstream's block.
        for (const region of config!.regions) expect(end).toContain(`data-region="${region}"`);
        expect(end).toMatch(/<meta http-equiv="refresh" content="5">/);
        if (report.blockedAtDayFraction !== null) expect(end).toContain('upstream answered quotaExceeded');
        expect(end).not.toMatch(/<script|https?:\/\/(?!127\.0\.0\.1)/);

        await shot;
        updateDocsScreenshot(shotFile, 'status-page.png');
      } finally {
        await server.close();
      }
    } finally {
      await history.close();
      await ledger.close();
    }
  });
});
