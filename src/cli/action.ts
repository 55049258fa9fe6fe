/** Command actions: errors become one line on stderr and the exit status of their code; only bugs print a stack. */

import { hostname } from 'node:os';
import type { Command } from 'commander';
import { ConfigError, exitCodeFor, isQuotaGuardError } from '../errors.js';
import { terminalJsonLine, terminalText } from '../terminal-text.js';
import { jsonStream } from './log-level.js';

/**
 * Print an error the way a user should see it and return the exit code. A QuotaGuardError is a
 * user-facing condition: one line per problem, no stack. Anything else is a bug: full stack.
 */
export function reportError(e: unknown, stderr: NodeJS.WritableStream = process.stderr): number {
  if (jsonStream()) {
    stderr.write(fatalJsonLine(e));
    return exitCodeFor(e);
  }
  if (e instanceof ConfigError) {
    for (const p of e.problems) stderr.write(`quota-guard: ${terminalText(p)} (${e.code})\n`);
  } else if (isQuotaGuardError(e)) {
    stderr.write(`quota-guard: ${terminalText(e.message)} (${e.code})\n`);
  } else {
    stderr.write(`quota-guard: internal error\n${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  }
  return exitCodeFor(e);
}

/**
 * The error as one more JSON log line (pino's shape, level 60 `fatal`), for a stderr that carries
 * JSON lines already: the message, the code and the exit status; a bug's stack in `err`.
 */
function fatalJsonLine(e: unknown): string {
  const known = isQuotaGuardError(e);
  const line = {
    level: 60,
    time: Date.now(),
    pid: process.pid,
    hostname: hostname(),
    name: 'quota-guard',
    exitCode: exitCodeFor(e),
    ...(known
      ? { code: e.code }
      : { err: { message: String(e), stack: e instanceof Error ? e.stack : undefined } }),
    ...(e instanceof ConfigError && e.problems.length > 1 ? { problems: e.problems } : {}),
    msg: known ? (e instanceof ConfigError ? (e.problems[0] ?? e.message) : e.message) : 'internal error',
  };
  return `${terminalJsonLine(JSON.stringify(line))}\n`;
}

/** The exit code each program's action ended with, kept off `process` so that main() can run in-process. */
const exitCodes = new WeakMap<Command, number>();

/** The exit code the action run by `program` asked for, if any. */
export function exitCodeOf(program: Command): number | undefined {
  return exitCodes.get(program);
}

/** Wrap a command action so its errors become exit codes instead of unhandled rejections. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<number | undefined>) {
  return async function (this: Command, ...args: A): Promise<void> {
    let root: Command = this;
    while (root.parent) root = root.parent;
    try {
      const code = await fn(...args);
      if (code !== undefined) exitCodes.set(root, code);
    } catch (e) {
      exitCodes.set(root, reportError(e));
    }
  };
}

/** An action module: `src/cli/actions/<command>.ts`, which imports what it needs statically. */
export interface ActionModule<A extends unknown[]> {
  run(...args: A): Promise<number | undefined>;
}

/**
 * A command's action, loaded when the command runs: the command file declares options and
 * arguments only, so defining it loads nothing but commander; the action module, imported on first
 * use, brings the rest in one step (in the bundle, one chunk).
 */
export function lazyAction<A extends unknown[]>(load: () => Promise<ActionModule<A>>) {
  return action(async (...args: A) => (await load()).run(...args));
}
