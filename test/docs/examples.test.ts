/**
 * The library examples in README.md and docs/*.md run. Every ```ts example / ```js example block is
 * extracted and executed in a child process against the simulator, on a real Redis (under a key
 * prefix of its own) and on a real SQLite file, with the config a user would have
 * ($QUOTA_GUARD_CONFIG). An example must exit 0 by itself: the time limit is generous and only
 * catches one that leaves something open. Here they run from the sources under tsx; as written,
 * with `node example.ts` on each Node line, in a project that installed the tarball, they run in
 * test/packaging/installed-package.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { startProcess } from '../harness/child.js';
import { ROOT } from '../harness/imports.js';
import { EXAMPLES, type Example, exampleConfig, exampleEnv } from './examples.js';

const requireFromRoot = createRequire(join(ROOT, 'package.json'));
const ENTRIES: Record<string, string> = {
  'quota-guard': 'src/index.ts',
  'quota-guard/simulator': 'src/youtube/simulator/index.ts',
  'quota-guard/youtube': 'src/youtube/index.ts',
};

/** The package's own names point at its sources; other packages at the project's installed copies. */
function resolveImports(code: string, as: 'url' | 'path' = 'url'): string {
  return code.replace(/(from\s+|import\s*\(\s*)'([^'.][^']*)'/g, (all, head: string, spec: string) => {
    if (spec.startsWith('node:')) return all;
    const entry = ENTRIES[spec];
    const target = entry ? join(ROOT, entry) : requireFromRoot.resolve(spec);
    return `${head}'${as === 'url' ? pathToFileURL(target).href : target}'`;
  });
}

const TSX = pathToFileURL(requireFromRoot.resolve('tsx')).href;
const LIMIT_MS = 60_000;

/** Runs an example in `dir` with `config` as $QUOTA_GUARD_CONFIG and the variables a user would set. */
function runExample(example: Example, dir: string, config: string, env: NodeJS.ProcessEnv = {}) {
  const file = join(dir, `example.${example.lang === 'ts' ? 'mts' : 'mjs'}`);
  writeFileSync(file, resolveImports(example.code));
  const { LOG_LEVEL: _quiet, ...inherited } = process.env;
  return startProcess(process.execPath, ['--import', TSX, file], {
    cwd: dir,
    env: { ...inherited, ...exampleEnv(config, dir, sim.url), ...env },
    timeoutMs: LIMIT_MS,
  }).exited;
}

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});
afterAll(async () => {
  await sim?.close();
});

describe('the docs’ library examples', () => {
  it('are there: README.md and docs/guard.md show the library in runnable examples', () => {
    expect(EXAMPLES.filter((e) => e.file === 'README.md').length).toBeGreaterThanOrEqual(1);
    expect(EXAMPLES.filter((e) => e.file === 'docs/guard.md').length).toBeGreaterThanOrEqual(5);
    for (const e of EXAMPLES) expect(e.code, `${e.file}:${e.line}`).toMatch(/from 'quota-guard/);
  });

  it('type-check against the package as it is (strict, as the project compiles)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'qg-docs-tsc-'));
    const files = EXAMPLES.filter((e) => e.lang === 'ts').map((e, i) => {
      const f = join(dir, `example${i}.mts`);
      writeFileSync(f, `// ${e.file}:${e.line}\n${resolveImports(e.code, 'path')}`);
      return f;
    });
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: join(ROOT, 'tsconfig.json'),
        compilerOptions: { allowImportingTsExtensions: true, typeRoots: [join(ROOT, 'node_modules/@types')] },
        files,
        include: [],
      }),
    );
    const r = spawnSync(process.execPath, [requireFromRoot.resolve('typescript/bin/tsc'), '-p', dir], {
      encoding: 'utf8',
    });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  }, 120_000);

  const stores = [
    {
      name: 'redis',
      store: () => `  url: ${inject('redisUrl')}\n  keyPrefix: "${inject('keyPrefix')}docs${n++}:"\n`,
    },
    {
      name: 'sqlite',
      store: (dir: string) => `  url: sqlite:${join(dir, 'ledger.db')}\n  keyPrefix: "docs:"\n`,
    },
  ];
  let n = 0;

  describe.each(stores)('on $name', ({ store }) => {
    it.each(EXAMPLES.map((e) => [`${e.file}:${e.line}`, e] as const))(
      '%s runs and exits by itself',
      async (_name, example) => {
        const dir = mkdtempSync(join(tmpdir(), 'qg-docs-'));
        const config = join(dir, 'quota-guard.yaml');
        writeFileSync(config, exampleConfig(store(dir), dir, sim.url));
        const r = await runExample(example, dir, config);
        expect(
          r.signal,
          `${example.file}:${example.line} did not exit within ${LIMIT_MS / 1000} s`,
        ).toBeNull();
        expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
        expect(existsSync(config)).toBe(true);
      },
      LIMIT_MS + 10_000,
    );
  });

  // An example that catches quota-guard's errors catches a mistake in the config too: one line and
  // the config's exit status, not a stack trace (loading and opening sit inside its try).
  const handling = EXAMPLES.filter((e) => /\bisQuotaGuardError\(/.test(e.code));
  it('are there: some examples catch quota-guard’s errors', () => {
    expect(handling.length).toBeGreaterThanOrEqual(3);
  });
  it.each(handling.map((e) => [`${e.file}:${e.line}`, e] as const))(
    '%s reports a config mistake in one line',
    async (_name, example) => {
      const dir = mkdtempSync(join(tmpdir(), 'qg-docs-bad-'));
      const config = join(dir, 'quota-guard.yaml');
      writeFileSync(config, `store:\n  url: sqlite:${join(dir, 'ledger.db')}\n  keyPrefx: "docs:"\n`);
      const r = await runExample(example, dir, config);
      expect({ code: r.code, stderr: r.stderr }).toEqual({
        code: 78,
        stderr: `QG_CONFIG_INVALID: ${config}: store.keyPrefx: unknown key (did you mean 'keyPrefix'?)\n`,
      });
      expect(existsSync(join(dir, 'ledger.db'))).toBe(false);
    },
    LIMIT_MS + 10_000,
  );
});
