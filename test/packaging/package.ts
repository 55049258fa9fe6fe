/**
 * The package as a user gets it: `npm pack` (which builds dist/ through `prepack`) in a copy of the
 * checkout, then `npm install -g --prefix <dir>` of that tarball, the way docs/operations.md installs
 * it on a server. Nothing in the checkout is written: the copy has its own dist/. The install runs
 * the dependencies' install scripts, so better-sqlite3's native addon is built for the Node that
 * runs the tests (against the headers `npm_config_nodedir` names, as .ci/node-versions sets it).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT } from '../harness/imports.js';

/** What the build needs from the checkout, and what the tarball ships besides `files`. */
const SOURCES = [
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'src',
  'scripts',
  'lua',
  'config',
  'clients',
  'docs',
  'deploy',
  'README.md',
  'LICENSE',
  'CHANGELOG.md',
];

export interface InstalledPackage {
  /** The scratch directory everything lives in. */
  work: string;
  tarball: string;
  /** The global prefix: `<prefix>/bin/quota-guard`, `<prefix>/lib/node_modules/quota-guard`. */
  prefix: string;
  /** The installed package's directory. */
  dir: string;
  /** An environment for commands: no npm variables of the test run, the tested Node first on PATH. */
  env: NodeJS.ProcessEnv;
  /** What `npm install -g` printed (its warnings are on stderr). */
  installOutput: string;
}

function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    const key = k.toLowerCase();
    // `npm test` hands its own run's settings down (npm_package_*, npm_lifecycle_*, its prefixes):
    // they would point the inner npm at the checkout. The user's settings (cache, registry, nodedir) stay.
    if (key.startsWith('npm_') && !key.startsWith('npm_config_')) continue;
    if (/^npm_config_(prefix|global|local_prefix|global_prefix|user_agent|node_gyp)$/.test(key)) continue;
    if (key === 'init_cwd') continue;
    env[k] = v;
  }
  // The Node under test runs npm, node-gyp and the installed bin.
  env['PATH'] = `${dirname(process.execPath)}:${process.env['PATH'] ?? '/usr/bin:/bin'}`;
  return env;
}

/** Runs a command to its end; its stdout and stderr together, or an error naming what failed. */
function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, what: string): string {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: 900_000 });
  if (r.status !== 0) {
    throw new Error(`${what} exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`.slice(-4000));
  }
  return `${r.stdout}${r.stderr}`;
}

/** Packs the checkout and installs the tarball globally into a fresh prefix. Minutes: the addon compiles. */
export function packAndInstall(): InstalledPackage {
  const work = mkdtempSync(join(tmpdir(), 'qg-package-'));
  const env = npmEnv();

  const checkout = join(work, 'checkout');
  mkdirSync(checkout);
  for (const f of SOURCES) {
    if (existsSync(join(ROOT, f))) cpSync(join(ROOT, f), join(checkout, f), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
  run('npm', ['pack', '--pack-destination', work, '--silent'], checkout, env, 'npm pack');
  const tgz = readdirSync(work).filter((f) => f.endsWith('.tgz'));
  if (tgz.length !== 1) throw new Error(`npm pack wrote ${tgz.join(', ') || 'no tarball'}`);
  const tarball = join(work, tgz[0]!);

  const prefix = join(work, 'prefix');
  const installOutput = run(
    'npm',
    [
      'install',
      '--global',
      '--prefix',
      prefix,
      // npm 11 runs a dependency's install script only where it is approved; better-sqlite3's builds
      // its native addon. A global install has no package.json of its own to approve it in.
      '--allow-scripts=better-sqlite3',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      tarball,
    ],
    work,
    env,
    'npm install --global',
  );
  env['PATH'] = `${join(prefix, 'bin')}:${env['PATH']}`;
  return {
    work,
    tarball,
    prefix,
    dir: join(prefix, 'lib/node_modules/quota-guard'),
    env,
    installOutput,
  };
}
