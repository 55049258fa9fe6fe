/**
 * docs/architecture.md's "How to guard another API" is a program, not a sketch: its ```ts block is
 * extracted, its `quota-guard` import pointed at the sources, and run in a child process against a
 * real SQLite file and a loopback HTTP server standing in for the Drive API. It must answer, spend
 * one unit that the ledger then holds, and exit by itself.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger } from '../../src/index.js';
import { ROOT } from '../harness/imports.js';
import { fileTempDir } from '../harness/temp.js';

const temp = fileTempDir('qg-docs-arch-');
/** tsx's loader, by URL: the example runs from a directory without node_modules. */
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
let server: Server;
let api: string;
const requests: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        files: [
          { id: 'f1', name: 'a.txt' },
          { id: 'f2', name: 'b.txt' },
        ],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/drive/v3`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** The fenced ```ts block of the section `heading` in docs/architecture.md. */
function example(heading: string): string {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const at = doc.indexOf(`\n## ${heading}\n`);
  expect(at, `docs/architecture.md has a section "${heading}"`).toBeGreaterThan(0);
  const block = /```ts\n([\s\S]*?)\n```/.exec(doc.slice(at));
  expect(block).not.toBeNull();
  return block![1]!;
}

function run(
  file: string,
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', TSX, file], {
      cwd: temp.dir,
      env: { PATH: process.env['PATH'] ?? '', HOME: temp.dir, ...env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    // Generous: this catches a program that never exits, not a slow one.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

describe('How to guard another API (docs/architecture.md)', () => {
  it('guards a Drive API call with the core only, records the spend, and exits by itself', async () => {
    const code = example('How to guard another API');
    expect(code).toMatch(/from 'quota-guard';/);
    expect(code, 'the core only').not.toMatch(/quota-guard\//);
    const file = temp.path('example.mts');
    writeFileSync(file, code.replace(/from 'quota-guard';/g, `from '${join(ROOT, 'src/index.ts')}';`));
    const store = join(temp.dir, 'quota.db');
    const r = await run(file, {
      QUOTA_STORE: `sqlite:${store}`,
      DRIVE_API_URL: api,
      DRIVE_API_KEY: 'drive-test-key',
    });
    expect(r.err).toBe('');
    expect(r.code, 'exits by itself, with 0').toBe(0);
    expect(r.out).toMatch(/^2 files, \d+ queries left this minute\n$/);
    expect(requests).toEqual(['/drive/v3/files?pageSize=10&key=drive-test-key']);

    const ledger = await openLedger(`sqlite:${store}`, { create: false });
    try {
      const minute = await ledger.peek({ key: 'qg:{drive}:queries', windowMs: 60_000 });
      expect(minute.used, 'the spend is in the ledger').toBe(1);
    } finally {
      await ledger.close();
    }
  }, 90_000);
});
