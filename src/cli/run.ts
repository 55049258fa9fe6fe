import { ConfigError, exitCodeFor, isQuotaGuardError } from '../errors.js';

/**
 * Print an error the way a user should see it and return the exit code. A QuotaGuardError is a
 * user-facing condition: one line per problem, no stack. Anything else is a bug: full stack.
 */
export function reportError(e: unknown, stderr: NodeJS.WritableStream = process.stderr): number {
  if (e instanceof ConfigError) {
    for (const p of e.problems) stderr.write(`quota-guard: ${p} (${e.code})\n`);
  } else if (isQuotaGuardError(e)) {
    stderr.write(`quota-guard: ${e.message} (${e.code})\n`);
  } else {
    stderr.write(`quota-guard: internal error\n${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  }
  return exitCodeFor(e);
}

/** Wrap a command action so its errors become exit codes instead of unhandled rejections. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<number | undefined>) {
  return async (...args: A): Promise<void> => {
    try {
      const code = await fn(...args);
      if (code !== undefined) process.exitCode = code;
    } catch (e) {
      process.exitCode = reportError(e);
    }
  };
}
