/**
 * End-to-end helpers: config files on disk, the CLI as a child process (its real stdout and
 * stderr, pino lines included), and a unique Redis key prefix per test.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { inject } from 'vitest';
import YAML from 'yaml';
import { BIN, type Running, startProcess } from '../harness/child.js';
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

/** `runChild` without waiting: the child running, to signal it or to read what it has written so far. */
export function startChild(args: string[], env: Record<string, string>, timeoutMs = 60_000): Running {
  return startProcess(process.execPath, ['--import', 'tsx', BIN, ...args], {
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
    timeoutMs,
  });
}

/** Run `quota-guard <args>` in a child process (tsx), with `env` on top of a clean environment. */
export async function runChild(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<ChildResult> {
  const started = performance.now();
  const { code, stdout, stderr } = await startChild(args, env, timeoutMs).exited;
  return { code, stdout, stderr, ms: performance.now() - started };
}
