/**
 * A quota model defined in the config, used end to end: `status` and `plan` read it, the simulator
 * charges by it (so the guard's ledger and the upstream agree on its costs), and the drill and the
 * simulator take it by id from a config file.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { drillPace } from '../../src/drill/drill.js';
import { loadYouTubeConfig as loadConfig } from '../../src/youtube/config/part.js';
import { startSimulator } from '../../src/youtube/simulator/index.js';
import { cli, configFile, dir, expectOneLine, sqliteStore } from './helpers.js';

const PROFILE = `profiles:
  youtube-2027:
    description: a larger shared bucket, costlier pages, and a priced search bucket
    timeZone: Europe/Berlin
    defaultBucket: units
    buckets:
      units: { quota: 20000 }
      search: { quota: 500 }
    methods:
      videos.list: { bucket: units, cost: 3 }
      search.list: { bucket: search, cost: 5 }
`;
let n = 0;

beforeEach(() => {
  vi.stubEnv('LOG_LEVEL', 'silent');
  vi.stubEnv('QUOTA_GUARD_CONFIG', '');
  vi.stubEnv('QG_PROFILE_KEY', 'k-profile');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

function config(extra = ''): string {
  return configFile(
    `${PROFILE}store: ${sqliteStore()}\ncache: { path: ${dir}/profile-cache-${n++}.db }\n` +
      `credentials: [{ id: default, profile: youtube-2027, apiKeyEnv: QG_PROFILE_KEY }]\nregions: [US]\n${extra}`,
  );
}

describe('a profile of the config’s own', () => {
  it('status shows its buckets, quotas and time zone', async () => {
    const file = config();
    expect((await cli('spend', 'default', '--cost', '5', '--bucket', 'search', '--config', file)).code).toBe(
      0,
    );
    const out = await cli('status', '--json', '--config', file);
    expect(out.code).toBe(0);
    const c = JSON.parse(out.stdout).credentials[0];
    expect(c).toMatchObject({ profile: 'youtube-2027', timeZone: 'Europe/Berlin' });
    expect(
      c.buckets.map((b: { id: string; quota: number; used: number }) => [b.id, b.quota, b.used]),
    ).toEqual([
      ['units', 20_000, 0],
      ['search', 500, 5],
    ]);
  });

  it('plan counts the jobs at its costs', async () => {
    const out = await cli('plan', '--json', '--config', config());
    const report = JSON.parse(out.stdout);
    const units = report.buckets.find((b: { bucket: string }) => b.bucket === 'units');
    expect(units.quota).toBe(20_000);
    expect(units.lines[0]).toMatchObject({ source: 'trending', method: 'videos.list', cost: 3, units: 288 });
    // 1 region × 4 pages × 24 hourly runs × 3 units.
    expect(units.scheduledUnits).toBe(1 * 4 * 24 * 3);
  });

  it('the simulator charges by it, and the ledger records what it charged', async () => {
    const file = config();
    const profile = loadConfig({ file, env: {} }).profiles['youtube-2027']!;
    const sim = await startSimulator({ port: 0, profile, keys: ['k-profile@p'] });
    try {
      const cfg = configFile(`${readFileSync(file, 'utf8')}upstream: { baseUrl: "${sim.url}" }\n`);
      const fetched = await cli('fetch', '--json', '--config', cfg);
      expect(fetched.code).toBe(0);
      const [run] = JSON.parse(fetched.stdout);
      expect(run).toMatchObject({ outcome: 'done', pages: 4, units: 12 });
      expect(sim.charged({ project: 'p', bucket: 'units' })).toBe(12);
      const status = JSON.parse((await cli('status', '--json', '--config', cfg)).stdout);
      expect(status.credentials[0].buckets[0]).toMatchObject({ id: 'units', used: 12 });
    } finally {
      await sim.close();
    }
  });

  it('the drill takes it from --config; an unknown one is one line naming what exists', async () => {
    const file = config();
    const unknown = await cli('drill', '--profile', 'youtube-2030', '--config', file);
    expect(unknown.code).toBe(78);
    expectOneLine(
      unknown.stderr,
      /--profile: unknown profile 'youtube-2030' \(built in: youtube-2026, youtube-classic; .* defines youtube-2027\)/,
    );
    const noConfig = await cli('simulate', '--profile', 'youtube-2027', '--port', '0');
    expect(noConfig.code).toBe(78);
    expectOneLine(noConfig.stderr, /define it under profiles in a config file and pass --config FILE/);
    // At 3 units a page, the drill's backfill (videos.list in units) makes a third as many calls.
    const profile = loadConfig({ file, env: {} }).profiles['youtube-2027']!;
    const mine = drillPace({ daySeconds: 24, profile, quota: 3_000 });
    expect(mine.feasible).toBe(true);
    expect(mine.callsPerSecond).toBeLessThan(drillPace({ daySeconds: 24, quota: 3_000 }).callsPerSecond / 2);
  });
});
