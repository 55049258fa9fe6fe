/**
 * The YouTube application's keys of a config file (zod, its mini API), built from the core's
 * pieces (durations, ids): `cache`, `upstream`, `regions`, `categories`, `schedules`, `backfill`.
 * Shapes and defaults only; what depends on the core's settings (a budget that paces the backfill)
 * and what needs a library (a cron expression, a time zone) is checked by resolver.ts.
 */
import * as z from 'zod/mini';
import { parseDuration } from '../../config/duration.js';
import { duration, durationOrZero, positiveIntSchema } from '../../config/schema.js';
import '../../zod-mini.js';
import {
  DEFAULT_BACKFILL_CRON,
  DEFAULT_BACKFILL_MIN_AGE_MS,
  DEFAULT_BASE_URL,
  DEFAULT_MAX_PAGES,
  DEFAULT_REGIONS,
  DEFAULT_TRENDING_CRON,
  DEFAULT_UPSTREAM_DEADLINE_MS,
  DEFAULT_UPSTREAM_MAX_RESPONSE_BYTES,
} from '../defaults.js';

const scheduleShape = (cron: string, stagger: string) => ({
  cron: z._default(z.string(), cron),
  stagger: z._default(durationOrZero, parseDuration(stagger)!),
  timeZone: z._default(z.string(), 'UTC'),
});

const schedule = (cron: string, stagger: string) =>
  z.prefault(z.strictObject(scheduleShape(cron, stagger)), {});

/** The trending schedule also says how many pages of each chart a run fetches at most. */
const trendingSchedule = z.prefault(
  z.strictObject({
    ...scheduleShape(DEFAULT_TRENDING_CRON, '2m'),
    maxPages: z._default(positiveIntSchema, DEFAULT_MAX_PAGES),
  }),
  {},
);

/** The application's keys. */
export const youtubeShape = {
  /** Omitted: cache.db in the data directory (config/paths.ts). */
  cache: z.prefault(z.strictObject({ path: z.optional(z.string().check(z.minLength(1))) }), {}),
  upstream: z.prefault(
    z.strictObject({
      baseUrl: z._default(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }), DEFAULT_BASE_URL),
      timeout: z._default(duration, 10_000),
      deadline: z._default(duration, DEFAULT_UPSTREAM_DEADLINE_MS),
      maxResponseBytes: z._default(positiveIntSchema, DEFAULT_UPSTREAM_MAX_RESPONSE_BYTES),
    }),
    {},
  ),
  /** `[]`: no trending job (a config for the backfill, or for another API altogether). */
  regions: z._default(
    z.array(z.string().check(z.regex(/^[A-Za-z]{2}$/, 'must be a two-letter region code (ISO 3166-1)'))),
    [...DEFAULT_REGIONS],
  ),
  categories: z._default(
    z.record(z.string(), z.array(z.union([z.string().check(z.minLength(1)), z.number().check(z.int())]))),
    {},
  ),
  schedules: z.prefault(
    z.strictObject({
      trending: trendingSchedule,
      backfill: schedule(DEFAULT_BACKFILL_CRON, '0s'),
    }),
    {},
  ),
  backfill: z.prefault(
    z.strictObject({
      /** A video refreshed less than this long ago (by trending or the backfill) is skipped. */
      minAge: z._default(durationOrZero, DEFAULT_BACKFILL_MIN_AGE_MS),
      /** `day`, `none`, or the id of a budget that paces it. */
      pace: z._default(z.string().check(z.minLength(1)), 'day'),
      /** Hold back the units today's remaining scheduled runs need from the backfill. */
      holdScheduled: z._default(z.boolean(), true),
    }),
    {},
  ),
};

export type YouTubeShape = typeof youtubeShape;
