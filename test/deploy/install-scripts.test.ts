/**
 * npm 11 runs a dependency's install scripts only when package.json's `allowScripts` approves them
 * (it warns about the others now; a later npm skips them by default). better-sqlite3 needs its
 * install script for its native build: a fresh `npm ci` without the approval has no SQLite.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../harness/imports.js';

interface LockEntry {
  hasInstallScript?: boolean;
  /** The package's own name, where it is installed under another (an npm alias). */
  name?: string;
  version?: string;
}

describe('install scripts', () => {
  it('every locked package with an install script is reviewed in allowScripts', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      allowScripts?: Record<string, boolean>;
    };
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, LockEntry>;
    };
    const withScripts = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
      // npm approves a package by its own name, aliases included (better-sqlite3-12 is better-sqlite3).
      .map(
        ([path, entry]) =>
          entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length),
      );
    expect(withScripts).toContain('better-sqlite3');
    const reviewed = Object.keys(pkg.allowScripts ?? {}).map((k) => k.replace(/(.)@.*$/, '$1'));
    expect(withScripts.filter((name) => !reviewed.includes(name))).toEqual([]);
    expect(pkg.allowScripts?.['better-sqlite3']).toBe(true);
  });
});
