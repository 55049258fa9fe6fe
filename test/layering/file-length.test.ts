/**
 * No code file over 600 lines without a reason in its header: a longer file is split at a natural
 * seam, or its opening comment says why it is not, in a sentence that names the limit ("over 600
 * lines because …"). Code is TypeScript, JavaScript, Lua, Python and PHP, in the sources, tests,
 * benchmarks, scripts, jobs and clients; data and docs are not.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../harness/imports.js';

const LIMIT = 600;
const FOLDERS = ['src', 'test', 'bench', 'scripts', 'jobs', 'clients', 'lua'];
const CODE = /\.(ts|mts|mjs|js|lua|py|php)$/;

function codeFiles(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'fixtures' ? [] : codeFiles(path);
    return CODE.test(e.name) ? [path] : [];
  });
}

/** The file's opening comment (its first lines up to the first line of code). */
function header(text: string): string {
  const lines = text.split('\n');
  const end = lines.findIndex(
    (l) => l.trim() !== '' && !/^\s*(\/\*\*?|\*|\/\/|--|#|<\?php|"""|'''|\*\/)/.test(l),
  );
  return lines.slice(0, end === -1 ? lines.length : end).join('\n');
}

function overLimit(path: string, text: string): string | undefined {
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines <= LIMIT) return undefined;
  return header(text).includes(`${LIMIT} lines`) ? undefined : `${path}: ${lines} lines`;
}

describe('code files', () => {
  it(`are at most ${LIMIT} lines, or say why in their header`, () => {
    const files = FOLDERS.flatMap(codeFiles);
    expect(files.length).toBeGreaterThan(100);
    const long = files.flatMap((f) => overLimit(f, readFileSync(join(ROOT, f), 'utf8')) ?? []);
    expect(long).toEqual([]);
  });

  it('the check counts lines and reads the header', () => {
    const body = 'const x = 1;\n'.repeat(LIMIT);
    expect(overLimit('a.ts', `/** short */\n${body}`)).toBe(`a.ts: ${LIMIT + 1} lines`);
    expect(overLimit('a.ts', `/** Over ${LIMIT} lines because it is one table. */\n${body}`)).toBeUndefined();
    expect(overLimit('a.ts', body)).toBeUndefined();
    // A mention of the limit below the header is no reason.
    expect(overLimit('a.ts', `/** short */\n${body}// ${LIMIT} lines\n`)).toBe(`a.ts: ${LIMIT + 2} lines`);
  });
});
