import { describe, expect, it } from 'vitest';
import { loadedBy } from '../harness/imports.js';

describe('config at the bottom', () => {
  it('loading and resolving a config loads no store, cache, upstream client or ledger', () => {
    for (const entry of ['src/config/index.ts', 'src/config/load.ts']) {
      const { files, packages } = loadedBy(entry);
      const above = [...files].filter(
        (f) => !/^src\/(config|profiles)\/|^src\/(errors|calendar-day|time-libs|zod-mini)\.ts$/.test(f),
      );
      expect(above, entry).toEqual([]);
      for (const pkg of ['ioredis', 'better-sqlite3', 'undici', 'pino', 'prom-client', 'yaml']) {
        expect(packages.has(pkg), `${entry} loads ${pkg}`).toBe(false);
      }
    }
  });

  it('the store URL reader loads nothing but the errors', () => {
    expect([...loadedBy('src/config/store-url.ts').files].sort()).toEqual([
      'src/config/store-url.ts',
      'src/errors.ts',
    ]);
  });
});

describe('the cache', () => {
  it('loads no upstream client or response schema (nor zod): it shares only the duration reader', () => {
    const { files, packages } = loadedBy('src/youtube/cache/index.ts');
    expect([...files].filter((f) => f.startsWith('src/youtube/upstream/'))).toEqual([]);
    expect(packages.has('zod')).toBe(false);
    expect(packages.has('undici')).toBe(false);
  });
});
