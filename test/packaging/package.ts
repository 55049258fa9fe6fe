/**
 * The package as a user gets it, installed twice from one tarball:
 *
 * - globally (`npm install -g --prefix <dir>`), the way docs/operations.md installs it on a server;
 * - into a project of one's own (`npm ci`), whose lockfile was written by another Node than the one
 *   under test ($QG_LOCKFILE_NODE, which .ci/node-versions sets to another line's), as a team with
 *   developers on several lines has it. The project also depends on undici 8, beside the undici 7
 *   quota-guard brings (test/packaging/project.test.ts).
 *
 * The tarball is `npm pack` (which builds dist/ through `prepack`) of a copy of the checkout, or the
 * one $QG_PACKAGE_TARBALL names (.ci/node-versions packs once for every line). Nothing in the
 * checkout is written. The installs run the dependencies' install scripts, so better-sqlite3 12's
 * native addon is built for the Node that runs the tests (against the headers `npm_config_nodedir`
 * names, as .ci/node-versions sets it) where it is built at all; both run at once (two cores, and
 * each spends most of its time compiling SQLite).
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startProcess } from '../harness/child.js';
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

/** The undici a project of today installs (it needs Node 22.19 or later; quota-guard keeps 7 for Node 20). */
export const PROJECT_UNDICI = '^8.13.1';

export interface InstalledPackage {
  /** The global prefix: `<prefix>/bin/quota-guard`, `<prefix>/lib/node_modules/quota-guard`. */
  prefix: string;
  /** The installed package's directory. */
  dir: string;
  /** An environment for commands: no npm variables of the test run, the tested Node first on PATH. */
  env: NodeJS.ProcessEnv;
  /** What `npm install -g` printed (its warnings are on stderr). */
  installOutput: string;
}

export interface Project {
  /** The project's directory: package.json, package-lock.json, node_modules/quota-guard. */
  dir: string;
  /** The Node version that wrote its lockfile (`v20.20.2`). */
  lockfileWrittenBy: string;
  env: NodeJS.ProcessEnv;
}

export interface Packaged {
  /** The scratch directory everything lives in. */
  work: string;
  tarball: string;
  global: InstalledPackage;
  project: Project;
}

export function npmEnv(): NodeJS.ProcessEnv {
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

/** Runs a command to its end: what it printed on stdout and then stderr; rejects with their tail when it fails. */
export async function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  what: string,
): Promise<string> {
  const r = await startProcess(cmd, args, { cwd, env, timeoutMs: 900_000 }).exited;
  if (r.code !== 0)
    throw new Error(`${what} exited ${r.code ?? r.signal}:\n${r.stdout}\n${r.stderr}`.slice(-4000));
  return `${r.stdout}${r.stderr}`;
}

const QUIET = ['--prefer-offline', '--no-audit', '--no-fund'];

async function pack(work: string, env: NodeJS.ProcessEnv): Promise<string> {
  const given = process.env['QG_PACKAGE_TARBALL'];
  if (given) return given;
  const checkout = join(work, 'checkout');
  mkdirSync(checkout);
  for (const f of SOURCES) {
    if (existsSync(join(ROOT, f))) cpSync(join(ROOT, f), join(checkout, f), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
  await run('npm', ['pack', '--pack-destination', work, '--silent'], checkout, env, 'npm pack');
  const tgz = readdirSync(work).filter((f) => f.endsWith('.tgz'));
  if (tgz.length !== 1) throw new Error(`npm pack wrote ${tgz.join(', ') || 'no tarball'}`);
  return join(work, tgz[0]!);
}

async function installGlobal(
  work: string,
  tarball: string,
  base: NodeJS.ProcessEnv,
): Promise<InstalledPackage> {
  const prefix = join(work, 'prefix');
  // npm 11 runs a dependency's install script only where it is approved; better-sqlite3 12's builds
  // its native addon (`better-sqlite3` approves both aliases: npm trusts an alias by its package).
  // A global install has no package.json of its own to approve it in.
  const installOutput = await run(
    'npm',
    ['install', '--global', '--prefix', prefix, '--allow-scripts=better-sqlite3', ...QUIET, tarball],
    work,
    base,
    'npm install --global',
  );
  const env = { ...base, PATH: `${join(prefix, 'bin')}:${base['PATH']}` };
  return { prefix, dir: join(prefix, 'lib/node_modules/quota-guard'), env, installOutput };
}

/**
 * A project that depends on the tarball and on today's undici, its lockfile written by the Node
 * $QG_LOCKFILE_NODE names (this one when unset), then installed from it with `npm ci` by this one.
 */
async function installProject(work: string, tarball: string, env: NodeJS.ProcessEnv): Promise<Project> {
  const dir = join(work, 'project');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify(
      {
        name: 'project',
        private: true,
        type: 'module',
        dependencies: { 'quota-guard': `file:${tarball}`, undici: PROJECT_UNDICI },
        allowScripts: { 'better-sqlite3': true },
      },
      null,
      2,
    )}\n`,
  );
  const writer = process.env['QG_LOCKFILE_NODE'] || process.execPath;
  const writerEnv = { ...env, PATH: `${dirname(writer)}:${env['PATH']}` };
  const lockfileWrittenBy = (await run(writer, ['--version'], dir, writerEnv, 'node --version')).trim();
  await run(
    'npm',
    ['install', '--package-lock-only', ...QUIET],
    dir,
    writerEnv,
    `npm install on Node ${lockfileWrittenBy}`,
  );
  await run('npm', ['ci', ...QUIET], dir, env, 'npm ci');
  return {
    dir,
    lockfileWrittenBy,
    env: { ...env, PATH: `${join(dir, 'node_modules/.bin')}:${env['PATH']}` },
  };
}

/** Packs (or takes) the tarball and installs it globally and into a project, both at once. Minutes. */
export async function packageAndInstall(): Promise<Packaged> {
  const work = mkdtempSync(join(tmpdir(), 'qg-package-'));
  const env = npmEnv();
  const tarball = await pack(work, env);
  const [global, project] = await Promise.all([
    installGlobal(work, tarball, env),
    installProject(work, tarball, env),
  ]);
  return { work, tarball, global, project };
}
