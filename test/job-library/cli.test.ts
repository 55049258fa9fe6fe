import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { cli } from '../cli/helpers.js';
import { configFile } from '../e2e/helpers.js';
import { secretKey, tmpPath } from './helpers.js';

let sim: Simulator;
let file: string;
const key = secretKey();

/** The simulator's charts change with its clock: a fixed one keeps what search finds the same every day. */
const CHART_DAY = Date.parse('2026-01-15T20:00:00Z');

beforeAll(async () => {
  sim = await startSimulator({ port: 0, now: () => CHART_DAY });
  file = configFile({
    store: `sqlite:${tmpPath('ledger.db')}`,
    cache: { path: tmpPath('cache.db') },
    upstream: { baseUrl: sim.url },
    credentials: [{ id: 'default', apiKeyEnv: 'QG_CLI_TEST_KEY' }],
    regions: ['US', 'GB'],
    // The backfill refreshes what fetch has just cached.
    backfill: { minAge: 0 },
  });
});

afterAll(async () => {
  await sim?.close();
});

beforeEach(() => {
  vi.stubEnv('QG_CLI_TEST_KEY', key);
  vi.stubEnv('LOG_LEVEL', 'silent');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('fetch, backfill and search commands', () => {
  it('fetch runs every configured region, prints one line each and the total; search finds what it cached', async () => {
    const fetched = await cli('fetch', '--config', file);
    expect(fetched.code).toBe(0);
    // 4 pages of at most 50 videos.
    const usVideos = Number(
      fetched.stdout.match(/^trending:US {2}done {2}4 pages, (\d+) videos, 4 units in /m)?.[1],
    );
    expect(usVideos).toBeGreaterThan(0);
    expect(usVideos).toBeLessThanOrEqual(200);
    expect(fetched.stdout).toMatch(/^trending:GB {2}done {2}4 pages/m);
    expect(fetched.stdout).toMatch(/^total: 8 pages, \d+ videos, 8 units of default$/m);

    const json = await cli('search', 'official', '--limit', '2', '--json', '--config', file);
    expect(json.code).toBe(0);
    const result = JSON.parse(json.stdout) as {
      hits: Array<{ title: string; regions: string[] }>;
      hasMore: boolean;
    };
    expect(result.hits).toHaveLength(2);
    expect(result.hits[0]!.title.toLowerCase()).toContain('official');

    const text = await cli('search', 'official', '--region', 'gb', '--limit', '3', '--config', file);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^1\. .*official.* — .*trending in .*GB/im);
    expect(text.stdout).toMatch(/^3 hits \(more with --limit\), ranked by /m);

    const none = await cli('search', 'zzqqxxnothing', '--config', file);
    expect(none.stdout).toMatch(/no results for "zzqqxxnothing" among [\d,]+ cached videos/);
    const bad = await cli('search', '--config', file, '--', '-onlyexcluded');
    expect(bad.code).toBe(64);
    expect(bad.stderr).toMatch(/^quota-guard: .*\(QG_QUERY_INVALID\)\n$/);
  });

  it('backfill --max-units prints its result and ends 0; --json gives the result value', async () => {
    await cli('fetch', '--region', 'US', '--config', file);
    const out = await cli('backfill', '--max-units', '2', '--config', file);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(
      /^backfill {2}done {2}2 calls, 100 videos, 2 units in .*\n {2}spent the --max-units limit \(2\)/,
    );
    const json = await cli('backfill', '--max-units', '1', '--json', '--config', file);
    expect(JSON.parse(json.stdout)).toMatchObject({ job: 'backfill', outcome: 'done', units: 1, pages: 1 });
    expect((await cli('backfill', '--max-units', '0', '--config', file)).code).toBe(64);
  });
});
