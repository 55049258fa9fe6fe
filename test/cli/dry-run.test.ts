/**
 * `fetch --dry-run` and `backfill --dry-run`: what the run would spend against the live ledger,
 * with no upstream call (the upstream here is a closed port) and nothing recorded.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openCache } from '../../src/youtube/cache/index.js';
import { cli, configFile, dir, sqliteStore } from './helpers.js';

let n = 0;

beforeEach(() => {
  vi.stubEnv('LOG_LEVEL', 'silent');
  vi.stubEnv('QUOTA_GUARD_CONFIG', '');
  vi.stubEnv('QG_DRY_RUN_KEY', 'a-key-never-sent');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

function setup(extra = ''): { cfg: string; cache: string } {
  const cache = `${dir}/dry-run-cache-${n++}.db`;
  const cfg = configFile(
    `store: ${sqliteStore()}\ncache: { path: ${cache} }\nupstream: { baseUrl: "http://127.0.0.1:1/youtube/v3" }\n` +
      `credentials: [{ id: default, apiKeyEnv: QG_DRY_RUN_KEY }]\nregions: [US, GB]\n${extra}`,
  );
  return { cfg, cache };
}

async function used(cfg: string): Promise<Record<string, number>> {
  const status = JSON.parse((await cli('status', '--json', '--config', cfg)).stdout);
  return Object.fromEntries(
    (status.credentials[0].buckets as Array<{ id: string; used: number }>).map((b) => [b.id, b.used]),
  );
}

function seed(path: string, videos: number): void {
  const cache = openCache(path);
  try {
    cache.upsertVideos(
      Array.from({ length: videos }, (_, i) => ({ id: `dry${String(i).padStart(8, '0')}` })),
    );
  } finally {
    cache.close();
  }
}

describe('fetch --dry-run', () => {
  it('lists each region’s pages and units against the scheduled ceiling; spends and records nothing', async () => {
    const { cfg } = setup();
    expect((await cli('spend', 'default', '--cost', '100', '--config', cfg)).code).toBe(0);
    const before = await used(cfg);
    const out = await cli('fetch', '--dry-run', '--config', cfg);
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(out.stdout).toMatch(
      /^dry run against the sqlite ledger at .*: no upstream call, nothing recorded\n/,
    );
    for (const region of ['US', 'GB'])
      expect(out.stdout).toContain(
        `trending:${region}  4 pages: 4 videos.list calls × 1 = 4 units of default/units (scheduled)`,
      );
    // 10,000 less the 5 % reserve is the scheduled ceiling; 100 are spent.
    expect(out.stdout).toContain(
      'default/units, scheduled tier: at most 8 units; 9,400 may be spent now (the scheduled ceiling): fits',
    );
    expect(await used(cfg)).toEqual(before);

    const json = JSON.parse((await cli('fetch', '--dry-run', '--json', '-r', 'gb', '--config', cfg)).stdout);
    expect(json.jobs).toEqual([
      expect.objectContaining({ job: 'trending:GB', calls: 4, units: 4, bucket: 'units' }),
    ]);
    expect(json.buckets).toEqual([
      expect.objectContaining({ bucket: 'units', tier: 'scheduled', units: 4, spendable: 9_400, fits: true }),
    ]);
  });

  it('exits 75 when the budget would stop the run, and says after how much', async () => {
    const { cfg } = setup();
    expect((await cli('spend', 'default', '--cost', '9495', '--config', cfg)).code).toBe(0);
    const out = await cli('fetch', '--dry-run', '--config', cfg);
    expect(out.code).toBe(75);
    expect(out.stdout).toContain(
      'default/units, scheduled tier: at most 8 units; 5 may be spent now (the scheduled ceiling): the run would stop after about 5 units',
    );
  });
});

describe('backfill --dry-run', () => {
  it('counts the videos due in batches of 50, caps them at --max-units and names the budget that limits them', async () => {
    const { cfg, cache } = setup(
      'budgets: [{ id: backfill-hourly, bucket: videos.batchGetStats, tiers: [backfill], limit: 2, window: 1h }]\n' +
        // Seeded videos count as refreshed when written: due at once only without a minimum age.
        'backfill: { minAge: 0 }\n',
    );
    seed(cache, 120);
    // A dry run reads an existing ledger (and creates none): spend on another bucket first.
    expect(
      (await cli('spend', 'default', '--cost', '1', '--bucket', 'search.list', '--config', cfg)).code,
    ).toBe(0);
    const before = await used(cfg);
    const out = await cli('backfill', '--dry-run', '--config', cfg);
    expect(out.code).toBe(75);
    expect(out.stdout).toContain(
      'backfill  120 videos due, 3 batches of up to 50: 3 videos.batchGetStats calls × 1 = 3 units of default/videos.batchGetStats (backfill)',
    );
    expect(out.stdout).toContain(
      'default/videos.batchGetStats, backfill tier: at most 3 units; 2 may be spent now (budget backfill-hourly): the run would stop after about 2 units',
    );
    const capped = await cli('backfill', '--dry-run', '--max-units', '2', '--config', cfg);
    expect(capped.code).toBe(0);
    expect(capped.stdout).toContain('120 videos due, 2 batches of up to 50 (--max-units 2)');
    expect(capped.stdout).toMatch(/at most 2 units; 2 may be spent now \(budget backfill-hourly\): fits/);
    expect(await used(cfg)).toEqual(before);
  });
});

describe('a dry run before anything has run', () => {
  it('creates no ledger: exit 66 naming where it looked', async () => {
    const { cfg } = setup();
    const out = await cli('fetch', '--dry-run', '--config', cfg);
    expect(out.code).toBe(66);
    expect(out.stderr).toMatch(/\(QG_STORE_NOT_FOUND\)/);
    // Had the first dry run created the ledger, status would find it.
    expect((await cli('status', '--config', cfg)).code).toBe(66);
  });
});
