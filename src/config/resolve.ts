/**
 * Resolving the core's part of a config the schema accepted (or what lenient.ts saved of it):
 * every default filled in from the profiles and config/defaults.ts, every cross-reference checked
 * (profiles, credentials, buckets, budgets, methods, the store URL), each problem collected with its
 * path and, for an unknown name, the nearest known one. Names are looked up in null-prototype
 * tables (names.ts). An entry the schema refused is a hole here: skipped, and its name known but
 * broken, so nothing that refers to it is reported again.
 */
import { join } from 'node:path';
import { getProfile, type MethodSpec, PROFILES, type QuotaProfile, toProfile } from '../profiles/profiles.js';
import { checkCron, checkTimeZone } from './cron.js';
import {
  DEFAULT_BACKFILL_HEADROOM,
  DEFAULT_RECONCILE_CRON,
  DEFAULT_RESERVE,
  DEFAULT_WINDOW,
  STORE_ENV,
} from './defaults.js';
import { parseDuration } from './duration.js';
import type { Holey } from './lenient.js';
import { byName, didYouMean, nameList, nameTable } from './names.js';
import type { CoreSettings } from './parts.js';
import { absolutePath, configDir, DEFAULT_LEDGER_FILE, dataDir } from './paths.js';
import type { Problems } from './problems.js';
import type { Amount, RawConfig, RawCredential } from './schema.js';
import { parseStoreUrl } from './store-url.js';
import { TIERS, type Tier, tierCeilings } from './tiers.js';
import type {
  BucketConfig,
  BudgetConfig,
  CredentialConfig,
  Env,
  ExpectedSpendConfig,
  ReconcileConfig,
  StoreConfig,
} from './types.js';

/** The core's keys as resolving takes them: its top-level lists may have holes. */
export type CoreInput = Omit<RawConfig, 'credentials' | 'budgets' | 'expected'> & {
  credentials: Holey<RawCredential>;
  budgets: Holey<RawConfig['budgets'][number]>;
  expected: Holey<RawConfig['expected'][number]>;
};

export function resolveCore(
  raw: CoreInput,
  env: Env,
  problems: Problems,
  source: string | undefined,
): CoreSettings {
  const custom = nameTable<QuotaProfile>();
  for (const [id, data] of Object.entries(raw.profiles)) {
    if (Object.hasOwn(PROFILES, id))
      problems.add(['profiles', id], `'${id}' is a built-in profile; give yours another id`);
    else custom[id] = toProfile(id, data);
  }
  const profiles: Record<string, QuotaProfile> = nameTable([
    ...Object.entries(PROFILES),
    ...Object.entries(custom),
  ]);
  const credentials: CredentialConfig[] = [];
  const seen = new Set<string>();
  raw.credentials.forEach((c, i) => {
    if (c === undefined) return;
    if (seen.has(c.id)) problems.add(['credentials', i, 'id'], `duplicate credential '${c.id}'`);
    seen.add(c.id);
    const profile = getProfile(c.profile, custom);
    if (!profile) {
      // A credential without its profile is not resolved: what refers to it says nothing more.
      problems.markBroken('credential', c.id);
      if (problems.isBroken('profile', c.profile)) return;
      const known = Object.keys(profiles);
      problems.add(
        ['credentials', i, 'profile'],
        `unknown profile '${c.profile}'${didYouMean(c.profile, known)} (built in: ${Object.keys(PROFILES).join(', ')}${Object.keys(custom).length ? `; in profiles: ${Object.keys(custom).join(', ')}` : ''})`,
      );
      return;
    }
    credentials.push(resolveCredential(c, i, profile, problems));
  });
  const byId = nameTable(credentials.map((c) => [c.id, c] as const));
  resolveBudgets(raw, credentials, byId, problems);

  return {
    store: resolveStore(raw, env, problems, source),
    credentials,
    expected: resolveExpected(raw, credentials, byId, problems),
    maxSleepMs: raw.maxSleep,
    storeDown: {
      default: raw.storeDown.default,
      openMaxCost: raw.storeDown.openMaxCost,
      sites: nameTable(Object.entries(raw.storeDown.sites)),
    },
    reconcile: resolveReconcile(raw, credentials, problems, source),
    profiles,
  };
}

/** The built-in reconcile schedule, which node-cron accepts (a test checks it). */
const RECONCILE_CRONS: ReadonlySet<string> = new Set([DEFAULT_RECONCILE_CRON]);

function resolveReconcile(
  raw: CoreInput,
  credentials: readonly CredentialConfig[],
  problems: Problems,
  source: string | undefined,
): ReconcileConfig {
  const r = raw.reconcile;
  checkCron(r.schedule, ['reconcile', 'schedule'], problems, RECONCILE_CRONS);
  const buckets = [...new Set(credentials.flatMap((c) => Object.keys(c.buckets)))];
  for (const bucket of Object.keys(r.quotaMetrics)) {
    if (!buckets.includes(bucket)) {
      problems.add(
        ['reconcile', 'quotaMetrics', bucket],
        `unknown bucket '${bucket}'${didYouMean(bucket, buckets)} (the credentials' buckets: ${nameList(buckets)})`,
        'QG_UNKNOWN_BUCKET',
      );
    }
  }
  const cron = r.schedule;
  const timeZone = 'UTC';
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
    quotaMetrics: nameTable(Object.entries(r.quotaMetrics)),
  };
}

function amountOf(a: Amount, quota: number): number {
  return 'units' in a ? a.units : Math.ceil((quota * a.percent) / 100);
}

/** `unknown credential 'x' (did you mean 'y'?) (configured: a, b)`, or undefined for a known or broken one. */
export function unknownCredential(
  id: string,
  byId: Readonly<Record<string, CredentialConfig>>,
  problems: Problems,
): string | undefined {
  if (byName(byId, id) !== undefined || problems.isBroken('credential', id)) return undefined;
  const known = Object.keys(byId);
  return `unknown credential '${id}'${didYouMean(id, known)} (configured: ${nameList(known)})`;
}

function resolveCredential(
  c: RawCredential,
  i: number,
  profile: QuotaProfile,
  problems: Problems,
): CredentialConfig {
  const at = ['credentials', i] as const;
  // A profile's zone was checked with the profile (its schema; the built-in ones by a test).
  const timeZone = c.timeZone ?? profile.timeZone;
  if (c.timeZone !== undefined) checkTimeZone(c.timeZone, [...at, 'timeZone'], problems);

  const bucketNames = Object.keys(profile.buckets);
  for (const name of Object.keys(c.buckets)) {
    if (!Object.hasOwn(profile.buckets, name)) {
      problems.add(
        [...at, 'buckets', name],
        `unknown bucket '${name}'${didYouMean(name, bucketNames)} (profile ${profile.id} has ${nameList(bucketNames)})`,
        'QG_UNKNOWN_BUCKET',
      );
    }
  }

  const buckets = nameTable<BucketConfig>();
  for (const [name, base] of Object.entries(profile.buckets)) {
    const spec = byName(c.buckets, name) ?? {};
    const bucketAt = [...at, 'buckets', name];
    const where = (key: 'reserve' | 'backfillHeadroom') =>
      spec[key] !== undefined ? [...bucketAt, key] : [...at, key];
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
          : `${reserve} must be less than the quota of bucket '${name}' (${quota}); set a smaller reserve, or one on ${formatBucketPath(i, name)}`,
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
      ceilings: tierCeilings({ quota, reserve, headroom: backfillHeadroom }),
      ...(pace ? { pace: { limit: pace.limit, windowMs: pace.window } } : {}),
    };
  }

  const methods = nameTable<MethodSpec>(
    Object.entries(profile.methods).map(([m, spec]) => [m, { ...spec }] as const),
  );

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

function formatBucketPath(i: number, name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name)
    ? `credentials[${i}].buckets.${name}`
    : `credentials[${i}].buckets[${JSON.stringify(name)}]`;
}

function unknownMethod(m: string, cred: CredentialConfig): string {
  return `unknown method '${m}' in profile ${cred.profile}${didYouMean(m, Object.keys(cred.methods))}`;
}

function resolveBudgets(
  raw: CoreInput,
  credentials: readonly CredentialConfig[],
  byId: Readonly<Record<string, CredentialConfig>>,
  problems: Problems,
): void {
  const ids = new Set<string>();
  raw.budgets.forEach((b, j) => {
    if (b === undefined) return;
    const at = ['budgets', j] as const;
    if (ids.has(b.id)) problems.add([...at, 'id'], `duplicate budget '${b.id}'`);
    ids.add(b.id);
    let targets: readonly CredentialConfig[] = credentials;
    if (b.credential !== undefined) {
      const cred = byName(byId, b.credential);
      targets = cred ? [cred] : [];
      const unknown = unknownCredential(b.credential, byId, problems);
      if (unknown) problems.add([...at, 'credential'], unknown, 'QG_UNKNOWN_CREDENTIAL');
    }
    if (b.bucket === undefined && b.methods === undefined) {
      problems.add(at, 'set bucket, methods or both');
      return;
    }
    for (const cred of targets) {
      let bucket = b.bucket;
      if (bucket !== undefined && byName(cred.buckets, bucket) === undefined) {
        const names = Object.keys(cred.buckets);
        problems.add(
          [...at, 'bucket'],
          `unknown bucket '${bucket}'${didYouMean(bucket, names)} (profile ${cred.profile} has ${nameList(names)})`,
          'QG_UNKNOWN_BUCKET',
        );
        continue;
      }
      const methodBuckets = new Set<string>();
      let methodsOk = true;
      b.methods?.forEach((m, k) => {
        const spec = byName(cred.methods, m);
        if (!spec) {
          problems.add([...at, 'methods', k], unknownMethod(m, cred), 'QG_UNKNOWN_METHOD');
          methodsOk = false;
        } else if (bucket !== undefined && spec.bucket !== bucket) {
          problems.add(
            [...at, 'methods', k],
            `'${m}' spends bucket '${spec.bucket}' in profile ${cred.profile}, not '${bucket}'`,
          );
          methodsOk = false;
        } else methodBuckets.add(spec.bucket);
      });
      if (!methodsOk) continue;
      if (bucket === undefined) {
        if (methodBuckets.size !== 1) {
          problems.add(
            [...at, 'methods'],
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

function resolveExpected(
  raw: CoreInput,
  credentials: readonly CredentialConfig[],
  byId: Readonly<Record<string, CredentialConfig>>,
  problems: Problems,
): ExpectedSpendConfig[] {
  const out: ExpectedSpendConfig[] = [];
  raw.expected.forEach((e, j) => {
    if (e === undefined) return;
    const at = ['expected', j] as const;
    // Omitted: the first credential (when it is broken, nothing more can be said).
    const cred = e.credential === undefined ? credentials[0] : byName(byId, e.credential);
    if (!cred) {
      const unknown =
        e.credential === undefined ? undefined : unknownCredential(e.credential, byId, problems);
      if (unknown) problems.add([...at, 'credential'], unknown, 'QG_UNKNOWN_CREDENTIAL');
      return;
    }
    const spec = byName(cred.methods, e.method);
    if (!spec) {
      problems.add([...at, 'method'], unknownMethod(e.method, cred), 'QG_UNKNOWN_METHOD');
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

function resolveStore(raw: CoreInput, env: Env, problems: Problems, source: string | undefined): StoreConfig {
  const opts = typeof raw.store === 'object' ? raw.store : {};
  const fileUrl = typeof raw.store === 'string' ? raw.store : raw.store?.url;
  const envUrl = env[STORE_ENV] || undefined;
  const [url, from, at] =
    fileUrl !== undefined
      ? [fileUrl, 'file' as const, typeof raw.store === 'string' ? ['store'] : ['store', 'url']]
      : envUrl !== undefined
        ? [envUrl, 'env' as const, STORE_ENV]
        : [`sqlite:${join(dataDir(env).path, DEFAULT_LEDGER_FILE)}`, 'default' as const, ['store']];
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
      ['store', 'waitReplicas'],
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
