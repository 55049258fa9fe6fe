/**
 * The previous minor release, 0.2.0 (commit b48f884), built from this checkout's own history and
 * kept for every later run in `${XDG_CACHE_HOME:-~/.cache}/quota-guard-prev/<commit>`, or taken from
 * $QG_PREVIOUS_RELEASE (a directory where it is built already).
 *
 * The build, once: `git archive <commit>` into a new directory; `npm ci --ignore-scripts` there (the
 * release's own lockfile; the packages come from the npm cache this checkout's install filled);
 * better-sqlite3's native addon copied from this checkout when both lockfiles install the same
 * version of it, else built there (`npm rebuild better-sqlite3`, minutes); then the release's own
 * `npm run build`. About a minute when the addon is copied.
 *
 * Why copying the addon is sound: it is the same package version's source built for the Node that
 * runs both releases here (its ABI), which is what building it again would produce. Why this
 * checkout's node_modules are not used as they are: the new release may depend on other versions
 * (a newer better-sqlite3, a new major of a library), and the previous release must run with the
 * dependencies it shipped with.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './imports.js';

export const PREVIOUS_RELEASE = { version: '0.2.0', commit: 'b48f884dad8501080fc02fc0096350bbd838fe67' };

/** The built release: run its CLI with `node <bin> …`. */
export interface PreviousRelease {
  dir: string;
  bin: string;
}

function run(cmd: string, args: string[], cwd: string): void {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status}: ${r.stderr.slice(-2000)}`);
  }
}

/** The version of `name` a lockfile installs at the top of node_modules. */
function lockedVersion(lockfile: string, name: string): string | undefined {
  const lock = JSON.parse(readFileSync(lockfile, 'utf8')) as {
    packages?: Record<string, { version?: string }>;
  };
  return lock.packages?.[`node_modules/${name}`]?.version;
}

function build(into: string): void {
  const { commit } = PREVIOUS_RELEASE;
  const known = spawnSync('git', ['-C', ROOT, 'cat-file', '-e', `${commit}^{commit}`]);
  if (known.status !== 0) {
    throw new Error(
      `the previous release's commit ${commit} is not in this clone (a shallow clone?): fetch it, or set QG_PREVIOUS_RELEASE to a directory where ${PREVIOUS_RELEASE.version} is built`,
    );
  }
  mkdirSync(into, { recursive: true });
  const archive = execFileSync('git', ['-C', ROOT, 'archive', '--format=tar', commit], {
    maxBuffer: 512 * 2 ** 20,
  });
  execFileSync('tar', ['-x', '-C', into], { input: archive });
  run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], into);
  const addon = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
  const ours = lockedVersion(join(ROOT, 'node_modules/.package-lock.json'), 'better-sqlite3');
  const theirs = lockedVersion(join(into, 'package-lock.json'), 'better-sqlite3');
  if (ours !== undefined && ours === theirs && existsSync(join(ROOT, addon))) {
    mkdirSync(join(into, 'node_modules/better-sqlite3/build/Release'), { recursive: true });
    cpSync(join(ROOT, addon), join(into, addon));
  } else {
    run('npm', ['rebuild', 'better-sqlite3', '--no-audit', '--no-fund', '--loglevel=error'], into);
  }
  run('npm', ['run', 'build', '--silent'], into);
  writeFileSync(join(into, '.built'), `${PREVIOUS_RELEASE.version} ${commit}\n`);
}

/** The previous release, built on first use (minutes at most) and cached. */
export function previousRelease(): PreviousRelease {
  const given = process.env['QG_PREVIOUS_RELEASE'];
  const cacheHome = process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache');
  const dir = given || join(cacheHome, 'quota-guard-prev', PREVIOUS_RELEASE.commit);
  if (!given && !existsSync(join(dir, '.built'))) {
    // Built beside and moved in whole: a run that stops halfway leaves nothing that looks built.
    const tmp = `${dir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    try {
      build(tmp);
      rmSync(dir, { recursive: true, force: true });
      renameSync(tmp, dir);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const bin = join(dir, 'dist/cli/bin.js');
  if (!existsSync(bin)) throw new Error(`no ${PREVIOUS_RELEASE.version} CLI at ${bin}`);
  return { dir, bin };
}
