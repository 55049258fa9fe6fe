/**
 * The previous minor release, 0.2.0 (commit b48f884), built from this checkout's own history and
 * kept for every later run in `${XDG_CACHE_HOME:-~/.cache}/quota-guard-prev/<commit>-node<major>`, or taken from
 * $QG_PREVIOUS_RELEASE (a directory where it is built already).
 *
 * The build, once per Node line: `git archive <commit>` into a new directory; `npm ci
 * --ignore-scripts` there (the release's own lockfile; the packages come from the npm cache this
 * checkout's install filled); its better-sqlite3 replaced by the driver this checkout loads on this
 * Node (src/sqlite/driver.ts: 12, built for it, on Node 20; 13 on 22 and later); then the release's
 * own `npm run build`. About a minute.
 *
 * Why the driver is this checkout's: 0.2.0 locked better-sqlite3 12, which aborts Node 24 and later,
 * and its README told users of those lines to install 13 over it, as this does; on Node 20 it is the
 * same major, built for this Node, which is what building it there would produce (minutes). Why the
 * rest of this checkout's node_modules is not used: the new release may depend on other versions (a
 * new major of a library), and the previous release must run with the dependencies it shipped with.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { sqliteDriver } from '../../src/sqlite/driver.js';
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
  // The driver this checkout loads on this Node, whole, where the release looks for better-sqlite3.
  const driver = dirname(
    createRequire(join(ROOT, 'package.json')).resolve(`${sqliteDriver().name}/package.json`),
  );
  const target = join(into, 'node_modules/better-sqlite3');
  rmSync(target, { recursive: true, force: true });
  cpSync(driver, target, { recursive: true });
  run('npm', ['run', 'build', '--silent'], into);
  writeFileSync(join(into, '.built'), `${PREVIOUS_RELEASE.version} ${commit}\n`);
}

/** The previous release, built on first use (minutes at most) and cached. */
export function previousRelease(): PreviousRelease {
  const given = process.env['QG_PREVIOUS_RELEASE'];
  const cacheHome = process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache');
  // One build per Node line: the SQLite driver in it is the one that line runs.
  const line = `node${process.versions.node.split('.')[0]}`;
  const dir = given || join(cacheHome, 'quota-guard-prev', `${PREVIOUS_RELEASE.commit}-${line}`);
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
