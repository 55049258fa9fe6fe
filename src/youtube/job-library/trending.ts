/**
 * The trending job for one region: every page of `videos.list?chart=mostPopular` (50 a page, as
 * many pages as the upstream offers, bounded), each page spent through the guard on the scheduled
 * tier and then written to the cache in one transaction. Regional runs share the credential's one
 * budget, so several of them can run at once (in one process or many).
 */

import { InvalidArgumentError } from '../../errors.js';
import { spendTag } from '../../guard/tags.js';
import { type JobEnd, JobRun, jobCredential } from '../../runs/job-run.js';
import type { VideoResource } from '../cache/types.js';
import { trendingJob, trendingLabels } from '../job-names.js';
import { TRENDING_METHOD } from '../trending-spend.js';
import type { JobContext, JobResult, JobRunOptions } from './types.js';

export { TRENDING_METHOD };
export const PAGE_SIZE = 50;

export interface TrendingOptions extends JobRunOptions {
  /** Region code, e.g. `US` (must be one of the config's regions). */
  region: string;
  /** Chart categories to fetch (default: the config's for the region; none = the whole chart). */
  categories?: readonly string[];
  /** Pages per chart at most (default: the config's `schedules.trending.maxPages`, which `plan` counts). */
  maxPages?: number;
}

/** Fetch one region's trending chart(s) into the cache. Returns a result value; only bugs throw. */
export async function runTrending(ctx: JobContext, options: TrendingOptions): Promise<JobResult> {
  const requested = String(options.region ?? '').toUpperCase();
  const maxPages = options.maxPages ?? ctx.config.schedules.trending.maxPages;
  let credential = options.credential ?? ctx.config.credentials[0]?.id ?? 'default';
  const early = new JobRun(ctx, trendingJob(requested), credential, options.signal);
  early.labels = trendingLabels(early.job);
  let region: string;
  try {
    if (!Number.isInteger(maxPages) || maxPages < 1) {
      throw new InvalidArgumentError('maxPages', 'must be an integer >= 1');
    }
    region = ctx.config.region(requested);
    credential = jobCredential(ctx, options.credential);
  } catch (e) {
    return early.guarded(() => Promise.reject(e));
  }
  const categories = options.categories ?? ctx.config.categories[region] ?? [];
  const charts: Array<string | undefined> = categories.length ? [...categories] : [undefined];
  const run = new JobRun(ctx, trendingJob(region), credential, options.signal, options.inFlightSignal);
  run.labels = { region };
  const tag = spendTag('trending', region, TRENDING_METHOD);

  return run.guarded(async (): Promise<JobEnd | undefined> => {
    const client = ctx.upstream.get(credential);
    for (const category of charts) {
      const fetchedAt = run.now();
      let pageToken: string | undefined;
      let rankOffset = 0;
      for (let page = 1; page <= maxPages; page++) {
        const started = performance.now();
        const got = await run.call(
          { credential, method: TRENDING_METHOD, tier: 'scheduled', tag },
          (signal) =>
            client.videosListChart(
              {
                regionCode: region,
                maxResults: PAGE_SIZE,
                ...(category !== undefined ? { videoCategoryId: category } : {}),
                ...(pageToken !== undefined ? { pageToken } : {}),
              },
              signal ? { signal } : {},
            ),
        );
        if (!got.ok) return regionEnd(got.end, region, category, page, run.pages);
        const videos: VideoResource[] = got.value.items;
        const written = ctx.cache.ingestTrendingPage({
          region,
          ...(category !== undefined ? { category } : {}),
          fetchedAt,
          rankOffset,
          videos,
        });
        run.pages++;
        run.items += videos.length;
        rankOffset += videos.length;
        run.logger.info(
          {
            region,
            category: category ?? null,
            page,
            videos: videos.length,
            inserted: written.inserted,
            updated: written.updated,
            attempts: got.attempts,
            units: run.units,
            ms: Math.round(performance.now() - started),
          },
          'trending page written',
        );
        pageToken = got.value.nextPageToken;
        if (pageToken === undefined || videos.length === 0) break;
        if (run.signal?.aborted)
          return { outcome: 'aborted', reason: 'aborted after a whole page was written' };
      }
    }
    return undefined;
  });
}

/**
 * A region error (`videoChartNotFound`, `invalidRegionCode`) on a chart's first page: the region
 * (or that category of it) has no chart, and the line names it. On a later page, after good ones
 * were written, the chart exists: those pages stay, and the region is reported as partly fetched
 * (unavailable, exit 69: the next run tries again), not as unsupported.
 */
function regionEnd(
  end: JobEnd,
  region: string,
  category: string | undefined,
  page: number,
  pagesWritten: number,
): JobEnd {
  if (end.error?.code !== 'QG_UPSTREAM_REGION_UNSUPPORTED') return end;
  const chart = category === undefined ? region : `${region} category ${category}`;
  if (page === 1) return { ...end, reason: `no trending chart for ${chart}: ${end.reason}` };
  return {
    outcome: 'unavailable',
    reason: `partly fetched: ${chart}: page ${page} was refused after ${pagesWritten} page${pagesWritten === 1 ? '' : 's'} written (kept): ${end.reason}`,
  };
}
