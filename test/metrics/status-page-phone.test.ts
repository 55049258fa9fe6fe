/**
 * The status page on a phone (390 px) and a desktop in Debian's headless Chromium: no horizontal
 * scroll; the summary at the top says the worst thing now (the block, until when, and the command
 * that lifts it) within the first screen; each bucket's card says when quota frees up (the CLI's
 * `next 100`), the blocked one until when, why, who reported it and the command; each stale region's
 * card says why and since when, its last run's whole reason a tap away (nothing only on hover);
 * the Blocks table's "why" and "in 12h 42m" are on screen; a Last-runs row stays a few lines tall. The page is loaded
 * with a measuring script appended (the page itself has none), which writes what the browser laid
 * out into the DOM that `--dump-dom` returns. Screenshots: docs/img/status-390.png and
 * docs/img/status-desktop.png (UPDATE_SCREENSHOT=1 rewrites them).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard } from '../../src/guard/index.js';
import { openRunHistory, type RunHistory } from '../../src/history/index.js';
import { openLedger } from '../../src/ledger/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { renderStatusPage, statusPageData } from '../../src/metrics/page.js';
import { loadYouTubeConfig as loadConfig } from '../../src/youtube/config/part.js';
import { configFile, sqliteStore } from '../cli/helpers.js';
import { CHROMIUM, CHROMIUM_HINT, dumpDom, screenshot, updateDocsScreenshot } from '../harness/chromium.js';

if (!CHROMIUM) console.warn(`status page phone test skipped: ${CHROMIUM_HINT}`);

const dir = mkdtempSync(join(tmpdir(), 'qg-page-'));
const quiet = { info() {}, warn() {} };
const BLOCK_REASON =
  'upstream answered quotaExceeded to videos.list at 2026-11-23T18:00:00.000Z although the ledger allowed it; reported by trending on etl-1';
// What the guard's stop says for a run that met the block (guard.ts, stopMessage): long, and the same
// for every region it stopped.
const LONG_REASON = `stopped: default/units is blocked until 2026-11-24T08:00:00.000Z (${BLOCK_REASON}); resume in 12h 42m (2026-11-24T08:00:00.000Z)`;

let ledger: Ledger;
let history: RunHistory;
let html: string;

beforeAll(async () => {
  const file = configFile(
    [
      `store: "${sqliteStore()}"`,
      'regions: [US, GB, DE, FR, IN, BR]',
      'credentials:',
      '  - id: default',
      'budgets:',
      '  - { id: manual-search, methods: [search.list], tiers: [manual], limit: 40, window: 24h }',
      '',
    ].join('\n'),
  );
  const config = loadConfig({ file, env: {} });
  ledger = await openLedger(config.store.url);
  history = await openRunHistory(config.store);
  const guard = createGuard({ config, ledger, logger: quiet });
  await guard.spend({
    credential: 'default',
    method: 'videos.list',
    tier: 'scheduled',
    cost: 41,
    tag: 't',
  });
  await guard.block('default', 'units', BLOCK_REASON, Date.now() + (12 * 60 + 42) * 60_000 + 10_000);
  const now = Date.now();
  const run = (
    region: string,
    minutesAgo: number,
    outcome: 'done' | 'stopped' | 'failed',
    reason: string | null,
  ) =>
    history.record({
      credential: 'default',
      job: `trending:${region}`,
      labels: { region },
      startedAt: now - minutesAgo * 60_000 - 3_000,
      finishedAt: now - minutesAgo * 60_000,
      outcome,
      pages: 4,
      units: 4,
      items: 200,
      reason,
      used: { units: 41 },
    });
  await run('US', 5, 'done', null);
  await run('GB', 200, 'done', null);
  // Every region after GB's last success was stopped by the block, with its long reason.
  for (const r of ['GB', 'DE', 'FR', 'IN']) await run(r, 30, 'stopped', LONG_REASON);
  await run('BR', 20, 'failed', 'the upstream rejected the API key (keyInvalid); check QG_API_KEY');
  // One page, one unit, one video: said in the singular.
  await history.record({
    credential: 'default',
    job: 'backfill',
    labels: {},
    startedAt: now - 60_000,
    finishedAt: now - 50_000,
    outcome: 'done',
    pages: 1,
    units: 1,
    items: 1,
    reason: null,
    used: { units: 41 },
  });
  html = renderStatusPage(await statusPageData(config, ledger, history, { localZone: 'Europe/Paris' }));
});

afterAll(async () => {
  await history?.close();
  await ledger?.close();
});

/**
 * What the browser laid out for the page in a frame `width` px wide (a window cannot be made narrower
 * than 500 px; a frame's viewport can): measured by the host page's script once the frame has loaded.
 */
const MEASURE = `<script>
function measure(f) {
  const win = f.contentWindow, doc = f.contentDocument;
  const W = win.innerWidth, H = win.innerHeight;
  const box = (e) => { const r = e.getBoundingClientRect(); return { top: r.top + win.scrollY, bottom: r.bottom + win.scrollY, left: r.left, right: r.right, width: r.width, height: r.height, text: e.textContent }; };
  const out = {
    W, H, scrollWidth: doc.documentElement.scrollWidth,
    summary: box(doc.querySelector('section.summary')),
    headline: box(doc.querySelector('section.summary .headline')),
    blockinfo: [...doc.querySelectorAll('section.card .blockinfo')].map(box),
    details: [...doc.querySelectorAll('.region details')].map((e) => ({ region: e.closest('.region').dataset.region, open: e.open, text: e.textContent })),
    frees: [...doc.querySelectorAll('section.card .frees')].map((e) => ({ ...box(e), fromTop: box(e).bottom - box(e.closest('section')).top })),
    regionsTop: box([...doc.querySelectorAll('h2')].find((h) => h.textContent.startsWith('Regions'))).top,
    stale: [...doc.querySelectorAll('.region[data-stale="true"]')].map((e) => ({ region: e.dataset.region, why: e.querySelector('.why') && box(e.querySelector('.why')) })),
    blocks: [...doc.querySelectorAll('table.blocks tbody tr')].map((tr) => ({ until: box(tr.querySelector('td.until')), why: box(tr.querySelector('td.why')) })),
    runs: [...doc.querySelectorAll('table.runs tbody tr')].map((tr) => box(tr).height),
  };
  const pre = document.createElement('pre'); pre.id = 'measure'; pre.textContent = JSON.stringify(out); document.body.append(pre);
}
</script>`;

/** A host page showing the status page in a frame `width` × `height` px. */
function host(width: number, height: number, measuring: boolean): string {
  const src = html.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  return `<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0;background:#98a2b3">${measuring ? MEASURE : ''}<iframe style="border:0;display:block;width:${width}px;height:${height}px"${measuring ? ' onload="measure(this)"' : ''} srcdoc="${src}"></iframe></body></html>`;
}

interface Box {
  top: number;
  bottom: number;
  left: number;
  right: number;
  width: number;
  height: number;
  text: string;
}
interface Measure {
  W: number;
  H: number;
  scrollWidth: number;
  summary: Box;
  headline: Box;
  blockinfo: Box[];
  details: Array<{ region: string; open: boolean; text: string }>;
  frees: Array<Box & { fromTop: number }>;
  regionsTop: number;
  stale: Array<{ region: string; why: Box | null }>;
  blocks: Array<{ until: Box; why: Box }>;
  runs: number[];
}

/** The browser's window for a page `width` px wide: 500 px at the least (a narrower page is in a frame). */
function window(width: number, height: number) {
  return { width: Math.max(width, 500), height };
}

async function measure(width: number, height: number): Promise<Measure> {
  const page = join(dir, `page-${width}.html`);
  writeFileSync(page, host(width, height, true));
  const stdout = await dumpDom(`file://${page}`, window(width, height));
  const m = /<pre id="measure">([\s\S]*?)<\/pre>/.exec(stdout);
  expect(m, 'the measuring script ran').not.toBeNull();
  return JSON.parse(
    m![1]!
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>'),
  ) as Measure;
}

async function shoot(width: number, height: number, name: string): Promise<void> {
  const page = join(dir, `shot-${width}.html`);
  writeFileSync(page, width < 500 ? host(width, height, false) : html);
  const file = join(dir, name);
  await screenshot(`file://${page}`, file, window(width, height));
  updateDocsScreenshot(file, `img/${name}`);
}

describe('the status page text', () => {
  it('says nothing on hover only: no title attribute, every reason in the page', () => {
    expect(html).not.toMatch(/<[a-z]+[^>]* title="/);
    expect(html).toContain(LONG_REASON.replaceAll("'", '&#39;'));
  });
  it('counts in words that agree with the number (1 page, 2 pages)', async () => {
    expect(html).toMatch(
      />1 <span class="unit">page<\/span>.*>1 <span class="unit">unit<\/span>.*>1 <span class="unit">video<\/span>/,
    );
    expect(html).not.toMatch(/>1 <span class="unit">(pages|units|videos)</);
    expect(html).toMatch(/>4 <span class="unit">pages</);
  });
});

describe.skipIf(!CHROMIUM)('the status page on a phone and a desktop', () => {
  for (const [width, height] of [
    [390, 844],
    [1100, 900],
  ] as const) {
    it(`at ${width} px`, { timeout: 90_000 }, async () => {
      const m = await measure(width, height);
      expect(m.W).toBe(width);
      // No horizontal scroll.
      expect(m.scrollWidth).toBeLessThanOrEqual(width);

      // The summary, on the first screen: the block, until when and the command that lifts it.
      expect(m.headline.bottom).toBeLessThanOrEqual(m.H);
      expect(m.headline.right).toBeLessThanOrEqual(width);
      expect(m.headline.text).toMatch(
        /^default\/units is blocked until .* \(in 12h 4[12]m\): the upstream says its quota is used up, so someone else spends this key — quota-guard unblock default units$/,
      );
      expect(m.summary.text).toMatch(/5 regions are stale: GB since [^;]*; never fetched: DE, FR, IN, BR/);
      // The blocked card says it too, with who reported the block.
      expect(m.blockinfo).toHaveLength(1);
      expect(m.blockinfo[0]!.text).toMatch(/^Blocked until .* \(in 12h 4[12]m/);
      expect(m.blockinfo[0]!.text).toContain('reported by trending on etl-1');
      expect(m.blockinfo[0]!.text).toContain('quota-guard unblock default units');
      expect(m.blockinfo[0]!.right).toBeLessThanOrEqual(width);

      // Every bucket card says when 100 units can be spent, on its first screen; the blocked one: in
      // 12h 42m, when the block lifts, not when the window frees.
      expect(m.frees.length).toBe(4);
      for (const f of m.frees) {
        expect(f.right, f.text).toBeLessThanOrEqual(width);
        expect(f.fromTop, f.text).toBeLessThanOrEqual(m.H);
      }
      expect(m.frees[0]!.text).toMatch(/^next 100: in 12h 4[12]m · /);
      expect(m.frees.slice(1).map((f) => f.text)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^next 100: now/)]),
      );

      // Each stale region says why on its card, within the first screen of the Regions section,
      // the block said as the block (not its five-line reason again).
      expect(m.stale.map((s) => s.region).sort()).toEqual(['BR', 'DE', 'FR', 'GB', 'IN']);
      for (const s of m.stale) {
        expect(s.why, s.region).not.toBeNull();
        expect(s.why!.right, s.region).toBeLessThanOrEqual(width);
        expect(s.why!.bottom - m.regionsTop, s.region).toBeLessThanOrEqual(m.H);
      }
      const why = Object.fromEntries(m.stale.map((s) => [s.region, s.why!.text]));
      expect(why['GB']).toMatch(/stopped 30m ago: units blocked, lifts in 12h 4[12]m/);
      expect(why['BR']).toMatch(/^failed 20m ago: the upstream rejected the API key/);
      // The line says the block as the block; the whole reason is a tap away, folded.
      for (const s of m.stale)
        expect(s.why!.text.replace(/last run's reason[\s\S]*$/, '')).not.toContain('although the ledger');
      expect(why['GB']).toMatch(/^stale since /);
      const folded = Object.fromEntries(m.details.map((x) => [x.region, x]));
      for (const r of ['GB', 'DE', 'FR', 'IN']) {
        expect(folded[r]?.open, r).toBe(false);
        expect(folded[r]?.text, r).toContain(LONG_REASON);
      }
      expect(folded['BR']?.text).toContain('check QG_API_KEY');

      // The block's "why" and "in 12h 42m" are on screen, not cut off.
      expect(m.blocks).toHaveLength(1);
      const [b] = m.blocks;
      expect(b!.until.text).toMatch(/in 12h 4[12]m/);
      for (const cell of [b!.until, b!.why]) {
        expect(cell.width).toBeGreaterThan(0);
        expect(cell.left).toBeGreaterThanOrEqual(0);
        expect(cell.right).toBeLessThanOrEqual(width);
      }
      // Last runs: a row is a few lines, not a paragraph per region.
      expect(m.runs.length).toBe(8);
      for (const h of m.runs) expect(h).toBeLessThanOrEqual(width < 600 ? 80 : 40);

      await shoot(width, width < 600 ? 3000 : 1400, width < 600 ? 'status-390.png' : 'status-desktop.png');
    });
  }
});
