/**
 * The CLI a user runs is the bundle `npm run build` writes (scripts/bundle-cli.mjs), not the
 * sources the other tests run through tsx. Bundled into a temporary package directory, it must
 * find its version, its Lua scripts and its native and external packages, and spend and report on
 * SQLite and Redis the way the sources do.
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/youtube/simulator/index.js';
import { startProcess } from '../harness/child.js';
import { type RedisServer, startRedisServer } from '../harness/redis.js';

const ROOT = join(import.meta.dirname, '../..');
let pkg: string;
let redis: RedisServer;

beforeAll(async () => {
  pkg = mkdtempSync(join(tmpdir(), 'qg-bundle-'));
  copyFileSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  symlinkSync(join(ROOT, 'lua'), join(pkg, 'lua'));
  symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));
  const build = spawnSync(process.execPath, [join(ROOT, 'scripts/bundle-cli.mjs'), pkg], {
    encoding: 'utf8',
  });
  expect(build.stderr).toBe('');
  expect(build.status).toBe(0);
  redis = await startRedisServer();
}, 60_000);

afterAll(async () => {
  await redis?.stop();
  if (pkg) rmSync(pkg, { recursive: true, force: true });
});

function cli(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [join(pkg, 'dist/cli/bin.js'), ...args], {
    cwd: pkg,
    encoding: 'utf8',
    // NODE_DEBUG=module on Node 26 writes more than spawnSync's default 1 MiB.
    maxBuffer: 64 * 2 ** 20,
    env: { PATH: process.env['PATH'] ?? '', HOME: pkg, LOG_LEVEL: 'error', ...env },
  });
}

describe('the bundled CLI', () => {
  it('prints its version and usage', () => {
    const pkgJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(cli(['--version']).stdout.trim()).toBe(pkgJson.version);
    const help = cli(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/spend/);
  });

  it('spends and reports on the default SQLite ledger', () => {
    // HOME is the temporary directory, so the ledger is created under it.
    const spend = cli(['spend', 'default', '--cost', '3', '--json']);
    expect(spend.stderr).toBe('');
    expect(spend.status).toBe(0);
    expect(JSON.parse(spend.stdout)).toMatchObject({ allowed: true, cost: 3 });
    const status = cli(['status']);
    expect(status.status).toBe(0);
    expect(status.stdout).toMatch(/sqlite ledger/);
    expect(status.stdout).toContain(pkg);
    const plan = cli(['plan']);
    expect(plan.status).toBe(0);
    expect(plan.stdout).toMatch(/built-in defaults/);
  });

  it('spends and reports on Redis, from a config file (YAML) and from REDIS_URL', () => {
    const config = join(pkg, 'redis.yaml');
    writeFileSync(config, `store: ${redis.url}\n`);
    const spend = cli(['spend', 'default', '--cost', '2', '--json'], { QUOTA_GUARD_CONFIG: config });
    expect(spend.stderr).toBe('');
    expect(spend.status).toBe(0);
    expect(JSON.parse(spend.stdout)).toMatchObject({ allowed: true, cost: 2 });
    const status = cli(['status'], { REDIS_URL: redis.url });
    expect(status.stderr).toBe('');
    expect(status.status).toBe(0);
    expect(status.stdout).toMatch(/redis ledger/);
  });

  it('loads Luxon and node-cron only for a command that does calendar arithmetic', () => {
    // NODE_DEBUG=module logs each CommonJS file Node loads (the two libraries are required from
    // node_modules on first use, src/time-libs.ts), NODE_DEBUG=esm each ES module, the bundle's
    // chunks included: `status` imports both into its own chunk (src/cli/actions/status.ts).
    const chunks = readdirSync(join(pkg, 'dist/cli-chunks')).filter((f) => f.endsWith('.js'));
    const carrying = (marker: string) =>
      chunks.filter((f) => readFileSync(join(pkg, 'dist/cli-chunks', f), 'utf8').includes(marker));
    const bundled = { luxon: carrying('isLuxonDateTime'), 'node-cron': carrying('InlineScheduledTask') };
    expect(bundled.luxon).toHaveLength(1);
    expect(bundled['node-cron']).toHaveLength(1);
    const loaded = (args: string[]) => {
      const r = cli(args, { NODE_DEBUG: 'module,esm' });
      expect(r.status).toBe(0);
      const from = (p: keyof typeof bundled) =>
        r.stderr.includes(`node_modules/${p}/`)
          ? 'node_modules'
          : bundled[p].some((f) => r.stderr.includes(`cli-chunks/${f}`))
            ? 'bundle'
            : 'no';
      return { luxon: from('luxon'), 'node-cron': from('node-cron') };
    };
    expect(loaded(['spend', 'default', '--cost', '1'])).toEqual({ luxon: 'no', 'node-cron': 'no' });
    expect(loaded(['status'])).toEqual({ luxon: 'bundle', 'node-cron': 'bundle' });
  });

  it("reports the YAML parser's warnings as Node's build of it does, as process warnings", () => {
    // The bundle carries the parser's ES module build, which would print them with console.warn.
    const tagged = join(pkg, 'tagged.yaml');
    writeFileSync(tagged, 'regions: !foo [US]\n');
    const t = cli(['spend', 'default', '--cost', '1'], { QUOTA_GUARD_CONFIG: tagged });
    expect(t.stderr).toMatch(
      /^\(node:\d+\) \[TAG_RESOLVE_FAILED\] YAMLWarning: Unresolved tag: !foo at line 1, column 10:$/m,
    );
    const keyed = join(pkg, 'keyed.yaml');
    writeFileSync(keyed, '? [a, b]\n: 1\n');
    const k = cli(['spend', 'default', '--cost', '1'], { QUOTA_GUARD_CONFIG: keyed });
    expect(k.status).toBe(78);
    expect(k.stderr).toMatch(/^\(node:\d+\) Warning: Keys with collection values will be stringified/m);
    expect(k.stderr).toMatch(/^quota-guard: .*keyed\.yaml: \["\[ a, b \]"\]: unknown key/m);
  });

  it('reconciles through google-auth-library, found by Application Default Credentials', async () => {
    // The simulator answers in this process, so the CLI runs beside it (not spawnSync). Its day is
    // put where it is late morning now, so that the day has minutes to compare whatever the hour.
    const sim = await startSimulator({ keys: ['k@alpha'] });
    try {
      const x = ((new Date().getUTCHours() - 11 + 36) % 24) - 12;
      const zone = x === 0 ? 'Etc/GMT' : x > 0 ? `Etc/GMT+${x}` : `Etc/GMT${x}`;
      const config = join(pkg, 'reconcile.yaml');
      writeFileSync(
        config,
        `credentials: [{ id: default, project: alpha, timeZone: ${zone} }]\nreconcile: { monitoring: { baseUrl: "${sim.origin}" } }\n`,
      );
      const r = await startProcess(
        process.execPath,
        [join(pkg, 'dist/cli/bin.js'), 'reconcile', '--config', config],
        {
          cwd: pkg,
          env: {
            PATH: process.env['PATH'] ?? '',
            HOME: pkg,
            LOG_LEVEL: 'error',
            GCE_METADATA_HOST: `127.0.0.1:${sim.port}`,
          },
          timeoutMs: 30_000,
        },
      ).exited;
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^alpha \(default\): reconciled up to \d\d:\d\d UTC \(1 read\)/);
    } finally {
      await sim.close();
    }
  });

  it('reports a config mistake as one line, without a stack trace', () => {
    const config = join(pkg, 'bad.yaml');
    writeFileSync(config, 'maxSleep: soon\n');
    const r = cli(['spend', 'default', '--cost', '1'], { QUOTA_GUARD_CONFIG: config });
    expect(r.status).toBe(78);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^quota-guard: .*maxSleep/);
  });
});
