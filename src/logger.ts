/**
 * The one logger type of quota-guard (the part of a pino logger it uses) and the library's default.
 *
 * pino is loaded on the first line written, not at import: a command or a script that never logs
 * (a `spend` that is allowed) does not pay for it.
 */
import { createRequire } from 'node:module';
import type pinoModule from 'pino';

export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  /** Request lines of the upstream client; skipped by loggers without it. */
  debug?(obj: object, msg: string): void;
  error?(obj: object, msg: string): void;
  /** A logger whose every line carries `bindings` (pino's child loggers). */
  child?(bindings: Record<string, unknown>): Logger;
}

const require = createRequire(import.meta.url);

/** pino itself, loaded (once, synchronously) when first asked for. */
export function loadPino(): typeof pinoModule {
  return require('pino') as typeof pinoModule;
}

/** pino's level names. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const SILENT: Logger = { info() {}, warn() {}, debug() {}, error() {}, child: () => SILENT };

/**
 * A logger whose every line carries `bindings`: the logger's own child when it has one, else a
 * wrapper that adds them to each line's object.
 */
export function childLogger(logger: Logger, bindings: Record<string, unknown>): Logger {
  if (logger.child) return logger.child(bindings);
  return {
    info: (obj, msg) => logger.info({ ...bindings, ...obj }, msg),
    warn: (obj, msg) => logger.warn({ ...bindings, ...obj }, msg),
    debug: (obj, msg) => logger.debug?.({ ...bindings, ...obj }, msg),
    error: (obj, msg) => logger.error?.({ ...bindings, ...obj }, msg),
    child: (more) => childLogger(logger, { ...bindings, ...more }),
  };
}

/** A logger that makes the real one (`make`) when the first line is written. */
export function deferredLogger(make: () => Logger): Logger {
  let real: Logger | undefined;
  const get = () => {
    real ??= make();
    return real;
  };
  return {
    info: (obj, msg) => get().info(obj, msg),
    warn: (obj, msg) => get().warn(obj, msg),
    debug: (obj, msg) => get().debug?.(obj, msg),
    error: (obj, msg) => get().error?.(obj, msg),
    child: (bindings) => deferredLogger(() => childLogger(get(), bindings)),
  };
}

/**
 * The library's default logger: pino on stderr at `$LOG_LEVEL`, or silent when it is unset. A
 * program that wants its lines passes its own logger.
 */
export function defaultLogger(env: Record<string, string | undefined> = process.env): Logger {
  const level = env['LOG_LEVEL'];
  if (level === undefined || level === '' || level === 'silent') return SILENT;
  const make = () => {
    const pino = loadPino();
    return pino({ name: 'quota-guard', level }, pino.destination({ dest: 2, sync: true }));
  };
  // An unknown level is pino's error at once, not at the first line.
  return (LOG_LEVELS as readonly string[]).includes(level) ? deferredLogger(make) : make();
}
