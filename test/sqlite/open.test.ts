/**
 * The shared opener on real files: a file that is not the store's is refused and left byte for byte
 * as it was (and nothing is created beside it); a full disk and a read-only directory are
 * `QG_STORE_UNAVAILABLE` from every method of both stores, `close()` included.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  type TestContext,
  vi,
} from 'vitest';
import { openLedger } from '../../src/ledger/index.js';
import { openCache } from '../../src/youtube/cache/index.js';
import { video } from '../cache/helpers.js';
import { cli, configFile, expectOneLine } from '../cli/helpers.js';
import {
  diskOrSkip,
  fileSizeLimit,
  readOnlyCapableDir,
  readOnlyDir,
  smallDisk,
  type TestDisk,
} from '../harness/disk.js';

const dir = mkdtempSync(join(tmpdir(), 'qg-sqlite-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  vi.stubEnv('LOG_LEVEL', 'silent');
  vi.stubEnv('QUOTA_GUARD_CONFIG', '');
});
afterEach(() => {
  vi.unstubAllEnvs();
});

let n = 0;
function path(name: string): string {
  return join(dir, `${n++}-${name}`);
}

/** Another application's database: user_version 0, tables of its own, some rows. */
function appDb(): string {
  const p = path('app.db');
  const db = new Database(p);
  db.exec(`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);
           CREATE TABLE orders (id INTEGER PRIMARY KEY, user INTEGER, total REAL);
           INSERT INTO users (name) VALUES ('ada'), ('grace');`);
  db.close();
  return p;
}

function textFile(): string {
  const p = path('notes.db');
  writeFileSync(p, 'store: redis://cache.internal:6379\nregions: [US]\n');
  return p;
}

function binaryFile(): string {
  const p = path('blob.db');
  writeFileSync(p, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0xff, 0xfe]));
  return p;
}

function aCache(): string {
  const p = path('cache.db');
  openCache(p).close();
  return p;
}

async function aLedger(): Promise<string> {
  const p = path('ledger.db');
  const l = await openLedger(`sqlite:${p}`);
  await l.spend({ budgets: [{ key: 'k', limit: 10, windowMs: 60_000 }], cost: 1 });
  await l.close();
  return p;
}

/** Opens `file` as `store` expecting a refusal; returns the error after checking nothing changed. */
async function refused(store: 'ledger' | 'cache', file: string): Promise<Error & { code?: string }> {
  const before = readFileSync(file);
  const siblings = readdirSync(dir).sort();
  const err = (await (store === 'ledger'
    ? openLedger(`sqlite:${file}`).then(async (l) => l.close())
    : Promise.resolve().then(() => openCache(file).close())
  ).then(
    () => new Error('opened'),
    (e: unknown) => e as Error,
  )) as Error & { code?: string };
  expect(readFileSync(file).equals(before), 'the file is byte for byte as it was').toBe(true);
  expect(readdirSync(dir).sort(), 'nothing created beside it').toEqual(siblings);
  return err;
}

describe('foreign files are refused, never converted', () => {
  it.each(['ledger', 'cache'] as const)("the %s refuses another application's database", async (store) => {
    const file = appDb();
    const e = await refused(store, file);
    expect(e.code).toBe('QG_STORE_FOREIGN');
    expect(e.message).toContain(`'${file}' holds another database (user_version 0, 2 tables: orders, users)`);
  });

  it.each(['ledger', 'cache'] as const)('the %s refuses a text file and a binary file', async (store) => {
    const text = await refused(store, textFile());
    expect(text.code).toBe('QG_STORE_FOREIGN');
    expect(text.message).toMatch(
      /holds a file that is not an SQLite database \(\d+ bytes of text starting "store: redis:/,
    );
    const bin = await refused(store, binaryFile());
    expect(bin.code).toBe('QG_STORE_FOREIGN');
    expect(bin.message).toContain('holds a file that is not an SQLite database (14 bytes of binary data)');
  });

  it('each store refuses the other', async () => {
    const l = await refused('ledger', aCache());
    expect(l.message).toMatch(/^SQLite ledger '.*' holds a quota-guard cache, not a quota-guard ledger/);
    const c = await refused('cache', await aLedger());
    expect(c.message).toMatch(/^cache '.*' holds a quota-guard ledger, not a quota-guard cache/);
  });

  it('a directory is refused; an empty file becomes the store', async () => {
    const e = (() => {
      try {
        openCache(dir);
      } catch (x) {
        return x;
      }
    })();
    expect(e).toMatchObject({
      code: 'QG_STORE_FOREIGN',
      message: expect.stringContaining('holds a directory'),
    });
    const empty = path('empty.db');
    writeFileSync(empty, '');
    openCache(empty).close();
    const l = await openLedger(`sqlite:${empty}`).catch((x: unknown) => x);
    expect(l).toMatchObject({ code: 'QG_STORE_FOREIGN' }); // it is a cache now
  });

  it('`search` on another database: one line, exit 78, not "the cache is empty"', async () => {
    const file = appDb();
    const before = readFileSync(file);
    const cfg = configFile(`cache: { path: ${file} }\n`);
    const out = await cli('search', 'anything', '--config', cfg);
    expect(out.code).toBe(78);
    expectOneLine(
      out.stderr,
      /^quota-guard: cache '.*app\.db' holds another database .* \(QG_STORE_FOREIGN\)$/,
    );
    expect(out.stdout).toBe('');
    expect(readFileSync(file).equals(before)).toBe(true);
  });
});

describe('a full disk', () => {
  // Mounted when the tests run, not when the file is collected: a run that filters these tests out
  // (or dies before its hooks) leaves no tmpfs behind.
  let disk: TestDisk | undefined;
  beforeAll(() => {
    disk = smallDisk(384);
  });
  afterAll(() => disk?.cleanup());
  const fullDisk = (ctx: TestContext): TestDisk =>
    diskOrSkip(ctx, disk ?? 'a full disk needs root and a mountable tmpfs');

  it('every ledger and cache method fails with QG_STORE_UNAVAILABLE, close() included', async (ctx) => {
    const d = fullDisk(ctx);
    const ledger = await openLedger(`sqlite:${join(d.dir, 'quota.db')}`);
    const cache = openCache(join(d.dir, 'cache.db'));
    const filler = join(d.dir, 'filler');
    // Fill what is left: the next page either store writes has nowhere to go.
    let size = 0;
    try {
      for (;;) {
        writeFileSync(filler, Buffer.alloc(4096), { flag: 'a' });
        size += 4096;
      }
    } catch {
      // ENOSPC: full
    }
    expect(size).toBeGreaterThan(0);
    let spendErr: unknown;
    for (let i = 0; i < 200 && spendErr === undefined; i++) {
      await ledger
        .spend({
          budgets: [{ key: 'k', limit: 1_000_000, windowMs: 3_600_000 }],
          cost: 1,
          tag: 'x'.repeat(100),
        })
        .catch((e: unknown) => {
          spendErr = e;
        });
    }
    expect(spendErr).toMatchObject({
      code: 'QG_STORE_UNAVAILABLE',
      details: { sqliteCode: expect.stringMatching(/^SQLITE_(FULL|IOERR)/) },
    });
    let cacheErr: unknown;
    for (let i = 0; i < 50 && cacheErr === undefined; i++) {
      try {
        cache.upsertVideos([video(`v${i}`, { description: 'long text '.repeat(2000) })]);
      } catch (e) {
        cacheErr = e;
      }
    }
    expect(cacheErr).toMatchObject({ code: 'QG_STORE_UNAVAILABLE' });
    // Closing writes too (the cache catches its index up): typed, or nothing.
    for (const close of [() => ledger.close(), async () => cache.close()]) {
      const e = await close().then(
        () => undefined,
        (x: unknown) => x,
      );
      if (e !== undefined) expect(e).toMatchObject({ code: 'QG_STORE_UNAVAILABLE' });
    }
    rmSync(filler);
  });

  it('`spend` on a full disk once the file is open: the store-down policy (cheap allowed unrecorded, dear one line and 69)', async (ctx) => {
    const d = fullDisk(ctx);
    const file = join(d.dir, 'cli.db');
    const cfg = configFile(`store: sqlite:${file}\n`);
    const first = await cli('spend', 'default', '--cost', '1', '--config', cfg);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const filler = join(d.dir, 'filler2');
    try {
      for (;;) writeFileSync(filler, Buffer.alloc(4096), { flag: 'a' });
    } catch {
      // full
    }
    // The file opens (nothing to write to open it); the spend's write fails: the call site's policy.
    const cheap = await cli('spend', 'default', '--cost', '1', '--config', cfg);
    expect(cheap.code).toBe(0);
    expect(cheap.stdout).toMatch(/^allowed: 1 unit of default\/units \(scheduled\) without recording it/);
    const out = await cli('spend', 'default', '--cost', '50', '--config', cfg);
    expect(out.code).toBe(69);
    expect(out.stdout.trim().split('\n')).toEqual([
      'denied: 50 units of default/units (scheduled): the ledger store is unavailable and this call site fails closed',
    ]);
    rmSync(filler);
  });

  it('a file-size limit (any user): `spend` prints one line and exits 69', async () => {
    const file = path('limited.db');
    const cfg = configFile(`store: sqlite:${file}\n`);
    expect((await cli('spend', 'default', '--cost', '1', '--config', cfg)).code).toBe(0);
    const bin = join(import.meta.dirname, '../../src/cli/bin.ts');
    const [cmd, ...pre] = fileSizeLimit(1);
    const out = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        cmd!,
        [
          ...pre,
          process.execPath,
          '--import',
          'tsx',
          bin,
          'spend',
          'default',
          '--cost',
          '1',
          '--config',
          cfg,
        ],
        { env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'silent' } },
        (err, _stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stderr }),
      );
    });
    expect(out.code).toBe(69);
    expectOneLine(out.stderr, /SQLite ledger '.*limited\.db': .* \(QG_STORE_UNAVAILABLE\)$/);
  });
});

describe('a read-only data directory', () => {
  it('`spend` and `unblock` print one line and exit 69; nothing raw escapes', async () => {
    const d = readOnlyCapableDir();
    try {
      const ledgerFile = join(d.dir, 'quota.db');
      const cfg = configFile(`store: sqlite:${ledgerFile}\n`);
      expect((await cli('spend', 'default', '--cost', '1', '--config', cfg)).code).toBe(0);
      d.readOnly();
      const spend = await cli('spend', 'default', '--cost', '1', '--config', cfg);
      expect(spend.code).toBe(69);
      expectOneLine(spend.stderr, /SQLite ledger '.*quota\.db': .*\(SQLITE_\w+\) \(QG_STORE_UNAVAILABLE\)$/);
      // unblock writes too: the same line and exit code, not a read-only open that fails later
      // (`unblock failed: … read-only (SQLITE_READONLY)`).
      const unblock = await cli('unblock', 'default', 'units', '--config', cfg);
      expect(unblock.code).toBe(69);
      expect(unblock.stdout).toBe('');
      expect(unblock.stderr).toBe(spend.stderr);
    } finally {
      d.cleanup();
    }
  });

  /**
   * What a writer leaves: `close` folds the -wal into the file and removes the -wal and -shm; `kill`
   * (SIGKILL) leaves both, and what was written is only in the -wal. Either way the commands that
   * only read see every write, on a directory they cannot change.
   */
  it.for([
    'close',
    'kill',
  ] as const)('after a writer that did %s: status, history, search and a dry run read it all, exit 0', async (how, ctx) => {
    const d = diskOrSkip(ctx, readOnlyDir());
    try {
      const ledgerFile = join(d.dir, 'quota.db');
      const cacheFile = join(d.dir, 'cache.db');
      const cfg = configFile(
        `store: sqlite:${ledgerFile}\ncache: { path: ${cacheFile} }\n` +
          `upstream: { baseUrl: "http://127.0.0.1:1/youtube/v3" }\n` +
          'credentials: [{ id: default, apiKeyEnv: QG_READ_ONLY_KEY }]\nregions: [US]\n',
      );
      const script = join(import.meta.dirname, 'fixtures/write-then-stop.ts');
      await new Promise<void>((resolve) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', script, cfg, cacheFile, how],
          { env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'silent' } },
          () => resolve(),
        );
      });
      const files = readdirSync(d.dir).sort();
      const wal = ['cache.db-shm', 'cache.db-wal', 'quota.db-shm', 'quota.db-wal'];
      if (how === 'close') expect(files).toEqual(['cache.db', 'quota.db']);
      else expect(files).toEqual(['cache.db', ...wal.slice(0, 2), 'quota.db', ...wal.slice(2)].sort());
      d.readOnly();

      const status = await cli('status', '--json', '--config', cfg);
      expect(status.stderr).toBe('');
      expect(status.code).toBe(0);
      const s = JSON.parse(status.stdout) as {
        credentials: Array<{ buckets: Array<{ id: string; used: number }> }>;
      };
      expect(s.credentials[0]!.buckets.find((b) => b.id === 'units')!.used).toBe(5);

      const history = await cli('history', '--json', '--config', cfg);
      expect(history.stderr).toBe('');
      expect(history.code).toBe(0);
      expect(JSON.parse(history.stdout)).toMatchObject({ runs: [{ job: 'trending:US', units: 5 }] });

      const search = await cli('search', 'lighthouse', '--json', '--config', cfg);
      expect(search.stderr).toBe('');
      expect(search.code).toBe(0);
      expect(JSON.parse(search.stdout)).toMatchObject({ hits: [{ id: 'ro1' }] });

      vi.stubEnv('QG_READ_ONLY_KEY', 'a-key-never-sent');
      const dry = await cli('fetch', '--dry-run', '--config', cfg);
      expect(dry.stderr).toBe('');
      expect([0, 75]).toContain(dry.code);

      expect(readdirSync(d.dir).sort(), 'nothing created or removed').toEqual(files);
      // Writing still cannot: the store-down policy decides (here the manual tier fails open).
      const spend = await cli('spend', 'default', '--cost', '1', '--config', cfg);
      if (spend.code === 0) expect(spend.stdout).toContain('without recording it');
      else {
        expect(spend.code).toBe(69);
        expectOneLine(spend.stderr, /\(QG_STORE_UNAVAILABLE\)$/);
      }
    } finally {
      d.cleanup();
    }
  });

  it('a cache indexed with other word rules: `search` says it must be indexed again where it can be written, exit 69', async (ctx) => {
    const d = diskOrSkip(ctx, readOnlyDir());
    try {
      const cacheFile = join(d.dir, 'cache.db');
      const cfg = configFile(`cache: { path: ${cacheFile} }\n`);
      const cache = openCache(cacheFile);
      cache.upsertVideos([video('vid00000001', { title: '公式 ミュージックビデオ' })]);
      cache.flush();
      cache.close();
      // The same search finds it while the rules match.
      d.readOnly();
      const found = await cli('search', '公式', '--json', '--config', cfg);
      expect(found.code).toBe(0);
      expect(found.stdout).toContain('vid00000001');
      d.writable();
      const db = new Database(cacheFile);
      db.prepare(`UPDATE meta SET value = 'rules-of-another-node' WHERE key = 'tokenizer'`).run();
      db.close();
      d.readOnly();
      const out = await cli('search', '公式', '--config', cfg);
      expect(out.code).toBe(69);
      expectOneLine(
        out.stderr,
        /made with other word rules \(rules-of-another-node, .*\(QG_STORE_UNAVAILABLE\)$/,
      );
    } finally {
      d.cleanup();
    }
  });

  it('a -wal without its -shm (removed by hand): one line naming what is missing, exit 69', async (ctx) => {
    const d = diskOrSkip(ctx, readOnlyDir());
    try {
      const ledgerFile = join(d.dir, 'quota.db');
      const cfg = configFile(`store: sqlite:${ledgerFile}\n`);
      expect((await cli('spend', 'default', '--cost', '1', '--config', cfg)).code).toBe(0);
      writeFileSync(`${ledgerFile}-wal`, '');
      d.readOnly();
      const out = await cli('status', '--config', cfg);
      expect(out.code).toBe(69);
      expectOneLine(out.stderr, /its -wal file has no -shm beside it .*\(QG_STORE_UNAVAILABLE\)$/);
    } finally {
      d.cleanup();
    }
  });
});
