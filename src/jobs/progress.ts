/**
 * Backfill progress: a cli-progress bar when the output is a terminal, else one log line every
 * `intervalMs` (cron mail and log files get a few lines, not a bar's control characters).
 */
import cliProgress from 'cli-progress';
import type { GuardLogger } from '../guard/types.js';
import type { BackfillProgress } from './backfill.js';

export interface ProgressOptions {
  /** Draw a bar (default: whether `stream` is a terminal). */
  tty?: boolean;
  /** Where the bar goes (default stderr, so stdout stays for results). */
  stream?: NodeJS.WriteStream;
  /** Used when not a terminal. */
  logger: GuardLogger;
  /** Log-line interval when not a terminal (default 10 s). */
  intervalMs?: number;
  now?: () => number;
}

export function backfillProgress(options: ProgressOptions): BackfillProgress {
  const stream = options.stream ?? process.stderr;
  const tty = options.tty ?? stream.isTTY === true;
  if (tty) {
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format:
          'backfill [{bar}] {value}/{total} videos | {units} units | {batches} calls | eta {eta_formatted}',
        hideCursor: true,
        clearOnComplete: false,
      },
      cliProgress.Presets.shades_classic,
    );
    return {
      start: (total) => bar.start(total, 0, { units: 0, batches: 0 }),
      update: (done, info) => bar.update(done, info),
      stop: () => bar.stop(),
    };
  }
  const now = options.now ?? Date.now;
  const interval = options.intervalMs ?? 10_000;
  let total = 0;
  let last = 0;
  let latest: { done: number; units: number; batches: number } | undefined;
  let logged = true;
  const log = () => {
    if (!latest) return;
    options.logger.info(
      { job: 'backfill', done: latest.done, total, units: latest.units, batches: latest.batches },
      `backfill progress: ${latest.done}/${total} videos`,
    );
    logged = true;
  };
  return {
    start: (t) => {
      total = t;
      last = now();
    },
    update: (done, info) => {
      latest = { done, ...info };
      logged = false;
      if (now() - last >= interval) {
        last = now();
        log();
      }
    },
    stop: () => {
      if (!logged) log();
    },
  };
}
