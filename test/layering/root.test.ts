import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as root from '../../src/index.js';
import * as youtube from '../../src/youtube/index.js';
import * as simulator from '../../src/youtube/simulator/index.js';
import { loadedBy, ROOT } from '../harness/imports.js';

// The package root's runtime names: the core. Adding one here is a decision about the public API.
const ROOT_EXPORTS = [
  'ConfigError',
  'CostExceedsLimitError',
  'CrossSlotError',
  'ERROR_CODES',
  'ExitCode',
  'GuardStoppedError',
  'InvalidArgumentError',
  'JournalFile',
  'QuotaGuardError',
  'StoreUnavailableError',
  'TIER_SPECS',
  'TIERS',
  'UpstreamError',
  'WindowMismatchError',
  'createGuard',
  'defineConfig',
  'exitCodeFor',
  'googleClassifier',
  'guardedFetch',
  'guardInterceptor',
  'isQuotaGuardError',
  'loadConfig',
  'openLedger',
  'openQuotaGuard',
  'openRunHistory',
  'parseConfig',
  'quotaStatus',
  'registerConfigPart',
  'registerErrorCodes',
  'withRetries',
];

// `quota-guard/youtube`: the YouTube application's runtime names.
const YOUTUBE_EXPORTS = [
  'CacheSchemaError',
  'QueryInvalidError',
  'YOUTUBE_ERROR_CODES',
  'createYouTubeClient',
  'loadYouTubeConfig',
  'openCache',
  'openJobContext',
  'parseYouTubeConfig',
  'planBudget',
  'runBackfill',
  'runTrending',
  'scheduledNeed',
  'youtubeConfig',
  'youtubeConfigPart',
];

/** What the core may not load: the YouTube application's folders and files. */
const APPLICATION = /^src\/(youtube|metrics|scheduler|drill|cli)\//;

describe('the package root', () => {
  it('exports the chosen names and no others', () => {
    expect(Object.keys(root).sort()).toEqual([...ROOT_EXPORTS].sort());
  });

  it('is the core: it loads no YouTube client, cache, job, plan, scheduler, metrics, drill, CLI or simulator code', () => {
    const { files, packages } = loadedBy('src/index.ts');
    expect([...files].filter((f) => APPLICATION.test(f))).toEqual([]);
    expect(packages.has('prom-client')).toBe(false);
    expect(packages.has('undici'), 'the YouTube client is not loaded').toBe(false);
    expect(packages.has('ioredis'), 'ioredis is loaded only when a redis URL is opened').toBe(false);
    expect(
      files.has('src/sqlite/driver.ts'),
      'better-sqlite3 is loaded only when an sqlite URL is opened',
    ).toBe(false);
  });

  it('reaches no application code, lazy imports included', () => {
    // tsc writes dist/ file for file, so this is what the built root entry can ever load.
    const { files } = loadedBy('src/index.ts', { lazy: true });
    expect(files.has('src/ledger/redis.ts'), 'the walk follows lazy imports').toBe(true);
    // better-sqlite3 is required by src/sqlite/driver.ts, in the major that runs on this Node.
    expect(files.has('src/sqlite/driver.ts'), 'the SQLite stores are reached, lazily').toBe(true);
    expect([...files].filter((f) => APPLICATION.test(f))).toEqual([]);
  });

  it('puts the simulator behind the quota-guard/simulator subpath', () => {
    const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { exports: unknown };
    // One build for both module systems: `default` serves `import` and `require` (Node >= 20.19
    // requires ES modules) from the same files, so there is one copy of each error class.
    expect(pkg.exports).toEqual({
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './youtube': { types: './dist/youtube/index.d.ts', default: './dist/youtube/index.js' },
      './simulator': {
        types: './dist/youtube/simulator/index.d.ts',
        default: './dist/youtube/simulator/index.js',
      },
      './package.json': './package.json',
    });
    expect(typeof simulator.startSimulator).toBe('function');
    expect('startSimulator' in root).toBe(false);
  });
});

describe('quota-guard/youtube', () => {
  it('exports the chosen names and no others', () => {
    expect(Object.keys(youtube).sort()).toEqual([...YOUTUBE_EXPORTS].sort());
  });

  it('shares no runtime name with the root: each name has one import path', () => {
    expect(Object.keys(youtube).filter((n) => n in root)).toEqual([]);
  });

  it('loads no simulator, metrics, scheduler, drill or CLI code', () => {
    const { files } = loadedBy('src/youtube/index.ts', { lazy: true });
    expect(
      [...files].filter((f) => /^src\/(youtube\/simulator|metrics|scheduler|drill|cli)\//.test(f)),
    ).toEqual([]);
  });
});

describe('index files', () => {
  it('only re-export: the code lives in named modules', () => {
    const indexes = readdirSync(`${ROOT}/src`, { recursive: true, encoding: 'utf8' }).filter(
      (f) => f === 'index.ts' || f.endsWith('/index.ts'),
    );
    expect(indexes.length).toBeGreaterThan(5);
    for (const f of indexes) {
      const code = readFileSync(`${ROOT}/src/${f}`, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      // Every statement is `export … from '…'`.
      const statements = code.split(/;\s*/).filter((s) => s.trim() !== '');
      const other = statements.filter((s) => !/^\s*export\s[\s\S]*\sfrom\s+'[^']+'\s*$/.test(s));
      expect(other, f).toEqual([]);
    }
  });
});
