import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderHistory } from '../../src/cli/render/history.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { configFile } from '../e2e/helpers.js';
import { secretKey, tmpPath } from '../job-library/helpers.js';
import { cli, expectOneLine } from './helpers.js';

let sim: Simulator;
let file: string;
const key = secretKey();

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  file = configFile({
    store: `sqlite:${tmpPath('ledger.db')}`,
    cache: { path: tmpPath('cache.db') },
    upstream: { baseUrl: sim.url },
    credentials: [{ id: 'default', apiKeyEnv: 'QG_HISTORY_TEST_KEY' }],
    regions: ['US', 'GB'],
    // The backfill refreshes what fetch has just cached.
    backfill: { minAge: 0 },
  });
});

afterAll(async () => {
  await sim?.close();
});

beforeEach(() => {
  vi.stubEnv('QG_HISTORY_TEST_KEY', key);
  vi.stubEnv('LOG_LEVEL', 'silent');
  // The default width, whatever the environment running the tests says.
  vi.stubEnv('COLUMNS', '');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('history', () => {
  it('lists the runs fetch and backfill recorded in the ledger’s store, newest first, within 100 columns', async () => {
    expect((await cli('history', '--config', file)).stdout).toMatch(/^no runs recorded yet/);
    const f = await cli('fetch', '--config', file);
    expect(f.stderr).toBe('');
    expect(f.code).toBe(0);
    expect((await cli('backfill', '--max-units', '2', '--config', file)).code).toBe(0);

    const json = await cli('history', '--json', '--config', file);
    expect(json.code).toBe(0);
    const runs = (JSON.parse(json.stdout) as { runs: Array<Record<string, unknown>> }).runs;
    expect(runs.map((r) => r['job'])).toEqual(['backfill', expect.any(String), expect.any(String)]);
    expect(runs.slice(1).map((r) => r['job'])).toEqual(
      expect.arrayContaining(['trending:US', 'trending:GB']),
    );
    expect(runs[0]).toMatchObject({ outcome: 'done', units: 2, pages: 2, region: null });
    expect(runs[0]!['reason']).toMatch(/--max-units limit \(2\)/);
    // What the ledger held after each run: the backfill spends its own bucket under youtube-2026.
    expect(runs[0]!['used']).toMatchObject({ units: 8, 'videos.batchGetStats': 2 });
    const trending = runs.find((r) => r['job'] === 'trending:US')!;
    expect(trending).toMatchObject({ region: 'US', outcome: 'done', pages: 4, units: 4 });
    expect(Number(trending['videos'])).toBeGreaterThan(0);
    expect(new Date(String(trending['started'])).getTime()).toBe(trending['startedAt']);

    const gb = await cli('history', '--region', 'gb', '--json', '--config', file);
    expect((JSON.parse(gb.stdout) as { runs: unknown[] }).runs).toEqual([
      expect.objectContaining({ job: 'trending:GB' }),
    ]);

    const text = await cli('history', '--since', '1d', '--config', file);
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^started\s+job\s+outcome\s+took\s+pages\s+units\s+videos\s+reason$/);
    expect(lines[1]).toMatch(/^\d\d-\d\d \d\d:\d\d:\d\d {2}backfill\s+done\s+\S+\s+2\s+2\s+\d+$/);
    // A reason too long for the room beside the row is on the lines under it, whole.
    expect(lines[2]).toMatch(/^ {4}spent the --max-units limit \(2\)/);
    const rest = lines.slice(2).filter((l) => !l.startsWith('    '));
    expect(rest[0]).toMatch(/^\d\d-\d\d \d\d:\d\d:\d\d {2}trending:(US|GB)\s+done\s+\S+\s+4\s+4\s+\d+$/);
    expect(rest).toHaveLength(3);
    expect(rest[2]).toMatch(/^\(3 runs, newest first; times in /);
    for (const l of lines) expect([...l].length).toBeLessThanOrEqual(100);

    expect(
      JSON.parse((await cli('history', '--limit', '1', '--json', '--config', file)).stdout).runs,
    ).toHaveLength(1);
  });

  it('refuses a bad --since, --limit or region in one line', async () => {
    const since = await cli('history', '--since', 'yesterday', '--config', file);
    expect(since.code).toBe(64);
    expectOneLine(since.stderr, /--since: 'yesterday' is not a duration/);
    const limit = await cli('history', '--limit', '0', '--config', file);
    expect(limit.code).toBe(64);
    expectOneLine(limit.stderr, /--limit/);
    const region = await cli('history', '--region', 'ZZ', '--config', file);
    expect(region.code).not.toBe(0);
    expectOneLine(region.stderr, /ZZ/);
  });
});

describe('history in print', () => {
  it('says a reason the run above gave once: "same as above" under it', () => {
    const reason = `stopped: default/units is blocked until 2026-11-24T08:00:00.000Z (${'upstream answered quotaExceeded to videos.list although the ledger allowed it; '.repeat(2)}); resume in 12h 42m`;
    const runs = Array.from({ length: 15 }, (_, i) => ({
      credential: 'default',
      job: `trending:R${i}`,
      labels: {},
      startedAt: 1_795_000_000_000 - i * 60_000,
      finishedAt: 1_795_000_000_000 - i * 60_000 + 1_000,
      outcome: 'stopped' as const,
      pages: 0,
      units: 0,
      items: 0,
      reason,
      used: {},
    }));
    const text = renderHistory(runs, false, 80);
    expect(text.split(reason.slice(0, 40)).length - 1).toBe(1);
    expect(text.match(/same as above/g)).toHaveLength(14);
    // 15 rows, the reason once under the first, a header and a footer: not a block under every run.
    expect(text.trimEnd().split('\n').length).toBeLessThan(15 + 8);
    for (const l of text.trimEnd().split('\n')) expect([...l].length).toBeLessThanOrEqual(80);
    // A job of one's own counts items, not videos.
    expect(renderHistory(runs.slice(0, 1), false, 100, 'items')).toMatch(/^started .* items/);
  });
});
