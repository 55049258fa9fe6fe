/**
 * An SQLite store that cannot be opened stops every command that writes (69), whatever the call
 * site's store-down policy: it is the host's configuration, which does not heal by itself, so
 * failing open would let cheap calls through unrecorded for as long as it lasts (docs/operations.md,
 * "When the disk or the clock misbehaves"). A store that was opened and then fails (a disk filling up
 * under a running process) gets the call site's policy, as a Redis that stops answering does.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createGuard } from '../../src/guard/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { configFile, runChild } from '../e2e/helpers.js';
import { capture, config } from '../guard/helpers.js';
import { diskOrSkip, readOnlyDir, smallDisk } from '../harness/disk.js';

const dir = mkdtempSync(join(tmpdir(), 'qg-sqlite-down-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LIST = { credential: 'default', method: 'videos.list', tag: 'trending:US:videos.list' }; // 1 unit
const UPDATE = { credential: 'default', method: 'videos.update', tag: 'manual:videos.update' }; // 50 units

/** `spend --cost 1` with every call site failing open. */
function spendOpen(store: string) {
  const file = configFile({
    store,
    storeDown: { default: 'open' },
    credentials: [{ id: 'default', apiKeyEnv: 'QG_DOWN_KEY' }],
  });
  return runChild(['spend', 'default', '--cost', '1', '--config', file], {
    QG_DOWN_KEY: 'k-down',
    LOG_LEVEL: 'silent',
  });
}

describe('an SQLite ledger that cannot be opened', () => {
  it('a read-only directory: even a fail-open spend stops with one line and 69, nothing allowed', async (ctx) => {
    const d = diskOrSkip(ctx, readOnlyDir());
    try {
      d.readOnly();
      const file = join(d.dir, 'quota.db');
      await expect(openLedger(`sqlite:${file}`)).rejects.toMatchObject({
        code: 'QG_STORE_UNAVAILABLE',
        message: expect.stringMatching(/^SQLite ledger '.*quota\.db': opening failed: /),
      });
      const r = await spendOpen(`sqlite:${file}`);
      expect(r.code).toBe(69);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(
        /^quota-guard: SQLite ledger '.*quota\.db': opening failed: .*\(SQLITE_\w+\) \(QG_STORE_UNAVAILABLE\)\n$/,
      );
    } finally {
      d.cleanup();
    }
  });

  it('a path through a regular file (root cannot write there either): the same', async () => {
    const blocker = join(dir, 'not-a-directory');
    writeFileSync(blocker, 'x');
    const r = await spendOpen(`sqlite:${join(blocker, 'quota.db')}`);
    expect(r.code).toBe(69);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /^quota-guard: SQLite ledger '.*not-a-directory\/quota\.db': opening failed \(ENOTDIR\) \(QG_STORE_UNAVAILABLE\)\n$/,
    );
  });
});

describe('an SQLite ledger whose disk fills while it is open', () => {
  it("the call site's policy applies: a cheap spend goes through unrecorded, a dear one stops", async (ctx) => {
    const d = diskOrSkip(ctx, smallDisk(384) ?? 'a full disk needs root and a mountable tmpfs');
    const ledger = await openLedger(`sqlite:${join(d.dir, 'quota.db')}`);
    try {
      const log = capture();
      const guard = createGuard({ config: config({}), ledger, logger: log });
      expect(await guard.spend(LIST)).toMatchObject({ allowed: true, reason: 'allowed' });
      const filler = join(d.dir, 'filler');
      try {
        for (let i = 0; i < 1000; i++) writeFileSync(filler, Buffer.alloc(4096), { flag: 'a' });
      } catch {
        // ENOSPC: full
      }
      // Each spend adds an entry; within a few the next page has nowhere to go.
      let outcome = await guard.spend(LIST);
      for (let i = 0; i < 200 && outcome.reason === 'allowed'; i++) outcome = await guard.spend(LIST);
      expect(outcome).toMatchObject({ allowed: true, reason: 'fail-open' });
      expect(await guard.spend(UPDATE)).toMatchObject({ allowed: false, reason: 'store-down' });
      expect(log.lines.some((l) => /SQLITE_(FULL|IOERR)/.test(JSON.stringify(l.obj)))).toBe(true);
      rmSync(filler);
    } finally {
      await ledger.close().catch(() => undefined);
      d.cleanup();
    }
  });
});
