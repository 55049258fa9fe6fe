/**
 * "Allowed means recorded" on SQLite (docs/sqlite.md, "Durability"): the file system under a process
 * that spends without pause is shut down, as the kernel does when it turns a file system read-only
 * on an error, then checked and mounted again. Every spend answered allowed is in the ledger, and
 * from the shutdown on every spend is store-down (QG_STORE_UNAVAILABLE), never allowed.
 *
 * A real ext4 on a loop device (root only; in CI it must run). The shutdown comes between two of the
 * spender's system calls (the process is stopped for that instant): the ext4 shutdown can drop a
 * write whose sync is returning at that very moment, which no program can see (measured in
 * docs/sqlite.md); every spend before and after that instant is checked.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { diskOrSkip, shutdownDisk } from '../harness/disk.js';

const CHILD = fileURLToPath(new URL('./children/durable-spender.ts', import.meta.url));

async function until(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

it('a file system shut down under load: every allowed spend is in the ledger, and none is allowed after', async (ctx) => {
  const disk = diskOrSkip(ctx, shutdownDisk());
  try {
    const file = join(disk.dir, 'quota.db');
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, file], {
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 60_000,
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const allowedSoFar = () => out.split('\n').filter((l) => l.startsWith('allowed ')).length;
    await until('100 allowed spends', () => allowedSoFar() >= 100);
    child.kill('SIGSTOP');
    await until('the spender to stop', () =>
      /^State:\s+T/m.test(readFileSync(`/proc/${child.pid}/status`, 'utf8')),
    );
    disk.shutdown();
    child.kill('SIGCONT');
    expect(await exited).toBe(0);
    disk.remount();

    const lines = out.trimEnd().split('\n');
    const firstFailure = lines.findIndex((l) => l.startsWith('failed '));
    const allowed = lines.slice(0, firstFailure).map((l) => l.slice('allowed '.length));
    expect(allowed.length).toBeGreaterThanOrEqual(100);
    // From the shutdown on: store-down, every time.
    expect(lines.slice(firstFailure)).toEqual(Array(20).fill('failed QG_STORE_UNAVAILABLE'));

    const db = new Database(file, { readonly: true });
    try {
      const inLedger = new Set(db.prepare('SELECT id FROM qg_entry').pluck().all() as string[]);
      expect(allowed.filter((id) => !inLedger.has(id))).toEqual([]);
      expect(inLedger.size).toBe(allowed.length);
    } finally {
      db.close();
    }
  } finally {
    disk.cleanup();
  }
}, 90_000);
