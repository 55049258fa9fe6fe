/**
 * Resolving a config the schema accepted: every default filled in from the profiles and
 * config/defaults.ts, every cross-reference checked (credentials, buckets, budgets, methods,
 * regions, schedules, the store URL), each problem collected with its path.
 */
import { join } from 'node:path';
import { isValidTimeZone } from '../calendar-day.js';
import { getProfile, type MethodSpec, PROFILES, type QuotaProfile, toProfile } from '../profiles/profiles.js';
import { nodeCron } from '../time-libs.js';
import {
  DEFAULT_BACKFILL_CRON,
  DEFAULT_BACKFILL_HEADROOM,
  DEFAULT_RECONCILE_CRON,
  DEFAULT_RESERVE,
  DEFAULT_TRENDING_CRON,
  DEFAULT_WINDOW,
  STORE_ENV,
} from './defaults.js';
import { parseDuration } from './duration.js';
import { absolutePath, configDir, DEFAULT_CACHE_FILE, DEFAULT_LEDGER_FILE, dataDir } from './paths.js';
import { formatPath, type Problems } from './problems.js';
import { ISO_3166_1_ALPHA_2 } from './regions.js';
import type { Amount, RawConfig, RawCredential } from './schema.js';
import { parseStoreUrl } from './store-url.js';
import {
  type BackfillPace,
  type BucketConfig,
  type BudgetConfig,
  type Config,
  type CredentialConfig,
  type Env,
  type ExpectedSpendConfig,
  type ReconcileConfig,
  type ScheduleConfig,
  type StoreConfig,
  TIERS,
  type Tier,
} from './types.js';

export type Resolved = Omit<Config, 'credential' | 'region' | 'apiKey'>;

export function resolve(raw: RawConfig, env: Env, problems: Problems, source: string | undefined): Resolved {
  const custom: Record<string, QuotaProfile> = {};
  for (const [id, data] of Object.entries(raw.profiles)) {
    if (Object.hasOwn(PROFILES, id))
      problems.add(formatPath(['profiles', id]), `'${id}' is a built-in profile; give yours another id`);
    else custom[id] = toProfile(id, data);
  }
  const profiles = { ...PROFILES, ...custom };
  const credentials = raw.credentials.flatMap((c, i) => {
    const profile = getProfile(c.profile, custom);
    if (!profile) {
      problems.add(
        `credentials[${i}].profile`,
        `unknown profile '${c.profile}' (built in: ${Object.keys(PROFILES).join(', ')}${Object.keys(custom).length ? `; in profiles: ${Object.keys(custom).join(', ')}` : ''})`,
      );
      return [];
    }
    return [resolveCredential(c, i, profile, problems)];
  });
  const seen = new Set<string>();
  raw.credentials.forEach((c, i) => {
    if (seen.has(c.id)) problems.add(`credentials[${i}].id`, `duplicate credential '${c.id}'`);
    seen.add(c.id);
  });
  resolveBudgets(raw, credentials, problems);

  const regions = [...new Set(raw.regions.map((r) => r.toUpperCase()))];
  raw.regions.forEach((r, i) => {
    if (!ISO_3166_1_ALPHA_2.has(r.toUpperCase())) {
      problems.add(`regions[${i}]`, `'${r}' is not an ISO 3166-1 region code`, 'QG_UNKNOWN_REGION');
    }
  });
  const categories: Record<string, string[]> = Object.fromEntries(regions.map((r) => [r, []]));
  for (const [key, list] of Object.entries(raw.categories)) {
    const region = key.toUpperCase();
    if (!regions.includes(region)) {
      problems.add(
        formatPath(['categories', key]),
        `region '${key}' is not in regions (${regions.join(', ')})`,
        'QG_UNKNOWN_REGION',
      );
      continue;
    }
    categories[region] = [...new Set(list.map(String))];
  }

  const schedules = {
    trending: {
      ...resolveSchedule(raw.schedules.trending, 'schedules.trending', problems),
      maxPages: raw.schedules.trending.maxPages,
    },
    backfill: resolveSchedule(raw.schedules.backfill, 'schedules.backfill', problems),
  };

  return {
    store: resolveStore(raw, env, problems, source),
    cache: {
      path:
        raw.cache.path === undefined
          ? join(dataDir(env).path, DEFAULT_CACHE_FILE)
          : absolutePath(raw.cache.path, configDir(source)),
    },
    upstream: {
      baseUrl: raw.upstream.baseUrl.replace(/\/+$/, ''),
      timeoutMs: raw.upstream.timeout,
      deadlineMs: raw.upstream.deadline,
      maxResponseBytes: raw.upstream.maxResponseBytes,
    },
    credentials,
    regions,
    categories,
    schedules,
    backfill: {
      minAgeMs: raw.backfill.minAge,
      pace: resolvePace(raw, credentials, problems),
      holdScheduled: raw.backfill.holdScheduled,
    },
    expected: resolveExpected(raw, credentials, problems),
    maxSleepMs: raw.maxSleep,
    storeDown: { ...raw.storeDown },
    reconcile: resolveReconcile(raw, credentials, problems, source),
    profiles,
  };
}

function resolveReconcile(
  raw: RawConfig,
  credentials: readonly CredentialConfig[],
  problems: Problems,
  source: string | undefined,
): ReconcileConfig {
  const r = raw.reconcile;
  const { cron, timeZone } = resolveSchedule(
    { cron: r.schedule, stagger: 0, timeZone: 'UTC' },
    'reconcile.schedule',
    problems,
  );
  const buckets = new Set(credentials.flatMap((c) => Object.keys(c.buckets)));
  for (const bucket of Object.keys(r.quotaMetrics)) {
    if (!buckets.has(bucket)) {
      problems.add(
        formatPath(['reconcile', 'quotaMetrics', bucket]),
        `unknown bucket '${bucket}' (the credentials' buckets: ${[...buckets].join(', ')})`,
        'QG_UNKNOWN_BUCKET',
      );
    }
  }
  return {
    lagMs: r.lag,
    schedule: { cron, timeZone },
    ...(r.auth !== undefined ? { keyFile: absolutePath(r.auth.keyFile, configDir(source)) } : {}),
    monitoring: {
      baseUrl: r.monitoring.baseUrl.replace(/\/+$/, ''),
      deadlineMs: r.monitoring.deadline,
      maxResponseBytes: r.monitoring.maxResponseBytes,
      ...(r.monitoring.metricType !== undefined ? { metricType: r.monitoring.metricType } : {}),
    },
    quotaMetrics: { ...r.quotaMetrics },
  };
}

function amountOf(a: Amount, quota: number): number {
  return 'units' in a ? a.units : Math.ceil((quota * a.percent) / 100);
}

function resolveCredential(
  c: RawCredential,
  i: number,
  profile: QuotaProfile,
  problems: Problems,
): CredentialConfig {
  const at = `credentials[${i}]`;
  // A profile's zone was checked with the profile (its schema; the built-in ones by a test).
  const timeZone = c.timeZone ?? profile.timeZone;
  if (c.timeZone !== undefined && !isValidTimeZone(c.timeZone))
    problems.add(`${at}.timeZone`, `unknown time zone '${c.timeZone}'`);

  for (const name of Object.keys(c.buckets)) {
    if (!(name in profile.buckets)) {
      problems.add(
        formatPath(['credentials', i, 'buckets', name]),
        `unknown bucket '${name}' (profile ${profile.id} has ${Object.keys(profile.buckets).join(', ')})`,
        'QG_UNKNOWN_BUCKET',
      );
    }
  }

  const buckets: Record<string, BucketConfig> = {};
  for (const [name, base] of Object.entries(profile.buckets)) {
    const spec = c.buckets[name] ?? {};
    const bucketAt = formatPath(['credentials', i, 'buckets', name]);
    const where = (key: 'reserve' | 'backfillHeadroom') =>
      spec[key] !== undefined ? `${bucketAt}.${key}` : `${at}.${key}`;
    const quota = spec.quota ?? base.quota;
    const window = spec.window ?? c.window ?? { kind: 'sliding', ms: parseDuration(DEFAULT_WINDOW)! };
    const reserveSpec = spec.reserve ?? c.reserve ?? { percent: Number.parseFloat(DEFAULT_RESERVE) };
    const headroomSpec = spec.backfillHeadroom ??
      c.backfillHeadroom ?? { percent: Number.parseFloat(DEFAULT_BACKFILL_HEADROOM) };
    const reserve = amountOf(reserveSpec, quota);
    const backfillHeadroom = amountOf(headroomSpec, quota);
    let ok = true;
    if (!Number.isInteger(reserve)) {
      problems.add(where('reserve'), 'must be a whole number of units');
      ok = false;
    } else if (reserve >= quota) {
      // Set on the credential, it applies to every bucket: say which one it does not fit.
      problems.add(
        where('reserve'),
        spec.reserve !== undefined
          ? `must be less than quota (${quota})`
          : `${reserve} must be less than the quota of bucket '${name}' (${quota}); set a smaller reserve, or one on ${bucketAt}`,
      );
      ok = false;
    }
    if (!Number.isInteger(backfillHeadroom)) {
      problems.add(where('backfillHeadroom'), 'must be a whole number of units');
      ok = false;
    } else if (ok && reserve + backfillHeadroom >= quota) {
      problems.add(
        where('backfillHeadroom'),
        `must be less than quota − reserve (${quota - reserve})${spec.backfillHeadroom === undefined ? ` of bucket '${name}'` : ''}`,
      );
    }
    const pace = spec.pace ?? c.pace;
    buckets[name] = {
      id: name,
      quota,
      window,
      reserve,
      backfillHeadroom,
      ceilings: {
        scheduled: quota - reserve,
        backfill: quota - reserve - backfillHeadroom,
        manual: quota,
      },
      ...(pace ? { pace: { limit: pace.limit, windowMs: pace.window } } : {}),
    };
  }

  const methods: Record<string, MethodSpec> = {};
  for (const [m, spec] of Object.entries(profile.methods)) methods[m] = { ...spec };

  return {
    id: c.id,
    apiKeyEnv: c.apiKeyEnv,
    profile: profile.id,
    timeZone,
    defaultBucket: profile.defaultBucket,
    buckets,
    methods,
    budgets: [],
    ...(c.project !== undefined ? { project: c.project } : {}),
  };
}

function resolveBudgets(raw: RawConfig, credentials: CredentialConfig[], problems: Problems): void {
  const ids = new Set<string>();
  raw.budgets.forEach((b, j) => {
    const at = `budgets[${j}]`;
    if (ids.has(b.id)) problems.add(`${at}.id`, `duplicate budget '${b.id}'`);
    ids.add(b.id);
    let targets = credentials;
    if (b.credential !== undefined) {
      targets = credentials.filter((c) => c.id === b.credential);
      if (!targets.length) {
        problems.add(
          `${at}.credential`,
          `unknown credential '${b.credential}' (configured: ${credentials.map((c) => c.id).join(', ')})`,
          'QG_UNKNOWN_CREDENTIAL',
        );
      }
    }
    if (b.bucket === undefined && b.methods === undefined) {
      problems.add(at, 'set bucket, methods or both');
      return;
    }
    for (const cred of targets) {
      let bucket = b.bucket;
      if (bucket !== undefined && !(bucket in cred.buckets)) {
        problems.add(
          `${at}.bucket`,
          `unknown bucket '${bucket}' (profile ${cred.profile} has ${Object.keys(cred.buckets).join(', ')})`,
          'QG_UNKNOWN_BUCKET',
        );
        continue;
      }
      const methodBuckets = new Set<string>();
      let methodsOk = true;
      b.methods?.forEach((m, k) => {
        const spec = cred.methods[m];
        if (!spec) {
          problems.add(
            `${at}.methods[${k}]`,
            `unknown method '${m}' in profile ${cred.profile}`,
            'QG_UNKNOWN_METHOD',
          );
          methodsOk = false;
        } else if (bucket !== undefined && spec.bucket !== bucket) {
          problems.add(
            `${at}.methods[${k}]`,
            `'${m}' spends bucket '${spec.bucket}' in profile ${cred.profile}, not '${bucket}'`,
          );
          methodsOk = false;
        } else methodBuckets.add(spec.bucket);
      });
      if (!methodsOk) continue;
      if (bucket === undefined) {
        if (methodBuckets.size !== 1) {
          problems.add(
            `${at}.methods`,
            `the methods spend different buckets in profile ${cred.profile} (${[...methodBuckets].join(', ')}): set bucket or split the budget`,
          );
          continue;
        }
        bucket = [...methodBuckets][0]!;
      }
      const budget: BudgetConfig = {
        id: b.id,
        bucket,
        limit: b.limit,
        windowMs: b.window,
        tiers: (b.tiers ?? [...TIERS]) as Tier[],
        ...(b.methods ? { methods: [...b.methods] } : {}),
      };
      (cred.budgets as BudgetConfig[]).push(budget);
    }
  });
}

function resolvePace(raw: RawConfig, credentials: CredentialConfig[], problems: Problems): BackfillPace {
  const pace = raw.backfill.pace;
  if (pace === 'day' || pace === 'none') return { kind: pace };
  const jobs = credentials[0];
  const budget = jobs?.budgets.find((b) => b.id === pace);
  if (!budget) {
    const ids = jobs?.budgets.map((b) => b.id) ?? [];
    problems.add(
      'backfill.pace',
      `must be day, none or the id of a budget of credential ${jobs?.id ?? '?'}${ids.length ? ` (${ids.join(', ')})` : ''}, got '${pace}'`,
    );
  } else if (!budget.tiers.includes('backfill')) {
    problems.add('backfill.pace', `budget '${pace}' does not cover the backfill tier`);
  }
  return { kind: 'budget', budget: pace };
}

function resolveExpected(
  raw: RawConfig,
  credentials: CredentialConfig[],
  problems: Problems,
): ExpectedSpendConfig[] {
  const out: ExpectedSpendConfig[] = [];
  raw.expected.forEach((e, j) => {
    const at = `expected[${j}]`;
    const cred = e.credential === undefined ? credentials[0] : credentials.find((c) => c.id === e.credential);
    if (!cred) {
      problems.add(
        `${at}.credential`,
        `unknown credential '${e.credential}' (configured: ${credentials.map((c) => c.id).join(', ')})`,
        'QG_UNKNOWN_CREDENTIAL',
      );
      return;
    }
    const spec = cred.methods[e.method];
    if (!spec) {
      problems.add(
        `${at}.method`,
        `unknown method '${e.method}' in profile ${cred.profile}`,
        'QG_UNKNOWN_METHOD',
      );
      return;
    }
    out.push({
      id: e.id ?? `${e.method}:${e.tier}`,
      credential: cred.id,
      method: e.method,
      bucket: spec.bucket,
      cost: spec.cost,
      tier: e.tier as Tier,
      callsPerDay: e.callsPerDay,
    });
  });
  return out;
}

/**
 * The built-in schedules, which node-cron accepts (a test checks it): a config that keeps them
 * does not load node-cron to check them again.
 */
const BUILT_IN_CRONS: ReadonlySet<string> = new Set([
  DEFAULT_TRENDING_CRON,
  DEFAULT_BACKFILL_CRON,
  DEFAULT_RECONCILE_CRON,
]);

/** What each cron field accepts, for the line that says which one is wrong. */
const CRON_FIELDS: Record<string, string> = {
  second: '0-59',
  minute: '0-59',
  hour: '0-23',
  day: '1-31',
  month: '1-12 or jan-dec',
  weekday: '0-7 or sun-sat',
};
const CRON_SHAPE =
  'not a cron expression (five fields: minute hour day month weekday, or six with seconds first)';

function resolveSchedule(
  s: { cron: string; stagger: number; timeZone: string },
  at: string,
  problems: Problems,
): ScheduleConfig {
  const v = BUILT_IN_CRONS.has(s.cron) ? undefined : nodeCron().validateDetailed(s.cron);
  if (v && !v.valid) {
    // node-cron's own words ("61 is a invalid expression for minute") said in ours, field by field.
    const why =
      v.errors
        .map((e: { field?: string; value?: unknown }) =>
          e.field !== undefined && Object.hasOwn(CRON_FIELDS, e.field)
            ? `the ${e.field} field '${String(e.value)}' is out of range or malformed (${CRON_FIELDS[e.field]})`
            : undefined,
        )
        .filter((w: string | undefined) => w !== undefined)
        .join('; ') || CRON_SHAPE;
    problems.add(`${at}.cron`, `'${s.cron}': ${why}`);
  }
  if (!isValidTimeZone(s.timeZone)) problems.add(`${at}.timeZone`, `unknown time zone '${s.timeZone}'`);
  return { cron: s.cron, staggerMs: s.stagger, timeZone: s.timeZone };
}

function resolveStore(raw: RawConfig, env: Env, problems: Problems, source: string | undefined): StoreConfig {
  const opts = typeof raw.store === 'object' ? raw.store : {};
  const fileUrl = typeof raw.store === 'string' ? raw.store : raw.store?.url;
  const envUrl = env[STORE_ENV] || undefined;
  const [url, from, at] =
    fileUrl !== undefined
      ? [fileUrl, 'file' as const, typeof raw.store === 'string' ? 'store' : 'store.url']
      : envUrl !== undefined
        ? [envUrl, 'env' as const, STORE_ENV]
        : [`sqlite:${join(dataDir(env).path, DEFAULT_LEDGER_FILE)}`, 'default' as const, 'store'];
  let kind: StoreConfig['kind'] = 'sqlite';
  let absolute = url;
  try {
    const parsed = parseStoreUrl(url);
    kind = parsed.kind;
    // A relative file: from the config file's directory, or the working directory for REDIS_URL.
    if (parsed.kind === 'sqlite') {
      absolute = `sqlite:${absolutePath(parsed.path, from === 'file' ? configDir(source) : process.cwd())}`;
    }
  } catch (e) {
    problems.add(at, (e as Error).message, 'QG_STORE_URL_INVALID');
  }
  if (opts.waitReplicas && kind !== 'redis') {
    problems.add(
      'store.waitReplicas',
      'waits for Redis replicas: needs a redis://, rediss:// or redis-sentinel:// store',
    );
  }
  return {
    url: absolute,
    kind,
    from,
    ...(opts.keyPrefix !== undefined ? { keyPrefix: opts.keyPrefix } : {}),
    ...(opts.commandTimeoutMs !== undefined ? { commandTimeoutMs: opts.commandTimeoutMs } : {}),
    ...(opts.connectTimeoutMs !== undefined ? { connectTimeoutMs: opts.connectTimeoutMs } : {}),
    ...(opts.waitReplicas !== undefined ? { waitReplicas: opts.waitReplicas } : {}),
    ...(opts.waitTimeoutMs !== undefined ? { waitTimeoutMs: opts.waitTimeoutMs } : {}),
  };
}
