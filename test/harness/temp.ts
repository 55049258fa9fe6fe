/**
 * Temporary directories for tests, each removed when it is no longer needed: `tempDir` by the
 * caller (`remove()`), `fileTempDir` after the tests of the file that imported it (a helper module
 * is loaded once per test file, so each file gets its own directory and removes it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

export interface TempDir {
  readonly dir: string;
  /** A fresh path in the directory (`3-name`): two calls never return the same one. */
  path(name: string): string;
  /** Remove the directory and everything in it (again: nothing). */
  remove(): void;
}

/** A new directory under the system's temp directory, named `<prefix>XXXXXX`. */
export function tempDir(prefix: string): TempDir {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let seq = 0;
  return {
    dir,
    path: (name) => join(dir, `${seq++}-${name}`),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A directory for the current test file, removed after its last test. */
export function fileTempDir(prefix: string): TempDir {
  const t = tempDir(prefix);
  afterAll(() => t.remove());
  return t;
}
