/**
 * Region codes: the config takes only ISO 3166-1 alpha-2 codes (ZZ is refused at load, exit 78), and
 * a valid code the upstream has no chart for stops that region's job with a config exit (78), not
 * as a bug (70), while the other regions run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseYouTubeConfig as parseConfig } from '../../src/youtube/config/part.js';
import { ISO_3166_1_ALPHA_2 } from '../../src/youtube/config/regions.js';
import { runTrending } from '../../src/youtube/job-library/index.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { rig } from '../job-library/helpers.js';

describe('ISO 3166-1 region codes', () => {
  it('holds the 249 assigned codes, each one a region Intl knows by name', () => {
    expect(ISO_3166_1_ALPHA_2.size).toBe(249);
    const names = new Intl.DisplayNames('en', { type: 'region', fallback: 'none' });
    for (const code of ISO_3166_1_ALPHA_2) expect(names.of(code), code).toBeDefined();
    // Not assigned (or no longer): user-assigned, reserved and withdrawn codes.
    for (const code of ['ZZ', 'XX', 'EU', 'UK', 'XK', 'SU', 'YU', 'AA'])
      expect(ISO_3166_1_ALPHA_2.has(code)).toBe(false);
  });

  it('a config region that is not one is a config error naming it', () => {
    let err: unknown;
    try {
      parseConfig({ regions: ['US', 'zz', 'GB'] }, { env: {} });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({
      code: 'QG_UNKNOWN_REGION',
      exitCode: 78,
      problems: ["regions[1]: 'zz' is not an ISO 3166-1 region code"],
    });
  });
});

describe('a region the upstream rejects', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, regions: ['US', 'GB'] });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('stops that region with exit 78 and a line naming it; another region still runs', async () => {
    const missing = 'AQ'; // assigned (Antarctica), but this upstream has no chart for it
    const r = await rig({ sim, config: { regions: ['US', missing] } });
    try {
      const bad = await runTrending(r, { region: missing });
      expect(bad).toMatchObject({
        outcome: 'failed',
        exitCode: 78,
        errorCode: 'QG_UPSTREAM_REGION_UNSUPPORTED',
      });
      expect(bad.reason).toContain(missing);
      expect(await runTrending(r, { region: 'US' })).toMatchObject({ outcome: 'done', exitCode: 0 });
    } finally {
      await r.close();
    }
  });
});
