/**
 * The clients as a shop installs them: the Python one with pip from its directory, offline, in a
 * fresh venv with --no-build-isolation; the PHP one with composer from a path repository with
 * packagist disabled. Each names the server version it belongs to, and the npm tarball carries
 * both and the API document.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, type TestContext } from 'vitest';
import { CLIENT_DIR } from './drivers.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');

/** Runs a command, or skips the test saying why when the tool is not here (fails in CI instead). */
async function tool(
  ctx: TestContext,
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
) {
  try {
    await run('sh', ['-c', `command -v ${cmd}`]);
  } catch {
    const why = `${cmd} is not installed (Debian's package ${cmd})`;
    if (process.env['CI']) throw new Error(why);
    console.warn(`skipped: ${why}`);
    ctx.skip();
  }
  return run(cmd, args, { timeout: 180_000, ...opts });
}

/** The server version: package.json's, or the release the changelog is preparing. */
function serverVersions(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const next = /^## (\d+\.\d+\.\d+)/m.exec(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8'))?.[1];
  return [pkg.version, ...(next ? [next] : [])];
}

const pyproject = readFileSync(join(CLIENT_DIR.python, 'pyproject.toml'), 'utf8');
const composer = JSON.parse(readFileSync(join(CLIENT_DIR.php, 'composer.json'), 'utf8')) as {
  version: string;
  require: Record<string, string>;
  extra: Record<string, string>;
};

describe('the clients’ packages', () => {
  it('name one version, the server release they belong to, in every place it is written', () => {
    const py = readFileSync(join(CLIENT_DIR.python, 'quota_guard.py'), 'utf8');
    const php = readFileSync(join(CLIENT_DIR.php, 'QuotaGuard.php'), 'utf8');
    const found = [
      /^version = "([^"]+)"/m.exec(pyproject)?.[1],
      /^server-version = "([^"]+)"/m.exec(pyproject)?.[1],
      /^__version__ = "([^"]+)"/m.exec(py)?.[1],
      /^SERVER_VERSION = "([^"]+)"/m.exec(py)?.[1],
      composer.version,
      composer.extra['quota-guard-server'],
      /^const VERSION = '([^']+)';/m.exec(php)?.[1],
      /^const SERVER_VERSION = '([^']+)';/m.exec(php)?.[1],
    ];
    expect(new Set(found).size, found.join(', ')).toBe(1);
    expect(serverVersions()).toContain(found[0]);
    // The language versions each states.
    expect(composer.require['php']).toBe('>=8.1');
    expect(pyproject).toMatch(/^requires-python = ">=3\.8"$/m);
  });

  it('installs the Python client with pip from its directory, offline, into a fresh venv', async (ctx) => {
    const dir = mkdtempSync(join(tmpdir(), 'qg-venv-'));
    await tool(ctx, 'python3', ['-m', 'venv', join(dir, 'venv')]);
    // No index, no build isolation, no configured extra index: what a host without a network has.
    const env = {
      PATH: process.env['PATH'] ?? '',
      PIP_CONFIG_FILE: '/dev/null',
      PIP_NO_INDEX: '1',
      HOME: dir,
    };
    const pip = join(dir, 'venv/bin/pip');
    const r = await run(pip, ['install', '--no-build-isolation', '--no-index', CLIENT_DIR.python], {
      env,
      timeout: 180_000,
    });
    expect(r.stdout).toMatch(/Successfully installed quota-guard-client-\d/);
    const v = await run(
      join(dir, 'venv/bin/python'),
      [
        '-c',
        'import quota_guard as q; print(q.__file__); print(q.SERVER_VERSION); print(q.QuotaGuardUnavailable.__name__)',
      ],
      { cwd: dir, env },
    );
    const [file, version, exception] = v.stdout.trim().split('\n');
    expect(file).toContain(join(dir, 'venv'));
    expect(readFileSync(file!, 'utf8')).toBe(readFileSync(join(CLIENT_DIR.python, 'quota_guard.py'), 'utf8'));
    expect(version).toBe(composer.version);
    expect(exception).toBe('QuotaGuardUnavailable');
  }, 300_000);

  it('installs the PHP client with composer from a path repository, packagist disabled', async (ctx) => {
    const dir = mkdtempSync(join(tmpdir(), 'qg-composer-'));
    writeFileSync(
      join(dir, 'composer.json'),
      JSON.stringify({
        repositories: [
          { type: 'path', url: CLIENT_DIR.php, options: { symlink: false } },
          { 'packagist.org': false },
        ],
        require: { 'quota-guard/client': composer.version },
      }),
    );
    const env = { PATH: process.env['PATH'] ?? '', HOME: dir, COMPOSER_HOME: join(dir, '.composer') };
    await tool(ctx, 'composer', ['validate', '--no-check-publish', join(CLIENT_DIR.php, 'composer.json')], {
      env,
    });
    await tool(ctx, 'composer', ['install', '--no-interaction', '--no-progress'], { cwd: dir, env });
    const r = await run(
      'php',
      [
        '-r',
        'require "vendor/autoload.php"; echo QuotaGuard\\SERVER_VERSION, " ", (new ReflectionClass("QuotaGuard\\Client"))->getFileName();',
      ],
      { cwd: dir, env },
    );
    const [version, file] = r.stdout.split(' ');
    expect(version).toBe(composer.version);
    expect(file).toBe(join(dir, 'vendor/quota-guard/client/QuotaGuard.php'));
  }, 300_000);

  it('are in the npm tarball, with the API document', async () => {
    const r = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      timeout: 120_000,
    });
    const files = (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    for (const f of [
      'clients/python/quota_guard.py',
      'clients/python/cron_example.py',
      'clients/python/pyproject.toml',
      'clients/python/build_backend.py',
      'clients/php/QuotaGuard.php',
      'clients/php/cron_example.php',
      'clients/php/composer.json',
      'docs/openapi.yaml',
    ]) {
      expect(files, f).toContain(f);
    }
    expect(files.filter((f) => f.includes('__pycache__') || f.startsWith('test/'))).toEqual([]);
  });
});
