/**
 * Where the data is: the same command from two working directories reads the same ledger; defaults
 * live in the data directory; `status` says which ledger and cache it reads; commands that only read
 * never create a store and say where they looked.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { dataDir } from '../../src/config/paths.js';
import { loadYouTubeConfig as loadConfig } from '../../src/youtube/config/part.js';
import { runChild } from '../e2e/helpers.js';
import { cli, expectOneLine } from './helpers.js';

const root = mkdtempSync(join(tmpdir(), 'qg-where-'));
const cwd = process.cwd();
let n = 0;
function fresh(name: string): string {
  const d = join(root, `${n++}-${name}`);
  mkdirSync(d, { recursive: true });
  return d;
}

beforeEach(() => {
  vi.stubEnv('LOG_LEVEL', 'silent');
  vi.stubEnv('QUOTA_GUARD_CONFIG', '');
  vi.stubEnv('REDIS_URL', '');
});
afterEach(() => {
  process.chdir(cwd);
  vi.unstubAllEnvs();
});

async function statusJson(...args: string[]): Promise<{ ledger: string; cache: string; used: number }> {
  const out = await cli('status', '--json', ...args);
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  const r = JSON.parse(out.stdout) as {
    ledger: string;
    cache: string;
    credentials: Array<{ buckets: Array<{ id: string; used: number }> }>;
  };
  return {
    ledger: r.ledger,
    cache: r.cache,
    used: r.credentials[0]!.buckets.find((b) => b.id === 'units')!.used,
  };
}

describe('where the data is', () => {
  it('relative paths in a config file are relative to the file, not to the working directory', async () => {
    const etc = fresh('etc');
    const cfg = join(etc, 'config.yaml');
    writeFileSync(cfg, 'store: sqlite:state/quota.db\ncache: { path: state/cache.db }\n');
    process.chdir(fresh('a'));
    expect((await cli('spend', 'default', '--cost', '7', '--config', cfg)).code).toBe(0);
    process.chdir(fresh('b'));
    const s = await statusJson('--config', cfg);
    expect(s).toEqual({ ledger: join(etc, 'state/quota.db'), cache: join(etc, 'state/cache.db'), used: 7 });
  });

  it('with no paths configured, both directories use the data directory', async () => {
    const data = fresh('data');
    vi.stubEnv('QUOTA_GUARD_DATA', data);
    process.chdir(fresh('c'));
    expect((await cli('spend', 'default', '--cost', '3')).code).toBe(0);
    process.chdir(fresh('d'));
    expect(await statusJson()).toEqual({
      ledger: join(data, 'quota.db'),
      cache: join(data, 'cache.db'),
      used: 3,
    });
    expect(existsSync(join(process.cwd(), 'data'))).toBe(false);
  });

  it('status prints the ledger and the cache it reads in the table too', async () => {
    const data = fresh('table');
    vi.stubEnv('QUOTA_GUARD_DATA', data);
    expect((await cli('spend', 'default', '--cost', '1')).code).toBe(0);
    const out = await cli('status');
    expect(out.stdout).toContain(`ledger ${join(data, 'quota.db')} · cache ${join(data, 'cache.db')}`);
  });

  it('status and search on a missing store: one line naming where they looked, exit 66, nothing created', async () => {
    const data = fresh('empty');
    vi.stubEnv('QUOTA_GUARD_DATA', data);
    const status = await cli('status');
    expect(status.code).toBe(66);
    expectOneLine(
      status.stderr,
      new RegExp(
        `no SQLite ledger at '${join(data, 'quota.db')}' \\(nothing was created: this command only reads\\) \\(QG_STORE_NOT_FOUND\\)$`,
      ),
    );
    const search = await cli('search', 'anything');
    expect(search.code).toBe(66);
    expectOneLine(
      search.stderr,
      new RegExp(`no cache at '${join(data, 'cache.db')}' .*\\(QG_STORE_NOT_FOUND\\)$`),
    );
    expect(existsSync(join(data, 'quota.db'))).toBe(false);
    expect(existsSync(join(data, 'cache.db'))).toBe(false);
  });

  it('unblock on a missing ledger: one line naming where it looked, exit 66, nothing created', async () => {
    const data = fresh('unblock');
    vi.stubEnv('QUOTA_GUARD_DATA', data);
    const out = await cli('unblock', 'default', 'units');
    expect(out.code).toBe(66);
    expect(out.stdout).toBe('');
    expectOneLine(
      out.stderr,
      new RegExp(
        `no SQLite ledger at '${join(data, 'quota.db')}' \\(nothing was created: this command changes an existing ledger\\) \\(QG_STORE_NOT_FOUND\\)$`,
      ),
    );
    expect(existsSync(join(data, 'quota.db'))).toBe(false);
    // Once the ledger exists, unblock works on it.
    expect((await cli('spend', 'default', '--cost', '1')).code).toBe(0);
    expect((await cli('unblock', 'default', 'units')).code).toBe(0);
  });

  it('a spend that creates a new ledger file says so, once', async () => {
    const data = fresh('new');
    const env = { QUOTA_GUARD_DATA: data, LOG_LEVEL: 'warn' };
    const first = await runChild(['spend', 'default', '--cost', '1'], env);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('created a new SQLite ledger');
    expect(first.stderr).toContain(join(data, 'quota.db'));
    const second = await runChild(['spend', 'default', '--cost', '1'], env);
    expect(second.code).toBe(0);
    expect(second.stderr).not.toContain('created a new SQLite ledger');
  });

  it('the data directory: QUOTA_GUARD_DATA, else STATE_DIRECTORY, else XDG_DATA_HOME, else ~/.local/share', () => {
    const env = {
      HOME: '/home/op',
      XDG_DATA_HOME: '/xdg',
      STATE_DIRECTORY: '/var/lib/quota-guard:/x',
      QUOTA_GUARD_DATA: '/srv/qg',
    };
    expect(dataDir(env)).toEqual({ path: '/srv/qg', from: 'QUOTA_GUARD_DATA' });
    expect(dataDir({ ...env, QUOTA_GUARD_DATA: '' })).toEqual({
      path: '/var/lib/quota-guard',
      from: 'STATE_DIRECTORY',
    });
    expect(dataDir({ HOME: '/home/op', XDG_DATA_HOME: '/xdg' })).toEqual({
      path: '/xdg/quota-guard',
      from: 'XDG_DATA_HOME',
    });
    expect(dataDir({ HOME: '/home/op' })).toEqual({
      path: '/home/op/.local/share/quota-guard',
      from: 'home',
    });
  });

  it('a relative sqlite: path in REDIS_URL is relative to the working directory (said in the URL)', () => {
    const here = fresh('env');
    process.chdir(here);
    const c = loadConfig({ env: { REDIS_URL: 'sqlite:q.db' } });
    expect(c.store.url).toBe(`sqlite:${join(here, 'q.db')}`);
  });
});
