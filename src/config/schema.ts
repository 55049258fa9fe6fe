/**
 * The config file's schema (zod). It only checks shapes and fills defaults; names that depend on
 * each other (methods of a profile, buckets, budgets' credentials, reserve < quota) are checked
 * when the file is resolved (load.ts), so every problem comes back with its path.
 */
import * as z from 'zod';
import { profileSchema } from '../profiles/schema.js';
import {
  DEFAULT_API_KEY_ENV,
  DEFAULT_BACKFILL_CRON,
  DEFAULT_BACKFILL_MIN_AGE_MS,
  DEFAULT_BASE_URL,
  DEFAULT_MAX_PAGES,
  DEFAULT_REGIONS,
  DEFAULT_TRENDING_CRON,
  DEFAULT_WINDOW,
  MAX_WINDOW_MS,
} from './defaults.js';
import { formatDuration, parseDuration } from './duration.js';
import { TIERS } from './types.js';

const DURATION_HINT = 'must be a duration such as 30s, 15m, 24h (or a number of ms)';

/** A window the ledger keeps: a whole number of ms from 1 to MAX_WINDOW_MS. */
function windowProblem(ms: number): string | undefined {
  if (!Number.isInteger(ms)) return 'must be a whole number of milliseconds';
  if (ms > MAX_WINDOW_MS)
    return `must be at most ${formatDuration(MAX_WINDOW_MS)} (the longest window the ledger keeps)`;
  return undefined;
}

function durationSchema(allowZero: boolean) {
  return z.union([z.number(), z.string()]).transform((v, ctx) => {
    const ms = parseDuration(v);
    if (ms === undefined || ms < 0 || (ms === 0 && !allowZero)) {
      ctx.addIssue({ code: 'custom', message: allowZero ? DURATION_HINT : `${DURATION_HINT}, above 0` });
      return z.NEVER;
    }
    return ms;
  });
}

/** A positive duration → ms. */
export const duration = durationSchema(false);
/** A positive duration the ledger accepts as a window → ms. */
const windowDuration = duration.transform((ms, ctx) => {
  const problem = windowProblem(ms);
  if (problem === undefined) return ms;
  ctx.addIssue({ code: 'custom', message: problem });
  return z.NEVER;
});
/** A duration that may be 0 → ms. */
export const durationOrZero = durationSchema(true);

/** A number of units, or a percentage of the bucket's quota (`5%`). */
export type Amount = { units: number } | { percent: number };
const amount = z.union([z.number(), z.string()]).transform((v, ctx): Amount => {
  if (typeof v === 'number') {
    if (v >= 0 && Number.isFinite(v)) return { units: v };
  } else {
    const m = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(v);
    if (m && Number(m[1]) < 100) return { percent: Number(m[1]) };
    if (/^\s*\d+\s*$/.test(v)) return { units: Number(v) };
  }
  ctx.addIssue({
    code: 'custom',
    message: 'must be a number of units >= 0 or a percentage below 100% (e.g. 5%)',
  });
  return z.NEVER;
});

/** `sliding` (24 h), a sliding duration (`24h`), or `upstream-day`. */
export type RawWindow = { kind: 'sliding'; ms: number } | { kind: 'upstream-day' };
const windowSpec = z.union([z.number(), z.string()]).transform((v, ctx): RawWindow => {
  if (v === 'upstream-day') return { kind: 'upstream-day' };
  if (v === 'sliding') return { kind: 'sliding', ms: parseDuration(DEFAULT_WINDOW)! };
  const ms = parseDuration(v);
  const problem = ms !== undefined && ms > 0 ? windowProblem(ms) : undefined;
  if (ms !== undefined && ms > 0 && problem === undefined) return { kind: 'sliding', ms };
  ctx.addIssue({
    code: 'custom',
    message: problem ?? `must be 'sliding', 'upstream-day' or a duration such as 24h`,
  });
  return z.NEVER;
});

const positiveIntSchema = z.number().int().positive();
const tier = z.enum(TIERS);

const pace = z.strictObject({ limit: positiveIntSchema, window: windowDuration });

const bucket = z.strictObject({
  quota: positiveIntSchema.optional(),
  window: windowSpec.optional(),
  reserve: amount.optional(),
  backfillHeadroom: amount.optional(),
  pace: pace.optional(),
});

export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const id = z.string().regex(ID_PATTERN, 'must be 1-64 letters, digits, ".", "_" or "-"');

const credential = z.strictObject({
  id,
  apiKeyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
    .default(DEFAULT_API_KEY_ENV),
  /** A built-in profile or one of `profiles`. */
  profile: id.default('youtube-2026'),
  timeZone: z.string().optional(),
  /** Defaults for every bucket of the credential. */
  window: windowSpec.optional(),
  reserve: amount.optional(),
  backfillHeadroom: amount.optional(),
  pace: pace.optional(),
  buckets: z.record(z.string(), bucket).default({}),
});

const budget = z.strictObject({
  id,
  /** Omitted: the budget applies to every credential (each gets its own log). */
  credential: z.string().optional(),
  /** Omitted: inferred from `methods` (which must then share one bucket). */
  bucket: z.string().optional(),
  methods: z.array(z.string()).min(1).optional(),
  tiers: z.array(tier).min(1).optional(),
  limit: positiveIntSchema,
  window: windowDuration,
});

/** Calls per upstream day that people or scripts make on one method (for `plan`). */
const expected = z.strictObject({
  id: id.optional(),
  /** Omitted: the first credential. */
  credential: z.string().optional(),
  method: z.string().min(1),
  tier: tier.default('manual'),
  callsPerDay: positiveIntSchema,
});

const scheduleShape = (cron: string, stagger: string) => ({
  cron: z.string().default(cron),
  stagger: durationOrZero.default(parseDuration(stagger)!),
  timeZone: z.string().default('UTC'),
});

const schedule = (cron: string, stagger: string) => z.strictObject(scheduleShape(cron, stagger)).prefault({});

/** The trending schedule also says how many pages of each chart a run fetches at most. */
const trendingSchedule = z
  .strictObject({
    ...scheduleShape(DEFAULT_TRENDING_CRON, '2m'),
    maxPages: positiveIntSchema.default(DEFAULT_MAX_PAGES),
  })
  .prefault({});

const store = z.union([
  z.string(),
  z.strictObject({
    url: z.string().optional(),
    keyPrefix: z.string().max(100).optional(),
    commandTimeoutMs: duration.optional(),
    connectTimeoutMs: duration.optional(),
    waitReplicas: z.number().int().min(0).max(16).optional(),
    waitTimeoutMs: duration.optional(),
  }),
]);

export const configSchema = z.strictObject({
  store: store.optional(),
  /** Quota models of the config's own (the built-in ones are youtube-2026 and youtube-classic). */
  profiles: z.record(id, profileSchema).default({}),
  /** Omitted: cache.db in the data directory (config/paths.ts). */
  cache: z.strictObject({ path: z.string().min(1).optional() }).prefault({}),
  upstream: z
    .strictObject({
      baseUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).default(DEFAULT_BASE_URL),
      timeout: duration.default(10_000),
    })
    .prefault({}),
  credentials: z
    .array(credential)
    .min(1)
    .prefault([{ id: 'default' }]),
  budgets: z.array(budget).default([]),
  regions: z
    .array(z.string().regex(/^[A-Za-z]{2}$/, 'must be a two-letter region code (ISO 3166-1)'))
    .min(1)
    .default([...DEFAULT_REGIONS]),
  categories: z.record(z.string(), z.array(z.union([z.string().min(1), z.number().int()]))).default({}),
  schedules: z
    .strictObject({
      trending: trendingSchedule,
      backfill: schedule(DEFAULT_BACKFILL_CRON, '0s'),
    })
    .prefault({}),
  backfill: z
    .strictObject({
      /** A video refreshed less than this long ago (by trending or the backfill) is skipped. */
      minAge: durationOrZero.default(DEFAULT_BACKFILL_MIN_AGE_MS),
      /** `day`, `none`, or the id of a budget that paces it. */
      pace: z.string().min(1).default('day'),
      /** Hold back the units today's remaining scheduled runs need from the backfill. */
      holdScheduled: z.boolean().default(true),
    })
    .prefault({}),
  /** Spending outside the configured jobs (people, scripts), counted by `plan`. */
  expected: z.array(expected).default([]),
  maxSleep: duration.default(30_000),
  storeDown: z
    .strictObject({
      default: z.enum(['auto', 'open', 'closed']).default('auto'),
      openMaxCost: z.number().int().min(0).default(1),
      sites: z.record(z.string(), z.enum(['open', 'closed'])).default({}),
    })
    .prefault({}),
});

export type RawConfig = z.output<typeof configSchema>;
export type RawCredential = RawConfig['credentials'][number];
