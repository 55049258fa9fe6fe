/**
 * Proof: no API key appears in any log line, error or status output. Runs the CLI as child
 * processes (real stdout and stderr, pino lines at debug level included) through a full cycle —
 * fetch with upstream faults, backfill, status, search, spend, and a key the upstream rejects — and
 * greps everything they printed.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { secretKey, tmpPath } from '../job-library/helpers.js';
import { type ChildResult, configFile, prefix, runChild } from './helpers.js';

const key = secretKey();
const rejected = secretKey();
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, keys: [`${key}@main`] });
});

afterAll(async () => {
  await sim?.close();
});

describe('secrets', () => {
  it('the API key appears in no output of a full run, errors included', { timeout: 180_000 }, async () => {
    const file = configFile({
      store: { url: inject('redisUrl'), keyPrefix: prefix() },
      cache: { path: tmpPath('cache.db') },
      upstream: { baseUrl: sim.url },
      credentials: [{ id: 'main', apiKeyEnv: 'YOUTUBE_API_KEY' }],
      regions: ['US', 'GB', 'DE'],
      // The backfill refreshes what fetch has just cached, whatever the time of day.
      backfill: { minAge: 0, pace: 'none', holdScheduled: false },
    });
    const env = { YOUTUBE_API_KEY: key, LOG_LEVEL: 'debug', QUOTA_GUARD_CONFIG: file };
    const runs: Array<[string, ChildResult]> = [];
    const run = async (args: string[], extraEnv: Record<string, string> = {}) => {
      const r = await runChild(args, { ...env, ...extraEnv });
      runs.push([args.join(' '), r]);
      return r;
    };

    sim.faults.set({ errorRate: 0.2 });
    const fetch = await run(['fetch']);
    sim.faults.clear();
    expect([0, 69]).toContain(fetch.code);
    expect((await run(['backfill'])).code).toBe(0);
    expect((await run(['status'])).code).toBe(0);
    expect((await run(['status', '--json'])).code).toBe(0);
    expect((await run(['search', 'music', '--json'])).code).toBe(0);
    expect((await run(['spend', 'main', '--cost', '1'])).code).toBe(0);
    const bad = await run(['fetch', '--region', 'US'], { YOUTUBE_API_KEY: rejected });
    expect(bad.code).toBe(78);

    const all = runs.map(([cmd, r]) => `$ ${cmd}\n${r.stdout}\n${r.stderr}`).join('\n');
    // The output is there to grep: page lines, redacted request URLs, upstream failures, status.
    expect(all).toContain('trending page written');
    expect(all).toContain('backfill batch written');
    expect(all).toContain('key=***');
    expect(all).toMatch(/backendError|QG_UPSTREAM_SERVER_ERROR/);
    expect(all).toContain('QG_UPSTREAM_KEY_INVALID');
    expect(all).toContain('credential main');
    expect(all).not.toContain(key);
    expect(all).not.toContain(rejected);
  });
});
