import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { fileTempDir } from '../harness/temp.js';

export const dir = fileTempDir('qg-cli-').dir;
let n = 0;

/** Write a config file (YAML text) and return its path. */
export function configFile(yaml: string): string {
  const p = join(dir, `config${n++}.yaml`);
  writeFileSync(p, yaml);
  return p;
}

/** A fresh SQLite ledger path for one test. */
export function sqliteStore(): string {
  return `sqlite:${join(dir, `ledger${n++}.db`)}`;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the CLI in-process, capturing what it writes. */
export async function cli(...args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await main(['node', 'quota-guard', ...args]);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/** A user mistake: exactly one `quota-guard: …` line on stderr, matching `pattern`, and no stack trace. */
export function expectOneLine(stderr: string, pattern: RegExp): void {
  const lines = stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^quota-guard: /);
  expect(lines[0]).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at /);
}
