/**
 * Child processes for tests: their stdout and stderr collected as text, and a time limit after which
 * the child is killed (SIGKILL), so a test that leaves one hanging fails instead of waiting forever.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

/** The CLI's entry point, as `node --import tsx` runs it from the sources. */
export const BIN = join(import.meta.dirname, '../../src/cli/bin.ts');

export interface Exited {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  /** What the child has written so far. */
  readonly stdout: string;
  readonly stderr: string;
  /** Settles once the child has exited and its output is closed; rejects if it could not be started. */
  readonly exited: Promise<Exited>;
}

export interface StartOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Killed (SIGKILL) if it is still running this long after the start. */
  timeoutMs: number;
}

/** Start `command` with no stdin, its stdout and stderr collected. */
export function startProcess(command: string, args: string[], options: StartOptions): Running {
  const child = spawn(command, args, {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: options.env,
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
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  const exited = new Promise<Exited>((resolve, reject) => {
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
  };
}
