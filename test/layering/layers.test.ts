/**
 * The layers tables of docs/architecture.md are the map a newcomer reads; this keeps them true.
 * Every file in src/ has a row (its own, or its nearest folder's) in the core's table, the
 * application's or the tools', no import runs upward, the core imports nothing of the application
 * or the tools, the application nothing of the tools, the application lives under src/youtube/,
 * and no two folders on one layer import each other: static, type-only and lazy (`await import(…)`)
 * imports alike.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../harness/imports.js';

const IMPORT =
  /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/gm;

type Group = 'core' | 'app' | 'tools';

/** The application's folder: every application row, and nothing else, is under it. */
const APPLICATION = 'src/youtube/';

/** What each group may import besides itself. */
const MAY_IMPORT: Record<Group, Group[]> = { core: [], app: ['core'], tools: ['core', 'app'] };

interface Row {
  layer: number;
  group: Group;
  /** The row's path as the table writes it: `src/sqlite/` or `src/errors.ts`. */
  path: string;
}

/** `src/x.ts` or `src/x/` → its row, from the tables' rows (`| 2 | core | \`src/sqlite/\` | … |`). */
function layerRows(): Map<string, Row> {
  const doc = readFileSync(`${ROOT}/docs/architecture.md`, 'utf8');
  const table = new Map<string, Row>();
  for (const row of doc.matchAll(/^\| (\d+) \| (core|app|tools) \| ([^|]+) \|/gm)) {
    for (const path of row[3]!.matchAll(/`(src\/[^`]+)`/g)) {
      table.set(path[1]!, { layer: Number(row[1]), group: row[2] as Group, path: path[1]! });
    }
  }
  return table;
}

/** A file's row: its own when the table has one, else its nearest folder's. */
function rowOf(table: Map<string, Row>, file: string): Row | undefined {
  if (table.has(file)) return table.get(file);
  const parts = file.split('/');
  for (let n = parts.length - 1; n >= 2; n--) {
    const row = table.get(`${parts.slice(0, n).join('/')}/`);
    if (row) return row;
  }
  return undefined;
}

function layerOf(table: Map<string, Row>, file: string): number | undefined {
  return rowOf(table, file)?.layer;
}

/** Every relative import of a source file, as a repository path (`src/ledger/types.ts`). */
function importsOf(file: string): string[] {
  const text = readFileSync(`${ROOT}/${file}`, 'utf8');
  return [...text.matchAll(IMPORT)].map((m) =>
    relative(ROOT, resolve(dirname(`${ROOT}/${file}`), (m[1] ?? m[2])!.replace(/\.js$/, '.ts'))),
  );
}

const sources = readdirSync(`${ROOT}/src`, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => `src/${f}`);

describe('the layers of docs/architecture.md', () => {
  const table = layerRows();

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

  it('keep the groups apart: the core imports neither the application nor the tools, the application no tool', () => {
    const groups = new Set([...table.values()].map((r) => r.group));
    expect([...groups].sort()).toEqual(['app', 'core', 'tools']);
    const across: string[] = [];
    for (const file of sources) {
      const from = rowOf(table, file)!.group;
      for (const target of importsOf(file)) {
        const to = rowOf(table, target)?.group;
        if (to !== from && !(to && MAY_IMPORT[from].includes(to)))
          across.push(`${file} (${from}) → ${target} (${to})`);
      }
    }
    expect(across).toEqual([]);
  });

  it('put the application under src/youtube/, and only the application', () => {
    const rows = [...table.values()];
    expect(rows.filter((r) => r.group === 'app').length).toBeGreaterThan(3);
    expect(
      rows.filter((r) => (r.group === 'app') !== r.path.startsWith(APPLICATION)).map((r) => r.path),
    ).toEqual([]);
    const appFiles = sources.filter((f) => f.startsWith(APPLICATION));
    expect(appFiles).toContain('src/youtube/index.ts');
    expect(appFiles.filter((f) => rowOf(table, f)?.group !== 'app')).toEqual([]);
  });

  it('have no two folders on one layer that import each other', () => {
    // Between two places on one layer, imports may run one way only: a loop between folders is a
    // tangle even when no single file loop closes it (cycles.test.ts catches those).
    const edges = new Set<string>();
    for (const file of sources) {
      const from = rowOf(table, file)!;
      for (const target of importsOf(file)) {
        const to = rowOf(table, target);
        if (to && to.path !== from.path && to.layer === from.layer) edges.add(`${from.path} → ${to.path}`);
      }
    }
    const mutual = [...edges].filter((e) => {
      const [a, b] = e.split(' → ');
      return a! < b! && edges.has(`${b} → ${a}`);
    });
    expect(mutual).toEqual([]);
  });

  it('keep the simulator on layers 0 and 1: it is a stand-in for the upstream, not a client of ours', () => {
    const above = [];
    for (const file of sources.filter((f) => f.startsWith('src/youtube/simulator/'))) {
      for (const m of readFileSync(`${ROOT}/${file}`, 'utf8').matchAll(IMPORT)) {
        const target = relative(
          ROOT,
          resolve(dirname(`${ROOT}/${file}`), (m[1] ?? m[2])!.replace(/\.js$/, '.ts')),
        );
        if (!target.startsWith('src/youtube/simulator/') && (layerOf(table, target) ?? 99) > 1)
          above.push(`${file} → ${target}`);
      }
    }
    expect(above).toEqual([]);
  });
});
