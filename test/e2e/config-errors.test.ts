/**
 * Proof: a bad config file, an unknown region, a missing API key variable and an unknown
 * credential each give one clear line (no stack trace) and exit code 78, before anything is opened.
 */
import { existsSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cli, expectOneLine } from '../cli/helpers.js';
import { tmpPath } from '../job-library/helpers.js';
import { configFile } from './helpers.js';

beforeEach(() => {
  vi.stubEnv('LOG_LEVEL', 'silent');
  vi.stubEnv('YOUTUBE_API_KEY', 'unused-key');
  vi.stubEnv('QUOTA_GUARD_CONFIG', '');
  vi.stubEnv('REDIS_URL', '');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

/** A config whose ledger and cache live in files we can check were never created. */
function files(extra: Record<string, unknown> = {}) {
  const ledger = tmpPath('ledger.db');
  const cache = tmpPath('cache.db');
  const file = configFile({ store: `sqlite:${ledger}`, cache: { path: cache }, ...extra });
  return { file, ledger, cache };
}

describe('configuration mistakes', () => {
  it('a bad config file: one line per problem with its path, exit 78', async () => {
    const { file, ledger } = files({ regions: ['USA'], maxSleep: 'soon' });
    for (const cmd of [['fetch'], ['backfill'], ['search', 'x'], ['status']]) {
      const out = await cli(...cmd, '--config', file);
      expect(out.code).toBe(78);
      const lines = out.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines.find((l) => l.includes('regions[0]'))).toMatch(/two-letter region code/);
      expect(lines.find((l) => l.includes('maxSleep'))).toMatch(/duration/);
      expect(out.stderr).not.toMatch(/\n\s+at /);
    }
    const reserve = files({
      credentials: [{ id: 'default', buckets: { units: { quota: 100, reserve: 200 } } }],
    });
    const out = await cli('fetch', '--config', reserve.file);
    expect(out.code).toBe(78);
    expectOneLine(out.stderr, /credentials\[0\]\.buckets\.units\.reserve: .*less than/);
    expect(existsSync(ledger) || existsSync(reserve.ledger)).toBe(false);
  });

  it('a config file that is not there, or not YAML: one line, exit 78', async () => {
    const missing = await cli('fetch', '--config', tmpPath('nope.yaml'));
    expect(missing.code).toBe(78);
    expectOneLine(missing.stderr, /config file not found/);
  });

  it('an unknown region: one line naming it and the configured ones, exit 78', async () => {
    const { file, ledger, cache } = files();
    const out = await cli('fetch', '--region', 'US', '--region', 'XX', '--config', file);
    expect(out.code).toBe(78);
    expectOneLine(out.stderr, /unknown region 'XX' \(configured: US, GB/);
    const search = await cli('search', 'music', '--region', 'ZZ', '--config', file);
    expect(search.code).toBe(78);
    expectOneLine(search.stderr, /unknown region 'ZZ'/);
    expect(existsSync(ledger) || existsSync(cache)).toBe(false);
  });

  it('a missing API key variable: one line naming the variable, exit 78, nothing opened', async () => {
    const { file, ledger, cache } = files({
      credentials: [{ id: 'default', apiKeyEnv: 'QG_NOT_SET_ANYWHERE' }],
    });
    for (const cmd of ['fetch', 'backfill']) {
      const out = await cli(cmd, '--config', file);
      expect(out.code).toBe(78);
      expectOneLine(out.stderr, /QG_NOT_SET_ANYWHERE/);
    }
    expect(existsSync(ledger) || existsSync(cache)).toBe(false);
    // spend and status work without the key.
    expect((await cli('spend', 'default', '--cost', '1', '--config', file)).code).toBe(0);
    expect((await cli('status', '--config', file)).code).toBe(0);
  });

  it('an unknown credential: one line, exit 78', async () => {
    const { file } = files();
    for (const cmd of [
      ['fetch', '--credential', 'nope'],
      ['backfill', '--credential', 'nope'],
      ['spend', 'nope', '--cost', '1'],
      ['status', '--credential', 'nope'],
    ]) {
      const out = await cli(...cmd, '--config', file);
      expect(out.code).toBe(78);
      expectOneLine(out.stderr, /nope/);
    }
  });

  it('every job command has --help and --config', async () => {
    for (const cmd of ['fetch', 'backfill', 'search', 'demo']) {
      const out = await cli(cmd, '--help');
      expect(out.code).toBe(0);
      expect(out.stdout).toContain('--config <file>');
    }
  });
});
