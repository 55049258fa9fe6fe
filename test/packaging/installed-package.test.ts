/**
 * The packed tarball, installed globally and into a project (see package.ts): one pack and two
 * installs for the whole file. .ci/node-versions runs this file on each supported Node.
 *
 * - The library's entry points from a consumer project: `require` and `import` of every subpath,
 *   one copy of the error classes (`instanceof` holds across the two), the native addon opened
 *   through the library; and the types for a `.cts`, a `.mts` and a bundler-resolution project.
 * - The CLI on PATH: `quota-guard --version`, commands on a fresh data directory, and the demo (the
 *   simulator, the SQLite ledger and cache, the jobs) as one end-to-end run.
 * - A project whose lockfile another Node wrote: `npm ci` brings the SQLite driver this Node runs,
 *   the demo runs, the docs' examples run as written (`node example.ts`), the interceptor's types
 *   accept the project's undici 8, and a driver npm left out is told in one line that `npm install`
 *   repairs.
 * - The systemd units the package ships (deploy/systemd/): each one's command and working directory
 *   against the install, distinct ports, one data directory, and the three started side by side.
 *
 * The consumer project of the first part sits beside the global install (`<prefix>/lib/consumer`),
 * so Node and TypeScript find `quota-guard` by walking up to `<prefix>/lib/node_modules`, as they do
 * from any project's own node_modules.
 *
 * Over 600 lines because every part shares the one pack and its installs (minutes each on a small
 * machine): a file of its own per part would pack and install again for each.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { EXAMPLES, exampleConfig, exampleEnv } from '../docs/examples.js';
import { startProcess } from '../harness/child.js';
import { ROOT } from '../harness/imports.js';
import { freePort } from '../harness/redis.js';
import { type InstalledPackage, type Packaged, packageAndInstall, run } from './package.js';

const hasSystemdAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
/** The type checks do not depend on the Node that runs them: .ci/node-versions runs them on one line. */
const checkTypes = process.env['QG_SKIP_TYPE_CHECKS'] === undefined;
let packaged: Packaged;
let pkg: InstalledPackage;
let consumer: string;
const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

beforeAll(async () => {
  packaged = await packageAndInstall();
  pkg = packaged.global;
  consumer = join(pkg.prefix, 'lib/consumer');
  mkdirSync(join(consumer, 'node_modules/@types'), { recursive: true });
  // A TypeScript user has Node's types; the package must bring every other type it names.
  symlinkSync(join(ROOT, 'node_modules/@types/node'), join(consumer, 'node_modules/@types/node'));
  writeFileSync(join(consumer, 'package.json'), '{ "name": "consumer", "private": true }\n');
}, 1_800_000);

afterAll(() => {
  if (packaged) rmSync(packaged.work, { recursive: true, force: true });
});

/** Where a package `from` depends on is installed (without loading it), or undefined. */
function installedAt(from: string, name: string): string | undefined {
  try {
    return dirname(createRequire(join(from, 'package.json')).resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

function node(args: string[], cwd = consumer) {
  return spawnSync(process.execPath, args, { cwd, env: pkg.env, encoding: 'utf8', timeout: 120_000 });
}

function tsc(project: string, cwd = consumer) {
  return spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project], {
    cwd,
    env: pkg.env,
    encoding: 'utf8',
    timeout: 180_000,
  });
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
    const r = node(['spend.mjs', join(packaged.work, 'ledger.db')]);
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

  it.runIf(checkTypes)(
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
      cwd: packaged.work,
      env: { ...pkg.env, QUOTA_GUARD_DATA: data, HOME: data, LOG_LEVEL: 'error', QUOTA_GUARD_CONFIG: '' },
      encoding: 'utf8',
      timeout: 120_000,
    });
  }

  it('ships the build, the Lua scripts, the default config, the clients, the docs, the deploy files and the licence; no sources, no tests', () => {
    const list = spawnSync('tar', ['-tzf', packaged.tarball], { encoding: 'utf8' }).stdout.split('\n');
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
      // The docs the README and CHANGELOG link to, and the units and alerts they describe.
      'docs/operations.md',
      'docs/img/status-390.png',
      'deploy/systemd/quota-guard.service',
      'deploy/prometheus/alerts.yml',
      'deploy/grafana/quota-guard.json',
    ]) {
      expect(list, f).toContain(`package/${f}`);
    }
    expect(list.some((f) => f.startsWith('package/lua/') && f.endsWith('.lua'))).toBe(true);
    expect(list.filter((f) => /^package\/(src|test|bench|jobs|node_modules)\//.test(f))).toEqual([]);
  });

  it('installs the better-sqlite3 this Node runs: 12, built, on Node 20; 13 on 22 and later', () => {
    const at = (name: string) => installedAt(pkg.dir, name);
    if (NODE_MAJOR >= 22) {
      expect(at('better-sqlite3-13'), 'better-sqlite3-13').toBeDefined();
    } else {
      // 13's engines (Node >= 22) keep npm from installing it here; 12 is built at install.
      expect(at('better-sqlite3-13')).toBeUndefined();
      expect(existsSync(join(at('better-sqlite3-12') ?? '-', 'build/Release/better_sqlite3.node'))).toBe(
        true,
      );
    }
  });

  it('installs with no install script of its own for npm to warn about (the build runs at pack, prepack)', () => {
    expect(pkg.installOutput).not.toMatch(/quota-guard@[^\s]* \((prepare|install|postinstall|preinstall):/);
    const scripts = (
      JSON.parse(readFileSync(join(pkg.dir, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    for (const s of ['prepare', 'preinstall', 'install', 'postinstall'])
      expect(scripts, s).not.toHaveProperty(s);
  });

  it('is on PATH and prints the package version', () => {
    const r = cli(['--version'], packaged.work);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(version);
  });

  it('plans, spends and reports on a fresh data directory', () => {
    const data = mkdtempSync(join(packaged.work, 'data-'));
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

  it('runs the demo end to end: simulator, SQLite ledger and cache, the jobs, status and search', () => {
    const data = mkdtempSync(join(packaged.work, 'demo-'));
    const r = cli(['demo'], data);
    expect(r.status, `${r.signal} ${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/the ledger recorded (\d+) units and the simulator charged \1: they agree/);
    expect(r.stdout).toMatch(/demo finished: every job done, nothing overspent/);
  });
});

describe('a project whose lockfile another Node wrote', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
  });
  afterAll(async () => {
    await sim?.close();
  });

  const inProject = (cmd: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
    spawnSync(cmd, args, {
      cwd: packaged.project.dir,
      env: { ...packaged.project.env, LOG_LEVEL: 'error', QUOTA_GUARD_CONFIG: '', ...env },
      encoding: 'utf8',
      timeout: 300_000,
    });
  /** This Node's driver, and the one it must never load. */
  const fits = NODE_MAJOR >= 22 ? 'better-sqlite3-13' : 'better-sqlite3-12';

  it('locks both drivers, and npm ci installs the one this Node runs, which the library loads', () => {
    const { dir, lockfileWrittenBy } = packaged.project;
    const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { name?: string; optional?: boolean }>;
    };
    for (const alias of ['better-sqlite3-12', 'better-sqlite3-13']) {
      expect(lock.packages[`node_modules/${alias}`], alias).toMatchObject({
        name: 'better-sqlite3',
        optional: true,
      });
    }
    if (process.env['QG_LOCKFILE_NODE'])
      expect(lockfileWrittenBy).not.toMatch(new RegExp(`^v${NODE_MAJOR}\\.`));
    expect(installedAt(dir, fits), fits).toBeDefined();
    writeFileSync(
      join(dir, 'which.js'),
      `import { openLedger } from 'quota-guard';
const ledger = await openLedger('sqlite::memory:');
await ledger.close();
const addons = process.report.getReport().sharedObjects.filter((f) => f.endsWith('.node'));
console.log(JSON.stringify(addons.filter((f) => f.includes('/better-sqlite3-'))));
`,
    );
    const r = inProject(process.execPath, ['which.js']);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual([expect.stringContaining(`/node_modules/${fits}/`)]);
  });

  it('runs the demo with its own quota-guard', () => {
    const data = mkdtempSync(join(packaged.work, 'project-demo-'));
    const r = inProject('quota-guard', ['demo'], { QUOTA_GUARD_DATA: data, HOME: data });
    expect(r.status, `${r.signal} ${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/demo finished: every job done, nothing overspent/);
  });

  // Node strips TypeScript's types itself from 22.18 (unflagged); its V8 learnt `await using` in 24,
  // so the docs say to run those examples with tsx on 22, as this does.
  const TSX = pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve('tsx')).href;
  it.runIf(NODE_MAJOR >= 22).each(EXAMPLES.map((e, i) => [`${e.file}:${e.line}`, e, i] as const))(
    '%s runs as written with this Node',
    async (_name, example, i) => {
      const file = join(packaged.project.dir, `example${i}.${example.lang}`);
      writeFileSync(file, example.code);
      const tsx = NODE_MAJOR < 24 && /\bawait using\b/.test(example.code);
      const data = mkdtempSync(join(packaged.work, 'example-'));
      const config = join(data, 'quota-guard.yaml');
      writeFileSync(config, exampleConfig(`  url: sqlite:${join(data, 'ledger.db')}\n`, data, sim.url));
      const { LOG_LEVEL: _quiet, ...inherited } = packaged.project.env;
      const r = await startProcess(process.execPath, [...(tsx ? ['--import', TSX] : []), file], {
        cwd: packaged.project.dir,
        env: { ...inherited, ...exampleEnv(config, data, sim.url) },
        timeoutMs: 60_000,
      }).exited;
      expect({ code: r.code, signal: r.signal, stderr: r.stderr }).toEqual({
        code: 0,
        signal: null,
        stderr: '',
      });
    },
    70_000,
  );

  it.runIf(checkTypes)(
    'type-checks the interceptor example against the project’s undici 8',
    () => {
      const { dir } = packaged.project;
      const undiciOf = (from: string) =>
        (
          JSON.parse(readFileSync(join(installedAt(from, 'undici')!, 'package.json'), 'utf8')) as {
            version: string;
          }
        ).version;
      expect(undiciOf(dir)).toMatch(/^8\./);
      expect(undiciOf(installedAt(dir, 'quota-guard')!)).toMatch(/^7\./);
      const example = EXAMPLES.find((e) => e.file === 'docs/guard.md' && /\bguardInterceptor\(/.test(e.code));
      if (!example) throw new Error('docs/guard.md has no guardInterceptor example');
      mkdirSync(join(dir, 'types/node_modules/@types'), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules/@types/node'), join(dir, 'types/node_modules/@types/node'));
      writeFileSync(join(dir, 'types/interceptor.ts'), example.code);
      writeFileSync(
        join(dir, 'types/tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            module: 'nodenext',
            target: 'es2022',
            types: ['node'],
          },
          files: ['interceptor.ts'],
        }),
      );
      const r = tsc('types/tsconfig.json', dir);
      expect(`${r.stdout}${r.stderr}`).toBe('');
      expect(r.status).toBe(0);
    },
    180_000,
  );

  it('tells a driver npm left out in one line, before loading any; `npm install` brings it back', async () => {
    const { dir } = packaged.project;
    const data = mkdtempSync(join(packaged.work, 'nodriver-'));
    const spend = () =>
      inProject('quota-guard', ['spend', 'default', '--cost', '1'], { QUOTA_GUARD_DATA: data, HOME: data });
    const away = join(packaged.work, `${fits}.away`);
    renameSync(join(dir, 'node_modules', fits), away);
    // The other major, unfit for this Node, as an install for another line left it; only its
    // package.json: loading it would fail otherwise than the line below.
    const unfit = NODE_MAJOR >= 22 ? 'better-sqlite3-12' : 'better-sqlite3-13';
    const fake = installedAt(dir, unfit) === undefined && NODE_MAJOR !== 22 && NODE_MAJOR !== 23;
    if (fake) {
      mkdirSync(join(dir, 'node_modules', unfit));
      writeFileSync(
        join(dir, 'node_modules', unfit, 'package.json'),
        JSON.stringify({
          name: 'better-sqlite3',
          version: NODE_MAJOR >= 24 ? '12.11.1' : '13.2.0',
          main: 'none.js',
        }),
      );
    }
    try {
      const r = spend();
      expect(r.status).toBe(69);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(
        new RegExp(
          `^quota-guard: no SQLite driver for Node ${process.versions.node}: .*better-sqlite3 ${NODE_MAJOR >= 22 ? 13 : 12}, an optional dependency of quota-guard, is not installed .*run \`npm install\` where quota-guard is installed \\(your project, or a checkout\\)`,
        ),
      );
      if (NODE_MAJOR >= 24) expect(r.stderr).toMatch(/better-sqlite3 12\.[\d.]+ aborts Node 24 and later; /);
      if (NODE_MAJOR < 22)
        expect(r.stderr).toMatch(
          /better-sqlite3 13\.[\d.]+ crashes Node 20\.[\d.]+ \(it needs Node 22 or later\); /,
        );
    } finally {
      if (fake) rmSync(join(dir, 'node_modules', unfit), { recursive: true });
    }
    if (fits === 'better-sqlite3-13') {
      // The advice, taken: npm adds what the lockfile holds and node_modules lacks.
      rmSync(away, { recursive: true });
      await run(
        'npm',
        ['install', '--prefer-offline', '--no-audit', '--no-fund'],
        dir,
        packaged.project.env,
        'npm install',
      );
    } else {
      // On Node 20 `npm install` would build 12 again (minutes): put it back instead.
      renameSync(away, join(dir, 'node_modules', fits));
    }
    const again = spend();
    expect(again.stderr).toBe('');
    expect(again.status).toBe(0);
  }, 300_000);
});

describe('the systemd units, as the install ships them', () => {
  /** A unit file's settings: each key's values in order, continuation lines joined. */
  function unitFile(text: string): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const line of text.replace(/\\\n\s*/g, ' ').split('\n')) {
      const m = /^([A-Za-z]+)=(.*)$/.exec(line);
      if (m) out.set(m[1]!, [...(out.get(m[1]!) ?? []), m[2]!]);
    }
    return out;
  }
  const one = (u: Map<string, string[]>, key: string) => u.get(key)?.at(-1);

  let units: Array<{ name: string; u: Map<string, string[]> }>;
  let etc: string;
  let state: string;
  /** A unit's path on the server, as this scratch install has it. */
  const local = (p: string) =>
    p.replaceAll('/etc/quota-guard', etc).replaceAll('/var/lib/quota-guard', state);

  beforeAll(() => {
    const dir = join(pkg.dir, 'deploy/systemd');
    units = readdirSync(dir)
      .filter((f) => f.endsWith('.service'))
      .map((name) => ({ name, u: unitFile(readFileSync(join(dir, name), 'utf8')) }));
    etc = mkdtempSync(join(packaged.work, 'etc-'));
    // What StateDirectory=quota-guard makes before ExecStart: the data directory.
    state = mkdtempSync(join(packaged.work, 'var-lib-'));
  });

  it('each runs the quota-guard the install put on PATH, in a directory that exists before it starts', () => {
    expect(units.map((x) => x.name).sort()).toEqual([
      'quota-guard-api.service',
      'quota-guard-serve.service',
      'quota-guard.service',
    ]);
    for (const { name, u } of units) {
      const [command] = one(u, 'ExecStart')!.split(/\s+/);
      // systemd finds a bare name in /usr/local/bin or /usr/bin, where `npm install -g` puts it.
      expect(command, name).toBe('quota-guard');
      expect(existsSync(join(pkg.prefix, 'bin', command!)), name).toBe(true);
      // The working directory is the one StateDirectory= creates: nothing the install must make.
      expect(one(u, 'StateDirectory'), name).toBe('quota-guard');
      expect(one(u, 'WorkingDirectory'), name).toBe('/var/lib/quota-guard');
    }
  });

  it('listen on ports of their own and share one data directory', () => {
    const ports = units.map(({ u }) => /--http \S*:(\d+)\b/.exec(one(u, 'ExecStart')!)?.[1]);
    expect(ports.every((p) => p !== undefined)).toBe(true);
    expect(new Set(ports).size).toBe(units.length);
    for (const { name, u } of units) {
      expect(u.get('Environment'), name).toContain('QUOTA_GUARD_DATA=/var/lib/quota-guard');
      expect(u.get('Environment'), name).toContain('QUOTA_GUARD_CONFIG=/etc/quota-guard/config.yaml');
    }
  });

  it.skipIf(!hasSystemdAnalyze)('pass systemd-analyze verify against the installed command', () => {
    const dir = join(packaged.work, 'units');
    mkdirSync(dir, { recursive: true });
    for (const { name } of units) {
      const text = readFileSync(join(pkg.dir, 'deploy/systemd', name), 'utf8');
      writeFileSync(
        join(dir, name),
        text.replace(/^ExecStart=quota-guard /m, `ExecStart=${join(pkg.prefix, 'bin/quota-guard')} `),
      );
      const r = spawnSync('systemd-analyze', ['verify', join(dir, name)], { encoding: 'utf8' });
      expect(`${r.stdout}${r.stderr}`, name).toBe('');
      expect(r.status, name).toBe(0);
    }
  });

  // No systemd runs the tests (it is not this machine's init): each ExecStart runs by hand, with its
  // unit's Environment and EnvironmentFile, in its WorkingDirectory, all three at once.
  it.skipIf(!hasOpenssl)(
    'start side by side from their ExecStart and Environment, answer /healthz and stop on SIGTERM',
    async () => {
      mkdirSync(join(etc, 'tls'));
      writeFileSync(join(etc, 'env'), 'YOUTUBE_API_KEY=not-a-real-key\n');
      writeFileSync(join(etc, 'config.yaml'), 'upstream: { baseUrl: "http://127.0.0.1:9/youtube/v3" }\n');
      writeFileSync(
        join(etc, 'tokens.yaml'),
        `tokens:\n  - { name: php-cron, sha256: ${createHash('sha256').update('token-1').digest('hex')}, credentials: ['*'] }\n`,
      );
      const cert = join(etc, 'tls/cert.pem');
      spawnSync('openssl', [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(etc, 'tls/key.pem'),
        '-out',
        cert,
      ]);
      const envOf = (u: Map<string, string[]>): NodeJS.ProcessEnv => {
        const env: NodeJS.ProcessEnv = { PATH: pkg.env['PATH'], HOME: state };
        for (const f of u.get('EnvironmentFile') ?? []) {
          const file = local(f.replace(/^-/, ''));
          if (!existsSync(file) && f.startsWith('-')) continue;
          for (const line of readFileSync(file, 'utf8').split('\n')) {
            const m = /^(\w+)=(.*)$/.exec(line);
            if (m) env[m[1]!] = m[2]!;
          }
        }
        for (const e of u.get('Environment') ?? []) {
          const [k, ...v] = e.split('=');
          env[k!] = local(v.join('='));
        }
        return env;
      };
      // An operator's shell spends first: `serve` reads only, and a ledger must exist for it.
      const shell = spawnSync('quota-guard', ['spend', 'default', '--cost', '2'], {
        cwd: state,
        env: envOf(units[0]!.u),
        encoding: 'utf8',
      });
      expect(shell.status, shell.stderr).toBe(0);
      const started = await Promise.all(
        units.map(async ({ name, u }) => {
          const port = await freePort();
          // Each unit's own port is checked above; here a free loopback one stands in for it.
          const args = local(one(u, 'ExecStart')!)
            .split(/\s+/)
            .slice(1)
            .join(' ')
            .replace(/--http \S+/, `--http 127.0.0.1:${port}`)
            .split(' ');
          const p = startProcess(join(pkg.prefix, 'bin/quota-guard'), args, {
            cwd: local(one(u, 'WorkingDirectory')!),
            env: envOf(u),
            timeoutMs: 120_000,
          });
          return { name, p, url: `${args.includes('--tls-cert') ? 'https' : 'http'}://127.0.0.1:${port}` };
        }),
      );
      const dispatcher = new Agent({ connect: { ca: readFileSync(cert) } });
      try {
        for (const { name, p, url } of started) {
          let status = 0;
          for (let i = 0; i < 100 && status !== 200; i++) {
            status = await fetch(`${url}/healthz`, { dispatcher }).then(
              (r) => r.status,
              () => 0,
            );
            if (status !== 200) await new Promise((r) => setTimeout(r, 200));
          }
          expect(status, `${name}: ${p.stderr}`).toBe(200);
        }
        // One data directory: the page of every unit shows the shell's spend.
        for (const { name, url } of started) {
          const metrics = await (await fetch(`${url}/metrics`, { dispatcher })).text();
          expect(metrics, name).toMatch(/^quota_guard_units_used\{credential="default",bucket="units"\} 2$/m);
        }
      } finally {
        for (const { p } of started) p.child.kill('SIGTERM');
        await dispatcher.close();
      }
      for (const { name, p } of started) {
        const e = await p.exited;
        expect(e.code, `${name}: ${e.stderr}`).toBe(0);
      }
    },
    180_000,
  );
});

describe('an install whose native addon did not build', () => {
  it('says so in one line, naming what to rebuild, and exits 69 with no stack trace', () => {
    // better-sqlite3 12 builds its addon into build/ at install; 13 ships them in prebuilds/.
    const name = NODE_MAJOR >= 22 ? 'better-sqlite3-13' : 'better-sqlite3-12';
    const driver = installedAt(pkg.dir, name)!;
    const build = join(driver, existsSync(join(driver, 'build')) ? 'build' : 'prebuilds');
    renameSync(build, `${build}.hidden`);
    try {
      const data = mkdtempSync(join(packaged.work, 'noaddon-'));
      const r = spawnSync('quota-guard', ['spend', 'default', '--cost', '1'], {
        cwd: packaged.work,
        env: { ...pkg.env, QUOTA_GUARD_DATA: data, HOME: data, LOG_LEVEL: 'error', QUOTA_GUARD_CONFIG: '' },
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(r.status).toBe(69);
      expect(r.stderr).toMatch(
        new RegExp(
          `${name}'s native addon is missing \\((its install script did not run|none prebuilt for [\\w-]+, none built)\\): run \`npm rebuild ${name}\` where quota-guard is installed`,
        ),
      );
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      renameSync(`${build}.hidden`, build);
    }
  });
});
