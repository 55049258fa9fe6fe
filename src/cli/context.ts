/**
 * What the commands that spend or read the ledger need: the loaded config, the ledger it names, and
 * a guard on top, opened by `openQuotaGuard` as a library user opens them. `withContext` closes the ledger however the command ends. Commands import this
 * module inside their actions (`await import`), so a command that does not open a ledger never
 * loads it.
 */

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { dataDir } from '../config/paths.js';
import { parseStoreUrl } from '../config/store-url.js';
import type { Env } from '../config/types.js';
import type { Guard } from '../guard/guard.js';
import { DEFAULT_JOURNAL_FILE } from '../guard/journal.js';
import type { GuardLogger } from '../guard/types.js';
import type { Ledger } from '../ledger/types.js';
import { deferredLogger, loadPino } from '../logger.js';
import { openQuotaGuard, type QuotaGuard } from '../quota-guard.js';
import { terminalJsonLine } from '../terminal-text.js';
import type { YouTubeConfig } from '../youtube/config/types.js';
import { scheduledNeed } from '../youtube/cron-runs.js';
import type { DivertableLog } from '../youtube/job-library/progress.js';
import { loadCliConfig } from './config.js';
import { logFormat, logLevel, notedJsonLine } from './log-level.js';
import { humanLogLine } from './log-line.js';
import type { ConfigOptions } from './options.js';
import { outputWidth } from './render/format.js';

export interface Context {
  config: YouTubeConfig;
  ledger: Ledger;
  guard: Guard;
  logger: GuardLogger;
  /** The handle that holds them (`openQuotaGuard`): its events, its run history. */
  qg: QuotaGuard;
  /** Settles what is pending and closes the history and the ledger. */
  close(): Promise<void>;
}

export interface OpenContextOptions {
  env?: Env;
  /**
   * Open even when a Redis store is unreachable (calls then fail with StoreUnavailableError, so the
   * store-down policy applies). Default false: an unreachable store is an error (exit 69).
   */
  allowUnreachable?: boolean;
  logger?: GuardLogger;
  /** The config when the command has loaded it already (then the file is not read again). */
  config?: YouTubeConfig;
  /**
   * The command only reads: a SQLite ledger that does not exist is `QG_STORE_NOT_FOUND` (exit 66)
   * naming where it looked, and nothing is created.
   */
  readOnly?: boolean;
  /**
   * The command changes what a ledger holds but has nothing to do on a new one (`unblock`): a SQLite
   * ledger that does not exist is `QG_STORE_NOT_FOUND` (exit 66) naming where it looked, and
   * nothing is created.
   */
  existingLedger?: boolean;
  /** Open the run history in the ledger's store with the handle (default false: the command records no run). */
  history?: boolean;
}

/**
 * The CLI's log output: stderr, written synchronously (nothing lost on a crash), except while a
 * progress bar diverts it to print the lines above itself.
 */
class CliLogOutput implements DivertableLog {
  #stderr: { write(s: string): unknown } | undefined;
  #diverted: ((line: string) => void) | undefined;

  divert(write: ((line: string) => void) | undefined): void {
    this.#diverted = write;
  }

  write(line: string): void {
    const out =
      logFormat() === 'human'
        ? humanLogLine(line, outputWidth(process.stderr))
        : // Upstream text in a log line (a title, an error message) must not drive an operator's terminal.
          process.stderr.isTTY
          ? terminalJsonLine(line)
          : line;
    if (logFormat() === 'json') notedJsonLine();
    if (this.#diverted) this.#diverted(out);
    else {
      this.#stderr ??= loadPino().destination({ dest: 2, sync: true });
      this.#stderr.write(out);
    }
  }
}

/** Where every CLI logger writes (a progress bar diverts it while drawn). */
export const cliLogOutput = new CliLogOutput();

/**
 * A pino logger on stderr (level from $LOG_LEVEL, default info): stdout stays for command output.
 * pino is loaded when the first line is written, so a command that logs nothing does not load it.
 */
export function cliLogger(env: Env = process.env): GuardLogger {
  const level = logLevel(env);
  return deferredLogger(() => loadPino()({ name: 'quota-guard', level }, cliLogOutput));
}

/** The file of a `sqlite:` URL when it does not exist yet (the config makes it absolute). */
function sqliteFileMissing(url: string): string | undefined {
  const store = parseStoreUrl(url);
  if (store.kind !== 'sqlite' || store.path === ':memory:') return undefined;
  return existsSync(store.path) ? undefined : store.path;
}

/** Load the config and open its ledger store. */
export async function openContext(opts: ConfigOptions, options: OpenContextOptions = {}): Promise<Context> {
  const env = options.env ?? process.env;
  const config = options.config ?? (await loadCliConfig(opts.config, env));
  // Everything that can fail on its own goes before the store opens: an open Redis connection
  // (and its reconnect timer) left behind by a failing command would keep the process alive.
  const logger = options.logger ?? cliLogger(env);
  const s = config.store;
  // A new ledger file is worth a line: a spend from a config that names another file than the
  // jobs use would otherwise start a second quota silently.
  const newFile =
    s.kind === 'sqlite' && !options.readOnly && !options.existingLedger
      ? sqliteFileMissing(s.url)
      : undefined;
  const qg = await openQuotaGuard(config, {
    logger,
    scheduledNeed: scheduledNeed(config),
    history: options.history === true,
    // The journal of fail-open spends lives in the data directory; a reading command keeps none.
    journal: options.readOnly ? false : join(dataDir(env).path, DEFAULT_JOURNAL_FILE),
    ...(options.allowUnreachable ? { allowUnreachable: true } : {}),
    ledger: {
      ...(options.readOnly ? { create: false } : {}),
      ...(options.existingLedger ? { create: false, writes: true } : {}),
      onClockStep: (step) =>
        logger.warn(
          { stepMs: step.stepMs, how: step.how },
          'the host clock stepped: the SQLite ledger moved its stored times with it, so windows stay in real time',
        ),
    },
  });
  if (newFile !== undefined) {
    logger.warn({ path: newFile }, 'created a new SQLite ledger: nothing was spent through this file before');
  }
  return { config, ledger: qg.ledger, guard: qg.guard, logger, qg, close: qg.close };
}

/** Run `fn` with a context and close the ledger afterwards, whatever happens. */
export async function withContext<T>(
  opts: ConfigOptions,
  fn: (ctx: Context) => Promise<T>,
  options: OpenContextOptions = {},
): Promise<T> {
  const ctx = await openContext(opts, options);
  try {
    return await fn(ctx);
  } finally {
    // Spends whose answer never came (a store that stalled mid-command) get one command timeout to
    // be settled; none otherwise, so a dead store adds nothing here. Then the ledger is closed.
    await ctx.close();
  }
}
