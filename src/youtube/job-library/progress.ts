/**
 * Backfill progress: a cli-progress bar when the output is a terminal, else one log line every
 * `intervalMs` (cron mail and log files get a few lines, not a bar's control characters).
 *
 * While the bar is drawn, log lines written through `logs` are printed above it (the bar is cleared,
 * the line written, the bar redrawn below), so a line never lands in the middle of the bar.
 */
import cliProgress from 'cli-progress';
import type { GuardLogger } from '../../guard/types.js';
import type { BackfillProgress } from './backfill.js';

/** Log output that can be sent elsewhere for a while (see `divert`). */
export interface DivertableLog {
  /** Send every log line to `write` from now on; `undefined` restores the usual output. */
  divert(write: ((line: string) => void) | undefined): void;
}

export interface ProgressOptions {
  /** Draw a bar (default: whether `stream` is a terminal). */
  tty?: boolean;
  /** Where the bar goes (default stderr, so stdout stays for results). */
  stream?: NodeJS.WriteStream;
  /** Used when not a terminal. */
  logger: GuardLogger;
  /** The output of the log lines that may come while the bar is drawn: they are printed above it. */
  logs?: DivertableLog;
  /** Log-line interval when not a terminal (default 10 s). */
  intervalMs?: number;
  now?: () => number;
}

export function backfillProgress(options: ProgressOptions): BackfillProgress {
  const stream = options.stream ?? process.stderr;
  const tty = options.tty ?? stream.isTTY === true;
  if (tty) {
    // A MultiBar (of one bar) because it can print lines above itself; SingleBar cannot.
    const bars = new cliProgress.MultiBar(
      {
        stream,
        format:
          'backfill [{bar}] {value}/{total} videos | {units} units | {batches} calls | eta {eta_formatted}',
        hideCursor: true,
        // The terminal keeps wrapping long lines: with wrapping off (cli-progress's default) a log
        // line printed above the bar is cut at the terminal's width, and a JSON line stops being
        // JSON. The bar itself is cut to the width by cli-progress instead.
        linewrap: true,
        // The figures after the bar take about 60 columns: the bar gets what is left of the width.
        barsize: Math.max(10, Math.min(40, (stream.columns || 80) - 62)),
        clearOnComplete: false,
        // Redrawn even when unchanged: a line printed above it has just overwritten it.
        forceRedraw: true,
      },
      cliProgress.Presets.shades_classic,
    );
    let bar: cliProgress.SingleBar | undefined;
    return {
      start: (total) => {
        bar = bars.create(total, 0, { units: 0, batches: 0 });
        options.logs?.divert((line) => {
          bars.log(line.endsWith('\n') ? line : `${line}\n`);
          // Drawn at once rather than at the next tick, so no line waits in a buffer a crash could lose.
          bars.update();
        });
      },
      update: (done, info) => bar?.update(done, info),
      stop: () => {
        options.logs?.divert(undefined);
        bars.stop();
      },
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
