/**
 * Warnings that repeat, said once with a count. During a Redis outage a busy `serve` refused about
 * 4,000 spends a second and logged a warning for each; a client with a wrong token can do the same
 * with 401s. A line the logger has written within the last `intervalMs` (same level, same
 * message) is counted instead of written; when the interval ends, one line says how many were held
 * back, with the fields of the last of them, and the next one is written as it comes. Info and
 * debug lines pass as they are.
 */
import type { Logger } from './logger.js';

export interface LimitOptions {
  /** How long a line's repeats are held back (default 10 s). */
  intervalMs?: number;
}

interface Held {
  count: number;
  last: object;
  timer: NodeJS.Timeout;
}

/** `logger` with its repeated warnings and errors folded into one line per interval. */
export function limitRepeats(logger: Logger, opts: LimitOptions = {}): Logger {
  const intervalMs = opts.intervalMs ?? 10_000;
  const held = new Map<string, Held>();
  const limited =
    (level: 'warn' | 'error') =>
    (obj: object, msg: string): void => {
      const write = (o: object, m: string) =>
        level === 'warn' ? logger.warn(o, m) : (logger.error ?? logger.warn).call(logger, o, m);
      const key = `${level}\u0000${msg}`;
      const h = held.get(key);
      if (h) {
        h.count++;
        h.last = obj;
        return;
      }
      write(obj, msg);
      const entry: Held = {
        count: 0,
        last: obj,
        timer: setTimeout(() => {
          held.delete(key);
          if (entry.count > 0) {
            write(
              { ...entry.last, repeated: entry.count, withinMs: intervalMs },
              `${msg} (${entry.count} more like it in the last ${Math.round(intervalMs / 1000)} s)`,
            );
          }
        }, intervalMs),
      };
      entry.timer.unref();
      held.set(key, entry);
    };
  const out: Logger = {
    info: (obj, msg) => logger.info(obj, msg),
    warn: limited('warn'),
    error: limited('error'),
    debug: (obj, msg) => logger.debug?.(obj, msg),
    child: (bindings) => limitRepeats(logger.child ? logger.child(bindings) : logger, opts),
  };
  return out;
}
