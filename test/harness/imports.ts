/**
 * The modules a source file loads when it is imported: its static imports and re-exports, followed
 * through src/, as Node runs the built output. Type-only imports (`import type`, `export type`) are
 * erased; an `import { type X }` is not (verbatimModuleSyntax keeps it as a side-effect import);
 * `await import(…)` is lazy and not followed, unless `{ lazy: true }` asks for everything the entry
 * can reach.
 */
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

export const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '../..');

export interface LoadedGraph {
  /** Source files, relative to the repository root (`src/config/load.ts`). */
  files: Set<string>;
  /** Packages by name (`ioredis`, `node:fs`). */
  packages: Set<string>;
}

const STATEMENT = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;
const LAZY = /\bimport\(\s*['"]([^'"]+)['"]\s*\)(?!\.)/g;

export function loadedBy(entry: string, options: { lazy?: boolean } = {}): LoadedGraph {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (abs: string): void => {
    const rel = relative(ROOT, abs);
    if (files.has(rel)) return;
    files.add(rel);
    const text = readFileSync(abs, 'utf8');
    const specs = [...text.matchAll(STATEMENT)].filter((m) => !m[2]).map((m) => m[3]!);
    if (options.lazy) specs.push(...[...text.matchAll(LAZY)].map((m) => m[1]!));
    for (const spec of specs) {
      if (spec.startsWith('.')) visit(resolve(dirname(abs), spec.replace(/\.js$/, '.ts')));
      else
        packages.add(
          spec.startsWith('node:')
            ? spec
            : spec
                .split('/')
                .slice(0, spec.startsWith('@') ? 2 : 1)
                .join('/'),
        );
    }
  };
  visit(resolve(ROOT, entry));
  return { files, packages };
}
