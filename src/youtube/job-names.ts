/**
 * The YouTube application's job names and the labels it gives their runs: `trending:<region>` (and
 * `trending:<region>:<category>`) for a region's trending run, labelled `{ region }`; `backfill`.
 * The core's run history stores a run's labels without knowing a job; the scheduler, the metrics
 * and the decision API (for a client's run named `trending:US`) ask here.
 */

/** A region's trending run: `trending:US`. */
export function trendingJob(region: string): string {
  return `trending:${region}`;
}

/** `trending:US` and `trending:US:10` → `US`; anything else → null. */
export function regionOfJob(job: string): string | null {
  const [kind, region] = job.split(':');
  return kind === 'trending' && region ? region : null;
}

/** The labels of a run of this job: `{ region: 'US' }` for a trending run, else none. */
export function trendingLabels(job: string): Record<string, string> {
  const region = regionOfJob(job);
  return region === null ? {} : { region };
}
