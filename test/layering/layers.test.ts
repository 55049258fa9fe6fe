/**
 * The layers table of docs/architecture.md is the map a newcomer reads; this keeps it true. Every
 * file in src/ has a row (its own, or its folder's), and no import runs upward: static, type-only
 * and lazy (`await import(…)`) imports alike.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../harness/imports.js';

const IMPORT =
  /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/gm;

/** `src/x.ts` or `src/x/` → its layer, from the table's rows (`| 2 | \`src/sqlite/\` | … |`). */
function layerTable(): Map<string, number> {
  const doc = readFileSync(`${ROOT}/docs/architecture.md`, 'utf8');
  const table = new Map<string, number>();
  for (const row of doc.matchAll(/^\| (\d+) \| ([^|]+) \|/gm)) {
    for (const path of row[2]!.matchAll(/`(src\/[^`]+)`/g)) table.set(path[1]!, Number(row[1]));
  }
  return table;
}

function layerOf(table: Map<string, number>, file: string): number | undefined {
  if (table.has(file)) return table.get(file);
  const folder = `${file.split('/').slice(0, 2).join('/')}/`;
  return table.get(folder);
}

const sources = readdirSync(`${ROOT}/src`, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => `src/${f}`);

describe('the layers of docs/architecture.md', () => {
  const table = layerTable();

  it('place every file in src/', () => {
    expect(table.size).toBeGreaterThan(10);
    expect(sources.filter((f) => layerOf(table, f) === undefined)).toEqual([]);
  });

  it('are never imported upward', () => {
    const upward: string[] = [];
    for (const file of sources) {
      const from = layerOf(table, file)!;
      const text = readFileSync(`${ROOT}/${file}`, 'utf8');
      for (const m of text.matchAll(IMPORT)) {
        const target = relative(
          ROOT,
          resolve(dirname(`${ROOT}/${file}`), (m[1] ?? m[2])!.replace(/\.js$/, '.ts')),
        );
        const to = layerOf(table, target);
        if (to === undefined || to > from) upward.push(`${file} (${from}) → ${target} (${to})`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('keep the simulator on layers 0 and 1: it is a stand-in for the upstream, not a client of ours', () => {
    const above = [];
    for (const file of sources.filter((f) => f.startsWith('src/simulator/'))) {
      for (const m of readFileSync(`${ROOT}/${file}`, 'utf8').matchAll(IMPORT)) {
        const target = relative(
          ROOT,
          resolve(dirname(`${ROOT}/${file}`), (m[1] ?? m[2])!.replace(/\.js$/, '.ts')),
        );
        if (!target.startsWith('src/simulator/') && (layerOf(table, target) ?? 99) > 1)
          above.push(`${file} → ${target}`);
      }
    }
    expect(above).toEqual([]);
  });
});
