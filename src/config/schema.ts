/**
 * The core's part of the config file's schema (zod, its mini API: src/zod-mini.ts), the pieces an
 * application's part is built from (durations, amounts, ids), and the schema of a whole file: the
 * core's keys and every part's (`schemaOf`). It only checks shapes and fills defaults; names that
 * depend on each other (methods of a profile, buckets, budgets' credentials, reserve < quota) are
 * checked when the file is resolved (resolve.ts), so every problem comes back with its path.
 */

import * as z from 'zod/mini';
import { profileSchema } from '../profiles/schema.js';
import '../zod-mini.js';
import {
  DEFAULT_API_KEY_ENV,
  DEFAULT_COUNT_DEADLINE_MS,
  DEFAULT_COUNT_MAX_RESPONSE_BYTES,
  DEFAULT_MONITORING_URL,
  DEFAULT_RECONCILE_CRON,
  DEFAULT_RECONCILE_LAG_MS,
  DEFAULT_WINDOW,
  MAX_WINDOW_MS,
} from './defaults.js';
import { formatDuration, parseDuration } from './duration.js';
import { type ConfigPart, PACKAGED_PART_KEYS } from './parts.js';
import { TIERS } from './tiers.js';

const DURATION_HINT = 'must be a duration such as 30s, 15m, 24h (or a number of ms)';

/** A window the ledger keeps: a whole number of ms from 1 to MAX_WINDOW_MS. */
function windowProblem(ms: number): string | undefined {
  if (!Number.isInteger(ms)) return 'must be a whole number of milliseconds';
  if (ms > MAX_WINDOW_MS)
    return `must be at most ${formatDuration(MAX_WINDOW_MS)} (the longest window the ledger keeps)`;
  return undefined;
}

/** What a transform is given besides the value: where its issues go. */
export interface TransformContext {
  value: unknown;
  issues: z.core.$ZodRawIssue[];
}

/** A transform's issue, as the classic API's `ctx.addIssue({ code: 'custom', message })` makes it. */
export function fail(ctx: TransformContext, message: string): never {
  ctx.issues.push({ code: 'custom', message, input: ctx.value });
  return z.NEVER;
}

/** `schema` then `fn` (the classic API's `schema.transform(fn)`). */
export function transformed<I extends z.ZodMiniType, O>(
  schema: I,
  fn: (v: z.output<I>, ctx: TransformContext) => O,
) {
  return z.pipe(schema, z.transform(fn));
}

const numberOrString = () => z.union([z.number(), z.string()]);

function durationSchema(allowZero: boolean) {
  return transformed(numberOrString(), (v, ctx) => {
    const ms = parseDuration(v);
    if (ms === undefined || ms < 0 || (ms === 0 && !allowZero)) {
      return fail(ctx, allowZero ? DURATION_HINT : `${DURATION_HINT}, above 0`);
    }
    return ms;
  });
}

/** A positive duration → ms. */
export const duration = durationSchema(false);
/** A positive duration the ledger accepts as a window → ms. */
const windowDuration = transformed(duration, (ms, ctx) => {
  const problem = windowProblem(ms);
  return problem === undefined ? ms : fail(ctx, problem);
});
/** A duration that may be 0 → ms. */
export const durationOrZero = durationSchema(true);

/** A number of units, or a percentage of the bucket's quota (`5%`). */
export type Amount = { units: number } | { percent: number };
const amount = transformed(numberOrString(), (v, ctx): Amount => {
  if (typeof v === 'number') {
    if (v >= 0 && Number.isFinite(v)) return { units: v };
  } else {
    const m = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(v);
    if (m && Number(m[1]) < 100) return { percent: Number(m[1]) };
    if (/^\s*\d+\s*$/.test(v)) return { units: Number(v) };
  }
  return fail(ctx, 'must be a number of units >= 0 or a percentage below 100% (e.g. 5%)');
});

/** `sliding` (24 h), a sliding duration (`24h`), or `upstream-day`. */
export type RawWindow = { kind: 'sliding'; ms: number } | { kind: 'upstream-day' };
const windowSpec = transformed(numberOrString(), (v, ctx): RawWindow => {
  if (v === 'upstream-day') return { kind: 'upstream-day' };
  if (v === 'sliding') return { kind: 'sliding', ms: parseDuration(DEFAULT_WINDOW)! };
  const ms = parseDuration(v);
  const problem = ms !== undefined && ms > 0 ? windowProblem(ms) : undefined;
  if (ms !== undefined && ms > 0 && problem === undefined) return { kind: 'sliding', ms };
  return fail(ctx, problem ?? `must be 'sliding', 'upstream-day' or a duration such as 24h`);
});

export const positiveIntSchema = z.number().check(z.int(), z.positive());
const tier = z.enum(TIERS);

const pace = z.strictObject({ limit: positiveIntSchema, window: windowDuration });

const bucket = z.strictObject({
  quota: z.optional(positiveIntSchema),
  window: z.optional(windowSpec),
  reserve: z.optional(amount),
  backfillHeadroom: z.optional(amount),
  pace: z.optional(pace),
});

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const id = z.string().check(z.regex(ID_PATTERN, 'must be 1-64 letters, digits, ".", "_" or "-"'));

const credential = z.strictObject({
  id,
  apiKeyEnv: z._default(
    z.string().check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')),
    DEFAULT_API_KEY_ENV,
  ),
  /** A built-in profile or one of `profiles`. */
  profile: z._default(id, 'youtube-2026'),
  timeZone: z.optional(z.string()),
  /** The Google Cloud project the credential's key belongs to: what `reconcile` reads the count of. */
  project: z.optional(
    z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9.:_-]{0,99}$/, 'must be a Google Cloud project id')),
  ),
  /** Defaults for every bucket of the credential. */
  window: z.optional(windowSpec),
  reserve: z.optional(amount),
  backfillHeadroom: z.optional(amount),
  pace: z.optional(pace),
  buckets: z._default(z.record(z.string(), bucket), {}),
});

const budget = z.strictObject({
  id,
  /** Omitted: the budget applies to every credential (each gets its own log). */
  credential: z.optional(z.string()),
  /** Omitted: inferred from `methods` (which must then share one bucket). */
  bucket: z.optional(z.string()),
  methods: z.optional(z.array(z.string()).check(z.minLength(1))),
  tiers: z.optional(z.array(tier).check(z.minLength(1))),
  limit: positiveIntSchema,
  window: windowDuration,
});

/** Calls per upstream day that people or scripts make on one method (for `plan`). */
const expected = z.strictObject({
  id: z.optional(id),
  /** Omitted: the first credential. */
  credential: z.optional(z.string()),
  method: z.string().check(z.minLength(1)),
  tier: z._default(tier, 'manual'),
  callsPerDay: positiveIntSchema,
});

const store = z.union([
  z.string(),
  z.strictObject({
    url: z.optional(z.string()),
    keyPrefix: z.optional(z.string().check(z.maxLength(100))),
    commandTimeoutMs: z.optional(duration),
    connectTimeoutMs: z.optional(duration),
    waitReplicas: z.optional(z.number().check(z.int(), z.gte(0), z.lte(16))),
    waitTimeoutMs: z.optional(duration),
  }),
]);

/** The core's keys of a config file. */
export const coreShape = {
  store: z.optional(store),
  /** Quota models of the config's own (the built-in ones are youtube-2026 and youtube-classic). */
  profiles: z._default(z.record(id, profileSchema), {}),
  credentials: z.prefault(z.array(credential).check(z.minLength(1)), [{ id: 'default' }]),
  budgets: z._default(z.array(budget), []),
  /** Spending outside the configured jobs (people, scripts), counted by `plan`. */
  expected: z._default(z.array(expected), []),
  maxSleep: z._default(duration, 30_000),
  /** Holding the ledger against the upstream's own count (`quota-guard reconcile`). */
  reconcile: z.prefault(
    z.strictObject({
      /** Minutes younger than this are not compared yet (the upstream's count is late). */
      lag: z._default(durationOrZero, DEFAULT_RECONCILE_LAG_MS),
      /** When `run` and `serve` reconcile (cron, UTC). */
      schedule: z._default(z.string(), DEFAULT_RECONCILE_CRON),
      /** A service account's key file; omitted: Application Default Credentials. */
      auth: z.optional(z.strictObject({ keyFile: z.string().check(z.minLength(1)) })),
      monitoring: z.prefault(
        z.strictObject({
          baseUrl: z._default(
            z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
            DEFAULT_MONITORING_URL,
          ),
          deadline: z._default(duration, DEFAULT_COUNT_DEADLINE_MS),
          maxResponseBytes: z._default(positiveIntSchema, DEFAULT_COUNT_MAX_RESPONSE_BYTES),
          /** Overrides the profile's `usageMetric`. */
          metricType: z.optional(z.string().check(z.minLength(1))),
        }),
        {},
      ),
      /** Per bucket: the upstream's quota metric, over the profile's `upstreamNames.<bucket>.metric`. */
      quotaMetrics: z._default(z.record(z.string(), z.string().check(z.minLength(1))), {}),
    }),
    {},
  ),
  storeDown: z.prefault(
    z.strictObject({
      default: z._default(z.enum(['auto', 'open', 'closed']), 'auto'),
      openMaxCost: z._default(z.number().check(z.int(), z.gte(0)), 1),
      sites: z._default(z.record(z.string(), z.enum(['open', 'closed'])), {}),
    }),
    {},
  ),
};

/** What the schema returns for the core's keys. */
export type RawConfig = z.output<z.ZodMiniObject<typeof coreShape, z.core.$strict>>;
export type RawCredential = RawConfig['credentials'][number];

const schemas = new Map<string, z.ZodMiniType>();

/**
 * The schema of a whole file: the core's keys and each part's, unknown keys refused (the keys of a
 * part of this package not read here are let through unchecked: PACKAGED_PART_KEYS). A key owned
 * twice is a bug in the parts (thrown, never a config problem).
 */
export function schemaOf(parts: readonly ConfigPart[]): z.ZodMiniType<Record<string, unknown>> {
  const name = parts.map((p) => p.name).join(',');
  let schema = schemas.get(name);
  if (!schema) {
    const shape: Record<string, z.core.$ZodType> = { ...coreShape };
    for (const part of parts) {
      for (const key of Object.keys(part.shape)) {
        if (Object.hasOwn(shape, key))
          throw new Error(`config part '${part.name}' redefines the key '${key}'`);
      }
      Object.assign(shape, part.shape);
    }
    // The keys of this package's applications whose part is not read here: left unchecked.
    for (const [name, keys] of Object.entries(PACKAGED_PART_KEYS)) {
      if (parts.some((p) => p.name === name)) continue;
      for (const key of keys) if (!Object.hasOwn(shape, key)) shape[key] = z.optional(z.unknown());
    }
    schema = z.strictObject(shape);
    schemas.set(name, schema);
  }
  return schema as z.ZodMiniType<Record<string, unknown>>;
}
