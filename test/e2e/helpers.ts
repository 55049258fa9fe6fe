/**
 * End-to-end helpers: config files on disk, the CLI as a child process (its real stdout and
 * stderr, pino lines included), and a unique Redis key prefix per test.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import YAML from 'yaml';
import { tmpPath } from '../job-library/helpers.js';

/** A key prefix on the shared private Redis no other test (in this file or another) uses. */
export function prefix(): string {
  return `${inject('keyPrefix')}e2e:${randomUUID()}:`;
}

/** Write a config object as a YAML file; returns its path. */
export function configFile(config: Record<string, unknown>): string {
  const p = tmpPath('config.yaml');
  writeFileSync(p, YAML.stringify(config));
  return p;
}

export interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

const BIN = join(import.meta.dirname, '../../src/cli/bin.ts');

/** Run `quota-guard <args>` in a child process (tsx), with `env` on top of a clean environment. */
export function runChild(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<ChildResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', BIN, ...args], {
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += String(d);
    });
    child.stderr.on('data', (d) => {
      stderr += String(d);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}
