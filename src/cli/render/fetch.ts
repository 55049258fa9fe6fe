/** What `quota-guard fetch` prints for people: a line per region's run, then the totals. */
import { jobLine, totals } from '../../youtube/job-library/summary.js';
import type { JobResult } from '../../youtube/job-library/types.js';
import { count } from './format.js';

/** `trending:US  done  4 pages, …` per run, and `total: …` of the credential spent. */
export function renderFetch(results: readonly JobResult[], credential: string): string {
  const t = totals(results);
  return (
    `${results.map(jobLine).join('\n')}\n` +
    `total: ${count(t.pages, 'page')}, ${count(t.videos, 'video')}, ${count(t.units, 'unit')} of ${credential}\n`
  );
}
