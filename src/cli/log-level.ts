/**
 * `LOG_LEVEL`, checked before any command runs. It imports only the errors and the logger type's
 * module (which loads pino only when a line is written), so that starting the CLI stays light.
 */
import { ConfigError } from '../errors.js';
import { LOG_LEVELS } from '../logger.js';

/**
 * The level `LOG_LEVEL` names (default info). Anything else is a configuration error (exit 78),
 * checked before a command does anything: pino would throw it later, as a bug, from wherever the
 * first logger is made.
 */
export function logLevel(env: Record<string, string | undefined> = process.env): string {
  const level = env['LOG_LEVEL'];
  if (level === undefined || level === '') return 'info';
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level;
  throw new ConfigError([
    `LOG_LEVEL: '${level.replace(/[^\x20-\x7e]/g, '?').slice(0, 40)}' is not a log level (use one of ${LOG_LEVELS.join(', ')})`,
  ]);
}
