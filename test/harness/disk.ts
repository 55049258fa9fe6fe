/**
 * Disks that fail for real: a small tmpfs that fills up, and a directory that cannot be written.
 * Root ignores file modes, so as root a read-only directory is a tmpfs remounted read-only; as any
 * other user it is a directory without write permission. A full disk without root is made with a
 * file-size limit (`ulimit -f`) on a child process instead (see `fileSizeLimit`).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'vitest';

const isRoot = process.getuid?.() === 0;

function tryMount(dir: string, sizeKiB: number): boolean {
  if (!isRoot) return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k,mode=0755`, 'tmpfs', dir], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
}

export interface TestDisk {
  dir: string;
  /** Make the whole directory read-only (what is in it stays readable). */
  readOnly(): void;
  /** Make it writable again. */
  writable(): void;
  cleanup(): void;
}

/** A tmpfs of `sizeKiB` (root only; undefined when it cannot be mounted). */
export function smallDisk(sizeKiB: number): TestDisk | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'qg-disk-'));
  if (!tryMount(dir, sizeKiB)) {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  return {
    dir,
    readOnly: () => execFileSync('mount', ['-o', 'remount,ro', dir], { stdio: 'ignore' }),
    writable: () => execFileSync('mount', ['-o', 'remount,rw', dir], { stdio: 'ignore' }),
    cleanup: () => {
      execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A directory that can be made read-only for this process, as root or not. */
export function readOnlyCapableDir(): TestDisk {
  const disk = smallDisk(4096);
  if (disk) return disk;
  const dir = mkdtempSync(join(tmpdir(), 'qg-ro-'));
  mkdirSync(dir, { recursive: true });
  return {
    dir,
    readOnly: () => chmodSync(dir, 0o555),
    writable: () => chmodSync(dir, 0o755),
    cleanup: () => {
      chmodSync(dir, 0o755);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A directory that is truly read-only for this process: a tmpfs remounted read-only as root, a
 * directory without write permission otherwise. Without root the files in it stay writable by
 * their owner, so the -shm and -wal cases need root: a string says why it cannot be made.
 */
export function readOnlyDir(): TestDisk | string {
  const disk = smallDisk(4096);
  if (disk) return disk;
  if (isRoot)
    return 'running as root but cannot mount a tmpfs (no CAP_SYS_ADMIN?): chmod does not restrict root';
  return 'not root: cannot mount a tmpfs to remount read-only';
}

/** A shell prefix that limits the size of any file the command writes to `kib` KiB. */
export function fileSizeLimit(kib: number): string[] {
  return ['sh', '-c', `ulimit -f ${kib} && exec "$@"`, 'limited'];
}

/**
 * The disk, or the test skipped with the reason printed when it cannot be made here; in CI
 * (`CI` set) it fails instead, so CI never skips it silently.
 */
export function diskOrSkip(ctx: TestContext, d: TestDisk | string): TestDisk {
  if (typeof d !== 'string') return d;
  const why = d;
  if (process.env['CI']) throw new Error(why);
  console.warn(`skipped: ${why}`);
  ctx.skip();
  throw new Error(why); // not reached: skip() throws
}
