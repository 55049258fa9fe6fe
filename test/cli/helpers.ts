import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { Guard } from '../../src/guard/index.js';
import { fileTempDir } from '../harness/temp.js';

export const dir = fileTempDir('qg-cli-').dir;
let n = 0;

/** Write a config file (YAML text) and return its path. */
export function configFile(yaml: string): string {
  const p = join(dir, `config${n++}.yaml`);
  writeFileSync(p, yaml);
  return p;
}

/** A fresh SQLite ledger path for one test. */
export function sqliteStore(): string {
  return `sqlite:${join(dir, `ledger${n++}.db`)}`;
}

/**
 * A busy credential `main` for status to show: every bucket of youtube-2026 over 12 regions, a pace on
 * units, a budget for manual searches and, unless `hourlyBackfill` is false, an hourly one for the
 * backfill.
 */
export function busyConfig(
  store: string,
  { hourlyBackfill = true }: { hourlyBackfill?: boolean } = {},
): string {
  return [
    `store: "${store}"`,
    'regions: [US, GB, DE, FR, IN, BR, AU, CA, JP, KR, MX, ES]',
    'credentials:',
    '  - id: main',
    '    buckets:',
    '      units: { quota: 10000, pace: { limit: 1500, window: 1h } }',
    'budgets:',
    ...(hourlyBackfill
      ? ['  - { id: backfill-hourly, bucket: units, tiers: [backfill], limit: 2000, window: 1h }']
      : []),
    '  - { id: manual-search, methods: [search.list], tiers: [manual], limit: 40, window: 24h }',
    '',
  ].join('\n');
}

/**
 * `main` spends 300 scheduled units (tagged `tag`), then its units are blocked for 3 h with the
 * longest reason a block gives: the upstream refused what the ledger allowed.
 */
export async function spendThenBlock(guard: Guard, tag: string): Promise<void> {
  await guard.spend({ credential: 'main', method: 'videos.list', tier: 'scheduled', cost: 300, tag });
  await guard.block(
    'main',
    'units',
    'upstream answered quotaExceeded to videos.list at 2026-11-23T18:00:00.000Z although the ledger allowed it',
    Date.now() + 3 * 3_600_000,
  );
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the CLI in-process, capturing what it writes. */
export async function cli(...args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await main(['node', 'quota-guard', ...args]);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/** A user mistake: exactly one `quota-guard: …` line on stderr, matching `pattern`, and no stack trace. */
export function expectOneLine(stderr: string, pattern: RegExp): void {
  const lines = stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^quota-guard: /);
  expect(lines[0]).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at /);
}

/** For a test file that runs the CLI: no log lines, and no config from the user's environment. */
export function quietCli(): void {
  beforeEach(() => {
    vi.stubEnv('LOG_LEVEL', 'silent');
    vi.stubEnv('QUOTA_GUARD_CONFIG', '');
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });
}
