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

/** How the CLI writes log lines: JSON (cron, files, `--json`) or human lines on a terminal. */
export type LogFormat = 'json' | 'human';

let chosen: LogFormat = 'json';
let jsonLines = false;
let streaming = false;

/**
 * The commands whose stderr is a log (the jobs and the services, read from cron's files and the
 * journal); the others' is one line for a person or a script, whatever they logged before it.
 */
const LOGGING_COMMANDS = new Set(['fetch', 'backfill', 'run', 'serve', 'reconcile']);

/**
 * `LOG_FORMAT` (`json` or `human`), else human lines when stderr is a terminal and the command does
 * not print JSON, else JSON. Checked before any command runs, like `LOG_LEVEL`; what it chose is
 * `logFormat()`.
 */
export function chooseLogFormat(
  json: boolean,
  env: Record<string, string | undefined> = process.env,
  tty = process.stderr.isTTY === true,
  command = '',
): LogFormat {
  // A new command: its stderr has carried no JSON line yet (main() may run several in one process).
  jsonLines = false;
  streaming = LOGGING_COMMANDS.has(command);
  const asked = env['LOG_FORMAT'];
  if (asked === 'json' || asked === 'human') chosen = asked;
  else if (asked !== undefined && asked !== '')
    throw new ConfigError([
      `LOG_FORMAT: '${asked.replace(/[^\x20-\x7e]/g, '?').slice(0, 40)}' is not a log format (use json or human)`,
    ]);
  else chosen = tty && !json ? 'human' : 'json';
  return chosen;
}

/** The format `chooseLogFormat` chose (JSON until it runs). */
export function logFormat(): LogFormat {
  return chosen;
}

/** The CLI's log output wrote a JSON line to stderr (see `jsonStream`). */
export function notedJsonLine(): void {
  jsonLines = true;
}

/**
 * Whether stderr is a job's or a service's log of JSON lines already: a fatal error then goes there
 * as one more JSON line, so that a cron job's log file stays one JSON object per line.
 */
export function jsonStream(): boolean {
  return streaming && jsonLines;
}
