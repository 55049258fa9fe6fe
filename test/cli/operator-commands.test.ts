/**
 * The small commands an operator reaches for: `--version`, `unblock`, and `search` with a word to
 * exclude.
 */

import { readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createGuard } from '../../src/guard/guard.js';
import { openLedger } from '../../src/ledger/index.js';
import { openCache } from '../../src/youtube/cache/index.js';
import { loadYouTubeConfig as loadConfig } from '../../src/youtube/config/part.js';
import { runChild } from '../e2e/helpers.js';
import { cli, configFile, dir, expectOneLine, sqliteStore } from './helpers.js';

beforeEach(() => {
  vi.stubEnv('LOG_LEVEL', 'silent');
  vi.stubEnv('QUOTA_GUARD_CONFIG', '');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

const silent = { info: () => undefined, warn: () => undefined };

/** Block a bucket the way the guard does after an upstream quotaExceeded. */
async function block(file: string, bucket: string, reason: string, forMs: number): Promise<number> {
  const config = loadConfig({ file, env: {} });
  const ledger = await openLedger(config.store.url);
  try {
    const until = Date.now() + forMs;
    await createGuard({ config, ledger, logger: silent }).block('default', bucket, reason, until);
    return until;
  } finally {
    await ledger.close();
  }
}

describe('--version', () => {
  it('prints the package version and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    for (const flag of ['--version', '-V']) {
      const out = await cli(flag);
      expect(out).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });
});

describe('unblock', () => {
  it('lifts a block on the shared ledger: spends are denied before and allowed after', async () => {
    const cfg = configFile(`store: ${sqliteStore()}\n`);
    const until = await block(cfg, 'units', 'upstream quotaExceeded (test)', 3_600_000);
    const denied = await cli('spend', 'default', '--cost', '1', '--tier', 'scheduled', '--config', cfg);
    expect(denied.code).toBe(75);

    const out = await cli('unblock', 'default', 'units', '--config', cfg);
    expect(out.code).toBe(0);
    const iso = new Date(until).toISOString().replace(/[.]/g, '\\.');
    expect(out.stdout).toMatch(
      new RegExp(
        `^unblocked default/units: it was blocked until ${iso} \\(\\d+[hms].* from now\\): upstream quotaExceeded \\(test\\); every tier may spend it again\n$`,
      ),
    );
    const allowed = await cli('spend', 'default', '--cost', '1', '--tier', 'scheduled', '--config', cfg);
    expect(allowed.code).toBe(0);

    const again = await cli('unblock', 'default', 'units', '--json', '--config', cfg);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      credential: 'default',
      bucket: 'units',
      wasBlocked: false,
      blockedUntil: null,
      reason: null,
    });
  });

  it('lifts only the bucket named: the credential’s other blocks stay', async () => {
    const cfg = configFile(`store: ${sqliteStore()}\n`);
    await block(cfg, 'units', 'units out', 3_600_000);
    await block(cfg, 'search.list', 'search out', 3_600_000);
    expect((await cli('unblock', 'default', 'search.list', '--config', cfg)).code).toBe(0);
    const status = JSON.parse((await cli('status', '--json', '--config', cfg)).stdout);
    const buckets = status.credentials[0].buckets as Array<{ id: string; blockedReason: string | null }>;
    expect(buckets.find((b) => b.id === 'units')?.blockedReason).toBe('units out');
    expect(buckets.find((b) => b.id === 'search.list')?.blockedReason).toBeNull();
  });

  it('is logged, with the block it lifted', { timeout: 60_000 }, async () => {
    const cfg = configFile(`store: ${sqliteStore()}\n`);
    const until = await block(cfg, 'units', 'logged block', 3_600_000);
    const child = await runChild(['unblock', 'default', 'units', '--config', cfg], { LOG_LEVEL: 'info' });
    expect(child.code).toBe(0);
    const lines = child.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'bucket unblocked',
        credential: 'default',
        bucket: 'units',
        by: 'cli',
        user: userInfo().username,
        host: hostname(),
        lifted: true,
        wasBlockedUntil: new Date(until).toISOString(),
        reason: 'logged block',
        level: 40,
      }),
    );
    // Once more: nothing to lift, said as such and not as a warning.
    const noop = await runChild(['unblock', 'default', 'units', '--config', cfg], { LOG_LEVEL: 'info' });
    expect(noop.code).toBe(0);
    const again = noop.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(again).toEqual([
      expect.objectContaining({
        msg: 'nothing to unblock: the bucket was not blocked',
        lifted: false,
        user: userInfo().username,
        host: hostname(),
        level: 30,
      }),
    ]);
  });

  it('an unknown bucket or credential: one line, exit 78', async () => {
    const cfg = configFile(`store: ${sqliteStore()}\n`);
    const bucket = await cli('unblock', 'default', 'nope', '--config', cfg);
    expect(bucket.code).toBe(78);
    expectOneLine(bucket.stderr, /unknown bucket 'nope'.*\(QG_UNKNOWN_BUCKET\)$/);
    const credential = await cli('unblock', 'other', 'units', '--config', cfg);
    expect(credential.code).toBe(78);
    expectOneLine(credential.stderr, /\(QG_UNKNOWN_CREDENTIAL\)$/);
  });
});

describe('search with a word to exclude', () => {
  it('`search music -live` says to put the query after --, and that works', async () => {
    const cfg = configFile(`cache: { path: ${dir}/exclude-cache.db }\n`);
    openCache(`${dir}/exclude-cache.db`).close();
    const wrong = await cli('search', 'music', '-live', '--config', cfg);
    expect(wrong.code).toBe(64);
    expectOneLine(
      wrong.stderr,
      /unknown option '-live': to exclude "live", put the query after -- \(quota-guard search -- <words> -live\)/,
    );
    for (const args of [
      ['--', 'music', '-live'],
      ['--', '-live', 'music'],
    ]) {
      const right = await cli('search', '--config', cfg, ...args);
      expect(right).toMatchObject({ code: 0, stderr: '' });
      expect(right.stdout).toContain(`no results for "${args.slice(1).join(' ')}"`);
    }
    const help = await cli('search', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('quota-guard search -- music -live');
  });
});
