/**
 * The packed tarball, installed: one pack and one install for the whole file (see package.ts).
 *
 * - The library's entry points from a consumer project: `require` and `import` of every subpath,
 *   one copy of the error classes (`instanceof` holds across the two), the native addon opened
 *   through the library; and the types for a `.cts`, a `.mts` and a bundler-resolution project.
 * - The CLI on PATH: `quota-guard --version`, commands on a fresh data directory, and the demo (the
 *   simulator, the SQLite ledger and cache, the jobs) as one end-to-end run.
 *
 * The consumer project sits beside the installed package (`<prefix>/lib/consumer`), so Node and
 * TypeScript find `quota-guard` by walking up to `<prefix>/lib/node_modules`, as they do from any
 * project's own node_modules. .ci/node-versions runs this file on each supported Node.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../harness/imports.js';
import { type InstalledPackage, packAndInstall } from './package.js';

const hasSystemdAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;
let pkg: InstalledPackage;
let consumer: string;
const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

beforeAll(() => {
  pkg = packAndInstall();
  consumer = join(pkg.prefix, 'lib/consumer');
  mkdirSync(join(consumer, 'node_modules/@types'), { recursive: true });
  // A TypeScript user has Node's types; the package must bring every other type it names.
  symlinkSync(join(ROOT, 'node_modules/@types/node'), join(consumer, 'node_modules/@types/node'));
  writeFileSync(join(consumer, 'package.json'), '{ "name": "consumer", "private": true }\n');
}, 900_000);

afterAll(() => {
  if (pkg) rmSync(pkg.work, { recursive: true, force: true });
});

function node(args: string[], cwd = consumer) {
  return spawnSync(process.execPath, args, { cwd, env: pkg.env, encoding: 'utf8', timeout: 120_000 });
}

describe('the library from a consumer project', () => {
  it('require() loads every entry, from the ES module files, with one copy of each error class', () => {
    writeFileSync(
      join(consumer, 'load.cjs'),
      `const root = require('quota-guard');
const youtube = require('quota-guard/youtube');
const simulator = require('quota-guard/simulator');
const { version } = require('quota-guard/package.json');
const paths = ['quota-guard', 'quota-guard/youtube', 'quota-guard/simulator'].map((p) => require.resolve(p));
let err;
try { root.parseConfig({ bogus: 1 }); } catch (e) { err = e; }
import('quota-guard').then((esm) => {
  console.log(JSON.stringify({
    version, paths,
    root: typeof root.openLedger, youtube: typeof youtube.createYouTubeClient,
    simulator: typeof simulator.startSimulator,
    sameModule: esm.QuotaGuardError === root.QuotaGuardError,
    code: err && err.code,
    requiredErrorIsImportedClass: err instanceof esm.QuotaGuardError && err instanceof esm.ConfigError,
    importedErrorIsRequiredClass: new esm.ConfigError(['x']) instanceof root.QuotaGuardError,
  }));
});
`,
    );
    const r = node(['load.cjs']);
    expect(r.stderr).not.toMatch(/Error \[|ERR_/);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({
      version,
      root: 'function',
      youtube: 'function',
      simulator: 'function',
      sameModule: true,
      code: 'QG_CONFIG_INVALID',
      requiredErrorIsImportedClass: true,
      importedErrorIsRequiredClass: true,
    });
    // The same ES module files serve require(): there is no second (CommonJS) build.
    expect(out['paths']).toEqual(
      ['dist/index.js', 'dist/youtube/index.js', 'dist/youtube/simulator/index.js'].map((f) =>
        join(pkg.dir, f),
      ),
    );
  });

  it('import loads every entry and spends on an SQLite ledger through the native addon', () => {
    writeFileSync(
      join(consumer, 'spend.mjs'),
      `import { openLedger, QuotaGuardError } from 'quota-guard';
import { createYouTubeClient } from 'quota-guard/youtube';
import { startSimulator } from 'quota-guard/simulator';
import { createRequire } from 'node:module';
const required = createRequire(import.meta.url)('quota-guard');
const ledger = await openLedger('sqlite:' + process.argv[2]);
const budgets = [{ key: 'qg:{default}:units', limit: 10, windowMs: 60_000 }];
const first = await ledger.spend({ budgets, cost: 4 });
const second = await ledger.spend({ budgets, cost: 7 });
await ledger.close();
console.log(JSON.stringify({
  kind: ledger.kind, first: first.allowed, second: second.allowed,
  sameClass: required.QuotaGuardError === QuotaGuardError,
  youtube: typeof createYouTubeClient, simulator: typeof startSimulator,
}));
`,
    );
    const r = node(['spend.mjs', join(pkg.work, 'ledger.db')]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      kind: 'sqlite',
      first: true,
      second: false,
      sameClass: true,
      youtube: 'function',
      simulator: 'function',
    });
  });

  const USE = `
QuotaGuardError.prototype.code satisfies string;
const config = parseConfig({});
config.credentials[0]?.id satisfies string | undefined;
// @ts-expect-error a ledger is opened from a URL string: the types are real, not \`any\`
void openLedger(42);
void createYouTubeClient;
void startSimulator;
`;
  const tsconfig = (compilerOptions: Record<string, unknown>, files: string[]) =>
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
        ...compilerOptions,
      },
      files,
    });

  function tsc(project: string) {
    return spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project], {
      cwd: consumer,
      env: pkg.env,
      encoding: 'utf8',
      timeout: 180_000,
    });
  }

  // The types do not depend on the Node that runs them: checked once, not on each version.
  it.skipIf(process.env['QG_NODE_VERSIONS'] !== undefined)(
    'has types for a .cts (require of the ES module, no TS1479), a .mts and bundler resolution',
    () => {
      const imports = (
        ext: string,
      ) => `import { openLedger, parseConfig, QuotaGuardError } from 'quota-guard';
import { createYouTubeClient } from 'quota-guard/youtube';
import { startSimulator } from 'quota-guard/simulator';${ext}`;
      writeFileSync(
        join(consumer, 'check.cts'),
        `${imports("\nimport qg = require('quota-guard');\nvoid qg.openLedger;")}${USE}`,
      );
      writeFileSync(join(consumer, 'check.mts'), `${imports('')}${USE}`);
      mkdirSync(join(consumer, 'bundler'), { recursive: true });
      writeFileSync(join(consumer, 'bundler/check.ts'), `${imports('')}${USE}`);
      // `node20` and `nodenext` (TypeScript >= 5.8) model a Node that can require() an ES module;
      // `node16` does not, and gives TS1479 for any ES-module-only package.
      // One program for both files (one tsc run: each takes seconds).
      writeFileSync(
        join(consumer, 'tsconfig.node.json'),
        tsconfig({ module: 'node20' }, ['check.cts', 'check.mts']),
      );
      writeFileSync(
        join(consumer, 'tsconfig.bundler.json'),
        tsconfig({ target: 'es2022', module: 'preserve', moduleResolution: 'bundler' }, ['bundler/check.ts']),
      );
      for (const project of ['tsconfig.node.json', 'tsconfig.bundler.json']) {
        const r = tsc(project);
        expect(`${r.stdout}${r.stderr}`, project).toBe('');
        expect(r.status, project).toBe(0);
      }
    },
    600_000,
  );
});

describe('the CLI installed from the tarball', () => {
  function cli(args: string[], data: string) {
    return spawnSync('quota-guard', args, {
      cwd: pkg.work,
      env: { ...pkg.env, QUOTA_GUARD_DATA: data, HOME: data, LOG_LEVEL: 'error', QUOTA_GUARD_CONFIG: '' },
      encoding: 'utf8',
      timeout: 120_000,
    });
  }

  it('ships the build, the Lua scripts, the default config, the clients, the API document and the licence; no sources, no tests', () => {
    const list = spawnSync('tar', ['-tzf', pkg.tarball], { encoding: 'utf8' }).stdout.split('\n');
    for (const f of [
      'LICENSE',
      'README.md',
      'CHANGELOG.md',
      'dist/cli/bin.js',
      'dist/index.js',
      'config/default.yaml',
      'clients/python/quota_guard.py',
      'clients/python/pyproject.toml',
      'clients/php/QuotaGuard.php',
      'clients/php/composer.json',
      'docs/openapi.yaml',
    ]) {
      expect(list, f).toContain(`package/${f}`);
    }
    expect(list.some((f) => f.startsWith('package/lua/') && f.endsWith('.lua'))).toBe(true);
    expect(list.filter((f) => /^package\/(src|test|bench|jobs|node_modules)\//.test(f))).toEqual([]);
  });

  it('installs the better-sqlite3 this Node can run: 12 on Node 20, 13 on 22 and later (by its engines)', () => {
    const { version: driver } = JSON.parse(
      readFileSync(join(pkg.dir, 'node_modules/better-sqlite3/package.json'), 'utf8'),
    ) as { version: string };
    const node = Number(process.versions.node.split('.')[0]);
    expect(Number(driver.split('.')[0]), `better-sqlite3 ${driver} on Node ${process.version}`).toBe(
      node >= 22 ? 13 : 12,
    );
  });

  it('is on PATH and prints the package version', () => {
    const r = cli(['--version'], pkg.work);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(version);
  });

  it('plans, spends and reports on a fresh data directory', () => {
    const data = mkdtempSync(join(pkg.work, 'data-'));
    const plan = cli(['plan'], data);
    expect(plan.status, `${plan.signal} ${plan.stderr}`).toBe(0);
    expect(plan.stdout).toMatch(/built-in defaults/);
    const spend = cli(['spend', 'default', '--cost', '3', '--json'], data);
    expect(spend.stderr).toBe('');
    expect(spend.status).toBe(0);
    expect(JSON.parse(spend.stdout)).toMatchObject({ allowed: true, cost: 3 });
    const status = cli(['status', '--json'], data);
    expect(status.status, `${status.signal} ${status.stderr}`).toBe(0);
    const report = JSON.parse(status.stdout) as {
      store: string;
      ledger: string;
      credentials: { buckets: { id: string; used: number }[] }[];
    };
    expect(report).toMatchObject({ store: 'sqlite', ledger: join(data, 'quota.db') });
    expect(report.credentials[0]?.buckets.find((b) => b.id === 'units')?.used).toBe(3);
  });

  it.skipIf(!hasSystemdAnalyze)('runs under the systemd units of deploy/systemd/', () => {
    // `systemd-analyze verify` checks a unit's syntax and that its ExecStart is executable: here the
    // bin this install put on PATH, where a server's systemd finds it in /usr/local/bin or /usr/bin.
    const units = join(pkg.work, 'units');
    mkdirSync(units, { recursive: true });
    for (const unit of ['quota-guard.service', 'quota-guard-serve.service']) {
      const text = readFileSync(join(ROOT, 'deploy/systemd', unit), 'utf8');
      expect(text, unit).toMatch(/^ExecStart=quota-guard (run|serve) /m);
      writeFileSync(
        join(units, unit),
        text.replace(/^ExecStart=quota-guard /m, `ExecStart=${join(pkg.prefix, 'bin/quota-guard')} `),
      );
      const r = spawnSync('systemd-analyze', ['verify', join(units, unit)], { encoding: 'utf8' });
      expect(`${r.stdout}${r.stderr}`, unit).toBe('');
      expect(r.status, unit).toBe(0);
    }
  });

  it('runs the demo end to end: simulator, SQLite ledger and cache, the jobs, status and search', () => {
    const data = mkdtempSync(join(pkg.work, 'demo-'));
    const r = cli(['demo'], data);
    expect(r.status, `${r.signal} ${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/the ledger recorded (\d+) units and the simulator charged \1: they agree/);
    expect(r.stdout).toMatch(/demo finished: every job done, nothing overspent/);
  });
});

describe('an install whose native addon did not build', () => {
  it('says so in one line and exits 69, with no stack trace', () => {
    // better-sqlite3 12 builds its addon into build/ at install; 13 ships them in prebuilds/.
    const driver = join(pkg.dir, 'node_modules/better-sqlite3');
    const build = join(driver, existsSync(join(driver, 'build')) ? 'build' : 'prebuilds');
    renameSync(build, `${build}.hidden`);
    try {
      const data = mkdtempSync(join(pkg.work, 'noaddon-'));
      const r = spawnSync('quota-guard', ['spend', 'default', '--cost', '1'], {
        cwd: pkg.work,
        env: { ...pkg.env, QUOTA_GUARD_DATA: data, HOME: data, LOG_LEVEL: 'error', QUOTA_GUARD_CONFIG: '' },
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(r.status).toBe(69);
      expect(r.stderr).toMatch(
        /native addon is missing \((its install script did not run|none prebuilt for [\w-]+, none built)\): install quota-guard again/,
      );
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      renameSync(`${build}.hidden`, build);
    }
  });
});
