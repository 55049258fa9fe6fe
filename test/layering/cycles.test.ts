/**
 * No two modules of src/ import each other, directly or around a loop, type-only and lazy
 * (`import(…)`) imports included: a loop means two layers that cannot be read (or moved) one
 * without the other, however late one of them loads the other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../harness/imports.js';

const IMPORT =
  /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.[^'"]+)['"]|\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/gm;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const abs of sources(resolve(ROOT, 'src'))) {
    const text = readFileSync(abs, 'utf8');
    const deps = [...text.matchAll(IMPORT)].map((m) =>
      relative(ROOT, resolve(dirname(abs), (m[1] ?? m[2])!.replace(/\.js$/, '.ts'))),
    );
    graph.set(relative(ROOT, abs), deps);
  }
  return graph;
}

/** One loop per strongly connected component of more than one module (Tarjan). */
function loops(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the import graph of src/', () => {
  it('has no loop, type-only and lazy imports included', () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(50);
    // The walk sees lazy imports: each command loads its action with import().
    expect(graph.get('src/cli/commands/fetch.ts')).toContain('src/cli/actions/fetch.ts');
    expect(loops(graph)).toEqual([]);
  });

  it('finds a loop when there is one', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(loops(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});
