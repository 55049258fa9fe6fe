/**
 * The backfill job: refreshes statistics and details of cached videos, oldest refresh first, 50 ids
 * per call, under the backfill tier (so it stops at the headroom line and leaves the scheduled jobs
 * their units). It calls `videos.batchGetStats` when the credential's profile gives that method its
 * own bucket (the backfill then never competes with trending), else `videos.list` by id.
 *
 * Stalest first, and never a video refreshed less than `backfill.minAge` ago (1 h by default: a
 * trending run or the run before just refreshed it); the run says how many it skipped so.
 *
 * Resumable: a pass over the cache is pinned to the time it started (videos refreshed after that
 * are not due again in the same pass), and its position is a cursor stored in the cache after each
 * batch, so the next run continues where a stopped one left off.
 */

import { formatDuration } from '../../config/duration.js';
import { methodOf } from '../../config/lookups.js';
import type { CredentialConfig } from '../../config/types.js';
import { InvalidArgumentError } from '../../errors.js';
import { spendTag } from '../../guard/tags.js';
import { type JobEnd, JobRun, jobCredential } from '../../runs/job-run.js';
import type { VideoResource } from '../cache/types.js';
import type { YouTubeClient } from '../upstream/client.js';
import type { VideoStats } from '../upstream/schemas.js';
import type { JobContext, JobResult, JobRunOptions } from './types.js';

export type BackfillMethod = 'videos.batchGetStats' | 'videos.list';

export const BACKFILL_BATCH = 50;
/** Batches between two catch-ups of the cache's full-text index. */
const FLUSH_EVERY = 20;
/** Batches per run at most (5 million videos): a bound, not a target. */
const MAX_BATCHES = 100_000;

/** What the CLI shows while a backfill runs: a bar on a terminal, periodic log lines otherwise. */
export interface BackfillProgress {
  start(total: number): void;
  update(done: number, info: { units: number; batches: number }): void;
  stop(): void;
}

export interface BackfillOptions extends JobRunOptions {
  /** Spend at most this many units in this run (every attempt counts); the run then ends done. */
  maxUnits?: number;
  /** Ids per call, 1–50 (default 50). */
  batchSize?: number;
  /** Skip videos refreshed less than this many ms ago (default: the config's `backfill.minAge`). */
  minAgeMs?: number;
  progress?: BackfillProgress;
}

/** Where a pass stands: stored in the cache as the job's cursor. */
interface PassCursor {
  /** When the pass started: only videos refreshed before it are due. */
  pass: number;
  /** The cache's position after the last batch written (null: from the start). */
  after: string | null;
}

export function backfillCursorName(credential: string): string {
  return `backfill:${credential}`;
}

/** `videos.batchGetStats` where the profile gives it a bucket of its own, else `videos.list`. */
export function backfillMethod(credential: CredentialConfig): BackfillMethod {
  const stats = credential.methods['videos.batchGetStats'];
  const list = credential.methods['videos.list'];
  return stats !== undefined && stats.bucket !== list?.bucket ? 'videos.batchGetStats' : 'videos.list';
}

function readCursor(raw: string | undefined): PassCursor | undefined {
  if (raw === undefined) return undefined;
  try {
    const v = JSON.parse(raw) as Partial<PassCursor>;
    if (typeof v.pass === 'number' && (v.after === null || typeof v.after === 'string')) {
      return { pass: v.pass, after: v.after };
    }
  } catch {
    // Not ours (or from an older layout): start a new pass.
  }
  return undefined;
}

/** A `videos.batchGetStats` item as the cache's partial video resource (statistics and duration only). */
export function statsToVideo(s: VideoStats): VideoResource {
  return {
    id: s.id,
    ...(s.statistics ? { statistics: s.statistics } : {}),
    ...(s.contentDetails ? { contentDetails: { duration: s.contentDetails.duration } } : {}),
    ...(s.snippet ? { snippet: { publishedAt: s.snippet.publishTime } } : {}),
  };
}

/** A caller's options checked before the run starts (a mistake ends the run as `failed`, exit 64). */
function checkOptions(options: BackfillOptions, batchSize: number): void {
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > BACKFILL_BATCH) {
    throw new InvalidArgumentError('batchSize', `must be an integer from 1 to ${BACKFILL_BATCH}`);
  }
  if (options.maxUnits !== undefined && (!Number.isInteger(options.maxUnits) || options.maxUnits < 1)) {
    throw new InvalidArgumentError('maxUnits', 'must be an integer >= 1');
  }
  if (options.minAgeMs !== undefined && !(Number.isFinite(options.minAgeMs) && options.minAgeMs >= 0)) {
    throw new InvalidArgumentError('minAgeMs', 'must be a number of ms >= 0');
  }
}

/** One batch's fresh resources from the upstream, by the method the credential's profile favours. */
async function fetchVideos(
  client: YouTubeClient,
  method: BackfillMethod,
  ids: readonly string[],
  signal?: AbortSignal,
): Promise<VideoResource[]> {
  const options = signal ? { signal } : {};
  return method === 'videos.batchGetStats'
    ? (await client.videosBatchGetStats(ids, options)).items.map(statsToVideo)
    : (await client.videosListByIds(ids, options)).items;
}

/**
 * Where a run resumes the pass (a new pass when none is under way) and the refresh time before which
 * a video is due; counts the videos skipped as too fresh (refreshed within minAge of the run's start).
 */
function resumePass(
  ctx: JobContext,
  run: JobRun,
  cursorName: string,
  minAgeMs: number | undefined,
): { cursor: PassCursor; refreshedBefore: number } {
  const cursor = readCursor(ctx.cache.getCursor(cursorName)) ?? { pass: run.startedAt, after: null };
  const freshSince = run.startedAt - (minAgeMs ?? ctx.config.backfill.minAgeMs);
  run.skipped = ctx.cache.countRefreshedSince(freshSince);
  return { cursor, refreshedBefore: Math.min(cursor.pass, freshSince) };
}

/** Refresh cached videos through the guard's backfill tier. Returns a result value; only bugs throw. */
export async function runBackfill(ctx: JobContext, options: BackfillOptions = {}): Promise<JobResult> {
  let credentialId = options.credential ?? ctx.config.credentials[0]?.id ?? 'default';
  const batchSize = options.batchSize ?? BACKFILL_BATCH;
  const early = new JobRun(ctx, 'backfill', credentialId, options.signal);
  try {
    checkOptions(options, batchSize);
    credentialId = jobCredential(ctx, options.credential);
  } catch (e) {
    return early.guarded(() => Promise.reject(e));
  }
  const credential = ctx.config.credential(credentialId);
  const method = backfillMethod(credential);
  const cost = methodOf(credential, method).cost;
  const run = new JobRun(ctx, 'backfill', credentialId, options.signal, options.inFlightSignal);
  const cursorName = backfillCursorName(credentialId);
  const tag = spendTag('backfill', method);
  const progress = options.progress;

  // The bar or the progress lines end inside the run, before its own last line ("backfill done"):
  // a progress line after that would read as if the pass went on.
  return run.guarded(async (): Promise<JobEnd | undefined> => {
    try {
      const client = ctx.upstream.get(credentialId);
      const { cursor, refreshedBefore } = resumePass(ctx, run, cursorName, options.minAgeMs);
      if (progress) progress.start(countDue(ctx.cache, cursor.after, refreshedBefore));
      let done = 0;
      for (let batch = 1; batch <= MAX_BATCHES; batch++) {
        const due = ctx.cache.videosDueForRefresh(batchSize, cursor.after, { refreshedBefore });
        if (due.ids.length === 0) {
          ctx.cache.setCursor(cursorName, null);
          // A run that did nothing says why, rather than `done 0 0 0`.
          if (batch === 1 && run.skipped)
            return {
              outcome: 'done',
              reason: `nothing due: the ${run.skipped.toLocaleString('en-US')} cached video${run.skipped === 1 ? ' was' : 's were'} refreshed within backfill.minAge (${formatDuration(options.minAgeMs ?? ctx.config.backfill.minAgeMs)}) and ${run.skipped === 1 ? 'is' : 'are'} left alone`,
            };
          return undefined;
        }
        const left = options.maxUnits === undefined ? Number.POSITIVE_INFINITY : options.maxUnits - run.units;
        if (left < cost) {
          return {
            outcome: 'done',
            reason: `spent the --max-units limit (${options.maxUnits}); the next run resumes here`,
          };
        }
        const started = performance.now();
        const got = await run.call(
          { credential: credentialId, method, tier: 'backfill', tag },
          (signal) => fetchVideos(client, method, due.ids, signal),
          { attempts: Math.max(1, Math.min(3, Math.floor(left / cost))) },
        );
        if (!got.ok) return got.end;
        const written = ctx.cache.upsertVideos(got.value);
        // Index as it goes: a long run (one following its pacing line for hours) would otherwise
        // index everything it wrote at its end, for seconds, and its next tick would find it busy.
        if (batch % FLUSH_EVERY === 0) ctx.cache.flush();
        cursor.after = due.cursor;
        // The whole pass is done when the cache had fewer due than a batch.
        ctx.cache.setCursor(cursorName, due.cursor === null ? null : JSON.stringify(cursor));
        run.pages++;
        run.items += got.value.length;
        done += due.ids.length;
        progress?.update(done, { units: run.units, batches: run.pages });
        run.logger.info(
          {
            method,
            batch,
            ids: due.ids.length,
            refreshed: got.value.length,
            missing: due.ids.length - got.value.length,
            updated: written.updated,
            attempts: got.attempts,
            units: run.units,
            ms: Math.round(performance.now() - started),
          },
          'backfill batch written',
        );
        if (due.cursor === null) return undefined;
        if (run.signal?.aborted)
          return { outcome: 'aborted', reason: 'aborted after a whole batch was written' };
      }
      return undefined;
    } finally {
      progress?.stop();
    }
  });
}

/**
 * Videos the next backfill run of `credentialId` would refresh: the rest of the pass it resumes, or
 * every cached video when it starts a new one. Reads the cache only.
 */
export function backfillDue(
  cache: JobContext['cache'],
  credentialId: string,
  minAgeMs: number,
  nowMs = Date.now(),
): number {
  const cursor = readCursor(cache.getCursor(backfillCursorName(credentialId))) ?? {
    pass: nowMs,
    after: null,
  };
  return countDue(cache, cursor.after, Math.min(cursor.pass, nowMs - minAgeMs));
}

/** Videos still due in the pass (for the progress bar's total). */
function countDue(cache: JobContext['cache'], from: string | null, refreshedBefore: number): number {
  let n = 0;
  let after = from;
  for (let i = 0; i < 1_000; i++) {
    const page = cache.videosDueForRefresh(10_000, after, { refreshedBefore });
    n += page.ids.length;
    if (page.cursor === null) break;
    after = page.cursor;
  }
  return n;
}
