/**
 * `npm run demo`'s entry: the demo command run in-process on a clean environment (no Redis URL,
 * no API key, no config): it ingests 8 regions, backfills, prints status, searches, exits 0.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { demoExitCode } from '../../src/cli/demo.js';
import type { JobResult } from '../../src/youtube/job-library/types.js';
import { cli } from '../cli/helpers.js';
import { tmpPath } from '../job-library/helpers.js';

beforeEach(() => {
  vi.stubEnv('REDIS_URL', '');
  vi.stubEnv('YOUTUBE_API_KEY', '');
  vi.stubEnv('QUOTA_GUARD_CONFIG', '');
  vi.stubEnv('LOG_LEVEL', 'silent');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('demo', () => {
  it('runs the 8 regional jobs, a backfill, status and a search on embedded defaults, and exits 0', {
    timeout: 120_000,
  }, async () => {
    const out = await cli('demo');
    expect(out.code).toBe(0);
    const text = out.stdout;
    for (const region of ['US', 'GB', 'DE', 'FR', 'IN', 'BR', 'AU', 'CA']) {
      // 4 pages of at most 50: how many of the 200 chart places hold distinct videos varies by day.
      const videos = Number(
        text.match(new RegExp(`trending:${region}  done  4 pages, (\\d+) videos, 4 units`))?.[1],
      );
      expect(videos).toBeGreaterThan(0);
      expect(videos).toBeLessThanOrEqual(200);
    }
    const together =
      /together: 32 pages, 1,\d{3} videos \((\d[\d,]*) distinct\), 32 units of default\/units/.exec(text);
    expect(together).not.toBeNull();
    // The backfill refreshes up to 10 batches of 50 of the distinct videos cached; how many are
    // distinct depends on the chart of the day, so the expected figures follow from it.
    const distinct = Number(together![1]!.replace(/,/g, ''));
    const calls = Math.min(10, Math.ceil(distinct / 50));
    const refreshed = Math.min(500, distinct);
    expect(text).toContain(`backfill  done  ${calls} calls, ${refreshed} videos, ${calls} units`);
    expect(text).toContain('quota-guard status · sqlite ledger');
    expect(text).toMatch(/\n {5}units: .*\n( {7}.*\n)* {7}by region: .*US 4/);
    expect(text).toMatch(
      new RegExp(
        `\\n {5}videos\\.batchGetStats: .*\\n( {7}.*\\n)* {7}by method: videos\\.batchGetStats ${calls}`,
      ),
    );
    expect(text).toMatch(/search "[^"]+" in the local cache/);
    expect(text).toMatch(/\n {3}1\. .+ — .+\(/);
    const units = 32 + calls;
    expect(text).toContain(
      `the ledger recorded ${units} units and the simulator charged ${units}: they agree.`,
    );
    expect(text).toContain('demo finished: every job done, nothing overspent.');
    // Where its data went, and why a plain `status` does not show it.
    expect(text).toMatch(
      /its data was in a temporary directory, removed now: `quota-guard status` reads your own ledger/,
    );
  });

  it('keeps its ledger and cache with --dir, and takes the quotas of a --config file', {
    timeout: 120_000,
  }, async () => {
    const dir = tmpPath('demo');
    const out = await cli('demo', '--dir', dir, '--config', 'config/examples/classic.yaml');
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('youtube-classic quotas');
    expect(out.stdout).toMatch(/50 per videos\.list call/);
    expect(out.stdout).toContain('credential legacy (youtube-classic');
    expect(existsSync(join(dir, 'quota.db'))).toBe(true);
    expect(existsSync(join(dir, 'cache.db'))).toBe(true);
    // The way back to it that the demo gives works.
    expect(out.stdout).toContain(
      `look at it again with quota-guard status --config ${join(dir, 'demo.yaml')}`,
    );
    const status = await cli('status', '--config', join(dir, 'demo.yaml'));
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`ledger ${join(dir, 'quota.db')}`);
  });

  it('run twice in one --dir, compares only what each run recorded with what it was charged', {
    timeout: 120_000,
  }, async () => {
    const dir = tmpPath('demo-twice');
    const first = await cli('demo', '--dir', dir);
    expect(first.code).toBe(0);
    const held = Number(
      first.stdout.match(/the ledger recorded (\d+) units and the simulator charged \1: they agree\./)?.[1],
    );
    expect(held).toBeGreaterThan(0);
    expect(first.stdout).not.toContain('earlier runs');
    const second = await cli('demo', '--dir', dir);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(
      /this run: the ledger recorded (\d+) units and the simulator charged \1: they agree\./,
    );
    expect(second.stdout).toContain(`already held ${held} units from earlier runs`);
  });

  it('exits 70 when the ledger recorded other units than the upstream charged, whatever the jobs did', () => {
    const done = { exitCode: 0 } as JobResult;
    const stopped = { exitCode: 75 } as JobResult;
    expect(demoExitCode([done, done], 42, 42)).toBe(0);
    expect(demoExitCode([done, stopped], 42, 42)).toBe(75);
    expect(demoExitCode([done, done], 74, 42)).toBe(70);
    expect(demoExitCode([done, stopped], 41, 42)).toBe(70);
  });
});
