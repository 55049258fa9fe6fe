/** Plain-text and JSON forms of job results, for the CLI and the demo. */

import { formatDuration } from '../../config/duration.js';
import { terminalText } from '../../terminal-text.js';
import type { JobResult } from './types.js';

const NUMBER = new Intl.NumberFormat('en-US');

function plural(n: number, word: string): string {
  return `${NUMBER.format(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** `trending:US  done  4 pages, 197 videos, 4 units` (+ why it ended early). */
export function jobLine(r: JobResult): string {
  const counts = [
    plural(r.pages, r.job.startsWith('backfill') ? 'call' : 'page'),
    plural(r.videos, 'video'),
    plural(r.units, 'unit'),
  ];
  if (r.skipped) counts.push(`${plural(r.skipped, 'video')} skipped as refreshed too recently`);
  const journalled = r.journalledUnits ?? 0;
  if (journalled > 0)
    counts.push(`${NUMBER.format(journalled)} journalled (ledger store down, recorded late)`);
  if (r.failOpenUnits > journalled)
    counts.push(`${NUMBER.format(r.failOpenUnits - journalled)} unrecorded (ledger store down, fail-open)`);
  const ms = formatDuration(Math.max(0, r.finishedAt - r.startedAt));
  return `${r.job}  ${r.outcome}  ${counts.join(', ')} in ${ms}${r.reason ? `\n  ${terminalText(r.reason)}` : ''}`;
}

/** Totals over several runs. */
export function totals(results: readonly JobResult[]): {
  pages: number;
  videos: number;
  units: number;
  failOpenUnits: number;
} {
  return results.reduce(
    (t, r) => ({
      pages: t.pages + r.pages,
      videos: t.videos + r.videos,
      units: t.units + r.units,
      failOpenUnits: t.failOpenUnits + r.failOpenUnits,
    }),
    { pages: 0, videos: 0, units: 0, failOpenUnits: 0 },
  );
}

/** A result without the guard's stop object (its error may be large): what `--json` prints. */
export function jobJson(r: JobResult) {
  const { stop, ...rest } = r;
  return {
    ...rest,
    startedAt: new Date(r.startedAt).toISOString(),
    finishedAt: new Date(r.finishedAt).toISOString(),
    ...(r.resumeAt !== undefined ? { resumeAt: new Date(r.resumeAt).toISOString() } : {}),
    ...(stop ? { stopReason: stop.reason, bucket: stop.bucket } : {}),
  };
}
