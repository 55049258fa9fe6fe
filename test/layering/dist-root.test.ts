/**
 * What importing the built package root loads, seen by Node itself rather than by reading the
 * sources: tsc compiles src/ as `npm run build` does into a scratch package, a child node process
 * imports its `dist/index.js` with a module hook that reports every module it loads, and lists the
 * native addons in its address space. The core entry must load no YouTube client, cache, job,
 * scheduler, CLI or simulator module and no native SQLite addon, until an SQLite store is opened.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../harness/imports.js';

let pkg: string;

beforeAll(() => {
  pkg = mkdtempSync(join(tmpdir(), 'qg-dist-root-'));
  copyFileSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));
  symlinkSync(join(ROOT, 'lua'), join(pkg, 'lua'));
  const tsc = spawnSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/typescript/bin/tsc'),
      ...['-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(pkg, 'dist')],
      ...['--declaration', 'false', '--sourceMap', 'false'],
    ],
    { encoding: 'utf8' },
  );
  expect(tsc.stdout + tsc.stderr).toBe('');
}, 180_000);

afterAll(() => {
  if (pkg) rmSync(pkg, { recursive: true, force: true });
});

/** Reports each loaded module's URL to the main thread (runs in Node's hooks thread). */
const HOOKS = `
let port;
export function initialize(data) { port = data.port; }
export async function load(url, context, next) { port.postMessage(url); return next(url, context); }
`;

/**
 * Imports `entry` (then runs `then`, an expression over its namespace `m`) and prints what loaded.
 * Node 22.15 and later hook loading in the thread itself (`registerHooks`; `register` is deprecated
 * from Node 26 and says so on stderr); Node 20 through its hooks thread.
 */
function child(entry: string, then = 'undefined'): { modules: string[]; addons: string[] } {
  const script = `
import * as module from 'node:module';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
const modules = [];
let drain = () => {};
if (module.registerHooks) {
  module.registerHooks({ load(url, context, next) { modules.push(url); return next(url, context); } });
} else {
  const { port1, port2 } = new MessageChannel();
  module.register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOKS)}), {
    data: { port: port2 },
    transferList: [port2],
  });
  drain = () => { for (let msg; (msg = receiveMessageOnPort(port1)); ) modules.push(msg.message); };
}
const m = await import(${JSON.stringify(join(pkg, entry))});
await (${then});
drain();
const addons = process.report.getReport().sharedObjects.filter((f) => f.endsWith('.node'));
process.stdout.write(JSON.stringify({ modules, addons }));
`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: pkg,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', HOME: pkg },
    timeout: 60_000,
  });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const out = JSON.parse(r.stdout) as { modules: string[]; addons: string[] };
  const dist = `file://${join(pkg, 'dist')}/`;
  return {
    modules: out.modules.map((u) =>
      u.startsWith(dist) ? `dist/${u.slice(dist.length)}` : u.replace(/^.*\/node_modules\//, 'node_modules/'),
    ),
    addons: out.addons,
  };
}

const APPLICATION = /^dist\/(youtube|metrics|scheduler|drill|cli)\//;

describe('importing the built package root', () => {
  it('loads the core only: no YouTube client, cache, job, scheduler, CLI or simulator module', () => {
    const { modules } = child('dist/index.js');
    expect(modules).toContain('dist/ledger/open.js');
    expect(modules.filter((m) => APPLICATION.test(m))).toEqual([]);
    expect(
      modules.filter((m) => /^node_modules\/(undici|prom-client|ioredis|better-sqlite3(-\d+)?)\//.test(m)),
    ).toEqual([]);
  });

  it('loads the native SQLite addon only once an SQLite store is opened', () => {
    // 12 builds better_sqlite3.node; 13 ships prebuilds/<platform>.node in better-sqlite3-13/.
    expect(child('dist/index.js').addons.filter((f) => /better[-_]sqlite3/.test(f))).toEqual([]);
    const opened = child('dist/index.js', `m.openLedger('sqlite::memory:').then((l) => l.close())`);
    expect(opened.addons.filter((f) => /better[-_]sqlite3/.test(f))).toHaveLength(1);
  });

  it('loads the YouTube application from quota-guard/youtube', () => {
    const { modules } = child('dist/youtube/index.js');
    expect(modules).toContain('dist/youtube/upstream/client.js');
    expect(modules).toContain('dist/youtube/cache/cache.js');
  });
});
