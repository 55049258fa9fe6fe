/**
 * Disks that fail for real: a small tmpfs that fills up, and a directory that cannot be written.
 * Root ignores file modes, so as root a read-only directory is a tmpfs remounted read-only; as any
 * other user it is a directory without write permission. A full disk without root is made with a
 * file-size limit (`ulimit -f`) on a child process instead (see `fileSizeLimit`).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
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
export function diskOrSkip<D extends object = TestDisk>(ctx: TestContext, d: D | string): D {
  if (typeof d !== 'string') return d;
  const why = d;
  if (process.env['CI']) throw new Error(why);
  console.warn(`skipped: ${why}`);
  ctx.skip();
  throw new Error(why); // not reached: skip() throws
}

/** A file system that can be shut down while it is in use (`shutdown`), then mounted again. */
export interface ShutdownDisk {
  dir: string;
  /**
   * Shut the file system down at once, as the kernel does when it turns a file system read-only
   * on an error: every later write and sync fails, and what was not on the disk yet is lost
   * (EXT4_IOC_SHUTDOWN with EXT4_GOING_FLAGS_NOLOGFLUSH).
   */
  shutdown(): void;
  /** Unmount it, check it (e2fsck, which replays its journal) and mount it again. */
  remount(): void;
  cleanup(): void;
}

/**
 * An ext4 file system on a loop device (its image in the temporary directory), for root; a string
 * saying why when it cannot be made here.
 */
export function shutdownDisk(): ShutdownDisk | string {
  if (!isRoot) return 'not root: cannot attach a loop device and mount a file system';
  const base = mkdtempSync(join(tmpdir(), 'qg-loop-'));
  const image = join(base, 'image');
  const dir = join(base, 'mnt');
  mkdirSync(dir);
  const fd = openSync(image, 'w');
  ftruncateSync(fd, 64 * 2 ** 20);
  closeSync(fd);
  let loop: string;
  try {
    loop = execFileSync('losetup', ['--find', '--show', image], { encoding: 'utf8' }).trim();
  } catch {
    rmSync(base, { recursive: true, force: true });
    return 'cannot attach a loop device (no /dev/loop*, or no CAP_SYS_ADMIN)';
  }
  const sh = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { stdio: 'ignore' });
  try {
    sh('mkfs.ext4', '-q', loop);
    sh('mount', loop, dir);
  } catch (e) {
    sh('losetup', '-d', loop);
    rmSync(base, { recursive: true, force: true });
    return `cannot make an ext4 file system on ${loop}: ${(e as Error).message}`;
  }
  return {
    dir,
    shutdown: () =>
      // 0x8004587d is EXT4_IOC_SHUTDOWN (_IOR('X', 125, __u32)); 2 is EXT4_GOING_FLAGS_NOLOGFLUSH.
      sh(
        'python3',
        '-c',
        'import fcntl, os, struct, sys; fcntl.ioctl(os.open(sys.argv[1], os.O_RDONLY), 0x8004587D, struct.pack("I", 2))',
        dir,
      ),
    remount: () => {
      sh('umount', dir);
      try {
        sh('e2fsck', '-fy', loop);
      } catch {
        // exit 1: errors corrected (the journal replayed), which is what a shutdown leaves
      }
      sh('mount', loop, dir);
    },
    cleanup: () => {
      try {
        sh('umount', '-l', dir);
      } catch {
        // not mounted
      }
      sh('losetup', '-d', loop);
      rmSync(base, { recursive: true, force: true });
    },
  };
}
