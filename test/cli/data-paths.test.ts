/**
 * Data paths an operator gets wrong: a ledger or demo directory that cannot be created, and a ledger
 * pointed at another database. Each is one line on stderr with its code's exit status, never a
 * stack trace, and the other database is left as it was.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openCache } from '../../src/youtube/cache/index.js';
import { cli, configFile, dir, expectOneLine } from './helpers.js';

beforeEach(() => {
  vi.stubEnv('LOG_LEVEL', 'silent');
  vi.stubEnv('QUOTA_GUARD_CONFIG', '');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

/** A regular file, so that any path below it cannot be created (ENOTDIR), even for root. */
function aFile(): string {
  const p = join(dir, `file-${Math.random().toString(36).slice(2)}`);
  writeFileSync(p, 'not a directory\n');
  return p;
}

describe('data paths', () => {
  it('a ledger directory that cannot be created: one line, exit 69', async () => {
    const cfg = configFile(
      `store: sqlite:${aFile()}/sub/quota.db\ncache: { path: ${dir}/unused-cache.db }\n`,
    );
    for (const cmd of [['status'], ['spend', 'default', '--cost', '1']]) {
      const out = await cli(...cmd, '--config', cfg);
      expect(out.code).toBe(69);
      expectOneLine(out.stderr, /SQLite ledger '.*': opening failed \(ENOTDIR\) \(QG_STORE_UNAVAILABLE\)$/);
    }
  });

  it('a ledger pointed at the cache file: one line, exit 78, the cache byte for byte as it was', async () => {
    const cachePath = join(dir, 'swapped-cache.db');
    openCache(cachePath).close();
    const before = readFileSync(cachePath);
    const cfg = configFile(`store: sqlite:${cachePath}\ncache: { path: ${dir}/other-cache.db }\n`);
    for (const cmd of [['status'], ['spend', 'default', '--cost', '1']]) {
      const out = await cli(...cmd, '--config', cfg);
      expect(out.code).toBe(78);
      expectOneLine(
        out.stderr,
        /SQLite ledger '.*swapped-cache\.db' holds a quota-guard cache, not a quota-guard ledger: refused, the file was not changed \(QG_STORE_FOREIGN\)$/,
      );
    }
    expect(readFileSync(cachePath).equals(before)).toBe(true);
  });

  it('a demo --dir that cannot be created: one line, exit 69', async () => {
    const out = await cli('demo', '--dir', join(aFile(), 'demo'));
    expect(out.code).toBe(69);
    expectOneLine(out.stderr, /demo directory .* cannot be created \(ENOTDIR\) \(QG_STORE_UNAVAILABLE\)$/);
    expect(out.stdout).toBe('');
  });
});
